//! The `rttdoc` command line: a thin layer that wires the capture reader,
//! the analysis and the renderers together and decides how errors look.

use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

mod analyze_cmd;
mod audit_cmd;
mod lab_cmd;
mod monitor_cmd;

use lab_cmd::LabCommand;

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
    /// Reproduce latency pathologies on real kernel TCP stacks (root, or rootless in `unshare -Urn`).
    Lab {
        #[command(subcommand)]
        command: LabCommand,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Analyze(args) => analyze_cmd::analyze(*args),
        Command::Audit(args) => audit_cmd::audit(args),
        Command::Monitor(args) => monitor_cmd::monitor(*args),
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
