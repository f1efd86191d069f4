//! The ledger's ideals (ledger.rs): what a phase of an exchange would take
//! with nothing wrong.
//!
//! > A request the server answered only once all of it was in (an
//! > upload: a PUT, a form's POST) takes its own slow-start rounds to get
//! > there before the answer's round trip.

use super::*;
use crate::model::{LedgerRow, Phase};

const RTT: f64 = 40.0;
const KERNEL: f64 = 0.05;

/// A request of `segments` full segments, sent in slow-start rounds from
/// IW10 (each round when the server's ACK of the last arrives), and a
/// one-segment answer `KERNEL` ms after `answer_after` of them arrived.
fn upload(path: Path, segments: usize, answer_after: usize) -> Wire {
    let mut w = Wire::new(path);
    w.handshake(0.0);
    let (mut t, mut cwnd, mut sent) = (40.1, 10usize, Vec::new());
    while sent.len() < segments {
        let n = cwnd.min(segments - sent.len());
        let round = w.burst(C, t, n, 0.01);
        sent.extend(round.iter().copied());
        let ack = w.ack(S, w.arrival(*round.last().unwrap()));
        t = w.arrival(ack) + KERNEL;
        cwnd *= 2;
    }
    w.data(S, w.arrival(sent[answer_after - 1]) + KERNEL, 300);
    w
}

fn first_byte(o: &Outcome) -> &LedgerRow {
    o.report
        .ledger
        .iter()
        .find(|r| r.phase == Phase::FirstByte)
        .expect("a first-byte row")
}

#[test]
fn an_upload_answered_once_complete_has_its_slow_start_rounds_in_the_ideal() {
    for path in Path::all(RTT) {
        // 40 segments: 10, 20 and 10 in three rounds, then the answer.
        let o = upload(path, 40, 40).run();
        let row = first_byte(&o);
        assert_eq!(row.ideal_rtts, Some(3.0), "{row:?}");
        assert!(row.ideal_basis.contains("request of"), "{row:?}");
        // It took what the ideal says: nothing beyond it.
        assert!(row.excess_rtts.unwrap() < 0.1, "{row:?}");
    }
}

#[test]
fn an_answer_begun_before_the_request_ended_keeps_one_round_trip() {
    // An early answer (a 413, a 100 Continue's refusal) after the first
    // segment: the rest of the upload is not what it waited for.
    let o = upload(Path::at_client(RTT), 40, 1).run();
    let row = first_byte(&o);
    assert_eq!(row.ideal_rtts, Some(1.0), "{row:?}");
}

#[test]
fn a_request_in_one_segment_keeps_one_round_trip() {
    let o = upload(Path::at_client(RTT), 1, 1).run();
    assert_eq!(first_byte(&o).ideal_rtts, Some(1.0));
}

#[test]
fn without_the_syn_ack_the_syn_to_its_ack_outranks_one_sides_samples() {
    // Captured at the server, which missed its own SYN-ACK: the client
    // uploads, the server only ACKs. Its ACKs time the server's own
    // turnaround (the near side of the capture point), the client's
    // nothing; the SYN to the handshake's ACK is one whole round trip.
    let mut w = Wire::new(Path::at_server(RTT));
    let [_, syn_ack, _] = w.handshake(0.0);
    for t in [40.1, 140.0] {
        let d = w.data(C, t, 500);
        w.ack(S, w.arrival(d) + KERNEL);
    }
    let o = w.run_missing(&[syn_ack]);
    let rtt = o.report.rtt_ms.expect("an RTT");
    assert!(
        (rtt - RTT).abs() < 1.0,
        "RTT {rtt} ms, not the server's turnaround"
    );
}

/// A GET answered in two parts (a 200-byte head at once, a 300-byte event
/// `pause` ms after the head left); the client ACKs the head `ack_after`
/// ms after it arrives (40: its delayed-ACK timer), and the event when it
/// comes.
fn streamed(path: Path, pause: f64, ack_after: f64) -> Outcome {
    let mut w = Wire::new(path);
    w.handshake(0.0);
    let req = w.send(C, 50.0, b"GET /events HTTP/1.1\r\nHost: x\r\n\r\n");
    let head = w.data(S, w.arrival(req) + KERNEL, 200);
    w.ack(C, w.arrival(head) + ack_after);
    let event = w.data(S, w.sent(head) + pause, 300);
    w.ack(C, w.arrival(event));
    w.run()
}

fn transfer(o: &Outcome) -> &LedgerRow {
    o.report
        .ledger
        .iter()
        .find(|r| r.phase == Phase::Transfer)
        .expect("a transfer row")
}

#[test]
fn a_pause_with_everything_acknowledged_is_the_servers_not_the_transfers_excess() {
    // The head was acknowledged 40 ms after it came; the event left a
    // second after the head: the server had nothing to send for the rest
    // of that second (nothing in flight holds a sender).
    for path in Path::all(RTT) {
        let o = streamed(path, 1000.0, 40.0);
        let row = transfer(&o);
        assert!((row.duration_ms - 1000.0).abs() < 1.0, "{row:?}");
        assert_eq!(row.excess_ms, Some(0.0), "{row:?}");
        assert!(
            row.ideal_basis.contains("nothing to send (1 pause(s)"),
            "{row:?}"
        );
        // All of the second: the event, not ready when the ACK came, was
        // not ready before it either.
        let paused = row.ideal_rtts.unwrap() * RTT;
        assert!((paused - 1000.0).abs() < 1.0, "{paused} ms");
    }
}

#[test]
fn a_segment_that_left_when_the_ack_came_was_held_not_paused() {
    // The event left the moment the head's delayed ACK came (Nagle held
    // it behind the head): the wait was the hold's, and stays excess.
    for path in Path::all(RTT) {
        let o = streamed(path, RTT + 40.0 + KERNEL, 40.0);
        let row = transfer(&o);
        assert!(!row.ideal_basis.contains("nothing to send"), "{row:?}");
        assert!(row.excess_ms.unwrap() > 70.0, "{row:?}");
    }
}

#[test]
fn a_small_piece_sent_behind_another_left_as_written_and_its_pause_is_the_servers() {
    // The event left 30 ms after the head, before the head's ACK could be
    // back: a small segment sent while another was unacknowledged, which
    // Nagle never does, and 200 bytes in flight hold no congestion or
    // receive window. Nothing held the event: the server wrote it then.
    for path in Path::all(RTT) {
        let o = streamed(path, 30.0, 0.0);
        let row = transfer(&o);
        assert!(
            row.ideal_basis.contains("nothing to send (1 pause(s)"),
            "{row:?}"
        );
        assert_eq!(row.excess_ms, Some(0.0), "{row:?}");
    }
}

#[test]
fn a_larger_pieces_gap_may_be_a_slow_links_and_stays_the_transfers() {
    // The same, but the second piece is 1000 bytes: on a 1.6 Mbit/s link
    // its own 5 ms on the wire spaces its arrival from the head's, however
    // the server sent it, so the gap is no proof of the server's pace
    // away from the server (at the server there is no link between).
    for path in [Path::at_client(RTT), Path::mid(RTT, 0.5)] {
        let mut w = Wire::new(path);
        w.handshake(0.0);
        let req = w.send(C, 50.0, b"GET /events HTTP/1.1\r\nHost: x\r\n\r\n");
        let head = w.data(S, w.arrival(req) + KERNEL, 200);
        w.data(S, w.sent(head) + 5.0, 300);
        let body = w.data(S, w.sent(head) + 10.0, 1000);
        w.ack(C, w.arrival(body));
        let o = w.run();
        let row = transfer(&o);
        // The 300-byte piece's 5 ms are the server's; the body's are not.
        assert!(
            row.ideal_basis.contains("nothing to send (1 pause(s)"),
            "{row:?}"
        );
        assert!((row.excess_ms.unwrap() - 5.0).abs() < 0.5, "{row:?}");
    }
}

#[test]
fn a_piece_behind_a_bulk_flight_may_have_waited_for_the_window() {
    // The same event behind a 9-segment head: with that much in flight a
    // congestion window may have held it, whenever the ACKs came, and
    // its wait stays the transfer's.
    for path in Path::all(RTT) {
        let mut w = Wire::new(path);
        w.handshake(0.0);
        let req = w.send(C, 50.0, b"GET /events HTTP/1.1\r\nHost: x\r\n\r\n");
        let head = w.burst(S, w.arrival(req) + KERNEL, 9, 0.01);
        w.data(S, w.arrival(req) + KERNEL + 0.2, 200);
        let event = w.data(S, w.sent(head[0]) + 30.0, 300);
        w.ack(C, w.arrival(event));
        let o = w.run();
        let row = transfer(&o);
        assert!(!row.ideal_basis.contains("nothing to send"), "{row:?}");
        assert!(row.excess_ms.unwrap() > 25.0, "{row:?}");
    }
}

#[test]
fn a_stream_on_its_writers_timer_is_no_transfer_excess() {
    // Server-sent events every 80 ms (two round trips), Nagle on: each
    // piece left with everything acknowledged, 40 ms after the ACK came,
    // too soon for the ledger to rule out a queue had it been one piece.
    // Twenty on one beat, leaving at no ACK's arrival, are the writer's.
    for path in Path::all(RTT) {
        let mut w = Wire::new(path);
        w.handshake(0.0);
        let req = w.send(C, 50.0, b"GET /events HTTP/1.1\r\nHost: x\r\n\r\n");
        let head = w.data(S, w.arrival(req) + 300.0, 150);
        w.ack(C, w.arrival(head));
        for k in 1..=20 {
            let piece = w.data(S, w.sent(head) + 80.0 * k as f64, 32);
            w.ack(C, w.arrival(piece));
        }
        let o = w.run();
        let row = transfer(&o);
        assert!(
            row.ideal_basis.contains("nothing to send (20 pause(s)"),
            "{row:?}"
        );
        assert_eq!(row.excess_ms, Some(0.0), "{row:?}");
        // The head was the answer: the 300 ms before it is the server's
        // work, not a tick of its timer.
        let think = o.the(FindingKind::ServerThinkTime);
        assert!((think.cost_ms - 300.0).abs() < 2.0, "{think:?}");
    }
}

#[test]
fn a_shorter_pause_may_be_a_queue_and_stays_the_transfers() {
    // 300 ms with everything acknowledged: away from the server a queue
    // on the path can add that to a round trip (a page load's parallel
    // downloads), delaying the ACK that released the event, so the ledger
    // does not call it the server's.
    for path in [Path::at_client(RTT), Path::mid(RTT, 0.5)] {
        let o = streamed(path, 300.0, 40.0);
        let row = transfer(&o);
        assert!(!row.ideal_basis.contains("nothing to send"), "{row:?}");
        assert!(row.excess_ms.unwrap() > 250.0, "{row:?}");
    }
}

#[test]
fn at_the_server_a_pause_no_ack_ended_is_its_own() {
    // The same, captured at the server: the head's ACK is seen arriving,
    // and the event left 220 ms after it, with nothing else from the
    // client: no packet released it, the server wrote it then.
    let o = streamed(Path::at_server(RTT), 300.0, 40.0);
    let row = transfer(&o);
    assert!(
        row.ideal_basis
            .contains("the server had nothing to send (1 pause(s)"),
        "{row:?}"
    );
    assert_eq!(row.excess_ms, Some(0.0), "{row:?}");
}

#[test]
fn at_the_server_a_segment_that_left_as_the_ack_came_was_held() {
    // Captured at the server, the event leaving the moment the head's
    // ACK arrives (Nagle behind the client's delayed ACK): held, not the
    // server's pause.
    let o = streamed(Path::at_server(RTT), RTT + 40.0 + KERNEL, 40.0);
    let row = transfer(&o);
    assert!(!row.ideal_basis.contains("nothing to send"), "{row:?}");
    assert!(row.excess_ms.unwrap() > 70.0, "{row:?}");
}

/// A PUT whose chunked body the client reads from a pipe: its head, then
/// `pieces` pieces of 40 bytes `gap` ms apart (each the client's write,
/// the server ACKing on arrival), answered 1 ms after the last arrives.
fn trickled_upload(path: Path, pieces: usize, gap: f64) -> Outcome {
    let mut w = Wire::new(path);
    w.handshake(0.0);
    let head = w.send(
        C,
        50.0,
        b"PUT /up HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n",
    );
    w.ack(S, w.arrival(head) + KERNEL);
    let mut last = head;
    for k in 1..=pieces {
        last = w.data(C, w.sent(head) + gap * k as f64, 40);
        w.ack(S, w.arrival(last) + KERNEL);
    }
    w.data(S, w.arrival(last) + 1.0, 100);
    w.run()
}

#[test]
fn a_clients_data_that_came_after_the_answer_left_is_not_what_it_waited_for() {
    // Opaque turns (records inside TLS, lumped into one request until the
    // server speaks): a question, a second one 250 ms later answered 60 ms
    // after it arrives, and a third piece sent 5 ms before that answer
    // reached the client, long after it left the server. The second's
    // 250 ms are the client's; the third's pause is no part of what the
    // answer waited for, and the 60 ms stay excess. (Captured at the
    // client, whose departures are exact; elsewhere a 250 ms pause with
    // everything acknowledged might be a queue's.)
    {
        let mut w = Wire::new(Path::at_client(RTT));
        w.handshake(0.0);
        let first = w.data(C, 50.0, 300);
        w.ack(S, w.arrival(first) + KERNEL);
        let second = w.data(C, w.sent(first) + 250.0, 300);
        w.ack(S, w.arrival(second) + KERNEL);
        let answer_leaves = w.arrival(second) + 60.0;
        w.data(C, answer_leaves + RTT / 2.0 - 5.0, 45);
        w.data(S, answer_leaves, 200);
        let o = w.run();
        let row = first_byte(&o);
        assert!(
            row.ideal_basis
                .contains("the client had nothing to send (1 pause(s)"),
            "{row:?}"
        );
        assert!((row.excess_ms.unwrap() - 60.0).abs() < 2.0, "{row:?}");
    }
}

#[test]
fn an_upload_the_client_wrote_as_it_had_it_is_no_latency_excess() {
    // Twenty pieces 30 ms apart: the client's pace (its pipe), not the
    // path's and not the server's. Captured at the client each left with
    // no ACK arriving; elsewhere each is a small piece from a client shown
    // to run without Nagle (the first sent while the head was
    // unacknowledged) with little in flight.
    for path in Path::all(RTT) {
        let o = trickled_upload(path, 20, 30.0);
        let row = first_byte(&o);
        assert!(
            row.ideal_basis.contains("the client had nothing to send"),
            "{row:?}"
        );
        assert!(row.excess_ms.unwrap() < 2.0, "{row:?}");
        // The connection's excess is its rows' again.
        assert!(o.report.excess_ms < 2.0, "{}", o.report.excess_ms);
    }
}

/// A TLS 1.3 ClientHello at 50 ms; the server's answer as `answer` makes
/// it; the client's FIN 5 s later, without a Finished.
fn handshake_given_up(answer: impl FnOnce(&mut Wire, Id)) -> Outcome {
    use super::tls::*;
    let mut w = Wire::new(Path::at_client(RTT));
    w.handshake(0.0);
    let ch = w.send(C, 50.0, leak(client_hello(Offer::tls13())));
    answer(&mut w, ch);
    w.fin(C, 5050.0);
    w.run()
}

fn tls_rows(o: &Outcome) -> Vec<&LedgerRow> {
    o.report
        .ledger
        .iter()
        .filter(|r| r.phase == Phase::TlsHandshake)
        .collect()
}

#[test]
fn a_handshake_stalled_with_the_servers_answer_half_there_is_a_row_to_the_clients_giving_up() {
    use super::tls::*;
    let o = handshake_given_up(|w, ch| {
        let flight = segments(&tls13_server_flight(2000, false));
        let go = w.arrival(ch) + 1.0;
        let first = w.send(S, go, flight[0]);
        w.lose(first);
        for s in &flight[1..] {
            w.send(S, go + 0.01, s);
        }
    });
    let rows = tls_rows(&o);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].label, "TLS handshake (never completed)");
    assert_ms(
        rows[0].duration_ms,
        5000.0,
        1e-3,
        "ClientHello -> the client's FIN",
    );
    assert!(
        rows[0].excess_ms.is_some_and(|e| e > 4900.0),
        "{:?}",
        rows[0]
    );
    // A handshake that never completed has no duration of its own.
    let tls = o.report.tls.as_ref().unwrap();
    assert_eq!(tls.handshake_ms, None);
}

#[test]
fn a_handshake_the_server_never_answered_or_the_client_refused_is_no_row() {
    use super::tls::*;
    // Only the server's ACK: no answer began (as a request never
    // answered is no turn).
    let o = handshake_given_up(|w, ch| {
        w.ack(S, w.arrival(ch));
    });
    assert!(tls_rows(&o).is_empty(), "{:?}", tls_rows(&o));
    // The whole flight arrived and was acknowledged: the client closed on
    // its own account (a certificate it refused), not waiting.
    let o = handshake_given_up(|w, ch| {
        let go = w.arrival(ch) + 1.0;
        let mut last = None;
        for s in segments(&tls13_server_flight(2000, false)) {
            last = Some(w.send(S, go, s));
        }
        w.ack(C, w.arrival(last.unwrap()));
    });
    assert!(tls_rows(&o).is_empty(), "{:?}", tls_rows(&o));
}

/// A handshake `syn_ack_late` ms slower than the path (a server slow to
/// answer the SYN, a link waking for the first packet), then three small
/// requests the server ACKs the moment they arrive and answers
/// `KERNEL` ms later; the client ACKs each answer `client_ack_after` ms
/// after it comes (200: Windows' delayed-ACK timer).
fn slow_syn_ack(path: Path, syn_ack_late: f64, client_ack_after: f64) -> Outcome {
    let mut w = Wire::new(path);
    let d = path.one_way_ms();
    let syn = w.syn(0.0);
    let syn_ack = w.syn_ack(w.arrival(syn) + syn_ack_late);
    w.ack(C, w.arrival(syn_ack));
    let mut t = 2.0 * d + syn_ack_late + 10.0;
    for _ in 0..3 {
        let req = w.data(C, t, 100);
        w.ack(S, w.arrival(req));
        let answer = w.data(S, w.arrival(req) + KERNEL, 300);
        w.ack(C, w.arrival(answer) + client_ack_after);
        t = w.arrival(answer) + client_ack_after + 500.0;
    }
    w.run()
}

#[test]
fn a_clients_delayed_acks_are_not_taken_for_the_far_side_of_the_path() {
    // Captured at the client: its ACK of the SYN-ACK places it at the
    // capture point, so its 200 ms ACKs of the answers are its own timer,
    // not the path. The server's ACKs time the path (40 ms) under the
    // handshake's 50: the round trip is theirs, not the client's 200 ms.
    let o = slow_syn_ack(Path::at_client(RTT), 10.0, 200.0);
    let rtt = o.report.rtt_ms.expect("an RTT");
    assert!((rtt - RTT).abs() < 0.5, "RTT {rtt} ms, not the path's");
}

#[test]
fn a_handshake_more_than_twice_the_paths_round_trip_stays_the_round_trip() {
    // The same with a SYN-ACK 80 ms late: samples under half the
    // handshake may be another host's answers (a proxy's local ACKs), so
    // the handshake stands; and neither is the client's ACK timer taken.
    let o = slow_syn_ack(Path::at_client(RTT), 80.0, 200.0);
    let rtt = o.report.rtt_ms.expect("an RTT");
    assert!(
        (rtt - (RTT + 80.0)).abs() < 0.5,
        "RTT {rtt} ms: the handshake's"
    );
}

#[test]
fn a_tap_between_the_hosts_times_both_sides_of_the_path() {
    // Halfway: each side's fastest answer is its half of the path, and
    // the round trip is their sum, whichever side delays its ACKs.
    let o = slow_syn_ack(Path::mid(RTT, 0.5), 10.0, 200.0);
    let rtt = o.report.rtt_ms.expect("an RTT");
    assert!((rtt - RTT).abs() < 0.5, "RTT {rtt} ms");
}
