use std::collections::BTreeMap;

use rttdoc_analyze::{ConnectionReport, Vantage};

use crate::worst_row;

/// Connections whose excess reaches this many RTTs count as "over ideal";
/// below it, jitter and server think time are noise.
pub const OVER_IDEAL_RTTS: f64 = 0.5;

/// How many full reports the summary keeps for its "worst" list.
const WORST_KEPT: usize = 10;
/// Compact rows kept for the connection table.
const ROWS_KEPT: usize = 100_000;

/// One line per connection, for the overview table.
#[derive(Debug, Clone)]
pub struct ConnectionRow {
    pub stream: u64,
    pub client: String,
    pub server: String,
    pub vantage: Vantage,
    pub rtt_ms: Option<f64>,
    pub tcp_handshake_ms: Option<f64>,
    pub tls_version: Option<String>,
    pub tls_rtts: Option<f64>,
    pub tls_ideal: Option<f64>,
    pub first_byte_ms: Option<f64>,
    pub exchanges: u32,
    pub excess_rtts: f64,
    pub excess_ms: f64,
    /// Transfer stalls found on this connection (ms).
    pub stall_ms: f64,
    pub worst_phase: Option<String>,
    pub partial: bool,
    pub findings: Vec<&'static str>,
}

/// Capture-wide numbers, folded one connection at a time.
#[derive(Debug, Default)]
pub struct Summary {
    pub connections: u64,
    pub over_ideal: u64,
    /// Latency beyond the ideal, over every connection: the sum of the
    /// ledgers' latency-phase excess (`excess_ms`). Always equals
    /// `explained_ms + unexplained_ms`.
    pub excess_ms_total: f64,
    /// The part of `excess_ms_total` the findings account for (their
    /// `attributed_ms`).
    pub explained_ms: f64,
    /// The part no finding accounts for.
    pub unexplained_ms: f64,
    /// Time lost to stalls inside transfers (after the first byte): the
    /// costs of transfer-phase findings, which the latency ledger does
    /// not count.
    pub stall_ms_total: f64,
    pub tls_connections: u64,
    pub resumed: u64,
    pub tfo_attempts: u64,
    pub tfo_accepted: u64,
    /// TLS 1.3 connections that sent 0-RTT early data, and how many of
    /// those the server visibly accepted.
    pub early_data_sent: u64,
    pub early_data_accepted: u64,
    pub partial: u64,
    /// TLS handshake durations in RTTs, by version name.
    pub handshake_rtts: BTreeMap<String, Vec<f64>>,
    pub rows: Vec<ConnectionRow>,
    pub rows_dropped: u64,
    /// The worst connections (by excess RTTs), full reports.
    pub worst: Vec<ConnectionReport>,
    /// Per finding kind: connections affected, total cost (ms), a fix.
    pub causes: BTreeMap<&'static str, Cause>,
}

/// Capture-wide totals for one finding kind.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Cause {
    pub connections: u64,
    /// Everything this kind's findings cost (a wait may be partly inside
    /// what the ideal already allows, so this can exceed the two below).
    pub cost_ms: f64,
    /// Its share of the latency excess (`attributed_ms`, summed).
    pub latency_ms: f64,
    /// Its transfer stalls (transfer-phase costs, summed).
    pub stall_ms: f64,
    pub fix: String,
}

/// Whether a finding's cost is a transfer stall (after the first byte),
/// outside the latency phases the ledger's excess covers.
pub fn is_stall(x: &rttdoc_analyze::Finding) -> bool {
    x.phase == Some("transfer") && x.cost_ms > 0.0
}

impl Summary {
    pub fn add(&mut self, c: &ConnectionReport) {
        self.connections += 1;
        if c.partial {
            self.partial += 1;
        }
        if c.excess_rtts >= OVER_IDEAL_RTTS {
            self.over_ideal += 1;
        }
        self.excess_ms_total += c.excess_ms;
        self.unexplained_ms += c.unexplained_ms;
        if let Some(tls) = &c.tls {
            self.tls_connections += 1;
            if tls.resumed == Some(true) {
                self.resumed += 1;
            }
            if tls.early_data_accepted.is_some() {
                self.early_data_sent += 1;
                if tls.early_data_accepted == Some(true) {
                    self.early_data_accepted += 1;
                }
            }
            if let (Some(v), Some(r)) = (&tls.version, tls.handshake_rtts) {
                self.handshake_rtts.entry(v.clone()).or_default().push(r);
            }
        }
        if let Some(tfo) = &c.handshake.tfo {
            if tfo.syn_data_bytes > 0 {
                self.tfo_attempts += 1;
                if tfo.outcome == "accepted" {
                    self.tfo_accepted += 1;
                }
            }
        }
        let mut seen = std::collections::BTreeSet::new();
        for x in &c.findings {
            let cause = self.causes.entry(x.kind).or_default();
            if seen.insert(x.kind) {
                cause.connections += 1;
            }
            cause.cost_ms += x.cost_ms;
            cause.latency_ms += x.attributed_ms;
            self.explained_ms += x.attributed_ms;
            if is_stall(x) {
                cause.stall_ms += x.cost_ms;
                self.stall_ms_total += x.cost_ms;
            }
            if cause.fix.is_empty() {
                cause.fix = x.fix.clone();
            }
        }
        if self.rows.len() < ROWS_KEPT {
            self.rows.push(row(c));
        } else {
            self.rows_dropped += 1;
        }
        if c.excess_rtts >= OVER_IDEAL_RTTS {
            self.worst.push(c.clone());
            self.worst.sort_by(|a, b| {
                b.excess_rtts
                    .total_cmp(&a.excess_rtts)
                    .then(a.stream.cmp(&b.stream))
            });
            self.worst.truncate(WORST_KEPT);
        }
    }
}

fn row(c: &ConnectionReport) -> ConnectionRow {
    let first_byte = c.ledger.iter().find(|r| r.phase == "first_byte");
    ConnectionRow {
        stream: c.stream,
        client: c.client.to_string(),
        server: c.server.to_string(),
        vantage: c.vantage,
        rtt_ms: c.rtt_ms,
        tcp_handshake_ms: c.tcp_handshake_ms,
        tls_version: c.tls.as_ref().and_then(|t| t.version.clone()),
        tls_rtts: c.tls.as_ref().and_then(|t| t.handshake_rtts),
        tls_ideal: c.tls.as_ref().and_then(|t| t.ideal_handshake_rtts),
        first_byte_ms: first_byte.map(|r| r.duration_ms),
        exchanges: c.exchanges,
        excess_rtts: c.excess_rtts,
        excess_ms: c.excess_ms,
        stall_ms: c
            .findings
            .iter()
            .filter(|x| is_stall(x))
            .map(|x| x.cost_ms)
            .sum(),
        worst_phase: worst_row(c).map(|r| r.label.clone()),
        partial: c.partial,
        findings: {
            let mut k: Vec<&'static str> = c
                .findings
                .iter()
                .filter(|x| x.kind != "tls_extra_rtt")
                .map(|x| x.kind)
                .collect();
            k.dedup();
            k
        },
    }
}

/// Nearest-rank percentile of unsorted values.
pub fn percentile(values: &[f64], p: f64) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let rank = ((p / 100.0) * v.len() as f64).ceil().max(1.0) as usize;
    Some(v[rank.min(v.len()) - 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let v = [5.0, 1.0, 3.0, 2.0, 4.0];
        assert_eq!(percentile(&v, 50.0), Some(3.0));
        assert_eq!(percentile(&v, 95.0), Some(5.0));
        assert_eq!(percentile(&v, 0.0), Some(1.0));
        assert_eq!(percentile(&[], 50.0), None);
    }
}
