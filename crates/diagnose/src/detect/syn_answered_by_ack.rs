//! `syn_answered_by_ack` — the server answered the client's SYN with an
//! ACK of another connection on the same addresses and ports.
//!
//! Signature: a server host that still holds a connection on the SYN's
//! 4-tuple does not open a new one. An established connection answers a
//! SYN with a challenge ACK (RFC 5961 4.2: Linux, the BSDs, Windows); a
//! connection in TIME-WAIT answers with an ACK one it cannot accept (its
//! sequence number not beyond the old connection's, nor its timestamp
//! newer: TCP timestamps off, another host behind the same NAT); both ACKs
//! carry the old connection's numbers, not the SYN's sequence number plus
//! one. The client, in SYN-SENT, answers an ACK that does not acknowledge
//! its SYN with a RST whose sequence number is that ACK's (RFC 793 3.4),
//! which ends the server's old connection (or its TIME-WAIT), and sends
//! its SYN again: Linux at once (it re-arms its SYN timer to
//! TCP_TIMEOUT_MIN, 2 jiffies, after such an ACK), other stacks on their
//! SYN timer (1 s, 3 s). The server answers that SYN with a SYN-ACK.
//! Who held the port pair: a client that forgot a connection (its host
//! restarted or crashed without a word, a NAT whose mapping expired gave
//! the port to another connection, a client bound to a fixed source
//! port), or that connection's TIME-WAIT; a DDoS mitigation's SYN
//! authentication answers a first SYN with a wrong ACK on purpose, to
//! make the client reset and try again.
//!
//! In the capture: a pure ACK of the server's (no SYN, FIN or RST, no
//! data) that acknowledges something other than the SYN (relative ACK
//! not 1), while the client had sent nothing but SYNs (and its resets),
//! sent after that SYN reached the server (on the server's clock; away
//! from the server within half a round trip and 1 ms, as the path's delay
//! varies),
//! before any SYN-ACK, and a SYN of the client's after it.
//!
//! Cost: a wait from each SYN so answered to the client's next SYN,
//! released by the ACK when the SYN left within [`QUICK_RETRY_NS`] of the
//! ACK's arrival (Linux's re-armed timer), otherwise by no packet (the
//! SYN timer's). Phase: the TCP handshake. The SYNs it answered are not
//! `syn_retransmit`'s (they were answered).
//! Fix: on the server, drop connections whose client is gone (TCP
//! keepalive, idle timeouts shorter than the NAT's); on the client, let
//! the kernel choose the source port and keep TCP timestamps on (a
//! TIME-WAIT takes a SYN with a newer timestamp).

use super::Facts;
use crate::model::{Detail, Direction, Finding, FindingKind, Phase, Wait};
use rttdoc_analyze::SegmentRecord;

/// How soon after the ACK's arrival a SYN re-send counts as released by
/// it: Linux re-arms its SYN timer to TCP_TIMEOUT_MIN (2 jiffies: 2-20 ms
/// by HZ) after an ACK that does not acknowledge its SYN; every stack's
/// own SYN timer waits 1 s or more.
const QUICK_RETRY_NS: i64 = 50_000_000;

/// A SYN the server answered with an ACK of another connection.
pub(crate) struct Rejection<'a> {
    /// The SYN the ACK answered.
    pub syn: &'a SegmentRecord,
    /// The server's ACK.
    pub ack: &'a SegmentRecord,
    /// The client's RST of it (its sequence number the ACK's), if captured.
    pub reset: Option<&'a SegmentRecord>,
    /// The client's next SYN.
    pub next_syn: &'a SegmentRecord,
}

/// The connection's SYNs the server answered with an ACK of another
/// connection, in order: found once per connection
/// (`Facts::syn_answers_view`).
pub(crate) fn rejections<'f, 'a>(f: &'f Facts<'a>) -> &'f [Rejection<'a>] {
    f.syn_answers_view.get_or_init(|| find(f))
}

/// What [`rejections`] gives (the module's signature).
fn find<'a>(f: &Facts<'a>) -> Vec<Rejection<'a>> {
    let hs = &f.report.handshake;
    // Most connections: one comparison.
    if hs.syn_retransmits == 0 {
        return Vec::new();
    }
    let (client, server) = (Direction::ClientToServer, Direction::ServerToClient);
    // Before the SYN-ACK (the answer that opened the connection); all of
    // the timeline when none came.
    let before = f.between(0, hs.syn_ack_frame.unwrap_or(u64::MAX));
    let is_syn = |r: &SegmentRecord| r.dir == client && r.flags.syn() && !r.flags.ack();
    // The client in SYN-SENT: it had sent nothing but SYNs (and its
    // resets of such ACKs). Past that, a capture that missed the SYN-ACK
    // shows the server's ACKs of the client's data.
    let syn_sent = before
        .iter()
        .position(|r| r.dir == client && !r.flags.syn() && !r.flags.rst())
        .unwrap_or(before.len());
    // Away from the server, when the ACK left is known by the one-way
    // delay the connection's later handshake showed; the path's delay
    // varies (a queue, a busy relay; on a LAN a busy host doubles a
    // round trip of 0.1 ms), so up to half a round trip, and 1 ms. (An
    // old ACK that crossed the SYN arrives well within the round trip;
    // one that left just before the SYN arrived came from a connection
    // the server still held, which would have answered the SYN the same
    // way.)
    let slack = f.departure_slack_ns(server);
    let mut out: Vec<Rejection<'a>> = Vec::new();
    for (i, ack) in before[..syn_sent].iter().enumerate() {
        if ack.dir != server
            || !ack.ack_set
            || ack.flags.syn()
            || ack.flags.rst()
            || ack.flags.fin()
            || ack.len > 0
            || ack.ack == 1
        {
            continue;
        }

        // The SYN it answered: the client's last SYN that reached the
        // server before the ACK left. An ACK sent earlier (the old
        // connection's, late on the path) answers nothing.
        let left = f.on_clock_of(server, ack) + slack;
        let Some(syn) = before[..i]
            .iter()
            .rfind(|r| is_syn(r) && f.on_clock_of(server, r) <= left)
        else {
            continue;
        };
        if out.last().is_some_and(|o| o.syn.frame == syn.frame) {
            continue;
        }
        let Some(next_syn) = before[i + 1..].iter().find(|r| is_syn(r)) else {
            continue;
        };
        let reset = f
            .between(ack.frame + 1, next_syn.frame)
            .iter()
            .find(|r| r.dir == client && r.flags.rst() && r.seq == ack.ack);
        out.push(Rejection {
            syn,
            ack,
            reset,
            next_syn,
        });
    }
    out
}

pub fn detect(f: &Facts<'_>, out: &mut Vec<Finding>) {
    let found = rejections(f);
    if found.is_empty() {
        return;
    }
    let client = Direction::ClientToServer;
    let waits: Vec<Wait> = found
        .iter()
        .filter(|r| r.next_syn.ts_ns - r.syn.ts_ns <= super::causality::RTO_MAX_NS)
        .map(|r| {
            let after_ack = f.on_clock_of(client, r.next_syn) - f.on_clock_of(client, r.ack);
            Wait {
                from_frame: r.syn.frame,
                to_frame: r.next_syn.frame,
                release_frame: (after_ack <= QUICK_RETRY_NS).then_some(r.ack.frame),
                ms: (r.next_syn.ts_ns - r.syn.ts_ns).max(0) as f64 / 1e6,
            }
        })
        .collect();
    if waits.is_empty() {
        return;
    }
    let mut x = f.finding(FindingKind::SynAnsweredByAck, Some(Phase::TcpHandshake));
    let mut frames = Vec::new();
    for r in found {
        frames.extend([r.syn.frame, r.ack.frame]);
        frames.extend(r.reset.map(|s| s.frame));
        frames.push(r.next_syn.frame);
    }
    frames.sort_unstable();
    frames.dedup();
    x.display_filter = f.filter_frames(&frames);
    x.frames = frames;
    x.cost_ms = waits.iter().map(|w| w.ms).sum();
    x.detail = Detail::SynAnsweredByAck {
        answers: found.len() as u32,
        reset: found.iter().all(|r| r.reset.is_some()),
        quick_retry: waits.iter().all(|w| w.release_frame.is_some()),
    };
    x.waits = waits;
    out.push(x);
}
