//! `client_think_time` (detect/client_think_time.rs).
//!
//! > the client took long to answer the server's handshake flight:
//! > between the server's flight (its last segment, the last copy)
//! > reaching the client and the client's next flight leaving (TLS 1.3
//! > and resumed TLS 1.2: its Finished; full TLS 1.2: its key exchange).
//! >
//! > Signature, on the client's clock: answer departure minus the server
//! > flight's arrival, at least half a round trip, clamped to 5..20 ms.
//! > Not when the client's answer acknowledges server bytes the capture
//! > did not show.

use super::tls::*;
use super::*;
use crate::model::{Detail, Phase};
use FindingKind::{ClientThinkTime, ServerThinkTime, TlsExtraRtt};

const RTT: f64 = 40.0;

/// A TLS 1.3 handshake whose client sends its Finished `client` ms after
/// the server's flight arrived.
/// Its kernel acknowledges the flight the moment it is in.
fn tls13_with_client(path: Path, client: f64) -> (Wire, Tls13) {
    let mut w = Wire::new(path);
    w.handshake(0.0);
    let hs = tls13_handshake_with(&mut w, RTT + 0.1, 0.2, client, Offer::tls13());
    let last = *hs.flight.last().unwrap();
    w.ack(C, w.arrival(last));
    (w, hs)
}

#[test]
fn a_client_sending_its_finished_long_after_the_servers_flight_is_client_think_time() {
    for path in Path::all(RTT) {
        let (w, hs) = tls13_with_client(path, 60.0);
        let last = *hs.flight.last().unwrap();
        let o = w.run();
        let f = o.the(ClientThinkTime);
        assert_eq!(f.phase, Some(Phase::TlsHandshake));
        assert_eq!(f.frames, o.frames(&[last, hs.client_finished]));
        // Ended by the client's own work: no releasing packet.
        assert_eq!(
            f.waits,
            vec![o.wait(last, hs.client_finished, None, f.cost_ms)]
        );
        assert_ms(f.cost_ms, 60.0, 0.2, "the client's 60 ms, on its clock");
        // It explains the handshake's excess: nothing is left unexplained.
        let Detail::TlsExtraRtt {
            causes,
            unexplained_ms,
            ..
        } = &o.the(TlsExtraRtt).detail
        else {
            panic!("tls_extra_rtt without its detail");
        };
        assert_eq!(causes.first().map(|c| c.0), Some(ClientThinkTime));
        assert!(*unexplained_ms < 1.0, "{unexplained_ms} ms unexplained");
        o.has_no(ServerThinkTime);
    }
}

/// Past the client's uplink (a router's capture, an access point's), the
/// uplink held the client's Finished 80 ms after it left (a Wi-Fi link
/// waking), its ACK of the flight not at all: the capture shows 140 ms
/// between them, the client's own clock 60 ms. With TSvals (1000 Hz, the
/// connection's client segments over a second: requests every 150 ms)
/// the hold is the path's; without them the capture's times are all
/// there is. (nDPI's android.pcap: a phone's key exchange 522.6 ms after
/// its ACK as captured, 420 ms by its 250 Hz clock.)
#[test]
fn what_the_clients_uplink_held_after_its_own_clock_says_it_left_is_not_its_time() {
    let run = |stamped: bool| {
        let (mut w, hs) = tls13_with_client(Path::mid(RTT, 0.5), 60.0);
        for i in 0..8 {
            let request = w.send(C, 300.0 + 150.0 * i as f64, bytes(80));
            w.send(S, w.arrival(request) + 1.0, bytes(200));
        }
        if stamped {
            w.stamp(C, 1000.0);
        }
        w.delay(hs.client_finished, 80.0);
        w.run()
    };
    assert_ms(
        run(false).the(ClientThinkTime).cost_ms,
        140.0,
        0.2,
        "as captured",
    );
    let own = run(true).the(ClientThinkTime).cost_ms;
    assert!(
        (58.0..=62.0).contains(&own),
        "the client's 60 ms by its clock: {own}"
    );
}

#[test]
fn a_client_answering_within_its_normal_turnaround_is_not_client_think_time() {
    // Below RTT/2 (20 ms): verifying a chain and computing keys.
    for path in Path::all(RTT) {
        let (w, _) = tls13_with_client(path, 12.0);
        w.run().has_no(ClientThinkTime);
    }
}

#[test]
fn the_threshold_is_at_least_5_ms_on_a_short_path() {
    // 4 ms on a 2 ms path is two round trips, yet a host's ordinary work;
    // 6 ms is not.
    let (w, _) = tls13_with_client(Path::at_client(2.0), 4.0);
    w.run().has_no(ClientThinkTime);
    let (w, _) = tls13_with_client(Path::at_client(2.0), 6.0);
    w.run().the(ClientThinkTime);
}

#[test]
fn a_server_flight_the_capture_missed_the_tail_of_leaves_the_clients_wait_unknown() {
    // The client acknowledges the whole flight, but its last segment
    // never reached the capture: when the client had it (a re-send the
    // capture did not see) is unknown, and a wait for it would read as
    // its work.
    let (w, hs) = tls13_with_client(Path::at_client(RTT), 60.0);
    let missed = *hs.flight.last().unwrap();
    let o = w.run_missing(&[missed]);
    o.has_no(ClientThinkTime);
}

/// A segment inside the flight that the capture never showed, its last
/// segment captured, leaves the client's turn unknown too: the hole
/// proves the capture misses packets, and a re-send it missed as well
/// would have held the client as long (PcapPlusPlus's tls2.pcap: every
/// server flight's middle segment missing; 74-76, 710 ms). The turn is
/// told as untimed in the handshake's excess (tls_extra_rtt.rs).
#[test]
fn a_hole_inside_a_server_flight_leaves_the_clients_turn_unknown() {
    for path in Path::all(RTT) {
        let mut w = Wire::new(path);
        w.handshake(0.0);
        let (_, flight) = tls13_hello_and_flight_of(&mut w, RTT + 0.1, 0.2, Offer::tls13(), 4000);
        assert!(flight.len() >= 3, "{}", flight.len());
        let last = *flight.last().unwrap();
        w.ack(C, w.arrival(last));
        w.send(C, w.arrival(last) + 60.0, leak(encrypted(FINISHED_LEN)));
        let o = w.run_missing(&[flight[1]]);
        o.has_no(ClientThinkTime);
    }
}

#[test]
fn a_full_tls12_clients_slow_key_exchange_is_client_think_time() {
    for path in Path::all(RTT) {
        let mut w = Wire::new(path);
        w.handshake(0.0);
        let took = Turnarounds {
            client: 45.0,
            ..Turnarounds::default()
        };
        let hs = tls12_handshake(&mut w, RTT + 0.1, took, true, false);
        let last = *hs.flight.last().unwrap();
        let o = w.run();
        let f = o.the(ClientThinkTime);
        assert_eq!(f.frames, o.frames(&[last, hs.client_flight]));
        assert_ms(f.cost_ms, 45.0, 0.2, "the client's 45 ms");
        o.has_no(ServerThinkTime);
    }
}

#[test]
fn a_large_flight_on_a_slow_link_beyond_a_server_side_tap_is_not_the_clients_time() {
    // Captured at the server: the flight's segments queue 60 ms more on
    // the link to the client than the handshake's round trip shows; the
    // client answers the moment the last arrives. Its ACKs of the flight
    // say when that was; without them nothing is claimed.
    for acks in [true, false] {
        let mut w = Wire::new(Path::at_server(RTT));
        w.handshake(0.0);
        let (_, flight) = tls13_hello_and_flight(&mut w, RTT + 0.1, 0.2, Offer::tls13());
        for (i, id) in flight.iter().enumerate() {
            w.late_after_tap(*id, 20.0 * (i + 1) as f64);
        }
        let last = *flight.last().unwrap();
        if acks {
            w.ack(C, w.arrival(last));
        }
        w.send(C, w.arrival(last) + 0.3, leak(encrypted(FINISHED_LEN)));
        w.run().has_no(ClientThinkTime);
    }
    // The same client at work 60 ms, its ACK at once: its time.
    let mut w = Wire::new(Path::at_server(RTT));
    w.handshake(0.0);
    let (_, flight) = tls13_hello_and_flight(&mut w, RTT + 0.1, 0.2, Offer::tls13());
    let last = *flight.last().unwrap();
    w.ack(C, w.arrival(last));
    let finished = w.send(C, w.arrival(last) + 60.0, leak(encrypted(FINISHED_LEN)));
    let o = w.run();
    let f = o.the(ClientThinkTime);
    assert_eq!(f.frames, o.frames(&[last, finished]));
    assert_ms(
        f.cost_ms,
        60.0,
        0.2,
        "from the client's ACK to its Finished",
    );
}

// The plaintext preamble before TLS (docs/findings.md: "the client's turns
// in a preamble before TLS, the ClientHello last, in that phase").

#[test]
fn a_client_hello_long_after_the_servers_ready_is_the_clients_time_in_the_preamble() {
    for path in Path::all(RTT) {
        let (o, d) = run_starttls(
            path,
            Dialog {
                client_hello: 60.0,
                ..Dialog::default()
            },
        );
        let f = o.the_in(ClientThinkTime, Phase::Starttls);
        assert_eq!(
            f.waits,
            vec![o.wait(d.ready, d.tls.ch, None, f.cost_ms)],
            "from the server's 220 to the ClientHello"
        );
        assert_ms(f.cost_ms, 60.0, 0.2, "the client's 60 ms, on its clock");
        assert!(o.report.unexplained_ms < 1.0, "{}", o.report.unexplained_ms);
        o.has_no(ServerThinkTime);
        o.has_none_in(ClientThinkTime, Phase::TlsHandshake);
    }
}

/// MySQL's greeting (protocol 10, CLIENT_SSL offered).
fn mysql_greeting() -> Vec<u8> {
    let mut p = vec![10];
    p.extend_from_slice(b"10.11.19-MariaDB\0");
    p.extend_from_slice(&[1, 0, 0, 0]);
    p.extend_from_slice(b"abcdefgh\0");
    p.extend_from_slice(&0xffffu16.to_le_bytes());
    p.extend_from_slice(&[0xff, 2, 0, 0xff, 0xc7, 21]);
    p.extend_from_slice(&[0; 10]);
    p.extend_from_slice(b"ijklmnopqrst\0mysql_native_password\0");
    let mut v = (p.len() as u32).to_le_bytes()[..3].to_vec();
    v.push(0);
    v.extend(p);
    v
}

/// MySQL's SSL request (sequence 1, CLIENT_SSL set).
fn mysql_ssl_request() -> Vec<u8> {
    let mut v = vec![32, 0, 0, 1];
    v.extend_from_slice(&0x000f_aa85u32.to_le_bytes());
    v.extend_from_slice(&[0, 0, 0, 1, 0xff]);
    v.extend_from_slice(&[0; 23]);
    v
}

/// MySQL's SSL preamble after the TCP handshake (started at 0): the
/// greeting, the client's SSL request at once, the server's ACK of it
/// `ack_delay` ms after it arrived; the ClientHello `hello` ms after the
/// greeting arrived, or, None, the moment that ACK arrived (what Nagle's
/// release looks like); then a TLS 1.3 handshake answered at once.
fn mysql_ssl(path: Path, ack_delay: f64, hello: Option<f64>) -> (Outcome, Id, Tls13) {
    let mut w = Wire::new(path);
    let [_, _, ack] = w.handshake(0.0);
    let greeting = w.send(S, w.arrival(ack) + 0.2, leak(mysql_greeting()));
    let request = w.send(C, w.arrival(greeting) + 0.1, leak(mysql_ssl_request()));
    let release = w.ack(S, w.arrival(request) + ack_delay);
    let at = match hello {
        Some(after) => w.arrival(greeting) + after,
        None => w.arrival(release) + 0.05,
    };
    let hs = tls13_handshake(&mut w, at, 0.2, Offer::tls13());
    let last = *hs.flight.last().unwrap();
    w.ack(C, w.arrival(last));
    (w.run(), greeting, hs)
}

#[test]
fn a_client_hello_long_after_its_own_ssl_request_is_the_clients_time_from_the_greeting() {
    // MySQL's client answers the greeting with its SSL request at once and
    // sends the ClientHello when its TLS library is ready, waiting for
    // nothing in between: its time runs from the greeting's arrival.
    for path in Path::all(RTT) {
        let (o, greeting, hs) = mysql_ssl(path, 0.0, Some(55.0));
        let f = o.the_in(ClientThinkTime, Phase::Starttls);
        assert_eq!(f.waits, vec![o.wait(greeting, hs.ch, None, f.cost_ms)]);
        assert_ms(f.cost_ms, 55.0, 0.2, "from the greeting to the ClientHello");
    }
}

#[test]
fn a_client_hello_released_by_an_ack_is_no_think_time() {
    // Nagle on: the ClientHello waited for the server's ACK of the SSL
    // request, delayed 45 ms; when the client wrote it is unknown, and
    // the wait is the hold's.
    for path in Path::all(RTT) {
        let (o, _, _) = mysql_ssl(path, 45.0, None);
        o.has_none_in(ClientThinkTime, Phase::Starttls);
    }
}

/// HAProxy's `send-proxy` header: the client here is a load balancer
/// that accepted 198.51.100.7:51234 on its 203.0.113.1:443.
const PROXY_V1: &[u8] = b"PROXY TCP4 198.51.100.7 203.0.113.1 51234 443\r\n";

/// A TLS 1.3 handshake behind a load balancer: its PROXY header right
/// after the handshake, the ClientHello `hello_after` ms later (when its
/// client sent one), the Finished `client` ms after the server's flight
/// reached the balancer (a round trip to its client, and that client's
/// work). The balancer's kernel acknowledges the flight at once.
fn behind_balancer(path: Path, hello_after: f64, client: f64) -> (Wire, Tls13, Id) {
    let mut w = Wire::new(path);
    let [_, _, ack] = w.handshake(0.0);
    let header = w.send(C, w.sent(ack) + 0.05, PROXY_V1);
    let hello_at = w.sent(header) + hello_after;
    let hs = tls13_handshake_with(&mut w, hello_at, 0.2, client, Offer::tls13());
    let last = *hs.flight.last().unwrap();
    w.ack(C, w.arrival(last));
    (w, hs, header)
}

#[test]
fn behind_a_load_balancer_the_clients_answer_waits_for_the_balancers_client_not_its_own_work() {
    for path in Path::all(RTT) {
        let (w, hs, header) = behind_balancer(path, 300.0, 60.0);
        let o = w.run();
        // The header names the balancer's client, and is no request.
        let proxy = o.report.proxy_protocol.as_deref().expect("the header");
        assert_eq!((proxy.version, proxy.frame), (1, o.frame(header)));
        assert_eq!(
            proxy.client.map(|c| c.to_string()).as_deref(),
            Some("198.51.100.7:51234")
        );
        assert_eq!(o.report.exchanges, 0, "{:?}", o.report.ledger);
        // TLS from the ClientHello, 300 ms after the header: the wait
        // for the balancer's client to speak is in no phase.
        let row = o.row(Phase::TlsHandshake);
        assert_eq!(row.start_frame, o.frame(hs.ch));
        // The Finished's 60 ms beyond the round trip are the balancer's
        // client's: in the ideal, not the excess, and nobody's think time.
        assert!(row.excess_ms.unwrap_or(0.0) < 0.5, "{row:?}");
        assert!(
            row.ideal_basis.contains("load balancer's client"),
            "{row:?}"
        );
        let ideal_ms = row.ideal_rtts.unwrap() * RTT;
        assert_ms(
            ideal_ms,
            RTT + 60.0,
            0.5,
            "one round trip, and its client's time",
        );
        o.has_no(ClientThinkTime);
        o.has_no(TlsExtraRtt);
    }
}

#[test]
fn without_a_proxy_header_the_same_answer_is_client_think_time() {
    // The control: the same handshake, no header before the ClientHello.
    for path in Path::all(RTT) {
        let (w, _) = tls13_with_client(path, 60.0);
        let o = w.run();
        assert!(o.report.proxy_protocol.is_none());
        o.the(ClientThinkTime);
    }
}

/// TLS 1.3's compatibility ChangeCipherSpec (RFC 8446 D.4) answers
/// nothing: GnuTLS and Java write it the moment the server's flight (or
/// its ServerHello) comes, and their Finished after they checked the
/// certificate (kafka-tls.pcap: 50 ms after; ocsp-tls13.pcap: after an
/// OCSP fetch).
#[test]
fn a_compatibility_change_cipher_spec_written_on_arrival_is_not_the_clients_answer() {
    for path in Path::all(RTT) {
        let mut w = Wire::new(path);
        w.handshake(0.0);
        let (_, flight) = tls13_hello_and_flight(&mut w, RTT + 0.1, 0.2, Offer::tls13());
        let last = *flight.last().unwrap();
        let arrived = w.arrival(last);
        let ccs = w.send(C, arrived + 0.3, leak(change_cipher_spec()));
        let finished = w.send(C, arrived + 60.0, leak(encrypted(FINISHED_LEN)));
        let o = w.run();
        let f = o.the(ClientThinkTime);
        assert_eq!(
            f.frames,
            o.frames(&[last, finished]),
            "not {:?}",
            o.frame(ccs)
        );
        // Counted from the record, whose ACK shows the client had the
        // flight then (away from the client, the only sign of it).
        assert_ms(f.cost_ms, 59.7, 0.01, "the record to the Finished");
    }
}

/// Nor is the rest of the server's flight an answer to that
/// ChangeCipherSpec: the lab's tls13-nagle-builtin, where rustls writes it
/// on the ServerHello and the server's last segment waits for the
/// client's delayed ACK (Nagle's, not the server's work).
#[test]
fn the_rest_of_a_servers_flight_after_the_clients_compatibility_record_is_not_server_think_time() {
    for path in Path::all(RTT) {
        let mut w = Wire::new(path);
        w.handshake(0.0);
        let flight = segments(&tls13_server_flight(3000, false));
        let ch = w.send(C, RTT + 0.1, leak(client_hello(Offer::tls13())));
        let go = w.arrival(ch) + 0.2;
        let first: Vec<Id> = flight[..flight.len() - 1]
            .iter()
            .enumerate()
            .map(|(i, s)| w.send(S, go + i as f64 * 0.01, s))
            .collect();
        let arrived = w.arrival(*first.last().unwrap());
        w.send(C, arrived + 0.1, leak(change_cipher_spec()));
        // The client's delayed ACK, 40 ms on, lets the held rest go.
        let ack = w.ack(C, arrived + 40.0);
        let rest = w.send(S, w.arrival(ack), flight[flight.len() - 1]);
        w.send(C, w.arrival(rest) + 1.0, leak(encrypted(FINISHED_LEN)));
        w.run().has_no(ServerThinkTime);
    }
}

/// GnuTLS 3.7 (gnutls-cli, wget): the compatibility record leaves alone
/// on the flight's arrival; the Finished, written at once after it, waits
/// under Nagle for the server's ACK of that record, which the server's
/// delayed-ACK timer holds. The handshake waited for Nagle, not for the
/// client's work.
#[test]
fn a_finished_held_by_nagle_behind_the_compatibility_record_is_nagles_not_the_clients() {
    for path in Path::all(RTT) {
        let mut w = Wire::new(path);
        w.handshake(0.0);
        let (_, flight) = tls13_hello_and_flight(&mut w, RTT + 0.1, 0.2, Offer::tls13());
        let arrived = w.arrival(*flight.last().unwrap());
        w.ack(C, arrived);
        let ccs = w.send(C, arrived + 0.3, leak(change_cipher_spec()));
        // The server's delayed ACK of the record, 45 ms after it came.
        let ack = w.ack(S, w.arrival(ccs) + 45.0);
        let finished = w.send(C, w.arrival(ack) + 0.04, leak(encrypted(FINISHED_LEN)));
        let o = w.run();
        o.has_no(ClientThinkTime);
        let hold = o.the(FindingKind::NagleDelayedAck);
        assert_eq!(hold.phase, Some(Phase::TlsHandshake), "the Finished's wait");
        assert_eq!(hold.frames, o.frames(&[ccs, ack, finished]));
        let Detail::TlsExtraRtt { causes, .. } = &o.the(TlsExtraRtt).detail else {
            panic!("tls_extra_rtt without its detail");
        };
        assert_eq!(
            causes.first().map(|c| c.0),
            Some(FindingKind::NagleDelayedAck)
        );
    }
}

/// The client acknowledges the server's flight at once, its window
/// shrunk by it; reopens its window `read` ms later (its application
/// read the flight: a window update) when `read` is given; and sends its
/// Finished 21 ms after the flight arrived.
fn flight_read(read: Option<f64>) -> Outcome {
    let mut w = Wire::new(Path::at_client(RTT));
    w.handshake(0.0);
    let hs = tls13_handshake_with(&mut w, RTT + 0.1, 0.2, 21.0, Offer::tls13());
    let last = *hs.flight.last().unwrap();
    w.window[C.index()] = 40_000;
    w.ack(C, w.arrival(last));
    if let Some(read) = read {
        w.window[C.index()] = 65_535;
        w.ack(C, w.arrival(last) + read);
    }
    w.run()
}

/// A window update is the client's application reading (the receive
/// buffer drained): read 19.5 ms after the flight came and answered 1.5
/// ms after that, the turn went to what kept the application from
/// reading, not to the handshake's work (nDPI's zoom2.pcap 0). Not when
/// most of the turn came after the read, nor without an update.
#[test]
fn a_window_update_long_before_the_answer_shows_the_flight_was_read_late() {
    let late = |o: &Outcome| {
        let Detail::ClientThinkTime { late_read, .. } = o.the(ClientThinkTime).detail else {
            panic!("client_think_time without its detail");
        };
        late_read
    };
    let o = flight_read(Some(19.5));
    let read = late(&o).expect("a late read");
    assert_ms(read.before_ms, 19.5, 0.05, "before the read");
    assert_ms(read.after_ms, 1.5, 0.05, "after it");
    assert_eq!(
        read.wait_from_frame,
        o.the(ClientThinkTime).waits[0].from_frame
    );
    assert_eq!(late(&flight_read(Some(5.0))), None);
    assert_eq!(late(&flight_read(None)), None);
}

/// A client whose resumed handshake (TLS 1.3 with a PSK accepted) it
/// answered late is marked resumed: it verified no certificate, and the
/// words put its time elsewhere (nDPI's safari.pcap 1). A full
/// handshake's is not.
#[test]
fn a_slow_client_turn_of_a_resumed_handshake_is_marked_resumed() {
    for (offer, resumed) in [
        (
            Offer {
                psk: true,
                ..Offer::tls13()
            },
            true,
        ),
        (Offer::tls13(), false),
    ] {
        let mut w = Wire::new(Path::at_client(RTT));
        w.handshake(0.0);
        let hs = tls13_handshake_with(&mut w, RTT + 0.1, 0.2, 60.0, offer);
        let last = *hs.flight.last().unwrap();
        w.ack(C, w.arrival(last));
        let o = w.run();
        let Detail::ClientThinkTime { resumed: said, .. } = o.the(ClientThinkTime).detail else {
            panic!("client_think_time without its detail");
        };
        assert_eq!(said, resumed);
    }
}
