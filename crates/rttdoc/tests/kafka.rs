//! Apache Kafka through a real broker and real clients (tests/data/kafka,
//! made by scripts/kafka-captures.sh: Kafka 4.1.1 in KRaft mode, the Java
//! client and librdkafka; real Linux TCP, 20 ms each way, tcpdump at the
//! clients' host). A consumer's Fetch asks the broker to hold its answer
//! until records come or `max_wait_ms` (500 ms) passes, and a group's
//! JoinGroup waits out the group's rebalance delay (3 s): before
//! kafka.rs, an idle consumer's Fetches were 6 s of `server_think_time`.
//! Each turn is checked against tshark's Kafka dissector: it begins with
//! a request and ends with the response of that request's correlation
//! id, named by the request's API.

mod common;

use common::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn capture(name: &str) -> PathBuf {
    data_dir().join("kafka").join(name)
}

const PORT: u16 = 9092;
/// The APIs whose requests ask the broker to hold its answer.
const FETCH: u16 = 1;
const JOIN_GROUP: u16 = 11;

/// A request as tshark reads it: its API's key and name (from the Info
/// column: "Kafka Fetch v18 Request"), its correlation id, and the frame
/// of the broker's response with that id, when one came.
#[derive(Debug, Clone)]
struct Request {
    key: u16,
    name: String,
    response: Option<u64>,
}

/// Each connection's requests by the frame they begin in. tshark reads
/// each segment alone (no reassembly), so a message's header is found in
/// the frame it begins in, where rttdoc's turns begin and end.
fn requests(capture: &Path) -> BTreeMap<u64, Request> {
    let options = [
        "-o",
        "tcp.desegment_tcp_streams:FALSE",
        "-d",
        "tcp.port==9092,kafka",
    ];
    let fields = [
        "frame.number",
        "tcp.stream",
        "tcp.srcport",
        "kafka.request_key",
        "kafka.correlation_id",
        "_ws.col.Info",
    ];
    let rows = tshark_fields(capture, &options, "kafka", &fields);
    // (stream, correlation id) -> request frame
    let mut asked: BTreeMap<(u64, i64), u64> = BTreeMap::new();
    let mut all = BTreeMap::new();
    for f in rows {
        let frame: u64 = f[0].parse().unwrap();
        let stream: u64 = f[1].parse().unwrap();
        let ids: Vec<i64> = f[4].split(',').filter_map(|x| x.parse().ok()).collect();
        if f[2] == PORT.to_string() {
            for id in ids {
                if let Some(r) = asked.remove(&(stream, id)) {
                    all.get_mut(&r)
                        .map(|q: &mut Request| q.response.get_or_insert(frame));
                }
            }
            continue;
        }
        let Some(key) = f[3].split(',').next().and_then(|k| k.parse().ok()) else {
            continue;
        };
        // "Kafka Fetch v18 Request [...]": tshark's name of the first
        // request (its ListOffsets is "Offsets").
        let name = f[5]
            .strip_prefix("Kafka ")
            .and_then(|s| s.split(' ').next())
            .map(|n| if n == "Offsets" { "ListOffsets" } else { n })
            .unwrap()
            .to_string();
        all.insert(
            frame,
            Request {
                key,
                name,
                response: None,
            },
        );
        for id in ids {
            asked.insert((stream, id), frame);
        }
    }
    all
}

/// Checks every first-byte row of every connection against tshark: it
/// begins with a request's first segment, is named by that request's API,
/// and ends with the response of the request's correlation id (the
/// broker answers a connection's requests in order: a turn of several
/// requests is answered first by its first). A Fetch held more than the
/// round trip's share and a JoinGroup held for the group are idle, the
/// other requests' time the broker's. Every answered request begins a
/// turn or rides in one. Returns the turns: (request frame, answer frame,
/// API key, took ms, idle).
fn check_turns(doc: &serde_json::Value, all: &BTreeMap<u64, Request>) -> Vec<Turn> {
    let mut turns = Vec::new();
    for c in doc["connections"].as_array().unwrap() {
        let rtt = c["rtt_ms"].as_f64().unwrap();
        for row in first_byte_rows(c) {
            let (start, end) = (
                row["start_frame"].as_u64().unwrap(),
                row["end_frame"].as_u64().unwrap(),
            );
            let request = all
                .get(&start)
                .unwrap_or_else(|| panic!("turn at {start} begins with no request"));
            assert_eq!(
                row["label"].as_str().unwrap(),
                format!("{}: request -> first byte", request.name),
                "frame {start}"
            );
            assert_eq!(request.response, Some(end), "turn {start}: {request:?}");
            let took = row["duration_ms"].as_f64().unwrap();
            let idle = row["ideal_rtts"] == row["rtts"];
            let held = took > rtt + 100.0;
            match request.key {
                FETCH if held => assert!(idle, "a held Fetch at {start}: {row}"),
                JOIN_GROUP if held => assert!(idle, "a held JoinGroup at {start}: {row}"),
                FETCH | JOIN_GROUP | 14 => {}
                _ => assert_eq!(
                    row["ideal_rtts"], 1.0,
                    "the broker's time at {start}: {row}"
                ),
            }
            turns.push(Turn {
                start,
                end,
                key: request.key,
                took,
                idle,
            });
        }
    }
    for (f, r) in all.iter().filter(|(_, r)| r.response.is_some()) {
        assert!(
            turns.iter().any(|t| t.start <= *f && *f < t.end),
            "request {f} ({}) in no turn",
            r.name
        );
    }
    turns
}

#[derive(Debug)]
struct Turn {
    start: u64,
    end: u64,
    key: u16,
    took: f64,
    idle: bool,
}

/// No connection of the capture has a finding of the server's think time.
fn no_think_time(doc: &serde_json::Value) {
    assert_no_finding(doc, "server_think_time");
}

#[test]
fn an_idle_consumers_held_fetches_are_its_own_wait_not_the_brokers() {
    if !require("kafka: consumer", &["tshark"], false) {
        return;
    }
    for name in ["kafka-consumer-idle.pcap.gz", "kafka-librdkafka.pcap.gz"] {
        let cap = capture(name);
        let doc = run_rttdoc_json(&cap);
        let all = requests(&cap);
        let turns = check_turns(&doc, &all);
        no_think_time(&doc);
        // Twelve Fetches answered empty after the broker's 500 ms, each a
        // turn of its own, idle.
        let held: Vec<&Turn> = turns
            .iter()
            .filter(|t| t.key == FETCH && t.took > 500.0)
            .collect();
        assert!(held.len() >= 12, "{name}: {held:?}");
        assert!(held.iter().all(|t| t.idle), "{name}");
        // The Produce requests of the producer beside it are the broker's
        // time, counted.
        assert!(
            turns.iter().any(|t| t.key == 0 && !t.idle),
            "{name}: {turns:?}"
        );
    }
}

#[test]
fn a_groups_join_held_for_the_rebalance_delay_is_no_think_time() {
    if !require("kafka: group", &["tshark"], false) {
        return;
    }
    let cap = capture("kafka-group.pcap.gz");
    let doc = run_rttdoc_json(&cap);
    let all = requests(&cap);
    let turns = check_turns(&doc, &all);
    no_think_time(&doc);
    // The member's second JoinGroup waited out the 3 s delay.
    let join: Vec<&Turn> = turns.iter().filter(|t| t.key == JOIN_GROUP).collect();
    assert_eq!(join.len(), 2, "{join:?}");
    assert!(join[1].took > 3000.0 && join[1].idle, "{join:?}");
    // The coordinator's other answers (SyncGroup, OffsetFetch, Heartbeat,
    // OffsetCommit, LeaveGroup) are turns of their own.
    for key in [14, 9, 12, 8, 13] {
        assert!(turns.iter().any(|t| t.key == key), "API {key}: {turns:?}");
    }
}

#[test]
fn a_producers_requests_in_flight_are_answered_in_order() {
    if !require("kafka: producer", &["tshark"], false) {
        return;
    }
    let cap = capture("kafka-producer.pcap.gz");
    let doc = run_rttdoc_json(&cap);
    let all = requests(&cap);
    let turns = check_turns(&doc, &all);
    no_think_time(&doc);
    // 20 Produce requests one at a time and the burst: five in flight in
    // one turn, then the last one's own turn (check_turns: each ends at
    // its request's response, not at the answers to the five before it).
    let produce: Vec<&Turn> = turns.iter().filter(|t| t.key == 0).collect();
    assert_eq!(produce.len(), 22, "{produce:?}");
    let burst = produce[20];
    let in_flight = all
        .range(burst.start..burst.end)
        .filter(|(_, r)| r.key == 0)
        .count();
    assert_eq!(in_flight, 5, "{burst:?}");
    // Every Produce was answered within the round trip and a few ms of
    // the broker's: no turn idle.
    assert!(produce.iter().all(|t| !t.idle && t.took < 100.0));
}

#[test]
fn inside_tls_a_consumers_held_fetches_make_no_turns() {
    // The same consumer over TLS 1.3 (the broker's SSL listener on 9093,
    // the Java client offering no ALPN): its records' sizes and times
    // cannot tell a held Fetch from a slow answer, so no turns are made
    // of them; the handshakes are still timed. (Before: 6.23 s of
    // `server_think_time` on the consumer's connection to its broker.)
    if !require("kafka: TLS", &["tshark"], false) {
        return;
    }
    let cap = capture("kafka-tls.pcap.gz");
    let doc = run_rttdoc_json(&cap);
    // Only the handshakes' turns are timed: the broker's ServerHello,
    // where it took long by its own clock (stream 1: its ACK of the
    // ClientHello, 29, and its ServerHello, 30, 23 ticks of 1 ms apart:
    // a Java TLS engine's key exchange and signature).
    for c in doc["connections"].as_array().unwrap() {
        for f in c["findings"].as_array().unwrap() {
            if f["kind"] == "server_think_time" {
                assert_eq!(f["phase"], "tls_handshake", "{f}");
                // (From the question to the answer; the evidence cites
                // the server's ACK between them.)
                let frames = frames_of(f);
                let (question, answer) = (frames[0], *frames.last().unwrap());
                let server = tshark_fields(
                    &cap,
                    &[],
                    &format!(
                        "tcp.stream eq {} && tcp.srcport == 9093 && frame.number > {} && frame.number <= {}",
                        c["stream"], question, answer
                    ),
                    &["tcp.options.timestamp.tsval"],
                );
                let ticks = |row: &Vec<String>| row[0].parse::<i64>().unwrap();
                let took = ticks(server.last().unwrap()) - ticks(&server[0]);
                assert!(
                    took as f64 + 1.0 >= f["cost_ms"].as_f64().unwrap(),
                    "{took} ticks: {f}"
                );
            }
        }
    }
    // tshark: every connection a TLS 1.3 handshake on 9093, and the
    // consumer's many application records.
    let hellos = tshark_fields(
        &cap,
        &["-d", "tcp.port==9093,tls"],
        "tls.handshake.type == 1",
        &["tcp.stream", "tls.handshake.extensions_alpn_str"],
    );
    let connections = doc["connections"].as_array().unwrap();
    assert_eq!(hellos.len(), connections.len());
    assert!(
        hellos.iter().all(|h| h[1].is_empty()),
        "no ALPN: {hellos:?}"
    );
    let records = tshark_fields(
        &cap,
        &["-d", "tcp.port==9093,tls"],
        "tls.record.opaque_type == 23 && tcp.dstport == 9093",
        &["frame.number"],
    );
    assert!(records.len() > 20, "{}", records.len());
    for c in connections {
        assert_eq!(c["exchanges"], 0, "stream {}", c["stream"]);
        assert!(first_byte_rows(c).next().is_none());
        assert_eq!(c["tls"]["version"], "TLS 1.3");
        let phases: Vec<&str> = c["ledger"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["phase"].as_str().unwrap())
            .collect();
        assert_eq!(phases, ["tcp_handshake", "tls_handshake"]);
    }
}

#[test]
fn a_produce_without_acks_asks_nothing() {
    // kafka-python 3.0.12 (Produce v9, Fetch v12, flexible headers): five
    // Produce requests with acks=0, which the broker never answers, then
    // three with acks=1 and a consumer's held Fetches. The unanswered
    // ones begin no turn and ride in none; every other turn checks out
    // against tshark.
    if !require("kafka: kafka-python", &["tshark"], false) {
        return;
    }
    let cap = capture("kafka-python.pcap.gz");
    let doc = run_rttdoc_json(&cap);
    let all = requests(&cap);
    let turns = check_turns(&doc, &all);
    no_think_time(&doc);
    let unanswered: Vec<u64> = all
        .iter()
        .filter(|(_, r)| r.key == 0 && r.response.is_none())
        .map(|(f, _)| *f)
        .collect();
    assert_eq!(unanswered.len(), 5, "{unanswered:?}");
    for f in &unanswered {
        assert!(
            !turns.iter().any(|t| t.start <= *f && *f < t.end),
            "acks=0 Produce {f} in a turn: {turns:?}"
        );
    }
    // Its connection's turns are its ApiVersions and Metadata, both
    // answered: the five asked nothing, not an unanswered turn of their
    // own.
    let producer = doc["connections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| {
            let (first, last) = (c["first_frame"].as_u64(), c["last_frame"].as_u64());
            first <= Some(unanswered[0]) && Some(unanswered[0]) <= last
        })
        .unwrap();
    assert_eq!(producer["exchanges"], first_byte_rows(producer).count());
    let answered_produce = turns.iter().filter(|t| t.key == 0).count();
    assert_eq!(answered_produce, 6);
    let held = turns
        .iter()
        .filter(|t| t.key == FETCH && t.took > 500.0)
        .count();
    assert!(held >= 11, "{turns:?}");
}

#[test]
fn kafka_gos_consumer_group_against_a_broker_in_docker() {
    // segmentio/kafka-go's fixture v2-v2.pcapng (MIT): a Go consumer's
    // group life against a broker in Docker (0.04-0.3 ms path). The held
    // Fetches and the JoinGroups are idle; the coordinator's and the
    // log's own answers (OffsetFetch 11 ms, ListOffsets 14 ms,
    // OffsetCommit 25 ms, LeaveGroup 22 ms) are the broker's time.
    if !require("kafka: kafka-go", &["tshark"], false) {
        return;
    }
    let cap = data_dir()
        .join("other-projects")
        .join("kafkago-v2-v2.pcapng");
    let doc = run_rttdoc_json(&cap);
    let all = requests(&cap);
    let turns = check_turns(&doc, &all);
    assert!(turns.iter().any(|t| t.key == FETCH && t.idle), "{turns:?}");
    let mut timed: Vec<u16> = Vec::new();
    for c in doc["connections"].as_array().unwrap() {
        for (asked, _, ms) in think_waits(c) {
            assert!((5.0..30.0).contains(&ms), "{asked}: {ms} ms");
            timed.push(all[&asked].key);
        }
    }
    timed.sort_unstable();
    // ListOffsets (2), OffsetCommit (8), OffsetFetch (9), LeaveGroup (13).
    assert_eq!(timed, [2, 8, 9, 13]);
}
