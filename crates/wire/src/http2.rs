//! HTTP/2's wire vocabulary (RFC 9113): the client's connection preface,
//! the frame header's size, frame types and flags. Shared by what reads
//! frames (the analyzer's h2c reader, the early-data check) and what
//! writes them (the probe).

/// The client connection preface (RFC 9113 3.4).
pub const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
/// A frame's header: a 24-bit length, its type, flags and stream.
pub const FRAME_HEADER: usize = 9;

/// Frame types (RFC 9113 6).
pub const DATA: u8 = 0x0;
pub const HEADERS: u8 = 0x1;
pub const PRIORITY: u8 = 0x2;
pub const RST_STREAM: u8 = 0x3;
pub const SETTINGS: u8 = 0x4;
pub const PUSH_PROMISE: u8 = 0x5;
pub const PING: u8 = 0x6;
pub const GOAWAY: u8 = 0x7;
pub const WINDOW_UPDATE: u8 = 0x8;
pub const CONTINUATION: u8 = 0x9;

/// DATA's and HEADERS' END_STREAM flag.
pub const END_STREAM: u8 = 0x1;
/// SETTINGS' and PING's ACK flag.
pub const ACK: u8 = 0x1;
/// HEADERS' END_HEADERS, PADDED and PRIORITY flags.
pub const END_HEADERS: u8 = 0x4;
pub const PADDED: u8 = 0x8;
pub const PRIORITY_FLAG: u8 = 0x20;
