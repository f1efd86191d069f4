//! AMQP 0-9-1 through a real broker (tests/data/amqp, made by
//! scripts/amqp-captures.sh: RabbitMQ and librabbitmq's amqp-tools, real
//! Linux TCP, 20 ms each way, tcpdump at the clients' host). A consumer's
//! acknowledgments and heartbeats ask for nothing, and the broker delivers
//! a message when another connection publishes it: no turn waits for a
//! delivery (before amqp.rs, each publisher's pause was the broker's
//! "think time", 0.9 s a message). Each turn is checked against tshark's
//! AMQP dissector: the request is the method its label names, its first
//! byte that method's answer.

mod common;

use common::*;
use std::collections::BTreeMap;
use std::path::PathBuf;

fn capture() -> PathBuf {
    data_dir().join("amqp").join("rabbitmq-consume.pcap.gz")
}

/// Each frame's AMQP methods as tshark names them (its Info column, a
/// segment at a time): `Connection.Start-Ok`, `Basic.Deliver` ...
fn methods(capture: &std::path::Path) -> BTreeMap<u64, String> {
    let options = ["-o", "tcp.desegment_tcp_streams:FALSE"];
    tshark_fields(capture, &options, "amqp", &["frame.number", "_ws.col.Info"])
        .into_iter()
        .map(|f| (f[0].parse().unwrap(), f[1].clone()))
        .collect()
}

/// What answers a client's question, by AMQP 0-9-1's method tables: its
/// `-Ok`, but for these.
fn answers_to(question: &str) -> Vec<String> {
    match question {
        "protocol header" => vec!["Connection.Start".into()],
        "Connection.Start-Ok" => vec!["Connection.Tune".into(), "Connection.Secure".into()],
        "Basic.Get" => vec!["Basic.Get-Ok".into(), "Basic.Get-Empty".into()],
        other => vec![format!("{other}-Ok")],
    }
}

/// Whether tshark's Info names `method` (not as a prefix of another's).
fn names(info: &str, method: &str) -> bool {
    info.split_whitespace().any(|w| w == method)
}

#[test]
fn deliveries_answer_no_turn_and_each_turn_is_a_method_and_its_answer() {
    if !require("amqp deliveries", &["tshark"], false) {
        return;
    }
    let doc = run_rttdoc_json(&capture());
    let all = methods(&capture());
    let mut turns = 0;
    let mut rows = Vec::new();
    for c in doc["connections"].as_array().unwrap() {
        for row in first_byte_rows(c) {
            let label = row["label"].as_str().unwrap();
            let question = label.split(':').next().unwrap();
            let (start, end) = (
                row["start_frame"].as_u64().unwrap(),
                row["end_frame"].as_u64().unwrap(),
            );
            if question != "protocol header" {
                let asked = &all[&start];
                assert!(names(asked, question), "{label} at {start}: {asked}");
            }
            let answered = &all[&end];
            assert!(
                answers_to(question).iter().any(|a| names(answered, a)),
                "{label} answered at {end} by {answered}"
            );
            rows.push((start, end));
            turns += 1;
        }
    }
    // Every frame tshark shows with a synchronous request of the
    // client's is a turn, and every connection's protocol header.
    let requests = [
        "Connection.Start-Ok",
        "Connection.Open",
        "Connection.Close",
        "Channel.Open",
        "Channel.Close",
        "Queue.Declare",
        "Basic.Qos",
        "Basic.Consume",
        "Basic.Get",
    ];
    let asked = all
        .values()
        .filter(|info| requests.iter().any(|r| names(info, r)))
        .count();
    let connections = doc["connections"].as_array().unwrap().len();
    assert_eq!(turns, asked + connections);
    // The broker's deliveries (five acknowledged, two in no-ack mode)
    // begin and end no turn.
    let deliveries: Vec<u64> = all
        .iter()
        .filter(|(_, info)| names(info, "Basic.Deliver"))
        .map(|(f, _)| *f)
        .collect();
    assert_eq!(deliveries.len(), 7, "{deliveries:?}");
    for d in &deliveries {
        assert!(
            rows.iter().all(|(s, e)| s != d && e != d),
            "delivery {d} in a turn"
        );
    }
    // And nothing waited on the broker: RabbitMQ answered each request
    // within a few ms.
    for c in doc["connections"].as_array().unwrap() {
        assert_eq!(
            kinds_within(&c["findings"]),
            Vec::<&str>::new(),
            "stream {}",
            c["stream"]
        );
    }
}

#[test]
fn a_get_is_answered_with_its_message_or_get_empty() {
    if !require("amqp get", &["tshark"], false) {
        return;
    }
    let doc = run_rttdoc_json(&capture());
    let all = methods(&capture());
    let gets: Vec<String> = doc["connections"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(first_byte_rows)
        .filter(|r| r["label"] == "Basic.Get: request -> first byte")
        .map(|r| all[&r["end_frame"].as_u64().unwrap()].clone())
        .collect();
    assert_eq!(gets.len(), 2, "{gets:?}");
    assert!(names(&gets[0], "Basic.Get-Empty"), "{gets:?}");
    assert!(names(&gets[1], "Basic.Get-Ok"), "{gets:?}");
}
