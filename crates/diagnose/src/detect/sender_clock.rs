//! A sender's own clock, read from the TCP timestamps on its segments.
//!
//! A segment's TSval is the sender's tick count when its stack sent it
//! (RFC 7323 5.4: a clock "at least approximately proportional to real
//! time", ticking every 1 ms to 1 s): Linux since 4.13, the BSDs, macOS
//! and Windows tick each millisecond; older Linux kernels at their HZ
//! (100, 250, 300 or 1000). Where the capture shows one sender's segments
//! over a second or more, the rate is the one of those under which the
//! fastest deliveries early and late in the connection agree (a wrong
//! rate drifts by its error times the time between them); then each
//! segment's delivery, capture time less its TSval's time, beyond the
//! fastest of that sender's, is how long the path (or the sender's own
//! queue) held it after it left, give or take a tick (TSval is whole
//! ticks) and the clocks' drift (100 ppm). That is what the capture times alone
//! cannot tell from the sender taking long: a server whose answer a
//! client's Wi-Fi held for 150 ms after a five-second idle spell (its
//! radio asleep) answered at once by its own clock (pypacker's mqtt.pcap:
//! four PINGRESPs 54-196 ms late, each within a tick of the PINGREQ's
//! arrival as the broker's 250 Hz TSvals place it).
//!
//! A clock must also keep causality: a segment left after the peer's
//! segment it acknowledges (or whose TSval it echoes) was captured (at
//! any capture point the peer's segment passes the capture before it
//! reaches the sender, or reaches it there), and before it was itself
//! captured; its tick must hold such a moment. A rate under which some
//! segment's tick ended before what it answers was seen, beyond the
//! clocks' drift, is no clock of this sender's at that scale (tcpdump's
//! mptcp-v0.pcap: an old MPTCP kernel's subflow whose TSval stood still
//! for 67 ms, ACKs of data 20 ms after its SYN-ACK stamped in that
//! SYN-ACK's 10 ms tick).
//!
//! No rate is taken when no candidate fits (a clock a middlebox
//! rewrites, a sender behind a load balancer whose hosts differ, too
//! short a span to tell the rates apart): then nothing is held.

use super::Facts;
use crate::model::Direction;
use rttdoc_analyze::uplink::RATES_HZ;
use rttdoc_analyze::{seq, SegmentRecord};
use rttdoc_wire::TcpFlags;

/// Time a sender's timestamped segments must span to tell rates apart.
const MIN_SPAN_NS: i64 = 1_000_000_000;
/// Ticks they must span.
const MIN_TICKS: i64 = 50;
/// Segments they must number.
const MIN_SEGMENTS: usize = 8;
/// How far from a pure ACK its sender's data is looked at for what the
/// path held ([`Facts::ack_held_after_sending_ns`]): the path's state changes
/// over seconds (a radio waking, a queue draining), not less.
const BESIDE_NS: i64 = 1_000_000_000;
/// And how many segments at most, each way.
const BESIDE_SEGMENTS: usize = 64;
/// Hosts' clocks run within this of real time (NTP-disciplined or not,
/// crystals stay well inside 100 ppm).
const DRIFT_PPM: i64 = 100;
/// The most a sender's tick rate can be off its standard one: NTP slews
/// a clock by 500 ppm at most, twice that for margin. A loosely read
/// clock's early and late fastest deliveries drifting apart faster than
/// this drifted by the path (a queue that came or went), not the rate.
const MAX_RATE_ERROR_PPM: i64 = 1000;
/// The most a sender's tick rate is taken to be off the standard one it
/// is read at: more than NTP slews a clock (nDPI's iphone.pcap: an
/// iPhone's fastest deliveries over 2.5 s agree at about 997 Hz, 0.3%
/// slow; a judge read another connection of it at about 1%), twice the
/// most seen for margin. A loosely read sole rate's early and late
/// fastest deliveries drifting apart by more than this over the span
/// drifted by the path: only this much of the drift can be the rate's.
const SEEN_RATE_ERROR_PPM: i64 = 20_000;

/// One sender's clock: its tick, and the fastest delivery its segments
/// showed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SenderClock {
    tick_ns: i64,
    /// The TSval the deliveries are counted from.
    origin: u32,
    /// The smallest capture time less TSval time over the sender's
    /// segments: the fastest delivery (plus part of a tick).
    fastest_ns: i64,
    /// What a delivery may exceed the fastest by without having been
    /// held: a tick (TSval is whole ticks) and what the clocks can drift
    /// apart over the connection. (Not the drift measured between its
    /// early and late fastest deliveries: that is mostly where in their
    /// ticks they were stamped, a tick at most, which the tick covers.)
    margin_ns: i64,
    /// What a hold by this clock must exceed besides the margin (a
    /// loosely read clock's: [`STAMP_SLACK_NS`] and its early and late
    /// fastest deliveries' drift, whichever reading is right; 0 for one
    /// found).
    slack_ns: i64,
    /// A loosely read clock's other reading: the rate under which its
    /// early and late fastest deliveries agree, as a correction to each
    /// delivery of `drift_ns` per `drift_over_ns` from `drift_from_ns`
    /// (0 for one found, whose thirds agree already).
    drift_ns: i64,
    drift_over_ns: i64,
    drift_from_ns: i64,
    /// The fastest delivery under that other reading.
    fastest_corrected_ns: i64,
    /// No other of the common rates kept time and causality over the
    /// segments: the rate is the sender's even where the clock is read
    /// loosely.
    sole_rate: bool,
}

/// How much earlier than it leaves (or than a capture on its own host
/// stamps it) a sender may stamp a segment: a loosely read clock's holds
/// begin beyond it. The lab's HAProxy on a 5 ms path: its ServerHello
/// carries the tick in which the ClientHello arrived, and was captured
/// on the server's side 4.2 ms after the ClientHello, 3.9 ms beyond that
/// tick (every other server segment within 0.9 ms): no path can have
/// held it, yet a short connection's margin of a tick and its drift
/// called 2.7 ms of the server's turn the path's. A clock read over a
/// second is left as it was judged (its holds, ones a wrong rate would
/// make, were right on every capture judged).
const STAMP_SLACK_NS: i64 = 5_000_000;

impl SenderClock {
    /// One tick of the clock.
    pub fn tick_ns(&self) -> i64 {
        self.tick_ns
    }

    /// The clock of the sender of `dir`'s segments in `timeline`, when its
    /// TSvals show one (module docs).
    pub fn find(timeline: &[SegmentRecord], dir: Direction) -> Option<SenderClock> {
        best_fit(timeline, dir, Span::Long)
    }

    /// The sender's clock where [`find`](Self::find) takes none: its
    /// segments span too little time (or too few ticks) to tell the rates
    /// apart (a connection of a few hundred milliseconds), or its fastest
    /// deliveries early and late drift apart by more than a tick. Of the
    /// rates that keep causality, the one under which they drift least
    /// (the commonest on a tie), its margin widened by that drift, and
    /// its holds by [`STAMP_SLACK_NS`] more. A wrong rate's error grows
    /// with the time between segments, as the drift does, so the widened
    /// margin keeps a hold under what the path held whichever of the
    /// fitting rates is the sender's.
    pub fn loosely(timeline: &[SegmentRecord], dir: Direction) -> Option<SenderClock> {
        best_fit(timeline, dir, Span::Short)
    }

    /// How long after it left the path (or the sender's queue) held `r`,
    /// a segment of this clock's sender, at least: its delivery beyond
    /// the fastest, less the margin; 0 for one without timestamps.
    pub fn held_ns(&self, r: &SegmentRecord) -> i64 {
        self.beyond_fastest(r)
            .map_or(0, |d| (d - self.margin_ns - self.slack_ns).max(0))
    }

    /// How long the path held `r` at most: its delivery beyond the
    /// fastest, plus a tick and the clocks' drift (the fastest delivery
    /// itself may have been stamped late in its tick); None without
    /// timestamps. A loosely read clock's early and late fastest
    /// deliveries drift apart, by the path's changes or by a rate that is
    /// not quite the sender's: its hold is the longer of the two
    /// readings, the standard rate's and the one under which they agree
    /// (a rate in between holds less than one of them: each delivery
    /// less the fastest is linear in the rate, their maximum convex),
    /// where that rate is one a clock can run at
    /// ([`MAX_RATE_ERROR_PPM`]); a faster drift is the path's, and the
    /// standard rate's reading (measured from the fastest delivery,
    /// which a path that changed leaves below every other's base) alone
    /// bounds it.
    /// nDPI's netflix 40: a server's 250 Hz ticks drifted 17.7 ms over
    /// three seconds, the last two segments after an idle spell; an
    /// answer 0.13 s from the fastest delivery and 6 ms beyond it was
    /// bounded at 28 ms with the whole drift added. netflix 41: the answer
    /// whose own 7 ms hold made the late third's fastest delivery, and so
    /// the drift, was bounded at 18 ms with it counted twice; under the
    /// rate that takes the drift away it was held 1.5 ms.
    pub fn held_at_most_ns(&self, r: &SegmentRecord) -> Option<i64> {
        let d = self.beyond_fastest(r)?;
        let corrected =
            d + self.fastest_ns - self.correction_ns(r.ts_ns) - self.fastest_corrected_ns;
        Some((d.max(corrected) + self.margin_ns).max(0))
    }

    /// What the other reading takes off a delivery captured at `at_ns`.
    fn correction_ns(&self, at_ns: i64) -> i64 {
        if self.drift_over_ns == 0 {
            return 0;
        }
        (self.drift_ns as i128 * (at_ns - self.drift_from_ns) as i128 / self.drift_over_ns as i128)
            as i64
    }

    /// The longest two of this sender's segments can have left apart:
    /// their ticks apart plus one, and the clocks' drift; None when `b`'s
    /// tick is before `a`'s or either has no timestamp.
    pub fn apart_at_most_ns(&self, a: &SegmentRecord, b: &SegmentRecord) -> Option<i64> {
        if !a.timestamped || !b.timestamped {
            return None;
        }
        let ticks = b.tsval.wrapping_sub(a.tsval) as i32 as i64;
        (ticks >= 0).then(|| ticks * self.tick_ns + self.margin_ns)
    }

    fn beyond_fastest(&self, r: &SegmentRecord) -> Option<i64> {
        r.timestamped.then(|| {
            let ticks = r.tsval.wrapping_sub(self.origin) as i32 as i64;
            r.ts_ns - ticks * self.tick_ns - self.fastest_ns
        })
    }
}

/// How much of a sender's clock its segments must show.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Span {
    /// Enough to tell the rates apart ([`MIN_SPAN_NS`], [`MIN_TICKS`],
    /// [`MIN_SEGMENTS`]), and the early and late deliveries must agree.
    Long,
    /// Less: [`SHORT_MIN_TICKS`] and [`SHORT_MIN_SEGMENTS`], any span;
    /// rates kept by causality alone, the early and late deliveries'
    /// drift (where both thirds have one) added to the margin. For
    /// bounds only: a long connection whose drift no rate keeps within
    /// a tick (a path whose fastest changed, a clock NTP slews) is read
    /// this way too.
    Short,
}

/// Segments a short span's candidates need.
const SHORT_MIN_SEGMENTS: usize = 4;
/// Ticks they must span (at 1 kHz, 10 ms).
const SHORT_MIN_TICKS: i64 = 10;

/// Of the tick rates under which the `dir` sender's TSvals in `timeline`
/// keep time and causality (module docs), the one under which its early
/// and late fastest deliveries drift apart least (the commonest on a tie).
fn best_fit(timeline: &[SegmentRecord], dir: Direction, need: Span) -> Option<SenderClock> {
    let mut points = timeline.iter().filter(|r| r.dir == dir && r.timestamped);
    let first = points.next()?;
    let origin = first.tsval;
    // Ticks since the first (a TSval a few ticks behind, a segment
    // reordered before the capture point, counts as negative).
    let samples: Vec<(i64, i64)> = std::iter::once(first)
        .chain(points)
        .map(|r| (r.ts_ns, r.tsval.wrapping_sub(origin) as i32 as i64))
        .collect();
    let (t0, t1) = (samples[0].0, samples[samples.len() - 1].0);
    let span = t1 - t0;
    let ticks = samples.iter().map(|&(_, v)| v).max().unwrap_or(0);
    let enough = match need {
        Span::Long => samples.len() >= MIN_SEGMENTS && span >= MIN_SPAN_NS && ticks >= MIN_TICKS,
        Span::Short => samples.len() >= SHORT_MIN_SEGMENTS && span > 0 && ticks >= SHORT_MIN_TICKS,
    };
    if !enough {
        return None;
    }
    // The rate the ticks average over the span (no more than twice a
    // candidate's for it to be judged: a path that held segments only
    // lengthens the span, so the average may fall far below the
    // sender's rate, never far above it; nDPI's netflix 46, a 1 kHz
    // server's burst stamped in one tick and queued 600 ms, averaged
    // 200 Hz), and what the clocks can drift apart over it.
    let average_hz = ticks * 1_000_000_000 / span;
    let drift_ns = span / 1_000_000 * DRIFT_PPM;
    // The fastest delivery in the first and the last third of the
    // span, under each rate: the right one leaves them a tick and
    // the clocks' drift apart at most.
    let (early_end, late_start) = (t0 + span / 3, t1 - span / 3);
    // Each of the sender's segments with the earliest moment it can
    // have left: when the peer's segment it acknowledges or echoes was
    // first captured.
    let prompted = prompts(timeline, dir, origin);
    // Capture times are exact to the microsecond; the clocks drift.
    let slack = 500_000 + drift_ns;
    let mut best: Option<(i64, SenderClock, bool)> = None;
    let mut fitting = 0;
    for hz in RATES_HZ {
        let tick_ns = 1_000_000_000 / hz;
        if average_hz > hz * 2 {
            continue;
        }
        let delivery = |(t, v): (i64, i64)| t - v * tick_ns;
        // (The fastest delivery in a stretch, and when it was captured.)
        let fastest_in = |from: i64, to: i64| {
            samples
                .iter()
                .filter(|&&(t, _)| t >= from && t <= to)
                .map(|&s| (delivery(s), s.0))
                .min()
        };
        let thirds = fastest_in(t0, early_end).zip(fastest_in(late_start, t1));
        if thirds.is_none() && need == Span::Long {
            continue;
        }
        let drift = thirds.map_or(0, |((early, _), (late, _))| (late - early).abs());
        // A short span's rates are not told apart by their drift: a
        // queue's changes between its thirds outweigh it (nDPI's weibo
        // 16: 19 ms over half a second). The drift, path's or clock's,
        // is read both ways instead.
        if drift > tick_ns + drift_ns && need == Span::Long {
            continue;
        }
        let Some((fastest_ns, _)) = fastest_in(t0, t1) else {
            continue;
        };
        // Every tick's end (in the fastest delivery's terms) after
        // what its segment answers was seen.
        if prompted
            .iter()
            .any(|&(v, seen)| seen - (v + 1) * tick_ns > fastest_ns + slack)
        {
            continue;
        }
        let mut clock = SenderClock {
            tick_ns,
            origin,
            fastest_ns,
            margin_ns: tick_ns + drift_ns,
            slack_ns: 0,
            drift_ns: 0,
            drift_over_ns: 0,
            drift_from_ns: 0,
            fastest_corrected_ns: fastest_ns,
            sole_rate: false,
        };
        if need == Span::Short {
            clock.slack_ns = STAMP_SLACK_NS + drift;
            if let Some(((early, early_at), (late, late_at))) = thirds {
                // (A rate further off its standard than a clock runs, NTP
                // slewing it included, is no clock's: that drift is the
                // path's, and the standard rate's reading stands alone.)
                let plausible = (late - early).abs() as i128 * 1_000_000
                    <= MAX_RATE_ERROR_PPM as i128 * (late_at - early_at).abs() as i128;
                if late_at != early_at && plausible {
                    clock.drift_ns = late - early;
                    clock.drift_over_ns = late_at - early_at;
                    clock.drift_from_ns = early_at;
                    clock.fastest_corrected_ns = samples
                        .iter()
                        .map(|&s| delivery(s) - clock.correction_ns(s.0))
                        .min()
                        .unwrap_or(fastest_ns);
                }
            }
        }
        // A rate's error drifts the fastest deliveries in proportion to
        // the time between them; a queue that came or went moves one
        // third's alone. The middle third's fastest delivery level with
        // the early or the late one's shows the drift is the path's.
        let stepped = thirds.zip(fastest_in(early_end, late_start)).is_some_and(
            |(((early, _), (late, _)), (middle, _))| {
                let level = tick_ns + drift_ns;
                (middle - early).abs() <= level || (middle - late).abs() <= level
            },
        );
        fitting += 1;
        if best.is_none_or(|(d, _, _)| drift < d) {
            best = Some((drift, clock, stepped));
        }
    }
    best.map(|(drift, clock, stepped)| {
        let sole_rate = fitting == 1;
        // The only rate that keeps causality is the sender's, give or
        // take what a clock runs off its standard; where the drift is a
        // step, not a slope, the path's (a queue came or went), it takes
        // no more than that rate's share off a hold (nDPI's reddit 43: a
        // server flight held 112 ms on a phone's downlink, the
        // connection's last answer 68 ms, its middle level with its
        // start; the whole drift in the slack called the flight 38 ms
        // held). A sole rate whose middle third shows nothing keeps the
        // whole drift: a clock off its standard rate (or a rate standing
        // in for one that is none) drifts as a slope.
        let slack_ns = if sole_rate && stepped && need == Span::Short {
            STAMP_SLACK_NS + drift.min(span / 1_000_000 * SEEN_RATE_ERROR_PPM)
        } else {
            clock.slack_ns
        };
        SenderClock {
            sole_rate,
            slack_ns,
            ..clock
        }
    })
}

/// The `dir` sender's segments that answer one of the peer's: their
/// ticks since `origin`, and when the peer's segment they acknowledge
/// (the first whose data, SYN or FIN reached the ACK) or echo (the first
/// with that TSval) was captured, the later of the two.
/// (A copy that arrived was captured no earlier than the first: the bound
/// holds whichever copy it was.) The peer's highest end and TSval so far
/// only grow in capture order, so each lookup is a binary search.
fn prompts(timeline: &[SegmentRecord], dir: Direction, origin: u32) -> Vec<(i64, i64)> {
    // The peer's segments so far: capture time, highest end and highest
    // TSval up to then, and where the segment began.
    type Seen = (i64, Option<u32>, Option<u32>, u32, Option<u32>);
    let mut peer: Vec<Seen> = Vec::new();
    let mut out = Vec::new();
    for r in timeline {
        if r.dir != dir {
            let (mut end, mut tsval) = peer.last().map_or((None, None), |p| (p.1, p.2));
            if r.len > 0 || r.flags.intersects(TcpFlags::SYN | TcpFlags::FIN) {
                end = Some(end.map_or(r.end, |e| seq::max(e, r.end)));
            }
            if r.timestamped {
                tsval = Some(tsval.map_or(r.tsval, |v| seq::max(v, r.tsval)));
            }
            peer.push((r.ts_ns, end, tsval, r.seq, r.timestamped.then_some(r.tsval)));
            continue;
        }
        if !r.timestamped {
            continue;
        }
        let first_reaching = |below: &dyn Fn(&Seen) -> bool| peer.get(peer.partition_point(below));
        // (The first segment to reach the ACK must carry bytes below it:
        // an ACK of where the peer began acknowledges none of them.)
        let by_ack = r
            .ack_set
            .then(|| first_reaching(&|p| p.1.is_none_or(|e| seq::lt(e, r.ack))))
            .flatten()
            .filter(|p| seq::lt(p.3, r.ack))
            .map(|p| p.0);
        let by_echo = (r.tsecr != 0)
            .then(|| first_reaching(&|p| p.2.is_none_or(|v| seq::lt(v, r.tsecr))))
            .flatten()
            .filter(|p| p.4 == Some(r.tsecr))
            .map(|p| p.0);
        if let Some(seen) = by_ack.into_iter().chain(by_echo).max() {
            out.push((r.tsval.wrapping_sub(origin) as i32 as i64, seen));
        }
    }
    out
}

impl Facts<'_> {
    /// How long the path held `r` after its sender sent it, by the
    /// sender's own clock ([`SenderClock`]), read loosely where `find`
    /// takes none (a short connection's: nDPI's tumblr 42, a phone's
    /// downlink held a ServerHello 32 ms beyond the server's SYN-ACK
    /// behind another connection's download, and the server's turn
    /// was taken for 62 ms where its ticks give it 20 at most); 0 where
    /// neither reads one.
    ///
    /// A pure ACK's TSval may be older than the ACK: a stack's
    /// delayed-ACK timer can stamp it with the tick the stack last read its
    /// clock at, when the data it acknowledges arrived (dnscap's
    /// dnso1tcp.pcap: a resolver's 40 ms delayed ACKs each stamped within
    /// a tick of the query's arrival, its data and its immediate ACKs on
    /// time), so its lateness by that TSval is the timer's as much as the
    /// path's. A path queue does not pick packets by what prompted them:
    /// a pure ACK is held only as far as the sender's data sent beside it
    /// (the nearest before and after, within a second) was held too, and
    /// not at all where no data was.
    pub fn held_after_sending_ns(&self, r: &SegmentRecord) -> i64 {
        self.any_clock(r.dir).map_or(0, |clock| clock.held_ns(r))
    }

    /// The longest `a` and `b`, two segments of one sender (`b` sent
    /// after `a`), can have left apart by that sender's own clock: their
    /// ticks apart, plus one (each stamped somewhere in its tick), where
    /// the clock's rate is known: found over the connection, or read
    /// loosely where no other common rate fits (a loosely read rate
    /// another would have fitted may be wrong, and the bound with it);
    /// None otherwise. A pure ACK's TSval may be older than the ACK (a
    /// delayed-ACK timer's stamp): that only widens the bound from it.
    pub fn sent_apart_at_most_ns(&self, a: &SegmentRecord, b: &SegmentRecord) -> Option<i64> {
        if a.dir != b.dir {
            return None;
        }
        self.sender_clock(a.dir)
            .or_else(|| self.any_clock(a.dir).filter(|c| c.sole_rate))?
            .apart_at_most_ns(a, b)
    }

    /// How long the path held the pure ACK `a` after its sender sent it,
    /// where the question is whether its sender's delayed-ACK timer held
    /// it first. Such an ACK's TSval may be older than the ACK: a stack's
    /// timer can stamp it with the tick the stack last read its clock at,
    /// when the data it acknowledges arrived (dnscap's dnso1tcp.pcap: a
    /// resolver's 40 ms delayed ACKs each stamped within a tick of the
    /// query's arrival, its data and its immediate ACKs on time), so its
    /// lateness by that TSval is the timer's as much as the path's. A path
    /// queue does not pick packets by what prompted them: the ACK is held
    /// only as far as the data its sender sent beside it (the nearest
    /// before and after, within a second) was held too, and not at all
    /// where it sent none.
    pub fn ack_held_after_sending_ns(&self, a: &SegmentRecord) -> i64 {
        let Some(clock) = self.sender_clock(a.dir) else {
            return 0;
        };
        let held = clock.held_ns(a);
        if held == 0 || !super::pure_ack(a) {
            return held;
        }
        held.min(self.data_held_beside(&clock, a))
    }

    /// The longest the path held the data `r`'s sender sent nearest
    /// before and after it (each within [`BESIDE_NS`] and
    /// [`BESIDE_SEGMENTS`] of it); 0 where it sent none.
    fn data_held_beside(&self, clock: &SenderClock, r: &SegmentRecord) -> i64 {
        let at = self.timeline.partition_point(|x| x.frame < r.frame);
        let (before, after) = self.timeline.split_at(at);
        let near = |x: &&SegmentRecord| (x.ts_ns - r.ts_ns).abs() <= BESIDE_NS;
        let is_data = |x: &&SegmentRecord| x.dir == r.dir && x.len > 0 && x.timestamped;
        let previous = before
            .iter()
            .rev()
            .take(BESIDE_SEGMENTS)
            .take_while(near)
            .find(is_data);
        let next = after
            .iter()
            .skip(1)
            .take(BESIDE_SEGMENTS)
            .take_while(near)
            .find(is_data);
        previous
            .into_iter()
            .chain(next)
            .map(|d| clock.held_ns(d))
            .max()
            .unwrap_or(0)
    }

    /// The most the path can have held `r` after its sender sent it, by
    /// the sender's own clock; where no clock is found, by the loosely
    /// read one ([`SenderClock::loosely`]): a short connection's answer is
    /// bounded all the same (nDPI's netflix 44: 7 server segments over
    /// 214 ms, its 53 ticks read at 250 Hz), and a long one's whose
    /// fastest deliveries drifted 2.5 ms in 7 s (PcapPlusPlus's
    /// example.pcap 8, 1 kHz). None where neither reads one.
    pub fn held_after_sending_at_most_ns(&self, r: &SegmentRecord) -> Option<i64> {
        self.any_clock(r.dir)?.held_at_most_ns(r)
    }

    /// `held`, what else says the path held `r`, no more than its
    /// sender's clock allows ([`held_after_sending_at_most_ns`]); the
    /// clock is read only where there is something to bound (most
    /// answers were held by nothing).
    ///
    /// [`held_after_sending_at_most_ns`]: Self::held_after_sending_at_most_ns
    pub fn held_within_clock(&self, r: &SegmentRecord, held: i64) -> i64 {
        if held <= 0 {
            return held;
        }
        held.min(self.held_after_sending_at_most_ns(r).unwrap_or(i64::MAX))
    }

    pub(super) fn sender_clock(&self, dir: Direction) -> Option<SenderClock> {
        *self.sender_clock_views[dir.index()].get_or_init(|| SenderClock::find(self.timeline, dir))
    }

    /// The sender's clock as found, or else as read loosely (each read
    /// once).
    pub(super) fn any_clock(&self, dir: Direction) -> Option<SenderClock> {
        self.sender_clock(dir).or_else(|| {
            *self.sender_clock_loosely[dir.index()]
                .get_or_init(|| SenderClock::loosely(self.timeline, dir))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Direction::ServerToClient as S;

    /// A server segment sent at `sent_ms` by a clock of `hz` (TSval from
    /// 5000), captured `transit_ms` later.
    fn seg(frame: u64, sent_ms: f64, transit_ms: f64, hz: f64) -> SegmentRecord {
        SegmentRecord {
            frame,
            ts_ns: ((sent_ms + transit_ms) * 1e6).round() as i64,
            dir: S,
            seq: 1,
            end: 1,
            ack: 1,
            ack_set: true,
            len: 0,
            flags: rttdoc_wire::TcpFlags::ACK,
            window: 65535,
            new_data: false,
            retransmission: false,
            overtaken: false,
            probe: false,
            dsack: None,
            tsval: 5000u32.wrapping_add((sent_ms * hz / 1000.0).floor() as u32),
            tsecr: 1,
            timestamped: true,
        }
    }

    /// A segment every 300 ms for 6 s, each 20 ms on the path, the one
    /// sent at 3 s held 150 ms more.
    fn series(hz: f64) -> Vec<SegmentRecord> {
        (0..20u64)
            .map(|i| {
                let held = if i == 10 { 150.0 } else { 0.0 };
                seg(i + 1, 17.0 + 300.0 * i as f64, 20.0 + held, hz)
            })
            .collect()
    }

    #[test]
    fn each_common_tick_rate_is_told_apart_and_a_hold_after_sending_shows() {
        for (hz, tick_ms) in [(1000.0, 1.0), (250.0, 4.0), (100.0, 10.0)] {
            let timeline = series(hz);
            let clock = SenderClock::find(&timeline, S).expect("a clock");
            assert_eq!(clock.tick_ns, (tick_ms * 1e6) as i64, "{hz} Hz");
            // The held segment: 150 ms, less at most a tick and a
            // tick's worth of quantisation.
            let held = clock.held_ns(&timeline[10]) as f64 / 1e6;
            assert!(
                (150.0 - 2.0 * tick_ms..=150.0).contains(&held),
                "{hz} Hz: {held}"
            );
            // The others were not held.
            for r in timeline.iter().filter(|r| r.frame != 11) {
                assert_eq!(clock.held_ns(r), 0, "{hz} Hz, frame {}", r.frame);
            }
        }
    }

    #[test]
    fn no_clock_from_too_short_a_span_or_tsvals_that_do_not_keep_time() {
        // Half a second: rates a fifth apart cannot be told apart.
        let short: Vec<_> = series(1000.0).into_iter().take(2).collect();
        assert_eq!(SenderClock::find(&short, S), None);
        // A TSval a middlebox sets at random keeps no time.
        let mut scrambled = series(1000.0);
        for (i, r) in scrambled.iter_mut().enumerate() {
            r.tsval = 5000 + ((i as u32 * 7919) % 13) * 500;
        }
        assert_eq!(SenderClock::find(&scrambled, S), None);
        // Nor does one that stands still.
        let mut still = series(1000.0);
        for r in still.iter_mut() {
            r.tsval = 5000;
        }
        assert_eq!(SenderClock::find(&still, S), None);
    }

    #[test]
    fn a_tick_that_ended_before_what_its_segment_acknowledges_was_seen_is_no_clock() {
        // 100 Hz; then the peer's 24 bytes captured at 3.1 s, and the
        // sender's ACK of them captured at once but stamped with the
        // tick of 3.0 s (a TSval that stood still): it left before the
        // bytes it acknowledges were seen.
        let mut timeline = series(100.0);
        let mut data = seg(100, 3100.0, 0.0, 100.0);
        data.dir = Direction::ClientToServer;
        (data.seq, data.end, data.len) = (1, 25, 24);
        let mut ack = seg(101, 3100.5, 0.0, 100.0);
        ack.ack = 25;
        ack.tsval = 5000 + 300;
        let at = timeline.iter().position(|r| r.ts_ns > data.ts_ns).unwrap();
        timeline.insert(at, ack);
        timeline.insert(at, data);
        assert_eq!(SenderClock::find(&timeline, S), None);
        // Stamped in its own tick, it is the clock it was.
        timeline[at + 1].tsval = 5000 + 310;
        assert!(SenderClock::find(&timeline, S).is_some());
    }

    /// A segment every `gap_ms` for `n` segments, each 20 ms on the path,
    /// the last held `held_ms` more.
    fn short_series(hz: f64, n: u64, gap_ms: f64, held_ms: f64) -> Vec<SegmentRecord> {
        (0..n)
            .map(|i| {
                let held = if i == n - 1 { held_ms } else { 0.0 };
                seg(i + 1, 17.0 + gap_ms * i as f64, 20.0 + held, hz)
            })
            .collect()
    }

    #[test]
    fn a_short_connections_clock_is_read_loosely_for_bounds() {
        // 6 segments over 250 ms: too short for `find`, read loosely at
        // the commonest rate that fits; the last segment, held 30 ms,
        // was held at most that plus the margin, the others a margin.
        for (hz, tick_ms) in [(1000.0, 1.0), (250.0, 4.0)] {
            let timeline = short_series(hz, 6, 50.0, 30.0);
            assert_eq!(SenderClock::find(&timeline, S), None, "{hz} Hz");
            let clock = SenderClock::loosely(&timeline, S).expect("a loose clock");
            let most = clock.held_at_most_ns(&timeline[5]).unwrap() as f64 / 1e6;
            assert!(
                (30.0..=30.0 + 2.0 * tick_ms).contains(&most),
                "{hz} Hz: {most}"
            );
            let most = clock.held_at_most_ns(&timeline[2]).unwrap() as f64 / 1e6;
            assert!(most <= 2.0 * tick_ms, "{hz} Hz: {most}");
        }
        // Three segments tell nothing.
        let few = short_series(1000.0, 3, 50.0, 0.0);
        assert_eq!(SenderClock::loosely(&few, S), None);
    }

    #[test]
    fn a_loose_clocks_drift_bounds_a_segment_by_its_distance_from_the_fastest() {
        // nDPI's netflix 40: 250 Hz, a segment every 100 ms for a second,
        // then two after an idle spell, 3 s in, delivered 17 ms slower (the
        // path's, or a wrong rate's): too much drift for `find`. The
        // segment 100 ms after the fastest, 6 ms beyond it, was held at
        // most that plus a tick and the drift a wrong rate gathers over
        // 100 ms, not the whole 17 ms.
        let hz = 250.0;
        let mut timeline: Vec<_> = (0..10u64)
            .map(|i| {
                let extra = if i == 3 { 6.0 } else { 0.0 };
                seg(i + 1, 17.0 + 100.0 * i as f64, 20.0 + extra, hz)
            })
            .collect();
        timeline.push(seg(11, 3017.0, 37.0, hz));
        timeline.push(seg(12, 3018.0, 37.0, hz));
        assert_eq!(SenderClock::find(&timeline, S), None);
        let clock = SenderClock::loosely(&timeline, S).expect("a loose clock");
        let most = clock.held_at_most_ns(&timeline[3]).unwrap() as f64 / 1e6;
        assert!((6.0..=6.0 + 2.0 * 4.0 + 1.0).contains(&most), "{most}");
        // The late ones: the whole drift.
        let most = clock.held_at_most_ns(&timeline[11]).unwrap() as f64 / 1e6;
        assert!(most >= 17.0, "{most}");
    }

    #[test]
    fn a_segment_whose_own_hold_is_the_drift_is_not_bounded_by_it_twice() {
        // nDPI's netflix 41: 250 Hz, a segment every 100 ms for 0.6 s on
        // an idle path, then an answer at 1.1 s held 7 ms and the rest of
        // it queued 30-200 ms behind it: the late third's fastest delivery
        // is the answer's own, so the thirds drift 7 ms (too much for
        // `find`). Under the standard rate it was held 7 ms, under the one
        // that takes the drift away none: at most 7 ms and a tick, not
        // 7 ms, a tick and the drift again.
        let hz = 250.0;
        let mut timeline: Vec<_> = (0..7u64)
            .map(|i| seg(i + 1, 17.0 + 100.0 * i as f64, 20.0, hz))
            .collect();
        timeline.push(seg(8, 1100.0, 27.0, hz));
        for (i, held) in [30.0, 75.0, 115.0, 150.0, 200.0].into_iter().enumerate() {
            timeline.push(seg(9 + i as u64, 1101.0, 20.0 + held, hz));
        }
        assert_eq!(SenderClock::find(&timeline, S), None);
        let clock = SenderClock::loosely(&timeline, S).expect("a loose clock");
        let most = clock.held_at_most_ns(&timeline[7]).unwrap() as f64 / 1e6;
        assert!((7.0..=7.0 + 4.0 + 1.0).contains(&most), "{most}");
        // The queued ones behind it: all their hold.
        let most = clock.held_at_most_ns(&timeline[12]).unwrap() as f64 / 1e6;
        assert!(most >= 200.0, "{most}");
    }

    #[test]
    fn a_short_connections_hold_is_taken_beyond_its_margin_and_a_stamp_slack() {
        // The last segment held 30 ms: held at least that less a tick,
        // the quantisation and the stamp slack (a sender may stamp before
        // it sends), no more than it was held.
        for (hz, tick_ms) in [(1000.0, 1.0), (250.0, 4.0)] {
            let timeline = short_series(hz, 6, 50.0, 30.0);
            let clock = SenderClock::loosely(&timeline, S).expect("a loose clock");
            let held = clock.held_ns(&timeline[5]) as f64 / 1e6;
            let slack = STAMP_SLACK_NS as f64 / 1e6;
            assert!(
                (30.0 - slack - 2.0 * tick_ms..=30.0).contains(&held),
                "{hz} Hz: {held}"
            );
        }
        // Stamped 3.9 ms before it was captured on its own host (the
        // lab's ServerHello): no hold.
        let early = short_series(1000.0, 6, 50.0, 3.9);
        let clock = SenderClock::loosely(&early, S).expect("a loose clock");
        assert_eq!(clock.held_ns(&early[5]), 0);
        // A clock found over a second takes its holds beyond its margin
        // alone.
        let long = series(1000.0);
        let clock = SenderClock::find(&long, S).expect("a clock");
        assert!(clock.held_ns(&long[10]) >= 148_000_000);
    }

    #[test]
    fn a_long_connection_whose_fastest_deliveries_drift_is_read_loosely_with_the_drift() {
        // 1 kHz over 6 s, the path 3 ms faster in its last third: no rate
        // keeps the early and late fastest deliveries within a tick, so
        // `find` takes none; read loosely, the drift is in the margin, so
        // no segment is bounded below what it may have been held.
        let mut timeline = series(1000.0);
        for r in timeline.iter_mut().skip(14) {
            r.ts_ns -= 3_000_000;
        }
        assert_eq!(SenderClock::find(&timeline, S), None);
        let clock = SenderClock::loosely(&timeline, S).expect("a loose clock");
        for r in &timeline[..14] {
            let most = clock.held_at_most_ns(r).unwrap();
            let least = if r.frame == 11 {
                150_000_000
            } else {
                3_000_000
            };
            assert!(most >= least, "frame {}: {most}", r.frame);
        }
    }

    #[test]
    fn two_segments_left_apart_at_most_their_ticks_and_one_and_a_sole_rate_is_known() {
        // Found over six seconds at 100 Hz: segments 4 ticks apart left
        // 50 ms apart at most, however far apart the capture saw them.
        let timeline = series(100.0);
        let clock = SenderClock::find(&timeline, S).expect("a clock");
        let (mut a, mut b) = (timeline[3], timeline[3]);
        b.tsval = a.tsval.wrapping_add(4);
        b.ts_ns += 2_000_000_000;
        let most = clock.apart_at_most_ns(&a, &b).unwrap() as f64 / 1e6;
        assert!((50.0..51.0).contains(&most), "{most}");
        a.timestamped = false;
        assert_eq!(clock.apart_at_most_ns(&a, &b), None);
        // Read loosely with nothing to rule a rate out (no segment of the
        // peer's it answers): at 1 kHz over 250 ms, 500 Hz fits too, and
        // the rate is not known (a_queue_that_spreads_... has one that is).
        let fast = short_series(1000.0, 6, 50.0, 0.0);
        assert!(
            !SenderClock::loosely(&fast, S)
                .expect("a loose clock")
                .sole_rate
        );
    }

    /// The client's SYN, captured 19.5 ms after 0, just before a server
    /// SYN-ACK sent at 0 and captured 20 ms later, which acknowledges it
    /// (as every server segment of `seg` does): a rate slower than the
    /// server's puts that SYN-ACK's tick before it.
    fn client_syn() -> SegmentRecord {
        let mut syn = seg(0, 0.0, 19.5, 1000.0);
        syn.dir = Direction::ClientToServer;
        syn.flags = TcpFlags::SYN;
        syn.seq = 0;
        syn.timestamped = false;
        syn
    }

    #[test]
    fn a_queue_that_spreads_one_ticks_segments_does_not_hide_the_rate() {
        // nDPI's netflix 46: a 1 kHz server's answer on time (its first
        // byte 39 ticks after the SYN-ACK, 39 ms later at the capture),
        // then a burst stamped in that tick queued over 600 ms on the
        // client's downlink, and a few more later: 200 ticks over a
        // second, an average of 200 Hz. The queue only lengthens the
        // capture's span, never the ticks': a rate above twice the
        // average is still the sender's, and the answer was held a tick
        // at most.
        let hz = 1000.0;
        let mut timeline = vec![
            client_syn(),
            seg(1, 0.0, 20.0, hz),
            seg(2, 38.0, 20.0, hz),
            seg(3, 39.0, 20.0, hz),
        ];
        for i in 0..15u64 {
            timeline.push(seg(4 + i, 39.0, 20.0 + 40.0 * (i + 1) as f64, hz));
        }
        for i in 0..4u64 {
            let sent = 100.0 + 33.0 * i as f64;
            timeline.push(seg(19 + i, sent, 20.0 + 700.0 - sent + 60.0 * i as f64, hz));
        }
        let clock = SenderClock::loosely(&timeline, S).expect("a loose clock");
        assert_eq!(clock.tick_ns, 1_000_000);
        // (No other rate keeps the SYN-ACK after the SYN: the rate is
        // known.)
        assert!(clock.sole_rate);
        // The drift, 600 ms in 700, is the queue's, not a clock's.
        let most = clock.held_at_most_ns(&timeline[3]).unwrap() as f64 / 1e6;
        assert!(most <= 2.0, "{most}");
    }

    /// A 1 kHz server over 600 ms (nDPI's reddit 43): its SYN-ACK and
    /// the answers in the middle 20 ms on the path; its handshake flight,
    /// sent 30 ms in, held 112 ms more; its last answer, sent at 540 ms,
    /// held 68 ms more (`sloped`: the answers' transit grows in step with
    /// their time instead, as a clock running off its rate shows it).
    fn stepped_series(sloped: bool) -> Vec<SegmentRecord> {
        let hz = 1000.0;
        let transit = |sent: f64| match sloped {
            true => 20.0 + 68.0 * sent / 540.0,
            false => 20.0,
        };
        let mut timeline = vec![client_syn(), seg(1, 0.0, 20.0, hz)];
        for i in 0..4 {
            timeline.push(seg(2 + i, 30.0, 20.0 + 112.0, hz));
        }
        for i in 0..6u64 {
            let sent = 200.0 + 12.0 * i as f64;
            timeline.push(seg(6 + i, sent, transit(sent), hz));
        }
        for i in 0..5 {
            timeline.push(seg(12 + i, 540.0, 20.0 + 68.0, hz));
        }
        timeline.sort_by_key(|r| r.ts_ns);
        timeline
    }

    #[test]
    fn a_short_connections_late_queue_is_the_paths_and_takes_only_a_rates_share_off_a_hold() {
        let timeline = stepped_series(false);
        let clock = SenderClock::loosely(&timeline, S).expect("a loose clock");
        assert_eq!(clock.tick_ns, 1_000_000);
        assert!(clock.sole_rate);
        // The early and late fastest deliveries 68 ms apart, the middle
        // level with the start: a queue came, no clock drifts so. The
        // flight was held 112 ms, less a tick, the stamp slack and what a
        // rate 2% off its standard drifts over the 0.6 s.
        let flight = timeline.iter().find(|r| r.frame == 2).unwrap();
        let held = clock.held_ns(flight) as f64 / 1e6;
        let span = (timeline[timeline.len() - 1].ts_ns - timeline[1].ts_ns) as f64 / 1e6;
        let least = 112.0 - 1.1 - STAMP_SLACK_NS as f64 / 1e6 - span * 0.02;
        assert!((least..=112.0).contains(&held), "{held} (at least {least})");
        // The same drift as a slope: the rate's error, whichever it is,
        // is the whole drift's, and comes off the hold.
        let sloped = stepped_series(true);
        let clock = SenderClock::loosely(&sloped, S).expect("a loose clock");
        let flight = sloped.iter().find(|r| r.frame == 2).unwrap();
        let held = clock.held_ns(flight) as f64 / 1e6;
        assert!(held <= 112.0 - 68.0 + 1.0, "{held}");
    }

    #[test]
    fn the_other_directions_segments_and_unstamped_ones_are_not_read() {
        let timeline = series(250.0);
        assert_eq!(
            SenderClock::find(&timeline, Direction::ClientToServer),
            None
        );
        let clock = SenderClock::find(&timeline, S).expect("a clock");
        let mut unstamped = timeline[10];
        unstamped.timestamped = false;
        assert_eq!(clock.held_ns(&unstamped), 0);
    }
}
