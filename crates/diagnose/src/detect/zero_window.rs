//! `zero_window` — a receiver advertised a zero window: its application
//! was not reading, the socket buffer filled, and the sender had to stop.
//!
//! Signature: a segment with window 0 (not SYN/FIN/RST) from one side, that
//! held the peer back: the peer probed the closed window (zero-window
//! probes, RFC 9293 3.8.6.1; Linux tcp_send_probe0) or sent new data as
//! soon as the window reopened. A zero window the peer never waited on
//! (the last ACK before an RST, a receiver closing with unread data, a
//! peer with nothing more to send) cost nothing and is not reported.
//! Cost: from the first zero window to the next non-zero one from the same
//! side, summed over the episodes that held the peer back.
//! Fix: make the reader keep up (it is the bottleneck), or give it room:
//! `net.ipv4.tcp_rmem` max, SO_RCVBUF (don't set it small: it disables
//! autotuning), nginx `proxy_buffering` for slow clients.

use super::Facts;
use crate::model::{Detail, Direction, Finding, FindingKind, Phase};
use rttdoc_analyze::SegmentRecord;
use rttdoc_wire::TcpFlags;

/// One zero-window episode of a receiver.
struct Episode {
    start: i64,
    frame: u64,
    /// The peer sent a probe or data while the window was closed.
    probed: bool,
}

pub fn detect(f: &Facts<'_>, out: &mut Vec<Finding>) {
    for dir in [Direction::ClientToServer, Direction::ServerToClient] {
        let mut open: Option<Episode> = None;
        let mut total_ns = 0i64;
        let mut frames = Vec::new();
        let mut episodes = 0;
        let mut held = |e: &Episode, end: &SegmentRecord, frames: &mut Vec<u64>| {
            total_ns += end.ts_ns - e.start;
            episodes += 1;
            if frames.len() < 20 {
                frames.push(e.frame);
                frames.push(end.frame);
            }
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
                    let waited = e.probed || released_data(f, dir, r, &f.timeline[i + 1..]);
                    if waited {
                        held(e, r, &mut frames);
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
                held(e, last, &mut frames);
            }
        }
        if episodes == 0 {
            continue;
        }
        let mut x = f.finding(FindingKind::ZeroWindow, Some(Phase::Transfer));
        x.frames = frames;
        x.cost_ms = total_ns as f64 / 1e6;
        x.confidence = 1.0;
        x.detail = Detail::ZeroWindow {
            receiver: dir,
            episodes: episodes as u32,
        };
        x.display_filter = format!(
            "tcp.stream eq {} && (tcp.analysis.zero_window || tcp.analysis.window_update)",
            f.report.stream
        );
        out.push(x);
    }
}

/// Whether the peer's first data after the window update `update` (from
/// the receiver in `dir`) left because of it: the peer was waiting.
fn released_data(
    f: &Facts<'_>,
    dir: Direction,
    update: &SegmentRecord,
    after: &[SegmentRecord],
) -> bool {
    let sender = dir.reverse();
    let Some(next) = after.iter().find(|r| r.dir == sender && r.len > 0) else {
        return false;
    };
    let t = f.on_clock_of(sender, next);
    let ta = f.on_clock_of(sender, update);
    f.released_by(sender, t, ta)
}
