//! Captures `tcprewrite` made: tcpreplay's own test suite rewrites its
//! `test.pcap` (a browser's page load: HTTP over IPv4 and IPv6, MPLS,
//! VLANs) with each option it tests and keeps the results beside it
//! (`test/test.rewrite_*`). They are the same round trips in other
//! clothes: addresses, ports, MACs, TTLs, TOS, VLAN and 802.1ad tags
//! added and removed, Cisco HDLC framing, sequence numbers moved, lengths
//! fixed. rttdoc must find the same connections and the same findings in
//! each, made here with the same options from the public `test.pcap`.
//!
//! `--mtu-trunc` is the exception that proves a rule: it cuts every
//! packet longer than the MTU and rewrites its IP length to match, so the
//! server's full segments (1448 bytes) look like 248-byte ones with a
//! 1200-byte hole after each. Small segments sent back to back with none
//! acknowledged are what Nagle never does: no Nagle finding may come of
//! them (the server's flights were paced by its congestion window).

mod common;

use common::*;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// tcpreplay's test/Makefile.am options that keep every TCP segment
/// whole, as (name, arguments).
const WHOLE: &[(&str, &[&str])] = &[
    ("seed", &["-s", "55"]),
    ("tos", &["--tos=50"]),
    ("portmap", &["-r", "80:8080"]),
    ("range_portmap", &["-r", "1-100:49148"]),
    ("sequence", &["--tcp-sequence", "42"]),
    ("pnat", &["-N", "96.17.211.0/24:172.16.0.0/24"]),
    ("pad", &["-F", "pad"]),
    ("trunc", &["-F", "trunc"]),
    ("mac_seed", &["--enet-mac-seed=42"]),
    (
        "config",
        &[
            "--enet-vlan=add",
            "--enet-vlan-tag=45",
            "--enet-vlan-cfi=1",
            "--enet-vlan-pri=5",
        ],
    ),
    (
        "vlan802.1ad",
        &[
            "--enet-vlan=add",
            "--enet-vlan-tag=42",
            "--enet-vlan-cfi=1",
            "--enet-vlan-pri=2",
            "--enet-vlan-proto=802.1ad",
        ],
    ),
    (
        "dlthdlc",
        &["--dlt=hdlc", "--hdlc-control=0", "--hdlc-address=0x0F"],
    ),
    ("1ttl", &["--ttl=58"]),
    ("3ttl", &["--ttl=-58"]),
    ("fixcsum", &["--fixcsum"]),
    ("fixlen_pad", &["--fixlen=pad"]),
    ("fixlen_del", &["--fixlen=del"]),
];

fn tcprewrite(src: &Path, dst: &Path, args: &[&str]) {
    let out = Command::new("tcprewrite")
        .arg("-i")
        .arg(src)
        .arg("-o")
        .arg(dst)
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "tcprewrite {args:?}: {out:?}");
}

/// Every finding: (stream, kind, frames, cost in µs).
fn findings(doc: &Value) -> Vec<(u64, String, Vec<u64>, i64)> {
    let mut all = Vec::new();
    for c in doc["connections"].as_array().unwrap() {
        for f in c["findings"].as_array().unwrap() {
            all.push((
                c["stream"].as_u64().unwrap(),
                f["kind"].as_str().unwrap().to_string(),
                f["frames"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_u64().unwrap())
                    .collect(),
                (f["cost_ms"].as_f64().unwrap() * 1e3).round() as i64,
            ));
        }
    }
    all.sort();
    all
}

fn setup(test: &str) -> Option<(std::path::PathBuf, Value)> {
    if !require(test, &["tcprewrite"], false) {
        return None;
    }
    let original = public_capture("appneta-tcpreplay", "test.pcap")?;
    let doc = run_rttdoc_json(&original);
    Some((original, doc))
}

#[test]
fn each_rewrite_that_keeps_the_segments_keeps_the_connections_and_findings() {
    let Some((original, base)) = setup("rewrites keep findings") else {
        return;
    };
    let expected = findings(&base);
    // test.pcap's three answers the servers took their time over (judged
    // in docs/real-world.md): a rewrite that lost them would pass
    // vacuously.
    assert_eq!(expected.len(), 3, "{expected:?}");
    let dir = TempDir::new("tcprewrite");
    for (name, args) in WHOLE {
        let out = dir.path(&format!("test.rewrite_{name}"));
        tcprewrite(&original, &out, args);
        let doc = run_rttdoc_json(&out);
        assert_eq!(
            doc["capture"]["tcp_segments"], base["capture"]["tcp_segments"],
            "{name}: TCP segments"
        );
        assert_eq!(doc["capture"]["damaged"], 0, "{name}: damaged");
        assert_eq!(
            doc["connections"].as_array().unwrap().len(),
            base["connections"].as_array().unwrap().len(),
            "{name}: connections"
        );
        assert_eq!(findings(&doc), expected, "{name}: findings");
    }
}

#[test]
fn segments_cut_to_the_mtu_with_their_ip_length_rewritten_are_no_nagle_hold() {
    let Some((original, base)) = setup("mtu-trunc rewrite") else {
        return;
    };
    let dir = TempDir::new("tcprewrite-mtu");
    let out = dir.path("test.rewrite_mtutrunc");
    tcprewrite(&original, &out, &["--mtu-trunc", "--mtu=300"]);
    let doc = run_rttdoc_json(&out);
    // The cut is invisible to the decoder: nothing is damaged, every
    // segment is there, each shorter than it was.
    assert_eq!(doc["capture"]["damaged"], 0);
    assert_eq!(
        doc["capture"]["tcp_segments"],
        base["capture"]["tcp_segments"]
    );
    let bytes = |d: &Value| {
        connection(d, 1)["server_to_client"]["bytes"]
            .as_u64()
            .unwrap()
    };
    assert!(
        bytes(&doc) < bytes(&base) / 3,
        "the server's segments were cut: {} of {} bytes seen",
        bytes(&doc),
        bytes(&base)
    );
    let kinds: Vec<(u64, String)> = findings(&doc)
        .into_iter()
        .map(|(s, k, _, _)| (s, k))
        .collect();
    for nagle in ["nagle_hold", "nagle_delayed_ack", "write_write_read"] {
        assert!(
            !kinds.iter().any(|(_, k)| k == nagle),
            "{nagle} from segments cut by a tool: {kinds:?}"
        );
    }
    // What the cut leaves is timed as before: the answer whose first
    // segment was cut (stream 2, IPv6: a 200 of 715 bytes, 13 ms of the
    // server's) still began when it began.
    let original_think = waits_of(connection(&base, 2), "server_think_time", "first_byte");
    assert!(!original_think.is_empty());
    assert_eq!(
        waits_of(connection(&doc, 2), "server_think_time", "first_byte"),
        original_think
    );
}
