//! `rttdoc analyze`: read a capture, diagnose it, render the result.

use std::io::{self, IsTerminal, Write};
use std::process::ExitCode;
use std::time::Duration;

use rttdoc_analyze::{analyze_capture, AnalyzeOptions, ConnectionReport};
use rttdoc_capture::Capture;
use rttdoc_report::json::JsonWriter;
use rttdoc_report::{terminal, Summary};

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

pub fn analyze(
    path: &str,
    json: bool,
    conn: Option<u64>,
    color: ColorChoice,
    no_progress: bool,
    keylog: Option<&std::path::Path>,
    findings: bool,
) -> ExitCode {
    let keylog = match keylog.map(rttdoc_analyze::keylog::KeyLog::load) {
        None => None,
        Some(Ok(log)) => Some(std::sync::Arc::new(log)),
        Some(Err(e)) => {
            eprintln!("rttdoc: error: key log {e}");
            return ExitCode::from(1);
        }
    };
    let mut capture = match Capture::open(path) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("rttdoc: error: {e}");
            return ExitCode::from(1);
        }
    };
    let color = match color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
    };
    let bar = progress_bar(&capture, !no_progress);
    let options = AnalyzeOptions {
        ladder_stream: conn,
        keylog,
        findings,
        max_flows: std::env::var("RTTDOC_MAX_FLOWS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(rttdoc_analyze::DEFAULT_MAX_FLOWS),
        ..Default::default()
    };
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let mut summary = Summary::default();
    let mut selected: Option<ConnectionReport> = None;
    let mut json_writer = if json && conn.is_none() {
        Some(JsonWriter::begin(&mut out).expect("stdout"))
    } else {
        None
    };
    let mut write_error: Option<io::Error> = None;
    let stats = analyze_capture(&mut capture, options, &mut |report| {
        summary.add(&report);
        if let Some(w) = &mut json_writer {
            if let Err(e) = w.connection(&report) {
                write_error.get_or_insert(e);
            }
        }
        if Some(report.stream) == conn {
            selected = Some(report);
        }
    });
    if let Some((bar, handle)) = bar {
        bar.finish_and_clear();
        let _ = handle.join();
    }
    let result = match (json_writer, conn) {
        (Some(w), _) => w.end(&stats, &summary).map(|_| ()),
        (None, Some(n)) => match &selected {
            Some(c) if json => serde_json::to_writer_pretty(&mut out, c)
                .map_err(io::Error::other)
                .and_then(|_| writeln!(out)),
            Some(c) => terminal::render_connection(&mut out, c, color),
            None => {
                eprintln!("rttdoc: error: {path}: no TCP stream {n} (the capture has {} connections, numbered from 0)", stats.connections);
                return ExitCode::from(1);
            }
        },
        (None, None) => terminal::render_summary(&mut out, &stats, &summary, color),
    };
    let _ = out.flush();
    if let Some(e) = write_error.or(result.err()) {
        if e.kind() != io::ErrorKind::BrokenPipe {
            eprintln!("rttdoc: error writing output: {e}");
            return ExitCode::from(1);
        }
    }
    if let Some(e) = &stats.error {
        eprintln!("rttdoc: error: {e}");
        eprintln!(
            "rttdoc: the {} frames before the damage were analysed",
            stats.frames
        );
        return ExitCode::from(2);
    }
    ExitCode::SUCCESS
}
