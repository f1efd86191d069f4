//! WebSocket through a real library (tests/data/websocket, made by
//! scripts/websocket-captures.sh: python's `websockets` server and
//! clients, permessage-deflate on, real Linux TCP, 20 ms each way, tcpdump
//! at the clients). The server pings every client each second: a client's
//! PONG asks for nothing, and the feed's pushes and the chat's passed-on
//! messages answer none of its turns; an RPC client's questions, answered
//! 100 ms after they arrive, are the server's think time. Each turn is
//! checked against tshark's WebSocket dissector.

mod common;

use common::*;
use std::collections::BTreeMap;

/// Each WebSocket frame tshark reads: frame -> (stream, opcodes).
fn opcodes(capture: &std::path::Path) -> BTreeMap<u64, (u64, Vec<u8>)> {
    let fields = ["frame.number", "tcp.stream", "websocket.opcode"];
    tshark_fields(capture, &[], "websocket", &fields)
        .into_iter()
        .map(|f| {
            let ops = f[2].split(',').map(|o| o.parse().unwrap()).collect();
            (f[0].parse().unwrap(), (f[1].parse().unwrap(), ops))
        })
        .collect()
}

/// The opcodes a question's label names, and those of its answer.
fn asked_and_answered(label: &str) -> (&'static [u8], &'static [u8]) {
    match label.split(':').next().unwrap() {
        "WebSocket text" => (&[1], &[1, 2]),
        "WebSocket binary" => (&[2], &[1, 2]),
        "WebSocket ping" => (&[9], &[10]),
        "WebSocket close" => (&[8], &[8]),
        other => panic!("not a WebSocket question: {other}"),
    }
}

#[test]
fn pongs_and_pushes_make_no_turns_and_answers_are_timed() {
    if !require("websocket turns", &["tshark"], false) {
        return;
    }
    let capture = data_dir().join("websocket").join("websockets.pcap.gz");
    let doc = run_rttdoc_json(&capture);
    let frames = opcodes(&capture);
    let mut rpc = None;
    for c in doc["connections"].as_array().unwrap() {
        let stream = c["stream"].as_u64().unwrap();
        let rows: Vec<&serde_json::Value> = first_byte_rows(c).collect();
        // The upgrade, its `101`; then the WebSocket turns, each a
        // question and its answer by tshark's opcodes.
        assert!(rows[0]["label"].as_str().unwrap().starts_with("GET /"));
        for r in &rows[1..] {
            let label = r["label"].as_str().unwrap();
            let (asked, answered) = asked_and_answered(label);
            let at = |k: &str| &frames[&r[k].as_u64().unwrap()];
            let (s, ops) = at("start_frame");
            assert!(
                *s == stream && ops.iter().any(|o| asked.contains(o)),
                "{label}: {ops:?}"
            );
            let (_, ops) = at("end_frame");
            assert!(
                ops.iter().any(|o| answered.contains(o)),
                "{label}: answered by {ops:?}"
            );
        }
        if rows
            .iter()
            .any(|r| r["label"] == "GET /rpc: request -> first byte")
        {
            rpc = Some(c);
        } else {
            // The feed's reader, the chat's listener and talker: pings
            // and pushes, nothing found.
            assert_eq!(
                kinds_within(&c["findings"]),
                Vec::<&str>::new(),
                "stream {stream}"
            );
        }
    }
    // The four questions, each answered 100 ms after it arrived.
    let rpc = rpc.expect("the RPC client's connection");
    let waits = think_waits(rpc);
    assert_eq!(waits.len(), 4, "{waits:?}");
    for (question, answer, ms) in waits {
        assert!(
            (99.0..115.0).contains(&ms),
            "{question} -> {answer}: {ms} ms"
        );
        assert_eq!(frames[&question].1, [1]);
        assert_eq!(frames[&answer].1, [1]);
    }
}
