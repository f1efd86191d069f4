//! Link layers: find where the network-layer packet starts and what it is.
//!
//! Ethernet is decoded in [`crate::decode`]; the others are a few bytes in
//! front of the network-layer packet and are unwrapped here (ARCnet, whose
//! header length depends on its protocol ID, in [`crate::arcnet`]).

/// What follows the link-layer header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Network<'a> {
    /// An Ethernet frame (VLAN tags not yet removed).
    Ethernet(&'a [u8]),
    /// A packet of the given EtherType.
    EtherType(u16, &'a [u8]),
    /// An IPv4 or IPv6 packet (version from the first nibble).
    Ip(&'a [u8]),
    /// A PPP frame (with or without HDLC address and control bytes).
    Ppp(&'a [u8]),
    /// An ARCnet frame, BSD or Linux header layout ([`crate::arcnet`]).
    Arcnet { linux: bool },
    /// Something rttdoc does not decode (ARP, another protocol family ...).
    Other,
    /// The frame is shorter than its link-layer header.
    Short,
}

/// EtherType values rttdoc cares about.
pub mod ether_type {
    pub const IPV4: u16 = 0x0800;
    pub const IPV6: u16 = 0x86dd;
    /// Transparent Ethernet bridging: an Ethernet frame (gretap, Geneve).
    pub const TRANSPARENT_ETHERNET: u16 = 0x6558;
    pub const MPLS_UNICAST: u16 = 0x8847;
    pub const MPLS_MULTICAST: u16 = 0x8848;
    /// ERSPAN types I and II (GRE protocol), told apart by the GRE S bit.
    pub const ERSPAN_2: u16 = 0x88be;
    pub const ERSPAN_3: u16 = 0x22eb;
}

/// IP over InfiniBand (LINKTYPE_IPOIB): a 40-byte pseudo-header with the
/// destination and source addresses, then the RFC 4391 4-byte header whose
/// first two bytes are an EtherType.
const IPOIB_TYPE_AT: usize = 40;
const IPOIB_HEADER_LEN: usize = 44;

/// BSD `AF_INET6` differs between systems; all of them mean IPv6.
const AF_INET: u32 = 2;
const AF_INET6: [u32; 4] = [10, 24, 28, 30];

/// Strips the link-layer header of `link_type` (a `LINKTYPE_*` value).
pub fn unwrap(link_type: u32, data: &[u8]) -> Network<'_> {
    // The link type is the low 16 bits; a pcap header's upper bits may
    // describe an FCS (RFC 9100 "LinkType and additional information").
    let link_type = link_type & 0xffff;
    match link_type {
        // Ethernet
        1 => Network::Ethernet(data),
        // Raw IP (101, and the old BSD values 12 and 14), IPv4 (228), IPv6 (229)
        101 | 12 | 14 | 228 | 229 => Network::Ip(data),
        // BSD loopback: 4-byte address family in the writer's byte order (NULL)
        // or in network byte order (LOOP).
        0 | 108 => {
            let Some(family) = data.get(..4) else {
                return Network::Short;
            };
            let family: [u8; 4] = family.try_into().expect("4 bytes");
            let candidates = if link_type == 108 {
                [u32::from_be_bytes(family), u32::from_be_bytes(family)]
            } else {
                [u32::from_le_bytes(family), u32::from_be_bytes(family)]
            };
            if candidates
                .iter()
                .any(|f| *f == AF_INET || AF_INET6.contains(f))
            {
                Network::Ip(&data[4..])
            } else {
                Network::Other
            }
        }
        // ARCnet: BSD (7) and Linux (129) header layouts.
        7 => Network::Arcnet { linux: false },
        129 => Network::Arcnet { linux: true },
        // PPP (9) and PPP in HDLC-like framing (50).
        9 | 50 => Network::Ppp(data),
        // Cisco HDLC: address, control, then an EtherType.
        104 => sll(data, 4, 2),
        242 => sll(data, IPOIB_HEADER_LEN, IPOIB_TYPE_AT),
        // Linux cooked capture v1: 16-byte header, protocol at offset 14.
        113 => sll(data, 16, 14),
        // Linux cooked capture v2: 20-byte header, protocol at offset 0.
        276 => sll(data, 20, 0),
        _ => Network::Other,
    }
}

fn sll(data: &[u8], header_len: usize, proto_at: usize) -> Network<'_> {
    if data.len() < header_len {
        return Network::Short;
    }
    let proto = u16::from_be_bytes([data[proto_at], data[proto_at + 1]]);
    Network::EtherType(proto, &data[header_len..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn null_loopback_accepts_both_byte_orders_and_all_bsd_inet6_values() {
        let ip = [0x45u8, 0, 0, 20];
        for family in [2u32, 10, 24, 28, 30] {
            let mut le = family.to_le_bytes().to_vec();
            le.extend_from_slice(&ip);
            assert_eq!(unwrap(0, &le), Network::Ip(&ip));
            let mut be = family.to_be_bytes().to_vec();
            be.extend_from_slice(&ip);
            assert_eq!(unwrap(0, &be), Network::Ip(&ip));
            assert_eq!(unwrap(108, &be), Network::Ip(&ip));
        }
        let mut other = 7u32.to_le_bytes().to_vec();
        other.extend_from_slice(&ip);
        assert_eq!(unwrap(0, &other), Network::Other);
        assert_eq!(unwrap(108, &[0, 0]), Network::Short);
    }

    #[test]
    fn linux_cooked_headers_give_the_protocol_and_the_rest() {
        let mut sll1 = vec![0u8; 16];
        sll1[14] = 0x86;
        sll1[15] = 0xdd;
        sll1.push(0x60);
        assert_eq!(unwrap(113, &sll1), Network::EtherType(0x86dd, &[0x60]));
        let mut sll2 = vec![0u8; 20];
        sll2[0] = 0x08;
        sll2.push(0x45);
        assert_eq!(unwrap(276, &sll2), Network::EtherType(0x0800, &[0x45]));
        assert_eq!(unwrap(276, &[0u8; 19]), Network::Short);
    }

    #[test]
    fn ipoib_type_is_after_the_forty_byte_pseudo_header() {
        let mut f = vec![0u8; 40];
        f.extend_from_slice(&[0x08, 0x00, 0, 0, 0x45]);
        assert_eq!(unwrap(242, &f), Network::EtherType(0x0800, &[0x45]));
        assert_eq!(unwrap(242, &f[..43]), Network::Short);
    }

    #[test]
    fn fcs_bits_above_the_link_type_are_ignored() {
        let f = [0u8; 14];
        assert_eq!(unwrap(0x3000_0001, &f), Network::Ethernet(&f));
    }

    #[test]
    fn cisco_hdlc_gives_its_ethertype() {
        assert_eq!(
            unwrap(104, &[0x0f, 0x00, 0x86, 0xdd, 0x60]),
            Network::EtherType(0x86dd, &[0x60])
        );
    }
}
