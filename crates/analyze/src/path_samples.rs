//! How much longer than usual each client's handshakes took, over time:
//! the queue on the client's side of the path.
//!
//! A connection knows the path's round trip from its own handshake. When
//! a client opens many connections at once (a browser loading a page),
//! they fill its access link's queue together, and every round trip grows
//! long after its handshake was timed: a response that came a queue later
//! is not the server thinking. The client's handshakes meanwhile measured
//! the queue: SYN -> SYN-ACK at the capture point is the server's side of
//! the path, and beyond the fastest handshake with the same server (its
//! baseline: another server is another path) it is the queue then.

use std::collections::VecDeque;
use std::net::IpAddr;

use rustc_hash::FxHashMap;

/// Handshakes kept per client: the newest.
const PER_CLIENT: usize = 64;

/// Clients, and client and server pairs, kept; beyond this the ones heard
/// from longest ago are dropped (a scan, or handshakes with many servers).
const MAX_ENTRIES: usize = 4096;

/// One clean handshake of a client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Handshake {
    syn_ns: i64,
    server: IpAddr,
    /// SYN -> SYN-ACK at the capture point.
    gap_ns: i64,
}

/// One of a client's handshakes, as a connection of that client sees it:
/// when it measured the path (from its SYN to its SYN-ACK, at the capture
/// point) and how much more queue it found there than the connection's
/// own handshake did (negative: less).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueSample {
    pub from_ns: i64,
    pub to_ns: i64,
    pub beyond_ns: i64,
}

#[derive(Debug, Default)]
pub(crate) struct PathSamples {
    /// Each client's newest clean handshakes.
    clients: FxHashMap<IpAddr, VecDeque<Handshake>>,
    /// The fastest SYN -> SYN-ACK from each client to each server, and
    /// when it was last updated.
    baselines: FxHashMap<(IpAddr, IpAddr), (i64, i64)>,
}

impl PathSamples {
    /// A clean handshake (one SYN, one SYN-ACK) from `client` to `server`:
    /// its SYN at `syn_ns`, its SYN-ACK `gap_ns` later.
    pub(crate) fn note(&mut self, client: IpAddr, server: IpAddr, syn_ns: i64, gap_ns: i64) {
        if self.clients.len() >= MAX_ENTRIES && !self.clients.contains_key(&client) {
            let newest = |q: &VecDeque<Handshake>| q.back().map_or(i64::MIN, |h| h.syn_ns);
            let cutoff = median(self.clients.values().map(newest).collect());
            self.clients.retain(|_, q| newest(q) > cutoff);
        }
        if self.baselines.len() >= MAX_ENTRIES && !self.baselines.contains_key(&(client, server)) {
            let cutoff = median(self.baselines.values().map(|b| b.1).collect());
            self.baselines.retain(|_, b| b.1 > cutoff);
        }
        let q = self.clients.entry(client).or_default();
        if q.len() == PER_CLIENT {
            q.pop_front();
        }
        q.push_back(Handshake {
            syn_ns,
            server,
            gap_ns,
        });
        let b = self
            .baselines
            .entry((client, server))
            .or_insert((gap_ns, syn_ns));
        *b = (b.0.min(gap_ns), syn_ns);
    }

    /// The queue the client's handshakes with SYNs between `from_ns` and
    /// `to_ns` found, beyond what the connection's own handshake (the one
    /// to `server` at `own_syn_ns`, if it had one: 0 beyond itself) found:
    /// how much longer each handshake took than its server's fastest, less
    /// the own handshake's excess (negative when it found less queue).
    pub(crate) fn queue_beyond_own(
        &self,
        client: IpAddr,
        server: IpAddr,
        from_ns: i64,
        to_ns: i64,
        own_syn_ns: Option<i64>,
    ) -> Vec<QueueSample> {
        let Some(q) = self.clients.get(&client) else {
            return Vec::new();
        };
        let queue = |h: &Handshake| {
            let base = self
                .baselines
                .get(&(client, h.server))
                .map_or(h.gap_ns, |b| b.0);
            h.gap_ns.saturating_sub(base).max(0)
        };
        let own = q
            .iter()
            .find(|h| Some(h.syn_ns) == own_syn_ns && h.server == server)
            .map_or(0, queue);
        q.iter()
            .filter(|h| (from_ns..=to_ns).contains(&h.syn_ns))
            .map(|h| QueueSample {
                from_ns: h.syn_ns,
                to_ns: h.syn_ns.saturating_add(h.gap_ns),
                beyond_ns: queue(h).saturating_sub(own),
            })
            .collect()
    }
}

fn median(mut v: Vec<i64>) -> i64 {
    let mid = v.len() / 2;
    *v.select_nth_unstable(mid).1
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    const MS: i64 = 1_000_000;

    fn ip(a: u8) -> IpAddr {
        IpAddr::V4(Ipv4Addr::new(10, 0, 0, a))
    }

    /// `example.pcap`: a client's handshakes with two servers took 17 ms
    /// each, then 106 and 114 ms while its connections filled the link.
    #[test]
    fn a_handshake_slower_than_its_servers_fastest_measured_a_queue() {
        let mut p = PathSamples::default();
        let (client, a, b) = (ip(6), ip(9), ip(53));
        p.note(client, a, 3_124 * MS, 17 * MS);
        p.note(client, b, 3_690 * MS, 17 * MS);
        p.note(client, a, 3_850 * MS, 106 * MS);
        p.note(client, b, 4_329 * MS, 114 * MS);
        // Another server far away: long, but not a queue (its baseline).
        p.note(client, ip(70), 4_600 * MS, 197 * MS);
        // Another client's handshakes say nothing about this one's link.
        p.note(ip(7), a, 4_000 * MS, 300 * MS);
        let beyond = |v: Vec<QueueSample>| -> Vec<(i64, i64)> {
            v.iter().map(|q| (q.from_ns, q.beyond_ns)).collect()
        };
        let seen = beyond(p.queue_beyond_own(client, a, 0, 5_000 * MS, Some(3_124 * MS)));
        let expect = [
            (3_124 * MS, 0),
            (3_690 * MS, 0),
            (3_850 * MS, 89 * MS),
            (4_329 * MS, 97 * MS),
            (4_600 * MS, 0),
        ];
        assert_eq!(seen, expect);
        // A connection that shook hands in the queue: beyond its own.
        let seen = p.queue_beyond_own(client, a, 3_800 * MS, 5_000 * MS, Some(3_850 * MS));
        // Measured from the SYN to the SYN-ACK.
        assert_eq!((seen[0].from_ns, seen[0].to_ns), (3_850 * MS, 3_956 * MS));
        let seen = beyond(seen);
        assert_eq!(
            seen,
            [
                (3_850 * MS, 0),
                (4_329 * MS, 8 * MS),
                (4_600 * MS, -89 * MS)
            ]
        );
        let seen = beyond(p.queue_beyond_own(client, a, 0, 3_700 * MS, Some(3_850 * MS)));
        assert_eq!(seen, [(3_124 * MS, -89 * MS), (3_690 * MS, -89 * MS)]);
    }

    #[test]
    fn memory_stays_bounded_per_client_and_in_clients_and_paths() {
        let mut p = PathSamples::default();
        for i in 0..100 {
            p.note(ip(1), ip(9), i * MS, 17 * MS + i);
        }
        assert_eq!(p.clients[&ip(1)].len(), PER_CLIENT);
        for i in 0..(MAX_ENTRIES as u32 * 3) {
            let other = IpAddr::V4(Ipv4Addr::from(0x0b00_0000 + i));
            p.note(other, other, i as i64 + 1000 * MS, 17 * MS);
        }
        assert!(p.clients.len() <= MAX_ENTRIES);
        assert!(p.baselines.len() <= MAX_ENTRIES);
        // The newest survive.
        let last = IpAddr::V4(Ipv4Addr::from(0x0b00_0000 + MAX_ENTRIES as u32 * 3 - 1));
        assert!(p.clients.contains_key(&last));
    }
}
