//! One connection seen twice under different addresses.
//!
//! A capture taken at two points of a path that translates addresses holds
//! each packet of a connection twice, with different addresses or ports:
//! `tcpdump -i any` on a container host sees a container's connection on
//! its veth and bridge (172.17.0.2:40000 -> server) and again on the uplink
//! after masquerading (the host's 10.0.0.5:40000 -> server); a capture on a
//! NAT gateway or an LVS-NAT balancer sees both sides. Address translation
//! leaves the sequence numbers alone, so the two are one TCP connection,
//! which Wireshark shows as two streams. Counted twice, every wait it had
//! would be counted twice in the capture's totals.
//!
//! The signature: the same initial sequence numbers in both directions
//! (32 random bits each, so 64 in all: two connections that merely share
//! them do not happen), in SYN-ACKs of different flows that passed the
//! capture within [`WINDOW_NS`] of each other. The stream Wireshark
//! numbered first is the connection; the other is marked as the same
//! connection as it. A firewall that randomises sequence numbers (Cisco
//! ASA's default) breaks the signature: its two sides stay two
//! connections.

use std::collections::VecDeque;

use rustc_hash::FxHashMap;

use crate::flow_map::FlowKey;

/// How far apart the two SYN-ACKs of one connection can pass the capture:
/// the time a packet takes between the two capture points (microseconds
/// inside a host, milliseconds through a gateway), with room for the clock
/// offset of captures merged from two hosts.
pub(crate) const WINDOW_NS: i64 = 5_000_000_000;

/// The most handshakes remembered at once: bounds the memory of a capture
/// with more than this many handshakes within [`WINDOW_NS`] (about 1.5 MB).
const MAX_REMEMBERED: usize = 32_768;

/// A connection's initial sequence numbers: (client's, server's).
type Isns = (u32, u32);

#[derive(Debug, Clone, Copy)]
struct Handshake {
    stream: u64,
    flow: FlowKey,
    ts_ns: i64,
}

/// What a SYN-ACK showed: the connection on flow `later` is the one of
/// stream `earlier`, seen again. (The later-numbered one is the SYN-ACK's
/// own connection, or the other one when its SYN-ACK passed first.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SameAs {
    pub(crate) later: FlowKey,
    pub(crate) earlier: u64,
}

/// The recent handshakes, by initial sequence numbers.
#[derive(Debug, Default)]
pub(crate) struct Twins {
    recent: FxHashMap<Isns, Handshake>,
    order: VecDeque<(i64, Isns)>,
}

impl Twins {
    /// Notes a SYN-ACK (`seq` its own, `ack` the client's ISN + 1) of the
    /// connection numbered `stream` on `flow`, seen at `ts_ns`.
    pub(crate) fn syn_ack(
        &mut self,
        stream: u64,
        flow: FlowKey,
        seq: u32,
        ack: u32,
        ts_ns: i64,
    ) -> Option<SameAs> {
        self.forget_older_than(ts_ns - WINDOW_NS);
        let isns = (ack.wrapping_sub(1), seq);
        match self.recent.get(&isns) {
            Some(seen) if seen.flow == flow || (ts_ns - seen.ts_ns).abs() > WINDOW_NS => {
                // The same connection's SYN-ACK again, or from long ago.
                None
            }
            Some(seen) if seen.stream < stream => Some(SameAs {
                later: flow,
                earlier: seen.stream,
            }),
            Some(seen) => {
                // Remembered from now on as the earlier stream's, so that
                // a third sighting (two translations) names it too.
                let later = seen.flow;
                self.recent.insert(
                    isns,
                    Handshake {
                        stream,
                        flow,
                        ts_ns: seen.ts_ns,
                    },
                );
                Some(SameAs {
                    later,
                    earlier: stream,
                })
            }
            None => {
                if self.recent.len() >= MAX_REMEMBERED {
                    self.forget_oldest();
                }
                self.recent.insert(
                    isns,
                    Handshake {
                        stream,
                        flow,
                        ts_ns,
                    },
                );
                self.order.push_back((ts_ns, isns));
                None
            }
        }
    }

    fn forget_older_than(&mut self, cutoff_ns: i64) {
        while self.order.front().is_some_and(|(ts, _)| *ts < cutoff_ns) {
            self.forget_oldest();
        }
    }

    fn forget_oldest(&mut self) {
        if let Some((ts, isns)) = self.order.pop_front() {
            if self.recent.get(&isns).is_some_and(|h| h.ts_ns == ts) {
                self.recent.remove(&isns);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{IpAddr, Ipv4Addr};

    fn flow(port: u16) -> FlowKey {
        let ip = |n| IpAddr::V4(Ipv4Addr::new(10, 0, 0, n));
        FlowKey {
            lo: (ip(1), port),
            hi: (ip(2), 443),
        }
    }

    const MS: i64 = 1_000_000;

    fn same(later_port: u16, earlier: u64) -> Option<SameAs> {
        Some(SameAs {
            later: flow(later_port),
            earlier,
        })
    }

    #[test]
    fn the_same_isns_on_another_flow_are_the_earlier_streams_connection() {
        let mut t = Twins::default();
        assert_eq!(t.syn_ack(0, flow(1000), 77, 501, 0), None);
        assert_eq!(t.syn_ack(1, flow(2000), 77, 501, MS), same(2000, 0));
        // A third sighting (a second translation) names the first too.
        assert_eq!(t.syn_ack(2, flow(3000), 77, 501, 2 * MS), same(3000, 0));
    }

    #[test]
    fn when_the_later_streams_syn_ack_passes_first_it_is_the_one_marked() {
        // -i any on a container host: the uplink's SYN-ACK (the translated
        // stream, numbered second) arrives before the bridge's.
        let mut t = Twins::default();
        assert_eq!(t.syn_ack(1, flow(2000), 77, 501, 0), None);
        assert_eq!(t.syn_ack(0, flow(1000), 77, 501, MS), same(2000, 0));
        assert_eq!(t.syn_ack(2, flow(3000), 77, 501, 2 * MS), same(3000, 0));
    }

    #[test]
    fn near_misses_are_separate_connections() {
        let mut t = Twins::default();
        assert_eq!(t.syn_ack(0, flow(1000), 77, 501, 0), None);
        // The same flow's SYN-ACK sent again.
        assert_eq!(t.syn_ack(0, flow(1000), 77, 501, 3000 * MS), None);
        // Another server ISN, or another client ISN.
        assert_eq!(t.syn_ack(1, flow(2000), 78, 501, MS), None);
        assert_eq!(t.syn_ack(2, flow(3000), 77, 502, MS), None);
        // The same numbers after the window: chance, not one connection.
        assert_eq!(t.syn_ack(3, flow(4000), 77, 501, 5001 * MS), None);
    }

    #[test]
    fn memory_is_bounded_by_count_and_by_time() {
        let mut t = Twins::default();
        for i in 0..(MAX_REMEMBERED as u32 + 100) {
            t.syn_ack(i as u64, flow(1), i, 1, 0);
        }
        assert_eq!(t.recent.len(), MAX_REMEMBERED);
        t.syn_ack(u64::MAX, flow(2), 0, 0, WINDOW_NS + 1);
        assert_eq!(t.recent.len(), 1);
        assert_eq!(t.order.len(), 1);
    }
}
