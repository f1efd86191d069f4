//! L2TP version 2 (RFC 2661) on UDP port 1701: PPP sessions tunnelled
//! between an access concentrator and a network server (ISPs' PPPoE
//! back-hauls, L2TP VPNs, IPv6 delivered over an L2TP session).
//!
//! Header: flags and version (2: T, L, S, O, P bits; version 2 in the low
//! four bits), then Length (2) if L, Tunnel ID (2), Session ID (2), Ns and
//! Nr (2 each) if S, Offset Size (2) and that many bytes of padding if O;
//! then, in a data message (T clear), a PPP frame. Control messages (T
//! set) carry no user data. Version 3 (RFC 3931) shares the port but its
//! cookie's length is a per-session setting the packet does not carry, so
//! its payload cannot be found from the packet alone: it is left unread.

mod flag {
    pub const CONTROL: u8 = 0x80;
    pub const LENGTH: u8 = 0x40;
    pub const SEQUENCE: u8 = 0x08;
    pub const OFFSET: u8 = 0x02;
}

/// The UDP port Wireshark decodes as L2TP.
pub const PORT: u16 = 1701;
const VERSION_2: u8 = 2;

/// The PPP frame of an L2TPv2 data message; `None` for control messages
/// and other versions.
pub fn ppp_payload(bytes: &[u8]) -> Result<Option<&[u8]>, &'static str> {
    let (Some(&flags), Some(&version)) = (bytes.first(), bytes.get(1)) else {
        return Err("L2TP header cut short");
    };
    if version & 0x0f != VERSION_2 || flags & flag::CONTROL != 0 {
        return Ok(None);
    }
    let mut at = 2;
    let mut length = None;
    if flags & flag::LENGTH != 0 {
        length = Some(be16(bytes, at)? as usize);
        at += 2;
    }
    at += 4; // tunnel and session IDs
    if flags & flag::SEQUENCE != 0 {
        at += 4;
    }
    if flags & flag::OFFSET != 0 {
        at += 2 + be16(bytes, at)? as usize;
    }
    let end = length.map_or(bytes.len(), |l| l.min(bytes.len()));
    match bytes.get(at..end) {
        Some(ppp) => Ok(Some(ppp)),
        None => Err("L2TP header cut short"),
    }
}

fn be16(bytes: &[u8], at: usize) -> Result<u16, &'static str> {
    match bytes.get(at..at + 2) {
        Some(b) => Ok(u16::from_be_bytes([b[0], b[1]])),
        None => Err("L2TP header cut short"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PPP_IPV6: [u8; 5] = [0xff, 0x03, 0x00, 0x57, 0x60];

    #[test]
    fn a_data_message_gives_its_ppp_frame_after_the_optional_fields() {
        // No optional field: flags 0, version 2, tunnel, session.
        let mut bare = vec![0x00, 0x02, 0, 1, 0, 2];
        bare.extend(PPP_IPV6);
        assert_eq!(ppp_payload(&bare), Ok(Some(&PPP_IPV6[..])));
        // Length (cuts the padding after it), sequence numbers, and an
        // offset of 3 bytes of padding.
        let mut all = vec![0x4a, 0x02, 0, 0, 0, 1, 0, 2, 0, 5, 0, 6, 0, 3, 9, 9, 9];
        all.extend(PPP_IPV6);
        let len = all.len() as u16;
        all[2..4].copy_from_slice(&len.to_be_bytes());
        all.extend([0xee; 4]);
        assert_eq!(ppp_payload(&all), Ok(Some(&PPP_IPV6[..])));
    }

    #[test]
    fn control_messages_and_version_3_carry_nothing_readable() {
        let control = [0xc8, 0x02, 0, 12, 0, 1, 0, 0, 0, 0, 0, 0];
        assert_eq!(ppp_payload(&control), Ok(None));
        let v3 = [0x00, 0x03, 0, 0, 0, 0, 0, 7, 0xff, 0x03];
        assert_eq!(ppp_payload(&v3), Ok(None));
    }

    #[test]
    fn a_header_cut_short_is_damage() {
        assert!(ppp_payload(&[0x00]).is_err());
        assert!(ppp_payload(&[0x48, 0x02, 0]).is_err());
        // An offset size that points past the packet.
        assert!(ppp_payload(&[0x02, 0x02, 0, 1, 0, 2, 0x40, 0]).is_err());
    }
}
