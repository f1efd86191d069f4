//! Compressed captures, told apart by their first bytes the way Wireshark's
//! wiretap tells them (never by the file name: `capture.pcap` compressed by
//! a tool that kept the name, or a stream on standard input, has none).
//!
//! Read: what wiretap 4.0 reads, so that every file Wireshark opens opens
//! here too: gzip (also several members back to back, as `pigz` and log
//! rotation write), Zstandard (several frames and skippable frames, as
//! `pzstd` and `zstd -T` write) and the LZ4 frame format (`lz4`'s default).
//! Refused with the command that unpacks them: xz, bzip2, zip, 7z and LZ4's
//! legacy format (`lz4 -l`), which Wireshark does not read either, so users
//! meet them only when a capture was compressed for storage.

use std::io::{self, BufRead, Read};

/// How a capture's bytes are compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// Not compressed.
    None,
    /// gzip (RFC 1952), any number of members.
    Gzip,
    /// Zstandard (RFC 8878), any number of frames.
    Zstd,
    /// The LZ4 frame format, any number of frames.
    Lz4,
}

/// A compression rttdoc recognises but does not read: its name and the
/// command that unpacks it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unreadable {
    /// The format, as people call it ("xz").
    pub format: &'static str,
    /// A command that writes the capture to standard output ("xz -dc").
    pub unpack: &'static str,
}

/// The formats refused with a hint, by their leading bytes.
const UNREADABLE: &[(&[u8], Unreadable)] = &[
    (
        &[0xfd, b'7', b'z', b'X', b'Z', 0],
        Unreadable {
            format: "xz",
            unpack: "xz -dc",
        },
    ),
    (
        b"BZh",
        Unreadable {
            format: "bzip2",
            unpack: "bzip2 -dc",
        },
    ),
    (
        b"PK\x03\x04",
        Unreadable {
            format: "zip",
            unpack: "unzip -p",
        },
    ),
    (
        &[b'7', b'z', 0xbc, 0xaf, 0x27, 0x1c],
        Unreadable {
            format: "7z",
            unpack: "7z x -so",
        },
    ),
    (
        &[0x02, 0x21, 0x4c, 0x18],
        Unreadable {
            format: "LZ4 legacy-format",
            unpack: "lz4 -dc",
        },
    ),
];

impl Compression {
    /// Tells the compression from the first bytes of a file (at least six
    /// are needed to tell every format; fewer are read as uncompressed).
    pub fn sniff(head: &[u8]) -> Result<Compression, Unreadable> {
        // Skippable frames (magic 0x184D2A50..5F, then a 32-bit length)
        // belong to both Zstandard and LZ4 (`pzstd` starts every file with
        // one): the frame after them tells which. Past what was read, or
        // with nothing after them, Zstandard is the likelier.
        let mut at = 0;
        while let Some(header @ [.., l0, l1, l2, l3]) = head.get(at..at + 8) {
            if !skippable(header) {
                break;
            }
            let skip = 8 + u32::from_le_bytes([*l0, *l1, *l2, *l3]) as usize;
            match head.get(at + skip..) {
                Some(rest) if rest.len() >= 4 => at += skip,
                _ => return Ok(Compression::Zstd),
            }
        }
        let skipped = at > 0;
        match &head[at..] {
            [0x1f, 0x8b, ..] if !skipped => return Ok(Compression::Gzip),
            [0x28, 0xb5, 0x2f, 0xfd, ..] => return Ok(Compression::Zstd),
            [0x04, 0x22, 0x4d, 0x18, ..] => return Ok(Compression::Lz4),
            rest if skippable(rest) => return Ok(Compression::Zstd),
            _ if skipped => return Ok(Compression::Zstd),
            _ => {}
        }
        match UNREADABLE.iter().find(|(magic, _)| head.starts_with(magic)) {
            Some((_, unreadable)) => Err(*unreadable),
            None => Ok(Compression::None),
        }
    }

    /// The format's name as people call it, for messages.
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "uncompressed",
            Compression::Gzip => "gzip",
            Compression::Zstd => "zstd",
            Compression::Lz4 => "lz4",
        }
    }

    /// The decompressed bytes of `input`.
    pub fn decoder<R: BufRead>(self, input: R) -> io::Result<Decompressed<R>> {
        Ok(match self {
            Compression::None => Decompressed::Plain(input),
            Compression::Gzip => Decompressed::Gzip(flate2::bufread::MultiGzDecoder::new(input)),
            Compression::Zstd => {
                Decompressed::Zstd(zstd::stream::read::Decoder::with_buffer(input)?)
            }
            Compression::Lz4 => Decompressed::Lz4(Lz4Frames::new(input)),
        })
    }
}

/// A capture's bytes after decompression (or as they are).
pub enum Decompressed<R: BufRead> {
    /// Uncompressed input, read as it is.
    Plain(R),
    /// gzip input.
    Gzip(flate2::bufread::MultiGzDecoder<R>),
    /// Zstandard input.
    Zstd(zstd::stream::read::Decoder<'static, R>),
    /// LZ4 frame input.
    Lz4(Lz4Frames<R>),
}

impl<R: BufRead> Read for Decompressed<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Decompressed::Plain(r) => r.read(buf),
            Decompressed::Gzip(r) => r.read(buf),
            Decompressed::Zstd(r) => r.read(buf),
            Decompressed::Lz4(r) => r.read(buf),
        }
    }
}

/// LZ4 frames back to back, as `cat a.lz4 b.lz4` and `lz4 -m` write them,
/// and skippable frames between them (the `lz4` tool and wiretap read on;
/// `lz4_flex` reads one frame and refuses skippable ones).
pub struct Lz4Frames<R: BufRead> {
    /// The frame decoder (`None` only while the next frame is set up).
    frame: Option<lz4_flex::frame::FrameDecoder<R>>,
    /// The previous frame ended (or none began): skip skippable frames and
    /// start a new decoder before reading on.
    between: bool,
}

impl<R: BufRead> Lz4Frames<R> {
    fn new(input: R) -> Self {
        Lz4Frames {
            frame: Some(lz4_flex::frame::FrameDecoder::new(input)),
            between: true,
        }
    }
}

/// Whether four bytes are a skippable frame's magic number (0x184D2A5X).
fn skippable(magic: &[u8]) -> bool {
    matches!(magic, [m, 0x2a, 0x4d, 0x18, ..] if m & 0xf0 == 0x50)
}

/// Consumes skippable frames; false when the input ends before a frame.
fn skip_to_frame(input: &mut impl BufRead) -> io::Result<bool> {
    loop {
        let head = input.fill_buf()?;
        if head.is_empty() {
            return Ok(false);
        }
        if !skippable(head) {
            return Ok(true);
        }
        let mut header = [0u8; 8];
        input.read_exact(&mut header)?;
        let len = u64::from(u32::from_le_bytes([
            header[4], header[5], header[6], header[7],
        ]));
        if io::copy(&mut input.by_ref().take(len), &mut io::sink())? != len {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
    }
}

impl<R: BufRead> Read for Lz4Frames<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            if self.between {
                let Some(mut input) = self.frame.take().map(|f| f.into_inner()) else {
                    return Ok(0);
                };
                let more = skip_to_frame(&mut input);
                self.frame = Some(lz4_flex::frame::FrameDecoder::new(input));
                if !more? {
                    return Ok(0);
                }
                self.between = false;
            }
            let Some(frame) = &mut self.frame else {
                return Ok(0);
            };
            let got = frame.read(buf)?;
            if got > 0 || buf.is_empty() {
                return Ok(got);
            }
            self.between = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffing_names_each_format_by_its_magic_and_leaves_captures_alone() {
        let pcap = 0xa1b2_c3d4u32.to_le_bytes();
        let pcapng = 0x0a0d_0d0au32.to_le_bytes();
        assert_eq!(Compression::sniff(&pcap), Ok(Compression::None));
        assert_eq!(Compression::sniff(&pcapng), Ok(Compression::None));
        assert_eq!(Compression::sniff(&[]), Ok(Compression::None));
        assert_eq!(Compression::sniff(&[0x1f]), Ok(Compression::None));
        assert_eq!(Compression::sniff(&[0x1f, 0x8b, 8]), Ok(Compression::Gzip));
        assert_eq!(
            Compression::sniff(&[0x28, 0xb5, 0x2f, 0xfd, 0x24]),
            Ok(Compression::Zstd)
        );
        // Skippable frames: the frame after them decides.
        for skippable in 0x50..=0x5f {
            let skip = |payload: &[u8], then: &[u8]| {
                let mut v = vec![skippable, 0x2a, 0x4d, 0x18];
                v.extend((payload.len() as u32).to_le_bytes());
                v.extend(payload);
                v.extend(then);
                Compression::sniff(&v)
            };
            assert_eq!(
                skip(&[0; 4], &[0x28, 0xb5, 0x2f, 0xfd]),
                Ok(Compression::Zstd)
            );
            assert_eq!(
                skip(b"hello", &[0x04, 0x22, 0x4d, 0x18]),
                Ok(Compression::Lz4)
            );
            assert_eq!(skip(&[], &[0x04, 0x22, 0x4d, 0x18]), Ok(Compression::Lz4));
            // Nothing after the skippable frame in what was read.
            assert_eq!(skip(&[0; 4], &[]), Ok(Compression::Zstd));
            assert_eq!(
                Compression::sniff(&[skippable, 0x2a, 0x4d, 0x18]),
                Ok(Compression::Zstd)
            );
        }
        assert_eq!(
            Compression::sniff(&[0x60, 0x2a, 0x4d, 0x18]),
            Ok(Compression::None)
        );
        assert_eq!(
            Compression::sniff(&[0x04, 0x22, 0x4d, 0x18, 0x64]),
            Ok(Compression::Lz4)
        );
        assert_eq!(
            Compression::sniff(b"\xfd7zXZ\0\0").unwrap_err().format,
            "xz"
        );
        assert_eq!(Compression::sniff(b"BZh91AY").unwrap_err().format, "bzip2");
        assert_eq!(
            Compression::sniff(&[0x02, 0x21, 0x4c, 0x18, 0])
                .unwrap_err()
                .unpack,
            "lz4 -dc"
        );
    }
}
