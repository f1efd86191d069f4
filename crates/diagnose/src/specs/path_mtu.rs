//! `path_mtu` (detect/path_mtu.rs).
//!
//! > Signature, at a vantage that sees the sender's copies (before the
//! > narrow hop), the peer's MSS option known from the handshake: a data
//! > segment of the sender's full size [...] sent again, and
//! > - an ICMP "too big" error quoting one of the sender's segments,
//! >   captured before a re-send of a full-size segment (the router said
//! >   so); or
//! > - a re-send starting at the full-size segment's first byte in a
//! >   segment more than 40 bytes smaller [...] after at least two
//! >   full-size copies of it, none of which was acknowledged, the smaller
//! >   copy acknowledged after it; not where the receiver's window ended
//! >   before the original's end [...]; and the connection never carried a
//! >   segment that large [...].
//! >
//! > The re-sends of full-size segments sent before the first smaller copy
//! > [...] are this finding's, not `retransmission`'s nor `rto_stall`'s:
//! > each waited from the sender's previous data segment (on its clock),
//! > with no releasing packet [...].

use super::*;
use crate::model::{Detail, Phase};
use FindingKind::{PathMtu, Retransmission, RtoStall};

const RTT: f64 = 40.0;
const EXACT: f64 = 1e-3;

/// A request, and the start of its answer: two segments of `first` and
/// `second` bytes from the server (sent at 100 ms, the request's arrival
/// plus 40 ms of work).
fn answer_in_two(path: Path, first: u32, second: u32) -> (Wire, [Id; 2]) {
    let mut w = Wire::new(path);
    w.handshake(0.0);
    w.data(C, 40.0, 100);
    let a = w.data(S, 100.0, first);
    let b = w.data(S, 100.0, second);
    (w, [a, b])
}

/// [`answer_in_two`] of two full-size segments.
fn answer_of_two_full_segments(path: Path) -> (Wire, [Id; 2]) {
    answer_in_two(path, MSS, MSS)
}

/// `n` bytes at `id`'s first byte, sent again at `t`.
fn smaller_copy(w: &mut Wire, t: f64, id: Id, n: u32) -> Id {
    let at = w.span(id).0;
    w.send_at(S, t, at, bytes(n))
}

#[test]
fn a_router_saying_too_big_and_smaller_resends_are_path_mtu_discovery() {
    // The router 5 ms from the server answers each full-size segment with
    // "fragmentation needed" (MTU 1280); the server sends each again at
    // once in two pieces of the new size.
    let (mut w, [a, b]) = answer_of_two_full_segments(Path::at_server(RTT));
    w.lose(a);
    w.lose(b);
    let icmp_a = w.too_big(110.0, a, 1280);
    w.too_big(110.0, b, 1280);
    let a1 = smaller_copy(&mut w, 110.1, a, 1240);
    let a2 = w.send_at(S, 110.1, w.span(a).0 + 1240, bytes(MSS - 1240));
    let b1 = smaller_copy(&mut w, 110.1, b, 1240);
    let b2 = w.send_at(S, 110.1, w.span(b).0 + 1240, bytes(MSS - 1240));
    w.ack(C, w.arrival(b2));
    w.fin(S, 200.0);
    w.fin(C, 230.0);
    let o = w.run();
    let x = o.the(PathMtu);
    assert!(
        matches!(
            x.detail,
            Detail::PathMtu {
                sender: S,
                full_size: MSS,
                copies: 1,
                smaller: Some(1240),
                hop_mtu: Some(1280),
                icmp: true,
                hole: None,
                offload: false,
            }
        ),
        "{:?}",
        x.detail
    );
    // The first segment that could not pass, the router's word, the
    // first smaller copy: the evidence.
    for id in [a, icmp_a, a1] {
        assert!(x.frames.contains(&o.frame(id)), "{:?}", x.frames);
    }
    // One wait: the silence before the first smaller copy (from the
    // server's last full-size segment); its other pieces left with it.
    assert_waits(&x.waits, &[o.wait(b, a1, None, 10.1)], EXACT);
    assert_cost_is_its_waits(x);
    // Those re-sends are not "find the loss".
    o.has_no(Retransmission);
    o.has_no(RtoStall);
    let _ = (a2, b1);
}

/// [`answer_in_two`] of a full-size segment and a smaller one.
fn answer_of_a_full_segment_and_its_tail(path: Path) -> (Wire, [Id; 2]) {
    answer_in_two(path, MSS, 600)
}

/// The server's first full-size segment lost at a black-holed hop, sent
/// again by its timer `timeouts` times at full size (after 200, 400, 800
/// ms ...), then once in `smaller` bytes, which the client acknowledges;
/// captured at the server (the lost copies in the capture).
fn black_hole(timeouts: u32, smaller: u32) -> (Outcome, Vec<Id>, Id) {
    let (o, copies, small, _) = black_hole_at(Path::at_server(RTT), timeouts, smaller);
    (o, copies, small)
}

/// [`black_hole`] captured on `path` (past the hop, the lost copies are
/// not in the capture); also the flight's tail.
fn black_hole_at(path: Path, timeouts: u32, smaller: u32) -> (Outcome, Vec<Id>, Id, Id) {
    let (mut w, [a, b]) = answer_of_a_full_segment_and_its_tail(path);
    w.lose(a);
    // The smaller tail passes: the client's duplicate ACK says so.
    w.ack(C, w.arrival(b));
    let mut copies = vec![a];
    let mut t = 100.0;
    let mut rto = 200.0;
    for _ in 0..timeouts {
        t += rto;
        rto *= 2.0;
        let again = w.resend(t, a);
        w.lose(again);
        copies.push(again);
    }
    t += rto;
    let small = smaller_copy(&mut w, t, a, smaller);
    w.ack(C, w.arrival(small));
    let rest = w.send_at(S, t + 0.01, w.span(a).0 + smaller, bytes(MSS - smaller));
    w.ack(C, w.arrival(rest));
    (w.run_lost(&copies), copies, small, b)
}

#[test]
fn full_size_copies_lost_until_a_smaller_one_passes_are_a_black_hole() {
    // Linux with tcp_mtu_probing=1: after tcp_retries1 timeouts it sends
    // the base MSS (1024 bytes).
    let (o, copies, small) = black_hole(3, 1024);
    let x = o.the(PathMtu);
    assert!(
        matches!(
            x.detail,
            Detail::PathMtu {
                sender: S,
                full_size: MSS,
                copies: 4,
                smaller: Some(1024),
                hop_mtu: None,
                icmp: false,
                hole: None,
                offload: false,
            }
        ),
        "{:?}",
        x.detail
    );
    // Each copy waited for the server's timer: 200, 400, 800 and 1600 ms
    // (the first from the second segment, sent with the first).
    let waits = [
        o.wait(copies[1], copies[2], None, 400.0),
        o.wait(copies[2], copies[3], None, 800.0),
        o.wait(copies[3], small, None, 1600.0),
    ];
    // Then the rest of the segment, right behind the smaller copy.
    assert_eq!(x.waits.len(), 5, "{:?}", x.waits);
    assert_waits(&x.waits[1..4], &waits, EXACT);
    assert_ms(x.waits[0].ms, 200.0, EXACT, "the first timeout");
    assert_ms(x.waits[4].ms, 0.01, EXACT, "the rest of the segment");
    assert_ms(x.cost_ms, 3000.01, EXACT, "the hole lasted three seconds");
    assert_cost_is_its_waits(x);
    o.has_no(RtoStall);
    o.has_no(Retransmission);
}

#[test]
fn a_smaller_copy_after_one_lost_copy_is_a_loss_not_a_black_hole() {
    // No timer fired at full size: a sender never goes smaller after one
    // loss on its own, and one loss is anything.
    let (o, _, _) = black_hole(0, 1024);
    o.has_no(PathMtu);
    o.the(Retransmission);
}

#[test]
fn a_copy_smaller_by_no_more_than_options_can_take_is_no_narrower_path() {
    // 36 bytes less: room for SACK blocks in the same packet size.
    let (o, _, _) = black_hole(3, MSS - 36);
    o.has_no(PathMtu);
    o.the(RtoStall);
}

#[test]
fn a_path_that_carried_a_full_size_segment_before_has_no_black_hole() {
    // The same loss after a full-size segment got through whole.
    let mut w = Wire::new(Path::at_server(RTT));
    w.handshake(0.0);
    w.data(C, 40.0, 100);
    let whole = w.data(S, 100.0, MSS);
    w.ack(C, w.arrival(whole));
    w.data(C, 200.0, 100);
    let a = w.data(S, 260.0, MSS);
    let b = w.data(S, 260.0, MSS);
    w.lose(a);
    w.ack(C, w.arrival(b));
    let mut t = 260.0;
    for rto in [200.0, 400.0, 800.0] {
        t += rto;
        let again = w.resend(t, a);
        w.lose(again);
    }
    let small = smaller_copy(&mut w, t + 1600.0, a, 1024);
    w.ack(C, w.arrival(small));
    let o = w.run();
    o.has_no(PathMtu);
    o.the(RtoStall);
}

#[test]
fn a_smaller_copy_nobody_acknowledged_proves_nothing() {
    let (mut w, [a, b]) = answer_of_a_full_segment_and_its_tail(Path::at_server(RTT));
    w.lose(a);
    w.ack(C, w.arrival(b));
    let mut t = 100.0;
    for rto in [200.0, 400.0, 800.0] {
        t += rto;
        let again = w.resend(t, a);
        w.lose(again);
    }
    let small = smaller_copy(&mut w, t + 1600.0, a, 1024);
    w.lose(small);
    let o = w.run();
    o.has_no(PathMtu);
}

#[test]
fn a_router_saying_too_big_to_a_sender_that_keeps_the_size_is_still_the_path() {
    // The ICMP reaches the capture point but not the sender's TCP (a
    // firewall on its host): it keeps re-sending full size, in vain.
    let (mut w, [a, b]) = answer_of_two_full_segments(Path::at_server(RTT));
    w.lose(a);
    let icmp = w.too_big(100.5, a, 1400);
    w.ack(C, w.arrival(b));
    let mut t = 100.0;
    let mut copies = vec![];
    for rto in [200.0, 400.0] {
        t += rto;
        let again = w.resend(t, a);
        w.lose(again);
        copies.push(again);
    }
    let o = w.run();
    let x = o.the(PathMtu);
    assert!(
        matches!(
            x.detail,
            Detail::PathMtu {
                smaller: None,
                hop_mtu: Some(1400),
                icmp: true,
                ..
            }
        ),
        "{:?}",
        x.detail
    );
    assert!(x.frames.contains(&o.frame(icmp)));
    assert_ms(x.cost_ms, 600.0, EXACT, "both timeouts");
    o.has_no(RtoStall);
}

/// A capture above the server's segmentation offload (GSO/TSO: its first
/// block of two segments' data is in it whole): the router's ICMP lowers
/// the path MTU, and the server's re-send of the lost segment's bytes
/// shows at the same length, the block TCP handed down, though it left as
/// smaller packets: it passed, the client acknowledged it. The sender
/// honoured the ICMP; nothing says it ignored it.
fn above_the_offload(acknowledged: bool) -> (Outcome, Id, Id, Id) {
    let (mut w, [_, b]) = answer_in_two(Path::at_server(RTT), 2 * MSS, MSS);
    w.lose(b);
    let icmp = w.too_big(110.0, b, 1400);
    let again = w.resend(110.1, b);
    if acknowledged {
        w.ack(C, w.arrival(again));
    } else {
        w.lose(again);
    }
    w.fin(S, 300.0);
    w.fin(C, 330.0);
    (w.run(), b, icmp, again)
}

#[test]
fn above_the_offload_a_same_length_resend_that_passed_honoured_the_icmp() {
    let (o, b, icmp, again) = above_the_offload(true);
    let x = o.the(PathMtu);
    assert!(
        matches!(
            x.detail,
            Detail::PathMtu {
                sender: S,
                full_size: MSS,
                smaller: Some(MSS),
                hop_mtu: Some(1400),
                icmp: true,
                offload: true,
                hole: None,
                ..
            }
        ),
        "{:?}",
        x.detail
    );
    for id in [b, icmp, again] {
        assert!(x.frames.contains(&o.frame(id)), "{:?}", x.frames);
    }
    // The wait: from the server's last data (the lost segment) to its
    // re-send.
    assert_waits(&x.waits, &[o.wait(b, again, None, 10.1)], EXACT);
    assert_cost_is_its_waits(x);
    o.has_no(Retransmission);
}

#[test]
fn above_the_offload_a_same_length_resend_lost_again_kept_the_size() {
    let (o, ..) = above_the_offload(false);
    let x = o.the(PathMtu);
    assert!(
        matches!(
            x.detail,
            Detail::PathMtu {
                smaller: None,
                icmp: true,
                offload: true,
                ..
            }
        ),
        "{:?}",
        x.detail
    );
}

#[test]
fn past_the_hop_a_full_segment_missing_until_smaller_pieces_came_is_the_path() {
    // The same black hole, captured at the client: the full-size copies
    // never reach the capture, the smaller one fills the hole.
    let (o, _, small, b) = black_hole_at(Path::at_client(RTT), 3, 1024);
    // The answer's first byte waited for the hole: that phase's.
    let x = o.the_in(PathMtu, Phase::FirstByte);
    assert!(
        matches!(
            x.detail,
            Detail::PathMtu {
                sender: S,
                full_size: MSS,
                smaller: Some(1024),
                hole: Some(MSS),
                icmp: false,
                ..
            }
        ),
        "{:?}",
        x.detail
    );
    // From the tail (the last the client had of the server) to the first
    // smaller piece: the hole's three seconds, on the server's clock.
    assert_waits(&x.waits[..1], &[o.wait(b, small, None, 3000.0)], EXACT);
    assert_cost_is_its_waits(x);
    o.has_no(RtoStall);
    o.has_no(Retransmission);
}

#[test]
fn past_the_hop_a_hole_filled_at_full_size_is_a_loss() {
    // The first copy was lost on the way, the timer's copy (full size)
    // passed: nothing was too big.
    let (mut w, [a, b]) = answer_of_a_full_segment_and_its_tail(Path::at_client(RTT));
    w.lose(a);
    w.ack(C, w.arrival(b));
    let again = w.resend(300.0, a);
    w.ack(C, w.arrival(again));
    let o = w.run_lost(&[a]);
    o.has_no(PathMtu);
    o.the(RtoStall);
}

#[test]
fn past_the_hop_a_hole_that_is_no_whole_number_of_full_segments_is_a_loss() {
    // 600 bytes missing (the tail), refilled smaller: the sender had sent
    // no full-size segment there, so its size proves nothing.
    let (mut w, [a, b]) = answer_in_two(Path::at_client(RTT), 600, 600);
    w.lose(a);
    w.ack(C, w.arrival(b));
    let small = smaller_copy(&mut w, 300.0, a, 300);
    let rest = w.send_at(S, 300.01, w.span(a).0 + 300, bytes(300));
    w.ack(C, w.arrival(rest));
    let o = w.run_lost(&[a]);
    o.has_no(PathMtu);
    let _ = small;
}

/// The black hole with a sender that never goes smaller: the full-size
/// segment re-sent on the timer `timeouts` times, none acknowledged;
/// `tail` bytes sent right behind the first copy, which pass (or, when as
/// large as a full segment, are lost too).
fn never_smaller(timeouts: u32, tail: u32) -> Outcome {
    let (mut w, [a, b]) = answer_in_two(Path::at_server(RTT), MSS, tail);
    w.lose(a);
    if tail == MSS {
        w.lose(b);
    } else {
        // The tail passes: the client's duplicate ACK says so.
        w.ack(C, w.arrival(b));
    }
    let mut t = 100.0;
    let mut rto = 200.0;
    for _ in 0..timeouts {
        t += rto;
        rto *= 2.0;
        let again = w.resend(t, a);
        w.lose(again);
    }
    w.run()
}

#[test]
fn full_size_copies_lost_again_and_again_while_a_smaller_one_passed_are_a_black_hole() {
    let o = never_smaller(4, 600);
    let x = o.the(PathMtu);
    assert!(
        matches!(
            x.detail,
            Detail::PathMtu {
                smaller: None,
                icmp: false,
                copies: 5,
                ..
            }
        ),
        "{:?}",
        x.detail
    );
    assert_eq!(x.confidence, 0.7, "a path that died would look the same");
    assert_ms(
        x.cost_ms,
        200.0 + 400.0 + 800.0 + 1600.0,
        EXACT,
        "the timer's silences",
    );
    o.has_no(RtoStall);
}

#[test]
fn without_a_smaller_segment_passing_full_size_copies_lost_are_a_dead_path() {
    // Both segments full-size and lost: nothing shows size mattered.
    let o = never_smaller(4, MSS);
    o.has_no(PathMtu);
    o.the(RtoStall);
    // Two timer copies: a loss, not yet a black hole.
    let o = never_smaller(2, 600);
    o.has_no(PathMtu);
    o.the(RtoStall);
}

/// A TLS 1.3 handshake whose server flight's first (full-size) segment a
/// narrow hop drops, copy after copy; the rest of the flight passes; the
/// client gives up `patience` ms after the ClientHello. Captured at the
/// client: past the hop.
fn handshake_into_a_black_hole(patience: f64) -> (Outcome, Id, Id, Id) {
    use super::tls::*;
    let mut w = Wire::new(Path::at_client(RTT));
    w.handshake(0.0);
    let (ch, flight) = tls13_hello_and_flight(&mut w, 50.0, 1.0, Offer::tls13());
    assert!(flight.len() >= 2 && w.span(flight[0]).1 - w.span(flight[0]).0 == MSS);
    let mut lost = vec![flight[0]];
    let mut t = w.sent(flight[0]);
    let mut rto = 200.0;
    while t + rto < 50.0 + patience {
        t += rto;
        rto *= 2.0;
        let again = w.resend(t, flight[0]);
        w.lose(again);
        lost.push(again);
    }
    w.lose(flight[0]);
    // The client's duplicate ACKs for the rest, then its FIN.
    let tail = *flight.last().unwrap();
    w.ack(C, w.arrival(tail));
    let fin = w.fin(C, 50.0 + patience);
    (w.run_lost(&lost), ch, tail, fin)
}

#[test]
fn past_the_hop_a_hole_nothing_filled_while_the_client_waited_is_a_black_hole() {
    let (o, ch, tail, fin) = handshake_into_a_black_hole(5000.0);
    // The handshake never completed: the client waited from its
    // ClientHello until it gave up, the ledger's row says.
    let row = o.row(Phase::TlsHandshake);
    assert_eq!(row.label, "TLS handshake (never completed)");
    assert_eq!(
        (row.start_frame, row.end_frame),
        (o.frame(ch), o.frame(fin))
    );
    let x = o.the_in(PathMtu, Phase::TlsHandshake);
    assert!(
        matches!(
            x.detail,
            Detail::PathMtu {
                smaller: None,
                hole: Some(MSS),
                icmp: false,
                ..
            }
        ),
        "{:?}",
        x.detail
    );
    assert_eq!(x.confidence, 0.7);
    // From the tail's arrival to the client's giving up.
    let waited = o.wait(tail, fin, None, 0.0);
    assert_eq!(
        (x.waits[0].from_frame, x.waits[0].to_frame),
        (waited.from_frame, waited.to_frame)
    );
    assert_cost_is_its_waits(x);
}

#[test]
fn past_the_hop_a_hole_given_up_on_sooner_than_three_timer_copies_proves_nothing() {
    // One second: a sender's timer has re-sent two copies at most.
    let (o, ..) = handshake_into_a_black_hole(1000.0);
    o.has_no(PathMtu);
}

#[test]
fn an_mss_option_too_small_for_any_data_is_no_size_to_reason_about() {
    // MSS 0 and 8 (under the timestamps' 12 bytes): a damaged or fuzzed
    // option. The same black hole past the hop must not divide by it.
    for mss in [0u16, 8] {
        let (mut w, [a, b]) = answer_of_a_full_segment_and_its_tail(Path::at_client(RTT));
        w.edit(Id(0), |s| s.options.mss = Some(mss));
        w.edit(Id(1), |s| s.options.mss = Some(mss));
        w.lose(a);
        w.ack(C, w.arrival(b));
        let small = smaller_copy(&mut w, 3100.0, a, 1024);
        w.ack(C, w.arrival(small));
        w.fin(C, 9000.0);
        let o = w.run_lost(&[a]);
        o.has_no(PathMtu);
    }
}
