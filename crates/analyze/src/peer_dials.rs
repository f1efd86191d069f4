//! The servers each client dialled lately: a client that opened
//! connections to many different servers within a second (a peer-to-peer
//! client dialling its peers, a crawler, a scanner) waits on none of them
//! alone, and a dial nothing answered held that dial only (nDPI's
//! ethereum.pcap: a node dialling 56 peers at once, one of them gone).
//!
//! The tracker notes each connection's first SYN, per client; a
//! connection whose SYNs went unanswered counts, when it is handed on,
//! the other servers its client dialled within [`NEAR_NS`] of its own
//! first SYN. Bounded: the newest [`KEPT`] dials of the [`CLIENTS`]
//! clients heard from most lately.

use std::collections::VecDeque;
use std::net::IpAddr;

use rustc_hash::FxHashMap;

/// Dials kept per client.
const KEPT: usize = 64;
/// Clients kept (the table emptied when full: a client then counts
/// afresh).
const CLIENTS: usize = 1024;
/// How near a dial must be to count as made at once.
pub const NEAR_NS: i64 = 1_000_000_000;

/// Every client's newest dials.
#[derive(Debug, Default)]
pub(crate) struct PeerDials {
    clients: FxHashMap<IpAddr, VecDeque<(i64, IpAddr)>>,
    /// Per host, the first other host it was seen in a TCP connection
    /// with, dialled or met mid-flow (a capture that began after the
    /// SYN), and whether it was seen with a second: a capture of more
    /// than one server's traffic (nDPI's viber.pcap 1, judged in session
    /// 88: its phone's first dials all to one server, its connection to
    /// another already open when the capture began).
    talked: FxHashMap<IpAddr, (IpAddr, bool)>,
}

impl PeerDials {
    /// A TCP connection between `a` and `b` was first seen (once per
    /// connection, either end the client).
    pub(crate) fn met(&mut self, a: IpAddr, b: IpAddr) {
        if self.talked.len() >= CLIENTS {
            self.talked.clear();
        }
        for (host, other) in [(a, b), (b, a)] {
            let seen = self.talked.entry(host).or_insert((other, false));
            seen.1 |= seen.0 != other;
        }
    }

    /// `client` sent a connection's first SYN to `server` at `ts_ns`.
    pub(crate) fn dialled(&mut self, client: IpAddr, server: IpAddr, ts_ns: i64) {
        push_newest(&mut self.clients, client, (ts_ns, server), CLIENTS, KEPT);
    }

    /// When `client` dialled servers other than `server` from `from_ns` on
    /// (its kept dials, oldest first), when they are known: all its dials
    /// since then are still kept, and it dialled another server at some
    /// time, or was seen with one (the capture is not one of this
    /// server's alone).
    pub(crate) fn others_since(
        &self,
        client: IpAddr,
        server: IpAddr,
        from_ns: i64,
    ) -> Option<Vec<i64>> {
        let dials = self.clients.get(&client)?;
        let covered = dials.len() < KEPT || dials.front().is_some_and(|&(t, _)| t <= from_ns);
        let elsewhere = dials.iter().any(|&(_, s)| s != server)
            || self
                .talked
                .get(&client)
                .is_some_and(|&(first, second)| second || first != server);
        if !covered || !elsewhere {
            return None;
        }
        Some(
            dials
                .iter()
                .filter(|&&(t, s)| s != server && t >= from_ns)
                .map(|&(t, _)| t)
                .collect(),
        )
    }

    /// How many other servers than `server` `client` dialled within
    /// [`NEAR_NS`] of `ts_ns` (as far as its kept dials go).
    pub(crate) fn beside(&self, client: IpAddr, server: IpAddr, ts_ns: i64) -> u32 {
        let Some(dials) = self.clients.get(&client) else {
            return 0;
        };
        let mut others: Vec<IpAddr> = dials
            .iter()
            .filter(|&&(t, s)| s != server && (t - ts_ns).abs() <= NEAR_NS)
            .map(|&(_, s)| s)
            .collect();
        others.sort_unstable();
        others.dedup();
        others.len() as u32
    }
}

/// Keeps `item` among `client`'s newest `kept` in `table`, which holds
/// at most `clients` clients: emptied when full (a client then counts
/// afresh), the oldest item dropped when a client's are.
pub(crate) fn push_newest<T>(
    table: &mut FxHashMap<IpAddr, VecDeque<T>>,
    client: IpAddr,
    item: T,
    clients: usize,
    kept: usize,
) {
    if table.len() >= clients && !table.contains_key(&client) {
        table.clear();
    }
    let items = table.entry(client).or_default();
    if items.len() >= kept {
        items.pop_front();
    }
    items.push_back(item);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(last: u8) -> IpAddr {
        IpAddr::V4(std::net::Ipv4Addr::new(192, 0, 2, last))
    }

    #[test]
    fn the_other_servers_dialled_within_a_second_are_counted_once_each() {
        let mut d = PeerDials::default();
        let client = ip(1);
        for (i, server) in [10, 11, 12, 12, 13].into_iter().enumerate() {
            d.dialled(client, ip(server), i as i64 * 100_000_000);
        }
        // Two seconds on: no longer at once.
        d.dialled(client, ip(14), 3_000_000_000);
        assert_eq!(d.beside(client, ip(10), 0), 3);
        assert_eq!(d.beside(ip(2), ip(10), 0), 0);
    }

    /// The other servers a client dialled since a moment, when all its
    /// dials since are kept and it dialled another server at all.
    #[test]
    fn the_other_dials_since_a_moment_are_known_while_kept() {
        let mut d = PeerDials::default();
        let client = ip(1);
        d.dialled(client, ip(10), 0);
        // Only this server dialled: the capture may be its alone.
        assert_eq!(d.others_since(client, ip(10), 0), None);
        d.dialled(client, ip(11), 100);
        d.dialled(client, ip(10), 200);
        assert_eq!(d.others_since(client, ip(10), 50), Some(vec![100]));
        assert_eq!(d.others_since(client, ip(10), 150), Some(vec![]));
        assert_eq!(d.others_since(ip(2), ip(10), 0), None);
        // Its oldest dials forgotten: what came after a moment before the
        // oldest kept one is not all known.
        for i in 0..KEPT as i64 {
            d.dialled(client, ip(12), 1_000 + i);
        }
        assert_eq!(d.others_since(client, ip(10), 150), None);
        assert_eq!(
            d.others_since(client, ip(10), 1_000).map(|v| v.len()),
            Some(KEPT)
        );
    }

    /// A client whose dials so far all went to one server, but whose
    /// connection to another was in the capture (met mid-flow, the
    /// capture begun after its SYN: nDPI's viber.pcap 1, judged in
    /// session 88): the capture is not that server's alone, and no dial
    /// since a moment is known as none.
    #[test]
    fn a_connection_met_mid_flow_shows_the_capture_is_not_one_servers() {
        let mut d = PeerDials::default();
        let client = ip(1);
        d.dialled(client, ip(10), 0);
        d.met(client, ip(10));
        assert_eq!(d.others_since(client, ip(10), 0), None);
        // Met from either end (its roles guessed by port).
        d.met(ip(20), client);
        assert_eq!(d.others_since(client, ip(10), 0), Some(vec![]));
        // Another client, met with one server only: still unknown.
        d.dialled(ip(2), ip(10), 0);
        d.met(ip(2), ip(10));
        assert_eq!(d.others_since(ip(2), ip(10), 0), None);
    }
}
