//! The client's uplink, read from the server's echoes of its timestamps.
//!
//! A server segment's TSecr is the TSval of the client segment it last
//! took in (RFC 7323 4.3), and its TSval the server's tick when it left.
//! Where the capture is on the client's side, the client segment's
//! capture time is when it left the client, so the server's tick less
//! that time is the way out (the uplink and the path) plus the server's
//! reaction, on a clock whose offset is unknown but fixed: less its
//! smallest over a connection, how much longer than its quickest that
//! way out was. A stack's reactions to ACKs (the next segments of a bulk
//! answer, clocked out by each ACK) take no time of the application's;
//! where a client's uploads or parallel requests fill its uplink, those
//! reactions come late by what its queue held (PcapPlusPlus's
//! example.pcap: a browser's fourteen connections to one server, the
//! server's ACK-clocked data 80-140 ms late on its 1 kHz clock while the
//! client's requests queued on an 0.85 Mbit/s uplink, each request's
//! "server time" that queue).
//!
//! The tracker notes, per client and server address pair, each server
//! segment that echoes a client's pure ACK or SYN it has seen on that
//! connection (a SYN-ACK is the server stack's answer too): when that
//! segment was captured and the server's TSval. A connection handed on
//! whose answers came slowly enough to ask about (an exchange
//! [`ASKED_NS`] or more from request to answer) takes its siblings'
//! notes from just before its requests, with each such sibling's
//! quickest way out over the notes kept, at each standard tick rate (the
//! diagnosis reads them with the server's clock: `Facts::uplink_queue_ns`).
//! Each sibling is read against its own quickest: one address may hide
//! hosts whose clocks differ by seconds, not billions of ticks (nDPI's
//! alexa-app.pcapng: CloudFront's SYN-ACKs to one phone on six
//! connections 0.3-2.6 s apart on clocks otherwise alike), so a pair's
//! quickest is no one connection's.
//!
//! Bounded: the newest [`KEPT_PER_PAIR`] notes of the newest [`PAIRS`]
//! client and server pairs; each connection remembers its client's last
//! [`SEEN`] TSvals.

use std::collections::VecDeque;
use std::net::IpAddr;

use rustc_hash::FxHashMap;

/// Notes kept per client and server pair (a second of a busy pair's, at
/// one new echo a millisecond).
const KEPT_PER_PAIR: usize = 1024;
/// Pairs kept: a capture with more forgets the oldest (24 bytes a note:
/// 3.2 MB at most).
const PAIRS: usize = 128;
/// A connection's client TSvals remembered to match echoes against.
pub(crate) const SEEN: usize = 8;
/// The tick rates stacks' TCP timestamp clocks run at, most common first
/// (a tie goes to the first): the ones sender_clock.rs in
/// rttdoc-diagnose reads a sender's clock at, and a sibling's quickest
/// way out is kept at each ([`SiblingWay`]).
pub const RATES_HZ: [i64; 7] = [1000, 250, 100, 300, 200, 500, 10];
/// How long before a request its siblings' echoes tell the queue it met.
pub const NEAR_NS: i64 = 100_000_000;
/// A connection whose exchanges all took less from request to answer
/// has no server time to ask about (the least `server_think_time` counts
/// is 5 ms beyond a round trip): it takes no echoes.
const ASKED_NS: i64 = 5_000_000;

/// One echo: a server segment of connection `stream` that left at tick
/// `tsval` echoed a client segment captured at `client_ns`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UplinkEcho {
    pub stream: u64,
    pub client_ns: i64,
    pub tsval: u32,
}

/// A connection's newest client TSvals and when the last segment with
/// each was captured, to match the server's echoes against.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct SeenTsvals {
    /// (TSval, capture time of the last segment with it, all of them pure
    /// ACKs or SYNs: segments only the server's stack answers).
    seen: [(u32, i64, bool); SEEN],
    len: u8,
    next: u8,
    /// The last TSecr noted: a server echoes one value many times.
    last_echo: Option<u32>,
}

impl SeenTsvals {
    /// A client segment with `tsval` captured at `ts_ns`, one only the
    /// server's stack answers (a pure ACK, a SYN) or not.
    #[inline]
    pub(crate) fn client(&mut self, tsval: u32, ts_ns: i64, stack_answers: bool) {
        let newest = (self.next as usize + SEEN - 1) % SEEN;
        if self.len > 0 && self.seen[newest].0 == tsval {
            self.seen[newest].1 = ts_ns;
            self.seen[newest].2 &= stack_answers;
            return;
        }
        self.seen[self.next as usize] = (tsval, ts_ns, stack_answers);
        self.next = ((self.next as usize + 1) % SEEN) as u8;
        self.len = (self.len + 1).min(SEEN as u8);
    }

    /// A server segment echoing `tsecr`: when the client segment it
    /// echoes was captured, the first time that echo is seen, when that
    /// segment was a pure ACK or a SYN. (Data the server sends the moment
    /// a pure ACK comes is its stack's, clocked out by that ACK, as is a
    /// SYN-ACK; what echoes a request is its answer, after the
    /// application's time.)
    #[inline]
    pub(crate) fn echo(&mut self, tsecr: u32) -> Option<i64> {
        if self.last_echo == Some(tsecr) {
            return None;
        }
        self.last_echo = Some(tsecr);
        self.seen[..self.len as usize]
            .iter()
            .find(|(v, _, pure)| *v == tsecr && *pure)
            .map(|(_, at, _)| *at)
    }
}

/// What a connection takes of its pair's echoes: its siblings' from
/// before its requests, and each of those siblings' quickest way out at
/// each rate in [`RATES_HZ`] (ticks times the tick, less the capture
/// time, counted from the TSval `origin`) over how many echoes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UplinkView {
    pub echoes: Vec<UplinkEcho>,
    pub siblings: Vec<SiblingWay>,
    pub origin: u32,
}

/// A sibling connection's quickest way out, at each rate, over its
/// `echoes` kept.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SiblingWay {
    pub stream: u64,
    pub echoes: u32,
    pub quickest_ns: [i64; RATES_HZ.len()],
}

impl UplinkView {
    /// The way out of `echo` at the rate of index `rate`, on the scale of
    /// [`SiblingWay::quickest_ns`].
    pub fn way_ns(&self, echo: &UplinkEcho, rate: usize) -> i64 {
        way_ns(self.origin, echo, rate)
    }

    /// `echo`'s sibling's quickest.
    pub fn sibling(&self, echo: &UplinkEcho) -> Option<&SiblingWay> {
        self.siblings.iter().find(|s| s.stream == echo.stream)
    }
}

fn way_ns(origin: u32, echo: &UplinkEcho, rate: usize) -> i64 {
    let ticks = echo.tsval.wrapping_sub(origin) as i32 as i64;
    ticks.saturating_mul(1_000_000_000 / RATES_HZ[rate]) - echo.client_ns
}

#[derive(Debug, Default)]
struct Pair {
    echoes: VecDeque<UplinkEcho>,
    origin: u32,
}

#[derive(Debug, Default)]
pub(crate) struct UplinkEchoes {
    by_pair: FxHashMap<(IpAddr, IpAddr), Pair>,
    order: VecDeque<(IpAddr, IpAddr)>,
}

impl UplinkEchoes {
    /// `server` echoed to `client` as `echo` says.
    pub(crate) fn note(&mut self, client: IpAddr, server: IpAddr, echo: UplinkEcho) {
        let pair = (client, server);
        if !self.by_pair.contains_key(&pair) {
            if self.order.len() == PAIRS {
                if let Some(oldest) = self.order.pop_front() {
                    self.by_pair.remove(&oldest);
                }
            }
            self.order.push_back(pair);
        }
        let p = self.by_pair.entry(pair).or_insert_with(|| Pair {
            echoes: VecDeque::new(),
            origin: echo.tsval,
        });
        if p.echoes.len() == KEPT_PER_PAIR {
            p.echoes.pop_front();
        }
        p.echoes.push_back(echo);
    }

    /// What connection `stream` between `client` and `server` takes when
    /// it is handed on, its exchanges `exchanges`: its siblings' echoes of
    /// ACKs captured in the [`NEAR_NS`] before each request whose answer
    /// took [`ASKED_NS`] or more, with those siblings' quickest; None when
    /// no answer took that long or none of those echoes is there.
    pub(crate) fn view(
        &self,
        client: IpAddr,
        server: IpAddr,
        stream: u64,
        exchanges: &[crate::Exchange],
    ) -> Option<UplinkView> {
        let p = self.by_pair.get(&(client, server))?;
        let asked = |x: &crate::Exchange| {
            x.response_first
                .is_some_and(|a| a.ts_ns - x.request_last.ts_ns >= ASKED_NS)
        };
        let mut requests = exchanges
            .iter()
            .filter(|x| asked(x))
            .map(|x| x.request_last.ts_ns)
            .peekable();
        requests.peek()?;
        let requests: Vec<i64> = requests.collect();
        let echoes: Vec<UplinkEcho> = p
            .echoes
            .iter()
            .filter(|e| {
                e.stream != stream
                    && requests
                        .iter()
                        .any(|&at| (0..=NEAR_NS).contains(&(at - e.client_ns)))
            })
            .copied()
            .collect();
        if echoes.is_empty() {
            return None;
        }
        let mut siblings: Vec<SiblingWay> = Vec::new();
        for e in &echoes {
            if siblings.iter().any(|s| s.stream == e.stream) {
                continue;
            }
            let mut way = SiblingWay {
                stream: e.stream,
                echoes: 0,
                quickest_ns: [i64::MAX; RATES_HZ.len()],
            };
            for mine in p.echoes.iter().filter(|x| x.stream == e.stream) {
                way.echoes += 1;
                for (rate, quickest) in way.quickest_ns.iter_mut().enumerate() {
                    *quickest = (*quickest).min(way_ns(p.origin, mine, rate));
                }
            }
            siblings.push(way);
        }
        Some(UplinkView {
            echoes,
            siblings,
            origin: p.origin,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    const MS: i64 = 1_000_000;

    #[test]
    fn an_echo_is_matched_to_the_last_client_segment_with_its_tsval_once() {
        let mut seen = SeenTsvals::default();
        seen.client(100, 10 * MS, true);
        // Two segments in one tick: the echo times the later.
        seen.client(101, 11 * MS, true);
        seen.client(101, 12 * MS, true);
        assert_eq!(seen.echo(101), Some(12 * MS));
        // The same echo again (a server's run of segments) is noted once.
        assert_eq!(seen.echo(101), None);
        assert_eq!(seen.echo(100), Some(10 * MS));
        // An echo of a tick that carried data (a request): its answer,
        // after the application's time, not a stack's reaction.
        seen.client(102, 13 * MS, true);
        seen.client(102, 13 * MS, false);
        seen.client(103, 14 * MS, false);
        assert_eq!(seen.echo(102), None);
        assert_eq!(seen.echo(103), None);
        // A TSval long gone, or never seen: nothing.
        for v in 104..120 {
            seen.client(v, v as i64 * MS, true);
        }
        assert_eq!(seen.echo(101), None);
        assert_eq!(seen.echo(5), None);
        assert_eq!(seen.echo(119), Some(119 * MS));
    }

    /// An exchange: request at `at_ms`, answer `took_ms` later.
    fn exchange(at_ms: i64, took_ms: i64) -> crate::Exchange {
        use crate::model::Direction::{ClientToServer, ServerToClient};
        let stamp = |ms: i64| crate::Stamp {
            frame: ms as u64,
            ts_ns: ms * MS,
        };
        let mut x = crate::exchange::Exchanges::default();
        let (asked, answered) = (stamp(at_ms), stamp(at_ms + took_ms));
        x.on_data(ClientToServer, asked, asked, 100, b"");
        x.on_data(ServerToClient, answered, answered, 100, b"");
        x.finish();
        x.kept.remove(0)
    }

    #[test]
    fn a_connection_takes_its_siblings_echoes_from_before_its_slow_requests() {
        let client = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 6));
        let server = IpAddr::V4(Ipv4Addr::new(192, 0, 2, 9));
        let other = IpAddr::V4(Ipv4Addr::new(192, 0, 2, 10));
        let mut echoes = UplinkEchoes::default();
        // At 1 kHz: the way out 10 ms at first, then 60 ms.
        for (stream, at, way, to) in [
            (2, 100, 10, server),
            (3, 150, 20, server),
            (2, 900, 60, server),
            (3, 950, 60, server),
            (7, 960, 60, server),
            (4, 950, 0, other),
        ] {
            let echo = UplinkEcho {
                stream,
                client_ns: at * MS,
                tsval: (at + way) as u32,
            };
            echoes.note(client, to, echo);
        }
        // A request at 1,000 ms answered in 80 ms: the echoes of the 100
        // ms before it, not its own, not another server's.
        let view = echoes
            .view(client, server, 7, &[exchange(1_000, 80)])
            .expect("a view");
        let streams: Vec<u64> = view.echoes.iter().map(|e| e.stream).collect();
        assert_eq!(streams, [2, 3]);
        // Each sibling against its own quickest at 1 kHz: 50 and 40 ms of
        // queue, each over its two echoes.
        let excess: Vec<(i64, u32)> = view
            .echoes
            .iter()
            .map(|e| {
                let s = view.sibling(e).expect("its sibling");
                (view.way_ns(e, 0) - s.quickest_ns[0], s.echoes)
            })
            .collect();
        assert_eq!(excess, [(50 * MS, 2), (40 * MS, 2)]);
        // An answer in 2 ms asks nothing; nor does a request with no
        // echoes before it.
        assert_eq!(echoes.view(client, server, 7, &[exchange(1_000, 2)]), None);
        assert_eq!(echoes.view(client, server, 7, &[exchange(5_000, 80)]), None);
    }

    #[test]
    fn memory_follows_the_newest_pairs() {
        let mut echoes = UplinkEchoes::default();
        let server = IpAddr::V4(Ipv4Addr::new(192, 0, 2, 9));
        for i in 0..(PAIRS as u32 + 10) {
            let client = IpAddr::V4(Ipv4Addr::from(0x0a00_0000 + i));
            for n in 0..(KEPT_PER_PAIR as i64 + 3) {
                let echo = UplinkEcho {
                    stream: 1,
                    client_ns: n,
                    tsval: 0,
                };
                echoes.note(client, server, echo);
            }
        }
        assert_eq!(echoes.by_pair.len(), PAIRS);
        assert!(echoes
            .by_pair
            .values()
            .all(|p| p.echoes.len() == KEPT_PER_PAIR));
    }
}
