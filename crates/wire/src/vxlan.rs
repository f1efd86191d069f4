//! VXLAN (RFC 7348) and VXLAN-GPE (draft-ietf-nvo3-vxlan-gpe).
//!
//! Both have an 8-byte header: flags (1), reserved (2, the GPE version/next
//! protocol live in it), VNI (3), reserved (1). Plain VXLAN always carries an
//! Ethernet frame; Wireshark does not check the I flag, so neither do we.
//! VXLAN-GPE names its payload in the next-protocol byte.

mod field {
    pub const FLAGS: usize = 0;
    pub const GPE_NEXT_PROTOCOL: usize = 3;
    pub const VNI: usize = 4;
    pub const HEADER_LEN: usize = 8;
}

/// The UDP ports Wireshark decodes as VXLAN and VXLAN-GPE by default. Linux's
/// old default port 8472 is *not* among them (tshark needs
/// `-d udp.port==8472,vxlan`), so rttdoc does not open it either: stream
/// numbers must agree with tshark's.
pub const PORT: u16 = 4789;
pub const GPE_PORT: u16 = 4790;

/// GPE next-protocol values.
pub mod next_protocol {
    pub const IPV4: u8 = 1;
    pub const IPV6: u8 = 2;
    pub const ETHERNET: u8 = 3;
    pub const MPLS: u8 = 5;
}

/// A checked view of a VXLAN header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Vxlan<'a> {
    bytes: &'a [u8],
}

impl<'a> Vxlan<'a> {
    pub fn new_checked(bytes: &'a [u8]) -> Result<Vxlan<'a>, &'static str> {
        if bytes.len() < field::HEADER_LEN {
            return Err("VXLAN header cut short");
        }
        Ok(Vxlan { bytes })
    }

    pub fn flags(&self) -> u8 {
        self.bytes[field::FLAGS]
    }

    pub fn vni(&self) -> u32 {
        u32::from_be_bytes([
            0,
            self.bytes[field::VNI],
            self.bytes[field::VNI + 1],
            self.bytes[field::VNI + 2],
        ])
    }

    pub fn gpe_next_protocol(&self) -> u8 {
        self.bytes[field::GPE_NEXT_PROTOCOL]
    }

    pub fn payload(&self) -> &'a [u8] {
        &self.bytes[field::HEADER_LEN..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vni_and_payload_are_read() {
        let h = [0x08, 0, 0, 3, 0x00, 0x00, 0x2a, 0, 0xde];
        let v = Vxlan::new_checked(&h).unwrap();
        assert_eq!((v.flags(), v.vni(), v.payload()), (0x08, 42, &[0xde][..]));
        assert_eq!(v.gpe_next_protocol(), next_protocol::ETHERNET);
        assert!(Vxlan::new_checked(&h[..7]).is_err());
    }
}
