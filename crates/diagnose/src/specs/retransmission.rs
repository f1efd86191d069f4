//! `retransmission` and `rto_stall` (detect/retransmission.rs).
//!
//! > Signature: a segment re-sending bytes already seen (later than 3 ms /
//! > one RTT after the highest, else it is reordering), or at a vantage
//! > past the loss a late segment filling a hole. On the sender's clock,
//! > the silence before each retransmission is its cost; a silence of at
//! > least max(200 ms, 1.5 RTT) (Linux's minimum RTO is 200 ms) is an
//! > `rto_stall` [...]. Not retransmissions [...]: keep-alive and
//! > zero-window probes [...], a second copy of a packet in the capture,
//! > SYNs (`syn_retransmit`'s). The finding cites each original and its
//! > retransmission (`frame.number in {...}`).
//!
//! From the code's own comments: a re-send of bytes the receiver had
//! already acknowledged (captured before the re-send), reported twice
//! with a D-SACK, or acknowledged sooner after the re-send than a round
//! trip could bring the re-send's own ACK, is spurious; a re-send that
//! left the moment a receiver's ACK arrived was that ACK's (loss
//! recovery), not a timer's, however long the silence before it.
//!
//! > Loss shown: [...] The capture shows loss only with the receiver's
//! > acknowledgments in it: pure ACKs of the receiver in the connection
//! > [...], or a packet of the receiver acknowledging the re-sent bytes
//! > within a round trip of the re-send [...]. A capture of data packets
//! > only (`tcp.len > 0`) has neither: such a re-send is cited as
//! > unconfirmed, with no wait and no `rto_stall`. A capture without a
//! > single packet of the receiver claims nothing.

use super::tls::*;
use super::*;
use crate::model::{ArrivalProof, Detail, Finding, HeldOriginal, Phase};
use FindingKind::{Retransmission, RtoStall};

const RTT: f64 = 40.0;
const EXACT: f64 = 1e-3;
/// The client's retransmission timeout on a 40 ms path: Linux's 200 ms
/// floor plus the smoothed RTT.
const RTO: f64 = 240.0;

/// A request lost past the capture point, re-sent when the client's
/// retransmission timer fires, acknowledged on arrival.
fn lost_request(path: Path, rto: f64) -> (Wire, Id, Id) {
    let mut w = Wire::new(path);
    w.handshake(0.0);
    let req = w.data(C, 100.0, 100);
    w.lose(req);
    let again = w.resend(100.0 + rto, req);
    w.ack(S, w.arrival(again));
    (w, req, again)
}

#[test]
fn a_resend_after_a_retransmission_timeout_is_a_retransmission_and_an_rto_stall() {
    // The loss is past the capture point (at the client or mid-path), so
    // the original is in the capture.
    for path in [Path::at_client(RTT), Path::mid(RTT, 0.5)] {
        let (w, req, again) = lost_request(path, RTO);
        let o = w.run();
        let r = o.the(Retransmission);
        assert_eq!(r.phase, Some(Phase::Transfer));
        assert_eq!(r.frames, o.frames(&[req, again]));
        // The silence was the timer's: counted once, under rto_stall.
        assert_ms(r.cost_ms, 0.0, EXACT, "the stall is rto_stall's");
        let s = o.the(RtoStall);
        assert_eq!(s.phase, Some(Phase::Transfer));
        // The lost original, then the timer's re-send.
        assert_eq!(s.frames, o.frames(&[req, again]));
        // Both ends are the client's own packets: exact at any vantage.
        assert_ms(s.cost_ms, RTO, EXACT, "the sender's silence");
    }
}

/// What followed a segment its timer repaired says why no fast
/// retransmit did: nothing (a tail: the lost request alone), one segment
/// behind it (one duplicate ACK, too few), or a burst lost with it (five
/// segments, the second to fourth lost: the fifth's one duplicate ACK of
/// the three fast retransmit needs; nDPI's alexa-app.pcapng 30, judged in
/// session 85, had read "too few packets followed the loss").
#[test]
fn an_rto_stall_says_what_followed_its_lost_segment() {
    let followed = |o: &Outcome| match o.the(RtoStall).detail {
        Detail::RtoStall { followed, .. } => followed.expect("what followed"),
        ref d => panic!("{d:?}"),
    };
    let (w, _, _) = lost_request(Path::at_client(RTT), RTO);
    let tail = followed(&w.run());
    assert_eq!((tail.segments, tail.duplicate_acks), (0, 0), "{tail:?}");
    // The request alone in flight: a tail-loss probe would have waited
    // about as long as the timer (alexa-app.pcapng 103, judged in
    // session 88).
    assert!(tail.alone_in_flight, "{tail:?}");
    // Two segments of a tail, both lost: the first was not alone.
    let mut w = Wire::new(Path::at_client(RTT));
    w.handshake(0.0);
    let segs = w.burst(C, 100.0, 2, 0.01);
    w.lose(segs[0]);
    w.lose(segs[1]);
    let again = w.resend(100.0 + RTO, segs[0]);
    w.ack(S, w.arrival(again));
    let pair = followed(&w.run());
    assert!(!pair.alone_in_flight, "{pair:?}");
    for (sent, lost, behind, duplicates) in [(3, 1..2, 1, 1), (5, 1..4, 3, 1)] {
        let mut w = Wire::new(Path::at_client(RTT));
        w.handshake(0.0);
        let segs = w.burst(C, 100.0, sent, 0.01);
        for &s in &segs[lost.clone()] {
            w.lose(s);
        }
        for (i, &s) in segs.iter().enumerate() {
            if !lost.contains(&i) {
                w.ack(S, w.arrival(s));
            }
        }
        let again = w.resend(100.0 + RTO, segs[1]);
        w.ack(S, w.arrival(again));
        let f = followed(&w.run());
        assert_eq!(
            (f.segments, f.duplicate_acks, f.resent_before),
            (behind, duplicates, None),
            "{sent} sent"
        );
    }
}

/// The first of the receiver's segments to acknowledge up to the lost
/// one acknowledged what came before it, whether a pure ACK or its own
/// data (nDPI's alexa-app.pcapng 40, judged in session 88: the server's
/// Finished acknowledged the client's last handshake bytes, and the one
/// pure ACK of the request's hole after it, drawn by the segment behind
/// the hole, had been counted as none). The duplicate is cited: the
/// segment after the hole arrived.
#[test]
fn a_duplicate_ack_after_the_receivers_own_data_is_counted_and_cited() {
    let mut w = Wire::new(Path::at_client(RTT));
    w.handshake(0.0);
    // The server's data: its ACK is up to the client's first byte.
    let greeting = w.data(S, 20.0, 50);
    w.ack(C, w.arrival(greeting));
    let segs = w.burst(C, 100.0, 2, 0.01);
    w.lose(segs[0]);
    let duplicate = w.ack(S, w.arrival(segs[1]));
    let again = w.resend(100.0 + RTO, segs[0]);
    w.ack(S, w.arrival(again));
    let o = w.run();
    let s = o.the(RtoStall);
    let Detail::RtoStall {
        followed: Some(f), ..
    } = s.detail
    else {
        panic!("{:?}", s.detail)
    };
    assert_eq!(
        (f.segments, f.duplicate_acks, f.first_duplicate),
        (1, 1, Some(o.frame(duplicate))),
        "{f:?}"
    );
    assert_eq!(s.frames, o.frames(&[segs[0], duplicate, again]));
}

/// The waits of a stall that began at a re-send lost too are told apart
/// (alexa-app.pcapng 83, judged in session 88: 2.87 s of 3.27 s after
/// the timer's lost copy): nothing was sent after that copy to reveal its
/// loss, so SACK could not have shortened them.
#[test]
fn an_rto_stall_tells_the_waits_after_a_lost_copy() {
    let after = |o: &Outcome| match o.the(RtoStall).detail {
        Detail::RtoStall {
            after_lost_copy_ms, ..
        } => after_lost_copy_ms,
        ref d => panic!("{d:?}"),
    };
    let (w, _, _) = lost_request(Path::at_client(RTT), RTO);
    assert_ms(after(&w.run()), 0.0, EXACT, "one copy, delivered");
    let mut w = Wire::new(Path::at_client(RTT));
    w.handshake(0.0);
    let req = w.data(C, 100.0, 100);
    w.lose(req);
    let copy = w.resend(100.0 + RTO, req);
    w.lose(copy);
    let last = w.resend(100.0 + 3.0 * RTO, req);
    w.ack(S, w.arrival(last));
    assert_ms(after(&w.run()), 2.0 * RTO, EXACT, "the second wait");
}

/// A connection never served (its SYN-ACK, then nothing of the server's
/// while the client's timer re-sent its first data) among the same
/// client's connections to other servers whose data went unanswered in
/// the same time (nDPI's skype_no_unknown.pcap 53, judged in session 88:
/// told to look at the server's accept queue first): the stall says how
/// many other servers, which no one listener explains. One other server
/// is counted as one; a stall that ended before this one began, none.
#[test]
fn an_unopened_connection_counts_the_clients_other_stalls_in_its_time() {
    let stalled = |others: &[(&str, f64)]| {
        let mut w = Wire::new(Path::at_client(RTT));
        w.handshake(1000.0);
        let first = w.data(C, 1000.0 + RTT + 1.0, 100);
        w.lose(first);
        let mut t = 1000.0 + RTT + 1.0;
        for k in 0..3 {
            t += RTO * f64::from(1 << k);
            let copy = w.resend(t, first);
            w.lose(copy);
        }
        for (i, &(server, at)) in others.iter().enumerate() {
            let mut other = Wire::new(Path::at_client(RTT));
            other.handshake(at);
            let data = other.data(C, at + RTT + 1.0, 100);
            other.lose(data);
            let mut t = at + RTT + 1.0;
            for k in 0..2 {
                t += RTO * f64::from(1 << k);
                let copy = other.resend(t, data);
                other.lose(copy);
            }
            w.join_server(other, 41000 + i as u16, server);
        }
        let o = w.run();
        match o.the(RtoStall).detail {
            Detail::RtoStall {
                unopened: true,
                stalled_elsewhere,
                ..
            } => stalled_elsewhere,
            ref d => panic!("{d:?}"),
        }
    };
    // (The others' SYNs first: handed on before this one.)
    let two = stalled(&[("10.0.9.8", 900.0), ("10.0.9.9", 950.0)]).expect("stalls");
    assert_eq!(two.servers, 2, "{two:?}");
    assert!(two.example.is_some(), "{two:?}");
    let one = stalled(&[("10.0.9.8", 900.0)]).expect("stalls");
    assert_eq!(one.servers, 1, "{one:?}");
    // Long over before this one's data was first sent: not its time.
    let before = stalled(&[("10.0.9.8", -5000.0)]).expect("stalls");
    assert_eq!(before.servers, 0, "{before:?}");
}

/// A segment its timer re-sent again and again, backing off (a black
/// hole that let the last copy through: nDPI's skype.pcap 17, seven
/// copies of 35 bytes), is one segment re-sent: the finding counts the
/// re-sends and, apart, the segments they carried, and three copies of
/// one segment lost in a row make a black hole, no random loss (skype.pcap
/// 1, judged in session 85); two of one and one of another do not.
#[test]
fn a_segment_resent_again_and_again_is_one_segment_resent() {
    let mut w = Wire::new(Path::at_client(RTT));
    w.handshake(0.0);
    let req = w.data(C, 100.0, 100);
    w.lose(req);
    let mut copies = Vec::new();
    for (k, t) in [340.0, 820.0, 1780.0].into_iter().enumerate() {
        let copy = w.resend(t, req);
        if k < 2 {
            w.lose(copy);
        }
        copies.push(copy);
    }
    w.ack(S, w.arrival(copies[2]));
    let o = w.run();
    let r = o.the(Retransmission);
    assert!(
        matches!(
            r.detail,
            Detail::Retransmission {
                segments: 3,
                distinct_segments: 1,
                black_hole: true,
                ..
            }
        ),
        "{:?}",
        r.detail
    );
    // A second segment lost once too: two segments, three re-sends.
    let mut w = Wire::new(Path::at_client(RTT));
    w.handshake(0.0);
    let req = w.data(C, 100.0, 100);
    w.lose(req);
    let again = w.resend(340.0, req);
    w.lose(again);
    let last = w.resend(820.0, req);
    w.ack(S, w.arrival(last));
    let next = w.data(C, 1000.0, 100);
    w.lose(next);
    let repair = w.resend(1240.0, next);
    w.ack(S, w.arrival(repair));
    let o = w.run();
    assert!(
        matches!(
            o.the(Retransmission).detail,
            Detail::Retransmission {
                segments: 3,
                distinct_segments: 2,
                black_hole: false,
                ..
            }
        ),
        "{:?}",
        o.the(Retransmission).detail
    );
}

/// TCP re-sends the bytes it sent at a sequence number. Other bytes
/// there, the original never acknowledged, are a relay numbering its own
/// data over what it wrote before (a phone's VPN capture app put a TLS
/// alert where application data had been: nDPI's webex.pcap 50): no
/// re-send, no timer's stall.
#[test]
fn other_bytes_at_a_sequence_number_already_sent_are_no_resend() {
    const DATA: &[u8] =
        b"\x17\x03\x01\x00\x40 application data record, 69 bytes in all, never acknowledged";
    const ALERT: &[u8] = b"\x15\x03\x01\x00\x20 an alert record written over it";
    // (Captured at the server: its data lost past the capture point.)
    let sent_over = |again: &'static [u8]| {
        let mut w = Wire::new(Path::at_server(RTT));
        w.handshake(0.0);
        let req = w.data(C, 100.0, 100);
        let answer = w.send(S, w.arrival(req) + 1.0, DATA);
        w.lose(answer);
        let rel = w.span(answer).0;
        let later = w.send_at(S, w.sent(answer) + 4_000.0, rel, again);
        w.ack(C, w.arrival(later));
        w.run()
    };
    let o = sent_over(ALERT);
    o.has_no(Retransmission);
    o.has_no(RtoStall);
    assert_eq!(o.report.server_to_client.retransmissions, 0);
    // The same bytes again: the timer's re-send, 4 s of stall.
    let o = sent_over(DATA);
    assert_ms(
        o.the(RtoStall).cost_ms,
        4_000.0,
        1.0,
        "the silence before the re-send",
    );
}

/// Five segments, the second lost past the capture point; the server
/// ACKs each arrival (the third duplicate ACK triggers fast retransmit,
/// `KERNEL` ms after it arrives).
fn fast_retransmit(path: Path) -> (Wire, Vec<Id>, Id) {
    let mut w = Wire::new(path);
    w.handshake(0.0);
    let (segs, again) = second_of_five_resent(&mut w, C, 100.0);
    w.ack(S, w.arrival(again));
    (w, segs, again)
}

/// Five segments from `sender` at `t`, the second lost past the capture
/// point, each other one ACKed on arrival, the second re-sent just after
/// the third duplicate ACK arrives: the segments and the re-send.
fn second_of_five_resent(w: &mut Wire, sender: Direction, t: f64) -> (Vec<Id>, Id) {
    let segs = w.burst(sender, t, 5, 0.01);
    w.lose(segs[1]);
    let acks: Vec<Id> = segs
        .iter()
        .filter(|s| **s != segs[1])
        .map(|s| w.ack(sender.reverse(), w.arrival(*s)))
        .collect();
    let again = w.resend(w.arrival(acks[3]) + 0.05, segs[1]);
    (segs, again)
}

#[test]
fn a_fast_retransmission_costs_the_silence_before_it_and_is_no_rto_stall() {
    for path in [Path::at_client(RTT), Path::mid(RTT, 0.5)] {
        let (w, segs, again) = fast_retransmit(path);
        let silence = w.sent(again) - w.sent(segs[4]);
        let o = w.run();
        let r = o.the(Retransmission);
        assert_eq!(r.frames, o.frames(&[segs[1], again]));
        // From the last new segment to the re-send: the duplicate ACKs'
        // round trip (over half an RTT: counted).
        assert_ms(r.cost_ms, silence, EXACT, "silence before the re-send");
        assert!(silence > RTT / 2.0 && silence < 200.0);
        o.has_no(RtoStall);
    }
}

/// A request of five segments whose second was lost and fast
/// retransmitted, then answered at once: the repair's silence delayed the
/// request's arrival, so it is the request -> first byte row's excess
/// (its phase), not a transfer stall beside it; an answer's repair, the
/// control, stays in the transfer.
#[test]
fn a_requests_repair_is_its_first_bytes_wait() {
    let (mut w, _, again) = fast_retransmit(Path::at_client(RTT));
    let answer = w.data(S, w.arrival(again) + 0.2, 300);
    w.fin(S, w.sent(answer) + 1.0);
    w.fin(C, w.arrival(answer) + 5.0);
    let o = w.run();
    let r = o.the_in(Retransmission, Phase::FirstByte);
    assert_eq!(r.waits.len(), 1, "{:?}", r.waits);
    o.has_none_in(Retransmission, Phase::Transfer);
    let row = o.row(Phase::FirstByte);
    assert!(row.excess_ms.unwrap() >= r.cost_ms - EXACT, "{row:?}");

    // The control: the request whole, the answer's second segment lost
    // past the server (captured there) and fast retransmitted.
    let mut w = Wire::new(Path::at_server(RTT));
    w.handshake(0.0);
    let req = w.data(C, 100.0, 100);
    let start = w.arrival(req) + 0.2;
    second_of_five_resent(&mut w, S, start);
    let o = w.run();
    o.the_in(Retransmission, Phase::Transfer);
    o.has_none_in(Retransmission, Phase::FirstByte);
}

#[test]
fn a_retransmissions_cost_is_made_of_waits() {
    let (w, _, _) = fast_retransmit(Path::at_client(RTT));
    assert_cost_is_its_waits(w.run().the(Retransmission));
}

#[test]
fn an_rto_stall_is_a_wait_from_the_original_to_the_resend() {
    let (w, req, again) = lost_request(Path::at_client(RTT), RTO);
    let o = w.run();
    let s = o.the(RtoStall);
    assert_waits(&s.waits, &[o.wait(req, again, None, RTO)], EXACT);
}

#[test]
fn on_a_long_path_a_resend_before_one_and_a_half_round_trips_is_not_an_rto_stall() {
    // RTT 200 ms: the duplicate ACKs take 200 ms to come back, over
    // Linux's 200 ms RTO floor, but a timer would have waited 1.5 RTT.
    let (w, ..) = fast_retransmit(Path::at_client(200.0));
    let o = w.run();
    o.the(Retransmission);
    o.has_no(RtoStall);
}

/// The server's ACK is 215 ms late; the client's timer fires before it
/// arrives and re-sends.
fn late_ack(path: Path) -> Outcome {
    let mut w = Wire::new(path);
    w.handshake(0.0);
    let req = w.data(C, 100.0, 100);
    w.ack(S, w.arrival(req) + 215.0);
    w.resend(100.0 + RTO, req);
    w.run()
}

#[test]
fn a_resend_of_bytes_already_acknowledged_in_the_capture_is_spurious() {
    // A tap between the hosts sees the ACK pass before the re-send:
    // nothing was lost, nobody waited.
    let o = late_ack(Path::mid(RTT, 0.5));
    assert_eq!(o.report.client_to_server.retransmissions, 1);
    o.has_no(Retransmission);
    o.has_no(RtoStall);
    // At the client the re-send left 15 ms before the ACK came, sooner
    // than the re-send's own ACK could come back (40 ms; half of it is
    // what a round trip's variation allows): the ACK was the original's,
    // which was not lost.
    let o = late_ack(Path::at_client(RTT));
    o.has_no(Retransmission);
    o.has_no(RtoStall);
}

#[test]
fn a_resend_acknowledged_a_round_trip_after_it_may_have_been_needed() {
    // The same late ACK, but arriving 25 ms after the re-send, over half
    // a round trip (the server's ACK 225 ms late): it may be the
    // re-send's on a path grown faster; a timeout as far as the capture
    // can tell.
    let mut w = Wire::new(Path::at_client(RTT));
    w.handshake(0.0);
    let req = w.data(C, 100.0, 100);
    w.ack(S, w.arrival(req) + 225.0);
    let again = w.resend(100.0 + RTO, req);
    let o = w.run();
    assert_eq!(o.the(RtoStall).frames, o.frames(&[req, again]));
}

/// The late ACK of `a_resend_acknowledged_a_round_trip_after_it_may_have_been_needed`,
/// with TCP timestamps: the original's TSval 1000, the re-send's 1300,
/// and the ACK echoing `echo`.
fn late_ack_echoing(echo: u32) -> (Outcome, [Id; 2]) {
    let mut w = Wire::new(Path::at_client(RTT));
    w.handshake(0.0);
    let req = w.data(C, 100.0, 100);
    let ack = w.ack(S, w.arrival(req) + 225.0);
    let again = w.resend(100.0 + RTO, req);
    w.edit(req, |s| s.options.timestamps = Some((1000, 7)));
    w.edit(again, |s| s.options.timestamps = Some((1300, 7)));
    w.edit(ack, |s| s.options.timestamps = Some((8, echo)));
    (w.run(), [req, again])
}

#[test]
fn a_resend_whose_first_ack_echoes_the_originals_timestamp_was_spurious() {
    // RFC 3522: the receiver echoes the TSval of the segment that brought
    // its data to where it acknowledges; the original's, so the original
    // arrived (late) and nothing was lost.
    let (o, _) = late_ack_echoing(1000);
    assert_eq!(o.report.client_to_server.retransmissions, 1);
    o.has_no(Retransmission);
    o.has_no(RtoStall);
    // Echoing the re-send's, the re-send brought the bytes: a timeout.
    let (o, copies) = late_ack_echoing(1300);
    assert_eq!(o.the(RtoStall).frames, o.frames(&copies));
    // An echo older than the original's says nothing of either copy.
    let (o, copies) = late_ack_echoing(900);
    assert_eq!(o.the(RtoStall).frames, o.frames(&copies));
}

/// Two segments sent in one millisecond (one TSval, 1000), the second
/// lost; the receiver's ACK of the first delayed. Its re-send (TSval
/// 1300) then starts above the receiver's last ACK, so its arrival does
/// not update what the receiver echoes: the ACK of both echoes 1000, the
/// first segment's, and the original shares it. Nothing proves the
/// original arrived: a timeout. With the first segment acknowledged on
/// its own before (`acked_first`), the re-send's arrival would have
/// updated the echo: 1000 proves the original.
fn shared_tsval(acked_first: bool) -> (Outcome, [Id; 2]) {
    let mut w = Wire::new(Path::at_client(RTT));
    w.handshake(0.0);
    let segs = w.burst(C, 100.0, 2, 0.1);
    let mut acks = Vec::new();
    if acked_first {
        acks.push(w.ack_upto(S, w.arrival(segs[0]), w.span(segs[0]).1));
    } else {
        w.lose(segs[1]);
    }
    let again = w.resend(100.0 + RTO, segs[1]);
    let all = if acked_first {
        // The original arrived; its ACK comes 65 ms after the re-send
        // left, too late to be called the original's by its timing.
        w.ack(S, w.arrival(segs[1]) + 225.0)
    } else {
        w.ack(S, w.arrival(again))
    };
    w.edit(segs[0], |s| s.options.timestamps = Some((1000, 7)));
    w.edit(segs[1], |s| s.options.timestamps = Some((1000, 7)));
    w.edit(again, |s| s.options.timestamps = Some((1300, 7)));
    for a in acks {
        w.edit(a, |s| s.options.timestamps = Some((8, 1000)));
    }
    w.edit(all, |s| s.options.timestamps = Some((9, 1000)));
    (w.run(), [segs[1], again])
}

#[test]
fn an_echo_the_original_shares_with_the_segment_before_it_proves_nothing() {
    let (o, copies) = shared_tsval(false);
    assert_eq!(o.the(RtoStall).frames, o.frames(&copies));
    let (o, _) = shared_tsval(true);
    o.has_no(RtoStall);
    o.has_no(Retransmission);
}

/// nDPI's whatsappfiles 0: a phone's upload in SACK recovery. Its head
/// (the first hole) re-sent at once on the duplicate ACKs (and lost
/// again: the receiver still asks for it); the second hole re-sent
/// 250 ms later, 4.5 ms after the receiver's next duplicate ACK, a slow
/// host's answer outside the host's quick reaction: a timer re-sends the
/// first unacknowledged byte, the head, and the sender re-sent the next
/// hole instead, so this re-send is recovery clocked by the receiver's
/// ACKs, not a timeout. Without the head re-sent, the same silence is
/// the timer's.
#[test]
fn a_resend_beyond_a_repaired_head_is_recovery_however_slow_its_sender() {
    for head_repaired in [true, false] {
        let mut w = Wire::new(Path::at_client(RTT));
        w.handshake(0.0);
        let segs = w.burst(C, 100.0, 6, 0.01);
        w.lose(segs[0]);
        w.lose(segs[2]);
        for s in &segs[3..] {
            w.ack(S, w.arrival(*s));
        }
        let mut last = w.sent(segs[5]);
        if head_repaired {
            // (Lost again: the receiver still asks for the head.)
            let head = w.resend(w.arrival(segs[5]) + 0.05, segs[0]);
            w.lose(head);
            last = w.sent(head);
        }
        let dup = w.ack(S, last + 250.0 - 4.5 - RTT / 2.0);
        let second = w.resend(w.arrival(dup) + 4.5, segs[2]);
        w.ack(S, w.arrival(second));
        let o = w.run();
        if head_repaired {
            o.has_no(RtoStall);
            let r = o.the(Retransmission);
            let wait = r
                .waits
                .iter()
                .find(|x| x.to_frame == o.frame(second))
                .expect("the second hole's silence is a wait");
            assert_eq!(wait.release_frame, Some(o.frame(dup)));
        } else {
            o.the(RtoStall);
        }
    }
}

#[test]
fn a_resend_that_left_as_an_ack_arrived_was_recovery_not_a_timer() {
    // Three segments; the first two lost past the capture point. The
    // timer re-sends the first; the server's ACK of it comes back 300 ms
    // late (a slow receiver), and the second hole leaves the moment it
    // arrives (RFC 6582's partial ACK): that silence was the ACK's round
    // trip, not a second timeout.
    for path in [Path::at_client(RTT), Path::mid(RTT, 0.5)] {
        let mut w = Wire::new(path);
        w.handshake(0.0);
        let segs = w.burst(C, 100.0, 3, 0.01);
        w.lose(segs[0]);
        w.lose(segs[1]);
        // The third segment's arrival draws a duplicate ACK.
        w.ack(S, w.arrival(segs[2]));
        let first = w.resend(100.0 + RTO, segs[0]);
        let partial = w.ack_upto(S, w.arrival(first) + 300.0, w.span(segs[0]).1);
        let second = w.resend(w.arrival(partial) + 0.05, segs[1]);
        w.ack(S, w.arrival(second));
        let o = w.run();
        let stall = o.the(RtoStall);
        assert_eq!(
            stall.frames,
            o.frames(&[segs[0], first]),
            "only the timer's"
        );
        let r = o.the(Retransmission);
        let released = r
            .waits
            .iter()
            .find(|x| x.to_frame == o.frame(second))
            .expect("the second re-send's silence is a wait");
        assert_eq!(released.release_frame, Some(o.frame(partial)));
    }
}

#[test]
fn a_resend_the_receiver_reports_with_a_dsack_is_spurious() {
    // The original arrived; only its ACK was lost. The receiver
    // acknowledges the re-send with a D-SACK of its bytes (RFC 2883).
    let mut w = Wire::new(Path::at_client(RTT));
    w.handshake(0.0);
    let req = w.data(C, 100.0, 100);
    let ack = w.ack(S, w.arrival(req));
    w.lose(ack);
    let again = w.resend(100.0 + RTO, req);
    let dsack = w.ack(S, w.arrival(again));
    let (a, b) = w.span(req);
    let (a, b) = (w.abs_seq(C, a), w.abs_seq(C, b));
    w.edit(dsack, |s| {
        s.options.sack[0] = (a, b);
        s.options.sack_len = 1;
    });
    let o = w.run();
    o.has_no(Retransmission);
    o.has_no(RtoStall);
}

/// A request sent three more times by the client's timer, and the
/// server's D-SACKs after them: `lost` the original or not. A D-SACK
/// reports one duplicate, so a re-send was needless only when every copy
/// from it on drew one (zcash.pcap's 0: three re-sends, three D-SACKs, the
/// original delivered, held on a phone's uplink with them); with the
/// original lost, the first re-send arrived first and the D-SACKs are
/// the later copies' (alexa-app's 91).
fn resent_three_times(lost: bool) -> (Outcome, [Id; 4]) {
    let mut w = Wire::new(Path::at_client(RTT));
    w.handshake(0.0);
    let req = w.data(C, 100.0, 100);
    let again: Vec<Id> = [400.0, 1000.0, 2200.0]
        .iter()
        .map(|t| w.resend(*t, req))
        .collect();
    if lost {
        w.lose(req);
    }
    // Everything the uplink held arrives at once, after the last copy.
    let (a, b) = w.span(req);
    let (a, b) = (w.abs_seq(C, a), w.abs_seq(C, b));
    let dsacks = if lost { 2 } else { 3 };
    for k in 0..3 {
        let ack = w.ack(S, w.arrival(again[2]) + k as f64 * 0.01);
        if k < dsacks {
            w.edit(ack, |s| {
                s.options.sack[0] = (a, b);
                s.options.sack_len = 1;
            });
        }
    }
    (w.run(), [req, again[0], again[1], again[2]])
}

#[test]
fn a_resend_is_needless_only_when_every_copy_from_it_on_drew_a_dsack() {
    // Nothing lost: the uplink held the original past the timer, 2.1 s
    // beyond the round trip (to the first ACK, the first D-SACK's), one
    // hold however many copies the timer sent meanwhile.
    let (o, [req, first, ..]) = resent_three_times(false);
    o.has_no(Retransmission);
    let x = o.the(RtoStall);
    let held = held_original(x);
    assert_eq!(held.original_frame, o.frame(req));
    assert_eq!(held.resend_frame, o.frame(first));
    assert!(
        matches!(held.proof, ArrivalProof::ReportedTwice { dsack_frame } if dsack_frame == held.ack_frame)
    );
    assert_eq!(x.frames, vec![o.frame(req), o.frame(first), held.ack_frame]);
    assert_ms(
        x.cost_ms,
        2200.0 + RTT - 100.0 - RTT,
        EXACT,
        "the original's hold",
    );
    // The original lost: the first re-send was needed, its timer's wait
    // a stall; the two D-SACKs are the later copies'.
    let (o, [req, first, ..]) = resent_three_times(true);
    assert_eq!(o.the(RtoStall).frames, o.frames(&[req, first]));
}

/// What a finding says held an original past its sender's timer.
fn held_original(x: &Finding) -> HeldOriginal {
    match x.detail {
        Detail::RtoStall { held: Some(h), .. } => h,
        ref other => panic!("no held original: {other:?}"),
    }
}

/// A request held on the client's path for almost a second (a phone's
/// radio waking), re-sent by the client's timer (1 s: the first data's)
/// 5 ms before the original arrived. The server acknowledges the
/// original, and the copy 15 ms later with a duplicate of that ACK; or
/// (`doubled`) the copy is lost and the server is one that sends every
/// ACK twice, 1 ms apart.
fn held_request(doubled: bool) -> (Outcome, [Id; 4]) {
    let mut w = Wire::new(Path::at_client(RTT));
    w.handshake(0.0);
    let req = w.data(C, 100.0, 100);
    w.late_after_tap(req, 985.0);
    let again = w.resend(1100.0, req);
    let first = w.ack(S, w.arrival(req));
    let second = if doubled {
        w.lose(again);
        w.ack(S, w.arrival(req) + 1.0)
    } else {
        w.ack(S, w.arrival(again))
    };
    (w.run(), [req, again, first, second])
}

#[test]
fn a_duplicate_ack_only_the_copy_could_draw_shows_the_original_was_held_not_lost() {
    // Nothing else the client sent could draw the second ACK: both
    // copies arrived, and the wait was the original's hold, from its
    // sending to its ACK (25 ms after the copy left, more than half a
    // round trip: timing alone could not tell), less the round trip.
    let (o, ids) = held_request(false);
    o.has_no(Retransmission);
    let x = o.the(RtoStall);
    assert_eq!(x.frames, o.frames(&ids));
    assert_ms(
        x.cost_ms,
        1125.0 - 100.0 - RTT,
        EXACT,
        "the hold beyond the round trip",
    );
    let held = held_original(x);
    assert!(matches!(
        held.proof,
        ArrivalProof::SecondCopyAcknowledged { duplicate_frame } if duplicate_frame == o.frame(ids[3])
    ));
    // The doubled ACK proves nothing: the copy may have been needed.
    let (o, [req, again, ..]) = held_request(true);
    let x = o.the(RtoStall);
    assert_eq!(x.frames, o.frames(&[req, again]));
    assert!(matches!(x.detail, Detail::RtoStall { held: None, .. }));
}

/// Two segments 50 ms apart, both held on the client's path past its
/// timer (arriving 985 and 1190 ms late, each just before or after its
/// re-send), each acknowledged echoing its original's timestamp: two
/// holds, overlapping. The client waited from a round trip after the
/// first left until the second's acknowledgment, once: the second hold
/// counts only what the first had not covered (nDPI's google_ssl 0: a
/// flight's segments and their re-sends, 3.9 s counted in a 2.3 s span).
#[test]
fn holds_that_overlap_are_counted_once() {
    let mut w = Wire::new(Path::at_client(RTT));
    w.handshake(0.0);
    let a = w.data(C, 100.0, 100);
    let b = w.data(C, 150.0, 100);
    w.late_after_tap(a, 985.0);
    w.late_after_tap(b, 1190.0);
    let again_a = w.resend(1100.0, a);
    let ack_a = w.ack_upto(S, w.arrival(a), w.span(a).1);
    let again_b = w.resend(1350.0, b);
    let ack_b = w.ack(S, w.arrival(b));
    for (id, tsval) in [(a, 1000), (b, 1050), (again_a, 2100), (again_b, 2350)] {
        w.edit(id, |s| s.options.timestamps = Some((tsval, 7)));
    }
    w.edit(ack_a, |s| s.options.timestamps = Some((8, 1000)));
    w.edit(ack_b, |s| s.options.timestamps = Some((9, 1050)));
    let o = w.run();
    o.has_no(Retransmission);
    let x = o.the(RtoStall);
    assert!(matches!(x.detail, Detail::RtoStall { stalls: 2, .. }));
    assert_eq!(held_original(x).proof, ArrivalProof::EchoesTheOriginal);
    // (Its acknowledgment captured at 1125 and 1380 ms.)
    let (first, second) = (1125.0 - 100.0 - RTT, 1380.0 - 1125.0);
    assert_waits(
        &x.waits,
        &[
            o.wait(a, ack_a, None, first),
            o.wait(b, ack_b, None, second),
        ],
        EXACT,
    );
    assert_ms(
        x.cost_ms,
        1380.0 - 100.0 - RTT,
        EXACT,
        "from the first's round trip to the last ACK",
    );
}

#[test]
fn a_hole_filled_within_3_ms_is_reordering_not_a_retransmission() {
    // The second segment took a path 1 ms slower than the third.
    let mut w = Wire::new(Path::mid(RTT, 0.5));
    w.handshake(0.0);
    let segs = w.burst(C, 100.0, 3, 0.01);
    w.delay(segs[1], 1.0);
    w.ack(S, w.arrival(segs[1]));
    let o = w.run();
    assert_eq!(o.report.client_to_server.out_of_order, 1);
    o.has_no(Retransmission);
}

#[test]
fn a_keepalive_probe_is_not_a_retransmission() {
    // Linux's keep-alive: the last acknowledged byte again, after idle.
    let mut w = Wire::new(Path::at_client(RTT));
    w.handshake(0.0);
    let x = w.data(C, 100.0, 1);
    w.ack(S, w.arrival(x));
    let probe = w.resend(7_300.0, x);
    w.ack(S, w.arrival(probe));
    let o = w.run();
    assert_eq!(o.report.client_to_server.keepalives, 1);
    o.has_no(Retransmission);
    o.has_no(RtoStall);
}

#[test]
fn a_second_copy_of_one_datagram_in_the_capture_is_not_a_retransmission() {
    // The same IPv4 datagram (same identification) captured twice, 2 ms
    // apart, on two interfaces.
    let mut w = Wire::new(Path::at_client(RTT));
    w.handshake(0.0);
    let req = w.data(C, 100.0, 100);
    w.edit(req, |s| s.ip_id = Some(4321));
    let copy = w.resend(102.0, req);
    w.edit(copy, |s| s.ip_id = Some(4321));
    w.ack(S, w.arrival(req));
    let o = w.run();
    assert_eq!(o.report.client_to_server.capture_duplicates, 1);
    o.has_no(Retransmission);
}

/// The re-send is cited, as one the capture cannot show was lost: no
/// wait, no cost, half confidence, and no `rto_stall`.
fn assert_unconfirmed(o: &Outcome, frames: &[Id]) {
    let r = o.the(Retransmission);
    assert_eq!(r.frames, o.frames(frames));
    assert!(r.waits.is_empty(), "{:?}", r.waits);
    assert_ms(r.cost_ms, 0.0, EXACT, "nobody is shown to have waited");
    assert_eq!(r.confidence, 0.5);
    assert!(
        matches!(
            r.detail,
            Detail::Retransmission {
                segments: 1,
                unconfirmed: 1,
                ..
            }
        ),
        "{:?}",
        r.detail
    );
    o.has_no(RtoStall);
}

#[test]
fn a_capture_of_one_direction_claims_no_loss() {
    // Without one packet of the receiver, a re-send cannot be told from
    // one whose ACK was merely late.
    let (w, ..) = lost_request(Path::at_client(RTT), RTO);
    let o = w.run_where(|d| d == C);
    o.has_no(Retransmission);
    o.has_no(RtoStall);
}

#[test]
fn a_capture_of_data_packets_only_claims_no_loss() {
    // `tcp.len > 0`: the server's ACK of the re-send is filtered out, and
    // with it any sign of whether the request or only its ACK was lost.
    for path in [Path::at_client(RTT), Path::mid(RTT, 0.5)] {
        let mut w = Wire::new(path);
        w.handshake(0.0);
        // (The server's greeting: a packet of the receiver's is captured.)
        w.data(S, 50.0, 40);
        let req = w.data(C, 100.0, 100);
        w.lose(req);
        let again = w.resend(100.0 + RTO, req);
        w.ack(S, w.arrival(again));
        assert_unconfirmed(&w.run_data_only(), &[req, again]);
    }
}

/// A copy captured right behind its original (the client's uplink held the
/// original before the capture point until the timer sent the copy), and
/// each drew its own ACK: the receiver's ACK of the bytes, then a
/// duplicate as far after it as the copy followed the original (a segment
/// below its window is acknowledged at once). Both arrived: nothing was
/// lost (hpvirtgrp.pcap's 6, no SACK, no timestamps). An original lost,
/// the copy's one ACK, is a loss.
#[test]
fn a_copy_that_drew_its_own_duplicate_ack_was_needless() {
    let sent = |dup_ack: bool| {
        let mut w = Wire::new(Path::at_client(RTT));
        w.handshake(0.0);
        let req = w.data(C, 100.0, 100);
        let again = w.resend(100.0 + RTO, req);
        // (Two datagrams, not one captured twice: their IPv4 ids differ.)
        w.edit(req, |s| s.ip_id = Some(0x9d06));
        w.edit(again, |s| s.ip_id = Some(0x9d07));
        if dup_ack {
            // The original held on the client's uplink, before the
            // capture point, until 0.3 ms before the timer sent the copy:
            // both arrive.
            w.delay(req, RTO - 0.3);
            w.ack(S, w.arrival(req));
            w.ack(S, w.arrival(again));
        } else {
            w.lose(req);
            w.ack(S, w.arrival(again));
        }
        w.run()
    };
    let o = sent(true);
    o.has_no(Retransmission);
    o.has_no(RtoStall);
    sent(false).the(Retransmission);
}

#[test]
fn a_resend_answered_by_the_receivers_data_shows_the_loss() {
    // No packet of the server's without data anywhere (its SYN-ACK not
    // captured; the client's SYN and ACK still time the round trip), but
    // its response acknowledges the re-sent request one round trip later:
    // its ACKs are captured.
    let mut w = Wire::new(Path::at_client(RTT));
    let [_, syn_ack, _] = w.handshake(0.0);
    let req = w.data(C, 100.0, 100);
    w.lose(req);
    let again = w.resend(100.0 + RTO, req);
    w.data(S, w.arrival(again), 500);
    let o = w.run_missing(&[syn_ack]);
    let r = o.the(Retransmission);
    assert_eq!(r.confidence, 1.0);
    assert!(matches!(
        r.detail,
        Detail::Retransmission { unconfirmed: 0, .. }
    ));
    assert_ms(o.the(RtoStall).cost_ms, RTO, EXACT, "the sender's silence");
}

#[test]
fn a_resend_answered_late_by_the_receivers_data_shows_nothing() {
    // The server's next request-like data comes 300 ms after the re-send
    // (a round trip is 40): its ACK field covers the re-send, but the
    // pure ACKs a filter removed before it may have too.
    let mut w = Wire::new(Path::at_client(RTT));
    w.handshake(0.0);
    let req = w.data(C, 100.0, 100);
    w.lose(req);
    let again = w.resend(100.0 + RTO, req);
    w.ack(S, w.arrival(again));
    w.data(S, w.arrival(again) + 300.0, 500);
    assert_unconfirmed(&w.run_data_only(), &[req, again]);
}

#[test]
fn a_resend_nobody_answers_is_a_loss_when_the_receivers_acks_are_captured() {
    // The server acknowledged an earlier request, then went silent (gone,
    // or the path down): its ACKs are in the capture, so their absence
    // after the re-send is real. So they are where its SYN-ACK is the
    // only packet of its without data: a capture of data packets only
    // has none (skype_no_unknown's 2: a ClientHello re-sent twelve times
    // after the server's SYN-ACK, never acknowledged, until the client's
    // RST).
    for earlier_ack in [true, false] {
        let mut w = Wire::new(Path::at_client(RTT));
        w.handshake(0.0);
        if earlier_ack {
            let first = w.data(C, 100.0, 100);
            w.ack(S, w.arrival(first));
        }
        let req = w.data(C, 1_000.0, 100);
        w.lose(req);
        let again = w.resend(1_000.0 + RTO, req);
        w.lose(again);
        let o = w.run();
        assert_eq!(o.the(Retransmission).confidence, 1.0, "{earlier_ack}");
        assert_ms(o.the(RtoStall).cost_ms, RTO, EXACT, "the sender's silence");
    }
}

#[test]
fn the_same_bytes_an_hour_apart_with_no_acks_are_no_resend() {
    // Only the sequence number ties them (a collage of captures, a clock
    // jump): no sender re-sends for an hour. Sooner, they are a re-send.
    for (later, cited) in [(3_600_000.0, false), (RTO, true)] {
        let mut w = Wire::new(Path::at_client(RTT));
        w.handshake(0.0);
        w.data(S, 50.0, 40);
        let req = w.data(C, 100.0, 100);
        let again = w.resend(100.0 + later, req);
        // A capture of data packets only (the server's greeting its only
        // packet): no ACKs to tell.
        let o = w.run_data_only();
        assert_eq!(o.report.client_to_server.retransmissions, 1, "{later} ms");
        if cited {
            assert_unconfirmed(&o, &[req, again]);
        } else {
            o.has_no(Retransmission);
        }
    }
}

#[test]
fn at_a_vantage_past_the_loss_the_late_hole_fill_is_the_retransmission() {
    // Captured at the server: the second of three segments was lost on
    // the way, before the capture point. The client re-sends it after the
    // duplicate ACKs; at the server it fills a 40 ms old hole.
    let mut w = Wire::new(Path::at_server(RTT));
    w.handshake(0.0);
    let segs = w.burst(C, 100.0, 3, 0.01);
    w.lose(segs[1]);
    let acks: Vec<Id> = [segs[0], segs[2]]
        .iter()
        .map(|s| w.ack(S, w.arrival(*s)))
        .collect();
    let again = w.resend(w.arrival(acks[1]) + 0.05, segs[1]);
    w.ack(S, w.arrival(again));
    let silence = w.sent(again) - w.sent(segs[2]);
    let o = w.run_missing(&[segs[1]]);
    let r = o.the(Retransmission);
    assert_eq!(r.frames, o.frames(&[again]), "the original was never seen");
    assert_ms(r.cost_ms, silence, EXACT, "silence before the re-send");
}

/// A paced stream, one full segment every `every` ms; the second is
/// lost past the capture point, and the client fast-retransmits it when
/// the third duplicate ACK (for the fifth segment) comes back.
fn paced_stream(every: f64) -> (Wire, Vec<Id>, Id) {
    let mut w = Wire::new(Path::at_client(RTT));
    w.handshake(0.0);
    let segs: Vec<Id> = (0..20)
        .map(|i| w.data(C, 100.0 + every * i as f64, MSS))
        .collect();
    w.lose(segs[1]);
    for s in &segs {
        if *s != segs[1] {
            w.ack(S, w.arrival(*s));
        }
    }
    let again = w.resend(w.sent(segs[4]) + RTT + 0.05, segs[1]);
    w.ack(S, w.arrival(again));
    (w, segs, again)
}

#[test]
fn a_retransmission_while_the_sender_kept_sending_costs_nothing() {
    // Every 7 ms: the re-send leaves 5 ms after the last new segment. The
    // sender never fell silent, nobody waited on a timer.
    let (w, segs, again) = paced_stream(7.0);
    let o = w.run();
    let r = o.the(Retransmission);
    assert_eq!(r.frames, o.frames(&[segs[1], again]));
    assert_eq!(r.cost_ms, 0.0);
    o.has_no(RtoStall);
}

/// An answer whose fourth segment was lost before the capture point (at
/// the client), its sender going on with the rest for a round trip and
/// more: the client's duplicate ACKs report the hole, and the re-send
/// fills it 2 ms after the server's last new segment left. The sender was never silent, but the answer could
/// not be read whole until the re-send: the transfer, which ended on it,
/// waited from the arrival of the answer's last other segment (nDPI's
/// no_sni.pcap 1: 41 ms). Where the answer went on past the re-send (the
/// near-miss: one more segment after it), the transfer ended on that, and
/// waited for nothing the hole held.
#[test]
fn a_phase_that_ended_on_a_hole_fill_waited_for_it_however_busy_its_sender() {
    for more_after in [false, true] {
        let mut w = Wire::new(Path::at_client(RTT));
        w.handshake(0.0);
        let request = w.send(C, 100.0, b"GET / HTTP/1.1\r\n\r\n");
        let go = w.arrival(request) + 0.5;
        // A round trip and more of segments, each 1 ms after the last:
        // the duplicate ACKs for those after the hole come back while it
        // sends, and it re-sends 2 ms after its last.
        let segs: Vec<Id> = (0..45).map(|i| w.data(S, go + i as f64, MSS)).collect();
        w.lose(segs[3]);
        for s in &segs {
            if *s != segs[3] {
                w.ack(C, w.arrival(*s));
            }
        }
        let last = segs[44];
        let again = w.resend(w.sent(last) + 2.0, segs[3]);
        w.ack(C, w.arrival(again));
        let after = more_after.then(|| w.data(S, w.sent(again) + 0.5, MSS));
        let o = w.run_missing(&[segs[3]]);
        let r = o.the(Retransmission);
        assert_eq!(r.frames, o.frames(&[again]), "the original was never seen");
        match after {
            None => {
                assert_eq!(
                    r.waits
                        .iter()
                        .map(|x| (x.from_frame, x.to_frame))
                        .collect::<Vec<_>>(),
                    vec![(o.frame(last), o.frame(again))]
                );
                assert_ms(
                    r.cost_ms,
                    2.0,
                    EXACT,
                    "the last segment's arrival to the fill's",
                );
                assert_eq!(r.phase, Some(crate::model::Phase::Transfer));
            }
            Some(_) => assert_eq!(r.cost_ms, 0.0, "no phase ended on the fill"),
        }
    }
}

#[test]
fn a_fast_retransmission_right_after_a_new_segment_is_still_a_retransmission() {
    // Every 5 ms: the re-send leaves 0.05 ms after the last new segment.
    let (w, segs, again) = paced_stream(5.0);
    let o = w.run();
    assert_eq!(o.the(Retransmission).frames, o.frames(&[segs[1], again]));
}

#[test]
fn each_timeout_of_a_backed_off_timer_is_an_rto_stall_and_they_add_up() {
    // The re-send is lost too; the timer doubles (RFC 6298 5.5).
    let mut w = Wire::new(Path::at_client(RTT));
    w.handshake(0.0);
    let req = w.data(C, 100.0, 100);
    w.lose(req);
    let r1 = w.resend(100.0 + RTO, req);
    w.lose(r1);
    let r2 = w.resend(w.sent(r1) + 2.0 * RTO, req);
    w.ack(S, w.arrival(r2));
    let o = w.run();
    let s = o.the(RtoStall);
    // The original once, then each of the timer's re-sends.
    assert_eq!(s.frames, o.frames(&[req, r1, r2]));
    assert_ms(s.cost_ms, 3.0 * RTO, EXACT, "240 + 480 ms");
    // Each re-send cited after its original, cited once (nDPI's
    // webex.pcap 34 cited one original four times).
    assert_eq!(o.the(Retransmission).frames, o.frames(&[req, r1, r2]));
}

#[test]
fn a_silence_longer_than_the_longest_timer_is_not_an_rto_stall() {
    // Re-sent 130 s later: beyond Linux's TCP_RTO_MAX (120 s), a clock
    // jump or a collage of captures, not a timer.
    let (w, ..) = lost_request(Path::at_client(RTT), 130_000.0);
    let o = w.run();
    o.the(Retransmission);
    o.has_no(RtoStall);
}

#[test]
fn a_fast_retransmission_is_a_wait_released_by_the_duplicate_ack_that_triggered_it() {
    // As `fast_retransmit`: the client re-sends the moment the third
    // duplicate ACK arrives; its wait runs from its last new segment to
    // the re-send, ended by that ACK.
    for path in [Path::at_client(RTT), Path::mid(RTT, 0.5)] {
        let mut w = Wire::new(path);
        w.handshake(0.0);
        let segs = w.burst(C, 100.0, 5, 0.01);
        w.lose(segs[1]);
        let acks: Vec<Id> = [segs[0], segs[2], segs[3], segs[4]]
            .iter()
            .map(|s| w.ack(S, w.arrival(*s)))
            .collect();
        let again = w.resend(w.arrival(acks[3]) + 0.05, segs[1]);
        w.ack(S, w.arrival(again));
        let silence = w.sent(again) - w.sent(segs[4]);
        let o = w.run();
        let r = o.the(Retransmission);
        assert_waits(
            &r.waits,
            &[o.wait(segs[4], again, Some(acks[3]), silence)],
            EXACT,
        );
        assert_cost_is_its_waits(r);
    }
}

#[test]
fn a_late_original_after_duplicate_acks_at_the_receiver_is_reordering() {
    // Captured at the server: the second of five segments took a path
    // 1 ms slower; the server ACKs the three that overtook it with
    // duplicate ACKs, then the original arrives. The client cannot have
    // answered those duplicate ACKs within 1 ms on a 40 ms path: the hole
    // was filled by the original (Wireshark, counting the duplicate ACKs
    // only, calls it a fast retransmission).
    let mut w = Wire::new(Path::at_server(RTT));
    w.handshake(0.0);
    let segs = w.burst(C, 100.0, 5, 0.01);
    w.delay(segs[1], 1.0);
    for s in [segs[0], segs[2], segs[3], segs[4]] {
        w.ack(S, w.arrival(s));
    }
    w.ack(S, w.arrival(segs[1]));
    let o = w.run();
    assert_eq!(o.report.client_to_server.out_of_order, 1);
    assert_eq!(o.report.client_to_server.retransmissions, 0);
    o.has_no(Retransmission);
}

#[test]
fn a_sack_recovery_resend_of_the_next_hole_right_after_a_new_segment_is_a_retransmission() {
    // A paced stream (a full segment every 5 ms) loses the second and the
    // fourth segments past the capture point. The server's duplicate ACKs
    // SACK what arrived above the first hole; on the third the client
    // re-sends the first hole and, SACK recovery (RFC 6675), the second
    // right behind it, both within 3 ms of its newest segment.
    let mut w = Wire::new(Path::at_client(RTT));
    w.handshake(0.0);
    let segs: Vec<Id> = (0..20)
        .map(|i| w.data(C, 100.0 + 5.0 * i as f64, MSS))
        .collect();
    w.lose(segs[1]);
    w.lose(segs[3]);
    let abs = |w: &Wire, id: Id| {
        let (a, b) = w.span(id);
        (w.abs_seq(C, a), w.abs_seq(C, b))
    };
    let mut dupacks = Vec::new();
    for k in [2, 4, 5, 6, 7] {
        let a = w.ack(S, w.arrival(segs[k]));
        let mut blocks = vec![abs(&w, segs[2])];
        if k >= 4 {
            blocks.push((abs(&w, segs[4]).0, abs(&w, segs[k]).1));
        }
        w.edit(a, |s| {
            for (i, b) in blocks.iter().enumerate() {
                s.options.sack[i] = *b;
            }
            s.options.sack_len = blocks.len() as u8;
        });
        dupacks.push(a);
    }
    let third = dupacks[2];
    let r1 = w.resend(w.arrival(third) + 0.05, segs[1]);
    let r3 = w.resend(w.arrival(third) + 0.06, segs[3]);
    assert!(
        w.sent(r3) - w.sent(segs[13]) < 3.0,
        "within 3 ms of the newest"
    );
    for s in &segs[8..] {
        w.ack(S, w.arrival(*s));
    }
    w.ack(S, w.arrival(r3));
    let o = w.run();
    assert_eq!(o.report.client_to_server.retransmissions, 2);
    assert_eq!(
        o.the(Retransmission).frames,
        o.frames(&[segs[1], r1, segs[3], r3])
    );
}

/// The window a hole held (detect/window_stalls.rs): the server keeps
/// sending through its loss recovery up to the edge the client's
/// cumulative ACK pins at the hole, and sends new data again only when the
/// re-send's ACK moves it.
#[test]
fn a_window_held_at_a_hole_is_the_losses_wait_until_the_repair_is_acknowledged() {
    for path in Path::all(RTT) {
        let (w, stalls, lost) = super::rwnd_limited::losses_holding_the_window(path, 3);
        // Each wait from P to K on the server's clock, released by A; the
        // silence before each re-send (P to R) is inside it, counted once.
        let ms: Vec<f64> = stalls
            .iter()
            .map(|[p, _, _, k]| w.sent(*k) - w.sent(*p))
            .collect();
        let o = w.run_lost(&lost);
        let f = o.the(Retransmission);
        let expected: Vec<Wait> = stalls
            .iter()
            .zip(&ms)
            .map(|([p, _, a, k], ms)| o.wait(*p, *k, Some(*a), *ms))
            .collect();
        assert_waits(&f.waits, &expected, EXACT);
        assert_cost_is_its_waits(f);
        assert!(
            matches!(
                f.detail,
                Detail::Retransmission {
                    window_stalls: 3,
                    ..
                }
            ),
            "{:?}",
            f.detail
        );
        // Each a round trip for the duplicate ACKs and one for the repair.
        for m in ms {
            assert!(m > 2.0 * RTT && m < 2.0 * RTT + 1.0, "{m} ms");
        }
        o.has_no(RtoStall);
    }
}

/// A request answered; at 5 s the client (if `client_closes`) sends its
/// close_notify and FIN; at 5.3 s the server's 27 bytes are lost before
/// the client's capture, its FIN shows the hole, and its timer re-sends
/// them at 6.05 s.
fn closing_loss(client_closes: bool) -> (Outcome, Id) {
    let mut w = Wire::new(Path::at_client(RTT));
    w.handshake(0.0);
    let req = w.data(C, 100.0, 100);
    w.ack(S, w.arrival(req));
    if client_closes {
        let alert = w.data(C, 5_000.0, 27);
        w.fin(C, 5_000.1);
        w.ack(S, w.arrival(alert) + 1.0);
    }
    let lost = w.data(S, 5_300.0, 27);
    w.lose(lost);
    let fin = w.fin(S, 5_300.1);
    w.ack(C, w.arrival(fin));
    let again = w.resend(6_050.0, lost);
    (w.run_missing(&[lost]), again)
}

#[test]
fn a_closing_message_lost_after_the_receiver_closed_costs_no_wait() {
    // many-protocols.pcap stream 49: the client sends its close_notify
    // and FIN; the server's close_notify is lost and re-sent by its timer
    // 750 ms later. Lost, so cited, but nobody waited for it.
    let (o, again) = closing_loss(true);
    let r = o.the(Retransmission);
    assert!(r.frames.contains(&o.frame(again)), "cited: {:?}", r.frames);
    assert_ms(r.cost_ms, 0.0, EXACT, "nobody waited");
    o.has_no(RtoStall);
    // The same loss before the client closed is a stall.
    let (o, _) = closing_loss(false);
    assert_ms(
        o.the(RtoStall).cost_ms,
        749.9,
        EXACT,
        "the server's silence after its FIN",
    );
}

/// How a black-holed connection ends (skype.pcap stream 87): the path
/// drops everything from 1 s; the `closer` writes 8 bytes at 1 s, its
/// timer re-sends them at 1.24 s, its application closes at 2 s (FIN),
/// and the timer re-sends the bytes again at 2.5 s and 3.5 s. The path
/// heals; the peer's own data (if `peer_data`) reaches the closer at
/// 4 s, and the closer answers it with an RST (if `reset`).
fn black_hole_close(closer: Direction, peer_data: bool, reset: bool) -> (Outcome, [Id; 4]) {
    // Captured on the closer's host: its lost packets are in the capture.
    let mut w = Wire::new(if closer == C {
        Path::at_client(RTT)
    } else {
        Path::at_server(RTT)
    });
    w.handshake(0.0);
    let req = w.data(C, 100.0, 100);
    w.ack(S, w.arrival(req));
    let answer = w.data(S, w.arrival(req) + 1.0, 50);
    w.ack(C, w.arrival(answer));
    let last = w.data(closer, 1_000.0, 8);
    let [last, again, fin, after_close] =
        lost_then_closed(&mut w, closer, (last, 1_000.0), 2_000.0, [2_500.0, 3_500.0]);
    if peer_data {
        let peer = w.data(closer.reverse(), 4_000.0 - RTT / 2.0, 55);
        if reset {
            w.rst(closer, w.arrival(peer));
        }
    } else if reset {
        w.rst(closer, 4_000.0);
    }
    (w.run(), [last, again, fin, after_close])
}

#[test]
fn a_client_that_closed_for_good_waited_for_nothing_it_resent_after_its_fin() {
    // It answered the server's new data with an RST: Linux resets data
    // for a socket whose application closed, so nobody read anything
    // after that FIN. The re-sends after it are cited, not counted.
    // (Up to its FIN it sat through the timer's silence.)
    let (o, ids) = black_hole_close(C, true, true);
    assert_waited_until_the_fin(&o, ids, 2_000.0 - 1_000.0 - RTO);
    let s = o.the(RtoStall);
    assert!(!s.frames.contains(&o.frame(ids[3])), "{:?}", s.frames);
}

#[test]
fn a_fin_after_the_timers_resend_is_a_close_for_good_with_or_without_a_reset() {
    // No RST, or one with no data before it: the FIN alone could be
    // shutdown() of the write side (`nc -N`, a half-closing client), but
    // it came a second after the write and after the timer had re-sent
    // it, still unacknowledged: a half-close ends a request as it is
    // written, and this is the application giving up (skype.pcap 87).
    // The waits after the FIN are not counted (those up to it are); a
    // FIN right behind the write keeps them (`closed_at`, above).
    for (peer_data, reset) in [(true, false), (false, true), (false, false)] {
        let (o, ids) = black_hole_close(C, peer_data, reset);
        assert_waited_until_the_fin(&o, ids, 2_000.0 - 1_000.0 - RTO);
    }
}

#[test]
fn a_server_that_closed_for_good_still_owes_the_client_its_resent_response() {
    // The server's last bytes and FIN are what a client waits for; its
    // RST of the client's later data does not make that wait nobody's.
    let (o, [last, again, fin, after_close]) = black_hole_close(S, true, true);
    let s = o.the(RtoStall);
    assert_eq!(s.waits.len(), 3, "{:?}", s.waits);
    assert_waits(
        &s.waits[..2],
        &[
            o.wait(last, again, None, RTO),
            o.wait(fin, after_close, None, 500.0),
        ],
        EXACT,
    );
}

/// A write into a connection the server had closed (nDPI's webex.pcap
/// 34, judged in session 84: 180 bytes written 0.5 ms after the server's
/// FIN reached the client, re-sent four times, told "packets were
/// lost"): every re-sent segment first sent after the server's FIN is
/// said to be that, with the FIN cited and no wait; a segment re-sent
/// that was first sent before the FIN is loss as before.
#[test]
fn re_sends_of_writes_after_the_peer_closed_are_no_loss() {
    let into_closed = |written_after_fin: bool| {
        let mut w = Wire::new(Path::at_client(RTT));
        w.handshake(0.0);
        let req = w.data(C, 100.0, 100);
        w.ack(S, w.arrival(req));
        let answer = w.data(S, w.arrival(req) + 1.0, 50);
        w.ack(C, w.arrival(answer));
        let (fin_at, write_at) = if written_after_fin {
            (1_000.0, 1_000.0 + RTT / 2.0 + 0.5)
        } else {
            (1_000.0 + RTT / 2.0 + 0.5, 1_000.0)
        };
        let fin = w.fin(S, fin_at);
        let write = w.data(C, write_at, 180);
        w.lose(write);
        let mut t = write_at;
        for i in 0..3 {
            t += RTO * f64::from(1u32 << i);
            let again = w.resend(t, write);
            w.lose(again);
        }
        let o = w.run();
        let x = o.the(Retransmission).clone();
        (o.frame(fin), x)
    };
    let (fin, x) = into_closed(true);
    let Detail::Retransmission {
        into_closed: Some(closed),
        ..
    } = x.detail
    else {
        panic!("{:?}", x.detail)
    };
    assert_eq!(closed, fin);
    assert_eq!(x.cost_ms, 0.0);
    assert!(
        matches!(
            x.detail,
            Detail::Retransmission {
                crossed_close: false,
                ..
            }
        ),
        "written after the FIN: {:?}",
        x.detail
    );
    let (_, x) = into_closed(false);
    assert!(
        matches!(
            x.detail,
            Detail::Retransmission {
                into_closed: None,
                ..
            }
        ),
        "{:?}",
        x.detail
    );
}

/// The stall lies in the latency phase its re-send falls in: a request
/// lost and re-sent by the client's timer is its wait for the first
/// byte, and the ledger's excess there is the stall's, not unexplained.
#[test]
fn a_lost_request_is_its_first_bytes_rto_stall_and_the_ledger_adds_up() {
    let mut w = Wire::new(Path::at_client(RTT));
    w.handshake(0.0);
    let req = w.data(C, 100.0, 100);
    w.lose(req);
    let again = w.resend(100.0 + RTO, req);
    w.ack(S, w.arrival(again));
    let answer = w.data(S, w.arrival(again) + 0.5, 200);
    w.ack(C, w.arrival(answer));
    let o = w.run();
    let s = o.the(RtoStall);
    assert_eq!(s.phase, Some(Phase::FirstByte));
    assert_waits(&s.waits, &[o.wait(req, again, None, RTO)], EXACT);
    assert_ms(s.attributed_ms, RTO, EXACT, "the first byte's excess");
    assert!(
        o.report.unexplained_ms < 2.0,
        "unexplained {} ms",
        o.report.unexplained_ms
    );
}

/// A ClientHello lost and re-sent is the TLS handshake's stall, and the
/// handshake's extra round trips name it as their cause.
#[test]
fn a_lost_client_hello_is_the_tls_handshakes_rto_stall() {
    use super::tls::*;
    let mut w = Wire::new(Path::at_client(RTT));
    w.handshake(0.0);
    let ch = w.send(C, 100.0, leak(client_hello(Offer::tls13())));
    w.lose(ch);
    let again = w.resend(100.0 + RTO, ch);
    let go = w.arrival(again);
    let flight: Vec<Id> = segments(&tls13_server_flight(2000, false))
        .into_iter()
        .enumerate()
        .map(|(i, s)| w.send(S, go + i as f64 * 0.01, s))
        .collect();
    let last = *flight.last().unwrap();
    let finished = w.send(C, w.arrival(last), leak(encrypted(FINISHED_LEN)));
    w.ack(S, w.arrival(finished));
    let o = w.run();
    let s = o.the(RtoStall);
    assert_eq!(s.phase, Some(Phase::TlsHandshake));
    assert_waits(&s.waits, &[o.wait(ch, again, None, RTO)], EXACT);
    let t = o.the(FindingKind::TlsExtraRtt);
    let Detail::TlsExtraRtt { causes, .. } = &t.detail else {
        panic!("{:?}", t.detail)
    };
    assert_eq!(causes.first().map(|c| c.0), Some(RtoStall), "{causes:?}");
}

/// A request re-sent by the client's timer `copies` times (backing off:
/// 240, 480, 960 ms ...), the last copy acknowledged.
fn backoff_series(copies: u32) -> Outcome {
    backoff_series_beside(copies, None)
}

/// Like [`backoff_series`], while another of the client's connections
/// receives server data from `from` to `to` ms (a segment every 50 ms).
fn backoff_series_beside(copies: u32, others: Option<(f64, f64)>) -> Outcome {
    backoff_series_ending(copies, others, LastCopy::Acknowledged)
}

/// What became of a backoff series' last copy.
#[derive(Debug, Clone, Copy)]
enum LastCopy {
    /// The server acknowledged it.
    Acknowledged,
    /// The server answered it with a RST.
    Reset,
    /// Lost too.
    Lost,
    /// Lost too, and 2 s later the server closed with a FIN that
    /// acknowledges none of the copies.
    LostThenClosed,
}

/// Like [`backoff_series_beside`], the last copy ending as `last` says.
fn backoff_series_ending(copies: u32, others: Option<(f64, f64)>, last: LastCopy) -> Outcome {
    let mut w = Wire::new(Path::at_client(RTT));
    w.handshake(0.0);
    if let Some((from, to)) = others {
        w.background(1, from, to, 50.0, 1448);
    }
    let req = w.data(C, 100.0, 100);
    w.lose(req);
    let mut t = 100.0;
    let mut rto = RTO;
    for i in 0..copies {
        t += rto;
        rto *= 2.0;
        let again = w.resend(t, req);
        match last {
            _ if i + 1 < copies => w.lose(again),
            LastCopy::Acknowledged => {
                w.ack(S, w.arrival(again));
            }
            LastCopy::Reset => {
                w.rst(S, w.arrival(again));
            }
            LastCopy::Lost => w.lose(again),
            LastCopy::LostThenClosed => {
                w.lose(again);
                w.fin(S, t + 2_000.0);
            }
        }
    }
    w.run()
}

#[test]
fn three_timer_resends_of_the_same_bytes_are_a_black_hole_not_a_tail_loss() {
    // Copy after copy unanswered: the path dropped everything for a
    // while (it healed before the third re-send).
    let o = backoff_series(3);
    let x = o.the(RtoStall);
    assert!(
        matches!(
            x.detail,
            Detail::RtoStall {
                stalls: 3,
                unanswered: true,
                ..
            }
        ),
        "{:?}",
        x.detail
    );
    // Two in a row happen to a lossy path: a loss.
    let o = backoff_series(2);
    let x = o.the(RtoStall);
    assert!(
        matches!(
            x.detail,
            Detail::RtoStall {
                stalls: 2,
                unanswered: false,
                ..
            }
        ),
        "{:?}",
        x.detail
    );
}

/// While the timer's copies went unanswered, another of the client's
/// connections kept receiving: the client's link was up, and what
/// dropped this connection's packets dropped them alone (its server, a
/// filter matching its flow: nDPI's skype.pcap 37, other Skype and
/// Dropbox connections swapping data mid-stall). The other connection's
/// data before the stall began, or after it, says nothing of it.
#[test]
fn a_black_hole_while_the_clients_other_connections_received_is_this_connections_alone() {
    // The stall: from the request at 100 ms to the third re-send at
    // 100 + 240 + 480 + 960 = 1780 ms.
    let o = backoff_series_beside(3, Some((600.0, 1_200.0)));
    let x = o.the(RtoStall);
    let Detail::RtoStall {
        unanswered: true,
        heard_elsewhere: Some((stream, _)),
        ..
    } = x.detail
    else {
        panic!("{:?}", x.detail)
    };
    assert_ne!(stream, x.stream, "another connection's data");
    for (from, to) in [(0.0, 90.0), (1_900.0, 2_500.0)] {
        let o = backoff_series_beside(3, Some((from, to)));
        let x = o.the(RtoStall);
        assert!(
            matches!(
                x.detail,
                Detail::RtoStall {
                    unanswered: true,
                    heard_elsewhere: None,
                    ..
                }
            ),
            "others from {from} to {to} ms: {:?}",
            x.detail
        );
    }
    assert!(matches!(
        backoff_series(3).the(RtoStall).detail,
        Detail::RtoStall {
            heard_elsewhere: None,
            ..
        }
    ));
}

/// The backoff series of [`backoff_series`] (three copies, the last
/// acknowledged), beside another connection of the client's: to the
/// same server and port (`same`) or another server, its request of
/// `bytes` sent at `at` ms (the stall began at 100) and acknowledged on
/// arrival, and its answer 10 ms later (the client heard it).
fn backoff_series_sending_beside(same: bool, at: f64, bytes: u32, resent: u32) -> Outcome {
    let mut other = Wire::new(Path::at_client(RTT));
    other.handshake(at - 60.0);
    let req = other.data(C, at, bytes);
    other.ack(S, other.arrival(req));
    let answer = other.data(S, other.arrival(req) + 10.0, 300);
    other.ack(C, other.arrival(answer));
    let mut w = Wire::new(Path::at_client(RTT));
    w.handshake(0.0);
    if same {
        w.join(other, 50_001, 443);
    } else {
        w.join_server(other, 50_001, "192.0.2.99");
    }
    lost_until_the_third_copy(&mut w, 100.0, resent);
    w.run()
}

/// The client's request of `bytes` at `request_at`, lost, and its
/// timer's copies (RTO, then doubling) lost too until the third, which
/// the server acknowledges.
fn lost_until_the_third_copy(w: &mut Wire, request_at: f64, bytes: u32) {
    let req = w.data(C, request_at, bytes);
    w.lose(req);
    let mut t = request_at;
    let mut rto = RTO;
    for i in 0..3 {
        t += rto;
        rto *= 2.0;
        let again = w.resend(t, req);
        if i < 2 {
            w.lose(again);
        } else {
            w.ack(S, w.arrival(again));
        }
    }
}

/// What the client sent on its other connection during the stall,
/// acknowledged, proves its uplink was up: a drop of this flow's alone,
/// and where that connection was to the same server address and port
/// (nDPI's skype.pcap 72 and 91: another connection to the peer's port
/// acknowledged meanwhile), of state kept for this connection alone. Not
/// data sent before the stall began, nor, where the timer re-sent more
/// than any path carries (536 bytes), less at once (nDPI's alexa-app 110:
/// small segments got through while full-size ones were lost on three
/// connections): then nothing shows the uplink was up. A small segment's
/// way out is shown by any (skype_no_unknown.pcap 72: 5 bytes
/// acknowledged while 8 were re-sent).
#[test]
fn what_the_client_sent_elsewhere_in_a_black_hole_says_whether_its_uplink_was_up() {
    let sent = |o: &Outcome| match o.the(RtoStall).detail {
        Detail::RtoStall {
            unanswered: true,
            heard_elsewhere: Some(_),
            sent_elsewhere,
            ..
        } => sent_elsewhere,
        ref other => panic!("{other:?}"),
    };
    let o = backoff_series_sending_beside(true, 600.0, 200, 100);
    let Some((stream, _, true)) = sent(&o) else {
        panic!("{:?}", sent(&o))
    };
    assert_ne!(stream, o.the(RtoStall).stream);
    let o = backoff_series_sending_beside(false, 600.0, 200, 100);
    assert!(matches!(sent(&o), Some((_, _, false))), "{:?}", sent(&o));
    // Sent before the stall began (acknowledged within it), or smaller
    // than a full-size segment the timer re-sent: no proof.
    assert_eq!(
        sent(&backoff_series_sending_beside(true, 80.0, 200, 100)),
        None
    );
    assert_eq!(
        sent(&backoff_series_sending_beside(true, 600.0, 1000, 1400)),
        None
    );
    let o = backoff_series_sending_beside(true, 600.0, 1400, 1400);
    assert!(matches!(sent(&o), Some((_, _, true))), "{:?}", sent(&o));
    // Both small: any acknowledgment shows the way out.
    let o = backoff_series_sending_beside(true, 600.0, 50, 100);
    assert!(matches!(sent(&o), Some((_, _, true))), "{:?}", sent(&o));
}

/// A black hole the peer had no part in: when a copy got through in the
/// end, the peer acknowledged it in sequence, so it had held the
/// connection all along (nDPI's skype_no_unknown.pcap 36: the server's
/// FIN acknowledging the last copy one round trip after it). A peer that
/// answers the late copy with a RST, or never, proves nothing of the kind.
#[test]
fn a_peer_that_acknowledged_a_late_copy_in_sequence_held_the_connection() {
    let o = backoff_series(3);
    let x = o.the(RtoStall);
    let Detail::RtoStall {
        unanswered: true,
        peer_held: Some(held),
        ..
    } = x.detail
    else {
        panic!("{:?}", x.detail)
    };
    // The server's ACK of the third copy: the capture's last packet.
    assert_eq!(held, o.report.last_frame);
    for last in [LastCopy::Reset, LastCopy::Lost] {
        let o = backoff_series_ending(4, None, last);
        let x = o.the(RtoStall);
        assert!(
            matches!(
                x.detail,
                Detail::RtoStall {
                    unanswered: true,
                    peer_held: None,
                    ..
                }
            ),
            "{last:?}: {:?}",
            x.detail
        );
    }
}

/// A peer that closed with a FIN after the stall, acknowledging none of
/// the copies (skype_no_unknown.pcap 8, skype 46), held the connection
/// too: one that had lost it answers with a RST.
#[test]
fn a_peer_that_closed_with_a_fin_after_the_stall_held_the_connection() {
    let o = backoff_series_ending(3, None, LastCopy::LostThenClosed);
    let x = o.the(RtoStall);
    // The server's FIN: the capture's last packet.
    assert!(
        matches!(x.detail, Detail::RtoStall { peer_held: Some(held), .. } if held == o.report.last_frame),
        "{:?}",
        x.detail
    );
}

#[test]
fn a_receiver_that_gave_up_during_a_timer_silence_waited_until_its_reset() {
    // The request's first re-send is lost too; the server resets the
    // connection 300 ms into the next silence (its timeout); the timer's
    // second re-send comes after that and nobody reads it.
    let mut w = Wire::new(Path::at_client(RTT));
    w.handshake(0.0);
    // (A pure ACK of the server's: its ACKs are in the capture.)
    w.ack(S, 50.0);
    let req = w.data(C, 100.0, 100);
    w.lose(req);
    let again = w.resend(100.0 + RTO, req);
    w.lose(again);
    let rst = w.rst(S, 100.0 + RTO + 300.0);
    let last = w.resend(100.0 + 3.0 * RTO, req);
    let o = w.run();
    let x = o.the(RtoStall);
    // The finding cites the timer's re-sends, whatever its waits end at,
    // behind the original.
    assert_eq!(x.frames, o.frames(&[req, again, last]));
    assert_eq!(x.waits.len(), 2, "{:?}", x.waits);
    assert_eq!(x.waits[0].to_frame, o.frame(again));
    // The second wait ends where the server's RST reached the client.
    assert_eq!(x.waits[1].from_frame, o.frame(again));
    assert_eq!(x.waits[1].to_frame, o.frame(rst));
    assert_ms(
        x.waits[1].ms,
        300.0 + RTT / 2.0,
        EXACT,
        "until the RST arrived",
    );
}

/// The server closes (its FIN, acknowledging none of the client's last
/// message, which is lost) and the client closes after it; the timer's
/// silence begins after both FINs, and its re-send goes to a connection
/// nobody reads: cited, no wait (skype_no_unknown.pcap 64, 68, 71: the
/// peer's FIN, the client's, the peer's RST, then the client's timer).
#[test]
fn a_resend_after_a_silence_begun_once_the_receiver_closed_costs_no_wait() {
    let mut w = Wire::new(Path::at_client(RTT));
    w.handshake(0.0);
    w.ack(S, 50.0);
    let msg = w.data(C, 100.0, 1400);
    w.lose(msg);
    let fin = w.fin(S, 110.0);
    let own_fin = w.fin(C, w.arrival(fin));
    w.rst(S, w.arrival(own_fin));
    let again = w.resend(w.sent(own_fin) + RTO, msg);
    let o = w.run();
    let r = o.the(Retransmission);
    assert!(r.frames.contains(&o.frame(again)), "cited: {:?}", r.frames);
    o.has_no(RtoStall);
    // The message left before the server's FIN: it crossed the close on
    // the way, not written after it (skype.pcap 81, judged in session 86).
    assert!(
        matches!(
            r.detail,
            Detail::Retransmission {
                into_closed: Some(c),
                crossed_close: true,
                ..
            } if c == o.frame(fin)
        ),
        "{:?}",
        r.detail
    );
}

/// An upload longer than the detectors' timeline whose lost segment was
/// repaired after its last new byte (`upload_repaired_late`): the repair's
/// silence was found in a later window, which has no row for a request
/// begun in the timeline; it is the request's loss, in its request ->
/// first byte row, where it explains that row's excess, not a transfer
/// stall beside it.
#[test]
fn an_upload_repaired_past_the_timeline_is_the_requests_loss() {
    let o = upload_repaired_late(0.5);
    let x = o.the_in(Retransmission, Phase::FirstByte);
    assert_eq!(x.waits.len(), 1, "{:?}", x.waits);
    o.has_none_in(Retransmission, Phase::Transfer);
}

/// A client whose first message the path drops: the timer re-sends it at
/// 240 ms past it, the client's application gives up at 400 ms (FIN), and
/// the timer re-sends message and FIN together at 770 ms and 1.7 s.
fn abandoned_first_message(payload: &'static [u8]) -> (Outcome, [Id; 4]) {
    closed_at(payload, 400.0)
}

/// As [`abandoned_first_message`], the client's FIN at `fin_at`.
fn closed_at(payload: &'static [u8], fin_at: f64) -> (Outcome, [Id; 4]) {
    let mut w = Wire::new(Path::at_client(RTT));
    w.handshake(0.0);
    let first = w.send(C, 50.0, payload);
    let ids = lost_then_closed(&mut w, C, (first, 50.0), fin_at, [770.0, 1_700.0]);
    (w.run(), ids)
}

/// A client that let go in its own stall ([`lost_then_closed`]'s `ids`):
/// it waited for its timer once and from that copy to its FIN
/// (`to_fin_ms`), for nothing after; what it re-sent after the FIN is
/// still cited.
fn assert_waited_until_the_fin(o: &Outcome, [first, again, fin, after]: [Id; 4], to_fin_ms: f64) {
    let s = o.the(RtoStall);
    assert_waits(
        &s.waits,
        &[
            o.wait(first, again, None, RTO),
            o.wait(again, fin, None, to_fin_ms),
        ],
        EXACT,
    );
    assert_cost_is_its_waits(s);
    assert!(
        o.the(Retransmission).frames.contains(&o.frame(after)),
        "the re-sends after the FIN are still cited"
    );
}

/// `first` (sent at its time) lost, and the timer's copy RTO later; the
/// `closer`'s FIN at `fin_at`, lost; copies at `later`, lost: `first`,
/// the timer's copy, the FIN and the first copy after it.
fn lost_then_closed(
    w: &mut Wire,
    closer: Direction,
    (first, at): (Id, f64),
    fin_at: f64,
    later: [f64; 2],
) -> [Id; 4] {
    w.lose(first);
    let again = w.resend(at + RTO, first);
    w.lose(again);
    let fin = w.fin(closer, fin_at);
    w.lose(fin);
    let after = w.resend(later[0], first);
    w.lose(after);
    let late = w.resend(later[1], first);
    w.lose(late);
    [first, again, fin, after]
}

/// No TLS client finishes a handshake with its write side shut (its
/// Finished must still go out): a FIN after its ClientHello and before
/// its Finished is a client letting the connection go. It waited for its
/// timer once; for nothing after its FIN (nDPI's skype.pcap 1: 61 s of
/// re-sent ClientHello and FIN had been an `rto_stall`). So does any
/// client whose FIN comes after its timer re-sent what it wrote, still
/// unacknowledged: a half-close ends a request as it is written, before
/// any timer, and nothing shuts its write side that long after its last
/// write to go on waiting (skype.pcap 23, 91: a FIN 1-13 s after the
/// write). A plain request's FIN right behind it may be a half-close
/// whose client reads on: its waits stay counted.
#[test]
fn a_client_that_closed_inside_its_handshake_or_its_stall_waited_for_nothing_after_its_fin() {
    let (o, ids) = abandoned_first_message(leak(client_hello(Offer::tls13())));
    assert_waited_until_the_fin(&o, ids, 400.0 - 50.0 - RTO);

    // (Its wait runs to the FIN: the application sat through the timer's
    // silence until it let go.)
    let (o, ids) = abandoned_first_message(b"GET / HTTP/1.1\r\n\r\n");
    assert_waited_until_the_fin(&o, ids, 400.0 - 50.0 - RTO);

    // The FIN right behind the request, before the timer: a half-close.
    let (o, [_, again, _, after]) = closed_at(b"GET / HTTP/1.1\r\n\r\n", 60.0);
    let s = o.the(RtoStall);
    assert!(
        s.waits.iter().any(|w| w.to_frame == o.frame(after)),
        "{:?} (the timer's copy {})",
        s.waits,
        o.frame(again)
    );
}

/// As [`closed_at`], the FIN 10 ms after the request, with `others`
/// connections of the client's to other servers closed right after it
/// (FINs 0.05 ms apart).
fn closed_with_others(others: u16) -> (Outcome, [Id; 4]) {
    let fin_at = 60.0;
    let mut w = Wire::new(Path::at_client(RTT));
    w.handshake(0.0);
    let first = w.send(C, 50.0, b"MSG 52 bytes");
    let ids = lost_then_closed(&mut w, C, (first, 50.0), fin_at, [770.0, 1_700.0]);
    for i in 0..others {
        let mut other = Wire::new(Path::at_client(RTT));
        other.handshake(0.0);
        let asked = other.send(C, 5.0, b"MSG 8");
        let answer = other.send(S, other.arrival(asked) + 1.0, b"OK");
        other.ack(C, other.arrival(answer));
        other.fin(C, fin_at + 0.05 * f64::from(i + 1));
        w.join_server(other, 50_000 + i, &format!("10.9.0.{}", i + 1));
    }
    (w.run(), ids)
}

/// An application that closes its connections together (a teardown:
/// it quit, or dropped the spare attempts of a race) let go of each: a
/// write's loss after that close, its timer's copies, waited on by
/// nobody (nDPI's skype.pcap 69: the FIN 47 ms after a 52-byte write,
/// with six other connections' in 0.1 ms, the copy 1.3 s later counted
/// as a stall; judged in session 86). One close alone right behind the
/// write may be a half-close whose client reads on: its waits stay.
#[test]
fn a_write_lost_just_before_a_teardown_was_waited_on_by_nobody() {
    let (o, [first, ..]) = closed_with_others(2);
    o.has_no(RtoStall);
    assert!(o.the(Retransmission).frames.contains(&o.frame(first)));
    // One other close: no act of the application's shown.
    for others in [0, 1] {
        let (o, [_, again, ..]) = closed_with_others(others);
        let s = o.the(RtoStall);
        assert!(
            s.waits.iter().any(|w| w.to_frame == o.frame(again)),
            "{others}: {:?}",
            s.waits
        );
    }
}

/// A request answered, the answer lost past the capture point on its way
/// to the client, and the server's first re-send of it too (`deaf`), or
/// only the answer (a loss). The client's timer re-sends the request at
/// 240 ms and again at 720 ms after it (its ACKs carry nothing of the
/// answer); the server's (its timer 300 ms) at 300 and 900 ms after the
/// answer, the second delivered.
fn answer_unheard(path: Path, deaf: bool) -> (Outcome, [Id; 3]) {
    const SERVER_RTO: f64 = 300.0;
    let mut w = Wire::new(path);
    w.handshake(0.0);
    let req = w.data(C, 100.0, 100);
    let answer_at = w.arrival(req) + 1.0;
    let answer = w.data(S, answer_at, 50);
    w.lose(answer);
    let again = w.resend(100.0 + RTO, req);
    let repair = w.resend(answer_at + SERVER_RTO, answer);
    if deaf {
        w.lose(repair);
        w.resend(100.0 + 3.0 * RTO, req);
        let last = w.resend(answer_at + 3.0 * SERVER_RTO, answer);
        w.ack(C, w.arrival(last));
    } else {
        w.ack(C, w.arrival(repair));
    }
    // (Captured wherever the capture is: at the client's host, what
    // reached its capture and not its TCP.)
    (w.run(), [answer, again, repair])
}

/// The client re-sent a request the server had answered, well after the
/// answer passed the capture point, and acknowledged nothing of it: the
/// answer never reached the client's TCP. When the server's re-send of
/// the answer went unheard too, the client heard nothing of the
/// server's: the server's stall names that (what it sent was lost past
/// the capture point, on its way to the client), not a tail loss. At the
/// client's host the capture saw the answer arrive: its re-sends are
/// still repairs, its TCP never had it. One answer lost and its repair
/// heard is a loss.
#[test]
fn a_server_stalled_while_its_client_heard_nothing_names_the_deaf_client() {
    for path in [Path::mid(RTT, 0.5), Path::at_client(RTT)] {
        let (o, [answer, again, _]) = answer_unheard(path, true);
        let x = o.the(RtoStall);
        let Detail::RtoStall {
            sender: Direction::ServerToClient,
            stalls: 2,
            deaf: Some(d),
            ..
        } = x.detail
        else {
            panic!("{path:?}: {:?}", x.detail)
        };
        assert_eq!(d.side, C, "{path:?}");
        assert_eq!(d.missed_frame, o.frame(answer), "{path:?}");
        assert_eq!(d.resend_frame, o.frame(again), "{path:?}");
        // The server's two timers: 300 + 600 ms.
        assert_ms(x.cost_ms, 900.0, EXACT, "the server's silences");
        // The request re-sent after the answer acknowledged it: not
        // counted, a needless copy.
        assert!(
            !o.report
                .findings
                .iter()
                .any(|f| f.kind == RtoStall && f.frames.contains(&o.frame(again))),
            "{path:?}"
        );
    }
    // One answer lost, its repair heard: a loss, the server's one timer
    // (at the client's host too: the client's re-send showed its TCP
    // never had the answer its capture saw).
    for path in [Path::mid(RTT, 0.5), Path::at_client(RTT)] {
        let (o, _) = answer_unheard(path, false);
        let x = o.the(RtoStall);
        assert_ms(x.cost_ms, 300.0, EXACT, "the server's timer");
        assert!(
            matches!(
                x.detail,
                Detail::RtoStall {
                    sender: Direction::ServerToClient,
                    deaf: None,
                    ..
                }
            ),
            "{path:?}: {:?}",
            x.detail
        );
    }
}

/// A request lost, and the client's FIN `fin_ms` after it; its timer's
/// copies (a slow path's: 1.3 s, as Skype's relays had) at 1.3 s, lost,
/// and 3.9 s, delivered, acknowledged and answered; the client's RST to
/// the answer.
fn closed_on_a_lost_request(fin_ms: f64) -> (Outcome, [Id; 2]) {
    const TIMER: f64 = 1_300.0;
    let mut w = Wire::new(Path::at_client(RTT));
    w.handshake(0.0);
    let first = w.send(C, 50.0, b"GET / HTTP/1.1\r\n\r\n");
    w.lose(first);
    let fin = w.fin(C, 50.0 + fin_ms);
    let copy = w.resend(50.0 + TIMER, first);
    w.lose(copy);
    let last = w.resend(50.0 + 3.0 * TIMER, first);
    let answer_at = w.arrival(last) + 1.0;
    w.ack(S, answer_at);
    let answer = w.data(S, answer_at + 0.1, 200);
    w.rst(C, w.arrival(answer));
    (w.run(), [first, fin])
}

/// A client's 100 bytes at 50 ms, lost, and its timer's `copies` copies,
/// backing off from [`RTO`], every one lost: the wire, when the last
/// copy left, and the 100 bytes.
fn lost_copy_after_copy(copies: usize) -> (Wire, f64, Id) {
    let mut w = Wire::new(Path::at_client(RTT));
    w.handshake(0.0);
    let first = w.data(C, 50.0, 100);
    w.lose(first);
    let (mut t, mut rto) = (50.0, RTO);
    for _ in 0..copies {
        t += rto;
        rto *= 2.0;
        let again = w.resend(t, first);
        w.lose(again);
    }
    (w, t, first)
}

/// A client that let go after its timer's copies (its FIN 65 ms after
/// the third, lost like them) and sent none after it (nDPI's skype.pcap
/// 57: its RST next): its copies all came before it let go. Where its
/// kernel sent the bytes again behind the FIN (skype.pcap 63), copies
/// came after, too.
#[test]
fn copies_after_letting_go_are_told_only_where_the_kernel_sent_them() {
    let after = |o: &Outcome| match o.the(RtoStall).detail {
        Detail::RtoStall {
            gave_up: Some(_),
            resent_after_giving_up,
            ..
        } => resent_after_giving_up,
        ref other => panic!("{other:?}"),
    };
    let (o, _) = closed_on_a_lost_request(1_100.0);
    assert!(after(&o));
    let (mut w, t, _) = lost_copy_after_copy(3);
    let fin = w.fin(C, t + 65.0);
    w.lose(fin);
    assert!(!after(&w.run()));
    // The kernel's one copy after the FIN got through, acknowledged at
    // once (nDPI's skype.pcap 50, judged in session 88): no copy went
    // unanswered after the application let go.
    let (mut w, t, first) = lost_copy_after_copy(3);
    let fin = w.fin(C, t + 65.0);
    w.lose(fin);
    let copy = w.resend(t + 8.0 * RTO, first);
    w.ack(S, w.arrival(copy));
    assert!(!after(&w.run()));
}

/// A client whose request was lost let go before its timer re-sent it:
/// its FIN 1.1 s after the request (a second or more: an application's
/// or a person's timeout, no half-close right behind a request), the
/// request never acknowledged, the copies after it (nDPI's skype.pcap
/// 63: 8 bytes, the FIN 1.1 s after them). It waited from the request to
/// its FIN: the `rto_stall`'s one wait, worded as its giving up, and the
/// first-byte row ends at the FIN, its excess that wait less the round
/// trip the ideal has; the answer after it waited for nobody. A FIN
/// 10 ms or 500 ms after the request, before any re-send, may be the
/// application's plan (a half-close, a close it meant): the answer after
/// it is nobody's, as before.
#[test]
fn a_client_that_let_go_of_a_lost_request_before_its_timer_waited_until_its_fin() {
    let (o, [first, fin]) = closed_on_a_lost_request(1_100.0);
    let s = o.the(RtoStall);
    assert_waits(&s.waits, &[o.wait(first, fin, None, 1_100.0)], EXACT);
    assert!(
        matches!(s.detail, Detail::RtoStall { gave_up: Some(g), .. } if g == o.frame(fin)),
        "{:?}",
        s.detail
    );
    let row = o.first_byte_row(1);
    assert_eq!(row.end_frame, o.frame(fin), "{row:?}");
    assert_ms(row.excess_ms.unwrap(), 1_100.0 - RTT, 0.5, "to the FIN");
    assert!(row.ideal_basis.contains("gave up"), "{}", row.ideal_basis);
    for early in [10.0, 500.0] {
        let (o, [_, fin]) = closed_on_a_lost_request(early);
        let row = o.first_byte_row(1);
        assert_ne!(row.end_frame, o.frame(fin), "{early}: {row:?}");
        assert!(!row.ideal_basis.contains("gave up"), "{}", row.ideal_basis);
    }
}

/// The second of five segments lost before the capture point (a capture
/// at the receiving server): its re-send fills the hole, and the finding
/// cites it alone and counts its original unseen; at the sending client
/// both, none unseen.
#[test]
fn a_resend_whose_original_the_capture_missed_is_cited_alone() {
    for (path, unseen) in [(Path::at_server(RTT), 1), (Path::at_client(RTT), 0)] {
        let (w, segs, again) = fast_retransmit(path);
        let o = w.run_lost(&[segs[1]]);
        let r = o.the(Retransmission);
        let expected = if unseen == 1 {
            vec![again]
        } else {
            vec![segs[1], again]
        };
        assert_eq!(r.frames, o.frames(&expected), "{path:?}");
        assert!(
            matches!(r.detail, Detail::Retransmission { originals_unseen, .. } if originals_unseen == unseen),
            "{path:?}: {:?}",
            r.detail
        );
    }
}

/// How long the connection had been quiet before its stall began: a
/// connection quiet no longer than a NAT's idle timeout lost no mapping
/// to idleness (nDPI's skype_no_unknown.pcap 67: 0.1 s old). The
/// longest silence before the lost segment, either way.
#[test]
fn a_stall_says_how_long_the_connection_had_been_quiet_before_it() {
    let quiet = |request_at: f64| {
        let mut w = Wire::new(Path::at_client(RTT));
        w.handshake(0.0);
        lost_until_the_third_copy(&mut w, request_at, 100);
        match w.run().the(RtoStall).detail {
            Detail::RtoStall {
                quiet_before_ms, ..
            } => quiet_before_ms,
            ref other => panic!("{other:?}"),
        }
    };
    // The handshake's ACK at one round trip, the request 60 ms later.
    assert_ms(
        quiet(100.0),
        100.0 - RTT,
        0.01,
        "request after the handshake",
    );
    assert_ms(quiet(60_000.0), 60_000.0 - RTT, 0.01, "a minute idle");
}

/// A client whose data its timer re-sent four times, backing off, every
/// copy lost, then reset: an RST one backoff after the last copy (as
/// long as the interval before it, or up to twice that) is its kernel
/// dropping the connection as the timer fired once more (BSD's and
/// macOS's after 12 re-sends: nDPI's skype.pcap 3, judged in session 85,
/// had read "its application gave up"); one sooner is its application's.
#[test]
fn an_rst_a_backoff_after_the_last_copy_is_the_kernel_giving_up() {
    let kernel = |after_last: f64| {
        let (mut w, t, _) = lost_copy_after_copy(4);
        w.rst(C, t + after_last);
        match w.run().the(RtoStall).detail {
            Detail::RtoStall {
                gave_up: Some(_),
                kernel_gave_up,
                ..
            } => kernel_gave_up,
            ref other => panic!("{other:?}"),
        }
    };
    assert!(kernel(RTO * 16.0));
    assert!(kernel(RTO * 8.0));
    assert!(!kernel(RTO * 3.0));
}
