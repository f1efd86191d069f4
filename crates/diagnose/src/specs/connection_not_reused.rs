//! `connection_not_reused` (detect/connection_not_reused.rs).
//!
//! > Signature: the connection's SYN is in the capture, and before it an
//! > earlier connection from the same client address to the same server
//! > address and port (for TLS, asking for the same server name) ended: its
//! > first FIN or RST, from either side, was captured before this SYN, after
//! > its last request's answer had come, that answer no more than 60 s
//! > before this SYN. This connection's first request is not in its SYN and
//! > left as soon as the set-up let it: within 20 ms, on the client's clock,
//! > of the server's last set-up packet before it. [...] The cost is one
//! > wait, from this SYN to the request's first segment, released by the
//! > server's last set-up packet; none of it is attributed to the excess.

use super::tls::{
    encrypted, tls12_handshake_asking_certificate, tls13_handshake, Offer, Turnarounds,
};
use super::*;
use crate::model::{Detail, Phase};
use FindingKind::ConnectionNotReused;

const RTT: f64 = 40.0;
const EXACT: f64 = 1e-3;

/// How the earlier connection ended.
#[derive(Clone, Copy)]
struct Close {
    /// Who sent the first FIN (or RST).
    by: Direction,
    /// How long after the answer reached the client (client) or left
    /// (server) the closer closed, ms.
    idle_ms: f64,
    rst: bool,
}

const SERVER_AFTER_ANSWER: Close = Close {
    by: S,
    idle_ms: 0.0,
    rst: false,
};

/// An earlier connection on `path`: handshake at 0, a request right
/// after it, the answer 1 ms after the request arrives (with `answered`),
/// then closed as `close` says. Returns the wire and its closing packet.
fn earlier(path: Path, close: Close, answered: bool) -> (Wire, Id) {
    let mut w = Wire::new(path);
    let [_, _, ack] = w.handshake(0.0);
    let request = w.send(C, w.sent(ack), b"GET / HTTP/1.1\r\nHost: a\r\n\r\n");
    let answer_at = w.arrival(request) + 1.0;
    let answer = if answered {
        Some(w.send(
            S,
            answer_at,
            b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
        ))
    } else {
        None
    };
    let close_at = match (close.by, answer) {
        (S, _) => answer_at + close.idle_ms,
        (_, Some(a)) => w.arrival(a) + close.idle_ms,
        (_, None) => answer_at + close.idle_ms,
    };
    let first = if close.rst {
        w.rst(close.by, close_at)
    } else {
        w.fin(close.by, close_at)
    };
    if !close.rst {
        let back = w.fin(close.by.reverse(), w.arrival(first));
        w.ack(close.by, w.arrival(back));
    }
    (w, first)
}

/// This connection: its SYN at `t`, its request `request_after` ms after
/// the SYN-ACK reached the client. Returns SYN, SYN-ACK and request.
fn new_connection(w: &mut Wire, t: f64, request_after: f64) -> [Id; 3] {
    let [syn, syn_ack, ack] = w.handshake(t);
    let request = w.send(
        C,
        w.sent(ack) + request_after,
        b"GET /next HTTP/1.1\r\nHost: a\r\n\r\n",
    );
    let answer = w.send(S, w.arrival(request) + 1.0, bytes(300));
    w.ack(C, w.arrival(answer));
    [syn, syn_ack, request]
}

/// When the client knew the earlier connection was closing: its own
/// FIN or RST left, or the server's reached it.
fn known(old: &Wire, closing: Id, close: Close) -> f64 {
    if close.by == S {
        old.arrival(closing)
    } else {
        old.sent(closing)
    }
}

/// A capture holding the earlier connection (closed by the server right
/// after its answer, `answered` or not) to the server's `server_port`, and
/// when this connection's SYN goes: 1 ms after the client knew the earlier
/// one was closing.
fn after_server_close(path: Path, answered: bool, server_port: u16) -> (Wire, f64) {
    let (old, closing) = earlier(path, SERVER_AFTER_ANSWER, answered);
    let t = known(&old, closing, SERVER_AFTER_ANSWER) + 1.0;
    let mut w = Wire::new(path);
    w.join(old, EARLIER, server_port);
    (w, t)
}

/// The earlier connection closed as `close` says, this one's SYN `gap`
/// ms after the client knew it.
fn after(path: Path, close: Close, gap: f64, request_after: f64) -> (Outcome, [Id; 3], Id) {
    let (old, closing) = earlier(path, close, true);
    let t = known(&old, closing, close) + gap;
    let mut w = Wire::new(path);
    let joined = w.join(old, EARLIER, 443);
    let ids = new_connection(&mut w, t, request_after);
    let closing = joined.id(closing);
    (w.run(), ids, closing)
}

#[test]
fn a_connection_opened_after_the_server_closed_the_last_is_one_not_reused() {
    for path in Path::all(RTT) {
        let (o, [syn, syn_ack, request], closing) = after(path, SERVER_AFTER_ANSWER, 1.0, 0.0);
        let f = o.the(ConnectionNotReused);
        assert_eq!(f.phase, Some(Phase::TcpHandshake));
        assert_eq!(f.frames, o.frames(&[syn, syn_ack, request]));
        // SYN and request are both the client's: one round trip exactly,
        // at every vantage.
        assert_waits(&f.waits, &[o.wait(syn, request, Some(syn_ack), RTT)], EXACT);
        assert_cost_is_its_waits(f);
        assert_eq!(f.attributed_ms, 0.0, "the ideal counts the handshake");
        assert_eq!(
            f.display_filter,
            "tcp.stream eq 1 || (tcp.stream eq 0 && (tcp.flags.fin == 1 || tcp.flags.reset == 1))"
        );
        let Detail::ConnectionNotReused {
            previous_stream,
            close_frame,
            closed_by_server,
            reset,
            previous_requests,
            idle_before_close_ms,
            tls,
            ..
        } = f.detail
        else {
            panic!("{:?}", f.detail)
        };
        assert_eq!(
            (previous_stream, close_frame, closed_by_server, reset),
            (0, o.frame(closing), true, false)
        );
        assert_eq!((previous_requests, tls), (1, false));
        assert_ms(idle_before_close_ms, 0.0, EXACT, "closed with the answer");
    }
}

#[test]
fn who_closed_and_after_how_long_idle_is_told() {
    for path in Path::all(RTT) {
        let idle = Close {
            by: C,
            idle_ms: 2000.0,
            rst: true,
        };
        let (o, _, _) = after(path, idle, 5000.0, 0.0);
        let Detail::ConnectionNotReused {
            closed_by_server,
            reset,
            idle_before_close_ms,
            pause_ms,
            ..
        } = o.the(ConnectionNotReused).detail
        else {
            panic!()
        };
        assert!(!closed_by_server && reset);
        // On the client's clock: from the answer's arrival. The vantage's
        // clock shift is estimated from the handshake: a round trip's
        // error at most.
        assert_ms(idle_before_close_ms, 2000.0, RTT, "the client's idle");
        // From the last answer to the SYN (capture clock): idle + gap,
        // give or take the answer's way to the client.
        assert_ms(pause_ms, 7000.0, RTT, "the client's pause");
    }
}

/// The answer's tail reached the client 400 ms after its head, but the
/// capture missed it: the client's ACK of bytes the capture never showed
/// says it had them then, and its close 30 ms later came right after
/// its last answer, not after 430 ms of idling (nDPI's netflix.pcap 18).
#[test]
fn an_answer_the_capture_missed_the_end_of_ended_when_the_client_acknowledged_it() {
    for path in Path::all(RTT) {
        let mut old = Wire::new(path);
        let [_, _, ack] = old.handshake(0.0);
        let request = old.send(C, old.sent(ack), b"GET / HTTP/1.1\r\nHost: a\r\n\r\n");
        let head = old.send(
            S,
            old.arrival(request) + 1.0,
            b"HTTP/1.1 200 OK\r\nContent-Length: 800\r\n\r\n",
        );
        old.ack(C, old.arrival(head));
        let tail = old.send(S, old.arrival(request) + 400.0, bytes(800));
        old.ack(C, old.arrival(tail));
        let fin = old.fin(C, old.arrival(tail) + 30.0);
        let back = old.fin(S, old.arrival(fin));
        old.ack(C, old.arrival(back));
        let t = old.sent(fin) + 5000.0;
        let mut w = Wire::new(path);
        let joined = w.join(old, EARLIER, 443);
        new_connection(&mut w, t, 0.0);
        let o = w.run_missing(&[joined.id(tail)]);
        let Detail::ConnectionNotReused {
            idle_before_close_ms,
            ..
        } = o.the(ConnectionNotReused).detail
        else {
            panic!()
        };
        assert_ms(
            idle_before_close_ms,
            30.0,
            RTT,
            "from the client's ACK of the tail",
        );
    }
}

/// The answer passed the capture, and the client acknowledged it only
/// 2 s later (a phone asleep, the answer held on its last hop), then
/// closed 300 ms after that: it took the answer no sooner than its
/// delayed-ACK timer allows before its ACK (500 ms at most, RFC 1122),
/// so it idled 800 ms at most, not 2.3 s; its pause before asking again
/// likewise (nDPI's alexa-app.pcapng 86 and 93, judged). Acknowledged at
/// once, the whole idle stands.
#[test]
fn a_client_that_acknowledged_its_answer_late_took_it_late() {
    let idled = |ack_after: f64| {
        let path = Path::at_client(RTT);
        let mut old = Wire::new(path);
        let [_, _, ack] = old.handshake(0.0);
        let request = old.send(C, old.sent(ack), b"GET / HTTP/1.1\r\nHost: a\r\n\r\n");
        let answer = old.send(
            S,
            old.arrival(request) + 1.0,
            b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
        );
        let acked = old.ack(C, old.arrival(answer) + ack_after);
        let fin = old.fin(C, old.sent(acked) + 300.0);
        let back = old.fin(S, old.arrival(fin));
        old.ack(C, old.arrival(back));
        let t = old.sent(fin) + 3000.0;
        let mut w = Wire::new(path);
        w.join(old, EARLIER, 443);
        new_connection(&mut w, t, 0.0);
        let o = w.run();
        let Detail::ConnectionNotReused {
            idle_before_close_ms,
            pause_ms,
            ..
        } = o.the(ConnectionNotReused).detail
        else {
            panic!()
        };
        (idle_before_close_ms, pause_ms)
    };
    let (idle, pause) = idled(2000.0);
    assert_ms(
        idle,
        800.0,
        1.0,
        "300 ms after its ACK, and the ACK's delay",
    );
    assert_ms(pause, 3800.0, 1.0, "from when it took the answer");
    let (idle, pause) = idled(0.0);
    assert_ms(idle, 300.0, 1.0, "300 ms after the answer came");
    assert_ms(pause, 3300.0, 1.0, "from the answer");
}

/// The client closed the earlier connection after 2 s idle and came back
/// 5 s later (a 7 s pause after its answer); the server closes the new
/// connection on its own `server_idle` ms after answering it, nothing
/// asked meanwhile: its keep-alive timeout.
fn server_idles_out(path: Path, server_idle: f64) -> Outcome {
    let close = Close {
        by: C,
        idle_ms: 2000.0,
        rst: false,
    };
    let (old, closing) = earlier(path, close, true);
    let t = known(&old, closing, close) + 5000.0;
    let mut w = Wire::new(path);
    w.join(old, EARLIER, 443);
    let [_, _, request] = new_connection(&mut w, t, 0.0);
    let fin = w.fin(S, w.arrival(request) + 1.0 + server_idle);
    let back = w.fin(C, w.arrival(fin));
    w.ack(S, w.arrival(back));
    w.run()
}

/// A server that closes connections idle for less than the client's
/// pause would have closed the earlier one first, had the client kept
/// it: the finding says so (nDPI's alexa-app.pcapng 74: an object store's
/// close_notify 5.96 s after its answer, the client back 9 s after the
/// earlier connection's; judged wrong at "kept open, it would have
/// carried this request"). A server that keeps them longer than the
/// pause says nothing against the client's close.
#[test]
fn a_server_that_closes_idle_connections_sooner_than_the_pause_would_have_closed_the_kept_one() {
    for path in Path::all(RTT) {
        let limit =
            |server_idle: f64| match server_idle_limit_of(&server_idles_out(path, server_idle)) {
                Some((stream, ms)) => {
                    assert_eq!(stream, 1);
                    Some(ms)
                }
                None => None,
            };
        let seen = limit(6000.0).expect("a server idle limit below the pause");
        assert_ms(seen, 6000.0, RTT, "the server's idle before its close");
        assert_eq!(limit(9000.0), None, "{path:?}");
    }
}

fn server_idle_limit_of(o: &Outcome) -> Option<(u64, f64)> {
    match o.the(ConnectionNotReused).detail {
        Detail::ConnectionNotReused {
            server_idle_limit, ..
        } => server_idle_limit,
        ref other => panic!("{other:?}"),
    }
}

#[test]
fn a_tls_connection_not_reused_waits_for_both_handshakes() {
    for path in Path::all(RTT) {
        let (mut w, t) = after_server_close(path, true, 443);
        let [syn, ..] = w.handshake(t);
        let hs = tls13_handshake(&mut w, t + RTT, 0.0, Offer::tls13());
        let request = w.send(C, w.sent(hs.client_finished), leak(encrypted(100)));
        let answer = w.send(S, w.arrival(request) + 1.0, leak(encrypted(300)));
        w.ack(C, w.arrival(answer));
        let o = w.run();
        let f = o.the(ConnectionNotReused);
        let last_flight = *hs.flight.last().unwrap();
        // (The segments of a flight leave 0.01 ms apart.)
        let ms = 2.0 * RTT + 0.01 * (hs.flight.len() - 1) as f64;
        assert_waits(
            &f.waits,
            &[o.wait(syn, request, Some(last_flight), ms)],
            EXACT,
        );
        assert!(matches!(
            f.detail,
            Detail::ConnectionNotReused { tls: true, .. }
        ));
    }
}

/// A client that held its ClientHello 500 ms after the TCP handshake (a
/// sibling's session awaited, to offer it back: nDPI's wechat.pcap 21)
/// spent that inside the set-up's cost, and the finding says how much
/// was its own; one that sent it at once held nothing. (Behind a proxy
/// its CONNECT's answer let the ClientHello go: this project's
/// http-connect-slow-dns capture, the proxy's slow lookup no hold of the
/// client's.)
#[test]
fn a_client_hello_held_after_the_tcp_handshake_is_the_clients_own_share() {
    let held = |hold: f64| {
        let path = Path::at_client(RTT);
        let (mut w, t) = after_server_close(path, true, 443);
        w.handshake(t);
        let hs = tls13_handshake(&mut w, t + RTT + hold, 0.0, Offer::tls13());
        let request = w.send(C, w.sent(hs.client_finished), leak(encrypted(100)));
        let answer = w.send(S, w.arrival(request) + 1.0, leak(encrypted(300)));
        w.ack(C, w.arrival(answer));
        let o = w.run();
        match o.the(ConnectionNotReused).detail {
            Detail::ConnectionNotReused { hello_held_ms, .. } => hello_held_ms,
            ref other => panic!("{other:?}"),
        }
    };
    assert_ms(held(500.0), 500.0, 1.0, "the client's hold");
    assert_eq!(held(0.0), 0.0);
}

// Near-misses: each breaks one condition of the signature.

#[test]
fn a_first_connection_is_no_connection_not_reused() {
    for path in Path::all(RTT) {
        let mut w = Wire::new(path);
        new_connection(&mut w, 0.0, 0.0);
        w.run().has_no(ConnectionNotReused);
    }
}

#[test]
fn a_connection_made_ahead_of_its_request_is_not_one() {
    // A preconnect: the request left 100 ms after the connection was up.
    for path in Path::all(RTT) {
        let (o, ..) = after(path, SERVER_AFTER_ANSWER, 1.0, 100.0);
        o.has_no(ConnectionNotReused);
    }
}

#[test]
fn a_connection_opened_before_the_servers_close_reached_the_client_is_not_one() {
    // The client opened it while the earlier one was open (from where it
    // stood): whatever kept it from that one, not the close.
    for path in Path::all(RTT) {
        let (o, ..) = after(path, SERVER_AFTER_ANSWER, -1.0, 0.0);
        o.has_no(ConnectionNotReused);
    }
}

#[test]
fn an_earlier_connection_closed_before_its_answer_could_not_be_reused() {
    for path in Path::all(RTT) {
        let (mut w, t) = after_server_close(path, false, 443);
        new_connection(&mut w, t, 0.0);
        w.run().has_no(ConnectionNotReused);
    }
}

#[test]
fn a_client_back_after_more_than_a_minute_is_not_one() {
    for path in Path::all(RTT) {
        let (o, ..) = after(path, SERVER_AFTER_ANSWER, 61_000.0, 0.0);
        o.has_no(ConnectionNotReused);
    }
}

#[test]
fn a_connection_to_another_port_is_not_the_alternative() {
    for path in Path::all(RTT) {
        let (mut w, t) = after_server_close(path, true, 8443);
        new_connection(&mut w, t, 0.0);
        w.run().has_no(ConnectionNotReused);
    }
}

#[test]
fn request_data_in_the_syn_waited_for_no_set_up() {
    for path in Path::all(RTT) {
        let (mut w, t) = after_server_close(path, true, 443);
        let syn = w.syn_data(
            t,
            rttdoc_wire::Tfo::Cookie { len: 8 },
            b"GET /next HTTP/1.1\r\n\r\n",
        );
        let sa = w.syn_ack(w.arrival(syn));
        w.ack(C, w.arrival(sa));
        let answer = w.send(S, w.arrival(sa) + 1.0, bytes(300));
        w.ack(C, w.arrival(answer));
        w.run().has_no(ConnectionNotReused);
    }
}

#[test]
fn a_set_up_of_microseconds_is_nothing_to_win() {
    // Loopback: the handshake takes 0.1 ms, under the ledger's 2 ms floor.
    for path in Path::all(0.1) {
        let (o, ..) = after(path, SERVER_AFTER_ANSWER, 1.0, 0.0);
        o.has_no(ConnectionNotReused);
    }
    // A relay next to the client answering the SYN in 1.5 ms (its SYN-ACK
    // without options: nDPI's waze.pcap 15), the client asking 3 ms after
    // it: no round trip is measured, and the set-up shown is under the
    // floor, however long the client took to ask.
    let path = Path::at_client(1.5);
    let (old, closing) = earlier(path, SERVER_AFTER_ANSWER, true);
    let t = known(&old, closing, SERVER_AFTER_ANSWER) + 1.0;
    let mut w = Wire::new(path);
    w.join(old, EARLIER, 443);
    let [_, syn_ack, _] = new_connection(&mut w, t, 3.0);
    w.edit(syn_ack, |s| s.options.mss = None);
    let o = w.run();
    assert_eq!(o.report.rtt_ms, None);
    o.has_no(ConnectionNotReused);
}

/// An earlier connection whose server answered a request's head and
/// closed (a rejection: 413, a proxy's 403), and this connection's SYN
/// 1 ms after the client had that FIN. With `body_after_ms`, the
/// request's body left that long after its head, before the answer came
/// back but too late to reach the server before its FIN; without, head
/// and body went in one segment, which the FIN acknowledges.
fn after_a_rejected_request(path: Path, body_after_ms: Option<f64>) -> Outcome {
    let mut old = Wire::new(path);
    let [_, _, ack] = old.handshake(0.0);
    let head = old.send(
        C,
        old.sent(ack),
        match body_after_ms {
            Some(_) => b"POST /up HTTP/1.1\r\nHost: a\r\nContent-Length: 1000\r\n\r\n",
            None => bytes(1200),
        },
    );
    if let Some(after) = body_after_ms {
        old.send(C, old.sent(head) + after, bytes(1000));
    }
    let answer_at = old.arrival(head) + 0.1;
    old.send(
        S,
        answer_at,
        b"HTTP/1.1 413 Payload Too Large\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
    );
    let fin = old.fin(S, answer_at + 0.05);
    let back = old.fin(C, old.arrival(fin));
    old.ack(S, old.arrival(back));
    let t = old.arrival(fin) + 1.0;
    let mut w = Wire::new(path);
    w.join(old, EARLIER, 443);
    new_connection(&mut w, t, 0.0);
    w.run()
}

#[test]
fn an_earlier_connection_the_server_cut_off_mid_request_could_not_be_reused() {
    // The body left before the answer came back, and the server's FIN
    // did not acknowledge it: the request was cut off. (At the server the
    // body comes after the FIN: what the close cut off is not shown yet
    // when the connection ends; the server's kernel answers it with a
    // RST.)
    for path in Path::all(RTT).into_iter().filter(|p| p.at < 1.0) {
        after_a_rejected_request(path, Some(0.2)).has_no(ConnectionNotReused);
    }
    // The control: the whole request had reached the server when it
    // answered and closed; it could have kept the connection.
    for path in Path::all(RTT) {
        after_a_rejected_request(path, None).the(ConnectionNotReused);
    }
}

/// An earlier connection whose answer came in three segments 5 ms apart,
/// and this connection's SYN 1 ms after the client's close. With
/// `cancelled`, the client closed 1 ms after the first reached it (a
/// media player dropping a range it no longer wanted: nDPI's netflix.pcap
/// 34) and reset what followed; without, after the last.
fn after_an_answer_closed(path: Path, cancelled: bool) -> Outcome {
    let mut old = Wire::new(path);
    let [_, _, ack] = old.handshake(0.0);
    let request = old.send(C, old.sent(ack), b"GET /range HTTP/1.1\r\nHost: a\r\n\r\n");
    let answer_at = old.arrival(request) + 1.0;
    let parts = [0.0, 5.0, 10.0].map(|after| old.send(S, answer_at + after, bytes(1400)));
    let fin = if cancelled {
        let fin = old.fin(C, old.arrival(parts[0]) + 1.0);
        for part in &parts[1..] {
            old.rst(C, old.arrival(*part));
        }
        fin
    } else {
        let fin = old.fin(C, old.arrival(parts[2]) + 1.0);
        let back = old.fin(S, old.arrival(fin));
        old.ack(C, old.arrival(back));
        fin
    };
    let t = old.sent(fin) + 1.0;
    let mut w = Wire::new(path);
    w.join(old, EARLIER, 443);
    new_connection(&mut w, t, 0.0);
    w.run()
}

#[test]
fn an_answer_the_client_cut_off_was_no_connection_to_keep() {
    // The client closed while the answer was still coming: at the
    // server's side of the path its close acknowledges less than the
    // server had sent; at the client's, the rest passes after the close,
    // sent before the close reached the server. Kept, the connection
    // would have had to carry the rest of that answer first (HTTP/1.1
    // cancels an answer no other way).
    for path in Path::all(RTT) {
        after_an_answer_closed(path, true).has_no(ConnectionNotReused);
        // The control: the whole answer had come when the client closed.
        after_an_answer_closed(path, false).the(ConnectionNotReused);
    }
}

/// A server on loopback that speaks first, slow to greet: the new
/// connection's request waited for the greeting, but its set-up's round
/// trip took microseconds.
#[test]
fn a_slow_greeting_on_loopback_is_no_set_up_to_win() {
    for (rtt, found) in [(0.1, false), (RTT, true)] {
        for path in Path::all(rtt) {
            let (mut w, t) = after_server_close(path, true, 443);
            let [_, _, ack] = w.handshake(t);
            let greeting = w.send(S, w.arrival(ack) + 10.0, b"INFO {\"server_id\":\"a\"}\r\n");
            let request = w.send(C, w.arrival(greeting) + 0.1, b"CONNECT {}\r\nPING\r\n");
            let answer = w.send(S, w.arrival(request) + 0.1, b"PONG\r\n");
            w.ack(C, w.arrival(answer));
            let o = w.run();
            if found {
                o.the(ConnectionNotReused);
            } else {
                o.has_no(ConnectionNotReused);
            }
        }
    }
}

/// This connection a full TLS 1.2 handshake whose server asks for a
/// client certificate when `ask`, after an earlier connection that asked
/// for none: returns the outcome.
fn after_a_certificate_request(ask: bool) -> Outcome {
    let path = Path::at_client(RTT);
    let (mut w, t) = after_server_close(path, true, 443);
    let [_, _, ack] = w.handshake(t);
    let took = Turnarounds {
        hello: 0.5,
        client: 0.0,
        finished: 0.5,
    };
    let hello_at = w.sent(ack);
    let hs = tls12_handshake_asking_certificate(&mut w, hello_at, took, ask);
    let request = w.send(C, w.arrival(hs.server_finished), leak(encrypted(300)));
    let reply = w.send(S, w.arrival(request) + 1.0, leak(encrypted(900)));
    w.ack(C, w.arrival(reply));
    w.run()
}

#[test]
fn a_client_back_for_the_certificate_the_server_asked_of_it_could_not_have_kept_the_old_one() {
    after_a_certificate_request(true).has_no(ConnectionNotReused);
    // The control: the same handshake, no certificate asked for.
    after_a_certificate_request(false).the(ConnectionNotReused);
}

#[test]
fn a_server_that_refused_the_syn_was_not_there_to_keep_a_connection() {
    for path in Path::all(RTT) {
        let (mut w, t) = after_server_close(path, true, 443);
        let syn = w.syn(t);
        w.rst(S, w.arrival(syn));
        // (Windows tries again half a second later.)
        let again = w.syn(t + 500.0);
        let sa = w.syn_ack(w.arrival(again));
        let request = w.send(C, w.arrival(sa), b"GET /next HTTP/1.1\r\nHost: a\r\n\r\n");
        let answer = w.send(S, w.arrival(request) + 1.0, bytes(300));
        w.ack(C, w.arrival(answer));
        w.run().has_no(ConnectionNotReused);
    }
}

#[test]
fn a_client_that_said_close_notify_closed_the_connection_whoever_fins_first() {
    // TLS 1.3: after 2 s idle the client sends its close_notify (an alert
    // hidden in a 19-byte application-data record); the server answers
    // with its FIN before the client's own.
    for path in Path::all(RTT) {
        let mut old = Wire::new(path);
        old.handshake(0.0);
        let hs = tls13_handshake(&mut old, RTT, 0.0, Offer::tls13());
        let request = old.send(C, old.sent(hs.client_finished) + 0.01, leak(encrypted(100)));
        let answer = old.send(S, old.arrival(request) + 30.0, leak(encrypted(700)));
        let alert = old.send(C, old.arrival(answer) + 2000.0, leak(encrypted(19)));
        let server_fin = old.fin(S, old.arrival(alert));
        let client_fin = old.fin(C, old.arrival(server_fin));
        old.ack(S, old.arrival(client_fin));
        let t = old.sent(client_fin) + 1.0;
        let mut w = Wire::new(path);
        let joined = w.join(old, EARLIER, 443);
        let [syn, ..] = w.handshake(t);
        let hs = tls13_handshake(&mut w, t + RTT, 0.0, Offer::tls13());
        let request = w.send(C, w.sent(hs.client_finished), leak(encrypted(100)));
        let answer = w.send(S, w.arrival(request) + 1.0, leak(encrypted(300)));
        w.ack(C, w.arrival(answer));
        let o = w.run();
        let f = o.the(ConnectionNotReused);
        let Detail::ConnectionNotReused {
            close_frame,
            closed_by_server,
            idle_before_close_ms,
            ..
        } = f.detail
        else {
            panic!()
        };
        assert_eq!(
            (close_frame, closed_by_server),
            (o.frame(joined.id(alert)), false)
        );
        assert_ms(idle_before_close_ms, 2000.0, RTT, "the client's idle");
        assert_eq!(f.frames[0], o.frame(syn));
    }
}

/// Two connections from a load balancer, each opening with the PROXY
/// header of the client it carries (`first`, then `second`): the server
/// closes the first after its answer, the balancer opens the second 1 ms
/// after that close reached it and forwards its client's request at once.
fn through_balancer(path: Path, first: &'static [u8], second: &'static [u8]) -> Outcome {
    two_connections(
        path,
        &[first, b"GET / HTTP/1.1\r\nHost: a\r\n\r\n"],
        &[second, b"GET /next HTTP/1.1\r\nHost: a\r\n\r\n"],
    )
}

/// The earlier connection sends `first`'s pieces in turn (10 µs apart),
/// the server answers 1 ms after the last arrives and closes; this one,
/// opened 1 ms after that close reached the client, sends `second`'s at
/// once and is answered.
fn two_connections(path: Path, first: &[&'static [u8]], second: &[&'static [u8]]) -> Outcome {
    let send_all = |w: &mut Wire, from: f64, pieces: &[&'static [u8]]| {
        let mut at = from;
        let mut last = None;
        for &piece in pieces {
            let id = w.send(C, at, piece);
            at = w.sent(id) + 0.01;
            last = Some(id);
        }
        last.expect("a request")
    };
    let mut old = Wire::new(path);
    let [_, _, ack] = old.handshake(0.0);
    let from = old.sent(ack);
    let request = send_all(&mut old, from, first);
    let answer_at = old.arrival(request) + 1.0;
    old.send(
        S,
        answer_at,
        b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
    );
    let closing = old.fin(S, answer_at);
    let back = old.fin(C, old.arrival(closing));
    old.ack(S, old.arrival(back));
    let t = old.arrival(closing) + 1.0;
    let mut w = Wire::new(path);
    w.join(old, EARLIER, 443);
    let [_, _, ack] = w.handshake(t);
    let from = w.sent(ack);
    let request = send_all(&mut w, from, second);
    let answer = w.send(S, w.arrival(request) + 1.0, bytes(300));
    w.ack(C, w.arrival(answer));
    w.run()
}

const FROM_ONE: &[u8] = b"PROXY TCP4 198.51.100.7 203.0.113.1 51234 443\r\n";
const FROM_ONE_AGAIN: &[u8] = b"PROXY TCP4 198.51.100.7 203.0.113.1 51240 443\r\n";
const FROM_ANOTHER: &[u8] = b"PROXY TCP4 198.51.100.9 203.0.113.1 40000 443\r\n";

#[test]
fn behind_a_load_balancer_only_the_same_clients_earlier_connection_could_have_been_kept() {
    for path in Path::all(RTT) {
        // The balancer carries its clients' connections one for one: a
        // connection of another client could not have carried this one's
        // request, whatever address the balancer shows both from.
        through_balancer(path, FROM_ONE, FROM_ANOTHER).has_no(ConnectionNotReused);
        // The same client (a new port of its own) opened a new one.
        let o = through_balancer(path, FROM_ONE, FROM_ONE_AGAIN);
        let f = o.the(ConnectionNotReused);
        let Detail::ConnectionNotReused {
            previous_stream, ..
        } = f.detail
        else {
            panic!("{:?}", f.detail)
        };
        assert_eq!(previous_stream, 0);
    }
}

const FROM_THE_APP: &[u8] = b"GET /a HTTP/1.1\r\nHost: a\r\nUser-Agent: netflix-ios-app\r\n\r\n";
const FROM_THE_PLAYER: &[u8] = b"GET /b HTTP/1.1\r\nHost: a\r\nUser-Agent: AppleCoreMedia/1.0.0.14C92 (iPhone; U; CPU OS 10_2 like Mac OS X; en_us)\r\n\r\n";
const FROM_A_VIEW: &[u8] = b"GET /a HTTP/1.1\r\nHost: a\r\nUser-Agent: Mozilla/5.0 (Linux; Android 5.1.1; wv) Chrome/56.0 Mobile Safari/537.36\r\n\r\n";
const FROM_ITS_BRIDGE: &[u8] = b"GET /b HTTP/1.1\r\nHost: a\r\nUser-Agent: Mozilla/5.0 (Linux; Android 5.1.1; wv) Chrome/56.0 Mobile Safari/537.36 PitanguiBridge/1.16\r\n\r\n";
const FROM_SOMEONE: &[u8] = b"GET /b HTTP/1.1\r\nHost: a\r\n\r\n";

#[test]
fn another_programs_earlier_connection_could_not_have_been_kept_for_this_one() {
    for path in Path::all(RTT) {
        // An app's HTTP client and the system's media player keep their
        // own connections: the player's new one could not have used the
        // app's (nDPI's netflix.pcap).
        two_connections(path, &[FROM_THE_APP], &[FROM_THE_PLAYER]).has_no(ConnectionNotReused);
        two_connections(path, &[FROM_THE_PLAYER], &[FROM_THE_APP]).has_no(ConnectionNotReused);
        // The same product named first, whatever follows it (a web
        // view's bridge appends to its requests' agent: nDPI's
        // alexa-app.pcapng), or an agent on one side only: one program
        // as far as the requests tell.
        for (first, second) in [
            (FROM_THE_APP, FROM_THE_APP),
            (FROM_A_VIEW, FROM_ITS_BRIDGE),
            (FROM_THE_APP, FROM_SOMEONE),
            (FROM_SOMEONE, FROM_THE_PLAYER),
        ] {
            two_connections(path, &[first], &[second]).the(ConnectionNotReused);
        }
    }
}

#[test]
fn the_clients_own_time_before_it_asked_is_no_part_of_the_set_up() {
    // The client asks 15 ms after the SYN-ACK reached it (within the 20
    // ms a waiting client takes): what it did meanwhile it would have
    // done on a kept connection too; the wait is the handshake's round
    // trip.
    for path in Path::all(RTT) {
        let (o, [syn, syn_ack, request], _) = after(path, SERVER_AFTER_ANSWER, 1.0, 15.0);
        let f = o.the(ConnectionNotReused);
        assert_eq!(f.frames, o.frames(&[syn, syn_ack, request]));
        assert_eq!(f.waits.len(), 1);
        assert_ms(f.waits[0].ms, RTT, 0.01, "the round trip, not the pause");
        assert_cost_is_its_waits(f);
    }
}

/// nDPI's whatsappfiles.pcap: an HTTP/2 server's idle timeout wrote a
/// GOAWAY (and a close_notify) 64.7 s after its last answer, then its FIN;
/// the client came back 47 s after that, 112 s after the answer. The
/// goodbye answered nothing: the connection had idled from the answer,
/// and a client back after more than a minute is no connection that could
/// have been reused. Closed right after the answer, the same goodbye-less
/// close 47 s before the client came back is one.
#[test]
fn a_goodbye_written_before_an_idle_close_is_no_answer() {
    for goodbye in [true, false] {
        let mut old = Wire::new(Path::at_client(RTT));
        let [_, _, ack] = old.handshake(0.0);
        let request = old.send(C, old.sent(ack), b"GET / HTTP/1.1\r\nHost: a\r\n\r\n");
        let answer = old.send(
            S,
            old.arrival(request) + 1.0,
            b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
        );
        old.ack(C, old.arrival(answer));
        let close_at = if goodbye {
            let bye = old.send(S, old.sent(answer) + 64_700.0, bytes(41));
            old.sent(bye) + 0.1
        } else {
            old.sent(answer) + 1.0
        };
        let fin = old.fin(S, close_at);
        let back = old.fin(C, old.arrival(fin));
        old.ack(S, old.arrival(back));
        let t = old.arrival(fin) + 47_000.0;
        let mut w = Wire::new(Path::at_client(RTT));
        w.join(old, EARLIER, 443);
        new_connection(&mut w, t, 0.0);
        let o = w.run();
        if goodbye {
            o.has_no(ConnectionNotReused);
        } else {
            o.the(ConnectionNotReused);
        }
    }
}

/// A connection of the client's pool: its handshake at `start`, one
/// request right after it, the answer 1 ms after the request arrives,
/// and the client's FIN at `close_at`.
fn pooled(path: Path, start: f64, close_at: f64) -> Wire {
    let mut w = Wire::new(path);
    let [_, _, ack] = w.handshake(start);
    let request = w.send(C, w.sent(ack), b"GET / HTTP/1.1\r\nHost: a\r\n\r\n");
    let answer = w.send(
        S,
        w.arrival(request) + 1.0,
        b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
    );
    w.ack(C, w.arrival(answer));
    let fin = w.fin(C, close_at);
    let back = w.fin(S, w.arrival(fin));
    w.ack(C, w.arrival(back));
    w
}

/// A client that closed its connections to the server at once, within
/// 2 ms, each idle for another time (`starts`: when each began, the
/// earliest the one this connection replaces), then opened this one:
/// what `closed_together` counts of the others.
fn after_teardown(path: Path, starts: &[f64]) -> u32 {
    let mut w = Wire::new(path);
    for (k, &start) in starts.iter().enumerate() {
        // The replaced one closes last, its siblings 0.5 ms apart before.
        let close_at = 5000.0 - 0.5 * k as f64;
        w.join(pooled(path, start, close_at), EARLIER + k as u16, 443);
    }
    new_connection(&mut w, 5400.0, 0.0);
    match w.run().the(ConnectionNotReused).detail {
        Detail::ConnectionNotReused {
            closed_together, ..
        } => closed_together,
        ref d => panic!("{d:?}"),
    }
}

/// A pool torn down at once (nDPI's alexa-app.pcapng 50: seven
/// connections closed in 2.3 ms, idle 2 to 4 s; curl ending a run of
/// requests) is no idle timeout, which closes each connection when it
/// has idled its time: the others the client closed within 20 ms, each
/// idle for another time (its last answer more than 100 ms from the
/// replaced one's), are counted. Connections answered together idle
/// together, and one timeout closes them together: not counted.
#[test]
fn a_pool_torn_down_at_once_is_told_from_an_idle_timeout() {
    for path in [Path::at_client(RTT), Path::mid(RTT, 0.5)] {
        assert_eq!(after_teardown(path, &[0.0, 1000.0, 2000.0]), 2);
        assert_eq!(after_teardown(path, &[0.0, 1000.0]), 1);
        // Answered together: idle alike.
        assert_eq!(after_teardown(path, &[0.0, 10.0, 20.0]), 0);
    }
}
