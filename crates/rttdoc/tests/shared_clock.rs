//! Server addresses that answered a client on one TCP clock
//! (`handshake.shared_clock_servers`, shared_clock.rs in rttdoc-analyze),
//! checked against tshark's reading of two captures nobody here made:
//! PcapPlusPlus's example.pcap, a browser in 2013 whose SYN-ACKs from
//! three Akamai addresses carry one 1 kHz clock, offset and all (one edge
//! server answering for all three), while the other servers' clocks are
//! their own; and the first 500 frames of nDPI's tumblr.pcap, a phone behind a
//! carrier's split-TCP proxy whose one clock stamps every server's
//! segments, the capture begun after half of the handshakes.
//!
//! The oracle reads with tshark each connection's clock where rttdoc
//! does: the TSval of its server's first segment (its SYN-ACK, or its
//! first data when the capture missed the handshake), the server being
//! the end rttdoc's JSON names. For each connection it counts the server
//! addresses whose readings to the same client agree with its own at one
//! standard tick rate within 5 ms and a tick: counted over the readings up
//! to the connection's last frame (all of those rttdoc has seen when it
//! hands the connection on) it is the least rttdoc may say, over the whole
//! capture the most.

mod common;

use common::*;
use std::collections::BTreeMap;
use std::process::Command;

/// One connection's reading of its server's clock, as tshark shows it.
struct Reading {
    frame: u64,
    ts_ns: i64,
    client: String,
    server: String,
    tsval: u32,
}

/// Each connection's reading: the first segment of the end rttdoc calls
/// its server, when that segment carries timestamps.
fn readings(capture: &std::path::Path, doc: &serde_json::Value) -> BTreeMap<u64, Reading> {
    let out = Command::new("tshark")
        .arg("-r")
        .arg(capture)
        .args(["-Y", "tcp", "-T", "fields"])
        .args([
            "-e",
            "tcp.stream",
            "-e",
            "frame.number",
            "-e",
            "frame.time_epoch",
        ])
        .args(["-e", "ip.src", "-e", "ipv6.src", "-e", "tcp.srcport"])
        .args(["-e", "tcp.options.timestamp.tsval"])
        .output()
        .expect("tshark");
    let servers: BTreeMap<u64, (String, String, u64)> = doc["connections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let ip = |end: &str| c[end]["ip"].as_str().unwrap().to_string();
            let port = c["server"]["port"].as_u64().unwrap();
            (
                c["stream"].as_u64().unwrap(),
                (ip("client"), ip("server"), port),
            )
        })
        .collect();
    let mut first: BTreeMap<u64, Option<Reading>> = BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let f: Vec<&str> = line.split('\t').collect();
        let stream: u64 = f[0].parse().unwrap();
        let Some((client, server, port)) = servers.get(&stream) else {
            continue;
        };
        let src = if f[3].is_empty() { f[4] } else { f[3] };
        if src != server || f[5].parse::<u64>().ok() != Some(*port) || first.contains_key(&stream) {
            continue;
        }
        let epoch: f64 = f[2].parse().unwrap();
        let reading = f[6].parse().ok().map(|tsval| Reading {
            frame: f[1].parse().unwrap(),
            ts_ns: (epoch * 1e9).round() as i64,
            client: client.clone(),
            server: server.clone(),
            tsval,
        });
        first.insert(stream, reading);
    }
    first
        .into_iter()
        .filter_map(|(stream, r)| Some((stream, r?)))
        .collect()
}

/// Server addresses, `of`'s among them, whose readings in `all` (up to
/// frame `until`) answered `of`'s client on its clock: the most at one
/// rate.
fn sharing(all: &BTreeMap<u64, Reading>, of: &Reading, until: u64) -> usize {
    [1000i64, 250, 100, 300, 200, 500]
        .into_iter()
        .map(|hz| {
            let slack = hz * 5 / 1000 + 1;
            let mut servers: Vec<&str> = all
                .values()
                .filter(|s| s.frame <= until && s.client == of.client && s.server != of.server)
                .filter(|s| {
                    let expected = (s.ts_ns - of.ts_ns) as i128 * hz as i128 / 1_000_000_000;
                    let ticks = s.tsval.wrapping_sub(of.tsval) as i32 as i128;
                    (ticks - expected).abs() <= slack as i128
                })
                .map(|s| s.server.as_str())
                .collect();
            servers.sort_unstable();
            servers.dedup();
            servers.len() + 1
        })
        .max()
        .unwrap_or(1)
}

/// Checks every connection of `capture` against the oracle; returns the
/// streams rttdoc marks.
fn check(capture: &std::path::Path) -> Vec<u64> {
    let doc = run_rttdoc_json(capture);
    let all = readings(capture, &doc);
    let mut flagged = Vec::new();
    for c in doc["connections"].as_array().unwrap() {
        let stream = c["stream"].as_u64().unwrap();
        let said = c["handshake"]["shared_clock_servers"].as_u64();
        let Some(own) = all.get(&stream) else {
            assert_eq!(
                said, None,
                "stream {stream}: no server segment with timestamps"
            );
            continue;
        };
        let last = c["last_frame"].as_u64().unwrap();
        let (least, most) = (sharing(&all, own, last), sharing(&all, own, u64::MAX));
        match said {
            Some(n) => {
                flagged.push(stream);
                let n = n as usize;
                assert!(n >= 3, "stream {stream}: {n}");
                assert!(
                    (least..=most).contains(&n),
                    "stream {stream}: {n} servers on its clock, tshark's readings say {least}-{most}"
                );
            }
            None => assert!(
                least < 3,
                "stream {stream}: tshark shows {least} servers on its clock, rttdoc none"
            ),
        }
    }
    flagged
}

#[test]
fn servers_on_one_syn_ack_clock_are_the_ones_tshark_shows() {
    if !require(
        "servers_on_one_syn_ack_clock_are_the_ones_tshark_shows",
        &["tshark"],
        false,
    ) {
        return;
    }
    let Some(capture) = public_capture(
        "seladb-PcapPlusPlus",
        "Pcap++Test__PcapExamples__example.pcap",
    ) else {
        return;
    };
    // The three Akamai addresses.
    assert_eq!(check(&capture), [7, 33, 61]);
}

/// A capture begun after the handshakes: the proxy's clock read on each
/// connection's first server data is the same clock its SYN-ACKs carry.
#[test]
fn a_connection_whose_handshake_was_missed_is_read_on_its_first_server_segment() {
    if !require(
        "a_connection_whose_handshake_was_missed_is_read_on_its_first_server_segment",
        &["tshark"],
        false,
    ) {
        return;
    }
    let capture = data_dir().join("other-projects/ndpi-tumblr-proxy-clock.pcap.gz");
    let flagged = check(&capture);
    let doc = run_rttdoc_json(&capture);
    let missed: Vec<u64> = doc["connections"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["handshake"]["syn_ack_frame"].is_null())
        .map(|c| c["stream"].as_u64().unwrap())
        .filter(|s| flagged.contains(s))
        .collect();
    // nDPI's stream 6, whose 90 ms "server" time was judged the proxy's
    // (docs/real-world.md, session 68), and 6 others.
    assert!(missed.contains(&6), "{missed:?}");
    assert!(missed.len() >= 7, "{missed:?}");
}
