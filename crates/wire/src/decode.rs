use std::net::IpAddr;

use crate::link::{self, Network};
use crate::tcp::{TcpFlags, TcpOptions};
use crate::{arcnet, dns, erspan, geneve, gre, gtp, l2tp, mpls, ppp, quic, vxlan};

/// Encapsulation layers opened at most (tunnel in tunnel ...), so that a
/// crafted packet cannot make the decoder recurse without end. Real stacks
/// (VLAN + MPLS + GRE + ERSPAN + VLAN + IP) stay well below.
pub const MAX_DEPTH: u8 = 8;

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
    /// An IP fragment that cannot be reassembled (no total length).
    Fragment,
}

/// What identifies the fragments of one datagram (RFC 791: source,
/// destination, protocol and identification; RFC 8200 for IPv6, where the
/// protocol is the header after the fragment header).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FragmentKey {
    pub src: IpAddr,
    pub dst: IpAddr,
    pub id: u32,
    pub protocol: u8,
}

/// One IPv4 or IPv6 fragment, for [`crate::defrag::Defragmenter`].
#[derive(Debug, Clone, Copy)]
pub struct Fragment<'a> {
    pub key: FragmentKey,
    /// Byte offset of `data` in the reassembled payload.
    pub offset: u32,
    /// More fragments follow (MF / M flag).
    pub more: bool,
    /// The fragment's payload bytes as captured.
    pub data: &'a [u8],
    /// The capture holds fewer bytes than the header declares (snaplen):
    /// the fragment is left out of reassembly, as Wireshark leaves it out.
    pub cut: bool,
    /// Encapsulation layers opened to reach this packet.
    pub depth: u8,
}

/// The TCP header an ICMP or ICMPv6 error quotes from the packet it
/// reports on (destination unreachable, packet too big, time exceeded,
/// parameter problem, source quench, redirect): what Wireshark gives a
/// `tcp.stream` (opening one for a 4-tuple it has not seen) without
/// analysing it. Read when at least the window field was quoted, as
/// Wireshark reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuotedTcp {
    pub src: IpAddr,
    pub dst: IpAddr,
    pub src_port: u16,
    pub dst_port: u16,
    pub seq: u32,
    pub flags: TcpFlags,
    /// The error says the packet was too big for a hop (ICMP
    /// "fragmentation needed", type 3 code 4; ICMPv6 "packet too big",
    /// type 2): the hop's MTU it names (0 when an old router left it
    /// out, RFC 1191).
    pub too_big: Option<u32>,
}

/// A UDP datagram rttdoc reads: to or from port 53, a DNS query or
/// response (its message read by [`dns::Message`]); otherwise one that
/// can be QUIC ([`quic::could_be_quic`]; its packets read by
/// [`quic::packets`]).
#[derive(Debug, Clone, Copy)]
pub struct UdpDatagram<'a> {
    pub src: IpAddr,
    pub dst: IpAddr,
    pub src_port: u16,
    pub dst_port: u16,
    /// The UDP payload as captured.
    pub payload: &'a [u8],
    /// The capture holds less of the payload than the UDP header declares
    /// (a snap length).
    pub cut: bool,
    /// The payload's length as the UDP header declares it (the IP
    /// header's, when the UDP length is 0 or short: GSO, jumbograms).
    pub declared_len: usize,
}

#[derive(Debug, Clone, Copy)]
pub enum Decoded<'a> {
    Tcp(Segment<'a>),
    /// DNS over UDP: not TCP, but a name lookup a connection may have
    /// waited for.
    Dns(UdpDatagram<'a>),
    /// A UDP datagram whose payload can be QUIC: a long header of a
    /// version read, or a short header, which only a QUIC connection the
    /// tracker knows can claim.
    Quic(UdpDatagram<'a>),
    /// An ICMP error quoting a TCP header: not a segment, but Wireshark
    /// numbers its stream.
    Quoted(QuotedTcp),
    /// An IP fragment: hand it to a [`crate::defrag::Defragmenter`], then
    /// decode the datagram it completes with [`decode_datagram`].
    Fragment(Fragment<'a>),
    Skipped(Skip),
    /// The frame claims to be IP/TCP but its headers are broken or cut.
    Damaged(&'static str),
}

/// Decodes one frame of the given link type, opening every encapsulation
/// listed in the crate documentation down to the innermost TCP segment.
///
/// Ethernet/VLAN, IPv4 and IPv6 are read here directly: `etherparse`'s lax
/// slicer's result structs are copied by value several times per packet,
/// which cost 10-19% of a whole analysis pass (perf, bench/run.sh).
pub fn decode(link_type: u32, data: &[u8]) -> Decoded<'_> {
    match link::unwrap(link_type, data) {
        Network::Ethernet(bytes) => ethernet(bytes, 0),
        Network::EtherType(t, bytes) => ether_type(t, bytes, 0),
        Network::Ip(bytes) => ip(bytes, 0),
        Network::Ppp(bytes) => ppp_frame(bytes, 0),
        Network::Arcnet { linux } => match arcnet::unwrap(data, linux) {
            Ok((arcnet::protocol::IP_RFC1051 | arcnet::protocol::IP_RFC1201, rest)) => {
                ipv4(rest, 0)
            }
            Ok((arcnet::protocol::IPV6, rest)) => ipv6(rest, 0),
            Ok(_) => Decoded::Skipped(Skip::NotIp),
            Err(why) => Decoded::Damaged(why),
        },
        Network::Other => Decoded::Skipped(Skip::NotIp),
        Network::Short => Decoded::Damaged("frame shorter than its link-layer header"),
        Network::Malformed(why) => Decoded::Damaged(why),
    }
}

/// Decodes the payload of a datagram rebuilt from its fragments (`payload`
/// is everything after the IP headers, `key.protocol` says what it is).
/// Encapsulations inside count one layer deeper than the fragments did.
pub fn decode_datagram<'a>(key: &FragmentKey, depth: u8, payload: &'a [u8]) -> Decoded<'a> {
    let Some(depth) = deeper(depth) else {
        return too_deep();
    };
    ip_payload(
        key.protocol,
        key.src,
        key.dst,
        payload,
        payload,
        Some(payload.len()),
        depth,
    )
}

fn deeper(depth: u8) -> Option<u8> {
    (depth < MAX_DEPTH).then_some(depth + 1)
}

fn too_deep() -> Decoded<'static> {
    Decoded::Damaged("encapsulations nested too deep")
}

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

/// An IP packet of either version (from the first nibble).
fn ip(bytes: &[u8], depth: u8) -> Decoded<'_> {
    match bytes.first().map(|b| b >> 4) {
        Some(4) => ipv4(bytes, depth),
        Some(6) => ipv6(bytes, depth),
        _ => Decoded::Skipped(Skip::NotIp),
    }
}

/// Ethernet II, or 802.3 with an LLC/SNAP header naming an EtherType.
fn ethernet(bytes: &[u8], depth: u8) -> Decoded<'_> {
    if bytes.len() < 14 {
        return Decoded::Damaged("Ethernet header cut short");
    }
    let t = be16(bytes, 12);
    if t <= 1500 {
        // 802.3 length: IP only behind SNAP (DSAP/SSAP 0xaa, UI, OUI 0).
        return match &bytes[14..] {
            [0xaa, 0xaa, 0x03, 0, 0, 0, hi, lo, rest @ ..] => {
                ether_type(u16::from_be_bytes([*hi, *lo]), rest, depth)
            }
            _ => Decoded::Skipped(Skip::NotIp),
        };
    }
    ether_type(t, &bytes[14..], depth)
}

/// The payload of an EtherType (Ethernet, Linux cooked, GRE, Geneve ...).
fn ether_type(mut t: u16, mut bytes: &[u8], depth: u8) -> Decoded<'_> {
    // 802.1Q, 802.1ad (QinQ) and the old 0x9100 tag: 4 bytes each. A loop,
    // not recursion: each tag consumes 4 bytes, so it ends.
    while matches!(t, 0x8100 | 0x88a8 | 0x9100) {
        if bytes.len() < 4 {
            return Decoded::Damaged("VLAN tag cut short");
        }
        t = be16(bytes, 2);
        bytes = &bytes[4..];
    }
    match t {
        link::ether_type::IPV4 => ipv4(bytes, depth),
        link::ether_type::IPV6 => ipv6(bytes, depth),
        link::ether_type::TRANSPARENT_ETHERNET => match deeper(depth) {
            Some(d) => ethernet(bytes, d),
            None => too_deep(),
        },
        link::ether_type::MPLS_UNICAST | link::ether_type::MPLS_MULTICAST => mpls(bytes, depth),
        // Cisco FabricPath: the outer header's EtherType, then the
        // forwarding tag and TTL (2 bytes), then the frame it carries.
        link::ether_type::FABRICPATH => match (deeper(depth), bytes.get(2..)) {
            (Some(d), Some(inner)) => ethernet(inner, d),
            (None, _) => too_deep(),
            (_, None) => Decoded::Damaged("FabricPath header cut short"),
        },
        ppp::PPPOE_SESSION => match deeper(depth) {
            Some(d) => match ppp::pppoe_session(bytes) {
                Ok(frame) => ppp_frame(frame, d),
                Err(why) => Decoded::Damaged(why),
            },
            None => too_deep(),
        },
        _ => Decoded::Skipped(Skip::NotIp),
    }
}

fn mpls(bytes: &[u8], depth: u8) -> Decoded<'_> {
    let Some(d) = deeper(depth) else {
        return too_deep();
    };
    match mpls::unwrap(bytes) {
        Ok(mpls::Payload::Ipv4(p)) => ipv4(p, d),
        Ok(mpls::Payload::Ipv6(p)) => ipv6(p, d),
        Ok(mpls::Payload::Ethernet(p)) => ethernet(p, d),
        Ok(mpls::Payload::Other) => Decoded::Skipped(Skip::NotIp),
        Err(why) => Decoded::Damaged(why),
    }
}

/// A PPP frame (PPPoE, PPTP's GRE, the PPP link types).
fn ppp_frame(bytes: &[u8], depth: u8) -> Decoded<'_> {
    if bytes.is_empty() {
        // PPTP sends GRE packets that only acknowledge.
        return Decoded::Skipped(Skip::NotIp);
    }
    match ppp::frame(bytes) {
        Ok((ppp::protocol::IPV4, p)) => ipv4(p, depth),
        Ok((ppp::protocol::IPV6, p)) => ipv6(p, depth),
        Ok((ppp::protocol::MPLS_UNICAST | ppp::protocol::MPLS_MULTICAST, p)) => mpls(p, depth),
        Ok(_) => Decoded::Skipped(Skip::NotIp),
        Err(why) => Decoded::Damaged(why),
    }
}

fn ipv4(p: &[u8], depth: u8) -> Decoded<'_> {
    if p.len() < 20 || p[0] >> 4 != 4 {
        return Decoded::Damaged("IPv4 header cut short");
    }
    let header_len = ((p[0] & 0x0f) as usize) * 4;
    if header_len < 20 || p.len() < header_len {
        return Decoded::Damaged("IPv4 header length invalid or cut short");
    }
    let total = be16(p, 2) as usize;
    // A total length below the header is TSO's zero: trust the capture.
    let declared = (total >= header_len).then_some(total);
    let end = declared.map_or(p.len(), |t| t.min(p.len()));
    let src = IpAddr::from([p[12], p[13], p[14], p[15]]);
    let dst = IpAddr::from([p[16], p[17], p[18], p[19]]);
    let flags_offset = be16(p, 6);
    if flags_offset & 0x3fff != 0 {
        let Some(total) = declared else {
            return Decoded::Skipped(Skip::Fragment);
        };
        return Decoded::Fragment(Fragment {
            key: FragmentKey {
                src,
                dst,
                id: be16(p, 4) as u32,
                protocol: p[9],
            },
            offset: (flags_offset & 0x1fff) as u32 * 8,
            more: flags_offset & 0x2000 != 0,
            data: &p[header_len..end],
            cut: end < total,
            depth,
        });
    }
    match ip_payload(p[9], src, dst, p, &p[header_len..end], declared, depth) {
        // The IP ID tells capture copies from retransmissions; only the
        // header right in front of the TCP header names the segment (a
        // tunnel's outer ID belongs to the outer datagram).
        Decoded::Tcp(seg) if p[9] == 6 => Decoded::Tcp(Segment {
            ip_id: Some(be16(p, 4)),
            ..seg
        }),
        other => other,
    }
}

/// IPv6 extension headers walked at most before giving up.
const MAX_IPV6_EXTENSIONS: usize = 16;

fn ipv6(p: &[u8], depth: u8) -> Decoded<'_> {
    if p.len() < 40 || p[0] >> 4 != 6 {
        return Decoded::Damaged("IPv6 header cut short");
    }
    let len = be16(p, 4) as usize;
    // A zero payload length is a jumbogram or TSO: trust the capture.
    let declared = (len > 0).then_some(40 + len);
    let end = declared.map_or(p.len(), |t| t.min(p.len()));
    let src: [u8; 16] = p[8..24].try_into().expect("16 bytes");
    let dst: [u8; 16] = p[24..40].try_into().expect("16 bytes");
    let (src, dst) = (IpAddr::from(src), IpAddr::from(dst));
    let mut next = p[6];
    let mut at = 40;
    for _ in 0..MAX_IPV6_EXTENSIONS {
        if at > end {
            break;
        }
        let ext_len = match next {
            // Hop-by-hop, routing, destination options, mobility, HIP, shim6:
            // length in 8-byte units after the first 8.
            0 | 43 | 60 | 135 | 139 | 140 => p
                .get(at + 1)
                .filter(|_| at + 2 <= end)
                .map(|l| (*l as usize + 1) * 8),
            // Authentication header: length in 4-byte units, minus 2.
            51 => p
                .get(at + 1)
                .filter(|_| at + 2 <= end)
                .map(|l| (*l as usize + 2) * 4),
            44 => {
                let Some(h) = p.get(at..at + 8).filter(|_| at + 8 <= end) else {
                    break;
                };
                let protocol = h[0];
                let offset_more = be16(h, 2);
                let id = u32::from_be_bytes([h[4], h[5], h[6], h[7]]);
                at += 8;
                if offset_more & 0xfff9 == 0 {
                    // An atomic fragment (RFC 6946): offset 0, no more.
                    next = protocol;
                    continue;
                }
                return Decoded::Fragment(Fragment {
                    key: FragmentKey {
                        src,
                        dst,
                        id,
                        protocol,
                    },
                    offset: (offset_more & 0xfff8) as u32,
                    more: offset_more & 1 != 0,
                    data: &p[at..end],
                    cut: declared.is_some_and(|d| end < d),
                    depth,
                });
            }
            _ => return ip_payload(next, src, dst, p, &p[at..end], declared, depth),
        };
        let Some(ext_len) = ext_len else { break };
        next = p[at];
        at += ext_len;
    }
    Decoded::Damaged("IPv6 extension headers broken or cut short")
}

/// What an IP header's protocol field names, after the IP headers.
fn ip_payload<'a>(
    protocol: u8,
    src: IpAddr,
    dst: IpAddr,
    ip: &'a [u8],
    bytes: &'a [u8],
    declared: Option<usize>,
    depth: u8,
) -> Decoded<'a> {
    match protocol {
        6 => tcp(src, dst, ip, bytes, declared),
        17 => udp(src, dst, bytes, depth),
        1 => icmp_error(bytes, false),
        58 => icmp_error(bytes, true),
        // IPv4 in IP (4in4, 4in6), IPv6 in IP (6in4/SIT, 6in6), GRE
        4 | 41 | 47 => {
            let Some(d) = deeper(depth) else {
                return too_deep();
            };
            match protocol {
                4 => ipv4(bytes, d),
                41 => ipv6(bytes, d),
                _ => gre(bytes, d),
            }
        }
        // MPLS in IP (RFC 4023)
        137 => mpls(bytes, depth),
        _ => Decoded::Skipped(Skip::NotTcp),
    }
}

/// UDP: the tunnels Wireshark opens by default, tried on the lower port
/// first and then the higher, as Wireshark tries them (a port it knows for
/// something else comes first there; rttdoc knows only tunnels and DNS);
/// then DNS on port 53, either side; then what can be QUIC, on any port.
fn udp(src: IpAddr, dst: IpAddr, bytes: &[u8], depth: u8) -> Decoded<'_> {
    if bytes.len() < 8 {
        return Decoded::Damaged("UDP header cut short");
    }
    let (src_port, dst_port) = (be16(bytes, 0), be16(bytes, 2));
    let len = be16(bytes, 4) as usize;
    // A zero or short UDP length (GSO, jumbograms): trust the IP length.
    let end = if len >= 8 {
        len.min(bytes.len())
    } else {
        bytes.len()
    };
    let payload = &bytes[8..end];
    let (low, high) = (src_port.min(dst_port), src_port.max(dst_port));
    for port in [low, high] {
        if let Some(decoded) = udp_tunnel(port, payload, depth) {
            return decoded;
        }
    }
    let datagram = UdpDatagram {
        src,
        dst,
        src_port,
        dst_port,
        payload,
        cut: len > bytes.len(),
        declared_len: if len >= 8 { len - 8 } else { payload.len() },
    };
    if src_port == dns::PORT || dst_port == dns::PORT {
        Decoded::Dns(datagram)
    } else if quic::could_be_quic(payload) {
        Decoded::Quic(datagram)
    } else {
        Decoded::Skipped(Skip::NotTcp)
    }
}

fn udp_tunnel(port: u16, payload: &[u8], depth: u8) -> Option<Decoded<'_>> {
    if !matches!(
        port,
        vxlan::PORT | vxlan::GPE_PORT | geneve::PORT | gtp::PORT | l2tp::PORT
    ) {
        return None;
    }
    let Some(d) = deeper(depth) else {
        return Some(too_deep());
    };
    Some(match port {
        vxlan::PORT => match vxlan::Vxlan::new_checked(payload) {
            Ok(v) => ethernet(v.payload(), d),
            Err(why) => Decoded::Damaged(why),
        },
        vxlan::GPE_PORT => match vxlan::Vxlan::new_checked(payload) {
            Ok(v) => match v.gpe_next_protocol() {
                vxlan::next_protocol::IPV4 => ipv4(v.payload(), d),
                vxlan::next_protocol::IPV6 => ipv6(v.payload(), d),
                vxlan::next_protocol::ETHERNET => ethernet(v.payload(), d),
                vxlan::next_protocol::MPLS => mpls(v.payload(), d),
                _ => Decoded::Skipped(Skip::NotIp),
            },
            Err(why) => Decoded::Damaged(why),
        },
        geneve::PORT => match geneve::Geneve::new_checked(payload) {
            Ok(g) => ether_type(g.protocol(), g.payload(), d),
            Err(why) => Decoded::Damaged(why),
        },
        l2tp::PORT => match l2tp::ppp_payload(payload) {
            Ok(Some(frame)) => ppp_frame(frame, d),
            Ok(None) => Decoded::Skipped(Skip::NotTcp),
            Err(why) => Decoded::Damaged(why),
        },
        _ => match gtp::user_packet(payload) {
            Ok(Some(p)) => ip(p, d),
            Ok(None) => Decoded::Skipped(Skip::NotTcp),
            Err(why) => Decoded::Damaged(why),
        },
    })
}

/// The TCP header an ICMP (`v6` false) or ICMPv6 error message quotes
/// after its 8-byte header: the types Wireshark decodes the quoted packet
/// of (RFC 792 / 4443: unreachable, source quench, redirect, time
/// exceeded, parameter problem; ICMPv6 1-4), a quoted IP header without
/// extension headers and not a later fragment, and at least 16 bytes of
/// its TCP header. Anything else is ICMP, not TCP (never damage: the
/// quote is the message's business).
fn icmp_error(bytes: &[u8], v6: bool) -> Decoded<'_> {
    let not_tcp = Decoded::Skipped(Skip::NotTcp);
    let Some(&kind) = bytes.first() else {
        return not_tcp;
    };
    let error = if v6 {
        (1..=4).contains(&kind)
    } else {
        matches!(kind, 3 | 4 | 5 | 11 | 12)
    };
    let Some(quoted) = bytes.get(8..).filter(|_| error) else {
        return not_tcp;
    };
    let (src, dst, tcp) = match quoted.first().map(|b| b >> 4) {
        Some(4) if !v6 && quoted.len() >= 20 => {
            let header_len = ((quoted[0] & 0x0f) as usize) * 4;
            let later_fragment = be16(quoted, 6) & 0x1fff != 0;
            if quoted[9] != 6 || header_len < 20 || later_fragment {
                return not_tcp;
            }
            let src = IpAddr::from([quoted[12], quoted[13], quoted[14], quoted[15]]);
            let dst = IpAddr::from([quoted[16], quoted[17], quoted[18], quoted[19]]);
            (src, dst, quoted.get(header_len..))
        }
        Some(6) if v6 && quoted.len() >= 40 => {
            if quoted[6] != 6 {
                return not_tcp;
            }
            let addr = |at: usize| {
                let b: [u8; 16] = quoted[at..at + 16].try_into().expect("16 bytes");
                IpAddr::from(b)
            };
            (addr(8), addr(24), quoted.get(40..))
        }
        _ => return not_tcp,
    };
    let too_big = match (v6, kind, bytes.get(1), bytes.get(4..8)) {
        (false, 3, Some(4), Some(m)) => Some(u16::from_be_bytes([m[2], m[3]]) as u32),
        (true, 2, _, Some(m)) => Some(u32::from_be_bytes([m[0], m[1], m[2], m[3]])),
        _ => None,
    };
    match tcp {
        Some(t) if t.len() >= 16 => Decoded::Quoted(QuotedTcp {
            src,
            dst,
            src_port: be16(t, 0),
            dst_port: be16(t, 2),
            seq: u32::from_be_bytes([t[4], t[5], t[6], t[7]]),
            flags: TcpFlags::from_header_bits(be16(t, 12)),
            too_big,
        }),
        _ => not_tcp,
    }
}

/// GRE and what it carries (`depth` already counts the GRE layer).
fn gre(bytes: &[u8], depth: u8) -> Decoded<'_> {
    let g = match gre::Gre::new_checked(bytes) {
        Ok(g) => g,
        Err(why) => return Decoded::Damaged(why),
    };
    let payload = g.payload();
    match g.protocol() {
        // ERSPAN type I has no header and no GRE sequence number.
        link::ether_type::ERSPAN_2 if !g.has_sequence() => ethernet(payload, depth),
        link::ether_type::ERSPAN_2 | link::ether_type::ERSPAN_3 => match erspan::unwrap(payload) {
            Ok(erspan::Mirrored::Ethernet(p)) => ethernet(p, depth),
            Ok(erspan::Mirrored::Ip(p)) => ip(p, depth),
            Ok(erspan::Mirrored::Other) => Decoded::Skipped(Skip::NotIp),
            Err(why) => Decoded::Damaged(why),
        },
        ppp::GRE_PPP => ppp_frame(payload, depth),
        // Transparent Ethernet bridging (gretap), IP, MPLS ...
        t => ether_type(t, payload, depth),
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
    let be32 =
        |at: usize| u32::from_be_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
    Decoded::Tcp(Segment {
        src,
        dst,
        src_port: be16(bytes, 0),
        dst_port: be16(bytes, 2),
        seq: be32(4),
        ack: be32(8),
        flags: TcpFlags::from_header_bits(be16(bytes, 12)),
        window: be16(bytes, 14),
        options: TcpOptions::parse(options),
        payload_len,
        payload: &captured[..captured.len().min(payload_len as usize)],
        ip_id: None,
    })
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

    /// An ICMP message of `kind` quoting `quoted`, in an IPv4 packet from
    /// a router (192.0.2.9) to 10.0.0.1.
    fn icmp(kind: u8, quoted: &[u8]) -> Vec<u8> {
        let total = 20 + 8 + quoted.len();
        let mut p = vec![
            0x45,
            0,
            (total >> 8) as u8,
            total as u8,
            0,
            2,
            0,
            0,
            64,
            1,
            0,
            0,
        ];
        p.extend_from_slice(&[192, 0, 2, 9, 10, 0, 0, 1]);
        p.extend_from_slice(&[kind, 0, 0, 0, 0, 0, 0, 0]);
        p.extend_from_slice(quoted);
        p
    }

    #[test]
    fn an_icmp_error_gives_the_tcp_header_it_quotes() {
        let original = ipv4_tcp(b"hello", &[]);
        // Destination unreachable (3) and time exceeded (11).
        for kind in [3, 11] {
            let Decoded::Quoted(q) = decode(101, &icmp(kind, &original)) else {
                panic!("type {kind}: the quoted header is not read");
            };
            assert_eq!(
                (q.src.to_string(), q.dst.to_string()),
                ("10.0.0.1".into(), "10.0.0.2".into())
            );
            assert_eq!((q.src_port, q.dst_port, q.seq), (40000, 443, 1000));
            assert!(q.flags.psh() && q.flags.ack());
            // Code 0 (network unreachable) is no "too big".
            assert_eq!(q.too_big, None);
        }
        // Fragmentation needed (code 4) names the hop's MTU (RFC 1191).
        let mut needed = icmp(3, &original);
        needed[21] = 4;
        needed[26..28].copy_from_slice(&1280u16.to_be_bytes());
        let Decoded::Quoted(q) = decode(101, &needed) else {
            panic!("fragmentation needed: the quoted header is not read");
        };
        assert_eq!(q.too_big, Some(1280));
        // Time exceeded with the same bytes is no "too big".
        needed[20] = 11;
        let Decoded::Quoted(q) = decode(101, &needed) else {
            panic!("time exceeded: the quoted header is not read");
        };
        assert_eq!(q.too_big, None);
        // Enough of the header for its window (16 bytes), as Wireshark reads.
        assert!(matches!(
            decode(101, &icmp(3, &original[..36])),
            Decoded::Quoted(_)
        ));
        // RFC 792's minimum, 8 bytes of TCP: ports and sequence only.
        assert!(matches!(
            decode(101, &icmp(3, &original[..28])),
            Decoded::Skipped(Skip::NotTcp)
        ));
        // An echo request (8) quotes nothing.
        assert!(matches!(
            decode(101, &icmp(8, &original)),
            Decoded::Skipped(Skip::NotTcp)
        ));
        // A later fragment of the original holds no TCP header.
        let mut fragment = original.clone();
        fragment[6..8].copy_from_slice(&[0x00, 0x10]);
        assert!(matches!(
            decode(101, &icmp(3, &fragment)),
            Decoded::Skipped(Skip::NotTcp)
        ));
    }

    #[test]
    fn an_icmpv6_packet_too_big_gives_the_tcp_header_it_quotes() {
        let mut original = vec![0x60, 0, 0, 0, 0, 20, 6, 64];
        original.extend_from_slice(&[0x20, 0x01, 0x0d, 0xb8].repeat(4));
        original.extend_from_slice(&[0xfd, 0, 0, 0].repeat(4));
        original.extend_from_slice(&ipv4_tcp(b"", &[])[20..]);
        let mut p = vec![0x60, 0, 0, 0, 0, (8 + original.len()) as u8, 58, 64];
        p.extend_from_slice(&[0xfe, 0x80, 0, 0].repeat(8));
        p.extend_from_slice(&[2, 0, 0, 0, 0, 0, 0x05, 0x00]);
        p.extend_from_slice(&original);
        let Decoded::Quoted(q) = decode(101, &p) else {
            panic!("the quoted header is not read");
        };
        assert_eq!((q.src_port, q.dst_port), (40000, 443));
        assert!(q.src.is_ipv6() && q.dst.is_ipv6());
        assert_eq!(q.too_big, Some(0x500), "the MTU ICMPv6 names");
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
            Decoded::Fragment(f) if f.more && f.offset == 0 && f.key.protocol == 6 && f.key.id == 1
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

    fn udp(src_port: u16, dst_port: u16, payload: &[u8]) -> Vec<u8> {
        let len = 8 + payload.len();
        let mut u = src_port.to_be_bytes().to_vec();
        u.extend_from_slice(&dst_port.to_be_bytes());
        u.extend_from_slice(&(len as u16).to_be_bytes());
        u.extend_from_slice(&[0, 0]);
        u.extend_from_slice(payload);
        u
    }

    /// An outer IPv4 header around `payload` of IP protocol `protocol`.
    fn outer_ipv4(protocol: u8, payload: &[u8]) -> Vec<u8> {
        let total = 20 + payload.len();
        let mut p = vec![
            0x45,
            0,
            (total >> 8) as u8,
            total as u8,
            0,
            9,
            0,
            0,
            64,
            protocol,
            0,
            0,
        ];
        p.extend_from_slice(&[192, 0, 2, 1, 192, 0, 2, 2]);
        p.extend_from_slice(payload);
        p
    }

    fn outer_ipv6(next: u8, payload: &[u8]) -> Vec<u8> {
        let mut p = vec![0x60, 0, 0, 0];
        p.extend_from_slice(&(payload.len() as u16).to_be_bytes());
        p.extend_from_slice(&[next, 64]);
        p.extend_from_slice(&[0x20, 1, 0x0d, 0xb8]);
        p.extend_from_slice(&[0; 11]);
        p.push(1);
        p.extend_from_slice(&[0x20, 1, 0x0d, 0xb8]);
        p.extend_from_slice(&[0; 11]);
        p.push(2);
        p.extend_from_slice(payload);
        p
    }

    /// The inner segment: 10.0.0.1:40000 -> 10.0.0.2:443, payload `x`.
    fn inner_is_the_segment(d: Decoded<'_>) {
        let Decoded::Tcp(s) = d else {
            panic!("inner TCP not found: {d:?}");
        };
        assert_eq!((s.src.to_string().as_str(), s.dst_port), ("10.0.0.1", 443));
        assert_eq!(s.payload, b"x");
    }

    #[test]
    fn vxlan_on_4789_opens_to_the_inner_segment_and_8472_does_not() {
        let mut vx = vec![0x08, 0, 0, 0, 0, 0, 42, 0];
        vx.extend_from_slice(&ethernet([0x08, 0x00], &ipv4_tcp(b"x", &[])));
        inner_is_the_segment(decode(101, &outer_ipv4(17, &udp(51000, 4789, &vx))));
        inner_is_the_segment(decode(101, &outer_ipv6(17, &udp(51000, 4789, &vx))));
        assert!(matches!(
            decode(101, &outer_ipv4(17, &udp(51000, 8472, &vx))),
            Decoded::Skipped(Skip::NotTcp)
        ));
    }

    #[test]
    fn geneve_with_options_opens_to_the_inner_segment() {
        let mut g = vec![0x01, 0, 0x65, 0x58, 0, 0, 1, 0, 0x01, 0x02, 0x03, 0x00];
        g.extend_from_slice(&ethernet([0x08, 0x00], &ipv4_tcp(b"x", &[])));
        inner_is_the_segment(decode(101, &outer_ipv4(17, &udp(6081, 33000, &g))));
        // Geneve carrying IPv4 directly (protocol type 0x0800).
        let mut direct = vec![0x00, 0, 0x08, 0x00, 0, 0, 1, 0];
        direct.extend_from_slice(&ipv4_tcp(b"x", &[]));
        inner_is_the_segment(decode(101, &outer_ipv4(17, &udp(40000, 6081, &direct))));
    }

    #[test]
    fn gre_variants_open_to_the_inner_segment() {
        let inner = ipv4_tcp(b"x", &[]);
        let eth = ethernet([0x08, 0x00], &inner);
        let mut plain = vec![0, 0, 0x08, 0x00];
        plain.extend_from_slice(&inner);
        inner_is_the_segment(decode(101, &outer_ipv4(47, &plain)));
        let mut gretap = vec![0x20, 0, 0x65, 0x58, 0, 0, 0, 7]; // with key
        gretap.extend_from_slice(&eth);
        inner_is_the_segment(decode(101, &outer_ipv4(47, &gretap)));
        let mut erspan1 = vec![0, 0, 0x88, 0xbe];
        erspan1.extend_from_slice(&eth);
        inner_is_the_segment(decode(101, &outer_ipv4(47, &erspan1)));
        let mut erspan2 = vec![0x10, 0, 0x88, 0xbe, 0, 0, 0, 1]; // S bit + seq
        erspan2.extend_from_slice(&[0x10, 0x01, 0x00, 0x0c, 0, 0, 0, 0]);
        erspan2.extend_from_slice(&eth);
        inner_is_the_segment(decode(101, &outer_ipv6(47, &erspan2)));
        let mut erspan3 = vec![0x10, 0, 0x22, 0xeb, 0, 0, 0, 1];
        erspan3.extend_from_slice(&[0x20, 0x01, 0x00, 0x0c, 0, 0, 0, 0, 0, 0, 0, 0]);
        erspan3.extend_from_slice(&eth);
        inner_is_the_segment(decode(101, &outer_ipv4(47, &erspan3)));
        let mut pptp = vec![0x30, 0x01, 0x88, 0x0b, 0, 24, 0, 1, 0, 0, 0, 5];
        pptp.extend_from_slice(&[0xff, 0x03, 0x00, 0x21]);
        pptp.extend_from_slice(&inner);
        inner_is_the_segment(decode(101, &outer_ipv4(47, &pptp)));
    }

    #[test]
    fn ip_in_ip_and_six_in_four_open_to_the_inner_segment() {
        let inner = ipv4_tcp(b"x", &[]);
        inner_is_the_segment(decode(101, &outer_ipv4(4, &inner)));
        inner_is_the_segment(decode(101, &outer_ipv6(4, &inner)));
        // 6in4 (SIT): IPv6 inside IPv4, with the inner TCP in IPv6.
        let six = outer_ipv6(6, &inner[20..]);
        let packet = outer_ipv4(41, &six);
        let Decoded::Tcp(s) = decode(101, &packet) else {
            panic!("6in4 not opened");
        };
        assert_eq!(
            (s.dst.to_string().as_str(), s.payload),
            ("2001:db8::2", &b"x"[..])
        );
    }

    #[test]
    fn mpls_pppoe_and_gtp_open_to_the_inner_segment() {
        let inner = ipv4_tcp(b"x", &[]);
        let mut mpls = vec![0, 0x01, 0x00, 0x40, 0, 0x02, 0x01, 0x40];
        mpls.extend_from_slice(&inner);
        inner_is_the_segment(decode(1, &ethernet([0x88, 0x47], &mpls)));
        let mut pppoe = vec![0x11, 0, 0, 1];
        pppoe.extend_from_slice(&((inner.len() + 2) as u16).to_be_bytes());
        pppoe.extend_from_slice(&[0x00, 0x21]);
        pppoe.extend_from_slice(&inner);
        let mut tagged = vec![0, 5, 0x88, 0x64]; // VLAN 5, then PPPoE session
        tagged.extend_from_slice(&pppoe);
        inner_is_the_segment(decode(1, &ethernet([0x81, 0x00], &tagged)));
        let mut gtp = vec![0x30, 0xff];
        gtp.extend_from_slice(&(inner.len() as u16).to_be_bytes());
        gtp.extend_from_slice(&[0, 0, 0, 1]);
        gtp.extend_from_slice(&inner);
        inner_is_the_segment(decode(101, &outer_ipv4(17, &udp(2152, 2152, &gtp))));
    }

    #[test]
    fn arcnet_and_ipoib_link_types_reach_tcp() {
        let inner = ipv4_tcp(b"x", &[]);
        let mut arc = vec![0xbe, 0x50, 0xc0, 0x00, 0xd4, 0x00, 0x01, 0x6b];
        arc.extend_from_slice(&inner);
        inner_is_the_segment(decode(129, &arc));
        let mut ib = vec![0u8; 40];
        ib.extend_from_slice(&[0x08, 0x00, 0, 0]);
        ib.extend_from_slice(&inner);
        inner_is_the_segment(decode(242, &ib));
    }

    #[test]
    fn nesting_is_bounded() {
        let mut p = ipv4_tcp(b"x", &[]);
        for _ in 0..MAX_DEPTH {
            p = outer_ipv4(4, &p);
        }
        inner_is_the_segment(decode(101, &p));
        p = outer_ipv4(4, &p);
        assert!(matches!(decode(101, &p), Decoded::Damaged(_)));
    }

    #[test]
    fn cut_inner_packet_keeps_its_declared_length() {
        let mut vx = vec![0x08, 0, 0, 0, 0, 0, 42, 0];
        vx.extend_from_slice(&ethernet([0x08, 0x00], &ipv4_tcp(&[7u8; 500], &[])));
        let full = outer_ipv4(17, &udp(51000, 4789, &vx));
        let cut = &full[..20 + 8 + 8 + 14 + 40 + 10];
        let Decoded::Tcp(s) = decode(101, cut) else {
            panic!("cut inner segment not decoded");
        };
        assert_eq!((s.payload_len, s.payload.len()), (500, 10));
    }

    #[test]
    fn ipv6_fragment_header_gives_a_fragment_and_an_atomic_one_does_not() {
        let tcp = &ipv4_tcp(b"x", &[])[20..];
        let mut frag = vec![6, 0, 0x00, 0x01, 0, 0, 0x12, 0x34]; // offset 0, M
        frag.extend_from_slice(tcp);
        let packet = outer_ipv6(44, &frag);
        let Decoded::Fragment(f) = decode(101, &packet) else {
            panic!("fragment not reported");
        };
        assert_eq!(
            (f.key.id, f.key.protocol, f.offset, f.more),
            (0x1234, 6, 0, true)
        );
        assert_eq!(f.data, tcp);
        frag[3] = 0; // atomic fragment (RFC 6946): decoded in place
        assert!(matches!(
            decode(101, &outer_ipv6(44, &frag)),
            Decoded::Tcp(_)
        ));
    }

    #[test]
    fn ipv4_fragments_rebuilt_decode_to_the_segment() {
        let whole = ipv4_tcp(b"x", &[]);
        let (head, tail) = whole[20..].split_at(16);
        let key = FragmentKey {
            src: "10.0.0.1".parse().unwrap(),
            dst: "10.0.0.2".parse().unwrap(),
            id: 1,
            protocol: 6,
        };
        let mut d = crate::defrag::Defragmenter::default();
        let first = Fragment {
            key,
            offset: 0,
            more: true,
            data: head,
            cut: false,
            depth: 0,
        };
        assert!(d.push(&first, 0).is_none());
        let last = Fragment {
            key,
            offset: 16,
            more: false,
            data: tail,
            cut: false,
            depth: 0,
        };
        let datagram = d.push(&last, 0).expect("complete");
        inner_is_the_segment(datagram.decode());
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(link in 0u32..300, bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..200)) {
            let _ = decode(link, &bytes);
        }

        /// Arbitrary bytes behind each tunnel header, at every cut.
        #[test]
        fn arbitrary_tunnel_payloads_never_panic(
            kind in 0usize..8,
            bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..300),
            cut in 0usize..400,
        ) {
            let packet = match kind {
                0 => outer_ipv4(17, &udp(1, 4789, &bytes)),
                1 => outer_ipv4(17, &udp(1, 6081, &bytes)),
                2 => outer_ipv4(17, &udp(2152, 2152, &bytes)),
                3 => outer_ipv4(47, &bytes),
                4 => outer_ipv6(41, &bytes),
                5 => outer_ipv6(44, &bytes),
                6 => ethernet([0x88, 0x47], &bytes),
                _ => ethernet([0x88, 0x64], &bytes),
            };
            let link = if kind >= 6 { 1 } else { 101 };
            let packet = &packet[..cut.min(packet.len())];
            match decode(link, packet) {
                Decoded::Tcp(s) => proptest::prop_assert!(s.payload.len() <= s.payload_len as usize),
                Decoded::Fragment(f) => {
                    let mut d = crate::defrag::Defragmenter::default();
                    if let Some(datagram) = d.push(&f, 0) {
                        let _ = datagram.decode();
                    }
                }
                _ => {}
            }
        }
    }
}
