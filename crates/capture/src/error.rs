use std::fmt;

use crate::compression::Unreadable;

/// Why a capture could not be read (further).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorKind {
    /// The file could not be opened or read.
    Io(String),
    /// The first bytes are no pcap, pcapng or snoop header.
    NotACapture { magic: [u8; 4] },
    /// The file is empty.
    Empty,
    /// The file is compressed in a format rttdoc (like Wireshark) does not
    /// read.
    Unreadable(Unreadable),
    /// The file ends in the middle of a record.
    Truncated,
    /// A record declares a length no real capture has.
    AbsurdLength { declared: u64 },
    /// A record's structure is invalid (bad block length, unknown interface ...).
    Malformed(String),
}

/// An error reading a capture: the file, the byte offset of the damaged
/// record (in the decompressed stream for compressed input) and what was wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaptureError {
    pub file: String,
    pub offset: u64,
    pub kind: ErrorKind,
}

impl fmt::Display for CaptureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: byte {}: {}", self.file, self.offset, self.kind)
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorKind::Io(e) => write!(f, "read error: {e}"),
            ErrorKind::NotACapture { magic } => {
                write!(
                    f,
                    "not a pcap, pcapng or snoop file (starts with {:02x} {:02x} {:02x} {:02x})",
                    magic[0], magic[1], magic[2], magic[3]
                )?;
                match other_format(magic) {
                    Some(Other::Capture(name)) => write!(
                        f,
                        ": a {name} capture; Wireshark reads it, and `editcap -F pcapng FILE \
                         OUT.pcapng` converts it for rttdoc"
                    ),
                    Some(Other::Text(what)) => write!(f, ": {what}"),
                    None => Ok(()),
                }
            }
            ErrorKind::Empty => write!(f, "the file is empty"),
            ErrorKind::Unreadable(Unreadable { format, unpack }) => write!(
                f,
                "the capture is {format}-compressed, which rttdoc does not read (it reads \
                 gzip, zstd and lz4, as Wireshark does): unpack it first, or pipe it in: \
                 `{unpack} FILE | rttdoc analyze -`"
            ),
            ErrorKind::Truncated => write!(f, "the file ends inside a record (truncated capture)"),
            ErrorKind::AbsurdLength { declared } => {
                write!(f, "a record declares {declared} bytes, more than any real packet (corrupt capture)")
            }
            ErrorKind::Malformed(what) => write!(f, "malformed record: {what}"),
        }
    }
}

impl std::error::Error for CaptureError {}

/// A file that is something else than pcap or pcapng, known by its first
/// bytes.
enum Other {
    /// Another capture format Wireshark reads (by its name).
    Capture(&'static str),
    /// Not a capture at all (what it looks like).
    Text(&'static str),
}

/// What the first bytes of a file that is not pcap or pcapng say it is:
/// the capture formats of other tools (Wireshark's wiretap knows them by
/// these magic numbers), and the text that is often downloaded in a
/// capture's place.
fn other_format(magic: &[u8; 4]) -> Option<Other> {
    Some(match magic {
        b"GMBU" | b"RTSS" => Other::Capture("Microsoft Network Monitor"),
        b"TRSN" => Other::Capture("Sniffer (DOS)"),
        b"Obse" => Other::Capture("Network Instruments Observer"),
        [0xaa, 0xaa, 0xaa, 0xaa] => Other::Capture("5Views"),
        b"vers" => Other::Text(
            "text, likely a Git LFS pointer in the capture's place (`git lfs pull` fetches the capture)",
        ),
        b"<!DO" | b"<!do" | b"<htm" | b"<HTM" => Other::Text(
            "an HTML page, likely the web page that shows the capture rather than the raw file",
        ),
        _ => return None,
    })
}
