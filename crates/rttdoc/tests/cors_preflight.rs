//! A browser's requests that waited for their CORS preflights:
//! `cors_preflight`.
//!
//! Producer: scripts/cors-captures.sh: headless Chromium loads a page from
//! nginx whose script calls an API on another origin (another port), over
//! real Linux TCP, 20 ms each way, captured on the client's interface.
//! `preflight`: `PUT`s with `Content-Type: application/json` to
//! /items/1, /items/2 and /items/2 again: Chromium asks `OPTIONS` before
//! the first two (a preflight is kept per URL) and not before the third.
//! `preflight-credentials`: credentialed `PUT`s (`withCredentials`):
//! Chromium sends the preflight without credentials, on a connection of
//! its own, and the first `PUT` opens another. `preflight-haproxy`: the
//! API behind HAProxy, which answers the preflights itself. `preflight-h2`:
//! `preflight`'s page over HTTP/2 in TLS 1.3, Chromium's key log carried
//! in the pcapng (editcap `--inject-secrets`). Controls: `simple` (a
//! cross-origin GET and a text/plain POST, and a PUT to the page's own
//! origin: none needs a preflight), `rejected` (the preflight answered
//! 403: the PUT is never sent). Committed under tests/data/cors, re-made
//! live when root.
//!
//! The oracle is tshark's reading of the same capture, not rttdoc's: each
//! `OPTIONS` carrying `Access-Control-Request-Method` answered 200-299,
//! and the same client's first later request with that method for the
//! same URL within 2 s of the answer. Each is one finding on that
//! request's stream: one wait, from the preflight to the request,
//! released by the answer.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::*;

/// How long after a preflight's answer its request may begin
/// (follow_ups.rs).
const FOLLOW_S: f64 = 2.0;

/// A preflight the oracle expects as one finding: the stream of the
/// request it let go, and (preflight, answer, request) frames; and where
/// the browser sent the request.
#[derive(Debug, PartialEq, Eq)]
struct Expected {
    stream: u64,
    preflight: u64,
    answer: u64,
    request: u64,
    sent_on: SentOn,
}

/// Where the browser sent the request a preflight let go: its own choice
/// (Chromium sends a credentialed request on a connection apart from its
/// preflight's, and opens another, too, when the preflight's is not back
/// in its pool yet: a busy machine's run of `preflight` did).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SentOn {
    /// The preflight's connection.
    Same,
    /// Another connection, its SYN sent after the preflight's answer.
    Opened,
    /// Another connection, open before the answer.
    Open,
}

fn expected(capture: &Path) -> Vec<Expected> {
    let n = |s: &str| -> u64 { s.parse().unwrap() };
    let (requests, h2) = http_requests(capture);
    // Preflights allowed: the preflight's frame -> its answer's (frame,
    // time).
    let mut allowed: BTreeMap<u64, (u64, f64)> = BTreeMap::new();
    for b in &h2 {
        let Some(200..=299) = b.status else {
            continue;
        };
        if let Some(q) = http2_request_of(&h2, b) {
            allowed.insert(q.frame, (b.frame, b.time));
        }
    }
    for r in tshark_fields(
        capture,
        ONE_SEGMENT_AT_A_TIME,
        "http.response.code >= 200 && http.response.code <= 299",
        &["frame.number", "frame.time_epoch", "http.request_in"],
    ) {
        if let Ok(request) = r[2].parse::<u64>() {
            allowed.insert(request, (n(&r[0]), r[1].parse().unwrap()));
        }
    }
    // Each stream's SYN (without ACK): when the client opened it.
    let syns: BTreeMap<u64, f64> = tshark_fields(
        capture,
        &[],
        "tcp.flags.syn == 1 && tcp.flags.ack == 0",
        &["tcp.stream", "frame.time_epoch"],
    )
    .iter()
    .map(|r| (n(&r[0]), r[1].parse().unwrap()))
    .collect();
    let mut out: Vec<Expected> = Vec::new();
    for p in &requests {
        let (Some(method), Some(&(answer, time))) = (
            p.preflight_method
                .as_ref()
                .filter(|_| p.method == "OPTIONS"),
            allowed.get(&p.frame),
        ) else {
            continue;
        };
        let next = requests.iter().find(|r| {
            r.frame > answer
                && r.time >= time
                && r.time - time <= FOLLOW_S
                && r.client == p.client
                && &r.method == method
                && r.url == p.url
                && !out.iter().any(|e| e.request == r.frame)
        });
        if let Some(r) = next {
            let sent_on = if r.stream == p.stream {
                SentOn::Same
            } else if syns.get(&r.stream).is_some_and(|&t| t >= time) {
                SentOn::Opened
            } else {
                SentOn::Open
            };
            out.push(Expected {
                stream: r.stream,
                preflight: p.frame,
                answer,
                request: r.frame,
                sent_on,
            });
        }
    }
    out
}

/// Every preflight the oracle finds is a `cors_preflight` on the stream of
/// the request it let go, one wait (from the preflight to the request,
/// released by the answer, the time tshark shows between them); and
/// rttdoc finds no other. Returns the findings, in the oracle's order,
/// each with its round trips on the network (common's network_rtts: the
/// browser's own turnaround left out) and where the browser sent the
/// request.
fn check(capture: &Path) -> Vec<(serde_json::Value, f64, SentOn)> {
    let doc = run_rttdoc_json(capture);
    let expected = expected(capture);
    let found = findings_of(&doc, "cors_preflight");
    let times = frame_times(capture);
    let name = capture.display();
    assert_eq!(found.len(), expected.len(), "{name}: {expected:?}");
    let mut out = Vec::new();
    for e in &expected {
        let Some((_, x)) = found.iter().find(|(stream, x)| {
            *stream == e.stream && x["waits"][0]["from_frame"].as_u64() == Some(e.preflight)
        }) else {
            panic!("{name}: {e:?}: no finding");
        };
        let waits = x["waits"].as_array().unwrap();
        assert_eq!(waits.len(), 1, "{name}: {x}");
        let w = &waits[0];
        assert_eq!(w["release_frame"], e.answer, "{name}: {x}");
        assert_eq!(w["to_frame"], e.request, "{name}: {x}");
        let span_ms = (times[&e.request] - times[&e.preflight]) * 1e3;
        let ms = w["ms"].as_f64().unwrap();
        assert!(
            (ms - span_ms).abs() < 0.01,
            "{name}: {x}: {ms} ms, tshark {span_ms} ms"
        );
        assert!((x["cost_ms"].as_f64().unwrap() - ms).abs() < 1e-6);
        assert_eq!(x["attributed_ms"], 0.0, "{name}: priced into the ideal");
        assert_eq!(x["phase"], "first_byte");
        assert_eq!(
            frames_cited(x),
            [e.preflight, e.answer, e.request],
            "{name}"
        );
        out.push(((*x).clone(), network_rtts(capture, x), e.sent_on));
    }
    let problems = display_filter_problems(capture, &doc);
    assert!(problems.is_empty(), "{name}: {problems:?}");
    out
}

/// A finding says where the browser sent the request (tshark's reading,
/// `sent_on`); the preflight's own round trip on the network is one
/// (`rtts`), and a request on a connection opened after the answer has
/// that connection's handshake in its cost too: two round trips at
/// least.
fn says_where_sent(x: &serde_json::Value, rtts: f64, sent_on: SentOn, run: Run) {
    let why = x["explanation"].as_str().unwrap();
    let words = match sent_on {
        SentOn::Same => "on this connection first",
        SentOn::Open => "on another connection, open already",
        SentOn::Opened => "on a connection opened after it",
    };
    assert!(why.contains(words), "{sent_on:?}: {why}");
    let opened = sent_on == SentOn::Opened;
    assert_eq!(why.contains("the new connection's set-up"), opened, "{why}");
    assert!((0.9..run.most_rtts()).contains(&rtts), "{rtts} RTT: {x}");
    if opened {
        assert!(x["cost_rtts"].as_f64().unwrap() >= 1.9, "{x}");
    }
}

/// Which run made a capture: how long its preflight's round trip
/// may be.
#[derive(Debug, Clone, Copy)]
enum Run {
    /// The committed captures': one round trip, at most half another
    /// (common's network_rtts).
    Committed,
    /// A live run's: scripts/tun-delay.py on a machine busy with the
    /// tests beside it holds a packet up to a round trip more (a live
    /// run's preflight-h2: its second `OPTIONS` answered 72 ms after it
    /// left, its path's RTT 40 ms, nginx's 204 sent at once).
    Live,
}

impl Run {
    fn most_rtts(self) -> f64 {
        match self {
            Run::Committed => 1.5,
            Run::Live => 2.5,
        }
    }
}

/// The captures of scripts/cors-captures.sh in `dir`.
fn check_made(dir: &Path, run: Run) {
    if !require("cors_preflight oracle", &["tshark"], false) {
        return;
    }
    let at = |name: &str| dir.join(format!("{name}.pcap.gz"));
    // Two preflights on the API's connection, one round trip each (a
    // 204 from nginx at once); the third PUT's preflight was kept.
    for capture in [at("preflight"), dir.join("preflight-h2.pcapng.gz")] {
        let found = check(&capture);
        assert_eq!(found.len(), 2, "{}", capture.display());
        for (x, rtts, sent_on) in &found {
            says_where_sent(x, *rtts, *sent_on, run);
            let (why, fix) = (
                x["explanation"].as_str().unwrap(),
                x["fix"].as_str().unwrap(),
            );
            assert!(why.contains("no `Access-Control-Max-Age`"), "{why}");
            assert!(
                fix.contains("the method `PUT` and the header `content-type`"),
                "{fix}"
            );
            assert!(fix.contains("Access-Control-Max-Age: 7200"), "{fix}");
        }
    }
    // HAProxy answering the preflights itself (`http-request return`, no
    // max age), the PUTs passed on to nginx: the same two round trips.
    let found = check(&at("preflight-haproxy"));
    assert_eq!(found.len(), 2, "{found:?}");
    for (x, rtts, sent_on) in &found {
        says_where_sent(x, *rtts, *sent_on, run);
        let why = x["explanation"].as_str().unwrap();
        assert!(why.contains("no `Access-Control-Max-Age`"), "{why}");
    }
    // Credentialed: the first PUT on a connection opened after its
    // preflight's answer (its handshake in the wait: two round trips at
    // least), the second on that connection, open already.
    let found = check(&at("preflight-credentials"));
    let [first, second] = &found[..] else {
        panic!("{found:?}");
    };
    assert_eq!((first.2, second.2), (SentOn::Opened, SentOn::Open));
    for (x, rtts, sent_on) in [first, second] {
        says_where_sent(x, *rtts, *sent_on, run);
    }
    let why = second.0["explanation"].as_str().unwrap();
    assert!(why.contains("`Access-Control-Max-Age: 600`"), "{why}");
    // Controls: simple requests and a same-origin PUT need none; a
    // rejected preflight lets nothing go.
    for control in ["simple", "rejected"] {
        assert!(check(&at(control)).is_empty(), "{control}");
        assert_no_finding(&run_rttdoc_json(&at(control)), "cors_preflight");
    }
}

#[test]
fn committed_preflights_cost_what_the_browser_waited() {
    check_made(&data_dir().join("cors"), Run::Committed);
}

#[test]
fn live_preflights_cost_what_the_browser_waited() {
    if !require(
        "live_preflights_cost_what_the_browser_waited",
        &[
            "tshark", "ip", "tcpdump", "nginx", "haproxy", "chromium", "python3", "openssl",
            "editcap",
        ],
        true,
    ) {
        return;
    }
    let dir = TempDir::new("cors");
    run_capture_script("cors-captures.sh", &[dir.0.as_os_str()]);
    check_made(&dir.0, Run::Live);
}

/// Browsers' traffic from PcapPlusPlus's test data: none with a preflight
/// and its answer (4KHttpRequests holds Firefox 33's preflights, `OPTIONS`
/// then `POST` a round trip later, but only the client's packets: no
/// answer allowed them in the capture). The oracle and rttdoc agree there
/// is none.
#[test]
fn public_captures_preflights_agree_with_tshark() {
    if !require(
        "public_captures_preflights_agree_with_tshark",
        &["tshark"],
        false,
    ) {
        return;
    }
    for capture in pcapplusplus_browsing(&["Pcap++Test__PcapExamples__4KHttpRequests.pcap"]) {
        assert!(check(&capture).is_empty(), "{}", capture.display());
    }
}
