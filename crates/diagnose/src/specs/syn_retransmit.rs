//! `syn_retransmit` (detect/syn_retransmit.rs).
//!
//! > Signature: several SYNs (no ACK flag) with the same sequence number on
//! > one connection, the earlier ones unanswered (SYNs after the server's
//! > RST are retries of a refused connection: ending `refused`, nothing
//! > lost). The kernel resends an unanswered SYN after 1 s, then 3 s ...
//! > Cost: first SYN to the last one (the timeouts waited).

use super::*;
use crate::model::{Detail, Ending, Phase};
use FindingKind::SynRetransmit;

const RTT: f64 = 40.0;
const EXACT: f64 = 1e-3;

/// SYNs at `times` (all but the last lost past the capture point), then
/// the handshake completes on the last.
fn syns(path: Path, times: &[f64]) -> (Wire, Vec<Id>) {
    let mut w = Wire::new(path);
    let ids: Vec<Id> = times.iter().map(|t| w.syn(*t)).collect();
    for id in &ids[..ids.len() - 1] {
        w.lose(*id);
    }
    let last = *ids.last().unwrap();
    let sa = w.syn_ack(w.arrival(last));
    w.ack(C, w.arrival(sa));
    (w, ids)
}

#[test]
fn a_syn_sent_again_after_the_kernels_timeout_is_a_syn_retransmit() {
    // Linux: the first SYN's timer is 1 s, then doubles.
    for path in [Path::at_client(RTT), Path::mid(RTT, 0.5)] {
        for times in [vec![0.0, 1000.0], vec![0.0, 1000.0, 3000.0]] {
            let (w, ids) = syns(path, &times);
            let o = w.run();
            let f = o.the(SynRetransmit);
            assert_eq!(f.phase, Some(Phase::TcpHandshake));
            assert_eq!(f.frames, o.frames(&ids));
            // Both ends are the client's SYNs: exact at any vantage.
            assert_ms(
                f.cost_ms,
                *times.last().unwrap(),
                EXACT,
                "first to last SYN",
            );
        }
    }
}

#[test]
fn a_syn_retransmit_is_a_wait_from_the_first_syn_to_the_last() {
    let (w, _) = syns(Path::at_client(RTT), &[0.0, 1000.0]);
    assert_cost_is_its_waits(w.run().the(SynRetransmit));
}

#[test]
fn a_single_syn_is_not_a_syn_retransmit() {
    let (w, _) = syns(Path::at_client(RTT), &[0.0]);
    w.run().has_no(SynRetransmit);
}

#[test]
fn syns_after_the_servers_reset_are_a_refused_connection_not_loss() {
    let mut w = Wire::new(Path::at_client(RTT));
    for t in [0.0, 500.0, 1000.0] {
        let syn = w.syn(t);
        w.rst(S, w.arrival(syn));
    }
    let o = w.run();
    assert_eq!(o.report.ending, Ending::Refused);
    o.has_no(SynRetransmit);
}

#[test]
fn a_syn_ack_sent_again_is_not_the_clients_syn_retransmit() {
    // The client's handshake ACK is lost: the server re-sends its SYN-ACK
    // after 1 s and the client ACKs again. One SYN.
    let mut w = Wire::new(Path::at_client(RTT));
    let syn = w.syn(0.0);
    let sa = w.syn_ack(w.arrival(syn));
    let ack = w.ack(C, w.arrival(sa));
    w.lose(ack);
    let again = w.syn_ack(w.sent(sa) + 1000.0);
    w.ack(C, w.arrival(again));
    let o = w.run();
    assert_eq!(o.report.handshake.syn_ack_retransmits, 1);
    o.has_no(SynRetransmit);
}

#[test]
fn each_syn_timeout_is_a_wait_from_one_syn_to_the_next() {
    let (w, ids) = syns(Path::at_client(RTT), &[0.0, 1000.0, 3000.0]);
    let o = w.run();
    let f = o.the(SynRetransmit);
    assert_waits(
        &f.waits,
        &[
            o.wait(ids[0], ids[1], None, 1000.0),
            o.wait(ids[1], ids[2], None, 2000.0),
        ],
        EXACT,
    );
}

#[test]
fn a_syn_repeated_after_longer_than_the_longest_timer_is_not_a_timeout() {
    // 130 s apart: beyond Linux's TCP_RTO_MAX (120 s), a clock jump or a
    // collage of captures, not a SYN timer.
    let (w, _) = syns(Path::at_client(RTT), &[0.0, 130_000.0]);
    w.run().has_no(SynRetransmit);
}

/// The SYN-ACK the finding says arrived late (its detail's frame).
fn answered_late(o: &Outcome) -> Option<u64> {
    match o.the(SynRetransmit).detail {
        Detail::SynRetransmit { answered_late, .. } => answered_late,
        ref other => panic!("{other:?}"),
    }
}

/// A SYN answered at once, its SYN-ACK held on the way back past the
/// client's 1 s timer: the client sends its SYN again (answered again),
/// and its ACK of the handshake echoes the first SYN-ACK's TSval
/// (`echo_first`) or the second's. Captured at `path`.
fn late_syn_ack(path: Path, echo_first: bool) -> (Outcome, [Id; 3]) {
    let mut w = Wire::new(path);
    let first = w.syn(0.0);
    let answer = w.syn_ack(w.arrival(first));
    let again = w.syn(1000.0);
    let answer_again = w.syn_ack(w.arrival(again));
    let ack = w.ack(C, 1500.0);
    w.edit(answer, |s| s.options.timestamps = Some((500, 1)));
    w.edit(answer_again, |s| s.options.timestamps = Some((1500, 1)));
    w.edit(ack, |s| {
        s.options.timestamps = Some((2, if echo_first { 500 } else { 1500 }))
    });
    (w.run(), [first, answer, ack])
}

#[test]
fn a_syn_sent_again_though_its_syn_ack_arrived_late_names_the_path_not_a_drop() {
    // Seen before the second SYN at the server's side of the path (or in
    // its middle), the first SYN-ACK answered the first SYN; the client's
    // ACK echoing it says it arrived: nothing was lost.
    for path in [Path::at_server(RTT), Path::mid(RTT, 0.5)] {
        let (o, [first, answer, ack]) = late_syn_ack(path, true);
        let f = o.the(SynRetransmit);
        // The client waited until that answer reached it (its ACK), the
        // timer's re-send needless: all of it but a handshake's round
        // trip (as the ledger read it).
        let rtt = o.report.rtt_ms.unwrap();
        assert_waits(
            &f.waits,
            &[o.wait(first, ack, Some(answer), 1500.0 - rtt)],
            EXACT,
        );
        assert_cost_is_its_waits(f);
        assert_eq!(answered_late(&o), Some(o.frame(answer)));
        // Echoing the second SYN-ACK, the first may have been lost.
        let (o, _) = late_syn_ack(path, false);
        assert_eq!(answered_late(&o), None);
    }
}

/// Without timestamps, the client's ACK answers the only SYN-ACK the
/// capture holds before it: one captured before the second SYN, within
/// the server's own SYN-ACK timer of the first, arrived late (nDPI's
/// alexa-app.pcapng 64, judged wrong in session 85: told lost). Not where
/// another SYN-ACK came between the second SYN and the ACK (either may be
/// the one taken), nor one a second or more after the first SYN (the
/// server's timer's re-send of a lost one).
#[test]
fn without_timestamps_the_only_syn_ack_before_the_ack_was_taken_late() {
    let run = |answered_at: f64, again_at: f64, second_answered: bool| {
        let mut w = Wire::new(Path::mid(RTT, 0.5));
        w.syn(0.0);
        let answer = w.syn_ack(answered_at);
        let again = w.syn(again_at);
        if second_answered {
            w.syn_ack(w.arrival(again));
        }
        w.ack(C, again_at + RTT);
        let o = w.run();
        (answered_late(&o), o.frame(answer))
    };
    let (late, answer) = run(RTT / 2.0, 1000.0, false);
    assert_eq!(late, Some(answer));
    assert_eq!(run(RTT / 2.0, 1000.0, true).0, None);
    // (A client whose second SYN left 3 s on: the SYN-ACK 1.2 s after the
    // first is the server's timer's.)
    assert_eq!(run(1200.0, 3000.0, false).0, None);
    assert!(run(900.0, 3000.0, false).0.is_some());
}

#[test]
fn a_syn_ack_the_servers_timer_sent_again_before_the_second_syn_is_no_late_answer() {
    // The server's first SYN-ACK lost before the capture point; its timer
    // sends it again a second later, just before the client's second SYN
    // passes: the client's ACK echoes that re-send, and a SYN-ACK was
    // lost after all.
    let mut w = Wire::new(Path::mid(RTT, 0.5));
    let first = w.syn(0.0);
    let lost = w.syn_ack(w.arrival(first));
    w.lose(lost);
    let resent = w.syn_ack(w.arrival(first) + 1000.0);
    let again = w.syn(1000.0 + RTT / 2.0);
    let ack = w.ack(C, w.arrival(resent));
    w.edit(lost, |s| s.options.timestamps = Some((500, 1)));
    w.edit(resent, |s| s.options.timestamps = Some((1500, 1)));
    w.edit(again, |s| s.options.timestamps = Some((1001, 0)));
    w.edit(ack, |s| s.options.timestamps = Some((1002, 1500)));
    assert_eq!(answered_late(&w.run()), None);
}

/// Whether the finding says nothing answered any SYN.
fn unanswered(o: &Outcome) -> bool {
    match o.the(SynRetransmit).detail {
        Detail::SynRetransmit { unanswered, .. } => unanswered,
        ref d => panic!("{d:?}"),
    }
}

#[test]
fn syns_nothing_answered_are_a_connection_that_never_opened() {
    // pypacker's ether.pcap: three SYNs, 1 s and 2 s apart, and no
    // answer of any kind.
    let mut w = Wire::new(Path::at_client(RTT));
    for t in [0.0, 1000.0, 3000.0] {
        let syn = w.syn(t);
        w.lose(syn);
    }
    let o = w.run();
    assert!(unanswered(&o));
    assert_ms(
        o.the(SynRetransmit).cost_ms,
        3000.0,
        EXACT,
        "first to last SYN",
    );
    // Answered in the end: the SYN timer's wait, not a connection that
    // never opened.
    let (w, _) = syns(Path::at_client(RTT), &[0.0, 1000.0, 3000.0]);
    assert!(!unanswered(&w.run()));
    // A capture of the client's packets alone (nDPI's ocs.pcap, a phone's
    // own): no SYN-ACK in it, but the client's ACK and request after its
    // second SYN say one came; the timer's wait, as above.
    let (mut w, _) = syns(Path::at_client(RTT), &[0.0, 1000.0]);
    w.send(C, 1000.0 + RTT + 0.1, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    let o = w.run_where(|dir| dir == C);
    assert!(!unanswered(&o));
    assert_ms(
        o.the(SynRetransmit).cost_ms,
        1000.0,
        EXACT,
        "the timer's wait",
    );
}

/// Whether the finding says the capture kept the clients' direction only.
fn one_way(o: &Outcome) -> bool {
    match o.the(SynRetransmit).detail {
        Detail::SynRetransmit {
            one_way_capture, ..
        } => one_way_capture,
        ref d => panic!("{d:?}"),
    }
}

/// SYNs sent again and never acknowledged (at 0, 1 s and 3 s), beside
/// another connection of the client's that opened and carried a request:
/// the whole capture, or (`clients_only`) the clients' packets alone.
fn unopened_beside_another(clients_only: bool) -> Outcome {
    let mut w = Wire::new(Path::at_client(RTT));
    for t in [0.0, 1000.0, 3000.0] {
        let syn = w.syn(t);
        w.lose(syn);
    }
    let mut other = Wire::new(Path::at_client(RTT));
    let [_, _, ack] = other.handshake(500.0);
    let request = other.send(C, other.sent(ack), b"GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    let answer = other.send(S, other.arrival(request) + 1.0, bytes(300));
    other.ack(C, other.arrival(answer));
    w.join(other, 40001, 443);
    match clients_only {
        true => w.run_where(|dir| dir == C),
        false => w.run(),
    }
}

#[test]
fn syns_nothing_answered_in_a_capture_of_the_clients_direction_say_so() {
    // nDPI's ocs.pcap: every frame the phone's; another connection's ACK
    // and request say answers came that the capture did not keep.
    let o = unopened_beside_another(true);
    assert!(unanswered(&o) && one_way(&o));
    let o = unopened_beside_another(false);
    assert!(unanswered(&o) && !one_way(&o));
    // Nothing else in the capture: nothing says a direction is missing.
    let mut w = Wire::new(Path::at_client(RTT));
    for t in [0.0, 1000.0] {
        let syn = w.syn(t);
        w.lose(syn);
    }
    let o = w.run();
    assert!(unanswered(&o) && !one_way(&o));
    // nDPI's MacOS capture.pcap: no SYN-ACK anywhere (the capture began
    // after the other connection's handshake), but that server's packets
    // are in it: both directions kept.
    let mut w = Wire::new(Path::at_client(RTT));
    for t in [0.0, 1000.0, 3000.0] {
        let syn = w.syn(t);
        w.lose(syn);
    }
    let mut other = Wire::new(Path::at_client(RTT));
    let [syn, syn_ack, ack] = other.handshake(500.0);
    let request = other.send(C, other.sent(ack), b"GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    let answer = other.send(S, other.arrival(request) + 1.0, bytes(300));
    other.ack(C, other.arrival(answer));
    let joined = w.join(other, 40001, 443);
    let o = w.run_missing(&[joined.id(syn), joined.id(syn_ack)]);
    assert!(unanswered(&o) && !one_way(&o));
}

/// The SYN-ACK the finding says answered the first SYN before the client
/// sent it again (its detail's frame), and whether the capture is the
/// client's.
/// The first SYN reached the server, which kept it, and its SYN-ACK was
/// lost on the way back (a capture at the client never sees it); the
/// client's timer sent the SYN again, and the server answered the copy
/// echoing the SYN it kept (`echo_first`, as Linux does) or, had it kept
/// nothing of the first (lost on the way, or dropped by a full queue),
/// the copy's own TSval.
fn syn_ack_lost_on_the_way_back(echo_first: bool) -> (Outcome, [Id; 3]) {
    let mut w = Wire::new(Path::at_client(RTT));
    let first = w.syn(0.0);
    let lost = w.syn_ack(w.arrival(first));
    let again = w.syn(1000.0);
    let answer = w.syn_ack(w.arrival(again));
    w.ack(C, w.arrival(answer));
    w.edit(first, |s| s.options.timestamps = Some((100, 0)));
    w.edit(again, |s| s.options.timestamps = Some((1100, 0)));
    let echo = if echo_first { 100 } else { 1100 };
    w.edit(answer, |s| s.options.timestamps = Some((7, echo)));
    (w.run_missing(&[lost]), [first, again, answer])
}

#[test]
fn a_syn_ack_echoing_an_earlier_syn_says_that_syn_arrived() {
    // nDPI's skype_no_unknown.pcap 38: the server had the first SYN, so
    // neither it nor a full queue cost the second; its answer was lost.
    let (o, [first, _, answer]) = syn_ack_lost_on_the_way_back(true);
    let x = o.the(SynRetransmit);
    assert!(
        matches!(x.detail, Detail::SynRetransmit { echoed_syn: Some((sa, syn)), .. }
            if sa == o.frame(answer) && syn == o.frame(first)),
        "{:?}",
        x.detail
    );
    // The client waited its timer all the same.
    assert_ms(x.cost_ms, 1000.0, EXACT, "first to last SYN");
    // Echoing the copy, the first SYN may have been lost or dropped.
    let (o, _) = syn_ack_lost_on_the_way_back(false);
    assert!(matches!(
        o.the(SynRetransmit).detail,
        Detail::SynRetransmit {
            echoed_syn: None,
            ..
        }
    ));
}

fn answer_lost(o: &Outcome) -> (Option<u64>, bool) {
    match o.the(SynRetransmit).detail {
        Detail::SynRetransmit {
            answer_lost,
            answer_captured_at_client,
            ..
        } => (answer_lost, answer_captured_at_client),
        ref d => panic!("{d:?}"),
    }
}

/// A SYN answered at once, its SYN-ACK `lost` past the capture point or
/// not (the client's TCP dropping it after a capture at the client),
/// the SYN sent again after the client's 1 s timer and that one answered;
/// with `relay`, both SYN-ACKs without any option (a relay's own TCP).
/// Returns the outcome and the first SYN-ACK.
fn answered_then_sent_again(path: Path, lost: bool, relay: bool) -> (Outcome, Id) {
    let mut w = Wire::new(path);
    let first = w.syn(0.0);
    let answer = w.syn_ack(w.arrival(first));
    if lost {
        w.lose(answer);
    }
    let again = w.syn(1000.0);
    let answer_again = w.syn_ack(w.arrival(again));
    if relay {
        for sa in [answer, answer_again] {
            w.edit(sa, |s| s.options.mss = None);
        }
    }
    w.ack(C, w.arrival(answer_again));
    (w.run(), answer)
}

#[test]
fn a_syn_answered_before_it_was_sent_again_lost_its_syn_ack_not_itself() {
    // nDPI's tls_port_80.pcapng: every SYN answered within a round trip
    // at the capture point, and the client's timer sent it again all the
    // same: the SYN-ACKs died on the way to the client.
    for path in [Path::at_server(RTT), Path::mid(RTT, 0.5)] {
        let (o, answer) = answered_then_sent_again(path, true, false);
        // The client still waited its timer.
        assert_ms(
            o.the(SynRetransmit).cost_ms,
            1000.0,
            EXACT,
            "first to last SYN",
        );
        assert_eq!(answer_lost(&o), (Some(o.frame(answer)), false));
    }
    // Captured at the client: the SYN-ACK reached its host, and its TCP
    // sent the SYN again (a host firewall drops after the capture).
    let (o, answer) = answered_then_sent_again(Path::at_client(RTT), false, false);
    assert_eq!(answer_lost(&o), (Some(o.frame(answer)), true));
    // Behind a relay that answered the SYN itself (its SYN-ACK without
    // any option, a phone's VPN capture app), the capture's times are
    // when the relay read each packet: nothing says the SYN-ACK was lost
    // (webex.pcap's 24-30).
    let (o, _) = answered_then_sent_again(Path::mid(RTT, 0.5), false, true);
    assert!(o.report.handshake.relay);
    assert_eq!(answer_lost(&o), (None, false));
    // The SYN lost, nothing answered it before the second: no answer
    // lost, the words name the drop as before.
    let (w, _) = syns(Path::mid(RTT, 0.5), &[0.0, 1000.0]);
    assert_eq!(answer_lost(&w.run()), (None, false));
}

/// A client whose clock (1 kHz, read off its SYNs over half a minute)
/// spaced its two SYNs `ticks` apart, the capture next to it seeing the
/// first 975 ms after it left, 25 ms before the second; the SYN-ACK
/// answers the first, one round trip after it was captured. Returns the
/// outcome and that SYN-ACK.
fn held_before_capture(ticks: u32) -> (Outcome, Id) {
    const TSVAL: u32 = 19_706_089;
    let mut w = Wire::new(Path::at_client(RTT));
    let first = w.syn(975.0);
    let again = w.syn(1000.0);
    for (id, tsval) in [(first, TSVAL), (again, TSVAL + ticks)] {
        w.edit(id, |s| s.options.timestamps = Some((tsval, 0)));
    }
    let answer = w.syn_ack(w.arrival(first));
    w.ack(C, w.arrival(answer));
    let req = w.data(C, 1100.0, 100);
    w.ack(S, w.arrival(req));
    let resp = w.data(S, w.arrival(req) + 1.0, 300);
    w.ack(C, w.arrival(resp));
    // The client's next connection, half a minute on: its SYN tells its
    // clock's rate.
    let next = w.syn(30_975.0);
    w.edit(next, |s| {
        s.src_port = 40_001;
        s.options.timestamps = Some((TSVAL + 30_000, 0));
    });
    (w.run(), answer)
}

/// A SYN held on the client's side of the capture point (nDPI's
/// hpvirtgrp.pcap 6: its SYNs 997 ticks of a 1 kHz clock apart, captured
/// 26 ms apart, the SYN-ACK one round trip after the first): the client
/// waited its timer's second, timed by its clock; nothing was lost
/// beyond the capture point, the SYN-ACK answered the first SYN. Where
/// its clock spaces the SYNs as captured, the capture's gap stands, as a
/// drop.
#[test]
fn a_syn_held_before_the_capture_point_is_timed_by_the_clients_clock() {
    let (o, answer) = held_before_capture(1000);
    let x = o.the(SynRetransmit);
    assert_ms(x.cost_ms, 1000.0, EXACT, "the client's clock");
    match &x.detail {
        Detail::SynRetransmit {
            held_before_capture: Some(held),
            answer_lost: None,
            relay_client_clock: None,
            ..
        } => {
            assert_eq!(held.hz, Some(1000));
            assert_ms(held.client_ms, 1000.0, EXACT, "by its clock");
            assert_ms(held.captured_ms, 25.0, EXACT, "as captured");
            assert_eq!(held.answered_first, Some(o.frame(answer)));
        }
        d => panic!("{d:?}"),
    }
    let (o, _) = held_before_capture(25);
    let x = o.the(SynRetransmit);
    assert_ms(x.cost_ms, 25.0, EXACT, "as captured");
    assert!(
        matches!(
            x.detail,
            Detail::SynRetransmit {
                held_before_capture: None,
                ..
            }
        ),
        "{:?}",
        x.detail
    );
}

/// nDPI's alexa-app.pcapng 12: seven SYNs over 63 s, nothing answering,
/// and the client's RST 64 s after the last (its timer's last wait,
/// twice the one before): the client waited from its first SYN to its
/// giving up, both its timer's. Without the RST the capture does not say
/// when it gave up: first to last SYN.
#[test]
fn a_client_that_gave_up_on_an_unanswered_syn_waited_until_it_did() {
    let gaps = [0.0, 1000.0, 3000.0, 7000.0, 15000.0, 31000.0, 63000.0];
    for give_up in [true, false] {
        let mut w = Wire::new(Path::at_client(RTT));
        for t in gaps {
            let syn = w.syn(t);
            w.lose(syn);
        }
        let rst = give_up.then(|| w.rst(C, 127_000.0));
        // Another connection of the client's, answered: the capture holds
        // both directions.
        let mut other = Wire::new(Path::at_client(RTT));
        other.handshake(5_000.0);
        w.join(other, 40_001, 443);
        let o = w.run();
        let x = o.the(SynRetransmit);
        match rst {
            Some(rst) => {
                assert_ms(x.cost_ms, 127_000.0, EXACT, "first SYN to the RST");
                let Detail::SynRetransmit { gave_up, .. } = x.detail else {
                    panic!("{:?}", x.detail);
                };
                let (frame, after) = gave_up.expect("gave up");
                assert_eq!(frame, o.frame(rst));
                assert_ms(after, 64_000.0, EXACT, "the last wait");
                assert!(x.frames.contains(&o.frame(rst)));
            }
            None => assert_ms(x.cost_ms, 63_000.0, EXACT, "first to last SYN"),
        }
    }
}

/// Two SYNs a second apart, unanswered, and another connection of the
/// client's opening `later_ms` after the second (the capture's last
/// packet is that handshake's ACK, a round trip on).
fn unanswered_then_the_capture_goes_on(syn_times: &[f64], later_ms: f64) -> (Outcome, u64) {
    let mut w = Wire::new(Path::at_client(RTT));
    for &t in syn_times {
        let syn = w.syn(t);
        w.lose(syn);
    }
    let mut other = Wire::new(Path::at_client(RTT));
    let last_syn = syn_times[syn_times.len() - 1];
    let [_, _, ack] = other.handshake(last_syn + later_ms - RTT);
    let joined = w.join(other, 40_001, 443);
    let ack = joined.id(ack);
    let o = w.run();
    let last = o.frame(ack);
    (o, last)
}

#[test]
fn a_client_still_waiting_when_the_capture_went_no_further_waited_until_then() {
    // nDPI's android.pcap 10: two SYNs a second apart, the capture's end
    // 1.4 s after the second, before the timer's next re-send (2 s on).
    let (o, last) = unanswered_then_the_capture_goes_on(&[0.0, 1000.0], 1400.0);
    let x = o.the(SynRetransmit);
    assert_ms(x.cost_ms, 2400.0, EXACT, "first SYN to the capture's end");
    assert_cost_is_its_waits(x);
    let Detail::SynRetransmit { still_waiting, .. } = x.detail else {
        panic!("{:?}", x.detail);
    };
    let (frame, after) = still_waiting.expect("still waiting");
    assert_eq!(frame, last);
    assert_ms(after, 1400.0, EXACT, "after the last SYN");
    // The capture went on past the re-send that did not come: the client
    // stopped waiting, when is not known: the timer's waits only.
    let timer_only = |syn_times: &[f64], later_ms: f64| {
        let (o, _) = unanswered_then_the_capture_goes_on(syn_times, later_ms);
        let x = o.the(SynRetransmit);
        assert_ms(
            x.cost_ms,
            syn_times[syn_times.len() - 1],
            EXACT,
            "first to last SYN",
        );
        assert!(matches!(
            x.detail,
            Detail::SynRetransmit {
                still_waiting: None,
                ..
            }
        ));
    };
    timer_only(&[0.0, 1000.0], 2500.0);
    // SYNs a second apart (macOS's first five): the next was due a second
    // after the last, and 1.4 s on it had not come.
    timer_only(&[0.0, 1000.0, 2000.0], 1400.0);
    let (o, _) = unanswered_then_the_capture_goes_on(&[0.0, 1000.0, 2000.0], 900.0);
    assert_ms(
        o.the(SynRetransmit).cost_ms,
        2900.0,
        EXACT,
        "to the capture's end",
    );
    // Doubling (Linux: 1 s, then 2 s): the next due 4 s after the last.
    let (o, _) = unanswered_then_the_capture_goes_on(&[0.0, 1000.0, 3000.0], 3500.0);
    assert_ms(
        o.the(SynRetransmit).cost_ms,
        6500.0,
        EXACT,
        "to the capture's end",
    );
}

/// The finding's SYN-ACKs when it says the server answered every SYN.
fn every_syn_answered(o: &Outcome) -> Option<(u64, u64)> {
    match o.the(SynRetransmit).detail {
        Detail::SynRetransmit {
            every_syn_answered, ..
        } => every_syn_answered,
        ref d => panic!("{d:?}"),
    }
}

#[test]
fn a_syn_ack_for_each_syn_says_none_was_lost() {
    // nDPI's alexa-app.pcapng 63: the first SYN held on the way (the
    // client's uplink) past the client's 1 s timer; the server answers
    // the second, then the first when it comes, 20 ms apart.
    let mut w = Wire::new(Path::at_client(RTT));
    let first = w.syn(0.0);
    w.late_after_tap(first, 1020.0);
    let second = w.syn(1000.0);
    let answer = w.syn_ack(w.arrival(second));
    let again = w.syn_ack(w.arrival(first));
    w.ack(C, w.arrival(answer));
    let o = w.run();
    assert_eq!(
        every_syn_answered(&o),
        Some((o.frame(answer), o.frame(again)))
    );
    let x = o.the(SynRetransmit);
    assert_ms(x.cost_ms, 1000.0, EXACT, "the timer's wait");
    // One SYN-ACK for two SYNs: the first may have been lost.
    let (w, _) = syns(Path::at_client(RTT), &[0.0, 1000.0]);
    assert_eq!(every_syn_answered(&w.run()), None);
    // The server's own timer sent its SYN-ACK again a second later (the
    // client's ACK lost): one SYN answered, not two.
    let (mut w, ids) = syns(Path::at_client(RTT), &[0.0, 1000.0]);
    w.syn_ack(w.arrival(ids[1]) + 1000.0);
    assert_eq!(every_syn_answered(&w.run()), None);
}

/// Two SYNs a second apart that nothing answered, beside `others`
/// connections of the client's to other servers opened 0.2 s after the
/// first (answered: both directions captured).
fn unanswered_among_dials(others: u8) -> Outcome {
    let mut w = Wire::new(Path::at_client(RTT));
    for t in [0.0, 1000.0] {
        let syn = w.syn(t);
        w.lose(syn);
    }
    for i in 0..others {
        let mut other = Wire::new(Path::at_client(RTT));
        other.handshake(200.0 + f64::from(i) * 10.0);
        w.join_server(other, 40_001 + u16::from(i), &format!("192.0.2.{}", 10 + i));
    }
    w.run()
}

#[test]
fn an_unanswered_dial_among_many_counts_the_servers_dialled_beside_it() {
    // nDPI's ethereum.pcap 22: a node dialling 56 peers at once, one of
    // them gone.
    let beside = |o: &Outcome| match o.the(SynRetransmit).detail {
        Detail::SynRetransmit {
            unanswered: true,
            dials_beside,
            ..
        } => dials_beside,
        ref d => panic!("{d:?}"),
    };
    assert_eq!(beside(&unanswered_among_dials(9)), 9);
    assert_eq!(beside(&unanswered_among_dials(2)), 2);
    // Answered in the end: no dial among others to count.
    let (w, _) = syns(Path::at_client(RTT), &[0.0, 1000.0]);
    assert!(matches!(
        w.run().the(SynRetransmit).detail,
        Detail::SynRetransmit {
            dials_beside: 0,
            heard_elsewhere: None,
            ..
        }
    ));
}
