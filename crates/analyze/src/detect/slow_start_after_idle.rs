//! `slow_start_after_idle` — a keep-alive connection sat idle longer than
//! its retransmission timeout, and the sender restarted from its initial
//! window (RFC 5681 section 4.1, Linux `tcp_slow_start_after_idle=1`):
//! the next large response crawls through slow start again.
//!
//! Signature, on the server's clock: a response after an idle gap of at
//! least max(200 ms, 2 RTT) whose first burst (data sent before the first
//! silence of RTT/2 or more) is at most 12 segments while an earlier
//! response on the connection reached bursts half again as large, and the
//! response needs more than that first burst. Cost: the silences inside that response (the
//! round trips slow start took again).
//! Fix: `sysctl net.ipv4.tcp_slow_start_after_idle=0` on the server (BBR
//! ignores it anyway), or keep the connection warm.

use super::Facts;
use crate::model::{Direction, Finding};

pub fn detect(f: &Facts<'_>, out: &mut Vec<Finding>) {
    let Some(rtt) = f.rtt_ns.filter(|r| *r > 0) else {
        return;
    };
    let sender = Direction::ServerToClient;
    let data: Vec<(i64, &crate::connection::SegmentRecord)> = f
        .timeline
        .iter()
        .filter(|r| r.dir == sender && r.len > 0 && r.new_data)
        .map(|r| (f.on_clock_of(sender, r), r))
        .collect();
    // Per response: (first burst, largest burst, segments, silences ns,
    // first frame); a burst is the run of segments between silences of RTT/2.
    let mut bursts: Vec<(usize, usize, usize, i64, u64)> = Vec::new();
    for x in f.exchanges {
        let (Some(first), Some(last)) = (x.response_first, x.response_last) else {
            bursts.push((0, 0, 0, 0, 0));
            continue;
        };
        let segs: Vec<i64> = data
            .iter()
            .filter(|(_, r)| r.frame >= first.frame && r.frame <= last.frame)
            .map(|(t, _)| *t)
            .collect();
        let (mut first_burst, mut largest, mut run, mut silences) = (None, 0usize, 1usize, 0i64);
        for w in segs.windows(2) {
            let gap = w[1] - w[0];
            if gap >= rtt / 2 {
                first_burst.get_or_insert(run);
                largest = largest.max(run);
                run = 1;
                silences += gap;
            } else {
                run += 1;
            }
        }
        largest = largest.max(run);
        bursts.push((
            first_burst.unwrap_or(segs.len()),
            largest,
            segs.len(),
            silences,
            first.frame,
        ));
    }
    for (i, x) in f.exchanges.iter().enumerate().skip(1) {
        let prev = &f.exchanges[i - 1];
        let Some(prev_end) = prev.response_last else {
            continue;
        };
        let idle = x.request_first.ts_ns - prev_end.ts_ns;
        if idle < (2 * rtt).max(200_000_000) {
            continue;
        }
        let (burst, _, segs, silences, first_frame) = bursts[i];
        let earlier_max = bursts[..i].iter().map(|b| b.1).max().unwrap_or(0);
        // Restarted: a first burst near the initial window, after an earlier
        // response had the window well open.
        if burst == 0 || burst > 12 || segs <= burst || earlier_max < burst * 3 / 2 || silences == 0
        {
            continue;
        }
        let mut y = f.finding("slow_start_after_idle", Some("transfer"));
        y.frames = vec![prev_end.frame, x.request_first.frame, first_frame];
        y.cost_ms = silences as f64 / 1e6;
        y.confidence = 0.8;
        y.explanation = format!(
            "Exchange {}: after {:.1} s idle the server sent only {burst} segments before waiting for ACKs (an earlier response went out in bursts of {earlier_max}): \
             it restarted slow start from its initial window, {:.0} ms of extra round trips.",
            i + 1,
            idle as f64 / 1e9,
            y.cost_ms
        );
        y.fix = "sysctl -w net.ipv4.tcp_slow_start_after_idle=0 on the server (keeps the congestion window across idle periods).".into();
        y.display_filter = f.filter_frames(&y.frames);
        out.push(y);
    }
}
