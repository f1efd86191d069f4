//! TLS records and handshake messages, read from one direction's in-order
//! TCP byte stream.
//!
//! [`RecordStream`] frames records across TCP segment boundaries (a
//! post-quantum ClientHello spans two segments, a certificate chain many) and
//! keeps the bodies of handshake, change-cipher-spec and alert records only;
//! application-data bodies are skipped, so memory stays at one record.
//! [`HandshakeReader`] joins plaintext handshake records into messages (a
//! message may span records), and [`ClientHello::parse`] /
//! [`ServerHello::parse`] read what the ledger needs with `tls-parser`.

use tls_parser::{parse_tls_message_handshake, TlsMessage, TlsMessageHandshake};

pub mod content_type {
    pub const CHANGE_CIPHER_SPEC: u8 = 20;
    pub const ALERT: u8 = 21;
    pub const HANDSHAKE: u8 = 22;
    pub const APPLICATION_DATA: u8 = 23;
    pub const HEARTBEAT: u8 = 24;
}

pub mod handshake_type {
    pub const CLIENT_HELLO: u8 = 1;
    pub const SERVER_HELLO: u8 = 2;
    pub const NEW_SESSION_TICKET: u8 = 4;
    pub const END_OF_EARLY_DATA: u8 = 5;
    pub const ENCRYPTED_EXTENSIONS: u8 = 8;
    pub const CERTIFICATE: u8 = 11;
    pub const SERVER_KEY_EXCHANGE: u8 = 12;
    pub const CERTIFICATE_REQUEST: u8 = 13;
    pub const SERVER_HELLO_DONE: u8 = 14;
    pub const CERTIFICATE_VERIFY: u8 = 15;
    pub const CLIENT_KEY_EXCHANGE: u8 = 16;
    pub const FINISHED: u8 = 20;
    /// A stapled OCSP status (RFC 6066), TLS 1.2 and older.
    pub const CERTIFICATE_STATUS: u8 = 22;
}

/// The largest record body TLS allows (2^14 plus expansion); anything
/// larger means the stream is not TLS, or we lost sync.
const MAX_RECORD_BODY: usize = 16384 + 2048;

/// A record whose last byte has just been fed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record<'a, T> {
    /// The caller's tag (e.g. frame number) of the chunk the header began in.
    pub started: T,
    pub content_type: u8,
    pub version: u16,
    /// Body length from the record header.
    pub length: u16,
    /// The body, for handshake / CCS / alert records whose bytes were all
    /// captured; `None` for application data and snaplen-cut records.
    pub body: Option<&'a [u8]>,
    /// The body's first bytes that the capture held, when a snap length
    /// cut it (`body` is `None`): a handshake record's message type and
    /// length survive in them.
    pub cut_body: &'a [u8],
}

/// Frames TLS records in one direction of a TCP stream. Each chunk fed is
/// tagged (with its frame, typically), and every record reports the tag of
/// the chunk where it started.
#[derive(Debug, Default)]
pub struct RecordStream<T> {
    started: T,
    header: [u8; 5],
    header_have: usize,
    /// Body bytes of the current record still to come.
    remaining: usize,
    in_body: bool,
    keep_body: bool,
    body_lost: bool,
    body: Vec<u8>,
    broken: bool,
    /// The break came from bytes missing from the capture inside a record
    /// header, not from bytes that are not TLS: framing can be found
    /// again where a later segment starts with a record header.
    lost_sync: bool,
    records: u64,
    /// Keep application-data bodies too (normally dropped: only their
    /// sizes matter). For 0-RTT early data, which a key log can decrypt.
    pub keep_application_data: bool,
}

impl<T: Copy + Default> RecordStream<T> {
    /// True once the stream stopped looking like TLS (or sync was lost);
    /// nothing more is reported after that.
    pub fn is_broken(&self) -> bool {
        self.broken
    }

    /// True when framing was lost to bytes missing inside a record
    /// header (see [`skip`](Self::skip)), not to bytes that were not TLS.
    pub fn lost_sync(&self) -> bool {
        self.lost_sync
    }

    /// Number of complete records seen.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// True when the next byte fed starts a new record.
    pub fn at_record_boundary(&self) -> bool {
        !self.in_body && self.header_have == 0
    }

    /// Feeds the next in-order stream bytes; `on_record` is called for every
    /// record that ends inside them.
    ///
    /// After bytes went missing inside a record header (see [`skip`](Self::skip)),
    /// framing is taken up again at the first fed chunk (a TCP segment: TLS
    /// stacks start a record at a segment boundary after every flush) that
    /// begins with a plausible record header, as Wireshark does.
    ///
    /// Returns how many of the bytes could not be framed because framing
    /// was lost that way (0 for a stream that is not TLS).
    pub fn feed(
        &mut self,
        mut bytes: &[u8],
        tag: T,
        mut on_record: impl FnMut(Record<'_, T>),
    ) -> usize {
        if self.lost_sync && bytes.len() >= 5 && plausible_header(&bytes[..5]) {
            self.lost_sync = false;
            self.broken = false;
            self.in_body = false;
            self.header_have = 0;
        }
        if self.lost_sync {
            return bytes.len();
        }
        if self.records == 0 && self.header_have == 0 && !self.in_body {
            if let Some((len, hello)) = sslv2_client_hello(bytes) {
                // A client that still speaks SSL 2.0's hello format to offer
                // TLS: read as the ClientHello it stands for (RFC 5246 E.2).
                self.records += 1;
                on_record(Record {
                    started: tag,
                    content_type: content_type::HANDSHAKE,
                    version: u16::from_be_bytes([hello[4], hello[5]]),
                    length: hello.len() as u16,
                    body: Some(&hello),
                    cut_body: &[],
                });
                bytes = &bytes[len..];
            }
        }
        while !bytes.is_empty() && !self.broken {
            if !self.in_body {
                if self.header_have == 0 {
                    self.started = tag;
                }
                let take = (5 - self.header_have).min(bytes.len());
                self.header[self.header_have..self.header_have + take]
                    .copy_from_slice(&bytes[..take]);
                self.header_have += take;
                bytes = &bytes[take..];
                if self.header_have < 5 {
                    return 0;
                }
                if !self.start_record() {
                    return 0;
                }
                if self.remaining == 0 {
                    self.finish(&mut on_record);
                }
                continue;
            }
            let take = self.remaining.min(bytes.len());
            if self.keep_body && !self.body_lost {
                self.body.extend_from_slice(&bytes[..take]);
            }
            self.remaining -= take;
            bytes = &bytes[take..];
            if self.remaining == 0 {
                self.finish(&mut on_record);
            }
        }
        0
    }

    /// Accounts for `n` stream bytes that were on the wire but not captured
    /// (snaplen). Inside a record body they only cost that record its body;
    /// inside a record header they cost the stream its framing.
    ///
    /// Returns how many of them could not be framed (those from the lost
    /// header on, or all of them when framing was already lost).
    pub fn skip(&mut self, mut n: usize, mut on_record: impl FnMut(Record<'_, T>)) -> usize {
        if self.lost_sync {
            return n;
        }
        while n > 0 && !self.broken {
            if !self.in_body {
                self.broken = true;
                self.lost_sync = true;
                return n;
            }
            let take = self.remaining.min(n);
            self.body_lost = true;
            self.remaining -= take;
            n -= take;
            if self.remaining == 0 {
                self.finish(&mut on_record);
            }
        }
        0
    }

    fn start_record(&mut self) -> bool {
        let h = self.header;
        let content_type = h[0];
        let length = u16::from_be_bytes([h[3], h[4]]) as usize;
        if !plausible_header(&h) {
            self.broken = true;
            return false;
        }
        self.in_body = true;
        self.remaining = length;
        self.keep_body =
            content_type != content_type::APPLICATION_DATA || self.keep_application_data;
        self.body_lost = false;
        self.body.clear();
        true
    }

    fn finish(&mut self, on_record: &mut impl FnMut(Record<'_, T>)) {
        let h = self.header;
        let record = Record {
            started: self.started,
            content_type: h[0],
            version: u16::from_be_bytes([h[1], h[2]]),
            length: u16::from_be_bytes([h[3], h[4]]),
            body: (self.keep_body && !self.body_lost).then_some(self.body.as_slice()),
            cut_body: if self.keep_body && self.body_lost {
                self.body.as_slice()
            } else {
                &[]
            },
        };
        self.records += 1;
        on_record(record);
        self.in_body = false;
        self.header_have = 0;
        self.body.clear();
    }
}

/// One handshake message: its type and its body (without the 4-byte header).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HandshakeMessage<'a> {
    pub msg_type: u8,
    pub body: &'a [u8],
    /// The message with its 4-byte header, as `tls-parser` wants it.
    pub raw: &'a [u8],
}

/// Joins plaintext handshake record bodies into handshake messages.
#[derive(Debug, Default)]
pub struct HandshakeReader {
    buf: Vec<u8>,
    broken: bool,
}

/// Handshake messages larger than this are not worth buffering (a huge
/// certificate chain is skipped, its size is still known from the records).
const MAX_MESSAGE: usize = 256 * 1024;

impl HandshakeReader {
    /// Adds one handshake record body and calls `on_message` for each
    /// message it completes.
    pub fn feed(&mut self, body: &[u8], mut on_message: impl FnMut(HandshakeMessage<'_>)) {
        if self.broken {
            return;
        }
        self.buf.extend_from_slice(body);
        let mut at = 0;
        while self.buf.len() - at >= 4 {
            let len = u32::from_be_bytes([0, self.buf[at + 1], self.buf[at + 2], self.buf[at + 3]])
                as usize;
            if len > MAX_MESSAGE {
                self.broken = true;
                self.buf.clear();
                return;
            }
            if self.buf.len() - at < 4 + len {
                break;
            }
            let raw = &self.buf[at..at + 4 + len];
            on_message(HandshakeMessage {
                msg_type: raw[0],
                body: &raw[4..],
                raw,
            });
            at += 4 + len;
        }
        self.buf.drain(..at);
    }

    /// Forgets a partial message (after a lost record).
    pub fn reset(&mut self) {
        self.buf.clear();
    }
}

/// SHA-256("HelloRetryRequest"): a ServerHello with this random is a HRR.
const HRR_RANDOM: [u8; 32] = [
    0xcf, 0x21, 0xad, 0x74, 0xe5, 0x9a, 0x61, 0x11, 0xbe, 0x1d, 0x8c, 0x02, 0x1e, 0x65, 0xb8, 0x91,
    0xc2, 0xa2, 0x11, 0x16, 0x7a, 0xbb, 0x8c, 0x5e, 0x07, 0x9e, 0x09, 0xe2, 0xc8, 0xa8, 0x33, 0x9c,
];

/// What the captured first bytes of a handshake record still say when a
/// snap length cut its body (most of a `tcpdump -s 96` capture's TLS).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CutHandshake {
    /// Type of the message the record starts with.
    pub msg_type: u8,
    /// Its size with its 4-byte header, when the header survived.
    pub msg_len: Option<u32>,
    /// For a ServerHello, whether it is a HelloRetryRequest: known only
    /// when its 32-byte random survived the cut.
    pub hello_retry_request: Option<bool>,
}

impl CutHandshake {
    /// Reads the message header at the start of a cut record body. `None`
    /// when nothing of the body survived, or when the length in a visible
    /// header overruns the record (the record does not start a message: it
    /// continues one from the record before).
    pub fn read(head: &[u8], record_len: u16) -> Option<CutHandshake> {
        let msg_type = *head.first()?;
        let msg_len = match *head {
            [_, a, b, c, ..] => Some(u32::from_be_bytes([0, a, b, c]) + 4),
            _ => None,
        };
        if msg_len.is_some_and(|len| len > record_len as u32) {
            return None;
        }
        // type (1), length (3), legacy_version (2), random (32)
        let hello_retry_request = match head.get(6..38) {
            Some(random) if msg_type == handshake_type::SERVER_HELLO => Some(random == HRR_RANDOM),
            _ => None,
        };
        Some(CutHandshake {
            msg_type,
            msg_len,
            hello_retry_request,
        })
    }
}

mod ext {
    pub const SERVER_NAME: u16 = 0;
    pub const STATUS_REQUEST: u16 = 5;
    pub const STATUS_REQUEST_V2: u16 = 17;
    pub const ALPN: u16 = 16;
    pub const SESSION_TICKET: u16 = 35;
    /// Next Protocol Negotiation (ALPN's predecessor, Chrome's until 2016).
    pub const NEXT_PROTOCOL: u16 = 13172;
    pub const PRE_SHARED_KEY: u16 = 41;
    pub const EARLY_DATA: u16 = 42;
    pub const SUPPORTED_VERSIONS: u16 = 43;
    pub const KEY_SHARE: u16 = 51;
    /// Padding (RFC 7685): sent or not by a hello's length.
    pub const PADDING: u16 = 21;
}

/// FNV-1a's offset basis: a ClientHello's lists are hashed with it
/// (`ClientHello::cipher_list`, `ClientHello::extension_types`).
const FNV_START: u64 = 0xcbf2_9ce4_8422_2325;

/// One 16-bit value (big-endian, as on the wire) into an FNV-1a hash.
fn fnv_u16(hash: u64, v: u16) -> u64 {
    v.to_be_bytes().iter().fold(hash, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// What rttdoc reads from a ClientHello.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClientHello {
    pub legacy_version: u16,
    pub session_id_len: usize,
    /// The session the client offers to resume (TLS 1.2), or TLS 1.3's
    /// compatibility echo.
    pub session_id: Vec<u8>,
    pub sni: Option<String>,
    pub alpn: Vec<String>,
    /// It offered Next Protocol Negotiation (ALPN's forerunner): browsers
    /// (Chrome, Firefox) and HTTP libraries did, for SPDY and HTTP, until
    /// 2016.
    pub next_protocol: bool,
    /// From supported_versions (empty when the extension is absent).
    pub supported_versions: Vec<u16>,
    /// Named groups the client sent key shares for.
    pub key_share_groups: Vec<u16>,
    pub early_data: bool,
    pub pre_shared_key: bool,
    /// A non-empty session_ticket extension (TLS 1.2 ticket resumption).
    pub session_ticket: bool,
    pub cipher_suites: usize,
    /// The cipher suites in the order offered, GREASE values left out,
    /// hashed: one TLS library's list (its hellos share it whatever they
    /// ask for; another library's differs).
    pub cipher_list: u64,
    /// The client asked the server to staple its certificate's OCSP
    /// status (status_request, or RFC 6961's status_request_v2).
    pub status_request: bool,
    /// It offered an ECDHE suite (TLS 1.2 and older), or TLS 1.3's suites
    /// (whose key exchange is always (EC)DHE): a server may choose a
    /// forward-secret key exchange over RSA's.
    pub ecdhe_offered: bool,
    /// Names the session in a key log (SSLKEYLOGFILE).
    pub random: [u8; 32],
    /// The extensions' types in the order sent, hashed, GREASE values,
    /// padding and what only a resuming hello carries (a PSK, early data)
    /// left out: one TLS stack's hellos share it, another's differ
    /// (Chromium's with Channel ID and without keep apart sessions).
    pub extension_types: u64,
}

impl ClientHello {
    /// Parses a ClientHello message (with its 4-byte header).
    pub fn parse(raw: &[u8]) -> Option<ClientHello> {
        let Ok((_, TlsMessage::Handshake(TlsMessageHandshake::ClientHello(ch)))) =
            parse_tls_message_handshake(raw)
        else {
            return None;
        };
        let mut out = ClientHello {
            legacy_version: ch.version.0,
            session_id_len: ch.session_id.map_or(0, |s| s.len()),
            session_id: ch.session_id.map(|s| s.to_vec()).unwrap_or_default(),
            cipher_suites: ch.ciphers.len(),
            ..Default::default()
        };
        if let Ok(random) = <[u8; 32]>::try_from(ch.random) {
            out.random = random;
        }
        out.cipher_list = ch
            .ciphers
            .iter()
            .map(|c| c.0)
            .filter(|&c| !is_grease(c))
            .fold(FNV_START, fnv_u16);
        out.ecdhe_offered = ch.ciphers.iter().any(|c| {
            (0x1301..=0x1305).contains(&c.0)
                || tls_parser::TlsCipherSuite::from_id(c.0)
                    .is_some_and(|s| s.kx == tls_parser::TlsCipherKx::Ecdhe)
        });
        let mut types = FNV_START;
        for (kind, data) in extensions(ch.ext.unwrap_or(&[])) {
            // (Nor what only a resuming hello carries: its PSK, its 0-RTT.)
            let kept = !matches!(kind, ext::PADDING | ext::PRE_SHARED_KEY | ext::EARLY_DATA);
            if !is_grease(kind) && kept {
                types = fnv_u16(types, kind);
            }
            match kind {
                ext::SERVER_NAME => out.sni = server_name(data),
                ext::ALPN => out.alpn = alpn(data),
                ext::NEXT_PROTOCOL => out.next_protocol = true,
                ext::SUPPORTED_VERSIONS => {
                    out.supported_versions = data
                        .get(1..)
                        .unwrap_or(&[])
                        .chunks_exact(2)
                        .map(|c| u16::from_be_bytes([c[0], c[1]]))
                        .collect()
                }
                ext::KEY_SHARE => out.key_share_groups = client_key_shares(data),
                ext::EARLY_DATA => out.early_data = true,
                ext::PRE_SHARED_KEY => out.pre_shared_key = true,
                ext::SESSION_TICKET => out.session_ticket = !data.is_empty(),
                ext::STATUS_REQUEST | ext::STATUS_REQUEST_V2 => out.status_request = true,
                _ => {}
            }
        }
        out.extension_types = types;
        Some(out)
    }

    /// The highest version offered.
    pub fn max_version(&self) -> u16 {
        self.supported_versions
            .iter()
            .copied()
            .filter(|v| !is_grease(*v))
            .max()
            .unwrap_or(self.legacy_version)
    }
}

/// A server's Certificate message of TLS 1.2 and older (in the clear;
/// TLS 1.3 encrypts it): how many certificates it sent, and whether its
/// own, the first, is self-signed (its issuer is its subject). What a
/// client checking it can have had to fetch: a self-signed certificate
/// has no chain and no issuer's responder to ask; a chain of two or more
/// brought its intermediates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CertificateChain {
    /// How many certificates.
    pub certificates: u16,
    /// The first is self-signed.
    pub self_signed: bool,
    /// One of them names somewhere a client checking it may go online:
    /// an Authority Information Access extension (its OCSP responder, its
    /// issuer's certificate) or CRL distribution points. Without one, a
    /// client has nothing to fetch or ask about the chain (a device's
    /// factory certificate and its vendor's CA: nDPI's forticlient.pcap).
    pub online_checks: bool,
}

impl CertificateChain {
    /// Parses a TLS 1.2 (or older) Certificate message (with its 4-byte
    /// header); None where it does not parse (a truncated one, a TLS 1.3
    /// one) or holds no certificate.
    pub fn parse(raw: &[u8]) -> Option<CertificateChain> {
        let Ok((_, TlsMessage::Handshake(TlsMessageHandshake::Certificate(c)))) =
            parse_tls_message_handshake(raw)
        else {
            return None;
        };
        use x509_parser::oid_registry::{
            OID_PKIX_AUTHORITY_INFO_ACCESS, OID_X509_EXT_CRL_DISTRIBUTION_POINTS,
        };
        c.cert_chain.first()?;
        // Each certificate parsed once: the first for whether it is
        // self-signed, each for the extensions that name somewhere to go
        // online (one that does not parse may name one: taken as naming).
        let (mut self_signed, mut online_checks) = (false, false);
        for (i, cert) in c.cert_chain.iter().enumerate() {
            match x509_parser::parse_x509_certificate(cert.data) {
                Ok((_, x)) => {
                    if i == 0 {
                        self_signed = x.issuer().as_raw() == x.subject().as_raw();
                    }
                    online_checks |= x.extensions().iter().any(|e| {
                        e.oid == OID_PKIX_AUTHORITY_INFO_ACCESS
                            || e.oid == OID_X509_EXT_CRL_DISTRIBUTION_POINTS
                    });
                }
                Err(_) => online_checks = true,
            }
        }
        Some(CertificateChain {
            certificates: u16::try_from(c.cert_chain.len()).unwrap_or(u16::MAX),
            self_signed,
            online_checks,
        })
    }
}

/// What rttdoc reads from a ServerHello (or HelloRetryRequest).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServerHello {
    pub legacy_version: u16,
    /// The negotiated version: supported_versions if present, else legacy.
    pub version: u16,
    pub cipher: u16,
    pub key_share_group: Option<u16>,
    /// The server accepted a PSK (TLS 1.3 resumption).
    pub pre_shared_key: bool,
    pub hello_retry_request: bool,
    pub session_id: Vec<u8>,
    /// The server will send a TLS 1.2 NewSessionTicket.
    pub session_ticket: bool,
    /// The server chose HTTP/2 (ALPN `h2`; a TLS 1.3 server says it in
    /// EncryptedExtensions, which the capture cannot read).
    pub alpn_h2: bool,
    /// The server chose an application protocol (ALPN) or will (NPN):
    /// what browsers require, with ECDHE and an AEAD suite, to False
    /// Start a full TLS 1.2 handshake.
    pub protocol_chosen: bool,
    /// The server agreed to Next Protocol Negotiation (NPN, Google's
    /// draft before ALPN): the client's first encrypted handshake
    /// message after its ChangeCipherSpec is then its NextProtocol, and
    /// its Finished the second.
    pub next_protocol: bool,
    /// Among the protocols its NPN extension lists, SPDY (`spdy/3.1`,
    /// Facebook's `spdy/3.1-fb-0.5`...): HTTP/2's forerunner, whose
    /// server, chosen, opens with a SETTINGS frame of its own.
    pub npn_spdy: bool,
    /// Its random: with the client's, what TLS 1.2 derives its record
    /// keys from.
    pub random: [u8; 32],
}

impl ServerHello {
    /// Parses a ServerHello message (with its 4-byte header).
    pub fn parse(raw: &[u8]) -> Option<ServerHello> {
        let Ok((_, TlsMessage::Handshake(TlsMessageHandshake::ServerHello(sh)))) =
            parse_tls_message_handshake(raw)
        else {
            return None;
        };
        let mut out = ServerHello {
            legacy_version: sh.version.0,
            version: sh.version.0,
            cipher: sh.cipher.0,
            hello_retry_request: sh.random == HRR_RANDOM,
            random: sh.random.try_into().unwrap_or([0; 32]),
            session_id: sh.session_id.unwrap_or(&[]).to_vec(),
            ..Default::default()
        };
        for (kind, data) in extensions(sh.ext.unwrap_or(&[])) {
            match kind {
                ext::SUPPORTED_VERSIONS if data.len() >= 2 => {
                    out.version = u16::from_be_bytes([data[0], data[1]])
                }
                // In a ServerHello the key share is one entry, in a HRR just
                // the selected group: both start with the group.
                ext::KEY_SHARE if data.len() >= 2 => {
                    out.key_share_group = Some(u16::from_be_bytes([data[0], data[1]]))
                }
                ext::PRE_SHARED_KEY => out.pre_shared_key = true,
                ext::SESSION_TICKET => out.session_ticket = true,
                ext::ALPN => {
                    out.alpn_h2 = alpn(data) == ["h2"];
                    out.protocol_chosen = true;
                }
                ext::NEXT_PROTOCOL => {
                    out.protocol_chosen = true;
                    out.next_protocol = true;
                    out.npn_spdy = npn_protocols(data).any(|p| p.starts_with(b"spdy/"));
                }
                _ => {}
            }
        }
        Some(out)
    }
}

/// What rttdoc reads from a TLS 1.2 (or older) ServerKeyExchange: the
/// key exchange the server ran (ECDHE's named group, or DHE's prime) and
/// its signature over it, which its certificate's key made: what the
/// server computed before its first flight, and so what a slow one spent
/// its time on, or did not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerKeyExchange {
    /// ECDHE's named group.
    pub group: Option<u16>,
    /// DHE's prime, in bits.
    pub dh_bits: Option<u32>,
    /// The key that signed it.
    pub signer: Signer,
}

/// A server's signing key, as its signature shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signer {
    /// RSA, of this modulus (bits: an RSA signature is as long as its
    /// modulus).
    Rsa(u32),
    /// ECDSA (or EdDSA).
    Ecdsa,
    /// Not told (an anonymous suite, an unknown scheme).
    Unknown,
}

impl ServerKeyExchange {
    /// Parses a ServerKeyExchange message (with its 4-byte header) of a
    /// handshake that negotiated `version` and `cipher`; None where its
    /// fields do not fill it exactly (a PSK suite's, a truncated one).
    pub fn parse(raw: &[u8], version: u16, cipher: u16) -> Option<ServerKeyExchange> {
        use tls_parser::{parse_content_and_signature, parse_dh_params, parse_ecdh_params};
        let body = raw.get(4..)?;
        // TLS 1.2 names the signature's algorithm (RFC 5246 7.4.3).
        let named = version >= 0x0303;
        let suite = tls_parser::TlsCipherSuite::from_id(cipher);
        let (group, dh_bits, signed) = match suite.map(|c| c.kx) {
            Some(tls_parser::TlsCipherKx::Ecdhe) => {
                let (rest, (params, signed)) =
                    parse_content_and_signature(body, parse_ecdh_params, named).ok()?;
                if !rest.is_empty() {
                    return None;
                }
                let group = match params.curve_params.params_content {
                    tls_parser::ECParametersContent::NamedGroup(g) => Some(g.0),
                    _ => None,
                };
                (group, None, signed)
            }
            Some(tls_parser::TlsCipherKx::Dhe) => {
                let (rest, (params, signed)) =
                    parse_content_and_signature(body, parse_dh_params, named).ok()?;
                if !rest.is_empty() {
                    return None;
                }
                let p = params.dh_p;
                let leading = p.iter().take_while(|&&b| b == 0).count();
                let bits = (p.len() - leading) as u32 * 8;
                (None, Some(bits), signed)
            }
            _ => return None,
        };
        let rsa = |bytes: usize| Signer::Rsa(bytes as u32 * 8);
        let signer = match signed.alg {
            // TLS 1.2: SignatureAndHashAlgorithm (RFC 5246), or a
            // SignatureScheme in the same two bytes (RFC 8446 4.2.3).
            Some(alg) => match (alg.hash.0, alg.sign.0) {
                (0x08, 0x04..=0x06 | 0x09..=0x0b) => rsa(signed.data.len()),
                (0x08, 0x07 | 0x08) => Signer::Ecdsa,
                (_, 1) => rsa(signed.data.len()),
                (_, 3) => Signer::Ecdsa,
                _ => Signer::Unknown,
            },
            // Before it, the suite names the certificate's key.
            None => match suite.map(|c| c.au) {
                Some(tls_parser::TlsCipherAu::Rsa) => rsa(signed.data.len()),
                Some(tls_parser::TlsCipherAu::Ecdsa) => Signer::Ecdsa,
                _ => Signer::Unknown,
            },
        };
        Some(ServerKeyExchange {
            group,
            dh_bits,
            signer,
        })
    }

    /// Whether the server's work in it is small: ECDHE on x25519, P-256 or
    /// P-384 (tens to hundreds of microseconds) signed by ECDSA or RSA of
    /// 2048 bits at most (a millisecond or two), so a slow first flight
    /// spent its time elsewhere.
    pub fn cheap(&self) -> bool {
        matches!(self.group, Some(0x001d | 0x0017 | 0x0018))
            && match self.signer {
                Signer::Rsa(bits) => bits <= 2048,
                Signer::Ecdsa => true,
                Signer::Unknown => false,
            }
    }
}

/// A TLS 1.2 suite with an ECDHE key exchange and an AEAD cipher: what
/// browsers (BoringSSL's and NSS's `false_start`) require, with a
/// negotiated application protocol, to False Start a full handshake.
pub fn ecdhe_aead(cipher: u16) -> bool {
    matches!(
        cipher,
        // ECDHE-ECDSA/RSA with AES-GCM; ChaCha20-Poly1305 (RFC 7905, and
        // Chrome's draft code points); ECDHE-ECDSA with AES-CCM.
        0xc02b..=0xc030 | 0xcca8 | 0xcca9 | 0xcc13 | 0xcc14 | 0xc0ac..=0xc0af
    )
}

/// Whether `cipher` is a TLS 1.2 (or older) suite whose key exchange is
/// finite-field Diffie-Hellman (DHE, DHE_PSK, DH_anon: modular
/// exponentiations on numbers of 1024 bits and more, many times ECDHE's
/// cost), by tls-parser's table.
pub fn dhe_suite(cipher: u16) -> bool {
    tls_parser::TlsCipherSuite::from_id(cipher).is_some_and(|c| {
        matches!(
            c.kx,
            tls_parser::TlsCipherKx::Dhe | tls_parser::TlsCipherKx::Dh
        )
    })
}

/// Whether `cipher` is a TLS 1.2 (or older) suite whose server sends no
/// certificate (pre-shared keys: PSK, DHE_PSK, ECDHE_PSK; anonymous
/// Diffie-Hellman), by tls-parser's table: its client verifies none.
pub fn certificate_less_suite(cipher: u16) -> bool {
    tls_parser::TlsCipherSuite::from_id(cipher).is_some_and(|c| {
        matches!(
            c.au,
            tls_parser::TlsCipherAu::Psk | tls_parser::TlsCipherAu::Null
        )
    })
}

/// Walks an extensions block: (type, data) pairs, stopping at damage.
fn extensions(mut bytes: &[u8]) -> impl Iterator<Item = (u16, &[u8])> {
    std::iter::from_fn(move || {
        if bytes.len() < 4 {
            return None;
        }
        let kind = u16::from_be_bytes([bytes[0], bytes[1]]);
        let len = u16::from_be_bytes([bytes[2], bytes[3]]) as usize;
        let data = bytes.get(4..4 + len)?;
        bytes = &bytes[4 + len..];
        Some((kind, data))
    })
}

fn server_name(data: &[u8]) -> Option<String> {
    // list length (2), type (1), name length (2), name
    let len = u16::from_be_bytes([*data.get(3)?, *data.get(4)?]) as usize;
    let name = data.get(5..5 + len)?;
    (data[2] == 0).then(|| String::from_utf8_lossy(name).into_owned())
}

/// The protocols a ServerHello's NPN extension lists: each a length byte
/// and its name, with no length before the list (draft-agl-tls-nextprotoneg).
fn npn_protocols(data: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = data;
    std::iter::from_fn(move || {
        let (&len, tail) = rest.split_first()?;
        let name = tail.get(..len as usize)?;
        rest = &tail[len as usize..];
        Some(name)
    })
}

fn alpn(data: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = data.get(2..).unwrap_or(&[]);
    while let Some((&len, tail)) = rest.split_first() {
        let Some(name) = tail.get(..len as usize) else {
            break;
        };
        out.push(String::from_utf8_lossy(name).into_owned());
        rest = &tail[len as usize..];
    }
    out
}

fn client_key_shares(data: &[u8]) -> Vec<u16> {
    let mut out = Vec::new();
    let mut rest = data.get(2..).unwrap_or(&[]);
    while rest.len() >= 4 {
        let group = u16::from_be_bytes([rest[0], rest[1]]);
        let len = u16::from_be_bytes([rest[2], rest[3]]) as usize;
        out.push(group);
        rest = rest.get(4 + len..).unwrap_or(&[]);
    }
    out
}

/// Whether a client's ALPN offer names an HTTP version (`http/1.1`, `h2`,
/// Google's `spdy/3.1` ...): an HTTP server never speaks first, and its
/// first data before a request (HTTP/2's or SPDY's SETTINGS) is no
/// greeting anyone waited for; a client of another protocol on a port
/// HTTP shares (Kafka's 9093, Alertmanager's) offers none of them.
pub fn offers_http(alpn: &[String]) -> bool {
    alpn.iter()
        .any(|p| p.starts_with("http/") || p.starts_with("spdy/") || p == "h2" || p == "h3")
}

/// Whether an ALPN list offers HTTP/2 (`h2`).
pub fn offers_h2(alpn: &[String]) -> bool {
    alpn.iter().any(|p| p == "h2")
}

/// What a TLS 1.2 (or older) record of `cipher` adds to its plaintext
/// when the cipher is a stream cipher (RC4): its MAC alone, by
/// tls-parser's table; None for block and AEAD ciphers.
pub fn stream_cipher_overhead(cipher: u16) -> Option<u32> {
    tls_parser::TlsCipherSuite::from_id(cipher)
        .filter(|c| c.enc == tls_parser::TlsCipherEnc::Rc4)
        .map(|c| u32::from(c.mac_size / 8))
}

/// GREASE values (RFC 8701) are 0x?a?a.
pub fn is_grease(v: u16) -> bool {
    v & 0x0f0f == 0x0a0a && (v >> 8) == (v & 0xff)
}

/// "TLS 1.3", "TLS 1.2" ... as Wireshark writes them.
pub fn version_name(v: u16) -> String {
    match v {
        0x0300 => "SSL 3.0".into(),
        0x0301 => "TLS 1.0".into(),
        0x0302 => "TLS 1.1".into(),
        0x0303 => "TLS 1.2".into(),
        0x0304 => "TLS 1.3".into(),
        other => format!("0x{other:04x}"),
    }
}

/// Whether key-exchange group `g` costs a host many times what x25519
/// or P-256 does (key generation and agreement: P-521's field
/// arithmetic, finite-field Diffie-Hellman's modular exponentiations;
/// milliseconds to tens of them on a phone, against tens of
/// microseconds), enough to show in a handshake's turns.
pub fn costly_group(g: u16) -> bool {
    matches!(g, 0x0019 | 0x0100..=0x0104)
}

/// IANA names of the key-exchange groups seen in practice.
pub fn group_name(g: u16) -> String {
    match g {
        0x0017 => "secp256r1".into(),
        0x0018 => "secp384r1".into(),
        0x0019 => "secp521r1".into(),
        0x001d => "x25519".into(),
        0x001e => "x448".into(),
        0x0100 => "ffdhe2048".into(),
        0x0101 => "ffdhe3072".into(),
        0x0102 => "ffdhe4096".into(),
        0x0103 => "ffdhe6144".into(),
        0x0104 => "ffdhe8192".into(),
        0x11ec => "X25519MLKEM768".into(),
        0x11eb => "SecP256r1MLKEM768".into(),
        0x6399 => "X25519Kyber768Draft00".into(),
        g if is_grease(g) => "GREASE".into(),
        other => format!("0x{other:04x}"),
    }
}

/// IANA name of a cipher suite, from `tls-parser`'s table.
pub fn cipher_name(id: u16) -> String {
    tls_parser::TlsCipherSuite::from_id(id)
        .map(|c| c.name.to_string())
        .unwrap_or_else(|| format!("0x{id:04x}"))
}

/// Whether a client may False Start (RFC 7918) a TLS 1.2 handshake that
/// negotiated `cipher`: a forward-secret key exchange (ECDHE, DHE) and an
/// AEAD cipher, as the browsers and BoringSSL required. An RSA key
/// exchange or a CBC suite waits for the server's Finished.
pub fn false_start_allowed(version: u16, cipher: u16) -> bool {
    use tls_parser::{TlsCipherEnc, TlsCipherEncMode, TlsCipherKx};
    let Some(suite) = tls_parser::TlsCipherSuite::from_id(cipher) else {
        return false;
    };
    version == 0x0303
        && matches!(suite.kx, TlsCipherKx::Ecdhe | TlsCipherKx::Dhe)
        && (matches!(
            suite.enc_mode,
            TlsCipherEncMode::Gcm | TlsCipherEncMode::Ccm
        ) || suite.enc == TlsCipherEnc::Chacha20_Poly1305)
}

/// TLS 1.3 or one of its drafts: 0x7fNN (IETF draft NN) and Facebook's
/// 0xfbNN experiments negotiated the 1.3 handshake (encrypted after the
/// ServerHello, PSK resumption) before RFC 8446 fixed 0x0304.
pub fn is_tls13(version: u16) -> bool {
    version == 0x0304 || version >> 8 == 0x7f || version >> 8 == 0xfb
}

/// A TLS record header: a known content type, version 3.0-3.4 and a
/// length a record may have.
/// An SSL 2.0-format ClientHello offering SSL 3.0 or TLS (RFC 5246
/// appendix E.2; old OpenSSL, Java and Windows clients sent it for
/// compatibility), when `bytes` begin with a whole one: its length on the
/// wire, and the TLS ClientHello handshake message it stands for (its
/// challenge right-aligned in the random, its SSL 2.0-only cipher kinds
/// left out, no compression, no extensions).
pub fn sslv2_client_hello(bytes: &[u8]) -> Option<(usize, Vec<u8>)> {
    let be16 = |at: usize| -> Option<usize> {
        Some(u16::from_be_bytes([*bytes.get(at)?, *bytes.get(at + 1)?]) as usize)
    };
    // A two-byte header (its top bit set), then the message: type 1, the
    // version 3.x, the three lengths.
    let (&[b0, _, msg_type, major, minor], _) = bytes.split_first_chunk::<5>()?;
    if b0 & 0x80 == 0 || msg_type != handshake_type::CLIENT_HELLO || major != 3 || minor > 3 {
        return None;
    }
    let len = be16(0)? & 0x7fff;
    let (specs, session, challenge) = (be16(5)?, be16(7)?, be16(9)?);
    if len != 9 + specs + session + challenge
        || specs % 3 != 0
        || session > 32
        || !(16..=32).contains(&challenge)
        || bytes.len() < 2 + len
    {
        return None;
    }
    let specs_at = 11;
    let session_at = specs_at + specs;
    let challenge_at = session_at + session;
    let suites: Vec<u8> = bytes[specs_at..session_at]
        .chunks_exact(3)
        .filter(|spec| spec[0] == 0)
        .flat_map(|spec| [spec[1], spec[2]])
        .collect();
    let mut body = vec![major, minor];
    body.extend(std::iter::repeat_n(0, 32 - challenge));
    body.extend_from_slice(&bytes[challenge_at..challenge_at + challenge]);
    body.push(session as u8);
    body.extend_from_slice(&bytes[session_at..challenge_at]);
    body.extend_from_slice(&(suites.len() as u16).to_be_bytes());
    body.extend_from_slice(&suites);
    body.extend_from_slice(&[1, 0]);
    let mut message = vec![handshake_type::CLIENT_HELLO];
    message.extend_from_slice(&(body.len() as u32).to_be_bytes()[1..]);
    message.extend_from_slice(&body);
    Some((2 + len, message))
}

fn plausible_header(h: &[u8]) -> bool {
    let version = u16::from_be_bytes([h[1], h[2]]);
    let length = u16::from_be_bytes([h[3], h[4]]) as usize;
    (content_type::CHANGE_CIPHER_SPEC..=content_type::HEARTBEAT).contains(&h[0])
        && (0x0300..=0x0304).contains(&version)
        && length <= MAX_RECORD_BODY
}

#[cfg(test)]
mod tests {

    #[test]
    fn false_start_needs_tls12_a_forward_secret_exchange_and_an_aead() {
        // ECDHE-RSA-AES128-GCM-SHA256, ECDHE-ECDSA-CHACHA20-POLY1305.
        assert!(false_start_allowed(0x0303, 0xc02f));
        assert!(false_start_allowed(0x0303, 0xcca9));
        // RSA key exchange; CBC; TLS 1.0; an unknown suite.
        assert!(!false_start_allowed(0x0303, 0x009c));
        assert!(!false_start_allowed(0x0303, 0xc013));
        assert!(!false_start_allowed(0x0301, 0xc02f));
        assert!(!false_start_allowed(0x0303, 0xfefe));
    }
    use super::*;
    use crate::hex;

    /// A Certificate message (with its header) of these DER certificates.
    fn certificate_message(chain: &[&[u8]]) -> Vec<u8> {
        let u24 = |n: usize| [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        let mut list = Vec::new();
        for der in chain {
            list.extend(u24(der.len()));
            list.extend(*der);
        }
        let mut body = u24(list.len()).to_vec();
        body.extend(list);
        let mut raw = vec![11];
        raw.extend(u24(body.len()));
        raw.extend(body);
        raw
    }

    /// A self-signed certificate alone; a leaf its CA signed, with the
    /// CA; the leaf alone (an incomplete chain); none parses from a
    /// message cut short.
    #[test]
    fn a_certificate_chain_says_how_many_and_whether_the_first_is_self_signed() {
        use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};
        let key = KeyPair::generate().unwrap();
        let own = CertificateParams::new(vec!["self.test".to_string()])
            .unwrap()
            .self_signed(&key)
            .unwrap();
        let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca.distinguished_name
            .push(rcgen::DnType::CommonName, "rttdoc test CA");
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let ca_key = KeyPair::generate().unwrap();
        let ca = ca.self_signed(&ca_key).unwrap();
        let leaf_key = KeyPair::generate().unwrap();
        let leaf = CertificateParams::new(vec!["leaf.test".to_string()])
            .unwrap()
            .signed_by(&leaf_key, &ca, &ca_key)
            .unwrap();
        let parsed = |chain: &[&[u8]]| CertificateChain::parse(&certificate_message(chain));
        assert_eq!(
            parsed(&[own.der()]),
            Some(CertificateChain {
                certificates: 1,
                self_signed: true,
                online_checks: false
            })
        );
        assert_eq!(
            parsed(&[leaf.der(), ca.der()]),
            Some(CertificateChain {
                certificates: 2,
                self_signed: false,
                online_checks: false
            })
        );
        assert_eq!(
            parsed(&[leaf.der()]),
            Some(CertificateChain {
                certificates: 1,
                self_signed: false,
                online_checks: false
            })
        );
        // A leaf naming its CA's CRL: somewhere to go online.
        let mut listed = CertificateParams::new(vec!["listed.test".to_string()]).unwrap();
        listed.crl_distribution_points = vec![rcgen::CrlDistributionPoint {
            uris: vec!["http://crl.test/ca.crl".to_string()],
        }];
        let listed = listed.signed_by(&leaf_key, &ca, &ca_key).unwrap();
        assert_eq!(
            parsed(&[listed.der(), ca.der()]),
            Some(CertificateChain {
                certificates: 2,
                self_signed: false,
                online_checks: true
            })
        );
        let whole = certificate_message(&[leaf.der(), ca.der()]);
        assert_eq!(CertificateChain::parse(&whole[..whole.len() - 10]), None);
        assert_eq!(parsed(&[]), None);
    }

    /// The SSL 2.0-format ClientHello of Wireshark's rsasnakeoil2.pcap
    /// (frame 4): SSL 3.0 offered, 26 cipher kinds (3 of them SSL 2.0's
    /// own), no session id, a 16-byte challenge.
    const SSLV2_HELLO: &str = "8067010300004e000000100100800300800700c006004002008004008000003900003800003500003300003200000400000500002f00001600001300feff00000a00001500001200fefe000009000064000062000003000006a8b893bb90e92aa24d6dcc1ce72a8021";

    #[test]
    fn an_sslv2_format_hello_is_the_client_hello_it_stands_for() {
        let mut bytes = hex(SSLV2_HELLO);
        let (len, message) = sslv2_client_hello(&bytes).unwrap();
        assert_eq!(len, bytes.len());
        let hello = ClientHello::parse(&message).unwrap();
        assert_eq!(hello.max_version(), 0x0300);
        // The challenge right-aligned in the random, zeros before it.
        assert_eq!(&message[6..22], &[0; 16]);
        assert_eq!(&message[22..38], &bytes[len - 16..]);
        // Framed as the stream's first record, the rest after it read on.
        let mut next = record(content_type::HANDSHAKE, &[1, 0, 0, 0]);
        bytes.append(&mut next);
        let mut stream = RecordStream::<u32>::default();
        let mut seen = Vec::new();
        stream.feed(&bytes, 4, |r| {
            seen.push((r.content_type, r.version, r.body.map(<[u8]>::to_vec)))
        });
        assert_eq!(seen.len(), 2);
        assert_eq!(seen[0], (content_type::HANDSHAKE, 0x0300, Some(message)));
        assert!(!stream.is_broken());
    }

    /// A TLS 1.2 ClientHello message (its 4-byte header first) with one
    /// cipher suite and these extensions (type, data).
    fn client_hello_with(extensions: &[(u16, &[u8])]) -> Vec<u8> {
        let mut body = vec![3, 3];
        body.extend([7; 32]);
        body.extend([0, 0, 2, 0xc0, 0x2b, 1, 0]);
        let mut exts = Vec::new();
        for (kind, data) in extensions {
            exts.extend(kind.to_be_bytes());
            exts.extend((data.len() as u16).to_be_bytes());
            exts.extend(*data);
        }
        body.extend((exts.len() as u16).to_be_bytes());
        body.extend(exts);
        let mut message = vec![handshake_type::CLIENT_HELLO, 0];
        message.extend((body.len() as u16).to_be_bytes());
        message.extend(body);
        message
    }

    #[test]
    fn a_client_asks_for_a_stapled_status_by_either_status_request() {
        // status_request as OpenSSL and GnuTLS send it: OCSP, no
        // responder ids, no request extensions.
        let ocsp: &[u8] = &[1, 0, 0, 0, 0];
        for kind in [ext::STATUS_REQUEST, ext::STATUS_REQUEST_V2] {
            let hello = ClientHello::parse(&client_hello_with(&[
                (0x000a, &[0, 2, 0, 0x1d]),
                (kind, ocsp),
            ]))
            .unwrap();
            assert!(hello.status_request, "{kind}");
        }
        // Near miss: other extensions, or none.
        let hello = ClientHello::parse(&client_hello_with(&[
            (0x000a, &[0, 2, 0, 0x1d]),
            (0x0017, &[]),
        ]))
        .unwrap();
        assert!(!hello.status_request);
        assert!(
            !ClientHello::parse(&client_hello_with(&[]))
                .unwrap()
                .status_request
        );
    }

    #[test]
    fn a_client_offering_npn_says_so() {
        // A 2012 browser's hello: NPN (empty in the ClientHello), no ALPN.
        let hello = ClientHello::parse(&client_hello_with(&[
            (0x000a, &[0, 2, 0, 0x1d]),
            (ext::NEXT_PROTOCOL, &[]),
        ]))
        .unwrap();
        assert!(hello.next_protocol && hello.alpn.is_empty());
        assert!(
            !ClientHello::parse(&client_hello_with(&[(0x000a, &[0, 2, 0, 0x1d])]))
                .unwrap()
                .next_protocol
        );
    }

    #[test]
    fn not_an_sslv2_hello() {
        let bytes = hex(SSLV2_HELLO);
        // Cut short, or a length that does not add up, or SSL 2.0 itself.
        assert!(sslv2_client_hello(&bytes[..bytes.len() - 1]).is_none());
        let mut wrong = bytes.clone();
        wrong[1] += 1;
        assert!(sslv2_client_hello(&wrong).is_none());
        let mut v2 = bytes.clone();
        (v2[3], v2[4]) = (0, 2);
        assert!(sslv2_client_hello(&v2).is_none());
        // A TLS record, and anything after the stream's first record.
        assert!(sslv2_client_hello(&record(content_type::HANDSHAKE, &[1, 0, 0, 0])).is_none());
        let mut stream = RecordStream::<u32>::default();
        stream.feed(&record(content_type::HANDSHAKE, &[1, 0, 0, 0]), 1, |_| {});
        stream.feed(&bytes, 2, |_| {});
        assert!(stream.is_broken());
    }

    fn record(content_type: u8, body: &[u8]) -> Vec<u8> {
        let mut r = vec![
            content_type,
            3,
            3,
            (body.len() >> 8) as u8,
            body.len() as u8,
        ];
        r.extend_from_slice(body);
        r
    }

    fn collect(
        stream: &mut RecordStream<usize>,
        chunks: &[&[u8]],
    ) -> Vec<(u8, u16, Option<Vec<u8>>)> {
        let mut out = Vec::new();
        for (i, c) in chunks.iter().enumerate() {
            stream.feed(c, i, |r| {
                out.push((r.content_type, r.length, r.body.map(|b| b.to_vec())))
            });
        }
        out
    }

    #[test]
    fn records_split_across_segments_at_every_offset_are_framed() {
        let mut bytes = record(22, &[1, 0, 0, 2, 9, 9]);
        bytes.extend(record(23, &[0xaa; 300]));
        bytes.extend(record(20, &[1]));
        for cut in 0..bytes.len() {
            let mut s = RecordStream::default();
            let got = collect(&mut s, &[&bytes[..cut], &bytes[cut..]]);
            assert_eq!(got.len(), 3, "cut at {cut}");
            let mut starts = Vec::new();
            let mut s2 = RecordStream::default();
            s2.feed(&bytes[..cut], 0usize, |r| starts.push(r.started));
            s2.feed(&bytes[cut..], 1usize, |r| starts.push(r.started));
            let expect_first = if cut == 0 { 1 } else { 0 };
            assert_eq!(
                starts[0], expect_first,
                "first record starts in the chunk holding its header byte"
            );
            assert_eq!(got[0], (22, 6, Some(vec![1, 0, 0, 2, 9, 9])));
            assert_eq!(got[1], (23, 300, None));
            assert_eq!(got[2], (20, 1, Some(vec![1])));
        }
    }

    #[test]
    fn non_tls_bytes_break_the_stream_instead_of_misframing() {
        let mut s = RecordStream::default();
        let got = collect(&mut s, &[b"GET / HTTP/1.1\r\n"]);
        assert!(got.is_empty());
        assert!(s.is_broken());
    }

    #[test]
    fn uncaptured_bytes_inside_a_body_keep_framing() {
        let body: Vec<u8> = (0..100).collect();
        let bytes = record(22, &body);
        let mut s = RecordStream::default();
        let mut got = Vec::new();
        s.feed(&bytes[..50], 1u32, |r| {
            got.push((r.body.is_some(), r.cut_body.to_vec()))
        });
        s.skip(55, |r| got.push((r.body.is_some(), r.cut_body.to_vec())));
        // The body is lost, its first 45 bytes (the captured ones) kept.
        assert_eq!(got, vec![(false, body[..45].to_vec())]);
        assert!(!s.is_broken() && s.at_record_boundary());
        s.skip(3, |_| {});
        assert!(s.is_broken());
    }

    #[test]
    fn a_cut_body_is_what_came_before_the_hole_and_a_whole_body_is_not_cut() {
        let body: Vec<u8> = (0..100).collect();
        let bytes = record(22, &body);
        let mut s = RecordStream::default();
        let mut got = Vec::new();
        // Captured, missing, captured again (a later segment of the record).
        s.feed(&bytes[..20], 1u32, |_| {});
        s.skip(30, |_| {});
        s.feed(&bytes[50..], 2u32, |r| {
            got.push((r.body.map(<[u8]>::to_vec), r.cut_body.to_vec()))
        });
        assert_eq!(got, vec![(None, body[..15].to_vec())]);
        s.feed(&bytes, 3u32, |r| {
            got.push((r.body.map(<[u8]>::to_vec), r.cut_body.to_vec()))
        });
        assert_eq!(got[1], (Some(body.clone()), Vec::new()));
    }

    #[test]
    fn framing_lost_to_a_capture_hole_is_found_again_at_a_segment_starting_a_record() {
        let mut s = RecordStream::default();
        let mut got = Vec::new();
        // A record whose body is captured in part, then a hole across the
        // next record's header: the framing is gone, and every byte from
        // that header on is reported unframed ...
        let first = record(23, &[1u8; 20]);
        assert_eq!(s.feed(&first[..10], 0u32, |r| got.push(r.length)), 0);
        assert_eq!(s.skip(15 + 3, |r| got.push(r.length)), 3);
        assert!(s.is_broken());
        // ... a segment starting mid-record does not bring it back ...
        assert_eq!(s.feed(&[9u8; 40], 1u32, |r| got.push(r.length)), 40);
        assert_eq!(s.skip(7, |r| got.push(r.length)), 7);
        assert!(s.is_broken());
        // ... one starting with a record header does.
        assert_eq!(
            s.feed(&record(23, &[1u8; 30]), 2u32, |r| got.push(r.length)),
            0
        );
        assert!(!s.is_broken());
        assert_eq!(got, vec![20, 30]);
        // Bytes that were never TLS stay broken, headers or not, and are
        // not reported as unframed TLS.
        let mut plain = RecordStream::default();
        assert_eq!(plain.feed(b"GET / HTTP/1.1\r\n", 1u32, |_| {}), 0);
        assert_eq!(plain.feed(&record(23, &[1u8; 30]), 2u32, |_| {}), 0);
        assert_eq!(plain.skip(5, |_| {}), 0);
        assert!(plain.is_broken());
    }

    #[test]
    fn a_cut_handshake_record_is_named_by_the_header_that_survived() {
        let ch = client_hello("example.com", &[(0x001d, 32)], false);
        // ClientHello record, cut after its type byte, after its header,
        // or deep into the random.
        for keep in [1, 4, 20] {
            let got = CutHandshake::read(&ch[..keep], ch.len() as u16);
            assert_eq!(
                got.map(|c| c.msg_type),
                Some(handshake_type::CLIENT_HELLO),
                "{keep}"
            );
            // Its size, once its header is in.
            let size = (keep >= 4).then_some(ch.len() as u32);
            assert_eq!(got.and_then(|c| c.msg_len), size, "{keep}");
            assert_eq!(got.and_then(|c| c.hello_retry_request), None);
        }
        // Nothing of the body: nothing to say.
        assert_eq!(CutHandshake::read(&[], 300), None);
        // A length past the record's end: the record continues a message.
        assert_eq!(CutHandshake::read(&ch[..4], ch.len() as u16 - 1), None);
        // A ServerHello tells a HelloRetryRequest once its random is in.
        let hrr = server_hello(HRR_RANDOM, &[(43, vec![3, 4])]);
        let sh = server_hello([7; 32], &[(43, vec![3, 4])]);
        let len = hrr.len() as u16;
        assert_eq!(
            CutHandshake::read(&hrr[..38], len)
                .unwrap()
                .hello_retry_request,
            Some(true)
        );
        assert_eq!(
            CutHandshake::read(&sh[..38], len)
                .unwrap()
                .hello_retry_request,
            Some(false)
        );
        assert_eq!(
            CutHandshake::read(&hrr[..37], len)
                .unwrap()
                .hello_retry_request,
            None
        );
        assert_eq!(
            CutHandshake::read(&hrr[..37], len).unwrap().msg_type,
            handshake_type::SERVER_HELLO
        );
    }

    /// A ServerKeyExchange's group and signer, as dns_dot.pcap's (x25519,
    /// a 256-byte rsa_pss signature: RSA-2048) and http2-brotli's (P-384,
    /// 512 bytes: RSA-4096) show them; an ECDSA one; TLS 1.0's, whose suite
    /// names the key; and damage refused.
    #[test]
    fn a_server_key_exchange_tells_its_group_and_signer() {
        let ske = |group: u16, point: usize, alg: Option<u16>, sig: usize| {
            let mut body = vec![3];
            body.extend(group.to_be_bytes());
            body.push(point as u8);
            body.extend(std::iter::repeat_n(4u8, point));
            if let Some(a) = alg {
                body.extend(a.to_be_bytes());
            }
            body.extend((sig as u16).to_be_bytes());
            body.extend(std::iter::repeat_n(0x5au8, sig));
            let mut raw = vec![12, 0];
            raw.extend((body.len() as u16).to_be_bytes());
            raw.extend(body);
            raw
        };
        // ECDHE-RSA-AES128-GCM-SHA256, TLS 1.2, rsa_pss_rsae_sha256.
        let x =
            ServerKeyExchange::parse(&ske(0x001d, 32, Some(0x0804), 256), 0x0303, 0xc02f).unwrap();
        assert_eq!((x.group, x.signer), (Some(0x001d), Signer::Rsa(2048)));
        assert!(x.cheap());
        // rsa_pkcs1_sha256 on P-384, 512 bytes.
        let x =
            ServerKeyExchange::parse(&ske(0x0018, 97, Some(0x0401), 512), 0x0303, 0xc02f).unwrap();
        assert_eq!((x.group, x.signer), (Some(0x0018), Signer::Rsa(4096)));
        assert!(!x.cheap());
        // P-521, RSA-2048: the group costly.
        let x =
            ServerKeyExchange::parse(&ske(0x0019, 133, Some(0x0804), 256), 0x0303, 0xc02f).unwrap();
        assert!(!x.cheap());
        // ecdsa_secp256r1_sha256 (a DER signature of about 71 bytes).
        let x =
            ServerKeyExchange::parse(&ske(0x0017, 65, Some(0x0403), 71), 0x0303, 0xc02b).unwrap();
        assert_eq!(x.signer, Signer::Ecdsa);
        assert!(x.cheap());
        // TLS 1.0: no algorithm, the suite's (ECDHE-RSA-AES128-SHA).
        let x = ServerKeyExchange::parse(&ske(0x0017, 65, None, 128), 0x0301, 0xc013).unwrap();
        assert_eq!(x.signer, Signer::Rsa(1024));
        // Cut short, or with bytes left over: refused.
        let whole = ske(0x001d, 32, Some(0x0804), 256);
        assert_eq!(
            ServerKeyExchange::parse(&whole[..whole.len() - 1], 0x0303, 0xc02f),
            None
        );
        let mut longer = whole.clone();
        longer.push(0);
        assert_eq!(ServerKeyExchange::parse(&longer, 0x0303, 0xc02f), None);
        // An RSA key exchange has none to read.
        assert_eq!(ServerKeyExchange::parse(&whole, 0x0303, 0x009c), None);
    }

    #[test]
    fn handshake_messages_spanning_records_are_joined() {
        let msg = [11u8, 0, 0, 5, 1, 2, 3, 4, 5];
        let mut h = HandshakeReader::default();
        let mut got = Vec::new();
        h.feed(&msg[..3], |m| got.push((m.msg_type, m.body.to_vec())));
        assert!(got.is_empty());
        h.feed(&msg[3..], |m| got.push((m.msg_type, m.body.to_vec())));
        h.feed(&[14, 0, 0, 0], |m| got.push((m.msg_type, m.body.to_vec())));
        assert_eq!(got, vec![(11, vec![1, 2, 3, 4, 5]), (14, vec![])]);
    }

    /// A ClientHello as a TLS 1.3 client with a post-quantum share sends it.
    pub(crate) fn client_hello(sni: &str, groups: &[(u16, usize)], psk: bool) -> Vec<u8> {
        let mut exts = Vec::new();
        let mut push = |kind: u16, data: Vec<u8>| {
            exts.extend_from_slice(&kind.to_be_bytes());
            exts.extend_from_slice(&(data.len() as u16).to_be_bytes());
            exts.extend_from_slice(&data);
        };
        let mut sni_ext = ((sni.len() + 3) as u16).to_be_bytes().to_vec();
        sni_ext.push(0);
        sni_ext.extend_from_slice(&(sni.len() as u16).to_be_bytes());
        sni_ext.extend_from_slice(sni.as_bytes());
        push(0, sni_ext);
        push(16, vec![0, 3, 2, b'h', b'2']);
        push(43, vec![4, 0x03, 0x04, 0x03, 0x03]);
        let mut ks = Vec::new();
        for (g, len) in groups {
            ks.extend_from_slice(&g.to_be_bytes());
            ks.extend_from_slice(&(*len as u16).to_be_bytes());
            ks.extend(std::iter::repeat_n(0x42, *len));
        }
        let mut ks_ext = (ks.len() as u16).to_be_bytes().to_vec();
        ks_ext.extend(ks);
        push(51, ks_ext);
        if psk {
            push(42, vec![]);
            push(41, vec![0, 0, 0, 0]);
        }
        let mut body = vec![3, 3];
        body.extend_from_slice(&[0x11; 32]);
        body.push(32);
        body.extend_from_slice(&[0x22; 32]);
        body.extend_from_slice(&[0, 4, 0x13, 0x01, 0x13, 0x02, 1, 0]);
        body.extend_from_slice(&(exts.len() as u16).to_be_bytes());
        body.extend(exts);
        let mut msg = vec![1, 0, (body.len() >> 8) as u8, body.len() as u8];
        msg.extend(body);
        msg
    }

    #[test]
    fn client_hello_fields_are_read() {
        let msg = client_hello("example.com", &[(0x11ec, 1216), (0x001d, 32)], true);
        assert!(
            msg.len() > 1216 + 32,
            "the ML-KEM share alone is 1216 bytes"
        );
        let ch = ClientHello::parse(&msg).expect("parses");
        assert_eq!(ch.sni.as_deref(), Some("example.com"));
        assert_eq!(ch.alpn, vec!["h2".to_string()]);
        assert_eq!(ch.key_share_groups, vec![0x11ec, 0x001d]);
        assert_eq!(ch.max_version(), 0x0304);
        assert!(ch.early_data && ch.pre_shared_key);
        assert_eq!(ch.session_id_len, 32);
        assert_eq!(group_name(ch.key_share_groups[0]), "X25519MLKEM768");
    }

    fn server_hello(random: [u8; 32], exts: &[(u16, Vec<u8>)]) -> Vec<u8> {
        let mut e = Vec::new();
        for (kind, data) in exts {
            e.extend_from_slice(&kind.to_be_bytes());
            e.extend_from_slice(&(data.len() as u16).to_be_bytes());
            e.extend_from_slice(data);
        }
        let mut body = vec![3, 3];
        body.extend_from_slice(&random);
        body.push(0);
        body.extend_from_slice(&[0x13, 0x01, 0]);
        body.extend_from_slice(&(e.len() as u16).to_be_bytes());
        body.extend(e);
        let mut msg = vec![2, 0, 0, body.len() as u8];
        msg.extend(body);
        msg
    }

    #[test]
    fn p521_and_finite_field_groups_are_the_costly_ones() {
        for g in [0x0019, 0x0100, 0x0101, 0x0102, 0x0103, 0x0104] {
            assert!(costly_group(g), "{}", group_name(g));
        }
        for g in [0x0017, 0x0018, 0x001d, 0x001e, 0x11ec, 0x0a0a] {
            assert!(!costly_group(g), "{}", group_name(g));
        }
        assert_eq!(group_name(0x0104), "ffdhe8192");
    }

    #[test]
    fn dhe_and_certificate_less_suites_are_read_from_the_suites_table() {
        // TLS_DHE_RSA_WITH_AES_128_GCM_SHA256, TLS_DHE_PSK_WITH_CHACHA20_POLY1305_SHA256.
        assert!(dhe_suite(0x009e) && dhe_suite(0xccad));
        // TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, TLS_RSA_WITH_AES_128_CBC_SHA.
        assert!(!dhe_suite(0xc02f) && !dhe_suite(0x002f));
        // PSK and DHE_PSK, ECDHE_PSK: no certificate; RSA and ECDHE_RSA: one.
        assert!(certificate_less_suite(0x00a8) && certificate_less_suite(0xccad));
        assert!(certificate_less_suite(0xccac));
        assert!(!certificate_less_suite(0x002f) && !certificate_less_suite(0xc02f));
        // RC4 with SHA-1 (ECDHE_RSA too) and with MD5: the MAC alone; a
        // block and an AEAD cipher: none.
        assert_eq!(stream_cipher_overhead(0x0005), Some(20));
        assert_eq!(stream_cipher_overhead(0xc011), Some(20));
        assert_eq!(stream_cipher_overhead(0x0004), Some(16));
        assert_eq!(stream_cipher_overhead(0x002f), None);
        assert_eq!(stream_cipher_overhead(0xc02f), None);
    }

    #[test]
    fn server_hello_reports_negotiated_version_group_and_psk() {
        let mut share = vec![0x00, 0x1d, 0, 32];
        share.extend([0u8; 32]);
        let msg = server_hello([5; 32], &[(43, vec![3, 4]), (51, share), (41, vec![0, 0])]);
        let sh = ServerHello::parse(&msg).unwrap();
        assert_eq!(sh.version, 0x0304);
        assert_eq!(sh.key_share_group, Some(0x001d));
        assert!(sh.pre_shared_key && !sh.hello_retry_request);
        assert_eq!(cipher_name(sh.cipher), "TLS_AES_128_GCM_SHA256");
    }

    #[test]
    fn hello_retry_request_is_recognised_by_its_random() {
        let msg = server_hello(HRR_RANDOM, &[(43, vec![3, 4]), (51, vec![0x00, 0x17])]);
        let sh = ServerHello::parse(&msg).unwrap();
        assert!(sh.hello_retry_request);
        assert_eq!(sh.key_share_group, Some(0x0017));
    }

    #[test]
    fn tls12_server_hello_has_legacy_version() {
        let msg = server_hello([1; 32], &[]);
        let sh = ServerHello::parse(&msg).unwrap();
        assert_eq!(sh.version, 0x0303);
    }

    proptest::proptest! {
        #[test]
        fn record_stream_and_hello_parsers_survive_garbage(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..600), cut in 0usize..600) {
            let mut s = RecordStream::<u8>::default();
            let cut = cut.min(bytes.len());
            let mut unframed = s.feed(&bytes[..cut], 0, |r| { let _ = CutHandshake::read(r.cut_body, r.length); });
            unframed += s.skip(cut % 7, |r| { let _ = CutHandshake::read(r.cut_body, r.length); });
            unframed += s.feed(&bytes[cut..], 1, |_| {});
            proptest::prop_assert!(unframed <= bytes.len() + cut % 7);
            let _ = CutHandshake::read(&bytes, cut as u16);
            let _ = ClientHello::parse(&bytes);
            let _ = ServerHello::parse(&bytes);
            let _ = CertificateChain::parse(&bytes);
            // Garbage framed as a Certificate message's certificates: the
            // DER reading behind it.
            let _ = CertificateChain::parse(&certificate_message(&[&bytes[..cut], &bytes[cut..]]));
            let mut h = HandshakeReader::default();
            h.feed(&bytes, |_| {});
        }
    }
}
