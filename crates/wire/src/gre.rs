//! GRE (RFC 2784 with the RFC 2890 key and sequence extensions, the RFC 1701
//! routing field, and the enhanced GRE of PPTP, RFC 2637).
//!
//! The header is 4 bytes of flags, version and protocol type (an EtherType),
//! followed by optional 4-byte fields in a fixed order: checksum + offset
//! (present when C or R is set), key (K), sequence number (S), the PPTP
//! acknowledgement number (A, version 1 only), then the RFC 1701 routing
//! entries (R) up to a null entry.

/// Byte offsets of the fixed fields.
mod field {
    pub const FLAGS: usize = 0;
    pub const PROTOCOL: usize = 2;
    pub const OPTIONAL: usize = 4;
}

/// Flag bits of the first 16 bits.
pub mod flag {
    pub const CHECKSUM: u16 = 0x8000;
    pub const ROUTING: u16 = 0x4000;
    pub const KEY: u16 = 0x2000;
    pub const SEQUENCE: u16 = 0x1000;
    /// PPTP (version 1): an acknowledgement number follows the sequence number.
    pub const ACK: u16 = 0x0080;
    pub const VERSION: u16 = 0x0007;
}

/// At most this many RFC 1701 routing entries are walked, so a crafted
/// chain cannot make one packet cost more than a few hundred bytes of work.
const MAX_ROUTING_ENTRIES: usize = 16;

/// A checked view of a GRE header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gre<'a> {
    bytes: &'a [u8],
    header_len: usize,
}

impl<'a> Gre<'a> {
    /// Checks that the whole header, with every optional field its flags
    /// announce, is in `bytes`.
    pub fn new_checked(bytes: &'a [u8]) -> Result<Gre<'a>, &'static str> {
        if bytes.len() < field::OPTIONAL {
            return Err("GRE header cut short");
        }
        let flags = u16::from_be_bytes([bytes[field::FLAGS], bytes[field::FLAGS + 1]]);
        let version = flags & flag::VERSION;
        if version > 1 {
            return Err("GRE version unknown");
        }
        let mut len = field::OPTIONAL;
        if flags & (flag::CHECKSUM | flag::ROUTING) != 0 {
            len += 4;
        }
        if flags & flag::KEY != 0 {
            len += 4;
        }
        if flags & flag::SEQUENCE != 0 {
            len += 4;
        }
        if version == 1 && flags & flag::ACK != 0 {
            len += 4;
        }
        if flags & flag::ROUTING != 0 {
            // Source route entries: address family (2), offset (1),
            // length (1), then `length` bytes; a zero length ends the list.
            let mut entries = 0;
            loop {
                let Some(sre) = bytes.get(len..len + 4) else {
                    return Err("GRE routing entry cut short");
                };
                let sre_len = sre[3] as usize;
                len += 4 + sre_len;
                if sre_len == 0 {
                    break;
                }
                entries += 1;
                if entries > MAX_ROUTING_ENTRIES {
                    return Err("GRE routing list too long");
                }
            }
        }
        if bytes.len() < len {
            return Err("GRE header cut short");
        }
        Ok(Gre {
            bytes,
            header_len: len,
        })
    }

    pub fn flags(&self) -> u16 {
        u16::from_be_bytes([self.bytes[field::FLAGS], self.bytes[field::FLAGS + 1]])
    }

    pub fn version(&self) -> u16 {
        self.flags() & flag::VERSION
    }

    pub fn has_sequence(&self) -> bool {
        self.flags() & flag::SEQUENCE != 0
    }

    /// The protocol type: an EtherType (0x880b for PPTP's PPP).
    pub fn protocol(&self) -> u16 {
        u16::from_be_bytes([self.bytes[field::PROTOCOL], self.bytes[field::PROTOCOL + 1]])
    }

    /// The key (RFC 2890), if present.
    pub fn key(&self) -> Option<u32> {
        let flags = self.flags();
        if flags & flag::KEY == 0 {
            return None;
        }
        let at = field::OPTIONAL
            + if flags & (flag::CHECKSUM | flag::ROUTING) != 0 {
                4
            } else {
                0
            };
        Some(be32(self.bytes, at))
    }

    /// The sequence number (RFC 2890), if present.
    pub fn sequence(&self) -> Option<u32> {
        let flags = self.flags();
        if flags & flag::SEQUENCE == 0 {
            return None;
        }
        let mut at = field::OPTIONAL;
        if flags & (flag::CHECKSUM | flag::ROUTING) != 0 {
            at += 4;
        }
        if flags & flag::KEY != 0 {
            at += 4;
        }
        Some(be32(self.bytes, at))
    }

    pub fn header_len(&self) -> usize {
        self.header_len
    }

    pub fn payload(&self) -> &'a [u8] {
        &self.bytes[self.header_len..]
    }
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_gre_is_four_bytes() {
        let g = Gre::new_checked(&[0, 0, 0x08, 0x00, 0x45]).unwrap();
        assert_eq!(
            (g.protocol(), g.header_len(), g.payload()),
            (0x0800, 4, &[0x45][..])
        );
        assert_eq!((g.key(), g.sequence()), (None, None));
    }

    #[test]
    fn checksum_key_and_sequence_fields_are_found_in_order() {
        let mut h = vec![0xb0, 0x00, 0x65, 0x58]; // C, K, S; transparent bridging
        h.extend_from_slice(&[0xaa, 0xbb, 0, 0]); // checksum + reserved
        h.extend_from_slice(&42u32.to_be_bytes()); // key
        h.extend_from_slice(&7u32.to_be_bytes()); // sequence
        h.push(0xee);
        let g = Gre::new_checked(&h).unwrap();
        assert_eq!(g.header_len(), 16);
        assert_eq!((g.key(), g.sequence()), (Some(42), Some(7)));
        assert_eq!(g.protocol(), 0x6558);
        assert!(Gre::new_checked(&h[..15]).is_err());
    }

    #[test]
    fn pptp_enhanced_gre_counts_the_acknowledgement() {
        // Version 1, K + S + A: payload length/call id, sequence, ack.
        let mut h = vec![0x30, 0x81, 0x88, 0x0b];
        h.extend_from_slice(&[0; 12]);
        let g = Gre::new_checked(&h).unwrap();
        assert_eq!((g.version(), g.header_len()), (1, 16));
        assert!(
            Gre::new_checked(&[0, 2, 8, 0]).is_err(),
            "version 2 is unknown"
        );
    }

    #[test]
    fn routing_entries_are_walked_to_the_null_entry() {
        let mut h = vec![0x40, 0x00, 0x08, 0x00, 0, 0, 0, 0];
        h.extend_from_slice(&[0x08, 0x00, 0, 4, 1, 2, 3, 4]); // one SRE of 4 bytes
        h.extend_from_slice(&[0, 0, 0, 0]); // null SRE
        let g = Gre::new_checked(&h).unwrap();
        assert_eq!(g.header_len(), 20);
        assert!(Gre::new_checked(&h[..18]).is_err());
    }
}
