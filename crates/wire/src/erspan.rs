//! ERSPAN (Cisco's Encapsulated Remote SPAN, carried in GRE).
//!
//! Type I has no header of its own: GRE protocol 0x88be without the GRE
//! sequence bit is followed directly by the mirrored Ethernet frame (that is
//! how Wireshark tells it from type II). Type II (0x88be with a sequence
//! number) has an 8-byte header, version 1. Type III (GRE protocol 0x22eb)
//! has a 12-byte header, version 2, and an 8-byte platform-specific
//! subheader when its O bit is set; its frame type says whether an Ethernet
//! frame (0) or an IP packet (2) follows.

mod field {
    /// Version (4 bits) and VLAN (12 bits).
    pub const VERSION: usize = 0;
    pub const TYPE2_LEN: usize = 8;
    pub const TYPE3_LEN: usize = 12;
    /// Type III: P (1 bit), frame type (5), hardware ID (6), D (1),
    /// granularity (2), O (1).
    pub const TYPE3_FLAGS: usize = 10;
    pub const PLATFORM_SUBHEADER_LEN: usize = 8;
}

pub const VERSION_TYPE2: u8 = 1;
pub const VERSION_TYPE3: u8 = 2;

/// What the mirrored bytes are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mirrored<'a> {
    Ethernet(&'a [u8]),
    Ip(&'a [u8]),
    /// A frame type rttdoc does not decode.
    Other,
}

/// Unwraps an ERSPAN type II or III header (`bytes` starts after GRE).
pub fn unwrap(bytes: &[u8]) -> Result<Mirrored<'_>, &'static str> {
    let Some(&first) = bytes.get(field::VERSION) else {
        return Err("ERSPAN header cut short");
    };
    match first >> 4 {
        VERSION_TYPE2 => bytes
            .get(field::TYPE2_LEN..)
            .map(Mirrored::Ethernet)
            .ok_or("ERSPAN type II header cut short"),
        VERSION_TYPE3 => {
            if bytes.len() < field::TYPE3_LEN {
                return Err("ERSPAN type III header cut short");
            }
            let flags =
                u16::from_be_bytes([bytes[field::TYPE3_FLAGS], bytes[field::TYPE3_FLAGS + 1]]);
            let frame_type = (flags >> 10) & 0x1f;
            let has_subheader = flags & 0x0001 != 0;
            let len = field::TYPE3_LEN
                + if has_subheader {
                    field::PLATFORM_SUBHEADER_LEN
                } else {
                    0
                };
            let rest = bytes
                .get(len..)
                .ok_or("ERSPAN platform subheader cut short")?;
            Ok(match frame_type {
                0 => Mirrored::Ethernet(rest),
                2 => Mirrored::Ip(rest),
                _ => Mirrored::Other,
            })
        }
        _ => Err("ERSPAN version unknown"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type2_header_is_eight_bytes() {
        let mut h = vec![0x10, 0x00, 0x00, 0x01, 0, 0, 0, 0];
        h.push(0xaa);
        assert_eq!(unwrap(&h), Ok(Mirrored::Ethernet(&[0xaa])));
        assert!(unwrap(&h[..7]).is_err());
    }

    #[test]
    fn type3_header_is_twelve_bytes_plus_optional_subheader() {
        let mut h = vec![0x20, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0];
        h.push(0xbb);
        assert_eq!(unwrap(&h), Ok(Mirrored::Ethernet(&[0xbb])));
        h[11] = 0x01; // O: platform-specific subheader follows
        h.truncate(12);
        h.extend_from_slice(&[0; 8]);
        h.push(0xcc);
        assert_eq!(unwrap(&h), Ok(Mirrored::Ethernet(&[0xcc])));
        h[10] = 0x08; // frame type 2: IP
        assert_eq!(unwrap(&h), Ok(Mirrored::Ip(&[0xcc])));
        assert!(unwrap(&h[..15]).is_err());
    }

    #[test]
    fn unknown_version_is_an_error() {
        assert!(unwrap(&[0x30; 12]).is_err());
        assert!(unwrap(&[]).is_err());
    }
}
