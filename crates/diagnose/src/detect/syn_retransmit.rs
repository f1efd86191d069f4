//! `syn_retransmit` — the client sent its SYN more than once.
//!
//! Signature: several SYNs (no ACK flag) with the same sequence number on
//! one connection, the earlier ones unanswered (SYNs after the server's RST
//! are retries of a refused connection: ending `refused`, nothing lost). The kernel resends an unanswered SYN after 1 s, then
//! 3 s ... (Linux: 1, 2, 4 s with tcp_syn_retries): the SYN or the SYN-ACK
//! was lost, or the server's SYN/accept queue was full.
//! Each timeout is a wait from one SYN to the next (no releasing packet:
//! the client's own timer ended it), at most Linux's TCP_RTO_MAX (120 s):
//! a longer gap is not a timer (a clock jump, a collage of captures).
//! Cost: first SYN to the last one (the timeouts waited, summed); when
//! nothing answered and the client gave up, its RST or FIN after the last
//! SYN ends the last wait (its timer's, waited too); when it had not
//! given up and the capture went on no further than its timer's next
//! re-send (twice the last interval; as long, while its SYNs came evenly
//! spaced), the last wait runs to the frame the capture had reached (at
//! least that long was waited).
//! Fix: find the drop (loss on the path, SYN queue overflow: watch
//! `nstat TcpExtListenOverflows`, raise `net.core.somaxconn`,
//! `net.ipv4.tcp_max_syn_backlog` and the listen backlog, nginx
//! `listen ... backlog=N`).
//! Unless nothing was dropped: when the client's ACK of the handshake
//! echoes the TSval of a SYN-ACK captured before the last SYN (sent, then,
//! before that SYN reached the server: the answer to an earlier one) and
//! within half a second of the first SYN (the server's first answer, not
//! its timer's re-send of a lost one, a second later), that SYN-ACK
//! arrived, and the client's timer fired while the path held it
//! (RFC 3522's test, as retransmission.rs applies it to data; packetbeat's
//! http_minitwit.pcap, a proxy's host: SYN-ACKs sent within 0.1 ms of
//! their SYNs, the client's ACKs 1.5 s later echoing them). The client
//! waited, then, until that answer reached it: from its first SYN to its
//! ACK, less the round trip any handshake takes, released by the echoed
//! SYN-ACK (its timer's re-send bought nothing); the words and the fix
//! name the path's delay, not a drop. Without timestamps, the same where
//! the client's ACK acknowledges the ISN of a SYN-ACK captured before the
//! last SYN, within the server's own SYN-ACK timer (1 s) of the first,
//! and no other SYN-ACK was captured between the last SYN and that ACK:
//! the only answer the client can have taken (nDPI's alexa-app.pcapng
//! 64, judged wrong in session 85: 865 ms to the SYN-ACK, the ACK 3.4 ms
//! after the timer's copy, told lost).
//! When the capture shows the server's SYN-ACK to the first SYN before
//! the client sent its second (and nothing says it arrived late), the SYN
//! was not lost and no queue was full: the SYN-ACK was lost between the
//! capture point and the client, or, captured at the client, its TCP did
//! not take it (a host firewall drops after the capture point); the words
//! and the fix name that stretch, not the server's backlog (nDPI's
//! tls_port_80.pcapng: four SYNs, each answered within 126 ms at a
//! mid-path capture point; the lab's random-loss, a SYN-ACK dropped
//! after the server's capture).
//! Where a SYN-ACK echoes the TSval of an earlier SYN than the last
//! (their TSvals differing), the server kept that SYN (it answers a copy,
//! or its own timer, echoing the one it keeps): that SYN was neither lost
//! nor dropped by a full queue (which keep nothing); the server's answer
//! to it was lost on its way back, or held, and the words and the fix say
//! so (nDPI's skype_no_unknown.pcap 38).
//! Where the server sent a SYN-ACK for each SYN, all after the last, each
//! within a second (its own SYN-ACK timer) of the one before, it answered
//! every SYN (a server answers a SYN's copy with its SYN-ACK again): none
//! was lost, no queue was full, and the words and the fix name the path
//! holding the first, or its answer, past the client's timer (nDPI's
//! alexa-app.pcapng 63).
//! Behind a relay that answered the SYN itself (a phone's VPN capture
//! app: `HandshakeReport::relay`), the capture's times are when the app
//! read each packet, and an app that stalled stamps a SYN sent a second
//! ago as new (nDPI's webex.pcap 24-30: SYNs 65 ms apart as captured, 100
//! ticks of the client's 100 Hz clock): where the client's SYNs over the
//! capture tell its clock's rate (client_clock.rs in rttdoc-analyze), the
//! words give the timer's wait by the TSvals of its SYNs and say the relay
//! kept the handshake back, not the network; the waits, and the cost, are
//! timed by that clock, a wait being the waiting host's (the client
//! waited a second for its timer where the capture shows 65 ms; the round
//! trip is unknown behind a relay, and no ledger row counts the excess).
//! Not behind a relay, a client whose own clock (its rate as its SYNs
//! tell, else 1 kHz, the fastest a TCP clock ticks: the least time)
//! spaced its SYNs at least 100 ms and twice farther apart than the
//! capture shows them sent the first long before the capture point saw
//! it: held on the client's side (its link waking, its own address
//! resolution, a box that buffers) while its timer ran (nDPI's
//! hpvirtgrp.pcap 6: 997 ticks, captured 26 ms apart, the SYN-ACK a
//! round trip after the first SYN and 3 ms after the second). The waits
//! are that clock's; a SYN-ACK captured sooner after the last SYN than
//! half the path beyond the capture point answered an earlier one; the
//! fix looks between the client and the capture point.
//! And when nothing in the capture answered any SYN (no SYN-ACK, RST or
//! ICMP error: the connection never opened), the words say so, and the
//! fix names what drops SYNs silently (a firewall, a server down or
//! unrouted, direct access blocked where a proxy is required), not a
//! queue (pypacker's ether.pcap: a VirtualBox guest's wget, three SYNs,
//! then the same fetch through the proxy). Not when the client went on
//! as a connection that opened does (an ACK or data after its SYNs): a
//! SYN-ACK came that the capture does not hold (nDPI's ocs.pcap, a
//! phone's packets only, its third connection's ClientHello after two
//! SYNs). Where the whole capture holds no SYN-ACK while a client went on
//! past its SYN on another connection (the capture kept the clients'
//! direction only: ocs.pcap's first connection, two SYNs 8 s apart and
//! nothing more), the words say what answered is not shown, the wait may
//! have begun with SYNs before the capture, and the fix begins with a
//! capture of both directions.

use super::Facts;
use crate::model::{Detail, Direction, Ending, Finding, FindingKind, Phase, SynsHeld, Wait};
use rttdoc_analyze::SegmentRecord;

pub fn detect(f: &Facts<'_>, out: &mut Vec<Finding>) {
    // A SYN the server answered with RST got its answer: SYNs sent after
    // it are the client trying again (some stacks do), not a lost SYN, and
    // the connection was refused (its ending says so).
    if f.report.handshake.syn_retransmits == 0 {
        return;
    }
    let mut syns = Vec::new();
    for r in f.timeline {
        if r.dir == Direction::ServerToClient && r.flags.rst() && !r.flags.syn() {
            if f.report.handshake.syn_ack_frame.is_none() {
                break;
            }
        } else if r.dir == Direction::ClientToServer && r.flags.syn() && !r.flags.ack() {
            syns.push(r);
        }
    }
    if syns.len() < 2 {
        return;
    }
    // SYNs the server answered with an ACK of another connection were
    // answered: the wait after each is syn_answered_by_ack's.
    let answered: Vec<u64> = super::syn_answered_by_ack::rejections(f)
        .iter()
        .map(|r| r.syn.frame)
        .collect();
    let waits: Vec<Wait> = syns
        .windows(2)
        .filter(|p| p[1].ts_ns - p[0].ts_ns <= super::causality::RTO_MAX_NS)
        .filter(|p| !answered.contains(&p[0].frame))
        .map(|p| Wait {
            from_frame: p[0].frame,
            to_frame: p[1].frame,
            release_frame: None,
            ms: (p[1].ts_ns - p[0].ts_ns) as f64 / 1e6,
        })
        .collect();
    if waits.is_empty() {
        return;
    }
    let answered_late = answered_late(f, &syns);
    // Answered in time and held on the way: the client's wait ran until
    // that answer reached it (its ACK), not to its timer's re-send, which
    // the answer did not need; less the round trip any handshake takes.
    let held = answered_late.and_then(|echoed| {
        let ack = f.record(f.report.handshake.ack_frame?)?;
        let ms = (ack.ts_ns - syns[0].ts_ns - f.rtt_ns.unwrap_or(0)).max(0) as f64 / 1e6;
        Some(vec![Wait {
            from_frame: syns[0].frame,
            to_frame: ack.frame,
            release_frame: Some(echoed),
            ms,
        }])
    });
    let waits = held.unwrap_or(waits);
    // Behind a relay that answered the SYN itself, the capture's times
    // are the relay's reading: the client's own clock spaces its SYNs as
    // its timer did (client_clock.rs). A wait is timed on the clock of
    // the host that waited: each SYN's wait is the client's (the words
    // give the capture's too).
    let tick_ms = |hz: u32, p: &[&SegmentRecord]| {
        f64::from(p[1].tsval.wrapping_sub(p[0].tsval)) * 1000.0 / f64::from(hz)
    };
    // The timer's waits in all on a clock of `hz`, where every SYN
    // carries its TSval and they come to a timer's (at most TCP_RTO_MAX).
    let clock_ms = |hz: u32| {
        let ms: f64 = syns.windows(2).map(|p| tick_ms(hz, p)).sum();
        (syns.iter().all(|r| r.timestamped) && ms <= super::causality::RTO_MAX_NS as f64 / 1e6)
            .then_some(ms)
    };
    let relay_hz = f
        .client_clock_hz
        .filter(|&hz| f.report.handshake.relay && clock_ms(hz).is_some());
    let captured_ms: f64 = waits.iter().map(|w| w.ms).sum();
    // Not behind a relay, a client whose own clock spaced its SYNs far
    // more than the capture shows them sent the first long before the
    // capture point saw it: held on the client's side (its link waking
    // or associating, its own queue while it resolved its gateway's
    // address, a box between it and the capture that buffers) while its
    // timer ran (nDPI's hpvirtgrp.pcap 6: 997 ticks of a 1 kHz clock,
    // captured 26 ms apart, the SYN-ACK one round trip after the first
    // SYN). Its wait is its timer's, timed by its clock, as behind a
    // relay; what held it is before the capture point.
    // Where the capture does not tell the client's rate (a host that
    // slept between its connections: hpvirtgrp's), its clock ticks no
    // faster than 1 kHz (RFC 7323 5.4: 1 ms to 1 s a tick), so its ticks
    // in milliseconds are the least time its SYNs were apart.
    // A rate read (from the client's SYNs over the capture, or this
    // connection's own packets) times the SYNs to a tick or two: a hold
    // of HELD_BEFORE_CAPTURE_MS beyond the capture's spacing shows
    // (nDPI's KakaoTalk_talk.pcap 3, judged in session 84: 100 and 200
    // ticks of a 100 Hz clock, captured 357 and 2019 ms apart, the first
    // SYN held 0.64 s after a 12 s silence). The fastest rate assumed is
    // a bound only: the hold must be as long as the spacing again.
    let held_hz = (relay_hz.is_none() && answered_late.is_none())
        .then(|| f.client_clock_hz.unwrap_or(FASTEST_CLOCK_HZ))
        .filter(|&hz| {
            let span_ms = (syns[syns.len() - 1].ts_ns - syns[0].ts_ns) as f64 / 1e6;
            let margin = match f.client_clock_hz {
                Some(hz) => HELD_BEFORE_CAPTURE_MS + 2000.0 / f64::from(hz),
                None => HELD_BEFORE_CAPTURE_MS.max(span_ms),
            };
            clock_ms(hz).is_some_and(|ms| ms - span_ms >= margin)
        });
    let waits: Vec<Wait> = match relay_hz.or(held_hz) {
        Some(hz) => waits
            .into_iter()
            .map(|w| {
                let pair = syns
                    .windows(2)
                    .find(|p| p[0].frame == w.from_frame && p[1].frame == w.to_frame);
                Wait {
                    ms: pair.map_or(w.ms, |p| tick_ms(hz, p)),
                    ..w
                }
            })
            .collect(),
        None => waits,
    };
    let clock_waits = |hz: u32| (hz, waits.iter().map(|w| w.ms).sum::<f64>(), captured_ms);
    let relay_clock = relay_hz.map(clock_waits);
    let held_clock = held_hz.map(clock_waits);
    // The SYN-ACK captured sooner after the last SYN than the server's
    // side of the path could bring an answer to it answered an earlier
    // one.
    let first_answered = held_hz
        .and_then(|_| {
            let last = syns[syns.len() - 1];
            f.timeline
                .iter()
                .find(|r| r.dir == Direction::ServerToClient && r.flags.syn() && r.flags.ack())
                .filter(|sa| {
                    sa.frame > last.frame && (sa.ts_ns - last.ts_ns) * 2 < f.server_side_ns
                })
        })
        .map(|sa| sa.frame);
    // (Not behind a relay that answered the SYN itself, a phone's VPN
    // capture app: its capture times are when it read each packet, and a
    // second late stalls its reads, the SYN's with them; webex.pcap's
    // 24-30, the client's own timestamps 1 s apart where the capture
    // shows 61-79 ms, both SYN-ACKs acknowledged by the client.)
    let answer_lost = (answered_late.is_none() && !f.report.handshake.relay && held_hz.is_none())
        .then(|| first_answer_before_resend(f, &syns))
        .flatten();
    let echoed_syn = (answered_late.is_none()
        && answer_lost.is_none()
        && !f.report.handshake.relay
        && held_hz.is_none())
    .then(|| echoes_an_earlier_syn(f, &syns))
    .flatten();
    let every_syn_answered = (answered_late.is_none()
        && answer_lost.is_none()
        && echoed_syn.is_none()
        && !f.report.handshake.relay
        && held_hz.is_none())
    .then(|| each_syn_answered(f, &syns))
    .flatten();
    let unanswered = f.report.handshake.syn_ack_frame.is_none()
        && !f
            .timeline
            .iter()
            .any(|r| r.dir == Direction::ServerToClient)
        && !matches!(f.report.ending, Ending::Refused | Ending::Unreachable)
        && !client_went_on(f);
    // Unanswered, the client waited on after its last SYN until it gave
    // up (its timer's last wait: Linux's twice the last interval, 64 s
    // after the seventh SYN), its RST or FIN saying when (nDPI's
    // alexa-app.pcapng 12: seven SYNs over 63 s, the RST 64 s after the
    // last). Where the capture kept one direction only, what answered is
    // not known, and nothing is added.
    let last = syns[syns.len() - 1];
    let gave_up = (unanswered && !f.one_way_capture)
        .then(|| {
            f.timeline.iter().find(|r| {
                r.frame > last.frame
                    && r.dir == Direction::ClientToServer
                    && (r.flags.rst() || r.flags.fin())
            })
        })
        .flatten()
        .filter(|r| r.ts_ns - last.ts_ns <= super::causality::RTO_MAX_NS)
        .map(|r| Wait {
            from_frame: last.frame,
            to_frame: r.frame,
            release_frame: None,
            ms: (r.ts_ns - last.ts_ns) as f64 / 1e6,
        });
    // Unanswered and not given up, the client waited on after its last
    // SYN for as long as the capture shows it: until the frame the
    // capture had reached when the connection was handed on (its last,
    // or the one that found it idle), where that came before its timer
    // would have sent the SYN again; past that, the missing re-send says
    // the client stopped waiting, when is not known (nDPI's android.pcap
    // 10: two SYNs a second apart, the capture's end 1.4 s after the
    // second). A re-send waits twice as long as the one before (Linux,
    // Windows), or, while the client's SYNs came evenly spaced (macOS's
    // first five, a second apart: nDPI's skype.pcap 95), as long.
    let next_resend_ns = {
        let gap = |i: usize| syns[i].ts_ns - syns[i - 1].ts_ns;
        let interval = gap(syns.len() - 1).max(0);
        let even = syns.len() >= 3 && 2 * interval < 3 * gap(syns.len() - 2);
        if even {
            interval
        } else {
            2 * interval
        }
    };
    let still_waiting = (unanswered && !f.one_way_capture && gave_up.is_none())
        .then_some(f.seen_until)
        .flatten()
        .filter(|end| {
            end.frame > last.frame
                && end.ts_ns > last.ts_ns
                && end.ts_ns - last.ts_ns < next_resend_ns
        })
        .map(|end| Wait {
            from_frame: last.frame,
            to_frame: end.frame,
            release_frame: None,
            ms: (end.ts_ns - last.ts_ns) as f64 / 1e6,
        });
    let mut waits = waits;
    waits.extend(gave_up);
    waits.extend(still_waiting);
    let mut x = f.finding(FindingKind::SynRetransmit, Some(Phase::TcpHandshake));
    x.frames = syns.iter().map(|r| r.frame).collect();
    x.frames.extend(gave_up.map(|w| w.to_frame));
    x.cost_ms = waits.iter().map(|w| w.ms).sum();
    x.waits = waits;
    x.confidence = 1.0;
    x.detail = Detail::SynRetransmit {
        syns: syns.len() as u32,
        answered_late,
        answer_lost,
        answer_captured_at_client: answer_lost.is_some()
            && f.report.vantage == crate::model::Vantage::Client,
        echoed_syn,
        every_syn_answered,
        unanswered,
        one_way_capture: f.one_way_capture,
        relay_client_clock: relay_clock,
        held_before_capture: held_clock.map(|(hz, client_ms, captured_ms)| SynsHeld {
            hz: f.client_clock_hz.map(|_| hz),
            client_ms,
            captured_ms,
            answered_first: first_answered,
        }),
        gave_up: gave_up.map(|w| (w.to_frame, w.ms)),
        still_waiting: still_waiting.map(|w| (w.to_frame, w.ms)),
        dials_beside: if unanswered { f.dials_beside } else { 0 },
        heard_elsewhere: if unanswered {
            heard_while_dialling(f, &syns)
        } else {
            None
        },
        nothing_heard: if unanswered {
            nothing_heard_while_dialling(f, &syns)
        } else {
            None
        },
    };
    x.display_filter = format!("tcp.stream eq {} && tcp.flags.syn == 1", f.report.stream);
    out.push(x);
}

/// The newest server data another of the client's connections received
/// between its first SYN and its last (noted at each SYN sent again).
fn heard_while_dialling(f: &Facts<'_>, syns: &[&SegmentRecord]) -> Option<(u64, u64)> {
    let first = syns.first()?.ts_ns;
    f.heard_elsewhere_since(first, |at| syns[1..].iter().any(|s| s.frame == at))
}

/// Nothing reached any client from before the first SYN to the last (the
/// capture's newest arrival, as the tracker noted it at the last SYN, came
/// before the first), though the client re-sent to another server in that
/// time: it kept asking elsewhere and nothing came back from anywhere, so
/// its own side of the network was down, not this server (nDPI's
/// skype.pcap 96, judged in session 85: eight SYNs told "dropped on the
/// way or the server is down" while every connection of the client's
/// went unanswered). Not where nothing had reached a client before (a
/// capture of one direction).
fn nothing_heard_while_dialling(
    f: &Facts<'_>,
    syns: &[&SegmentRecord],
) -> Option<crate::model::NothingHeard> {
    let (first, last) = (syns.first()?, syns.last()?);
    super::nothing_heard_since(f.nothing_heard, first.ts_ns, last.frame)
}

/// The SYN-ACK the client's ACK of the handshake echoes (its TSval), when
/// it was captured before the last SYN: an earlier SYN's answer, which
/// arrived (see the module's doc).
fn answered_late(f: &Facts<'_>, syns: &[&SegmentRecord]) -> Option<u64> {
    let last_syn = syns.last()?.frame;
    let syn_ack = |r: &&SegmentRecord| {
        r.dir == Direction::ServerToClient && r.flags.syn() && r.flags.ack() && r.timestamped
    };
    let ack = f
        .timeline
        .iter()
        .find(|r| r.dir == Direction::ClientToServer && !r.flags.syn() && r.ack_set)?;
    if !ack.timestamped {
        return acknowledged_before_any_other(f, syns, ack);
    }
    let echo = ack.tsecr;
    let echoed = f
        .timeline
        .iter()
        .filter(syn_ack)
        .find(|r| r.tsval == echo)?;
    // The server's first SYN-ACK, not its timer's re-send of one lost on
    // the way (TCP_TIMEOUT_INIT, 1 s, after the first: a lab capture with
    // random loss had the re-send pass just before the client's second
    // SYN): within half that timer of the first SYN.
    let first_answer = echoed.ts_ns - syns[0].ts_ns < SYN_ACK_TIMER_NS / 2;
    (echoed.frame < last_syn && first_answer).then_some(echoed.frame)
}

/// Without timestamps to echo: the SYN-ACK captured before the last SYN
/// that the client's handshake ACK acknowledges (its ISN), where no other
/// SYN-ACK was captured between the last SYN and that ACK: the only answer
/// the client can have taken, so it arrived, late (an answer to the last
/// SYN would have passed the capture point before the ACK; nDPI's
/// alexa-app.pcapng 64, judged wrong in session 85: a SYN-ACK captured
/// 865 ms after the first SYN, the client's ACK 135 ms later and 3.4 ms
/// after its second SYN, told lost). The server's first answer, not its
/// own timer's re-send of a lost one: captured within that timer of the
/// first SYN (a re-send leaves a second or more after the SYN reached the
/// server, so passes any capture point later than that after the SYN).
fn acknowledged_before_any_other(
    f: &Facts<'_>,
    syns: &[&SegmentRecord],
    ack: &SegmentRecord,
) -> Option<u64> {
    let last_syn = syns.last()?;
    let syn_ack =
        |r: &&SegmentRecord| r.dir == Direction::ServerToClient && r.flags.syn() && r.flags.ack();
    let answered = f
        .between(syns[0].frame, last_syn.frame)
        .iter()
        .filter(syn_ack)
        .find(|r| r.seq.wrapping_add(1) == ack.ack)?;
    let none_after = !f
        .between(last_syn.frame, ack.frame)
        .iter()
        .any(|r| syn_ack(&r));
    (none_after && answered.ts_ns - syns[0].ts_ns < SYN_ACK_TIMER_NS).then_some(answered.frame)
}

/// The server's SYN-ACK (its frame) and the earlier SYN than the last
/// whose TSval it echoes (that SYN's frame), where the SYNs' TSvals
/// differ. A server echoes the TSval of the SYN it keeps: Linux keeps the
/// first it took (`req->ts_recent`) and answers a copy of it, or its own
/// timer, with a SYN-ACK echoing that one (`inet_rtx_syn_ack`), so that
/// SYN reached it and was kept: neither lost nor dropped by a full SYN or
/// accept queue (those keep nothing, and the SYN that got through is the
/// one echoed). What the client's timer waited for was the server's
/// answer to it, lost on its way back (or held). nDPI's
/// skype_no_unknown.pcap 38: two SYNs 1 s apart, the SYN-ACK a round
/// trip after the second echoing the first.
fn echoes_an_earlier_syn(f: &Facts<'_>, syns: &[&SegmentRecord]) -> Option<(u64, u64)> {
    let last = syns.last()?;
    let syn_ack = f.timeline.iter().find(|r| {
        r.dir == Direction::ServerToClient && r.flags.syn() && r.flags.ack() && r.timestamped
    })?;
    let earlier = syns[..syns.len() - 1]
        .iter()
        .find(|s| s.timestamped && s.tsval == syn_ack.tsecr && s.frame < syn_ack.frame)?;
    (last.timestamped && last.tsval != earlier.tsval).then_some((syn_ack.frame, earlier.frame))
}

/// The server's first and last SYN-ACK (frames), where it sent one for
/// each of the client's SYNs, all after the last, each within its own
/// SYN-ACK timer (a second) of the one before: not its timer's re-sends
/// but answers, one a SYN (a server in SYN-RECEIVED answers a copy of the
/// SYN with its SYN-ACK again, RFC 9293 3.10.7.4, Linux's
/// `inet_rtx_syn_ack`). Every SYN reached the server, then: none was
/// lost, and no queue was full (a full queue answers nothing); the
/// client's timer fired while the first SYN, or its answer, was held on
/// the way (nDPI's alexa-app.pcapng 63: two SYNs a second apart, while
/// the client's uplink held its packets, and two SYN-ACKs 170 ms apart,
/// the first 75 ms after the second SYN, with other connections'
/// answers in one burst).
fn each_syn_answered(f: &Facts<'_>, syns: &[&SegmentRecord]) -> Option<(u64, u64)> {
    let last = syns.last()?;
    let syn_acks: Vec<&SegmentRecord> = f
        .timeline
        .iter()
        .filter(|r| r.dir == Direction::ServerToClient && r.flags.syn() && r.flags.ack())
        .collect();
    let (first, final_one) = (syn_acks.first()?, syn_acks.last()?);
    let answers = syn_acks.len() >= syns.len()
        && first.frame > last.frame
        && syn_acks.windows(2).all(|p| {
            p[1].seq == p[0].seq
                && p[1].ts_ns > p[0].ts_ns
                && p[1].ts_ns - p[0].ts_ns < SYN_ACK_TIMER_NS
        });
    answers.then_some((first.frame, final_one.frame))
}

/// The frame of the first SYN-ACK captured after the first SYN and
/// before the second: the server answered, and the client sent its SYN
/// again all the same.
fn first_answer_before_resend(f: &Facts<'_>, syns: &[&SegmentRecord]) -> Option<u64> {
    let (first, second) = (syns.first()?.frame, syns.get(1)?.frame);
    f.timeline
        .iter()
        .skip_while(|r| r.frame <= first)
        .take_while(|r| r.frame < second)
        .find(|r| r.dir == Direction::ServerToClient && r.flags.syn() && r.flags.ack())
        .map(|r| r.frame)
}

/// How much farther apart than captured a client's clock must space its
/// SYNs for the first to have been held before the capture point (and
/// at least as much again as captured): a hundred times a 1 kHz
/// clock's tick, ten times a 100 Hz one's, far beyond a capture's
/// jitter.
const HELD_BEFORE_CAPTURE_MS: f64 = 100.0;

/// The fastest a TCP timestamp clock ticks (RFC 7323 5.4: at least a
/// millisecond a tick).
pub(crate) const FASTEST_CLOCK_HZ: u32 = 1000;

/// The server's SYN-ACK timer, first round (Linux's TCP_TIMEOUT_INIT;
/// Windows waits longer).
const SYN_ACK_TIMER_NS: i64 = 1_000_000_000;

/// Whether the client sent anything but SYNs and RSTs: an ACK (of a
/// SYN-ACK) or data, as only a connection that opened does.
fn client_went_on(f: &Facts<'_>) -> bool {
    f.timeline.iter().any(|r| {
        r.dir == Direction::ClientToServer && r.flags.ack() && !r.flags.syn() && !r.flags.rst()
    })
}
