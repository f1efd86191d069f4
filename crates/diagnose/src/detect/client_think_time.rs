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
//! client, less the queue the client's other handshakes or its saturated
//! downlink show on the path (the server's flight may have reached the
//! client that much later). Each is a wait from the server's last
//! segment to the client's answer, with no releasing packet (the
//! client's own work ended it). Cost: the waits' sum. Not when the
//! client's answer acknowledges server bytes the capture did not show (a
//! segment it missed, a re-send it did not see): then the client may have
//! been waiting for that segment, which is loss, not its work.
//! Fix: on the client (revocation and intermediate fetches: a server that
//! sends its whole chain and staples OCSP spares them; CPU; resumption,
//! which skips the verification).

use super::server_think_time::threshold_of;
use super::Facts;
use crate::model::{Detail, Direction, Finding, FindingKind, Phase, Vantage, Wait};

pub fn detect(f: &Facts<'_>, out: &mut Vec<Finding>) {
    let Some(rtt) = f.rtt_ns else { return };
    let threshold = threshold_of(rtt);
    let waits: Vec<Wait> = f
        .handshake_turns()
        .into_iter()
        .filter(|t| t.answerer == Direction::ClientToServer && t.complete)
        .filter_map(|t| {
            // Captured at the client, the flight's arrival is seen.
            let queue = if f.report.vantage == Vantage::Client {
                0
            } else {
                f.answer_queue_ns(t.question_ts_ns)
            };
            let think = t.wait_ns - queue;
            (think >= threshold).then(|| Wait {
                from_frame: t.question_frame,
                to_frame: t.answer_frame,
                release_frame: None,
                ms: think as f64 / 1e6,
            })
        })
        .collect();
    if waits.is_empty() {
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
    };
    x.waits = waits;
    x.display_filter = f.filter_frames(&x.frames);
    out.push(x);
}
