//! Geneve (RFC 8926): an 8-byte base header and variable-length options.
//!
//! Byte 0 holds the version (2 bits) and the options length in 4-byte words
//! (6 bits); bytes 2..4 the protocol type of the payload (an EtherType, with
//! 0x6558 for Ethernet); bytes 4..7 the VNI.

mod field {
    pub const VERSION_OPT_LEN: usize = 0;
    pub const PROTOCOL: usize = 2;
    pub const VNI: usize = 4;
    pub const OPTIONS: usize = 8;
}

/// The UDP port Wireshark (and IANA) assign to Geneve.
pub const PORT: u16 = 6081;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geneve<'a> {
    bytes: &'a [u8],
}

impl<'a> Geneve<'a> {
    /// Checks the version (0 is the only one defined) and that the options
    /// the header announces are present.
    pub fn new_checked(bytes: &'a [u8]) -> Result<Geneve<'a>, &'static str> {
        let Some(&first) = bytes.get(field::VERSION_OPT_LEN) else {
            return Err("Geneve header cut short");
        };
        if first >> 6 != 0 {
            return Err("Geneve version unknown");
        }
        let g = Geneve { bytes };
        if bytes.len() < g.header_len() {
            return Err("Geneve header or options cut short");
        }
        Ok(g)
    }

    pub fn options_len(&self) -> usize {
        (self.bytes[field::VERSION_OPT_LEN] & 0x3f) as usize * 4
    }

    pub fn header_len(&self) -> usize {
        field::OPTIONS + self.options_len()
    }

    pub fn protocol(&self) -> u16 {
        u16::from_be_bytes([self.bytes[field::PROTOCOL], self.bytes[field::PROTOCOL + 1]])
    }

    pub fn vni(&self) -> u32 {
        u32::from_be_bytes([
            0,
            self.bytes[field::VNI],
            self.bytes[field::VNI + 1],
            self.bytes[field::VNI + 2],
        ])
    }

    pub fn payload(&self) -> &'a [u8] {
        &self.bytes[self.header_len()..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_are_skipped() {
        let mut h = vec![0x02, 0, 0x65, 0x58, 0, 0, 7, 0];
        h.extend_from_slice(&[0x01, 0x02, 0x03, 0x01, 9, 9, 9, 9]); // one 4+4-byte option
        h.push(0xee);
        let g = Geneve::new_checked(&h).unwrap();
        assert_eq!((g.header_len(), g.protocol(), g.vni()), (16, 0x6558, 7));
        assert_eq!(g.payload(), &[0xee]);
        assert!(Geneve::new_checked(&h[..15]).is_err());
    }

    #[test]
    fn unknown_version_is_an_error() {
        assert!(Geneve::new_checked(&[0x40, 0, 0x08, 0, 0, 0, 0, 0]).is_err());
    }
}
