//! Time nobody lost to the network is not latency beyond the ideal: a
//! client's own pause inside a request, a message that asked nothing,
//! an answer that began where the capture cannot time it (ledger.rs in
//! rttdoc-diagnose, exchange.rs in rttdoc-analyze; docs/findings.md, "How
//! costs add up").
//!
//! tests/data/ledger is made by scripts/ledger-captures.sh: real Linux TCP
//! and nginx across a 40 ms path, captured at the client; the public
//! captures are as their projects ship them.

mod common;

use common::*;
use serde_json::Value;

fn ledger(c: &Value) -> &Vec<Value> {
    c["ledger"].as_array().unwrap()
}

/// The first-byte ledger row of `c` that ends at frame `end`.
fn row_ending_at(c: &Value, end: u64) -> &Value {
    ledger(c)
        .iter()
        .find(|r| r["phase"] == "first_byte" && r["end_frame"] == end)
        .unwrap_or_else(|| panic!("no first-byte row ends at {end}: {:#?}", ledger(c)))
}

/// The first-byte ledger row of `c` that starts at frame `start`.
fn row_starting_at(c: &Value, start: u64) -> &Value {
    ledger(c)
        .iter()
        .find(|r| r["phase"] == "first_byte" && r["start_frame"] == start)
        .unwrap_or_else(|| panic!("no first-byte row starts at {start}: {:#?}", ledger(c)))
}

fn excess_ms(row: &Value) -> f64 {
    row["excess_ms"].as_f64().unwrap_or(0.0)
}

fn kinds_of(c: &Value) -> Vec<String> {
    c["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap().to_string())
        .collect()
}

fn ledger_capture(name: &str) -> Value {
    run_rttdoc_json(&data_dir().join("ledger").join(format!("{name}.pcap.gz")))
}

#[test]
fn a_clients_pause_inside_a_request_is_not_latency() {
    // The client wrote a request's first line and Host (frame 4), paused
    // 1.5 s, then ended the head (6); nginx answered (8) a round trip
    // after the end. The wait for the answer began at 6: the 1.5 s were
    // the client's, not the network's (they were 1.5 s "beyond the ideal").
    let doc = ledger_capture("client-pause");
    let c = connection(&doc, 0);
    let rtt = c["rtt_ms"].as_f64().unwrap();
    let answered = row_ending_at(c, 8);
    assert_eq!(answered["start_frame"], 6, "{answered}");
    assert_eq!(answered["label"], "GET /index.html: request -> first byte");
    assert!(
        answered["duration_ms"].as_f64().unwrap() < rtt + 20.0,
        "{answered}"
    );
    // (The relay's jitter: a few ms beyond the handshake's round trip.)
    assert!(excess_ms(answered) < 10.0, "{answered}");
    assert!(
        c["excess_ms"].as_f64().unwrap() < 20.0,
        "{}",
        c["excess_ms"]
    );
    assert_eq!(kinds_of(c), Vec::<String>::new());
    // The second request, without a pause, is one piece and one round trip.
    let second = row_ending_at(c, 11);
    assert_eq!(second["start_frame"], 10);
}

#[test]
fn an_answer_whose_first_flight_the_capture_missed_is_not_timed() {
    // The control: curl's request (4), the answer's first flight of ten
    // segments at once (6-24) a round trip later. One round trip, the
    // ideal.
    let whole = ledger_capture("answer-whole");
    let c = connection(&whole, 0);
    let row = row_starting_at(c, 4);
    assert_eq!(row["end_frame"], 6, "{row}");
    assert_eq!(excess_ms(row), 0.0);
    assert!(!kinds_of(c).contains(&"server_think_time".to_string()));
    // The same capture without that flight (editcap), the client's ACKs of
    // it kept: the first captured segment of the answer came a round trip
    // later than the answer began. Timing the answer from it made 40 ms of
    // server "think time"; when the answer began is unknown.
    let missed = ledger_capture("answer-missed");
    let c = connection(&missed, 0);
    let rtt = c["rtt_ms"].as_f64().unwrap();
    let row = row_starting_at(c, 4);
    assert!(row["duration_ms"].as_f64().unwrap() > 1.5 * rtt, "{row}");
    assert_eq!(excess_ms(row), 0.0, "{row}");
    let basis = row["ideal_basis"].as_str().unwrap();
    assert!(basis.contains("capture missed"), "{basis}");
    assert!(
        !kinds_of(c).contains(&"server_think_time".to_string()),
        "{:#?}",
        c["findings"]
    );
}

#[test]
fn a_browsers_capture_of_only_its_data_packets_counts_no_idle_minutes() {
    // tls2.pcap: 146 s of a browser, only the packets with data (no SYN,
    // no pure ACK). Its headline was 1142 s of latency beyond the ideal,
    // 1133 s unexplained: minutes of HTTP/2 idleness counted as waits.
    let Some(capture) = public_capture(
        "seladb-PcapPlusPlus",
        "ExamplesTest__pcap_examples__tls2.pcap",
    ) else {
        return;
    };
    let doc = run_rttdoc_json(&capture);
    // Stream 17: the client's SETTINGS acknowledgment (473) the moment
    // the server's settings came, then 58 s later its PING (2310),
    // answered 12 ms after (2311). The wait was the PING's.
    let c = connection(&doc, 17);
    let ping = row_ending_at(c, 2311);
    assert_eq!(ping["start_frame"], 2310, "{ping}");
    for r in ledger(c).iter().filter(|r| r["phase"] == "first_byte") {
        assert!(excess_ms(r) < 100.0, "{r}");
    }
    // Stream 134: the client's WINDOW_UPDATE-sized record (3579) the
    // moment the server's data came; 60 s later the server's GOAWAY and
    // close_notify (7443, 7444): its idle timeout, nobody's answer.
    let c = connection(&doc, 134);
    let idle = row_starting_at(c, 3579);
    assert_eq!(excess_ms(idle), 0.0, "{idle}");
    assert!(idle["ideal_basis"].as_str().unwrap().contains("idle close"));
    // Stream 307: the request (7064, 457 bytes, ack 3037); by its next
    // record (7068) the client acknowledged 11659: the answer came in
    // segments the capture lacks (it was timed to 7098, a second later,
    // on a 183 ms path). 7064's answer is not timed, and 7068 is a
    // request of its own, whose answer began in the next hole.
    let c = connection(&doc, 307);
    assert!(ledger(c)
        .iter()
        .all(|r| r["start_frame"] != 7064 || excess_ms(r) == 0.0));
    let missed = row_starting_at(c, 7068);
    assert_eq!(excess_ms(missed), 0.0, "{missed}");
    assert!(missed["ideal_basis"]
        .as_str()
        .unwrap()
        .contains("capture missed"));
    assert!(!kinds_of(c).contains(&"server_think_time".to_string()));
}

#[test]
fn a_keep_alive_byte_before_a_request_does_not_start_it() {
    // many-protocols.pcap stream 1 (a capture joined mid-connection): the
    // client's keep-alive byte (33), the server's ACK, another keep-alive
    // 10 s later, and 4.4 s after that a GET (1286), answered 185 ms later
    // (1290). The GET's wait began at the GET.
    let Some(doc) = public_doc(
        "seladb-PcapPlusPlus",
        "ExamplesTest__pcap_examples__many-protocols.pcap",
    ) else {
        return;
    };
    let c = connection(&doc, 1);
    let get = row_ending_at(c, 1290);
    assert_eq!(get["start_frame"], 1286, "{get}");
    assert!(excess_ms(get) < 50.0, "{get}");
}

#[test]
fn an_answer_begun_in_a_capture_loss_is_not_server_time() {
    // http-packets.pcap stream 5: GET jstree.js (386, ack 93990); the
    // server's next captured segment (492) is at 223686: 130 KB of the
    // answer the capture dropped came first. rttdoc timed the answer from
    // 492 and called 13 ms the server's.
    let Some(capture) = public_capture(
        "seladb-PcapPlusPlus",
        "ExamplesTest__pcap_examples__http-packets.pcap",
    ) else {
        return;
    };
    let doc = run_rttdoc_json(&capture);
    let c = connection(&doc, 5);
    let row = row_starting_at(c, 386);
    assert!(row["ideal_basis"]
        .as_str()
        .unwrap()
        .contains("capture missed"));
    assert!(think_waits(c).iter().all(|(from, _, _)| *from != 386));
}

/// many-protocols.pcap streams 51 and 62: Firefox opened a second
/// connection to fbstatic-a.akamaihd.net while one was up, resumed its
/// session, and 32 ms after its Finished (51; 62 within 1 ms) wrote only
/// a SPDY session's SETTINGS and WINDOW_UPDATE, closed 0.4 ms behind
/// them, and reset the server's reply: nobody waited for either
/// handshake (51's ClientHello acknowledged 50 ms late on a 15 ms path
/// had been 35.8 ms of `tls_extra_rtt`, judged wrong in session 83).
/// Read with tshark: the client's records after its Finished and its FIN
/// within 1 ms, the Finished 20 ms or more before them on 51.
#[test]
fn a_handshake_whose_client_wrote_only_what_it_closed_behind_delayed_nothing() {
    let Some(capture) = many_protocols_with_tshark(
        "a_handshake_whose_client_wrote_only_what_it_closed_behind_delayed_nothing",
    ) else {
        return;
    };
    let rows = tshark_fields(
        &capture,
        &[],
        "tcp.stream == 51 && ip.src == 10.0.0.1 && (tcp.len > 0 || tcp.flags.fin == 1)",
        &[
            "frame.time_relative",
            "tls.record.content_type",
            "tcp.flags.fin",
        ],
    );
    let at = |r: &Vec<String>| r[0].parse::<f64>().unwrap();
    let fin = rows
        .iter()
        .find(|r| r[2] == "1" || r[2] == "True")
        .expect("a FIN");
    let finished = rows
        .iter()
        .rposition(|r| r[1].split(',').any(|t| t == "20"))
        .expect("the client's ChangeCipherSpec and Finished");
    let after: Vec<&Vec<String>> = rows[finished + 1..]
        .iter()
        .filter(|r| r[1].split(',').any(|t| t == "23"))
        .collect();
    assert!(!after.is_empty(), "{rows:?}");
    for r in &after {
        assert!(at(fin) - at(r) < 0.001, "{r:?} {fin:?}");
        assert!(at(r) - at(&rows[finished]) > 0.020, "{r:?}");
    }
    let doc = run_rttdoc_json(&capture);
    for stream in [51, 62] {
        let c = connection(&doc, stream);
        let row = ledger(c)
            .iter()
            .find(|r| r["phase"] == "tls_handshake")
            .unwrap();
        assert_eq!(excess_ms(row), 0.0, "{stream}: {row}");
        assert!(
            !kinds_of(c).contains(&"tls_extra_rtt".to_string()),
            "{stream}: {:#?}",
            c["findings"]
        );
    }
}
