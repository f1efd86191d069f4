//! HTTP redirects a client followed: the request a 3xx answer sent it on
//! to (`http_redirect` in rttdoc-diagnose).
//!
//! A server that answers `301`, `302`, `303`, `307` or `308` with a
//! `Location` (RFC 9110 15.4) has not answered: the client reads the
//! status line, and only then asks again, where the `Location` says. The
//! round trip (and, for another origin, a new connection's set-up) is the
//! redirect's price: `http://` to `https://`, a missing trailing slash,
//! a bare domain to `www.`, a tracker's hop.
//!
//! The tracker notes each such answer, of HTTP/1.x or HTTP/2 in the clear
//! or read with a key log, when its request named what it asked for (an
//! HTTP/1.x head its `Host` header or an absolute target; HTTP/2 its
//! stream's `:scheme`, `:authority` and `:path`, h2c.rs): the `Location`
//! resolved against that URL, kept as hashes of its origin (scheme, host
//! in lower case, port) and of the whole URL without its fragment, under
//! the client's address. A later request of the same client (on any
//! connection) for exactly that URL follows it; so does a TLS connection
//! whose ClientHello asks for the `Location`'s host on its port (or,
//! asking no name, that connects to the address the `Location` names),
//! opened after the answer (what its request asks is encrypted: the
//! origin is all there is). The first to come takes it, if it came within
//! [`FOLLOW_NS`] of the answer: a client follows a redirect the moment it
//! has read the status line (a browser, curl `-L`, every HTTP library);
//! a request for the same URL later is somebody's next visit.
//!
//! Kept as follow_ups.rs keeps answers (per client, for [`FOLLOW_NS`]).
//! Comparing hashes needs no copy of a request's URL; a `Location` is kept
//! as text (its first [`LOCATION_CHARS`] characters) only to be shown.

use std::net::IpAddr;

use crate::connection::Stamp;

use crate::follow_ups::FOLLOW_NS;
use crate::follow_ups::{Answer, FollowUps};

/// Characters of a `Location` kept to be shown.
const LOCATION_CHARS: usize = 200;

/// The 3xx statuses that send a client elsewhere with a `Location`: 304
/// (Not Modified) answers, 305 and 306 are retired, 300's choice is the
/// user's.
pub fn is_redirect_status(status: u16) -> bool {
    matches!(status, 301 | 302 | 303 | 307 | 308)
}

/// 64-bit FNV-1a, fed piecewise: the state after a URL's origin or
/// directory goes on with a `Location`'s path without the text of either.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct UrlHash(u64);

impl UrlHash {
    const START: UrlHash = UrlHash(0xcbf2_9ce4_8422_2325);

    fn feed(self, bytes: &[u8]) -> UrlHash {
        let mut h = self.0;
        for &b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        UrlHash(h)
    }

    fn feed_lower(self, bytes: &[u8]) -> UrlHash {
        let mut h = self;
        for &b in bytes {
            h = h.feed(&[b.to_ascii_lowercase()]);
        }
        h
    }

    /// The origin's hash: scheme, host (lower case), port (always
    /// written: `http://a` and `http://a:80` are one origin).
    fn origin(https: bool, host: &[u8], port: u16) -> UrlHash {
        let scheme: &[u8] = if https { b"https://" } else { b"http://" };
        // (The port's digits, without a String per request.)
        let mut digits = [0u8; 5];
        let mut at = digits.len();
        let mut rest = port;
        loop {
            at -= 1;
            digits[at] = b'0' + (rest % 10) as u8;
            rest /= 10;
            if rest == 0 {
                break;
            }
        }
        UrlHash::START
            .feed(scheme)
            .feed_lower(host)
            .feed(b":")
            .feed(&digits[at..])
    }
}

/// What an HTTP/1.x request asked for, hashed: its origin, its URL, and
/// the directory a relative `Location` is resolved in; and the page that
/// asked for it (its `Referer`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Asked {
    https: bool,
    origin: UrlHash,
    url: UrlHash,
    /// The origin and the path up to its last `/`.
    directory: UrlHash,
    /// Its `Referer`'s URL, hashed as a URL asked for is (0: none).
    referer_url: u64,
    /// It was another site's: its `Referer` names a page of a site other
    /// than its host's ([`site_of`]), and it asked for no page (its
    /// `Sec-Fetch-Dest`, else its `Accept`, names no document): an
    /// image, script or frame a page loads from another site, an ad's or
    /// an analytics tag's.
    third_party: bool,
}

impl Asked {
    /// The URL the HTTP/1.x request head `head` (its request line
    /// `line`) asks for, on a connection inside TLS (`https`) or not: its
    /// target in absolute form (a forward proxy's request), or in origin
    /// form with its `Host` header. `None` for a line not captured whole,
    /// a `CONNECT`, or a head without a host.
    pub fn of_request(
        line: &crate::exchange::RequestLine<'_>,
        head: &[u8],
        https: bool,
    ) -> Option<Asked> {
        if !line.ended || line.method == b"CONNECT" {
            return None;
        }
        let target = line.target?;
        if !target.starts_with(b"/") {
            // (A forward proxy's request names the whole URL.)
            return Absolute::parse(target).map(|a| a.asked());
        }
        let host = crate::exchange::header_value(head, b"host")?;
        let (host, port) = split_port(host, https)?;
        let mut asked = Asked::at(https, UrlHash::origin(https, host, port), target);
        if let Some(referer) = crate::exchange::header_value(head, b"referer")
            .and_then(|r| Absolute::parse(without_fragment(r)))
        {
            asked.referer_url = referer.asked().url.0;
            asked.third_party = !site_of(referer.host).eq_ignore_ascii_case(site_of(host))
                && !asks_for_a_page(head);
        }
        Some(asked)
    }

    /// The URL an HTTP/2 request asks for, from its header block's
    /// `:authority` (or `Host`) and `:path` (RFC 9113 8.3.1), its scheme
    /// from `:scheme`. `None` for a path not in origin form (`*`).
    pub fn of_h2(https: bool, authority: &[u8], path: &[u8]) -> Option<Asked> {
        if !path.starts_with(b"/") {
            return None;
        }
        let (host, port) = split_port(authority, https)?;
        Some(Asked::at(https, UrlHash::origin(https, host, port), path))
    }

    fn at(https: bool, origin: UrlHash, path: &[u8]) -> Asked {
        let path = without_fragment(path);
        let query = path.iter().position(|&b| b == b'?').unwrap_or(path.len());
        let dir_end = path[..query]
            .iter()
            .rposition(|&b| b == b'/')
            .map_or(0, |i| i + 1);
        // (The URL's hash goes on from the directory's.)
        let directory = origin.feed(&path[..dir_end]);
        Asked {
            https,
            origin,
            url: directory.feed(&path[dir_end..]),
            directory,
            referer_url: 0,
            third_party: false,
        }
    }

    /// Its origin's hash (scheme, host, port): a connection's, for
    /// reuse.rs (an HTTP/1.1 client keeps its connections per origin).
    pub(crate) fn origin_hash(&self) -> u64 {
        self.origin.0
    }

    /// The hash of the origin a TLS connection asked for by its server
    /// name, on `port`: all a connection whose requests are encrypted
    /// shows of its first request.
    pub fn origin_of_server_name(name: &str, port: u16) -> u64 {
        UrlHash::origin(true, name.as_bytes(), port).0
    }

    /// The hash of the plain-HTTP origin of `host` on `port` (a name the
    /// client looked up before connecting, where no request shows it).
    pub fn origin_of_host(host: &str, port: u16) -> u64 {
        UrlHash::origin(false, host.as_bytes(), port).0
    }

    pub fn url(&self) -> u64 {
        self.url.0
    }
}

/// The site a host belongs to, as a browser's cookies and `Referer`
/// policy see it: its registrable domain, the last two labels, or three
/// under a country's second level (`ynet.co.il`, `bbc.co.uk`); an
/// address is its own. (Public-suffix rules beyond these are not kept:
/// two hosts under one such suffix may count as one site.)
fn site_of(host: &[u8]) -> &[u8] {
    let host = host.strip_suffix(b".").unwrap_or(host);
    if host.starts_with(b"[") || host.iter().all(|b| b.is_ascii_digit() || *b == b'.') {
        return host;
    }
    let (two, top) = (last_labels(host, 2), last_labels(host, 1));
    let second = &two[..two.len().saturating_sub(top.len() + 1)];
    let country_second_level = two.len() < host.len()
        && top.len() == 2
        && [
            &b"co"[..],
            b"com",
            b"net",
            b"org",
            b"ac",
            b"gov",
            b"edu",
            b"ne",
            b"or",
            b"go",
        ]
        .iter()
        .any(|l| second.eq_ignore_ascii_case(l));
    if country_second_level {
        last_labels(host, 3)
    } else {
        two
    }
}

/// The last `k` labels of `host` (all of it, with fewer).
fn last_labels(host: &[u8], k: usize) -> &[u8] {
    let mut end = host.len();
    for _ in 0..k {
        match host[..end].iter().rposition(|&b| b == b'.') {
            Some(dot) => end = dot,
            None => return host,
        }
    }
    &host[end + 1..]
}

/// Whether a request head asks for a page to show: its
/// `Sec-Fetch-Dest` says `document`, or, without one, its `Accept`
/// names `text/html` (a browser's navigation; an image's or a script's
/// does not). A head with neither may be anything, and counts as one.
fn asks_for_a_page(head: &[u8]) -> bool {
    if let Some(dest) = crate::exchange::header_value(head, b"sec-fetch-dest") {
        return dest.trim_ascii().eq_ignore_ascii_case(b"document");
    }
    crate::exchange::header_value(head, b"accept").is_none_or(|accept| {
        accept
            .to_ascii_lowercase()
            .windows(9)
            .any(|w| w == b"text/html")
    })
}

/// A `Location` resolved against the URL its request asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// As the server wrote it (its first [`LOCATION_CHARS`] characters).
    pub text: Box<str>,
    origin: u64,
    url: u64,
    /// It names the request's own origin (a path's redirect: a trailing
    /// slash, a moved page), which the connection already open serves.
    pub same_origin: bool,
    /// It sends a request made in the clear to `https://`.
    pub to_https: bool,
    /// The answer set a cookie whose value the `Location` carries: a
    /// check minted for this visitor (an analytics counter's cookie test,
    /// a consent or session check), no moved page: a visit with the
    /// cookie skips it, and no link or cache can (PcapPlusPlus's
    /// many-protocols.pcap 92, judged in session 83).
    pub per_visitor: bool,
    /// The answer said it may not be kept (`Cache-Control` with
    /// `no-store`, `no-cache` or `max-age=0`): a `301` or `308` that
    /// browsers would keep is asked for again on every visit
    /// (PcapPlusPlus's example.pcap 0, judged in session 83).
    pub uncacheable: bool,
    /// It sends the client back to the page that asked (its request's
    /// `Referer`): a loop through that page, which loads a URL
    /// redirecting to itself (PcapPlusPlus's http-packets2.pcap 6: a
    /// frame on www.bowlsbybruno.com loading wix.com, sent back there).
    pub back_to_referrer: bool,
    /// Its request was another site's ([`Asked`]'s `third_party`): the
    /// redirect is that service's own, which no link of the page's can
    /// skip (many-protocols.pcap 52 and 61: an ad tag's conversion
    /// chain, doubleclick.net to google.com to google.co.il, loaded by
    /// ynet.co.il).
    pub third_party: bool,
    /// Its request carried a `Referer`: a link or a page's resource led
    /// there. Without one the URL was typed or bookmarked, or a program
    /// asked (wget, curl, an app): no link to update.
    pub referred: bool,
}

/// Whether the value of a `Set-Cookie` field (`name=value;
/// attributes`), or a token in it long enough to be an identifier (8
/// letters, digits, `-` or `_` or more), appears in `location`. (Values
/// wrap their identifier: Adobe's `s_vi=[CS]v1|2A53F49B0530BBA9-600003002005293E[CE]`
/// with `vidn=2A53F49B0530BBA9-600003002005293E` in its Location,
/// many-protocols.pcap 93.)
fn cookie_in(set_cookie: &[u8], location: &[u8]) -> bool {
    let pair = set_cookie.split(|&b| b == b';').next().unwrap_or_default();
    let Some(eq) = pair.iter().position(|&b| b == b'=') else {
        return false;
    };
    let value = pair[eq + 1..].trim_ascii();
    let carried = |v: &[u8]| v.len() >= 8 && location.windows(v.len()).any(|w| w == v);
    carried(value)
        || value
            .split(|b| !(b.is_ascii_alphanumeric() || *b == b'-' || *b == b'_'))
            .any(carried)
}

/// A `Cache-Control` value that forbids keeping the answer as it is.
fn forbids_keeping(cache_control: &[u8]) -> bool {
    cache_control.split(|&b| b == b',').any(|d| {
        let d = d.trim_ascii().to_ascii_lowercase();
        d == b"no-store" || d == b"no-cache" || d == b"max-age=0"
    })
}

impl Location {
    /// The `Location` of a response head (`head`: its first captured
    /// bytes), resolved against `asked` (RFC 3986 5.2: absolute,
    /// scheme-relative, absolute-path and relative-path references; one
    /// with dot segments or only a query is not resolved, and gives
    /// `None`, as does a scheme other than HTTP's).
    pub fn of_response(head: &[u8], asked: &Asked) -> Option<Location> {
        let value = crate::exchange::header_value(head, b"location")?;
        let mut location = Location::of_value(value, asked)?;
        location.per_visitor = crate::exchange::header_fields(head)
            .filter(|(name, _, _)| name.eq_ignore_ascii_case(b"set-cookie"))
            .any(|(_, cookie, _)| cookie_in(cookie, value));
        location.uncacheable =
            crate::exchange::header_value(head, b"cache-control").is_some_and(forbids_keeping);
        Some(location)
    }

    /// A `Location` field's value (an HTTP/1.x head's, an HTTP/2 header
    /// block's `location`) resolved against `asked`, as
    /// [`Location::of_response`].
    pub fn of_value(value: &[u8], asked: &Asked) -> Option<Location> {
        let value = without_fragment(value);
        if value.is_empty() || value.starts_with(b"?") || has_dot_segment(value) {
            return None;
        }
        let (origin, url, https) = if has_scheme(value) {
            let a = Absolute::parse(value)?.asked();
            (a.origin, a.url, a.https)
        } else if let Some(rest) = value.strip_prefix(b"//") {
            let scheme: &[u8] = if asked.https { b"https://" } else { b"http://" };
            let mut full = scheme.to_vec();
            full.extend_from_slice(rest);
            let a = Absolute::parse(&full)?.asked();
            (a.origin, a.url, a.https)
        } else if value.starts_with(b"/") {
            (asked.origin, asked.origin.feed(value), asked.https)
        } else {
            (asked.origin, asked.directory.feed(value), asked.https)
        };
        let text = String::from_utf8_lossy(value);
        Some(Location {
            text: text.chars().take(LOCATION_CHARS).collect::<String>().into(),
            origin: origin.0,
            url: url.0,
            same_origin: origin == asked.origin,
            to_https: https && !asked.https,
            per_visitor: false,
            uncacheable: false,
            back_to_referrer: asked.referer_url != 0 && url.0 == asked.referer_url,
            third_party: asked.third_party,
            referred: asked.referer_url != 0,
        })
    }
}

/// A URL in absolute form: `http://host[:port]/path?query`.
struct Absolute<'a> {
    https: bool,
    host: &'a [u8],
    port: u16,
    path: &'a [u8],
}

impl<'a> Absolute<'a> {
    fn parse(url: &'a [u8]) -> Option<Absolute<'a>> {
        let colon = url.iter().position(|&b| b == b':')?;
        let https = match url[..colon].to_ascii_lowercase().as_slice() {
            b"http" => false,
            b"https" => true,
            _ => return None,
        };
        let rest = url[colon..].strip_prefix(b"://")?;
        let authority_end = rest
            .iter()
            .position(|&b| b == b'/' || b == b'?')
            .unwrap_or(rest.len());
        let authority = &rest[..authority_end];
        // (Credentials before an `@` are no part of the origin.)
        let authority = match authority.iter().rposition(|&b| b == b'@') {
            Some(at) => &authority[at + 1..],
            None => authority,
        };
        let (host, port) = split_port(authority, https)?;
        Some(Absolute {
            https,
            host,
            port,
            path: &rest[authority_end..],
        })
    }

    fn asked(&self) -> Asked {
        let origin = UrlHash::origin(self.https, self.host, self.port);
        // (`http://a` and `http://a?q` ask for the root.)
        if self.path.starts_with(b"/") {
            Asked::at(self.https, origin, self.path)
        } else {
            let mut path = b"/".to_vec();
            path.extend_from_slice(self.path);
            Asked::at(self.https, origin, &path)
        }
    }
}

/// A host and its port (the scheme's when none is written); a bracketed
/// IPv6 literal keeps its brackets.
fn split_port(authority: &[u8], https: bool) -> Option<(&[u8], u16)> {
    let default = if https { 443 } else { 80 };
    let port_colon = match authority.iter().rposition(|&b| b == b':') {
        // (The colons of `[::1]` are inside its brackets.)
        Some(i) if !authority[i..].contains(&b']') => Some(i),
        _ => None,
    };
    let (host, port) = match port_colon {
        Some(i) if i + 1 == authority.len() => (&authority[..i], default),
        Some(i) => (
            &authority[..i],
            std::str::from_utf8(&authority[i + 1..])
                .ok()?
                .parse()
                .ok()?,
        ),
        None => (authority, default),
    };
    // (A DNS name's trailing dot names the same host.)
    let host = host.strip_suffix(b".").unwrap_or(host);
    (!host.is_empty()).then_some((host, port))
}

/// A reference that starts with a scheme (RFC 3986 3.1: a letter, then
/// letters, digits, `+`, `-` or `.`, then `:`): absolute, whatever the
/// scheme.
fn has_scheme(reference: &[u8]) -> bool {
    let Some(colon) = reference.iter().position(|&b| b == b':') else {
        return false;
    };
    let scheme = &reference[..colon];
    scheme.first().is_some_and(u8::is_ascii_alphabetic)
        && scheme
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || b == b'+' || b == b'-' || b == b'.')
}

fn without_fragment(s: &[u8]) -> &[u8] {
    match s.iter().position(|&b| b == b'#') {
        Some(i) => &s[..i],
        None => s,
    }
}

/// `.` or `..` as a segment of a reference's path: resolving it needs
/// RFC 3986's dot removal, which servers do not make clients do.
fn has_dot_segment(reference: &[u8]) -> bool {
    let path_end = reference
        .iter()
        .position(|&b| b == b'?')
        .unwrap_or(reference.len());
    reference[..path_end]
        .split(|&b| b == b'/')
        .any(|s| s == b"." || s == b"..")
}

/// A 3xx answer that sent its client elsewhere: what a request that
/// follows it learns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FollowedRedirect {
    /// The redirect, as its own connection saw it.
    pub answered: Answered,
    /// The `Location` as the server wrote it.
    pub location: Box<str>,
    /// The `Location` named the request's own origin.
    pub same_origin: bool,
    /// It sent a request made in the clear to `https://`.
    pub to_https: bool,
    /// It set a cookie whose value its `Location` carries
    /// ([`Location::per_visitor`]).
    pub per_visitor: bool,
    /// It said it may not be kept ([`Location::uncacheable`]).
    pub uncacheable: bool,
    /// It sent the client back to the page that asked
    /// ([`Location::back_to_referrer`]).
    pub back_to_referrer: bool,
    /// Its request was another site's ([`Location::third_party`]).
    pub third_party: bool,
    /// Its request carried a `Referer` ([`Location::referred`]).
    pub referred: bool,
    /// When the follow-up began: its connection's name lookup or SYN,
    /// when it opened one after the answer; else its request's first
    /// segment.
    pub began: Stamp,
    /// The follow-up was known by its whole URL; else by the origin its
    /// TLS ClientHello asked for (its request encrypted).
    pub by_url: bool,
    /// The follow-up request's first segment (an HTTP/2 request's, which
    /// need not have opened its turn: the exchange's first request may be
    /// another stream's).
    pub follow_up: Stamp,
    /// How many redirects to the same URL the client had followed lately
    /// (follow_ups.rs keeps the last 10 s, 16 per client): sent there
    /// again and again, it went round a loop.
    pub followed_before: u32,
}

/// A 3xx answer as its own connection saw it (track.rs): what a request
/// that follows it learns, with its `Location`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answered {
    /// The `tcp.stream` that carried the redirect.
    pub stream: u64,
    /// Its request's first segment.
    pub request: Stamp,
    /// Its connection's SYN, when the request was the first its
    /// connection carried and left as soon as the set-up let it: the
    /// connection was opened for it (a preconnected one was not).
    pub opened_for_it: Option<Stamp>,
    /// The 3xx answer's first segment.
    pub answer: Stamp,
    /// Its status.
    pub status: u16,
    /// Its request's name ("GET /docs").
    pub request_label: Option<String>,
    /// Of the time from the request's last segment to the answer, what
    /// the server's side of the path (its fastest answer from the capture
    /// point, the SYN's included) does not hold: the server's own work on
    /// the request, 0 when unknown. A request that had work to do (a
    /// login, a logout, a form) had it done however it was answered, and
    /// a slow one is the server's think time, not the redirect's.
    pub server_ns: i64,
}

pub(crate) struct Kept {
    location: Location,
    answered: Answered,
}

impl Answer for Kept {
    fn answered_ns(&self) -> i64 {
        self.answered.answer.ts_ns
    }
}

/// A redirect a client followed: where to, when its answer came.
pub(crate) struct Followed {
    url: u64,
    answered_ns: i64,
}

impl Answer for Followed {
    fn answered_ns(&self) -> i64 {
        self.answered_ns
    }
}

/// The 3xx answers seen lately that no request has followed yet, per
/// client (follow_ups.rs), and the redirects each client followed lately:
/// one sent to the same URL again and again went round a loop.
#[derive(Default)]
pub(crate) struct Redirects {
    answers: FollowUps<Kept>,
    followed: FollowUps<Followed>,
}

/// What a request that may follow a redirect asked for.
pub(crate) enum Asking {
    /// Its URL, from its head.
    Url(u64),
    /// Only its origin: the first request of a TLS connection whose
    /// requests the capture cannot read.
    Origin(u64),
}

impl Redirects {
    /// A 3xx answer with a resolved `Location` reached `client`.
    pub fn answered(&mut self, client: IpAddr, location: Location, answered: Answered) {
        self.answers.keep(client, Kept { location, answered });
    }

    /// Whether any answer waits for its follow-up.
    pub fn is_empty(&self) -> bool {
        self.answers.is_empty()
    }

    /// The redirect that `client`'s request, asking for `asking`, follows,
    /// if one does: the newest answer for it that came before the request
    /// began, and at most [`FOLLOW_NS`] before. `starts` are the times it
    /// may have begun, in order (its connection's name lookup and SYN, its
    /// request): it began at the first after the answer. It is followed
    /// once. `request` is the follow-up request's first segment.
    pub fn follow(
        &mut self,
        client: IpAddr,
        asking: Asking,
        starts: &[Stamp],
        request: Stamp,
    ) -> Option<FollowedRedirect> {
        let began = |answer: i64| starts.iter().find(|s| s.ts_ns >= answer).copied();
        let Kept { location, answered } = self.answers.take_newest(client, |k| {
            let answer = k.answered.answer.ts_ns;
            let wanted = match asking {
                Asking::Url(url) => k.location.url == url,
                Asking::Origin(origin) => k.location.origin == origin,
            };
            wanted && began(answer).is_some_and(|b| b.ts_ns - answer <= FOLLOW_NS)
        })?;
        let began = began(answered.answer.ts_ns)?;
        // (The client's redirects followed lately, to the same URL.)
        let answered_ns = answered.answer.ts_ns;
        let followed_before = self.followed.count(client, |f| {
            f.url == location.url && answered_ns - f.answered_ns <= crate::follow_ups::WINDOW_NS
        }) as u32;
        self.followed.keep(
            client,
            Followed {
                url: location.url,
                answered_ns: answered.answer.ts_ns,
            },
        );
        Some(FollowedRedirect {
            began,
            followed_before,
            answered,
            location: location.text,
            same_origin: location.same_origin,
            to_https: location.to_https,
            per_visitor: location.per_visitor,
            uncacheable: location.uncacheable,
            back_to_referrer: location.back_to_referrer,
            third_party: location.third_party,
            referred: location.referred,
            by_url: matches!(asking, Asking::Url(_)),
            follow_up: request,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the request head `head` asks for, its line read first.
    fn of_head(head: &[u8], https: bool) -> Option<Asked> {
        let line = crate::exchange::RequestLine::of(head)?;
        Asked::of_request(&line, head, https)
    }
    use crate::follow_ups::{KEPT, PER_CLIENT};

    /// A redirect that sets a cookie its `Location` carries the value of
    /// is a check minted for the visitor (PcapPlusPlus's
    /// many-protocols.pcap 92: `s1=54A7E9363BBC000F`, its Location's
    /// `ns_setsiteck=54A7E9363BBC000F`); one that forbids keeping itself
    /// is asked for again (example.pcap 0's `301` with `max-age=0`).
    /// Another cookie, a short value, or a lifetime are neither.
    #[test]
    fn a_redirects_cookie_and_freshness_are_read() {
        let from = of_head(
            b"GET /v60.js HTTP/1.1\r\nHost: b.scorecardresearch.com\r\n\r\n",
            false,
        )
        .expect("asked");
        let head = |fields: &str| {
            format!(
                "HTTP/1.1 302 Moved Temporarily\r\nLocation: /p?ns_m2=yes&ns_setsiteck=54A7E9363BBC000F\r\n{fields}\r\n"
            )
        };
        let read =
            |fields: &str| Location::of_response(head(fields).as_bytes(), &from).expect("resolves");
        let checked = read("Set-Cookie: s1=54A7E9363BBC000F; expires=Thu, 31 Dec 2037 23:59:59 GMT; path=/\r\nCache-Control: private, no-cache, no-store\r\n");
        assert!(checked.per_visitor && checked.uncacheable, "{checked:?}");
        let other = read("Set-Cookie: lang=en-GB-oxendict; path=/\r\nSet-Cookie: a=1\r\n");
        assert!(!other.per_visitor && !other.uncacheable, "{other:?}");
        let kept = read("Cache-Control: max-age=3600\r\n");
        assert!(!kept.uncacheable, "{kept:?}");
        assert!(read("Cache-Control: public, max-age=0\r\n").uncacheable);
        // A cookie whose value the Location carries among others.
        assert!(read("Set-Cookie: x=1\r\nSet-Cookie: s1=54A7E9363BBC000F\r\n").per_visitor);
        // A value wrapping the identifier the Location carries (Adobe's
        // s_vi, many-protocols.pcap 93); a short token in it does not.
        let wrapped = "Set-Cookie: s_vi=[CS]v1|54A7E9363BBC000F[CE]; Domain=.bbc.com\r\n";
        assert!(read(wrapped).per_visitor);
        assert!(!read("Set-Cookie: s_vi=[CS]v1|ns_m2[CE]\r\n").per_visitor);
    }

    /// A request's `Referer` says whose it was: an image or script a page
    /// of another site loads (an ad tag's, many-protocols.pcap 52:
    /// doubleclick.net asked by ynet.co.il's page) is that site's; a page
    /// asked for (`Accept: text/html`, `Sec-Fetch-Dest: document`), one
    /// of the same site (`www.` and a subdomain; `.co.il`'s three
    /// labels), or one without a Referer is not.
    #[test]
    fn a_request_loaded_by_another_sites_page_is_that_sites() {
        let request = |host: &str, fields: &str| {
            asked(
                &format!("GET /pagead/x?random=1 HTTP/1.1\r\nHost: {host}\r\n{fields}\r\n"),
                false,
            )
            .third_party
        };
        let image = "Accept: image/png,image/*;q=0.8,*/*;q=0.5\r\n";
        let from_ynet = "Referer: http://www.ynet.co.il/home/0,7340,L-8,00.html\r\n";
        assert!(request(
            "googleads.g.doubleclick.net",
            &format!("{image}{from_ynet}")
        ));
        assert!(request("www.google.co.il", &format!("{image}{from_ynet}")));
        assert!(!request(
            "images.ynet.co.il",
            &format!("{image}{from_ynet}")
        ));
        assert!(!request("ynet.co.il:80", &format!("{image}{from_ynet}")));
        assert!(!request("googleads.g.doubleclick.net", image));
        let page = "Accept: text/html,application/xhtml+xml,*/*;q=0.8\r\n";
        assert!(!request(
            "googleads.g.doubleclick.net",
            &format!("{page}{from_ynet}")
        ));
        let navigated = format!("{image}Sec-Fetch-Dest: document\r\n{from_ynet}");
        assert!(!request("googleads.g.doubleclick.net", &navigated));
        let framed = format!("{page}Sec-Fetch-Dest: iframe\r\n{from_ynet}");
        assert!(request("googleads.g.doubleclick.net", &framed));
        // Without an Accept, anything: not counted another site's.
        assert!(!request("googleads.g.doubleclick.net", from_ynet));
        assert!(request(
            "10.0.0.2",
            &format!("{image}Referer: http://10.0.0.1/\r\n")
        ));
        // Two labels under a generic top-level domain are the site.
        assert!(!request(
            "sa.bbc.com",
            &format!("{image}Referer: http://www.bbc.com/\r\n")
        ));
        assert!(request(
            "sa.bbc.co.uk",
            &format!("{image}Referer: http://www.bbc.com/\r\n")
        ));
    }

    /// A redirect to the very URL of the page that asked (its request's
    /// `Referer`) sends the browser back round (http-packets2.pcap:
    /// brumazz.wix.com/bowls, loaded by www.bowlsbybruno.com/'s frame,
    /// `301` to www.bowlsbybruno.com/); another URL of that site does not.
    #[test]
    fn a_redirect_back_to_the_page_that_asked_is_read() {
        let from = asked(
            "GET /bowls HTTP/1.1\r\nHost: brumazz.wix.com\r\nReferer: http://www.bowlsbybruno.com/\r\n\r\n",
            false,
        );
        let back = |value: &str| location(value, &from).expect("resolves").back_to_referrer;
        assert!(back("http://www.bowlsbybruno.com/"));
        assert!(back("http://WWW.bowlsbybruno.com:80/"));
        assert!(!back("http://www.bowlsbybruno.com/menu"));
        assert!(!back("https://www.bowlsbybruno.com/"));
        let unreferred = asked(
            "GET /bowls HTTP/1.1\r\nHost: brumazz.wix.com\r\n\r\n",
            false,
        );
        let l = location("http://www.bowlsbybruno.com/", &unreferred).expect("resolves");
        assert!(!l.back_to_referrer && !l.third_party);
    }

    fn asked(head: &str, https: bool) -> Asked {
        of_head(head.as_bytes(), https).expect("asks")
    }

    fn location(value: &str, base: &Asked) -> Option<Location> {
        let head =
            format!("HTTP/1.1 301 Moved Permanently\r\nServer: x\r\nLocation: {value}\r\n\r\n");
        Location::of_response(head.as_bytes(), base)
    }

    fn follows(value: &str, from: &Asked, next: &Asked) -> bool {
        location(value, from).is_some_and(|l| l.url == next.url())
    }

    #[test]
    fn an_http2_request_names_its_url_as_an_http1_head_does() {
        let h1 = asked("GET /a/b?x=1 HTTP/1.1\r\nHost: Example.COM\r\n\r\n", true);
        let h2 = Asked::of_h2(true, b"example.com", b"/a/b?x=1").expect("asks");
        assert_eq!(h1, h2);
        let port = Asked::of_h2(true, b"example.com:443", b"/a/b?x=1").expect("asks");
        assert_eq!(h1, port, "the scheme's port written or not");
        assert!(
            Asked::of_h2(true, b"example.com", b"*").is_none(),
            "OPTIONS *"
        );
        assert!(Asked::of_h2(true, b"", b"/").is_none(), "no host");
        let l = Location::of_value(b"/a/c", &h2).expect("resolved");
        assert!(l.same_origin && !l.to_https);
        assert_eq!(
            l.url,
            Asked::of_h2(true, b"example.com", b"/a/c").unwrap().url()
        );
    }

    #[test]
    fn a_request_names_its_url_by_its_host_header_or_its_absolute_target() {
        let a = asked("GET /a/b?x=1 HTTP/1.1\r\nHost: Example.COM\r\n\r\n", false);
        let b = asked(
            "GET http://example.com:80/a/b?x=1 HTTP/1.1\r\nHost: x\r\n\r\n",
            false,
        );
        assert_eq!(a, b, "origin form with Host = absolute form");
        let https = asked("GET /a/b?x=1 HTTP/1.1\r\nHost: example.com\r\n\r\n", true);
        assert_ne!(a.url(), https.url(), "the scheme is part of the URL");
        let port = asked(
            "GET /a/b?x=1 HTTP/1.1\r\nHost: example.com:8080\r\n\r\n",
            false,
        );
        assert_ne!(a.url(), port.url());
        assert!(
            of_head(b"GET /a HTTP/1.1\r\n\r\n", false).is_none(),
            "no host"
        );
        assert!(of_head(b"CONNECT a:443 HTTP/1.1\r\nHost: a\r\n\r\n", false).is_none());
        assert!(of_head(b"HTTP/1.1 200 OK\r\n\r\n", false).is_none());
        // (A head cut before its Host header, or inside it, says nothing.)
        assert!(of_head(b"GET /a HTTP/1.1\r\nUser-Agent: x", false).is_none());
        assert!(of_head(b"GET /a HTTP/1.1\r\nHost: exam", false).is_none());
        // (A body's lines are no headers.)
        assert!(of_head(b"POST /a HTTP/1.1\r\nX: y\r\n\r\nHost: a\r\n", false).is_none());
    }

    #[test]
    fn locations_resolve_against_the_url_asked() {
        let from = asked("GET /docs HTTP/1.1\r\nHost: example.com\r\n\r\n", false);
        let slash = asked("GET /docs/ HTTP/1.1\r\nHost: example.com\r\n\r\n", false);
        let https = asked("GET /docs HTTP/1.1\r\nHost: example.com\r\n\r\n", true);
        let www = asked("GET /docs HTTP/1.1\r\nHost: www.example.com\r\n\r\n", true);
        assert!(follows("/docs/", &from, &slash));
        assert!(follows("docs/", &from, &slash), "relative to the directory");
        assert!(follows("http://example.com/docs/", &from, &slash));
        assert!(follows("HTTP://EXAMPLE.com:80/docs/#top", &from, &slash));
        assert!(follows("https://example.com/docs", &from, &https));
        assert!(follows("https://example.com:443/docs", &from, &https));
        assert!(follows("https://www.example.com/docs", &from, &www));
        assert!(
            follows("//example.com/docs/", &from, &slash),
            "scheme-relative"
        );
        assert!(!follows("/docs/", &from, &https), "another scheme");
        assert!(
            !follows("/Docs/", &from, &slash),
            "paths are case-sensitive"
        );
        assert!(
            location("../docs/", &from).is_none(),
            "dot segments are not resolved"
        );
        assert!(location("ftp://example.com/", &from).is_none());
        assert!(location("mailto:a@example.com", &from).is_none());
        assert!(location("a:b/", &from).is_none(), "a scheme of its own");
        assert!(location("?page=2", &from).is_none());
        let root = asked("GET / HTTP/1.1\r\nHost: example.com\r\n\r\n", true);
        assert!(
            follows("https://example.com", &from, &root),
            "an empty path is the root"
        );
        assert!(location("/docs/", &from).expect("resolves").same_origin);
        let upgrade = location("https://example.com/docs", &from).expect("resolves");
        assert!(!upgrade.same_origin && upgrade.to_https);
        assert!(
            !location("/docs/", &https).expect("resolves").to_https,
            "already https"
        );
        let v6 = asked("GET / HTTP/1.1\r\nHost: [2001:db8::1]:8443\r\n\r\n", true);
        assert!(follows("https://[2001:db8::1]:8443/", &from, &v6));
    }

    #[test]
    fn ports_are_written_as_digits() {
        let digits = |port: u16| UrlHash::origin(false, b"a", port);
        for port in [0, 7, 80, 443, 8080, 65535] {
            let written = UrlHash::START.feed(format!("http://a:{port}").as_bytes());
            assert_eq!(digits(port), written, "{port}");
        }
    }

    #[test]
    fn a_tls_connection_is_known_by_its_server_name_and_port() {
        let from = asked("GET / HTTP/1.1\r\nHost: example.com\r\n\r\n", false);
        let l = location("https://Example.com/", &from).expect("resolves");
        assert_eq!(l.origin, Asked::origin_of_server_name("example.com", 443));
        assert_ne!(l.origin, Asked::origin_of_server_name("example.com", 8443));
        assert_ne!(
            l.origin,
            Asked::origin_of_server_name("www.example.com", 443)
        );
    }

    fn at(frame: u64, ms: i64) -> Stamp {
        Stamp {
            frame,
            ts_ns: ms * 1_000_000,
        }
    }

    fn redirect(answer: Stamp) -> Answered {
        Answered {
            stream: 0,
            request: at(1, 0),
            opened_for_it: None,
            answer,
            status: 301,
            request_label: None,
            server_ns: 0,
        }
    }

    #[test]
    fn a_redirect_is_followed_once_by_its_client_soon_after_the_answer() {
        let from = asked("GET / HTTP/1.1\r\nHost: a\r\n\r\n", false);
        let to = asked("GET /b HTTP/1.1\r\nHost: a\r\n\r\n", false);
        let client: IpAddr = "10.0.0.1".parse().unwrap();
        let other: IpAddr = "10.0.0.2".parse().unwrap();
        let mut r = Redirects::default();
        r.answered(client, location("/b", &from).unwrap(), redirect(at(2, 100)));
        let url = || Asking::Url(to.url());
        assert!(
            r.follow(other, url(), &[at(3, 150)], at(3, 150)).is_none(),
            "another client"
        );
        assert!(
            r.follow(client, url(), &[at(3, 90)], at(3, 90)).is_none(),
            "before the answer"
        );
        assert!(
            r.follow(client, Asking::Url(from.url()), &[at(3, 150)], at(3, 150))
                .is_none(),
            "another URL"
        );
        let late = 100 + FOLLOW_NS / 1_000_000 + 1;
        assert!(r
            .follow(client, url(), &[at(3, late)], at(3, late))
            .is_none());
        // (A connection opened before the answer: its request began it.)
        let f = r
            .follow(client, url(), &[at(3, 50), at(4, 150)], at(4, 150))
            .expect("follows");
        assert!(f.by_url && f.same_origin);
        assert_eq!(f.began, at(4, 150));
        assert!(
            r.follow(client, url(), &[at(5, 160)], at(5, 160)).is_none(),
            "once"
        );
        assert!(r.is_empty());
    }

    #[test]
    fn a_busy_redirector_keeps_each_client_s_answers_for_its_follow_up() {
        // 20,000 clients redirected within 2 s (a redirector's capture):
        // the newest KEPT wait, each client's found among its own.
        let from = asked("GET / HTTP/1.1\r\nHost: a\r\n\r\n", false);
        let to = asked("GET /b HTTP/1.1\r\nHost: a\r\n\r\n", false);
        let mut r = Redirects::default();
        let client = |n: u32| IpAddr::from(std::net::Ipv4Addr::from(0x0a00_0000 + n));
        for n in 0..20_000u32 {
            let answer = Stamp {
                frame: n as u64 + 1,
                ts_ns: n as i64 * 100_000,
            };
            r.answered(client(n), location("/b", &from).unwrap(), redirect(answer));
        }
        let late = |n: u32| {
            [Stamp {
                frame: 99_999,
                ts_ns: n as i64 * 100_000 + 50_000_000,
            }]
        };
        assert!(r
            .follow(
                client(19_999),
                Asking::Url(to.url()),
                &late(19_999),
                late(19_999)[0]
            )
            .is_some());
        assert!(r
            .follow(
                client(20_000 - KEPT as u32),
                Asking::Url(to.url()),
                &late(20_000 - KEPT as u32),
                late(20_000 - KEPT as u32)[0],
            )
            .is_some());
        assert!(
            r.follow(client(0), Asking::Url(to.url()), &late(0), late(0)[0])
                .is_none(),
            "past KEPT"
        );
        // One client's loop keeps its newest PER_CLIENT.
        let mut loop_ = Redirects::default();
        for n in 0..40u32 {
            let answer = Stamp {
                frame: n as u64 + 1,
                ts_ns: n as i64 * 1_000_000,
            };
            loop_.answered(client(1), location("/b", &from).unwrap(), redirect(answer));
        }
        assert_eq!(loop_.answers.kept_for(client(1)), PER_CLIENT);
    }

    /// A client sent to one URL again and again (a page that loads a URL
    /// redirecting back to it): each follow-up knows how many times it
    /// was followed lately; another URL's count is its own.
    #[test]
    fn a_redirect_followed_again_and_again_counts_its_turns() {
        let from = asked("GET / HTTP/1.1\r\nHost: a\r\n\r\n", false);
        let to = asked("GET /b HTTP/1.1\r\nHost: a\r\n\r\n", false);
        let other = asked("GET /c HTTP/1.1\r\nHost: a\r\n\r\n", false);
        let client = IpAddr::from(std::net::Ipv4Addr::new(10, 0, 0, 1));
        let mut r = Redirects::default();
        let turn = |r: &mut Redirects, n: i64, value: &str, next: &Asked| {
            let answer = Stamp {
                frame: 10 * n as u64 + 1,
                ts_ns: n * 300_000_000,
            };
            r.answered(client, location(value, &from).unwrap(), redirect(answer));
            let request = Stamp {
                frame: 10 * n as u64 + 2,
                ts_ns: answer.ts_ns + 10_000_000,
            };
            r.follow(client, Asking::Url(next.url()), &[request], request)
                .expect("followed")
                .followed_before
        };
        assert_eq!(turn(&mut r, 0, "/b", &to), 0);
        assert_eq!(turn(&mut r, 1, "/c", &other), 0);
        assert_eq!(turn(&mut r, 2, "/b", &to), 1);
        assert_eq!(turn(&mut r, 3, "/b", &to), 2);
        // Past the 10 s kept, a turn is a new visit's.
        assert_eq!(turn(&mut r, 60, "/b", &to), 0);
    }
}
