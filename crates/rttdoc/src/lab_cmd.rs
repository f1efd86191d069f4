//! `rttdoc lab`: the command line of the lab (scenarios, runs, compare).

use std::process::ExitCode;
use std::time::Duration;

use clap::Subcommand;

#[derive(Subcommand)]
pub enum LabCommand {
    /// List the scenarios.
    List,
    /// Run a scenario and its control(s) and print their timings side by side.
    Compare {
        /// Scenario name (see `rttdoc lab list`).
        name: String,
        #[arg(long, default_value = "36ms", value_parser = parse_duration)]
        rtt: Duration,
        #[arg(long, default_value_t = 5)]
        runs: u32,
        /// Output directory (one subdirectory per scenario).
        #[arg(long, default_value = "lab-out")]
        out: std::path::PathBuf,
        /// Print the table as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Run a built-in peer (used inside lab namespaces).
    #[command(hide = true)]
    Peer {
        kind: String,
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Run a scenario (or your own server and client commands) over an
    /// emulated WAN; write captures, labels.json and a curl -w style table.
    Run(Box<RunArgs>),
}

#[derive(clap::Args)]
pub struct RunArgs {
    /// Scenario name (see `rttdoc lab list`); omit with --server-cmd/--client-cmd.
    name: Option<String>,
    /// Round-trip time of the emulated path, e.g. 36ms or 0.1s.
    #[arg(long, default_value = "36ms", value_parser = parse_duration)]
    rtt: Duration,
    /// Client runs (one client command each).
    #[arg(long, default_value_t = 5)]
    runs: u32,
    /// Output directory.
    #[arg(long, default_value = "lab-out")]
    out: std::path::PathBuf,
    /// Print the timing table as JSON.
    #[arg(long)]
    json: bool,
    /// Your server, run with `bash -c` in the server namespace
    /// ($RTTDOC_SERVER_IP is its address).
    #[arg(long, requires = "client_cmd")]
    server_cmd: Option<String>,
    /// Your client, run with `bash -c` in the client namespace once per run
    /// ($RTTDOC_SERVER_IP is the server's address).
    #[arg(long, requires = "server_cmd")]
    client_cmd: Option<String>,
    /// Random loss in both directions, in percent.
    #[arg(long)]
    loss: Option<f64>,
    /// Random loss client -> server, in percent.
    #[arg(long)]
    loss_c2s: Option<f64>,
    /// Random loss server -> client, in percent.
    #[arg(long)]
    loss_s2c: Option<f64>,
    /// Extra uniform delay per packet in [0, JITTER), e.g. 5ms.
    #[arg(long, value_parser = parse_duration)]
    jitter: Option<Duration>,
    /// Bottleneck rate in Mbit/s, both directions.
    #[arg(long)]
    rate: Option<f64>,
    /// Drop-tail queue at the bottleneck, in bytes.
    #[arg(long)]
    queue: Option<usize>,
    /// Drop these client -> server packets (1-based, comma-separated).
    #[arg(long, value_delimiter = ',')]
    drop_c2s: Vec<u64>,
    /// Drop these server -> client packets (1-based, comma-separated).
    #[arg(long, value_delimiter = ',')]
    drop_s2c: Vec<u64>,
    /// Server route initcwnd (segments).
    #[arg(long)]
    initcwnd: Option<u32>,
    /// Client route quickack: the client ACKs at once, no delayed ACK.
    #[arg(long)]
    quickack: bool,
    /// Path MTU (both hosts' interfaces), e.g. 1280.
    #[arg(long, value_parser = clap::value_parser!(u32).range(576..=9000))]
    mtu: Option<u32>,
    /// Server sysctl, e.g. net.ipv4.tcp_slow_start_after_idle=0 (repeatable).
    #[arg(long, value_parser = parse_kv)]
    server_sysctl: Vec<(String, String)>,
    /// Client sysctl (repeatable).
    #[arg(long, value_parser = parse_kv)]
    client_sysctl: Vec<(String, String)>,
}

pub fn parse_kv(s: &str) -> Result<(String, String), String> {
    let (k, v) = s
        .split_once('=')
        .ok_or_else(|| format!("expected KEY=VALUE, got {s}"))?;
    Ok((k.trim().to_string(), v.trim().to_string()))
}

pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let (num, unit) = s.trim().split_at(
        s.trim()
            .find(|c: char| c.is_ascii_alphabetic())
            .unwrap_or(s.len()),
    );
    let v: f64 = num.parse().map_err(|_| format!("not a duration: {s}"))?;
    let secs = match unit {
        "ms" | "" => v / 1000.0,
        "s" => v,
        "us" => v / 1e6,
        _ => return Err(format!("unknown unit in {s} (use ms, s or us)")),
    };
    if !(0.0..=60.0).contains(&secs) {
        return Err(format!("{s} is out of range"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// A column of the lab's timing tables: its name and how to read it.
type TimingColumn = (&'static str, fn(&rttdoc_lab::scenario::Timing) -> f64);

/// The curl -w columns of the lab's timing tables.
const TIMING_COLUMNS: [TimingColumn; 4] = [
    ("connect", |t| t.connect_ms),
    ("tls", |t| t.tls_ms),
    ("first_byte", |t| t.first_byte_ms),
    ("total", |t| t.total_ms),
];

/// (column, median, P95) of each timing column.
fn timing_stats(timings: &[rttdoc_lab::scenario::Timing]) -> Vec<(&'static str, f64, f64)> {
    TIMING_COLUMNS
        .iter()
        .map(|(name, f)| {
            let (m, p) =
                rttdoc_lab::scenario::median_p95(&timings.iter().map(f).collect::<Vec<_>>());
            (*name, m, p)
        })
        .collect()
}

fn timing_json(
    timings: &[rttdoc_lab::scenario::Timing],
) -> serde_json::Map<String, serde_json::Value> {
    timing_stats(timings)
        .into_iter()
        .map(|(n, m, p)| {
            (
                n.to_string(),
                serde_json::json!({ "median_ms": m, "p95_ms": p }),
            )
        })
        .collect()
}

/// RTTDOC_LAB_CERTS: keep generated certificates there and reuse them.
fn lab_certs() -> Option<std::path::PathBuf> {
    std::env::var_os("RTTDOC_LAB_CERTS").map(std::path::PathBuf::from)
}

pub fn lab(command: LabCommand) -> ExitCode {
    use rttdoc_lab::scenario::{self, RunOptions};
    match command {
        LabCommand::List => {
            for s in scenario::CATALOG {
                let control = s
                    .control_of
                    .map(|c| format!(" [control of {c}]"))
                    .unwrap_or_default();
                println!("{:<26} {}{}", s.name, s.summary, control);
            }
            ExitCode::SUCCESS
        }
        LabCommand::Compare {
            name,
            rtt,
            runs,
            out,
            json,
        } => {
            let Some(s) = scenario::find(&name) else {
                eprintln!("rttdoc: error: no scenario {name:?} (see `rttdoc lab list`)");
                return ExitCode::from(1);
            };
            if let Err(e) = rttdoc_lab::check_environment() {
                eprintln!("rttdoc: error: {e}");
                return ExitCode::from(1);
            }
            // The scenario, and every scenario that is its control (or the
            // scenario it is the control of, with that one's other controls).
            let base = s.control_of.unwrap_or(s.name);
            let mut group: Vec<&scenario::Scenario> = scenario::CATALOG
                .iter()
                .filter(|c| c.name == base || c.control_of == Some(base))
                .collect();
            group.sort_by_key(|c| c.control_of.is_some());
            let certs = lab_certs();
            let mut rows = Vec::new();
            for c in group {
                let opts = RunOptions {
                    rtt,
                    runs,
                    out: out.join(c.name),
                    certs: certs.clone(),
                    overrides: Default::default(),
                };
                match scenario::run(c, &opts) {
                    Ok(r) => rows.push((c.name, r.timings)),
                    Err(e) => {
                        eprintln!("rttdoc: error: lab run {} failed: {e}", c.name);
                        return ExitCode::from(1);
                    }
                }
            }
            if json {
                let doc: Vec<serde_json::Value> = rows
                    .iter()
                    .map(
                        |(n, t)| serde_json::json!({ "scenario": n, "timings_ms": timing_json(t) }),
                    )
                    .collect();
                println!(
                    "{}",
                    serde_json::json!({ "rtt_ms": rtt.as_secs_f64() * 1e3, "runs": runs, "scenarios": doc })
                );
                return ExitCode::SUCCESS;
            }
            println!(
                "{runs} runs each over a {:.0} ms RTT path (median / P95, like curl -w):",
                rtt.as_secs_f64() * 1e3
            );
            print!("{:<28}", "scenario");
            for (c, _) in TIMING_COLUMNS {
                print!(" {c:>21}");
            }
            println!();
            for (n, t) in &rows {
                print!("{n:<28}");
                for (_, m, p) in timing_stats(t) {
                    if m.is_nan() {
                        print!(" {:>21}", "-");
                    } else {
                        print!(" {:>21}", format!("{m:.1} / {p:.1} ms"));
                    }
                }
                println!();
            }
            ExitCode::SUCCESS
        }
        LabCommand::Peer { kind, args } => match rttdoc_lab::run_peer(&kind, &args) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("rttdoc: error: lab peer {kind}: {e}");
                ExitCode::from(1)
            }
        },
        LabCommand::Run(args) => {
            let RunArgs {
                name,
                rtt,
                runs,
                out,
                json,
                ..
            } = *args;
            if let Err(e) = rttdoc_lab::check_environment() {
                eprintln!("rttdoc: error: {e}");
                return ExitCode::from(1);
            }
            let percent = |p: Option<f64>| p.map(|v| (v / 100.0).clamp(0.0, 1.0));
            let overrides = scenario::Overrides {
                loss_c2s: percent(args.loss_c2s.or(args.loss)),
                loss_s2c: percent(args.loss_s2c.or(args.loss)),
                jitter_us: args.jitter.map(|d| d.as_micros() as u64),
                rate_mbit: args.rate,
                queue_bytes: args.queue,
                drop_c2s: args.drop_c2s.clone(),
                drop_s2c: args.drop_s2c.clone(),
                initcwnd: args.initcwnd,
                quickack: args.quickack,
                mtu: args.mtu,
                server_sysctls: args.server_sysctl.clone(),
                client_sysctls: args.client_sysctl.clone(),
            };
            let opts = RunOptions {
                rtt,
                runs,
                out,
                certs: lab_certs(),
                overrides,
            };
            let ctx = scenario::Ctx { rtt, runs };
            let (label, result) = match (&name, &args.server_cmd, &args.client_cmd) {
                (None, Some(server), Some(client)) => {
                    let plan = scenario::custom_plan(&ctx, server, client);
                    (
                        "custom".to_string(),
                        scenario::run_plan("custom", "your server and client", None, plan, &opts),
                    )
                }
                (Some(n), None, None) => match scenario::find(n) {
                    Some(s) => (n.clone(), scenario::run(s, &opts)),
                    None => {
                        eprintln!("rttdoc: error: no scenario {n:?} (see `rttdoc lab list`)");
                        return ExitCode::from(1);
                    }
                },
                _ => {
                    eprintln!("rttdoc: error: give a scenario name, or --server-cmd and --client-cmd (not both)");
                    return ExitCode::from(1);
                }
            };
            let name = label;
            let result = match result {
                Ok(r) => r,
                Err(e) => {
                    eprintln!("rttdoc: error: lab run {name} failed: {e}");
                    return ExitCode::from(1);
                }
            };
            if json {
                let doc = serde_json::json!({
                    "scenario": name, "runs": runs, "rtt_ms": rtt.as_secs_f64() * 1e3,
                    "timings_ms": timing_json(&result.timings)
                });
                println!("{doc}");
            } else {
                println!(
                    "{name}: {runs} runs over a {:.0} ms RTT path -> {}",
                    rtt.as_secs_f64() * 1e3,
                    result.dir.display()
                );
                println!("{:<12} {:>10} {:>10}", "(curl -w)", "median", "P95");
                for (n, m, p) in timing_stats(&result.timings) {
                    if m.is_nan() {
                        println!("{n:<12} {:>10} {:>10}", "-", "-");
                    } else {
                        println!("{n:<12} {m:>7.1} ms {p:>7.1} ms");
                    }
                }
                println!("captures: client.pcapng server.pcapng middle.pcapng both.pcapng; truth: labels.json");
            }
            ExitCode::SUCCESS
        }
    }
}
