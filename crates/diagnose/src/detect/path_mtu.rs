//! `path_mtu` — a hop narrower than both ends: the sender's full-size
//! segments cannot pass it.
//!
//! Mechanism: each end announces an MSS from its own link's MTU, so a hop
//! between them with a smaller MTU (a tunnel, PPPoE, a VPN, a mismatched
//! link) cannot forward the sender's full-size segments: TCP over IPv4
//! sets DF (Linux, Windows and the BSDs do path MTU discovery) and IPv6
//! routers never fragment. The hop's router answers each with an ICMP
//! "fragmentation needed" (ICMPv6 "packet too big") naming its MTU; the
//! sender lowers its path MTU and sends the lost bytes again at once in
//! smaller segments (Linux: `tcp_v4_mtu_reduced` -> `tcp_simple_retransmit`).
//! When that ICMP never reaches the sender (a firewall dropping it, a link
//! layer that drops what it cannot carry and tells no one) the path is a
//! black hole: the sender's timer sends the same full-size segment again,
//! backing off, until it gives up on the size (Linux with
//! `net.ipv4.tcp_mtu_probing=1` after `tcp_retries1` timeouts, macOS and
//! Windows black-hole detection) or on the connection (Linux's default,
//! `tcp_mtu_probing=0`). Smaller segments pass all along.
//!
//! Signature, at a vantage that sees the sender's copies (before the
//! narrow hop), the peer's MSS option known from the handshake: a data
//! segment of the sender's full size (the peer's MSS less 12 bytes of
//! timestamps, less at most 40 bytes of other options; larger is an
//! offload's super-segment, no packet on the wire) sent again, and
//! - an ICMP "too big" error quoting one of the sender's segments, captured
//!   before a re-send of a full-size segment (the router said so). A
//!   capture above the sender's segmentation offload (GSO/TSO: its blocks
//!   larger than full are in it) shows what TCP handed down: after the
//!   ICMP lowered the path MTU, a re-send keeps its block's length here
//!   and leaves as smaller packets, so a same-length re-send acknowledged
//!   after the ICMP is the sender going smaller, and a re-sent block
//!   larger than full is the hop's as much as a full-size one; or
//! - a re-send starting at the full-size segment's first byte in a
//!   segment more than 40 bytes smaller (more options could not explain
//!   it) after at least two full-size copies of it, none of which was
//!   acknowledged, the smaller copy acknowledged after it; not where the
//!   receiver's window ended before the original's end (a sender re-sends
//!   what the window lets it); and the connection never carried a segment
//!   that large: no segment of the sender at least the original's size,
//!   never sent again, was acknowledged; or
//! - (a black hole the sender never got out of: Linux's default,
//!   `tcp_mtu_probing=0`) the timer re-sent it at full size three times or
//!   more, nothing acknowledged any copy, and a segment smaller than full
//!   sent after the first copy arrived: the receiver's duplicate ACK (a
//!   pure ACK of the same point and window, which a receiver sends when a
//!   segment beyond a hole arrives) came before the first re-send, when
//!   every segment of the sender's beyond the hole was smaller than full;
//!   the connection never carried a segment that large. Confidence 0.7: a
//!   path that died just after that small segment looks the same.
//!
//! Past the hop (the capture never saw the copies it dropped): a hole in
//! the sender's bytes whose length is a whole number of its full segments
//! (what was lost was full-size), filled late by segments each more than
//! 40 bytes smaller than a full one and acknowledged, not where the
//! receiver's window ended before the hole's end, on a connection in
//! which not one segment of the sender's that arrived was full-size: the
//! sender went smaller (an ICMP it got, or its black-hole detection), and
//! only then got through. The late fills from the first on are the
//! finding's.
//!
//! The re-sends of full-size segments sent before the first smaller copy
//! (at the size the path could not carry), full-size and smaller alike,
//! and after it those of a segment larger than that copy sent again
//! smaller (a probe for a larger path MTU, Linux's `tcp_mtu_probe`, lost
//! on the same hop), are this finding's, not `retransmission`'s nor
//! `rto_stall`'s: each
//! waited from the sender's previous data segment (on its clock), with no
//! releasing packet (the ICMP, or the sender's own timer, ended it), or
//! until the receiver gave up when it did during the silence (its RST,
//! or its FIN unless it read on); none after that, nor after the client
//! closed for good. One finding per ledger phase the
//! re-sends fall in (a server's first flight of a TLS handshake is the
//! handshake's latency).
//!
//! Fix: make full-size segments fit: clamp the MSS where the path narrows
//! (`iptables -t mangle -A FORWARD -p tcp --tcp-flags SYN,RST SYN -j
//! TCPMSS --clamp-mss-to-pmtu`), or give the interfaces the path's MTU;
//! let ICMP "fragmentation needed" (type 3 code 4) and ICMPv6 "packet too
//! big" (type 2) through every firewall; `net.ipv4.tcp_mtu_probing=1` lets
//! a Linux sender find its way out of a black hole itself, after timeouts.

use super::retransmission::{by_phase, client_closed_for_good, original, phase_of, resend_wait};
use super::{pure_ack, Facts};
use crate::model::{Detail, Direction, Finding, FindingKind, Wait};
use rttdoc_analyze::seq;
use rttdoc_analyze::SegmentRecord;

/// The most TCP options a segment carries (its data offset's limit): a
/// re-send smaller than its original by no more may just carry more of
/// them (SACK blocks), at the same packet size.
const OPTIONS_MAX: u32 = 40;

/// What one sender's full-size segments went through on a narrow path.
#[derive(Debug, Clone)]
pub struct PathMtu {
    /// The re-sends that are this finding's (frames, in order): those of
    /// full-size segments the path could not carry.
    pub resends: Vec<u64>,
    /// Each re-send's silence, from the sender's previous data segment.
    pub waits: Vec<Wait>,
    /// The first full-size segment the path did not carry.
    pub first: u64,
    /// Its bytes.
    pub full_size: u32,
    /// Copies of it sent at that size before a smaller one (or in all).
    pub copies: u32,
    /// The first smaller copy: frame and bytes.
    pub smaller: Option<(u64, u32)>,
    /// The ICMP error that said so: frame and the hop's MTU (0: unnamed).
    pub icmp: Option<(u64, u32)>,
    /// Past the hop (the capture never saw the copies it dropped): the
    /// hole they left in the sender's bytes.
    pub hole: Option<u32>,
    /// The capture holds the sender's offload super-segments: `smaller`
    /// may be the size TCP handed down, not the wire's.
    pub offload: bool,
}

/// A segment of the sender's full size (`full`, `Facts::announced_mss`),
/// or less by no more than options can take; not larger (an offload's
/// super-segment is no packet on the wire).
fn full_sized(r: &SegmentRecord, full: u32) -> bool {
    r.len <= full && r.len + OPTIONS_MAX > full
}

/// The sender's copies of `o`'s bytes at `o`'s size (`o` among them).
fn same_copies<'a>(
    data: &'a [&'a SegmentRecord],
    o: &'a SegmentRecord,
) -> impl Iterator<Item = &'a &'a SegmentRecord> {
    data.iter()
        .filter(move |c| c.seq == o.seq && c.len == o.len)
}

/// Finds what [`PathMtu`] describes for `sender` (see the module doc).
pub fn find(f: &Facts<'_>, sender: Direction) -> Option<PathMtu> {
    let stats = f.sent_by(sender);
    if (stats.retransmissions == 0 && stats.gaps == 0) || f.sent_by(sender.reverse()).packets == 0 {
        return None;
    }
    // (A damaged or fuzzed MSS option below the timestamps' 12 bytes
    // announces no size to reason about.)
    let full = f.announced_mss(sender).filter(|full| *full > 0)?;
    let data: Vec<&SegmentRecord> = f
        .timeline
        .iter()
        .filter(|r| r.dir == sender && r.len > 0 && !r.flags.syn() && !r.probe)
        .collect();
    at_the_sender(f, sender, full, &data).or_else(|| past_the_hop(f, sender, full, &data))
}

/// Whether a packet of the receiver's after `frame` acknowledged the
/// sender's bytes up to `end`.
fn acked_after(f: &Facts<'_>, sender: Direction, end: u32, frame: u64) -> bool {
    f.timeline
        .iter()
        .any(|p| p.frame > frame && p.dir != sender && p.ack_set && seq::le(end, p.ack))
}

/// The capture shows the sender's copies (see the module doc).
fn at_the_sender(
    f: &Facts<'_>,
    sender: Direction,
    full: u32,
    data: &[&SegmentRecord],
) -> Option<PathMtu> {
    let icmp_before = |frame: u64| {
        f.too_big
            .iter()
            .find(|t| t.sender == sender && t.frame < frame)
    };
    // The first re-send of a full-size segment's first byte in a smaller
    // segment, with what proves the path's MTU made it.
    let mut shrink = None;
    for r in data.iter().filter(|r| r.retransmission) {
        let Some(o) = original(f.timeline, r) else {
            continue;
        };
        if o.seq != r.seq || r.len >= o.len || !full_sized(o, full) || window_limited(f, r, o.end) {
            continue;
        }
        if let Some(t) = icmp_before(r.frame) {
            shrink = Some((*o, **r, Some((t.frame, t.mtu))));
            break;
        }
        let copies = same_copies(data, o).filter(|c| c.frame < r.frame).count();
        let acked_before = f
            .between(o.frame + 1, r.frame)
            .iter()
            .any(|p| p.dir != sender && p.ack_set && seq::lt(o.seq, p.ack));
        if o.len - r.len > OPTIONS_MAX
            && copies >= 2
            && !acked_before
            && acked_after(f, sender, r.end, r.frame)
            && !carried(f, data, o.len)
        {
            shrink = Some((*o, **r, None));
            break;
        }
    }
    // A capture above the sender's segmentation offload (GSO/TSO: its
    // segments larger than the MSS are in it) shows what TCP handed down:
    // after the router's ICMP lowered the path MTU, a re-send of the
    // same bytes keeps its length here and leaves in smaller packets.
    let offload = data.iter().any(|r| r.len > full);
    let (first, smaller, icmp) = match shrink {
        Some((o, r, icmp)) => (o, Some(r), icmp),
        None => match f.too_big.iter().find(|t| t.sender == sender) {
            // The router said so, and the sender sent that size again.
            Some(t) => {
                let r = data.iter().find(|r| {
                    r.retransmission
                        && r.frame > t.frame
                        && full_sized(r, full)
                        && original(f.timeline, r).is_some_and(|o| o.seq == r.seq && o.len == r.len)
                })?;
                let o = *original(f.timeline, r)?;
                // Above the offload, a re-send that passed is the sender
                // going smaller on the wire; below it (or unacknowledged)
                // the sender kept the size the hop could not carry.
                let honoured = offload && acked_after(f, sender, r.end, r.frame);
                (o, honoured.then_some(**r), Some((t.frame, t.mtu)))
            }
            None => (never_smaller(f, sender, full, data)?, None, None),
        },
    };
    let before = smaller.map_or(u64::MAX, |s| s.frame);
    let copies = same_copies(data, &first)
        .filter(|c| c.frame < before)
        .count() as u32;
    // The re-sends of what was sent at the size the path could not carry,
    // and, once the sender went smaller, of a probe for a larger size
    // (Linux's `tcp_mtu_probe`, between the two) sent again smaller.
    // (Above the offload, a block larger than full was segments of full
    // size on the wire: its re-sends are as much the hop's.)
    let carried_len = smaller.map_or(0, |s| s.len);
    let too_big_for_the_hop = |o: &SegmentRecord| full_sized(o, full) || (offload && o.len > full);
    let ours = |r: &SegmentRecord| {
        r.retransmission
            && original(f.timeline, r).is_some_and(|o| {
                (o.frame < before && too_big_for_the_hop(o))
                    || (carried_len > 0 && o.frame > before && o.len > carried_len && r.len < o.len)
            })
    };
    let (resends, waits) = resends_and_waits(f, sender, data, first.frame, ours);
    Some(PathMtu {
        resends,
        waits,
        first: first.frame,
        full_size: first.len,
        copies,
        smaller: smaller.map(|s| (s.frame, s.len)),
        icmp,
        hole: None,
        offload,
    })
}

/// A black hole the sender never got out of (Linux's default,
/// `tcp_mtu_probing=0`): its first full-size segment whose bytes it sent
/// again, when the timer re-sent it at that size three times or more and
/// nothing acknowledged any copy, while a segment smaller than full that
/// it sent after the first copy arrived: the receiver's duplicate ACK (a
/// pure ACK of the same point and window, which a receiver sends when a
/// segment beyond a hole arrives, RFC 5681 4.2) came after it, and every
/// segment of the sender's beyond the hole by then was smaller than full.
/// The path carried small packets and not the large; the connection never
/// carried a segment that large.
fn never_smaller(
    f: &Facts<'_>,
    sender: Direction,
    full: u32,
    data: &[&SegmentRecord],
) -> Option<SegmentRecord> {
    // The latest re-send of each first byte: one pass, not one per
    // segment (a bulk sender's window holds thousands).
    let mut resent: std::collections::HashMap<u32, u64> = std::collections::HashMap::new();
    for r in data.iter().filter(|r| r.retransmission) {
        let latest = resent.entry(r.seq).or_insert(r.frame);
        *latest = (*latest).max(r.frame);
    }
    let o = data.iter().find(|o| {
        full_sized(o, full)
            && !o.retransmission
            && resent.get(&o.seq).is_some_and(|&latest| latest > o.frame)
    })?;
    let copies: Vec<&&SegmentRecord> = same_copies(data, o)
        .filter(|r| r.frame > o.frame && r.retransmission)
        .collect();
    // Never smaller: a smaller copy that did not pass either says the
    // path's limit is lower still, or that nothing passed.
    let went_smaller = data
        .iter()
        .any(|r| r.frame > o.frame && r.retransmission && r.seq == o.seq && r.len < o.len);
    if copies.len() < super::retransmission::BLACK_HOLE_COPIES || went_smaller {
        return None;
    }
    if acked_after(f, sender, o.seq.wrapping_add(1), o.frame) {
        return None;
    }
    // The receiver's duplicate ACK before the first re-send, and what the
    // sender had sent beyond the hole by then.
    let first_copy = copies[0].frame;
    let mut previous: Option<&SegmentRecord> = None;
    let mut duplicate = false;
    for p in f
        .timeline
        .iter()
        .filter(|p| p.dir != sender && p.frame < first_copy)
    {
        if p.frame > o.frame
            && pure_ack(p)
            && p.ack == o.seq
            && previous.is_some_and(|q| q.ack == p.ack && q.window == p.window)
        {
            let beyond: Vec<&&SegmentRecord> = data
                .iter()
                .filter(|s| s.frame > o.frame && s.frame < p.frame && seq::lt(o.seq, s.seq))
                .collect();
            duplicate |= !beyond.is_empty() && beyond.iter().all(|s| s.len + OPTIONS_MAX < full);
        }
        previous = Some(p);
    }
    (duplicate && !carried(f, data, o.len)).then_some(**o)
}

/// The capture is past the narrow hop: the copies it dropped never
/// reached it. What it shows of them is a hole in the sender's bytes
/// whose length is a whole number of the sender's full segments (what
/// was lost was full-size), filled late by segments each more than 40
/// bytes smaller than a full one, not where the receiver's window ended
/// before the hole's end, on a connection in which not one full-size
/// segment of the sender's arrived: the sender went smaller (an ICMP it
/// got, or its black-hole detection) and only then got through.
fn past_the_hop(
    f: &Facts<'_>,
    sender: Direction,
    full: u32,
    data: &[&SegmentRecord],
) -> Option<PathMtu> {
    let smaller = |r: &SegmentRecord| r.len + OPTIONS_MAX < full;
    if data.iter().any(|r| !smaller(r)) {
        return None;
    }
    // A late fill: bytes first seen after bytes beyond them arrived (a
    // re-send, or one so quick the tracker calls it reordering), whose
    // earlier copies the capture never saw.
    let late_fill = |i: usize, r: &SegmentRecord| {
        data[..i].iter().any(|c| seq::lt(r.seq, c.seq)) && original(f.timeline, r).is_none()
    };
    // The first late fill of a hole whose first copies were never seen.
    let filled = data.iter().enumerate().find_map(|(i, r)| {
        if !late_fill(i, r) {
            return None;
        }
        // The hole ends at the lowest byte seen beyond its start.
        let next_seen = data[..i]
            .iter()
            .filter(|c| seq::lt(r.seq, c.seq))
            .map(|c| c.seq)
            .reduce(seq::min)?;
        let hole = next_seen.wrapping_sub(r.seq);
        (hole % full == 0 && !window_limited(f, r, next_seen)).then_some((*r, next_seen))
    });
    let Some((fill, next_seen)) = filled else {
        return never_filled(f, sender, full, data);
    };
    // The fill's pieces, each smaller, acknowledged.
    if !acked_after(f, sender, next_seen, fill.frame) {
        return None;
    }
    let fills: Vec<u64> = data
        .iter()
        .enumerate()
        .filter(|(i, r)| r.frame >= fill.frame && late_fill(*i, r))
        .map(|(_, r)| r.frame)
        .collect();
    let ours = |r: &SegmentRecord| fills.contains(&r.frame);
    let (resends, waits) = resends_and_waits(f, sender, data, fill.frame, ours);
    Some(PathMtu {
        resends,
        waits,
        first: fill.frame,
        full_size: full,
        copies: 0,
        smaller: Some((fill.frame, fill.len)),
        icmp: None,
        hole: Some(next_seen.wrapping_sub(fill.seq)),
        offload: false,
    })
}

/// How long a hole must stay open for a sender's timer to have re-sent
/// into it three times or more: Linux's minimum RTO, 200 ms, doubled
/// each time (0.2 + 0.4 + 0.8 + 1.6 s).
const NEVER_FILLED_NS: i64 = 3_000_000_000;

/// Past the hop, a black hole the sender never got out of: the first of
/// its segments that arrived beyond a hole of a whole number of its full
/// segments (the first of the connection's, after the handshake, or of
/// the in-order ones), itself smaller than full, when nothing ever filled
/// the hole or acknowledged its first byte, and the receiver waited for
/// it [`NEVER_FILLED_NS`] or more (it ended the connection that much
/// later): a sender's timer re-sends into a hole within that, so copy
/// after copy of the full-size segments went missing while the small one
/// passed. Its one wait is the receiver's, from the small segment's
/// arrival to its giving up. A path that died just after the small
/// segment looks the same (confidence 0.7).
fn never_filled(
    f: &Facts<'_>,
    sender: Direction,
    full: u32,
    data: &[&SegmentRecord],
) -> Option<PathMtu> {
    let h = &f.report.handshake;
    let opened = match sender {
        Direction::ClientToServer => h.syn_frame,
        Direction::ServerToClient => h.syn_ack_frame,
    };
    // Sequence numbers count from the sender's SYN: data begins at 1.
    opened?;
    let mut next = 1u32;
    let mut beyond = None;
    for s in data {
        if seq::lt(next, s.seq) {
            beyond = Some(*s);
            break;
        }
        next = seq::max(next, s.end);
    }
    let s = beyond?;
    let hole = s.seq.wrapping_sub(next);
    let filled = data
        .iter()
        .any(|r| r.frame > s.frame && seq::le(r.seq, next) && seq::lt(next, r.end));
    let acked = acked_after(f, sender, next.wrapping_add(1), 0);
    if hole % full != 0 || s.len + OPTIONS_MAX >= full || filled || acked {
        return None;
    }
    let gave_up = f
        .timeline
        .iter()
        .find(|p| p.frame > s.frame && p.dir != sender && (p.flags.fin() || p.flags.rst()))?;
    if gave_up.ts_ns - s.ts_ns < NEVER_FILLED_NS {
        return None;
    }
    Some(PathMtu {
        resends: Vec::new(),
        waits: vec![Wait {
            from_frame: s.frame,
            to_frame: gave_up.frame,
            release_frame: None,
            ms: (gave_up.ts_ns - s.ts_ns) as f64 / 1e6,
        }],
        first: s.frame,
        full_size: full,
        copies: 0,
        smaller: None,
        icmp: None,
        hole: Some(hole),
        offload: false,
    })
}

/// The re-sends `ours` picks from `first` on, and each one's silence from
/// the sender's previous data segment on its clock: none after the
/// receiver closed or the client closed for good.
fn resends_and_waits(
    f: &Facts<'_>,
    sender: Direction,
    data: &[&SegmentRecord],
    first: u64,
    ours: impl Fn(&SegmentRecord) -> bool,
) -> (Vec<u64>, Vec<Wait>) {
    let closed_at = f.receiver_closed_at(sender);
    let client_gone_at = client_closed_for_good(f, sender);
    let mut resends = Vec::new();
    let mut waits = Vec::new();
    for w in data.windows(2) {
        let (p, r) = (w[0], w[1]);
        if r.frame < first || !ours(r) {
            continue;
        }
        resends.push(r.frame);
        let gone =
            closed_at.is_some_and(|c| c < p.frame) || client_gone_at.is_some_and(|c| p.frame >= c);
        let wait = resend_wait(f, sender, p, r, closed_at);
        if wait.ms > 0.0 && !gone {
            waits.push(wait);
        }
    }
    (resends, waits)
}

/// Whether the receiver's window ended before `end` when `r` left: the
/// sender re-sent what the window let it.
fn window_limited(f: &Facts<'_>, r: &SegmentRecord, end: u32) -> bool {
    f.between(0, r.frame)
        .iter()
        .rev()
        .find(|p| p.dir != r.dir && p.ack_set)
        .and_then(|p| f.window_edge(p))
        .is_some_and(|edge| edge < end as u64)
}

/// Whether the path carried a segment of the sender's of at least `len`
/// bytes: one never sent again whose bytes were acknowledged.
fn carried(f: &Facts<'_>, data: &[&SegmentRecord], len: u32) -> bool {
    data.iter().any(|s| {
        s.len >= len
            && !s.retransmission
            && !data.iter().any(|r| {
                r.frame > s.frame
                    && r.retransmission
                    && seq::le(s.seq, r.seq)
                    && seq::lt(r.seq, s.end)
            })
            && f.timeline
                .iter()
                .any(|p| p.frame > s.frame && p.dir != s.dir && p.ack_set && seq::le(s.end, p.ack))
    })
}

/// What `sender`'s full-size segments went through on a narrow path, if
/// anything: found once per connection (`Facts::path_mtu_views`).
pub fn of<'f>(f: &'f Facts<'_>, sender: Direction) -> Option<&'f PathMtu> {
    f.path_mtu_views[sender.index()]
        .get_or_init(|| find(f, sender))
        .as_ref()
}

pub fn detect(f: &Facts<'_>, out: &mut Vec<Finding>) {
    for sender in [Direction::ClientToServer, Direction::ServerToClient] {
        let Some(p) = of(f, sender) else {
            continue;
        };
        // The evidence: the first segment that could not pass, the ICMP
        // that said so, the first smaller copy.
        let evidence: Vec<u64> = [Some(p.first), p.icmp.map(|i| i.0), p.smaller.map(|s| s.0)]
            .into_iter()
            .flatten()
            .collect();
        // One finding per phase its re-sends fall in; the first holds the
        // evidence when none of the waits counts (nobody waited).
        let mut phases = by_phase(f, &p.waits, |w| w.to_frame);
        if phases.is_empty() {
            let at = p.resends.first().copied().unwrap_or(p.first);
            phases.push((phase_of(f, at), Vec::new()));
        }
        for (phase, here) in phases {
            let mut x = f.finding(FindingKind::PathMtu, Some(phase));
            let mut frames: Vec<u64> = evidence
                .iter()
                .copied()
                .chain(here.iter().map(|w| w.to_frame))
                .collect();
            if here.is_empty() {
                frames.extend(p.resends.iter().copied());
            }
            frames.sort_unstable();
            frames.dedup();
            frames.truncate(20);
            x.frames = frames;
            x.cost_ms = here.iter().map(|w| w.ms).sum();
            // Without the router's word or a smaller copy that passed, a
            // path that died just after a small segment looks the same.
            x.confidence = match (p.icmp, p.smaller) {
                (Some(_), _) => 1.0,
                (None, Some(_)) => 0.9,
                (None, None) => 0.7,
            };
            x.detail = Detail::PathMtu {
                sender,
                full_size: p.full_size,
                copies: p.copies,
                smaller: p.smaller.map(|(_, len)| len),
                hop_mtu: p.icmp.map(|(_, mtu)| mtu).filter(|m| *m > 0),
                icmp: p.icmp.is_some(),
                hole: p.hole,
                offload: p.offload,
            };
            x.display_filter = f.filter_frames(&x.frames);
            x.waits = here.into_iter().copied().collect();
            out.push(x);
        }
    }
}
