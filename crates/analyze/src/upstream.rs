//! The calls a host makes while it answers: a reverse proxy's request to
//! its upstream, made while its own client waits.
//!
//! A proxy (nginx, HAProxy, an API gateway) answers its client only after
//! its upstream answered it. Captured on the proxy's host (`tcpdump -i
//! any`), both connections are in the capture, and the client's wait
//! contains the call: the proxy forwards the request (on a connection it
//! opens for it, or one it keeps), the upstream works, its answer comes,
//! and the proxy passes it on. That wait is the upstream's, not the
//! proxy's own work, and the upstream's own connection shows where it went.
//!
//! An exchange is paired with a call when, at the moment its answer leaves:
//!
//! - the capture is at this connection's server (its side of the round
//!   trip the host's own turnaround) and at the call's client, or the
//!   call leaves from the server's own address (one host, or loopback);
//! - the call is another connection, to another server, not from this
//!   exchange's client's address (unless that is the host's own), and not
//!   this one under translated addresses (a NAT's other side, twins.rs);
//! - the call's request left after this request began arriving, and its
//!   answer came before this answer left;
//! - and which call it was is certain: both requests are HTTP/1.x with the
//!   same method and the same last path segment (a proxy may rewrite the
//!   path's prefix, never the resource), one such call alone in the wait;
//!   or, where a request is not readable (TLS, another protocol), the
//!   call is the only one in the wait and no other request began on the
//!   host meanwhile (another client's request could be the call's).
//!
//! Bounded: the newest [`KEPT`] answered exchanges and opened requests,
//! and a wait's search stops after [`SEARCHED`] of them.

use std::collections::VecDeque;
use std::hash::{Hash, Hasher};

use crate::connection::Stamp;
use crate::model::{Endpoint, HostCalls, Vantage};

/// Answered exchanges (and opened requests) kept for the waits still open.
const KEPT: usize = 4096;
/// A wait's search looks back over at most this many answered exchanges;
/// a host busier than that during one wait pairs nothing in it.
const SEARCHED: usize = 512;

/// A call the host made while an exchange waited for its answer: what the
/// exchange's facts carry (`Exchange::upstream`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpstreamCall {
    /// The call's connection (`tcp.stream`).
    pub stream: u64,
    /// The upstream it called.
    pub server: Endpoint,
    /// The call's SYN, when its connection was opened during the wait (a
    /// connection per request, as nginx's default `proxy_pass` does).
    pub connect: Option<Stamp>,
    /// The call's request: its first segment.
    pub request: Stamp,
    /// The call's answer: its first segment.
    pub answer: Stamp,
    /// Both requests were read as HTTP/1.x and agree (otherwise the call
    /// was the only one in the wait).
    pub by_request_line: bool,
}

/// An exchange that just got its answer, with what it knows of its
/// connection (track.rs fills it from the connection); kept as it is for
/// the waits that come after.
pub(crate) struct Asking {
    pub stream: u64,
    /// The earlier connection this one is under translated addresses
    /// (twins.rs): a NAT's two sides are one connection, not a call.
    pub same_as: Option<u64>,
    pub client: Endpoint,
    pub server: Endpoint,
    pub syn: Option<Stamp>,
    /// Where the capture is on the connection's path: at its server or
    /// client (rtt.rs), or, on a round trip under [`NEAR_NS`], near both.
    pub place: Place,
    pub request_first: Stamp,
    pub answer: Stamp,
    /// [`request_key`] of the request, 0 when it was not HTTP/1.x.
    pub key: u64,
}

/// The host's recent exchanges: answered ones, and the times requests
/// began; beside them the connections opened and closed lately, which
/// other waits are paired with (connect_back.rs, closes.rs). track.rs
/// keeps one for the capture.
#[derive(Default)]
pub(crate) struct Calls {
    /// The connections opened lately: those a server opened back to its
    /// client's host (connect_back.rs).
    pub dials: crate::connect_back::Dials,
    /// The FINs seen lately: a connection's siblings' closes (closes.rs).
    pub closes: crate::closes::Closes,
    /// The connections ended lately, per route: what a new connection
    /// could have reused (reuse.rs).
    pub ends: crate::reuse::Ends,
    /// The name lookups clients made lately: what a new connection's
    /// client waited for before its SYN (dns.rs).
    pub lookups: crate::dns::Lookups,
    /// The redirects answered lately that no request has followed yet
    /// (redirect.rs).
    pub redirects: crate::redirect::Redirects,
    /// The authentication challenges answered lately that no request has
    /// answered yet (challenge.rs).
    pub challenges: crate::challenge::Challenges,
    /// The CORS preflights answered lately whose requests have not come
    /// yet (preflight.rs).
    pub preflights: crate::preflight::Preflights,
    /// The fetches clients made lately to check a certificate
    /// (cert_fetch.rs).
    pub certificate_fetches: crate::cert_fetch::CertificateFetches,
    /// The clients seen using TLS False Start (false_start.rs).
    pub false_starters: crate::false_start::FalseStarters,
    /// The requests each client sent lately on each route
    /// (route_requests.rs).
    pub route_requests: crate::route_requests::RouteRequests,
    /// The TLS session IDs servers issued (issued_sessions.rs).
    pub issued_sessions: crate::issued_sessions::IssuedSessions,
    /// The servers' SYN-ACK clocks, by client (shared_clock.rs).
    pub server_clocks: crate::shared_clock::ServerClocks,
    /// Each client's TCP clock rate, read off its SYNs (client_clock.rs).
    pub client_clocks: crate::client_clock::ClientClocks,
    /// The server's echoes of each client's timestamps (uplink.rs).
    pub uplink_echoes: crate::uplink::UplinkEchoes,
    /// Each client's uplink, read from the servers' ACKs of its bursts
    /// (uplink_load.rs).
    pub uplink_loads: crate::uplink_load::UplinkLoads,
    /// The servers each client dialled lately (peer_dials.rs).
    pub peer_dials: crate::peer_dials::PeerDials,
    /// The connections on which each client's data went unanswered
    /// lately, re-sent by its timer (black_holes.rs).
    pub black_holes: crate::black_holes::BlackHoles,
    /// The sizes of the tickets servers sent (ticket_sizes.rs).
    pub ticket_sizes: crate::ticket_sizes::TicketSizes,
    /// A SYN-ACK was seen: the capture holds packets both ways (a QUIC
    /// connection never answered is then a path's silence, not a
    /// one-way capture's).
    pub syn_ack_seen: bool,
    /// A client went on past its SYN (an ACK, data) on a connection the
    /// capture held nothing of its server's for: with no SYN-ACK anywhere,
    /// the capture kept the clients' direction only.
    pub client_went_on_unseen: bool,
    /// A server's packet was seen, on any connection: the capture keeps
    /// the servers' direction too, whatever SYN-ACKs it missed (it began
    /// after their handshakes: nDPI's MacOS capture.pcap).
    pub server_spoke: bool,
    answered: VecDeque<Asking>,
    /// The requests begun lately, in capture order.
    opened: VecDeque<Opened>,
}

/// A request that began: on which connection, of which client, its
/// first segment.
#[derive(Debug, Clone, Copy)]
struct Opened {
    stream: u64,
    client: std::net::IpAddr,
    at: Stamp,
}

/// How long a client must have asked nothing before a request on another
/// connection, and after a request's end, for that request to be
/// [`AskedElsewhere`]: a person's pause, not a program's busy moment.
pub const ASKED_ELSEWHERE_AFTER_NS: i64 = 1_000_000_000;

/// The client's newest request on another connection while a request
/// waited, begun after it had asked nothing for
/// [`ASKED_ELSEWHERE_AFTER_NS`] (`Exchange::asked_elsewhere`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AskedElsewhere {
    /// That connection's `tcp.stream`.
    pub stream: u64,
    /// The request's first segment.
    pub request: Stamp,
}

impl Calls {
    /// A request of `client`'s began on `stream`, its first segment `at`.
    pub fn opened(&mut self, stream: u64, client: std::net::IpAddr, at: Stamp) {
        if self.opened.len() == KEPT {
            self.opened.pop_front();
        }
        self.opened.push_back(Opened { stream, client, at });
    }

    /// `client`'s newest request on a connection other than `stream`
    /// after `since_ns` (a request's end) and by `until_ns` (its answer),
    /// where it came alone: the client had begun no request anywhere in
    /// the [`ASKED_ELSEWHERE_AFTER_NS`] before it (this one's included).
    /// None where the host began more than [`SEARCHED`] requests in that
    /// time: a busy host's waits are not searched.
    pub fn asked_elsewhere(
        &self,
        client: std::net::IpAddr,
        stream: u64,
        since_ns: i64,
        until_ns: i64,
    ) -> Option<AskedElsewhere> {
        if until_ns - since_ns < ASKED_ELSEWHERE_AFTER_NS {
            return None;
        }
        let mut newest: Option<&Opened> = None;
        for (searched, o) in self.opened.iter().rev().enumerate() {
            if searched >= SEARCHED {
                return None;
            }
            if o.at.ts_ns > until_ns || o.client != client {
                continue;
            }
            match newest {
                None if o.stream == stream => {}
                None if o.at.ts_ns - since_ns < ASKED_ELSEWHERE_AFTER_NS => return None,
                None => newest = Some(o),
                // (The client's request before it, a second or more
                // earlier: it came alone.)
                Some(n) if n.at.ts_ns - o.at.ts_ns < ASKED_ELSEWHERE_AFTER_NS => return None,
                Some(_) => break,
            }
        }
        newest.map(|o| AskedElsewhere {
            stream: o.stream,
            request: o.at,
        })
    }

    /// An exchange got its answer: the call it waited for, if one is
    /// certain (module docs), else the host's calls in the wait, if any;
    /// and the exchange kept for later waits.
    pub fn answered(&mut self, x: Asking) -> (Option<UpstreamCall>, Option<HostCalls>) {
        let mut during = None;
        let call = self.call_of(&x, &mut during);
        if self.answered.len() == KEPT {
            self.answered.pop_front();
        }
        self.answered.push_back(x);
        match call {
            Some(call) => (Some(call), None),
            None => (None, during),
        }
    }

    fn call_of(&self, x: &Asking, during: &mut Option<HostCalls>) -> Option<UpstreamCall> {
        let begun = x.request_first.ts_ns;
        // The calls in the wait, and those whose request line agrees:
        // counted, the first of each kept (no allocation per answer).
        let (mut calls, mut any) = (0usize, None);
        let (mut agreeing, mut by_line) = (0usize, None);
        for (searched, a) in self.answered.iter().rev().enumerate() {
            if a.answer.ts_ns < begun {
                break;
            }
            if searched >= SEARCHED {
                return None;
            }
            if in_the_wait(x, a) {
                calls += 1;
                any.get_or_insert(a);
                if x.key != 0 && a.key == x.key {
                    agreeing += 1;
                    by_line.get_or_insert(a);
                }
            }
        }
        // The host's calls, by connection, the first of them named (only
        // where there were some: the rare case).
        if any.is_some() {
            let mut streams: Vec<(u64, i64, Endpoint)> = self
                .answered
                .iter()
                .rev()
                .take_while(|a| a.answer.ts_ns >= begun)
                .take(SEARCHED)
                // (Not back to the client's host: connect_back.rs.)
                .filter(|a| in_the_wait(x, a) && a.server.ip != x.client.ip)
                .map(|a| (a.stream, a.request_first.ts_ns, a.server))
                .collect();
            streams.sort_unstable_by_key(|&(stream, t, _)| (stream, t));
            streams.dedup_by_key(|&mut (stream, _, _)| stream);
            *during = streams
                .iter()
                .min_by_key(|&&(_, t, _)| t)
                .map(|&(stream, _, server)| HostCalls {
                    calls: streams.len() as u32,
                    first_stream: stream,
                    first_server: server,
                });
        }
        let (call, by_request_line) = match (agreeing, by_line, calls, any) {
            (1, Some(one), _, _) => (one, true),
            (0, _, 1, Some(one)) if x.key == 0 || one.key == 0 => {
                // Unreadable: the only call, and no other request began
                // on the host while it was made.
                let others = self
                    .opened
                    .iter()
                    .rev()
                    .take_while(|o| o.at.ts_ns >= begun)
                    .any(|o| o.stream != x.stream && o.stream != one.stream);
                if others {
                    return None;
                }
                (one, false)
            }
            _ => return None,
        };
        Some(UpstreamCall {
            stream: call.stream,
            server: call.server,
            connect: call.syn.filter(|s| s.ts_ns >= begun),
            request: call.request_first,
            answer: call.answer,
            by_request_line,
        })
    }
}

/// Whether `a` is a call the host that serves `x` made while `x` waited:
/// asked after `x`'s request began, answered before `x`'s answer left.
fn in_the_wait(x: &Asking, a: &Asking) -> bool {
    a.request_first.ts_ns >= x.request_first.ts_ns
        && a.answer.ts_ns <= x.answer.ts_ns
        && a.answer.frame < x.answer.frame
        && is_the_hosts_call(x, a)
}

/// Whether `a` can be a call of the host that serves `x`.
fn is_the_hosts_call(x: &Asking, a: &Asking) -> bool {
    if a.stream == x.stream
        || a.server == x.server
        || a.same_as == Some(x.stream)
        || x.same_as == Some(a.stream)
    {
        return false;
    }
    let same_host =
        a.client.ip == x.server.ip || (a.client.ip.is_loopback() && x.server.ip.is_loopback());
    if same_host {
        return true;
    }
    // Another address of the host: the capture must be at both ends
    // of the proxy, and the call must not come from this client.
    a.client.ip != x.client.ip && x.place.at_server && a.place.at_client
}

/// A key for an HTTP/1.x request that a proxy keeps when it forwards it:
/// the method and the path's last segment with its query (a proxy may
/// rewrite the prefix: `location /api/ { proxy_pass http://app/; }`).
/// Never 0 (0 stands for no request).
pub(crate) fn request_key(line: &crate::exchange::RequestLine<'_>) -> u64 {
    let (method, target) = (line.method, line.target.unwrap_or_default());
    // An absolute form (a forward proxy's request) ends the same way.
    let resource = match target.iter().rposition(|&b| b == b'/') {
        Some(i) => &target[i..],
        None => target,
    };
    let mut h = rustc_hash::FxHasher::default();
    method.hash(&mut h);
    resource.hash(&mut h);
    h.finish().max(1)
}

/// A round trip shorter than this is within this of either end: a call
/// to an upstream on the host's own network is near its client wherever
/// on that network the capture is.
pub(crate) const NEAR_NS: i64 = 1_000_000;

/// Where the capture is on a connection's path, as far as it has shown.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Place {
    /// At the server: its side of the round trip is its own turnaround.
    pub at_server: bool,
    /// At the client, or the whole round trip under [`NEAR_NS`].
    pub at_client: bool,
}

impl Place {
    /// From the two sides of the round trip, capture point -> server ->
    /// capture point and capture point -> client -> capture point
    /// (connection.rs), when both are known.
    pub(crate) fn of(server_side_ns: Option<i64>, client_side_ns: Option<i64>) -> Place {
        let (Some(s), Some(c)) = (server_side_ns, client_side_ns) else {
            return Place::default();
        };
        let vantage = crate::rtt::vantage(s, c);
        Place {
            at_server: vantage == Vantage::Server,
            at_client: vantage == Vantage::Client || (s >= 0 && c >= 0 && s + c < NEAR_NS),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{IpAddr, Ipv4Addr};

    const MS: i64 = 1_000_000;

    fn ep(last: u8, port: u16) -> Endpoint {
        Endpoint {
            ip: IpAddr::V4(Ipv4Addr::new(10, 0, 0, last)),
            port,
        }
    }

    fn at(frame: u64, ms: i64) -> Stamp {
        Stamp {
            frame,
            ts_ns: ms * MS,
        }
    }

    const CLIENT: u8 = 1;
    const PROXY: u8 = 2;
    const UPSTREAM: u8 = 3;

    /// An exchange of a client with the proxy (port 80), request at
    /// `request` ms, answered at `answer` ms.
    fn front(stream: u64, port: u16, request: (u64, i64), answer: (u64, i64), key: u64) -> Asking {
        Asking {
            stream,
            same_as: None,
            client: ep(CLIENT, port),
            server: ep(PROXY, 80),
            syn: None,
            place: Place {
                at_server: true,
                at_client: false,
            },
            request_first: at(request.0, request.1),
            answer: at(answer.0, answer.1),
            key,
        }
    }

    /// The proxy's call to its upstream (port 8080).
    fn call(stream: u64, port: u16, request: (u64, i64), answer: (u64, i64), key: u64) -> Asking {
        Asking {
            stream,
            same_as: None,
            client: ep(PROXY, port),
            server: ep(UPSTREAM, 8080),
            syn: Some(at(request.0 - 1, request.1)),
            place: Place {
                at_server: false,
                at_client: true,
            },
            request_first: at(request.0, request.1),
            answer: at(answer.0, answer.1),
            key,
        }
    }

    /// A request of 10.0.0.1's began on `stream` at `ts_ns`.
    fn open(calls: &mut Calls, stream: u64, ts_ns: i64) {
        let client = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1));
        calls.opened(stream, client, Stamp { frame: 0, ts_ns });
    }

    /// A client that asked nothing for a second or more, then asked on
    /// another connection while a request waited: that request is the
    /// wait's (a chat's message on its own connection, the push after it
    /// on another: nDPI's KakaoTalk_chat.pcap 15); the newest such is
    /// kept. Not one that came within a second of the client's request
    /// before it (a busy moment), another client's, one on the waiting
    /// connection, nor in a wait of less than a second.
    #[test]
    fn a_clients_lone_request_elsewhere_in_a_wait_is_kept() {
        let me = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1));
        let other = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 9));
        let mut calls = Calls::default();
        calls.opened(15, me, at(1, 2_000));
        calls.opened(3, other, at(2, 4_000));
        calls.opened(0, me, at(3, 4_200));
        calls.opened(16, me, at(4, 6_000));
        calls.opened(0, me, at(5, 6_500));
        calls.opened(15, me, at(6, 9_000));
        let asked = |since: i64, until: i64| {
            calls
                .asked_elsewhere(me, 15, since * MS, until * MS)
                .map(|a| (a.stream, a.request.frame))
        };
        // 4.2 s: alone since 2 s.
        assert_eq!(asked(2_100, 4_300), Some((0, 3)));
        // 6.5 s came 0.5 s after 6 s: a busy moment, none.
        assert_eq!(asked(2_100, 6_600), None);
        assert_eq!(asked(2_100, 6_100), Some((16, 4)));
        // Less than a second after the request's end, or a short wait.
        assert_eq!(asked(3_500, 4_300), None);
        assert_eq!(asked(2_100, 2_900), None);
        // This connection's own request is not one elsewhere.
        assert_eq!(asked(7_000, 9_100), None);
        assert_eq!(
            calls
                .asked_elsewhere(other, 15, 0, 4_100 * MS)
                .map(|a| a.stream),
            Some(3)
        );
    }

    fn key(line: &str) -> u64 {
        crate::exchange::RequestLine::of(line.as_bytes()).map_or(0, |l| request_key(&l))
    }

    #[test]
    fn a_proxys_call_inside_its_clients_wait_is_the_upstreams() {
        let mut calls = Calls::default();
        open(&mut calls, 0, 0);
        open(&mut calls, 1, MS);
        let k = key("GET /api/users?id=3 HTTP/1.1\r\n");
        let upstream_key = key("GET /users?id=3 HTTP/1.0\r\n");
        assert_eq!(k, upstream_key, "the prefix is the proxy's to rewrite");
        assert_eq!(
            calls
                .answered(call(1, 40000, (3, 1), (5, 150), upstream_key))
                .0,
            None
        );
        let found = calls
            .answered(front(0, 50000, (1, 0), (6, 151), k))
            .0
            .expect("paired");
        assert_eq!(found.stream, 1);
        assert_eq!(found.server, ep(UPSTREAM, 8080));
        assert_eq!(found.connect, Some(at(2, 1)), "opened for this request");
        assert_eq!((found.request, found.answer), (at(3, 1), at(5, 150)));
        assert!(found.by_request_line);
    }

    /// A wait no call was certainly made for: the host's calls in it,
    /// by connection, the first named (nDPI's log4j-webapp-exploit.pcap
    /// 0: a web server's LDAP lookup, download and reverse shell while
    /// its client waited 19 s); none paired, none back to the client's
    /// host, none when one was paired (upstream_wait's).
    #[test]
    fn a_wait_no_call_was_paired_with_names_the_hosts_calls_in_it() {
        let mut calls = Calls::default();
        calls.answered(call(1, 40000, (3, 1), (5, 20), key("GET /a HTTP/1.1\r\n")));
        calls.answered(call(1, 40000, (7, 30), (8, 40), key("GET /b HTTP/1.1\r\n")));
        calls.answered(call(2, 40001, (9, 50), (10, 60), 0));
        // Back to the client's host: no call of the server's.
        let mut back = call(3, 40002, (11, 70), (12, 80), 0);
        back.server = ep(CLIENT, 9001);
        calls.answered(back);
        let x = front(0, 50000, (1, 0), (13, 151), key("POST /login HTTP/1.1\r\n"));
        let (paired, during) = calls.answered(x);
        assert_eq!(paired, None);
        let during = during.expect("the host's calls");
        assert_eq!(
            (during.calls, during.first_stream, during.first_server),
            (2, 1, ep(UPSTREAM, 8080))
        );
        // Paired: none named besides.
        let mut calls = Calls::default();
        let k = key("GET /x HTTP/1.1\r\n");
        calls.answered(call(1, 40000, (3, 1), (5, 150), k));
        let (paired, during) = calls.answered(front(0, 50000, (1, 0), (6, 151), k));
        assert!(paired.is_some());
        assert_eq!(during, None);
        // Nothing in the wait: nothing named.
        let mut calls = Calls::default();
        calls.answered(call(1, 40000, (3, 1), (5, 150), k));
        assert_eq!(
            calls.answered(front(0, 50000, (6, 160), (7, 200), k)).1,
            None
        );
    }

    #[test]
    fn a_request_for_another_resource_is_not_the_call() {
        let mut calls = Calls::default();
        calls.answered(call(
            1,
            40000,
            (3, 1),
            (5, 150),
            key("GET /other HTTP/1.1\r\n"),
        ));
        let x = front(0, 50000, (1, 0), (6, 151), key("GET /users HTTP/1.1\r\n"));
        assert_eq!(calls.answered(x).0, None);
    }

    #[test]
    fn an_unreadable_request_takes_the_only_call_when_nothing_else_began() {
        let mut calls = Calls::default();
        open(&mut calls, 0, 0);
        open(&mut calls, 1, MS);
        calls.answered(call(1, 40000, (3, 1), (5, 150), key("GET /x HTTP/1.1\r\n")));
        let found = calls.answered(front(0, 50000, (1, 0), (6, 151), 0)).0;
        assert!(found.is_some_and(|c| !c.by_request_line));
        // Another client's request began meanwhile: whose call it was is
        // not certain.
        let mut calls = Calls::default();
        open(&mut calls, 0, 0);
        open(&mut calls, 7, MS / 2);
        open(&mut calls, 1, MS);
        calls.answered(call(1, 40000, (3, 1), (5, 150), key("GET /x HTTP/1.1\r\n")));
        assert_eq!(calls.answered(front(0, 50000, (1, 0), (6, 151), 0)).0, None);
    }

    #[test]
    fn two_calls_for_the_same_resource_in_one_wait_pair_neither() {
        let mut calls = Calls::default();
        let k = key("GET /x HTTP/1.1\r\n");
        calls.answered(call(1, 40000, (3, 1), (5, 100), k));
        calls.answered(call(2, 40001, (7, 2), (9, 120), k));
        assert_eq!(
            calls.answered(front(0, 50000, (1, 0), (10, 151), k)).0,
            None
        );
    }

    #[test]
    fn what_is_not_inside_the_wait_or_not_the_hosts_is_no_call() {
        let k = key("GET /x HTTP/1.1\r\n");
        // Began before the request arrived.
        let mut calls = Calls::default();
        calls.answered(call(1, 40000, (3, 10), (5, 150), k));
        assert_eq!(
            calls.answered(front(0, 50000, (4, 20), (6, 151), k)).0,
            None
        );
        // Answered after the answer left (a later call).
        let mut calls = Calls::default();
        calls.answered(call(1, 40000, (3, 10), (7, 160), k));
        assert_eq!(calls.answered(front(0, 50000, (1, 0), (6, 151), k)).0, None);
        // The same server: the client's other connection to the proxy.
        let mut calls = Calls::default();
        let mut other = front(1, 50001, (3, 10), (5, 150), k);
        other.place = Place {
            at_server: false,
            at_client: true,
        };
        calls.answered(other);
        assert_eq!(calls.answered(front(0, 50000, (1, 0), (6, 151), k)).0, None);
        // The connection itself under translated addresses (a NAT on the
        // host, both sides captured).
        let mut calls = Calls::default();
        let mut twin = call(1, 40000, (3, 10), (5, 150), k);
        twin.same_as = Some(0);
        calls.answered(twin);
        assert_eq!(calls.answered(front(0, 50000, (1, 0), (6, 151), k)).0, None);
        // A call from another address, the capture not at the proxy.
        let mut calls = Calls::default();
        let mut far = call(1, 40000, (3, 10), (5, 150), k);
        far.client = ep(9, 40000);
        calls.answered(far);
        let mut x = front(0, 50000, (1, 0), (6, 151), k);
        x.place.at_server = false;
        assert_eq!(calls.answered(x).0, None);
    }

    #[test]
    fn a_round_trip_under_a_millisecond_is_near_its_client_wherever_it_was_taken() {
        // Veth or loopback: 10 us to the server, 5 us to the client.
        let near = Place::of(Some(10_000), Some(5_000));
        assert!(near.at_client && !near.at_server);
        // 40 ms away from the client, at the server.
        let server = Place::of(Some(20_000), Some(40 * MS));
        assert!(server.at_server && !server.at_client);
        // A tap in the middle of a 10 ms path is at neither end.
        assert_eq!(Place::of(Some(4 * MS), Some(6 * MS)), Place::default());
        assert_eq!(Place::of(None, Some(5_000)), Place::default());
    }

    #[test]
    fn a_request_key_is_the_method_and_the_last_segment() {
        assert_eq!(key("GET /a/b?q=1 HTTP/1.1"), key("GET /b?q=1 HTTP/1.0"));
        assert_eq!(key("GET http://h/b HTTP/1.1"), key("GET /b HTTP/1.1"));
        assert_ne!(key("GET /b HTTP/1.1"), key("POST /b HTTP/1.1"));
        assert_ne!(key("GET /b HTTP/1.1"), key("GET /c HTTP/1.1"));
        assert_eq!(key("\x16\x03\x01"), 0);
        assert_eq!(key(""), 0);
        assert_ne!(key("GET"), 0, "a head cut short still has its method");
    }
}
