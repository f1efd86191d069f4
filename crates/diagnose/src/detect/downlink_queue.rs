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
//! trip, up to how long the stretch had lasted when the answer came (the
//! most it can have queued; where a host handed the link's deliveries
//! over in bunches, and the stretch shows saturated only in parts, as
//! long as the link had been delivering without going idle:
//! `Facts::queued_behind_ns`, server_think_time's bound),
//! of at least a quarter of the round trip and 2 ms, is a wait from the
//! request to the answer's first segment, released by no packet (the
//! queue drained); not for an answer whose first bytes the capture missed
//! (its first captured segment lies beyond what the client had
//! acknowledged: when the answer began is unknown); and no longer than
//! the server's own clock allows where its TSvals keep one (the answer's
//! delivery beyond the fastest, plus a tick: sender_clock.rs; nDPI's
//! instagram.pcap: 10 ms claimed where the server's TSvals left 4 ms at
//! most, the rest its own time). Cost: the waits' sum;
//! `server_think_time` takes the
//! same time off its own.
//! Fix: active queue management on the bottleneck (fq_codel, cake: a
//! short queue shared fairly), fewer parallel downloads (one HTTP/2
//! connection), or more bandwidth.

use super::causality::EXCESS_FLOOR_NS;
use super::Facts;
use crate::model::{Detail, Direction, Finding, FindingKind, Phase, Vantage, Wait};

pub fn detect(f: &Facts<'_>, out: &mut Vec<Finding>) {
    if f.report.vantage == Vantage::Server || f.path_busy.is_empty() {
        return;
    }
    let Some(rtt) = f.rtt_ns else { return };
    let floor = (rtt / 4).max(EXCESS_FLOOR_NS);
    let client = Direction::ClientToServer;
    let mut waits = Vec::new();
    for x in f.exchanges {
        let Some(first) = x.response_first else {
            continue;
        };
        // The answer began in segments the capture missed: when its
        // first byte arrived is unknown (server_think_time's rule).
        if x.response_in_hole {
            continue;
        }
        let (Some(request), Some(answer)) = (f.record(x.request_last.frame), f.record(first.frame))
        else {
            continue;
        };
        let beyond = f.on_clock_of(client, answer) - f.on_clock_of(client, request) - rtt;
        // No longer than the server's own clock says the path held the
        // answer after it left (sender_clock.rs), where it keeps one.
        let queued = f.held_within_clock(
            answer,
            beyond.min(f.downlink_queue_ns(answer.ts_ns).max(f.queued_behind_ns(x))),
        );
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
    let mut finding = f.finding(FindingKind::DownlinkQueue, Some(Phase::FirstByte));
    finding.frames = waits
        .iter()
        .flat_map(|w| [w.from_frame, w.to_frame])
        .collect();
    finding.display_filter = f.filter_frames(&finding.frames);
    finding.cost_ms = waits.iter().map(|w| w.ms).sum();
    finding.confidence = 0.7;
    finding.detail = Detail::DownlinkQueue {
        answers: waits.len() as u32,
        longest_ms: waits.iter().map(|w| w.ms).fold(0.0, f64::max),
    };
    finding.waits = waits;
    out.push(finding);
}
