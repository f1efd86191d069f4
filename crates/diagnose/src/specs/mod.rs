//! The detectors' specifications, one file per detector: synthetic
//! timelines built from what the hosts' kernels do, fed through the
//! [`Tracker`] like a capture, and what the detector must say about them.
//!
//! Each file opens with the signature it specifies (quoted from the
//! detector's doc comment). A positive case states the finding's kind,
//! phase, evidence frames, waits and cost; each near-miss breaks one
//! condition of the signature and states that no finding of the kind is
//! made. A case the detector gets wrong by its own doc comment is an
//! `#[ignore = "..."]` test naming the contradiction.
//!
//! Timelines are written as the hosts act, on one absolute clock: a host
//! sends at the time its kernel sends, a packet reaches the other host a
//! one-way delay (half the RTT) later, and [`Path`] says where on the path
//! the capture is taken (at the client, at the server, or in between), so
//! one mechanism can be replayed at every vantage.

mod accept_queue_full;
mod address_fallback;
mod causality;
mod certificate_fetch;
mod client_think_time;
mod connect_back;
mod connection_not_reused;
mod cors_preflight;
mod dns_query_lost;
mod dns_search_list;
mod downlink_queue;
mod early_data_unsafe;
mod expect_continue;
mod h2_window_limited;
mod hello_retry_request;
mod host_turnarounds;
mod http_auth_challenge;
mod http_redirect;
mod initcwnd;
mod ledger;
mod listener_reset;
mod nagle;
mod path_mtu;
mod path_stall;
mod quic_amplification_limit;
mod quic_initial_lost;
mod quic_retry;
mod quic_version_negotiation;
mod quic_wire;
mod reordering;
mod resumption;
mod retransmission;
mod rwnd_limited;
mod server_think_time;
mod set_up_unwaited;
mod slow_start_after_idle;
mod syn_answered_by_ack;
mod syn_retransmit;
mod tfo;
mod tls;
mod tls_extra_rtt;
mod upstream_wait;
mod zero_window;

use std::net::IpAddr;

use rttdoc_wire::{Segment, TcpFlags, TcpOptions};

use crate::model::{ConnectionReport, Direction, Endpoint, Finding, FindingKind, Wait};
use rttdoc_analyze::AnalyzeOptions;
use rttdoc_analyze::Stamp;

pub const C: Direction = Direction::ClientToServer;
pub const S: Direction = Direction::ServerToClient;

pub const SYN: u16 = TcpFlags::SYN.bits();
pub const ACK: u16 = TcpFlags::ACK.bits();
pub const FIN: u16 = TcpFlags::FIN.bits();
pub const RST: u16 = TcpFlags::RST.bits();
pub const PSH: u16 = TcpFlags::PSH.bits();

/// The MSS both hosts announce (Ethernet, no TCP timestamps): a full
/// segment carries this many bytes.
pub const MSS: u32 = 1460;

const CLIENT_ISN: u32 = 1_000_000;
const SERVER_ISN: u32 = 7_000_000;

static FILL: [u8; 1 << 16] = [b'x'; 1 << 16];

/// `n` filler bytes of payload.
pub fn bytes(n: u32) -> &'static [u8] {
    &FILL[..n as usize]
}

/// Owned bytes made `'static` for a segment's payload (test data only).
pub fn leak(v: Vec<u8>) -> &'static [u8] {
    Box::leak(v.into_boxed_slice())
}

/// HTTP/2 in the clear (h2c with prior knowledge), as the specs write
/// it: frames, and header blocks of HPACK literals without indexing (RFC
/// 7541 6.2.2: no dynamic table to keep in step), fields as written.
pub mod h2 {
    /// A frame: its 9-byte header and `payload`.
    pub fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
        let mut f = (payload.len() as u32).to_be_bytes()[1..].to_vec();
        f.extend([kind, flags]);
        f.extend(stream.to_be_bytes());
        f.extend(payload);
        f
    }

    /// An empty SETTINGS frame.
    pub fn settings() -> Vec<u8> {
        frame(0x4, 0, 0, &[])
    }

    /// The client's connection preface and its SETTINGS.
    pub fn preface() -> Vec<u8> {
        let mut p = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
        p.extend(settings());
        p
    }

    /// A HEADERS frame with its whole block (END_HEADERS), ending its
    /// stream; each field a literal with a new name (fields under 127
    /// bytes).
    pub fn headers(stream: u32, fields: &[(&str, &str)]) -> Vec<u8> {
        let mut block = Vec::new();
        for (name, value) in fields {
            block.push(0);
            for s in [name, value] {
                block.push(s.len() as u8);
                block.extend(s.as_bytes());
            }
        }
        frame(0x1, 0x4 | 0x1, stream, &block)
    }

    /// A GET of `path` from `example.com` on `stream`, with `more`
    /// fields.
    pub fn get(stream: u32, path: &str, more: &[(&str, &str)]) -> Vec<u8> {
        let mut fields = vec![
            (":method", "GET"),
            (":scheme", "http"),
            (":authority", "example.com"),
            (":path", path),
        ];
        fields.extend_from_slice(more);
        headers(stream, &fields)
    }
}

fn ns(ms: f64) -> i64 {
    (ms * 1e6).round() as i64
}

/// Where the capture is taken: `at` is the fraction of the one-way path
/// between the client (0) and the server (1).
#[derive(Debug, Clone, Copy)]
pub struct Path {
    pub rtt_ms: f64,
    pub at: f64,
}

impl Path {
    pub fn at_client(rtt_ms: f64) -> Path {
        Path { rtt_ms, at: 0.0 }
    }
    pub fn at_server(rtt_ms: f64) -> Path {
        Path { rtt_ms, at: 1.0 }
    }
    /// A tap `at` of the way from the client to the server.
    pub fn mid(rtt_ms: f64, at: f64) -> Path {
        Path { rtt_ms, at }
    }
    /// The three vantages a vantage-independent detector must agree at.
    pub fn all(rtt_ms: f64) -> [Path; 3] {
        [
            Path::at_client(rtt_ms),
            Path::mid(rtt_ms, 0.5),
            Path::at_server(rtt_ms),
        ]
    }
    pub fn one_way_ms(&self) -> f64 {
        self.rtt_ms / 2.0
    }
    /// When a packet sent by the `dir` sender at `sent_ms` passes the
    /// capture point.
    fn captured_ms(&self, dir: Direction, sent_ms: f64) -> f64 {
        let toward = if dir == C { self.at } else { 1.0 - self.at };
        sent_ms + self.one_way_ms() * toward
    }
}

/// A packet's position in the build order (frames are assigned later, in
/// capture order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Id(usize);

struct Pkt {
    sent_ms: f64,
    dir: Direction,
    seg: Segment<'static>,
    /// Relative sequence space it occupies (payload, SYN, FIN).
    rel: (u32, u32),
    /// Lost beyond the capture point: captured, never delivered.
    lost: bool,
    /// Extra delay beyond the capture point (queueing the handshake did
    /// not see): the capture time stays, the arrival moves.
    late_ms: f64,
    /// Captured when sent, wherever the path's capture point is (another
    /// connection of the capture host's: `Wire::call`).
    at_host: bool,
    /// An ICMP "too big" error quoting this segment, naming this MTU: fed
    /// as the quote it is, never delivered to either host.
    too_big: Option<u32>,
    /// A DNS datagram between the client and its resolver (`Wire::dns`),
    /// captured at the client: not a segment of the connection.
    dns: Option<rttdoc_wire::UdpDatagram<'static>>,
}

/// The client's resolver in synthetic timelines.
pub const RESOLVER: &str = "10.0.0.53";

/// The CA's HTTP server a client fetches from ([`Wire::fetch`]).
pub const CA: &str = "10.0.3.3";

/// The initial sequence numbers of [`Wire::connect_back`]'s connection:
/// the server's (it dials) and the client host's.
const DIAL_ISN: u32 = 7_000_000;
const DIALED_ISN: u32 = 9_000_000;

/// The initial sequence numbers of [`Wire::sibling_send`]'s connections:
/// the client host's and the server's.
const SIBLING_ISN: u32 = 3_000_000;
const SIBLING_PEER_ISN: u32 = 5_000_000;

/// The packets of a call the server's host made (`Wire::call`).
pub struct Call {
    /// Its SYN, when it opened a connection.
    pub syn: Option<Id>,
    pub request: Id,
    pub answer: Id,
}

/// Another wire's packets joined to this one ([`Wire::join`]).
pub struct Joined {
    base: usize,
}

impl Joined {
    /// The other wire's packet `id`, in this one.
    pub fn id(&self, id: Id) -> Id {
        Id(self.base + id.0)
    }
}

/// Two hosts' packets, written as each host sends them.
pub struct Wire {
    pub path: Path,
    pkts: Vec<Pkt>,
    next: [u32; 2],
    isn: [u32; 2],
    /// Raw window each host advertises on its next segments.
    pub window: [u16; 2],
    pub options: AnalyzeOptions,
}

impl Wire {
    pub fn new(path: Path) -> Wire {
        Wire {
            path,
            pkts: Vec::new(),
            next: [0, 0],
            isn: [CLIENT_ISN, SERVER_ISN],
            window: [65535, 65535],
            options: AnalyzeOptions::default(),
        }
    }

    /// When a packet sent at `sent_ms` reaches the other host.
    pub fn arrival(&self, id: Id) -> f64 {
        let p = &self.pkts[id.0];
        p.sent_ms + self.path.one_way_ms() + p.late_ms
    }

    /// When the packet was sent, on the absolute clock.
    pub fn sent(&self, id: Id) -> f64 {
        self.pkts[id.0].sent_ms
    }

    /// Relative sequence number of the next byte `dir` sends.
    pub fn next_seq(&self, dir: Direction) -> u32 {
        self.next[dir.index()]
    }

    /// Highest relative sequence of the peer's that `dir`'s host has
    /// received in order by `at_ms` (what its ACK field says).
    fn received(&self, dir: Direction, at_ms: f64) -> u32 {
        let peer = dir.reverse();
        let one_way = self.path.one_way_ms();
        let mut have: Vec<(u32, u32)> = self
            .pkts
            .iter()
            .filter(|p| {
                p.dir == peer
                    && !p.lost
                    && p.too_big.is_none()
                    && p.sent_ms + one_way + p.late_ms <= at_ms + 1e-9
            })
            .map(|p| p.rel)
            .collect();
        have.sort();
        let mut upto = 0u32;
        for (a, b) in have {
            if a <= upto {
                upto = upto.max(b);
            }
        }
        upto
    }

    fn abs(&self, dir: Direction, rel: u32) -> u32 {
        self.isn[dir.index()].wrapping_add(rel)
    }

    fn push(&mut self, dir: Direction, sent_ms: f64, seg: Segment<'static>, rel: (u32, u32)) -> Id {
        self.pkts.push(Pkt {
            sent_ms,
            dir,
            seg,
            rel,
            lost: false,
            late_ms: 0.0,
            at_host: false,
            too_big: None,
            dns: None,
        });
        Id(self.pkts.len() - 1)
    }

    fn segment(
        &self,
        dir: Direction,
        seq_rel: u32,
        flags: u16,
        payload: &'static [u8],
    ) -> Segment<'static> {
        let ip = |s: &str| -> IpAddr { s.parse().unwrap() };
        let (src, dst, sp, dp) = if dir == C {
            (ip("10.0.0.1"), ip("10.0.0.2"), 40000, 443)
        } else {
            (ip("10.0.0.2"), ip("10.0.0.1"), 443, 40000)
        };
        Segment {
            src,
            dst,
            src_port: sp,
            dst_port: dp,
            seq: self.abs(dir, seq_rel),
            ack: 0,
            flags: TcpFlags::from_bits_retain(flags),
            window: self.window[dir.index()],
            options: TcpOptions::default(),
            payload_len: payload.len() as u32,
            payload,
            ip_id: None,
        }
    }

    /// The client's SYN (MSS option), its retransmissions alike.
    pub fn syn(&mut self, t: f64) -> Id {
        let mut s = self.segment(C, 0, SYN, b"");
        s.options.mss = Some(MSS as u16);
        self.next[0] = 1;
        self.push(C, t, s, (0, 1))
    }

    /// A TCP Fast Open SYN: `tfo` option, `payload` riding in the SYN.
    pub fn syn_data(&mut self, t: f64, tfo: rttdoc_wire::Tfo, payload: &'static [u8]) -> Id {
        let mut s = self.segment(C, 0, SYN, payload);
        s.options.mss = Some(MSS as u16);
        s.options.tfo = Some(tfo);
        let end = 1 + payload.len() as u32;
        self.next[0] = end;
        self.push(C, t, s, (0, end))
    }

    /// Data from `dir` at relative sequence `rel` (sent again after a
    /// server ignored it, say); the next new data follows it.
    pub fn send_at(&mut self, dir: Direction, t: f64, rel: u32, payload: &'static [u8]) -> Id {
        let mut s = self.segment(dir, rel, PSH | ACK, payload);
        s.ack = self.abs(dir.reverse(), self.received(dir, t));
        let end = rel + payload.len() as u32;
        self.next[dir.index()] = self.next[dir.index()].max(end);
        self.push(dir, t, s, (rel, end))
    }

    /// A DNS message between the client (UDP `port`) and [`RESOLVER`],
    /// captured at the client at `t` (a query when it leaves, an answer
    /// when it arrives): a query (`answer` None) or an answer with
    /// `rcode` and the server's address `answer` times (A records).
    pub fn dns(
        &mut self,
        t: f64,
        port: u16,
        id: u16,
        name: &str,
        qtype: u16,
        answer: Option<(u8, usize)>,
    ) -> Id {
        self.dns_with(t, port, id, name, qtype, answer, None)
    }

    /// [`Wire::dns`] with one more address in the answer.
    #[allow(clippy::too_many_arguments)]
    pub fn dns_with(
        &mut self,
        t: f64,
        port: u16,
        id: u16,
        name: &str,
        qtype: u16,
        answer: Option<(u8, usize)>,
        extra: Option<IpAddr>,
    ) -> Id {
        let mut m = Vec::new();
        m.extend(id.to_be_bytes());
        let flags: u16 = match answer {
            Some((rcode, _)) => 0x8180 | rcode as u16,
            None => 0x0100,
        };
        m.extend(flags.to_be_bytes());
        let records = answer.map_or(0, |(_, n)| n) as u16;
        m.extend([0, 1]);
        m.extend(records.to_be_bytes());
        m.extend([0, 0, 0, 0]);
        for label in name.split('.') {
            m.push(label.len() as u8);
            m.extend(label.as_bytes());
        }
        m.push(0);
        m.extend(qtype.to_be_bytes());
        m.extend([0, 1]);
        for _ in 0..records {
            m.extend([0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 30, 0, 4, 10, 0, 0, 2]);
        }
        if let Some(extra) = extra {
            // One more record: another address of the name.
            let n = u16::from_be_bytes([m[6], m[7]]) + 1;
            m[6..8].copy_from_slice(&n.to_be_bytes());
            match extra {
                IpAddr::V4(a) => {
                    m.extend([0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 30, 0, 4]);
                    m.extend(a.octets());
                }
                IpAddr::V6(a) => {
                    m.extend([0xc0, 12, 0, 28, 0, 1, 0, 0, 0, 30, 0, 16]);
                    m.extend(a.octets());
                }
            }
        }
        let ip = |s: &str| -> IpAddr { s.parse().unwrap() };
        let (client, resolver) = (ip("10.0.0.1"), ip(RESOLVER));
        // A query leaves the client's port for 53; an answer comes back.
        let ((src, src_port), (dst, dst_port)) = match answer {
            None => ((client, port), (resolver, 53)),
            Some(_) => ((resolver, 53), (client, port)),
        };
        let datagram = rttdoc_wire::UdpDatagram {
            src,
            dst,
            src_port,
            dst_port,
            declared_len: m.len(),
            payload: leak(m),
            cut: false,
        };
        let id = self.push(C, t, self.segment(C, 0, ACK, b""), (0, 0));
        let p = &mut self.pkts[id.0];
        p.at_host = true;
        p.lost = true;
        p.dns = Some(datagram);
        id
    }

    /// A connection that asks at once: its handshake from `t`, a request
    /// the moment it is up, the answer 1 ms after the request arrives.
    /// Returns the SYN.
    pub fn ask_at(&mut self, t: f64) -> Id {
        let [syn, _, ack] = self.handshake(t);
        let request = self.send(C, self.sent(ack), b"GET / HTTP/1.1\r\nHost: a\r\n\r\n");
        self.send(
            S,
            self.arrival(request) + 1.0,
            b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
        );
        syn
    }

    /// The server's SYN-ACK.
    pub fn syn_ack(&mut self, t: f64) -> Id {
        let mut s = self.segment(S, 0, SYN | ACK, b"");
        s.options.mss = Some(MSS as u16);
        s.ack = self.abs(C, self.received(S, t).max(1));
        self.next[1] = 1;
        self.push(S, t, s, (0, 1))
    }

    /// SYN at `t0`, SYN-ACK the moment it arrives, the client's ACK the
    /// moment that arrives: one round trip.
    pub fn handshake(&mut self, t0: f64) -> [Id; 3] {
        let d = self.path.one_way_ms();
        let syn = self.syn(t0);
        let syn_ack = self.syn_ack(t0 + d);
        let ack = self.ack(C, t0 + 2.0 * d);
        [syn, syn_ack, ack]
    }

    /// New data from `dir` at `t`, acknowledging all it has received.
    pub fn send(&mut self, dir: Direction, t: f64, payload: &'static [u8]) -> Id {
        let seq = self.next[dir.index()];
        let mut s = self.segment(dir, seq, PSH | ACK, payload);
        s.ack = self.abs(dir.reverse(), self.received(dir, t));
        let end = seq + payload.len() as u32;
        self.next[dir.index()] = end;
        self.push(dir, t, s, (seq, end))
    }

    /// `payload` and the sender's FIN in one segment (a server that
    /// closes as it writes its last answer).
    pub fn send_fin(&mut self, dir: Direction, t: f64, payload: &'static [u8]) -> Id {
        let seq = self.next[dir.index()];
        let mut s = self.segment(dir, seq, FIN | PSH | ACK, payload);
        s.ack = self.abs(dir.reverse(), self.received(dir, t));
        let end = seq + payload.len() as u32;
        self.next[dir.index()] = end + 1;
        self.push(dir, t, s, (seq, end + 1))
    }

    /// `n` filler bytes of new data.
    pub fn data(&mut self, dir: Direction, t: f64, n: u32) -> Id {
        self.send(dir, t, bytes(n))
    }

    /// Server data to the same client on `flows` other connections (server
    /// ports 444, 445, ...; already open), taking turns: a segment of
    /// `size` bytes every `gap_ms` from `from_ms` to `to_ms` (server send
    /// times). The client's other downloads on its downlink; they are in
    /// the capture, not in this connection's report.
    pub fn background(&mut self, flows: u16, from_ms: f64, to_ms: f64, gap_ms: f64, size: u32) {
        self.bursts(flows, from_ms, to_ms, gap_ms, 1, size);
    }

    /// A connection the server opens back to the client's host, to its
    /// port `port` (FTP's active data connection, ident's 113), from port
    /// 20: its SYN sent at `t`, and, when `accepted`, the client host's
    /// SYN-ACK the moment the SYN arrives and the server's ACK the moment
    /// that arrives. Its SYN and SYN-ACK (None when not accepted).
    pub fn connect_back(&mut self, port: u16, t: f64, accepted: bool) -> (Id, Option<Id>) {
        let (isn, peer_isn) = (DIAL_ISN, DIALED_ISN);
        let syn = self.dial_back(port, t, S, SYN, isn, 0);
        if !accepted {
            return (syn, None);
        }
        let d = self.path.one_way_ms();
        let syn_ack = self.dial_back(port, t + d, C, SYN | ACK, peer_isn, isn + 1);
        self.dial_back(port, t + 2.0 * d, S, ACK, isn + 1, peer_isn + 1);
        (syn, Some(syn_ack))
    }

    /// Data the server's host sends at `t` on [`Wire::connect_back`]'s
    /// connection to the client's port `port` (the server its client: two
    /// peers that dialled each other). Each call goes on where the last
    /// ended.
    pub fn connect_back_send(&mut self, port: u16, t: f64, payload: &'static [u8]) -> Id {
        let sent: u32 = self
            .pkts
            .iter()
            .filter(|p| p.dir == S && p.seg.src_port == 20 && p.seg.dst_port == port)
            .map(|p| p.seg.payload_len)
            .sum();
        let mut s = self.segment(S, 0, PSH | ACK, payload);
        (s.src_port, s.dst_port) = (20, port);
        (s.seq, s.ack) = (DIAL_ISN.wrapping_add(1 + sent), DIALED_ISN.wrapping_add(1));
        self.push(S, t, s, (0, 0))
    }

    /// Data the client's host sends at `t` to the server on another
    /// connection between the two (a sibling, from the client's port
    /// `port`, opened before the capture began): an MQTT publisher on the
    /// subscriber's host. Each call goes on where the last on that port
    /// ended.
    pub fn sibling_send(&mut self, port: u16, t: f64, payload: &'static [u8]) -> Id {
        let sent: u32 = self
            .pkts
            .iter()
            .filter(|p| p.dir == C && p.seg.src_port == port)
            .map(|p| p.seg.payload_len)
            .sum();
        let mut s = self.segment(C, 0, PSH | ACK, payload);
        s.src_port = port;
        (s.seq, s.ack) = (SIBLING_ISN.wrapping_add(sent), SIBLING_PEER_ISN);
        self.push(C, t, s, (0, 0))
    }

    /// A SYN of another connection of the client's, from its port `port`
    /// to `to` (another address of the server's name) on the server's
    /// port, captured at the client at `t`; never delivered.
    pub fn syn_to(&mut self, t: f64, port: u16, to: &str) -> Id {
        let mut s = self.segment(C, 0, SYN, b"");
        s.src_port = port;
        s.dst = to.parse().unwrap();
        if s.dst.is_ipv6() {
            s.src = "2001:db8::1".parse().unwrap();
        }
        s.seq = SIBLING_ISN.wrapping_add(port as u32);
        s.options.mss = Some(MSS as u16);
        let id = self.push(C, t, s, (0, 0));
        let p = &mut self.pkts[id.0];
        p.at_host = true;
        p.lost = true;
        id
    }

    /// Another connection of the same client host to the same server,
    /// from the client's port `port` (and the server's port
    /// `server_port`), built on its own [`Wire`] on this one's path: its
    /// packets join this capture, with sequence numbers of their own (not
    /// this connection's seen again, twins.rs). What it returns maps the
    /// other wire's packets to this one's.
    pub fn join(&mut self, other: Wire, port: u16, server_port: u16) -> Joined {
        const OTHER_ISN: [u32; 2] = [0x0100_0000, 0x0200_0000];
        let base = self.pkts.len();
        for mut p in other.pkts {
            let (own, peer) = (p.dir.index(), p.dir.reverse().index());
            p.seg.seq = p.seg.seq.wrapping_add(OTHER_ISN[own]);
            if p.seg.flags.ack() {
                p.seg.ack = p.seg.ack.wrapping_add(OTHER_ISN[peer]);
            }
            if p.dir == C {
                (p.seg.src_port, p.seg.dst_port) = (port, server_port);
            } else {
                (p.seg.src_port, p.seg.dst_port) = (server_port, port);
            }
            // (Not this connection's bytes: its ACKs do not count them.)
            p.rel = (0, 0);
            self.pkts.push(p);
        }
        Joined { base }
    }

    /// Like [`Wire::join`], with another server: at `server`, on port
    /// 443.
    pub fn join_server(&mut self, other: Wire, port: u16, server: &str) -> Joined {
        let joined = self.join(other, port, 443);
        let server: IpAddr = server.parse().unwrap();
        for p in &mut self.pkts[joined.base..] {
            if p.dir == C {
                p.seg.dst = server;
            } else {
                p.seg.src = server;
            }
        }
        joined
    }

    /// The client host's FIN, sent at `t`, on the connection
    /// [`Wire::connect_back`] opened to its port `port` (the client closing
    /// an FTP data connection).
    pub fn connect_back_fin(&mut self, port: u16, t: f64) -> Id {
        self.dial_back(port, t, C, FIN | ACK, DIALED_ISN + 1, DIAL_ISN + 1)
    }

    /// A segment of [`Wire::connect_back`]'s connection (server port 20,
    /// the client's `port`) from `dir`; SYNs carry the MSS option.
    fn dial_back(
        &mut self,
        port: u16,
        t: f64,
        dir: Direction,
        flags: u16,
        seq: u32,
        ack: u32,
    ) -> Id {
        let mut s = self.segment(dir, 0, flags, b"");
        (s.src_port, s.dst_port) = if dir == S { (20, port) } else { (port, 20) };
        (s.seq, s.ack) = (seq, ack);
        if flags & SYN != 0 {
            s.options.mss = Some(MSS as u16);
        }
        self.push(dir, t, s, (0, 0))
    }

    /// A call the server's host makes from its address `from` (port
    /// `port`) to an upstream 10.0.1.9:8080, 0.2 ms away: with `connect` a
    /// connection opened at `t` (the request 0.3 ms later), otherwise one
    /// open before the capture (the request at `t`); the upstream answers
    /// `work_ms` after the request arrives. The capture is the host's: each
    /// packet is captured as it leaves or arrives there.
    pub fn call(
        &mut self,
        from: &str,
        port: u16,
        t: f64,
        request: &'static [u8],
        work_ms: f64,
        connect: bool,
    ) -> Call {
        let to = Endpoint {
            ip: "10.0.1.9".parse().unwrap(),
            port: 8080,
        };
        let answer = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
        self.call_to(from, port, to, 0.2, t, request, answer, work_ms, connect)
    }

    /// A fetch the client's host makes from its port `port` to a CA's
    /// HTTP server, 10.0.3.3:80, `rtt_ms` away (another path than this
    /// connection's): with `connect` a connection opened at `t`,
    /// otherwise one open before the capture (the request at `t`); the
    /// server answers `answer` at once. Captured at the client's host,
    /// as each packet leaves or arrives there.
    pub fn fetch(
        &mut self,
        port: u16,
        t: f64,
        rtt_ms: f64,
        request: &'static [u8],
        answer: &'static [u8],
        connect: bool,
    ) -> Call {
        let ca = Endpoint {
            ip: CA.parse().unwrap(),
            port: 80,
        };
        self.call_to(
            "10.0.0.1", port, ca, rtt_ms, t, request, answer, 0.0, connect,
        )
    }

    /// A call from the address `from` (port `port`) to `to`, `rtt_ms`
    /// away: its handshake from `t` when it `connect`s (its request the
    /// moment it is up, a tenth of a millisecond later), else its
    /// request at `t`; `answer` `work_ms` after the request arrives.
    /// Captured at `from`'s host.
    #[allow(clippy::too_many_arguments)]
    fn call_to(
        &mut self,
        from: &str,
        port: u16,
        to: Endpoint,
        rtt_ms: f64,
        t: f64,
        request: &'static [u8],
        answer_bytes: &'static [u8],
        work_ms: f64,
        connect: bool,
    ) -> Call {
        let ip = |s: &str| -> IpAddr { s.parse().unwrap() };
        let (host, upstream) = (ip(from), to.ip);
        let (isn, up_isn) = (3_000_000u32, 5_000_000u32);
        let push = |w: &mut Wire,
                    at: f64,
                    out: bool,
                    seq: u32,
                    ack: u32,
                    flags: u16,
                    payload: &'static [u8]| {
            let (src, dst, sp, dp) = if out {
                (host, upstream, port, to.port)
            } else {
                (upstream, host, to.port, port)
            };
            let mut s = w.segment(C, 0, flags, payload);
            (s.src, s.dst, s.src_port, s.dst_port) = (src, dst, sp, dp);
            (s.seq, s.ack) = (seq, ack);
            w.pkts.push(Pkt {
                sent_ms: at,
                dir: if out { C } else { S },
                seg: s,
                rel: (0, 0),
                lost: false,
                late_ms: 0.0,
                at_host: true,
                too_big: None,
                dns: None,
            });
            Id(w.pkts.len() - 1)
        };
        let (syn, asked) = if connect {
            let syn = push(self, t, true, isn, 0, SYN, b"");
            push(self, t + rtt_ms, false, up_isn, isn + 1, SYN | ACK, b"");
            push(self, t + rtt_ms, true, isn + 1, up_isn + 1, ACK, b"");
            (Some(syn), t + rtt_ms + 0.1)
        } else {
            (None, t)
        };
        let request_id = push(self, asked, true, isn + 1, up_isn + 1, PSH | ACK, request);
        let sent = isn + 1 + request.len() as u32;
        let answered = asked + rtt_ms + work_ms;
        let answer = push(
            self,
            answered,
            false,
            up_isn + 1,
            sent,
            PSH | ACK,
            answer_bytes,
        );
        let got = up_isn + 1 + answer_bytes.len() as u32;
        push(self, answered + 0.05, true, sent, got, ACK, b"");
        Call {
            syn,
            request: request_id,
            answer,
        }
    }

    /// Like [`Wire::background`], but `per_burst` segments leave together
    /// every `period_ms` (a link that delivers in aggregates, a capture
    /// host that stamps a poll's packets alike): as busy a downlink, with
    /// arrivals too uneven to be judged saturated block by block.
    pub fn bursts(
        &mut self,
        flows: u16,
        from_ms: f64,
        to_ms: f64,
        period_ms: f64,
        per_burst: u32,
        size: u32,
    ) {
        let mut t = from_ms;
        let mut i = 0u32;
        while t <= to_ms {
            for _ in 0..per_burst {
                let flow = (i % flows as u32) as u16;
                let mut s = self.segment(S, 1 + size * (i / flows as u32), PSH | ACK, bytes(size));
                s.src_port = 444 + flow;
                s.dst_port = 40001 + flow;
                s.ack = 1;
                self.pkts.push(Pkt {
                    sent_ms: t,
                    dir: S,
                    seg: s,
                    rel: (0, 0),
                    lost: false,
                    late_ms: 0.0,
                    at_host: false,
                    too_big: None,
                    dns: None,
                });
                i += 1;
            }
            t += period_ms;
        }
    }

    /// `count` full segments back to back, `gap_ms` apart.
    pub fn burst(&mut self, dir: Direction, t: f64, count: usize, gap_ms: f64) -> Vec<Id> {
        (0..count)
            .map(|i| self.data(dir, t + i as f64 * gap_ms, MSS))
            .collect()
    }

    /// Numbers `dir`'s datagrams in the order they were written here (its
    /// send order, whatever `delay` did on the way): their IPv4
    /// identifications from `first`, as Linux's per-socket counter does.
    pub fn count_datagrams(&mut self, dir: Direction, first: u16) {
        let mut next = first;
        for p in self.pkts.iter_mut().filter(|p| p.dir == dir) {
            p.seg.ip_id = Some(next);
            next = next.wrapping_add(1);
        }
    }

    /// The same bytes as `id` sent again (a retransmission).
    pub fn resend(&mut self, t: f64, id: Id) -> Id {
        let (dir, rel, payload, flags) = {
            let p = &self.pkts[id.0];
            (p.dir, p.rel, p.seg.payload, p.seg.flags.bits())
        };
        let mut s = self.segment(dir, rel.0, flags, payload);
        s.ack = self.abs(dir.reverse(), self.received(dir, t));
        self.push(dir, t, s, rel)
    }

    /// A pure ACK from `dir` of everything it has received by `t`.
    pub fn ack(&mut self, dir: Direction, t: f64) -> Id {
        let upto = self.received(dir, t);
        self.ack_upto(dir, t, upto)
    }

    /// A pure ACK from `dir` acknowledging up to relative sequence `upto`.
    pub fn ack_upto(&mut self, dir: Direction, t: f64, upto: u32) -> Id {
        let seq = self.next[dir.index()];
        let mut s = self.segment(dir, seq, ACK, b"");
        s.ack = self.abs(dir.reverse(), upto);
        self.push(dir, t, s, (seq, seq))
    }

    /// A FIN from `dir` (with an ACK of what it has).
    pub fn fin(&mut self, dir: Direction, t: f64) -> Id {
        let seq = self.next[dir.index()];
        let mut s = self.segment(dir, seq, FIN | ACK, b"");
        s.ack = self.abs(dir.reverse(), self.received(dir, t));
        self.next[dir.index()] = seq + 1;
        self.push(dir, t, s, (seq, seq + 1))
    }

    /// An RST from `dir`.
    pub fn rst(&mut self, dir: Direction, t: f64) -> Id {
        let seq = self.next[dir.index()];
        let mut s = self.segment(dir, seq, RST | ACK, b"");
        s.ack = self.abs(dir.reverse(), self.received(dir, t));
        self.push(dir, t, s, (seq, seq))
    }

    /// An ICMP "fragmentation needed" quoting `id`, naming the hop's
    /// `mtu`, captured at `captured_ms` (a router's answer on its way
    /// back to the sender).
    pub fn too_big(&mut self, captured_ms: f64, id: Id, mtu: u32) -> Id {
        let p = &self.pkts[id.0];
        let (dir, seg, rel) = (p.dir, p.seg, p.rel);
        let at = self.push(dir, captured_ms, seg, rel);
        self.pkts[at.0].at_host = true;
        self.pkts[at.0].too_big = Some(mtu);
        at
    }

    /// The packet is lost beyond the capture point: captured, never
    /// delivered (nothing acknowledges it).
    pub fn lose(&mut self, id: Id) {
        self.pkts[id.0].lost = true;
    }

    /// The packet is `ms` late beyond the capture point (path jitter the
    /// handshake did not show): captured on time, delivered late.
    pub fn late_after_tap(&mut self, id: Id, ms: f64) {
        self.pkts[id.0].late_ms = ms;
    }

    /// The packet took `ms` longer on its way (a slower path: reordering),
    /// as if sent that much later.
    pub fn delay(&mut self, id: Id, ms: f64) {
        self.pkts[id.0].sent_ms += ms;
    }

    /// The absolute sequence number of relative `rel` in `dir`.
    pub fn abs_seq(&self, dir: Direction, rel: u32) -> u32 {
        self.abs(dir, rel)
    }

    /// Relative sequence space a packet occupies.
    pub fn span(&self, id: Id) -> (u32, u32) {
        self.pkts[id.0].rel
    }

    /// Stamps every packet `dir`'s host sent so far with TCP timestamps:
    /// its TSval from when it was sent, on a clock of `hz` (from 7000
    /// ticks). A later [`delay`](Self::delay) holds a packet on the path
    /// after its stamp.
    pub fn stamp(&mut self, dir: Direction, hz: f64) {
        for p in self.pkts.iter_mut().filter(|p| p.dir == dir) {
            let ticks = 7_000 + (p.sent_ms * hz / 1000.0) as u32;
            p.seg.options.timestamps = Some((ticks, 1));
        }
    }

    /// Changes a packet as built (options, window ...).
    pub fn edit(&mut self, id: Id, f: impl FnOnce(&mut Segment<'static>)) {
        f(&mut self.pkts[id.0].seg)
    }

    /// Like [`run`](Self::run), with the packets `missing` not in the
    /// capture (it started late, or dropped them).
    pub fn run_missing(self, missing: &[Id]) -> Outcome {
        let gone: Vec<usize> = missing.iter().map(|i| i.0).collect();
        self.run_filtered(|i, _| !gone.contains(&i))
    }

    /// Like [`run`](Self::run), the packets `lost` ([`lose`](Self::lose))
    /// in the capture only where the path passes the capture point before
    /// the loss: a capture on the receiving host never sees them.
    pub fn run_lost(self, lost: &[Id]) -> Outcome {
        let at_receiver = |id: &Id| match self.pkts[id.0].dir {
            Direction::ClientToServer => self.path.at >= 1.0,
            Direction::ServerToClient => self.path.at <= 0.0,
        };
        let missing: Vec<Id> = lost.iter().copied().filter(at_receiver).collect();
        self.run_missing(&missing)
    }

    /// Puts the packets in capture order, numbers the frames from 1 and
    /// runs them through the tracker and the detectors.
    pub fn run(self) -> Outcome {
        self.run_where(|_| true)
    }

    /// Like [`run`](Self::run), with only the packets that carry data in
    /// the capture (a `tcp.len > 0` filter: no SYN, SYN-ACK, pure ACK,
    /// nor a FIN or RST without data).
    pub fn run_data_only(self) -> Outcome {
        let data: Vec<bool> = self.pkts.iter().map(|p| p.seg.payload_len > 0).collect();
        self.run_filtered(|i, _| data[i])
    }

    /// Like [`run`](Self::run), with only the packets `keep` lets through
    /// in the capture (a capture of one direction, a capture that missed
    /// a packet).
    pub fn run_where(self, keep: impl Fn(Direction) -> bool) -> Outcome {
        self.run_filtered(|_, d| keep(d))
    }

    fn run_filtered(self, keep: impl Fn(usize, Direction) -> bool) -> Outcome {
        let mut order: Vec<(f64, usize)> = self
            .pkts
            .iter()
            .enumerate()
            .filter(|(i, p)| keep(*i, p.dir))
            .map(|(i, p)| {
                let at = if p.at_host {
                    p.sent_ms
                } else {
                    self.path.captured_ms(p.dir, p.sent_ms)
                };
                (at, i)
            })
            .collect();
        order.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let mut frame_of = vec![0u64; self.pkts.len()];
        let mut reports = Vec::new();
        {
            let mut sink = |r: ConnectionReport| reports.push(r);
            let mut t = crate::tracker(self.options.clone(), &mut sink);
            for (k, (at, i)) in order.iter().enumerate() {
                let frame = k as u64 + 1;
                frame_of[*i] = frame;
                let stamp = Stamp {
                    frame,
                    ts_ns: ns(*at),
                };
                let p = &self.pkts[*i];
                if let Some(d) = &p.dns {
                    t.track_dns(stamp, d);
                    continue;
                }
                match p.too_big {
                    Some(mtu) => t.track_quoted(
                        stamp,
                        &rttdoc_wire::QuotedTcp {
                            src: p.seg.src,
                            dst: p.seg.dst,
                            src_port: p.seg.src_port,
                            dst_port: p.seg.dst_port,
                            seq: p.seg.seq,
                            flags: p.seg.flags,
                            too_big: Some(mtu),
                        },
                    ),
                    None => t.track_segment(stamp, &p.seg),
                }
            }
            t.finish();
        }
        // The connection built here (the background's and the siblings'
        // are others').
        reports.retain(|r| r.server.port == 443 && r.client.port == 40000);
        assert_eq!(reports.len(), 1, "one connection");
        Outcome {
            report: reports.pop().unwrap(),
            frame_of,
            path: self.path,
        }
    }
}

/// An upload longer than the detectors' segment timeline (2,048
/// segments), captured at the client: one of its early segments is lost
/// and repaired after the request's last new byte. The server can read
/// the request whole only when the repair arrives, and answers `think`
/// ms after that.
pub fn upload_repaired_late(think: f64) -> Outcome {
    let mut w = Wire::new(Path::at_client(40.0));
    w.handshake(0.0);
    let segments = crate::model::TIMELINE_CAP + 300;
    let sent = w.burst(C, 40.0, segments, 0.01);
    w.lose(sent[5]);
    let last = *sent.last().unwrap();
    // The server's duplicate ACKs stop at the hole; the repair leaves a
    // round trip after the request's last new byte.
    w.ack_upto(S, w.arrival(sent[6]), w.span(sent[5]).0);
    let repair = w.resend(w.sent(last) + 40.0, sent[5]);
    w.ack(S, w.arrival(repair));
    w.data(S, w.arrival(repair) + think, 300);
    w.fin(S, w.arrival(repair) + think + 1.0);
    w.fin(C, w.arrival(repair) + think + 45.0);
    w.run()
}

/// What the analysis said about one connection.
pub struct Outcome {
    pub report: ConnectionReport,
    frame_of: Vec<u64>,
    pub path: Path,
}

impl Outcome {
    /// The frame number a packet got in the capture.
    pub fn frame(&self, id: Id) -> u64 {
        let f = self.frame_of[id.0];
        assert!(f > 0, "packet {id:?} is not in the capture");
        f
    }

    pub fn frames(&self, ids: &[Id]) -> Vec<u64> {
        ids.iter().map(|i| self.frame(*i)).collect()
    }

    /// The ledger's first-byte row of exchange `n` (0: the greeting).
    pub fn first_byte_row(&self, n: u32) -> &crate::model::LedgerRow {
        self.report
            .ledger
            .iter()
            .find(|r| r.exchange == Some(n) && r.phase == crate::model::Phase::FirstByte)
            .unwrap_or_else(|| panic!("no first-byte row of exchange {n}"))
    }

    pub fn kinds(&self) -> Vec<FindingKind> {
        self.report.findings.iter().map(|f| f.kind).collect()
    }

    /// The ledger's first row of `phase` (fails when there is none).
    pub fn row(&self, phase: crate::model::Phase) -> &crate::model::LedgerRow {
        self.report
            .ledger
            .iter()
            .find(|r| r.phase == phase)
            .unwrap_or_else(|| panic!("no {phase:?} row at {:?}", self.path))
    }

    /// The one finding of `kind` (fails when there is none or several).
    pub fn the(&self, kind: FindingKind) -> &Finding {
        let all: Vec<&Finding> = self
            .report
            .findings
            .iter()
            .filter(|f| f.kind == kind)
            .collect();
        assert_eq!(
            all.len(),
            1,
            "expected one {kind} at {:?}; findings: {:#?}",
            self.path,
            self.report.findings
        );
        all[0]
    }

    /// The one finding of `kind` in `phase` (fails when there is none or
    /// several).
    pub fn the_in(&self, kind: FindingKind, phase: crate::model::Phase) -> &Finding {
        let all: Vec<&Finding> = self
            .report
            .findings
            .iter()
            .filter(|f| f.kind == kind && f.phase == Some(phase))
            .collect();
        assert_eq!(
            all.len(),
            1,
            "expected one {kind} in {phase:?} at {:?}; findings: {:#?}",
            self.path,
            self.report.findings
        );
        all[0]
    }

    /// Asserts no finding of `kind` in `phase`.
    pub fn has_none_in(&self, kind: FindingKind, phase: crate::model::Phase) {
        assert!(
            !self
                .report
                .findings
                .iter()
                .any(|f| f.kind == kind && f.phase == Some(phase)),
            "no {kind} in {phase:?} expected at {:?}; findings: {:#?}",
            self.path,
            self.report.findings
        );
    }

    /// Asserts no finding of `kind`.
    pub fn has_no(&self, kind: FindingKind) {
        assert!(
            !self.kinds().contains(&kind),
            "no {kind} expected at {:?}; findings: {:#?}",
            self.path,
            self.report.findings
        );
    }

    /// A wait from `from` to `to`, released by `release`, of `ms`.
    pub fn wait(&self, from: Id, to: Id, release: Option<Id>, ms: f64) -> Wait {
        Wait {
            from_frame: self.frame(from),
            to_frame: self.frame(to),
            release_frame: release.map(|r| self.frame(r)),
            ms,
        }
    }
}

/// One keep-alive connection, its set-up at 0: `first` answered (1 ms
/// after it arrived) by `answer`, then, `turnaround` ms after the answer
/// reached the client, `next`, answered by a page (a redirect followed, a
/// challenge answered, or a near miss of either). Returns `first`, the
/// answer and `next`.
pub fn asked_again(
    path: Path,
    first: &'static [u8],
    answer: &'static [u8],
    turnaround: f64,
    next: &'static [u8],
) -> (Outcome, [Id; 3]) {
    let mut w = Wire::new(path);
    let [_, _, ack] = w.handshake(0.0);
    let asked = w.send(C, w.sent(ack), first);
    let answered = w.send(S, w.arrival(asked) + 1.0, answer);
    let again = w.send(C, w.arrival(answered) + turnaround, next);
    let page = w.send(S, w.arrival(again) + 1.0, bytes(300));
    w.ack(C, w.arrival(page));
    (w.run(), [asked, answered, again])
}

/// The client's port of an earlier connection [`Wire::join`]ed before
/// the one a spec is about (a redirect's, a challenge's, a preflight's, a
/// connection that could have been reused).
pub const EARLIER: u16 = 39_000;

/// `first` on a connection of its own (client port [`EARLIER`], server
/// port `server_port`) answered by `answer` 1 ms after it arrived (with
/// the server's FIN when `closes`), then a connection opened `turnaround`
/// ms after the answer reached the client, asking `next` at once.
/// Returns the outcome and (first, answer: this capture's ids; the new
/// connection's SYN, `next`).
pub fn asked_again_on_a_new_connection(
    path: Path,
    server_port: u16,
    (first, answer, closes): (&'static [u8], &'static [u8], bool),
    turnaround: f64,
    next: &'static [u8],
) -> (Outcome, [Id; 4]) {
    let mut old = Wire::new(path);
    let [_, _, ack] = old.handshake(0.0);
    let asked = old.send(C, old.sent(ack), first);
    let answered = match closes {
        true => old.send_fin(S, old.arrival(asked) + 1.0, answer),
        false => old.send(S, old.arrival(asked) + 1.0, answer),
    };
    old.ack(C, old.arrival(answered));
    let t = old.arrival(answered) + turnaround;
    let mut w = Wire::new(path);
    let joined = w.join(old, EARLIER, server_port);
    let [syn, _, ack] = w.handshake(t);
    let again = w.send(C, w.sent(ack), next);
    let page = w.send(S, w.arrival(again) + 1.0, bytes(300));
    w.ack(C, w.arrival(page));
    let ids = [joined.id(asked), joined.id(answered), syn, again];
    (w.run(), ids)
}

/// `f`'s display filter shows its frames on both connections of a
/// [`Wire::join`]ed capture (streams 0 and 1).
#[track_caller]
pub fn assert_shown_on_both_streams(f: &Finding) {
    let frames: Vec<String> = f.frames.iter().map(|n| n.to_string()).collect();
    assert_eq!(
        f.display_filter,
        format!(
            "(tcp.stream eq 0 || tcp.stream eq 1) && frame.number in {{{}}}",
            frames.join(", ")
        )
    );
}

/// The one finding of `kind` on [`asked_again`]'s connection (`ids`:
/// what it returned), checked for what every such finding is: one wait
/// of `ms` from the first request to the next, released by the answer
/// between them (both ends the client's packets: exact at every vantage),
/// the three frames cited and shown, priced into the ideal.
pub fn the_wait_to_ask_again(o: &Outcome, kind: FindingKind, ids: [Id; 3], ms: f64) -> &Finding {
    let [asked, answered, again] = ids;
    let f = o.the(kind);
    assert_eq!(f.phase, Some(crate::model::Phase::FirstByte));
    assert_eq!(f.frames, o.frames(&ids));
    assert_waits(&f.waits, &[o.wait(asked, again, Some(answered), ms)], 1e-3);
    assert_cost_is_its_waits(f);
    assert_eq!(f.attributed_ms, 0.0, "the ideal counts every request");
    assert_eq!(
        f.display_filter,
        format!(
            "tcp.stream eq 0 && frame.number in {{{}, {}, {}}}",
            o.frame(asked),
            o.frame(answered),
            o.frame(again)
        )
    );
    f
}

/// `actual` is `expected` within `tol` (all ms); `why` says where the
/// tolerance comes from.
#[track_caller]
pub fn assert_ms(actual: f64, expected: f64, tol: f64, why: &str) {
    assert!(
        (actual - expected).abs() <= tol,
        "{actual} ms, expected {expected} ± {tol} ms ({why})"
    );
}

/// The waits of a finding equal `expected` in frames, and in ms within `tol`.
#[track_caller]
pub fn assert_waits(actual: &[Wait], expected: &[Wait], tol: f64) {
    assert_eq!(actual.len(), expected.len(), "{actual:#?}");
    for (a, e) in actual.iter().zip(expected) {
        assert_eq!(
            (a.from_frame, a.to_frame, a.release_frame),
            (e.from_frame, e.to_frame, e.release_frame),
            "{actual:#?}"
        );
        assert_ms(a.ms, e.ms, tol, "wait length");
    }
}

/// Causality rule 4 (detect/causality.rs, docs/findings.md "Causality"):
/// "a finding's cost is the sum of its waits: no cost without a wait".
#[track_caller]
pub fn assert_cost_is_its_waits(f: &Finding) {
    assert!(!f.waits.is_empty(), "{} cites no waits", f.kind);
    let sum: f64 = f.waits.iter().map(|w| w.ms).sum();
    assert_ms(f.cost_ms, sum, 1e-6, "cost = sum of waits");
}

/// The builder itself: a clean handshake puts the capture where the path
/// says, with the path's RTT, so the specifications' vantage loops do
/// test three vantages.
#[test]
fn the_capture_is_taken_where_the_path_says() {
    use crate::model::Vantage;
    let expected = [Vantage::Client, Vantage::Middle, Vantage::Server];
    for (path, vantage) in Path::all(40.0).into_iter().zip(expected) {
        let mut w = Wire::new(path);
        w.handshake(0.0);
        let o = w.run();
        assert_eq!(o.report.vantage, vantage);
        assert_eq!(o.report.rtt_ms, Some(40.0));
    }
}
