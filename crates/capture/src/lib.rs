//! Capture input: the first stage of rttdoc's one pass.
//!
//! A [`Capture`] reads a pcap (micro- or nanosecond timestamps, either byte
//! order) or pcapng file (any number of sections and interfaces, each with its
//! own link type and `if_tsresol`), plain or gzip-compressed, from a path or
//! from standard input (`-`). It yields [`Frame`]s one at a time, in file
//! order, numbered from 1 exactly as Wireshark numbers them, with nanosecond
//! timestamps. Memory is bounded by one read buffer, whatever the file size.
//!
//! Damage never panics: the reader stops at the first record it cannot frame
//! and reports a [`CaptureError`] naming the file and the byte offset, after
//! every frame before the damage has been delivered.

mod error;
mod reader;

pub use error::{CaptureError, ErrorKind};
pub use reader::{Capture, Frame, Progress};

/// Link-layer header types (the `LINKTYPE_*` registry) rttdoc decodes.
pub mod linktype {
    pub const NULL: u32 = 0;
    pub const ETHERNET: u32 = 1;
    pub const ARCNET_BSD: u32 = 7;
    pub const PPP: u32 = 9;
    pub const PPP_HDLC: u32 = 50;
    pub const C_HDLC: u32 = 104;
    pub const ARCNET_LINUX: u32 = 129;
    /// IP over InfiniBand (RFC 4391 header behind a 40-byte pseudo-header).
    pub const IPOIB: u32 = 242;
    pub const RAW: u32 = 101;
    pub const LOOP: u32 = 108;
    pub const LINUX_SLL: u32 = 113;
    pub const IPV4: u32 = 228;
    pub const IPV6: u32 = 229;
    pub const LINUX_SLL2: u32 = 276;
    /// Some old BSD systems wrote raw IP as DLT 12 or 14.
    pub const RAW_OLD_12: u32 = 12;
    pub const RAW_OLD_14: u32 = 14;
}
