//! A reverse proxy's client waits for the proxy's upstream: that time is
//! the upstream's, not the proxy's (upstream.rs in rttdoc-analyze,
//! upstream_wait.rs in rttdoc-diagnose). Captures by
//! scripts/proxy-captures.sh (tests/data/proxy): `tcpdump -i any` on the
//! proxy's host, real Linux TCP, nginx, HAProxy, curl 40 ms away, and a
//! python upstream that works 150 ms on /slow and answers /fast at once;
//! curl asks /slow/a, /fast/b, /slow/c on one keep-alive connection.

mod common;

use common::*;
use serde_json::Value;

/// What the upstream spends on /slow (the script's `time.sleep(0.15)`).
const UPSTREAM_WORK_MS: f64 = 150.0;

fn capture(name: &str) -> Value {
    run_rttdoc_json(&data_dir().join("proxy").join(format!("{name}.pcap.gz")))
}

fn connections(doc: &Value) -> &Vec<Value> {
    doc["connections"].as_array().unwrap()
}

/// The connection of the client (10.78.1.1) that made the requests.
fn front(doc: &Value) -> &Value {
    connections(doc)
        .iter()
        .find(|c| c["client"]["ip"] == "10.78.1.1" && c["exchanges"].as_u64() >= Some(3))
        .expect("the client's connection")
}

/// The proxy's connections to the upstream.
fn calls(doc: &Value) -> Vec<&Value> {
    connections(doc)
        .iter()
        .filter(|c| c["server"]["ip"] == "10.78.3.2")
        .collect()
}

fn finding<'a>(c: &'a Value, kind: &str) -> Option<&'a Value> {
    c["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == kind)
}

/// The frontend waited twice for the upstream's 150 ms (/slow/a and
/// /slow/c; /fast/b is below the threshold), each wait at least the
/// upstream's own think time and containing its answer; the proxy's own
/// time (under a millisecond here) is no think time; the upstream's
/// connections keep their own `server_think_time`.
fn assert_waited_for_the_upstream(name: &str) -> Value {
    let doc = capture(name);
    let front = front(&doc);
    let waits = waits_of(front, "upstream_wait", "first_byte");
    assert_eq!(waits.len(), 2, "{name}: the two /slow requests: {waits:?}");
    for (_, _, ms) in &waits {
        assert!(
            (UPSTREAM_WORK_MS..UPSTREAM_WORK_MS + 10.0).contains(ms),
            "{name}: {ms} ms"
        );
    }
    assert!(
        think_waits(front).is_empty(),
        "{name}: the proxy's own time is not think time: {:?}",
        think_waits(front)
    );
    let upstream: Vec<(u64, u64, f64)> = calls(&doc).into_iter().flat_map(think_waits).collect();
    assert_eq!(upstream.len(), 2, "{name}: the upstream's own think time");
    let uw = finding(front, "upstream_wait").unwrap();
    let frames = frames_cited(uw);
    for (i, (_, answer, think)) in upstream.iter().enumerate() {
        assert!(
            frames.contains(answer),
            "{name}: cites the upstream's answer {answer}: {frames:?}"
        );
        assert!(
            waits[i].2 >= *think,
            "{name}: the call contains its think time"
        );
    }
    assert_eq!(
        uw["attributed_ms"], uw["cost_ms"],
        "{name}: the phase's excess"
    );
    doc
}

#[test]
fn nginx_opening_an_upstream_connection_per_request_waited_for_the_upstream() {
    let doc = assert_waited_for_the_upstream("nginx-new-conn");
    let uw = finding(front(&doc), "upstream_wait").unwrap();
    let words = uw["explanation"].as_str().unwrap();
    assert!(
        words.contains("new connection to 10.78.3.2:8080 for 2 of them"),
        "{words}"
    );
    // Each request had its own upstream connection.
    assert!(calls(&doc).len() >= 3, "one per request");
    // The headline still adds every connection's loss, and says how much
    // of it the proxy's client and the upstream both count.
    let out = std::process::Command::new(rttdoc_bin())
        .arg("analyze")
        .arg(data_dir().join("proxy/nginx-new-conn.pcap.gz"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let counted_twice = format!(
        "Of it, {:.1} ms is proxies' clients waiting for upstream calls",
        uw["attributed_ms"].as_f64().unwrap()
    );
    assert!(text.contains(&counted_twice), "{text}");
}

#[test]
fn nginx_keeping_its_upstream_connection_waited_for_the_upstream() {
    let doc = assert_waited_for_the_upstream("nginx-keepalive");
    assert_eq!(calls(&doc).len(), 1, "one kept connection");
    let words = finding(front(&doc), "upstream_wait").unwrap()["explanation"]
        .as_str()
        .unwrap()
        .to_string();
    // The first request opened it; the second reused it.
    assert!(
        words.contains("new connection to 10.78.3.2:8080 for 1 of them"),
        "{words}"
    );
}

#[test]
fn haproxy_waited_for_the_upstream() {
    let doc = assert_waited_for_the_upstream("haproxy");
    let words = finding(front(&doc), "upstream_wait").unwrap()["explanation"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(words.contains("forwarded the request"), "{words}");
}

/// TLS to nginx: the requests are unreadable at the proxy, and each is
/// paired with the only call in its wait (less confident).
#[test]
fn a_tls_frontend_is_paired_by_the_only_call_in_its_wait() {
    let doc = assert_waited_for_the_upstream("nginx-tls");
    let uw = finding(front(&doc), "upstream_wait").unwrap();
    assert!(uw["confidence"].as_f64().unwrap() < 0.9);
    let words = uw["explanation"].as_str().unwrap();
    assert!(words.contains("the only call it made"), "{words}");
}

/// The control: the python server answers the client itself 150 ms late
/// while its host fetches an unrelated page from the upstream inside the
/// wait. That call is for another resource: the wait is the server's.
#[test]
fn a_servers_unrelated_call_inside_its_wait_is_not_its_upstream() {
    let doc = capture("direct-slow");
    for c in connections(&doc) {
        assert!(
            finding(c, "upstream_wait").is_none(),
            "stream {}",
            c["stream"]
        );
    }
    let c = connections(&doc)
        .iter()
        .find(|c| c["server"]["port"] == 8090)
        .unwrap();
    let waits = think_waits(c);
    assert_eq!(waits.len(), 1);
    assert!((UPSTREAM_WORK_MS..UPSTREAM_WORK_MS + 10.0).contains(&waits[0].2));
    assert_eq!(calls(&doc).len(), 1, "the unrelated call is in the capture");
}

/// The label of a connection's first request ("GET /slow/1"), from its
/// ledger's first-byte row.
fn first_request(c: &Value) -> String {
    let row = c["ledger"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["phase"] == "first_byte")
        .expect("a request");
    let label = row["label"].as_str().unwrap();
    label.split(':').next().unwrap().to_string()
}

/// Four requests at once through nginx, each on its connection, each
/// forwarded on a connection of its own: every wait holds four calls, and
/// each request is paired with the call for its own resource (nginx
/// answered them in another order than they came).
#[test]
fn concurrent_requests_are_each_paired_with_their_own_call() {
    let doc = capture("nginx-parallel");
    let fronts: Vec<&Value> = connections(&doc)
        .iter()
        .filter(|c| c["client"]["ip"] == "10.78.1.1")
        .collect();
    assert_eq!(fronts.len(), 4);
    for front in fronts {
        let uw = finding(front, "upstream_wait").expect("paired");
        let cited = frames_cited(uw);
        let call = calls(&doc)
            .into_iter()
            .find(|c| think_waits(c).iter().any(|w| cited.contains(&w.1)))
            .expect("cites a call's answer");
        assert_eq!(first_request(front), first_request(call));
        assert!(think_waits(front).is_empty());
    }
}

/// The same over TLS: the requests cannot be read at the proxy and every
/// wait holds four calls, so none is paired; the waits stay the server's
/// (as before this pairing existed: nothing is claimed that is not
/// certain).
#[test]
fn concurrent_unreadable_requests_are_not_paired() {
    let doc = capture("nginx-tls-parallel");
    let mut fronts = 0;
    for c in connections(&doc) {
        assert!(
            finding(c, "upstream_wait").is_none(),
            "stream {}",
            c["stream"]
        );
        if c["client"]["ip"] == "10.78.1.1" {
            fronts += 1;
            assert_eq!(think_waits(c).len(), 1, "stream {}", c["stream"]);
        }
    }
    assert_eq!(fronts, 4);
}

#[test]
fn a_caches_miss_is_worded_as_the_caches_fetch_and_its_hit_costs_nothing() {
    // scripts/cache-captures.sh: Varnish in front of a 100 ms origin,
    // captured on the client's side only (its calls to the origin are not
    // in the capture, as for a client of a CDN). The first /page is a miss
    // (100 ms), the second a hit (at once); each answer names Varnish in
    // its `Via`. The wait is the cache's fetch, not the answering host's
    // handler: the finding says so, and the fix is the cache's.
    if !require("upstream: a cache's miss", &["tshark"], false) {
        return;
    }
    let path = data_dir().join("proxy").join("varnish-miss-hit.pcap.gz");
    let doc = run_rttdoc_json(&path);
    let c = connection(&doc, 0);
    // The answers' heads as tshark reads them: each names the cache.
    let heads = tshark_fields(
        &path,
        &["-d", "tcp.port==6081,http"],
        "http.response",
        &["frame.number", "http.response.line"],
    );
    assert_eq!(heads.len(), 2, "{heads:?}");
    let via = "Via: 1.1 varnish (Varnish/7.1)";
    assert!(heads.iter().all(|h| h[1].contains(via)), "{heads:?}");
    // One wait: the miss, the origin's 100 ms; the hit is below the
    // threshold.
    let waits = think_waits(c);
    assert_eq!(waits.len(), 1, "{waits:?}");
    assert!((100.0..130.0).contains(&waits[0].2), "{waits:?}");
    let f = finding(c, "server_think_time").unwrap();
    let said = f["explanation"].as_str().unwrap();
    assert!(
        said.contains(via) && !said.contains("application time"),
        "{said}"
    );
    let fix = f["fix"].as_str().unwrap();
    assert!(
        fix.contains("through a proxy or cache") && fix.contains(via),
        "{fix}"
    );
    assert!(!fix.contains("Profile the application"), "{fix}");
}
