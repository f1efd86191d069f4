//! MPLS (RFC 3032): a stack of 4-byte label entries, the last one with the
//! bottom-of-stack bit, then a payload whose type the header does not name.
//!
//! What follows the stack is guessed the way Wireshark guesses it (RFC 4928
//! first-nibble rule): 4 is IPv4 when its total length matches what is left
//! (up to 4 bytes of trailer), 6 is IPv6, 0 is an Ethernet pseudowire (RFC
//! 4448) with or without a 4-byte control word, told apart by whether an
//! Ethernet type we know sits where a frame without control word has it.

mod field {
    pub const ENTRY_LEN: usize = 4;
    /// Bottom of stack: bit 8 of the 32-bit entry (third byte, low bit).
    pub const BOS_BYTE: usize = 2;
    pub const CONTROL_WORD_LEN: usize = 4;
    pub const ETHERNET_TYPE: usize = 12;
}

/// Label entries walked at most; a stack deeper than this is not real.
pub const MAX_LABELS: usize = 16;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Payload<'a> {
    Ipv4(&'a [u8]),
    Ipv6(&'a [u8]),
    Ethernet(&'a [u8]),
    Other,
}

/// The bytes after the label stack.
pub fn strip_labels(bytes: &[u8]) -> Result<&[u8], &'static str> {
    let mut at = 0;
    for _ in 0..MAX_LABELS {
        let Some(entry) = bytes.get(at..at + field::ENTRY_LEN) else {
            return Err("MPLS label stack cut short");
        };
        at += field::ENTRY_LEN;
        if entry[field::BOS_BYTE] & 0x01 != 0 {
            return Ok(&bytes[at..]);
        }
    }
    Err("MPLS label stack too deep")
}

/// Unwraps the label stack and guesses the payload.
pub fn unwrap(bytes: &[u8]) -> Result<Payload<'_>, &'static str> {
    let rest = strip_labels(bytes)?;
    let Some(&first) = rest.first() else {
        return Ok(Payload::Other);
    };
    Ok(match first >> 4 {
        4 => {
            let looks_like_ip = rest.len() >= 4 && {
                let total = u16::from_be_bytes([rest[2], rest[3]]) as usize;
                total <= rest.len() && total + 4 >= rest.len()
            };
            if looks_like_ip {
                Payload::Ipv4(rest)
            } else {
                pseudowire(rest)
            }
        }
        6 => Payload::Ipv6(rest),
        0 => pseudowire(rest),
        _ => Payload::Other,
    })
}

/// An Ethernet pseudowire: a frame straight after the labels, or after a
/// control word (whose first nibble is 0).
fn pseudowire(rest: &[u8]) -> Payload<'_> {
    let known = |at: usize| {
        rest.get(at..at + 2)
            .map(|t| u16::from_be_bytes([t[0], t[1]]))
            .is_some_and(|t| {
                matches!(
                    t,
                    0x0800 | 0x86dd | 0x0806 | 0x8100 | 0x88a8 | 0x8847 | 0x8864
                )
            })
    };
    if known(field::ETHERNET_TYPE) {
        Payload::Ethernet(rest)
    } else if rest.first().is_some_and(|b| b >> 4 == 0) && rest.len() >= field::CONTROL_WORD_LEN {
        Payload::Ethernet(&rest[field::CONTROL_WORD_LEN..])
    } else {
        Payload::Other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_stack_ends_at_the_bottom_of_stack_bit() {
        let mut p = vec![0x00, 0x01, 0x00, 0x40, 0x00, 0x02, 0x01, 0x40];
        let ip = [
            0x45, 0, 0, 20, 0, 0, 0, 0, 64, 6, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2,
        ];
        p.extend_from_slice(&ip);
        assert_eq!(unwrap(&p), Ok(Payload::Ipv4(&ip)));
        assert_eq!(strip_labels(&p[..6]), Err("MPLS label stack cut short"));
    }

    #[test]
    fn nibble_six_is_ipv6_and_zero_is_a_pseudowire() {
        assert_eq!(
            unwrap(&[0, 0, 1, 64, 0x60, 0]),
            Ok(Payload::Ipv6(&[0x60, 0]))
        );
        let mut eth = vec![0u8; 12];
        eth.extend_from_slice(&[0x08, 0x00, 0x45]);
        let mut with_cw = vec![0, 0, 1, 64, 0, 0, 0, 1];
        with_cw.extend_from_slice(&eth);
        assert_eq!(unwrap(&with_cw), Ok(Payload::Ethernet(&eth)));
        let mut without_cw = vec![0, 0, 1, 64];
        without_cw.extend_from_slice(&eth);
        assert_eq!(unwrap(&without_cw), Ok(Payload::Ethernet(&eth)));
    }

    #[test]
    fn a_stack_without_bottom_is_bounded() {
        assert!(unwrap(&[0u8; 400]).is_err());
    }
}
