//! Diagnosis accuracy against the lab's ground truth: every labelled
//! capture in tests/data/lab (each scenario from both vantage points),
//! findings compared with labels.json. Prints a recall / false-positive
//! table per detector (published in docs/accuracy.md) and requires every
//! injected pathology of a verified detector to be found, and no finding of
//! a scenario's kinds on its controls.

mod common;

use common::*;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// Detectors whose recall on the lab fixtures must stay at 95% or more:
/// every one the lab exercises.
const VERIFIED: &[&str] = &[
    "early_data",
    "hello_retry_request",
    "initcwnd_limited",
    "nagle_delayed_ack",
    "nagle_hold",
    "resumption",
    "retransmission",
    "server_think_time",
    "slow_start_after_idle",
    "syn_retransmit",
    "tfo_accepted",
    "tfo_cookie_request",
    "tfo_rejected",
    "write_write_read",
    "zero_window",
];

#[test]
fn findings_match_the_lab_ground_truth() {
    let lab = data_dir().join("lab");
    let mut labels: BTreeMap<String, Value> = BTreeMap::new();
    for entry in std::fs::read_dir(&lab).unwrap() {
        let dir = entry.unwrap().path();
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        labels.insert(
            name,
            serde_json::from_slice(&std::fs::read(dir.join("labels.json")).unwrap()).unwrap(),
        );
    }
    assert!(labels.len() >= 40, "the lab fixtures are missing");
    // kind -> (found, missed, on controls)
    let mut table: BTreeMap<String, (u32, u32, u32)> = BTreeMap::new();
    let mut problems = Vec::new();
    for (name, l) in &labels {
        for side in ["client", "server"] {
            let doc = run_rttdoc_json(&lab.join(name).join(format!("{side}.pcapng.gz")));
            let mut found: BTreeMap<String, BTreeSet<u64>> = BTreeMap::new();
            for c in doc["connections"].as_array().unwrap() {
                let (lo, hi) = (
                    c["first_frame"].as_u64().unwrap(),
                    c["last_frame"].as_u64().unwrap(),
                );
                for x in c["findings"].as_array().unwrap() {
                    let kind = x["kind"].as_str().unwrap().to_string();
                    for frame in x["frames"].as_array().unwrap() {
                        let fr = frame.as_u64().unwrap();
                        assert!(lo <= fr && fr <= hi, "{name} {side}: {kind} cites frame {fr} outside its connection ({lo}-{hi})");
                    }
                    assert!(
                        !x["fix"].as_str().unwrap().is_empty()
                            && !x["explanation"].as_str().unwrap().is_empty()
                    );
                    assert!(x["display_filter"]
                        .as_str()
                        .unwrap()
                        .contains(&format!("tcp.stream eq {}", c["stream"])));
                    // Plain downloads start in slow start by design (the transfer's
                    // ideal counts it): not a finding.
                    assert!(
                        !(kind == "initcwnd_limited" && c["tls"].is_null()),
                        "{name} {side}: initcwnd_limited on a plain connection"
                    );
                    found
                        .entry(kind)
                        .or_default()
                        .insert(c["stream"].as_u64().unwrap());
                }
            }
            for p in l["pathologies"].as_array().unwrap() {
                let kind = p["kind"].as_str().unwrap();
                if let Some(v) = p["visible_from"].as_array() {
                    if !v.iter().any(|s| s == side) {
                        continue;
                    }
                }
                for s in p["streams"].as_array().into_iter().flatten() {
                    let s = s.as_u64().unwrap();
                    let e = table.entry(kind.to_string()).or_default();
                    if found.get(kind).is_some_and(|f| f.contains(&s)) {
                        e.0 += 1;
                    } else {
                        e.1 += 1;
                        if VERIFIED.contains(&kind) {
                            problems.push(format!("missed {kind} on {name} {side} stream {s}"));
                        }
                    }
                }
            }
            if let Some(of) = l["control_of"].as_str() {
                for p in labels[of]["pathologies"].as_array().unwrap() {
                    let kind = p["kind"].as_str().unwrap();
                    if let Some(streams) = found.get(kind) {
                        table.entry(kind.to_string()).or_default().2 += streams.len() as u32;
                        problems.push(format!(
                            "{kind} reported on control {name} {side}: streams {streams:?}"
                        ));
                    }
                }
            }
        }
    }
    println!(
        "{:<24} {:>6} {:>6} {:>9} {:>7}",
        "detector", "found", "missed", "controls", "recall"
    );
    for (kind, (tp, fn_, fp)) in &table {
        let recall = *tp as f64 / (*tp + *fn_).max(1) as f64;
        println!("{kind:<24} {tp:>6} {fn_:>6} {fp:>9} {recall:>7.2}");
    }
    for kind in VERIFIED {
        let (tp, fn_, _) = table.get(*kind).copied().unwrap_or_default();
        assert!(tp + fn_ > 0, "no lab scenario exercises {kind}");
        assert!(
            tp as f64 >= 0.95 * (tp + fn_) as f64,
            "{kind}: recall {tp}/{}",
            tp + fn_
        );
    }
    assert!(
        problems.iter().all(|p| !p.contains("reported on control")),
        "{problems:#?}"
    );
    assert!(problems.is_empty(), "{problems:#?}");
}

/// Every kind a detector can emit is documented.
#[test]
fn every_finding_kind_is_documented() {
    let doc = std::fs::read_to_string(data_dir().join("../../docs/findings.md")).unwrap();
    for kind in rttdoc_kinds() {
        assert!(
            doc.contains(&format!("`{kind}`")),
            "{kind} missing from docs/findings.md"
        );
    }
}

fn rttdoc_kinds() -> Vec<String> {
    let src =
        std::fs::read_to_string(data_dir().join("../../crates/analyze/src/detect/mod.rs")).unwrap();
    let start = src.find("pub const KINDS").unwrap();
    let end = src[start..].find("];").unwrap() + start;
    src[start..end]
        .split('"')
        .skip(1)
        .step_by(2)
        .map(String::from)
        .collect()
}
