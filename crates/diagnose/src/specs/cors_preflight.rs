//! `cors_preflight` (detect/cors_preflight.rs).
//!
//! > Signature: an earlier request of the same client (on this connection
//! > or another) was an `OPTIONS` for this request's URL carrying
//! > `Access-Control-Request-Method` with this request's method [...],
//! > and was answered with an ok status (200-299); this request began
//! > after that answer was captured and within 2 s of it. [...] One
//! > wait, released by the preflight's answer: from the preflight to this
//! > request, whatever connection carries it. [...] Nothing under the
//! > ledger's 2 ms floor. Never attributed to the excess.

use super::*;
use crate::model::Detail;
use FindingKind::CorsPreflight;

const RTT: f64 = 40.0;
const EXACT: f64 = 1e-3;

const PREFLIGHT: &[u8] = b"OPTIONS /items/1 HTTP/1.1\r\nHost: api.example.com\r\n\
Access-Control-Request-Method: PUT\r\nAccess-Control-Request-Headers: content-type\r\n\
Origin: https://www.example.com\r\n\r\n";
const ALLOWED: &[u8] = b"HTTP/1.1 204 No Content\r\n\
Access-Control-Allow-Origin: https://www.example.com\r\nAccess-Control-Allow-Methods: PUT\r\n\
Access-Control-Allow-Headers: content-type\r\n\r\n";
const PUT: &[u8] = b"PUT /items/1 HTTP/1.1\r\nHost: api.example.com\r\n\
Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}";

#[test]
fn a_preflight_costs_its_round_trip_before_the_request() {
    for path in Path::all(RTT) {
        let (o, ids) = asked_again(path, PREFLIGHT, ALLOWED, 0.5, PUT);
        let f = the_wait_to_ask_again(&o, CorsPreflight, ids, RTT + 1.5);
        match &f.detail {
            Detail::CorsPreflight {
                exchange: 2,
                preflight_stream: 0,
                preflight_request: Some(r),
                method,
                request_headers: Some(h),
                status: 204,
                max_age_s: None,
                other_connection: false,
                new_connection: false,
                answer_ms,
                turnaround_ms,
            } if r == "OPTIONS /items/1" && &**method == "PUT" && &**h == "content-type" => {
                // (On the capture's clock: the vantage moves the split
                // between the two, not their sum.)
                assert_ms(answer_ms + turnaround_ms, RTT + 1.5, EXACT, "the wait");
                assert_ms(*turnaround_ms, 0.5, RTT, "sent at once");
            }
            d => panic!("{d:?}"),
        }
    }
}

#[test]
fn the_answer_s_max_age_is_what_the_browser_was_told_to_keep() {
    let kept: &[u8] = b"HTTP/1.1 200 OK\r\nAccess-Control-Allow-Origin: *\r\n\
Access-Control-Allow-Methods: PUT\r\nAccess-Control-Max-Age: 600\r\nContent-Length: 0\r\n\r\n";
    let (o, _) = asked_again(Path::at_client(RTT), PREFLIGHT, kept, 0.5, PUT);
    assert!(
        matches!(
            o.the(CorsPreflight).detail,
            Detail::CorsPreflight {
                status: 200,
                max_age_s: Some(600),
                ..
            }
        ),
        "{:?}",
        o.the(CorsPreflight).detail
    );
}

/// In HTTP/2 (h2c): `OPTIONS /items/1` on stream 1 with `asking` (the
/// preflight's own fields), answered with `answer`, then `PUT /items/1`
/// on stream 3 half a millisecond after the answer came. Returns the
/// preflight, its answer and the PUT.
fn in_http2(path: Path, asking: &[(&str, &str)], answer: &[(&str, &str)]) -> (Outcome, [Id; 3]) {
    let request = |method: &'static str| {
        vec![
            (":method", method),
            (":scheme", "http"),
            (":authority", "example.com"),
            (":path", "/items/1"),
        ]
    };
    let mut w = Wire::new(path);
    let [_, _, ack] = w.handshake(0.0);
    let mut options = request("OPTIONS");
    options.extend_from_slice(asking);
    let first = [h2::preface(), h2::headers(1, &options)].concat();
    let asked = w.send(C, w.sent(ack), leak(first));
    let answer = [h2::settings(), h2::headers(1, answer)].concat();
    let answered = w.send(S, w.arrival(asked) + 1.0, leak(answer));
    let put = h2::headers(3, &request("PUT"));
    let put = w.send(C, w.arrival(answered) + 0.5, leak(put));
    let done = w.send(
        S,
        w.arrival(put) + 1.0,
        leak(h2::headers(3, &[(":status", "200")])),
    );
    w.ack(C, w.arrival(done));
    (w.run(), [asked, answered, put])
}

#[test]
fn in_http2_the_request_follows_its_preflight_on_another_stream() {
    let asking = [("access-control-request-method", "PUT")];
    let allowed = [(":status", "204"), ("access-control-max-age", "7200")];
    for path in Path::all(RTT) {
        let (o, ids) = in_http2(path, &asking, &allowed);
        let f = the_wait_to_ask_again(&o, CorsPreflight, ids, RTT + 1.5);
        assert!(
            matches!(&f.detail, Detail::CorsPreflight {
                preflight_request: Some(r), method, request_headers: None, status: 204,
                max_age_s: Some(7200), other_connection: false, ..
            } if r == "OPTIONS /items/1" && &**method == "PUT"),
            "{:?}",
            f.detail
        );
        // Near misses: a plain OPTIONS (no method asked for); a preflight
        // refused; one that asked for another method.
        in_http2(path, &[], &allowed).0.has_no(CorsPreflight);
        in_http2(path, &asking, &[(":status", "403")])
            .0
            .has_no(CorsPreflight);
        in_http2(
            path,
            &[("access-control-request-method", "DELETE")],
            &allowed,
        )
        .0
        .has_no(CorsPreflight);
    }
}

#[test]
fn a_request_on_a_connection_opened_after_the_answer_costs_its_set_up_too() {
    // Chromium sends a credentialed request's preflight without
    // credentials, on a connection of its own: the request opens
    // another once the answer has come.
    for path in Path::all(RTT) {
        let (o, [asked, allowed, syn, put]) =
            asked_again_on_a_new_connection(path, 443, (PREFLIGHT, ALLOWED, false), 0.5, PUT);
        let f = o.the(CorsPreflight);
        // The preflight's round trip, the browser's 0.5 ms and the new
        // connection's handshake.
        assert_waits(
            &f.waits,
            &[o.wait(asked, put, Some(allowed), 2.0 * RTT + 1.5)],
            EXACT,
        );
        assert_eq!(f.frames, o.frames(&[asked, allowed, put]));
        assert_shown_on_both_streams(f);
        assert!(o.frame(allowed) < o.frame(syn));
        assert!(
            matches!(
                f.detail,
                Detail::CorsPreflight {
                    exchange: 1,
                    preflight_stream: 0,
                    other_connection: true,
                    new_connection: true,
                    ..
                }
            ),
            "{:?}",
            f.detail
        );
    }
}

#[test]
fn near_misses_are_no_preflight() {
    let at = Path::at_client(RTT);
    let plain_options: &[u8] = b"OPTIONS /items/1 HTTP/1.1\r\nHost: api.example.com\r\n\r\n";
    let post: &[u8] =
        b"POST /items/1 HTTP/1.1\r\nHost: api.example.com\r\nContent-Length: 2\r\n\r\n{}";
    let other: &[u8] =
        b"PUT /items/2 HTTP/1.1\r\nHost: api.example.com\r\nContent-Length: 2\r\n\r\n{}";
    let refused: &[u8] = b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n";
    let moved: &[u8] =
        b"HTTP/1.1 301 Moved Permanently\r\nLocation: /items/1/\r\nContent-Length: 0\r\n\r\n";
    for (why, path, preflight, answer, turnaround, next) in [
        (
            "an OPTIONS that asks for no method: curl -X OPTIONS, not a browser's preflight",
            at,
            plain_options,
            ALLOWED,
            0.0,
            PUT,
        ),
        ("another method", at, PREFLIGHT, ALLOWED, 0.0, post),
        ("another URL", at, PREFLIGHT, ALLOWED, 0.0, other),
        (
            "refused: the browser sends nothing (this PUT is another's)",
            at,
            PREFLIGHT,
            refused,
            0.0,
            PUT,
        ),
        (
            "a redirect fails a preflight",
            at,
            PREFLIGHT,
            moved,
            0.0,
            PUT,
        ),
        (
            "2.5 s later: the page's next call, not this preflight's",
            at,
            PREFLIGHT,
            ALLOWED,
            2500.0,
            PUT,
        ),
        (
            "on loopback the round trip is nothing to win",
            Path::at_client(0.2),
            PREFLIGHT,
            ALLOWED,
            0.0,
            PUT,
        ),
    ] {
        let (o, _) = asked_again(path, preflight, answer, turnaround, next);
        assert!(!o.kinds().contains(&CorsPreflight), "{why}");
    }
}

#[test]
fn one_preflight_lets_one_request_go() {
    // The same PUT twice after one preflight: the first waited for it;
    // the second was the page's next call (the browser kept the
    // permission), and waited for nothing.
    let mut w = Wire::new(Path::at_client(RTT));
    let [_, _, ack] = w.handshake(0.0);
    let asked = w.send(C, w.sent(ack), PREFLIGHT);
    let allowed = w.send(S, w.arrival(asked) + 1.0, ALLOWED);
    let put = w.send(C, w.arrival(allowed) + 0.5, PUT);
    let done = w.send(S, w.arrival(put) + 1.0, bytes(300));
    let again = w.send(C, w.arrival(done) + 0.5, PUT);
    let done = w.send(S, w.arrival(again) + 1.0, bytes(300));
    w.ack(C, w.arrival(done));
    let o = w.run();
    let f = o.the(CorsPreflight);
    assert_waits(
        &f.waits,
        &[o.wait(asked, put, Some(allowed), RTT + 1.5)],
        EXACT,
    );
}
