//! `server_think_time` — the server took long to answer: between the
//! ClientHello and its ServerHello (key exchange and signing: a large RSA
//! key, a busy or throttled CPU, an OCSP or key-server fetch), or between a
//! request and the first byte of its response.
//!
//! Signature, on the server's clock (client packets + the server side of
//! the RTT): answer departure minus question arrival, at least half a
//! round trip, clamped to 5..20 ms (above a kernel's or a TLS library's
//! normal turnaround; 20 ms is worth knowing on any path). Cost: that time.
//! Fix: cheaper crypto (ECDSA P-256 certificates instead of RSA-4096,
//! x25519), session resumption, more CPU, a warm backend; for responses,
//! the application.

use super::Facts;
use crate::model::{Direction, Finding};

/// Below this, a host's normal turnaround (a signature, a scheduler tick).
const FLOOR_NS: i64 = 5_000_000;
/// Above this, worth reporting whatever the path.
const ALWAYS_NS: i64 = 20_000_000;

pub fn detect(f: &Facts<'_>, out: &mut Vec<Finding>) {
    let Some(rtt) = f.rtt_ns else { return };
    // Half a round trip is what users feel: on a 5 ms path a 10 ms
    // signature doubles the handshake, on a 120 ms one it is noise.
    let threshold = (rtt / 2).clamp(FLOOR_NS, ALWAYS_NS);
    let at = |frame: u64| f.timeline.iter().find(|r| r.frame == frame);
    let on_server = |frame: u64| at(frame).map(|r| f.on_clock_of(Direction::ServerToClient, r));
    if let Some(tls) = &f.report.tls {
        let ch = tls
            .messages
            .iter()
            .find(|m| m.message == "ClientHello")
            .map(|m| m.frame);
        let sh = tls
            .messages
            .iter()
            .find(|m| m.message == "ServerHello" || m.message == "HelloRetryRequest")
            .map(|m| m.frame);
        if let (Some(ch), Some(sh)) = (ch, sh) {
            if let (Some(tq), Some(ta)) = (on_server(ch), on_server(sh)) {
                // The ServerHello record may end in a later segment than the
                // one that started it: take the first server data after the ClientHello.
                let first = f
                    .timeline
                    .iter()
                    .filter(|r| r.dir == Direction::ServerToClient && r.len > 0 && r.frame > ch)
                    .map(|r| f.on_clock_of(Direction::ServerToClient, r))
                    .next()
                    .unwrap_or(ta);
                let think = first - tq;
                if think >= threshold {
                    let mut x = f.finding("server_think_time", Some("tls_handshake"));
                    x.frames = vec![ch, sh];
                    x.cost_ms = think as f64 / 1e6;
                    x.explanation = format!(
                        "The server answered the ClientHello {:.0} ms after it arrived (beyond the path's round trip): time spent computing before the ServerHello, \
                         typically the key exchange and the certificate signature (a large RSA key, a busy CPU) or a fetch the handshake waited for.",
                        x.cost_ms
                    );
                    x.fix = "Use an ECDSA P-256 certificate (signing is ~10x cheaper than RSA-4096) and x25519, enable session resumption, \
                             give the TLS terminator CPU; check for OCSP or key-server fetches in the handshake."
                        .into();
                    x.display_filter = f.filter_frames(&x.frames);
                    out.push(x);
                }
            }
        }
        return;
    }
    // Plain request/response: request arrival to the first response byte.
    for (i, x) in f.exchanges.iter().enumerate() {
        let Some(first) = x.response_first else {
            continue;
        };
        // The request reached the server with its last transmission: a
        // retransmitted segment (a lost one, SYN data a server ignored)
        // arrives a timeout or a round trip after the original.
        let last_copy = f
            .timeline
            .iter()
            .filter(|r| {
                r.dir == Direction::ClientToServer
                    && r.len > 0
                    && r.frame >= x.request_first.frame
                    && r.frame < first.frame
            })
            .map(|r| r.frame)
            .max()
            .unwrap_or(x.request_last.frame)
            .max(x.request_last.frame);
        let (Some(tq), Some(ta)) = (on_server(last_copy), on_server(first.frame)) else {
            continue;
        };
        let think = ta - tq;
        if think >= threshold {
            let mut y = f.finding("server_think_time", Some("first_byte"));
            y.frames = vec![last_copy, first.frame];
            y.cost_ms = think as f64 / 1e6;
            y.explanation = format!(
                "Exchange {}: the server sent the first byte of its response {:.0} ms after the request arrived: application time, not network.",
                i + 1,
                y.cost_ms
            );
            y.fix = "Profile the application behind this endpoint (slow handler, database, upstream); cache where possible.".into();
            y.display_filter = f.filter_frames(&y.frames);
            out.push(y);
        }
    }
}
