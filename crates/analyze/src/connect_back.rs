//! Connections a server opens back to its client's host while the client
//! waits for it: FTP's active mode (the client's `PORT`, then the server
//! connects to it for the data before it answers `RETR` with `150`), an
//! ident lookup (RFC 1413: the server asks the client's port 113 who the
//! user is before it greets). The client's wait holds that connection's
//! handshake, a round trip of the network's, or, when the client's host
//! drops it, the server's time-out: no work of the server's.
//!
//! An answer (or a greeting) is paired with the first connection whose
//! SYN the server's address sent to the client's address (another
//! connection than this one; not when the two addresses are one, where
//! every connection the host opens would qualify) after the request began
//! and before the answer came; the connection's first SYN-ACK, if any, says when its
//! handshake was done. Bounded: the newest [`KEPT`] SYNs and SYN-ACKs.

use std::collections::VecDeque;
use std::net::IpAddr;

use rustc_hash::{FxHashMap, FxHashSet};

use crate::connection::Stamp;
use crate::model::Endpoint;

/// SYNs (and SYN-ACKs) kept for the waits still open.
const KEPT: usize = 4096;

/// A connection the server opened to its client's host during a wait:
/// what the exchange's facts carry (`Exchange::connect_back`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectBack {
    /// The connection (`tcp.stream`).
    pub stream: u64,
    /// Where it went: the client's address, the port the server dialed
    /// (113: ident; FTP: the port the client's `PORT` named).
    pub to: Endpoint,
    /// Its first SYN.
    pub syn: Stamp,
    /// Its first SYN-ACK (the client's host accepted), if it came.
    pub accepted: Option<Stamp>,
}

/// The SYNs and SYN-ACKs seen lately (track.rs keeps one for the capture).
#[derive(Default)]
pub(crate) struct Dials {
    /// (stream, from address, to, first SYN), in capture order.
    syns: VecDeque<(u64, IpAddr, Endpoint, Stamp)>,
    /// How many of `syns` went from one address to another: a wait whose
    /// server dialed nothing to its client (nearly every one) is told by
    /// one lookup, without a walk of the SYNs.
    pairs: FxHashMap<(IpAddr, IpAddr), u32>,
    /// (stream, first SYN-ACK), in capture order.
    accepted: VecDeque<(u64, Stamp)>,
    /// The addresses that accepted a connection (sent a SYN-ACK): only
    /// their SYNs can be a server's dialing back. A flood's SYNs, from
    /// anywhere, cost one lookup each. (Forgotten all at once past
    /// [`KEPT`] addresses: bounded.)
    servers: FxHashSet<IpAddr>,
}

impl Dials {
    /// A connection's first SYN, from `from` to `to`: kept when `from`
    /// has accepted connections (and is not `to`'s address).
    pub fn syn(&mut self, stream: u64, from: IpAddr, to: Endpoint, at: Stamp) {
        if from == to.ip || !self.servers.contains(&from) {
            return;
        }
        if self.syns.len() == KEPT {
            if let Some((_, old_from, old_to, _)) = self.syns.pop_front() {
                if let Some(n) = self.pairs.get_mut(&(old_from, old_to.ip)) {
                    *n -= 1;
                    if *n == 0 {
                        self.pairs.remove(&(old_from, old_to.ip));
                    }
                }
            }
        }
        self.syns.push_back((stream, from, to, at));
        *self.pairs.entry((from, to.ip)).or_insert(0) += 1;
    }

    /// Whether `server` opened a connection to `client` lately (not when
    /// they are one address: [`Dials::during`]).
    pub fn dialed(&self, server: IpAddr, client: IpAddr) -> bool {
        server != client && self.pairs.contains_key(&(server, client))
    }

    /// A connection's first SYN-ACK, sent by `server`.
    pub fn accepted(&mut self, stream: u64, server: IpAddr, at: Stamp) {
        if self.servers.len() == KEPT && !self.servers.contains(&server) {
            self.servers.clear();
        }
        self.servers.insert(server);
        if self.accepted.len() == KEPT {
            self.accepted.pop_front();
        }
        self.accepted.push_back((stream, at));
    }

    /// The first connection (not `stream`) that `server` opened to
    /// `client` with its SYN seen from `from_ns` to `to_ns`.
    pub fn during(
        &self,
        stream: u64,
        server: IpAddr,
        client: IpAddr,
        from_ns: i64,
        to_ns: i64,
    ) -> Option<ConnectBack> {
        // A client on the server's own host (loopback, a host talking to
        // itself): any connection the host opens is "to the client's
        // host", a proxy's call to its upstream as much as any other.
        if !self.dialed(server, client) {
            return None;
        }
        let (dial, _, to, syn) = self
            .syns
            .iter()
            .rev()
            .take_while(|(.., at)| at.ts_ns >= from_ns)
            .filter(|(s, from, to, at)| {
                *s != stream && *from == server && to.ip == client && at.ts_ns <= to_ns
            })
            .last()?;
        let accepted = self
            .accepted
            .iter()
            .rev()
            .take_while(|(_, at)| at.ts_ns >= syn.ts_ns)
            .find(|(s, _)| s == dial)
            .map(|(_, at)| *at);
        Some(ConnectBack {
            stream: *dial,
            to: *to,
            syn: *syn,
            accepted,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    const MS: i64 = 1_000_000;

    fn ip(last: u8) -> IpAddr {
        IpAddr::V4(Ipv4Addr::new(10, 0, 0, last))
    }

    fn at(frame: u64, ms: i64) -> Stamp {
        Stamp {
            frame,
            ts_ns: ms * MS,
        }
    }

    const CLIENT: u8 = 1;
    const SERVER: u8 = 2;

    #[test]
    fn a_connection_the_server_opened_to_its_client_during_the_wait_is_found() {
        let mut d = Dials::default();
        // Both hosts serve: the server its control connection, the client
        // the data connections.
        d.accepted(0, ip(SERVER), at(2, 0));
        d.accepted(7, ip(CLIENT), at(3, 0));
        // The control connection (0) itself, then the client's other
        // connection to the server (1), then the server's data connection
        // back to the client (2), accepted a round trip later.
        d.syn(
            0,
            ip(CLIENT),
            Endpoint {
                ip: ip(SERVER),
                port: 21,
            },
            at(1, 0),
        );
        d.syn(
            1,
            ip(CLIENT),
            Endpoint {
                ip: ip(SERVER),
                port: 21,
            },
            at(9, 100),
        );
        let data = Endpoint {
            ip: ip(CLIENT),
            port: 40001,
        };
        d.syn(2, ip(SERVER), data, at(11, 120));
        d.accepted(1, ip(SERVER), at(12, 130));
        d.accepted(2, ip(CLIENT), at(13, 160));
        let back = d
            .during(0, ip(SERVER), ip(CLIENT), 110 * MS, 170 * MS)
            .expect("found");
        assert_eq!((back.stream, back.to, back.syn), (2, data, at(11, 120)));
        assert_eq!(back.accepted, Some(at(13, 160)));
        // Not before the wait began, nor after the answer came.
        assert_eq!(
            d.during(0, ip(SERVER), ip(CLIENT), 121 * MS, 170 * MS),
            None
        );
        assert_eq!(d.during(0, ip(SERVER), ip(CLIENT), 0, 119 * MS), None);
        // A client on the server's own address: nothing can be told.
        let mut same = Dials::default();
        same.syn(
            5,
            ip(SERVER),
            Endpoint {
                ip: ip(SERVER),
                port: 8080,
            },
            at(20, 120),
        );
        assert_eq!(
            same.during(0, ip(SERVER), ip(SERVER), 110 * MS, 170 * MS),
            None
        );
        // Not another host's, nor the client's own connections.
        assert_eq!(d.during(0, ip(3), ip(CLIENT), 0, 170 * MS), None);
        assert_eq!(
            d.during(0, ip(CLIENT), ip(SERVER), 50 * MS, 170 * MS)
                .map(|b| b.stream),
            Some(1),
            "the client's connection, asked the other way round"
        );
    }

    #[test]
    fn an_unanswered_connection_has_no_acceptance() {
        let mut d = Dials::default();
        d.accepted(0, ip(SERVER), at(2, 0));
        let ident = Endpoint {
            ip: ip(CLIENT),
            port: 113,
        };
        d.syn(1, ip(SERVER), ident, at(4, 50));
        let back = d
            .during(0, ip(SERVER), ip(CLIENT), 40 * MS, 2050 * MS)
            .expect("found");
        assert_eq!((back.stream, back.to.port, back.accepted), (1, 113, None));
        // A host that never accepted a connection dials nobody back: its
        // SYNs (a flood's, a client's) are not kept.
        let mut flood = Dials::default();
        flood.syn(1, ip(9), ident, at(4, 50));
        assert!(!flood.dialed(ip(9), ip(CLIENT)));
    }
}
