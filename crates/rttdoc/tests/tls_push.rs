//! MQTT inside TLS (tests/data/mqtt/mqtt-tls.pcap.gz, made by
//! scripts/tls-push-captures.sh: Mosquitto's TLS listener on 8883 and its
//! own clients, 20 ms each way). Inside TLS a broker's pushes and its
//! answers are records of a size and a time: nothing tells a subscriber's
//! PUBACK from a question, nor a push from an answer (before, the
//! subscriber's acknowledgments "asked" for the next push: 4.7 s of
//! `server_think_time`). On the TLS port of a protocol whose server
//! pushes, no turns are timed after the handshake; the handshake is, and
//! so are the segments: Mosquitto's Nagle (its default) holds each
//! CONNACK behind the TLS 1.3 tickets until the client's delayed ACK.

mod common;

use common::*;
use std::path::PathBuf;

fn capture() -> PathBuf {
    data_dir().join("mqtt").join("mqtt-tls.pcap.gz")
}

#[test]
fn inside_tls_on_mqtts_port_only_the_handshakes_are_timed() {
    if !require("mqtt over tls", &["tshark"], false) {
        return;
    }
    let doc = run_rttdoc_json(&capture());
    let options = ["-d", "tcp.port==8883,tls"];
    let hellos = tshark_fields(
        &capture(),
        &options,
        "tls.handshake.type == 1",
        &["tcp.stream", "frame.number"],
    );
    let connections = doc["connections"].as_array().unwrap();
    assert_eq!(connections.len(), hellos.len(), "one ClientHello each");
    for c in connections {
        let stream = c["stream"].as_u64().unwrap();
        let labels: Vec<&str> = c["ledger"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["label"].as_str().unwrap())
            .collect();
        assert_eq!(
            labels,
            ["TCP handshake", "TLS handshake"],
            "stream {stream}"
        );
        let hello = hellos
            .iter()
            .find(|h| h[0] == stream.to_string())
            .map(|h| h[1].parse::<u64>().unwrap());
        assert_eq!(
            c["ledger"][1]["start_frame"].as_u64(),
            hello,
            "stream {stream}"
        );
        let found = kinds(&c["findings"]);
        assert!(
            !found.contains(&"server_think_time") && !found.contains(&"client_think_time"),
            "stream {stream}: {found:?}"
        );
    }
    // Not for want of data: the subscriber (stream 0) was pushed the five
    // messages after its handshake.
    let handshake_end = connection(&doc, 0)["ledger"][1]["end_frame"]
        .as_u64()
        .unwrap();
    let pushed = tshark_fields(
        &capture(),
        &options,
        &format!("tcp.stream == 0 && ip.src == 10.81.2.1 && tcp.len > 0 && frame.number > {handshake_end}"),
        &["frame.number"],
    );
    assert!(pushed.len() >= 5, "{pushed:?}");
}

#[test]
fn the_brokers_nagle_is_still_found_and_worded_as_mosquittos() {
    if !require("mqtt over tls", &["tshark"], false) {
        return;
    }
    let doc = run_rttdoc_json(&capture());
    let options = ["-d", "tcp.port==8883,tls"];
    for c in doc["connections"].as_array().unwrap() {
        let f = finding_in(c, "nagle_delayed_ack", "transfer");
        // The held segment is the broker's (a 26-byte record: a CONNACK in
        // TLS 1.3), released by the client's pure ACK.
        let held = f["waits"][0]["to_frame"].as_u64().unwrap();
        let released = f["waits"][0]["release_frame"].as_u64().unwrap();
        let frame = |n: u64| {
            tshark_fields(
                &capture(),
                &options,
                &format!("frame.number == {n}"),
                &["ip.src", "tcp.len"],
            )
            .remove(0)
        };
        assert_eq!(frame(held), ["10.81.2.1", "26"], "{f}");
        assert_eq!(frame(released), ["10.81.1.1", "0"], "{f}");
        assert!(
            f["fix"].as_str().unwrap().contains("set_tcp_nodelay"),
            "{f}"
        );
    }
}
