//! A TLS handshake's turns (diagnose's `Facts::handshake_turns`): between
//! two flights only the answering host works. Captures where that work was
//! really done (scripts/handshake-turns-captures.sh, loopback, nginx):
//! a server decrypting an RSA key exchange's secret with an 8192-bit key
//! before its Finished, the same key signing before the ServerHello
//! (ECDHE), a client fetching a CRL (200 ms) while verifying nginx's
//! certificate, and that client without the fetch; and browsers' TLS False
//! Start in PcapPlusPlus' captures.

mod common;

use common::*;

fn turns_capture(name: &str) -> serde_json::Value {
    run_rttdoc_json(&data_dir().join("handshake-turns").join(name))
}

fn explanation<'a>(c: &'a serde_json::Value, kind: &str) -> &'a str {
    c["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == kind)
        .and_then(|f| f["explanation"].as_str())
        .unwrap_or_else(|| panic!("no {kind}"))
}

#[test]
fn a_server_decrypting_an_rsa_key_exchange_is_think_time_before_its_finished() {
    let doc = turns_capture("rsa-kx-8192-tls12.pcap.gz");
    let c = connection(&doc, 0);
    assert_eq!(c["tls"]["cipher"], "TLS_RSA_WITH_AES_128_GCM_SHA256");
    // The client's key exchange, ChangeCipherSpec and Finished (8), the
    // server's ChangeCipherSpec and Finished (9) 28 ms later.
    let waits = waits_of(c, "server_think_time", "tls_handshake");
    assert_eq!(waits.len(), 1, "{waits:?}");
    let (from, to, ms) = waits[0];
    assert_eq!((from, to), (8, 9));
    assert!((15.0..60.0).contains(&ms), "{ms} ms");
    assert!(explanation(c, "server_think_time").contains("RSA key exchange"));
    assert!(waits_of(c, "client_think_time", "tls_handshake").is_empty());
    // The handshake's excess is that wait, named.
    let extra = explanation(c, "tls_extra_rtt");
    assert!(
        extra.contains("server_think_time") && !extra.contains("unexplained"),
        "{extra}"
    );
}

#[test]
fn the_same_key_with_ecdhe_signs_before_the_server_hello_instead() {
    let doc = turns_capture("ecdhe-8192-tls12.pcap.gz");
    let c = connection(&doc, 0);
    let waits = waits_of(c, "server_think_time", "tls_handshake");
    assert_eq!(waits.len(), 1, "{waits:?}");
    // From the ClientHello (4) to the ServerHello's segment (6).
    assert_eq!((waits[0].0, waits[0].1), (4, 6));
    assert!((15.0..60.0).contains(&waits[0].2), "{waits:?}");
}

#[test]
fn a_client_fetching_a_crl_while_verifying_is_client_think_time() {
    let doc = turns_capture("crl-download-tls13.pcap.gz");
    let c = connection(&doc, 0);
    // The server's flight (6), the client's Finished flight (8) after the
    // CRL server's 200 ms.
    let waits = waits_of(c, "client_think_time", "tls_handshake");
    assert_eq!(waits.len(), 1, "{waits:?}");
    let (from, to, ms) = waits[0];
    assert_eq!((from, to), (6, 8));
    assert!((195.0..260.0).contains(&ms), "{ms} ms");
    assert!(waits_of(c, "server_think_time", "tls_handshake").is_empty());
    let extra = explanation(c, "tls_extra_rtt");
    assert!(
        extra.contains("client_think_time") && !extra.contains("unexplained"),
        "{extra}"
    );
}

#[test]
fn the_same_client_without_the_fetch_is_not() {
    let doc = turns_capture("no-crl-download-tls13.pcap.gz");
    let c = connection(&doc, 0);
    let kinds = kinds(&c["findings"]);
    assert!(kinds.is_empty(), "{kinds:?}");
}

#[test]
fn a_browsers_false_start_ends_its_handshake_at_its_own_finished() {
    let Some(doc) = public_doc(
        "seladb-PcapPlusPlus",
        "ExamplesTest__pcap_examples__tls.pcap",
    ) else {
        return;
    };
    // Stream 1: TLS 1.2 (ECDHE_ECDSA), the client's SPDY data (18, 19)
    // right behind its Finished (17), before the server's.
    let c = connection(&doc, 1);
    assert_eq!(c["tls"]["false_start"], true);
    let row = c["ledger"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["phase"] == "tls_handshake")
        .unwrap();
    assert_eq!(
        (row["start_frame"].as_u64(), row["end_frame"].as_u64()),
        (Some(9), Some(17))
    );
    // The ServerHello 90 ms late, the client's Finished 9.4 ms after the
    // flight's last segment (15); but the client closed 0.6 ms after its
    // Finished with nothing answered (Chrome letting a new SPDY session
    // go): nobody waited on either, and the row is idle.
    assert!(waits_of(c, "client_think_time", "tls_handshake").is_empty());
    assert!(waits_of(c, "server_think_time", "tls_handshake").is_empty());
    assert_eq!(row["excess_ms"], 0.0);
    // Stream 2 is TLS 1.3: no False Start, no flag.
    assert!(connection(&doc, 2)["tls"].get("false_start").is_none());
}

#[test]
fn a_server_flight_the_capture_missed_part_of_claims_no_client_time() {
    let Some(capture) = public_capture(
        "seladb-PcapPlusPlus",
        "ExamplesTest__pcap_examples__tls2.pcap",
    ) else {
        return;
    };
    let doc = run_rttdoc_json(&capture);
    // Streams 74-76: the client's answer came 710 ms after the last
    // captured segment of a server flight whose middle the capture lacks
    // (a lost segment's re-send it did not hold: a timeout's length).
    for stream in [74, 75, 76, 86] {
        let c = connection(&doc, stream);
        let waits = waits_of(c, "client_think_time", "tls_handshake");
        assert!(waits.is_empty(), "stream {stream}: {waits:?}");
    }
    // Stream 28: the whole flight (776-778), the Finished 29 ms later.
    let waits = waits_of(connection(&doc, 28), "client_think_time", "tls_handshake");
    assert_eq!((waits[0].0, waits[0].1), (778, 779), "{waits:?}");
    // Streams 284 and 241: the Finished 9.2 and 7.5 ms after the flight's
    // first segment, on 11.6 and 8 ms paths: no re-send of its missing
    // middle could have come back in that time (session 85's judges), so
    // the capture dropped it, and the client's turn is timed.
    for (stream, question, answer) in [(284, 6317, 6318), (241, 5651, 5652)] {
        let waits = waits_of(
            connection(&doc, stream),
            "client_think_time",
            "tls_handshake",
        );
        assert_eq!(waits.len(), 1, "stream {stream}: {waits:?}");
        assert_eq!(
            (waits[0].0, waits[0].1),
            (question, answer),
            "stream {stream}"
        );
    }
    // Stream 14: the Finished 53 ms after the ServerHello, which itself
    // came 26 ms after the ClientHello: time for a re-send, so untimed.
    let waits = waits_of(connection(&doc, 14), "client_think_time", "tls_handshake");
    assert!(waits.is_empty(), "stream 14: {waits:?}");
}
