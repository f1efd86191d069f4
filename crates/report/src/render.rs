//! The renderer seam: every output format is one [`Renderer`], fed the
//! connections as they finish and the capture-wide summary at the end
//! (ripgrep's Printer/Sink split). A new format is one new type here or in
//! its own file, and one line in [`Format`]; the command line only picks
//! one.

use std::fmt::Write as _;
use std::io::{self, Write};

use rttdoc_model::{CaptureStats, ConnectionReport, SCHEMA_VERSION};
use serde::Serialize;

use crate::json::JsonWriter;
use crate::summary::{first_byte_ms, stall_ms, Summary};
use crate::terminal;

/// What an output format does with the analysis as it streams past.
pub trait Renderer {
    /// One finished connection (after filtering), in the order they finish.
    fn connection(&mut self, c: &ConnectionReport) -> io::Result<()>;
    /// A long connection's window, diagnosed before the connection
    /// finished (`rttdoc_analyze::ReportSink::window`): for an output that
    /// counts as it goes, whose connection report then counts only the
    /// rest (the metrics). Others ignore it: their report is whole.
    fn window(&mut self, _w: &ConnectionReport) -> io::Result<()> {
        Ok(())
    }
    /// The end: capture counters and the summary of the connections shown.
    fn finish(self: Box<Self>, stats: &CaptureStats, summary: &Summary) -> io::Result<()>;
    /// Whether it shows findings' explanations and fixes, which the caller
    /// then words ([`crate::words::word`]) before [`Renderer::connection`].
    fn shows_words(&self) -> bool {
        true
    }
}

/// The output formats `--format` offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Tables for people (the default).
    Text,
    /// One JSON document (docs/json-schema.md).
    Json,
    /// JSON Lines: a header line, one line per connection as it finishes,
    /// then a summary line (docs/json-schema.md).
    Jsonl,
    /// One CSV row per connection, for spreadsheets.
    Csv,
    /// The capture's totals as Prometheus metrics (text format 0.0.4, for
    /// node_exporter's textfile collector; docs/metrics.md).
    Prometheus,
}

/// Options every renderer may read.
#[derive(Debug, Clone, Copy)]
pub struct RenderOptions {
    pub color: bool,
    /// Terminal width to fit tables into; None: no limit (a pipe).
    pub width: Option<u16>,
}

/// The renderer for a format, writing to `out`.
pub fn renderer<'w>(
    format: Format,
    out: Box<dyn Write + 'w>,
    options: RenderOptions,
) -> io::Result<Box<dyn Renderer + 'w>> {
    Ok(match format {
        Format::Text => Box::new(TextSummary { out, options }),
        Format::Json => Box::new(JsonDocument(JsonWriter::begin(out)?)),
        Format::Jsonl => Box::new(JsonLines::begin(out)?),
        Format::Csv => Box::new(Csv::begin(out)?),
        Format::Prometheus => Box::new(crate::metrics::PrometheusRenderer::new(out, &[])),
    })
}

/// The overview tables (`rttdoc analyze FILE`).
struct TextSummary<'w> {
    out: Box<dyn Write + 'w>,
    options: RenderOptions,
}

impl Renderer for TextSummary<'_> {
    fn connection(&mut self, _: &ConnectionReport) -> io::Result<()> {
        Ok(())
    }

    fn shows_words(&self) -> bool {
        false
    }

    fn finish(mut self: Box<Self>, stats: &CaptureStats, summary: &Summary) -> io::Result<()> {
        terminal::render_summary(&mut self.out, stats, summary, self.options)?;
        self.out.flush()
    }
}

/// One connection in detail (`--conn N`), as text or JSON.
pub struct ConnectionDetail<'w> {
    out: Box<dyn Write + 'w>,
    stream: u64,
    json: bool,
    options: RenderOptions,
    selected: Option<ConnectionReport>,
}

impl<'w> ConnectionDetail<'w> {
    pub fn new(out: Box<dyn Write + 'w>, stream: u64, json: bool, options: RenderOptions) -> Self {
        ConnectionDetail {
            out,
            stream,
            json,
            options,
            selected: None,
        }
    }
}

impl Renderer for ConnectionDetail<'_> {
    fn connection(&mut self, c: &ConnectionReport) -> io::Result<()> {
        if c.stream == self.stream {
            self.selected = Some(c.clone());
        }
        Ok(())
    }

    fn finish(mut self: Box<Self>, stats: &CaptureStats, _: &Summary) -> io::Result<()> {
        let Some(c) = &self.selected else {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!(
                    "{}: no TCP stream {} (the capture has {} connections, numbered from 0)",
                    stats.file, self.stream, stats.connections
                ),
            ));
        };
        if self.json {
            serde_json::to_writer_pretty(&mut self.out, c).map_err(io::Error::other)?;
            writeln!(self.out)?;
        } else {
            terminal::render_connection(&mut self.out, c, stats, self.options)?;
        }
        self.out.flush()
    }
}

/// One QUIC connection in detail (`--quic N`), as text or JSON.
pub struct QuicDetail<'w> {
    out: Box<dyn Write + 'w>,
    number: u64,
    json: bool,
    options: RenderOptions,
}

impl<'w> QuicDetail<'w> {
    pub fn new(out: Box<dyn Write + 'w>, number: u64, json: bool, options: RenderOptions) -> Self {
        QuicDetail {
            out,
            number,
            json,
            options,
        }
    }
}

impl Renderer for QuicDetail<'_> {
    fn connection(&mut self, _: &ConnectionReport) -> io::Result<()> {
        Ok(())
    }

    fn shows_words(&self) -> bool {
        false
    }

    fn finish(mut self: Box<Self>, stats: &CaptureStats, _: &Summary) -> io::Result<()> {
        let quic = crate::json::worded_quic(stats);
        let found = quic
            .as_ref()
            .and_then(|q| q.listed.iter().find(|c| c.number == self.number));
        let Some(c) = found else {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!(
                    "{}: no QUIC connection {} (the capture has {} listed, numbered from 0)",
                    stats.file,
                    self.number,
                    quic.as_ref().map_or(0, |q| q.listed.len())
                ),
            ));
        };
        if self.json {
            serde_json::to_writer_pretty(&mut self.out, c).map_err(io::Error::other)?;
            writeln!(self.out)?;
        } else {
            terminal::render_quic_connection(&mut self.out, c, self.options)?;
        }
        self.out.flush()
    }
}

struct JsonDocument<'w>(JsonWriter<Box<dyn Write + 'w>>);

impl Renderer for JsonDocument<'_> {
    fn connection(&mut self, c: &ConnectionReport) -> io::Result<()> {
        self.0.connection(c)
    }

    fn finish(self: Box<Self>, stats: &CaptureStats, summary: &Summary) -> io::Result<()> {
        self.0.end(stats, summary).map(|_| ())
    }
}

/// JSON Lines: every line a complete JSON object with a `type`.
struct JsonLines<'w> {
    out: Box<dyn Write + 'w>,
    /// One line, written at once (see `JsonWriter`).
    buf: Vec<u8>,
}

#[derive(Serialize)]
struct Line<'a, T: Serialize> {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(flatten)]
    body: &'a T,
}

impl<'w> JsonLines<'w> {
    fn begin(mut out: Box<dyn Write + 'w>) -> io::Result<Self> {
        writeln!(
            out,
            "{{\"type\":\"header\",\"schema_version\":{SCHEMA_VERSION},\"generator\":\"rttdoc {}\"}}",
            env!("CARGO_PKG_VERSION")
        )?;
        Ok(JsonLines {
            out,
            buf: Vec::with_capacity(16 * 1024),
        })
    }
}

impl Renderer for JsonLines<'_> {
    fn connection(&mut self, c: &ConnectionReport) -> io::Result<()> {
        // The same bytes as `Line { kind: "connection", body: c }`, whose
        // `flatten` would buffer the whole report as serde values first
        // (twice the time of `--json` on many connections): the `type`
        // key, then the report's own fields.
        const KEY: &[u8] = br#"{"type":"connection""#;
        self.buf.clear();
        self.buf.extend_from_slice(KEY);
        crate::json_ser::to_vec(&mut self.buf, c)?;
        // A report always has fields, so its brace becomes their comma.
        debug_assert_eq!(self.buf[KEY.len()], b'{');
        self.buf[KEY.len()] = b',';
        self.buf.push(b'\n');
        self.out.write_all(&self.buf)
    }

    fn finish(mut self: Box<Self>, stats: &CaptureStats, summary: &Summary) -> io::Result<()> {
        #[derive(Serialize)]
        struct End<'a> {
            capture: &'a CaptureStats,
            summary: crate::json::SummaryJson<'a>,
        }
        if let Some(quic) = crate::json::worded_quic(stats) {
            // One line per QUIC connection, then their totals.
            for c in &quic.listed {
                serde_json::to_writer(
                    &mut self.out,
                    &Line {
                        kind: "quic_connection",
                        body: c,
                    },
                )?;
                self.out.write_all(b"\n")?;
            }
            #[derive(Serialize)]
            struct QuicTotals<'a> {
                connections: u64,
                datagrams: u64,
                handshakes: u64,
                excess_ms: f64,
                unexplained_ms: f64,
                causes: &'a [rttdoc_model::QuicCause],
                not_listed: u64,
            }
            serde_json::to_writer(
                &mut self.out,
                &Line {
                    kind: "quic",
                    body: &QuicTotals {
                        connections: quic.connections,
                        datagrams: quic.datagrams,
                        handshakes: quic.handshakes,
                        excess_ms: quic.excess_ms,
                        unexplained_ms: quic.unexplained_ms,
                        causes: &quic.causes,
                        not_listed: quic.not_listed,
                    },
                },
            )?;
            self.out.write_all(b"\n")?;
        }
        let end = End {
            capture: stats,
            summary: crate::json::SummaryJson::of(summary),
        };
        serde_json::to_writer(
            &mut self.out,
            &Line {
                kind: "summary",
                body: &end,
            },
        )?;
        self.out.write_all(b"\n")?;
        self.out.flush()
    }
}

/// One row per connection; the columns are [`CSV_COLUMNS`].
struct Csv<'w> {
    out: csv::Writer<Box<dyn Write + 'w>>,
    /// One field's text, reused: a row is 24 fields, and a capture of a
    /// SYN flood is hundreds of thousands of rows.
    field: String,
}

/// The CSV header, in column order (docs/json-schema.md explains each:
/// they are the JSON fields of the same names).
pub const CSV_COLUMNS: [&str; 25] = [
    "stream",
    "client",
    "server",
    "start_time",
    "start_offset_s",
    "duration_ms",
    "vantage",
    "partial",
    "ending",
    "rtt_ms",
    "tcp_handshake_ms",
    "tls_version",
    "tls_handshake_rtts",
    "tls_ideal_rtts",
    "first_byte_ms",
    "exchanges",
    "excess_rtts",
    "excess_ms",
    "unexplained_ms",
    "stall_ms",
    "findings",
    "same_connection_as",
    "client_turnaround_ms",
    "server_turnaround_ms",
    "path_queue_ms",
];

impl<'w> Csv<'w> {
    fn begin(out: Box<dyn Write + 'w>) -> io::Result<Self> {
        let mut out = csv::Writer::from_writer(out);
        out.write_record(CSV_COLUMNS)?;
        Ok(Csv {
            out,
            field: String::with_capacity(64),
        })
    }

    /// Writes the next field as `fill` words it into the reused buffer.
    fn field(&mut self, fill: impl FnOnce(&mut String)) -> io::Result<()> {
        self.field.clear();
        fill(&mut self.field);
        self.out.write_field(&self.field)?;
        Ok(())
    }

    /// Writes the next field as `value` displays.
    fn shown(&mut self, value: impl std::fmt::Display) -> io::Result<()> {
        self.field(|f| {
            let _ = write!(f, "{value}");
        })
    }
}

/// A number for CSV: at most 3 decimals (microseconds, for ms), no "-0".
fn num(out: &mut String, v: f64) {
    let from = out.len();
    let _ = write!(out, "{:.3}", v + 0.0);
    let kept = out[from..]
        .trim_end_matches('0')
        .trim_end_matches('.')
        .len();
    out.truncate(from + kept);
    if &out[from..] == "-0" {
        out.truncate(from);
        out.push('0');
    }
}

fn opt(out: &mut String, v: Option<f64>) {
    if let Some(v) = v {
        num(out, v);
    }
}

impl Renderer for Csv<'_> {
    fn shows_words(&self) -> bool {
        false
    }

    fn connection(&mut self, c: &ConnectionReport) -> io::Result<()> {
        let tls = c.tls.as_ref();
        self.shown(c.stream)?;
        self.shown(c.client)?;
        self.shown(c.server)?;
        self.shown(format_args!("{:.6}", c.start_time))?;
        self.shown(format_args!("{:.6}", c.start_offset_s))?;
        self.field(|f| num(f, c.duration_ms))?;
        self.field(|f| f.push_str(c.vantage.as_str()))?;
        self.shown(c.partial)?;
        self.field(|f| f.push_str(c.ending.name()))?;
        self.field(|f| opt(f, c.rtt_ms))?;
        self.field(|f| opt(f, c.tcp_handshake_ms))?;
        self.field(|f| {
            if let Some(v) = tls.and_then(|t| t.version) {
                let _ = write!(f, "{v}");
            }
        })?;
        self.field(|f| opt(f, tls.and_then(|t| t.handshake_rtts)))?;
        self.field(|f| opt(f, tls.and_then(|t| t.ideal_handshake_rtts)))?;
        self.field(|f| opt(f, first_byte_ms(c)))?;
        self.shown(c.exchanges)?;
        self.field(|f| num(f, c.excess_rtts))?;
        self.field(|f| num(f, c.excess_ms))?;
        self.field(|f| num(f, c.unexplained_ms))?;
        self.field(|f| num(f, stall_ms(c)))?;
        self.field(|f| {
            // Each kind once, in the order found (a repeat only follows
            // its own kind).
            let mut last = None;
            for kind in c.findings.iter().map(|x| x.kind.name()) {
                if last != Some(kind) {
                    if last.is_some() {
                        f.push(' ');
                    }
                    f.push_str(kind);
                    last = Some(kind);
                }
            }
        })?;
        self.field(|f| {
            if let Some(s) = c.same_connection_as {
                let _ = write!(f, "{s}");
            }
        })?;
        self.field(|f| num(f, c.client_turnaround_ms))?;
        self.field(|f| num(f, c.server_turnaround_ms))?;
        self.field(|f| num(f, c.path_queue_ms))?;
        self.out.write_record(None::<&[u8]>)?;
        Ok(())
    }

    fn finish(mut self: Box<Self>, _: &CaptureStats, _: &Summary) -> io::Result<()> {
        self.out.flush()
    }
}
