//! The TLS handshake of one connection, followed record by record.
//!
//! Which frames carry which handshake messages, what was negotiated, and
//! the events the ledger needs: when the ClientHello left, when the server's
//! flight ended, when each side's Finished went out. In TLS 1.3 everything
//! after the ServerHello is encrypted, so the server's flight is the run of
//! encrypted records before the client's first encrypted record (its
//! Finished); application data after that feeds the exchanges.

use rttdoc_wire::tls::{
    content_type as ct, handshake_type as ht, ClientHello, HandshakeMessage, HandshakeReader,
    Record, RecordStream, ServerHello,
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

/// A TLS 1.3 record carrying only an alert: 2 + 1 + 16 bytes.
const ENCRYPTED_ALERT_LEN: u32 = 19;

/// Largest encrypted record taken for a NewSessionTicket: tickets are a
/// few hundred bytes (a session id, or an encrypted session state).
const MAX_TICKET_RECORD: u32 = 2048;

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

#[derive(Debug, Default)]
pub struct TlsSession {
    records: [RecordStream<Stamp>; 2],
    handshake: [HandshakeReader; 2],
    pub client_hello: Option<ClientHello>,
    /// Where the first ClientHello's record began and ended.
    pub client_hello_at: Option<(Stamp, Stamp)>,
    pub client_hello_bytes: u32,
    pub server_hello: Option<ServerHello>,
    pub server_hello_at: Option<Stamp>,
    /// HelloRetryRequest: when, and the group the server asked for.
    pub hello_retry: Option<(Stamp, Option<u16>)>,
    pub change_cipher_spec: [Option<Stamp>; 2],
    pub client_finished: Option<Stamp>,
    /// TLS 1.2: the server's Finished; TLS 1.3: the last record of the
    /// server's encrypted flight.
    pub server_finished: Option<Stamp>,
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
    pub messages: Vec<TlsMessageRef>,
    /// The stream stopped looking like TLS (or sync was lost).
    pub broken: bool,
    /// TLS started after a plaintext preamble (proxy, STARTTLS): which,
    /// where, and the preamble's first frame (true: sent by the server).
    pub preamble: Option<(crate::preamble::Start, (Stamp, bool))>,
}

impl TlsSession {
    /// Negotiated version (ServerHello), if seen.
    pub fn version(&self) -> Option<u16> {
        self.server_hello.as_ref().map(|s| s.version)
    }

    fn is_tls13(&self) -> bool {
        self.version().is_some_and(rttdoc_wire::tls::is_tls13)
    }

    /// Whether the session was resumed: a PSK accepted (1.3); in 1.2, an
    /// abbreviated handshake. A full 1.2 handshake shows a Certificate,
    /// ServerKeyExchange, ServerHelloDone or ClientKeyExchange; an
    /// abbreviated one has the server's ChangeCipherSpec right after its
    /// ServerHello, before the client's (in a full one the client changes
    /// ciphers first, after its key exchange). Not seeing a Certificate
    /// proves nothing: the capture may have missed that segment.
    pub fn resumed(&self) -> Option<bool> {
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
        // Before the server's first flight, client application data is
        // 0-RTT early data: keep a few bodies (nothing else is kept).
        self.records[0].keep_application_data =
            self.before_server_flight() && self.early_data.len() < MAX_EARLY_RECORDS;
        self.records[1].keep_application_data = self.keep_server_records
            && self.server_hello.is_some()
            && self.server_records.len() < MAX_SERVER_RECORDS;
        // The stream is taken out while its records are read, so each is
        // handled as it ends, its body borrowed (nothing handled here
        // touches the framing).
        let mut records = std::mem::take(&mut self.records[d]);
        let mut on_record = |r: Record<'_, Stamp>| self.on_record(at, dir, r, exchanges);
        if !bytes.is_empty() {
            records.feed(bytes, at, &mut on_record);
        }
        if missing > 0 {
            records.skip(missing, &mut on_record);
        }
        if records.is_broken() {
            self.broken = true;
        }
        self.records[d] = records;
    }

    fn note(
        &mut self,
        started: Stamp,
        end: Stamp,
        dir: Direction,
        message: TlsMessage,
        bytes: u32,
    ) {
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
                        self.note(r.started, end, dir, TlsMessage::HandshakeNotCaptured, len);
                    }
                }
            }
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
                Direction::ClientToServer
                    if after_server_hello
                        && self.early_data_records > 0
                        && self.early_data_accepted.is_none() =>
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
                    self.early_data_records += 1;
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
            self.early_data_records += 1;
            self.note(started, end, dir, TlsMessage::EarlyData, len);
        } else if self.is_tls13() {
            match (dir, self.ticket_run) {
                (Direction::ServerToClient, TicketRun::Undecided) if len <= MAX_TICKET_RECORD => {
                    self.ticket_run = TicketRun::Held(started, end, len);
                    return;
                }
                (Direction::ServerToClient, TicketRun::Held(s0, e0, l0)) if l0 == len => {
                    self.ticket_run = TicketRun::Tickets(len);
                    self.ticket(s0, e0, l0);
                    self.ticket(started, end, len);
                    return;
                }
                (Direction::ServerToClient, TicketRun::Tickets(l)) if l == len => {
                    self.ticket(started, end, len);
                    return;
                }
                // The client's data (a request) does not end the run: the
                // tickets answer its Finished, not its request. A record
                // held back goes first, to keep the order.
                (Direction::ClientToServer, TicketRun::Held(..))
                | (Direction::ServerToClient, _) => self.end_ticket_run(exchanges),
                (Direction::ClientToServer, _) => {}
            }
        }
        exchanges.on_data(dir, started, end, len as u64, &[]);
    }

    fn ticket(&mut self, started: Stamp, end: Stamp, len: u32) {
        self.tickets_after_handshake += 1;
        let what = TlsMessage::NewSessionTicketEncrypted;
        self.note(started, end, Direction::ServerToClient, what, len);
    }

    /// Application data has begun (or the connection ended): a record held
    /// back as a possible ticket was data after all.
    fn end_ticket_run(&mut self, exchanges: &mut Exchanges) {
        if let TicketRun::Held(s0, e0, l0) = self.ticket_run {
            exchanges.on_data(Direction::ServerToClient, s0, e0, l0 as u64, &[]);
        }
        self.ticket_run = TicketRun::Done;
    }

    /// The connection ended: release what is still held back.
    pub fn finish(&mut self, exchanges: &mut Exchanges) {
        self.end_ticket_run(exchanges);
    }

    /// AEAD tag bytes of the negotiated TLS 1.3 suite (CCM_8: 8, else 16).
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
                }
                TlsMessage::Certificate
            }
            ht::SERVER_KEY_EXCHANGE => {
                self.key_exchange_seen = true;
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
            other => TlsMessage::OtherHandshake(other),
        };
        self.note(started, end, dir, name, size);
    }
}
