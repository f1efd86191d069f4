//! The shipped deployment files agree with what rttdoc exports:
//! `promtool check rules` accepts deploy/prometheus/rules.yml,
//! `promtool check metrics` accepts `analyze --format prometheus` on a real
//! lab capture (and the monitor's /metrics on a replay of it), and every
//! metric the Grafana dashboard and the rules query is one that exposition
//! has (or one the rules record).

mod common;

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::*;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A real capture: the client side of the lab's nginx Nagle scenario
/// (kernel TCP, nginx, curl; scripts/make-fixtures.sh).
fn nagle_capture() -> PathBuf {
    data_dir().join("lab/tls13-nagle-nginx/client.pcapng.gz")
}

fn exposition(capture: &Path) -> String {
    let out = Command::new(rttdoc_bin())
        .args([
            "analyze",
            "--format",
            "prometheus",
            "--label-server",
            "10.77.0.2:443",
        ])
        .arg(capture)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Family names a text-format exposition declares, plus the sample names
/// of histograms (`_bucket`, `_sum`, `_count`), as PromQL sees them.
fn exported_names(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let mut it = rest.split(' ');
            let (name, ty) = (it.next().unwrap(), it.next().unwrap());
            names.insert(name.to_string());
            if ty == "histogram" {
                for s in ["_bucket", "_sum", "_count"] {
                    names.insert(format!("{name}{s}"));
                }
            }
        }
    }
    names
}

/// Metric names a PromQL expression reads: identifiers that are not
/// functions, keywords, label names or strings (Prometheus' own `up`
/// included; the caller decides what is allowed).
fn promql_metric_names(expr: &str) -> BTreeSet<String> {
    const WORDS: &[&str] = &[
        "sum",
        "by",
        "without",
        "rate",
        "increase",
        "histogram_quantile",
        "topk",
        "count",
        "scalar",
        "and",
        "or",
        "unless",
        "on",
        "ignoring",
        "offset",
        "group_left",
        "group_right",
        "avg",
        "max",
        "min",
        "bool",
    ];
    let mut names = BTreeSet::new();
    let b = expr.as_bytes();
    let mut i = 0;
    let mut braces = 0;
    let mut parens_after_by = false;
    while i < b.len() {
        let c = b[i] as char;
        if c == '"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += 1;
            }
            i += 1;
            continue;
        }
        if c == '[' {
            while i < b.len() && b[i] != b']' {
                i += 1;
            }
            continue;
        }
        if c == '{' {
            braces += 1;
        } else if c == '}' {
            braces -= 1;
        } else if c == ')' {
            parens_after_by = false;
        }
        if c == '$' {
            // a Grafana variable ($__rate_interval, $job)
            i += 1;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            continue;
        }
        if c.is_ascii_digit() {
            // a number or a duration (0.95, 1e3, 1d)
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'.') {
                i += 1;
            }
            continue;
        }
        if c.is_ascii_alphabetic() || c == '_' || c == ':' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b':') {
                i += 1;
            }
            let word = &expr[start..i];
            let rest = expr[i..].trim_start();
            if word == "by" || word == "without" || word == "on" || word == "ignoring" {
                parens_after_by = true;
                continue;
            }
            if braces == 0 && !parens_after_by && !WORDS.contains(&word) && !rest.starts_with('(') {
                names.insert(word.to_string());
            }
            continue;
        }
        i += 1;
    }
    names
}

fn rules_text() -> String {
    std::fs::read_to_string(repo().join("deploy/prometheus/rules.yml")).unwrap()
}

/// `record:` names and `expr:` texts of the rules file (block scalars too).
fn rules() -> (BTreeSet<String>, Vec<String>) {
    let text = rules_text();
    let mut records = BTreeSet::new();
    let mut exprs = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let t = lines[i].trim_start();
        if let Some(r) = t.strip_prefix("- record: ") {
            records.insert(r.trim().to_string());
        } else if let Some(e) = t.strip_prefix("expr: ") {
            if e.trim() == "|" {
                let indent = lines[i].len() - t.len();
                let mut block = String::new();
                while i + 1 < lines.len() {
                    let next = lines[i + 1];
                    let ni = next.len() - next.trim_start().len();
                    if next.trim().is_empty() || ni <= indent {
                        break;
                    }
                    block.push_str(next.trim());
                    block.push(' ');
                    i += 1;
                }
                exprs.push(block);
            } else {
                exprs.push(e.trim().to_string());
            }
        }
        i += 1;
    }
    (records, exprs)
}

#[test]
fn promtool_accepts_the_rules() {
    if !require("promtool_accepts_the_rules", &["promtool"], false) {
        return;
    }
    let out = Command::new("promtool")
        .args(["check", "rules"])
        .arg(repo().join("deploy/prometheus/rules.yml"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// deploy/prometheus/rules_test.yml: the alerts fire on the series of the
/// pathologies they name (2-RTT TLS 1.3 handshakes with Nagle holds; a TFO
/// hit rate that fell against the day before) and not on their controls.
#[test]
fn promtool_unit_tests_of_the_alerts_pass() {
    if !require(
        "promtool_unit_tests_of_the_alerts_pass",
        &["promtool"],
        false,
    ) {
        return;
    }
    let out = Command::new("promtool")
        .args(["test", "rules"])
        .arg(repo().join("deploy/prometheus/rules_test.yml"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn promtool_check_metrics(text: &str) {
    let mut child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    // promtool exits non-zero on a parse error and prints lint problems
    // (names, units, help) on stdout/stderr: both must be empty.
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success() && said.trim().is_empty(),
        "{said}\n{text}"
    );
}

#[test]
fn promtool_accepts_the_exposition_of_a_real_capture() {
    if !require(
        "promtool_accepts_the_exposition_of_a_real_capture",
        &["promtool"],
        false,
    ) {
        return;
    }
    let text = exposition(&nagle_capture());
    // The capture's Nagle holds are in it (the exposition is not empty).
    assert!(
        text.lines().any(|l| {
            l.starts_with(
            "rttdoc_findings_total{kind=\"nagle_hold\",vantage=\"client\",server=\"10.77.0.2:443\"}"
        ) && !l.ends_with(" 0")
        }),
        "{text}"
    );
    promtool_check_metrics(&text);
}

/// The monitor's /metrics, in both formats it negotiates, on a replay of
/// the same capture: promtool reads the text format; the OpenMetrics
/// answer ends with `# EOF` and declares the same families.
#[test]
fn monitor_serves_both_formats_on_a_replay() {
    if !require(
        "monitor_serves_both_formats_on_a_replay",
        &["promtool"],
        false,
    ) {
        return;
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let child = Command::new(rttdoc_bin())
        .args([
            "monitor",
            "--speed",
            "0",
            "--listen",
            &addr.to_string(),
            "--replay",
        ])
        .arg(nagle_capture())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    struct Kill(std::process::Child);
    impl Drop for Kill {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let _child = Kill(child);
    let get = |accept: &str| -> Option<(String, String)> {
        use std::io::Read;
        let mut s = std::net::TcpStream::connect(addr).ok()?;
        write!(
            s,
            "GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: {accept}\r\n\r\n"
        )
        .ok()?;
        let mut resp = String::new();
        s.read_to_string(&mut resp).ok()?;
        let (head, body) = resp.split_once("\r\n\r\n")?;
        Some((head.to_string(), body.to_string()))
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let (head, text) = loop {
        // The replay is done when both of its connections are counted.
        if let Some((h, b)) = get("text/plain") {
            if b.contains("rttdoc_connections_total{vantage=\"client\",tls_version=\"TLS 1.3\",server=\"other\"} 2") {
                break (h, b);
            }
        }
        assert!(
            std::time::Instant::now() < deadline,
            "monitor never served the replay"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    assert!(head.contains("text/plain; version=0.0.4"), "{head}");
    promtool_check_metrics(&text);
    let (head, om) =
        get("application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5").unwrap();
    assert!(head.contains("application/openmetrics-text"), "{head}");
    assert!(om.ends_with("# EOF\n"), "{om}");
    assert!(
        om.contains("rttdoc_findings_total{kind=\"nagle_hold\""),
        "{om}"
    );
}

#[test]
fn dashboard_and_rules_query_only_exported_metrics() {
    let exported = exported_names(&exposition(&nagle_capture()));
    let (records, rule_exprs) = rules();
    assert!(!records.is_empty() && !rule_exprs.is_empty());
    // Prometheus' own per-target series.
    let builtin: BTreeSet<String> = ["up".to_string()].into();
    let known = |n: &String| exported.contains(n) || records.contains(n) || builtin.contains(n);

    for e in &rule_exprs {
        let names = promql_metric_names(e);
        assert!(!names.is_empty(), "no metric in rule expr {e}");
        let unknown: Vec<&String> = names.iter().filter(|n| !known(n)).collect();
        assert!(
            unknown.is_empty(),
            "rule expr {e} reads {unknown:?}, not exported"
        );
    }

    let doc: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("deploy/grafana/rttdoc.json")).unwrap(),
    )
    .expect("the dashboard is JSON");
    let panels = doc["panels"].as_array().expect("panels");
    let mut used = BTreeSet::new();
    let mut exprs = 0;
    for p in panels {
        let title = p["title"].as_str().unwrap_or("?");
        let targets = p["targets"].as_array().expect("targets");
        assert!(!targets.is_empty(), "panel {title} has no query");
        for t in targets {
            let e = t["expr"].as_str().expect("expr");
            exprs += 1;
            let names = promql_metric_names(e);
            assert!(!names.is_empty(), "panel {title}: no metric in {e}");
            for n in names {
                assert!(
                    exported.contains(&n),
                    "panel {title}: {n} is not exported ({e})"
                );
                used.insert(n);
            }
        }
    }
    for v in doc["templating"]["list"].as_array().unwrap() {
        if let Some(q) = v["query"]["query"].as_str() {
            let inner = q.trim_start_matches("label_values(");
            let metric = inner.split([',', '{']).next().unwrap().trim().to_string();
            assert!(exported.contains(&metric), "variable query {q}");
        }
    }
    // The issue's panels: handshake RTT by version, TTFB, time lost by
    // cause, TFO hit rate, 0-RTT and resumption rates, top causes.
    for needed in [
        "rttdoc_tls_handshake_round_trips_bucket",
        "rttdoc_time_to_first_byte_seconds_bucket",
        "rttdoc_time_lost_seconds_total",
        "rttdoc_tfo_attempts_total",
        "rttdoc_early_data_total",
        "rttdoc_resumption_total",
        "rttdoc_findings_total",
    ] {
        assert!(used.contains(needed), "no panel reads {needed}");
    }
    assert!(exprs >= 10);
}

#[test]
fn promql_names_are_read_from_expressions() {
    let names = promql_metric_names(
        r#"histogram_quantile(0.95, sum by (le, tls_version) (rate(rttdoc_x_bucket{job=~"$job", kind="a b"}[5m]))) / on (job) rttdoc:y:rate5m offset 1d and up"#,
    );
    assert_eq!(
        names.into_iter().collect::<Vec<_>>(),
        ["rttdoc:y:rate5m", "rttdoc_x_bucket", "up"]
    );
}

/// The systemd unit runs `rttdoc monitor` with flags it has, as a
/// non-root user holding CAP_NET_RAW only, and systemd accepts it.
#[test]
fn systemd_unit_runs_monitor_unprivileged_and_verifies() {
    let unit =
        std::fs::read_to_string(repo().join("deploy/systemd/rttdoc-monitor.service")).unwrap();
    let directive = |key: &str| -> Vec<String> {
        unit.lines()
            .filter_map(|l| l.strip_prefix(&format!("{key}=")))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(directive("AmbientCapabilities"), ["CAP_NET_RAW"]);
    assert_eq!(directive("CapabilityBoundingSet"), ["CAP_NET_RAW"]);
    assert_eq!(directive("DynamicUser"), ["yes"]);
    assert!(directive("User").is_empty(), "no fixed (root) user");
    let exec = directive("ExecStart");
    assert_eq!(exec.len(), 1);
    let help = Command::new(rttdoc_bin())
        .args(["monitor", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    let words: Vec<&str> = exec[0].split_whitespace().collect();
    assert_eq!(&words[1..2], ["monitor"], "{}", exec[0]);
    for flag in words.iter().filter(|w| w.starts_with("--")) {
        assert!(
            help.contains(&format!("{flag} ")),
            "{flag} is not a monitor flag"
        );
    }
    if !require(
        "systemd_unit_runs_monitor_unprivileged_and_verifies",
        &["systemd-analyze"],
        false,
    ) {
        return;
    }
    // Verified against the binary under test (the unit names its install path).
    let dir = TempDir::new("unit");
    let path = dir.path("rttdoc-monitor.service");
    std::fs::write(
        &path,
        unit.replace("/usr/local/bin/rttdoc", &rttdoc_bin().to_string_lossy()),
    )
    .unwrap();
    let out = Command::new("systemd-analyze")
        .arg("verify")
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
