//! The server's own pace: which of its data segments left when it wrote
//! them, not when the network let them go. A streamed response
//! (server-sent events, a model's tokens, a feed's ticks) is paced by its
//! writer: the ledger takes the pauses before such segments into the
//! transfer's ideal (the server had nothing to send), and Nagle's
//! detector takes none of them for a hold.
//!
//! A segment left as written when nothing could have held it:
//! - it begins a tick of the server's own timer (server_think_time.rs's
//!   `Ticks`: messages a whole number of one period apart) and that timer
//!   runs apart from the ACKs: most of its ticks left at no ACK's arrival.
//!   A sender whose every message waits for an ACK (Nagle behind a
//!   delayed ACK) keeps the ACKs' rhythm, whatever the writer's; one
//!   whose ticks mostly do not, and one tick that does, was on time, not
//!   held (its hold, from its writing to the ACK, was nothing).
//! - or the server runs without Nagle (nagle.rs: a small segment of its
//!   sent while an earlier small one was unacknowledged, which Nagle never
//!   does), and all it sent in the round trip and half a second before
//!   the segment (a queue as long as the ledger lets a path's round trip
//!   grow, `ledger::SERVER_IDLE_MIN_NS`) was under 8 MSS, no congestion
//!   window from an initial window of 10 down, and left a full segment of
//!   the client's last window free: no ACK was awaited, whatever the
//!   ACKs' true arrival times. Only from the segment that shows Nagle off
//!   on: before it the sender may have run it.
//!
//! Not a detector: it names nothing, it tells the others which waits were
//! the writer's.

use std::collections::VecDeque;

use super::Facts;
use crate::model::Direction;

/// The most a sender may have had out, over the span a queue could hide
/// an ACK, and still be held by no congestion window: nagle.rs's bound.
const WINDOW_FREE_MSS: u64 = 8;

/// How much longer than the handshake's round trip an ACK may have taken
/// to reach the server (a queue on the path): the ledger's bound for a
/// server's own pause.
const QUEUE_NS: i64 = 500_000_000;

/// The server's data segments (their frames, in order) that left when the
/// server wrote them (module docs).
pub fn sent_as_written(f: &Facts<'_>) -> Vec<u64> {
    let server = Direction::ServerToClient;
    let Some(rtt) = f.rtt_ns.filter(|r| *r > 0) else {
        return Vec::new();
    };
    let mut frames = Vec::new();
    if let Some(ticks) = independent_ticks(f) {
        frames.extend(
            f.timeline
                .iter()
                .filter(|r| r.dir == server && r.len > 0 && r.new_data)
                .filter(|r| ticks.binary_search(&r.ts_ns).is_ok())
                .map(|r| r.frame),
        );
    }
    let events = f.new_data_view(server);
    let mss = f.mss(server);
    if let Some(from) = super::nagle::nagle_off_from(f, server, events, mss) {
        let span = rtt + QUEUE_NS;
        let bound = WINDOW_FREE_MSS * mss as u64;
        let mut recent: VecDeque<(i64, u64)> = VecDeque::new();
        let mut recent_bytes = 0u64;
        let mut window: Option<u64> = None;
        for &(t, r) in events {
            if r.dir != server {
                if let Some(edge) = f.window_edge(r) {
                    window = Some(edge.saturating_sub(r.ack as u64));
                }
                continue;
            }
            while let Some(&(u, len)) = recent.front() {
                if t - u <= span {
                    break;
                }
                recent_bytes -= len;
                recent.pop_front();
            }
            if r.frame >= from
                && recent_bytes < bound
                && window.is_some_and(|w| recent_bytes + mss as u64 <= w)
            {
                frames.push(r.frame);
            }
            recent.push_back((t, r.len as u64));
            recent_bytes += r.len as u64;
        }
    }
    frames.sort_unstable();
    frames.dedup();
    frames
}

/// The starts of the server's timer's ticks (its clock), when the timer
/// runs apart from the ACKs (module docs): fewer than half of them left
/// the moment a client ACK arrived.
pub(super) fn independent_ticks<'f>(f: &'f Facts<'_>) -> Option<&'f [i64]> {
    let server = Direction::ServerToClient;
    let ticks = super::server_think_time::server_ticks(f)?.at();
    let mut released = 0usize;
    let mut last_ack: Option<(i64, u32)> = None;
    for &(t, r) in f.new_data_view(server) {
        if r.dir != server {
            if r.ack_set && last_ack.is_none_or(|(_, a)| rttdoc_analyze::seq::lt(a, r.ack)) {
                last_ack = Some((t, r.ack));
            }
            continue;
        }
        if ticks.binary_search(&r.ts_ns).is_ok()
            && last_ack.is_some_and(|(ta, _)| f.released_by(server, t, ta))
        {
            released += 1;
        }
    }
    (released * 2 < ticks.len()).then_some(ticks)
}
