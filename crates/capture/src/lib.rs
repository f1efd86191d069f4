//! Capture input: the first stage of rttdoc's one pass.
//!
//! A [`Capture`] reads, plain or compressed (gzip, zstd, lz4: what
//! Wireshark reads; see [`Compression`]), from a path or from standard
//! input (`-`):
//!
//! - pcap in either byte order with micro- or nanosecond timestamps, and the
//!   variants Wireshark reads: Kuznetzov's modified pcap (magic 0xa1b2cd34,
//!   24- or 28-byte record headers), Red Hat 6.1 and Nokia record headers
//!   behind the standard magic (told apart from the first records as
//!   wiretap does), AIX, Ixia lcap, versions before 2.4 with swapped
//!   lengths; the FCS bits of the link-type field strip the frame check
//!   sequence;
//! - pcapng in either byte order, with any number of sections (each with its
//!   own byte order and interfaces) and interfaces (each with its own link
//!   type, `if_tsresol` in powers of 10 or 2, `if_tsoffset` and
//!   `if_fcslen`), Section Header Blocks of any length, Enhanced, Simple and
//!   obsolete Packet Blocks, and Decryption Secrets Blocks, whose TLS key
//!   logs are collected ([`Capture::secrets`]); name resolution, statistics
//!   and unknown blocks are skipped by their length.
//!
//! Several files are read as one with [`Capture::open_all`]: merged by
//! time as `mergecap` merges them (merge.rs), opened one at a time as
//! the merge reaches them, a damaged one stopping only itself.
//!
//! It yields [`Frame`]s one at a time, in file order, numbered from 1
//! exactly as Wireshark numbers them (custom and systemd journal blocks take
//! a number too, and yield no frame), with nanosecond timestamps (a Simple
//! Packet Block has none: it gets the previous packet's; a time past 2262
//! saturates). Memory is bounded by one read buffer, whatever
//! the file size: packets above Wireshark's 262,144 bytes and other blocks
//! above 16 MiB are refused as corrupt.
//!
//! Damage never panics: the reader stops at the first record it cannot frame
//! and reports a [`CaptureError`] naming the file and the byte offset, after
//! every frame before the damage has been delivered.

mod compression;
mod error;
#[cfg(target_os = "linux")]
pub mod live;
mod merge;
pub mod pcapng;
mod reader;
mod snoop;

pub use compression::{Compression, Decompressed, Unreadable};
pub use error::{CaptureError, ErrorKind};
#[cfg(target_os = "linux")]
pub use live::{LiveCapture, LiveError, LiveStats, DEFAULT_BUFFER_BYTES};
pub use merge::{MergedRun, MAX_RUNS};
pub use reader::{Capture, FileFormat, Frame, Progress, Secrets};

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
    /// Linux netfilter log (`tcpdump -i nflog:N`).
    pub const NFLOG: u32 = 239;
    /// Apple's PKTAP (`tcpdump -i pktap,en0` on macOS), and DLT_USER2,
    /// the value OS X 10.9 wrote it under.
    pub const PKTAP: u32 = 258;
    pub const PKTAP_USER2: u32 = 149;
}
