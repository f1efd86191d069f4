//! Packet decoding: the second stage of rttdoc's one pass.
//!
//! [`decode`] turns one captured frame (link type + bytes) into a
//! [`Segment`]: the TCP header fields, every TCP option rttdoc reasons about
//! (MSS, window scale, SACK, timestamps, TCP Fast Open), the payload length the
//! IP header declares and the payload bytes that were actually captured.
//! Ethernet (with 802.1Q/QinQ), IPv4 and IPv6 (with extension headers) are
//! sliced by `etherparse`'s lax slicer, which keeps snaplen-cut packets;
//! the link layers it does not know (Linux SLL2, BSD NULL/LOOP, raw IP) are
//! unwrapped in [`link`]. Frames that are not TCP, IP fragments and damaged
//! packets come back as [`Decoded::Skipped`] or [`Decoded::Damaged`] so the
//! caller can count them.
//!
//! [`tls`] reads TLS records and handshake messages out of reassembled TCP
//! payload.

pub mod arcnet;
pub mod defrag;
pub mod erspan;
pub mod geneve;
pub mod gre;
pub mod gtp;
pub mod link;
pub mod mpls;
pub mod ppp;
pub mod tcp;
pub mod tls;
pub mod vxlan;

mod decode;

pub use decode::{
    decode, decode_datagram, Decoded, Fragment, FragmentKey, Segment, Skip, MAX_DEPTH,
};
pub use tcp::{TcpFlags, TcpOptions, Tfo};
