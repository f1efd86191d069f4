//! Lab scenarios on real kernel TCP stacks: each injected pathology must
//! show its physical effect (curl's own timings) and rttdoc's ledger must
//! see it, from the client-side and the server-side capture; its control
//! must not. No namespace may be left behind.

mod common;

use common::*;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// Long enough that RSA-4096 signing (~10 ms on these VMs) stays a small part of a round trip.
const RTT_MS: f64 = 50.0;

fn lab_namespaces() -> Vec<String> {
    let out = Command::new("ip").args(["netns", "list"]).output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| n.starts_with("rttdoc-"))
        .map(String::from)
        .collect()
}

fn run(name: &str, out: &Path) -> Value {
    let o = Command::new(rttdoc_bin())
        .args(["lab", "run", name, "--rtt", "50ms", "--runs", "2", "--out"])
        .arg(out)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "lab run {name}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&std::fs::read(out.join("labels.json")).unwrap()).unwrap()
}

fn connections(capture: &Path) -> Vec<Value> {
    run_rttdoc_json(capture)["connections"]
        .as_array()
        .unwrap()
        .clone()
}

fn within(value: f64, lo: f64, hi: f64) -> bool {
    (lo..=hi).contains(&value)
}

#[test]
fn lab_scenarios_reproduce_their_pathology_and_controls_do_not() {
    if !require("lab_scenarios", &["ip", "nginx", "curl", "openssl"], true) {
        return;
    }
    let before = lab_namespaces();
    let dir = TempDir::new("lab");

    // TLS 1.3 with Nagle: 2 RTT handshake; with TCP_NODELAY: 1 RTT.
    for (name, expect_rtts) in [("tls13-nagle-nginx", 2.0), ("tls13-nodelay-nginx", 1.0)] {
        let out = dir.path(name);
        let labels = run(name, &out);
        for t in labels["timings"].as_array().unwrap() {
            let tls_rtts =
                (t["tls_ms"].as_f64().unwrap() - t["connect_ms"].as_f64().unwrap()) / RTT_MS;
            assert!(
                within(tls_rtts, expect_rtts - 0.3, expect_rtts + 0.6),
                "{name}: curl saw a {tls_rtts:.2} RTT TLS handshake"
            );
        }
        for (side, vantage) in [("client.pcapng", "client"), ("server.pcapng", "server")] {
            let conns = connections(&out.join(side));
            assert_eq!(conns.len(), 2, "{name} {side}");
            for c in &conns {
                assert_eq!(c["vantage"], vantage, "{name} {side}");
                let rtt = c["rtt_ms"].as_f64().unwrap();
                assert!(
                    within(rtt, RTT_MS - 1.0, RTT_MS + 3.0),
                    "{name} {side}: rtt {rtt}"
                );
                assert_eq!(c["tls"]["version"], "TLS 1.3");
                let hs = c["tls"]["handshake_rtts"].as_f64().unwrap();
                assert!(
                    within(hs, expect_rtts - 0.3, expect_rtts + 0.6),
                    "{name} {side}: ledger says {hs:.2} RTT"
                );
                assert!(
                    c["tls"]["server_flight_bytes"].as_u64().unwrap() > 4096,
                    "the chain makes a >4 KB flight"
                );
            }
        }
    }

    // A lost SYN costs the 1 s SYN timeout; the control does not.
    for (name, lost) in [("syn-loss", true), ("syn-loss-control", false)] {
        let out = dir.path(name);
        let labels = run(name, &out);
        let connect = labels["timings"][0]["connect_ms"].as_f64().unwrap();
        assert_eq!(connect > 900.0, lost, "{name}: curl connect {connect} ms");
        for side in ["client.pcapng", "server.pcapng"] {
            let conns = connections(&out.join(side));
            let first = &conns[0];
            let retransmits = first["handshake"]["syn_retransmits"].as_u64().unwrap();
            let tcp_row = first["ledger"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["phase"] == "tcp_handshake")
                .unwrap();
            if lost && side == "client.pcapng" {
                // The client saw both SYNs; the server only the second.
                assert_eq!(retransmits, 1, "{name} {side}");
                assert!(
                    tcp_row["duration_ms"].as_f64().unwrap() > 900.0,
                    "{name} {side}: {tcp_row}"
                );
                assert!(
                    first["excess_rtts"].as_f64().unwrap() > 15.0,
                    "{name} {side}: 1 s is 20 RTT of 50 ms"
                );
            } else {
                assert_eq!(retransmits, 0, "{name} {side}");
                assert!(
                    tcp_row["excess_rtts"].as_f64().unwrap() < 0.3,
                    "{name} {side}: {tcp_row}"
                );
            }
        }
    }

    let after = lab_namespaces();
    let leaked: Vec<_> = after.iter().filter(|n| !before.contains(n)).collect();
    assert!(
        leaked.is_empty(),
        "lab runs left namespaces behind: {leaked:?}"
    );
}
