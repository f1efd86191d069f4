//! Rule 6 of the causality rules (detect/causality.rs): a set-up nobody
//! waited for costs nothing.
//!
//! > Where the connection's first request left more than a client's
//! > turnaround after the set-up let it (`Facts::made_ahead_of_need`: a
//! > browser's preconnect), what slowed the set-up delayed no request.
//! > Such a finding stays at cost 0, saying what it would have cost
//! > (`unwaited`); the ledger counts those rows as idle.
//!
//! `Facts::made_ahead_of_need`: another connection of the client's to the
//! same server address and port carried one of its requests after this
//! one's SYN and before its first request (the client had a connection
//! for its requests: late binding, a backup connection that lost the
//! race); the first request left more than a round trip, 20 ms and three
//! times the client's slowest own step in the set-up after the last data
//! before it; no greeting; the server's side captured.

use super::tls::{encrypted, encrypted_alert, tls13_handshake, tls13_handshake_with, Offer};
use super::*;
use crate::model::Phase;
use FindingKind::{ServerThinkTime, TlsExtraRtt};

const RTT: f64 = 40.0;
/// The server's time before its ServerHello: what slowed the set-up.
const THINK: f64 = 200.0;

/// When the sibling's request leaves, against this connection's SYN.
#[derive(Clone, Copy)]
enum Sibling {
    None,
    /// 100 ms after this connection's SYN: during its set-up.
    During,
    /// 100 ms before this connection's SYN: it carried nothing of its time.
    Before,
}

/// This connection (client port 40000): its SYN at `t0`, a TLS 1.3
/// handshake whose server takes [`THINK`] before its flight, the client's
/// Finished `client` ms after the flight arrived, and its first request
/// `idle` ms after that Finished; with another connection of the same
/// client to the same server as `sibling` says, its request answered.
fn set_up(path: Path, sibling: Sibling, client: f64, idle: f64) -> Outcome {
    set_up_then(path, sibling, client, idle, true)
}

/// As [`set_up`], but with `asks` false the connection carries no
/// request: its client closes it (FIN) `idle` ms after its Finished.
fn set_up_then(path: Path, sibling: Sibling, client: f64, idle: f64, asks: bool) -> Outcome {
    let t0 = 1000.0;
    let mut w = Wire::new(path);
    w.handshake(t0);
    let hs = tls13_handshake_with(&mut w, t0 + RTT + 0.1, THINK, client, Offer::tls13());
    if asks {
        let request = w.send(C, w.sent(hs.client_finished) + idle, leak(encrypted(120)));
        let answer = w.send(S, w.arrival(request) + 1.0, leak(encrypted(400)));
        w.ack(C, w.arrival(answer));
    } else {
        w.ack(S, w.arrival(hs.client_finished));
        let fin = w.fin(C, w.sent(hs.client_finished) + idle);
        w.fin(S, w.arrival(fin));
    }
    let at = match sibling {
        Sibling::None => return w.run(),
        Sibling::During => t0 + 100.0,
        Sibling::Before => t0 - 100.0,
    };
    // The sibling: set up 2.1 round trips before its request.
    let mut other = Wire::new(path);
    let start = at - 2.0 * RTT - 0.2;
    other.handshake(start);
    let ohs = tls13_handshake(&mut other, start + RTT + 0.1, 0.0, Offer::tls13());
    let asked = other.send(C, other.sent(ohs.client_finished), leak(encrypted(120)));
    let answered = other.send(S, other.arrival(asked) + 1.0, leak(encrypted(400)));
    other.ack(C, other.arrival(answered));
    w.join(other, 40001, 443);
    w.run()
}

fn think_in_handshake(o: &Outcome) -> &Finding {
    o.the_in(ServerThinkTime, Phase::TlsHandshake)
}

#[test]
fn a_slow_set_up_while_another_connection_carried_the_request_costs_nothing() {
    for path in Path::all(RTT) {
        let o = set_up(path, Sibling::During, 0.5, 1000.0);
        let f = think_in_handshake(&o);
        assert_eq!(f.cost_ms, 0.0, "{f:#?}");
        assert!(f.waits.is_empty(), "{f:#?}");
        let u = f.unwaited.unwrap_or_else(|| panic!("{f:#?}"));
        // What it would have cost: the server's time.
        assert_ms(u.cost_ms, THINK, 2.0, "the server's think");
        assert_ms(u.idle_ms, 1000.0, RTT, "the client's idle");
        // The sibling is the connection joined: stream 1.
        assert_eq!(u.sibling_stream, Some(1));
        // Nobody waited for the handshakes: their rows are idle.
        for phase in [Phase::TcpHandshake, Phase::TlsHandshake] {
            let row = o.row(phase);
            assert_eq!(row.excess_ms, Some(0.0), "{row:?}");
            assert!(row.ideal_basis.contains("made ahead of need"), "{row:?}");
        }
        o.has_no(TlsExtraRtt);
    }
}

/// A spare that never carried a request (one of the connections an
/// Echo opened to one server at once, its ClientHello lost and re-sent:
/// nDPI's alexa-app.pcapng 46), closed a second after its set-up while
/// another carried the client's request: nobody waited for its set-up
/// either.
#[test]
fn a_spare_closed_unused_while_another_carried_the_request_waited_for_nothing() {
    for path in Path::all(RTT) {
        let o = set_up_then(path, Sibling::During, 0.5, 1000.0, false);
        let f = think_in_handshake(&o);
        assert_eq!(f.cost_ms, 0.0, "{f:#?}");
        let u = f.unwaited.unwrap_or_else(|| panic!("{f:#?}"));
        assert_ms(u.cost_ms, THINK, 2.0, "the server's think");
        assert_ms(u.idle_ms, 1000.0, RTT, "unused until the FIN");
        assert_eq!(u.request_frame, None);
        assert!(u.closed_frame.is_some(), "{u:?}");
        assert_eq!(u.sibling_stream, Some(1));
        for phase in [Phase::TcpHandshake, Phase::TlsHandshake] {
            assert_eq!(o.row(phase).excess_ms, Some(0.0), "{:?}", o.row(phase));
        }
        // Alone, it may be a connection its client gave up on (waiting
        // for a server that greets first).
        let o = set_up_then(path, Sibling::None, 0.5, 1000.0, false);
        let f = think_in_handshake(&o);
        assert!(f.unwaited.is_none(), "{f:#?}");
        assert_ms(f.cost_ms, THINK, 2.0, "the server's think");
    }
}

/// An HTTP client's connection (ALPN h2) that never carried a request,
/// closed by its client a second after its set-up was done, alone: a
/// request waiting for it would have left the moment it could, so nobody
/// waited (PcapPlusPlus's many-protocols.pcap 37, a browser's preconnect
/// after a DNS prefetch; judged in session 83, where the sibling once
/// named served another site on that address). Closed by the server
/// first, or with the set-up not done, it may have been waited on.
///
/// A client that offers NPN instead of ALPN (a browser before 2016) is
/// an HTTP client too, and its close_notify right before its FIN is its
/// close (PcapPlusPlus's example.pcap 33: a prefetched connection closed
/// unused 5.25 s on; judged in session 87 at 31.6 ms of the client's
/// time nobody waited for). A client that offers neither may have given
/// up waiting for a greeting.
#[test]
fn an_http_clients_connection_closed_unused_alone_waited_for_nothing() {
    let run = |offer: Offer, server_closes_first: bool, close_notify: bool| {
        let t0 = 1000.0;
        let mut w = Wire::new(Path::at_client(RTT));
        w.handshake(t0);
        let hs = tls13_handshake_with(&mut w, t0 + RTT + 0.1, THINK, 0.5, offer);
        w.ack(S, w.arrival(hs.client_finished));
        let closer = if server_closes_first { S } else { C };
        let at = if server_closes_first {
            w.arrival(hs.client_finished) + 1000.0
        } else {
            w.sent(hs.client_finished) + 1000.0
        };
        if close_notify {
            w.send(closer, at - 0.7, leak(encrypted_alert()));
        }
        let fin = w.fin(closer, at);
        w.fin(closer.reverse(), w.arrival(fin));
        w.run()
    };
    let h2 = Offer {
        alpn_h2: true,
        ..Offer::tls13()
    };
    let npn = Offer {
        npn: true,
        ..Offer::tls13()
    };
    for (offer, close_notify) in [(h2, false), (h2, true), (npn, false), (npn, true)] {
        let o = run(offer, false, close_notify);
        let f = think_in_handshake(&o);
        assert_eq!(f.cost_ms, 0.0, "{f:#?}");
        let u = f.unwaited.unwrap_or_else(|| panic!("{f:#?}"));
        assert_eq!((u.sibling_stream, u.sibling_frame), (None, None), "{u:?}");
        assert!(u.closed_frame.is_some(), "{u:?}");
        let f = think_in_handshake(&run(offer, true, close_notify)).clone();
        assert!(f.unwaited.is_none(), "{f:#?}");
        assert_ms(f.cost_ms, THINK, 2.0, "the server's think");
    }
    let f = think_in_handshake(&run(Offer::tls13(), false, true)).clone();
    assert!(f.unwaited.is_none(), "{f:#?}");
}

/// An HTTP client's connection (ALPN h2) set up and never asked
/// anything, still open as the capture went on a second and more past
/// its set-up (nDPI's youtubeupload.pcap 0, judged wrong in session 88:
/// Chrome's TCP connection raced against QUIC, which carried the
/// requests, unused for the 18 s after its handshake, had read 34.8 ms
/// of extra round trips): a request waiting for it would have left the
/// moment it could, so nobody waited for its set-up. Near-misses: the
/// capture stopping sooner after the set-up (the client may have been
/// about to ask), a client that offers no HTTP (it may wait for a
/// greeting).
#[test]
fn an_http_clients_connection_never_asked_anything_waited_for_nothing() {
    let run = |offer: Offer, went_on: f64| {
        let t0 = 1000.0;
        let mut w = Wire::new(Path::at_client(RTT));
        w.handshake(t0);
        let hs = tls13_handshake_with(&mut w, t0 + RTT + 0.1, THINK, 0.5, offer);
        w.ack(S, w.arrival(hs.client_finished));
        // The capture goes on: the server's keep-alive, `went_on` ms on.
        let last = w.ack(S, w.sent(hs.client_finished) + went_on);
        (w.run(), last)
    };
    let h2 = Offer {
        alpn_h2: true,
        ..Offer::tls13()
    };
    let (o, last) = run(h2, 2000.0);
    let f = think_in_handshake(&o);
    assert_eq!(f.cost_ms, 0.0, "{f:#?}");
    let u = f.unwaited.unwrap_or_else(|| panic!("{f:#?}"));
    assert_ms(u.cost_ms, THINK, 2.0, "the server's think");
    assert_eq!(u.open_until_frame, Some(o.frame(last)), "{u:?}");
    assert_eq!((u.request_frame, u.closed_frame), (None, None), "{u:?}");
    assert_ms(u.idle_ms, 2000.0, RTT, "unused until the capture's frame");
    for phase in [Phase::TcpHandshake, Phase::TlsHandshake] {
        let row = o.row(phase);
        assert_eq!(row.excess_ms, Some(0.0), "{row:?}");
        assert!(row.ideal_basis.contains("still open at frame"), "{row:?}");
    }
    o.has_no(TlsExtraRtt);
    for (offer, went_on) in [(h2, 500.0), (Offer::tls13(), 2000.0)] {
        let (o, _) = run(offer, went_on);
        let f = think_in_handshake(&o);
        assert!(f.unwaited.is_none(), "{went_on}: {f:#?}");
        assert_ms(f.cost_ms, THINK, 2.0, "the server's think");
    }
}

// Near-misses: each breaks one condition.

#[test]
fn without_another_connection_a_late_request_may_be_a_slow_clients() {
    for path in Path::all(RTT) {
        let o = set_up(path, Sibling::None, 0.5, 1000.0);
        let f = think_in_handshake(&o);
        assert!(f.unwaited.is_none(), "{f:#?}");
        assert_ms(f.cost_ms, THINK, 2.0, "the server's think");
    }
}

#[test]
fn a_sibling_request_before_the_syn_carried_nothing_of_the_set_ups_time() {
    for path in Path::all(RTT) {
        let o = set_up(path, Sibling::Before, 0.5, 1000.0);
        assert!(think_in_handshake(&o).unwaited.is_none());
    }
}

#[test]
fn a_request_right_after_the_set_up_waited_for_it() {
    for path in Path::all(RTT) {
        let o = set_up(path, Sibling::During, 0.5, 1.0);
        let f = think_in_handshake(&o);
        assert!(f.unwaited.is_none(), "{f:#?}");
        assert_ms(f.cost_ms, THINK, 2.0, "the server's think");
    }
}

#[test]
fn a_request_within_a_round_trip_of_the_set_up_may_be_the_clients_work() {
    for path in Path::all(RTT) {
        let o = set_up(path, Sibling::During, 0.5, RTT - 5.0);
        assert!(think_in_handshake(&o).unwaited.is_none());
    }
}

#[test]
fn a_client_slow_at_its_own_steps_is_slow_after_the_set_up_too() {
    // Its Finished 400 ms after the server's flight: a request 1 s after
    // it is within three such steps.
    for path in Path::all(RTT) {
        let o = set_up(path, Sibling::During, 400.0, 1000.0);
        assert!(think_in_handshake(&o).unwaited.is_none());
    }
}
