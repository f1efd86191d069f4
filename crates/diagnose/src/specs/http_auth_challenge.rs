//! `http_auth_challenge` (detect/http_auth_challenge.rs).
//!
//! > Signature: an earlier request of the same client (on this connection
//! > or another) asked for the same method and URL [...] and was
//! > answered `401` with a `WWW-Authenticate` challenge (a proxy: `407`
//! > with `Proxy-Authenticate`), and this request carries the
//! > credentials that challenge asked for; it began after the challenge
//! > was captured and within 2 s of it. [...] A follow-up challenged
//! > again (NTLM's second leg) is one more leg of the request that is
//! > finally sent and not challenged; a request rejected at the end holds
//! > none. Each leg is one wait, released by its challenge: from the
//! > challenged request to the next request of the chain. Never
//! > attributed to the excess.

use super::*;
use crate::model::{AuthScheme, Detail};
use FindingKind::HttpAuthChallenge;

const RTT: f64 = 40.0;
const EXACT: f64 = 1e-3;

const REPORT: &[u8] = b"GET /report HTTP/1.1\r\nHost: example.com\r\n\r\n";
const REPORT_BASIC: &[u8] =
    b"GET /report HTTP/1.1\r\nHost: example.com\r\nAuthorization: Basic dTpw\r\n\r\n";
const CHALLENGE_BASIC: &[u8] = b"HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"r\"\r\nContent-Length: 0\r\n\r\n";

#[test]
fn a_basic_challenge_costs_the_challenged_request_s_round_trip() {
    for path in Path::all(RTT) {
        let (o, ids) = asked_again(path, REPORT, CHALLENGE_BASIC, 0.5, REPORT_BASIC);
        let f = the_wait_to_ask_again(&o, HttpAuthChallenge, ids, RTT + 1.5);
        match &f.detail {
            Detail::HttpAuthChallenge {
                exchange: 2,
                challenged_stream: 0,
                challenged_request: Some(r),
                challenges: 1,
                status: 401,
                offered: AuthScheme::Basic,
                answered_with: Some(AuthScheme::Basic),
                new_connection: false,
                answer_ms,
                turnaround_ms,
            } if r == "GET /report" => {
                // (On the capture's clock: the vantage moves the split
                // between the two, not their sum.)
                assert_ms(answer_ms + turnaround_ms, RTT + 1.5, EXACT, "the wait");
                assert_ms(*turnaround_ms, 0.5, RTT, "answered at once");
            }
            d => panic!("{d:?}"),
        }
    }
}

/// In HTTP/2 (h2c): `GET /report` on stream 1 challenged with `answer`,
/// then `GET /report` on stream 3 with `credentials` half a millisecond
/// after the challenge came. Returns the first request, its answer and
/// stream 3's.
fn in_http2(
    path: Path,
    answer: &[(&str, &str)],
    credentials: &[(&str, &str)],
) -> (Outcome, [Id; 3]) {
    let mut w = Wire::new(path);
    let [_, _, ack] = w.handshake(0.0);
    let first = [h2::preface(), h2::get(1, "/report", &[])].concat();
    let asked = w.send(C, w.sent(ack), leak(first));
    let answer = [h2::settings(), h2::headers(1, answer)].concat();
    let answered = w.send(S, w.arrival(asked) + 1.0, leak(answer));
    let again = h2::get(3, "/report", credentials);
    let again = w.send(C, w.arrival(answered) + 0.5, leak(again));
    let page = w.send(
        S,
        w.arrival(again) + 1.0,
        leak(h2::headers(3, &[(":status", "200")])),
    );
    w.ack(C, w.arrival(page));
    (w.run(), [asked, answered, again])
}

#[test]
fn in_http2_a_challenge_is_answered_on_another_stream() {
    let challenge = [
        (":status", "401"),
        ("www-authenticate", "Basic realm=\"r\""),
    ];
    let basic = [("authorization", "Basic dTpw")];
    for path in Path::all(RTT) {
        let (o, ids) = in_http2(path, &challenge, &basic);
        let f = the_wait_to_ask_again(&o, HttpAuthChallenge, ids, RTT + 1.5);
        assert!(
            matches!(&f.detail, Detail::HttpAuthChallenge {
                challenged_request: Some(r), status: 401, offered: AuthScheme::Basic,
                answered_with: Some(AuthScheme::Basic), new_connection: false, ..
            } if r == "GET /report"),
            "{:?}",
            f.detail
        );
        // Near misses: asked again without credentials; a 401 that asks
        // for none.
        in_http2(path, &challenge, &[]).0.has_no(HttpAuthChallenge);
        in_http2(path, &[(":status", "401")], &basic)
            .0
            .has_no(HttpAuthChallenge);
    }
}

#[test]
fn ntlm_s_two_challenges_are_two_waits_of_the_request_finally_served() {
    let negotiate: &[u8] =
        b"GET /report HTTP/1.1\r\nHost: example.com\r\nAuthorization: NTLM TlRMTVNTUAABAAAA\r\n\r\n";
    let authenticate: &[u8] =
        b"GET /report HTTP/1.1\r\nHost: example.com\r\nAuthorization: NTLM TlRMTVNTUAADAAAA\r\n\r\n";
    let offer: &[u8] =
        b"HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: NTLM\r\nContent-Length: 0\r\n\r\n";
    let challenge: &[u8] = b"HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: NTLM TlRMTVNTUAACAAAA\r\nContent-Length: 0\r\n\r\n";
    for path in Path::all(RTT) {
        let mut w = Wire::new(path);
        let [_, _, ack] = w.handshake(0.0);
        let bare = w.send(C, w.sent(ack), REPORT);
        let offered = w.send(S, w.arrival(bare) + 1.0, offer);
        let first = w.send(C, w.arrival(offered), negotiate);
        let challenged = w.send(S, w.arrival(first) + 1.0, challenge);
        let last = w.send(C, w.arrival(challenged), authenticate);
        let page = w.send(S, w.arrival(last) + 1.0, bytes(300));
        w.ack(C, w.arrival(page));
        let o = w.run();
        let f = o.the(HttpAuthChallenge);
        assert_waits(
            &f.waits,
            &[
                o.wait(bare, first, Some(offered), RTT + 1.0),
                o.wait(first, last, Some(challenged), RTT + 1.0),
            ],
            EXACT,
        );
        assert_cost_is_its_waits(f);
        assert!(
            matches!(
                f.detail,
                Detail::HttpAuthChallenge {
                    exchange: 3,
                    challenges: 2,
                    offered: AuthScheme::Ntlm,
                    answered_with: Some(AuthScheme::Ntlm),
                    ..
                }
            ),
            "{:?}",
            f.detail
        );
        assert_eq!(
            o.kinds()
                .iter()
                .filter(|k| **k == HttpAuthChallenge)
                .count(),
            1,
            "the second leg is no finding of its own"
        );
    }
}

#[test]
fn a_proxy_that_closes_after_its_challenge_costs_the_new_connection_too() {
    let absolute: &[u8] = b"GET http://example.com/a HTTP/1.1\r\nHost: example.com\r\n\r\n";
    let with: &[u8] = b"GET http://example.com/a HTTP/1.1\r\nHost: example.com\r\nProxy-Authorization: Basic dTpw\r\n\r\n";
    let required: &[u8] = b"HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"p\"\r\nConnection: close\r\n\r\n";
    for path in Path::all(RTT) {
        let (o, [asked, challenged, syn, again]) =
            asked_again_on_a_new_connection(path, 3128, (absolute, required, true), 0.5, with);
        let f = o.the(HttpAuthChallenge);
        // The request's round trip, the client's 0.5 ms and the new
        // connection's handshake.
        assert_waits(
            &f.waits,
            &[o.wait(asked, again, Some(challenged), 2.0 * RTT + 1.5)],
            EXACT,
        );
        assert_eq!(f.frames, o.frames(&[asked, challenged, again]));
        assert_shown_on_both_streams(f);
        assert!(o.frame(syn) < o.frame(again));
        assert!(
            matches!(
                f.detail,
                Detail::HttpAuthChallenge {
                    exchange: 1,
                    challenged_stream: 0,
                    status: 407,
                    answered_with: Some(AuthScheme::Basic),
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
fn near_misses_are_no_challenge_answered() {
    let at = Path::at_client(RTT);
    let other: &[u8] =
        b"GET /other HTTP/1.1\r\nHost: example.com\r\nAuthorization: Basic dTpw\r\n\r\n";
    let post: &[u8] =
        b"POST /report HTTP/1.1\r\nHost: example.com\r\nAuthorization: Basic dTpw\r\nContent-Length: 0\r\n\r\n";
    let proxy_credentials: &[u8] =
        b"GET /report HTTP/1.1\r\nHost: example.com\r\nProxy-Authorization: Basic dTpw\r\n\r\n";
    let asks_nothing: &[u8] = b"HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n";
    let forbidden: &[u8] =
        b"HTTP/1.1 403 Forbidden\r\nWWW-Authenticate: Basic realm=\"r\"\r\nContent-Length: 0\r\n\r\n";
    for (why, path, challenge, turnaround, next) in [
        (
            "the same request without credentials",
            at,
            CHALLENGE_BASIC,
            0.0,
            REPORT,
        ),
        ("another URL", at, CHALLENGE_BASIC, 0.0, other),
        ("another method", at, CHALLENGE_BASIC, 0.0, post),
        (
            "a proxy's credentials for a server's challenge",
            at,
            CHALLENGE_BASIC,
            0.0,
            proxy_credentials,
        ),
        (
            "2.5 s later: a person typed a password",
            at,
            CHALLENGE_BASIC,
            2500.0,
            REPORT_BASIC,
        ),
        (
            "a 401 that asks for no scheme",
            at,
            asks_nothing,
            0.0,
            REPORT_BASIC,
        ),
        (
            "a 403 is an answer, whatever it carries",
            at,
            forbidden,
            0.0,
            REPORT_BASIC,
        ),
        (
            "on loopback the round trip is nothing to win",
            Path::at_client(0.2),
            CHALLENGE_BASIC,
            0.0,
            REPORT_BASIC,
        ),
    ] {
        let (o, _) = asked_again(path, REPORT, challenge, turnaround, next);
        assert!(!o.kinds().contains(&HttpAuthChallenge), "{why}");
    }
}

#[test]
fn credentials_rejected_at_the_end_cost_no_finding() {
    // A wrong password: challenged, asked again with credentials,
    // challenged again, and nothing more. Nothing was served: no request
    // waited for a challenge to be served.
    let mut w = Wire::new(Path::at_client(RTT));
    let [_, _, ack] = w.handshake(0.0);
    let asked = w.send(C, w.sent(ack), REPORT);
    let challenged = w.send(S, w.arrival(asked) + 1.0, CHALLENGE_BASIC);
    let again = w.send(C, w.arrival(challenged), REPORT_BASIC);
    let rejected = w.send(S, w.arrival(again) + 1.0, CHALLENGE_BASIC);
    w.ack(C, w.arrival(rejected));
    w.run().has_no(HttpAuthChallenge);
}
