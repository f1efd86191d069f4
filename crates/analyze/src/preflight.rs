//! CORS preflights a browser waited for: the request it sent once the
//! preflight's answer allowed it (`cors_preflight` in rttdoc-diagnose).
//!
//! A page's script that asks another origin (another scheme, host or
//! port) for anything but a "simple" request (a method other than GET,
//! HEAD or POST; a header not CORS-safelisted: `Authorization`, an `X-`
//! header, a `Content-Type` other than `text/plain`, form data or
//! multipart) makes the browser ask first: an `OPTIONS` request for the
//! same URL, without credentials, that names the method and the headers
//! it will send (`Access-Control-Request-Method`,
//! `Access-Control-Request-Headers`; the Fetch standard's CORS-preflight
//! fetch). Only an ok status (200-299) that allows them lets the request
//! go, and only then does the browser send it: the preflight's round trip
//! bought nothing but permission. The browser keeps the permission for
//! the answer's `Access-Control-Max-Age` (5 s without one; Chromium at
//! most 2 h), per URL: an API with ids in its paths pays one per
//! resource.
//!
//! The tracker notes each such answer, of HTTP/1.x or HTTP/2 in the clear
//! or read with a key log, under the client's address (follow_ups.rs),
//! with the method and URL it allowed. A later request of the same client
//! (on any connection: Chromium sends a credentialed request's preflight
//! on a connection of its own) with that method for that URL follows it,
//! if it began within [`FOLLOW_NS`] of the answer (a browser sends it the
//! moment the answer allows it).

use std::net::IpAddr;

use crate::connection::Stamp;
use crate::follow_ups::{Answer, FollowUps, FOLLOW_NS};

/// Characters of the `Access-Control-Request-Headers` value kept to be
/// shown.
const HEADERS_CHARS: usize = 120;

/// A CORS preflight request: what it asks permission for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Preflight {
    /// The key of the request it asks permission for (its method and
    /// URL: challenge.rs's).
    key: u64,
    /// The method it asks for (`Access-Control-Request-Method`).
    method: Box<str>,
    /// The headers it asks for (`Access-Control-Request-Headers`), when
    /// it named any: what made the request need a preflight.
    headers: Option<Box<str>>,
}

impl Preflight {
    /// The preflight the HTTP/1.x request head `head` (its request line
    /// `line`, the URL it names `asked`) is: an `OPTIONS` with an
    /// `Access-Control-Request-Method`. `None` for another request, or one
    /// whose URL or method was not captured whole.
    pub fn of_request(
        line: &crate::exchange::RequestLine<'_>,
        head: &[u8],
        asked: Option<&crate::redirect::Asked>,
    ) -> Option<Preflight> {
        if line.method != b"OPTIONS" || !line.ended {
            return None;
        }
        let method = crate::exchange::header_value(head, b"access-control-request-method")?;
        let headers = crate::exchange::header_value(head, b"access-control-request-headers");
        Preflight::of(method, headers, asked?)
    }

    /// The preflight an HTTP/2 request is: its `:method` `OPTIONS`, its
    /// `access-control-request-method` and `-headers` fields' values.
    pub fn of_h2(
        method: &[u8],
        request_method: Option<&[u8]>,
        request_headers: Option<&[u8]>,
        asked: &crate::redirect::Asked,
    ) -> Option<Preflight> {
        if method != b"OPTIONS" {
            return None;
        }
        Preflight::of(request_method?, request_headers, asked)
    }

    fn of(
        method: &[u8],
        headers: Option<&[u8]>,
        asked: &crate::redirect::Asked,
    ) -> Option<Preflight> {
        let method = method.trim_ascii();
        // (A method is a token: a value that is not one asks for nothing
        // a request can be.)
        if method.is_empty() || !method.iter().all(|b| b.is_ascii_graphic()) {
            return None;
        }
        let headers = headers
            .map(<[u8]>::trim_ascii)
            .filter(|h| !h.is_empty())
            .map(|h| {
                let text = String::from_utf8_lossy(h);
                text.chars().take(HEADERS_CHARS).collect::<String>().into()
            });
        Some(Preflight {
            key: crate::challenge::request_key(method, asked),
            method: String::from_utf8_lossy(method).into(),
            headers,
        })
    }
}

/// Whether a preflight's answer of `status` lets the request go (an ok
/// status; the headers' checks are the browser's, and a browser that
/// sends the request says they passed).
pub fn allows(status: u16) -> bool {
    (200..300).contains(&status)
}

/// The `Access-Control-Max-Age` a preflight's answer gave, in seconds
/// (`value`, an HTTP/1.x head's field or an HTTP/2 field's): `None`
/// without one, or for one that is not a number of seconds.
pub fn max_age_of(value: Option<&[u8]>) -> Option<u32> {
    let value = value?.trim_ascii();
    if value.is_empty() || value.len() > 10 || !value.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(value)
        .ok()?
        .parse::<u64>()
        .ok()
        .map(|s| s.min(u64::from(u32::MAX)) as u32)
}

/// A preflight and the answer that allowed its request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allowed {
    /// The `tcp.stream` that carried it.
    pub stream: u64,
    /// The preflight's first segment.
    pub request: Stamp,
    /// Its answer's first segment.
    pub answer: Stamp,
    /// The answer's status (200-299).
    pub status: u16,
    /// The answer's `Access-Control-Max-Age`, in seconds.
    pub max_age_s: Option<u32>,
    /// The preflight's name ("OPTIONS /items/1").
    pub request_label: Option<String>,
    /// The method it asked permission for.
    pub method: Box<str>,
    /// The headers it asked permission for.
    pub headers: Option<Box<str>>,
}

/// The preflight a request followed: what it learns of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FollowedPreflight {
    pub preflight: Allowed,
    /// The request it allowed: its first segment (an HTTP/2 request's,
    /// which need not have opened its turn).
    pub follow_up: Stamp,
}

/// A preflight's answer kept for the request it allowed.
pub(crate) struct Kept {
    key: u64,
    allowed: Allowed,
}

impl Answer for Kept {
    fn answered_ns(&self) -> i64 {
        self.allowed.answer.ts_ns
    }
}

/// The preflights answered lately whose requests have not come yet, per
/// client (follow_ups.rs).
pub(crate) type Preflights = FollowUps<Kept>;

impl FollowUps<Kept> {
    /// `client`'s preflight `p` (its first segment `request`, on `stream`)
    /// was answered `status` at `answer`, allowing its request for
    /// `max_age_s`.
    #[allow(clippy::too_many_arguments)]
    pub fn allowed(
        &mut self,
        client: IpAddr,
        p: Preflight,
        stream: u64,
        request: Stamp,
        answer: Stamp,
        status: u16,
        max_age_s: Option<u32>,
        request_label: Option<String>,
    ) {
        self.keep(
            client,
            Kept {
                key: p.key,
                allowed: Allowed {
                    stream,
                    request,
                    answer,
                    status,
                    max_age_s,
                    request_label,
                    method: p.method,
                    headers: p.headers,
                },
            },
        );
    }

    /// The preflight that allowed `client`'s request (its method and URL
    /// `key`, challenge.rs's; its first segment `request`), if one did:
    /// the newest for the same method and URL, answered before it began
    /// and at most [`FOLLOW_NS`] before. Followed once.
    pub fn follow(
        &mut self,
        client: IpAddr,
        key: u64,
        request: Stamp,
    ) -> Option<FollowedPreflight> {
        let kept = self.take_newest(client, |k| {
            let answer = k.allowed.answer;
            k.key == key
                && request.ts_ns >= answer.ts_ns
                && request.ts_ns - answer.ts_ns <= FOLLOW_NS
                && request.frame > answer.frame
        })?;
        Some(FollowedPreflight {
            preflight: kept.allowed,
            follow_up: request,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head_of(head: &str) -> (Option<Preflight>, u64) {
        let head = head.as_bytes();
        let line = crate::exchange::RequestLine::of(head).expect("a request line");
        let asked = crate::redirect::Asked::of_request(&line, head, false);
        let retry = crate::challenge::Retry::of_request(&line, head, asked.as_ref());
        (
            Preflight::of_request(&line, head, asked.as_ref()),
            retry.map_or(0, |r| r.key()),
        )
    }

    fn at(frame: u64, ms: i64) -> Stamp {
        Stamp {
            frame,
            ts_ns: ms * 1_000_000,
        }
    }

    const PREFLIGHT: &str = "OPTIONS /items/1 HTTP/1.1\r\nHost: api.example\r\n\
        Access-Control-Request-Method: PUT\r\n\
        Access-Control-Request-Headers: content-type,x-trace\r\n\
        Origin: http://page.example\r\n\r\n";

    #[test]
    fn a_preflight_asks_for_the_method_and_url_of_the_request_it_allows() {
        let (p, _) = head_of(PREFLIGHT);
        let p = p.expect("a preflight");
        assert_eq!(&*p.method, "PUT");
        assert_eq!(p.headers.as_deref(), Some("content-type,x-trace"));
        let (_, put) =
            head_of("PUT /items/1 HTTP/1.1\r\nHost: api.example\r\nContent-Length: 2\r\n\r\n{}");
        assert_eq!(p.key, put, "the request it allows");
        let (_, absolute) = head_of("PUT http://api.example/items/1 HTTP/1.1\r\n\r\n");
        assert_eq!(p.key, absolute, "origin form = absolute form");
        let (_, post) = head_of("POST /items/1 HTTP/1.1\r\nHost: api.example\r\n\r\n");
        assert_ne!(p.key, post, "another method");
        let (_, other) = head_of("PUT /items/2 HTTP/1.1\r\nHost: api.example\r\n\r\n");
        assert_ne!(p.key, other, "another URL");
        let asked = crate::redirect::Asked::of_h2(false, b"api.example", b"/items/1").unwrap();
        let h2 = Preflight::of_h2(b"OPTIONS", Some(b"PUT"), None, &asked).expect("HTTP/2's");
        assert_eq!((h2.key, h2.headers), (p.key, None));
    }

    #[test]
    fn an_options_request_without_its_fields_is_no_preflight() {
        for (head, why) in [
            ("OPTIONS /items/1 HTTP/1.1\r\nHost: api.example\r\n\r\n", "a plain OPTIONS"),
            (
                "OPTIONS * HTTP/1.1\r\nHost: api.example\r\nAccess-Control-Request-Method: PUT\r\n\r\n",
                "no URL",
            ),
            (
                "OPTIONS /a HTTP/1.1\r\nAccess-Control-Request-Method: PUT\r\n\r\n",
                "no host",
            ),
            (
                "GET /a HTTP/1.1\r\nHost: h\r\nAccess-Control-Request-Method: PUT\r\n\r\n",
                "not OPTIONS",
            ),
            (
                "OPTIONS /a HTTP/1.1\r\nHost: h\r\nAccess-Control-Request-Method: PU",
                "cut short",
            ),
            (
                "OPTIONS /a HTTP/1.1\r\nHost: h\r\nAccess-Control-Request-Method: \r\n\r\n",
                "no method",
            ),
        ] {
            assert_eq!(head_of(head).0, None, "{why}");
        }
        let asked = crate::redirect::Asked::of_h2(false, b"h", b"/a").unwrap();
        assert!(Preflight::of_h2(b"GET", Some(b"PUT"), None, &asked).is_none());
        assert!(Preflight::of_h2(b"OPTIONS", None, None, &asked).is_none());
    }

    #[test]
    fn only_an_ok_status_allows_and_a_max_age_is_whole_seconds() {
        assert!(allows(200) && allows(204) && allows(299));
        assert!(!allows(301) && !allows(403) && !allows(101));
        assert_eq!(max_age_of(Some(b" 600 ")), Some(600));
        assert_eq!(max_age_of(Some(b"0")), Some(0));
        assert_eq!(max_age_of(Some(b"99999999999")), None, "past any cap");
        assert_eq!(max_age_of(Some(b"-1")), None);
        assert_eq!(max_age_of(Some(b"1.5")), None);
        assert_eq!(max_age_of(None), None);
    }

    #[test]
    fn a_preflight_is_followed_once_by_its_request_soon_after_its_answer() {
        let client: IpAddr = "10.0.0.1".parse().unwrap();
        let (p, options) = head_of(PREFLIGHT);
        let (_, put) = head_of("PUT /items/1 HTTP/1.1\r\nHost: api.example\r\n\r\n");
        let mut kept = Preflights::default();
        kept.allowed(
            client,
            p.unwrap(),
            2,
            at(14, 0),
            at(16, 41),
            204,
            None,
            None,
        );
        let other: IpAddr = "10.0.0.2".parse().unwrap();
        assert!(
            kept.follow(other, put, at(18, 44)).is_none(),
            "another client"
        );
        assert!(
            kept.follow(client, options, at(18, 44)).is_none(),
            "another request: the preflight's own"
        );
        assert!(
            kept.follow(client, put, at(15, 30)).is_none(),
            "before the answer"
        );
        assert!(
            kept.follow(client, put, at(18, 2_042)).is_none(),
            "too late"
        );
        let f = kept.follow(client, put, at(18, 44)).expect("follows");
        assert_eq!(
            (f.preflight.request, f.preflight.answer),
            (at(14, 0), at(16, 41))
        );
        assert_eq!((f.preflight.stream, f.follow_up), (2, at(18, 44)));
        assert!(kept.follow(client, put, at(19, 45)).is_none(), "once");
        assert!(kept.is_empty());
    }
}
