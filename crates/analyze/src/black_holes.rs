//! Connections whose client's data went unanswered while its timer sent
//! it again and again: a black hole for that flow, at the server (a
//! listener whose accept queue was full drops the handshake's ACK and
//! the data behind it) or on the way. One such connection may be its
//! server's; the same client's connections to several servers stalling
//! so in the same time are not one listener's: they share the client's
//! network or a box on its way that blocks what they have in common
//! (nDPI's skype_no_unknown.pcap, judged in session 88: most of its
//! Skype connections, to many servers, lost the client's data after the
//! handshake or the first exchange, and its stream 53, never served,
//! was told to look at the server's accept queue first).
//!
//! The tracker notes each such connection as it is handed on, per
//! client; one handed on later counts those of the client's to other
//! servers whose stalls overlapped its own, and names one to its own
//! server. Bounded: the newest [`KEPT`] per client, of the [`CLIENTS`]
//! clients heard from most lately.

use std::collections::VecDeque;
use std::net::IpAddr;

use crate::connection::SegmentRecord;
use crate::seq;
use rttdoc_model::{Direction, StalledElsewhere};

/// Stalls kept per client.
const KEPT: usize = 32;
/// Clients kept (the table emptied when full).
const CLIENTS: usize = 1024;
/// The client's timer sent the same bytes again at least this often,
/// unanswered: one lost copy is a loss, three in a row a black hole.
const RESENDS: usize = 2;

/// One connection whose client's data went unanswered.
#[derive(Debug, Clone, Copy)]
struct Stall {
    server: IpAddr,
    stream: u64,
    /// The first re-send of the bytes.
    frame: u64,
    from_ns: i64,
    /// The client's last packet.
    to_ns: i64,
}

/// Every client's newest stalls.
#[derive(Debug, Default)]
pub(crate) struct BlackHoles {
    clients: rustc_hash::FxHashMap<IpAddr, VecDeque<Stall>>,
}

impl BlackHoles {
    /// The connection's stall, when it has one: bytes of the client's
    /// sent [`RESENDS`] times more or again, nothing of the server's
    /// acknowledging them between the copies. The first re-send's frame,
    /// and from it to the client's last packet.
    pub(crate) fn stall_of(timeline: &[SegmentRecord]) -> Option<(u64, i64, i64)> {
        // The bytes the client's re-sends repeat, and their copies, until
        // the server acknowledges them (then the next ones).
        let mut held: Option<(&SegmentRecord, usize)> = None;
        let mut first = None;
        for r in timeline {
            match r.dir {
                Direction::ServerToClient
                    if held.is_some_and(|(o, _)| r.ack_set && seq::lt(o.seq, r.ack)) =>
                {
                    held = None;
                }
                // (From its first re-send: one pass, no search for the
                // original per re-sent segment.)
                Direction::ClientToServer if r.len > 0 && r.retransmission => {
                    held = match held {
                        Some((o, n)) if o.seq == r.seq => Some((o, n + 1)),
                        _ => Some((r, 1)),
                    };
                    if let Some((o, _)) = held.filter(|&(_, n)| n >= RESENDS) {
                        first = Some(o);
                        break;
                    }
                }
                _ => {}
            }
        }
        let first = first?;
        let last = timeline
            .iter()
            .rev()
            .find(|r| r.dir == Direction::ClientToServer)?;
        Some((first.frame, first.ts_ns, last.ts_ns))
    }

    /// The client's stalls noted before this one of its connection
    /// `stream` to `server` (from [`BlackHoles::stall_of`]) that
    /// overlapped it; then this one is noted too.
    pub(crate) fn stalled_elsewhere(
        &mut self,
        client: IpAddr,
        server: IpAddr,
        stream: u64,
        stall: (u64, i64, i64),
    ) -> StalledElsewhere {
        let beside = self.beside(client, server, stall.1, stall.2);
        self.note(client, server, stream, stall);
        beside
    }

    /// What of the client's others overlapped the stall from `from_ns` to
    /// `to_ns` of its connection to `server`.
    fn beside(&self, client: IpAddr, server: IpAddr, from_ns: i64, to_ns: i64) -> StalledElsewhere {
        let mut out = StalledElsewhere::default();
        let Some(stalls) = self.clients.get(&client) else {
            return out;
        };
        let mut servers: Vec<IpAddr> = Vec::new();
        for s in stalls.iter().rev() {
            if s.server == server {
                out.same_server = out.same_server.or(Some((s.stream, s.frame)));
                continue;
            }
            if s.to_ns < from_ns || s.from_ns > to_ns {
                continue;
            }
            if !servers.contains(&s.server) {
                servers.push(s.server);
                out.example = out.example.or(Some((s.stream, s.frame)));
            }
        }
        out.servers = servers.len() as u32;
        out
    }

    /// Notes a stall of `client`'s connection `stream` to `server`.
    fn note(
        &mut self,
        client: IpAddr,
        server: IpAddr,
        stream: u64,
        (frame, from_ns, to_ns): (u64, i64, i64),
    ) {
        let stall = Stall {
            server,
            stream,
            frame,
            from_ns,
            to_ns,
        };
        crate::peer_dials::push_newest(&mut self.clients, client, stall, CLIENTS, KEPT);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(last: u8) -> IpAddr {
        IpAddr::V4(std::net::Ipv4Addr::new(192, 0, 2, last))
    }

    /// The others overlapping a stall are counted once per server; a
    /// stall to the same server is named apart, and one that ended before
    /// this began is not counted.
    #[test]
    fn stalls_to_other_servers_in_the_same_time_are_counted_per_server() {
        let mut u = BlackHoles::default();
        let client = ip(1);
        u.note(client, ip(10), 2, (54, 0, 50_000));
        u.note(client, ip(11), 7, (120, 10_000, 20_000));
        u.note(client, ip(11), 8, (121, 10_000, 20_000));
        u.note(client, ip(12), 9, (130, 15_000, 25_000));
        u.note(client, ip(13), 1, (10, 0, 1_000));
        let b = u.beside(client, ip(10), 12_000, 30_000);
        assert_eq!(b.servers, 2, "{b:?}");
        assert_eq!(b.same_server, Some((2, 54)));
        assert!(
            matches!(b.example, Some((9, 130)) | Some((8, 121))),
            "{b:?}"
        );
        assert_eq!(u.beside(ip(2), ip(10), 0, 1), StalledElsewhere::default());
    }
}
