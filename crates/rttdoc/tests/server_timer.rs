//! A server that sends on its own timer (tests/data/push, made by
//! scripts/push-captures.sh: real Linux TCP, 20 ms each way, tcpdump at
//! the client). A feed's next tick is no answer to the client's message
//! before it, however late it came; a server answering between its ticks
//! is still timed; a server answering a client's polls at a steady pace
//! is thinking, whatever its rhythm.

mod common;

use common::*;

fn doc(name: &str) -> serde_json::Value {
    run_rttdoc_json(&data_dir().join("push").join(name))
}

/// The server's data segments of a capture: (frame, payload bytes).
fn server_data(name: &str) -> Vec<(u64, u64)> {
    let out = std::process::Command::new("tshark")
        .arg("-r")
        .arg(data_dir().join("push").join(name))
        .args([
            "-Y",
            "tcp.srcport == 9100 && tcp.len > 0",
            "-T",
            "fields",
            "-e",
            "frame.number",
            "-e",
            "tcp.len",
        ])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            let mut f = l.split('\t').map(|x| x.parse::<u64>().unwrap());
            (f.next().unwrap(), f.next().unwrap())
        })
        .collect()
}

#[test]
fn a_feeds_ticks_answer_nothing() {
    // A 61-byte tick every 500 ms; the client's 41-byte messages at random
    // times, never answered. Before: ten "answers" 49-381 ms late, 2.1 s
    // of server_think_time and 3.2 s beyond the ideal.
    let d = doc("feed.pcap.gz");
    let c = connection(&d, 0);
    assert!(c["exchanges"].as_u64().unwrap() >= 8);
    assert_eq!(c["findings"], serde_json::json!([]));
    assert_eq!(c["excess_ms"], 0.0);
    let idle = c["ledger"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["ideal_basis"].as_str().unwrap().contains("own timer"))
        .count();
    assert!(idle >= 8, "{}", c["ledger"]);
}

#[test]
fn answers_between_a_feeds_ticks_are_timed_and_the_ticks_are_not() {
    if !require("feed with answers", &["tshark"], false) {
        return;
    }
    // The same feed, and the client's GETs each answered (98 bytes) 150 ms
    // after they arrive.
    let name = "feed-answers.pcap.gz";
    let d = doc(name);
    let answers: Vec<u64> = server_data(name)
        .into_iter()
        .filter(|&(_, len)| len == 98)
        .map(|(f, _)| f)
        .collect();
    let waits = think_waits(connection(&d, 0));
    assert!(waits.len() >= 8, "{waits:?}");
    for (request, answer, ms) in &waits {
        assert!(
            answers.contains(answer),
            "{request} -> {answer}: a tick timed as an answer"
        );
        assert!(
            (149.0..160.0).contains(ms),
            "{request} -> {answer}: {ms} ms"
        );
    }
}

#[test]
fn a_server_answering_steady_polls_is_thinking() {
    // The client asks every 500 ms; the server answers each 100 ms later.
    let d = doc("poll.pcap.gz");
    let waits = think_waits(connection(&d, 0));
    assert!(waits.len() >= 12, "{waits:?}");
    for (request, answer, ms) in &waits {
        assert!((99.0..110.0).contains(ms), "{request} -> {answer}: {ms} ms");
    }
}

#[test]
fn the_connection_view_says_why_the_ticks_are_not_latency() {
    let out = std::process::Command::new(rttdoc_bin())
        .args(["analyze", "--color", "never", "--conn", "0"])
        .arg(data_dir().join("push/feed.pcap.gz"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    // The connection outlived the capture, in words.
    assert!(text.contains("still open when the capture ended"), "{text}");
    assert!(!text.contains("ended by Open"), "{text}");
    // Each turn's row names the timer.
    assert!(
        text.matches("a tick of the server's own timer").count() >= 8,
        "{text}"
    );
}
