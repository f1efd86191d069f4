//! The `rttdoc` command line: a thin layer that wires the capture reader,
//! the analysis and the renderers together and decides how errors look.

use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

mod analyze_cmd;
mod audit_cmd;
mod lab_cmd;
mod monitor_cmd;
mod probe_cmd;

use lab_cmd::LabCommand;

/// mimalloc: small, short-lived allocations (a report per connection, TLS
/// records) cost a fifth of a churn pass with glibc's malloc
/// (docs/benchmarks.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

extern "C" {
    /// mimalloc's option setter (mimalloc.h; linked by `mimalloc`).
    fn mi_option_set(option: libc::c_int, value: libc::c_long);
}

/// Memory follows open connections (docs/ARCHITECTURE.md): mimalloc's
/// defaults keep freed pages and commit arenas eagerly, which doubled peak
/// RSS on a SYN flood. Free pages go back at once, arenas are committed as
/// used. The numbers are `mi_option_e` in the vendored v3 mimalloc.h.
fn allocator_returns_memory() {
    const MI_OPTION_ARENA_EAGER_COMMIT: libc::c_int = 4;
    const MI_OPTION_PURGE_DELAY: libc::c_int = 15;
    // SAFETY: plain setters of global integer options, called before any
    // thread is spawned.
    unsafe {
        mi_option_set(MI_OPTION_ARENA_EAGER_COMMIT, 0);
        mi_option_set(MI_OPTION_PURGE_DELAY, 0);
    }
}

#[derive(Parser)]
#[command(
    name = "rttdoc",
    version,
    about = "Explains why TCP/TLS connections took more round trips than they should"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Subcommand)]
enum Command {
    /// Read a pcap/pcapng capture (optionally gzip'd, or - for stdin) and
    /// explain every TCP connection in it.
    Analyze(Box<analyze_cmd::AnalyzeArgs>),
    /// Find the server settings that cost round trips (nginx, HAProxy,
    /// sysctls, routes, certificate chains), optionally confirmed by a capture.
    Audit(audit_cmd::AuditArgs),
    /// Capture live (or replay a capture) and serve Prometheus metrics of
    /// every connection as it finishes (docs/metrics.md).
    Monitor(Box<monitor_cmd::MonitorArgs>),
    /// Measure an http(s) URL like `curl -w`, capture its own packets and explain every extra round trip.
    Probe(Box<probe_cmd::ProbeArgs>),
    /// Reproduce latency pathologies on real kernel TCP stacks (root, or rootless in `unshare -Urn`).
    Lab {
        #[command(subcommand)]
        command: LabCommand,
    },
}

fn main() -> ExitCode {
    allocator_returns_memory();
    let cli = Cli::parse();
    match cli.command {
        Command::Analyze(args) => analyze_cmd::analyze(*args),
        Command::Audit(args) => audit_cmd::audit(args),
        Command::Monitor(args) => monitor_cmd::monitor(*args),
        Command::Probe(args) => probe_cmd::probe(*args),
        Command::Lab { command } => {
            let code = lab_cmd::lab(command);
            // A signal's cleanup kills what runs in the namespaces, and the
            // run then fails here; the signal thread owns the exit (128 +
            // signal), so wait for it instead of racing it with status 1.
            while rttdoc_lab::interrupted() {
                std::thread::park();
            }
            code
        }
    }
}
