//! rttdoc and tshark must agree, connection by connection, on: how many TCP
//! connections a capture holds, their tcp.stream numbers, the frames each
//! spans (so frame numbering and stream assignment both match), the initial
//! RTT (tcp.analysis.initial_rtt) and the negotiated TLS version.

mod common;

use common::*;

/// A client/server exchange with handshake, data both ways and FINs.
/// Times in microseconds from `t0`; returns IP packets with timestamps.
fn conversation(
    client: &str,
    cport: u16,
    server: &str,
    sport: u16,
    isn: (u32, u32),
    t0: i64,
) -> Vec<(i64, Vec<u8>)> {
    let (ci, si) = isn;
    let c = |seq: u32, ack: u32| Tcp::new(client, cport, server, sport).seq(seq, ack);
    let s = |seq: u32, ack: u32| Tcp::new(server, sport, client, cport).seq(seq, ack);
    let mss_ws = [2, 4, 0x05, 0xb4, 1, 3, 3, 7, 4, 2];
    vec![
        (t0, c(ci, 0).flags(SYN).options(&mss_ws).ip()),
        (
            t0 + 18_000,
            s(si, ci.wrapping_add(1))
                .flags(SYN | ACK)
                .options(&mss_ws)
                .ip(),
        ),
        (t0 + 36_100, c(ci.wrapping_add(1), si.wrapping_add(1)).ip()),
        (
            t0 + 36_200,
            c(ci.wrapping_add(1), si.wrapping_add(1))
                .flags(PSH | ACK)
                .payload(b"GET / HTTP/1.1\r\n\r\n")
                .ip(),
        ),
        (
            t0 + 54_000,
            s(si.wrapping_add(1), ci.wrapping_add(19))
                .flags(PSH | ACK)
                .payload(b"HTTP/1.1 200 OK\r\n\r\n")
                .ip(),
        ),
        (
            t0 + 72_000,
            c(ci.wrapping_add(19), si.wrapping_add(20))
                .flags(FIN | ACK)
                .ip(),
        ),
        (
            t0 + 90_000,
            s(si.wrapping_add(20), ci.wrapping_add(20))
                .flags(FIN | ACK)
                .ip(),
        ),
        (
            t0 + 108_000,
            c(ci.wrapping_add(20), si.wrapping_add(21)).ip(),
        ),
    ]
}

fn merge(mut a: Vec<(i64, Vec<u8>)>, b: Vec<(i64, Vec<u8>)>) -> Vec<(i64, Vec<u8>)> {
    a.extend(b);
    a.sort_by_key(|(t, _)| *t);
    a
}

const T0: i64 = 1_700_000_000_000_000;

#[test]
fn handmade_edge_cases_agree_with_tshark() {
    if !require(
        "handmade_edge_cases_agree_with_tshark",
        &["tshark", "gzip"],
        false,
    ) {
        return;
    }
    let dir = TempDir::new("edge");
    let mut files = Vec::new();

    // Two interleaved connections, one with a sequence-number wraparound,
    // big-endian nanosecond pcap, QinQ-tagged Ethernet.
    let packets = merge(
        conversation("10.0.0.1", 40001, "10.0.0.2", 443, (u32::MAX - 5, 1000), T0),
        conversation(
            "10.0.0.1",
            40002,
            "10.0.0.2",
            443,
            (77, u32::MAX - 2),
            T0 + 5_000,
        ),
    );
    let p: Vec<Packet> = packets
        .iter()
        .map(|(t, ip)| pkt(*t, ethernet(ip, &[100, 200])))
        .collect();
    let f = dir.path("be-nanos-qinq.pcap");
    write_pcap(&f, 1, &p, true, true, 262144);
    files.push(f.clone());
    let gz = dir.path("be-nanos-qinq.pcap.gz");
    gzip_file(&f, &gz);
    files.push(gz);

    // Port reuse: the same 4-tuple again with a new ISN after the first
    // connection closed; then a connection seen only from mid-stream.
    let mut packets = merge(
        conversation("192.168.1.5", 50000, "192.168.1.9", 80, (1000, 5000), T0),
        conversation(
            "192.168.1.5",
            50000,
            "192.168.1.9",
            80,
            (900_000, 7000),
            T0 + 200_000,
        ),
    );
    let mid = Tcp::new("192.168.1.5", 50001, "192.168.1.9", 80)
        .seq(123456, 654321)
        .flags(PSH | ACK);
    packets.push((T0 + 400_000, mid.payload(b"more data").ip()));
    packets.push((
        T0 + 410_000,
        Tcp::new("192.168.1.9", 80, "192.168.1.5", 50001)
            .seq(654321, 123465)
            .ip(),
    ));
    let p: Vec<Packet> = packets
        .iter()
        .map(|(t, ip)| pkt(*t, ethernet(ip, &[])))
        .collect();
    let f = dir.path("port-reuse-midstream.pcap");
    write_pcap(&f, 1, &p, false, false, 262144);
    files.push(f);

    // pcapng with two interfaces of different link types and resolutions
    // (Ethernet at us, Linux SLL2 at ns), UDP noise, an IP fragment,
    // packet comments, and IPv6 with a hop-by-hop extension header.
    let mut p = Vec::new();
    for (i, (t, ip)) in conversation("10.1.0.1", 33000, "10.1.0.2", 8443, (5, 9), T0)
        .into_iter()
        .enumerate()
    {
        p.push(Packet {
            ts_ns: t * 1000 + 123,
            data: sll2(&ip),
            orig_len: None,
            interface: 1,
        });
        if i == 2 {
            p.push(Packet {
                ts_ns: t * 1000 + 500,
                data: ethernet(&udp4(b"dns?"), &[]),
                orig_len: None,
                interface: 0,
            });
            let mut frag = udp4(b"fragment");
            frag[6] = 0x20;
            p.push(Packet {
                ts_ns: t * 1000 + 600,
                data: ethernet(&frag, &[]),
                orig_len: None,
                interface: 0,
            });
        }
    }
    for (t, ip) in conversation(
        "2001:db8::1",
        41000,
        "2001:db8::2",
        443,
        (10, 20),
        T0 + 1_000,
    ) {
        p.push(Packet {
            ts_ns: t * 1000,
            data: ethernet(&ip, &[]),
            orig_len: None,
            interface: 0,
        });
    }
    p.sort_by_key(|x| x.ts_ns);
    let f = dir.path("two-interfaces.pcapng");
    write_pcapng(&f, &[(1, 6), (276, 9)], &p);
    files.push(f);

    // BSD loopback (NULL, host order; LOOP, network order) and raw IP.
    for (name, linktype) in [("null.pcap", 0u32), ("loop.pcap", 108), ("raw.pcap", 101)] {
        let p: Vec<Packet> = conversation("127.0.0.1", 45000, "127.0.0.1", 8080, (1, 2), T0)
            .into_iter()
            .map(|(t, ip)| match linktype {
                0 => pkt(t, null_loopback(&ip, false)),
                108 => pkt(t, null_loopback(&ip, true)),
                _ => pkt(t, ip),
            })
            .collect();
        let f = dir.path(name);
        write_pcap(&f, linktype, &p, false, false, 262144);
        files.push(f);
    }

    // Snaplen 64: every payload is cut, lengths come from the IP header.
    let p: Vec<Packet> = conversation("10.2.0.1", 40000, "10.2.0.2", 80, (100, 200), T0)
        .into_iter()
        .map(|(t, ip)| Packet {
            ts_ns: t * 1000,
            orig_len: Some(ip.len() + 14),
            data: ethernet(&ip, &[]),
            interface: 0,
        })
        .collect();
    let f = dir.path("snaplen64.pcap");
    write_pcap(&f, 1, &p, false, false, 64);
    files.push(f);

    for f in &files {
        assert_agrees_with_tshark(f, &[]);
    }
}

/// A plain pcap file of a Linux DSA switch's link types (LINKTYPE_DSA_TAG_*:
/// 281, 282, 284, 285), from its file header's link type.
fn dsa_link_type(path: &std::path::Path) -> bool {
    use std::io::Read;
    let mut bytes = [0u8; 24];
    let read = std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut bytes));
    let pcap = read.is_ok() && bytes[..4] == [0xd4, 0xc3, 0xb2, 0xa1];
    pcap && matches!(
        u32::from_le_bytes([bytes[20], bytes[21], bytes[22], bytes[23]]),
        281 | 282 | 284 | 285
    )
}

#[test]
fn bundled_captures_agree_with_tshark() {
    if !require("bundled_captures_agree_with_tshark", &["tshark"], false) {
        return;
    }
    let mut checked = 0;
    let mut files = Vec::new();
    let mut dirs = vec![data_dir()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() && !path.ends_with("malformed") {
                dirs.push(path);
            } else {
                files.push(path);
            }
        }
    }
    for path in files {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if dsa_link_type(&path) {
            // tshark 4.0 reads no DSA switch tags: other_projects.rs checks
            // those captures against tcpdump.
            continue;
        }
        if name.ends_with(".pcap") || name.ends_with(".pcapng") || name.ends_with(".pcap.gz") {
            // Lab and loopback fixtures use high ports: tell tshark which carry TLS
            // (tls-start: which carry the protocols TLS starts inside).
            let tls_start = [
                "tcp.port==4433,tls",
                "tcp.port==25,tls",
                "tcp.port==8888,http",
                "tcp.port==1081,socks",
                "tcp.port==1082,socks",
                "tcp.port==2525,smtp",
                "tcp.port==1143,imap",
                "tcp.port==1110,pop",
                "tcp.port==5433,pgsql",
                "tcp.port==2121,tls",
            ];
            let mut args = vec!["-d", "tcp.port==8080,tls", "-d", "tcp.port==18443,tls"];
            if path.parent().is_some_and(|d| d.ends_with("tls-start")) {
                args.extend(tls_start.iter().flat_map(|d| ["-d", *d]));
            }
            // tshark reads the TLS handshake inside OpenVPN's control
            // packets; rttdoc takes the tunnel for a tunnel and reads no
            // TLS in it (docs/real-world.md, "A tunnel over TCP").
            if path.parent().is_some_and(|d| d.ends_with("openvpn")) {
                args.extend(["--disable-protocol", "openvpn"]);
            }
            // Other projects' captures hold segments captured out of
            // order, and so do those taken past a narrow hop (pmtu*: a
            // flight's tail arrives before its first segment's smaller
            // re-sends); tshark 4.0 reads a TLS message begun in one only
            // when asked to reassemble them (rttdoc always does).
            let dir = path.parent().and_then(|d| d.file_name());
            let dir = dir.and_then(|d| d.to_str()).unwrap_or("");
            if dir == "other-projects" || dir.starts_with("pmtu") {
                args.extend(["-o", "tcp.reassemble_out_of_order:TRUE"]);
            }
            assert_agrees_with_tshark(&path, &args);
            checked += 1;
        }
    }
    assert!(checked > 0, "no bundled captures found in tests/data");
}
