//! `rttdoc lab`: the command line of the lab (scenarios, runs, compare).

use std::process::ExitCode;
use std::time::Duration;

use clap::Subcommand;

#[derive(Subcommand)]
pub enum LabCommand {
    /// List the scenarios.
    List,
    /// Run a scenario and its control(s); print their timings and findings side by side.
    Compare(Box<CompareArgs>),
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
pub struct CompareArgs {
    /// Scenario name (see `rttdoc lab list`).
    name: String,
    #[command(flatten)]
    path: PathArgs,
}

#[derive(clap::Args)]
pub struct RunArgs {
    /// Scenario name (see `rttdoc lab list`); omit with --server-cmd/--client-cmd.
    name: Option<String>,
    /// Your server, run with `bash -c` in the server namespace
    /// ($RTTDOC_SERVER_IP is its address, $RTTDOC_SERVER_IP_2 its second).
    #[arg(long, requires = "client_cmd")]
    server_cmd: Option<String>,
    /// Your client, run with `bash -c` in the client namespace once per run
    /// ($RTTDOC_SERVER_IP is the server's address). Its output goes to
    /// client.log; curl -w variables it prints (time_connect=..., or the
    /// four values in the lab's order) fill the timing table.
    #[arg(long, requires = "server_cmd")]
    client_cmd: Option<String>,
    #[command(flatten)]
    path: PathArgs,
}

/// The emulated path and the hosts' settings: shared by `run` and `compare`.
#[derive(clap::Args, Clone)]
pub struct PathArgs {
    /// Round-trip time of the emulated path, e.g. 36ms or 0.1s (0 to 10 s).
    #[arg(long, default_value = "36ms", value_parser = parse_rtt)]
    rtt: Duration,
    /// Client runs (one client command each), 1 to 1000.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=1000))]
    runs: u32,
    /// Output directory (`compare`: one subdirectory per scenario).
    #[arg(long, default_value = "lab-out")]
    out: std::path::PathBuf,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
    /// Random loss in both directions, in percent (0 to 99; e.g. 3 or 3%).
    #[arg(long, value_parser = parse_loss)]
    loss: Option<f64>,
    /// Random loss client -> server, in percent.
    #[arg(long, value_parser = parse_loss)]
    loss_c2s: Option<f64>,
    /// Random loss server -> client, in percent.
    #[arg(long, value_parser = parse_loss)]
    loss_s2c: Option<f64>,
    /// Extra uniform delay per packet in [0, JITTER), e.g. 5ms (at most 10 s).
    #[arg(long, value_parser = parse_jitter)]
    jitter: Option<Duration>,
    /// Bottleneck rate, both directions: Mbit/s, or with a unit (500kbit, 10mbit, 1gbit).
    #[arg(long, value_parser = parse_rate)]
    rate: Option<f64>,
    /// Drop-tail queue at the bottleneck: bytes, or with a unit (64k, 1m).
    #[arg(long, value_parser = parse_bytes)]
    queue: Option<usize>,
    /// Drop these client -> server packets (1-based, comma-separated).
    #[arg(long, value_delimiter = ',', value_parser = parse_packet_number)]
    drop_c2s: Vec<u64>,
    /// Drop these server -> client packets (1-based, comma-separated).
    #[arg(long, value_delimiter = ',', value_parser = parse_packet_number)]
    drop_s2c: Vec<u64>,
    /// Server route initcwnd (segments, 1 to 1000).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1000))]
    initcwnd: Option<u32>,
    /// Client route quickack: the client ACKs at once, no delayed ACK.
    #[arg(long)]
    quickack: bool,
    /// Path MTU (both hosts' interfaces), e.g. 1280.
    #[arg(long, value_parser = clap::value_parser!(u32).range(576..=9000))]
    mtu: Option<u32>,
    /// Server sysctl, e.g. net.ipv4.tcp_slow_start_after_idle=0 (repeatable).
    #[arg(long, value_parser = parse_sysctl)]
    server_sysctl: Vec<(String, String)>,
    /// Client sysctl (repeatable).
    #[arg(long, value_parser = parse_sysctl)]
    client_sysctl: Vec<(String, String)>,
}

impl PathArgs {
    /// Checks what depends on several arguments; returns the overrides.
    fn overrides(&self) -> Result<rttdoc_lab::scenario::Overrides, String> {
        let mtu = self.mtu.unwrap_or(1500) as usize;
        if let Some(q) = self.queue {
            if q < mtu {
                return Err(format!(
                    "--queue {q}: the queue must hold at least one packet of the path MTU ({mtu} bytes)"
                ));
            }
        }
        if let Some(j) = self.jitter {
            if j > self.rtt * 4 && !self.rtt.is_zero() {
                eprintln!(
                    "rttdoc lab: note: --jitter {} ms is more than 4 x the RTT: handshakes will be dominated by it",
                    j.as_millis()
                );
            }
        }
        let fraction = |p: Option<f64>| p.map(|v| v / 100.0);
        Ok(rttdoc_lab::scenario::Overrides {
            loss_c2s: fraction(self.loss_c2s.or(self.loss)),
            loss_s2c: fraction(self.loss_s2c.or(self.loss)),
            jitter_us: self.jitter.map(|d| d.as_micros() as u64),
            rate_mbit: self.rate,
            queue_bytes: self.queue,
            drop_c2s: self.drop_c2s.clone(),
            drop_s2c: self.drop_s2c.clone(),
            initcwnd: self.initcwnd,
            quickack: self.quickack,
            mtu: self.mtu,
            server_sysctls: self.server_sysctl.clone(),
            client_sysctls: self.client_sysctl.clone(),
        })
    }
}

pub fn parse_kv(s: &str) -> Result<(String, String), String> {
    let (k, v) = s
        .split_once('=')
        .ok_or_else(|| format!("expected KEY=VALUE, got {s}"))?;
    Ok((k.trim().to_string(), v.trim().to_string()))
}

/// A sysctl assignment whose key exists on this machine (the namespaces
/// have the same tree).
fn parse_sysctl(s: &str) -> Result<(String, String), String> {
    let (k, v) = parse_kv(s)?;
    let valid = !k.is_empty()
        && k.split('.').all(|part| {
            !part.is_empty()
                && part
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        });
    if !valid {
        return Err(format!(
            "{k:?} is not a sysctl name (dotted, like net.ipv4.tcp_fastopen)"
        ));
    }
    if v.is_empty() {
        return Err(format!("{k}: empty value"));
    }
    let path = std::path::Path::new("/proc/sys").join(k.replace('.', "/"));
    if !path.exists() {
        return Err(format!(
            "no sysctl {k} on this machine ({} does not exist)",
            path.display()
        ));
    }
    Ok((k, v))
}

pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    let (num, unit) = t.split_at(
        t.find(|c: char| c.is_ascii_alphabetic() || c == 'µ')
            .unwrap_or(t.len()),
    );
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("not a duration: {s:?} (e.g. 36ms, 0.1s, 500us)"))?;
    let secs = match unit {
        "ms" | "" => v / 1000.0,
        "s" => v,
        "us" | "µs" => v / 1e6,
        _ => return Err(format!("unknown unit in {s:?} (use ms, s or us)")),
    };
    if !secs.is_finite() || secs < 0.0 {
        return Err(format!("{s}: must be 0 or more"));
    }
    Ok(Duration::from_secs_f64(secs))
}

fn parse_rtt(s: &str) -> Result<Duration, String> {
    let d = parse_duration(s)?;
    if d > Duration::from_secs(10) {
        return Err(format!("{s}: an RTT of at most 10 s"));
    }
    Ok(d)
}

fn parse_jitter(s: &str) -> Result<Duration, String> {
    let d = parse_duration(s)?;
    if d > Duration::from_secs(10) {
        return Err(format!("{s}: jitter of at most 10 s"));
    }
    Ok(d)
}

/// Percent, 0 up to (not including) 100: at 100% nothing gets through and
/// every connection would fail only after the kernel's SYN retries (~2 min).
fn parse_loss(s: &str) -> Result<f64, String> {
    let t = s.trim().trim_end_matches('%').trim();
    let v: f64 = t
        .parse()
        .map_err(|_| format!("not a percentage: {s:?} (e.g. 3 or 0.5%)"))?;
    if !v.is_finite() || v < 0.0 {
        return Err(format!("{s}: loss is a percentage from 0 to 99"));
    }
    if v >= 100.0 {
        return Err(format!(
            "{s}: at 100% loss no packet gets through (the run would only fail after the kernel's SYN retries); loss is a percentage below 100"
        ));
    }
    if v > 0.0 && v < 1e-6 {
        return Err(format!("{s}: too small to matter"));
    }
    if v > 50.0 {
        eprintln!("rttdoc lab: note: --loss {v}%: most connections will not get through; expect long retransmission timeouts");
    }
    Ok(v)
}

/// Mbit/s: a plain number, or with a unit (kbit, mbit, gbit; /s allowed).
fn parse_rate(s: &str) -> Result<f64, String> {
    let t = s.trim().to_ascii_lowercase();
    let t = t.trim_end_matches("/s").trim_end_matches("ps");
    let split = t.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("not a rate: {s:?} (e.g. 10, 10mbit, 500kbit)"))?;
    let mbit = match unit.trim() {
        "" | "m" | "mbit" => v,
        "k" | "kbit" => v / 1000.0,
        "g" | "gbit" => v * 1000.0,
        other => {
            return Err(format!(
                "unknown rate unit {other:?} in {s:?} (kbit, mbit, gbit)"
            ))
        }
    };
    if !mbit.is_finite() || !(0.064..=100_000.0).contains(&mbit) {
        return Err(format!("{s}: a rate from 64kbit to 100gbit"));
    }
    Ok(mbit)
}

/// Bytes: a plain number, or with k/m (1024-based).
fn parse_bytes(s: &str) -> Result<usize, String> {
    let t = s.trim().to_ascii_lowercase();
    let t = t.trim_end_matches('b').trim_end_matches('i');
    let (num, mult) = match t.chars().last() {
        Some('k') => (&t[..t.len() - 1], 1024.0),
        Some('m') => (&t[..t.len() - 1], 1024.0 * 1024.0),
        _ => (t, 1.0),
    };
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("not a size: {s:?} (e.g. 65536, 64k, 1m)"))?;
    let bytes = v * mult;
    if !bytes.is_finite() || !(1.0..=1024.0 * 1024.0 * 1024.0).contains(&bytes) {
        return Err(format!("{s}: a queue from 1 byte to 1 GB"));
    }
    Ok(bytes as usize)
}

fn parse_packet_number(s: &str) -> Result<u64, String> {
    let n: u64 = s
        .trim()
        .parse()
        .map_err(|_| format!("not a packet number: {s:?}"))?;
    if n == 0 {
        return Err("packets are numbered from 1 (the first packet in that direction is 1)".into());
    }
    Ok(n)
}

/// The scenario named `name`, or an error that suggests the closest names.
fn find_scenario(name: &str) -> Result<&'static rttdoc_lab::scenario::Scenario, String> {
    use rttdoc_lab::scenario::{find, CATALOG};
    if let Some(s) = find(name) {
        return Ok(s);
    }
    let mut near: Vec<(usize, &str)> = CATALOG
        .iter()
        .map(|s| (edit_distance(name, s.name), s.name))
        .filter(|(d, n)| {
            // A typo, a part of the name, or its words in another order.
            let words = |x: &str| {
                let mut w: Vec<String> = x.split(['-', '_']).map(str::to_string).collect();
                w.sort();
                w
            };
            *d <= name.len().max(4) / 3
                || n.contains(name)
                || words(n).len() > 1 && words(n) == words(name)
        })
        .collect();
    near.sort();
    let hint = match near.as_slice() {
        [] => String::new(),
        [(_, one)] => format!("; did you mean {one}?"),
        many => format!(
            "; did you mean one of: {}?",
            many.iter()
                .take(4)
                .map(|(_, n)| *n)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    Err(format!(
        "no scenario {name:?}{hint} (`rttdoc lab list` shows them all)"
    ))
}

/// Levenshtein distance, for "did you mean".
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// The findings of a capture, counted by kind (connections with that
/// finding). The one place `lab` uses the analysis API.
fn findings_by_kind(
    capture: &std::path::Path,
    keylog: Option<&std::path::Path>,
) -> Result<Vec<(String, usize)>, String> {
    let keylog = match keylog {
        Some(k) => Some(std::sync::Arc::new(
            rttdoc_analyze::keylog::KeyLog::load(k).map_err(|e| e.to_string())?,
        )),
        None => None,
    };
    let mut cap =
        rttdoc_capture::Capture::open(&capture.to_string_lossy()).map_err(|e| e.to_string())?;
    let options = rttdoc_analyze::AnalyzeOptions {
        keylog,
        ..Default::default()
    };
    let mut counts: std::collections::BTreeMap<String, usize> = Default::default();
    rttdoc_diagnose::analyze_capture(
        &mut cap,
        options,
        &mut |report: rttdoc_diagnose::ConnectionReport| {
            let mut kinds: Vec<&str> = report.findings.iter().map(|f| f.kind.name()).collect();
            kinds.sort();
            kinds.dedup();
            for k in kinds {
                *counts.entry(k.to_string()).or_default() += 1;
            }
        },
    );
    Ok(counts.into_iter().collect())
}

/// `kind xN, ...` for a table cell.
fn findings_cell(f: &[(String, usize)]) -> String {
    if f.is_empty() {
        return "(none)".into();
    }
    f.iter()
        .map(|(k, n)| format!("{k} x{n}"))
        .collect::<Vec<_>>()
        .join(", ")
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

fn fail(msg: impl std::fmt::Display) -> ExitCode {
    eprintln!("rttdoc: error: {msg}");
    ExitCode::from(1)
}

/// The key log a run wrote, if any.
fn run_keylog(dir: &std::path::Path) -> Option<std::path::PathBuf> {
    let k = dir.join("keylog.txt");
    std::fs::metadata(&k)
        .is_ok_and(|m| m.len() > 0)
        .then_some(k)
}

/// The command to analyze a run's client-side capture.
fn analyze_hint(dir: &std::path::Path) -> String {
    let keylog = run_keylog(dir)
        .map(|k| format!(" --keylog {}", k.display()))
        .unwrap_or_default();
    format!(
        "rttdoc analyze{keylog} {}",
        dir.join("client.pcapng").display()
    )
}

/// What a run wants the user to know: warnings, and private keys in its
/// output directory.
fn print_notes(r: &rttdoc_lab::scenario::RunResult) {
    for w in &r.warnings {
        eprintln!("rttdoc lab: warning: {w}");
    }
    if let Some(dir) = r.labels["certificates"]["dir"].as_str() {
        let dir = r.dir.join(dir);
        let dir = dir.display();
        eprintln!(
            "rttdoc lab: note: {dir} holds the private keys of the lab's throwaway test certificates \
             (made for 10.77.0.2); the server configuration beside the captures points at them"
        );
    }
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
        LabCommand::Compare(args) => {
            let CompareArgs { name, path } = *args;
            let s = match find_scenario(&name) {
                Ok(s) => s,
                Err(e) => return fail(e),
            };
            let overrides = match path.overrides() {
                Ok(o) => o,
                Err(e) => return fail(e),
            };
            if let Err(e) = rttdoc_lab::check_environment() {
                return fail(e);
            }
            // The scenario at the top of the control chain (a control may
            // have controls of its own), and every scenario below it.
            let top = |mut c: &'static scenario::Scenario| {
                // Bounded by the catalog's size: a chain cannot be longer.
                for _ in 0..scenario::CATALOG.len() {
                    match c.control_of.and_then(scenario::find) {
                        Some(up) => c = up,
                        None => break,
                    }
                }
                c.name
            };
            let base = top(s);
            let mut group: Vec<&scenario::Scenario> = scenario::CATALOG
                .iter()
                .filter(|c| top(c) == base)
                .collect();
            group.sort_by_key(|c| c.control_of.is_some());
            let certs = lab_certs();
            let mut rows = Vec::new();
            for c in group {
                let opts = RunOptions {
                    rtt: path.rtt,
                    runs: path.runs,
                    out: path.out.join(c.name),
                    certs: certs.clone(),
                    overrides: overrides.clone(),
                };
                let r = match scenario::run(c, &opts) {
                    Ok(r) => r,
                    Err(e) => return fail(format!("lab run {} failed: {e}", c.name)),
                };
                print_notes(&r);
                let findings =
                    findings_by_kind(&r.dir.join("client.pcapng"), run_keylog(&r.dir).as_deref())
                        .unwrap_or_else(|e| vec![(format!("(analysis failed: {e})"), 0)]);
                rows.push((c.name, r, findings));
            }
            let where_ = rows
                .first()
                .and_then(|(_, r, _)| r.dir.parent().map(|p| p.display().to_string()))
                .unwrap_or_default();
            if path.json {
                let doc: Vec<serde_json::Value> = rows
                    .iter()
                    .map(|(n, r, f)| {
                        serde_json::json!({
                            "scenario": n,
                            "dir": r.dir,
                            "timings_ms": timing_json(&r.timings),
                            "findings": f.iter().map(|(k, c)| serde_json::json!({ "kind": k, "connections": c })).collect::<Vec<_>>(),
                            "truth": r.labels["pathologies"].as_array().map(|a| a.iter().filter_map(|p| p["kind"].as_str()).collect::<Vec<_>>()),
                        })
                    })
                    .collect();
                println!(
                    "{}",
                    serde_json::json!({ "rtt_ms": path.rtt.as_secs_f64() * 1e3, "runs": path.runs, "out": where_, "scenarios": doc })
                );
                return ExitCode::SUCCESS;
            }
            println!(
                "{} runs each over a {:.0} ms RTT path (median / P95, like curl -w):",
                path.runs,
                path.rtt.as_secs_f64() * 1e3
            );
            print!("{:<28}", "scenario");
            for (c, _) in TIMING_COLUMNS {
                print!(" {c:>21}");
            }
            println!("  findings (client side, connections) | injected (labels.json)");
            for (n, r, f) in &rows {
                print!("{n:<28}");
                for (_, m, p) in timing_stats(&r.timings) {
                    if m.is_nan() {
                        print!(" {:>21}", "-");
                    } else {
                        print!(" {:>21}", format!("{m:.1} / {p:.1} ms"));
                    }
                }
                let injected: Vec<&str> = r.labels["pathologies"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|p| p["kind"].as_str())
                    .collect();
                println!(
                    "  {} | {}",
                    findings_cell(f),
                    if injected.is_empty() {
                        "none".to_string()
                    } else {
                        injected.join(", ")
                    }
                );
            }
            println!("wrote {where_}/<scenario>/ (captures, labels.json, client.log)");
            if let Some((_, r, _)) = rows.first() {
                println!("next: {}", analyze_hint(&r.dir));
            }
            ExitCode::SUCCESS
        }
        LabCommand::Peer { kind, args } => match rttdoc_lab::run_peer(&kind, &args) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => fail(format!("lab peer {kind}: {e}")),
        },
        LabCommand::Run(args) => {
            let RunArgs {
                name,
                server_cmd,
                client_cmd,
                path,
            } = *args;
            // Everything the command line can get wrong, before any setup.
            let scenario = match (&name, &server_cmd, &client_cmd) {
                (None, Some(_), Some(_)) => None,
                (Some(n), None, None) => match find_scenario(n) {
                    Ok(s) => Some(s),
                    Err(e) => return fail(e),
                },
                (None, None, None) => return fail(
                    "give a scenario name (`rttdoc lab list`), or --server-cmd and --client-cmd",
                ),
                _ => {
                    return fail(
                        "give a scenario name, or --server-cmd and --client-cmd (not both)",
                    )
                }
            };
            let overrides = match path.overrides() {
                Ok(o) => o,
                Err(e) => return fail(e),
            };
            if let Err(e) = rttdoc_lab::check_environment() {
                return fail(e);
            }
            if let Some(s) = scenario {
                let missing: Vec<&str> = s.needs.iter().copied().filter(|t| !on_path(t)).collect();
                if !missing.is_empty() {
                    return fail(format!(
                        "scenario {} needs {} (e.g. apt-get install {})",
                        s.name,
                        missing.join(", "),
                        missing.join(" ")
                    ));
                }
            }
            let (rtt, runs, json) = (path.rtt, path.runs, path.json);
            let opts = RunOptions {
                rtt,
                runs,
                out: path.out.clone(),
                certs: lab_certs(),
                overrides,
            };
            let ctx = scenario::Ctx { rtt, runs };
            let (name, result) = match (scenario, &server_cmd, &client_cmd) {
                (Some(s), _, _) => (s.name.to_string(), scenario::run(s, &opts)),
                (None, Some(server), Some(client)) => {
                    let plan = scenario::custom_plan(&ctx, server, client);
                    (
                        "custom".to_string(),
                        scenario::run_plan("custom", "your server and client", None, plan, &opts),
                    )
                }
                _ => unreachable!("checked above"),
            };
            let result = match result {
                Ok(r) => r,
                Err(e) => return fail(format!("lab run {name} failed: {e}")),
            };
            print_notes(&result);
            if json {
                let doc = serde_json::json!({
                    "scenario": name, "runs": runs, "rtt_ms": rtt.as_secs_f64() * 1e3,
                    "dir": result.dir,
                    "timings_ms": timing_json(&result.timings),
                    "warnings": result.warnings,
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
                let mut extra = String::new();
                for f in ["client.log", "server.log", "nginx.conf", "haproxy.cfg"] {
                    if result.dir.join(f).exists() {
                        extra.push_str(&format!(", {f}"));
                    }
                }
                println!(
                    "wrote {}: client.pcapng server.pcapng middle.pcapng, labels.json (the truth){extra}",
                    result.dir.display()
                );
                println!("next: {}", analyze_hint(&result.dir));
            }
            ExitCode::SUCCESS
        }
    }
}

fn on_path(tool: &str) -> bool {
    let Some(path) = std::env::var_os("PATH") else {
        return false;
    };
    std::env::split_paths(&path)
        .chain(["/usr/sbin".into(), "/sbin".into()])
        .any(|d| d.join(tool).is_file())
}
