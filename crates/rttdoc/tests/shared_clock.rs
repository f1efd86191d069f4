//! Server addresses that answered a client on one SYN-ACK clock
//! (`handshake.shared_clock_servers`, shared_clock.rs in rttdoc-analyze),
//! checked against tshark's reading of PcapPlusPlus's example.pcap: a
//! browser in 2013 whose SYN-ACKs from three Akamai addresses carry one
//! 1 kHz clock, offset and all (one edge server answering for all three),
//! while the other servers' clocks are their own.
//!
//! The oracle reads every first SYN-ACK's TSval with tshark and counts,
//! for each connection, the server addresses whose SYN-ACKs to the same
//! client agree with its own at one standard tick rate within 5 ms and a
//! tick: counted over the SYN-ACKs up to the connection's last frame (all
//! of those rttdoc has seen when it hands the connection on) it is the
//! least rttdoc may say, over the whole capture the most.

mod common;

use common::*;
use std::collections::BTreeMap;
use std::process::Command;

/// One first SYN-ACK with timestamps, as tshark reads it.
struct SynAck {
    frame: u64,
    ts_ns: i64,
    client: String,
    server: String,
    tsval: u32,
}

fn syn_acks(capture: &std::path::Path) -> BTreeMap<u64, SynAck> {
    let out = Command::new("tshark")
        .arg("-r")
        .arg(capture)
        .args([
            "-Y",
            "tcp.flags.syn == 1 && tcp.flags.ack == 1 && tcp.options.timestamp.tsval",
            "-T",
            "fields",
            "-e",
            "tcp.stream",
            "-e",
            "frame.number",
            "-e",
            "frame.time_epoch",
            "-e",
            "ip.src",
            "-e",
            "ip.dst",
            "-e",
            "tcp.options.timestamp.tsval",
        ])
        .output()
        .expect("tshark");
    let mut first = BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let f: Vec<&str> = line.split('\t').collect();
        let epoch: f64 = f[2].parse().unwrap();
        first.entry(f[0].parse().unwrap()).or_insert(SynAck {
            frame: f[1].parse().unwrap(),
            ts_ns: (epoch * 1e9).round() as i64,
            client: f[4].to_string(),
            server: f[3].to_string(),
            tsval: f[5].parse().unwrap(),
        });
    }
    first
}

/// Server addresses, `of`'s among them, whose SYN-ACKs in `all` (up to
/// frame `until`) answered `of`'s client on its clock: the most at one
/// rate.
fn sharing(all: &BTreeMap<u64, SynAck>, of: &SynAck, until: u64) -> usize {
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
    let all = syn_acks(&capture);
    let doc = run_rttdoc_json(&capture);
    let mut flagged = 0;
    for c in doc["connections"].as_array().unwrap() {
        let stream = c["stream"].as_u64().unwrap();
        let said = c["handshake"]["shared_clock_servers"].as_u64();
        let Some(own) = all.get(&stream) else {
            assert_eq!(said, None, "stream {stream}: no SYN-ACK with timestamps");
            continue;
        };
        let last = c["last_frame"].as_u64().unwrap();
        let (least, most) = (sharing(&all, own, last), sharing(&all, own, u64::MAX));
        match said {
            Some(n) => {
                flagged += 1;
                let n = n as usize;
                assert!(n >= 3, "stream {stream}: {n}");
                assert!(
                    (least..=most).contains(&n),
                    "stream {stream}: {n} servers on its clock, tshark's SYN-ACKs say {least}-{most}"
                );
            }
            None => assert!(
                least < 3,
                "stream {stream}: tshark shows {least} servers on its SYN-ACK's clock, rttdoc none"
            ),
        }
    }
    // The three Akamai addresses (streams 7, 33 and 61).
    assert_eq!(flagged, 3);
}
