//! Exim receiving mail from swaks (tests/data/smtp, made by
//! scripts/smtp-captures.sh: Exim 4.96 and swaks, real Linux TCP, 20 ms
//! each way, tcpdump at the client; two sessions per capture, each
//! EHLO, MAIL, RCPT, DATA, the message and QUIT, the client waiting for
//! every reply).
//!
//! - Exim answers QUIT only after it waited up to 200 ms for the client
//!   to close first (its trace: TCP_CORK, then a 200 ms poll on the
//!   socket, then the 221), so a client that waits for the 221 waits
//!   those 200 ms: `server_think_time` on the QUIT, sent the moment the
//!   last reply came and answered with the server's FIN (not an idle
//!   close: no idle timer is that short).
//! - After STARTTLS swaks writes its EHLO right behind its TLS Finished;
//!   Nagle holds it until Exim's ACK of the Finished, which Exim's kernel
//!   delays (no session tickets to send): `nagle_delayed_ack`, whose wait
//!   is the first request's, from the Finished.
//! - With ident lookups on (`rfc1413_hosts = *`) and the client's host
//!   dropping port 113, each greeting waits for the lookup's timeout; the
//!   capture shows the server's unanswered SYNs to the client's port 113:
//!   `connect_back`, the lookup's time, not the server's work.

mod common;

use common::*;

fn doc(name: &str) -> serde_json::Value {
    run_rttdoc_json(&data_dir().join("smtp").join(name))
}

/// The connection's first-byte rows: (exchange, start frame, end frame,
/// excess ms, why that ideal).
fn first_byte_turns(c: &serde_json::Value) -> Vec<(u64, u64, u64, f64, String)> {
    first_byte_rows(c)
        .map(|r| {
            (
                r["exchange"].as_u64().unwrap(),
                r["start_frame"].as_u64().unwrap(),
                r["end_frame"].as_u64().unwrap(),
                r["excess_ms"].as_f64().unwrap(),
                r["ideal_basis"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// Each session's QUIT (its last exchange, `exchanges` in all) waited
/// 200 ms for Exim's 221, and nothing else was slow.
fn assert_quit_held(name: &str, exchanges: u64) {
    let d = doc(name);
    for n in [0, 1] {
        let c = connection(&d, n);
        assert_eq!(c["exchanges"], exchanges, "{name} {n}");
        assert_eq!(kinds(&c["findings"]), ["server_think_time"], "{name} {n}");
        let rows = first_byte_turns(c);
        let quit = rows.last().unwrap();
        assert_eq!(quit.0, exchanges, "{name} {n}: {rows:?}");
        let waits = think_waits(c);
        assert_eq!(waits.len(), 1, "{name} {n}: {waits:?}");
        let (from, to, ms) = waits[0];
        assert_eq!((from, to), (quit.1, quit.2), "{name} {n}");
        assert!((195.0..215.0).contains(&ms), "{name} {n}: {ms} ms");
        // The ledger counts it: the QUIT's row holds the wait.
        assert!((quit.3 - ms).abs() < 5.0, "{name} {n}: {quit:?}");
        assert!(quit.4.starts_with("request out"), "{name} {n}: {quit:?}");
        // The commands name the rows, and the finding names the QUIT with
        // a fix for a QUIT.
        let labels = row_labels(c);
        assert_eq!(
            labels.first().map(String::as_str),
            Some("EHLO: request -> first byte")
        );
        assert_eq!(
            labels.last().map(String::as_str),
            Some("QUIT: request -> first byte"),
            "{labels:?}"
        );
        let f = &c["findings"][0];
        let text = f["explanation"].as_str().unwrap();
        assert!(
            text.starts_with(&format!("Exchange {exchanges} (QUIT):")),
            "{text}"
        );
        assert!(f["fix"].as_str().unwrap().contains("QUIT"), "{}", f["fix"]);
    }
}

/// The labels of the connection's first-byte rows after the greeting.
fn row_labels(c: &serde_json::Value) -> Vec<String> {
    first_byte_rows(c)
        .filter(|r| r["exchange"] != 0)
        .map(|r| r["label"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn exim_holds_its_answer_to_quit_200_ms_and_the_client_waits_for_it() {
    assert_quit_held("exim-plain.pcap.gz", 6);
}

#[test]
fn with_pipelining_the_quit_still_waits() {
    // MAIL, RCPT and DATA in one write: four exchanges.
    assert_quit_held("exim-pipelining.pcap.gz", 4);
}

#[test]
fn after_starttls_the_ehlo_waits_behind_the_finished_for_a_delayed_ack() {
    let d = doc("exim-starttls.pcap.gz");
    // The client's Finished, the server's ACK of it, the EHLO; and before
    // TLS, Exim's `220 TLS go ahead` and swaks' ClientHello 21 ms later
    // (its TLS set-up: the client's time in the STARTTLS preamble).
    for (n, (finished, ack, ehlo), (ready, hello)) in
        [(0, (14, 15, 16), (9, 10)), (1, (45, 46, 47), (40, 41))]
    {
        let c = connection(&d, n);
        assert_eq!(
            kinds(&c["findings"]),
            ["client_think_time", "nagle_delayed_ack"],
            "stream {n}"
        );
        let client = waits_of(c, "client_think_time", "starttls");
        assert_eq!(client.len(), 1, "stream {n}: {client:?}");
        assert_eq!((client[0].0, client[0].1), (ready, hello), "stream {n}");
        assert!(
            (15.0..30.0).contains(&client[0].2),
            "stream {n}: {client:?}"
        );
        let f = finding_in(c, "nagle_delayed_ack", "first_byte");
        let w = &f["waits"][0];
        assert_eq!(
            (&w["from_frame"], &w["to_frame"], &w["release_frame"]),
            (&finished.into(), &ehlo.into(), &ack.into()),
            "stream {n}"
        );
        let ms = w["ms"].as_f64().unwrap();
        assert!((80.0..100.0).contains(&ms), "stream {n}: {ms} ms");
        // The EHLO's row starts at the Finished: the ledger has the hold,
        // and gives it to the finding.
        let rows = first_byte_turns(c);
        let ehlo_row = &rows[0];
        assert_eq!(
            (ehlo_row.0, ehlo_row.1),
            (1, finished),
            "stream {n}: {rows:?}"
        );
        assert!((ehlo_row.3 - ms).abs() < 2.0, "stream {n}: {ehlo_row:?}");
        let attributed = f["attributed_ms"].as_f64().unwrap();
        assert!((attributed - ms).abs() < 0.01, "stream {n}: {attributed}");
        // The small segment unacknowledged was the TLS library's
        // Finished: writing the EHLO in one call would not avoid it.
        let fix = f["fix"].as_str().unwrap();
        assert!(
            fix.contains("behind the client's TLS Finished")
                && fix.contains("TCP_NODELAY")
                && !fix.contains("header and body together"),
            "stream {n}: {fix}"
        );
        // Inside TLS Exim answers QUIT at once, and the QUIT (sent the
        // moment the last reply came, answered, then closed) is a request
        // like the others, not a reaction to an idle close.
        let quit = rows.last().unwrap();
        assert!(quit.4.starts_with("request out"), "stream {n}: {quit:?}");
        assert!(quit.3 < 5.0, "stream {n}: {quit:?}");
    }
}

#[test]
fn an_ident_lookup_the_client_drops_holds_each_greeting_for_its_timeout() {
    let d = doc("exim-ident.pcap.gz");
    for (n, ident) in [(0, 1), (2, 3)] {
        let c = connection(&d, n);
        // The greeting (from the handshake's ACK) waited for the lookup:
        // its connection's time, not the server's work; Exim's 200 ms QUIT
        // hold stays the server's.
        let waits = waits_of(c, "connect_back", "first_byte");
        assert_eq!(waits.len(), 1, "{n}: {waits:?}");
        let (from, to, ms) = waits[0];
        let rows = first_byte_turns(c);
        assert_eq!(
            (rows[0].0, rows[0].1, rows[0].2),
            (0, from, to),
            "{n}: {rows:?}"
        );
        assert!((1990.0..2100.0).contains(&ms), "{n}: {ms} ms");
        let think = think_waits(c);
        assert_eq!(think.len(), 1, "{n}: {think:?}");
        assert_eq!(think[0].1, rows.last().unwrap().2, "the QUIT's");
        let lookup_finding = c["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["kind"] == "connect_back")
            .unwrap();
        let fix = lookup_finding["fix"].as_str().unwrap();
        assert!(fix.contains("rfc1413_query_timeout"), "{fix}");
        let text = lookup_finding["explanation"].as_str().unwrap();
        assert!(
            text.contains("ident port (113") && text.contains(&format!("stream {ident}")),
            "{text}"
        );
        // The lookup itself: the server's connection to the client's port
        // 113, its SYNs unanswered.
        let lookup = connection(&d, ident);
        assert_eq!(lookup["server"]["port"], 113);
        assert_eq!(lookup["server"]["ip"], c["client"]["ip"]);
        assert!(
            kinds(&lookup["findings"]).contains(&"syn_retransmit"),
            "{:?}",
            lookup["findings"]
        );
    }
}
