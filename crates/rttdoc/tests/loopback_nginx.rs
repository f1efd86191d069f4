//! Real nginx + curl traffic captured on a private loopback (see
//! scripts/loopback-capture.sh): rttdoc must agree with tshark on it, and
//! read what the script is known to have done.

mod common;

use common::*;
use std::process::Command;

fn capture(dir: &TempDir) -> std::path::PathBuf {
    let out = dir.path("loopback.pcap");
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/loopback-capture.sh");
    let status = Command::new("bash").arg(script).arg(&out).status().unwrap();
    assert!(status.success(), "loopback capture script failed");
    out
}

#[test]
fn fresh_loopback_capture_agrees_with_tshark() {
    let tools = [
        "tshark", "tcpdump", "nginx", "curl", "openssl", "unshare", "ip",
    ];
    if !require("fresh_loopback_capture_agrees_with_tshark", &tools, true) {
        return;
    }
    let dir = TempDir::new("loopback");
    let pcap = capture(&dir);
    assert_agrees_with_tshark(&pcap, &["-d", "tcp.port==18443,tls"]);
}

/// The committed loopback fixture holds, in stream order: HTTP keep-alive
/// (2 requests), TLS 1.3 full, TLS 1.2 full, TLS 1.2 full then resumed,
/// TLS 1.3 full then resumed, HTTP 404.
#[test]
fn loopback_fixture_is_read_as_the_script_made_it() {
    let doc = run_rttdoc_json(&data_dir().join("loopback-nginx-curl.pcap.gz"));
    assert_eq!(doc["schema_version"], 2);
    let conns = doc["connections"].as_array().unwrap();
    let by_stream = |n: u64| conns.iter().find(|c| c["stream"] == n).unwrap();
    assert_eq!(conns.len(), 8);

    let http = by_stream(0);
    assert!(http["tls"].is_null());
    assert_eq!(http["exchanges"], 2);
    let labels: Vec<&str> = http["ledger"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["label"].as_str().unwrap())
        .collect();
    assert!(
        labels.contains(&"GET /index.html: request -> first byte"),
        "{labels:?}"
    );
    assert!(
        labels.contains(&"GET /page.html: request -> first byte"),
        "{labels:?}"
    );
    assert!(
        labels
            .iter()
            .any(|l| l.starts_with("GET /page.html: response transfer (16")),
        "{labels:?}"
    );

    let expect = [
        (1, "TLS 1.3", false, 1.0),
        (2, "TLS 1.2", false, 2.0),
        (3, "TLS 1.2", false, 2.0),
        (4, "TLS 1.2", true, 1.0),
        (5, "TLS 1.3", false, 1.0),
        (6, "TLS 1.3", true, 1.0),
    ];
    for (stream, version, resumed, ideal) in expect {
        let tls = &by_stream(stream)["tls"];
        assert_eq!(tls["version"], version, "stream {stream}");
        assert_eq!(tls["resumed"], resumed, "stream {stream}");
        assert_eq!(tls["ideal_handshake_rtts"], ideal, "stream {stream}");
        assert_eq!(
            tls["sni"],
            serde_json::Value::Null,
            "curl sends no SNI for an IP address"
        );
        assert!(
            tls["handshake_ms"].as_f64().unwrap() > 0.0,
            "stream {stream}"
        );
        let messages: Vec<&str> = tls["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["message"].as_str().unwrap())
            .collect();
        assert_eq!(messages[0], "ClientHello", "stream {stream}");
        assert_eq!(messages[1], "ServerHello", "stream {stream}");
        let has_cert = messages.contains(&"Certificate");
        // TLS 1.2 shows its Certificate in clear unless resumed; TLS 1.3 never does.
        assert_eq!(
            has_cert,
            version == "TLS 1.2" && !resumed,
            "stream {stream}: {messages:?}"
        );
    }
    assert_eq!(by_stream(6)["tls"]["psk_offered"], true);
    let last = by_stream(7);
    assert_eq!(last["exchanges"], 1);
    assert_eq!(last["ending"], "fin");
    for c in conns {
        let (rtt, handshake) = (
            c["rtt_ms"].as_f64().unwrap(),
            c["tcp_handshake_ms"].as_f64().unwrap(),
        );
        assert!(rtt < 1.0);
        // The handshake's round trip, or samples of both directions
        // smaller than it (and more than half), named as what they are.
        match c["rtt_source"].as_str().unwrap() {
            "handshake" => assert_eq!(rtt, handshake, "{c}"),
            "timestamps" | "data_ack" => assert!(rtt < handshake && rtt * 2.0 > handshake, "{c}"),
            other => panic!("{other}"),
        }
    }
}

/// Every key rttdoc writes is documented in docs/json-schema.md.
#[test]
fn every_json_field_is_documented() {
    let doc = std::fs::read_to_string(data_dir().join("../../docs/json-schema.md")).unwrap();
    fn keys(v: &serde_json::Value, out: &mut std::collections::BTreeSet<String>) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, v) in m {
                    out.insert(k.clone());
                    keys(v, out);
                }
            }
            serde_json::Value::Array(a) => a.iter().for_each(|v| keys(v, out)),
            _ => {}
        }
    }
    let mut all = std::collections::BTreeSet::new();
    for capture in [
        "loopback-nginx-curl.pcap.gz",
        "mptcp/two-paths-think.pcap.gz",
    ] {
        keys(&run_rttdoc_json(&data_dir().join(capture)), &mut all);
    }
    let out = std::process::Command::new(rttdoc_bin())
        .args(["analyze", "--json", "--conn", "0"])
        .arg(data_dir().join("lab/syn-loss/client.pcapng.gz"))
        .output()
        .unwrap();
    keys(&serde_json::from_slice(&out.stdout).unwrap(), &mut all);
    let missing: Vec<_> = all
        .iter()
        .filter(|k| !doc.contains(&format!("`{k}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "fields missing from docs/json-schema.md: {missing:?}"
    );
}

/// No number is written as "-0.0": a cost or queue of nothing is 0, and a
/// program comparing the text (or a person reading it) should not meet a
/// sign. An f64 `sum()` of nothing is -0.0, which is how one came out.
#[test]
fn no_json_number_is_negative_zero() {
    fn negative_zeros(v: &serde_json::Value, at: &str, out: &mut Vec<String>) {
        match v {
            serde_json::Value::Object(m) => m
                .iter()
                .for_each(|(k, v)| negative_zeros(v, &format!("{at}.{k}"), out)),
            serde_json::Value::Array(a) => a
                .iter()
                .enumerate()
                .for_each(|(i, v)| negative_zeros(v, &format!("{at}[{i}]"), out)),
            serde_json::Value::Number(n)
                if n.as_f64().is_some_and(|f| f == 0.0 && f.is_sign_negative()) =>
            {
                out.push(at.to_string());
            }
            _ => {}
        }
    }
    let mut found = Vec::new();
    for capture in [
        "loopback-nginx-curl.pcap.gz",
        "mptcp/two-paths-think.pcap.gz",
    ] {
        negative_zeros(
            &run_rttdoc_json(&data_dir().join(capture)),
            capture,
            &mut found,
        );
    }
    assert!(found.is_empty(), "-0.0 written at {found:?}");
}
