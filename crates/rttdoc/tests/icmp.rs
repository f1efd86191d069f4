//! TCP headers quoted in ICMP errors: Wireshark gives each a `tcp.stream`
//! (the quoted packet's connection's, or a new one), and rttdoc's stream
//! numbers, frames and display filters must stay Wireshark's.
//!
//! Producer: the Linux kernel (scripts/icmp-captures.sh): a router
//! refusing a SYN with "administratively prohibited" (captured at the
//! client's link: the SYN's stream ends with the ICMP frame) and sending
//! "fragmentation needed" for a server's full-size segments (captured at
//! the server's link). Committed under tests/data/icmp, re-made live when
//! root.

mod common;

use std::path::Path;

use common::*;

fn check(dir: &Path, suffix: &str) {
    let client = dir.join(format!("client.pcap{suffix}"));
    let server = dir.join(format!("server.pcap{suffix}"));
    for capture in [&client, &server] {
        // Streams, first and last frames (ICMP frames included, as
        // tshark's `tcp.stream` includes them), RTT and TLS as tshark.
        assert_agrees_with_tshark(capture, &[]);
    }
    // The refused SYN: its stream's last frame is the router's error.
    let errors = tshark_fields(&client, &[], "icmp && tcp", &["frame.number", "tcp.stream"]);
    assert_eq!(
        errors.len(),
        1,
        "one ICMP error quoting the SYN: {errors:?}"
    );
    let (frame, stream): (u64, u64) =
        (errors[0][0].parse().unwrap(), errors[0][1].parse().unwrap());
    let doc = run_rttdoc_json(&client);
    let c = connection(&doc, stream);
    assert_eq!(c["last_frame"].as_u64(), Some(frame), "{c}");
    assert_eq!(c["client_to_server"]["packets"].as_u64(), Some(1));
    // The connect failed on the way: not a connection left open. Both
    // ways a lone SYN is reported (its facts alone, or as a connection
    // when its packets are graphed) say so.
    assert_eq!(c["ending"], "unreachable", "{c}");
    let graphed = run_rttdoc_json_with(&client, &["--series"]);
    assert_eq!(connection(&graphed, stream)["ending"], "unreachable");
    assert_eq!(connection(&doc, stream + 1)["ending"], "fin");
    // The server's segments drew "fragmentation needed": those frames are
    // the connection's, not segments, and no stream of their own.
    let needed = tshark_fields(
        &server,
        &[],
        "icmp.type == 3 && icmp.code == 4",
        &["frame.number"],
    );
    assert!(
        !needed.is_empty(),
        "no fragmentation-needed error in {}",
        server.display()
    );
    let doc = run_rttdoc_json(&server);
    assert_eq!(
        doc["connections"].as_array().unwrap().len(),
        1,
        "{}",
        doc["capture"]
    );
    let tcp = tshark_fields(&server, &[], "tcp && !icmp", &["frame.number"]).len();
    assert_eq!(doc["capture"]["tcp_segments"].as_u64(), Some(tcp as u64));
}

#[test]
fn committed_icmp_errors_quoting_tcp_keep_tsharks_streams() {
    if !require(
        "committed_icmp_errors_quoting_tcp_keep_tsharks_streams",
        &["tshark"],
        false,
    ) {
        return;
    }
    check(&data_dir().join("icmp"), ".gz");
}

#[test]
fn live_icmp_errors_quoting_tcp_keep_tsharks_streams() {
    if !require(
        "live_icmp_errors_quoting_tcp_keep_tsharks_streams",
        &["tshark", "ip", "tcpdump", "curl", "python3"],
        true,
    ) {
        return;
    }
    let dir = TempDir::new("icmp");
    run_capture_script("icmp-captures.sh", &[dir.0.as_os_str()]);
    check(&dir.0, "");
}
