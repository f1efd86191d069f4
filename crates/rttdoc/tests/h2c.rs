//! HTTP/2 in cleartext (h2c, prior knowledge) through real peers
//! (tests/data/grpc, made by scripts/grpc-captures.sh: Python grpcio on
//! both ends, and nginx `listen ... http2` with curl; real Linux TCP,
//! 20 ms each way, tcpdump at the client's host). A client's
//! WINDOW_UPDATEs, PINGs and acknowledgments ask for nothing and end no
//! turn: each turn is a request's HEADERS and its stream's answer, a
//! server-streaming call's messages go on with its answer, and the one
//! request whose handler worked 100 ms is the one finding. (Before
//! h2c.rs, grpc's PING sent with the slow request was answered at once
//! by the server's PING acknowledgment, which hid the 100 ms.) Each
//! turn is checked against tshark's HTTP/2 dissector.

mod common;

use common::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn capture(name: &str) -> PathBuf {
    data_dir().join("grpc").join(name)
}

/// One frame's HTTP/2 frames as tshark reads them: (type, stream,
/// flags) each, its sender's port, the header values it carries and its
/// requests' methods and paths.
#[derive(Debug, Default)]
struct Http2Frames {
    port: u16,
    frames: Vec<(u8, u32, u8)>,
    values: String,
    methods: Vec<String>,
    paths: Vec<String>,
}

/// The frames of a capture whose HTTP/2 server listens on `port`.
fn http2_frames(capture: &Path, port: u16) -> BTreeMap<u64, Http2Frames> {
    let decode = format!("tcp.port=={port},http2");
    http2_frames_with(capture, &["-d", &decode])
}

/// The frames tshark reads in a capture, after the preferences `options`.
fn http2_frames_with(capture: &Path, options: &[&str]) -> BTreeMap<u64, Http2Frames> {
    let fields = [
        "frame.number",
        "tcp.srcport",
        "http2.type",
        "http2.streamid",
        "http2.flags",
        "http2.header.value",
        "http2.headers.method",
        "http2.headers.path",
    ];
    tshark_fields(capture, options, "http2", &fields)
        .into_iter()
        .map(|f| {
            let list = |s: &str| -> Vec<u64> {
                s.split(',')
                    .filter(|x| !x.is_empty())
                    .map(|x| match x.strip_prefix("0x") {
                        Some(hex) => u64::from_str_radix(hex, 16).unwrap(),
                        None => x.parse().unwrap(),
                    })
                    .collect()
            };
            let (kinds, streams, flags) = (list(&f[2]), list(&f[3]), list(&f[4]));
            let frames = (0..kinds.len())
                .map(|i| (kinds[i] as u8, streams[i] as u32, flags[i] as u8))
                .collect();
            let words = |s: &str| s.split(',').map(str::to_string).collect::<Vec<_>>();
            let h = Http2Frames {
                port: f[1].parse().unwrap(),
                frames,
                values: f[5].clone(),
                methods: words(&f[6]),
                paths: words(&f[7]),
            };
            (f[0].parse().unwrap(), h)
        })
        .collect()
}

const HEADERS: u8 = 1;
const END_STREAM: u8 = 1;

/// Checks every first-byte row of the connections: the request is a
/// client frame whose HEADERS opens a stream, named by its method and
/// path (HPACK decoded as tshark decodes it), the answer a server frame
/// with a HEADERS on a stream opened in the turn; every stream the
/// client opened begins a turn or rides in one; frames of flow control,
/// PINGs and acknowledgments alone begin or end none. Returns the turns:
/// (request frame, answer frame, streams the request frame opened).
fn check_turns(
    doc: &serde_json::Value,
    all: &BTreeMap<u64, Http2Frames>,
    server_port: u16,
) -> Vec<(u64, u64)> {
    let mut turns = Vec::new();
    let opening: Vec<u64> = all
        .iter()
        .filter(|(_, h)| h.port != server_port && h.frames.iter().any(|f| f.0 == HEADERS))
        .map(|(n, _)| *n)
        .collect();
    for c in doc["connections"].as_array().unwrap() {
        for row in first_byte_rows(c) {
            let (start, end) = (
                row["start_frame"].as_u64().unwrap(),
                row["end_frame"].as_u64().unwrap(),
            );
            let request = &all[&start];
            let name = format!("{} {}", request.methods[0], request.paths[0]);
            assert_eq!(
                row["label"].as_str().unwrap(),
                format!("{name}: request -> first byte")
            );
            assert!(
                opening.contains(&start),
                "turn at {start}: {:?}",
                all.get(&start)
            );
            let asked: Vec<u32> = all
                .range(start..end)
                .filter(|(_, h)| h.port != server_port)
                .flat_map(|(_, h)| h.frames.iter().filter(|f| f.0 == HEADERS).map(|f| f.1))
                .collect();
            let answer = &all[&end];
            assert_eq!(answer.port, server_port);
            assert!(
                answer
                    .frames
                    .iter()
                    .any(|f| f.0 == HEADERS && asked.contains(&f.1)),
                "turn {start} answered at {end} by {answer:?}, asked {asked:?}"
            );
            turns.push((start, end));
        }
    }
    // Every request's frame begins a turn or was sent before the answer
    // of the turn it rides in.
    for f in &opening {
        assert!(
            turns.iter().any(|(s, e)| s <= f && f < e),
            "request frame {f} in no turn: {turns:?}"
        );
    }
    turns
}

/// The one finding of a gRPC capture's connection: the Slow call's
/// handler, 100 ms of sleep, timed from that call's request frame (the
/// frame tshark shows with its `:path`), within the path's half round
/// trip of 100 ms. Returns the wait (request frame, answer frame).
fn the_slow_handler_is_the_one_finding(
    c: &serde_json::Value,
    all: &BTreeMap<u64, Http2Frames>,
) -> (u64, u64) {
    let slow = *all
        .iter()
        .find(|(_, h)| h.values.contains("/rttdoc.Lab/Slow"))
        .unwrap()
        .0;
    assert_eq!(kinds(&c["findings"]), ["server_think_time"]);
    let waits = think_waits(c);
    assert_eq!(waits.len(), 1, "{waits:?}");
    let (from, to, ms) = waits[0];
    assert_eq!(from, slow);
    let rtt = c["rtt_ms"].as_f64().unwrap();
    assert!(
        (100.0..100.0 + rtt / 2.0).contains(&ms),
        "{ms} ms, RTT {rtt} ms"
    );
    (from, to)
}

#[test]
fn grpc_turns_are_requests_and_their_answers_and_the_slow_handler_is_found() {
    if !require("h2c: grpc", &["tshark"], false) {
        return;
    }
    let cap = capture("grpc-h2c.pcap.gz");
    let doc = run_rttdoc_json(&cap);
    let all = http2_frames(&cap, 50051);
    let turns = check_turns(&doc, &all, 50051);
    // Five calls, one after another: five turns.
    assert_eq!(turns.len(), 5, "{turns:?}");
    let c = connection(&doc, 0);
    let (from, to) = the_slow_handler_is_the_one_finding(c, &all);
    assert!(turns.contains(&(from, to)));
    // The streamed call's answer runs from its first message to its
    // trailers (END_STREAM), the pauses between messages the server's
    // own: no excess.
    let feed = *all
        .iter()
        .find(|(_, h)| h.values.contains("/rttdoc.Lab/Feed"))
        .unwrap()
        .0;
    let feed_stream = all[&feed].frames.iter().find(|f| f.0 == HEADERS).unwrap().1;
    let trailers = *all
        .iter()
        .find(|(_, h)| {
            h.frames
                .iter()
                .any(|f| f.0 == HEADERS && f.1 == feed_stream && f.2 & END_STREAM != 0)
        })
        .unwrap()
        .0;
    let transfer = c["ledger"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["phase"] == "transfer" && r["end_frame"] == trailers)
        .unwrap_or_else(|| panic!("no transfer row ending at {trailers}: {}", c["ledger"]));
    assert_eq!(transfer["excess_ms"].as_f64(), Some(0.0), "{transfer}");
}

#[test]
fn nginx_h2c_turns_and_its_slow_backend() {
    if !require("h2c: nginx", &["tshark"], false) {
        return;
    }
    let cap = capture("nginx-h2c.pcap.gz");
    let doc = run_rttdoc_json(&cap);
    let all = http2_frames(&cap, 8080);
    let turns = check_turns(&doc, &all, 8080);
    // curl's four requests one after another, then three at once (one
    // turn: its first answer is the small file's).
    assert_eq!(turns.len(), 5, "{turns:?}");
    let sequential = connection(&doc, 0);
    let parallel = connection(&doc, 1);
    // Each request for /slow/ on the first connection waited for the
    // backend's 100 ms, and nothing else did.
    let slow: Vec<u64> = all
        .iter()
        .filter(|(n, h)| {
            **n < parallel["first_frame"].as_u64().unwrap()
                && h.port != 8080
                && h.values.contains("/slow/")
        })
        .map(|(n, _)| *n)
        .collect();
    assert_eq!(slow.len(), 2, "{slow:?}");
    let waits = think_waits(sequential);
    assert_eq!(
        waits.iter().map(|w| w.0).collect::<Vec<_>>(),
        slow,
        "{waits:?}"
    );
    let rtt = sequential["rtt_ms"].as_f64().unwrap();
    for (_, _, ms) in &waits {
        assert!(
            (100.0..100.0 + rtt / 2.0).contains(ms),
            "{ms} ms, RTT {rtt} ms"
        );
    }
    assert_eq!(kinds(&sequential["findings"]), ["server_think_time"]);
    // The parallel requests' turn was answered at once (the small file):
    // nothing claimed for it.
    assert_eq!(kinds_within(&parallel["findings"]), Vec::<&str>::new());
}

#[test]
fn an_upgrade_to_h2c_is_answered_by_stream_1_not_the_101() {
    if !require("h2c: upgrade", &["tshark"], false) {
        return;
    }
    // Apache httpd (`Protocols h2c http/1.1`) and curl --http2 on
    // http:// URLs (scripts/h2c-upgrade-captures.sh): each connection's
    // first request asks to upgrade, Apache's 101 leaves at once, the
    // answer comes as HEADERS on stream 1 (after a CGI's 100 ms for
    // /cgi-bin/slow). tshark follows the upgrade itself (no -d).
    let cap = capture("apache-h2c-upgrade.pcap.gz");
    let doc = run_rttdoc_json(&cap);
    let fields = [
        "frame.number",
        "tcp.stream",
        "http.request.uri",
        "http.response.code",
        "http2.type",
        "http2.streamid",
    ];
    let frames = tshark_fields(&cap, &[], "http || http2", &fields);
    let connections = doc["connections"].as_array().unwrap();
    assert_eq!(connections.len(), 2);
    for c in connections {
        let stream = c["stream"].as_u64().unwrap().to_string();
        let mine: Vec<&Vec<String>> = frames.iter().filter(|f| f[1] == stream).collect();
        let request = mine.iter().find(|f| !f[2].is_empty()).unwrap();
        let switching = mine.iter().find(|f| f[3] == "101").unwrap();
        // The first HEADERS on stream 1, in frames tshark read as HTTP/2.
        let answer = mine
            .iter()
            .find(|f| {
                let kinds: Vec<&str> = f[4].split(',').collect();
                let streams: Vec<&str> = f[5].split(',').collect();
                kinds
                    .iter()
                    .zip(&streams)
                    .any(|(k, s)| *k == "1" && *s == "1")
            })
            .unwrap();
        let rows: Vec<&serde_json::Value> = first_byte_rows(c).collect();
        assert_eq!(rows.len(), 1, "{}", c["ledger"]);
        let row = rows[0];
        assert_eq!(
            row["label"].as_str().unwrap(),
            format!("GET {}: request -> first byte", request[2])
        );
        assert_eq!(row["start_frame"].as_u64().unwrap().to_string(), request[0]);
        assert_eq!(row["end_frame"].as_u64().unwrap().to_string(), answer[0]);
        assert_ne!(switching[0], answer[0]);
        let waits = think_waits(c);
        if request[2] == "/cgi-bin/slow" {
            let rtt = c["rtt_ms"].as_f64().unwrap();
            assert_eq!(waits.len(), 1, "{waits:?}");
            assert!(
                (100.0..100.0 + rtt / 2.0).contains(&waits[0].2),
                "{waits:?}"
            );
        } else {
            assert_eq!(kinds_within(&c["findings"]), Vec::<&str>::new());
        }
    }
}

#[test]
fn a_grpc_channel_joined_mid_connection_still_finds_the_slow_call() {
    if !require("h2c: mid-connection", &["tshark", "editcap"], false) {
        return;
    }
    // The grpcio capture as a capture started later would hold it: from
    // the Slow call's request on (no handshake, no preface; the client on
    // a port below the server's 50051, HPACK's table begun before).
    let full = capture("grpc-h2c.pcap.gz");
    let all = http2_frames(&full, 50051);
    let slow = *all
        .iter()
        .find(|(_, h)| h.values.contains("/rttdoc.Lab/Slow"))
        .unwrap()
        .0;
    let dir = tempfile_dir("h2c-mid");
    let cut = dir.join("mid.pcap");
    let last = all.keys().max().unwrap() + 10;
    let status = std::process::Command::new("editcap")
        .args(["-r"])
        .arg(&full)
        .arg(&cut)
        .arg(format!("{slow}-{last}"))
        .status()
        .unwrap();
    assert!(status.success());
    let doc = run_rttdoc_json(&cut);
    let c = connection(&doc, 0);
    assert_eq!(c["client"]["port"], 40322, "{}", c["client"]);
    // Frame numbers start again at 1: the Slow request is frame 1.
    let rows: Vec<(u64, u64)> = first_byte_rows(c)
        .map(|r| {
            assert_eq!(
                r["label"].as_str().unwrap(),
                "HEADERS: request -> first byte"
            );
            (
                r["start_frame"].as_u64().unwrap(),
                r["end_frame"].as_u64().unwrap(),
            )
        })
        .collect();
    // Slow, Feed, Upload, Download.
    assert_eq!(rows.len(), 4, "{rows:?}");
    assert_eq!(rows[0].0, 1);
    let waits = think_waits(c);
    assert_eq!(waits.len(), 1, "{waits:?}");
    assert_eq!((waits[0].0, waits[0].1), rows[0]);
    let rtt = c["rtt_ms"].as_f64().unwrap();
    assert!(
        (100.0..100.0 + rtt / 2.0).contains(&waits[0].2),
        "{waits:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A fresh directory under the system's temporary one.
fn tempfile_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rttdoc-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn grpc_go_turns_and_its_slow_handler() {
    if !require("h2c: grpc-go", &["tshark"], false) {
        return;
    }
    // grpc-go on both ends (scripts/grpc-go-captures.sh): its client
    // sends a WINDOW_UPDATE and a PING after every answer and
    // acknowledges the server's PINGs; three calls at once end the
    // capture (one turn, answered by the call that slept 0 ms).
    let cap = capture("grpc-go-h2c.pcap.gz");
    let doc = run_rttdoc_json(&cap);
    let all = http2_frames(&cap, 50051);
    let turns = check_turns(&doc, &all, 50051);
    assert_eq!(turns.len(), 4, "{turns:?}");
    // Only the Slow handler's 100 ms, from its request (not from a PING
    // acknowledgment the client sent after it, as before h2c.rs).
    the_slow_handler_is_the_one_finding(connection(&doc, 0), &all);
}

#[test]
fn grpc_over_tls_claims_no_wait_its_control_frames_made() {
    if !require("h2 over TLS: grpc-go", &["tshark"], false) {
        return;
    }
    // The grpc-go calls over TLS 1.3 (scripts/grpc-go-captures.sh),
    // read without the key log: records known by size only. The client's
    // PING acknowledgments and WINDOW_UPDATE + PING records, each sent
    // the moment the server's data came, ask nothing (the Slow call's
    // 100 ms is not found either: a size alone cannot tell the server's
    // PING acknowledgment, which comes first, from an answer).
    let cap = capture("grpc-go-tls.pcap.gz");
    let doc = run_rttdoc_json(&cap);
    let c = connection(&doc, 0);
    assert_eq!(c["tls"]["version"], "TLS 1.3");
    assert_eq!(kinds(&c["findings"]), Vec::<&str>::new());
    // tshark, given the key log, reads the same connection as HTTP/2.
    let keylog = format!(
        "tls.keylog_file:{}",
        data_dir().join("grpc").join("grpc-go-tls.keylog").display()
    );
    let paths = tshark_fields(
        &cap,
        &["-o", &keylog],
        "http2.headers.path",
        &["http2.headers.path"],
    );
    assert!(
        paths.iter().any(|p| p[0].contains("/rttdoc.Lab/Slow")),
        "{paths:?}"
    );
}

#[test]
fn grpc_over_tls_with_its_key_log_is_read_frame_by_frame() {
    if !require("h2 over TLS with a key log: grpc-go", &["tshark"], false) {
        return;
    }
    // The same capture with the client's key log (`--keylog`): both
    // sides' application records opened, the frames read as in h2c, the
    // calls named, the Slow handler's 100 ms found from its request.
    let cap = capture("grpc-go-tls.pcap.gz");
    let keylog_path = data_dir().join("grpc").join("grpc-go-tls.keylog");
    let doc = run_rttdoc_json_with(&cap, &["--keylog", &keylog_path.to_string_lossy()]);
    let keylog = format!("tls.keylog_file:{}", keylog_path.display());
    let all = http2_frames_with(&cap, &["-o", &keylog]);
    let turns = check_turns(&doc, &all, 50051);
    assert_eq!(turns.len(), 4, "{turns:?}");
    the_slow_handler_is_the_one_finding(connection(&doc, 0), &all);
}
