//! `--html report.html`: one self-contained page (its script and style
//! are in `assets/`, inlined here; nothing is fetched) with the overview
//! of the capture and, for the connections that lost the most time, the
//! ledger against the ideal, the findings, a time-sequence graph zoomed to
//! each finding's evidence and a timed ladder.
//!
//! The page stays fast with any number of connections: the overview is one
//! compact JSON table drawn a page at a time, and each drawn connection's
//! data is its own JSON block, parsed and drawn only when it is opened.
//!
//! Memory here is bounded: at most [`OVERVIEW_ROWS`] overview rows and the
//! `detailed` connections that lost the most time (their reports, series
//! included) are kept, whatever the capture's size.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};
use std::io::{self, Write};

use rttdoc_model::{
    CaptureStats, ConnectionReport, CostRule, Direction, FindingKind, Series, TlsVersion,
    SCHEMA_VERSION,
};
use serde_json::{json, Value};

use crate::render::Renderer;
use crate::summary::{stall_ms, Summary};

/// Rows in the overview table at most: the connections that lost the
/// most time (the page draws them 200 at a time).
pub const OVERVIEW_ROWS: usize = 100_000;

/// Handshake round trips are counted in bins this wide (RTTs) up to
/// [`HANDSHAKE_BINS`] bins; slower ones go in the last.
const HANDSHAKE_BIN_RTTS: f64 = 0.25;
const HANDSHAKE_BINS: usize = 24;

const SCRIPT: &str = include_str!("../assets/report.js");
const STYLE: &str = include_str!("../assets/report.css");

/// Time a connection lost: latency beyond the ideal plus stalls inside
/// its transfers (which the latency ledger does not count).
pub fn time_lost_ms(c: &ConnectionReport) -> f64 {
    c.excess_ms + stall_ms(c)
}

/// Orders by time lost, then the lower stream first.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Lost {
    ms: f64,
    stream: u64,
}
impl Eq for Lost {}
impl PartialOrd for Lost {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Lost {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.ms.total_cmp(&o.ms).then(o.stream.cmp(&self.stream))
    }
}

/// The HTML report, filled as connections finish, written at the end.
pub struct HtmlReport {
    detailed: usize,
    /// The connections drawn in detail: a min-heap on time lost.
    details: BinaryHeap<Reverse<(Lost, Stream)>>,
    /// Overview rows: a min-heap on time lost.
    rows: BinaryHeap<Reverse<(Lost, Row)>>,
    /// The drawn connections by stream, once the second pass attaches
    /// their series ([`HtmlReport::attach`]).
    attached: BTreeMap<u64, (Lost, Stream)>,
    /// Handshake round trips per TLS version, in bins.
    handshakes: BTreeMap<TlsVersion, [u64; HANDSHAKE_BINS]>,
    out: Option<Box<dyn Write>>,
}

/// A report ordered by its key only.
struct Stream(Box<ConnectionReport>);
impl PartialEq for Stream {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl Eq for Stream {}
impl PartialOrd for Stream {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Stream {
    fn cmp(&self, _: &Self) -> std::cmp::Ordering {
        std::cmp::Ordering::Equal
    }
}

/// One overview row, as the page's JSON array.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct Row(String);

fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

fn opt3(v: Option<f64>) -> Value {
    v.map_or(Value::Null, |v| json!(round3(v)))
}

impl HtmlReport {
    /// A report drawing the `detailed` connections that lost the most time.
    pub fn new(detailed: usize) -> Self {
        HtmlReport {
            detailed,
            details: BinaryHeap::new(),
            attached: BTreeMap::new(),
            rows: BinaryHeap::new(),
            handshakes: BTreeMap::new(),
            out: None,
        }
    }

    /// The same, as a [`Renderer`] writing to `out` when finished.
    pub fn to(detailed: usize, out: Box<dyn Write>) -> Self {
        HtmlReport {
            out: Some(out),
            ..HtmlReport::new(detailed)
        }
    }

    /// One connection (worded: its findings' explanations and fixes are
    /// shown).
    pub fn add(&mut self, c: &ConnectionReport) {
        // A connection seen again under translated addresses: its time
        // is the earlier stream's (ranked and drawn there), listed last.
        let copy = c.same_connection_as.is_some();
        let lost = Lost {
            ms: if copy { 0.0 } else { time_lost_ms(c) },
            stream: c.stream,
        };
        if let Some(tls) = c.tls.as_ref().filter(|_| !copy) {
            if let (Some(v), Some(r)) = (tls.version, tls.handshake_rtts) {
                let bin = ((r / HANDSHAKE_BIN_RTTS) as usize).min(HANDSHAKE_BINS - 1);
                self.handshakes.entry(v).or_insert([0; HANDSHAKE_BINS])[bin] += 1;
            }
        }
        if admits(&self.rows, OVERVIEW_ROWS, lost) {
            if self.rows.len() == OVERVIEW_ROWS {
                self.rows.pop();
            }
            self.rows
                .push(Reverse((lost, Row(row(c, lost.ms).to_string()))));
        }
        if admits(&self.details, self.detailed, lost) {
            if self.details.len() == self.detailed {
                self.details.pop();
            }
            self.details
                .push(Reverse((lost, Stream(Box::new(c.clone())))));
        }
    }

    /// The streams drawn in detail (those the series are wanted for).
    pub fn detail_streams(&self) -> BTreeSet<u64> {
        self.details
            .iter()
            .map(|Reverse((l, _))| l.stream)
            .chain(self.attached.keys().copied())
            .collect()
    }

    /// A drawn connection again, now with its series (the second pass
    /// over a file); ignored if it is not one of them.
    pub fn attach(&mut self, c: ConnectionReport) {
        // The set is final now: index it by stream, once.
        if self.attached.is_empty() {
            self.attached = std::mem::take(&mut self.details)
                .into_iter()
                .map(|Reverse((l, s))| (l.stream, (l, s)))
                .collect();
        }
        if let Some((_, s)) = self.attached.get_mut(&c.stream) {
            *s.0 = c;
        }
    }

    /// Writes the page; returns how many connections are drawn in detail.
    pub fn write(
        self,
        mut out: impl Write,
        stats: &CaptureStats,
        summary: &Summary,
    ) -> io::Result<usize> {
        let mut rows: Vec<_> = self.rows.into_iter().map(|Reverse(x)| x).collect();
        rows.sort_by_key(|r| Reverse(r.0));
        let mut details: Vec<_> = self
            .details
            .into_iter()
            .map(|Reverse(x)| x)
            .chain(self.attached.into_values())
            .collect();
        details.sort_by_key(|d| Reverse(d.0));
        let overview = overview(stats, summary, &self.handshakes, rows.len());
        write!(
            out,
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
             <meta name=\"generator\" content=\"rttdoc {}\">\
             <title>rttdoc: {}</title><style>{STYLE}</style></head><body>\n\
             <div id=\"app\"><noscript>This report draws its tables and graphs with JavaScript.</noscript></div>\n",
            env!("CARGO_PKG_VERSION"),
            escape_html(&crate::words::capture_label(stats))
        )?;
        write!(
            out,
            "<script type=\"application/json\" id=\"rttdoc-overview\">"
        )?;
        out.write_all(script_safe(&overview.to_string()).as_bytes())?;
        writeln!(out, "</script>")?;
        // Rows as one JSON array, written row by row.
        write!(
            out,
            "<script type=\"application/json\" id=\"rttdoc-rows\">["
        )?;
        for (i, (_, Row(r))) in rows.iter().enumerate() {
            if i > 0 {
                out.write_all(b",\n")?;
            }
            out.write_all(script_safe(r).as_bytes())?;
        }
        writeln!(out, "]</script>")?;
        for (_, Stream(c)) in &details {
            write!(
                out,
                "<script type=\"application/json\" class=\"rttdoc-conn\" data-stream=\"{}\">",
                c.stream
            )?;
            out.write_all(script_safe(&detail(c).to_string()).as_bytes())?;
            writeln!(out, "</script>")?;
        }
        writeln!(out, "<script>{SCRIPT}</script></body></html>")?;
        out.flush()?;
        Ok(details.len())
    }
}

impl Renderer for HtmlReport {
    fn connection(&mut self, c: &ConnectionReport) -> io::Result<()> {
        self.add(c);
        Ok(())
    }

    fn finish(mut self: Box<Self>, stats: &CaptureStats, summary: &Summary) -> io::Result<()> {
        let out = self
            .out
            .take()
            .ok_or_else(|| io::Error::other("HTML report without an output"))?;
        self.write(out, stats, summary).map(|_| ())
    }
}

fn admits<T: Ord>(heap: &BinaryHeap<Reverse<(Lost, T)>>, k: usize, lost: Lost) -> bool {
    k > 0 && (heap.len() < k || heap.peek().is_some_and(|Reverse((l, _))| lost > *l))
}

/// Inside `<script>`, `</script>` (or `<!--`) in a string would end the
/// block: JSON allows `<` written as `\u003c`, and only strings hold one.
fn script_safe(json: &str) -> String {
    json.replace('<', "\\u003c")
}

fn escape_html(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The overview table's row for a connection:
/// [stream, client, server, lost ms, excess rtts, rtt ms, tls version,
///  tls rtts, tls ideal, duration ms, kinds, partial].
fn row(c: &ConnectionReport, lost_ms: f64) -> Value {
    let tls = c.tls.as_ref();
    let mut kinds: Vec<String> = match c.same_connection_as {
        Some(first) => vec![format!("same as {first}")],
        None => c
            .findings
            .iter()
            .map(|x| x.kind.name().to_string())
            .collect(),
    };
    kinds.dedup();
    json!([
        c.stream,
        c.client.to_string(),
        c.server.to_string(),
        round3(lost_ms),
        round3(c.excess_rtts),
        opt3(c.rtt_ms),
        tls.and_then(|t| t.version).map(|v| v.to_string()),
        opt3(tls.and_then(|t| t.handshake_rtts)),
        opt3(tls.and_then(|t| t.ideal_handshake_rtts)),
        round3(c.duration_ms),
        kinds,
        c.partial,
    ])
}

fn overview(
    stats: &CaptureStats,
    s: &Summary,
    handshakes: &BTreeMap<TlsVersion, [u64; HANDSHAKE_BINS]>,
    rows: usize,
) -> Value {
    let mut causes: Vec<(&FindingKind, &crate::summary::Cause)> = s.causes.iter().collect();
    causes.sort_by(|a, b| b.1.cost_ms.total_cmp(&a.1.cost_ms));
    let causes: Vec<Value> = causes
        .into_iter()
        .map(|(k, c)| {
            json!({
                "kind": k.name(),
                "doc": k.doc(),
                "connections": c.connections,
                "cost_ms": round3(c.cost_ms),
                "latency_ms": round3(c.latency_ms),
                "stall_ms": round3(c.stall_ms),
                "fix": if c.fix.is_empty() { k.fix().to_string() } else { c.fix.clone() },
                "other_fixes": c.other_fixes().map(|f| json!({
                    "fix": f.fix,
                    "cost_ms": round3(f.cost_ms),
                    "connections": f.connections,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    let handshakes: Vec<Value> = handshakes
        .iter()
        .map(|(v, bins)| {
            let q = s.handshake_rtts.get(v);
            json!({
                "version": v.to_string(),
                "bins": bins.to_vec(),
                "p50": q.and_then(|q| q.percentile(50.0)),
                "p90": q.and_then(|q| q.percentile(90.0)),
                "p99": q.and_then(|q| q.percentile(99.0)),
            })
        })
        .collect();
    json!({
        "schema_version": SCHEMA_VERSION,
        "generator": concat!("rttdoc ", env!("CARGO_PKG_VERSION")),
        "file": crate::words::capture_label(stats),
        "frames": stats.frames,
        "tcp_segments": stats.tcp_segments,
        "damaged": stats.damaged,
        "notes": crate::words::capture_notes(stats, s),
        "error": stats.error,
        "first_time": stats.first_time,
        "last_time": stats.last_time,
        "connections": s.connections,
        "rows": rows,
        "over_ideal": s.over_ideal,
        "excess_ms_total": round3(s.excess_ms_total),
        "explained_ms": round3(s.explained_ms),
        "unexplained_ms": round3(s.unexplained_ms),
        "turnaround_ms": round3(s.turnaround_ms()),
        "path_queue_ms": round3(s.path_queue_ms),
        "stall_ms_total": round3(s.stall_ms_total),
        "tls_connections": s.tls_connections,
        "resumed": s.resumed,
        "tfo_attempts": s.tfo_attempts,
        "tfo_accepted": s.tfo_accepted,
        "early_data_sent": s.early_data_sent,
        "early_data_accepted": s.early_data_accepted,
        "partial": s.partial,
        "causes": causes,
        "handshake_bin_rtts": HANDSHAKE_BIN_RTTS,
        "handshakes": handshakes,
        "quic": quic_overview(stats),
    })
}

/// QUIC connections drawn in the report's table at most, most excess
/// first.
const QUIC_ROWS: usize = 200;

/// The capture's QUIC connections for the report: totals, causes and the
/// worst connections with their findings worded; null without QUIC.
fn quic_overview(stats: &CaptureStats) -> Value {
    let Some(quic) = crate::json::worded_quic(stats) else {
        return Value::Null;
    };
    let mut rows: Vec<&rttdoc_model::QuicConnectionReport> = quic.listed.iter().collect();
    rows.sort_by(|a, b| {
        b.excess_ms
            .total_cmp(&a.excess_ms)
            .then(a.number.cmp(&b.number))
    });
    let rows: Vec<Value> = rows
        .into_iter()
        .take(QUIC_ROWS)
        .map(|c| {
            json!({
                "number": c.number,
                "client": c.client.to_string(),
                "server": c.server.to_string(),
                "server_name": c.server_name,
                "version": c.version.name(),
                "rtt_ms": c.rtt_ms.map(round3),
                "handshake_ms": c.handshake_ms.map(round3),
                "excess_ms": round3(c.excess_ms),
                "zero_rtt": c.zero_rtt,
                "findings": c.findings.iter().map(|f| json!({
                    "kind": f.kind.name(),
                    "cost_ms": round3(f.cost_ms),
                    "frames": f.frames,
                    "explanation": f.explanation,
                    "fix": f.fix,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({
        "connections": quic.connections,
        "handshakes": quic.handshakes,
        "excess_ms": round3(quic.excess_ms),
        "causes": quic.causes.iter().map(|c| json!({
            "kind": c.kind.name(),
            "doc": c.kind.doc(),
            "connections": c.connections,
            "cost_ms": round3(c.cost_ms),
            "fix": c.kind.fix(),
        })).collect::<Vec<_>>(),
        "rows": rows,
    })
}

fn dir_index(d: Direction) -> u8 {
    d.index() as u8
}

/// Packets as arrays: [frame, t_ms, dir, flags, seq, len, ack, window,
/// marks (1 retransmission, 2 probe, 4 D-SACK), sack blocks].
fn packets(s: &Series) -> Value {
    let v: Vec<Value> = s
        .packets
        .iter()
        .map(|p| {
            let marks = p.retransmission as u8 | (p.probe as u8) << 1 | (p.dsack as u8) << 2;
            let mut a = vec![
                json!(p.frame),
                json!((p.t_ms * 1e4).round() / 1e4),
                json!(dir_index(p.direction)),
                json!(p.flags.bits()),
                json!(p.seq),
                json!(p.len),
                json!(p.ack),
                json!(p.window),
                json!(marks),
            ];
            if !p.sack.is_empty() {
                a.push(json!(p
                    .sack
                    .iter()
                    .map(|(l, r)| [*l, *r])
                    .collect::<Vec<_>>()));
            }
            Value::Array(a)
        })
        .collect();
    Value::Array(v)
}

/// Everything the page draws for one connection.
fn detail(c: &ConnectionReport) -> Value {
    let findings: Vec<Value> = c
        .findings
        .iter()
        .map(|x| {
            json!({
                "kind": x.kind.name(),
                "doc": x.kind.doc(),
                "summary": x.kind.cost_rule() == CostRule::Summary,
                "phase": x.phase.map(|p| p.name()),
                "frames": x.frames,
                "cost_ms": round3(x.cost_ms),
                "cost_rtts": opt3(x.cost_rtts),
                "attributed_ms": round3(x.attributed_ms),
                "confidence": x.confidence,
                "explanation": x.explanation,
                "fix": x.fix,
                "short_fix": x.kind.fix(),
                "filter": x.display_filter,
                "waits": x.waits.iter().map(|w| json!({
                    "from": w.from_frame,
                    "to": w.to_frame,
                    "release": w.release_frame,
                    "ms": round3(w.ms),
                })).collect::<Vec<_>>(),
                // A long connection's waits past those listed: counted.
                "unlisted_waits": x.unlisted_waits.map_or(0, |u| u.count),
            })
        })
        .collect();
    let ledger: Vec<Value> = c
        .ledger
        .iter()
        .map(|r| {
            json!({
                "phase": r.phase.name(),
                "label": r.label,
                "start_frame": r.start_frame,
                "end_frame": r.end_frame,
                "duration_ms": round3(r.duration_ms),
                "rtts": opt3(r.rtts),
                "ideal_rtts": r.ideal_rtts,
                "excess_ms": opt3(r.excess_ms),
                "ideal_basis": r.ideal_basis,
            })
        })
        .collect();
    let tls = c.tls.as_ref().map(|t| {
        json!({
            "version": t.version.map(|v| v.to_string()),
            "cipher": t.cipher,
            "sni": t.sni,
            "alpn": t.alpn,
            "resumed": t.resumed,
            "early_data_accepted": t.early_data_accepted,
            "hello_retry_request": t.hello_retry_request,
            "handshake_rtts": opt3(t.handshake_rtts),
            "ideal_handshake_rtts": t.ideal_handshake_rtts,
            "messages": t.messages.iter().map(|m| json!([m.frame, dir_index(m.direction), m.message.to_string(), m.bytes])).collect::<Vec<_>>(),
        })
    });
    let h = &c.handshake;
    json!({
        "stream": c.stream,
        "client": c.client.to_string(),
        "server": c.server.to_string(),
        "first_frame": c.first_frame,
        "last_frame": c.last_frame,
        "start_time": c.start_time,
        "start_offset_s": c.start_offset_s,
        "duration_ms": round3(c.duration_ms),
        "partial": c.partial,
        "ending": c.ending.name(),
        "vantage": c.vantage.as_str(),
        "rtt_ms": opt3(c.rtt_ms),
        "mss": [h.client_mss, h.server_mss],
        "excess_ms": round3(c.excess_ms),
        "excess_rtts": round3(c.excess_rtts),
        "stall_ms": round3(stall_ms(c)),
        "lost_ms": round3(time_lost_ms(c)),
        "unexplained_ms": round3(c.unexplained_ms),
        "turnaround_ms": round3(c.turnaround_ms()),
        "path_queue_ms": round3(c.path_queue_ms),
        "ledger": ledger,
        "findings": findings,
        "tls": tls,
        "tfo": h.tfo.as_ref().map(|t| t.outcome.name()),
        "lookup": c.name_lookup.as_ref().map(|l| json!({
            "name": l.name,
            "ms": round3(l.ms),
            "queries": l.queries,
        })),
        "packets": c.series.as_deref().map(packets),
        "dropped": c.series.as_ref().map_or(0, |s| s.dropped),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_blocks_cannot_be_closed_by_data() {
        let v = json!({"sni": "</script><script>alert(1)</script>"}).to_string();
        let safe = script_safe(&v);
        assert!(!safe.contains("</"));
        let back: Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back["sni"], "</script><script>alert(1)</script>");
    }

    /// The reports of a lab capture (dumpcap, two TLS 1.3 connections
    /// with a Nagle hold each), with or without series.
    fn lab_reports(series: rttdoc_analyze::SeriesRequest) -> Vec<ConnectionReport> {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/data/lab/tls13-nagle-builtin/client.pcapng.gz"
        );
        let mut cap = rttdoc_capture::Capture::open(path).unwrap();
        let mut out = Vec::new();
        let options = rttdoc_analyze::AnalyzeOptions {
            series,
            ..Default::default()
        };
        rttdoc_diagnose::analyze_capture(&mut cap, options, &mut |mut r: ConnectionReport| {
            crate::words::word(&mut r);
            out.push(r)
        });
        out
    }

    #[test]
    fn only_the_connections_that_lost_most_are_drawn_and_the_second_pass_gives_them_packets() {
        let first = lab_reports(Default::default());
        assert_eq!(first.len(), 2);
        assert!(first.iter().all(|c| c.series.is_none()));
        let worst = first
            .iter()
            .max_by(|a, b| time_lost_ms(a).total_cmp(&time_lost_ms(b)))
            .unwrap()
            .stream;
        let mut html = HtmlReport::new(1);
        let mut summary = Summary::new(10);
        for c in &first {
            html.add(c);
            summary.add(c);
        }
        let streams = html.detail_streams();
        assert_eq!(streams, [worst].into_iter().collect());
        for c in lab_reports(rttdoc_analyze::SeriesRequest::only(streams.clone(), 1000)) {
            assert_eq!(c.series.is_some(), streams.contains(&c.stream));
            html.attach(c);
        }
        assert_eq!(html.detail_streams(), streams, "attaching keeps the set");
        let mut page = Vec::new();
        let drawn = html
            .write(&mut page, &CaptureStats::default(), &summary)
            .unwrap();
        assert_eq!(drawn, 1);
        let page = String::from_utf8(page).unwrap();
        // Both connections in the overview rows, one drawn with its packets.
        let rows_at = page.find("id=\"rttdoc-rows\">").unwrap();
        let rows_end = rows_at + page[rows_at..].find("</script>").unwrap();
        let rows: Value =
            serde_json::from_str(&page[rows_at + "id=\"rttdoc-rows\">".len()..rows_end]).unwrap();
        assert_eq!(rows.as_array().unwrap().len(), 2);
        assert_eq!(rows[0][0], worst, "rows ranked by time lost");
        assert_eq!(page.matches("class=\"rttdoc-conn\"").count(), 1);
        let at = page.find("class=\"rttdoc-conn\"").unwrap();
        let start = at + page[at..].find('>').unwrap() + 1;
        let end = start + page[start..].find("</script>").unwrap();
        let detail: Value = serde_json::from_str(&page[start..end]).unwrap();
        assert_eq!(detail["stream"], worst);
        let packets = detail["packets"].as_array().unwrap();
        assert_eq!(packets.len(), 20, "every packet of the connection");
        assert!(detail["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["kind"] == "nagle_hold" && !f["waits"].as_array().unwrap().is_empty()));
        assert!(
            page.contains("<script>") && !page.contains(" src="),
            "self-contained"
        );
    }

    #[test]
    fn time_lost_orders_the_worst_first_and_ties_by_stream() {
        let a = Lost {
            ms: 10.0,
            stream: 3,
        };
        let b = Lost {
            ms: 10.0,
            stream: 1,
        };
        let c = Lost {
            ms: 50.0,
            stream: 9,
        };
        let mut v = [a, b, c];
        v.sort_by(|x, y| y.cmp(x));
        assert_eq!(v.iter().map(|l| l.stream).collect::<Vec<_>>(), [9, 1, 3]);
    }
}
