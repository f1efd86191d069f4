//! `http_redirect` (detect/http_redirect.rs).
//!
//! > Signature: an earlier request of the same client (on this connection
//! > or another) was answered `301`, `302`, `303`, `307` or `308` with a
//! > `Location`, and this request asks for that `Location` [...], or, its
//! > request encrypted, this connection was opened after the answer by a
//! > ClientHello asking for the `Location`'s host on its port. It began
//! > after the answer was captured and within 2 s of it. [...] For a
//! > path's redirect the wait runs from the redirected request to this
//! > request; for another origin to the follow-up connection's start, and
//! > from the redirected request's connection's SYN when that connection
//! > was opened for it. Less the server's own work on the redirected
//! > request [...]. One wait, released by the 3xx answer; never
//! > attributed to the excess.

use super::tls::{encrypted, tls13_handshake, Offer};
use super::*;
use crate::model::Detail;
use FindingKind::HttpRedirect;

const RTT: f64 = 40.0;
const EXACT: f64 = 1e-3;

const DOCS: &[u8] = b"GET /docs HTTP/1.1\r\nHost: example.com\r\n\r\n";
const DOCS_SLASH: &[u8] = b"GET /docs/ HTTP/1.1\r\nHost: example.com\r\n\r\n";
const MOVED_SLASH: &[u8] =
    b"HTTP/1.1 301 Moved Permanently\r\nLocation: /docs/\r\nContent-Length: 0\r\n\r\n";

/// A redirect finding's turnaround (ms), and its detail.
fn told(f: &Finding) -> (f64, &Detail) {
    match f.detail {
        Detail::HttpRedirect { turnaround_ms, .. } => (turnaround_ms, &f.detail),
        ref other => panic!("{other:?}"),
    }
}

/// `GET /docs` answered with `answer`, then `next` (specs::asked_again).
fn on_one_connection(
    path: Path,
    answer: &'static [u8],
    turnaround: f64,
    next: &'static [u8],
) -> (Outcome, [Id; 3]) {
    asked_again(path, DOCS, answer, turnaround, next)
}

#[test]
fn a_missing_trailing_slash_costs_the_redirect_s_round_trip_on_the_same_connection() {
    for path in Path::all(RTT) {
        let (o, ids) = on_one_connection(path, MOVED_SLASH, 0.0, DOCS_SLASH);
        // (The server's 1 ms over the request is the request's work.)
        let f = the_wait_to_ask_again(&o, HttpRedirect, ids, RTT);
        let (turnaround_ms, d) = told(f);
        assert!(
            matches!(d, Detail::HttpRedirect {
                exchange: 2, redirect_stream: 0, status: 301, redirected_request: Some(r),
                location, same_origin: true, to_https: false, new_connection: false, by_url: true, ..
            } if r == "GET /docs" && &**location == "/docs/"),
            "{d:?}"
        );
        assert_ms(turnaround_ms, 0.0, RTT, "followed at once");
    }
}

/// A client that followed the redirect 400 ms after it reached it (a
/// browser's scheduler putting a pixel's request behind the page's:
/// PcapPlusPlus's many-protocols.pcap 52, Firefox 402 ms after a 302):
/// beyond a client's turnaround (20 ms) the delay was its own, not a
/// round trip the redirect added, and is not counted, but said. Followed
/// within the turnaround (10 ms: the near-miss), all of it is counted.
#[test]
fn a_clients_own_delay_in_following_a_redirect_is_not_the_redirects() {
    for path in Path::all(RTT) {
        for (turnaround, own) in [(400.0, 380.0), (10.0, 0.0)] {
            let (o, [asked, answered, again]) =
                on_one_connection(path, MOVED_SLASH, turnaround, DOCS_SLASH);
            let f = o.the(HttpRedirect);
            // The request's round trip (its 1 ms of server work not
            // counted), the turnaround up to 20 ms.
            assert_eq!(f.frames, o.frames(&[asked, answered, again]));
            assert_ms(
                f.cost_ms,
                RTT + turnaround - own,
                0.01,
                "the redirect's part",
            );
            let Detail::HttpRedirect { slow_follow_ms, .. } = f.detail else {
                panic!("{:?}", f.detail);
            };
            assert_ms(slow_follow_ms, own, 0.01, "the client's own delay");
        }
    }
}

/// In HTTP/2 (h2c): `GET /docs` on stream 1 answered `answer`, then
/// two requests before any answer (one turn): `/a` on stream 3 and,
/// half a millisecond later, `next` on stream 5. Returns the first
/// request, its answer and stream 5's.
fn in_http2(path: Path, answer: &[(&str, &str)], next: &str) -> (Outcome, [Id; 3]) {
    let mut w = Wire::new(path);
    let [_, _, ack] = w.handshake(0.0);
    let first = [h2::preface(), h2::get(1, "/docs", &[])].concat();
    let asked = w.send(C, w.sent(ack), leak(first));
    let answer = [h2::settings(), h2::headers(1, answer)].concat();
    let answered = w.send(S, w.arrival(asked) + 1.0, leak(answer));
    w.send(C, w.arrival(answered), leak(h2::get(3, "/a", &[])));
    let again = w.send(C, w.arrival(answered) + 0.5, leak(h2::get(5, next, &[])));
    let ok = [(":status", "200")];
    let pages = [h2::headers(3, &ok), h2::headers(5, &ok)].concat();
    let page = w.send(S, w.arrival(again) + 1.0, leak(pages));
    w.ack(C, w.arrival(page));
    (w.run(), [asked, answered, again])
}

#[test]
fn in_http2_the_follow_up_is_the_stream_that_asks_for_the_location_whichever_of_its_turn() {
    let moved = [(":status", "301"), ("location", "/docs/")];
    for path in Path::all(RTT) {
        let (o, [asked, answered, again]) = in_http2(path, &moved, "/docs/");
        let f = o.the(HttpRedirect);
        // (From stream 1's request to stream 5's, not to its turn's first,
        // stream 3's.)
        assert_waits(
            &f.waits,
            &[o.wait(asked, again, Some(answered), RTT + 0.5)],
            EXACT,
        );
        assert_cost_is_its_waits(f);
        let (_, d) = told(f);
        assert!(
            matches!(d, Detail::HttpRedirect {
                status: 301, redirected_request: Some(r), same_origin: true, by_url: true, ..
            } if r == "GET /docs"),
            "{d:?}"
        );
        // Near misses: no request for the Location; a 200 that names one.
        let (o, _) = in_http2(path, &moved, "/b");
        o.has_no(HttpRedirect);
        let (o, _) = in_http2(
            path,
            &[(":status", "200"), ("location", "/docs/")],
            "/docs/",
        );
        o.has_no(HttpRedirect);
    }
}

#[test]
fn near_misses_are_no_redirect_followed() {
    let at = Path::at_client(RTT);
    let other: &[u8] = b"GET /other HTTP/1.1\r\nHost: example.com\r\n\r\n";
    let elsewhere: &[u8] = b"GET /docs/ HTTP/1.1\r\nHost: www.example.com\r\n\r\n";
    let not_modified: &[u8] = b"HTTP/1.1 304 Not Modified\r\nLocation: /docs/\r\n\r\n";
    let nowhere: &[u8] = b"HTTP/1.1 302 Found\r\nContent-Length: 0\r\n\r\n";
    for (why, path, answer, turnaround, next) in [
        ("another URL asked next", at, MOVED_SLASH, 0.0, other),
        (
            "the same path on another host",
            at,
            MOVED_SLASH,
            0.0,
            elsewhere,
        ),
        (
            "2.5 s later: somebody's next visit",
            at,
            MOVED_SLASH,
            2500.0,
            DOCS_SLASH,
        ),
        (
            "a 304 is an answer, whatever it carries",
            at,
            not_modified,
            0.0,
            DOCS_SLASH,
        ),
        (
            "a 3xx without a Location sends nobody anywhere",
            at,
            nowhere,
            0.0,
            DOCS_SLASH,
        ),
        (
            "on loopback the round trip is nothing to win",
            Path::at_client(0.2),
            MOVED_SLASH,
            0.0,
            DOCS_SLASH,
        ),
    ] {
        let (o, _) = on_one_connection(path, answer, turnaround, next);
        assert!(!o.kinds().contains(&HttpRedirect), "{why}");
    }
}

/// The connection that carried the redirect: its SYN at 0, `GET /` for
/// `a.example` `request_after` ms after the set-up, answered `answer`.
/// Returns it, its SYN, request and answer.
fn redirecting(path: Path, request_after: f64, answer: &'static [u8]) -> (Wire, [Id; 3]) {
    let mut old = Wire::new(path);
    let [syn, _, ack] = old.handshake(0.0);
    let first = old.send(
        C,
        old.sent(ack) + request_after,
        b"GET / HTTP/1.1\r\nHost: a.example\r\n\r\n",
    );
    let moved = old.send(S, old.arrival(first) + 1.0, answer);
    old.ack(C, old.arrival(moved));
    (old, [syn, first, moved])
}

const TO_B: &[u8] =
    b"HTTP/1.1 302 Found\r\nLocation: http://B.example/\r\nContent-Length: 0\r\n\r\n";

/// The redirect on its own connection, then this one opened for the
/// follow-up (its SYN `gap` ms after the answer reached the client),
/// asking `next`. Returns the outcome, the redirect's SYN, request and
/// answer (this capture's ids), this SYN and request.
fn to_another_host(
    path: Path,
    request_after: f64,
    gap: f64,
    next: &'static [u8],
) -> (Outcome, [Id; 5]) {
    let (old, [old_syn, first, moved]) = redirecting(path, request_after, TO_B);
    let t = old.arrival(moved) + gap;
    let mut w = Wire::new(path);
    let joined = w.join(old, EARLIER, 443);
    let [syn, _, ack] = w.handshake(t);
    let follow = w.send(C, w.sent(ack), next);
    let page = w.send(S, w.arrival(follow) + 1.0, bytes(300));
    w.ack(C, w.arrival(page));
    let ids = [
        joined.id(old_syn),
        joined.id(first),
        joined.id(moved),
        syn,
        follow,
    ];
    (w.run(), ids)
}

#[test]
fn another_host_s_redirect_costs_from_the_connection_opened_for_it_to_the_new_one() {
    let next = b"GET / HTTP/1.1\r\nHost: b.example\r\n\r\n";
    for path in Path::all(RTT) {
        let (o, [old_syn, first, moved, syn, follow]) = to_another_host(path, 0.0, 1.0, next);
        let f = o.the(HttpRedirect);
        // The redirect's connection was opened for it: its set-up, the
        // request's round trip and the client's 1 ms, to this SYN (the
        // server's 1 ms over the request is the request's work).
        assert_waits(
            &f.waits,
            &[o.wait(old_syn, syn, Some(moved), 2.0 * RTT + 1.0)],
            EXACT,
        );
        assert_eq!(f.frames, o.frames(&[old_syn, first, moved, syn, follow]));
        assert_shown_on_both_streams(f);
        assert_eq!(f.attributed_ms, 0.0);
        let (turnaround_ms, d) = told(f);
        assert!(
            matches!(
                d,
                Detail::HttpRedirect {
                    exchange: 1,
                    redirect_stream: 0,
                    status: 302,
                    same_origin: false,
                    to_https: false,
                    new_connection: true,
                    by_url: true,
                    ..
                }
            ),
            "{d:?}"
        );
        assert_ms(turnaround_ms, 1.0, RTT, "the SYN 1 ms after the answer");
    }
}

#[test]
fn a_connection_made_ahead_of_the_redirected_request_is_not_its_cost() {
    // The redirected request left 500 ms after its connection was up (a
    // preconnect): the wait starts at that request.
    let next = b"GET / HTTP/1.1\r\nHost: b.example\r\n\r\n";
    for path in Path::all(RTT) {
        let (o, [_, first, moved, syn, _]) = to_another_host(path, 500.0, 1.0, next);
        assert_waits(
            &o.the(HttpRedirect).waits,
            &[o.wait(first, syn, Some(moved), RTT + 1.0)],
            EXACT,
        );
    }
}

/// A redirect of `answer` on its own connection (port 80), then this
/// TLS connection, its ClientHello naming `sni`: opened 1 ms after the
/// answer reached the client, or (`before`) at 1 ms, its request sent
/// only after the answer. Returns the outcome, the redirect's SYN and
/// answer (this capture's ids) and this SYN.
fn https_follow_up(
    path: Path,
    answer: &'static [u8],
    sni: Option<&'static str>,
    before: bool,
) -> (Outcome, [Id; 3]) {
    let (old, [old_syn, _, moved]) = redirecting(path, 0.0, answer);
    let after = old.arrival(moved) + 1.0;
    let t = if before { 1.0 } else { after };
    let mut w = Wire::new(path);
    let joined = w.join(old, EARLIER, 80);
    let [syn, _, _] = w.handshake(t);
    let offer = Offer {
        sni,
        ..Offer::tls13()
    };
    let hs = tls13_handshake(&mut w, t + RTT, 0.0, offer);
    let request = w.send(
        C,
        after.max(w.sent(hs.client_finished)),
        leak(encrypted(100)),
    );
    let page = w.send(S, w.arrival(request) + 1.0, leak(encrypted(300)));
    w.ack(C, w.arrival(page));
    (w.run(), [joined.id(old_syn), joined.id(moved), syn])
}

const TO_HTTPS: &[u8] = b"HTTP/1.1 301 Moved Permanently\r\nLocation: https://a.example/\r\n\r\n";

#[test]
fn an_https_follow_up_is_known_by_its_server_name_when_its_connection_came_after() {
    for path in Path::all(RTT) {
        let (o, [old_syn, moved, syn]) = https_follow_up(path, TO_HTTPS, Some("a.example"), false);
        let f = o.the(HttpRedirect);
        assert_waits(
            &f.waits,
            &[o.wait(old_syn, syn, Some(moved), 2.0 * RTT + 1.0)],
            EXACT,
        );
        assert!(f.confidence < 0.9, "known by its origin only");
        assert!(
            matches!(
                f.detail,
                Detail::HttpRedirect {
                    to_https: true,
                    by_url: false,
                    ..
                }
            ),
            "{:?}",
            f.detail
        );
    }
}

#[test]
fn a_tls_connection_opened_before_the_redirect_came_is_not_its_follow_up() {
    // The client had a connection to the host already (its SYN before the
    // answer): what its encrypted requests ask is unknown.
    let (o, _) = https_follow_up(Path::at_client(RTT), TO_HTTPS, Some("a.example"), true);
    o.has_no(HttpRedirect);
}

#[test]
fn an_https_follow_up_to_an_address_is_known_by_the_address_it_connected_to() {
    // A Location naming the server by its address: the ClientHello asks
    // no name (RFC 6066 3), the connection's address is the origin.
    let to_address: &[u8] =
        b"HTTP/1.1 301 Moved Permanently\r\nLocation: https://10.0.0.2/\r\n\r\n";
    let to_elsewhere: &[u8] =
        b"HTTP/1.1 301 Moved Permanently\r\nLocation: https://10.0.0.9/\r\n\r\n";
    for (answer, followed) in [(to_address, true), (to_elsewhere, false)] {
        let (o, _) = https_follow_up(Path::at_client(RTT), answer, None, false);
        if followed {
            o.the(HttpRedirect);
        } else {
            o.has_no(HttpRedirect);
        }
    }
}

#[test]
fn a_logins_work_is_its_own_and_the_redirect_only_the_round_trip_it_added() {
    // Post/Redirect/Get: the login took the server 60 ms (a password
    // hash, a new session), then `303` to `/home`, followed at once. The
    // 60 ms were needed however the POST was answered, and are the
    // server's think time: the redirect cost the round trip it added.
    const LOGIN: &[u8] = b"POST /login HTTP/1.1\r\nHost: example.com\r\nContent-Length: 0\r\n\r\n";
    const SEE_HOME: &[u8] =
        b"HTTP/1.1 303 See Other\r\nLocation: /home\r\nContent-Length: 0\r\n\r\n";
    const HOME: &[u8] = b"GET /home HTTP/1.1\r\nHost: example.com\r\n\r\n";
    for path in Path::all(RTT) {
        let mut w = Wire::new(path);
        let [_, _, ack] = w.handshake(0.0);
        let asked = w.send(C, w.sent(ack), LOGIN);
        w.ack(S, w.arrival(asked));
        let answered = w.send(S, w.arrival(asked) + 60.0, SEE_HOME);
        let again = w.send(C, w.arrival(answered), HOME);
        let page = w.send(S, w.arrival(again) + 1.0, bytes(300));
        w.ack(C, w.arrival(page));
        let o = w.run();
        let f = o.the(HttpRedirect);
        assert_waits(
            &f.waits,
            &[o.wait(asked, again, Some(answered), RTT)],
            EXACT,
        );
        assert_cost_is_its_waits(f);
        let think = o.the(FindingKind::ServerThinkTime);
        assert_ms(think.cost_ms, 60.0, EXACT, "the login's work");
        assert!(
            matches!(f.detail, Detail::HttpRedirect { server_ms, .. } if (server_ms - 60.0).abs() < EXACT),
            "{:?}",
            f.detail
        );
    }
}

/// A request the path held on its way (a slow uplink beyond the capture
/// point: PcapPlusPlus's many-protocols.pcap 10, judged in session 84, a
/// request acknowledged 17 ms late and the `301` 0.8 ms after that ACK,
/// read as 16.9 ms of server work): the server's pure ACK of the whole
/// request, back late by less than a delayed-ACK timer, left as it
/// arrived, and the server's work is from that ACK to the answer. The
/// redirect cost all but that.
#[test]
fn a_request_held_on_its_way_is_no_server_work() {
    const ROOT: &[u8] = b"GET / HTTP/1.1\r\nHost: example.com\r\n\r\n";
    const MOVED: &[u8] =
        b"HTTP/1.1 301 Moved Permanently\r\nLocation: /home\r\nContent-Length: 0\r\n\r\n";
    const HOME: &[u8] = b"GET /home HTTP/1.1\r\nHost: example.com\r\n\r\n";
    for held in [17.0, 0.0] {
        let mut w = Wire::new(Path::at_client(RTT));
        let [_, _, ack] = w.handshake(0.0);
        let asked = w.send(C, w.sent(ack), ROOT);
        w.late_after_tap(asked, held);
        w.ack(S, w.arrival(asked));
        let answered = w.send(S, w.arrival(asked) + 0.8, MOVED);
        let again = w.send(C, w.arrival(answered), HOME);
        let page = w.send(S, w.arrival(again) + 1.0, bytes(300));
        w.ack(C, w.arrival(page));
        let o = w.run();
        let f = o.the(HttpRedirect);
        let Detail::HttpRedirect { server_ms, .. } = f.detail else {
            panic!("{:?}", f.detail)
        };
        assert_ms(server_ms, 0.8, 0.05, "from the ACK to the 301");
        assert_ms(f.cost_ms, RTT + held, 0.05, "the round trip and the hold");
    }
}

/// A page that loads a URL redirecting back to it: `GET /a` answered
/// `302` to `/b`, `GET /b` answered with the page, which asks for `/a`
/// again, three turns on one connection. Each turn is a redirect
/// followed; the third knows the client was sent to `/b` twice before
/// (in the 10 s before: a loop, PcapPlusPlus's http-packets2.pcap's 26
/// turns through wix.com), the first two do not.
#[test]
fn a_redirect_followed_again_and_again_is_known_for_a_loop() {
    const A: &[u8] = b"GET /a HTTP/1.1\r\nHost: example.com\r\n\r\n";
    const B: &[u8] = b"GET /b HTTP/1.1\r\nHost: example.com\r\n\r\n";
    const TO_B: &[u8] = b"HTTP/1.1 302 Found\r\nLocation: /b\r\nContent-Length: 0\r\n\r\n";
    const PAGE: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
    let mut w = Wire::new(Path::at_client(RTT));
    w.handshake(0.0);
    let mut t = 50.0;
    for _ in 0..3 {
        let a = w.send(C, t, A);
        let moved = w.send(S, w.arrival(a) + 1.0, TO_B);
        let b = w.send(C, w.arrival(moved) + 0.5, B);
        let page = w.send(S, w.arrival(b) + 1.0, PAGE);
        t = w.arrival(page) + 20.0;
    }
    let o = w.run();
    let turns: Vec<u32> = o
        .report
        .findings
        .iter()
        .filter_map(|f| match f.detail {
            Detail::HttpRedirect {
                followed_before, ..
            } => Some(followed_before),
            _ => None,
        })
        .collect();
    assert_eq!(turns, [0, 1, 2]);
}

/// A follow-up answered with a redirect of its own is a chain's middle
/// hop (PcapPlusPlus's many-protocols.pcap: google.com to
/// `http://www.google.co.il/`, then to `https://`): the first hop's
/// finding names the second's answer and `Location`, so that its fix
/// links to the chain's end; the last hop's names none.
#[test]
fn a_chain_s_middle_hop_names_where_the_chain_goes_on() {
    const A: &[u8] = b"GET /a HTTP/1.1\r\nHost: example.com\r\n\r\n";
    const B: &[u8] = b"GET /b HTTP/1.1\r\nHost: example.com\r\n\r\n";
    const C_PAGE: &[u8] = b"GET /c HTTP/1.1\r\nHost: example.com\r\n\r\n";
    const TO_B: &[u8] = b"HTTP/1.1 302 Found\r\nLocation: /b\r\nContent-Length: 0\r\n\r\n";
    const TO_C: &[u8] =
        b"HTTP/1.1 301 Moved Permanently\r\nLocation: /c\r\nContent-Length: 0\r\n\r\n";
    const PAGE: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
    for path in Path::all(RTT) {
        let mut w = Wire::new(path);
        let [_, _, ack] = w.handshake(0.0);
        let a = w.send(C, w.sent(ack), A);
        let to_b = w.send(S, w.arrival(a) + 1.0, TO_B);
        let b = w.send(C, w.arrival(to_b) + 0.5, B);
        let to_c = w.send(S, w.arrival(b) + 1.0, TO_C);
        let c = w.send(C, w.arrival(to_c) + 0.5, C_PAGE);
        let page = w.send(S, w.arrival(c) + 1.0, PAGE);
        w.ack(C, w.arrival(page));
        let o = w.run();
        let hops: Vec<(u32, Option<(u64, &str)>)> = o
            .report
            .findings
            .iter()
            .filter_map(|f| match &f.detail {
                Detail::HttpRedirect {
                    exchange,
                    redirected_again,
                    ..
                } => Some((
                    *exchange,
                    redirected_again.as_ref().map(|(n, to)| (*n, &**to)),
                )),
                _ => None,
            })
            .collect();
        let to_c_frame = o.frames(&[to_c])[0];
        assert_eq!(hops, [(2, Some((to_c_frame, "/c"))), (3, None)], "{path:?}");
    }
}
