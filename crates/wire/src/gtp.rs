//! GTP-U version 1 (3GPP TS 29.281), the user plane of mobile networks, on
//! UDP port 2152 (decoded there by Wireshark by default).
//!
//! Mandatory header: flags (1: version 3 bits, PT, reserved, E, S, PN),
//! message type (1), length (2, bytes after the mandatory 8), TEID (4). If
//! any of E, S, PN is set, 4 more bytes follow (sequence number, N-PDU
//! number, next extension header type), then extension headers, each with
//! its length in 4-byte units in its first byte and the next type in its
//! last. Only G-PDU messages (type 255) carry a user IP packet.

mod field {
    pub const FLAGS: usize = 0;
    pub const MESSAGE_TYPE: usize = 1;
    pub const LENGTH: usize = 2;
    pub const MANDATORY_LEN: usize = 8;
    pub const OPTIONAL_LEN: usize = 4;
    pub const NEXT_EXTENSION: usize = 11;
}

pub const PORT: u16 = 2152;
pub const G_PDU: u8 = 255;
const FLAG_E: u8 = 0x04;
const FLAG_S_OR_PN: u8 = 0x03;
/// Extension headers walked at most.
const MAX_EXTENSIONS: usize = 16;

/// The user packet of a G-PDU, `None` for signalling messages.
pub fn user_packet(bytes: &[u8]) -> Result<Option<&[u8]>, &'static str> {
    if bytes.len() < field::MANDATORY_LEN {
        return Err("GTP-U header cut short");
    }
    let flags = bytes[field::FLAGS];
    if flags >> 5 != 1 || flags & 0x10 == 0 {
        return Err("not GTP version 1 (GTP-U)");
    }
    if bytes[field::MESSAGE_TYPE] != G_PDU {
        return Ok(None);
    }
    let declared = u16::from_be_bytes([bytes[field::LENGTH], bytes[field::LENGTH + 1]]) as usize;
    let end = (field::MANDATORY_LEN + declared).min(bytes.len());
    let mut at = field::MANDATORY_LEN;
    if flags & (FLAG_E | FLAG_S_OR_PN) != 0 {
        if bytes.len() < field::MANDATORY_LEN + field::OPTIONAL_LEN {
            return Err("GTP-U optional fields cut short");
        }
        at += field::OPTIONAL_LEN;
        if flags & FLAG_E != 0 {
            let mut next = bytes[field::NEXT_EXTENSION];
            let mut walked = 0;
            while next != 0 {
                walked += 1;
                let len = *bytes.get(at).ok_or("GTP-U extension header cut short")? as usize * 4;
                if len == 0 || walked > MAX_EXTENSIONS {
                    return Err("GTP-U extension header invalid");
                }
                next = *bytes
                    .get(at + len - 1)
                    .ok_or("GTP-U extension header cut short")?;
                at += len;
            }
        }
    }
    if at > end {
        return Err("GTP-U header longer than its message");
    }
    Ok(Some(&bytes[at..end]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_g_pdu_carries_the_packet() {
        let p = [0x30, 0xff, 0, 2, 0, 0, 0, 1, 0x45, 0x00, 0xaa];
        assert_eq!(user_packet(&p), Ok(Some(&[0x45, 0x00][..])));
        let echo = [0x32, 0x01, 0, 4, 0, 0, 0, 0, 0, 1, 0, 0];
        assert_eq!(user_packet(&echo), Ok(None));
    }

    #[test]
    fn extension_headers_are_skipped() {
        // E set; next extension 0x85 (PDU session container), one 4-byte
        // extension whose last byte says no more follow.
        let p = [
            0x34, 0xff, 0, 9, 0, 0, 0, 1, 0, 0, 0, 0x85, 1, 0x10, 0x01, 0x00, 0x60,
        ];
        assert_eq!(user_packet(&p), Ok(Some(&[0x60][..])));
        assert!(user_packet(&p[..13]).is_err());
        assert!(
            user_packet(&[0x10, 0xff, 0, 0, 0, 0, 0, 0]).is_err(),
            "GTP version 0"
        );
    }
}
