use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use pcap_parser::pcapng::Block;
use pcap_parser::traits::PcapReaderIterator;
use pcap_parser::{PcapBlockOwned, PcapError};

use crate::error::{CaptureError, ErrorKind};

/// Bytes the reader buffers; also the largest record it can frame.
const BUFFER_SIZE: usize = 1 << 20;

/// Wireshark refuses records larger than this (WTAP_MAX_PACKET_SIZE_STANDARD);
/// a larger declared length means the file is corrupt, not that the packet is big.
const MAX_RECORD: u64 = 262_144;

/// One captured packet, borrowed from the reader's buffer until the next call.
#[derive(Debug, Clone, Copy)]
pub struct Frame<'a> {
    /// 1-based frame number, identical to Wireshark's `frame.number`.
    pub number: u64,
    /// Capture timestamp in nanoseconds since the Unix epoch.
    pub ts_ns: i64,
    /// Link-layer header type of the interface that captured it.
    pub link_type: u32,
    /// Length of the packet on the wire (may exceed `data.len()` when the
    /// capture's snaplen cut it).
    pub orig_len: u32,
    /// The captured bytes.
    pub data: &'a [u8],
}

/// How far the reader has got, for progress bars: bytes read from the
/// underlying file (compressed bytes for gzip input) and the total if known.
#[derive(Debug, Clone)]
pub struct Progress {
    read: Arc<AtomicU64>,
    pub total: Option<u64>,
}

impl Progress {
    pub fn bytes_read(&self) -> u64 {
        self.read.load(Ordering::Relaxed)
    }
}

/// Counts bytes as they are read from the raw input, for [`Progress`].
struct CountingReader<R> {
    inner: R,
    read: Arc<AtomicU64>,
}

impl<R: Read> Read for CountingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

#[derive(Debug, Clone, Copy)]
struct Interface {
    link_type: u32,
    /// Timestamp units per second.
    units_per_sec: u64,
    offset_sec: i64,
}

enum Format {
    Legacy {
        link_type: u32,
        nanos: bool,
        big_endian: bool,
    },
    Ng {
        interfaces: Vec<Interface>,
        big_endian: bool,
    },
}

/// Position and metadata of the frame found by `advance`, so that the
/// borrowed bytes can be handed out after the parser's borrow has ended.
struct Located {
    start: usize,
    len: usize,
    ts_ns: i64,
    link_type: u32,
    orig_len: u32,
}

/// A streaming reader over one pcap or pcapng capture.
pub struct Capture {
    name: String,
    reader: Box<dyn PcapReaderIterator + Send>,
    format: Format,
    /// Bytes of the parser's current block still to be consumed.
    pending: usize,
    frames: u64,
    last_ts_ns: i64,
    progress: Progress,
    failed: bool,
    gzip: bool,
}

impl Capture {
    /// Opens a capture file, or standard input when `path` is `-`.
    /// Gzip-compressed input is detected by its magic bytes.
    pub fn open(path: &str) -> Result<Capture, CaptureError> {
        let io_err = |e: io::Error| CaptureError {
            file: path.to_string(),
            offset: 0,
            kind: ErrorKind::Io(e.to_string()),
        };
        if path == "-" {
            return Capture::from_reader("<stdin>", Box::new(io::stdin()), None);
        }
        let file = File::open(path).map_err(io_err)?;
        let total = file.metadata().ok().map(|m| m.len());
        Capture::from_reader(path, Box::new(file), total)
    }

    /// Reads a capture from any byte source; `name` is used in errors.
    pub fn from_reader(
        name: &str,
        raw: Box<dyn Read + Send>,
        total: Option<u64>,
    ) -> Result<Capture, CaptureError> {
        let err = |offset, kind| CaptureError {
            file: name.to_string(),
            offset,
            kind,
        };
        let read = Arc::new(AtomicU64::new(0));
        let counting = CountingReader {
            inner: raw,
            read: read.clone(),
        };
        let mut buffered = BufReader::with_capacity(64 * 1024, counting);
        let head = buffered
            .fill_buf()
            .map_err(|e| err(0, ErrorKind::Io(e.to_string())))?;
        if head.is_empty() {
            return Err(err(0, ErrorKind::Empty));
        }
        let gzip = head.len() >= 2 && head[0] == 0x1f && head[1] == 0x8b;
        let mut source: Box<dyn Read + Send> = if gzip {
            Box::new(flate2::read::MultiGzDecoder::new(buffered))
        } else {
            Box::new(buffered)
        };
        // pcap-parser probes the format from its first read; make sure that
        // read holds a whole file header even from a pipe that trickles.
        let mut first = Vec::with_capacity(64);
        (&mut source)
            .take(64)
            .read_to_end(&mut first)
            .map_err(|e| err(0, ErrorKind::Io(e.to_string())))?;
        if first.is_empty() {
            return Err(err(0, ErrorKind::Empty));
        }
        let mut magic = [0u8; 4];
        for (m, b) in magic.iter_mut().zip(first.iter()) {
            *m = *b;
        }
        let known = matches!(
            u32::from_le_bytes(magic),
            0x0a0d0d0a
                | 0xa1b2c3d4
                | 0xd4c3b2a1
                | 0xa1b23c4d
                | 0x4d3cb2a1
                | 0xa1b2cd34
                | 0x34cdb2a1
        );
        if !known {
            return Err(err(0, ErrorKind::NotACapture { magic }));
        }
        if first.len() < 24 {
            return Err(err(0, ErrorKind::Truncated));
        }
        let chained: Box<dyn Read + Send> = Box::new(io::Cursor::new(first).chain(source));
        let reader = pcap_parser::create_reader(BUFFER_SIZE, chained).map_err(|e| {
            let kind = match e {
                PcapError::Incomplete(_) | PcapError::UnexpectedEof => ErrorKind::Truncated,
                PcapError::Eof => ErrorKind::Empty,
                PcapError::ReadError => ErrorKind::Io("read failed".into()),
                _ => ErrorKind::NotACapture { magic },
            };
            err(0, kind)
        })?;
        Ok(Capture {
            name: name.to_string(),
            reader,
            format: Format::Ng {
                interfaces: Vec::new(),
                big_endian: false,
            },
            pending: 0,
            frames: 0,
            last_ts_ns: 0,
            progress: Progress { read, total },
            failed: false,
            gzip,
        })
    }

    /// The name used in errors (the path, or `<stdin>`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// A handle that reports how many input bytes have been read so far.
    pub fn progress(&self) -> Progress {
        self.progress.clone()
    }

    /// Number of frames delivered so far.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// Returns the next frame, `Ok(None)` at the end of the capture, or the
    /// error that stops reading. After an error every later call returns
    /// `Ok(None)`.
    pub fn next_frame(&mut self) -> Result<Option<Frame<'_>>, CaptureError> {
        if self.failed {
            return Ok(None);
        }
        match self.advance() {
            Ok(Some(found)) => {
                self.frames += 1;
                self.last_ts_ns = found.ts_ns;
                let data = &self.reader.data()[found.start..found.start + found.len];
                Ok(Some(Frame {
                    number: self.frames,
                    ts_ns: found.ts_ns,
                    link_type: found.link_type,
                    orig_len: found.orig_len,
                    data,
                }))
            }
            Ok(None) => Ok(None),
            Err(e) => {
                self.failed = true;
                Err(e)
            }
        }
    }

    fn error(&self, kind: ErrorKind) -> CaptureError {
        let kind = match kind {
            ErrorKind::Io(_) if self.gzip => ErrorKind::Malformed(
                "the gzip stream ends early or is corrupt (offset is in the decompressed data)"
                    .into(),
            ),
            other => other,
        };
        CaptureError {
            file: self.name.clone(),
            offset: self.reader.consumed() as u64,
            kind,
        }
    }

    /// Moves the parser to the next packet record and describes it, handling
    /// file headers, interface descriptions and other blocks on the way.
    fn advance(&mut self) -> Result<Option<Located>, CaptureError> {
        if self.pending > 0 {
            // `consume` would shift the buffer's tail to the front every
            // half buffer (a memmove of up to 512 KB); refill shifts anyway.
            self.reader.consume_noshift(self.pending);
            self.pending = 0;
        }
        loop {
            let base = self.reader.data().as_ptr() as usize;
            let step = match self.reader.next() {
                Ok((size, block)) => Ok((size, classify(block, base, &mut self.format))),
                Err(PcapError::Eof) => return Ok(None),
                Err(PcapError::Incomplete(_)) => {
                    let declared = declared_length(self.reader.data(), &self.format);
                    if declared > MAX_RECORD + 64 {
                        Err(Some(ErrorKind::AbsurdLength { declared }))
                    } else {
                        Err(None)
                    }
                }
                Err(PcapError::UnexpectedEof) => Err(Some(ErrorKind::Truncated)),
                Err(PcapError::BufferTooSmall) => Err(Some(ErrorKind::AbsurdLength {
                    declared: declared_length(self.reader.data(), &self.format),
                })),
                Err(PcapError::ReadError) => Err(Some(ErrorKind::Io("read failed".into()))),
                Err(e) => Err(Some(ErrorKind::Malformed(describe(&e)))),
            };
            match step {
                Ok((size, Classified::Packet(found))) => {
                    if found.len as u64 > MAX_RECORD {
                        return Err(self.error(ErrorKind::AbsurdLength {
                            declared: found.len as u64,
                        }));
                    }
                    self.pending = size;
                    let ts_ns = found.ts_ns.unwrap_or(self.last_ts_ns);
                    return Ok(Some(Located {
                        start: found.start,
                        len: found.len,
                        ts_ns,
                        link_type: found.link_type,
                        orig_len: found.orig_len,
                    }));
                }
                Ok((size, Classified::Other)) => self.reader.consume_noshift(size),
                Ok((_, Classified::Bad(kind))) => return Err(self.error(kind)),
                Err(None) => {
                    let before = self.reader.data().len();
                    if self.reader.refill().is_err() {
                        return Err(self.error(ErrorKind::Io("read failed".into())));
                    }
                    // Nothing new and nothing left: a clean end if no partial
                    // record is pending (next() then reports Eof), else truncation.
                    if before > 0
                        && self.reader.data().len() == before
                        && self.reader.reader_exhausted()
                    {
                        return Err(self.error(ErrorKind::Truncated));
                    }
                }
                Err(Some(kind)) => return Err(self.error(kind)),
            }
        }
    }
}

struct FoundPacket {
    start: usize,
    len: usize,
    ts_ns: Option<i64>,
    link_type: u32,
    orig_len: u32,
}

enum Classified {
    Packet(FoundPacket),
    Other,
    Bad(ErrorKind),
}

fn classify(block: PcapBlockOwned<'_>, base: usize, format: &mut Format) -> Classified {
    let offset_of = |data: &[u8]| (data.as_ptr() as usize).wrapping_sub(base);
    match block {
        PcapBlockOwned::LegacyHeader(h) => {
            *format = Format::Legacy {
                link_type: h.network.0 as u32,
                nanos: h.is_nanosecond_precision(),
                big_endian: h.is_bigendian(),
            };
            Classified::Other
        }
        PcapBlockOwned::Legacy(b) => {
            let Format::Legacy {
                link_type, nanos, ..
            } = *format
            else {
                return Classified::Bad(ErrorKind::Malformed(
                    "pcap record before file header".into(),
                ));
            };
            let frac = if nanos {
                b.ts_usec as i64
            } else {
                b.ts_usec as i64 * 1000
            };
            Classified::Packet(FoundPacket {
                start: offset_of(b.data),
                len: b.data.len(),
                ts_ns: Some(b.ts_sec as i64 * 1_000_000_000 + frac),
                link_type,
                orig_len: b.origlen,
            })
        }
        PcapBlockOwned::NG(Block::SectionHeader(shb)) => {
            *format = Format::Ng {
                interfaces: Vec::new(),
                big_endian: shb.big_endian(),
            };
            Classified::Other
        }
        PcapBlockOwned::NG(Block::InterfaceDescription(idb)) => {
            if let Format::Ng { interfaces, .. } = format {
                interfaces.push(Interface {
                    link_type: idb.linktype.0 as u32,
                    units_per_sec: units_per_sec(idb.if_tsresol),
                    offset_sec: idb.if_tsoffset,
                });
            }
            Classified::Other
        }
        PcapBlockOwned::NG(Block::EnhancedPacket(epb)) => {
            let Format::Ng { interfaces, .. } = format else {
                return Classified::Bad(ErrorKind::Malformed("pcapng block in a pcap file".into()));
            };
            let Some(iface) = interfaces.get(epb.if_id as usize) else {
                return Classified::Bad(ErrorKind::Malformed(format!(
                    "packet names interface {} but only {} are described",
                    epb.if_id,
                    interfaces.len()
                )));
            };
            let units = ((epb.ts_high as u64) << 32) | epb.ts_low as u64;
            let ns = units as u128 * 1_000_000_000 / iface.units_per_sec as u128;
            let ts_ns = (ns as i64).saturating_add(iface.offset_sec.saturating_mul(1_000_000_000));
            let len = (epb.caplen as usize).min(epb.data.len());
            Classified::Packet(FoundPacket {
                start: offset_of(epb.data),
                len,
                ts_ns: Some(ts_ns),
                link_type: iface.link_type,
                orig_len: epb.origlen,
            })
        }
        PcapBlockOwned::NG(Block::SimplePacket(spb)) => {
            let Format::Ng { interfaces, .. } = format else {
                return Classified::Bad(ErrorKind::Malformed("pcapng block in a pcap file".into()));
            };
            let Some(iface) = interfaces.first() else {
                return Classified::Bad(ErrorKind::Malformed(
                    "simple packet block before any interface description".into(),
                ));
            };
            let len = (spb.origlen as usize).min(spb.data.len());
            Classified::Packet(FoundPacket {
                start: offset_of(spb.data),
                len,
                ts_ns: None,
                link_type: iface.link_type,
                orig_len: spb.origlen,
            })
        }
        PcapBlockOwned::NG(_) => Classified::Other,
    }
}

/// `if_tsresol`: high bit set means a negative power of 2, else of 10.
/// An out-of-range value falls back to the default (microseconds).
fn units_per_sec(tsresol: u8) -> u64 {
    let exp = (tsresol & 0x7f) as u32;
    if tsresol & 0x80 != 0 {
        if exp <= 63 {
            1u64 << exp
        } else {
            1_000_000
        }
    } else if exp <= 19 {
        10u64.pow(exp)
    } else {
        1_000_000
    }
}

/// The length the record at the head of `data` declares (0 if unknown):
/// caplen for pcap, the block length for pcapng.
fn declared_length(data: &[u8], format: &Format) -> u64 {
    let (at, big_endian) = match format {
        Format::Legacy { big_endian, .. } => (8, *big_endian),
        Format::Ng { big_endian, .. } => (4, *big_endian),
    };
    let Some(word) = data.get(at..at + 4) else {
        return 0;
    };
    let word: [u8; 4] = word.try_into().expect("4 bytes");
    if big_endian {
        u32::from_be_bytes(word) as u64
    } else {
        u32::from_le_bytes(word) as u64
    }
}

fn describe(e: &PcapError<&[u8]>) -> String {
    match e {
        PcapError::NomError(_, kind) | PcapError::OwnedNomError(_, kind) => {
            format!("invalid block structure ({kind:?})")
        }
        PcapError::HeaderNotRecognized => "unrecognized header".into(),
        other => format!("{other:?}"),
    }
}
