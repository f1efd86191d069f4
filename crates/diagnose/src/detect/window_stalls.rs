//! Stalls on a full receive window, and what held the window: the
//! receiver's buffer (`rwnd_limited`'s) or a loss (`retransmission`'s).
//!
//! A stall, on the sender's clock (its packets as captured, the
//! receiver's shifted by the sender's side of the RTT): a new data segment
//! P leaves less room than the sender's next segment before the right
//! edge of the last window the receiver advertised (`ack + window <<
//! scale`, non-zero); the next segment is one MSS, or half the largest
//! window advertised when that is smaller (Linux's
//! `tcp_bound_to_half_wnd`: on loopback, MSS 65483, a 43 KB window takes
//! 21 KB segments); the sender sends no new data for at least max(2 ms,
//! RTT/4), and its next new data segment K leaves right after an ACK A
//! that moved the right edge (released by the window update:
//! `Facts::released_by` gives the tolerance). The stall lasts at most
//! the update's round trip: a round trip plus the receiver's longest
//! delayed ACK (longer, the window did not hold the sender all along: a
//! reader that stopped closes the window to zero, `zero_window`'s, and a
//! sender with nothing to send is idle).
//!
//! Held by a loss: the right edge is the cumulative ACK plus the window,
//! and a receiver missing a segment cannot move its cumulative ACK past
//! the hole, however much it holds beyond it (SACKed, out of order in its
//! buffer: Linux even shrinks the window by it). The sender that keeps
//! sending through its loss recovery reaches that edge and waits for the
//! hole's repair, not for the reader. So a stall is held by a loss when
//! the receiver's cumulative ACK as P left (`a_P`, the window's left edge)
//! is a byte a re-send R carried (the hole's start), R left before the
//! release A, A acknowledges past R's start, and R was no needless
//! re-send (the receiver had not acknowledged its bytes before it, nor
//! reported them twice with a D-SACK after it: then nothing was missing at
//! the edge, a tail-loss probe raced the ACK). The others are held by the
//! receive buffer.

use super::Facts;
use crate::model::{Direction, Wait};
use rttdoc_analyze::seq;
use rttdoc_analyze::SegmentRecord;

/// A stall on a full receive window (see the module's doc).
#[derive(Debug, Clone, Copy)]
pub struct WindowStall {
    /// From P (the segment that filled the window) to K (the next new
    /// data), released by the window update A.
    pub wait: Wait,
    /// The window's left edge was held by a hole a re-send repaired.
    pub held_by_loss: bool,
}

/// The stalls of `sender` on its receiver's window, in order; `None` when
/// the window cannot be read (no RTT, or no handshake: the window scale is
/// unknown). Found once per connection and sender, for both detectors.
pub fn window_stalls<'f>(f: &'f Facts<'_>, sender: Direction) -> Option<&'f [WindowStall]> {
    f.window_stall_views[sender.index()]
        .get_or_init(|| find(f, sender))
        .as_deref()
}

fn find(f: &Facts<'_>, sender: Direction) -> Option<Vec<WindowStall>> {
    let rtt = f.rtt_ns.filter(|r| *r > 0)?;
    let longest = rtt + super::causality::MAX_ACK_DELAY_NS + f.jitter_ns;
    let receiver = sender.reverse();
    let mss = f.mss(sender) as u64;
    // What the sender re-sent, gathered at the first stall (most
    // connections have none) and only when its stats count re-sends.
    let counted = f.sent_by(sender).retransmissions > 0;
    let mut resent: Option<Vec<&SegmentRecord>> = None;
    // The right edge the sender knows, and the last ACK that moved it.
    let mut edge: Option<u64> = None;
    let mut opened: Option<(i64, &SegmentRecord)> = None;
    // The receiver's cumulative ACK as last seen.
    let mut acked: Option<u32> = None;
    // The last data segment, when it left the window (almost) full, and
    // the receiver's cumulative ACK then.
    let mut full: Option<(i64, &SegmentRecord, Option<u32>)> = None;
    let mut stalls = Vec::new();
    // The largest window the receiver advertised: the sender's segments
    // are at most half of it (`tcp_bound_to_half_wnd`), so on a path
    // whose MSS exceeds the window (loopback's 65483) "full" is less
    // room than the sender's next segment, not than one MSS.
    let mut max_window: u64 = 0;
    for &(t, r) in f.new_data_view(sender) {
        if r.dir == receiver {
            if r.ack_set {
                acked = Some(r.ack);
            }
            if r.window == 0 {
                // A closed window is zero_window's.
                full = None;
                continue;
            }
            // Unknown scale (no handshake in the capture): nothing to say.
            let e = f.window_edge(r)?;
            max_window = max_window.max(e.saturating_sub(r.ack as u64));
            if edge.is_none_or(|old| e > old) {
                edge = Some(e);
                opened = Some((t, r));
            }
            continue;
        }
        if let (Some((tp, p, acked_at_p)), Some((ta, a))) = (full, opened) {
            let silence = t - tp;
            let waited = silence >= (rtt / 4).max(2_000_000) && silence <= longest;
            let released = ta >= tp && f.released_by(sender, t, ta) && f.can_release(a, r);
            if waited && released {
                let resent = resent.get_or_insert_with(|| {
                    if !counted {
                        return Vec::new();
                    }
                    f.timeline
                        .iter()
                        .filter(|r| r.dir == sender && r.retransmission && r.len > 0 && !r.probe)
                        .collect()
                });
                let held_by_loss = acked_at_p.is_some_and(|edge_at_p| {
                    resent.iter().any(|x| {
                        seq::le(x.seq, edge_at_p)
                            && seq::lt(edge_at_p, x.end)
                            && x.frame < a.frame
                            && seq::lt(x.seq, a.ack)
                            && !super::retransmission::spurious(f, x)
                    })
                });
                stalls.push(WindowStall {
                    wait: Wait {
                        from_frame: p.frame,
                        to_frame: r.frame,
                        release_frame: Some(a.frame),
                        ms: silence as f64 / 1e6,
                    },
                    held_by_loss,
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
            Some(e) if (r.end as u64) + next_segment > e => Some((t, r, acked)),
            _ => None,
        };
    }
    Some(stalls)
}
