//! `rttdoc audit`: the settings that cost round trips (nginx, HAProxy,
//! sysctls, routes, certificate chains), optionally tied to a capture.

use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use rttdoc_audit::{render, Options, RouteSource, Severity};

use crate::ColorChoice;

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum FailOn {
    High,
    Medium,
    Low,
    Info,
    Never,
}

#[derive(Args)]
pub struct AuditArgs {
    /// nginx configuration file (includes are followed); may repeat.
    #[arg(long, value_name = "FILE")]
    nginx: Vec<PathBuf>,
    /// HAProxy configuration file; may repeat.
    #[arg(long, value_name = "FILE")]
    haproxy: Vec<PathBuf>,
    /// Read the kernel's TCP sysctls (of this network namespace: run inside
    /// the server's with `ip netns exec NS rttdoc audit --sysctl`).
    #[arg(long)]
    sysctl: bool,
    /// Read sysctls from this tree instead of /proc/sys (a copy, a test
    /// fixture); implies --sysctl.
    #[arg(long, value_name = "DIR")]
    sysctl_root: Option<PathBuf>,
    /// Read routes (initcwnd, quickack) with `ip -j route`.
    #[arg(long)]
    routes: bool,
    /// Read routes from a saved `ip -j route show table all` output; implies --routes.
    #[arg(long, value_name = "FILE")]
    routes_json: Option<PathBuf>,
    /// A capture of the same server: confirm or contradict each finding,
    /// and explain the capture's findings by configuration lines.
    #[arg(long, value_name = "FILE")]
    capture: Option<PathBuf>,
    /// TLS key log for --capture (0-RTT early data: early_data_unsafe).
    #[arg(long, value_name = "FILE")]
    keylog: Option<PathBuf>,
    /// Print the versioned JSON document (docs/audit.md).
    #[arg(long)]
    json: bool,
    /// Exit with status 2 when a finding is at least this severe.
    #[arg(long, value_enum, default_value = "never")]
    fail_on: FailOn,
    /// Colour in the terminal report.
    #[arg(long, value_enum, default_value = "auto")]
    color: ColorChoice,
}

pub fn audit(args: AuditArgs) -> ExitCode {
    let sysctl_root = match (&args.sysctl_root, args.sysctl) {
        (Some(r), _) => Some(r.clone()),
        (None, true) => Some(PathBuf::from("/proc/sys")),
        (None, false) => None,
    };
    let routes = match (&args.routes_json, args.routes) {
        (Some(f), _) => Some(RouteSource::File(f.clone())),
        (None, true) => Some(RouteSource::Live),
        (None, false) => None,
    };
    if args.nginx.is_empty() && args.haproxy.is_empty() && sysctl_root.is_none() && routes.is_none()
    {
        eprintln!("rttdoc: error: nothing to audit: give --nginx FILE, --haproxy FILE, --sysctl or --routes");
        return ExitCode::from(1);
    }
    let opts = Options {
        nginx: args.nginx,
        haproxy: args.haproxy,
        sysctl_root,
        routes,
        capture: args.capture,
        keylog: args.keylog,
    };
    let report = match rttdoc_audit::run(&opts) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("rttdoc: error: {e}");
            return ExitCode::from(1);
        }
    };
    let color = match args.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
    };
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let written = if args.json {
        let doc = render::json(&report, concat!("rttdoc ", env!("CARGO_PKG_VERSION")));
        serde_json::to_writer_pretty(&mut out, &doc)
            .map_err(io::Error::other)
            .and_then(|_| writeln!(out))
    } else {
        render::terminal(&mut out, &report, color)
    };
    if let Err(e) = written.and_then(|_| out.flush()) {
        if e.kind() != io::ErrorKind::BrokenPipe {
            eprintln!("rttdoc: error writing output: {e}");
            return ExitCode::from(1);
        }
    }
    let threshold = match args.fail_on {
        FailOn::High => Some(Severity::High),
        FailOn::Medium => Some(Severity::Medium),
        FailOn::Low => Some(Severity::Low),
        FailOn::Info => Some(Severity::Info),
        FailOn::Never => None,
    };
    match (threshold, report.worst()) {
        (Some(t), Some(w)) if w >= t => ExitCode::from(2),
        _ => ExitCode::SUCCESS,
    }
}
