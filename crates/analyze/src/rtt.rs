//! Path RTT and capture vantage.
//!
//! The best RTT sample is the TCP handshake: from the client's SYN to its
//! ACK of the SYN-ACK is one full round trip wherever the capture was taken
//! (Wireshark's `tcp.analysis.initial_rtt`). Without a handshake, rttdoc
//! times data against the ACK that covers it, and TSval against the TSecr
//! that echoes it. Each such sample only spans the part of the path on the
//! far side of the capture point from the sender, so the two directions are
//! combined: at an endpoint one direction's samples are ~0 and the other's
//! are the RTT; in the middle each holds one part and they add up.

use std::collections::VecDeque;

use crate::model::{Direction, RttSource, Vantage};
use crate::seq;

const MAX_OUTSTANDING: usize = 32;

/// The longest a receiver may hold the ACK of new data waiting for data of
/// its own to carry it (RFC 9293 3.8.6.3; Linux holds at most 200 ms).
const ACK_DELAY_MAX_NS: i64 = 500_000_000;

#[derive(Debug, Default)]
pub struct RttSamples {
    outstanding: [VecDeque<(u32, i64)>; 2],
    data_min: [Option<i64>; 2],
    tsvals: [VecDeque<(u32, i64)>; 2],
    /// Each direction's highest TSval taken into `tsvals`: a tick's first
    /// segment is its time, whether or not an echo took it out since (a
    /// coarse clock stamps many segments alike: a 10 Hz sender's tick
    /// lasts 100 ms, and an echo matched to its last segment, not its
    /// first, times nothing; nDPI's bitcoin.pcap 2, 0.25 ms on a 30 ms
    /// path).
    highest_tsval: [Option<u32>; 2],
    ts_min: [Option<i64>; 2],
    /// Like `ts_min`, from echoes the echoed segment did not prompt (see
    /// `on_timestamps`): each still bounds the round trip from above (the
    /// echo left after the echoed segment arrived), but may hold any
    /// amount of idle time, so it only sharpens a direction that has a
    /// prompted sample (a keep-alive's echo of an ACK five minutes old
    /// is no round trip).
    unprompted_min: [Option<i64>; 2],
    /// Like `data_min`, answered by pure ACKs only: a host's ACK carries
    /// no application think time (a request's answer does), so these place
    /// the capture when there was no handshake to place it by.
    pure_ack_min: [Option<i64>; 2],
}

fn keep_min(slot: &mut Option<i64>, sample: i64) {
    if sample >= 0 {
        *slot = Some(slot.map_or(sample, |m| m.min(sample)));
    }
}

impl RttSamples {
    /// Each direction's samples become the other's (the connection's
    /// roles were swapped).
    pub fn swap_directions(&mut self) {
        self.outstanding.swap(0, 1);
        self.data_min.swap(0, 1);
        self.tsvals.swap(0, 1);
        self.highest_tsval.swap(0, 1);
        self.ts_min.swap(0, 1);
        self.unprompted_min.swap(0, 1);
        self.pure_ack_min.swap(0, 1);
    }

    /// Empty, in the room `old`'s queues had.
    pub fn keep_room_of(&mut self, old: &mut RttSamples) {
        let queues = self.outstanding.iter_mut().chain(&mut self.tsvals);
        let old_queues = old.outstanding.iter_mut().chain(&mut old.tsvals);
        for (q, old) in queues.zip(old_queues) {
            *q = std::mem::take(old);
            q.clear();
        }
    }

    /// New data sent in `dir`, ending at `end_seq`.
    pub fn on_data(&mut self, dir: Direction, end_seq: u32, ts_ns: i64) {
        let q = &mut self.outstanding[dir.index()];
        if q.len() < MAX_OUTSTANDING {
            first_room(q);
            q.push_back((end_seq, ts_ns));
        }
    }

    /// When the oldest data sent in `dir` and not yet acknowledged left
    /// (as far as its samples keep it).
    pub fn oldest_outstanding(&self, dir: Direction) -> Option<i64> {
        self.outstanding[dir.index()].front().map(|&(_, sent)| sent)
    }

    /// A retransmission in `dir`: samples for its data would be ambiguous (Karn).
    pub fn on_retransmission(&mut self, dir: Direction) {
        self.outstanding[dir.index()].clear();
    }

    /// An ACK sent in `dir` covers data sent the other way; `pure`: it
    /// carries nothing else (no data, SYN, FIN or RST). Returns when the
    /// newest data it newly covers was sent, where it covers any (not a
    /// retransmission's: Karn).
    #[inline]
    pub fn on_ack(&mut self, dir: Direction, ack: u32, ts_ns: i64, pure: bool) -> Option<i64> {
        let r = dir.reverse().index();
        let mut newest = None;
        while let Some(&(end, sent)) = self.outstanding[r].front() {
            if !seq::le(end, ack) {
                break;
            }
            newest = Some(sent);
            self.outstanding[r].pop_front();
        }
        if let Some(sent) = newest {
            let sample = ts_ns - sent;
            keep_min(&mut self.data_min[r], sample);
            if pure {
                keep_min(&mut self.pure_ack_min[r], sample);
            }
        }
        newest
    }

    /// Whether the client ACKed the server's data only on its own writes:
    /// it sent no pure ACK of new data, and even its fastest answer came
    /// later than a kernel holds an ACK waiting for data to carry it. Its
    /// pure ACKs are missing from the capture (filtered out, as test
    /// captures of request/response protocols often are), and its answers
    /// are its next requests, sent when its application chose: each times
    /// that, not the path (Beats' redis_session.pcap, whose "round trip"
    /// of 1.19 s was a person's quickest next command). A server's answers
    /// are still the samples they were: a response is prompted by its
    /// request; and a client that answered faster even once was timed by
    /// the path at least then (a peer streaming data carries its ACKs on
    /// it and needs no pure ACK).
    #[inline]
    fn acks_ride_writes(&self, d: usize) -> bool {
        d == Direction::ServerToClient.index()
            && self.pure_ack_min[d].is_none()
            && self.data_min[d].is_some_and(|fastest| fastest > ACK_DELAY_MAX_NS)
    }

    /// Each direction's data/ACK minimum, where its answers timed the path.
    #[inline]
    fn data_mins(&self) -> [Option<i64>; 2] {
        std::array::from_fn(|d| self.data_min[d].filter(|_| !self.acks_ride_writes(d)))
    }

    /// The client's and the server's side of the path as their pure ACKs
    /// show them (the fastest each ACKed the other's data, from the capture
    /// point): at an endpoint that host's own turnaround is ~0 and the
    /// other's is the round trip. None for a side that sent no pure ACK.
    pub fn pure_ack_sides(&self) -> (Option<i64>, Option<i64>) {
        let client = self.pure_ack_min[Direction::ServerToClient.index()];
        let server = self.pure_ack_min[Direction::ClientToServer.index()];
        (client, server)
    }

    /// TCP timestamps on a segment sent in `dir`; `ack`: its TSecr is
    /// valid; `prompted`: the echoed segment prompted it, so the time
    /// between the two is a sample of the round trip (see
    /// `Connection::observe`); else only a bound (`unprompted_min`).
    #[inline]
    pub fn on_timestamps(
        &mut self,
        dir: Direction,
        (tsval, tsecr): (u32, u32),
        ack: bool,
        prompted: bool,
        ts_ns: i64,
    ) {
        let d = dir.index();
        let q = &mut self.tsvals[d];
        let highest = &mut self.highest_tsval[d];
        if highest.is_none_or(|v| seq::lt(v, tsval)) {
            *highest = Some(tsval);
            if q.len() < MAX_OUTSTANDING {
                first_room(q);
                q.push_back((tsval, ts_ns));
            }
        }
        if ack && tsecr != 0 {
            let r = dir.reverse().index();
            let mut matched = None;
            while let Some(&(v, sent)) = self.tsvals[r].front() {
                if seq::lt(tsecr, v) {
                    break;
                }
                if v == tsecr {
                    matched = Some(sent);
                }
                self.tsvals[r].pop_front();
            }
            if let Some(sent) = matched {
                let slot = if prompted {
                    &mut self.ts_min[r]
                } else {
                    &mut self.unprompted_min[r]
                };
                keep_min(slot, ts_ns - sent);
            }
        }
    }

    /// Each direction's timestamp minimum: the prompted samples', lowered
    /// by an unprompted one only where the direction has a prompted
    /// sample of either kind (data or timestamp).
    /// (None where the client's ACKs rode on its writes: its echoes did
    /// too.)
    #[inline]
    fn ts_mins(&self) -> [Option<i64>; 2] {
        std::array::from_fn(|d| {
            if self.acks_ride_writes(d) {
                return None;
            }
            let timed = self.ts_min[d].or(self.data_min[d]).is_some();
            match (self.ts_min[d], self.unprompted_min[d].filter(|_| timed)) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            }
        })
    }

    /// Smallest time seen from data (or a TSval) sent in `dir` to the other
    /// side's answer, at the capture point: the round trip between the
    /// capture point and the receiver, plus whatever the receiver waited.
    #[inline]
    pub fn min_for(&self, dir: Direction) -> Option<i64> {
        self.min_for_sourced(dir).map(|(ns, _)| ns)
    }

    /// Like [`min_for`](Self::min_for), named by the kind of sample that
    /// gave it (a timestamp echo only where it was strictly smaller).
    #[inline]
    pub fn min_for_sourced(&self, dir: Direction) -> Option<(i64, RttSource)> {
        pick(self.data_mins()[dir.index()], self.ts_mins()[dir.index()])
    }

    /// RTT from samples of both directions (each side of the capture
    /// point timed, so the result cannot be one side's turnaround alone):
    /// the smaller of the data/ACK and the timestamp estimate.
    pub fn two_sided_estimate(&self) -> Option<(i64, RttSource)> {
        let both = |a: [Option<i64>; 2]| match a {
            [Some(x), Some(y)] => combine(Some(x), Some(y)),
            _ => None,
        };
        pick(both(self.data_mins()), both(self.ts_mins()))
    }

    /// The smallest sample of any kind, for thresholds while tracking.
    pub fn best_ns(&self) -> Option<i64> {
        let both = |a: [Option<i64>; 2]| combine(a[0], a[1]);
        match (both(self.data_mins()), both(self.ts_mins())) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// RTT from data/ACK or timestamp samples, for connections without a
    /// usable handshake: a [two-sided](Self::two_sided_estimate) one when
    /// there is one, else what one direction's samples give (the whole
    /// round trip only when that direction's receiver is the far side of
    /// the capture point; at the near side it is that host's turnaround).
    pub fn estimate(&self) -> Option<(i64, RttSource)> {
        self.two_sided_estimate().or_else(|| {
            let [ts0, ts1] = self.ts_mins();
            let [data0, data1] = self.data_mins();
            pick(combine(data0, data1), combine(ts0, ts1))
        })
    }
}

/// The smaller of a data/ACK and a timestamp estimate, named by source.
fn pick(data: Option<i64>, ts: Option<i64>) -> Option<(i64, RttSource)> {
    match (data, ts) {
        (Some(d), Some(t)) if t < d => Some((t, RttSource::Timestamps)),
        (Some(d), _) => Some((d, RttSource::DataAck)),
        (None, Some(t)) => Some((t, RttSource::Timestamps)),
        (None, None) => None,
    }
}

/// Joins the two directions' minimum samples into one RTT (module docs).
fn combine(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    match (a, b) {
        (Some(a), Some(b)) => {
            let (lo, hi) = (a.min(b), a.max(b));
            Some(if lo * 4 < hi { hi } else { a + b })
        }
        (a, b) => a.or(b),
    }
}

/// Where the capture was taken, from the handshake gaps: SYN -> SYN-ACK
/// (`server_side_ns`, the path beyond the capture point towards the server)
/// and SYN-ACK -> ACK (`client_side_ns`).
pub fn vantage(server_side_ns: i64, client_side_ns: i64) -> Vantage {
    let total = server_side_ns + client_side_ns;
    if total <= 0 || server_side_ns < 0 || client_side_ns < 0 {
        return Vantage::Unknown;
    }
    // A side is "at the capture point" when its gap is the host's own
    // turnaround: under a tenth of the round trip, or on a short path under
    // a millisecond (a busy host's scheduling delay; at most a quarter).
    let own_host = (total / 10).max((total / 4).min(1_000_000));
    if client_side_ns < own_host {
        Vantage::Client
    } else if server_side_ns < own_host {
        Vantage::Server
    } else {
        Vantage::Middle
    }
}

/// Room for a short connection's samples at the first one, instead of
/// growing 4, 8, 16 (a reallocation each, per connection).
#[inline(always)]
fn first_room(q: &mut VecDeque<(u32, i64)>) {
    if q.capacity() == 0 {
        q.reserve_exact(16);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Direction::*;

    const MS: i64 = 1_000_000;

    #[test]
    fn a_busy_host_on_a_short_path_is_still_the_capture_point() {
        // 0.7 ms to answer a SYN-ACK on a 5 ms path: the client was busy.
        assert_eq!(vantage(5 * MS, 7 * MS / 10), Vantage::Client);
        // 2 ms from the client on a 5 ms path: a tap along the way.
        assert_eq!(vantage(3 * MS, 2 * MS), Vantage::Middle);
    }

    #[test]
    fn vantage_follows_the_long_gap() {
        assert_eq!(vantage(36 * MS, MS / 20), Vantage::Client);
        assert_eq!(vantage(MS / 20, 36 * MS), Vantage::Server);
        assert_eq!(vantage(20 * MS, 16 * MS), Vantage::Middle);
        assert_eq!(vantage(0, 0), Vantage::Unknown);
    }

    #[test]
    fn data_ack_at_the_client_gives_the_full_rtt() {
        let mut r = RttSamples::default();
        // client sends at 0, server ACKs at 36 ms; server data at 40 is
        // ACKed by the client 0.05 ms later.
        r.on_data(ClientToServer, 100, 0);
        r.on_ack(ServerToClient, 100, 36 * MS, true);
        r.on_data(ServerToClient, 500, 40 * MS);
        r.on_ack(ClientToServer, 500, 40 * MS + MS / 20, true);
        assert_eq!(r.estimate(), Some((36 * MS, RttSource::DataAck)));
    }

    #[test]
    fn data_ack_in_the_middle_adds_both_sides() {
        let mut r = RttSamples::default();
        r.on_data(ClientToServer, 100, 0);
        r.on_ack(ServerToClient, 100, 20 * MS, true);
        r.on_data(ServerToClient, 500, 30 * MS);
        r.on_ack(ClientToServer, 500, 46 * MS, true);
        assert_eq!(r.estimate(), Some((36 * MS, RttSource::DataAck)));
    }

    #[test]
    fn timestamp_echo_gives_samples_from_pure_acks() {
        let mut r = RttSamples::default();
        r.on_timestamps(ClientToServer, (1000, 0), false, true, 0);
        r.on_timestamps(ServerToClient, (7000, 1000), true, true, 30 * MS);
        r.on_timestamps(ClientToServer, (1001, 7000), true, true, 30 * MS + MS / 10);
        assert_eq!(r.estimate(), Some((30 * MS, RttSource::Timestamps)));
    }

    #[test]
    fn a_coarse_clocks_tick_is_timed_from_its_first_segment() {
        // A client stamping at 10 Hz: TSval 895 on its segments at 0, 36
        // and 69 ms; the server's echoes of 895 at 36 and 69 ms, and at
        // 69.25 ms, right behind the client's third segment of the tick.
        let mut r = RttSamples::default();
        r.on_timestamps(ClientToServer, (895, 7000), true, true, 0);
        r.on_timestamps(ServerToClient, (7005, 895), true, true, 36 * MS);
        r.on_timestamps(ClientToServer, (895, 7005), true, true, 36 * MS);
        r.on_timestamps(ServerToClient, (7009, 895), true, true, 69 * MS);
        r.on_timestamps(ClientToServer, (895, 7009), true, true, 69 * MS);
        r.on_timestamps(ServerToClient, (7009, 895), true, true, 69 * MS + MS / 4);
        // One sample, from the tick's first segment: the later echoes of
        // it say nothing sooner.
        assert_eq!(r.min_for(ClientToServer), Some(36 * MS));
        // The next tick is timed again.
        r.on_timestamps(ClientToServer, (896, 7009), true, true, 100 * MS);
        r.on_timestamps(ServerToClient, (7013, 896), true, true, 130 * MS);
        assert_eq!(r.min_for(ClientToServer), Some(30 * MS));
    }

    #[test]
    fn an_echo_the_echoed_segment_did_not_prompt_is_no_sample() {
        let mut r = RttSamples::default();
        // A server's keep-alive, ACKed by the client at once; the next
        // keep-alive, five minutes on, echoes that ACK's TSval.
        r.on_timestamps(ServerToClient, (7000, 1000), true, true, 0);
        r.on_timestamps(ClientToServer, (1001, 7000), true, true, MS / 20);
        r.on_timestamps(ServerToClient, (9000, 1001), true, false, 300_000 * MS);
        assert_eq!(r.min_for(ClientToServer), None);
        // The echo is used up: a later prompted echo of the same TSval
        // (none should come) times nothing either.
        r.on_timestamps(ServerToClient, (9001, 1001), true, true, 300_001 * MS);
        assert_eq!(r.min_for(ClientToServer), None);
        assert_eq!(r.min_for(ServerToClient), Some(MS / 20));
    }

    #[test]
    fn an_unprompted_echo_sharpens_a_direction_with_a_prompted_sample() {
        let mut r = RttSamples::default();
        // The client's request, ACKed by the server 28 ms later (its
        // delayed ACK is no part of the path: the bound below is tighter).
        r.on_data(ClientToServer, 100, 0);
        r.on_timestamps(ClientToServer, (1000, 7000), true, true, 0);
        r.on_ack(ServerToClient, 100, 28 * MS, true);
        r.on_timestamps(ServerToClient, (7001, 1000), true, true, 28 * MS);
        assert_eq!(r.min_for(ClientToServer), Some(28 * MS));
        // The client's next pure ACK, echoed 20 ms on by the server's
        // next message (released by it, or written then: either way sent
        // after it arrived).
        r.on_timestamps(ClientToServer, (1005, 7001), true, true, 40 * MS);
        r.on_timestamps(ServerToClient, (7020, 1005), true, false, 60 * MS);
        assert_eq!(r.min_for(ClientToServer), Some(20 * MS));
    }

    #[test]
    fn only_pure_acks_give_a_sides_turnaround() {
        let mut r = RttSamples::default();
        // The server answers a request with data 5 ms later (think time):
        // a data/ACK sample, not a pure ACK's.
        r.on_data(ClientToServer, 100, 0);
        r.on_ack(ServerToClient, 100, 5 * MS, false);
        assert_eq!(r.pure_ack_sides(), (None, None));
        // The client ACKs that answer 0.05 ms after it arrives.
        r.on_data(ServerToClient, 500, 6 * MS);
        r.on_ack(ClientToServer, 500, 6 * MS + MS / 20, true);
        assert_eq!(r.pure_ack_sides(), (Some(MS / 20), None));
        // Swapped roles swap the sides.
        r.swap_directions();
        assert_eq!(r.pure_ack_sides(), (None, Some(MS / 20)));
    }

    #[test]
    fn one_directions_timestamps_do_not_undercut_both_directions_data() {
        let mut r = RttSamples::default();
        // Captured at the client: its request answered in 28 ms, the
        // answer acknowledged in 24 µs; only the server's TSval is echoed
        // (the client's answer's timestamps were lost): that echo is the
        // client's turnaround, not the round trip.
        r.on_data(ClientToServer, 100, 0);
        r.on_timestamps(ServerToClient, (7000, 0), true, true, 28 * MS);
        r.on_ack(ServerToClient, 100, 28 * MS, false);
        r.on_data(ServerToClient, 500, 28 * MS);
        r.on_timestamps(ClientToServer, (1001, 7000), true, true, 28 * MS + 24_000);
        r.on_ack(ClientToServer, 500, 28 * MS + 24_000, true);
        assert_eq!(r.estimate(), Some((28 * MS, RttSource::DataAck)));
    }

    #[test]
    fn a_clients_acks_riding_its_next_commands_time_no_round_trip() {
        // Captured at a server whose client's pure ACKs were filtered out:
        // each answer, sent 0.05 ms after its command, is ACKed only by the
        // next command, 1.2 s or more later.
        let mut r = RttSamples::default();
        let mut at = 0;
        for (i, pause) in [3_700, 1_200, 32_000].into_iter().enumerate() {
            let i = i as u32;
            r.on_data(ClientToServer, 100 * (i + 1), at);
            r.on_ack(ServerToClient, 100 * (i + 1), at + MS / 20, false);
            r.on_data(ServerToClient, 500 * (i + 1), at + MS / 20);
            at += MS / 20 + pause * MS;
            r.on_ack(ClientToServer, 500 * (i + 1), at, false);
        }
        // The server's answers alone time anything.
        assert_eq!(r.min_for(ServerToClient), None);
        assert_eq!(r.estimate(), Some((MS / 20, RttSource::DataAck)));
        // One pure ACK from the client, and its answers time the path
        // again (a kernel ACKs on its own within 500 ms).
        r.on_data(ServerToClient, 5000, at);
        r.on_ack(ClientToServer, 5000, at + 40 * MS, true);
        assert_eq!(r.min_for(ServerToClient), Some(40 * MS));
    }

    #[test]
    fn a_client_that_answered_within_a_delayed_ack_once_is_timed_by_it() {
        // A peer that streams its own data carries its ACKs on it: no pure
        // ACK, and its answers, as fast as the path, are the round trip
        // (a 160 ms peer here, seconds slow once).
        let mut r = RttSamples::default();
        r.on_data(ClientToServer, 100, 0);
        r.on_ack(ServerToClient, 100, MS / 10, false);
        r.on_data(ServerToClient, 500, MS);
        r.on_ack(ClientToServer, 500, 161 * MS, false);
        r.on_data(ServerToClient, 900, 200 * MS);
        r.on_ack(ClientToServer, 900, 2_200 * MS, false);
        assert_eq!(r.min_for(ServerToClient), Some(160 * MS));
        assert_eq!(r.estimate(), Some((160 * MS, RttSource::DataAck)));
    }

    #[test]
    fn acks_for_retransmitted_data_are_not_sampled() {
        let mut r = RttSamples::default();
        r.on_data(ClientToServer, 100, 0);
        r.on_retransmission(ClientToServer);
        r.on_ack(ServerToClient, 100, 1000 * MS, true);
        assert_eq!(r.estimate(), None);
    }
}
