//! What a pcapng reader and a pcapng writer share: the block types
//! (pcapng spec, section 11.1) and integers in a section's byte order.
//! `Capture` reads with them; `rttdoc-report`'s `--annotate` writes with
//! them.

/// pcapng block types.
#[allow(missing_docs)]
pub mod block {
    pub const SECTION_HEADER: u32 = 0x0A0D_0D0A;
    pub const INTERFACE_DESCRIPTION: u32 = 1;
    /// Obsolete Packet Block (pcapng before 1.0), still written by old tools.
    pub const PACKET: u32 = 2;
    pub const SIMPLE_PACKET: u32 = 3;
    pub const ENHANCED_PACKET: u32 = 6;
    /// Systemd Journal Export Block: Wireshark shows each as a frame.
    pub const SYSTEMD_JOURNAL: u32 = 9;
    pub const DECRYPTION_SECRETS: u32 = 0x0A;
    /// Custom blocks, to be copied or not when a file is rewritten:
    /// Wireshark shows each as a frame.
    pub const CUSTOM: u32 = 0x0BAD;
    pub const CUSTOM_DO_NOT_COPY: u32 = 0x4000_0BAD;
}

/// The bytes a block of type `kind` whose length field says `declared`
/// takes in the file. Some early writers left a packet block's padding
/// out of its length (the pcapng drafts' example files); Wireshark reads
/// them rounding up ("the block total length of some example files don't
/// contain the packet data padding bytes", wiretap/pcapng.c), and so do
/// the reader and `--annotate`.
pub fn block_length(kind: u32, declared: u64) -> u64 {
    if matches!(kind, block::PACKET | block::ENHANCED_PACKET) {
        declared.next_multiple_of(4)
    } else {
        declared
    }
}

/// Integers in one byte order (a pcapng section's, a pcap file's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Endian {
    /// Big-endian; little-endian otherwise.
    pub big: bool,
}

impl Endian {
    /// The u16 at `at` (panics past the end: callers check lengths first).
    /// (Taken as one slice: one bounds check, one load, where a byte at a
    /// time was a check each, on every block's every field.)
    pub fn u16(self, b: &[u8], at: usize) -> u16 {
        let w: [u8; 2] = b[at..at + 2].try_into().expect("two bytes");
        if self.big {
            u16::from_be_bytes(w)
        } else {
            u16::from_le_bytes(w)
        }
    }
    /// The u32 at `at`.
    pub fn u32(self, b: &[u8], at: usize) -> u32 {
        let w: [u8; 4] = b[at..at + 4].try_into().expect("four bytes");
        if self.big {
            u32::from_be_bytes(w)
        } else {
            u32::from_le_bytes(w)
        }
    }
    /// The u64 at `at`.
    pub fn u64(self, b: &[u8], at: usize) -> u64 {
        let w: [u8; 8] = b[at..at + 8].try_into().expect("eight bytes");
        if self.big {
            u64::from_be_bytes(w)
        } else {
            u64::from_le_bytes(w)
        }
    }
    /// Appends `v` in this byte order.
    pub fn put16(self, out: &mut Vec<u8>, v: u16) {
        out.extend_from_slice(&if self.big {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        });
    }
    /// Appends `v` in this byte order.
    pub fn put32(self, out: &mut Vec<u8>, v: u32) {
        out.extend_from_slice(&if self.big {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        });
    }
}
