//! The causality rules every finding obeys (detect/causality.rs).
//!
//! > 1. What releases a wait comes before it: the releasing packet was
//! >    captured before the packet that left [...], and it reached the host
//! >    that waited after the wait began (on that host's clock: the
//! >    capture's order says so only for packets of one side).
//! > 2. A release never acknowledges the very segment it released.
//! > 3. The waiting and releasing packets come from opposite sides.
//! > 4. A wait is no longer than the capture shows between its ends (plus
//! >    the clock shift's error when the ends come from both sides), and a
//! >    finding's cost is the sum of its waits: no cost without a wait.
//! > 5. Nagle never holds a full-size segment [...].
//! >
//! > A wait that breaks a rule is dropped; a finding left with no waits is
//! > dropped; the cost is recomputed from what is left.
//!
//! And `Facts::can_release`: "the held segment must not acknowledge data
//! the peer sent after the release: then it left after that data arrived,
//! and answers it (a reply is not a release)"; data arriving together with
//! the release (within max(RTT/10, 1 ms)) does not count.
//!
//! These rules judge findings, not packets, so the specification feeds
//! `causality::enforce` hand-made findings over a hand-made timeline
//! (the records the tracker would keep), at a client-side capture of a
//! 40 ms path.

use super::*;
use crate::detect::{causality, Facts};
use rttdoc_analyze::SegmentRecord;
use FindingKind::{InitcwndLimited, NagleHold, Retransmission, SynRetransmit, TfoAccepted};

const RTT_NS: i64 = 40_000_000;

/// One record of the timeline: relative sequence `seq`, `len` bytes,
/// acknowledging `ack` (None: no ACK flag).
fn rec(frame: u64, ms: f64, dir: Direction, seq: u32, len: u32, ack: Option<u32>) -> SegmentRecord {
    SegmentRecord {
        frame,
        ts_ns: (ms * 1e6).round() as i64,
        dir,
        seq,
        end: seq + len,
        ack: ack.unwrap_or(0),
        ack_set: ack.is_some(),
        len,
        flags: rttdoc_wire::TcpFlags::from_bits_retain(
            if ack.is_some() { ACK } else { 0 } | if len > 0 { PSH } else { 0 },
        ),
        window: 65535,
        new_data: len > 0,
        retransmission: false,
        overtaken: false,
        probe: false,
        dsack: None,
        tsval: 0,
        tsecr: 0,
        timestamped: false,
    }
}

/// A client with Nagle on, captured at the client: a small segment (4)
/// released by the server's ACK (5) of the previous small one (6 left
/// right after it), then a full segment (7), its ACK (8) and another full
/// segment right after (9).
fn timeline() -> Vec<SegmentRecord> {
    vec![
        rec(4, 100.0, C, 1, 100, Some(1)),
        rec(5, 140.0, S, 1, 0, Some(101)),
        rec(6, 140.05, C, 101, 100, Some(1)),
        rec(7, 300.0, C, 201, MSS, Some(1)),
        rec(8, 340.0, S, 1, 0, Some(1661)),
        rec(9, 340.05, C, 1661, MSS, Some(1)),
    ]
}

/// A connection report for the facts (a clean handshake at the client on
/// a 40 ms path: vantage, MSS 1460).
fn report() -> ConnectionReport {
    let mut w = Wire::new(Path::at_client(40.0));
    w.handshake(0.0);
    w.run().report
}

fn facts<'a>(report: &'a ConnectionReport, timeline: &'a [SegmentRecord]) -> Facts<'a> {
    Facts {
        report,
        timeline,
        exchanges: &[],
        idle_exchanges: &[],
        path_samples: &[],
        uplink: None,
        path_busy: &[],
        path_stalls: &[],
        late_retransmissions: &[],
        heard_at_resends: &[],
        nothing_heard: None,
        client_closed_with: 0,
        unheard_at_resend: None,
        acked_at_resends: &[],
        client_clock_hz: None,
        windowed: false,
        sibling_closes: &[],
        dialled_back_data_ns: None,
        sibling_data: &[],
        certificate_fetches: &[],
        too_big: &[],
        h2_credit_stalls: &[],
        previous: None,
        client_false_starts: false,
        sibling_request: None,
        one_way_capture: false,
        seen_until: None,
        dials_beside: 0,
        stalled_elsewhere: None,
        client_dials: None,
        uplink_waits: &[],
        false_start_eligible: false,
        server_key_exchange: None,
        costly_key_exchange: None,
        certificate_less: false,
        lookup: None,
        rtt_ns: Some(RTT_NS),
        client_side_ns: 0,
        server_side_ns: RTT_NS,
        own_reaction_ns: 0,
        tls_end_frame: None,
        greeting: None,
        greeting_connect_back: None,
        protocol: None,
        jitter_ns: 0,
        early_plaintext: None,
        burst_segment: [0, 0],
        nagle_off_before: [false, false],
        new_data_views: Default::default(),
        window_stall_views: Default::default(),
        handshake_turns_view: Default::default(),
        preamble_turns_view: Default::default(),
        server_ticks_view: Default::default(),
        server_turns_view: Default::default(),
        hello_turn_view: Default::default(),
        short_turns_view: Default::default(),
        fastest_round_trip_views: Default::default(),
        sender_clock_views: Default::default(),
        sender_clock_loosely: Default::default(),
        path_mtu_views: Default::default(),
        not_taken_view: Default::default(),
        syn_answers_view: Default::default(),
        acknowledgment_view: Default::default(),
        prompted_elsewhere_view: Default::default(),
        echoes_pure_acks_view: Default::default(),
        nagle_holds_views: Default::default(),
        deaf_views: Default::default(),
    }
}

fn wait(from: u64, to: u64, release: Option<u64>, ms: f64) -> Wait {
    Wait {
        from_frame: from,
        to_frame: to,
        release_frame: release,
        ms,
    }
}

/// A finding of `kind` made of `waits`, its cost their sum.
fn finding(f: &Facts<'_>, kind: FindingKind, waits: Vec<Wait>) -> Finding {
    let mut x = f.finding(kind, None);
    x.cost_ms = waits.iter().map(|w| w.ms).sum();
    x.frames = waits
        .iter()
        .flat_map(|w| [Some(w.to_frame), w.release_frame])
        .flatten()
        .collect();
    x.display_filter = f.filter_frames(&x.frames);
    x.waits = waits;
    x
}

/// What `enforce` leaves of one finding made of `waits`.
fn enforced(kind: FindingKind, waits: Vec<Wait>, tl: &[SegmentRecord]) -> Option<Finding> {
    let r = report();
    let f = facts(&r, tl);
    let mut out = vec![finding(&f, kind, waits)];
    causality::enforce(&f, &mut out);
    out.pop()
}

const HOLD_MS: f64 = 40.05;

#[test]
fn a_wait_released_by_an_earlier_packet_of_the_peer_stands() {
    let w = wait(4, 6, Some(5), HOLD_MS);
    let kept = enforced(NagleHold, vec![w], &timeline()).expect("kept");
    assert_eq!(kept.waits, vec![w]);
    assert_eq!(kept.frames, vec![6, 5]);
    assert_ms(kept.cost_ms, HOLD_MS, 1e-9, "unchanged");
}

#[test]
fn a_release_captured_after_what_it_released_is_dropped() {
    assert!(enforced(NagleHold, vec![wait(4, 6, Some(8), HOLD_MS)], &timeline()).is_none());
}

#[test]
fn a_release_acknowledging_the_segment_it_released_is_dropped() {
    // The ACK in frame 5 already covers frame 6's bytes: whatever it was,
    // it did not release them.
    let mut tl = timeline();
    tl[1].ack = 201;
    assert!(enforced(NagleHold, vec![wait(4, 6, Some(5), HOLD_MS)], &tl).is_none());
}

#[test]
fn a_release_from_the_same_side_is_dropped() {
    assert!(enforced(
        InitcwndLimited,
        vec![wait(4, 6, Some(4), HOLD_MS)],
        &timeline()
    )
    .is_none());
}

#[test]
fn a_wait_longer_than_the_capture_shows_between_its_ends_is_dropped() {
    // Frames 4 and 6 are 40.05 ms apart on one host's clock.
    assert!(enforced(NagleHold, vec![wait(4, 6, Some(5), 100.0)], &timeline()).is_none());
}

#[test]
fn nagle_never_holds_a_full_sized_segment_but_other_waits_may_end_in_one() {
    let w = wait(7, 9, Some(8), HOLD_MS);
    assert!(enforced(NagleHold, vec![w], &timeline()).is_none());
    let kept = enforced(InitcwndLimited, vec![w], &timeline()).expect("kept");
    assert_eq!(kept.waits, vec![w]);
}

#[test]
fn a_finding_keeps_its_good_waits_and_its_cost_becomes_their_sum() {
    let good = wait(4, 6, Some(5), HOLD_MS);
    let bad = wait(7, 9, Some(8), 40.05);
    let kept = enforced(NagleHold, vec![good, bad], &timeline()).expect("kept");
    assert_eq!(kept.waits, vec![good]);
    assert_ms(kept.cost_ms, HOLD_MS, 1e-9, "the kept wait");
    assert_eq!(kept.frames, vec![6, 5]);
    assert_eq!(
        kept.display_filter,
        "tcp.stream eq 0 && frame.number in {6, 5}"
    );
}

#[test]
fn a_syn_retransmit_still_counts_every_syn_sent_when_one_of_its_waits_falls() {
    // Five SYNs, one gap over the longest timer left out by the detector:
    // three waits. A rule drops one; the client still sent five SYNs.
    let r = report();
    let tl = timeline();
    let f = facts(&r, &tl);
    let good = wait(4, 6, None, HOLD_MS);
    let too_long = wait(4, 6, None, 100.0);
    let mut x = finding(&f, SynRetransmit, vec![good, good, too_long]);
    x.detail = crate::model::Detail::SynRetransmit {
        syns: 5,
        answered_late: None,
        answer_lost: None,
        answer_captured_at_client: false,
        echoed_syn: None,
        every_syn_answered: None,
        unanswered: false,
        one_way_capture: false,
        relay_client_clock: None,
        held_before_capture: None,
        gave_up: None,
        still_waiting: None,
        dials_beside: 0,
        heard_elsewhere: None,
        nothing_heard: None,
    };
    let mut out = vec![x];
    causality::enforce(&f, &mut out);
    let kept = out.pop().expect("kept");
    assert_eq!(kept.waits, vec![good, good]);
    assert_eq!(
        kept.detail,
        crate::model::Detail::SynRetransmit {
            syns: 5,
            answered_late: None,
            answer_lost: None,
            answer_captured_at_client: false,
            echoed_syn: None,
            every_syn_answered: None,
            unanswered: false,
            one_way_capture: false,
            relay_client_clock: None,
            held_before_capture: None,
            gave_up: None,
            still_waiting: None,
            dials_beside: 0,
            heard_elsewhere: None,
            nothing_heard: None,
        }
    );
}

#[test]
fn a_finding_that_is_not_a_wait_is_left_alone() {
    let r = report();
    let tl = timeline();
    let f = facts(&r, &tl);
    let mut saving = f.finding(TfoAccepted, None);
    saving.cost_ms = -40.0;
    saving.frames = vec![1, 2];
    let mut out = vec![saving.clone()];
    causality::enforce(&f, &mut out);
    assert_eq!(out, vec![saving]);
}

/// Frame 6 is server data sent `data_at` ms; frame 7 the client's small
/// segment right after it, acknowledging it.
fn reply_timeline(data_at: f64) -> Vec<SegmentRecord> {
    vec![
        rec(4, 100.0, C, 1, 100, Some(1)),
        rec(5, 140.0, S, 1, 0, Some(101)),
        rec(6, data_at, S, 1, 10, Some(101)),
        rec(7, data_at + 0.05, C, 101, 100, Some(11)),
    ]
}

#[test]
fn a_segment_answering_data_the_peer_sent_after_the_release_is_a_reply_not_released() {
    // 5 ms after the ACK: beyond max(RTT/10, 1 ms), data of its own.
    let r = report();
    let tl = reply_timeline(145.0);
    let f = facts(&r, &tl);
    assert!(!f.can_release(&tl[1], &tl[3]));
}

#[test]
fn data_arriving_together_with_the_release_does_not_make_a_reply() {
    // 0.5 ms after the ACK (a compatibility record right behind it).
    let r = report();
    let tl = reply_timeline(140.5);
    let f = facts(&r, &tl);
    assert!(f.can_release(&tl[1], &tl[3]));
}

#[test]
fn a_release_that_reached_the_waiter_before_its_wait_began_is_dropped() {
    // The ACK in frame 5 (140 ms) reached the client long before its full
    // segment 7 (300 ms) left: it cannot have ended a wait that began then.
    assert!(enforced(
        InitcwndLimited,
        vec![wait(7, 9, Some(5), 40.05)],
        &timeline()
    )
    .is_none());
}

/// The server's window seen at the client: the first segment (10)
/// arrives, the client ACKs it at once (11), the window's last segment
/// (12) arrives 1.8 ms later, and the next (13) one round trip after the
/// ACK left: released by it at the server.
fn window_timeline() -> Vec<SegmentRecord> {
    vec![
        rec(10, 119.8, S, 1, MSS, Some(1)),
        rec(11, 119.8, C, 1, 0, Some(1 + MSS)),
        rec(12, 121.6, S, 1 + MSS, MSS, Some(1)),
        rec(13, 159.85, S, 1 + 2 * MSS, MSS, Some(1)),
    ]
}

#[test]
fn a_release_of_the_other_side_captured_before_the_wait_began_stands_if_it_reached_the_waiter_after(
) {
    // At the client the ACK (11) is captured before the segment the wait
    // runs from (12); on the server's clock (client packets + 40 ms) it
    // arrived at 159.8 ms, after 12 left at 121.6 ms.
    let w = wait(12, 13, Some(11), 38.25);
    let kept = enforced(InitcwndLimited, vec![w], &window_timeline()).expect("kept");
    assert_eq!(kept.waits, vec![w]);
}

#[test]
fn a_retransmission_whose_waits_all_fall_stays_a_fact_with_no_cost() {
    // A re-send (9) said to be released by an ACK (8) that acknowledges
    // it: the wait falls, the re-send stays cited, at no cost.
    let r = report();
    let mut tl = timeline();
    tl[4].ack = 1661 + MSS;
    let f = facts(&r, &tl);
    let mut x = finding(&f, Retransmission, vec![wait(7, 9, Some(8), 40.05)]);
    x.frames = vec![7, 9];
    let mut out = vec![x];
    causality::enforce(&f, &mut out);
    let kept = out.pop().expect("kept");
    assert!(kept.waits.is_empty());
    assert_eq!(kept.cost_ms, 0.0);
    assert_eq!(kept.frames, vec![7, 9]);
}

/// A handshake of the client's found the path 47 ms slower than its
/// server's fastest (60 ms) when an answer came. A connection whose round
/// trip (56 ms) came from its data holds none of that queue in it: the
/// answer met 47 ms of queue beyond that round trip (as nDPI's
/// alexa-app 21's). One whose round trip came from a handshake made in the queue
/// (80 ms, 20 over the fastest) met 27 ms more (more than a quarter of
/// its round trip: a queue, not jitter). Without the fastest to
/// its own server, none of the queue is taken to be in the round trip.
#[test]
fn a_queue_the_connections_round_trip_already_holds_is_not_counted_again() {
    const MS: i64 = 1_000_000;
    let r = report();
    let tl = timeline();
    let sample = |own_fastest_ns| rttdoc_analyze::QueueSample {
        from_ns: 1_000 * MS,
        to_ns: 1_097 * MS,
        queue_ns: 47 * MS,
        own_fastest_ns,
    };
    let queue_with = |rtt_ms: i64, samples: &[rttdoc_analyze::QueueSample]| {
        let mut f = facts(&r, &tl);
        f.rtt_ns = Some(rtt_ms * MS);
        f.path_samples = samples;
        f.path_queue_ns(1_097 * MS)
    };
    assert_eq!(queue_with(56, &[sample(Some(60 * MS))]), 47 * MS);
    assert_eq!(queue_with(80, &[sample(Some(60 * MS))]), 27 * MS);
    assert_eq!(queue_with(80, &[sample(None)]), 47 * MS);
    // A queue drains as time passes: 10 ms after the SYN-ACK, 10 ms less.
    let mut f = facts(&r, &tl);
    f.rtt_ns = Some(56 * MS);
    let samples = [sample(Some(60 * MS))];
    f.path_samples = &samples;
    assert_eq!(f.path_queue_ns(1_107 * MS), 37 * MS);
}

/// A client whose uplink queued its requests behind its other
/// connections' traffic (PcapPlusPlus's example.pcap: a browser's
/// fourteen connections to one server on a slow uplink). The server's
/// stack sends data the moment an ACK of a sibling's comes: 10 ms after
/// the ACK left, on the server's 1 kHz clock, when the uplink is empty
/// (each sibling's quickest over its echoes), and 60-70 ms in the busy
/// spell. A request sent just after that spell's ACKs met its queue: the
/// second least of those excesses (55 ms), less a tick. A sibling's own
/// clock offset (another host behind the address) is read against its
/// own quickest. None where fewer than three echoes of siblings with
/// eight or more came in the 100 ms before the request, and at the
/// server (it sees requests arrive).
#[test]
fn a_request_sent_into_a_queued_uplink_met_the_queue_the_siblings_echoes_show() {
    const MS: i64 = 1_000_000;
    let origin: u32 = 900_000;
    let echo = |stream, at_ms: i64, way_ms: i64| rttdoc_analyze::UplinkEcho {
        stream,
        client_ns: at_ms * MS,
        tsval: origin.wrapping_add((at_ms + way_ms) as u32),
    };
    let sibling = |stream, echoes, quickest_ms: i64| rttdoc_analyze::SiblingWay {
        stream,
        echoes,
        quickest_ns: [quickest_ms * MS; 7],
    };
    let view = |echoes, siblings| rttdoc_analyze::UplinkView {
        echoes,
        siblings,
        origin,
    };
    // This connection's own server segments: a 1 kHz clock over 1.5 s.
    let mut tl = Vec::new();
    for i in 0..16u32 {
        let at = i as f64 * 100.0;
        tl.push(rec(
            2 * i as u64 + 4,
            at,
            C,
            1 + i * 100,
            100,
            Some(1 + i * 1000),
        ));
        let mut s = rec(
            2 * i as u64 + 5,
            at + 20.0,
            S,
            1 + i * 1000,
            1000,
            Some(1 + (i + 1) * 100),
        );
        s.tsval = 7_000 + at as u32 + 10;
        s.timestamped = true;
        tl.push(s);
    }
    let r = report();
    let queue_of = |v: &rttdoc_analyze::UplinkView, at_ms: i64| {
        let mut f = facts(&r, &tl);
        f.uplink = Some(v);
        f.uplink_queue_ns(at_ms * MS)
    };
    let spell = || vec![echo(2, 900, 70), echo(3, 920, 60), echo(5, 950, 65)];
    let quiet = || vec![sibling(2, 8, 10), sibling(3, 8, 10), sibling(5, 8, 10)];
    let busy = view(spell(), quiet());
    assert_eq!(queue_of(&busy, 1_000), 54 * MS);
    // Nothing before a request sent long after the spell.
    assert_eq!(queue_of(&busy, 2_000), 0);
    // Two echoes do not tell it.
    let few = view(vec![echo(2, 900, 70), echo(3, 920, 60)], quiet());
    assert_eq!(queue_of(&few, 1_000), 0);
    // Nor one of a sibling whose quickest is over too few echoes.
    let young = view(
        spell(),
        vec![sibling(2, 8, 10), sibling(3, 8, 10), sibling(5, 1, 65)],
    );
    assert_eq!(queue_of(&young, 1_000), 0);
    // A sibling on a clock a day ahead, read against its own quickest.
    let mut ahead = spell();
    ahead[1].tsval = ahead[1].tsval.wrapping_add(86_400_000);
    let mut theirs = quiet();
    theirs[1].quickest_ns = [(10 + 86_400_000) * MS; 7];
    assert_eq!(queue_of(&view(ahead, theirs), 1_000), 54 * MS);
    // At the server the requests are seen arriving: nothing to add.
    let mut at_server = report();
    at_server.vantage = crate::model::Vantage::Server;
    let mut f = facts(&at_server, &tl);
    f.uplink = Some(&busy);
    assert_eq!(f.uplink_queue_ns(1_000 * MS), 0);
}

/// Rule 4 by the client's clock: two of the client's own packets are as
/// far apart as its clock says (100 ticks of its 100 Hz clock: a
/// second), however close the capture saw them (65 ms): behind a relay
/// that answered the client's SYN itself (a phone's VPN capture app,
/// whose capture times are when it read each packet), or where the first
/// SYN was held on the client's side of the capture point (nDPI's
/// hpvirtgrp.pcap 6). A wait of a second between them stands there;
/// where its clock says 65 ms too, it is longer than the capture shows;
/// where the capture does not tell its rate, its ticks at the fastest
/// rate a TCP clock ticks (1 kHz) are the least time between its SYNs.
#[test]
fn a_wait_between_the_clients_packets_is_timed_by_its_clock() {
    let syns = |ticks: u32| {
        let mut first = rec(4, 100.0, C, 0, 0, None);
        let mut again = rec(6, 165.0, C, 0, 0, None);
        for (r, tsval) in [(&mut first, 5_030_907), (&mut again, 5_030_907 + ticks)] {
            r.flags = rttdoc_wire::TcpFlags::from_bits_retain(SYN);
            r.tsval = tsval;
            r.timestamped = true;
        }
        vec![first, again]
    };
    let second = wait(4, 6, None, 1000.0);
    for (relay, ticks, hz, stands) in [
        (true, 100, Some(100), true),
        (false, 100, Some(100), true),
        (false, 6, Some(100), false),
        // The rate not told: its SYNs at least as far apart as a 1 kHz
        // clock's ticks (100 ms), and the wait longer than that.
        (false, 100, None, false),
        (true, 100, None, false),
        (false, 1000, None, true),
    ] {
        let tl = syns(ticks);
        let mut r = report();
        r.handshake.relay = relay;
        let mut f = facts(&r, &tl);
        f.client_clock_hz = hz;
        let mut out = vec![finding(&f, SynRetransmit, vec![second])];
        causality::enforce(&f, &mut out);
        assert_eq!(
            out.len(),
            usize::from(stands),
            "relay {relay}, {ticks} ticks, {hz:?} Hz"
        );
    }
}
