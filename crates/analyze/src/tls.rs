//! The TLS handshake of one connection, followed record by record.
//!
//! Which frames carry which handshake messages, what was negotiated, and
//! the events the ledger needs: when the ClientHello left, when the server's
//! flight ended, when each side's Finished went out. In TLS 1.3 everything
//! after the ServerHello is encrypted, so the server's flight is the run of
//! encrypted records before the client's first encrypted record (its
//! Finished); application data after that feeds the exchanges.

use rttdoc_wire::tls::{
    content_type as ct, handshake_type as ht, ClientHello, CutHandshake, HandshakeMessage,
    HandshakeReader, Record, RecordStream, ServerHello,
};

use crate::connection::Stamp;
use crate::exchange::Exchanges;
use crate::model::{Direction, TlsMessage, TlsMessageRef};

const MAX_MESSAGES: usize = 64;

/// Early-data records kept for decryption: a request's head fits in one.
const MAX_EARLY_RECORDS: usize = 4;

/// Server records kept for a key log: the encrypted handshake flight
/// (up to ~5) and the first records under the application keys.
const MAX_SERVER_RECORDS: usize = 10;

/// The largest Finished record of any suite: TLS 1.3 with SHA-384 (header,
/// message header, 48 bytes, inner type, tag); a TLS 1.2 one is smaller.
const MAX_FINISHED_RECORD_LEN: usize = 5 + 4 + 48 + 1 + 16;

/// A ChangeCipherSpec record: its header and one byte.
const CHANGE_CIPHER_SPEC_RECORD_LEN: usize = 6;

/// A TLS 1.3 record carrying only an alert: 2 + 1 + 16 bytes.
const ENCRYPTED_ALERT_LEN: u32 = 19;

/// Largest encrypted record taken for a NewSessionTicket: tickets are a
/// few hundred bytes (a session id, or an encrypted session state).
const MAX_TICKET_RECORD: u32 = 2048;

/// The fewest bytes a NewSessionTicket message takes in practice (its
/// lifetime, age, nonce, a ticket of at least 32 bytes).
const MIN_TICKET_BYTES: u32 = 48;

/// Whether `n` bytes of HTTP/2 frames can be a connection preface's
/// SETTINGS (at most 12 settings), alone or followed by a WINDOW_UPDATE,
/// and either with the acknowledgment of the peer's SETTINGS (an empty
/// frame) after them, as a server sends when the client's came first.
fn preface_sized(n: u32) -> bool {
    client_preface_sized(n) || (n >= 18 && client_preface_sized(n - 9))
}

/// Whether `n` bytes of HTTP/2 frames can be SETTINGS (at most 12
/// settings), alone or followed by a WINDOW_UPDATE: a client's preface
/// after its magic.
fn client_preface_sized(n: u32) -> bool {
    let settings = |n: u32| n >= 9 && (n - 9).is_multiple_of(6) && (n - 9) / 6 <= 12;
    settings(n) || (n >= 22 && settings(n - 13))
}

/// Whether `n` bytes of HTTP/2 frames can be a client's preface after its
/// magic with PRIORITY frames behind it (14 bytes each, up to 8: Firefox
/// built its dependency tree with five or six of them).
fn client_preface_sized_with_priorities(n: u32) -> bool {
    (0..=8).any(|k| n >= 14 * k && client_preface_sized(n - 14 * k))
}

/// TLS 1.3 servers send NewSessionTicket messages in application-data
/// records right after the handshake, before any answer; they are not
/// the first byte of a response. OpenSSL and BoringSSL send two (or
/// more) back to back, one per record, of the same size (the tickets
/// differ in content, not length). So the first server record after the
/// handshake waits for the next: same size, both are tickets (and so is
/// every further record of that size); a different size, it was data.
#[derive(Debug, Default, Clone, Copy)]
enum TicketRun {
    /// No server record after the handshake yet, or one held back.
    #[default]
    Undecided,
    Held(Stamp, Stamp, u32),
    /// Tickets of this record size seen; more of them may follow.
    Tickets(u32),
    /// Application data has begun.
    Done,
}

/// A version read from the records after a ServerHello that a snap length
/// cut (its type byte survived, its version did not).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Inferred {
    version: u16,
    resumed: Option<bool>,
}

/// What the client sent after a cut ServerHello, while its version is
/// still unknown.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum AfterCutHello {
    #[default]
    Nothing,
    ChangeCipherSpec,
}

/// What an application record is to request/answer turns on an HTTP/2
/// connection (`TlsSession::http2_record`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Http2Record {
    /// Anything else: a request, an answer, their data.
    Other,
    /// The server's connection preface: nobody's answer.
    Preface,
    /// An empty frame: it never begins an answer (exchange.rs).
    Empty,
    /// The client's record of a WINDOW_UPDATE's, RST_STREAM's or PING's
    /// size (13 or 17 bytes).
    ControlSized,
}

/// An HTTP connection read through its application keys (TLS 1.3's, or
/// TLS 1.2's with an AEAD suite; `--keylog`, or the secrets a pcapng
/// carries): each side's next record
/// number, and what the connection speaks, once its first data says.
/// HTTP/2 (the client's first data its preface, or the server's a
/// SETTINGS frame) and HTTP/1.x (the client's first data a request line)
/// are read as in the clear: their requests named, their answers' status
/// lines and headers read (a redirect, an authentication challenge).
/// Other protocols are left to the records' sizes, as without the keys.
#[derive(Debug)]
pub(crate) struct Decrypting {
    keys: crate::keylog::AppKeys,
    next: [Option<u64>; 2],
    speaks: Option<Speaks>,
}

/// What a connection read through its keys speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Speaks {
    Http2,
    Http1,
    /// Another protocol: left to the records' sizes.
    Other,
}

/// A NextProtocol message's plaintext: its header (4 bytes), and the
/// protocol and padding, which NPN pads to 32 bytes with their two
/// length bytes.
const NEXT_PROTOCOL_LEN: u32 = 4 + 32;

/// A TLS 1.0-1.2 Finished's plaintext: its header and 12 bytes of
/// verify_data.
const FINISHED_LEN: u32 = 4 + 12;

#[derive(Debug, Default)]
pub struct TlsSession {
    /// With a key log naming the session: its application records opened
    /// (`Decrypting`).
    pub(crate) decrypting: Option<Box<Decrypting>>,
    /// The key log was looked in for the session's keys.
    keys_looked_up: bool,
    records: [RecordStream<Stamp>; 2],
    handshake: [HandshakeReader; 2],
    pub client_hello: Option<ClientHello>,
    /// Where the first ClientHello's record began and ended.
    pub client_hello_at: Option<(Stamp, Stamp)>,
    pub client_hello_bytes: u32,
    pub server_hello: Option<ServerHello>,
    /// The server's ServerKeyExchange (TLS 1.2 and older, ECDHE or DHE):
    /// its key exchange and the key that signed it.
    pub server_key_exchange: Option<rttdoc_wire::tls::ServerKeyExchange>,
    /// The server's Certificate message (TLS 1.2 and older) as read, and
    /// its frame.
    pub(crate) server_certificates: Option<(rttdoc_wire::tls::CertificateChain, u64)>,
    pub server_hello_at: Option<Stamp>,
    /// A ServerHello known by its type byte alone (a snap length cut its
    /// body): its record's version.
    server_hello_cut: Option<u16>,
    after_cut_hello: AfterCutHello,
    /// The version the records after a cut ServerHello showed.
    inferred: Option<Inferred>,
    /// The records that would tell a cut ServerHello's version were cut
    /// too: the version stays unknown.
    version_hidden: bool,
    /// Each direction's framing was lost to a hole in the capture, not to
    /// a snap length, and is not yet found again.
    framing_lost_to_hole: [bool; 2],
    /// HelloRetryRequest: when, and the group the server asked for.
    pub hello_retry: Option<(Stamp, Option<u16>)>,
    /// Each side's (client, server) latest alert record (a close_notify
    /// at a connection's end): who closed it, when its FIN came after the
    /// peer's (reuse.rs).
    pub(crate) last_alert: [Option<Stamp>; 2],
    pub change_cipher_spec: [Option<Stamp>; 2],
    pub client_finished: Option<Stamp>,
    /// TLS 1.2: the server's Finished; TLS 1.3: the last record of the
    /// server's encrypted flight.
    pub server_finished: Option<Stamp>,
    /// TLS 1.2 and older: the client sent application data after its
    /// Finished and before the server's (False Start, RFC 7918): for the
    /// client, the handshake ended with its own Finished.
    pub false_start: bool,
    /// The client sent application data after its Finished and before
    /// the server's, its version unread but before TLS 1.3 by its key
    /// exchange: False Start if the server's Finished is captured
    /// ([`Self::false_started`]).
    false_start_unless_unseen: bool,
    pub certificate_seen: bool,
    /// A full TLS 1.2 handshake's key exchange was seen (ServerKeyExchange,
    /// ServerHelloDone, CertificateRequest or ClientKeyExchange).
    pub key_exchange_seen: bool,
    pub server_flight_bytes: u32,
    /// Handshake records the client sent (saturating): a second one (a
    /// TLS 1.2 ClientKeyExchange, a Finished) means it had the server's
    /// flight, captured or not.
    client_handshake_records: u8,
    pub early_data_records: u32,
    /// The early-data records' lengths together (their bodies: plaintext,
    /// inner content type and tag), when every one was whole.
    early_data_bytes: Option<u32>,
    /// The first early-data records' ciphertexts (bodies), for a key log
    /// to decrypt (`early_data_unsafe`).
    pub early_data: Vec<Vec<u8>>,
    /// TLS 1.3 0-RTT: whether the server took the early data, inferred
    /// from the client's second flight (an EndOfEarlyData record before
    /// its Finished means accepted). None when not offered or not seen.
    pub early_data_accepted: Option<bool>,
    /// The server's TLS 1.3 Finished record has been identified by its
    /// size: encrypted server records after it are application data
    /// (0.5-RTT, e.g. the answer to an early-data request).
    server_finished_seen: bool,
    ticket_run: TicketRun,
    /// Keep the bodies of the server's first encrypted records (a key log
    /// can open them: `crate::keylog::KeyLog::server_inner_types`).
    pub keep_server_records: bool,
    /// The server's first encrypted records after its ServerHello: where
    /// each began, and its body.
    pub server_records: Vec<(Stamp, Vec<u8>)>,
    /// NewSessionTicket records recognised after a TLS 1.3 handshake.
    pub tickets_after_handshake: u32,
    /// The record length of the tickets the server was seen sending this
    /// software asking this name before (ticket_sizes.rs): a lone first
    /// record of that size is one.
    pub(crate) known_ticket_len: Option<u32>,
    /// The tracker looked for `known_ticket_len` (once the ClientHello
    /// was read, or seen cut).
    pub(crate) ticket_size_looked_up: bool,
    /// The record length of this connection's tickets, once one was
    /// recognised, and whether the tracker has noted it.
    pub(crate) ticket_len_seen: Option<u32>,
    pub(crate) ticket_len_noted: bool,
    /// The length of a lone first server record after the handshake that
    /// the server was seen following with others before (ticket_sizes.rs):
    /// followed by another of a different size, it is a ticket.
    pub(crate) known_lone_first: Option<u32>,
    /// This connection's first server record after the handshake, when it
    /// was followed by one of a different size, and whether the tracker
    /// has noted it.
    pub(crate) lone_first_seen: Option<u32>,
    pub(crate) lone_first_noted: bool,
    /// The client sent application data after its handshake (a request
    /// with or after its Finished; 0-RTT early data is not counted).
    client_wrote_after_handshake: bool,
    /// The tracker noted the session ID its ServerHello issued
    /// (issued_sessions.rs).
    pub(crate) session_noted: bool,
    /// The ClientHello offered a session ID the same server issued
    /// earlier in the capture: a resumption offer (issued_sessions.rs).
    pub(crate) session_id_offered: bool,
    /// A session the server had issued the client for the same name
    /// earlier, which the ClientHello did not offer (issued_sessions.rs).
    pub(crate) session_held: Option<crate::model::HeldSession>,
    /// Where the server issued the session ID the ClientHello offered
    /// (issued_sessions.rs).
    pub(crate) session_id_issued: Option<crate::model::IssuedSessionId>,
    /// Where the client's first application record began (its HTTP/2
    /// preface).
    client_first_record: Option<u64>,
    /// The server's first application record after that has been seen
    /// (its HTTP/2 preface, if any).
    server_first_record_seen: bool,
    /// The client's first application record, when it has the size of
    /// HTTP/2's client preface alone: (where it began, its bytes).
    client_preface_alone: Option<(u64, u64)>,
    /// The server sent application data before the client's first record
    /// (0.5-RTT data: its HTTP/2 preface, sent as its handshake ended), so
    /// its first record after the client's is no preface.
    server_spoke_first: bool,
    /// The connection may speak HTTP/2: the server chose `h2` (TLS 1.2's
    /// ServerHello), the client's first application record has the size
    /// of HTTP/2's client preface, or the client offered `h2` and TLS 1.3
    /// hid the server's choice. The sizes that no HTTP/1.x message has (an
    /// empty frame's 9 bytes, a WINDOW_UPDATE's or PING's 13 or 17, a
    /// short first record of the server's) are read as HTTP/2's then.
    http2_maybe: bool,
    /// The connection may speak SPDY: the server listed it in its NPN
    /// extension, and the client sent its NextProtocol (a browser offered
    /// NPN and picked a protocol). A SPDY server opens with a SETTINGS
    /// frame (12 bytes and 8 a setting) and may follow it with a
    /// WINDOW_UPDATE (16), whatever was asked: no answer (nDPI's
    /// KakaoTalk_chat.pcap 8, its 28 and 16 bytes taken for the first
    /// request's answer).
    spdy_maybe: bool,
    /// The server's SPDY preface was its last record: a WINDOW_UPDATE's
    /// size next is the preface's too.
    after_spdy_preface: bool,
    /// The client's NextProtocol (NPN) was noted: its next encrypted
    /// handshake record is its Finished.
    client_next_protocol: bool,
    pub messages: Vec<TlsMessageRef>,
    /// The stream stopped looking like TLS (or sync was lost).
    pub broken: bool,
    /// Bytes that were not TLS records came, either way, before the
    /// client's Finished (not bytes lost to a hole): the hello only looked
    /// like TLS's (Skype's SSL 2.0-style hello and its own bytes after
    /// it), or a server that does not speak TLS answered it.
    pub not_tls: Option<Stamp>,
    /// TLS started after a plaintext preamble (proxy, STARTTLS): which,
    /// where, and the preamble's first frame (true: sent by the server).
    pub preamble: Option<(crate::preamble::Start, (Stamp, bool))>,
}

impl TlsSession {
    /// The server asked the client for a certificate (CertificateRequest:
    /// readable before TLS 1.3).
    pub(crate) fn certificate_requested(&self) -> bool {
        self.messages
            .iter()
            .any(|m| m.message == crate::model::TlsMessage::CertificateRequest)
    }

    /// Negotiated version (ServerHello), if seen; else what the records
    /// after a cut ServerHello showed; else TLS 1.3 after a
    /// HelloRetryRequest, which only TLS 1.3 sends (RFC 8446 4.1.4: a
    /// handshake given up after one, nDPI's tumblr.pcap 10, is TLS 1.3 to
    /// tshark too).
    pub fn version(&self) -> Option<u16> {
        match &self.server_hello {
            Some(sh) => Some(sh.version),
            None => self
                .inferred
                .map(|i| i.version)
                .or(self.hello_retry.map(|_| 0x0304)),
        }
    }

    /// The version was inferred from records, not read from a ServerHello.
    pub fn version_inferred(&self) -> bool {
        self.server_hello.is_none() && self.inferred.is_some()
    }

    fn is_tls13(&self) -> bool {
        self.version().is_some_and(rttdoc_wire::tls::is_tls13)
    }

    /// The shape of the client's ClientHello: what its software offers
    /// (its version, cipher suites, ALPN protocols, supported versions,
    /// key shares, status request), hashed, not what names the session or
    /// the server; None before one was read (false_start.rs).
    pub fn client_hello_shape(&self) -> Option<u64> {
        use std::hash::{Hash, Hasher};
        let ch = self.client_hello.as_ref()?;
        let mut h = rustc_hash::FxHasher::default();
        (
            ch.legacy_version,
            ch.cipher_suites,
            &ch.alpn,
            &ch.supported_versions,
            &ch.key_share_groups,
            ch.status_request,
        )
            .hash(&mut h);
        Some(h.finish())
    }

    /// The client's TLS stack, as far as its ClientHello shows it: its
    /// shape and its extensions' types (GREASE, padding and what only a
    /// resuming hello carries left out), hashed. Sessions are kept per
    /// stack (one process's cache, or one library's), and one stack's
    /// hellos agree on it (issued_sessions.rs).
    pub(crate) fn client_stack(&self) -> Option<u64> {
        use std::hash::{Hash, Hasher};
        let ch = self.client_hello.as_ref()?;
        let mut h = rustc_hash::FxHasher::default();
        (self.client_hello_shape(), ch.extension_types).hash(&mut h);
        Some(h.finish())
    }

    /// The client's TLS library, as far as its ClientHello shows it: its
    /// cipher suites in order and its supported versions (GREASE values
    /// left out: Chromium draws new ones for each hello), hashed. Coarser than
    /// [`client_stack`](Self::client_stack): one library's hellos differ
    /// in what they ask for (ALPN, a resuming hello's extensions: Apple's
    /// stacks resume without ALPN what they began with it) but offer one
    /// list of suites; another library on the host offers its own.
    pub(crate) fn client_library(&self) -> Option<u64> {
        use std::hash::{Hash, Hasher};
        let ch = self.client_hello.as_ref()?;
        let mut h = rustc_hash::FxHasher::default();
        ch.cipher_list.hash(&mut h);
        for v in ch
            .supported_versions
            .iter()
            .filter(|&&v| !rttdoc_wire::tls::is_grease(v))
        {
            v.hash(&mut h);
        }
        Some(h.finish())
    }

    /// What a server's ticket size is noted and looked up by
    /// (ticket_sizes.rs): the ClientHello's shape and the name it asked
    /// for, hashed; one a snap length cut, by its server alone (every
    /// hello of the capture is cut alike); None before a ClientHello was
    /// seen.
    pub(crate) fn ticket_size_key(&self) -> Option<u64> {
        use std::hash::{Hash, Hasher};
        self.client_hello_at?;
        let shape = self.client_hello_shape().unwrap_or(0);
        let mut h = rustc_hash::FxHasher::default();
        (shape, self.client_hello.as_ref().map(|c| &c.sni)).hash(&mut h);
        Some(h.finish())
    }

    /// A lone server record is held as a possible ticket, until the
    /// next tells (`TicketRun`).
    pub(crate) fn ticket_held(&self) -> bool {
        matches!(self.ticket_run, TicketRun::Held(..))
    }

    /// The tracker has a ticket size to look up or to note
    /// (ticket_sizes.rs).
    fn ticket_size_due(&self) -> bool {
        (!self.ticket_size_looked_up && self.client_hello_at.is_some())
            || (!self.ticket_len_noted && self.ticket_len_seen.is_some())
            || (!self.lone_first_noted && self.lone_first_seen.is_some())
    }

    /// TLS 1.2 and older: the client false started (see `false_start`),
    /// by its version, or by its key exchange where a server Finished
    /// captured after its application data shows it.
    pub fn false_started(&self) -> bool {
        self.false_start || (self.false_start_unless_unseen && self.server_finished.is_some())
    }

    /// Whether the client offered its session ID back: one the same
    /// server issued earlier in the capture (issued_sessions.rs), or, in
    /// TLS 1.2 and older, one the ServerHello echoed to resume it (RFC
    /// 5246 7.4.1.3), with no ticket offered (RFC 5077 3.4: a server that
    /// takes a ticket echoes the ID beside it). The issuing connection may
    /// be before the capture (nDPI's zoom.pcap 1: resumed, its offer
    /// otherwise unseen).
    pub(crate) fn offered_session_id(&self) -> bool {
        self.session_id_offered
            || match (&self.client_hello, &self.server_hello) {
                (Some(ch), Some(sh)) => {
                    !rttdoc_wire::tls::is_tls13(sh.version)
                        && !ch.session_ticket
                        && !sh.session_id.is_empty()
                        && ch.session_id == sh.session_id
                        && self.resumed() == Some(true)
                }
                _ => false,
            }
    }

    /// Whether the session was resumed: a PSK accepted (1.3); in 1.2, an
    /// abbreviated handshake. A full 1.2 handshake shows a Certificate,
    /// ServerKeyExchange, ServerHelloDone or ClientKeyExchange; an
    /// abbreviated one has the server's ChangeCipherSpec right after its
    /// ServerHello, before the client's (in a full one the client changes
    /// ciphers first, after its key exchange). Not seeing a Certificate
    /// proves nothing: the capture may have missed that segment.
    pub fn resumed(&self) -> Option<bool> {
        if let (None, Some(inferred)) = (&self.server_hello, self.inferred) {
            return inferred.resumed;
        }
        let sh = self.server_hello.as_ref()?;
        if rttdoc_wire::tls::is_tls13(sh.version) {
            return Some(sh.pre_shared_key);
        }
        if self.certificate_seen || self.key_exchange_seen {
            return Some(false);
        }
        match (self.change_cipher_spec[1], self.change_cipher_spec[0]) {
            (Some(server), Some(client)) => Some(server.frame < client.frame),
            (None, Some(_)) => Some(false),
            // Only the server's change seen: abbreviated if it also echoed
            // the session the client offered to resume.
            (Some(_), None) => {
                let offered = self.client_hello.as_ref().map(|c| c.session_id.as_slice());
                let echoed = !sh.session_id.is_empty() && offered == Some(sh.session_id.as_slice());
                echoed.then_some(true)
            }
            (None, None) => None,
        }
    }

    /// Whether nothing of the server's handshake has been seen: no
    /// ServerHello, no handshake record it sent (a capture cut at a snap
    /// length keeps a record's header but not the ServerHello in it), and
    /// no second handshake record of the client's (a TLS 1.2
    /// ClientKeyExchange answers a server flight the capture missed).
    /// Only then is the client's application data 0-RTT early data;
    /// otherwise it is its Finished and requests, version unknown.
    fn before_server_flight(&self) -> bool {
        self.server_hello.is_none()
            && self.server_flight_bytes == 0
            && self.client_handshake_records <= 1
    }

    /// Feeds in-order payload bytes of one direction (`missing` bytes after
    /// them were on the wire but not captured).
    pub fn feed(
        &mut self,
        at: Stamp,
        dir: Direction,
        bytes: &[u8],
        missing: usize,
        exchanges: &mut Exchanges,
    ) {
        let d = dir.index();
        // The stream is taken out while its records are read, so each is
        // handled as it ends, its body borrowed (nothing handled here
        // touches the framing).
        let mut records = std::mem::take(&mut self.records[d]);
        // Which application data bodies to keep, decided as the records
        // start (only here): before the server's first flight, client
        // application data is 0-RTT early data (a few bodies kept); a
        // server's, for a key log to decrypt. (Set on the stream taken out,
        // not in place before taking it: a byte stored into the stream
        // just before it is loaded whole stalls the load, a tenth of this
        // method's time on short TLS connections.)
        records.keep_application_data = self.decrypting.is_some()
            || match dir {
                Direction::ClientToServer => {
                    self.before_server_flight() && self.early_data.len() < MAX_EARLY_RECORDS
                }
                Direction::ServerToClient => {
                    self.keep_server_records
                        && self.server_hello.is_some()
                        && self.server_records.len() < MAX_SERVER_RECORDS
                }
            };
        let mut on_record = |r: Record<'_, Stamp>| self.on_record(at, dir, r, exchanges);
        let mut unframed = 0;
        if !bytes.is_empty() {
            unframed += records.feed(bytes, at, &mut on_record);
        }
        if missing > 0 {
            unframed += records.skip(missing, &mut on_record);
        }
        if records.is_broken() {
            self.broken = true;
            if !records.lost_sync() && self.client_finished.is_none() && self.not_tls.is_none() {
                self.not_tls = Some(at);
            }
        }
        // Framing lost to a hole in the capture (segments never captured,
        // fed as missing bytes alone) leaves the bytes up to the next
        // record header where they were but not when they were sent: they
        // are not handed on, until framing is found again. A snap length
        // loses only bytes of segments that were captured, at their time.
        let hole = bytes.is_empty() && missing > 0;
        if hole && unframed > 0 {
            self.framing_lost_to_hole[d] = true;
        } else if !records.is_broken() {
            self.framing_lost_to_hole[d] = false;
        }
        self.records[d] = records;
        if unframed > 0 && !self.framing_lost_to_hole[d] {
            self.on_unframed(at, dir, unframed, exchanges);
        }
        if self.ticket_size_due() {
            exchanges.events |= crate::exchange::TICKET_SIZE;
        }
    }

    /// Whether `dir` is the server's and its handshake is over: what it
    /// sends now is application data (an answer, if a request is open).
    pub(crate) fn server_data_phase(&self, dir: Direction) -> bool {
        dir == Direction::ServerToClient && self.application_data_phase(dir)
    }

    /// Whether the handshake is over for what `dir` sends. The client
    /// sends nothing but application data after its Finished (in TLS 1.2
    /// too: a full handshake's client waits for the server's Finished, a
    /// resumed one has it already). A TLS 1.3 server's flight ends before
    /// the client's Finished; a TLS 1.2 server's with its own Finished,
    /// which in a resumed handshake comes before the client's and in a
    /// full one after it.
    fn application_data_phase(&self, dir: Direction) -> bool {
        let Some(version) = self.version() else {
            return false;
        };
        let client_done = self.client_finished.is_some();
        match dir {
            Direction::ClientToServer => client_done,
            Direction::ServerToClient if rttdoc_wire::tls::is_tls13(version) => client_done,
            Direction::ServerToClient => {
                client_done && (self.server_finished.is_some() || self.resumed() == Some(true))
            }
        }
    }

    /// Bytes a snap length left without record framing (it cut the header
    /// of a record: a request written right after the client's Finished, a
    /// response's second record). Once the handshake is over
    /// they can only be application data (or an alert, which is rare), so
    /// they go to the exchanges as records do; before that they are part
    /// of the handshake, which is timed by its framed records.
    fn on_unframed(&mut self, at: Stamp, dir: Direction, n: usize, exchanges: &mut Exchanges) {
        // Between its ClientHello and the server's flight a client sends
        // nothing but TLS 1.3's compatibility ChangeCipherSpec (6 bytes)
        // and 0-RTT early data: more than that is early data.
        let client = dir == Direction::ClientToServer;
        if client
            && self.client_hello_at.is_some()
            && self.before_server_flight()
            && n > CHANGE_CIPHER_SPEC_RECORD_LEN
        {
            self.early_data_records += 1;
            // Cut by the snap length: its size says nothing of what it held.
            self.early_data_bytes = None;
            self.note_maybe_cut(at, at, dir, TlsMessage::EarlyData, n as u32, true);
            exchanges.on_data(dir, at, at, n as u64, &[]);
            return;
        }
        // The client's flight after the ServerHello ends with its Finished
        // (after a key exchange or EndOfEarlyData, and a ChangeCipherSpec):
        // bytes of that flight without framing hold it, and what lies
        // beyond the largest Finished record is a request sent with it.
        if client && self.server_hello_at.is_some() && self.client_finished.is_none() {
            if self.version().is_none() {
                // What would have told the version is hidden.
                self.version_hidden = true;
                return;
            }
            self.client_finished = Some(at);
            self.note_maybe_cut(at, at, dir, TlsMessage::FinishedEncrypted, n as u32, true);
            let finished = match self.finished_record_len() {
                Some(len) if self.is_tls13() => len as usize + 5,
                _ => MAX_FINISHED_RECORD_LEN,
            };
            if n > finished {
                exchanges.on_data(dir, at, at, (n - finished) as u64, &[]);
            }
            return;
        }
        if !self.application_data_phase(dir) {
            return;
        }
        if self.is_tls13() {
            // Server bytes that are whole records of the held ticket's size
            // are more tickets (two or more share a segment, the snap length
            // keeps the first's header only); anything else is data, and a
            // record held back as a possible ticket was data too.
            let ticket_len = match self.ticket_run {
                TicketRun::Held(_, _, len) | TicketRun::Tickets(len) => Some(len),
                _ => None,
            };
            if let (Direction::ServerToClient, Some(len)) = (dir, ticket_len) {
                let record = len as usize + 5;
                if n.is_multiple_of(record) {
                    if let TicketRun::Held(s0, e0, l0) = self.ticket_run {
                        self.ticket(s0, e0, l0, false);
                    }
                    self.ticket_run = TicketRun::Tickets(len);
                    for _ in 0..n / record {
                        self.ticket(at, at, len, true);
                    }
                    return;
                }
            }
            self.data_after_handshake(dir, exchanges);
        }
        exchanges.on_data(dir, at, at, n as u64, &[]);
    }

    fn note(
        &mut self,
        started: Stamp,
        end: Stamp,
        dir: Direction,
        message: TlsMessage,
        bytes: u32,
    ) {
        self.note_maybe_cut(started, end, dir, message, bytes, false);
    }

    fn note_maybe_cut(
        &mut self,
        started: Stamp,
        end: Stamp,
        dir: Direction,
        message: TlsMessage,
        bytes: u32,
        cut: bool,
    ) {
        if message.is_alert() {
            self.last_alert[dir.index()] = Some(end);
        }
        if self.messages.len() < MAX_MESSAGES {
            if self.messages.capacity() == 0 {
                // A handshake's messages in one allocation.
                self.messages.reserve_exact(16);
            }
            self.messages.push(TlsMessageRef {
                frame: end.frame,
                first_frame: started.frame,
                direction: dir,
                message,
                bytes,
                cut,
            });
        }
    }

    fn on_record(
        &mut self,
        end: Stamp,
        dir: Direction,
        r: Record<'_, Stamp>,
        exchanges: &mut Exchanges,
    ) {
        let len = r.length as u32;
        let client = dir == Direction::ClientToServer;
        if self.server_hello_cut.is_some() && self.inferred.is_none() && !self.version_hidden {
            self.infer_version(dir, &r);
        }
        match r.content_type {
            ct::CHANGE_CIPHER_SPEC => {
                self.change_cipher_spec[dir.index()].get_or_insert(end);
                self.note(r.started, end, dir, TlsMessage::ChangeCipherSpec, len);
            }
            ct::ALERT => {
                let what = match r.body {
                    Some([level, desc]) => TlsMessage::Alert {
                        level: *level,
                        description: *desc,
                    },
                    _ => TlsMessage::AlertEncrypted,
                };
                self.note(r.started, end, dir, what, len);
            }
            ct::HANDSHAKE
                if self.change_cipher_spec[dir.index()].is_some() && self.hello_retry.is_none() =>
            {
                // TLS 1.2: the first handshake record after CCS is Finished.
                // (TLS 1.3 sends a compatibility CCS around a HelloRetryRequest,
                // and the handshake records after it are still plaintext.)
                // Where the server agreed to NPN, a client's first is its
                // NextProtocol, its Finished the next (nDPI's
                // KakaoTalk_chat.pcap 7).
                // (Only a record too small for both: NextProtocol and
                // Finished share one record too, many-protocols.pcap 62's
                // 72 bytes of RC4-SHA, and where the suite's overhead is
                // not known the record is left a Finished.)
                let npn = client
                    && !self.client_next_protocol
                    && self.server_hello.as_ref().is_some_and(|h| h.next_protocol)
                    && self.stream_overhead().is_some_and(|o| {
                        (NEXT_PROTOCOL_LEN..NEXT_PROTOCOL_LEN + FINISHED_LEN)
                            .contains(&len.saturating_sub(o))
                    });
                if npn {
                    self.client_next_protocol = true;
                    self.note(r.started, end, dir, TlsMessage::NextProtocolEncrypted, len);
                    return;
                }
                if client {
                    self.client_finished.get_or_insert(end);
                } else {
                    self.server_finished.get_or_insert(end);
                    self.server_flight_bytes += len;
                }
                self.note(r.started, end, dir, TlsMessage::FinishedEncrypted, len);
            }
            ct::HANDSHAKE => {
                if !client && self.client_finished.is_none() {
                    self.server_flight_bytes += len;
                }
                if client {
                    self.client_handshake_records = self.client_handshake_records.saturating_add(1);
                }
                match r.body {
                    Some(body) => self.on_handshake_body(r.started, end, dir, body),
                    None => {
                        self.handshake[dir.index()].reset();
                        self.on_cut_handshake(end, dir, &r);
                    }
                }
            }
            ct::APPLICATION_DATA if self.opened(r.started, end, dir, &r, exchanges) => {}
            ct::APPLICATION_DATA => {
                if dir == Direction::ServerToClient
                    && self.keep_server_records
                    && self.server_records.len() < MAX_SERVER_RECORDS
                {
                    if let Some(body) = r.body {
                        self.server_records.push((r.started, body.to_vec()));
                    }
                }
                let early = dir == Direction::ClientToServer && self.before_server_flight();
                if let (true, Some(body)) = (early, r.body) {
                    if self.early_data.len() < MAX_EARLY_RECORDS {
                        self.early_data.push(body.to_vec());
                    }
                }
                self.on_encrypted(r.started, end, dir, len, exchanges)
            }
            _ => self.note(
                r.started,
                end,
                dir,
                TlsMessage::OtherRecord(r.content_type),
                len,
            ),
        }
    }

    /// Looks up the session's application keys in `log` once both hellos
    /// are known (TLS 1.3 only).
    pub(crate) fn look_up_keys(&mut self, log: &crate::keylog::KeyLog) {
        if self.keys_looked_up {
            return;
        }
        let (Some(ch), Some(sh)) = (&self.client_hello, &self.server_hello) else {
            return;
        };
        self.keys_looked_up = true;
        let keys = if self.is_tls13() {
            log.app_keys(&ch.random, sh.cipher)
        } else if sh.version == 0x0303 {
            log.tls12_keys(&ch.random, &sh.random, sh.cipher)
        } else {
            None
        };
        self.decrypting = keys.map(|keys| {
            Box::new(Decrypting {
                keys,
                next: [None, None],
                speaks: None,
            })
        });
    }

    /// An application record after the handshake, opened with the
    /// session's keys on an HTTP/2 connection: its frames handed to the
    /// exchanges as they are (h2c.rs reads them), a ticket noted as one.
    /// False when it is not (no keys, a record of the handshake's keys,
    /// another protocol): the records' sizes speak for it then.
    fn opened(
        &mut self,
        started: Stamp,
        end: Stamp,
        dir: Direction,
        r: &Record<'_, Stamp>,
        exchanges: &mut Exchanges,
    ) -> bool {
        // (The handshake's records, early data and 0.5-RTT data before
        // the keys begin are under other keys: they do not open.)
        let (Some(d), Some(body)) = (self.decrypting.as_deref_mut(), r.body) else {
            return false;
        };
        let side = dir.index();
        // Numbers start at 0 under TLS 1.3's traffic keys: the first
        // record that opens as 0 is where they begin (TLS 1.2's at 1, its
        // Finished 0).
        let n = d.next[side].unwrap_or(d.keys.first);
        let Some((plain, inner)) = d.keys.open(side, n, body) else {
            if d.next[side].is_some() {
                // A key update, or a record damaged or lost: the sizes
                // from here on.
                self.decrypting = None;
            }
            return false;
        };
        d.next[side] = Some(n + 1);
        if d.speaks.is_none() && inner == ct::APPLICATION_DATA {
            d.speaks = match dir {
                Direction::ClientToServer if plain.starts_with(b"PRI * HTTP/2.0") => {
                    Some(Speaks::Http2)
                }
                Direction::ClientToServer if crate::exchange::begins_request(&plain) => {
                    Some(Speaks::Http1)
                }
                Direction::ClientToServer => Some(Speaks::Other),
                // (A server that speaks first: HTTP/2's preface, or
                // another protocol's greeting, which the client's first
                // data will tell.)
                Direction::ServerToClient => {
                    crate::h2c::is_settings(&plain).then_some(Speaks::Http2)
                }
            };
        }
        let http = match d.speaks {
            Some(Speaks::Http2 | Speaks::Http1) => true,
            Some(Speaks::Other) => {
                self.decrypting = None;
                return false;
            }
            None => false,
        };
        let len = r.length as u32;
        match inner {
            ct::APPLICATION_DATA if http => {
                exchanges.on_data(dir, started, end, plain.len() as u64, &plain);
            }
            // Until the connection shows HTTP, its data is only counted
            // (the sizes speak for it, as without keys).
            ct::APPLICATION_DATA => return false,
            // (Opened, a ticket is a ticket, whatever the connection turns
            // out to speak: a server sends its tickets when the client's
            // Finished comes, before the request at a server's vantage.)
            ct::HANDSHAKE if dir == Direction::ServerToClient => {
                self.ticket(started, end, len, false)
            }
            ct::ALERT => self.note(started, end, dir, TlsMessage::AlertEncrypted, len),
            _ if http => {}
            _ => return false,
        }
        true
    }

    /// Whether the session's HTTP (its HTTP/2 frames, its HTTP/1.x
    /// requests and answers) was read through its keys.
    pub(crate) fn read_through_keys(&self) -> bool {
        self.decrypting
            .as_ref()
            .is_some_and(|d| matches!(d.speaks, Some(Speaks::Http2 | Speaks::Http1)))
    }

    /// A handshake record whose body a snap length cut: the hellos are
    /// still known by their type byte (each is the first handshake record
    /// its side sends), so the handshake keeps its start and its server
    /// flight; other messages stay unnamed (a record after a cut one may
    /// continue its message).
    fn on_cut_handshake(&mut self, end: Stamp, dir: Direction, r: &Record<'_, Stamp>) {
        let len = r.length as u32;
        let cut = CutHandshake::read(r.cut_body, r.length);
        let what = match (dir, cut) {
            (Direction::ClientToServer, Some(c)) if c.msg_type == ht::CLIENT_HELLO => {
                if self.client_hello_at.is_none() {
                    self.client_hello_at = Some((r.started, end));
                    self.client_hello_bytes = c.msg_len.unwrap_or(len);
                }
                TlsMessage::ClientHello
            }
            (Direction::ServerToClient, Some(c))
                if c.msg_type == ht::SERVER_HELLO
                    && self.server_hello.is_none()
                    && self.server_hello_cut.is_none() =>
            {
                if c.hello_retry_request == Some(true) {
                    self.hello_retry = Some((end, None));
                    TlsMessage::HelloRetryRequest
                } else {
                    self.server_hello_cut = Some(r.version);
                    self.server_hello_at = Some(end);
                    TlsMessage::ServerHello
                }
            }
            _ => TlsMessage::HandshakeNotCaptured,
        };
        let cut = what != TlsMessage::HandshakeNotCaptured;
        self.note_maybe_cut(r.started, end, dir, what, len, cut);
    }

    /// After a ServerHello whose version was cut off, the records that
    /// follow tell it. TLS 1.2 and older send nothing as application data
    /// before both Finished messages, and the client's first handshake
    /// record after the ServerHello is its key exchange (full) or, after
    /// its ChangeCipherSpec, its encrypted Finished (resumed). TLS 1.3
    /// encrypts the rest of the handshake in application-data records
    /// (after an optional compatibility ChangeCipherSpec). A client
    /// handshake record that is a ClientHello answers a HelloRetryRequest.
    fn infer_version(&mut self, dir: Direction, r: &Record<'_, Stamp>) {
        let tls13 = Inferred {
            version: 0x0304,
            resumed: None,
        };
        match (dir, r.content_type) {
            (_, ct::APPLICATION_DATA) => self.inferred = Some(tls13),
            (Direction::ClientToServer, ct::CHANGE_CIPHER_SPEC) => {
                self.after_cut_hello = AfterCutHello::ChangeCipherSpec;
            }
            (Direction::ClientToServer, ct::HANDSHAKE) => {
                let head = r.body.unwrap_or(r.cut_body);
                if head.len() < 4 {
                    // Too little left to tell a second ClientHello from a
                    // key exchange or a Finished.
                    return;
                }
                if CutHandshake::read(head, r.length)
                    .is_some_and(|c| c.msg_type == ht::CLIENT_HELLO)
                {
                    self.cut_hello_was_a_retry_request();
                    return;
                }
                let resumed = self.after_cut_hello == AfterCutHello::ChangeCipherSpec;
                self.inferred = Some(Inferred {
                    version: self.server_hello_cut.unwrap_or(0x0303),
                    resumed: Some(resumed),
                });
            }
            _ => {}
        }
    }

    /// The client sent a second ClientHello: the server's cut hello was a
    /// HelloRetryRequest, and the ServerHello is still to come.
    fn cut_hello_was_a_retry_request(&mut self) {
        if let Some(at) = self.server_hello_at.take() {
            self.hello_retry = Some((at, None));
        }
        self.server_hello_cut = None;
        self.after_cut_hello = AfterCutHello::Nothing;
        if let Some(m) = self.messages.iter_mut().rev().find(|m| {
            m.direction == Direction::ServerToClient
                && m.message == TlsMessage::ServerHello
                && m.cut
        }) {
            m.message = TlsMessage::HelloRetryRequest;
        }
    }

    fn on_encrypted(
        &mut self,
        started: Stamp,
        end: Stamp,
        dir: Direction,
        len: u32,
        exchanges: &mut Exchanges,
    ) {
        let after_server_hello = self
            .server_hello_at
            .is_some_and(|sh| started.frame >= sh.frame);
        if dir == Direction::ClientToServer
            && self.client_finished.is_some()
            && self.server_finished.is_none()
        {
            match self.version() {
                Some(v) if !rttdoc_wire::tls::is_tls13(v) => self.false_start = true,
                Some(_) => {}
                // Its ServerHello not captured, but a key exchange TLS 1.3
                // does not have: False Start once the server's Finished
                // is seen to come after (a capture of the client's packets
                // alone, nDPI's ocs.pcap, shows none whenever it came).
                None => self.false_start_unless_unseen |= self.key_exchange_seen,
            }
        }
        if self.is_tls13() && self.client_finished.is_none() {
            match dir {
                Direction::ServerToClient if !self.server_finished_seen => {
                    self.server_flight_bytes += len;
                    // EncryptedExtensions always comes first, so a record of
                    // exactly a Finished's size after it is the Finished
                    // (one message per record, as OpenSSL writes them). A
                    // resumed flight is EncryptedExtensions + Finished: a
                    // first record big enough for both holds both
                    // (coalesced, as rustls writes them). Handshake and
                    // application data never share a TLS 1.3 record.
                    let fin = self.finished_record_len();
                    let first = self.server_finished.is_none();
                    let resumed = self.server_hello.as_ref().is_some_and(|s| s.pre_shared_key);
                    let is_finished = match fin {
                        Some(fin) if first => resumed && len >= fin + 6,
                        Some(fin) => len == fin,
                        None => false,
                    };
                    self.server_finished = Some(end);
                    self.server_finished_seen = is_finished;
                    let what = if is_finished {
                        TlsMessage::FinishedEncrypted
                    } else {
                        TlsMessage::EncryptedHandshake
                    };
                    self.note(started, end, dir, what, len);
                    return;
                }
                Direction::ServerToClient => {
                    // 0.5-RTT application data after the server's Finished.
                }
                // A first record of EndOfEarlyData's size cannot be a
                // Finished (at least 53 bytes): early data went before it,
                // seen or not (a snap length can hide it in the ClientHello's
                // segment).
                Direction::ClientToServer
                    if after_server_hello
                        && self.early_data_accepted.is_none()
                        && (self.early_data_records > 0 || len == 4 + 1 + self.aead_tag_len()) =>
                {
                    // With early data accepted, the client's next handshake
                    // message is EndOfEarlyData (4 bytes) before Finished.
                    let accepted = len == 4 + 1 + self.aead_tag_len();
                    self.early_data_accepted = Some(accepted);
                    if accepted {
                        self.note(started, end, dir, TlsMessage::EndOfEarlyDataEncrypted, len);
                    } else {
                        self.client_finished = Some(end);
                        self.note(started, end, dir, TlsMessage::FinishedEncrypted, len);
                    }
                    return;
                }
                Direction::ClientToServer if after_server_hello => {
                    self.client_finished = Some(end);
                    self.note(started, end, dir, TlsMessage::FinishedEncrypted, len);
                    return;
                }
                Direction::ClientToServer => {
                    self.early_data(len);
                    self.note(started, end, dir, TlsMessage::EarlyData, len);
                }
            }
        } else if self.is_tls13() && len == ENCRYPTED_ALERT_LEN {
            // TLS 1.3 hides alerts (close_notify at the end of every
            // connection) in application-data records: 2 bytes of alert, 1 of
            // inner type and a 16-byte AEAD tag. Not a request or a response.
            self.note(started, end, dir, TlsMessage::AlertEncrypted, len);
            return;
        } else if self.before_server_flight() && dir == Direction::ClientToServer {
            // Encrypted data before the server's first flight: 0-RTT early
            // data.
            self.early_data(len);
            self.note(started, end, dir, TlsMessage::EarlyData, len);
        } else if self.is_tls13() {
            // One ticket, then the server's HTTP/2 preface: the held record
            // was a ticket, and this one starts the server's frames. So it
            // was when this server's lone first record had its size before
            // (ticket_sizes.rs) and this one came in a later segment (a
            // ticket is the TLS library's write as the handshake ends, the
            // answer the application's; two records in one segment were
            // most likely written together, an answer's headers and body).
            // Otherwise it was data, and its size is noted as a lone first
            // record's when a later segment brought the next.
            if let (Direction::ServerToClient, TicketRun::Held(s0, e0, l0)) = (dir, self.ticket_run)
            {
                let apart = started.frame != e0.frame;
                if l0 != len {
                    if self.preface_after_one_ticket(l0, len)
                        || (apart && self.known_lone_first == Some(l0))
                        || (apart && self.ticket_before_early_answer(s0, e0, started))
                    {
                        self.ticket(s0, e0, l0, false);
                        self.ticket_run = TicketRun::Done;
                    } else if apart {
                        self.lone_first_seen = Some(l0);
                    }
                }
            }
            match (dir, self.ticket_run) {
                // The size this server's tickets were seen to have: one
                // ticket (a resumed handshake's, OpenSSL's), not data.
                (Direction::ServerToClient, TicketRun::Undecided)
                    if self.known_ticket_len == Some(len) =>
                {
                    self.ticket_run = TicketRun::Tickets(len);
                    self.ticket(started, end, len, false);
                    return;
                }
                (Direction::ServerToClient, TicketRun::Undecided) if len <= MAX_TICKET_RECORD => {
                    self.ticket_run = TicketRun::Held(started, end, len);
                    return;
                }
                (Direction::ServerToClient, TicketRun::Held(s0, e0, l0)) if l0 == len => {
                    self.ticket_run = TicketRun::Tickets(len);
                    self.ticket(s0, e0, l0, false);
                    self.ticket(started, end, len, false);
                    return;
                }
                (Direction::ServerToClient, TicketRun::Tickets(l)) if l == len => {
                    self.ticket(started, end, len, false);
                    return;
                }
                _ => self.data_after_handshake(dir, exchanges),
            }
        }
        self.application_record(started, end, dir, len, exchanges);
    }

    /// Hands an application record to the exchanges as what it is to
    /// turns (`http2_record`).
    fn application_record(
        &mut self,
        started: Stamp,
        end: Stamp,
        dir: Direction,
        len: u32,
        exchanges: &mut Exchanges,
    ) {
        let len64 = len as u64;
        match self.http2_record(started, dir, len) {
            Http2Record::Other => exchanges.on_data(dir, started, end, len64, &[]),
            Http2Record::Preface => {
                exchanges.unsolicited_bytes += len64;
                if let Some((frame, bytes)) = self.client_preface_alone.take() {
                    exchanges.withdraw_unanswered(frame, bytes);
                }
            }
            Http2Record::Empty => exchanges.on_empty_frame(dir, started, end, len64),
            Http2Record::ControlSized => exchanges.on_control_sized(dir, started, end, len64),
        }
    }

    /// What an application record of `len` bytes in `dir` is to turns,
    /// on a connection that speaks HTTP/2 (RFC 9113), told by its size
    /// where the suite fixes a record's overhead. Two of HTTP/2's frames
    /// are known by size alone and neither asks nor answers: an empty
    /// frame (9 bytes: a SETTINGS acknowledgment, or the END_STREAM that
    /// closes a stream after its last data), which never begins a request
    /// or an answer (each begins with a HEADERS frame, never empty); and
    /// the server's connection preface (SETTINGS of up to 12 settings, 6
    /// bytes each, with a WINDOW_UPDATE or not), which it sends as its
    /// handshake ends, whatever was asked. Taken as turns, a browser's
    /// first request (sent with its preface, before the server's arrives)
    /// was "answered" by the server's SETTINGS and its SETTINGS
    /// acknowledgment "asked" for the real answer (tls2.pcap stream 100),
    /// and the END_STREAM of one answer, written as the next request came
    /// in, "answered" that request (nginx with curl, TLS 1.3).
    fn http2_record(&mut self, started: Stamp, dir: Direction, len: u32) -> Http2Record {
        let Some(plain) = self.record_overhead().and_then(|o| len.checked_sub(o)) else {
            return Http2Record::Other;
        };
        let first_from_client =
            dir == Direction::ClientToServer && self.client_first_record.is_none();
        if first_from_client {
            self.client_first_record = Some(started.frame);
            let offered = self
                .client_hello
                .as_ref()
                .is_some_and(|c| rttdoc_wire::tls::offers_h2(&c.alpn));
            let chosen = self.server_hello.as_ref().is_some_and(|s| s.alpn_h2);
            // The client's preface: 24 bytes of magic, then SETTINGS and
            // perhaps a WINDOW_UPDATE (it has no server SETTINGS to
            // acknowledge yet), sent as one record by browsers and curl.
            let preface_alone =
                offered && plain >= 24 && client_preface_sized_with_priorities(plain - 24);
            self.http2_maybe = chosen || preface_alone || (offered && self.is_tls13());
            self.spdy_maybe =
                self.client_next_protocol && self.server_hello.as_ref().is_some_and(|s| s.npn_spdy);
            // Taken for a request until the server's preface shows the
            // connection speaks HTTP/2 (an HTTP/1.1 request can be that
            // size too): then it asked nothing (a browser's preconnect
            // sends no HEADERS).
            if preface_alone {
                self.client_preface_alone = Some((started.frame, len as u64));
            }
            return Http2Record::Other;
        }
        // The server's first record begun after the client's first: what
        // it sent before that (its flight, 0.5-RTT data) answers nothing
        // anyway.
        if dir == Direction::ServerToClient && self.client_first_record.is_none() {
            self.server_spoke_first = true;
        }
        let first_from_server = dir == Direction::ServerToClient
            && !self.server_first_record_seen
            && !self.server_spoke_first
            && self.client_first_record.is_some_and(|c| started.frame > c);
        self.server_first_record_seen |= first_from_server;
        // An HTTP/1.x status line or request line is longer than 9 bytes,
        // and no request is 13 or 17: those sizes are HTTP/2's frames on a
        // connection that may speak it. So is the server's first record of
        // a preface's size (at most 103 bytes: no HTTP/1.x response with
        // the headers servers send is that short).
        if self.spdy_maybe && dir == Direction::ServerToClient {
            let after_preface = std::mem::take(&mut self.after_spdy_preface);
            let settings = |n: u32| n >= 20 && (n - 12).is_multiple_of(8) && (n - 12) / 8 <= 10;
            let preface = (first_from_server
                && (settings(plain) || (plain >= 36 && settings(plain - 16))))
                || (after_preface && plain == 16);
            if preface {
                self.after_spdy_preface = first_from_server;
                return Http2Record::Preface;
            }
        }
        match (self.http2_maybe, plain) {
            (false, _) => Http2Record::Other,
            (true, 9) => Http2Record::Empty,
            (true, n) if first_from_server && preface_sized(n) => Http2Record::Preface,
            (true, 13 | 17) if dir == Direction::ClientToServer => Http2Record::ControlSized,
            _ => Http2Record::Other,
        }
    }

    /// Whether a server record held as a possible ticket (`held` bytes)
    /// was one ticket and the record after it (`len` bytes) the server's
    /// HTTP/2 preface: on a connection that may speak HTTP/2, the server's
    /// first records after the client's first, the second of a preface's
    /// size and the first not, but of a ticket's.
    fn preface_after_one_ticket(&self, held: u32, len: u32) -> bool {
        let Some(overhead) = self.record_overhead() else {
            return false;
        };
        let plain = |n: u32| n.checked_sub(overhead);
        self.http2_maybe
            && self.client_first_record.is_some()
            && !self.server_first_record_seen
            && !self.server_spoke_first
            && plain(len).is_some_and(preface_sized)
            && plain(held).is_some_and(|p| p >= MIN_TICKET_BYTES && !preface_sized(p))
    }

    /// Bytes an application record adds to what it carries, where the
    /// suite fixes them: TLS 1.3 (inner content type and tag), TLS 1.2
    /// AES-GCM (explicit nonce and tag), ChaCha20-Poly1305 (tag). None for
    /// CBC suites (their padding varies) and others.
    /// [`TlsSession::record_overhead`], and RC4's (a stream cipher: its
    /// MAC alone) before TLS 1.3.
    fn stream_overhead(&self) -> Option<u32> {
        let cipher = self.server_hello.as_ref()?.cipher;
        rttdoc_wire::tls::stream_cipher_overhead(cipher)
            .filter(|_| !self.is_tls13())
            .or_else(|| self.record_overhead())
    }

    fn record_overhead(&self) -> Option<u32> {
        let cipher = self.server_hello.as_ref()?.cipher;
        if self.is_tls13() {
            return Some(1 + self.aead_tag_len());
        }
        match cipher {
            0x009c..=0x00ad | 0xc02b..=0xc032 => Some(8 + 16),
            0xcca8..=0xccae => Some(16),
            _ => None,
        }
    }

    /// TLS 1.3 application data in `dir` that is no ticket: the server's
    /// ends a run of tickets; the client's (a request) does not (the
    /// tickets answer its Finished, not its request), but a record held
    /// back as a possible ticket goes first, to keep the order.
    fn data_after_handshake(&mut self, dir: Direction, exchanges: &mut Exchanges) {
        self.client_wrote_after_handshake |= dir == Direction::ClientToServer;
        if let (Direction::ServerToClient, _) | (_, TicketRun::Held(..)) = (dir, self.ticket_run) {
            let held = match self.ticket_run {
                TicketRun::Held(s0, ..) => Some(s0.frame),
                _ => None,
            };
            self.end_ticket_run(exchanges);
            // A lone record held as a possible ticket until the client
            // spoke is as likely the ticket a TLS 1.3 server writes as its
            // handshake ends (one, not OpenSSL's two) as a greeting: not
            // taken for one.
            if let (Direction::ClientToServer, Some(frame)) = (dir, held) {
                exchanges.not_a_greeting(frame);
            }
        }
    }

    /// Whether the lone server record held as a possible ticket (from
    /// `s0` to `e0`), followed by another of a different size from
    /// `next`, was a ticket where no sibling told its size: the client's
    /// request rode in 0-RTT early data that the server took, nothing of
    /// the client's came after its Finished, the record came after that
    /// Finished, and the next came in a later write, after a silence at
    /// least twice as long as the record took to follow the Finished (and
    /// 1 ms at least). A TLS 1.3 library writes its ticket the moment the
    /// client's Finished arrives (Facebook's Fizz, Go, Java: one, alone);
    /// a server that held the early request until then (early_data.rs)
    /// had its answer ready and writes it whole, its headers and body
    /// together, not one small record and, a silence later, the rest.
    /// (nDPI's instagram.pcap 28: a 173-byte record 10 ms after the
    /// client's Finished, its answer's 768-byte headers 170 ms later, the
    /// 173 bytes every connection's first record.)
    fn ticket_before_early_answer(&self, s0: Stamp, e0: Stamp, next: Stamp) -> bool {
        let Some(finished) = self.client_finished else {
            return false;
        };
        let lead = s0.ts_ns - finished.ts_ns;
        let silence = next.ts_ns - e0.ts_ns;
        self.early_data_accepted == Some(true)
            && self.early_data_records > 0
            && !self.client_wrote_after_handshake
            && finished.frame < s0.frame
            && silence >= (2 * lead.max(0)).max(1_000_000)
    }

    /// A session ticket; `cut`: known by its size alone (its record
    /// header was cut away with the rest of a segment).
    fn ticket(&mut self, started: Stamp, end: Stamp, len: u32, cut: bool) {
        self.tickets_after_handshake += 1;
        self.ticket_len_seen = Some(len);
        let what = TlsMessage::NewSessionTicketEncrypted;
        let server = Direction::ServerToClient;
        self.note_maybe_cut(started, end, server, what, len, cut);
    }

    /// Application data has begun (or the connection ended): a record held
    /// back as a possible ticket was data after all.
    fn end_ticket_run(&mut self, exchanges: &mut Exchanges) {
        if let TicketRun::Held(s0, e0, l0) = self.ticket_run {
            // A TLS 1.3 server's first record is held as a possible
            // ticket: it may be its HTTP/2 preface.
            self.application_record(s0, e0, Direction::ServerToClient, l0, exchanges);
        }
        self.ticket_run = TicketRun::Done;
    }

    /// The server's record held back as a possible ticket, if one is:
    /// where it began and ended (the answer a connection's end found still
    /// undecided, reuse.rs).
    pub(crate) fn held_record(&self) -> Option<(Stamp, Stamp)> {
        match self.ticket_run {
            TicketRun::Held(s0, e0, _) => Some((s0, e0)),
            _ => None,
        }
    }

    /// The connection ended: release what is still held back.
    pub fn finish(&mut self, exchanges: &mut Exchanges) {
        self.end_ticket_run(exchanges);
    }

    /// AEAD tag bytes of the negotiated TLS 1.3 suite (CCM_8: 8, else 16).
    /// One whole early-data record of `len` body bytes.
    fn early_data(&mut self, len: u32) {
        if self.early_data_records == 0 {
            self.early_data_bytes = Some(0);
        }
        self.early_data_records += 1;
        self.early_data_bytes = self.early_data_bytes.map(|b| b.saturating_add(len));
    }

    /// The client's 0-RTT early data held HTTP/2's connection preface and
    /// nothing else: it offered `h2`, and the records' plaintext together
    /// has the preface's size (24 bytes of magic, SETTINGS, perhaps a
    /// WINDOW_UPDATE and PRIORITY frames: Firefox sends the preface as
    /// soon as the handshake starts, before it has a request). No request
    /// rode in it, so it saved no round trip.
    pub fn early_data_preface_only(&self) -> bool {
        let offered_h2 = self
            .client_hello
            .as_ref()
            .is_some_and(|c| rttdoc_wire::tls::offers_h2(&c.alpn));
        let overhead = (1 + self.aead_tag_len()) * self.early_data_records;
        offered_h2
            && self.early_data_records > 0
            && self
                .early_data_bytes
                .and_then(|b| b.checked_sub(overhead))
                .is_some_and(|plain| {
                    plain >= 24 && client_preface_sized_with_priorities(plain - 24)
                })
    }

    fn aead_tag_len(&self) -> u32 {
        match self.server_hello.as_ref().map(|s| s.cipher) {
            Some(0x1305) => 8,
            _ => 16,
        }
    }

    /// Size of a TLS 1.3 Finished record's payload: message header,
    /// verify_data (the suite's hash length), inner content type, tag.
    fn finished_record_len(&self) -> Option<u32> {
        let hash = match self.server_hello.as_ref()?.cipher {
            0x1302 => 48,
            0x1301 | 0x1303 | 0x1304 | 0x1305 => 32,
            _ => return None,
        };
        Some(4 + hash + 1 + self.aead_tag_len())
    }

    fn on_handshake_body(&mut self, started: Stamp, end: Stamp, dir: Direction, body: &[u8]) {
        // Taken out while its messages are read (each handled as it is
        // completed, in place; nothing handled here touches the joining).
        let mut reader = std::mem::take(&mut self.handshake[dir.index()]);
        reader.feed(body, |m| self.on_handshake_message(started, end, dir, m));
        self.handshake[dir.index()] = reader;
    }

    fn on_handshake_message(
        &mut self,
        started: Stamp,
        end: Stamp,
        dir: Direction,
        m: HandshakeMessage<'_>,
    ) {
        let (msg_type, raw, size) = (m.msg_type, m.raw, m.body.len() as u32 + 4);
        let name = match msg_type {
            ht::CLIENT_HELLO => {
                if self.client_hello.is_none() {
                    self.client_hello = ClientHello::parse(raw);
                    self.client_hello_at = Some((started, end));
                    self.client_hello_bytes = size;
                }
                TlsMessage::ClientHello
            }
            ht::SERVER_HELLO => match ServerHello::parse(raw) {
                Some(sh) if sh.hello_retry_request => {
                    self.hello_retry = Some((end, sh.key_share_group));
                    TlsMessage::HelloRetryRequest
                }
                Some(sh) => {
                    self.server_hello = Some(sh);
                    self.server_hello_at = Some(end);
                    TlsMessage::ServerHello
                }
                None => TlsMessage::ServerHelloUnparsed,
            },
            ht::CERTIFICATE => {
                if dir == Direction::ServerToClient {
                    self.certificate_seen = true;
                    // (In the clear before TLS 1.3 only; read once.)
                    let clear = self
                        .server_hello
                        .as_ref()
                        .is_some_and(|sh| !rttdoc_wire::tls::is_tls13(sh.version));
                    if clear && self.server_certificates.is_none() {
                        self.server_certificates =
                            rttdoc_wire::tls::CertificateChain::parse(raw).map(|c| (c, end.frame));
                    }
                }
                TlsMessage::Certificate
            }
            ht::SERVER_KEY_EXCHANGE => {
                self.key_exchange_seen = true;
                if let Some(sh) = &self.server_hello {
                    self.server_key_exchange =
                        rttdoc_wire::tls::ServerKeyExchange::parse(raw, sh.version, sh.cipher);
                }
                TlsMessage::ServerKeyExchange
            }
            ht::CERTIFICATE_REQUEST => {
                self.key_exchange_seen = true;
                TlsMessage::CertificateRequest
            }
            ht::SERVER_HELLO_DONE => {
                self.key_exchange_seen = true;
                TlsMessage::ServerHelloDone
            }
            ht::CERTIFICATE_VERIFY => TlsMessage::CertificateVerify,
            ht::CLIENT_KEY_EXCHANGE => {
                self.key_exchange_seen = true;
                TlsMessage::ClientKeyExchange
            }
            ht::NEW_SESSION_TICKET => TlsMessage::NewSessionTicket,
            ht::ENCRYPTED_EXTENSIONS => TlsMessage::EncryptedExtensions,
            ht::END_OF_EARLY_DATA => TlsMessage::EndOfEarlyData,
            ht::FINISHED => TlsMessage::Finished,
            ht::CERTIFICATE_STATUS => TlsMessage::CertificateStatus,
            other => TlsMessage::OtherHandshake(other),
        };
        self.note(started, end, dir, name, size);
    }
}

#[cfg(test)]
mod tests {
    //! A capture cut at a snap length, as specifications: each record's
    //! header and the first bytes of its body survive, or only part of a
    //! segment's records do; what the session still knows, and what it
    //! must not make up.
    use super::*;
    use rttdoc_wire::tls::content_type as ct;
    use Direction::{ClientToServer as C, ServerToClient as S};

    #[test]
    fn http2_preface_sizes() {
        // SETTINGS with 3 settings (27 bytes), with a WINDOW_UPDATE (40),
        // and a server's with its acknowledgment of the client's (49).
        assert!(client_preface_sized(27) && client_preface_sized(40));
        assert!(!client_preface_sized(49) && preface_sized(49));
        // Sizes no SETTINGS (and WINDOW_UPDATE) make.
        assert!(!preface_sized(10) && !preface_sized(11) && !preface_sized(200));
    }

    fn at(frame: u64) -> Stamp {
        Stamp {
            frame,
            ts_ns: frame as i64 * 10_000_000,
        }
    }

    fn record(content_type: u8, version: u16, body: &[u8]) -> Vec<u8> {
        let mut r = vec![content_type];
        r.extend_from_slice(&version.to_be_bytes());
        r.extend_from_slice(&(body.len() as u16).to_be_bytes());
        r.extend_from_slice(body);
        r
    }

    /// A handshake message of `len` bytes of body.
    fn message(msg_type: u8, len: usize) -> Vec<u8> {
        let mut m = vec![msg_type, 0, (len >> 8) as u8, len as u8];
        m.resize(4 + len, 0x5a);
        m
    }

    fn handshake(msg_type: u8, len: usize) -> Vec<u8> {
        record(ct::HANDSHAKE, 0x0303, &message(msg_type, len))
    }

    fn ccs() -> Vec<u8> {
        record(ct::CHANGE_CIPHER_SPEC, 0x0303, &[1])
    }

    fn encrypted(len: usize) -> Vec<u8> {
        record(ct::APPLICATION_DATA, 0x0303, &vec![0x77; len])
    }

    struct Capture {
        tls: TlsSession,
        exchanges: Exchanges,
        snap: usize,
    }

    impl Capture {
        /// A capture that keeps the first `snap` payload bytes of each segment.
        fn new(snap: usize) -> Capture {
            Capture {
                tls: TlsSession::default(),
                exchanges: Exchanges::default(),
                snap,
            }
        }

        /// One segment of these records, cut at the snap length.
        fn segment(&mut self, frame: u64, dir: Direction, records: &[Vec<u8>]) {
            let payload = records.concat();
            let kept = payload.len().min(self.snap);
            let missing = payload.len() - kept;
            let exchanges = &mut self.exchanges;
            self.tls
                .feed(at(frame), dir, &payload[..kept], missing, exchanges);
        }

        /// A segment the capture never held (a hole, not a snap length).
        fn hole(&mut self, frame: u64, dir: Direction, len: usize) {
            let exchanges = &mut self.exchanges;
            self.tls.feed(at(frame), dir, &[], len, exchanges);
        }

        fn exchanges(&mut self) -> Vec<(u64, Option<u64>, u64)> {
            self.tls.finish(&mut self.exchanges);
            self.exchanges.finish();
            self.exchanges
                .kept
                .iter()
                .map(|x| {
                    let first = x.response_first.map(|s| s.frame);
                    (x.request_first.frame, first, x.request_bytes)
                })
                .collect()
        }

        fn cut_messages(&self) -> Vec<(u64, TlsMessage)> {
            let cut = self.tls.messages.iter().filter(|m| m.cut);
            cut.map(|m| (m.frame, m.message)).collect()
        }
    }

    /// Bytes that are no TLS record before the client's Finished make the
    /// hello a lookalike (nDPI's skype.pcap: an SSL 2.0-format hello, then
    /// Skype's own 48 bytes); after the handshake they say nothing of it,
    /// nor does framing lost to a hole in the capture (a segment never
    /// captured, its bytes skipped in the middle of a header).
    #[test]
    fn bytes_that_are_no_record_before_the_finished_make_a_lookalike() {
        let mut cap = Capture::new(usize::MAX);
        cap.segment(1, C, &[handshake(ht::CLIENT_HELLO, 300)]);
        cap.segment(2, C, &[vec![0x8e; 48]]);
        assert_eq!(cap.tls.not_tls.map(|s| s.frame), Some(2));
        // The same after a whole handshake: a lookalike it is not.
        let mut cap = Capture::new(usize::MAX);
        cap.segment(1, C, &[handshake(ht::CLIENT_HELLO, 300)]);
        let finished = || record(ct::HANDSHAKE, 0x0303, &[0x33; 40]);
        cap.segment(2, S, &[handshake(ht::SERVER_HELLO, 80), ccs(), finished()]);
        cap.segment(3, C, &[ccs(), finished()]);
        assert_eq!(cap.tls.client_finished.map(|s| s.frame), Some(3));
        cap.segment(4, C, &[vec![0x8e; 48]]);
        assert!(cap.tls.broken);
        assert_eq!(cap.tls.not_tls, None);
        // A hole inside a record header loses framing, not TLS.
        let mut cap = Capture::new(usize::MAX);
        cap.segment(1, C, &[handshake(ht::CLIENT_HELLO, 300)]);
        cap.hole(2, S, 3);
        assert_eq!(cap.tls.not_tls, None);
    }

    /// TLS 1.3 under `tcpdump -s 96` (30 payload bytes): the hellos keep
    /// their type bytes, the server's encrypted records are gone with the
    /// rest of its segment, and the client's encrypted Finished after the
    /// cut ServerHello tells the version. The request written behind the
    /// Finished lost its header, and is a request still.
    #[test]
    fn a_cut_tls13_handshake_keeps_its_hellos_and_its_version_from_the_records() {
        let mut cap = Capture::new(30);
        cap.segment(1, C, &[handshake(ht::CLIENT_HELLO, 300)]);
        let flight = [handshake(ht::SERVER_HELLO, 118), ccs(), encrypted(2000)];
        cap.segment(2, S, &flight);
        cap.segment(3, C, &[ccs(), encrypted(53), encrypted(120)]);
        cap.segment(4, S, &[encrypted(400)]);
        let t = &cap.tls;
        assert_eq!(t.version(), Some(0x0304));
        assert!(t.version_inferred());
        assert_eq!(
            t.client_hello_at.map(|(a, b)| (a.frame, b.frame)),
            Some((1, 1))
        );
        assert_eq!(t.client_hello_bytes, 304);
        assert_eq!(t.server_hello_at.map(|s| s.frame), Some(2));
        assert_eq!(t.client_finished.map(|s| s.frame), Some(3));
        let cut = cap.cut_messages();
        assert_eq!(
            cut,
            [(1, TlsMessage::ClientHello), (2, TlsMessage::ServerHello)]
        );
        // The request: its record (125 bytes) behind the Finished.
        assert_eq!(cap.exchanges(), [(3, Some(4), 125)]);
    }

    /// TLS 1.2: the client's first handshake record after the cut
    /// ServerHello is its key exchange (full); after its ChangeCipherSpec it
    /// is its encrypted Finished (resumed). The version is the server
    /// record layer's.
    #[test]
    fn a_cut_tls12_handshake_is_full_or_resumed_by_the_clients_next_records() {
        // Full: ServerHello ... ServerHelloDone, then ClientKeyExchange.
        let mut cap = Capture::new(30);
        cap.segment(1, C, &[handshake(ht::CLIENT_HELLO, 200)]);
        let sh = record(ct::HANDSHAKE, 0x0302, &message(ht::SERVER_HELLO, 70));
        cap.segment(2, S, &[sh.clone(), handshake(ht::CERTIFICATE, 900)]);
        let cke = handshake(ht::CLIENT_KEY_EXCHANGE, 33);
        cap.segment(3, C, &[cke, ccs(), handshake(0x9c, 36)]);
        cap.segment(4, S, &[ccs(), handshake(0x3e, 36)]);
        cap.segment(5, C, &[encrypted(300)]);
        cap.segment(6, S, &[encrypted(900)]);
        assert_eq!(cap.tls.version(), Some(0x0302));
        assert_eq!(cap.tls.resumed(), Some(false));
        assert_eq!(cap.tls.server_finished.map(|s| s.frame), Some(4));
        // A framed record counts its body.
        assert_eq!(cap.exchanges(), [(5, Some(6), 300)]);

        // Resumed: the server's ChangeCipherSpec and Finished are lost
        // behind its cut ServerHello; the client changes ciphers first.
        let mut cap = Capture::new(30);
        cap.segment(1, C, &[handshake(ht::CLIENT_HELLO, 200)]);
        cap.segment(2, S, &[sh, ccs(), handshake(0x3e, 36)]);
        cap.segment(3, C, &[ccs(), handshake(0x9c, 36), encrypted(300)]);
        cap.segment(4, S, &[encrypted(900)]);
        assert_eq!(cap.tls.version(), Some(0x0302));
        assert_eq!(cap.tls.resumed(), Some(true));
        assert_eq!(cap.tls.client_finished.map(|s| s.frame), Some(3));
        // The request behind the client's Finished, counted with its
        // header (where one record ends is unknown).
        assert_eq!(cap.exchanges(), [(3, Some(4), 305)]);
    }

    /// A second ClientHello after a cut server hello makes that hello a
    /// HelloRetryRequest (with its random captured, it is known at once).
    #[test]
    fn a_second_client_hello_makes_the_cut_server_hello_a_retry_request() {
        // Enough for the second ClientHello's message header behind the
        // client's ChangeCipherSpec, not for a hello's random.
        let mut cap = Capture::new(15);
        cap.segment(1, C, &[handshake(ht::CLIENT_HELLO, 200)]);
        cap.segment(2, S, &[handshake(ht::SERVER_HELLO, 80), ccs()]);
        assert_eq!(cap.tls.server_hello_at.map(|s| s.frame), Some(2));
        cap.segment(3, C, &[ccs(), handshake(ht::CLIENT_HELLO, 230)]);
        assert_eq!(cap.tls.hello_retry.map(|(s, _)| s.frame), Some(2));
        assert_eq!(cap.tls.server_hello_at, None);
        // Only TLS 1.3 retries a hello.
        assert_eq!(cap.tls.version(), Some(0x0304));
        cap.segment(4, S, &[handshake(ht::SERVER_HELLO, 118), encrypted(900)]);
        cap.segment(5, C, &[encrypted(53)]);
        assert_eq!(cap.tls.version(), Some(0x0304));
        assert_eq!(cap.tls.server_hello_at.map(|s| s.frame), Some(4));
        assert_eq!(cap.tls.client_finished.map(|s| s.frame), Some(5));
        assert_eq!(
            cap.cut_messages(),
            [
                (1, TlsMessage::ClientHello),
                (2, TlsMessage::HelloRetryRequest),
                (3, TlsMessage::ClientHello),
                (4, TlsMessage::ServerHello)
            ]
        );

        // The HelloRetryRequest's random: SHA-256("HelloRetryRequest").
        let mut hrr = message(ht::SERVER_HELLO, 80);
        hrr[6..38].copy_from_slice(&[
            0xcf, 0x21, 0xad, 0x74, 0xe5, 0x9a, 0x61, 0x11, 0xbe, 0x1d, 0x8c, 0x02, 0x1e, 0x65,
            0xb8, 0x91, 0xc2, 0xa2, 0x11, 0x16, 0x7a, 0xbb, 0x8c, 0x5e, 0x07, 0x9e, 0x09, 0xe2,
            0xc8, 0xa8, 0x33, 0x9c,
        ]);
        let mut cap = Capture::new(60);
        cap.segment(1, C, &[handshake(ht::CLIENT_HELLO, 200)]);
        cap.segment(2, S, &[record(ct::HANDSHAKE, 0x0303, &hrr)]);
        assert_eq!(cap.tls.hello_retry.map(|(s, _)| s.frame), Some(2));
        assert_eq!(cap.tls.server_hello_at, None);
    }

    /// When the client's records after the cut ServerHello are cut away
    /// too, nothing tells the version: none is made up, and later records
    /// do not end a handshake that was never seen to end.
    #[test]
    fn a_version_the_cut_hid_stays_unknown() {
        let mut cap = Capture::new(30);
        cap.segment(1, C, &[handshake(ht::CLIENT_HELLO, 200)]);
        cap.segment(2, S, &[handshake(ht::SERVER_HELLO, 118), encrypted(900)]);
        // The client's flight: its first record header is cut after 2 bytes.
        cap.snap = 2;
        cap.segment(3, C, &[ccs(), encrypted(53), encrypted(120)]);
        cap.snap = 30;
        cap.segment(4, S, &[encrypted(400)]);
        cap.segment(5, C, &[encrypted(19)]);
        assert_eq!(cap.tls.version(), None);
        assert_eq!(cap.tls.client_finished, None);
    }

    /// 0-RTT: the early data behind a cut ClientHello is more than a
    /// compatibility ChangeCipherSpec could be; a ChangeCipherSpec alone is
    /// not early data.
    #[test]
    fn bytes_behind_a_cut_client_hello_are_early_data_only_beyond_a_change_cipher_spec() {
        let mut cap = Capture::new(30);
        let ch = handshake(ht::CLIENT_HELLO, 400);
        cap.segment(1, C, &[ch.clone(), ccs(), encrypted(80)]);
        assert_eq!(cap.tls.early_data_records, 1);
        assert_eq!(
            cap.cut_messages(),
            [(1, TlsMessage::ClientHello), (1, TlsMessage::EarlyData)]
        );
        assert_eq!(cap.exchanges(), [(1, None, 6 + 85)]);

        let mut cap = Capture::new(30);
        cap.segment(1, C, &[ch, ccs()]);
        assert_eq!(cap.tls.early_data_records, 0);
        assert_eq!(cap.exchanges(), []);
    }

    /// TLS 1.3 servers send two tickets back to back, in one segment: the
    /// snap length keeps the first's header; the rest of the segment is
    /// whole records of that size, so tickets too, not a response.
    #[test]
    fn tickets_sharing_a_cut_segment_are_tickets_not_an_answer() {
        let mut cap = Capture::new(30);
        cap.segment(1, C, &[handshake(ht::CLIENT_HELLO, 300)]);
        cap.segment(2, S, &[handshake(ht::SERVER_HELLO, 118), encrypted(2000)]);
        cap.segment(3, C, &[encrypted(53)]);
        cap.segment(4, C, &[encrypted(120)]);
        cap.segment(5, S, &[encrypted(250), encrypted(250)]);
        cap.segment(6, S, &[encrypted(400)]);
        assert_eq!(cap.tls.tickets_after_handshake, 2);
        assert_eq!(cap.exchanges(), [(4, Some(6), 120)]);
        // A different size behind the first: data, and the first with it.
        let mut cap = Capture::new(30);
        cap.segment(1, C, &[handshake(ht::CLIENT_HELLO, 300)]);
        cap.segment(2, S, &[handshake(ht::SERVER_HELLO, 118), encrypted(2000)]);
        cap.segment(3, C, &[encrypted(53)]);
        cap.segment(4, C, &[encrypted(120)]);
        cap.segment(5, S, &[encrypted(250), encrypted(700)]);
        assert_eq!(cap.tls.tickets_after_handshake, 0);
        assert_eq!(cap.exchanges(), [(4, Some(5), 120)]);
    }

    /// A TLS 1.3 ClientHello record (supported_versions only).
    fn client_hello13() -> Vec<u8> {
        let mut body = vec![3, 3];
        body.extend_from_slice(&[0x11; 32]);
        body.extend_from_slice(&[0, 0, 2, 0x13, 0x01, 1, 0]);
        body.extend_from_slice(&[0, 7, 0, 43, 0, 3, 2, 3, 4]);
        let mut m = vec![ht::CLIENT_HELLO, 0, 0, body.len() as u8];
        m.extend(body);
        record(ct::HANDSHAKE, 0x0301, &m)
    }

    /// A TLS 1.3 ServerHello record accepting a PSK (AES-128-GCM).
    fn server_hello13() -> Vec<u8> {
        let mut body = vec![3, 3];
        body.extend_from_slice(&[0x33; 32]);
        body.extend_from_slice(&[0, 0x13, 0x01, 0]);
        let mut exts = vec![0, 43, 0, 2, 3, 4, 0, 51, 0, 36, 0, 0x1d, 0, 32];
        exts.extend_from_slice(&[0x24; 32]);
        exts.extend_from_slice(&[0, 41, 0, 2, 0, 0]);
        body.extend_from_slice(&(exts.len() as u16).to_be_bytes());
        body.extend(exts);
        let mut m = vec![ht::SERVER_HELLO, 0, 0, body.len() as u8];
        m.extend(body);
        record(ct::HANDSHAKE, 0x0303, &m)
    }

    /// A TLS 1.2 ServerHello (ECDHE-RSA, AES-128-GCM) with `exts`.
    fn server_hello12(exts: &[u8]) -> Vec<u8> {
        let mut body = vec![3, 3];
        body.extend_from_slice(&[0x33; 32]);
        body.extend_from_slice(&[0, 0xc0, 0x2f, 0]);
        body.extend_from_slice(&(exts.len() as u16).to_be_bytes());
        body.extend_from_slice(exts);
        let mut m = vec![ht::SERVER_HELLO, 0, 0, body.len() as u8];
        m.extend(body);
        record(ct::HANDSHAKE, 0x0303, &m)
    }

    /// Where the server agreed to NPN (its ServerHello's extension
    /// 13172), the client's first encrypted handshake record after its
    /// ChangeCipherSpec is its NextProtocol and the second its Finished
    /// (nDPI's KakaoTalk_chat.pcap 7: 60 and 40 bytes in one segment);
    /// without NPN the first is the Finished.
    #[test]
    fn a_clients_next_protocol_comes_before_its_finished() {
        let client_messages = |npn: bool| {
            let mut c = Capture::new(usize::MAX);
            c.segment(1, C, &[handshake(ht::CLIENT_HELLO, 200)]);
            let exts: &[u8] = if npn { &[0x33, 0x74, 0, 0] } else { &[] };
            c.segment(
                2,
                S,
                &[server_hello12(exts), handshake(ht::CERTIFICATE, 900)],
            );
            let finished = record(ct::HANDSHAKE, 0x0303, &[0x5a; 40]);
            let next_protocol = record(ct::HANDSHAKE, 0x0303, &[0x5a; 60]);
            c.segment(
                3,
                C,
                &[
                    handshake(ht::CLIENT_KEY_EXCHANGE, 66),
                    ccs(),
                    next_protocol,
                    finished,
                ],
            );
            c.tls
                .messages
                .iter()
                .filter(|m| m.direction == C && m.frame == 3)
                .map(|m| m.message)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            client_messages(true),
            [
                TlsMessage::ClientKeyExchange,
                TlsMessage::ChangeCipherSpec,
                TlsMessage::NextProtocolEncrypted,
                TlsMessage::FinishedEncrypted
            ]
        );
        assert_eq!(
            client_messages(false)[2..],
            [TlsMessage::FinishedEncrypted, TlsMessage::FinishedEncrypted]
        );
        // Both in one record (36 + 16 bytes and AES-GCM's 24: 76): it
        // holds the Finished (many-protocols.pcap 62, RC4's 72).
        let mut c = Capture::new(usize::MAX);
        c.segment(1, C, &[handshake(ht::CLIENT_HELLO, 200)]);
        c.segment(
            2,
            S,
            &[
                server_hello12(&[0x33, 0x74, 0, 0]),
                handshake(ht::CERTIFICATE, 900),
            ],
        );
        let both = record(ct::HANDSHAKE, 0x0303, &[0x5a; 76]);
        c.segment(3, C, &[handshake(ht::CLIENT_KEY_EXCHANGE, 66), ccs(), both]);
        assert_eq!(
            c.tls.messages.last().map(|m| m.message),
            Some(TlsMessage::FinishedEncrypted)
        );
    }

    /// A SPDY server (listed in its NPN extension, and the client's
    /// NextProtocol sent) opens with its SETTINGS (12 bytes and 8 a
    /// setting) and a WINDOW_UPDATE (16), whatever was asked: neither
    /// answers the request the client false started with its Finished
    /// (nDPI's KakaoTalk_chat.pcap 8: 28 and 16 bytes taken for the
    /// answer, 52 ms of application time claimed). The answer is the
    /// record after them. Without SPDY in the list, the first record
    /// answers, as before.
    #[test]
    fn a_spdy_servers_settings_answer_nothing() {
        let answered_by = |protocols: &[&[u8]]| {
            let mut npn = vec![0x33, 0x74];
            let list: Vec<u8> = protocols
                .iter()
                .flat_map(|p| std::iter::once(p.len() as u8).chain(p.iter().copied()))
                .collect();
            npn.extend((list.len() as u16).to_be_bytes());
            npn.extend(list);
            let mut c = Capture::new(usize::MAX);
            c.segment(1, C, &[handshake(ht::CLIENT_HELLO, 200)]);
            c.segment(
                2,
                S,
                &[server_hello12(&npn), handshake(ht::CERTIFICATE, 900)],
            );
            // AES-GCM: 24 bytes a record more than its plaintext.
            let sealed = |ty: u8, plain: usize| record(ty, 0x0303, &vec![0x5a; plain + 24]);
            c.segment(
                3,
                C,
                &[
                    handshake(ht::CLIENT_KEY_EXCHANGE, 66),
                    ccs(),
                    sealed(ct::HANDSHAKE, 36),
                    sealed(ct::HANDSHAKE, 16),
                    sealed(ct::APPLICATION_DATA, 777),
                ],
            );
            c.segment(4, S, &[ccs(), sealed(ct::HANDSHAKE, 16)]);
            c.segment(5, S, &[sealed(ct::APPLICATION_DATA, 28)]);
            c.segment(6, S, &[sealed(ct::APPLICATION_DATA, 16)]);
            c.segment(7, S, &[sealed(ct::APPLICATION_DATA, 397)]);
            c.exchanges().first().and_then(|x| x.1)
        };
        assert_eq!(answered_by(&[b"spdy/3.1", b"http/1.1"]), Some(7));
        assert_eq!(answered_by(&[b"http/1.1"]), Some(5));
    }

    /// After a resumed handshake OpenSSL sends one ticket: alone, its
    /// record is data to sizes alone (the answer's first byte), unless
    /// the server was seen sending tickets of its size before
    /// (ticket_sizes.rs); then it is a ticket, and the answer begins
    /// with the next record.
    #[test]
    fn a_lone_record_of_the_servers_known_ticket_size_is_a_ticket() {
        let resumed = |known: Option<u32>| {
            let mut cap = Capture::new(1500);
            cap.tls.known_ticket_len = known;
            cap.segment(1, C, &[client_hello13()]);
            cap.segment(
                2,
                S,
                &[server_hello13(), ccs(), encrypted(40), encrypted(53)],
            );
            cap.segment(3, C, &[ccs(), encrypted(53)]);
            cap.segment(4, C, &[encrypted(109)]);
            cap.segment(5, S, &[encrypted(282)]);
            cap.segment(6, S, &[encrypted(274)]);
            cap
        };
        let mut cap = resumed(Some(282));
        assert_eq!(cap.tls.tickets_after_handshake, 1);
        assert_eq!(cap.exchanges(), [(4, Some(6), 109)]);
        // Unknown, or another size: the lone record is the answer's.
        for known in [None, Some(298)] {
            let mut cap = resumed(known);
            assert_eq!(cap.tls.tickets_after_handshake, 0, "{known:?}");
            assert_eq!(cap.exchanges(), [(4, Some(5), 109)], "{known:?}");
        }
        // Only the server's first record after the handshake: the same
        // size later is data.
        let mut cap = resumed(Some(274));
        assert_eq!(cap.tls.tickets_after_handshake, 0);
        assert_eq!(cap.exchanges(), [(4, Some(5), 109)]);
    }

    /// A server that sends one ticket every time (Fizz, Go, Java): its
    /// lone first record, followed in a later segment by records of other
    /// sizes, is noted; where the server's lone first record had that size
    /// before, it is a ticket, and the answer begins with the next. Two
    /// records in one segment (an answer's headers and body) are neither.
    #[test]
    fn a_lone_first_record_of_the_servers_known_lone_size_is_a_ticket_when_data_follows_apart() {
        let resumed = |known: Option<u32>, apart: bool| {
            let mut cap = Capture::new(1500);
            cap.tls.known_lone_first = known;
            cap.segment(1, C, &[client_hello13()]);
            cap.segment(
                2,
                S,
                &[server_hello13(), ccs(), encrypted(40), encrypted(53)],
            );
            cap.segment(3, C, &[ccs(), encrypted(53), encrypted(109)]);
            if apart {
                cap.segment(4, S, &[encrypted(173)]);
                cap.segment(5, S, &[encrypted(769)]);
            } else {
                cap.segment(4, S, &[encrypted(173), encrypted(769)]);
            }
            cap
        };
        let mut cap = resumed(Some(173), true);
        assert_eq!(cap.tls.tickets_after_handshake, 1);
        assert_eq!(cap.exchanges(), [(3, Some(5), 109)]);
        // Not known: data, and its size noted as a lone first record's.
        let mut cap = resumed(None, true);
        assert_eq!(cap.tls.tickets_after_handshake, 0);
        assert_eq!(cap.tls.lone_first_seen, Some(173));
        assert_eq!(cap.exchanges(), [(3, Some(4), 109)]);
        // One segment: written together, an answer; nothing noted.
        for known in [Some(173), None] {
            let mut cap = resumed(known, false);
            assert_eq!(cap.tls.tickets_after_handshake, 0);
            assert_eq!(cap.tls.lone_first_seen, None);
            assert_eq!(cap.exchanges(), [(3, Some(4), 109)]);
        }
    }

    /// Where no sibling told the size: a request that rode in 0-RTT
    /// early data the server took, nothing of the client's after its
    /// Finished, and a lone record after that Finished followed, a
    /// silence later (twice the record's lead on the Finished, 1 ms at
    /// least), by records of other sizes: the record was the ticket the
    /// library wrote as the Finished came, and the answer began after it
    /// (instagram.pcap 28). The answer of a server that held the request
    /// for the Finished comes whole; a request after the Finished may be
    /// what the record answers.
    #[test]
    fn a_lone_record_after_an_early_request_and_a_silence_before_the_rest_is_a_ticket() {
        let early = |next: u64, request_after_finished: bool| {
            let mut cap = Capture::new(1500);
            cap.segment(1, C, &[client_hello13()]);
            cap.segment(2, C, &[ccs(), encrypted(518)]);
            cap.segment(
                3,
                S,
                &[server_hello13(), ccs(), encrypted(40), encrypted(53)],
            );
            let mut second = vec![encrypted(21), encrypted(53)];
            if request_after_finished {
                second.push(encrypted(109));
            }
            cap.segment(4, C, &second);
            // 20 ms after the Finished.
            cap.segment(6, S, &[encrypted(173)]);
            cap.segment(next, S, &[encrypted(768), encrypted(1517)]);
            cap
        };
        // 170 ms of silence: a ticket, the answer from the next record.
        let mut cap = early(23, false);
        assert_eq!(cap.tls.early_data_accepted, Some(true));
        assert_eq!(cap.tls.tickets_after_handshake, 1);
        assert_eq!(cap.exchanges(), [(2, Some(23), 518)]);
        // 10 ms, less than twice the record's 20 ms lead: the answer's.
        let mut cap = early(7, false);
        assert_eq!(cap.tls.tickets_after_handshake, 0);
        assert_eq!(cap.exchanges(), [(2, Some(6), 518)]);
        // A request with the Finished: the record may answer it (the
        // two requests' bytes one turn, nothing answered between them).
        let mut cap = early(23, true);
        assert_eq!(cap.tls.tickets_after_handshake, 0);
        assert_eq!(cap.exchanges(), [(2, Some(6), 518 + 109)]);
    }

    /// A ticket seen is due to be noted with the tracker, once; a
    /// ClientHello read is due to be looked up, once.
    #[test]
    fn a_ticket_size_is_due_to_the_tracker_once_seen() {
        let mut cap = Capture::new(1500);
        assert!(!cap.tls.ticket_size_due());
        cap.segment(1, C, &[client_hello13()]);
        assert!(cap.tls.ticket_size_due());
        assert_ne!(cap.exchanges.events & crate::exchange::TICKET_SIZE, 0);
        cap.tls.ticket_size_looked_up = true;
        assert!(!cap.tls.ticket_size_due());
        cap.segment(
            2,
            S,
            &[server_hello13(), ccs(), encrypted(40), encrypted(53)],
        );
        cap.segment(3, C, &[ccs(), encrypted(53)]);
        cap.segment(4, S, &[encrypted(250), encrypted(250)]);
        assert_eq!(cap.tls.ticket_len_seen, Some(250));
        assert!(cap.tls.ticket_size_due());
        cap.tls.ticket_len_noted = true;
        assert!(!cap.tls.ticket_size_due());
    }

    /// Bytes behind a hole in the capture (segments never captured) are
    /// not handed on as data: when they were sent is unknown, and a
    /// response's first byte timed from them would be made up. Framing
    /// found again at a record header hands data on again.
    #[test]
    fn bytes_behind_a_capture_hole_are_not_data_until_a_record_starts() {
        let mut cap = Capture::new(30);
        cap.segment(1, C, &[handshake(ht::CLIENT_HELLO, 200)]);
        cap.segment(2, S, &[handshake(ht::SERVER_HELLO, 118), encrypted(900)]);
        cap.segment(3, C, &[encrypted(53)]);
        assert_eq!(cap.tls.version(), Some(0x0304));
        cap.snap = 1500;
        cap.segment(4, C, &[encrypted(120)]);
        cap.hole(5, S, 3000);
        // Mid-record: no record header where the segment starts.
        cap.segment(6, S, &[vec![0x33; 700]]);
        cap.segment(7, C, &[encrypted(80)]);
        cap.segment(8, S, &[encrypted(200)]);
        // The answer to the request at 4 went in the hole: the requests at
        // 4 and 7 are one, answered at 8 as far as the capture shows.
        assert_eq!(cap.exchanges(), [(4, Some(8), 200)]);
    }
}
