//! `listener_reset` — the server's host reset the connection when the
//! client finished its handshake: its listener never took it.
//!
//! Signature: a host with no socket for a segment that carries an ACK
//! answers it with a RST whose sequence number is that ACK's
//! acknowledgment number and no ACK flag (RFC 793 3.4; Linux's
//! `tcp_v4_send_reset`, the BSDs' `tcp_respond`). The server's side of a
//! connection that its SYN-ACK offered has no socket when:
//!
//! - its listener's accept queue is full as the handshake's ACK arrives
//!   and Linux's `net.ipv4.tcp_abort_on_overflow` is 1 (0, the default,
//!   drops the ACK instead: `accept_queue_full`), or FreeBSD's socket for
//!   it cannot be made (`net.inet.tcp.syncache.rst_on_sock_fail`, on by
//!   default);
//! - the listener closed since its SYN-ACK (the server stopped or
//!   restarted: its half-open connections go with it);
//! - the half-open connection expired (its SYN-ACK re-sends gave up, the
//!   client's first packet after that: a listener that never had room);
//! - a SYN cookie the ACK returns no longer checks out.
//!
//! Each time the RST answers the client's first packets after the
//! SYN-ACK (its handshake ACK, and its request behind it gets one too),
//! carries sequence number SYN-ACK + 1 (the server sent nothing), and the
//! server sent nothing after its SYN-ACK but that SYN-ACK again. An
//! application that accepted the connection and aborted it (SO_LINGER 0,
//! HAProxy's `tcp-request connection reject`) sends RST with the ACK
//! flag (`tcp_send_active_reset`): not this. In the capture: the server's
//! first packet after its SYN-ACK (and SYN-ACK re-sends) is a RST without
//! the ACK flag, sequence number 1 (relative), no data; a client packet
//! after the SYN-ACK (not a SYN) reached the server before it left (on
//! the server's clock: what the RST answers comes before it); the client
//! had not closed (its FIN or RST) before the RST reached it: a client
//! that connected and closed at once (a port check) waited for nothing.
//! Not a Fast Open connection (the server's from its SYN). Away from the
//! server, a device on the path that speaks for it (a firewall, a load
//! balancer that forgot the connection) sends the same RST; the words
//! say so.
//!
//! Cost: the client's connection ended in an error instead of an answer:
//! the time from the SYN the SYN-ACK answered to the RST's arrival at the
//! client (on its clock); from its request instead when that left later
//! after the SYN-ACK reached it than a client waiting for the connection
//! sends (rttdoc-analyze's `READY_NS`): a connection opened ahead of need
//! (Chrome's preconnect, its half-open state expired on a server whose
//! SYN-ACKs went unanswered) waited for nothing until it was used. An
//! outcome never attributed to the ledger's
//! excess (the connection has no answer to be late). Phase: the TCP
//! handshake. No waits: nothing the client sent was ever let through.
//! Fix: on the server, a listener with room (accept sooner, a backlog and
//! `net.core.somaxconn` that cover the bursts: `nstat -az
//! TcpExtListenOverflows`), `net.ipv4.tcp_abort_on_overflow=0` so that a
//! burst waits instead of failing, and restarts that hand the listening
//! socket over (SO_REUSEPORT, systemd socket activation, nginx's binary
//! upgrade) instead of closing it.

use super::Facts;
use crate::model::{Detail, Direction, Finding, FindingKind, Phase};
use rttdoc_analyze::SegmentRecord;

/// A connection the server's host reset as its handshake completed.
pub(crate) struct Reset<'a> {
    /// The SYN the SYN-ACK answered.
    pub syn: &'a SegmentRecord,
    /// The server's (first) SYN-ACK.
    pub syn_ack: &'a SegmentRecord,
    /// The client's first packet after the SYN-ACK that reached the
    /// server before the RST left: the one the RST answered when it came
    /// at once (a full queue, a closed listener).
    pub answered: &'a SegmentRecord,
    /// The client's first data, if it sent any before the RST reached it.
    pub request: Option<&'a SegmentRecord>,
    /// The server's RST.
    pub rst: &'a SegmentRecord,
    /// The server's SYN-ACKs re-sent before the RST.
    pub syn_acks_resent: u32,
}

/// The reset, when the connection shows one (the module's signature).
pub(crate) fn find<'a>(f: &Facts<'a>) -> Option<Reset<'a>> {
    let hs = &f.report.handshake;
    let (client, server) = (Direction::ClientToServer, Direction::ServerToClient);
    let syn_ack = f.record(hs.syn_ack_frame?)?;
    let after = f.between(syn_ack.frame + 1, u64::MAX);
    // The server's first packet after its SYN-ACK and its re-sends. Most
    // connections: data or an ACK.
    let at = after
        .iter()
        .position(|r| r.dir == server && !(r.flags.syn() && r.seq == syn_ack.seq))?;
    let rst = &after[at];
    // A reply from no socket: RST alone, the sequence number right after
    // the SYN-ACK's (nothing sent), no data.
    if !rst.flags.rst() || rst.ack_set || rst.seq != syn_ack.seq.wrapping_add(1) || rst.len > 0 {
        return None;
    }
    // A Fast Open SYN's connection is the server's from its SYN.
    if hs.tfo.is_some() {
        return None;
    }
    let syn_acks_resent = after[..at].iter().filter(|r| r.dir == server).count() as u32;
    // The SYN the SYN-ACK answered: the client's last SYN before it.
    let syn = f
        .between(0, syn_ack.frame)
        .iter()
        .rfind(|r| r.dir == client && r.flags.syn() && !r.flags.ack())?;
    // What the RST answered: the client's first packet after the SYN-ACK
    // that reached the server before the RST left (none: it answered
    // nothing the capture shows).
    let left = f.on_clock_of(server, rst) + f.departure_slack_ns(server);
    let answered = after[..at]
        .iter()
        .find(|r| r.dir == client && !r.flags.syn() && f.on_clock_of(server, r) <= left)?;
    // A client that closed before the RST reached it waited for nothing.
    let reached = f.on_clock_of(client, rst);
    let before_reached = |r: &&SegmentRecord| r.dir != client || f.on_clock_of(client, r) < reached;
    if after
        .iter()
        .filter(before_reached)
        .any(|r| r.dir == client && (r.flags.fin() || r.flags.rst()))
    {
        return None;
    }
    let request = after
        .iter()
        .take_while(before_reached)
        .find(|r| r.dir == client && r.len > 0);
    Some(Reset {
        syn,
        syn_ack,
        answered,
        request,
        rst,
        syn_acks_resent,
    })
}

pub fn detect(f: &Facts<'_>, out: &mut Vec<Finding>) {
    let Some(r) = find(f) else {
        return;
    };
    let client = Direction::ClientToServer;
    // (Opened ahead of need: the wait began with the request.)
    let idle_before_request = r.request.and_then(|q| {
        let idle = f.on_clock_of(client, q) - f.on_clock_of(client, r.syn_ack);
        (idle > rttdoc_analyze::READY_NS).then_some((q, idle))
    });
    let start = idle_before_request.map_or(r.syn, |(q, _)| q);
    let ns = (f.on_clock_of(client, r.rst) - f.on_clock_of(client, start)).max(0);
    let mut x = f.finding(FindingKind::ListenerReset, Some(Phase::TcpHandshake));
    let mut frames = vec![r.syn.frame, r.syn_ack.frame, r.answered.frame];
    frames.extend(r.request.map(|q| q.frame));
    frames.push(r.rst.frame);
    frames.sort_unstable();
    frames.dedup();
    x.display_filter = f.filter_frames(&frames);
    x.frames = frames;
    x.cost_ms = ns as f64 / 1e6;
    x.cost_rtts = f.rtts(ns);
    let at_server = f.captured_at(Direction::ServerToClient);
    // Away from the server, a device on the path may have sent it.
    x.confidence = if at_server { 0.9 } else { 0.8 };
    x.detail = Detail::ListenerReset {
        answered_handshake_ack: Some(r.answered.frame) == f.report.handshake.ack_frame
            && r.syn_acks_resent == 0,
        request_sent: r.request.is_some(),
        syn_acks_resent: r.syn_acks_resent,
        after_ms: (f.on_clock_of(Direction::ServerToClient, r.rst)
            - f.on_clock_of(Direction::ServerToClient, r.answered))
        .max(0) as f64
            / 1e6,
        at_server,
        idle_before_request_ms: idle_before_request.map(|(_, ns)| ns as f64 / 1e6),
    };
    out.push(x);
}
