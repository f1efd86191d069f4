//! `early_data_unsafe` (detect/early_data_unsafe.rs).
//!
//! > Signature: the client's early data, decrypted with the session's
//! > `CLIENT_EARLY_TRAFFIC_SECRET` from a key log (`--keylog`; nothing
//! > else can see inside it), starts an HTTP/1.x request whose method is
//! > not safe (GET, HEAD, OPTIONS, TRACE), or an HTTP/2 HEADERS frame
//! > whose :method is POST (HPACK static index 3) or a literal other than
//! > GET/HEAD. Not reported when the server visibly rejected the early
//! > data (the request was then sent again after the handshake,
//! > replay-safe).
//! > Cost: none in time; it is a correctness risk.

use std::sync::Arc;

use ring::{aead, hkdf};

use super::tls::*;
use super::*;
use crate::model::Phase;
use rttdoc_analyze::keylog::KeyLog;
use FindingKind::EarlyDataUnsafe;

const SECRET: [u8; 32] = [0x5e; 32];

struct Len(usize);

impl hkdf::KeyType for Len {
    fn len(&self) -> usize {
        self.0
    }
}

/// HKDF-Expand-Label (RFC 8446 7.1), SHA-256, empty context.
fn expand_label(secret: &[u8], label: &str, len: usize) -> Vec<u8> {
    let prk = hkdf::Prk::new_less_safe(hkdf::HKDF_SHA256, secret);
    let full = format!("tls13 {label}");
    let info = [
        &(len as u16).to_be_bytes()[..],
        &[full.len() as u8],
        full.as_bytes(),
        &[0u8],
    ];
    let mut out = vec![0u8; len];
    prk.expand(&info, Len(len)).unwrap().fill(&mut out).unwrap();
    out
}

/// The first early-data record as a TLS 1.3 client protects it under
/// TLS_AES_128_GCM_SHA256 (RFC 8446 5.2, 7.3): record number 0, inner
/// content type 23.
fn early_record(secret: &[u8], content: &[u8]) -> Vec<u8> {
    let key = expand_label(secret, "key", 16);
    let iv = expand_label(secret, "iv", 12);
    let key = aead::LessSafeKey::new(aead::UnboundKey::new(&aead::AES_128_GCM, &key).unwrap());
    let mut buf = content.to_vec();
    buf.push(23);
    let len = ((buf.len() + 16) as u16).to_be_bytes();
    key.seal_in_place_append_tag(
        aead::Nonce::assume_unique_for_key(iv.try_into().unwrap()),
        aead::Aad::from([23, 3, 3, len[0], len[1]]),
        &mut buf,
    )
    .unwrap();
    record(23, &buf)
}

fn key_log(random: [u8; 32], secret: &[u8]) -> Arc<KeyLog> {
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    let mut log = KeyLog::default();
    log.add_line(&format!(
        "CLIENT_EARLY_TRAFFIC_SECRET {} {}",
        hex(&random),
        hex(secret)
    ));
    Arc::new(log)
}

/// A resumed TLS 1.3 handshake whose 0-RTT early data is `request`
/// (sealed with [`SECRET`]); the key log holds `logged` for the session,
/// if any; the server accepts the early data when `accepted`.
fn early(request: &[u8], logged: Option<[u8; 32]>, accepted: bool) -> (Outcome, Id) {
    let mut w = Wire::new(Path::at_client(40.0));
    let offer = Offer {
        psk: true,
        early_data: true,
        ..Offer::tls13()
    };
    if let Some(secret) = logged {
        w.options.keylog = Some(key_log(offer.random, &secret));
    }
    w.handshake(0.0);
    let ch = w.send(C, 40.1, leak(client_hello(offer)));
    let data = w.send(C, 40.11, leak(early_record(&SECRET, request)));
    let flight: Vec<Id> = segments(&tls13_server_flight(0, true))
        .into_iter()
        .map(|s| w.send(S, w.arrival(ch) + 0.5, s))
        .collect();
    let back = w.arrival(*flight.last().unwrap());
    if accepted {
        w.send(C, back, leak(encrypted(END_OF_EARLY_DATA_LEN)));
    }
    w.send(C, back + 0.01, leak(encrypted(FINISHED_LEN)));
    (w.run(), data)
}

const POST: &[u8] = b"POST /transfer HTTP/1.1\r\nHost: bank\r\nContent-Length: 0\r\n\r\n";

#[test]
fn a_post_in_accepted_early_data_is_early_data_unsafe() {
    let (o, data) = early(POST, Some(SECRET), true);
    let f = o.the(EarlyDataUnsafe);
    assert_eq!(f.phase, Some(Phase::FirstByte));
    assert_eq!(f.frames, o.frames(&[data]));
    assert_eq!(f.cost_ms, 0.0, "a replay risk, not time");
}

#[test]
fn every_unsafe_method_and_an_http2_post_are_unsafe_early() {
    let mut h2 = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    h2.extend_from_slice(&[0, 0, 0, 4, 0, 0, 0, 0, 0]); // SETTINGS
    h2.extend_from_slice(&[0, 0, 2, 1, 0x04, 0, 0, 0, 1, 0x83, 0x86]); // HEADERS :method POST
    let requests: Vec<Vec<u8>> = ["PUT", "DELETE", "PATCH"]
        .iter()
        .map(|m| format!("{m} /x HTTP/1.1\r\n\r\n").into_bytes())
        .chain([h2])
        .collect();
    for r in requests {
        let (o, _) = early(&r, Some(SECRET), true);
        o.the(EarlyDataUnsafe);
    }
}

#[test]
fn safe_methods_in_early_data_are_not_unsafe() {
    for m in ["GET", "HEAD", "OPTIONS", "TRACE"] {
        let r = format!("{m} / HTTP/1.1\r\n\r\n");
        early(r.as_bytes(), Some(SECRET), true)
            .0
            .has_no(EarlyDataUnsafe);
    }
}

#[test]
fn a_post_in_early_data_the_server_rejected_is_not_unsafe() {
    // Rejected: the client re-sends it after the handshake, replay-safe.
    early(POST, Some(SECRET), false).0.has_no(EarlyDataUnsafe);
}

#[test]
fn without_the_sessions_early_secret_nothing_can_be_said() {
    early(POST, None, true).0.has_no(EarlyDataUnsafe);
    early(POST, Some([0x11; 32]), true)
        .0
        .has_no(EarlyDataUnsafe);
}
