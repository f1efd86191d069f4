//! A client's SYN that meets a connection the server still holds on the
//! same port pair (scripts/stale-peer-captures.sh: real Linux TCP, nginx
//! and curl over a 40 ms path, tcpdump at both ends; a Python server on a
//! LAN for TIME-WAIT; tests/data/stale-peer/). The server answers the SYN
//! with an ACK of the old connection (an established one's challenge ACK,
//! a TIME-WAIT's ACK), the client resets it and sends its SYN again at
//! once (Linux), and that SYN opens the connection.
//!
//! What rttdoc says is checked against the frames as tshark reads them:
//! per stream, the client's SYNs, the server's pure ACKs before its
//! SYN-ACK that acknowledge something other than the SYN, the client's RST
//! whose sequence number is that ACK's acknowledgment number.

mod common;

use common::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn committed(name: &str) -> PathBuf {
    data_dir().join(format!("stale-peer/{name}.pcap.gz"))
}

/// One SYN the server answered with another connection's ACK, as tshark
/// reads it: (SYN, ACK, RST, the next SYN) frames, and the wait from the
/// SYN to the next SYN in ms.
#[derive(Debug, PartialEq)]
struct Answered {
    frames: Vec<u64>,
    ms: f64,
}

fn expected(capture: &Path) -> BTreeMap<u64, Vec<Answered>> {
    let rows = tshark_fields(
        capture,
        &["-o", "tcp.relative_sequence_numbers:FALSE"],
        "",
        &[
            "tcp.stream",
            "frame.number",
            "frame.time_relative",
            "tcp.flags.syn",
            "tcp.flags.ack",
            "tcp.flags.reset",
            "tcp.len",
            "tcp.seq",
            "tcp.ack",
            "tcp.srcport",
        ],
    );
    // Per stream: the last client SYN (frame, time, seq), the pending ACK
    // (frame, time, ack), whether the SYN-ACK came, and what was found.
    #[derive(Default)]
    struct S {
        syn: Option<(u64, f64, u64)>,
        pending: Option<(u64, f64, u64, u64)>,
        reset: Option<u64>,
        opened: bool,
        found: Vec<Answered>,
    }
    let mut by_stream: BTreeMap<u64, S> = BTreeMap::new();
    for r in rows {
        let stream: u64 = r[0].parse().unwrap();
        let frame: u64 = r[1].parse().unwrap();
        let t: f64 = r[2].parse().unwrap();
        let (syn, ack, rst) = (r[3] == "1", r[4] == "1", r[5] == "1");
        let len: u32 = r[6].parse().unwrap();
        let seq: u64 = r[7].parse().unwrap();
        let acked: u64 = r[8].parse().unwrap_or(0);
        let from_client = r[9].starts_with("400");
        let s = by_stream.entry(stream).or_default();
        if s.opened {
            continue;
        }
        match (from_client, syn, ack) {
            (true, true, false) => {
                if let Some((sf, st, _, af)) = s.pending.take() {
                    let mut frames = vec![sf, af];
                    frames.extend(s.reset.take());
                    frames.push(frame);
                    s.found.push(Answered {
                        frames,
                        ms: (t - st) * 1e3,
                    });
                }
                s.syn = Some((frame, t, seq));
            }
            (false, true, true) => s.opened = true,
            (false, false, true) if !rst && len == 0 => {
                if let Some((sf, st, sseq)) = s.syn {
                    if acked != (sseq + 1) % (1 << 32) {
                        s.pending = Some((sf, st, acked, frame));
                    }
                }
            }
            (true, false, _) if rst && s.pending.is_some_and(|p| p.2 == seq) => {
                s.reset = Some(frame);
            }
            _ => {}
        }
    }
    by_stream
        .into_iter()
        .filter(|(_, s)| !s.found.is_empty())
        .map(|(k, s)| (k, s.found))
        .collect()
}

/// rttdoc's `syn_answered_by_ack` findings in `capture` agree with what
/// tshark shows, each released by the ACK (Linux's quick retry); no
/// `syn_retransmit`; sequence numbers relative to the SYN-ACK as
/// Wireshark's; display filters that select the frames cited. Returns how
/// many were found.
fn check(capture: &Path) -> usize {
    let doc = run_rttdoc_json(capture);
    let name = capture.display();
    assert_no_finding(&doc, "syn_retransmit");
    let found = findings_of(&doc, "syn_answered_by_ack");
    if !require("stale_peer oracle", &["tshark"], false) {
        return found.len();
    }
    let expected = expected(capture);
    assert_eq!(
        found.iter().map(|(s, _)| *s).collect::<Vec<_>>(),
        expected.keys().copied().collect::<Vec<_>>(),
        "{name}: the streams whose SYN was answered by an ACK"
    );
    for (stream, x) in &found {
        let e = &expected[stream];
        let frames: Vec<u64> = e.iter().flat_map(|a| a.frames.clone()).collect();
        let cited = frames_cited(x);
        assert_eq!(cited, frames, "{name} stream {stream}: {x}");
        let waits = x["waits"].as_array().unwrap();
        assert_eq!(waits.len(), e.len(), "{name} stream {stream}: {x}");
        for (w, a) in waits.iter().zip(e) {
            assert_eq!(w["from_frame"], a.frames[0]);
            assert_eq!(w["to_frame"], *a.frames.last().unwrap());
            // Linux sent its SYN again the moment the ACK came.
            assert_eq!(w["release_frame"], a.frames[1], "{name}: {x}");
            assert!(
                (w["ms"].as_f64().unwrap() - a.ms).abs() < 0.01,
                "{name} stream {stream}: {x} (tshark {} ms)",
                a.ms
            );
        }
        assert_eq!(x["phase"], "tcp_handshake");
        let words = x["explanation"].as_str().unwrap();
        assert!(words.contains("reset it (RST)"), "{words}");
        assert!(words.contains("the moment the ACK came"), "{words}");
        let fix = x["fix"].as_str().unwrap();
        assert!(
            fix.contains("keepalive") && fix.contains("tcp_timestamps"),
            "{fix}"
        );
        // The handshake's excess is this wait, and the path's jitter on
        // the handshake that followed (the relay's, a loaded machine's):
        // under half a round trip (a millisecond on a LAN).
        let c = connection(&doc, *stream);
        let rtt = c["rtt_ms"].as_f64().unwrap();
        let row = c["ledger"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["phase"] == "tcp_handshake")
            .unwrap();
        let excess = row["excess_ms"].as_f64().unwrap();
        let cost = x["cost_ms"].as_f64().unwrap();
        assert!(
            excess >= cost - 0.1 && excess - cost < (rtt / 2.0).max(1.0),
            "{row} {x}"
        );
        check_relative_numbers(capture, *stream);
    }
    let problems = display_filter_problems(capture, &doc);
    assert!(problems.is_empty(), "{name}: {problems:?}");
    assert_agrees_with_tshark(capture, &[]);
    found.len()
}

/// From the SYN-ACK on, the ladder's relative sequence and
/// acknowledgment numbers are Wireshark's: the old connection's ACK before
/// it does not set the server's sequence space.
fn check_relative_numbers(capture: &Path, stream: u64) {
    let out = std::process::Command::new(rttdoc_bin())
        .args(["analyze", "--json", "--conn", &stream.to_string()])
        .arg(capture)
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let ladder = doc["ladder"].as_array().unwrap();
    let theirs = tshark_fields(
        capture,
        &[],
        &format!("tcp.stream == {stream}"),
        &[
            "frame.number",
            "tcp.seq",
            "tcp.ack",
            "tcp.flags.syn",
            "tcp.flags.ack",
        ],
    );
    let syn_ack = theirs
        .iter()
        .position(|r| r[3] == "1" && r[4] == "1")
        .unwrap();
    for r in &theirs[syn_ack..] {
        let frame: u64 = r[0].parse().unwrap();
        let ours = ladder.iter().find(|l| l["frame"] == frame).unwrap();
        assert_eq!(
            (ours["seq"].to_string(), ours["ack"].to_string()),
            (r[1].clone(), r[2].clone()),
            "{}: frame {frame}",
            capture.display()
        );
    }
    // Nothing of the client's in flight before its request: the old ACK
    // acknowledged none of this connection.
    for l in ladder.iter().take_while(|l| l["len"] == 0) {
        assert_eq!(l["in_flight"], 0, "{l}");
    }
}

fn check_all(dir: impl Fn(&str) -> PathBuf) {
    // An established connection the client forgot, its first connection
    // in the capture or not; the server's TIME-WAIT on a LAN. One SYN
    // each, at both ends.
    for name in ["stale", "stale-unseen", "tw"] {
        for end in ["client", "server"] {
            let capture = dir(&format!("{name}-{end}"));
            assert_eq!(check(&capture), 1, "{}", capture.display());
        }
    }
    // Control: the same port again after the client closed its
    // connection: the server's socket is gone, the SYN answered.
    for end in ["client", "server"] {
        let capture = dir(&format!("reuse-{end}"));
        assert_eq!(check(&capture), 0);
    }
}

#[test]
fn committed_syns_answered_by_an_old_connection_cost_what_the_client_waited() {
    check_all(committed);
}

#[test]
fn live_syns_answered_by_an_old_connection_cost_what_the_client_waited() {
    if !require(
        "live_syns_answered_by_an_old_connection_cost_what_the_client_waited",
        &["tshark", "ip", "nft", "tcpdump", "nginx", "curl", "python3"],
        true,
    ) {
        return;
    }
    let dir = TempDir::new("stale-peer");
    run_capture_script("stale-peer-captures.sh", &[dir.0.as_os_str()]);
    check_all(|name| dir.0.join(format!("{name}.pcap.gz")));
}
