//! Packet decoding: the second stage of rttdoc's one pass.
//!
//! [`decode`] turns one captured frame (link type + bytes) into a
//! [`Segment`]: the TCP header fields, every TCP option rttdoc reasons about
//! (MSS, window scale, SACK, timestamps, TCP Fast Open), the payload length the
//! IP header declares and the payload bytes that were actually captured.
//!
//! What is decoded, read by hand so that snaplen-cut packets still yield
//! what they hold (the outer and every inner layer alike):
//! - link layers ([`link`]): Ethernet (802.1Q, 802.1ad/QinQ, 0x9100 tags;
//!   802.3 with LLC/SNAP), Linux cooked SLL/SLL2, raw IPv4/IPv6, BSD
//!   NULL/LOOP, PPP and PPP-in-HDLC, Cisco HDLC, ARCnet BSD/Linux
//!   ([`arcnet`]), IP over InfiniBand;
//! - IPv4, IPv6 with its extension headers (hop-by-hop, routing,
//!   destination options, AH, mobility, HIP, shim6, fragment);
//! - tunnels, opened down to the innermost TCP segment, at most
//!   [`MAX_DEPTH`] layers deep: GRE ([`gre`]: checksum, key, sequence,
//!   routing; PPTP's version 1) carrying IP, Ethernet (gretap, 0x6558),
//!   MPLS, PPP or ERSPAN types I/II/III ([`erspan`]); IP-in-IP, 6in4,
//!   4in6, 6in6; MPLS label stacks ([`mpls`]) over Ethernet, GRE, PPP or IP
//!   (protocol 137); PPPoE sessions and PPP ([`ppp`]); and on UDP, only on
//!   the ports tshark decodes them by default so that `tcp.stream` numbers
//!   agree: VXLAN 4789 and VXLAN-GPE 4790 ([`vxlan`]; Linux's old 8472 is
//!   not opened, tshark needs `-d udp.port==8472,vxlan` for it), Geneve 6081
//!   ([`geneve`]), GTP-U 2152 ([`gtp`]).
//!
//! IP fragments come back as [`Decoded::Fragment`]; a
//! [`defrag::Defragmenter`] (bounded in datagrams, bytes and capture time)
//! rebuilds the datagram, whose segment belongs to the frame of the fragment
//! that completed it, as in Wireshark. Frames that are not TCP and damaged
//! packets come back as [`Decoded::Skipped`] or [`Decoded::Damaged`] so the
//! caller can count them.
//!
//! [`tls`] reads TLS records and handshake messages out of reassembled TCP
//! payload.

pub mod arcnet;
pub mod defrag;
pub mod dns;
pub mod erspan;
pub mod geneve;
pub mod gre;
pub mod gtp;
pub mod hpack;
pub mod http2;
pub mod l2tp;
pub mod link;
pub mod mpls;
pub mod ppp;
pub mod proxy_protocol;
pub mod quic;
pub mod tcp;
pub mod tls;
pub mod vxlan;

mod decode;

/// Bytes written as hex, as tshark prints a field (`tcp.payload`,
/// `tcp.options`): the tests' way to quote a real capture's bytes.
#[cfg(test)]
pub(crate) fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

pub use decode::{
    decode, decode_datagram, Decoded, Fragment, FragmentKey, QuotedTcp, Segment, Skip, UdpDatagram,
    MAX_DEPTH,
};
pub use tcp::{Mptcp, MptcpSubflow, TcpFlags, TcpOptions, Tfo};
