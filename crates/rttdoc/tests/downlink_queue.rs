//! A client's saturated downlink is a queue, not the server thinking
//! (path_samples.rs, server_think_time.rs). Captures by
//! scripts/pageload-captures.sh (tests/data/pageload): real Linux TCP,
//! nginx, curl and python across a 40 ms path whose downlink is a 4 Mbit/s
//! bottleneck with a deep queue, at the client's and the server's hosts.

mod common;

use common::*;
use serde_json::Value;
use std::path::PathBuf;

fn capture(name: &str, side: &str) -> PathBuf {
    data_dir()
        .join("pageload")
        .join(format!("{name}-{side}.pcap.gz"))
}

/// A page load's `connections`, seen at its client and at its server: no
/// server think time at either; the wait real where the client sees it
/// and absent at the server; at the client the queue's, `downlink_queue`
/// on every connection explaining all but a few ms of the excess.
fn the_queue_not_the_server(client: &Value, server: &Value, connections: u64, name: &str) {
    for (doc, side) in [(client, "client"), (server, "server")] {
        let conns = doc["connections"].as_array().unwrap();
        assert_eq!(conns.len() as u64, connections, "{name} {side}");
        assert!(conns.iter().all(|c| c["vantage"] == side), "{name} {side}");
        assert_eq!(think_waits(doc), Vec::<f64>::new(), "{name} {side}");
    }
    let excess = |doc: &Value| doc["summary"]["excess_ms_total"].as_f64().unwrap();
    assert!(excess(client) > 1000.0, "{name}: {}", excess(client));
    assert!(excess(server) < 50.0, "{name}: {}", excess(server));
    let queue = &client["summary"]["causes"]["downlink_queue"];
    assert_eq!(
        queue["connections"].as_u64(),
        Some(connections),
        "{name}: {queue}"
    );
    let unexplained = client["summary"]["unexplained_ms"].as_f64().unwrap();
    assert!(
        unexplained < 0.02 * excess(client),
        "{name}: {unexplained} ms unexplained"
    );
    assert!(
        server["summary"]["causes"]["downlink_queue"].is_null(),
        "{name}"
    );
}

fn think_waits(doc: &Value) -> Vec<f64> {
    doc["connections"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["findings"].as_array().unwrap().clone())
        .filter(|x| x["kind"] == "server_think_time")
        .flat_map(|x| x["waits"].as_array().unwrap().clone())
        .map(|w| w["ms"].as_f64().unwrap())
        .collect()
}

/// A page load: 18 files over six keep-alive connections. nginx answers
/// every request at once (the server's capture shows each first byte
/// leaving one round trip after the request), but at the client the
/// answers queue behind the other connections' data at the bottleneck,
/// seconds of waiting in all: the client's own downlink, so no server
/// think time at either host, and `downlink_queue` at the client.
#[test]
fn answers_queued_behind_a_page_loads_other_connections_are_not_server_time() {
    let client = run_rttdoc_json(&capture("pageload", "client"));
    let server = run_rttdoc_json(&capture("pageload", "server"));
    the_queue_not_the_server(&client, &server, 6, "pageload");
    for c in client["connections"].as_array().unwrap() {
        for x in c["findings"].as_array().unwrap() {
            assert_eq!(x["kind"], "downlink_queue", "{x}");
            // Each a wait from a request to its answer, released by nothing.
            for w in x["waits"].as_array().unwrap() {
                assert!(w["release_frame"].is_null(), "{w}");
                assert!(w["to_frame"].as_u64() > w["from_frame"].as_u64(), "{w}");
            }
        }
    }
}

fn stalled(n: u32, side: &str) -> PathBuf {
    data_dir()
        .join("pageload")
        .join(format!("stalled-{n}-{side}.pcapng.gz"))
}

/// The lab's page load (`pageload-nginx`: four connections, 12 files of
/// 80 KB through a 4 Mbit/s downlink with a deep queue, two runs) while
/// busy loops kept every core loaded (scripts/pageload-stalled-captures.sh):
/// the lab's emulator handed the bottleneck's deliveries over late and in
/// bunches, pauses of up to 12 ms and then several packets within 0.2 ms
/// where the link takes 2.9 ms a packet, as a VM short of CPU, a capture
/// host's poll or a Wi-Fi aggregate does. nginx answered every request at
/// once (its own capture); at the client the answers waited in the queue,
/// the first ones in the link's first stretch (before any stretch was
/// long enough to measure its rate), others right after a pause their
/// own bunch caught up on. None of it is the server's: no
/// `server_think_time` at either host, and the client's excess is the
/// queue's.
#[test]
fn answers_queued_behind_a_stalled_links_bunched_deliveries_are_not_server_time() {
    let tshark = require("stalled page load's stamps", &["tshark"], false);
    for n in [1, 2] {
        let client = run_rttdoc_json(&stalled(n, "client"));
        let server = run_rttdoc_json(&stalled(n, "server"));
        the_queue_not_the_server(&client, &server, 8, &format!("stalled-{n}"));
        if tshark {
            // The stamps are what the test is about: many full-size
            // packets less than 0.2 ms after the one before (a bunch), many
            // pauses of 6-15 ms inside the transfers.
            let filter = "tcp.srcport == 80 && tcp.len > 1000";
            let stamps: Vec<f64> =
                tshark_fields(&stalled(n, "client"), &[], filter, &["frame.time_epoch"])
                    .iter()
                    .map(|row| row[0].trim().parse().unwrap())
                    .collect();
            let gaps: Vec<f64> = stamps.windows(2).map(|w| (w[1] - w[0]) * 1e3).collect();
            let bunched = gaps.iter().filter(|&&g| g < 0.2).count();
            let paused = gaps.iter().filter(|&&g| (6.0..15.0).contains(&g)).count();
            assert!(bunched > 200 && paused > 30, "{n}: {bunched} {paused}");
        }
    }
}

/// The control: the same path, one connection, a server that works
/// 150 ms before each of three answers. The link is far from saturated,
/// and each wait is the server's, at both hosts.
#[test]
fn a_server_working_behind_the_same_bottleneck_is_still_named() {
    for side in ["client", "server"] {
        let doc = run_rttdoc_json(&capture("think", side));
        assert!(
            doc["summary"]["causes"]["downlink_queue"].is_null(),
            "{side}"
        );
        let waits = think_waits(&doc);
        assert_eq!(waits.len(), 3, "{side}: {waits:?}");
        for ms in waits {
            assert!((140.0..170.0).contains(&ms), "{side}: {ms} ms");
        }
    }
}
