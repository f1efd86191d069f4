//! `upstream_wait` (detect/upstream_wait.rs).
//!
//! > the server is a proxy, and its client waited for the proxy's
//! > upstream [...]. Signature, in a capture taken on the proxy's host:
//! > while an exchange waited for its answer, the host made a call that
//! > can only have been this request's [...]. The call's span, from its
//! > SYN (a connection opened during the wait) or its request to its
//! > answer's first segment, within the wait from the request's last
//! > segment to the answer's first, of at least half a round trip clamped
//! > to 5..20 ms, is a wait from the request to the answer, with no
//! > releasing packet on this connection. Cost: the waits' sum;
//! > `server_think_time` takes the same time off its own, leaving the
//! > proxy's.
//!
//! The proxy (10.0.0.2:443) is 40 ms from its client and captures on its
//! own host; its upstream (10.0.1.9:8080) is 0.2 ms away. The client asks
//! at 100 ms; the request arrives at 120 ms.

use super::*;
use crate::model::{Detail, Phase};
use FindingKind::{ServerThinkTime, UpstreamWait};

const EXACT: f64 = 1e-3;
const ARRIVES: f64 = 120.0;

const FRONT: &[u8] = b"GET /api/slow?id=3 HTTP/1.1\r\nHost: x\r\n\r\n";
/// What the proxy forwards: its own version and host, the prefix
/// rewritten (`location /api/ { proxy_pass http://up/; }`).
const FORWARDED: &[u8] = b"GET /slow?id=3 HTTP/1.0\r\nHost: up\r\nConnection: close\r\n\r\n";

/// A TLS application-data record: a request the proxy cannot read.
fn tls_record() -> &'static [u8] {
    leak([&[0x17u8, 3, 3, 0, 40][..], &[0u8; 40][..]].concat())
}

/// The client's request; the proxy calls its upstream `call_after` ms
/// after it arrives (the request `request`, with `connect`), the upstream
/// works `work` ms, and the proxy answers `own` ms after the upstream's
/// answer came.
fn proxied(
    request: &'static [u8],
    call_after: f64,
    forwarded: &'static [u8],
    work: f64,
    connect: bool,
    own: f64,
) -> (Outcome, Id, Call, Id) {
    let mut w = Wire::new(Path::at_server(40.0));
    w.handshake(0.0);
    let req = w.send(C, 100.0, request);
    let call = w.call(
        "10.0.0.2",
        50000,
        ARRIVES + call_after,
        forwarded,
        work,
        connect,
    );
    let upstream_answered = w.sent(call.answer);
    let resp = w.send(S, upstream_answered + own, b"HTTP/1.1 200 OK\r\n\r\n");
    w.ack(C, w.arrival(resp));
    (w.run(), req, call, resp)
}

/// The proxy opened a connection for the request and answered the moment
/// the upstream had: the whole wait was the upstream's.
#[test]
fn a_proxy_answering_when_its_upstream_did_waited_for_the_upstream() {
    let (o, req, call, resp) = proxied(FRONT, 0.5, FORWARDED, 150.0, true, 0.5);
    let x = o.the(UpstreamWait);
    assert_eq!(x.phase, Some(Phase::FirstByte));
    let syn = call.syn.expect("connected");
    assert_eq!(x.frames, o.frames(&[req, syn, call.answer, resp]));
    // SYN at 120.5, the request 0.3 ms later, its answer 150.2 ms after it.
    assert_ms(x.cost_ms, 150.5, EXACT, "the call's SYN to its answer");
    assert_eq!(x.waits, vec![o.wait(req, resp, None, x.cost_ms)]);
    match &x.detail {
        Detail::UpstreamWait {
            answers,
            upstream,
            new_connections,
            connect_ms,
            ..
        } => {
            assert_eq!(*answers, 1);
            assert_eq!(upstream.to_string(), "10.0.1.9:8080");
            assert_eq!(*new_connections, 1);
            assert_ms(*connect_ms, 0.3, EXACT, "SYN to request");
        }
        d => panic!("detail {d:?}"),
    }
    assert!(
        x.display_filter.contains("tcp.stream eq 1"),
        "{}",
        x.display_filter
    );
    // The proxy's own 1.5 ms are below the threshold.
    o.has_no(ServerThinkTime);
}

/// What the proxy spent after the upstream's answer (buffering, a
/// rewrite, its own work) stays its think time.
#[test]
fn the_proxys_own_time_beside_the_call_stays_its_think_time() {
    let (o, ..) = proxied(FRONT, 0.5, FORWARDED, 150.0, true, 40.0);
    assert_ms(o.the(UpstreamWait).cost_ms, 150.5, EXACT, "the call");
    assert_ms(
        o.the(ServerThinkTime).cost_ms,
        40.5,
        EXACT,
        "0.5 ms before the call, 40 ms after",
    );
}

/// A kept connection (nginx `keepalive`): no handshake in the wait; the
/// call is its request to its answer.
#[test]
fn a_call_on_a_kept_connection_waits_from_its_request() {
    let (o, _, call, _) = proxied(FRONT, 0.5, FORWARDED, 150.0, false, 0.5);
    let x = o.the(UpstreamWait);
    assert_ms(x.cost_ms, 150.2, EXACT, "request to answer");
    assert!(x.frames.contains(&o.frame(call.request)));
    assert!(matches!(
        x.detail,
        Detail::UpstreamWait {
            new_connections: 0,
            ..
        }
    ));
}

/// A call for another resource is not this request's, however well it
/// fits in the wait: the server's time stays its own.
#[test]
fn a_call_for_another_resource_is_not_the_requests() {
    let other = b"GET /metrics HTTP/1.1\r\nHost: up\r\n\r\n";
    let (o, ..) = proxied(FRONT, 0.5, other, 150.0, true, 0.5);
    o.has_no(UpstreamWait);
    assert_ms(
        o.the(ServerThinkTime).cost_ms,
        151.5,
        EXACT,
        "the whole wait",
    );
}

/// An upstream that answered within the threshold cost nothing worth
/// naming; the proxy's own 100 ms are think time, less the call's.
#[test]
fn a_quick_upstream_is_no_finding_and_the_rest_is_the_proxys() {
    let (o, ..) = proxied(FRONT, 0.5, FORWARDED, 2.0, true, 100.0);
    o.has_no(UpstreamWait);
    assert_ms(
        o.the(ServerThinkTime).cost_ms,
        100.5,
        EXACT,
        "the wait less the 2.5 ms call",
    );
}

/// A request the capture cannot read (TLS to the proxy) is paired with
/// the only call in its wait; a second call, whoever's, leaves it unpaired.
#[test]
fn an_unreadable_request_is_paired_only_with_the_only_call() {
    let tls_record = tls_record();
    let (o, ..) = proxied(tls_record, 0.5, FORWARDED, 150.0, true, 0.5);
    let x = o.the(UpstreamWait);
    assert_ms(x.cost_ms, 150.5, EXACT, "the only call");
    assert!(x.confidence < 0.9, "paired by timing alone");

    let mut w = Wire::new(Path::at_server(40.0));
    w.handshake(0.0);
    w.send(C, 100.0, tls_record);
    let first = w.call("10.0.0.2", 50000, ARRIVES + 0.5, FORWARDED, 150.0, true);
    w.call("10.0.0.2", 50001, ARRIVES + 1.0, FORWARDED, 140.0, true);
    let resp = w.send(S, w.sent(first.answer) + 0.5, b"HTTP/1.1 200 OK\r\n\r\n");
    w.ack(C, w.arrival(resp));
    let o = w.run();
    o.has_no(UpstreamWait);
    o.the(ServerThinkTime);
}

/// Paired by timing alone, a call that leaves much of the wait uncovered
/// (the server's own 60 ms after it) may be a call of the host's own (a
/// metrics push): the whole wait stays the server's.
#[test]
fn a_call_paired_by_timing_alone_must_fill_the_wait() {
    let (o, ..) = proxied(tls_record(), 0.5, FORWARDED, 150.0, true, 60.0);
    o.has_no(UpstreamWait);
    assert_ms(
        o.the(ServerThinkTime).cost_ms,
        211.0,
        EXACT,
        "the whole wait",
    );
    // Read as the request forwarded, the same call is the upstream's.
    let (o, ..) = proxied(FRONT, 0.5, FORWARDED, 150.0, true, 60.0);
    assert_ms(o.the(UpstreamWait).cost_ms, 150.5, EXACT, "the call");
}

/// A call that began before the request arrived is someone else's.
#[test]
fn a_call_begun_before_the_request_is_not_its() {
    let (o, ..) = proxied(FRONT, -5.0, FORWARDED, 150.0, true, 0.5);
    o.has_no(UpstreamWait);
    o.the(ServerThinkTime);
}
