//! rttdoc's Prometheus metrics, defined once here for both their users:
//! `rttdoc monitor` (live, served on /metrics) and `rttdoc analyze
//! --format prometheus` (a capture's totals, for node_exporter's textfile
//! collector). docs/metrics.md documents every metric; a test checks it
//! names exactly the families registered here.
//!
//! Conventions: base units (seconds), `_total` counters, histograms with
//! buckets chosen for what they measure, and labels of bounded
//! cardinality: `vantage` (4 values), `tls_version` (a handful), finding
//! `kind` and outcomes (the closed tables of rttdoc-analyze), and `server`,
//! which is `other` unless the connection's server address:port or SNI is
//! one the user listed (`--label-server`), so a scan or a busy proxy
//! cannot grow the series without bound.

use std::collections::HashMap;
use std::io::{self, Write};
use std::sync::atomic::AtomicU64;
use std::sync::Mutex;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::metrics::info::Info;
use prometheus_client::registry::{Registry, Unit};
use rttdoc_model::{
    CaptureStats, ConnectionReport, CostRule, Finding, FindingKind, Phase, QuicConnectionReport,
    TfoOutcome,
};

use crate::render::Renderer;
use crate::summary::{first_byte_ms, Summary};

/// The metric name prefix.
pub const PREFIX: &str = "rttdoc";

/// The `server` label of connections whose server is not listed.
pub const OTHER_SERVER: &str = "other";

/// Handshake and first-byte times, in seconds: from a LAN's fraction of a
/// millisecond through intercontinental round trips (100-300 ms) to the
/// 1 s, 3 s steps of SYN retransmission timeouts.
const SECONDS_BUCKETS: [f64; 16] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 1.0, 2.0, 3.5, 7.5,
    15.0,
];

/// Handshake round trips: TLS 1.3's 1, TLS 1.2's 2, and each extra round
/// trip (a Nagle hold, a HelloRetryRequest, an initcwnd pause) one step up,
/// with quarter steps between 1 and 3 so that quantiles like "P95 above
/// 1.5 RTT" read from the buckets themselves, not from interpolation
/// across a whole round trip.
const ROUND_TRIP_BUCKETS: [f64; 15] = [
    0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0, 2.25, 2.5, 2.75, 3.0, 4.0, 5.0, 7.0, 10.0,
];

/// Excess round trips per connection: 0 (the ideal; `le="0"` counts
/// connections with nothing lost) up to the dozens a retransmission
/// timeout costs on a short path.
const EXCESS_BUCKETS: [f64; 13] = [
    0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0, 25.0, 50.0, 100.0,
];

fn seconds_histogram() -> Histogram {
    Histogram::new(SECONDS_BUCKETS.into_iter())
}

fn round_trip_histogram() -> Histogram {
    Histogram::new(ROUND_TRIP_BUCKETS.into_iter())
}

fn excess_histogram() -> Histogram {
    Histogram::new(EXCESS_BUCKETS.into_iter())
}

/// Whether a finding's cost is time lost (`rttdoc_time_lost_seconds_total`):
/// waits and round trips the ideal prices in; no savings, summaries or
/// risks, so a sum over kinds counts no time twice.
fn counts_as_lost(f: &Finding) -> bool {
    matches!(
        f.kind.cost_rule(),
        CostRule::Waits | CostRule::PricedIntoIdeal
    ) && f.cost_ms > 0.0
}

/// A finding's labels on a connection of these labels.
fn finding_labels(f: &Finding, vantage: &str, server: &str) -> FindingLabels {
    FindingLabels {
        kind: f.kind.name().to_string(),
        vantage: vantage.to_string(),
        server: server.to_string(),
    }
}

/// Labels of per-connection series.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ConnectionLabels {
    /// `client`, `server`, `middle` or `unknown`.
    pub vantage: String,
    /// `TLS 1.3`, `TLS 1.2`, ... ; `none` without TLS; `unknown` when no
    /// ServerHello was seen.
    pub tls_version: String,
    /// A listed server, or `other`.
    pub server: String,
}

/// Labels of finding series.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct FindingLabels {
    /// The finding kind's JSON name (docs/findings.md).
    pub kind: String,
    /// `client`, `server`, `middle` or `unknown`.
    pub vantage: String,
    /// A listed server, or `other`.
    pub server: String,
}

/// Labels of QUIC connections' series.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct QuicLabels {
    /// `client`, `server`, `middle` or `unknown`.
    pub vantage: String,
    /// `1`, `2`, `draft-29` ... (a handful).
    pub quic_version: String,
    /// A listed server, or `other`.
    pub server: String,
}

/// Labels of outcome series (TFO, 0-RTT, resumption).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct OutcomeLabels {
    /// What happened.
    pub outcome: String,
    /// A listed server, or `other`.
    pub server: String,
}

/// Labels of series that split by server only.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ServerLabels {
    /// A listed server, or `other`.
    pub server: String,
}

/// Labels of per-direction series.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct DirectionLabels {
    /// `client_to_server` or `server_to_client`.
    pub direction: String,
    /// A listed server, or `other`.
    pub server: String,
}

type HistogramFamily<L> = Family<L, Histogram, fn() -> Histogram>;
type SecondsCounter = Counter<f64, AtomicU64>;

/// What a capture source counts, for the capture-wide series.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CaptureCounts {
    /// Frames read.
    pub frames: u64,
    /// Packets the analysis skipped as damaged.
    pub damaged: u64,
    /// Of those, the ones the snap length cut inside their headers.
    pub snap_cut: u64,
    /// TCP segments whose payload (not headers) the snap length cut.
    pub snap_cut_payloads: u64,
    /// Connections finished early over `--max-flows`.
    pub evicted_flows: u64,
    /// Packets the kernel dropped before rttdoc read them (live only).
    pub dropped: u64,
    /// Connections tracked right now (lone SYNs included).
    pub open_flows: u64,
}

impl CaptureCounts {
    /// The counts a finished file analysis has (nothing is dropped by a
    /// file reader, and nothing is open at its end).
    pub fn of_file(stats: &CaptureStats) -> CaptureCounts {
        CaptureCounts {
            frames: stats.frames,
            damaged: stats.damaged,
            snap_cut: stats.snap_cut,
            snap_cut_payloads: stats.snap_cut_payloads,
            evicted_flows: stats.evicted_flows,
            dropped: 0,
            open_flows: 0,
        }
    }
}

/// Every rttdoc metric, registered in one [`Registry`]. The series are
/// atomics: one thread may [`Metrics::observe`] while another encodes.
pub struct Metrics {
    registry: Registry,
    servers: Vec<String>,
    connections: Family<ConnectionLabels, Counter>,
    translated_copies: Counter,
    tcp_handshake: HistogramFamily<ConnectionLabels>,
    name_lookup: HistogramFamily<ConnectionLabels>,
    tls_handshake: HistogramFamily<ConnectionLabels>,
    tls_round_trips: HistogramFamily<ConnectionLabels>,
    first_byte: HistogramFamily<ConnectionLabels>,
    think_time: HistogramFamily<ConnectionLabels>,
    excess: HistogramFamily<ConnectionLabels>,
    quic_connections: Family<QuicLabels, Counter>,
    quic_handshake: HistogramFamily<QuicLabels>,
    quic_round_trips: HistogramFamily<QuicLabels>,
    findings: Family<FindingLabels, Counter>,
    lost: Family<FindingLabels, SecondsCounter>,
    tfo: Family<OutcomeLabels, Counter>,
    tfo_attempts: Family<ServerLabels, Counter>,
    early_data: Family<OutcomeLabels, Counter>,
    resumption: Family<OutcomeLabels, Counter>,
    hello_retry: Family<ServerLabels, Counter>,
    retransmissions: Family<DirectionLabels, Counter>,
    syn_retransmits: Family<ServerLabels, Counter>,
    frames: Counter,
    damaged: Counter,
    snap_cut: Counter,
    snap_cut_payloads: Counter,
    dropped: Counter,
    evicted: Counter,
    open_flows: Gauge,
    /// What the later windows of long connections still open were counted
    /// as ([`Metrics::observe_window`]): per stream, per finding kind, the
    /// milliseconds lost counted so far. The connection's report, when it
    /// finishes, counts the rest; the entry goes with it.
    live: Mutex<HashMap<u64, Vec<(FindingKind, f64)>>>,
}

impl Metrics {
    /// The metrics, with the `server` label given only to connections whose
    /// server (`10.0.0.5:443`, `[2001:db8::1]:443`) or SNI (`example.com`)
    /// is in `label_servers`.
    pub fn new(label_servers: &[String]) -> Metrics {
        let mut r = Registry::with_prefix(PREFIX);
        let hist = |f: fn() -> Histogram| HistogramFamily::new_with_constructor(f);
        let m = Metrics {
            registry: Registry::default(),
            servers: label_servers.to_vec(),
            connections: Family::default(),
            translated_copies: Counter::default(),
            tcp_handshake: hist(seconds_histogram),
            name_lookup: hist(seconds_histogram),
            tls_handshake: hist(seconds_histogram),
            tls_round_trips: hist(round_trip_histogram),
            first_byte: hist(seconds_histogram),
            think_time: hist(seconds_histogram),
            excess: hist(excess_histogram),
            quic_connections: Family::default(),
            quic_handshake: HistogramFamily::new_with_constructor(seconds_histogram),
            quic_round_trips: HistogramFamily::new_with_constructor(round_trip_histogram),
            findings: Family::default(),
            lost: Family::default(),
            tfo: Family::default(),
            tfo_attempts: Family::default(),
            early_data: Family::default(),
            resumption: Family::default(),
            hello_retry: Family::default(),
            retransmissions: Family::default(),
            syn_retransmits: Family::default(),
            frames: Counter::default(),
            damaged: Counter::default(),
            snap_cut: Counter::default(),
            snap_cut_payloads: Counter::default(),
            dropped: Counter::default(),
            evicted: Counter::default(),
            open_flows: Gauge::default(),
            live: Mutex::default(),
        };
        r.register(
            "build",
            "rttdoc's version (always 1)",
            Info::new(vec![("version", env!("CARGO_PKG_VERSION"))]),
        );
        r.register(
            "connections",
            "TCP connections analysed, counted as each finishes",
            m.connections.clone(),
        );
        r.register(
            "translated_copies",
            "Connections that were an earlier connection seen again with translated addresses (NAT; the same sequence numbers both ways), counted here only",
            m.translated_copies.clone(),
        );
        r.register_with_unit(
            "tcp_handshake",
            "SYN to the handshake's ACK (Wireshark's tcp.analysis.initial_rtt)",
            Unit::Seconds,
            m.tcp_handshake.clone(),
        );
        r.register_with_unit(
            "name_lookup",
            "The client's DNS lookup of the server's name before its SYN (first query to last answer), when the capture holds it",
            Unit::Seconds,
            m.name_lookup.clone(),
        );
        r.register_with_unit(
            "tls_handshake",
            "ClientHello to the client's Finished, on the client's clock",
            Unit::Seconds,
            m.tls_handshake.clone(),
        );
        r.register(
            "tls_handshake_round_trips",
            "TLS handshake duration in path round trips (ideal: 1 for TLS 1.3, 2 for TLS 1.2)",
            m.tls_round_trips.clone(),
        );
        r.register_with_unit(
            "time_to_first_byte",
            "The connection's first request to its response's first byte",
            Unit::Seconds,
            m.first_byte.clone(),
        );
        r.register_with_unit(
            "server_think_time",
            "Per request: request to first byte beyond one round trip (the server's time)",
            Unit::Seconds,
            m.think_time.clone(),
        );
        r.register(
            "excess_round_trips",
            "Round trips per connection beyond the ideal, in the latency phases",
            m.excess.clone(),
        );
        r.register(
            "quic_connections",
            "QUIC connections (a client's Initial on a UDP 4-tuple), counted as each finishes",
            m.quic_connections.clone(),
        );
        r.register_with_unit(
            "quic_handshake",
            "A QUIC connection's first Initial to the client's first 1-RTT packet",
            Unit::Seconds,
            m.quic_handshake.clone(),
        );
        r.register(
            "quic_handshake_round_trips",
            "QUIC handshake duration in path round trips (ideal: 1)",
            m.quic_round_trips.clone(),
        );
        r.register(
            "findings",
            "Findings (docs/findings.md), one per kind per connection that had it (TCP and QUIC)",
            m.findings.clone(),
        );
        r.register_with_unit(
            "time_lost",
            "Time the findings cost, by kind (waits and round trips priced into the ideal; savings and summaries excluded)",
            Unit::Seconds,
            m.lost.clone(),
        );
        r.register(
            "tfo",
            "TCP Fast Open outcomes on SYNs (cookie_request, accepted, rejected, cookie_without_data, no_answer)",
            m.tfo.clone(),
        );
        r.register(
            "tfo_attempts",
            "SYNs that carried data under a Fast Open cookie (accepted + rejected + no_answer)",
            m.tfo_attempts.clone(),
        );
        r.register(
            "early_data",
            "TLS 1.3 0-RTT: offered in the ClientHello, accepted, rejected, unsafe (a non-idempotent request)",
            m.early_data.clone(),
        );
        r.register(
            "resumption",
            "TLS session resumption: offered (PSK or ticket), accepted, missed (full handshake despite the offer)",
            m.resumption.clone(),
        );
        r.register(
            "hello_retry_requests",
            "TLS HelloRetryRequests (the server wanted another key share: one round trip more)",
            m.hello_retry.clone(),
        );
        r.register(
            "retransmissions",
            "TCP segments sent again (not probes, not capture copies), by sender",
            m.retransmissions.clone(),
        );
        r.register(
            "syn_retransmits",
            "SYNs sent again (a lost SYN or SYN-ACK, a full SYN queue)",
            m.syn_retransmits.clone(),
        );
        r.register(
            "capture_packets",
            "Frames read from the interface or file",
            m.frames.clone(),
        );
        r.register(
            "capture_damaged_packets",
            "Packets skipped because their headers were broken or cut",
            m.damaged.clone(),
        );
        r.register(
            "capture_snap_cut_packets",
            "Damaged packets the capture's snap length cut before their headers ended (a capture setting: capture whole packets)",
            m.snap_cut.clone(),
        );
        r.register(
            "capture_snap_cut_payload_segments",
            "TCP segments whose payload the capture's snap length cut after their headers (timed whole; TLS and HTTP read only as far as kept)",
            m.snap_cut_payloads.clone(),
        );
        r.register(
            "capture_dropped_packets",
            "Packets the kernel dropped before rttdoc read them (live capture; 0 for a file)",
            m.dropped.clone(),
        );
        r.register(
            "flows_evicted",
            "Connections finished early because more than --max-flows were open",
            m.evicted.clone(),
        );
        r.register(
            "open_flows",
            "Connections tracked right now (lone SYNs included)",
            m.open_flows.clone(),
        );
        Metrics { registry: r, ..m }
    }

    /// A connection's labels.
    fn connection_labels(&self, c: &ConnectionReport) -> ConnectionLabels {
        let tls_version = match &c.tls {
            None => "none".to_string(),
            Some(t) => t
                .version
                .map(|v| v.to_string())
                .unwrap_or_else(|| "unknown".into()),
        };
        ConnectionLabels {
            vantage: c.vantage.as_str().to_string(),
            tls_version,
            server: self.server_label(c),
        }
    }

    /// Each request's server think time, from the ledger's first-byte
    /// rows, where the round trip is known. (A row summing a long
    /// connection's later exchanges is no one answer's wait: its windows'
    /// own rows were observed as they came, `observe_window`, and the last
    /// window's come with the report, `LaterWindows::last_rows`.)
    fn observe_think_times(&self, c: &ConnectionReport, labels: &ConnectionLabels) {
        let Some(rtt) = c.rtt_ms else { return };
        // (The last window's rows, summed in the report, were never
        // handed on: they come with it.)
        let last = c.later_windows.iter().flat_map(|l| &l.last_rows);
        for row in c
            .ledger
            .iter()
            .chain(last)
            .filter(|r| r.phase == Phase::FirstByte && r.summed == 0)
        {
            let think = (row.duration_ms - rtt).max(0.0);
            self.think_time.get_or_create(labels).observe(think / 1e3);
        }
    }

    /// The `server` label for a connection.
    fn server_label(&self, c: &ConnectionReport) -> String {
        if self.servers.is_empty() {
            return OTHER_SERVER.into();
        }
        let endpoint = c.server.to_string();
        let sni = c.tls.as_ref().and_then(|t| t.sni.as_deref());
        self.servers
            .iter()
            .find(|s| **s == endpoint || sni.is_some_and(|n| n.eq_ignore_ascii_case(s)))
            .cloned()
            .unwrap_or_else(|| OTHER_SERVER.into())
    }

    /// Counts one finished QUIC connection.
    pub fn observe_quic(&self, c: &QuicConnectionReport) {
        let endpoint = c.server.to_string();
        let sni = c.server_name.as_deref();
        let server = self
            .servers
            .iter()
            .find(|s| **s == endpoint || sni.is_some_and(|n| n.eq_ignore_ascii_case(s)))
            .cloned()
            .unwrap_or_else(|| OTHER_SERVER.into());
        let vantage = c.vantage.as_str().to_string();
        let labels = QuicLabels {
            vantage: vantage.clone(),
            quic_version: c.version.name(),
            server: server.clone(),
        };
        self.quic_connections.get_or_create(&labels).inc();
        if let Some(ms) = c.handshake_ms {
            self.quic_handshake.get_or_create(&labels).observe(ms / 1e3);
        }
        if let Some(rtts) = c.ledger.first().and_then(|r| r.rtts) {
            self.quic_round_trips.get_or_create(&labels).observe(rtts);
        }
        self.count_findings(&c.findings, &vantage, &server, Vec::new());
    }

    /// A connection's findings: one per kind in `findings`, their costs
    /// in `time_lost` (waits and round trips the ideal prices in; no
    /// savings, summaries or risks, so a sum over kinds counts no time
    /// twice). `counted` is what was counted of the connection already,
    /// per kind (its later windows, while it was open): a kind in it is
    /// not counted again, and only the cost beyond it is added.
    fn count_findings(
        &self,
        findings: &[Finding],
        vantage: &str,
        server: &str,
        mut counted: Vec<(FindingKind, f64)>,
    ) {
        for f in findings {
            let fl = finding_labels(f, vantage, server);
            let before = self.count_kind(f, &fl, &mut counted);
            if counts_as_lost(f) {
                // (A kind's findings share what was counted before.)
                let already = before.min(f.cost_ms);
                *before -= already;
                if f.cost_ms > already {
                    self.lost
                        .get_or_create(&fl)
                        .inc_by((f.cost_ms - already) / 1e3);
                }
            }
        }
    }

    /// Counts what a later window of a long connection found while the
    /// connection is still open (`rttdoc_analyze::ReportSink::window`;
    /// its `tls` says the connection's version and server name, the
    /// labels its report will have): its requests' server think times, a
    /// finding kind the connection had not shown yet in
    /// `rttdoc_findings_total`, its cost in `rttdoc_time_lost_seconds_total`.
    /// Its report, when the connection finishes, counts only the rest (its
    /// rows summing the windows' are no request's).
    pub fn observe_window(&self, w: &ConnectionReport) {
        let labels = self.connection_labels(w);
        self.observe_think_times(w, &labels);
        let mut live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        let counted = live.entry(w.stream).or_default();
        for f in &w.findings {
            let fl = finding_labels(f, &labels.vantage, &labels.server);
            let ms = self.count_kind(f, &fl, counted);
            if counts_as_lost(f) {
                self.lost.get_or_create(&fl).inc_by(f.cost_ms / 1e3);
                *ms += f.cost_ms;
            }
        }
    }

    /// Counts `f`'s kind in `rttdoc_findings_total` unless the connection
    /// showed it already (`counted`: its kinds so far, each with the
    /// milliseconds of it counted while it was open); returns the kind's
    /// milliseconds.
    fn count_kind<'c>(
        &self,
        f: &Finding,
        fl: &FindingLabels,
        counted: &'c mut Vec<(FindingKind, f64)>,
    ) -> &'c mut f64 {
        let at = match counted.iter().position(|(k, _)| *k == f.kind) {
            Some(i) => i,
            None => {
                self.findings.get_or_create(fl).inc();
                counted.push((f.kind, 0.0));
                counted.len() - 1
            }
        };
        &mut counted[at].1
    }

    /// What was counted of a connection while it was open (its later
    /// windows), taken as it finishes.
    fn counted_live(&self, stream: u64) -> Vec<(FindingKind, f64)> {
        let mut live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        live.remove(&stream).unwrap_or_default()
    }

    /// Counts one finished connection.
    pub fn observe(&self, c: &ConnectionReport) {
        let counted = self.counted_live(c.stream);
        if c.same_connection_as.is_some() {
            // Its waits are the earlier connection's, already counted.
            self.translated_copies.inc();
            return;
        }
        let labels = self.connection_labels(c);
        let (vantage, server) = (labels.vantage.clone(), labels.server.clone());
        self.connections.get_or_create(&labels).inc();
        if let Some(ms) = c.tcp_handshake_ms {
            self.tcp_handshake.get_or_create(&labels).observe(ms / 1e3);
        }
        if let Some(l) = &c.name_lookup {
            self.name_lookup.get_or_create(&labels).observe(l.ms / 1e3);
        }
        if let Some(t) = &c.tls {
            if let Some(ms) = t.handshake_ms {
                self.tls_handshake.get_or_create(&labels).observe(ms / 1e3);
            }
            if let Some(rtts) = t.handshake_rtts {
                self.tls_round_trips.get_or_create(&labels).observe(rtts);
            }
        }
        if let Some(ms) = first_byte_ms(c) {
            self.first_byte.get_or_create(&labels).observe(ms / 1e3);
        }
        self.observe_think_times(c, &labels);
        // Only connections whose ledger could be priced (an RTT is known).
        if c.rtt_ms.is_some() {
            self.excess.get_or_create(&labels).observe(c.excess_rtts);
        }

        self.count_findings(&c.findings, &vantage, &server, counted);

        let outcome = |family: &Family<OutcomeLabels, Counter>, what: &str| {
            family
                .get_or_create(&OutcomeLabels {
                    outcome: what.into(),
                    server: server.clone(),
                })
                .inc();
        };
        let by_server = ServerLabels {
            server: server.clone(),
        };
        if let Some(tfo) = &c.handshake.tfo {
            outcome(&self.tfo, tfo.outcome.name());
            if matches!(
                tfo.outcome,
                TfoOutcome::Accepted | TfoOutcome::Rejected | TfoOutcome::NoAnswer
            ) {
                self.tfo_attempts.get_or_create(&by_server).inc();
            }
        }
        if let Some(t) = &c.tls {
            if t.early_data_offered {
                outcome(&self.early_data, "offered");
            }
            match t.early_data_accepted {
                Some(true) => outcome(&self.early_data, "accepted"),
                Some(false) => outcome(&self.early_data, "rejected"),
                None => {}
            }
            if t.psk_offered || t.session_ticket_offered {
                outcome(&self.resumption, "offered");
            }
            if t.resumed == Some(true) {
                outcome(&self.resumption, "accepted");
            }
            if t.hello_retry_request {
                self.hello_retry.get_or_create(&by_server).inc();
            }
        }
        let has = |k: FindingKind| c.findings.iter().any(|f| f.kind == k);
        if has(FindingKind::EarlyDataUnsafe) {
            outcome(&self.early_data, "unsafe");
        }
        if has(FindingKind::ResumptionMissed) {
            outcome(&self.resumption, "missed");
        }
        for (direction, stats) in [
            ("client_to_server", &c.client_to_server),
            ("server_to_client", &c.server_to_client),
        ] {
            if stats.retransmissions > 0 {
                self.retransmissions
                    .get_or_create(&DirectionLabels {
                        direction: direction.into(),
                        server: server.clone(),
                    })
                    .inc_by(stats.retransmissions as u64);
            }
        }
        if c.handshake.syn_retransmits > 0 {
            self.syn_retransmits
                .get_or_create(&by_server)
                .inc_by(c.handshake.syn_retransmits as u64);
        }
    }

    /// Brings the capture-wide series to these totals (each a running
    /// total of its source; a counter never goes back).
    pub fn set_capture(&self, counts: CaptureCounts) {
        for (counter, total) in [
            (&self.frames, counts.frames),
            (&self.damaged, counts.damaged),
            (&self.snap_cut, counts.snap_cut),
            (&self.snap_cut_payloads, counts.snap_cut_payloads),
            (&self.evicted, counts.evicted_flows),
            (&self.dropped, counts.dropped),
        ] {
            let now = counter.get();
            if total > now {
                counter.inc_by(total - now);
            }
        }
        self.open_flows
            .set(counts.open_flows.min(i64::MAX as u64) as i64);
    }

    /// The OpenMetrics text exposition (`application/openmetrics-text`).
    pub fn openmetrics(&self) -> String {
        let mut s = String::with_capacity(16 * 1024);
        prometheus_client::encoding::text::encode(&mut s, &self.registry)
            .expect("writing to a String");
        series_in_order(&s)
    }

    /// The Prometheus text format 0.0.4 (`text/plain; version=0.0.4`), as
    /// node_exporter's textfile collector and `promtool check metrics`
    /// read it.
    pub fn prometheus_text(&self) -> String {
        openmetrics_to_prometheus_text(&self.openmetrics())
    }
}

/// The exposition with each family's series in the order of their labels:
/// a family keeps its series in a hash map, whose order changes from one
/// run to the next, and the same counts should read the same (a textfile
/// diffed from one day to the next, `--threads 1` against `--threads N`).
/// A histogram's lines stay together in the order written (its `le`
/// is not part of the order).
fn series_in_order(exposition: &str) -> String {
    let mut out = String::with_capacity(exposition.len());
    let mut samples: Vec<&str> = Vec::new();
    let flush = |samples: &mut Vec<&str>, out: &mut String| {
        // (A stable sort: a series' own lines keep their order.)
        samples.sort_by_cached_key(|l| series_labels(l));
        for l in samples.drain(..) {
            out.push_str(l);
            out.push('\n');
        }
    };
    for line in exposition.lines() {
        if line.starts_with('#') {
            flush(&mut samples, &mut out);
            out.push_str(line);
            out.push('\n');
        } else {
            samples.push(line);
        }
    }
    flush(&mut samples, &mut out);
    out
}

/// A sample line's labels but `le`, as written (quoted values may hold
/// commas and braces).
fn series_labels(line: &str) -> Vec<&str> {
    let Some(open) = line.find('{') else {
        return Vec::new();
    };
    let mut labels = Vec::new();
    let (mut start, mut quoted, mut escaped) = (open + 1, false, false);
    for (i, ch) in line.char_indices().skip_while(|(i, _)| *i <= open) {
        match ch {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            ',' | '}' if !quoted => {
                let label = &line[start..i];
                if !label.is_empty() && !label.starts_with("le=") {
                    labels.push(label);
                }
                start = i + 1;
                if ch == '}' {
                    break;
                }
            }
            _ => {}
        }
    }
    labels
}

/// Rewrites an OpenMetrics exposition in the Prometheus text format 0.0.4:
/// a counter family `x` (samples `x_total`) is declared as `x_total`, an
/// info family `x` (sample `x_info`) as the gauge `x_info`, and the
/// OpenMetrics-only lines (`# UNIT`, `# EOF`) go. Samples are unchanged.
pub fn openmetrics_to_prometheus_text(om: &str) -> String {
    use std::collections::HashMap;
    let mut types: HashMap<&str, &str> = HashMap::new();
    for line in om.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            if let Some((name, ty)) = rest.split_once(' ') {
                types.insert(name, ty);
            }
        }
    }
    let renamed = |name: &str| -> (String, Option<&'static str>) {
        match types.get(name).copied() {
            Some("counter") => (format!("{name}_total"), None),
            Some("info") => (format!("{name}_info"), Some("gauge")),
            _ => (name.to_string(), None),
        }
    };
    let mut out = String::with_capacity(om.len());
    for line in om.lines() {
        if line.starts_with("# UNIT ") || line == "# EOF" {
            continue;
        }
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let (name, help) = rest.split_once(' ').unwrap_or((rest, ""));
            let (name, _) = renamed(name);
            out.push_str(&format!("# HELP {name} {help}\n"));
        } else if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, ty) = rest.split_once(' ').unwrap_or((rest, "untyped"));
            let (name, new_ty) = renamed(name);
            out.push_str(&format!("# TYPE {name} {}\n", new_ty.unwrap_or(ty)));
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// `rttdoc analyze --format prometheus`: the capture's totals in the
/// Prometheus text format, for node_exporter's textfile collector.
pub struct PrometheusRenderer<'w> {
    out: Box<dyn Write + 'w>,
    metrics: Metrics,
}

impl<'w> PrometheusRenderer<'w> {
    /// With the `server` label for these servers (see [`Metrics::new`]).
    pub fn new(out: Box<dyn Write + 'w>, label_servers: &[String]) -> Self {
        PrometheusRenderer {
            out,
            metrics: Metrics::new(label_servers),
        }
    }
}

impl Renderer for PrometheusRenderer<'_> {
    fn connection(&mut self, c: &ConnectionReport) -> io::Result<()> {
        self.metrics.observe(c);
        Ok(())
    }

    /// Counted as `rttdoc monitor` counts it, so that a capture's totals
    /// are the monitor's of the same traffic (each window's requests'
    /// think times too, which the report sums).
    fn window(&mut self, w: &ConnectionReport) -> io::Result<()> {
        self.metrics.observe_window(w);
        Ok(())
    }

    fn shows_words(&self) -> bool {
        false
    }

    fn finish(mut self: Box<Self>, stats: &CaptureStats, _: &Summary) -> io::Result<()> {
        for c in stats.quic.iter().flat_map(|q| &q.listed) {
            self.metrics.observe_quic(c);
        }
        self.metrics.set_capture(CaptureCounts::of_file(stats));
        self.out
            .write_all(self.metrics.prometheus_text().as_bytes())?;
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{finding, report};
    use rttdoc_model::{LedgerRow, TfoReport, TlsReport, TlsVersion};

    fn first_byte_row(duration_ms: f64) -> LedgerRow {
        LedgerRow {
            phase: Phase::FirstByte,
            label: "GET /".into(),
            exchange: Some(1),
            start_frame: 5,
            end_frame: 6,
            duration_ms,
            rtts: None,
            ideal_rtts: Some(1.0),
            excess_rtts: None,
            excess_ms: None,
            ideal_basis: String::new(),
            summed: 0,
        }
    }

    /// The value of the sample with exactly this name and these labels
    /// (`{a="b",c="d"}` as encoded), from the 0.0.4 text.
    fn sample(text: &str, name_and_labels: &str) -> Option<f64> {
        text.lines().filter(|l| !l.starts_with('#')).find_map(|l| {
            let (series, value) = l.rsplit_once(' ')?;
            (series == name_and_labels).then(|| value.parse().unwrap())
        })
    }

    #[test]
    fn the_same_counts_read_the_same_every_time() {
        let servers = ["a.example".to_string(), "10.0.0.9:443".to_string()];
        let connections: Vec<ConnectionReport> = (0..40u16)
            .map(|i| {
                let mut c = report(400 + i);
                c.stream = i as u64;
                c.rtt_ms = Some(1.0 + i as f64);
                c.ledger = vec![first_byte_row(5.0 * i as f64)];
                c.tls = (i % 3 == 0).then(|| {
                    Box::new(TlsReport {
                        version: Some(TlsVersion::TLS13),
                        sni: Some(if i % 2 == 0 { "a.example" } else { "b.example" }.into()),
                        ..Default::default()
                    })
                });
                c.findings = vec![finding(
                    [FindingKind::NagleHold, FindingKind::RtoStall][i as usize % 2],
                    i as f64,
                )];
                c
            })
            .collect();
        let text = |order: &mut dyn Iterator<Item = &ConnectionReport>| {
            let m = Metrics::new(&servers);
            order.for_each(|c| m.observe(c));
            (m.prometheus_text(), m.openmetrics())
        };
        // Each family keeps its series in a hash map seeded anew for each
        // registry: the same counts, made again, come out in another order
        // but for the sort.
        let forward = text(&mut connections.iter());
        for _ in 0..8 {
            assert_eq!(forward, text(&mut connections.iter()));
        }
        // A histogram's buckets stay in order, under their series.
        let buckets: Vec<&str> = forward
            .0
            .lines()
            .filter(|l| l.starts_with("rttdoc_server_think_time_seconds_bucket{le=\"0.0005\""))
            .collect();
        assert!(buckets.len() >= 2, "{}", forward.0);
        assert!(buckets
            .windows(2)
            .all(|w| series_labels(w[0]) < series_labels(w[1])));
    }

    #[test]
    fn a_translated_copy_of_a_connection_counts_only_as_one() {
        let m = Metrics::new(&[]);
        let mut c = report(443);
        c.findings = vec![finding(FindingKind::NagleHold, 20.0)];
        m.observe(&c);
        c.stream = 1;
        c.same_connection_as = Some(0);
        m.observe(&c);
        let t = m.prometheus_text();
        let l = r#"{vantage="client",tls_version="none",server="other"}"#;
        assert_eq!(
            sample(&t, &format!("rttdoc_connections_total{l}")),
            Some(1.0),
            "{t}"
        );
        assert_eq!(sample(&t, "rttdoc_translated_copies_total"), Some(1.0));
        let nagle = r#"{kind="nagle_hold",vantage="client",server="other"}"#;
        assert_eq!(
            sample(&t, &format!("rttdoc_time_lost_seconds_total{nagle}")),
            Some(0.02)
        );
    }

    #[test]
    fn a_long_connections_windows_count_while_it_is_open_and_its_report_only_the_rest() {
        let m = Metrics::new(&["api.example".to_string()]);
        let nagle = r#"{kind="nagle_hold",vantage="client",server="api.example"}"#;
        let rto = r#"{kind="rto_stall",vantage="client",server="api.example"}"#;
        let lost = |t: &str, l: &str| sample(t, &format!("rttdoc_time_lost_seconds_total{l}"));
        let found = |t: &str, l: &str| sample(t, &format!("rttdoc_findings_total{l}"));
        // Two windows of stream 7 while it is open (its TLS only its
        // connection's version and name, as the tracker hands it on), the
        // first with two requests' rows on a 10 ms path.
        let mut w = report(443);
        w.stream = 7;
        w.tls = Some(Box::new(TlsReport {
            version: Some(TlsVersion::TLS13),
            sni: Some("api.example".into()),
            ..Default::default()
        }));
        w.rtt_ms = Some(10.0);
        w.ledger = vec![first_byte_row(12.0), first_byte_row(40.0)];
        w.findings = vec![finding(FindingKind::NagleHold, 300.0)];
        m.observe_window(&w);
        w.ledger.clear();
        let t = m.prometheus_text();
        let l = r#"{vantage="client",tls_version="TLS 1.3",server="api.example"}"#;
        assert_eq!(
            sample(&t, &format!("rttdoc_server_think_time_seconds_count{l}")),
            Some(2.0),
            "{t}"
        );
        assert!(
            (sample(&t, &format!("rttdoc_server_think_time_seconds_sum{l}")).unwrap() - 0.032)
                .abs()
                < 1e-9
        );
        assert_eq!(found(&t, nagle), Some(1.0), "{t}");
        assert_eq!(lost(&t, nagle), Some(0.3));
        assert_eq!(
            sample(
                &t,
                r#"rttdoc_connections_total{vantage="client",tls_version="none",server="api.example"}"#
            ),
            None,
            "not finished: not a connection yet"
        );
        w.findings = vec![
            finding(FindingKind::NagleHold, 200.0),
            finding(FindingKind::RtoStall, 1000.0),
        ];
        m.observe_window(&w);
        // Another connection's report is its own.
        let mut other = report(443);
        other.stream = 8;
        other.tls = Some(Box::new(TlsReport {
            sni: Some("api.example".into()),
            ..Default::default()
        }));
        other.findings = vec![finding(FindingKind::NagleHold, 50.0)];
        m.observe(&other);
        // Stream 7 ends: its report holds the windows' findings joined
        // with its own (timeline and last window: 40 ms more of Nagle,
        // no more RTO), split here between the two senders' findings.
        let mut c = report(443);
        c.stream = 7;
        c.tls = w.tls.clone();
        // Its rows: one of its timeline's requests, and the windows'
        // summed (observed already, one by one).
        c.rtt_ms = Some(10.0);
        let mut summed = first_byte_row(5000.0);
        summed.summed = 400;
        c.ledger = vec![first_byte_row(15.0), summed];
        c.findings = vec![
            finding(FindingKind::NagleHold, 440.0),
            finding(FindingKind::NagleHold, 100.0),
            finding(FindingKind::RtoStall, 1000.0),
        ];
        m.observe(&c);
        let t = m.prometheus_text();
        // Each connection counts once per kind; the time is the reports'.
        assert_eq!(found(&t, nagle), Some(2.0), "{t}");
        assert_eq!(found(&t, rto), Some(1.0));
        assert!((lost(&t, nagle).unwrap() - 0.59).abs() < 1e-9, "{t}");
        assert!((lost(&t, rto).unwrap() - 1.0).abs() < 1e-9);
        assert!(
            m.live.lock().unwrap().is_empty(),
            "the stream's entry went with it"
        );
        assert_eq!(
            sample(&t, &format!("rttdoc_server_think_time_seconds_count{l}")),
            Some(3.0),
            "{t}"
        );
    }

    #[test]
    fn a_nagle_held_tls13_handshake_counts_its_round_trips_finding_and_time_lost() {
        let m = Metrics::new(&[]);
        let mut c = report(443);
        c.tls = Some(Box::new(TlsReport {
            version: Some(TlsVersion::TLS13),
            handshake_ms: Some(40.0),
            handshake_rtts: Some(2.0),
            ideal_handshake_rtts: Some(1.0),
            ..Default::default()
        }));
        c.excess_rtts = 1.0;
        // Two nagle findings on one connection count once as a finding,
        // and both of their costs as time lost; tls_extra_rtt summarises
        // them and must not count again.
        c.findings = vec![
            finding(FindingKind::NagleHold, 20.0),
            finding(FindingKind::NagleHold, 5.0),
            finding(FindingKind::TlsExtraRtt, 25.0),
        ];
        m.observe(&c);
        let t = m.prometheus_text();
        let l = r#"{vantage="client",tls_version="TLS 1.3",server="other"}"#;
        assert_eq!(
            sample(&t, &format!("rttdoc_connections_total{l}")),
            Some(1.0)
        );
        assert_eq!(
            sample(&t, &format!("rttdoc_tls_handshake_round_trips_sum{l}")),
            Some(2.0)
        );
        let b = |le: &str| {
            sample(
                &t,
                &format!(
                    "rttdoc_tls_handshake_round_trips_bucket{{le=\"{le}\",vantage=\"client\",tls_version=\"TLS 1.3\",server=\"other\"}}"
                ),
            )
        };
        assert_eq!(b("1.75"), Some(0.0), "{t}");
        assert_eq!(b("2.0"), Some(1.0));
        assert_eq!(
            sample(&t, &format!("rttdoc_tls_handshake_seconds_sum{l}")),
            Some(0.04)
        );
        let nagle = r#"{kind="nagle_hold",vantage="client",server="other"}"#;
        assert_eq!(
            sample(&t, &format!("rttdoc_findings_total{nagle}")),
            Some(1.0)
        );
        assert_eq!(
            sample(&t, &format!("rttdoc_time_lost_seconds_total{nagle}")),
            Some(0.025)
        );
        let extra = r#"{kind="tls_extra_rtt",vantage="client",server="other"}"#;
        assert_eq!(
            sample(&t, &format!("rttdoc_findings_total{extra}")),
            Some(1.0)
        );
        assert_eq!(
            sample(&t, &format!("rttdoc_time_lost_seconds_total{extra}")),
            None
        );
        assert_eq!(
            sample(&t, &format!("rttdoc_excess_round_trips_sum{l}")),
            Some(1.0)
        );
    }

    #[test]
    fn a_connections_name_lookup_is_observed_when_the_capture_has_it() {
        let m = Metrics::new(&[]);
        let mut c = report(80);
        m.observe(&c);
        c.name_lookup = Some(Box::new(rttdoc_model::NameLookupReport {
            name: "api.example.com".into(),
            resolver: "10.0.0.53".parse().unwrap(),
            first_frame: 1,
            answer_frame: 2,
            last_frame: 2,
            ms: 123.0,
            syn_after_ms: 0.5,
            queries: 2,
            unanswered: 0,
            names_tried: vec![],
            failed_attempts: vec![],
        }));
        m.observe(&c);
        let t = m.prometheus_text();
        let l = r#"{vantage="client",tls_version="none",server="other"}"#;
        assert_eq!(
            sample(&t, &format!("rttdoc_connections_total{l}")),
            Some(2.0)
        );
        // One of the two had its lookup in the capture.
        assert_eq!(
            sample(&t, &format!("rttdoc_name_lookup_seconds_count{l}")),
            Some(1.0)
        );
        assert_eq!(
            sample(&t, &format!("rttdoc_name_lookup_seconds_sum{l}")),
            Some(0.123)
        );
    }

    #[test]
    fn plain_tcp_has_tls_version_none_and_no_tls_series() {
        let m = Metrics::new(&[]);
        let mut c = report(80);
        c.ledger = vec![first_byte_row(50.0), first_byte_row(25.0)];
        m.observe(&c);
        let t = m.prometheus_text();
        let l = r#"{vantage="client",tls_version="none",server="other"}"#;
        assert_eq!(
            sample(&t, &format!("rttdoc_connections_total{l}")),
            Some(1.0)
        );
        assert!(!t.contains("rttdoc_tls_handshake_seconds_count{"), "{t}");
        // First byte: the first request's; think time: each request's wait
        // beyond the 20 ms round trip (30 ms and 5 ms).
        assert_eq!(
            sample(&t, &format!("rttdoc_time_to_first_byte_seconds_sum{l}")),
            Some(0.05)
        );
        assert_eq!(
            sample(&t, &format!("rttdoc_server_think_time_seconds_count{l}")),
            Some(2.0)
        );
        let sum = sample(&t, &format!("rttdoc_server_think_time_seconds_sum{l}")).unwrap();
        assert!((sum - 0.035).abs() < 1e-9, "{sum}");
        assert_eq!(
            sample(&t, &format!("rttdoc_tcp_handshake_seconds_sum{l}")),
            Some(0.02)
        );
    }

    #[test]
    fn tfo_zero_rtt_and_resumption_outcomes_are_counted_by_outcome() {
        let m = Metrics::new(&[]);
        let mut accepted = report(443);
        accepted.handshake.tfo = Some(TfoReport {
            outcome: TfoOutcome::Accepted,
            syn_data_bytes: 300,
            server_sent_cookie: false,
        });
        accepted.tls = Some(Box::new(TlsReport {
            version: Some(TlsVersion::TLS13),
            psk_offered: true,
            resumed: Some(true),
            early_data_offered: true,
            early_data_accepted: Some(true),
            ..Default::default()
        }));
        accepted.findings = vec![finding(FindingKind::EarlyDataUnsafe, 0.0)];
        let mut cookie = report(443);
        cookie.handshake.tfo = Some(TfoReport {
            outcome: TfoOutcome::CookieRequest,
            syn_data_bytes: 0,
            server_sent_cookie: true,
        });
        cookie.tls = Some(Box::new(TlsReport {
            version: Some(TlsVersion::TLS12),
            session_ticket_offered: true,
            session_id_offered: false,
            resumed: Some(false),
            hello_retry_request: true,
            false_start: false,
            ..Default::default()
        }));
        cookie.findings = vec![finding(FindingKind::ResumptionMissed, 20.0)];
        cookie.handshake.syn_retransmits = 2;
        cookie.server_to_client.retransmissions = 3;
        m.observe(&accepted);
        m.observe(&cookie);
        let t = m.prometheus_text();
        let o = |name: &str, outcome: &str| {
            sample(
                &t,
                &format!("rttdoc_{name}_total{{outcome=\"{outcome}\",server=\"other\"}}"),
            )
        };
        assert_eq!(o("tfo", "accepted"), Some(1.0));
        assert_eq!(o("tfo", "cookie_request"), Some(1.0));
        assert_eq!(o("tfo", "rejected"), None);
        assert_eq!(
            sample(&t, r#"rttdoc_tfo_attempts_total{server="other"}"#),
            Some(1.0)
        );
        assert_eq!(o("early_data", "offered"), Some(1.0));
        assert_eq!(o("early_data", "accepted"), Some(1.0));
        assert_eq!(o("early_data", "unsafe"), Some(1.0));
        assert_eq!(o("resumption", "offered"), Some(2.0));
        assert_eq!(o("resumption", "accepted"), Some(1.0));
        assert_eq!(o("resumption", "missed"), Some(1.0));
        assert_eq!(
            sample(&t, r#"rttdoc_hello_retry_requests_total{server="other"}"#),
            Some(1.0)
        );
        assert_eq!(
            sample(&t, r#"rttdoc_syn_retransmits_total{server="other"}"#),
            Some(2.0)
        );
        assert_eq!(
            sample(
                &t,
                r#"rttdoc_retransmissions_total{direction="server_to_client",server="other"}"#
            ),
            Some(3.0)
        );
        // A missed resumption's round trip is priced into the ideal: time lost.
        assert_eq!(
            sample(
                &t,
                r#"rttdoc_time_lost_seconds_total{kind="resumption_missed",vantage="client",server="other"}"#
            ),
            Some(0.02)
        );
    }

    #[test]
    fn only_listed_servers_get_their_own_label_by_address_or_sni() {
        let m = Metrics::new(&["10.0.0.2:443".into(), "api.example.com".into()]);
        let by_addr = report(443);
        let mut by_sni = report(8443);
        by_sni.tls = Some(Box::new(TlsReport {
            sni: Some("API.example.com".into()),
            ..Default::default()
        }));
        let unlisted = report(8080);
        for c in [&by_addr, &by_sni, &unlisted] {
            m.observe(c);
        }
        let t = m.prometheus_text();
        let servers: std::collections::BTreeSet<&str> = t
            .lines()
            .filter(|l| l.starts_with("rttdoc_connections_total{"))
            .filter_map(|l| l.split("server=\"").nth(1)?.split('"').next())
            .collect();
        assert_eq!(
            servers.into_iter().collect::<Vec<_>>(),
            ["10.0.0.2:443", "api.example.com", "other"]
        );
    }

    #[test]
    fn capture_counters_follow_running_totals_and_never_go_back() {
        let m = Metrics::new(&[]);
        m.set_capture(CaptureCounts {
            frames: 10,
            dropped: 2,
            evicted_flows: 1,
            open_flows: 7,
            ..Default::default()
        });
        m.set_capture(CaptureCounts {
            frames: 25,
            damaged: 4,
            snap_cut: 3,
            snap_cut_payloads: 5,
            dropped: 2,
            evicted_flows: 1,
            open_flows: 3,
        });
        let t = m.prometheus_text();
        assert_eq!(
            sample(&t, "rttdoc_capture_snap_cut_packets_total"),
            Some(3.0)
        );
        assert_eq!(
            sample(&t, "rttdoc_capture_snap_cut_payload_segments_total"),
            Some(5.0)
        );
        assert_eq!(sample(&t, "rttdoc_capture_packets_total"), Some(25.0));
        assert_eq!(
            sample(&t, "rttdoc_capture_dropped_packets_total"),
            Some(2.0)
        );
        assert_eq!(sample(&t, "rttdoc_flows_evicted_total"), Some(1.0));
        assert_eq!(sample(&t, "rttdoc_open_flows"), Some(3.0));
        assert!(t.contains(&format!(
            "rttdoc_build_info{{version=\"{}\"}} 1",
            env!("CARGO_PKG_VERSION")
        )));
    }

    #[test]
    fn text_format_declares_counters_by_their_sample_names() {
        let om = "# HELP rttdoc_x Things.\n# TYPE rttdoc_x counter\nrttdoc_x_total 3\n\
                  # HELP rttdoc_b Build.\n# TYPE rttdoc_b info\nrttdoc_b_info{version=\"1\"} 1\n\
                  # HELP rttdoc_s Secs.\n# TYPE rttdoc_s_seconds histogram\n# UNIT rttdoc_s_seconds seconds\n# EOF\n";
        let t = openmetrics_to_prometheus_text(om);
        assert!(
            t.contains("# TYPE rttdoc_x_total counter\nrttdoc_x_total 3\n"),
            "{t}"
        );
        assert!(t.contains("# HELP rttdoc_x_total Things.\n"), "{t}");
        assert!(t.contains("# TYPE rttdoc_b_info gauge\n"), "{t}");
        assert!(!t.contains("# EOF") && !t.contains("# UNIT"), "{t}");
    }

    /// docs/metrics.md has one `### name` heading per family the registry
    /// exports (in the text format's names), and no other.
    #[test]
    fn docs_list_exactly_the_exported_families() {
        let t = Metrics::new(&[]).prometheus_text();
        let mut exported: Vec<String> = t
            .lines()
            .filter_map(|l| l.strip_prefix("# TYPE "))
            .map(|l| l.split(' ').next().unwrap().to_string())
            .collect();
        exported.sort();
        let doc = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/metrics.md"),
        )
        .unwrap();
        let mut documented: Vec<String> = doc
            .lines()
            .filter_map(|l| l.strip_prefix("### `"))
            .map(|l| l.trim_end_matches('`').to_string())
            .collect();
        documented.sort();
        assert_eq!(documented, exported);
    }
}
