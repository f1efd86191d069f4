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
    /// The link-layer header does not parse (the reason).
    Malformed(&'static str),
}

/// EtherType values rttdoc cares about.
pub mod ether_type {
    pub const IPV4: u16 = 0x0800;
    pub const IPV6: u16 = 0x86dd;
    /// Transparent Ethernet bridging: an Ethernet frame (gretap, Geneve).
    pub const TRANSPARENT_ETHERNET: u16 = 0x6558;
    pub const MPLS_UNICAST: u16 = 0x8847;
    pub const MPLS_MULTICAST: u16 = 0x8848;
    /// Cisco FabricPath (the outer header of a frame between spine and
    /// leaf switches).
    pub const FABRICPATH: u16 = 0x8903;
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

/// Whether rttdoc reads frames of `link_type` (a `LINKTYPE_*` value):
/// every type [`unwrap`] knows. Frames of another are counted apart, so
/// a capture of an unread link layer says so instead of "not IP".
pub fn reads(link_type: u32) -> bool {
    matches!(
        link_type & 0xffff,
        0 | 1
            | 7
            | 9
            | 12
            | 14
            | 50
            | 101
            | 104
            | 108
            | 113
            | 129
            | 149
            | 178
            | 226
            | 228
            | 229
            | 239
            | 242
            | 258
            | 276
            | 281
            | 282
            | 284
            | 285
    )
}

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
        // PPP (9) and PPP in HDLC-like framing (50); routers write Cisco
        // HDLC frames under these too (address 0x0f or 0x8f, control 0,
        // where PPP has 0xff 0x03), and Wireshark reads them as such.
        9 | 50 => match data {
            [0x0f | 0x8f, 0x00, ..] => sll(data, 4, 2),
            _ => Network::Ppp(data),
        },
        // Cisco HDLC: address, control, then an EtherType.
        104 => sll(data, 4, 2),
        242 => sll(data, IPOIB_HEADER_LEN, IPOIB_TYPE_AT),
        // Linux cooked capture v1: 16-byte header, protocol at offset 14.
        113 => sll(data, 16, 14),
        // Linux cooked capture v2: 20-byte header, protocol at offset 0.
        276 => sll(data, 20, 0),
        // Linux netfilter log (`tcpdump -i nflog:N`).
        239 => nflog(data),
        // Apple's PKTAP (`tcpdump -i pktap,en0` on macOS), and DLT_USER2,
        // under which OS X 10.9 wrote it.
        258 => pktap(data, true),
        149 => pktap(data, false),
        // Juniper's Ethernet captures (Junos `monitor traffic ... write-file`).
        178 => juniper_ether(data),
        // Solaris IPNET (`snoop`/tcpdump on an ipnet device).
        226 => ipnet(data),
        // A Linux DSA switch's CPU port (libpcap picks these from
        // /sys/class/net/DEV/dsa/tagging: `tcpdump -i eth0` on an OpenWrt
        // router): Broadcom's 4-byte tag after the source address (281)
        // or before the frame (282), Marvell's DSA (284, 4 bytes) and
        // EDSA (285, 8 bytes) tags after the source address.
        281 => switch_tag(data, 4),
        282 => match data.get(4..) {
            Some(frame) => Network::Ethernet(frame),
            None => Network::Short,
        },
        284 => switch_tag(data, 4),
        285 => switch_tag(data, 8),
        _ => Network::Other,
    }
}

/// Juniper's capture header (LINKTYPE_JUNIPER_ETHER; tcpdump's
/// print-juniper.c, Wireshark's packet-juniper.c): the magic "MGC", a
/// flags byte, with the extensions flag a 2-byte length of TLVs to skip,
/// then the Ethernet frame; with the no-L2 flag a 4-byte cookie and the
/// IP packet instead.
fn juniper_ether(data: &[u8]) -> Network<'_> {
    const EXTENSIONS: u8 = 0x80;
    const NO_L2: u8 = 0x02;
    if data.len() < 4 {
        return Network::Short;
    }
    if &data[..3] != b"MGC" {
        return Network::Malformed("Juniper header without its magic (MGC)");
    }
    let flags = data[3];
    let mut at = 4;
    if flags & EXTENSIONS != 0 {
        let Some(len) = data.get(4..6) else {
            return Network::Short;
        };
        at = 6 + u16::from_be_bytes([len[0], len[1]]) as usize;
    }
    if flags & NO_L2 != 0 {
        at += 4;
    }
    match data.get(at..) {
        None => Network::Short,
        Some(rest) if flags & NO_L2 != 0 => Network::Ip(rest),
        Some(rest) => Network::Ethernet(rest),
    }
}

/// Solaris IPNET (LINKTYPE_IPNET): a 24-byte header whose second byte is
/// the address family (Solaris's: 2 IPv4, 26 IPv6), then the IP packet.
fn ipnet(data: &[u8]) -> Network<'_> {
    match (data.get(1), data.get(24..)) {
        (Some(2 | 26), Some(packet)) => Network::Ip(packet),
        (Some(_), Some(_)) => Network::Other,
        _ => Network::Short,
    }
}

/// PKTAP's header length field: at least this (version 1; version 2 adds
/// fields after it, which the length skips).
const PKTAP_MIN_HEADER: u32 = 108;

/// Apple's PKTAP (LINKTYPE_PKTAP, tcpdump.org/linktypes): a header whose
/// little-endian fields start with its own length, a record type (1: a
/// packet follows) and the packet's own DLT, then the interface, process
/// and service class of the packet; the packet follows the header, with
/// the link layer that DLT names (Ethernet for en0, NULL for lo0, raw IP
/// for utun). Under DLT_USER2 (149) a frame is taken for PKTAP only when
/// its header says so, since that value is anyone's to use.
fn pktap(data: &[u8], registered: bool) -> Network<'_> {
    let field = |at: usize| {
        data.get(at..at + 4)
            .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
    };
    let (Some(len), Some(record), Some(dlt)) = (field(0), field(4), field(8)) else {
        return if registered {
            Network::Short
        } else {
            Network::Other
        };
    };
    let packet = data.get(len as usize..);
    match (len >= PKTAP_MIN_HEADER, packet, record, dlt) {
        // No PKTAP inside PKTAP.
        (true, Some(packet), 1, dlt) if dlt != 258 && dlt != 149 => unwrap(dlt, packet),
        (true, Some(_), _, _) if registered => Network::Other,
        (true, None, _, _) if registered => Network::Short,
        _ if registered => Network::Malformed("PKTAP header length below 108"),
        _ => Network::Other,
    }
}

/// The packet attribute of a netfilter log message (NFULA_PAYLOAD).
const NFULA_PAYLOAD: u16 = 9;

/// Linux netfilter log (LINKTYPE_NFLOG, `tcpdump -i nflog:N` behind an
/// `NFLOG`/`log group N` firewall rule): a 4-byte header (address family,
/// version, resource id), then type-length-value attributes, each padded
/// to 4 bytes, whose length (header included) and type are in the byte
/// order of the host that captured: libpcap writes them as the kernel
/// gave them, and a reader of another byte order must swap them (wiretap
/// does). Here the attributes are walked in little-endian order, and in
/// big-endian order if they do not add up that way; the packet, from its
/// IP header, is the payload attribute (cut short with the frame by a
/// snap length). A message without one (a rule that logs no payload) has
/// nothing to decode.
fn nflog(data: &[u8]) -> Network<'_> {
    let Some(attributes) = data.get(4..) else {
        return Network::Short;
    };
    for little_endian in [true, false] {
        match nflog_payload(attributes, little_endian) {
            Some(Some(packet)) => return Network::Ip(packet),
            Some(None) => return Network::Other,
            None => {}
        }
    }
    Network::Malformed("NFLOG attributes do not add up")
}

/// The payload attribute's value (`Some(None)`: the attributes add up and
/// hold none), or `None` when they do not add up in this byte order.
fn nflog_payload(mut attributes: &[u8], little_endian: bool) -> Option<Option<&[u8]>> {
    let read = |b: &[u8]| {
        let pair = [b[0], b[1]];
        if little_endian {
            u16::from_le_bytes(pair)
        } else {
            u16::from_be_bytes(pair)
        }
    };
    while attributes.len() >= 4 {
        let len = read(&attributes[0..2]) as usize;
        // The top two bits of a netlink attribute's type are flags.
        let kind = read(&attributes[2..4]) & 0x3fff;
        if len < 4 {
            return None;
        }
        if kind == NFULA_PAYLOAD {
            return Some(Some(&attributes[4..len.min(attributes.len())]));
        }
        if len > attributes.len() {
            return None;
        }
        attributes = &attributes[len.div_ceil(4).saturating_mul(4).min(attributes.len())..];
    }
    attributes.is_empty().then_some(None)
}

/// An Ethernet frame with a switch's tag of `tag_len` bytes between the
/// source address and the EtherType (tcpdump's `ether_switch_tag_print`;
/// Linux `net/dsa/tag_brcm.c`, `tag_dsa.c`): the EtherType after the tag
/// is the frame's own (a Marvell tag replaces an 802.1Q tag the frame
/// had, so none follows it).
fn switch_tag(data: &[u8], tag_len: usize) -> Network<'_> {
    const ADDRESSES: usize = 12;
    sll(data, ADDRESSES + tag_len + 2, ADDRESSES + tag_len)
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

    /// `reads` names exactly the link types `unwrap` decodes: every other
    /// type is `Other` whatever the frame holds, and every read one
    /// yields something else for some frame.
    #[test]
    fn reads_names_the_link_types_unwrap_decodes() {
        let mut frames: Vec<Vec<u8>> = Vec::new();
        let mut ip = vec![0x45u8, 0, 0, 20];
        ip.resize(64, 0);
        frames.push(ip.clone());
        for family in [2u32.to_le_bytes(), 2u32.to_be_bytes()] {
            let mut f = family.to_vec();
            f.extend_from_slice(&ip);
            frames.push(f);
        }
        let mut ipnet = vec![1u8, 2];
        ipnet.resize(24, 0);
        ipnet.extend_from_slice(&ip);
        frames.push(ipnet);
        frames.push(pktap(108, 1, 101, &ip));
        frames.push(vec![0u8; 3]);
        for t in 0..=300u32 {
            let decoded = frames.iter().any(|f| unwrap(t, f) != Network::Other);
            assert_eq!(reads(t), decoded, "LINKTYPE {t}");
        }
    }

    /// A DSA switch's tag sits between the addresses and the EtherType
    /// (Broadcom and Marvell DSA: 4 bytes, Marvell EDSA: 8), or in front
    /// of the whole frame (Broadcom prepended); a frame too short for its
    /// tag and EtherType is short, not another protocol.
    #[test]
    fn dsa_switch_tags_are_skipped_to_the_frames_ether_type() {
        let ip = [0x45u8, 0, 0, 20];
        let addresses = [0xaau8; 12];
        for (link_type, tag_len) in [(281u32, 4usize), (284, 4), (285, 8)] {
            let mut frame = addresses.to_vec();
            frame.extend(std::iter::repeat_n(0xee, tag_len));
            frame.extend_from_slice(&[0x08, 0x00]);
            frame.extend_from_slice(&ip);
            assert_eq!(
                unwrap(link_type, &frame),
                Network::EtherType(0x0800, &ip),
                "LINKTYPE {link_type}"
            );
            assert_eq!(
                unwrap(link_type, &frame[..12 + tag_len + 1]),
                Network::Short,
                "LINKTYPE {link_type}"
            );
        }
        let mut prepended = vec![0x20u8, 0, 0, 0x05];
        let mut ethernet = addresses.to_vec();
        ethernet.extend_from_slice(&[0x08, 0x00]);
        ethernet.extend_from_slice(&ip);
        prepended.extend_from_slice(&ethernet);
        assert_eq!(unwrap(282, &prepended), Network::Ethernet(&ethernet));
        assert_eq!(unwrap(282, &prepended[..3]), Network::Short);
    }

    #[test]
    fn juniper_and_ipnet_headers_are_skipped_to_their_packets() {
        let eth = [0u8; 14];
        // No extensions: magic, flags, the frame.
        let mut plain = b"MGC\x00".to_vec();
        plain.extend_from_slice(&eth);
        assert_eq!(unwrap(178, &plain), Network::Ethernet(&eth));
        // Extensions (tcpdump's bgp-aigp.pcap: 16 bytes of TLVs).
        let mut ext = b"MGC\x80\x00\x03".to_vec();
        ext.extend_from_slice(&[3, 1, 1]);
        ext.extend_from_slice(&eth);
        assert_eq!(unwrap(178, &ext), Network::Ethernet(&eth));
        // No layer 2: a 4-byte cookie, then IP.
        let ip = [0x45u8, 0, 0, 20];
        let mut no_l2 = b"MGC\x02\x00\x00\x00\x02".to_vec();
        no_l2.extend_from_slice(&ip);
        assert_eq!(unwrap(178, &no_l2), Network::Ip(&ip));
        assert!(matches!(unwrap(178, b"XYZ\x00abcd"), Network::Malformed(_)));
        assert_eq!(unwrap(178, b"MGC\x80\x00\x40"), Network::Short);
        // IPNET: family 2 and 26 are IP, others are not.
        for (family, expected) in [
            (2u8, Network::Ip(&ip[..])),
            (26, Network::Ip(&ip[..])),
            (7, Network::Other),
        ] {
            let mut h = vec![1u8, family];
            h.resize(24, 0);
            h.extend_from_slice(&ip);
            assert_eq!(unwrap(226, &h), expected);
        }
        assert_eq!(unwrap(226, &[1, 2, 0]), Network::Short);
    }

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

    /// A PKTAP header of `len` bytes (version 1 is 108) with a record type
    /// and the packet's DLT, then the packet.
    fn pktap(len: u32, record: u32, dlt: u32, packet: &[u8]) -> Vec<u8> {
        let mut v = vec![0u8; len as usize];
        v[..4].copy_from_slice(&len.to_le_bytes());
        v[4..8].copy_from_slice(&record.to_le_bytes());
        v[8..12].copy_from_slice(&dlt.to_le_bytes());
        v[12..15].copy_from_slice(b"en0");
        v.extend_from_slice(packet);
        v
    }

    #[test]
    fn pktap_gives_the_packet_of_its_dlt_after_a_header_of_its_length() {
        let ip = [0x45u8, 0, 0, 20];
        let mut null = 2u32.to_le_bytes().to_vec();
        null.extend_from_slice(&ip);
        for link in [258, 149] {
            // Ethernet (en0), NULL (lo0), raw IP (utun); version 2's longer header.
            assert_eq!(unwrap(link, &pktap(108, 1, 1, &ip)), Network::Ethernet(&ip));
            assert_eq!(unwrap(link, &pktap(108, 1, 0, &null)), Network::Ip(&ip));
            assert_eq!(unwrap(link, &pktap(108, 1, 12, &ip)), Network::Ip(&ip));
            assert_eq!(unwrap(link, &pktap(156, 1, 1, &ip)), Network::Ethernet(&ip));
            // No packet follows; PKTAP inside PKTAP.
            assert_eq!(unwrap(link, &pktap(108, 0, 1, &ip)), Network::Other);
            assert_eq!(unwrap(link, &pktap(108, 1, 258, &ip)), Network::Other);
        }
        // Damage is damage under the registered type; under DLT_USER2 a
        // header that does not parse is someone else's format.
        let short = pktap(100, 1, 1, &ip);
        assert!(matches!(unwrap(258, &short), Network::Malformed(_)));
        assert_eq!(unwrap(149, &short), Network::Other);
        assert_eq!(unwrap(258, &pktap(108, 1, 1, &ip)[..50]), Network::Short);
        assert_eq!(unwrap(149, &pktap(108, 1, 1, &ip)[..50]), Network::Other);
        assert_eq!(unwrap(258, &[1, 0]), Network::Short);
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

    /// The first message of a real `tcpdump -i nflog:5` capture (x86,
    /// little-endian attributes): packet header, prefix (5 bytes, padded),
    /// output interface, uid and gid, then the payload: a SYN's 60 bytes.
    const NFLOG_SYN: &str = "02000005\
        08000100 08000300\
        05000a00 00000000\
        08000500 00000001\
        08000b00 00000000\
        08000e00 00000000\
        40000900";

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    /// The same attributes with their length and type in the other byte
    /// order (a big-endian host's capture).
    fn swapped_attributes(frame: &[u8]) -> Vec<u8> {
        let mut out = frame[..4].to_vec();
        let mut at = 4;
        while at + 4 <= frame.len() {
            let len = u16::from_le_bytes([frame[at], frame[at + 1]]) as usize;
            out.extend_from_slice(&[frame[at + 1], frame[at], frame[at + 3], frame[at + 2]]);
            let end = (at + len.div_ceil(4) * 4).min(frame.len());
            out.extend_from_slice(&frame[at + 4..end]);
            at = end;
        }
        out
    }

    #[test]
    fn nflog_gives_the_payload_attribute_in_either_byte_order() {
        let ip: Vec<u8> = [0x45u8, 0, 0, 60]
            .iter()
            .copied()
            .chain([7u8; 56])
            .collect();
        let mut frame = hex(NFLOG_SYN);
        frame.extend_from_slice(&ip);
        assert_eq!(unwrap(239, &frame), Network::Ip(&ip));
        let big = swapped_attributes(&frame);
        assert_ne!(big, frame);
        assert_eq!(unwrap(239, &big), Network::Ip(&ip));
        // Cut by a snap length inside the packet: what there is of it.
        assert_eq!(
            unwrap(239, &frame[..frame.len() - 20]),
            Network::Ip(&ip[..40])
        );
        // No payload attribute (a rule that logs none): nothing to decode.
        let no_payload = hex(&NFLOG_SYN[..NFLOG_SYN.len() - "40000900".len()]);
        assert_eq!(unwrap(239, &no_payload), Network::Other);
        // Attributes that add up in neither order, and a bare header.
        let mut broken = hex("02000005 0300 0100 ffff");
        broken.extend_from_slice(&[1, 2, 3]);
        assert!(matches!(unwrap(239, &broken), Network::Malformed(_)));
        assert_eq!(unwrap(239, &[2, 0, 0]), Network::Short);
        assert_eq!(unwrap(239, &[2, 0, 0, 5]), Network::Other);
    }

    #[test]
    fn cisco_hdlc_gives_its_ethertype() {
        assert_eq!(
            unwrap(104, &[0x0f, 0x00, 0x86, 0xdd, 0x60]),
            Network::EtherType(0x86dd, &[0x60])
        );
    }
}
