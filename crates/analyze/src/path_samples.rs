//! How much longer than usual each client's handshakes took, over time:
//! the queue on the client's side of the path.
//!
//! A connection knows the path's round trip from its own handshake. When
//! a client opens many connections at once (a browser loading a page),
//! they fill its access link's queue together, and every round trip grows
//! long after its handshake was timed: a response that came a queue later
//! is not the server thinking. The client's handshakes meanwhile measured
//! the queue: SYN -> SYN-ACK at the capture point is the server's side of
//! the path, and beyond the fastest handshake with the same server (its
//! baseline: another server is another path) it is the queue then.
//!
//! A queue also shows where the client receives: while its downlink is
//! saturated (server data from several of its connections arriving back to
//! back at the bottleneck's rate), an answer that leaves a server joins the
//! end of the bottleneck's queue and reaches the client only after what is
//! ahead of it, however fast the server was. A first-in-first-out queue
//! that was busy without a break since time S can hold an answer for up to
//! `t - S` at time t; only a break in the client's arrivals (the link idle)
//! shows time the answer was not queued. So each client's downlink is kept
//! as stretches of arrivals without an idle break ([`GAP_NS`]), which
//! measure its rate, judged in blocks of 8 packets: consecutive blocks at
//! half that rate or more, carrying more than one connection's data, kept
//! it saturated ([`BusyRun`]).

use std::collections::VecDeque;
use std::net::IpAddr;

use rustc_hash::FxHashMap;

/// Handshakes kept per client: the newest.
const PER_CLIENT: usize = 64;

/// Servers whose fastest handshake is kept per client; a handshake with
/// another server measures no queue (it has no baseline to exceed).
const SERVERS_PER_CLIENT: usize = 64;

/// Clients kept; beyond this the ones heard from longest ago are dropped
/// (a scan, or a server-side capture of many clients).
const MAX_CLIENTS: usize = 4096;

/// Less than this beyond the connection's own handshake is a path's
/// jitter, not a queue, and is not handed on.
const QUEUE_FLOOR_NS: i64 = 1_000_000;

/// Server data reaching a client closer together than this can be one
/// stretch of a busy downlink (a full-size packet every 12 ms is a
/// 1 Mbit/s link kept busy), and once a stretch shows its pace, closer than
/// [`GAP_SPACINGS`] times its mean spacing: a longer break is the link idle
/// (on a 15 Mbit/s link, packets 0.8 ms apart, 4 ms without one).
const GAP_NS: i64 = 15_000_000;
const GAP_SPACINGS: i64 = 4;
const GAP_MIN_NS: i64 = 1_000_000;

/// A stretch without an idle break of at least this many packets measures
/// the downlink's rate (its mean: one burst timestamped together by a
/// capture host's interrupt coalescing does not).
const RATE_MIN_PACKETS: u32 = 32;

/// Saturation is judged in blocks of this many packets: a block at
/// [`SATURATED`] of the downlink's rate or more kept it saturated, and so
/// the sparse start of a stretch (a few packets, then many) is not taken
/// for a queue.
const BLOCK_PACKETS: u32 = 8;
const SATURATED: f64 = 0.5;
/// The link's rate within a stretch: the median of its last blocks'.
const RATE_BLOCKS: usize = 4;
/// A block's packets came at the link's pace when no gap between them is
/// longer than 2.5 times their mean gap (this many halves).
const EVEN_GAP_HALVES: i64 = 5;

/// What fills a queue is bulk data: a stretch measures the rate, and a
/// block saturates, only with packets of this many payload bytes on
/// average (full-size ones are 1,200-1,460 on the paths people have); a
/// stream of small messages is a trickle however close together.
const BULK_MEAN_BYTES: u64 = 1000;

/// Busy stretches kept per client (the newest).
const BUSY_KEPT: usize = 64;

/// Arrivals kept per client for the longest wait an answer can have had
/// in its downlink's queue (`PathSamples::busy_before`): at 10 Mbit/s,
/// 256 full-size packets are 300 ms of the link's time.
const ARRIVALS_KEPT: usize = 256;

/// Consecutive arrivals of server data at a client, over all its
/// connections.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Stretch {
    start_ns: i64,
    end_ns: i64,
    bytes: u64,
    packets: u32,
    /// Times the data came from another connection than the packet before.
    switches: u32,
    /// The longest time between two of its packets.
    max_gap_ns: i64,
}

impl Stretch {
    fn new(ts_ns: i64, bytes: u32) -> Stretch {
        Stretch {
            start_ns: ts_ns,
            end_ns: ts_ns,
            bytes: bytes as u64,
            packets: 1,
            switches: 0,
            max_gap_ns: 0,
        }
    }

    fn add(&mut self, ts_ns: i64, bytes: u32, switched: bool) {
        self.max_gap_ns = self.max_gap_ns.max(ts_ns - self.end_ns);
        self.end_ns = self.end_ns.max(ts_ns);
        self.bytes += bytes as u64;
        self.packets += 1;
        self.switches += switched as u32;
    }

    /// The mean time between two of its packets.
    fn mean_gap_ns(&self) -> i64 {
        (self.end_ns - self.start_ns) / (self.packets as i64 - 1).max(1)
    }

    /// The longest break that does not end this stretch.
    fn gap_allowed_ns(&self) -> i64 {
        if self.packets < 4 {
            return GAP_NS;
        }
        (self.mean_gap_ns() * GAP_SPACINGS).clamp(GAP_MIN_NS, GAP_NS)
    }

    /// Whether its packets came as a saturated link delivers them, one
    /// after the other at its pace: no gap longer than 2.5 times the mean
    /// (a burst timestamped together doubles some gaps and empties others;
    /// a link that went quiet in between leaves one gap several times the
    /// rest).
    fn even(&self) -> bool {
        self.max_gap_ns * 2 <= self.mean_gap_ns() * EVEN_GAP_HALVES
    }

    /// Bits per second, with at least `packets` packets of bulk data over
    /// some time.
    fn rate_bps(&self, packets: u32) -> Option<f64> {
        let ns = self.end_ns - self.start_ns;
        let bulk = self.bytes >= BULK_MEAN_BYTES * self.packets as u64;
        (self.packets >= packets && ns > 0 && bulk).then(|| self.bytes as f64 * 8e9 / ns as f64)
    }
}

/// A stretch of time in which a client's downlink was saturated by more
/// than one of its connections: an answer arriving inside it may have
/// waited in the bottleneck's queue since `from_ns`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BusyRun {
    pub from_ns: i64,
    pub to_ns: i64,
}

/// One clean handshake of a client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Handshake {
    syn_ns: i64,
    server: IpAddr,
    /// SYN -> SYN-ACK at the capture point.
    gap_ns: i64,
}

/// One of a client's handshakes, as a connection of that client sees it:
/// when it measured the path (from its SYN to its SYN-ACK, at the capture
/// point), how much longer it took than its server's fastest (the queue
/// it found), and the fastest handshake to the connection's own server:
/// a round trip the connection measured beyond that already holds that
/// much queue (the diagnosis takes it off, `Facts::path_queue_ns`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueSample {
    pub from_ns: i64,
    pub to_ns: i64,
    pub queue_ns: i64,
    pub own_fastest_ns: Option<i64>,
}

#[derive(Debug, Default)]
struct Client {
    /// The newest clean handshakes.
    handshakes: VecDeque<Handshake>,
    /// The fastest SYN -> SYN-ACK to each server (a few per client: a
    /// linear search beats hashing the pair).
    fastest: Vec<(IpAddr, i64)>,
    /// The SYN of the newest handshake that took longer than its server's
    /// fastest then, by more than a jitter: without one in a connection's
    /// window there is no queue to find (most connections' case), and the
    /// handshakes are not looked through.
    newest_slow_syn: Option<i64>,
    /// Its downlink: the arrivals since the last idle break, the block
    /// of them being filled, the busy stretch going on and the newest
    /// finished ones, the connection the last packet came on, the rate.
    run: Option<Stretch>,
    block: Option<Stretch>,
    /// The last blocks' rates (the newest `recent_len`, oldest first),
    /// and blocks not yet judged (a stretch's first, while its rate is
    /// not known). Fixed room: nothing is allocated per packet.
    recent: [f64; RATE_BLOCKS],
    recent_len: usize,
    pending: Vec<Stretch>,
    busy: Option<Stretch>,
    busies: VecDeque<BusyRun>,
    peak_bps: f64,
    /// Its newest arrivals of server data, over all its connections:
    /// (time, bytes), at most [`ARRIVALS_KEPT`].
    arrivals: VecDeque<(i64, u32)>,
    /// Their bytes, together.
    arrival_bytes: u64,
    /// Its newest arrival of server data (the connection the last packet
    /// came on), and the newest on a connection other than that one's
    /// ([`PathSamples::heard_besides`]).
    heard: [Option<Heard>; 2],
    /// Its newest re-send of data, a FIN or a SYN (the connection it
    /// went on, and its server), and the newest to another server than
    /// that one's ([`PathSamples::resent_besides`]).
    resent: [Option<(Heard, IpAddr)>; 2],
    /// Per size of what was acknowledged at once ([`ACKED_SIZES`]), the
    /// newest acknowledgment of its data by a server (the connection it
    /// came on), and the newest on another connection than that one's
    /// ([`PathSamples::acknowledged_besides`]): a large segment's way out
    /// is shown by a large one's acknowledgment, which a later small one
    /// must not hide (nDPI's skype.pcap 57: 1,365 bytes acknowledged on
    /// stream 2, then 4 on stream 58, before the stalled 49 were re-sent).
    acknowledged: [[Option<Delivered>; 2]; ACKED_SIZES.len()],
    /// Its downlink's newest stalls: pauses between two arrivals of
    /// [`STALL_MIN_NS`] and [`GAP_SPACINGS`] packets' time at its rate or
    /// more, (from, to), at most [`STALLS_KEPT`].
    stalls: VecDeque<(i64, i64)>,
}

/// The capture's silences: when nothing reached any client from any
/// server ([`PathStall`]). Capture-wide, not per client address: a host
/// with two (IPv4 and IPv6) hears on both, and a capture taken on the
/// client (the usual) hears all it receives.
#[derive(Debug, Default)]
struct Silences {
    /// The newest packet from any server, pure ACKs too (frame, time): a
    /// silence ends at the next.
    last_heard: Option<(u64, i64)>,
    /// What came at the end of the newest silence, while it may still
    /// prove the path held it.
    release: Option<Release>,
    /// The stalls releases proved, at most [`PATH_STALLS_KEPT`] (the
    /// newest).
    proven: VecDeque<PathStall>,
}

/// How many of the pauses in a client's downlink before an answer are
/// kept ([`DownlinkGaps`]): the longest.
const GAPS_KEPT: usize = 8;

/// A pause in a busy downlink shorter than this is how the link hands
/// over what it queued (Wi-Fi's aggregates and its turns on the air,
/// LTE's scheduling, a capture host's interrupt moderation), not a stall:
/// nDPI's pinterest.pcap, a phone's downlink at 190-240 Mbit/s in
/// bunches with pauses of 1-3 ms between them, its queue 40-60 ms deep
/// throughout.
const STALL_MIN_NS: i64 = 5_000_000;

/// Stalls kept per client (the newest): an answer's wait reaches back a
/// few round trips at most.
const STALLS_KEPT: usize = 16;

/// The stalls in a client's downlink between a request and its answer
/// (pauses of [`STALL_MIN_NS`] and [`GAP_SPACINGS`] packets' time at the
/// link's rate: `Client::stalled`): while the link delivered nothing, a
/// queue ahead of the answer did not drain, and the answer's wait then was
/// no wait behind other downloads (a radio's stall, a handover). Kept for
/// an answer that came in a busy stretch, for `downlink_queue` to count,
/// of what the server's clock says the path held it, only the time the
/// link was delivering.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DownlinkGaps {
    /// Since when the stalls are known: the request, or the oldest stall
    /// kept when [`STALLS_KEPT`] are (older ones may have been dropped).
    pub known_from_ns: i64,
    /// The longest pauses, (from, to); unused ones empty.
    pub gaps: [(i64, i64); GAPS_KEPT],
}

impl DownlinkGaps {
    /// Of the time from `from_ns` to `to_ns`, how long the link was
    /// delivering: not in a kept pause, and after what is known.
    pub fn delivering_ns(&self, from_ns: i64, to_ns: i64) -> i64 {
        let from = from_ns.max(self.known_from_ns);
        if to_ns <= from {
            return 0;
        }
        let paused: i64 = self
            .gaps
            .iter()
            .map(|&(a, b)| (b.min(to_ns) - a.max(from)).max(0))
            .sum();
        (to_ns - from - paused).max(0)
    }
}

/// Nothing from any server for at least this long, then packets that
/// came late: a silence that can be a stall of the client's path.
const PATH_STALL_MIN_NS: i64 = 20_000_000;

/// A server's first pure ACK of a connection's data may come this much
/// after a round trip by its delayed-ACK timer (Linux's shortest): late
/// beyond it only.
pub(crate) const FIRST_ACK_DELAY_NS: i64 = 40_000_000;

/// What a held link hands over when it wakes comes back to back: the
/// witnesses of a stall arrive within this of its end.
pub const RELEASE_NS: i64 = 10_000_000;

/// Late packets kept per release (the first; two from different servers
/// prove it).
const WITNESSES_KEPT: usize = 4;

/// Proven stalls kept (the newest): a connection's answers look back a
/// few round trips at most.
const PATH_STALLS_KEPT: usize = 16;

/// A stall of the clients' path (a client's access link, where the
/// capture is at the client: Wi-Fi asleep or scanning another channel, a
/// cellular radio waking or handing over; or the path they share beyond):
/// nothing reached any client from any server, pure ACKs included, from the packet in `from_frame` to the one in
/// `to_frame`, and then, within [`RELEASE_NS`], pure ACKs of two servers
/// or more (no application's time in them) of client data sent
/// [`PATH_STALL_MIN_NS`] or more apart, each [`PATH_STALL_MIN_NS`] or
/// more later than its connection's quickest pure ACK before (its first:
/// than its fastest round trip and [`FIRST_ACK_DELAY_NS`]): what the path held, handed over at
/// once. Servers on their own schedules, answering what was sent at
/// different times, are not late together by chance; two servers
/// answering one moment together (a page's requests, both delayed-ACK
/// timers) are no proof, and one server's lateness is its own.
///
/// The stall began no earlier than the silence did, nor earlier than the
/// least late of the two witnesses says (an idle spell before it is no
/// stall): `from_ns`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PathStall {
    pub from_frame: u64,
    pub from_ns: i64,
    /// How long nothing came: from the last packet before the silence
    /// (`from_frame`) to `to_frame` (`from_ns` may be later).
    pub silent_ns: i64,
    pub to_frame: u64,
    pub to_ns: i64,
    /// The two late packets of different servers that prove it: (frame,
    /// how late).
    pub witnesses: [(u64, i64); 2],
}

/// A packet that came at the end of a silence, later than its
/// connection's fastest round trip.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Witness {
    server: IpAddr,
    frame: u64,
    /// When the client data it acknowledged was sent, and how late it came.
    sent_ns: i64,
    late_ns: i64,
}

/// The end of a client's silence and its late packets so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Release {
    from: (u64, i64),
    to: (u64, i64),
    witnesses: [Option<Witness>; WITNESSES_KEPT],
}

impl Release {
    /// A witness of another server, its acknowledged data sent far enough
    /// from this one's: the stall it proves.
    fn proven_by(&self, w: &Witness) -> Option<PathStall> {
        let other =
            self.witnesses.iter().flatten().find(|o| {
                o.server != w.server && (o.sent_ns - w.sent_ns).abs() >= PATH_STALL_MIN_NS
            })?;
        let (first, second) = if other.frame < w.frame {
            (other, w)
        } else {
            (w, other)
        };
        let least_late = first.late_ns.min(second.late_ns);
        Some(PathStall {
            from_frame: self.from.0,
            from_ns: self.from.1.max(self.to.1 - least_late),
            silent_ns: self.to.1 - self.from.1,
            to_frame: self.to.0,
            to_ns: self.to.1,
            witnesses: [(first.frame, first.late_ns), (second.frame, second.late_ns)],
        })
    }
}

/// The least bytes of each size of acknowledgment a client's are kept
/// by: a keystroke's or a message's, a request's, a segment's of a
/// 576-byte path, a full Ethernet segment's.
const ACKED_SIZES: [u32; 4] = [0, 64, 512, 1200];

/// Client data a server acknowledged: on which connection (to which
/// server address and port), in which frame of the server's, when, when
/// the newest of the data it newly acknowledged was sent, and how many
/// bytes it newly acknowledged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Delivered {
    /// The connection's `tcp.stream`.
    pub stream: u64,
    pub server: IpAddr,
    pub port: u16,
    pub frame: u64,
    pub ts_ns: i64,
    pub sent_ns: i64,
    pub bytes: u32,
}

/// At a client's SYN sent again, the newest packet the capture saw reach
/// any client (its frame and time), and the newest of the client's
/// re-sends to another server: the client kept asking
/// elsewhere, and nothing came back from anywhere (its own side of the
/// network down: nDPI's skype.pcap 96, judged in session 85).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NothingHeard {
    /// The newest packet that reached any client: its frame and time.
    pub last_heard_frame: u64,
    pub last_heard_ns: i64,
    /// The client's newest re-send to another server.
    pub resent_elsewhere: Heard,
}

/// Server data that reached a client: on which connection, in which
/// frame, when.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Heard {
    /// The connection's `tcp.stream`.
    pub stream: u64,
    pub frame: u64,
    pub ts_ns: i64,
}

impl Client {
    /// Nothing reached the client from `from_ns` to `to_ns`, a pause of
    /// [`STALL_MIN_NS`] or more: a stall, when also [`GAP_SPACINGS`]
    /// packets' time at its rate (a slow link's even pace is none).
    #[inline(never)]
    fn stalled(&mut self, from_ns: i64, to_ns: i64) {
        let link = self.queue_rate_bps();
        if link > 0.0
            && !self.arrivals.is_empty()
            && to_ns - from_ns < self.mean_packet_ns(link).saturating_mul(GAP_SPACINGS)
        {
            return;
        }
        if self.stalls.len() == STALLS_KEPT {
            self.stalls.pop_front();
        }
        self.stalls.push_back((from_ns, to_ns));
    }

    /// Its mean packet's time on a link of `link_bps` (its arrivals kept:
    /// at least one).
    fn mean_packet_ns(&self, link_bps: f64) -> i64 {
        let mean_packet = self.arrival_bytes / self.arrivals.len() as u64;
        (mean_packet as f64 * 8e9 / link_bps) as i64
    }

    /// The link went idle (or the capture began): what was going on ends.
    fn idle(&mut self) {
        if let Some(rate) = self.run.take().and_then(|r| r.rate_bps(RATE_MIN_PACKETS)) {
            self.peak_bps = self.peak_bps.max(rate);
        }
        // A short stretch's blocks, against the rate known before.
        self.judge_pending();
        self.recent_len = 0;
        // The busy stretch's tail: fewer packets than a block, no break.
        if let (Some(busy), Some(tail)) = (&mut self.busy, self.block.take()) {
            busy.end_ns = busy.end_ns.max(tail.end_ns);
        }
        self.end_busy();
    }

    fn end_busy(&mut self) {
        if let Some(b) = self.busy.take().filter(|b| b.switches > 0) {
            if self.busies.len() == BUSY_KEPT {
                self.busies.pop_front();
            }
            self.busies.push_back(BusyRun {
                from_ns: b.start_ns,
                to_ns: b.end_ns,
            });
        }
    }

    /// A full block: part of a busy stretch if it kept the link saturated,
    /// at half the link's rate: the fastest stretch's before, or the median
    /// of this stretch's last [`RATE_BLOCKS`] blocks (robust to a sparse
    /// start and to a burst timestamped together). Until a stretch has that
    /// many, its blocks wait for the rate, unless one is known.
    fn block_done(&mut self, block: Stretch) {
        if self.recent_len == RATE_BLOCKS {
            self.recent.rotate_left(1);
            self.recent_len -= 1;
        }
        self.recent[self.recent_len] = block.rate_bps(BLOCK_PACKETS).unwrap_or(0.0);
        self.recent_len += 1;
        self.pending.push(block);
        if self.recent_len < RATE_BLOCKS && self.peak_bps == 0.0 {
            return;
        }
        self.judge_pending();
    }

    /// Judges the blocks waiting for the link's rate, in order.
    fn judge_pending(&mut self) {
        let median = if self.recent_len == RATE_BLOCKS {
            let mut rates = self.recent;
            rates.sort_by(f64::total_cmp);
            rates[RATE_BLOCKS / 2]
        } else {
            0.0
        };
        let link = self.peak_bps.max(median);
        // (Taken out and put back, emptied: its room is kept.)
        let mut pending = std::mem::take(&mut self.pending);
        for block in pending.drain(..) {
            let saturated = link > 0.0
                && block.even()
                && block
                    .rate_bps(BLOCK_PACKETS)
                    .is_some_and(|rate| rate >= SATURATED * link);
            if !saturated {
                self.end_busy();
                continue;
            }
            match &mut self.busy {
                Some(b) => {
                    b.end_ns = block.end_ns;
                    b.bytes += block.bytes;
                    b.packets += block.packets;
                    b.switches += block.switches;
                }
                None => self.busy = Some(block),
            }
        }
        self.pending = pending;
    }

    /// The fastest rate its downlink has delivered at over a stretch of at
    /// least [`RATE_MIN_PACKETS`] packets of bulk data, the one going on
    /// included (bits per second; 0 when none yet): no faster than its
    /// bottleneck.
    fn peak_bps(&self) -> f64 {
        let going_on = self.run.and_then(|r| r.rate_bps(RATE_MIN_PACKETS));
        self.peak_bps.max(going_on.unwrap_or(0.0))
    }

    /// The rate an answer's wait in the downlink's queue is judged by: the
    /// fastest the downlink has shown ([`Client::peak_bps`]), or, before
    /// any stretch was long enough to measure that, the pace of the one
    /// going on once it holds a block of bulk data: data arriving back to
    /// back without an idle break is how a bottleneck delivers what it
    /// queued, and nothing faster has been seen. (A page load's first
    /// answers come within its first stretch: the other connections'
    /// initial windows ahead of them in the queue are all there is to
    /// measure. Stamps that bunch packets together make that pace faster,
    /// which claims less.) 0 when neither is known.
    fn queue_rate_bps(&self) -> f64 {
        let peak = self.peak_bps();
        if peak > 0.0 {
            return peak;
        }
        self.run
            .and_then(|r| r.rate_bps(BLOCK_PACKETS))
            .unwrap_or(0.0)
    }

    fn fastest_to(&self, server: IpAddr) -> Option<i64> {
        self.fastest
            .iter()
            .find(|(s, _)| *s == server)
            .map(|(_, gap)| *gap)
    }

    /// How much longer than its server's fastest a handshake took.
    fn queue_of(&self, h: &Handshake) -> i64 {
        let base = self.fastest_to(h.server).unwrap_or(h.gap_ns);
        h.gap_ns.saturating_sub(base).max(0)
    }
}

#[derive(Debug, Default)]
pub(crate) struct PathSamples {
    clients: FxHashMap<IpAddr, Client>,
    silences: Silences,
}

impl PathSamples {
    /// A clean handshake (one SYN, one SYN-ACK) from `client` to `server`:
    /// its SYN at `syn_ns`, its SYN-ACK `gap_ns` later.
    pub(crate) fn note(&mut self, client: IpAddr, server: IpAddr, syn_ns: i64, gap_ns: i64) {
        let c = self.client(client);
        if c.handshakes.len() == PER_CLIENT {
            c.handshakes.pop_front();
        }
        c.handshakes.push_back(Handshake {
            syn_ns,
            server,
            gap_ns,
        });
        if let Some((_, fastest)) = c.fastest.iter_mut().find(|(s, _)| *s == server) {
            if gap_ns.saturating_sub(*fastest) > QUEUE_FLOOR_NS {
                c.newest_slow_syn = Some(c.newest_slow_syn.map_or(syn_ns, |t| t.max(syn_ns)));
            }
            *fastest = (*fastest).min(gap_ns);
        } else if c.fastest.len() < SERVERS_PER_CLIENT {
            c.fastest.push((server, gap_ns));
        }
    }

    /// The client's record, made room for among at most [`MAX_CLIENTS`]:
    /// past that, the half heard from longest ago is dropped.
    fn client(&mut self, client: IpAddr) -> &mut Client {
        if self.clients.len() >= MAX_CLIENTS && !self.clients.contains_key(&client) {
            let newest = |c: &Client| {
                let syn = c.handshakes.back().map_or(i64::MIN, |h| h.syn_ns);
                syn.max(c.run.map_or(i64::MIN, |r| r.end_ns))
            };
            let cutoff = median(self.clients.values().map(newest).collect());
            self.clients.retain(|_, c| newest(c) > cutoff);
        }
        self.clients.entry(client).or_default()
    }

    /// `bytes` of server data on connection `stream` reached (or, captured
    /// elsewhere, passed on the way to) `client` at `ts_ns`, in `frame`.
    #[inline]
    pub(crate) fn arrival(
        &mut self,
        client: IpAddr,
        stream: u64,
        frame: u64,
        ts_ns: i64,
        bytes: u32,
    ) {
        let c = match self.clients.get_mut(&client) {
            Some(c) => c,
            None => self.client(client),
        };
        let switched = c.heard[0].is_some_and(|h| h.stream != stream);
        if switched {
            c.heard[1] = c.heard[0];
        }
        c.heard[0] = Some(Heard {
            stream,
            frame,
            ts_ns,
        });
        if let Some(&(previous, _)) = c.arrivals.back() {
            if ts_ns - previous >= STALL_MIN_NS {
                c.stalled(previous, ts_ns);
            }
        }
        if c.arrivals.len() == ARRIVALS_KEPT {
            if let Some((_, gone)) = c.arrivals.pop_front() {
                c.arrival_bytes -= gone as u64;
            }
        }
        c.arrivals.push_back((ts_ns, bytes));
        c.arrival_bytes += bytes as u64;
        let Some(run) = c
            .run
            .as_mut()
            .filter(|r| (ts_ns - r.end_ns).abs() <= r.gap_allowed_ns())
        else {
            c.idle();
            c.run = Some(Stretch::new(ts_ns, bytes));
            c.block = c.run;
            return;
        };
        run.add(ts_ns, bytes, switched);
        match &mut c.block {
            Some(b) => b.add(ts_ns, bytes, switched),
            None => {
                let mut b = Stretch::new(ts_ns, bytes);
                b.switches = switched as u32;
                c.block = Some(b);
            }
        }
        if let Some(b) = c.block.filter(|b| b.packets == BLOCK_PACKETS) {
            c.block = None;
            c.block_done(b);
        }
    }

    /// A packet from `server` reached (or, captured elsewhere, passed on
    /// the way to) its client at `ts_ns`, in `frame`: any packet, pure
    /// ACKs too. `answered`, for a pure ACK: when the client data it newly
    /// acknowledged was sent, and how much later than its connection's
    /// quickest pure ACK before it came (its first: than its fastest round
    /// trip and [`FIRST_ACK_DELAY_NS`]). A silence of [`PATH_STALL_MIN_NS`] or more it ends opens
    /// a release, which its first [`RELEASE_NS`] of late packets may
    /// prove a stall ([`PathStall`]).
    #[inline]
    pub(crate) fn heard(
        &mut self,
        server: IpAddr,
        frame: u64,
        ts_ns: i64,
        answered: Option<(i64, i64)>,
    ) {
        let c = &mut self.silences;
        if let Some((last_frame, last_ns)) = c.last_heard {
            if ts_ns < last_ns {
                return;
            }
            if ts_ns - last_ns >= PATH_STALL_MIN_NS {
                c.release = Some(Release {
                    from: (last_frame, last_ns),
                    to: (frame, ts_ns),
                    witnesses: [None; WITNESSES_KEPT],
                });
            }
        }
        c.last_heard = Some((frame, ts_ns));
        if c.release.is_some_and(|r| ts_ns - r.to.1 > RELEASE_NS) {
            c.release = None;
        }
        let (Some(release), Some((sent_ns, late_ns))) = (&mut c.release, answered) else {
            return;
        };
        if late_ns < PATH_STALL_MIN_NS {
            return;
        }
        let witness = Witness {
            server,
            frame,
            sent_ns,
            late_ns,
        };
        if let Some(stall) = release.proven_by(&witness) {
            c.release = None;
            if c.proven.len() == PATH_STALLS_KEPT {
                c.proven.pop_front();
            }
            c.proven.push_back(stall);
        } else if let Some(slot) = release.witnesses.iter_mut().find(|w| w.is_none()) {
            *slot = Some(witness);
        }
    }

    /// A UDP datagram (QUIC, DNS) from `src` was captured at `ts_ns`, in
    /// `frame`: unless it came from a client of the capture's TCP
    /// connections, it was delivered to one, and the link was not stalled
    /// then (a browser's QUIC connections, a phone's lookups): a silence
    /// ends there, and the next is timed from it. (A datagram a
    /// client sent from an address none of its TCP connections used is
    /// taken as delivered too: a silence it breaks proves no stall.) Not
    /// one to a multicast group or the broadcast address (`dst`): a
    /// neighbour's announcement on the local link (SSDP, mDNS), which
    /// crossed no path to any server (nDPI's skype.pcap: SSDP from the
    /// LAN while nothing came through the gateway, judged in session 86).
    pub(crate) fn heard_datagram(&mut self, src: IpAddr, dst: IpAddr, frame: u64, ts_ns: i64) {
        let local = match dst {
            IpAddr::V4(a) => a.is_multicast() || a.is_broadcast(),
            IpAddr::V6(a) => a.is_multicast(),
        };
        if !local && !self.clients.contains_key(&src) {
            self.delivered(frame, ts_ns);
        }
    }

    /// Something reached a client by `ts_ns` (in `frame`): a client's ACK
    /// of server bytes the capture never showed (a filtered or sampled
    /// capture), a datagram. A silence ends there.
    pub(crate) fn delivered(&mut self, frame: u64, ts_ns: i64) {
        let c = &mut self.silences;
        if c.last_heard.is_none_or(|(_, last)| ts_ns >= last) {
            c.last_heard = Some((frame, ts_ns));
        }
    }

    /// The stalls of the path proven between `from_ns` and `to_ns`
    /// ([`PathStall`]).
    pub(crate) fn stalls_between(&self, from_ns: i64, to_ns: i64) -> Vec<PathStall> {
        self.silences
            .proven
            .iter()
            .filter(|s| s.to_ns >= from_ns && s.from_ns <= to_ns)
            .copied()
            .collect()
    }

    /// A server acknowledged new data of `client`'s ([`Delivered`]).
    #[inline]
    pub(crate) fn acknowledged(&mut self, client: IpAddr, delivered: Delivered) {
        let c = match self.clients.get_mut(&client) {
            Some(c) => c,
            None => self.client(client),
        };
        let size = ACKED_SIZES
            .iter()
            .rposition(|&least| delivered.bytes >= least)
            .unwrap_or(0);
        let kept = &mut c.acknowledged[size];
        if kept[0].is_some_and(|d| d.stream != delivered.stream) {
            kept[1] = kept[0];
        }
        kept[0] = Some(delivered);
    }

    /// Per size ([`ACKED_SIZES`]), the newest acknowledgment of
    /// `client`'s data on a connection other than `stream` (so far): what
    /// it sent then got through.
    pub(crate) fn acknowledged_besides(
        &self,
        client: IpAddr,
        stream: u64,
    ) -> impl Iterator<Item = Delivered> + '_ {
        self.clients
            .get(&client)
            .into_iter()
            .flat_map(|c| c.acknowledged.iter())
            .filter_map(move |kept| kept.iter().flatten().find(|d| d.stream != stream).copied())
    }
    /// `client` sent data, a FIN or a SYN again to `server` (`heard`: on
    /// which connection, in which frame, when): it was asking, and had no
    /// answer yet.
    pub(crate) fn resent(&mut self, client: IpAddr, server: IpAddr, heard: Heard) {
        let c = match self.clients.get_mut(&client) {
            Some(c) => c,
            None => self.client(client),
        };
        if c.resent[0].is_some_and(|(_, to)| to != server) {
            c.resent[1] = c.resent[0];
        }
        c.resent[0] = Some((heard, server));
    }

    /// The newest re-send of `client`'s to a server other than `server`
    /// (so far).
    pub(crate) fn resent_besides(&self, client: IpAddr, server: IpAddr) -> Option<Heard> {
        let c = self.clients.get(&client)?;
        c.resent
            .iter()
            .flatten()
            .find(|(_, to)| *to != server)
            .map(|&(heard, _)| heard)
    }

    /// The newest packet the capture saw reach (or pass on the way to)
    /// any client, from any server, datagrams too: its frame and time.
    pub(crate) fn last_heard_anywhere(&self) -> Option<(u64, i64)> {
        self.silences.last_heard
    }

    /// The newest server data that reached `client` on a connection other
    /// than `stream` (so far): its link was up then.
    pub(crate) fn heard_besides(&self, client: IpAddr, stream: u64) -> Option<Heard> {
        let c = self.clients.get(&client)?;
        c.heard
            .iter()
            .flatten()
            .find(|h| h.stream != stream)
            .copied()
    }

    /// The longest an answer reaching `client` at `at_ns` can have waited
    /// in its downlink's queue, as the client's arrivals show: a
    /// first-in-first-out bottleneck holds an answer only while it
    /// delivers what is ahead of it, without a break, at its rate
    /// ([`Client::queue_rate_bps`]: its bottleneck's, or less). So,
    /// looking back from the answer, the wait ends where the link went
    /// idle and its queue with it:
    ///
    /// - at a pause between two arrivals longer than [`GAP_SPACINGS`]
    ///   packets' time at that rate (and [`GAP_MIN_NS`]: the break that
    ///   ends a stretch), less the later packet's own time on the link;
    /// - where the arrivals since fall behind [`SATURATED`] of that rate,
    ///   give or take two packets (a trickle with short pauses).
    ///
    /// A host that holds the link's deliveries and hands them over
    /// together (a capture host's poll, an emulator or a VM short of CPU,
    /// a Wi-Fi aggregate) stamps them late; the bunch shows by how much:
    /// the link delivers one packet at a time, so each was delivered no
    /// later than the next one's delivery less the next one's time on
    /// the link. The pauses and rates are judged on those times, and a
    /// pause a bunch catches up on is no idle link. Arrivals after the
    /// answer (when the caller asks again once they came) correct the
    /// answer's own time the same way; arrivals at `at_ns` are the
    /// answer's and count as delivered before it. 0 when no rate is
    /// known. The wait is counted between the stamps, and it began no
    /// earlier than `since_ns`: an answer enters the downlink's queue
    /// only after the request that asked for it left the client, so the
    /// walk ends at the request (on a busy keep-alive connection, a few
    /// arrivals instead of all that are kept).
    pub(crate) fn busy_before(&self, client: IpAddr, at_ns: i64, since_ns: i64) -> i64 {
        let Some(c) = self.clients.get(&client) else {
            return 0;
        };
        let link = c.queue_rate_bps();
        if link <= 0.0 || c.arrivals.is_empty() {
            return 0;
        }
        let on_link = |bytes: u32| (bytes as f64 * 8e9 / link) as i64;
        let packet = c.mean_packet_ns(link);
        let idle = packet.saturating_mul(GAP_SPACINGS).max(GAP_MIN_NS);
        let rate = link * SATURATED;
        // Walking back: the latest the newer packet can have been
        // delivered, and its time on the link; the bits delivered after
        // the packet at hand up to the answer's (whole bits: the sums a
        // float would hold exactly, added as integers).
        let mut newer: Option<(i64, i64)> = None;
        let mut answer_ns = at_ns;
        let mut bits: u64 = 0;
        let mut busy = 0;
        for &(ts, bytes) in c.arrivals.iter().rev() {
            let delivered = newer.map_or(ts, |(at, time)| ts.min(at.saturating_sub(time)));
            // Past the answer: they only place the packets before them.
            // At it: the answer's own, delivered before its stamp.
            if ts >= at_ns {
                if ts == at_ns {
                    answer_ns = answer_ns.min(delivered);
                    bits += bytes as u64 * 8;
                }
                newer = Some((delivered, on_link(bytes)));
                continue;
            }
            let (next_at, next_time) = newer.unwrap_or((answer_ns, 0));
            if next_at.saturating_sub(next_time).saturating_sub(delivered) > idle {
                break;
            }
            // (Less two packets' time: the answer's first segment can be
            // a small head behind a small tail, the link busy on both.)
            let window = answer_ns
                .saturating_sub(delivered)
                .saturating_sub(packet.saturating_mul(2));
            if (bits as f64) * 1e9 < rate * window as f64 {
                break;
            }
            if ts < since_ns {
                return at_ns - since_ns.min(at_ns);
            }
            busy = at_ns - ts;
            bits += bytes as u64 * 8;
            newer = Some((delivered, on_link(bytes)));
        }
        busy
    }

    /// The pauses in `client`'s downlink's deliveries from `since_ns` (a
    /// request) up to an answer reaching it at `at_ns` ([`DownlinkGaps`]),
    /// the longest [`GAPS_KEPT`] of those its newest [`STALLS_KEPT`]
    /// hold; None for a client not heard from.
    pub(crate) fn gaps_before(
        &self,
        client: IpAddr,
        at_ns: i64,
        since_ns: i64,
    ) -> Option<Box<DownlinkGaps>> {
        let c = self.clients.get(&client)?;
        let mut found = DownlinkGaps {
            known_from_ns: since_ns,
            gaps: [(0, 0); GAPS_KEPT],
        };
        // (Stalls older than the oldest kept may have been dropped.)
        if c.stalls.len() == STALLS_KEPT {
            if let Some(&(oldest, _)) = c.stalls.front() {
                found.known_from_ns = since_ns.max(oldest);
            }
        }
        for &(a, b) in c.stalls.iter().filter(|(a, b)| *b > since_ns && *a < at_ns) {
            let shortest = found
                .gaps
                .iter_mut()
                .min_by_key(|(x, y)| y - x)
                .expect("GAPS_KEPT > 0");
            if b - a > shortest.1 - shortest.0 {
                *shortest = (a, b);
            }
        }
        Some(Box::new(found))
    }

    /// The stretches in which more than one of the client's connections
    /// kept its downlink saturated, between `from_ns` and `to_ns`.
    pub(crate) fn busy_runs(&self, client: IpAddr, from_ns: i64, to_ns: i64) -> Vec<BusyRun> {
        let Some(c) = self.clients.get(&client) else {
            return Vec::new();
        };
        let going_on = c.busy.filter(|b| b.switches > 0).map(|b| BusyRun {
            from_ns: b.start_ns,
            to_ns: c.block.map_or(b.end_ns, |tail| tail.end_ns.max(b.end_ns)),
        });
        c.busies
            .iter()
            .copied()
            .chain(going_on)
            .filter(|b| b.to_ns >= from_ns && b.from_ns <= to_ns)
            .collect()
    }

    /// The queue the client's handshakes with SYNs between `from_ns` and
    /// `to_ns` found: how much longer each took than its server's
    /// fastest, with the fastest to the connection's own `server`. Only
    /// those that found more than a path's jitter.
    pub(crate) fn queues_found(
        &self,
        client: IpAddr,
        server: IpAddr,
        from_ns: i64,
        to_ns: i64,
    ) -> Vec<QueueSample> {
        let Some(c) = self.clients.get(&client) else {
            return Vec::new();
        };
        if c.newest_slow_syn.is_none_or(|t| t < from_ns) {
            return Vec::new();
        }
        let own_fastest_ns = c.fastest_to(server);
        c.handshakes
            .iter()
            .filter(|h| (from_ns..=to_ns).contains(&h.syn_ns))
            .filter_map(|h| {
                let queue = c.queue_of(h);
                (queue > QUEUE_FLOOR_NS).then_some(QueueSample {
                    from_ns: h.syn_ns,
                    to_ns: h.syn_ns.saturating_add(h.gap_ns),
                    queue_ns: queue,
                    own_fastest_ns,
                })
            })
            .collect()
    }
}

fn median(mut v: Vec<i64>) -> i64 {
    let mid = v.len() / 2;
    *v.select_nth_unstable(mid).1
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    const MS: i64 = 1_000_000;

    fn ip(a: u8) -> IpAddr {
        IpAddr::V4(Ipv4Addr::new(10, 0, 0, a))
    }

    /// `example.pcap`: a client's handshakes with two servers took 17 ms
    /// each, then 106 and 114 ms while its connections filled the link.
    #[test]
    fn a_handshake_slower_than_its_servers_fastest_measured_a_queue() {
        let mut p = PathSamples::default();
        let (client, a, b) = (ip(6), ip(9), ip(53));
        p.note(client, a, 3_124 * MS, 17 * MS);
        p.note(client, b, 3_690 * MS, 17 * MS);
        p.note(client, a, 3_850 * MS, 106 * MS);
        p.note(client, b, 4_329 * MS, 114 * MS);
        // Another server far away: long, but not a queue (its fastest).
        p.note(client, ip(70), 4_600 * MS, 197 * MS);
        // Another client's handshakes say nothing about this one's link.
        p.note(ip(7), a, 4_000 * MS, 300 * MS);
        let found = |v: Vec<QueueSample>| -> Vec<(i64, i64)> {
            v.iter().map(|q| (q.from_ns, q.queue_ns)).collect()
        };
        let seen = p.queues_found(client, a, 0, 5_000 * MS);
        // Measured from the SYN to the SYN-ACK, with the own server's
        // fastest handshake.
        assert_eq!((seen[0].from_ns, seen[0].to_ns), (3_850 * MS, 3_956 * MS));
        assert_eq!(seen[0].own_fastest_ns, Some(17 * MS));
        assert_eq!(found(seen), [(3_850 * MS, 89 * MS), (4_329 * MS, 97 * MS)]);
        // A server the client never shook hands with: no fastest.
        let seen = p.queues_found(client, ip(99), 0, 5_000 * MS);
        assert_eq!(seen[0].own_fastest_ns, None);
        // Only the window asked for.
        assert!(p.queues_found(client, a, 0, 3_800 * MS).is_empty());
        // A jitter's worth more is no queue.
        p.note(client, a, 4_700 * MS, 17 * MS + MS / 2);
        assert!(p.queues_found(client, a, 4_650 * MS, 5_000 * MS).is_empty());
    }

    const US: i64 = 1_000;

    /// Full-size packets from `streams` in turn, `spacing` apart from `at`.
    fn arrivals(
        p: &mut PathSamples,
        client: IpAddr,
        streams: &[u64],
        at: i64,
        n: i64,
        spacing: i64,
    ) {
        for i in 0..n {
            let stream = streams[i as usize % streams.len()];
            p.arrival(client, stream, 0, at + i * spacing, 1448);
        }
    }

    fn busy(p: &PathSamples, client: IpAddr) -> Vec<(i64, i64)> {
        p.busy_runs(client, 0, i64::MAX)
            .iter()
            .map(|b| (b.from_ns, b.to_ns))
            .collect()
    }

    /// A page load through a 4 Mbit/s downlink: six connections' data
    /// back to back every 2.9 ms for a second, from its first packet.
    /// What a client sent that servers acknowledged, kept by size: a
    /// large segment's acknowledgment is not hidden by a later small one
    /// (nDPI's skype.pcap 57: 1,365 bytes acknowledged on stream 2, then
    /// 4 on stream 58), each the newest of its size on a connection other
    /// than the one asking.
    #[test]
    fn acknowledgments_of_a_clients_data_are_kept_by_size() {
        let mut p = PathSamples::default();
        let client = ip(1);
        let acked = |stream: u64, frame: u64, bytes: u32| Delivered {
            stream,
            server: ip(9),
            port: 443,
            frame,
            ts_ns: frame as i64 * MS,
            sent_ns: frame as i64 * MS - 50 * MS,
            bytes,
        };
        p.acknowledged(client, acked(2, 100, 1365));
        p.acknowledged(client, acked(58, 110, 4));
        p.acknowledged(client, acked(58, 120, 8));
        let kept = |p: &PathSamples, stream: u64| -> Vec<(u64, u64)> {
            p.acknowledged_besides(client, stream)
                .map(|d| (d.stream, d.frame))
                .collect()
        };
        assert_eq!(kept(&p, 57), [(58, 120), (2, 100)]);
        // The newest of a size on the connection asking: the one before
        // it, on another.
        p.acknowledged(client, acked(3, 130, 6));
        assert_eq!(kept(&p, 3), [(58, 120), (2, 100)]);
        assert_eq!(kept(&p, 58), [(3, 130), (2, 100)]);
        assert_eq!(kept(&p, 2), [(3, 130)]);
        assert_eq!(p.acknowledged_besides(ip(2), 57).count(), 0);
    }

    #[test]
    fn several_connections_filling_the_downlink_keep_it_busy_from_their_first_packet() {
        let mut p = PathSamples::default();
        let c = ip(1);
        arrivals(&mut p, c, &[1, 2, 3, 4, 5, 6], 1_000 * MS, 344, 2_900 * US);
        let end = 1_000 * MS + 343 * 2_900 * US;
        // Going on, with its tail of fewer than a block.
        assert_eq!(busy(&p, c), [(1_000 * MS, end)]);
        // An idle second, then a lone answer: the stretch ended where the
        // link went idle.
        p.arrival(c, 1, 0, 3_000 * MS, 1448);
        assert_eq!(busy(&p, c), [(1_000 * MS, end)]);
        // Only the window asked for; other clients' links are theirs.
        assert!(p.busy_runs(c, end + 1, 2_999 * MS).is_empty());
        assert!(busy(&p, ip(2)).is_empty());
    }

    #[test]
    fn one_connection_a_trickle_or_small_messages_do_not_make_a_queue() {
        let mut p = PathSamples::default();
        // A fast link's rate, measured on a bulk transfer (0.1 ms apart).
        arrivals(&mut p, ip(1), &[1], 0, 400, 100 * US);
        // One connection alone, however fast: its own data, not a queue
        // another's answer waits in.
        assert!(busy(&p, ip(1)).is_empty());
        // Two connections trickling at a tenth of that rate.
        arrivals(&mut p, ip(1), &[2, 3], 1_000 * MS, 200, MS);
        assert!(busy(&p, ip(1)).is_empty());
        // Small messages, close together, from several connections.
        let c = ip(3);
        for i in 0..400 {
            p.arrival(c, i % 4, 0, 2_000 * MS + i as i64 * 50 * US, 120);
        }
        assert!(busy(&p, c).is_empty());
    }

    /// A few packets, then the link filled: the stretch starts where the
    /// packets come at its rate, not at the sparse ones before.
    #[test]
    fn a_sparse_start_is_not_part_of_the_busy_stretch() {
        let mut p = PathSamples::default();
        let c = ip(1);
        for (i, t) in [0, 6, 14].into_iter().enumerate() {
            p.arrival(c, i as u64, 0, t * MS, 1448);
        }
        arrivals(&mut p, c, &[1, 2, 3], 15 * MS, 64, 800 * US);
        let seen = busy(&p, c);
        assert_eq!(seen.len(), 1, "{seen:?}");
        assert!(seen[0].0 > 14 * MS, "{seen:?}");
        // A break of many spacings ends it, though shorter than 15 ms.
        arrivals(&mut p, c, &[1, 2, 3], 80 * MS, 64, 800 * US);
        assert_eq!(busy(&p, c).len(), 2);
    }

    #[test]
    fn memory_stays_bounded_per_client_and_in_clients() {
        let mut p = PathSamples::default();
        for i in 0..100 {
            p.note(
                ip(1),
                IpAddr::V4(Ipv4Addr::from(i as u32)),
                i * MS,
                17 * MS + i,
            );
        }
        assert_eq!(p.clients[&ip(1)].handshakes.len(), PER_CLIENT);
        assert_eq!(p.clients[&ip(1)].fastest.len(), SERVERS_PER_CLIENT);
        // Busy stretches, each after an idle break: the newest kept.
        for i in 0..(BUSY_KEPT as i64 + 10) {
            arrivals(&mut p, ip(1), &[1, 2], 10_000 * MS + i * 100 * MS, 40, MS);
        }
        assert_eq!(p.clients[&ip(1)].busies.len(), BUSY_KEPT);
        for i in 0..(MAX_CLIENTS as u32 * 3) {
            let other = IpAddr::V4(Ipv4Addr::from(0x0b00_0000 + i));
            p.note(other, other, i as i64 + 1000 * MS, 17 * MS);
        }
        assert!(p.clients.len() <= MAX_CLIENTS);
        // The newest survive.
        let last = IpAddr::V4(Ipv4Addr::from(0x0b00_0000 + MAX_CLIENTS as u32 * 3 - 1));
        assert!(p.clients.contains_key(&last));
    }

    /// The answer's first packet reaches `client` at `at`: noted as the
    /// tracker notes it, then its wait asked for.
    fn answer(p: &mut PathSamples, client: IpAddr, at: i64) -> i64 {
        p.arrival(client, 99, 0, at, 1448);
        p.busy_before(client, at, i64::MIN)
    }

    /// How long before an answer the client's downlink was kept busy:
    /// the longest its queue can have held the answer.
    #[test]
    fn an_answer_can_have_queued_only_as_long_as_the_downlink_was_busy_before_it() {
        let c = ip(1);
        // 1448 bytes every millisecond for 100 ms: 11.6 Mbit/s, the
        // fastest this downlink shows; the answer right behind.
        let mut p = PathSamples::default();
        arrivals(&mut p, c, &[1, 2], 0, 100, MS);
        assert_eq!(answer(&mut p, c, 100 * MS), 100 * MS);
        // Nothing known of a rate: nothing claimed (fewer than a block
        // of packets since the link was idle).
        let mut q = PathSamples::default();
        arrivals(&mut q, c, &[1, 2], 0, BLOCK_PACKETS as i64 - 2, MS);
        assert_eq!(answer(&mut q, c, (BLOCK_PACKETS as i64 - 2) * MS), 0);
        // 30 ms idle, then an answer: the queue had emptied.
        assert_eq!(answer(&mut p, c, 130 * MS), 0);
        // A pause of five packets' time is idle too, if nothing catches
        // up on it; one of three is not.
        arrivals(&mut p, c, &[1, 2], 200 * MS, 50, MS);
        assert_eq!(answer(&mut p, c, 255 * MS), 0);
        arrivals(&mut p, c, &[1, 2], 256 * MS, 20, MS);
        assert_eq!(answer(&mut p, c, 278 * MS), 23 * MS);
        // Three packets stamped alike every 3 ms (a poll's), the answer
        // among the next three: as busy as the link at its rate.
        for i in 0..20 {
            for s in 1..=3 {
                p.arrival(c, s, 0, 300 * MS + i * 3 * MS, 1448);
            }
        }
        p.arrival(c, 1, 0, 360 * MS, 1448);
        p.arrival(c, 2, 0, 360 * MS, 1448);
        assert_eq!(answer(&mut p, c, 360 * MS), 60 * MS);
        // A trickle at a tenth of the rate keeps nothing busy.
        for i in 0..10 {
            p.arrival(c, 1, 0, 400 * MS + i * 10 * MS, 1448);
        }
        assert_eq!(answer(&mut p, c, 500 * MS), 0);
        // Nor does one with short pauses, at a third of it.
        for i in 0..30 {
            p.arrival(c, 1, 0, 600 * MS + i * 3 * MS, 1448);
        }
        assert!(answer(&mut p, c, 690 * MS) <= 3 * MS);
    }

    /// A page load's first answers arrive within the link's first busy
    /// stretch, before any stretch was long enough to measure its rate:
    /// the stretch's own pace stands in, bunched stamps and all (a capture
    /// host or an emulator that stalls, then hands over several packets
    /// at once); a stretch that slows to a trickle claims nothing.
    #[test]
    fn before_the_rate_is_known_the_first_stretchs_pace_bounds_the_queue() {
        let c = ip(1);
        let mut p = PathSamples::default();
        // One connection's initial window through a ~4 Mbit/s bottleneck:
        // a packet every 4 ms, twice several at once after a stall.
        for t in [0, 4, 8, 8, 12, 20, 20, 20, 24, 28] {
            p.arrival(c, 1, 0, t * MS, 1448);
        }
        // The next connection's answer, right behind it: it can have
        // waited the whole stretch.
        let at = 28 * MS + 60 * US;
        assert_eq!(answer(&mut p, c, at), at);
        // The same stretch, then a trickle at a tenth of its pace.
        for i in 1..=5 {
            p.arrival(c, 1, 0, at + i * 30 * MS, 1448);
        }
        assert_eq!(answer(&mut p, c, at + 180 * MS), 0);
        // Small messages, however close together, measure no rate.
        let mut q = PathSamples::default();
        for i in 0..20 {
            q.arrival(c, i % 2, 0, i as i64 * MS, 120);
        }
        assert_eq!(q.busy_before(c, 20 * MS, i64::MIN), 0);
    }

    /// An answer enters the downlink's queue only after its request left:
    /// on a link busy for 100 ms, an answer to a request sent 10 ms
    /// before it waited at most those 10 ms; to one sent before the busy
    /// stretch began, as long as the link was busy.
    #[test]
    fn an_answer_waited_in_the_queue_no_longer_than_since_its_request_left() {
        let c = ip(1);
        let mut p = PathSamples::default();
        arrivals(&mut p, c, &[1, 2], 0, 100, MS);
        p.arrival(c, 99, 0, 100 * MS, 1448);
        assert_eq!(p.busy_before(c, 100 * MS, 90 * MS), 10 * MS);
        assert_eq!(p.busy_before(c, 100 * MS, 90 * MS + 1), 10 * MS - 1);
        assert_eq!(p.busy_before(c, 100 * MS, -50 * MS), 100 * MS);
        assert_eq!(p.busy_before(c, 100 * MS, i64::MIN), 100 * MS);
        // A request sent with the answer (or stamped after it): no wait.
        assert_eq!(p.busy_before(c, 100 * MS, 100 * MS), 0);
        assert_eq!(p.busy_before(c, 100 * MS, 101 * MS), 0);
    }

    /// A saturated link seen through a host that holds its deliveries and
    /// hands them over together (an emulator or a VM short of CPU, a
    /// Wi-Fi aggregate): pauses of a few packets' time, each followed by
    /// the bunch that catches up. An answer after such a pause, alone, is
    /// after an idle link; once its own bunch shows the catch-up, the
    /// pause was the host's, and the answer can have waited since the
    /// bunches began. A pause longer than any bunch catches up on ends it.
    #[test]
    fn a_link_that_hands_over_its_deliveries_in_bunches_stays_busy_through_its_pauses() {
        let c = ip(1);
        let mut p = PathSamples::default();
        // The link's rate: 1448 bytes a millisecond (11.6 Mbit/s).
        arrivals(&mut p, c, &[1, 2], 0, 100, MS);
        // An idle break, then 160 ms of that rate in bunches: eight
        // packets 20 µs apart every 8 ms, pauses of nearly eight packets'
        // time.
        let start = 200 * MS;
        let bunch = |p: &mut PathSamples, from: i64| {
            for i in 0..8 {
                p.arrival(c, 1 + i as u64 % 2, 0, from + i * 20 * US, 1448);
            }
        };
        for n in 0..20 {
            bunch(&mut p, start + n * 8 * MS);
        }
        // The answer first in the next bunch, 7.86 ms after the last one's
        // last packet: alone, it came after an idle link.
        let at = start + 160 * MS;
        assert_eq!(answer(&mut p, c, at), 0);
        // Its bunch catches up on the pause.
        for i in 1..8 {
            p.arrival(c, 3, 0, at + i * 20 * US, 1448);
        }
        assert_eq!(p.busy_before(c, at, i64::MIN), at - start);
        // The bunches go on; an answer 30 ms after the last: the link had
        // gone idle and its queue emptied.
        for n in 21..30 {
            bunch(&mut p, start + n * 8 * MS);
        }
        let last = start + 29 * 8 * MS + 140 * US;
        assert_eq!(answer(&mut p, c, last + 30 * MS), 0);
    }

    /// The pauses between a request and its answer: a 10 ms one and a
    /// 40 ms one in data arriving every 1 ms (1448 bytes: 11.6 Mbit/s);
    /// the link delivered the rest of the time, and of any span only
    /// that counts.
    #[test]
    fn the_pauses_before_an_answer_leave_the_time_the_link_delivered() {
        let mut p = PathSamples::default();
        let c = ip(7);
        let arrive = |p: &mut PathSamples, from: i64, until: i64| {
            for i in 0..=(until - from) / MS {
                p.arrival(c, 1, 0, from + i * MS, 1448);
            }
        };
        arrive(&mut p, 0, 100 * MS);
        arrive(&mut p, 110 * MS, 150 * MS);
        arrive(&mut p, 190 * MS, 200 * MS);
        let gaps = p.gaps_before(c, 200 * MS, 50 * MS).unwrap();
        assert_eq!(gaps.known_from_ns, 50 * MS);
        let mut kept: Vec<_> = gaps.gaps.iter().filter(|(a, b)| b > a).copied().collect();
        kept.sort();
        assert_eq!(kept, vec![(100 * MS, 110 * MS), (150 * MS, 190 * MS)]);
        assert_eq!(gaps.delivering_ns(50 * MS, 200 * MS), 100 * MS);
        assert_eq!(gaps.delivering_ns(140 * MS, 200 * MS), 20 * MS);
        assert_eq!(
            gaps.delivering_ns(0, 60 * MS),
            10 * MS,
            "known from the request"
        );
        assert_eq!(gaps.delivering_ns(160 * MS, 180 * MS), 0);
    }

    /// A silence of the capture's downlink, then two servers' packets
    /// late for what the client sent at different times: a stall, from
    /// as long before its end as the less late of them was late.
    #[test]
    fn two_servers_late_together_for_different_moments_prove_a_stall() {
        let (a, b) = (ip(9), ip(53));
        let stalled = |second: (IpAddr, i64, i64, i64)| {
            let mut p = PathSamples::default();
            p.heard(a, 1, 100 * MS, None);
            // 150 ms of silence; then a's answer to what left at 50 ms,
            // 140 ms late.
            p.heard(a, 2, 250 * MS, Some((50 * MS, 140 * MS)));
            let (server, at, sent, late) = second;
            p.heard(server, 3, at, Some((sent, late)));
            p.stalls_between(0, 1_000 * MS)
        };
        let found = stalled((b, 251 * MS, 80 * MS, 120 * MS));
        assert_eq!(
            found,
            [PathStall {
                from_frame: 1,
                from_ns: 130 * MS,
                silent_ns: 150 * MS,
                to_frame: 2,
                to_ns: 250 * MS,
                witnesses: [(2, 140 * MS), (3, 120 * MS)],
            }]
        );
        // The same server late twice: its own business.
        assert!(stalled((a, 251 * MS, 80 * MS, 120 * MS)).is_empty());
        // Answering what left 10 ms apart: one moment, maybe two timers.
        assert!(stalled((b, 251 * MS, 60 * MS, 120 * MS)).is_empty());
        // Late by less than a stall's least.
        assert!(stalled((b, 251 * MS, 80 * MS, 15 * MS)).is_empty());
        // Past what the release handed over at once.
        assert!(stalled((b, 261 * MS, 80 * MS, 120 * MS)).is_empty());
        // The silence's own start bounds it: late witnesses after a short
        // silence prove no longer a stall than the silence.
        let mut p = PathSamples::default();
        p.heard(a, 1, 200 * MS, None);
        p.heard(a, 2, 250 * MS, Some((50 * MS, 140 * MS)));
        p.heard(b, 3, 251 * MS, Some((80 * MS, 120 * MS)));
        assert_eq!(p.stalls_between(0, 1_000 * MS)[0].from_ns, 200 * MS);
        // A QUIC or DNS datagram delivered in the silence ends it: the
        // link was up then (not one a client sent).
        let mut p = PathSamples::default();
        p.note(ip(6), a, 0, 40 * MS);
        p.heard(a, 1, 100 * MS, None);
        p.heard_datagram(ip(6), ip(99), 2, 150 * MS);
        p.heard_datagram(ip(99), ip(6), 3, 240 * MS);
        p.heard(a, 4, 250 * MS, Some((50 * MS, 140 * MS)));
        p.heard(b, 5, 251 * MS, Some((80 * MS, 120 * MS)));
        assert!(p.stalls_between(0, 1_000 * MS).is_empty());
        // A neighbour's multicast or broadcast in it does not: it crossed
        // the local link only.
        for group in ["239.255.255.250", "255.255.255.255", "ff02::fb"] {
            let mut p = PathSamples::default();
            p.note(ip(6), a, 0, 40 * MS);
            p.heard(a, 1, 100 * MS, None);
            p.heard_datagram(ip(99), group.parse().unwrap(), 3, 240 * MS);
            assert_eq!(p.last_heard_anywhere(), Some((1, 100 * MS)), "{group}");
        }
        // A silence shorter than a stall's least opens no release.
        let mut p = PathSamples::default();
        p.heard(a, 1, 240 * MS, None);
        p.heard(a, 2, 250 * MS, Some((50 * MS, 140 * MS)));
        p.heard(b, 3, 251 * MS, Some((80 * MS, 120 * MS)));
        assert!(p.stalls_between(0, 1_000 * MS).is_empty());
    }
}
