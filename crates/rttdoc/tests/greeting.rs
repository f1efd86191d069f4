//! A server that speaks first (tests/data/greeting, made by
//! scripts/greeting-captures.sh: MariaDB and its client, real Linux TCP,
//! 20 ms each way, tcpdump at the client). MariaDB looks up a new
//! client's name before it greets; against a resolver that never
//! answers, each greeting waits for the lookup's timeout (a second).
//! That wait is the server's, before the first byte of the connection:
//! a ledger row of its own (exchange 0) and `server_think_time`, with the
//! fix in the terms of the lookup. With `--skip-name-resolve` the same
//! greetings leave at once and nothing is found. A client asking for TLS
//! (`--ssl`) makes the greeting the first turn of MySQL's SSL preamble:
//! the same wait, in that phase.

mod common;

use common::*;

fn doc(name: &str) -> serde_json::Value {
    run_rttdoc_json(&data_dir().join("greeting").join(name))
}

/// The greeting's ledger row of a connection: (start frame, end frame,
/// excess ms).
fn greeting_row(c: &serde_json::Value) -> Option<(u64, u64, f64)> {
    c["ledger"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["exchange"] == 0)
        .map(|r| {
            (
                r["start_frame"].as_u64().unwrap(),
                r["end_frame"].as_u64().unwrap(),
                r["excess_ms"].as_f64().unwrap(),
            )
        })
}

#[test]
fn a_greeting_that_waited_for_a_name_lookup_is_the_servers_time() {
    let d = doc("mariadb-name-resolve.pcap.gz");
    let conns = d["connections"].as_array().unwrap();
    assert_eq!(conns.len(), 3);
    for c in conns {
        // From the handshake's ACK (where the handshake row ends) to the
        // greeting, the server's first data: the next frame.
        let handshake_end = c["ledger"][0]["end_frame"].as_u64().unwrap();
        let (from, to, excess) = greeting_row(c).expect("a greeting row");
        assert_eq!((from, to), (handshake_end, handshake_end + 1));
        // The lookup's timeout is a second (the third connection's
        // lookup met a resolver already retrying: less).
        assert!((500.0..1100.0).contains(&excess), "{excess} ms");
        let waits = think_waits(c);
        assert_eq!(waits.len(), 1, "{waits:?}");
        let (q, a, ms) = waits[0];
        assert_eq!((q, a), (from, to));
        assert!((ms - excess).abs() < 2.0, "{ms} ms against {excess} ms");
        // All of the connection's excess is the greeting's, explained.
        assert!(c["unexplained_ms"].as_f64().unwrap() < 1.0);
        let finding = &c["findings"][0];
        let explanation = finding["explanation"].as_str().unwrap();
        assert!(explanation.contains("greeting"), "{explanation}");
        assert!(
            finding["fix"]
                .as_str()
                .unwrap()
                .contains("skip_name_resolve"),
            "{}",
            finding["fix"]
        );
    }
}

#[test]
fn greetings_that_left_at_once_cost_nothing() {
    let d = doc("mariadb-skip-name-resolve.pcap.gz");
    let conns = d["connections"].as_array().unwrap();
    assert_eq!(conns.len(), 3);
    for c in conns {
        let (_, _, excess) = greeting_row(c).expect("a greeting row");
        assert_eq!(excess, 0.0);
        assert_eq!(c["findings"], serde_json::json!([]));
    }
    assert_eq!(d["summary"]["excess_ms_total"], 0.0);
}

/// Per connection of a MariaDB capture, from tshark's dissector: (stream,
/// the handshake's ACK, the greeting, the ClientHello), each (frame,
/// capture time in ms).
type Frame = (u64, f64);
fn tshark_ssl_preambles(capture: &std::path::Path) -> Vec<(u64, Frame, Frame, Frame)> {
    let rows = tshark_fields(
        capture,
        &["-d", "tcp.port==3307,mysql"],
        "mysql.protocol || tls.handshake.type == 1 || \
         (tcp.flags.ack == 1 && tcp.flags.syn == 0 && tcp.len == 0 && tcp.seq == 1 && tcp.ack == 1)",
        &[
            "tcp.stream",
            "frame.number",
            "frame.time_relative",
            "mysql.protocol",
            "tls.handshake.type",
        ],
    );
    let mut out: Vec<(u64, Frame, Frame, Frame)> = Vec::new();
    for r in rows {
        let stream: u64 = r[0].parse().unwrap();
        let frame = (r[1].parse().unwrap(), r[2].parse::<f64>().unwrap() * 1e3);
        if out.last().is_none_or(|c| c.0 != stream) {
            out.push((stream, frame, (0, 0.0), (0, 0.0)));
        } else if !r[3].is_empty() {
            out.last_mut().unwrap().2 = frame;
        } else if !r[4].is_empty() && out.last().unwrap().3 .0 == 0 {
            out.last_mut().unwrap().3 = frame;
        }
    }
    out
}

#[test]
fn a_greeting_before_mysqls_ssl_request_waits_in_the_preamble_and_the_client_hello_on_the_client() {
    // The client asked for TLS: the greeting opens MySQL's SSL preamble
    // (its own ledger phase, before the TLS handshake), and the lookup's
    // wait is the server's there, from the handshake's ACK. The client
    // sends its SSL request at once and its ClientHello when its TLS
    // library is ready: that time, from the greeting's arrival, is the
    // client's.
    if !require(
        "a_greeting_before_mysqls_ssl_request_waits_in_the_preamble",
        &["tshark"],
        false,
    ) {
        return;
    }
    for (name, lookups) in [
        ("mariadb-ssl-name-resolve.pcap.gz", true),
        ("mariadb-ssl-skip-name-resolve.pcap.gz", false),
    ] {
        let capture = data_dir().join("greeting").join(name);
        let d = run_rttdoc_json(&capture);
        let conns = d["connections"].as_array().unwrap();
        let theirs = tshark_ssl_preambles(&capture);
        assert_eq!(conns.len(), 3, "{name}");
        assert_eq!(theirs.len(), 3, "{name}: {theirs:?}");
        for (c, &(stream, ack, greeting, hello)) in conns.iter().zip(&theirs) {
            assert_eq!(c["stream"], stream, "{name}");
            assert_eq!(c["tls"]["started_after"], "mysql_ssl_request", "{name}");
            let rtt = c["rtt_ms"].as_f64().unwrap();
            let server = waits_of(c, "server_think_time", "starttls");
            if lookups {
                // At the client: the greeting left the server a round trip
                // before it was captured, after the ACK had taken half of
                // one to get there.
                assert_eq!(server.len(), 1, "{name}: {server:?}");
                let (from, to, ms) = server[0];
                assert_eq!((from, to), (ack.0, greeting.0), "{name}");
                let expected = greeting.1 - ack.1 - rtt;
                assert!(
                    (ms - expected).abs() < 1.0,
                    "{name}: {ms} against {expected}"
                );
                assert!(ms > 400.0, "{name}: the lookup's wait, {ms} ms");
                let f = finding_in(c, "server_think_time", "starttls");
                assert!(
                    f["fix"].as_str().unwrap().contains("skip_name_resolve"),
                    "{f}"
                );
            } else {
                assert_eq!(server, vec![], "{name}");
            }
            // The client's wait, on its own clock (the capture's): from
            // the greeting, or the client's ACK of it a fraction of a
            // millisecond later (when its kernel had it).
            let client = waits_of(c, "client_think_time", "starttls");
            assert_eq!(client.len(), 1, "{name}: {client:?}");
            let (from, to, ms) = client[0];
            assert_eq!((from, to), (greeting.0, hello.0), "{name}");
            let span = hello.1 - greeting.1;
            assert!(
                ms <= span + 0.01 && ms > span - 1.0,
                "{name}: {ms} of {span}"
            );
            assert!(ms > 20.0, "{name}: the client's TLS set-up, {ms} ms");
            let f = finding_in(c, "client_think_time", "starttls");
            assert!(f["fix"].as_str().unwrap().contains("TLS set-up"), "{f}");
            // Both explain the preamble's row: what is left is under the
            // hosts' thresholds.
            assert!(c["unexplained_ms"].as_f64().unwrap() < 10.0, "{name}: {c}");
            // Not exchanges of the session: no greeting row of its own.
            assert_eq!(greeting_row(c), None, "{name}");
        }
    }
}

#[test]
fn the_terminal_names_the_greeting_and_its_fix() {
    let capture = data_dir()
        .join("greeting")
        .join("mariadb-name-resolve.pcap.gz");
    let out = std::process::Command::new(rttdoc_bin())
        .args(["analyze", "--conn", "0"])
        .arg(&capture)
        .env("COLUMNS", "120")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("greeting: connection -> first byte"),
        "{text}"
    );
    assert!(text.contains("sent its greeting"), "{text}");
}

#[test]
fn inside_implicit_tls_the_greeting_is_timed_from_the_client_s_finished() {
    // stunnel in front of the same server: the TLS 1.3 handshake, the
    // server's session tickets (acknowledged by the client), then the
    // greeting a second later; the client answers it at once.
    let d = doc("mariadb-stunnel.pcap.gz");
    let conns = d["connections"].as_array().unwrap();
    assert_eq!(conns.len(), 2);
    for c in conns {
        let tls_row = c["ledger"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["phase"] == "tls_handshake")
            .expect("a TLS handshake row");
        let finished = tls_row["end_frame"].as_u64().unwrap();
        let (from, to, excess) = greeting_row(c).expect("a greeting row");
        assert_eq!(from, finished);
        assert!((900.0..1100.0).contains(&excess), "{excess} ms");
        // Timed from the Finished, not from the client's later ACK of the
        // tickets, which the application does not wait for.
        let waits = think_waits(c);
        assert_eq!(waits.len(), 1, "{waits:?}");
        assert_eq!((waits[0].0, waits[0].1), (from, to));
        // Left unexplained: the hosts' few milliseconds in the TLS
        // handshake and in the login's answer (3 ms on stream 0, through
        // stunnel), under the think-time threshold.
        assert!(c["unexplained_ms"].as_f64().unwrap() < 8.0);
    }
}

#[test]
fn an_ftp_server_s_greeting_waits_for_its_name_lookup_and_its_data_connections_have_none() {
    // ProFTPD (UseReverseDNS on, its default), two anonymous sessions
    // fetching a file over passive data connections.
    let d = doc("proftpd-reverse-dns.pcap.gz");
    let (control, data): (Vec<_>, Vec<_>) = d["connections"]
        .as_array()
        .unwrap()
        .iter()
        .partition(|c| c["server"]["port"] == 2121);
    assert_eq!((control.len(), data.len()), (2, 2));
    for c in control {
        let (from, to, excess) = greeting_row(c).expect("a greeting row");
        // The lookup's timeout (a second), the resolver retrying: more.
        assert!((800.0..1600.0).contains(&excess), "{excess} ms");
        let waits = think_waits(c);
        assert_eq!((waits[0].0, waits[0].1), (from, to), "{waits:?}");
    }
    // The server sends the file on a data connection the moment the
    // client connects: the client says nothing there, waits for nothing.
    for c in data {
        assert!(greeting_row(c).is_none(), "{}", c["ledger"]);
        assert_eq!(c["findings"], serde_json::json!([]));
    }
}
