//! `rwnd_limited` — the receiver's advertised window, not the network or
//! the congestion window, paced the sender: it filled the window, fell
//! silent, and went on only when an ACK moved the window's right edge.
//! The window never reached zero (that is `zero_window`); it was just too
//! small for the path's bandwidth-delay product (a small SO_RCVBUF or
//! `tcp_rmem` maximum, a reader that drains slowly).
//!
//! Signature, on the sender's clock (its packets as captured, the
//! receiver's shifted by the sender's side of the RTT): a new data segment
//! P leaves less than one MSS of room before the right edge of the last
//! window the receiver advertised (`ack + window << scale`, non-zero); the
//! sender is then silent for at least max(2 ms, RTT/4), and its next data
//! segment K leaves right after an ACK that moved the right edge (released
//! by the window update: the data was waiting; `Facts::released_by` gives
//! the tolerance). Reported when it happens at least 3 times and the
//! stalls add up to a round trip or more (one or two rounds are receive
//! autotuning catching up with a growing congestion window).
//! Cost: the stalls (P to K), summed: what the kernel counts as
//! `tcpi_rwnd_limited`.
//! Fix: a receive buffer of at least the bandwidth-delay product: don't pin
//! SO_RCVBUF (it turns autotuning off), raise `net.ipv4.tcp_rmem`'s maximum
//! (and `net.core.rmem_max`); make the reader drain faster.

use super::Facts;
use crate::model::{Detail, Direction, Finding, FindingKind, Phase};

/// Stalls that make a sustained limitation, not autotuning catching up.
const MIN_STALLS: usize = 3;

pub fn detect(f: &Facts<'_>, out: &mut Vec<Finding>) {
    let Some(rtt) = f.rtt_ns.filter(|r| *r > 0) else {
        return;
    };
    for sender in [Direction::ServerToClient, Direction::ClientToServer] {
        let receiver = sender.reverse();
        let mss = f.mss(sender) as u64;
        let events = f.new_data_view(sender);
        // The right edge the sender knows, and the last ACK that moved it.
        let mut edge: Option<u64> = None;
        let mut opened: Option<(i64, u64)> = None;
        // The last data segment, when it left the window (almost) full.
        let mut full: Option<(i64, u64)> = None;
        let mut stalls: Vec<(u64, u64, i64)> = Vec::new();
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
                if edge.is_none_or(|old| e > old) {
                    edge = Some(e);
                    opened = Some((t, r.frame));
                }
                continue;
            }
            if let (Some((tp, p)), Some((ta, a))) = (full, opened) {
                let silence = t - tp;
                let waited = silence >= (rtt / 4).max(2_000_000);
                let released = ta >= tp && f.released_by(sender, t, ta);
                if waited && released {
                    stalls.push((p, a, silence));
                }
            }
            full = match edge {
                Some(e) if (r.end as u64) + mss > e => Some((t, r.frame)),
                _ => None,
            };
        }
        let total: i64 = stalls.iter().map(|s| s.2).sum();
        // Round after round: autotuning lets a growing window lag the
        // congestion window for a round or two by design.
        if stalls.len() < MIN_STALLS || total < rtt {
            continue;
        }
        let mut x = f.finding(FindingKind::RwndLimited, Some(Phase::Transfer));
        for (p, a, _) in stalls.iter().take(8) {
            x.frames.push(*p);
            x.frames.push(*a);
        }
        x.cost_ms = total as f64 / 1e6;
        x.confidence = 0.85;
        x.detail = Detail::RwndLimited {
            sender,
            first_full_frame: stalls[0].0,
            first_open_frame: stalls[0].1,
            stalls: stalls.len() as u32,
        };
        x.display_filter = f.filter_frames(&x.frames);
        out.push(x);
    }
}
