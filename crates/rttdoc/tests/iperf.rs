//! iperf3 (tests/data/iperf, made by scripts/iperf-captures.sh: real
//! Linux TCP, 20 ms each way, tcpdump at the client). Its server writes
//! each state of the test on the control connection as one byte, with
//! Nagle on; TEST_START goes out once the test's data connection (a
//! sibling, between the same two addresses) has sent its cookie. In the
//! reverse test that cookie reached the server just after the client's
//! delayed ACK of CREATE_STREAMS: TEST_START left 0.2 ms after the ACK's
//! arrival by the clock shift, and was called a second write Nagle held
//! (`write_write_read`, 83 ms). Nothing was unacknowledged when the
//! server wrote it; the sibling's data, not the ACK, made it leave.

mod common;

use common::*;

fn capture(name: &str) -> std::path::PathBuf {
    data_dir().join("iperf").join(name)
}

#[test]
fn test_start_written_when_the_data_connection_s_cookie_came_is_no_nagle_hold() {
    if !require(
        "test_start_written_when_the_data_connection_s_cookie_came_is_no_nagle_hold",
        &["tshark"],
        false,
    ) {
        return;
    }
    let path = capture("iperf3-reverse.pcap.gz");
    // tshark: the control connection's one-byte states from the server,
    // the client's pure ACKs there, and the data connection's cookie.
    let rows = tshark_fields(
        &path,
        &[],
        "tcp.port == 5201",
        &[
            "frame.number",
            "tcp.stream",
            "ip.src",
            "tcp.len",
            "tcp.payload",
        ],
    );
    let frame = |pred: &dyn Fn(&Vec<String>) -> bool| -> u64 {
        rows.iter()
            .find(|r| pred(r))
            .map(|r| r[0].parse().unwrap())
            .expect("a frame")
    };
    let create = frame(&|r| r[1] == "0" && r[2] == "10.81.2.1" && r[4] == "0a");
    let start = frame(&|r| r[1] == "0" && r[2] == "10.81.2.1" && r[4] == "01");
    let cookie = frame(&|r| r[1] == "1" && r[2] == "10.81.1.1" && r[3] == "37");
    let ack = rows
        .iter()
        .filter(|r| r[1] == "0" && r[2] == "10.81.1.1" && r[3] == "0")
        .map(|r| r[0].parse::<u64>().unwrap())
        .find(|&f| f > create)
        .expect("the client's ACK of CREATE_STREAMS");
    // The mechanism is in the capture: ACK, then the sibling's cookie, then
    // TEST_START.
    assert!(
        create < ack && ack < cookie && cookie < start,
        "{create} {ack} {cookie} {start}"
    );
    let d = run_rttdoc_json(&path);
    let control = connection(&d, 0);
    assert_eq!(control["server"]["port"], 5201);
    let nagle: Vec<&serde_json::Value> = control["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| {
            ["nagle_hold", "nagle_delayed_ack", "write_write_read"]
                .contains(&f["kind"].as_str().unwrap())
        })
        .collect();
    assert!(nagle.is_empty(), "{nagle:?}");
}

#[test]
fn an_upload_and_its_control_connection_are_clean() {
    // Two data connections upload 256 KB each on a path with room for
    // them: nothing waited on the window, on Nagle or on the server.
    let d = run_rttdoc_json(&capture("iperf3-upload.pcap.gz"));
    let conns = d["connections"].as_array().unwrap();
    assert_eq!(conns.len(), 3);
    for c in conns {
        assert_eq!(kinds(&c["findings"]), Vec::<String>::new(), "{c}");
    }
}
