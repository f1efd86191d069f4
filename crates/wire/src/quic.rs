//! QUIC packets in UDP datagrams (RFC 8999's invariants, RFC 9000 17, RFC
//! 9369 for version 2), as much as a handshake's timing needs: each
//! packet's form and type, its version and connection IDs, an Initial's
//! token length, and where it ends, so that the packets coalesced into one
//! datagram (RFC 9000 12.2) are each seen.
//!
//! Everything here is in the clear. The packet number and the payload are
//! protected, so a packet is known by its type and its datagram only, and a
//! short-header packet's destination connection ID has no length on the
//! wire: the caller says how long the connection's IDs are.
//!
//! Written by hand, as dns.rs is: QUIC crates read packets to decrypt them,
//! which a capture without keys cannot, and refuse a datagram whose last
//! packet a snap length cut, where its first packets still say what the
//! handshake did.

/// The UDP port HTTP/3 uses (and the one tshark decodes QUIC on without
/// its heuristics).
pub const HTTPS_PORT: u16 = 443;

/// Version 1 (RFC 9000).
pub const VERSION_1: u32 = 0x0000_0001;
/// Version 2 (RFC 9369): the same protocol, its long-header types renumbered.
pub const VERSION_2: u32 = 0x6b33_43cf;

/// The longest connection ID version 1 and 2 allow (RFC 9000 17.2).
pub const MAX_CID_LEN: usize = 20;

/// The smallest datagram a client may carry its Initial in (RFC 9000 14.1).
pub const MIN_INITIAL_DATAGRAM: usize = 1200;

/// The header form bit: long (1) or short (0).
const FORM_LONG: u8 = 0x80;
/// The fixed bit, 1 unless a peer asked for it to be greased (RFC 9287).
const FIXED: u8 = 0x40;

/// What a packet is, by its header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PacketType {
    /// The client's first flight and the server's answer, keys anyone can
    /// derive.
    Initial,
    /// Early data a resuming client sends with its Initial.
    ZeroRtt,
    /// The rest of the TLS handshake.
    Handshake,
    /// A server asking the client to prove its address (RFC 9000 8.1.2):
    /// the client sends its Initial again, with the token, a round trip
    /// later.
    Retry,
    /// A server that does not speak the client's version, listing those it
    /// does (version 0).
    VersionNegotiation,
    /// After the handshake (1-RTT keys).
    Short,
}

impl PacketType {
    /// The name RFC 9000 and Wireshark give it.
    pub fn name(self) -> &'static str {
        match self {
            PacketType::Initial => "Initial",
            PacketType::ZeroRtt => "0-RTT",
            PacketType::Handshake => "Handshake",
            PacketType::Retry => "Retry",
            PacketType::VersionNegotiation => "Version Negotiation",
            PacketType::Short => "1-RTT",
        }
    }
}

/// The long-header types of a version whose packets rttdoc reads: version
/// 1's order (RFC 9000 17.2), which its drafts and Facebook's mvfst
/// versions share; version 2's (RFC 9369 3.2). `None`: a version whose
/// headers past the invariant ones are unknown (Google's Q0xx).
pub fn long_types(version: u32) -> Option<[PacketType; 4]> {
    use PacketType::*;
    match version {
        VERSION_2 | 0x709a_50c4 => Some([Retry, Initial, ZeroRtt, Handshake]),
        VERSION_1 => Some([Initial, ZeroRtt, Handshake, Retry]),
        // IETF drafts (0xff0000xx) and mvfst (0xfaceb00x).
        v if v >> 8 == 0x00ff_0000 || v >> 4 == 0x0fac_eb00 => {
            Some([Initial, ZeroRtt, Handshake, Retry])
        }
        _ => None,
    }
}

/// One packet's header, read from a datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Packet<'a> {
    pub ty: PacketType,
    /// 0 on a short-header packet (it carries none) and on Version
    /// Negotiation.
    pub version: u32,
    pub dcid: &'a [u8],
    /// Empty on a short-header packet.
    pub scid: &'a [u8],
    /// An Initial's token (a Retry's or a NEW_TOKEN's, proving the
    /// client's address), 0 otherwise.
    pub token_len: usize,
    /// Bytes of the datagram this packet takes, header included.
    pub len: usize,
    /// Where its (protected) packet number starts: after the Length
    /// field of an Initial, 0-RTT or Handshake packet, after the
    /// connection ID of a short header; the packet's length for a Retry
    /// or Version Negotiation (they have none).
    pub pn_offset: usize,
}

/// The packets of one datagram, first to last. A packet whose header is
/// cut or breaks the rules ends the iteration with an error; a short
/// header, a Retry and a Version Negotiation packet take the rest of the
/// datagram (nothing is coalesced after them).
#[derive(Debug, Clone)]
pub struct Packets<'a> {
    rest: &'a [u8],
    short_dcid_len: usize,
    /// Bytes of the datagram the capture did not keep (a snap length).
    missing: usize,
    done: bool,
}

/// Reads the packets of `datagram`; `short_dcid_len` is the length of the
/// destination connection ID a short-header packet to this endpoint
/// carries (the ID it chose, which its long headers showed).
pub fn packets(datagram: &[u8], short_dcid_len: usize) -> Packets<'_> {
    Packets {
        rest: datagram,
        short_dcid_len,
        missing: 0,
        done: false,
    }
}

impl<'a> Packets<'a> {
    /// The datagram was `declared` bytes long on the wire, of which the
    /// capture kept what was given (a snap length): a packet that ends in
    /// the bytes not kept is still read, as the last (its `len` what is
    /// left).
    pub fn declared(mut self, declared: usize) -> Self {
        self.missing = declared.saturating_sub(self.rest.len());
        self
    }
}

impl<'a> Iterator for Packets<'a> {
    type Item = Result<Packet<'a>, &'static str>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done || self.rest.is_empty() {
            return None;
        }
        let read = read_packet(self.rest, self.short_dcid_len, self.missing);
        match read {
            Ok(p) => {
                self.rest = &self.rest[p.len..];
                // What follows a coalesced packet may be padding (zeros,
                // which no packet starts with: its fixed bit is 0).
                if self
                    .rest
                    .first()
                    .is_none_or(|b| b & (FORM_LONG | FIXED) == 0)
                {
                    self.done = true;
                }
            }
            Err(_) => self.done = true,
        }
        Some(read)
    }
}

/// Whether a UDP payload can be a QUIC packet at all: a long header with a
/// version whose packets rttdoc reads, or Version Negotiation, or a short
/// header (which only a known connection can claim).
pub fn could_be_quic(payload: &[u8]) -> bool {
    let Some(&first) = payload.first() else {
        return false;
    };
    if first & FORM_LONG == 0 {
        return first & FIXED != 0 && payload.len() > 1;
    }
    if payload.len() < 7 {
        return false;
    }
    let version = be32(payload, 1);
    if version == 0 {
        // Version Negotiation: its other bits are random, so only its
        // shape tells it (IDs, then a list of 4-byte versions).
        let mut at = 5;
        return cid(payload, &mut at).is_ok()
            && cid(payload, &mut at).is_ok()
            && payload.len() > at
            && (payload.len() - at).is_multiple_of(4);
    }
    long_types(version).is_some()
}

fn read_packet(
    bytes: &[u8],
    short_dcid_len: usize,
    missing: usize,
) -> Result<Packet<'_>, &'static str> {
    let first = bytes[0];
    if first & FORM_LONG == 0 {
        if bytes.len() < 1 + short_dcid_len {
            return Err("QUIC short header cut short");
        }
        return Ok(Packet {
            ty: PacketType::Short,
            version: 0,
            dcid: &bytes[1..1 + short_dcid_len],
            scid: &[],
            token_len: 0,
            len: bytes.len(),
            pn_offset: 1 + short_dcid_len,
        });
    }
    if bytes.len() < 7 {
        return Err("QUIC long header cut short");
    }
    let version = be32(bytes, 1);
    let mut at = 5;
    let dcid = cid(bytes, &mut at)?;
    let scid = cid(bytes, &mut at)?;
    if version == 0 {
        return Ok(Packet {
            ty: PacketType::VersionNegotiation,
            version,
            dcid,
            scid,
            token_len: 0,
            len: bytes.len(),
            pn_offset: bytes.len(),
        });
    }
    let types = long_types(version).ok_or("QUIC version not read")?;
    if dcid.len() > MAX_CID_LEN || scid.len() > MAX_CID_LEN {
        return Err("QUIC connection ID longer than 20 bytes");
    }
    let ty = types[usize::from((first >> 4) & 0x03)];
    let mut token_len = 0;
    // What is known of a packet the capture cut inside its header: its
    // type, IDs and token length; the rest of the datagram is its.
    let cut = |token_len: usize| Packet {
        ty,
        version,
        dcid,
        scid,
        token_len,
        len: bytes.len(),
        pn_offset: bytes.len(),
    };
    match ty {
        PacketType::Retry => {
            // A token, then a 16-byte integrity tag: the rest.
            return Ok(Packet {
                ty,
                version,
                dcid,
                scid,
                token_len: bytes.len().saturating_sub(at + 16),
                len: bytes.len(),
                pn_offset: bytes.len(),
            });
        }
        PacketType::Initial => {
            let n = match varint(bytes, &mut at) {
                Ok(n) => n,
                Err(_) if missing > 0 => return Ok(cut(0)),
                Err(e) => return Err(e),
            };
            token_len = usize::try_from(n).map_err(|_| "QUIC token length too large")?;
            let end = at
                .checked_add(token_len)
                .ok_or("QUIC token length too large")?;
            if end > bytes.len() {
                return if end <= bytes.len() + missing {
                    Ok(cut(token_len))
                } else {
                    Err("QUIC Initial token cut short")
                };
            }
            at = end;
        }
        _ => {}
    }
    let length = match varint(bytes, &mut at) {
        Ok(n) => n,
        Err(_) if missing > 0 => return Ok(cut(token_len)),
        Err(e) => return Err(e),
    };
    // The Length covers the packet number and the payload; a packet cut by
    // the capture's snap length still ends where it says, which is past
    // the bytes held: the datagram's last packet then takes the rest.
    let end = usize::try_from(length)
        .ok()
        .and_then(|n| at.checked_add(n))
        .ok_or("QUIC packet length too large")?;
    if end > bytes.len() + missing {
        return Err("QUIC packet longer than its datagram");
    }
    // Cut by the capture: the rest of what was kept.
    let end = end.min(bytes.len());
    Ok(Packet {
        ty,
        version,
        dcid,
        scid,
        token_len,
        len: end,
        pn_offset: at,
    })
}

fn cid<'a>(bytes: &'a [u8], at: &mut usize) -> Result<&'a [u8], &'static str> {
    let len = usize::from(*bytes.get(*at).ok_or("QUIC connection ID cut short")?);
    let start = *at + 1;
    let id = bytes
        .get(start..start + len)
        .ok_or("QUIC connection ID cut short")?;
    *at = start + len;
    Ok(id)
}

/// A variable-length integer (RFC 9000 16) at `*at`, which moves past it.
pub fn varint(bytes: &[u8], at: &mut usize) -> Result<u64, &'static str> {
    let first = *bytes.get(*at).ok_or("QUIC integer cut short")?;
    let len = 1usize << (first >> 6);
    let raw = bytes.get(*at..*at + len).ok_or("QUIC integer cut short")?;
    let mut value = u64::from(first & 0x3f);
    for b in &raw[1..] {
        value = (value << 8) | u64::from(*b);
    }
    *at += len;
    Ok(value)
}

fn be32(bytes: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A long header: first byte, version, IDs, then the type's fields.
    fn long(first: u8, version: u32, dcid: &[u8], scid: &[u8], rest: &[u8]) -> Vec<u8> {
        let mut b = vec![first];
        b.extend_from_slice(&version.to_be_bytes());
        b.push(dcid.len() as u8);
        b.extend_from_slice(dcid);
        b.push(scid.len() as u8);
        b.extend_from_slice(scid);
        b.extend_from_slice(rest);
        b
    }

    fn kinds(d: &[u8], short: usize) -> Vec<Result<(PacketType, usize), &'static str>> {
        packets(d, short)
            .map(|p| p.map(|p| (p.ty, p.len)))
            .collect()
    }

    #[test]
    fn an_initial_padded_to_its_datagram() {
        // Initial (type 0), token length 0, Length 2-byte varint 1180.
        let mut d = long(0xc3, VERSION_1, &[1; 8], &[2; 8], &[0x00, 0x44, 0x9c]);
        d.resize(d.len() + 1180, 0xaa);
        let p = packets(&d, 0).next().unwrap().unwrap();
        assert_eq!(p.ty, PacketType::Initial);
        assert_eq!(p.dcid, &[1; 8]);
        assert_eq!(p.scid, &[2; 8]);
        assert_eq!(p.len, d.len());
        assert_eq!(kinds(&d, 0).len(), 1);
    }

    #[test]
    fn coalesced_initial_handshake_and_short() {
        let mut d = long(0xc0, VERSION_1, &[9; 4], &[7; 5], &[0x00, 0x05]);
        d.extend_from_slice(&[0xee; 5]);
        let first = d.len();
        // Handshake (type 2).
        d.extend(long(0xe0, VERSION_1, &[9; 4], &[7; 5], &[0x03, 1, 2, 3]));
        let second = d.len() - first;
        // A short header to the client, whose ID is 4 bytes.
        d.extend_from_slice(&[0x41, 9, 9, 9, 9, 0xab, 0xcd]);
        assert_eq!(
            kinds(&d, 4),
            vec![
                Ok((PacketType::Initial, first)),
                Ok((PacketType::Handshake, second)),
                Ok((PacketType::Short, 7)),
            ]
        );
    }

    #[test]
    fn padding_after_a_coalesced_packet_is_not_a_packet() {
        let mut d = long(0xe0, VERSION_1, &[1], &[2], &[0x01, 0]);
        d.extend_from_slice(&[0; 40]);
        assert_eq!(kinds(&d, 0), vec![Ok((PacketType::Handshake, 11))]);
    }

    #[test]
    fn version_2_renumbers_the_types() {
        // In v2, type bits 01 are Initial and 00 Retry.
        let d = long(0xd0, VERSION_2, &[1], &[2], &[0x00, 0x01, 0]);
        assert_eq!(
            packets(&d, 0).next().unwrap().unwrap().ty,
            PacketType::Initial
        );
        let mut r = long(0xc0, VERSION_2, &[1], &[2], &[5; 10]);
        r.extend_from_slice(&[0; 16]);
        let p = packets(&r, 0).next().unwrap().unwrap();
        assert_eq!((p.ty, p.token_len), (PacketType::Retry, 10));
    }

    #[test]
    fn a_retry_and_its_token() {
        let mut d = long(0xf0, VERSION_1, &[1; 8], &[3; 8], &[0x55; 30]);
        d.extend_from_slice(&[0; 16]);
        let p = packets(&d, 0).next().unwrap().unwrap();
        assert_eq!((p.ty, p.token_len, p.len), (PacketType::Retry, 30, d.len()));
    }

    #[test]
    fn an_initial_with_a_token() {
        let mut d = long(0xc0, VERSION_1, &[1; 8], &[3; 8], &[0x03, 1, 2, 3, 0x02]);
        d.extend_from_slice(&[0, 0]);
        let p = packets(&d, 0).next().unwrap().unwrap();
        assert_eq!(
            (p.ty, p.token_len, p.len),
            (PacketType::Initial, 3, d.len())
        );
    }

    #[test]
    fn version_negotiation() {
        let d = long(0x80, 0, &[1; 8], &[2; 8], &VERSION_1.to_be_bytes());
        assert!(could_be_quic(&d));
        let p = packets(&d, 0).next().unwrap().unwrap();
        assert_eq!(p.ty, PacketType::VersionNegotiation);
    }

    #[test]
    fn a_packet_a_snap_length_cut_is_read_as_the_last() {
        // Length 0x40ff (255) past the 5 bytes kept, of a 270-byte datagram.
        let d = long(0xc0, VERSION_1, &[1], &[2], &[0x00, 0x40, 0xff, 1, 2]);
        let read: Vec<_> = packets(&d, 0).declared(270).collect();
        assert_eq!(read.len(), 1);
        let p = read[0].unwrap();
        assert_eq!((p.ty, p.len), (PacketType::Initial, d.len()));
        // Longer than even the declared datagram: broken.
        let read: Vec<_> = packets(&d, 0).declared(40).collect();
        assert_eq!(read, vec![Err("QUIC packet longer than its datagram")]);
        // Cut inside its token: an Initial with a token all the same.
        let mut t = long(0xc0, VERSION_1, &[1], &[2], &[0x20]);
        t.extend_from_slice(&[9; 10]);
        let p = packets(&t, 0).declared(1200).next().unwrap().unwrap();
        assert_eq!(
            (p.ty, p.token_len, p.len),
            (PacketType::Initial, 32, t.len())
        );
        assert_eq!(
            packets(&t, 0).next().unwrap(),
            Err("QUIC Initial token cut short")
        );
    }

    #[test]
    fn broken_headers_end_the_datagram_with_an_error() {
        // Length past the datagram (a snap length's cut).
        let d = long(0xc0, VERSION_1, &[1], &[2], &[0x00, 0x40, 0xff, 1, 2]);
        assert_eq!(
            kinds(&d, 0),
            vec![Err("QUIC packet longer than its datagram")]
        );
        // A connection ID past the end.
        let d = [0xc0, 0, 0, 0, 1, 30, 1, 2];
        assert_eq!(kinds(&d, 0), vec![Err("QUIC connection ID cut short")]);
        // A 21-byte connection ID.
        let d = long(0xc0, VERSION_1, &[1; 21], &[2], &[0, 0]);
        assert_eq!(
            kinds(&d, 0),
            vec![Err("QUIC connection ID longer than 20 bytes")]
        );
        // Every prefix of a good datagram reads without a panic.
        let mut good = long(0xc0, VERSION_1, &[9; 4], &[7; 5], &[0x01, 7, 0x05]);
        good.extend_from_slice(&[0xee; 5]);
        good.extend(long(0xe0, VERSION_1, &[9; 4], &[7; 5], &[0x03, 1, 2, 3]));
        for n in 0..good.len() {
            let _ = kinds(&good[..n], 4);
        }
    }

    #[test]
    fn what_can_be_quic() {
        assert!(!could_be_quic(&[]));
        // RTP (version 2: a long header's form bit) is not.
        assert!(!could_be_quic(&[
            0x80, 0x60, 0x12, 0x34, 0, 0, 0, 1, 0, 0, 0, 2
        ]));
        // Nor a version 0 whose rest is no list of versions.
        assert!(!could_be_quic(&[0x80, 0, 0, 0, 0, 0, 0, 3]));
        // Google QUIC's Q050 is a long header of a version not read.
        assert!(!could_be_quic(&long(0xc0, 0x5130_3530, &[1; 8], &[], &[])));
        assert!(could_be_quic(&long(0xc0, 0xff00_001d, &[1; 8], &[], &[])));
        assert!(could_be_quic(&long(0xc0, 0xface_b002, &[1; 8], &[], &[])));
        assert!(could_be_quic(&[0x40, 1, 2, 3]));
    }
}
