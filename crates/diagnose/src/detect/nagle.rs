//! Nagle holds: `nagle_hold`, `nagle_delayed_ack`, `write_write_read`.
//!
//! Mechanism (RFC 896, Linux `tcp_nagle_check`): with Nagle on, a sender
//! does not send a sub-MSS segment while an earlier sub-MSS segment is
//! unacknowledged; the held data leaves when the ACK arrives. It costs a
//! round trip, or the receiver's delayed-ACK timeout (40 ms Linux, 200 ms
//! Windows/AIX) when the receiver has nothing to send back.
//!
//! Signature, on the sender's clock (its own packets as captured, the
//! peer's shifted by the sender's side of the RTT), for each new data
//! segment K of at most one MSS:
//! - the sender was silent for at least max(2 ms, RTT/2) before K,
//! - a pure ACK A from the receiver arrived during that silence and K left
//!   within max(1 ms, RTT/20) after it (released by A; a data segment from
//!   the receiver would make K a reply, not a release; but the server's
//!   TLS handshake flight, outside every answer, releases the rest of a
//!   client request begun before it: a false-started request's tail held
//!   behind the client's own Finished, which that flight acknowledged,
//!   costs the round trip from the flight's leaving to the tail's arrival,
//!   the server having been in its handshake until then),
//! - A acknowledged the last unacknowledged sub-MSS segment (what Nagle
//!   waits for; full-size segments may still be in flight), and fewer than
//!   8 MSS were in flight from the segment before K until A (so not the
//!   congestion window: see `initcwnd_limited`), and the segment before K
//!   left at least an MSS of the receiver's window free (else the window
//!   held K: `rwnd_limited`); before the receiver's first segment without
//!   SYN, its window is the one its SYN or SYN-ACK announced (unscaled,
//!   RFC 7323 2.2).
//!
//! - K begins where the sender's previous captured segment ended: bytes
//!   between them went unseen, sent during the "silence" (capture loss),
//! - the sender was not seen, earlier, sending a sub-MSS segment while an
//!   earlier sub-MSS segment of its own was unacknowledged (its ACK
//!   arriving later than the clock shift's error allows; a FIN goes
//!   regardless): Nagle never does that, so such a sender has it off
//!   (TCP_NODELAY), or its segments were larger than the capture shows
//!   (cut and their IP length rewritten by a tool such as `tcprewrite
//!   --mtu-trunc`). Not a write's tail, right behind its full-sized
//!   segments (nothing from the peer between): some stacks send it with
//!   them whatever is unacknowledged (NetworkML's 2011 trace: a server
//!   that held each small write behind a 4-byte head until a 200 ms
//!   delayed ACK sent 588-byte tails behind 1460-byte segments at once).
//!
//! - no FIN of another connection between the same two hosts (a sibling)
//!   reached or left the sender's host between the ACK's arrival and K,
//!   within the release's tolerance of K: then the application wrote K
//!   when that connection closed (an FTP server's `226` once its data
//!   connection is closed), and the ACK released nothing (closes.rs in
//!   rttdoc-analyze).
//! - a server segment that began a tick of the server's own timer (whose
//!   ticks mostly leave at no ACK's arrival: server_think_time.rs) left
//!   when the timer said: a stream's writer that pauses two round trips
//!   between pieces is released by no ACK, however close one came.
//! - a server's push (data outside every answer, while no answer is
//!   waited for) counts only when no sibling's data from the client's
//!   address reached the server during the silence less than the shortest
//!   hold before K: the server may have written K when that data came (an
//!   MQTT broker passing on a message another connection published), and
//!   waited too little for the ACK to call it a hold.
//! - a server segment outside every answer (a TLS 1.3 server's second
//!   session ticket, written on its own), held while an exchange waited
//!   for its answer, counts only when the answer was queued behind it
//!   (leaving within the release's tolerance after it): then the hold
//!   delayed the answer's first byte. An answer the server wrote later,
//!   at its own pace, waited for nothing the hold kept back.
//!
//! Kinds: `nagle_delayed_ack` when the receiver held A back for 25 ms or
//! more after the data it acknowledges reached it (a delayed-ACK timer);
//! otherwise `write_write_read` when K continues a plain-text response
//! whose first part went out at once (a second write waiting for the ACK
//! of the first), else `nagle_hold` (e.g. the end of a TLS server flight).
//! A client's chain of holds (K's segment the previous one of the next
//! held segment, the two within an MSS: the next was written after K
//! left, else they would have left as one) costs its last hold alone: the
//! server, sending nothing but ACKs meanwhile, waited for the request's
//! end (a command typed a key at a time: Beats' ipv6.pcap, an SMTP `helo`
//! over telnet, whose last two keys were held). A server's chain may be a
//! feed read message by message: each of its holds counts.
//! Cost: the silence before K, summed per connection and kind; when K
//! begins the answer to the peer's turn (a client's next request after an
//! answer, a server's answer to a request) and acknowledges it, K was
//! written no earlier than that turn arrived; when K acknowledges the
//! peer's data, it may have been written as a reply when that data came:
//! the silence runs from the later of them if it came after the sender's
//! previous segment. Nothing for a held segment whose bytes never reached
//! the receiver (sent again, and nothing the receiver sent before the
//! connection ended acknowledged any of them: a flow's black hole kept
//! what the hold kept back, and no one waited on it for anything they
//! got; the finding stays, Nagle was on). Phase: a K inside the TLS handshake (up to its last
//! record) delays the handshake, whoever sent it: a server's flight, or a
//! client's Finished behind its own unacknowledged TLS 1.3 compatibility
//! ChangeCipherSpec (GnuTLS writes that record alone); after it, a
//! request's or an answer's first byte (a greeting's, of a server that
//! speaks first, too), or the transfer.
//! Fix: TCP_NODELAY on the sender (nginx `tcp_nodelay on;`), or one write
//! per message (writev, a single buffer); for GnuTLS' record, its
//! priority `%DISABLE_TLS13_COMPAT_MODE`.

use rttdoc_wire::TcpFlags;
use std::collections::VecDeque;

use super::Facts;
use crate::model::{Detail, Direction, Finding, FindingKind, Pacing, Phase, Wait};
use rttdoc_analyze::seq;
use rttdoc_analyze::{SegmentRecord, Stamp};

/// A receiver that waits this long before ACKing is running a delayed-ACK timer.
const DELAYED_ACK_NS: i64 = 25_000_000;

pub(crate) struct Hold<'a> {
    /// The sub-MSS segment whose ACK Nagle waited for (the last one
    /// unacknowledged when the hold began).
    armed: &'a SegmentRecord,
    /// Where the silence runs from: the sender's previous data segment,
    /// or the peer's turn `held` answers when that came later.
    prev: &'a SegmentRecord,
    held: &'a SegmentRecord,
    /// When `held` left, on the sender's clock.
    held_ns: i64,
    ack: &'a SegmentRecord,
    silence_ns: i64,
    /// What the hold cost: the silence, or for a hold the peer's
    /// handshake flight released, from that flight's leaving to the held
    /// segment's arrival (the peer was in its handshake until then).
    cost_ns: i64,
    ack_delay_ns: i64,
    /// Released by the peer's handshake flight, not an ACK.
    by_flight: bool,
}

pub fn detect(f: &Facts<'_>, out: &mut Vec<Finding>) {
    let Some(rtt) = f.rtt_ns.filter(|r| *r > 0) else {
        return;
    };
    for sender in [Direction::ClientToServer, Direction::ServerToClient] {
        report(f, sender, holds(f, sender, rtt), out);
    }
}

/// The client's first request, when Nagle held it whole (its first
/// segment the held one): `(1, the segment the silence ran from)`. The
/// client wrote it no later than the segment before it left
/// unacknowledged (its TLS Finished, written as the handshake ended), so
/// its wait began there, before the ledger's row for it begins; the
/// ledger starts the row there (the request and the ACK's timer in it).
/// (A later request held behind the one before it waited inside that
/// one's row.) Looked for only where the request followed the server's
/// pure ACK at once (what a release looks like).
pub fn held_requests(f: &Facts<'_>) -> Vec<(usize, Stamp)> {
    let Some(rtt) = f.rtt_ns.filter(|r| *r > 0) else {
        return Vec::new();
    };
    let client = Direction::ClientToServer;
    let released = |x: &rttdoc_analyze::Exchange| {
        let before = &f.timeline[..f
            .timeline
            .partition_point(|r| r.frame < x.request_first.frame)];
        before.last().is_some_and(|r| {
            r.dir != client
                && r.len == 0
                && !r
                    .flags
                    .intersects(TcpFlags::SYN | TcpFlags::FIN | TcpFlags::RST)
        })
    };
    let Some(first) = f.exchanges.first().filter(|x| released(x)) else {
        return Vec::new();
    };
    holds(f, client, rtt)
        .iter()
        .filter(|h| h.held.frame == first.request_first.frame)
        .map(|h| {
            (
                1,
                Stamp {
                    frame: h.prev.frame,
                    ts_ns: h.prev.ts_ns,
                },
            )
        })
        .collect()
}

/// The sender's data segments not yet acknowledged, oldest first, with
/// their bytes and how many are smaller than an MSS kept as they come
/// and go (each ACK asks both; summing the deque each time made a bulk
/// transfer's pass quadratic in its window).
struct Outstanding<'a> {
    segments: VecDeque<&'a SegmentRecord>,
    mss: u32,
    bytes: u64,
    small: usize,
}

impl<'a> Outstanding<'a> {
    fn new(mss: u32) -> Self {
        Outstanding {
            segments: VecDeque::new(),
            mss,
            bytes: 0,
            small: 0,
        }
    }

    fn push(&mut self, r: &'a SegmentRecord) {
        self.bytes += u64::from(r.len);
        self.small += usize::from(r.len < self.mss);
        self.segments.push_back(r);
    }

    /// Drops the segments `ack` acknowledges whole; returns the last
    /// sub-MSS one of them (what Nagle waits for the ACK of).
    fn acknowledge(&mut self, ack: u32) -> Option<&'a SegmentRecord> {
        let mut small = None;
        while let Some(&s) = self.segments.front().filter(|s| seq::le(s.end, ack)) {
            self.bytes -= u64::from(s.len);
            if s.len < self.mss {
                self.small -= 1;
                small = Some(s);
            }
            self.segments.pop_front();
        }
        small
    }
}

/// The holds of `sender`, found once per connection (module docs).
fn holds<'f, 'r>(f: &'f Facts<'r>, sender: Direction, rtt: i64) -> &'f [Hold<'r>] {
    f.nagle_holds_views[sender.index()].get_or_init(|| find_holds(f, sender, rtt))
}

fn find_holds<'r>(f: &Facts<'r>, sender: Direction, rtt: i64) -> Vec<Hold<'r>> {
    let receiver = sender.reverse();
    let mss = f.mss(sender);
    if !may_have_held(f, sender, mss, rtt) {
        return Vec::new();
    }
    let events = f.new_data_view(sender);
    let mut outstanding = Outstanding::new(mss);
    let mut acked: Option<u32> = None;
    // The sender's last data segment, and the bytes in flight once it left:
    // what the sender had outstanding through the silence that follows.
    let mut prev: Option<(i64, &SegmentRecord, u64)> = None;
    // The receive window's right edge as the sender knew it, and whether
    // the last data segment left less than an MSS of it (then the window
    // held the next one: `rwnd_limited`, not Nagle).
    // Until the receiver's first segment without SYN says otherwise, its
    // window is the one its SYN (or SYN-ACK) announced, never scaled (RFC
    // 7323 2.2): that is the window the first data is sent against.
    let mut edge: Option<u64> = handshake_edge(f, receiver);
    let mut edge_from_syn = edge.is_some();
    let mut window_full = false;
    // The last ACK that advanced: when, which, whether it acknowledged the
    // last unacknowledged sub-MSS segment (what Nagle waits for), and how
    // many bytes were in flight before it.
    // (The small segment it acknowledged, when it acknowledged the last
    // one: what armed the hold.)
    let mut release: Option<(i64, &SegmentRecord, Option<&SegmentRecord>, u64)> = None;
    // A release the peer's data interrupted, still valid for a segment that
    // continues a TLS record begun before the silence (its bytes were
    // written then, so it was held, not composed as a reply).
    let mut parked: Option<(i64, &SegmentRecord, Option<&SegmentRecord>, u64)> = None;
    // A handshake flight of the peer's (TLS records only, outside every
    // answer) that acknowledged the last small segment: a release for a
    // segment that continues the request the sender had begun before it
    // (a false-started request's tail, held behind the client's own
    // Finished until the server's Finished acknowledged it: nDPI's
    // ndpi-viber 8, 170 ms). A request is not composed as a reply to the
    // handshake's end; a body sent after an HTTP `100 Continue` is (no
    // TLS handshake record carries that).
    let mut flight_release: Option<(i64, &SegmentRecord, Option<&SegmentRecord>, u64)> = None;
    // The receiver's last data segment, when it reached the sender.
    let mut peer_data: Option<(i64, &SegmentRecord)> = None;
    let messages = f.report.tls.as_ref().map_or(&[][..], |t| &t.messages[..]);
    let handshake_frames: Vec<u64> = messages
        .iter()
        .filter(|m| m.direction == receiver)
        .map(|m| m.frame)
        .collect();
    let record_spans: Vec<(u64, u64)> = messages
        .iter()
        .filter(|m| m.first_frame < m.frame)
        .map(|m| (m.first_frame, m.frame))
        .collect();
    let mut holds = Vec::new();
    for &(t, r) in events {
        if r.dir == receiver {
            if let Some(e) = f.window_edge(r) {
                // The first scaled window replaces the SYN's; after it the
                // right edge only moves forward (RFC 9293 3.8.6).
                if !r.flags.intersects(TcpFlags::SYN | TcpFlags::RST)
                    && (edge_from_syn || edge.is_none_or(|old| e > old))
                {
                    edge = Some(e);
                    edge_from_syn = false;
                }
            }
            // Only a pure ACK releases a hold: after the peer's data, the
            // sender's next segment is a reply, not Nagle.
            if r.len > 0
                || r.flags
                    .intersects(TcpFlags::FIN | TcpFlags::SYN | TcpFlags::RST)
            {
                if r.len > 0 {
                    peer_data = Some((t, r));
                }
                if release.is_some() {
                    parked = release;
                }
                release = None;
                flight_release = None;
                if acked.is_none_or(|a| seq::lt(a, r.ack)) {
                    let (small_before, bytes) = (outstanding.small > 0, outstanding.bytes);
                    acked = Some(r.ack);
                    let last_small = outstanding.acknowledge(r.ack);
                    let armed = last_small.filter(|_| small_before && outstanding.small == 0);
                    let flight = r.len > 0
                        && handshake_frames.contains(&r.frame)
                        && in_response(f, r.frame).is_none();
                    if armed.is_some() && flight {
                        flight_release = Some((t, r, armed, bytes));
                    }
                }
                continue;
            }
            if acked.is_none_or(|a| seq::lt(a, r.ack)) {
                let small_before = outstanding.small > 0;
                let bytes = outstanding.bytes;
                acked = Some(r.ack);
                let last_small = outstanding.acknowledge(r.ack);
                let armed = last_small.filter(|_| small_before && outstanding.small == 0);
                // The ACK that covered the last small segment is what
                // released the hold; ACKs of full segments right behind it
                // (ordered early by the skew) do not take its place.
                if armed.is_some() || release.is_none_or(|(_, _, was, _)| was.is_none()) {
                    release = Some((t, r, armed, bytes));
                }
                parked = None;
                flight_release = None;
            }
            continue;
        }
        let continues_record = prev.is_some_and(|(_, p, _)| {
            record_spans
                .iter()
                .any(|(a, b)| *a <= p.frame && p.frame < r.frame && r.frame <= *b)
        });
        let continues_request = flight_release.is_some()
            && release.is_none()
            && prev.is_some_and(|(_, p, _)| continues_message(f, p, r));
        let candidate =
            release
                .or(if continues_record { parked } else { None })
                .or(if continues_request {
                    flight_release
                } else {
                    None
                });
        if let (Some((tp, p, in_flight)), Some((ta, a, armed, bytes))) = (prev, candidate) {
            // The clock shift is only as good as the handshake's estimate of the
            // sender's side of the path: allow the tolerance both ways.
            // Later than that, by the path's jitter: the ACK's trip to the
            // sender was slower than the handshake's, which the shift
            // cannot know (a millisecond of queueing is a fifth of a 5 ms RTT).
            let released = || f.released_by(sender, t, ta);
            // The congestion window holds segments too: a sender that had
            // most of an initial window (10 MSS) out when it fell silent was
            // waiting for the window, whatever Nagle would have done.
            let window_free = bytes.max(in_flight) < 8 * mss as u64;
            // Nagle only holds a sub-MSS segment, and the release must have
            // been able to cause it (causality.rs).
            // (A client's segment that continues a request it had begun
            // before the silence was written with it, or for it: no
            // sibling's close prompted it.)
            let causal = || {
                f.can_release(a, r)
                    && (continues_message(f, p, r) || !woken_by_a_sibling(f, sender, ta, t))
            };
            // K continues the previous segment: bytes between them the
            // capture missed were sent in the "silence" (a capture's
            // loss, not a sender holding anything).
            let contiguous = seq::le(r.seq, p.end);
            // What does not depend on when the hold began, first (the
            // answered turn below is looked up only for a segment that
            // passes).
            let held = contiguous
                && armed.is_some()
                && window_free
                && !window_full
                && r.len < mss
                && released()
                && causal()
                && !on_the_servers_beat(f, r);
            // A segment that begins an answer to the peer's turn was
            // written no earlier than that turn arrived, and one that
            // acknowledges the peer's data may have been written when
            // that data came (a reply, then held): the hold is certain
            // only from the later of them, when it came after the
            // previous segment.
            let acknowledged = peer_data
                .filter(|(_, d)| r.ack_set && seq::le(d.end, r.ack))
                .map(|(td, d)| (d, td));
            let (from, tp) = match held
                .then(|| answered_turn(f, r).into_iter().chain(acknowledged))
                .into_iter()
                .flatten()
                .max_by_key(|&(_, td)| td)
            {
                Some((d, td)) if td > tp && !continues_record && !continues_request => (d, td),
                _ => (p, tp),
            };
            let silence = t - tp;
            let waited = silence >= shortest_hold(rtt);
            // The hold ends when the ACK of the small segment returns: a
            // round trip plus at most the receiver's delayed-ACK timer. A
            // longer silence is the sender having nothing to send (a
            // heartbeat, a person typing).
            let bounded = silence <= rtt + super::causality::MAX_ACK_DELAY_NS + f.jitter_ns;
            if let Some(armed) = armed.filter(|_| held && waited && bounded) {
                // On the receiver's clock: when the last data this ACK covers
                // arrived versus when the ACK left.
                let covered = f
                    .timeline
                    .iter()
                    .filter(|d| {
                        d.dir == sender
                            && d.len > 0
                            && seq::le(d.end, a.ack)
                            && d.frame < a.frame.max(p.frame)
                    })
                    .map(|d| f.on_clock_of(receiver, d))
                    .max()
                    .unwrap_or_else(|| f.on_clock_of(receiver, p));
                let arrived = covered;
                // (Less what held the ACK on the path after it left, by
                // the receiver's own clock, as far as its data shows the
                // path holding: a late ACK is no timer's, and a timer's
                // ACK may carry a stale TSval: sender_clock.rs.)
                let ack_delay =
                    f.on_clock_of(receiver, a) - f.ack_held_after_sending_ns(a) - arrived;
                // Released by the peer's handshake flight (a server's
                // Finished): the peer could take the request no sooner
                // than that flight left, so the hold cost the round trip
                // from its leaving to the held tail's arrival, not the
                // silence (nDPI's alexa-app 20: a server 200 ms on its
                // Finished; the tail held 224 ms cost 57), and the flight
                // came when the peer's handshake let it, not on a
                // delayed-ACK timer.
                let by_flight = continues_request;
                let (cost, ack_delay) = if by_flight {
                    let round_trip = f.on_clock_of(receiver, r) - f.on_clock_of(receiver, a);
                    (silence.min(round_trip), 0)
                } else {
                    (silence, ack_delay)
                };
                holds.push(Hold {
                    armed,
                    prev: from,
                    held: r,
                    held_ns: t,
                    ack: a,
                    silence_ns: silence,
                    cost_ns: cost,
                    ack_delay_ns: ack_delay,
                    by_flight,
                });
            }
        }
        outstanding.push(r);
        let in_flight = outstanding.bytes;
        window_full = edge.is_some_and(|e| r.end as u64 + mss as u64 > e);
        prev = Some((t, r, in_flight));
        parked = None;
        flight_release = None;
    }
    if let Some(from) = holds
        .first()
        .and_then(|_| nagle_off_from(f, sender, events, mss))
    {
        holds.retain(|h| h.held.frame < from);
    }
    holds
}

/// The peer's turn that `r` begins the answer to, and when it reached
/// `r`'s sender (on its clock), if `r` acknowledges it: for a client, the last segment of the
/// answer before the request `r` begins (the next question is asked once
/// the last answer is in); for a server, the last segment of the request
/// whose answer `r` begins. (Nagle holds what was written; what answers
/// a turn was written when that turn came, not before: a Skype client's
/// reply to a server message, an IRC client's JOIN after the MOTD's end.)
fn answered_turn<'r>(f: &Facts<'r>, r: &SegmentRecord) -> Option<(&'r SegmentRecord, i64)> {
    let i = match r.dir {
        Direction::ClientToServer => f
            .exchanges
            .iter()
            .position(|x| x.request_first.frame == r.frame)?,
        Direction::ServerToClient => f
            .exchanges
            .iter()
            .position(|x| x.response_first.is_some_and(|s| s.frame == r.frame))?,
    };
    let turn = match r.dir {
        Direction::ClientToServer => f.exchanges[..i].last()?.response_last?,
        Direction::ServerToClient => f.exchanges[i].request_last,
    };
    // Only a turn `r` acknowledges had reached its sender when it left
    // (its ACK field is filled in then).
    let d = f
        .record(turn.frame)
        .filter(|d| d.dir != r.dir && d.frame < r.frame && r.ack_set && seq::le(d.end, r.ack))?;
    Some((d, f.on_clock_of(r.dir, d)))
}

/// Whether `r` began a tick of the server's own timer, which runs apart
/// from the ACKs (server_think_time.rs): it left when the timer said, and
/// an ACK that arrived just before released nothing. (Looked for only
/// where a hold would be found: the timer is searched once, on first
/// use.)
fn on_the_servers_beat(f: &Facts<'_>, r: &SegmentRecord) -> bool {
    r.dir == Direction::ServerToClient
        && super::server_think_time::server_ticks(f)
            .is_some_and(|t| t.at().binary_search(&r.ts_ns).is_ok())
}

/// Whether a FIN of another connection between the same two hosts (a
/// sibling) reached or left `sender`'s host after the ACK's arrival `ta`
/// and just before the segment left at `t` (both on the sender's clock,
/// within the release's tolerance): the application wrote the segment
/// when that connection closed (an FTP server's `226` once its data
/// connection is closed), and the ACK a moment before released nothing.
/// So for a server's segment and a sibling's data from the client's
/// address (a run's first or last segment) arriving there: iperf3's
/// server writes TEST_START on its control connection when the test's
/// data connection has sent its cookie, half a millisecond after the
/// client's delayed ACK of the control connection's last message.
fn woken_by_a_sibling(f: &Facts<'_>, sender: Direction, ta: i64, t: i64) -> bool {
    let server = sender == Direction::ServerToClient;
    if f.sibling_closes.is_empty() && (!server || f.sibling_data.is_empty()) {
        return false;
    }
    let tolerance = f.rtt_ns.map_or(0, |rtt| rtt / 20).max(1_000_000);
    let woken = |at: i64| ta < at && at <= t && t - at <= tolerance;
    // The peer's packets reach the sender's clock one side of the path
    // later.
    let shift = match sender {
        Direction::ServerToClient => f.server_side_ns,
        Direction::ClientToServer => f.client_side_ns,
    };
    let closed = f.sibling_closes.iter().any(|&(by_server, ts)| {
        let by_sender = by_server == server;
        woken(if by_sender { ts } else { ts + shift })
    });
    closed
        || (server
            && f.sibling_data
                .iter()
                .any(|&(first, last)| woken(first + shift) || woken(last + shift)))
}

/// Whether data of another connection from the client's address (a
/// sibling's) reached the server's host during the silence before a push
/// `h` of the server, too short a time before the push left for a hold:
/// the server may have written the push when that data came (an MQTT
/// broker passing on the message a publisher just sent), and then it
/// waited less than a hold takes (the silence `find_holds` asks for) for
/// whatever ACK came just before it left. Only data the capture shows can
/// tell: a publisher on another host leaves such a push looking held.
fn pushed_on_a_sibling_message(f: &Facts<'_>, h: &Hold<'_>) -> bool {
    let Some(rtt) = f.rtt_ns else {
        return false;
    };
    let (silent_from, left) = (h.held_ns - h.silence_ns, h.held_ns);
    f.sibling_data.iter().any(|&(first, last)| {
        // The run's last segment that had reached the server when the
        // push left.
        let (first, last) = (first + f.server_side_ns, last + f.server_side_ns);
        let at = last.min(left);
        first <= left && silent_from < at && left - at < shortest_hold(rtt)
    })
}

/// Whether the facts show `sender` without Nagle ([`nagle_off_from`]):
/// what a long connection's next window is told (window.rs).
pub fn shows_nagle_off(f: &Facts<'_>, sender: Direction) -> bool {
    nagle_off_from(f, sender, f.new_data_view(sender), f.mss(sender)).is_some()
}

/// The shortest silence before a segment that can be a Nagle hold: half
/// the round trip (an ACK's trip back at the least), and 2 ms.
/// Whether any of `sender`'s new sub-MSS segments left after a silence
/// of its own of at least [`shortest_hold`] since its previous new data:
/// a hold's silence runs from that segment or later, so without one there
/// is no hold to find (a bulk sender's full segments back to back, its
/// writes' tails right behind them), and the walk over the sender's view
/// (the diagnosis's costliest on a bulk transfer) is spared. A capture
/// whose clock steps back is walked whole.
fn may_have_held(f: &Facts<'_>, sender: Direction, mss: u32, rtt: i64) -> bool {
    let hold = shortest_hold(rtt);
    let mut previous: Option<i64> = None;
    for r in f
        .timeline
        .iter()
        .filter(|r| r.dir == sender && r.len > 0 && r.new_data && !r.flags.syn())
    {
        match previous {
            Some(p) if r.ts_ns < p => return true,
            Some(p) if r.len < mss && r.ts_ns - p >= hold => return true,
            _ => {}
        }
        previous = Some(r.ts_ns);
    }
    false
}

fn shortest_hold(rtt: i64) -> i64 {
    (rtt / 2).max(2_000_000)
}

/// The first of `sender`'s segments that shows it does not run Nagle
/// (module docs): a sub-MSS segment (not a FIN, not a write's tail right
/// behind its full segments) sent while an earlier
/// sub-MSS segment of its own was unacknowledged, the ACK of that one
/// arriving later than the clock shift's error allows. Nagle off
/// (TCP_NODELAY), or segments larger than the capture shows (cut by a
/// tool): no silence of its from then on is a Nagle hold. Looked for only
/// where there is a hold to judge.
pub(super) fn nagle_off_from(
    f: &Facts<'_>,
    sender: Direction,
    events: &[(i64, &SegmentRecord)],
    mss: u32,
) -> Option<u64> {
    // Shown in an earlier window of the connection: from its start.
    if f.nagle_off_before[sender.index()] {
        return f.timeline.first().map(|r| r.frame);
    }
    let tolerance = f.shift_error_ns(sender);
    // Each sub-MSS segment still unacknowledged: its end.
    let mut small: VecDeque<u32> = VecDeque::new();
    let mut acked: Option<u32> = None;
    // A small segment sent behind another: when, which, the other's end.
    let mut behind: Option<(i64, u64, u32)> = None;
    // The sender's last segment was full-sized, nothing from the peer
    // since: a small one now is a write's tail.
    let mut after_full = false;
    for &(t, r) in events {
        if let Some((ts, frame, end)) = behind {
            let covered = acked.is_some_and(|a| seq::le(end, a));
            if !covered && t - ts > tolerance {
                return Some(frame);
            }
            if covered {
                behind = None;
            }
        }
        if r.dir != sender {
            after_full = false;
            if r.ack_set && acked.is_none_or(|a| seq::lt(a, r.ack)) {
                acked = Some(r.ack);
                while small.front().is_some_and(|&e| seq::le(e, r.ack)) {
                    small.pop_front();
                }
            }
            continue;
        }
        if r.len >= mss || r.flags.fin() {
            after_full = r.len >= mss;
            continue;
        }
        // A write's tail right behind its full segments: some stacks
        // send it with them, Nagle on (module docs).
        let tail = std::mem::take(&mut after_full);
        if let (None, Some(&end), false) = (behind, small.front(), tail) {
            behind = Some((t, r.frame, end));
        }
        small.push_back(r.end);
    }
    behind
        .filter(|&(_, _, end)| !acked.is_some_and(|a| seq::le(end, a)))
        .map(|(_, frame, _)| frame)
}

/// The right edge of the window `receiver` announced in its SYN or
/// SYN-ACK (relative sequence of the other direction: the SYN-ACK's ACK,
/// or 1 for a SYN, plus the unscaled window); None without the handshake
/// in the capture.
fn handshake_edge(f: &Facts<'_>, receiver: Direction) -> Option<u64> {
    if f.report.partial || f.report.handshake.syn_ack_frame.is_none() {
        return None;
    }
    let syn = f
        .timeline
        .iter()
        .find(|r| r.dir == receiver && r.flags.syn())?;
    let ack = if syn.ack_set { syn.ack as u64 } else { 1 };
    Some(ack + syn.window as u64)
}

/// Whether the client's `r` continues the request `p` began: both of one
/// exchange's request, no answer to it begun between them. (Not said of
/// a server's: an exchange's answer may hold messages written on other
/// events, an FTP server's `226` when the data connection closed after
/// its `150`, iperf3's TEST_START when the test's connection came.)
fn continues_message(f: &Facts<'_>, p: &SegmentRecord, r: &SegmentRecord) -> bool {
    r.dir == Direction::ClientToServer
        && f.exchanges.iter().any(|x| {
            x.request_first.frame <= p.frame
                && r.frame <= x.request_last.frame
                && x.response_first.is_none_or(|first| r.frame < first.frame)
        })
}

/// Which exchange's response (1-based) a server segment belongs to, and
/// whether it is that response's first byte.
fn in_response(f: &Facts<'_>, frame: u64) -> Option<(usize, bool)> {
    f.exchanges.iter().enumerate().find_map(|(i, x)| {
        let first = x.response_first?;
        let last = x.response_last.unwrap_or(first);
        (first.frame <= frame && frame <= last.frame).then_some((i + 1, first.frame == frame))
    })
}

/// For a server segment `held` outside every answer, sent while an
/// exchange waited for its answer: whether that answer was queued behind
/// it (its first byte left within the release's tolerance after `held`,
/// the two released together), or came later at the server's own pace (or
/// never), when nothing the client waited for was held (`Some(false)`).
/// None when no exchange was waiting: the data is the server's own (a
/// push), and its hold stalls it.
fn answer_behind(f: &Facts<'_>, held: &SegmentRecord) -> Option<bool> {
    let waiting = f.exchanges.iter().find(|x| {
        x.request_first.frame < held.frame && x.response_first.is_none_or(|a| a.frame > held.frame)
    })?;
    let Some(answer) = waiting.response_first.and_then(|a| f.record(a.frame)) else {
        return Some(false);
    };
    let tolerance = f.rtt_ns.map_or(0, |rtt| rtt / 20).max(1_000_000);
    Some(answer.ts_ns - held.ts_ns <= tolerance)
}

/// The held segment's bytes never reached the receiver: its sender sent
/// them again, and nothing the receiver sent before the connection ended
/// (a FIN or RST of either side in the capture) acknowledged any of them.
/// The hold kept back what the path then lost for good (a flow's black
/// hole: nDPI's skype.pcap 40, eight copies of the held 26 bytes, none
/// acknowledged, the server's RST); no one waited on it for anything
/// they got. Nor where the first acknowledgment came only after the
/// sender's application had let the connection go (its FIN, closed for
/// good: retransmission.rs's `client_closed_for_good`, a FIN in the
/// middle of its own timer's re-sends or answered data reset): nDPI's
/// skype_no_unknown.pcap 13, a copy sent after the client's FIN
/// acknowledged 4.6 s later and reset at once.
fn never_delivered(f: &Facts<'_>, held: &SegmentRecord) -> bool {
    let after = &f.timeline[f.timeline.partition_point(|r| r.frame <= held.frame)..];
    let resent = after.iter().any(|r| {
        r.dir == held.dir
            && r.retransmission
            && seq::le(r.seq, held.seq)
            && seq::lt(held.seq, r.end)
    });
    let let_go = super::retransmission::client_closed_for_good(f, held.dir);
    let acknowledged = after.iter().any(|r| {
        r.dir != held.dir
            && r.ack_set
            && seq::lt(held.seq, r.ack)
            && let_go.is_none_or(|fin| r.frame < fin)
    });
    let ended = let_go.is_some() || after.iter().any(|r| r.flags.fin() || r.flags.rst());
    resent && !acknowledged && ended
}

/// For a bulk sender (seed case 3): the throughput it got and what it
/// would have got without the stalls, over the span of its data. Only a
/// sender whose writes did not wait on its peer's: where the peer's data
/// came between a third of its writes or more (each answer one write or
/// two), it wrote in answer to the peer, whose messages came on their own
/// schedule, and the stalls delayed each write, not the whole (nDPI's
/// coap_mqtt.pcap 3, judged in session 85:
/// an MQTT client's PUBACK and PUBLISH to each of the broker's, told
/// "without the stalls it would have taken 11277 ms").
fn pacing(f: &Facts<'_>, sender: Direction, stalls_ns: i64) -> Option<Pacing> {
    let data = || {
        f.timeline
            .iter()
            .filter(|r| r.dir == sender && r.len > 0 && r.new_data)
    };
    let bytes: u64 = data().map(|r| r.len as u64).sum();
    let (first, last) = (data().next()?, data().next_back()?);
    let span = last.ts_ns - first.ts_ns;
    if span <= stalls_ns || stalls_ns * 4 < span {
        // The stalls are not what paced this sender.
        return None;
    }
    // Gaps between the sender's writes, and those the peer's data came in.
    let (mut gaps, mut answering, mut peer_spoke, mut started) = (0u32, 0u32, false, false);
    for r in f.between(first.frame, last.frame + 1) {
        if r.dir != sender {
            peer_spoke |= r.len > 0;
        } else if r.len > 0 && r.new_data {
            if started {
                gaps += 1;
                answering += u32::from(peer_spoke);
            }
            started = true;
            peer_spoke = false;
        }
    }
    if answering * 3 >= gaps.max(1) {
        return None;
    }
    Some(Pacing {
        bytes,
        span_ms: span as f64 / 1e6,
    })
}

/// Whether `h` held the client's first request behind its own last
/// handshake write (its Finished, alone in its segment): the small
/// unacknowledged segment was the TLS library's, not the request's.
fn behind_handshake(f: &Facts<'_>, h: &Hold<'_>) -> bool {
    let Some(end) = f.tls_end_frame else {
        return false;
    };
    let first_request = f.exchanges.first().map(|e| e.request_first.frame);
    h.prev.frame <= end && h.held.frame > end && first_request == Some(h.held.frame)
}

/// Whether the next hold continues hold `i` (its segment the next one's
/// previous, the two within an MSS): then, for a client's, hold `i`
/// delayed nothing the server waited for. The next write came after this
/// segment left (else they would have left as one), and the server,
/// answering neither with data, waited for the request's end, which the
/// last hold alone delayed (a person typing a command a key at a time). A
/// server's chain may be a feed whose every message its reader takes as
/// it comes: each hold is its own.
fn continued(holds: &[Hold<'_>], i: usize, mss: u32) -> bool {
    holds.get(i + 1).is_some_and(|next| {
        next.prev.frame == holds[i].held.frame && holds[i].held.len + next.held.len <= mss
    })
}

/// The held segments of `sender` that a later hold continues
/// ([`continued`]): what left before them was the writer's pause as far as
/// the peer went (sender_pace.rs).
pub(super) fn continued_holds(f: &Facts<'_>, sender: Direction, rtt: i64) -> Vec<u64> {
    if sender != Direction::ClientToServer {
        return Vec::new();
    }
    let holds = holds(f, sender, rtt);
    let mss = f.mss(sender);
    (0..holds.len())
        .filter(|&i| continued(holds, i, mss))
        .map(|i| holds[i].held.frame)
        .collect()
}

fn report(f: &Facts<'_>, sender: Direction, holds: &[Hold<'_>], out: &mut Vec<Finding>) {
    let plain = f.report.tls.is_none();
    let mss = f.mss(sender);
    // (kind, phase) -> holds
    let mut groups: Vec<((FindingKind, Phase), Vec<&Hold<'_>>)> = Vec::new();
    for (i, h) in holds.iter().enumerate() {
        if sender == Direction::ClientToServer && continued(holds, i, mss) {
            continue;
        }
        let delayed = h.ack_delay_ns >= DELAYED_ACK_NS;
        let in_tls = f.tls_end_frame.is_some_and(|end| h.held.frame <= end);
        let response = (sender == Direction::ServerToClient)
            .then(|| in_response(f, h.held.frame))
            .flatten();
        // The greeting of a server that speaks first, held: the client
        // waited for it as for an answer (nDPI's imaps.pcap: an IMAP
        // greeting behind the server's own TLS Finished).
        let greets = sender == Direction::ServerToClient
            && f.greeting.is_some_and(|(_, g)| g.frame == h.held.frame);
        // Server data outside every answer, held while the client waited
        // for one (the second session ticket of a TLS 1.3 server that
        // writes them one at a time): it delayed that answer only if the
        // answer was queued behind it, leaving at its release.
        let behind =
            (sender == Direction::ServerToClient && response.is_none() && !in_tls && !greets)
                .then(|| answer_behind(f, h.held))
                .flatten();
        if behind == Some(false) {
            continue;
        }
        // A push (server data outside every answer, no answer waited for)
        // the server may have written when a sibling's message came.
        if sender == Direction::ServerToClient
            && response.is_none()
            && behind.is_none()
            && !greets
            && pushed_on_a_sibling_message(f, h)
        {
            continue;
        }
        // Inside the TLS handshake a hold delays the handshake, whoever
        // sent: the server's flight, or the client's Finished behind its
        // own unacknowledged ChangeCipherSpec (GnuTLS writes TLS 1.3's
        // compatibility record alone, the moment the flight comes).
        let key = if in_tls {
            (
                if delayed {
                    FindingKind::NagleDelayedAck
                } else {
                    FindingKind::NagleHold
                },
                Phase::TlsHandshake,
            )
        } else if matches!(response, Some((_, false))) && (plain || !delayed) {
            // (`response` is only set for the server's segments.)
            (FindingKind::WriteWriteRead, Phase::Transfer)
        } else {
            // A held response's first byte (e.g. behind session tickets)
            // delays the time to first byte; a held request too. Where
            // nothing is a request (a tunnel's packets, BGP's messages) a
            // hold stalls the data under way.
            let phase = match (sender, response) {
                _ if greets => Phase::FirstByte,
                _ if f.exchanges.is_empty() => Phase::Transfer,
                (Direction::ServerToClient, Some((_, true))) => Phase::FirstByte,
                (Direction::ServerToClient, None) if behind == Some(true) => Phase::FirstByte,
                (Direction::ServerToClient, _) => Phase::Transfer,
                _ => Phase::FirstByte,
            };
            (
                if delayed {
                    FindingKind::NagleDelayedAck
                } else {
                    FindingKind::NagleHold
                },
                phase,
            )
        };
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(h),
            None => groups.push((key, vec![h])),
        }
    }
    for ((kind, phase), hs) in groups {
        // A hold of bytes that never arrived delayed nothing received.
        let lost: Vec<bool> = hs.iter().map(|h| never_delivered(f, h.held)).collect();
        let costs: Vec<i64> = hs
            .iter()
            .zip(&lost)
            .map(|(h, &lost)| if lost { 0 } else { h.cost_ns })
            .collect();
        let undelivered = lost.iter().all(|&lost| lost);
        let total_ns: i64 = costs.iter().sum();
        let mut x = f.finding(kind, Some(phase));
        // Each hold's evidence in the order it happened: the small segment
        // that armed it, the ACK of it that released the hold, the
        // segment held.
        for h in &hs {
            if x.frames.len() + 3 > super::FRAMES_CITED {
                break;
            }
            for frame in [h.armed.frame, h.ack.frame, h.held.frame] {
                if !x.frames.contains(&frame) {
                    x.frames.push(frame);
                }
            }
        }
        x.waits = hs
            .iter()
            .zip(&costs)
            .map(|(h, ns)| Wait {
                from_frame: h.prev.frame,
                to_frame: h.held.frame,
                release_frame: Some(h.ack.frame),
                ms: *ns as f64 / 1e6,
            })
            .collect();
        x.cost_ms = total_ns as f64 / 1e6;
        let first = hs[0];
        let delay_ms = first.ack_delay_ns as f64 / 1e6;
        x.detail = Detail::Nagle {
            sender,
            held_frame: first.held.frame,
            ack_frame: first.ack.frame,
            armed_frame: first.armed.frame,
            armed_bytes: first.armed.len,
            first_silence_ms: first.cost_ns as f64 / 1e6,
            ack_delay_ms: delay_ms,
            holds: hs.len() as u32,
            protocol: f.protocol,
            behind_handshake: sender == Direction::ClientToServer
                && hs.iter().all(|h| h.by_flight || behind_handshake(f, h)),
            released_by_handshake: hs.iter().all(|h| h.by_flight),
            paced: pacing(f, sender, total_ns),
            undelivered,
        };
        x.confidence = if f.tls_end_frame.is_some() || plain {
            0.9
        } else {
            0.8
        };
        x.display_filter = f.filter_frames(&x.frames);
        out.push(x);
    }
}
