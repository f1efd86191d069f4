//! `reordering` (detect/reordering.rs).
//!
//! > Signature: a segment that fills a hole below the highest byte seen
//! > and, by its sender's clocks, left before the segment that jumped the
//! > hole: the original, held on the path while the segments sent after
//! > it passed. [...] A phase of the ledger that ended on an overtaken
//! > segment (an answer's first byte, the end of a response) waited for
//! > it. Had it not been held, it would have arrived no later than the
//! > segment that jumped its hole.

use super::*;
use crate::model::Phase;
use FindingKind::{Reordering, Retransmission};

const RTT: f64 = 40.0;
const EXACT: f64 = 1e-3;

/// The vantages past the hold (at the server the capture would show the
/// segments in the order they left).
fn past_the_hold() -> [Path; 2] {
    [Path::at_client(RTT), Path::mid(RTT, 0.5)]
}

/// A request answered by three full segments 0.01 ms apart, the first
/// (the answer's first byte) `hold` ms late on the path; the client ACKs
/// once all three are in.
fn answer_with_first_held(w: &mut Wire, hold: f64) -> [Id; 3] {
    w.handshake(0.0);
    let req = w.send(C, 50.0, b"GET / HTTP/1.1\r\n\r\n");
    let segs = w.burst(S, w.arrival(req) + 1.0, 3, 0.01);
    w.delay(segs[0], hold);
    w.ack(C, w.arrival(segs[0]).max(w.arrival(segs[2])));
    [segs[0], segs[1], segs[2]]
}

#[test]
fn an_answer_whose_first_segment_the_path_held_waited_for_it() {
    for path in past_the_hold() {
        let mut w = Wire::new(path);
        let segs = answer_with_first_held(&mut w, 30.0);
        w.count_datagrams(S, 1000);
        let o = w.run();
        let f = o.the(Reordering);
        assert_eq!(f.phase, Some(Phase::FirstByte));
        // The first segment that passed ahead of it, then it.
        assert_eq!(f.frames, o.frames(&[segs[1], segs[0]]));
        assert_waits(
            &f.waits,
            &[o.wait(segs[1], segs[0], None, 30.0 - 0.01)],
            EXACT,
        );
        assert_eq!(o.report.server_to_client.out_of_order, 1);
        assert_eq!(o.report.server_to_client.retransmissions, 0);
        o.has_no(Retransmission);
    }
}

#[test]
fn a_segment_re_sent_after_the_ones_behind_it_is_a_loss_not_reordering() {
    // The same answer with its first segment lost and sent again after a
    // round trip: the copy left after the segments that passed (a higher
    // number), however it arrives.
    for path in past_the_hold() {
        let mut w = Wire::new(path);
        w.handshake(0.0);
        let req = w.send(C, 50.0, b"GET / HTTP/1.1\r\n\r\n");
        let segs = w.burst(S, w.arrival(req) + 1.0, 3, 0.01);
        w.lose(segs[0]);
        w.ack(C, w.arrival(segs[1]));
        w.ack(C, w.arrival(segs[2]));
        let again = w.resend(w.arrival(segs[2]) + RTT, segs[0]);
        w.ack(C, w.arrival(again));
        w.count_datagrams(S, 1000);
        let o = w.run_lost(&[segs[0]]);
        o.has_no(Reordering);
        assert_eq!(o.report.server_to_client.out_of_order, 0);
        assert_eq!(o.report.server_to_client.retransmissions, 1);
    }
}

#[test]
fn without_the_senders_clocks_there_is_no_claim() {
    // The same hold, no identifications (IPv6, or a stack that leaves
    // them 0) and no timestamps: when the segment left is unknown.
    for path in past_the_hold() {
        let mut w = Wire::new(path);
        answer_with_first_held(&mut w, 30.0);
        w.run().has_no(Reordering);
    }
}

#[test]
fn a_copy_of_bytes_the_receiver_had_acknowledged_is_a_re_send_without_the_senders_clocks() {
    // No identifications and no timestamps: a hole's filler is judged by
    // timing. The answer's first segment held 0.5 ms (reordering), the
    // client's ACK of all three, then, as that ACK reaches the server, a
    // new segment and 0.1 ms after it the first again (a re-send the
    // sender had timed before the ACK came): its bytes were delivered,
    // whatever its timing says.
    for path in past_the_hold() {
        let mut w = Wire::new(path);
        w.handshake(0.0);
        let req = w.send(C, 50.0, b"GET / HTTP/1.1\r\n\r\n");
        let segs = w.burst(S, w.arrival(req) + 1.0, 3, 0.01);
        w.delay(segs[0], 0.5);
        let ack = w.ack(C, w.arrival(segs[0]).max(w.arrival(segs[2])));
        let more = w.data(S, w.arrival(ack), 1000);
        let again = w.resend(w.sent(more) + 0.1, segs[0]);
        w.ack(C, w.arrival(again).max(w.arrival(more)));
        let o = w.run();
        assert_eq!(o.report.server_to_client.out_of_order, 1, "the held one");
        assert_eq!(o.report.server_to_client.retransmissions, 1, "the copy");
    }
}

/// The answer's first segment passes the capture point (when the path
/// passes it before the loss) and is lost beyond it; the sender sends it
/// again 0.05 ms after the last, as the kernel does at once when a router
/// says it was too big: well inside the time a late original might take.
fn answer_with_first_lost_and_sent_again_at_once(path: Path, counted: bool) -> Outcome {
    let mut w = Wire::new(path);
    w.handshake(0.0);
    let req = w.send(C, 50.0, b"GET / HTTP/1.1\r\n\r\n");
    let segs = w.burst(S, w.arrival(req) + 1.0, 3, 0.01);
    w.lose(segs[0]);
    let again = w.resend(w.sent(segs[2]) + 0.05, segs[0]);
    w.ack(C, w.arrival(again).max(w.arrival(segs[2])));
    if counted {
        w.count_datagrams(S, 1000);
    }
    w.run_lost(&[segs[0]])
}

#[test]
fn a_copy_of_bytes_that_had_passed_in_order_is_a_re_send_however_soon() {
    // No timestamps. The capture saw the lost segment's bytes pass in
    // order, no hole open for an original to fill: the copy is a re-send.
    // (Its new identification tells it from a capture's second copy; no
    // hole is there for it to order.)
    for path in [Path::at_server(RTT), Path::mid(RTT, 0.5)] {
        let o = answer_with_first_lost_and_sent_again_at_once(path, true);
        assert_eq!(o.report.server_to_client.out_of_order, 0);
        assert_eq!(o.report.server_to_client.retransmissions, 1);
        o.has_no(Reordering);
    }
    // At the client the lost original never passed: the copy fills a
    // hole the capture saw open, and without the sender's clocks timing
    // alone cannot tell it from a late original (Wireshark's
    // out-of-order).
    let o = answer_with_first_lost_and_sent_again_at_once(Path::at_client(RTT), false);
    assert_eq!(o.report.server_to_client.out_of_order, 1);
    assert_eq!(o.report.server_to_client.retransmissions, 0);
}

#[test]
fn a_hold_under_a_millisecond_is_the_path_s_spread() {
    for path in past_the_hold() {
        let mut w = Wire::new(path);
        answer_with_first_held(&mut w, 0.5);
        w.count_datagrams(S, 1000);
        let o = w.run();
        assert_eq!(o.report.server_to_client.out_of_order, 1);
        o.has_no(Reordering);
    }
}

#[test]
fn a_held_segment_no_phase_ended_on_costs_nothing_and_is_named() {
    // The middle segment held: the first byte came on time, and the
    // transfer ended with the third segment's arrival after it.
    for path in past_the_hold() {
        let mut w = Wire::new(path);
        w.handshake(0.0);
        let req = w.send(C, 50.0, b"GET / HTTP/1.1\r\n\r\n");
        let segs = w.burst(S, w.arrival(req) + 1.0, 4, 0.01);
        w.delay(segs[1], 5.0);
        w.delay(segs[3], 10.0);
        w.ack(C, w.arrival(segs[3]));
        w.count_datagrams(S, 1000);
        let o = w.run();
        let f = o.the(Reordering);
        assert_eq!(f.phase, Some(Phase::Transfer));
        assert_eq!(f.cost_ms, 0.0);
        assert!(f.waits.is_empty());
        assert_eq!(f.frames, o.frames(&[segs[2], segs[1]]));
    }
}

/// An answer of six segments whose fourth and fifth the path held 40 ms,
/// together (the fifth arriving first, the fourth 0.5 ms behind it),
/// while the sixth passed on time: the answer's end waited for both, from
/// the last segment that came on time, not from the fifth, held with it
/// (nDPI's capture.pcap 3: judged partly right at "no phase waited").
#[test]
fn an_answers_end_held_with_the_segment_before_it_waited_from_the_last_on_time() {
    for path in past_the_hold() {
        let mut w = Wire::new(path);
        w.handshake(0.0);
        let req = w.send(C, 50.0, b"GET / HTTP/1.1\r\n\r\n");
        let segs = w.burst(S, w.arrival(req) + 1.0, 6, 0.01);
        w.delay(segs[3], 40.5);
        w.delay(segs[4], 40.0);
        w.ack(C, w.arrival(segs[3]));
        w.count_datagrams(S, 1000);
        let o = w.run();
        let f = o.the_in(Reordering, Phase::Transfer);
        assert_waits(
            &f.waits,
            &[o.wait(segs[5], segs[3], None, 40.5 - 0.02)],
            EXACT,
        );
        assert_cost_is_its_waits(f);
    }
}

#[test]
fn a_request_whose_first_segment_the_path_held_kept_the_answer_waiting() {
    // At the server: a three-segment upload whose first segment came
    // 20 ms after the others; the server answers the moment all of it
    // is in. The answer's wait for the request was the path's.
    let mut w = Wire::new(Path::at_server(RTT));
    w.handshake(0.0);
    let segs = w.burst(C, 50.0, 3, 0.01);
    w.delay(segs[0], 20.0);
    let answer = w.send(S, w.arrival(segs[0]) + 0.1, b"HTTP/1.1 200 OK\r\n\r\n");
    w.ack(C, w.arrival(answer));
    w.count_datagrams(C, 500);
    let o = w.run();
    let f = o.the_in(Reordering, Phase::FirstByte);
    assert_waits(
        &f.waits,
        &[o.wait(segs[2], segs[0], None, 20.0 - 0.02)],
        EXACT,
    );
    assert_eq!(o.report.client_to_server.out_of_order, 1);
    o.has_no(Retransmission);
}

/// A capture begun mid-connection, with the server's answer (no
/// handshake: no round trip known, nor how far the sender is): its first
/// segment, held 1 ms on the path, comes after the client's duplicate
/// ACKs reported its hole, sent in the tick of the segments that passed
/// it and echoing a TSval older than the reports'. It left before any
/// report reached its sender, so it answers none of them (no fast
/// retransmission); and 1 ms behind the segment that jumped its hole is
/// within Wireshark's 3 ms: the client's own ACK turnaround, all the
/// samples say of the path, is no round trip to hold it to (tcpflow's
/// test1-part2.pcap).
#[test]
fn a_fill_that_left_before_the_loss_reports_reached_its_sender_is_out_of_order() {
    let mut w = Wire::new(Path::at_client(RTT));
    let handshake = w.handshake(0.0);
    let req = w.send(C, 50.0, b"GET / HTTP/1.1\r\n\r\n");
    let segs = w.burst(S, w.arrival(req) + 1.0, 4, 0.01);
    w.stamp(S, 1000.0);
    w.delay(segs[0], 1.0);
    for s in &segs[1..] {
        w.ack(C, w.arrival(*s));
    }
    w.ack(C, w.arrival(segs[0]));
    w.stamp(C, 1000.0);
    let tick = |w: &Wire, id: Id| w.pkts[id.0].seg.options.timestamps.unwrap().0;
    assert_eq!(tick(&w, segs[0]), tick(&w, segs[3]));
    let mut missing = handshake.to_vec();
    missing.push(req);
    let o = w.run_missing(&missing);
    assert!(o.report.partial);
    assert_eq!(o.report.server_to_client.out_of_order, 1);
    assert_eq!(o.report.server_to_client.retransmissions, 0);
    o.has_no(Retransmission);
}

/// An answer of four segments, the second held 5 ms on the path; then
/// the server re-sends `resent` of them (indexes), 30 ms after the last
/// arrived, one after the other.
fn held_then_resent(resent: &[usize]) -> u32 {
    let mut w = Wire::new(Path::at_client(RTT));
    w.handshake(0.0);
    let req = w.send(C, 50.0, b"GET / HTTP/1.1\r\n\r\n");
    let segs = w.burst(S, w.arrival(req) + 1.0, 4, 0.01);
    w.delay(segs[1], 5.0);
    let all_in = w.arrival(segs[1]).max(w.arrival(segs[3]));
    w.ack(C, all_in);
    for (i, &k) in resent.iter().enumerate() {
        w.resend(all_in + 30.0 + i as f64 * 0.01, segs[k]);
    }
    w.count_datagrams(S, 1000);
    let o = w.run();
    match &o.the(Reordering).detail {
        crate::model::Detail::Reordering {
            needless_resends, ..
        } => *needless_resends,
        other => panic!("{other:?}"),
    }
}

/// The held segment re-sent alone: the hole taken for a loss, a re-send
/// the reordering drew. Re-sent in a run with segments that came in
/// order (a timer's go-back, nDPI's weibo.pcap 6): the run's, not the
/// reordering's doing, and not counted.
#[test]
fn a_re_send_of_a_held_segment_is_the_reorderings_unless_a_run_re_sent_more() {
    assert_eq!(held_then_resent(&[1]), 1);
    assert_eq!(held_then_resent(&[1, 2, 3]), 0);
    assert_eq!(held_then_resent(&[0, 1]), 0);
}
