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
//!
//! With `net.ipv4.tcp_abort_on_overflow=1` the listener resets a
//! handshake's ACK that finds the queue full, and a listener closed since
//! its SYN-ACK (a server restarting) resets the ACKs that come after:
//! `listener_reset`, checked against the RSTs tshark shows.

mod common;

use common::*;
use std::path::PathBuf;

fn capture(name: &str) -> PathBuf {
    data_dir().join(format!("accept-queue/{name}.pcap.gz"))
}

/// The connections of `doc` with a finding of `kind`, by stream: the
/// finding.
fn by_stream(
    doc: &serde_json::Value,
    kind: &str,
) -> std::collections::BTreeMap<u64, serde_json::Value> {
    findings_of(doc, kind)
        .into_iter()
        .map(|(stream, x)| (stream, x.clone()))
        .collect()
}

/// The connections of `doc` with an `accept_queue_full` finding.
fn held(doc: &serde_json::Value) -> std::collections::BTreeMap<u64, serde_json::Value> {
    by_stream(doc, "accept_queue_full")
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

/// One TCP segment as tshark reads it.
struct Seg {
    stream: u64,
    frame: u64,
    t: f64,
    from_client: bool,
    syn: bool,
    ack: bool,
    rst: bool,
    fin: bool,
    /// Relative sequence number.
    seq: u32,
    len: u32,
    /// tshark's `tcp.analysis.retransmission`.
    again: bool,
}

/// The capture's TCP segments, in frame order (the server listens on 8080).
fn segments(capture: &std::path::Path) -> Vec<Seg> {
    tshark_fields(
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
            "tcp.flags.reset",
            "tcp.flags.fin",
            "tcp.seq",
            "tcp.len",
            "tcp.analysis.retransmission",
        ],
    )
    .into_iter()
    .map(|r| Seg {
        stream: r[0].parse().unwrap(),
        frame: r[1].parse().unwrap(),
        t: r[2].parse().unwrap(),
        from_client: r[3] == "8080",
        syn: r[4] == "1",
        ack: r[5] == "1",
        rst: r[6] == "1",
        fin: r[7] == "1",
        seq: r[8].parse().unwrap(),
        len: r[9].parse().unwrap(),
        again: !r[10].is_empty(),
    })
    .collect()
}

fn before_open(capture: &std::path::Path) -> std::collections::BTreeMap<u64, BeforeOpen> {
    let mut out: std::collections::BTreeMap<u64, (BeforeOpen, bool)> = Default::default();
    for g in segments(capture) {
        let Seg {
            stream,
            frame,
            t,
            from_client,
            syn,
            ack,
            len,
            again,
            ..
        } = g;
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
    // A listener that dropped (not reset) what it could not take reset
    // nothing.
    for name in [
        "http-client",
        "http-server",
        "http-nocookies-client",
        "http-nocookies-server",
        "greeting-client",
        "greeting-server",
        "greeting-nocookies-client",
        "greeting-nocookies-server",
        "defer-client",
        "defer-server",
        "defer-http-client",
    ] {
        let doc = run_rttdoc_json(&capture(name));
        assert!(resets(&doc).is_empty(), "{name}");
    }
}

/// The connections of `doc` with a `listener_reset` finding.
fn resets(doc: &serde_json::Value) -> std::collections::BTreeMap<u64, serde_json::Value> {
    by_stream(doc, "listener_reset")
}

/// The connections tshark shows reset by a host with no socket for them:
/// the server's first packet after its SYN-ACK, SYN-ACK re-sends aside,
/// a RST without the ACK flag at relative sequence 1 with no data, after
/// a client packet other than a SYN and before any FIN or RST of the
/// client's. Each: the client's last SYN before the SYN-ACK, the RST
/// (frame, time).
fn expected_resets(capture: &std::path::Path) -> std::collections::BTreeMap<u64, (f64, u64, f64)> {
    #[derive(Default)]
    struct Seen {
        syn: Option<f64>,
        syn_ack: bool,
        client_spoke: bool,
        client_closed: bool,
        verdict: Option<Option<(u64, f64)>>,
    }
    let mut out: std::collections::BTreeMap<u64, Seen> = Default::default();
    for g in segments(capture) {
        let Seg {
            stream,
            frame,
            t,
            from_client,
            syn,
            ack,
            rst,
            fin,
            ..
        } = g;
        let c = out.entry(stream).or_default();
        if c.verdict.is_some() {
            continue;
        }
        if from_client {
            if syn && !c.syn_ack {
                c.syn = Some(t);
            } else if !syn && c.syn_ack {
                c.client_spoke = true;
                c.client_closed |= fin || rst;
            }
        } else if syn && ack {
            c.syn_ack = true;
        } else if c.syn_ack {
            let no_socket = rst && !ack && g.seq == 1 && g.len == 0;
            c.verdict =
                Some((no_socket && c.client_spoke && !c.client_closed).then_some((frame, t)));
        }
    }
    out.into_iter()
        .filter_map(|(s, c)| {
            let (frame, t) = c.verdict.flatten()?;
            Some((s, (c.syn?, frame, t)))
        })
        .collect()
}

#[test]
fn a_listener_that_reset_completing_handshakes_is_named_where_tshark_shows_its_rsts() {
    // The same runs seen from both ends: the cost, on the client's clock,
    // by client port.
    let mut costs: std::collections::BTreeMap<(String, u64), Vec<f64>> = Default::default();
    for name in [
        "http-abort-client",
        "http-abort-server",
        "restart-client",
        "restart-server",
    ] {
        let doc = run_rttdoc_json(&capture(name));
        let found = resets(&doc);
        // Each run reset two handshakes or more.
        assert!(found.len() >= 2, "{name}: {:?}", found.keys());
        for (stream, x) in &found {
            let c = connection(&doc, *stream);
            assert_eq!(c["ending"], "reset", "{name} stream {stream}");
            assert_eq!(x["phase"], "tcp_handshake");
            // An outcome: no share of an excess the connection lacks.
            assert_eq!(x["attributed_ms"].as_f64(), Some(0.0));
            assert!(x.get("waits").is_none(), "{x}");
            let words = x["explanation"].as_str().unwrap();
            assert!(
                words.contains("tcp_abort_on_overflow=1")
                    && words.contains("closed since its SYN-ACK"),
                "{words}"
            );
            // The half-open connection was never the full queue's drop.
            let kinds = kinds(&c["findings"]);
            assert!(
                !kinds.contains(&"accept_queue_full"),
                "{name} {stream}: {kinds:?}"
            );
            let port = c["client"]["port"].as_u64().unwrap();
            let run = name.rsplit_once('-').unwrap().0.to_string();
            costs
                .entry((run, port))
                .or_default()
                .push(x["cost_ms"].as_f64().unwrap());
        }
        // The terminal counts them on a line of their own.
        let text = run_rttdoc_text(&capture(name));
        let line = format!("(listener_reset): {} of ", found.len());
        assert!(text.contains(&line), "{name}: {text}");
        if !require(&format!("accept_queue {name}"), &["tshark"], false) {
            continue;
        }
        let expected = expected_resets(&capture(name));
        assert_eq!(
            found.keys().collect::<Vec<_>>(),
            expected.keys().collect::<Vec<_>>(),
            "{name}: the connections reset"
        );
        for (stream, x) in &found {
            let (syn, rst_frame, rst) = expected[stream];
            let frames = frames_cited(x);
            assert!(frames.contains(&rst_frame), "{name} {stream}: {frames:?}");
            if name.ends_with("client") {
                // Both ends on the client's own clock: exact.
                let ms = (rst - syn) * 1e3;
                let cost = x["cost_ms"].as_f64().unwrap();
                assert!(
                    (cost - ms).abs() < 0.01,
                    "{name} {stream}: {cost} against {ms} ms"
                );
            }
        }
        assert_agrees_with_tshark(&capture(name), &[]);
        assert_eq!(
            display_filter_problems(&capture(name), &doc),
            Vec::<String>::new()
        );
    }
    // At the server the client's clock is inferred: the same cost within
    // the path's jitter.
    for ((run, port), both) in costs {
        assert_eq!(both.len(), 2, "{run} client port {port}: {both:?}");
        assert!(
            (both[0] - both[1]).abs() < 5.0,
            "{run} client port {port}: {both:?}"
        );
    }
}
