//! FTP's data connections (tests/data/ftp, made by scripts/ftp-captures.sh:
//! vsftpd and python's ftplib, real Linux TCP, 20 ms each way, tcpdump at
//! the client; one session fetching three small files). In active mode
//! the server opens each data connection back to the client after `RETR`
//! and answers `150` once it is up: the answer waits a round trip that is
//! the data connection's handshake, not the server's work
//! (`connect_back`, not `server_think_time`). In passive mode the client
//! opens it before it asks: nothing waits.

mod common;

use common::*;

fn doc(name: &str) -> serde_json::Value {
    run_rttdoc_json(&data_dir().join("ftp").join(name))
}

#[test]
fn in_active_mode_each_retr_waits_for_the_data_connections_handshake() {
    let d = doc("vsftpd-active.pcap.gz");
    let control = connection(&d, 0);
    assert_eq!(kinds(&control["findings"]), ["connect_back"]);
    let waits = waits_of(control, "connect_back", "first_byte");
    assert_eq!(waits.len(), 3, "{waits:?}");
    // Each RETR's row, and its wait a round trip long.
    let rtt = control["rtt_ms"].as_f64().unwrap();
    let retr_rows: Vec<(u64, u64)> = control["ledger"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["label"].as_str().unwrap().starts_with("RETR: request"))
        .map(|r| {
            (
                r["start_frame"].as_u64().unwrap(),
                r["end_frame"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(retr_rows.len(), 3);
    for ((from, to, ms), row) in waits.iter().zip(&retr_rows) {
        assert_eq!((*from, *to), *row);
        assert!(
            (ms - rtt).abs() < 3.0,
            "{ms} ms against a {rtt} ms round trip"
        );
    }
    // The data connections are the server's: from its address to the
    // client's, cited by the finding's filter.
    let filter = control["findings"][0]["display_filter"].as_str().unwrap();
    for n in 1..=3 {
        let data = connection(&d, n);
        assert_eq!(data["client"]["ip"], control["server"]["ip"]);
        assert_eq!(data["server"]["ip"], control["client"]["ip"]);
        assert!(filter.contains(&format!("tcp.stream eq {n}")), "{filter}");
    }
    // The ledger's excess is the finding's.
    assert!(control["unexplained_ms"].as_f64().unwrap() < 10.0);
}

#[test]
fn in_passive_mode_nothing_waits() {
    let d = doc("vsftpd-passive.pcap.gz");
    for c in d["connections"].as_array().unwrap() {
        assert!(
            kinds(&c["findings"]).is_empty(),
            "{}: {:?}",
            c["stream"],
            c["findings"]
        );
    }
    // The client opened the data connections.
    let control = connection(&d, 0);
    for n in 1..=3 {
        assert_eq!(connection(&d, n)["client"]["ip"], control["client"]["ip"]);
    }
}
