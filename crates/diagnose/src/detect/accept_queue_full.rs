//! `accept_queue_full` — the server's listener did not take the
//! connection when the client finished its handshake.
//!
//! Signature: a Linux listener whose accept queue is full (its application
//! calls accept() more slowly than connections come) drops the
//! handshake's last ACK and every segment behind it
//! (`net.ipv4.tcp_abort_on_overflow=0`, the default): the connection stays
//! half-open at the server, which sends nothing on it but re-sends of its
//! SYN-ACK on its own timer (1 s, then 2 s ...; none after a SYN cookie,
//! which keeps no state), while the client, open since the SYN-ACK,
//! re-sends its data on its retransmission timer and answers each SYN-ACK
//! again with an ACK. The first copy that arrives when the queue has room
//! opens the connection: the server's first packet other than a SYN-ACK
//! follows it. TCP_DEFER_ACCEPT (nginx `listen ... deferred`, HAProxy
//! `defer-accept`) drops a handshake ACK that carries no data the same
//! way, until its SYN-ACK re-send at the end of the deferral; data it
//! takes at once. The capture shows the drop, before that first packet of
//! the server's, in one of two ways:
//!
//! - the server re-sent its SYN-ACK after the capture saw the client's
//!   ACK of it, at least 500 ms and a round trip after the client's last
//!   SYN (so that it answers no SYN: the server's timer sent it; Linux's
//!   first is 1 s after the SYN-ACK): the server had not
//!   taken that ACK. Where the capture is not at the server and the
//!   client sent nothing after that ACK, one ACK lost on the way explains
//!   the same packets (the words say so);
//! - captured at the server, the client's data after the handshake went
//!   unacknowledged until the client sent it again: the server's host
//!   received it and did not take it. A stack that holds the connection
//!   acknowledges data within its delayed-ACK timer (at most 500 ms) and
//!   a copy of data it has at once (RFC 5681 4.2), so the server must
//!   have ignored a copy too, or the original for longer than 500 ms: a
//!   200 ms delayed ACK (Windows) that the client's first copy overtook
//!   on a LAN (Linux's RTO: 200 ms and the round trip) is no drop.
//!
//! At a client's capture without a SYN-ACK re-send (SYN cookies), the
//! client's re-sent data cannot be told from data lost on the path: it
//! stays `retransmission` and `rto_stall`.
//!
//! Cost: one wait, from the client's first packet the server did not take
//! (its first data; its handshake ACK when it sent none) to the copy the
//! server took (the client's last packet that reached the server before
//! its first packet other than a SYN-ACK left, on the server's clock),
//! released by the SYN-ACK re-send that copy answered, if it answered one
//! (a data re-send on the client's timer has no releasing packet). The
//! client's re-sends inside the wait are this finding's, not
//! `retransmission`'s. Its phase is the latency row the wait ends in (the
//! first request's wait for its first byte, a greeting's); none when it
//! ends in none (a connection the client left idle waited for nothing),
//! nor when the server took the client's first data as it came (only the
//! handshake's ACK before it was held, and nobody waits for an ACK).
//! Fix: accept sooner (more workers or threads, no blocking work in the
//! accept loop), a listen backlog and `net.core.somaxconn` that cover the
//! bursts (`nstat -az TcpExtListenOverflows TcpExtListenDrops` counts the
//! drops); or, for a server that speaks first, no TCP_DEFER_ACCEPT.

use super::Facts;
use crate::model::{Detail, Direction, Finding, FindingKind, Phase, Wait};
use rttdoc_analyze::seq;
use rttdoc_analyze::SegmentRecord;

/// How long after the client's last SYN a SYN-ACK must come to be the
/// server's timer's and not its answer to that SYN (Linux's first
/// SYN-ACK timer is 1 s).
const NOT_AN_ANSWER_NS: i64 = 500_000_000;

/// What the server did not take: the span from the client's first packet
/// it dropped to the copy it took.
pub(crate) struct NotTaken<'a> {
    /// The client's first packet the server did not take.
    pub first: &'a SegmentRecord,
    /// The copy the server took.
    pub taken: &'a SegmentRecord,
    /// The SYN-ACK re-send `taken` answered, if it answered one.
    pub release: Option<&'a SegmentRecord>,
    /// The server's SYN-ACKs re-sent after the client's ACK.
    pub syn_acks_resent: u32,
    /// The client's data re-sends up to `taken`.
    pub data_resent: u32,
    /// The latency phase of the row the wait ends in.
    pub phase: Phase,
}

/// The connection's span the server's listener did not take, when the
/// capture shows one: found once per connection (`Facts::not_taken_view`).
pub(crate) fn of<'f, 'a>(f: &'f Facts<'a>) -> Option<&'f NotTaken<'a>> {
    f.not_taken_view.get_or_init(|| find(f)).as_ref()
}

/// The span [`of`] gives (the module's signature).
fn find<'a>(f: &Facts<'a>) -> Option<NotTaken<'a>> {
    let hs = &f.report.handshake;
    let server = Direction::ServerToClient;
    let client = Direction::ClientToServer;
    let at_server = f.captured_at(server);
    // Most connections: one comparison or two.
    if hs.syn_ack_retransmits == 0 && !(at_server && f.sent_by(client).retransmissions > 0) {
        return None;
    }
    // A Fast Open SYN's connection is the server's from its SYN.
    if hs.tfo.is_some() {
        return None;
    }
    let (syn_ack, ack) = (f.record(hs.syn_ack_frame?)?, f.record(hs.ack_frame?)?);
    // The server's first packet that is not a SYN-ACK: it had the
    // connection when it sent it.
    let opened = f
        .between(ack.frame + 1, u64::MAX)
        .iter()
        .find(|r| r.dir == server && !r.flags.syn())?;
    // A RST from no socket is no taking (`listener_reset`).
    if opened.flags.rst() {
        return None;
    }
    let left = f.on_clock_of(server, opened);
    let before = f.between(ack.frame, opened.frame);
    // The copy it took: the client's last packet that reached it before
    // its first packet left.
    let taken = before
        .iter()
        .rfind(|r| r.dir == client && f.on_clock_of(server, r) <= left)?;
    if taken.frame == ack.frame {
        return None;
    }
    let first_data = before
        .iter()
        .find(|r| r.dir == client && r.len > 0 && r.frame <= taken.frame);
    // Data the server took as it came: nobody waited (the handshake's ACK
    // before it asked nothing).
    if first_data.is_some_and(|d| d.frame == taken.frame) {
        return None;
    }
    let first = first_data.unwrap_or(ack);
    let last_syn = f
        .timeline
        .iter()
        .take_while(|r| r.frame < ack.frame)
        .filter(|r| r.dir == client && r.flags.syn())
        .map(|r| r.ts_ns)
        .last();
    let resent_syn_acks: Vec<&SegmentRecord> = before
        .iter()
        .filter(|r| {
            r.dir == server
                && r.flags.syn()
                && r.seq == syn_ack.seq
                && last_syn.is_none_or(|s| r.ts_ns - s >= NOT_AN_ANSWER_NS + f.rtt_ns.unwrap_or(0))
        })
        .collect();
    let data_resent = before
        .iter()
        .filter(|r| r.dir == client && r.len > 0 && r.retransmission && r.frame <= taken.frame)
        .count() as u32;
    // Captured at the server: the client's data reached it, and it sent
    // no ACK of it until a copy came; and not an ACK the stack was
    // delaying that the client's first copy overtook (a 200 ms timer
    // against a LAN's 200 ms RTO): it ignored a copy too, which a stack
    // that has the connection acknowledges at once (RFC 5681 4.2), or
    // the original longer than any delayed ACK.
    let ignored_data = at_server
        && first_data.is_some_and(|d| {
            (data_resent >= 2 || taken.ts_ns - d.ts_ns > super::causality::MAX_ACK_DELAY_NS)
                && opened.ack_set
                && seq::le(d.end, opened.ack)
                && before
                    .iter()
                    .any(|r| r.dir == client && r.retransmission && r.seq == d.seq)
        });
    if resent_syn_acks.is_empty() && !ignored_data {
        return None;
    }
    // The ACK that answered a SYN-ACK re-send: released by it.
    let release = resent_syn_acks
        .iter()
        .copied()
        .rfind(|r| r.frame < taken.frame)
        .filter(|r| {
            f.between(r.frame + 1, taken.frame)
                .iter()
                .all(|p| p.dir != client)
                && f.released_by(
                    client,
                    f.on_clock_of(client, taken),
                    f.on_clock_of(client, r),
                )
        });
    // Someone waited only inside a latency row: the first request's wait
    // for its answer, a greeting the client waited for. A connection the
    // client left idle (a browser's spare one) waited for nothing.
    let phase = super::retransmission::phase_of(f, taken.frame);
    if phase == Phase::Transfer {
        return None;
    }
    Some(NotTaken {
        first,
        taken,
        release,
        phase,
        syn_acks_resent: resent_syn_acks.len() as u32,
        data_resent,
    })
}

pub fn detect(f: &Facts<'_>, out: &mut Vec<Finding>) {
    let Some(n) = of(f) else {
        return;
    };
    let client = Direction::ClientToServer;
    let wait = Wait {
        from_frame: n.first.frame,
        to_frame: n.taken.frame,
        release_frame: n.release.map(|r| r.frame),
        ms: (n.taken.ts_ns - n.first.ts_ns).max(0) as f64 / 1e6,
    };
    let mut x = f.finding(FindingKind::AcceptQueueFull, Some(n.phase));
    let mut frames = vec![n.first.frame];
    frames.extend(
        f.between(n.first.frame + 1, n.taken.frame + 1)
            .iter()
            .filter(|r| (r.dir == client && r.len > 0) || r.flags.syn())
            .map(|r| r.frame),
    );
    if !frames.contains(&n.taken.frame) {
        frames.push(n.taken.frame);
    }
    x.frames = frames;
    x.display_filter = f.filter_frames(&x.frames);
    x.cost_ms = wait.ms;
    x.waits = vec![wait];
    let at_server = f.captured_at(Direction::ServerToClient);
    // One lost ACK explains a lone ACK's SYN-ACK re-send as well, unless
    // the capture shows the ACK reached the server.
    x.confidence = if at_server || n.data_resent > 0 {
        0.9
    } else {
        0.6
    };
    x.detail = Detail::AcceptQueueFull {
        syn_acks_resent: n.syn_acks_resent,
        data_resent: n.data_resent,
        at_server,
    };
    out.push(x);
}
