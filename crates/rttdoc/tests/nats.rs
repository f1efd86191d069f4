//! NATS through a real server (tests/data/nats, made by
//! scripts/nats-captures.sh: nats-server and the nats-py client, real Linux
//! TCP, 20 ms each way, tcpdump at the clients' host). A subscriber's SUB
//! and PONG ask nothing, and the server delivers a message when another
//! connection publishes it: no turn waits for a delivery (before nats.rs,
//! the subscriber's PONG "asked" for the next message, 472 ms of
//! `server_think_time`). A request's answer, the message on its reply
//! subject, is a turn: the responder's 100 ms are the one wait. tshark
//! has no NATS dissector: the frames are read from its payload bytes.

mod common;

use common::*;
use std::collections::BTreeMap;
use std::path::PathBuf;

fn capture() -> PathBuf {
    data_dir().join("nats").join("nats-pubsub.pcap.gz")
}

/// Each data frame's sender (the client's host: 10.81.1.1) and
/// operations: the first two words of each line that begins with a
/// capital letter or `+`/`-` (payloads here are lowercase words:
/// `message 3`, `q`, `answer`).
fn operations(capture: &std::path::Path) -> BTreeMap<u64, (bool, Vec<String>)> {
    tshark_payloads(capture)
        .into_iter()
        .map(|(frame, (src, bytes))| {
            let text = String::from_utf8_lossy(&bytes).into_owned();
            let ops = text
                .split("\r\n")
                .filter(|l| l.starts_with(|c: char| c.is_ascii_uppercase() || c == '+' || c == '-'))
                .map(|l| l.split(' ').take(2).collect::<Vec<_>>().join(" "))
                .collect();
            (frame, (src == "10.81.1.1", ops))
        })
        .collect()
}

#[test]
fn deliveries_answer_no_turn_and_a_requests_reply_is_its_answer() {
    if !require("nats deliveries", &["tshark"], false) {
        return;
    }
    let doc = run_rttdoc_json(&capture());
    let all = operations(&capture());
    let has = |frame: u64, op: &str| all[&frame].1.iter().any(|o| o.starts_with(op));
    let mut rows = Vec::new();
    for c in doc["connections"].as_array().unwrap() {
        for row in first_byte_rows(c) {
            let label = row["label"].as_str().unwrap();
            let (start, end) = (
                row["start_frame"].as_u64().unwrap(),
                row["end_frame"].as_u64().unwrap(),
            );
            match label.split(':').next().unwrap() {
                "greeting" => assert!(has(end, "INFO"), "{label} {end}: {:?}", all[&end].1),
                "PING" => {
                    assert!(has(start, "PING"), "{label} {start}: {:?}", all[&start].1);
                    assert!(has(end, "PONG"), "{label} {end}: {:?}", all[&end].1);
                }
                "request" => {
                    assert!(
                        has(start, "PUB svc"),
                        "{label} {start}: {:?}",
                        all[&start].1
                    );
                    assert!(has(end, "MSG _INBOX"), "{label} {end}: {:?}", all[&end].1);
                }
                other => panic!("a turn named {other}"),
            }
            rows.push((start, end));
        }
    }
    // Every PING of the clients' is in a turn (the publisher's flush after
    // each of its five messages among them); the deliveries, the server's
    // PINGs and the clients' PONGs begin none, and a delivery ends none.
    let client_pings: Vec<u64> = all
        .iter()
        .filter(|(f, (client, _))| *client && has(**f, "PING"))
        .map(|(f, _)| *f)
        .collect();
    assert!(client_pings.len() >= 5, "{client_pings:?}");
    for f in &client_pings {
        // (Two PINGs before the first PONG are one turn's question.)
        assert!(
            rows.iter().any(|(s, e)| s <= f && f < e),
            "PING {f} is in no turn"
        );
    }
    for (frame, (client, ops)) in &all {
        let quiet = ops
            .iter()
            .all(|o| o == "PONG" || o.starts_with("SUB") || o.starts_with("UNSUB"));
        if (*client && quiet)
            || ops.iter().any(|o| o == "MSG feed")
            || (!*client && has(*frame, "PING"))
        {
            assert!(
                rows.iter().all(|(s, _)| s != frame),
                "{frame} begins a turn: {ops:?}"
            );
        }
        if ops.iter().any(|o| o == "MSG feed") {
            assert!(
                rows.iter().all(|(_, e)| e != frame),
                "{frame} answers a turn: {ops:?}"
            );
        }
    }
    // The one wait: the responder's 100 ms behind the server, between
    // the request and its reply.
    let found: Vec<&serde_json::Value> = doc["connections"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["findings"].as_array().unwrap())
        .collect();
    assert_eq!(found.len(), 1, "{found:?}");
    let f = found[0];
    assert_eq!(f["kind"], "server_think_time");
    let (from, to) = (
        f["waits"][0]["from_frame"].as_u64().unwrap(),
        f["waits"][0]["to_frame"].as_u64().unwrap(),
    );
    assert!(has(from, "PUB svc") && has(to, "MSG _INBOX"), "{f}");
    let ms = f["cost_ms"].as_f64().unwrap();
    let rtt = connection(&doc, f["stream"].as_u64().unwrap())["rtt_ms"]
        .as_f64()
        .unwrap();
    assert!(
        (100.0..100.0 + rtt / 2.0).contains(&ms),
        "{ms} ms, RTT {rtt}"
    );
}

/// JetStream's pull consumer (tests/data/nats/jetstream-pull.pcap.gz,
/// scripts/jetstream-captures.sh: nats-server with JetStream, nats-py's
/// `fetch(1, timeout=2)`, a publisher 1.5 s apart on its own connection):
/// each fetch asks the server to hold its answer until a message is
/// there (a delivery on the inbox's subscription, with the stream's
/// subject) or its `expires` passes (a `408 Request Timeout` on the
/// inbox). The holds are the worker's asking, idle; the one request to a
/// responder that sleeps 150 ms is the one finding.
#[test]
fn a_jetstream_fetch_is_held_for_a_message_not_the_servers_time() {
    if !require("nats: JetStream", &["tshark"], false) {
        return;
    }
    let cap = data_dir().join("nats").join("jetstream-pull.pcap.gz");
    let doc = run_rttdoc_json(&cap);
    let ops = operations(&cap);
    let first = |frame: u64| ops[&frame].1.first().cloned().unwrap_or_default();
    let worker = doc["connections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| first_byte_rows(c).any(|r| r["label"].as_str().unwrap().starts_with("JetStream")))
        .expect("the worker's connection");
    let mut fetches = 0;
    for row in first_byte_rows(worker) {
        let (start, end) = (
            row["start_frame"].as_u64().unwrap(),
            row["end_frame"].as_u64().unwrap(),
        );
        if row["label"] != "JetStream fetch: request -> first byte" {
            continue;
        }
        fetches += 1;
        // (The first fetch goes with nats.py's SUB of its inbox.)
        assert!(
            ops[&start]
                .1
                .contains(&"PUB $JS.API.CONSUMER.MSG.NEXT.LAB.worker".to_string()),
            "{start}: {:?}",
            ops[&start]
        );
        let answer = first(end);
        // A delivery keeps the stream's subject; an expiry is a status on
        // the inbox.
        assert!(
            answer == "MSG lab.jobs" || answer.starts_with("HMSG _INBOX."),
            "{start} -> {end}: {answer}"
        );
        // Held as asked: idle, and never quicker than the round trip (an
        // older fetch's late expiry answers nothing of this one's).
        assert_eq!(row["ideal_rtts"], row["rtts"], "{row}");
        assert!(row["duration_ms"].as_f64().unwrap() > worker["rtt_ms"].as_f64().unwrap());
    }
    assert!(fetches >= 4, "{fetches}");
    // The responder's 150 ms: the one finding of the capture.
    let all: Vec<&str> = doc["connections"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| kinds(&c["findings"]))
        .collect();
    assert_eq!(all, ["server_think_time"]);
    let waits = think_waits(worker);
    assert_eq!(waits.len(), 1, "{waits:?}");
    assert_eq!(first(waits[0].0), "PUB svc.slow");
    let rtt = worker["rtt_ms"].as_f64().unwrap();
    assert!(
        (150.0..150.0 + rtt / 2.0).contains(&waits[0].2),
        "{waits:?}"
    );
}
