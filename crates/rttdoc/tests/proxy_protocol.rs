//! A backend behind a load balancer that speaks the PROXY protocol: the
//! balancer's header is the client's first bytes, names the client it
//! carries, and answers nothing (proxy_protocol.rs in rttdoc-wire, its
//! reading in connection.rs). Captures by
//! scripts/proxy-protocol-captures.sh (tests/data/proxy-protocol): real
//! HAProxy (`send-proxy`, `send-proxy-v2`, mode tcp) in front of nginx
//! (`listen ... proxy_protocol`), curl and a python client 40 ms from the
//! balancer, captured on the backend; and PcapPlusPlus' MySQL capture
//! behind a balancer. Every header is checked against tshark's PROXY
//! dissector.

mod common;

use common::*;
use serde_json::Value;
use std::path::Path;

/// tshark's PROXY headers: frame -> (client, destination), as
/// "ip:port". (Its heuristic dissector runs first only when asked: a
/// port's own dissector, HTTP or MySQL, would take the segment.)
fn tshark_headers(capture: &Path) -> Vec<(u64, String, String)> {
    tshark_fields(
        capture,
        &["-o", "tcp.try_heuristic_first:TRUE"],
        "proxy",
        &[
            "frame.number",
            "proxy.src.ipv4",
            "proxy.srcport",
            "proxy.dst.ipv4",
            "proxy.dstport",
        ],
    )
    .into_iter()
    .map(|r| {
        (
            r[0].parse().unwrap(),
            format!("{}:{}", r[1], r[2]),
            format!("{}:{}", r[3], r[4]),
        )
    })
    .collect()
}

fn endpoint(v: &Value) -> String {
    format!("{}:{}", v["ip"].as_str().unwrap(), v["port"])
}

/// Every connection of `capture` opens with a header, read as tshark
/// reads it; returns the document.
fn headers_agree(capture: &Path) -> Value {
    let doc = run_rttdoc_json(capture);
    let expected = tshark_headers(capture);
    let mut seen = Vec::new();
    for c in doc["connections"].as_array().unwrap() {
        let p = &c["proxy_protocol"];
        if p.is_null() {
            continue;
        }
        seen.push((
            p["frame"].as_u64().unwrap(),
            endpoint(&p["client"]),
            endpoint(&p["destination"]),
        ));
    }
    assert!(
        !expected.is_empty(),
        "{}: tshark sees no header",
        capture.display()
    );
    assert_eq!(seen, expected, "{}", capture.display());
    doc
}

/// The frames of a display filter.
fn frames(capture: &Path, filter: &str) -> Vec<u64> {
    tshark_fields(capture, &[], filter, &["frame.number"])
        .iter()
        .map(|r| r[0].parse().unwrap())
        .collect()
}

fn kinds_of(c: &Value) -> Vec<&str> {
    kinds(&c["findings"])
}

fn tls_row(c: &Value) -> &Value {
    c["ledger"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["phase"] == "tls_handshake")
        .unwrap_or_else(|| panic!("no TLS handshake row: {}", c["ledger"]))
}

/// The most excess a connection behind the balancer may show when the
/// balancer's client's time (40 ms away: a round trip per answer) is not
/// counted: a quarter of one such round trip.
const CLIENT_NOT_COUNTED_MS: f64 = 10.0;

fn check(dir: &Path) {
    let at = |name: &str| dir.join(format!("{name}.pcap.gz"));

    // TLS after the header: the handshake is read from the ClientHello,
    // and the client's answers, which wait for the balancer's own client
    // 40 ms away, are that client's time: no excess, no think time.
    for (name, version, legs) in [("v1-tls", "TLS 1.3", 1), ("v2-tls12", "TLS 1.2", 1)] {
        let capture = at(name);
        let doc = headers_agree(&capture);
        let hellos = frames(&capture, "tls.handshake.type == 1");
        for c in doc["connections"].as_array().unwrap() {
            if c["proxy_protocol"].is_null() {
                continue;
            }
            assert_eq!(c["tls"]["version"], version, "{name}: {}", c["tls"]);
            let row = tls_row(c);
            assert!(
                hellos.contains(&row["start_frame"].as_u64().unwrap()),
                "{name}: {row} vs ClientHellos {hellos:?}"
            );
            assert!(
                row["ideal_basis"]
                    .as_str()
                    .unwrap()
                    .contains(&format!("({legs} answer(s)")),
                "{name}: {row}"
            );
            // (Counted, the balancer's client would be 40 ms of excess:
            // a quarter of that tells the two apart, and leaves a loaded
            // machine its few ms of HAProxy's and the backend's own turns,
            // 2.09 ms in one CI rehearsal.)
            assert!(
                row["excess_ms"].as_f64().unwrap_or(0.0) < CLIENT_NOT_COUNTED_MS,
                "{name}: {row}"
            );
            let k = kinds_of(c);
            assert!(!k.contains(&"client_think_time"), "{name}: {k:?}");
            assert!(!k.contains(&"tls_extra_rtt"), "{name}: {k:?}");
        }
    }

    // A client that connected and sent its ClientHello 300 ms later: the
    // backend had the header at once, then waited for the client, which
    // is no phase of this connection.
    let capture = at("v2-late-hello");
    let doc = headers_agree(&capture);
    let c = connection(&doc, 0);
    let header = c["proxy_protocol"]["frame"].as_u64().unwrap();
    let hello = frames(&capture, "tls.handshake.type == 1")[0];
    assert_eq!(tls_row(c)["start_frame"].as_u64(), Some(hello));
    for r in c["ledger"].as_array().unwrap() {
        let (first, last) = (
            r["start_frame"].as_u64().unwrap(),
            r["end_frame"].as_u64().unwrap(),
        );
        assert!(
            r["phase"] == "tcp_handshake" || (first > header && last > header),
            "a phase holds the wait for the client: {r}"
        );
    }
    assert!(
        c["excess_ms"].as_f64().unwrap_or(0.0) < CLIENT_NOT_COUNTED_MS,
        "{}",
        c["ledger"]
    );

    // Plain HTTP: the requests are the client's own, labelled, the first
    // from tshark's first request frame.
    let capture = at("v1-http");
    let doc = headers_agree(&capture);
    let c = connection(&doc, 0);
    let requests = frames(&capture, "http.request");
    let rows: Vec<(&str, u64)> = first_byte_rows(c)
        .map(|r| {
            (
                r["label"].as_str().unwrap(),
                r["start_frame"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("GET /a: request -> first byte", requests[0]),
            ("GET /b: request -> first byte", requests[1])
        ],
        "{}",
        c["ledger"]
    );
}

#[test]
fn a_backends_connections_behind_haproxy_read_through_their_proxy_headers() {
    if !require(
        "a_backends_connections_behind_haproxy_read_through_their_proxy_headers",
        &["tshark"],
        false,
    ) {
        return;
    }
    check(&data_dir().join("proxy-protocol"));
}

#[test]
fn live_a_backends_connections_behind_haproxy_read_through_their_proxy_headers() {
    if !require(
        "live_a_backends_connections_behind_haproxy_read_through_their_proxy_headers",
        &[
            "tshark", "ip", "tcpdump", "python3", "haproxy", "nginx", "curl", "openssl",
        ],
        true,
    ) {
        return;
    }
    let dir = TempDir::new("proxy-protocol");
    run_capture_script("proxy-protocol-captures.sh", &[dir.0.as_os_str()]);
    check(&dir.0);
}

/// PcapPlusPlus' one_tcp_stream_fin_rst_close_packet.pcap: a balancer
/// (192.168.221.130) carries 192.168.221.1's connection to MySQL
/// 5.7.30, its v1 header first. MySQL speaks first: its greeting waited
/// for the header, and answers nothing the client asked.
#[test]
fn a_mysql_greeting_after_a_balancers_header_is_a_greeting() {
    if !require(
        "a_mysql_greeting_after_a_balancers_header_is_a_greeting",
        &["tshark"],
        false,
    ) {
        return;
    }
    let Some(capture) = public_capture(
        "seladb-PcapPlusPlus",
        "Pcap++Test__PcapExamples__one_tcp_stream_fin_rst_close_packet.pcap",
    ) else {
        return;
    };
    let doc = headers_agree(&capture);
    let c = connection(&doc, 0);
    let greeting = frames(&capture, "mysql.protocol")[0];
    let rows: Vec<&Value> = first_byte_rows(c).collect();
    assert_eq!(rows.len(), 1, "{}", c["ledger"]);
    assert_eq!(rows[0]["exchange"].as_u64(), Some(0), "{}", rows[0]);
    assert_eq!(rows[0]["end_frame"].as_u64(), Some(greeting), "{}", rows[0]);
}
