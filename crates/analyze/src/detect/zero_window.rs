//! `zero_window` — a receiver advertised a zero window: its application
//! was not reading, the socket buffer filled, and the sender had to stop.
//!
//! Signature: a segment with window 0 (not SYN/RST) from one side; the peer
//! sends zero-window probes until a window update. Cost: from the first
//! zero window to the next non-zero one from the same side, summed.
//! Fix: make the reader keep up (it is the bottleneck), or give it room:
//! `net.ipv4.tcp_rmem` max, SO_RCVBUF (don't set it small: it disables
//! autotuning), nginx `proxy_buffering` for slow clients.

use super::Facts;
use crate::model::{Direction, Finding};

pub fn detect(f: &Facts<'_>, out: &mut Vec<Finding>) {
    for dir in [Direction::ClientToServer, Direction::ServerToClient] {
        let mut closed_at: Option<(i64, u64)> = None;
        let mut total_ns = 0i64;
        let mut frames = Vec::new();
        let mut episodes = 0;
        for r in f
            .timeline
            .iter()
            .filter(|r| r.dir == dir && r.flags & 0x06 == 0)
        {
            match (closed_at, r.window == 0) {
                (None, true) => {
                    closed_at = Some((r.ts_ns, r.frame));
                    episodes += 1;
                    if frames.len() < 20 {
                        frames.push(r.frame);
                    }
                }
                (Some((t, _)), false) => {
                    total_ns += r.ts_ns - t;
                    if frames.len() < 20 {
                        frames.push(r.frame);
                    }
                    closed_at = None;
                }
                _ => {}
            }
        }
        if episodes == 0 {
            continue;
        }
        let who = if dir == Direction::ClientToServer {
            "client"
        } else {
            "server"
        };
        let mut x = f.finding("zero_window", Some("transfer"));
        x.frames = frames;
        x.cost_ms = total_ns as f64 / 1e6;
        x.confidence = 1.0;
        x.explanation = format!(
            "The {who} advertised a zero receive window {episodes} time(s), {:.0} ms in all: its application was not reading fast enough, \
             its socket buffer filled and the sender had to wait.",
            x.cost_ms
        );
        x.fix = format!(
            "Make the {who}'s reader keep up (it is the bottleneck), or give it buffer: raise net.ipv4.tcp_rmem's maximum, don't pin a small SO_RCVBUF (it turns autotuning off)."
        );
        x.display_filter = format!(
            "tcp.stream eq {} && (tcp.analysis.zero_window || tcp.analysis.window_update)",
            f.report.stream
        );
        out.push(x);
    }
}
