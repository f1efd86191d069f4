//! `initcwnd_limited` (detect/initcwnd.rs).
//!
//! > the server's first flight was larger than its initial congestion
//! > window (10 x MSS, about 14.5 KB: RFC 6928) and paused for ACKs
//! >
//! > Signature, on the server's clock, within its TLS handshake flight: a
//! > silence of at least max(2 ms, RTT/4) between two new data segments,
//! > ended by the client's ACK (`Facts::released_by`), with at least 8 MSS
//! > sent and unacknowledged before that ACK (the window was full, not
//! > Nagle), or fewer, the silence inside one handshake message and the
//! > segment after it a full one (and, once such a silence showed the
//! > window small, the flight's later silences inside a message); in TLS
//! > 1.2, up to the ServerHelloDone (what follows waits for the client's
//! > key exchange). Cost: the silence.

use super::tls::*;
use super::*;
use crate::model::Phase;
use FindingKind::InitcwndLimited;

const RTT: f64 = 40.0;
const KERNEL: f64 = 0.05;
const EXACT: f64 = 1e-3;
/// A certificate chain of about 16 KB: the flight is 12 segments.
const BIG_CHAIN: usize = 16_000;

struct Flight {
    w: Wire,
    segs: Vec<Id>,
    ack: Id,
}

/// A TLS 1.3 handshake whose server flight (12 segments) goes out as
/// `first` segments `gap` ms apart, then the rest `resume` ms after the
/// client's ACK of the first part arrives. The client ACKs once after the
/// part it got (its receive offload merged the burst), or each segment
/// when `ack_each`.
fn flight(path: Path, first: usize, gap: f64, resume: f64, ack_each: bool) -> Flight {
    let mut w = Wire::new(path);
    w.handshake(0.0);
    let ch = w.send(C, 40.1, leak(client_hello(Offer::tls13())));
    let parts = segments(&tls13_server_flight(BIG_CHAIN, false));
    assert_eq!(parts.len(), 12);
    let go = w.arrival(ch) + 0.1;
    let mut segs: Vec<Id> = parts[..first]
        .iter()
        .enumerate()
        .map(|(i, s)| w.send(S, go + i as f64 * gap, s))
        .collect();
    let ack = if ack_each {
        let acks: Vec<Id> = segs.iter().map(|s| w.ack(C, w.arrival(*s))).collect();
        acks[0]
    } else {
        w.ack(C, w.arrival(*segs.last().unwrap()))
    };
    let back = w.arrival(ack) + resume;
    for (i, s) in parts[first..].iter().enumerate() {
        segs.push(w.send(S, back + i as f64 * 0.01, s));
    }
    let last = *segs.last().unwrap();
    w.send(C, w.arrival(last), leak(encrypted(FINISHED_LEN)));
    Flight { w, segs, ack }
}

#[test]
fn a_handshake_flight_that_waits_for_an_ack_after_a_full_initial_window_is_initcwnd_limited() {
    for path in Path::all(RTT) {
        let Flight { w, segs, ack } = flight(path, 10, 0.01, KERNEL, false);
        let o = w.run();
        let f = o.the(InitcwndLimited);
        assert_eq!(f.phase, Some(Phase::TlsHandshake));
        assert_eq!(f.frames, o.frames(&[segs[10], ack]));
        // From the 10th segment to the 11th on the server's clock: the
        // ACK's round trip from the 10th, plus the kernel's turnaround.
        assert_ms(f.cost_ms, RTT + KERNEL, EXACT, "the pause");
    }
}

#[test]
fn an_initcwnd_pause_is_a_wait_from_the_last_segment_of_the_window_released_by_the_ack() {
    let Flight { w, segs, ack } = flight(Path::at_client(RTT), 10, 0.01, KERNEL, false);
    let o = w.run();
    let f = o.the(InitcwndLimited);
    assert_waits(
        &f.waits,
        &[o.wait(segs[9], segs[10], Some(ack), RTT + KERNEL)],
        EXACT,
    );
    assert_cost_is_its_waits(f);
}

#[test]
fn a_flight_sent_without_a_pause_is_not_initcwnd_limited() {
    // A larger initial window (initcwnd 20): all 12 segments at once.
    let Flight { w, .. } = flight(Path::at_client(RTT), 12, 0.01, 0.0, false);
    w.run().has_no(InitcwndLimited);
}

#[test]
fn a_window_of_a_few_segments_pausing_inside_a_message_is_initcwnd_limited() {
    // 5 full segments of the certificate, then the rest on the ACK: the
    // server had the message whole (a TLS library writes it so) and Nagle
    // never holds a full segment: a window of 5 held it (RFC 3390's
    // 4 KB, an appliance's; nDPI's anyconnect-vpn.pcap, a VPN gateway
    // starting with 1).
    let Flight { w, segs, ack } = flight(Path::at_client(RTT), 5, 0.01, KERNEL, false);
    let o = w.run();
    let f = o.the(InitcwndLimited);
    assert_eq!(f.frames, o.frames(&[segs[5], ack]));
    assert_ms(f.cost_ms, RTT + KERNEL, EXACT, "the pause");
    match &f.detail {
        crate::model::Detail::Initcwnd {
            window_bytes, mss, ..
        } => {
            assert_eq!(window_bytes.div_ceil(*mss), 5, "{window_bytes} in flight")
        }
        other => panic!("{other:?}"),
    }
}

/// A TLS 1.2 server flight: a ServerHello in a segment of its own, then a
/// certificate of `chain` bytes and the ServerHelloDone in one record, its
/// first `first` segments at once and the rest on the client's ACK.
fn hello_apart(chain: usize, first: usize) -> (Outcome, usize) {
    let mut w = Wire::new(Path::at_client(RTT));
    w.handshake(0.0);
    let ch = w.send(C, 40.1, leak(client_hello(Offer::tls12())));
    let hello = w.send(
        S,
        w.arrival(ch) + 0.1,
        leak(handshake_record(&[server_hello(
            false, [0x33; 32], 0, false,
        )])),
    );
    let rest = handshake_record(&[message(11, &vec![0; chain]), message(14, &[])]);
    let parts = segments(&rest);
    let mut last_id = hello;
    for p in &parts[..first] {
        last_id = w.send(S, w.sent(last_id) + 0.01, p);
    }
    let ack = w.ack(C, w.arrival(last_id));
    let mut end = None;
    for (i, p) in parts[first..].iter().enumerate() {
        end = Some(w.send(S, w.arrival(ack) + KERNEL + i as f64 * 0.01, p));
    }
    let mut cke = handshake_record(&[message(16, &[0x44; 66])]);
    cke.extend(change_cipher_spec());
    cke.extend(record(22, &[0x5a; 40]));
    let c = w.send(C, w.arrival(end.unwrap()), leak(cke));
    let mut fin = change_cipher_spec();
    fin.extend(record(22, &[0x5a; 40]));
    w.send(S, w.arrival(c) + KERNEL, leak(fin));
    (w.run(), parts.len())
}

#[test]
fn a_few_segments_then_the_next_message_on_the_ack_is_not_the_window() {
    // The ServerHello alone, the certificate after the ACK: between two
    // messages the server may have been writing the next (a slow
    // signature, an OCSP fetch), whatever the ACK's timing.
    let (o, _) = hello_apart(4_000, 0);
    o.has_no(InitcwndLimited);
}

#[test]
fn a_short_tail_after_a_few_segments_is_not_taken_for_the_window() {
    // Two full segments of the certificate, then its short tail on the
    // ACK: a classic Nagle (any data unacknowledged) holds a short
    // segment too; with no full one held before, the window is not shown.
    let (o, parts) = hello_apart(3_000, 2);
    assert_eq!(parts, 3);
    o.has_no(InitcwndLimited);
    // A full segment after the pause is.
    let (o, parts) = hello_apart(5_000, 2);
    assert!(parts > 3);
    o.the(InitcwndLimited);
}

#[test]
fn a_flight_resuming_well_after_the_ack_was_not_released_by_it() {
    // The window was full, but the server went on 10 ms after the ACK
    // arrived (busy): the ACK did not end the pause.
    for path in Path::all(RTT) {
        let Flight { w, .. } = flight(path, 10, 0.01, 10.0, false);
        w.run().has_no(InitcwndLimited);
    }
}

#[test]
fn a_window_paced_over_most_of_a_round_trip_resuming_on_the_first_ack_is_not_a_stall() {
    // A slow link spreads the 10 segments 3.5 ms apart; the first ACK
    // comes back 8.5 ms after the 10th left: under RTT/4, ACK-clocked.
    let Flight { w, .. } = flight(Path::at_client(RTT), 10, 3.5, KERNEL, true);
    w.run().has_no(InitcwndLimited);
}

#[test]
fn a_plain_download_pausing_after_its_initial_window_is_not_initcwnd_limited() {
    // The same shape outside a TLS handshake: a transfer's slow start is
    // in the ledger's ideal, not a finding.
    let mut w = Wire::new(Path::at_client(RTT));
    w.handshake(0.0);
    let req = w.send(C, 40.1, b"GET /big HTTP/1.1\r\n\r\n");
    let go = w.arrival(req) + 0.1;
    let first = w.burst(S, go, 10, 0.01);
    let ack = w.ack(C, w.arrival(first[9]));
    let rest = w.burst(S, w.arrival(ack) + KERNEL, 2, 0.01);
    w.ack(C, w.arrival(rest[1]));
    w.run().has_no(InitcwndLimited);
}

/// A full TLS 1.2 handshake whose server flight (ServerHello, a 16 KB
/// Certificate, ServerHelloDone: 11 segments) goes out as `first`
/// segments, then the rest on the client's ACK; the client answers the
/// flight with its key exchange, ChangeCipherSpec and Finished, and the
/// server with its own the moment that arrives.
fn tls12_flight(first: usize) -> (Wire, Vec<Id>, Id) {
    let mut w = Wire::new(Path::at_client(RTT));
    w.handshake(0.0);
    let ch = w.send(C, 40.1, leak(client_hello(Offer::tls12())));
    let flight = handshake_record(&[
        server_hello(false, [0x33; 32], 0, false),
        message(11, &[0; BIG_CHAIN]),
        message(14, &[]),
    ]);
    let parts = segments(&flight);
    assert_eq!(parts.len(), 11);
    let go = w.arrival(ch) + 0.1;
    let mut segs: Vec<Id> = parts[..first]
        .iter()
        .enumerate()
        .map(|(i, s)| w.send(S, go + i as f64 * 0.01, s))
        .collect();
    let ack = w.ack(C, w.arrival(*segs.last().unwrap()));
    for (i, s) in parts[first..].iter().enumerate() {
        segs.push(w.send(S, w.arrival(ack) + KERNEL + i as f64 * 0.01, s));
    }
    let mut cke = handshake_record(&[message(16, &[0x44; 66])]);
    cke.extend(change_cipher_spec());
    cke.extend(record(22, &[0x5a; 40]));
    let c = w.send(C, w.arrival(*segs.last().unwrap()), leak(cke));
    let mut fin = change_cipher_spec();
    fin.extend(record(22, &[0x5a; 40]));
    w.send(S, w.arrival(c) + KERNEL, leak(fin));
    (w, segs, ack)
}

#[test]
fn a_tls12_flight_pausing_for_an_ack_before_its_server_hello_done_is_initcwnd_limited() {
    let (w, segs, ack) = tls12_flight(10);
    let o = w.run();
    let f = o.the(InitcwndLimited);
    assert_eq!(f.frames, o.frames(&[segs[10], ack]));
    assert_ms(f.cost_ms, RTT + KERNEL, EXACT, "the pause");
}

#[test]
fn the_wait_for_the_clients_key_exchange_after_the_server_hello_done_is_not_the_window() {
    // The whole flight at once; the server's Finished then waits a round
    // trip for the client's key exchange with 11 segments unacknowledged:
    // the protocol's round trip, not the congestion window's.
    let (w, ..) = tls12_flight(11);
    w.run().has_no(InitcwndLimited);
}

#[test]
fn a_window_released_by_the_ack_of_its_first_segment_is_initcwnd_limited_at_any_vantage() {
    // The link paces the window 0.2 ms a segment; the client ACKs the
    // first at once (quick ACK) and the rest when the last arrives. The
    // first ACK reaches the server after it sent the whole window and
    // releases the 11th segment while the kernel processes it. At the
    // client that ACK is captured before the window's last segment
    // arrives, yet on the server's clock it came after the wait began.
    let turnaround = 0.005;
    for path in Path::all(RTT) {
        let mut w = Wire::new(path);
        w.handshake(0.0);
        let ch = w.send(C, 40.1, leak(client_hello(Offer::tls13())));
        let parts = segments(&tls13_server_flight(BIG_CHAIN, false));
        let go = w.arrival(ch) + 0.1;
        let mut segs: Vec<Id> = parts[..10]
            .iter()
            .enumerate()
            .map(|(i, s)| w.send(S, go + i as f64 * 0.2, s))
            .collect();
        let first_ack = w.ack(C, w.arrival(segs[0]));
        w.ack(C, w.arrival(segs[9]));
        let back = w.arrival(first_ack) + turnaround;
        for (i, s) in parts[10..].iter().enumerate() {
            segs.push(w.send(S, back + i as f64 * 0.01, s));
        }
        let last = *segs.last().unwrap();
        w.send(C, w.arrival(last), leak(encrypted(FINISHED_LEN)));
        let o = w.run();
        let f = o.the(InitcwndLimited);
        assert_eq!(f.frames, o.frames(&[segs[10], first_ack]));
        let silence = RTT + turnaround - 9.0 * 0.2;
        assert_waits(
            &f.waits,
            &[o.wait(segs[9], segs[10], Some(first_ack), silence)],
            EXACT,
        );
        assert_cost_is_its_waits(f);
    }
}

/// A full TLS 1.2 handshake whose server asks for a certificate (its
/// flight one segment); the client sends its 4 KB certificate as 3
/// segments, and its key exchange, CertificateVerify, ChangeCipherSpec
/// and Finished the moment the server's ACK of the first `acked` of them
/// arrives.
fn client_certificate_flight(path: Path, acked: usize) -> (Outcome, Vec<Id>, Id, Id) {
    let mut w = Wire::new(path);
    w.handshake(0.0);
    let ch = w.send(C, 40.1, leak(client_hello(Offer::tls12())));
    let flight = handshake_record(&[
        server_hello(false, [0x33; 32], 0, false),
        message(11, &[0; 900]),
        message(13, &[1, 1, 0, 0]),
        message(14, &[]),
    ]);
    let asked = w.send(S, w.arrival(ch) + 0.1, leak(flight));
    let parts = segments(&handshake_record(&[message(11, &[0x21; 4000])]));
    assert_eq!(parts.len(), 3);
    let go = w.arrival(asked) + 1.0;
    let certs: Vec<Id> = parts
        .iter()
        .enumerate()
        .map(|(i, s)| w.send(C, go + i as f64 * 0.01, s))
        .collect();
    let ack = w.ack(S, w.arrival(certs[acked - 1]));
    let mut rest = handshake_record(&[message(16, &[0x44; 66]), message(15, &[0x55; 72])]);
    rest.extend(change_cipher_spec());
    rest.extend(record(22, &[0x5a; 40]));
    let key_exchange = w.send(C, w.arrival(ack) + KERNEL, leak(rest));
    let mut fin = change_cipher_spec();
    fin.extend(record(22, &[0x5a; 40]));
    w.send(S, w.arrival(key_exchange) + KERNEL, leak(fin));
    (w.run(), certs, ack, key_exchange)
}

/// The client's flight, captured on the client: its key exchange left
/// the moment the server's ACK of two of its three certificate segments
/// came, the third still unacknowledged. Nagle waits for all of it and
/// the application does not wait for ACKs: only a window that ACK opened
/// let it go (nDPI's anyconnect-vpn.pcap 6, 38 ms). Not when the ACK
/// covered all three (Nagle's release as much as a window's), nor seen
/// from the server's side, where the release is a round trip's estimate
/// away.
#[test]
fn a_client_flight_released_by_an_ack_that_left_data_unacknowledged_is_its_window() {
    let (o, certs, ack, key_exchange) = client_certificate_flight(Path::at_client(RTT), 2);
    let x = o.the(InitcwndLimited);
    assert_eq!(x.phase, Some(Phase::TlsHandshake));
    assert_eq!(x.frames, o.frames(&[key_exchange, ack]));
    assert_ms(
        x.cost_ms,
        RTT + KERNEL - 0.01,
        EXACT,
        "from the third segment",
    );
    assert_eq!(x.waits[0].from_frame, o.frame(certs[2]));
    let crate::model::Detail::Initcwnd { sender, .. } = x.detail else {
        panic!("{:?}", x.detail);
    };
    assert_eq!(sender, C);

    let (all_acked, ..) = client_certificate_flight(Path::at_client(RTT), 3);
    all_acked.has_no(InitcwndLimited);
    let (at_server, ..) = client_certificate_flight(Path::at_server(RTT), 2);
    at_server.has_no(InitcwndLimited);
}
