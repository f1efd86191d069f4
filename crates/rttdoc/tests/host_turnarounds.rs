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
//! Away from the server (rttdoc's `vantage`; on loopback any of the
//! three), a server's pure ACK of the question before its answer shows
//! when the question had arrived, whatever a queue on the path did, and
//! the server's turn starts there, as the think-time detectors start it;
//! the client's turn starts at its ACK of the server's flight, when it
//! had it.
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
/// How near the threshold a turn may be to fall on either side of it.
const EDGE_MS: f64 = 0.25;

/// One frame as the oracle reads it.
struct Frame {
    time_ms: f64,
    from_client: bool,
    len: u64,
    pure_ack: bool,
    /// Relative sequence number past its data, and its ACK field.
    end: u64,
    ack: u64,
    handshake: Vec<u32>,
    request: bool,
    response: bool,
}

/// Per stream, the least and the most of the client's and the server's
/// turnarounds (ms) the oracle expects, each stream's read at the vantage
/// `at_server` says.
fn oracle(
    capture: &Path,
    keylog: &Path,
    at_server: impl Fn(u64) -> bool,
) -> BTreeMap<u64, Expected> {
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
            "tcp.flags.fin",
            "tcp.seq",
            "tcp.ack",
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
            pure_ack: r[5] == "0" && r[2] == "0" && r[3] == "1" && r[6] == "0",
            end: r[7].parse::<u64>().unwrap() + r[5].parse::<u64>().unwrap(),
            ack: r[8].parse().unwrap_or(0),
            handshake: r[9]
                .split(',')
                .filter(|s| !s.is_empty())
                .map(|s| s.parse().unwrap())
                .collect(),
            request: !r[10].is_empty(),
            response: !r[11].is_empty(),
        });
    }
    streams
        .into_iter()
        .map(|(stream, (_, frames))| (stream, expected(&frames, at_server(stream))))
        .collect()
}

/// What the oracle expects of one connection's turnarounds: the least
/// and the most each side's may be (ms), and how far rttdoc's reading
/// may stray from them: rttdoc times a turn on its host's clock, less
/// the part of the round trip between the capture and that host, which
/// the oracle does not split (the round trip, at most, a turn).
#[derive(Clone, Copy, Default)]
struct Expected {
    least: [f64; 2],
    most: [f64; 2],
    /// Per side, the round trip times that side's turns.
    clock: [f64; 2],
}

/// The turnarounds one connection's frames show (module docs): a turn
/// within [`EDGE_MS`] of the threshold may fall on either side of it as
/// rttdoc times it.
fn expected(frames: &[Frame], at_server: bool) -> Expected {
    // The handshake's round trip: the SYN to the client's ACK.
    let rtt = match (
        frames.first(),
        frames.iter().find(|f| f.from_client && f.pure_ack),
    ) {
        (Some(syn), Some(ack)) => ack.time_ms - syn.time_ms,
        _ => 0.0,
    };
    let mut turns = [0u32; 2];
    // When the server's turn from question `q` to answer `a` began: at
    // the server's first pure ACK of all of `q` before `a`, away from it.
    let asked = |q: &Frame, a: &Frame| {
        let ack = frames.iter().find(|f| {
            !at_server
                && !f.from_client
                && f.pure_ack
                && f.ack >= q.end
                && f.time_ms >= q.time_ms
                && f.time_ms <= a.time_ms
        });
        ack.unwrap_or(q).time_ms
    };
    // When the client's turn from the server's `q` to its answer `a`
    // began: at its pure ACK of all of `q` before `a` (when it had the
    // flight, as rttdoc times the client), wherever the capture is.
    let had = |q: &Frame, a: &Frame| {
        let ack = frames.iter().find(|f| {
            f.from_client
                && f.pure_ack
                && f.ack >= q.end
                && f.time_ms >= q.time_ms
                && f.time_ms <= a.time_ms
        });
        ack.unwrap_or(q).time_ms
    };
    let none = Expected::default();
    let data: Vec<&Frame> = frames.iter().filter(|f| f.len > 0).collect();
    let Some(hello) = data.iter().position(|f| f.handshake.contains(&1)) else {
        return none;
    };
    // TLS 1.3's handshake ends with the client's Finished, TLS 1.2's with
    // the server's (the last Finished of the handshake either way).
    let Some(end) = data.iter().rposition(|f| f.handshake.contains(&20)) else {
        return none;
    };
    // Turns surely short, at the threshold's edge; time surely a cause's.
    let (mut short, mut edge, mut long) = ([0.0f64; 2], [0.0f64; 2], 0.0);
    for i in hello + 1..=end {
        if data[i].from_client != data[i - 1].from_client {
            let from = match data[i].from_client {
                true => had(data[i - 1], data[i]),
                false => asked(data[i - 1], data[i]),
            };
            let ms = data[i].time_ms - from;
            let side = usize::from(!data[i].from_client);
            turns[side] += 1;
            if ms < THRESHOLD_MS - EDGE_MS {
                short[side] += ms;
            } else if ms < THRESHOLD_MS + EDGE_MS {
                edge[side] += ms;
            } else {
                long += ms;
            }
        }
    }
    // (The ideal is one or two microsecond round trips.)
    let excess = data[end].time_ms - data[hello].time_ms;
    let edge_ms = edge[0] + edge[1];
    let least = within(short, excess, excess - long - edge_ms, EDGE_MS);
    let most = within(
        [short[0] + edge[0], short[1] + edge[1]],
        excess,
        excess - long,
        -EDGE_MS,
    );
    let mut out = Expected {
        least,
        most,
        clock: [0.0; 2],
    };
    // A request's turn: from it to its response's first segment.
    if let (Some(q), Some(a)) = (
        data.iter().position(|f| f.request),
        data.iter().position(|f| f.response),
    ) {
        // The row runs from the request; the server's turn from when it
        // had the request.
        let row = data[a].time_ms - data[q].time_ms;
        let ms = data[a].time_ms - asked(data[q], data[a]);
        turns[1] += 1;
        if ms < THRESHOLD_MS - EDGE_MS {
            out.least[1] += within([0.0, ms], row, row, EDGE_MS)[1];
        }
        if ms < THRESHOLD_MS + EDGE_MS {
            out.most[1] += within([0.0, ms], row, row, -EDGE_MS)[1];
        }
    }
    out.clock = turns.map(|n| n as f64 * rtt);
    out
}

/// A row's turnarounds: none when its `excess` is under the ledger's
/// floor (moved by `edge`: a row at it may be either side as rttdoc
/// measures it, its ideal's round trips taken off), and together no more
/// than what the causes leave of it (`left`).
fn within(turns: [f64; 2], excess: f64, left: f64, edge: f64) -> [f64; 2] {
    let sum = turns[0] + turns[1];
    if excess < FLOOR_MS + edge || sum <= 0.0 {
        return [0.0; 2];
    }
    let scale = (left.max(0.0) / sum).min(1.0);
    turns.map(|t| t * scale)
}

/// Checks `capture` against the oracle; `misses` connections may differ
/// (a capture made now, on a loaded machine, may hold a turn the oracle's
/// edges do not cover; the committed one may not).
fn check(capture: &Path, keylog: &Path, misses: usize) {
    let doc = run_rttdoc_json_with(capture, &["--keylog", &keylog.to_string_lossy()]);
    let vantage: BTreeMap<u64, String> = doc["connections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["stream"].as_u64().unwrap(), c["vantage"].to_string()))
        .collect();
    let want = oracle(capture, keylog, |s| {
        vantage.get(&s).is_some_and(|v| v == "\"server\"")
    });
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
        let Expected { least, most, clock } = want.get(&stream).copied().unwrap_or_default();
        for side in 0..2 {
            let slack = |ms: f64| 0.1 + 0.05 * ms + clock[side];
            if got[side] < least[side] - slack(least[side])
                || got[side] > most[side] + slack(most[side])
            {
                problems.push(format!(
                    "stream {stream}: {} turnarounds {:.3} ms, tshark's turns say {:.3}-{:.3} ms",
                    ["client", "server"][side],
                    got[side],
                    least[side],
                    most[side]
                ));
            }
            counted[side] += got[side];
        }
    }
    let streams: std::collections::BTreeSet<&str> = problems
        .iter()
        .filter_map(|p| p.split(':').next())
        .collect();
    assert!(streams.len() <= misses, "{problems:#?}");
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
        0,
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
    check(&capture, &dir.path("curls.pcap.keylog"), 1);
}
