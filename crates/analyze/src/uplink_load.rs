//! The client's uplink, read from the servers' acknowledgments of its
//! data (no timestamps needed): how long each segment the client sent
//! waited behind its own earlier packets at the slowest link of its way
//! out.
//!
//! A client's packets leave its host (the capture point, when the
//! capture is the client's) as fast as its interface lets them, then wait
//! at the slowest link on the way (a DSL or cable modem's uplink, a
//! phone's radio) to be sent on at that link's rate. The servers' ACKs of
//! a burst of the client's data (segments that left the client within
//! [`BURST_NS`] of each other) come back spaced as that link let the
//! burst through: the bytes the second of two of them acknowledges
//! beyond the first, over the time between them, is the link's rate,
//! where the second is a pure ACK (one that carries data left when the
//! server's application wrote). The client's other traffic on the link
//! between them, or a server's delayed-ACK timer (a burst's last
//! segment), slows such a sample; two ACKs bunched on the way back speed
//! it: the second fastest is taken for the link's rate, where the third
//! fastest agrees with it (within [`AGREE`]: two of the link's own
//! paces, not one and the noise around it; of the first two samples,
//! where they agree, the faster), from samples of a full
//! segment's bytes at least ([`MIN_SAMPLE_BYTES`]: fewer are a server's
//! ACK latency more than the link's sending). (PcapPlusPlus's
//! many-protocols.pcap: a browser on an uplink of about 0.8 Mbit/s, a
//! server's ACKs of back-to-back 1360-byte segments 14.3 ms apart, read
//! as 0.95 Mbit/s, the least queue; tcpflow's jpegs.cap, a modem's 0.11
//! Mbit/s, shows only in ACKs of a burst's last segment 88 ms on, which a
//! timer could have held: no rate is read there.)
//!
//! With that rate the client's packets (every connection's, its pure
//! ACKs too, each [`HEADER_BYTES`] beside its payload) fill a queue that
//! drains at the rate: a data segment's wait is what was ahead of it when
//! it left the client, plus its own sending beyond that of the small
//! packets a handshake's round trip was timed with ([`SMALL_PACKET_BYTES`]).
//! (Its request of 397 bytes, sent 18 ms after 3,000 bytes of another
//! connection's: on 0.8 Mbit/s, 14 ms behind them and 3.7 ms of its
//! own.)
//!
//! A rate read only after some of the client's requests left (stream
//! 22's request of the same capture, 0.43 s before its link's second
//! sample) still timed them: when the rate becomes known, the queue is
//! replayed over the packets logged before it, and each data segment's
//! wait kept for its connection to take ([`UplinkLoads::replayed`]).
//!
//! Bounded: [`CLIENTS`] clients, the half heard from longest ago dropped
//! beyond that; each its three fastest samples, its queue and its newest
//! [`LOGGED`] packets (about 3 KB), and the waits replayed over them.

use std::net::IpAddr;

use rustc_hash::FxHashMap;

/// Segments that left the client closer together than this are one burst.
pub const BURST_NS: i64 = 1_000_000;
/// The IPv4 and TCP headers every packet carries on the link beside its
/// payload (options and the link's own framing left out: the least).
pub const HEADER_BYTES: u64 = 40;
/// The packets a handshake's round trip was timed with (a SYN, its
/// options and headers): a larger segment takes longer on a slow link.
pub const SMALL_PACKET_BYTES: u64 = 64;
/// Rate samples over less time than this are the capture clock's noise,
/// not the link's pace (at 20 Mbit/s and more a full segment takes less:
/// its queue is below what the diagnosis counts anyway).
const MIN_SAMPLE_NS: i64 = 500_000;
/// Samples a client's rate is read from.
const MIN_SAMPLES: u32 = 2;
/// The least bytes a rate sample spans: a full segment's, nearly.
pub const MIN_SAMPLE_BYTES: u32 = 1000;
/// How far apart the second and third fastest samples may be for the
/// second to be taken for the link's rate.
const AGREE: f64 = 1.5;
/// Clients kept.
const CLIENTS: usize = 1024;

/// The client's packets' bytes kept per client to count what its link
/// sent between two of them (a busy second of a slow link's).
const LOGGED: usize = 128;

/// One client's uplink.
#[derive(Debug, Clone)]
struct Load {
    client: IpAddr,
    /// The three fastest rates sampled, bytes per nanosecond, fastest
    /// first.
    fastest: [f64; 3],
    samples: u32,
    /// Bytes queued at the link when the client last sent, and when.
    backlog: f64,
    at_ns: i64,
    /// The client's newest packets: when each left, the bytes it and
    /// all before it carried (headers too), and its frame.
    log: std::collections::VecDeque<(i64, u64, u64)>,
    /// The waits of the logged data segments sent before the rate was
    /// known, replayed when it became known: frame, wait, in frame order.
    replayed: Vec<(u64, i64)>,
    /// The rate they were replayed with.
    replayed_rate: f64,
    /// When server data last reached the client.
    arrival_ns: Option<i64>,
    /// When it was last heard from (for dropping the oldest).
    last_ns: i64,
}

impl Load {
    fn new(client: IpAddr) -> Load {
        Load {
            client,
            fastest: [0.0; 3],
            samples: 0,
            backlog: 0.0,
            at_ns: 0,
            log: std::collections::VecDeque::new(),
            replayed: Vec::new(),
            replayed_rate: f64::INFINITY,
            arrival_ns: None,
            last_ns: i64::MIN,
        }
    }

    /// The link's rate, bytes per nanosecond, once sampled enough: the
    /// second fastest sample where the third agrees with it; of the
    /// first two, where they agree, the faster (the least queue).
    fn rate(&self) -> Option<f64> {
        let [first, second, third] = self.fastest;
        match self.samples {
            n if n < MIN_SAMPLES => None,
            2 => (second * AGREE >= first).then_some(first),
            _ => (third * AGREE >= second).then_some(second),
        }
    }

    /// The bytes the client had sent up to and with its packet that left
    /// at `ts_ns`, if still logged.
    fn sent_by(&self, ts_ns: i64) -> Option<u64> {
        let i = self.log.partition_point(|&(t, _, _)| t <= ts_ns);
        (i > 0 && self.log[i - 1].0 == ts_ns).then(|| self.log[i - 1].1)
    }

    /// One packet of `bytes` joins the queue at `ts_ns`, which drains at
    /// `rate`: how long it waits (behind what was queued, and its own
    /// sending beyond a small packet's).
    fn enqueue(&mut self, ts_ns: i64, bytes: u64, rate: f64) -> i64 {
        // (A capture clock that stepped back drains nothing.)
        let drained = (ts_ns - self.at_ns).max(0) as f64 * rate;
        self.backlog = (self.backlog - drained).max(0.0);
        self.at_ns = self.at_ns.max(ts_ns);
        let ahead_ns = self.backlog / rate;
        self.backlog += bytes as f64;
        let own_ns = bytes.saturating_sub(SMALL_PACKET_BYTES) as f64 / rate;
        (ahead_ns + own_ns) as i64
    }

    /// The rate just became known: the queue is run again over the
    /// logged packets (from an empty one at the first: the least), its
    /// state left as it was after the last, and each data segment's wait
    /// kept.
    #[cold]
    fn replay(&mut self, rate: f64) {
        self.replayed.clear();
        self.replayed_rate = rate;
        let Some(&(first_ns, _, _)) = self.log.front() else {
            return;
        };
        self.backlog = 0.0;
        self.at_ns = first_ns;
        for i in 1..self.log.len() {
            let (ts_ns, total, frame) = self.log[i];
            let bytes = total - self.log[i - 1].1;
            let wait = self.enqueue(ts_ns, bytes, rate);
            if bytes > HEADER_BYTES {
                self.replayed.push((frame, wait));
            }
        }
        self.replayed.sort_unstable_by_key(|&(frame, _)| frame);
    }
}

/// A server's ACK of a burst of the client's data (see
/// [`UplinkLoads::acknowledged`]).
#[derive(Debug, Clone, Copy)]
pub struct BurstAck {
    /// When the ACK before it was captured, and when the newest of the
    /// client's data that one acknowledged left the client.
    pub before_ns: i64,
    pub before_sent_ns: i64,
    /// When this ACK was captured, and when the newest of the data it
    /// acknowledged left the client.
    pub ts_ns: i64,
    pub sent_ns: i64,
    /// It acknowledged two full segments or more, or more of the burst
    /// was still unacknowledged: the receiver held it for no timer.
    pub prompt: bool,
}

/// A receiver's shortest delayed-ACK timer (Linux's 40 ms; other stacks
/// wait 100-200 ms): an ACK that came sooner after the one before held
/// for no timer.
const DELAYED_ACK_MIN_NS: i64 = 40_000_000;

/// Every client's uplink (module docs).
#[derive(Debug, Default)]
pub struct UplinkLoads {
    loads: Vec<Load>,
    index: FxHashMap<IpAddr, u32>,
}

/// Where a connection last found its client's uplink among
/// [`UplinkLoads`]' (a hint, checked: no lookup per packet).
pub const NO_SLOT: u32 = u32::MAX;

impl UplinkLoads {
    /// `client`'s uplink, found at `slot` when it is still there, else
    /// looked up (or made) and `slot` set to it.
    #[inline]
    fn load(&mut self, client: IpAddr, ts_ns: i64, slot: &mut u32) -> &mut Load {
        let hinted = *slot as usize;
        let i = if self.loads.get(hinted).is_some_and(|l| l.client == client) {
            hinted
        } else {
            let i = match self.index.get(&client) {
                Some(&i) => i as usize,
                None => self.insert(client),
            };
            *slot = i as u32;
            i
        };
        let load = &mut self.loads[i];
        load.last_ns = load.last_ns.max(ts_ns);
        load
    }

    /// A new client's uplink, its slot; beyond [`CLIENTS`] the half heard
    /// from longest ago is dropped first (the slots move: hints are
    /// checked against the client).
    #[cold]
    fn insert(&mut self, client: IpAddr) -> usize {
        if self.loads.len() >= CLIENTS {
            let mut times: Vec<i64> = self.loads.iter().map(|l| l.last_ns).collect();
            let mid = times.len() / 2;
            let (_, &mut cut, _) = times.select_nth_unstable(mid);
            self.loads.retain(|l| l.last_ns > cut);
            self.index.clear();
            for (i, l) in self.loads.iter().enumerate() {
                self.index.insert(l.client, i as u32);
            }
        }
        self.loads.push(Load::new(client));
        let i = self.loads.len() - 1;
        self.index.insert(client, i as u32);
        i
    }

    /// Whether waits read at `used` (bytes per nanosecond, the slowest
    /// rate they were read with) still hold by `client`'s rate as read
    /// now: where later samples disagreed, or showed the link faster
    /// than [`AGREE`] times that, they do not.
    pub fn still_holds(&self, client: IpAddr, used: f64) -> bool {
        self.index
            .get(&client)
            .and_then(|&i| self.loads[i as usize].rate())
            .is_some_and(|rate| rate <= used * AGREE)
    }

    /// Server data reached `client` at `ts_ns`: ACKs coming to it
    /// meanwhile may have waited behind it.
    #[inline]
    pub fn arrived(&mut self, client: IpAddr, ts_ns: i64, slot: &mut u32) {
        let load = self.load(client, ts_ns, slot);
        load.arrival_ns = Some(load.arrival_ns.map_or(ts_ns, |a| a.max(ts_ns)));
    }

    /// A server's pure ACK acknowledged more of a burst of `client`'s
    /// data (its newest acknowledged byte and the one before it left the
    /// client within [`BURST_NS`] of each other): the link sent what the
    /// client had sent between them in the time between the two ACKs, a
    /// sample of its rate. Not where server data reached the client
    /// between the two (an ACK may have queued behind it on the way
    /// back), nor where this ACK may have waited for the receiver's
    /// delayed-ACK timer (not `prompt`, and later than the shortest
    /// timer after the one before).
    pub fn acknowledged(&mut self, client: IpAddr, ack: BurstAck, slot: &mut u32) {
        let spacing = ack.ts_ns - ack.before_ns;
        let burst = (0..=BURST_NS).contains(&(ack.sent_ns - ack.before_sent_ns));
        if !burst || spacing < MIN_SAMPLE_NS || (!ack.prompt && spacing >= DELAYED_ACK_MIN_NS) {
            return;
        }
        let load = self.load(client, ack.ts_ns, slot);
        if load.arrival_ns.is_some_and(|a| a > ack.before_ns) {
            return;
        }
        let (Some(upto), Some(before)) =
            (load.sent_by(ack.sent_ns), load.sent_by(ack.before_sent_ns))
        else {
            return;
        };
        let bytes = upto.saturating_sub(before);
        if bytes < u64::from(MIN_SAMPLE_BYTES) {
            return;
        }
        let rate = bytes as f64 / spacing as f64;
        let known = load.rate().is_some();
        load.samples += 1;
        if let Some(i) = load.fastest.iter().position(|&f| rate > f) {
            load.fastest.copy_within(i..2, i + 1);
            load.fastest[i] = rate;
        }
        if let Some(rate) = load.rate().filter(|_| !known) {
            load.replay(rate);
        }
    }

    /// The waits of `client`'s data segments among frames `frames`, sent
    /// before its uplink's rate was known, by the rate as first read
    /// (replayed over its logged packets then: frame and wait, in frame
    /// order), and that rate.
    pub fn replayed(
        &self,
        client: IpAddr,
        frames: std::ops::RangeInclusive<u64>,
    ) -> (&[(u64, i64)], f64) {
        let Some(load) = self.index.get(&client).map(|&i| &self.loads[i as usize]) else {
            return (&[], f64::INFINITY);
        };
        let from = load.replayed.partition_point(|&(f, _)| f < *frames.start());
        let to = load.replayed.partition_point(|&(f, _)| f <= *frames.end());
        (&load.replayed[from..to.max(from)], load.replayed_rate)
    }

    /// `client` sent a packet of `payload` bytes at `ts_ns`: how long it
    /// waited at its uplink (behind what was queued there, and its own
    /// sending beyond a small packet's), where the link's rate is known,
    /// and that rate (bytes per nanosecond).
    pub fn sent(
        &mut self,
        client: IpAddr,
        ts_ns: i64,
        frame: u64,
        payload: u32,
        slot: &mut u32,
    ) -> Option<(i64, f64)> {
        let load = self.load(client, ts_ns, slot);
        let bytes = u64::from(payload) + HEADER_BYTES;
        let total = load.log.back().map_or(0, |&(_, b, _)| b) + bytes;
        if load.log.len() >= LOGGED {
            load.log.pop_front();
        }
        // (Kept in time order: a capture clock that stepped back logs
        // nothing it could not find again.)
        if load.log.back().is_none_or(|&(t, _, _)| t <= ts_ns) {
            load.log.push_back((ts_ns, total, frame));
        }
        let Some(rate) = load.rate() else {
            load.at_ns = ts_ns;
            return None;
        };
        Some((load.enqueue(ts_ns, bytes, rate), rate))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLIENT: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, 1));
    const MS: i64 = 1_000_000;

    impl UplinkLoads {
        /// [`UplinkLoads::sent`] by `CLIENT`, with no slot to remember.
        fn sent_now(&mut self, ts_ns: i64, payload: u32) -> Option<(i64, f64)> {
            // (Its frame: the time, in order as frames are.)
            self.sent(CLIENT, ts_ns, ts_ns as u64, payload, &mut NO_SLOT.clone())
        }

        /// [`UplinkLoads::acknowledged`] of `CLIENT`'s burst.
        fn acknowledged_now(&mut self, ack: BurstAck) {
            self.acknowledged(CLIENT, ack, &mut NO_SLOT.clone())
        }
    }

    /// The client sends two segments of `bytes` together at `t` ms, and
    /// the server's ACKs of them come `spacing` ms apart.
    fn pair(u: &mut UplinkLoads, t: i64, bytes: u32, spacing: i64, prompt: bool) {
        let t = t * MS;
        u.sent_now(t, bytes);
        u.sent_now(t + 10_000, bytes);
        u.acknowledged_now(BurstAck {
            before_ns: t + 100 * MS,
            before_sent_ns: t,
            ts_ns: t + 100 * MS + spacing * MS,
            sent_ns: t + 10_000,
            prompt,
        });
    }

    /// A 0.8 Mbit/s uplink: 100 bytes a millisecond.
    fn slow_link() -> UplinkLoads {
        let mut u = UplinkLoads::default();
        for i in 0..MIN_SAMPLES as i64 {
            pair(&mut u, i * 1000, 1360, 14, true);
        }
        u
    }

    #[test]
    fn no_rate_no_wait() {
        let mut u = UplinkLoads::default();
        pair(&mut u, 0, 1360, 14, true);
        assert_eq!(u.sent_now(5_000 * MS, 1000), None);
    }

    #[test]
    fn a_segment_waits_behind_what_the_client_sent_before_it() {
        let mut u = slow_link();
        // 3,000 bytes of one connection's, then 397 of another's 18 ms on.
        let t = 10_000 * MS;
        for _ in 0..2 {
            u.sent_now(t, 1360);
        }
        u.sent_now(t, 280);
        let wait = u.sent_now(t + 18 * MS, 397).unwrap().0;
        // Ahead: 3,120 bytes less 18 ms of the link's (1,800): 13.2 ms;
        // its own 437 bytes less a small packet's: 3.7 ms.
        assert!((16 * MS..18 * MS).contains(&wait), "{wait}");
        // Long after, the queue has drained: only its own sending.
        let alone = u.sent_now(t + 1_000 * MS, 397).unwrap().0;
        assert!((3 * MS..4 * MS).contains(&alone), "{alone}");
    }

    /// A request that left before the link's rate was known (one sample,
    /// then 3,000 bytes and the request together, the second sample
    /// after): timed when the rate becomes known, by the queue run again
    /// over what the client had sent; a request alone, or one not logged,
    /// waited only its own sending or is not known.
    #[test]
    fn a_request_sent_before_the_rate_was_known_is_timed_when_it_is() {
        let mut u = UplinkLoads::default();
        pair(&mut u, 0, 1360, 14, true);
        let t = 500 * MS;
        for _ in 0..2 {
            assert_eq!(u.sent_now(t, 1360), None);
        }
        u.sent_now(t, 280);
        assert_eq!(u.sent_now(t + 10_000, 397), None);
        u.sent_now(t + 300 * MS, 397);
        assert!(u.replayed(CLIENT, 0..=u64::MAX).0.is_empty());
        pair(&mut u, 1000, 1360, 14, true);
        let (waits, rate) = u.replayed(CLIENT, 0..=u64::MAX);
        assert!((rate - 0.1e-3).abs() < 1e-6, "{rate}");
        let wait = |frame: i64| {
            waits
                .iter()
                .find(|&&(f, _)| f == frame as u64)
                .map(|&(_, w)| w)
        };
        // 3,120 bytes ahead at 100 bytes a millisecond, and its own 373
        // beyond a small packet's.
        let queued = wait(t + 10_000).unwrap();
        assert!((34 * MS..36 * MS).contains(&queued), "{queued}");
        // 300 ms on, the queue long drained: its own sending only.
        let alone = wait(t + 300 * MS).unwrap();
        assert!((3 * MS..4 * MS).contains(&alone), "{alone}");
        // Frames outside the range asked for are not given.
        assert!(u
            .replayed(CLIENT, 0..=(t as u64))
            .0
            .iter()
            .all(|&(f, _)| f <= t as u64));
        // Another client's: none.
        let other = IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, 2));
        assert!(u.replayed(other, 0..=u64::MAX).0.is_empty());
    }

    #[test]
    fn the_second_fastest_sample_is_the_links_rate_where_the_third_agrees() {
        let mut u = UplinkLoads::default();
        // Two ACKs bunched on the way back (1 ms for 1,400 bytes), the
        // rest at the link's pace and a little slower.
        pair(&mut u, 0, 1360, 1, true);
        pair(&mut u, 1000, 1360, 14, true);
        pair(&mut u, 2000, 1360, 18, true);
        let own = u.sent_now(5_000 * MS, 1360).unwrap().0;
        // 1,336 bytes beyond a small packet's at 1,400 bytes per 14 ms.
        assert!((13 * MS..14 * MS).contains(&own), "{own}");
        // Samples that disagree (nDPI's alexa-app.pcapng: 2.2, 0.74 and
        // 0.36 Mbit/s) tell no rate.
        let mut u = UplinkLoads::default();
        for (i, ms) in [5, 16, 35].into_iter().enumerate() {
            pair(&mut u, i as i64 * 1000, 1360, ms, true);
        }
        assert_eq!(u.sent_now(5_000 * MS, 1360), None);
        // Nor do a few bytes, their time the server's ACK latency.
        let mut u = UplinkLoads::default();
        for i in 0..MIN_SAMPLES as i64 {
            pair(&mut u, i * 1000, 20, 1, true);
        }
        assert_eq!(u.sent_now(5_000 * MS, 1360), None);
        // Two samples that agree: the faster (PcapPlusPlus's
        // many-protocols.pcap, 0.70 and 0.78 Mbit/s before its request
        // of stream 16); two that do not, none.
        let mut u = UplinkLoads::default();
        pair(&mut u, 0, 1360, 16, true);
        pair(&mut u, 1000, 1360, 14, true);
        let own = u.sent_now(5_000 * MS, 1360).unwrap().0;
        assert!((13 * MS..14 * MS).contains(&own), "{own}");
        let mut u = UplinkLoads::default();
        pair(&mut u, 0, 1360, 30, true);
        pair(&mut u, 1000, 1360, 14, true);
        assert_eq!(u.sent_now(5_000 * MS, 1360), None);
    }

    #[test]
    fn an_ack_that_may_have_waited_for_a_timer_or_behind_data_is_no_sample() {
        // A burst's last segment acknowledged alone 42 ms on (Netflix's
        // server in nDPI's netflix.pcap): perhaps the receiver's timer.
        let mut u = UplinkLoads::default();
        for i in 0..MIN_SAMPLES as i64 {
            pair(&mut u, i * 1000, 1448, 42, false);
        }
        assert_eq!(u.sent_now(5_000 * MS, 1360), None);
        // Sooner than any timer: the link's pace.
        let mut u = UplinkLoads::default();
        for i in 0..MIN_SAMPLES as i64 {
            pair(&mut u, i * 1000, 1448, 30, false);
        }
        assert!(u.sent_now(5_000 * MS, 1360).is_some());
        // Server data reaching the client between the two ACKs: the
        // second may have queued behind it.
        let mut u = UplinkLoads::default();
        for i in 0..MIN_SAMPLES as i64 {
            u.arrived(CLIENT, i * 1000 * MS + 105 * MS, &mut NO_SLOT.clone());
            pair(&mut u, i * 1000, 1360, 14, true);
        }
        assert_eq!(u.sent_now(5_000 * MS, 1360), None);
    }

    #[test]
    fn what_else_the_client_sent_in_the_burst_counts() {
        // Another connection's 1,360 bytes between the two: the link sent
        // both in the ACKs' 28 ms.
        let mut u = UplinkLoads::default();
        for i in 0..MIN_SAMPLES as i64 {
            let t = i * 1000 * MS;
            u.sent_now(t, 1360);
            u.sent_now(t + 5_000, 1360);
            u.sent_now(t + 10_000, 1360);
            u.acknowledged_now(BurstAck {
                before_ns: t + 100 * MS,
                before_sent_ns: t,
                ts_ns: t + 128 * MS,
                sent_ns: t + 10_000,
                prompt: true,
            });
        }
        let own = u.sent_now(5_000 * MS, 1360).unwrap().0;
        assert!((13 * MS..14 * MS).contains(&own), "{own}");
    }
}
