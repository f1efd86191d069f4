//! Captures cut at a snap length (`tcpdump -s 96`, Wireshark's "limit each
//! packet", a capture appliance's slicing): the lab's real TLS captures
//! (nginx, HAProxy, the built-in peers, proxies and STARTTLS) cut by
//! editcap, at each vantage, against the same captures whole.
//!
//! What the cut hides may be missing (a TLS 1.3 PSK, the ClientHello's
//! offers and the findings that need them); nothing may be made up. Where
//! the hellos' type bytes, the record headers and the segments survive,
//! the round trips are the same: the TLS version, the TLS handshake row,
//! the exchanges and their first bytes.

mod common;

use common::*;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// Lab fixtures with TLS, from each producer and handshake shape.
const FIXTURES: &[&str] = &[
    "small-chain-nginx",        // TLS 1.3 full, nginx
    "small-chain-haproxy",      // TLS 1.3, HAProxy
    "tls12-full-nginx",         // TLS 1.2 full: 2 RTT
    "tls12-resumption-builtin", // TLS 1.2 abbreviated: server's Finished cut away
    "hrr-nginx",                // HelloRetryRequest
    "tls13-nagle-builtin",      // a request written behind the client's Finished
    "tls13-resumption-nginx",   // tickets, PSK
];

/// Snap lengths that keep a record header and a few bytes of the body
/// (96: tcpdump's old default for IPv6; 128: a common choice).
const SNAPS: &[u32] = &[96, 128];

fn editcap(src: &Path, snap: u32, dst: &Path) {
    let out = Command::new("editcap")
        .args(["-s", &snap.to_string()])
        .arg(src)
        .arg(dst)
        .output()
        .unwrap();
    assert!(out.status.success(), "editcap: {out:?}");
}

fn connections(doc: &Value) -> Vec<&Value> {
    doc["connections"].as_array().unwrap().iter().collect()
}

fn by_stream(doc: &Value, stream: u64) -> Option<&Value> {
    connections(doc)
        .into_iter()
        .find(|c| c["stream"].as_u64() == Some(stream))
}

/// The ledger rows of a phase, as (start frame, end frame).
fn rows(c: &Value, phase: &str) -> Vec<(u64, u64)> {
    c["ledger"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["phase"] == phase)
        .map(|r| {
            (
                r["start_frame"].as_u64().unwrap(),
                r["end_frame"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn finding_kinds(c: &Value) -> Vec<String> {
    c["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap().to_string())
        .collect()
}

fn cut_messages(c: &Value) -> Vec<String> {
    c["tls"]["messages"]
        .as_array()
        .map(|ms| {
            ms.iter()
                .filter(|m| m["cut"] == true)
                .map(|m| m["message"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// Compares one cut capture with the whole one; returns what differs.
fn compare(whole: &Value, cut: &Value, what: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let mut tls_connections = 0;
    for w in connections(whole) {
        if w["tls"].is_null() {
            continue;
        }
        tls_connections += 1;
        let stream = w["stream"].as_u64().unwrap();
        let Some(c) = by_stream(cut, stream) else {
            problems.push(format!("{what} stream {stream}: missing"));
            continue;
        };
        let mut differs = |field: &str, a: String, b: String| {
            if a != b {
                problems.push(format!(
                    "{what} stream {stream} {field}: {a} whole, {b} cut"
                ));
            }
        };
        differs(
            "version",
            w["tls"]["version"].to_string(),
            c["tls"]["version"].to_string(),
        );
        for phase in ["tcp_handshake", "tls_handshake", "first_byte"] {
            differs(
                phase,
                format!("{:?}", rows(w, phase)),
                format!("{:?}", rows(c, phase)),
            );
        }
        differs(
            "exchanges",
            w["exchanges"].to_string(),
            c["exchanges"].to_string(),
        );
        // Nothing made up: every finding of the cut capture is one of the
        // whole capture's.
        let whole_kinds = finding_kinds(w);
        for k in finding_kinds(c) {
            if !whole_kinds.contains(&k) {
                problems.push(format!("{what} stream {stream}: {k} only when cut"));
            }
        }
        // The cut is said: the hellos are marked, and a version read from
        // the records says so.
        let cut_msgs = cut_messages(c);
        if !cut_msgs.iter().any(|m| m == "ClientHello") {
            problems.push(format!(
                "{what} stream {stream}: no cut ClientHello in {cut_msgs:?}"
            ));
        }
        let sh_cut = cut_msgs.iter().any(|m| m == "ServerHello");
        if sh_cut != (c["tls"]["version_inferred"] == true) {
            problems.push(format!(
                "{what} stream {stream}: ServerHello cut {sh_cut}, version_inferred {}",
                c["tls"]["version_inferred"]
            ));
        }
        if !cut_messages(w).is_empty() || w["tls"].get("version_inferred").is_some() {
            problems.push(format!(
                "{what} stream {stream}: the whole capture says cut"
            ));
        }
    }
    assert!(tls_connections > 0, "{what}: no TLS connection");
    problems
}

#[test]
fn tls_round_trips_survive_a_snap_length_and_nothing_is_made_up() {
    if !require("snap_length", &["editcap"], false) {
        return;
    }
    let dir = TempDir::new("snap-length");
    let mut problems = Vec::new();
    for fixture in FIXTURES {
        for side in ["client", "middle", "server"] {
            let whole_path = data_dir()
                .join("lab")
                .join(fixture)
                .join(format!("{side}.pcapng.gz"));
            let whole = run_rttdoc_json(&whole_path);
            for snap in SNAPS {
                let cut_path = dir.path(&format!("{fixture}-{side}-{snap}.pcapng"));
                editcap(&whole_path, *snap, &cut_path);
                let cut = run_rttdoc_json(&cut_path);
                let what = format!("{fixture}/{side} -s {snap}");
                problems.extend(compare(&whole, &cut, &what));
                problems.extend(display_filter_problems(&cut_path, &cut));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// TLS after a proxy's or STARTTLS's plaintext: the preamble is judged on
/// the captured start of the ClientHello's segment (and the server's
/// answer), so the TLS handshake stays a phase of its own.
#[test]
fn tls_after_a_preamble_is_found_under_a_snap_length() {
    if !require("snap_length_preamble", &["editcap"], false) {
        return;
    }
    let dir = TempDir::new("snap-length-preamble");
    let mut problems = Vec::new();
    // (capture, a snap length that keeps the preamble's messages whole)
    let cases = [
        ("socks5-microsocks", 96),
        ("postgres-sslrequest", 96),
        ("http-connect-tinyproxy", 300),
        ("smtp-starttls-exim", 300),
    ];
    for (name, snap) in cases {
        let whole_path = data_dir().join("tls-start").join(format!("{name}.pcap.gz"));
        let whole = run_rttdoc_json(&whole_path);
        let cut_path = dir.path(&format!("{name}-{snap}.pcapng"));
        editcap(&whole_path, snap, &cut_path);
        let cut = run_rttdoc_json(&cut_path);
        let what = format!("{name} -s {snap}");
        problems.extend(compare(&whole, &cut, &what));
        for c in connections(&cut) {
            if !c["tls"].is_null() && c["tls"]["started_after"].is_null() {
                problems.push(format!("{what}: TLS without its preamble"));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// A snap length shorter than the headers (tcpflow's simson.pcap: 40
/// bytes of Ethernet frames, the TCP header cut after its ports): every
/// frame is damaged, and the capture's setting is named as the cause,
/// with what to capture instead; a length that keeps the headers cuts
/// nothing of them.
#[test]
fn a_snap_length_inside_the_headers_is_named() {
    if !require("snap_length_headers", &["editcap"], false) {
        return;
    }
    let dir = TempDir::new("snap-length-headers");
    let whole = data_dir().join("lab/small-chain-nginx/client.pcapng.gz");
    let frames = run_rttdoc_json(&whole)["capture"]["frames"]
        .as_u64()
        .unwrap();
    // 30 bytes: inside the TCP header behind a bare IPv4 one (the lab's
    // captures are raw IP), inside IP behind Ethernet.
    let cut = dir.path("cut-30.pcapng");
    editcap(&whole, 30, &cut);
    let doc = run_rttdoc_json(&cut);
    let stats = &doc["capture"];
    assert_eq!(stats["damaged"].as_u64(), Some(frames), "{stats}");
    assert_eq!(stats["snap_cut"].as_u64(), Some(frames), "{stats}");
    assert_eq!(stats["connections"].as_u64(), Some(0), "{stats}");
    let text = Command::new(rttdoc_bin())
        .args(["analyze", "--no-progress"])
        .arg(&cut)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("cut by the capture's snap length") && text.contains("-s 0"),
        "{text}"
    );
    // 96 bytes keep every header: nothing is damaged, and the segments
    // whose payload it cut (tshark: captured shorter than on the wire,
    // TCP payload beyond the frame) are counted and named.
    let kept = dir.path("cut-96.pcapng");
    editcap(&whole, 96, &kept);
    let stats = &run_rttdoc_json(&kept)["capture"];
    assert_eq!(stats["damaged"].as_u64(), Some(0), "{stats}");
    assert_eq!(stats["snap_cut"].as_u64(), Some(0), "{stats}");
    assert_eq!(stats["clipped_segments"].as_u64(), Some(0), "{stats}");
    if require("snap_length_payloads", &["tshark"], false) {
        // Raw IP: the IP packet starts the frame.
        let cut_payloads = tshark_fields(
            &kept,
            &[],
            "tcp && ip.len > frame.cap_len",
            &["frame.number"],
        )
        .len();
        assert!(cut_payloads > 0);
        assert_eq!(
            stats["snap_cut_payloads"].as_u64(),
            Some(cut_payloads as u64),
            "{stats}"
        );
        let text = Command::new(rttdoc_bin())
            .args(["analyze", "--no-progress"])
            .arg(&kept)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&text.stdout);
        assert!(
            text.contains(&format!(
                "{cut_payloads} TCP segments were cut by the capture's snap length after their headers"
            )),
            "{text}"
        );
    }
    // Whole, nothing is cut.
    let stats = &run_rttdoc_json(&whole)["capture"];
    assert_eq!(stats["snap_cut_payloads"].as_u64(), Some(0), "{stats}");
}
