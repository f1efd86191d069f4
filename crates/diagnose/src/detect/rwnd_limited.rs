//! `rwnd_limited` — the receiver's advertised window, not the network or
//! the congestion window, paced the sender: it filled the window, fell
//! silent, and went on only when an ACK moved the window's right edge.
//! The window never reached zero (that is `zero_window`); it was just too
//! small for the path's bandwidth-delay product (a small SO_RCVBUF or
//! `tcp_rmem` maximum, a reader that drains slowly).
//!
//! Signature, on the sender's clock (its packets as captured, the
//! receiver's shifted by the sender's side of the RTT): a new data segment
//! P leaves less room than the sender's next segment before the right edge
//! of the last window the receiver advertised (`ack + window << scale`,
//! non-zero); the next segment is one MSS, or half the largest window
//! advertised when that is smaller (Linux's `tcp_bound_to_half_wnd`: on
//! loopback, MSS 65483, a 43 KB window takes 21 KB segments); the
//! sender is then silent for at least max(2 ms, RTT/4), and its next data
//! segment K leaves right after an ACK that moved the right edge (released
//! by the window update: the data was waiting; `Facts::released_by` gives
//! the tolerance). Reported when it happens at least 3 times and the
//! stalls add up to a round trip or more (one or two rounds are receive
//! autotuning catching up with a growing congestion window).
//! Each stall is a wait from P to K released by the window update A, and
//! lasts at most the update's round trip: a round trip plus the
//! receiver's delayed-ACK timer (longer, the window did not hold the
//! sender all along: a reader that stopped closes the window to zero,
//! `zero_window`'s, and a sender with nothing to send is idle).
//! Cost: the stalls (P to K), summed: what the kernel counts as
//! `tcpi_rwnd_limited`.
//! Fix: a receive buffer of at least the bandwidth-delay product: don't pin
//! SO_RCVBUF (it turns autotuning off), raise `net.ipv4.tcp_rmem`'s maximum
//! (and `net.core.rmem_max`); make the reader drain faster.

use super::Facts;
use crate::model::{Detail, Direction, Finding, FindingKind, Phase, Wait};
use rttdoc_analyze::SegmentRecord;

/// Stalls that make a sustained limitation, not autotuning catching up.
const MIN_STALLS: usize = 3;

pub fn detect(f: &Facts<'_>, out: &mut Vec<Finding>) {
    let Some(rtt) = f.rtt_ns.filter(|r| *r > 0) else {
        return;
    };
    let longest = rtt + super::causality::MAX_ACK_DELAY_NS + f.jitter_ns;
    for sender in [Direction::ServerToClient, Direction::ClientToServer] {
        let receiver = sender.reverse();
        let mss = f.mss(sender) as u64;
        let events = f.new_data_view(sender);
        // The right edge the sender knows, and the last ACK that moved it.
        let mut edge: Option<u64> = None;
        let mut opened: Option<(i64, &SegmentRecord)> = None;
        // The last data segment, when it left the window (almost) full.
        let mut full: Option<(i64, &SegmentRecord)> = None;
        let mut stalls: Vec<Wait> = Vec::new();
        // The largest window the receiver advertised: the sender's segments
        // are at most half of it (`tcp_bound_to_half_wnd`), so on a path
        // whose MSS exceeds the window (loopback's 65483) "full" is less
        // room than the sender's next segment, not than one MSS.
        let mut max_window: u64 = 0;
        for &(t, r) in events {
            if r.dir == receiver {
                if r.window == 0 {
                    // A closed window is zero_window's.
                    full = None;
                    continue;
                }
                // Unknown scale (no handshake in the capture): nothing to say.
                let Some(e) = f.window_edge(r) else {
                    return;
                };
                max_window = max_window.max(e.saturating_sub(r.ack as u64));
                if edge.is_none_or(|old| e > old) {
                    edge = Some(e);
                    opened = Some((t, r));
                }
                continue;
            }
            if let (Some((tp, p)), Some((ta, a))) = (full, opened) {
                let silence = t - tp;
                let waited = silence >= (rtt / 4).max(2_000_000) && silence <= longest;
                let released = ta >= tp && f.released_by(sender, t, ta) && f.can_release(a, r);
                if waited && released {
                    stalls.push(Wait {
                        from_frame: p.frame,
                        to_frame: r.frame,
                        release_frame: Some(a.frame),
                        ms: silence as f64 / 1e6,
                    });
                }
            }
            // tcp_bound_to_half_wnd: half the largest window once it is
            // above the default MSS (536), the window itself below.
            let cutoff = if max_window > 536 {
                max_window / 2
            } else {
                max_window
            };
            let next_segment = mss.min(cutoff.max(1));
            full = match edge {
                Some(e) if (r.end as u64) + next_segment > e => Some((t, r)),
                _ => None,
            };
        }
        let total: i64 = stalls.iter().map(|s| (s.ms * 1e6) as i64).sum();
        // Round after round: autotuning lets a growing window lag the
        // congestion window for a round or two by design.
        if stalls.len() < MIN_STALLS || total < rtt {
            continue;
        }
        let mut x = f.finding(FindingKind::RwndLimited, Some(Phase::Transfer));
        for w in stalls.iter().take(8) {
            x.frames.push(w.from_frame);
            x.frames.extend(w.release_frame);
        }
        x.cost_ms = stalls.iter().map(|w| w.ms).sum();
        x.confidence = 0.85;
        x.detail = Detail::RwndLimited {
            sender,
            first_full_frame: stalls[0].from_frame,
            first_open_frame: stalls[0].release_frame.unwrap_or(0),
            stalls: stalls.len() as u32,
        };
        x.waits = stalls;
        x.display_filter = f.filter_frames(&x.frames);
        out.push(x);
    }
}
