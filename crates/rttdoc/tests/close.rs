//! Re-sends after the client closed for good cost no one.
//!
//! Producer: the Linux kernel (scripts/close-captures.sh): a router
//! black-holes the path both ways just after the server's greeting; the
//! client writes 8 bytes and 0.1 s later either close()s (closed.pcap:
//! its kernel re-sends the bytes and its FIN into the dead path, and when
//! the path heals answers the server's data with an RST, as it does for a
//! socket whose application let go) or shutdown()s its write side and
//! goes on reading (halfclosed.pcap: the same re-sends, then it reads the
//! server's data, so it waited for the answer: the stalls are its first
//! byte's). Committed under tests/data/close, re-made live when root.

mod common;

use std::path::Path;

use common::*;

/// The client's first FIN and every re-send of its data (from tshark).
fn client_fin_and_resends(capture: &Path) -> (u64, Vec<u64>) {
    let fins = tshark_fields(
        capture,
        &[],
        "tcp.flags.fin == 1 && tcp.srcport != 7000",
        &["frame.number"],
    );
    let resends = tshark_fields(
        capture,
        &[],
        "tcp.analysis.retransmission && tcp.len > 0 && tcp.srcport != 7000",
        &["frame.number"],
    );
    (
        fins[0][0].parse().unwrap(),
        resends.iter().map(|r| r[0].parse().unwrap()).collect(),
    )
}

fn findings<'a>(c: &'a serde_json::Value, kind: &str) -> Vec<&'a serde_json::Value> {
    c["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == kind)
        .collect()
}

fn check(dir: &Path, suffix: &str) {
    let closed = dir.join(format!("closed.pcap{suffix}"));
    let halfclosed = dir.join(format!("halfclosed.pcap{suffix}"));
    for capture in [&closed, &halfclosed] {
        assert_agrees_with_tshark(capture, &[]);
    }

    // The client closed for good: it reset the server's data after its FIN.
    let resets = tshark_fields(
        &closed,
        &[],
        "tcp.flags.reset == 1 && tcp.srcport != 7000",
        &["frame.number"],
    );
    assert_eq!(resets.len(), 1, "the client's RST: {resets:?}");
    let (fin, resends) = client_fin_and_resends(&closed);
    let after_fin: Vec<u64> = resends.iter().copied().filter(|&r| r > fin).collect();
    assert!(
        after_fin.len() >= 2,
        "the timer re-sent the bytes after the FIN: {resends:?}, FIN {fin}"
    );
    let doc = run_rttdoc_json(&closed);
    let c = connection(&doc, 0);
    // Cited: the data was sent again ...
    let retx = findings(c, "retransmission");
    assert_eq!(retx.len(), 1, "{c}");
    let cited = frames_cited(retx[0]);
    for r in &after_fin {
        assert!(cited.contains(r), "{r} cited in {cited:?}");
    }
    // ... but no silence after the FIN was anyone's wait.
    for f in c["findings"].as_array().unwrap() {
        for w in f["waits"].as_array().into_iter().flatten() {
            assert!(
                w["from_frame"].as_u64().unwrap() < fin,
                "a wait after the client's FIN {fin}: {f}"
            );
        }
    }
    assert!(findings(c, "rto_stall").is_empty(), "{c}");

    // The control: a client that only shut down its write side still
    // reads, and waited for every re-send of its request.
    let resets = tshark_fields(
        &halfclosed,
        &[],
        "tcp.flags.reset == 1 && tcp.srcport != 7000",
        &["frame.number"],
    );
    assert!(resets.is_empty(), "no RST from the client: {resets:?}");
    let (fin, resends) = client_fin_and_resends(&halfclosed);
    let doc = run_rttdoc_json(&halfclosed);
    let c = connection(&doc, 0);
    let stalls = findings(c, "rto_stall");
    assert_eq!(stalls.len(), 1, "{c}");
    let waits = stalls[0]["waits"].as_array().unwrap();
    let after: Vec<u64> = waits
        .iter()
        .filter(|w| w["from_frame"].as_u64().unwrap() >= fin)
        .map(|w| w["to_frame"].as_u64().unwrap())
        .collect();
    let expected: Vec<u64> = resends.iter().copied().filter(|&r| r > fin).collect();
    assert_eq!(after, expected, "every timer re-send after the FIN waited");
    // The request's re-sends stalled its answer: the first byte's
    // latency, which the client (still reading) had.
    assert_eq!(stalls[0]["phase"], "first_byte", "{}", stalls[0]);
    let row = first_byte_rows(c).next().expect("a first-byte row");
    assert!(
        !row["ideal_basis"]
            .as_str()
            .unwrap()
            .contains("client closed"),
        "{row}"
    );
    assert!(
        stalls[0]["attributed_ms"].as_f64().unwrap() > 0.0,
        "{}",
        stalls[0]
    );
}

#[test]
fn committed_resends_after_a_close_for_good_cost_no_one() {
    if !require(
        "committed_resends_after_a_close_for_good_cost_no_one",
        &["tshark"],
        false,
    ) {
        return;
    }
    check(&data_dir().join("close"), ".gz");
}

#[test]
fn live_resends_after_a_close_for_good_cost_no_one() {
    if !require(
        "live_resends_after_a_close_for_good_cost_no_one",
        &["tshark", "ip", "tcpdump", "python3"],
        true,
    ) {
        return;
    }
    let dir = TempDir::new("close");
    run_capture_script("close-captures.sh", &[dir.0.as_os_str()]);
    check(&dir.0, "");
}
