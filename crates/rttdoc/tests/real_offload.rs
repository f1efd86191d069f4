//! Host captures with the kernel's segmentation offloads on
//! (tests/data/offload, made by scripts/offload-captures.sh): what
//! `tcpdump -i eth0` on a client or a server shows, the sender's data in
//! TSO/GSO super-segments of up to 64 KB, across a 40 ms path. Real Linux
//! TCP, nginx and curl. Each test checks that nothing is claimed that did
//! not happen, and that what did happen is named right. The loss and
//! Nagle captures are also taken between hosts without TCP timestamps
//! (`NAME-nots`, Windows' default): the same findings, from the same
//! mechanisms, without a TSval to lean on.

mod common;

use common::*;
use serde_json::Value;
use std::path::PathBuf;

fn offload(name: &str, side: &str) -> PathBuf {
    data_dir()
        .join("offload")
        .join(format!("{name}-{side}.pcap.gz"))
}

const SIDES: [&str; 2] = ["client", "server"];

/// The one connection of a capture, with its ladder.
fn connection(name: &str, side: &str) -> Value {
    run_rttdoc_json_with(&offload(name, side), &["--conn", "0"])
}

/// The largest payload `direction` sent in one captured packet.
fn largest(c: &Value, direction: &str) -> u64 {
    c["ladder"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["direction"] == direction)
        .map(|e| e["len"].as_u64().unwrap())
        .max()
        .unwrap_or(0)
}

/// Every capture is placed at its host, times the 40 ms path, and the
/// sender's own capture holds super-segments: the fixtures are the shape
/// they claim to be.
#[test]
fn each_capture_is_a_host_capture_of_super_segments_on_a_40_ms_path() {
    for (name, sender) in [
        ("download", "server"),
        ("keepalive", "server"),
        ("upload", "client"),
        ("loss", "server"),
        ("expect", "client"),
        ("continue", "client"),
        ("nagle-tls", "server"),
        ("wwr", "server"),
        ("loss-nots", "server"),
        ("nagle-tls-nots", "server"),
        ("wwr-nots", "server"),
    ] {
        for side in SIDES {
            let c = connection(name, side);
            let what = format!("{name}-{side}");
            assert_eq!(c["vantage"], side, "{what}");
            let rtt = c["rtt_ms"].as_f64().unwrap();
            assert!((39.0..43.0).contains(&rtt), "{what}: RTT {rtt} ms");
            assert_eq!(c["partial"], false, "{what}");
            let timestamps = c["handshake"]["timestamps"].as_bool();
            assert_eq!(timestamps, Some(!name.ends_with("-nots")), "{what}");
            let direction = format!(
                "{sender}_to_{}",
                if sender == "client" {
                    "server"
                } else {
                    "client"
                }
            );
            if side == sender && !name.starts_with("nagle-tls") && !name.starts_with("wwr") {
                // More than one MSS in one packet: the NIC's job, after the
                // capture point. (The Nagle captures send less than two.)
                assert!(largest(&c, &direction) > 1448, "{what}: no super-segment");
            }
        }
    }
}

/// A clean download, a keep-alive TLS session and an upload, seen from
/// either host: nothing went wrong, and nothing is claimed.
#[test]
fn clean_transfers_in_super_segments_claim_nothing() {
    for name in ["download", "keepalive", "upload", "continue"] {
        for side in SIDES {
            let c = connection(name, side);
            let what = format!("{name}-{side}");
            assert_eq!(kinds(&c["findings"]), Vec::<&str>::new(), "{what}");
            for dir in ["client_to_server", "server_to_client"] {
                for counter in ["retransmissions", "out_of_order", "gaps", "zero_windows"] {
                    assert_eq!(c[dir][counter], 0, "{what} {dir} {counter}");
                }
            }
            // Every phase within a round trip of its ideal.
            for row in c["ledger"].as_array().unwrap() {
                let (took, ideal) = (
                    row["rtts"].as_f64().unwrap(),
                    row["ideal_rtts"].as_f64().unwrap(),
                );
                assert!(took < ideal + 1.0, "{what}: {row}");
            }
        }
    }
}

/// A 1 MB PUT that nginx answers once it has stored all of it: the
/// request's own slow-start rounds come before the answer's round trip,
/// and are not latency beyond the ideal.
#[test]
fn an_upload_answered_when_complete_has_its_own_rounds_in_the_ideal() {
    for side in SIDES {
        let c = connection("upload", side);
        let rows = c["ledger"].as_array().unwrap();
        let first_byte = rows
            .iter()
            .find(|r| r["phase"] == "first_byte")
            .unwrap_or_else(|| panic!("upload-{side}: no first-byte row: {rows:?}"));
        // 1000118 bytes from IW10 in 1448-byte segments: 10, 20, 40, 80,
        // 160, 320, 640 segments: 7 rounds, 6 beyond the first, + 1 RTT.
        assert_eq!(first_byte["ideal_rtts"], 7.0, "upload-{side}: {first_byte}");
        assert!(
            first_byte["ideal_basis"]
                .as_str()
                .unwrap()
                .contains("request of 1000118 bytes"),
            "upload-{side}: {first_byte}"
        );
        assert!(
            c["excess_rtts"].as_f64().unwrap() < 1.0,
            "upload-{side}: {}",
            c["excess_rtts"]
        );
    }
}

/// The download with every 40th data packet of the server dropped on the
/// path (17 of them): the losses are named, from either host, and the
/// server's waits on the client's window, whose left edge each hole held
/// until its repair was acknowledged, are the losses' cost, not a
/// receive buffer's (before, `rwnd_limited` took them, with a fix to
/// raise tcp_rmem).
#[test]
fn losses_are_named_and_the_window_their_holes_held_is_their_cost() {
    for (name, side) in ["loss", "loss-nots"]
        .into_iter()
        .flat_map(|n| SIDES.map(|s| (n, s)))
    {
        let c = connection(name, side);
        let what = format!("{name}-{side}");
        assert_eq!(kinds(&c["findings"]), ["retransmission"], "{what}");
        assert_eq!(c["server_to_client"]["retransmissions"], 17, "{what}");
        let f = &c["findings"][0];
        let waits = f["waits"].as_array().unwrap();
        assert!(!waits.is_empty(), "{what}: {f}");
        let sum: f64 = waits.iter().map(|w| w["ms"].as_f64().unwrap()).sum();
        assert!(
            (f["cost_ms"].as_f64().unwrap() - sum).abs() < 1e-6,
            "{what}: {f}"
        );
        // Each a wait on the window, released by the client's ACK; or,
        // at most once, the transfer's end waiting on a hole's fill (the
        // last hole, repaired after the last new data: no window waited,
        // the download ended on it; since session 82).
        let ends: Vec<u64> = c["ledger"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["phase"] == "transfer")
            .filter_map(|r| r["end_frame"].as_u64())
            .collect();
        let mut fills = 0;
        for w in waits {
            if w["release_frame"].is_null() {
                fills += 1;
                assert!(
                    ends.contains(&w["to_frame"].as_u64().unwrap()),
                    "{what}: {w}"
                );
            } else {
                assert!(w["release_frame"].is_u64(), "{what}: {w}");
            }
            assert!(w["ms"].as_f64().unwrap() < 2.0 * 40.0 + 10.0, "{what}: {w}");
        }
        assert!(fills <= 1, "{what}: {f}");
        let words = f["explanation"].as_str().unwrap();
        assert!(
            words.contains("cannot move its window past a hole"),
            "{what}: {words}"
        );
    }
}

/// curl sends `Expect: 100-continue` with a 2 MB POST and holds the body
/// for the server's `100 Continue`; python's HTTP/1.0 server never sends
/// one, so the body leaves when curl's 1 s timer ends. The same upload to
/// nginx, which answers the expectation, waits for nothing
/// (`continue`, in the test above).
#[test]
fn an_upload_held_for_a_100_continue_that_never_came_costs_the_clients_timer() {
    for side in SIDES {
        let c = connection("expect", side);
        let what = format!("expect-{side}");
        assert_eq!(kinds(&c["findings"]), ["expect_continue_wait"], "{what}");
        let f = &c["findings"][0];
        assert_eq!(f["phase"], "first_byte", "{what}");
        // curl's timer: 1 s, on the client's own clock at either vantage
        // (a server-side capture sees both packets one path delay later).
        let cost = f["cost_ms"].as_f64().unwrap();
        assert!((1000.0..1050.0).contains(&cost), "{what}: {cost} ms");
        let waits = f["waits"].as_array().unwrap();
        assert_eq!(waits.len(), 1, "{what}");
        assert!(waits[0]["release_frame"].is_null(), "{what}: {f}");
        // The head's segment, then the body's first; the head names the
        // expectation.
        let frames = frames_of(f);
        let ladder = c["ladder"].as_array().unwrap();
        let head = ladder.iter().find(|e| e["frame"] == frames[0]).unwrap();
        assert_eq!(head["direction"], "client_to_server", "{what}");
        assert!(
            head["len"].as_u64().unwrap() < 1448,
            "{what}: the head alone"
        );
        // What the wait was is the ledger's excess: explained, not left over.
        assert_explained(&c, &what);
    }
}

/// The connection's latency beyond its ideals is its findings' (all but a
/// tenth).
fn assert_explained(c: &Value, what: &str) {
    let excess = c["excess_ms"].as_f64().unwrap();
    let unexplained = c["unexplained_ms"].as_f64().unwrap();
    assert!(
        unexplained < 0.1 * excess,
        "{what}: {unexplained} of {excess} ms unexplained"
    );
}

/// The field notes' cases 1 and 5 on host captures: nginx with
/// `tcp_nodelay off`. Over TLS 1.3 the response waits in Nagle behind the
/// first session ticket for the client's delayed ACK (the server answered
/// at once: no think time; before, `server_think_time` claimed the same
/// wait again); over keep-alive HTTP each response's body waits for the
/// delayed ACK of its headers (write-write-read, three times).
#[test]
fn nginx_with_nagle_on_is_named_for_its_holds_and_nothing_else() {
    for (nots, side) in ["", "-nots"]
        .into_iter()
        .flat_map(|n| SIDES.map(|s| (n, s)))
    {
        let name = format!("nagle-tls{nots}");
        let c = connection(&name, side);
        let what = format!("{name}-{side}");
        assert_eq!(kinds(&c["findings"]), ["nagle_delayed_ack"], "{what}");
        let f = &c["findings"][0];
        let cost = f["cost_ms"].as_f64().unwrap();
        // The delayed ACK's timer and the round trip to release the hold.
        assert!((60.0..130.0).contains(&cost), "{what}: {cost} ms");
        assert_explained(&c, &what);

        let name = format!("wwr{nots}");
        let c = connection(&name, side);
        let what = format!("{name}-{side}");
        assert_eq!(kinds(&c["findings"]), ["write_write_read"], "{what}");
        let waits = c["findings"][0]["waits"].as_array().unwrap();
        assert_eq!(waits.len(), 3, "{what}: one per request");
        for w in waits {
            let ms = w["ms"].as_f64().unwrap();
            assert!((30.0..60.0).contains(&ms), "{what}: {w}");
            assert!(w["release_frame"].is_u64(), "{what}: {w}");
        }
    }
}

/// Wireshark reads the display filters of these findings as rttdoc means
/// them (frames and stream numbers).
#[test]
fn display_filters_show_the_cited_frames() {
    if !require("display_filters_show_the_cited_frames", &["tshark"], false) {
        return;
    }
    for name in [
        "download",
        "keepalive",
        "upload",
        "loss",
        "expect",
        "continue",
        "nagle-tls",
        "wwr",
    ] {
        for side in SIDES {
            let capture = offload(name, side);
            let doc = run_rttdoc_json(&capture);
            let problems = display_filter_problems(&capture, &doc);
            assert!(problems.is_empty(), "{problems:#?}");
        }
    }
}
