//! The lab join: for every lab scenario whose pathology comes from
//! configuration, `rttdoc audit` on the nginx.conf or haproxy.cfg (and
//! server sysctls) of the run predicts it, and the run's capture confirms
//! it (`--capture`); the control's configuration gets no such finding.
//! (HAProxy's `option http-no-delay` off is predicted by the audit but the
//! analysis has no detector for the MSG_MORE hold it causes: docs/accuracy.md.)
//!
//! Needs root, nginx, haproxy, curl and openssl (the lab's nginx and
//! HAProxy scenarios); skips with the reason otherwise, fails under CI=true.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{require, rttdoc_bin, TempDir};
use serde_json::Value;

/// (scenario with the pathology, its control, the audit check that
/// predicts it)
const PAIRS: &[(&str, &str, &str)] = &[
    (
        "tls13-nagle-nginx",
        "tls13-nodelay-nginx",
        "nagle_tls_flight",
    ),
    ("wwr-nagle-nginx", "wwr-nodelay-nginx", "nagle_keepalive"),
    (
        "initcwnd-chain-nginx",
        "small-chain-nginx",
        "chain_over_initcwnd",
    ),
    ("hrr-nginx", "no-hrr-nginx", "hrr_curves"),
    (
        "tls13-no-resumption-nginx",
        "tls13-resumption-nginx",
        "no_resumption",
    ),
    (
        "tfo-rejected-nginx",
        "tfo-nginx",
        "tfo_listener_without_kernel",
    ),
    ("ssai-nginx", "no-ssai-nginx", "slow_start_after_idle"),
    (
        "tfo-rejected-haproxy",
        "tfo-haproxy",
        "tfo_listener_without_kernel",
    ),
    (
        "initcwnd-chain-haproxy",
        "small-chain-haproxy",
        "chain_over_initcwnd",
    ),
];

fn lab_run(dir: &TempDir, certs: &Path, name: &str) -> PathBuf {
    let out = dir.path(name);
    // Two runs: TFO needs a cookie from the first; the rest repeat.
    let runs = if name.contains("ssai") { "1" } else { "2" };
    let o = Command::new(rttdoc_bin())
        .args(["lab", "run", name, "--rtt", "20ms", "--runs", runs, "--out"])
        .arg(&out)
        .env("RTTDOC_LAB_CERTS", certs)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "lab run {name}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    out
}

/// The server's sysctls during the run's last connections, from
/// labels.json: a `server_sysctls` object when the lab records one, else
/// the scenario's knobs.
fn server_sysctls(labels: &Value) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let value = |v: &Value| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    match &labels["server_sysctls"] {
        Value::Object(m) => out.extend(m.iter().map(|(k, v)| (k.clone(), value(v)))),
        Value::Array(a) => {
            for e in a {
                match e {
                    Value::Array(kv) if kv.len() == 2 => out.push((value(&kv[0]), value(&kv[1]))),
                    Value::Object(o) => out.push((value(&o["name"]), value(&o["value"]))),
                    _ => {}
                }
            }
        }
        _ => {
            let k = &labels["knobs"];
            let fastopen = if k["server_tcp_fastopen_after_first_run"].is_null() {
                &k["server_tcp_fastopen"]
            } else {
                &k["server_tcp_fastopen_after_first_run"]
            };
            if !fastopen.is_null() {
                out.push(("net.ipv4.tcp_fastopen".into(), value(fastopen)));
            }
            if !k["server_tcp_slow_start_after_idle"].is_null() {
                out.push((
                    "net.ipv4.tcp_slow_start_after_idle".into(),
                    value(&k["server_tcp_slow_start_after_idle"]),
                ));
            }
        }
    }
    // Settings changed after the first client run (a TFO key kept, then
    // the server's TFO turned off) are the ones most runs saw.
    if let Value::Object(m) = &labels["server_sysctls_after_first_run"] {
        for (k, v) in m {
            out.retain(|(name, _)| name != k);
            out.push((k.clone(), value(v)));
        }
    }
    if let Some(cc) = labels["congestion_control"].as_str() {
        if !out
            .iter()
            .any(|(k, _)| k == "net.ipv4.tcp_congestion_control")
        {
            out.push(("net.ipv4.tcp_congestion_control".into(), cc.to_string()));
        }
    }
    out
}

fn audit(run: &Path) -> Value {
    let labels: Value =
        serde_json::from_slice(&std::fs::read(run.join("labels.json")).unwrap()).unwrap();
    let mut cmd = Command::new(rttdoc_bin());
    cmd.arg("audit");
    // The server's configuration as the lab kept it: nginx.conf, or
    // haproxy.cfg for HAProxy scenarios.
    for (flag, file) in [("--nginx", "nginx.conf"), ("--haproxy", "haproxy.cfg")] {
        if run.join(file).is_file() {
            cmd.arg(flag).arg(run.join(file));
        }
    }
    cmd.arg("--capture")
        .arg(run.join("server.pcapng"))
        .arg("--json");
    let sysctls = server_sysctls(&labels);
    if !sysctls.is_empty() {
        let root = run.join("sysctl");
        for (k, v) in &sysctls {
            let p = root.join(k.replace('.', "/"));
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, format!("{v}\n")).unwrap();
        }
        cmd.arg("--sysctl-root").arg(&root);
    }
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "audit {}: {stderr}", run.display());
    serde_json::from_slice(&out.stdout).unwrap()
}

fn finding<'a>(doc: &'a Value, check: &str) -> Option<&'a Value> {
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["check"] == check)
}

#[test]
fn audit_predicts_each_configured_lab_pathology_and_its_capture_confirms_it() {
    if !require(
        "audit_predicts_each_configured_lab_pathology_and_its_capture_confirms_it",
        &["nginx", "haproxy", "curl", "openssl", "ip"],
        true,
    ) {
        return;
    }
    let dir = TempDir::new("audit-lab");
    let certs = dir.path("certs");
    let mut failures = Vec::new();
    for (sick, control, check) in PAIRS {
        let run = lab_run(&dir, &certs, sick);
        let doc = audit(&run);
        let mut confirms: Vec<String> = Vec::new();
        match finding(&doc, check) {
            None => failures.push(format!("{sick}: no {check} finding: {}", doc["findings"])),
            Some(f) => {
                confirms = f["confirms"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|k| k.as_str().unwrap().to_string())
                    .collect();
                let e = &f["evidence"];
                if e["status"] != "confirmed" {
                    failures.push(format!("{sick}: {check} not confirmed by the capture: {e}"));
                }
                eprintln!("{sick}: {check} {}", e["text"]);
            }
        }
        let run = lab_run(&dir, &certs, control);
        let doc = audit(&run);
        if let Some(f) = finding(&doc, check) {
            failures.push(format!(
                "{control} (control of {sick}): unexpected {check}: {f}"
            ));
        }
        // Nor does the control's capture show what the check predicts.
        for k in doc["capture"]["kinds"].as_array().unwrap() {
            let kind = k["kind"].as_str().unwrap();
            if confirms.iter().any(|c| c == kind) {
                failures.push(format!("{control}: capture shows {kind}: {k}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
