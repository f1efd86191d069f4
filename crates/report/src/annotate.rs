//! `--annotate out.pcapng`: the input capture written back as pcapng with
//! a packet comment (`opt_comment` on the Enhanced Packet Block) on every
//! evidence frame of every finding, so that Wireshark's
//! `frame.comment contains "rttdoc"` lists them and Expert Info shows them.
//!
//! Nothing else changes: a pcapng input is copied block by block (its
//! sections, interfaces, name resolution, secrets and existing comments as
//! they were; only the commented packet blocks are re-encoded, in their
//! section's byte order, and the section length becomes "unknown" since
//! the blocks grew); a pcap input becomes one section with one interface
//! of the file's link type, snap length and timestamp resolution
//! (microseconds or nanoseconds, as the magic said), so every timestamp
//! keeps its exact value. Frames are counted as Wireshark counts them
//! (and as rttdoc-capture numbers them).

use std::collections::BTreeMap;
use std::fmt;
use std::io::{self, BufRead, BufReader, Read, Write};

use rttdoc_capture::pcapng::{block, block_length, Endian};
use rttdoc_capture::{Compression, ErrorKind};
use rttdoc_model::{ConnectionReport, CostRule, Detail, Finding};

use crate::fmt_ms;

/// The comments to write, by frame number.
#[derive(Debug, Default, Clone)]
pub struct Annotations {
    comments: BTreeMap<u64, Vec<String>>,
}

impl Annotations {
    /// Nothing to write yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// One comment per evidence frame of each of the connection's findings.
    pub fn add_connection(&mut self, c: &ConnectionReport) {
        for x in &c.findings {
            let mut frames = x.frames.clone();
            frames.sort_unstable();
            frames.dedup();
            for f in frames {
                self.add(f, comment(c.stream, x, f));
            }
        }
    }

    /// A QUIC connection's findings, one comment per evidence frame.
    pub fn add_quic(&mut self, c: &rttdoc_model::QuicConnectionReport) {
        for x in &c.findings {
            let mut frames = x.frames.clone();
            frames.sort_unstable();
            frames.dedup();
            for f in frames {
                self.add(f, comment(c.number, x, f));
            }
        }
    }

    /// One comment on a frame (after those it has).
    pub fn add(&mut self, frame: u64, comment: String) {
        self.comments.entry(frame).or_default().push(comment);
    }

    /// The commented frames, in order.
    pub fn frames(&self) -> impl Iterator<Item = u64> + '_ {
        self.comments.keys().copied()
    }

    /// The comments of one frame.
    pub fn comments(&self, frame: u64) -> &[String] {
        self.comments.get(&frame).map_or(&[], |v| v.as_slice())
    }

    /// Frames with at least one comment.
    pub fn len(&self) -> usize {
        self.comments.len()
    }

    /// No frame has a comment.
    pub fn is_empty(&self) -> bool {
        self.comments.is_empty()
    }
}

/// What the frame is to the finding: the held segment, the packet that
/// released it, where the wait began; the finding's cost and short fix.
/// `rttdoc: nagle_hold stream 0: held 36.1 ms, released by frame 11;
/// fix: TCP_NODELAY ...`
pub fn comment(stream: u64, x: &Finding, frame: u64) -> String {
    let mut roles = Vec::new();
    for w in &x.waits {
        if w.to_frame == frame {
            roles.push(match w.release_frame {
                Some(r) => format!("held {}, released by frame {r}", fmt_ms(w.ms)),
                None => format!("waited {}", fmt_ms(w.ms)),
            });
        }
        if w.release_frame == Some(frame) {
            roles.push(format!(
                "released frame {} after {}",
                w.to_frame,
                fmt_ms(w.ms)
            ));
        }
        if w.from_frame == frame && w.to_frame != frame {
            roles.push(format!(
                "wait of {} until frame {} begins",
                fmt_ms(w.ms),
                w.to_frame
            ));
        }
    }
    if let Detail::Nagle { armed_frame, .. } = x.detail {
        if armed_frame == frame {
            roles.push("the small segment whose ACK Nagle waited for".to_string());
        }
    }
    if roles.is_empty() {
        roles.push(match &x.detail {
            // A summary: what it sums up, and its causes.
            Detail::TlsExtraRtt {
                rtts,
                ideal_rtts,
                causes,
                ..
            } => {
                let causes: Vec<&str> = causes.iter().map(|(k, _)| k.name()).collect();
                format!(
                    "TLS handshake {rtts:.1} RTT, ideal {ideal_rtts:.0}{}",
                    if causes.is_empty() {
                        String::new()
                    } else {
                        format!(", caused by {}", causes.join(", "))
                    }
                )
            }
            _ if x.cost_ms != 0.0 => format!("evidence, cost {}", fmt_ms(x.cost_ms)),
            _ => "evidence".to_string(),
        });
    }
    roles.dedup();
    let mut s = format!(
        "rttdoc: {} {} {}: {}",
        x.kind.name(),
        if x.kind.is_quic() {
            "QUIC connection"
        } else {
            "stream"
        },
        x.stream,
        roles.join("; ")
    );
    debug_assert_eq!(x.stream, stream);
    let fix = x.kind.fix();
    // "-": nothing to fix; a summary's fix is its causes' (named above).
    if fix != "-" && x.kind.cost_rule() != CostRule::Summary {
        s.push_str("; fix: ");
        s.push_str(fix);
    }
    s
}

/// What [`annotate`] wrote.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct AnnotateStats {
    /// Frames copied.
    pub frames: u64,
    /// Frames that got a comment.
    pub commented: u64,
    /// Evidence frames that are pcapng Simple Packet Blocks, which cannot
    /// carry options (left as they were).
    pub uncommentable: u64,
}

/// A capture [`annotate`] could not copy, with the input offset.
#[derive(Debug)]
pub struct AnnotateError {
    /// Byte offset in the (decompressed) input.
    pub offset: u64,
    /// What was wrong.
    pub message: String,
}

impl fmt::Display for AnnotateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at byte {}: {}", self.offset, self.message)
    }
}

impl std::error::Error for AnnotateError {}

impl From<AnnotateError> for io::Error {
    fn from(e: AnnotateError) -> io::Error {
        io::Error::new(io::ErrorKind::InvalidData, e.to_string())
    }
}

const BYTE_ORDER_MAGIC: u32 = 0x1A2B_3C4D;
const OPT_END: u16 = 0;
const OPT_COMMENT: u16 = 1;
const SHB_USERAPPL: u16 = 4;
const IF_TSRESOL: u16 = 9;
const IF_FCSLEN: u16 = 13;
/// Largest block copied (the capture reader's bound too).
const MAX_BLOCK: u32 = 16 << 20;

fn pad4(n: usize) -> usize {
    (n + 3) & !3
}

/// Appends one option (code, length, value padded to 32 bits).
fn put_option(e: Endian, out: &mut Vec<u8>, code: u16, value: &[u8]) {
    e.put16(out, code);
    e.put16(out, value.len() as u16);
    out.extend_from_slice(value);
    out.resize(out.len() + pad4(value.len()) - value.len(), 0);
}

/// Comments as options: each at most 65535 bytes (the option length
/// field), cut at a character boundary.
fn put_comments(e: Endian, out: &mut Vec<u8>, comments: &[String]) {
    for c in comments {
        let mut end = c.len().min(u16::MAX as usize);
        while !c.is_char_boundary(end) {
            end -= 1;
        }
        put_option(e, out, OPT_COMMENT, &c.as_bytes()[..end]);
    }
}

/// Wraps a block body (everything between the length fields) as a block.
fn put_block(e: Endian, out: &mut Vec<u8>, kind: u32, body: &[u8]) {
    let total = body.len() as u32 + 12;
    e.put32(out, kind);
    e.put32(out, total);
    out.extend_from_slice(body);
    e.put32(out, total);
}

struct Input<R> {
    inner: R,
    offset: u64,
}

impl<R: Read> Input<R> {
    /// Fills `buf`; Ok(false) on a clean end before its first byte.
    fn fill(&mut self, buf: &mut [u8]) -> Result<bool, AnnotateError> {
        let mut got = 0;
        while got < buf.len() {
            match self.inner.read(&mut buf[got..]) {
                Ok(0) if got == 0 => return Ok(false),
                Ok(0) => {
                    return Err(self.error(format!(
                        "the capture ends inside a block ({got} of {} bytes)",
                        buf.len()
                    )))
                }
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.error(format!("read error: {e}"))),
            }
        }
        self.offset += buf.len() as u64;
        Ok(true)
    }

    fn error(&self, message: String) -> AnnotateError {
        AnnotateError {
            offset: self.offset,
            message,
        }
    }
}

fn write_err(e: io::Error) -> AnnotateError {
    AnnotateError {
        offset: 0,
        message: format!("writing the annotated capture: {e}"),
    }
}

/// Copies the capture in `input` (pcap or pcapng, compressed or not)
/// to `out` as pcapng, with `notes`' comments on their frames.
pub fn annotate(
    input: impl Read,
    out: impl Write,
    notes: &Annotations,
) -> Result<AnnotateStats, AnnotateError> {
    let mut buffered = BufReader::with_capacity(64 * 1024, input);
    let head = buffered.fill_buf().map_err(|e| AnnotateError {
        offset: 0,
        message: format!("read error: {e}"),
    })?;
    let compression = Compression::sniff(head).map_err(|u| AnnotateError {
        offset: 0,
        message: ErrorKind::Unreadable(u).to_string(),
    })?;
    let source = compression.decoder(buffered).map_err(|e| AnnotateError {
        offset: 0,
        message: format!("read error: {e}"),
    })?;
    let mut input = Input {
        inner: source,
        offset: 0,
    };
    let mut out = io::BufWriter::with_capacity(64 * 1024, out);
    let mut magic = [0u8; 4];
    if !input.fill(&mut magic)? {
        return Err(input.error("the capture is empty".into()));
    }
    let stats = match u32::from_le_bytes(magic) {
        block::SECTION_HEADER => copy_pcapng(&mut input, magic, &mut out, notes)?,
        m => copy_pcap(&mut input, m, &mut out, notes)?,
    };
    out.flush().map_err(write_err)?;
    Ok(stats)
}

fn copy_pcapng<R: Read>(
    input: &mut Input<R>,
    first: [u8; 4],
    out: &mut impl Write,
    notes: &Annotations,
) -> Result<AnnotateStats, AnnotateError> {
    let mut stats = AnnotateStats::default();
    let mut e = Endian { big: false };
    let mut head = [0u8; 8];
    head[..4].copy_from_slice(&first);
    let mut have_type = true;
    let mut body = Vec::new();
    let mut block_out = Vec::new();
    loop {
        let at = input.offset - if have_type { 4 } else { 0 };
        if have_type {
            let mut len = [0u8; 4];
            if !input.fill(&mut len)? {
                return Err(input.error("the capture ends inside a block header".into()));
            }
            head[4..].copy_from_slice(&len);
        } else if !input.fill(&mut head)? {
            break;
        }
        have_type = false;
        let kind_le = u32::from_le_bytes([head[0], head[1], head[2], head[3]]);
        if kind_le == block::SECTION_HEADER {
            // The byte-order magic that follows says how to read this
            // section, its length field included.
            let mut bom = [0u8; 4];
            if !input.fill(&mut bom)? {
                return Err(input.error("the capture ends inside a section header".into()));
            }
            e = match u32::from_le_bytes(bom) {
                BYTE_ORDER_MAGIC => Endian { big: false },
                m if m.swap_bytes() == BYTE_ORDER_MAGIC => Endian { big: true },
                m => {
                    return Err(AnnotateError {
                        offset: at + 8,
                        message: format!("section header with byte-order magic 0x{m:08x}"),
                    })
                }
            };
            let total = e.u32(&head, 4);
            if !(28..=MAX_BLOCK).contains(&total) || !total.is_multiple_of(4) {
                return Err(AnnotateError {
                    offset: at,
                    message: format!("section header of {total} bytes"),
                });
            }
            body.resize(total as usize - 12, 0);
            input.fill(&mut body)?;
            // Commented blocks grow: the section's length is no longer
            // known (-1, as the spec allows).
            body[4..12].fill(0xff);
            block_out.clear();
            block_out.extend_from_slice(&head);
            block_out.extend_from_slice(&bom);
            block_out.extend_from_slice(&body);
            out.write_all(&block_out).map_err(write_err)?;
            continue;
        }
        let kind = e.u32(&head, 0);
        let declared = e.u32(&head, 4);
        let total = block_length(kind, declared.into());
        if !(12..=MAX_BLOCK.into()).contains(&total) || !total.is_multiple_of(4) {
            return Err(AnnotateError {
                offset: at,
                message: format!("block of type 0x{kind:x} with length {total}"),
            });
        }
        body.resize(total as usize - 8, 0);
        input.fill(&mut body)?;
        if total != u64::from(declared) {
            // A packet block whose length left its padding out is copied
            // with the padded length it has, in both length fields (at
            // most MAX_BLOCK, checked above).
            let mut length = Vec::with_capacity(4);
            e.put32(&mut length, total as u32);
            head[4..8].copy_from_slice(&length);
            let trailer = body.len() - 4;
            body[trailer..].copy_from_slice(&length);
        }
        let numbered = matches!(
            kind,
            block::ENHANCED_PACKET
                | block::PACKET
                | block::SIMPLE_PACKET
                | block::SYSTEMD_JOURNAL
                | block::CUSTOM
                | block::CUSTOM_DO_NOT_COPY
        );
        if numbered {
            stats.frames += 1;
        }
        let comments = if numbered {
            notes.comments(stats.frames)
        } else {
            &[]
        };
        let commentable = matches!(kind, block::ENHANCED_PACKET | block::PACKET);
        if comments.is_empty() || !commentable {
            if !comments.is_empty() {
                stats.uncommentable += 1;
            }
            out.write_all(&head).map_err(write_err)?;
            out.write_all(&body).map_err(write_err)?;
            continue;
        }
        // Enhanced Packet Block and the obsolete Packet Block share the
        // layout this needs: 20 bytes of fields, the captured length at
        // offset 12, the data, then options.
        let fields = &body[..body.len() - 4];
        if fields.len() < 20 {
            return Err(AnnotateError {
                offset: at,
                message: format!("packet block of {total} bytes"),
            });
        }
        let caplen = e.u32(fields, 12) as usize;
        let data_end = 20 + pad4(caplen);
        if data_end > fields.len() {
            return Err(AnnotateError {
                offset: at,
                message: format!("packet block's captured length {caplen} exceeds the block"),
            });
        }
        block_out.clear();
        block_out.extend_from_slice(&fields[..data_end]);
        // The options already there (their comments included), then ours.
        let mut opts = &fields[data_end..];
        while opts.len() >= 4 {
            let code = e.u16(opts, 0);
            let len = e.u16(opts, 2) as usize;
            if code == OPT_END || 4 + pad4(len) > opts.len() {
                break;
            }
            block_out.extend_from_slice(&opts[..4 + pad4(len)]);
            opts = &opts[4 + pad4(len)..];
        }
        put_comments(e, &mut block_out, comments);
        put_option(e, &mut block_out, OPT_END, &[]);
        let mut whole = Vec::with_capacity(block_out.len() + 12);
        put_block(e, &mut whole, kind, &block_out);
        out.write_all(&whole).map_err(write_err)?;
        stats.commented += 1;
    }
    Ok(stats)
}

fn copy_pcap<R: Read>(
    input: &mut Input<R>,
    magic: u32,
    out: &mut impl Write,
    notes: &Annotations,
) -> Result<AnnotateStats, AnnotateError> {
    // Only the two standard magics: the modified (Kuznetsov) and Nokia
    // variants carry record fields pcapng has no place for.
    let (e, nanos) = match magic {
        0xa1b2_c3d4 => (Endian { big: false }, false),
        0xd4c3_b2a1 => (Endian { big: true }, false),
        0xa1b2_3c4d => (Endian { big: false }, true),
        0x4d3c_b2a1 => (Endian { big: true }, true),
        m => {
            return Err(input.error(format!(
                "not a capture rttdoc can annotate (magic 0x{m:08x}); \
                 convert it first: editcap -F pcapng IN OUT"
            )))
        }
    };
    let mut header = [0u8; 20];
    if !input.fill(&mut header)? {
        return Err(input.error("the capture ends inside its file header".into()));
    }
    let snaplen = e.u32(&header, 12);
    let network = e.u32(&header, 16);
    let le = Endian { big: false };
    let mut buf = section_header();
    // One interface: the file's link type (low 16 bits), snap length,
    // timestamp resolution, and the FCS length the upper bits may give.
    let mut idb = Vec::new();
    le.put16(&mut idb, (network & 0xffff) as u16);
    le.put16(&mut idb, 0);
    le.put32(&mut idb, snaplen);
    put_option(le, &mut idb, IF_TSRESOL, &[if nanos { 9 } else { 6 }]);
    if network & 0x0400_0000 != 0 {
        put_option(le, &mut idb, IF_FCSLEN, &[((network >> 28) & 0xf) as u8]);
    }
    put_option(le, &mut idb, OPT_END, &[]);
    put_block(le, &mut buf, block::INTERFACE_DESCRIPTION, &idb);
    out.write_all(&buf).map_err(write_err)?;

    let units: u64 = if nanos { 1_000_000_000 } else { 1_000_000 };
    let mut stats = AnnotateStats::default();
    let mut record = [0u8; 16];
    let mut data = Vec::new();
    loop {
        let at = input.offset;
        if !input.fill(&mut record)? {
            break;
        }
        let (sec, frac) = (e.u32(&record, 0) as u64, e.u32(&record, 4) as u64);
        let (caplen, orig) = (e.u32(&record, 8), e.u32(&record, 12));
        if caplen > MAX_BLOCK {
            return Err(AnnotateError {
                offset: at,
                message: format!("record of {caplen} bytes"),
            });
        }
        data.resize(caplen as usize, 0);
        input.fill(&mut data)?;
        stats.frames += 1;
        let packet = Packet {
            interface: 0,
            ts: sec * units + frac,
            orig_len: orig,
            data: &data,
        };
        packet.write(out, &mut buf, notes.comments(stats.frames), &mut stats)?;
    }
    Ok(stats)
}

/// A little-endian Section Header Block of unknown length that says who
/// wrote it.
fn section_header() -> Vec<u8> {
    let le = Endian { big: false };
    let mut shb = Vec::new();
    le.put32(&mut shb, BYTE_ORDER_MAGIC);
    le.put16(&mut shb, 1);
    le.put16(&mut shb, 0);
    shb.extend_from_slice(&[0xff; 8]);
    put_option(
        le,
        &mut shb,
        SHB_USERAPPL,
        concat!("rttdoc ", env!("CARGO_PKG_VERSION"), " --annotate").as_bytes(),
    );
    put_option(le, &mut shb, OPT_END, &[]);
    let mut buf = Vec::new();
    put_block(le, &mut buf, block::SECTION_HEADER, &shb);
    buf
}

/// One packet written as a little-endian Enhanced Packet Block.
struct Packet<'a> {
    interface: u32,
    /// In the interface's timestamp units.
    ts: u64,
    orig_len: u32,
    data: &'a [u8],
}

impl Packet<'_> {
    /// Writes the block with `comments` (counted in `stats` when there
    /// are any); `buf` is scratch space.
    fn write(
        &self,
        out: &mut impl Write,
        buf: &mut Vec<u8>,
        comments: &[String],
        stats: &mut AnnotateStats,
    ) -> Result<(), AnnotateError> {
        let le = Endian { big: false };
        buf.clear();
        le.put32(buf, self.interface);
        le.put32(buf, (self.ts >> 32) as u32);
        le.put32(buf, self.ts as u32);
        le.put32(buf, self.data.len() as u32);
        le.put32(buf, self.orig_len);
        buf.extend_from_slice(self.data);
        buf.resize(buf.len() + pad4(self.data.len()) - self.data.len(), 0);
        if !comments.is_empty() {
            put_comments(le, buf, comments);
            put_option(le, buf, OPT_END, &[]);
            stats.commented += 1;
        }
        let mut whole = Vec::with_capacity(buf.len() + 12);
        put_block(le, &mut whole, block::ENHANCED_PACKET, buf);
        out.write_all(&whole).map_err(write_err)
    }
}

/// Writes the frames of `capture` (several files merged, say) to `out`
/// as pcapng with `notes`' comments on their frames: numbered as the
/// capture numbers them, nanosecond times, an interface for each link
/// type as it first appears (the files' own interface names, options and
/// packet options are not carried over). A file the capture could not
/// read on was said by the analysis; what it could read is written.
pub fn annotate_frames(
    capture: &mut rttdoc_capture::Capture,
    out: impl Write,
    notes: &Annotations,
) -> Result<AnnotateStats, AnnotateError> {
    let le = Endian { big: false };
    let mut out = io::BufWriter::with_capacity(64 * 1024, out);
    out.write_all(&section_header()).map_err(write_err)?;
    let mut interfaces: Vec<u32> = Vec::new();
    let mut stats = AnnotateStats::default();
    let mut buf = Vec::new();
    loop {
        let frame = match capture.next_frame() {
            Ok(Some(frame)) => frame,
            Ok(None) => break,
            Err(_) => continue,
        };
        let interface = match interfaces.iter().position(|&l| l == frame.link_type) {
            Some(i) => i,
            None => {
                let mut idb = Vec::new();
                le.put16(&mut idb, (frame.link_type & 0xffff) as u16);
                le.put16(&mut idb, 0);
                le.put32(&mut idb, 0);
                put_option(le, &mut idb, IF_TSRESOL, &[9]);
                put_option(le, &mut idb, OPT_END, &[]);
                buf.clear();
                put_block(le, &mut buf, block::INTERFACE_DESCRIPTION, &idb);
                out.write_all(&buf).map_err(write_err)?;
                interfaces.push(frame.link_type);
                interfaces.len() - 1
            }
        };
        stats.frames += 1;
        let packet = Packet {
            interface: interface as u32,
            ts: frame.ts_ns.max(0) as u64,
            orig_len: frame.orig_len,
            data: frame.data,
        };
        packet.write(&mut out, &mut buf, notes.comments(frame.number), &mut stats)?;
    }
    out.flush().map_err(write_err)?;
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn notes(frames: &[(u64, &str)]) -> Annotations {
        let mut a = Annotations::new();
        for (f, c) in frames {
            a.comments.entry(*f).or_default().push(c.to_string());
        }
        a
    }

    /// A classic pcap (microseconds) of Ethernet frames of the given sizes.
    fn pcap(sizes: &[usize], big: bool, nanos: bool) -> Vec<u8> {
        let e = Endian { big };
        let mut f = Vec::new();
        e.put32(&mut f, if nanos { 0xa1b2_3c4d } else { 0xa1b2_c3d4 });
        e.put16(&mut f, 2);
        e.put16(&mut f, 4);
        e.put32(&mut f, 0);
        e.put32(&mut f, 0);
        e.put32(&mut f, 65535);
        e.put32(&mut f, 1);
        for (i, n) in sizes.iter().enumerate() {
            e.put32(&mut f, 1_700_000_000 + i as u32);
            e.put32(&mut f, 123_457 + i as u32);
            e.put32(&mut f, *n as u32);
            e.put32(&mut f, *n as u32 + 4);
            f.extend((0..*n).map(|b| b as u8));
        }
        f
    }

    fn frames_of(bytes: &[u8]) -> Vec<(u64, i64, u32, Vec<u8>)> {
        let mut cap = rttdoc_capture::Capture::from_reader(
            "test",
            Box::new(io::Cursor::new(bytes.to_vec())),
            None,
        )
        .unwrap();
        let mut v = Vec::new();
        while let Some(f) = cap.next_frame().unwrap() {
            v.push((f.number, f.ts_ns, f.link_type, f.data.to_vec()));
        }
        v
    }

    /// A reply held behind its sender's own small message: its wait runs
    /// from the peer's message it answers (frame 5), and the small
    /// segment Nagle waited for the ACK of (frame 4) is named as such.
    #[test]
    fn the_segment_that_armed_a_nagle_hold_is_commented_as_such() {
        let mut x = crate::test_support::finding(rttdoc_model::FindingKind::NagleHold, 40.0);
        x.frames = vec![4, 6, 7];
        x.waits = vec![rttdoc_model::Wait {
            from_frame: 5,
            to_frame: 7,
            release_frame: Some(6),
            ms: 40.0,
        }];
        x.detail = Detail::Nagle {
            sender: rttdoc_model::Direction::ClientToServer,
            held_frame: 7,
            ack_frame: 6,
            armed_frame: 4,
            armed_bytes: 200,
            first_silence_ms: 40.0,
            ack_delay_ms: 0.0,
            holds: 1,
            protocol: None,
            behind_handshake: false,
            released_by_handshake: false,
            paced: None,
            undelivered: false,
        };
        assert!(comment(0, &x, 4).contains("the small segment whose ACK Nagle waited for"));
        assert!(
            comment(0, &x, 7).contains("held 40"),
            "{}",
            comment(0, &x, 7)
        );
        assert!(!comment(0, &x, 6).contains("the small segment"));
    }

    #[test]
    fn pcap_becomes_pcapng_with_the_same_frames_and_times_and_comments_where_asked() {
        for (big, nanos) in [(false, false), (true, false), (false, true), (true, true)] {
            let input = pcap(&[60, 61, 1514, 7], big, nanos);
            let mut out = Vec::new();
            let stats = annotate(
                io::Cursor::new(&input),
                &mut out,
                &notes(&[(2, "rttdoc: nagle_hold stream 0: held 36.1 ms")]),
            )
            .unwrap();
            assert_eq!((stats.frames, stats.commented), (4, 1));
            assert_eq!(u32::from_le_bytes(out[..4].try_into().unwrap()), 0x0A0D0D0A);
            assert_eq!(
                frames_of(&input),
                frames_of(&out),
                "big {big} nanos {nanos}"
            );
            let needle = b"rttdoc: nagle_hold stream 0: held 36.1 ms";
            assert_eq!(out.windows(needle.len()).filter(|w| w == needle).count(), 1);
        }
    }

    #[test]
    fn pcapng_keeps_its_blocks_and_existing_comments_and_adds_ours() {
        // Annotate twice: the second pass reads pcapng (with a comment
        // already on frame 2) and must keep it next to the new one.
        let input = pcap(&[60, 70, 80], true, false);
        let mut once = Vec::new();
        annotate(io::Cursor::new(&input), &mut once, &notes(&[(2, "first")])).unwrap();
        let mut twice = Vec::new();
        let stats = annotate(
            io::Cursor::new(&once),
            &mut twice,
            &notes(&[(2, "second"), (3, "third")]),
        )
        .unwrap();
        assert_eq!((stats.frames, stats.commented), (3, 2));
        assert_eq!(frames_of(&input), frames_of(&twice));
        let text = String::from_utf8_lossy(&twice);
        let (first, second) = (text.find("first").unwrap(), text.find("second").unwrap());
        assert!(first < second, "the existing comment stays first");
        assert!(text.contains("third"));
        // Unchanged frames are copied byte for byte.
        let uncommented = annotate(io::Cursor::new(&once), Vec::new(), &Annotations::new());
        assert_eq!(uncommented.unwrap().commented, 0);
    }

    #[test]
    fn big_endian_pcapng_sections_are_rewritten_in_their_own_byte_order() {
        // A big-endian section by hand: SHB, IDB (Ethernet), one EPB.
        let e = Endian { big: true };
        let mut f = Vec::new();
        let mut shb = Vec::new();
        e.put32(&mut shb, BYTE_ORDER_MAGIC);
        e.put16(&mut shb, 1);
        e.put16(&mut shb, 0);
        shb.extend_from_slice(&[0xff; 8]);
        put_block(e, &mut f, block::SECTION_HEADER, &shb);
        let mut idb = Vec::new();
        e.put16(&mut idb, 1);
        e.put16(&mut idb, 0);
        e.put32(&mut idb, 0);
        put_block(e, &mut f, block::INTERFACE_DESCRIPTION, &idb);
        let mut epb = Vec::new();
        for v in [0u32, 0x0006_0000, 0x1234_5678, 5, 5] {
            e.put32(&mut epb, v);
        }
        epb.extend_from_slice(&[1, 2, 3, 4, 5, 0, 0, 0]);
        put_block(e, &mut f, block::ENHANCED_PACKET, &epb);
        let mut out = Vec::new();
        let stats = annotate(io::Cursor::new(&f), &mut out, &notes(&[(1, "x")])).unwrap();
        assert_eq!(stats.commented, 1);
        assert_eq!(frames_of(&f), frames_of(&out));
        assert!(
            out.windows(2).any(|w| w == [0, 1]),
            "comment code big-endian"
        );
    }

    #[test]
    fn damaged_input_is_an_error_with_an_offset_not_a_panic() {
        let mut input = pcap(&[60, 60], false, false);
        input.truncate(input.len() - 10);
        let err = annotate(io::Cursor::new(&input), Vec::new(), &Annotations::new()).unwrap_err();
        assert!(err.message.contains("ends inside"), "{err}");
        let err = annotate(
            io::Cursor::new(b"hello world!"),
            Vec::new(),
            &Annotations::new(),
        )
        .unwrap_err();
        assert!(err.to_string().contains("editcap"), "{err}");
        let mut ng = Vec::new();
        annotate(
            io::Cursor::new(pcap(&[60], false, false)),
            &mut ng,
            &Annotations::new(),
        )
        .unwrap();
        ng[4] = 0xfe; // the section header's length
        assert!(annotate(io::Cursor::new(&ng), Vec::new(), &Annotations::new()).is_err());
    }
}
