//! The hosts' own short turnarounds (`client_turnaround_ms`,
//! `server_turnaround_ms`): on loopback, where a round trip is
//! microseconds, they are what a TLS connection takes beyond its ideal,
//! and rttdoc says so instead of calling it unexplained.
//!
//! Producer: scripts/loopback-capture.sh `curls`: nginx (one worker,
//! TLS 1.2 and 1.3) and 60 curl processes, eight at once, on a private
//! namespace's loopback, their TLS keys logged. Committed under
//! tests/data/turnarounds, made again live when root.
//!
//! The oracle is tshark's reading of the same capture (decrypted with
//! the keys): in the TLS handshake's span (the ClientHello to the
//! client's Finished in TLS 1.3, to the server's in TLS 1.2) each turn is
//! one side's first data segment after the other's, timed from the
//! other's last; a request's turn is from the request to its response.
//! A turn under 5 ms (the think-time detectors' threshold on so short a
//! path) is a turnaround when its row is over its ideal by at least the
//! ledger's 2 ms floor; longer turns are causes, and the turnarounds of a
//! row are at most what its excess leaves beside them.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::*;

/// The think-time detectors' threshold on a loopback path.
const THRESHOLD_MS: f64 = 5.0;
/// The ledger's floor: less excess than this is none.
const FLOOR_MS: f64 = 2.0;

/// One frame as the oracle reads it.
struct Frame {
    time_ms: f64,
    from_client: bool,
    len: u64,
    handshake: Vec<u32>,
    request: bool,
    response: bool,
}

/// Per stream, the client's and the server's turnarounds (ms) the oracle
/// expects.
fn oracle(capture: &Path, keylog: &Path) -> BTreeMap<u64, [f64; 2]> {
    let option = format!("tls.keylog_file:{}", keylog.display());
    let rows = tshark_fields(
        capture,
        &["-o", &option],
        "",
        &[
            "tcp.stream",
            "frame.time_relative",
            "tcp.flags.syn",
            "tcp.flags.ack",
            "tcp.srcport",
            "tcp.len",
            "tls.handshake.type",
            "http.request.method",
            "http.response.code",
        ],
    );
    let mut streams: BTreeMap<u64, (Option<String>, Vec<Frame>)> = BTreeMap::new();
    for r in &rows {
        let stream: u64 = r[0].parse().unwrap();
        let (client, frames) = streams.entry(stream).or_default();
        if r[2] == "1" && r[3] == "0" {
            *client = Some(r[4].clone());
        }
        frames.push(Frame {
            time_ms: r[1].parse::<f64>().unwrap() * 1e3,
            from_client: client.as_deref() == Some(&r[4]),
            len: r[5].parse().unwrap(),
            handshake: r[6]
                .split(',')
                .filter(|s| !s.is_empty())
                .map(|s| s.parse().unwrap())
                .collect(),
            request: !r[7].is_empty(),
            response: !r[8].is_empty(),
        });
    }
    streams
        .into_iter()
        .map(|(stream, (_, frames))| (stream, expected(&frames)))
        .collect()
}

/// The turnarounds one connection's frames show (module docs).
fn expected(frames: &[Frame]) -> [f64; 2] {
    let data: Vec<&Frame> = frames.iter().filter(|f| f.len > 0).collect();
    let Some(hello) = data.iter().position(|f| f.handshake.contains(&1)) else {
        return [0.0; 2];
    };
    // TLS 1.3's handshake ends with the client's Finished, TLS 1.2's with
    // the server's (the last Finished of the handshake either way).
    let Some(end) = data.iter().rposition(|f| f.handshake.contains(&20)) else {
        return [0.0; 2];
    };
    let mut turns = [0.0f64; 2];
    let mut long = 0.0;
    for i in hello + 1..=end {
        if data[i].from_client != data[i - 1].from_client {
            let ms = data[i].time_ms - data[i - 1].time_ms;
            if ms < THRESHOLD_MS {
                turns[usize::from(!data[i].from_client)] += ms;
            } else {
                long += ms;
            }
        }
    }
    // (The ideal is one or two microsecond round trips.)
    let excess = data[end].time_ms - data[hello].time_ms;
    let mut out = within(turns, excess, excess - long);
    // A request's turn: from it to its response's first segment.
    if let (Some(q), Some(a)) = (
        data.iter().position(|f| f.request),
        data.iter().position(|f| f.response),
    ) {
        let ms = data[a].time_ms - data[q].time_ms;
        if ms < THRESHOLD_MS {
            out[1] += within([0.0, ms], ms, ms)[1];
        }
    }
    out
}

/// A row's turnarounds: none when its `excess` is under the ledger's
/// floor, and together no more than what the causes leave of it (`left`).
fn within(turns: [f64; 2], excess: f64, left: f64) -> [f64; 2] {
    let sum = turns[0] + turns[1];
    if excess < FLOOR_MS || sum <= 0.0 {
        return [0.0; 2];
    }
    let scale = (left / sum).min(1.0);
    turns.map(|t| t * scale)
}

fn check(capture: &Path, keylog: &Path) {
    let want = oracle(capture, keylog);
    let doc = run_rttdoc_json_with(capture, &["--keylog", &keylog.to_string_lossy()]);
    let mut problems = Vec::new();
    let mut counted = [0.0; 2];
    for c in doc["connections"].as_array().unwrap() {
        let stream = c["stream"].as_u64().unwrap();
        let got = [
            c["client_turnaround_ms"].as_f64().unwrap(),
            c["server_turnaround_ms"].as_f64().unwrap(),
        ];
        let unexplained = c["unexplained_ms"].as_f64().unwrap();
        if got[0] + got[1] > unexplained + 1e-6 {
            problems.push(format!(
                "stream {stream}: {got:?} beyond the unexplained {unexplained}"
            ));
        }
        let expected = want.get(&stream).copied().unwrap_or_default();
        for side in 0..2 {
            // The oracle times turns between captured segments; rttdoc
            // on the answerer's clock (tens of microseconds apart here).
            if (got[side] - expected[side]).abs() > 0.1 + 0.05 * expected[side] {
                problems.push(format!(
                    "stream {stream}: {} turnarounds {:.3} ms, tshark's turns say {:.3} ms",
                    ["client", "server"][side],
                    got[side],
                    expected[side]
                ));
            }
            counted[side] += got[side];
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
    // The capture is about them: most of its excess is the hosts' work.
    let s = &doc["summary"];
    let (excess, explained) = (
        s["excess_ms_total"].as_f64().unwrap(),
        s["explained_ms"].as_f64().unwrap(),
    );
    let turnarounds =
        s["client_turnaround_ms"].as_f64().unwrap() + s["server_turnaround_ms"].as_f64().unwrap();
    assert!((turnarounds - counted[0] - counted[1]).abs() < 1e-3);
    assert!(
        turnarounds > 0.5 * (excess - explained),
        "{turnarounds} ms of the {excess} ms excess ({explained} ms explained)"
    );
    // And the terminal's headline adds them up.
    let text = run_rttdoc_text(capture);
    assert!(
        text.contains("the hosts' own turnarounds, each too short to be a cause"),
        "{text}"
    );
}

#[test]
fn turnarounds_are_the_turns_tshark_shows_on_the_committed_capture() {
    if !require("host turnarounds", &["tshark"], false) {
        return;
    }
    let dir = data_dir().join("turnarounds");
    check(
        &dir.join("curls-loopback.pcap.gz"),
        &dir.join("curls-loopback.keylog"),
    );
}

#[test]
fn turnarounds_are_the_turns_tshark_shows_on_a_new_capture() {
    if !require(
        "host turnarounds, live",
        &[
            "tshark", "unshare", "ip", "tcpdump", "nginx", "openssl", "curl",
        ],
        true,
    ) {
        return;
    }
    let dir = TempDir::new("turnarounds");
    let capture = dir.path("curls.pcap");
    run_capture_script(
        "loopback-capture.sh",
        &[capture.as_os_str(), "curls".as_ref(), "40".as_ref()],
    );
    check(&capture, &dir.path("curls.pcap.keylog"));
}
