//! HTTP authentication challenges a client answered: the request it sent
//! again with credentials (`http_auth_challenge` in rttdoc-diagnose).
//!
//! A server that answers `401` with a `WWW-Authenticate` challenge (a
//! proxy: `407` with `Proxy-Authenticate`, RFC 9110 11.6) has not
//! answered: the client reads the challenge, and only then sends the
//! same request again with `Authorization` (`Proxy-Authorization`). The
//! first request's round trip bought nothing but the challenge: a client
//! that waits to be asked before it sends a password it has (curl
//! `--anyauth`, .NET without `PreAuthenticate`, Java's `Authenticator`),
//! a Digest nonce asked for anew, an expired token. NTLM (and Negotiate
//! when it falls back to NTLM) takes two challenges: the first names the
//! scheme, the second answers the client's first message, and only the
//! third request, on the same connection, is served.
//!
//! The tracker notes each such answer, of HTTP/1.x or HTTP/2 in the clear
//! or read with a key log, when its request named what it asked for (its
//! method and URL, a `CONNECT`'s authority; HTTP/2's on its stream,
//! h2c.rs), under the client's address
//! (follow_ups.rs). A later request of the same client, on any
//! connection, for the same method and URL that carries the credentials
//! the challenge asked for follows it, if it began within [`FOLLOW_NS`]
//! of the answer (a password typed by a person comes later, and is not a
//! round trip's cost). A follow-up that is challenged again (NTLM's
//! second leg) hands its legs on to the request that follows it: the
//! request finally served holds them all, a rejected one none.

use std::hash::{Hash, Hasher};
use std::net::IpAddr;

use rttdoc_model::AuthScheme;

use crate::connection::Stamp;
use crate::follow_ups::{Answer, FollowUps, FOLLOW_NS};

/// Legs one request's challenges are followed through at most: NTLM's
/// two, a Digest nonce gone stale between them.
pub const MAX_LEGS: usize = 4;

/// The statuses that challenge a client for credentials: the server's
/// (`401 Unauthorized`) and a proxy's (`407 Proxy Authentication
/// Required`).
pub fn is_challenge_status(status: u16) -> bool {
    matches!(status, 401 | 407)
}

/// What an HTTP/1.x request asks (hashed) and the credentials it carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retry {
    key: u64,
    /// The scheme of its `Authorization`, if it has one.
    authorization: Option<AuthScheme>,
    /// The scheme of its `Proxy-Authorization`, if it has one.
    proxy_authorization: Option<AuthScheme>,
}

impl Retry {
    /// What the request head `head` (its request line `line`) asks
    /// (`asked`: the URL it names, redirect.rs), and with what
    /// credentials: `None` for a line not captured whole, or without the
    /// URL it asks for (a target in origin form needs a `Host`; a
    /// `CONNECT` asks for its authority).
    pub fn of_request(
        line: &crate::exchange::RequestLine<'_>,
        head: &[u8],
        asked: Option<&crate::redirect::Asked>,
    ) -> Option<Retry> {
        if !line.ended {
            return None;
        }
        let key = if line.method == b"CONNECT" {
            // (A tunnel asks for its authority, the same every time.)
            let mut hasher = rustc_hash::FxHasher::default();
            line.method.hash(&mut hasher);
            line.target?.hash(&mut hasher);
            hasher.finish()
        } else {
            request_key(line.method, asked?)
        };
        let (authorization, proxy_authorization) = credentials(head);
        Some(Retry {
            key,
            authorization,
            proxy_authorization,
        })
    }

    /// What an HTTP/2 request asks (its `:method`, and the URL its
    /// `:scheme`, `:authority` and `:path` name) and the credentials its
    /// `authorization` and `proxy-authorization` fields carry: known as
    /// the same request in HTTP/1.x is.
    pub fn of_h2(
        method: &[u8],
        asked: &crate::redirect::Asked,
        authorization: Option<&[u8]>,
        proxy_authorization: Option<&[u8]>,
    ) -> Retry {
        Retry {
            key: request_key(method, asked),
            authorization: authorization.and_then(|v| AuthScheme::of_value(v.trim_ascii())),
            proxy_authorization: proxy_authorization
                .and_then(|v| AuthScheme::of_value(v.trim_ascii())),
        }
    }

    /// What it asks, hashed: its method and URL (a `CONNECT`'s
    /// authority).
    pub fn key(&self) -> u64 {
        self.key
    }

    /// The credentials it carries for a challenge from a proxy (`proxy`)
    /// or from the server.
    fn credentials(&self, proxy: bool) -> Option<AuthScheme> {
        match proxy {
            true => self.proxy_authorization,
            false => self.authorization,
        }
    }
}

/// A request's method and the URL it asks for (`asked`), hashed: what
/// a challenge is kept under, and a CORS preflight (preflight.rs).
pub(crate) fn request_key(method: &[u8], asked: &crate::redirect::Asked) -> u64 {
    let mut hasher = rustc_hash::FxHasher::default();
    method.hash(&mut hasher);
    asked.url().hash(&mut hasher);
    hasher.finish()
}

/// The schemes of a request head's `Authorization` and
/// `Proxy-Authorization` fields (`head` starts with its request line),
/// when their lines end within the captured bytes (a value cut short is
/// not the value). Found by a search for their names' common tail, not by
/// walking the head's lines: every request's head is read for them,
/// whether or not a challenge is kept.
fn credentials(head: &[u8]) -> (Option<AuthScheme>, Option<AuthScheme>) {
    use std::sync::LazyLock;
    // (Built once: a searcher's set-up costs more than a head's search.)
    static NAME_TAILS: LazyLock<[memchr::memmem::Finder<'static>; 2]> = LazyLock::new(|| {
        [
            memchr::memmem::Finder::new(b"uthorization:"),
            memchr::memmem::Finder::new(b"UTHORIZATION:"),
        ]
    });
    let mut found = (None, None);
    // (The fields end at the blank line, looked for only when a name was
    // found: most heads carry none.)
    let mut fields_end = None;
    for finder in NAME_TAILS.iter() {
        for at in finder.find_iter(head) {
            if at == 0 || !head[at - 1].eq_ignore_ascii_case(&b'a') {
                continue;
            }
            let name = at - 1;
            let proxy = name >= 6 && head[name - 6..name].eq_ignore_ascii_case(b"proxy-");
            let line = if proxy { name - 6 } else { name };
            // (Its name begins a line, and not the request line.)
            if line == 0 || head[line - 1] != b'\n' {
                continue;
            }
            let end = *fields_end.get_or_insert_with(|| {
                [&b"\n\r\n"[..], b"\n\n"]
                    .iter()
                    .filter_map(|blank| memchr::memmem::find(head, blank))
                    .min()
                    .unwrap_or(head.len())
            });
            if line > end {
                continue;
            }
            let value = &head[at + finder.needle().len()..];
            let Some(value_end) = memchr::memchr(b'\n', value) else {
                continue;
            };
            let scheme = AuthScheme::of_value(value[..value_end].trim_ascii());
            match proxy {
                true => found.1 = scheme,
                false => found.0 = scheme,
            }
        }
    }
    found
}

/// A challenge a response head made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Challenge {
    /// A proxy's (`407`).
    pub proxy: bool,
    /// The scheme of its first challenge.
    pub offered: AuthScheme,
}

impl Challenge {
    /// The challenge of a `401` or `407` response head (`head`: its first
    /// captured bytes): `None` for another status, or without its
    /// challenge header (a 401 that asks for nothing cannot be answered).
    pub fn of_response(head: &[u8], status: u16) -> Option<Challenge> {
        // (of_value refuses other statuses.)
        let field: &[u8] = match status {
            407 => b"proxy-authenticate",
            _ => b"www-authenticate",
        };
        Challenge::of_value(status, crate::exchange::header_value(head, field)?)
    }

    /// The challenge a `401`'s `WWW-Authenticate` (a `407`'s
    /// `Proxy-Authenticate`) field `value` makes.
    pub fn of_value(status: u16, value: &[u8]) -> Option<Challenge> {
        let proxy = match status {
            401 => false,
            407 => true,
            _ => return None,
        };
        let offered = AuthScheme::of_value(value)?;
        Some(Challenge { proxy, offered })
    }
}

/// A request that was challenged, and the challenge that answered it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Leg {
    /// The `tcp.stream` that carried it.
    pub stream: u64,
    /// The request's first segment.
    pub request: Stamp,
    /// The challenge's first segment.
    pub answer: Stamp,
    /// The challenge's status (401, 407).
    pub status: u16,
}

/// The challenges a request followed: what it learns of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FollowedChallenge {
    /// The requests challenged before this one, in order (at most
    /// [`MAX_LEGS`]): each challenged, each but the first sent in answer
    /// to the one before.
    pub legs: Vec<Leg>,
    /// The first challenged request's name ("GET /report").
    pub request_label: Option<String>,
    /// The scheme the last challenge offered first.
    pub offered: AuthScheme,
    /// The scheme of the credentials this request sent.
    pub answered_with: Option<AuthScheme>,
    /// The challenges were a proxy's (`407`).
    pub proxy: bool,
    /// The request that followed them: its first segment (an HTTP/2
    /// request's, which need not have opened its turn).
    pub follow_up: Stamp,
}

/// A challenge kept for the request that answers it.
pub(crate) struct Kept {
    key: u64,
    challenge: Challenge,
    legs: Vec<Leg>,
    request_label: Option<String>,
}

impl Answer for Kept {
    fn answered_ns(&self) -> i64 {
        self.legs.last().map_or(i64::MIN, |l| l.answer.ts_ns)
    }
}

/// The challenges answered lately that no request has followed yet, per
/// client (follow_ups.rs).
pub(crate) type Challenges = FollowUps<Kept>;

impl FollowUps<Kept> {
    /// `client`'s request (`retry`, its `leg`) was answered by
    /// `challenge`; `before` are the challenges the request itself
    /// followed (NTLM's first leg, when this is its second).
    pub fn challenged(
        &mut self,
        client: IpAddr,
        retry: &Retry,
        challenge: Challenge,
        leg: Leg,
        request_label: Option<String>,
        before: Option<FollowedChallenge>,
    ) {
        let (mut legs, request_label) = match before {
            Some(b) if b.proxy == challenge.proxy && b.legs.len() < MAX_LEGS => {
                (b.legs, b.request_label)
            }
            _ => (Vec::with_capacity(2), request_label),
        };
        legs.push(leg);
        self.keep(
            client,
            Kept {
                key: retry.key,
                challenge,
                legs,
                request_label,
            },
        );
    }

    /// The challenge that `client`'s request (`retry`, its first segment
    /// `request`) answers, if it does: the newest for the same request,
    /// answered before it began and at most [`FOLLOW_NS`] before, whose
    /// credentials it carries. Followed once.
    pub fn follow(
        &mut self,
        client: IpAddr,
        retry: &Retry,
        request: Stamp,
    ) -> Option<FollowedChallenge> {
        let kept = self.take_newest(client, |k| {
            let answer = k.answered_ns();
            k.key == retry.key
                && retry.credentials(k.challenge.proxy).is_some()
                && request.ts_ns >= answer
                && request.ts_ns - answer <= FOLLOW_NS
                && request.frame > k.legs.last().map_or(0, |l| l.answer.frame)
        })?;
        Some(FollowedChallenge {
            answered_with: retry.credentials(kept.challenge.proxy),
            legs: kept.legs,
            request_label: kept.request_label,
            offered: kept.challenge.offered,
            proxy: kept.challenge.proxy,
            follow_up: request,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn retry(head: &str) -> Retry {
        let head = head.as_bytes();
        let line = crate::exchange::RequestLine::of(head).expect("a request line");
        let asked = crate::redirect::Asked::of_request(&line, head, false);
        Retry::of_request(&line, head, asked.as_ref()).expect("a request")
    }

    fn at(frame: u64, ms: i64) -> Stamp {
        Stamp {
            frame,
            ts_ns: ms * 1_000_000,
        }
    }

    fn leg(request: Stamp, answer: Stamp) -> Leg {
        Leg {
            stream: 0,
            request,
            answer,
            status: 401,
        }
    }

    const BASIC: Challenge = Challenge {
        proxy: false,
        offered: AuthScheme::Basic,
    };

    #[test]
    fn a_request_is_known_by_its_method_and_url_and_carries_its_credentials() {
        let bare = retry("GET /a HTTP/1.1\r\nHost: example.com\r\n\r\n");
        let again = retry(
            "GET http://example.com/a HTTP/1.1\r\nHost: example.com\r\nAuthorization: Basic dTpw\r\n\r\n",
        );
        assert_eq!(bare.key, again.key, "origin form = absolute form");
        assert_eq!(bare.authorization, None);
        assert_eq!(again.authorization, Some(AuthScheme::Basic));
        let post = retry("POST /a HTTP/1.1\r\nHost: example.com\r\n\r\n");
        assert_ne!(bare.key, post.key, "the method is part of the request");
        let other = retry("GET /b HTTP/1.1\r\nHost: example.com\r\n\r\n");
        assert_ne!(bare.key, other.key);
        let tunnel = retry(
            "CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\nProxy-Authorization: NTLM TlRM\r\n\r\n",
        );
        assert_eq!(tunnel.proxy_authorization, Some(AuthScheme::Ntlm));
        assert_eq!(tunnel.authorization, None);
        assert_ne!(tunnel.key, retry("CONNECT b:443 HTTP/1.1\r\n\r\n").key);
        // (A header cut short by the capture carries nothing.)
        let cut = retry("GET /a HTTP/1.1\r\nHost: example.com\r\nAuthorization: Basic dT");
        assert_eq!(cut.authorization, None);
        let line = crate::exchange::RequestLine::of(b"GET /a HTTP/1.1\r\n\r\n").unwrap();
        assert!(Retry::of_request(&line, b"GET /a HTTP/1.1\r\n\r\n", None).is_none());
        // HTTP/2's request for the same URL is the same request.
        let asked = crate::redirect::Asked::of_h2(false, b"example.com", b"/a").unwrap();
        let h2 = Retry::of_h2(b"GET", &asked, Some(b"Basic dTpw"), None);
        assert_eq!((h2.key, h2.authorization), (again.key, again.authorization));
        assert_ne!(Retry::of_h2(b"POST", &asked, None, None).key, bare.key);
    }

    #[test]
    fn credentials_are_fields_of_the_head_whatever_their_names_case() {
        let of = |head: &str| credentials(head.as_bytes());
        use AuthScheme::*;
        assert_eq!(
            of("GET / HTTP/1.1\r\nHost: h\r\nauthorization: Bearer t\r\n\r\n"),
            (Some(Bearer), None)
        );
        assert_eq!(
            of("GET / HTTP/1.1\r\nPROXY-AUTHORIZATION: Basic x\r\nAuthorization:NTLM y\r\n\r\n"),
            (Some(Ntlm), Some(Basic))
        );
        assert_eq!(
            of("GET / HTTP/1.1\nHost: h\nAuthorization: Digest u\n\n"),
            (Some(Digest), None),
            "bare line feeds"
        );
        for (head, why) in [
            (
                "GET / HTTP/1.1\r\nX-Authorization: Basic x\r\n\r\n",
                "another field",
            ),
            (
                "GET / HTTP/1.1\r\nX-Proxy-Authorization: Basic x\r\n\r\n",
                "another field",
            ),
            (
                "POST / HTTP/1.1\r\nHost: h\r\n\r\nAuthorization: Basic x\r\n",
                "the body",
            ),
            ("GET /?Authorization: HTTP/1.1\r\n\r\n", "the request line"),
            ("GET / HTTP/1.1\r\nAuthorization: Basic x", "cut short"),
            ("GET / HTTP/1.1\r\nAuthorization: \r\n\r\n", "no scheme"),
        ] {
            assert_eq!(of(head), (None, None), "{why}");
        }
    }

    #[test]
    fn a_challenge_names_its_scheme_or_is_none() {
        let of = |head: &str, status| Challenge::of_response(head.as_bytes(), status);
        assert_eq!(
            of("HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Negotiate\r\nWWW-Authenticate: NTLM\r\n\r\n", 401),
            Some(Challenge { proxy: false, offered: AuthScheme::Negotiate })
        );
        assert_eq!(
            of("HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"p\"\r\n\r\n", 407),
            Some(Challenge { proxy: true, offered: AuthScheme::Basic })
        );
        assert_eq!(
            of(
                "HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n",
                401
            ),
            None,
            "nothing to answer"
        );
        assert_eq!(
            of(
                "HTTP/1.1 407 Proxy Authentication Required\r\nWWW-Authenticate: Basic\r\n\r\n",
                407
            ),
            None,
            "a proxy challenges with its own header"
        );
        assert_eq!(
            of(
                "HTTP/1.1 403 Forbidden\r\nWWW-Authenticate: Basic\r\n\r\n",
                403
            ),
            None
        );
    }

    #[test]
    fn a_challenge_is_followed_once_by_the_same_request_with_credentials_soon_after() {
        let client: IpAddr = "10.0.0.1".parse().unwrap();
        let bare = retry("GET /a HTTP/1.1\r\nHost: h\r\n\r\n");
        let with = retry("GET /a HTTP/1.1\r\nHost: h\r\nAuthorization: Basic dTpw\r\n\r\n");
        let proxied =
            retry("GET /a HTTP/1.1\r\nHost: h\r\nProxy-Authorization: Basic dTpw\r\n\r\n");
        let mut c = Challenges::default();
        c.challenged(client, &bare, BASIC, leg(at(1, 0), at(2, 100)), None, None);
        let other: IpAddr = "10.0.0.2".parse().unwrap();
        assert!(
            c.follow(other, &with, at(3, 110)).is_none(),
            "another client"
        );
        assert!(
            c.follow(client, &bare, at(3, 110)).is_none(),
            "no credentials"
        );
        assert!(
            c.follow(client, &proxied, at(3, 110)).is_none(),
            "a proxy's credentials"
        );
        assert!(c.follow(client, &with, at(3, 2_101)).is_none(), "too late");
        let f = c.follow(client, &with, at(3, 110)).expect("follows");
        assert_eq!(f.legs, vec![leg(at(1, 0), at(2, 100))]);
        assert_eq!(f.answered_with, Some(AuthScheme::Basic));
        assert!(c.follow(client, &with, at(4, 120)).is_none(), "once");
        assert!(c.is_empty());
    }

    #[test]
    fn a_second_challenge_hands_its_legs_on_and_a_rejected_request_keeps_them() {
        let client: IpAddr = "10.0.0.1".parse().unwrap();
        let ntlm = Challenge {
            proxy: false,
            offered: AuthScheme::Ntlm,
        };
        let bare = retry("GET /a HTTP/1.1\r\nHost: h\r\n\r\n");
        let with = retry("GET /a HTTP/1.1\r\nHost: h\r\nAuthorization: NTLM TlRM\r\n\r\n");
        let mut c = Challenges::default();
        c.challenged(
            client,
            &bare,
            ntlm,
            leg(at(1, 0), at(2, 100)),
            Some("GET /a".into()),
            None,
        );
        let first = c.follow(client, &with, at(3, 101)).expect("leg 1");
        c.challenged(
            client,
            &with,
            ntlm,
            leg(at(3, 101), at(4, 201)),
            None,
            Some(first),
        );
        let last = c.follow(client, &with, at(5, 202)).expect("leg 2");
        assert_eq!(last.legs.len(), 2);
        assert_eq!(last.legs[0].request, at(1, 0));
        assert_eq!(last.legs[1].answer, at(4, 201));
        assert_eq!(
            last.request_label.as_deref(),
            Some("GET /a"),
            "the first request's"
        );
        assert_eq!(last.answered_with, Some(AuthScheme::Ntlm));
    }
}
