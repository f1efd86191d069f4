//! A probe run: the requests of one or two configurations (interleaved,
//! so drift on the path hits both alike), the analysis of their packets,
//! and the statistics.

use std::path::PathBuf;
use std::time::Duration;

use rttdoc_analyze::{ConnectionReport, Finding, FindingKind};
use serde::Serialize;

use crate::diagnose::{self, Round};
use crate::engine::{self, Measured, Session, Variant};
use crate::stats::{Comparison, Summary};
use crate::timing::Steps;

/// Version of the `--json` document (docs/probe.md); bumped on any
/// incompatible change.
pub const PROBE_SCHEMA_VERSION: u32 = 1;

/// What to run.
#[derive(Debug, Clone)]
pub struct Plan {
    /// One configuration, or two for `--compare` (A is the baseline).
    pub variants: Vec<Variant>,
    /// What `--compare` varies, for people ("tfo", "resumption" ...).
    pub compare: Option<String>,
    /// Measured requests per configuration.
    pub count: usize,
    /// Pause between two requests.
    pub interval: Duration,
    /// Try to capture (off with `--no-capture`).
    pub capture: bool,
    pub save_capture: Option<PathBuf>,
}

/// TCP Fast Open as one request saw it.
#[derive(Debug, Clone, Serialize)]
pub struct TfoSeen {
    /// `cookie_request`, `accepted`, `rejected`, ... (the analysis's
    /// names), or `unknown`.
    pub outcome: String,
    /// `capture` (the SYN and SYN-ACK) or `tcp_info` (the kernel's
    /// TCPI_OPT_SYN_DATA and fastopen_client_fail).
    pub source: &'static str,
}

/// One request, measured and explained.
#[derive(Debug, Clone, Serialize)]
pub struct Sample {
    /// 1-based, in the order the requests ran.
    pub request: usize,
    /// Index of its configuration (0: A, 1: B).
    pub variant: usize,
    /// A request that only prepares the next ones (a TFO cookie, a
    /// session ticket): shown, not counted in the statistics.
    pub warmup: bool,
    #[serde(flatten)]
    pub measured: Measured,
    pub steps: Steps,
    /// Path RTT (ms): the capture's, else TCP_INFO's minimum RTT.
    pub rtt_ms: Option<f64>,
    /// `capture` or `tcp_info`.
    pub rtt_source: Option<&'static str>,
    /// Wait for the first byte beyond one RTT (ms).
    pub server_ms: Option<f64>,
    /// Round trips per phase against the ideal.
    pub ledger: Vec<Round>,
    /// `capture` (the analysis of its packets) or `estimate` (timings /
    /// RTT, without packets).
    pub ledger_source: &'static str,
    pub tfo: Option<TfoSeen>,
    /// The analysis's findings (empty without a capture).
    pub findings: Vec<Finding>,
    /// The analysis of this connection, as `rttdoc analyze --json` gives
    /// it (null without a capture).
    pub connection: Option<ConnectionReport>,
}

/// Counters of one configuration's measured requests.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Rates {
    pub requests: usize,
    pub failed: usize,
    pub tfo_attempts: usize,
    pub tfo_accepted: usize,
    pub tls_handshakes: usize,
    pub resumed: usize,
    pub hello_retry_requests: usize,
    pub early_data_sent: usize,
    pub early_data_accepted: usize,
}

/// Statistics of one configuration.
#[derive(Debug, Clone, Serialize)]
pub struct VariantReport {
    pub label: String,
    pub url: String,
    /// min / P50 / P95 / max per measure (ms), in [`MEASURES`] order.
    pub stats: Vec<MeasureStats>,
    pub rates: Rates,
}

/// One measure's order statistics.
#[derive(Debug, Clone, Serialize)]
pub struct MeasureStats {
    pub measure: String,
    #[serde(flatten)]
    pub summary: Summary,
}

/// One measure compared, B against A.
#[derive(Debug, Clone, Serialize)]
pub struct MeasureComparison {
    pub measure: String,
    #[serde(flatten)]
    pub comparison: Comparison,
}

/// The measures the statistics and the comparison cover.
pub const MEASURES: [&str; 8] = [
    "time_namelookup",
    "time_connect",
    "time_appconnect",
    "time_pretransfer",
    "time_starttransfer",
    "time_total",
    "rtt",
    "server",
];

fn measure(s: &Sample, name: &str) -> Option<f64> {
    let t = &s.measured.timings;
    match name {
        "time_namelookup" => Some(t.namelookup),
        "time_connect" => Some(t.connect),
        "time_appconnect" => s.measured.tls.as_ref().map(|_| t.appconnect),
        "time_pretransfer" => Some(t.pretransfer),
        "time_starttransfer" => Some(t.starttransfer),
        "time_total" => Some(t.total),
        "rtt" => s.rtt_ms,
        "server" => s.server_ms,
        _ => None,
    }
}

/// The whole run.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub schema_version: u32,
    /// `rttdoc X.Y.Z`.
    pub generator: String,
    /// The `schema_version` of docs/json-schema.md that each sample's
    /// `connection` follows.
    pub connection_schema_version: u32,
    pub compare: Option<String>,
    pub variants: Vec<VariantReport>,
    /// Per measure, B against A (with `--compare`).
    pub comparison: Vec<MeasureComparison>,
    /// Whether the packets were captured, and why not.
    pub capture: CaptureNote,
    /// What could not be diagnosed (without a capture).
    pub not_diagnosed: Vec<String>,
    pub notes: Vec<String>,
    pub samples: Vec<Sample>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct CaptureNote {
    pub captured: bool,
    pub reason: Option<String>,
    pub packets: usize,
    pub kernel_drops: u32,
    /// Packets seen past the capture's memory budget and not kept.
    pub not_kept: u64,
    pub saved_to: Option<String>,
}

/// Which capture-only diagnoses a run without packets misses.
pub const NEEDS_PACKETS: &[&str] = &[
    "Nagle holds and write-write-read stalls (nagle_hold, delayed_ack_stall, write_write_read)",
    "an initial congestion window too small for the server's flight (initcwnd_limited)",
    "retransmissions and RTO stalls with their frames (TCP_INFO only counts them)",
    "zero windows and receive-window limits",
    "server think time split from the path (estimated here as first byte - RTT)",
];

fn needs_warmup(v: &Variant) -> bool {
    v.tfo || (v.url.https && (v.tls.resume || v.tls.early_data))
}

/// Runs the plan. `progress` is told of each request as it finishes.
pub fn run(
    plan: &Plan,
    progress: &mut dyn FnMut(&Measured, usize, bool),
) -> Result<Report, String> {
    let sessions = plan
        .variants
        .iter()
        .map(Session::new)
        .collect::<Result<Vec<_>, _>>()?;
    let mut order: Vec<(usize, bool)> = Vec::new();
    for (i, v) in plan.variants.iter().enumerate() {
        if needs_warmup(v) {
            order.push((i, true));
        }
    }
    for round in 0..plan.count {
        // A B, B A, A B ...: neither goes first every time.
        let mut pair: Vec<usize> = (0..plan.variants.len()).collect();
        if round % 2 == 1 {
            pair.reverse();
        }
        order.extend(pair.into_iter().map(|i| (i, false)));
    }
    if plan.capture {
        // Its one-time wait must not land in the first request's timings.
        crate::selfcap::keep_timestamps_on();
    }
    let mut measured: Vec<(usize, bool, Measured)> = Vec::new();
    for (n, (i, warmup)) in order.iter().enumerate() {
        if n > 0 && !plan.interval.is_zero() {
            std::thread::sleep(plan.interval);
        }
        let m = engine::run(&plan.variants[*i], &sessions[*i], plan.capture);
        progress(&m, n + 1, *warmup);
        measured.push((*i, *warmup, m));
    }
    let keylog: Vec<u8> = sessions
        .iter()
        .flat_map(|s| s.keylog.0.lock().map(|v| v.clone()).unwrap_or_default())
        .collect();
    let packets: Vec<&[crate::selfcap::Packet]> = measured
        .iter()
        .map(|(_, _, m)| m.packets.as_slice())
        .collect();
    let captured = measured.iter().any(|(_, _, m)| !m.packets.is_empty());
    let mut reports = if captured {
        diagnose::analyze(&packets, &keylog)
    } else {
        Default::default()
    };
    let mut capture = CaptureNote {
        captured,
        reason: measured
            .iter()
            .find_map(|(_, _, m)| m.capture_unavailable.clone()),
        packets: packets.iter().map(|p| p.len()).sum(),
        kernel_drops: measured.iter().map(|(_, _, m)| m.kernel_drops).sum(),
        not_kept: measured.iter().map(|(_, _, m)| m.not_kept).sum(),
        saved_to: None,
    };
    let mut notes = Vec::new();
    if let Some(path) = &plan.save_capture {
        if captured {
            diagnose::save(path, &packets).map_err(|e| e.to_string())?;
            capture.saved_to = Some(path.display().to_string());
        } else {
            notes.push(format!(
                "--save-capture {}: nothing captured, no file written",
                path.display()
            ));
        }
    }
    if capture.not_kept > 0 {
        notes.push(format!(
            "{} packets past the capture's {} MiB per request were counted, not kept: the analysis ends where they begin",
            capture.not_kept,
            crate::selfcap::MAX_KEPT_BYTES >> 20
        ));
    }
    if capture.kernel_drops > 0 {
        notes.push(format!(
            "the kernel dropped {} packets of the capture (its buffer overran): the analysis misses them",
            capture.kernel_drops
        ));
    }
    let samples: Vec<Sample> = measured
        .into_iter()
        .enumerate()
        .map(|(n, (variant, warmup, m))| {
            let connection = m
                .local
                .and_then(|l| reports.get_mut(&l.port())?.pop_front());
            sample(n + 1, variant, warmup, m, connection)
        })
        .collect();
    for (i, v) in plan.variants.iter().enumerate() {
        if let Some(note) = http2_fallback_note(i, v, &samples) {
            notes.push(note);
        }
    }
    let variants: Vec<VariantReport> = plan
        .variants
        .iter()
        .enumerate()
        .map(|(i, v)| variant_report(i, v, &samples))
        .collect();
    let mut comparison = Vec::new();
    if plan.variants.len() == 2 {
        for name in MEASURES {
            let pick = |i: usize| -> Vec<f64> {
                counted(&samples, i)
                    .filter_map(|s| measure(s, name))
                    .collect()
            };
            if let Some(c) = Comparison::of(&pick(0), &pick(1)) {
                comparison.push(MeasureComparison {
                    measure: name.to_string(),
                    comparison: c,
                });
            }
        }
    }
    let not_diagnosed = if captured {
        Vec::new()
    } else {
        NEEDS_PACKETS.iter().map(|s| s.to_string()).collect()
    };
    Ok(Report {
        schema_version: PROBE_SCHEMA_VERSION,
        generator: format!("rttdoc {}", env!("CARGO_PKG_VERSION")),
        connection_schema_version: rttdoc_analyze::SCHEMA_VERSION,
        compare: plan.compare.clone(),
        variants,
        comparison,
        capture,
        not_diagnosed,
        notes,
        samples,
    })
}

/// Asked for h2, a server whose ALPN chose HTTP/1.1 (or none) was
/// spoken to in HTTP/1.1, as curl does: says so, with how often.
fn http2_fallback_note(i: usize, v: &Variant, samples: &[Sample]) -> Option<String> {
    if !v.http2 {
        return None;
    }
    let done: Vec<&Sample> = samples
        .iter()
        .filter(|s| s.variant == i && s.measured.http_version.is_some())
        .collect();
    let fell_back = done
        .iter()
        .filter(|s| s.measured.http_version.as_deref() != Some("HTTP/2"))
        .count();
    (fell_back > 0).then(|| {
        format!(
            "{}: the server did not choose h2 through ALPN in {fell_back} of {} requests: \
             those were made in HTTP/1.1",
            v.label,
            done.len()
        )
    })
}

/// The measured (not warm-up, not failed) samples of a configuration.
pub fn counted(samples: &[Sample], variant: usize) -> impl Iterator<Item = &Sample> {
    samples
        .iter()
        .filter(move |s| s.variant == variant && !s.warmup && s.measured.error.is_none())
}

fn sample(
    request: usize,
    variant: usize,
    warmup: bool,
    m: Measured,
    connection: Option<ConnectionReport>,
) -> Sample {
    let steps = m.timings.steps();
    let (rtt_ms, rtt_source) = match (&connection, &m.tcp_info) {
        (Some(c), _) if c.rtt_ms.is_some() => (c.rtt_ms, Some("capture")),
        (_, Some(i)) => {
            // min_rtt is the path without queueing or delayed ACKs; the
            // smoothed RTT when the kernel does not give it.
            let r = if i.min_rtt_ms > 0.0 {
                i.min_rtt_ms
            } else {
                i.srtt_ms
            };
            ((r > 0.0).then_some(r), Some("tcp_info"))
        }
        _ => (None, None),
    };
    let (ledger, ledger_source) = match &connection {
        Some(c) if !c.ledger.is_empty() => (diagnose::captured_rounds(c), "capture"),
        _ => (diagnose::estimated_rounds(&m, rtt_ms), "estimate"),
    };
    let findings = measured_findings(connection.as_ref());
    let server_ms = diagnose::server_ms(&ledger, rtt_ms, &findings);
    let tfo = if let Some(t) = connection.as_ref().and_then(|c| c.handshake.tfo.as_ref()) {
        Some(TfoSeen {
            outcome: t.outcome.name().to_string(),
            source: "capture",
        })
    } else if m.tfo_requested {
        let outcome = match &m.tcp_info {
            Some(i) if i.syn_data_acked => "accepted",
            Some(i) => match i.fastopen_client_fail {
                Some("cookie_unavailable") => "cookie_request",
                Some("data_not_acked") => "rejected",
                Some("syn_retransmitted") => "syn_retransmitted",
                _ => "unknown",
            },
            None => "unknown",
        };
        Some(TfoSeen {
            outcome: outcome.into(),
            source: "tcp_info",
        })
    } else {
        None
    };
    Sample {
        request,
        variant,
        warmup,
        steps,
        rtt_ms,
        rtt_source,
        server_ms,
        ledger,
        ledger_source,
        tfo,
        findings,
        connection,
        measured: m,
    }
}

/// A request's findings: the capture's, but for `connection_not_reused`,
/// which the probe causes itself (it opens a connection per request, on
/// purpose: the set-up is what it measures).
fn measured_findings(connection: Option<&ConnectionReport>) -> Vec<Finding> {
    connection
        .map(|c| {
            c.findings
                .iter()
                .filter(|f| f.kind != FindingKind::ConnectionNotReused)
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

fn variant_report(i: usize, v: &Variant, samples: &[Sample]) -> VariantReport {
    let mine: Vec<&Sample> = counted(samples, i).collect();
    let stats = MEASURES
        .iter()
        .filter_map(|name| {
            let xs: Vec<f64> = mine.iter().filter_map(|s| measure(s, name)).collect();
            Summary::of(&xs).map(|summary| MeasureStats {
                measure: name.to_string(),
                summary,
            })
        })
        .collect();
    let mut rates = Rates {
        requests: samples
            .iter()
            .filter(|s| s.variant == i && !s.warmup)
            .count(),
        ..Default::default()
    };
    rates.failed = rates.requests - mine.len();
    for s in &mine {
        if let Some(t) = &s.tfo {
            rates.tfo_attempts += 1;
            rates.tfo_accepted += (t.outcome == "accepted") as usize;
        }
        if let Some(t) = &s.measured.tls {
            rates.tls_handshakes += 1;
            rates.resumed += (t.handshake == Some("resumed")) as usize;
            rates.hello_retry_requests += t.hello_retry_request as usize;
            rates.early_data_sent += t.early_data_sent as usize;
            rates.early_data_accepted += (t.early_data_accepted == Some(true)) as usize;
        }
    }
    VariantReport {
        label: v.label.clone(),
        url: format!(
            "{}://{}{}",
            if v.url.https { "https" } else { "http" },
            v.url.host_header(),
            v.url.path
        ),
        stats,
        rates,
    }
}
