//! `rwnd_limited` — the receiver's advertised window, not the network or
//! the congestion window, paced the sender: it filled the window, fell
//! silent, and went on only when an ACK moved the window's right edge.
//! The window never reached zero (that is `zero_window`); it was just too
//! small for the path's bandwidth-delay product (a small SO_RCVBUF or
//! `tcp_rmem` maximum, a reader that drains slowly).
//!
//! Signature: stalls on the full window (`window_stalls.rs`: a new data
//! segment P leaves less room than the sender's next segment before the
//! right edge the receiver advertised, non-zero; the sender sends no new
//! data for at least max(2 ms, RTT/4) and at most the update's round
//! trip; its next new data segment K leaves right after the ACK A that
//! moved the edge), each a wait from P to K released by A, not held by a
//! loss: a stall whose release moved the cumulative ACK across bytes the
//! sender re-sent waited for the hole's repair (the receiver cannot move
//! its window past a hole, whatever its buffer), and is the
//! `retransmission`'s. Reported when it happens at least 3 times and the
//! stalls add up to a round trip or more (one or two rounds are receive
//! autotuning catching up with a growing congestion window).
//! Cost: the stalls (P to K), summed: what the kernel counts as
//! `tcpi_rwnd_limited`.
//! Fix: a receive buffer of at least the bandwidth-delay product: don't pin
//! SO_RCVBUF (it turns autotuning off), raise `net.ipv4.tcp_rmem`'s maximum
//! (and `net.core.rmem_max`); make the reader drain faster.

use super::window_stalls::window_stalls;
use super::Facts;
use crate::model::{Detail, Direction, Finding, FindingKind, Phase, Wait};

/// Stalls that make a sustained limitation, not autotuning catching up.
const MIN_STALLS: usize = 3;

pub fn detect(f: &Facts<'_>, out: &mut Vec<Finding>) {
    let Some(rtt) = f.rtt_ns.filter(|r| *r > 0) else {
        return;
    };
    for sender in [Direction::ServerToClient, Direction::ClientToServer] {
        // Unknown scale (no handshake in the capture): nothing to say.
        let Some(all) = window_stalls(f, sender) else {
            return;
        };
        // A window held by a loss's hole is the loss's (retransmission).
        let stalls: Vec<Wait> = all
            .iter()
            .filter(|s| !s.held_by_loss)
            .map(|s| s.wait)
            .collect();
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
