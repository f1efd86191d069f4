//! `rttdoc monitor`: live capture (or a capture file replayed at its
//! recorded pace) -> the same analysis as `rttdoc analyze`, one connection
//! at a time as each finishes -> Prometheus metrics served on /metrics
//! (docs/metrics.md).
//!
//! One thread reads packets and runs the tracker; it also moves the
//! tracker's clock on a timer, so connections that went quiet are reported
//! even when no packet comes. Another serves HTTP. The metrics are atomics
//! shared by both.

use std::io::{self, BufRead, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rttdoc_analyze::{AnalyzeOptions, Tracker};
use rttdoc_capture::{Capture, LiveCapture};
use rttdoc_report::metrics::{CaptureCounts, Metrics};

/// `rttdoc monitor`'s arguments.
#[derive(clap::Args)]
pub struct MonitorArgs {
    /// Interface to capture on (`any` for all). Needs CAP_NET_RAW.
    #[arg(
        long,
        short = 'i',
        value_name = "IF",
        required_unless_present = "replay"
    )]
    interface: Option<String>,
    /// BPF filter, tcpdump's syntax (compiled by libpcap, loaded at run time).
    #[arg(long, value_name = "BPF")]
    filter: Option<String>,
    /// Address to serve /metrics on (port 0: one the kernel picks, said
    /// on stderr).
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:9464")]
    listen: SocketAddr,
    /// Feed this capture file instead of an interface, at its recorded
    /// pace (for demos and tests); metrics stay served after its end.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["interface", "filter"])]
    replay: Option<PathBuf>,
    /// With --replay: play this many times faster than recorded (0: as
    /// fast as it reads).
    #[arg(
        long,
        value_name = "FACTOR",
        default_value_t = 1.0,
        requires = "replay"
    )]
    speed: f64,
    /// With --replay: exit when the capture is done instead of serving on.
    #[arg(long, requires = "replay")]
    exit_after_replay: bool,
    /// Give this server (ADDRESS:PORT, or a TLS SNI name) its own `server`
    /// label value (repeatable); every other server is `other`.
    #[arg(long, value_name = "SERVER")]
    label_server: Vec<String>,
    /// Most connections tracked at once; beyond it the longest-idle are
    /// finished early (rttdoc_flows_evicted_total).
    #[arg(long, value_name = "N", default_value_t = rttdoc_analyze::DEFAULT_MAX_FLOWS)]
    max_flows: usize,
    /// A connection with no packet for this long is finished and counted.
    #[arg(long, value_name = "SECONDS", default_value_t = 900)]
    idle_timeout: u64,
    /// Bytes kept of each packet (headers and the TLS handshake fit in the
    /// default).
    #[arg(long, value_name = "BYTES", default_value_t = 65535)]
    snaplen: u32,
    /// Capture ring size in MiB: what the kernel holds while rttdoc is busy
    /// (tcpdump's -B); a burst beyond it is dropped and counted in
    /// rttdoc_capture_dropped_packets_total.
    #[arg(long, value_name = "MIB", default_value_t = rttdoc_capture::DEFAULT_BUFFER_BYTES >> 20)]
    buffer_mb: usize,
    /// TLS key log (SSLKEYLOGFILE format): reads 0-RTT early data only.
    #[arg(long, value_name = "FILE")]
    keylog: Option<PathBuf>,
}

/// How often the tracker's clock is moved without a packet, and the
/// capture counters refreshed.
const TICK: Duration = Duration::from_millis(100);

fn wall_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0)
}

pub fn monitor(args: MonitorArgs) -> ExitCode {
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rttdoc: error: {e}");
            ExitCode::from(1)
        }
    }
}

enum Source {
    Live(LiveCapture),
    Replay(Capture),
}

fn run(args: MonitorArgs) -> Result<(), String> {
    let keylog = match args.keylog.as_deref() {
        None => None,
        Some(p) => Some(Arc::new(
            rttdoc_analyze::keylog::KeyLog::load(p).map_err(|e| format!("key log {e}"))?,
        )),
    };
    let mut source = match (&args.replay, &args.interface) {
        (Some(file), _) => {
            Source::Replay(Capture::open(&file.to_string_lossy()).map_err(|e| e.to_string())?)
        }
        (None, Some(interface)) => Source::Live(
            LiveCapture::open_with_buffer(
                interface,
                args.filter.as_deref(),
                args.snaplen,
                args.buffer_mb.max(1) << 20,
            )
            .map_err(|e| e.to_string())?,
        ),
        (None, None) => unreachable!("clap requires --interface or --replay"),
    };
    let listener =
        TcpListener::bind(args.listen).map_err(|e| format!("listen on {}: {e}", args.listen))?;
    // The address bound: port 0 asks the kernel for a free one.
    let listening = listener.local_addr().unwrap_or(args.listen);
    let metrics = Arc::new(Metrics::new(&args.label_server));
    {
        let metrics = metrics.clone();
        std::thread::Builder::new()
            .name("metrics-http".into())
            .spawn(move || serve(listener, &metrics))
            .map_err(|e| e.to_string())?;
    }
    match &source {
        Source::Live(c) => eprintln!(
            "rttdoc monitor: capturing on {}{}, serving http://{}/metrics",
            c.interface(),
            args.filter
                .as_deref()
                .map(|f| format!(" ({f})"))
                .unwrap_or_default(),
            listening
        ),
        Source::Replay(c) => eprintln!(
            "rttdoc monitor: replaying {} at {}x, serving http://{}/metrics",
            c.name(),
            args.speed,
            listening
        ),
    }
    let options = AnalyzeOptions {
        keylog,
        max_flows: args.max_flows,
        idle_timeout_s: args.idle_timeout,
        threads: 1,
        ..Default::default()
    };
    let mut sink = Observer(metrics.clone());
    let mut tracker = rttdoc_diagnose::tracker(options, &mut sink);
    match &mut source {
        Source::Live(capture) => live_loop(capture, &mut tracker, &metrics),
        Source::Replay(capture) => {
            replay(capture, tracker, &metrics, args.speed)?;
            if args.exit_after_replay {
                return Ok(());
            }
            eprintln!("rttdoc monitor: replay done; serving until stopped");
            loop {
                std::thread::park();
            }
        }
    }
}

fn counts(tracker: &Tracker<'_>, dropped: u64) -> CaptureCounts {
    CaptureCounts {
        frames: tracker.stats.frames,
        damaged: tracker.stats.damaged,
        snap_cut: tracker.stats.snap_cut,
        snap_cut_payloads: tracker.stats.snap_cut_payloads,
        evicted_flows: tracker.stats.evicted_flows,
        dropped,
        open_flows: tracker.open_connections() as u64,
    }
}

fn live_loop(capture: &mut LiveCapture, tracker: &mut Tracker<'_>, metrics: &Metrics) -> ! {
    let mut last_tick = Instant::now();
    let mut dropped = 0;
    loop {
        match capture.next_frame(TICK) {
            Ok(Some(frame)) => tracker.frame(&frame),
            Ok(None) => {}
            Err(e) => {
                // A read error on a packet socket is transient (ENETDOWN
                // while an interface bounces): say so and go on.
                eprintln!("rttdoc monitor: capture: {e}");
                std::thread::sleep(TICK);
            }
        }
        if last_tick.elapsed() >= TICK {
            last_tick = Instant::now();
            tracker.tick(wall_ns());
            if let Ok(st) = capture.stats() {
                dropped = st.dropped;
            }
            metrics.set_capture(counts(tracker, dropped));
        }
    }
}

/// Feeds the file at its recorded pace (`speed` times faster; 0: no
/// waiting), moving the tracker's clock through the gaps as live capture
/// would, then finishes every connection still open.
fn replay(
    capture: &mut Capture,
    mut tracker: Tracker<'_>,
    metrics: &Metrics,
    speed: f64,
) -> Result<(), String> {
    let started = Instant::now();
    let mut first_ts: Option<i64> = None;
    let mut last_tick = Instant::now();
    let secrets = capture.secrets();
    // Capture time now, on the replay's clock.
    let capture_now = |first: i64| first + (started.elapsed().as_secs_f64() * speed * 1e9) as i64;
    loop {
        let frame = match capture.next_frame() {
            Ok(Some(f)) => f,
            Ok(None) => break,
            Err(e) => {
                eprintln!("rttdoc monitor: {e}; the frames before it were replayed");
                break;
            }
        };
        let first = *first_ts.get_or_insert(frame.ts_ns);
        if speed > 0.0 {
            loop {
                let due = (frame.ts_ns - first) as f64 / speed / 1e9;
                let wait = due - started.elapsed().as_secs_f64();
                if wait <= 0.0 {
                    break;
                }
                std::thread::sleep(Duration::from_secs_f64(wait.min(TICK.as_secs_f64())));
                if last_tick.elapsed() >= TICK {
                    last_tick = Instant::now();
                    tracker.tick(capture_now(first).min(frame.ts_ns));
                    metrics.set_capture(counts(&tracker, 0));
                }
            }
        }
        let embedded = secrets.take_new_tls_key_log();
        if !embedded.is_empty() {
            tracker.add_key_log_lines(&embedded);
        }
        tracker.frame(&frame);
        if last_tick.elapsed() >= TICK {
            last_tick = Instant::now();
            metrics.set_capture(counts(&tracker, 0));
        }
    }
    let stats = tracker.finish();
    metrics.set_capture(CaptureCounts {
        frames: stats.frames,
        damaged: stats.damaged,
        snap_cut: stats.snap_cut,
        snap_cut_payloads: stats.snap_cut_payloads,
        evicted_flows: stats.evicted_flows,
        dropped: 0,
        open_flows: 0,
    });
    Ok(())
}

/// Serves /metrics, one request at a time (a scraper's load), each
/// connection bounded by a timeout so a stalled client cannot hold it.
fn serve(listener: TcpListener, metrics: &Metrics) {
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        if let Err(e) = answer(stream, metrics) {
            if !matches!(
                e.kind(),
                io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::BrokenPipe
            ) {
                eprintln!("rttdoc monitor: http: {e}");
            }
        }
    }
}

const OPENMETRICS_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";
const TEXT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

fn answer(stream: TcpStream, metrics: &Metrics) -> io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    stream.set_write_timeout(Some(Duration::from_secs(5)))?;
    let mut reader = io::BufReader::new(stream.try_clone()?.take(16 * 1024));
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    let mut openmetrics = false;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line == "\r\n" || line == "\n" {
            break;
        }
        let lower = line.to_ascii_lowercase();
        if lower.starts_with("accept:") && lower.contains("application/openmetrics-text") {
            openmetrics = true;
        }
    }
    let mut parts = request_line.split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let path = target.split('?').next().unwrap_or("");
    let (status, content_type, body) = match (method, path) {
        ("GET" | "HEAD", "/metrics") if openmetrics => {
            ("200 OK", OPENMETRICS_TYPE, metrics.openmetrics())
        }
        ("GET" | "HEAD", "/metrics") => ("200 OK", TEXT_TYPE, metrics.prometheus_text()),
        ("GET" | "HEAD", "/") => (
            "200 OK",
            "text/html; charset=utf-8",
            "<html><head><title>rttdoc monitor</title></head><body>\
             <h1>rttdoc monitor</h1><p><a href=\"/metrics\">Metrics</a></p></body></html>\n"
                .to_string(),
        ),
        ("GET" | "HEAD", _) => ("404 Not Found", "text/plain", "not found\n".to_string()),
        _ => (
            "405 Method Not Allowed",
            "text/plain",
            "GET /metrics\n".to_string(),
        ),
    };
    let mut out = io::BufWriter::new(stream);
    write!(
        out,
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    if method != "HEAD" {
        out.write_all(body.as_bytes())?;
    }
    out.flush()
}

/// Hands every finished connection, TCP or QUIC, and every window of a
/// long connection diagnosed while it is open, to the metrics.
struct Observer(std::sync::Arc<Metrics>);

impl rttdoc_analyze::ReportSink for Observer {
    fn report(&mut self, r: rttdoc_analyze::ConnectionReport) {
        self.0.observe(&r);
    }

    fn quic(&mut self, r: &rttdoc_analyze::QuicConnectionReport) {
        self.0.observe_quic(r);
    }

    /// A long connection's window: counted while the connection is open.
    fn window(&mut self, r: rttdoc_analyze::ConnectionReport) {
        self.0.observe_window(&r);
    }
}
