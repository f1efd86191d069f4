//! IMAP's IDLE through a real server (tests/data/imap, made by
//! scripts/imap-captures.sh: Dovecot, a client on real Linux TCP, 20 ms
//! each way, tcpdump at the client). IDLE is answered by its continuation
//! (`+ idling`); what Dovecot sends after it, until the client's DONE, is
//! news it pushes (a message another session appended: `* 1 EXISTS`),
//! nobody's answer and no part of IDLE's. Each turn is checked against
//! tshark's IMAP dissector.

mod common;

use common::*;

/// Each IMAP frame tshark reads: (frame, stream, the client's request
/// line, the server's response line).
fn lines(capture: &std::path::Path) -> Vec<(u64, u64, String, String)> {
    let fields = [
        "frame.number",
        "tcp.stream",
        "imap.request",
        "imap.response",
    ];
    tshark_fields(capture, &[], "imap", &fields)
        .into_iter()
        .map(|f| {
            (
                f[0].parse().unwrap(),
                f[1].parse().unwrap(),
                f[2].to_string(),
                f[3].to_string(),
            )
        })
        .collect()
}

#[test]
fn what_a_server_pushes_during_idle_answers_nothing() {
    if !require("imap idle", &["tshark"], false) {
        return;
    }
    let capture = data_dir().join("imap").join("dovecot-idle.pcap.gz");
    let doc = run_rttdoc_json(&capture);
    let all = lines(&capture);
    let line = |frame: u64| {
        all.iter()
            .find(|l| l.0 == frame)
            .unwrap_or_else(|| panic!("no IMAP in frame {frame}"))
    };
    let idler = connection(&doc, 0);
    assert_eq!(kinds(&idler["findings"]), Vec::<&str>::new());
    // Every named turn's request is that command (after its tag; DONE
    // has none) and its first byte the server's next line.
    let mut named = Vec::new();
    for row in first_byte_rows(idler).filter(|r| r["exchange"].as_u64().unwrap_or(0) > 0) {
        let label = row["label"].as_str().unwrap();
        let command = label.split(':').next().unwrap();
        let request = &line(row["start_frame"].as_u64().unwrap()).2;
        let said = request.split(' ').nth(1).unwrap_or(request);
        assert_eq!(said, command, "{label}: {request}");
        assert!(!line(row["end_frame"].as_u64().unwrap()).3.is_empty());
        named.push(command.to_string());
    }
    assert_eq!(
        named,
        ["LOGIN", "SELECT", "IDLE", "DONE", "FETCH", "LOGOUT"]
    );
    // IDLE's answer is its continuation alone.
    let rows = idler["ledger"].as_array().unwrap();
    let idle = rows
        .iter()
        .find(|r| r["label"] == "IDLE: request -> first byte")
        .unwrap();
    assert_eq!(line(idle["end_frame"].as_u64().unwrap()).3, "+ idling");
    assert!(
        rows.iter().all(|r| !r["label"]
            .as_str()
            .unwrap()
            .starts_with("IDLE: response transfer")),
        "{rows:?}"
    );
    // The push: the server's line between the continuation and DONE, in
    // no row of the ledger.
    let done = first_byte_rows(idler)
        .find(|r| r["label"] == "DONE: request -> first byte")
        .unwrap()["start_frame"]
        .as_u64()
        .unwrap();
    let continuation = idle["end_frame"].as_u64().unwrap();
    let pushed: Vec<u64> = all
        .iter()
        .filter(|l| l.1 == 0 && continuation < l.0 && l.0 < done)
        .map(|l| l.0)
        .collect();
    assert_eq!(pushed.len(), 1, "{pushed:?}");
    for r in rows {
        let (from, to) = (
            r["start_frame"].as_u64().unwrap(),
            r["end_frame"].as_u64().unwrap(),
        );
        assert!(!(from..=to).contains(&pushed[0]), "{r}");
    }
}
