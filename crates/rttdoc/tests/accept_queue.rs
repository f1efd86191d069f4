//! A server whose application drains its listener's accept queue more
//! slowly than connections come (scripts/accept-queue-captures.sh: real
//! Linux TCP, a 40 ms path, tcpdump at both ends at once;
//! tests/data/accept-queue/). Linux drops the handshake's ACK and the
//! data behind it while the queue is full: the client re-sends its data on
//! its timer, the server (without SYN cookies) re-sends its SYN-ACK on
//! its own, and the first copy that comes when there is room opens the
//! connection. TCP_DEFER_ACCEPT holds a handshake ACK without data the
//! same way.
//!
//! What rttdoc says is checked against the frames as tshark reads them:
//! per connection, the server's first packet other than a SYN-ACK, the
//! SYN-ACKs it re-sent before it, and the client's re-sends before it.

mod common;

use common::*;
use std::path::PathBuf;

fn capture(name: &str) -> PathBuf {
    data_dir().join(format!("accept-queue/{name}.pcap.gz"))
}

/// The connections of `doc` with an `accept_queue_full` finding, by
/// stream: the finding.
fn held(doc: &serde_json::Value) -> std::collections::BTreeMap<u64, serde_json::Value> {
    doc["connections"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| {
            c["findings"]
                .as_array()
                .unwrap()
                .iter()
                .find(|f| f["kind"] == "accept_queue_full")
                .map(|f| (c["stream"].as_u64().unwrap(), f.clone()))
        })
        .collect()
}

/// One connection as tshark reads it, up to the server's first packet
/// other than a SYN-ACK (the listener had taken it by then).
#[derive(Debug, Default)]
struct BeforeOpen {
    /// The client's first data and the handshake's ACK: (frame, time).
    first_data: Option<(u64, f64)>,
    ack: Option<(u64, f64)>,
    /// The client's last packet before the server's first other packet.
    last_client: Option<(u64, f64)>,
    /// SYN-ACKs re-sent after the handshake's ACK.
    syn_acks_again: u32,
    /// The client's data re-sends.
    data_again: u32,
}

fn before_open(capture: &std::path::Path) -> std::collections::BTreeMap<u64, BeforeOpen> {
    let rows = tshark_fields(
        capture,
        &[],
        "",
        &[
            "tcp.stream",
            "frame.number",
            "frame.time_relative",
            "tcp.dstport",
            "tcp.flags.syn",
            "tcp.flags.ack",
            "tcp.len",
            "tcp.analysis.retransmission",
        ],
    );
    let mut out: std::collections::BTreeMap<u64, (BeforeOpen, bool)> = Default::default();
    for r in rows {
        let stream: u64 = r[0].parse().unwrap();
        let frame: u64 = r[1].parse().unwrap();
        let t: f64 = r[2].parse().unwrap();
        let from_client = r[3] == "8080";
        let (syn, ack) = (r[4] == "1", r[5] == "1");
        let len: u32 = r[6].parse().unwrap();
        let again = !r[7].is_empty();
        let (c, opened) = out.entry(stream).or_default();
        if *opened {
            continue;
        }
        if from_client {
            if syn {
                continue;
            }
            if c.ack.is_none() {
                c.ack = Some((frame, t));
            }
            if len > 0 && c.first_data.is_none() {
                c.first_data = Some((frame, t));
            }
            if len > 0 && again {
                c.data_again += 1;
            }
            c.last_client = Some((frame, t));
        } else if syn && ack {
            if again && c.ack.is_some() {
                c.syn_acks_again += 1;
            }
        } else {
            *opened = true;
        }
    }
    out.into_iter().map(|(k, (c, _))| (k, c)).collect()
}

/// The connections tshark shows held before they opened, at a capture
/// taken `at_server` or not: a SYN-ACK re-sent after the client's ACK, or
/// (at the server) the client's data sent again twice or more (a copy
/// ignored as well: no delayed ACK); and each one's wait,
/// from the client's first data (its ACK when it sent none) to its last
/// packet before the server's first other one.
fn expected_holds(
    capture: &std::path::Path,
    at_server: bool,
) -> std::collections::BTreeMap<u64, (u32, u32, f64)> {
    before_open(capture)
        .into_iter()
        .filter(|(_, c)| c.syn_acks_again > 0 || (at_server && c.data_again >= 2))
        .map(|(s, c)| {
            let from = c.first_data.or(c.ack).unwrap();
            let to = c.last_client.unwrap();
            (s, (c.syn_acks_again, c.data_again, (to.1 - from.1) * 1e3))
        })
        .collect()
}

fn check_against_tshark(name: &str, at_server: bool) {
    let doc = run_rttdoc_json(&capture(name));
    let found = held(&doc);
    assert!(!found.is_empty(), "{name}: no accept_queue_full");
    if !require(&format!("accept_queue {name}"), &["tshark"], false) {
        return;
    }
    let expected = expected_holds(&capture(name), at_server);
    assert_eq!(
        found.keys().collect::<Vec<_>>(),
        expected.keys().collect::<Vec<_>>(),
        "{name}: the connections held"
    );
    for (stream, x) in &found {
        let (syn_acks, data, ms) = expected[stream];
        assert!(
            (x["cost_ms"].as_f64().unwrap() - ms).abs() < 0.01,
            "{name} stream {stream}: {x} (tshark: {ms} ms)"
        );
        assert_eq!(x["phase"], "first_byte", "{name} stream {stream}");
        let words = x["explanation"].as_str().unwrap();
        if data > 0 {
            assert!(words.contains("accept queue was full"), "{words}");
        }
        if syn_acks > 0 {
            assert!(words.contains("SYN-ACK again"), "{words}");
        }
        // The client's re-sends are this finding's alone.
        let c = connection(&doc, *stream);
        let kinds = kinds(&c["findings"]);
        assert!(
            !kinds.contains(&"retransmission") && !kinds.contains(&"rto_stall"),
            "{name} stream {stream}: {kinds:?}"
        );
    }
    assert_agrees_with_tshark(&capture(name), &[]);
}

#[test]
fn at_the_server_data_left_unacknowledged_until_sent_again_is_the_full_accept_queue() {
    // SYN cookies (the kernel's default): no SYN-ACK re-sends; the data
    // arrived and went unacknowledged until a copy came.
    check_against_tshark("http-server", true);
    check_against_tshark("http-nocookies-server", true);
}

#[test]
fn a_syn_ack_sent_again_after_the_clients_ack_is_the_full_accept_queue_at_either_end() {
    // Without cookies: the greeting waited for the SYN-ACK re-send and
    // the client's ACK of it.
    check_against_tshark("greeting-nocookies-server", true);
    check_against_tshark("greeting-nocookies-client", false);
}

#[test]
fn tcp_defer_accept_holds_a_servers_greeting_until_its_syn_ack_again() {
    for name in ["defer-client", "defer-server"] {
        check_against_tshark(name, name.ends_with("server"));
        let doc = run_rttdoc_json(&capture(name));
        for (stream, x) in held(&doc) {
            // The client sent nothing: the words name both causes.
            let words = x["explanation"].as_str().unwrap();
            assert!(words.contains("TCP_DEFER_ACCEPT"), "{words}");
            // The server's own time runs from the ACK it took: the
            // peer's 300 ms of work.
            let c = connection(&doc, stream);
            let think = finding_in(c, "server_think_time", "first_byte");
            let ms = think["cost_ms"].as_f64().unwrap();
            assert!((295.0..320.0).contains(&ms), "{think}");
            // Hold and think time explain the greeting's row.
            let row = &c["ledger"][1];
            let excess = row["excess_ms"].as_f64().unwrap();
            let explained = ms + x["cost_ms"].as_f64().unwrap();
            assert!((excess - explained).abs() < 5.0, "{row} {explained}");
        }
    }
}

#[test]
fn at_the_client_dropped_data_without_a_syn_ack_again_is_loss_or_the_listener() {
    // SYN cookies keep no state: nothing shows the server held the
    // connection. The client's timer stalls are rto_stall, whose words
    // name the listener as well as the path.
    for name in ["http-client", "http-nocookies-client"] {
        let doc = run_rttdoc_json(&capture(name));
        assert!(held(&doc).is_empty(), "{name}");
        let stalls: Vec<&serde_json::Value> = doc["connections"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|c| c["findings"].as_array().unwrap())
            .filter(|f| f["kind"] == "rto_stall")
            .collect();
        assert!(!stalls.is_empty(), "{name}");
        for x in stalls {
            let words = x["explanation"].as_str().unwrap();
            assert!(
                words.contains("first data") && words.contains("accept queue full"),
                "{words}"
            );
        }
    }
}

#[test]
fn controls_a_deferred_listener_whose_clients_send_at_once_and_idle_connections_hold_nothing() {
    // TCP_DEFER_ACCEPT takes data at once: HTTP clients are not held.
    let doc = run_rttdoc_json(&capture("defer-http-client"));
    assert!(held(&doc).is_empty());
    // Connections the server never took before the client gave up (it
    // sent nothing, the greeting never came): nobody is shown waiting
    // for a row, so nothing is claimed.
    for name in ["greeting-client", "greeting-server"] {
        let doc = run_rttdoc_json(&capture(name));
        assert!(held(&doc).is_empty(), "{name}");
    }
}
