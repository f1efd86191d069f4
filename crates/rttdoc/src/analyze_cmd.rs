//! `rttdoc analyze`: read a capture, diagnose it, render the result.

use std::io::{self, IsTerminal, Write};
use std::process::ExitCode;
use std::time::Duration;

use std::net::IpAddr;

use clap::ValueEnum;
use rttdoc_analyze::series::SERIES_CAP;
use rttdoc_analyze::{AnalyzeOptions, ConnectionReport, QuicSection, ReportSink, SeriesRequest};
use rttdoc_capture::{Capture, FileFormat};
use rttdoc_diagnose::analyze_capture;
use rttdoc_report::{ConnectionDetail, Format, RenderOptions, Renderer, Summary};

use crate::ColorChoice;

fn progress_bar(
    capture: &Capture,
    enabled: bool,
) -> Option<(indicatif::ProgressBar, std::thread::JoinHandle<()>)> {
    let progress = capture.progress();
    let total = progress.total?;
    if !enabled || !io::stderr().is_terminal() || total < 32 * 1024 * 1024 {
        return None;
    }
    let bar = indicatif::ProgressBar::new(total);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{bar:40} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
        )
        .expect("valid template"),
    );
    let b = bar.clone();
    let handle = std::thread::spawn(move || {
        while !b.is_finished() {
            b.set_position(progress.bytes_read());
            std::thread::sleep(Duration::from_millis(100));
        }
    });
    Some((bar, handle))
}

/// `rttdoc analyze`'s arguments.
#[derive(clap::Args)]
pub struct AnalyzeArgs {
    /// Capture file (pcap or pcapng, plain or .gz), or - for stdin.
    /// Several files (a ring buffer's, or two interfaces') are read as
    /// one, merged by time as `mergecap -w merged.pcapng FILE...` merges
    /// them: frame numbers and tcp.stream are that merged file's.
    #[arg(required = true, num_args = 1..)]
    capture: Vec<String>,
    /// Output format: tables for people, one JSON document, JSON Lines
    /// (one connection per line as it finishes), CSV, or Prometheus
    /// metrics for node_exporter's textfile collector (docs/metrics.md).
    #[arg(long, value_enum, default_value = "text")]
    format: FormatArg,
    /// Same as --format json.
    #[arg(long, conflicts_with = "format")]
    json: bool,
    /// Show one connection in detail: ledger, TLS messages and the frame ladder.
    #[arg(long, value_name = "STREAM")]
    conn: Option<u64>,
    /// Show one QUIC connection in detail (its number in the QUIC table):
    /// its handshake, findings and filters.
    #[arg(long, value_name = "NUMBER", conflicts_with = "conn")]
    quic: Option<u64>,
    /// Only connections with this address at either end, or to this server
    /// name: its TLS SNI, or the name the client looked up just before it
    /// (DNS in the capture) (repeatable).
    #[arg(long, value_name = "IP|NAME")]
    host: Vec<Host>,
    /// Only connections with this port at either end (repeatable).
    #[arg(long, value_name = "PORT")]
    port: Vec<u16>,
    /// Only these tcp.stream numbers (repeatable, or comma-separated).
    #[arg(long, value_name = "N", value_delimiter = ',')]
    stream: Vec<u64>,
    /// Only connections active at or after this many seconds into the capture.
    #[arg(long, value_name = "SECONDS")]
    from: Option<f64>,
    /// Only connections that started at or before this many seconds into the capture.
    #[arg(long, value_name = "SECONDS")]
    to: Option<f64>,
    /// Rows in the connection table (most excess first).
    #[arg(long, value_name = "N", default_value_t = rttdoc_report::DEFAULT_ROWS_KEPT)]
    top: usize,
    /// Every connection in the connection table (memory grows with the capture).
    #[arg(long, conflicts_with = "top")]
    all: bool,
    /// Most connections tracked at once; beyond it the longest-idle are
    /// finished early (counted in the output).
    #[arg(long, value_name = "N", default_value_t = rttdoc_analyze::DEFAULT_MAX_FLOWS)]
    max_flows: usize,
    /// Threads: one tracks, the others diagnose finished connections
    /// (the file is read on a thread of its own either way). The output
    /// does not depend on it. Default: the CPUs this process may use, at
    /// most 4 (one tracking thread feeds the others, and the diagnosis is
    /// a third of the work: more workers would wait).
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    /// Colour in tables.
    #[arg(long, value_enum, default_value = "auto")]
    color: ColorChoice,
    /// Never show a progress bar.
    #[arg(long)]
    no_progress: bool,
    /// TLS key log (SSLKEYLOGFILE format, as Wireshark's tls.keylog_file):
    /// used to read TLS 1.3 0-RTT early data (early_data_unsafe), to tell a
    /// server's session tickets from its first answer, and to read a TLS
    /// 1.3 connection's HTTP as in the clear (TLS 1.2's too, with an AEAD
    /// suite and the session's CLIENT_RANDOM line): HTTP/2's frames (gRPC's calls
    /// named and timed), HTTP/1.x's requests and answers (redirects,
    /// authentication challenges). Key logs embedded in a pcapng
    /// (Decryption Secrets Blocks) are added to it.
    #[arg(long, value_name = "FILE")]
    keylog: Option<std::path::PathBuf>,
    /// Ledger only: skip the diagnosis (no findings, all excess unexplained).
    #[arg(long)]
    no_findings: bool,
    /// Also write an HTML report to FILE: the overview, and for the worst
    /// connections (--top N, all with --all) the ledger, the findings, a
    /// time-sequence graph zoomed to each finding and a timed ladder.
    #[arg(long, value_name = "FILE")]
    html: Option<std::path::PathBuf>,
    /// Also write the capture back as pcapng to FILE, with a packet comment
    /// on every evidence frame (Wireshark: frame.comment contains "rttdoc");
    /// several captures are written merged, numbered as analysed.
    #[arg(long, value_name = "FILE")]
    annotate: Option<std::path::PathBuf>,
    /// Put each connection's per-packet graph data (`series`) in the JSON
    /// (--json, --format jsonl; docs/json-schema.md).
    #[arg(long)]
    series: bool,
    /// With --format prometheus: give this server (ADDRESS:PORT, or a TLS
    /// SNI name) its own `server` label value (repeatable); all others are
    /// `other`.
    #[arg(long, value_name = "SERVER")]
    label_server: Vec<String>,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum FormatArg {
    Text,
    Json,
    Jsonl,
    Csv,
    Prometheus,
}

/// A `--host`: an address, or a server name (lower case, without the
/// root's trailing dot).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Host {
    Address(IpAddr),
    Name(String),
}

impl std::str::FromStr for Host {
    type Err = String;

    fn from_str(s: &str) -> Result<Host, String> {
        if let Ok(ip) = s.parse::<IpAddr>() {
            return Ok(Host::Address(ip));
        }
        let name = s.trim_end_matches('.').to_ascii_lowercase();
        let label_ok = |l: &str| {
            !l.is_empty()
                && l.len() <= 63
                && l.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        };
        if name.is_empty() || name.len() > 253 || !name.split('.').all(label_ok) {
            return Err(format!("{s:?} is neither an IP address nor a host name"));
        }
        Ok(Host::Name(name))
    }
}

impl Host {
    fn matches(&self, c: &ConnectionReport) -> bool {
        match self {
            Host::Address(ip) => c.client.ip == *ip || c.server.ip == *ip,
            Host::Name(name) => {
                let sni = c.tls.as_ref().and_then(|t| t.sni.as_deref());
                let looked_up = c.name_lookup.as_ref().map(|l| l.name.as_str());
                [sni, looked_up]
                    .into_iter()
                    .flatten()
                    .any(|n| n.trim_end_matches('.').eq_ignore_ascii_case(name))
            }
        }
    }
}

/// Which connections the output shows (`--host`, `--port`, `--stream`,
/// `--from`, `--to`); the summary covers the same ones.
#[derive(Debug, Default)]
pub struct ConnectionFilter {
    hosts: Vec<Host>,
    ports: Vec<u16>,
    streams: Vec<u64>,
    from_s: Option<f64>,
    to_s: Option<f64>,
}

impl ConnectionFilter {
    pub fn matches(&self, c: &ConnectionReport) -> bool {
        let ends = [c.client, c.server];
        (self.hosts.is_empty() || self.hosts.iter().any(|h| h.matches(c)))
            && (self.ports.is_empty() || ends.iter().any(|e| self.ports.contains(&e.port)))
            && (self.streams.is_empty() || self.streams.contains(&c.stream))
            && self
                .from_s
                .is_none_or(|from| c.start_offset_s + c.duration_ms / 1e3 >= from)
            && self.to_s.is_none_or(|to| c.start_offset_s <= to)
    }
}

impl ConnectionFilter {
    fn is_empty(&self) -> bool {
        self.hosts.is_empty()
            && self.ports.is_empty()
            && self.streams.is_empty()
            && self.from_s.is_none()
            && self.to_s.is_none()
    }

    /// The QUIC connections the same selection keeps: by address or
    /// server name (their ClientHello's), port and time (a `--stream` is
    /// a TCP stream: none), their totals made again from those kept.
    fn quic(&self, section: QuicSection) -> Option<QuicSection> {
        if self.is_empty() {
            return Some(section);
        }
        let mut kept = QuicSection::default();
        for c in section.listed {
            let ends = [c.client, c.server];
            let host = |h: &Host| match h {
                Host::Address(ip) => ends.iter().any(|e| e.ip == *ip),
                Host::Name(name) => c
                    .server_name
                    .as_deref()
                    .is_some_and(|n| n.trim_end_matches('.').eq_ignore_ascii_case(name)),
            };
            let keep = self.streams.is_empty()
                && (self.hosts.is_empty() || self.hosts.iter().any(host))
                && (self.ports.is_empty() || ends.iter().any(|e| self.ports.contains(&e.port)))
                && self
                    .from_s
                    .is_none_or(|from| c.start_offset_s + c.duration_ms / 1e3 >= from)
                && self.to_s.is_none_or(|to| c.start_offset_s <= to);
            if keep {
                kept.add(c);
            }
        }
        (kept.connections > 0).then_some(kept)
    }
}

/// Columns to fit tables into: the terminal's, or $COLUMNS; none for a pipe.
fn terminal_width() -> Option<u16> {
    if let Some(w) = std::env::var("COLUMNS").ok().and_then(|v| v.parse().ok()) {
        return Some(w);
    }
    if !io::stdout().is_terminal() {
        return None;
    }
    let mut size: libc::winsize = unsafe { std::mem::zeroed() };
    // SAFETY: TIOCGWINSZ writes a winsize into the pointer it is given.
    let ok = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut size) } == 0;
    (ok && size.ws_col > 0).then_some(size.ws_col)
}

pub fn analyze(args: AnalyzeArgs) -> ExitCode {
    let from_stdin = args.capture.iter().any(|c| c == "-");
    if from_stdin && args.capture.len() > 1 {
        eprintln!(
            "rttdoc: error: standard input (-) can only be read alone, not with other captures"
        );
        return ExitCode::from(1);
    }
    // A path that is no file is a mistake to say before any work, not
    // damage found after it (a merge would read the others and warn).
    for path in args.capture.iter().filter(|c| *c != "-") {
        match std::fs::metadata(path) {
            Err(e) => {
                eprintln!("rttdoc: error: {path}: {e}");
                return ExitCode::from(1);
            }
            Ok(m) if m.is_dir() => {
                eprintln!(
                    "rttdoc: error: {path} is a directory: give the captures in it \
                     (rttdoc analyze {}/*), which are read as one, merged by time",
                    path.trim_end_matches('/')
                );
                return ExitCode::from(1);
            }
            Ok(_) => {}
        }
    }
    if from_stdin && args.annotate.is_some() {
        eprintln!(
            "rttdoc: error: --annotate copies the capture file again: it needs a file, not stdin"
        );
        return ExitCode::from(1);
    }
    let keylog = match args
        .keylog
        .as_deref()
        .map(rttdoc_analyze::keylog::KeyLog::load)
    {
        None => None,
        Some(Ok(log)) => Some(std::sync::Arc::new(log)),
        Some(Err(e)) => {
            eprintln!("rttdoc: error: key log {e}");
            return ExitCode::from(1);
        }
    };
    let mut capture = match Capture::open_all(&args.capture) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("rttdoc: error: {e}");
            return ExitCode::from(1);
        }
    };
    let file_format = capture.format();
    let format = match (args.json, args.format) {
        (true, _) | (_, FormatArg::Json) => Format::Json,
        (_, FormatArg::Text) => Format::Text,
        (_, FormatArg::Jsonl) => Format::Jsonl,
        (_, FormatArg::Csv) => Format::Csv,
        (_, FormatArg::Prometheus) => Format::Prometheus,
    };
    let color = match args.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
    };
    let render_options = RenderOptions {
        color,
        width: terminal_width(),
    };
    let filter = ConnectionFilter {
        hosts: args.host,
        ports: args.port,
        streams: args.stream,
        from_s: args.from,
        to_s: args.to,
    };
    let bar = progress_bar(&capture, !args.no_progress);
    let mut options = AnalyzeOptions {
        ladder_stream: args.conn,
        keylog,
        findings: !args.no_findings,
        max_flows: args.max_flows,
        threads: args
            .threads
            .unwrap_or_else(|| {
                std::thread::available_parallelism().map_or(1, |n| n.get().min(DEFAULT_THREADS_MAX))
            })
            .max(1),
        ..Default::default()
    };
    let mut html = args.html.as_ref().map(|_| {
        rttdoc_report::html::HtmlReport::new(if args.all { usize::MAX } else { args.top })
    });
    // Series only where an output shows them: the JSON formats, the HTML.
    let series_in_json = args.series && matches!(format, Format::Json | Format::Jsonl);
    options.series = series_request(series_in_json, args.conn, html.is_some() && from_stdin);
    let mut annotations = args
        .annotate
        .as_ref()
        .map(|_| rttdoc_report::annotate::Annotations::new());
    let stdout = io::stdout();
    let out: Box<dyn Write> = Box::new(io::BufWriter::new(stdout.lock()));
    let renderer: io::Result<Box<dyn Renderer>> = match args.conn {
        None if args.quic.is_some() => Ok(Box::new(rttdoc_report::QuicDetail::new(
            out,
            args.quic.unwrap_or_default(),
            format == Format::Json,
            render_options,
        ))),
        Some(n) => Ok(Box::new(ConnectionDetail::new(
            out,
            n,
            format == Format::Json,
            render_options,
        ))),
        None if format == Format::Prometheus => Ok(Box::new(
            rttdoc_report::metrics::PrometheusRenderer::new(out, &args.label_server),
        )),
        None => rttdoc_report::renderer(format, out, render_options),
    };
    let mut renderer = match renderer {
        Ok(r) => r,
        Err(e) => return write_failed(e),
    };
    let mut summary = Summary::new(if args.all { usize::MAX } else { args.top });
    let mut write_error: Option<io::Error> = None;
    let words = renderer.shows_words() || html.is_some();
    let mut output = |piece: Piece<'_>| {
        let report = match piece {
            Piece::Connection(r) => r,
            Piece::Window(w) => {
                if write_error.is_none() && filter.matches(w) {
                    if let Err(e) = renderer.window(w) {
                        write_error = Some(e);
                    }
                }
                return;
            }
        };
        if !filter.matches(report) {
            return;
        }
        if words {
            rttdoc_report::words::word(report);
        }
        if let Some(a) = &mut annotations {
            a.add_connection(report);
        }
        if let Some(h) = &mut html {
            h.add(report);
        }
        summary.add(report);
        if write_error.is_none() {
            if let Err(e) = renderer.connection(report) {
                write_error = Some(e);
            }
        }
    };
    let mut stats = if options.threads > 1 {
        // (Only the metrics count windows: others are not sent them.)
        let windows = format == Format::Prometheus;
        track_beside_output(&mut capture, options.clone(), windows, &mut output)
    } else {
        analyze_capture(&mut capture, options.clone(), &mut DirectSink(&mut output))
    };
    stats.quic = stats
        .quic
        .take()
        .and_then(|q| filter.quic(*q))
        .map(Box::new);
    if let Some((bar, handle)) = bar {
        bar.finish_and_clear();
        let _ = handle.join();
    }
    let result = match write_error {
        Some(e) => Err(e),
        None => renderer.finish(&stats, &summary),
    };
    if let (Some(h), Some(path)) = (html, &args.html) {
        if let Err(e) = write_html(
            h,
            path,
            &args.capture,
            from_stdin,
            &options,
            &stats,
            &summary,
        ) {
            eprintln!("rttdoc: error: {}: {e}", path.display());
            return ExitCode::from(1);
        }
    }
    if let (Some(a), Some(quic)) = (&mut annotations, &stats.quic) {
        for c in &quic.listed {
            a.add_quic(c);
        }
    }
    if let (Some(a), Some(path)) = (&annotations, &args.annotate) {
        if let Err(e) = write_annotated(a, &args.capture, file_format, path) {
            eprintln!("rttdoc: error: --annotate {}: {e}", path.display());
            return ExitCode::from(1);
        }
    }
    match result {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            eprintln!("rttdoc: error: {e}");
            return ExitCode::from(1);
        }
        Err(e) => return write_failed(e),
        Ok(()) => {}
    }
    if let Some(e) = &stats.error {
        eprintln!("rttdoc: error: {e}");
        if stats.merged_files.is_empty() {
            let (frames, were) = if stats.frames == 1 {
                ("frame", "was")
            } else {
                ("frames", "were")
            };
            eprintln!(
                "rttdoc: the {} {frames} before the damage {were} analysed",
                stats.frames
            );
        } else {
            eprintln!(
                "rttdoc: {} frames were analysed: each damaged capture's up to its damage, the others' whole",
                stats.frames
            );
        }
        return ExitCode::from(2);
    }
    ExitCode::SUCCESS
}

/// Which connections carry per-packet graph data: every one for
/// `--series` (the one shown with `--conn`); for an HTML report read from
/// stdin, every one but with the analysis' own per-connection bound (the
/// report keeps only those it draws); none otherwise (a file's HTML report
/// reads the file again for the connections it draws, see [`write_html`]).
fn series_request(series: bool, conn: Option<u64>, html_from_stdin: bool) -> SeriesRequest {
    match (series, conn) {
        (true, Some(n)) => SeriesRequest::only([n].into_iter().collect(), SERIES_CAP),
        (true, None) => SeriesRequest::all(SERIES_CAP),
        (false, _) if html_from_stdin => SeriesRequest::all(STDIN_SERIES_CAP),
        _ => SeriesRequest::default(),
    }
}

/// Packets per connection kept for an HTML report read from stdin, where
/// every open connection records them until it finishes: the analysis'
/// own per-connection bound (connection.rs TIMELINE_CAP), doubled.
const STDIN_SERIES_CAP: usize = 4096;

/// The HTML report: for a file, a second pass over it records the series
/// of the connections the report draws (and only those), so memory
/// follows what is shown; then the file is written.
fn write_html(
    mut html: rttdoc_report::html::HtmlReport,
    path: &std::path::Path,
    capture: &[String],
    from_stdin: bool,
    options: &AnalyzeOptions,
    stats: &rttdoc_analyze::CaptureStats,
    summary: &Summary,
) -> io::Result<()> {
    let streams = html.detail_streams();
    if !from_stdin && !streams.is_empty() && options.series.streams.is_none() {
        let mut again = Capture::open_all(capture).map_err(io::Error::other)?;
        let second = AnalyzeOptions {
            series: SeriesRequest::only(streams.clone(), SERIES_CAP),
            ladder_stream: None,
            ..options.clone()
        };
        analyze_capture(&mut again, second, &mut |mut report: ConnectionReport| {
            if streams.contains(&report.stream) {
                rttdoc_report::words::word(&mut report);
                html.attach(report);
            }
        });
    }
    let file = std::fs::File::create(path)?;
    let shown = html.write(io::BufWriter::new(file), stats, summary)?;
    eprintln!(
        "rttdoc: wrote {} ({} connection(s), {shown} drawn)",
        path.display(),
        summary.connections
    );
    Ok(())
}

/// `--annotate`: the capture copied as pcapng with the findings'
/// comments; several files, merged as the analysis merged them.
/// `format` is what the analysis read the capture as: a single pcap or
/// pcapng file is copied block by block (its own comments and options
/// kept); snoop, or several files, are written from their frames.
fn write_annotated(
    notes: &rttdoc_report::annotate::Annotations,
    captures: &[String],
    format: Option<FileFormat>,
    path: &std::path::Path,
) -> io::Result<()> {
    let copied = matches!(format, Some(FileFormat::Pcap | FileFormat::Pcapng));
    let stats = if let ([capture], true) = (captures, copied) {
        let input = std::fs::File::open(capture)?;
        let out = std::fs::File::create(path)?;
        rttdoc_report::annotate::annotate(input, out, notes)
            .map_err(|e| io::Error::other(format!("{capture}: {e}")))?
    } else {
        // Several files, or a format the copy does not write (snoop):
        // their frames as the analysis read them, in pcapng.
        let mut merged = Capture::open_all(captures).map_err(io::Error::other)?;
        let out = std::fs::File::create(path)?;
        rttdoc_report::annotate::annotate_frames(&mut merged, out, notes)
            .map_err(|e| io::Error::other(e.to_string()))?
    };
    eprintln!(
        "rttdoc: wrote {} ({} frames, {} with a comment; Wireshark: frame.comment contains \"rttdoc\")",
        path.display(),
        stats.frames,
        stats.commented
    );
    if stats.uncommentable > 0 {
        eprintln!(
            "rttdoc: {} evidence frame(s) are Simple Packet Blocks, which cannot carry a comment",
            stats.uncommentable
        );
    }
    Ok(())
}

/// A closed pipe (`| head`) is not an error; anything else is.
fn write_failed(e: io::Error) -> ExitCode {
    if e.kind() == io::ErrorKind::BrokenPipe {
        return ExitCode::SUCCESS;
    }
    eprintln!("rttdoc: error writing output: {e}");
    ExitCode::from(1)
}

/// The most threads `--threads` defaults to.
const DEFAULT_THREADS_MAX: usize = 4;

/// Reports handed from the tracking thread to the output at once: one
/// hand-over (and thread wake-up) per connection would cost more than a
/// short connection's output.
const OUTPUT_BATCH: usize = 64;

/// Runs the pass on a thread of its own and the output (wording, the
/// summary, the renderer: a third of the work with `--json`) on this one,
/// reports in the pass's order, so the output is the same as without.
fn track_beside_output(
    capture: &mut Capture,
    options: AnalyzeOptions,
    windows: bool,
    output: &mut dyn FnMut(Piece<'_>),
) -> rttdoc_analyze::CaptureStats {
    std::thread::scope(|scope| {
        // Bounded: the pass waits for the output, never the reverse.
        let (tx, rx) = std::sync::mpsc::sync_channel::<Handover>(2);
        let tracking = std::thread::Builder::new()
            .name("rttdoc-track".into())
            .spawn_scoped(scope, move || {
                let mut sink = HandoverSink {
                    tx,
                    batch: Vec::with_capacity(OUTPUT_BATCH),
                    windows,
                };
                let stats = analyze_capture(capture, options, &mut sink);
                sink.flush();
                stats
            })
            .expect("spawning the tracking thread");
        // Lent, not moved: a report is 552 bytes.
        for handover in rx {
            match handover {
                Handover::Reports(mut batch) => {
                    batch.iter_mut().for_each(|r| output(Piece::Connection(r)));
                }
                Handover::Numbered(mut batch) => {
                    batch
                        .iter_mut()
                        .for_each(|(_, r)| output(Piece::Connection(r)));
                }
                Handover::Window(w) => output(Piece::Window(&w)),
            }
        }
        tracking
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

/// Reports on their way to the output, in order.
enum Handover {
    /// Made one by one.
    Reports(Vec<ConnectionReport>),
    /// A worker's batch, passed on whole.
    Numbered(Vec<(u64, ConnectionReport)>),
    /// A long connection's window, diagnosed while it was open.
    Window(Box<ConnectionReport>),
}

/// What the pass hands the output: a finished connection, or a window of
/// a long one still open (`ReportSink::window`).
enum Piece<'a> {
    Connection(&'a mut ConnectionReport),
    Window(&'a ConnectionReport),
}

/// The output on the tracking thread (`--threads 1`).
struct DirectSink<'o, F: FnMut(Piece<'_>)>(&'o mut F);

impl<F: FnMut(Piece<'_>)> ReportSink for DirectSink<'_, F> {
    fn report(&mut self, mut r: ConnectionReport) {
        (self.0)(Piece::Connection(&mut r));
    }

    fn window(&mut self, w: ConnectionReport) {
        (self.0)(Piece::Window(&w));
    }
}

/// The tracking thread's end of the hand-over.
struct HandoverSink {
    tx: std::sync::mpsc::SyncSender<Handover>,
    batch: Vec<ConnectionReport>,
    /// Long connections' windows are passed on (the output counts them).
    windows: bool,
}

impl HandoverSink {
    fn flush(&mut self) {
        if !self.batch.is_empty() {
            let full = std::mem::replace(&mut self.batch, Vec::with_capacity(OUTPUT_BATCH));
            // The output is gone only if it panicked: the join reports that.
            let _ = self.tx.send(Handover::Reports(full));
        }
    }
}

impl ReportSink for HandoverSink {
    fn report(&mut self, r: ConnectionReport) {
        self.batch.push(r);
        if self.batch.len() == OUTPUT_BATCH {
            self.flush();
        }
    }

    fn reports(&mut self, rs: Vec<(u64, ConnectionReport)>) {
        // Those made one by one before them go first.
        self.flush();
        let _ = self.tx.send(Handover::Numbered(rs));
    }

    fn window(&mut self, w: ConnectionReport) {
        if !self.windows {
            return;
        }
        self.flush();
        let _ = self.tx.send(Handover::Window(Box::new(w)));
    }
}
