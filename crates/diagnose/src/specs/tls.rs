//! TLS records built by hand, byte for byte as RFC 8446 / 5246 lay them
//! out, for the specifications of the TLS detectors; and the handshakes
//! made of them.

use super::*;

/// TLS_AES_128_GCM_SHA256: a Finished record is 4 + 32 + 1 + 16 bytes.
pub const AES128: u16 = 0x1301;
/// The encrypted Finished record of [`AES128`].
pub const FINISHED_LEN: usize = 4 + 32 + 1 + 16;
/// An encrypted EndOfEarlyData: 4 bytes of message, 1 of type, 16 of tag.
pub const END_OF_EARLY_DATA_LEN: usize = 4 + 1 + 16;
/// SHA-256("HelloRetryRequest"): the random of a HelloRetryRequest.
pub const HRR_RANDOM: [u8; 32] = [
    0xcf, 0x21, 0xad, 0x74, 0xe5, 0x9a, 0x61, 0x11, 0xbe, 0x1d, 0x8c, 0x02, 0x1e, 0x65, 0xb8, 0x91,
    0xc2, 0xa2, 0x11, 0x16, 0x7a, 0xbb, 0x8c, 0x5e, 0x07, 0x9e, 0x09, 0xe2, 0xc8, 0xa8, 0x33, 0x9c,
];
pub const X25519: u16 = 0x001d;
pub const SECP256R1: u16 = 0x0017;

fn ext(out: &mut Vec<u8>, kind: u16, data: &[u8]) {
    out.extend_from_slice(&kind.to_be_bytes());
    out.extend_from_slice(&(data.len() as u16).to_be_bytes());
    out.extend_from_slice(data);
}

/// A handshake message: type, 24-bit length, body.
pub fn message(kind: u8, body: &[u8]) -> Vec<u8> {
    let n = body.len();
    let mut m = vec![kind, (n >> 16) as u8, (n >> 8) as u8, n as u8];
    m.extend_from_slice(body);
    m
}

/// A record: content type, legacy version, length, body.
pub fn record(content_type: u8, body: &[u8]) -> Vec<u8> {
    let mut r = vec![content_type, 3, 3];
    r.extend_from_slice(&(body.len() as u16).to_be_bytes());
    r.extend_from_slice(body);
    r
}

pub fn handshake_record(messages: &[Vec<u8>]) -> Vec<u8> {
    record(22, &messages.concat())
}

/// An application-data record of `len` body bytes (encrypted: opaque).
pub fn encrypted(len: usize) -> Vec<u8> {
    record(23, &vec![0x5a; len])
}

/// An encrypted alert record (a close_notify: its 2 bytes and the
/// AEAD's 24).
pub fn encrypted_alert() -> Vec<u8> {
    record(21, &[0x5a; 26])
}

pub fn change_cipher_spec() -> Vec<u8> {
    record(20, &[1])
}

/// What a ClientHello offers.
#[derive(Clone, Copy, Default)]
pub struct Offer {
    /// TLS 1.3 (supported_versions); else a TLS 1.2 client.
    pub tls13: bool,
    /// The group of the one key share sent (TLS 1.3).
    pub group: u16,
    pub psk: bool,
    pub early_data: bool,
    /// A TLS 1.2 session ticket to resume.
    pub ticket: bool,
    /// ALPN offering `h2`.
    pub alpn_h2: bool,
    /// Next Protocol Negotiation offered (ALPN's forerunner: a browser's
    /// before 2016).
    pub npn: bool,
    /// The server name asked for (server_name, RFC 6066 3).
    pub sni: Option<&'static str>,
    /// A stapled OCSP status asked for (status_request, RFC 6066 8).
    pub status_request: bool,
    pub random: [u8; 32],
}

impl Offer {
    pub fn tls13() -> Offer {
        Offer {
            tls13: true,
            group: X25519,
            random: [0x11; 32],
            ..Offer::default()
        }
    }
    pub fn tls12() -> Offer {
        Offer {
            random: [0x11; 32],
            ..Offer::default()
        }
    }
}

/// A ClientHello record.
pub fn client_hello(o: Offer) -> Vec<u8> {
    let mut exts = Vec::new();
    if let Some(name) = o.sni {
        let name = name.as_bytes();
        let mut list = vec![0];
        list.extend_from_slice(&(name.len() as u16).to_be_bytes());
        list.extend_from_slice(name);
        let mut sni = (list.len() as u16).to_be_bytes().to_vec();
        sni.extend(list);
        ext(&mut exts, 0, &sni);
    }
    if o.tls13 {
        ext(&mut exts, 43, &[2, 0x03, 0x04]);
        let mut share = o.group.to_be_bytes().to_vec();
        share.extend_from_slice(&32u16.to_be_bytes());
        share.extend_from_slice(&[0x42; 32]);
        let mut ks = (share.len() as u16).to_be_bytes().to_vec();
        ks.extend(share);
        ext(&mut exts, 51, &ks);
    }
    if o.ticket {
        ext(&mut exts, 35, &[0x77; 64]);
    }
    if o.status_request {
        // OCSP, no responder ids, no request extensions.
        ext(&mut exts, 5, &[1, 0, 0, 0, 0]);
    }
    if o.early_data {
        ext(&mut exts, 42, &[]);
    }
    if o.alpn_h2 {
        ext(&mut exts, 16, &[0, 3, 2, b'h', b'2']);
    }
    if o.npn {
        ext(&mut exts, 13172, &[]);
    }
    if o.psk {
        // Last, as RFC 8446 4.2.11 requires (contents opaque here).
        ext(&mut exts, 41, &[0, 0, 0, 0]);
    }
    let mut body = vec![3, 3];
    body.extend_from_slice(&o.random);
    body.push(0);
    body.extend_from_slice(&[0, 4, 0x13, 0x01, 0xc0, 0x2f, 1, 0]);
    body.extend_from_slice(&(exts.len() as u16).to_be_bytes());
    body.extend(exts);
    handshake_record(&[message(1, &body)])
}

/// A ServerHello message: TLS 1.3 (supported_versions, a key share of
/// `group`, `psk` accepted) or TLS 1.2 (`cipher`, no extensions).
pub fn server_hello(tls13: bool, random: [u8; 32], group: u16, psk: bool) -> Vec<u8> {
    let mut exts = Vec::new();
    let cipher: u16 = if tls13 { AES128 } else { 0xc02f };
    if tls13 {
        ext(&mut exts, 43, &[0x03, 0x04]);
        let mut share = group.to_be_bytes().to_vec();
        if random != HRR_RANDOM {
            share.extend_from_slice(&32u16.to_be_bytes());
            share.extend_from_slice(&[0x24; 32]);
        }
        ext(&mut exts, 51, &share);
        if psk {
            ext(&mut exts, 41, &[0, 0]);
        }
    }
    let mut body = vec![3, 3];
    body.extend_from_slice(&random);
    body.push(0);
    body.extend_from_slice(&cipher.to_be_bytes());
    body.push(0);
    body.extend_from_slice(&(exts.len() as u16).to_be_bytes());
    body.extend(exts);
    message(2, &body)
}

/// A TLS 1.2 ServerHello (ECDHE-RSA, AES-128-GCM) that chose `h2` by
/// ALPN.
pub fn server_hello_h2(random: [u8; 32]) -> Vec<u8> {
    let mut exts = Vec::new();
    ext(&mut exts, 16, &[0, 3, 2, b'h', b'2']);
    let mut body = vec![3, 3];
    body.extend_from_slice(&random);
    body.push(0);
    body.extend_from_slice(&0xc02fu16.to_be_bytes());
    body.push(0);
    body.extend_from_slice(&(exts.len() as u16).to_be_bytes());
    body.extend(exts);
    message(2, &body)
}

/// Cuts a byte stream into segments of at most an MSS.
pub fn segments(stream: &[u8]) -> Vec<&'static [u8]> {
    stream
        .chunks(MSS as usize)
        .map(|c| leak(c.to_vec()))
        .collect()
}

/// A TLS 1.3 server's first flight: ServerHello, the compatibility
/// ChangeCipherSpec, then encrypted EncryptedExtensions, Certificate
/// (`cert_len` bytes), CertificateVerify and Finished, one record each.
pub fn tls13_server_flight(cert_len: usize, psk: bool) -> Vec<u8> {
    let mut v = handshake_record(&[server_hello(true, [0x33; 32], X25519, psk)]);
    v.extend(change_cipher_spec());
    v.extend(encrypted(40));
    if !psk {
        v.extend(encrypted(cert_len));
        v.extend(encrypted(264));
    }
    v.extend(encrypted(FINISHED_LEN));
    v
}

/// The packets of a TLS 1.3 handshake (and the ClientHello's ACK).
pub struct Tls13 {
    pub ch: Id,
    /// The server's flight, segment by segment.
    pub flight: Vec<Id>,
    pub client_finished: Id,
}

/// A TLS 1.3 handshake after the TCP one (started at 0): the ClientHello
/// at `t`, the server's flight `think` ms after it arrives, all of it at
/// once (it fits the initial window), the client's Finished the moment
/// the flight's last segment arrives.
pub fn tls13_handshake(w: &mut Wire, t: f64, think: f64, offer: Offer) -> Tls13 {
    tls13_handshake_with(w, t, think, 0.0, offer)
}

/// [`tls13_handshake`] with a client that sends its Finished `client` ms
/// after the server's flight arrived.
pub fn tls13_handshake_with(w: &mut Wire, t: f64, think: f64, client: f64, offer: Offer) -> Tls13 {
    let (ch, flight) = tls13_hello_and_flight(w, t, think, offer);
    let last = *flight.last().unwrap();
    let client_finished = w.send(C, w.arrival(last) + client, leak(encrypted(FINISHED_LEN)));
    Tls13 {
        ch,
        flight,
        client_finished,
    }
}

/// The ClientHello at `t` and the server's whole flight `think` ms after
/// it arrives, segment by segment: the client's answer is the caller's.
pub fn tls13_hello_and_flight(w: &mut Wire, t: f64, think: f64, offer: Offer) -> (Id, Vec<Id>) {
    tls13_hello_and_flight_of(w, t, think, offer, 2000)
}

/// A TLS 1.3 ClientHello at `t` that queued `queued` ms on its way, the
/// server's ACK of it on arrival, and its flight (a 2,000-byte
/// certificate) `think` ms after that, segment by segment.
pub fn tls13_queued_hello_and_flight(w: &mut Wire, t: f64, queued: f64, think: f64) -> Vec<Id> {
    let ch = w.send(C, t, leak(client_hello(Offer::tls13())));
    w.late_after_tap(ch, queued);
    let arrived = w.arrival(ch);
    w.ack(S, arrived);
    segments(&tls13_server_flight(2000, false))
        .into_iter()
        .enumerate()
        .map(|(i, s)| w.send(S, arrived + think + i as f64 * 0.01, s))
        .collect()
}

/// [`tls13_hello_and_flight`] with a certificate of `cert_len` bytes (4,000
/// fill three segments or more: a flight with a middle).
pub fn tls13_hello_and_flight_of(
    w: &mut Wire,
    t: f64,
    think: f64,
    offer: Offer,
    cert_len: usize,
) -> (Id, Vec<Id>) {
    let ch = w.send(C, t, leak(client_hello(offer)));
    let go = w.arrival(ch) + think;
    let flight: Vec<Id> = segments(&tls13_server_flight(cert_len, offer.psk))
        .into_iter()
        .enumerate()
        .map(|(i, s)| w.send(S, go + i as f64 * 0.01, s))
        .collect();
    (ch, flight)
}

/// The packets of a full TLS 1.2 handshake.
pub struct Tls12 {
    pub ch: Id,
    /// The server's first flight (ServerHello, Certificate,
    /// ServerHelloDone), segment by segment.
    pub flight: Vec<Id>,
    /// The client's key exchange, ChangeCipherSpec and Finished.
    pub client_flight: Id,
    /// The client's request sent with its flight (False Start), if any.
    pub early_request: Option<Id>,
    /// The server's ChangeCipherSpec and Finished.
    pub server_finished: Id,
}

/// How long each host takes in a full TLS 1.2 handshake (ms).
#[derive(Debug, Clone, Copy, Default)]
pub struct Turnarounds {
    /// The server, before its ServerHello.
    pub hello: f64,
    /// The client, before its key exchange.
    pub client: f64,
    /// The server, before its Finished.
    pub finished: f64,
}

/// A full TLS 1.2 handshake after the TCP one (started at 0): the
/// ClientHello at `t`; a certificate of `cert_len` bytes (a ServerKeyExchange
/// when `ecdhe`, else the RSA key exchange); each host's turnaround as
/// given; with `false_start`, the client's 300-byte request right behind
/// its Finished.
pub fn tls12_handshake(
    w: &mut Wire,
    t: f64,
    took: Turnarounds,
    ecdhe: bool,
    false_start: bool,
) -> Tls12 {
    tls12_handshake_offering(w, t, took, ecdhe, false_start, Offer::tls12(), false)
}

/// [`tls12_handshake`] with the client's `offer`, and with `staple` a
/// 500-byte CertificateStatus after the certificate.
pub fn tls12_handshake_offering(
    w: &mut Wire,
    t: f64,
    took: Turnarounds,
    ecdhe: bool,
    false_start: bool,
    offer: Offer,
    staple: bool,
) -> Tls12 {
    tls12_full(w, t, took, ecdhe, false_start, offer, staple, false)
}

/// [`tls12_handshake`] (RSA key exchange, no False Start) whose server
/// asks the client for a certificate (a CertificateRequest before its
/// ServerHelloDone) when `ask`.
pub fn tls12_handshake_asking_certificate(
    w: &mut Wire,
    t: f64,
    took: Turnarounds,
    ask: bool,
) -> Tls12 {
    tls12_full(w, t, took, false, false, Offer::tls12(), false, ask)
}

#[allow(clippy::too_many_arguments)]
fn tls12_full(
    w: &mut Wire,
    t: f64,
    took: Turnarounds,
    ecdhe: bool,
    false_start: bool,
    offer: Offer,
    staple: bool,
    ask_certificate: bool,
) -> Tls12 {
    let ch = w.send(C, t, leak(client_hello(offer)));
    let mut messages = vec![
        server_hello(false, [0x33; 32], 0, false),
        message(11, &[0; 2500]),
    ];
    if staple {
        messages.push(message(22, &[0x16; 500]));
    }
    if ecdhe {
        messages.push(message(12, &[0x12; 300]));
    }
    if ask_certificate {
        // Certificate types (RSA), no signature algorithms, no names.
        messages.push(message(13, &[1, 1, 0, 0, 0, 0]));
    }
    messages.push(message(14, &[]));
    let go = w.arrival(ch) + took.hello;
    let flight: Vec<Id> = segments(&handshake_record(&messages))
        .into_iter()
        .enumerate()
        .map(|(i, s)| w.send(S, go + i as f64 * 0.01, s))
        .collect();
    let last = *flight.last().unwrap();
    let mut c = handshake_record(&[message(16, &[0x44; 66])]);
    c.extend(change_cipher_spec());
    c.extend(record(22, &[0x5a; 40]));
    if took.client > 0.0 {
        // The client's kernel acknowledges the flight while it works.
        w.ack(C, w.arrival(last));
    }
    let client_at = w.arrival(last) + took.client;
    let client_flight = w.send(C, client_at, leak(c));
    let early_request =
        false_start.then(|| w.send(C, client_at + 0.01, leak(record(23, &[7; 300]))));
    let mut s = change_cipher_spec();
    s.extend(record(22, &[0x5a; 40]));
    let asked = early_request.unwrap_or(client_flight);
    let server_finished = w.send(S, w.arrival(asked) + took.finished, leak(s));
    Tls12 {
        ch,
        flight,
        client_flight,
        early_request,
        server_finished,
    }
}

/// How long each host takes in an SMTP STARTTLS dialog (ms).
#[derive(Debug, Clone, Copy, Default)]
pub struct Dialog {
    /// The server, from the handshake's ACK to its greeting.
    pub greeting: f64,
    /// The server, from the client's `EHLO` to its answer.
    pub ehlo: f64,
    /// The client, from the server's `220` to STARTTLS to its ClientHello.
    pub client_hello: f64,
}

/// The packets of an SMTP STARTTLS dialog and the TLS 1.3 handshake
/// after it.
pub struct Starttls {
    pub handshake_ack: Id,
    pub greeting: Id,
    pub ehlo: Id,
    pub ehlo_answer: Id,
    pub ready: Id,
    pub tls: Tls13,
}

/// [`starttls_dialog`] on a path, run.
pub fn run_starttls(path: Path, d: Dialog) -> (Outcome, Starttls) {
    let mut w = Wire::new(path);
    let ids = starttls_dialog(&mut w, d);
    (w.run(), ids)
}

/// An SMTP STARTTLS dialog after the TCP handshake (started at 0), each
/// host taking what `d` says, the other turns at once (each side's kernel
/// acknowledging nothing on its own: every message answers the last),
/// then a TLS 1.3 handshake answered at once.
pub fn starttls_dialog(w: &mut Wire, d: Dialog) -> Starttls {
    let [_, _, handshake_ack] = w.handshake(0.0);
    let greeting = w.send(
        S,
        w.arrival(handshake_ack) + d.greeting,
        b"220 mail.example ESMTP\r\n",
    );
    let ehlo = w.send(C, w.arrival(greeting) + 0.1, b"EHLO client.example\r\n");
    let ehlo_answer = w.send(
        S,
        w.arrival(ehlo) + d.ehlo,
        b"250-mail.example\r\n250 STARTTLS\r\n",
    );
    let starttls = w.send(C, w.arrival(ehlo_answer) + 0.1, b"STARTTLS\r\n");
    let ready = w.send(
        S,
        w.arrival(starttls) + 0.1,
        b"220 2.0.0 Ready to start TLS\r\n",
    );
    let at = w.arrival(ready) + d.client_hello;
    let tls = tls13_handshake(w, at, 0.2, Offer::tls13());
    let last = *tls.flight.last().unwrap();
    w.ack(C, w.arrival(last));
    Starttls {
        handshake_ack,
        greeting,
        ehlo,
        ehlo_answer,
        ready,
        tls,
    }
}
