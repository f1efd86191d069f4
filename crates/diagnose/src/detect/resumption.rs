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
use crate::model::{Detail, Finding, FindingKind, Phase, TlsMessage, TlsVersion};

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
            x.detail = Detail::Resumption { tls12 };
            out.push(x);
        }
        Some(false) if offered => {
            let mut x = f.finding(FindingKind::ResumptionMissed, Some(Phase::TlsHandshake));
            x.frames = hellos;
            x.cost_ms = if tls12 { rtt_ms } else { 0.0 };
            x.confidence = 0.9;
            x.detail = Detail::Resumption { tls12 };
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
        x.detail = Detail::EarlyData {
            accepted: tls.early_data_accepted,
        };
        match tls.early_data_accepted {
            Some(true) => {
                x.cost_ms = -rtt_ms;
                x.confidence = 0.9;
            }
            Some(false) => {
                x.cost_ms = rtt_ms;
                x.confidence = 0.9;
            }
            None => {
                x.confidence = 0.8;
            }
        }
        out.push(x);
    }
}
