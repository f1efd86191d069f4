//! The name lookup before a connection: `name_lookup`, `dns_query_lost`
//! and `dns_search_list`.
//!
//! Producer: scripts/dns-captures.sh: curl (glibc's resolver, A and AAAA
//! together from one socket) asks dnsmasq, then connects to nginx, over
//! real Linux UDP and TCP, 20 ms each way, captured on the client's
//! interface. `search-list`: a Kubernetes pod's resolv.conf (three search
//! domains, ndots:5), each tried first and answered NXDOMAIN.
//! `lost-query`: the server's namespace drops the second query (the
//! AAAA), glibc asks again after its 2 s timer. Controls: `plain` (one
//! A, one AAAA, answered at once) and `search-hit` (the first search
//! domain resolves). `address_fallback`: `v6-blackhole` (the router drops
//! TCP over IPv6, curl's Happy Eyeballs tries IPv4 200 ms later),
//! `dead-address` (the first of two A records dropped), control
//! `v6-works`. Committed under tests/data/dns, re-made live when
//! root. Every expectation is read from the capture by tshark.

mod common;

use std::path::Path;
use std::process::Command;

use common::*;

/// One DNS message as tshark reads it.
#[derive(Debug, Clone)]
struct Dns {
    frame: u64,
    time: f64,
    id: String,
    response: bool,
    name: String,
    qtype: String,
    rcode: String,
    has_a: bool,
}

fn messages(capture: &Path) -> Vec<Dns> {
    tshark_fields(
        capture,
        &[],
        "dns",
        &[
            "frame.number",
            "frame.time_relative",
            "dns.id",
            "dns.flags.response",
            "dns.qry.name",
            "dns.qry.type",
            "dns.flags.rcode",
            "dns.a",
        ],
    )
    .iter()
    .map(|r| Dns {
        frame: r[0].parse().unwrap(),
        time: r[1].parse().unwrap(),
        id: r[2].clone(),
        response: r[3] == "1" || r[3] == "True",
        name: r[4].clone(),
        qtype: r[5].clone(),
        rcode: r[6].clone(),
        has_a: !r[7].is_empty(),
    })
    .collect()
}

fn syn_frame(capture: &Path) -> (u64, f64) {
    let rows = tshark_fields(
        capture,
        &[],
        "tcp.flags.syn == 1 && tcp.flags.ack == 0",
        &["frame.number", "frame.time_relative"],
    );
    (rows[0][0].parse().unwrap(), rows[0][1].parse().unwrap())
}

fn finding<'a>(c: &'a serde_json::Value, kind: &str) -> Option<&'a serde_json::Value> {
    c["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == kind)
}

fn close(a: f64, b: f64, what: &str) {
    assert!((a - b).abs() < 0.01, "{what}: {a} vs {b}");
}

/// The TCP connections' first SYNs as tshark reads them: (stream, frame,
/// time, destination address, SYN-ACK seen).
fn connections(capture: &Path) -> Vec<(u64, u64, f64, String, bool)> {
    let syns = tshark_fields(
        capture,
        &[],
        "tcp.flags.syn == 1 && tcp.flags.ack == 0",
        &[
            "tcp.stream",
            "frame.number",
            "frame.time_relative",
            "ip.dst",
            "ipv6.dst",
        ],
    );
    let accepted: Vec<String> = tshark_fields(
        capture,
        &[],
        "tcp.flags.syn == 1 && tcp.flags.ack == 1",
        &["tcp.stream"],
    )
    .into_iter()
    .map(|r| r[0].clone())
    .collect();
    let mut out: Vec<(u64, u64, f64, String, bool)> = Vec::new();
    for r in syns {
        let stream: u64 = r[0].parse().unwrap();
        if out.iter().any(|c| c.0 == stream) {
            continue;
        }
        let to = if r[3].is_empty() {
            r[4].clone()
        } else {
            r[3].clone()
        };
        out.push((
            stream,
            r[1].parse().unwrap(),
            r[2].parse().unwrap(),
            to,
            accepted.contains(&r[0]),
        ));
    }
    out
}

/// Addresses tried first: a connection to another of the name's
/// addresses, never accepted, then the one that was.
fn check_fallback(dir: &Path) {
    for (name, falls_back) in [
        ("v6-blackhole", true),
        ("dead-address", true),
        ("v6-works", false),
    ] {
        let capture = dir.join(format!("{name}.pcap.gz"));
        assert_agrees_with_tshark(&capture, &[]);
        let doc = run_rttdoc_json(&capture);
        let problems = display_filter_problems(&capture, &doc);
        assert!(problems.is_empty(), "{name}: {problems:?}");
        let conns = connections(&capture);
        let won = conns.iter().find(|c| c.4).expect("a connection accepted");
        let report = doc["connections"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["stream"] == won.0)
            .unwrap();
        assert_eq!(
            report["name_lookup"]["name"],
            name_of(name),
            "{name}: {report}"
        );
        let x = finding(report, "address_fallback");
        if !falls_back {
            assert_eq!(conns.len(), 1, "{name}: IPv6 answered at once");
            assert!(x.is_none(), "{name}: {x:?}");
            continue;
        }
        let lost: Vec<_> = conns.iter().filter(|c| !c.4).collect();
        assert_eq!(lost.len(), 1, "{name}: {conns:?}");
        let lost = lost[0];
        assert!(lost.1 < won.1);
        let x = x.unwrap_or_else(|| panic!("{name}: {report}"));
        let frames = frames_cited(x);
        assert_eq!(frames, vec![lost.1, won.1], "{name}");
        close(
            x["cost_ms"].as_f64().unwrap(),
            (won.2 - lost.2) * 1e3,
            "the first SYN to the one that connected",
        );
        assert_eq!(x["phase"], serde_json::Value::Null);
        let tried = &report["name_lookup"]["failed_attempts"][0];
        assert_eq!(tried["stream"], lost.0);
        assert_eq!(tried["address"], lost.3.as_str());
        let fix = x["fix"].as_str().unwrap();
        if name == "v6-blackhole" {
            // curl's Happy Eyeballs timer: 200 ms.
            let cost = x["cost_ms"].as_f64().unwrap();
            assert!((195.0..260.0).contains(&cost), "{cost}");
            assert!(lost.3.contains(':'), "IPv6 first: {lost:?}");
            assert!(fix.contains("AAAA"), "{fix}");
        } else {
            assert!(fix.contains(&format!("Take {}", lost.3)), "{fix}");
        }
    }
}

fn name_of(capture: &str) -> &'static str {
    match capture {
        "dead-address" => "two.rttdoc.test",
        _ => "dual.rttdoc.test",
    }
}

fn check(dir: &Path) {
    check_fallback(dir);
    for name in ["search-list", "lost-query", "plain", "search-hit"] {
        let capture = dir.join(format!("{name}.pcap.gz"));
        assert_agrees_with_tshark(&capture, &[]);
        let doc = run_rttdoc_json(&capture);
        let problems = display_filter_problems(&capture, &doc);
        assert!(problems.is_empty(), "{name}: {problems:?}");
        let conns = doc["connections"].as_array().unwrap();
        assert_eq!(conns.len(), 1, "{name}");
        let c = &conns[0];
        let dns = messages(&capture);
        // Every DNS datagram counted (the capture's only UDP).
        assert_eq!(doc["capture"]["dns_messages"], dns.len(), "{name}");
        let (syn, syn_time) = syn_frame(&capture);
        let queries: Vec<&Dns> = dns.iter().filter(|m| !m.response).collect();
        let answers: Vec<&Dns> = dns.iter().filter(|m| m.response).collect();
        // The lookup: every query before the SYN, its answers.
        let l = &c["name_lookup"];
        assert_eq!(l["name"], "api.rttdoc.test", "{name}: {c}");
        assert_eq!(l["first_frame"], queries[0].frame, "{name}");
        let last = answers.iter().rfind(|a| a.frame < syn).unwrap();
        assert_eq!(l["last_frame"], last.frame, "{name}");
        close(
            l["ms"].as_f64().unwrap(),
            (last.time - queries[0].time) * 1e3,
            name,
        );
        close(
            l["syn_after_ms"].as_f64().unwrap(),
            (syn_time - last.time) * 1e3,
            name,
        );
        assert_eq!(l["queries"], queries.len(), "{name}");
        // The newest answer naming the server before the SYN.
        let answer = answers
            .iter()
            .rfind(|a| a.has_a && a.name == "api.rttdoc.test" && a.frame < syn)
            .unwrap();
        assert_eq!(l["answer_frame"], answer.frame, "{name}");
        // Names asked before the name that resolved.
        let first_of_name = queries
            .iter()
            .find(|q| q.name == "api.rttdoc.test")
            .unwrap();
        let mut tried: Vec<&str> = Vec::new();
        for q in queries.iter().filter(|q| q.frame < first_of_name.frame) {
            if !tried.contains(&q.name.as_str()) {
                tried.push(&q.name);
            }
        }
        let reported: Vec<&str> = l["names_tried"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap())
            .collect();
        assert_eq!(reported, tried, "{name}");
        let search = finding(c, "dns_search_list");
        let lost = finding(c, "dns_query_lost");
        match name {
            "search-list" => {
                assert_eq!(tried.len(), 3, "{name}: ndots:5, three search domains");
                let x = search.unwrap_or_else(|| panic!("{name}: {c}"));
                assert!(lost.is_none(), "{name}: {lost:?}");
                close(
                    x["cost_ms"].as_f64().unwrap(),
                    (first_of_name.time - queries[0].time) * 1e3,
                    "first query to the name's",
                );
                // Each name's wait ends at the next name's first query,
                // released by an NXDOMAIN for it.
                for w in x["waits"].as_array().unwrap() {
                    let rel = w["release_frame"].as_u64().unwrap();
                    let a = answers.iter().find(|a| a.frame == rel).unwrap();
                    assert_eq!(a.rcode, "3", "{name}: {w}");
                    assert!(w["from_frame"].as_u64().unwrap() < rel);
                    assert!(rel < w["to_frame"].as_u64().unwrap());
                }
                assert_eq!(x["phase"], serde_json::Value::Null);
                assert_eq!(x["attributed_ms"], 0.0);
                let fix = x["fix"].as_str().unwrap();
                assert!(
                    fix.contains("api.rttdoc.test.") && fix.contains("ndots"),
                    "{fix}"
                );
            }
            "lost-query" => {
                let x = lost.unwrap_or_else(|| panic!("{name}: {c}"));
                assert!(search.is_none(), "{name}: {search:?}");
                // The lost query: asked again (same ID and type) with no
                // answer between.
                let (q, resend) = queries
                    .iter()
                    .find_map(|q| {
                        let resend = queries
                            .iter()
                            .find(|r| r.frame > q.frame && r.id == q.id && r.qtype == q.qtype)?;
                        let answered = answers
                            .iter()
                            .any(|a| a.id == q.id && a.frame > q.frame && a.frame < resend.frame);
                        (!answered).then_some((q, resend))
                    })
                    .expect("a lost query");
                assert_eq!(q.qtype, "28", "the AAAA of the pair was dropped");
                close(
                    x["cost_ms"].as_f64().unwrap(),
                    (resend.time - q.time) * 1e3,
                    "the lost query to its resend",
                );
                // glibc's timer: timeout:2.
                assert!(x["cost_ms"].as_f64().unwrap() >= 2000.0, "{x}");
                let frames = frames_cited(x);
                assert!(frames.contains(&q.frame) && frames.contains(&resend.frame));
                assert!(frames.contains(&syn), "{frames:?}");
                assert_eq!(l["unanswered"], 1, "{name}");
                let fix = x["fix"].as_str().unwrap();
                assert!(
                    fix.contains("single-request-reopen"),
                    "a pair's loss: {fix}"
                );
                let text = run_rttdoc_text(&capture);
                assert!(text.contains("went to name lookups"), "{text}");
            }
            _ => {
                assert!(search.is_none() && lost.is_none(), "{name}: {c}");
                assert_eq!(l["unanswered"], 0, "{name}");
            }
        }
    }
}

#[test]
fn committed_name_lookups_before_the_syn() {
    if !require("committed_name_lookups_before_the_syn", &["tshark"], false) {
        return;
    }
    check(&data_dir().join("dns"));
}

#[test]
fn live_name_lookups_before_the_syn() {
    if !require(
        "live_name_lookups_before_the_syn",
        &[
            "tshark", "ip", "tcpdump", "nginx", "curl", "python3", "dnsmasq", "nft",
        ],
        true,
    ) {
        return;
    }
    let dir = TempDir::new("dns");
    run_capture_script("dns-captures.sh", &[dir.0.as_os_str()]);
    check(&dir.0);
}

/// The streams `analyze --json` shows with these options.
fn streams_shown(capture: &Path, options: &[&str]) -> Vec<u64> {
    let doc = run_rttdoc_json_with(capture, options);
    doc["connections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["stream"].as_u64().unwrap())
        .collect()
}

#[test]
fn host_takes_a_name_looked_up_or_asked_for_in_tls() {
    let blackhole = data_dir().join("dns/v6-blackhole.pcap.gz");
    // The IPv4 connection is the one the lookup led to; the IPv6 attempt
    // (stream 0) has no name of its own.
    assert_eq!(
        streams_shown(&blackhole, &["--host", "dual.rttdoc.test"]),
        vec![1]
    );
    assert_eq!(
        streams_shown(&blackhole, &["--host", "DUAL.rttdoc.test."]),
        vec![1]
    );
    assert_eq!(
        streams_shown(&blackhole, &["--host", "2001:db8:81:2::1"]),
        vec![0]
    );
    assert_eq!(
        streams_shown(
            &blackhole,
            &["--host", "dual.rttdoc.test", "--host", "2001:db8:81:2::1"]
        ),
        vec![0, 1]
    );
    assert!(streams_shown(&blackhole, &["--host", "nowhere.rttdoc.test"]).is_empty());
    // TLS's server name.
    let grpc = data_dir().join("grpc/grpc-go-tls.pcap.gz");
    assert_eq!(streams_shown(&grpc, &["--host", "rttdoc.test"]), vec![0]);
    // Neither an address nor a name: refused, and said why.
    let out = Command::new(rttdoc_bin())
        .args(["analyze", "--host", "not a name"])
        .arg(&grpc)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("neither an IP address nor a host name"),
        "{stderr}"
    );
}
