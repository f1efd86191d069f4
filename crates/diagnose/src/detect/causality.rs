//! Causality: the rules every finding obeys, whatever detector made it.
//!
//! A finding says "this packet waited, and that packet released it, and
//! the wait cost this much". On a real capture (duplicates, keep-alives,
//! heartbeats, clocks shifted by an RTT estimate) a detector's signature
//! can match things that cannot have happened. These rules are checked
//! here once, after every detector ran, on the [`Wait`]s a finding cites:
//!
//! 1. What releases a wait comes before it: the releasing packet was
//!    captured before the packet that left (at any vantage on the path the
//!    release passes the capture point before the answer it triggers does),
//!    and it reached the host that waited after the wait began (on that
//!    host's clock: the capture's order says so only for packets of one
//!    side).
//! 2. A release never acknowledges the very segment it released; nor was
//!    a pure ACK read by a sender whose segment echoes (TSecr) nothing
//!    newer than its previous one did while a newer peer segment can
//!    have reached it (RFC 7323's TS.Recent, from a sender seen taking
//!    pure ACKs' timestamps in and owing no ACK: `can_release`).
//! 3. The waiting and releasing packets come from opposite sides.
//! 4. A wait is no longer than the capture shows between its ends (plus
//!    the clock shift's error when the ends come from both sides; behind
//!    a relay that answered the client's SYN itself, whose capture times
//!    are when it read each packet, or where a SYN was held before the
//!    capture point, two of the client's own packets are as far apart as
//!    the client's clock says), and a finding's cost is
//!    the sum of its waits: no cost without a wait.
//! 5. Nagle never holds a full-size segment (`tcp_nagle_check` only
//!    applies to sub-MSS segments).
//!
//! 6. A set-up nobody waited for costs nothing: where the connection's
//!    first request left more than a client's turnaround after the set-up
//!    let it, or none left before it closed (`Facts::made_ahead_of_need`:
//!    a browser's preconnect, a pool's spare), what
//!    slowed the set-up (its lost SYNs, round trips, either host's
//!    computing, the lookup before it) delayed no request, and the
//!    request would have left when it did had the set-up been quick. Such
//!    a finding stays (what it found is true) at cost 0, saying what it
//!    would have cost (`unwaited`); the ledger counts those rows as idle.
//!    (Applied after the summaries, to them too; `connection_not_reused`
//!    and `resumption` weigh the idle time themselves.)
//!
//! A wait that breaks a rule is dropped; a finding left with no waits is
//! dropped; the cost is recomputed from what is left. Idle time is kept
//! out by the detectors themselves (each bounds its wait by what the
//! mechanism allows: a delayed-ACK timer, a retransmission timer), and
//! the ledger's absolute floor ([`EXCESS_FLOOR_NS`]) keeps microsecond
//! round trips from turning host work into "extra round trips".

use super::Facts;
use crate::model::{Detail, Direction, Finding, FindingKind, Wait};
use rttdoc_analyze::seq;
use rttdoc_analyze::{Exchange, SegmentRecord, Stamp};

/// Time beyond the ideal counts as excess only above this, whatever the
/// RTT: below it, host scheduling, interrupt coalescing and timestamping
/// noise dominate (on loopback a 50 µs RTT would turn 1 ms of host work
/// into "+20 RTT").
pub const EXCESS_FLOOR_NS: i64 = 2_000_000;

/// The longest a receiver may delay an ACK (RFC 1122 4.2.3.2: 0.5 s).
/// A Nagle hold lasts until the ACK of the last small segment comes back,
/// so it can never be longer than a round trip plus this.
pub const MAX_ACK_DELAY_NS: i64 = 500_000_000;

impl Facts<'_> {
    /// Rules 1-3 for one held segment and the packet said to release it;
    /// also, the held segment must not acknowledge data the peer sent
    /// after the release: then it left after that data arrived, and
    /// answers it (a reply is not a release).
    pub fn can_release(&self, release: &SegmentRecord, held: &SegmentRecord) -> bool {
        let before = release.frame < held.frame && release.ts_ns <= held.ts_ns;
        let acks_held = release.ack_set && seq::le(held.end, release.ack) && held.len > 0;
        if !before || acks_held || release.dir == held.dir {
            return false;
        }
        // The held segment echoes the newest timestamp its sender had
        // taken in (TS.Recent, RFC 7323 4.3: a pure ACK in sequence
        // updates it): one older than the release's TSval left before
        // the release was read (nDPI's googledns_android10.pcap 5: a DNS
        // answer echoing the query it answers, not the client's ACK taken
        // for its release). Only from a sender seen echoing a pure ACK's
        // timestamp: some stacks take in data's alone (an OpenFlow
        // switch's in tcpdump's of10_pf5240.pcap, its own clock stuck).
        // Several ACKs captured in a burst are read in turn (a host's
        // softirq takes a batch: nginx in the lab's ssai captures sent
        // after the first of eight, echoing its TSval): only an echo older
        // than all the peer sent since the sender's previous segment says
        // none of them had been read.
        if release.timestamped
            && held.timestamped
            && release.len == 0
            && seq::lt(held.tsecr, release.tsval)
            && self.read_none_since_previous(held)
            && self.echoes_pure_acks(held.dir)
        {
            return false;
        }
        // The ACK field is filled in when a segment leaves, so data that
        // arrived together with the release (a TLS compatibility
        // ChangeCipherSpec right behind an ACK) is acknowledged too without
        // being answered: only data well after the release counts.
        let rtt = self.rtt_ns.unwrap_or(0);
        let together = (rtt / 10).max(1_000_000);
        let answers_later_data = held.ack_set
            && self.between(release.frame + 1, held.frame).iter().any(|d| {
                d.dir == release.dir
                    && d.len > 0
                    && seq::le(d.end, held.ack)
                    && d.ts_ns - release.ts_ns > together
            });
        !answers_later_data
    }
}

impl Facts<'_> {
    /// Whether `held` echoes nothing newer than its sender's previous
    /// segment did, though a peer segment newer than that (its TSval
    /// beyond that echo) can have reached the sender before `held` left
    /// (on the sender's clock, within the clock shift's error): its
    /// sender had read none of those when it left, and none released it.
    fn read_none_since_previous(&self, held: &SegmentRecord) -> bool {
        let sender = held.dir;
        let error = self.shift_error_ns(sender);
        let left = self.on_clock_of(sender, held);
        let before = &self.timeline[..self.timeline.partition_point(|r| r.frame < held.frame)];
        // What the sender had read by its previous segment (its echo).
        let Some(previous) = before
            .iter()
            .rev()
            .find(|r| r.dir == sender && r.timestamped)
        else {
            return false;
        };
        let read = previous.tsecr;
        // A pure ACK updates TS.Recent only from a sender that owes no
        // ACK (Linux's `rcv_nxt == rcv_wup`, RFC 7323's `SEG.SEQ <=
        // Last.ACK.sent`): peer data that can have reached it beyond what
        // its previous segment acknowledged leaves its echo where it was,
        // whatever it read since (nDPI's 443-opvn.pcap 0: an OpenVPN
        // server's record released by the client's ACK, echoing the data
        // before it).
        let owes = before.iter().any(|r| {
            r.dir != sender
                && r.len > 0
                && self.on_clock_of(sender, r) - error <= left
                && !(previous.ack_set && seq::le(r.end, previous.ack))
        });
        if owes {
            return false;
        }
        let mut newer = before
            .iter()
            .filter(|r| r.dir != sender && r.timestamped && seq::lt(read, r.tsval))
            .filter(|r| self.on_clock_of(sender, r) - error <= left)
            .peekable();
        newer.peek().is_some() && newer.all(|r| seq::lt(held.tsecr, r.tsval))
    }

    /// Whether `sender` was seen echoing (TSecr) the TSval of a pure ACK
    /// of its peer's that no data segment of the peer's shared: its stack
    /// takes pure ACKs' timestamps in, as RFC 7323 says and Linux does.
    pub fn echoes_pure_acks(&self, sender: Direction) -> bool {
        *self.echoes_pure_acks_view[sender.index()].get_or_init(|| {
            let peer = sender.reverse();
            let stamped = |r: &&SegmentRecord| r.dir == peer && r.timestamped;
            let data: std::collections::BTreeSet<u32> = self
                .timeline
                .iter()
                .filter(stamped)
                .filter(|r| r.len > 0 || r.flags.syn() || r.flags.fin())
                .map(|r| r.tsval)
                .collect();
            let pure: std::collections::BTreeSet<u32> = self
                .timeline
                .iter()
                .filter(stamped)
                .filter(|r| r.len == 0 && !r.flags.syn() && !r.flags.fin())
                .map(|r| r.tsval)
                .filter(|v| !data.contains(v))
                .collect();
            self.timeline
                .iter()
                .any(|r| r.dir == sender && r.timestamped && pure.contains(&r.tsecr))
        })
    }
}

/// Linux's TCP_RTO_MAX (RFC 6298 allows 60 s and up): a silence longer
/// than this before a re-send (data, a SYN) is not a retransmission timer
/// running (a clock jump, a collage of captures).
pub const RTO_MAX_NS: i64 = 120_000_000_000;

/// Applies the rules to every finding with waits; see the module doc.
pub fn enforce(f: &Facts<'_>, out: &mut Vec<Finding>) {
    // The clock shift between the two sides is only as good as the RTT
    // estimate and the path's jitter.
    let shift_error_ns = f.rtt_ns.unwrap_or(0) + f.jitter_ns + 1_000_000;
    out.retain_mut(|x| {
        if x.waits.is_empty() {
            return true;
        }
        let nagle = x.kind.is_nagle();
        let lookup = x.kind.is_lookup();
        // What the rules drop (allocated only when something is).
        let mut dropped: Vec<Wait> = Vec::new();
        x.waits.retain(|w| {
            let ok = if lookup {
                lookup_obeys(f, w)
            } else if x.kind == FindingKind::HttpRedirect {
                redirect_obeys(f, w)
            } else if x.kind == FindingKind::HttpAuthChallenge {
                challenge_obeys(f, w)
            } else if x.kind == FindingKind::CorsPreflight {
                preflight_obeys(f, w)
            } else {
                obeys(f, w, nagle, shift_error_ns)
            };
            if !ok {
                dropped.push(*w);
            }
            ok
        });
        if x.waits.is_empty() && x.kind != FindingKind::Retransmission {
            return false;
        }
        // Rule 4: the cost is the sum of the waits, whatever the detector
        // summed (a retransmission stays a fact without its waits: the
        // data was sent twice, whatever it cost).
        let kept: f64 = x.waits.iter().map(|w| w.ms).sum();
        if (kept - x.cost_ms).abs() > 1e-9 {
            x.cost_ms = kept;
            x.cost_rtts = None;
        }
        if !dropped.is_empty() {
            recite(f, x, &dropped);
        }
        true
    });
}

/// Rule 6: the findings of a set-up nobody waited for cost nothing. A
/// finding is the set-up's when everything it cites came by the set-up's
/// end (the last data before the first request): its waits ended there,
/// or, without waits, its evidence frames did and its phase is a
/// set-up's.
pub fn unwaited_set_up(f: &Facts<'_>, out: &mut [Finding]) {
    use crate::model::{CostRule, Phase, Unwaited};
    let candidate = |x: &Finding| {
        x.cost_ms > 0.0
            && !matches!(
                x.kind,
                // Weigh the idle time themselves; or their request left
                // in the SYN or as early data, before any set-up.
                FindingKind::ConnectionNotReused
                    | FindingKind::TfoRejected
                    | FindingKind::EarlyData
            )
            && !matches!(x.kind.cost_rule(), CostRule::Outcome | CostRule::Risk)
    };
    if !out.iter().any(candidate) {
        return;
    }
    let Some(idle) = f.made_ahead_of_need() else {
        return;
    };
    let set_up_phase = |p: Option<Phase>| {
        matches!(
            p,
            Some(Phase::TcpHandshake | Phase::ProxyConnect | Phase::Starttls | Phase::TlsHandshake)
        )
    };
    for x in out.iter_mut().filter(|x| candidate(x)) {
        let by_set_up_end = if x.waits.is_empty() {
            set_up_phase(x.phase) && x.frames.iter().all(|&n| n <= idle.ready_frame)
        } else {
            x.unlisted_waits.is_none() && x.waits.iter().all(|w| w.to_frame <= idle.ready_frame)
        };
        if !by_set_up_end {
            continue;
        }
        x.unwaited = Some(Unwaited {
            cost_ms: x.cost_ms,
            idle_ms: idle.idle_ns as f64 / 1e6,
            ready_frame: idle.ready_frame,
            request_frame: (!idle.unused).then_some(idle.request_frame),
            closed_frame: (idle.unused && !idle.still_open).then_some(idle.request_frame),
            open_until_frame: idle.still_open.then_some(idle.request_frame),
            sibling_stream: idle.sibling.map(|s| s.0),
            sibling_frame: idle.sibling.map(|s| s.1),
        });
        x.waits.clear();
        x.cost_ms = 0.0;
        x.cost_rtts = None;
        x.attributed_ms = 0.0;
    }
}

/// The exchange (1-based) whose wait is the longest of `kept`: a server
/// think wait ends at its response's first frame. With the longest wait
/// dropped, the exchange named must be another one's.
fn longest_exchange_of(exchanges: &[Exchange], greeted: Option<u64>, kept: &[Wait]) -> Option<u32> {
    let longest = kept.iter().max_by(|a, b| a.ms.total_cmp(&b.ms))?;
    if Some(longest.to_frame) == greeted {
        return Some(0);
    }
    exchanges
        .iter()
        .position(|x| {
            x.response_first
                .is_some_and(|r| r.frame == longest.to_frame)
        })
        .map(|i| i as u32 + 1)
}

/// Whether one wait obeys rules 1-5.
fn obeys(f: &Facts<'_>, w: &Wait, nagle: bool, shift_error_ns: i64) -> bool {
    let (Some(from), Some(to)) = (f.record(w.from_frame), f.record(w.to_frame)) else {
        // Past a capped timeline there is nothing to check a wait
        // against (the exchanges go on): it stands as measured.
        return beyond_timeline(f, w) || until_seen(f, w);
    };
    if from.frame > to.frame || w.ms < 0.0 {
        return false;
    }
    if let Some(rel) = w.release_frame {
        let Some(rel) = f.record(rel) else {
            return false;
        };
        if !f.can_release(rel, to) || !began_before(f, from, rel, to.dir) {
            return false;
        }
    }
    let span_ns = to.ts_ns - from.ts_ns;
    let slack = if from.dir == to.dir {
        1_000
    } else {
        shift_error_ns
    };
    // Two of the client's own packets are as far apart as its clock
    // says (its TSvals at the rate its SYNs tell, a tick of slack),
    // however close the capture saw them: behind a relay that answered
    // the client's SYN itself (a phone's VPN capture app) the capture's
    // times are when the relay read each packet, and a client's first SYN
    // held on its side of the capture point reached it late (nDPI's
    // hpvirtgrp.pcap 6).
    // Between two of its SYNs, where the capture does not tell its
    // rate, the fastest a TCP clock ticks (1 kHz) gives the least time
    // they were apart (syn_retransmit.rs).
    let syns = from.flags.syn() && to.flags.syn() && !from.flags.ack() && !to.flags.ack();
    let clock_span_ns = f
        .client_clock_hz
        .or(syns.then_some(super::syn_retransmit::FASTEST_CLOCK_HZ))
        .filter(|&hz| {
            hz > 0
                && from.dir == Direction::ClientToServer
                && to.dir == Direction::ClientToServer
                && from.timestamped
                && to.timestamped
        })
        .map(|hz| {
            let tick = 1_000_000_000 / i64::from(hz);
            i64::from(to.tsval.wrapping_sub(from.tsval)) * tick + tick
        })
        .unwrap_or(0);
    if (w.ms * 1e6) as i64 > span_ns.max(clock_span_ns) + slack {
        return false;
    }
    !(nagle && to.len >= f.mss(to.dir))
}

/// Rules 1, 3 and 4 for a wait before the connection's SYN (its frames
/// are DNS packets and the client's SYNs, rttdoc-analyze's dns.rs): both
/// ends are the client's packets (one clock), the release an answer
/// captured between them, and the wait no longer than the capture shows.
fn lookup_obeys(f: &Facts<'_>, w: &Wait) -> bool {
    let Some(lookup) = f.lookup else {
        return false;
    };
    // The client's packets: its queries, its SYNs to the addresses it
    // tried first, this connection's SYN.
    let sent = |frame: u64| {
        lookup
            .queries
            .iter()
            .map(|q| q.sent)
            .chain(lookup.failed_attempts.iter().map(|a| a.syn))
            .find(|s| s.frame == frame)
            .or_else(|| {
                f.record(frame)
                    .filter(|r| r.dir == Direction::ClientToServer)
                    .map(|r| rttdoc_analyze::Stamp {
                        frame: r.frame,
                        ts_ns: r.ts_ns,
                    })
            })
    };
    let (Some(from), Some(to)) = (sent(w.from_frame), sent(w.to_frame)) else {
        return false;
    };
    if from.frame >= to.frame || w.ms < 0.0 {
        return false;
    }
    if let Some(rel) = w.release_frame {
        let answered = lookup
            .queries
            .iter()
            .filter_map(|q| q.answer)
            .find(|a| a.at.frame == rel);
        let Some(rel) = answered else {
            return false;
        };
        let between = from.frame < rel.at.frame && rel.at.frame < to.frame;
        if !between || rel.at.ts_ns < from.ts_ns || rel.at.ts_ns > to.ts_ns {
            return false;
        }
    }
    (w.ms * 1e6) as i64 <= to.ts_ns - from.ts_ns + 1_000
}

/// Rules 1, 3 and 4 for a redirect's wait (detect/http_redirect.rs),
/// whose ends may be on another connection (the redirected request, its
/// connection's SYN) or before this one's SYN (its name lookup): both ends
/// are the client's packets (one clock), the release the server's 3xx
/// answer captured between them, and the wait no longer than the capture
/// shows.
fn redirect_obeys(f: &Facts<'_>, w: &Wait) -> bool {
    f.exchanges
        .iter()
        .filter_map(|x| x.redirected.as_deref())
        .any(|r| {
            let a = &r.answered;
            let starts = [Some(a.request), a.opened_for_it];
            let ends = [r.began, r.follow_up];
            starts.into_iter().flatten().any(|from| {
                ends.into_iter()
                    .any(|to| released_between(w, from, a.answer, to))
            })
        })
}

/// Whether `w` is a wait of an authentication challenge's chain: from a
/// challenged request, released by its challenge, to the request sent in
/// answer (the next leg's, or the one finally served). Its ends may be
/// on another connection, as a redirect's.
fn challenge_obeys(f: &Facts<'_>, w: &Wait) -> bool {
    f.exchanges
        .iter()
        .filter_map(|x| x.challenged.as_deref())
        .any(|c| {
            let nexts = c.legs.iter().skip(1).map(|l| l.request);
            c.legs
                .iter()
                .zip(nexts.chain([c.follow_up]))
                .any(|(leg, next)| released_between(w, leg.request, leg.answer, next))
        })
}

/// Whether `w` is a CORS preflight's wait: from the preflight, released
/// by its answer, to the request it let go. Its ends may be on another
/// connection, as a redirect's.
fn preflight_obeys(f: &Facts<'_>, w: &Wait) -> bool {
    f.exchanges
        .iter()
        .filter_map(|x| x.preflighted.as_deref())
        .any(|p| released_between(w, p.preflight.request, p.preflight.answer, p.follow_up))
}

/// Whether `w` runs from `from` to `to` and was released by `rel`
/// between them, in the capture's order and on its clock, and measures
/// no more than that.
fn released_between(w: &Wait, from: Stamp, rel: Stamp, to: Stamp) -> bool {
    from.frame == w.from_frame
        && to.frame == w.to_frame
        && w.release_frame == Some(rel.frame)
        && from.frame < rel.frame
        && rel.frame < to.frame
        && from.ts_ns <= rel.ts_ns
        && rel.ts_ns <= to.ts_ns
        && w.ms >= 0.0
        && (w.ms * 1e6) as i64 <= to.ts_ns - from.ts_ns + 1_000
}

/// Whether the wait that began with `from` had begun when its release
/// `rel` reached the host that waited (`waiter`). From one side, the
/// capture's order says it; from both, only the waiter's clock does: at
/// a vantage near the releasing host, an ACK of the first segments of a
/// window is captured before the window's last segment passes, which the
/// sender had sent long before that ACK reached it.
fn began_before(
    f: &Facts<'_>,
    from: &SegmentRecord,
    rel: &SegmentRecord,
    waiter: Direction,
) -> bool {
    if from.dir == rel.dir {
        return from.frame <= rel.frame;
    }
    let shift_error_ns = f.rtt_ns.unwrap_or(0) / 10 + f.jitter_ns + 1_000_000;
    f.on_clock_of(waiter, rel) + shift_error_ns >= f.on_clock_of(waiter, from)
}

/// A wait from one of the connection's own packets, with no release, to
/// the frame the capture had reached when the connection was handed on
/// (`Facts::seen_until`: a client still waiting for an answer to its
/// SYNs): no longer than the capture shows between the two.
fn until_seen(f: &Facts<'_>, w: &Wait) -> bool {
    let (Some(end), Some(from)) = (f.seen_until, f.record(w.from_frame)) else {
        return false;
    };
    w.to_frame == end.frame
        && w.release_frame.is_none()
        && w.ms >= 0.0
        && (w.ms * 1e6) as i64 <= end.ts_ns - from.ts_ns + 1_000
}

/// Whether a wait cites frames past the end of a timeline that was cut at
/// its cap ([`rttdoc_analyze::TIMELINE_CAP`]).
fn beyond_timeline(f: &Facts<'_>, w: &Wait) -> bool {
    let capped = f.timeline.len() >= rttdoc_analyze::TIMELINE_CAP;
    let last = f.timeline.last().map_or(0, |r| r.frame);
    capped && (w.to_frame > last || w.from_frame > last)
}

/// After the rules dropped some of a finding's waits: its evidence frames
/// lose what only the dropped waits cited, the kept waits' frames are
/// cited (up to 8), and the counts of waits its words are made of follow
/// the waits.
/// A retransmission's frames are the re-sends, whatever they cost: kept.
fn recite(f: &Facts<'_>, x: &mut Finding, dropped: &[Wait]) {
    if x.kind == FindingKind::Retransmission {
        return;
    }
    let cites = |w: &Wait, frame: u64| {
        w.from_frame == frame || w.to_frame == frame || w.release_frame == Some(frame)
    };
    let kept = &x.waits;
    x.frames
        .retain(|fr| !dropped.iter().any(|w| cites(w, *fr)) || kept.iter().any(|w| cites(w, *fr)));
    for w in kept.iter().take(8) {
        if x.frames.len() >= super::FRAMES_CITED {
            break;
        }
        for fr in [Some(w.to_frame), w.release_frame].into_iter().flatten() {
            if !x.frames.contains(&fr) {
                x.frames.push(fr);
            }
        }
    }
    let n = kept.len() as u32;
    match &mut x.detail {
        Detail::Nagle { holds, .. } => *holds = n,
        Detail::ZeroWindow { episodes, .. } => *episodes = n,
        Detail::RwndLimited { stalls, .. } => *stalls = n,
        Detail::RtoStall { stalls, .. } => *stalls = n,
        // The wait before the ServerHello began at the ClientHello, before
        // every later flight's: the earliest of all the finding had.
        Detail::HandshakeThinkTime {
            hello_ms, later_ms, ..
        } => {
            let hello_dropped = *hello_ms > 0.0
                && dropped.iter().map(|w| w.from_frame).min()
                    < kept.iter().map(|w| w.from_frame).min().or(Some(u64::MAX));
            if hello_dropped {
                *hello_ms = 0.0;
            }
            *later_ms = kept.iter().map(|w| w.ms).sum::<f64>() - *hello_ms;
        }
        Detail::CertificateFetch {
            held: crate::model::FetchHeld::Handshake { turns },
            ..
        } => *turns = n,
        Detail::ClientThinkTime {
            turns,
            longest_ms,
            late_read,
            ..
        } => {
            *turns = n;
            *longest_ms = kept.iter().map(|w| w.ms).fold(0.0, f64::max);
            if late_read.is_some_and(|r| kept.iter().all(|w| w.from_frame != r.wait_from_frame)) {
                *late_read = None;
            }
        }
        // The greeting is the preamble's first data, when the server's.
        Detail::PreambleThinkTime {
            greeting_ms,
            turns,
            longest_ms,
            ..
        } => {
            *turns = n;
            *longest_ms = kept.iter().map(|w| w.ms).fold(0.0, f64::max);
            let greeted = f.preamble_row().and_then(|(_, row)| {
                f.between(row.start_frame, row.end_frame)
                    .iter()
                    .find(|r| r.len > 0)
                    .filter(|r| r.dir == Direction::ServerToClient)
                    .map(|r| r.frame)
            });
            *greeting_ms = kept
                .iter()
                .find(|w| Some(w.to_frame) == greeted)
                .map_or(0.0, |w| w.ms);
        }
        // SYNs sent is a count of packets, not of waits: it stands.
        Detail::ExchangeThinkTime {
            greeting_ms,
            slow,
            longest_ms,
            longest_exchange,
            longest_label,
            ..
        } => {
            *slow = n;
            *longest_ms = kept.iter().map(|w| w.ms).fold(0.0, f64::max);
            let greeted = f.greeting.map(|(_, g)| g.frame);
            *greeting_ms = kept
                .iter()
                .find(|w| Some(w.to_frame) == greeted)
                .map_or(0.0, |w| w.ms);
            if let Some(i) = longest_exchange_of(f.exchanges, greeted, kept) {
                *longest_exchange = i;
                *longest_label = super::server_think_time::label_of(f.exchanges, i as usize);
            }
        }
        _ => {}
    }
    x.display_filter = if x.frames.is_empty() {
        format!("tcp.stream eq {}", x.stream)
    } else {
        super::frames_filter(x.stream, &x.frames)
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use rttdoc_analyze::Stamp;

    fn exchange(request: u64, response: u64) -> Exchange {
        let at = |frame| Stamp { frame, ts_ns: 0 };
        Exchange {
            request_first: at(request),
            request_last: at(request),
            request_bytes: 100,
            response_first: Some(at(response)),
            response_last: Some(at(response)),
            response_bytes: 100,
            label: None,
            status: None,
            expects_continue: false,
            h2_control_sized: false,
            upstream: None,
            host_calls: None,
            connect_back: None,
            asked_elsewhere: None,
            downlink_busy_ns: 0,
            downlink_gaps: None,
            response_in_hole: false,
            response_seen: None,
            request_resent: None,
            asks_to_wait: false,
            http: false,
            pipelined: 0,
            redirected: None,
            redirects_to: None,
            challenged: None,
            preflighted: None,
            via: None,
            before_pause: None,
            bytes_after_pause: 0,
        }
    }

    fn wait(from: u64, to: u64, ms: f64) -> Wait {
        Wait {
            from_frame: from,
            to_frame: to,
            release_frame: None,
            ms,
        }
    }

    /// The detector named exchange 2 (60 ms); with that wait dropped by
    /// the rules, the longest left is exchange 3's (30 ms), not 1's.
    #[test]
    fn the_longest_exchange_is_named_from_the_waits_kept() {
        let exchanges = [exchange(4, 6), exchange(8, 10), exchange(12, 14)];
        let kept = [wait(4, 6, 10.0), wait(12, 14, 30.0)];
        assert_eq!(longest_exchange_of(&exchanges, None, &kept), Some(3));
        let all = [wait(4, 6, 10.0), wait(8, 10, 60.0), wait(12, 14, 30.0)];
        assert_eq!(longest_exchange_of(&exchanges, None, &all), Some(2));
        assert_eq!(longest_exchange_of(&exchanges, None, &[]), None);
    }

    /// A server's greeting (frame 3) is exchange 0 when its wait is the
    /// longest kept.
    #[test]
    fn a_greeting_s_wait_names_exchange_0() {
        let exchanges = [exchange(4, 6), exchange(8, 10)];
        let kept = [wait(2, 3, 300.0), wait(8, 10, 30.0)];
        assert_eq!(longest_exchange_of(&exchanges, Some(3), &kept), Some(0));
        assert_eq!(
            longest_exchange_of(&exchanges, Some(3), &kept[1..]),
            Some(2)
        );
    }
}
