//! Renderers: the last stage of rttdoc's one pass. The analysis never
//! formats text; these read its [`ConnectionReport`]s and print them for
//! people ([`terminal`]) or programs ([`json`]).
//!
//! [`Summary`] folds connection reports into capture-wide numbers as they
//! stream past, keeping only compact rows and the few worst connections, so
//! a capture of millions of connections summarises in bounded memory.

pub mod json;
mod summary;
pub mod terminal;

pub use summary::{ConnectionRow, Summary};

use rttdoc_analyze::ConnectionReport;

/// Formats milliseconds for people: "36.1 ms", "1.20 s", "0.05 ms".
pub fn fmt_ms(ms: f64) -> String {
    if ms >= 1000.0 {
        format!("{:.2} s", ms / 1000.0)
    } else if ms >= 10.0 {
        format!("{ms:.1} ms")
    } else {
        format!("{ms:.2} ms")
    }
}

/// Formats a round-trip count: "2.0 RTT".
pub fn fmt_rtts(rtts: f64) -> String {
    format!("{rtts:.1} RTT")
}

/// The ledger row with the largest excess in a latency phase.
pub fn worst_row(c: &ConnectionReport) -> Option<&rttdoc_analyze::LedgerRow> {
    c.ledger
        .iter()
        .filter(|r| r.phase != "transfer")
        .filter(|r| r.excess_rtts.unwrap_or(0.0) > 0.0)
        .max_by(|a, b| {
            a.excess_rtts
                .partial_cmp(&b.excess_rtts)
                .unwrap_or(std::cmp::Ordering::Equal)
        })
}
