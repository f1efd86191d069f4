//! TLS 1.3's middlebox-compatibility ChangeCipherSpec (RFC 8446 D.4), a
//! record that carries nothing, written alone by GnuTLS the moment the
//! server's flight comes: no answer in the handshake's turns, and a small
//! unacknowledged segment that Nagle holds the client's Finished behind
//! until the server's (delayed) ACK of it.
//!
//! Producer: scripts/tls13-compat-captures.sh, real Linux TCP, nginx
//! (TLS 1.3), 20 ms each way: gnutls-cli (captured at both ends) and wget
//! (GnuTLS) hold their Finished; controls: gnutls-cli with
//! `%DISABLE_TLS13_COMPAT_MODE` (no record) and curl (OpenSSL: the record
//! with the Finished, TCP_NODELAY). Committed under tests/data/tls13-compat,
//! re-made live when root.
//!
//! The oracle is tshark's reading of the same capture: the client's
//! segment that holds a ChangeCipherSpec alone (6 bytes, content type 20),
//! the server's pure ACK of it and the client's next data. A hold is that
//! data leaving the moment the ACK came (at the client: within a
//! millisecond; at the server: one round trip after the ACK left, the
//! SYN-ACK's), the ACK delayed 40 ms or more (a delayed-ACK timer); its
//! cost, the time from the record to that data.

mod common;

use std::path::Path;

use common::*;

/// What the oracle reads of a capture's one TLS connection: the record's
/// frame, the ACK's, the held data's, the hold (ms) and whether the ACK
/// released it; None without a record alone.
fn oracle(capture: &Path) -> Option<(u64, u64, u64, f64, bool)> {
    let rows = tshark_fields(
        capture,
        &[],
        "tcp.stream == 0",
        &[
            "frame.number",
            "frame.time_relative",
            "tcp.srcport",
            "tcp.len",
            "tls.record.content_type",
            "tcp.seq",
            "tcp.ack",
            "tcp.flags.syn",
        ],
    );
    let client_port = &rows.first()?[2];
    let num = |s: &String| s.parse::<f64>().unwrap();
    let from_client = |r: &Vec<String>| &r[2] == client_port;
    let at = rows
        .iter()
        .position(|r| from_client(r) && r[3] == "6" && r[4] == "20")?;
    let record = &rows[at];
    let record_end = num(&record[5]) + 6.0;
    let ack = rows[at..]
        .iter()
        .find(|r| !from_client(r) && r[3] == "0" && num(&r[6]) >= record_end)?;
    let held = rows[at + 1..]
        .iter()
        .find(|r| from_client(r) && r[3] != "0")?;
    let t = |r: &Vec<String>| num(&r[1]) * 1e3;
    // The capture's side: at the client its SYN leaves first and the
    // SYN-ACK comes a round trip later; at the server the SYN-ACK leaves
    // at once and the client's ACK comes a round trip later.
    let syn_ack = rows.iter().position(|r| r[7] == "1" && !from_client(r))?;
    let answered_in = t(&rows[syn_ack + 1]) - t(&rows[syn_ack]);
    let lag = t(held) - t(ack);
    let released = if answered_in < 1.0 {
        (0.0..1.0).contains(&lag)
    } else {
        // (At the server: `answered_in` is the round trip.)
        (lag - answered_in).abs() < 2.0
    };
    let frame = |r: &Vec<String>| r[0].parse::<u64>().unwrap();
    Some((
        frame(record),
        frame(ack),
        frame(held),
        t(held) - t(record),
        released,
    ))
}

/// Checks rttdoc against the oracle on the captures in `dir`: each of the
/// three whose Finished the oracle shows held (a record alone, released by
/// the ACK, 40 ms or more) must be read as that hold, and at least
/// `held_at_least` of them must be (a live capture on a loaded machine may not reproduce
/// it: GnuTLS' timing is the machine's); the controls never.
fn check(dir: &Path, held_at_least: usize) {
    let mut holds = 0;
    for name in ["gnutls-client", "gnutls-server", "wget-client"] {
        let capture = dir.join(format!("{name}.pcap.gz"));
        let Some((record, ack, held, hold_ms, true)) = oracle(&capture).filter(|o| o.3 >= 40.0)
        else {
            eprintln!(
                "{name}: the oracle shows no Finished held: {:?}",
                oracle(&capture)
            );
            continue;
        };
        holds += 1;
        let doc = run_rttdoc_json(&capture);
        let the = |kind: &str| {
            let found = findings_of(&doc, kind);
            // (A live capture's timing is the machine's: what rttdoc saw
            // instead, for the next reader of a CI log.)
            let c = &doc["connections"][0];
            assert_eq!(
                found.len(),
                1,
                "{name}: {kind}: {found:?}; the oracle: record {record}, ACK {ack}, held {held}, \
                 {hold_ms:.1} ms; rttdoc: vantage {}, rtt {} ms, findings {}",
                c["vantage"],
                c["rtt_ms"],
                c["findings"]
            );
            found[0].1
        };
        let nagle = the("nagle_delayed_ack");
        assert_eq!(nagle["phase"], "tls_handshake", "{name}");
        let frames = frames_of(nagle);
        assert_eq!(frames, vec![record, ack, held], "{name}: record {record}");
        let cost = nagle["cost_ms"].as_f64().unwrap();
        assert!(
            (cost - hold_ms).abs() < 1.0,
            "{name}: {cost} ms, the oracle {hold_ms:.1} ms"
        );
        let said = nagle["explanation"].as_str().unwrap();
        assert!(
            said.contains(&format!(
                "behind its own earlier small one (frame {record})"
            )),
            "{name}: {said}"
        );
        assert!(
            nagle["fix"]
                .as_str()
                .unwrap()
                .contains("%DISABLE_TLS13_COMPAT_MODE"),
            "{}",
            nagle["fix"]
        );
        // The client's turn was the record's 0.3 ms, not its Finished's
        // wait; the handshake's excess is the hold.
        assert_no_finding(&doc, "client_think_time");
        let extra = the("tls_extra_rtt");
        let said = extra["explanation"].as_str().unwrap();
        assert!(said.contains("Causes: nagle_delayed_ack"), "{name}: {said}");
    }
    assert!(holds >= held_at_least, "{holds} holds in {}", dir.display());
    // Controls: no record alone (none at all; or with the Finished), and
    // no hold.
    for name in ["nocompat-client", "curl-client"] {
        let capture = dir.join(format!("{name}.pcap.gz"));
        assert!(oracle(&capture).is_none(), "{name}");
        let doc = run_rttdoc_json(&capture);
        for kind in [
            "nagle_delayed_ack",
            "nagle_hold",
            "client_think_time",
            "tls_extra_rtt",
        ] {
            assert_no_finding(&doc, kind);
        }
    }
}

#[test]
fn committed_finisheds_held_behind_the_compatibility_record_are_nagles() {
    if !require(
        "committed_finisheds_held_behind_the_compatibility_record_are_nagles",
        &["tshark"],
        false,
    ) {
        return;
    }
    check(&data_dir().join("tls13-compat"), 3);
}

#[test]
fn live_finisheds_held_behind_the_compatibility_record_are_nagles() {
    if !require(
        "live_finisheds_held_behind_the_compatibility_record_are_nagles",
        &[
            "tshark",
            "ip",
            "tcpdump",
            "nginx",
            "openssl",
            "gnutls-cli",
            "wget",
            "curl",
            "python3",
        ],
        true,
    ) {
        return;
    }
    let dir = TempDir::new("tls13-compat");
    run_capture_script("tls13-compat-captures.sh", &[dir.0.as_os_str()]);
    check(&dir.0, 1);
}
