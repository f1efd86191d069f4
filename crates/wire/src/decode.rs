use std::net::IpAddr;

use etherparse::{LaxNetSlice, LaxSlicedPacket};

use crate::link::{self, Network};
use crate::tcp::{TcpFlags, TcpOptions};

/// One decoded TCP segment.
#[derive(Debug, Clone, Copy)]
pub struct Segment<'a> {
    pub src: IpAddr,
    pub dst: IpAddr,
    pub src_port: u16,
    pub dst_port: u16,
    pub seq: u32,
    pub ack: u32,
    pub flags: TcpFlags,
    /// The raw (unscaled) window field.
    pub window: u16,
    pub options: TcpOptions,
    /// Payload length as the IP header declares it (what was on the wire).
    pub payload_len: u32,
    /// The payload bytes that were captured (shorter when snaplen cut them).
    pub payload: &'a [u8],
    /// IPv4 identification (None for IPv6): the same datagram seen twice
    /// in a capture carries the same one.
    pub ip_id: Option<u16>,
}

/// Why a frame carries no TCP segment rttdoc can use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Skip {
    /// Not IPv4/IPv6 (ARP, LLDP, an unknown link type ...).
    NotIp,
    /// IP, but not TCP (UDP, ICMP ...).
    NotTcp,
    /// An IP fragment: its TCP header, if any, cannot be used alone.
    Fragment,
}

#[derive(Debug, Clone, Copy)]
pub enum Decoded<'a> {
    Tcp(Segment<'a>),
    Skipped(Skip),
    /// The frame claims to be IP/TCP but its headers are broken or cut.
    Damaged(&'static str),
}

/// Decodes one frame of the given link type.
///
/// Ethernet/VLAN, IPv4 and IPv6-straight-to-TCP are read here directly: the
/// lax slicer's result structs are copied by value several times per packet,
/// which cost 10-19% of a whole analysis pass (perf, bench/run.sh). IPv6
/// extension-header chains, the rare case, still go through `etherparse`.
pub fn decode(link_type: u32, data: &[u8]) -> Decoded<'_> {
    match link::unwrap(link_type, data) {
        Network::Ethernet(bytes) => ethernet(bytes),
        Network::EtherType(t, bytes) => ether_type(t, bytes),
        Network::Ip(bytes) => match bytes.first().map(|b| b >> 4) {
            Some(4) => ipv4(bytes),
            Some(6) => ipv6(bytes),
            _ => Decoded::Skipped(Skip::NotIp),
        },
        Network::Other => Decoded::Skipped(Skip::NotIp),
        Network::Short => Decoded::Damaged("frame shorter than its link-layer header"),
    }
}

fn ethernet(bytes: &[u8]) -> Decoded<'_> {
    if bytes.len() < 14 {
        return Decoded::Damaged("Ethernet header cut short");
    }
    let mut t = u16::from_be_bytes([bytes[12], bytes[13]]);
    let mut rest = &bytes[14..];
    // 802.1Q, 802.1ad (QinQ) and the old 0x9100 tag: 4 bytes each.
    while matches!(t, 0x8100 | 0x88a8 | 0x9100) {
        if rest.len() < 4 {
            return Decoded::Damaged("VLAN tag cut short");
        }
        t = u16::from_be_bytes([rest[2], rest[3]]);
        rest = &rest[4..];
    }
    ether_type(t, rest)
}

fn ether_type(t: u16, bytes: &[u8]) -> Decoded<'_> {
    match t {
        link::ether_type::IPV4 => ipv4(bytes),
        link::ether_type::IPV6 => ipv6(bytes),
        _ => Decoded::Skipped(Skip::NotIp),
    }
}

fn ipv4(p: &[u8]) -> Decoded<'_> {
    if p.len() < 20 || p[0] >> 4 != 4 {
        return Decoded::Damaged("IPv4 header cut short");
    }
    let header_len = ((p[0] & 0x0f) as usize) * 4;
    if header_len < 20 || p.len() < header_len {
        return Decoded::Damaged("IPv4 header length invalid or cut short");
    }
    let total = u16::from_be_bytes([p[2], p[3]]) as usize;
    // A total length below the header is TSO's zero: trust the capture.
    let declared = (total >= header_len).then_some(total);
    if u16::from_be_bytes([p[6], p[7]]) & 0x3fff != 0 {
        return Decoded::Skipped(Skip::Fragment);
    }
    if p[9] != 6 {
        return Decoded::Skipped(Skip::NotTcp);
    }
    let end = declared.map_or(p.len(), |t| t.min(p.len()));
    let src = IpAddr::from([p[12], p[13], p[14], p[15]]);
    let dst = IpAddr::from([p[16], p[17], p[18], p[19]]);
    match tcp(src, dst, p, &p[header_len..end], declared) {
        Decoded::Tcp(seg) => Decoded::Tcp(Segment {
            ip_id: Some(u16::from_be_bytes([p[4], p[5]])),
            ..seg
        }),
        other => other,
    }
}

fn ipv6(p: &[u8]) -> Decoded<'_> {
    if p.len() < 40 || p[0] >> 4 != 6 {
        return Decoded::Damaged("IPv6 header cut short");
    }
    let next = p[6];
    match next {
        6 => {
            let len = u16::from_be_bytes([p[4], p[5]]) as usize;
            // A zero payload length is a jumbogram or TSO: trust the capture.
            let declared = (len > 0).then_some(40 + len);
            let end = declared.map_or(p.len(), |t| t.min(p.len()));
            let src: [u8; 16] = p[8..24].try_into().expect("16 bytes");
            let dst: [u8; 16] = p[24..40].try_into().expect("16 bytes");
            tcp(
                IpAddr::from(src),
                IpAddr::from(dst),
                p,
                &p[40..end],
                declared,
            )
        }
        44 => Decoded::Skipped(Skip::Fragment),
        // Hop-by-hop, routing, destination options, AH, mobility, HIP, shim6.
        0 | 43 | 51 | 60 | 135 | 139 | 140 => match LaxSlicedPacket::from_ip(p) {
            Ok(sliced) => from_sliced(&sliced),
            Err(_) => Decoded::Damaged("IPv6 extension headers broken or cut short"),
        },
        _ => Decoded::Skipped(Skip::NotTcp),
    }
}

/// Reads the TCP header at the start of `bytes`, part of the IP packet
/// `ip` whose declared total length is `declared_total`.
fn tcp<'a>(
    src: IpAddr,
    dst: IpAddr,
    ip: &[u8],
    bytes: &'a [u8],
    declared_total: Option<usize>,
) -> Decoded<'a> {
    // The header is read by hand so that one whose options were cut by the
    // snaplen still yields its fixed fields (Wireshark, too, assigns such a
    // segment to its connection).
    if bytes.len() < 20 {
        return Decoded::Damaged("TCP header cut short");
    }
    let header_len = ((bytes[12] >> 4) as usize) * 4;
    if header_len < 20 {
        return Decoded::Damaged("TCP data offset below 20 bytes");
    }
    let options = &bytes[20..header_len.min(bytes.len())];
    let captured = bytes.get(header_len..).unwrap_or(&[]);
    let payload_len = match declared_total {
        Some(total) => {
            let before_payload = bytes.as_ptr() as usize - ip.as_ptr() as usize + header_len;
            if total < before_payload {
                return Decoded::Damaged("IP length shorter than the TCP header");
            }
            (total - before_payload) as u32
        }
        None => captured.len() as u32,
    };
    let be16 = |at: usize| u16::from_be_bytes([bytes[at], bytes[at + 1]]);
    let be32 =
        |at: usize| u32::from_be_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
    Decoded::Tcp(Segment {
        src,
        dst,
        src_port: be16(0),
        dst_port: be16(2),
        seq: be32(4),
        ack: be32(8),
        flags: TcpFlags(be16(12) & 0x01ff),
        window: be16(14),
        options: TcpOptions::parse(options),
        payload_len,
        payload: &captured[..captured.len().min(payload_len as usize)],
        ip_id: None,
    })
}

/// The general path (IPv6 with extension headers), via etherparse.
fn from_sliced<'a>(sliced: &LaxSlicedPacket<'a>) -> Decoded<'a> {
    let Some(LaxNetSlice::Ipv6(v6)) = &sliced.net else {
        return Decoded::Damaged("IPv6 header broken");
    };
    let h = v6.header();
    let payload = v6.payload();
    if payload.fragmented {
        return Decoded::Skipped(Skip::Fragment);
    }
    if payload.ip_number != etherparse::IpNumber::TCP {
        return Decoded::Skipped(Skip::NotTcp);
    }
    let len = h.payload_length() as usize;
    let declared = (len > 0).then_some(40 + len);
    tcp(
        IpAddr::from(h.source_addr()),
        IpAddr::from(h.destination_addr()),
        h.slice(),
        payload.payload,
        declared,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An IPv4/TCP packet with `payload`, built by hand so the test states
    /// every byte it relies on.
    fn ipv4_tcp(payload: &[u8], tcp_options: &[u8]) -> Vec<u8> {
        let tcp_len = 20 + tcp_options.len();
        let total = 20 + tcp_len + payload.len();
        let mut p = vec![
            0x45,
            0,
            (total >> 8) as u8,
            total as u8,
            0,
            1,
            0x40,
            0,
            64,
            6,
            0,
            0,
            10,
            0,
            0,
            1,
            10,
            0,
            0,
            2,
        ];
        p.extend_from_slice(&[0x9c, 0x40, 0x01, 0xbb]); // 40000 -> 443
        p.extend_from_slice(&1000u32.to_be_bytes());
        p.extend_from_slice(&2000u32.to_be_bytes());
        p.push(((tcp_len / 4) as u8) << 4);
        p.push(0x18); // PSH, ACK
        p.extend_from_slice(&[0xff, 0xff, 0, 0, 0, 0]);
        p.extend_from_slice(tcp_options);
        p.extend_from_slice(payload);
        p
    }

    fn ethernet(ether_type: [u8; 2], rest: &[u8]) -> Vec<u8> {
        let mut f = vec![0u8; 12];
        f.extend_from_slice(&ether_type);
        f.extend_from_slice(rest);
        f
    }

    #[test]
    fn ethernet_ipv4_tcp_fields_are_decoded() {
        let frame = ethernet(
            [0x08, 0x00],
            &ipv4_tcp(b"hello", &[1, 1, 8, 10, 0, 0, 0, 5, 0, 0, 0, 6]),
        );
        let Decoded::Tcp(s) = decode(1, &frame) else {
            panic!("not decoded as TCP");
        };
        assert_eq!(s.src.to_string(), "10.0.0.1");
        assert_eq!((s.src_port, s.dst_port), (40000, 443));
        assert_eq!((s.seq, s.ack), (1000, 2000));
        assert!(s.flags.ack() && s.flags.psh() && !s.flags.syn());
        assert_eq!(s.payload_len, 5);
        assert_eq!(s.payload, b"hello");
        assert_eq!(s.options.timestamps, Some((5, 6)));
        assert_eq!(s.ip_id, Some(1));
    }

    #[test]
    fn ethernet_padding_is_not_payload() {
        let mut frame = ethernet([0x08, 0x00], &ipv4_tcp(b"", &[]));
        frame.extend_from_slice(&[0u8; 6]); // minimum-frame padding
        let Decoded::Tcp(s) = decode(1, &frame) else {
            panic!()
        };
        assert_eq!(s.payload_len, 0);
        assert!(s.payload.is_empty());
    }

    #[test]
    fn qinq_tagged_frames_are_unwrapped() {
        let mut inner = vec![0x00, 0x0a, 0x08, 0x00];
        inner.extend_from_slice(&ipv4_tcp(b"x", &[]));
        let mut outer = vec![0x00, 0x14, 0x81, 0x00];
        outer.extend_from_slice(&inner);
        let frame = ethernet([0x88, 0xa8], &outer);
        assert!(matches!(decode(1, &frame), Decoded::Tcp(s) if s.payload_len == 1));
    }

    #[test]
    fn snaplen_cut_segment_keeps_its_declared_length() {
        let full = ipv4_tcp(&[7u8; 1000], &[]);
        let cut = &full[..60];
        let Decoded::Tcp(s) = decode(101, cut) else {
            panic!()
        };
        assert_eq!(s.payload_len, 1000);
        assert_eq!(s.payload.len(), 20);
    }

    #[test]
    fn fragments_and_udp_are_skipped_not_damaged() {
        let mut frag = ipv4_tcp(b"abc", &[]);
        frag[6] = 0x20; // more fragments
        assert!(matches!(
            decode(101, &frag),
            Decoded::Skipped(Skip::Fragment)
        ));
        let mut udp = ipv4_tcp(b"abc", &[]);
        udp[9] = 17;
        assert!(matches!(decode(101, &udp), Decoded::Skipped(Skip::NotTcp)));
        let arp = ethernet([0x08, 0x06], &[0u8; 28]);
        assert!(matches!(decode(1, &arp), Decoded::Skipped(Skip::NotIp)));
    }

    #[test]
    fn ipv6_with_extension_header_reaches_tcp() {
        let tcp = &ipv4_tcp(b"six", &[])[20..];
        let mut p = vec![0x60, 0, 0, 0];
        let plen = 8 + tcp.len();
        p.extend_from_slice(&[(plen >> 8) as u8, plen as u8, 0, 64]); // next header: hop-by-hop
        p.extend_from_slice(&[0u8; 15]);
        p.push(1);
        p.extend_from_slice(&[0u8; 15]);
        p.push(2);
        p.extend_from_slice(&[6, 0, 1, 4, 0, 0, 0, 0]); // hop-by-hop, next = TCP, PadN
        p.extend_from_slice(tcp);
        let Decoded::Tcp(s) = decode(229, &p) else {
            panic!()
        };
        assert_eq!(s.dst.to_string(), "::2");
        assert_eq!(s.payload, b"six");
    }

    #[test]
    fn broken_ip_headers_are_damaged() {
        assert!(matches!(decode(101, &[0x45, 0, 0]), Decoded::Damaged(_)));
        let mut bad = ipv4_tcp(b"", &[]);
        bad[32] = 0x10; // TCP data offset 4 words: below the minimum
        assert!(matches!(decode(101, &bad), Decoded::Damaged(_)));
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(link in 0u32..300, bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..200)) {
            let _ = decode(link, &bytes);
        }
    }
}
