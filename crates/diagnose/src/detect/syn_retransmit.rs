//! `syn_retransmit` — the client sent its SYN more than once.
//!
//! Signature: several SYNs (no ACK flag) with the same sequence number on
//! one connection, the earlier ones unanswered (SYNs after the server's RST
//! are retries of a refused connection: ending `refused`, nothing lost). The kernel resends an unanswered SYN after 1 s, then
//! 3 s ... (Linux: 1, 2, 4 s with tcp_syn_retries): the SYN or the SYN-ACK
//! was lost, or the server's SYN/accept queue was full.
//! Each timeout is a wait from one SYN to the next (no releasing packet:
//! the client's own timer ended it), at most Linux's TCP_RTO_MAX (120 s):
//! a longer gap is not a timer (a clock jump, a collage of captures).
//! Cost: first SYN to the last one (the timeouts waited, summed).
//! Fix: find the drop (loss on the path, SYN queue overflow: watch
//! `nstat TcpExtListenOverflows`, raise `net.core.somaxconn`,
//! `net.ipv4.tcp_max_syn_backlog` and the listen backlog, nginx
//! `listen ... backlog=N`).

use super::Facts;
use crate::model::{Detail, Direction, Finding, FindingKind, Phase, Wait};

pub fn detect(f: &Facts<'_>, out: &mut Vec<Finding>) {
    // A SYN the server answered with RST got its answer: SYNs sent after
    // it are the client trying again (some stacks do), not a lost SYN, and
    // the connection was refused (its ending says so).
    if f.report.handshake.syn_retransmits == 0 {
        return;
    }
    let mut syns = Vec::new();
    for r in f.timeline {
        if r.dir == Direction::ServerToClient && r.flags.rst() && !r.flags.syn() {
            if f.report.handshake.syn_ack_frame.is_none() {
                break;
            }
        } else if r.dir == Direction::ClientToServer && r.flags.syn() && !r.flags.ack() {
            syns.push(r);
        }
    }
    if syns.len() < 2 {
        return;
    }
    // SYNs the server answered with an ACK of another connection were
    // answered: the wait after each is syn_answered_by_ack's.
    let answered: Vec<u64> = super::syn_answered_by_ack::rejections(f)
        .iter()
        .map(|r| r.syn.frame)
        .collect();
    let waits: Vec<Wait> = syns
        .windows(2)
        .filter(|p| p[1].ts_ns - p[0].ts_ns <= super::causality::RTO_MAX_NS)
        .filter(|p| !answered.contains(&p[0].frame))
        .map(|p| Wait {
            from_frame: p[0].frame,
            to_frame: p[1].frame,
            release_frame: None,
            ms: (p[1].ts_ns - p[0].ts_ns) as f64 / 1e6,
        })
        .collect();
    if waits.is_empty() {
        return;
    }
    let mut x = f.finding(FindingKind::SynRetransmit, Some(Phase::TcpHandshake));
    x.frames = syns.iter().map(|r| r.frame).collect();
    x.cost_ms = waits.iter().map(|w| w.ms).sum();
    x.waits = waits;
    x.confidence = 1.0;
    x.detail = Detail::SynRetransmit {
        syns: syns.len() as u32,
    };
    x.display_filter = format!("tcp.stream eq {} && tcp.flags.syn == 1", f.report.stream);
    out.push(x);
}
