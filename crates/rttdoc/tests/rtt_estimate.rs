//! The round trip of connections whose handshake the capture lacks in
//! part, on public captures read with tshark (docs/real-world.md, "Round
//! trips without a whole handshake").
//!
//! A sample of one direction (data and the ACK that covers it, a TSval
//! and its echo) times one side of the capture point only: at the near
//! side that is a host's turnaround, microseconds. Samples of both
//! directions, and the SYN to the first ACK after it, span the whole
//! round trip, and come first.

mod common;

use common::*;

#[test]
fn both_directions_timestamps_outrank_one_directions_data() {
    let Some(doc) = public_doc(
        "seladb-PcapPlusPlus",
        "ExamplesTest__pcap_examples__http-packets2.pcap",
    ) else {
        return;
    };
    // Stream 0 joins a keep-alive connection as the server (Yahoo) ends
    // it: its last data and FIN (2, 3), the client's ACK 0.09 ms later
    // (4) and its FIN (5), the server's ACK of that FIN 77 ms later (11,
    // tshark's ack_rtt 76.98 ms). The FIN carries no data, so the data
    // samples are the client's turnaround alone; the timestamps are
    // echoed both ways (the client's TSval of frame 4 in frame 11).
    let c = connection(&doc, 0);
    let rtt = c["rtt_ms"].as_f64().unwrap();
    assert!((76.0..80.0).contains(&rtt), "RTT {rtt} ms");
    assert_eq!(c["rtt_source"], "timestamps");
    assert_eq!(c["vantage"], "client");
}

#[test]
fn a_capture_of_the_clients_packets_times_the_syn_to_its_ack() {
    // raw_ip.pcap streams 2 and 5 and unidirectional_tcp_stream: the
    // client's packets only (SYN, the handshake's ACK, requests). The
    // ACK answers the SYN-ACK the capture lacks: one round trip, as
    // tshark's tcp.analysis.initial_rtt has it. Before, no RTT at all.
    for (name, streams) in [
        ("Pcap++Test__PcapExamples__raw_ip.pcap", &[2u64, 5][..]),
        (
            "Pcap++Test__PcapExamples__unidirectional_tcp_stream_with_missing_packet.pcap",
            &[0][..],
        ),
    ] {
        let Some(doc) = public_doc("seladb-PcapPlusPlus", name) else {
            return;
        };
        for &s in streams {
            let c = connection(&doc, s);
            assert_eq!(c["handshake"]["syn_ack_frame"], serde_json::Value::Null);
            let initial = c["tcp_handshake_ms"].as_f64().expect("an initial RTT");
            assert!(initial > 10.0, "{name} {s}: {initial} ms");
            assert_eq!(c["rtt_ms"].as_f64(), Some(initial), "{name} {s}");
            assert_eq!(c["rtt_source"], "handshake", "{name} {s}");
        }
    }
}
