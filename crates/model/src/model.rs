//! What the analysis produces: plain data, serialisable as rttdoc's JSON
//! (schema in docs/json-schema.md). Renderers in `rttdoc-report` read these;
//! nothing here formats text for people.

use std::net::IpAddr;

use serde::{Serialize, Serializer};

pub use crate::kinds::{CostRule, FindingKind, Phase};

/// Version of the JSON document layout; bumped on any incompatible change.
pub const SCHEMA_VERSION: u32 = 2;

/// The calls a server's host made while one of its clients waited for
/// an answer (rttdoc-analyze's upstream.rs): its other connections, each
/// begun after the request and answered before the answer left.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct HostCalls {
    /// How many.
    pub calls: u32,
    /// The first (`tcp.stream`).
    pub first_stream: u64,
    /// The server the first called.
    pub first_server: Endpoint,
}

/// A server's Certificate message, as read (TLS 1.2 and older).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ServerCertificates {
    /// How many certificates it sent (its own first, then its chain).
    pub count: u16,
    /// Its own is self-signed (issuer and subject the same name): no
    /// chain, and no issuer to ask for its revocation status.
    pub self_signed: bool,
    /// One of them names somewhere a client checking it may go online: an
    /// OCSP responder or its issuer's certificate (Authority Information
    /// Access), or CRL distribution points. Without, the client had
    /// nothing to fetch or ask (nDPI's forticlient.pcap: a FortiGate's
    /// factory certificate and Fortinet's CA).
    pub online_checks: bool,
    /// The frame that completed the message.
    pub frame: u64,
}

/// A pause inside a flight of the server's in the TLS handshake that
/// nothing of the client's released (rttdoc-diagnose's
/// server_think_time.rs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FlightPause {
    /// How long (ms).
    pub ms: f64,
    /// The server's segment before the pause.
    pub before_frame: u64,
    /// Its next segment, after the pause.
    pub after_frame: u64,
    /// The client's last packet that reached the server before that one
    /// left (its ACK), from whose arrival the pause is timed; none where
    /// the pause is timed from the segment before it.
    pub release_frame: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
/// A TCP endpoint: address and port.
pub struct Endpoint {
    /// IP address.
    pub ip: IpAddr,
    /// TCP port.
    pub port: u16,
}

impl std::fmt::Display for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.ip {
            IpAddr::V4(ip) => write!(f, "{ip}:{}", self.port),
            IpAddr::V6(ip) => write!(f, "[{ip}]:{}", self.port),
        }
    }
}

/// Where the capture was taken, as seen from the TCP handshake gaps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Vantage {
    /// SYN -> SYN-ACK takes the whole round trip, SYN-ACK -> ACK is immediate.
    Client,
    /// SYN -> SYN-ACK is immediate, SYN-ACK -> ACK takes the round trip.
    Server,
    /// Both gaps carry part of the round trip.
    Middle,
    /// No complete handshake was seen.
    Unknown,
}

impl Ending {
    /// The JSON name (`fin`).
    pub fn name(self) -> &'static str {
        match self {
            Ending::Fin => "fin",
            Ending::Reset => "reset",
            Ending::Open => "open",
            Ending::Idle => "idle",
            Ending::Refused => "refused",
            Ending::Unreachable => "unreachable",
        }
    }
}

impl Vantage {
    /// The JSON name (`client`).
    pub fn as_str(self) -> &'static str {
        match self {
            Vantage::Client => "client",
            Vantage::Server => "server",
            Vantage::Middle => "middle",
            Vantage::Unknown => "unknown",
        }
    }
}

/// How the path RTT was estimated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RttSource {
    /// SYN to handshake ACK (Wireshark's tcp.analysis.initial_rtt).
    Handshake,
    /// Data segments and the ACKs that covered them.
    DataAck,
    /// TCP timestamps echoed back (TSval -> TSecr).
    Timestamps,
}

/// A direction within a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// From the client (the side that sent the SYN) to the server.
    ClientToServer,
    /// From the server to the client.
    ServerToClient,
}

impl Direction {
    /// 0 for client to server, 1 for server to client (index of per-direction arrays).
    pub fn index(self) -> usize {
        match self {
            Direction::ClientToServer => 0,
            Direction::ServerToClient => 1,
        }
    }
    /// The other direction.
    pub fn reverse(self) -> Direction {
        match self {
            Direction::ClientToServer => Direction::ServerToClient,
            Direction::ServerToClient => Direction::ClientToServer,
        }
    }
    /// `->` or `<-`, for ladders.
    pub fn arrow(self) -> &'static str {
        match self {
            Direction::ClientToServer => "->",
            Direction::ServerToClient => "<-",
        }
    }
}

/// What a long connection's later windows held, and, while the
/// connection is tracked, what their diagnosis found (folded window by
/// window: one ledger row per phase, one finding per kind and side).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LaterWindows {
    /// Windows diagnosed (each up to [`TIMELINE_CAP`] segments).
    pub windows: u32,
    /// The first window's first frame.
    pub first_frame: u64,
    /// The last window's last frame.
    pub last_frame: u64,
    /// Exchanges closed in them.
    pub exchanges: u32,
    /// The number of the first of them (1-based, as in the ledger), 0
    /// when none.
    pub first_exchange: u32,
    /// Their ledger rows summed per phase.
    #[serde(skip)]
    pub rows: Vec<LedgerRow>,
    /// Their findings, one per kind and side.
    #[serde(skip)]
    pub findings: Vec<Finding>,
    /// The last window's own rows (it is diagnosed when the connection
    /// ends, never handed on as the others are): for the outputs that
    /// count each request (the metrics' think times), which saw the
    /// others' as they came.
    #[serde(skip)]
    pub last_rows: Vec<LedgerRow>,
    /// Per sender (client, server): the timeline or a window showed it
    /// sending a small segment behind an unacknowledged one, so it runs
    /// without Nagle from then on, and the later windows' silences are
    /// not Nagle holds.
    #[serde(skip)]
    pub nagle_off: [bool; 2],
    /// The hosts' short turnarounds in them (ms; client, server), each
    /// window's within what no finding of its own accounted for.
    #[serde(skip)]
    pub turnaround_ms: [f64; 2],
}

/// The waits of a finding past the ones it lists ([`MAX_WAITS_LISTED`]):
/// a long connection's hundredth thousand stall is counted, not cited.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct UnlistedWaits {
    /// How many.
    pub count: u32,
    /// Their sum (ms): `cost_ms` is the listed waits' sum plus this.
    pub ms: f64,
}

/// What a finding of a connection made ahead of need would have cost had
/// its client waited for the set-up (a browser's preconnect): its first
/// request left long after the set-up let it, or none ever did, so nobody
/// waited for what slowed the set-up, and the finding costs nothing.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Unwaited {
    /// The finding's cost had its client waited (ms): what its waits
    /// summed.
    pub cost_ms: f64,
    /// How long after the set-up let it the first request left, or,
    /// none having left, the connection's first FIN or RST came (ms, on
    /// the client's clock).
    pub idle_ms: f64,
    /// The last data before the request (the set-up's end).
    pub ready_frame: u64,
    /// The first request's first segment (none: the connection carried
    /// no request).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_frame: Option<u64>,
    /// The connection's first FIN or RST, when it carried no request: it
    /// sat unused from `ready_frame` until then.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub closed_frame: Option<u64>,
    /// The frame the capture had reached when the connection, still open
    /// and never asked anything, was handed on: it sat unused from
    /// `ready_frame` until at least then (`idle_ms`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub open_until_frame: Option<u64>,
    /// Another connection of the client's to the same server address and
    /// port (`tcp.stream`) that carried a request of its meanwhile (after
    /// this one's SYN, before its first request): the client had a
    /// connection for its requests. None for a connection that carried
    /// no request and that its client closed, its set-up done, long after
    /// (a request waiting for it would have left the moment it could).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sibling_stream: Option<u64>,
    /// That request's first frame.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sibling_frame: Option<u64>,
}

/// The waits a finding lists at most (the rest are [`UnlistedWaits`]).
pub const MAX_WAITS_LISTED: usize = 1024;

/// One phase of a connection's round-trip ledger.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LedgerRow {
    /// `tcp_handshake`, `proxy_connect` or `starttls` (a plaintext
    /// preamble before TLS), `tls_handshake`, `first_byte` or `transfer`.
    pub phase: Phase,
    /// For people: "TCP handshake", "GET /index.html -> first byte" ...
    pub label: String,
    /// Exchange number (1-based) for per-request rows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exchange: Option<u32>,
    /// Frame where the phase starts.
    pub start_frame: u64,
    /// Frame where it ends.
    pub end_frame: u64,
    /// Duration as the client experienced it (server-sent packets are
    /// shifted by the client-side part of the RTT, see docs).
    pub duration_ms: f64,
    /// `duration_ms / rtt_ms`, when the RTT is known.
    pub rtts: Option<f64>,
    /// Round trips this phase needs at best for what was negotiated.
    pub ideal_rtts: Option<f64>,
    /// `max(0, rtts - ideal_rtts)`.
    pub excess_rtts: Option<f64>,
    /// Milliseconds spent beyond the ideal.
    pub excess_ms: Option<f64>,
    /// Why the ideal is what it is ("TLS 1.3 full handshake: 1 RTT").
    pub ideal_basis: String,
    /// How many rows of a long connection's later windows this one sums
    /// (`ConnectionReport::later_windows`); 0 for a row of its own.
    #[serde(skip_serializing_if = "is_zero_u32")]
    pub summed: u32,
}

fn is_zero_u64(n: &u64) -> bool {
    *n == 0
}

fn is_zero_u32(n: &u32) -> bool {
    *n == 0
}

/// TCP handshake details.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct HandshakeReport {
    /// The first SYN's frame.
    pub syn_frame: Option<u64>,
    /// The SYN-ACK's frame.
    pub syn_ack_frame: Option<u64>,
    /// The client's ACK that completed the handshake.
    pub ack_frame: Option<u64>,
    /// SYNs sent beyond the first (lost SYN, SYN queue overflow).
    pub syn_retransmits: u32,
    /// SYN-ACKs sent beyond the first.
    pub syn_ack_retransmits: u32,
    /// MSS option of the client's SYN.
    pub client_mss: Option<u16>,
    /// MSS option of the server's SYN-ACK.
    pub server_mss: Option<u16>,
    /// The SYN-ACK carried no TCP option at all though the client's SYN
    /// offered an MSS: no operating system's TCP answers so (Linux,
    /// Windows, macOS and the BSDs always send their MSS; so do lwIP and
    /// SYN proxies; a middlebox that strips an option leaves the others).
    /// What answered is a relay's own TCP: a phone's VPN capture app
    /// (tPacketCapture and its kind), which accepts the app's connection
    /// at once and opens its own to the server. The capture shows the
    /// relay's round trip, microseconds, not the path's to the server,
    /// and the server's answers come after that unseen path: the
    /// connection's RTT is unknown, and the server's time cannot be told
    /// from it. (In the JSON only when true.)
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub relay: bool,
    /// Server addresses (three or more, this one among them) that answered
    /// this client on this connection's server's TCP clock (read on its
    /// SYN-ACK, or its server's first segment when the capture missed the
    /// handshake, and likewise on the others'): one box
    /// answered for them all, a split-TCP proxy or a load balancer, and
    /// the server's time here includes its wait for the real server. (In
    /// the JSON only when known; at most 65, the notes a client keeps.)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shared_clock_servers: Option<u8>,
    /// Window scale of the client's SYN.
    pub client_wscale: Option<u8>,
    /// Window scale of the server's SYN-ACK.
    pub server_wscale: Option<u8>,
    /// Both SYNs allowed SACK.
    pub sack_permitted: bool,
    /// The client's SYN allowed SACK: with `sack_permitted` false, the
    /// server's SYN-ACK refused it (its stack, or a box on the way that
    /// strips the option), which says where to turn it on. (Not in the
    /// JSON: a fact the fixes weigh.)
    #[serde(skip)]
    pub client_sack: bool,
    /// Both SYNs carried timestamps.
    pub timestamps: bool,
    /// TCP Fast Open on this handshake, if any.
    pub tfo: Option<TfoReport>,
    /// The server's SYN-ACK laid its options out as Linux does
    /// (`rttdoc_wire::TcpOptions::laid_out_as_linux`): a stack that
    /// acknowledges a connection's first data at once (quick-ACK mode),
    /// so its pure ACK of the first request (or ClientHello) left when
    /// that arrived, however late. (Not in the JSON: a fact detectors
    /// weigh.)
    #[serde(skip)]
    pub server_linux: bool,
}

/// What a client fetched over HTTP to check a server's certificate
/// during its TLS handshake (`certificate_fetch`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CertificateCheck {
    /// The intermediate that signed the certificate, which the server did
    /// not send (the certificate's AIA "CA Issuers" URL).
    Intermediate,
    /// The certificate's revocation status from its CA's OCSP responder.
    Ocsp,
    /// The issuer's certificate revocation list.
    Crl,
}

/// What the held connection's TLS handshake said of a stapled
/// certificate status (`certificate_fetch`): whether the server could
/// have spared the client its revocation fetch. Frames are Wireshark's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusStaple {
    /// The ClientHello was not seen.
    Unknown,
    /// The client did not ask for a stapled status (no status_request
    /// in its ClientHello): a server's staple would not have reached it.
    NotAsked {
        /// The ClientHello's (first) frame.
        client_hello: u64,
    },
    /// The client asked; the server's TLS 1.2 flight went on past its
    /// Certificate without a CertificateStatus.
    NotStapled {
        /// The ClientHello's (first) frame.
        client_hello: u64,
        /// The frame of the server's message after its Certificate
        /// (ServerKeyExchange, CertificateRequest or ServerHelloDone).
        flight: u64,
    },
    /// The client asked and the server stapled, and the client fetched
    /// a status all the same (another certificate's of the chain, or a
    /// staple it did not take).
    Stapled {
        /// The CertificateStatus' frame.
        status: u64,
    },
    /// The client asked; the capture cannot show whether the server
    /// stapled (TLS 1.3 staples inside its encrypted Certificate).
    Unseen {
        /// The ClientHello's (first) frame.
        client_hello: u64,
    },
}

/// What a client's certificate fetch held (`certificate_fetch`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FetchHeld {
    /// Turns of the TLS handshake: the client's next flight waited.
    Handshake {
        /// How many of the client's turns waited for a fetch.
        turns: u32,
    },
    /// The first request, after the handshake: the client went on with
    /// the handshake and checked the certificate beside it, sending
    /// nothing until the check was done (outside the ledger's rows).
    FirstRequest {
        /// When the request left after the fetch's answer (ms): the
        /// client's own turnaround.
        after_ms: f64,
    },
}

/// A TLS key exchange that costs a host many times what ECDHE on x25519
/// or P-256 does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CostlyKeyExchange {
    /// A named group (TLS 1.3's key share, or a HelloRetryRequest's):
    /// secp521r1, ffdhe2048-8192 (`rttdoc_wire::tls::costly_group`).
    Group(String),
    /// A TLS 1.2 (or older) DHE suite: finite-field Diffie-Hellman
    /// (`rttdoc_wire::tls::dhe_suite`).
    DheSuite,
}

/// What an HTTP/1.x request said of its connection's end (a server that
/// closes right after answering it did as it was asked), or an answer
/// (the server closed as it said it would).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RequestedClose {
    /// Its `Connection` header named `close` (RFC 9112 9.6).
    ConnectionClose,
    /// An HTTP/1.0 request (or answer) without `Connection: keep-alive`:
    /// HTTP/1.0 closes after each answer unless asked otherwise (RFC 9112
    /// 9.3).
    Http10,
}

/// What became of a TCP Fast Open attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TfoOutcome {
    /// The SYN carried an empty option 34: asking for a cookie.
    CookieRequest,
    /// A cookie and data in the SYN; the SYN-ACK acknowledged the data.
    Accepted,
    /// A cookie and data in the SYN; the SYN-ACK acknowledged only the SYN.
    Rejected,
    /// A cookie without data.
    CookieWithoutData,
    /// Data in the SYN, and no SYN-ACK in the capture.
    NoAnswer,
}

impl TfoOutcome {
    /// The JSON name (`cookie_request`).
    pub fn name(self) -> &'static str {
        match self {
            TfoOutcome::CookieRequest => "cookie_request",
            TfoOutcome::Accepted => "accepted",
            TfoOutcome::Rejected => "rejected",
            TfoOutcome::CookieWithoutData => "cookie_without_data",
            TfoOutcome::NoAnswer => "no_answer",
        }
    }
}

impl std::fmt::Display for TfoOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A Multipath TCP subflow (RFC 8684): the connection's data goes over
/// one or more TCP connections, its subflows, each a `tcp.stream` of its
/// own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MptcpReport {
    /// How the subflow began.
    pub subflow: MptcpSubflowKind,
    /// The first frame whose data-level acknowledgment (a DSS option's
    /// Data ACK) moved further than this subflow's own ACK could: other
    /// subflows (captured or not) carried part of the connection's data,
    /// from this frame or before it.
    pub other_subflows_frame: Option<u64>,
    /// The server's first data segment here after each request whose
    /// answer began on another subflow (its data sequence number passed
    /// the request's Data ACK, or its Data ACK the request's mapped end):
    /// not an answer's first byte, so those turns are not measured.
    pub split_turns: Vec<u64>,
}

/// The PROXY protocol header a load balancer or proxy wrote first on the
/// connection (HAProxy `send-proxy`/`send-proxy-v2`, AWS Network Load
/// Balancers, Envoy): the client it accepted, before that client's own
/// bytes. Not part of any exchange: nothing answers it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProxyProtocolReport {
    /// 1 (text) or 2 (binary).
    pub version: u8,
    /// The frame that completed the header.
    pub frame: u64,
    /// Version 2's LOCAL command: the balancer's own connection (a health
    /// check), no client behind it.
    pub local: bool,
    /// The client the balancer accepted, when the header names one.
    pub client: Option<Endpoint>,
    /// The address that client connected to (the balancer's listener).
    pub destination: Option<Endpoint>,
}

/// Which subflow of a Multipath TCP connection a `tcp.stream` is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MptcpSubflowKind {
    /// MP_CAPABLE on both SYNs: the subflow that started the connection.
    First,
    /// MP_JOIN on both SYNs: a subflow added to a connection already open.
    Joined,
    /// The handshake was not captured (MPTCP options on its data only).
    Unknown,
}

/// TCP Fast Open as seen on the handshake.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TfoReport {
    /// `cookie_request`, `accepted`, `rejected`, `cookie_without_data`
    /// or `no_answer`.
    pub outcome: TfoOutcome,
    /// Bytes of data the SYN carried.
    pub syn_data_bytes: u32,
    /// The server handed out a cookie on its SYN-ACK.
    pub server_sent_cookie: bool,
}

/// Per-direction TCP counters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DirectionStats {
    /// Packets sent (capture copies excluded).
    pub packets: u64,
    /// Payload bytes, counted once (retransmissions excluded).
    pub bytes: u64,
    /// Segments sent again (not probes, not copies).
    pub retransmissions: u32,
    /// Segments that arrived behind a later one (filled a hole quickly).
    pub out_of_order: u32,
    /// Segments whose sequence jumped ahead: earlier data not in the capture.
    pub gaps: u32,
    /// Times this side advertised a zero window.
    pub zero_windows: u32,
    /// Where it first did.
    pub first_zero_window_frame: Option<u64>,
    /// Most bytes this side had sent and not yet seen acknowledged.
    pub max_bytes_in_flight: u32,
    /// Segments carrying SACK blocks (the receiver reporting holes).
    pub sack_segments: u32,
    /// This side's FIN.
    pub fin_frame: Option<u64>,
    /// This side's RST.
    pub rst_frame: Option<u64>,
    /// Extra copies of this side's packets in the capture (a span port, an
    /// `-i any` capture seeing a packet on two interfaces, merged files, a
    /// file appended to itself): ignored by the analysis, counted here.
    pub capture_duplicates: u32,
    /// Keep-alive probes (0 or 1 byte at snd_nxt - 1 after idle): not
    /// retransmissions.
    pub keepalives: u32,
    /// Zero-window probes sent while the peer's window was closed: not
    /// retransmissions.
    pub window_probes: u32,
    /// Times the peer acknowledged bytes of this side the capture never
    /// showed (tshark's "ACKed segment that wasn't captured"): the
    /// capture dropped them, not the path.
    pub acked_unseen: u32,
}

/// Segments kept per connection for the detectors: the start of a
/// connection (handshakes, first exchanges) is where round trips are lost
/// most, and a bound keeps memory proportional to open connections. What
/// comes later is counted, not analyzed (the words say so where it
/// matters).
pub const TIMELINE_CAP: usize = 2048;

/// A TLS protocol version as it appears on the wire (0x0303 is TLS 1.2);
/// shown and serialised as its name ("TLS 1.3", drafts as "0x7f1c").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TlsVersion(pub u16);

impl TlsVersion {
    /// TLS 1.2 (0x0303).
    pub const TLS12: TlsVersion = TlsVersion(0x0303);
    /// TLS 1.3 (0x0304).
    pub const TLS13: TlsVersion = TlsVersion(0x0304);

    /// TLS 1.3, or one of its drafts.
    pub fn is_tls13(self) -> bool {
        rttdoc_wire::tls::is_tls13(self.0)
    }
}

impl std::fmt::Display for TlsVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            0x0300 => f.write_str("SSL 3.0"),
            0x0301 => f.write_str("TLS 1.0"),
            0x0302 => f.write_str("TLS 1.1"),
            0x0303 => f.write_str("TLS 1.2"),
            0x0304 => f.write_str("TLS 1.3"),
            other => write!(f, "0x{other:04x}"),
        }
    }
}

impl Serialize for TlsVersion {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// A TLS handshake message or record as rttdoc saw it: what it is, as far
/// as the capture shows (TLS 1.3 encrypts most of the handshake).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TlsMessage {
    /// ClientHello.
    ClientHello,
    /// ServerHello.
    ServerHello,
    /// A ServerHello whose body could not be parsed.
    ServerHelloUnparsed,
    /// A ServerHello asking for another key share.
    HelloRetryRequest,
    /// Certificate (TLS 1.2, or visible 1.3).
    Certificate,
    /// ServerKeyExchange (TLS 1.2).
    ServerKeyExchange,
    /// CertificateRequest.
    CertificateRequest,
    /// ServerHelloDone (TLS 1.2).
    ServerHelloDone,
    /// CertificateVerify.
    CertificateVerify,
    /// ClientKeyExchange (TLS 1.2).
    ClientKeyExchange,
    /// NewSessionTicket (TLS 1.2, plaintext).
    NewSessionTicket,
    /// EncryptedExtensions.
    EncryptedExtensions,
    /// EndOfEarlyData.
    EndOfEarlyData,
    /// Finished (plaintext: only in captures of unusual stacks).
    Finished,
    /// CertificateStatus (TLS 1.2 and older): the server's stapled OCSP
    /// status.
    CertificateStatus,
    /// A plaintext handshake message of another type.
    OtherHandshake(u8),
    /// ChangeCipherSpec (TLS 1.2, and TLS 1.3's compatibility record).
    ChangeCipherSpec,
    /// A plaintext alert.
    Alert {
        /// Alert level (1 warning, 2 fatal).
        level: u8,
        /// Alert description code.
        description: u8,
    },
    /// An encrypted alert.
    AlertEncrypted,
    /// A TLS 1.2 Finished (after ChangeCipherSpec), or a TLS 1.3 record of
    /// exactly a Finished's size.
    FinishedEncrypted,
    /// A TLS 1.2 client's NextProtocol (NPN), its first encrypted
    /// handshake message after ChangeCipherSpec where the server agreed
    /// to NPN: its Finished follows.
    NextProtocolEncrypted,
    /// A handshake record whose bytes the capture did not hold.
    HandshakeNotCaptured,
    /// A TLS 1.3 encrypted handshake record (EncryptedExtensions,
    /// Certificate, CertificateVerify: which one is hidden).
    EncryptedHandshake,
    /// An encrypted record of EndOfEarlyData's size.
    EndOfEarlyDataEncrypted,
    /// 0-RTT application data.
    EarlyData,
    /// A TLS 1.3 record taken for a session ticket.
    NewSessionTicketEncrypted,
    /// A record of another content type.
    OtherRecord(u8),
}

impl TlsMessage {
    /// An alert record, read or encrypted (a close_notify, a fatal
    /// error).
    pub fn is_alert(&self) -> bool {
        matches!(self, TlsMessage::Alert { .. } | TlsMessage::AlertEncrypted)
    }
}

impl std::fmt::Display for TlsMessage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use TlsMessage::*;
        let name = match self {
            ClientHello => "ClientHello",
            ServerHello => "ServerHello",
            ServerHelloUnparsed => "ServerHello (unparsed)",
            HelloRetryRequest => "HelloRetryRequest",
            Certificate => "Certificate",
            ServerKeyExchange => "ServerKeyExchange",
            CertificateRequest => "CertificateRequest",
            ServerHelloDone => "ServerHelloDone",
            CertificateVerify => "CertificateVerify",
            ClientKeyExchange => "ClientKeyExchange",
            NewSessionTicket => "NewSessionTicket",
            EncryptedExtensions => "EncryptedExtensions",
            EndOfEarlyData => "EndOfEarlyData",
            Finished => "Finished",
            CertificateStatus => "CertificateStatus",
            OtherHandshake(t) => return write!(f, "Handshake type {t}"),
            ChangeCipherSpec => "ChangeCipherSpec",
            Alert { level, description } => {
                return write!(f, "Alert (level {level}, description {description})")
            }
            AlertEncrypted => "Alert (encrypted)",
            FinishedEncrypted => "Finished (encrypted)",
            NextProtocolEncrypted => "NextProtocol (encrypted)",
            HandshakeNotCaptured => "Handshake (not captured)",
            EncryptedHandshake => "Encrypted handshake",
            EndOfEarlyDataEncrypted => "EndOfEarlyData (encrypted)",
            EarlyData => "Early data (0-RTT)",
            NewSessionTicketEncrypted => "NewSessionTicket (encrypted)",
            OtherRecord(t) => return write!(f, "Record type {t}"),
        };
        f.write_str(name)
    }
}

impl Serialize for TlsMessage {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl TlsReport {
    /// Whether the client speaks HTTP over this session, as its ALPN
    /// offer (`http/1.1`, `h2`, `spdy/...`) or its offer of NPN says: a
    /// client that speaks first (HTTP servers never greet).
    pub fn offers_http(&self) -> bool {
        rttdoc_wire::tls::offers_http(&self.alpn) || self.npn_offered
    }

    /// Whether the client offered to resume a session: a PSK (TLS 1.3),
    /// a ticket, or a session ID the same server issued earlier.
    pub fn resumption_offered(&self) -> bool {
        self.psk_offered || self.session_ticket_offered || self.session_id_offered
    }

    /// Whether the client's answer to the server's flight shows it signed
    /// nothing with a certificate of its own: its key exchange or its
    /// Finished read, and no Certificate or CertificateVerify of its
    /// (a server's CertificateRequest draws a client Certificate, empty
    /// or not: RFC 5246 7.4.6, RFC 8446 4.4.2), nor, in TLS 1.3, an
    /// encrypted handshake record beside its Finished (nDPI's android.pcap
    /// 25 and signal.pcap 8, judged in session 88: a bare Finished, told
    /// of a slow client-certificate signer).
    pub fn client_signed_nothing(&self) -> bool {
        let mut answered = false;
        for m in self
            .messages
            .iter()
            .filter(|m| m.direction == Direction::ClientToServer)
        {
            match m.message {
                TlsMessage::Certificate
                | TlsMessage::CertificateVerify
                | TlsMessage::EncryptedHandshake
                | TlsMessage::HandshakeNotCaptured => return false,
                TlsMessage::ClientKeyExchange
                | TlsMessage::Finished
                | TlsMessage::FinishedEncrypted => answered = true,
                _ => {}
            }
        }
        answered
    }

    /// The server's handshake message right after its Certificate: a
    /// stapled CertificateStatus, or the next message of a TLS 1.2 flight
    /// without one (ServerKeyExchange, CertificateRequest,
    /// ServerHelloDone). None when no Certificate was seen, or nothing
    /// after it.
    pub fn after_certificate(&self) -> Option<&TlsMessageRef> {
        self.messages
            .iter()
            .filter(|m| m.direction == Direction::ServerToClient)
            .skip_while(|m| m.message != TlsMessage::Certificate)
            .nth(1)
    }
}

/// The session ID a ClientHello offered back, as its server issued it
/// earlier in the capture (`TlsReport::session_id_issued`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IssuedSessionId {
    /// The connection (`tcp.stream`) whose ServerHello issued it.
    pub stream: u64,
    /// That ServerHello's frame.
    pub frame: u64,
    /// How long before this ClientHello the session was the client's
    /// to offer: from when that handshake ended (the server's Finished
    /// captured).
    pub age_ns: i64,
}

/// The same client's other connections whose data its timer re-sent
/// unanswered in the same time (`ConnectionFacts::stalled_elsewhere`,
/// `Detail::RtoStall::stalled_elsewhere`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StalledElsewhere {
    /// How many other server addresses.
    pub servers: u32,
    /// One of them: its `tcp.stream` and the first re-send there.
    pub example: Option<(u64, u64)>,
    /// An earlier connection to this one's own server that stalled so:
    /// its `tcp.stream` and first re-send.
    pub same_server: Option<(u64, u64)>,
}

/// What followed a lost segment its sender's timer repaired
/// (`Detail::RtoStall::followed`): fast retransmit needs three duplicate
/// ACKs (RFC 5681), each drawn by a later segment arriving.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LossFollowers {
    /// The sender's data segments beyond the lost one, after its first
    /// copy and before the timer's re-send.
    pub segments: u32,
    /// The receiver's duplicate ACKs of the hole in that time (pure ACKs
    /// acknowledging up to the lost segment, after the first that did).
    pub duplicate_acks: u32,
    /// The first of those duplicates (its frame): the segment after the
    /// hole arrived.
    pub first_duplicate: Option<u64>,
    /// Nothing followed it and the receiver had acknowledged everything
    /// before it by the re-send: it was alone in flight when the timer
    /// was last re-armed. Linux's tail-loss probe for one segment in
    /// flight waits two round trips plus the 200 ms minimum RTO (for the
    /// receiver's delayed ACK), capped at the RTO: about as long as the
    /// timer, SACK or not.
    pub alone_in_flight: bool,
    /// An earlier re-send of the lost bytes in that time (its frame),
    /// lost too: the timer repaired what a fast re-send had not.
    pub resent_before: Option<u64>,
}

/// Nothing reached any client while a client's SYNs (or data) went
/// unanswered, though it re-sent to another server meanwhile
/// (`Detail::SynRetransmit::nothing_heard`,
/// `Detail::Retransmission::nothing_heard`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NothingHeard {
    /// The last packet the capture saw reach any client before the first
    /// SYN.
    pub last_frame: u64,
    /// How long before that SYN it came (ms).
    pub before_ms: f64,
    /// The client's newest re-send to another server by the last SYN:
    /// its `tcp.stream` and frame.
    pub resent: (u64, u64),
}

/// A TLS session a server had issued a client (`TlsReport::session_held`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeldSession {
    /// The connection (`tcp.stream`) it was issued on.
    pub stream: u64,
    /// The frame that issued it: the NewSessionTicket's, or the
    /// ServerHello's that gave its session ID.
    pub frame: u64,
    /// A ticket (RFC 5077), not a session ID in the server's cache.
    pub ticket: bool,
    /// Its server asked the client for a certificate on that connection
    /// (CertificateRequest, readable before TLS 1.3).
    pub certificate_requested: bool,
    /// How long before this ClientHello the client could offer it back:
    /// from when its handshake ended (the server's Finished captured).
    pub age_ns: i64,
    /// The client was seen offering sessions back to other servers: it
    /// keeps them, but not this one (what its cache is keyed by, a ticket
    /// used once, a new session object per request).
    pub offers_elsewhere: bool,
}

/// One TLS handshake message or record, and the frame that completed it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TlsMessageRef {
    /// Frame that completed it.
    pub frame: u64,
    /// Frame where the record carrying it began (differs when it spans segments).
    pub first_frame: u64,
    /// Who sent it.
    pub direction: Direction,
    /// What it is.
    pub message: TlsMessage,
    /// Its size in bytes.
    pub bytes: u32,
    /// The capture's snap length cut the record: the message is named by
    /// its type byte, its fields were not seen.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub cut: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
/// The TLS session of a connection, as far as the capture shows it.
pub struct TlsReport {
    /// Negotiated version, e.g. "TLS 1.3" (None if no ServerHello was seen).
    pub version: Option<TlsVersion>,
    /// The version was not read from the ServerHello (a snap length cut
    /// it) but from the records that followed it: encrypted handshake
    /// records make TLS 1.3; a client key exchange or an encrypted
    /// Finished in a handshake record make the server record layer's
    /// version (TLS 1.2 and older).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub version_inferred: bool,
    /// Negotiated cipher suite name.
    pub cipher: Option<String>,
    /// Server name (SNI) the client asked for.
    pub sni: Option<String>,
    /// ALPN protocols the client offered.
    pub alpn: Vec<String>,
    /// The client offered Next Protocol Negotiation (ALPN's forerunner,
    /// offered by browsers and HTTP libraries for SPDY and HTTP until
    /// 2016): a web client.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub npn_offered: bool,
    /// Versions the client offered (supported_versions, GREASE removed).
    pub offered_versions: Vec<TlsVersion>,
    /// Groups the client sent key shares for.
    pub client_key_shares: Vec<String>,
    /// The group of the server's key share.
    pub server_key_share: Option<String>,
    /// Size of the ClientHello message.
    pub client_hello_bytes: u32,
    /// Frames the ClientHello spans.
    pub client_hello_frames: Vec<u64>,
    /// Whether the session was resumed (None: not seen).
    pub resumed: Option<bool>,
    /// The client offered a PSK (TLS 1.3 resumption).
    pub psk_offered: bool,
    /// The client offered a session ticket (TLS 1.2).
    pub session_ticket_offered: bool,
    /// The client offered a session ID the same server issued earlier in
    /// the capture, or one its ServerHello echoed to resume it (TLS 1.2
    /// and older, no ticket offered): a resumption by session ID.
    pub session_id_offered: bool,
    /// A session (TLS 1.2 and older: a ticket or a session ID) the same
    /// server had issued this client for the same name, on an earlier
    /// connection of the capture within 5 minutes before this ClientHello,
    /// which offered nothing back (`resumption_missed`, the client's
    /// side). Not in the JSON: the finding cites it.
    #[serde(skip)]
    pub session_held: Option<HeldSession>,
    /// Where the capture showed the server issue the session ID this
    /// ClientHello offered back (`session_id_offered`). Not in the JSON:
    /// the finding cites it.
    #[serde(skip)]
    pub session_id_issued: Option<IssuedSessionId>,
    /// The client asked the server to staple its certificate's OCSP
    /// status (status_request or status_request_v2).
    pub status_request_offered: bool,
    /// The client offered an ECDHE suite (or TLS 1.3's): a server could
    /// have chosen a forward-secret key exchange over RSA's.
    pub ecdhe_offered: bool,
    /// The server's certificates as its Certificate message sent them
    /// (TLS 1.2 and older: TLS 1.3 encrypts it); null where not read.
    pub server_certificates: Option<ServerCertificates>,
    /// The server stapled a status (a CertificateStatus in its flight:
    /// true) or its flight went on without one (false); null when the
    /// capture cannot tell: TLS 1.3 (the status rides in the encrypted
    /// Certificate), no certificate sent (resumed), or the server's
    /// flight not seen through.
    pub status_stapled: Option<bool>,
    /// The ClientHello offered 0-RTT early data.
    pub early_data_offered: bool,
    /// 0-RTT data was sent and the server accepted it (true) or not
    /// (false), inferred from the client's EndOfEarlyData; null when no
    /// early data was sent or the second flight was not seen.
    pub early_data_accepted: Option<bool>,
    /// The early data was HTTP/2's connection preface alone, by its size
    /// (no request rode in it).
    pub early_data_preface_only: bool,
    /// The server answered with a HelloRetryRequest.
    pub hello_retry_request: bool,
    /// TLS False Start (RFC 7918): in a full TLS 1.2 (or older) handshake
    /// the client sent application data with its Finished, before the
    /// server's; the handshake took 1 round trip for it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub false_start: bool,
    /// ClientHello to the client's Finished, on the client's clock.
    pub handshake_ms: Option<f64>,
    /// `handshake_ms` in RTTs.
    pub handshake_rtts: Option<f64>,
    /// Round trips it needs at best for what was negotiated.
    pub ideal_handshake_rtts: Option<f64>,
    /// Records of the server's first flight (TLS 1.3: encrypted) with sizes.
    pub server_flight_bytes: u32,
    /// Handshake messages and records, in order (at most 64).
    pub messages: Vec<TlsMessageRef>,
    /// The plaintext preamble TLS started after (`http_connect`, `socks5`,
    /// `smtp_starttls`, `postgres_sslrequest`, ...); null when the
    /// connection's first client bytes were the ClientHello.
    pub started_after: Option<PreambleKind>,
}

/// A connection that began with a hello in TLS's format (a ClientHello,
/// perhaps in SSL 2.0's) and then carried, either way, bytes that were no
/// TLS records before the client's Finished: a protocol that mimics TLS's
/// hello (Skype's), or a server that does not speak TLS answering one.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TlsLookalike {
    /// The hello's first frame.
    pub hello_frame: u64,
    /// The frame whose bytes were no TLS record.
    pub not_tls_frame: u64,
    /// The version the server's hello named, if one parsed (what a
    /// dissector reads as the TLS version).
    pub version: Option<TlsVersion>,
}

/// How a connection ended (as far as the capture shows).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Ending {
    /// Closed by FINs both ways.
    Fin,
    /// Closed by a RST.
    Reset,
    /// Still open at the end of the capture.
    Open,
    /// No packets for longer than the idle timeout.
    Idle,
    /// The server answered the SYN with RST (port closed, or refused by a
    /// firewall): no handshake, and nothing was lost.
    Refused,
    /// An ICMP error answered the SYN (host or port unreachable,
    /// administratively prohibited, TTL exceeded) and the server nothing:
    /// the connect failed on the way (Linux aborts it on the error).
    Unreachable,
}

/// A cause found by a detector (see docs/findings.md for every kind).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// One of the documented kinds, e.g. `nagle_hold`.
    pub kind: FindingKind,
    /// The connection's `tcp.stream`.
    pub stream: u64,
    /// Ledger phase the cost falls in (`tls_handshake`, `first_byte`,
    /// `transfer`, `tcp_handshake`), if any.
    pub phase: Option<Phase>,
    /// Wireshark frame numbers of the evidence (held segment, releasing ACK ...).
    pub frames: Vec<u64>,
    /// Time it cost (negative: time it saved).
    pub cost_ms: f64,
    /// `cost_ms` in RTTs.
    pub cost_rtts: Option<f64>,
    /// The part of the connection's latency excess (`excess_ms`) this
    /// finding accounts for: the ledger's excess is the sum of these plus
    /// `unexplained_ms`. Zero for costs outside the latency phases, for
    /// summaries (`tls_extra_rtt`) and for costs the ideal already counts
    /// (a HelloRetryRequest, a missed resumption).
    pub attributed_ms: f64,
    /// 0..1: how sure the signature is from this vantage.
    pub confidence: f64,
    /// What it found, as data: the words below are made from it.
    #[serde(skip)]
    pub detail: Detail,
    /// For people, in the connection's own terms. Empty until a renderer
    /// that shows it words the finding (`rttdoc_report::words::word`).
    pub explanation: String,
    /// The fix, in the terms of what this connection showed (also worded
    /// by the renderer).
    pub fix: String,
    /// A Wireshark display filter for the evidence.
    pub display_filter: String,
    /// The waits the cost is made of, each with the frames that bound it
    /// (empty for findings that are not waits: TFO outcomes, resumption).
    /// `cost_ms` is their sum; the causality rules in detect/causality.rs
    /// hold for every one of them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub waits: Vec<Wait>,
    /// Waits past the [`MAX_WAITS_LISTED`] in `waits` (a long connection's),
    /// counted and summed: then `cost_ms` is `waits`' sum plus their `ms`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unlisted_waits: Option<UnlistedWaits>,
    /// Set when nobody waited for what the finding found (a set-up the
    /// client made ahead of need): then `cost_ms` is 0 and `waits` empty,
    /// and this says what it would have cost.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unwaited: Option<Unwaited>,
}

impl Finding {
    /// A finding of `kind` on connection `stream` in `phase`, with no
    /// evidence, cost or words yet (the detector fills them), its display
    /// filter the connection's.
    pub fn new(kind: FindingKind, stream: u64, phase: Option<Phase>) -> Finding {
        Finding {
            kind,
            stream,
            phase,
            frames: Vec::new(),
            cost_ms: 0.0,
            cost_rtts: None,
            attributed_ms: 0.0,
            confidence: 0.9,
            detail: Detail::None,
            explanation: String::new(),
            fix: String::new(),
            display_filter: format!("tcp.stream eq {stream}"),
            waits: Vec::new(),
            unlisted_waits: None,
            unwaited: None,
        }
    }
}

/// A client's application that read the server's handshake flight late:
/// its receive window reopened (a window update: a pure ACK acknowledging
/// nothing new with a larger window, sent as the application read) long
/// after the flight arrived, and its answer left soon after that.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LateRead {
    /// The turn's wait (its `from_frame`).
    pub wait_from_frame: u64,
    /// The window update.
    pub update_frame: u64,
    /// From the flight's arrival to the read.
    pub before_ms: f64,
    /// From the read to the answer.
    pub after_ms: f64,
}

/// A client's SYNs held before the capture point (`Detail::SynRetransmit`):
/// its clock spaced them farther apart than the capture shows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SynsHeld {
    /// The client's clock rate (Hz, its SYNs over the capture); None
    /// where the capture does not tell it, the waits then timed at the
    /// fastest rate a TCP clock ticks (1 kHz): the least they were.
    pub hz: Option<u32>,
    /// The timer's waits by that clock (ms, its SYNs' TSvals): the cost,
    /// a wait being timed on the clock of the host that waited.
    pub client_ms: f64,
    /// The same waits as captured (ms).
    pub captured_ms: f64,
    /// The SYN-ACK that answered the first SYN, where it was captured
    /// sooner after the last one than the server's side of the path
    /// could bring an answer to that: nothing was lost.
    pub answered_first: Option<u64>,
}

/// What a finding found, as data: the numbers and names its explanation
/// and fix are worded from. Detectors fill it; renderers word it
/// (`rttdoc_report::words`), so nothing is formatted for people unless an
/// output shows it.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Detail {
    /// No detail (a finding built by hand, e.g. in a test).
    #[default]
    None,
    /// A Nagle hold, a delayed-ACK stall or a write-write-read.
    Nagle {
        /// Whose segments were held.
        sender: Direction,
        /// The first held segment.
        held_frame: u64,
        /// The ACK that released it.
        ack_frame: u64,
        /// The sender's earlier sub-MSS segment that ACK acknowledged:
        /// what Nagle waited for.
        armed_frame: u64,
        /// That segment's payload bytes.
        armed_bytes: u32,
        /// What the first hold cost: its silence, or, released by the
        /// server's handshake flight (`released_by_handshake`), the round
        /// trip from that flight's leaving to the held rest's arrival.
        first_silence_ms: f64,
        /// How long the receiver delayed that ACK.
        ack_delay_ms: f64,
        /// How many holds the detector counted.
        holds: u32,
        /// The connection's application protocol, when its first bytes
        /// told it (the fix depends on it).
        protocol: Option<AppProtocol>,
        /// Every hold was of the client's first data, behind the last
        /// small segment of its TLS handshake (its Finished): a write the
        /// library made, which no way of writing the request avoids.
        behind_handshake: bool,
        /// Every hold was of a request's rest behind the client's own TLS
        /// handshake record, released by the server's handshake flight
        /// (its Finished) acknowledging that record: the cost is the round
        /// trip from that flight's leaving to the rest's arrival.
        released_by_handshake: bool,
        /// The sender's bytes and the span they took, when the stalls paced
        /// it (a quarter of the span or more), for the throughput sentence.
        paced: Option<Pacing>,
        /// Every held segment's bytes were sent again and never
        /// acknowledged before the connection ended, or before the
        /// sender's application let it go (its FIN, closed for good): the
        /// holds delayed nothing anyone received (cost 0).
        undelivered: bool,
    },
    /// The first flight waited for ACKs.
    Initcwnd {
        /// Bytes of the flight.
        flight_bytes: u32,
        /// Bytes per full segment.
        mss: u32,
        /// The first pause for ACKs.
        first_pause_ms: f64,
        /// The ACK that ended it.
        first_ack_frame: u64,
        /// Bytes in flight when it began: the window the sender had.
        window_bytes: u32,
        /// The flight was the TLS handshake's.
        in_tls_handshake: bool,
        /// Whose flight: the server's first, or the client's after it
        /// (its certificate, key exchange and Finished).
        sender: Direction,
    },
    /// The server answered a flight of the TLS handshake late.
    HandshakeThinkTime {
        /// Its wait before the ServerHello (or a HelloRetryRequest).
        hello_ms: f64,
        /// Its waits before its later flights: a full TLS 1.2 handshake's
        /// Finished (after the client's key exchange: an RSA key
        /// exchange's decryption is there), the ServerHello that follows a
        /// HelloRetryRequest.
        later_ms: f64,
        /// The longest pause inside a flight of the server's that nothing
        /// of the client's released: its work in the middle of the flight
        /// (a TLS 1.2 server signing its ServerKeyExchange after writing
        /// its certificate), or a segment lost before the capture point
        /// that its timer re-sent. Part of the cost, besides `hello_ms`
        /// and `later_ms`.
        flight_pause: Option<FlightPause>,
        /// A full TLS 1.2 (or older) handshake without a ServerKeyExchange:
        /// the RSA key exchange, whose secret the server decrypts with its
        /// private key before its Finished.
        rsa_key_exchange: bool,
        /// The handshake resumed a session: no certificate was signed.
        resumed: bool,
        /// Its ServerKeyExchange (TLS 1.2 and older, ECDHE or DHE), read:
        /// the server's key exchange and the key that signed it, what its
        /// first flight cost it.
        server_key: Option<rttdoc_wire::tls::ServerKeyExchange>,
    },
    /// The client answered the server's handshake flight late.
    ClientThinkTime {
        /// Turns of the handshake it answered late.
        turns: u32,
        /// The longest wait.
        longest_ms: f64,
        /// A turn whose application read the flight late, as its window
        /// update shows, and answered soon after reading.
        late_read: Option<LateRead>,
        /// The handshake resumed a session: the client verified no
        /// certificate, so its time went elsewhere (a busy CPU or event
        /// loop, its key exchange).
        resumed: bool,
        /// The key exchange was one that costs many times x25519's.
        costly_key_exchange: Option<CostlyKeyExchange>,
        /// A TLS 1.2 (or older) full handshake in which the server sent
        /// no certificate (a PSK or anonymous suite): the client had
        /// nothing to verify.
        no_certificate: bool,
        /// The client offered to resume a session and the server gave a
        /// full handshake (`resumption_missed`): resumption was the
        /// server's to grant.
        resumption_refused: bool,
        /// How many connections to other servers the client opened during
        /// its slow turns, where the capture shows its dials (it keeps
        /// name lookups and the client's dials to other servers): with
        /// none, no check of the certificate went online on a connection
        /// of its own (a revocation check, an intermediate's fetch).
        dialled_during: Option<u32>,
        /// Its answer carried no certificate of its own
        /// (`TlsReport::client_signed_nothing`): no client-certificate
        /// signature was part of its turn.
        signed_nothing: bool,
    },
    /// Turns of a plaintext preamble before TLS (a proxy's CONNECT, a
    /// STARTTLS dialog, a database's SSL request) waited on one side's
    /// work: the server's (`server_think_time`: its greeting, its answers)
    /// or the client's (`client_think_time`: its next message, the
    /// ClientHello last).
    PreambleThinkTime {
        /// Which preamble.
        preamble: PreambleKind,
        /// The wait for the greeting of a server that speaks first (one of
        /// `turns`), 0 when none.
        greeting_ms: f64,
        /// Turns that waited.
        turns: u32,
        /// The longest wait.
        longest_ms: f64,
    },
    /// Exchanges waited on the server.
    ExchangeThinkTime {
        /// The wait for the greeting of a server that speaks first
        /// (counted among `slow` as exchange 0), 0 when none.
        greeting_ms: f64,
        /// Exchanges that waited on the server.
        slow: u32,
        /// Exchanges on the connection.
        exchanges: u32,
        /// The wait that counts as think time here.
        threshold_ms: f64,
        /// The longest wait.
        longest_ms: f64,
        /// 1-based number of the slowest exchange (0: the greeting).
        longest_exchange: u32,
        /// That exchange's request, when it was read (an HTTP request
        /// line, a text protocol's command: `QUIT`).
        longest_label: Option<String>,
        /// The intermediary a slow answer's HTTP/1.x head named (`Via:
        /// 1.1 varnish (Varnish/7.1)`, `X-Cache: Miss from cloudfront`,
        /// `CF-Cache-Status: MISS`), when one did: the server is a proxy
        /// or a CDN, and the wait holds its fetch from the origin.
        via: Option<String>,
        /// The server's own calls while the slowest exchange waited (its
        /// host's other connections, begun and answered within the
        /// wait), when the capture holds them and none of them was
        /// certainly this request's forwarding (that is
        /// `upstream_wait`'s): the wait holds their time.
        host_calls: Option<HostCalls>,
        /// The application protocol the connection was read as (SSH:
        /// its server's turns in the key exchange are cryptography, not a
        /// handler; nDPI's mptcp-v0.pcap 1, judged in session 86).
        protocol: Option<AppProtocol>,
        /// On an SSH connection, the slow exchanges that repeated the one
        /// beside them (a request of the same size answered with one of
        /// the same size: a password refused and tried again, each
        /// refusal held by the server's failed-login delay), how many and
        /// their time (ms).
        retried: Option<(u32, f64)>,
    },
    /// A TCP Fast Open outcome.
    Tfo {
        /// What became of the attempt.
        outcome: TfoOutcome,
        /// Bytes the SYN carried.
        syn_data_bytes: u32,
        /// The server handed out a cookie.
        server_sent_cookie: bool,
    },
    /// A resumption, or one missed.
    Resumption {
        /// A session before TLS 1.3, where resuming saves a round trip (not
        /// when the full handshake used False Start: it took one round trip
        /// too).
        round_trip: bool,
        /// The version the server chose.
        version: Option<TlsVersion>,
        /// A resumption no request followed on the connection: nothing
        /// waited for the handshake, so nothing was saved (a browser's
        /// connection opened ahead of need and closed unused).
        unused: bool,
        /// How long the first request left after the handshake let it,
        /// where that was more than a client's turnaround: the client had
        /// no request waiting, and a full handshake's extra round trip
        /// would have ended in that idle time (0 when it left at once).
        idle_ms: f64,
        /// A resumption before TLS 1.3 whose client was seen false
        /// starting a full handshake earlier in the capture: a full one
        /// would have taken it one round trip too.
        false_start: bool,
        /// A resumption before TLS 1.3 saving a round trip, whose client
        /// was not seen either way, on a session a browser would have
        /// false started in full (ECDHE, an AEAD suite, a protocol chosen):
        /// for a browser the round trip is not what it saved.
        false_start_possible: bool,
        /// No round trip was measured (behind a relay that answered the
        /// TCP handshake itself): how long the round trip saved or lost
        /// was is not known, so neither is the cost.
        rtt_unknown: bool,
        /// A missed resumption on the client's side: the server had issued
        /// it this session for the same name earlier, and the ClientHello
        /// offered nothing back.
        not_offered: Option<HeldSession>,
        /// A missed resumption on the server's side: the session ID the
        /// client offered back and the server refused, where the capture
        /// showed the server issue it.
        refused_id: Option<IssuedSessionId>,
    },
    /// 0-RTT early data, and whether the server took it.
    EarlyData {
        /// Whether the server took it (None: not seen).
        accepted: Option<bool>,
        /// It was HTTP/2's connection preface alone (by its size): no
        /// request rode in it, so taking it saved nothing.
        preface_only: bool,
        /// Taken, but the request's answer left only after the client's
        /// Finished reached the server (this frame, the Finished): the
        /// server held the request for the handshake, and nothing was
        /// saved.
        held_until: Option<u64>,
        /// Taken, and the answer left later after the client's Finished
        /// reached the server than the Finished came after the request:
        /// whether the server held the request for the handshake or
        /// worked on it from its arrival cannot be told, nor what 0-RTT
        /// saved.
        hold_unknown: bool,
    },
    /// A non-idempotent request in 0-RTT early data.
    EarlyDataUnsafe {
        /// The request line as sent (`POST /api/orders`).
        request: String,
        /// The request's method.
        method: String,
        /// Whether the server took the early data.
        accepted: Option<bool>,
    },
    /// The server asked for another key share.
    HelloRetryRequest {
        /// Groups the client sent shares for.
        offered: Vec<String>,
        /// The group the server asked for, if seen.
        wanted: Option<String>,
    },
    /// A zero window held the peer back.
    ZeroWindow {
        /// Who advertised the zero window.
        receiver: Direction,
        /// How many times.
        episodes: u32,
    },
    /// The sender waited at the receiver's window edge.
    RwndLimited {
        /// Whose segments waited.
        sender: Direction,
        /// The first segment that filled the window.
        first_full_frame: u64,
        /// The ACK that opened it.
        first_open_frame: u64,
        /// How many times it happened.
        stalls: u32,
    },
    /// An HTTP/2 sender waited for its receiver's flow-control credit.
    H2WindowLimited {
        /// Whose DATA frames waited.
        sender: Direction,
        /// The stream of the first stall.
        stream: u32,
        /// The first segment that ended a DATA frame which spent the
        /// credit.
        first_full_frame: u64,
        /// The WINDOW_UPDATE (or SETTINGS) that gave enough back.
        first_update_frame: u64,
        /// The sender's next DATA frame's first segment.
        first_resumed_frame: u64,
        /// How many stalls.
        stalls: u32,
        /// The credit the receiver granted each stream (its
        /// SETTINGS_INITIAL_WINDOW_SIZE; 65,535 when it sent none).
        stream_window: u32,
        /// Of the stalls, those on the connection's credit (the stream's
        /// was larger).
        connection_stalls: u32,
    },
    /// Data sent again.
    Retransmission {
        /// Who sent again.
        sender: Direction,
        /// Segments sent again (each re-send counted).
        segments: u32,
        /// How many segments those re-sends carried (by sequence number):
        /// fewer than `segments` where one was re-sent several times, its
        /// timer backing off.
        distinct_segments: u32,
        /// Of those, re-sends whose loss the capture cannot show: none of
        /// the receiver's acknowledgments around them are in it (a capture
        /// of data packets only). No wait is counted for them.
        unconfirmed: u32,
        /// Times the sender, with more to send, waited on the receiver's
        /// window while a hole held its left edge, until the repair was
        /// acknowledged.
        window_stalls: u32,
        /// Of `segments`, re-sends past the segments the analysis keeps
        /// of a connection (its first 2048): counted and cited (the first
        /// 40), their waits not measured.
        past_timeline: u32,
        /// Of `segments`, re-sends whose original the capture does not
        /// hold (lost between the sender and the capture point, or missed
        /// by the capture): cited alone.
        originals_unseen: u32,
        /// Every segment re-sent was first sent after the receiver's FIN
        /// or RST (that frame) was captured: writes into a connection the
        /// receiver had closed, which nothing acknowledges; not loss on
        /// the path (nDPI's webex.pcap 34: 180 bytes written after the
        /// server's TLS alert and FIN, re-sent for 30 s).
        into_closed: Option<u64>,
        /// Of those, some were first sent before that close was captured:
        /// the write crossed the receiver's close on the way (the receiver
        /// closed with it in flight), and the timer's silence began after
        /// the close (nDPI's skype.pcap 81, judged in session 86: told
        /// the client wrote after the server had closed).
        crossed_close: bool,
        /// One segment was re-sent three times or more, copy after copy
        /// lost: no random loss (three in a row at a few percent is one in
        /// tens of thousands), a black hole for the flow (nDPI's skype.pcap
        /// 1: a ClientHello and its twelve copies over 70 s, judged in
        /// session 85, told to find a lossy link).
        black_hole: bool,
        /// The client's re-sends went out while nothing reached any
        /// client from before the first lost original to the last re-send,
        /// though it re-sent to other servers too: its own side of the
        /// network was down (nDPI's skype.pcap 69, judged in session 86,
        /// told to find a lossy link).
        nothing_heard: Option<NothingHeard>,
    },
    /// Segments the path delivered after segments their sender sent
    /// after them.
    Reordering {
        /// Whose segments.
        sender: Direction,
        /// Segments overtaken (the sender's clocks show each left before
        /// the segment that passed the capture point ahead of it).
        segments: u32,
        /// The longest any of them came after the segment that jumped its
        /// hole, in milliseconds.
        longest_ms: f64,
        /// The sender's re-sends of bytes whose originals came late:
        /// needless (its duplicate ACKs or timer took the hole for a loss).
        needless_resends: u32,
    },
    /// Full-size segments a narrow hop could not carry.
    PathMtu {
        /// Whose segments.
        sender: Direction,
        /// Bytes of data in the first segment that could not pass.
        full_size: u32,
        /// Copies of it sent at that size (before a smaller one).
        copies: u32,
        /// Bytes of data in the first smaller copy, when the sender sent
        /// one.
        smaller: Option<u32>,
        /// The hop's MTU its ICMP error named.
        hop_mtu: Option<u32>,
        /// An ICMP "fragmentation needed" or "packet too big" quoting the
        /// sender's segments is in the capture.
        icmp: bool,
        /// Captured past the narrow hop (the copies it dropped never
        /// reached the capture): the bytes of the hole they left.
        hole: Option<u32>,
        /// The capture was taken above the sender's segmentation offload
        /// (its segments larger than the MSS are in it): the re-send
        /// after the router's ICMP shows as the block TCP handed down, of
        /// the same size, not as the smaller packets it left as.
        offload: bool,
    },
    /// A new connection set up where an earlier one to the same server,
    /// ended shortly before, could have carried the request.
    ConnectionNotReused {
        /// The earlier connection (`tcp.stream`).
        previous_stream: u64,
        /// Its first FIN or RST.
        close_frame: u64,
        /// The server sent that FIN or RST (else the client did).
        closed_by_server: bool,
        /// It was a RST.
        reset: bool,
        /// Requests the earlier connection carried.
        previous_requests: u32,
        /// From its last answer to its close, on the closer's clock.
        idle_before_close_ms: f64,
        /// From its last answer to this connection's SYN: how long the
        /// client went without asking.
        pause_ms: f64,
        /// This connection's set-up carried a TLS handshake.
        tls: bool,
        /// That TLS handshake resumed a session.
        resumed: bool,
        /// The connection carried HTTP (an HTTP/1.x request line, or
        /// TLS offering `h2` or `http/1.1`): the fix names HTTP's
        /// keep-alive settings.
        http: bool,
        /// The earlier connection's last request asked for the close.
        requested_close: Option<RequestedClose>,
        /// The earlier connection's last answer said it would close (its
        /// `Connection: close`, or HTTP/1.0 without keep-alive).
        answered_close: Option<RequestedClose>,
        /// Of the set-up, how long the client itself waited between the
        /// TCP handshake and its ClientHello beyond a client's turnaround
        /// (ms; 0 when it did not): its own time, inside the cost (a
        /// client that waits for a sibling's session to resume it).
        hello_held_ms: f64,
        /// Other connections to this server the client closed with the
        /// earlier one (within 20 ms), each idle for another time: its
        /// connections torn down at once, not an idle timeout.
        closed_together: u32,
        /// Other connections to this server the client closed with the
        /// earlier one (within 20 ms), however long each had idled.
        closed_at_once: u32,
        /// Connections to other servers the client closed with the
        /// earlier one (within 5 ms), each idle for another time: the
        /// application's teardown of its connections wherever they went.
        closed_elsewhere: u32,
        /// The client closed the earlier connection, but its server closes
        /// connections idle for less than the client's pause on its own:
        /// the stream where it did, and after how long an idle (ms). Kept,
        /// the earlier connection would have been closed before the client
        /// asked again.
        server_idle_limit: Option<(u64, f64)>,
    },
    /// A request waited for the redirect that sent its client to it.
    HttpRedirect {
        /// The request that followed it (1-based, on this connection).
        exchange: u32,
        /// The `tcp.stream` that carried the redirect (this one's own when
        /// the follow-up came on the same connection).
        redirect_stream: u64,
        /// The redirected request's name ("GET /docs").
        redirected_request: Option<String>,
        /// The redirect's status (301, 302, 303, 307, 308).
        status: u16,
        /// Its `Location`, as the server wrote it (its first 200
        /// characters).
        location: Box<str>,
        /// The `Location` named the redirected request's own origin
        /// (scheme, host and port): a path's redirect.
        same_origin: bool,
        /// It sent a request made in the clear to `https://`.
        to_https: bool,
        /// The follow-up opened a connection of its own after the
        /// redirect came (its name lookup or SYN began the follow-up).
        new_connection: bool,
        /// The follow-up was known by its whole URL (false: by the server
        /// name its TLS ClientHello asked for, its request encrypted).
        by_url: bool,
        /// From the redirected request to the redirect's arrival (its
        /// round trip and the server's time).
        answer_ms: f64,
        /// Of that, the server's own work on the request (beyond its side
        /// of the path): not the redirect's cost, the request's.
        server_ms: f64,
        /// From the redirect's arrival to the follow-up's start, on the
        /// capture's clock: the client's turnaround.
        turnaround_ms: f64,
        /// Of `turnaround_ms`, the client's own delay beyond a client's
        /// turnaround, not counted in the cost (a client follows the
        /// moment it has read the status line).
        slow_follow_ms: f64,
        /// How many redirects to the same URL its client had followed in
        /// the 10 s before: sent there again and again, it went round a
        /// loop.
        followed_before: u32,
        /// The follow-up's own answer redirected again: its frame and
        /// `Location` (a chain: `http://a` to `http://www.a` to
        /// `https://www.a`; the link should name the chain's end).
        redirected_again: Option<(u64, Box<str>)>,
        /// The redirect set a cookie whose value its `Location` carries:
        /// a check minted for this visitor, no moved page.
        per_visitor: bool,
        /// The redirect said it may not be kept (`Cache-Control`
        /// `no-store`, `no-cache`, `max-age=0`).
        uncacheable: bool,
        /// It sent the client back to the page that asked for the
        /// redirected URL (that request's `Referer`): a loop through the
        /// page.
        back_to_referrer: bool,
        /// The redirected request was another site's: its `Referer` a
        /// page of another site, and it asked for no page (an ad's or
        /// analytics tag's image, script or frame): the redirect is that
        /// service's own.
        third_party: bool,
        /// The redirected request carried a `Referer`: a link or a page
        /// led there. Without one the URL was typed or bookmarked, or a
        /// program asked (wget, curl, an app): no link to update.
        referred: bool,
    },
    /// A request waited for the authentication challenges it answered.
    HttpAuthChallenge {
        /// The request that answered them (1-based, on this connection).
        exchange: u32,
        /// The `tcp.stream` of the first challenged request (this one's
        /// own when the client answered on the same connection).
        challenged_stream: u64,
        /// The first challenged request's name ("GET /report").
        challenged_request: Option<String>,
        /// How many challenges came before the request was sent as it
        /// was served: 1, or 2 for NTLM's handshake.
        challenges: u32,
        /// The challenges' status: 401 (the server's) or 407 (a proxy's).
        status: u16,
        /// The scheme the last challenge offered first.
        offered: AuthScheme,
        /// The scheme of the credentials this request sent.
        answered_with: Option<AuthScheme>,
        /// A challenged request's connection was not the one that
        /// answered: the client opened another (the server closed the
        /// one it challenged, or the client would not reuse it).
        new_connection: bool,
        /// From each challenged request to its challenge's arrival,
        /// summed: the round trips and the server's (the proxy's) time.
        answer_ms: f64,
        /// From the last challenge's arrival to this request, on the
        /// capture's clock: the client's turnaround.
        turnaround_ms: f64,
    },
    /// A browser's request waited for its CORS preflight.
    CorsPreflight {
        /// The request the preflight let go (1-based, on this connection).
        exchange: u32,
        /// The `tcp.stream` that carried the preflight (this one's own
        /// when the request came on the same connection).
        preflight_stream: u64,
        /// The preflight's name ("OPTIONS /items/1").
        preflight_request: Option<String>,
        /// The method it asked permission for
        /// (`Access-Control-Request-Method`).
        method: Box<str>,
        /// The headers it asked permission for
        /// (`Access-Control-Request-Headers`, its first 120 characters):
        /// what made the request need a preflight.
        request_headers: Option<Box<str>>,
        /// The preflight's answer's status (200-299).
        status: u16,
        /// The answer's `Access-Control-Max-Age`, in seconds: how long
        /// the browser may skip the next preflight for this URL (none: 5
        /// s).
        max_age_s: Option<u32>,
        /// The request came on another connection than its preflight
        /// (Chromium sends a credentialed request's preflight without
        /// credentials, on a connection of its own).
        other_connection: bool,
        /// The request's connection was opened after the preflight's
        /// answer came: its set-up is in the wait.
        new_connection: bool,
        /// From the preflight to its answer's arrival: its round trip and
        /// the server's time.
        answer_ms: f64,
        /// From the answer's arrival to the request, on the capture's
        /// clock: the browser's turnaround (a new connection's set-up
        /// included).
        turnaround_ms: f64,
    },
    /// A name lookup's query went unanswered until the client's resolver
    /// sent it again.
    DnsQueryLost {
        /// The name asked.
        name: Box<str>,
        /// The record type of the first lost query (1: A, 28: AAAA ...).
        qtype: u16,
        /// The resolver it went to.
        resolver: IpAddr,
        /// The resolver the resend went to, when another (the next
        /// `nameserver`).
        resent_to: Option<IpAddr>,
        /// Its answer came after all, after the resend left: this long
        /// after the query (the resolver was slow, not deaf).
        late_ms: Option<f64>,
        /// Queries that went unanswered and were sent again.
        lost: u32,
        /// The first lost query was one of two the resolver sent together
        /// from one socket (glibc's A and AAAA), and the other was answered.
        paired: bool,
        /// The first lost query's wait, from its send to its resend: the
        /// resolver's timeout.
        timeout_ms: f64,
    },
    /// A QUIC server did not speak the client's first version.
    QuicVersionNegotiation {
        /// The version the client began in.
        offered: u32,
        /// The versions the server listed (at most 8).
        supported: Vec<u32>,
        /// The version the client began again in, when it did.
        chosen: Option<u32>,
    },
    /// A QUIC server asked the client to prove its address.
    QuicRetry {
        /// The token the client's Initial carried after the Retry, in
        /// bytes.
        token_len: u32,
    },
    /// A QUIC client's Initial went unanswered until it sent it again.
    QuicInitialLost {
        /// Initials sent unanswered before one was answered (or before
        /// the capture, or the client, gave up).
        unanswered: u32,
        /// Whether any was answered at all.
        answered: bool,
        /// The first resend's wait: the client's probe timeout.
        first_timeout_ms: f64,
        /// The probe carried only part of the ClientHello, the rest sent
        /// when the server's ACK of it came: that round trip.
        rest_after_ack_ms: Option<f64>,
        /// Never answered, the client opened this TCP connection
        /// (`tcp.stream`) to the same server instead: the wait ended at
        /// its SYN.
        tcp_instead: Option<u64>,
    },
    /// A QUIC server's first flight stopped at its anti-amplification
    /// limit.
    QuicAmplificationLimit {
        /// UDP payload bytes the client had sent when the server stopped.
        client_bytes: u64,
        /// What the server had sent by then.
        server_bytes: u64,
        /// What the server sent after the client's next datagram, before
        /// the client's Handshake packet: the rest of its flight.
        rest_bytes: u64,
    },
    /// The client connected to this address after trying another address
    /// of the same name that did not answer.
    AddressFallback {
        /// The address tried first (its first failed attempt).
        first: IpAddr,
        /// This connection's server address, tried next.
        to: IpAddr,
        /// Its connection (`tcp.stream`).
        first_stream: u64,
        /// Failed attempts in all.
        attempts: u32,
        /// The first was accepted after all, after this SYN (a Happy
        /// Eyeballs race lost).
        accepted_later: bool,
    },
    /// A name lookup asked names that did not resolve before the one that
    /// did (a search list).
    DnsSearchList {
        /// The name that resolved.
        name: Box<str>,
        /// The names asked before it, in order (the first 8).
        tried: Vec<Box<str>>,
        /// All of them; `tried` may hold fewer.
        names: u32,
        /// They were the name with search domains appended (a name with
        /// fewer dots than the resolver's `ndots`); else they were shorter:
        /// the name as written, asked before the search domain that made it
        /// resolve.
        appended: bool,
    },
    /// Retransmission timeouts.
    RtoStall {
        /// Who waited for its timer.
        sender: Direction,
        /// How many times.
        stalls: u32,
        /// The timer re-sent the same bytes three times or more: copy
        /// after copy went unanswered (a path, or a peer, dropping
        /// everything for a while), not a tail loss too short to trigger
        /// fast retransmit.
        unanswered: bool,
        /// The client's re-sends of its first data, the server silent
        /// since its SYN-ACK: the path may have dropped them, or the
        /// server's listener not taken the connection yet (its accept
        /// queue full, SYN cookies re-sending no SYN-ACK to show it).
        unopened: bool,
        /// Another of the client's connections received server data
        /// during the stall (its `tcp.stream` and that frame): the
        /// client's link was up, and what dropped this connection's
        /// packets did not drop all of the client's (a filter matching
        /// its flow or application, its server).
        heard_elsewhere: Option<(u64, u64)>,
        /// And a server acknowledged data the client sent on another of
        /// its connections after the stall began (that connection's
        /// `tcp.stream`, the acknowledgment's frame, and whether it was
        /// to this connection's server address and port): what the
        /// client sent got through elsewhere too, so its uplink was up.
        sent_elsewhere: Option<(u64, u64, bool)>,
        /// One side heard nothing of its peer's in the stall, though the
        /// capture saw the peer's packets pass: it re-sent data the peer
        /// had acknowledged long before. What was lost was everything
        /// toward it, past the capture point.
        deaf: Option<Deafness>,
        /// The client's FIN, when the last wait ran to it: its
        /// application gave up in the stall (not a timer's re-send).
        gave_up: Option<u64>,
        /// That close was an RST its kernel sent as its timer fired once
        /// more, a backoff interval after the last re-send (BSD's and
        /// macOS's `tcp_drop` after TCP_MAXRXTSHIFT, 12 re-sends): the
        /// kernel gave up, not the application (nDPI's skype.pcap 3,
        /// judged in session 85).
        kernel_gave_up: bool,
        /// Its kernel sent the bytes again after that FIN (the FIN queued
        /// behind them): copies went unanswered after the application let
        /// go, too.
        resent_after_giving_up: bool,
        /// The peer's first packet after the stall that acknowledged the
        /// re-sent bytes in sequence: a copy got through in the end, and
        /// the peer had held the connection all along (one that had lost
        /// it answers with a RST): not the peer, then, but the path.
        peer_held: Option<u64>,
        /// Nothing was lost: the re-sent bytes' original arrived after
        /// all, late, and the wait (its cost) was the time it was held
        /// beyond the round trip, not the timer's.
        held: Option<HeldOriginal>,
        /// The longest the connection was quiet (no packet either way)
        /// before the stall began, from its first packet (ms): a
        /// connection that had not been idle lost no NAT's or load
        /// balancer's mapping to idleness.
        quiet_before_ms: f64,
        /// What followed the first stall's lost segment before its timer
        /// fired: why no fast retransmit repaired it.
        followed: Option<LossFollowers>,
        /// With `unopened`: the same client's other connections whose
        /// data its timer re-sent unanswered in the same time: to several
        /// servers at once, no one listener's accept queue.
        stalled_elsewhere: Option<StalledElsewhere>,
        /// The stall's waits that began at a re-send which was lost too
        /// (ms): nothing was sent after that copy for a duplicate ACK or
        /// SACK block to reveal its loss, and no tail-loss probe follows
        /// a timeout, so only the timer repairs it, SACK or not.
        after_lost_copy_ms: f64,
        /// The client's stall while nothing reached any client, from
        /// before the first lost copy to the last re-send, though it
        /// re-sent to another server meanwhile: its own side of the
        /// network was down (as `Detail::Retransmission::nothing_heard`).
        nothing_heard: Option<NothingHeard>,
    },
    /// The SYN sent again.
    SynRetransmit {
        /// SYNs sent.
        syns: u32,
        /// The frame of the SYN-ACK that answered an earlier SYN before
        /// the last one was captured, when the client's ACK of the
        /// handshake echoes its TSval: it arrived, late, and nothing was
        /// lost (the path held it past the client's SYN timer).
        answered_late: Option<u64>,
        /// The frame of the SYN-ACK captured answering the first SYN
        /// before the client sent it again, when nothing says it arrived
        /// late: the SYN got through, and the SYN-ACK was lost between the
        /// capture point and the client (or its TCP did not take it).
        answer_lost: Option<u64>,
        /// That SYN-ACK was captured at the client's own host: it reached
        /// the host, and its TCP did not take it.
        answer_captured_at_client: bool,
        /// The SYN-ACK (frame) echoes the TSval of an earlier SYN than the
        /// last (that SYN's frame): the server kept that SYN (a server
        /// answers a SYN's copy echoing the one it keeps), so it was not
        /// lost nor dropped by a full queue; the server's answer to it
        /// was lost on its way back, or held.
        echoed_syn: Option<(u64, u64)>,
        /// The server's first and last SYN-ACK (frames), where it sent one
        /// for each SYN, all after the last, each within a second (its own
        /// SYN-ACK timer) of the one before: it answered every SYN, so
        /// none was lost and no queue was full; the first, or its answer,
        /// was held on the way past the client's timer.
        every_syn_answered: Option<(u64, u64)>,
        /// Nothing in the capture answered any of the SYNs (no SYN-ACK,
        /// RST or ICMP error): the connection never opened here.
        unanswered: bool,
        /// And the capture kept the clients' direction only (no SYN-ACK
        /// of any connection, while a client went on past its SYN
        /// elsewhere): what answered, if anything, it did not keep.
        one_way_capture: bool,
        /// Behind a relay that answered the SYN itself (a phone's VPN
        /// capture app, whose capture times are when it read each
        /// packet): the client's clock rate (Hz), and the timer's waits by
        /// it (ms, its SYNs' TSvals: the cost, a wait being timed on the
        /// clock of the host that waited) and as captured (ms): the relay,
        /// not the network, kept the handshake back.
        relay_client_clock: Option<(u32, f64, f64)>,
        /// Not behind a relay: the client's clock spaced its SYNs far
        /// more than the capture shows them, so the first reached the
        /// capture point long after it left (held on the client's side of
        /// it while its timer ran).
        held_before_capture: Option<SynsHeld>,
        /// Unanswered, the client gave up: its RST or FIN after the last
        /// SYN (its frame), and how long after that SYN (ms): its timer's
        /// last wait, waited too.
        gave_up: Option<(u64, f64)>,
        /// Unanswered and not given up, the capture went on after the last
        /// SYN no further than the client's timer's next re-send: the
        /// client was still waiting at the frame it had reached (its
        /// number), this long after that SYN (ms), waited too.
        still_waiting: Option<(u64, f64)>,
        /// Unanswered: how many other servers the client dialled within
        /// a second of its first SYN (a peer-to-peer client's peers, a
        /// crawler's, a scanner's): among many dials, one nothing
        /// answered held that dial only.
        dials_beside: u32,
        /// Unanswered: another of the client's connections received
        /// server data while its SYNs went out (that connection's
        /// `tcp.stream` and the frame, the newest by the last SYN): the
        /// client's link, and whatever it needs to reach the internet,
        /// worked; this address did not answer.
        heard_elsewhere: Option<(u64, u64)>,
        /// Unanswered, and nothing reached any client from before the
        /// first SYN to the last, though the client re-sent to another
        /// server meanwhile: its own side of the network was down, not
        /// this server.
        nothing_heard: Option<NothingHeard>,
    },
    /// The server answered the client's SYN with an ACK of another
    /// connection on the same port pair.
    SynAnsweredByAck {
        /// SYNs so answered.
        answers: u32,
        /// The client reset each of those ACKs (RST captured).
        reset: bool,
        /// Each SYN re-send left the moment the ACK came (Linux re-arms
        /// its SYN timer), none on the SYN timer.
        quick_retry: bool,
    },
    /// The server's listener did not take the client's handshake ACK
    /// (nor the data behind it) until a later copy.
    AcceptQueueFull {
        /// The server's SYN-ACKs re-sent after the client's ACK (its
        /// timer's: it kept the connection half-open).
        syn_acks_resent: u32,
        /// The client's re-sends of data the server had not taken.
        data_resent: u32,
        /// Captured at the server: what the client sent reached its host.
        at_server: bool,
    },
    /// The server's host reset the connection when the client finished
    /// its handshake, before sending anything: no socket of its took it.
    ListenerReset {
        /// The RST answered the client's handshake ACK, the server having
        /// sent its SYN-ACK once: it came as the handshake completed.
        answered_handshake_ack: bool,
        /// The client had sent its request (data) before the RST reached it.
        request_sent: bool,
        /// The server's SYN-ACKs re-sent before the RST (it had held the
        /// connection half-open).
        syn_acks_resent: u32,
        /// From the client's first packet after the SYN-ACK reaching the
        /// server to the RST leaving it, on the server's clock (ms).
        after_ms: f64,
        /// Captured at the server: its own host sent the RST.
        at_server: bool,
        /// The client's request left this long (ms) after the SYN-ACK
        /// reached it, later than a client waiting for the connection
        /// sends: the connection was opened ahead of need (a browser's
        /// preconnect), and the wait began with the request.
        idle_before_request_ms: Option<f64>,
    },
    /// Answers that waited for the server's upstream.
    UpstreamWait {
        /// How many answers waited.
        answers: u32,
        /// The upstream of the longest wait.
        upstream: Endpoint,
        /// Its connection (`tcp.stream`).
        upstream_stream: u64,
        /// The longest wait (ms).
        longest_ms: f64,
        /// Every call was the request forwarded (HTTP/1.x, the same method
        /// and resource): a proxy's. Otherwise some call was paired as the
        /// only one the server made during the wait (a TLS request, a
        /// database's protocol).
        forwarded: bool,
        /// Calls made on a connection opened for them.
        new_connections: u32,
        /// Of the waits, the time from those connections' SYNs to their
        /// requests (ms): connecting.
        connect_ms: f64,
    },
    /// Waits that held a connection the server opened back to the
    /// client's host.
    ConnectBack {
        /// How many waits (the greeting's counted).
        waits: u32,
        /// The longest of them (ms).
        longest_ms: f64,
        /// Its connection (`tcp.stream`).
        stream: u64,
        /// The client's port it went to (113: ident).
        port: u16,
        /// The client's host accepted it (a SYN-ACK); otherwise the server
        /// waited for SYNs nobody answered.
        accepted: bool,
        /// It held the greeting.
        greeting: bool,
        /// The request that waited, when it was read (`RETR`).
        request: Option<String>,
    },
    /// Client turns of the TLS handshake that waited for the client's
    /// fetch of what it needed to check the server's certificate.
    CertificateFetch {
        /// What waited: turns of the handshake, or the first request.
        held: FetchHeld,
        /// What the longest wait's fetch got.
        what: CertificateCheck,
        /// Its URL (`http://` + host + path, cut short).
        url: String,
        /// Its connection (`tcp.stream`).
        stream: u64,
        /// An answer came before the client went on; otherwise the client
        /// gave up waiting (its own time-out).
        answered: bool,
        /// The connection was opened for the fetch (its SYN, or its name
        /// lookup, inside the wait).
        connected: bool,
        /// Fetches in the waits (an intermediate and a status: two).
        fetches: u32,
        /// Whether the client asked for a stapled status, and got one.
        staple: StatusStaple,
    },
    /// Answers that waited in the client's saturated downlink's queue.
    DownlinkQueue {
        /// How many answers waited.
        answers: u32,
        /// The longest of those waits (ms).
        longest_ms: f64,
    },
    /// Answers the client's path held through a stall of it.
    PathStall {
        /// How many answers waited.
        answers: u32,
        /// The longest of those waits (ms).
        longest_ms: f64,
        /// The stall they came at the end of (the longest, where more):
        /// the last packet from any server before it.
        silent_from_frame: u64,
        /// The first packet from any server after it.
        silent_to_frame: u64,
        /// How long nothing came between them (ms).
        silent_ms: f64,
        /// The late pure ACKs of two servers (on any of the client's
        /// connections) that prove the path held what it carried, with
        /// how much later each came than its connection's quickest pure
        /// ACK before (ms).
        witnesses: [(u64, f64); 2],
        /// The client's side of the round trip from the capture point
        /// (ms): near zero where the capture ran on the client itself,
        /// whose own link can have stalled; more where it sat on the way
        /// (an access point, a router), past which the client's link
        /// lies: the stall was then between the capture and the servers.
        client_side_ms: f64,
    },
    /// A request's body held for a `100 Continue` that never came.
    ExpectContinueWait {
        /// 1-based exchange number.
        exchange: u32,
        /// The request's label ("POST /upload"), when it was HTTP/1.x.
        request: Option<String>,
        /// The segment that carried the request's head.
        head_frame: u64,
        /// The body's first segment.
        body_frame: u64,
    },
    /// A restart from the initial window after idle.
    SlowStartAfterIdle {
        /// 1-based exchange number.
        exchange: u32,
        /// The idle gap before the response.
        idle_s: f64,
        /// Segments in the response's first burst.
        burst_segments: u32,
        /// Segments in an earlier response's largest burst.
        earlier_burst_segments: u32,
    },
    /// The TLS handshake over its ideal, and the causes found in it.
    TlsExtraRtt {
        /// The handshake's round trips.
        rtts: f64,
        /// Its ideal.
        ideal_rtts: f64,
        /// Why that ideal.
        ideal_basis: String,
        /// Round trips beyond the ideal.
        excess_rtts: f64,
        /// The handshake's causes with their costs, largest first.
        causes: Vec<(FindingKind, f64)>,
        /// The hosts' own turnarounds between flights that no cause
        /// claimed (each below a cause's threshold).
        host_ms: f64,
        /// How much longer than the connection's round trip (`rtt_ms`)
        /// the path's was when the ClientHello was sent, as the server's
        /// ACK of it on arrival shows (a queue on the way; not at the
        /// server).
        path_ms: f64,
        /// How long the path held the server's first flight (its last
        /// segment) after it left, by the server's own clock
        /// (sender_clock.rs: a queue on the way back).
        path_back_ms: f64,
        /// How much longer than the fastest round trip to the server the
        /// connection's own SYN took to be answered (one SYN, its
        /// SYN-ACK): a SYN carries no server name, so a ClientHello held
        /// about as long was held by the path (or the box's load), not
        /// by a box reading its name (nDPI's reddit.pcap 14, judged in
        /// session 85).
        syn_held_ms: f64,
        /// How long the stretch beyond the capture point held the
        /// server's first flight on its way to the client's TCP: the
        /// client's ACK of it, which no delayed-ACK timer holds, came that
        /// much after the flight passed (a Wi-Fi or radio link asleep, the
        /// client's host).
        path_to_client_ms: f64,
        /// That ACK's frame, when `path_to_client_ms` is 1 ms or more.
        path_to_client_ack: Option<u64>,
        /// The connection's round trip that `path_ms` exceeds (the
        /// handshake's, or the fastest the data showed where the
        /// handshake's was slow itself).
        rtt_ms: f64,
        /// The excess neither a cause, those turnarounds nor the path
        /// account for.
        unexplained_ms: f64,
        /// The capture lacks the server's first flight (no ServerHello,
        /// yet the client went on past its ClientHello: a capture of some
        /// packets only, or one that dropped them): which host held the
        /// handshake is not in the file.
        server_flight_missed: bool,
        /// The longest turn the capture could not time, where it holds
        /// half the unexplained time or more: the asking flight's last
        /// captured segment and the answer (frames), and the time between
        /// them (ms). The answer acknowledged bytes of that flight the
        /// capture never showed: the time is the answerer's work, or its
        /// wait for a segment lost and sent again that the capture did not
        /// keep either (PcapPlusPlus's tls2.pcap 75, judged in session 84:
        /// 710 ms behind a flight whose middle segment was missing, had
        /// read "spread over small turns").
        untimed_turn: Option<(u64, u64, f64)>,
    },
}

/// A sender's data and the time it took, for "without the stalls it would
/// have taken ..." (see [`Detail::Nagle`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pacing {
    /// Data bytes the sender sent.
    pub bytes: u64,
    /// From its first to its last data segment.
    pub span_ms: f64,
}

/// A side of a connection that heard nothing of its peer's for a while,
/// though the capture saw the peer's packets pass (`rto_stall`): its
/// timer re-sent data the peer had acknowledged, well after that
/// acknowledgment would have reached it, and the re-send still echoed
/// or acknowledged less than the acknowledgment's packet carried.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Deafness {
    /// The side that heard nothing.
    pub side: Direction,
    /// The peer's packet, captured before the re-send, that acknowledged
    /// the re-sent bytes.
    pub missed_frame: u64,
    /// The side's re-send that shows it never got it.
    pub resend_frame: u64,
    /// How long after the missed packet would have reached the side the
    /// re-send left it, on its clock (ms).
    pub after_ms: f64,
    /// From the missed packet's arrival to the side's first packet
    /// showing it heard the peer again (ms); None: not in the capture.
    pub deaf_ms: Option<f64>,
}

/// A timer's re-send whose original reached the receiver after all
/// (`rto_stall`): held on the path (or by a receiver slow to acknowledge
/// it) past the sender's timer. The re-send was needless; the wait was
/// the hold.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HeldOriginal {
    /// The original segment.
    pub original_frame: u64,
    /// The re-send.
    pub resend_frame: u64,
    /// The receiver's first acknowledgment of the bytes.
    pub ack_frame: u64,
    /// What shows the original arrived.
    pub proof: ArrivalProof,
}

/// What shows that a re-sent segment's original reached the receiver's
/// TCP (detect/retransmission.rs, `spurious`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArrivalProof {
    /// The receiver's acknowledgment passed the capture point before the
    /// re-send.
    AcknowledgedBefore,
    /// The acknowledgment came back sooner after the re-send than half
    /// the sender's fastest round trip: the original's.
    TooSoonForTheResend,
    /// The acknowledgment echoes the original's TSval, not the re-send's
    /// (RFC 3522).
    EchoesTheOriginal,
    /// The receiver acknowledged the bytes again, a pure duplicate ACK
    /// (this frame) as far after its first as the re-send was sent after
    /// the original: each copy's arrival drew one, in the order sent.
    EachCopyAcknowledged {
        /// The duplicate ACK.
        duplicate_frame: u64,
    },
    /// The receiver acknowledged the bytes again, a pure duplicate ACK
    /// (this frame) that only a second copy's arrival could have drawn:
    /// both arrived, the original when is not known.
    SecondCopyAcknowledged {
        /// The duplicate ACK.
        duplicate_frame: u64,
    },
    /// The receiver reported the bytes received twice with a D-SACK
    /// (this frame).
    ReportedTwice {
        /// The ACK carrying the D-SACK.
        dsack_frame: u64,
    },
}

/// One wait a finding explains: someone had something to send or to
/// receive from `from_frame` until `to_frame`, and the packet in
/// `release_frame` (from the other side) is what ended it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Wait {
    /// Where the wait began: the sender's previous segment, the request ...
    pub from_frame: u64,
    /// What was held or awaited: the segment that finally left.
    pub to_frame: u64,
    /// The peer's packet that released it (an ACK, a window update), if
    /// the mechanism has one. Always captured before `to_frame`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub release_frame: Option<u64>,
    /// Length of the wait on the clock of the host that waited.
    pub ms: f64,
}

/// The name lookup (DNS over UDP) a connection's client made for its
/// server just before the SYN: what it waited for before it could
/// connect. Not in the ledger, which starts at the SYN.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NameLookupReport {
    /// The name whose answer held the server's address.
    pub name: String,
    /// The resolver that gave that answer.
    pub resolver: IpAddr,
    /// The lookup's first query.
    pub first_frame: u64,
    /// The answer that held the server's address.
    pub answer_frame: u64,
    /// The lookup's last answer before the SYN (an AAAA's after the A's,
    /// a resend's).
    pub last_frame: u64,
    /// From the first query to the lookup's last answer before the SYN,
    /// on the client's clock.
    pub ms: f64,
    /// From that last answer to the SYN.
    pub syn_after_ms: f64,
    /// Queries sent (A and AAAA, each name tried, each resend).
    pub queries: u32,
    /// Of those, the ones no answer came for before the SYN.
    pub unanswered: u32,
    /// The names asked before `name` that did not resolve (a search
    /// list's), in order; at most 8.
    pub names_tried: Vec<String>,
    /// Connections the client opened to other addresses of the answer
    /// (same port) after it came and before this one's SYN, not accepted
    /// before that SYN: addresses tried first and given up on; at most 8.
    pub failed_attempts: Vec<AttemptReport>,
}

/// A connection to another of the name's addresses, given up on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AttemptReport {
    /// Its `tcp.stream`.
    pub stream: u64,
    /// The address it went to.
    pub address: IpAddr,
    /// Its first SYN.
    pub syn_frame: u64,
}

/// One frame of a connection, for the ladder view (`--conn N`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LadderEntry {
    /// Wireshark's frame number.
    pub frame: u64,
    /// Milliseconds since the connection's first frame, capture clock.
    pub t_ms: f64,
    /// Who sent it.
    pub direction: Direction,
    /// TCP flags, as Wireshark abbreviates them (`SYN, ACK`).
    pub flags: String,
    /// Relative sequence number.
    pub seq: u32,
    /// Relative acknowledgement number.
    pub ack: u32,
    /// Payload bytes.
    pub len: u32,
    /// Window in bytes (scaled).
    pub window: u64,
    /// Bytes the sender of this frame has in flight after it.
    pub in_flight: u32,
    /// What rttdoc noticed about it.
    pub notes: Vec<String>,
}

/// The plaintext preamble TLS started after (preamble.rs in
/// rttdoc-analyze tells them by their mechanism).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PreambleKind {
    /// An HTTP proxy's `CONNECT` and its `200`.
    HttpConnect,
    /// A SOCKS4 connect request and its grant.
    Socks4,
    /// A SOCKS4a connect request (the proxy resolves the name) and its grant.
    Socks4a,
    /// SOCKS5's method negotiation (and authentication) and connect request.
    Socks5,
    /// SMTP's greeting, `EHLO` and `STARTTLS`.
    SmtpStarttls,
    /// FTP's greeting and `AUTH TLS`.
    FtpAuthTls,
    /// POP3's greeting (and `CAPA`) and `STLS`.
    Pop3Stls,
    /// IMAP's greeting (and `CAPABILITY`) and `STARTTLS`.
    ImapStarttls,
    /// XMPP's stream headers, features and `<starttls/>`.
    XmppStarttls,
    /// LDAP's StartTLS extended operation.
    LdapStarttls,
    /// PostgreSQL's `SSLRequest` and its `S`.
    PostgresSslRequest,
    /// MySQL's greeting and the client's SSL request.
    MysqlSslRequest,
}

impl PreambleKind {
    /// The name in the JSON report (`tls.started_after`).
    pub fn name(self) -> &'static str {
        match self {
            PreambleKind::HttpConnect => "http_connect",
            PreambleKind::Socks4 => "socks4",
            PreambleKind::Socks4a => "socks4a",
            PreambleKind::Socks5 => "socks5",
            PreambleKind::SmtpStarttls => "smtp_starttls",
            PreambleKind::FtpAuthTls => "ftp_auth_tls",
            PreambleKind::Pop3Stls => "pop3_stls",
            PreambleKind::ImapStarttls => "imap_starttls",
            PreambleKind::XmppStarttls => "xmpp_starttls",
            PreambleKind::LdapStarttls => "ldap_starttls",
            PreambleKind::PostgresSslRequest => "postgres_sslrequest",
            PreambleKind::MysqlSslRequest => "mysql_ssl_request",
        }
    }

    /// The ledger phase: reaching the destination through a proxy, or
    /// upgrading an application protocol's connection to TLS.
    pub fn phase(self) -> Phase {
        match self {
            PreambleKind::HttpConnect
            | PreambleKind::Socks4
            | PreambleKind::Socks4a
            | PreambleKind::Socks5 => Phase::ProxyConnect,
            _ => Phase::Starttls,
        }
    }

    /// For people, in the ledger.
    pub fn label(self) -> &'static str {
        match self {
            PreambleKind::HttpConnect => "HTTP CONNECT through a proxy",
            PreambleKind::Socks4 => "SOCKS4 connect",
            PreambleKind::Socks4a => "SOCKS4a connect",
            PreambleKind::Socks5 => "SOCKS5 connect",
            PreambleKind::SmtpStarttls => "SMTP STARTTLS",
            PreambleKind::FtpAuthTls => "FTP AUTH TLS",
            PreambleKind::Pop3Stls => "POP3 STLS",
            PreambleKind::ImapStarttls => "IMAP STARTTLS",
            PreambleKind::XmppStarttls => "XMPP starttls",
            PreambleKind::LdapStarttls => "LDAP StartTLS",
            PreambleKind::PostgresSslRequest => "PostgreSQL SSLRequest",
            PreambleKind::MysqlSslRequest => "MySQL SSL request",
        }
    }
}

impl Serialize for PreambleKind {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// An HTTP authentication scheme (RFC 9110 11.1): the first token of a
/// challenge (`WWW-Authenticate`, `Proxy-Authenticate`) or of the
/// credentials that answer it (`Authorization`, `Proxy-Authorization`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AuthScheme {
    /// `Basic` (RFC 7617): a user name and password, sent as they are.
    Basic,
    /// `Digest` (RFC 7616): a hash over the server's nonce.
    Digest,
    /// `NTLM`: a handshake of three messages bound to the connection.
    Ntlm,
    /// `Negotiate` (RFC 4559): SPNEGO, Kerberos or NTLM inside.
    Negotiate,
    /// `Bearer` (RFC 6750): an OAuth token.
    Bearer,
    /// Any other scheme.
    Other,
}

impl AuthScheme {
    /// The scheme a challenge or credentials (`value`: a header's value)
    /// begin with; `None` when it is empty.
    pub fn of_value(value: &[u8]) -> Option<AuthScheme> {
        let end = value
            .iter()
            .position(|&b| b == b' ' || b == b',' || b == b'\t')
            .unwrap_or(value.len());
        let token = &value[..end];
        if token.is_empty() {
            return None;
        }
        let is = |name: &str| token.eq_ignore_ascii_case(name.as_bytes());
        Some(if is("Basic") {
            AuthScheme::Basic
        } else if is("Digest") {
            AuthScheme::Digest
        } else if is("NTLM") {
            AuthScheme::Ntlm
        } else if is("Negotiate") {
            AuthScheme::Negotiate
        } else if is("Bearer") {
            AuthScheme::Bearer
        } else {
            AuthScheme::Other
        })
    }

    /// The scheme as HTTP writes it (`NTLM`).
    pub fn name(self) -> &'static str {
        match self {
            AuthScheme::Basic => "Basic",
            AuthScheme::Digest => "Digest",
            AuthScheme::Ntlm => "NTLM",
            AuthScheme::Negotiate => "Negotiate",
            AuthScheme::Bearer => "Bearer",
            AuthScheme::Other => "another scheme",
        }
    }
}

/// An application protocol told by a connection's first bytes, where it
/// changes what a finding's fix can be (`Detail::Nagle`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppProtocol {
    /// SSH: a side's first bytes are its identification string
    /// (`SSH-2.0-...`, RFC 4253 4.2).
    Ssh,
    /// OpenVPN over TCP: the client's first packet is a hard reset of
    /// its TLS mode (opcode 7 or 10 behind a 16-bit length), the server's
    /// first its hard reset (8). A tunnel: no exchanges are made of it.
    OpenVpn,
    /// MQTT: the client's first message is a CONNECT naming the protocol,
    /// or the broker listens on 1883 and both speak MQTT's headers, or on
    /// 8883 (MQTT's port inside TLS).
    Mqtt,
}

impl AppProtocol {
    /// Whether a connection read as `protocol`, to the server's `port`, is
    /// SSH: its identification read, or on SSH's port where nothing was
    /// read (a joined MPTCP subflow, a capture begun in the session).
    pub fn is_ssh(protocol: Option<AppProtocol>, port: u16) -> bool {
        protocol == Some(AppProtocol::Ssh) || (protocol.is_none() && port == 22)
    }
}

/// Everything rttdoc knows about one TCP connection.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConnectionReport {
    /// Wireshark's tcp.stream index.
    pub stream: u64,
    /// The earlier stream this connection is, seen again at another point
    /// of the path with its addresses translated (NAT, a container
    /// bridge's masquerade under `-i any`, an LVS-NAT balancer): the same
    /// initial sequence numbers in both directions. Its waits are that
    /// stream's, so capture-wide totals count them once, there. (32 bits,
    /// to keep a report small to move, `a_report_stays_small_to_move`: no
    /// capture holds more streams than that.)
    pub same_connection_as: Option<u32>,
    /// A Multipath TCP subflow, if the connection is one (MPTCP options
    /// on both SYNs, or a Data ACK on its packets); boxed, as TLS is: few
    /// connections are.
    pub mptcp: Option<Box<MptcpReport>>,
    /// The PROXY protocol header the client's stream began with (the
    /// client here is a load balancer; the header names the one behind
    /// it); boxed: few connections have one.
    pub proxy_protocol: Option<Box<ProxyProtocolReport>>,
    /// The side that sent the SYN (or, mid-stream, the HTTP request or
    /// ClientHello, else the side off a registered service port, else the
    /// higher port).
    pub client: Endpoint,
    /// The other side.
    pub server: Endpoint,
    /// Its first frame.
    pub first_frame: u64,
    /// Its last frame.
    pub last_frame: u64,
    /// Capture time of the first frame, seconds since the Unix epoch.
    pub start_time: f64,
    /// Seconds from the capture's first frame to this connection's
    /// (Wireshark's frame.time_relative of its first frame).
    pub start_offset_s: f64,
    /// First to last frame.
    pub duration_ms: f64,
    /// True when the capture did not see the connection's SYN.
    pub partial: bool,
    /// How it ended.
    pub ending: Ending,
    /// Where the capture was taken, as the handshake shows.
    pub vantage: Vantage,
    /// The path's round trip.
    pub rtt_ms: Option<f64>,
    /// How `rtt_ms` was measured.
    pub rtt_source: Option<RttSource>,
    /// First SYN to first ACK-without-SYN: Wireshark's tcp.analysis.initial_rtt.
    pub tcp_handshake_ms: Option<f64>,
    /// The TCP handshake.
    pub handshake: HandshakeReport,
    /// The name lookup (DNS over UDP) the client made for this server
    /// just before its SYN, when the capture has it; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name_lookup: Option<Box<NameLookupReport>>,
    /// What the client sent.
    pub client_to_server: DirectionStats,
    /// What the server sent.
    pub server_to_client: DirectionStats,
    /// The TLS session, if the connection carried TLS (boxed: a report is
    /// moved from thread to thread, and most of a SYN flood's have none).
    pub tls: Option<Box<TlsReport>>,
    /// A hello in TLS's format whose connection then carried bytes that
    /// were no TLS records before the handshake completed: not TLS (its
    /// `tls` is null), though a dissector reads its hello as one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tls_lookalike: Option<Box<TlsLookalike>>,
    /// Request/response exchanges seen (HTTP/1.x or other turn-taking data).
    pub exchanges: u32,
    /// The round-trip ledger: one row per phase.
    pub ledger: Vec<LedgerRow>,
    /// Sum of the latency phases' excess round trips (handshakes, first bytes).
    pub excess_rtts: f64,
    /// `excess_rtts` in milliseconds.
    pub excess_ms: f64,
    /// What the detectors found.
    pub findings: Vec<Finding>,
    /// Latency-phase excess no finding accounts for (ms, >= 0).
    pub unexplained_ms: f64,
    /// Of `unexplained_ms`, the client's own turnarounds too short to be
    /// a cause (below `client_think_time`'s threshold): its TLS
    /// library's work on the server's flight, say (ms, >= 0).
    pub client_turnaround_ms: f64,
    /// Of `unexplained_ms`, the server's own turnarounds too short to be
    /// a cause (below `server_think_time`'s threshold): its signing, a
    /// handler's few milliseconds (ms, >= 0).
    pub server_turnaround_ms: f64,
    /// Of `unexplained_ms`, besides the turnarounds, what the path held:
    /// the TLS handshake's queues `tls_extra_rtt` names (the ClientHello's
    /// on the way out, by the server's ACK of it; the server's flight's on
    /// the way back, by the server's own clock; the stretch beyond the
    /// capture point to the client, by the client's ACK of that flight),
    /// no finding's wait but the network's (ms, >= 0).
    pub path_queue_ms: f64,
    /// A long connection's segments past the first [`TIMELINE_CAP`],
    /// diagnosed a window at a time: which frames and exchanges they
    /// hold. Their ledger rows are summed per phase (one row each, after
    /// the itemized ones) and their findings are in `findings`, so the
    /// totals above cover the whole connection. Absent on the others.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub later_windows: Option<Box<LaterWindows>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    /// Every frame, with `--conn N` for this stream (a boxed slice: one
    /// report in thousands has it, and every report is moved).
    pub ladder: Option<Box<[LadderEntry]>>,
    /// Per-packet graph data (`--series`, `--html`): see series.rs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub series: Option<Box<crate::series::Series>>,
}

impl ConnectionReport {
    /// Both hosts' short turnarounds (ms): the part of `unexplained_ms`
    /// that was their own work.
    pub fn turnaround_ms(&self) -> f64 {
        self.client_turnaround_ms + self.server_turnaround_ms
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Where a run of merged frames comes from: the merged frame `frame` and
/// those after it, up to the next run's, are frames `file_frame`,
/// `file_frame + 1` ... of `merged_files[file]`, as Wireshark numbers
/// that file's frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct MergedRun {
    /// The run's first frame in the merge.
    pub frame: u64,
    /// Its file's index in `merged_files`.
    pub file: usize,
    /// That frame's number in its file.
    pub file_frame: u64,
}

impl CaptureStats {
    /// Of merged captures, the file `frame` is in (its index in
    /// `merged_files`) and its number there; None for one capture, or
    /// past the runs kept.
    pub fn frame_in_files(&self, frame: u64) -> Option<(usize, u64)> {
        let after = self.merged_runs.partition_point(|r| r.frame <= frame);
        let run = self.merged_runs.get(after.checked_sub(1)?)?;
        if self.merged_runs_cut && after == self.merged_runs.len() {
            return None; // (where the last run kept ends is not known)
        }
        Some((run.file, run.file_frame + (frame - run.frame)))
    }

    /// Of merged captures, the frames `first..=last` by file: each file's
    /// index in `merged_files` with the first and last of its frames in
    /// that span (its own numbers), in the order the files first appear.
    pub fn span_in_files(&self, first: u64, last: u64) -> Vec<(usize, u64, u64)> {
        let mut spans: Vec<(usize, u64, u64)> = Vec::new();
        let start = self
            .merged_runs
            .partition_point(|r| r.frame <= first)
            .saturating_sub(1);
        for (i, run) in self.merged_runs.iter().enumerate().skip(start) {
            if run.frame > last {
                break;
            }
            let ends = self.merged_runs.get(i + 1).map_or(last, |n| n.frame - 1);
            if self.merged_runs_cut && i + 1 == self.merged_runs.len() {
                break;
            }
            let (from, to) = (first.max(run.frame), last.min(ends));
            if from > to {
                continue;
            }
            let (a, b) = (
                run.file_frame + (from - run.frame),
                run.file_frame + (to - run.frame),
            );
            match spans.iter_mut().find(|s| s.0 == run.file) {
                Some(s) => (s.1, s.2) = (s.1.min(a), s.2.max(b)),
                None => spans.push((run.file, a, b)),
            }
        }
        spans
    }
}

/// Counters for the capture as a whole.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CaptureStats {
    /// The capture file (`-` for stdin); of several merged, the first.
    pub file: String,
    /// Several capture files read as one, merged by time as `mergecap`
    /// merges them, in the order given (absent for one file): frame
    /// numbers are those of the merged capture.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub merged_files: Vec<String>,
    /// Of merged files, whether they overlapped in time (one had packets
    /// both before and after a packet of another): captures of two points
    /// or interfaces, not a ring's files (absent when not).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub merged_files_overlap: bool,
    /// Of merged files, where the frames come from: a run of one file's
    /// consecutive frames each (a ring's files, one run a file), at most
    /// 100,000 (absent for one file).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub merged_runs: Vec<MergedRun>,
    /// Whether runs past that bound were not kept: frames from the last
    /// run's on are not located in their files (absent when not).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub merged_runs_cut: bool,
    /// The shortest time from a packet to its capture copy, of the
    /// clients' packets and of the servers' (None: no copy): at a second
    /// capture point, the path's one-way delay plus the difference of
    /// the two points' clocks. Said in words, not in the JSON.
    #[serde(skip)]
    pub copy_gaps_ns: [Option<i64>; 2],
    /// Frames read.
    pub frames: u64,
    /// TCP segments among them.
    pub tcp_segments: u64,
    /// Frames that carried no IP.
    pub non_ip: u64,
    /// Of the `non_ip` frames, those of a link-layer type rttdoc does not
    /// read (Wi-Fi monitor mode's radiotap ...).
    pub unread_link_frames: u64,
    /// Which link types those were (the first 8 seen, `LINKTYPE_*`
    /// values).
    pub unread_link_types: Vec<u32>,
    /// IP packets that carried no TCP.
    pub non_tcp: u64,
    /// Of those, UDP datagrams to or from port 53: DNS, read for the name
    /// lookups before the connections (absent when none).
    #[serde(skip_serializing_if = "is_zero")]
    pub dns_messages: u64,
    /// IP fragments seen.
    pub ip_fragments: u64,
    /// Datagrams rebuilt from those fragments (their segments count in
    /// `tcp_segments`, on the frame of the fragment that completed them).
    pub ip_reassembled: u64,
    /// Packets whose headers were broken or cut: counted and skipped.
    pub damaged: u64,
    /// Of the damaged packets, those the capture's snap length cut
    /// (captured shorter than they were on the wire) before their
    /// headers ended: a capture setting, not damage on the network.
    pub snap_cut: u64,
    /// TCP segments whose headers were whole but whose payload the
    /// capture's snap length cut: timed and tracked whole, their payload
    /// read only as far as it was kept.
    pub snap_cut_payloads: u64,
    /// TCP segments whose frame holds fewer bytes than their IP header
    /// says, though the capture records the frame as whole (a tool that
    /// kept headers only without saying so, a copy recorded short).
    pub clipped_segments: u64,
    /// TCP connections (`tcp.stream` numbers given).
    pub connections: u64,
    /// First and last capture timestamps, seconds since the epoch.
    pub first_time: Option<f64>,
    /// The last frame's time.
    pub last_time: Option<f64>,
    /// The error that stopped reading early, if any.
    pub error: Option<String>,
    /// TCP packets the capture holds more than once (see
    /// `DirectionStats::capture_duplicates`), all connections together.
    pub capture_duplicates: u64,
    /// Connections that are an earlier stream's connection seen again with
    /// its addresses translated (`ConnectionReport::same_connection_as`).
    pub translated_copies: u64,
    /// Times the capture clock went back by more than reordering explains
    /// (a file appended to itself, a capture restarted into the same
    /// file): the packets replayed on known connections count as
    /// duplicates.
    pub capture_restarts: u64,
    /// Packets of connections already reported (after their linger, or
    /// evicted): they keep their tcp.stream but are not analysed.
    pub late_packets: u64,
    /// Records whose time fraction was out of range (a corrupt pcap record
    /// header: 10^6 microseconds or more): their time is what Wireshark
    /// reads, not to be trusted (absent when none).
    #[serde(skip_serializing_if = "is_zero_u64")]
    pub times_out_of_range: u64,
    /// The first of them (its frame number).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_time_out_of_range: Option<u64>,
    /// Connections finished early because more than `--max-flows` were
    /// open at once (longest idle first).
    pub evicted_flows: u64,
    /// The QUIC connections (UDP), when the capture has any: written
    /// beside `capture` as the document's `quic`, not inside it.
    #[serde(skip)]
    pub quic: Option<Box<crate::QuicSection>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A report is moved from worker to tracker to output, copied into
    /// batches and rings: every byte is copied a few times per
    /// connection, which on a SYN flood was most of a worker's time. The
    /// TLS session (280 bytes, none for most of a flood) is boxed for it.
    /// (576 until session 68: `path_queue_ms`, 8 bytes the totals needed
    /// to add up, and `handshake.shared_clock_servers`, whose 2 bytes
    /// crossed a word; 592 until session 79: `tls_lookalike`'s box, a
    /// pointer, what a hello that only looked like TLS's needs said.)
    #[test]
    fn a_report_stays_small_to_move() {
        let size = std::mem::size_of::<ConnectionReport>();
        assert!(size <= 600, "ConnectionReport is {size} bytes");
    }

    /// Two files: a's frames 1-3 are merged frames 1-3, b's 1-2 are 4-5,
    /// a's 4-5 are 6-7.
    fn merged(cut: bool) -> CaptureStats {
        let run = |frame, file, file_frame| MergedRun {
            frame,
            file,
            file_frame,
        };
        CaptureStats {
            merged_files: vec!["a".into(), "b".into()],
            merged_runs: vec![run(1, 0, 1), run(4, 1, 1), run(6, 0, 4)],
            merged_runs_cut: cut,
            ..Default::default()
        }
    }

    #[test]
    fn merged_frames_are_found_in_their_files() {
        let s = merged(false);
        assert_eq!(s.frame_in_files(1), Some((0, 1)));
        assert_eq!(s.frame_in_files(5), Some((1, 2)));
        assert_eq!(s.frame_in_files(7), Some((0, 5)));
        assert_eq!(s.span_in_files(2, 7), [(0, 2, 5), (1, 1, 2)]);
        assert_eq!(s.span_in_files(4, 4), [(1, 1, 1)]);
        // Past the runs kept, nothing is located (the last run's end is
        // not known).
        let s = merged(true);
        assert_eq!(s.frame_in_files(5), Some((1, 2)));
        assert_eq!(s.frame_in_files(6), None);
        assert_eq!(s.span_in_files(2, 7), [(0, 2, 3), (1, 1, 2)]);
        // One capture: nowhere.
        assert_eq!(CaptureStats::default().frame_in_files(1), None);
        assert!(CaptureStats::default().span_in_files(1, 9).is_empty());
    }
}
