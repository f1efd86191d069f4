//! `retransmission` and `rto_stall` — data sent twice.
//!
//! Signature: a segment re-sending bytes already seen (later than 3 ms /
//! one RTT after the highest, else it is reordering, unless it re-sends
//! the byte the peer's duplicate ACKs asked for or a hole its SACK blocks
//! reported, a round trip or more after the loss was first reported: a
//! fast retransmission, see connection.rs), or at a vantage past
//! the loss a late segment filling a hole. Where the sender's clocks tell
//! (its IPv4 identification, when it counts, or its TCP timestamp:
//! send_order.rs), they decide before timing does: a hole's filler that
//! left after the segment that jumped the hole is a re-send however soon
//! it came, one that left before it is the original, overtaken on the
//! path, however late. On the sender's clock, the
//! silence before each retransmission is its cost; a silence of at least
//! max(200 ms, 1.5 RTT) (Linux's minimum RTO is 200 ms) is an `rto_stall`:
//! the sender waited for its retransmission timer, typically because too
//! few packets followed the loss to trigger fast retransmit (a tail loss),
//! unless the re-send left the moment a receiver's ACK arrived (the timer
//! restarts on every ACK of new data and ignores duplicates: loss
//! recovery sending the next hole, RFC 6582's partial ACK, released by
//! that ACK after its slow round trip) or was spurious (below).
//! A side that heard nothing of its peer's: its re-send of bytes the
//! peer had acknowledged well before (`missed_by_sender`) shows its TCP
//! never got that acknowledgment, though the capture saw it; when the
//! peer's repair went unheard too (`deaf_span`), an `rto_stall` in that
//! time names it: what was lost was everything toward that side, past
//! the capture point, not a tail loss. At that side's own host, a
//! packet its TCP was shown not to have is no proof its original
//! arrived (below): the peer's re-sends of it are repairs.
//! Spurious re-sends, neither cited nor counted as waits: bytes the
//! receiver acknowledged in a packet captured before the re-send,
//! reported twice with a D-SACK after it (one for it and for each later
//! re-send of the bytes: a D-SACK reports one duplicate), first acknowledged by an ACK
//! echoing an earlier copy's timestamp, not the re-send's (RFC 3522), or
//! first acknowledged sooner after the re-send than half the fastest
//! round trip the sender's data showed (less the clock shift's error) on
//! the sender's clock: that ACK was the original's; or acknowledged twice,
//! the second a pure duplicate only another copy's arrival could draw
//! ([`each_copy_acked`], [`duplicate_drawn_by_a_copy`]). A wait all the
//! same where the timer's first re-send of the bytes was needless and the
//! receiver's first ACK of them came more than half a second (the
//! longest a receiver may delay an ACK) beyond a round trip after the
//! original: an `rto_stall` that says nothing was lost, the original (or
//! its ACK) held on the way past the timer ([`held_past_timer`]).
//! Not retransmissions (the tracker tells them apart, see connection.rs):
//! keep-alive and zero-window probes (sent on purpose at the edge of what
//! the peer acknowledged), a second copy of a packet in the capture, SYNs
//! (`syn_retransmit`'s), nor the re-send of data a SYN carried that its
//! SYN-ACK refused (TCP Fast Open rejected: `tfo_rejected`'s). Nor the re-sends of full-size segments a hop
//! narrower than both ends could not carry (path_mtu.rs: a router's ICMP
//! "too big", or smaller copies after a black hole's timeouts): they and
//! a window stall overlapping their waits are `path_mtu`'s. The finding
//! cites each original and its retransmission (`frame.number in {...}`).
//! Its phase is the transfer's (stalls of a throughput), but when every
//! wait ends inside latency rows of one phase, that phase (`waits_phase`,
//! which window.rs applies to a later window's findings too): a request's repair (an
//! upload's, a lost request segment's) delayed its arrival and so the
//! first byte, and a repaired handshake flight the handshake.
//! Loss shown: a re-send proves the sender decided to send again, not that
//! anything was lost. The capture shows loss only with the receiver's
//! acknowledgments in it: pure ACKs of the receiver in the connection, or
//! any packet of its without data, its SYN-ACK, a FIN or RST (its ACKs are
//! captured, so their absence around the re-send is real: no ACK came,
//! or duplicate ones did), or a packet of the receiver
//! acknowledging the re-sent bytes within a round trip of the re-send
//! (the answer it drew; a receiver that only ever piggybacks). A capture
//! of data packets only (`tcp.len > 0`) has neither: such a re-send is
//! cited as unconfirmed, with no wait and no `rto_stall`. A capture
//! without a single packet of the receiver claims nothing (a probe cannot
//! be told from a re-send without the receiver's window either).
//! Fix: find the loss (a lossy link, a policer, an overflowing queue);
//! keep SACK on; tail-loss probes (net.ipv4.tcp_early_retrans) shorten
//! the stall.
//!
//! Waits: each counted silence is a wait from the sender's previous data
//! segment to the re-send (to the receiver's FIN or RST when it gave up
//! during the silence: nobody read the re-send), unless the receiver had closed (its FIN or RST
//! captured before the original, or before the silence began; not a FIN
//! after which it went on reading, `Facts::reads_after_fin`): what a
//! sender re-sends after that (its own closing message, a TLS
//! close_notify, data a peer that closed never read) is cited, but nobody
//! waited.
//! Nor did anyone wait for what a client re-sent after its own FIN once
//! it closed for good, proven by its RST of the server's later data or
//! by a FIN inside its TLS handshake, which no TLS client can finish
//! with its write side shut, or by a FIN after its timer had re-sent its
//! last write, still unacknowledged (`client_closed_for_good`): its
//! application had let go.
//! A fast retransmission is released by the receiver's duplicate ACK (or
//! SACK) that triggered it, when the re-send left right after it
//! (`Facts::released_by`); a timeout's re-send has no releasing packet
//! (the sender's own timer ended it). The silences are
//! bounded by the mechanism: under max(200 ms, 1.5 RTT) for the
//! retransmission's cost (the duplicate ACKs' round trip), at most
//! Linux's TCP_RTO_MAX (120 s) for a timer. A loss also holds the
//! receiver's window: its cumulative ACK, the window's left edge, cannot
//! pass the hole, so a sender with more to send fills the window and
//! waits for the repair's acknowledgment (`window_stalls.rs`: a stall
//! whose release moved the cumulative ACK across re-sent bytes). Each
//! such stall is a wait from the segment that filled the window to the
//! next new data, released by that acknowledgment; a re-send's silence
//! inside it is part of it (counted once), a timer inside it the
//! `rto_stall`'s. Each finding's cost is its waits' sum; an
//! `rto_stall` is one finding per ledger phase its re-sends fall in (a
//! lost ClientHello's the TLS handshake's, a lost request's its first
//! byte's), as its cost is that phase's latency.

use super::Facts;
use crate::model::{
    ArrivalProof, Deafness, Detail, Direction, Finding, FindingKind, HeldOriginal, LedgerRow,
    Phase, TlsMessage, Wait,
};
use rttdoc_analyze::seq;
use rttdoc_analyze::SegmentRecord;

/// The first segment of the same sender before `r` that carried the
/// sequence number `r` re-sends: the original transmission.
/// Timer re-sends of the same bytes in a row that make a black hole, not
/// a loss: with independent losses at a few percent, three in a row is a
/// one-in-tens-of-thousands event.
pub(super) const BLACK_HOLE_COPIES: usize = 3;

pub(super) fn original<'a>(
    timeline: &'a [SegmentRecord],
    r: &SegmentRecord,
) -> Option<&'a SegmentRecord> {
    timeline
        .iter()
        .take_while(|o| o.frame < r.frame)
        .find(|o| o.dir == r.dir && !o.probe && seq::le(o.seq, r.seq) && seq::lt(r.seq, o.end))
}

use super::causality::RTO_MAX_NS;
use super::window_stalls::window_stalls;

/// Whether the capture holds the receiver's acknowledgments around the
/// re-send `r` (see the module's doc): a packet of the receiver without
/// data anywhere in the connection, a pure ACK, its SYN-ACK, a FIN or RST
/// (`receiver_acks_captured`: its ACKs are captured), or a
/// packet of the receiver acknowledging `r`'s bytes within a round trip
/// of it (the answer the re-send drew; a data packet's ACK field much
/// later says nothing about the ACKs a filter removed before it).
fn loss_shown(f: &Facts<'_>, r: &SegmentRecord, receiver_acks_captured: bool) -> bool {
    if receiver_acks_captured {
        return true;
    }
    let rtt = f.rtt_ns.unwrap_or(0);
    let until = r.ts_ns + rtt + (rtt / 10).max(f.jitter_ns).max(1_000_000);
    let after = f.timeline.partition_point(|p| p.frame <= r.frame);
    f.timeline[after..]
        .iter()
        .take_while(|p| p.ts_ns <= until)
        .any(|p| p.dir != r.dir && p.ack_set && seq::le(r.end, p.ack))
}

/// The peer's packet, captured before the re-send `r`, that acknowledged
/// all of `r`'s bytes and that `r`'s sender never got: `r` left well after
/// that packet would have reached it (on the sender's clock, by more than
/// the path's jitter and 10 ms: not an ACK racing the timer), and `r`
/// still echoes an older timestamp than that packet carried or, without
/// timestamps, acknowledges less than its data reached. The peer's
/// packets were lost past the capture point, on their way to `r`'s
/// sender: its timer fired for an acknowledgment that had been sent, and
/// it waited for it (nDPI's whatsappfiles.pcap 0: a phone that heard
/// nothing of the server's for 9 s, its re-sends each after the server's
/// ACK of them; hpvirtgrp.pcap 4: a client re-sending a request answered
/// 445 ms before, the answer re-sent unheard).
pub(super) fn missed_by_sender<'r>(f: &Facts<'r>, r: &SegmentRecord) -> Option<&'r SegmentRecord> {
    if !r.retransmission || r.len == 0 {
        return None;
    }
    let before = &f.timeline[..f.timeline.partition_point(|p| p.frame < r.frame)];
    let acks = |p: &&SegmentRecord| p.dir != r.dir && p.ack_set && seq::le(r.end, p.ack);
    // (The peer's newest acknowledgment first: it covers the bytes if any
    // did. Most re-sends are of bytes not yet acknowledged: one look.)
    before
        .iter()
        .rev()
        .find(|p| p.dir != r.dir && p.ack_set)
        .filter(acks)?;
    let a = before.iter().find(acks)?;
    if f.on_clock_of(r.dir, r) - f.on_clock_of(r.dir, a) <= unheard_margin(f) {
        return None;
    }
    let unheard = if r.timestamped && a.timestamped {
        seq::lt(r.tsecr, a.tsval)
    } else {
        a.len > 0 && seq::lt(r.ack, a.end)
    };
    unheard.then_some(a)
}

/// How much later than a packet would have reached a host its own next
/// packet must leave to show the host never had it: the path's jitter,
/// and 10 ms at least (not an ACK racing a timer).
fn unheard_margin(f: &Facts<'_>) -> i64 {
    f.jitter_ns.max(10_000_000)
}

/// A time `side`'s TCP heard nothing of its peer's, though the capture
/// saw the peer's packets: from the first packet of the peer's its first
/// such re-send ([`missed_by_sender`]) shows it missed, to its first
/// packet after that re-send that shows it heard that one (its echo of
/// the timestamp, or its acknowledgment of the data), if the capture has
/// one.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DeafSpan {
    missed: u64,
    resend: u64,
    heard: Option<u64>,
    /// The peer's repair went unheard too: a re-send of the peer's data
    /// in the span that `side`'s last packet before hearing left well
    /// after (the margin of [`missed_by_sender`]). One lost packet is a
    /// loss (a request lost past the capture point, its re-send heard:
    /// alexa-app.pcapng 118); the repair lost as well is a side that
    /// hears nothing.
    repair_unheard: bool,
}

/// `side`'s first [`DeafSpan`], found once per connection.
fn deaf_span(f: &Facts<'_>, side: Direction) -> Option<DeafSpan> {
    *f.deaf_views[side.index()].get_or_init(|| {
        let (r, a) = f
            .timeline
            .iter()
            .filter(|r| r.dir == side && r.retransmission && r.len > 0)
            .find_map(|r| missed_by_sender(f, r).map(|a| (r, a)))?;
        let after = &f.timeline[f.timeline.partition_point(|p| p.frame <= r.frame)..];
        let heard_at = after
            .iter()
            .position(|p| {
                p.dir == side
                    && if p.timestamped && a.timestamped {
                        seq::le(a.tsval, p.tsecr)
                    } else {
                        a.len > 0 && p.ack_set && seq::le(a.end, p.ack)
                    }
            })
            .unwrap_or(after.len());
        let heard = after.get(heard_at);
        // `side`'s last packet before it heard again (the re-send `r`, or
        // one after it), and a repair of the peer's it left unheard.
        let last = after[..heard_at]
            .iter()
            .rev()
            .find(|p| p.dir == side)
            .unwrap_or(r);
        let span = &f.timeline[f.timeline.partition_point(|p| p.frame <= a.frame)..];
        let margin = unheard_margin(f);
        let repair_unheard = span.iter().take_while(|p| p.frame < last.frame).any(|p| {
            p.dir != side
                && p.retransmission
                && p.len > 0
                && f.on_clock_of(side, last) - f.on_clock_of(side, p) > margin
        });
        Some(DeafSpan {
            missed: a.frame,
            resend: r.frame,
            heard: heard.map(|p| p.frame),
            repair_unheard,
        })
    })
}

/// Whether `side`'s TCP was shown not to have the packet in `frame` (in
/// its [`deaf_span`], one lost packet or more), though the capture saw it.
fn deaf_at(f: &Facts<'_>, side: Direction, frame: u64) -> bool {
    deaf_span(f, side).is_some_and(|d| d.missed <= frame && d.heard.is_none_or(|h| frame < h))
}

/// The side that heard nothing of its peer's during the stalls `here`
/// (either side: the stalled sender, whose acknowledgments never came, or
/// its receiver, to which nothing came): its [`DeafSpan`] began before
/// the stalls' last re-send and had not ended at their first wait's
/// start.
fn deafness(f: &Facts<'_>, here: &[&(Wait, &SegmentRecord)]) -> Option<Deafness> {
    let from = here.iter().map(|(w, _)| w.from_frame).min()?;
    let to = here.iter().map(|(w, _)| w.to_frame).max()?;
    let sender = here.first()?.1.dir;
    [sender.reverse(), sender].into_iter().find_map(|side| {
        let d = deaf_span(f, side).filter(|d| d.repair_unheard)?;
        if d.missed > to || d.heard.is_some_and(|h| h < from) {
            return None;
        }
        let on_its_clock = |frame: u64| f.record(frame).map(|p| f.on_clock_of(side, p));
        let arrived = on_its_clock(d.missed)?;
        Some(Deafness {
            side,
            missed_frame: d.missed,
            resend_frame: d.resend,
            after_ms: (on_its_clock(d.resend)? - arrived) as f64 / 1e6,
            deaf_ms: d
                .heard
                .and_then(on_its_clock)
                .map(|t| (t - arrived) as f64 / 1e6),
        })
    })
}

/// A re-send of bytes the receiver already had: the peer acknowledged them
/// in a packet captured before the re-send (the ACK was on its way when
/// the timer fired), or reported them as received twice with a D-SACK
/// after it. Nothing was lost and nobody waited: a delayed ACK racing the
/// sender's RTO, or a tail-loss probe.
pub(super) fn spurious(f: &Facts<'_>, r: &SegmentRecord) -> bool {
    // Captured on the receiving host, a captured original was received.
    // (Unless that host's TCP was shown deaf then: what reached its
    // capture never reached it, [`deaf_span`].)
    (f.captured_at(r.dir.reverse())
        && r.len > 0
        && original(f.timeline, r).is_some_and(|o| !deaf_at(f, r.dir.reverse(), o.frame)))
        || acknowledged_before(f, r)
}

/// The receiver's TCP showed it had the bytes the re-send `r` carried
/// before it came: its acknowledgments say so (see [`spurious`]), not
/// only the capture's place (a host's TCP can drop what its capture saw:
/// a listener's full accept queue).
pub(super) fn acknowledged_before(f: &Facts<'_>, r: &SegmentRecord) -> bool {
    arrival_proof(f, r).is_some()
}

/// What shows that the original of the re-send `r` reached the
/// receiver's TCP (see [`spurious`]), if anything does.
pub(super) fn arrival_proof(f: &Facts<'_>, r: &SegmentRecord) -> Option<ArrivalProof> {
    if f.timeline
        .iter()
        .any(|p| p.dir != r.dir && p.frame < r.frame && p.ack_set && seq::le(r.end, p.ack))
    {
        return Some(ArrivalProof::AcknowledgedBefore);
    }
    if acked_too_soon(f, r, fastest_round_trip(f, r.dir)) {
        return Some(ArrivalProof::TooSoonForTheResend);
    }
    if echoes_earlier_copy(f, r) {
        return Some(ArrivalProof::EchoesTheOriginal);
    }
    if let Some(proof) = each_copy_acked(f, r) {
        return Some(proof);
    }
    // A D-SACK reports one duplicate: with later re-sends of the bytes
    // (not an original the path held past `r`), `r` was one only if
    // every copy from `r` on drew its own,
    // as many D-SACKs as copies: alexa-app's 91, the original lost, the
    // first re-send delivered, the second D-SACKed; zcash's 0, three
    // re-sends and three D-SACKs, the original delivered.
    let later = &f.timeline[f.timeline.partition_point(|p| p.frame <= r.frame)..];
    let copies = 1 + later
        .iter()
        .filter(|p| {
            p.dir == r.dir
                && p.retransmission
                && !p.probe
                && seq::lt(p.seq, r.end)
                && seq::lt(r.seq, p.end)
        })
        .count();
    let mut dsacks = later.iter().filter(|p| {
        p.dir != r.dir
            && p.dsack
                .is_some_and(|(l, h)| seq::le(l, r.seq) && seq::le(r.end, h))
    });
    if let Some(dsack_frame) = dsacks.next().map(|p| p.frame) {
        if 1 + dsacks.count() >= copies {
            return Some(ArrivalProof::ReportedTwice { dsack_frame });
        }
    }
    let first = original(f.timeline, r)?;
    let ack = first_ack_after(f, r)?;
    duplicate_drawn_by_a_copy(f, r, first, ack).map(|p| ArrivalProof::SecondCopyAcknowledged {
        duplicate_frame: p.frame,
    })
}

/// RFC 3522's test (Eifel): the receiver's first acknowledgment of the
/// re-send `r`'s bytes echoes a TSval older than `r`'s, and no older than
/// the original's. A receiver echoes the TSval of the segment that brought
/// its data up to where it acknowledges (RFC 7323 4.3: a re-send that
/// filled the hole updates what it echoes), so that ACK was drawn by
/// copies sent before `r`: the original arrived, late (a path that held
/// packets for a while, a phone's radio, a delay spike), and the timer
/// fired while it or its ACK was on its way. Packetbeat's
/// http_minitwit.pcap: the server's re-send 589 ms after its answer,
/// whose first ACK, 1.5 s later, echoes the original's TSval, the re-send's
/// only the duplicate ACK after it. Copies stamped with the same TSval
/// (a coarse clock, a quick re-send) tell nothing.
fn echoes_earlier_copy(f: &Facts<'_>, r: &SegmentRecord) -> bool {
    if !r.timestamped || r.len == 0 {
        return false;
    }
    let Some(first) = original(f.timeline, r).filter(|o| o.timestamped) else {
        return false;
    };
    if !seq::lt(first.tsval, r.tsval) {
        return false;
    }
    let Some(ack) = first_ack_after(f, r)
        .filter(|a| a.timestamped && seq::le(first.tsval, a.tsecr) && seq::lt(a.tsecr, r.tsval))
    else {
        return false;
    };
    // A receiver updates what it echoes only from a segment that starts
    // at or below its last ACK (RFC 7323 4.3), so a re-send that came
    // while its ACK of the bytes before was still delayed left the echo
    // at an earlier segment's TSval, which the original may share (one
    // millisecond, one TSval). The echo proves the original only when no
    // packet the sender sent before the re-sent bytes carried it, or the
    // receiver had acknowledged up to them (its later data then updated
    // the echo, whichever copy brought it).
    let before_it = f
        .timeline
        .iter()
        .take_while(|p| p.frame < r.frame)
        .any(|p| p.dir == r.dir && p.timestamped && p.tsval == ack.tsecr && seq::le(p.end, r.seq));
    let acked_up_to = || {
        f.timeline
            .iter()
            .take_while(|p| p.frame < ack.frame)
            .any(|p| p.dir != r.dir && p.ack_set && seq::le(r.seq, p.ack) && seq::lt(p.ack, r.end))
    };
    !before_it || acked_up_to()
}

/// Each copy drew its own acknowledgment: the receiver's first ACK of the
/// re-send `r`'s bytes, then, before the sender's next segment, a pure
/// duplicate of it (the same ACK and window) as far after it as `r` was
/// captured after the original (within a millisecond and the path's
/// jitter). A receiver acknowledges every segment that arrives beyond or
/// below its window at once (RFC 9293 3.10.7.4): the copy that arrived
/// second, its bytes had already, drew the duplicate, so both arrived
/// and the original was not lost. Without SACK's D-SACK and TCP
/// timestamps (hpvirtgrp.pcap's 6: a copy 0.3 ms after the original, the
/// ACKs 28.6 and 28.3 ms after each, the client's uplink having held the
/// original before the capture point) this is what shows it. Where the
/// path held the original for longer than the timer, the duplicate is not
/// spaced as the copies were, and [`duplicate_drawn_by_a_copy`] tells it.
fn each_copy_acked(f: &Facts<'_>, r: &SegmentRecord) -> Option<ArrivalProof> {
    let first = original(f.timeline, r)?;
    let apart = r.ts_ns - first.ts_ns;
    let ack = first_ack_after(f, r)?;
    let at = f.timeline.partition_point(|p| p.frame <= ack.frame);
    let slack = f.jitter_ns.max(1_000_000);
    f.timeline[at..]
        .iter()
        .take_while(|p| p.dir != r.dir)
        .take_while(|p| p.ts_ns - ack.ts_ns <= apart + slack)
        .find(|p| {
            super::pure_ack(p)
                && p.ack == ack.ack
                && p.window == ack.window
                && (p.ts_ns - ack.ts_ns - apart).abs() <= slack
        })
        .map(|p| ArrivalProof::EachCopyAcknowledged {
            duplicate_frame: p.frame,
        })
}

/// The least time between an ACK and a duplicate of it drawn by another
/// segment's arrival (see [`duplicate_drawn_by_a_copy`]).
const DOUBLED_ACK_NS: i64 = 5_000_000;

fn duplicate_drawn_by_a_copy<'a>(
    f: &Facts<'a>,
    r: &SegmentRecord,
    first: &SegmentRecord,
    ack: &SegmentRecord,
) -> Option<&'a SegmentRecord> {
    let rtt = fastest_round_trip(f, r.dir).filter(|&rtt| rtt > 0)?;
    let at = f.timeline.partition_point(|p| p.frame <= ack.frame);
    let dup = f.timeline[at..]
        .iter()
        .filter(|p| p.dir != r.dir)
        .take_while(|p| p.ack_set && p.ack == ack.ack)
        .find(|p| super::pure_ack(p) && p.window == ack.window)?;
    if dup.ts_ns - ack.ts_ns < (rtt / 4).max(DOUBLED_ACK_NS).max(f.jitter_ns) {
        return None;
    }
    let latest_drawer = f.on_clock_of(r.dir, dup) - rtt / 2;
    let only_copies = f
        .timeline
        .iter()
        .take_while(|p| p.frame < dup.frame)
        .filter(|p| p.dir == r.dir && f.on_clock_of(r.dir, p) <= latest_drawer)
        .filter(|p| p.len > 0 || p.flags.syn() || p.flags.fin() || p.probe)
        .all(|p| {
            let copy = seq::lt(p.seq, r.end) && seq::lt(r.seq, p.end);
            if copy {
                p.frame == first.frame || p.frame == r.frame
            } else {
                !p.probe && !p.retransmission && seq::le(p.seq, ack.ack)
            }
        });
    only_copies.then_some(dup)
}

/// The receiver's first packet captured after the re-send `r` that
/// acknowledges all of `r`'s bytes.
fn first_ack_after<'a>(f: &Facts<'a>, r: &SegmentRecord) -> Option<&'a SegmentRecord> {
    let after = f.timeline.partition_point(|p| p.frame <= r.frame);
    f.timeline[after..]
        .iter()
        .find(|p| p.dir != r.dir && p.ack_set && seq::le(r.end, p.ack))
}

/// The receiver's first acknowledgment of the re-send `r`'s bytes came
/// back to the sender sooner than a round trip could bring the re-send's
/// own (under half of `round_trip_ns`, less the clock shift's error): it
/// acknowledged the original, which was not lost; the timer fired while
/// the ACK was on its way (a slow receiver or a queue). Half, because a
/// path's round trip varies within a connection (a phone's: a re-send's
/// ACK seen back in 0.63 of the handshake's round trip, the re-send
/// needed: every earlier copy was lost); without TCP timestamps
/// ([`echoes_earlier_copy`]) only a return that fast proves the original
/// arrived.
fn acked_too_soon(f: &Facts<'_>, r: &SegmentRecord, round_trip_ns: Option<i64>) -> bool {
    let Some(rtt) = round_trip_ns.filter(|&rtt| rtt > 0) else {
        return false;
    };
    let sent = f.on_clock_of(r.dir, r);
    let Some(ack) = first_ack_after(f, r) else {
        return false;
    };
    let back = f.on_clock_of(r.dir, ack) - sent;
    back < rtt / 2 - f.shift_error_ns(r.dir)
}

/// The shortest round trip `sender`'s data showed: the connection's RTT,
/// or less, the fastest time from a segment sent once to the receiver's
/// first ACK covering it, on the sender's clock (Karn's rule: bytes sent
/// twice time nothing). Either can only overstate the path's round trip
/// (a slow SYN-ACK, a delayed ACK), so the smaller is the closer.
fn fastest_round_trip(f: &Facts<'_>, sender: Direction) -> Option<i64> {
    *f.fastest_round_trip_views[sender.index()].get_or_init(|| find_fastest_round_trip(f, sender))
}

fn find_fastest_round_trip(f: &Facts<'_>, sender: Direction) -> Option<i64> {
    /// Re-sent ranges looked at most; a connection with more keeps its RTT.
    const MAX_RESENT: usize = 64;
    let resent: Vec<(u32, u32)> = f
        .timeline
        .iter()
        .filter(|r| r.dir == sender && r.retransmission && r.len > 0)
        .take(MAX_RESENT + 1)
        .map(|r| (r.seq, r.end))
        .collect();
    if resent.len() > MAX_RESENT {
        return f.rtt_ns;
    }
    let sent_twice = |a: u32, b: u32| resent.iter().any(|&(l, h)| seq::lt(a, h) && seq::lt(l, b));
    let mut pending = std::collections::VecDeque::new();
    let mut best = f.rtt_ns;
    for p in f.timeline {
        if p.dir == sender {
            if p.len > 0 && p.new_data && !p.retransmission {
                pending.push_back((p.seq, p.end, f.on_clock_of(sender, p)));
            }
        } else if p.ack_set {
            let at = f.on_clock_of(sender, p);
            let mut newest = None;
            while let Some(&(a, b, t)) = pending.front() {
                if !seq::le(b, p.ack) {
                    break;
                }
                pending.pop_front();
                if !sent_twice(a, b) {
                    newest = Some(t);
                }
            }
            if let Some(t) = newest.filter(|&t| at > t) {
                best = Some(best.map_or(at - t, |b| b.min(at - t)));
            }
        }
    }
    best
}

/// The receiver's pure ACK that released the re-send `r` (at `t` on the
/// sender's clock): the last one captured between the sender's previous
/// segment `prev` and `r` (and, with `duplicate`, one that did not move
/// past `r`'s bytes) that `r` left right after.
///
/// A fast retransmission leaves the moment the third duplicate ACK, or
/// enough SACK, arrives (RFC 5681 3.2, RFC 6675). And a retransmission
/// timer is reset by every ACK of new data and ignores duplicate ones,
/// so any re-send that left the moment an ACK arrived was that ACK's
/// doing (loss recovery taking the next hole: RFC 6582's partial ACK),
/// not a timeout's, however long its silence was.
fn releasing_ack<'a>(
    f: &'a Facts<'_>,
    prev: &SegmentRecord,
    r: &SegmentRecord,
    t: i64,
    duplicate: bool,
) -> Option<&'a SegmentRecord> {
    let a = f.between(prev.frame + 1, r.frame).iter().rev().find(|a| {
        a.dir != r.dir && a.ack_set && a.len == 0 && (!duplicate || seq::le(a.ack, r.seq))
    })?;
    (f.released_by(r.dir, t, f.on_clock_of(r.dir, a)) && f.can_release(a, r)).then_some(a)
}

/// The receiver's last ACK before the re-send `r` (after the sender's
/// previous segment `prev`), when `r` re-sends bytes above that ACK and
/// the byte it asks for was re-sent before `r`: a retransmission timer
/// re-sends the first unacknowledged byte (RFC 6298 5.4: "the earliest
/// segment that has not been acknowledged"), so a re-send beyond a head
/// already repaired is SACK recovery taking the next hole, clocked by the
/// receiver's ACKs (RFC 6675), however long it waited for them and
/// however slowly its sender answered (nDPI's whatsappfiles 0: a phone
/// re-sending each hole 3.8-4.3 ms after the server's duplicate ACKs, its
/// head re-sent 200 ms before), within [`ANSWERED_WITHIN_NS`] of it.
fn beyond_repaired_head<'a>(
    f: &'a Facts<'_>,
    prev: &SegmentRecord,
    r: &SegmentRecord,
) -> Option<&'a SegmentRecord> {
    let a = f
        .between(prev.frame + 1, r.frame)
        .iter()
        .rev()
        .find(|a| a.dir != r.dir && a.ack_set && a.len == 0)?;
    let head_repaired = f
        .timeline
        .iter()
        .take_while(|p| p.frame < r.frame)
        .any(|p| {
            p.dir == r.dir && p.retransmission && seq::le(p.seq, a.ack) && seq::lt(a.ack, p.end)
        });
    // (Soon after that ACK: a sender's answer, however slow, not a
    // silence the ACK merely preceded.)
    let soon = f.on_clock_of(r.dir, r) - f.on_clock_of(r.dir, a) <= ANSWERED_WITHIN_NS;
    (seq::lt(a.ack, r.seq) && head_repaired && soon).then_some(a)
}

/// How soon after the receiver's ACK a slow sender (a busy phone) still
/// answers it with the next re-send of its recovery.
const ANSWERED_WITHIN_NS: i64 = 20_000_000;

/// Frames a retransmission finding cites at most: its originals and
/// re-sends, whatever they cost (a long connection's windows joined too).
pub(crate) const RESENDS_CITED: usize = 40;

/// The client's FIN, when `sender` is the client and its socket was
/// closed for good then: after that FIN it answered the server's new
/// data with an RST. Linux resets data that reaches a socket in FIN-WAIT
/// whose application can no longer read (close(), not shutdown() of the
/// write side alone, which keeps reading: `TCPAbortOnData`), so the
/// client's application had let the connection go when it sent its FIN,
/// and waited for nothing after it: what it re-sent then (its last
/// message and FIN, again and again into a dead path) cost no one, and an
/// answer it drew was reset unread. The server's re-sends after its own
/// close are left counted: its response is what a client still waits for.
/// Or the client's FIN inside its TLS handshake ([`closed_mid_handshake`]),
/// or in the middle of its own timer's re-sends ([`closed_mid_stall`]).
pub(super) fn client_closed_for_good(f: &Facts<'_>, sender: Direction) -> Option<u64> {
    if sender != Direction::ClientToServer {
        return None;
    }
    if let Some(fin) = closed_mid_handshake(f).or_else(|| closed_mid_stall(f)) {
        return Some(fin);
    }
    // (Its RST, below, proves the close.)
    f.sent_by(sender).rst_frame?;
    let mut fin = None;
    // The client's highest acknowledgment: the server's data beyond it is
    // new to the client (the capture may have missed its first copy).
    let mut acked = None;
    let mut answered_data = false;
    for p in f.timeline {
        if p.dir == sender {
            if fin.is_none() && p.flags.fin() {
                fin = Some(p.frame);
            }
            if answered_data && p.flags.rst() {
                return fin;
            }
            if p.ack_set && acked.is_none_or(|a| seq::lt(a, p.ack)) {
                acked = Some(p.ack);
            }
        } else if fin.is_some() && p.len > 0 && acked.is_none_or(|a| seq::lt(a, p.end)) {
            answered_data = true;
        }
    }
    None
}

/// The client's FIN, sent after its ClientHello and before its Finished:
/// no TLS client completes a handshake with its write side shut (its
/// Finished, its key exchange before it, must still go out), so a FIN
/// there is a client giving the connection up, whatever it re-sends
/// after (nDPI's skype.pcap 1: a ClientHello never acknowledged, the
/// client's FIN 144 ms later, and the two sent again together for 61 s,
/// counted as a 61 s `rto_stall` nobody had).
fn closed_mid_handshake(f: &Facts<'_>) -> Option<u64> {
    let client = Direction::ClientToServer;
    let fin = f.sent_by(client).fin_frame?;
    let tls = f.report.tls.as_ref()?;
    let mut mine = tls.messages.iter().filter(|m| m.direction == client);
    let hello = mine
        .clone()
        .find(|m| m.message == TlsMessage::ClientHello)?;
    let finished = mine.any(|m| {
        m.frame <= fin
            && matches!(
                m.message,
                TlsMessage::Finished | TlsMessage::FinishedEncrypted
            )
    });
    (hello.frame < fin && !finished).then_some(fin)
}

/// The client's FIN, when its last data before it was its timer's re-send
/// of bytes the server had still not acknowledged when the FIN left: the
/// application closed in the middle of a stall, long after its last write
/// (a retransmission timeout at least), for good. A half-close ends a
/// request as it is written (`nc -N`, an HTTP/1.0 client: the FIN right
/// behind the data, before any timer); nothing shuts its write side
/// seconds after its last write and goes on waiting for the answer. What
/// the client re-sent after that FIN cost no one (nDPI's skype.pcap 23:
/// 27 bytes re-sent five times over 12 s into a path dropping data both
/// ways, the FIN 0.9 s after the fifth, and a sixth copy with the FIN
/// 7.4 s later counted as a wait of 8.3 s); the silence from its last
/// re-send to the FIN it did sit through, its timer running. So too when
/// that last data was a write its timer re-sent only after the FIN, the
/// FIN a second or more after it ([`lost_before_fin`]): the
/// application gave up before the timer fired (skype.pcap 63: 8 bytes
/// never acknowledged, the FIN 1.1 s after them, the copies after it).
/// So too, however soon after the write, when that FIN was one of the
/// application's closes of its connections together ([`TEARDOWN`] or
/// more others within 5 ms, to any server: it quit, or dropped spare
/// attempts): it let go of them all, not waiting on this one (nDPI's
/// skype.pcap 69: 52 bytes written, the FIN 47 ms later with six other
/// connections' in 0.1 ms, and the timer's copy after it counted as a
/// 1.3 s stall; judged in session 86).
fn closed_mid_stall(f: &Facts<'_>) -> Option<u64> {
    let client = Direction::ClientToServer;
    // (Or its RST: an abort after the copies, skype.pcap 3's after a
    // ClientHello re-sent twelve times over 55 s.)
    let stats = f.sent_by(client);
    let fin = match (stats.fin_frame, stats.rst_frame) {
        (Some(a), Some(b)) => a.min(b),
        (a, b) => a.or(b)?,
    };
    let mut last_data = None;
    let mut acked = None;
    for p in f.timeline.iter().take_while(|p| p.frame < fin) {
        if p.dir == client && p.len > 0 {
            last_data = Some(p);
        } else if p.dir != client && p.ack_set && acked.is_none_or(|a| seq::lt(a, p.ack)) {
            acked = Some(p.ack);
        }
    }
    let last = last_data.filter(|p| !p.probe)?;
    let unacked = acked.is_none_or(|a| seq::lt(a, last.end));
    let torn_down = Some(fin) == stats.fin_frame && f.client_closed_with >= TEARDOWN;
    (unacked && (last.retransmission || torn_down || lost_before_fin(f, last, (fin, acked))))
        .then_some(fin)
}

/// Nothing reached any client from before the client's first lost
/// original (`retx`: the re-sends' frames) to its last re-send, though it
/// re-sent to another server in that time (track.rs notes it at each
/// re-send: `Facts::unheard_at_resend`): the client's own side of the
/// network was down, not this path (nDPI's skype.pcap 69: a write and its
/// copy 16 s after the last packet from anywhere, the client's SYNs, FINs
/// and DNS queries elsewhere unanswered too; judged in session 86).
fn unheard_while_resending(
    f: &Facts<'_>,
    sender: Direction,
    retx: &[u64],
) -> Option<crate::model::NothingHeard> {
    if sender != Direction::ClientToServer {
        return None;
    }
    let first = f.record(*retx.first()?)?;
    let last = *retx.last()?;
    let sent = original(f.timeline, first).map_or(first.ts_ns, |o| o.ts_ns);
    super::nothing_heard_since(f.unheard_at_resend, sent, last)
}

/// When the first of the timer stalls `stalls` began: its wait's first
/// packet (the lost copy) left.
fn stall_began(f: &Facts<'_>, stalls: &[&(Wait, &SegmentRecord)]) -> Option<i64> {
    stalls
        .iter()
        .filter_map(|(w, _)| f.record(w.from_frame))
        .map(|r| r.ts_ns)
        .min()
}

/// A client's timer stalls (`stalls`) while nothing reached any client,
/// from the first stall's beginning (its lost copy's leaving) to its last
/// re-send, though it re-sent elsewhere meanwhile: its own side of the
/// network down, as its re-sends' finding says (nDPI's alexa-app.pcapng
/// 111: the stall told "a firewall's or NAT's idle timeout" beside the
/// retransmission finding's "the client's own side of the network was
/// down"; judged in session 87).
fn unheard_while_stalled(
    f: &Facts<'_>,
    sender: Direction,
    stalls: &[&(Wait, &SegmentRecord)],
) -> Option<crate::model::NothingHeard> {
    if sender != Direction::ClientToServer {
        return None;
    }
    let began = stall_began(f, stalls)?;
    let last = stalls.iter().map(|(_, r)| r.frame).max()?;
    super::nothing_heard_since(f.unheard_at_resend, began, last)
}

/// Other connections a client closed with this one's FIN for the close to
/// be the application's teardown of them all ([`closed_mid_stall`]): two,
/// three connections in one act.
const TEARDOWN: u32 = 2;

/// How many times the sender of `last`, its last data before it gave up,
/// sent those bytes again, before it gave up and after.
fn copies_around(f: &Facts<'_>, last: &SegmentRecord) -> usize {
    f.timeline.iter().filter(|p| copy_of(p, last)).count()
}

/// Whether the sender of `last` sent its bytes again after its FIN or
/// RST (`let_go`, a frame) and a copy went unanswered: its kernel's
/// copies, the application gone (skype.pcap 63); none where the next it
/// sent was its RST (skype.pcap 57).
fn copies_after(f: &Facts<'_>, last: &SegmentRecord, let_go: u64) -> bool {
    // Up to the peer's first acknowledgment of the bytes: the copy just
    // before it got through, not unanswered (nDPI's skype.pcap 50,
    // judged in session 88: the one copy after the FIN, acknowledged).
    let mut copies = 0;
    for p in &f.timeline[f.timeline.partition_point(|p| p.frame <= let_go)..] {
        if p.dir != last.dir && p.ack_set && seq::lt(last.seq, p.ack) {
            return copies > 1;
        }
        copies += u32::from(copy_of(p, last));
    }
    copies > 0
}

/// Whether `p` is a re-send, by `last`'s sender, of `last`'s first byte.
fn copy_of(p: &SegmentRecord, last: &SegmentRecord) -> bool {
    p.dir == last.dir
        && p.retransmission
        && p.len > 0
        && seq::le(p.seq, last.seq)
        && seq::lt(last.seq, p.end)
}

/// Whether the client's first byte the server had not acknowledged when
/// the client's FIN (`fin`) left (`acked`: how far it had) was re-sent
/// after that FIN, which left
/// a second or more after the client's last data `last`: a write was
/// lost and the application, waiting, closed before the timer re-sent it
/// ([`closed_mid_stall`]; skype.pcap 63). Sooner, a close may be the
/// application's plan, not its giving up (alexa-app.pcapng 108: a FIN
/// 355 ms after a request whose first segment was lost, its answer
/// then refused with an RST).
fn lost_before_fin(f: &Facts<'_>, last: &SegmentRecord, (fin, acked): (u64, Option<u32>)) -> bool {
    let Some(fin_record) = f.record(fin) else {
        return false;
    };
    if fin_record.ts_ns - last.ts_ns < super::server_think_time::GAVE_UP_AFTER_NS {
        return false;
    }
    let unacked = acked.unwrap_or(last.seq);
    // (Strictly after: a re-send the FIN rode on was the timer's, the
    // application's close queued behind it, no give-up seen.)
    f.timeline[f.timeline.partition_point(|p| p.frame <= fin)..]
        .iter()
        .any(|p| {
            p.dir == last.dir
                && p.retransmission
                && seq::le(p.seq, unacked)
                && seq::lt(unacked, p.end)
        })
}

/// The wait before the re-send `r`, on the sender's clock, from its
/// previous data segment `p`: to `r`, or to the receiver's RST or FIN
/// (`closed_at`: `Facts::receiver_closed_at`) when it gave up during the
/// silence: it waited until then, and nobody read the re-send.
pub(super) fn resend_wait(
    f: &Facts<'_>,
    sender: Direction,
    p: &SegmentRecord,
    r: &SegmentRecord,
    closed_at: Option<u64>,
) -> Wait {
    let end = closed_at
        .filter(|c| p.frame < *c && *c < r.frame)
        .and_then(|c| f.record(c))
        .unwrap_or(r);
    let ms = (f.on_clock_of(sender, end) - f.on_clock_of(sender, p)).max(0) as f64 / 1e6;
    Wait {
        from_frame: p.frame,
        to_frame: end.frame,
        release_frame: None,
        ms,
    }
}

/// What the receiver waited for the re-send `r` that filled a hole, where
/// its sender went on sending meanwhile (its silence before `r`, from its
/// previous data `p`, too short to count): the receiver could use nothing
/// past the hole until `r` came, so a phase of the ledger that ended on
/// `r` (a response's end, a handshake flight the receiver's next message
/// needed whole: reordering.rs's `phases_ended`) waited for it from the
/// arrival of the sender's last segment before it (what it would have
/// had), an answer's first byte from the first segment captured beyond
/// the hole (where that segment answered the request: its ACK covers the
/// request's end). The wait has no releasing packet (the sender's recovery
/// ended it) and counts from [`super::reordering::MIN_HOLD_NS`] (nDPI's
/// no_sni.pcap 1: a DNS-over-HTTPS answer's 181 lost bytes re-sent 84 ms
/// after the client's SACKs reported the hole, the answers behind it
/// held; android.pcap 7, the ServerHello and Certificate re-sent after
/// the rest of the flight had come, 59 ms: both had cost nothing).
fn behind_the_hole(
    f: &Facts<'_>,
    sender: Direction,
    p: &SegmentRecord,
    r: &SegmentRecord,
) -> Vec<Wait> {
    let before = f.between(0, r.frame);
    let Some(jumper) = before
        .iter()
        .find(|x| x.dir == sender && x.len > 0 && seq::lt(r.seq, x.seq))
    else {
        return Vec::new();
    };
    // An answer's first byte waited from the jumper only where the jumper
    // answered the request: left after all of it arrived (its ACK covers
    // the request's end). One that left before (its ACK short of it) and
    // the hole's bytes before it answered an earlier request
    // (skype_no_unknown.pcap 38: 298 ms claimed of a first byte whose
    // "answer" the server had sent before the request came).
    let request_end = f
        .report
        .ledger
        .iter()
        .find(|row| row.phase == Phase::FirstByte && row.end_frame == r.frame)
        .and_then(|row| f.exchanges.get((row.exchange? as usize).checked_sub(1)?))
        .and_then(|x| f.record(x.request_last.frame))
        .map(|q| q.end);
    let answered = request_end.is_none_or(|end| jumper.ack_set && seq::le(end, jumper.ack));
    super::reordering::phases_ended(f, r, sender.reverse())
        .into_iter()
        .filter(|&(_, first_byte)| !first_byte || answered)
        .filter_map(|(_, first_byte)| {
            let from = if first_byte { jumper } else { p };
            let ns = f.on_clock_of(sender.reverse(), r) - f.on_clock_of(sender.reverse(), from);
            (ns >= super::reordering::MIN_HOLD_NS).then(|| Wait {
                from_frame: from.frame,
                to_frame: r.frame,
                release_frame: None,
                ms: ns as f64 / 1e6,
            })
        })
        .collect()
}

/// The latency phase of the ledger row the re-send `frame` falls in (a
/// TLS handshake, a request's wait for its first byte, a preamble), or
/// the transfer's. SYNs re-sent are `syn_retransmit`'s, so never the TCP
/// handshake's.
pub(super) fn phase_of(f: &Facts<'_>, frame: u64) -> Phase {
    phase_in(&f.report.ledger, frame)
}

/// [`phase_of`] in the rows `ledger`.
fn phase_in(ledger: &[LedgerRow], frame: u64) -> Phase {
    ledger
        .iter()
        .find(|r| {
            r.phase.is_latency()
                && r.phase != Phase::TcpHandshake
                && r.start_frame <= frame
                && frame <= r.end_frame
        })
        .map_or(Phase::Transfer, |r| r.phase)
}

/// The phase every one of `waits` ends in, by the rows `ledger`
/// ([`phase_of`]): the transfer's when they end in different phases (or
/// there are none). Stalls of a throughput are the transfer's; waits all
/// inside latency rows of one phase (an upload's repairs, which are its
/// request's; a repaired handshake flight) are that phase's excess.
pub(crate) fn waits_phase(ledger: &[LedgerRow], waits: &[Wait]) -> Phase {
    match waits.first().map(|w| phase_in(ledger, w.to_frame)) {
        Some(p) if waits.iter().all(|w| phase_in(ledger, w.to_frame) == p) => p,
        _ => Phase::Transfer,
    }
}

/// `items` by the ledger phase ([`phase_of`]) of the frame `at` gives
/// each, in ledger order; phases with none are left out.
pub(super) fn by_phase<'t, T>(
    f: &Facts<'_>,
    items: &'t [T],
    at: impl Fn(&T) -> u64,
) -> Vec<(Phase, Vec<&'t T>)> {
    Phase::ALL
        .iter()
        .filter_map(|&phase| {
            let here: Vec<&T> = items
                .iter()
                .filter(|x| phase_of(f, at(x)) == phase)
                .collect();
            (!here.is_empty()).then_some((phase, here))
        })
        .collect()
}

/// Frames an `rto_stall` cites at most: its re-sends, each behind its
/// original.
const STALL_FRAMES_CITED: usize = 20;

pub fn detect(f: &Facts<'_>, out: &mut Vec<Finding>) {
    let rtt = f.rtt_ns.unwrap_or(0);
    let rto_floor = 200_000_000i64.max(rtt * 3 / 2);
    for sender in [Direction::ClientToServer, Direction::ServerToClient] {
        // Without a single packet of the receiver (a capture of one
        // direction), a re-send cannot be told from one whose ACK was
        // merely late (spurious), nor from a window probe: nothing is
        // claimed.
        if f.sent_by(sender.reverse()).packets == 0 {
            continue;
        }
        // Every segment the tracker marks a retransmission is counted in
        // its sender's stats: none counted, none to cite or count beyond
        // the timeline's cap (most connections: one comparison).
        let stats = f.sent_by(sender);
        if stats.retransmissions == 0 {
            continue;
        }
        // Data and FINs as they left the sender; keep-alive and
        // zero-window probes are sent on purpose, not for lost data.
        // A client that let go in the middle of its own stall waited on
        // its timer until its FIN or RST ([`closed_mid_stall`]).
        let gave_up_at = (sender == Direction::ClientToServer)
            .then(|| closed_mid_stall(f))
            .flatten();
        let data: Vec<(i64, &SegmentRecord)> = f
            .timeline
            .iter()
            .filter(|r| {
                r.dir == sender
                    && (r.end != r.seq || gave_up_at == Some(r.frame))
                    && !r.flags.syn()
                    && !r.probe
            })
            .map(|r| (f.on_clock_of(sender, r), r))
            .collect();
        // (Or its SYN-ACK, a FIN or RST without data: a capture of data
        // packets only has none of those either, and one that has them
        // would have shown the receiver's ACKs. skype_no_unknown's 2: a
        // ClientHello re-sent twelve times after the server's SYN-ACK,
        // never acknowledged, had been cited as a data-only capture's.)
        let receiver_acks_captured = f.acks_captured(sender.reverse());
        // The receiver's first FIN or RST; not a FIN after which it went
        // on reading (a shutdown() of its write side: it still waits).
        let receiver_closed_at = f.receiver_closed_at(sender);
        // Full-size segments a narrow hop could not carry: their re-sends
        // are path_mtu's.
        let narrow_path = super::path_mtu::of(f, sender);
        let (mtu_resends, mtu_waits) =
            narrow_path.map_or((&[][..], &[][..]), |p| (&p.resends[..], &p.waits[..]));
        let client_gone_at = client_closed_for_good(f, sender);
        // The client's re-sends of what the server's listener had not
        // taken are accept_queue_full's.
        let not_taken = (sender == Direction::ClientToServer)
            .then(|| super::accept_queue_full::of(f))
            .flatten()
            .map(|n| n.first.frame..=n.taken.frame);
        let mut retx = Vec::new();
        // The sequence numbers re-sent: one segment re-sent five times is
        // one segment (its timer backing off), not five lost.
        let mut resent_seqs = Vec::new();
        let mut pairs = Vec::new();
        let mut stalls = Vec::new();
        let mut waits = Vec::new();
        let mut held = Vec::new();
        let mut unconfirmed = 0u32;
        let mut originals_unseen = 0u32;
        // Re-sends of data first sent after the receiver had closed, or
        // re-sent after a silence that began after it; and of those, the
        // ones whose original left before the close (it crossed it).
        let mut into_closed = 0usize;
        let mut crossed_close = 0usize;
        for w in data.windows(2) {
            let ((tp, p), (t, r)) = (w[0], w[1]);
            // The silence from the last re-send to the FIN of a client
            // that gave up in it: the application sat through it, the
            // timer running, until it let go (skype.pcap 23: 0.9 s).
            // (`p` is the client's last data before it, which
            // `closed_mid_stall` found re-sent or lost.)
            if gave_up_at == Some(r.frame) {
                // (Not data first sent after the server had closed: a
                // message to a peer gone, that no one waited on: webex.pcap
                // 34, 180 bytes after the server's FIN, re-sent for 30 s.)
                let sent_at = original(f.timeline, p).map_or(p.frame, |o| o.frame);
                if receiver_closed_at.is_some_and(|c| c < sent_at) {
                    continue;
                }
                // (Nor a close sooner after a write than any timer fires:
                // the application let go before a re-send was due, and
                // sat through no timer: skype.pcap 69's teardown 47 ms on.)
                if !p.retransmission && t - tp < rto_floor {
                    continue;
                }
                let wait = Wait {
                    from_frame: p.frame,
                    to_frame: r.frame,
                    release_frame: None,
                    ms: (t - tp).max(0) as f64 / 1e6,
                };
                stalls.push((wait, r));
                continue;
            }
            // A FIN re-sent after the data was delivered delays no one
            // (the application has finished), and the peer that does not
            // answer it may simply be gone: not evidence of loss.
            if !r.retransmission
                || r.len == 0
                || refused_syn_data(f, r)
                || mtu_resends.contains(&r.frame)
                || not_taken.as_ref().is_some_and(|s| s.contains(&r.frame))
            {
                continue;
            }
            if spurious(f, r) {
                // Not lost, but a wait all the same where the original
                // was held past the timer.
                let gone = |frame: u64| {
                    receiver_closed_at.is_some_and(|c| c < frame)
                        || client_gone_at.is_some_and(|c| p.frame >= c)
                };
                // (One hold per original, however many times the timer
                // re-sent it meanwhile.)
                if let Some(h) = held_past_timer(f, p, r, t - tp, rto_floor).filter(|(w, _)| {
                    !gone(w.from_frame)
                        && !held
                            .iter()
                            .any(|(x, _): &(Wait, _)| x.from_frame == w.from_frame)
                }) {
                    held.push(h);
                }
                continue;
            }
            let first = original(f.timeline, r);
            let shown = loss_shown(f, r, receiver_acks_captured);
            // Sent after the receiver closed (its FIN or RST captured
            // before the original): a closing message, a TLS close_notify,
            // that no one waited for (server_think_time's rule: nobody
            // waits for an answer after closing).
            // Nor for a re-send after a silence that began once the
            // receiver had closed (its FIN, not read past, or its RST):
            // nobody could read it (skype_no_unknown.pcap 64: the peer's
            // FIN, then the client's, then the peer's RST of what arrived
            // after its close, and 294 ms later the client's timer re-sent
            // into the reset connection).
            let sent_at = first
                .map_or(r.frame, |o| o.frame)
                .max(p.frame.saturating_add(1));
            let receiver_closed = receiver_closed_at.is_some_and(|c| c < sent_at);
            let silence = t - tp;
            if !shown && silence > RTO_MAX_NS {
                // Only the sequence number ties the two, and no sender
                // keeps re-sending that long (a collage of captures, a
                // clock jump): not a re-send the capture can show.
                continue;
            }
            retx.push(r.frame);
            resent_seqs.push(r.seq);
            into_closed += usize::from(receiver_closed);
            crossed_close += usize::from(
                receiver_closed
                    && first
                        .zip(receiver_closed_at)
                        .is_some_and(|(o, c)| o.frame < c),
            );
            match first {
                Some(o) => pairs.push(o.frame),
                None => originals_unseen += 1,
            }
            pairs.push(r.frame);
            if !shown {
                // Cited, but nobody is shown to have waited for it.
                unconfirmed += 1;
                continue;
            }
            // The silence began after the client had closed for good:
            // nobody read an answer after it.
            if receiver_closed || client_gone_at.is_some_and(|c| p.frame >= c) {
                continue;
            }
            let wait = resend_wait(f, sender, p, r, receiver_closed_at);
            if silence > RTO_MAX_NS {
                // A clock jump or a collage of captures is not a timer.
            } else if silence >= rto_floor {
                match releasing_ack(f, p, r, t, false).or_else(|| beyond_repaired_head(f, p, r)) {
                    // Recovery clocked by the receiver's ACKs: the wait
                    // was for that ACK, not for a timer.
                    Some(a) => waits.push(Wait {
                        release_frame: Some(a.frame),
                        ..wait
                    }),
                    // (With the re-send: a wait may end at the
                    // receiver's giving up instead.)
                    None => stalls.push((wait, r)),
                }
            } else if silence >= rtt / 2 {
                waits.push(Wait {
                    release_frame: releasing_ack(f, p, r, t, true).map(|a| a.frame),
                    ..wait
                });
            } else {
                waits.extend(behind_the_hole(f, sender, p, r));
            }
        }
        if data
            .first()
            .is_some_and(|(_, r)| r.retransmission && r.len > 0 && !refused_syn_data(f, r))
        {
            // The first one seen is already a retransmission (the capture
            // started after the original): no silence to measure.
            let r = data[0].1;
            retx.insert(0, r.frame);
            resent_seqs.push(r.seq);
            pairs.insert(0, r.frame);
            originals_unseen += 1;
            if !loss_shown(f, r, receiver_acks_captured) {
                unconfirmed += 1;
            }
        }
        // Retransmissions past the timeline's cap are counted, not cited;
        // SYNs re-sent are syn_retransmit's.
        let in_timeline = f
            .timeline
            .iter()
            .filter(|r| r.dir == sender && r.retransmission)
            .count();
        let beyond = (stats.retransmissions as usize).saturating_sub(in_timeline);
        // (In windows, each window counts its own.)
        let beyond = if f.timeline.len() >= rttdoc_analyze::TIMELINE_CAP && !f.windowed {
            beyond
        } else {
            0
        };
        if retx.is_empty() && beyond == 0 {
            held_stalls(f, sender, &mut held, out);
            continue;
        }
        // The window a hole held (window_stalls.rs): the sender had more to
        // send and waited for the repair's acknowledgment. A re-send's
        // silence inside such a stall is part of it (the re-send's previous
        // segment is at or after the stall's start); a timer inside one is
        // the rto_stall's.
        let mut window_held = 0u32;
        if let Some(all) = window_stalls(f, sender) {
            for w in all.iter().filter(|s| s.held_by_loss).map(|s| s.wait) {
                let overlaps = |x: &Wait| x.from_frame < w.to_frame && w.from_frame < x.to_frame;
                if stalls.iter().map(|(s, _)| s).chain(mtu_waits).any(overlaps) {
                    continue;
                }
                waits.retain(|x| !overlaps(x));
                waits.push(w);
                window_held += 1;
            }
            waits.sort_by_key(|w| w.from_frame);
        }
        let count = retx.len() + beyond;
        resent_seqs.sort_unstable();
        // (The most re-sends of one segment: a black hole's series.)
        let most_copies = resent_seqs
            .chunk_by(|a, b| a == b)
            .map(|same| same.len())
            .max()
            .unwrap_or(0);
        resent_seqs.dedup();
        // (Those past the timeline are not known apart: each counted.)
        let distinct = resent_seqs.len() + beyond;
        // (An original re-sent several times is cited once, before its
        // first re-send.)
        let mut cited = std::collections::HashSet::new();
        pairs.retain(|&frame| cited.insert(frame));
        // Past the timeline, the re-sends the tracker kept the frames of
        // (their originals and waits are not known).
        let late = f
            .late_retransmissions
            .iter()
            .filter(|(d, _)| *d == sender)
            .map(|&(_, frame)| frame)
            .take(beyond);
        let phase = waits_phase(&f.report.ledger, &waits);
        let mut x = f.finding(FindingKind::Retransmission, Some(phase));
        x.frames = pairs
            .iter()
            .copied()
            .chain(late)
            .take(RESENDS_CITED)
            .collect();
        x.cost_ms = waits.iter().map(|w| w.ms).sum();
        x.waits = waits;
        // Re-sends none of which the capture shows were lost: as likely
        // needless (a spurious timeout, a tail-loss probe) as repairs.
        x.confidence = if unconfirmed as usize == retx.len() && beyond == 0 {
            0.5
        } else {
            1.0
        };
        x.detail = Detail::Retransmission {
            sender,
            segments: count as u32,
            distinct_segments: distinct as u32,
            unconfirmed,
            window_stalls: window_held,
            past_timeline: beyond as u32,
            originals_unseen,
            // (Every re-send, its original seen after the close.)
            into_closed: receiver_closed_at
                .filter(|_| into_closed == retx.len() && beyond == 0 && originals_unseen == 0),
            crossed_close: crossed_close > 0,
            black_hole: most_copies >= BLACK_HOLE_COPIES,
            nothing_heard: unheard_while_resending(f, sender, &retx),
        };
        x.display_filter = if x.frames.is_empty() {
            format!(
                "tcp.stream eq {} && tcp.analysis.retransmission",
                f.report.stream
            )
        } else {
            f.filter_frames(&x.frames)
        };
        out.push(x);
        // One rto_stall per phase its timers stalled: a lost ClientHello
        // or request is the handshake's or the first byte's latency, not
        // the transfer's throughput.
        for (phase, here) in by_phase(f, &stalls, |(w, _)| w.to_frame) {
            // A sender that heard nothing of its peer's waited for
            // acknowledgments lost on their way to it; the peer's
            // unheard repairs stalled in the same time, and that stall
            // names the outage: counted once, there (whatsappfiles 0).
            let deaf = deafness(f, &here);
            if deaf.is_some_and(|d| d.side == sender) {
                continue;
            }
            let mut y = f.finding(FindingKind::RtoStall, Some(phase));
            // The timer's re-sends, whatever their waits end at, each
            // behind the first copy of its bytes the capture holds (once:
            // a backoff series re-sends the same original).
            for (_, r) in here.iter() {
                let first = original(f.timeline, r).map(|o| o.frame);
                let new: Vec<u64> = first
                    .into_iter()
                    .chain([r.frame])
                    .filter(|frame| !y.frames.contains(frame))
                    .collect();
                if y.frames.len() + new.len() > STALL_FRAMES_CITED {
                    break;
                }
                y.frames.extend(new);
            }
            y.cost_ms = here.iter().map(|(w, _)| w.ms).sum();
            y.confidence = 0.9;
            // A backoff series: the timer re-sent the same bytes three
            // times or more, every copy but perhaps the last unanswered.
            let mut firsts: Vec<u32> = here.iter().map(|(_, r)| r.seq).collect();
            firsts.sort_unstable();
            // (Where the application gave up in the stall, the copies its
            // kernel went on sending after the FIN count: unanswered
            // before it, they tell the same.)
            let give_up = here.iter().find(|(_, r)| gave_up_at == Some(r.frame));
            let gave_up = give_up.map(|(_, r)| r.frame);
            let last_before_giving_up = give_up.and_then(|(w, _)| f.record(w.from_frame));
            let unanswered = firsts
                .chunk_by(|a, b| a == b)
                .any(|same| same.len() >= BLACK_HOLE_COPIES)
                || last_before_giving_up
                    .is_some_and(|last| copies_around(f, last) >= BLACK_HOLE_COPIES);
            let resent_after_giving_up = last_before_giving_up
                .zip(gave_up)
                .is_some_and(|(last, fin)| copies_after(f, last, fin));
            let kernel_gave_up = give_up.is_some_and(|(w, r)| kernel_reset(&here, w, r));
            // The client's first data, the server silent since its
            // SYN-ACK (accept_queue_full.rs: what a capture at the server
            // or a SYN-ACK re-send would prove); the SYN-ACK in this
            // timeline (a long connection's later window starts past it).
            let server_spoke = f
                .timeline
                .iter()
                .find(|p| p.dir != sender && !p.flags.syn())
                .map(|p| p.frame);
            // (Not where the server closed it with a FIN that acknowledged
            // none of the bytes re-sent, at any time: only an application
            // that had accepted the connection closes it so, a listener's
            // dropped connection is reset, and one it took late has the
            // bytes by then; skype.pcap 46, its FIN 20 s on acknowledging
            // none of the client's data: the path lost them.)
            let resent_from = here.iter().map(|(_, r)| r.seq).next();
            let server_closed = f.timeline.iter().any(|p| {
                p.dir != sender
                    && p.flags.fin()
                    && p.ack_set
                    && resent_from.is_some_and(|s| seq::le(p.ack, s))
            });
            let unopened = sender == Direction::ClientToServer
                && f.report
                    .handshake
                    .syn_ack_frame
                    .is_some_and(|sa| f.record(sa).is_some())
                && f.report.handshake.tfo.is_none()
                && !server_closed
                && here
                    .iter()
                    .all(|(_, r)| server_spoke.is_none_or(|s| r.frame < s));
            let followed = here.first().and_then(|(_, r)| loss_followers(f, r));
            // The first duplicate ACK is evidence: what followed the hole
            // arrived (alexa-app.pcapng 40).
            if let Some(dup) = followed.and_then(|l| l.first_duplicate) {
                if !y.frames.contains(&dup) {
                    y.frames.push(dup);
                    y.frames.sort_unstable();
                }
            }
            y.detail = Detail::RtoStall {
                sender,
                stalls: here.len() as u32,
                unanswered,
                unopened,
                heard_elsewhere: heard_elsewhere(f, &here),
                sent_elsewhere: sent_elsewhere(f, &here),
                deaf,
                gave_up,
                kernel_gave_up,
                resent_after_giving_up,
                peer_held: peer_held(f, &here),
                held: None,
                quiet_before_ms: quiet_before(f, &here),
                followed,
                stalled_elsewhere: f.stalled_elsewhere.filter(|_| unopened),
                after_lost_copy_ms: here
                    .iter()
                    .filter(|(w, _)| {
                        f.record(w.from_frame)
                            .is_some_and(|p| p.dir == sender && p.len > 0 && p.retransmission)
                    })
                    .map(|(w, _)| w.ms)
                    .sum(),
                nothing_heard: unheard_while_stalled(f, sender, &here),
            };
            y.display_filter = f.filter_frames(&y.frames);
            y.waits = here.iter().map(|(w, _)| *w).collect();
            out.push(y);
        }
        held_stalls(f, sender, &mut held, out);
    }
}

/// Whether the close `r` that ended the stall's last wait `w` was the
/// sender's kernel giving up: an RST (no FIN before it) a backoff
/// interval after the last re-send, as long as the interval before it or
/// up to twice that (the timer firing once more), after three timer
/// re-sends or more. BSD's and macOS's `tcp_timer_rexmt` drops the
/// connection past TCP_MAXRXTSHIFT (12) re-sends, and `tcp_drop` sends
/// an RST; an application closes at any moment, and with a FIN unless it
/// aborts (nDPI's skype.pcap 3, judged in session 85: twelve copies of a
/// ClientHello, the RST 6.69 s after the last, the backoff's 6.70 s).
fn kernel_reset(stalls: &[&(Wait, &SegmentRecord)], w: &Wait, r: &SegmentRecord) -> bool {
    let timers = stalls.iter().filter(|(x, _)| x.to_frame != r.frame).count();
    let before = stalls.iter().find(|(x, _)| x.to_frame == w.from_frame);
    r.flags.rst()
        && !r.flags.fin()
        && timers >= 3
        && before.is_some_and(|(x, _)| x.ms * 0.9 <= w.ms && w.ms <= x.ms * 2.2)
}

/// What followed the lost segment the timer re-sent as `r` (its first
/// copy the capture holds) until that re-send: the sender's data segments
/// and the receiver's duplicate ACKs of the hole (pure ACKs acknowledging
/// up to `r`, after the first that did: that one acknowledged what came
/// before). Fast retransmit needs three (RFC 5681); fewer came where
/// nothing followed (a tail), too little followed, or what followed was
/// lost too (a burst: nDPI's alexa-app.pcapng 30 and 66, judged in
/// session 85, had read "too few packets followed the loss" behind five
/// segments and behind a lost early re-send). None where the capture
/// holds no earlier copy.
fn loss_followers(f: &Facts<'_>, r: &SegmentRecord) -> Option<crate::model::LossFollowers> {
    let first = original(f.timeline, r)?;
    let between = f.between(first.frame + 1, r.frame);
    let segments = between
        .iter()
        .filter(|x| x.dir == r.dir && x.len > 0 && !x.probe && seq::lt(r.seq, x.seq))
        .count() as u32;
    let resent_before = between
        .iter()
        .find(|x| x.dir == r.dir && x.len > 0 && x.retransmission && x.seq == r.seq)
        .map(|x| x.frame);
    // The first segment of the receiver's to acknowledge up to the hole,
    // pure ACK or data (its own answer carrying the ACK: nDPI's
    // alexa-app.pcapng 40, judged in session 88, a server's Finished
    // before the lost request), acknowledged what came before it; the
    // pure ACKs of the hole after it are duplicates. (That first one
    // may have come before the lost copy left.)
    let acks_up_to_hole =
        |x: &SegmentRecord| x.dir != r.dir && x.ack_set && x.ack == r.seq && !x.flags.syn();
    let duplicate = |x: &SegmentRecord| acks_up_to_hole(x) && x.len == 0 && !x.flags.fin();
    let mut first_seen = f
        .between(0, first.frame + 1)
        .iter()
        .rev()
        .take(64)
        .any(acks_up_to_hole);
    let mut duplicate_acks = 0;
    let mut first_duplicate = None;
    for x in between.iter().filter(|x| acks_up_to_hole(x)) {
        if first_seen && duplicate(x) {
            duplicate_acks += 1;
            first_duplicate = first_duplicate.or(Some(x.frame));
        }
        first_seen = true;
    }
    // Everything before the lost bytes acknowledged by the re-send (the
    // SYN-ACK's ACK too, for a connection's first data), nothing after
    // them sent: one segment in flight.
    let alone_in_flight = segments == 0
        && f.between(0, r.frame)
            .iter()
            .rev()
            .any(|x| x.dir != r.dir && x.ack_set && seq::le(r.seq, x.ack));
    Some(crate::model::LossFollowers {
        segments,
        duplicate_acks,
        first_duplicate,
        alone_in_flight,
        resent_before,
    })
}

/// The timer's needless re-send `r` (after the sender's previous segment
/// `p`, `silence` before it on its clock), when its original was held
/// past the timer: the wait from the original to the receiver's first
/// acknowledgment of its bytes, beyond the round trip, and what held it.
/// Not a re-send released by an ACK (recovery, not a timer), nor a hold
/// a delayed ACK could explain: RFC 1122 lets a receiver hold its ACK
/// for up to half a second (Windows' TcpDelAckTicks can be set that
/// high; 200 ms is the common stacks' default, and a receiver's 200 ms
/// racing a sender's 200 ms minimum timer is the common needless re-send:
/// nDPI's 1kxun 7 and 13, acknowledged 202-207 ms beyond the round trip).
fn held_past_timer(
    f: &Facts<'_>,
    p: &SegmentRecord,
    r: &SegmentRecord,
    silence: i64,
    rto_floor: i64,
) -> Option<(Wait, HeldOriginal)> {
    if !(rto_floor..=RTO_MAX_NS).contains(&silence) {
        return None;
    }
    let t = f.on_clock_of(r.dir, r);
    if releasing_ack(f, p, r, t, false).is_some() || beyond_repaired_head(f, p, r).is_some() {
        return None;
    }
    let proof = arrival_proof(f, r)?;
    let first = original(f.timeline, r)?;
    // The timer's first re-send of the bytes: a later one's proof says
    // an earlier copy arrived, not which (alexa-app's 91, the original
    // lost, the second re-send D-SACKed).
    if f.between(first.frame + 1, r.frame).iter().any(|x| {
        x.dir == r.dir && x.retransmission && seq::lt(x.seq, r.end) && seq::lt(r.seq, x.end)
    }) {
        return None;
    }
    let after = f.timeline.partition_point(|x| x.frame <= first.frame);
    let ack = f.timeline[after..]
        .iter()
        .find(|x| x.dir != r.dir && x.ack_set && seq::le(r.end, x.ack))?;
    // Not where the path held the sender's segments out of order in that
    // time (an original overtaken: send_order.rs): the receiver's ACK
    // waited for the hole it filled late, and that wait is `reordering`'s
    // (nDPI's google_ssl 0: a flight's segments 8 and 10 held 0.3 and 1 s
    // behind the ones sent after them).
    if f.between(first.frame, ack.frame)
        .iter()
        .any(|x| x.dir == r.dir && x.overtaken)
    {
        return None;
    }
    let held = f.on_clock_of(r.dir, ack)
        - f.on_clock_of(r.dir, first)
        - f.rtt_ns.filter(|&rtt| rtt > 0)?;
    (held >= super::causality::MAX_ACK_DELAY_NS).then(|| {
        let wait = Wait {
            from_frame: first.frame,
            to_frame: ack.frame,
            release_frame: None,
            ms: held as f64 / 1e6,
        };
        let held = HeldOriginal {
            original_frame: first.frame,
            resend_frame: r.frame,
            ack_frame: ack.frame,
            proof,
        };
        (wait, held)
    })
}

/// One `rto_stall` per phase for `sender`'s needless re-sends whose
/// originals the path held past its timer ([`held_past_timer`]): each
/// cites the original, the re-send, the acknowledgment and what proves
/// the original arrived.
fn held_stalls(
    f: &Facts<'_>,
    sender: Direction,
    held: &mut Vec<(Wait, HeldOriginal)>,
    out: &mut Vec<Finding>,
) {
    // Holds that overlap (a flight's segments held together: nDPI's
    // google_ssl 0) are one wait: each counts only the time the ones
    // before it had not, on the sender's clock, from a round trip after
    // its original left to its acknowledgment.
    let mut spans: Vec<(i64, i64, usize)> = held
        .iter()
        .enumerate()
        .filter_map(|(i, (w, _))| {
            let end = f.on_clock_of(sender, f.record(w.to_frame)?);
            Some((end - (w.ms * 1e6).round() as i64, end, i))
        })
        .collect();
    spans.sort_unstable();
    let mut covered = i64::MIN;
    for (start, end, i) in spans {
        held[i].0.ms = (end - start.max(covered)).max(0) as f64 / 1e6;
        covered = covered.max(end);
    }
    held.retain(|(w, _)| w.ms > 0.0);
    for (phase, here) in by_phase(f, held, |(w, _)| w.to_frame) {
        let mut y = f.finding(FindingKind::RtoStall, Some(phase));
        for (_, h) in &here {
            let proof = match h.proof {
                ArrivalProof::EachCopyAcknowledged { duplicate_frame }
                | ArrivalProof::SecondCopyAcknowledged { duplicate_frame } => Some(duplicate_frame),
                ArrivalProof::ReportedTwice { dsack_frame } => Some(dsack_frame),
                _ => None,
            };
            let new: Vec<u64> = [h.original_frame, h.resend_frame, h.ack_frame]
                .into_iter()
                .chain(proof)
                .filter(|frame| !y.frames.contains(frame))
                .collect();
            if y.frames.len() + new.len() > STALL_FRAMES_CITED {
                break;
            }
            y.frames.extend(new);
        }
        y.frames.sort_unstable();
        y.frames.dedup();
        y.waits = here.iter().map(|(w, _)| *w).collect();
        y.cost_ms = y.waits.iter().map(|w| w.ms).sum();
        y.confidence = 0.9;
        y.detail = Detail::RtoStall {
            sender,
            stalls: here.len() as u32,
            unanswered: false,
            unopened: false,
            heard_elsewhere: None,
            sent_elsewhere: None,
            deaf: None,
            gave_up: None,
            kernel_gave_up: false,
            resent_after_giving_up: false,
            peer_held: None,
            held: here.first().map(|(_, h)| *h),
            quiet_before_ms: 0.0,
            followed: None,
            stalled_elsewhere: None,
            after_lost_copy_ms: 0.0,
            nothing_heard: None,
        };
        y.display_filter = f.filter_frames(&y.frames);
        out.push(y);
    }
}

/// The newest server data the client received on another of its
/// connections while the timer's re-sends `stalls` went unanswered (after
/// the first stall began, by the last re-send): its link was up, so what
/// dropped this connection's packets did not drop all of the client's
/// (nDPI's skype.pcap 37: Dropbox's connection swapped data mid-stall).
/// Its `tcp.stream` and frame.
fn heard_elsewhere(f: &Facts<'_>, stalls: &[&(Wait, &SegmentRecord)]) -> Option<(u64, u64)> {
    let began = stall_began(f, stalls)?;
    f.heard_elsewhere_since(began, |resend| {
        stalls.iter().any(|(_, r)| r.frame == resend)
    })
}

/// The longest the connection was quiet (no packet either way) before
/// its first stall began, in ms.
fn quiet_before(f: &Facts<'_>, stalls: &[&(Wait, &SegmentRecord)]) -> f64 {
    let Some(began) = stalls
        .first()
        .and_then(|(w, _)| f.record(w.from_frame))
        .map(|r| r.ts_ns)
    else {
        return 0.0;
    };
    let times = f
        .timeline
        .iter()
        .map(|r| r.ts_ns)
        .take_while(|&t| t <= began);
    let mut quiet = 0i64;
    let mut last: Option<i64> = None;
    for t in times {
        if let Some(l) = last {
            quiet = quiet.max(t - l);
        }
        last = Some(last.map_or(t, |l| l.max(t)));
    }
    quiet as f64 / 1e6
}

/// The newest acknowledgment, by a server, of data the client sent on
/// another of its connections after the first of the timer's re-sends
/// `stalls` began (captured by the last re-send), as many bytes at once
/// as the largest segment re-sent where that was larger than
/// 536 bytes (any path carries that): what the client sent got through
/// then, its uplink was up (nDPI's alexa-app 110: only small segments
/// acknowledged elsewhere while the client's full-size ones to two other
/// servers were being re-sent too: its uplink, not a box matching this
/// flow). Its `tcp.stream`, frame, and whether it was to this
/// connection's server address and port, one of which is taken first
/// (skype.pcap 72: stream 77, to the same server and port, acknowledged
/// throughout: no filter of the application or the port, but of this
/// connection's state).
fn sent_elsewhere(f: &Facts<'_>, stalls: &[&(Wait, &SegmentRecord)]) -> Option<(u64, u64, bool)> {
    let began = stall_began(f, stalls)?;
    // (Segments that fit any path, 536 bytes or less, need no size
    // matched: a 5-byte message's acknowledgment shows the way out of an
    // 8-byte one's (skype_no_unknown.pcap 72).)
    let largest = stalls.iter().map(|(_, r)| r.len).max()?;
    let least = if largest <= super::MIN_PATH_MSS {
        1
    } else {
        largest
    };
    let server = f.report.server;
    f.acked_at_resends
        .iter()
        .filter(|(resend, d)| {
            d.sent_ns > began && d.bytes >= least && stalls.iter().any(|(_, r)| r.frame == *resend)
        })
        .map(|(_, d)| (d, d.server == server.ip && d.port == server.port))
        // (One to the same server and port first: it says more.)
        .max_by_key(|(d, same)| (*same, d.ts_ns))
        .map(|(d, same)| (d.stream, d.frame, same))
}

/// The peer's first packet after the last of the timer's re-sends
/// `stalls` that acknowledged its bytes in sequence (a copy got through,
/// and the peer still held the connection: nDPI's skype_no_unknown.pcap
/// 36, after 12 s of copies lost, the server's FIN acknowledged the last
/// copy one round trip after it, its sequence number past 8 bytes of its
/// own the client never received), or that carried data or a FIN,
/// whatever it acknowledged: a peer that had lost the connection answers
/// with a RST, and only one that held it sends on it or closes it so
/// (skype_no_unknown 8: the server's FIN and its own re-sends after the
/// client's stall, acknowledging none of it; skype 46: its FIN 20 s on).
fn peer_held(f: &Facts<'_>, stalls: &[&(Wait, &SegmentRecord)]) -> Option<u64> {
    let last = stalls.iter().map(|(_, r)| *r).max_by_key(|r| r.frame)?;
    f.timeline[f.timeline.partition_point(|r| r.frame <= last.frame)..]
        .iter()
        .find(|r| {
            r.dir != last.dir
                && !r.flags.rst()
                && ((r.ack_set && seq::le(last.end, r.ack)) || r.len > 0 || r.flags.fin())
        })
        .map(|r| r.frame)
}

/// Whether `r` sends again data its SYN carried that the server's SYN-ACK
/// did not acknowledge (TCP Fast Open rejected: tfo.rs). The kernel
/// re-sends refused SYN data as soon as the SYN-ACK arrives: nothing was
/// lost, and the wait is `tfo_rejected`'s.
fn refused_syn_data(f: &Facts<'_>, r: &SegmentRecord) -> bool {
    let handshake = &f.report.handshake;
    if !handshake
        .tfo
        .as_ref()
        .is_some_and(|t| t.outcome == crate::model::TfoOutcome::Rejected)
    {
        return false;
    }
    handshake
        .syn_frame
        .and_then(|s| f.record(s))
        .is_some_and(|syn| syn.dir == r.dir && seq::le(syn.seq, r.seq) && seq::lt(r.seq, syn.end))
}
