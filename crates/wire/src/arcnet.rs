//! ARCnet link layers (LINKTYPE_ARCNET_BSD 7, LINKTYPE_ARCNET_LINUX 129).
//!
//! The BSD header is source (1), destination (1), protocol ID (1); Linux adds
//! a 2-byte offset field before the protocol ID. The RFC 1051 protocol IDs
//! are followed directly by the packet; the RFC 1201 ones by a split flag (1)
//! and a sequence number (2), and on BSD a split flag of 0xff marks an
//! exception packet with 4 more bytes (Wireshark's reading of both).

mod field {
    pub const BSD_PROTOCOL: usize = 2;
    pub const LINUX_PROTOCOL: usize = 4;
    pub const RFC1201_EXTRA: usize = 3;
    pub const EXCEPTION_EXTRA: usize = 4;
}

pub mod protocol {
    pub const IP_RFC1051: u8 = 0xf0;
    pub const ARP_RFC1051: u8 = 0xf1;
    pub const IP_RFC1201: u8 = 0xd4;
    pub const IPV6: u8 = 0xc4;
    pub const DIAGNOSE: u8 = 0x80;
    pub const BACNET: u8 = 0xcd;
}

/// The protocol ID and the packet after the ARCnet header.
pub fn unwrap(bytes: &[u8], linux: bool) -> Result<(u8, &[u8]), &'static str> {
    let at = if linux {
        field::LINUX_PROTOCOL
    } else {
        field::BSD_PROTOCOL
    };
    let Some(&id) = bytes.get(at) else {
        return Err("ARCnet header cut short");
    };
    let mut at = at + 1;
    let rfc1051_style = matches!(
        id,
        protocol::IP_RFC1051 | protocol::ARP_RFC1051 | protocol::DIAGNOSE | protocol::BACNET
    );
    if !rfc1051_style {
        let split_flag = *bytes.get(at).ok_or("ARCnet split flag cut short")?;
        if !linux && split_flag == 0xff {
            at += field::EXCEPTION_EXTRA;
        }
        at += field::RFC1201_EXTRA;
    }
    bytes
        .get(at..)
        .map(|rest| (id, rest))
        .ok_or("ARCnet header cut short")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linux_rfc1051_and_rfc1201_headers() {
        let old = [0xbe, 0x50, 0xc3, 0x00, 0xf0, 0x45];
        assert_eq!(unwrap(&old, true), Ok((0xf0, &[0x45][..])));
        let new = [0xbe, 0x50, 0xc0, 0x00, 0xd4, 0x00, 0x01, 0x6b, 0x45];
        assert_eq!(unwrap(&new, true), Ok((0xd4, &[0x45][..])));
        assert!(unwrap(&new[..6], true).is_err());
    }

    #[test]
    fn bsd_exception_packet_skips_four_more_bytes() {
        let p = [1, 2, 0xd4, 0xff, 0xff, 0xff, 0xd4, 0, 0, 1, 0x45];
        assert_eq!(unwrap(&p, false), Ok((0xd4, &[0x45][..])));
        let plain = [1, 2, 0xd4, 0, 0, 1, 0x45];
        assert_eq!(unwrap(&plain, false), Ok((0xd4, &[0x45][..])));
    }
}
