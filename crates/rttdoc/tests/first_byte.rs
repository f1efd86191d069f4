//! Time to first byte means the response: TLS 1.3 session tickets the
//! server sends after the handshake are not its first byte, and the
//! client, server and mid-path captures of one connection agree.
//!
//! The captures are the lab's (real nginx + curl, and rustls peers), whose
//! key logs tell which records were tickets: with the key log the answer is
//! exact (each record's inner content type); without it, OpenSSL's run of
//! equal-size ticket records is recognised from sizes alone.

mod common;

use common::*;
use serde_json::Value;

/// (first frame, last frame, ms) of the first `first_byte` ledger row of
/// the lowest stream.
fn first_byte(capture: &str, keylog: Option<&str>) -> (u64, u64, f64) {
    let path = data_dir().join(capture);
    let doc = match keylog {
        Some(k) => {
            run_rttdoc_json_with(&path, &["--keylog", &data_dir().join(k).to_string_lossy()])
        }
        None => run_rttdoc_json(&path),
    };
    let conns = doc["connections"].as_array().unwrap();
    let c = conns
        .iter()
        .min_by_key(|c| c["stream"].as_u64().unwrap())
        .unwrap();
    let row: &Value = c["ledger"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["phase"] == "first_byte")
        .expect("a first_byte row");
    (
        row["start_frame"].as_u64().unwrap(),
        row["end_frame"].as_u64().unwrap(),
        row["duration_ms"].as_f64().unwrap(),
    )
}

/// The README's sample: nginx (OpenSSL) sends two 74-byte tickets, the
/// first at once (frame 16), the second held by Nagle with the response
/// (frame 19). curl measured the response 229 ms after connecting; frame
/// 19 is the HTTP response.
#[test]
fn openssl_ticket_pair_is_not_the_first_byte_from_any_vantage() {
    let (_, end, ms) = first_byte("lab/tls13-nagle-nginx/client.pcapng.gz", None);
    assert_eq!(end, 19);
    assert!(ms > 100.0, "{ms} ms: the held response, not the ticket");
    for side in ["server", "middle"] {
        let (_, _, other) = first_byte(&format!("lab/tls13-nagle-nginx/{side}.pcapng.gz"), None);
        assert!(
            (other - ms).abs() < 2.0,
            "{side}: {other} ms vs client {ms} ms"
        );
    }
}

/// rustls sends one ticket record: sizes cannot tell it from a response,
/// the key log can. The response was held by Nagle for a round trip plus
/// the client's delayed ACK (frame 11); the ticket (frame 9) is not it.
#[test]
fn a_key_log_tells_a_lone_ticket_from_the_response() {
    let keylog = Some("lab/tickets-nagle-builtin/keylog.txt");
    let (_, end, ms) = first_byte("lab/tickets-nagle-builtin/client.pcapng.gz", keylog);
    assert_eq!(end, 11, "the response, after the ticket in frame 9");
    assert!(ms > 100.0, "{ms} ms");
    let (_, _, server) = first_byte("lab/tickets-nagle-builtin/server.pcapng.gz", keylog);
    assert!(
        (server - ms).abs() < 2.0,
        "server {server} ms vs client {ms} ms"
    );
    // Its control sends the response at once: the same ticket, and a first
    // byte one round trip after the request.
    let (_, end, ms) = first_byte(
        "lab/tickets-nodelay-builtin/client.pcapng.gz",
        Some("lab/tickets-nodelay-builtin/keylog.txt"),
    );
    assert_eq!(end, 10);
    assert!(ms < 45.0, "{ms} ms");
}

/// nginx (OpenSSL) sends two tickets after a full TLS 1.3 handshake and
/// one after a resumed one, all of one size (282 bytes here): the pair
/// shows the server's ticket size, and the lone ticket of the resumed
/// connection after it (stream 1, frame 29) is known by it; the answer
/// (frame 30, the `200`) is the first byte, from every vantage.
#[test]
fn a_resumed_connections_lone_ticket_is_known_by_the_size_of_the_servers_pair() {
    for side in ["client", "middle", "server"] {
        let doc = run_rttdoc_json(
            &data_dir().join(format!("lab-5ms/tls13-resumption-nginx/{side}.pcapng.gz")),
        );
        let c = connection(&doc, 1);
        assert_eq!(c["tls"]["resumed"], true, "{side}");
        assert_eq!(ticket_frames(c), [29], "{side}");
        let row = first_byte_rows(c).next().expect("a first_byte row");
        assert_eq!(row["end_frame"], 30, "{side}: the answer, not the ticket");
    }
}

/// rustls writes its tickets as one record after every handshake, of one
/// size (345 bytes here, two NewSessionTickets by the key log), and the
/// answer later in records of other sizes: without the key log the first
/// connection cannot tell it from an answer's first record, and notes its
/// size; the second (stream 1) takes its lone first record of that size,
/// followed in a later segment by the answer, for a ticket (frame 25):
/// the first byte is the answer's (frame 27), as the key log says.
#[test]
fn a_servers_lone_first_record_of_a_size_seen_before_is_a_ticket() {
    let doc = run_rttdoc_json(&data_dir().join("lab/tickets-nagle-builtin/client.pcapng.gz"));
    let first_byte_end = |c: &Value| {
        first_byte_rows(c).next().expect("a first_byte row")["end_frame"]
            .as_u64()
            .unwrap()
    };
    let c = connection(&doc, 1);
    assert_eq!(first_byte_end(c), 27, "the answer, not the ticket in 25");
    // The first connection had nothing to go by: its ticket is taken for
    // the answer's first record (the key log's test tells it).
    let c = connection(&doc, 0);
    assert_eq!(first_byte_end(c), 9);
}
