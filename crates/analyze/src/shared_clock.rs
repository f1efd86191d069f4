//! Server addresses that answered a client's SYNs with one TCP clock: a
//! box in front of them all.
//!
//! A SYN-ACK's TSval is its sender's clock (RFC 7323). Linux since 4.10
//! offsets it at random per connection, other stacks keep one per host;
//! a clock shared, offset and all, across several server addresses is one
//! box answering for them: a split-TCP proxy (a mobile carrier's, a
//! VPN's, a corporate one) or a load balancer terminating TCP for many
//! addresses. Behind it a "server's" time includes the box's round trip
//! to the real server and that server's work (nDPI's reddit.pcap: 27 of
//! the 29 server addresses a phone reached answered on one 1 kHz clock,
//! one hop limit and one window for all; tumblr.pcap 4 of 7, pinterest.pcap
//! 8 of 13).
//!
//! The tracker notes each connection's reading of its server's clock by
//! client: the TSval of its SYN-ACK or, when the capture began after the
//! handshake, of the server's first segment (tumblr.pcap's phone: half
//! its connections were open when the capture began, and their first
//! server data carries the proxy's clock as its SYN-ACKs do). A
//! connection handed on asks how many server addresses, its own among
//! them, answered that client on readings that agree with its own at
//! one standard tick rate, within [`AGREE_NS`] and a tick: two random
//! 32-bit clocks agree so by chance once in hundreds of millions. (Data
//! queues more than a SYN-ACK: a reading the downlink held longer than
//! that misses its clock, and the connection goes unmarked, never
//! marked wrongly.)
//!
//! Bounded: the newest [`KEPT_PER_CLIENT`] notes of the newest
//! [`CLIENTS`] clients.

use std::collections::VecDeque;
use std::net::IpAddr;

use rustc_hash::FxHashMap;

/// Notes kept per client.
const KEPT_PER_CLIENT: usize = 64;
/// Clients kept: a server's capture with more forgets the oldest.
const CLIENTS: usize = 1024;
/// How far a reading's capture may stray from what one clock says: the
/// box's path to the capture varies (a queue), a few milliseconds.
const AGREE_NS: i64 = 5_000_000;
/// Tick rates stacks use (sender_clock.rs in rttdoc-diagnose).
const RATES_HZ: [i64; 6] = [1000, 250, 100, 300, 200, 500];

/// One reading of a server's clock: its server, when it was captured,
/// its TSval.
#[derive(Debug, Clone, Copy)]
struct Note {
    server: IpAddr,
    ts_ns: i64,
    tsval: u32,
}

#[derive(Debug, Default)]
pub(crate) struct ServerClocks {
    by_client: FxHashMap<IpAddr, VecDeque<Note>>,
    order: VecDeque<IpAddr>,
}

impl ServerClocks {
    /// `server` answered `client` with a segment (its SYN-ACK, or its first
    /// when the handshake was missed) captured at `ts_ns` carrying `tsval`.
    pub fn note(&mut self, client: IpAddr, server: IpAddr, ts_ns: i64, tsval: u32) {
        if !self.by_client.contains_key(&client) {
            if self.order.len() == CLIENTS {
                if let Some(oldest) = self.order.pop_front() {
                    self.by_client.remove(&oldest);
                }
            }
            self.order.push_back(client);
        }
        let notes = self.by_client.entry(client).or_default();
        if notes.len() == KEPT_PER_CLIENT {
            notes.pop_front();
        }
        notes.push_back(Note {
            server,
            ts_ns,
            tsval,
        });
    }

    /// How many server addresses, `server` among them, answered `client`
    /// on the clock of the reading captured at `ts_ns` with `tsval`: the
    /// most at any one rate (1 when none other did).
    pub fn servers_sharing(&self, client: IpAddr, server: IpAddr, ts_ns: i64, tsval: u32) -> u32 {
        let Some(notes) = self.by_client.get(&client) else {
            return 1;
        };
        let mut most = 1;
        for hz in RATES_HZ {
            let slack = hz * AGREE_NS / 1_000_000_000 + 1;
            let mut servers: Vec<IpAddr> = notes
                .iter()
                .filter(|n| n.server != server)
                .filter(|n| {
                    let expected = ((n.ts_ns - ts_ns) as i128 * hz as i128 / 1_000_000_000) as i64;
                    let ticks = n.tsval.wrapping_sub(tsval) as i32 as i64;
                    (ticks - expected).abs() <= slack
                })
                .map(|n| n.server)
                .collect();
            servers.sort_unstable();
            servers.dedup();
            most = most.max(servers.len() as u32 + 1);
        }
        most
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    const PHONE: IpAddr = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 7));

    fn server(n: u8) -> IpAddr {
        IpAddr::V4(Ipv4Addr::new(192, 0, 2, n))
    }

    /// A box ticking at 1 kHz from `base` answers for servers 1-4; server
    /// 9 has its own clock.
    #[test]
    fn servers_on_one_clock_are_counted_and_a_clock_of_its_own_is_not() {
        let mut clocks = ServerClocks::default();
        let base: u32 = 3_268_888_000;
        // (At 1 kHz: TSval advances a tick per millisecond, here with a
        // few milliseconds of queue on some.)
        for (n, at_ms, queued_ms) in [(1, 0, 0), (2, 1_500, 3), (3, 9_000, 1), (4, 20_000, 4)] {
            let ts_ns = (at_ms + queued_ms) * 1_000_000;
            clocks.note(PHONE, server(n), ts_ns, base.wrapping_add(at_ms as u32));
        }
        clocks.note(PHONE, server(9), 5_000_000_000, 77_000);
        assert_eq!(
            clocks.servers_sharing(PHONE, server(4), 20_004_000_000, base.wrapping_add(20_000)),
            4
        );
        assert_eq!(
            clocks.servers_sharing(PHONE, server(9), 5_000_000_000, 77_000),
            1
        );
        // Another client's SYN-ACKs are not this client's.
        let laptop = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 8));
        assert_eq!(
            clocks.servers_sharing(laptop, server(4), 20_004_000_000, base.wrapping_add(20_000)),
            1
        );
        // Twenty milliseconds off the clock is not on it.
        assert_eq!(
            clocks.servers_sharing(PHONE, server(5), 30_020_000_000, base.wrapping_add(30_000)),
            1
        );
    }

    #[test]
    fn a_clock_that_wrapped_still_agrees() {
        let mut clocks = ServerClocks::default();
        clocks.note(PHONE, server(1), 0, u32::MAX - 5);
        clocks.note(PHONE, server(2), 2_000_000_000, 1_994);
        assert_eq!(
            clocks.servers_sharing(PHONE, server(3), 3_000_000_000, 2_994),
            3
        );
    }

    #[test]
    fn memory_follows_the_newest_clients() {
        let mut clocks = ServerClocks::default();
        for i in 0..(CLIENTS as u32 + 10) {
            let client = IpAddr::V4(Ipv4Addr::from(0x0a00_0000 + i));
            for n in 0..3 {
                clocks.note(client, server(n), 0, 0);
            }
        }
        assert_eq!(clocks.by_client.len(), CLIENTS);
        assert!(clocks
            .by_client
            .values()
            .all(|v| v.len() <= KEPT_PER_CLIENT));
    }
}
