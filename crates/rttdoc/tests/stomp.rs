//! STOMP through a real broker (tests/data/stomp, made by
//! scripts/stomp-captures.sh: RabbitMQ's STOMP plugin and stomp.py, real
//! Linux TCP, 20 ms each way, tcpdump at the clients' host). A
//! subscriber's ACKs and heart-beats ask nothing, and the broker sends a
//! MESSAGE when the sender's frame reaches it: no turn waits for a
//! message (before stomp.rs, 3.55 s of `server_think_time` on a
//! subscriber that asked nothing after its SUBSCRIBE). Turns are the
//! frames that ask (the CONNECT, every frame asking for a receipt), each
//! answered by its CONNECTED or its RECEIPT. tshark has no STOMP
//! dissector: frames are read from its payload bytes.

mod common;

use common::*;
use std::collections::BTreeMap;
use std::path::PathBuf;

fn capture() -> PathBuf {
    data_dir().join("stomp").join("rabbitmq-stomp.pcap.gz")
}

/// Each data frame's STOMP frames: (command, its `receipt` or
/// `receipt-id`), split at the NULs that end frames (the bodies here are
/// short text).
fn frames(capture: &std::path::Path) -> BTreeMap<u64, Vec<(String, Option<String>)>> {
    tshark_payloads(capture)
        .into_iter()
        .map(|(frame, (_, bytes))| {
            let text = String::from_utf8_lossy(&bytes).into_owned();
            let parsed = text
                .split('\0')
                .map(|frame| frame.trim_start_matches(['\n', '\r']))
                .filter(|frame| !frame.is_empty())
                .map(|frame| {
                    let mut lines = frame.lines();
                    let command = lines.next().unwrap_or_default().to_string();
                    let receipt = lines
                        .take_while(|l| !l.is_empty())
                        .find_map(|l| {
                            l.strip_prefix("receipt:")
                                .or_else(|| l.strip_prefix("receipt-id:"))
                        })
                        .map(str::to_string);
                    (command, receipt)
                })
                .collect();
            (frame, parsed)
        })
        .collect()
}

#[test]
fn messages_answer_no_turn_and_each_turn_is_a_frame_and_its_receipt() {
    if !require("stomp messages", &["tshark"], false) {
        return;
    }
    let doc = run_rttdoc_json(&capture());
    let all = frames(&capture());
    let mut rows = Vec::new();
    for c in doc["connections"].as_array().unwrap() {
        for row in first_byte_rows(c) {
            let label = row["label"].as_str().unwrap();
            let command = label.split(':').next().unwrap();
            let (start, end) = (
                row["start_frame"].as_u64().unwrap(),
                row["end_frame"].as_u64().unwrap(),
            );
            let (asked, receipt) = &all[&start][0];
            assert_eq!(asked, command, "{label} at {start}");
            let answered = &all[&end];
            if command == "STOMP" || command == "CONNECT" {
                assert_eq!(answered[0].0, "CONNECTED", "{label} answered at {end}");
            } else {
                assert!(
                    answered.iter().any(|(c, r)| c == "RECEIPT" && r == receipt),
                    "{label} ({receipt:?}) answered at {end} by {answered:?}"
                );
            }
            rows.push((start, end));
        }
    }
    // Every client frame that asks for a receipt, and every CONNECT, is a
    // turn. (RabbitMQ's MESSAGE repeats the sender's headers, its
    // `receipt` among them: a server's frame, no question.)
    let client = ["STOMP", "CONNECT", "SEND", "SUBSCRIBE", "ACK", "DISCONNECT"];
    let asking = all
        .values()
        .filter(|f| {
            f.iter().any(|(c, r)| {
                c == "STOMP" || c == "CONNECT" || (client.contains(&c.as_str()) && r.is_some())
            })
        })
        .count();
    assert_eq!(rows.len(), asking);
    // The broker's MESSAGEs, the subscriber's ACKs and the heart-beats
    // begin and end no turn.
    let quiet: Vec<u64> = all
        .iter()
        .filter(|(_, f)| f.is_empty() || f.iter().any(|(c, _)| c == "MESSAGE" || c == "ACK"))
        .map(|(n, _)| *n)
        .collect();
    assert!(quiet.len() >= 10, "{quiet:?}");
    for f in &quiet {
        assert!(
            rows.iter().all(|(s, e)| s != f && e != f),
            "{f} in a turn: {:?}",
            all[f]
        );
    }
    // And nothing waited on the broker.
    for c in doc["connections"].as_array().unwrap() {
        assert!(
            !kinds(&c["findings"]).contains(&"server_think_time"),
            "stream {}: {}",
            c["stream"],
            c["findings"]
        );
    }
}
