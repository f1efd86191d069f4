//! TLS session resumption, used or missed, and 0-RTT early data.
//!
//! - `resumption`: the server accepted the session (TLS 1.3: pre_shared_key
//!   in the ServerHello; TLS 1.2: ChangeCipherSpec right after the
//!   ServerHello, no Certificate). TLS 1.2 saves a round trip.
//! - `resumption_missed`: the client offered a session (TLS 1.3 PSK; TLS
//!   1.2 session ticket or session id) and got a full handshake: a round trip
//!   lost on TLS 1.2, certificate and key-exchange CPU on both.
//! - `early_data`: the ClientHello offered 0-RTT data (the request may ride
//!   with it); acceptance is encrypted, so it is reported as offered.
//!
//! Fix for misses: a session cache shared by the workers and the fleet
//! (nginx `ssl_session_cache shared:SSL:10m;`), ticket keys shared across
//! servers and rotated, not regenerated per process (`ssl_session_ticket_key`).

use super::Facts;
use crate::model::Finding;

pub fn detect(f: &Facts<'_>, out: &mut Vec<Finding>) {
    let Some(tls) = &f.report.tls else { return };
    let rtt_ms = f.rtt_ns.map(|r| r as f64 / 1e6).unwrap_or(0.0);
    let tls12 = tls.version.as_deref() == Some("TLS 1.2");
    let hellos: Vec<u64> = tls
        .messages
        .iter()
        .filter(|m| matches!(m.message.as_str(), "ClientHello" | "ServerHello"))
        .map(|m| m.frame)
        .collect();
    // (A TLS 1.2 resumption by session id that fails is not seen: TLS 1.3
    // clients send a random legacy session id, so ids prove nothing.)
    let offered = tls.psk_offered || tls.session_ticket_offered;
    match tls.resumed {
        Some(true) => {
            let mut x = f.finding("resumption", Some("tls_handshake"));
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
            let mut x = f.finding("resumption_missed", Some("tls_handshake"));
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
        let mut x = f.finding("early_data", Some("first_byte"));
        x.frames = tls
            .messages
            .iter()
            .filter(|m| m.message.starts_with("Early data") || m.message == "ClientHello")
            .map(|m| m.frame)
            .collect();
        x.cost_ms = 0.0;
        x.confidence = 0.8;
        x.explanation = "The ClientHello offered 0-RTT early data: a request can travel with it and be answered a round trip sooner \
                         (whether the server accepted is encrypted)."
            .into();
        x.fix = "Fine for idempotent requests; answer non-idempotent early requests (POST) with 425 Too Early (nginx: check $ssl_early_data)."
            .into();
        out.push(x);
    }
}
