//! MQTT through a real broker (tests/data/mqtt, made by
//! scripts/mqtt-captures.sh: Mosquitto, mosquitto_sub and mosquitto_pub,
//! real Linux TCP, 20 ms each way, tcpdump at the clients' host). A
//! subscriber's acknowledgments ask for nothing, and the broker pushes a
//! message when another connection publishes it: no turn waits for a push,
//! and a push after a PINGRESP is no second write of that answer. A
//! retained message is the rest of a SUBSCRIBE's answer; with Nagle's
//! algorithm on (Mosquitto's default) it waits for the ACK of the SUBACK.
//! Each turn is checked against tshark's MQTT dissector: the request is
//! the question its label names, its first byte that question's answer.

mod common;

use common::*;
use std::collections::BTreeMap;
use std::path::Path;

/// MQTT's message types by number (tshark's `mqtt.msgtype`).
const NAMES: [&str; 16] = [
    "",
    "CONNECT",
    "CONNACK",
    "PUBLISH",
    "PUBACK",
    "PUBREC",
    "PUBREL",
    "PUBCOMP",
    "SUBSCRIBE",
    "SUBACK",
    "UNSUBSCRIBE",
    "UNSUBACK",
    "PINGREQ",
    "PINGRESP",
    "DISCONNECT",
    "AUTH",
];

/// The answer each question of a client's waits for.
fn answer_to(question: &str) -> &'static str {
    match question {
        "CONNECT" => "CONNACK",
        "SUBSCRIBE" => "SUBACK",
        "PINGREQ" => "PINGRESP",
        "PUBREL" => "PUBCOMP",
        // (mosquitto_pub publishes at QoS 1 and 2 here: PUBACK or PUBREC.)
        "PUBLISH" => "PUBACK|PUBREC",
        other => panic!("no question: {other}"),
    }
}

/// Each frame's MQTT messages as tshark reads them, segment by segment
/// (a message is shown where it begins): (type names, whether a PUBLISH
/// among them has RETAIN set).
fn messages(capture: &Path) -> BTreeMap<u64, (Vec<&'static str>, bool)> {
    // (On any port: tshark's MQTT dissector is told it is MQTT where the
    // broker is not on 1883.)
    let mut options = vec!["-o", "tcp.desegment_tcp_streams:FALSE"];
    if capture.ends_with("ndpi-mqtt-17501.pcap") {
        options.extend(["-d", "tcp.port==17501,mqtt"]);
    }
    let fields = ["frame.number", "mqtt.msgtype", "mqtt.retain"];
    tshark_fields(capture, &options, "mqtt", &fields)
        .into_iter()
        .map(|f| {
            let types = f[1]
                .split(',')
                .map(|t| NAMES[t.parse::<usize>().unwrap()])
                .collect();
            (
                f[0].parse().unwrap(),
                (types, f[2].split(',').any(|r| r == "1")),
            )
        })
        .collect()
}

fn capture(name: &str) -> std::path::PathBuf {
    data_dir().join("mqtt").join(name)
}

/// Checks every turn of every connection against tshark: the request's
/// first frame holds the question the label names, the first byte's frame
/// its answer. Returns how many turns there were.
fn assert_turns_are_mqtts(path: &Path, doc: &serde_json::Value) -> usize {
    let name = path.display();
    let all = messages(path);
    let mut turns = 0;
    for c in doc["connections"].as_array().unwrap() {
        for row in first_byte_rows(c) {
            let label = row["label"].as_str().unwrap();
            let question = label.split(':').next().unwrap();
            let (start, end) = (
                row["start_frame"].as_u64().unwrap(),
                row["end_frame"].as_u64().unwrap(),
            );
            let asked = &all
                .get(&start)
                .unwrap_or_else(|| panic!("{name}: {label} {start}"))
                .0;
            assert!(
                asked.contains(&question),
                "{name}: {label} at {start}: {asked:?}"
            );
            let answered = &all
                .get(&end)
                .unwrap_or_else(|| panic!("{name}: {label} {end}"))
                .0;
            assert!(
                answer_to(question)
                    .split('|')
                    .any(|a| answered.contains(&a)),
                "{name}: {label} answered at {end} by {answered:?}"
            );
            turns += 1;
        }
    }
    turns
}

#[test]
fn pushes_answer_no_turn_and_a_retained_message_answers_a_subscribe() {
    if !require("mqtt pushes", &["tshark"], false) {
        return;
    }
    let name = "mqtt-pubsub.pcap.gz";
    let doc = run_rttdoc_json(&capture(name));
    // CONNECT and SUBSCRIBE and the PINGREQ of the subscriber; CONNECT,
    // PUBLISH (PUBREL) of five publishers; the second subscriber's two.
    assert!(assert_turns_are_mqtts(&capture(name), &doc) >= 15);
    // The subscriber (stream 0) waited for nothing its turns asked:
    // pushes a second apart after its PUBACKs were think time, and a push
    // after its PINGRESP that left when the subscriber's ACK came, 0.3 ms
    // after the publisher's message reached the broker, a Nagle hold.
    let subscriber = connection(&doc, 0);
    assert_eq!(kinds(&subscriber["findings"]), Vec::<&str>::new());
    for c in doc["connections"].as_array().unwrap() {
        assert!(
            !kinds(&c["findings"]).contains(&"server_think_time"),
            "stream {}: {}",
            c["stream"],
            c["findings"]
        );
    }
    // The one finding: the retained message, written right after the
    // SUBACK, held until the client's ACK of it.
    let all = messages(&capture(name));
    let found: Vec<&serde_json::Value> = doc["connections"]
        .as_array()
        .unwrap()
        .iter()
        // (The clients connect one after another: tests/reuse.rs.)
        .flat_map(|c| findings_within(&c["findings"]))
        .collect();
    assert_eq!(found.len(), 1, "{found:?}");
    let f = found[0];
    assert_eq!(f["kind"], "write_write_read");
    let held = f["waits"][0]["to_frame"].as_u64().unwrap();
    let (types, retained) = &all[&held];
    assert!(types == &["PUBLISH"] && *retained, "{held}: {types:?}");
    let c = connection(&doc, f["stream"].as_u64().unwrap());
    let subscribe = first_byte_rows(c)
        .find(|r| r["label"] == "SUBSCRIBE: request -> first byte")
        .unwrap();
    let suback = subscribe["end_frame"].as_u64().unwrap();
    assert!(all[&suback].0.contains(&"SUBACK"));
    assert!(
        f["waits"][0]["from_frame"].as_u64().unwrap() == suback,
        "{f}"
    );
    assert!(
        f["fix"].as_str().unwrap().contains("set_tcp_nodelay true"),
        "{f}"
    );
}

#[test]
fn the_same_workload_with_tcp_nodelay_is_found_clean() {
    if !require("mqtt nodelay", &["tshark"], false) {
        return;
    }
    let name = "mqtt-nodelay.pcap.gz";
    let doc = run_rttdoc_json(&capture(name));
    assert!(assert_turns_are_mqtts(&capture(name), &doc) >= 15);
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
fn a_capture_begun_after_the_connect_on_another_port_is_read_as_mqtt() {
    // nDPI's coap_mqtt.pcap (a bus simulator's broker on port 17501, the
    // capture begun on a PINGREQ, no CONNECT): each side publishes at
    // QoS 1 and acknowledges the other's. Before mqtt.rs knew the stream
    // by its first message, the client's PUBACK "asked" for the broker's
    // next push: 7 s of `server_think_time` over the whole stream.
    if !require("mqtt: a broker on port 17501", &["tshark"], false) {
        return;
    }
    let path = data_dir()
        .join("other-projects")
        .join("ndpi-mqtt-17501.pcap");
    let doc = run_rttdoc_json(&path);
    assert!(assert_turns_are_mqtts(&path, &doc) >= 20);
    // What is left is the broker's acknowledgments of the client's
    // publishes, 5-11 ms each on a host-only VirtualBox network.
    let c = connection(&doc, 0);
    for (asked, answered, ms) in think_waits(c) {
        assert!(ms < 20.0, "{asked} -> {answered}: {ms} ms");
    }
}
