//! One connection seen twice under different addresses (twins.rs): a
//! capture on a NAT gateway, or `tcpdump -i any` on a container host
//! (scripts/nat-captures.sh), holds each packet before and after address
//! translation, which Wireshark shows as two streams. rttdoc analyses both
//! and marks the later-numbered one `same_connection_as` the first, whose
//! waits the capture's totals then count once.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;

fn nat(name: &str) -> PathBuf {
    data_dir().join("nat").join(name)
}

fn public_tfo() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/captures/public/the-tcpdump-group-tcpdump/tfo-5c1fa7f9ae91.pcap");
    if p.is_file() {
        return Some(p);
    }
    assert!(
        !in_ci(),
        "CI=true: the shared corpus must be beside the checkout"
    );
    eprintln!(
        "SKIPPED translated_copies: no public corpus at {}",
        p.display()
    );
    None
}

/// Per tcp.stream, as tshark reads it: (client ISN, server ISN, client
/// address and port), from the SYN and the SYN-ACK.
fn tshark_isns(capture: &Path) -> BTreeMap<u64, (Option<u64>, Option<u64>, String)> {
    let out = Command::new("tshark")
        .arg("-r")
        .arg(capture)
        .args(["-Y", "tcp.flags.syn == 1", "-T", "fields"])
        .args([
            "-e",
            "tcp.stream",
            "-e",
            "tcp.flags.ack",
            "-e",
            "tcp.seq_raw",
        ])
        .args([
            "-e",
            "ip.src",
            "-e",
            "tcp.srcport",
            "-e",
            "ip.dst",
            "-e",
            "tcp.dstport",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let mut streams = BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let f: Vec<&str> = line.split('\t').collect();
        let stream: u64 = f[0].parse().unwrap();
        let seq: u64 = f[2].parse().unwrap();
        let e = streams.entry(stream).or_insert((None, None, String::new()));
        if f[1] == "1" {
            e.1 = Some(seq);
            e.2 = format!("{}:{}", f[5], f[6]);
        } else {
            e.0 = Some(seq);
            e.2 = format!("{}:{}", f[3], f[4]);
        }
    }
    streams
}

/// Checks one capture: the streams rttdoc marks are those tshark shows with
/// the same initial sequence numbers both ways and another client address,
/// no others; the summary counts only the unmarked ones. Returns the JSON.
fn check(capture: &Path, copies: &[(u64, u64)]) -> serde_json::Value {
    let doc = run_rttdoc_json(capture);
    let conns = doc["connections"].as_array().unwrap();
    let isns = tshark_isns(capture);
    let mut marked = Vec::new();
    for c in conns {
        let stream = c["stream"].as_u64().unwrap();
        if let Some(first) = c["same_connection_as"].as_u64() {
            marked.push((stream, first));
            let (a, b) = (&isns[&stream], &isns[&first]);
            assert!(
                a.0.is_some() && a.1.is_some(),
                "{capture:?} {stream}: {a:?}"
            );
            assert_eq!((a.0, a.1), (b.0, b.1), "{capture:?}: {stream} vs {first}");
            assert_ne!(a.2, b.2, "{capture:?}: another client address");
            assert!(first < stream);
        } else {
            assert!(c["same_connection_as"].is_null());
        }
    }
    marked.sort();
    assert_eq!(marked, copies, "{capture:?}");
    let s = &doc["summary"];
    assert_eq!(s["translated_copies"].as_u64(), Some(copies.len() as u64));
    assert_eq!(
        doc["capture"]["translated_copies"].as_u64(),
        Some(copies.len() as u64)
    );
    let counted: Vec<&serde_json::Value> = conns
        .iter()
        .filter(|c| c["same_connection_as"].is_null())
        .collect();
    let sum = |f: &dyn Fn(&serde_json::Value) -> f64| counted.iter().map(|c| f(c)).sum::<f64>();
    let excess = sum(&|c| c["excess_ms"].as_f64().unwrap());
    assert!(
        (s["excess_ms_total"].as_f64().unwrap() - excess).abs() < 0.01,
        "{capture:?}: {s}"
    );
    let mut by_kind: BTreeMap<String, (u64, f64)> = BTreeMap::new();
    for c in &counted {
        let mut seen = Vec::new();
        for x in c["findings"].as_array().unwrap() {
            let kind = x["kind"].as_str().unwrap().to_string();
            let e = by_kind.entry(kind.clone()).or_default();
            if !seen.contains(&kind) {
                e.0 += 1;
                seen.push(kind);
            }
            e.1 += x["cost_ms"].as_f64().unwrap();
        }
    }
    let causes = s["causes"].as_object().unwrap();
    assert_eq!(causes.len(), by_kind.len(), "{capture:?}: {s}");
    for (kind, (n, cost)) in by_kind {
        assert_eq!(causes[&kind]["connections"].as_u64(), Some(n), "{kind}");
        assert!((causes[&kind]["cost_ms"].as_f64().unwrap() - cost).abs() < 0.01);
    }
    doc
}

/// `tcpdump -i any` on a container host: the container's connection on its
/// veth and the bridge (copies of one another) and on the uplink after the
/// masquerade, a second stream with the host's address. Each capture is
/// one connection.
#[test]
fn a_container_hosts_any_capture_counts_each_connection_once() {
    if !require("translated_copies", &["tshark"], false) {
        return;
    }
    for name in ["download-any.pcap.gz", "tls-any.pcap.gz", "wwr-any.pcap.gz"] {
        let doc = check(&nat(name), &[(1, 0)]);
        let conns = doc["connections"].as_array().unwrap();
        assert_eq!(conns.len(), 2, "{name}");
        assert!(doc["capture"]["capture_duplicates"].as_u64().unwrap() > 0);
        // The copy is analysed as fully as the connection itself.
        let kinds = |s: u64| -> Vec<String> {
            let c = conns.iter().find(|c| c["stream"] == s).unwrap();
            c["findings"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x["kind"].as_str().unwrap().to_string())
                .collect()
        };
        assert_eq!(kinds(0), kinds(1), "{name}");
    }
    // Write-write-read (nginx, tcp_nodelay off): three waits, counted on
    // one connection, once.
    let doc = check(&nat("wwr-any.pcap.gz"), &[(1, 0)]);
    let wwr = &doc["summary"]["causes"]["write_write_read"];
    assert_eq!(wwr["connections"].as_u64(), Some(1), "{wwr}");
    let one = doc["connections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["stream"] == 0)
        .unwrap()["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["cost_ms"].as_f64().unwrap())
        .sum::<f64>();
    assert!(one > 80.0, "three delayed-ACK waits: {one}");
    assert!((wwr["cost_ms"].as_f64().unwrap() - one).abs() < 0.01);
    let text = Command::new(rttdoc_bin())
        .arg("analyze")
        .arg(nat("wwr-any.pcap.gz"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("same as 0"), "{text}");
    assert!(
        text.contains("NOTE: 1 connection(s) are an earlier stream's"),
        "{text}"
    );
}

/// tcpdump's TCP Fast Open test capture was taken on a NAT gateway: a
/// cookie request seen from 192.168.0.100 and again from 9.9.9.9 (streams
/// 0 and 1), then a SYN with data that only the inside saw (stream 2).
#[test]
fn a_nat_gateways_capture_counts_the_translated_side_once() {
    if !require("translated_copies_public", &["tshark"], false) {
        return;
    }
    let Some(tfo) = public_tfo() else { return };
    let doc = check(&tfo, &[(1, 0)]);
    assert_eq!(doc["summary"]["tfo_attempts"].as_u64(), Some(1));
    assert_eq!(doc["summary"]["connections"].as_u64(), Some(3));
}

/// Captures at one point of a path have no translated copies: every other
/// capture in tests/data (the lab's at three path delays, host captures
/// with offloads, tunnels, TLS after preambles), hundreds of connections
/// with ports reused.
#[test]
fn captures_at_one_point_have_no_translated_copies() {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.file_name().unwrap().to_string_lossy().contains(".pcap") {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    for e in std::fs::read_dir(data_dir()).unwrap().flatten() {
        let p = e.path();
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        if p.is_dir() && name != "nat" && name != "malformed" {
            walk(&p, &mut files);
        }
    }
    // nDPI's ajp.pcap holds its AJP session twice, the copy's server port
    // rewritten (8009 -> 8010, same sequence numbers and times): a
    // translated copy by construction, rightly reported as one.
    files.retain(|f| !f.ends_with("other-projects/ndpi-ajp.pcap"));
    files.sort();
    assert!(files.len() > 500, "{} captures", files.len());
    for f in files {
        let out = Command::new(rttdoc_bin())
            .args(["analyze", "--format", "csv"])
            .arg(&f)
            .output()
            .unwrap();
        let csv = String::from_utf8_lossy(&out.stdout);
        let mut lines = csv.lines();
        let header: Vec<&str> = lines.next().unwrap_or("").split(',').collect();
        let col = header
            .iter()
            .position(|h| *h == "same_connection_as")
            .expect("a same_connection_as column");
        for line in lines {
            let cells: Vec<&str> = line.split(',').collect();
            assert_eq!(cells.len(), header.len(), "{f:?}: {line}");
            assert_eq!(cells.get(col), Some(&""), "{f:?}: {line}");
        }
    }
}
