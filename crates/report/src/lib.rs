//! Renderers: the last stage of rttdoc's one pass. The analysis never
//! formats text; these read its [`ConnectionReport`]s and print them for
//! people ([`terminal`]) or programs ([`json`]).
//!
//! [`Summary`] folds connection reports into capture-wide numbers as they
//! stream past, keeping only compact rows and the few worst connections, so
//! a capture of millions of connections summarises in bounded memory.

pub mod annotate;
mod fixed;
pub mod html;
pub mod json;
pub mod json_ser;
pub mod metrics;
pub mod render;
mod summary;
pub mod terminal;
#[cfg(test)]
mod test_support;
pub mod words;

pub use fixed::Fixed;
pub use render::{renderer, ConnectionDetail, Format, QuicDetail, RenderOptions, Renderer};
pub use summary::{ConnectionRow, Summary, DEFAULT_ROWS_KEPT};

use rttdoc_model::ConnectionReport;

/// Formats a byte count for people: "900 bytes", "3.6 KB", "1.2 MB"
/// (decimal units, as the terminal's other sizes).
pub fn fmt_bytes(n: u64) -> String {
    if n >= 1_000_000 {
        format!("{:.1} MB", Fixed(n as f64 / 1e6))
    } else if n >= 10_000 {
        format!("{:.0} KB", Fixed(n as f64 / 1e3))
    } else if n >= 1_000 {
        format!("{:.1} KB", Fixed(n as f64 / 1e3))
    } else {
        format!("{n} bytes")
    }
}

/// Formats milliseconds for people: "36.1 ms", "1.20 s", "0.05 ms",
/// "12 µs" (loopback and LAN round trips).
pub fn fmt_ms(ms: f64) -> String {
    if ms.abs() >= 1000.0 {
        format!("{:.2} s", Fixed(ms / 1000.0))
    } else if ms.abs() >= 10.0 {
        format!("{:.1} ms", Fixed(ms))
    } else if ms.abs() >= 0.1 || ms == 0.0 {
        format!("{:.2} ms", Fixed(ms))
    } else {
        format!("{:.0} µs", Fixed(ms * 1000.0))
    }
}

/// Formats a round-trip count: "2.0 RTT", "1200 RTT" (no decimals where
/// they mean nothing).
pub fn fmt_rtts(rtts: f64) -> String {
    if rtts.abs() >= 100.0 {
        format!("{:.0} RTT", Fixed(rtts))
    } else {
        format!("{:.1} RTT", Fixed(rtts))
    }
}

/// The ledger row with the largest excess in a latency phase.
pub fn worst_row(c: &ConnectionReport) -> Option<&rttdoc_model::LedgerRow> {
    c.ledger
        .iter()
        .filter(|r| r.phase.is_latency() && r.summed == 0)
        .filter(|r| r.excess_rtts.unwrap_or(0.0) > 0.0)
        .max_by(|a, b| {
            a.excess_rtts
                .partial_cmp(&b.excess_rtts)
                .unwrap_or(std::cmp::Ordering::Equal)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_round_trips_read_at_every_scale() {
        assert_eq!(fmt_ms(1234.0), "1.23 s");
        assert_eq!(fmt_ms(36.14), "36.1 ms");
        assert_eq!(fmt_ms(0.05), "50 µs");
        assert_eq!(fmt_ms(0.004), "4 µs");
        assert_eq!(fmt_ms(0.0), "0.00 ms");
        assert_eq!(fmt_ms(-36.1), "-36.1 ms");
        assert_eq!(fmt_rtts(2.04), "2.0 RTT");
        assert_eq!(fmt_rtts(191062.0), "191062 RTT");
    }
}
