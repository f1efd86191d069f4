//! The closes of a connection's siblings: the other connections between
//! the same two addresses, and when their FINs went. An application that
//! writes on one connection when another one closes (FTP's server sends
//! `226 Transfer complete` once its data connection is closed) sends at a
//! moment another connection's FIN explains; a Nagle "release" by an ACK
//! of this connection that came a moment before is then a coincidence
//! (detect/nagle.rs). Bounded: the newest [`KEPT`] FINs, and a
//! connection learns at most [`PER_CONNECTION`] of them.

use std::collections::VecDeque;
use std::net::IpAddr;

/// FINs kept for the connections still open.
const KEPT: usize = 4096;
/// A connection's siblings' FINs, at most.
const PER_CONNECTION: usize = 64;

/// The FINs seen lately (track.rs keeps one for the capture).
#[derive(Default)]
pub(crate) struct Closes {
    /// (stream, from address, to address, capture time), in capture order.
    fins: VecDeque<(u64, IpAddr, IpAddr, i64)>,
}

impl Closes {
    /// A FIN on `stream`, from `from` to `to`, captured at `ts_ns`.
    pub fn fin(&mut self, stream: u64, from: IpAddr, to: IpAddr, ts_ns: i64) {
        if self.fins.len() == KEPT {
            self.fins.pop_front();
        }
        self.fins.push_back((stream, from, to, ts_ns));
    }

    /// The FINs of other connections between `server` and `client` (not on
    /// one address: every connection of the host would be a sibling)
    /// captured from `from_ns` to `to_ns`: (sent by the server, time).
    pub fn of_siblings(
        &self,
        stream: u64,
        server: IpAddr,
        client: IpAddr,
        from_ns: i64,
        to_ns: i64,
    ) -> Vec<(bool, i64)> {
        if server == client {
            return Vec::new();
        }
        let mut found: Vec<(bool, i64)> = self
            .fins
            .iter()
            .rev()
            .take_while(|f| f.3 >= from_ns)
            .filter(|&&(s, a, b, ts)| {
                s != stream
                    && ts <= to_ns
                    && ((a == server && b == client) || (a == client && b == server))
            })
            .take(PER_CONNECTION)
            .map(|&(_, a, _, ts)| (a == server, ts))
            .collect();
        found.reverse();
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    fn ip(last: u8) -> IpAddr {
        IpAddr::V4(Ipv4Addr::new(10, 0, 0, last))
    }

    #[test]
    fn a_connection_learns_its_siblings_fins_in_order() {
        let mut c = Closes::default();
        c.fin(0, ip(1), ip(2), 5);
        c.fin(1, ip(2), ip(1), 10);
        c.fin(1, ip(1), ip(2), 11);
        c.fin(2, ip(3), ip(2), 12);
        c.fin(0, ip(2), ip(1), 20);
        // Stream 0's siblings between 1 and 2: stream 1's two FINs.
        assert_eq!(
            c.of_siblings(0, ip(2), ip(1), 0, 30),
            [(true, 10), (false, 11)]
        );
        // Only those in its life.
        assert_eq!(c.of_siblings(0, ip(2), ip(1), 11, 30), [(false, 11)]);
        // On one address, nothing can be told.
        assert!(c.of_siblings(0, ip(2), ip(2), 0, 30).is_empty());
    }
}
