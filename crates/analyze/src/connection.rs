//! One TCP connection: per-direction sequence tracking, the handshake, RTT
//! samples, in-order delivery of payload to the TLS and exchange observers.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use rttdoc_wire::{Segment, TcpFlags, Tfo};

use crate::exchange::Exchanges;
use crate::model::{
    Direction, DirectionStats, Endpoint, HandshakeReport, LadderEntry, TfoOutcome, TfoReport,
};
use crate::preamble::Verdict;
use crate::rtt::RttSamples;
use crate::send_order::{SendOrder, SentMark};
use crate::seq;
use crate::tls::TlsSession;

/// Segments kept per connection for the detectors (the model's, whose
/// words name it).
pub use crate::model::TIMELINE_CAP;

/// How many retransmissions past the timeline's cap a connection keeps
/// the frames of (a finding cites at most 40 frames).
pub const LATE_RETRANSMISSIONS_CITED: usize = 40;

/// How many of its re-sends a connection notes what its client heard on
/// its other connections at (a backoff series is a handful; a lossy bulk
/// transfer's hundreds say nothing more).
pub const RESENDS_HEARD_KEPT: usize = 32;

/// Uplink waits a connection keeps (`Connection::uplink_waits`): the
/// newest, a window's requests' at least.
pub const UPLINK_WAITS_KEPT: usize = 256;

/// The least uplink wait a connection keeps: shorter ones change no
/// diagnosis.
pub const UPLINK_WAIT_KEPT_NS: i64 = 1_000_000;

/// One segment, compactly, for the detectors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentRecord {
    pub frame: u64,
    pub ts_ns: i64,
    pub dir: Direction,
    /// Sequence number and end, relative to the sender's first sequence number.
    pub seq: u32,
    pub end: u32,
    /// Acknowledgement, relative to the peer's first sequence number (valid when `ack_set`).
    pub ack: u32,
    pub ack_set: bool,
    pub len: u32,
    pub flags: TcpFlags,
    pub window: u16,
    /// Carries bytes never sent before.
    pub new_data: bool,
    /// Re-sends bytes (or a SYN/FIN) already seen, late enough not to be
    /// reordering: counted in `DirectionStats::retransmissions`.
    pub retransmission: bool,
    /// A keep-alive or zero-window probe: sent on purpose at the edge of
    /// what the peer has acknowledged, never a retransmission.
    pub probe: bool,
    /// Fills a hole the capture saw open, and the sender's clocks say it
    /// left before the segment that jumped the hole (send_order.rs): the
    /// original, held on the path while later segments passed.
    pub overtaken: bool,
    /// A D-SACK (RFC 2883): the first SACK block reports bytes received
    /// twice (below the cumulative ACK, or inside the second block);
    /// relative to the peer's first sequence number.
    pub dsack: Option<(u32, u32)>,
    /// The TCP timestamps option's TSval and TSecr (RFC 7323), when
    /// `timestamped`: the sender's clock, and the newest TSval of the peer
    /// it had received in order. A receiver's ACK that echoes an earlier
    /// copy's TSval, not a re-send's, got the earlier copy (RFC 3522).
    pub tsval: u32,
    pub tsecr: u32,
    pub timestamped: bool,
}

/// An ICMP error saying one of the connection's segments was too big for
/// a hop of its path ("fragmentation needed", ICMPv6 "packet too big"):
/// path MTU discovery's message to the sender.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooBig {
    /// The ICMP error's frame.
    pub frame: u64,
    pub ts_ns: i64,
    /// Who sent the segment it quotes.
    pub sender: Direction,
    /// The quoted segment's sequence number, relative to its sender's
    /// first (as [`SegmentRecord::seq`]).
    pub seq: u32,
    /// The hop's MTU it names (0: an old router that names none).
    pub mtu: u32,
}

/// How many "too big" errors a connection keeps (a burst of full-size
/// segments draws one each; the first few say all there is).
pub const TOO_BIG_KEPT: usize = 8;

/// A frame's identity on the capture clock.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stamp {
    pub frame: u64,
    pub ts_ns: i64,
}

/// Segments arriving ahead of a hole are kept this long at most, per
/// direction, before the hole is skipped (bounded memory under heavy loss).
/// Linux's least retransmission timeout (`TCP_RTO_MIN`): a peer sends
/// again no sooner than this.
const MIN_RTO_NS: i64 = 200_000_000;
/// How long a refused connection is held for its client's next SYN
/// (Windows tries again 0.5 s after the RST; the same stream in tshark).
const REFUSED_RETRY_NS: i64 = 1_000_000_000;
/// The longest a finished connection is held for its trailing packets,
/// whatever its round trip says: a satellite path's 600 ms twice and the
/// least timeout; a later packet still keeps its stream (the tombstone).
const TRAILING_CAP_NS: i64 = 1_500_000_000;

/// The most bytes a capture begun mid-connection may have missed between
/// what a peer acknowledged and the first segment of the direction it
/// captured, to be taken as missed: a flight's worth, as a sender may
/// have out beyond its peer's acknowledgment (farther, the capture is a
/// collage of samples, PcapPlusPlus' ldap.pcapng: one packet per LDAP
/// message, 443 KB apart, and the acknowledgment is no measure of where
/// the data stood).
const MAX_UNSEEN_START: i64 = 128 << 10;

const MAX_PENDING_SEGMENTS: usize = 64;
const MAX_PENDING_BYTES: usize = 512 * 1024;

/// Wireshark calls a segment that fills a hole "out-of-order" rather than a
/// retransmission when it comes within this long of the highest one
/// (and is no fast retransmission: see [`FAST_RETRANSMIT_NS`]).
const OUT_OF_ORDER_NS: i64 = 3_000_000;

/// Wireshark calls a hole fill a fast retransmission, not out-of-order,
/// when it re-sends the sequence number the peer's duplicate ACKs (at
/// least two) asked for, within this long of the last of them. The kernel
/// re-sends while it processes the ACK that crossed its threshold, and in
/// SACK recovery each hole the ACKs report (`tcp_fastretrans_alert`,
/// RFC 6675), so the re-send passes the capture point the
/// capture-to-sender round trip after that ACK: the tracker allows this
/// plus that round trip, and no less than the round trip after the loss
/// was first reported (sooner, the hole was filled by the late original:
/// reordering, whatever the duplicate ACKs said).
const FAST_RETRANSMIT_NS: i64 = 20_000_000;

/// Two copies of one IPv4 datagram (same non-zero identification, same TCP
/// header, same payload) within this long are one packet captured twice.
/// A sender gives every datagram it sends, retransmissions included, a new
/// identification (Linux: the socket's counter, ip_select_ident_segs), so
/// an equal one is the same datagram seen at a second capture point: a
/// span port or `-i any` sees it microseconds later, a merge of two
/// hosts' captures one path delay later (bounded here by a second, far
/// beyond any one-way delay on Earth).
const SAME_DATAGRAM_NS: i64 = 1_000_000_000;

/// Without an identification to compare (IPv6, or IPv4 ID 0 as Linux
/// sends on SYN-ACKs and RSTs), an identical segment is a capture copy
/// only if it comes within this long and no packet from the peer came in
/// between: a retransmission needs either the peer's duplicate ACKs (fast
/// retransmit, which are packets in between) or a timer, and Linux's
/// shortest (the tail-loss probe's floor, TCP_TIMEOUT_MIN 2 ms) is
/// longer; its RTO is 200 ms at least. TSval would differ too once the
/// millisecond clock ticked.
const SAME_SEGMENT_NS: i64 = 2_000_000;

/// A copy may be stamped this much before the packet it copies, later in
/// the file: two capture points (or one host's two CPUs stamping its two
/// copies under `-i any`) write in the order their buffers drain, not
/// quite in the order they stamped (packetbeat's wsgi_drum.pcap: every
/// second copy 1-7 µs earlier). A retransmission is always stamped after
/// its original at one capture point, so a segment stamped before the
/// one it repeats is never the sender's re-send.
const COPY_STAMPED_BEFORE_NS: i64 = 2_000_000;

/// A segment timestamped this long before the connection's latest one was
/// not captured on the same clock in order: the capture restarted into the
/// file (a trace appended to itself). Two merged captures interleave by
/// timestamp and are out of step only by their clocks' offset.
pub(crate) const REPLAY_NS: i64 = 1_000_000_000;

/// A segment found to be a capture copy ([`Connection::capture_copy`]).
#[derive(Debug, Clone, Copy)]
pub struct CaptureCopy {
    /// How long after the packet it copies it came (None for a replay):
    /// at a second capture point, the path between the two.
    pub gap_ns: Option<i64>,
}

/// Recent segments remembered per direction to recognise capture copies:
/// enough for the copies a span port or `-i any` makes (microseconds
/// apart, a few packets between them).
const RECENT_SEGMENTS: usize = 32;

/// Once a connection showed a copy, it remembers this many: a merge of two
/// hosts' captures puts a whole window of packets between a packet and
/// its copy.
const RECENT_SEGMENTS_WITH_COPIES: usize = 2048;

/// Whether a connection's client stream began with a PROXY protocol
/// header (proxy_protocol.rs in rttdoc-wire).
#[derive(Debug)]
pub(crate) enum ProxyHeaderState {
    /// The client has sent nothing yet.
    Unread,
    /// The beginning of a header, held until the rest comes: when its
    /// first bytes came, and the bytes.
    Reading(Box<(Stamp, Vec<u8>)>),
    /// A header, and the frame that completed it.
    Read(Box<(rttdoc_wire::proxy_protocol::ProxyHeader, u64)>),
    /// None.
    Absent,
}

impl ProxyHeaderState {
    fn is_open(&self) -> bool {
        matches!(
            self,
            ProxyHeaderState::Unread | ProxyHeaderState::Reading(_)
        )
    }

    /// The header read, for the report.
    pub(crate) fn report(&self) -> Option<Box<crate::model::ProxyProtocolReport>> {
        let ProxyHeaderState::Read(read) = self else {
            return None;
        };
        let (h, frame) = **read;
        let endpoint = |a: Option<std::net::SocketAddr>| {
            a.map(|a| crate::model::Endpoint {
                ip: a.ip(),
                port: a.port(),
            })
        };
        Some(Box::new(crate::model::ProxyProtocolReport {
            version: h.version,
            frame,
            local: h.local,
            client: endpoint(h.source),
            destination: endpoint(h.destination),
        }))
    }
}

/// What the client's bytes did to a PROXY protocol header being read.
enum ProxyStep {
    /// Held: the header is not whole yet.
    Held,
    /// The header ended this many bytes into them.
    After(usize),
    /// No header: the bytes held while one seemed to begin, to deliver
    /// before these.
    NoHeader(Option<Box<(Stamp, Vec<u8>)>>),
}

/// What identifies one captured segment.
#[derive(Debug, Clone, Copy)]
struct RecentSegment {
    fingerprint: u64,
    /// Its sequence number, and its first payload bytes as captured (up
    /// to 8, how many): a re-send at that number carries the same bytes.
    seq: u32,
    head: [u8; 8],
    head_len: u8,
    /// Hash of the payload's first bytes, `None` when the capture kept
    /// fewer of them than it carried (see [`payload_fingerprint`]).
    payload: Option<u64>,
    ts_ns: i64,
    /// The packet carried a non-zero IPv4 identification.
    has_ip_id: bool,
    /// Packets from the peer seen before it (low 32 bits: only equality
    /// matters).
    peer_packets: u32,
}

/// Hash of the header fields a copy of the same packet repeats: the IP
/// identification, and the TCP header fields and options that change
/// between transmissions (the payload is compared apart: see
/// [`payload_fingerprint`]).
fn fingerprint(seg: &Segment<'_>) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = rustc_hash::FxHasher::default();
    (
        seg.ip_id,
        seg.seq,
        seg.ack,
        seg.flags.bits(),
        seg.window,
        seg.payload_len,
    )
        .hash(&mut h);
    seg.options.timestamps.hash(&mut h);
    seg.options.sack[..seg.options.sack_len.min(4) as usize].hash(&mut h);
    h.finish()
}

/// Bytes of payload compared between a segment and its copy; the header
/// already pins the rest (same sequence, same length).
const COMPARED_PAYLOAD: usize = 32;

/// Hash of the payload's first bytes, or `None` when the capture kept
/// fewer than that of what the segment carried. A copy may be clipped
/// where the original was whole: a capture point that recorded the
/// header only (a snap length, a second tap, or a kernel that handed the
/// capture a header-only clone: Wireshark's "IPv4 total length exceeds
/// packet length"). Such a copy is matched on its header alone, which
/// with an IPv4 identification already names one datagram.
fn payload_fingerprint(seg: &Segment<'_>) -> Option<u64> {
    use std::hash::{Hash, Hasher};
    let compared = (seg.payload_len as usize).min(COMPARED_PAYLOAD);
    let bytes = seg.payload.get(..compared)?;
    let mut h = rustc_hash::FxHasher::default();
    bytes.hash(&mut h);
    Some(h.finish())
}

/// Whether a segment that repeats sequence space carries other bytes
/// than a recent segment at the same sequence number did (both
/// captured far enough to compare): no re-send, whatever its numbers.
fn renumbered(recent: &[RecentSegment], seg: &Segment<'_>) -> bool {
    let (head, len) = head_of(seg);
    // (A re-send may carry more than the original, or less: the bytes
    // both begin with are compared.)
    recent.iter().any(|r| {
        let n = usize::from(len.min(r.head_len));
        r.seq == seg.seq && n > 0 && r.head[..n] != head[..n]
    })
}

/// A segment's first payload bytes as captured (up to 8), and how many.
fn head_of(seg: &Segment<'_>) -> ([u8; 8], u8) {
    let n = seg.payload.len().min(seg.payload_len as usize).min(8);
    let mut head = [0; 8];
    head[..n].copy_from_slice(&seg.payload[..n]);
    (head, n as u8)
}

/// Whose speech this payload is: `Some(true)` the client's (an HTTP/1.x
/// request line, a TLS ClientHello), `Some(false)` the server's (an
/// HTTP/1.x status line, a TLS ServerHello), `None` either's.
fn speaker(payload: &[u8]) -> Option<bool> {
    // A hello's record header, its handshake header (a length that fits
    // the record) and its version (3, x): an encrypted handshake record
    // (a TLS 1.2 renegotiation) matches by chance once in millions.
    if let [22, 3, minor, r0, r1, kind, h0, h1, h2, 3, ..] = payload {
        let record = u16::from_be_bytes([*r0, *r1]) as u32;
        let hello = u32::from_be_bytes([0, *h0, *h1, *h2]);
        if *minor <= 4 && hello + 4 <= record {
            return match kind {
                1 => Some(true),
                2 => Some(false),
                _ => None,
            };
        }
    }
    if crate::exchange::http_status(payload).is_some() {
        return Some(false);
    }
    let line_end = payload
        .iter()
        .position(|&b| b == b'\r' || b == b'\n')
        .unwrap_or(payload.len());
    let line = &payload[..line_end];
    let http = line.windows(7).any(|w| w == b" HTTP/1");
    if http && crate::exchange::http_request_line(line).is_some() {
        return Some(true);
    }
    crate::h2c::speaker(payload)
}

/// State of one direction (one sender) of the connection.
#[derive(Debug, Default)]
pub(crate) struct Half {
    pub seen: bool,
    /// Sequence number of the first packet seen (Wireshark's base_seq).
    pub base_seq: Option<u32>,
    pub isn: Option<u32>,
    /// Next sequence number after the highest byte sent.
    pub max_end: Option<u32>,
    pub max_end_ts: i64,
    /// Highest ACK number this side has sent (what it has of the peer).
    pub acked: Option<u32>,
    pub wscale: Option<u8>,
    pub mss: Option<u16>,
    /// Its SYN (or SYN-ACK) carried no TCP option at all.
    pub bare_syn: bool,
    /// Its SYN (or SYN-ACK) laid its options out as Linux does.
    pub linux_layout: bool,
    pub sack_ok: bool,
    pub ts_ok: bool,
    /// Last window this side advertised (raw).
    pub last_window: Option<u16>,
    /// The ACK number this side sent last, and when (Wireshark's lastack,
    /// lastacktime).
    last_ack: Option<(u32, i64)>,
    /// Duplicate ACKs this side sent in a row (same ACK, no data, no
    /// SYN/FIN/RST, and the same non-zero window or SACK blocks above
    /// the ACK): what triggers fast retransmit and SACK recovery.
    dupacks: u32,
    /// Since when this side has been reporting a loss: its first
    /// duplicate ACK, or first ACK with SACK blocks above the ACK, since
    /// it last acknowledged everything it had.
    loss_reported_since: Option<i64>,
    /// That first report's TCP timestamp value, when it carried one: a
    /// re-send that echoes an older one left before the report reached
    /// its sender, so it answers none of the reports.
    loss_reported_tsval: Option<u32>,
    /// Whether its last ACK reports a loss: the second duplicate ACK in a
    /// row or later (Wireshark's rule), or SACK blocks above the ACK.
    reports_loss: bool,
    /// The SACK blocks of this side's last ACK (absolute sequence of the
    /// peer's): the holes between them are what the peer's SACK recovery
    /// re-sends (RFC 6675).
    last_sack: [(u32, u32); 4],
    last_sack_len: usize,
    /// Sequence number of the byte a zero-window probe sent beyond the
    /// closed window: the data that follows the reopening sends it again,
    /// which is not a retransmission of lost data.
    probe_byte: Option<u32>,
    pub stats: DirectionStats,
    /// Its sender's clocks and the holes it left: the order its segments
    /// left it in (send_order.rs).
    send_order: SendOrder,
    /// Recent segments (a ring) to recognise capture copies.
    recent: Vec<RecentSegment>,
    recent_next: usize,
    recent_cap: usize,
    /// In-order delivery of payload to observers.
    deliver_next: Option<u32>,
    /// Bytes delivered so far: a 64-bit offset that does not wrap.
    deliver_off: u64,
    /// Segments ahead of a hole, by stream offset: (frame, captured bytes, length).
    pending: BTreeMap<u64, (Stamp, Vec<u8>, u32)>,
    pending_bytes: usize,
}

/// TCP Fast Open as seen in the handshake.
#[derive(Debug, Default, Clone, Copy)]
struct TfoSeen {
    syn_option: Option<Tfo>,
    syn_data: u32,
    syn_seq: u32,
    synack_cookie: bool,
    synack_ack: Option<u32>,
}

#[derive(Debug)]
pub struct Connection {
    pub stream: u64,
    pub client: Endpoint,
    pub server: Endpoint,
    pub first: Stamp,
    pub last: Stamp,
    /// The tracker's progress clock at this connection's last packet
    /// (track.rs: idle time is measured on it).
    pub(crate) last_progress_ns: i64,
    pub(crate) half: [Half; 2],
    pub(crate) first_syn: Option<Stamp>,
    /// Most recent SYN (Wireshark's ts_mru_syn).
    last_syn_ts: Option<i64>,
    pub(crate) syn_count: u32,
    /// An ICMP error quoted the client's SYN (unreachable, prohibited, TTL
    /// exceeded): with no answer from the server, the connect failed.
    pub(crate) syn_quoted: bool,
    pub(crate) syn_ack: Option<Stamp>,
    pub(crate) syn_ack_count: u32,
    /// Initial sequence numbers of the SYN-ACKs seen (up to 8): a middlebox
    /// may answer a SYN too, with its own ISN.
    synack_isns: Vec<u32>,
    /// SYNs sent again after the server answered one with RST: retries of
    /// a refused connection, not retransmissions of a lost SYN.
    pub(crate) syn_retries_after_rst: u32,
    /// The server answered the latest SYN with RST.
    syn_refused: bool,
    /// Every SYN-ACK seen (up to 8) with its TSval, to find the one the
    /// client's handshake ACK answers (its TSecr) when there were several.
    pub(crate) syn_acks: Vec<(Stamp, Option<u32>)>,
    /// Most recent SYN.
    pub(crate) last_syn: Option<Stamp>,
    /// TSecr of the client's handshake ACK.
    pub(crate) handshake_ack_tsecr: Option<u32>,
    /// The client's ACK completing the handshake.
    pub(crate) handshake_ack: Option<Stamp>,
    /// Wireshark's tcp.analysis.initial_rtt in ns.
    pub(crate) initial_rtt_ns: Option<i64>,
    tfo: TfoSeen,
    /// Multipath TCP's options, if any were seen (mptcp.rs).
    pub(crate) mptcp: Option<Box<crate::mptcp::MptcpSeen>>,
    pub(crate) rtt: RttSamples,
    pub(crate) tls: Option<Box<TlsSession>>,
    /// Decided on the first client payload (TLS or not), or once a
    /// plaintext preamble (proxy, STARTTLS) has been judged.
    protocol_decided: bool,
    /// Stream bytes held while a possible preamble is judged.
    preamble: Option<Box<crate::preamble::Held>>,
    /// Whether the client's stream begins with a PROXY protocol header.
    pub(crate) proxy_header: ProxyHeaderState,
    pub(crate) exchanges: Exchanges,
    pub(crate) ladder: Option<Vec<LadderEntry>>,
    /// Per-packet graph data, for the connections that will be drawn (series.rs).
    pub(crate) series: Option<Box<crate::series::SeriesBuilder>>,
    pub(crate) closed_at_ns: Option<i64>,
    /// SYN -> SYN-ACK of a clean handshake.
    syn_gap_ns: Option<i64>,
    pub(crate) timeline: Vec<SegmentRecord>,
    /// Secrets to decrypt 0-RTT early data with (`--keylog`).
    pub(crate) keylog: Option<std::sync::Arc<crate::keylog::KeyLog>>,
    /// Run the detectors when the connection is reported.
    pub(crate) detect: bool,
    /// The queue the client's other handshakes found around this
    /// connection's life (`path_samples.rs`), set when it is reported.
    pub(crate) path_samples: Vec<crate::QueueSample>,
    /// Its client's newest TSvals, to time the server's echoes of them
    /// (uplink.rs).
    pub(crate) seen_tsvals: crate::uplink::SeenTsvals,
    /// When the client data the server's segment being tracked newly
    /// acknowledged was sent (the newest of it; None where it
    /// acknowledged nothing new or a re-send): how late it came, for
    /// `PathSamples::heard` (path_samples.rs).
    pub(crate) answered_sent_ns: Option<i64>,
    /// When the client data the server's segment being tracked newly
    /// acknowledged was sent, whatever else the segment carried, and how
    /// many bytes it newly acknowledged (`PathSamples::acknowledged`).
    pub(crate) acked_sent: Option<(i64, u32)>,
    /// The client's segment being tracked acknowledged server bytes the
    /// capture never showed: they reached it, whatever the capture saw
    /// (`PathSamples::delivered`).
    pub(crate) acked_unseen_now: bool,
    /// The client's newest ACK of server bytes the capture never showed:
    /// an answer's missed bytes had reached it by then (reuse.rs times
    /// its idle from there).
    pub(crate) client_acked_unseen_at: Option<Stamp>,
    /// The stalls of the path around its life
    /// (`PathSamples::stalls_between`).
    pub(crate) path_stalls: Vec<crate::PathStall>,
    /// Its siblings' echoes from before its slow requests (the same client
    /// and server addresses), taken when it is handed on.
    pub(crate) uplink: Option<Box<crate::UplinkView>>,
    /// Its client's saturated downlink around its life, set with them.
    pub(crate) path_busy: Vec<crate::BusyRun>,
    /// The answer (its first packet's frame) whose wait in the client's
    /// downlink queue came out as none, and how many more of this
    /// connection's server data packets it is asked again at: they show
    /// whether the answer came in a bunch stamped late
    /// (`PathSamples::busy_before`).
    pub(crate) busy_asked_again: Option<(u64, u8)>,
    /// Retransmissions past the timeline's cap (`TIMELINE_CAP`): their
    /// senders and frames, the first [`LATE_RETRANSMISSIONS_CITED`], for a
    /// finding to cite what the timeline no longer holds.
    pub(crate) late_retransmissions: Vec<(Direction, u64)>,
    /// At each of its re-sends (either way; the first
    /// [`RESENDS_HEARD_KEPT`]), the newest server data its client had
    /// received on another connection by then (`PathSamples::heard_besides`).
    pub(crate) heard_at_resends: Vec<(u64, crate::Heard)>,
    /// At its latest SYN sent again, what the capture had last seen reach
    /// any client, and the client's newest re-send elsewhere
    /// (path_samples.rs).
    pub(crate) nothing_heard: Option<crate::NothingHeard>,
    /// How many other connections its client closed (a FIN, to any
    /// server) within [`crate::closes::TEARDOWN_NS`] of its own first FIN:
    /// one act of the application's (closes.rs). Read only where the
    /// client re-sent data.
    pub(crate) client_closed_with: u32,
    /// At the client's latest re-send of data, the newest packet that
    /// reached any client and its newest re-send on another connection
    /// (`path_samples::NothingHeard`).
    pub(crate) unheard_at_resend: Option<crate::NothingHeard>,
    /// The server's last ACK that acknowledged the client's data: when it
    /// was captured and when the newest of that data left the client
    /// (uplink_load.rs: the next ACK of the same burst samples the
    /// client's uplink rate).
    pub(crate) uplink_probe: Option<(i64, i64)>,
    /// The client's data segments that waited at its uplink (uplink_load.rs):
    /// frame and wait, in frame order, the newest [`UPLINK_WAITS_KEPT`].
    pub(crate) uplink_waits: Vec<(u64, i64)>,
    /// The slowest uplink rate those waits were read with (bytes per
    /// nanosecond; infinite before any).
    pub(crate) uplink_rate: f64,
    /// Where its client's uplink was last found (`uplink_load::NO_SLOT`
    /// before).
    pub(crate) uplink_slot: u32,
    /// At the same re-sends, the newest acknowledgment of its client's
    /// data on another connection (`PathSamples::acknowledged_besides`).
    pub(crate) acked_at_resends: Vec<(u64, crate::Delivered)>,
    /// The FINs of the other connections between the same two addresses
    /// during this one's life: (sent by the server, capture time)
    /// (closes.rs).
    pub(crate) sibling_closes: Vec<(bool, i64)>,
    /// When a connection the server had opened to the client (the two
    /// dialled each other) began sending, within
    /// [`crate::READY_NS`] before this one's client closed it during
    /// its TLS handshake (closes.rs `dialled_back_data`): the race's
    /// other leg carried the session.
    pub(crate) dialled_back_data_ns: Option<i64>,
    /// When its client's data last gave the client's clock a reading
    /// (client_clock.rs).
    pub(crate) clock_noted_ns: i64,
    /// The client's certificate fetches during this connection's life
    /// ([`crate::ConnectionFacts::certificate_fetches`]).
    pub(crate) certificate_fetches: Vec<crate::CertificateFetch>,
    /// When data of those siblings from the client's address to the
    /// server's was captured, run by run (closes.rs: first and last),
    /// learnt where the server sent data that answered nothing.
    pub(crate) sibling_data: Vec<(i64, i64)>,
    /// ICMP errors that said one of its segments was too big for a hop
    /// (the first [`TOO_BIG_KEPT`]).
    pub(crate) too_big: Vec<TooBig>,
    /// In the tracker's closing queue (see track.rs).
    pub(crate) closing_queued: bool,
    /// How far its close has been noted among the capture's ends
    /// (reuse.rs).
    pub(crate) close_seen: crate::reuse::CloseSeen,
    /// The earlier connection of its client to its server it could have
    /// been instead, looked up at its first request (reuse.rs).
    pub(crate) previous: Option<Box<crate::reuse::EndedConnection>>,
    /// That look was made.
    pub(crate) previous_looked_up: bool,
    /// Its False Start was noted among the capture's (false_start.rs).
    pub(crate) false_start_noted: bool,
    /// Its first request (or, none having begun, its first FIN or RST)
    /// looked for another connection of its route that carried a request
    /// of its client's since this one's SYN (route_requests.rs).
    pub(crate) sibling_looked_up: bool,
    /// What that look found: the other connection (`tcp.stream`) and its
    /// request's first frame.
    pub(crate) sibling_request: Option<(u64, u64)>,
    /// Its client, by address and ClientHello, was seen false starting
    /// before this connection began (false_start.rs): looked up when a
    /// TLS 1.2 connection that resumed, or offered to, is handed on.
    pub(crate) client_false_starts: bool,
    /// Its SYNs were sent again, and the capture holds no SYN-ACK of any
    /// connection while a client went on past its SYN elsewhere: a
    /// capture of the clients' direction only.
    pub(crate) one_way_capture: bool,
    /// Its SYNs were sent again: the newest frame the capture had reached
    /// when it was handed on.
    pub(crate) seen_until: Option<Stamp>,
    /// Its SYNs were sent again and nothing answered: how many other
    /// servers its client dialled within a second of its first SYN
    /// (peer_dials.rs).
    pub(crate) dials_beside: u32,
    /// The client's data re-sent unanswered by its timer (black_holes.rs):
    /// the same client's other connections that stalled so in the same
    /// time.
    pub(crate) stalled_elsewhere: Option<crate::StalledElsewhere>,
    /// A TLS connection: when its client dialled other servers from its
    /// ClientHello on (peer_dials.rs `others_since`), where the capture
    /// shows them (it holds name lookups, and other servers' dials).
    pub(crate) client_dials: Option<Vec<i64>>,
    /// Its server's TCP clock read once (shared_clock.rs): the capture
    /// time and TSval of its first SYN-ACK or, when none was captured
    /// before the server's first segment (a capture begun after the
    /// handshake), of that segment; when it carried timestamps.
    pub(crate) server_clock: Option<(i64, u32)>,
    /// Server addresses, its own among them, that answered its client on
    /// its SYN-ACK's clock (shared_clock.rs): looked up when it is handed
    /// on; 0 before.
    pub(crate) servers_on_clock: u32,
    /// The client's TCP clock rate, when its SYNs were sent again and
    /// its SYNs over the capture tell it (client_clock.rs).
    pub(crate) client_clock_hz: Option<u32>,
    /// The name lookup its client made for its server just before its
    /// SYN (dns.rs).
    pub(crate) lookup: Option<Box<crate::dns::NameLookup>>,
    pub(crate) lookup_looked_up: bool,
    /// This is the connection of that earlier stream, seen again with
    /// its addresses translated (twins.rs).
    pub(crate) same_as: Option<u64>,
    /// Who is the client is known: from a SYN, or from the first payload
    /// of a connection whose capture began after its handshake
    /// ([`Connection::settle_roles`]).
    roles_settled: bool,
    /// A long connection's segments past its timeline, gathered for the
    /// next window's diagnosis (window.rs).
    pub(crate) window: Option<Box<crate::window::LaterWindow>>,
    /// What the windows diagnosed so far found (window.rs).
    pub(crate) earlier: Option<Box<crate::model::LaterWindows>>,
    /// Once the timeline or window is full: the re-sent bytes in it that
    /// their receiver has not yet acknowledged, which keep it open
    /// (window.rs).
    pub(crate) unacked_resends: Option<crate::window::UnackedResends>,
}

/// Server addresses on one SYN-ACK clock that show a box in front of them
/// (shared_clock.rs): more than a host's IPv4 and IPv6 addresses.
const SHARED_CLOCK_SERVERS: u32 = 3;

impl Connection {
    pub fn new(
        stream: u64,
        client: Endpoint,
        server: Endpoint,
        first: Stamp,
        ladder: bool,
    ) -> Self {
        Connection {
            stream,
            client,
            server,
            first,
            last: first,
            last_progress_ns: 0,
            half: Default::default(),
            first_syn: None,
            last_syn_ts: None,
            syn_count: 0,
            syn_quoted: false,
            syn_ack: None,
            syn_ack_count: 0,
            synack_isns: Vec::new(),
            syn_retries_after_rst: 0,
            syn_refused: false,
            syn_acks: Vec::new(),
            last_syn: None,
            handshake_ack_tsecr: None,
            handshake_ack: None,
            initial_rtt_ns: None,
            tfo: TfoSeen::default(),
            mptcp: None,
            rtt: RttSamples::default(),
            tls: None,
            protocol_decided: false,
            preamble: None,
            proxy_header: ProxyHeaderState::Unread,
            exchanges: Exchanges::for_server_port(server.port),
            ladder: ladder.then(Vec::new),
            series: None,
            closed_at_ns: None,
            syn_gap_ns: None,
            timeline: Vec::new(),
            keylog: None,
            detect: true,
            path_samples: Vec::new(),
            seen_tsvals: Default::default(),
            uplink: None,
            path_busy: Vec::new(),
            answered_sent_ns: None,
            acked_sent: None,
            acked_unseen_now: false,
            client_acked_unseen_at: None,
            path_stalls: Vec::new(),
            busy_asked_again: None,
            late_retransmissions: Vec::new(),
            heard_at_resends: Vec::new(),
            nothing_heard: None,
            client_closed_with: 0,
            unheard_at_resend: None,
            uplink_probe: None,
            uplink_waits: Vec::new(),
            uplink_rate: f64::INFINITY,
            uplink_slot: crate::uplink_load::NO_SLOT,
            acked_at_resends: Vec::new(),
            sibling_closes: Vec::new(),
            dialled_back_data_ns: None,
            clock_noted_ns: i64::MIN,
            certificate_fetches: Vec::new(),
            sibling_data: Vec::new(),
            too_big: Vec::new(),
            closing_queued: false,
            close_seen: crate::reuse::CloseSeen::Open,
            previous: None,
            false_start_noted: false,
            sibling_looked_up: false,
            sibling_request: None,
            client_false_starts: false,
            one_way_capture: false,
            seen_until: None,
            dials_beside: 0,
            stalled_elsewhere: None,
            client_dials: None,
            server_clock: None,
            servers_on_clock: 0,
            client_clock_hz: None,
            previous_looked_up: false,
            lookup: None,
            lookup_looked_up: false,
            same_as: None,
            roles_settled: false,
            window: None,
            earlier: None,
            unacked_resends: None,
        }
    }

    /// Whether its SYN was answered by a RST or quoted by an ICMP error,
    /// and never by a SYN-ACK: the connection was refused.
    pub(crate) fn refused_at_syn(&self) -> bool {
        self.syn_ack_count == 0 && (self.syn_refused || self.syn_quoted)
    }

    /// Makes this finished connection (a husk: frozen, its facts taken)
    /// a new one, [`Connection::new`] in all but the room of its buffers,
    /// which is kept, emptied: a churn of short connections otherwise
    /// allocates them all and frees them again for every connection.
    pub(crate) fn renew(
        &mut self,
        stream: u64,
        client: Endpoint,
        server: Endpoint,
        first: Stamp,
        ladder: bool,
    ) {
        let mut fresh = Connection::new(stream, client, server, first, ladder);
        fresh.rtt.keep_room_of(&mut self.rtt);
        for (new, old) in fresh.half.iter_mut().zip(&mut self.half) {
            new.recent = std::mem::take(&mut old.recent);
            new.recent.clear();
        }
        fresh.synack_isns = std::mem::take(&mut self.synack_isns);
        fresh.synack_isns.clear();
        *self = fresh;
    }

    /// Settles who is the client of a connection whose capture began
    /// after its handshake, where the tracker guessed from the ports (the
    /// lower one the server's): an HTTP/1.x request line or a TLS
    /// ClientHello is the client's, an HTTP/1.x status line or a
    /// ServerHello the server's, so the first payload that is one of these
    /// decides, and the roles are swapped before the payload is tracked if
    /// the guess was wrong (a server on a high port, a client on a low
    /// one). Call before [`Connection::direction_from`] for each segment.
    pub(crate) fn settle_roles(&mut self, src: Endpoint, seg: &Segment<'_>) {
        if self.roles_settled {
            return;
        }
        if seg.flags.syn() || self.syn_count > 0 || self.syn_ack_count > 0 {
            self.roles_settled = true;
            return;
        }
        if seg.payload_len == 0 {
            return;
        }
        self.roles_settled = true;
        let Some(sender_is_client) = speaker(seg.payload) else {
            return;
        };
        if (self.client == src) != sender_is_client {
            self.swap_roles();
        }
    }

    /// Client and server trade places: everything tracked so far (pure
    /// ACKs: roles are settled at the first payload) is kept, on the
    /// other side.
    fn swap_roles(&mut self) {
        std::mem::swap(&mut self.client, &mut self.server);
        self.half.swap(0, 1);
        self.rtt.swap_directions();
        for r in &mut self.timeline {
            r.dir = r.dir.reverse();
        }
        for e in self.ladder.iter_mut().flatten() {
            e.direction = e.direction.reverse();
        }
        if let Some(series) = &mut self.series {
            series.swap_directions();
        }
        if let Some(m) = &mut self.mptcp {
            m.swap_directions();
        }
        self.exchanges.set_server_port(self.server.port);
    }

    /// The direction of a segment sent by `src`.
    pub fn direction_from(&self, src: Endpoint) -> Direction {
        if self.client == src {
            Direction::ClientToServer
        } else {
            Direction::ServerToClient
        }
    }
    /// The fastest the server has answered the client, from the capture
    /// point: its SYN-ACK after the last SYN, or an ACK or echo of the
    /// client's data (`RttSamples::min_for`), the lesser.
    pub(crate) fn fastest_round_trip_ns(&self) -> Option<i64> {
        let handshake = self
            .last_syn
            .zip(self.syn_ack)
            .map(|(syn, syn_ack)| syn_ack.ts_ns - syn.ts_ns)
            .filter(|&gap| gap >= 0);
        let answers = self.rtt.min_for(Direction::ClientToServer);
        match (handshake, answers) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Keeps an ICMP "too big" error quoting one of this connection's
    /// segments (its sender's sequence numbers made relative, as the
    /// timeline's).
    pub(crate) fn note_too_big(&mut self, at: Stamp, q: &rttdoc_wire::QuotedTcp, mtu: u32) {
        if self.too_big.len() >= TOO_BIG_KEPT {
            return;
        }
        let sender = self.direction_from(Endpoint {
            ip: q.src,
            port: q.src_port,
        });
        let base = self.half[sender.index()].base_seq.unwrap_or(q.seq);
        self.too_big.push(TooBig {
            frame: at.frame,
            ts_ns: at.ts_ns,
            sender,
            seq: q.seq.wrapping_sub(base),
            mtu,
        });
    }

    /// Whether `seg`, sent by `src`, opens a new connection on this one's
    /// 4-tuple (port reuse): a SYN whose sequence number is not the one
    /// its sender started this connection with.
    pub fn reused_by(&self, src: Endpoint, seg: &Segment<'_>) -> bool {
        seg.flags.syn()
            && !seg.flags.ack()
            && self
                .base_seq(self.direction_from(src))
                .is_some_and(|base| base != seg.seq)
    }

    /// Base sequence number of the sender in `dir`, if it has sent anything.
    pub fn base_seq(&self, dir: Direction) -> Option<u32> {
        self.half[dir.index()].base_seq
    }

    /// The hash of the TLS server name its ClientHello asked for (0: no
    /// TLS, no name): connections for different names are not each
    /// other's to reuse (reuse.rs).
    pub(crate) fn server_name_hash(&self) -> u64 {
        crate::reuse::name_hash(self.server_name())
    }

    /// Its client's TLS library, hashed ([`crate::tls::TlsSession::client_library`];
    /// 0: no ClientHello read): what keeps a pool of its own (reuse.rs).
    pub(crate) fn client_library_hash(&self) -> u64 {
        self.tls
            .as_ref()
            .and_then(|t| t.client_library())
            .unwrap_or(0)
    }

    /// The pool of connections it belongs to (reuse.rs), by its first
    /// request (what a new connection is) or by its newest (what an ended
    /// one was).
    pub(crate) fn reuse_pool(&self, by_first_request: bool) -> crate::reuse::Pool {
        let x = &self.exchanges;
        let (http_origin, http_agent) = match (by_first_request, x.current_agent) {
            (true, _) => (x.first_origin, x.first_agent),
            (false, 0) => (self.asked_origin(), x.first_agent),
            (false, agent) => (self.asked_origin(), agent),
        };
        crate::reuse::Pool {
            server_name: self.server_name_hash(),
            http_origin,
            http_agent,
            client_library: self.client_library_hash(),
        }
    }

    /// The origin its newest request named, hashed, else its first's (0:
    /// none read).
    pub(crate) fn asked_origin(&self) -> u64 {
        self.exchanges
            .current_asked
            .map_or(self.exchanges.first_origin, |a| a.origin_hash())
    }

    /// What a window's report says of its connection's TLS: the version
    /// and the server name (the labels a live output counts it under).
    pub(crate) fn tls_identity(&self) -> Option<Box<crate::model::TlsReport>> {
        let tls = self.tls.as_ref()?;
        Some(Box::new(crate::model::TlsReport {
            version: tls.version().map(crate::model::TlsVersion),
            sni: self.server_name().map(str::to_string),
            ..Default::default()
        }))
    }

    /// The server name its TLS ClientHello asked for.
    pub(crate) fn server_name(&self) -> Option<&str> {
        self.tls
            .as_ref()
            .and_then(|t| t.client_hello.as_ref())
            .and_then(|c| c.sni.as_deref())
    }

    /// True when both sides have sent FIN, or either sent RST.
    pub fn is_closed(&self) -> bool {
        self.closed_at_ns.is_some()
    }

    /// How long after it is done a packet of this connection may still
    /// come: what the peer had in flight when the last packet left, and
    /// the RSTs answering our own last data, come within a round trip
    /// (two, to allow the capture's place and the path's jitter); a peer
    /// whose last data or FIN the RST cut off sends it again after its
    /// retransmission timeout, at least Linux's 200 ms. (Seen on phones'
    /// captures: the server's RST one round trip after the client's, 57 to
    /// 290 ms later.) Bounded by `TRAILING_CAP_NS`.
    pub fn trailing_ns(&self) -> i64 {
        if self.syn_refused {
            // Windows sends a refused SYN again after 0.5 s, twice.
            return REFUSED_RETRY_NS;
        }
        let rtt = self
            .initial_rtt_ns
            .or(self.rtt.best_ns())
            .unwrap_or(0)
            .max(0);
        rtt.saturating_mul(2)
            .saturating_add(MIN_RTO_NS)
            .min(TRAILING_CAP_NS)
    }

    /// True when nothing more is due on the connection: a RST was sent, or
    /// both FINs were sent and each was acknowledged. A FIN still
    /// unacknowledged will be sent again, and a peer waiting for that ACK
    /// keeps probing (Windows' keep-alives after FIN): packets that belong
    /// on this connection's report.
    pub fn is_done(&self) -> bool {
        let [a, b] = &self.half;
        if a.stats.rst_frame.is_some() || b.stats.rst_frame.is_some() {
            return true;
        }
        let fin_acked = |h: &Half, peer: &Half| {
            h.stats.fin_frame.is_some()
                && matches!((h.max_end, peer.acked), (Some(end), Some(ack)) if seq::le(end, ack))
        };
        fin_acked(a, b) && fin_acked(b, a)
    }

    /// Whether `seg` is another copy of a packet this connection already
    /// holds (see [`SAME_DATAGRAM_NS`], [`SAME_SEGMENT_NS`],
    /// [`COPY_STAMPED_BEFORE_NS`], [`REPLAY_NS`]):
    /// if so it is counted and must not be analysed again. Otherwise it is
    /// remembered for the copies that may follow.
    pub fn capture_copy(
        &mut self,
        at: Stamp,
        dir: Direction,
        seg: &Segment<'_>,
    ) -> Option<CaptureCopy> {
        let copy = self.is_copy(at, dir, seg);
        if copy.is_some() {
            self.half[dir.index()].stats.capture_duplicates += 1;
            // Frame numbers stay Wireshark's: the connection's last frame
            // is the last one the capture holds for it, copies included.
            self.last.frame = at.frame;
            self.last.ts_ns = self.last.ts_ns.max(at.ts_ns);
            // Wireshark times tcp.analysis.initial_rtt from the most recent
            // SYN frame, a copy included (tcp_handshake_ms is that number).
            if seg.flags.syn() && !seg.flags.ack() && self.initial_rtt_ns.is_none() {
                self.last_syn_ts = Some(at.ts_ns);
            }
        }
        copy
    }

    fn is_copy(&mut self, at: Stamp, dir: Direction, seg: &Segment<'_>) -> Option<CaptureCopy> {
        let fp = fingerprint(seg);
        let payload = payload_fingerprint(seg);
        let has_ip_id = seg.ip_id.is_some_and(|id| id != 0);
        let seg_len = seg.payload_len + seg.flags.syn() as u32 + seg.flags.fin() as u32;
        let peer_packets = self.half[dir.reverse().index()].stats.packets as u32;
        // Without an identification, only segments that occupy sequence
        // space are compared (their copies are what looks like a
        // retransmission). Identical pure ACKs and RSTs are sent for real:
        // one per peer segment received, and those peer segments may have
        // passed the capture point long before (an RST for each of two
        // segments that arrived together).
        let comparable = has_ip_id || seg_len > 0;
        let h = &mut self.half[dir.index()];
        // Only a segment that brings nothing new can be a copy: one whose
        // bytes were seen already, or an ACK no higher than before. Most
        // segments are new, and skip the search.
        let repeats = if seg_len > 0 {
            h.max_end.is_some_and(|m| seq::lt(seg.seq, m))
        } else {
            !seg.flags.ack() || h.acked.is_some_and(|a| seq::le(seg.ack, a))
        };
        if repeats && at.ts_ns < self.last.ts_ns - REPLAY_NS {
            // The capture went back in time and the segment brings nothing
            // new: the connection's packets are being replayed (tshark keeps
            // them on the same tcp.stream). New data or a higher ACK after a
            // clock jump is a clock glitch, and is analysed.
            return Some(CaptureCopy { gap_ns: None });
        }
        let gap = if comparable && repeats {
            h.recent.iter().find_map(|r| {
                let dt = at.ts_ns - r.ts_ns;
                let same = r.fingerprint == fp
                    && (r.payload == payload || r.payload.is_none() || payload.is_none())
                    && dt >= -COPY_STAMPED_BEFORE_NS
                    && if has_ip_id {
                        r.has_ip_id && dt <= SAME_DATAGRAM_NS
                    } else {
                        dt <= SAME_SEGMENT_NS && r.peer_packets == peer_packets
                    };
                same.then_some(dt)
            })
        } else {
            None
        };
        if let Some(dt) = gap {
            h.recent_cap = RECENT_SEGMENTS_WITH_COPIES;
            // A copy stamped first says nothing of the path between two
            // capture points.
            return Some(CaptureCopy {
                gap_ns: (dt >= 0).then_some(dt),
            });
        }
        let (head, head_len) = head_of(seg);
        let entry = RecentSegment {
            fingerprint: fp,
            seq: seg.seq,
            head,
            head_len,
            payload,
            ts_ns: at.ts_ns,
            has_ip_id,
            peer_packets,
        };
        let cap = h.recent_cap.max(RECENT_SEGMENTS);
        if h.recent.len() < cap {
            if h.recent.capacity() == 0 {
                // One allocation for a short connection's segments.
                h.recent.reserve_exact(RECENT_SEGMENTS / 2);
            }
            h.recent.push(entry);
            h.recent_next = 0;
        } else {
            h.recent[h.recent_next] = entry;
            h.recent_next = (h.recent_next + 1) % cap;
        }
        None
    }

    /// Tracks one segment of this connection.
    pub fn observe(&mut self, at: Stamp, dir: Direction, seg: &Segment<'_>) {
        self.last = at;
        let d = dir.index();
        let r = dir.reverse().index();
        let flags = seg.flags;
        let seg_len = seg.payload_len + flags.syn() as u32 + flags.fin() as u32;
        // The TSval this segment echoes times a round trip only if the
        // echoed segment prompted it (RFC 7323 4.1 takes samples from ACKs
        // of new data): it acknowledges new data, or its sender still had
        // data out that the peer's segment may have clocked. One that does
        // neither was sent when its sender chose (a keep-alive five minutes
        // on, a request after an idle spell), and the time since the echoed
        // segment is idle time, not the path's.
        let times_echo = self.half[d].acked.is_none_or(|a| seq::lt(a, seg.ack))
            || matches!((self.half[d].max_end, self.half[r].acked),
                    (Some(end), Some(ack)) if seq::lt(ack, end));
        if seg.options.mptcp.is_some() {
            // The ACK covers bytes of the peer the capture never showed.
            let acks_unseen = flags.ack()
                && self.half[r]
                    .max_end
                    .is_some_and(|end| seq::lt(end, seg.ack));
            self.mptcp.get_or_insert_with(Default::default).observe(
                at.frame,
                dir,
                seg,
                acks_unseen,
            );
        }

        {
            let h = &mut self.half[d];
            h.seen = true;
            h.stats.packets += 1;
            if h.base_seq.is_none() {
                h.base_seq = Some(seg.seq);
            }
        }

        // Handshake bookkeeping and per-direction options.
        // A SYN with another initial sequence number than the one before
        // (a middlebox's SYN-ACK next to the server's) starts the sequence
        // space afresh instead of looking like a jump or a retransmission.
        let new_isn = flags.syn() && self.half[d].isn.is_some_and(|isn| isn != seg.seq);
        // A SYN-ACK with another ISN after the client acknowledged one (a
        // second server or a middlebox answering the SYN late): the
        // client's kernel, established, answers it with an ACK of the
        // first and keeps that sequence space (RFC 9293 3.10.7.4); so does
        // the analysis (nDPI's KakaoTalk_chat.pcap: every later server
        // segment had read as a re-send).
        let stray_syn_ack = new_isn
            && flags.ack()
            && dir == Direction::ServerToClient
            && self.handshake_ack.is_some();
        let new_isn = new_isn && !stray_syn_ack;
        // It takes no sequence number of this connection's.
        let seg_len = if stray_syn_ack { 0 } else { seg_len };
        if flags.syn() && !stray_syn_ack {
            let h = &mut self.half[d];
            // The first SYN of a side whose earlier packets had none (a
            // server's ACK of another connection on the port pair, before
            // its SYN-ACK): its sequence space starts here, as Wireshark's
            // relative numbers do.
            if h.isn.is_none() {
                h.base_seq = Some(seg.seq);
            }
            h.isn = Some(seg.seq);
            h.mss = seg.options.mss.or(h.mss);
            h.wscale = seg.options.window_scale;
            h.sack_ok = seg.options.sack_permitted;
            h.ts_ok = seg.options.timestamps.is_some();
            h.linux_layout = seg.options.laid_out_as_linux();
            let o = &seg.options;
            h.bare_syn = o.mss.is_none()
                && o.window_scale.is_none()
                && !o.sack_permitted
                && o.timestamps.is_none()
                && o.tfo.is_none()
                && o.mptcp.is_none();
            if !flags.ack() {
                if self.syn_refused {
                    // Some stacks (Windows) try again after an RST: the
                    // first SYN got its answer, nothing was lost.
                    self.syn_retries_after_rst += 1;
                    self.syn_refused = false;
                    // The refusal is behind it: the connection is open
                    // again (not done, not closed) until this SYN's own
                    // answer.
                    self.half[Direction::ServerToClient.index()].stats.rst_frame = None;
                    self.closed_at_ns = None;
                }
                self.syn_count += 1;
                self.first_syn.get_or_insert(at);
                self.last_syn = Some(at);
                self.last_syn_ts = Some(at.ts_ns);
                if self.syn_count == 1 {
                    self.tfo = TfoSeen {
                        syn_option: seg.options.tfo,
                        syn_data: seg.payload_len,
                        syn_seq: seg.seq,
                        ..self.tfo
                    };
                }
            } else {
                self.syn_ack_count += 1;
                self.syn_ack.get_or_insert(at);
                if self.synack_isns.len() < 8 && !self.synack_isns.contains(&seg.seq) {
                    self.synack_isns.push(seg.seq);
                }
                if self.syn_acks.len() < 8 && self.handshake_ack.is_none() {
                    self.syn_acks
                        .push((at, seg.options.timestamps.map(|t| t.0)));
                }
                if self.syn_ack_count == 1 {
                    self.tfo.synack_cookie = matches!(seg.options.tfo, Some(Tfo::Cookie { .. }));
                    self.tfo.synack_ack = Some(seg.ack);
                }
            }
        } else if flags.ack() {
            // Wireshark's first RTT ends at the first ACK after the SYN (also
            // in a capture of one direction), but not at a FIN: a SYN, then
            // the client's FIN 10 s later closes no round trip (checked with
            // tshark on the public TFO capture).
            let answered = !flags.fin();
            if let (Some(syn_ts), None, true) = (self.last_syn_ts, self.initial_rtt_ns, answered) {
                self.initial_rtt_ns = Some(at.ts_ns - syn_ts);
            }
            if dir == Direction::ClientToServer
                && self.syn_ack.is_some()
                && self.handshake_ack.is_none()
            {
                self.handshake_ack = Some(at);
                self.handshake_ack_tsecr = seg.options.timestamps.map(|t| t.1);
                // The client acknowledged one SYN-ACK's ISN: that is the
                // server's sequence space from now on, as in the client's
                // kernel (a second SYN-ACK with another ISN, from a
                // middlebox, is answered with a challenge ACK or RST).
                let isn = seg.ack.wrapping_sub(1);
                let s = &mut self.half[Direction::ServerToClient.index()];
                if s.isn != Some(isn) && self.synack_isns.contains(&isn) {
                    s.isn = Some(isn);
                    s.base_seq = Some(isn);
                    s.max_end = Some(seg.ack);
                }
                // A clean handshake shows how far the server is from the
                // capture point: SYN -> SYN-ACK (an upper bound: the server
                // or the path may have added delay).
                if let (1, 1, Some(syn), Some(sa)) = (
                    self.syn_count,
                    self.syn_ack_count,
                    self.first_syn,
                    self.syn_ack,
                ) {
                    self.syn_gap_ns = Some(sa.ts_ns - syn.ts_ns);
                    self.exchanges.path_sides = [at.ts_ns - sa.ts_ns, sa.ts_ns - syn.ts_ns];
                }
            }
        }

        // Probes: a keep-alive (RFC 9293 3.8.4; Linux tcp_write_wakeup ->
        // tcp_xmit_probe_skb) is 0 or 1 byte at snd_nxt - 1 once everything
        // is acknowledged, so that the peer must answer with an ACK; a
        // zero-window probe (tcp_send_probe0) is the same segment while the
        // peer's window is closed, or (other stacks) the next byte beyond
        // the closed window, re-sent until the window opens. Neither is a
        // retransmission of lost data. With the peer unseen (one-direction
        // capture), Wireshark's rule: 0 or 1 byte at snd_nxt - 1.
        let probe = {
            let h = &self.half[d];
            let peer = &self.half[r];
            let plain = !flags.syn() && !flags.fin() && !flags.rst() && seg.payload_len <= 1;
            let closed = peer.last_window == Some(0);
            plain
                && h.max_end.is_some_and(|max_end| {
                    let at_edge = seg.seq == max_end.wrapping_sub(1);
                    match peer.acked {
                        Some(acked) => {
                            (at_edge && acked == max_end)
                                || (closed && acked == seg.seq && seg.payload_len == 1)
                                // Windows sends its keep-alive byte below
                                // what the peer acknowledged even with a
                                // FIN outstanding: a byte the peer has
                                // cannot be a repair of lost data.
                                || (seg.payload_len == 1 && seq::le(seg.seq.wrapping_add(1), acked))
                        }
                        None => at_edge,
                    }
                })
        };
        if probe {
            let s = &mut self.half[d].stats;
            if self.half[r].last_window == Some(0) {
                s.window_probes += 1;
            } else {
                s.keepalives += 1;
            }
        }

        // Sequence analysis: retransmission, out-of-order, gaps.
        // A re-send of the byte the peer's duplicate ACKs point at (or of
        // a hole between the blocks their SACK reported) is the sender's
        // answer to them (fast retransmit, RFC 5681 3.2; SACK recovery,
        // RFC 6675), however soon after the highest segment it comes.
        let fast_retransmit = {
            let peer = &self.half[r];
            // The capture point -> sender -> capture point round trip: the
            // least time a duplicate ACK takes to come back as a re-send.
            // Its estimate is a minimum of samples, each the path plus the
            // sender's turnaround: a quarter of it is left for that.
            let turn = self.sender_side_ns(dir).unwrap_or(0);
            let end = seg.seq.wrapping_add(seg.payload_len);
            let sack = &peer.last_sack[..peer.last_sack_len];
            let in_sack_hole = |ack: u32| {
                seq::le(ack, seg.seq)
                    && sack.iter().any(|b| seq::le(end, b.0))
                    && !sack
                        .iter()
                        .any(|b| seq::lt(seg.seq, b.1) && seq::lt(b.0, end))
            };
            // The sender echoes the newest TSval it has from its peer (RFC
            // 7323 4.3; a duplicate ACK's updates it): one older than the
            // first report's left before any report reached it.
            let before_the_report = match (peer.loss_reported_tsval, seg.options.timestamps) {
                (Some(reported), Some((_, echoed))) => seq::lt(echoed, reported),
                _ => false,
            };
            peer.reports_loss
                && !before_the_report
                && peer
                    .loss_reported_since
                    .is_some_and(|t0| at.ts_ns - t0 >= turn - turn / 4)
                && peer.last_ack.is_some_and(|(ack, ts)| {
                    (ack == seg.seq || in_sack_hole(ack))
                        && at.ts_ns - ts < FAST_RETRANSMIT_NS + turn
                })
        };
        let mut new_data = seg.payload_len > 0;
        let mut retransmission = false;
        // A re-send of data the receiver had not acknowledged: what it
        // belongs to reached the receiver whole no sooner.
        let mut resent_unacked = false;
        let mut overtaken = false;
        // Bytes a hole's fill brought, when its hole tells them apart.
        let mut hole_bytes = None;
        if seg_len > 0 {
            // The peer had acknowledged every byte of this segment before
            // it passed: the receiver had them.
            let acked_before = self.half[r]
                .acked
                .is_some_and(|a| seq::le(seg.seq.wrapping_add(seg_len), a));
            let h = &mut self.half[d];
            // The sender's clocks (its datagrams' numbers, its timestamps)
            // say whether a hole's filler left before the segment that
            // jumped the hole.
            let mark = SentMark {
                id: seg.ip_id,
                tsval: seg.options.timestamps.map(|(tsval, _)| tsval),
                tsecr: seg.options.timestamps.map(|(_, tsecr)| tsecr),
            };
            let end = seg.seq.wrapping_add(seg_len);
            match h.max_end {
                Some(_) if new_isn => {
                    h.send_order.restart();
                    h.max_end = Some(end);
                    h.max_end_ts = at.ts_ns;
                }
                Some(max_end) if probe => {
                    // A probe's byte is new only when it is the next one
                    // (a probe beyond a closed window).
                    new_data = seq::lt(max_end, end) && seg.payload_len > 0;
                    if new_data {
                        h.probe_byte = Some(seg.seq);
                        h.max_end = Some(end);
                        h.max_end_ts = at.ts_ns;
                    }
                }
                Some(max_end) if h.probe_byte == Some(seg.seq) => {
                    // The window reopened: the data starts again at the
                    // probe's byte, which the receiver had not taken.
                    h.probe_byte = None;
                    new_data = seq::lt(max_end, end);
                    if new_data {
                        // Its byte was counted with the probe.
                        let again = seq::diff(max_end, seg.seq).max(0) as u64;
                        h.stats.bytes = h.stats.bytes.saturating_sub(again);
                        h.max_end = Some(end);
                        h.max_end_ts = at.ts_ns;
                    }
                }
                None => {
                    h.max_end = Some(end);
                    h.max_end_ts = at.ts_ns;
                }
                Some(max_end) => {
                    if seq::lt(seg.seq, max_end) {
                        // Reordering lasts less than a round trip: the
                        // handshake's (Wireshark's initial RTT) when seen,
                        // else the data's samples of both sides of the
                        // capture point (one side's alone may be its
                        // host's turnaround, near zero at an endpoint),
                        // else Wireshark's default.
                        let rtt = self
                            .initial_rtt_ns
                            .or(self.rtt.two_sided_estimate().map(|(ns, _)| ns));
                        let threshold = OUT_OF_ORDER_NS.min(rtt.unwrap_or(i64::MAX));
                        // (Asked before the fill takes its bytes.)
                        let passed = h.send_order.passed(seg.seq);
                        let fill = h.send_order.fill(seg.seq, end, mark);
                        let sent = fill.and_then(|f| f.sent);
                        overtaken = sent == Some(Ordering::Less);
                        let reordered = match sent {
                            Some(_) => overtaken,
                            // Without the sender's clocks, timing decides
                            // only for bytes the capture has not seen: a
                            // copy of bytes that had passed the capture
                            // point (their original left no hole) or that
                            // the receiver had acknowledged (a hole
                            // forgotten among many) is a re-send, however
                            // soon after the highest it comes.
                            None => {
                                !acked_before
                                    && !passed
                                    && at.ts_ns - h.max_end_ts < threshold
                                    && !fast_retransmit
                            }
                        };
                        if reordered {
                            // Filling a hole the capture saw open: new bytes
                            // (none when its re-send passed it on the way).
                            if let Some(f) = fill {
                                new_data = f.new_bytes > 0;
                                hole_bytes = Some(f.new_bytes);
                            }
                            h.stats.out_of_order += 1;
                        } else if renumbered(&h.recent, seg) {
                            // Other bytes at a sequence number already
                            // sent: not a re-send (TCP re-sends the bytes
                            // it sent there), but a relay that numbered
                            // its own data over what it had written
                            // before (a phone's VPN capture app: nDPI's
                            // webex.pcap 50, a TLS alert where
                            // application data had been).
                            new_data = false;
                        } else {
                            h.stats.retransmissions += 1;
                            retransmission = true;
                            resent_unacked = !acked_before && seg.payload_len > 0;
                            self.rtt.on_retransmission(dir);
                            new_data = seq::lt(max_end, end) && seg.payload_len > 0;
                            // A re-send of bytes the capture never saw (the
                            // original lost before it) still brings them.
                            if !new_data {
                                hole_bytes = fill.map(|f| f.new_bytes);
                            }
                        }
                        if seq::lt(max_end, end) {
                            h.max_end = Some(end);
                            h.max_end_ts = at.ts_ns;
                        }
                    } else {
                        if seq::lt(max_end, seg.seq) && !flags.syn() {
                            h.stats.gaps += 1;
                            h.send_order.hole(max_end, seg.seq, mark);
                        }
                        h.max_end = Some(end);
                        h.max_end_ts = at.ts_ns;
                    }
                }
            }
            h.send_order.passed_by(seg.seq, end);
        }
        self.half[d].send_order.observe(seg.ip_id);
        // What the receiver's clock read when this left it: no trigger
        // of a re-send of the other side's carried less.
        if let Some((tsval, _)) = seg.options.timestamps {
            self.half[r].send_order.heard(tsval);
        }
        if resent_unacked && dir == Direction::ClientToServer {
            self.exchanges.on_client_resend(at);
        }
        match hole_bytes {
            Some(bytes) => self.half[d].stats.bytes += bytes as u64,
            None if new_data => self.half[d].stats.bytes += seg.payload_len as u64,
            None => {}
        }

        // Bytes in flight: sent by this side beyond what the peer has ACKed.
        let in_flight = match (self.half[d].max_end, self.half[r].acked) {
            (Some(end), Some(acked)) => seq::diff(end, acked).clamp(0, u32::MAX as i64) as u32,
            _ => 0,
        };
        {
            let s = &mut self.half[d].stats;
            s.max_bytes_in_flight = s.max_bytes_in_flight.max(in_flight);
            if seg.options.sack_len > 0 {
                s.sack_segments += 1;
            }
        }

        // Windows: zero window advertised by this side.
        if seg.window == 0 && !flags.syn() && !flags.rst() && !flags.fin() {
            let s = &mut self.half[d].stats;
            s.zero_windows += 1;
            s.first_zero_window_frame.get_or_insert(at.frame);
        }

        // A pure ACK of the server's before any SYN-ACK that does not
        // acknowledge the client's SYN belongs to another connection on
        // the port pair (one the server still holds: a challenge ACK, a
        // TIME-WAIT's): the client, in SYN-SENT, resets it (RFC 793 3.4),
        // and it acknowledges nothing of this connection's.
        // (The client still in SYN-SENT: it sent nothing beyond its SYN.
        // A capture that missed the SYN-ACK shows the client's data and
        // the server's ACKs of it.)
        let foreign_ack = dir == Direction::ServerToClient
            && seg_len == 0
            && !flags.syn()
            && !flags.rst()
            && self.syn_ack.is_none()
            && self.half[r].isn.is_some_and(|isn| {
                let after_syn = isn.wrapping_add(1);
                self.half[r].max_end == Some(after_syn) && seg.ack != after_syn
            });
        // ACK: RTT samples for the data the peer sent.
        if flags.ack() && !foreign_ack {
            // Acknowledging bytes of the peer the capture never showed: the
            // capture missed them (the peer had sent them, or it could not
            // be ACKed), which is not loss on the path.
            if let Some(max_end) = self.half[r].max_end {
                let beyond_before = self.half[d].acked.is_some_and(|a| seq::lt(max_end, a));
                if seq::lt(max_end, seg.ack) && !flags.syn() {
                    self.half[r].stats.acked_unseen += (!beyond_before) as u32;
                    self.acked_unseen_now = dir == Direction::ClientToServer;
                    // (When its ACK first reached that far: a later ACK of
                    // the same bytes, its FIN's, says nothing new.)
                    let advanced = self.half[d].acked.is_none_or(|a| seq::lt(a, seg.ack));
                    if self.acked_unseen_now && advanced {
                        self.client_acked_unseen_at = Some(at);
                    }
                }
            }
            let h = &mut self.half[d];
            // A duplicate ACK: nothing new (no data, SYN, FIN or RST) and
            // the same ACK as before, with the same non-zero window
            // (Wireshark's and RFC 5681's test) or with SACK blocks above
            // the ACK: SACK recovery counts what they report whatever the
            // window says (RFC 6675; Linux's sacked_out), and a receiver
            // that autotunes its buffer widens the window on every one.
            let sacks_above = seg
                .options
                .sack_blocks()
                .iter()
                .any(|b| seq::lt(seg.ack, b.1));
            let duplicate = seg_len == 0
                && !flags.rst()
                && ((seg.window != 0 && h.last_window == Some(seg.window)) || sacks_above)
                && h.last_ack.is_some_and(|(ack, _)| ack == seg.ack);
            h.dupacks = if duplicate { h.dupacks + 1 } else { 0 };
            h.reports_loss = h.dupacks >= 2 || sacks_above;
            if duplicate || sacks_above {
                if h.loss_reported_since.is_none() {
                    h.loss_reported_since = Some(at.ts_ns);
                    h.loss_reported_tsval = seg.options.timestamps.map(|(tsval, _)| tsval);
                }
            } else {
                // No hole reported: what it had arrived in order.
                h.loss_reported_since = None;
                h.loss_reported_tsval = None;
            }
            h.last_ack = Some((seg.ack, at.ts_ns));
            let blocks = seg.options.sack_blocks();
            h.last_sack_len = blocks.len().min(4);
            h.last_sack[..h.last_sack_len].copy_from_slice(&blocks[..h.last_sack_len]);
            h.last_window = Some(seg.window);
            let newly = h
                .acked
                .filter(|&a| seq::lt(a, seg.ack))
                .map_or(0, |a| seg.ack.wrapping_sub(a));
            h.acked = Some(h.acked.map_or(seg.ack, |a| seq::max(a, seg.ack)));
            let pure = seg_len == 0 && !flags.rst();
            let sent = self.rtt.on_ack(dir, seg.ack, at.ts_ns, pure);
            // (A pure ACK's: no answer's think time in it.)
            if dir == Direction::ServerToClient {
                if pure {
                    self.answered_sent_ns = sent;
                }
                self.acked_sent = sent.map(|sent| (sent, newly));
            }
        }
        if new_data {
            self.rtt
                .on_data(dir, seg.seq.wrapping_add(seg_len), at.ts_ns);
        }
        if let Some((tsval, tsecr)) = seg.options.timestamps {
            self.rtt
                .on_timestamps(dir, (tsval, tsecr), flags.ack(), times_echo, at.ts_ns);
        }

        if flags.fin() {
            self.half[d].stats.fin_frame.get_or_insert(at.frame);
        }
        if flags.rst() {
            self.half[d].stats.rst_frame.get_or_insert(at.frame);
            if dir == Direction::ServerToClient && self.syn_ack.is_none() && self.syn_count > 0 {
                self.syn_refused = true;
            }
        }
        if self.closed_at_ns.is_none()
            && (flags.rst()
                || (self.half[d].stats.fin_frame.is_some()
                    && self.half[r].stats.fin_frame.is_some()))
        {
            self.closed_at_ns = Some(at.ts_ns);
        }

        // Past the timeline's cap (or past where window.rs keeps it open
        // for the ACK of a re-send in it), a long connection's segments
        // go to its window, when the tracker diagnoses windows.
        let first_window = self.window.is_none()
            && (self.timeline.len() < TIMELINE_CAP
                || self
                    .unacked_resends
                    .is_some_and(|u| u.keep_open(self.timeline.len())));
        if retransmission
            && !first_window
            && self.window.is_none()
            && self.late_retransmissions.len() < LATE_RETRANSMISSIONS_CITED
        {
            self.late_retransmissions.push((dir, at.frame));
        }
        if first_window || self.window.is_some() {
            let base = self.half[d].base_seq.unwrap_or(seg.seq);
            let peer_base = self.half[r].base_seq;
            let seq_rel = seg.seq.wrapping_sub(base);
            if self.timeline.capacity() == 0 {
                // A short connection's segments in one allocation.
                self.timeline.reserve_exact(24);
            }
            let record = SegmentRecord {
                frame: at.frame,
                ts_ns: at.ts_ns,
                dir,
                seq: seq_rel,
                end: seq_rel.wrapping_add(seg_len),
                ack: peer_base.map_or(0, |b| seg.ack.wrapping_sub(b)),
                ack_set: flags.ack() && peer_base.is_some(),
                len: seg.payload_len,
                flags,
                window: seg.window,
                new_data,
                retransmission,
                probe,
                overtaken,
                dsack: peer_base.and_then(|b| {
                    let blocks = seg.options.sack_blocks();
                    let first = *blocks.first()?;
                    let below_ack = flags.ack() && seq::le(first.1, seg.ack);
                    let inside_second = blocks.get(1).is_some_and(|second| {
                        seq::le(second.0, first.0) && seq::le(first.1, second.1)
                    });
                    (below_ack || inside_second)
                        .then(|| (first.0.wrapping_sub(b), first.1.wrapping_sub(b)))
                }),
                tsval: seg.options.timestamps.map_or(0, |(v, _)| v),
                tsecr: seg.options.timestamps.map_or(0, |(_, e)| e),
                timestamped: seg.options.timestamps.is_some(),
            };
            match &mut self.window {
                Some(w) if !first_window => w.timeline.push(record),
                _ => self.timeline.push(record),
            }
        }

        if let Some(ladder) = &mut self.ladder {
            let rel = |v: u32, base: Option<u32>| base.map_or(v, |b| v.wrapping_sub(b));
            let wscale = self.half[d]
                .wscale
                .filter(|_| self.half[r].wscale.is_some());
            // A shift above 14 is used as 14 (RFC 7323 2.3): a malformed
            // option must not shift the window out of its 64 bits.
            let window = if flags.syn() {
                seg.window as u64
            } else {
                (seg.window as u64) << wscale.unwrap_or(0).min(14)
            };
            let mut notes = Vec::new();
            if retransmission {
                notes.push("retransmission".to_string());
            }
            if probe {
                notes.push("probe".to_string());
            }
            if seg.window == 0 && !flags.syn() && !flags.rst() {
                notes.push("zero window".to_string());
            }
            ladder.push(LadderEntry {
                frame: at.frame,
                t_ms: (at.ts_ns - self.first.ts_ns) as f64 / 1e6,
                direction: dir,
                flags: flags.describe(),
                seq: rel(seg.seq, self.half[d].base_seq),
                ack: if flags.ack() {
                    rel(seg.ack, self.half[r].base_seq)
                } else {
                    0
                },
                len: seg.payload_len,
                window,
                in_flight,
                notes,
            });
        }

        if self.series.is_some() {
            crate::series::record(self, at, dir, seg, retransmission, probe);
        }

        // The peer acknowledged bytes held back behind a hole: the hole was
        // received, only the capture missed it, and no retransmission will
        // fill it. Deliver what waits behind it now, in its own frames,
        // instead of at the end of the connection.
        if flags.ack() && !self.half[dir.reverse().index()].pending.is_empty() {
            self.skip_acked_holes(dir.reverse(), seg.ack);
        }
        if seg.payload_len > 0 {
            self.deliver(at, dir, seg);
        }
    }

    /// Delivers the held segments of `dir` that lie below `ack` (an
    /// acknowledgement from the peer), skipping the holes between them.
    fn skip_acked_holes(&mut self, dir: Direction, ack: u32) {
        let d = dir.index();
        let Some(next) = self.half[d].deliver_next else {
            return;
        };
        let ahead = seq::diff(ack, next);
        if ahead <= 0 {
            return;
        }
        let acked_off = self.half[d].deliver_off + ahead as u64;
        while let Some((&key, _)) = self.half[d].pending.iter().next() {
            if key >= acked_off {
                return;
            }
            self.deliver_held(dir, None);
        }
    }

    /// Delivers the first held segment of `dir`, skipping the hole before
    /// it if there is one: at `at` (the frame that filled the hole, as
    /// Wireshark counts it), or, with None, in the segment's own frame (the
    /// hole will never be filled).
    fn deliver_held(&mut self, dir: Direction, at: Option<Stamp>) {
        let d = dir.index();
        let Some((&key, &(stamp, _, _))) = self.half[d].pending.iter().next() else {
            return;
        };
        let when = at.unwrap_or(stamp);
        let off = self.half[d].deliver_off;
        if key > off {
            let hole = (key - off) as usize;
            self.advance(dir, hole as u32);
            self.on_stream_bytes(when, dir, &[], hole, true);
            return;
        }
        let (_, bytes, len) = self.half[d].pending.remove(&key).expect("present");
        self.half[d].pending_bytes -= bytes.len();
        let next = self.half[d].deliver_next.expect("delivery started");
        let start = next.wrapping_sub((off - key) as u32);
        self.deliver_at(when, dir, start, &bytes, len);
    }

    /// Hands payload to the observers in sequence order, holding segments
    /// that arrive ahead of a hole until it is filled (or given up on).
    fn deliver(&mut self, at: Stamp, dir: Direction, seg: &Segment<'_>) {
        let d = dir.index();
        let start = seg.seq.wrapping_add(seg.flags.syn() as u32);
        // Delivery starts right after the SYN when it was seen, so a segment
        // that overtook the first data one is held, not taken as the start.
        // Without it (a capture begun mid-connection), at what the peer
        // had acknowledged, when that names bytes below this segment: the
        // bytes between were sent and the capture missed them (nDPI's
        // instagram.pcap 4: the request acknowledged the server's bytes up
        // to 52 KB before the first one captured, an answer begun in a
        // hole, not at that segment).
        // (Once, at the direction's first data.)
        if self.half[d].deliver_next.is_none() {
            let peer_acked = self.half[dir.reverse().index()]
                .acked
                .filter(|&a| seq::lt(a, start));
            let unseen = peer_acked.map(|a| seq::diff(start, a));
            self.half[d].deliver_next = Some(match self.half[d].isn {
                Some(isn) => isn.wrapping_add(1),
                None => peer_acked
                    .filter(|_| unseen.is_some_and(|n| n <= MAX_UNSEEN_START))
                    .unwrap_or(start),
            });
            // Farther (a collage of samples, or a capture that kept only
            // some of the server's segments), the bytes are not taken as
            // missed, but an answer the client asked for below them began
            // at some time the capture cannot tell: the open request's
            // answer is marked begun in a hole (nDPI's quickplay.pcap 20:
            // a video's last segment, 846 KB past what the client had when
            // it asked, 3.3 s of its download read as server time).
            if self.half[d].isn.is_none()
                && dir == Direction::ServerToClient
                && unseen.is_some_and(|n| n > MAX_UNSEEN_START)
            {
                self.exchanges.on_hole(dir, at, 0, start);
            }
        }
        let next = self.half[d].deliver_next.expect("delivery started");
        let end = start.wrapping_add(seg.payload_len);
        if seq::le(end, next) {
            return; // all of it delivered already
        }
        if seq::lt(next, start) {
            // The peer has acknowledged past the hole already (its ACK
            // came before this segment): the hole was received, only the
            // capture missed it, and nothing will fill it. What lies
            // behind it is delivered as it arrives, in its own frame.
            let peer_acked = self.half[dir.reverse().index()].acked;
            if let Some(acked) = peer_acked.filter(|a| seq::le(start, *a)) {
                self.skip_acked_holes(dir, start);
                let next = self.half[d].deliver_next.expect("delivery started");
                if seq::lt(next, start) {
                    let hole = seq::diff(start, next) as usize;
                    self.advance(dir, hole as u32);
                    self.on_stream_bytes(at, dir, &[], hole, true);
                }
                self.deliver_at(at, dir, start, seg.payload, seg.payload_len);
                self.drain(dir, at, false);
                self.skip_acked_holes(dir, acked);
                return;
            }
            let h = &mut self.half[d];
            let key = h.deliver_off + seq::diff(start, next) as u64;
            if h.pending.len() < MAX_PENDING_SEGMENTS
                && h.pending_bytes + seg.payload.len() < MAX_PENDING_BYTES
            {
                // A re-send of held bytes keeps their first arrival.
                if let std::collections::btree_map::Entry::Vacant(slot) = h.pending.entry(key) {
                    h.pending_bytes += seg.payload.len();
                    slot.insert((at, seg.payload.to_vec(), seg.payload_len));
                }
                return;
            }
            // Too much held back: give up on the hole and move on.
            let hole = seq::diff(start, next) as usize;
            self.advance(dir, hole as u32);
            self.on_stream_bytes(at, dir, &[], hole, true);
        }
        // A fill of a hole the server's later segments wait behind: they
        // arrived first (exchange.rs, `Exchange::response_seen`).
        let held = (dir == Direction::ServerToClient)
            .then(|| {
                self.half[d]
                    .pending
                    .values()
                    .map(|(s, _, _)| *s)
                    .min_by_key(|s| s.ts_ns)
            })
            .flatten();
        self.deliver_at(at, dir, start, seg.payload, seg.payload_len);
        if let Some(held) = held {
            self.exchanges.answer_held(at, held);
        }
        self.drain(dir, at, false);
    }

    fn advance(&mut self, dir: Direction, n: u32) {
        let h = &mut self.half[dir.index()];
        if let Some(next) = h.deliver_next {
            h.deliver_next = Some(next.wrapping_add(n));
            h.deliver_off += n as u64;
        }
    }

    /// Delivers a chunk that starts at or before the delivery point.
    fn deliver_at(&mut self, at: Stamp, dir: Direction, start: u32, captured: &[u8], len: u32) {
        let next = self.half[dir.index()].deliver_next.unwrap_or(start);
        let already = seq::diff(next, start).max(0) as usize;
        if already >= len as usize {
            return;
        }
        let fresh_captured = captured.get(already..).unwrap_or(&[]);
        let fresh = len as usize - already;
        let missing = fresh - fresh_captured.len();
        self.advance(dir, fresh as u32);
        self.on_stream_bytes(at, dir, fresh_captured, missing, false);
    }

    /// Delivers held segments the delivery point has reached; at the end of
    /// the connection (`flush`) also skips the holes before them.
    fn drain(&mut self, dir: Direction, at: Stamp, flush: bool) {
        let d = dir.index();
        while let Some((&key, _)) = self.half[d].pending.iter().next() {
            if key > self.half[d].deliver_off && !flush {
                return;
            }
            // Like Wireshark, data held behind a hole counts as arriving in
            // the frame that filled it; at the end, with the hole never
            // filled, it arrived in its own frame.
            self.deliver_held(dir, (!flush).then_some(at));
        }
    }

    /// Delivers whatever is still held, and what a preamble held while
    /// it waited to know whether TLS would start (the connection ends).
    pub(crate) fn release_held(&mut self) {
        self.flush();
        self.release_unfinished_proxy_header();
        self.decide_preamble(true);
    }

    /// Delivers whatever is still held (the holes were never filled).
    pub(crate) fn flush(&mut self) {
        let last = self.last;
        self.drain(Direction::ClientToServer, last, true);
        self.drain(Direction::ServerToClient, last, true);
    }

    /// In-order stream bytes of `dir`: `bytes` captured, then `missing`
    /// more the capture lost; `hole` when none of them was captured (the
    /// capture missed whole segments: they were sent at some time before
    /// `at`, the frame that showed the hole), not a snap length's cut.
    fn on_stream_bytes(
        &mut self,
        at: Stamp,
        dir: Direction,
        bytes: &[u8],
        missing: usize,
        hole: bool,
    ) {
        if dir == Direction::ClientToServer && self.proxy_header.is_open() {
            match self.read_proxy_header(at, bytes, missing, hole) {
                ProxyStep::Held => return,
                ProxyStep::After(offset) => {
                    // The client's own bytes begin after the header: what
                    // they are is judged from there.
                    let rest = &bytes[offset..];
                    if !rest.is_empty() || missing > 0 {
                        self.on_payload_bytes(at, dir, rest, missing, hole);
                    }
                    return;
                }
                ProxyStep::NoHeader(held) => {
                    if let Some(held) = held {
                        self.on_payload_bytes(held.0, dir, &held.1, 0, false);
                    }
                }
            }
        }
        self.on_payload_bytes(at, dir, bytes, missing, hole);
    }

    /// The start of a PROXY protocol header the connection never
    /// finished: the client's own bytes after all, delivered.
    fn release_unfinished_proxy_header(&mut self) {
        if matches!(self.proxy_header, ProxyHeaderState::Reading(_)) {
            if let ProxyHeaderState::Reading(held) =
                std::mem::replace(&mut self.proxy_header, ProxyHeaderState::Absent)
            {
                self.on_payload_bytes(held.0, Direction::ClientToServer, &held.1, 0, false);
            }
        }
    }

    /// Whose connections an earlier one of this could have been reused
    /// for (reuse.rs): the client's address, or, behind a load balancer
    /// that wrote a PROXY protocol header, the address of the client it
    /// named (the balancer's connections to a server carry its clients'
    /// connections one for one: only the same client's could be kept).
    pub(crate) fn reuse_client(&self) -> std::net::IpAddr {
        match &self.proxy_header {
            ProxyHeaderState::Read(read) => read.0.source.map_or(self.client.ip, |a| a.ip()),
            _ => self.client.ip,
        }
    }

    /// Reads the PROXY protocol header the client's stream may begin with
    /// (its first bytes, before the server said anything): held until it
    /// is whole (a header split over segments), then recorded and skipped.
    fn read_proxy_header(
        &mut self,
        at: Stamp,
        bytes: &[u8],
        missing: usize,
        hole: bool,
    ) -> ProxyStep {
        use rttdoc_wire::proxy_protocol::{self as pp, Parsed};
        let state = std::mem::replace(&mut self.proxy_header, ProxyHeaderState::Absent);
        let held = match state {
            ProxyHeaderState::Reading(held) => Some(held),
            _ => None,
        };
        let server_spoke = self.half[Direction::ServerToClient.index()].stats.bytes > 0;
        // The stream's true start (no hole before it, the handshake seen),
        // and nothing from the server yet: only there can a balancer's
        // header be.
        let seen_open = self.first_syn.is_some() || self.syn_ack.is_some();
        let at_start = seen_open && !hole && !server_spoke;
        if held.is_none() && !(at_start && pp::may_start(bytes)) {
            return ProxyStep::NoHeader(None);
        }
        let joined;
        let (seen, before): (&[u8], usize) = match &held {
            Some(h) => {
                joined = [h.1.as_slice(), bytes].concat();
                (&joined, h.1.len())
            }
            None => (bytes, 0),
        };
        match pp::parse(seen) {
            Parsed::Header(header) if header.len > before => {
                self.proxy_header = ProxyHeaderState::Read(Box::new((header, at.frame)));
                ProxyStep::After(header.len - before)
            }
            Parsed::Incomplete if missing == 0 && seen.len() < pp::MAX_HEADER_BYTES => {
                let first = held.as_ref().map_or(at, |h| h.0);
                self.proxy_header = ProxyHeaderState::Reading(Box::new((first, seen.to_vec())));
                ProxyStep::Held
            }
            _ => ProxyStep::NoHeader(held),
        }
    }

    fn on_payload_bytes(
        &mut self,
        at: Stamp,
        dir: Direction,
        bytes: &[u8],
        missing: usize,
        hole: bool,
    ) {
        if !self.protocol_decided {
            let client = dir == Direction::ClientToServer;
            if self.preamble.is_none() && bytes.is_empty() {
                // The stream starts inside a capture hole: nothing to judge.
                self.protocol_decided = true;
            } else if self.preamble.is_none()
                && client
                && bytes.len() >= 3
                && bytes[0] == 22
                && bytes[1] == 3
                && bytes[2] <= 4
            {
                self.protocol_decided = true;
                self.tls = Some(Box::default());
            } else if self.preamble.is_none()
                && !client
                && bytes.len() >= 6
                && bytes[0] == 22
                && bytes[1] == 3
                && bytes[2] <= 4
                && bytes[5] == 2
            {
                // The server speaks first with a ServerHello: the capture
                // began after the ClientHello (mid-stream, or one side
                // only). No server-first protocol greets with one.
                self.protocol_decided = true;
                self.tls = Some(Box::default());
            } else {
                // Maybe a plaintext preamble before TLS (proxy, STARTTLS):
                // hold the bytes until it is judged, then replay them.
                let held = self.preamble.get_or_insert_with(Default::default);
                if held.push(at, dir, bytes, missing) {
                    match held.judge(false) {
                        Verdict::Undecided => {}
                        v => self.decide(v),
                    }
                    return;
                }
                self.decide(Verdict::Plain);
            }
        }
        self.hand_over(at, dir, bytes, missing, hole);
    }

    /// Ends the wait on a preamble: TLS from where it ended (the held
    /// bytes before it are the preamble's), or plaintext from the start.
    fn decide_preamble(&mut self, at_end: bool) {
        if !self.protocol_decided {
            match &self.preamble {
                Some(held) => {
                    let v = held.judge(at_end);
                    self.decide(if v == Verdict::Undecided {
                        Verdict::Plain
                    } else {
                        v
                    });
                }
                None => self.protocol_decided = true,
            }
        }
    }

    fn decide(&mut self, v: Verdict) {
        self.protocol_decided = true;
        let Some(held) = self.preamble.take() else {
            return;
        };
        let from = match v {
            Verdict::Tls(start) => {
                let mut tls = TlsSession::default();
                tls.preamble = held.first.map(|first| (start, first));
                self.tls = Some(Box::new(tls));
                [start.client_offset, start.server_offset]
            }
            Verdict::TlsFromStart => {
                self.tls = Some(Box::default());
                [0, 0]
            }
            _ => [0, 0],
        };
        held.replay(from, |at, dir, bytes, missing| {
            self.hand_over(at, dir, bytes, missing, false)
        });
    }

    /// The round trip from the capture point to the host that sends in
    /// `sender` and back: the handshake's (SYN -> SYN-ACK for the server,
    /// SYN-ACK -> ACK for the client) or the smallest answer the sender
    /// gave to data, whichever is smaller.
    pub(crate) fn sender_side_ns(&self, sender: Direction) -> Option<i64> {
        let (handshake, samples) = match sender {
            Direction::ServerToClient => {
                (self.syn_gap_ns, self.rtt.min_for(Direction::ClientToServer))
            }
            Direction::ClientToServer => (
                match (self.syn_ack_count, self.syn_ack, self.handshake_ack) {
                    (1, Some(sa), Some(ack)) => Some(ack.ts_ns - sa.ts_ns),
                    _ => None,
                },
                self.rtt.min_for(Direction::ServerToClient),
            ),
        };
        match (handshake, samples) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// What the exchanges judge a client's data by: the round trip, the
    /// server's last packet, what the client had of the server's stream.
    #[inline(never)]
    fn note_for_requests(&mut self) {
        // A side not timed yet (a capture joined mid-connection, whose
        // client has acknowledged no server data yet) counts as none: it
        // is ~0 at the capture point's own host, and only a path longer
        // than the other side by half a second could be mistaken.
        self.exchanges.round_trip_ns = match (
            self.exchanges.server_side_ns,
            self.sender_side_ns(Direction::ClientToServer),
        ) {
            (None, None) => None,
            (server, client) => Some(server.unwrap_or(0) + client.unwrap_or(0)),
        };
        self.exchanges.server_last_ns = self.half[Direction::ServerToClient.index()]
            .last_ack
            .map(|(_, ts)| ts);
        // What the client had of the server's stream when it sent this (a
        // request opened now had it: a hole below it is the tail of an
        // earlier answer, not this one's start), and whether it had bytes
        // the capture never showed.
        let client_acked = self.half[Direction::ClientToServer.index()].acked;
        self.exchanges.client_acked = client_acked;
        self.exchanges.client_acked_unseen = match (
            self.half[Direction::ServerToClient.index()].max_end,
            client_acked,
        ) {
            (Some(end), Some(acked)) => seq::lt(end, acked),
            _ => false,
        };
    }

    /// Hands decided stream bytes to the TLS parser or the exchanges.
    #[inline]
    fn hand_over(&mut self, at: Stamp, dir: Direction, bytes: &[u8], missing: usize, hole: bool) {
        let len = bytes.len() + missing;
        // The tightest bound yet on the capture point -> server -> capture
        // point round trip, for the exchanges' causality check.
        let samples = self.rtt.min_for(Direction::ClientToServer);
        self.exchanges.server_side_ns = match (self.syn_gap_ns, samples) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        // What a request opened or continued by the client's data is
        // judged by (exchange.rs: a pause of the client's own, an answer
        // the capture lost), set only then: most data is the server's.
        if dir == Direction::ClientToServer {
            self.note_for_requests();
        }
        let hole_end = self.half[dir.index()].deliver_next.filter(|_| hole);
        match (&mut self.tls, hole_end) {
            (Some(tls), _) => {
                self.exchanges.inside_tls();
                tls.keep_server_records = self.keylog.is_some();
                if let Some(log) = &self.keylog {
                    tls.look_up_keys(log);
                }
                if let Some(end) = hole_end.filter(|_| tls.server_data_phase(dir)) {
                    self.exchanges.on_hole(dir, at, missing as u64, end);
                }
                tls.feed(at, dir, bytes, missing, &mut self.exchanges);
                if self.exchanges.kafka_port_tls {
                    // Once the ClientHello is read, or known missed (the
                    // server never speaks before it).
                    let http_offered = match &tls.client_hello {
                        Some(hello) => Some(rttdoc_wire::tls::offers_http(&hello.alpn)),
                        None if dir == Direction::ServerToClient => None,
                        None => return,
                    };
                    self.exchanges.inside_tls_without_http(http_offered);
                }
            }
            (None, Some(end)) => self.exchanges.on_hole(dir, at, len as u64, end),
            (None, None) => {
                // (A reader may join a connection the capture began in
                // the middle of, where no first message tells it.)
                self.exchanges.mid_stream = self.first_syn.is_none() && self.syn_ack.is_none();
                self.exchanges.on_data(dir, at, at, len as u64, bytes)
            }
        }
    }

    /// Delivers what is still held and closes the TLS parser: the last
    /// step before the connection's facts are frozen (facts.rs).
    pub(crate) fn settle(&mut self) {
        self.flush();
        self.release_unfinished_proxy_header();
        self.decide_preamble(true);
        if let Some(tls) = &mut self.tls {
            tls.finish(&mut self.exchanges);
        }
    }

    /// What answered the SYN is a relay's own TCP (`HandshakeReport::relay`):
    /// the capture's round trips are the relay's, not the path's.
    pub(crate) fn behind_relay(&self) -> bool {
        self.syn_ack.is_some() && self.half[0].mss.is_some() && self.half[1].bare_syn
    }

    pub(crate) fn handshake_report(&self) -> HandshakeReport {
        let c = &self.half[0];
        let s = &self.half[1];
        let tfo = self.tfo_report();
        HandshakeReport {
            syn_frame: self.first_syn.map(|s| s.frame),
            syn_ack_frame: self.syn_ack.map(|s| s.frame),
            ack_frame: self.handshake_ack.map(|s| s.frame),
            syn_retransmits: self
                .syn_count
                .saturating_sub(1)
                .saturating_sub(self.syn_retries_after_rst),
            syn_ack_retransmits: self.syn_ack_count.saturating_sub(1),
            client_mss: c.mss,
            server_mss: s.mss,
            relay: self.behind_relay(),
            shared_clock_servers: (self.servers_on_clock >= SHARED_CLOCK_SERVERS)
                .then(|| self.servers_on_clock.min(u8::MAX as u32) as u8),
            client_wscale: c.wscale,
            server_wscale: s.wscale,
            sack_permitted: c.sack_ok && s.sack_ok,
            client_sack: c.sack_ok,
            timestamps: c.ts_ok && s.ts_ok,
            tfo,
            server_linux: self.syn_ack.is_some() && s.linux_layout,
        }
    }

    fn tfo_report(&self) -> Option<TfoReport> {
        let t = &self.tfo;
        let outcome = match (t.syn_option, t.syn_data) {
            (None, 0) => return None,
            (Some(Tfo::CookieRequest), 0) | (None, _) if t.syn_data == 0 => {
                TfoOutcome::CookieRequest
            }
            (Some(Tfo::Cookie { .. }), 0) => TfoOutcome::CookieWithoutData,
            (_, data) => {
                let data_end = t.syn_seq.wrapping_add(1).wrapping_add(data);
                match t.synack_ack {
                    Some(ack) if ack == data_end => TfoOutcome::Accepted,
                    Some(_) => TfoOutcome::Rejected,
                    None => TfoOutcome::NoAnswer,
                }
            }
        };
        Some(TfoReport {
            outcome,
            syn_data_bytes: t.syn_data,
            server_sent_cookie: t.synack_cookie,
        })
    }
}
