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

/// Servers whose fastest handshake is kept per client; a handshake with
/// another server measures no queue (it has no baseline to exceed).
const SERVERS_PER_CLIENT: usize = 64;

/// Clients kept; beyond this the ones heard from longest ago are dropped
/// (a scan, or a server-side capture of many clients).
const MAX_CLIENTS: usize = 4096;

/// Less than this beyond the connection's own handshake is a path's
/// jitter, not a queue, and is not handed on.
const QUEUE_FLOOR_NS: i64 = 1_000_000;

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
/// own handshake did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueSample {
    pub from_ns: i64,
    pub to_ns: i64,
    pub beyond_ns: i64,
}

#[derive(Debug, Default)]
struct Client {
    /// The newest clean handshakes.
    handshakes: VecDeque<Handshake>,
    /// The fastest SYN -> SYN-ACK to each server (a few per client: a
    /// linear search beats hashing the pair).
    fastest: Vec<(IpAddr, i64)>,
    /// The SYN of the newest handshake that took longer than its server's
    /// fastest then, by more than a jitter: without one in a connection's
    /// window there is no queue to find (most connections' case), and the
    /// handshakes are not looked through.
    newest_slow_syn: Option<i64>,
}

impl Client {
    fn fastest_to(&self, server: IpAddr) -> Option<i64> {
        self.fastest
            .iter()
            .find(|(s, _)| *s == server)
            .map(|(_, gap)| *gap)
    }

    /// How much longer than its server's fastest a handshake took.
    fn queue_of(&self, h: &Handshake) -> i64 {
        let base = self.fastest_to(h.server).unwrap_or(h.gap_ns);
        h.gap_ns.saturating_sub(base).max(0)
    }
}

#[derive(Debug, Default)]
pub(crate) struct PathSamples {
    clients: FxHashMap<IpAddr, Client>,
}

impl PathSamples {
    /// A clean handshake (one SYN, one SYN-ACK) from `client` to `server`:
    /// its SYN at `syn_ns`, its SYN-ACK `gap_ns` later.
    pub(crate) fn note(&mut self, client: IpAddr, server: IpAddr, syn_ns: i64, gap_ns: i64) {
        if self.clients.len() >= MAX_CLIENTS && !self.clients.contains_key(&client) {
            let newest = |c: &Client| c.handshakes.back().map_or(i64::MIN, |h| h.syn_ns);
            let cutoff = median(self.clients.values().map(newest).collect());
            self.clients.retain(|_, c| newest(c) > cutoff);
        }
        let c = self.clients.entry(client).or_default();
        if c.handshakes.len() == PER_CLIENT {
            c.handshakes.pop_front();
        }
        c.handshakes.push_back(Handshake {
            syn_ns,
            server,
            gap_ns,
        });
        if let Some((_, fastest)) = c.fastest.iter_mut().find(|(s, _)| *s == server) {
            if gap_ns.saturating_sub(*fastest) > QUEUE_FLOOR_NS {
                c.newest_slow_syn = Some(c.newest_slow_syn.map_or(syn_ns, |t| t.max(syn_ns)));
            }
            *fastest = (*fastest).min(gap_ns);
        } else if c.fastest.len() < SERVERS_PER_CLIENT {
            c.fastest.push((server, gap_ns));
        }
    }

    /// The queue the client's handshakes with SYNs between `from_ns` and
    /// `to_ns` found beyond what the connection's own handshake (the one
    /// to `server` at `own_syn_ns`, if it had one) found: how much longer
    /// each took than its server's fastest, less the own handshake's
    /// excess. Only those that found more, by more than a path's jitter.
    pub(crate) fn queue_beyond_own(
        &self,
        client: IpAddr,
        server: IpAddr,
        from_ns: i64,
        to_ns: i64,
        own_syn_ns: Option<i64>,
    ) -> Vec<QueueSample> {
        let Some(c) = self.clients.get(&client) else {
            return Vec::new();
        };
        if c.newest_slow_syn.is_none_or(|t| t < from_ns) {
            return Vec::new();
        }
        let own = c
            .handshakes
            .iter()
            .rev()
            .find(|h| Some(h.syn_ns) == own_syn_ns && h.server == server)
            .map_or(0, |h| c.queue_of(h));
        c.handshakes
            .iter()
            .filter(|h| (from_ns..=to_ns).contains(&h.syn_ns))
            .filter_map(|h| {
                let beyond = c.queue_of(h).saturating_sub(own);
                (beyond > QUEUE_FLOOR_NS).then_some(QueueSample {
                    from_ns: h.syn_ns,
                    to_ns: h.syn_ns.saturating_add(h.gap_ns),
                    beyond_ns: beyond,
                })
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
        // Another server far away: long, but not a queue (its fastest).
        p.note(client, ip(70), 4_600 * MS, 197 * MS);
        // Another client's handshakes say nothing about this one's link.
        p.note(ip(7), a, 4_000 * MS, 300 * MS);
        let beyond = |v: Vec<QueueSample>| -> Vec<(i64, i64)> {
            v.iter().map(|q| (q.from_ns, q.beyond_ns)).collect()
        };
        let seen = p.queue_beyond_own(client, a, 0, 5_000 * MS, Some(3_124 * MS));
        // Measured from the SYN to the SYN-ACK.
        assert_eq!((seen[0].from_ns, seen[0].to_ns), (3_850 * MS, 3_956 * MS));
        assert_eq!(beyond(seen), [(3_850 * MS, 89 * MS), (4_329 * MS, 97 * MS)]);
        // A connection that shook hands in the queue: only more than its own.
        let seen = p.queue_beyond_own(client, a, 0, 5_000 * MS, Some(3_850 * MS));
        assert_eq!(beyond(seen), [(4_329 * MS, 8 * MS)]);
        // Only the window asked for.
        assert!(p
            .queue_beyond_own(client, a, 0, 3_800 * MS, None)
            .is_empty());
        // A jitter's worth more is no queue.
        p.note(client, a, 4_700 * MS, 17 * MS + MS / 2);
        assert!(p
            .queue_beyond_own(client, a, 4_650 * MS, 5_000 * MS, Some(3_124 * MS))
            .is_empty());
    }

    #[test]
    fn memory_stays_bounded_per_client_and_in_clients() {
        let mut p = PathSamples::default();
        for i in 0..100 {
            p.note(
                ip(1),
                IpAddr::V4(Ipv4Addr::from(i as u32)),
                i * MS,
                17 * MS + i,
            );
        }
        assert_eq!(p.clients[&ip(1)].handshakes.len(), PER_CLIENT);
        assert_eq!(p.clients[&ip(1)].fastest.len(), SERVERS_PER_CLIENT);
        for i in 0..(MAX_CLIENTS as u32 * 3) {
            let other = IpAddr::V4(Ipv4Addr::from(0x0b00_0000 + i));
            p.note(other, other, i as i64 + 1000 * MS, 17 * MS);
        }
        assert!(p.clients.len() <= MAX_CLIENTS);
        // The newest survive.
        let last = IpAddr::V4(Ipv4Addr::from(0x0b00_0000 + MAX_CLIENTS as u32 * 3 - 1));
        assert!(p.clients.contains_key(&last));
    }
}
