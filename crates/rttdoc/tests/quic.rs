//! QUIC handshakes: the `quic` section, its `quic_handshake` ledger row
//! and the four QUIC findings, on captures real QUIC stacks made.
//!
//! Producer: scripts/quic-captures.sh: quic-go client and server (kernel
//! UDP) across a path of 20 ms each way, captured on the client's
//! interface. `retry`: the server sends every client a Retry.
//! `version-negotiation`: the client starts in QUIC v2, the server speaks
//! v1 only. `lost-initial`: the server's namespace drops each flow's
//! first two datagrams (the whole ClientHello), quic-go resends after its
//! 200 ms probe timeout. `amplification`: an RSA-4096 chain of three
//! certificates, over three times the client's one-datagram ClientHello.
//! Controls: `plain` and `zero-rtt` (a second connection resuming with a
//! request in 0-RTT). Committed under tests/data/quic. Every expectation
//! is read from the capture by tshark.

mod common;

use std::path::{Path, PathBuf};

use common::*;

/// One datagram as tshark reads it.
#[derive(Debug, Clone)]
struct Datagram {
    frame: u64,
    time: f64,
    from_client: bool,
    /// UDP payload bytes.
    bytes: u64,
    /// Long-header packet types (v1 numbering: 0 Initial, 1 0-RTT,
    /// 2 Handshake, 3 Retry), in the datagram's order.
    long: Vec<u8>,
    /// A short-header packet among them.
    short: bool,
    versions: Vec<String>,
    token: bool,
}

fn capture(name: &str) -> PathBuf {
    data_dir().join("quic").join(format!("{name}.pcap.gz"))
}

fn datagrams(capture: &Path) -> Vec<Datagram> {
    let rows = tshark_fields(
        capture,
        &[],
        "udp",
        &[
            "frame.number",
            "frame.time_relative",
            "udp.dstport",
            "udp.length",
            "quic.long.packet_type",
            "quic.header_form",
            "quic.version",
            "quic.token_length",
            "quic.packet_length",
            "udp.payload",
        ],
    );
    // The server's port: where the first datagram (a client's Initial)
    // went.
    let server_port = rows.first().map(|r| r[2].clone()).unwrap_or_default();
    rows.iter()
        .map(|r| Datagram {
            frame: r[0].parse().unwrap(),
            time: r[1].parse().unwrap(),
            from_client: r[2] == server_port,
            bytes: r[3].parse::<u64>().unwrap() - 8,
            long: r[4]
                .split(',')
                .filter(|t| !t.is_empty())
                .map(|t| t.parse().unwrap())
                .collect(),
            short: r[5].split(',').any(|f| f == "0") || short_after_long(&r[8], &r[9]),
            versions: r[6].split(',').map(str::to_string).collect(),
            token: r[7].split(',').any(|n| !n.is_empty() && n != "0"),
        })
        .collect()
}

/// A short-header packet coalesced after the long ones, which tshark
/// 4.0 leaves undissected (it cannot tell its connection ID's length):
/// the bytes after the long packets' lengths begin with a short header's
/// form and fixed bits.
fn short_after_long(lengths: &str, payload_hex: &str) -> bool {
    let taken: usize = lengths
        .split(',')
        .filter_map(|n| n.parse::<usize>().ok())
        .sum();
    if taken == 0 {
        return false;
    }
    payload_hex
        .get(2 * taken..2 * taken + 2)
        .and_then(|b| u8::from_str_radix(b, 16).ok())
        .is_some_and(|b| b & 0xc0 == 0x40)
}

fn quic_connections(doc: &serde_json::Value) -> &Vec<serde_json::Value> {
    doc["quic"]["listed"].as_array().expect("a quic section")
}

fn the<'a>(c: &'a serde_json::Value, kind: &str) -> &'a serde_json::Value {
    let found: Vec<_> = c["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == kind)
        .collect();
    assert_eq!(found.len(), 1, "one {kind}: {c}");
    found[0]
}

fn close(a: f64, b: f64, what: &str) {
    assert!((a - b).abs() < 0.01, "{what}: {a} vs {b}");
}

fn kinds(c: &serde_json::Value) -> Vec<String> {
    c["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap().to_string())
        .collect()
}

/// The capture as rttdoc reads it, its display filters checked by tshark.
fn analyse(name: &str) -> (PathBuf, serde_json::Value, Vec<Datagram>) {
    let path = capture(name);
    let doc = run_rttdoc_json(&path);
    let problems = display_filter_problems(&path, &doc);
    assert!(problems.is_empty(), "{name}: {problems:?}");
    let d = datagrams(&path);
    // The numbers add up: per connection, and for the section.
    let q = &doc["quic"];
    let sum = |v: &serde_json::Value, key: &str| -> f64 {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x[key].as_f64().unwrap())
            .sum()
    };
    for c in quic_connections(&doc) {
        let explained = sum(&c["findings"], "attributed_ms");
        close(
            c["excess_ms"].as_f64().unwrap(),
            explained + c["unexplained_ms"].as_f64().unwrap(),
            "a connection's excess",
        );
    }
    close(
        q["excess_ms"].as_f64().unwrap(),
        sum(&q["causes"], "attributed_ms") + q["unexplained_ms"].as_f64().unwrap(),
        "the section's excess",
    );
    // Each connection's filter shows exactly its datagrams.
    for c in quic_connections(&doc) {
        let filter = c["display_filter"].as_str().unwrap();
        let shown = tshark_fields(&path, &[], filter, &["frame.number"]).len() as u64;
        let counted =
            c["client_datagrams"].as_u64().unwrap() + c["server_datagrams"].as_u64().unwrap();
        assert_eq!(shown, counted, "{name}: {filter}");
    }
    // The server names read out of the Initials are tshark's.
    for c in quic_connections(&doc) {
        assert!(c["server_name"].is_string(), "{name}: a server name: {c}");
    }
    assert_hellos_are_tsharks(&path, &doc);
    (path, doc, d)
}

/// Each QUIC connection's server name and ALPN list, read out of its
/// Initials, are those of a ClientHello tshark reads in the capture.
fn assert_hellos_are_tsharks(path: &Path, doc: &serde_json::Value) {
    let hellos = tshark_fields(
        path,
        &[],
        "tls.handshake.type == 1",
        &[
            "tls.handshake.extensions_server_name",
            "tls.handshake.extensions_alpn_str",
        ],
    );
    for c in quic_connections(doc) {
        let name = c["server_name"].as_str().unwrap_or_default();
        let alpn: Vec<&str> = c["alpn"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        assert!(
            hellos
                .iter()
                .any(|h| h[0] == name && h[1] == alpn.join(",")),
            "{}: {name} {alpn:?} not among tshark's {hellos:?}",
            path.display()
        );
    }
}

/// A test's capture read (tshark present), its first QUIC connection's
/// handshake row checked; None when tshark is missing (the test skips).
fn first_connection(test: &str, name: &str) -> Option<(serde_json::Value, Vec<Datagram>)> {
    if !require(test, &["tshark"], false) {
        return None;
    }
    let (_, doc, d) = analyse(name);
    check_handshake_row(&quic_connections(&doc)[0], &d);
    Some((doc, d))
}

/// A test's capture read (tshark present), its QUIC connections' names
/// checked, for a capture whose handshake does not finish.
fn first_connection_unfinished(
    test: &str,
    name: &str,
) -> Option<(serde_json::Value, Vec<Datagram>)> {
    if !require(test, &["tshark"], false) {
        return None;
    }
    let (_, doc, d) = analyse(name);
    Some((doc, d))
}

/// The handshake row ends at the client's first short-header packet.
fn check_handshake_row(c: &serde_json::Value, d: &[Datagram]) {
    let first = d.iter().find(|x| x.from_client).unwrap();
    let done = d
        .iter()
        .find(|x| x.from_client && x.short && x.frame >= c["first_frame"].as_u64().unwrap())
        .unwrap();
    let row = &c["ledger"][0];
    assert_eq!(row["phase"], "quic_handshake");
    if c["number"] == 0 {
        assert_eq!(row["start_frame"], first.frame);
    }
    assert_eq!(row["end_frame"], done.frame);
}

#[test]
fn a_retry_costs_the_round_trip_to_the_initial_with_its_token() {
    let Some((doc, d)) = first_connection(
        "a_retry_costs_the_round_trip_to_the_initial_with_its_token",
        "retry",
    ) else {
        return;
    };
    let c = &quic_connections(&doc)[0];
    let retry = d
        .iter()
        .find(|x| !x.from_client && x.long.contains(&3))
        .unwrap();
    let asked = d
        .iter()
        .rfind(|x| x.from_client && x.frame < retry.frame && x.long.contains(&0))
        .unwrap();
    let again = d
        .iter()
        .find(|x| x.from_client && x.frame > retry.frame && x.token)
        .unwrap();
    let x = the(c, "quic_retry");
    assert_eq!(frames_cited(x), vec![asked.frame, retry.frame, again.frame]);
    close(
        x["cost_ms"].as_f64().unwrap(),
        (again.time - asked.time) * 1e3,
        "cost",
    );
    // A round trip of the 40 ms path.
    let cost = x["cost_ms"].as_f64().unwrap();
    assert!((40.0..50.0).contains(&cost), "{cost}");
    assert_eq!(kinds(c), vec!["quic_retry"]);
    assert_eq!(c["retry"], true);
}

#[test]
fn a_version_the_server_does_not_speak_costs_a_round_trip() {
    let Some((doc, d)) = first_connection(
        "a_version_the_server_does_not_speak_costs_a_round_trip",
        "version-negotiation",
    ) else {
        return;
    };
    let c = &quic_connections(&doc)[0];
    let vn = d
        .iter()
        .find(|x| !x.from_client && x.versions[0] == "0x00000000")
        .unwrap();
    let first = d.iter().find(|x| x.from_client).unwrap();
    assert_eq!(first.versions[0], "0x6b3343cf", "the client begins in v2");
    let again = d
        .iter()
        .find(|x| x.from_client && x.frame > vn.frame && x.versions[0] == "0x00000001")
        .unwrap();
    let x = the(c, "quic_version_negotiation");
    assert_eq!(frames_cited(x), vec![first.frame, vn.frame, again.frame]);
    close(
        x["cost_ms"].as_f64().unwrap(),
        (again.time - first.time) * 1e3,
        "cost",
    );
    assert_eq!(c["version"], "1");
    assert!(x["explanation"].as_str().unwrap().contains("version 2"));
    assert_eq!(kinds(c), vec!["quic_version_negotiation"]);
}

#[test]
fn a_lost_client_hello_costs_the_probe_timeout() {
    let Some((doc, d)) = first_connection(
        "a_lost_client_hello_costs_the_probe_timeout",
        "lost-initial",
    ) else {
        return;
    };
    let c = &quic_connections(&doc)[0];
    let answer = d.iter().find(|x| !x.from_client).unwrap();
    let sent: Vec<&Datagram> = d
        .iter()
        .filter(|x| x.from_client && x.frame < answer.frame)
        .collect();
    // The last of the first flight, and the first of the resent one.
    let gap = sent
        .windows(2)
        .find(|w| w[1].time - w[0].time >= 0.1)
        .expect("a resend after the probe timeout");
    let x = the(c, "quic_initial_lost");
    assert_eq!(frames_cited(x), vec![gap[0].frame, gap[1].frame]);
    close(
        x["cost_ms"].as_f64().unwrap(),
        (gap[1].time - gap[0].time) * 1e3,
        "cost",
    );
    // quic-go's first probe timeout: twice its 100 ms initial RTT.
    let cost = x["cost_ms"].as_f64().unwrap();
    assert!((190.0..260.0).contains(&cost), "{cost}");
    assert_eq!(x["waits"][0].get("release_frame"), None, "a timer's wait");
}

#[test]
fn a_chain_over_three_times_the_client_hello_waits_for_the_clients_ack() {
    let Some((doc, d)) = first_connection(
        "a_chain_over_three_times_the_client_hello_waits_for_the_clients_ack",
        "amplification",
    ) else {
        return;
    };
    let c = &quic_connections(&doc)[0];
    let server_first = d
        .iter()
        .position(|x| !x.from_client && x.long.contains(&0))
        .unwrap();
    let client_bytes: u64 = d[..server_first]
        .iter()
        .filter(|x| x.from_client)
        .map(|x| x.bytes)
        .sum();
    let ack = server_first
        + d[server_first..]
            .iter()
            .position(|x| x.from_client)
            .unwrap();
    let sent: u64 = d[server_first..ack].iter().map(|x| x.bytes).sum();
    assert!(sent <= 3 * client_bytes && sent + d[ack + 1].bytes > 3 * client_bytes);
    let x = the(c, "quic_amplification_limit");
    assert_eq!(
        frames_cited(x),
        vec![
            d[server_first].frame,
            d[ack - 1].frame,
            d[ack].frame,
            d[ack + 1].frame
        ]
    );
    close(
        x["cost_ms"].as_f64().unwrap(),
        (d[ack + 1].time - d[ack - 1].time) * 1e3,
        "the pause",
    );
    assert_eq!(kinds(c), vec!["quic_amplification_limit"]);
    let fix = x["fix"].as_str().unwrap();
    assert!(fix.contains("certificate"), "{fix}");
}

#[test]
fn clean_handshakes_have_no_quic_finding() {
    if !require("clean_handshakes_have_no_quic_finding", &["tshark"], false) {
        return;
    }
    for name in ["plain", "zero-rtt", "chromium-h3"] {
        let (_, doc, d) = analyse(name);
        let conns = quic_connections(&doc);
        let expected = if name == "zero-rtt" { 2 } else { 1 };
        assert_eq!(conns.len(), expected, "{name}");
        for c in conns {
            assert!(kinds(c).is_empty(), "{name}: {c}");
            check_handshake_row(c, &d);
            // One round trip of the 40 ms path, the hosts' work beside it.
            let rtts = c["ledger"][0]["rtts"].as_f64().unwrap();
            assert!((0.9..1.2).contains(&rtts), "{name}: {rtts}");
        }
        if name == "zero-rtt" {
            assert_eq!(conns[0]["zero_rtt"], false);
            assert_eq!(
                conns[1]["zero_rtt"], true,
                "the resumed connection's request in 0-RTT"
            );
            let early = d
                .iter()
                .find(|x| x.long.contains(&1))
                .expect("a 0-RTT packet");
            assert!(early.frame >= conns[1]["first_frame"].as_u64().unwrap());
        }
    }
}

#[test]
fn the_terminal_names_quic_connections_and_their_causes() {
    let text = run_rttdoc_text(&capture("retry"));
    assert!(text.contains("QUIC: 1 connection over UDP"), "{text}");
    assert!(text.contains("quic_retry"), "{text}");
    // JSON Lines: one line per QUIC connection, then their totals.
    let out = std::process::Command::new(rttdoc_bin())
        .args(["analyze", "--format", "jsonl"])
        .arg(capture("zero-rtt"))
        .output()
        .unwrap();
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let quic: Vec<_> = lines
        .iter()
        .filter(|l| l["type"] == "quic_connection")
        .collect();
    assert_eq!(quic.len(), 2);
    let totals = lines.iter().find(|l| l["type"] == "quic").unwrap();
    assert_eq!(totals["connections"], 2);
}

/// Other stacks' QUIC (nDPI's test captures, tests/data/other-projects):
/// the server names and ALPN lists read out of their Initials are
/// tshark's, whatever the draft and however the ClientHello was split;
/// draft-29's Retry and draft-28's Version Negotiation are found; a
/// capture of clients' Initials only claims no loss.
#[test]
fn other_stacks_quic_reads_as_tshark_reads_it() {
    if !require(
        "other_stacks_quic_reads_as_tshark_reads_it",
        &["tshark"],
        false,
    ) {
        return;
    }
    let dir = data_dir().join("other-projects");
    for (file, kind) in [
        ("ndpi-quic-29.pcap", Some("quic_retry")),
        (
            "ndpi-quic-28-first40.pcap",
            Some("quic_version_negotiation"),
        ),
        ("ndpi-quic-scattered-hellos.pcapng", None),
        ("ndpi-quic-hello-in-two-packets.pcapng", None),
        ("ndpi-doq-adguard.pcapng", Some("quic_retry")),
    ] {
        let path = dir.join(file);
        let doc = run_rttdoc_json(&path);
        let problems = display_filter_problems(&path, &doc);
        assert!(problems.is_empty(), "{file}: {problems:?}");
        let conns = quic_connections(&doc);
        assert!(!conns.is_empty(), "{file}");
        assert_hellos_are_tsharks(&path, &doc);
        let all: Vec<String> = conns.iter().flat_map(kinds).collect();
        match kind {
            Some(k) => {
                assert_eq!(all, vec![k.to_string()], "{file}");
                let x = the(&conns[0], k);
                assert_eq!(frames_cited(x), vec![1, 2, 3], "{file}");
            }
            None => assert!(all.is_empty(), "{file}: {all:?}"),
        }
    }
}

/// The Prometheus text counts QUIC connections and their findings.
#[test]
fn prometheus_text_counts_quic_connections_and_findings() {
    let out = std::process::Command::new(rttdoc_bin())
        .args(["analyze", "--format", "prometheus"])
        .arg(capture("amplification"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let value = |prefix: &str| -> f64 {
        text.lines()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix} in {text}"))
            .rsplit(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    assert_eq!(
        value(r#"rttdoc_quic_connections_total{vantage="client",quic_version="1",server="other"}"#),
        1.0
    );
    assert_eq!(
        value(
            r#"rttdoc_findings_total{kind="quic_amplification_limit",vantage="client",server="other"}"#
        ),
        1.0
    );
    let lost = value(
        r#"rttdoc_time_lost_seconds_total{kind="quic_amplification_limit",vantage="client",server="other"}"#,
    );
    assert!((0.035..0.05).contains(&lost), "{lost}");
    assert_eq!(
        value(
            r#"rttdoc_quic_handshake_round_trips_count{vantage="client",quic_version="1",server="other"}"#
        ),
        1.0
    );
}

/// `--quic N` shows one QUIC connection: its row, its findings worded
/// with their Wireshark filters; as JSON, the connection's object.
#[test]
fn one_quic_connection_in_detail() {
    let run = |extra: &[&str]| {
        let out = std::process::Command::new(rttdoc_bin())
            .arg("analyze")
            .arg(capture("version-negotiation"))
            .args(extra)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, text, _) = run(&["--quic", "0"]);
    assert_eq!(code, Some(0));
    assert!(text.contains("QUIC connection 0:"), "{text}");
    assert!(text.contains("quic.rttdoc.test"), "{text}");
    assert!(text.contains("quic_version_negotiation"), "{text}");
    assert!(text.contains("Wireshark: frame.number in {"), "{text}");
    let (_, json, _) = run(&["--quic", "0", "--json"]);
    let c: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(c["number"], 0);
    assert_eq!(c["findings"][0]["kind"], "quic_version_negotiation");
    assert!(!c["findings"][0]["explanation"].as_str().unwrap().is_empty());
    let (code, _, err) = run(&["--quic", "7"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("no QUIC connection 7"), "{err}");
}

/// Chromium, its whole first flight (a ClientHello of two datagrams)
/// lost: its probe timeout resends the first datagram only; the server
/// ACKs it, and the second follows the ACK, a round trip later.
#[test]
fn chromiums_lost_client_hello_costs_its_probe_timeout_and_a_round_trip() {
    let Some((doc, d)) = first_connection(
        "chromiums_lost_client_hello_costs_its_probe_timeout_and_a_round_trip",
        "chromium-lost-initial",
    ) else {
        return;
    };
    let c = &quic_connections(&doc)[0];
    let a = d.iter().position(|x| !x.from_client).unwrap();
    let before: Vec<&Datagram> = d[..a].iter().collect();
    let gap = before
        .windows(2)
        .find(|w| w[1].time - w[0].time >= 0.1)
        .expect("a resend after the probe timeout");
    assert!(!d[a].long.contains(&2), "the server's first answer: an ACK");
    let rest = d[a..].iter().find(|x| x.from_client).unwrap();
    let x = the(c, "quic_initial_lost");
    assert_eq!(
        frames_cited(x),
        vec![gap[0].frame, gap[1].frame, rest.frame]
    );
    assert_eq!(x["waits"][1]["release_frame"], d[a].frame);
    close(
        x["cost_ms"].as_f64().unwrap(),
        (rest.time - gap[0].time) * 1e3,
        "cost",
    );
    // Chromium's first probe timeout: 300 ms.
    let timeout = x["waits"][0]["ms"].as_f64().unwrap();
    assert!((280.0..330.0).contains(&timeout), "{timeout}");
    // The two waits explain the handshake's excess.
    assert!(c["unexplained_ms"].as_f64().unwrap() < 5.0, "{c}");
}

/// A capture cut at 100 bytes a frame (tcpdump -s 100) keeps each
/// datagram's first packet header: the same findings, on the same
/// frames, as the whole capture's.
#[test]
fn a_snap_length_cut_keeps_the_findings() {
    if !require("a_snap_length_cut_keeps_the_findings", &["editcap"], false) {
        return;
    }
    let tmp = TempDir::new("quic-snaplen");
    for name in [
        "retry",
        "version-negotiation",
        "lost-initial",
        "amplification",
        "chromium-lost-initial",
    ] {
        let cut = tmp.path(&format!("{name}.pcap"));
        let st = std::process::Command::new("editcap")
            .args(["-s", "100"])
            .arg(capture(name))
            .arg(&cut)
            .status()
            .unwrap();
        assert!(st.success());
        let whole = run_rttdoc_json(&capture(name));
        let part = run_rttdoc_json(&cut);
        let findings = |doc: &serde_json::Value| -> Vec<(String, Vec<u64>)> {
            quic_connections(doc)
                .iter()
                .flat_map(|c| c["findings"].as_array().unwrap().iter())
                .map(|f| (f["kind"].as_str().unwrap().to_string(), frames_cited(f)))
                .collect()
        };
        assert!(!findings(&whole).is_empty(), "{name}");
        assert_eq!(findings(&part), findings(&whole), "{name}");
        assert_eq!(
            quic_connections(&part)[0]["server_name"],
            serde_json::Value::Null,
            "{name}: the ClientHello was cut"
        );
    }
}

/// `rttdoc monitor` counts QUIC connections as they finish: on a replay,
/// /metrics shows the connection and its finding.
#[test]
fn monitor_counts_quic_connections_on_a_replay() {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    struct Kill(std::process::Child);
    impl Drop for Kill {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let _child = Kill(
        std::process::Command::new(rttdoc_bin())
            .args([
                "monitor",
                "--speed",
                "0",
                "--listen",
                &addr.to_string(),
                "--replay",
            ])
            .arg(capture("retry"))
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let get = || -> Option<String> {
        let mut s = std::net::TcpStream::connect(addr).ok()?;
        write!(s, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n").ok()?;
        let mut resp = String::new();
        s.read_to_string(&mut resp).ok()?;
        Some(resp)
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let text = loop {
        if let Some(t) = get() {
            if t.contains(r#"rttdoc_quic_connections_total{vantage="client",quic_version="1",server="other"} 1"#) {
                break t;
            }
        }
        assert!(
            std::time::Instant::now() < deadline,
            "monitor never counted the QUIC connection"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    assert!(
        text.contains(
            r#"rttdoc_findings_total{kind="quic_retry",vantage="client",server="other"} 1"#
        ),
        "{text}"
    );
}

/// Chromium with HTTP/3 learnt from Alt-Svc, UDP to the server dropped:
/// its QUIC Initials go unanswered and it loads the page over TCP, whose
/// SYN ends the wait for QUIC (the probes after it were nobody's wait).
/// Control: the same with UDP through, answered in one round trip.
#[test]
fn a_browser_that_fell_back_to_tcp_waited_for_quic_until_its_syn() {
    let Some((doc, d)) = first_connection_unfinished(
        "a_browser_that_fell_back_to_tcp_waited_for_quic_until_its_syn",
        "chromium-udp-blocked",
    ) else {
        return;
    };
    let path = capture("chromium-udp-blocked");
    let syn = &tshark_fields(
        &path,
        &[],
        "tcp.flags.syn == 1 && tcp.flags.ack == 0",
        &["frame.number", "frame.time_relative", "tcp.stream"],
    )[0];
    let (syn_frame, syn_time): (u64, f64) = (syn[0].parse().unwrap(), syn[1].parse().unwrap());
    assert!(d.iter().all(|x| x.from_client), "the server sent no UDP");
    let last = d
        .iter()
        .rfind(|x| x.frame < syn_frame)
        .expect("an Initial before the SYN");
    let c = &quic_connections(&doc)[0];
    let x = the(c, "quic_initial_lost");
    assert_eq!(frames_cited(x), vec![last.frame, syn_frame]);
    close(
        x["cost_ms"].as_f64().unwrap(),
        (syn_time - last.time) * 1e3,
        "until the SYN",
    );
    assert!(x["explanation"]
        .as_str()
        .unwrap()
        .contains(&format!("stream {}", syn[2])));
    // Control: UDP through, QUIC answered, nothing found.
    let doc = run_rttdoc_json(&capture("chromium-alt-svc"));
    let c = &quic_connections(&doc)[0];
    assert!(kinds(c).is_empty(), "{c}");
    let rtts = c["ledger"][0]["rtts"].as_f64().unwrap();
    assert!((0.9..1.2).contains(&rtts), "{rtts}");
}

/// A DNS-over-QUIC client sends no 1-RTT packet until it asks, 0.4 s
/// after its Handshake packets: the handshake ended at its last Handshake
/// packet, not at its query.
#[test]
fn a_client_with_nothing_to_send_ends_its_handshake_at_its_finished() {
    if !require(
        "a_client_with_nothing_to_send_ends_its_handshake_at_its_finished",
        &["tshark"],
        false,
    ) {
        return;
    }
    let path = data_dir().join("other-projects/ndpi-doq-adguard.pcapng");
    let d = datagrams(&path);
    let doc = run_rttdoc_json(&path);
    let c = &quic_connections(&doc)[0];
    let short = d.iter().find(|x| x.from_client && x.short).unwrap();
    let handshake = d
        .iter()
        .rfind(|x| x.from_client && x.frame < short.frame && x.long.contains(&2))
        .unwrap();
    assert!(short.time - handshake.time > 0.2, "the client was idle");
    assert_eq!(c["ledger"][0]["end_frame"], handshake.frame);
    // The Retry's round trip is most of what is beyond the ideal.
    assert!(c["unexplained_ms"].as_f64().unwrap() < 10.0, "{c}");
}
