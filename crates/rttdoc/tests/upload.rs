//! An upload longer than a connection's timeline (2,048 segments), with
//! losses the client repaired after the request's last new byte: curl's
//! 3.5 MB PUT to nginx's WebDAV on a 40 ms path, captured at the client
//! (scripts/upload-captures.sh, tests/data/upload/put-loss.pcap.gz).
//!
//! nginx answers once the body is whole, which is when the last repair
//! arrived, not when the last new byte did: the wait between the two is
//! the loss's, in the request's row, and the server's time is only what
//! follows the repair. Read back with tshark: the server's ACK of the
//! whole body, then its answer at once.

mod common;

use common::*;

fn capture() -> std::path::PathBuf {
    data_dir().join("upload/put-loss.pcap.gz")
}

#[test]
fn an_uploads_late_repairs_are_its_loss_not_the_servers_time() {
    let doc = run_rttdoc_json(&capture());
    let c = connection(&doc, 0);
    let kinds = kinds(&c["findings"]);
    assert!(!kinds.contains(&"server_think_time"), "{kinds:?}");
    // The repairs' waits fall in the upload, the request -> first byte
    // row (the only one after the handshake), where they explain part of
    // its excess: not a transfer stall beside it.
    let resent = finding_in(c, "retransmission", "first_byte");
    assert!(resent["cost_ms"].as_f64().unwrap() > 0.0, "{resent}");
    assert!(
        !c["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["kind"] == "retransmission" && f["phase"] == "transfer"),
        "{}",
        c["findings"]
    );
    let row = &c["ledger"][1];
    assert_eq!(row["phase"], "first_byte", "{row}");
    assert!(row["excess_ms"].as_f64().unwrap() >= resent["cost_ms"].as_f64().unwrap());
    if !require(
        "an_uploads_late_repairs_are_its_loss_not_the_servers_time",
        &["tshark"],
        false,
    ) {
        return;
    }
    // What the test stands on: the client's last new byte left well
    // before its last repair, and the server's answer followed its ACK of
    // the whole body at once.
    let time = |filter: &str| -> Vec<f64> {
        tshark_fields(&capture(), &[], filter, &["frame.time_relative"])
            .iter()
            .map(|r| r[0].parse().unwrap())
            .collect()
    };
    let resends = time("tcp.srcport == 45000 && tcp.len > 0 && tcp.analysis.retransmission");
    let originals = time("tcp.srcport == 45000 && tcp.len > 0 && !tcp.analysis.retransmission");
    let last_resend = resends.last().copied().unwrap();
    let last_original = originals.last().copied().unwrap();
    assert!(
        last_resend - last_original > 0.020,
        "{last_original} {last_resend}"
    );
    let answer = time("tcp.srcport == 80 && tcp.len > 0")[0];
    let whole = tshark_fields(
        &capture(),
        &[],
        "tcp.srcport == 80 && tcp.len == 0",
        &["frame.time_relative", "tcp.ack"],
    );
    let body_acked = whole
        .iter()
        .filter(|r| r[1].parse::<u64>().unwrap() > 3_500_000)
        .map(|r| r[0].parse::<f64>().unwrap())
        .next()
        .unwrap();
    assert!(answer - body_acked < 0.005, "{body_acked} {answer}");
}
