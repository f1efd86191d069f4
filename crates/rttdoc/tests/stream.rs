//! Responses a server streams as it has them (tests/data/stream, made by
//! scripts/stream-captures.sh: python backends, directly and behind nginx
//! with proxy_buffering off, curl -N; real Linux TCP, 20 ms each way,
//! tcpdump at the client). Server-sent events every 80 ms and a language
//! model's tokens at irregular gaps, each after a first wait of 250-300 ms.
//!
//! Before sender_pace.rs the steady events were taken for a server timer's
//! ticks, the first of them too: the 300 ms before the head were "idle" and
//! no finding named them. And a stream's pieces, written as the server had
//! them, were transfer excess (+107 RTT on the tokens).

mod common;

use common::*;
use std::path::PathBuf;

fn capture(name: &str) -> PathBuf {
    data_dir().join("stream").join(format!("{name}.pcap.gz"))
}

const ALL: [&str; 4] = ["sse-python", "sse-nginx", "tokens-nginx", "tokens-tls"];

/// Frame number and time (s) of the frames tshark keeps with `filter`.
fn frames(name: &str, filter: &str) -> Vec<(u64, f64)> {
    tshark_fields(
        &capture(name),
        &["-o", "http.desegment_body:FALSE"],
        filter,
        &["frame.number", "frame.time_relative"],
    )
    .into_iter()
    .map(|f| (f[0].parse().unwrap(), f[1].parse().unwrap()))
    .collect()
}

/// The only connection of a capture's analysis.
fn analysis(name: &str) -> serde_json::Value {
    let doc = run_rttdoc_json(&capture(name));
    let conns = doc["connections"].as_array().unwrap();
    assert_eq!(conns.len(), 1, "{name}: one connection");
    conns[0].clone()
}

fn transfer_row(c: &serde_json::Value) -> &serde_json::Value {
    c["ledger"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["phase"] == "transfer")
        .expect("a response transfer row")
}

#[test]
fn a_streams_first_piece_answers_and_the_wait_before_it_is_the_servers() {
    if !require("stream first piece", &["tshark"], false) {
        return;
    }
    for name in ALL {
        let c = analysis(name);
        let handshake = frames(name, "tcp.flags.syn == 1");
        let rtt = handshake[1].1 - handshake[0].1;
        // The request: HTTP's, or inside TLS 1.3 the client's first
        // encrypted record after the segment with its Finished (which curl
        // sends behind a ChangeCipherSpec). The answer: the server's first
        // data at least 200 ms later (the backends wait 250-300 ms; a TLS
        // 1.3 server's session tickets come before that).
        let request = frames(
            name,
            "ip.src == 10.81.1.1 && (http.request || \
             (tls.record.opaque_type == 23 && !(tls.record.content_type == 20)))",
        )[0];
        let answer = *frames(name, "tcp.len > 0 && ip.src == 10.81.2.1")
            .iter()
            .find(|(_, t)| *t > request.1 + 0.2)
            .expect("an answer");
        let waits = think_waits(&c);
        assert_eq!(waits.len(), 1, "{name}: {waits:?}");
        let (from, to, ms) = waits[0];
        assert_eq!((from, to), (request.0, answer.0), "{name}");
        let expected = (answer.1 - request.1 - rtt) * 1e3;
        assert!(
            (ms - expected).abs() < 3.0 && ms > 200.0,
            "{name}: {ms} ms, tshark's times say {expected:.1}"
        );
    }
}

#[test]
fn pieces_sent_as_the_server_had_them_are_no_transfer_excess() {
    if !require("stream pieces", &["tshark"], false) {
        return;
    }
    // Behind nginx (Nagle off, every piece passed on at once), plain and
    // over TLS: events on a beat, tokens at irregular gaps, some sent
    // while the last was unacknowledged.
    for name in ["sse-nginx", "tokens-nginx", "tokens-tls"] {
        let c = analysis(name);
        let row = transfer_row(&c);
        let pieces = frames(name, "tcp.len > 0 && ip.src == 10.81.2.1");
        let span = pieces.last().unwrap().1 - pieces[1].1;
        assert!(
            row["duration_ms"].as_f64().unwrap() > 2000.0 && span > 2.0,
            "{name}: a stream of seconds: {row}"
        );
        assert_eq!(row["excess_ms"], 0.0, "{name}: {row}");
        assert!(
            row["ideal_basis"]
                .as_str()
                .unwrap()
                .contains("the server had nothing to send"),
            "{name}: {row}"
        );
        let nagle = ["nagle_hold", "nagle_delayed_ack", "write_write_read"];
        assert!(
            c["findings"]
                .as_array()
                .unwrap()
                .iter()
                .all(|f| !nagle.contains(&f["kind"].as_str().unwrap())),
            "{name}: {}",
            c["findings"]
        );
    }
}

#[test]
fn the_event_written_behind_the_head_was_held_and_the_rest_were_not() {
    if !require("stream nagle", &["tshark"], false) {
        return;
    }
    // http.server (Nagle on) writes the head, then the first event at
    // once: Nagle holds it until the head's ACK. Every later event is
    // written 80 ms after the one before, two round trips, with all
    // acknowledged: on time, though one may leave as an ACK arrives.
    let name = "sse-python";
    let c = analysis(name);
    let head = frames(name, "http.response")[0].0;
    let payloads = tshark_payloads(&capture(name));
    let first_event = *payloads
        .iter()
        .find(|(_, (src, bytes))| {
            src == "10.81.2.1" && String::from_utf8_lossy(bytes).contains("\"w0\"")
        })
        .expect("the first event")
        .0;
    assert!(first_event > head, "{name}: the event came on its own");
    let holds = waits_of(&c, "write_write_read", "transfer");
    assert_eq!(holds.len(), 1, "{name}: {}", c["findings"]);
    let (from, to, ms) = holds[0];
    assert_eq!((from, to), (head, first_event), "{name}");
    // The hold is the transfer's one excess: the other pauses were the
    // writer's.
    let row = transfer_row(&c);
    let excess = row["excess_ms"].as_f64().unwrap();
    assert!((excess - ms).abs() < 0.5, "{name}: {excess} vs {ms}: {row}");
    let later = payloads
        .iter()
        .filter(|(_, (src, bytes))| {
            src == "10.81.2.1" && String::from_utf8_lossy(bytes).contains("\"w")
        })
        .count();
    assert_eq!(later, 30, "{name}: every event in a segment of its own");
}

#[test]
fn an_upload_the_client_wrote_as_its_pipe_gave_it_is_no_latency_excess() {
    if !require("stream upload", &["tshark"], false) {
        return;
    }
    // curl -T - sends what a shell loop writes to its pipe, a line every
    // 100 ms, as a chunked PUT (its `Expect: 100-continue` answered by
    // http.server first). The body's two seconds are the client's pace:
    // before this session they were 1.95 s of "time lost", unexplained.
    let name = "upload-curl";
    let c = analysis(name);
    let interim = frames(name, "http.response.code == 100")[0];
    let body: Vec<(u64, f64)> = frames(name, "tcp.len > 0 && ip.src == 10.81.1.1")
        .into_iter()
        .filter(|(f, _)| *f > interim.0)
        .collect();
    assert!(body.len() >= 20, "{name}: the body's pieces: {body:?}");
    let paced = body.windows(2).filter(|w| w[1].1 - w[0].1 > 0.08).count();
    assert!(paced >= 18, "{name}: pieces 100 ms apart: {body:?}");
    let row = first_byte_rows(&c)
        .find(|r| r["start_frame"].as_u64().unwrap() >= body[0].0)
        .expect("the body's turn");
    assert!(
        row["ideal_basis"]
            .as_str()
            .unwrap()
            .contains("the client had nothing to send"),
        "{name}: {row}"
    );
    assert!(row["excess_ms"].as_f64().unwrap() < 5.0, "{name}: {row}");
    assert!(
        c["excess_ms"].as_f64().unwrap() < 5.0,
        "{name}: {}",
        c["excess_ms"]
    );
    // http.server writes the answer's head and body apart, Nagle on: the
    // body waits for the client's (delayed) ACK of the head.
    let head = frames(name, "http.response.code == 200")[0];
    let tail = *frames(name, "tcp.len > 0 && ip.src == 10.81.2.1")
        .iter()
        .find(|(f, _)| *f > head.0)
        .expect("the answer's body");
    let holds = waits_of(&c, "write_write_read", "transfer");
    assert_eq!(holds.len(), 1, "{name}: {}", c["findings"]);
    let (from, to, ms) = holds[0];
    assert_eq!((from, to), (head.0, tail.0), "{name}");
    assert!(
        ((tail.1 - head.1) * 1e3 - ms).abs() < 0.5,
        "{name}: {ms} ms"
    );
}
