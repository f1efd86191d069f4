//! TLS handshakes that waited for their client's fetch of what it needed
//! to check the server's certificate: `certificate_fetch`.
//!
//! Producer: scripts/cert-fetch-captures.sh, real Linux TCP, 20 ms each
//! way, captured on the client's interface. `aia`, `aia-tls13`: headless
//! Chromium loads a page from nginx that sends its certificate without
//! the intermediate (TLS 1.2; TLS 1.3): Chromium GETs the intermediate
//! from the certificate's AIA URL before it answers the server's flight.
//! `ocsp`: `gnutls-cli --ocsp` looks the responder's name up and POSTs an
//! OCSP request before its key exchange; `ocsp-tls13` the same in TLS
//! 1.3, `ocsp-unasked` from a client that asks for no stapled status.
//! Controls: `full-chain` (nginx
//! sends the chain: nothing to fetch), `ocsp-stapled` (nginx staples the
//! status: gnutls-cli reads it from the handshake). Committed under
//! tests/data/cert-fetch, re-made live when root.
//!
//! The oracle is tshark's reading of the same capture, not rttdoc's: the
//! HTTP requests that fetch a certificate, a status or a list (by their
//! method, URI and content type, or their answer's), each from its
//! lookup's first query for its host, else its SYN, to its answer's first
//! segment; and each TLS connection's client turn: the server's data from
//! the ServerHello to the client's next handshake data, the turn running
//! from that data's last segment to the client's answer. A fetch that
//! began inside a turn is one wait of that connection's finding, its
//! cost the fetch's time up to the answer.

mod common;

use std::path::Path;

use common::*;

/// A fetch as the oracle reads it.
#[derive(Debug)]
struct Fetch {
    stream: u64,
    /// When it began: its host's lookup's first query, else its SYN (the
    /// first request on its connection), or its request (a later one).
    began: f64,
    /// Its answer's first segment.
    answered: f64,
    request_frame: u64,
    answer_frame: u64,
}

fn fetches(capture: &Path) -> Vec<Fetch> {
    let num = |s: &str| -> f64 { s.parse().unwrap() };
    let requests = tshark_fields(
        capture,
        ONE_SEGMENT_AT_A_TIME,
        "http.request && tcp",
        &[
            "frame.number",
            "tcp.stream",
            "http.request.method",
            "http.request.uri",
            "http.content_type",
            "http.host",
            "frame.time_epoch",
        ],
    );
    let answers = tshark_fields(
        capture,
        ONE_SEGMENT_AT_A_TIME,
        "http.response && tcp",
        &[
            "frame.number",
            "frame.time_epoch",
            "tcp.stream",
            "http.content_type",
        ],
    );
    let syns = tshark_fields(
        capture,
        &[],
        "tcp.flags.syn == 1 && tcp.flags.ack == 0",
        &["tcp.stream", "frame.time_epoch"],
    );
    let queries = tshark_fields(
        capture,
        &[],
        "dns.flags.response == 0",
        &["frame.time_epoch", "dns.qry.name"],
    );
    let mut out = Vec::new();
    for r in &requests {
        let stream: u64 = r[1].parse().unwrap();
        let uri = r[3].to_ascii_lowercase();
        let path = uri.split('?').next().unwrap_or_default();
        let by_request = (r[2] == "POST" && r[4].starts_with("application/ocsp-request"))
            || (r[2] == "GET"
                && [".crt", ".cer", ".der", ".p7c", ".p7b", ".crl"]
                    .iter()
                    .any(|s| path.ends_with(s)));
        // The stream's first answer after the request.
        let request_frame: u64 = r[0].parse().unwrap();
        let Some(a) = answers
            .iter()
            .find(|a| a[2] == r[1] && a[0].parse::<u64>().unwrap() > request_frame)
        else {
            continue;
        };
        let by_answer = ["application/ocsp-response", "application/pkix-c"]
            .iter()
            .any(|t| a[3].starts_with(t));
        if !by_request && !by_answer {
            continue;
        }
        // A later request on its connection began with itself.
        let first_on_stream = requests
            .iter()
            .find(|q| q[1] == r[1])
            .is_some_and(|q| q[0] == r[0]);
        let began = if first_on_stream {
            let syn = syns
                .iter()
                .find(|s| s[0] == r[1])
                .map(|s| num(&s[1]))
                .expect("the fetch's SYN in the capture");
            let host = r[5].split(':').next().unwrap_or_default();
            // The lookup's first query for the host, in the second before
            // the SYN.
            queries
                .iter()
                .map(|q| (num(&q[0]), q[1].as_str()))
                .filter(|(t, name)| *name == host && *t <= syn && syn - t < 1.0)
                .map(|(t, _)| t)
                .fold(syn, f64::min)
        } else {
            num(&r[6])
        };
        out.push(Fetch {
            stream,
            began,
            answered: num(&a[1]),
            request_frame,
            answer_frame: a[0].parse().unwrap(),
        });
    }
    out
}

/// Each TLS connection's client turn: (stream, the server flight's last
/// segment: frame and time, the client's answer: frame and time).
fn client_turns(capture: &Path) -> Vec<(u64, u64, f64, u64, f64)> {
    let hellos = tshark_fields(
        capture,
        &[],
        "tls.handshake.type == 2",
        &[
            "tcp.stream",
            "frame.number",
            "tls.handshake.extensions.supported_version",
        ],
    );
    let data = tshark_fields(
        capture,
        &[],
        "tcp.len > 0",
        &[
            "frame.number",
            "frame.time_epoch",
            "tcp.stream",
            "tcp.srcport",
            "tls.record.content_type",
            "tcp.len",
        ],
    );
    let ports = tshark_fields(
        capture,
        &[],
        "tls.handshake.type == 1",
        &["tcp.stream", "tcp.srcport"],
    );
    let mut out = Vec::new();
    for h in &hellos {
        let client_port = &ports.iter().find(|p| p[0] == h[0]).expect("a ClientHello")[1];
        let hello: u64 = h[1].parse().unwrap();
        let tls13 = h[2] == "0x0304";
        let mut last_server = None;
        for d in data
            .iter()
            .filter(|d| d[2] == h[0] && d[0].parse::<u64>().unwrap() >= hello)
        {
            let (frame, t) = (d[0].parse::<u64>().unwrap(), d[1].parse::<f64>().unwrap());
            // TLS 1.3's compatibility ChangeCipherSpec alone answers
            // nothing (GnuTLS writes it before it checks the certificate).
            if &d[3] == client_port && tls13 && d[4] == "20" && d[5] == "6" {
                continue;
            }
            if &d[3] == client_port {
                let (q, qt) = last_server.expect("server data first");
                out.push((h[0].parse().unwrap(), q, qt, frame, t));
                break;
            }
            last_server = Some((frame, t));
        }
    }
    out
}

/// What the oracle expects on each TLS stream: the cost (ms), the
/// fetch's frames and its stream. A wait shorter than a host's turnaround (half the
/// stream's round trip, within 5..20 ms: server_think_time's threshold)
/// is none.
fn expected(capture: &Path) -> Vec<(u64, f64, Vec<u64>, u64)> {
    let fetches = fetches(capture);
    let rtts = stream_rtts(capture);
    client_turns(capture)
        .into_iter()
        .filter_map(|(stream, _, from, _, to)| {
            let f = fetches.iter().find(|f| f.began > from && f.began < to)?;
            let ms = (f.answered.min(to) - f.began) * 1e3;
            let &(_, rtt_ms) = rtts.iter().find(|r| r.0 == stream)?;
            (ms >= (rtt_ms / 2.0).clamp(5.0, 20.0))
                .then(|| (stream, ms, vec![f.request_frame, f.answer_frame], f.stream))
        })
        .collect()
}

/// The round trip of each stream (ms), as tshark measured its handshake.
fn stream_rtts(capture: &Path) -> Vec<(u64, f64)> {
    tshark_fields(
        capture,
        &[],
        "tcp.analysis.initial_rtt",
        &["tcp.stream", "tcp.analysis.initial_rtt"],
    )
    .iter()
    .map(|r| (r[0].parse().unwrap(), r[1].parse::<f64>().unwrap() * 1e3))
    .collect()
}

/// What the oracle expects of TLS 1.2 (and older) streams whose first
/// request the client held after the handshake for a fetch: the first
/// application-data record of the client's, the handshake's last record
/// (ChangeCipherSpec or handshake, either side) before it; the fetches
/// begun after the ServerHello and before the request cover part of the
/// time between (at least a host's turnaround), the last of them
/// answered at most a turnaround before the request. (TLS 1.3's
/// Finished is an application-data record: its turns are the
/// handshake's, read by `expected`.)
fn expected_held(capture: &Path) -> Vec<(u64, f64, Vec<u64>, u64)> {
    let fetches = fetches(capture);
    let rtts = stream_rtts(capture);
    let records = tshark_fields(
        capture,
        &[],
        "tls.record",
        &[
            "frame.number",
            "frame.time_epoch",
            "tcp.stream",
            "tcp.srcport",
            "tls.record.content_type",
        ],
    );
    let hellos = tshark_fields(
        capture,
        &[],
        "tls.handshake.type == 2 && !tls.handshake.extensions.supported_version",
        &["tcp.stream", "frame.time_epoch"],
    );
    let clients = tshark_fields(
        capture,
        &[],
        "tls.handshake.type == 1",
        &["tcp.stream", "tcp.srcport"],
    );
    let mut out = Vec::new();
    for h in &hellos {
        let stream: u64 = h[0].parse().unwrap();
        let hello: f64 = h[1].parse().unwrap();
        let Some(port) = clients.iter().find(|c| c[0] == h[0]).map(|c| &c[1]) else {
            continue;
        };
        let of_stream: Vec<&Vec<String>> = records.iter().filter(|r| r[2] == h[0]).collect();
        let Some(request) = of_stream
            .iter()
            .find(|r| &r[3] == port && r[4].split(',').any(|t| t == "23"))
        else {
            continue;
        };
        let (request_frame, at): (u64, f64) =
            (request[0].parse().unwrap(), request[1].parse().unwrap());
        let Some(ready) = of_stream
            .iter()
            .filter(|r| r[0].parse::<u64>().unwrap() < request_frame)
            .filter(|r| r[4].split(',').any(|t| t == "20" || t == "22"))
            .map(|r| r[1].parse::<f64>().unwrap())
            .next_back()
        else {
            continue;
        };
        let mut spans: Vec<(f64, f64, &Fetch)> = fetches
            .iter()
            .filter(|f| f.began > hello && f.began < at && f.answered.min(at) > ready)
            .map(|f| (f.began.max(ready), f.answered.min(at), f))
            .collect();
        spans.sort_by(|a, b| a.0.total_cmp(&b.0));
        let (mut covered, mut reached) = (0.0, ready);
        for (from, to, _) in &spans {
            covered += (to - from.max(reached)).max(0.0);
            reached = reached.max(*to);
        }
        let Some(&(_, released, f)) = spans.iter().max_by(|a, b| a.1.total_cmp(&b.1)) else {
            continue;
        };
        let Some(&(_, rtt_ms)) = rtts.iter().find(|r| r.0 == stream) else {
            continue;
        };
        let threshold = (rtt_ms / 2.0).clamp(5.0, 20.0);
        let (ms, after) = (covered * 1e3, (at - released) * 1e3);
        if ms >= threshold && after <= threshold {
            out.push((
                stream,
                ms,
                vec![f.request_frame, f.answer_frame, request_frame],
                f.stream,
            ));
        }
    }
    out
}

/// Checks rttdoc's `certificate_fetch` findings against the oracle's:
/// the handshakes' waits and the first requests held after them; returns
/// how many of each.
fn check(capture: &Path) -> (usize, usize) {
    let doc = run_rttdoc_json(capture);
    let all = findings_of(&doc, "certificate_fetch");
    let (held, turns): (Vec<_>, Vec<_>) = all.into_iter().partition(|(_, x)| x["phase"].is_null());
    for (got, want, what) in [
        (&turns, expected(capture), "handshakes waited"),
        (
            &held,
            expected_held(capture),
            "first requests were held after the handshake",
        ),
    ] {
        compare(capture, &doc, got, &want, what);
    }
    (turns.len(), held.len())
}

fn compare(
    capture: &Path,
    doc: &serde_json::Value,
    got: &[(u64, &serde_json::Value)],
    want: &[(u64, f64, Vec<u64>, u64)],
    what: &str,
) {
    assert_eq!(
        got.iter().map(|(s, _)| *s).collect::<Vec<_>>(),
        want.iter().map(|(s, ..)| *s).collect::<Vec<_>>(),
        "{}: the streams whose {what} for a fetch",
        capture.display()
    );
    for ((_, x), (stream, ms, frames, fetch_stream)) in got.iter().zip(want) {
        let cost = x["cost_ms"].as_f64().unwrap();
        assert!(
            (cost - ms).abs() < 0.01,
            "{} stream {stream}: {cost} ms, the oracle {ms} ms",
            capture.display()
        );
        let cited: Vec<u64> = x["frames"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f.as_u64().unwrap())
            .collect();
        assert!(
            frames.iter().all(|f| cited.contains(f)),
            "{} stream {stream}: cites {cited:?}, not the fetch's {frames:?}",
            capture.display()
        );
        let filter = x["display_filter"].as_str().unwrap();
        assert!(
            filter.contains(&format!("tcp.stream eq {fetch_stream}")),
            "{filter}"
        );
        let problems = display_filter_problems(capture, doc);
        assert!(problems.is_empty(), "{problems:?}");
    }
}

fn check_made(dir: &Path) {
    let at = |name: &str| dir.join(format!("{name}.pcap.gz"));
    // Chromium's first connection to the page waited for the
    // intermediate, and its second too when that one's flight came
    // before the fetch began (otherwise it joined a fetch under way, not
    // claimed: the oracle agrees either way); gnutls-cli's one for the
    // status.
    // (Each checks the verifier before its next flight: no request held
    // after a handshake.)
    assert!(matches!(check(&at("aia")), (1..=2, 0)));
    assert!(matches!(check(&at("aia-tls13")), (1..=2, 0)));
    assert_eq!(check(&at("ocsp")), (1, 0));
    // The same in TLS 1.3, where gnutls-cli writes its compatibility
    // ChangeCipherSpec as the server's flight comes and its Finished
    // after the check; and from a client that asks for no staple.
    assert_eq!(check(&at("ocsp-tls13")), (1, 0));
    assert_eq!(check(&at("ocsp-unasked")), (1, 0));
    let ocsp = run_rttdoc_json(&at("ocsp"));
    let (_, x) = &findings_of(&ocsp, "certificate_fetch")[0];
    let said = x["explanation"].as_str().unwrap();
    assert!(said.contains("revocation status"), "{said}");
    // What each handshake said of a staple, as tshark reads its
    // ClientHello's extensions (status_request: 5) and its TLS 1.2
    // server flight (no CertificateStatus, 22).
    for (name, asked, words) in [
        ("ocsp", true, "the server's flight went on from its Certificate to its next message (frame {flight}) without a CertificateStatus"),
        ("ocsp-tls13", true, "whether the server did, the capture cannot show"),
        ("ocsp-unasked", false, "a staple would not have reached it"),
    ] {
        let capture = at(name);
        let hello = &tshark_fields(&capture, &[], "tls.handshake.type == 1", &["frame.number", "tls.handshake.extension.type"])[0];
        assert_eq!(hello[1].split(',').any(|t| t == "5"), asked, "{name}: {hello:?}");
        let flight = tshark_fields(&capture, &[], "tls.handshake.type == 14 || tls.handshake.type == 12 || tls.handshake.type == 22", &["frame.number", "tls.handshake.type"]);
        let doc = run_rttdoc_json(&capture);
        let (_, x) = &findings_of(&doc, "certificate_fetch")[0];
        let said = x["explanation"].as_str().unwrap();
        let words = words.replace("{flight}", flight.first().map_or("", |f| f[0].as_str()));
        assert!(said.contains(&words), "{name}: {said}");
        assert!(said.contains(&format!("ClientHello, frame {})", hello[0])), "{name}: {said}");
        assert!(flight.iter().all(|f| !f[1].split(',').any(|t| t == "22")), "{name}: stapled");
        let cited = x["frames"].as_array().unwrap();
        assert!(cited.contains(&hello[0].parse::<u64>().unwrap().into()), "{name}: {cited:?}");
    }
    // The lookup of the responder's name began the fetch.
    let lookup = tshark_fields(
        &at("ocsp"),
        &[],
        "dns.qry.name == \"ocsp.rttdoc.test\" && dns.flags.response == 0",
        &["frame.number"],
    );
    let first_query: u64 = lookup[0][0].parse().unwrap();
    assert!(
        x["frames"]
            .as_array()
            .unwrap()
            .contains(&first_query.into()),
        "{x}"
    );
    // Controls: nothing fetched (the status stapled: tshark shows it in
    // the handshake).
    for control in ["full-chain", "ocsp-stapled"] {
        assert!(fetches(&at(control)).is_empty(), "{control}");
        assert_no_finding(&run_rttdoc_json(&at(control)), "certificate_fetch");
    }
    let stapled = tshark_fields(
        &at("ocsp-stapled"),
        &[],
        "tls.handshake.type == 22",
        &["frame.number"],
    );
    assert!(!stapled.is_empty(), "no CertificateStatus in ocsp-stapled");
}

#[test]
fn committed_certificate_fetches_cost_what_the_handshakes_waited() {
    if !require(
        "committed_certificate_fetches_cost_what_the_handshakes_waited",
        &["tshark"],
        false,
    ) {
        return;
    }
    check_made(&data_dir().join("cert-fetch"));
}

#[test]
fn live_certificate_fetches_cost_what_the_handshakes_waited() {
    if !require(
        "live_certificate_fetches_cost_what_the_handshakes_waited",
        &[
            "tshark",
            "ip",
            "tcpdump",
            "nginx",
            "openssl",
            "chromium",
            "certutil",
            "gnutls-cli",
            "dnsmasq",
            "python3",
        ],
        true,
    ) {
        return;
    }
    let dir = TempDir::new("cert-fetch");
    run_capture_script("cert-fetch-captures.sh", &[dir.0.as_os_str()]);
    check_made(&dir.0);
}

/// Browsers' traffic from PcapPlusPlus's test data holds OCSP requests
/// (2013's and 2015's browsers): none held a handshake's client turn
/// longer than a turnaround. Those clients answered the server's flight
/// at once and checked the certificate beside the handshake, holding
/// their first request instead (docs/real-world.md, sessions 48 and 49:
/// Chrome on Windows, many-protocols.pcap's streams 2 and 119). The
/// oracle and rttdoc agree on both.
#[test]
fn public_captures_certificate_fetches_agree_with_tshark() {
    if !require(
        "public_captures_certificate_fetches_agree_with_tshark",
        &["tshark"],
        false,
    ) {
        return;
    }
    let (mut fetched, mut held) = (0, 0);
    for name in [
        "Pcap++Test__PcapExamples__example.pcap",
        "ExamplesTest__pcap_examples__many-protocols.pcap",
    ] {
        let Some(capture) = public_capture("seladb-PcapPlusPlus", name) else {
            continue;
        };
        fetched += fetches(&capture).len();
        let (turns, requests) = check(&capture);
        assert_eq!(turns, 0, "{name}");
        held += requests;
    }
    if in_ci() {
        assert!(fetched >= 4, "the public captures' fetches: {fetched}");
        assert!(held >= 2, "first requests held for a check: {held}");
    }
}
