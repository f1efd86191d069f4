//! `client_think_time` — the client took long to answer the server's
//! handshake flight: between the server's flight (its last segment, the
//! last copy) reaching the client and the client's next flight leaving
//! (TLS 1.3 and resumed TLS 1.2: its Finished; full TLS 1.2: its key
//! exchange). The client cannot send it before the server's flight is in,
//! and then needs only to verify the certificate chain and compute keys:
//! a millisecond or two. Longer is the client's own work: a revocation
//! check (OCSP, CRL) or a missing intermediate fetched over the network
//! (AIA), a client certificate's signature (a smart card), a busy CPU or
//! event loop (a browser opening many connections at once), a user asked
//! to trust a certificate.
//!
//! Signature, on the client's clock (server packets + the client side of
//! the RTT): answer departure minus the server flight's arrival, at least
//! half a round trip, clamped to 5..20 ms (the threshold of
//! `server_think_time`: above a host's normal turnaround). Away from the
//! client, the flight's arrival is when the client acknowledged its last
//! segment (a slow link delays a large flight's last segment by the whole
//! flight's serialization, which the handshake's round trip does not
//! show); without such an ACK there, nothing is claimed, and where the
//! client's TSvals keep a clock (sender_clock.rs) what its uplink held
//! the answer beyond that ACK is the path's (a phone's Wi-Fi), and the
//! turn no longer than the client's own ticks between that ACK and the
//! answer, plus one, where the clock's rate is known (nDPI's
//! ja3_lots_of_cipher_suites_2_anon 0: 4 ticks at 100 Hz, 2.1 s apart
//! at the capture). Each is a wait
//! from the server's last segment to the client's answer, with no
//! releasing packet (the client's own work ended it). Cost: the waits'
//! sum. Not when the
//! client's answer acknowledges server bytes the capture did not show (a
//! segment it missed, a re-send it did not see): then the client may have
//! been waiting for that segment, which is loss, not its work.
//! TLS 1.3's compatibility ChangeCipherSpec alone in a segment answers
//! nothing (GnuTLS, Java and rustls write it the moment the flight or
//! its ServerHello comes): the answer is the Finished after it
//! ([`Facts::handshake_turns`]), and away from the client the record's
//! ACK of the flight tells when the client had it. Not when that
//! Finished left the moment the server's ACK of the record came: Nagle
//! held it behind the record (nagle.rs), and when the client had it
//! ready is unknown.
//! Never behind a load balancer that wrote a PROXY protocol header: the
//! client there is the balancer, whose answers wait for its own client
//! (a round trip this capture does not see, and that client's work); the
//! ledger adds that time to the handshake's ideal ([`behind_balancer`]).
//! A turn whose client reopened its receive window (a window update, sent
//! as its application read the flight) after most of the turn had passed
//! and answered soon after is worded with that read: the time before it
//! went to whatever kept the application from reading ([`late_read`]).
//! Fix: on the client (revocation and intermediate fetches: a server that
//! sends its whole chain and staples OCSP spares them; CPU; resumption,
//! which skips the verification).

use super::server_think_time::{preamble_finding, threshold_of};
use super::{Facts, HandshakeTurn, TimedTurn};
use crate::model::{Detail, Direction, Finding, FindingKind, Phase, Vantage, Wait};
use rttdoc_analyze::seq;
use rttdoc_wire::TcpFlags;

/// A capture whose vantage is unknown is taken to be at the client when
/// the client's side of the path is within this of zero.
const AT_CLIENT_NS: i64 = 1_000_000;

pub fn detect(f: &Facts<'_>, out: &mut Vec<Finding>) {
    let Some(rtt) = f.rtt_ns else { return };
    // Behind a balancer that wrote a PROXY protocol header, the client
    // here is the balancer: its answers wait for its own client, whose
    // path and work this capture cannot tell apart. The ledger gives that
    // time to the handshake's ideal ([`behind_balancer`]); nothing here
    // is the client-here's work.
    if f.report.proxy_protocol.is_some() {
        return;
    }
    let threshold = threshold_of(rtt);
    let waits = slow(handshake_client_turns(f), threshold);
    preamble(f, threshold, out);
    // (Nor a handshake its client let go as it ended: no one waited.)
    if waits.is_empty() || f.handshake_discarded() {
        return;
    }
    let mut x = f.finding(FindingKind::ClientThinkTime, Some(Phase::TlsHandshake));
    for w in &waits {
        x.frames.push(w.from_frame);
        x.frames.push(w.to_frame);
    }
    x.cost_ms = waits.iter().map(|w| w.ms).sum();
    x.detail = Detail::ClientThinkTime {
        turns: waits.len() as u32,
        longest_ms: waits.iter().map(|w| w.ms).fold(0.0, f64::max),
        late_read: waits.iter().find_map(|w| late_read(f, w, threshold)),
        resumed: f.resumed(),
        costly_key_exchange: f.costly_key_exchange.clone(),
        no_certificate: f.certificate_less,
        signed_nothing: f
            .report
            .tls
            .as_ref()
            .is_some_and(|t| t.client_signed_nothing()),
        resumption_refused: f
            .report
            .tls
            .as_ref()
            .is_some_and(|t| t.resumed == Some(false) && t.resumption_offered()),
        dialled_during: f.client_dials.map(|dials| {
            // Each turn on the client's clock: its dials are its own
            // packets.
            let turns: Vec<(i64, i64)> = waits
                .iter()
                .filter_map(|w| {
                    let (from, to) = (f.record(w.from_frame)?, f.record(w.to_frame)?);
                    Some((f.on_clock_of(Direction::ClientToServer, from), to.ts_ns))
                })
                .collect();
            dials
                .iter()
                .filter(|&&t| turns.iter().any(|&(from, to)| from < t && t < to))
                .count() as u32
        }),
    };
    x.waits = waits;
    x.display_filter = f.filter_frames(&x.frames);
    out.push(x);
}

/// The client's application read the flight of `wait`'s turn late: its
/// last window update before its answer (a pure ACK acknowledging nothing
/// new whose window is larger than the client's segment before it: the
/// receive buffer drained as the application read, Linux's
/// `tcp_cleanup_rbuf`, the BSDs' `tcp_output` after `soreceive`) came
/// after more of the turn than the answer did after it, and the answer
/// within a turnaround of it (under `threshold`). The time before the
/// read was not this handshake's work (nDPI's zoom2.pcap 0: the flight
/// read 23.6 ms after it arrived, the key exchange 1.3 ms after that).
/// Not an ACK that answered a server segment (one arriving within a
/// host's reaction before it, or one carrying a D-SACK: signal.pcap 8's
/// duplicate ACK of a needless re-send), nor a turn whose answer took a
/// turn of its own after the read (zoom.pcap 10: read late, then 60 ms
/// of the client's own work).
fn late_read(f: &Facts<'_>, wait: &Wait, threshold: i64) -> Option<crate::model::LateRead> {
    let client = Direction::ClientToServer;
    let answer = f.record(wait.to_frame)?;
    let mut previous: Option<&rttdoc_analyze::SegmentRecord> = None;
    let mut update = None;
    for r in f.between(wait.from_frame + 1, wait.to_frame) {
        if r.dir != client {
            continue;
        }
        // (Not an answer to a server segment that just came: asked only
        // of a window update, the rest of the turn read for each.)
        let answering = || {
            r.dsack.is_some()
                || f.between(wait.from_frame, r.frame).iter().any(|s| {
                    s.dir != client
                        && s.frame != wait.from_frame
                        && f.on_clock_of(client, r) - f.on_clock_of(client, s) <= ANSWERING_NS
                })
        };
        let reopened = previous.is_some_and(|p| {
            r.len == 0
                && r.ack_set
                && p.ack_set
                && r.ack == p.ack
                && r.window > p.window
                && !r
                    .flags
                    .intersects(TcpFlags::SYN | TcpFlags::FIN | TcpFlags::RST)
        }) && !answering();
        if reopened {
            update = Some(r);
        }
        previous = Some(r);
    }
    let update = update?;
    let after = f.on_clock_of(client, answer) - f.on_clock_of(client, update);
    let before = (wait.ms * 1e6) as i64 - after;
    (before > after && (0..threshold).contains(&after)).then(|| crate::model::LateRead {
        wait_from_frame: wait.from_frame,
        update_frame: update.frame,
        before_ms: before as f64 / 1e6,
        after_ms: after as f64 / 1e6,
    })
}

/// How soon after a server segment a client ACK answers it rather than
/// a read: a host's reaction (nagle.rs's own-host release).
const ANSWERING_NS: i64 = 2_000_000;

/// Behind a load balancer that wrote a PROXY protocol header (the
/// connection's client is the balancer, a host next to the server), each
/// of the client's answers to the server's handshake flights waits for
/// the balancer's own client: a round trip over a path this capture does
/// not see, and that client's work. The time each of those answers took
/// beyond this connection's round trip, timed as the client's time is
/// ([`client_time`]; else the turn less one round trip): `(turns, ns)`;
/// None without a header or a round trip.
pub(crate) fn behind_balancer(f: &Facts<'_>) -> Option<(u32, i64)> {
    f.report.proxy_protocol.as_ref()?;
    let rtt = f.rtt_ns.filter(|r| *r > 0)?;
    let (mut turns, mut hidden) = (0u32, 0i64);
    for t in f
        .handshake_turns()
        .iter()
        .filter(|t| t.answerer == Direction::ClientToServer && t.complete)
    {
        let beyond = client_time(f, t).unwrap_or(t.wait_ns - rtt).max(0);
        turns += 1;
        hidden += beyond;
    }
    Some((turns, hidden))
}

/// The plaintext preamble before TLS ([`Facts::preamble_turns`]): the
/// client's turns, from the server's answer (its last segment) to the
/// client's next message, the ClientHello last, timed as the handshake's
/// are ([`client_time`]); not a message that left the moment a server ACK
/// came (Nagle held it: when it was written is unknown). One finding in
/// the preamble's phase.
fn preamble(f: &Facts<'_>, threshold: i64, out: &mut Vec<Finding>) {
    let Some((kind, _)) = f.preamble_row() else {
        return;
    };
    let waits = slow(preamble_client_turns(f), threshold);
    if let Some(x) = preamble_finding(f, FindingKind::ClientThinkTime, kind, 0.0, waits) {
        out.push(x);
    }
}

/// The client's turns in the TLS handshake, timed (module docs), whatever
/// their length: not one whose answer waited behind the client's own
/// record (Nagle's), nor the part its certificate fetches took
/// (certificate_fetch's); none behind a balancer ([`behind_balancer`]).
pub(super) fn handshake_client_turns(f: &Facts<'_>) -> Vec<TimedTurn> {
    if f.report.proxy_protocol.is_some() {
        return Vec::new();
    }
    timed(f.handshake_turns(), |t| {
        if held_behind_own_record(f, t) {
            return None;
        }
        client_time(f, t).map(|own| own - super::certificate_fetch::fetched(f, t).ns)
    })
}

/// The client's turns in the plaintext preamble, timed as [`preamble`]
/// says, whatever their length; none behind a balancer.
pub(super) fn preamble_client_turns(f: &Facts<'_>) -> Vec<TimedTurn> {
    if f.report.proxy_protocol.is_some() {
        return Vec::new();
    }
    timed(f.preamble_turns(), |t| {
        if released_by_an_ack(f, t) {
            return None;
        }
        // A small answer in one segment arrives a one-way trip after it
        // left, as the handshake's packets did: no flight's serialization
        // to hide in the estimate.
        client_time(f, t).or_else(|| lone_small(f, t).then_some(t.wait_ns))
    })
}

/// The client's turns among `turns` that `think` can time (None when the
/// capture cannot tell), from the server's last segment to the client's
/// answer.
fn timed(turns: &[HandshakeTurn], think: impl Fn(&HandshakeTurn) -> Option<i64>) -> Vec<TimedTurn> {
    turns
        .iter()
        .filter(|t| t.answerer == Direction::ClientToServer)
        .filter_map(|t| {
            Some(TimedTurn {
                from_frame: t.question_frame,
                to_frame: t.answer_frame,
                ns: think(t)?,
            })
        })
        .collect()
}

/// Those of `turns` that reached `threshold`, as waits ended by the
/// client's own work.
fn slow(turns: Vec<TimedTurn>, threshold: i64) -> Vec<Wait> {
    turns
        .iter()
        .filter(|t| t.ns >= threshold)
        .map(TimedTurn::wait)
        .collect()
}

/// The largest server message whose arrival the handshake's round trip
/// places (a preamble's answers are a line or two): a bigger one's last
/// segment may have queued behind its first on a slow link.
const SMALL_ANSWER_BYTES: u32 = 512;

/// Whether the server's side of turn `t` was one segment of at most
/// [`SMALL_ANSWER_BYTES`], complete.
fn lone_small(f: &Facts<'_>, t: &HandshakeTurn) -> bool {
    let Some(q) = f.record(t.question_frame) else {
        return false;
    };
    let before = &f.timeline[..f.timeline.partition_point(|r| r.frame < q.frame)];
    let alone = before
        .iter()
        .rev()
        .find(|r| r.len > 0 && !r.probe)
        .is_none_or(|r| r.dir != q.dir);
    t.complete && alone && q.len <= SMALL_ANSWER_BYTES
}

/// Whether the client's answer in turn `t` left the moment a pure ACK of
/// the server's arrived (on the client's clock) that acknowledged client
/// data: the ACK may have released it (Nagle), and the client's work may
/// have ended long before.
fn released_by_an_ack(f: &Facts<'_>, t: &HandshakeTurn) -> bool {
    released_by_an_ack_of(f, t, |_| true)
}

/// Whether the client's answer in handshake turn `t` left the moment a
/// pure ACK of the server's arrived that acknowledged client data sent
/// inside the turn (TLS 1.3's compatibility ChangeCipherSpec, which
/// answers nothing): Nagle held the answer behind that small record
/// (nagle.rs names the hold), and when the client had it ready is
/// unknown.
pub(super) fn held_behind_own_record(f: &Facts<'_>, t: &HandshakeTurn) -> bool {
    let inside = f.between(t.question_frame + 1, t.answer_frame);
    let Some(first) = inside
        .iter()
        .find(|r| r.dir == Direction::ClientToServer && r.len > 0)
    else {
        return false;
    };
    released_by_an_ack_of(f, t, |ack| seq::lt(first.seq, ack))
}

/// Whether the client's answer in turn `t` left the moment a pure ACK of
/// the server's, inside the turn and acknowledging what `acks` accepts
/// (its acknowledgment number), arrived (on the client's clock).
fn released_by_an_ack_of(f: &Facts<'_>, t: &HandshakeTurn, acks: impl Fn(u32) -> bool) -> bool {
    let client = Direction::ClientToServer;
    let Some(answer) = f.record(t.answer_frame) else {
        return false;
    };
    let left = f.on_clock_of(client, answer);
    f.between(t.question_frame + 1, t.answer_frame)
        .iter()
        .filter(|r| r.dir != client && r.len == 0 && r.ack_set && acks(r.ack))
        .any(|r| f.released_by(client, left, f.on_clock_of(client, r)))
}

/// Whether the capture was taken at (or next to) the client: the
/// client's packets leave, and the server's arrive, as captured.
pub(super) fn at_client(f: &Facts<'_>) -> bool {
    f.report.vantage == Vantage::Client
        || (f.report.vantage == Vantage::Unknown && f.client_side_ns <= AT_CLIENT_NS)
}

/// The client's own time in a turn it answered (module docs), or None
/// when the capture cannot tell: a flight it did not show whole, or,
/// away from the client, no ACK of the client's for the flight's end.
pub(super) fn client_time(f: &Facts<'_>, t: &HandshakeTurn) -> Option<i64> {
    if !t.complete {
        return None;
    }
    // At (or next to) the client, the flight's arrival is seen. Away from
    // it, the arrival estimated from the handshake's round trip misses
    // what a slow link adds to a large flight (each segment queued behind
    // the last), which would read as the client's time: there only the
    // client's own acknowledgment of the flight's last segment tells when
    // it had the flight (an ACK leaves when data arrives, at the latest;
    // so does a segment that answers nothing, TLS 1.3's compatibility
    // ChangeCipherSpec, which acknowledges what had come).
    //
    // Past the client's uplink, that uplink may have held the answer
    // longer than the ACK (a Wi-Fi link waking or contending): by the
    // client's own clock (its TSvals, sender_clock.rs) the answer's hold
    // beyond the ACK's is the path's, not the client's time. (A capture
    // the handshake places at the client may still be past its uplink:
    // a router's, an access point's. Where it is at the client, the
    // clock shows no hold.)
    let at_client = at_client(f);
    let last = f.record(t.question_frame)?;
    let since_ack = f
        .between(t.question_frame + 1, t.answer_frame)
        .iter()
        .find(|r| r.dir == Direction::ClientToServer && r.ack_set && seq::le(last.end, r.ack))
        .map(|ack| {
            let since = t.answer_ts_ns - ack.ts_ns;
            // (Only a turn long enough to be a finding asks for the
            // clock: finding it costs a pass over the client's segments.)
            if f.rtt_ns.is_none_or(|rtt| since < threshold_of(rtt)) {
                return since;
            }
            let Some(answer) = f.record(t.answer_frame) else {
                return since;
            };
            let held_beyond =
                (f.held_after_sending_ns(answer) - f.held_after_sending_ns(ack)).max(0);
            // And no longer than the client's own clock says the answer
            // left after the ACK (nDPI's ja3_lots_of_cipher_suites_2_anon
            // 0: a bursty uplink spread packets stamped in one 10 ms tick
            // over 360 ms; the ACK and the key exchange 4 ticks apart,
            // 30-50 ms, had read as 71.7).
            let own = f.sent_apart_at_most_ns(ack, answer).unwrap_or(i64::MAX);
            (since - held_beyond).min(own)
        });
    match since_ack {
        Some(since_ack) if at_client => Some(since_ack.min(t.wait_ns)),
        Some(since_ack) => Some(since_ack),
        None if at_client => Some(t.wait_ns),
        None => None,
    }
}
