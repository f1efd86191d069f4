//! PPP (RFC 1661) as carried by PPPoE sessions (RFC 2516) and by PPTP's
//! enhanced GRE (RFC 2637).
//!
//! PPPoE session header: version/type (1, must be 0x11), code (1, 0 for
//! session data), session ID (2), length (2); then the PPP protocol field.
//! In GRE, PPP keeps its HDLC-like address and control bytes (0xff 0x03)
//! unless address/control field compression removed them, and the protocol
//! field may be compressed to one byte (an odd first byte, RFC 1661 6.5).

mod field {
    pub const VERSION_TYPE: usize = 0;
    pub const CODE: usize = 1;
    pub const LENGTH: usize = 4;
    pub const PPPOE_LEN: usize = 6;
}

/// The EtherType of PPPoE session traffic (discovery, 0x8863, carries no IP).
pub const PPPOE_SESSION: u16 = 0x8864;
/// The GRE protocol type of PPP (PPTP).
pub const GRE_PPP: u16 = 0x880b;

pub mod protocol {
    pub const IPV4: u16 = 0x0021;
    pub const IPV6: u16 = 0x0057;
    pub const MPLS_UNICAST: u16 = 0x0281;
    pub const MPLS_MULTICAST: u16 = 0x0283;
}

/// Strips a PPPoE session header; returns the PPP frame, cut to the length
/// the header declares (the rest is Ethernet padding).
pub fn pppoe_session(bytes: &[u8]) -> Result<&[u8], &'static str> {
    if bytes.len() < field::PPPOE_LEN {
        return Err("PPPoE header cut short");
    }
    if bytes[field::VERSION_TYPE] != 0x11 || bytes[field::CODE] != 0 {
        return Err("PPPoE version/type or code is not session data");
    }
    let len = u16::from_be_bytes([bytes[field::LENGTH], bytes[field::LENGTH + 1]]) as usize;
    let rest = &bytes[field::PPPOE_LEN..];
    Ok(&rest[..len.min(rest.len())])
}

/// Reads the PPP protocol field (after optional address/control bytes);
/// returns the protocol and the information field.
pub fn frame(bytes: &[u8]) -> Result<(u16, &[u8]), &'static str> {
    let bytes = match bytes {
        [0xff, 0x03, rest @ ..] => rest,
        _ => bytes,
    };
    match bytes {
        [] => Err("PPP protocol field cut short"),
        [first, rest @ ..] if first & 1 == 1 => Ok((*first as u16, rest)),
        [first, second, rest @ ..] => Ok((u16::from_be_bytes([*first, *second]), rest)),
        _ => Err("PPP protocol field cut short"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pppoe_session_is_cut_to_its_length() {
        let p = [0x11, 0x00, 0x12, 0x34, 0x00, 0x03, 0x00, 0x21, 0x45, 0, 0];
        assert_eq!(pppoe_session(&p), Ok(&[0x00, 0x21, 0x45][..]));
        assert!(
            pppoe_session(&[0x11, 0x09, 0, 0, 0, 0]).is_err(),
            "discovery code"
        );
        assert!(pppoe_session(&p[..5]).is_err());
    }

    #[test]
    fn protocol_field_with_and_without_compression() {
        assert_eq!(
            frame(&[0xff, 0x03, 0x00, 0x21, 0x45]),
            Ok((0x0021, &[0x45][..]))
        );
        assert_eq!(frame(&[0x00, 0x57, 0x60]), Ok((0x0057, &[0x60][..])));
        assert_eq!(frame(&[0x21, 0x45]), Ok((0x0021, &[0x45][..])));
        assert!(frame(&[0xff, 0x03]).is_err());
        assert!(frame(&[0x00]).is_err());
    }
}
