//! Database replication through real servers (tests/data/replication,
//! made by scripts/replication-captures.sh: MariaDB 10.11 with
//! semi-synchronous replication, PostgreSQL 15's streaming replication;
//! the replica in the client's namespace, 20 ms each way, tcpdump at the
//! replica). The primary sends each transaction's events or WAL when it
//! commits, at irregular gaps; a MariaDB replica acknowledges each
//! (`0xef`): before binlog.rs the acknowledgments "asked" and the next
//! transaction "answered", 3.4 s of `server_think_time`.

mod common;

use common::*;
use std::path::PathBuf;

fn capture(name: &str) -> PathBuf {
    data_dir().join("replication").join(name)
}

#[test]
fn a_semi_sync_replicas_acknowledgments_ask_nothing() {
    if !require("replication: MariaDB", &["tshark"], false) {
        return;
    }
    let cap = capture("mariadb-semisync.pcap.gz");
    let doc = run_rttdoc_json(&cap);
    assert_no_finding(&doc, "server_think_time");
    let payloads = tshark_payloads(&cap);
    // The replica's acknowledgments: one packet each, payload 0xef.
    let acks: Vec<u64> = payloads
        .iter()
        .filter(|(_, (ip, b))| ip == "10.81.1.1" && b.get(4) == Some(&0xef))
        .map(|(f, _)| *f)
        .collect();
    assert!(acks.len() >= 3, "{acks:?}");
    let mut dumps = 0;
    for c in doc["connections"].as_array().unwrap() {
        for row in first_byte_rows(c) {
            let start = row["start_frame"].as_u64().unwrap();
            assert!(!acks.contains(&start), "an acknowledgment asked: {row}");
            if row["label"]
                .as_str()
                .unwrap()
                .starts_with("COM_BINLOG_DUMP")
            {
                // The dump's command byte, 0x12 or 0x1e, after the header.
                let command = payloads[&start].1[4];
                assert!([0x12, 0x1e].contains(&command), "{command:#x}");
                dumps += 1;
            }
        }
    }
    assert_eq!(dumps, 1);
}

#[test]
fn postgres_streaming_replication_has_no_finding() {
    // The replica's status updates (CopyData `r`) ask nothing; the WAL
    // the primary sends as transactions commit answers nothing: a control.
    let doc = run_rttdoc_json(&capture("postgres-streaming.pcap.gz"));
    for c in doc["connections"].as_array().unwrap() {
        assert!(kinds(&c["findings"]).is_empty(), "{}", c["findings"]);
    }
}
