//! Multipath TCP subflows (analyze's mptcp.rs): each subflow is a
//! `tcp.stream` of its own, and a request on one may be answered on
//! another. rttdoc marks the subflows, says when the connection's data also
//! went over other subflows, and does not measure a turn whose answer
//! began elsewhere as the server's time.
//!
//! Captures: tcpdump's own MPTCP test captures (an SSH session over two
//! subflows of Linux's out-of-tree MPTCP v0, a version 1 transfer), and
//! scripts/mptcp-captures.sh's (Linux's in-kernel MPTCP: a server that
//! answers every request 150 ms late, over two paths and over one).

mod common;

use common::*;

#[test]
fn an_ssh_session_over_two_subflows_is_measured_where_its_turns_stay_on_one() {
    let Some(doc) = public_doc("the-tcpdump-group-tcpdump", "mptcp-v0.pcap") else {
        return;
    };
    // tshark: stream 0 carries MP_CAPABLE, stream 1 MP_JOIN.
    let first = connection(&doc, 0);
    let joined = connection(&doc, 1);
    assert_eq!(first["mptcp"]["subflow"], "first");
    assert_eq!(joined["mptcp"]["subflow"], "joined");
    // Frame 21: the client's Data ACK on stream 0 acknowledges the
    // server's data up to 3518593841, where stream 0 had carried the
    // server's data only up to 3518592185 (frame 4): the rest came over
    // stream 1 (frames 14, 18, 20). Frame 25 likewise on stream 1.
    assert_eq!(first["mptcp"]["other_subflows_frame"], 21);
    assert_eq!(joined["mptcp"]["other_subflows_frame"], 25);
    // The client's 448 bytes in frame 43 (stream 1) carry its Data ACK
    // 3518594417; the server's next data on stream 1 is frame 212, 4.4 s
    // later, mapped from 3518599553: the server's answers went over
    // stream 0 meanwhile (frames 44 ...). Not 4.4 s of server time.
    assert_eq!(joined["mptcp"]["split_turns"], serde_json::json!([212]));
    let waits = think_waits(joined);
    assert!(
        !waits.iter().any(|w| w.1 == 212),
        "a turn answered on the other subflow measured: {waits:?}"
    );
    // The turns that stayed on stream 1 are still measured (16 -> 18: the
    // server's answer continues the data level where the request left it).
    assert!(waits.iter().any(|w| (w.0, w.1) == (16, 18)), "{waits:?}");
    // Stream 0's turns stayed on it (judged right in docs/real-world.md).
    let waits = think_waits(first);
    assert!(waits.iter().any(|w| (w.0, w.1) == (38, 40)), "{waits:?}");
    assert_eq!(doc["summary"]["mptcp_split_subflows"], 1);
    // An SSH server's slow turns are its key exchange's and its
    // session's, no handler to profile (judged in session 86).
    let slow = joined["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["kind"] == "server_think_time")
        .expect("stream 1's slow turns");
    let fix = slow["fix"].as_str().unwrap();
    assert!(
        fix.contains("key exchange") && !fix.contains("database"),
        "{fix}"
    );
}

#[test]
fn a_data_ack_lagging_its_subflow_splits_no_turn() {
    // Version 1: the client's Data ACK stays at 11713449205243392242 while
    // the server's 8192 bytes mapped from there arrive on this (the only)
    // subflow (frames 7, 10); the server's next data (frame 17) starts
    // where they end.
    let Some(doc) = public_doc("the-tcpdump-group-tcpdump", "mptcp-v1.pcap") else {
        return;
    };
    let c = connection(&doc, 0);
    assert_eq!(c["mptcp"]["subflow"], "first");
    assert_eq!(c["mptcp"]["other_subflows_frame"], serde_json::Value::Null);
    assert_eq!(c["mptcp"]["split_turns"], serde_json::json!([]));
    // Its first data rides MP_CAPABLE (version 1): mapped from the
    // initial data sequence number, not data of another subflow.
    let Some(doc) = public_doc("the-tcpdump-group-tcpdump", "mptcp-aa-v1.pcap") else {
        return;
    };
    assert_eq!(
        connection(&doc, 0)["mptcp"]["other_subflows_frame"],
        serde_json::Value::Null
    );
}

#[test]
fn a_server_that_thinks_is_found_on_a_subflow_that_shares_the_connection() {
    // Linux MPTCP over two paths: the answers (300 KB, 10 Mbit/s a path)
    // go over both subflows, each begun on the subflow of its request,
    // 150 ms after it (the server's sleep).
    let capture = data_dir().join("mptcp/two-paths-think.pcap.gz");
    let doc = run_rttdoc_json(&capture);
    let first = connection(&doc, 0);
    let joined = connection(&doc, 1);
    assert_eq!(first["mptcp"]["subflow"], "first");
    assert_eq!(joined["mptcp"]["subflow"], "joined");
    assert!(first["mptcp"]["other_subflows_frame"].is_u64());
    assert!(joined["mptcp"]["other_subflows_frame"].is_u64());
    assert_eq!(first["mptcp"]["split_turns"], serde_json::json!([]));
    let waits = think_waits(first);
    assert_eq!(waits.len(), 8, "{waits:?}");
    for w in &waits {
        assert!((148.0..170.0).contains(&w.2), "{waits:?}");
    }
    assert_eq!(doc["summary"]["mptcp_split_subflows"], 0);

    // The same over one path: one subflow, the same eight waits.
    let capture = data_dir().join("mptcp/one-path-think.pcap.gz");
    let doc = run_rttdoc_json(&capture);
    assert_eq!(doc["connections"].as_array().unwrap().len(), 1);
    let only = connection(&doc, 0);
    assert_eq!(
        only["mptcp"]["other_subflows_frame"],
        serde_json::Value::Null
    );
    let waits = think_waits(only);
    assert_eq!(waits.len(), 8, "{waits:?}");
    for w in &waits {
        assert!((148.0..170.0).contains(&w.2), "{waits:?}");
    }
}

#[test]
fn the_terminal_says_which_subflow_a_connection_is() {
    let Some(capture) = public_capture("the-tcpdump-group-tcpdump", "mptcp-v0.pcap") else {
        return;
    };
    let out = std::process::Command::new(rttdoc_bin())
        .args(["analyze", "--no-progress", "--conn", "1"])
        .arg(&capture)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("MPTCP: a subflow joined to a connection (MP_JOIN)"),
        "{text}"
    );
    assert!(
        text.contains("1 answer(s) began on another subflow"),
        "{text}"
    );
    let out = std::process::Command::new(rttdoc_bin())
        .args(["analyze", "--no-progress"])
        .arg(&capture)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("NOTE: 1 connection(s) are Multipath TCP subflows"),
        "{text}"
    );
}
