//! The client's ClientHello, read out of its Initial packets: QUIC
//! protects Initials with keys anyone can derive (RFC 9001 5.2: HKDF from
//! a salt the version publishes and the Destination Connection ID of the
//! client's first Initial), to keep middleboxes from reading them by
//! accident, not to hide them. What rttdoc wants from it is what names
//! the connection: the server name (SNI) and the ALPN protocols offered.
//!
//! The ClientHello may take several Initials (a post-quantum key share
//! makes it over 1200 bytes) and its CRYPTO frames may come in any order
//! (Chromium scatters them); the pieces are put back by their offsets, at
//! most [`MAX_HELLO`] bytes, from the client's first [`MAX_PACKETS`]
//! Initials.

use ring::aead::{self, quic::HeaderProtectionKey};
use ring::hkdf;
use rttdoc_wire::quic::{self, PacketType};
use rttdoc_wire::tls::ClientHello;

use crate::keylog::expand_label;

/// The longest ClientHello put back together.
const MAX_HELLO: usize = 16 * 1024;

/// Client Initials tried before giving up (a ClientHello never whole).
const MAX_PACKETS: u8 = 8;

/// The salt and labels of a version's Initial keys; `None` for a version
/// whose Initials are not read.
fn initial_salt(version: u32) -> Option<(&'static [u8], &'static str)> {
    const V1: [u8; 20] = [
        0x38, 0x76, 0x2c, 0xf7, 0xf5, 0x59, 0x34, 0xb3, 0x4d, 0x17, 0x9a, 0xe6, 0xa4, 0xc8, 0x0c,
        0xad, 0xcc, 0xbb, 0x7f, 0x0a,
    ];
    const V2: [u8; 20] = [
        0x0d, 0xed, 0xe3, 0xde, 0xf7, 0x00, 0xa6, 0xdb, 0x81, 0x93, 0x81, 0xbe, 0x6e, 0x26, 0x9d,
        0xcb, 0xf9, 0xbd, 0x2e, 0xd9,
    ];
    // Drafts 29 to 32.
    const D29: [u8; 20] = [
        0xaf, 0xbf, 0xec, 0x28, 0x99, 0x93, 0xd2, 0x4c, 0x9e, 0x97, 0x86, 0xf1, 0x9c, 0x61, 0x11,
        0xe0, 0x43, 0x90, 0xa8, 0x99,
    ];
    // Drafts 23 to 28.
    const D23: [u8; 20] = [
        0xc3, 0xee, 0xf7, 0x12, 0xc7, 0x2e, 0xbb, 0x5a, 0x11, 0xa7, 0xd2, 0x43, 0x2b, 0xb4, 0x63,
        0x65, 0xbe, 0xf9, 0xf5, 0x02,
    ];
    match version {
        quic::VERSION_1 => Some((&V1, "quic")),
        quic::VERSION_2 => Some((&V2, "quicv2")),
        0xff00_001d..=0xff00_0020 => Some((&D29, "quic")),
        0xff00_0017..=0xff00_001c => Some((&D23, "quic")),
        _ => None,
    }
}

/// The client's Initial keys for one connection ID.
struct Keys {
    dcid: Vec<u8>,
    version: u32,
    key: aead::LessSafeKey,
    iv: [u8; aead::NONCE_LEN],
    hp: HeaderProtectionKey,
}

impl Keys {
    fn derive(version: u32, dcid: &[u8]) -> Option<Keys> {
        let (salt, prefix) = initial_salt(version)?;
        let initial = hkdf::Salt::new(hkdf::HKDF_SHA256, salt).extract(dcid);
        let mut secret = [0u8; 32];
        initial
            .expand(&[&label_info("client in", 32)[..]], hkdf::HKDF_SHA256)
            .ok()?
            .fill(&mut secret)
            .ok()?;
        let key = expand_label(hkdf::HKDF_SHA256, &secret, &format!("{prefix} key"), 16)?;
        let iv = expand_label(hkdf::HKDF_SHA256, &secret, &format!("{prefix} iv"), 12)?;
        let hp = expand_label(hkdf::HKDF_SHA256, &secret, &format!("{prefix} hp"), 16)?;
        Some(Keys {
            dcid: dcid.to_vec(),
            version,
            key: aead::LessSafeKey::new(aead::UnboundKey::new(&aead::AES_128_GCM, &key).ok()?),
            iv: iv.try_into().ok()?,
            hp: HeaderProtectionKey::new(&aead::quic::AES_128, &hp).ok()?,
        })
    }

    /// The payload of one Initial packet (`packet`: its bytes, the packet
    /// number at `pn_offset`), opened; `None` when it does not open.
    fn open(&self, packet: &[u8], pn_offset: usize) -> Option<Vec<u8>> {
        let sample = packet.get(pn_offset + 4..pn_offset + 20)?;
        let mask = self.hp.new_mask(sample).ok()?;
        let first = packet[0] ^ (mask[0] & 0x0f);
        let pn_len = usize::from(first & 0x03) + 1;
        let mut header = packet.get(..pn_offset + pn_len)?.to_vec();
        header[0] = first;
        let mut pn: u64 = 0;
        for i in 0..pn_len {
            header[pn_offset + i] ^= mask[1 + i];
            pn = (pn << 8) | u64::from(header[pn_offset + i]);
        }
        let mut nonce = self.iv;
        for (n, p) in nonce[4..].iter_mut().zip(pn.to_be_bytes()) {
            *n ^= p;
        }
        let mut body = packet.get(pn_offset + pn_len..)?.to_vec();
        let plain = self
            .key
            .open_in_place(
                aead::Nonce::assume_unique_for_key(nonce),
                aead::Aad::from(&header[..]),
                &mut body,
            )
            .ok()?
            .len();
        body.truncate(plain);
        Some(body)
    }
}

/// HKDF-Expand-Label's info for `label` with an empty context.
fn label_info(label: &str, len: u16) -> Vec<u8> {
    let full = format!("tls13 {label}");
    let mut info = len.to_be_bytes().to_vec();
    info.push(full.len() as u8);
    info.extend_from_slice(full.as_bytes());
    info.push(0);
    info
}

/// What the client's ClientHello says of the connection.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HelloNames {
    pub sni: Option<String>,
    pub alpn: Vec<String>,
}

/// One connection's reading of its client's Initials.
#[derive(Default)]
pub(crate) struct InitialReader {
    keys: Option<Keys>,
    /// CRYPTO frames' data by offset.
    pieces: Vec<(u64, Vec<u8>)>,
    held: usize,
    packets: u8,
    done: bool,
}

impl InitialReader {
    /// A client datagram: its Initials read until the ClientHello is
    /// whole; then its names, once.
    pub fn client_datagram(&mut self, payload: &[u8]) -> Option<HelloNames> {
        if self.done {
            return None;
        }
        let mut rest = payload;
        for p in quic::packets(payload, 0) {
            let Ok(p) = p else { break };
            let packet = &rest[..p.len];
            rest = &rest[p.len..];
            if p.ty != PacketType::Initial {
                continue;
            }
            self.packets += 1;
            if self.packets > MAX_PACKETS {
                self.done = true;
                return None;
            }
            let fresh = self
                .keys
                .as_ref()
                .is_none_or(|k| k.version != p.version || k.dcid != p.dcid);
            if fresh {
                // A new attempt (after a Retry or a Version
                // Negotiation) starts its ClientHello again.
                self.keys = Keys::derive(p.version, p.dcid);
                self.pieces.clear();
                self.held = 0;
            }
            let Some(plain) = self.keys.as_ref().and_then(|k| k.open(packet, p.pn_offset)) else {
                continue;
            };
            self.crypto_frames(&plain);
            if let Some(names) = self.hello() {
                self.done = true;
                self.pieces = Vec::new();
                return Some(names);
            }
        }
        None
    }

    /// Keeps the CRYPTO frames of an Initial's payload (RFC 9000 19: in an
    /// Initial only PADDING, PING, ACK, CRYPTO and CONNECTION_CLOSE).
    fn crypto_frames(&mut self, mut b: &[u8]) {
        while !b.is_empty() {
            let mut at = 0;
            let Ok(ty64) = quic::varint(b, &mut at) else {
                return;
            };
            match ty64 {
                0x00 | 0x01 => b = &b[at..],
                0x02 | 0x03 => {
                    // Largest, delay, range count, first range, then the
                    // ranges (gap, length); ECN counts with 0x03.
                    let mut fields = || quic::varint(b, &mut at).ok();
                    let (Some(_), Some(_), Some(count), Some(_)) =
                        (fields(), fields(), fields(), fields())
                    else {
                        return;
                    };
                    let more = count.saturating_mul(2) + if ty64 == 0x03 { 3 } else { 0 };
                    for _ in 0..more.min(512) {
                        if quic::varint(b, &mut at).is_err() {
                            return;
                        }
                    }
                    b = &b[at..];
                }
                0x06 => {
                    let (Ok(offset), Ok(len)) =
                        (quic::varint(b, &mut at), quic::varint(b, &mut at))
                    else {
                        return;
                    };
                    let Some(data) = usize::try_from(len)
                        .ok()
                        .and_then(|n| b.get(at..at.checked_add(n)?))
                    else {
                        return;
                    };
                    if offset < MAX_HELLO as u64 && self.held + data.len() <= MAX_HELLO {
                        self.held += data.len();
                        self.pieces.push((offset, data.to_vec()));
                    }
                    b = &b[at + data.len()..];
                }
                _ => return,
            }
        }
    }

    /// The ClientHello, once its pieces reach its whole length from 0.
    fn hello(&mut self) -> Option<HelloNames> {
        self.pieces.sort_by_key(|(o, _)| *o);
        let mut whole: Vec<u8> = Vec::new();
        for (offset, data) in &self.pieces {
            let offset = *offset as usize;
            if offset > whole.len() {
                break;
            }
            let skip = whole.len() - offset;
            if skip < data.len() {
                whole.extend_from_slice(&data[skip..]);
            }
        }
        if whole.len() < 4 || whole[0] != 1 {
            return None;
        }
        let len =
            4 + (usize::from(whole[1]) << 16 | usize::from(whole[2]) << 8 | usize::from(whole[3]));
        if whole.len() < len {
            return None;
        }
        let hello = ClientHello::parse(&whole[..len])?;
        Some(HelloNames {
            sni: hello.sni,
            alpn: hello.alpn,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 9001 Appendix A: the client's Initial keys for DCID
    /// 0x8394c8f03e515708.
    #[test]
    fn initial_keys_are_rfc_9001_appendix_a() {
        let dcid = [0x83, 0x94, 0xc8, 0xf0, 0x3e, 0x51, 0x57, 0x08];
        let initial = hkdf::Salt::new(hkdf::HKDF_SHA256, initial_salt(quic::VERSION_1).unwrap().0)
            .extract(&dcid);
        let mut secret = [0u8; 32];
        initial
            .expand(&[&label_info("client in", 32)[..]], hkdf::HKDF_SHA256)
            .unwrap()
            .fill(&mut secret)
            .unwrap();
        let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
        assert_eq!(
            hex(&secret),
            "c00cf151ca5be075ed0ebfb5c80323c42d6b7db67881289af4008f1f6c357aea"
        );
        let key = expand_label(hkdf::HKDF_SHA256, &secret, "quic key", 16).unwrap();
        assert_eq!(hex(&key), "1f369613dd76d5467730efcbe3b1a22d");
        let iv = expand_label(hkdf::HKDF_SHA256, &secret, "quic iv", 12).unwrap();
        assert_eq!(hex(&iv), "fa044b2f42a3fd3b46fb255c");
        let hp = expand_label(hkdf::HKDF_SHA256, &secret, "quic hp", 16).unwrap();
        assert_eq!(hex(&hp), "9f50449e04a0e810283a1e9933adedd2");
    }

    #[test]
    fn garbage_opens_nothing_and_never_panics() {
        let mut r = InitialReader::default();
        let mut d = vec![
            0xc0, 0, 0, 0, 1, 8, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0x44, 0xd0,
        ];
        d.resize(1200, 0x55);
        for n in 0..d.len() {
            assert_eq!(r.client_datagram(&d[..n]), None);
        }
    }
}
