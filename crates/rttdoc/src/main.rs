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

/// `mi_option_e` numbers in the vendored v3 mimalloc.h (the `mimalloc`
/// crate exports no names for them; tests/allocator.rs reads the options
/// back by name from mimalloc's own report).
mod mi_option {
    pub const ARENA_EAGER_COMMIT: libc::c_int = 4;
    pub const PURGE_DELAY: libc::c_int = 15;
    pub const ALLOW_THP: libc::c_int = 43;
}

/// Memory follows open connections (docs/ARCHITECTURE.md): mimalloc's
/// defaults keep freed pages for a second, commit arenas eagerly and back
/// the heap with transparent huge pages (a 2 MB page is resident as soon
/// as one byte of it is used, and mimalloc then purges in 2 MB steps).
/// Here freed pages go back after 5 ms, arenas are committed as used, and
/// pages are 4 KB: peak RSS on churn went from 27 to 13 MB and on the SYN
/// flood from 45 to 31 MB. (Pages given back at once cost churn 5% and
/// the SYN flood 9% of their time in page faults on pages needed again
/// moments later; 5 ms keeps that away for half a megabyte.)
///
/// mimalloc reads these when it starts, in its constructor (priority 101),
/// before `main`: so they are set by a constructor that runs before it
/// (the linker orders `.init_array.NNNNN` by number; std's own argument
/// setup uses `.init_array.00099` the same way).
extern "C" fn allocator_returns_memory() {
    // SAFETY: plain setters of global integer options; they allocate
    // nothing and run before any thread exists.
    unsafe {
        mi_option_set(mi_option::ARENA_EAGER_COMMIT, 0);
        mi_option_set(mi_option::PURGE_DELAY, 5);
        mi_option_set(mi_option::ALLOW_THP, 0);
    }
}

#[used]
#[unsafe(link_section = ".init_array.00100")]
static ALLOCATOR_OPTIONS: extern "C" fn() = allocator_returns_memory;

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
    /// Read a pcap/pcapng capture (plain or gzip/zstd/lz4-compressed, or - for stdin) and
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
