//! TLS session resumption, used or missed, and 0-RTT early data.
//!
//! - `resumption`: the server accepted the session (TLS 1.3: pre_shared_key
//!   in the ServerHello; TLS 1.2: ChangeCipherSpec right after the
//!   ServerHello, no Certificate). TLS 1.2 saves a round trip.
//! - `resumption_missed`: the client offered a session (TLS 1.3 PSK; TLS
//!   1.2 session ticket or session id) and got a full handshake: a round trip
//!   lost on TLS 1.2, certificate and key-exchange CPU on both.
//! - `early_data`: the ClientHello offered 0-RTT data (the request may ride
//!   with it). Acceptance is encrypted but shows in the client's second
//!   flight: with early data accepted the client sends EndOfEarlyData (a
//!   record of exactly 4 + 1 + tag bytes) before its Finished. Accepted:
//!   saved 1 RTT (negative cost); rejected: the request is re-sent after
//!   the handshake, 1 RTT later than promised (cost 1 RTT, time to first
//!   byte).
//!
//! Fix for misses: a session cache shared by the workers and the fleet
//! (nginx `ssl_session_cache shared:SSL:10m;`), ticket keys shared across
//! servers and rotated, not regenerated per process (`ssl_session_ticket_key`).

use super::Facts;
use crate::model::{Finding, FindingKind, Phase, TlsMessage, TlsVersion};

pub fn detect(f: &Facts<'_>, out: &mut Vec<Finding>) {
    let Some(tls) = &f.report.tls else { return };
    let rtt_ms = f.rtt_ns.map(|r| r as f64 / 1e6).unwrap_or(0.0);
    let tls12 = tls.version == Some(TlsVersion::TLS12);
    let hellos: Vec<u64> = tls
        .messages
        .iter()
        .filter(|m| matches!(m.message, TlsMessage::ClientHello | TlsMessage::ServerHello))
        .map(|m| m.frame)
        .collect();
    // (A TLS 1.2 resumption by session id that fails is not seen: TLS 1.3
    // clients send a random legacy session id, so ids prove nothing.)
    let offered = tls.psk_offered || tls.session_ticket_offered;
    match tls.resumed {
        Some(true) => {
            let mut x = f.finding(FindingKind::Resumption, Some(Phase::TlsHandshake));
            x.frames = hellos;
            x.cost_ms = if tls12 { -rtt_ms } else { 0.0 };
            x.confidence = 1.0;
            x.explanation = format!(
                "The session was resumed{}.",
                if tls12 {
                    ": an abbreviated TLS 1.2 handshake, one round trip shorter"
                } else {
                    " with a PSK: no certificate, no signature"
                }
            );
            x.fix = "Working as intended.".into();
            out.push(x);
        }
        Some(false) if offered => {
            let mut x = f.finding(FindingKind::ResumptionMissed, Some(Phase::TlsHandshake));
            x.frames = hellos;
            x.cost_ms = if tls12 { rtt_ms } else { 0.0 };
            x.confidence = 0.9;
            x.explanation = format!(
                "The client offered to resume a session but the server did a full handshake{}.",
                if tls12 {
                    ", one round trip more (2 instead of 1)"
                } else {
                    " (certificate and signature again)"
                }
            );
            x.fix = "Share the session cache and ticket keys across workers and servers: nginx ssl_session_cache shared:SSL:10m; \
                     ssl_session_tickets on; the same ssl_session_ticket_key on every server behind the name, rotated."
                .into();
            out.push(x);
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
        match tls.early_data_accepted {
            Some(true) => {
                x.cost_ms = -rtt_ms;
                x.confidence = 0.9;
                x.explanation = "The request rode in 0-RTT early data with the ClientHello and the server accepted it (the client \
                                 sent EndOfEarlyData): the answer could leave with the server's first flight, a round trip sooner."
                    .into();
                x.fix = "Working as intended for idempotent requests; answer non-idempotent early requests (POST) with 425 Too Early \
                         (nginx: pass $ssl_early_data to the application, e.g. proxy_set_header Early-Data $ssl_early_data)."
                    .into();
            }
            Some(false) => {
                x.cost_ms = rtt_ms;
                x.confidence = 0.9;
                x.explanation = "The client sent 0-RTT early data but the server rejected it (no EndOfEarlyData before the client's \
                                 Finished): the request had to be sent again after the handshake, a round trip later than 0-RTT promised."
                    .into();
                x.fix = "Let the server accept early data: nginx ssl_early_data on; (OpenSSL: SSL_CTX_set_max_early_data), tickets issued \
                         with max_early_data, and the same ticket keys on every server behind the name; or stop offering 0-RTT."
                    .into();
            }
            None => {
                x.confidence = 0.8;
                x.explanation = "The ClientHello offered 0-RTT early data; whether the server took it could not be seen.".into();
                x.fix = "Fine for idempotent requests; answer non-idempotent early requests (POST) with 425 Too Early (nginx: check $ssl_early_data)."
                    .into();
            }
        }
        out.push(x);
    }
}
