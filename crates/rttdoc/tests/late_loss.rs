//! Losses past the segments rttdoc keeps of a connection
//! (tests/data/semantics/late-loss.pcap.gz, made by
//! scripts/late-loss-captures.sh: a 4 MB download from nginx across a relay
//! that drops every 300th data packet, real Linux TCP, captured at the
//! client). The timeline holds a connection's first 2048 segments; the
//! re-sends after them were counted but the finding cited no frame of
//! them ("frames []" on a long lossy download). Then the tracker kept the
//! first 40 of their frames; now the segments past the timeline are
//! diagnosed a window at a time (docs/ARCHITECTURE.md, "Long
//! connections"): their re-sends are cited, and their waits measured.

mod common;

use common::*;
use std::collections::BTreeSet;

#[test]
fn re_sends_past_the_timeline_are_cited_and_said_to_be() {
    if !require("late loss", &["tshark"], false) {
        return;
    }
    let capture = data_dir().join("semantics").join("late-loss.pcap.gz");
    let doc = run_rttdoc_json(&capture);
    let c = connection(&doc, 0);
    let f = finding_in(c, "retransmission", "transfer");
    let cited: BTreeSet<u64> = f["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    // The connection's 2048th segment: what the timeline holds ends there.
    let segments = tshark_fields(&capture, &[], "tcp.stream eq 0", &["frame.number"]);
    let last_kept: u64 = segments[2047][0].parse().unwrap();
    let flagged: BTreeSet<u64> = tshark_fields(
        &capture,
        &[],
        "tcp.analysis.retransmission || tcp.analysis.fast_retransmission",
        &["frame.number"],
    )
    .iter()
    .map(|f| f[0].parse().unwrap())
    .collect();
    let late: Vec<u64> = flagged.iter().copied().filter(|&n| n > last_kept).collect();
    assert!(
        late.len() >= 3,
        "the capture has re-sends past the timeline: {flagged:?}"
    );
    assert!(
        flagged.iter().any(|&n| n <= last_kept),
        "and some inside it: {flagged:?}"
    );
    // Every re-send tshark flags is cited, those past the timeline too.
    assert!(
        flagged.is_subset(&cited),
        "cited {cited:?}, tshark's {flagged:?}"
    );
    // What rttdoc cites beyond tshark's fills a hole the client's SACK
    // blocks reported (tshark: "out-of-order"), a lost segment re-sent.
    let out_of_order: BTreeSet<u64> = tshark_fields(
        &capture,
        &[],
        "tcp.analysis.out_of_order",
        &["frame.number"],
    )
    .iter()
    .map(|f| f[0].parse().unwrap())
    .collect();
    for n in cited.difference(&flagged) {
        assert!(out_of_order.contains(n), "frame {n} is no re-send");
    }
    let words = f["explanation"].as_str().unwrap();
    assert!(
        words.contains(&format!(
            "The server retransmitted {} segment(s)",
            cited.len()
        )) && !words.contains("came after the first 2048 segments"),
        "{words}"
    );
    assert!(c["later_windows"]["windows"].as_u64() >= Some(1), "{c}");
    // A wait past the timeline is measured: the server's, its window full
    // while a repair was outstanding, released (its own timestamps echo
    // it) by the client's ACK of the repair.
    let waits = f["waits"].as_array().unwrap();
    assert!(
        waits
            .iter()
            .any(|w| w["to_frame"].as_u64().unwrap() > last_kept),
        "{waits:?}"
    );
    assert!(
        f["display_filter"]
            .as_str()
            .unwrap()
            .contains(&late[0].to_string()),
        "{}",
        f["display_filter"]
    );
}
