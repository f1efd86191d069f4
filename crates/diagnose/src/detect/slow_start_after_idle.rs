//! `slow_start_after_idle` — a keep-alive connection sat idle longer than
//! its retransmission timeout, and the sender restarted from its initial
//! window (RFC 5681 section 4.1, Linux `tcp_slow_start_after_idle=1`):
//! the next large response crawls through slow start again.
//!
//! Signature, on the server's clock: a response after an idle gap of at
//! least max(200 ms, 2 RTT) whose first burst (data sent before the first
//! silence of RTT/2 or more) is 2 to 12 segments (a restart window: the
//! initial window is 10, older stacks 2-4) while an earlier response on
//! the connection went out in bursts at least half again as large and
//! two segments larger, and the response needs more than that first
//! burst. The first burst must have ended for want of window, not of
//! data: its last segment full-sized (the connection's largest; a
//! response's head may go out alone before it, a packet of the window
//! like any other), and
//! the burst after it no more than slow start can grow a window in one
//! round trip (twice the first, plus 2 for ACKs counted in bytes): a short
//! segment or a larger second burst is a server that had no more written
//! yet. Every silence inside the response must be ACK-clocked: no
//! longer than 2 RTT (slow start waits one round trip for ACKs; a longer
//! silence is the application pacing its output, and then slow start is
//! not what paced it) and ended by an ACK from the client, the segment
//! after it leaving the moment that ACK reached the server. Not when
//! another response on the connection, after an idle as long as the
//! restart needs, went out in a first burst as much wider as the earlier
//! responses' must be: that sender does not restart (a server that sent
//! 40 segments at once after 9 s idle, then held a response's small tail
//! for its ACK: Nagle's hold of a tail written apart, not slow start;
//! NetworkML's browsing trace).
//! Cost: those silences (the round trips slow start took again), each a
//! wait from the segment before it to the one after, released by the ACK.
//! Fix: `sysctl net.ipv4.tcp_slow_start_after_idle=0` on the server (BBR
//! ignores it anyway), or keep the connection warm.

use super::Facts;
use crate::model::{Detail, Direction, Finding, FindingKind, Phase, Wait};
use rttdoc_analyze::SegmentRecord;
use rttdoc_wire::TcpFlags;

/// Largest restart window counted: IW10 plus slack for a segment split.
const MAX_RESTART_BURST: usize = 12;

/// One response's shape on the server's clock.
#[derive(Default)]
struct Shape<'a> {
    first_burst: usize,
    /// The first burst's last segment full-sized.
    first_burst_full: bool,
    /// The burst after the first silence.
    second_burst: Option<usize>,
    largest_burst: usize,
    segments: usize,
    /// Silences of RTT/2 or more: (segment before, segment after, ns).
    silences: Vec<(&'a SegmentRecord, &'a SegmentRecord, i64)>,
}

pub fn detect(f: &Facts<'_>, out: &mut Vec<Finding>) {
    let Some(rtt) = f.rtt_ns.filter(|r| *r > 0) else {
        return;
    };
    let sender = Direction::ServerToClient;
    let data: Vec<(i64, &SegmentRecord)> = f
        .timeline
        .iter()
        .filter(|r| r.dir == sender && r.len > 0 && r.new_data)
        .map(|r| (f.on_clock_of(sender, r), r))
        .collect();
    // A full-sized segment: the largest the server sent.
    let full = data.iter().map(|(_, r)| r.len).max().unwrap_or(0);
    let shapes: Vec<Shape<'_>> = f
        .exchanges
        .iter()
        .map(|x| {
            let (Some(first), Some(last)) = (x.response_first, x.response_last) else {
                return Shape::default();
            };
            // The response's segments: a slice of `data` (in frame
            // order), found without a scan per exchange.
            let from = data.partition_point(|(_, r)| r.frame < first.frame);
            let to = data.partition_point(|(_, r)| r.frame <= last.frame);
            let segs = &data[from..to.max(from)];
            let mut shape = Shape {
                segments: segs.len(),
                ..Shape::default()
            };
            let (mut first_burst, mut run) = (None, 1usize);
            for w in segs.windows(2) {
                let gap = w[1].0 - w[0].0;
                if gap >= rtt / 2 {
                    if first_burst.is_some() && shape.second_burst.is_none() {
                        shape.second_burst = Some(run);
                    }
                    first_burst.get_or_insert(run);
                    shape.largest_burst = shape.largest_burst.max(run);
                    run = 1;
                    shape.silences.push((w[0].1, w[1].1, gap));
                } else {
                    run += 1;
                }
            }
            if first_burst.is_some() && shape.second_burst.is_none() {
                shape.second_burst = Some(run);
            }
            shape.largest_burst = shape.largest_burst.max(run);
            shape.first_burst = first_burst.unwrap_or(segs.len());
            shape.first_burst_full = segs
                .get(shape.first_burst.saturating_sub(1))
                .is_some_and(|(_, r)| r.len >= full);
            shape
        })
        .collect();
    // Each exchange's idle before it (from the previous response's end
    // to its request), where the restart would apply.
    let restart_idle = (2 * rtt).max(200_000_000);
    let idle_before: Vec<Option<i64>> = f
        .exchanges
        .iter()
        .enumerate()
        .map(|(i, x)| {
            let prev_end = f.exchanges.get(i.checked_sub(1)?)?.response_last?;
            Some(x.request_first.ts_ns - prev_end.ts_ns).filter(|idle| *idle >= restart_idle)
        })
        .collect();
    for (i, x) in f.exchanges.iter().enumerate().skip(1) {
        let prev = &f.exchanges[i - 1];
        let Some(prev_end) = prev.response_last else {
            continue;
        };
        let Some(idle) = idle_before[i] else {
            continue;
        };
        let shape = &shapes[i];
        let burst = shape.first_burst;
        let earlier_max = shapes[..i]
            .iter()
            .map(|s| s.largest_burst)
            .max()
            .unwrap_or(0);
        // Restarted: a first burst the size of a restart window, after an
        // earlier response had the window clearly wider open.
        let restarted = (2..=MAX_RESTART_BURST).contains(&burst)
            && shape.segments > burst
            && earlier_max >= (burst * 3 / 2).max(burst + 2)
            // Held by the window, not waiting for the application's data.
            && shape.first_burst_full
            && shape.second_burst.is_some_and(|n| n <= 2 * burst + 2);
        if !restarted || shape.silences.is_empty() {
            continue;
        }
        // (Another response after an idle that long went out wide open:
        // this sender does not restart.)
        let wide = (burst * 3 / 2).max(burst + 2);
        let never_restarts = shapes.iter().enumerate().any(|(k, s)| {
            k != i
                && idle_before[k].is_some_and(|other| other >= idle.min(8 * restart_idle))
                && s.first_burst >= wide
        });
        if never_restarts {
            continue;
        }
        // Every silence ACK-clocked, each ended by the client's ACK.
        let ack_clock = 2 * rtt + f.jitter_ns;
        let mut waits = Vec::new();
        for (before, after, gap) in &shape.silences {
            let release = f
                .between(before.frame + 1, after.frame)
                .iter()
                .rev()
                .find(|r| {
                    r.dir != sender
                        && r.ack_set
                        && !r
                            .flags
                            .intersects(TcpFlags::FIN | TcpFlags::SYN | TcpFlags::RST)
                });
            let Some(release) = release.filter(|a| {
                f.can_release(a, after)
                    && f.released_by(
                        sender,
                        f.on_clock_of(sender, after),
                        f.on_clock_of(sender, a),
                    )
            }) else {
                break;
            };
            if *gap > ack_clock {
                break;
            }
            waits.push(Wait {
                from_frame: before.frame,
                to_frame: after.frame,
                release_frame: Some(release.frame),
                ms: *gap as f64 / 1e6,
            });
        }
        if waits.len() != shape.silences.len() {
            continue;
        }
        let Some(first_frame) = x.response_first.map(|s| s.frame) else {
            continue;
        };
        let mut y = f.finding(FindingKind::SlowStartAfterIdle, Some(Phase::Transfer));
        y.frames = vec![prev_end.frame, x.request_first.frame, first_frame];
        y.cost_ms = waits.iter().map(|w| w.ms).sum();
        y.waits = waits;
        y.confidence = 0.8;
        y.detail = Detail::SlowStartAfterIdle {
            exchange: i as u32 + 1,
            idle_s: idle as f64 / 1e9,
            burst_segments: burst as u32,
            earlier_burst_segments: earlier_max as u32,
        };
        y.display_filter = f.filter_frames(&y.frames);
        out.push(y);
    }
}
