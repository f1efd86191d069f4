//! Work queues and brokers through real servers and clients
//! (tests/data/queues, made by scripts/queue-captures.sh: beanstalkd,
//! RabbitMQ's AMQP 1.0 plugin with python-qpid-proton, ZooKeeper with
//! kazoo; real Linux TCP, 20 ms each way, tcpdump at the clients' host).
//! A worker's `reserve` asks beanstalkd to hold its answer until a job
//! comes, and an AMQP 1.0 receiver's dispositions ask for nothing: the
//! broker's deliveries come when the sender sends. Before beanstalk.rs
//! and amqp10.rs both were `server_think_time` (4.4 s and 2.3 s).

mod common;

use common::*;
use std::collections::BTreeMap;
use std::path::PathBuf;

fn capture(name: &str) -> PathBuf {
    data_dir().join("queues").join(name)
}

/// No connection of the capture has a finding of the server's think time.
fn no_think_time(doc: &serde_json::Value) {
    assert_no_finding(doc, "server_think_time");
}

#[test]
fn a_workers_reserve_is_held_for_a_job_not_the_servers_time() {
    if !require("queues: beanstalkd", &["tshark"], false) {
        return;
    }
    let cap = capture("beanstalkd.pcap.gz");
    let doc = run_rttdoc_json(&cap);
    no_think_time(&doc);
    let payloads = tshark_payloads(&cap);
    let line = |frame: u64| -> String {
        let bytes = &payloads[&frame].1;
        let end = bytes
            .iter()
            .position(|&b| b == b'\r')
            .unwrap_or(bytes.len());
        String::from_utf8_lossy(&bytes[..end]).into_owned()
    };
    let mut reserves = 0;
    for c in doc["connections"].as_array().unwrap() {
        for row in first_byte_rows(c) {
            let (start, end) = (
                row["start_frame"].as_u64().unwrap(),
                row["end_frame"].as_u64().unwrap(),
            );
            let (request, answer) = (line(start), line(end));
            let idle = row["ideal_rtts"] == row["rtts"];
            if request.starts_with("reserve") {
                // Held until a job came (RESERVED) or the timeout ended.
                reserves += 1;
                let command = request.split(' ').next().unwrap();
                assert_eq!(
                    row["label"].as_str().unwrap(),
                    format!("{command}: request -> first byte")
                );
                assert!(
                    answer.starts_with("RESERVED") || answer == "TIMED_OUT",
                    "{request} -> {answer}"
                );
                assert!(idle, "{row}");
            } else {
                // watch, put, delete: answered at once, the server's time.
                assert_eq!(row["ideal_rtts"], 1.0, "{request}: {row}");
            }
        }
    }
    assert_eq!(reserves, 4);
}

/// An AMQP 1.0 frame as tshark reads it: the sender's port, whether it
/// begins with a protocol header, and the performatives' and SASL
/// frames' codes in it.
struct Frame {
    port: u16,
    header_first: bool,
    codes: Vec<u64>,
}

#[test]
fn an_amqp_1_0_receivers_deliveries_answer_nothing() {
    if !require("queues: AMQP 1.0", &["tshark"], false) {
        return;
    }
    let cap = capture("amqp10.pcap.gz");
    let doc = run_rttdoc_json(&cap);
    no_think_time(&doc);
    let fields = [
        "frame.number",
        "tcp.srcport",
        "_ws.col.Info",
        "amqp.performative",
        "amqp.sasl.method",
    ];
    let frames: BTreeMap<u64, Frame> = tshark_fields(&cap, &[], "amqp", &fields)
        .into_iter()
        .map(|f| {
            let codes = [&f[3], &f[4]]
                .iter()
                .flat_map(|s| s.split(','))
                .filter_map(|x| x.parse().ok())
                .collect();
            let frame = Frame {
                port: f[1].parse().unwrap(),
                header_first: f[2].starts_with("Protocol-Header"),
                codes,
            };
            (f[0].parse().unwrap(), frame)
        })
        .collect();
    // What answers what the client asks (OASIS AMQP 1.0 2.7, 5.3): a
    // protocol header (None) the peer's, sasl-init (65) a challenge or the
    // outcome, open, begin, attach, close (16, 17, 18, 24) the same, a
    // transfer (20) a disposition (21).
    let answers = |asked: Option<u64>| -> Vec<Option<u64>> {
        match asked {
            None => vec![None],
            Some(65) => vec![Some(66), Some(68)],
            Some(20) => vec![Some(21)],
            Some(code) => vec![Some(code)],
        }
    };
    let mut turns = 0;
    for c in doc["connections"].as_array().unwrap() {
        for row in first_byte_rows(c) {
            let (start, end) = (
                row["start_frame"].as_u64().unwrap(),
                row["end_frame"].as_u64().unwrap(),
            );
            let (request, answer) = (&frames[&start], &frames[&end]);
            assert_ne!(request.port, 5672);
            assert_eq!(answer.port, 5672);
            let asked = if request.header_first {
                None
            } else {
                Some(request.codes[0])
            };
            let answered: Vec<Option<u64>> = if answer.header_first {
                vec![None]
            } else {
                answer.codes.iter().map(|c| Some(*c)).collect()
            };
            assert!(
                answers(asked).iter().any(|a| answered.contains(a)),
                "turn {start} -> {end}: {asked:?} answered by {answered:?}"
            );
            turns += 1;
        }
    }
    // The receiver's deliveries (the broker's transfers) were all there,
    // and none answered anything.
    let deliveries: Vec<u64> = frames
        .iter()
        .filter(|(_, f)| f.port == 5672 && f.codes.contains(&20))
        .map(|(n, _)| *n)
        .collect();
    assert_eq!(deliveries.len(), 4, "{deliveries:?}");
    for c in doc["connections"].as_array().unwrap() {
        for row in first_byte_rows(c) {
            assert!(!deliveries.contains(&row["end_frame"].as_u64().unwrap()));
        }
    }
    // Both connections' set-up and close, the sender's four messages.
    assert!(turns >= 12, "{turns}");
}

#[test]
fn a_zookeeper_watchs_notifications_answer_nothing() {
    // Watches fire as another session writes: the notification (xid -1)
    // is the server's, asked by nobody at that moment; before
    // zookeeper.rs each was the previous getData's "response transfer"
    // (1.0-1.5 s). Every turn is a request (named by its operation)
    // answered by the reply with its xid.
    if !require("queues: ZooKeeper", &["tshark"], false) {
        return;
    }
    let cap = capture("zookeeper.pcap.gz");
    let doc = run_rttdoc_json(&cap);
    let payloads = tshark_payloads(&cap);
    let xid = |frame: u64| -> i32 {
        let b = &payloads[&frame].1;
        i32::from_be_bytes([b[4], b[5], b[6], b[7]])
    };
    let notifications: Vec<u64> = payloads
        .iter()
        .filter(|(_, (ip, b))| ip == "10.81.2.1" && b.len() >= 8)
        .map(|(n, _)| *n)
        .filter(|n| xid(*n) == -1)
        .collect();
    assert_eq!(notifications.len(), 3, "{notifications:?}");
    let mut turns = 0;
    for c in doc["connections"].as_array().unwrap() {
        assert!(kinds(&c["findings"]).is_empty(), "{}", c["findings"]);
        for row in c["ledger"].as_array().unwrap() {
            let end = row["end_frame"].as_u64().unwrap();
            assert!(!notifications.contains(&end), "{row}");
        }
        for row in first_byte_rows(c) {
            let (start, end) = (
                row["start_frame"].as_u64().unwrap(),
                row["end_frame"].as_u64().unwrap(),
            );
            let label = row["label"].as_str().unwrap();
            // The session's connect (no xid), then requests and their
            // replies by xid.
            if !label.starts_with("connect:") {
                assert_eq!(xid(start), xid(end), "{label}: {start} -> {end}");
            }
            assert!(!label.starts_with("exchange"), "{label}");
            turns += 1;
        }
    }
    assert_eq!(turns, 13);
}
