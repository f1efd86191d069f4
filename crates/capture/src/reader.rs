//! The framing of pcap and pcapng files, done here rather than by a parser
//! crate because what must be read is what Wireshark's wiretap reads: a
//! Section Header Block of any length (a probe that looks at the first
//! read only refuses every file dumpcap writes), several sections with
//! their own byte order, the obsolete Packet Block, Decryption Secrets
//! Blocks, the FCS bits of the pcap link-type field, and the pcap variants
//! that share a magic number and differ only in their record header, which
//! wiretap tells apart by reading the first records.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};

use crate::compression::{Compression, Decompressed};
use crate::error::{CaptureError, ErrorKind};
use crate::merge::Merge;
use crate::pcapng::{block, Endian};
use crate::snoop::{self, SnoopFile, SnoopRecord};

/// Wireshark refuses packets larger than this (WTAP_MAX_PACKET_SIZE_STANDARD,
/// the limit for every link type that carries TCP); a larger captured length
/// means the file is corrupt, not that the packet is big.
const MAX_RECORD: u64 = 262_144;

/// The largest pcapng block read. Packet blocks are bounded by
/// [`MAX_RECORD`]; this bounds the others, mainly Decryption Secrets Blocks
/// (16 MiB hold the TLS keys of about 100,000 sessions) and Name Resolution
/// Blocks, so that a corrupt length cannot make the reader allocate without
/// limit.
const MAX_BLOCK: u64 = 16 << 20;

/// Secrets type of a TLS key log in a Decryption Secrets Block ("TLSK").
const SECRETS_TLS_KEY_LOG: u32 = 0x544c_534b;

/// One captured packet, borrowed from the reader's buffer until the next call.
#[derive(Debug, Clone, Copy)]
pub struct Frame<'a> {
    /// 1-based frame number, identical to Wireshark's `frame.number`.
    pub number: u64,
    /// Capture timestamp in nanoseconds since the Unix epoch.
    pub ts_ns: i64,
    /// Link-layer header type of the interface that captured it (without
    /// the FCS bits a pcap header may carry in the same field).
    pub link_type: u32,
    /// Length of the packet on the wire (may exceed `data.len()` when the
    /// capture's snaplen cut it), without a frame check sequence.
    pub orig_len: u32,
    /// The captured bytes, without a frame check sequence the capture
    /// declares (pcap FCS bits, pcapng `if_fcslen`).
    pub data: &'a [u8],
    /// The record's time fraction was out of range (a pcap record header
    /// with 10^6 microseconds or more: corrupt); `ts_ns` is what Wireshark
    /// reads from it, not to be trusted.
    pub time_out_of_range: bool,
}

/// How far the reader has got, for progress bars: bytes read from the
/// underlying file (compressed bytes for gzip input) and the total if known.
#[derive(Debug, Clone)]
pub struct Progress {
    pub(crate) read: Arc<AtomicU64>,
    pub total: Option<u64>,
}

impl Progress {
    pub fn bytes_read(&self) -> u64 {
        self.read.load(Ordering::Relaxed)
    }
}

/// The decryption secrets a pcapng file carries (Decryption Secrets Blocks,
/// as `editcap --inject-secrets` writes them), collected as the reader
/// passes them. A handle, like [`Progress`], so that the secrets can be
/// looked at while a [`Frame`] borrows the capture.
#[derive(Debug, Clone, Default)]
pub struct Secrets {
    inner: Arc<Mutex<SecretStore>>,
    /// Set when lines are added, cleared when they are taken: the reader
    /// asks once per frame, and a lock per frame cost 1.5% of the pass.
    fresh: Arc<std::sync::atomic::AtomicBool>,
}

#[derive(Debug, Default)]
struct SecretStore {
    /// Every TLS key-log line read so far, in file order.
    tls_key_log: Vec<u8>,
    /// How much of `tls_key_log` `take_new_tls_key_log` has handed out.
    taken: usize,
}

impl Secrets {
    /// The TLS key log (SSLKEYLOGFILE lines) of every Decryption Secrets
    /// Block read so far.
    pub fn tls_key_log(&self) -> Vec<u8> {
        self.lock().tls_key_log.clone()
    }

    /// The TLS key-log lines read since the last call (empty if none).
    pub fn take_new_tls_key_log(&self) -> Vec<u8> {
        use std::sync::atomic::Ordering;
        // Asked once per frame: a plain load first, the locked swap only
        // when a block brought secrets.
        if !self.fresh.load(Ordering::Acquire) || !self.fresh.swap(false, Ordering::AcqRel) {
            return Vec::new();
        }
        let mut store = self.lock();
        let new = store.tls_key_log[store.taken..].to_vec();
        store.taken = store.tls_key_log.len();
        new
    }

    fn add_tls_key_log(&self, lines: &[u8]) {
        let mut store = self.lock();
        store.tls_key_log.extend_from_slice(lines);
        // Blocks need not end with a newline; keep lines of two blocks apart.
        if store.tls_key_log.last().is_some_and(|&b| b != b'\n') {
            store.tls_key_log.push(b'\n');
        }
        self.fresh.store(true, std::sync::atomic::Ordering::Release);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, SecretStore> {
        // The store is only ever appended to: a poisoned lock's data is whole.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
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

/// Bytes of input a reading thread hands over at once.
const CHUNK_SIZE: usize = 256 << 10;

/// Room kept in front of each chunk for the unread end of the one before
/// (a record cut by the chunk boundary), so that joining them copies that
/// end only, not the chunk.
const HEAD_ROOM: usize = 64 << 10;

/// Chunks read ahead and not yet taken: the reading thread stays at most
/// this far (plus the chunk it fills) ahead of the framing.
const CHUNKS_AHEAD: usize = 2;

/// A growable window on the (decompressed) input: bytes are read as the
/// framing asks for them, and the stream offset of the window's start is
/// known for error messages.
///
/// The reading itself (the kernel's copy out of the page cache, gzip's
/// inflating) runs on its own thread, a few chunks ahead: that is most of
/// a keep-alive or bulk capture's cost, and it overlaps with the
/// analysis instead of coming before it.
struct Input {
    chunks: Receiver<io::Result<Vec<u8>>>,
    /// Chunks given back to the reading thread for reuse.
    spare: SyncSender<Vec<u8>>,
    /// The current chunk (its data from `HEAD_ROOM`), with the previous
    /// chunk's unread end in front of it; its unread bytes are
    /// `buf[start..]`.
    buf: Vec<u8>,
    start: usize,
    /// Stream offset of `buf[start]`.
    offset: u64,
    eof: bool,
    /// A read error, given again to every later read that needs more bytes:
    /// a damaged gzip stream must not look like a clean end on the retry.
    failed: Option<String>,
}

impl Input {
    /// Starts the thread that reads `source` ahead.
    fn new(mut source: Box<dyn Read + Send>) -> Input {
        let (tx, chunks) = sync_channel::<io::Result<Vec<u8>>>(CHUNKS_AHEAD);
        let (spare, returned) = sync_channel::<Vec<u8>>(CHUNKS_AHEAD + 2);
        let spawned = std::thread::Builder::new()
            .name("rttdoc-read".into())
            .spawn(move || loop {
                let mut chunk = returned
                    .try_recv()
                    .unwrap_or_else(|_| Vec::with_capacity(HEAD_ROOM + CHUNK_SIZE));
                chunk.resize(HEAD_ROOM + CHUNK_SIZE, 0);
                let mut filled = HEAD_ROOM;
                let mut error = None;
                while filled < chunk.len() {
                    match source.read(&mut chunk[filled..]) {
                        Ok(0) => break,
                        Ok(k) => filled += k,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) => {
                            error = Some(e);
                            break;
                        }
                    }
                }
                let full = filled == chunk.len();
                chunk.truncate(filled);
                // What was read before an error or the end still counts.
                if filled > HEAD_ROOM && tx.send(Ok(chunk)).is_err() {
                    return; // the capture was dropped
                }
                if let Some(e) = error {
                    let _ = tx.send(Err(e));
                    return;
                }
                if !full {
                    return; // the end: the closed channel says so
                }
            });
        let chunks = match spawned {
            Ok(_) => chunks,
            Err(e) => {
                // No thread to read with: the first read reports why.
                let (tx, failed) = sync_channel(1);
                let _ = tx.send(Err(e));
                failed
            }
        };
        Input {
            chunks,
            spare,
            buf: Vec::new(),
            start: 0,
            offset: 0,
            eof: false,
            failed: None,
        }
    }

    /// Makes `n` bytes available from the current position if the input
    /// has them; returns how many are available (fewer only at its end).
    #[inline]
    fn fill(&mut self, n: usize) -> io::Result<usize> {
        while self.buf.len() - self.start < n && !self.eof {
            if let Some(msg) = &self.failed {
                return Err(io::Error::other(msg.clone()));
            }
            match self.chunks.recv() {
                Ok(Ok(chunk)) => self.join(chunk),
                Ok(Err(e)) => {
                    self.failed = Some(e.to_string());
                    return Err(e);
                }
                Err(_) => self.eof = true,
            }
        }
        Ok((self.buf.len() - self.start).min(n))
    }

    /// Continues the window with the next chunk.
    fn join(&mut self, mut chunk: Vec<u8>) {
        let rest = self.buf.len() - self.start;
        let old = if rest <= HEAD_ROOM {
            chunk[HEAD_ROOM - rest..HEAD_ROOM].copy_from_slice(&self.buf[self.start..]);
            self.start = HEAD_ROOM - rest;
            std::mem::replace(&mut self.buf, chunk)
        } else {
            // A record longer than the head room (rare): append instead.
            self.buf.copy_within(self.start.., 0);
            self.buf.truncate(rest);
            self.buf.extend_from_slice(&chunk[HEAD_ROOM..]);
            self.start = 0;
            chunk
        };
        if old.capacity() == HEAD_ROOM + CHUNK_SIZE {
            let _ = self.spare.try_send(old);
        }
    }

    fn data(&self) -> &[u8] {
        &self.buf[self.start..]
    }

    fn consume(&mut self, n: usize) {
        let n = n.min(self.buf.len() - self.start);
        self.start += n;
        self.offset += n as u64;
    }
}

/// Whether a pcap file's record header holds its two lengths in the order
/// of format 2.4 (captured, then original) or in the older order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lengths {
    InOrder,
    Swapped,
    /// Version 2.3: swapped only where the captured length would exceed
    /// the original one, as wiretap decides per record.
    SwappedIfCapturedIsLarger,
}

/// The pcap variants that wiretap tells apart by their record headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Variant {
    /// The usual 16-byte record header.
    Standard,
    /// Kuznetzov's patches (Red Hat 6.1 with the standard magic, later ones
    /// with 0xa1b2cd34): 24 bytes with interface index, protocol, type.
    Modified24,
    /// The 1999-09-15 patch (SuSE 6.3): 28 bytes.
    Modified28,
    /// Nokia IPSO: 20 bytes.
    Nokia,
}

impl Variant {
    fn record_header(self) -> usize {
        match self {
            Variant::Standard => 16,
            Variant::Modified24 => 24,
            Variant::Modified28 => 28,
            Variant::Nokia => 20,
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct PcapFile {
    endian: Endian,
    record_header: usize,
    nanos: bool,
    lengths: Lengths,
    link_type: u32,
    fcs_bytes: u32,
}

#[derive(Debug, Clone, Copy)]
struct Interface {
    link_type: u32,
    snaplen: u32,
    /// Timestamp units per second.
    units_per_sec: u64,
    /// Nanoseconds per unit, when whole (microseconds, nanoseconds, any
    /// power of ten up to a second): a multiplication per packet instead
    /// of a 128-bit division.
    ns_per_unit: Option<u64>,
    offset_sec: i64,
    fcs_bytes: u32,
}

struct Section {
    endian: Endian,
    interfaces: Vec<Interface>,
}

enum Format {
    Pcap(PcapFile),
    Ng(Section),
    Snoop(SnoopFile),
}

/// Position and metadata of the frame found by `advance`, so that the
/// borrowed bytes can be handed out after the framing's borrow has ended.
pub(crate) struct Located {
    start: usize,
    len: usize,
    pub(crate) ts_ns: i64,
    link_type: u32,
    orig_len: u32,
    time_out_of_range: bool,
}

/// What one record turned out to be.
enum Record {
    Packet(Located),
    /// A record Wireshark numbers as a frame but that holds no packet
    /// (systemd journal entries, custom blocks).
    NumberedOther,
    Other,
}

/// The file formats a [`Capture`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileFormat {
    /// libpcap's, with any of its magic numbers (microseconds,
    /// nanoseconds, either byte order, and the modified variants).
    Pcap,
    /// pcapng (RFC draft), any number of sections.
    Pcapng,
    /// snoop (RFC 1761): Solaris, Check Point `fw monitor`, Surveyor.
    Snoop,
}

/// A streaming reader over one capture file, or over several merged by
/// time ([`Capture::open_all`]).
pub struct Capture {
    source: Source,
}

enum Source {
    One(FileReader),
    Set(Merge),
}

impl Capture {
    /// Opens a capture file, or standard input when `path` is `-`.
    /// Compressed input is detected by its magic bytes ([`Compression`]).
    pub fn open(path: &str) -> Result<Capture, CaptureError> {
        let one = FileReader::open(path, Arc::default(), Secrets::default())?;
        Ok(Capture {
            source: Source::One(one),
        })
    }

    /// Opens several capture files as one, their packets merged by time
    /// as `mergecap` merges them (see [`Merge`]); one path is [`open`].
    /// A file that cannot be read, or stops being readable, is reported
    /// once the others have been read to their end.
    ///
    /// [`open`]: Capture::open
    pub fn open_all(paths: &[String]) -> Result<Capture, CaptureError> {
        match paths {
            [one] => Capture::open(one),
            _ => Ok(Capture {
                source: Source::Set(Merge::open(paths)),
            }),
        }
    }

    /// Reads a capture from any byte source; `name` is used in errors.
    /// The file header (pcap) or first Section Header Block (pcapng) is
    /// read here, so a file that is no capture fails before any frame.
    pub fn from_reader(
        name: &str,
        raw: Box<dyn Read + Send>,
        total: Option<u64>,
    ) -> Result<Capture, CaptureError> {
        let one = FileReader::from_reader(name, raw, total, Arc::default(), Secrets::default())?;
        Ok(Capture {
            source: Source::One(one),
        })
    }

    /// The name used in errors and reports (the path, or `<stdin>`; of
    /// several files, the first).
    pub fn name(&self) -> &str {
        match &self.source {
            Source::One(f) => &f.name,
            Source::Set(m) => &m.paths[0],
        }
    }

    /// The files read, in the order given (one, unless several were
    /// merged).
    pub fn files(&self) -> Vec<String> {
        match &self.source {
            Source::One(f) => vec![f.name.clone()],
            Source::Set(m) => m.paths.clone(),
        }
    }

    /// Whether several files overlapped in time so far: one had packets
    /// both before and after a packet of another (captures of two points
    /// or interfaces, not a ring's files, which follow one another).
    pub fn files_overlap(&self) -> bool {
        match &self.source {
            Source::One(_) => false,
            Source::Set(m) => m.overlap,
        }
    }

    /// Of several files merged, where the frames read so far come from
    /// (a run of one file's consecutive frames each), and whether runs
    /// past [`MAX_RUNS`](crate::MAX_RUNS) were not kept; none for one file.
    pub fn merged_runs(&self) -> (&[crate::MergedRun], bool) {
        match &self.source {
            Source::One(_) => (&[], false),
            Source::Set(m) => (&m.runs, m.runs_cut),
        }
    }

    /// A handle that reports how many input bytes have been read so far.
    pub fn progress(&self) -> Progress {
        match &self.source {
            Source::One(f) => f.progress.clone(),
            Source::Set(m) => m.progress.clone(),
        }
    }

    /// A handle on the decryption secrets read so far (pcapng Decryption
    /// Secrets Blocks); they grow as reading passes more of them.
    pub fn secrets(&self) -> Secrets {
        match &self.source {
            Source::One(f) => f.secrets.clone(),
            Source::Set(m) => m.secrets.clone(),
        }
    }

    /// The file format of a single file (as its first bytes said, under
    /// any compression); `None` for several files merged.
    pub fn format(&self) -> Option<FileFormat> {
        match &self.source {
            Source::One(f) => Some(match f.format {
                Format::Pcap(_) => FileFormat::Pcap,
                Format::Ng(_) => FileFormat::Pcapng,
                Format::Snoop(_) => FileFormat::Snoop,
            }),
            Source::Set(_) => None,
        }
    }

    /// Number of frames read so far, as Wireshark numbers them (in the
    /// merged capture, for several files).
    pub fn frames(&self) -> u64 {
        match &self.source {
            Source::One(f) => f.frames,
            Source::Set(m) => m.frames,
        }
    }

    /// Returns the next frame, `Ok(None)` at the end of the capture, or
    /// an error: reading one file stops at its first damage (every later
    /// call returns `Ok(None)`); of several, the others are read on and
    /// each damaged file's error comes once they are done, one a call.
    pub fn next_frame(&mut self) -> Result<Option<Frame<'_>>, CaptureError> {
        match &mut self.source {
            Source::One(f) => match f.next_located()? {
                Some(found) => Ok(Some(f.frame(&found, f.frames))),
                None => Ok(None),
            },
            Source::Set(m) => m.next_frame(),
        }
    }
}

/// A streaming reader over one pcap or pcapng file.
pub(crate) struct FileReader {
    name: String,
    input: Input,
    format: Format,
    /// Bytes of the current record still to be consumed.
    pending: usize,
    frames: u64,
    last_ts_ns: i64,
    progress: Progress,
    secrets: Secrets,
    failed: bool,
    compression: Compression,
}

impl FileReader {
    /// Opens a capture file, or standard input when `path` is `-`;
    /// `read` counts its bytes, `secrets` gathers its key logs.
    pub(crate) fn open(
        path: &str,
        read: Arc<AtomicU64>,
        secrets: Secrets,
    ) -> Result<FileReader, CaptureError> {
        let io_err = |e: io::Error| CaptureError {
            file: path.to_string(),
            offset: 0,
            kind: ErrorKind::Io(e.to_string()),
        };
        if path == "-" {
            return FileReader::from_reader("<stdin>", Box::new(io::stdin()), None, read, secrets);
        }
        let file = File::open(path).map_err(io_err)?;
        let total = file.metadata().ok().map(|m| m.len());
        FileReader::from_reader(path, Box::new(file), total, read, secrets)
    }

    fn from_reader(
        name: &str,
        raw: Box<dyn Read + Send>,
        total: Option<u64>,
        read: Arc<AtomicU64>,
        secrets: Secrets,
    ) -> Result<FileReader, CaptureError> {
        let err = |offset, kind| CaptureError {
            file: name.to_string(),
            offset,
            kind,
        };
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
        let compression = Compression::sniff(head).map_err(|u| err(0, ErrorKind::Unreadable(u)))?;
        let source: Box<dyn Read + Send> = match compression.decoder(buffered) {
            Ok(Decompressed::Plain(plain)) => Box::new(plain),
            Ok(decoder) => Box::new(decoder),
            Err(e) => return Err(err(0, ErrorKind::Io(e.to_string()))),
        };
        let mut capture = FileReader {
            name: name.to_string(),
            input: Input::new(source),
            format: Format::Ng(Section {
                endian: Endian { big: false },
                interfaces: Vec::new(),
            }),
            pending: 0,
            frames: 0,
            last_ts_ns: 0,
            progress: Progress { read, total },
            secrets,
            failed: false,
            compression,
        };
        capture.read_file_header()?;
        Ok(capture)
    }

    /// The next packet's place in the read buffer, valid until the next
    /// call; `Ok(None)` at the end, and after an error.
    pub(crate) fn next_located(&mut self) -> Result<Option<Located>, CaptureError> {
        if self.failed {
            return Ok(None);
        }
        match self.advance() {
            Ok(Some(found)) => {
                self.frames += 1;
                self.last_ts_ns = found.ts_ns;
                Ok(Some(found))
            }
            Ok(None) => Ok(None),
            Err(e) => {
                self.failed = true;
                Err(e)
            }
        }
    }

    /// Frames read so far, as Wireshark numbers this file's.
    pub(crate) fn frames(&self) -> u64 {
        self.frames
    }

    /// The bytes of a packet `next_located` returned last.
    pub(crate) fn frame(&self, found: &Located, number: u64) -> Frame<'_> {
        Frame {
            number,
            ts_ns: found.ts_ns,
            link_type: found.link_type,
            orig_len: found.orig_len,
            data: &self.input.buf[found.start..found.start + found.len],
            time_out_of_range: found.time_out_of_range,
        }
    }

    fn error(&self, kind: ErrorKind) -> CaptureError {
        let kind = match kind {
            ErrorKind::Io(_) if self.compression != Compression::None => {
                ErrorKind::Malformed(format!(
                    "the {} stream ends early or is corrupt (offset is in the decompressed data)",
                    self.compression.name()
                ))
            }
            other => other,
        };
        CaptureError {
            file: self.name.clone(),
            offset: self.input.offset,
            kind,
        }
    }

    #[inline]
    fn fill(&mut self, n: usize) -> Result<usize, CaptureError> {
        self.input
            .fill(n)
            .map_err(|e| self.error(ErrorKind::Io(e.to_string())))
    }

    /// Reads the pcap file header or the first pcapng Section Header Block.
    fn read_file_header(&mut self) -> Result<(), CaptureError> {
        let got = self.fill(4)?;
        let mut magic = [0u8; 4];
        magic[..got].copy_from_slice(&self.input.data()[..got]);
        if got == 0 {
            return Err(self.error(ErrorKind::Empty));
        }
        let known = KNOWN_MAGICS
            .iter()
            .any(|m| m.to_le_bytes()[..got] == magic[..got]);
        if !known {
            return Err(self.error(ErrorKind::NotACapture { magic }));
        }
        if got < 4 {
            return Err(self.error(ErrorKind::Truncated));
        }
        if &magic == b"snoo" {
            self.format = Format::Snoop(self.read_snoop_header()?);
            return Ok(());
        }
        if u32::from_le_bytes(magic) == block::SECTION_HEADER {
            return match self.read_block()? {
                Some(_) => Ok(()),
                None => Err(self.error(ErrorKind::Truncated)),
            };
        }
        let header = self.read_pcap_header(u32::from_le_bytes(magic))?;
        self.format = Format::Pcap(header);
        Ok(())
    }

    /// Parses a pcap file header the way wiretap's libpcap reader does and
    /// consumes it.
    fn read_pcap_header(&mut self, magic: u32) -> Result<PcapFile, CaptureError> {
        // (byte order, nanosecond stamps, modified magic, Ixia's 4 extra bytes)
        let (big, nanos, modified, ixia) = match magic {
            0xa1b2_c3d4 => (false, false, false, false),
            0xd4c3_b2a1 => (true, false, false, false),
            0xa1b2_3c4d => (false, true, false, false),
            0x4d3c_b2a1 => (true, true, false, false),
            0xa1b2_cd34 => (false, false, true, false),
            0x34cd_b2a1 => (true, false, true, false),
            // Ixia lcap: hardware captures have nanosecond stamps.
            0x1c00_01ac => (false, true, false, true),
            0xac01_001c => (true, true, false, true),
            0x1c00_01ab => (false, false, false, true),
            0xab01_001c => (true, false, false, true),
            _ => {
                return Err(self.error(ErrorKind::NotACapture {
                    magic: magic.to_le_bytes(),
                }))
            }
        };
        let endian = Endian { big };
        let header_len = if ixia { 28 } else { 24 };
        if self.fill(header_len)? < header_len {
            return Err(self.error(ErrorKind::Truncated));
        }
        let h = self.input.data();
        let major = endian.u16(h, 4);
        let minor = endian.u16(h, 6);
        let snaplen = endian.u32(h, 16);
        let mut network = endian.u32(h, 20);
        if major < 2 {
            return Err(self.error(ErrorKind::Malformed(format!(
                "pcap major version {major} is not supported"
            ))));
        }
        let standard_magic = !nanos && !modified && !ixia;
        // Which record header the file has: known from the magic and the
        // version, or to be found from the first records.
        let mut variant = if modified || standard_magic {
            None
        } else {
            Some(Variant::Standard)
        };
        let lengths = match (major, minor) {
            (2, m) if m < 3 => Lengths::Swapped,
            (2, 3) => Lengths::SwappedIfCapturedIsLarger,
            (543, _) => Lengths::Swapped,
            _ => Lengths::InOrder,
        };
        if lengths != Lengths::InOrder && !modified {
            variant = Some(Variant::Standard);
        }
        let mut nanos = nanos;
        // AIX wrote version 2.2 with RFC 1573 interface types for the link
        // type, and nanosecond stamps.
        if standard_magic && major == 2 && minor == 2 {
            let aix = match network {
                6 => Some(1),
                9 => Some(6),
                15 => Some(10),
                24 => Some(0),
                _ => None,
            };
            if let Some(link) = aix {
                network = link;
                nanos = true;
            }
        }
        if network & 0x03FF_0000 != 0 {
            return Err(self.error(ErrorKind::Malformed(format!(
                "pcap link-layer type 0x{network:08x} has reserved bits set"
            ))));
        }
        // The top bits: an FCS length (in 16-bit units) and whether it is given.
        let fcs_bytes = if network & 0x0400_0000 != 0 {
            (network >> 28) * 2
        } else {
            0
        };
        self.input.consume(header_len);
        let variant = match variant {
            Some(v) => v,
            None => {
                let candidates: &[Variant] = if modified {
                    &[Variant::Modified24, Variant::Modified28]
                } else {
                    &[Variant::Standard, Variant::Modified24, Variant::Nokia]
                };
                let need = 3 * (28 + MAX_RECORD as usize);
                // A read error (a damaged gzip stream) is reported when
                // reading reaches it; the trial uses the bytes before it.
                let got = self
                    .input
                    .fill(need)
                    .unwrap_or_else(|_| self.input.data().len().min(need));
                let data = &self.input.data()[..got];
                let mut best = (u32::MAX, candidates[0]);
                for &v in candidates {
                    let merit = variant_merit(data, endian, v, snaplen);
                    if merit < best.0 {
                        best = (merit, v);
                    }
                    if merit == 0 {
                        break;
                    }
                }
                best.1
            }
        };
        Ok(PcapFile {
            endian,
            record_header: variant.record_header(),
            nanos,
            lengths,
            link_type: network & 0xFFFF,
            fcs_bytes,
        })
    }

    /// Moves to the next packet record and describes it, handling section
    /// headers, interface descriptions and other blocks on the way.
    fn advance(&mut self) -> Result<Option<Located>, CaptureError> {
        loop {
            if self.pending > 0 {
                self.input.consume(self.pending);
                self.pending = 0;
            }
            let record = match self.format {
                Format::Pcap(file) => self.read_pcap_record(file)?,
                Format::Ng(_) => self.read_block()?,
                Format::Snoop(file) => self.read_snoop_record(file)?,
            };
            match record {
                None => return Ok(None),
                Some(Record::Packet(found)) => return Ok(Some(found)),
                Some(Record::NumberedOther) => self.frames += 1,
                Some(Record::Other) => {}
            }
        }
    }

    /// Frames one pcap record; `pending` is set to its size.
    fn read_pcap_record(&mut self, file: PcapFile) -> Result<Option<Record>, CaptureError> {
        let hl = file.record_header;
        let got = self.fill(hl)?;
        if got == 0 {
            return Ok(None);
        }
        if got < hl {
            return Err(self.error(ErrorKind::Truncated));
        }
        let h = self.input.data();
        let e = file.endian;
        let ts_sec = e.u32(h, 0) as i64;
        let frac = e.u32(h, 4) as i64;
        let (mut caplen, mut orig_len) = (e.u32(h, 8), e.u32(h, 12));
        let swap = match file.lengths {
            Lengths::InOrder => false,
            Lengths::Swapped => true,
            Lengths::SwappedIfCapturedIsLarger => caplen > orig_len,
        };
        if swap {
            std::mem::swap(&mut caplen, &mut orig_len);
        }
        if caplen as u64 > MAX_RECORD {
            return Err(self.error(ErrorKind::AbsurdLength {
                declared: caplen as u64,
            }));
        }
        let size = hl + caplen as usize;
        if self.fill(size)? < size {
            return Err(self.error(ErrorKind::Truncated));
        }
        self.pending = size;
        prefetch(self.input.data(), size);
        let (frac_ns, time_out_of_range) = if !file.nanos {
            microseconds_as_wireshark_reads_them(frac as u32)
        } else if frac < 1_000_000_000 {
            (frac, false)
        } else {
            // A corrupt record header: wiretap's libpcap.c keeps the
            // fraction as a 32-bit int of nanoseconds.
            (frac as u32 as i32 as i64, true)
        };
        let ts_ns = ts_sec * 1_000_000_000 + frac_ns;
        let (len, orig_len) = strip_fcs(caplen as usize, orig_len, file.fcs_bytes);
        Ok(Some(Record::Packet(Located {
            start: self.input.start + hl,
            len,
            ts_ns,
            link_type: file.link_type,
            orig_len,
            time_out_of_range,
        })))
    }

    /// Parses a snoop file header and consumes it, with a look at the
    /// first record's padding (snoop.rs).
    fn read_snoop_header(&mut self) -> Result<SnoopFile, CaptureError> {
        let need = snoop::FILE_HEADER + snoop::RECORD_HEADER;
        let got = self.fill(need)?;
        if got < snoop::FILE_HEADER {
            return Err(self.error(ErrorKind::Truncated));
        }
        let data = self.input.data();
        if data[..8] != snoop::IDENT {
            let magic = [data[0], data[1], data[2], data[3]];
            return Err(self.error(ErrorKind::NotACapture { magic }));
        }
        let first = (got == need).then(|| SnoopRecord::parse(&data[snoop::FILE_HEADER..]));
        let file = snoop::parse_header(&data[..snoop::FILE_HEADER], first)
            .map_err(|what| self.error(ErrorKind::Malformed(what)))?;
        self.input.consume(snoop::FILE_HEADER);
        Ok(file)
    }

    /// Frames one snoop record; `pending` is set to its size, padding
    /// included.
    fn read_snoop_record(&mut self, file: SnoopFile) -> Result<Option<Record>, CaptureError> {
        let hl = snoop::RECORD_HEADER;
        let got = self.fill(hl)?;
        if got == 0 {
            return Ok(None);
        }
        if got < hl {
            return Err(self.error(ErrorKind::Truncated));
        }
        let r = SnoopRecord::parse(self.input.data());
        for declared in [r.orig_len, r.caplen] {
            if declared as u64 > MAX_RECORD {
                return Err(self.error(ErrorKind::AbsurdLength {
                    declared: declared as u64,
                }));
            }
        }
        let Some(padding) = r.padding() else {
            return Err(self.error(ErrorKind::Malformed(format!(
                "a {}-byte record holds a {}-byte packet",
                r.rec_len, r.caplen
            ))));
        };
        // Padding is a few bytes (Surveyor's trailer is 20): a record
        // that declares more is corrupt, and is not buffered whole.
        if padding as u64 > MAX_RECORD {
            return Err(self.error(ErrorKind::AbsurdLength {
                declared: r.rec_len as u64,
            }));
        }
        let size = r.rec_len as usize;
        if self.fill(size)? < size {
            return Err(self.error(ErrorKind::Truncated));
        }
        self.pending = size;
        let (frac_ns, time_out_of_range) = microseconds_as_wireshark_reads_them(r.ts_usec);
        let (len, orig_len) = strip_fcs(r.caplen as usize, r.orig_len, file.fcs_bytes);
        Ok(Some(Record::Packet(Located {
            start: self.input.start + hl,
            len,
            ts_ns: r.ts_sec as i64 * 1_000_000_000 + frac_ns,
            link_type: file.link_type,
            orig_len,
            time_out_of_range,
        })))
    }

    /// Frames one pcapng block and interprets it; `pending` is set to its
    /// size. Returns `None` at a clean end of the input.
    fn read_block(&mut self) -> Result<Option<Record>, CaptureError> {
        let got = self.fill(12)?;
        if got == 0 {
            return Ok(None);
        }
        if got < 8 {
            return Err(self.error(ErrorKind::Truncated));
        }
        let d = self.input.data();
        let section_endian = match &self.format {
            Format::Ng(s) => s.endian,
            Format::Pcap(_) | Format::Snoop(_) => Endian { big: false },
        };
        let kind = section_endian.u32(d, 0);
        // A section header carries its own byte order (the byte-order mark
        // right after the length); the block type reads the same either way.
        let endian = if kind == block::SECTION_HEADER {
            if got < 12 {
                return Err(self.error(ErrorKind::Truncated));
            }
            match d[8..12] {
                [0x4d, 0x3c, 0x2b, 0x1a] => Endian { big: false },
                [0x1a, 0x2b, 0x3c, 0x4d] => Endian { big: true },
                _ => {
                    return Err(self.error(ErrorKind::Malformed(
                        "section header block with an unknown byte-order mark".into(),
                    )))
                }
            }
        } else {
            section_endian
        };
        let declared = endian.u32(d, 4) as u64;
        let total = crate::pcapng::block_length(kind, declared);
        if total < 12 || !total.is_multiple_of(4) {
            return Err(self.error(ErrorKind::Malformed(format!(
                "block of type 0x{kind:08x} declares a length of {total} bytes (at least 12, a multiple of 4)"
            ))));
        }
        if total > MAX_BLOCK {
            return Err(self.error(ErrorKind::AbsurdLength { declared: total }));
        }
        let total = total as usize;
        if self.fill(total)? < total {
            return Err(self.error(ErrorKind::Truncated));
        }
        prefetch(self.input.data(), total);
        let d = &self.input.data()[..total];
        let trailer = endian.u32(d, total - 4) as u64;
        if trailer != declared && trailer != total as u64 {
            return Err(self.error(ErrorKind::Malformed(format!(
                "block of type 0x{kind:08x} has two different lengths ({declared} and {trailer})"
            ))));
        }
        self.pending = total;
        let body_at = self.input.start + 8;
        let body = &d[8..total - 4];
        let bad = |what: String| Err(ErrorKind::Malformed(what));
        let result: Result<Record, ErrorKind> = match (kind, &mut self.format) {
            (block::SECTION_HEADER, format) => match parse_section_header(body, endian) {
                Ok(()) => {
                    // Interfaces belong to their section.
                    *format = Format::Ng(Section {
                        endian,
                        interfaces: Vec::new(),
                    });
                    Ok(Record::Other)
                }
                Err(kind) => Err(kind),
            },
            (_, Format::Pcap(_) | Format::Snoop(_)) => bad("pcapng block in a pcap file".into()),
            (block::INTERFACE_DESCRIPTION, Format::Ng(section)) => {
                match parse_interface(body, endian) {
                    Ok(iface) => {
                        section.interfaces.push(iface);
                        Ok(Record::Other)
                    }
                    Err(kind) => Err(kind),
                }
            }
            (block::ENHANCED_PACKET | block::PACKET, Format::Ng(section)) => {
                if body.len() < 20 {
                    bad(format!("packet block of {total} bytes is too short"))
                } else {
                    let (if_id, caplen, orig_len) = if kind == block::PACKET {
                        (
                            endian.u16(body, 0) as usize,
                            endian.u32(body, 12),
                            endian.u32(body, 16),
                        )
                    } else {
                        (
                            endian.u32(body, 0) as usize,
                            endian.u32(body, 12),
                            endian.u32(body, 16),
                        )
                    };
                    let units = ((endian.u32(body, 4) as u64) << 32) | endian.u32(body, 8) as u64;
                    if let Some(iface) = section.interfaces.get(if_id) {
                        if caplen as u64 > MAX_RECORD {
                            Err(ErrorKind::AbsurdLength {
                                declared: caplen as u64,
                            })
                        } else if caplen as usize > body.len() - 20 {
                            bad(format!(
                                "packet block claims {caplen} captured bytes but holds {}",
                                body.len() - 20
                            ))
                        } else {
                            let ts_ns = iface.ns(units);
                            let (len, orig_len) =
                                strip_fcs(caplen as usize, orig_len, iface.fcs_bytes);
                            Ok(Record::Packet(Located {
                                start: body_at + 20,
                                len,
                                ts_ns,
                                link_type: iface.link_type,
                                orig_len,
                                time_out_of_range: false,
                            }))
                        }
                    } else {
                        bad(format!(
                            "packet names interface {if_id} but only {} are described",
                            section.interfaces.len()
                        ))
                    }
                }
            }
            (block::SIMPLE_PACKET, Format::Ng(section)) => {
                if body.len() < 4 {
                    bad(format!("simple packet block of {total} bytes is too short"))
                } else if let Some(iface) = section.interfaces.first() {
                    let orig_len = endian.u32(body, 0);
                    // No captured length: the packet, cut at the snaplen,
                    // padded to the block.
                    let mut caplen = (orig_len as usize).min(body.len() - 4);
                    if iface.snaplen != 0 {
                        caplen = caplen.min(iface.snaplen as usize);
                    }
                    let (len, orig_len) = strip_fcs(caplen, orig_len, iface.fcs_bytes);
                    Ok(Record::Packet(Located {
                        start: body_at + 4,
                        len,
                        // No timestamp either: Wireshark shows the epoch; the
                        // previous packet's time keeps durations meaningful.
                        ts_ns: self.last_ts_ns,
                        link_type: iface.link_type,
                        orig_len,
                        time_out_of_range: false,
                    }))
                } else {
                    bad("simple packet block before any interface description".into())
                }
            }
            (block::DECRYPTION_SECRETS, Format::Ng(_)) => {
                if body.len() < 8 {
                    bad(format!(
                        "decryption secrets block of {total} bytes is too short"
                    ))
                } else {
                    let secrets_type = endian.u32(body, 0);
                    let len = endian.u32(body, 4) as usize;
                    if len > body.len() - 8 {
                        bad(format!(
                            "decryption secrets block claims {len} bytes of secrets but holds {}",
                            body.len() - 8
                        ))
                    } else {
                        if secrets_type == SECRETS_TLS_KEY_LOG {
                            self.secrets.add_tls_key_log(&body[8..8 + len]);
                        }
                        Ok(Record::Other)
                    }
                }
            }
            (block::SYSTEMD_JOURNAL | block::CUSTOM | block::CUSTOM_DO_NOT_COPY, Format::Ng(_)) => {
                Ok(Record::NumberedOther)
            }
            // Name resolution, interface statistics and unknown blocks:
            // nothing for the analysis; their length frames them.
            _ => Ok(Record::Other),
        };
        result.map(Some).map_err(|kind| {
            self.pending = 0;
            self.error(kind)
        })
    }
}

/// Every magic number a capture can start with, as read little-endian.
const KNOWN_MAGICS: &[u32] = &[
    block::SECTION_HEADER,
    u32::from_le_bytes(*b"snoo"),
    0xa1b2_c3d4,
    0xd4c3_b2a1,
    0xa1b2_3c4d,
    0x4d3c_b2a1,
    0xa1b2_cd34,
    0x34cd_b2a1,
    0x1c00_01ac,
    0xac01_001c,
    0x1c00_01ab,
    0xab01_001c,
];

/// A record's microseconds in nanoseconds, and whether they were out of
/// range (a million or more): such a corrupt header is read as wiretap
/// reads it (libpcap.c, snoop.c), the microseconds times 1000 wrapping in
/// a 32-bit int of nanoseconds, so that the frame's time is the one
/// Wireshark shows.
fn microseconds_as_wireshark_reads_them(usec: u32) -> (i64, bool) {
    if usec < 1_000_000 {
        (usec as i64 * 1000, false)
    } else {
        (usec.wrapping_mul(1000) as i32 as i64, true)
    }
}

/// Removes a trailing frame check sequence of `fcs` bytes: from the wire
/// length always, from the captured bytes where the snaplen kept them.
fn strip_fcs(caplen: usize, orig_len: u32, fcs: u32) -> (usize, u32) {
    if fcs == 0 {
        return (caplen, orig_len);
    }
    let orig_len = orig_len.saturating_sub(fcs);
    (caplen.min(orig_len as usize), orig_len)
}

/// How badly the first (up to three) records fit a pcap variant: wiretap's
/// figure of merit (libpcap_try_record), 0 when nothing looks wrong. Each
/// implausible field, and a record cut short, adds one.
fn variant_merit(data: &[u8], e: Endian, variant: Variant, snaplen: u32) -> u32 {
    let mut merit = 0;
    let mut at = 0usize;
    for _ in 0..3 {
        let rest = &data[at..];
        if rest.is_empty() {
            break;
        }
        // A header field that is not all there is a short read: one more,
        // and the trial stops.
        let has = |n: usize| rest.len() >= n;
        if !has(8) {
            return merit + 1;
        }
        if e.u32(rest, 4) >= 1_000_000 {
            merit += 1;
        }
        if !has(12) {
            return merit + 1;
        }
        let caplen = e.u32(rest, 8);
        let caplen_ok = caplen as u64 <= MAX_RECORD;
        if !caplen_ok {
            merit += 1;
        }
        if caplen > snaplen {
            merit += 1;
        }
        if !has(16) {
            return merit + 1;
        }
        let orig_len = e.u32(rest, 12);
        if orig_len > 128 << 20 {
            merit += 1;
        }
        if caplen > orig_len {
            merit += 1;
        }
        match variant {
            Variant::Standard => {}
            Variant::Modified24 | Variant::Modified28 => {
                if !has(20) {
                    return merit + 1;
                }
                if e.u32(rest, 16) > 10_000 {
                    merit += 1;
                }
                if !has(22) {
                    return merit + 1;
                }
                let protocol = e.u16(rest, 20);
                let plausible = protocol >= 0x0600
                    || matches!(
                        protocol,
                        0x0060 | 0x0200 | 0x0400 | 0x0000 | 0x0001..=0x0017
                    );
                if !plausible {
                    merit += 1;
                }
                if !has(23) {
                    return merit + 1;
                }
                if rest[22] > 4 {
                    merit += 1;
                }
                if !has(variant.record_header()) {
                    return merit + 1;
                }
            }
            Variant::Nokia => {
                if !has(20) {
                    return merit + 1;
                }
                // Values seen there have the form 0xXfbfYZ0W; Wireshark's
                // own Nokia writer (editcap -F nokiapcap) leaves it zero.
                let s = e.u32(rest, 16);
                let fits = s == 0
                    || s & 0x0FFF_00F0 == 0x0fbf_0000
                        && matches!(s & 0xF000_0000, 0x9000_0000 | 0xb000_0000)
                        && matches!(s & 0x0000_F000, 0x0000_b000 | 0x0000_d000)
                        && matches!(s & 0x0000_0F00, 0x0000_0600 | 0x0000_0900)
                        && matches!(s & 0x0000_000F, 1 | 2);
                if !fits {
                    merit += 1;
                }
            }
        }
        if !caplen_ok {
            break;
        }
        let size = variant.record_header() + caplen as usize;
        if rest.len() < size {
            return merit + 1;
        }
        at += size;
    }
    merit
}

/// The options of a block body: (code, value) pairs until the end-of-options
/// option or the end of the body; an option that overruns the body is an
/// error, as in wiretap.
fn options(mut body: &[u8], e: Endian) -> Result<Vec<(u16, &[u8])>, ErrorKind> {
    let mut found = Vec::new();
    while body.len() >= 4 {
        let code = e.u16(body, 0);
        let len = e.u16(body, 2) as usize;
        if code == 0 {
            break;
        }
        let padded = len.div_ceil(4) * 4;
        if 4 + len > body.len() {
            return Err(ErrorKind::Malformed(format!(
                "option {code} declares {len} bytes but only {} remain in its block",
                body.len() - 4
            )));
        }
        found.push((code, &body[4..4 + len]));
        body = &body[(4 + padded).min(body.len())..];
    }
    Ok(found)
}

fn parse_section_header(body: &[u8], e: Endian) -> Result<(), ErrorKind> {
    if body.len() < 16 {
        return Err(ErrorKind::Malformed(format!(
            "section header block of {} bytes is too short",
            body.len() + 12
        )));
    }
    let major = e.u16(body, 4);
    if major != 1 {
        return Err(ErrorKind::Malformed(format!(
            "pcapng major version {major} is not supported"
        )));
    }
    // shb_hardware, shb_os, shb_userappl, comments: nothing to use, but a
    // malformed option list is a malformed file.
    options(&body[16..], e).map(|_| ())
}

fn parse_interface(body: &[u8], e: Endian) -> Result<Interface, ErrorKind> {
    if body.len() < 8 {
        return Err(ErrorKind::Malformed(format!(
            "interface description block of {} bytes is too short",
            body.len() + 12
        )));
    }
    let mut iface = Interface {
        link_type: e.u16(body, 0) as u32,
        snaplen: e.u32(body, 4),
        units_per_sec: 1_000_000,
        ns_per_unit: None,
        offset_sec: 0,
        fcs_bytes: 0,
    };
    for (code, value) in options(&body[8..], e)? {
        match (code, value.len()) {
            // if_tsresol
            (9, 1) => iface.units_per_sec = units_per_sec(value[0]),
            // if_fcslen, in bits
            (13, 1) => iface.fcs_bytes = value[0] as u32 / 8,
            // if_tsoffset: seconds added to every timestamp
            (14, 8) => iface.offset_sec = e.u64(value, 0) as i64,
            _ => {}
        }
    }
    iface.ns_per_unit =
        (1_000_000_000 % iface.units_per_sec == 0).then(|| 1_000_000_000 / iface.units_per_sec);
    Ok(iface)
}

impl Interface {
    /// A packet's timestamp in nanoseconds from its units.
    fn ns(&self, units: u64) -> i64 {
        let ns = match self.ns_per_unit.and_then(|n| units.checked_mul(n)) {
            Some(ns) => ns as u128,
            None => units as u128 * 1_000_000_000 / self.units_per_sec as u128,
        };
        i64::try_from(ns)
            .unwrap_or(i64::MAX)
            .saturating_add(self.offset_sec.saturating_mul(1_000_000_000))
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

/// Asks the CPU to bring the next record's header (at `at` in `data`,
/// perhaps beyond it: a prefetch never faults) into cache while this
/// record is decoded: each record's first byte is otherwise a miss the
/// tracking thread waits on, the reading thread having written it on
/// another core (the keep-alive corpus: the reader's share of the
/// tracking thread's samples 10% -> 5%, its CPU time about 5% less).
#[inline(always)]
fn prefetch(data: &[u8], at: usize) {
    // SAFETY: SSE is in every x86_64 CPU, and a prefetch only hints: it
    // reads nothing the program sees and never faults, whatever the
    // address.
    #[cfg(target_arch = "x86_64")]
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
            data.as_ptr().wrapping_add(at) as *const i8,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open(bytes: Vec<u8>) -> Result<Capture, CaptureError> {
        Capture::from_reader("t", Box::new(io::Cursor::new(bytes)), None)
    }

    fn all(c: &mut Capture) -> Vec<(u64, i64, u32, Vec<u8>)> {
        let mut out = Vec::new();
        while let Some(f) = c.next_frame().unwrap() {
            out.push((f.number, f.ts_ns, f.orig_len, f.data.to_vec()));
        }
        out
    }

    /// A pcapng block in either byte order.
    fn block(big: bool, kind: u32, body: &[u8]) -> Vec<u8> {
        let mut body = body.to_vec();
        body.resize(body.len().div_ceil(4) * 4, 0);
        let n = (12 + body.len()) as u32;
        let w = |v: u32| {
            if big {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            }
        };
        let mut out = w(kind).to_vec();
        out.extend(w(n));
        out.extend(body);
        out.extend(w(n));
        out
    }

    fn shb(big: bool, options: &[u8]) -> Vec<u8> {
        let mut body = if big {
            [0x1a2b3c4du32.to_be_bytes(), [0, 1, 0, 0]].concat()
        } else {
            [0x1a2b3c4du32.to_le_bytes(), [1, 0, 0, 0]].concat()
        };
        body.extend([0xff; 8]);
        body.extend(options);
        block(big, block::SECTION_HEADER, &body)
    }

    #[test]
    fn a_section_header_longer_than_any_first_read_is_read_whole() {
        // 3000 bytes of shb_userappl: longer than any fixed-size probe.
        let mut opt = 4u16.to_le_bytes().to_vec();
        opt.extend(3000u16.to_le_bytes());
        opt.extend([b'x'; 3000]);
        let mut f = shb(false, &opt);
        f.extend(block(false, 1, &[1, 0, 0, 0, 0, 0, 0, 0]));
        let mut epb = vec![0u8; 20];
        epb[12] = 3;
        epb[16] = 3;
        epb.extend([7, 8, 9]);
        f.extend(block(false, 6, &epb));
        let mut c = open(f).unwrap();
        let frames = all(&mut c);
        assert_eq!(frames.len(), 1);
        assert_eq!(frames[0].3, vec![7, 8, 9]);
    }

    #[test]
    fn the_fcs_bits_of_the_pcap_link_type_strip_four_bytes() {
        let mut f = 0xa1b2c3d4u32.to_le_bytes().to_vec();
        f.extend([2, 0, 4, 0]);
        f.extend([0; 8]);
        f.extend(65535u32.to_le_bytes());
        // FCS present, 2 units of 16 bits, Ethernet
        f.extend((0x2400_0000u32 | 1).to_le_bytes());
        for v in [1u32, 0, 10, 10] {
            f.extend(v.to_le_bytes());
        }
        f.extend(0..10u8);
        let mut c = open(f).unwrap();
        let frames = all(&mut c);
        assert_eq!(frames[0].2, 6);
        assert_eq!(frames[0].3, (0..6u8).collect::<Vec<_>>());
    }

    /// A pcap record whose fraction is 10^6 microseconds (10^9
    /// nanoseconds) or more has a corrupt header: its time is read as
    /// Wireshark reads it (wiretap keeps the fraction as a 32-bit int of
    /// nanoseconds: tcpflow's bug8.pcap, 8,915,240 us, shows at
    /// .325305408 s), and the frame says its time is out of range.
    #[test]
    fn a_time_fraction_out_of_range_is_read_as_wireshark_reads_it() {
        for (magic, frac, expected_ns) in [
            (0xa1b2c3d4u32, 8_915_240u32, 325_305_408i64),
            (0xa1b2c3d4, 999_999, 999_999_000),
            // 3,000,000 us: 3e9 ns wraps to a negative int.
            (0xa1b2c3d4, 3_000_000, 3_000_000_000u32 as i32 as i64),
            (0xa1b23c4d, 1_500_000_000, 1_500_000_000),
            (0xa1b23c4d, 999_999_999, 999_999_999),
        ] {
            let mut f = magic.to_le_bytes().to_vec();
            f.extend([2, 0, 4, 0]);
            f.extend([0; 8]);
            f.extend(65535u32.to_le_bytes());
            f.extend(1u32.to_le_bytes());
            for v in [100u32, frac, 4, 4] {
                f.extend(v.to_le_bytes());
            }
            f.extend([1, 2, 3, 4]);
            let mut c = open(f).unwrap();
            let frame = c.next_frame().unwrap().unwrap();
            assert_eq!(frame.ts_ns, 100_000_000_000 + expected_ns, "{frac}");
            let units = if magic == 0xa1b2c3d4 {
                1_000_000
            } else {
                1_000_000_000
            };
            assert_eq!(frame.time_out_of_range, frac >= units, "{frac}");
        }
    }

    /// The multiplication is the division's answer wherever it is taken,
    /// and the division answers where it is not (or would overflow).
    #[test]
    fn timestamps_in_any_resolution_are_the_exact_nanoseconds() {
        for tsresol in [0, 1, 3, 6, 9, 12, 19, 0x80, 0x80 | 10, 0x80 | 20, 0x80 | 63] {
            let body = [1, 0, 0, 0, 0, 0, 0, 0, 9, 0, 1, 0, tsresol, 0, 0, 0];
            let mut iface = parse_interface(&body, Endian { big: false }).expect("valid");
            assert_eq!(iface.units_per_sec, units_per_sec(tsresol));
            for offset_sec in [0, -3, 1_700_000_000] {
                iface.offset_sec = offset_sec;
                for units in [0, 1, 999, 1_700_000_000_123_456, u64::MAX / 7, u64::MAX] {
                    let exact = units as u128 * 1_000_000_000 / iface.units_per_sec as u128;
                    let expected = i64::try_from(exact)
                        .unwrap_or(i64::MAX)
                        .saturating_add(offset_sec * 1_000_000_000);
                    assert_eq!(iface.ns(units), expected, "{tsresol:#x} {units}");
                }
            }
        }
    }

    #[test]
    fn if_tsresol_in_powers_of_two_and_ten() {
        assert_eq!(units_per_sec(6), 1_000_000);
        assert_eq!(units_per_sec(9), 1_000_000_000);
        assert_eq!(units_per_sec(0x80 | 20), 1 << 20);
    }

    #[test]
    fn damage_never_panics_on_any_prefix_of_a_pcapng_file() {
        let mut f = shb(true, &[]);
        let mut idb = vec![0, 1, 0, 0, 0, 0, 0, 0];
        idb.extend([0, 9, 0, 1, 9, 0, 0, 0]);
        f.extend(block(true, 1, &idb));
        let mut epb = vec![0u8; 20];
        epb[15] = 2;
        epb[19] = 2;
        epb.extend([1, 2]);
        f.extend(block(true, 6, &epb));
        for cut in 0..f.len() {
            if let Ok(mut c) = open(f[..cut].to_vec()) {
                while let Ok(Some(_)) = c.next_frame() {}
            }
        }
        let mut c = open(f).unwrap();
        assert_eq!(all(&mut c).len(), 1);
    }
}
