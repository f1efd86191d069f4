//! The round-trip ledger: where a connection's time went, in milliseconds
//! and in round trips, against the ideal for what was negotiated.
//!
//! Times are taken from the client's point of view, whatever the vantage:
//! a packet the server sent reaches the client `b` later than the capture
//! point saw it, and a packet the client sent left it `b/2` earlier, where
//! `b` is the SYN-ACK -> ACK gap (the client side of the path, both ways).
//! So each phase is measured between client-side events, with server-sent
//! packets shifted by `b`. At a client-side capture `b` is ~0; at the server
//! it is the whole RTT; in the middle, the client's share of it.

use crate::model::{
    AttemptReport, ConnectionReport, CostRule, CostlyKeyExchange, Detail, Direction, LedgerRow,
    MptcpSubflowKind, NameLookupReport, Phase, RttSource, Vantage,
};
use rttdoc_analyze::{vantage, ConnectionFacts, Exchange, Stamp};
use rttdoc_wire::tls::{is_tls13, version_name};

/// Initial congestion window in segments (RFC 6928, Linux default).
const INITIAL_WINDOW: u64 = 10;

/// Rounds slow start needs to deliver `bytes` from an initial window of
/// [`INITIAL_WINDOW`] segments of `mss` bytes, doubling every round trip.
pub fn slow_start_rounds(bytes: u64, mss: u64) -> u32 {
    let segments = bytes.div_ceil(mss.max(1));
    let (mut sent, mut cwnd, mut rounds) = (0u64, INITIAL_WINDOW, 0u32);
    while sent < segments {
        sent += cwnd;
        cwnd *= 2;
        rounds += 1;
    }
    rounds
}

struct Clock {
    /// Shift applied to server-sent packets (ns).
    shift_ns: i64,
    rtt_ns: Option<i64>,
}

impl Clock {
    fn row(
        &self,
        phase: Phase,
        label: String,
        exchange: Option<u32>,
        start: (Stamp, bool),
        end: (Stamp, bool),
        (ideal, ideal_basis): (Option<f64>, String),
    ) -> LedgerRow {
        let t = |(s, server): (Stamp, bool)| s.ts_ns + if server { self.shift_ns } else { 0 };
        let duration_ns = (t(end) - t(start)).max(0);
        let duration_ms = duration_ns as f64 / 1e6;
        let (rtts, excess_rtts, excess_ms) = excess_of(duration_ns, ideal, self.rtt_ns);
        LedgerRow {
            phase,
            label,
            exchange,
            start_frame: start.0.frame,
            end_frame: end.0.frame,
            duration_ms,
            rtts,
            ideal_rtts: ideal,
            excess_rtts,
            excess_ms,
            ideal_basis,
            summed: 0,
        }
    }
}

/// How a TLS handshake that never completed ended, when the connection
/// did: its first FIN or RST after the ClientHello (`hello_frames`), and
/// whether the server sent it. Only a handshake stalled under way, which
/// the client gave up on: its FIN or RST came while server data sent to
/// it was still unacknowledged (part of the server's answer had not
/// reached it: the client was waiting for the rest), or while its own
/// handshake bytes were, after its timer had re-sent some of them or a
/// second after them (`given_up_exchanges`' rule: nDPI's
/// skype_no_unknown.pcap 41, a 28-byte write never acknowledged, the
/// FIN 1.1 s after it). Not a server that never answered a request that
/// reached it (no turn of the ledger, as a request never answered is
/// none), nor a client that had all the server sent and closed (its own
/// decision: a certificate it refused). None when the client sent data
/// after its ClientHello beyond one alert's worth (a handshake the
/// analysis could not follow, not one that stopped) or the capture ended
/// first.
fn given_up(
    timeline: &[rttdoc_analyze::SegmentRecord],
    hello_frames: &[u64],
) -> Option<(Stamp, bool)> {
    /// An alert record: 7 bytes in the clear, up to ~40 encrypted.
    const ALERT_BYTES: u32 = 64;
    use rttdoc_analyze::seq;
    let hello_start = *hello_frames.first()?;
    let hello_end = *hello_frames.last()?;
    let mut client_bytes = 0u32;
    // The end of the server's data so far.
    let mut server_sent: Option<u32> = None;
    // The end of the client's data so far, when it sent its last, whether
    // its timer re-sent any, and how far the server acknowledged it.
    let mut client_sent: Option<(u32, i64)> = None;
    let mut client_resent = false;
    let mut server_acked: Option<u32> = None;
    for r in timeline.iter().filter(|r| r.frame >= hello_start) {
        if r.dir == Direction::ClientToServer && r.len > 0 {
            client_sent = Some(client_sent.map_or((r.end, r.ts_ns), |(e, t)| {
                (seq::max(e, r.end), t.max(r.ts_ns))
            }));
            client_resent |= r.retransmission;
        }
        if r.dir == Direction::ServerToClient && r.ack_set {
            server_acked = Some(server_acked.map_or(r.ack, |a| seq::max(a, r.ack)));
        }
        if r.frame <= hello_end {
            continue;
        }
        if r.dir == Direction::ClientToServer && !r.retransmission {
            client_bytes = client_bytes.saturating_add(r.len);
        }
        if r.dir == Direction::ServerToClient && r.len > 0 {
            server_sent = Some(server_sent.map_or(r.end, |e| seq::max(e, r.end)));
        }
        if client_bytes > ALERT_BYTES {
            return None;
        }
        if r.flags.fin() || r.flags.rst() {
            let answer_unread = server_sent.is_some_and(|e| !r.ack_set || seq::lt(r.ack, e));
            let own_unacked = client_sent.is_some_and(|(e, last_ns)| {
                server_acked.is_none_or(|a| seq::lt(a, e))
                    && (client_resent || r.ts_ns - last_ns >= crate::detect::GAVE_UP_AFTER_NS)
            });
            let waiting = r.dir == Direction::ClientToServer && (answer_unread || own_unacked);
            if !waiting {
                return None;
            }
            let stop = Stamp {
                frame: r.frame,
                ts_ns: r.ts_ns,
            };
            return Some((stop, r.dir == Direction::ServerToClient));
        }
    }
    None
}

/// A row's length in round trips and its excess beyond the `ideal`, in
/// round trips and ms: `(rtts, excess_rtts, excess_ms)`.
fn excess_of(
    duration_ns: i64,
    ideal: Option<f64>,
    rtt_ns: Option<i64>,
) -> (Option<f64>, Option<f64>, Option<f64>) {
    let rtts = rtt_ns
        .filter(|r| *r > 0)
        .map(|r| duration_ns as f64 / r as f64);
    // Beyond the ideal counts only above an absolute floor: on a
    // microsecond path, host work would otherwise read as many "extra
    // round trips" (detect/causality.rs).
    let floor_ms = crate::detect::causality::EXCESS_FLOOR_NS as f64 / 1e6;
    let excess_rtts = match (rtts, ideal) {
        (Some(r), Some(i)) => Some((r - i).max(0.0)),
        _ => None,
    };
    let excess_ms = excess_rtts.and_then(|e| rtt_ns.map(|r| e * r as f64 / 1e6));
    match excess_ms {
        Some(ms) if ms < floor_ms => (rtts, excess_rtts.map(|_| 0.0), Some(0.0)),
        _ => (rtts, excess_rtts, excess_ms),
    }
}

/// The client's and the server's fastest answers from the capture point
/// that can place it ([`place_by_fastest_answers`]): a pure ACK's, which
/// carries no application time, and an answer with data (or a timestamp
/// echo) that came within [`NEAR_ANSWER_NS`]. An answer with data may hold
/// any amount of the application's time, and the round trip it is set
/// against is itself read from such answers (`quickplay` 0: a request
/// acknowledging an answer 9 s old made the "round trip" 9 s, and the
/// server's 100 ms answer looked like a host at the capture point); but
/// an answer within a millisecond was the host's own, there.
/// (`dnscrypt-v2-doh`: joined after their handshakes, each client answered
/// the server's records within 0.1 ms with data of its own, and sent no
/// pure ACK.)
fn near_answers(rtt: &rttdoc_analyze::RttFacts) -> (Option<i64>, Option<i64>) {
    let near = |ns: Option<i64>| ns.filter(|&ns| ns <= NEAR_ANSWER_NS);
    let fastest = |a: Option<i64>, b: Option<i64>| a.into_iter().chain(b).min();
    let (client, server) = rtt.pure_ack_sides;
    (
        fastest(client, near(rtt.min_client_side)),
        fastest(server, near(rtt.min_server_side.map(|(ns, _)| ns))),
    )
}

/// How soon an answer with data must come to be its host's own
/// turnaround wherever the round trip is read from ([`near_answers`]).
const NEAR_ANSWER_NS: i64 = 1_000_000;

/// Where a capture without a handshake to go by was taken, and the client
/// side of the path (the clock shift), from the hosts' fastest answers
/// ([`near_answers`]). No answer can reach the capture point sooner than
/// the path to its host and back: a host whose fastest answer came within
/// its own turnaround is at the capture point. A longer gap says nothing:
/// it may be a delayed ACK (200 ms on Windows and macOS, 40 ms and more on
/// Linux) or the application's time as well as a path (`many-protocols`
/// 1, captured at a client whose ACKs all waited 195-199 ms on a 175 ms
/// path, would be placed in the middle).
fn place_by_fastest_answers(
    (client, server): (Option<i64>, Option<i64>),
    rtt_ns: Option<i64>,
) -> Option<(Vantage, i64)> {
    let rtt = rtt_ns?;
    if let Some(cs) = client {
        if vantage((rtt - cs).max(0), cs) == Vantage::Client {
            return Some((Vantage::Client, cs));
        }
    }
    if let Some(ss) = server {
        let cs = (rtt - ss).max(0);
        if vantage(ss, cs) == Vantage::Server {
            return Some((Vantage::Server, cs));
        }
    }
    None
}

/// A server that speaks first (SMTP, FTP, POP3, IMAP, MySQL, an SSH
/// server whose banner came first) and a client that waited for it: the
/// packet that opened the connection for the server's application (the
/// handshake's ACK: it can greet once it has it) and the greeting's first
/// segment. The client waited when its first data left after the
/// greeting's arrival (on its clock: not before the greeting can have
/// reached it) and within an ACK's longest delay of it, its answer to it
/// (`EHLO`, `USER`, a login); a client that spoke much later, or never,
/// was not waiting (a channel
/// whose server pushes when it has news is idle until then), and the
/// time is nobody's; so is a greeting that was a tick of the server's own
/// timer (`pushed_exchanges`) or a heartbeat's first ping (the client's
/// answer to it a reply the server's timer answered): its row is idle.
/// Inside TLS (implicit TLS: SMTPS, IMAPS, POP3S, FTPS) the greeting
/// comes after the handshake the ledger times on its own: from the
/// client's Finished (`from`).
fn waited_greeting(
    c: &ConnectionFacts,
    from: Option<Stamp>,
    shift_ns: i64,
    jitter_ns: i64,
) -> Option<(Stamp, Stamp)> {
    // A Multipath TCP subflow joined to a connection already open carries
    // the connection's data from its first segment: no greeting.
    if c.mptcp
        .as_ref()
        .is_some_and(|m| m.subflow != MptcpSubflowKind::First)
    {
        return None;
    }
    let greeted = c.greeting?;
    let opened = from.filter(|a| a.frame < greeted.frame)?;
    let answer = c.exchanges.first()?.request_first;
    // On the client's clock: its answer left after the greeting arrived
    // (less the clock shift's error and a millisecond), and soon after.
    let reacted_ns = answer.ts_ns - (greeted.ts_ns + shift_ns);
    let waited = -(jitter_ns + 1_000_000)..=crate::detect::causality::MAX_ACK_DELAY_NS;
    (answer.frame > greeted.frame && waited.contains(&reacted_ns)).then_some((opened, greeted))
}

/// Adds `extra_ns` that were nobody's round trips on this path (a
/// sender's own pauses, a balancer's client) to a row's ideal, its excess
/// measured again, `words` saying why in its basis.
fn widen_ideal(row: &mut LedgerRow, extra_ns: i64, rtt_ns: i64, words: &str) {
    let ideal = row.ideal_rtts.unwrap_or(0.0) + extra_ns as f64 / rtt_ns as f64;
    let duration_ns = (row.duration_ms * 1e6).round() as i64;
    (row.rtts, row.excess_rtts, row.excess_ms) = excess_of(duration_ns, Some(ideal), Some(rtt_ns));
    row.ideal_rtts = Some(ideal);
    row.ideal_basis.push_str(words);
}

/// A sender's own pauses inside what it sent, from frame `first` to frame
/// `last` (a response's transfer, the server's; a request's upload, the
/// client's): before each of its new-data segments that left when
/// everything it had sent was acknowledged (on its clock, the peer's
/// packets arriving `peer_side_ns` after they were captured), with room
/// for a full segment (`mss`) in the peer's last window (its scale
/// `peer_wscale`), and at least `release_ns` after the peer's last packet
/// came (the caller's: a round trip, as the path's varies). A sender with
/// nothing in flight and room in the window is held by no Nagle,
/// congestion or receive window, and what a packet of the peer's released
/// would have left when it came: the sender had nothing to send from its
/// previous segment on, and the pause (at least the excess floor) is its
/// application's (a stream's next event, a notification, a slow producer,
/// an upload read from a pipe), not the path's; not a segment that
/// arrived inside a stretch of `busy` (the client's downlink saturated by
/// its connections, where arrivals no longer tell departures). So is the
/// pause before a segment in `as_written` (sorted frames: what the sender
/// sent the moment it wrote it, detect/sender_pace.rs), whatever was in
/// flight and however soon: nothing held it. `(pauses, their sum in
/// ns)`; records past the timeline's cap are not looked at.
fn sender_pauses(
    timeline: &[rttdoc_analyze::SegmentRecord],
    sender: Direction,
    (first, last): (u64, u64),
    peer_side_ns: i64,
    (release_ns, peer_wscale, mss): (i64, u8, u64),
    busy: &[rttdoc_analyze::BusyRun],
    as_written: &[u64],
) -> (u32, i64) {
    use rttdoc_analyze::seq;
    // A window with less room than a full segment may hold a sender on
    // purpose (silly-window avoidance, RFC 1122 4.2.3.4), whatever it has.
    let room = mss.max(1);
    let lo = timeline.partition_point(|r| r.frame < first);
    let hi = timeline.partition_point(|r| r.frame <= last).max(lo);
    let floor = crate::detect::causality::EXCESS_FLOOR_NS;
    let (mut pauses, mut paused) = (0u32, 0i64);
    let mut sent_end: Option<u32> = None;
    let mut acked: Option<u32> = None;
    let mut previous: Option<i64> = None;
    // The peer's last packet: when it reached the sender, its window.
    let mut peer_last: Option<(i64, u64)> = None;
    for r in &timeline[lo..hi] {
        if r.dir == sender && r.len > 0 {
            let idle = sent_end
                .zip(acked)
                .is_some_and(|(sent, acked)| seq::le(sent, acked));
            if let (true, Some(prev)) = (r.new_data && !r.retransmission, previous) {
                let pause = r.ts_ns - prev;
                // Away from the server, a segment that arrived while the
                // client's downlink was saturated may have left long before,
                // released, and queued behind the other connections' data.
                let queued = busy
                    .iter()
                    .any(|b| b.from_ns <= r.ts_ns && r.ts_ns <= b.to_ns);
                let long_idle = idle
                    && peer_last.is_some_and(|(came, window)| {
                        r.ts_ns - came >= release_ns && window >= room
                    });
                let written = as_written.binary_search(&r.frame).is_ok();
                if (long_idle || written) && pause >= floor && !queued {
                    pauses += 1;
                    paused += pause;
                }
            }
            sent_end = Some(sent_end.map_or(r.end, |e| seq::max(e, r.end)));
            previous = Some(r.ts_ns);
        } else if r.dir != sender && r.ack_set {
            acked = Some(acked.map_or(r.ack, |a| seq::max(a, r.ack)));
            let window = u64::from(r.window) << peer_wscale.min(14);
            peer_last = Some((r.ts_ns + peer_side_ns, window));
        }
    }
    (pauses, paused)
}

/// The shortest time after the client's last packet a server's data can
/// leave and be taken for its own pause (`sender_pauses`): longer than a
/// queue on the path commonly adds to a round trip.
const SERVER_IDLE_MIN_NS: i64 = 500_000_000;

/// A duration for a ledger row's basis: milliseconds, seconds from one.
fn duration_words(ns: i64) -> String {
    let ms = ns as f64 / 1e6;
    if ms >= 1000.0 {
        format!("{:.2} s", ms / 1e3)
    } else {
        format!("{ms:.1} ms")
    }
}

/// The longest round trip taken for a path's (ten minutes).
const MAX_RTT_NS: i64 = 600_000_000_000;

/// Diagnoses a later window of a long connection (its facts say which)
/// and folds what it found into what the windows before it found
/// (window.rs); returns the window's report, its findings those folded.
/// Given the timeline (window 0), keeps only which senders it shows
/// without Nagle, for the windows to be told.
pub(crate) fn fold_window(
    mut c: ConnectionFacts,
    later: &mut Option<Box<crate::model::LaterWindows>>,
) -> Option<ConnectionReport> {
    let window = c.window?;
    let before = later.as_ref().map_or([false; 2], |l| l.nagle_off);
    if window.index == 0 {
        // Its findings are the connection's own, made when it ends.
        c.detect = false;
        let (_, nagle_off) = report_with(c, before);
        later.get_or_insert_with(Default::default).nagle_off = nagle_off;
        return None;
    }
    let (report, nagle_off) = report_with(c, before);
    Some(crate::window::fold(window, report, nagle_off, later))
}

pub fn report(c: ConnectionFacts) -> ConnectionReport {
    report_with(c, [false; 2]).0
}

/// The report of a connection (or of a long connection's later window,
/// told which senders an earlier window showed without Nagle), and per
/// sender whether these facts show it without Nagle (or an earlier
/// window did): what the next window is told.
fn report_with(
    mut c: ConnectionFacts,
    nagle_off_before: [bool; 2],
) -> (ConnectionReport, [bool; 2]) {
    // A later window of a long connection: its exchanges' rows and the
    // detectors of what recurs, nothing of the connection's beginning.
    let window = c.window;
    // What a long connection's windows found, its last one's too.
    let mut later = c.earlier.take();
    if let Some(last) = c.last_window.take() {
        let rows = fold_window(*last, &mut later).map(|r| r.ledger);
        if let (Some(l), Some(rows)) = (later.as_mut(), rows) {
            l.last_rows = rows;
        }
    }
    // (Only the timeline's verdict, no window diagnosed: none to join.)
    let later = later.filter(|l| l.windows > 0);
    let windowed = window.is_some() || later.is_some();
    let handshake = c.handshake.clone();

    // Path RTT: a clean handshake (one SYN, one SYN-ACK) times one full
    // round trip from any vantage. With retransmissions it is ambiguous
    // which packet answered which (Karn), so data/ACK and timestamp samples
    // come first, the last SYN to the ACK only as a last resort.
    let clean = c.syn_count == 1 && c.syn_ack_count == 1;
    let clean_handshake_ns = match (c.first_syn, c.handshake_ack) {
        (Some(syn), Some(ack)) if clean && ack.ts_ns > syn.ts_ns => Some(ack.ts_ns - syn.ts_ns),
        _ => None,
    };
    let best = c.rtt.two_sided_estimate;
    let best_sample = best.map(|(ns, _)| ns);
    // How much the path's round trip varies: a handshake slower than the
    // fastest round trip seen later (queueing, a busy host or emulator)
    // says by how much a fixed clock shift can be off.
    let jitter_ns = match (clean_handshake_ns, best_sample) {
        (Some(hs), Some(est)) => (hs - est).clamp(0, est),
        _ => 0,
    };
    // A clean handshake can still be slowed (a busy server answering the
    // SYN late, address resolution or a waking link delaying the first
    // packet); samples from both directions over the whole connection bound
    // it from below when they are smaller. Each sample is at least its part
    // of the path, so their sum cannot undercut the RTT; the floor at half
    // the handshake only guards against a broken sample.
    // (Named by the samples it then is: "from the handshake" next to a
    // handshake of another length would say what is not.)
    // The handshake times each side of the capture point once (SYN ->
    // SYN-ACK the server's, SYN-ACK -> ACK the client's); each side's
    // fastest answer to data bounds it too. With the handshake among them
    // no guess is needed at which side is the capture's own host (a
    // client whose delayed ACKs are its slowest answers is still placed
    // by its ACK of the SYN-ACK: Beats' ipv6.pcap).
    let clean_sides = match (c.first_syn, c.syn_ack, c.handshake_ack) {
        (Some(syn), Some(sa), Some(ack))
            if clean && sa.ts_ns >= syn.ts_ns && ack.ts_ns >= sa.ts_ns =>
        {
            Some((sa.ts_ns - syn.ts_ns, ack.ts_ns - sa.ts_ns))
        }
        _ => None,
    };
    let by_sides = clean_sides.map(|(server_hs, client_hs)| {
        let (server, source) = match c.rtt.min_server_side {
            Some((ns, source)) if ns < server_hs => (ns, source),
            _ => (server_hs, RttSource::Handshake),
        };
        let client = c
            .rtt
            .min_client_side
            .map_or(client_hs, |ns| ns.min(client_hs));
        let source = match (source, best) {
            // Only the client's side was sharpened: named by the
            // samples that did it.
            (RttSource::Handshake, Some((_, kind))) => kind,
            (RttSource::Handshake, None) => RttSource::DataAck,
            (kind, _) => kind,
        };
        // At an endpoint its own side is a turnaround the ledger's
        // phases, timed at the capture point, do not contain: the far
        // side alone (the handshake's own placing rule).
        let rtt = match vantage(server, client) {
            Vantage::Client => server,
            Vantage::Server => client,
            _ => server + client,
        };
        (rtt, source)
    });
    // The client ACKs the SYN-ACK the moment it arrives, so the gap from
    // that SYN-ACK (matched by the ACK's TSecr when there were several) to
    // the ACK is the client side of the path, both ways: the shift that
    // puts server-sent packets on the client's clock, and the vantage.
    let trigger = c.handshake_ack.and_then(|ack| {
        let by_ts = c.handshake_ack_tsecr.and_then(|ecr| {
            c.syn_acks
                .iter()
                .find(|(_, val)| *val == Some(ecr))
                .map(|(s, _)| *s)
        });
        by_ts.or_else(|| {
            c.syn_acks
                .iter()
                .rev()
                .find(|(s, _)| s.frame < ack.frame)
                .map(|(s, _)| *s)
        })
    });
    // A handshake whose SYN was sent again is ambiguous on the server's
    // side (which SYN did the SYN-ACK answer? Karn), not on the client's:
    // the SYN-ACK it acknowledged to its ACK is its side, as in a clean
    // one. With the server's side from its fastest answer to data, the
    // sides place the capture, and the round trip is the far side's (or
    // both): without them the data samples' own guess takes the slower
    // side for the far one, and a client whose delayed ACKs took 500 ms
    // behind a capture next to it read as a 518 ms round trip (nDPI's
    // hpvirtgrp.pcap 6: SYN-ACK -> ACK 3.5 ms, the server's ACK of data
    // 28 ms).
    // (Only where the SYN-ACK it acknowledged is known: the one SYN-ACK,
    // or the one its ACK echoes. After several, which it took is a guess,
    // and a client that acknowledged none of seven with its data 3.3 s
    // after the last is no side of the path: nDPI's tls_port_80.pcapng.)
    let trigger_known = c.syn_ack_count == 1
        || c.handshake_ack_tsecr
            .is_some_and(|ecr| c.syn_acks.iter().any(|(_, val)| *val == Some(ecr)));
    let retried_by_sides = match (trigger, c.handshake_ack, c.rtt.min_server_side) {
        (Some(sa), Some(ack), Some((server, source)))
            if !clean && trigger_known && ack.ts_ns >= sa.ts_ns =>
        {
            let client_hs = ack.ts_ns - sa.ts_ns;
            let client = c
                .rtt
                .min_client_side
                .map_or(client_hs, |ns| ns.min(client_hs));
            let rtt = match vantage(server, client) {
                Vantage::Client => server,
                Vantage::Server => client,
                _ => server + client,
            };
            Some((rtt, source)).filter(|&(ns, _)| ns > 0)
        }
        _ => None,
    };
    // A SYN-ACK that came in the release of a proven stall of the
    // client's path (path_samples.rs) was held there: its handshake timed
    // the stall, and the samples, each a part of the path, bound the round
    // trip however much shorter (lab `doze-builtin` at 120 ms: a 248 ms
    // handshake whose SYN-ACK a dozing radio's access point held, every
    // answer after it in 120 ms).
    let stalled = c.syn_ack.is_some_and(|sa| {
        c.path_stalls
            .iter()
            .any(|s| s.to_ns <= sa.ts_ns && sa.ts_ns - s.to_ns <= rttdoc_analyze::RELEASE_NS)
    });
    let handshake_rtt = clean_handshake_ns.map(|hs| {
        by_sides
            .or(best)
            .filter(|&(est, _)| est < hs && (stalled || est.saturating_mul(2) > hs))
            .unwrap_or((hs, RttSource::Handshake))
    });
    // Without the SYN-ACK in the capture, the first ACK after the last
    // SYN (Wireshark's initial RTT) is the client's of that SYN-ACK: still
    // one whole round trip.
    let fallback = match (c.last_syn, c.handshake_ack) {
        (Some(syn), Some(ack)) if ack.ts_ns > syn.ts_ns => {
            Some((ack.ts_ns - syn.ts_ns, RttSource::Handshake))
        }
        _ => c
            .initial_rtt_ns
            .filter(|&ns| ns > 0 && c.syn_ack_count == 0)
            .map(|ns| (ns, RttSource::Handshake)),
    };
    // No path takes ten minutes for a round trip (TCP gives up after two
    // minutes of retransmissions): a longer one is a broken clock, and
    // the detectors' multiples of it must not overflow. Samples of one
    // direction only come last: they time one side of the capture point,
    // at the near side a host's turnaround (microseconds), while the last
    // SYN to the ACK spans the whole round trip.
    // Behind a relay that answered the SYN itself (a phone's VPN capture
    // app) every sample times the relay, not the path to the server: the
    // round trip is unknown (`HandshakeReport::relay`).
    let (rtt_ns, rtt_source) = match handshake_rtt
        .or(retried_by_sides)
        .or(c.rtt.two_sided_estimate)
        .or(fallback)
        .or(c.rtt.estimate)
        .filter(|(ns, _)| *ns <= MAX_RTT_NS && !handshake.relay)
    {
        Some((ns, src)) => (Some(ns), Some(src)),
        None => (None, None),
    };
    let client_side = match (trigger, c.handshake_ack) {
        (Some(sa), Some(ack)) if ack.ts_ns >= sa.ts_ns => Some(ack.ts_ns - sa.ts_ns),
        _ => None,
    };
    // One slow answer (a busy client, a capture thread descheduled) can
    // stretch that gap; the fastest answer the client gave to any server
    // data over the connection bounds it too (it can only be larger than
    // the client's side of the path, never smaller).
    let client_side = match (client_side, c.rtt.min_client_side) {
        (Some(hs), Some(best)) if best < hs => Some(best),
        (cs, _) => cs,
    };
    let from_acks = match client_side {
        None => place_by_fastest_answers(near_answers(&c.rtt), rtt_ns),
        Some(_) => None,
    };
    // Where a clean handshake's SYN -> SYN-ACK was the server's own
    // turnaround (the handshake alone places the capture at the server),
    // that is the server's side, however much of the round trip the
    // client's fastest answer leaves over: its ACK of the SYN-ACK was the
    // slow one (lab `doze-builtin` at 120 ms, seen at the server: the
    // client's radio asleep when the SYN-ACK came, its ACK 248 ms after,
    // every later one in 120).
    let server_turnaround = clean_sides
        .filter(|&(server_hs, client_hs)| vantage(server_hs, client_hs) == Vantage::Server)
        .map(|(server_hs, _)| server_hs);
    let (vantage, shift_ns) = match (from_acks, client_side, rtt_ns) {
        (Some(placed), _, _) => placed,
        (None, Some(cs), Some(rtt)) => {
            let server = (rtt - cs).max(0);
            (
                vantage(server_turnaround.map_or(server, |hs| hs.min(server)), cs),
                cs,
            )
        }
        (None, Some(cs), None) => (Vantage::Unknown, cs),
        _ => (Vantage::Unknown, 0),
    };
    let clock = Clock { shift_ns, rtt_ns };
    // The client's packets reach the server's clock this much after they
    // were captured (at an endpoint, that endpoint's side is zero).
    // The round trip less the client's side: the server's side of the
    // capture point (at the server, its own turnaround).
    let beyond_shift_ns = rtt_ns.map_or(0, |r| (r - shift_ns).max(0));
    let server_side_ns = match vantage {
        Vantage::Server => 0,
        Vantage::Client => rtt_ns.unwrap_or(0),
        _ => beyond_shift_ns,
    };
    // How late after an ACK a segment it released may be captured (the
    // clock shift's error; detect's `released_by` away from the hosts).
    let release_ns = rtt_ns
        .map_or(0, |r| (r / 10).max(r.min(4_000_000) / 2))
        .max(jitter_ns)
        .max(crate::detect::causality::EXCESS_FLOOR_NS);
    // The client's and the server's window scales, when both sides
    // offered one (RFC 7323).
    let (client_wscale, server_wscale) = match (handshake.client_wscale, handshake.server_wscale) {
        (Some(c), Some(s)) => (c, s),
        _ => (0, 0),
    };
    let mut ledger = Vec::new();
    // The rows whose sender's own pauses belong in their ideal (found once
    // the detectors' facts can tell which segments left as written): each
    // response transfer's (the server's) and each multi-segment request's
    // (the client's), with the row's index and the frames to look in.
    let mut paced_rows: Vec<(usize, Direction, u64, u64)> = Vec::new();

    if let (None, Some(syn), Some(end)) = (
        window,
        c.first_syn,
        c.handshake_ack
            .map(|a| (a, false))
            .or(c.syn_ack.map(|s| (s, true))),
    ) {
        let retries = c.syn_count.saturating_sub(1);
        let basis = if retries > 0 {
            format!("three-way handshake: 1 RTT ({retries} SYN retransmission(s) seen)")
        } else {
            "three-way handshake: 1 RTT".to_string()
        };
        ledger.push(clock.row(
            Phase::TcpHandshake,
            "TCP handshake".into(),
            None,
            (syn, false),
            end,
            (Some(1.0), basis),
        ));
    }

    // Where a server that speaks first can greet from: the handshake's
    // ACK, or inside TLS (not after a plaintext preamble, whose own phase
    // times its greeting) the client's Finished.
    let greets_from = match &c.tls {
        None => Some((c.handshake_ack, false)),
        Some(t) if t.preamble.is_none() && !t.report.offers_http() => {
            Some((t.client_finished, true))
        }
        Some(_) => None,
    };
    let false_start_eligible = c.tls.as_ref().is_some_and(|t| t.false_start_eligible);
    let server_key_exchange = c.tls.as_ref().and_then(|t| t.server_key_exchange);
    let (costly_key_exchange, certificate_less) = c.tls.as_ref().map_or((None, false), |t| {
        use rttdoc_wire::tls;
        let before_tls13 = t.version.is_some_and(|v| !tls::is_tls13(v));
        let suite = |is: fn(u16) -> bool| before_tls13 && t.cipher.is_some_and(is);
        let costly = t
            .key_exchange_group
            .filter(|&g| tls::costly_group(g))
            .map(|g| CostlyKeyExchange::Group(tls::group_name(g)))
            .or_else(|| suite(tls::dhe_suite).then_some(CostlyKeyExchange::DheSuite));
        (costly, suite(tls::certificate_less_suite))
    });
    let tls_report = c.tls.take().map(|tls| {
        let version = tls.version;
        let resumed = tls.resumed;
        let hrr = tls.hello_retry;
        // No ServerHello captured, but the client's ClientKeyExchange
        // was: a full handshake before TLS 1.3 (tls2.pcap's 297, its
        // ServerHello's segment missed).
        let full_before_tls13_inferred = version.is_none()
            && tls
                .report
                .messages
                .iter()
                .any(|m| m.message == crate::model::TlsMessage::ClientKeyExchange);
        let (ideal, mut basis) = match (version, resumed) {
            (None, _) if full_before_tls13_inferred && tls.report.false_start => (
                1.0,
                "full handshake before TLS 1.3 (the client's ClientKeyExchange; no ServerHello captured), False Start: 1 RTT".to_string(),
            ),
            (None, _) if full_before_tls13_inferred => (
                2.0,
                "full handshake before TLS 1.3 (the client's ClientKeyExchange; no ServerHello captured): 2 RTT".to_string(),
            ),
            (Some(v), Some(true)) if is_tls13(v) => {
                (1.0, "TLS 1.3 resumed (PSK): 1 RTT".to_string())
            }
            (Some(v), _) if is_tls13(v) => (1.0, "TLS 1.3 full handshake: 1 RTT".to_string()),
            (Some(v), Some(true)) => (1.0, format!("{} resumed: 1 RTT", version_name(v))),
            (Some(v), _) if tls.report.false_start => (
                1.0,
                format!("{} full handshake, False Start: 1 RTT", version_name(v)),
            ),
            (Some(v), _) => (2.0, format!("{} full handshake: 2 RTT", version_name(v))),
            (None, _) => (1.0, "handshake incomplete".to_string()),
        };
        let ideal = if hrr {
            basis.push_str(", +1 RTT for HelloRetryRequest");
            ideal + 1.0
        } else {
            ideal
        };
        // The handshake ends, for the client, when it may send application
        // data: after sending its Finished (TLS 1.3, resumed 1.2, and a
        // full 1.2 one with False Start, whose client did) or on receiving
        // the server's Finished (full 1.2).
        let end = match (version, resumed) {
            (Some(v), Some(false)) if !is_tls13(v) && !tls.report.false_start => {
                tls.server_finished.map(|s| (s, true))
            }
            (None, _)
                if full_before_tls13_inferred
                    && !tls.report.false_start
                    && tls.server_finished.is_some() =>
            {
                tls.server_finished.map(|s| (s, true))
            }
            _ => tls.client_finished.map(|s| (s, false)),
        };
        // TLS after a plaintext preamble (proxy, STARTTLS): the preamble's
        // round trips are their own phase, from the end of the TCP
        // handshake (or the preamble's first frame in a capture without
        // it) to the ClientHello, which starts the TLS handshake phase.
        let preamble_row = match (tls.preamble, tls.client_hello_start) {
            (Some(pre), Some(ch_start)) => {
                let from = match c.handshake_ack {
                    Some(ack) if ack.frame <= pre.first.0.frame => (ack, false),
                    _ => pre.first,
                };
                let n = pre.round_trips;
                let basis = format!(
                    "{}: {n} server answer(s) awaited before the ClientHello, 1 RTT each",
                    pre.kind.label()
                );
                Some(clock.row(
                    pre.kind.phase(),
                    pre.kind.label().into(),
                    None,
                    from,
                    (ch_start, false),
                    (Some(n as f64), basis),
                ))
            }
            _ => None,
        };
        let completed = end.is_some();
        // Completed, but its version unread (no ServerHello in the capture:
        // one that holds the client's packets alone, nDPI's ocs.pcap): a
        // full TLS 1.2 handshake's 2 round trips and TLS 1.3's 1 cannot be
        // told apart, and no ideal is claimed.
        let ideal_known = version.is_some()
            || (full_before_tls13_inferred
                && (tls.report.false_start || tls.server_finished.is_some()));
        let (ideal_known, completed_basis) = if ideal_known {
            (Some(ideal), basis.clone())
        } else if full_before_tls13_inferred {
            (
                None,
                "full handshake before TLS 1.3 (the client's ClientKeyExchange), neither ServerHello nor the server's Finished captured: its end, and its ideal, unknown".to_string(),
            )
        } else {
            (
                None,
                "no ServerHello captured: the version, and its ideal, unknown".to_string(),
            )
        };
        let row = match (tls.client_hello_start, end) {
            (Some(ch_start), Some(end)) => Some(clock.row(
                Phase::TlsHandshake,
                "TLS handshake".into(),
                None,
                (ch_start, false),
                end,
                (ideal_known, completed_basis),
            )),
            // Begun, never completed, and given up: the client waited
            // from its ClientHello until the connection ended.
            // (Not when the capture lost some of it: a peer acknowledged
            // bytes it never showed.)
            (Some(ch_start), None) if c.stats.iter().all(|d| d.acked_unseen == 0) => {
                given_up(&c.timeline, &tls.report.client_hello_frames).map(|(stop, by_server)| {
                    let who = if by_server { "server" } else { "client" };
                    clock.row(
                        Phase::TlsHandshake,
                        "TLS handshake (never completed)".into(),
                        None,
                        (ch_start, false),
                        (stop, by_server),
                        (
                            Some(ideal),
                            format!("{basis}; it never completed: the {who} ended the connection"),
                        ),
                    )
                })
            }
            _ => None,
        };
        let mut report = tls.report;
        report.handshake_ms = row.as_ref().filter(|_| completed).map(|r| r.duration_ms);
        report.handshake_rtts = row.as_ref().filter(|_| completed).and_then(|r| r.rtts);
        report.ideal_handshake_rtts = Some(ideal);
        (report, preamble_row, row)
    });
    let tls = tls_report.map(|(report, preamble_row, row)| {
        if let Some(row) = preamble_row {
            ledger.push(row);
        }
        if let Some(row) = row {
            ledger.push(row);
        }
        report
    });

    // Segment payloads each way: the peer's MSS option, less timestamps.
    let options = if handshake.timestamps { 12 } else { 0 };
    // (An MSS option below the timestamps' 12 bytes is a damaged or
    // fuzzed one: at least a byte per segment.)
    let mss = (handshake.client_mss.unwrap_or(1460) as u64)
        .saturating_sub(options)
        .max(1);
    let request_mss = (handshake.server_mss.unwrap_or(1460) as u64)
        .saturating_sub(options)
        .max(1);
    let greeting = greets_from
        .filter(|_| window.is_none())
        .and_then(|(from, _)| waited_greeting(&c, from, shift_ns, jitter_ns));
    if let (Some((opened, greeted)), Some((_, in_tls))) = (greeting, greets_from) {
        let (after, opened_by) = if in_tls {
            ("TLS handshake", "the client's Finished")
        } else {
            ("connection", "the handshake's ACK")
        };
        ledger.push(clock.row(
            Phase::FirstByte,
            format!("greeting: {after} -> first byte"),
            Some(0),
            (opened, false),
            (greeted, true),
            (
                Some(1.0),
                format!(
                    "the server speaks first: {opened_by} out, its greeting back: \
                     1 RTT (plus server think time)"
                ),
            ),
        ));
    }
    for (i, x) in c.exchanges.iter().enumerate() {
        let n = i as u32 + 1;
        let name = x.label.clone().unwrap_or_else(|| format!("exchange {n}"));
        let Some(first) = x.response_first else {
            continue;
        };
        // A request the server answered only once all of it was in (an
        // upload: a PUT, a form's POST) takes its own slow-start rounds
        // to get there before the answer's round trip. (An exchange's
        // request ends where its answer begins: what the client sends
        // after an early answer is the next exchange's.)
        let request_rounds = if x.request_last.frame != x.request_first.frame {
            slow_start_rounds(x.request_bytes, request_mss).saturating_sub(1)
        } else {
            0
        };
        let basis = if request_rounds > 0 {
            format!(
                "request of {} bytes in slow start from IW10: {request_rounds} more RTT, \
                 response back: 1 RTT (plus server think time)",
                x.request_bytes
            )
        } else {
            "request out, response back: 1 RTT (plus server think time)".into()
        };
        if x.request_last.frame != x.request_first.frame {
            // A head sent with `Expect: 100-continue` held a body that was
            // ready: the wait before the body is the expectation's
            // (expect_continue.rs), and the client's own pace, if any,
            // begins with the body.
            let from = if x.expects_continue {
                c.timeline
                    .iter()
                    .skip(
                        c.timeline
                            .partition_point(|r| r.frame <= x.request_first.frame),
                    )
                    .take_while(|r| r.frame < first.frame)
                    .find(|r| r.dir == Direction::ClientToServer && r.len > 0)
                    .map_or(x.request_first.frame, |r| r.frame)
            } else {
                x.request_first.frame
            };
            // Up to the client's last data that reached the server before
            // the answer left (on the server's clock): what came later the
            // answer waited for nothing of (a lumped request inside TLS
            // whose last record follows the answer to an earlier one).
            let begin = c.timeline.partition_point(|r| r.frame < from);
            let end = c
                .timeline
                .partition_point(|r| r.frame <= x.request_last.frame.min(first.frame));
            // A request whose first segment follows the answer's first byte
            // (an answer that did not wait for it) has nothing in range.
            let last = c.timeline[begin..end.max(begin)]
                .iter()
                .filter(|r| r.dir == Direction::ClientToServer && r.len > 0)
                .take_while(|r| r.ts_ns + server_side_ns <= first.ts_ns)
                .last()
                .map_or(from, |r| r.frame);
            paced_rows.push((ledger.len(), Direction::ClientToServer, from, last));
        }
        ledger.push(clock.row(
            Phase::FirstByte,
            format!("{name}: request -> first byte"),
            Some(n),
            (x.request_first, false),
            (first, true),
            (Some(1.0 + request_rounds as f64), basis),
        ));
        let last = x.response_last.unwrap_or(first);
        if last.frame != first.frame {
            let rounds = slow_start_rounds(x.response_bytes, mss).saturating_sub(1);
            // The server's own pauses join the ideal once the detectors'
            // facts can tell which segments left as written (below).
            paced_rows.push((
                ledger.len(),
                Direction::ServerToClient,
                first.frame,
                last.frame,
            ));
            ledger.push(clock.row(
                Phase::Transfer,
                format!("{name}: response transfer ({} bytes)", x.response_bytes),
                Some(n),
                (first, true),
                (last, true),
                (
                    Some(rounds as f64),
                    format!(
                        "{} bytes in slow start from IW10: {rounds} more RTT",
                        x.response_bytes
                    ),
                ),
            ));
        }
    }

    let tls_end_frame = ledger
        .iter()
        .find(|r| r.phase == Phase::TlsHandshake)
        .map(|r| r.end_frame);
    let (excess_rtts, excess_ms) = latency_excess(&ledger);
    let mut report = ConnectionReport {
        stream: c.stream,
        same_connection_as: c.same_as.and_then(|s| u32::try_from(s).ok()),
        mptcp: c.mptcp,
        proxy_protocol: c.proxy_protocol,
        client: c.client,
        server: c.server,
        first_frame: c.first.frame,
        last_frame: c.last.frame,
        start_time: c.first.ts_ns as f64 / 1e9,
        start_offset_s: 0.0,
        duration_ms: (c.last.ts_ns - c.first.ts_ns) as f64 / 1e6,
        partial: c.first_syn.is_none(),
        ending: c.ending,
        vantage,
        rtt_ms: rtt_ns.map(|r| r as f64 / 1e6),
        rtt_source,
        tcp_handshake_ms: c.initial_rtt_ns.map(|r| r as f64 / 1e6),
        handshake,
        name_lookup: c
            .lookup
            .as_deref()
            .zip(c.first_syn)
            .map(|(l, syn)| Box::new(lookup_report(l, syn))),
        client_to_server: c.stats[0].clone(),
        server_to_client: c.stats[1].clone(),
        tls,
        tls_lookalike: c.tls_lookalike.map(Box::new),
        exchanges: c.exchanges_total,
        ledger,
        excess_rtts,
        excess_ms,
        findings: Vec::new(),
        unexplained_ms: 0.0,
        client_turnaround_ms: 0.0,
        server_turnaround_ms: 0.0,
        path_queue_ms: 0.0,
        later_windows: None,
        ladder: c.ladder.map(Vec::into_boxed_slice),
        series: c.series.map(Box::new),
    };
    let burst_segment = crate::detect::burst_segment_sizes(
        &c.timeline,
        rtt_ns,
        crate::detect::own_mss_below_peer(&report.handshake),
    );
    // What the detectors know, made twice when idle rows change the
    // report in between (a macro: each borrow of the report its own).
    macro_rules! facts_of {
        ($report:expr, $idle:expr) => {
            crate::detect::Facts {
                report: $report,
                idle_exchanges: $idle,
                path_samples: &c.path_samples,
                uplink: c.uplink.as_deref(),
                path_busy: &c.path_busy,
                path_stalls: &c.path_stalls,
                late_retransmissions: &c.late_retransmissions,
                heard_at_resends: &c.heard_at_resends,
                nothing_heard: c.nothing_heard,
                client_closed_with: c.client_closed_with,
                unheard_at_resend: c.unheard_at_resend,
                acked_at_resends: &c.acked_at_resends,
                uplink_waits: &c.uplink_waits,
                client_clock_hz: c.client_clock_hz,
                windowed,
                sibling_closes: &c.sibling_closes,
                dialled_back_data_ns: c.dialled_back_data_ns,
                sibling_data: &c.sibling_data,
                certificate_fetches: &c.certificate_fetches,
                too_big: &c.too_big,
                h2_credit_stalls: &c.h2_credit_stalls,
                previous: c.previous.as_deref(),
                client_false_starts: c.client_false_starts,
                sibling_request: c.sibling_request,
                one_way_capture: c.one_way_capture,
                seen_until: c.seen_until,
                dials_beside: c.dials_beside,
                stalled_elsewhere: c.stalled_elsewhere,
                client_dials: c.client_dials.as_deref(),
                false_start_eligible,
                server_key_exchange,
                costly_key_exchange: costly_key_exchange.clone(),
                certificate_less,
                lookup: c.lookup.as_deref(),
                timeline: &c.timeline,
                exchanges: &c.exchanges,
                rtt_ns,
                // At an endpoint, that endpoint's side of the path is zero: the
                // SYN-ACK -> ACK gap there is the host's own turnaround, which must
                // not reorder what it captured itself.
                client_side_ns: if vantage == Vantage::Client {
                    0
                } else {
                    shift_ns
                },
                server_side_ns,
                own_reaction_ns: match vantage {
                    Vantage::Client => shift_ns,
                    Vantage::Server => beyond_shift_ns,
                    _ => 0,
                },
                tls_end_frame,
                greeting,
                greeting_connect_back: c.greeting_connect_back.as_deref(),
                protocol: c.protocol,
                jitter_ns,
                early_plaintext: c.early_plaintext.as_deref(),
                burst_segment,
                nagle_off_before,
                new_data_views: Default::default(),
                window_stall_views: Default::default(),
                handshake_turns_view: Default::default(),
                preamble_turns_view: Default::default(),
                server_ticks_view: Default::default(),
                server_turns_view: Default::default(),
                hello_turn_view: Default::default(),
                short_turns_view: Default::default(),
                fastest_round_trip_views: Default::default(),
                sender_clock_views: Default::default(),
                sender_clock_loosely: Default::default(),
                path_mtu_views: Default::default(),
                not_taken_view: Default::default(),
                syn_answers_view: Default::default(),
                acknowledgment_view: Default::default(),
                prompted_elsewhere_view: Default::default(),
                echoes_pure_acks_view: Default::default(),
                nagle_holds_views: Default::default(),
                deaf_views: Default::default(),
            }
        };
    }
    // A server's timer (a heartbeat, a long poll's hold) paced these
    // exchanges, not its work: their delays are idle time, not latency
    // beyond the ideal (detect/server_think_time.rs, which names no
    // cause for them either).
    // A client's reply to a message the server sent on its own (a ping)
    // asks nothing: the server's next data came at its own pace. (Both
    // read the exchanges, not the rows the first marks.)
    let (mut idle, replies, pushed, abandoned, given_up, paused, balancer, (discarded, ahead)) = {
        let facts = facts_of!(&report, &[]);
        let balancer = crate::detect::behind_balancer(&facts);
        // The senders' own pauses in each response transfer and upload:
        // after data written as the sender had it (a stream's pieces:
        // detect/sender_pace.rs), or long after the peer's last packet
        // with nothing in flight. Looked for only in rows with time beyond
        // their slow-start rounds.
        let paused = {
            let floor = crate::detect::causality::EXCESS_FLOOR_NS as f64 / 1e6;
            let beyond = |i: usize| report.ledger[i].excess_ms.is_some_and(|e| e > floor);
            let as_written = |sender: Direction| {
                if paced_rows
                    .iter()
                    .any(|&(i, d, _, _)| d == sender && beyond(i))
                {
                    crate::detect::sent_as_written(&facts, sender)
                } else {
                    Vec::new()
                }
            };
            let written = [
                as_written(Direction::ClientToServer),
                as_written(Direction::ServerToClient),
            ];
            // Long past the ACK's estimated arrival: the path's round trip
            // varies (a page load's parallel connections fill a queue that
            // the handshake never saw), and data an ACK clocked out comes
            // one such round trip later; a stream's next event, a
            // notification, comes when it comes.
            let idle_after_ns = release_ns
                .max(2 * rtt_ns.unwrap_or(0))
                .max(SERVER_IDLE_MIN_NS);
            paced_rows
                .iter()
                .filter(|&&(i, _, _, _)| beyond(i))
                .map(|&(i, sender, first, last)| {
                    // How long after their capture the peer's packets reach
                    // the sender, the peer's window scale, the sender's
                    // segment size, and where arrivals at the client no
                    // longer tell departures (its saturated downlink: the
                    // server's data only).
                    let (peer_side_ns, peer_wscale, sender_mss, busy) = match sender {
                        Direction::ServerToClient => (
                            server_side_ns,
                            client_wscale,
                            mss,
                            if vantage == Vantage::Server {
                                &[][..]
                            } else {
                                &c.path_busy[..]
                            },
                        ),
                        Direction::ClientToServer => (
                            if vantage == Vantage::Client {
                                0
                            } else {
                                shift_ns
                            },
                            server_wscale,
                            request_mss,
                            &[][..],
                        ),
                    };
                    let pauses = sender_pauses(
                        &c.timeline,
                        sender,
                        (first, last),
                        peer_side_ns,
                        (idle_after_ns, peer_wscale, sender_mss),
                        busy,
                        &written[sender.index()],
                    );
                    (i, sender, pauses)
                })
                .collect::<Vec<_>>()
        };
        let mut idle = crate::detect::idle_exchanges(&facts);
        let replies = crate::detect::reply_exchanges(&facts);
        // The client's answer to a greeting was a reply to a message the
        // server sends on its own timer (a heartbeat's pong): the
        // "greeting" was its first ping, sent when the timer said. (Not
        // any reply that asked nothing: a login answered with an error
        // and the server's close asked nothing more, yet the greeting
        // before it was waited for.)
        if greeting.is_some() && (idle.contains(&1) || crate::detect::replies_to_a_ping(&facts, 1))
        {
            idle.push(0);
        }
        let abandoned = crate::detect::abandoned_exchanges(&facts);
        let given_up = crate::detect::given_up_exchanges(&facts, &abandoned);
        (
            idle,
            replies,
            crate::detect::pushed_exchanges(&facts),
            abandoned,
            given_up,
            paused,
            balancer,
            (facts.handshake_discarded(), facts.made_ahead_of_need()),
        )
    };
    if let Some(rtt) = rtt_ns.filter(|r| *r > 0) {
        for (i, sender, (pauses, paused_ns)) in paused.into_iter().filter(|(_, _, (n, _))| *n > 0) {
            let words = format!(
                ", plus {} the {} had nothing to send ({pauses} pause(s) before data \
                 nothing held back)",
                duration_words(paused_ns),
                match sender {
                    Direction::ClientToServer => "client",
                    Direction::ServerToClient => "server",
                }
            );
            widen_ideal(&mut report.ledger[i], paused_ns, rtt, &words);
        }
        // Behind a load balancer (a PROXY protocol header), each of the
        // client's handshake answers waited for the balancer's own client:
        // a path and a host beyond this connection, not its excess.
        if let Some((turns, hidden_ns)) = balancer.filter(|(n, ns)| *n > 0 && *ns > 0) {
            if let Some(row) = report
                .ledger
                .iter_mut()
                .find(|r| r.phase == Phase::TlsHandshake)
            {
                let words = format!(
                    ", plus {} the load balancer's client took ({turns} answer(s): the path \
                     behind the balancer that sent the PROXY header, and that client's own time)",
                    duration_words(hidden_ns),
                );
                widen_ideal(row, hidden_ns, rtt, &words);
            }
        }
        (report.excess_rtts, report.excess_ms) = latency_excess(&report.ledger);
    }
    if !idle.is_empty() {
        idle_rows(&mut report, &idle, &[Phase::FirstByte], TIMER_PACED);
    }
    // A handshake its client let go as it ended (a browser's losing
    // racer): nobody waited for it, nor for the TCP handshake before it.
    if discarded {
        rows_idle(
            &mut report,
            |r| matches!(r.phase, Phase::TcpHandshake | Phase::TlsHandshake),
            HANDSHAKE_DISCARDED,
        );
    }
    // A connection made ahead of need (a browser's preconnect): its first
    // request left long after the set-up let it, so nobody waited for the
    // set-up (detect/causality.rs, rule 6).
    if let Some(ahead) = ahead.filter(|_| window.is_none()) {
        let basis = match ahead.unused {
            true if ahead.still_open => format!(
                "made ahead of need: {}this one carried no request in the {} the capture went on after the set-up let \
                 one go (frame {}), still open at frame {}: nobody waited for the set-up, idle, not latency",
                ahead.sibling.map_or(String::new(), |s| format!(
                    "stream {} carried the client's request meanwhile, and ",
                    s.0
                )),
                duration_words(ahead.idle_ns),
                ahead.ready_frame,
                ahead.request_frame,
            ),
            false => format!(
                "made ahead of need: stream {} carried the client's request meanwhile, this one's first (frame {}) \
                 left {} after the set-up let it (frame {}): nobody waited for the set-up, idle, not latency",
                ahead.sibling.map_or(0, |s| s.0),
                ahead.request_frame,
                duration_words(ahead.idle_ns),
                ahead.ready_frame,
            ),
            true => format!(
                "made ahead of need: {}this one carried no request, closed (frame {}) {} after the set-up let one go \
                 (frame {}): nobody waited for the set-up, idle, not latency",
                ahead.sibling.map_or(String::new(), |s| format!(
                    "stream {} carried the client's request meanwhile, and ",
                    s.0
                )),
                ahead.request_frame,
                duration_words(ahead.idle_ns),
                ahead.ready_frame,
            ),
        };
        rows_idle(
            &mut report,
            |r| {
                r.end_frame <= ahead.ready_frame
                    && matches!(
                        r.phase,
                        Phase::TcpHandshake
                            | Phase::ProxyConnect
                            | Phase::Starttls
                            | Phase::TlsHandshake
                    )
            },
            &basis,
        );
    }
    mark_idle(
        &mut report,
        &mut idle,
        replies,
        &[Phase::FirstByte],
        REPLY_TO_SERVER,
    );
    // A server that sends on its own timer (a feed, a game's ticks): what
    // came after a client's message was its next message, not an answer.
    mark_idle(
        &mut report,
        &mut idle,
        pushed,
        &[Phase::FirstByte, Phase::Transfer],
        SERVER_TIMER,
    );
    // An answer that came after the client closed waited for nobody;
    // but a client that gave up on a request never acknowledged waited
    // until it let go: its row ends there.
    for &(n, stop) in &given_up {
        if !idle.contains(&n) {
            end_at_give_up(&mut report.ledger, &c.timeline, (n, stop), rtt_ns);
        }
    }
    if !given_up.is_empty() {
        (report.excess_rtts, report.excess_ms) = latency_excess(&report.ledger);
    }
    let abandoned: Vec<usize> = abandoned
        .into_iter()
        .filter(|n| !given_up.iter().any(|(g, _)| g == n))
        .collect();
    mark_idle(
        &mut report,
        &mut idle,
        abandoned,
        &[Phase::FirstByte],
        CLIENT_CLOSED,
    );
    // A request that asked the server to wait for an event (a Redis
    // blocking pop, XREAD BLOCK; a Kafka Fetch for records, a group's
    // join) was answered when the event came or its timeout ended: the
    // client's asking, not the server's work.
    let waited = turns_where(&c.exchanges, |x| x.asks_to_wait);
    mark_idle(
        &mut report,
        &mut idle,
        waited,
        &[Phase::FirstByte],
        ASKED_TO_WAIT,
    );
    // An answer that began in segments the capture missed left at a time
    // it cannot tell: its wait is no measure of anyone's.
    // (Not a row that ends at the client's giving up: its answer came
    // after, hole or not.)
    let missed: Vec<usize> = turns_where(&c.exchanges, |x| x.response_in_hole)
        .into_iter()
        .filter(|n| !given_up.iter().any(|(g, _)| g == n))
        .collect();
    let ideals: Vec<(u32, f64)> = report
        .ledger
        .iter()
        .filter(|r| r.phase == Phase::FirstByte)
        .filter_map(|r| {
            let n = r.exchange?;
            let fresh = missed.contains(&(n as usize)) && !idle.contains(&(n as usize));
            Some((n, r.ideal_rtts?)).filter(|_| fresh)
        })
        .collect();
    mark_idle(
        &mut report,
        &mut idle,
        missed,
        &[Phase::FirstByte],
        ANSWER_MISSED,
    );
    // A Multipath TCP subflow whose turn's answer began on another
    // subflow: what came here after the request is no measure of the
    // server's time (analyze's mptcp.rs).
    if let Some(m) = report.mptcp.as_ref().filter(|m| !m.split_turns.is_empty()) {
        let split = turns_where(&c.exchanges, |x| {
            x.response_first
                .is_some_and(|r| m.split_turns.contains(&r.frame))
        });
        mark_idle(
            &mut report,
            &mut idle,
            split,
            &[Phase::FirstByte, Phase::Transfer],
            OTHER_SUBFLOWS,
        );
    }
    // A request Nagle held whole (behind the client's TLS Finished, still
    // unacknowledged) was written when the hold began: its wait starts
    // there, where no other row's time is.
    let held = match window {
        None => crate::detect::held_requests(&facts_of!(&report, &idle)),
        Some(_) => Vec::new(),
    };
    if !held.is_empty() {
        for (n, from) in held {
            let request = c.exchanges[n - 1].request_first;
            extend_back(&mut report.ledger, (n, request), from, rtt_ns, &idle);
        }
        (report.excess_rtts, report.excess_ms) = latency_excess(&report.ledger);
    }
    let facts = facts_of!(&report, &idle);
    let mut findings = match (c.detect, window) {
        (false, _) => Vec::new(),
        (true, None) => crate::detect::run(&facts),
        (true, Some(_)) => crate::detect::run_window(&facts),
    };
    // The hosts' own short turns, for what no finding will account for.
    let turnarounds = match c.detect {
        true => crate::detect::host_turnarounds(&facts, &findings),
        false => Default::default(),
    };
    // (Asked only where there are later windows to tell.)
    let nagle_off = if windowed {
        [Direction::ClientToServer, Direction::ServerToClient]
            .map(|d| nagle_off_before[d.index()] || crate::detect::shows_nagle_off(&facts, d))
    } else {
        nagle_off_before
    };
    // What the request itself waited before it was all out is known,
    // though, where a finding proves it (a POST's body Nagle held).
    request_waits_before_a_hole(&mut report, &c.exchanges, &ideals, &findings);
    let mut later_turnarounds = [0.0; 2];
    if let Some(later) = later {
        later_turnarounds = later.turnaround_ms;
        crate::window::join(&mut report, &mut findings, later, nagle_off);
        (report.excess_rtts, report.excess_ms) = latency_excess(&report.ledger);
    }
    let left = attribute(&report.ledger, &mut findings);
    report.unexplained_ms = left.iter().sum();
    // Each window's short turns within what it left unexplained, and all
    // of them within what the whole connection did.
    let mut host = turnarounds.within(&left);
    for (h, l) in host.iter_mut().zip(later_turnarounds) {
        *h += l;
    }
    let scale = (report.unexplained_ms / (host[0] + host[1]).max(f64::MIN_POSITIVE)).min(1.0);
    [report.client_turnaround_ms, report.server_turnaround_ms] = host.map(|h| h * scale);
    // The path's queues the TLS handshake's words name, within what the
    // turnarounds left unexplained.
    let path: f64 = findings
        .iter()
        .map(|x| match x.detail {
            Detail::TlsExtraRtt {
                path_ms,
                path_back_ms,
                path_to_client_ms,
                ..
            } => path_ms + path_back_ms + path_to_client_ms,
            _ => 0.0,
        })
        // Not `sum()`: an f64 sum of nothing is -0.0, which JSON writes
        // as "-0.0".
        .fold(0.0, |all, ms| all + ms);
    report.path_queue_ms = path.min((report.unexplained_ms - report.turnaround_ms()).max(0.0));
    report.findings = findings;
    (report, nagle_off)
}

/// Why the ideal of an exchange whose "request" asked nothing (a reply to
/// the server's own message) is what it took.
const REPLY_TO_SERVER: &str =
    "the client's reply to the server's own message (a ping, flow control, data before an idle close) asked nothing: what the server sent next came at its pace, idle, not latency";

/// Why the ideal of an "answer" that was a message of the server's own
/// timer is what it took.
const SERVER_TIMER: &str =
    "a tick of the server's own timer (a feed), not an answer to the client's message: idle, not latency";
/// Why a timer-paced exchange's ideal is what it took.
const TIMER_PACED: &str =
    "paced by a server timer (a heartbeat, a long poll's hold): idle, not latency";
/// Why the ideal of an exchange whose client closed before the answer
/// came is what it took.
const CLIENT_CLOSED: &str =
    "the client closed (its FIN or RST) before the answer came: nobody waited for it, idle, not latency";
/// Why the ideal of a TLS handshake its client let go as it ended is
/// what it took.
const HANDSHAKE_DISCARDED: &str =
    "the client closed the connection as its handshake ended, nothing it sent answered (a browser keeps the first of its racing connections, or another it had for the site): nobody waited for it, not latency";
/// Why the ideal of an exchange whose request asked the server to wait
/// is what it took.
const ASKED_TO_WAIT: &str =
    "the request asked the server to wait for an event or its timeout (a blocking pop, a Kafka or JetStream fetch, a group join, a job queue's reserve): idle, not latency";
/// Why the ideal of an exchange whose answer began in a capture hole is
/// what it took.
const ANSWER_MISSED: &str =
    "the answer began in segments the capture missed (a hole before this frame): when it left is unknown, so is its wait";
/// Why an MPTCP subflow's turn's ideal is what it took.
const OTHER_SUBFLOWS: &str =
    "MPTCP: the answer began on another subflow (not measured on this one)";

/// Starts exchange `n`'s first-byte row (from its `request`) at `from` (a
/// client packet before the request, as the request is), when no other
/// row's time lies after it and the exchange is not idle; its ideal
/// stays, so the time added is excess.
fn extend_back(
    ledger: &mut [LedgerRow],
    (n, request): (usize, Stamp),
    from: Stamp,
    rtt_ns: Option<i64>,
    idle: &[usize],
) {
    if idle.contains(&n) {
        return;
    }
    let Some(i) = ledger
        .iter()
        .position(|r| r.phase == Phase::FirstByte && r.exchange == Some(n as u32))
    else {
        return;
    };
    let start = ledger[i].start_frame;
    let overlaps = ledger
        .iter()
        .enumerate()
        .any(|(j, r)| j != i && r.end_frame > from.frame && r.start_frame < start);
    if overlaps || from.frame >= start {
        return;
    }
    let row = &mut ledger[i];
    let duration_ns = (row.duration_ms * 1e6).round() as i64 + (request.ts_ns - from.ts_ns);
    row.duration_ms = duration_ns as f64 / 1e6;
    row.start_frame = from.frame;
    let (rtts, excess_rtts, excess_ms) = excess_of(duration_ns, row.ideal_rtts, rtt_ns);
    (row.rtts, row.excess_rtts, row.excess_ms) = (rtts, excess_rtts, excess_ms);
    row.ideal_basis = format!(
        "{}; the request waited in the client's kernel (Nagle) from frame {}",
        row.ideal_basis, from.frame
    );
}

/// Ends exchange `n`'s first-byte row at `stop`, the client's FIN or RST
/// when it gave up on a request the server never acknowledged
/// (`detect::given_up_exchanges`): what it waited, on its own clock (the
/// request and its FIN are both its packets); its ideal stays, so the
/// time beyond it is excess.
fn end_at_give_up(
    ledger: &mut [LedgerRow],
    timeline: &[rttdoc_analyze::SegmentRecord],
    (n, stop): (usize, Stamp),
    rtt_ns: Option<i64>,
) {
    let Some(row) = ledger
        .iter_mut()
        .find(|r| r.phase == Phase::FirstByte && r.exchange == Some(n as u32))
    else {
        return;
    };
    if stop.frame <= row.start_frame || stop.frame >= row.end_frame {
        return;
    }
    let Ok(i) = timeline.binary_search_by_key(&row.start_frame, |r| r.frame) else {
        return;
    };
    let start = &timeline[i];
    if start.dir != Direction::ClientToServer {
        return;
    }
    let duration_ns = stop.ts_ns - start.ts_ns;
    row.end_frame = stop.frame;
    row.duration_ms = duration_ns as f64 / 1e6;
    let (rtts, excess_rtts, excess_ms) = excess_of(duration_ns, row.ideal_rtts, rtt_ns);
    (row.rtts, row.excess_rtts, row.excess_ms) = (rtts, excess_rtts, excess_ms);
    row.ideal_basis = format!(
        "{}; the client gave up waiting (its FIN or RST, frame {}) with its request still unacknowledged: the answer came after it",
        row.ideal_basis, stop.frame
    );
}

/// The numbers (1-based) of the exchanges `pick` chooses.
fn turns_where(exchanges: &[Exchange], pick: impl Fn(&Exchange) -> bool) -> Vec<usize> {
    exchanges
        .iter()
        .enumerate()
        .filter(|(_, x)| pick(x))
        .map(|(i, _)| i + 1)
        .collect()
}

/// Marks the `phases` rows of the `turns` not already `idle` as not
/// measured, for the reason `basis`, and adds them to `idle`.
fn mark_idle(
    report: &mut ConnectionReport,
    idle: &mut Vec<usize>,
    turns: Vec<usize>,
    phases: &[Phase],
    basis: &str,
) {
    let fresh: Vec<usize> = turns.into_iter().filter(|n| !idle.contains(n)).collect();
    if !fresh.is_empty() {
        idle_rows(report, &fresh, phases, basis);
        idle.extend(fresh);
    }
}

/// The first-byte rows of exchanges whose answers began in a capture
/// hole (marked idle with [`ANSWER_MISSED`]; `ideals`: each one's
/// exchange and its ideal before that). When the answer left is unknown,
/// and so is the row's excess; but a wait a finding proves inside the
/// request, before all of it was out (a POST's body Nagle held for the
/// ACK of its head), is excess whenever the answer came: the row keeps
/// those waits as its excess, never more than it had beyond its ideal.
/// (Not the request's whole span: with its answer in a hole, what the
/// client sent after the answer's unseen start reads as the request's.)
fn request_waits_before_a_hole(
    report: &mut ConnectionReport,
    exchanges: &[Exchange],
    ideals: &[(u32, f64)],
    findings: &[crate::model::Finding],
) {
    let floor_ms = crate::detect::causality::EXCESS_FLOOR_NS as f64 / 1e6;
    let Some(rtt_ms) = report.rtt_ms.filter(|r| *r > 0.0) else {
        return;
    };
    let mut changed = false;
    for r in report
        .ledger
        .iter_mut()
        .filter(|r| r.phase == Phase::FirstByte)
    {
        let Some(&(n, ideal)) = ideals.iter().find(|(n, _)| Some(*n) == r.exchange) else {
            continue;
        };
        let (Some(x), Some(rtts)) = (exchanges.get(n as usize - 1), r.rtts) else {
            continue;
        };
        let (first, last) = (x.request_first.frame, x.request_last.frame);
        let waited_ms: f64 = findings
            .iter()
            .filter(|f| f.phase == Some(Phase::FirstByte) && f.kind.cost_rule() == CostRule::Waits)
            .flat_map(|f| &f.waits)
            .filter(|w| w.from_frame >= first && w.to_frame <= last)
            .map(|w| w.ms)
            .sum();
        let excess_rtts = (waited_ms / rtt_ms).min(rtts - ideal);
        let excess_ms = excess_rtts * rtt_ms;
        if excess_ms < floor_ms {
            continue;
        }
        r.ideal_rtts = Some(rtts - excess_rtts);
        r.excess_rtts = Some(excess_rtts);
        r.excess_ms = Some(excess_ms);
        r.ideal_basis = format!(
            "{ANSWER_MISSED}; the request's own waits before it was all out are excess whenever the answer came"
        );
        changed = true;
    }
    if changed {
        (report.excess_rtts, report.excess_ms) = latency_excess(&report.ledger);
    }
}

/// Marks the `phases` rows of the `idle` exchanges as not measured, for
/// the reason `basis`: their ideal is what they took, so nothing of them
/// is excess, and the connection's excess is summed again.
fn idle_rows(report: &mut ConnectionReport, idle: &[usize], phases: &[Phase], basis: &str) {
    rows_idle(
        report,
        |r| phases.contains(&r.phase) && r.exchange.is_some_and(|n| idle.contains(&(n as usize))),
        basis,
    );
}

/// Marks the rows `which` picks as not measured, for the reason `basis`
/// ([`idle_rows`]).
fn rows_idle(report: &mut ConnectionReport, which: impl Fn(&LedgerRow) -> bool, basis: &str) {
    for r in report.ledger.iter_mut().filter(|r| which(r)) {
        r.ideal_rtts = r.rtts;
        r.excess_rtts = r.rtts.map(|_| 0.0);
        r.excess_ms = r.excess_ms.map(|_| 0.0);
        r.ideal_basis = basis.into();
    }
    (report.excess_rtts, report.excess_ms) = latency_excess(&report.ledger);
}

/// The excess of the latency phases (every row but transfers), in RTTs
/// and ms. (An empty f64 sum is -0.0; + 0.0 makes it the 0 people expect.)
fn latency_excess(ledger: &[LedgerRow]) -> (f64, f64) {
    let latency = || ledger.iter().filter(|r| r.phase != Phase::Transfer);
    (
        latency().filter_map(|r| r.excess_rtts).sum::<f64>() + 0.0,
        latency().filter_map(|r| r.excess_ms).sum::<f64>() + 0.0,
    )
}

/// Shares each latency row's excess among the findings in its phase,
/// largest cost first, none beyond its own cost; returns what is left in
/// each phase (indexed like [`Phase::ALL`]; summed, `unexplained_ms`).
/// `tls_extra_rtt` restates the others and takes none.
///
/// Each wait takes from the row it lengthened (the one its held or
/// awaited frame is in), at most its own length: a wait in a row with
/// no excess (an exchange that asked nothing, idle) explains nothing of
/// another exchange's (nDPI's skype 66: a timer's
/// re-sends in a reply's idle row had taken the first exchange's
/// 2.9 ms), and two findings' waits in one row share it by their
/// lengths, not by which is larger overall. A wait that lengthened no
/// row (it came before a row began, or between rows) explains none of
/// the ledger's excess; a finding without waits, and the waits past
/// those a finding lists, share what its phase has left.
fn attribute(
    ledger: &[LedgerRow],
    findings: &mut [crate::model::Finding],
) -> [f64; Phase::ALL.len()] {
    // Excess left per row (transfers' stays 0).
    let mut row_left: Vec<f64> = ledger
        .iter()
        .map(|r| match r.phase.is_latency() {
            true => r.excess_ms.unwrap_or(0.0).max(0.0),
            false => 0.0,
        })
        .collect();
    let mut order: Vec<usize> = (0..findings.len()).collect();
    order.sort_by(|a, b| findings[*b].cost_ms.total_cmp(&findings[*a].cost_ms));
    for i in order {
        let x = &mut findings[i];
        // Summaries restate their causes, outcomes and risks are not
        // waits, and what the ideal prices in is not excess.
        if x.kind.cost_rule() != CostRule::Waits || x.cost_ms <= 0.0 {
            continue;
        }
        let Some(p) = x.phase.filter(|p| p.is_latency()) else {
            continue;
        };
        let in_phase = || (0..ledger.len()).filter(|&j| ledger[j].phase == p);
        // Each wait from the row it lengthened, at most its own length
        // (a wait outside every row lengthened none: the ledger does not
        // count it).
        let mut share = 0.0;
        for w in &x.waits {
            if let Some(j) = in_phase().find(|&j| holds(&ledger[j], w)) {
                let take = w.ms.min(row_left[j]).min(x.cost_ms - share).max(0.0);
                row_left[j] -= take;
                share += take;
            }
        }
        // The waits past those listed are not placed: they (and all of a
        // finding without waits) share what the phase has left.
        let mut rest = match x.waits.is_empty() {
            true => x.cost_ms,
            false => x.unlisted_waits.map_or(0.0, |u| u.ms),
        };
        for j in in_phase() {
            let take = rest.min(x.cost_ms - share).min(row_left[j]).max(0.0);
            row_left[j] -= take;
            rest -= take;
            share += take;
        }
        x.attributed_ms = share;
    }
    let mut left = [0.0f64; Phase::ALL.len()];
    for (r, l) in ledger.iter().zip(row_left) {
        left[r.phase as usize] += l;
    }
    left
}

/// Whether `w` lengthened row `r`: what was held or awaited (its
/// `to_frame`) is one of the row's frames after its first (a wait that
/// ends where the row begins came before it: it moved the row, not its
/// length), or its last (a row of one frame).
fn holds(r: &LedgerRow, w: &crate::model::Wait) -> bool {
    (r.start_frame < w.to_frame && w.to_frame <= r.end_frame) || w.to_frame == r.end_frame
}

/// The connection's name lookup for people and programs: its span on the
/// client's clock (its queries and the SYN are the client's) and the
/// names tried before the one that resolved.
fn lookup_report(l: &rttdoc_analyze::NameLookup, syn: rttdoc_analyze::Stamp) -> NameLookupReport {
    let (first, done) = (l.first_sent(), l.last_answer);
    let (_, names_tried) = l.names_before();
    NameLookupReport {
        name: l.name.to_string(),
        resolver: l.resolver,
        first_frame: first.frame,
        answer_frame: l.answer.frame,
        last_frame: done.frame,
        ms: (done.ts_ns - first.ts_ns).max(0) as f64 / 1e6,
        syn_after_ms: (syn.ts_ns - done.ts_ns).max(0) as f64 / 1e6,
        queries: l.queries.len() as u32,
        unanswered: l
            .queries
            .iter()
            .filter(|q| q.answer.is_none_or(|a| a.at.frame > syn.frame))
            .count() as u32,
        names_tried: names_tried.iter().take(8).map(|n| n.to_string()).collect(),
        failed_attempts: l
            .failed_attempts
            .iter()
            .map(|a| AttemptReport {
                stream: a.stream,
                address: a.to.ip,
                syn_frame: a.syn.frame,
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::FindingKind;

    /// A first-byte row of exchange `n` over frames `span`, `excess` ms
    /// beyond its ideal.
    fn row(n: u32, span: (u64, u64), excess: f64) -> LedgerRow {
        LedgerRow {
            phase: Phase::FirstByte,
            label: format!("exchange {n}"),
            exchange: Some(n),
            start_frame: span.0,
            end_frame: span.1,
            duration_ms: 100.0,
            rtts: Some(2.0),
            ideal_rtts: Some(1.0),
            excess_rtts: Some(excess / 50.0),
            excess_ms: Some(excess),
            ideal_basis: String::new(),
            summed: 0,
        }
    }

    /// A first-byte finding of `kind` with these waits (from, to, ms).
    fn found(kind: FindingKind, waits: &[(u64, u64, f64)]) -> crate::model::Finding {
        let mut f = crate::model::Finding::new(kind, 0, Some(Phase::FirstByte));
        f.cost_ms = waits.iter().map(|w| w.2).sum();
        f.waits = waits
            .iter()
            .map(|&(from_frame, to_frame, ms)| crate::model::Wait {
                from_frame,
                to_frame,
                release_frame: None,
                ms,
            })
            .collect();
        f
    }

    #[test]
    fn a_wait_explains_only_the_excess_of_the_row_it_lengthened() {
        // Exchange 1 was 40 ms late; exchange 2 asked nothing (idle, no
        // excess), and a timer's re-sends waited in it for 800 ms.
        let ledger = [row(1, (10, 20), 40.0), row(2, (30, 60), 0.0)];
        let mut findings = [
            found(FindingKind::RtoStall, &[(35, 50, 800.0)]),
            found(FindingKind::ServerThinkTime, &[(10, 20, 30.0)]),
        ];
        let left = attribute(&ledger, &mut findings);
        // The stall lengthened the idle row: it explains none of the 40.
        assert_eq!(findings[0].attributed_ms, 0.0);
        assert_eq!(findings[1].attributed_ms, 30.0);
        assert!((left[Phase::FirstByte as usize] - 10.0).abs() < 1e-9);
    }

    #[test]
    fn two_findings_in_one_row_share_it_by_their_waits() {
        // Row 2 (40 ms late) holds 30 ms of the server's and 10 of the
        // downlink's; the server's finding is larger overall (row 1's 90
        // ms too), yet takes only its own 30 of row 2.
        let ledger = [row(1, (10, 20), 90.0), row(2, (30, 60), 40.0)];
        let mut findings = [
            found(
                FindingKind::ServerThinkTime,
                &[(10, 20, 90.0), (30, 60, 30.0)],
            ),
            found(FindingKind::DownlinkQueue, &[(31, 60, 10.0)]),
        ];
        attribute(&ledger, &mut findings);
        assert_eq!(findings[0].attributed_ms, 120.0);
        assert_eq!(findings[1].attributed_ms, 10.0);
    }

    #[test]
    fn a_wait_before_a_row_began_explains_none_of_it() {
        // A Nagle hold released the request that opens row 2: it moved
        // the row, not its length.
        let ledger = [row(1, (10, 20), 0.0), row(2, (30, 60), 40.0)];
        let mut findings = [found(FindingKind::NagleHold, &[(21, 30, 200.0)])];
        let left = attribute(&ledger, &mut findings);
        assert_eq!(findings[0].attributed_ms, 0.0);
        assert_eq!(left[Phase::FirstByte as usize], 40.0);
        // Without waits listed, a finding shares its phase's excess.
        let mut unlisted = [found(FindingKind::NagleHold, &[])];
        unlisted[0].cost_ms = 25.0;
        attribute(&ledger, &mut unlisted);
        assert_eq!(unlisted[0].attributed_ms, 25.0);
    }

    #[test]
    fn slow_start_rounds_double_from_ten_segments() {
        assert_eq!(slow_start_rounds(1, 1448), 1);
        assert_eq!(slow_start_rounds(10 * 1448, 1448), 1);
        assert_eq!(slow_start_rounds(10 * 1448 + 1, 1448), 2);
        assert_eq!(slow_start_rounds(30 * 1448, 1448), 2);
        assert_eq!(slow_start_rounds(31 * 1448, 1448), 3);
        assert_eq!(slow_start_rounds(0, 1448), 0);
    }

    #[test]
    fn a_capture_joined_mid_connection_is_placed_by_its_hosts_pure_acks() {
        const MS: i64 = 1_000_000;
        let rtt = Some(30 * MS);
        // Both hosts ACKed: the one that ACKed within its own turnaround
        // is at the capture point.
        let both = |cs, ss| place_by_fastest_answers((Some(cs), Some(ss)), rtt);
        assert_eq!(both(MS / 20, 30 * MS), Some((Vantage::Client, MS / 20)));
        let server_side = Some((Vantage::Server, 30 * MS - MS / 20));
        assert_eq!(both(30 * MS, MS / 20), server_side);
        // Two long gaps: a tap in the middle, or an endpoint whose ACKs
        // were all delayed; nothing tells which.
        assert_eq!(both(12 * MS, 18 * MS), None);
        // One host's own turnaround: the capture is at that host.
        let client = place_by_fastest_answers((Some(MS / 20), None), rtt);
        assert_eq!(client, Some((Vantage::Client, MS / 20)));
        let server = place_by_fastest_answers((None, Some(MS / 20)), rtt);
        assert_eq!(server, Some((Vantage::Server, 30 * MS - MS / 20)));
        // One host's long gap may be its delayed ACK: it places nothing.
        assert_eq!(place_by_fastest_answers((Some(25 * MS), None), rtt), None);
        assert_eq!(place_by_fastest_answers((None, Some(25 * MS)), rtt), None);
        // No pure ACK, or one side's without an RTT: nothing either.
        assert_eq!(place_by_fastest_answers((None, None), rtt), None);
        assert_eq!(place_by_fastest_answers((Some(MS / 20), None), None), None);
    }

    #[test]
    fn answers_with_data_place_a_host_only_when_they_came_within_a_millisecond() {
        const MS: i64 = 1_000_000;
        let facts = |min_client_side, min_server_side: Option<i64>, pure_ack_sides| {
            rttdoc_analyze::RttFacts {
                min_client_side,
                min_server_side: min_server_side.map(|ns| (ns, RttSource::DataAck)),
                pure_ack_sides,
                ..Default::default()
            }
        };
        // A client that answered each server record with data of its own
        // within 0.1 ms and sent no pure ACK: at the capture point.
        let data_only = facts(Some(MS / 10), Some(37 * MS), (None, None));
        assert_eq!(near_answers(&data_only), (Some(MS / 10), None));
        let placed = place_by_fastest_answers(near_answers(&data_only), Some(37 * MS));
        assert_eq!(placed, Some((Vantage::Client, MS / 10)));
        // A server's answer 100 ms after a request, and a "round trip" of
        // 9 s read from a request that acknowledged an answer 9 s old:
        // the answer may hold any application time, so it places nothing.
        let think = facts(Some(9_000 * MS), Some(100 * MS), (None, None));
        assert_eq!(near_answers(&think), (None, None));
        assert_eq!(
            place_by_fastest_answers(near_answers(&think), Some(9_000 * MS)),
            None
        );
        // A pure ACK counts at any gap; the faster of the two is taken.
        let both = facts(Some(MS / 2), Some(20 * MS), (Some(MS / 4), Some(25 * MS)));
        assert_eq!(near_answers(&both), (Some(MS / 4), Some(25 * MS)));
    }
}
