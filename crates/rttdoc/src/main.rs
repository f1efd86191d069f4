//! The `rttdoc` command line: a thin layer that wires the capture reader,
//! the analysis and the renderers together and decides how errors look.

use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

mod analyze_cmd;
mod audit_cmd;
mod lab_cmd;

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
    Analyze {
        /// Capture file (pcap or pcapng, plain or .gz), or - for stdin.
        capture: String,
        /// Print the versioned JSON document (docs/json-schema.md) instead of tables.
        #[arg(long)]
        json: bool,
        /// Show one connection in detail: ledger, TLS messages and the frame ladder.
        #[arg(long, value_name = "STREAM")]
        conn: Option<u64>,
        /// Colour in tables.
        #[arg(long, value_enum, default_value = "auto")]
        color: ColorChoice,
        /// Never show a progress bar.
        #[arg(long)]
        no_progress: bool,
        /// TLS key log (SSLKEYLOGFILE format, as Wireshark's tls.keylog_file):
        /// used only to read 0-RTT early data (early_data_unsafe). Key logs
        /// embedded in a pcapng (Decryption Secrets Blocks) are added to it.
        #[arg(long, value_name = "FILE")]
        keylog: Option<std::path::PathBuf>,
        /// Ledger only: skip the diagnosis (no findings, all excess unexplained).
        #[arg(long)]
        no_findings: bool,
    },
    /// Find the server settings that cost round trips (nginx, HAProxy,
    /// sysctls, routes, certificate chains), optionally confirmed by a capture.
    Audit(audit_cmd::AuditArgs),
    /// Reproduce latency pathologies on real kernel TCP stacks (root, or rootless in `unshare -Urn`).
    Lab {
        #[command(subcommand)]
        command: LabCommand,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Analyze {
            capture,
            json,
            conn,
            color,
            no_progress,
            keylog,
            no_findings,
        } => analyze_cmd::analyze(
            &capture,
            json,
            conn,
            color,
            no_progress,
            keylog.as_deref(),
            !no_findings,
        ),
        Command::Audit(args) => audit_cmd::audit(args),
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
