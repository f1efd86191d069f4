//! `hello_retry_request` — the TLS 1.3 server answered the ClientHello
//! with a HelloRetryRequest (a ServerHello with the special random).
//!
//! Signature: ServerHello random = SHA-256("HelloRetryRequest"); the client
//! sends a second ClientHello with a key share for the group the server
//! named. Cost: one extra round trip (counted in the handshake's ideal),
//! paid only when that second ClientHello was sent: a client that closed
//! instead (a FIN, a RST) paid nothing, and nothing is claimed.
//! Fix: let the server accept the group clients send a share for first
//! (nginx `ssl_ecdh_curve X25519:prime256v1:secp384r1;`), or have clients
//! offer a share for the server's preferred group.

use super::Facts;
use crate::model::{Detail, Finding, FindingKind, Phase, TlsMessage};

pub fn detect(f: &Facts<'_>, out: &mut Vec<Finding>) {
    let Some(tls) = &f.report.tls else { return };
    if !tls.hello_retry_request {
        return;
    }
    let retry = tls
        .messages
        .iter()
        .find(|m| m.message == TlsMessage::HelloRetryRequest);
    let again = retry.is_some_and(|r| {
        tls.messages
            .iter()
            .any(|m| m.message == TlsMessage::ClientHello && m.frame > r.frame)
    });
    if !again {
        return;
    }
    let mut frames: Vec<u64> = tls
        .messages
        .iter()
        .filter(|m| {
            matches!(
                m.message,
                TlsMessage::ClientHello | TlsMessage::HelloRetryRequest
            )
        })
        .map(|m| m.frame)
        .collect();
    frames.dedup();
    let mut x = f.finding(FindingKind::HelloRetryRequest, Some(Phase::TlsHandshake));
    x.frames = frames;
    x.cost_ms = f.rtt_ns.map(|r| r as f64 / 1e6).unwrap_or(0.0);
    x.confidence = 1.0;
    x.detail = Detail::HelloRetryRequest {
        offered: tls.client_key_shares.clone(),
        wanted: tls.server_key_share.clone(),
    };
    // By frame, not `tls.handshake.type`: Wireshark decodes TLS on a port
    // it does not know (8443, a lab's) only after "Decode As".
    x.display_filter = f.filter_frames(&x.frames);
    out.push(x);
}
