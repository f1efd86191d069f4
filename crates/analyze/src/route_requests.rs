//! The requests each client sent lately on each route (its address, the
//! server's address and port), over all its connections: whether another
//! connection carried the client's requests while one was being set up.
//!
//! A client that has several connections to a server hands each request
//! to whichever is ready when it has one (a browser's late binding of
//! requests to sockets; Chrome's backup connection 250 ms after a SYN
//! not yet answered, the loser kept idle; a WebView's pool). A connection
//! whose set-up was slow while another carried the client's requests,
//! and whose own first request left long after its set-up let it, was
//! waited for by nobody: what slowed its set-up cost nothing (rule 6 of
//! causality.rs in rttdoc-diagnose: nDPI's wechat.pcap 19, Chrome's
//! backup connection that lost the race; alexa-app.pcapng 62, a WebView
//! connection stalled ten seconds in its handshake while two others to
//! the same server carried the queued requests). A connection that
//! carried no request looks at its first FIN or RST instead
//! (alexa-app.pcapng 46: a spare closed unused). A connection without
//! such a sibling may be one its client waited for and was slow to use
//! (a phone's app building its request): nothing is claimed then.
//!
//! Bounded: [`PER_ROUTE`] requests per route, [`ROUTES_KEPT`] routes.

use std::collections::VecDeque;
use std::net::IpAddr;

use rustc_hash::FxHashMap;

/// Requests kept per route: the newest.
const PER_ROUTE: usize = 8;

/// Routes kept; beyond this the one noted first is forgotten (a server's
/// capture of many clients).
const ROUTES_KEPT: usize = 4096;

/// A client's address, the server's address and port.
pub(crate) type Route = (IpAddr, IpAddr, u16);

/// A request's first segment: when it was captured, its connection
/// (`tcp.stream`) and frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RouteRequest {
    pub ts_ns: i64,
    pub stream: u64,
    pub frame: u64,
    /// The origin its connection served, hashed (track.rs
    /// `sibling_origin`: by its TLS server name, its `Host`, or the name
    /// looked up before it; 0: none shown): one address can serve many
    /// names (a CDN's edge), and a
    /// browser's connection to one name carries none of another's
    /// requests (PcapPlusPlus's many-protocols.pcap 37, images1.ynet.co.il
    /// on the address www.calcalist.co.il's requests went to, judged in
    /// session 83).
    pub name: u64,
}

#[derive(Debug, Default)]
pub(crate) struct RouteRequests {
    by_route: FxHashMap<Route, VecDeque<RouteRequest>>,
    order: VecDeque<Route>,
}

impl RouteRequests {
    /// A request began on `route`.
    pub fn note(&mut self, route: Route, request: RouteRequest) {
        if !self.by_route.contains_key(&route) {
            if self.order.len() == ROUTES_KEPT {
                if let Some(oldest) = self.order.pop_front() {
                    self.by_route.remove(&oldest);
                }
            }
            self.order.push_back(route);
        }
        let kept = self.by_route.entry(route).or_default();
        if kept.len() == PER_ROUTE {
            kept.pop_front();
        }
        kept.push_back(request);
    }

    /// The newest request on `route` of another connection than `stream`,
    /// begun at `since_ns` or later, on a connection that served the
    /// same origin as `name` where both showed one.
    pub fn carried_since(
        &self,
        route: Route,
        since_ns: i64,
        stream: u64,
        name: u64,
    ) -> Option<RouteRequest> {
        self.by_route
            .get(&route)?
            .iter()
            .rev()
            .find(|r| {
                r.stream != stream
                    && r.ts_ns >= since_ns
                    && (r.name == 0 || name == 0 || r.name == name)
            })
            .copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PHONE: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, 7));
    const SERVER: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(192, 0, 2, 1));

    fn request(ts_ns: i64, stream: u64) -> RouteRequest {
        RouteRequest {
            ts_ns,
            stream,
            frame: stream * 10,
            name: 0,
        }
    }

    #[test]
    fn another_connections_request_since_the_set_up_began_is_found() {
        let mut seen = RouteRequests::default();
        let route = (PHONE, SERVER, 443);
        seen.note(route, request(100, 1));
        seen.note(route, request(300, 2));
        // Its own request is not another's.
        assert_eq!(seen.carried_since(route, 250, 2, 0), None);
        assert_eq!(seen.carried_since(route, 250, 3, 0), Some(request(300, 2)));
        // One before the set-up began carried nothing of its time.
        assert_eq!(seen.carried_since(route, 350, 3, 0), None);
        // Another port is another route.
        assert_eq!(seen.carried_since((PHONE, SERVER, 80), 0, 3, 0), None);
    }

    /// Another TLS server name on the same address (a CDN's edge) is
    /// another site's connection; a name not read matches any.
    #[test]
    fn a_request_to_another_server_name_is_not_this_connections() {
        let mut seen = RouteRequests::default();
        let route = (PHONE, SERVER, 443);
        seen.note(
            route,
            RouteRequest {
                name: 7,
                ..request(300, 2)
            },
        );
        assert_eq!(seen.carried_since(route, 250, 3, 8), None);
        assert_eq!(
            seen.carried_since(route, 250, 3, 7).map(|r| r.stream),
            Some(2)
        );
        assert_eq!(
            seen.carried_since(route, 250, 3, 0).map(|r| r.stream),
            Some(2)
        );
    }

    #[test]
    fn the_newest_requests_and_routes_are_kept() {
        let mut seen = RouteRequests::default();
        let route = (PHONE, SERVER, 443);
        for i in 0..(PER_ROUTE as i64 + 1) {
            seen.note(route, request(i, 1));
        }
        assert_eq!(seen.by_route[&route].len(), PER_ROUTE);
        assert_eq!(seen.by_route[&route][0].ts_ns, 1);
        for port in 0..ROUTES_KEPT as u16 {
            seen.note((PHONE, SERVER, 1000 + port), request(0, 2));
        }
        assert_eq!(seen.order.len(), ROUTES_KEPT);
        assert!(!seen.by_route.contains_key(&route));
    }
}
