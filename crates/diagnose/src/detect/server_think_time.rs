//! `server_think_time` — the server took long to answer: between the
//! ClientHello and its ServerHello (key exchange and signing: a large RSA
//! key, a busy or throttled CPU, an OCSP or key-server fetch), or between a
//! request and the first byte of its response.
//!
//! Signature, on the server's clock (client packets + the server side of
//! the RTT): answer departure minus question arrival (of its last copy:
//! the last re-send of the client's unacknowledged bytes while it waited,
//! since the server reads it whole no sooner, an upload's repair after
//! its last new byte), at least half a round trip, clamped to 5..20 ms (above a kernel's or a TLS library's
//! normal turnaround; 20 ms is worth knowing on any path). Each is a wait
//! from the question (its last copy) to the answer's first segment, with
//! no releasing packet (the server's own work ended it), of that time on
//! the server's clock. Cost: the waits' sum.
//! Fix: cheaper crypto (ECDSA P-256 certificates instead of RSA-4096,
//! x25519), session resumption, more CPU, a warm backend; for responses,
//! the application.
//!
//! The server's flight itself leaves as one write (ServerHello to
//! ServerHelloDone, or to its Finished in TLS 1.3), paced only by its
//! congestion window: a segment of the flight, the next bytes after all
//! the server had sent (not a hole's fill), that came later than the one
//! before it, and later than the arrival (on the server's clock, as the
//! connection's round trip places it) of the client's last packet
//! between them (what a window waiting for an ACK lets go), by the
//! threshold or more, was the server's own to send. (An ACK that round
//! trip places after the segment left released it all the same on a
//! quicker one: nothing of the server's then; nDPI's anyconnect-vpn.pcap
//! 13, a window's second round 2.4 ms quicker than the SYN's.) The
//! longest such pause is a wait of the handshake's, from the segment
//! before it to the segment after it (no releasing packet), no longer
//! than the server's own clock says the two left apart (the path held
//! the later one for the rest). It is the server's work in the middle of
//! its flight (a TLS 1.2 server that writes its ServerHello and
//! Certificate, then signs its ServerKeyExchange: a remote signer, a busy
//! CPU), or a segment lost before the capture point that its timer
//! re-sent: the server's side either way, and the words say both (nDPI's
//! netflix.pcap 37: the ServerKeyExchange 436 ms after the Certificate by
//! the server's 250 Hz clock, 278 ms after the client's ACK could have
//! let it go, "436 ms unexplained" and the client's 27 ms turn the fix's
//! subject before). Only segments of the server's handshake messages
//! count: nobody waits for its 0.5-RTT data or TLS 1.3 session tickets.
//!
//! Responses are checked in plain and TLS connections alike (one finding
//! for all of a connection's exchanges), except a response whose first
//! segment left the moment a client ACK arrived for server data still in
//! flight: Nagle or a window held it (see nagle.rs), the application did
//! not. When that data left after the request arrived (a TLS 1.3 server's
//! session tickets, written as the handshake completes), the response
//! was written no earlier than it, and the server's time ends there.
//!
//! Nor is a response that acknowledges client bytes the capture never
//! showed (a capture that lost packets, a collage of samples) an answer
//! to the request before it: it answers one the capture missed.
//!
//! Nor is a queue on the path the server's work: a page load's parallel
//! connections fill the client's access link together, and the round trip
//! grows long after this connection's handshake timed it. The client's
//! handshakes measured the queue (SYN -> SYN-ACK at the capture point
//! beyond the fastest with the same server), and a queue drains at most as
//! fast as time passes: what a handshake answered before the answer found
//! beyond this connection's own, less the time since, was still on the
//! path, and is taken off. So is the queue of the client's downlink while
//! several of its connections kept it saturated (their data arriving back
//! to back at the link's rate): an answer arriving inside such a stretch
//! may have waited behind it since the stretch began, and only the time
//! before that (the link idle, the answer not yet queued) can be the
//! server's. (Not at the server, which is seen answering before that
//! queue.) Where the client's arrivals are too uneven to prove the link
//! saturated block by block (a link that delivers in aggregates, a capture
//! host that stamps a poll's packets alike), the queue is still bounded:
//! a bottleneck holds an answer only while it delivers what is ahead of
//! it without a break (an idle link has an empty queue), so the answer
//! can have waited at most since the client's arrivals last paused for
//! more than two packets' time at the link's rate (its fastest shown, or
//! the first stretch's own pace), once the packets a host handed over
//! together are placed when the link can have delivered them (a bunch
//! that catches up on a pause shows the pause was the host's), and while
//! every later part brought at least half that rate; that much is not the
//! server's either.
//!
//! A server's kernel acknowledges a request on arrival while the
//! connection is new (Linux's quick-ACK mode) or when no delayed-ACK timer
//! holds it: a pure ACK of the whole request that left less than the
//! shortest delayed-ACK timer (40 ms) after the request's arrival, as the
//! round trip places it, left on arrival, and the server's time began no
//! earlier than it (both the server's own packets: whatever the path's
//! round trip had grown to since the handshake, a request queued on the
//! client's uplink behind its other uploads is not the server thinking).
//! Linux's timer fires from within a tick of its clock, as early as 30 ms
//! (a 100 Hz kernel's): an ACK 30-40 ms after the arrival is the timer's
//! on a path that cannot have grown that much (its jitter, ten times its
//! round trip: a loopback, a LAN), and bounds nothing there. And no
//! delayed-ACK timer of the common stacks waits more than 200 ms: a pure
//! ACK of the whole request later than that (and half a round trip, the
//! placement's own error) after the round trip's placement of its
//! arrival says the request arrived late (a phone's uplink held it), when
//! within the timer not known: the server's time is what followed that
//! ACK, all that is certain (nDPI's KakaoTalk_talk 5, jpegs.cap 3).
//!
//! Nor does an acknowledgment ask anything on a channel whose two sides
//! acknowledge each other's messages with a small message of one size,
//! each side at least three times the moment the other's data of another
//! size arrived (Zoom's control channel): a client message of only such
//! acknowledgments, each right after the server's data of another size,
//! is no request, and what the server sends next comes at its own pace.
//! So too where only the client acknowledges so (at least three times)
//! and the server was seen sending on its own: its data, after a pause
//! in its data of at least the threshold, left before one of those
//! acknowledgments arrived (its ACK short of the message's end). A
//! server that answers never does that, its answers waiting for what
//! they answer; one that pushes sends when it has news (nDPI's
//! nintendo.pcap, a game service's notifications: 762 ms of "think
//! time" before the client's acknowledgments). A client asking again
//! the moment each answer came, in one size, is a request loop: nothing
//! of the server's crosses its requests, and a slow answer stays the
//! server's time. Nor where the client offered HTTP/2: its
//! WINDOW_UPDATEs and PING acknowledgments are of one size, and the
//! server's data crossing them answers its earlier requests.
//!
//! Nor is a proxy's wait for its upstream its own work: where the capture
//! shows the call the server made for the request (upstream_wait.rs), the
//! call's span is the upstream's, and only the rest is the server's.
//!
//! Nor is a server closing an idle connection an answer: a client's
//! message that left the moment the server's data arrived (one segment: a
//! protocol's acknowledgment such as HTTP/2's SETTINGS ACK or
//! WINDOW_UPDATE), and the server's next data, a second or more later on
//! its clock (an idle timer's), carrying or followed at once by its FIN,
//! RST or TLS alert (a GOAWAY, then close_notify: its idle timeout). A
//! shorter wait is an answer closed after it: SMTP's QUIT sent the moment
//! the last reply came, HTTP/1.1's last request before the server closes.
//!
//! Nor does a client's reply to a message the server repeats on its own
//! ask anything: a small client message sent the moment a small server
//! message arrived that the server began after its own earlier data and a
//! second's silence (nothing the client asked was pending), when the
//! server's next message is that small message again (a WebSocket or
//! application ping after a push: the next ping comes when the server's
//! timer says).
//!
//! Nor is a message of the server's own timer an answer: a feed, a
//! game's ticks, a status pushed every second. A server whose messages
//! (its first data after a pause, all it sent acknowledged) begin at whole
//! multiples of one period, four intervals in five, within 2% or 2 ms,
//! and at least twice on time with nothing from the client since its
//! previous message (not a client polling at that rhythm) or, a client
//! message before every one, while the client began a quarter more
//! messages than the server over them (the client on a timer of its
//! own: netperfmeter's flows; a write Nagle held until the server's ACK
//! begins nothing), sends its next
//! message when its timer says: a client's message just before it got no
//! answer from it, however late it came, and the ledger counts the time
//! as idle.
//!
//! Nor is a server's timer its work: a heartbeat (the server pings, the
//! client answers at once, the next ping comes a period later) or a long
//! poll's hold (the client polls again the moment an answer comes, the
//! server answers when its timeout ends) pairs each client message with
//! a server message one fixed delay later. At least three slow exchanges
//! whose request left the moment the server's previous data arrived,
//! both messages of at most one segment, and delays within 5% of their
//! median of a second or more, are that timer, and so is every other
//! exchange of small messages and that delay (a chain's first poll):
//! idle time, not think time. A long poll's timeout likewise, however
//! long the client took to ask again: three slow exchanges or more of one
//! delay of ten seconds or more (within 0.5%), each asked with a last
//! segment of one size, are the server holding its answer until news or
//! its timeout, and so is every exchange asked so and answered sooner
//! (the news). A timeout with jitter has no one delay: three holds or
//! more of ten seconds or more, each poll of one size asked again the
//! moment the last answer came, each answered with one small size (the
//! same "nothing new"), are that server's too.

use super::{Facts, TimedTurn};
use crate::model::{
    AppProtocol, ArrivalProof, Detail, Direction, Finding, FindingKind, Phase, PreambleKind,
    TlsMessage, Wait,
};
use rttdoc_analyze::{seq, Exchange, SegmentRecord, Stamp};
use rttdoc_wire::TcpFlags;

/// Below this, a host's normal turnaround (a signature, a scheduler tick).
const FLOOR_NS: i64 = 5_000_000;
/// Above this, worth reporting whatever the path.
const ALWAYS_NS: i64 = 20_000_000;

/// Segments captured this close together were sent back to back: a path
/// that keeps order brings them as close together.
const PINNED_NS: i64 = 1_000_000;

pub fn detect(f: &Facts<'_>, out: &mut Vec<Finding>) {
    let Some(rtt) = f.rtt_ns else { return };
    let threshold = threshold_of(rtt);
    let mut handshake: Vec<Wait> = Vec::new();
    let mut hello_frames: Option<(u64, u64)> = None;
    if let Some((sh, t)) = f.hello_turn().filter(|(_, t)| t.ns >= threshold) {
        hello_frames = Some((t.from_frame, sh));
        handshake.push(t.wait());
    }
    // The server's later flights (a full TLS 1.2 handshake's Finished,
    // the ServerHello after a HelloRetryRequest).
    let mut later_ms = 0.0;
    for t in later_flight_turns(f).filter(|t| t.ns >= threshold) {
        let w = t.wait();
        later_ms += w.ms;
        handshake.push(w);
    }
    // A pause in the middle of one of its flights.
    let pause = flight_pause(f, threshold);
    if let Some(p) = pause {
        handshake.push(Wait {
            from_frame: p.before_frame,
            to_frame: p.after_frame,
            release_frame: None,
            ms: p.ms,
        });
    }
    // (A handshake its client let go as it ended was waited on by no
    // one: nDPI's malware.pcap 2, the client's alert and FIN 0.5 ms after
    // its Finished, the server's Finished reset.)
    if !handshake.is_empty() && !f.handshake_discarded() {
        let mut x = f.finding(FindingKind::ServerThinkTime, Some(Phase::TlsHandshake));
        let total: f64 = handshake.iter().map(|w| w.ms).sum();
        x.frames = match hello_frames {
            Some((ch, sh)) => with_arrival_ack(f, ch, sh),
            None => Vec::new(),
        };
        for w in handshake.iter().skip(usize::from(hello_frames.is_some())) {
            x.frames
                .extend(with_arrival_ack(f, w.from_frame, w.to_frame));
        }
        x.cost_ms = total;
        let has = |m: TlsMessage| {
            f.report
                .tls
                .as_ref()
                .is_some_and(|t| t.messages.iter().any(|x| x.message == m))
        };
        let pause_ms = pause.map_or(0.0, |p| p.ms);
        x.detail = Detail::HandshakeThinkTime {
            hello_ms: total - later_ms - pause_ms,
            later_ms,
            flight_pause: pause,
            rsa_key_exchange: has(TlsMessage::ServerHelloDone)
                && !has(TlsMessage::ServerKeyExchange),
            resumed: f.resumed(),
            server_key: f.server_key_exchange,
        };
        x.waits = handshake;
        x.display_filter = f.filter_frames(&x.frames);
        out.push(x);
    }
    preamble(f, threshold, out);
    // Request/response (plain, or records inside TLS): request arrival to
    // the first response byte, one finding for all of a connection's
    // exchanges.
    let mut slow: Vec<ServerTurn> = f
        .server_turns()
        .iter()
        .filter(|s| s.3 >= threshold)
        .copied()
        .collect();
    // What a server's timer paced (found once, for the ledger too).
    slow.retain(|s| !f.idle_exchanges.contains(&s.0));
    // A server that speaks first: its greeting, numbered 0.
    if let Some(g) = greeting_turn(f).filter(|g| g.3 >= threshold) {
        slow.insert(0, g);
    }
    let Some(worst) = slow.iter().max_by_key(|s| s.3) else {
        return;
    };
    let total: i64 = slow.iter().map(|s| s.3).sum();
    let mut y = f.finding(FindingKind::ServerThinkTime, Some(Phase::FirstByte));
    for (_, q, a, _) in slow.iter().take(8) {
        y.frames.extend(with_arrival_ack(f, *q, *a));
    }
    y.waits = slow
        .iter()
        .map(|(_, q, a, think)| Wait {
            from_frame: *q,
            to_frame: *a,
            release_frame: None,
            ms: *think as f64 / 1e6,
        })
        .collect();
    y.cost_ms = total as f64 / 1e6;
    y.detail = Detail::ExchangeThinkTime {
        greeting_ms: slow
            .iter()
            .find(|s| s.0 == 0)
            .map_or(0.0, |s| s.3 as f64 / 1e6),
        slow: slow.len() as u32,
        exchanges: f.exchanges.len() as u32,
        threshold_ms: threshold as f64 / 1e6,
        longest_ms: worst.3 as f64 / 1e6,
        longest_exchange: worst.0 as u32,
        longest_label: label_of(f.exchanges, worst.0),
        // (The slowest's first: a proxy's answers all name it.)
        via: std::iter::once(worst)
            .chain(&slow)
            .find_map(|s| f.exchanges.get(s.0.checked_sub(1)?)?.via.as_deref())
            .map(str::to_string),
        // (The slowest's, else another slow one's.)
        protocol: f.protocol,
        retried: retried_logins(f, &slow),
        host_calls: std::iter::once(worst).chain(&slow).find_map(|s| {
            f.exchanges
                .get(s.0.checked_sub(1)?)?
                .host_calls
                .as_deref()
                .copied()
        }),
    };
    y.display_filter = f.filter_frames(&y.frames);
    out.push(y);
}

/// On an SSH connection (read as one, or on port 22), the slow exchanges
/// `slow` that repeat an exchange beside them: the same request size,
/// answered with the same size. SSH's user authentication is the
/// session's one exchange a client repeats as it was: a password refused
/// (USERAUTH_FAILURE) and typed again, each refusal held by the server's
/// failed-login delay (PAM's pam_faildelay, about 2 s, randomised), the
/// accepted one answered at once (nDPI's ssh.pcap 0: two 144-byte
/// requests answered with 80 bytes after 1.87 and 2.42 s, the third with
/// 32 bytes in 34 ms; judged in session 87 at "look at its host's load").
/// How many, and their time (ms).
fn retried_logins(f: &Facts<'_>, slow: &[ServerTurn]) -> Option<(u32, f64)> {
    if !AppProtocol::is_ssh(f.protocol, f.report.server.port) {
        return None;
    }
    let alike = |a: usize, b: usize| match (f.exchanges.get(a), f.exchanges.get(b)) {
        (Some(x), Some(y)) => {
            x.request_bytes == y.request_bytes
                && x.response_bytes == y.response_bytes
                && x.response_bytes > 0
        }
        _ => false,
    };
    let (n, ns) = slow
        .iter()
        .filter(|s| s.0 > 0)
        .filter(|s| {
            let i = s.0 - 1;
            i.checked_sub(1).is_some_and(|before| alike(before, i)) || alike(i, i + 1)
        })
        .fold((0u32, 0i64), |(n, ns), s| (n + 1, ns + s.3));
    (n > 0).then_some((n, ns as f64 / 1e6))
}

/// The longest pause inside a flight of the server's in the TLS
/// handshake (module docs) of at least `threshold`: two segments of the
/// server's, the later the next bytes after the earlier (no re-send the
/// capture saw), no data of the client's between them, the later
/// captured that long after the earlier and after the arrival at the
/// server (on its clock) of the client's last packet between them (what
/// a congestion window waiting for an ACK lets go), the later one the
/// next bytes after all the server had sent (not a hole's fill: a re-send,
/// an original the path held back); no more than the
/// server's own clock says they left apart (the path held the later one
/// for the rest). None where there is no such pause, or no handshake.
fn flight_pause(f: &Facts<'_>, threshold: i64) -> Option<crate::model::FlightPause> {
    let server = Direction::ServerToClient;
    let row = f
        .report
        .ledger
        .iter()
        .find(|r| r.phase == Phase::TlsHandshake)?;
    // A segment the client waited for carries part of a message of the
    // server's handshake: not its TLS 1.3 session tickets, nor data after
    // its Finished (0.5-RTT data: the client's Finished awaits neither).
    let messages = &f.report.tls.as_ref()?.messages;
    let awaited = |frame: u64| {
        messages.iter().any(|m| {
            m.direction == server
                && m.first_frame <= frame
                && frame <= m.frame
                && !matches!(
                    m.message,
                    TlsMessage::NewSessionTicketEncrypted
                        | TlsMessage::Alert { .. }
                        | TlsMessage::AlertEncrypted
                        | TlsMessage::EarlyData
                        | TlsMessage::OtherRecord(_)
                )
        })
    };
    let mut best: Option<crate::model::FlightPause> = None;
    let mut before: Option<&SegmentRecord> = None;
    let mut released: Option<(i64, u64)> = None;
    // The end of the server's bytes seen so far: a segment below it
    // fills a hole (a re-send, or an original the path held).
    let mut highest: Option<u32> = None;
    for r in f.between(row.start_frame, row.end_frame + 1) {
        if r.dir != server {
            if r.len > 0 {
                // The client's flight: the server's next is an answer.
                before = None;
            } else if r.ack_set {
                released = Some((f.on_clock_of(server, r), r.frame));
            }
            continue;
        }
        if r.len == 0 {
            continue;
        }
        let in_order = highest.is_none_or(|h| seq::le(h, r.seq));
        // (Both new: a re-send before it, the timer's, is no part of the
        // flight: google_ssl.pcap 0, a spurious re-send between the
        // client's key exchange and the server's Finished.)
        let new = |x: &SegmentRecord| x.new_data && !x.retransmission;
        let next =
            before.filter(|p| p.end == r.seq && in_order && new(p) && new(r) && awaited(r.frame));
        highest = Some(highest.map_or(r.end, |h| seq::max(h, r.end)));
        if let Some(p) = next {
            // (Its arrival as the connection's round trip places it: one
            // that places it after the segment left says a quicker round
            // trip released it then, not that nothing did.)
            let release = released.filter(|&(_, frame)| frame > p.frame);
            let from = release.map_or(p.ts_ns, |(at, _)| at.max(p.ts_ns));
            let mut pause = r.ts_ns - from;
            if let Some(apart) = f.sent_apart_at_most_ns(p, r) {
                pause = pause.min(apart);
            }
            let ms = pause as f64 / 1e6;
            if pause >= threshold && best.is_none_or(|b| ms > b.ms) {
                best = Some(crate::model::FlightPause {
                    ms,
                    before_frame: p.frame,
                    after_frame: r.frame,
                    release_frame: release.map(|(_, frame)| frame),
                });
            }
        }
        before = Some(r);
    }
    best
}

/// The server's turn on the ClientHello (module docs), whatever its
/// length: the ServerHello's frame, and the turn from the ClientHello's
/// last copy to the server's first data after it, on the server's clock,
/// less the path's queue; none when the capture cannot time it (no
/// ServerHello, an answer that began where the capture missed it).
pub(super) fn hello_turn(f: &Facts<'_>) -> Option<(u64, TimedTurn)> {
    let server = Direction::ServerToClient;
    let on_server = |frame: u64| f.record(frame).map(|r| f.on_clock_of(server, r));
    let tls = f.report.tls.as_ref()?;
    let ch = tls
        .messages
        .iter()
        .find(|m| m.message == TlsMessage::ClientHello)?
        .frame;
    let sh = tls
        .messages
        .iter()
        .find(|m| {
            m.message == TlsMessage::ServerHello || m.message == TlsMessage::HelloRetryRequest
        })?
        .frame;
    // The server's first packet after the ClientHello with data or its
    // FIN: when it re-sends bytes the capture missed, or is a FIN
    // behind them, the answer first left at a time the capture does
    // not show (its first copy lost on the way), and its wait is
    // unknown, as for an answer that began in a hole (the ledger's).
    // So is it when the client had sent more than the answer
    // acknowledges: the server may have been waiting for that.
    if let Some(answer) = f
        .between(ch + 1, u64::MAX)
        .iter()
        .find(|r| r.dir == server && (r.len > 0 || r.flags.fin()))
    {
        let client_sent = f
            .between(0, answer.frame)
            .iter()
            .filter(|r| r.dir == Direction::ClientToServer && r.len > 0)
            .map(|r| r.end)
            .reduce(seq::max);
        if answer.retransmission
            || answer.len == 0
            || (answer.ack_set && client_sent.is_some_and(|end| seq::lt(answer.ack, end)))
        {
            return None;
        }
    }
    // The ClientHello reached the server with its last transmission
    // before the answer (a lost one arrives with its re-send, a timeout
    // later: rto_stall's wait, not the server's), as a request does.
    let hello = f.record(ch).map(|r| (r.seq, r.end));
    let ch = f
        .between(ch + 1, sh)
        .iter()
        .filter(|r| r.dir == Direction::ClientToServer && r.retransmission && r.len > 0)
        .filter(|r| hello.is_some_and(|(a, b)| seq::le(a, r.seq) && seq::lt(r.seq, b)))
        .map(|r| r.frame)
        .next_back()
        .unwrap_or(ch);
    let (tq, ta) = (on_server(ch)?, on_server(sh)?);
    // The ServerHello record may end in a later segment than the one
    // that started it: take the first server data after the ClientHello.
    let (first_frame, first) = f
        .timeline
        .iter()
        .filter(|r| r.dir == server && r.len > 0 && r.frame > ch)
        .map(|r| (r.frame, f.on_clock_of(server, r)))
        .next()
        .unwrap_or((sh, ta));
    // Nobody waited for a ServerHello the client had closed before (its
    // FIN, no reading after it, or its RST): a client that gave up (a
    // scanner's, a timeout's), its handshake never finished.
    if client_closed_before(f, f.between(ch, first_frame)) {
        return None;
    }
    // When the answer was captured, and what held it on the path after
    // it left (the server's own clock: sender_clock.rs).
    let answer = f.record(first_frame);
    let queue = answer.map_or(0, |r| held_on_the_way_ns(f, r));
    let mut think = first - tq - queue;
    // Acknowledged on arrival: the ClientHello was there by then (as
    // for a request, below), and the ServerHello left when its own clock
    // says, less what held it on the path after (nDPI's reddit.pcap: a
    // phone's downlink released the ACK and the ServerHello together,
    // 5 ms apart on the server's clock, 23 and 18 ms late).
    if let Some((k, _)) = f.acked_on_arrival(server, ch, first_frame, tq) {
        let held_after = answer.map_or(0, |r| f.held_after_sending_ns(r));
        think = think.min(first - held_after - k);
    }
    let turn = TimedTurn {
        from_frame: ch,
        to_frame: first_frame,
        ns: think,
    };
    Some((sh, turn))
}

/// What held the server's handshake answer `r` on the path after it
/// left: the path's queue as far as the server's clock allows it, or its
/// delivery beyond the fastest by that clock (sender_clock.rs),
/// whichever is more. The first flight and the later ones alike.
fn held_on_the_way_ns(f: &Facts<'_>, r: &SegmentRecord) -> i64 {
    f.held_within_clock(r, f.answer_queue_ns(r.ts_ns))
        .max(f.held_after_sending_ns(r))
}

/// The server's later flights (a full TLS 1.2 handshake's Finished,
/// the ServerHello after a HelloRetryRequest): from the client's flight
/// (its last copy) to the server's answer, less the path's queue and
/// what held the answer on the path after it left by the server's own
/// clock, as the first flight is timed (nDPI's whatsappfiles.pcap: a
/// Finished captured 95.6 ms after the client's key exchange, its
/// delivery as slow by the server's 1 kHz clock as the ACK of the
/// ClientHello's had been, both held tens of ms beyond the connection's
/// fastest; judged wrong at 37 ms of the server's, against a round trip
/// read 44 s later), whatever their length.
pub(super) fn later_flight_turns<'f, 'a>(
    f: &'f Facts<'a>,
) -> impl Iterator<Item = TimedTurn> + use<'f, 'a> {
    f.handshake_turns()
        .iter()
        .filter(|t| t.answerer == Direction::ServerToClient && !t.first && t.complete)
        .map(|t| {
            let queue = f.record(t.answer_frame).map_or_else(
                || f.answer_queue_ns(t.answer_ts_ns),
                |r| held_on_the_way_ns(f, r),
            );
            TimedTurn {
                from_frame: t.left_before_question.unwrap_or(t.question_frame),
                to_frame: t.answer_frame,
                ns: t.wait_ns - queue,
            }
        })
}

/// The plaintext preamble before TLS (a proxy's CONNECT, a STARTTLS
/// dialog, a database's SSL request; [`Facts::preamble_turns`]): the
/// server's greeting, from the handshake's ACK as any greeting is
/// ([`greeting_think`]), and each answer, from the client's message (its
/// last copy) as the handshake's later flights are, less the path's queue;
/// not an answer a client ACK released (Nagle or a window held it), nor
/// one to bytes the capture did not show. One finding in the preamble's
/// phase: a proxy's answer waits for its own connection to the
/// destination, a mail server's for its checks of the client.
fn preamble(f: &Facts<'_>, threshold: i64, out: &mut Vec<Finding>) {
    let Some((kind, _)) = f.preamble_row() else {
        return;
    };
    let mut greeting_ms = 0.0;
    let mut waits = Vec::new();
    for (t, greets) in preamble_server_turns(f) {
        if t.ns < threshold {
            continue;
        }
        let w = t.wait();
        if greets {
            greeting_ms = w.ms;
        }
        waits.push(w);
    }
    if let Some(x) = preamble_finding(f, FindingKind::ServerThinkTime, kind, greeting_ms, waits) {
        out.push(x);
    }
}

/// The server's turns in the plaintext preamble, timed as [`preamble`]
/// says, whatever their length, and whether each is its greeting.
pub(super) fn preamble_server_turns(f: &Facts<'_>) -> Vec<(TimedTurn, bool)> {
    let Some((_, row)) = f.preamble_row() else {
        return Vec::new();
    };
    let server = Direction::ServerToClient;
    let mut held = None;
    let mut unacked: Option<Unacked> = None;
    let mut turns = Vec::new();
    let answered = || {
        f.preamble_turns()
            .iter()
            .filter(|t| t.answerer == server && t.complete)
    };
    for t in answered() {
        let greets = t.question_frame == row.start_frame
            && f.record(t.question_frame).is_some_and(|r| r.len == 0);
        let (from_frame, think) = if greets {
            greeting_think(f, t.question(), t.answer())
        } else {
            let held = held.get_or_insert_with(|| {
                held_segments(f, answered().map(|t| t.answer_frame).collect())
            });
            let asked = f.record(t.question_frame).map(|r| f.on_clock_of(server, r));
            if held.binary_search(&t.answer_frame).is_ok()
                && asked.is_some_and(|tq| unacked.get_or_insert_with(|| Unacked::new(f)).at(tq))
            {
                continue;
            }
            (
                t.question_frame,
                t.wait_ns - f.answer_queue_ns(t.answer_ts_ns),
            )
        };
        let turn = TimedTurn {
            from_frame,
            to_frame: t.answer_frame,
            ns: think,
        };
        turns.push((turn, greets));
    }
    turns
}

/// A turn's evidence: the question's frame `q`, the server's first pure
/// ACK of all of it before the answer `a` (when the capture shows one: it
/// proves the question had arrived when it left, and its time against the
/// answer's is what a reader checks first), and the answer's frame.
fn with_arrival_ack(f: &Facts<'_>, q: u64, a: u64) -> Vec<u64> {
    let end = f
        .record(q)
        .filter(|r| r.dir == Direction::ClientToServer && r.len > 0)
        .map(|r| r.end);
    let ack = end.and_then(|end| {
        f.between(q + 1, a).iter().find(|s| {
            s.dir == Direction::ServerToClient
                && s.len == 0
                && s.ack_set
                && !s.flags.syn()
                && !s.flags.fin()
                && !s.flags.rst()
                && seq::le(end, s.ack)
        })
    });
    match ack {
        Some(ack) => vec![q, ack.frame, a],
        None => vec![q, a],
    }
}

/// One finding of a side's slow turns in a preamble (`waits`), in its
/// phase; none without a wait.
pub(super) fn preamble_finding(
    f: &Facts<'_>,
    kind: FindingKind,
    preamble: PreambleKind,
    greeting_ms: f64,
    waits: Vec<Wait>,
) -> Option<Finding> {
    if waits.is_empty() {
        return None;
    }
    let mut x = f.finding(kind, Some(preamble.phase()));
    for w in &waits {
        x.frames.push(w.from_frame);
        x.frames.push(w.to_frame);
    }
    x.cost_ms = waits.iter().map(|w| w.ms).sum();
    x.detail = Detail::PreambleThinkTime {
        preamble,
        greeting_ms,
        turns: waits.len() as u32,
        longest_ms: waits.iter().map(|w| w.ms).fold(0.0, f64::max),
    };
    x.waits = waits;
    x.display_filter = f.filter_frames(&x.frames);
    Some(x)
}

/// The greeting of a server that spoke first, when the client waited for
/// it (`Facts::greeting`), as a slow exchange numbered 0: from the
/// packet that opened the connection to the application (the handshake's
/// ACK, inside TLS the client's Finished), or its last copy that reached
/// the server before the greeting left (a lost ACK is the path's, not the
/// server's), to the greeting, on the server's clock, less the path's
/// queue; none under the threshold, none when the greeting was a tick of
/// the server's own timer (the ledger's idle exchange 0,
/// [`pushed_exchanges`]).
pub(super) fn greeting_turn(f: &Facts<'_>) -> Option<ServerTurn> {
    let (opened, greeted) = f.greeting?;
    let (from, think) = greeting_think(f, opened, greeted);
    (!f.idle_exchanges.contains(&0)).then_some((0, from, greeted.frame, think))
}

/// A greeting's wait on the server ([`greeting_turn`]): the frame it
/// began at (the opening packet's last copy the server had before it
/// greeted) and its length, on the server's clock, less the path's queue
/// and a connection the server opened back to the client meanwhile.
fn greeting_think(f: &Facts<'_>, opened: Stamp, greeted: Stamp) -> (u64, i64) {
    let server = Direction::ServerToClient;
    let left = f
        .record(greeted.frame)
        .map_or(greeted.ts_ns, |r| f.on_clock_of(server, r));
    // A later copy of the opening packet: one that acknowledges no more
    // of the server's data (an ACK of a re-sent SYN-ACK, a re-sent
    // Finished); not an ACK of what the server sent meanwhile (TLS 1.3
    // session tickets), which the application does not wait for.
    let opened_ack = f.record(opened.frame).map(|r| r.ack);
    let from = f
        .between(opened.frame, greeted.frame)
        .iter()
        .filter(|r| r.dir == Direction::ClientToServer)
        .filter(|r| opened_ack.is_some_and(|a| seq::le(r.ack, a)))
        .map(|r| (r.frame, f.on_clock_of(server, r)))
        .filter(|&(_, arrived)| arrived <= left)
        .last()
        .unwrap_or((opened.frame, opened.ts_ns + f.server_side_ns));
    // A connection the server opened back to the client before it
    // greeted (an ident lookup) is that connection's time
    // (connect_back.rs), not the server's.
    let back = f.greeting_connect_back.map_or(0, |b| {
        super::connect_back::connect_back_ns(f, b, from.1, left)
    });
    // A greeting that left the moment the client's ACK of the server's
    // own data still in flight arrived was held by Nagle (nagle.rs cites
    // that wait), as a response is ([`held_segments`]): held behind data
    // in flight when the connection opened, none of the wait was the
    // server's; behind data it sent after (its TLS 1.2 Finished, written
    // as the handshake completed on its side), the greeting was written
    // no earlier than that data left, and the server's time ends there
    // (nDPI's imaps.pcap: the greeting 37 ticks after the server's
    // 51-byte Finished, on the client's ACK of it; judged wrong at 37.7
    // ms of server time, the nagle_hold beside it counting it again).
    let greeting_left = if held_segments(f, vec![greeted.frame]).is_empty() {
        left
    } else if Unacked::new(f).at(from.1) {
        from.1
    } else {
        f.between(opened.frame, greeted.frame)
            .iter()
            .find(|r| r.dir == server && r.len > 0)
            .map_or(left, |r| f.on_clock_of(server, r))
    };
    (
        from.0,
        greeting_left - from.1 - f.answer_queue_ns(greeted.ts_ns) - back,
    )
}

/// The client's data the capture showed before a frame, walked forward
/// once over a connection's responses.
struct ClientSent {
    /// Timeline records looked at so far.
    upto: usize,
    /// The highest end of the client's segments among them.
    end: Option<u32>,
    /// Whether any server ACK went past the client's captured bytes
    /// (the tracker counts them: `acked_unseen`); without one, nothing to
    /// look for.
    check: bool,
}

impl ClientSent {
    /// Whether the server segment in `frame` acknowledges client bytes
    /// beyond all the capture showed before it.
    fn acks_unseen(&mut self, f: &Facts<'_>, frame: u64) -> bool {
        if !self.check {
            return false;
        }
        while let Some(r) = f.timeline.get(self.upto).filter(|r| r.frame < frame) {
            if r.dir == Direction::ClientToServer {
                self.end = Some(self.end.map_or(r.end, |e| seq::max(e, r.end)));
            }
            self.upto += 1;
        }
        match (f.record(frame), self.end) {
            (Some(resp), Some(end)) => resp.ack_set && seq::lt(end, resp.ack),
            _ => false,
        }
    }
}

/// Shortest delay a timer is taken for: below it, equal delays are as
/// likely a server's equal work.
const TIMER_MIN_NS: i64 = 1_000_000_000;

/// The slow exchanges (`(number, request frame, response frame, delay)`)
/// that a server's timer paced, not its work (module docs): their
/// numbers, or none.
fn timer_paced(f: &Facts<'_>, slow: &[ServerTurn]) -> Vec<usize> {
    let one_segment = f
        .mss(Direction::ServerToClient)
        .max(f.mss(Direction::ClientToServer)) as u64;
    let small = |i: usize| {
        let x = &f.exchanges[i - 1];
        x.request_bytes <= one_segment && x.response_bytes <= one_segment
    };
    let mut delays: Vec<i64> = slow
        .iter()
        .filter(|(i, ..)| small(*i) && replied_at_once(f, f.exchanges[i - 1].request_first.frame))
        .map(|s| s.3)
        .collect();
    if delays.len() < 3 {
        return held_polls(f, slow);
    }
    delays.sort_unstable();
    let median = delays[delays.len() / 2];
    // (Saturating: a capture's clock can jump by centuries.)
    let same = |d: i64| d.saturating_sub(median).saturating_abs().saturating_mul(20) <= median;
    if median < TIMER_MIN_NS || !delays.iter().all(|d| same(*d)) {
        return held_polls(f, slow);
    }
    // The timer paces every small exchange of its delay, the first of a
    // chain too (a first poll is nobody's answer).
    slow.iter()
        .filter(|(i, .., d)| small(*i) && same(*d))
        .map(|s| s.0)
        .collect()
}

/// Shortest hold a long poll's timeout is taken for: a server that took
/// the same ten seconds or more three times over was holding its answer,
/// not working.
const HOLD_MIN_NS: i64 = 10_000_000_000;

/// A long poll's holds (module docs): the client asks and the server
/// answers when it has news or its timeout ends (WeChat's 25 s: nDPI's
/// wechat.pcap, 363 s of "think time" over 31 polls). Three slow
/// exchanges or more whose delays on the server's clock are one length
/// of at least [`HOLD_MIN_NS`] (within 0.5% or 20 ms: the timeout), each
/// asked with a last segment of one size (at most an MSS), are polls; so
/// is every slow exchange asked so, with a last segment of that size,
/// and answered no later than the timeout (news came sooner). The longest such
/// length is the timeout. Their numbers, or none.
fn held_polls(f: &Facts<'_>, slow: &[ServerTurn]) -> Vec<usize> {
    // The request's last segment, when the request is one segment of its
    // own (polls left unanswered before it may have gathered into it).
    let mss = f.mss(Direction::ClientToServer);
    let asked = |i: usize| {
        let x = &f.exchanges[i - 1];
        let last = f.record(x.request_last.frame)?;
        (last.len > 0 && last.len <= mss).then_some(last.len)
    };
    let mut held: Vec<(i64, u32)> = slow
        .iter()
        .filter(|s| s.3 >= HOLD_MIN_NS)
        .filter_map(|s| Some((s.3, asked(s.0)?)))
        .collect();
    if held.len() < 3 {
        return Vec::new();
    }
    held.sort_unstable();
    let tolerance = |t: i64| (t / 200).max(20_000_000);
    // The longest delay that three of the same request size share.
    let timeout = held.iter().rev().find_map(|&(t, size)| {
        let alike = held
            .iter()
            .filter(|&&(u, n)| n == size && (u - t).abs() <= tolerance(t))
            .count();
        (alike >= 3).then_some((t, size))
    });
    let Some((timeout, size)) = timeout else {
        return jittered_polls(f, slow, asked);
    };
    slow.iter()
        .filter(|s| asked(s.0) == Some(size) && s.3 <= timeout + tolerance(timeout))
        .map(|s| s.0)
        .collect()
}

/// A long poll whose timeout has jitter (Dropbox's longpoll endpoint adds
/// up to 90 s at random against a thundering herd; nDPI's skype.pcap
/// stream 5: 53.8, 38.4 and 48.3 s): no two holds alike, but every poll
/// the same. Three slow exchanges or more of ten seconds or more, each
/// asked with a last segment of one size the moment the server's previous
/// data reached the client (under the threshold of client_think_time: a
/// client's loop, not a person or a timer of its own), or before the
/// server had sent anything (the first poll), and answered with
/// one small size (the same "nothing new"), are polls; so is every slow
/// exchange asked so, and answered no later than the longest of them.
/// Their numbers, or none. A handler that took ten seconds over requests
/// of the client's own rhythm, or whose answers differ, is still working.
fn jittered_polls(
    f: &Facts<'_>,
    slow: &[ServerTurn],
    asked: impl Fn(usize) -> Option<u32>,
) -> Vec<usize> {
    let Some(rtt) = f.rtt_ns else {
        return Vec::new();
    };
    let one_segment = f.mss(Direction::ServerToClient) as u64;
    // (A first poll, with no server data before it, is asked at once.)
    let again = |i: usize| {
        asked(i).filter(|_| {
            asked_again_at_once(f, f.exchanges[i - 1].request_first.frame, rtt) != Some(false)
        })
    };
    let mut polls: Vec<(u32, u64, i64)> = slow
        .iter()
        .filter(|s| s.3 >= HOLD_MIN_NS)
        .filter_map(|s| {
            let answer = f.exchanges[s.0 - 1].response_bytes;
            let size = again(s.0)?;
            (answer > 0 && answer <= one_segment).then_some((size, answer, s.3))
        })
        .collect();
    if polls.len() < 3 {
        return Vec::new();
    }
    polls.sort_unstable();
    let Some((size, longest)) = polls
        .chunk_by(|a, b| (a.0, a.1) == (b.0, b.1))
        .find_map(|alike| (alike.len() >= 3).then(|| (alike[0].0, alike[alike.len() - 1].2)))
    else {
        return Vec::new();
    };
    slow.iter()
        .filter(|s| s.3 <= longest && again(s.0) == Some(size))
        .map(|s| s.0)
        .collect()
}

/// Whether the client's data in `frame` left within client_think_time's
/// threshold of the server's previous data reaching it (the client's
/// application asked again as soon as it read the answer); `None` where
/// the server had sent nothing before it.
fn asked_again_at_once(f: &Facts<'_>, frame: u64, rtt: i64) -> Option<bool> {
    let client = Direction::ClientToServer;
    let request = f.record(frame)?;
    let prompt = f.timeline[..f.timeline.partition_point(|r| r.frame < frame)]
        .iter()
        .rev()
        .find(|r| r.dir != client && r.len > 0)?;
    let turnaround = f.on_clock_of(client, request) - f.on_clock_of(client, prompt);
    Some(turnaround >= -f.shift_error_ns(client) && turnaround <= threshold_of(rtt))
}

/// Whether the client's data in `frame` left the moment the server's
/// previous data reached the client: an answer to it, not a request of
/// its own making.
fn replied_at_once(f: &Facts<'_>, frame: u64) -> bool {
    let Some(request) = f.record(frame) else {
        return false;
    };
    let client = Direction::ClientToServer;
    let Some(prompt) = f.timeline[..f.timeline.partition_point(|r| r.frame < frame)]
        .iter()
        .rev()
        .find(|r| r.dir != client && r.len > 0)
    else {
        return false;
    };
    f.released_by(
        client,
        f.on_clock_of(client, request),
        f.on_clock_of(client, prompt),
    )
}

/// The exchanges whose response left at least `threshold` after its
/// request arrived, on the server's clock, and was the server's to send
/// (not held by Nagle, not after the client closed, not an answer to a
/// request the capture missed): `(number, request frame, response frame,
/// delay)`. With `less_upstream`, a proxy's wait for its upstream
/// (upstream_wait.rs) is not its own.
fn slow_exchanges(f: &Facts<'_>, threshold: i64, less_upstream: bool) -> Vec<ServerTurn> {
    let mut slow = exchange_turns(f, threshold, less_upstream);
    slow.retain(|s| s.3 >= threshold);
    slow
}

/// A server's turn: `(exchange number, request frame, response frame,
/// the server's time in ns)`; the greeting is exchange 0.
pub(crate) type ServerTurn = (usize, u64, u64, i64);

/// The server's turn on each exchange that the rules above leave the
/// server's own work, whatever its length ([`Facts::server_turns`] keeps
/// them for the connection's threshold, upstream calls taken off):
/// server_think_time reports those of at least `threshold`; shorter ones
/// are the server's normal turnaround (host_turnarounds.rs).
pub(super) fn exchange_turns(
    f: &Facts<'_>,
    threshold: i64,
    less_upstream: bool,
) -> Vec<ServerTurn> {
    let answers = f
        .exchanges
        .iter()
        .filter_map(|x| x.response_seen.or(x.response_first))
        .map(|first| first.frame)
        .collect();
    let held = held_segments(f, answers);
    // A capture of data segments alone: the client's pure ACKs, which
    // release what Nagle holds, are not in it.
    let client_acks_unseen = !f.acks_captured(Direction::ClientToServer);
    let mut unacked: Option<Unacked> = None;
    let mut slow: Vec<ServerTurn> = Vec::new();
    let on_server = |frame: u64| {
        f.record(frame)
            .map(|r| f.on_clock_of(Direction::ServerToClient, r))
    };
    // The client's bytes the capture has shown so far (highest end), for
    // each response in turn: one walk of the timeline for all of them.
    let mut client_sent = ClientSent {
        upto: 0,
        end: None,
        check: f.report.client_to_server.acked_unseen > 0,
    };
    for (i, x) in f.exchanges.iter().enumerate() {
        // The answer's first capture: past a loss, its later segments may
        // have arrived before the re-send that delivered its first byte,
        // and the server had answered when they left.
        let Some(first) = x.response_seen.or(x.response_first) else {
            continue;
        };
        // The answer began in segments the capture missed: when the
        // server sent it is unknown.
        if x.response_in_hole {
            continue;
        }
        // The server acknowledged client bytes the capture never showed:
        // what it answers is a request the capture missed (capture loss,
        // a collage of samples), not this one.
        if client_sent.acks_unseen(f, first.frame) {
            continue;
        }
        // The request reached the server with its last transmission: a
        // retransmitted segment (a lost one, SYN data a server ignored)
        // arrives a timeout or a round trip after the original.
        // (The timeline is in frame order: look only between the two.)
        // A copy is a re-send; and a request sent as 0-RTT early data is
        // answered no sooner than the client's Finished (what a server
        // holds it for). Other client data, an HTTP/2 SETTINGS
        // acknowledgment, is no part of the request.
        // (Past the detectors' segment timeline, an upload's repairs:
        // the exchange keeps the last re-send of the client's bytes the
        // server had not acknowledged.)
        let span = f.between(x.request_first.frame, first.frame);
        let handshake_end = f.tls_end_frame.unwrap_or(0);
        // (Not a needless re-send, whose original the server had: the
        // client's timer fired while the server's delayed ACK of it was
        // on its way, teams.pcap's 22, a D-SACK of the copy and an ACK
        // echoing the original's timestamp; retransmission.rs's test, by
        // the server's acknowledgments: a server's host can drop what its
        // capture saw, a full accept queue.)
        // (Not where only a duplicate ACK the copy drew shows the
        // original arrived: when is not known, a path that held it.)
        let needless = |r: &SegmentRecord| {
            super::retransmission::arrival_proof(f, r)
                .is_some_and(|p| !matches!(p, ArrivalProof::SecondCopyAcknowledged { .. }))
        };
        let resent = x
            .request_resent
            .filter(|r| r.frame > x.request_last.frame && r.frame < first.frame);
        let mut skipped_needless = resent.is_some_and(|r| f.record(r.frame).is_some_and(needless));
        let last_request = resent
            .filter(|_| !skipped_needless)
            .unwrap_or(x.request_last);
        let last_copy = span
            .iter()
            .filter(|r| r.dir == Direction::ClientToServer && r.len > 0)
            .filter(|r| {
                let skip = r.retransmission && needless(r);
                skipped_needless |= skip;
                (r.retransmission && !skip) || r.frame <= x.request_last.frame.max(handshake_end)
            })
            .map(|r| r.frame)
            .max()
            .unwrap_or(last_request.frame)
            .max(last_request.frame);
        // The answer's ACK says what the server had of the client's bytes
        // when it left: a request whose last copy it does not acknowledge
        // reached the server after the answer left. Either the answer was
        // to something before it (a second request written behind the
        // first, taken as one turn: whether what it does acknowledge asked
        // anything is not known; an answer acknowledging none of it
        // answers something else), or the path held the client's bytes
        // longer than the round trip says, and when any of them arrived is
        // unknown: the turn is not timed.
        let request = f.record(last_copy);
        if f.record(first.frame)
            .filter(|answer| answer.ack_set)
            .zip(request)
            .is_some_and(|(answer, request)| seq::lt(answer.ack, request.end))
        {
            continue;
        }
        // Past the detectors' segment timeline (long connections) the
        // exchange's own stamps serve: the request is the client's, the
        // response the server's.
        let tq = on_server(last_copy).unwrap_or(last_request.ts_ns + f.server_side_ns);
        // A queue on the client's uplink held the request that much longer
        // than the round trip places its arrival (uplink.rs: its siblings'
        // echoes on the server's clock; PcapPlusPlus's example.pcap 13,
        // requests queued 80-130 ms behind a browser's other requests and
        // ACKs on a slow uplink).
        // Or, by the servers' ACKs of the client's bursts, the link's rate
        // and what the client sent ahead of it (uplink_load.rs in
        // rttdoc-analyze: PcapPlusPlus's many-protocols.pcap 16, a
        // request 18 ms behind 3 KB of another connection's on a 0.76
        // Mbit/s uplink, no timestamps to read).
        let tq = tq
            + f.record(last_copy).map_or(0, |r| {
                f.uplink_queue_ns(r.ts_ns).max(f.uplink_wait_ns(r.frame))
            });
        // The server had the request when it first acknowledged its end
        // (its own packet, on its own clock): however the round trip
        // places the last copy, the request had arrived by then (a copy
        // the client's timer sent again after the original had arrived).
        // Not an ACK that would have left before the request's first copy
        // could arrive: something nearer the client acknowledged it (a
        // NAT engine's own TCP, VirtualBox's slirp), not the server.
        let first_copy = on_server(x.request_last.frame)
            .unwrap_or(x.request_last.ts_ns + f.server_side_ns)
            .saturating_sub(f.jitter_ns);
        let tq_copy = tq;
        let first_ack_record = request.and_then(|request| {
            span.iter()
                .find(|s| {
                    s.dir == Direction::ServerToClient && s.ack_set && seq::le(request.end, s.ack)
                })
                .filter(|acked| acked.ts_ns >= first_copy)
        });
        // (Less what held that ACK on the path, by the server's clock, but
        // never before the request can have arrived.)
        let first_ack = first_ack_record
            .map(|acked| (acked.ts_ns - f.held_after_sending_ns(acked)).max(first_copy));
        let tq = first_ack.map_or(tq, |acked| tq.min(acked));
        // A needless re-send proves the original arrived, not when: its
        // ACK (the answer's own, when none came before it) leaving later
        // after the round trip's placement of it than any delayed-ACK
        // timer waits says the path held it (a phone's uplink:
        // KakaoTalk_talk's 5 and 7, the answers 1.3 s on, echoing the
        // originals' timestamps), and the ACK left on its arrival.
        let acked_at = first_ack.or_else(|| {
            let answer = f.record(first.frame)?;
            let covers = request.is_some_and(|q| answer.ack_set && seq::le(q.end, answer.ack));
            covers.then(|| answer.ts_ns - f.held_after_sending_ns(answer))
        });
        // Without a re-send too: a server's TCP acknowledges a whole
        // request within its delayed-ACK timer, so a pure ACK of it that
        // left later than that after the round trip's placement of its
        // arrival says the request arrived later, when within the timer
        // is not known: the server's time is at least what followed that
        // ACK (nDPI's KakaoTalk_talk 5: pure ACKs 339 and 534 ms beyond
        // the round trip, each followed by the answer within 5 ms: the
        // phone's uplink held the requests; nDPI's MacOS capture.pcap 3,
        // an ACK 580 ms beyond it, the answer 0.3 ms after it on the
        // server's clock, the request's last segment reported twice).
        // (Later by more than half a round trip too: the placement is the
        // round trip's, which varies; tcpflow's bug8.pcap 3, an ACK 202 ms
        // beyond it on a 114 ms path, is a BSD's 200 ms timer.)
        let first_ack_pure = first_ack_record.is_some_and(super::pure_ack);
        let beyond_timer =
            |acked: i64, margin: i64| acked - tq > super::DELAYED_ACK_MAX_NS + margin;
        let placement_error = f.rtt_ns.unwrap_or(0) / 2;
        // Nor where that pure ACK came with the answer in the release of
        // a proven stall of the client's path (path_stall.rs): the path
        // held both, and when either left is not known (nDPI's alexa-app
        // 24 and 25: after 148 ms of silence from every server, the ACK
        // of the request 1 ms before the answer): only what followed the
        // ACK is certain, the rest of the wait the stall's.
        let stall_of = |ts_ns: i64| f.path_stall_at(ts_ns).map(|s| s.to_frame);
        let released_together = first_ack_pure
            && first_ack_record.is_some_and(|a| {
                stall_of(a.ts_ns).is_some_and(|stall| stall_of(first.ts_ns) == Some(stall))
            });
        let tq = match acked_at {
            Some(acked)
                if (skipped_needless && beyond_timer(acked, 0))
                    || (first_ack_pure && beyond_timer(acked, placement_error))
                    || released_together =>
            {
                acked.max(tq)
            }
            _ => tq,
        };
        // Held only if the server still had data in flight when the
        // request arrived (what Nagle waits on), and the response left
        // with the ACK for it.
        let released_by_ack = held.binary_search(&first.frame).is_ok();
        let held = released_by_ack && unacked.get_or_insert_with(|| Unacked::new(f)).at(tq);
        // Held behind data the server sent after the request arrived (a
        // TLS 1.3 server's session tickets, written as the handshake
        // completes): the response was written no earlier than that data
        // left, and waited from then for the ACK that released it, which
        // is Nagle's (nagle.rs cites that wait); the server's own time
        // ends where that data left.
        // Where the capture holds no pure ACK of the client's, the ACK
        // that released the answer cannot be seen: server data sent
        // after the request arrived and before the answer, which no
        // captured segment of the client's acknowledged before it, may
        // have held it so (nDPI's dnscrypt-v2-doh.pcap 12, judged wrong in
        // session 88: a DNS-over-HTTPS answer queued behind the server's
        // second TLS 1.3 ticket, 61.5 ms after the first, a delayed ACK
        // and a round trip, had read as 62 ms of the server's time): the
        // server's own time is known to end only where that data left.
        // (The server's first data after the request, looked for only
        // where one of the two rules may use it.)
        let sent_since = (client_acks_unseen || released_by_ack)
            .then(|| {
                span.iter().find(|r| {
                    r.dir == Direction::ServerToClient && r.len > 0 && r.frame > last_copy
                })
            })
            .flatten();
        let unseen_release = client_acks_unseen
            && sent_since.is_some_and(|d| {
                // (Sent once the request had arrived: its ACK covers
                // it. A TLS 1.2 server's Finished sent before a False
                // Started request came is no such data.)
                let after_request = request.is_some_and(|q| d.ack_set && seq::le(q.end, d.ack));
                // (And the answer left as an ACK of that data could have
                // released it: about a round trip after it (an ACK sent
                // at once), or a delayed-ACK timer and a round trip or
                // later. Between the two no ACK came, and the answer was
                // the server's own: tls2.pcap 63, an answer 29 ms after
                // the Finished on an 11 ms path, judged the server's.)
                let gap = first.ts_ns - d.ts_ns;
                let releasable = f.rtt_ns.is_some_and(|rtt| {
                    let slack = (rtt / 4).max(2_000_000);
                    (gap - rtt).abs() <= slack
                        || gap + slack >= super::DELAYED_ACK_EARLIEST_NS + rtt
                });
                d.frame < first.frame
                    && after_request
                    && releasable
                    && !span.iter().any(|c| {
                        c.dir == Direction::ClientToServer
                            && c.frame > d.frame
                            && c.frame < first.frame
                            && c.ack_set
                            && seq::lt(d.seq, c.ack)
                    })
            });
        let ta = if (released_by_ack && !held) || unseen_release {
            sent_since.map_or(first.ts_ns, |r| r.ts_ns)
        } else {
            first.ts_ns
        };
        // A queue on the path (the client's parallel connections filling
        // it) delays the answer as much as the server would.
        // So does the path holding the answer after it left, as the
        // server's own clock shows (sender_clock.rs): a client's radio
        // asleep after an idle spell, a downlink's buffer.
        let answer = f.record(first.frame);
        let held_after = answer
            .filter(|_| ta == first.ts_ns)
            .map_or(0, |r| f.held_after_sending_ns(r));
        // (And no more than that clock allows.)
        let queued = f.answer_queue_ns(first.ts_ns).max(f.queued_behind_ns(x));
        let queue = answer
            .map_or(queued, |r| f.held_within_clock(r, queued))
            .max(held_after);
        let mut think = ta - tq - queue;
        // Every segment carries what its sender had received when it left:
        // a server segment whose ACK stops short of the request's end left
        // before the request had all arrived, however long the path took
        // to bring it (a client's uplink queued behind its own re-sends:
        // nDPI's reddit 32, the server's duplicate ACK 100 ms after the
        // request left, its answer 10 ms after that on its own clock). The
        // server's time began after the last such segment left (both its
        // own packets, less what held each on the path).
        let not_yet = request
            .filter(|_| !f.captured_at(Direction::ServerToClient))
            .and_then(|request| {
                span.iter()
                    .rev()
                    .filter(|s| s.frame < first.frame)
                    .find(|s| {
                        s.dir == Direction::ServerToClient
                            && s.ack_set
                            && seq::lt(s.ack, request.end)
                    })
            });
        let not_yet_left = not_yet.map(|s| s.ts_ns - f.held_after_sending_ns(s));
        // The request's last few bytes (an eighth of a full segment at
        // most: no link takes long to carry them) sent right behind the
        // segment that ACK acknowledged (captured within a millisecond of
        // it): a path that keeps order brought them right after it, so
        // they arrived as that ACK left, not later, whatever the path's
        // jitter (nDPI's KakaoTalk_chat 13, a 30-byte tail 0.12 ms behind
        // the segment the server acknowledged on time, acknowledged alone
        // 39 ms later by a delayed-ACK timer). A full segment's worth
        // behind may take a slow uplink tens of milliseconds to carry
        // (PcapPlusPlus's one_tcp_stream.pcap: the server's ACKs of five
        // segments sent at once 30 ms apart).
        // (How far behind it they were captured.)
        let tail_bytes = f.mss(Direction::ClientToServer) / 8;
        let pinned = not_yet
            .zip(request)
            .filter(|(s, request)| seq::diff(request.end, s.ack) <= i64::from(tail_bytes))
            .and_then(|(s, request)| {
                span.iter()
                    .filter(|c| c.dir == Direction::ClientToServer && c.len > 0 && c.end == s.ack)
                    .map(|c| request.ts_ns - c.ts_ns)
                    .find(|gap| (0..=PINNED_NS).contains(gap))
            });
        if let Some(left) = not_yet_left {
            think = think.min(ta - held_after - left);
        }
        // The server's kernel acknowledged the whole request before it
        // answered, sooner after the request's arrival (as far as the
        // round trip places it) than a delayed-ACK timer fires: that ACK
        // left on arrival, however much the path's round trip had grown
        // since the handshake timed it, and the server's time began no
        // earlier (both its own packets).
        // (The arrival placed no earlier than the last segment short of
        // the request: netflix.pcap's 37, the request's last bytes came
        // with a re-send the capture missed, acknowledged 14 ms after the
        // server's ACK short of them and 13 ms before its answer, where
        // the round trip placed the request 27 ms before the answer.)
        // (Pinned right behind what that ACK acknowledged, the arrival is
        // that ACK's leaving and the tail's lag: shown, not placed.)
        let arrival = match (not_yet_left, pinned) {
            (Some(left), Some(gap)) => left + gap,
            _ => not_yet_left.map_or(tq, |left| tq.max(left)),
        };
        let mut acked_first = None;
        if let Some((k, _)) = f.acked_on_arrival_at(
            Direction::ServerToClient,
            last_copy,
            first.frame,
            (arrival, pinned.is_some()),
        ) {
            if ta - held_after - k < think {
                acked_first = Some(k);
            }
            think = think.min(ta - held_after - k);
        }
        // And the answer left no later after the server's pure ACK of the
        // request than the server's own clock allows, where its rate is
        // known: their ticks apart, plus one, whatever the capture shows
        // between them. (Not assumed where it is not: tcpflow's bug8.pcap
        // 3, a BSD server stamping at 2 Hz, its delayed ACK and its
        // answer 68 ms later in one tick; nDPI's KakaoTalk_talk.pcap 2,
        // judged in session 86 as the path's 39.9 ms, two segments of
        // one tick and no other to read the clock by.)
        // (Only a turn long enough to be slow asks for the clock: finding
        // it costs a pass over the server's segments.)
        let slow_enough = think >= threshold;
        if let (Some(ack), Some(r), true) = (
            first_ack_record.filter(|a| super::pure_ack(a)),
            answer,
            slow_enough,
        ) {
            if let Some(apart) = f.sent_apart_at_most_ns(ack, r) {
                let ack_left = acked_first.or(first_ack).unwrap_or(tq);
                think = think.min((ack_left - tq).max(0) + apart);
            }
        }
        if less_upstream {
            // (At the proxy: its clock is the capture's.)
            think -= super::upstream_wait::upstream_ns(x, tq, ta, threshold);
        }
        // A connection the server opened back to the client meanwhile
        // (FTP's active data connection) is that connection's handshake
        // (connect_back.rs), not the server's work.
        if let Some(back) = x.connect_back.as_deref() {
            think -= super::connect_back::connect_back_ns(f, back, tq, ta);
        }
        if asks_nothing(f, x, first, threshold) {
            continue;
        }
        if !held
            && !client_closed_before(f, span)
            && !server_ticks(f)
                .is_some_and(|t| t.answers_on_timer(x.request_first.ts_ns, first.ts_ns))
        {
            // Timed from the server's ACK of the request, the wait began
            // with the copy that ACK answers (the first: a later one the
            // client's timer sent was not waited on), not the last.
            // (Only an ACK before the last copy can have arrived,
            // as the round trip places it, answered an earlier one.)
            let before_last = tq_copy - f.jitter_ns;
            let from = if tq < before_last || acked_first.is_some_and(|k| k < before_last) {
                x.request_last.frame.min(last_copy)
            } else {
                last_copy
            };
            slow.push((i + 1, from, first.frame, think));
        }
    }
    slow
}

/// The request of exchange `n` (1-based; 0, the greeting, has none), when
/// it was read.
pub(crate) fn label_of(exchanges: &[Exchange], n: usize) -> Option<String> {
    exchanges.get(n.checked_sub(1)?)?.label.clone()
}

/// Nobody waits for an answer after closing: server data after the
/// client's FIN or RST (captured before it, in `span`, the records from
/// the request to the answer) is the server's own message, not a
/// response; unless the FIN only shut down the client's write side and
/// it went on reading ([`Facts::reads_after_fin`]).
fn client_closed_before(f: &Facts<'_>, span: &[SegmentRecord]) -> bool {
    let mut fin = false;
    for r in span.iter().filter(|r| r.dir == Direction::ClientToServer) {
        if r.flags.rst() {
            return true;
        }
        fin |= r.flags.fin();
    }
    fin && !f.reads_after_fin(Direction::ClientToServer)
}

/// The exchanges whose client closed (its FIN or RST) before the answer
/// came: nobody waited for it, and the ledger counts its wait as idle, as
/// this detector names no cause for it.
pub fn abandoned_exchanges(f: &Facts<'_>) -> Vec<usize> {
    f.exchanges
        .iter()
        .enumerate()
        .filter(|(_, x)| {
            x.response_first
                .is_some_and(|a| client_closed_before(f, f.between(x.request_first.frame, a.frame)))
        })
        .map(|(i, _)| i + 1)
        .collect()
}

/// A client's FIN this long after its last write, that write still
/// unacknowledged, is its giving up on it (an application's or a
/// person's timeout), where no re-send of the write came before it; a
/// sooner close may be the application's plan (alexa-app.pcapng 108: a
/// FIN 355 ms after a request, its answer refused with an RST).
pub const GAVE_UP_AFTER_NS: i64 = 1_000_000_000;

/// Of the `abandoned` exchanges ([`abandoned_exchanges`]), those whose client gave
/// up on a request that never got through: its FIN or RST came while the
/// server had not acknowledged all of the request, after its timer had
/// re-sent some of it or [`GAVE_UP_AFTER_NS`] after its last segment. The client had waited for an answer its request could not
/// yet draw (its re-sends unanswered) and let go: the wait until then
/// was its (nDPI's skype.pcap 54: a 28-byte write lost and re-sent for
/// 6.4 s, the FIN 7 s after the request, the answer 6 s after that), not
/// an answer nobody waited for. Each with that FIN or RST.
pub fn given_up_exchanges(f: &Facts<'_>, abandoned: &[usize]) -> Vec<(usize, Stamp)> {
    let client = Direction::ClientToServer;
    abandoned
        .iter()
        .filter_map(|&n| {
            let x = f.exchanges.get(n - 1)?;
            let answer = x.response_first?;
            let request_end = f.record(x.request_last.frame)?.end;
            let span = f.between(x.request_first.frame, answer.frame);
            let (mut acked, mut resent) = (false, false);
            for r in span {
                if r.dir != client {
                    acked |= r.ack_set && seq::le(request_end, r.ack);
                    continue;
                }
                resent |= r.retransmission && r.len > 0;
                if r.flags.fin() || r.flags.rst() {
                    let waited = resent || r.ts_ns - x.request_last.ts_ns >= GAVE_UP_AFTER_NS;
                    let stop = Stamp {
                        frame: r.frame,
                        ts_ns: r.ts_ns,
                    };
                    return (!acked && waited).then_some((n, stop));
                }
            }
            None
        })
        .collect()
}

/// Whether exchange `x`'s "request" (answered at `first`) asked nothing:
/// the client's reaction to the server's data the moment it came, after
/// which what the server sent came at its own pace.
fn asks_nothing(f: &Facts<'_>, x: &Exchange, first: Stamp, threshold: i64) -> bool {
    let at_once = || replied_at_once(f, x.request_first.frame);
    // On HTTP/2, a client record the size of a WINDOW_UPDATE or PING
    // that left the moment the server's data came (flow control for
    // an answer under way, a ping's answer) asks nothing: what the
    // server sends next continues or answers something else.
    if x.h2_control_sized && at_once() {
        return true;
    }
    // A server closing an idle connection: the client's message was a
    // reaction to the server's data the moment it came (a protocol's
    // acknowledgment, HTTP/2's SETTINGS ACK or WINDOW_UPDATE, not a
    // request) and what the server sent next, after a silence as long as
    // an idle timer's (a second at least), came with its close (a
    // GOAWAY, then close_notify and FIN): its idle timer's, nobody's
    // answer. A shorter wait is an answer's, closed after it: a mail
    // client's QUIT sent the moment the last reply came, answered and
    // closed (Exim holds that answer 200 ms), HTTP/1.1's last request on a
    // connection the server then closes.
    let one_segment = f.mss(Direction::ClientToServer) as u64;
    if x.request_bytes <= one_segment
        && silent_for_a_timer(f, x, first)
        && at_once()
        && server_closes_after(f, first.frame, threshold)
    {
        return true;
    }
    // A reply to a message the server sent on its own (a ping, a push)
    // asks nothing: what the server sends next is its own next message.
    replies_to_the_server(f, x) || acknowledges(f, x) || answered_elsewhere(f, x)
}

/// How soon after the client's lone request on another connection a
/// server's message follows it, at most, to be that request's (a push
/// relayed to this connection).
const PROMPTED_WITHIN_NS: i64 = 1_000_000_000;

/// How many of a connection's answers must follow the client's lone
/// requests elsewhere for the connection to be read as a push channel:
/// once may be chance.
const PROMPTED_ANSWERS: usize = 2;

/// Whether exchange `x`'s answer followed, within [`PROMPTED_WITHIN_NS`]
/// (and within a third of the client's quiet before it), the client's
/// lone request on another connection in the wait
/// (`Exchange::asked_elsewhere`: the client asked nothing for a second
/// or more before it).
fn prompted_elsewhere(x: &Exchange) -> bool {
    let (Some(asked), Some(answer)) = (&x.asked_elsewhere, x.response_first) else {
        return false;
    };
    let quiet = asked.request.ts_ns - x.request_last.ts_ns;
    let after = answer.ts_ns - asked.request.ts_ns;
    (0..=PROMPTED_WITHIN_NS).contains(&after) && after.saturating_mul(3) <= quiet
}

/// Whether exchange `x`'s answer came on what the client asked elsewhere,
/// on a connection where that was so at least [`PROMPTED_ANSWERS`] times
/// (a push channel: nDPI's KakaoTalk_chat.pcap 15, each push 0.1 to
/// 0.6 s after the user's chat message on the chat server's connection,
/// seconds after the client's acknowledgment of the last push, judged as
/// 23 s of server think time): the server sent it when the other
/// connection's request reached its service, and the time before that
/// request was the client's (a person's), not the server's.
fn answered_elsewhere(f: &Facts<'_>, x: &Exchange) -> bool {
    prompted_elsewhere(x)
        && *f
            .prompted_elsewhere_view
            .get_or_init(|| f.exchanges.iter().filter(|x| prompted_elsewhere(x)).count())
            >= PROMPTED_ANSWERS
}

/// Whether exchange `x`'s "request" is only the client's acknowledgments
/// on a connection whose two sides acknowledge each other's messages
/// ([`acknowledgment_size`]), each of server data that came before it
/// (pushes the client acknowledged as they came, none an answer): it
/// asks nothing.
fn acknowledges(f: &Facts<'_>, x: &Exchange) -> bool {
    let Some(size) = *f.acknowledgment_view.get_or_init(|| acknowledgment_size(f)) else {
        return false;
    };
    // (By segment: inside TLS the exchange counts the records' contents.)
    let mut client = f
        .between(x.request_first.frame, x.request_last.frame + 1)
        .iter()
        .filter(|r| r.dir == Direction::ClientToServer && r.len > 0)
        .peekable();
    // (Once the connection showed its acknowledgments, one of their size
    // right after the server's data of another is one, however slow.)
    client.peek().is_some() && client.all(|r| r.len == size && after_other_data(f, r, size))
}

/// Whether the data segment just before `r` (with no data between) is
/// the other side's, of a size other than `size`.
fn after_other_data(f: &Facts<'_>, r: &SegmentRecord, size: u32) -> bool {
    let before = &f.timeline[..f.timeline.partition_point(|q| q.frame < r.frame)];
    before
        .iter()
        .rev()
        .find(|q| q.len > 0)
        .is_some_and(|p| p.dir != r.dir && p.len != size)
}

/// How many of each side's acknowledgments make the pattern.
const ACKNOWLEDGMENTS: u16 = 3;

/// The size of the small message (at most [`SMALL_MESSAGE_BYTES`]) that
/// each side sends the moment the other's data arrives, each at least
/// three times, in reaction to messages of other sizes: an application's
/// own acknowledgments, both ways (Zoom's control channel: a 50-byte
/// record after every record of the other side's, nDPI's zoom2.pcap).
/// Neither side's acknowledgment asks anything, and what the other sends
/// after it comes at its own pace: read as turns, each push after the
/// client's acknowledgment of the last was its "answer" (15 s of
/// `server_think_time`). Not a request-and-answer loop's: a client's
/// small requests and a server's small answers have sizes of their own,
/// and an echo's (the same size back) answers the same size, not others.
fn acknowledgment_size(f: &Facts<'_>) -> Option<u32> {
    let mut counts = [[0u16; 2]; SMALL_MESSAGE_BYTES as usize + 1];
    for d in [Direction::ClientToServer, Direction::ServerToClient] {
        let data = |dir: Direction| f.timeline.iter().filter(move |r| r.dir == dir && r.len > 0);
        let mut arrivals = data(d.reverse()).peekable();
        // The other side's latest data to arrive, and this side's latest
        // departure, on this side's clock.
        let mut latest: Option<&SegmentRecord> = None;
        let mut last_sent = i64::MIN;
        let slack = f.shift_error_ns(d);
        for r in data(d) {
            let left = f.on_clock_of(d, r);
            while let Some(q) = arrivals.next_if(|q| f.on_clock_of(d, q) <= left + slack) {
                latest = Some(q);
            }
            if let Some(p) = latest.filter(|p| f.on_clock_of(d, p) >= last_sent) {
                if r.len as u64 <= SMALL_MESSAGE_BYTES && p.len != r.len && reacted(f, p, r) {
                    let n = &mut counts[r.len as usize][d.index()];
                    *n = n.saturating_add(1);
                }
            }
            last_sent = left;
        }
    }
    let both_ways = (1..counts.len())
        .filter(|&len| counts[len].iter().all(|&n| n >= ACKNOWLEDGMENTS))
        .max_by_key(|&len| counts[len][0].min(counts[len][1]))
        .map(|len| len as u32);
    // The client's alone, where the server was seen sending on its own
    // (what the client acknowledges are its pushes). Not where the client
    // offered HTTP/2: its WINDOW_UPDATEs and PING acknowledgments are of
    // one size, and the server's data that crosses them answers its
    // earlier requests, streams multiplexed (PcapPlusPlus's tls2.pcap 16
    // and 84, Google's and Bing's answers 36-52 ms after their requests).
    let client = Direction::ClientToServer.index();
    let h2 = f
        .report
        .tls
        .as_ref()
        .is_some_and(|t| rttdoc_wire::tls::offers_h2(&t.alpn));
    both_ways.or_else(|| {
        if h2 {
            return None;
        }
        (1..counts.len())
            .filter(|&len| counts[len][client] >= ACKNOWLEDGMENTS)
            .max_by_key(|&len| counts[len][client])
            .map(|len| len as u32)
            .filter(|&size| pushed_across(f, size))
    })
}

/// Whether the server began a message of its own while one of the
/// client's acknowledgments (`size` bytes) was on its way to it: its data
/// did not acknowledge that message (it had not arrived), and came after
/// a pause in the server's data of at least the think-time threshold
/// (not the rest of what the client acknowledged). A server that answers
/// never does that: its answers wait for what they answer. One that
/// pushes (a chat's, a game's notifications, each acknowledged by the
/// client's application the moment it came: nDPI's nintendo.pcap) sends
/// when it has news, whatever the client's last message.
fn pushed_across(f: &Facts<'_>, size: u32) -> bool {
    let Some(rtt) = f.rtt_ns else {
        return false;
    };
    let pause = threshold_of(rtt);
    let mut in_flight: Option<&SegmentRecord> = None;
    let mut server_last: Option<&SegmentRecord> = None;
    for r in f.timeline.iter().filter(|r| r.len > 0) {
        match r.dir {
            Direction::ClientToServer => {
                in_flight = (r.len == size && !r.retransmission).then_some(r);
            }
            Direction::ServerToClient => {
                let crossed = in_flight.is_some_and(|c| {
                    r.ack_set
                        && seq::lt(r.ack, c.end)
                        && server_last
                            .is_some_and(|p| p.frame < c.frame && r.ts_ns - p.ts_ns >= pause)
                });
                if crossed {
                    return true;
                }
                server_last = Some(r);
            }
        }
    }
    false
}

/// Whether `r` left, on its sender's clock, within the threshold of
/// client_think_time and server_think_time after `p` (the other side's)
/// arrived.
fn reacted(f: &Facts<'_>, p: &SegmentRecord, r: &SegmentRecord) -> bool {
    let Some(rtt) = f.rtt_ns else {
        return false;
    };
    let turnaround = f.on_clock_of(r.dir, r) - f.on_clock_of(r.dir, p);
    turnaround >= -f.shift_error_ns(r.dir) && turnaround <= threshold_of(rtt)
}

/// At most this many bytes is a small message: a ping, a pong, a
/// protocol's acknowledgment, with a TLS record's overhead.
const SMALL_MESSAGE_BYTES: u64 = 128;

/// Whether exchange `x`'s "request" is the client's reply to a message
/// the server repeats on its own: a small client message that left the
/// moment the server's data arrived, when that data was a small message
/// the server began after its own earlier data and a silence of a second
/// or more (nothing the client asked was pending), and the "answer" is a
/// message of the same size again (a WebSocket or application ping, sent
/// when the server's timer says). The reply asks nothing, and the next
/// ping comes at the server's pace. Not when the client spoke last before
/// the silence (the server's message answers it, however late, and the
/// client's next message may be a request), nor when the answer differs
/// (a notification, then the data the client fetched: an answer).
fn replies_to_the_server(f: &Facts<'_>, x: &Exchange) -> bool {
    if x.request_bytes > SMALL_MESSAGE_BYTES || !replied_at_once(f, x.request_first.frame) {
        return false;
    }
    let Some(answer) = x.response_first.and_then(|a| f.record(a.frame)) else {
        return false;
    };
    let before = &f.timeline[..f
        .timeline
        .partition_point(|r| r.frame < x.request_first.frame)];
    let server = Direction::ServerToClient;
    let Some(mut first) = before.iter().rposition(|r| r.dir == server && r.len > 0) else {
        return false;
    };
    // Back over the server's message (its data with no client data and no
    // silence between), while it stays small, to what came before it.
    let mut message = before[first].len as u64;
    loop {
        if message > SMALL_MESSAGE_BYTES {
            return false;
        }
        let Some(p) = before[..first].iter().rposition(|r| r.len > 0) else {
            // The capture's start: what came before is unknown.
            return false;
        };
        let previous = &before[p];
        if previous.dir != server {
            // The client spoke last: the server's message answers it.
            return false;
        }
        if before[first].ts_ns - previous.ts_ns >= TIMER_MIN_NS {
            return answer.len as u64 == message;
        }
        message += previous.len as u64;
        first = p;
    }
}

/// Whether the server's data `first` began at least [`TIMER_MIN_NS`]
/// after exchange `x`'s request reached it (on the server's clock): a
/// silence as long as a timer's.
fn silent_for_a_timer(f: &Facts<'_>, x: &Exchange, first: Stamp) -> bool {
    let server = Direction::ServerToClient;
    let (Some(request), Some(answer)) = (f.record(x.request_last.frame), f.record(first.frame))
    else {
        return false;
    };
    f.on_clock_of(server, answer) - f.on_clock_of(server, request) >= TIMER_MIN_NS
}

/// Whether the server closed with its data in `frame` or right after it:
/// its FIN, RST or TLS alert within `within` of it on the capture clock,
/// before the client sent anything more.
fn server_closes_after(f: &Facts<'_>, frame: u64, within: i64) -> bool {
    let Some(data) = f.record(frame) else {
        return false;
    };
    let server = Direction::ServerToClient;
    if data.flags.intersects(TcpFlags::FIN | TcpFlags::RST) {
        return true;
    }
    let after = f.timeline.partition_point(|r| r.frame <= frame);
    let until = f.timeline[after..]
        .iter()
        .take_while(|r| r.dir == server || (r.len == 0 && !r.flags.intersects(TcpFlags::FIN)))
        .take_while(|r| r.ts_ns - data.ts_ns <= within);
    let mut last = frame;
    for r in until {
        if r.dir == server && r.flags.intersects(TcpFlags::FIN | TcpFlags::RST) {
            return true;
        }
        last = r.frame;
    }
    f.report.tls.as_ref().is_some_and(|t| {
        t.messages.iter().any(|m| {
            m.direction == server && (frame..=last).contains(&m.frame) && m.message.is_alert()
        })
    })
}

/// The exchanges a server's timer paced (module docs): the ledger counts
/// their delays as idle time, not as latency beyond the ideal.
pub fn idle_exchanges(f: &Facts<'_>) -> Vec<usize> {
    let Some(rtt) = f.rtt_ns else {
        return Vec::new();
    };
    // A cheap look first: a delay on the server's clock is at most the
    // capture's from the request to the answer, and a timer needs three
    // of about a second or more.
    let long = f
        .exchanges
        .iter()
        .filter(|x| {
            x.response_first
                .is_some_and(|a| a.ts_ns - x.request_last.ts_ns >= TIMER_MIN_NS * 19 / 20)
        })
        .count();
    if long < 3 {
        return Vec::new();
    }
    // A timer's delay through a proxy is its upstream's, and the same.
    timer_paced(f, &slow_exchanges(f, threshold_of(rtt), false))
}

/// The exchanges whose "request" asked nothing ([`asks_nothing`]: a
/// reply to a message the server sent on its own, HTTP/2 flow control, a
/// reaction to data before the server's idle close) and whose "answer"
/// came at least the threshold later: the ledger counts that time as
/// idle, not latency, as this detector names no cause for it.
pub fn reply_exchanges(f: &Facts<'_>) -> Vec<usize> {
    let Some(rtt) = f.rtt_ns else {
        return Vec::new();
    };
    let threshold = threshold_of(rtt);
    let one_segment = f.mss(Direction::ClientToServer) as u64;
    f.exchanges
        .iter()
        .enumerate()
        .filter(|(_, x)| {
            x.request_bytes <= one_segment.max(SMALL_MESSAGE_BYTES)
                && x.response_first.is_some_and(|a| {
                    a.ts_ns - x.request_last.ts_ns >= threshold && asks_nothing(f, x, a, threshold)
                })
        })
        .map(|(i, _)| i + 1)
        .collect()
}

/// Whether exchange `n`'s "request" was the client's reply to a message
/// the server repeats on its own ([`replies_to_the_server`]: a pong).
pub fn replies_to_a_ping(f: &Facts<'_>, n: usize) -> bool {
    n.checked_sub(1)
        .and_then(|i| f.exchanges.get(i))
        .is_some_and(|x| replies_to_the_server(f, x))
}

/// The longest period a server's timer is taken to have: an hour (a
/// longer one paces nothing a capture shows twice over).
const LONGEST_PERIOD_NS: i64 = 3_600_000_000_000;

/// A server's own timer: which of the messages it began (its first data
/// after a pause of at least the threshold, with all it had sent
/// acknowledged) kept it (module docs).
pub(crate) struct Ticks {
    /// When each tick began, on the server's clock (its own packets).
    at: Vec<i64>,
}

impl Ticks {
    /// When each tick began, in order.
    pub(super) fn at(&self) -> &[i64] {
        &self.at
    }

    /// Whether the server's data at `answered` began a tick of a timer
    /// already running when the question left at `asked` (a tick before
    /// it): a timer that starts with the answer is the answer's pace, not
    /// the reason it came when it did (module docs).
    fn answers_on_timer(&self, asked: i64, answered: i64) -> bool {
        self.at.first().is_some_and(|&t| t < asked) && self.at.binary_search(&answered).is_ok()
    }
}

/// The ticks that follow one another from `seed`, later and earlier, at
/// whole multiples (up to 4) of `period`, within `tolerance`, each
/// measured from the last (the messages between them, answers, leave the
/// chain alone), put in `ticks` when given (in order), and how many of
/// the steps were of one period exactly: what tells the period from its
/// fractions, which chain the same ticks in steps of several.
fn chain(
    starts: &[(i64, bool)],
    seed: usize,
    period: i64,
    tolerance: i64,
    mut ticks: Option<&mut Vec<usize>>,
) -> usize {
    let mut walk = Chain {
        period,
        tolerance,
        ones: 0,
        last: starts[seed].0,
        aside: None,
    };
    for (i, &(t, _)) in starts.iter().enumerate().skip(seed + 1) {
        walk.step(i, t - walk.last, t, ticks.as_deref_mut());
    }
    (walk.last, walk.aside) = (starts[seed].0, None);
    for (i, &(t, _)) in starts.iter().enumerate().take(seed).rev() {
        walk.step(i, walk.last - t, t, ticks.as_deref_mut());
    }
    if let Some(ticks) = ticks {
        ticks.push(seed);
        ticks.sort_unstable();
    }
    walk.ones
}

/// [`chain`]'s walk one way from its seed.
struct Chain {
    period: i64,
    tolerance: i64,
    /// Steps of one period exactly.
    ones: usize,
    /// The last tick (or where the timer paused).
    last: i64,
    /// A message a step of a few periods off by more than the tolerance
    /// but less than a quarter period, kept aside: when the next message
    /// is one period from it, the timer fired late (or early) once and
    /// went on from there (a timer that sleeps a period after each send),
    /// and both are ticks.
    aside: Option<(usize, i64)>,
}

impl Chain {
    /// Message `i` at `t`, `since` the last tick (or to it, walking back).
    #[inline(always)]
    fn step(&mut self, i: usize, since: i64, t: i64, ticks: Option<&mut Vec<usize>>) {
        let period = self.period;
        if let Some((j, at)) = self.aside.take() {
            if ((t - at).abs() - period).abs() <= self.tolerance {
                if let Some(ticks) = ticks {
                    ticks.push(j);
                    ticks.push(i);
                }
                self.ones += 1;
                self.last = t;
                return;
            }
        }
        // (Saturating: a capture's clock can jump by years.)
        let k = since.saturating_add(period / 2) / period;
        let steps = (1..=4).contains(&k);
        let off = if steps {
            (since - k * period).abs()
        } else {
            i64::MAX
        };
        if off <= self.tolerance {
            if let Some(ticks) = ticks {
                ticks.push(i);
            }
            self.ones += usize::from(k == 1);
            self.last = t;
        } else if steps && off < period / 4 {
            self.aside = Some((i, t));
        } else if since > period.saturating_mul(4).saturating_add(self.tolerance) {
            // The timer paused: the next tick is measured from here.
            self.last = t;
        }
    }
}

/// The server's own timer, if its messages keep one ([`find_ticks`]):
/// looked for once per connection, on first use (the ledger's idle turns
/// and the think-time search both ask).
pub(super) fn server_ticks<'f>(f: &'f Facts<'_>) -> Option<&'f Ticks> {
    f.server_ticks_view
        .get_or_init(|| find_ticks(f, threshold_of(f.rtt_ns.unwrap_or(0))))
        .as_ref()
}

/// The server's timer, when its messages keep one (module docs): a chain
/// of messages a whole number of one period apart (within 2% of it or 2
/// ms; answers to requests may fall between them), four steps of it one
/// period exactly, at least a third of all the server's messages (a chain
/// that chance made of many messages at random is a small part of them),
/// two of them with no client data since the server's data before them
/// (the timer's, not a polling client's rhythm) or a client that keeps a
/// rhythm of its own ([`client_on_its_own`]); a message off its step by
/// more than the tolerance but under a quarter period, followed by one a
/// period after it, is a tick the timer went on from. The period is at least
/// three round trips (turn-taking repeats every round trip and the hosts'
/// turnarounds, and a few of its turns may fall a server's message late)
/// and twice the threshold (shorter, a server's steady work looks the
/// same). It is found among the intervals between the first 64 messages
/// and the next three after each, as the one that, chained from its
/// first message both ways, puts the most of them one period apart; then
/// a half, third or quarter of it that chains more of them, in more
/// single steps, is the timer's beat (found at three round trips, the
/// timer is no turn-taking, and its faster beat is its own). Ticks that
/// mostly left the moment a client ACK arrived keep the ACKs' rhythm (a
/// window-limited transfer's flights, Nagle behind delayed ACKs), not a
/// timer's.
/// Message boundaries follow frame order, which only errs toward a
/// prompt.
fn find_ticks(f: &Facts<'_>, threshold: i64) -> Option<Ticks> {
    let server = Direction::ServerToClient;
    let mut starts: Vec<(i64, bool)> = Vec::new();
    // When the client's messages began: new data after server data, or
    // after a pause of the threshold, and not the moment a server packet
    // arrived (a write Nagle held until the server's ACK is part of the
    // message before it).
    let client = Direction::ClientToServer;
    let mut client_starts: Vec<i64> = Vec::new();
    let mut client_last: Option<i64> = None;
    let mut server_last: Option<i64> = None;
    let mut prompted = false;
    let mut acked: Option<u32> = None;
    let mut sent: Option<(u32, i64)> = None;
    // When each of the server's messages began, as the client's are
    // counted: new data after the client's, or after a pause of the
    // threshold (answers or not; `starts` keeps only those after a pause).
    let mut server_messages: Vec<i64> = Vec::new();
    for r in f.timeline {
        if r.dir == server {
            server_last = Some(f.on_clock_of(client, r));
        } else {
            if r.len > 0 && r.new_data {
                let released = server_last.is_some_and(|ta| f.released_by(client, r.ts_ns, ta));
                let begins = !prompted || client_last.is_none_or(|l| r.ts_ns - l >= threshold);
                if begins && !released {
                    client_starts.push(r.ts_ns);
                }
                client_last = Some(r.ts_ns);
                prompted = true;
            }
            if r.ack_set && acked.is_none_or(|a| seq::lt(a, r.ack)) {
                acked = Some(r.ack);
            }
            continue;
        }
        if r.len == 0 || !r.new_data {
            continue;
        }
        if prompted || sent.is_none_or(|(_, last)| r.ts_ns - last >= threshold) {
            server_messages.push(r.ts_ns);
        }
        let idle = sent.is_none_or(|(end, last)| {
            r.ts_ns - last >= threshold && acked.is_some_and(|a| seq::le(end, a))
        });
        if idle {
            starts.push((r.ts_ns, prompted));
        }
        let end = sent.map_or(r.end, |(e, _)| seq::max(e, r.end));
        sent = Some((end, r.ts_ns));
        prompted = false;
    }
    if starts.len() < 5 {
        return None;
    }
    let head = &starts[..starts.len().min(64)];
    // Turn-taking keeps a rhythm of its own: a round trip and the hosts'
    // turnarounds a turn.
    let shortest = (2 * threshold).max(3 * f.rtt_ns.unwrap_or(0));
    let tolerance = |period: i64| (period / 50).max(2_000_000);
    let mut best: Option<(usize, i64, usize)> = None;
    for (i, &(t, _)) in head.iter().enumerate() {
        for &(u, _) in head.iter().skip(i + 1).take(3) {
            let period = u.saturating_sub(t);
            if !(shortest..=LONGEST_PERIOD_NS).contains(&period) {
                continue;
            }
            let ones = chain(head, i, period, tolerance(period), None);
            if best.is_none_or(|(m, _, _)| ones > m) {
                best = Some((ones, period, i));
            }
        }
    }
    let (_, period, seed) = best?;
    let mut ticks = Vec::new();
    let ones = chain(&starts, seed, period, tolerance(period), Some(&mut ticks));
    let unprompted = ticks.iter().filter(|&&i| !starts[i].1).count();
    if ones < 4 || ticks.len() * 3 < starts.len() {
        return None;
    }
    if unprompted < 2 && !client_on_its_own(&starts, &ticks, &client_starts, &server_messages) {
        return None;
    }
    // A timer found at three round trips or more may beat faster (a
    // stream's pieces every two round trips): a fraction of its period
    // that chains more messages from the same seed, in more steps of one
    // (its own) period than the period had, is its beat (tried on the
    // first messages, as the period was found; then chained through all).
    let (head_ones, head_len) = {
        let mut t = Vec::new();
        (
            chain(head, seed, period, tolerance(period), Some(&mut t)),
            t.len(),
        )
    };
    for m in 2..=4 {
        let beat = period / m;
        let mut finer = Vec::new();
        if chain(head, seed, beat, tolerance(beat), Some(&mut finer)) > head_ones
            && finer.len() > head_len
        {
            ticks.clear();
            chain(&starts, seed, beat, tolerance(beat), Some(&mut ticks));
            break;
        }
    }
    let at: Vec<i64> = ticks.iter().map(|&i| starts[i].0).collect();
    (!ack_clocked(f, &at)).then_some(Ticks { at })
}

/// Whether the client, sending before every one of the server's ticks,
/// still keeps a rhythm of its own: over the ticks' span it began a
/// quarter more messages than the server did (all of the server's, ticks
/// or not, counted as the client's are: a server that answered each of
/// a client's queries at once began as many as the client, though only
/// its slow answers came after a pause; Beats' mysql_int_string_operations
/// had read as a timer). A client polling a server that answers each
/// poll begins as many as the server; one that sends on its own timer
/// faster than the server's (netperfmeter's flows: the client every 250
/// ms, the server every 334 ms) gets no answer to most of its messages,
/// and the server's messages, each after one of the client's, keep the
/// server's period.
fn client_on_its_own(
    starts: &[(i64, bool)],
    ticks: &[usize],
    client_starts: &[i64],
    server_messages: &[i64],
) -> bool {
    let (Some(&first), Some(&last)) = (ticks.first(), ticks.last()) else {
        return false;
    };
    let span = starts[first].0..=starts[last].0;
    let server = server_messages.iter().filter(|t| span.contains(t)).count();
    let client = client_starts.iter().filter(|t| span.contains(t)).count();
    4 * client >= 5 * server
}

/// Whether half or more of the ticks at `at` (the server's clock) left
/// the moment a client packet that acknowledged more or opened the window
/// further arrived: the ACKs' rhythm (a window opening flight by flight,
/// a slow reader's window updates, Nagle releasing behind delayed ACKs),
/// however regular, and no timer of the server's.
fn ack_clocked(f: &Facts<'_>, at: &[i64]) -> bool {
    let server = Direction::ServerToClient;
    // The client's packets in capture order reach the server in that order
    // too (one shift for all): merged with the ticks as the sender's view
    // orders them (the peer's a skew earlier), with no view to sort.
    let skew = if f.captured_at(server) {
        0
    } else {
        f.peer_skew()
    };
    let mut client = f
        .timeline
        .iter()
        .filter(|r| r.dir != server && r.ack_set)
        .peekable();
    let (mut acked, mut edge): (Option<u32>, Option<u64>) = (None, None);
    let mut last: Option<i64> = None;
    let mut released = 0usize;
    for &t in at {
        while let Some(r) = client.next_if(|r| f.on_clock_of(server, r) - skew <= t) {
            let more = acked.is_none_or(|a| seq::lt(a, r.ack));
            let wider = f.window_edge(r).filter(|&e| edge.is_none_or(|old| e > old));
            if more {
                acked = Some(r.ack);
            }
            if let Some(e) = wider {
                edge = Some(e);
            }
            if more || wider.is_some() {
                last = Some(f.on_clock_of(server, r));
            }
        }
        if last.is_some_and(|ta| f.released_by(server, t, ta)) {
            released += 1;
        }
    }
    released * 2 >= at.len()
}

/// The exchanges whose "answer" was a message of the server's own timer
/// ([`server_ticks`]) and came at least the threshold after the request
/// began: the ledger counts that time as idle, as this detector names no
/// cause for it, and the "response" (the server's messages until the
/// client spoke again) as no transfer. A greeting that was a tick is
/// exchange 0.
pub fn pushed_exchanges(f: &Facts<'_>) -> Vec<usize> {
    let Some(rtt) = f.rtt_ns else {
        return Vec::new();
    };
    let threshold = threshold_of(rtt);
    // A greeting is exchange 0, from the packet that let the server greet.
    let greeting = f
        .greeting
        .map(|(opened, greeted)| (0, opened.ts_ns, greeted.ts_ns));
    let late = || {
        let turns = f
            .exchanges
            .iter()
            .enumerate()
            .filter_map(|(i, x)| Some((i + 1, x.request_first.ts_ns, x.response_first?.ts_ns)));
        greeting
            .into_iter()
            .chain(turns)
            .filter(move |&(_, asked, answered)| answered - asked >= threshold)
    };
    if late().next().is_none() {
        return Vec::new();
    }
    let Some(ticks) = server_ticks(f) else {
        return Vec::new();
    };
    // A greeting has no question to come before: the server's first
    // message on its timer is the greeting's tick.
    late()
        .filter(|&(n, asked, answered)| {
            if n == 0 {
                ticks.at.binary_search(&answered).is_ok()
            } else {
                ticks.answers_on_timer(asked, answered)
            }
        })
        .map(|(n, _, _)| n)
        .collect()
}

/// Half a round trip is what users feel: on a 5 ms path a 10 ms
/// signature doubles the handshake, on a 120 ms one it is noise.
pub fn threshold_of(rtt: i64) -> i64 {
    (rtt / 2).clamp(FLOOR_NS, ALWAYS_NS)
}

/// Whether the server had sent data not yet acknowledged at `t` (its
/// clock), asked once per answer: each side's packets in the order of
/// their time on the server's clock, with the furthest the server had
/// sent and the client had acknowledged by each (a walk of the timeline
/// per answer made a keep-alive connection's thousands of answers
/// quadratic).
struct Unacked {
    /// The server's data: time on its clock, and the furthest sent by then.
    sent: Vec<(i64, u32)>,
    /// The client's ACKs: time on the server's clock, the furthest by then.
    acked: Vec<(i64, u32)>,
}

impl Unacked {
    fn new(f: &Facts<'_>) -> Unacked {
        let server = Direction::ServerToClient;
        let mut sent: Vec<(i64, u32)> = Vec::new();
        let mut acked: Vec<(i64, u32)> = Vec::new();
        for r in f.timeline {
            let t = f.on_clock_of(server, r);
            if r.dir == server && r.len > 0 {
                sent.push((t, r.end));
            } else if r.dir != server && r.ack_set {
                acked.push((t, r.ack));
            }
        }
        for v in [&mut sent, &mut acked] {
            v.sort_by_key(|&(t, _)| t);
            for i in 1..v.len() {
                v[i].1 = seq::max(v[i - 1].1, v[i].1);
            }
        }
        Unacked { sent, acked }
    }

    fn at(&self, t: i64) -> bool {
        let by = |v: &[(i64, u32)]| {
            let n = v.partition_point(|&(at, _)| at <= t);
            n.checked_sub(1).map(|i| v[i].1)
        };
        match (by(&self.sent), by(&self.acked)) {
            (Some(e), Some(a)) => seq::lt(a, e),
            (Some(_), None) => true,
            _ => false,
        }
    }
}

/// Server segments that left the moment a client ACK arrived for server
/// data still in flight: Nagle or a window held them, not the application
/// (a response queued behind session tickets, for one). Nagle holds only
/// a segment short of a full one; a full one only a window, which less
/// than a full segment in flight does not fill (gRPC's 65 KB answer on
/// loopback a millisecond after the client's ACK of a 13-byte frame:
/// the server's turn, not a hold). Of `answers` only (the frames asked
/// about): a bulk sender's every segment leaves on an ACK's arrival.
fn held_segments(f: &Facts<'_>, mut answers: Vec<u64>) -> Vec<u64> {
    answers.sort_unstable();
    let server = Direction::ServerToClient;
    let mss = f.mss(server);
    let events = f.sender_view(server, u64::MAX, |r| r.len > 0, f.peer_skew());
    let mut sent_end: Option<u32> = None;
    let mut acked: Option<u32> = None;
    // The last ACK that advanced, when it found data still
    // unacknowledged: when, and how much was in flight.
    let mut release: Option<(i64, u32)> = None;
    let mut held = Vec::new();
    for (t, r) in events {
        if r.dir != server {
            if acked.is_none_or(|a| seq::lt(a, r.ack)) {
                let in_flight = match (sent_end, acked) {
                    (Some(e), Some(a)) if seq::lt(a, e) => e.wrapping_sub(a),
                    (Some(_), None) => mss,
                    _ => 0,
                };
                acked = Some(r.ack);
                release = (in_flight > 0).then_some((t, in_flight));
            }
            continue;
        }
        let holdable = |in_flight: u32| r.len < mss || in_flight >= mss;
        if answers.binary_search(&r.frame).is_ok()
            && release.is_some_and(|(ta, in_flight)| {
                holdable(in_flight) && f.released_by(Direction::ServerToClient, t, ta)
            })
        {
            held.push(r.frame);
        }
        sent_end = Some(sent_end.map_or(r.end, |e| seq::max(e, r.end)));
        release = None;
    }
    // (In frame order, for the callers' look-ups.)
    held.sort_unstable();
    held
}
