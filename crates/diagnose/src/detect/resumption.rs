//! TLS session resumption, used or missed, and 0-RTT early data.
//!
//! - `resumption`: the server accepted the session (TLS 1.3: pre_shared_key
//!   in the ServerHello; TLS 1.2 and older: ChangeCipherSpec right after
//!   the ServerHello, no Certificate). Before TLS 1.3 it saves a round trip
//!   (TLS 1.0, 1.1 and SSL 3.0 hand over the same messages as TLS 1.2),
//!   when a request followed: a connection closed unused (a browser's,
//!   opened ahead of need) saved nothing, and one whose first request
//!   left later than a client's turnaround after the handshake let it
//!   saved only what of the round trip it did not spend idle anyway; and
//!   none where its client, by address and ClientHello, was seen false
//!   starting a full handshake earlier in the capture (its request left
//!   after one round trip in a full handshake too: false_start.rs in
//!   rttdoc-analyze).
//! - `resumption_missed`: the client offered a session (TLS 1.3 PSK; TLS
//!   1.2 and older: a session ticket, or a session ID its server issued
//!   earlier in the capture: issued_sessions.rs in rttdoc-analyze) and
//!   got a full handshake: a round
//!   trip lost before TLS 1.3 (none when the client used False Start: its
//!   data left with its Finished, after one round trip, as in a resumed
//!   handshake), certificate and key-exchange CPU on both.
//! - `early_data`: the ClientHello offered 0-RTT data (the request may ride
//!   with it). Acceptance is encrypted but shows in the client's second
//!   flight: with early data accepted the client sends EndOfEarlyData (a
//!   record of exactly 4 + 1 + tag bytes) before its Finished. Accepted:
//!   saved 1 RTT (negative cost), unless all it held was HTTP/2's
//!   connection preface (its size, `h2` offered: Firefox sends it before
//!   it has a request), which asks nothing and saved nothing, or the
//!   server held the request until the handshake completed (HAProxy 2.6
//!   with `allow-0rtt`: its first flight carries no answer): the answer
//!   left after the client's Finished reached the server, so nothing was
//!   saved and the request waited from its arrival to the Finished's
//!   (the wait, released by the Finished; on the server's clock);
//!   rejected: the request is re-sent after
//!   the handshake, 1 RTT later than promised (time to first byte). The
//!   wait: from the early data to the client's first new data after its
//!   Finished (the request sent again), released by the server's last
//!   handshake record before it; both ends are the client's packets, so
//!   the wait is on its clock at any vantage. Without the re-sent request
//!   in the capture there is no wait to cite, and no cost.
//!
//! - `resumption_missed`, the client's side: the ClientHello offered
//!   nothing back, though the same server had issued this client a
//!   session for the same name (a TLS 1.2 ticket, or a session ID) on an
//!   earlier connection of the capture, noted when that connection's
//!   first request opened, within 5 minutes before (issued_sessions.rs):
//!   a full handshake the client chose, a round trip lost before TLS 1.3
//!   as above (nDPI's viber.pcap 2: stream 1's NewSessionTicket, 15 ms
//!   before stream 2's ClientHello with an empty ticket extension). The
//!   fix is the client's: keep its sessions. Not where this connection's
//!   server asked for the client's certificate and the session's had not
//!   been asked: a resumed session carries the authentication it was
//!   made with, none (nDPI's anyconnect-vpn.pcap 6).
//!
//! Fix for misses: a session cache shared by the workers and the fleet
//! (nginx `ssl_session_cache shared:SSL:10m;`), ticket keys shared across
//! servers and rotated, not regenerated per process (`ssl_session_ticket_key`).

use super::Facts;
use crate::model::{
    Detail, Direction, Finding, FindingKind, Phase, TlsMessage, TlsMessageRef, Wait,
};
use rttdoc_analyze::READY_NS;

pub fn detect(f: &Facts<'_>, out: &mut Vec<Finding>) {
    let Some(tls) = &f.report.tls else { return };
    // (Unknown behind a relay that answered the TCP handshake itself: then
    // so is what a round trip saved or lost, and no cost is claimed.)
    let rtt_ms = f.rtt_ns.map(|r| r as f64 / 1e6).unwrap_or(0.0);
    let rtt_unknown = f.rtt_ns.is_none();
    // Every version before TLS 1.3 takes two round trips for a full
    // handshake and one for an abbreviated one, as the ledger's ideal.
    let before_tls13 = tls.version.is_some_and(|v| !v.is_tls13());
    let hellos: Vec<u64> = tls
        .messages
        .iter()
        .filter(|m| matches!(m.message, TlsMessage::ClientHello | TlsMessage::ServerHello))
        .map(|m| m.frame)
        .collect();
    // (A session ID is an offer only where its server issued it earlier
    // in the capture: TLS 1.3 clients send a random legacy one.)
    let offered = tls.resumption_offered();
    match tls.resumed {
        Some(true) => {
            let mut x = f.finding(FindingKind::Resumption, Some(Phase::TlsHandshake));
            x.frames = hellos;
            // (A round trip saved is a request's: without one nothing
            // waited for the handshake; nor when the client let the
            // connection go as its handshake ended, whatever it wrote:
            // many-protocols.pcap 62, Chrome's SPDY SETTINGS and
            // WINDOW_UPDATE, then close_notify and FIN 0.6 ms after its
            // Finished.)
            let unused = f.exchanges.is_empty() || f.handshake_discarded();
            let idle_ns = f.idle_before_request().map(|i| i.idle_ns);
            let idle_ms = idle_ns.map_or(0.0, |ns| ns as f64 / 1e6);
            // A request that left only after the client idled past the
            // handshake's end was not waiting for it: a full handshake's
            // extra round trip would have ended in that idle time (beyond
            // a client's turnaround, which it takes after either), and
            // saved only what of the round trip was left (nothing, where
            // the client idled a round trip or more: tls2.pcap's 309, its
            // request 465 ms after the handshake on a 181 ms path).
            let idled_ms = idle_ns.map_or(0.0, |ns| (ns - READY_NS) as f64 / 1e6);
            // A client seen false starting a full handshake earlier in
            // the capture sends its request after one round trip in a
            // full handshake too (nDPI's facebook 1): the resumption saved
            // its certificate and signature, no round trip.
            let false_start = before_tls13 && f.client_false_starts;
            let round_trip = before_tls13 && !false_start;
            x.cost_ms = if round_trip && !unused {
                -(rtt_ms - idled_ms).max(0.0)
            } else {
                0.0
            };
            // A client not seen either way, on a session a browser false
            // starts in full (ECDHE, an AEAD suite, a protocol chosen:
            // Chrome's, Firefox's condition): curl, Go or Java save the
            // round trip, a browser saved none (nDPI's anyconnect-vpn 9,
            // Wireshark's many_interfaces.pcapng.1: Chrome's ClientHellos).
            // Said so, with less confidence.
            let false_start_possible = round_trip && f.false_start_eligible && x.cost_ms < 0.0;
            x.confidence = if rtt_unknown || false_start_possible {
                0.6
            } else {
                1.0
            };
            x.detail = Detail::Resumption {
                round_trip,
                version: tls.version,
                unused,
                idle_ms,
                false_start,
                false_start_possible,
                rtt_unknown,
                not_offered: None,
                refused_id: None,
            };
            out.push(x);
        }
        // (Offered nothing, though the server had issued the client a
        // session for that name on an earlier connection: the client's
        // own miss, TLS 1.2 and older, where it costs a round trip.)
        Some(false) if offered || (before_tls13 && tls.session_held.is_some()) => {
            // (The client's own miss: it held a session and offered none.)
            let not_offered = tls.session_held.filter(|_| !offered);
            let mut x = f.finding(FindingKind::ResumptionMissed, Some(Phase::TlsHandshake));
            x.frames = hellos;
            // With False Start the full handshake took the client one
            // round trip too, as a resumed one would: it cost the
            // certificate and the signature, no round trip. So where the
            // client was seen false starting another full handshake
            // (tls2.pcap's 117: stream 113's request left with its
            // Finished), and where no request came to wait for it (117
            // again: nothing followed its Finished).
            let false_start = tls.false_start || f.client_false_starts;
            let unused = f.exchanges.is_empty();
            let round_trip = before_tls13 && !false_start && !unused;
            // No more than the round trip this handshake spent on what an
            // abbreviated one skips, as measured, where its messages were
            // captured (nDPI's alexa-app.pcapng 109: 117 ms from the key
            // exchange to the server's answer, told as the 233 ms its SYN
            // had taken; judged in session 86); the server's work on the
            // key exchange beyond the path's round trip is
            // server_think_time's.
            let spent_ms = second_round_trip_ns(f, &tls.messages).map(|ns| ns as f64 / 1e6);
            x.cost_ms = if round_trip {
                spent_ms.map_or(rtt_ms, |spent| spent.min(rtt_ms))
            } else {
                0.0
            };
            x.confidence = 0.9;
            x.detail = Detail::Resumption {
                round_trip,
                version: tls.version,
                unused,
                idle_ms: 0.0,
                false_start,
                false_start_possible: false,
                rtt_unknown,
                not_offered,
                refused_id: tls.session_id_issued.filter(|_| offered),
            };
            if let Some(held) = not_offered {
                // The session's issuing on the earlier connection.
                x.frames.insert(0, held.frame);
                x.display_filter = format!(
                    "(tcp.stream eq {} && frame.number == {}) || (tcp.stream eq {} && frame.number in {{{}}})",
                    held.stream,
                    held.frame,
                    f.report.stream,
                    x.frames[1..]
                        .iter()
                        .map(|n| n.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
            // (The client's own miss that cost nothing, or less than the
            // ledger's floor, is not told: it lost no round trip.)
            let clients_free =
                not_offered.is_some() && x.cost_ms * 1e6 < super::causality::EXCESS_FLOOR_NS as f64;
            // Nor one whose server asked for the client's certificate
            // where the session's had not: a session resumed carries the
            // authentication it was made with (none), which a server that
            // wants the client's certificate takes no resumption for. The
            // client came back to be authenticated (nDPI's
            // anyconnect-vpn.pcap 6: the VPN gateway's CertificateRequest,
            // the client's 4 KB Certificate, after stream 3's session
            // without either).
            let certificate_now = tls
                .messages
                .iter()
                .any(|m| m.message == TlsMessage::CertificateRequest);
            let authenticates =
                not_offered.is_some_and(|held| certificate_now && !held.certificate_requested);
            if !clients_free && !authenticates {
                out.push(x);
            }
        }
        _ => {}
    }
    if tls.early_data_offered {
        let mut frames: Vec<u64> = tls
            .messages
            .iter()
            .filter(|m| {
                matches!(
                    m.message,
                    TlsMessage::EarlyData
                        | TlsMessage::ClientHello
                        | TlsMessage::EndOfEarlyData
                        | TlsMessage::EndOfEarlyDataEncrypted
                )
            })
            .map(|m| m.frame)
            .collect();
        frames.dedup();
        let rtt_ms = f.rtt_ns.map_or(0.0, |r| r as f64 / 1e6);
        let mut x = f.finding(FindingKind::EarlyData, Some(Phase::FirstByte));
        x.frames = frames;
        x.display_filter = f.filter_frames(&x.frames);
        let hold = match tls.early_data_accepted {
            Some(true) if !tls.early_data_preface_only => held_for_handshake(f, &tls.messages),
            _ => None,
        };
        let held = match hold {
            Some(Hold::Held(w)) => Some(w),
            _ => None,
        };
        let hold_unknown = matches!(hold, Some(Hold::Unknown));
        x.detail = Detail::EarlyData {
            accepted: tls.early_data_accepted,
            preface_only: tls.early_data_preface_only,
            held_until: held.and_then(|w| w.release_frame),
            hold_unknown,
        };
        match tls.early_data_accepted {
            // Taken, but it asked nothing: the requests left after the
            // handshake, as without 0-RTT.
            Some(true) if tls.early_data_preface_only => {
                x.cost_ms = 0.0;
                x.confidence = 0.9;
            }
            // Taken, and held for the handshake: the wait.
            Some(true) if held.is_some() => {
                x.waits = held.into_iter().collect();
                x.cost_ms = x.waits.iter().map(|w| w.ms).sum();
                x.frames
                    .extend(x.waits.iter().flat_map(|w| w.release_frame));
                x.frames.extend(x.waits.iter().map(|w| w.to_frame));
                // (EndOfEarlyData and the Finished share a segment.)
                x.frames.dedup();
                x.display_filter = f.filter_frames(&x.frames);
                x.confidence = 0.9;
            }
            // Answered long after the handshake: saved or held, the
            // capture cannot tell.
            Some(true) if hold_unknown => {
                x.cost_ms = 0.0;
                x.confidence = 0.5;
            }
            Some(true) => {
                x.cost_ms = -rtt_ms;
                x.confidence = 0.9;
            }
            Some(false) => {
                // The wait, when the capture shows the request again.
                x.waits = rejected_early_data_wait(f, &tls.messages)
                    .into_iter()
                    .collect();
                x.cost_ms = x.waits.iter().map(|w| w.ms).sum();
                x.frames.extend(x.waits.iter().map(|w| w.to_frame));
                x.display_filter = f.filter_frames(&x.frames);
                x.confidence = 0.9;
            }
            None => {
                x.confidence = 0.8;
            }
        }
        out.push(x);
    }
}

/// The second round trip of a full handshake before TLS 1.3, the one an
/// abbreviated handshake skips: from the client's key exchange (its
/// Certificate or ClientKeyExchange, the first segment of its second
/// flight) to the server's answer to it (its first message after it: a
/// NewSessionTicket, ChangeCipherSpec or Finished) reaching the client
/// (captured, plus the client's side of the path). With the server's
/// work on it (an RSA key exchange's decryption), which a resumption
/// skips too.
fn second_round_trip_ns(f: &Facts<'_>, messages: &[TlsMessageRef]) -> Option<i64> {
    let exchange = messages.iter().find(|m| {
        m.direction == Direction::ClientToServer
            && matches!(
                m.message,
                TlsMessage::Certificate | TlsMessage::ClientKeyExchange
            )
    })?;
    let answer = messages
        .iter()
        .find(|m| m.direction == Direction::ServerToClient && m.frame > exchange.frame)?;
    let sent = f.record(exchange.first_frame)?.ts_ns;
    let answered = f.record(answer.first_frame)?.ts_ns + f.client_side_ns;
    (answered > sent).then_some(answered - sent)
}

/// Accepted 0-RTT data the server answered only after the client's
/// Finished reached it: a wait from the early data to the answer's first
/// segment, released by the Finished, of the time from the early data's
/// arrival to the Finished's, on the server's clock (what the server did
/// after the Finished came is its turn on the request, as on any). The request rode in the early
/// data (the first exchange's request began in its record); the answer
/// left after the Finished arrived, less half a round trip for the
/// clock shift's error (at a capture away from the server), where an
/// answer the early data bought leaves with the server's first flight, a
/// round trip before the Finished can arrive. None when the answer was not
/// held, or the capture cannot tell. Unknown when the answer left later
/// after the Finished came than the Finished came after the early data:
/// a server that held the request and one that worked on it from its
/// arrival answer that late alike (nDPI's instagram.pcap 32: the answer
/// 131 ms after the Finished, 15 ms after the request; the same server
/// answered other connections' early data before their Finished).
fn held_for_handshake(f: &Facts<'_>, messages: &[TlsMessageRef]) -> Option<Hold> {
    let server = Direction::ServerToClient;
    let early = messages
        .iter()
        .find(|m| m.message == TlsMessage::EarlyData)?
        .first_frame;
    let x = f
        .exchanges
        .first()
        .filter(|x| x.request_first.frame == early)?;
    let (early, finished, answer) = (
        f.record(early)?,
        f.record(f.tls_end_frame?)?,
        f.record(x.response_first?.frame)?,
    );
    if finished.dir != Direction::ClientToServer || answer.frame < finished.frame {
        return None;
    }
    let (arrived, released, left) = (
        f.on_clock_of(server, early),
        f.on_clock_of(server, finished),
        f.on_clock_of(server, answer),
    );
    if left < released - f.rtt_ns? / 2 {
        return None;
    }
    if left - released > (released - arrived).max(0) {
        return Some(Hold::Unknown);
    }
    Some(Hold::Held(Wait {
        from_frame: early.frame,
        to_frame: answer.frame,
        release_frame: Some(finished.frame),
        ms: (released - arrived).max(0) as f64 / 1e6,
    }))
}

/// What the capture shows of a server holding accepted early data.
enum Hold {
    /// Held until the Finished came: the wait.
    Held(Wait),
    /// Answered too long after the Finished to tell.
    Unknown,
}

/// Rejected 0-RTT data's wait: from the first early-data record to the
/// client's first new data after the handshake (the request sent again),
/// released by the server's last handshake record captured before it.
fn rejected_early_data_wait(f: &Facts<'_>, messages: &[TlsMessageRef]) -> Option<Wait> {
    let client = Direction::ClientToServer;
    let early = messages
        .iter()
        .find(|m| m.message == TlsMessage::EarlyData)?
        .first_frame;
    let handshake_end = f.tls_end_frame?;
    let again = f
        .timeline
        .iter()
        .find(|r| r.dir == client && r.frame > handshake_end && r.len > 0 && r.new_data)?;
    let release = messages
        .iter()
        .filter(|m| m.direction == Direction::ServerToClient && m.frame < again.frame)
        .map(|m| m.frame)
        .max()?;
    let early_rec = f.record(early)?;
    let ms = (f.on_clock_of(client, again) - f.on_clock_of(client, early_rec)) as f64 / 1e6;
    Some(Wait {
        from_frame: early,
        to_frame: again.frame,
        release_frame: Some(release),
        ms,
    })
}
