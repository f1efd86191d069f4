//! A sender's own pace: which of its data segments left when it wrote
//! them, not when the network let them go. A streamed response
//! (server-sent events, a model's tokens, a feed's ticks) is paced by its
//! writer, and so is an upload read from a pipe: the ledger takes the
//! pauses before such segments into the transfer's or the request's
//! ideal (the sender had nothing to send), and Nagle's detector takes no
//! wait that ends at a server's tick for a hold.
//!
//! A segment left as written when nothing could have held it:
//! - (the server's) it begins a tick of the server's own timer
//!   (server_think_time.rs's `Ticks`: messages a whole number of one
//!   period apart, most of them leaving at no ACK's arrival): a tick that
//!   left as an ACK arrived was on time, not held (its hold, from its
//!   writing to the ACK, was nothing).
//! - or the sender runs without Nagle (nagle.rs: a small segment of its
//!   sent while an earlier small one was unacknowledged, which Nagle never
//!   does), and all it sent in the round trip and half a second before
//!   the segment (a queue as long as the ledger lets a path's round trip
//!   grow, `ledger::SERVER_IDLE_MIN_NS`) was under 8 MSS, no congestion
//!   window from an initial window of 10 down, and left a full segment
//!   free in every window the peer showed over that span: no ACK was
//!   awaited, whatever the ACKs' true arrival times. And the segment is
//!   at most a quarter of one: away from the sender, a larger one's
//!   arrival is spaced from the last by its own time on a slow link
//!   (1098 bytes at 1.8 Mbit/s are 4.9 ms, a bulk flight's spacing in
//!   PcapPlusPlus's `four_ipv6_http_streams.pcap`); a quarter segment's
//!   stays under the 2 ms excess floor on any link of 1.5 Mbit/s or
//!   more. Only from the segment that shows Nagle off on: before it the
//!   sender may have run it.
//! - or, captured at the sender itself, it left with no packet of the
//!   peer's just before it (within the kernel's turnaround,
//!   `Facts::released_by`): an ACK or a window update releases what it
//!   releases as the kernel takes it in, so what left later was written
//!   then, Nagle or not, and its time since the last is no link's (there
//!   is none between the sender and the tap). The same bounds on what was
//!   in flight and the windows keep a paced bulk sender out.
//!
//! - or it is a Nagle hold a later hold continues (nagle.rs: a chain of
//!   holds costs its last alone; the pauses before the others are the
//!   writer's as far as the peer, waiting for the chain's end, goes).
//!
//! Not a detector: it names nothing, it tells the others which waits were
//! the writer's.

use std::collections::VecDeque;

use super::Facts;
use crate::model::Direction;
use rttdoc_analyze::SegmentRecord;

/// The most a sender may have had out, over the span a queue could hide
/// an ACK, and still be held by no congestion window: nagle.rs's bound.
const WINDOW_FREE_MSS: u64 = 8;

/// How much longer than the handshake's round trip an ACK may have taken
/// to reach the server (a queue on the path): the ledger's bound for a
/// server's own pause.
const QUEUE_NS: i64 = 500_000_000;

/// The data segments of `sender` (their frames, in order) that left when
/// it wrote them (module docs).
pub fn sent_as_written(f: &Facts<'_>, sender: Direction) -> Vec<u64> {
    let Some(rtt) = f.rtt_ns.filter(|r| *r > 0) else {
        return Vec::new();
    };
    let mut frames = Vec::new();
    if sender == Direction::ServerToClient {
        if let Some(ticks) = super::server_think_time::server_ticks(f).map(|t| t.at()) {
            frames.extend(
                f.timeline
                    .iter()
                    .filter(|r| r.dir == sender && r.len > 0 && r.new_data)
                    .filter(|r| ticks.binary_search(&r.ts_ns).is_ok())
                    .map(|r| r.frame),
            );
        }
    }
    let mss = f.mss(sender);
    // Captured at the sender, what an ACK or a window released is seen
    // leaving with it (within the kernel's turnaround): a segment that
    // did not was written then, Nagle or not. There the capture's order is
    // the sender's, and no view need be sorted.
    if f.captured_at(sender) {
        let events = f
            .timeline
            .iter()
            .filter(|r| {
                if r.dir == sender {
                    r.len > 0 && r.new_data && !r.flags.syn()
                } else {
                    r.ack_set
                }
            })
            .map(|r| (f.on_clock_of(sender, r), r));
        written(f, (sender, 0, true), (rtt, mss), events, &mut frames);
    } else {
        let events = f.new_data_view(sender);
        if let Some(from) = super::nagle::nagle_off_from(f, sender, events, mss) {
            written(
                f,
                (sender, from, false),
                (rtt, mss),
                events.iter().copied(),
                &mut frames,
            );
        }
    }
    // A held segment a later hold continues left when its release said,
    // but what the peer waited for, the chain's end, only the last hold
    // delayed: the time before the others is the writer's (nagle.rs).
    frames.extend(super::nagle::continued_holds(f, sender, rtt));
    frames.sort_unstable();
    frames.dedup();
    frames
}

/// The segments of `sender` from frame `from` on, among `events` (its new
/// data and the peer's ACKs, on its clock, in its order), that nothing
/// held (module docs), put in `frames`; `own_host` when captured at the
/// sender (released by no peer packet, any size).
fn written<'r>(
    f: &Facts<'_>,
    (sender, from, own_host): (Direction, u64, bool),
    (rtt, mss): (i64, u32),
    events: impl Iterator<Item = (i64, &'r SegmentRecord)>,
    frames: &mut Vec<u64>,
) {
    let span = rtt + QUEUE_NS;
    let bound = WINDOW_FREE_MSS * mss as u64;
    let mut recent: VecDeque<(i64, u64)> = VecDeque::new();
    let mut recent_bytes = 0u64;
    // The peer's windows over the span, smallest first from each point on
    // (a sliding minimum), and its last.
    let mut windows: VecDeque<(i64, u64)> = VecDeque::new();
    let mut window: Option<u64> = None;
    let mut peer_last: Option<i64> = None;
    for (t, r) in events {
        if r.dir != sender {
            peer_last = Some(t);
            if let Some(edge) = f.window_edge(r) {
                let w = edge.saturating_sub(r.ack as u64);
                while windows.back().is_some_and(|&(_, b)| b >= w) {
                    windows.pop_back();
                }
                windows.push_back((t, w));
                window = Some(w);
            }
            continue;
        }
        while recent.front().is_some_and(|&(u, _)| t - u > span) {
            recent_bytes -= recent.pop_front().map_or(0, |(_, len)| len);
        }
        while windows.front().is_some_and(|&(u, _)| t - u > span) {
            windows.pop_front();
        }
        // The smallest window the peer showed over the span, or the one in
        // effect through it: a window that was ever short of a segment
        // more may have held the sender, and released it when it opened,
        // whenever that news came.
        let smallest = windows
            .front()
            .map(|&(_, w)| w)
            .into_iter()
            .chain(window)
            .min();
        let released = own_host && peer_last.is_some_and(|ta| f.released_by(sender, t, ta));
        if r.frame >= from
            && !released
            && (own_host || r.len as u64 * 4 <= mss as u64)
            && recent_bytes < bound
            && smallest.is_some_and(|w| recent_bytes + mss as u64 <= w)
        {
            frames.push(r.frame);
        }
        recent.push_back((t, r.len as u64));
        recent_bytes += r.len as u64;
    }
}
