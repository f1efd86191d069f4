//! QUIC connections over UDP, followed as far as their packets are in the
//! clear: which datagram carried which packet types, when, from which
//! side, and how big it was. That is what a QUIC handshake's round trips
//! are made of (RFC 9000 7, 8; RFC 9001 4): the client's Initial, the
//! server's Initial and Handshake flight (or a Retry, or a Version
//! Negotiation), the client's Handshake packet with its Finished, then
//! short-header packets. The packet numbers, ACK frames and everything
//! inside are encrypted: nothing here reads them.
//!
//! A connection starts at a client's Initial in a datagram of at least
//! 1200 bytes (RFC 9000 14.1: a client pads its first flight so; a
//! server's Initial need not be), on its UDP 4-tuple. The client's
//! Initials that follow a Retry or a Version Negotiation, or that resend
//! one unanswered, belong to the same attempt; an Initial after the
//! handshake finished (the client's Handshake packet, or short headers,
//! seen) starts a new connection on the same 4-tuple. Connections end
//! after [`IDLE_NS`] without a packet (their close is encrypted) or with
//! the capture.

use std::net::IpAddr;

use rttdoc_model::Endpoint;
use rttdoc_wire::quic::{self, PacketType};
use rttdoc_wire::UdpDatagram;
use rustc_hash::FxHashMap;

use crate::connection::Stamp;

/// What turns a finished QUIC connection's facts into its report
/// (`rttdoc_diagnose::diagnose_quic`).
pub type QuicDiagnose = fn(QuicFacts) -> rttdoc_model::QuicConnectionReport;

/// A QUIC connection silent this long is finished: its idle timeout
/// (quic-go and Chromium default to 30 s; nginx's `quic_timeout` is 60 s)
/// or its encrypted close have ended it.
pub const IDLE_NS: i64 = 30_000_000_000;

/// Datagrams kept per connection, from its first: its handshake and what
/// follows it at once. Past them only counts.
pub const KEPT: usize = 64;

/// QUIC connections followed at once; past it the longest idle quarter is
/// finished early.
pub const MAX_OPEN: usize = 16_384;

/// Which packet types a datagram carried (a set of [`PacketType`]s).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Types(u8);

impl Types {
    fn bit(t: PacketType) -> u8 {
        match t {
            PacketType::Initial => 1,
            PacketType::ZeroRtt => 2,
            PacketType::Handshake => 4,
            PacketType::Retry => 8,
            PacketType::VersionNegotiation => 16,
            PacketType::Short => 32,
        }
    }

    pub fn add(&mut self, t: PacketType) {
        self.0 |= Types::bit(t);
    }

    pub fn has(self, t: PacketType) -> bool {
        self.0 & Types::bit(t) != 0
    }
}

/// One datagram of a QUIC connection.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QuicDatagram {
    pub frame: u64,
    pub ts_ns: i64,
    pub from_client: bool,
    /// UDP payload bytes, as the UDP header declares them (what the
    /// anti-amplification limit counts).
    pub bytes: u32,
    pub types: Types,
    /// An Initial in it carried a token (the Retry's, or a NEW_TOKEN's
    /// from an earlier connection: the client's address proven).
    pub token: bool,
    /// The version of its first long-header packet; 0 for none.
    pub version: u32,
}

/// A finished QUIC connection, frozen for the diagnosis.
#[derive(Debug, Clone, PartialEq)]
pub struct QuicFacts {
    /// In order of their first Initial, from 0.
    pub number: u64,
    pub client: Endpoint,
    pub server: Endpoint,
    /// Its first [`KEPT`] datagrams.
    pub datagrams: Vec<QuicDatagram>,
    /// Datagrams and UDP payload bytes in all, client's then server's.
    pub counts: [u64; 2],
    pub bytes: [u64; 2],
    pub last_frame: u64,
    pub last_ts_ns: i64,
    /// Its first frame's time, and the capture's first frame's.
    pub first_ts_ns: i64,
    pub capture_start_ns: i64,
    /// Finished because the capture ended (not after its idle timeout).
    pub open_at_end: bool,
    /// The versions the server's first Version Negotiation listed (at
    /// most [`VERSIONS_KEPT`]).
    pub server_versions: Vec<u32>,
    /// The length of the first token a client Initial carried (a
    /// Retry's, or a NEW_TOKEN's); 0 for none. Read from the Initial's
    /// Token Length, which every version has (a Retry's own layout
    /// changed across the drafts).
    pub token_len: u32,
    /// The capture held packets both ways by the time this connection
    /// ended (a server's QUIC datagram, a SYN-ACK): a connection nobody
    /// answered was not answered, rather than answered out of a one-way
    /// capture's sight.
    pub two_way_capture: bool,
    /// The server name and the ALPN protocols of the client's
    /// ClientHello, read out of its Initials (quic_initial.rs).
    pub sni: Option<String>,
    pub alpn: Vec<String>,
    /// The first TCP connection the client opened to the same server
    /// address and port while this connection had no answer from the
    /// server: where a browser went when QUIC did not get through (its
    /// stream and first SYN).
    pub tcp_instead: Option<TcpInstead>,
}

/// A TCP connection opened to a QUIC connection's server while the QUIC
/// connection waited for its first answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TcpInstead {
    /// Its `tcp.stream`.
    pub stream: u64,
    /// Its first SYN.
    pub syn: Stamp,
}

/// Versions kept of a Version Negotiation's list.
pub const VERSIONS_KEPT: usize = 8;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Key {
    client: (IpAddr, u16),
    server: (IpAddr, u16),
}

struct Open {
    facts: QuicFacts,
    /// Its client's ClientHello, read out of the Initials.
    hello: crate::quic_initial::InitialReader,
    /// The client sent a Handshake packet or short headers: its handshake
    /// is done, so another Initial is another connection.
    past_handshake: bool,
}

/// The QUIC connections open, and what the capture holds of them.
#[derive(Default)]
pub struct QuicConnections {
    open: FxHashMap<Key, Open>,
    next_number: u64,
    /// Frozen connections not yet taken by the tracker.
    done: Vec<QuicFacts>,
    last_sweep_ns: i64,
    /// A server's datagram was seen: the capture holds QUIC both ways.
    answered_any: bool,
    /// The connections with no answer from their server yet, by client
    /// address and server address and port: what a TCP SYN to the same
    /// place is looked up in (few: a connection leaves at its first
    /// answer).
    waiting: FxHashMap<(IpAddr, Endpoint), Vec<Key>>,
}

/// What one datagram was to the QUIC connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// It belongs to a QUIC connection.
    Quic,
    /// It is not (or not of one whose start the capture holds).
    Other,
}

impl QuicConnections {
    pub fn is_empty(&self) -> bool {
        self.open.is_empty()
    }

    /// One UDP datagram that can be QUIC.
    pub fn datagram(&mut self, at: Stamp, capture_start_ns: i64, d: &UdpDatagram<'_>) -> Outcome {
        let from = (d.src, d.src_port);
        let to = (d.dst, d.dst_port);
        let forward = Key {
            client: from,
            server: to,
        };
        let backward = Key {
            client: to,
            server: from,
        };
        let Read {
            types,
            token,
            version,
            initial_token,
        } = read(d.payload, declared_len(d));
        let declared = declared_len(d);
        let key = if self.open.contains_key(&forward) {
            Some(forward)
        } else if self.open.contains_key(&backward) {
            Some(backward)
        } else {
            None
        };
        // A client's Initial after its handshake finished opens another
        // connection on the same 4-tuple.
        if key == Some(forward)
            && types.has(PacketType::Initial)
            && self.open.get(&forward).is_some_and(|o| o.past_handshake)
        {
            unwait(&mut self.waiting, &forward);
            if let Some(mut old) = self.open.remove(&forward) {
                old.facts.two_way_capture = self.answered_any;
                self.done.push(old.facts);
            }
        }
        let key = match key {
            Some(k) if self.open.contains_key(&k) => k,
            _ => {
                // A client's first Initial has its fixed bit set (it may
                // clear it only for a server that said it takes that,
                // RFC 9287, which a first contact has not heard).
                let fixed = d.payload.first().is_some_and(|b| b & 0x40 != 0);
                if !(fixed
                    && types.has(PacketType::Initial)
                    && declared >= quic::MIN_INITIAL_DATAGRAM)
                {
                    return Outcome::Other;
                }
                if self.open.len() >= MAX_OPEN {
                    self.evict();
                }
                let number = self.next_number;
                self.next_number += 1;
                self.open.insert(
                    forward,
                    Open {
                        facts: QuicFacts {
                            number,
                            client: Endpoint {
                                ip: d.src,
                                port: d.src_port,
                            },
                            server: Endpoint {
                                ip: d.dst,
                                port: d.dst_port,
                            },
                            datagrams: Vec::new(),
                            counts: [0; 2],
                            bytes: [0; 2],
                            last_frame: at.frame,
                            last_ts_ns: at.ts_ns,
                            first_ts_ns: at.ts_ns,
                            capture_start_ns,
                            open_at_end: false,
                            server_versions: Vec::new(),
                            token_len: 0,
                            two_way_capture: false,
                            sni: None,
                            alpn: Vec::new(),
                            tcp_instead: None,
                        },
                        past_handshake: false,
                        hello: Default::default(),
                    },
                );
                self.waiting
                    .entry((
                        d.src,
                        Endpoint {
                            ip: d.dst,
                            port: d.dst_port,
                        },
                    ))
                    .or_default()
                    .push(forward);
                forward
            }
        };
        let from_client = key == forward;
        let Some(open) = self.open.get_mut(&key) else {
            return Outcome::Other;
        };
        if from_client && (types.has(PacketType::Handshake) || types.has(PacketType::Short)) {
            open.past_handshake = true;
        }
        self.answered_any |= !from_client;
        if !from_client && open.facts.counts[1] == 0 {
            unwait(&mut self.waiting, &key);
        }
        if from_client && types.has(PacketType::Initial) {
            if let Some(names) = open.hello.client_datagram(d.payload) {
                open.facts.sni = names.sni;
                open.facts.alpn = names.alpn;
            }
        }
        let f = &mut open.facts;
        if !from_client && types.has(PacketType::VersionNegotiation) && f.server_versions.is_empty()
        {
            f.server_versions = listed_versions(d.payload);
        }
        if from_client && initial_token > 0 && f.token_len == 0 {
            f.token_len = initial_token.min(u32::MAX as usize) as u32;
        }
        let side = usize::from(!from_client);
        f.counts[side] += 1;
        f.bytes[side] += declared as u64;
        f.last_frame = at.frame;
        f.last_ts_ns = f.last_ts_ns.max(at.ts_ns);
        if f.datagrams.len() < KEPT {
            f.datagrams.push(QuicDatagram {
                frame: at.frame,
                ts_ns: at.ts_ns,
                from_client,
                bytes: declared.min(u32::MAX as usize) as u32,
                types,
                token,
                version,
            });
        }
        Outcome::Quic
    }

    /// A TCP connection's first SYN (`stream`), from `client` to `to`:
    /// the QUIC connections of that client to that place still without
    /// an answer note it as where the client went instead.
    pub fn tcp_syn(&mut self, client: IpAddr, to: Endpoint, stream: u64, at: Stamp) {
        if self.waiting.is_empty() {
            return;
        }
        let Some(keys) = self.waiting.get(&(client, to)) else {
            return;
        };
        for k in keys {
            if let Some(o) = self.open.get_mut(k) {
                o.facts
                    .tcp_instead
                    .get_or_insert(TcpInstead { stream, syn: at });
            }
        }
    }

    /// Finishes the connections silent for [`IDLE_NS`] by `now_ns`.
    pub fn sweep(&mut self, now_ns: i64) {
        if now_ns - self.last_sweep_ns < 1_000_000_000 || self.open.is_empty() {
            return;
        }
        self.last_sweep_ns = now_ns;
        let quiet: Vec<Key> = self
            .open
            .iter()
            .filter(|(_, o)| now_ns - o.facts.last_ts_ns >= IDLE_NS)
            .map(|(k, _)| *k)
            .collect();
        self.finish(quiet, false);
    }

    /// The longest idle quarter, finished early.
    fn evict(&mut self) {
        let mut ages: Vec<(i64, u64, Key)> = self
            .open
            .iter()
            .map(|(k, o)| (o.facts.last_ts_ns, o.facts.number, *k))
            .collect();
        ages.sort_unstable_by_key(|&(ts, n, _)| (ts, n));
        let n = (ages.len() / 4).max(1);
        self.finish(ages.into_iter().take(n).map(|(_, _, k)| k).collect(), false);
    }

    fn finish(&mut self, keys: Vec<Key>, at_end: bool) {
        for k in &keys {
            unwait(&mut self.waiting, k);
        }
        let two_way = self.answered_any;
        let mut finished: Vec<QuicFacts> = keys
            .into_iter()
            .filter_map(|k| self.open.remove(&k))
            .map(|mut o| {
                o.facts.open_at_end = at_end;
                o.facts.two_way_capture = two_way;
                o.facts
            })
            .collect();
        // In the order they began, whatever the map's.
        finished.sort_unstable_by_key(|f| f.number);
        self.done.extend(finished);
    }

    /// Connections finished since the last call, in the order they ended
    /// (those ending together, in the order they began).
    pub fn take_done(&mut self) -> Vec<QuicFacts> {
        std::mem::take(&mut self.done)
    }

    /// The capture ended: every open connection is finished (taken with
    /// [`QuicConnections::take_done`]).
    pub fn end(&mut self) {
        let keys: Vec<Key> = self.open.keys().copied().collect();
        self.finish(keys, true);
    }
}

/// Takes a connection out of the waiting index.
fn unwait(waiting: &mut FxHashMap<(IpAddr, Endpoint), Vec<Key>>, key: &Key) {
    let place = (
        key.client.0,
        Endpoint {
            ip: key.server.0,
            port: key.server.1,
        },
    );
    if let Some(keys) = waiting.get_mut(&place) {
        keys.retain(|k| k != key);
        if keys.is_empty() {
            waiting.remove(&place);
        }
    }
}

/// The UDP payload's length as its header declares it (a snap length may
/// have cut what the capture holds).
fn declared_len(d: &UdpDatagram<'_>) -> usize {
    d.payload.len().max(d.declared_len)
}

/// The versions a Version Negotiation packet lists, at most
/// [`VERSIONS_KEPT`].
fn listed_versions(payload: &[u8]) -> Vec<u32> {
    let Some(Ok(p)) = quic::packets(payload, 0).next() else {
        return Vec::new();
    };
    let start = 7 + p.dcid.len() + p.scid.len();
    payload
        .get(start..)
        .unwrap_or_default()
        .chunks_exact(4)
        .take(VERSIONS_KEPT)
        .map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// What one datagram's headers say.
struct Read {
    types: Types,
    /// An Initial among its packets had a token.
    token: bool,
    /// Its first long header's version.
    version: u32,
    /// An Initial's token length.
    initial_token: usize,
}

fn read(payload: &[u8], declared: usize) -> Read {
    let mut r = Read {
        types: Types::default(),
        token: false,
        version: 0,
        initial_token: 0,
    };
    for p in quic::packets(payload, 0).declared(declared) {
        let Ok(p) = p else { break };
        if r.version == 0 && p.ty != PacketType::Short {
            r.version = p.version;
        }
        match p.ty {
            PacketType::Initial if p.token_len > 0 => {
                r.token = true;
                r.initial_token = r.initial_token.max(p.token_len);
            }
            _ => {}
        }
        r.types.add(p.ty);
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    fn datagram(payload: &[u8], from_client: bool) -> UdpDatagram<'_> {
        let (c, s) = (
            IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
            IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)),
        );
        let (src, dst, sp, dp) = if from_client {
            (c, s, 5000, 443)
        } else {
            (s, c, 443, 5000)
        };
        UdpDatagram {
            src,
            dst,
            src_port: sp,
            dst_port: dp,
            payload,
            cut: false,
            declared_len: payload.len(),
        }
    }

    /// A version 1 Initial of `size` bytes with first byte `first`.
    fn initial(first: u8, size: usize) -> Vec<u8> {
        let mut b = vec![first, 0, 0, 0, 1, 8, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0];
        let rest = size - b.len() - 2;
        b.extend_from_slice(&(0x4000 | rest as u16).to_be_bytes());
        b.resize(size, 0xaa);
        b
    }

    fn stamp(frame: u64) -> Stamp {
        Stamp {
            frame,
            ts_ns: frame as i64 * 1_000_000,
        }
    }

    #[test]
    fn a_connection_starts_at_a_clients_padded_initial() {
        let mut q = QuicConnections::default();
        let short = initial(0xc0, 600);
        assert_eq!(
            q.datagram(stamp(1), 0, &datagram(&short, true)),
            Outcome::Other,
            "under 1200 bytes"
        );
        // RTP's version-2 byte (the form bit, no fixed bit), a version 1
        // after it by chance: not a client's first Initial.
        let rtp = initial(0x80, 1200);
        assert_eq!(
            q.datagram(stamp(2), 0, &datagram(&rtp, true)),
            Outcome::Other
        );
        let good = initial(0xc0, 1200);
        assert_eq!(
            q.datagram(stamp(3), 0, &datagram(&good, true)),
            Outcome::Quic
        );
        // The server's answer and a short header join it.
        let answer = initial(0xc0, 300);
        assert_eq!(
            q.datagram(stamp(4), 0, &datagram(&answer, false)),
            Outcome::Quic
        );
        assert_eq!(
            q.datagram(stamp(5), 0, &datagram(&[0x41, 1, 2, 3], true)),
            Outcome::Quic
        );
        q.end();
        let done = q.take_done();
        assert_eq!(done.len(), 1);
        assert_eq!(done[0].counts, [2, 1]);
        assert!(done[0].two_way_capture);
        assert!(done[0].open_at_end);
    }

    #[test]
    fn an_initial_after_the_handshake_is_another_connection() {
        let mut q = QuicConnections::default();
        let first = initial(0xc0, 1200);
        q.datagram(stamp(1), 0, &datagram(&first, true));
        q.datagram(stamp(2), 0, &datagram(&initial(0xc0, 300), false));
        // The client's Handshake packet: its handshake is done.
        let mut hs = initial(0xe0, 100);
        hs[0] = 0xe0;
        q.datagram(stamp(3), 0, &datagram(&hs, true));
        q.datagram(stamp(4), 0, &datagram(&first, true));
        q.end();
        let done = q.take_done();
        assert_eq!(
            done.iter().map(|f| f.number).collect::<Vec<_>>(),
            vec![0, 1]
        );
        assert_eq!(done[0].last_frame, 3);
        assert_eq!(done[1].datagrams[0].frame, 4);
    }

    #[test]
    fn silent_connections_end_after_the_idle_timeout() {
        let mut q = QuicConnections::default();
        q.datagram(stamp(1), 0, &datagram(&initial(0xc0, 1200), true));
        q.sweep(IDLE_NS - 1_000_000_000);
        assert!(q.take_done().is_empty());
        q.sweep(IDLE_NS + 2_000_000_000);
        let done = q.take_done();
        assert_eq!(done.len(), 1);
        assert!(!done[0].open_at_end);
        assert!(q.is_empty());
    }
}
