//! `tls_extra_rtt` — the TLS handshake took more round trips than the
//! ideal for what was negotiated (TLS 1.3: 1, TLS 1.2: 2, resumed: 1, +1
//! with a HelloRetryRequest).
//!
//! Signature: the ledger's `tls_handshake` row is at least 0.5 RTT over its
//! ideal. The finding names the causes other detectors found in the
//! handshake (`nagle_hold`, `nagle_delayed_ack`, `initcwnd_limited`,
//! `server_think_time`, `retransmission`) and what remains unexplained.
//! Cost: the row's excess.

use super::Facts;
use crate::model::{Detail, Finding, FindingKind, Phase};

/// A summary: reads the first pass's findings (`causes_found`), never
/// adds to them (see [`super::run`]).
pub fn summarize(f: &Facts<'_>, causes_found: &[Finding]) -> Option<Finding> {
    let row = f
        .report
        .ledger
        .iter()
        .find(|r| r.phase == Phase::TlsHandshake)?;
    let (Some(excess), Some(excess_ms)) = (row.excess_rtts, row.excess_ms) else {
        return None;
    };
    if excess < 0.5 {
        return None;
    }
    let causes: Vec<&Finding> = causes_found
        .iter()
        .filter(|x| {
            x.phase == Some(Phase::TlsHandshake)
                && x.cost_ms > 0.0
                && x.kind != FindingKind::HelloRetryRequest
        })
        .collect();
    let explained: f64 = causes.iter().map(|c| c.cost_ms).sum();
    let mut x = f.finding(FindingKind::TlsExtraRtt, Some(Phase::TlsHandshake));
    x.frames = vec![row.start_frame, row.end_frame];
    x.cost_ms = excess_ms;
    x.confidence = if causes.is_empty() { 0.6 } else { 0.9 };
    let unexplained = (excess_ms - explained).max(0.0);
    x.detail = Detail::TlsExtraRtt {
        rtts: row.rtts.unwrap_or(0.0),
        ideal_rtts: row.ideal_rtts.unwrap_or(0.0),
        ideal_basis: row.ideal_basis.clone(),
        excess_rtts: excess,
        causes: causes.iter().map(|c| (c.kind, c.cost_ms)).collect(),
        unexplained_ms: unexplained,
    };
    x.display_filter = format!(
        "tcp.stream eq {} && frame.number >= {} && frame.number <= {}",
        f.report.stream, row.start_frame, row.end_frame
    );
    Some(x)
}
