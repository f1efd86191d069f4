//! `downlink_queue` — answers waited in the queue of the client's own
//! downlink: several of its connections kept the link saturated (a page
//! load's parallel downloads through a slow link with a deep buffer), and
//! each answer, however fast the server sent it, joined the end of the
//! bottleneck's queue and reached the client only after what was ahead.
//!
//! Signature, not at the server (which is seen answering before that
//! queue): a response's first byte arrived inside a stretch in which the
//! client's downlink was saturated with the data of more than one of its
//! connections, the answer's own included (bulk data back to back at the
//! link's rate: `Facts::downlink_queue_ns`, path_samples.rs; one other
//! download is enough to hold an answer back), later than one round trip
//! after its request on the client's clock. The wait beyond that round
//! trip (and the server's own turnaround, its quickest other answer on
//! the connection with the downlink idle), up to how long the stretch had
//! lasted when the answer came (the most it can have queued; where a host handed the link's deliveries
//! over in bunches, and the stretch shows saturated only in parts, as
//! long as the link had been delivering without going idle:
//! `Facts::queued_behind_ns`, server_think_time's bound), or, where the
//! server's own clock says the path held it longer, as much of that hold
//! as the link was delivering (not in a stall: `DownlinkGaps`; a short
//! pause is the link handing over what it queued, no queue draining),
//! of at least a quarter of the round trip and 2 ms, is a wait from the
//! request to the answer's first segment, released by no packet (the
//! queue drained); not for an answer whose first bytes the capture missed
//! (its first captured segment lies beyond what the client had
//! acknowledged: when the answer began is unknown); and no longer than
//! the server's own clock allows where its TSvals keep one (the answer's
//! delivery beyond the fastest, plus a tick: sender_clock.rs; nDPI's
//! instagram.pcap: 10 ms claimed where the server's TSvals left 4 ms at
//! most, the rest its own time). The request is the part of it the
//! answer's ACK covers (`Facts::request_answered`: requests sent one
//! after another and taken for one turn, the answer left before the last
//! arrived; nDPI's pinterest.pcap 3); none where it covers none (an
//! earlier answer's). Cost: the waits' sum;
//! `server_think_time` takes the
//! same time off its own.
//! Fix: active queue management on the bottleneck (fq_codel, cake: a
//! short queue shared fairly), fewer parallel downloads (one HTTP/2
//! connection), or more bandwidth.

use super::causality::EXCESS_FLOOR_NS;
use super::Facts;
use crate::model::{Detail, Direction, Finding, FindingKind, Phase, Vantage, Wait};
use rttdoc_analyze::SegmentRecord;

pub fn detect(f: &Facts<'_>, out: &mut Vec<Finding>) {
    if f.report.vantage == Vantage::Server || f.path_busy.is_empty() {
        return;
    }
    let Some(rtt) = f.rtt_ns else { return };
    let floor = (rtt / 4).max(EXCESS_FLOOR_NS);
    let client = Direction::ClientToServer;
    // Each answer's time beyond a round trip after its request, on the
    // client's clock.
    let beyond_of = |x: &rttdoc_analyze::Exchange| {
        let first = x.response_first.filter(|_| !x.response_in_hole)?;
        let answer = f.record(first.frame)?;
        // (The part of the request the answer answered, by its ACK.)
        let request = f.request_answered(x, answer)?;
        Some((
            request,
            answer,
            f.on_clock_of(client, answer) - f.on_clock_of(client, request) - rtt,
        ))
    };
    let beyonds: Vec<Option<(&SegmentRecord, &SegmentRecord, i64)>> =
        f.exchanges.iter().map(beyond_of).collect();
    // Of the answers that came with the downlink idle (no busy stretch
    // they may have queued in), the quickest and the next quickest: the
    // quickest of the others, for each (one pass, not a scan per
    // exchange).
    let mut quickest: [Option<(usize, i64)>; 2] = [None; 2];
    for (i, b) in beyonds.iter().enumerate() {
        let Some((_, answer, b)) = *b else {
            continue;
        };
        if f.downlink_queue_ns(answer.ts_ns) != 0 || f.queued_behind_ns(&f.exchanges[i]) != 0 {
            continue;
        }
        let b = b.max(0);
        let quicker = |q: Option<(usize, i64)>| q.is_none_or(|(_, q)| b < q);
        if quicker(quickest[0]) {
            quickest = [Some((i, b)), quickest[0]];
        } else if quicker(quickest[1]) {
            quickest[1] = Some((i, b));
        }
    }
    let mut waits = Vec::new();
    for (i, answered) in beyonds.iter().enumerate() {
        // (The answer began in segments the capture missed: when its
        // first byte arrived is unknown, server_think_time's rule.)
        let Some((request, answer, beyond)) = *answered else {
            continue;
        };
        let x = &f.exchanges[i];
        // The server's own turnaround, as its quickest other answer on an
        // idle downlink shows it, is part of this one's time too, queued
        // or not (PcapPlusPlus's many-protocols 76: answers 3 ms beyond
        // the round trip on an idle link, and 4.2 ms in a busy stretch).
        let other = match quickest[0] {
            Some((j, _)) if j == i => quickest[1],
            q => q,
        };
        let turnaround = other.map_or(0, |(_, b)| b);
        let beyond = beyond - turnaround;
        // No longer than the server's own clock says the path held the
        // answer after it left (sender_clock.rs), where it keeps one.
        let stretch = f.downlink_queue_ns(answer.ts_ns).max(f.queued_behind_ns(x));
        let mut queued = f.held_within_clock(answer, beyond.min(stretch));
        // And, where it came in a busy stretch, as long as the link was
        // delivering while that clock says the path held it at least: a
        // pause in the deliveries ends the stretch, but a queue does not
        // drain while its link delivers nothing (nDPI's chrome.pcap 5:
        // the answer 26 ms late by its server's 1 kHz clock, as was the
        // bulk data before it on a sibling connection to that server, 6.4
        // ms after a 3.7 ms pause). The pause itself is no wait behind
        // other downloads: the answer would have sat through it alone (a
        // phone's radio stalled 61 ms of tumblr.pcap 5's 86 ms hold).
        if let Some(gaps) = x.downlink_gaps.as_deref().filter(|_| stretch > 0) {
            let held = f.held_after_sending_ns(answer).min(beyond);
            queued = queued.max(gaps.delivering_ns(answer.ts_ns - held, answer.ts_ns));
        }
        if queued >= floor {
            waits.push(Wait {
                from_frame: request.frame,
                to_frame: answer.frame,
                release_frame: None,
                ms: queued as f64 / 1e6,
            });
        }
    }
    if waits.is_empty() {
        return;
    }
    out.push(f.waited_answers(
        FindingKind::DownlinkQueue,
        Phase::FirstByte,
        waits,
        |answers, longest_ms| Detail::DownlinkQueue {
            answers,
            longest_ms,
        },
    ));
}
