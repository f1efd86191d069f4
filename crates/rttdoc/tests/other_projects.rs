//! Captures from other projects' test data (tests/data/other-projects,
//! its README says where each is from): real traffic this machine cannot
//! make, read as tshark reads it.

mod common;

use common::*;

fn agrees(file: &str, min_connections: usize) -> std::path::PathBuf {
    agrees_with(file, min_connections, &[])
}

/// As `agrees`, with tshark's preferences `tshark_extra`.
fn agrees_with(file: &str, min_connections: usize, tshark_extra: &[&str]) -> std::path::PathBuf {
    let capture = data_dir().join("other-projects").join(file);
    assert_agrees_with_tshark(&capture, tshark_extra);
    let found = rttdoc_streams(&capture).len();
    assert!(
        found >= min_connections,
        "{file}: {found} connections, expected at least {min_connections}"
    );
    capture
}

#[test]
fn other_projects_tunnels_and_link_layers_agree_with_tshark() {
    if !require(
        "other_projects_tunnels_and_link_layers_agree_with_tshark",
        &["tshark"],
        false,
    ) {
        return;
    }
    for (file, min) in [
        // PPPoE, and L2TPv2 (UDP 1701) carrying PPP with IPv6 inside it:
        // one connection over each, and one more on the bare link.
        ("dpkt-nb6-http.pcap", 3),
        // 802.1Q frames, some inside a Cisco FabricPath header.
        ("ndpi-ajp.pcap", 2),
        // Cisco HDLC frames under the PPP link type.
        ("ndpi-BGP_Cisco_hdlc_slarp.pcap", 1),
        // 6in4, and an ICMPv6 error quoting a TCP header: a stream of its
        // own in tshark (stream 0), which every later number counts.
        ("ndpi-6in4tunnel.pcap", 6),
    ] {
        let capture = agrees(file, min);
        let doc = run_rttdoc_json(&capture);
        // Every frame in which tshark finds TCP is a segment here (but
        // for a header an ICMP error quotes: not a segment).
        let tcp_frames =
            tshark_fields(&capture, &[], "tcp && !icmp && !icmpv6", &["frame.number"]).len();
        assert_eq!(
            doc["capture"]["tcp_segments"].as_u64(),
            Some(tcp_frames as u64),
            "{file}: {}",
            doc["capture"]
        );
    }
}

#[test]
fn trailing_packets_and_retried_syns_keep_tsharks_streams_and_frames() {
    if !require(
        "trailing_packets_and_retried_syns_keep_tsharks_streams_and_frames",
        &["tshark"],
        false,
    ) {
        return;
    }
    // A SYN refused and sent again 0.5 s later, then accepted: one stream
    // (and the packets after it analysed, not dropped as late ones).
    let rtsp = agrees("ndpi-rtsp.pcap", 7);
    let doc = run_rttdoc_json(&rtsp);
    assert_eq!(
        doc["capture"]["late_packets"].as_u64(),
        Some(0),
        "{}",
        doc["capture"]
    );
    // A server's RST a round trip (175 ms) after the client's: on the
    // connection's report, its last frame as in tshark. (A ServerHello
    // whose first segment arrived after the second: tshark 4.0 reads it
    // only when asked to reassemble out-of-order segments; rttdoc does.)
    let viber = agrees_with(
        "ndpi-viber.pcap",
        10,
        &["-o", "tcp.reassemble_out_of_order:TRUE"],
    );
    let doc = run_rttdoc_json(&viber);
    assert_eq!(
        doc["capture"]["late_packets"].as_u64(),
        Some(0),
        "{}",
        doc["capture"]
    );
}
