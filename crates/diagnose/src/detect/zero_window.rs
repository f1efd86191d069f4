//! `zero_window` — a receiver advertised a zero window: its application
//! was not reading, the socket buffer filled, and the sender had to stop.
//!
//! Signature: a segment with window 0 (not SYN/FIN/RST) from one side, that
//! held the peer back: the peer probed the closed window (zero-window
//! probes, RFC 9293 3.8.6.1; Linux tcp_send_probe0) or sent new data as
//! soon as the window reopened. A zero window the peer never waited on
//! (the last ACK before an RST, a receiver closing with unread data, a
//! peer with nothing more to send) cost nothing and is not reported.
//! Each episode is a wait of the peer from the zero window to the data
//! the window update released (released by the update), or to the update
//! itself when no data followed it at once, or to the connection's last
//! packet when the window never reopened; its length is the window's
//! closure, from the first zero window to the next non-zero one from the
//! same side (on the peer's clock: both reached it one path apart).
//! Bounded by the mechanism: a sender with data waiting on a closed window
//! probes it when its persist timer fires (one retransmission timeout:
//! RFC 9293 3.8.6.1, RFC 6298: at most max(1 s, 3 RTT) for the first);
//! without a probe the data had waited less than that when the window
//! reopened, so an unprobed episode counts at most that long.
//! Cost: the episodes' waits, summed.
//! Fix: make the reader keep up (it is the bottleneck), or give it room:
//! `net.ipv4.tcp_rmem` max, SO_RCVBUF (don't set it small: it disables
//! autotuning), nginx `proxy_buffering` for slow clients.

use super::Facts;
use crate::model::{Detail, Direction, Finding, FindingKind, Phase, Wait};
use rttdoc_analyze::SegmentRecord;
use rttdoc_wire::TcpFlags;

/// One zero-window episode of a receiver.
struct Episode {
    start: i64,
    frame: u64,
    /// The peer sent a probe or data while the window was closed.
    probed: bool,
}

/// The longest a sender's first zero-window probe waits (its persist
/// timer is its retransmission timeout: RFC 6298 starts it at 1 s, and
/// SRTT + 4 RTTVAR is 3 RTT after the first sample).
fn persist_max_ns(f: &Facts<'_>) -> i64 {
    1_000_000_000i64.max(3 * f.rtt_ns.unwrap_or(0))
}

pub fn detect(f: &Facts<'_>, out: &mut Vec<Finding>) {
    let persist = persist_max_ns(f);
    for dir in [Direction::ClientToServer, Direction::ServerToClient] {
        // The tracker counts every zero window an episode could open on
        // (not on a SYN, FIN or RST): none counted, none to look for.
        if f.sent_by(dir).zero_windows == 0 {
            continue;
        }
        let mut open: Option<Episode> = None;
        let mut frames = Vec::new();
        let mut waits: Vec<Wait> = Vec::new();
        // An episode that held the peer back: the window's closure (at
        // most the persist timer when unprobed), ended by `end` (an update
        // or the last packet), and what the peer sent because of it.
        let mut held = |e: &Episode, end: &SegmentRecord, released: Option<&SegmentRecord>| {
            let closed = end.ts_ns - e.start;
            let ns = if e.probed {
                closed
            } else {
                closed.min(persist)
            };
            if frames.len() < 20 {
                frames.push(e.frame);
                frames.push(end.frame);
            }
            waits.push(Wait {
                from_frame: e.frame,
                to_frame: released.map_or(end.frame, |d| d.frame),
                release_frame: released.map(|_| end.frame),
                ms: ns as f64 / 1e6,
            });
        };
        for (i, r) in f.timeline.iter().enumerate() {
            if r.dir != dir {
                if let Some(e) = &mut open {
                    e.probed |= r.probe || r.len > 0;
                }
                continue;
            }
            if r.flags
                .intersects(TcpFlags::FIN | TcpFlags::SYN | TcpFlags::RST)
            {
                continue; // SYN, FIN, RST: their window says nothing of a reader
            }
            match (&mut open, r.window == 0) {
                (None, true) => {
                    open = Some(Episode {
                        start: r.ts_ns,
                        frame: r.frame,
                        probed: false,
                    })
                }
                (Some(e), false) => {
                    let released = released_data(f, dir, r, &f.timeline[i + 1..]);
                    if e.probed || released.is_some() {
                        held(e, r, released);
                    }
                    open = None;
                }
                _ => {}
            }
        }
        if let (Some(e), Some(last)) = (&open, f.timeline.last()) {
            // Never reopened: it held the peer back only if the peer was
            // probing it.
            if e.probed {
                held(e, last, None);
            }
        }
        if waits.is_empty() {
            continue;
        }
        let mut x = f.finding(FindingKind::ZeroWindow, Some(Phase::Transfer));
        x.frames = frames;
        x.cost_ms = waits.iter().map(|w| w.ms).sum();
        x.confidence = 1.0;
        x.detail = Detail::ZeroWindow {
            receiver: dir,
            episodes: waits.len() as u32,
        };
        x.waits = waits;
        x.display_filter = format!(
            "tcp.stream eq {} && (tcp.analysis.zero_window || tcp.analysis.window_update)",
            f.report.stream
        );
        out.push(x);
    }
}

/// The peer's first data after the window update `update` (from the
/// receiver in `dir`), when it left because of it: the peer was waiting.
fn released_data<'a>(
    f: &Facts<'_>,
    dir: Direction,
    update: &SegmentRecord,
    after: &'a [SegmentRecord],
) -> Option<&'a SegmentRecord> {
    let sender = dir.reverse();
    let next = after.iter().find(|r| r.dir == sender && r.len > 0)?;
    let t = f.on_clock_of(sender, next);
    let ta = f.on_clock_of(sender, update);
    (f.released_by(sender, t, ta) && f.can_release(update, next)).then_some(next)
}
