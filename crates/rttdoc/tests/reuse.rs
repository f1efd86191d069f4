//! A client that asks a server again soon after a connection to it
//! ended: `connection_not_reused`, and who ended it.
//!
//! Producer: scripts/reuse-captures.sh: curl and nginx over real Linux
//! TCP, 20 ms each way, captured on the client's interface.
//! `server-close`: nginx with keepalive_timeout 0 answers `Connection:
//! close` and closes; curl reads it, closes too, and opens the next
//! connection (the client's FIN is captured first, the server's, which
//! does not acknowledge it, crossed it). `client-close`: three curls, each
//! closing as it exits. `server-idle`: nginx closes after 1 s idle, curl
//! asks every 2 s. `tls-close`: the first over TLS 1.3. Controls:
//! `reused` (one connection for three requests) and `parallel` (three
//! connections opened together). `http10-close` (curl -0: HTTP/1.0
//! without keep-alive) and `asked-close` (`Connection: close`): nginx,
//! keeping connections alive, closes each as its request asked.
//! `tls12-refused` and `tls12-resumed`: TLS 1.2 by session ID, nginx
//! issuing IDs it keeps none of (`ssl_session_cache none`: the second
//! connection's offer refused, `resumption_missed`) and, the control,
//! with a shared cache (resumed).
//! Committed under tests/data/reuse, re-made live when root.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::*;

/// One TCP segment as tshark reads it.
#[derive(Debug, Clone)]
struct Seg {
    frame: u64,
    time: f64,
    stream: u64,
    from_client: bool,
    len: u64,
    syn: bool,
    fin: bool,
    seq: u64,
    ack: u64,
    ccs: bool,
}

fn segments(capture: &Path, server_port: u16) -> Vec<Seg> {
    tshark_fields(
        capture,
        &[],
        "tcp",
        &[
            "frame.number",
            "frame.time_relative",
            "tcp.stream",
            "tcp.srcport",
            "tcp.len",
            "tcp.flags.syn",
            "tcp.flags.fin",
            "tcp.seq",
            "tcp.ack",
            "tls.change_cipher_spec",
        ],
    )
    .iter()
    .map(|r| Seg {
        frame: r[0].parse().unwrap(),
        time: r[1].parse().unwrap(),
        stream: r[2].parse().unwrap(),
        from_client: r[3] != server_port.to_string(),
        len: r[4].parse().unwrap(),
        syn: r[5] == "1" || r[5] == "True",
        fin: r[6] == "1" || r[6] == "True",
        seq: r[7].parse().unwrap(),
        ack: r[8].parse().unwrap_or(0),
        ccs: !r[9].is_empty(),
    })
    .collect()
}

fn not_reused(c: &serde_json::Value) -> Option<&serde_json::Value> {
    c["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "connection_not_reused")
}

/// Who closed a stream, by its FINs: the first FIN's sender, unless the
/// server's came second without acknowledging the client's (it closed on
/// its own). True for the server.
fn closed_by_server(segs: &[&Seg]) -> bool {
    let fins: Vec<&&Seg> = segs.iter().filter(|s| s.fin).collect();
    let first = fins[0];
    if !first.from_client {
        return true;
    }
    fins.iter()
        .find(|s| !s.from_client)
        .is_some_and(|s| s.ack <= first.seq + first.len)
}

fn check(dir: &Path) {
    let cases: [(&str, u16, bool); 10] = [
        ("server-close", 8080, true),
        ("client-close", 8082, true),
        ("server-idle", 8081, true),
        ("tls-close", 8443, true),
        ("reused", 8082, false),
        ("parallel", 8082, false),
        ("http10-close", 8082, true),
        ("asked-close", 8082, true),
        ("tls12-refused", 8444, true),
        ("tls12-resumed", 8445, true),
    ];
    for (name, port, churns) in cases {
        let capture = dir.join(format!("{name}.pcap.gz"));
        assert_agrees_with_tshark(&capture, &[]);
        let doc = run_rttdoc_json(&capture);
        let problems = display_filter_problems(&capture, &doc);
        assert!(problems.is_empty(), "{name}: {problems:?}");
        let segs = segments(&capture, port);
        let mut by_stream: BTreeMap<u64, Vec<&Seg>> = BTreeMap::new();
        for s in &segs {
            by_stream.entry(s.stream).or_default().push(s);
        }
        let conns = doc["connections"].as_array().unwrap();
        let streams = if name == "reused" { 1 } else { 3 };
        let streams = if name.starts_with("tls") { 2 } else { streams };
        assert_eq!(conns.len(), streams, "{name}");
        for c in conns {
            let stream = c["stream"].as_u64().unwrap();
            let x = not_reused(c);
            if !churns || stream == 0 {
                assert!(x.is_none(), "{name}: stream {stream}: {x:?}");
                continue;
            }
            let x = x.unwrap_or_else(|| panic!("{name}: stream {stream}: {c}"));
            let own = &by_stream[&stream];
            let syn = own.iter().find(|s| s.syn && s.from_client).unwrap();
            let syn_ack = own.iter().find(|s| s.syn && !s.from_client).unwrap();
            // The request: the client's first data, past TLS's handshake
            // (the segment after its ChangeCipherSpec and Finished).
            let data: Vec<&&Seg> = own.iter().filter(|s| s.from_client && s.len > 0).collect();
            let request = match data.iter().position(|s| s.ccs) {
                Some(i) => data[i + 1],
                None => data[0],
            };
            let release = own
                .iter()
                .rev()
                .find(|s| !s.from_client && (s.syn || s.len > 0) && s.frame < request.frame)
                .unwrap();
            // (Over TLS from 8443 on.)
            let tls = port >= 8443;
            if !tls {
                assert_eq!(
                    release.frame, syn_ack.frame,
                    "{name}: the SYN-ACK let it go"
                );
            }
            let frames = frames_cited(x);
            assert_eq!(
                frames,
                vec![syn.frame, release.frame, request.frame],
                "{name}: {x}"
            );
            // Captured at the client: over TLS from the SYN to the
            // request; without, to the SYN-ACK's arrival (curl's time
            // before it asked is its own).
            let waited_ms = if tls {
                (request.time - syn.time) * 1e3
            } else {
                (syn_ack.time - syn.time) * 1e3
            };
            let cost = x["cost_ms"].as_f64().unwrap();
            assert!(
                (cost - waited_ms).abs() < 0.01,
                "{name}: {cost} vs {waited_ms}"
            );
            // At least the path's round trip per handshake.
            let handshakes = if tls { 2.0 } else { 1.0 };
            assert!(cost >= 40.0 * handshakes, "{name}: {cost}");
            assert_eq!(x["attributed_ms"], 0.0, "{name}: {x}");
            assert_eq!(x["phase"], "tcp_handshake", "{name}: {x}");
            // The connection it could have been: the one before, ended
            // before this SYN, told by who closed it.
            let previous = &by_stream[&(stream - 1)];
            let first_fin = previous.iter().find(|s| s.fin).unwrap();
            assert!(first_fin.frame < syn.frame, "{name}: {first_fin:?}");
            let by_server = closed_by_server(previous);
            let text = x["explanation"].as_str().unwrap();
            let closer = if by_server {
                "by the server"
            } else {
                "by the client"
            };
            assert!(text.contains(closer), "{name}: {text}");
            assert!(
                text.contains(&format!("stream {}", stream - 1)),
                "{name}: {text}"
            );
            let last_answer = previous
                .iter()
                .rev()
                .find(|s| !s.from_client && s.len > 0)
                .unwrap();
            let server_fin = previous.iter().find(|s| s.fin && !s.from_client).unwrap();
            let idle_s = server_fin.time - last_answer.time;
            let fix = x["fix"].as_str().unwrap();
            match name {
                "server-close" | "tls-close" | "tls12-refused" | "tls12-resumed" => {
                    assert!(by_server, "{name}: the server closed on its own");
                    assert!(text.contains("right after its last answer"), "{text}");
                    assert!(!text.contains("had asked"), "{text}");
                    assert!(fix.contains("keepalive_timeout"), "{fix}");
                }
                // nginx keeps connections alive on 8082: it closed
                // because the request asked it to, and the fix is the
                // client's.
                "http10-close" | "asked-close" => {
                    assert!(by_server, "{name}: the server closed as asked");
                    assert!(text.contains("right after its last answer"), "{text}");
                    let (asked, fixed) = if name == "http10-close" {
                        (
                            "(HTTP/1.0 without `Connection: keep-alive`",
                            "speak HTTP/1.1",
                        )
                    } else {
                        ("(`Connection: close`)", "Drop the header")
                    };
                    assert!(text.contains(&format!("had asked {asked}")), "{text}");
                    assert!(fix.starts_with("The client asked for the close"), "{fix}");
                    assert!(fix.contains(fixed), "{fix}");
                    assert!(!fix.contains("keepalive_timeout"), "{fix}");
                }
                "client-close" => {
                    assert!(!by_server, "{name}: curl closed as it exited");
                    assert!(fix.contains("Reuse connections in the client"), "{fix}");
                }
                _ => {
                    // nginx's keepalive_timeout 1s: the server's own timer.
                    assert!(by_server && idle_s > 0.9, "{name}: idle {idle_s} s");
                    assert!(text.contains("idle"), "{text}");
                    assert!(fix.contains("keep-alive timeout"), "{fix}");
                }
            }
        }
    }

    // TLS 1.2 by session ID (no tickets): the second connection offers
    // back the ID the first's ServerHello issued (read by tshark); nginx
    // with `ssl_session_cache none` issued it and kept nothing, and gives
    // a new one and a full handshake (`resumption_missed`, a round trip);
    // with a shared cache it resumes.
    for (name, port, resumes) in [
        ("tls12-refused", 8444, false),
        ("tls12-resumed", 8445, true),
    ] {
        let capture = dir.join(format!("{name}.pcap.gz"));
        let ids = tshark_fields(
            &capture,
            &[],
            &format!("tcp.port == {port} && (tls.handshake.type == 1 || tls.handshake.type == 2)"),
            &[
                "tcp.stream",
                "tls.handshake.type",
                "tls.handshake.session_id",
            ],
        );
        let id = |stream: &str, kind: &str| {
            ids.iter()
                .find(|r| r[0] == stream && r[1].split(',').next() == Some(kind))
                .map(|r| r[2].clone())
                .unwrap_or_else(|| panic!("{name}: {ids:?}"))
        };
        let issued = id("0", "2");
        assert!(!issued.is_empty(), "{name}: no session ID issued");
        assert_eq!(id("1", "1"), issued, "{name}: the first's ID offered back");
        assert_eq!(id("1", "2") == issued, resumes, "{name}: {ids:?}");
        let doc = run_rttdoc_json(&capture);
        let second = &doc["connections"][1];
        assert_eq!(second["tls"]["session_id_offered"], true, "{name}");
        assert_eq!(second["tls"]["resumed"], resumes, "{name}");
        let missed = second["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["kind"] == "resumption_missed");
        assert_eq!(missed.is_some(), !resumes, "{name}: {second}");
        if let Some(x) = missed {
            // A round trip of the 40 ms path: the full handshake's second.
            let cost = x["cost_ms"].as_f64().unwrap();
            assert!((38.0..60.0).contains(&cost), "{name}: {x}");
        }
        let first = &doc["connections"][0];
        assert_eq!(first["tls"]["session_id_offered"], false, "{name}");
    }
}

#[test]
fn committed_connections_opened_after_one_ended_are_not_reused() {
    if !require(
        "committed_connections_opened_after_one_ended_are_not_reused",
        &["tshark"],
        false,
    ) {
        return;
    }
    check(&data_dir().join("reuse"));
}

#[test]
fn live_connections_opened_after_one_ended_are_not_reused() {
    if !require(
        "live_connections_opened_after_one_ended_are_not_reused",
        &[
            "tshark", "ip", "tcpdump", "nginx", "curl", "openssl", "python3",
        ],
        true,
    ) {
        return;
    }
    let dir = TempDir::new("reuse");
    run_capture_script("reuse-captures.sh", &[dir.0.as_os_str()]);
    check(&dir.0);
}
