//! TLS that starts after a plaintext preamble (proxies, STARTTLS, database
//! SSL requests) and TLS from the first byte on ports no list names, on
//! captures of real clients and servers (scripts/tls-start-captures.sh):
//! rttdoc must find the ClientHello where tshark finds it, name the
//! preamble, and give the preamble its own ledger phase ending where the
//! TLS handshake phase starts.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One capture the script makes: what tshark must be told to decode the
/// server port as (it finds no preamble on these ports by itself), the
/// preamble rttdoc must name, its ledger phase and the round trips the
/// protocol makes the client wait for (the ideal).
struct Case {
    name: &'static str,
    decode_as: &'static str,
    started_after: Option<&'static str>,
    phase: &'static str,
    round_trips: f64,
}

const CASES: &[Case] = &[
    // CONNECT -> 200: one round trip.
    Case {
        name: "http-connect-tinyproxy",
        decode_as: "tcp.port==8888,http",
        started_after: Some("http_connect"),
        phase: "proxy_connect",
        round_trips: 1.0,
    },
    // greeting -> method, CONNECT -> reply.
    Case {
        name: "socks5-microsocks",
        decode_as: "tcp.port==1080,socks",
        started_after: Some("socks5"),
        phase: "proxy_connect",
        round_trips: 2.0,
    },
    // greeting -> method 2, username/password -> status, CONNECT -> reply.
    Case {
        name: "socks5-auth-microsocks",
        decode_as: "tcp.port==1082,socks",
        started_after: Some("socks5"),
        phase: "proxy_connect",
        round_trips: 3.0,
    },
    // CONNECT -> granted.
    Case {
        name: "socks4-dante",
        decode_as: "tcp.port==1081,socks",
        started_after: Some("socks4"),
        phase: "proxy_connect",
        round_trips: 1.0,
    },
    // curl: banner, EHLO -> 250, STARTTLS -> 220.
    Case {
        name: "smtp-starttls-exim",
        decode_as: "tcp.port==2525,smtp",
        started_after: Some("smtp_starttls"),
        phase: "starttls",
        round_trips: 3.0,
    },
    // curl: greeting, AUTH SSL -> 234. tshark 4.0's FTP dissector does not
    // follow AUTH TLS; its TLS dissector on the port skips the plaintext
    // lines (not records) and finds the handshake.
    Case {
        name: "ftp-auth-tls-vsftpd",
        decode_as: "tcp.port==2121,tls",
        started_after: Some("ftp_auth_tls"),
        phase: "starttls",
        round_trips: 2.0,
    },
    // curl: greeting, CAPABILITY -> OK, STARTTLS -> OK.
    Case {
        name: "imap-starttls-dovecot",
        decode_as: "tcp.port==1143,imap",
        started_after: Some("imap_starttls"),
        phase: "starttls",
        round_trips: 3.0,
    },
    // curl: greeting, CAPA -> +OK list, STLS -> +OK.
    Case {
        name: "pop3-stls-dovecot",
        decode_as: "tcp.port==1110,pop",
        started_after: Some("pop3_stls"),
        phase: "starttls",
        round_trips: 3.0,
    },
    // SSLRequest -> 'S'.
    Case {
        name: "postgres-sslrequest",
        decode_as: "tcp.port==5433,pgsql",
        started_after: Some("postgres_sslrequest"),
        phase: "starttls",
        round_trips: 1.0,
    },
    Case {
        name: "tls-port-4433",
        decode_as: "tcp.port==4433,tls",
        started_after: None,
        phase: "",
        round_trips: 0.0,
    },
    Case {
        name: "tls-port-25",
        decode_as: "tcp.port==25,tls",
        started_after: None,
        phase: "",
        round_trips: 0.0,
    },
];

/// tshark's ClientHellos: (tcp.stream, frame that completes it).
fn tshark_client_hellos(capture: &Path, decode_as: &str) -> Vec<(u64, u64)> {
    let out = Command::new("tshark")
        .args(["-n", "-r"])
        .arg(capture)
        .args(["-d", decode_as, "-Y", "tls.handshake.type==1"])
        .args(["-T", "fields", "-e", "tcp.stream", "-e", "frame.number"])
        .output()
        .expect("tshark runs");
    assert!(
        out.status.success(),
        "tshark failed on {}",
        capture.display()
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut f = l.split('\t');
            Some((f.next()?.parse().ok()?, f.next()?.parse().ok()?))
        })
        .collect()
}

/// Checks one capture against its case (and tshark, when `tshark`).
fn check(case: &Case, capture: &Path, tshark: bool) {
    let doc = run_rttdoc_json(capture);
    let conns = doc["connections"].as_array().unwrap();
    let tls: Vec<&serde_json::Value> = conns.iter().filter(|c| !c["tls"].is_null()).collect();
    let summary: Vec<String> = conns
        .iter()
        .map(|c| {
            format!(
                "stream {} frames {}-{} partial {} exchanges {}",
                c["stream"], c["first_frame"], c["last_frame"], c["partial"], c["exchanges"]
            )
        })
        .collect();
    assert_eq!(
        tls.len(),
        1,
        "{}: one TLS connection expected: {summary:?}",
        case.name
    );
    let c = tls[0];
    let t = &c["tls"];
    assert_eq!(t["version"], "TLS 1.3", "{}", case.name);
    assert_eq!(
        t["started_after"].as_str(),
        case.started_after,
        "{}",
        case.name
    );
    let hello_frames: Vec<u64> = t["client_hello_frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_u64().unwrap())
        .collect();
    let hello_end = *hello_frames.last().expect("ClientHello frames");
    if tshark {
        // The first ClientHello tshark dissects (a HelloRetryRequest makes
        // a second one in the same stream) is the one rttdoc reports.
        let theirs = tshark_client_hellos(capture, case.decode_as);
        let first = theirs.first().copied();
        assert_eq!(
            first,
            Some((c["stream"].as_u64().unwrap(), hello_end)),
            "{}: tshark's first ClientHello (stream, frame)",
            case.name
        );
    }
    let ledger = c["ledger"].as_array().unwrap();
    let phases: Vec<&str> = ledger
        .iter()
        .map(|r| r["phase"].as_str().unwrap())
        .collect();
    let tls_row = ledger
        .iter()
        .find(|r| r["phase"] == "tls_handshake")
        .unwrap_or_else(|| panic!("{}: no tls_handshake row: {phases:?}", case.name));
    // The TLS handshake phase starts at the ClientHello, wherever it is.
    assert_eq!(
        tls_row["start_frame"].as_u64(),
        Some(hello_frames[0]),
        "{}",
        case.name
    );
    if case.started_after.is_none() {
        assert_eq!(
            phases[..2],
            ["tcp_handshake", "tls_handshake"],
            "{}",
            case.name
        );
        return;
    }
    // tcp_handshake, then the preamble up to the ClientHello, then TLS.
    assert_eq!(
        phases[..3],
        ["tcp_handshake", case.phase, "tls_handshake"],
        "{}",
        case.name
    );
    let pre = &ledger[1];
    // The preamble's excess is latency like the handshakes': counted in the
    // connection's excess, and explained by a finding or left unexplained.
    let attributed: f64 = c["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["attributed_ms"].as_f64())
        .sum();
    let excess = c["excess_ms"].as_f64().unwrap();
    let unexplained = c["unexplained_ms"].as_f64().unwrap();
    assert!(
        (attributed + unexplained - excess).abs() < 1e-6,
        "{}: {attributed} attributed + {unexplained} unexplained != {excess} excess",
        case.name
    );
    let pre_excess = pre["excess_ms"].as_f64().unwrap_or(0.0);
    assert!(pre_excess <= excess + 1e-9, "{}", case.name);
    assert_eq!(pre["start_frame"], ledger[0]["end_frame"], "{}", case.name);
    assert_eq!(
        pre["end_frame"].as_u64(),
        Some(hello_frames[0]),
        "{}",
        case.name
    );
    assert_eq!(
        pre["ideal_rtts"].as_f64(),
        Some(case.round_trips),
        "{}",
        case.name
    );
    // The preamble is not an application exchange: the first exchange's
    // request comes after the TLS handshake.
    if let Some(fb) = ledger.iter().find(|r| r["phase"] == "first_byte") {
        assert!(
            fb["start_frame"].as_u64() > tls_row["start_frame"].as_u64(),
            "{}: {fb}",
            case.name
        );
    }
}

fn fixture(name: &str) -> PathBuf {
    data_dir().join("tls-start").join(format!("{name}.pcap.gz"))
}

#[test]
fn committed_real_captures_find_tls_after_each_preamble() {
    let tshark = which("tshark").is_some();
    if !tshark {
        eprintln!("tshark missing: checking rttdoc's own answers only");
    }
    for case in CASES {
        check(case, &fixture(case.name), tshark);
    }
}

#[test]
fn socks4a_request_rejected_by_dante_stays_plaintext() {
    // dante answered CD=91 (rejected): no tunnel, so no TLS may follow.
    let doc = run_rttdoc_json(&fixture("socks4a-dante-refused"));
    let conns = doc["connections"].as_array().unwrap();
    assert!(!conns.is_empty());
    for c in conns {
        assert!(c["tls"].is_null(), "{c}");
        let phases: Vec<&str> = c["ledger"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["phase"].as_str().unwrap())
            .collect();
        assert!(!phases.contains(&"proxy_connect"), "{phases:?}");
    }
    // Its request and the refusal are a plaintext exchange.
    assert!(conns.iter().any(|c| c["exchanges"] == 1));
}

#[test]
fn fresh_tls_start_captures_match_tshark() {
    let tools = [
        "tshark",
        "tcpdump",
        "curl",
        "openssl",
        "unshare",
        "ip",
        "tinyproxy",
        "microsocks",
        "danted",
        "exim",
        "dovecot",
        "vsftpd",
        "psql",
        "runuser",
    ];
    // Debian keeps the server's programs out of PATH, under its version.
    let initdb = which("initdb").or_else(|| {
        std::fs::read_dir("/usr/lib/postgresql")
            .ok()?
            .filter_map(|d| Some(d.ok()?.path().join("bin/initdb")))
            .find(|p| p.is_file())
    });
    let tools: Vec<&str> = tools
        .iter()
        .copied()
        .chain(initdb.is_none().then_some("initdb (postgresql)"))
        .collect();
    if !require("fresh_tls_start_captures_match_tshark", &tools, true) {
        return;
    }
    let dir = TempDir::new("tls-start");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/tls-start-captures.sh");
    let status = Command::new("bash")
        .arg(script)
        .arg(&dir.0)
        .status()
        .unwrap();
    assert!(status.success(), "tls-start capture script failed");
    for case in CASES {
        check(case, &dir.path(&format!("{}.pcap.gz", case.name)), true);
    }
}

#[test]
fn a_proxy_slow_to_resolve_the_destination_keeps_the_connect_waiting() {
    // scripts/proxy-dns-captures.sh: tinyproxy across a 20 ms path, its
    // first resolver dead (a second's timeout), curl's CONNECT answered
    // once the second resolver had answered. The wait is the proxy's, in
    // the preamble's phase, from the CONNECT to the `200`, with the
    // proxy's fix; tshark names both frames.
    if !require(
        "a_proxy_slow_to_resolve_the_destination_keeps_the_connect_waiting",
        &["tshark"],
        false,
    ) {
        return;
    }
    let path = fixture("http-connect-slow-dns");
    let theirs = tshark_fields(
        &path,
        &["-d", "tcp.port==8888,http"],
        "http.request.method == \"CONNECT\" || http.response.code == 200",
        &["tcp.stream", "frame.number", "frame.time_relative"],
    );
    let d = run_rttdoc_json(&path);
    let conns = d["connections"].as_array().unwrap();
    assert_eq!(conns.len(), 2);
    assert_eq!(theirs.len(), 4, "{theirs:?}");
    for (c, pair) in conns.iter().zip(theirs.chunks(2)) {
        assert_eq!(c["stream"].as_u64(), pair[0][0].parse().ok());
        assert_eq!(c["tls"]["started_after"], "http_connect");
        let frame = |r: &Vec<String>| r[1].parse::<u64>().unwrap();
        let at = |r: &Vec<String>| r[2].parse::<f64>().unwrap() * 1e3;
        let waits = waits_of(c, "server_think_time", "proxy_connect");
        assert_eq!(waits.len(), 1, "{waits:?}");
        let (from, to, ms) = waits[0];
        assert_eq!((from, to), (frame(&pair[0]), frame(&pair[1])));
        // At the client: the answer left the proxy a round trip before it
        // was captured, less the time the request took to get there.
        let rtt = c["rtt_ms"].as_f64().unwrap();
        let expected = at(&pair[1]) - at(&pair[0]) - rtt;
        assert!((ms - expected).abs() < 2.0, "{ms} against {expected}");
        assert!(ms > 900.0, "the dead resolver's second: {ms} ms");
        let f = finding_in(c, "server_think_time", "proxy_connect");
        assert!(
            f["explanation"]
                .as_str()
                .unwrap()
                .starts_with("The proxy answered"),
            "{f}"
        );
        assert!(f["fix"].as_str().unwrap().contains("DNS"), "{f}");
        // The preamble's row is explained; the proxy's answer is no
        // exchange of the session.
        let row = c["ledger"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["phase"] == "proxy_connect")
            .unwrap();
        assert!(
            (row["excess_ms"].as_f64().unwrap() - f["attributed_ms"].as_f64().unwrap()).abs()
                < 10.0,
            "{row} {f}"
        );
        // A connection not reused says how much of its set-up was the
        // client's own hold of its ClientHello: none here, the proxy's
        // answer let it go at once (the lookup was the proxy's).
        for x in c["findings"].as_array().unwrap() {
            if x["kind"] == "connection_not_reused" {
                let words = x["explanation"].as_str().unwrap();
                assert!(!words.contains("the client's own"), "{words}");
            }
        }
    }
}
