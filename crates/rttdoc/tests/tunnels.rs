//! TCP inside tunnels, unusual link layers and IP fragments: rttdoc must find
//! the inner connections with tshark's `tcp.stream` numbers, first and last
//! frames, handshake RTT and TLS version.
//!
//! Producers: the Linux kernel (VXLAN between network namespaces, captured on
//! the underlay by tcpdump; scripts/make-tunnel-captures.sh, committed under
//! tests/data/tunnels/ and re-made live when root), and public captures from
//! other projects (tcpdump's GSO VXLAN/Geneve, ARCnet and IPoIB tests,
//! PcapPlusPlus's GRE, 6in4, PPPoE and IP fragment examples).

mod common;

use std::path::{Path, PathBuf};

use common::*;

fn committed(name: &str) -> PathBuf {
    data_dir().join("tunnels").join(name)
}

fn public_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/captures/public")
}

/// Agreement with tshark, and at least `min_connections` found, so a
/// decoder that opens nothing cannot pass by agreeing on zero.
fn agrees(capture: &Path, min_connections: usize) {
    assert_agrees_with_tshark(capture, &[]);
    let found = rttdoc_streams(capture).len();
    assert!(
        found >= min_connections,
        "{}: {found} connections, expected at least {min_connections}",
        capture.display()
    );
}

#[test]
fn kernel_vxlan_inner_tcp_gets_tsharks_stream_numbers() {
    if !require(
        "kernel_vxlan_inner_tcp_gets_tsharks_stream_numbers",
        &["tshark"],
        false,
    ) {
        return;
    }
    // IPv4 and IPv6 underlays; the script makes two connections each.
    for name in ["vxlan4.pcap.gz", "vxlan6.pcap.gz"] {
        agrees(&committed(name), 2);
    }
}

#[test]
fn kernel_fragmented_vxlan_is_reassembled_on_the_completing_frame() {
    if !require(
        "kernel_fragmented_vxlan_is_reassembled_on_the_completing_frame",
        &["tshark"],
        false,
    ) {
        return;
    }
    let capture = committed("vxlan4-frag.pcap.gz");
    agrees(&capture, 2);
    let doc = run_rttdoc_json(&capture);
    let stats = &doc["capture"];
    assert!(
        stats["ip_reassembled"].as_u64().unwrap() > 0,
        "the kernel fragmented the outer packets, yet nothing was rebuilt: {stats}"
    );
    assert!(
        stats["ip_fragments"].as_u64().unwrap() >= 2 * stats["ip_reassembled"].as_u64().unwrap()
    );
}

#[test]
fn live_kernel_tunnels_agree_with_tshark() {
    if !require(
        "live_kernel_tunnels_agree_with_tshark",
        &["tshark", "ip", "tcpdump", "curl", "python3"],
        true,
    ) {
        return;
    }
    let dir = TempDir::new("tunnels");
    let stderr = run_capture_script("make-tunnel-captures.sh", &[dir.0.as_os_str()]);
    // Kinds the kernel lacks are skipped by the script (it says which);
    // VXLAN is in every kernel the tests run on.
    eprint!("{stderr}");
    let mut made: Vec<PathBuf> = std::fs::read_dir(&dir.0)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".pcap.gz"))
        .collect();
    made.sort();
    assert!(
        made.iter().any(|p| p.ends_with("vxlan4.pcap.gz")),
        "no VXLAN capture made: {stderr}"
    );
    for capture in &made {
        agrees(capture, 2);
    }
}

#[test]
fn public_tunnel_and_link_layer_captures_agree_with_tshark() {
    if !require(
        "public_tunnel_and_link_layer_captures_agree_with_tshark",
        &["tshark"],
        false,
    ) {
        return;
    }
    let dir = public_dir();
    if !dir.is_dir() {
        let msg = format!("public captures not found at {}", dir.display());
        assert!(!in_ci(), "{msg}");
        eprintln!("SKIPPED {msg}");
        return;
    }
    let tcpdump = "the-tcpdump-group-tcpdump";
    let ppp = "seladb-PcapPlusPlus";
    let cases: Vec<(String, usize)> = [
        // GSO super-packets in VXLAN and Geneve over both IP versions.
        "gso-ipv4-vxlan-ipv4",
        "gso-ipv4-vxlan-ipv6",
        "gso-ipv6-vxlan-ipv4",
        "gso-ipv6-vxlan-ipv6",
        "gso-ipv4-geneve-ipv4",
        "gso-ipv4-geneve-ipv6",
        "gso-ipv6-geneve-ipv4",
        "gso-ipv6-geneve-ipv6",
        // ARCnet, RFC 1051 and RFC 1201 encapsulation (Linux header).
        "arcnet-rfc1051-arp-icmp-http",
        "arcnet-rfc1201-arp-icmp-http",
    ]
    .iter()
    .map(|n| (format!("{tcpdump}/{n}.pcap"), 1))
    .chain([
        (format!("{tcpdump}/ipoib.pcap"), 6),
        // Link type 0x30000001: Ethernet with the pcap header's FCS bits set.
        (format!("{tcpdump}/heapoverflow-tcp_print.pcap"), 1),
        // PPTP: GRE version 1 with PPP, beside its TCP control connection.
        (format!("{ppp}/Pcap++Test__PcapExamples__GrePackets.cap"), 1),
        // FTP over IPv4 and over 6in4.
        (format!("{ppp}/Packet++Test__PacketExamples__Ftp.pcap"), 3),
        // QinQ, then PPPoE session, then PPP.
        (
            format!("{ppp}/Pcap++Test__PcapExamples__one_http_stream_rst.pcap"),
            1,
        ),
        // IPv4 fragments carrying an HTTP request.
        (
            format!("{ppp}/ExamplesTest__pcap_examples__frag_http_req.pcap"),
            1,
        ),
        (
            format!("{ppp}/ExamplesTest__expected_output__http_req_frag.pcap"),
            1,
        ),
        (
            format!("{ppp}/ExamplesTest__expected_output__ipfragutil_bpf_filter.pcap"),
            1,
        ),
        (
            format!("{ppp}/ExamplesTest__expected_output__ipfragutil_ip_ids.pcap"),
            2,
        ),
    ])
    .collect();
    for (file, min) in cases {
        agrees(&dir.join(file), min);
    }
}

/// An outer IPv4 header (192.0.2.1 -> 192.0.2.2) around `payload`.
fn outer_ipv4(protocol: u8, payload: &[u8]) -> Vec<u8> {
    let total = 20 + payload.len();
    let mut p = vec![
        0x45,
        0,
        (total >> 8) as u8,
        total as u8,
        0,
        7,
        0,
        0,
        64,
        protocol,
        0,
        0,
    ];
    p.extend_from_slice(&[192, 0, 2, 1, 192, 0, 2, 2]);
    p.extend_from_slice(payload);
    p
}

fn udp(src_port: u16, dst_port: u16, payload: &[u8]) -> Vec<u8> {
    let mut u = src_port.to_be_bytes().to_vec();
    u.extend_from_slice(&dst_port.to_be_bytes());
    u.extend_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
    u.extend_from_slice(&[0, 0]);
    u.extend_from_slice(payload);
    u
}

fn in_vxlan(inner_ip: &[u8]) -> Vec<u8> {
    let mut vx = vec![0x08, 0, 0, 0, 0, 0, 42, 0];
    vx.extend_from_slice(&ethernet(inner_ip, &[]));
    outer_ipv4(17, &udp(50000, 4789, &vx))
}

#[test]
fn damaged_tunnel_headers_are_counted_and_skipped_between_good_packets() {
    let dir = TempDir::new("tunnel-damage");
    let path = dir.path("damaged-tunnels.pcap");
    let (c, s) = ("10.0.0.1", "10.0.0.2");
    let syn = Tcp::new(c, 40000, s, 80).seq(100, 0).flags(SYN).ip();
    let syn_ack = Tcp::new(s, 80, c, 40000)
        .seq(500, 101)
        .flags(SYN | ACK)
        .ip();
    let ack = Tcp::new(c, 40000, s, 80).seq(101, 501).flags(ACK).ip();
    let mut deep = udp4(b"x");
    for _ in 0..12 {
        deep = outer_ipv4(4, &deep);
    }
    let damaged = [
        outer_ipv4(17, &udp(50000, 4789, &[0x08, 0, 0, 0])), // VXLAN header cut
        outer_ipv4(47, &[0x20, 0, 0x65, 0x58, 0, 0]),        // GRE key cut
        outer_ipv4(17, &udp(6081, 6081, &[0x3f, 0, 0x65, 0x58, 0, 0, 1, 0])), // Geneve options missing
        outer_ipv4(47, &[0, 0, 0x88, 0x47, 0, 1, 0, 64, 0, 2, 0, 64]), // MPLS stack without bottom
        outer_ipv4(47, &[0x10, 0, 0x22, 0xeb, 0, 0, 0, 1, 0x20, 0]),   // ERSPAN III cut
        outer_ipv4(17, &udp(1701, 1701, &[0x40, 0x02, 0])),            // L2TP length cut
        deep,                                                          // nested beyond the bound
    ];
    let mut packets = vec![pkt(0, in_vxlan(&syn))];
    packets.extend(
        damaged
            .iter()
            .enumerate()
            .map(|(i, d)| pkt(100 + i as i64, d.clone())),
    );
    packets.push(pkt(1000, in_vxlan(&syn_ack)));
    packets.push(pkt(2000, in_vxlan(&ack)));
    write_pcap(&path, 101, &packets, false, false, 65535);
    let doc = run_rttdoc_json(&path);
    assert_eq!(
        doc["capture"]["damaged"].as_u64(),
        Some(damaged.len() as u64),
        "{}",
        doc["capture"]
    );
    let conns = doc["connections"].as_array().unwrap();
    assert_eq!(conns.len(), 1);
    assert_eq!(
        (
            conns[0]["first_frame"].as_u64(),
            conns[0]["last_frame"].as_u64()
        ),
        (Some(1), Some(packets.len() as u64))
    );
    // The handshake survived the damage between its packets: SYN at 0,
    // ACK at 2 ms.
    assert_eq!(conns[0]["tcp_handshake_ms"].as_f64(), Some(2.0));
}
