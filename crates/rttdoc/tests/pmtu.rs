//! A hop narrower than both ends: `path_mtu`, not "find the loss".
//!
//! Producer: the Linux kernel (scripts/pmtu-captures.sh): curl fetches
//! 20 KB over TLS 1.3 from nginx (a 4096-bit RSA certificate, so the
//! server's first flight is more than a full segment) through a router
//! whose link to the client carries at most 1280 bytes, both ends at MTU
//! 1500. `icmp`: the router's "fragmentation needed" reaches the server,
//! which sends again at once, smaller. `probing`: the narrow link drops
//! what it cannot carry and tells no one (a black hole); the server
//! (tcp_mtu_probing=1) re-sends full size on its timer until it takes
//! the path for a black hole and goes smaller, seconds later.
//! `blackhole`: the same with tcp_mtu_probing=0 (never smaller; curl
//! gives up): from the server's link a black hole with less confidence. Each captured on the router's server link (`-server`, the
//! sender's copies) and on the client (`-client`, past the hop: what got
//! through).
//! Committed under tests/data/pmtu, re-made live when root.
//! `overlay-mtu-server`: a Kubernetes-style VXLAN overlay whose pods keep
//! MTU 1500 over the VXLAN's 1450 (scripts/overlay-captures.sh), captured
//! with `-i any` on the server pod's node, above the pod's segmentation
//! offload.

mod common;

use std::path::Path;

use common::*;

fn with_kind<'a>(c: &'a serde_json::Value, kind: &str) -> Vec<&'a serde_json::Value> {
    c["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == kind)
        .collect()
}

fn frames(f: &serde_json::Value) -> Vec<u64> {
    f["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect()
}

/// The server's data segments that tshark calls retransmissions: (frame,
/// time, bytes).
fn server_resends(capture: &Path) -> Vec<(u64, f64, u32)> {
    tshark_fields(
        capture,
        &[],
        "tcp.srcport == 443 && tcp.len > 0 && tcp.analysis.retransmission",
        &["frame.number", "frame.time_relative", "tcp.len"],
    )
    .iter()
    .map(|r| {
        (
            r[0].parse().unwrap(),
            r[1].parse().unwrap(),
            r[2].parse().unwrap(),
        )
    })
    .collect()
}

fn check(dir: &Path, suffix: &str) {
    let capture = |name: &str| dir.join(format!("{name}.pcap{suffix}"));
    for name in [
        "icmp-server",
        "icmp-client",
        "probing-server",
        "probing-client",
        "blackhole-server",
        "blackhole-client",
    ] {
        // Past the hop the first flight's first segment arrives after its
        // tail, which tshark reassembles only when told to.
        assert_agrees_with_tshark(&capture(name), &["-o", "tcp.reassemble_out_of_order:TRUE"]);
        let doc = run_rttdoc_json(&capture(name));
        assert!(
            display_filter_problems(&capture(name), &doc).is_empty(),
            "{name}: {:?}",
            display_filter_problems(&capture(name), &doc)
        );
    }

    // Path MTU discovery working: the router's ICMP, then smaller copies.
    let icmp = capture("icmp-server");
    let errors: Vec<u64> = tshark_fields(
        &icmp,
        &[],
        "icmp.type == 3 && icmp.code == 4",
        &["frame.number"],
    )
    .iter()
    .map(|r| r[0].parse().unwrap())
    .collect();
    assert!(
        !errors.is_empty(),
        "no fragmentation needed in {}",
        icmp.display()
    );
    let doc = run_rttdoc_json(&icmp);
    let c = connection(&doc, 0);
    let x = finding_in(c, "path_mtu", "tls_handshake");
    assert!(
        frames(x).contains(&errors[0]),
        "the router's word is cited: {x}"
    );
    let text = x["explanation"].as_str().unwrap();
    assert!(
        text.contains("1280 bytes") && text.contains("1448 bytes"),
        "{text}"
    );
    assert!(
        x["fix"].as_str().unwrap().contains("clamp-mss-to-pmtu"),
        "{x}"
    );
    // Every re-send of the server's is the narrow hop's.
    assert!(with_kind(c, "retransmission").is_empty(), "{c}");
    assert!(with_kind(c, "rto_stall").is_empty(), "{c}");

    // A black hole the server's timer found its way out of.
    let probing = capture("probing-server");
    let resends = server_resends(&probing);
    let smaller = resends
        .iter()
        .find(|r| r.2 + 40 < 1448)
        .expect("the server went smaller");
    let full: Vec<_> = resends.iter().filter(|r| r.2 == 1448).collect();
    assert!(full.len() >= 3, "timer re-sends at full size: {resends:?}");
    let doc = run_rttdoc_json(&probing);
    let c = connection(&doc, 0);
    let x = finding_in(c, "path_mtu", "tls_handshake");
    let cited = frames(x);
    for r in full.iter().map(|r| r.0).chain([smaller.0]) {
        assert!(cited.contains(&r), "{r} cited in {cited:?}");
    }
    // The cost is the handshake's hole: the silences before each re-send
    // up to the smaller copy, from the flight's tail (sent with the first
    // full-size copy, which tshark does not call a retransmission).
    let tail: f64 = tshark_fields(
        &probing,
        &[],
        &format!(
            "tcp.srcport == 443 && tcp.len > 0 && frame.number < {}",
            full[0].0
        ),
        &["frame.time_relative"],
    )
    .last()
    .unwrap()[0]
        .parse()
        .unwrap();
    let hole_ms = (smaller.1 - tail) * 1e3;
    let cost = x["cost_ms"].as_f64().unwrap();
    assert!(
        (cost - hole_ms).abs() < 1.0,
        "cost {cost} ms against the hole's {hole_ms} ms"
    );
    assert!(
        x["explanation"].as_str().unwrap().contains("black hole"),
        "{x}"
    );
    assert!(
        x["fix"].as_str().unwrap().contains("tcp_mtu_probing"),
        "{x}"
    );
    assert!(with_kind(c, "rto_stall").is_empty(), "{c}");
    // The handshake's excess is explained, by the narrow hop.
    let extra = finding_in(c, "tls_extra_rtt", "tls_handshake");
    assert!(
        extra["explanation"].as_str().unwrap().contains("path_mtu"),
        "{extra}"
    );
    assert_eq!(extra["fix"], x["fix"], "the costliest cause's fix");

    // Past the hop: a hole of one full segment, filled by smaller pieces,
    // and not one full-size segment of the server's arrived.
    for (name, hole_ms_at_least) in [("icmp-client", 0.0), ("probing-client", 2_000.0)] {
        let doc = run_rttdoc_json(&capture(name));
        let c = connection(&doc, 0);
        let x = finding_in(c, "path_mtu", "tls_handshake");
        // (A fill so quick after the ICMP that tshark calls it
        // out-of-order rather than a retransmission.)
        let fills: Vec<(u64, u32)> = tshark_fields(
            &capture(name),
            &[],
            "tcp.srcport == 443 && tcp.len > 0 \
             && (tcp.analysis.retransmission || tcp.analysis.out_of_order)",
            &["frame.number", "tcp.len"],
        )
        .iter()
        .map(|r| (r[0].parse().unwrap(), r[1].parse().unwrap()))
        .collect();
        assert!(!fills.is_empty(), "{name}: late fills");
        assert!(fills.iter().all(|r| r.1 + 40 < 1448), "{name}: {fills:?}");
        assert!(frames(x).contains(&fills[0].0), "{name}: {x}");
        assert!(
            x["cost_ms"].as_f64().unwrap() >= hole_ms_at_least,
            "{name}: {x}"
        );
        assert!(with_kind(c, "rto_stall").is_empty(), "{name}: {c}");
        assert!(with_kind(c, "retransmission").is_empty(), "{name}: {c}");
    }

    // Never smaller (tcp_mtu_probing=0): from the server's link, every
    // full-size copy unanswered while the flight's smaller tail passed
    // (the client's duplicate ACK): a black hole, said with less
    // confidence, as a path that died just after the tail looks the same.
    let blackhole = capture("blackhole-server");
    let full: Vec<u64> = server_resends(&blackhole)
        .iter()
        .filter(|r| r.2 == 1448)
        .map(|r| r.0)
        .collect();
    assert!(full.len() >= 3, "timer re-sends at full size: {full:?}");
    let doc = run_rttdoc_json(&blackhole);
    let c = connection(&doc, 0);
    let x = &with_kind(c, "path_mtu")[0];
    assert_eq!(x["confidence"], 0.7, "{x}");
    // (The handshake's finding: the copies before curl's FIN.)
    let fin: u64 = tshark_fields(
        &blackhole,
        &[],
        "tcp.dstport == 443 && tcp.flags.fin == 1",
        &["frame.number"],
    )[0][0]
        .parse()
        .unwrap();
    let cited = frames(x);
    for r in full.iter().filter(|r| **r < fin) {
        assert!(cited.contains(r), "{r} cited in {cited:?}");
    }
    assert!(
        x["explanation"]
            .as_str()
            .unwrap()
            .contains("tcp_mtu_probing=0"),
        "{x}"
    );
    assert!(with_kind(c, "rto_stall").is_empty(), "{c}");
    // The handshake never completed: its ledger row runs from the
    // ClientHello to the client's giving up (curl -m 6), and the black
    // hole is its cause.
    let row = c["ledger"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["phase"] == "tls_handshake")
        .expect("a TLS handshake row");
    assert_eq!(row["label"], "TLS handshake (never completed)", "{row}");
    assert!(row["excess_ms"].as_f64().unwrap() > 5_000.0, "{row}");
    assert_eq!(x["phase"], "tls_handshake", "{x}");

    // Past the hop: a hole of one full segment the client waited 6 s for,
    // nothing filling it, while the flight's smaller tail had arrived: the
    // same black hole, with the same caveat, the handshake's whole excess.
    let doc = run_rttdoc_json(&capture("blackhole-client"));
    let c = connection(&doc, 0);
    let x = finding_in(c, "path_mtu", "tls_handshake");
    assert_eq!(x["confidence"], 0.7, "{x}");
    assert!(x["cost_ms"].as_f64().unwrap() > 5_000.0, "{x}");
    assert!(c["unexplained_ms"].as_f64().unwrap() < 50.0, "{c}");
}

#[test]
fn committed_full_size_segments_a_narrow_hop_drops_are_path_mtu() {
    if !require(
        "committed_full_size_segments_a_narrow_hop_drops_are_path_mtu",
        &["tshark"],
        false,
    ) {
        return;
    }
    check(&data_dir().join("pmtu"), ".gz");
}

/// A capture of the same lab in which the server re-sent the smaller
/// copies within the handshake's round trip of its segment before
/// (scripts/pmtu-captures.sh, 1 run in a dozen on a veth path): at the
/// server's vantage the dropped bytes had passed in order, so the copy is
/// a re-send, whatever its timing says (tshark calls it out of order).
#[test]
fn committed_a_re_send_within_the_round_trip_is_path_mtu_all_the_same() {
    if !require(
        "committed_a_re_send_within_the_round_trip_is_path_mtu_all_the_same",
        &["tshark"],
        false,
    ) {
        return;
    }
    let dir = data_dir().join("pmtu-quick-resend");
    assert!(
        resend_within_a_round_trip(&dir.join("icmp-server.pcap.gz")),
        "the capture's re-send came within the round trip"
    );
    check(&dir, ".gz");
}

#[test]
fn live_full_size_segments_a_narrow_hop_drops_are_path_mtu() {
    if !require(
        "live_full_size_segments_a_narrow_hop_drops_are_path_mtu",
        &["tshark", "ip", "tcpdump", "nginx", "curl", "openssl"],
        true,
    ) {
        return;
    }
    // (On a path of a few microseconds the kernel re-sends the smaller
    // copies within the path's round trip of the segment after the one
    // dropped, which timing alone calls reordering: the capture at the
    // server saw the dropped bytes pass, so their copy is a re-send.)
    let dir = TempDir::new("pmtu");
    run_capture_script("pmtu-captures.sh", &[dir.0.as_os_str()]);
    check(&dir.0, ".gz");
}

/// The lab's and the other projects' captures with losses and re-sends
/// that no narrow hop made: none is a path MTU's.
#[test]
fn losses_on_paths_of_one_mtu_are_no_path_mtu() {
    for capture in [
        data_dir().join("lab/random-loss-nginx/client.pcapng.gz"),
        data_dir().join("lab/random-loss-nginx/server.pcapng.gz"),
        data_dir().join("close/closed.pcap.gz"),
        data_dir().join("close/halfclosed.pcap.gz"),
    ] {
        let doc = run_rttdoc_json(&capture);
        let resent = doc["connections"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| !with_kind(c, "retransmission").is_empty());
        assert!(resent, "{}: a control with re-sends", capture.display());
        assert_no_finding(&doc, "path_mtu");
    }
}

/// Whether the server's first copy of bytes it had sent came within the
/// handshake's round trip (SYN to ACK: Wireshark's initial RTT) of its
/// data segment before: timing cannot tell it from a late original.
fn resend_within_a_round_trip(capture: &Path) -> bool {
    let time = |r: &Vec<String>| r[0].parse::<f64>().unwrap();
    let handshake = tshark_fields(
        capture,
        &[],
        "tcp.stream == 0 && tcp.len == 0 && tcp.seq == 0 || tcp.stream == 0 && tcp.seq == 1 && tcp.ack == 1 && tcp.len == 0",
        &["frame.time_epoch"],
    );
    let (Some(syn), Some(ack)) = (handshake.first(), handshake.get(2)) else {
        return false;
    };
    let rtt = time(ack) - time(syn);
    let data = tshark_fields(
        capture,
        &[],
        "tcp.stream == 0 && tcp.srcport == 443 && tcp.len > 0",
        &["frame.time_epoch", "tcp.seq", "tcp.nxtseq"],
    );
    let mut highest = 0u64;
    for (i, r) in data.iter().enumerate() {
        let (seq, next): (u64, u64) = (r[1].parse().unwrap(), r[2].parse().unwrap());
        if seq < highest {
            return i > 0 && time(r) - time(&data[i - 1]) < rtt;
        }
        highest = highest.max(next);
    }
    false
}

/// The pod MTU misconfiguration of an overlay, seen on the server's node
/// (`-i any`, above the server pod's GSO): the node answers the pod's
/// too-large blocks with ICMP "fragmentation needed" (MTU 1450), and the
/// pod sends the bytes again at once, in blocks of the same length that
/// leave as smaller packets and pass. `path_mtu` from the ICMP, every
/// re-send after it the finding's (the blocks' too), and no claim that
/// the sender ignored the ICMP: the re-send was acknowledged.
#[test]
fn committed_an_overlay_pods_mtu_above_the_offload_is_path_mtu_honoured() {
    let capture = data_dir().join("pmtu/overlay-mtu-server.pcap.gz");
    let doc = run_rttdoc_json(&capture);
    let c = connection(&doc, 0);
    let found = with_kind(c, "path_mtu");
    assert_eq!(found.len(), 1, "{}", c["findings"]);
    let f = found[0];
    let text = f["explanation"].as_str().unwrap();
    assert!(
        text.contains("segmentation offload") && !text.contains("ignored"),
        "{text}"
    );
    assert!(
        with_kind(c, "retransmission").is_empty(),
        "{}",
        c["findings"]
    );
    // Its connection learned the path's MTU; the later two never hit it.
    for s in [1, 2] {
        assert!(with_kind(connection(&doc, s), "path_mtu").is_empty());
    }
    if !require(
        "committed_an_overlay_pods_mtu_above_the_offload_is_path_mtu_honoured",
        &["tshark"],
        false,
    ) {
        return;
    }
    // The first ICMP (tshark: its MTU 1450) is the evidence, and every
    // block of the server's re-sent before its acknowledged 1448-byte
    // re-send is cited: tshark's retransmissions of stream 0 up to it.
    let icmp = tshark_fields(&capture, &[], "icmp.mtu == 1450", &["frame.number"]);
    let first_icmp: u64 = icmp[0][0].parse().unwrap();
    let cited = frames(f);
    assert!(cited.contains(&first_icmp), "{cited:?} vs ICMP {icmp:?}");
    let last = *cited.iter().max().unwrap();
    let resent: Vec<u64> = tshark_fields(
        &capture,
        &[],
        "tcp.stream == 0 && tcp.srcport == 8080 && tcp.len > 0 && tcp.analysis.retransmission && sll.ifindex == 5",
        &["frame.number"],
    )
    .iter()
    .map(|r| r[0].parse().unwrap())
    .filter(|n| *n <= last)
    .collect();
    assert!(!resent.is_empty());
    for n in &resent {
        assert!(
            cited.contains(n),
            "tshark's re-send {n} not cited: {cited:?}"
        );
    }
}
