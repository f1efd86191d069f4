//! Output for programs: one JSON document, written as connections finish so
//! memory stays bounded. Layout and field meanings: docs/json-schema.md.
//! `schema_version` changes whenever a field is removed or changes meaning.

use std::io::{self, Write};

use rttdoc_model::{CaptureStats, ConnectionReport, SCHEMA_VERSION};
use serde::Serialize;

use crate::summary::Summary;

pub struct JsonWriter<W: Write> {
    out: W,
    first: bool,
    /// One connection's JSON, written to `out` at once: the serializer
    /// makes many small writes, cheap into a Vec and costly through a
    /// `dyn Write` (9% of a churn capture's pass).
    buf: Vec<u8>,
}

#[derive(Serialize)]
struct VersionStats {
    connections: u64,
    handshake_rtts_p50: Option<f64>,
    handshake_rtts_p95: Option<f64>,
}

/// The document's `summary` object.
#[derive(Serialize)]
pub(crate) struct SummaryJson<'a> {
    connections: u64,
    translated_copies: u64,
    over_ideal: u64,
    excess_ms_total: f64,
    explained_ms: f64,
    unexplained_ms: f64,
    client_turnaround_ms: f64,
    server_turnaround_ms: f64,
    path_queue_ms: f64,
    stall_ms_total: f64,
    tls_connections: u64,
    tls_resumed: u64,
    tfo_attempts: u64,
    tfo_accepted: u64,
    early_data_sent: u64,
    early_data_accepted: u64,
    partial_connections: u64,
    /// Connections a relay answered (absent when none).
    #[serde(skip_serializing_if = "is_zero")]
    relayed_connections: u64,
    mptcp_split_subflows: u64,
    /// Connections whose name lookup the capture holds (absent when none).
    #[serde(skip_serializing_if = "is_zero")]
    name_lookups: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    name_lookup_ms: Option<f64>,
    /// Connections that never opened (absent when none).
    #[serde(skip_serializing_if = "Option::is_none")]
    never_opened: Option<&'a crate::summary::NeverOpened>,
    handshake_rtts_by_version: std::collections::BTreeMap<String, VersionStats>,
    worst_streams: Vec<u64>,
    causes: &'a std::collections::BTreeMap<rttdoc_model::FindingKind, crate::summary::Cause>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl<'a> SummaryJson<'a> {
    pub(crate) fn of(s: &'a Summary) -> Self {
        SummaryJson {
            connections: s.connections,
            translated_copies: s.translated_copies,
            over_ideal: s.over_ideal,
            excess_ms_total: s.excess_ms_total,
            explained_ms: s.explained_ms,
            unexplained_ms: s.unexplained_ms,
            client_turnaround_ms: s.client_turnaround_ms,
            server_turnaround_ms: s.server_turnaround_ms,
            path_queue_ms: s.path_queue_ms,
            stall_ms_total: s.stall_ms_total,
            tls_connections: s.tls_connections,
            tls_resumed: s.resumed,
            tfo_attempts: s.tfo_attempts,
            tfo_accepted: s.tfo_accepted,
            early_data_sent: s.early_data_sent,
            early_data_accepted: s.early_data_accepted,
            partial_connections: s.partial,
            relayed_connections: s.relayed,
            mptcp_split_subflows: s.mptcp_split_subflows,
            name_lookups: s.name_lookups,
            name_lookup_ms: (s.name_lookups > 0).then_some(s.name_lookup_ms),
            never_opened: Some(&s.never_opened).filter(|n| n.total() > 0),
            handshake_rtts_by_version: s
                .handshake_rtts
                .iter()
                .map(|(v, values)| {
                    (
                        v.to_string(),
                        VersionStats {
                            connections: values.len(),
                            handshake_rtts_p50: values.percentile(50.0),
                            handshake_rtts_p95: values.percentile(95.0),
                        },
                    )
                })
                .collect(),
            worst_streams: s.worst.sorted().iter().map(|c| c.stream).collect(),
            causes: &s.causes,
        }
    }
}

impl<W: Write> JsonWriter<W> {
    pub fn begin(mut out: W) -> io::Result<Self> {
        write!(
            out,
            "{{\"schema_version\":{SCHEMA_VERSION},\"generator\":\"rttdoc {}\",\"connections\":[",
            env!("CARGO_PKG_VERSION")
        )?;
        Ok(JsonWriter {
            out,
            first: true,
            buf: Vec::with_capacity(16 * 1024),
        })
    }

    pub fn connection(&mut self, c: &ConnectionReport) -> io::Result<()> {
        if !self.first {
            self.out.write_all(b",")?;
        }
        self.first = false;
        self.out.write_all(b"\n")?;
        self.buf.clear();
        crate::json_ser::to_vec(&mut self.buf, c)?;
        self.out.write_all(&self.buf)?;
        Ok(())
    }

    pub fn end(mut self, stats: &CaptureStats, s: &Summary) -> io::Result<W> {
        let summary = SummaryJson::of(s);
        self.out.write_all(b"\n],\"capture\":")?;
        serde_json::to_writer(&mut self.out, stats)?;
        if let Some(quic) = worded_quic(stats) {
            self.out.write_all(b",\"quic\":")?;
            serde_json::to_writer(&mut self.out, &quic)?;
        }
        self.out.write_all(b",\"summary\":")?;
        serde_json::to_writer(&mut self.out, &summary)?;
        self.out.write_all(b"}\n")?;
        self.out.flush()?;
        Ok(self.out)
    }
}

/// The capture's QUIC connections with their findings worded, when it
/// has any (the document's `quic`, beside `capture`).
pub fn worded_quic(stats: &CaptureStats) -> Option<rttdoc_model::QuicSection> {
    let mut quic = stats.quic.as_deref()?.clone();
    for c in &mut quic.listed {
        crate::words::word_quic(c);
    }
    Some(quic)
}
