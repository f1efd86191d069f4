//! The connections a client ended lately, per server: what a new
//! connection of the same client to the same server could have been
//! instead (`connection_not_reused` in rttdoc-diagnose).
//!
//! A client that asks a server again soon after a connection to it ended
//! pays a new TCP handshake (and TLS handshake) before its request can
//! leave: the old connection, kept alive, would have carried the request
//! at once. The tracker notes every connection's end (its first FIN or
//! RST, from either side) when the connection had answered a request and
//! the answer was in before the end (a connection closed while its
//! request waited, or never asked anything, could not have been reused),
//! keyed by the route a reuse needs (the client's address, the server's
//! address and port). When a new connection of that route (its SYN
//! captured) sends its first request, it takes the newest end not yet taken whose close was captured before its SYN
//! and whose last answer came at most [`WINDOW_NS`] before that SYN: one
//! ended connection stands for one new one (a client with twenty
//! connections that each close and reopen replaces each once). A close
//! captured after the take (the server's FIN that crossed the client's,
//! behind a request sent the moment the answer was in) still reaches the
//! taken end until the connection that took it is handed on. The end
//! taken is one the same pool could hold ([`Pool`]: the same TLS server
//! name, origin, program and TLS library).
//!
//! Bounded: per route the newest [`PER_ROUTE`] ends, over all routes the
//! ends of the last [`WINDOW_NS`] of capture time and at most [`KEPT`].

use std::collections::VecDeque;

use rustc_hash::FxHashMap;
use std::net::IpAddr;

use crate::connection::Stamp;
use crate::model::Endpoint;

/// How long before a new connection's SYN the previous connection's last
/// answer may have come for a kept-alive connection to have been the
/// alternative: the idle time common clients and servers keep a
/// connection open by default (Go's IdleConnTimeout 90 s, curl's 118 s,
/// nginx's keepalive_timeout 75 s), rounded down. A client that came back
/// later than that would find most connections closed however they were
/// configured.
pub const WINDOW_NS: i64 = 60_000_000_000;

/// How long after the server's last set-up packet reached it a client
/// that was waiting for the connection sends its request: its
/// application's turnaround when connect() (or the TLS handshake)
/// returns. Later, it was doing something else: the connection was made
/// ahead of need (a browser's preconnect). (`connection_not_reused`
/// asks it of a new connection's request, redirect.rs of a redirected
/// request's.)
pub const READY_NS: i64 = 20_000_000;

/// Ends kept, over all routes: a server's capture with more distinct
/// clients ending connections within [`WINDOW_NS`] forgets the oldest.
const KEPT: usize = 16_384;

/// Ends kept per route: a client with several connections to one server
/// (a browser's six, a load generator's hundreds) ends them close
/// together.
const PER_ROUTE: usize = 256;

/// What a new connection could have reused: an earlier connection of the
/// same client to the same server (and name), and how it ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EndedConnection {
    /// Its `tcp.stream`.
    pub stream: u64,
    /// The close that ended it: its first FIN or RST, or the server's FIN
    /// after the client's when the server had not had the client's (it
    /// closed on its own: a `Connection: close` both ends act on, seen
    /// from the client's side of the path).
    pub close: Stamp,
    /// The server sent that close (else the client did).
    pub closed_by_server: bool,
    /// The close was a RST.
    pub reset: bool,
    /// Its last request's first segment.
    pub last_request: Stamp,
    /// Its last answer's last segment (captured before its first close).
    pub last_answer: Stamp,
    /// Requests it carried.
    pub exchanges: u32,
    /// When the client's first FIN or RST was captured, if it sent one
    /// before the new connection's first request.
    pub client_close_ns: Option<i64>,
    /// When the server's was, likewise.
    pub server_close_ns: Option<i64>,
    /// When its first FIN or RST was captured.
    first_close_ns: i64,
    /// The pool it belonged to: its TLS server name, its last request's
    /// origin and `User-Agent`, its client's TLS library.
    pub(crate) pool: Pool,
    /// Its TLS server asked the client for a certificate
    /// (CertificateRequest: readable before TLS 1.3).
    pub certificate_requested: bool,
    /// Its last request asked for the close.
    pub requested_close: Option<crate::model::RequestedClose>,
    /// Its last answer said it would close.
    pub answered_close: Option<crate::model::RequestedClose>,
    /// When the client's first acknowledgment of its last answer's end
    /// was captured, before its close: a client that took the answer
    /// late (a phone asleep) acknowledged it late.
    pub answer_acked_ns: Option<i64>,
    /// Other connections to the server's address (any port) the client
    /// closed within [`CLOSED_TOGETHER_NS`] of this one's close (it closed
    /// first, as this one), each idle for another time (its last answer
    /// more than [`IDLE_APART_NS`] from this one's): one act, a pool's
    /// sweep or a teardown, not each connection's own idle timer, which
    /// closes it when it has idled its time.
    pub closed_together: u32,
    /// Other connections to the server's address the client closed within
    /// [`CLOSED_TOGETHER_NS`] of this one's close, however long each had
    /// idled (`closed_together` counts those idle for another time).
    pub closed_at_once: u32,
    /// Connections to other servers the client closed within
    /// [`crate::closes::TEARDOWN_NS`] of this one's close, each idle for
    /// another time: one act of the application's, whatever servers its
    /// connections went to (an app's one HTTP client spans many services:
    /// nDPI's alexa-app.pcapng 8, closed with four others to three
    /// servers in 5.4 ms, judged in session 86).
    pub closed_elsewhere: u32,
    /// The client closed while its answer was still coming: its close
    /// acknowledged less than the server had sent, or the server sent
    /// more after it, before that close could have reached it
    /// ([`Ends::answer_went_on`]).
    pub cut_off: bool,
    /// The shortest idle time after which its server (address and
    /// port) closed a connection on its own, on any connection ended
    /// before the one that took this end was handed on (that one too),
    /// and that connection's stream ([`Ends::server_idle_limit`]): set
    /// when the end is settled.
    pub server_idle: Option<(u64, i64)>,
}

/// A server that closed a connection this long or more after its last
/// answer, with nothing asked since, closed it for idling: a keep-alive
/// timeout is seconds (nginx's 75 s, Apache's 5 s, an object store's
/// 6 s: nDPI's alexa-app.pcapng 74), not the moment after an answer a
/// server closes at for `Connection: close` or a request limit.
pub const SERVER_IDLE_MIN_NS: i64 = 1_000_000_000;

/// How close together a client's closes of its connections to one server
/// are one act (alexa-app.pcapng: seven within 2.3 ms).
pub const CLOSED_TOGETHER_NS: i64 = 20_000_000;

/// How far apart two connections' last answers are for their idle
/// times to differ: connections answered together idle together, and one
/// idle timeout closes them together too.
pub const IDLE_APART_NS: i64 = 100_000_000;

/// How far a connection's close has been noted (track.rs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CloseSeen {
    /// No FIN or RST yet.
    Open,
    /// One side's FIN or RST: its sender and, for a FIN, the sequence
    /// number just past it (what the other side's FIN acknowledges when
    /// it had it).
    First {
        by: crate::model::Direction,
        fin_end: Option<u32>,
    },
    /// The other side's too.
    Both,
}

/// A connection's first FIN or RST, as track.rs hands it over.
pub(crate) struct End {
    pub stream: u64,
    pub client: IpAddr,
    pub server: Endpoint,
    /// The pool it belonged to.
    pub pool: Pool,
    /// Its last request's first segment, and its answer's last, if any.
    pub last: Option<(Stamp, Option<Stamp>)>,
    pub exchanges: u32,
    pub close: Stamp,
    pub by_server: bool,
    pub reset: bool,
    /// Its TLS server asked for a client certificate.
    pub certificate_requested: bool,
    /// Its last request asked for the close.
    pub requested_close: Option<crate::model::RequestedClose>,
    /// Its last answer said it would close.
    pub answered_close: Option<crate::model::RequestedClose>,
    /// The client's first acknowledgment of its last answer's end.
    pub answer_acked_ns: Option<i64>,
    /// The client closed short of bytes the server had sent (its close
    /// acknowledged less): the answer was still coming.
    pub cut_off: bool,
}

/// What a client keeps a pool of connections by, beyond the route, each
/// hashed (0: not read). A browser keeps HTTP/1.1 connections per origin:
/// one to kelowna.craigslist.ca is not one to kelowna.en.craigslist.ca on
/// the same address. Each program keeps its own: nDPI's netflix.pcap, an
/// iPhone's Netflix app and its media player (`AppleCoreMedia`, first in
/// its `User-Agent`) fetching from one server, neither able to use the
/// other's; nDPI's teams.pcap, the Teams client's own TLS library and the
/// telemetry library beside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Pool {
    /// [`name_hash`] of the TLS server name (0: no TLS, or no name).
    pub server_name: u64,
    /// The origin a request named ([`crate::redirect::Asked::origin_hash`]).
    pub http_origin: u64,
    /// The product a request's `User-Agent` named first.
    pub http_agent: u64,
    /// The client's TLS library ([`crate::tls::TlsSession::client_library`]:
    /// its suites in order and its versions, which extensions shuffled per
    /// hello by rustls and Chromium do not change).
    pub client_library: u64,
}

impl Pool {
    /// One pool could hold both: the same TLS server name (or neither
    /// asked for one), and the same origin, product and TLS library
    /// where both were read.
    fn holds_both(&self, other: &Pool) -> bool {
        let same = |a: u64, b: u64| a == 0 || b == 0 || a == b;
        self.server_name == other.server_name
            && same(self.http_origin, other.http_origin)
            && same(self.http_agent, other.http_agent)
            && same(self.client_library, other.client_library)
    }
}

/// The route a reuse needs: client address, server address and port.
type Route = (IpAddr, IpAddr, u16);

/// The connections ended lately (track.rs keeps one for the capture).
#[derive(Default)]
pub(crate) struct Ends {
    by_route: FxHashMap<Route, VecDeque<EndedConnection>>,
    /// (route, first close time) of every end kept, oldest first.
    order: VecDeque<(Route, i64)>,
    /// The clients' closes of the last [`CLOSED_TOGETHER_NS`] (close
    /// time, last answer's time, route, stream), oldest first, at most
    /// [`RECENT_CLOSES`].
    recent_client_closes: VecDeque<(i64, i64, Route, u64)>,
    /// The ends new connections took, by their stream, until the
    /// connection that took each is handed on ([`Ends::settle`]): a close
    /// captured after the take (the server's FIN that crossed the client's,
    /// behind the new connection's request) still says who closed.
    taken: FxHashMap<u64, EndedConnection>,
    /// Per server (address and port), the shortest idle time after which
    /// it closed a connection on its own ([`SERVER_IDLE_MIN_NS`] or
    /// more), and that connection's stream; at most [`KEPT`] servers.
    server_idle: FxHashMap<(IpAddr, u16), (u64, i64)>,
}

/// Client closes kept for [`Ends::closes_with`]: 20 ms of a busy server's
/// (a thousand connections closing a second come to 20).
const RECENT_CLOSES: usize = 1024;

/// The end of `stream` on `route`, kept (`by_route`) or taken and not yet
/// handed on (`taken`): [`Ends::end_of`], and for the closes walked while
/// the recent ones are borrowed ([`Ends::closes_with`]).
fn end_in<'e>(
    by_route: &'e mut FxHashMap<Route, VecDeque<EndedConnection>>,
    taken: &'e mut FxHashMap<u64, EndedConnection>,
    route: Route,
    stream: u64,
) -> Option<&'e mut EndedConnection> {
    by_route
        .get_mut(&route)
        .and_then(|kept| kept.iter_mut().rev().find(|e| e.stream == stream))
        .or_else(|| taken.get_mut(&stream))
}

/// A TLS server name's hash (FNV-1a; 0 for none): equal names, equal hashes.
pub(crate) fn name_hash(name: Option<&str>) -> u64 {
    name.map_or(0, |n| {
        n.bytes()
            .fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
                (h ^ u64::from(b.to_ascii_lowercase())).wrapping_mul(0x0100_0000_01b3)
            })
            .max(1)
    })
}

impl Ends {
    /// A connection's first FIN or RST: kept when its last request had
    /// its answer by then.
    pub fn ended(&mut self, end: End) {
        let Some((last_request, Some(last_answer))) = end.last else {
            return;
        };
        if end.exchanges == 0 || last_answer.ts_ns > end.close.ts_ns {
            return;
        }
        let route = (end.client, end.server.ip, end.server.port);
        let idled_ns = end.close.ts_ns - last_answer.ts_ns;
        if end.by_server && idled_ns >= SERVER_IDLE_MIN_NS {
            self.note_server_idle((end.server.ip, end.server.port), end.stream, idled_ns);
        }
        let (closed_together, closed_at_once, closed_elsewhere) = if end.by_server {
            (0, 0, 0)
        } else {
            self.closes_with(route, end.stream, end.close.ts_ns, last_answer.ts_ns)
        };
        let kept = self.by_route.entry(route).or_default();
        if kept.len() == PER_ROUTE {
            kept.pop_front();
        }
        kept.push_back(EndedConnection {
            stream: end.stream,
            close: end.close,
            closed_by_server: end.by_server,
            reset: end.reset,
            last_request,
            last_answer,
            exchanges: end.exchanges,
            client_close_ns: (!end.by_server).then_some(end.close.ts_ns),
            server_close_ns: end.by_server.then_some(end.close.ts_ns),
            first_close_ns: end.close.ts_ns,
            pool: end.pool,
            certificate_requested: end.certificate_requested,
            requested_close: end.requested_close,
            answered_close: end.answered_close,
            answer_acked_ns: end.answer_acked_ns,
            closed_together,
            closed_at_once,
            closed_elsewhere,
            cut_off: end.cut_off,
            server_idle: None,
        });
        self.order.push_back((route, end.close.ts_ns));
        self.expire(end.close.ts_ns);
    }

    /// The server closed `stream` on its own after idling `idled_ns`.
    fn note_server_idle(&mut self, server: (IpAddr, u16), stream: u64, idled_ns: i64) {
        if let Some(known) = self.server_idle.get_mut(&server) {
            if idled_ns < known.1 {
                *known = (stream, idled_ns);
            }
        } else if self.server_idle.len() < KEPT {
            self.server_idle.insert(server, (stream, idled_ns));
        }
    }

    /// The shortest idle time after which `server` closed a connection on
    /// its own, of those ended so far, and that connection's stream: a
    /// connection the client had kept would have been closed as soon.
    pub fn server_idle_limit(&self, server: Endpoint) -> Option<(u64, i64)> {
        self.server_idle.get(&(server.ip, server.port)).copied()
    }

    /// A client's close of `stream` on `route` at `close_ns`, its last
    /// answer at `answered_ns`: how many of its connections to the same
    /// server address (any port: an application's teardown closes them
    /// all) it closed within [`CLOSED_TOGETHER_NS`] before, each idle for
    /// another time, and how many however long they idled; each of those
    /// counts this one too.
    fn closes_with(
        &mut self,
        route: Route,
        stream: u64,
        close_ns: i64,
        answered_ns: i64,
    ) -> (u32, u32, u32) {
        while self
            .recent_client_closes
            .front()
            .is_some_and(|c| close_ns.saturating_sub(c.0) > CLOSED_TOGETHER_NS)
        {
            self.recent_client_closes.pop_front();
        }
        let (mut together, mut at_once, mut elsewhere) = (0, 0, 0);
        for &(closed, answered, (client, server, port), other) in &self.recent_client_closes {
            if client != route.0 {
                continue;
            }
            let apart = (answered - answered_ns).abs() > IDLE_APART_NS;
            // (To another server: closer together, and idle apart.)
            let same_server = server == route.1;
            let teardown = apart && close_ns - closed <= crate::closes::TEARDOWN_NS;
            if !same_server && !teardown {
                continue;
            }
            if same_server {
                at_once += 1;
                together += apart as u32;
            } else {
                elsewhere += 1;
            }
            if let Some(e) = end_in(
                &mut self.by_route,
                &mut self.taken,
                (client, server, port),
                other,
            ) {
                if same_server {
                    e.closed_at_once += 1;
                    e.closed_together += apart as u32;
                } else {
                    e.closed_elsewhere += 1;
                }
            }
        }
        if self.recent_client_closes.len() == RECENT_CLOSES {
            self.recent_client_closes.pop_front();
        }
        self.recent_client_closes
            .push_back((close_ns, answered_ns, route, stream));
        (together, at_once, elsewhere)
    }

    /// The other side of `stream` closed too, at `close`: its FIN or RST
    /// after the first. `on_its_own` when it had not had the first FIN
    /// (its ACK did not cover it): a server that closed on its own while
    /// the client's FIN was on its way closed the connection whoever's FIN
    /// the capture shows first. Not one whose FIN came more than twice
    /// `reply_ns` (the round trip from the capture point to the server)
    /// after the client's: the client's FIN was lost on the way (skype.pcap's
    /// 67: re-sent after the server's FIN 780 ms later, which had not had
    /// it), and the client had closed first.
    #[allow(clippy::too_many_arguments)]
    pub fn closed_too(
        &mut self,
        stream: u64,
        client: IpAddr,
        server: Endpoint,
        close: Stamp,
        by_server: bool,
        on_its_own: bool,
        reply_ns: Option<i64>,
    ) {
        let Some(e) = self.end_of(stream, client, server) else {
            return;
        };
        if by_server {
            e.server_close_ns.get_or_insert(close.ts_ns);
            let after_first_was_lost = reply_ns
                .is_some_and(|reply| close.ts_ns - e.first_close_ns > 2 * reply + 1_000_000);
            if on_its_own && !after_first_was_lost {
                e.close = close;
                e.closed_by_server = true;
            }
        } else {
            e.client_close_ns.get_or_insert(close.ts_ns);
        }
    }

    /// The end of `stream` (of `client` to `server`) kept, or taken and
    /// not yet handed on.
    fn end_of(
        &mut self,
        stream: u64,
        client: IpAddr,
        server: Endpoint,
    ) -> Option<&mut EndedConnection> {
        let route = (client, server.ip, server.port);
        end_in(&mut self.by_route, &mut self.taken, route, stream)
    }

    /// The server of `stream`, which the client closed first, sent bytes
    /// the client had not acknowledged at `at_ns`, `reply_ns` (the round
    /// trip from the capture point to the server) or less after that
    /// close: it sent them before the close reached it, its answer still
    /// going. The client closed in the middle of it: a cancelled download
    /// (an HTTP/1.1 client can stop an answer no other way; nDPI's
    /// netflix.pcap 34, an iPhone's media player closing after 1,448 of a
    /// 301,293-byte range and resetting what followed). That connection's
    /// answer had not come; nothing kept could have carried the next
    /// request without the rest of it first.
    pub fn answer_went_on(
        &mut self,
        stream: u64,
        client: IpAddr,
        server: Endpoint,
        at_ns: i64,
        reply_ns: i64,
    ) {
        let Some(e) = self.end_of(stream, client, server) else {
            return;
        };
        let soon = at_ns.saturating_sub(e.first_close_ns) <= reply_ns + 1_000_000;
        if !e.closed_by_server && e.server_close_ns.is_none() && soon {
            e.cut_off = true;
        }
    }

    /// Forgets ends older than [`WINDOW_NS`] before `now_ns`, and the
    /// oldest beyond [`KEPT`].
    fn expire(&mut self, now_ns: i64) {
        while let Some(&(route, ts)) = self.order.front() {
            if self.order.len() <= KEPT && ts >= now_ns.saturating_sub(WINDOW_NS) {
                break;
            }
            self.order.pop_front();
            if let Some(kept) = self.by_route.get_mut(&route) {
                kept.retain(|e| e.first_close_ns > ts);
                if kept.is_empty() {
                    self.by_route.remove(&route);
                }
            }
        }
    }

    /// The connection a new one (`stream`, its first SYN at `syn`) of
    /// `client` to `server` could have reused, taken: the newest kept end
    /// of the route whose first FIN or RST came before the SYN, whose
    /// last answer came within [`WINDOW_NS`] before it, and whose pool
    /// could hold the new one ([`Pool`]). Asked at the new connection's
    /// first request, when its pool is read: an end that only another
    /// pool's connection could take is left for its own (nDPI's
    /// teams.pcap, the two libraries each opening connections to one
    /// server; the first request to leave, the other library's, had taken
    /// the end that was the second's).
    pub fn take_before(
        &mut self,
        stream: u64,
        client: IpAddr,
        server: Endpoint,
        syn: Stamp,
        pool: Pool,
    ) -> Option<EndedConnection> {
        let kept = self.by_route.get_mut(&(client, server.ip, server.port))?;
        // (In close order: the newest before the SYN is the last such.)
        let at = kept.iter().rposition(|e| {
            e.stream != stream
                && e.first_close_ns <= syn.ts_ns
                && syn.ts_ns.saturating_sub(e.last_answer.ts_ns) <= WINDOW_NS
                && e.pool.holds_both(&pool)
                && !e.cut_off
        })?;
        let e = kept.remove(at)?;
        self.taken.insert(e.stream, e);
        Some(e)
    }

    /// The end a connection took ([`Ends::take_before`]), `previous` its
    /// stream, as its closes are known now that the connection is handed
    /// on; forgotten here.
    pub fn settle(&mut self, previous: u64) -> Option<EndedConnection> {
        self.taken.remove(&previous)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: i64 = 1_000_000;

    fn at(ms: i64) -> Stamp {
        Stamp {
            frame: ms as u64,
            ts_ns: ms * 1_000_000,
        }
    }

    const CLIENT: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, 1));
    /// The pool of the ends `closing` makes: a TLS server name's.
    const NAMED: Pool = Pool {
        server_name: 7,
        http_origin: 0,
        http_agent: 0,
        client_library: 0,
    };

    const SERVER: Endpoint = Endpoint {
        ip: IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, 2)),
        port: 443,
    };

    fn closing(
        stream: u64,
        client: IpAddr,
        last: Option<(Stamp, Option<Stamp>)>,
        close: Stamp,
    ) -> End {
        End {
            stream,
            client,
            server: SERVER,
            pool: NAMED,
            last,
            exchanges: u32::from(last.is_some()),
            close,
            by_server: false,
            reset: false,
            certificate_requested: false,
            requested_close: None,
            answered_close: None,
            answer_acked_ns: None,
            cut_off: false,
        }
    }

    fn end(e: &mut Ends, stream: u64, answer_ms: i64, close_ms: i64) {
        let last = Some((at(answer_ms - 1), Some(at(answer_ms))));
        e.ended(closing(stream, CLIENT, last, at(close_ms)));
    }

    #[test]
    fn a_new_connection_takes_the_newest_end_before_its_syn_once() {
        let mut e = Ends::default();
        end(&mut e, 1, 10, 11);
        end(&mut e, 2, 20, 21);
        end(&mut e, 3, 40, 41);
        // Another port or client: nothing.
        let other = Endpoint { port: 80, ..SERVER };
        assert_eq!(e.take_before(9, CLIENT, other, at(30), NAMED), None);
        assert_eq!(e.take_before(9, SERVER.ip, SERVER, at(30), NAMED), None);
        let found = e.take_before(9, CLIENT, SERVER, at(30), NAMED).unwrap();
        assert_eq!((found.stream, found.pool.server_name), (2, 7));
        // Taken: the next new connection gets the one before.
        assert_eq!(
            e.take_before(10, CLIENT, SERVER, at(30), NAMED)
                .unwrap()
                .stream,
            1
        );
        assert_eq!(e.take_before(11, CLIENT, SERVER, at(30), NAMED), None);
        assert_eq!(
            e.take_before(11, CLIENT, SERVER, at(50), NAMED)
                .unwrap()
                .stream,
            3
        );
    }

    /// Each client TLS library keeps its own connections: a new
    /// connection of one takes the newest end of its own, passing
    /// another's newer end; a hello not read (0) matches any.
    #[test]
    fn a_new_connection_takes_an_end_of_its_own_client_library() {
        let mut e = Ends::default();
        let stack = |e: &mut Ends, stream: u64, answer_ms: i64, client_library: u64| {
            let last = Some((at(answer_ms - 1), Some(at(answer_ms))));
            e.ended(End {
                pool: Pool {
                    client_library,
                    ..NAMED
                },
                ..closing(stream, CLIENT, last, at(answer_ms + 1))
            });
        };
        stack(&mut e, 1, 10, 0xa);
        stack(&mut e, 2, 20, 0xb);
        let take = |e: &mut Ends, client_library: u64| {
            let pool = Pool {
                client_library,
                ..NAMED
            };
            e.take_before(9, CLIENT, SERVER, at(30), pool)
                .map(|x| x.stream)
        };
        assert_eq!(take(&mut e, 0xa), Some(1));
        assert_eq!(take(&mut e, 0xa), None);
        stack(&mut e, 3, 25, 0xa);
        assert_eq!(take(&mut e, 0), Some(3));
        assert_eq!(take(&mut e, 0xc), None);
        assert_eq!(take(&mut e, 0xb), Some(2));
    }

    /// A new connection passes the ends another pool's connections left
    /// (another origin, another program, another TLS name), which stay
    /// for their own; what either did not read (0) matches.
    #[test]
    fn a_new_connection_takes_an_end_its_pool_could_hold() {
        let mut e = Ends::default();
        let pool = |http_origin: u64, http_agent: u64| Pool {
            http_origin,
            http_agent,
            ..NAMED
        };
        for (stream, answer_ms, pool) in [(1, 10, pool(0xa, 1)), (2, 20, pool(0xb, 1))] {
            let last = Some((at(answer_ms - 1), Some(at(answer_ms))));
            e.ended(End {
                pool,
                ..closing(stream, CLIENT, last, at(answer_ms + 1))
            });
        }
        let take = |e: &mut Ends, pool: Pool| e.take_before(9, CLIENT, SERVER, at(30), pool);
        let unnamed = Pool {
            server_name: 0,
            ..pool(0xa, 1)
        };
        assert_eq!(take(&mut e, unnamed), None);
        assert_eq!(take(&mut e, pool(0xa, 2)), None);
        assert_eq!(take(&mut e, pool(0xa, 1)).map(|x| x.stream), Some(1));
        assert_eq!(take(&mut e, pool(0, 0)).map(|x| x.stream), Some(2));
        assert_eq!(take(&mut e, pool(0, 0)), None);
    }

    /// A client's closes within 20 ms of its connections to one server
    /// address, any port, each idle for another time, go together (an
    /// application tearing its connections down: nDPI's alexa-app.pcapng,
    /// port 80 and port 443 closed in 2.3 ms); each counts the others.
    /// Connections answered together, another server's, or a close 20 ms
    /// later do not.
    #[test]
    fn closes_at_once_of_connections_idle_for_other_times_go_together() {
        let mut e = Ends::default();
        end(&mut e, 1, 1_000, 5_000);
        // Answered 50 ms after 1: idle alike.
        end(&mut e, 2, 1_050, 5_001);
        end(&mut e, 3, 3_000, 5_002);
        // Another port of the server's.
        let http = Endpoint { port: 80, ..SERVER };
        let last = Some((at(3_999), Some(at(4_000))));
        e.ended(End {
            server: http,
            ..closing(4, CLIENT, last, at(5_003))
        });
        // Another server.
        let other = Endpoint {
            ip: IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, 3)),
            port: 443,
        };
        e.ended(End {
            server: other,
            ..closing(5, CLIENT, Some((at(99), Some(at(100)))), at(5_004))
        });
        // 21 ms after 4's close.
        end(&mut e, 6, 2_000, 5_024);
        let together = |e: &mut Ends, stream: u64, server: Endpoint| {
            e.take_before(stream + 100, CLIENT, server, at(6_000), NAMED)
                .map(|x| (x.stream, x.closed_together, x.closed_elsewhere))
        };
        // (5, to another server within 5 ms of 1-4 and idle for another
        // time than each, is one act with them: counted apart.)
        assert_eq!(together(&mut e, 6, SERVER), Some((6, 0, 0)));
        assert_eq!(together(&mut e, 3, SERVER), Some((3, 3, 1)));
        assert_eq!(together(&mut e, 2, SERVER), Some((2, 2, 1)));
        assert_eq!(together(&mut e, 1, SERVER), Some((1, 2, 1)));
        assert_eq!(together(&mut e, 4, http), Some((4, 3, 1)));
        assert_eq!(together(&mut e, 5, other), Some((5, 0, 4)));
        // To another server more than 5 ms apart: not counted.
        let mut e = Ends::default();
        end(&mut e, 1, 1_000, 5_000);
        e.ended(End {
            server: other,
            ..closing(2, CLIENT, Some((at(99), Some(at(100)))), at(5_006))
        });
        assert_eq!(together(&mut e, 1, SERVER), Some((1, 0, 0)));
    }

    #[test]
    fn a_server_that_closed_on_its_own_closed_the_connection() {
        let mut e = Ends::default();
        end(&mut e, 1, 10, 11);
        // The client's FIN first (at 11), the server's (not acknowledging
        // it) at 12: the server closed it. The first close still orders.
        e.closed_too(1, CLIENT, SERVER, at(12), true, true, Some(MS));
        let found = e.take_before(9, CLIENT, SERVER, at(11), NAMED).unwrap();
        assert_eq!((found.close, found.closed_by_server), (at(12), true));
        let both = (found.client_close_ns, found.server_close_ns);
        assert_eq!(both, (Some(at(11).ts_ns), Some(at(12).ts_ns)));
        // A server that answered the client's FIN with its own changes
        // nothing but when it closed.
        end(&mut e, 2, 20, 21);
        e.closed_too(2, CLIENT, SERVER, at(22), true, false, Some(MS));
        let found = e.take_before(9, CLIENT, SERVER, at(30), NAMED).unwrap();
        assert_eq!((found.close, found.closed_by_server), (at(21), false));
        assert_eq!(found.server_close_ns, Some(at(22).ts_ns));
    }

    /// The server's FIN that crossed the client's can be captured after a
    /// new connection took the end (its request left the moment the
    /// answer was in: the live lab's tls12-resumed): the taken end still
    /// learns who closed, and the connection that took it has it when it
    /// is handed on, once.
    #[test]
    fn a_close_captured_after_the_take_still_says_who_closed() {
        let mut e = Ends::default();
        end(&mut e, 1, 10, 11);
        let taken = e.take_before(9, CLIENT, SERVER, at(11), NAMED).unwrap();
        assert!(!taken.closed_by_server);
        e.closed_too(1, CLIENT, SERVER, at(12), true, true, Some(MS));
        let settled = e.settle(1).unwrap();
        assert_eq!((settled.close, settled.closed_by_server), (at(12), true));
        assert_eq!(settled.server_close_ns, Some(at(12).ts_ns));
        assert_eq!(e.settle(1), None);
        // Not taken again meanwhile.
        end(&mut e, 2, 20, 21);
        e.take_before(10, CLIENT, SERVER, at(30), NAMED).unwrap();
        assert_eq!(e.take_before(11, CLIENT, SERVER, at(30), NAMED), None);
        assert_eq!(e.settle(2).map(|x| x.closed_by_server), Some(false));
    }
    #[test]
    fn a_server_fin_long_after_a_lost_client_fin_did_not_close_the_connection() {
        // skype.pcap's 67: the client's FIN at 31 was lost; the server's,
        // not acknowledging it, came 9 ms later on a path whose round trip
        // from the capture point to the server is 1 ms: it left long after
        // the client's FIN would have reached it. The client closed first.
        let mut e = Ends::default();
        end(&mut e, 3, 30, 31);
        e.closed_too(3, CLIENT, SERVER, at(40), true, true, Some(MS));
        let found = e.take_before(9, CLIENT, SERVER, at(50), NAMED).unwrap();
        assert_eq!((found.close, found.closed_by_server), (at(31), false));
        assert_eq!(found.server_close_ns, Some(at(40).ts_ns));
        // Within the round trip (and where it is unknown), it closed on
        // its own before the client's FIN could reach it.
        for (close, reply) in [(32, Some(MS)), (40, None)] {
            let mut e = Ends::default();
            end(&mut e, 4, 30, 31);
            e.closed_too(4, CLIENT, SERVER, at(close), true, true, reply);
            let found = e.take_before(9, CLIENT, SERVER, at(50), NAMED).unwrap();
            assert!(found.closed_by_server);
        }
    }

    /// A server's close a second or more after its last answer, nothing
    /// asked, is its idle timeout: the shortest seen is the server's
    /// (address and port) limit. Its close right after an answer (a
    /// `Connection: close`) and the client's closes after idling say
    /// nothing of it.
    #[test]
    fn a_servers_own_close_after_idling_is_its_idle_limit() {
        let server_end = |e: &mut Ends, stream: u64, answer_ms: i64, close_ms: i64| {
            let last = Some((at(answer_ms - 1), Some(at(answer_ms))));
            let mut end = closing(stream, CLIENT, last, at(close_ms));
            end.by_server = true;
            e.ended(end);
        };
        let mut e = Ends::default();
        end(&mut e, 1, 10, 3_000);
        server_end(&mut e, 2, 10, 500);
        assert_eq!(e.server_idle_limit(SERVER), None);
        server_end(&mut e, 3, 100, 6_100);
        server_end(&mut e, 4, 100, 8_100);
        assert_eq!(e.server_idle_limit(SERVER), Some((3, 6_000 * MS)));
        server_end(&mut e, 5, 100, 5_100);
        assert_eq!(e.server_idle_limit(SERVER), Some((5, 5_000 * MS)));
        let elsewhere = Endpoint {
            port: SERVER.port + 1,
            ..SERVER
        };
        assert_eq!(e.server_idle_limit(elsewhere), None);
    }

    #[test]
    fn a_client_that_closed_in_the_middle_of_its_answer_left_nothing_to_take() {
        // Closed short of what the server had sent.
        let mut e = Ends::default();
        e.ended(End {
            cut_off: true,
            ..closing(1, CLIENT, Some((at(5), Some(at(10)))), at(11))
        });
        assert_eq!(e.take_before(9, CLIENT, SERVER, at(20), NAMED), None);
        // The rest of the answer passing after the close, within the
        // server's round trip of it (sent before the close reached the
        // server): whether the end was kept or already taken.
        for taken_first in [false, true] {
            let mut e = Ends::default();
            end(&mut e, 2, 10, 11);
            if taken_first {
                e.take_before(9, CLIENT, SERVER, at(11), NAMED).unwrap();
            }
            e.answer_went_on(2, CLIENT, SERVER, at(13).ts_ns, 2 * MS);
            let cut = match taken_first {
                false => e.take_before(9, CLIENT, SERVER, at(20), NAMED).is_none(),
                true => e.settle(2).unwrap().cut_off,
            };
            assert!(cut, "taken first: {taken_first}");
        }
        // Later than that, the server sent it after it had the close (a
        // reply to it): the answer had come.
        let mut e = Ends::default();
        end(&mut e, 3, 10, 11);
        e.answer_went_on(3, CLIENT, SERVER, at(20).ts_ns, 2 * MS);
        assert!(e.take_before(9, CLIENT, SERVER, at(30), NAMED).is_some());
        // After the server's own close: not its answer going on.
        let mut e = Ends::default();
        end(&mut e, 4, 10, 11);
        e.closed_too(4, CLIENT, SERVER, at(12), true, false, Some(2 * MS));
        e.answer_went_on(4, CLIENT, SERVER, at(12).ts_ns, 2 * MS);
        assert!(
            !e.take_before(9, CLIENT, SERVER, at(30), NAMED)
                .unwrap()
                .cut_off
        );
    }

    #[test]
    fn an_end_without_an_answer_in_before_it_is_not_kept() {
        let mut e = Ends::default();
        // The answer came after the close began; or never came.
        end(&mut e, 1, 50, 40);
        e.ended(closing(1, CLIENT, Some((at(5), None)), at(10)));
        e.ended(closing(1, CLIENT, None, at(10)));
        assert_eq!(e.take_before(9, CLIENT, SERVER, at(100), NAMED), None);
    }

    #[test]
    fn ends_older_than_the_window_are_forgotten() {
        let mut e = Ends::default();
        end(&mut e, 1, 10, 11);
        let late = at(10 + WINDOW_NS / 1_000_000 + 1);
        assert_eq!(e.take_before(9, CLIENT, SERVER, late, NAMED), None);
        // Another client's end a window later expires the first.
        let later = at(11 + WINDOW_NS / 1_000_000 + 1);
        e.ended(closing(2, SERVER.ip, Some((later, Some(later))), later));
        assert!(!e.by_route.contains_key(&(CLIENT, SERVER.ip, 443)));
        assert_eq!(e.order.len(), 1);
    }

    #[test]
    fn a_route_keeps_its_newest_ends() {
        let mut e = Ends::default();
        let n = PER_ROUTE as u64 + 10;
        for s in 0..n {
            end(&mut e, s, s as i64 * 10, s as i64 * 10 + 1);
        }
        let kept = &e.by_route[&(CLIENT, SERVER.ip, 443)];
        assert_eq!(kept.len(), PER_ROUTE);
        assert_eq!(kept.front().unwrap().stream, 10);
    }

    #[test]
    fn names_hash_apart_and_case_blind() {
        assert_eq!(name_hash(None), 0);
        assert_ne!(name_hash(Some("a.example")), 0);
        assert_eq!(name_hash(Some("A.example")), name_hash(Some("a.example")));
        assert_ne!(name_hash(Some("a.example")), name_hash(Some("b.example")));
    }
}
