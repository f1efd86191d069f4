//! Capture input as wide as Wireshark's: files written by Wireshark's own
//! tools (editcap, mergecap) and public captures from other projects are
//! read with the frames, frame numbers and timestamps tshark shows.

mod common;

use common::*;
use rttdoc_capture::Capture;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What rttdoc's reader sees: (frame number, timestamp in ns, captured
/// bytes) for each frame, and the error that stopped reading, if any.
struct Read {
    frames: Vec<(u64, i64, Vec<u8>)>,
    /// Records numbered, packets or not (Capture::frames).
    numbered: u64,
    error: Option<String>,
}

fn read(path: &Path) -> Read {
    let mut capture = match Capture::open(&path.to_string_lossy()) {
        Ok(c) => c,
        Err(e) => {
            return Read {
                frames: Vec::new(),
                numbered: 0,
                error: Some(e.to_string()),
            }
        }
    };
    let mut frames = Vec::new();
    loop {
        match capture.next_frame() {
            Ok(Some(f)) => frames.push((f.number, f.ts_ns, f.data.to_vec())),
            Ok(None) => {
                return Read {
                    frames,
                    numbered: capture.frames(),
                    error: None,
                }
            }
            Err(e) => {
                return Read {
                    frames,
                    numbered: capture.frames(),
                    error: Some(e.to_string()),
                }
            }
        }
    }
}

/// Parses tshark's `frame.time_epoch` ("1700000000.123456789") exactly.
fn epoch_ns(s: &str) -> Option<i128> {
    if s.is_empty() {
        return None;
    }
    let (sec, frac) = s.split_once('.').unwrap_or((s, "0"));
    let mut frac = frac.to_string();
    frac.truncate(9);
    while frac.len() < 9 {
        frac.push('0');
    }
    Some(sec.parse::<i128>().unwrap() * 1_000_000_000 + frac.parse::<i128>().unwrap())
}

/// One tshark frame: number, timestamp, captured length, is a packet.
type TsharkFrame = (u64, Option<i128>, usize, bool);
/// A frame number and its timestamp, if it has one.
type NumberAndTime = (u64, Option<i128>);

/// tshark's frames: (number, timestamp in ns, captured length, whether it
/// is a packet), and whether tshark reported an error reading the file. A
/// frame without a timestamp (Simple Packet Block) has None; one without an
/// encapsulation is no packet (a custom block).
fn tshark_frames(path: &Path) -> (Vec<TsharkFrame>, bool) {
    let out = Command::new("tshark")
        .arg("-r")
        .arg(path)
        .args([
            "-T",
            "fields",
            "-e",
            "frame.number",
            "-e",
            "frame.time_epoch",
        ])
        .args(["-e", "frame.cap_len", "-e", "frame.encap_type"])
        .output()
        .unwrap();
    let frames = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (
                f[0].parse().unwrap(),
                epoch_ns(f[1]),
                f[2].parse().unwrap_or(0),
                !f[3].is_empty(),
            )
        })
        .collect();
    (frames, !out.status.success())
}

/// (number, timestamp) of both readers, ours without the timestamps
/// tshark does not have; tshark's clamped to what nanoseconds in an i64
/// hold (up to 2262: later ones are corrupt stamps, and saturate).
fn numbers_and_times(
    ours: &[(u64, i64, Vec<u8>)],
    theirs: &[TsharkFrame],
) -> (Vec<NumberAndTime>, Vec<NumberAndTime>) {
    let theirs: Vec<_> = theirs.iter().filter(|f| f.3).collect();
    let ours = ours
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let known = theirs.get(i).is_none_or(|t| t.1.is_some());
            (f.0, known.then_some(f.1 as i128))
        })
        .collect();
    let theirs = theirs
        .iter()
        .map(|f| {
            (
                f.0,
                f.1.map(|t| t.clamp(i64::MIN as i128, i64::MAX as i128)),
            )
        })
        .collect();
    (ours, theirs)
}

/// Asserts that rttdoc reads `path` without error, with tshark's frame
/// numbers and timestamps; returns the frames.
fn assert_reads_like_tshark(path: &Path) -> Vec<(u64, i64, Vec<u8>)> {
    let ours = read(path);
    let (theirs, tshark_failed) = tshark_frames(path);
    assert!(!tshark_failed, "{}: tshark fails on it", path.display());
    assert_eq!(ours.error, None, "{}", path.display());
    let (ours_nt, theirs_nt) = numbers_and_times(&ours.frames, &theirs);
    assert_eq!(
        ours_nt,
        theirs_nt,
        "{}: frame numbers and times",
        path.display()
    );
    assert_eq!(
        ours.numbered,
        theirs.len() as u64,
        "{}: records",
        path.display()
    );
    ours.frames
}

fn run(cmd: &mut Command) {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn sample() -> PathBuf {
    data_dir().join("loopback-nginx-curl.pcap.gz")
}

/// Connections of `rttdoc analyze --json`, the analysis a user sees.
fn connections(path: &Path, extra: &[&str]) -> serde_json::Value {
    run_rttdoc_json_with(path, extra)["connections"].clone()
}

/// The sample as editcap writes it in `format`, in `dir`.
fn sample_as(dir: &TempDir, format: &str) -> PathBuf {
    let out = dir.path(&format!("sample.{format}"));
    run(Command::new("editcap")
        .args(["-F", format])
        .arg(sample())
        .arg(&out));
    out
}

/// The sample as editcap writes it in pcapng, in `dir`.
fn sample_as_pcapng(dir: &TempDir) -> PathBuf {
    sample_as(dir, "pcapng")
}

/// Wireshark, dumpcap and editcap write a Section Header Block with
/// shb_hardware/shb_os/shb_userappl options, longer than any fixed first
/// read: such a file is read, with the frames of the pcap it was made from,
/// and analysed exactly as that pcap.
#[test]
fn pcapng_written_by_editcap_is_read_and_analysed_like_its_pcap() {
    if !require("editcap_pcapng", &["tshark", "editcap"], false) {
        return;
    }
    let dir = TempDir::new("editcap-ng");
    let ng = sample_as_pcapng(&dir);
    let shb_len = u32::from_le_bytes(std::fs::read(&ng).unwrap()[4..8].try_into().unwrap());
    assert!(shb_len > 64, "editcap's SHB is {shb_len} bytes");
    let frames = assert_reads_like_tshark(&ng);
    let original = read(&sample());
    assert_eq!(frames, original.frames, "same frames as the pcap");
    assert_eq!(connections(&ng, &[]), connections(&sample(), &[]));
}

/// snoop (RFC 1761), as Solaris's snoop and Check Point's `fw monitor`
/// write it, here as Wireshark's own writer makes it (editcap -F snoop):
/// read with tshark's frames and analysed exactly as the pcap it was made
/// from, from a path, gzip-compressed and from stdin; and so every public
/// Ethernet capture editcap converts.
#[test]
fn snoop_written_by_editcap_is_read_and_analysed_like_its_pcap() {
    if !require("snoop", &["tshark", "editcap", "gzip"], false) {
        return;
    }
    let dir = TempDir::new("snoop");
    let snoop = sample_as(&dir, "snoop");
    assert_eq!(&std::fs::read(&snoop).unwrap()[..8], b"snoop\0\0\0");
    let frames = assert_reads_like_tshark(&snoop);
    assert_eq!(frames, read(&sample()).frames, "the sample's frames");
    let want = connections(&sample(), &[]);
    assert_eq!(connections(&snoop, &[]), want);
    let gz = dir.path("sample.snoop.gz");
    std::fs::write(&gz, pipe("gzip", &["-c"], &std::fs::read(&snoop).unwrap())).unwrap();
    assert_eq!(connections(&gz, &[]), want, "gzip-compressed");
    assert_eq!(connections_from_stdin(&gz), want, "from stdin");
    // --annotate writes a snoop file's frames as pcapng, with comments,
    // compressed or not (the format is what the analysis read, not the
    // file's first bytes).
    for (input, name) in [(&snoop, "annotated.pcapng"), (&gz, "annotated-gz.pcapng")] {
        let annotated = dir.path(name);
        run(Command::new(rttdoc_bin())
            .args(["analyze", "--json", "--annotate"])
            .arg(&annotated)
            .arg(input));
        assert_eq!(assert_reads_like_tshark(&annotated), frames, "{name}");
        let comments = Command::new("tshark")
            .arg("-r")
            .arg(&annotated)
            .args(["-Y", "frame.comment contains \"rttdoc\""])
            .output()
            .unwrap();
        assert!(
            !comments.stdout.is_empty(),
            "{name}: evidence frames carry comments"
        );
    }

    let mut public = Vec::new();
    files_under(&public_dir(), &mut public);
    public.sort();
    let mut converted = 0;
    for (i, path) in public.iter().enumerate() {
        if std::fs::metadata(path).map_or(true, |m| m.len() > 4 << 20) {
            continue;
        }
        let out = dir.path(&format!("public-{i}.snoop"));
        let made = Command::new("editcap")
            .args(["-F", "snoop"])
            .arg(path)
            .arg(&out)
            .output()
            .unwrap();
        // (editcap writes Ethernet, FDDI and a few others to snoop only.)
        if !made.status.success() {
            continue;
        }
        assert_reads_like_tshark(&out);
        converted += 1;
    }
    assert!(converted >= 20, "{converted} public captures as snoop");
}

/// Early pcapng writers (the format drafts' example files, as
/// python-pcapng's test006.ntar keeps one) left a packet block's padding
/// out of its two length fields; Wireshark reads such blocks, rounding
/// the length up. editcap's pcapng of the sample with every enhanced
/// packet block's lengths so written: tshark's frames, the same analysis,
/// and `--annotate` writes it back with the lengths padded.
#[test]
fn packet_blocks_whose_lengths_leave_their_padding_out_read_as_wireshark_reads_them() {
    if !require("pcapng_unpadded_lengths", &["tshark", "editcap"], false) {
        return;
    }
    let dir = TempDir::new("unpadded-ng");
    let ng = sample_as_pcapng(&dir);
    let mut bytes = std::fs::read(&ng).unwrap();
    let u32_at = |b: &[u8], at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
    let (mut at, mut unpadded) = (0, 0);
    while at + 12 <= bytes.len() {
        let (kind, total) = (u32_at(&bytes, at), u32_at(&bytes, at + 4) as usize);
        if kind == 6 {
            let caplen = u32_at(&bytes, at + 20) as usize;
            let short = (total - (caplen.next_multiple_of(4) - caplen)) as u32;
            if short as usize != total {
                bytes[at + 4..at + 8].copy_from_slice(&short.to_le_bytes());
                bytes[at + total - 4..at + total].copy_from_slice(&short.to_le_bytes());
                unpadded += 1;
            }
        }
        at += total;
    }
    assert!(unpadded > 5, "{unpadded} blocks");
    let edited = dir.path("unpadded.pcapng");
    std::fs::write(&edited, &bytes).unwrap();
    let frames = assert_reads_like_tshark(&edited);
    assert_eq!(frames, read(&sample()).frames, "the sample's frames");
    assert_eq!(connections(&edited, &[]), connections(&sample(), &[]));
    let annotated = dir.path("annotated.pcapng");
    let out = Command::new(rttdoc_bin())
        .args(["analyze", "--json"])
        .arg(&edited)
        .arg("--annotate")
        .arg(&annotated)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let written = std::fs::read(&annotated).unwrap();
    let mut at = 0;
    while at + 12 <= written.len() {
        let total = u32_at(&written, at + 4) as usize;
        assert!(total.is_multiple_of(4), "block at {at}: {total} bytes");
        assert_eq!(u32_at(&written, at + total - 4) as usize, total);
        at += total;
    }
    assert_eq!(at, written.len());
    assert_eq!(assert_reads_like_tshark(&annotated), frames);
}

/// The pcap variants editcap writes (nanosecond, Kuznetzov's modified pcap
/// with 24-byte record headers, SuSE 6.3's 28-byte ones, Red Hat 6.1's
/// modified headers behind the standard magic, Nokia's 20-byte ones) and
/// pcapng with nanosecond `if_tsresol` are read with tshark's frames and
/// the original packets.
#[test]
fn every_pcap_variant_editcap_writes_is_read_like_tshark_reads_it() {
    if !require("pcap_variants", &["tshark", "editcap"], false) {
        return;
    }
    let dir = TempDir::new("variants");
    let original = read(&sample());
    assert!(original.error.is_none() && original.frames.len() > 20);
    let nsec = dir.path("nsec.pcap");
    run(Command::new("editcap")
        .args(["-F", "nsecpcap"])
        .arg(sample())
        .arg(&nsec));
    for format in [
        "pcap",
        "nsecpcap",
        "modpcap",
        "suse6_3pcap",
        "rh6_1pcap",
        "nokiapcap",
    ] {
        let out = dir.path(&format!("{format}.pcap"));
        run(Command::new("editcap")
            .args(["-F", format])
            .arg(sample())
            .arg(&out));
        let frames = assert_reads_like_tshark(&out);
        assert_eq!(frames, original.frames, "{format}: the packets");
    }
    // Big-endian hosts wrote the same formats in their byte order; editcap
    // writes ours only, so swap its output (tshark remains the reference).
    for (format, record_header) in [("modpcap", 24), ("suse6_3pcap", 28), ("nsecpcap", 16)] {
        let little = std::fs::read(dir.path(&format!("{format}.pcap"))).unwrap();
        let big = dir.path(&format!("{format}-big-endian.pcap"));
        std::fs::write(&big, to_big_endian_pcap(&little, record_header)).unwrap();
        let frames = assert_reads_like_tshark(&big);
        assert_eq!(frames, original.frames, "{format}, big-endian: the packets");
    }
    // From the nanosecond pcap, editcap writes an IDB with if_tsresol = 9.
    let ng = dir.path("nsec.pcapng");
    run(Command::new("editcap")
        .args(["-F", "pcapng"])
        .arg(&nsec)
        .arg(&ng));
    let frames = assert_reads_like_tshark(&ng);
    assert_eq!(frames, original.frames);
}

/// Linux's netfilter log (`tcpdump -i nflog:5` behind an nft `log group 5`
/// rule: LINKTYPE_NFLOG, tests/data/nflog, scripts/nflog-capture.sh): each
/// packet is a payload attribute among others. Read with tshark's frames,
/// and the same connections, frames and initial RTTs (to the microsecond
/// of rounding) as tshark finds; and
/// so from a big-endian host, whose attributes are in its byte order.
#[test]
fn nflog_captures_read_like_tshark_in_both_byte_orders() {
    if !require("nflog", &["tshark"], false) {
        return;
    }
    let capture = data_dir().join("nflog").join("http.pcap.gz");
    let dir = TempDir::new("nflog");
    let little = dir.path("http.pcap");
    gunzip_to(&capture, &little);
    let bytes = std::fs::read(&little).unwrap();
    assert_eq!(
        u32::from_le_bytes(bytes[20..24].try_into().unwrap()),
        239,
        "LINKTYPE_NFLOG"
    );
    let big = dir.path("http-big-endian.pcap");
    std::fs::write(
        &big,
        nflog_attributes_swapped(&to_big_endian_pcap(&bytes, 16)),
    )
    .unwrap();
    for path in [&little, &big] {
        let frames = assert_reads_like_tshark(path);
        assert_eq!(frames.len(), 92, "{}", path.display());
        assert_eq!(
            rttdoc_streams(path).len(),
            5,
            "{}: the five connections",
            path.display()
        );
        assert_agrees_with_tshark(path, &[]);
    }
    assert_eq!(rttdoc_streams(&big), rttdoc_streams(&little));
}

fn gunzip_to(gz: &Path, out: &Path) {
    let unzipped = Command::new("gzip").arg("-dc").arg(gz).output().unwrap();
    assert!(unzipped.status.success());
    std::fs::write(out, unzipped.stdout).unwrap();
}

/// A big-endian pcap of NFLOG records whose attributes are still
/// little-endian: their lengths and types swapped too, as a big-endian
/// host's kernel wrote them.
fn nflog_attributes_swapped(pcap: &[u8]) -> Vec<u8> {
    let mut out = pcap.to_vec();
    let mut at = 24;
    while at + 16 <= out.len() {
        let caplen = u32::from_be_bytes(out[at + 8..at + 12].try_into().unwrap()) as usize;
        let frame = at + 16;
        let end = frame + caplen;
        let mut tlv = frame + 4;
        while tlv + 4 <= end {
            let len = u16::from_le_bytes([out[tlv], out[tlv + 1]]) as usize;
            out.swap(tlv, tlv + 1);
            out.swap(tlv + 2, tlv + 3);
            tlv += len.div_ceil(4) * 4;
        }
        at = end;
    }
    out
}

/// mergecap of captures with different link types writes one section with
/// an interface per input; frames interleave by time and are numbered in
/// file order as tshark numbers them. Concatenated pcapng files are several
/// sections, each starting its interfaces afresh.
#[test]
fn merged_interfaces_and_concatenated_sections_keep_tsharks_numbering() {
    if !require("mergecap", &["tshark", "editcap", "mergecap"], false) {
        return;
    }
    let dir = TempDir::new("merge");
    // Linux cooked capture (SLL) next to the Ethernet sample.
    let sll = dir.path("sll.pcapng");
    let sll_src = public_dir().join("seladb-PcapPlusPlus/Pcap++Test__PcapExamples__sll.pcap");
    let second = if sll_src.exists() {
        sll_src
    } else {
        // No shared captures: the sample again, shifted an hour later.
        let shifted = dir.path("shifted.pcap");
        run(Command::new("editcap")
            .args(["-t", "3600"])
            .arg(sample())
            .arg(&shifted));
        shifted
    };
    run(Command::new("editcap")
        .args(["-F", "pcapng"])
        .arg(&second)
        .arg(&sll));
    let merged = dir.path("merged.pcapng");
    run(Command::new("mergecap")
        .args(["-F", "pcapng", "-w"])
        .arg(&merged)
        .arg(sample())
        .arg(&sll));
    let frames = assert_reads_like_tshark(&merged);
    assert_eq!(
        frames.len(),
        read(&sample()).frames.len() + read(&sll).frames.len()
    );

    let ng = dir.path("sample.pcapng");
    run(Command::new("editcap")
        .args(["-F", "pcapng"])
        .arg(sample())
        .arg(&ng));
    let two_sections = dir.path("two-sections.pcapng");
    let mut bytes = std::fs::read(&sll).unwrap();
    bytes.extend(std::fs::read(&ng).unwrap());
    bytes.extend(std::fs::read(&merged).unwrap());
    std::fs::write(&two_sections, bytes).unwrap();
    let frames = assert_reads_like_tshark(&two_sections);
    assert_eq!(
        frames.len(),
        2 * read(&sll).frames.len() + 2 * read(&sample()).frames.len()
    );
}

/// A TLS key log that `editcap --inject-secrets` embeds (a Decryption
/// Secrets Block before the packets) is used as `--keylog` is: the 0-RTT
/// request is decrypted and the analysis equals the one with the key log
/// given on the command line (and differs from the one without).
#[test]
fn secrets_embedded_by_editcap_work_like_keylog() {
    if !require("inject_secrets", &["tshark", "editcap"], false) {
        return;
    }
    let lab = data_dir().join("lab/zero-rtt-post-builtin");
    let capture = lab.join("client.pcapng.gz");
    let keylog = lab.join("keylog.txt");
    let dir = TempDir::new("dsb");
    let with_dsb = dir.path("with-secrets.pcapng");
    run(Command::new("editcap")
        .arg("--inject-secrets")
        .arg(format!("tls,{}", keylog.display()))
        .arg(&capture)
        .arg(&with_dsb));
    assert_reads_like_tshark(&with_dsb);
    let mut reader = Capture::open(&with_dsb.to_string_lossy()).unwrap();
    while reader.next_frame().unwrap().is_some() {}
    assert_eq!(
        reader.secrets().tls_key_log(),
        std::fs::read(&keylog).unwrap(),
        "the embedded key log, byte for byte"
    );

    let embedded = connections(&with_dsb, &[]);
    let given = connections(&capture, &["--keylog", &keylog.to_string_lossy()]);
    let without = connections(&capture, &[]);
    assert_ne!(given, without, "the key log changes this analysis");
    assert_eq!(embedded, given);
}

/// Hand-made where no tool writes it (Wireshark writes host byte order
/// only): a little-endian section and a big-endian one, obsolete Packet
/// Blocks, Simple Packet Blocks, power-of-2 `if_tsresol`, `if_tsoffset`,
/// `if_fcslen`, name resolution, statistics and custom blocks, and a Packet
/// Block after them. tshark is the reference for numbers and times.
#[test]
fn sections_in_both_byte_orders_with_every_block_kind_read_as_tshark_reads_them() {
    if !require("hand_made_pcapng", &["tshark"], false) {
        return;
    }
    let packet = Tcp::new("10.0.0.1", 40000, "10.0.0.2", 80)
        .seq(1, 0)
        .flags(SYN)
        .ip();
    let eth = ethernet(&packet, &[]);
    let mut eth_fcs = eth.clone();
    eth_fcs.extend([0xde, 0xad, 0xbe, 0xef]);
    let mut file = Vec::new();
    for big in [false, true] {
        let e = Ng { big };
        let mut opts = e.opt(2, b"some hardware, described at length");
        opts.extend(e.opt(4, &[b'x'; 700]));
        file.extend(e.block(0x0A0D0D0A, &e.shb_body(&opts)));
        // Interface 0: Ethernet, microseconds. 1: raw IP, 2^-20 s units,
        // 1000 s offset. 2: Ethernet with a 32-bit FCS.
        file.extend(e.block(1, &e.idb(1, &[])));
        let mut o = e.opt(9, &[0x80 | 20]);
        o.extend(e.opt(14, &e.u64(1000)));
        file.extend(e.block(1, &e.idb(101, &o)));
        file.extend(e.block(1, &e.idb(1, &e.opt(13, &[32]))));
        file.extend(e.block(4, &[0; 4])); // name resolution: empty
        file.extend(e.block(6, &e.epb(0, 1_700_000_000_000_000, &eth)));
        file.extend(e.block(6, &e.epb(1, 1_782_579_200u64 << 20, &packet)));
        file.extend(e.block(0x0BAD, &[0x7f, 0, 0, 0, 1, 2, 3, 4]));
        file.extend(e.block(6, &e.epb(2, 1_700_000_001_000_000, &eth_fcs)));
        file.extend(e.block(2, &e.opb(0, 1_700_000_002_000_000, &eth)));
        file.extend(e.block(5, &[0; 12])); // interface statistics
        file.extend(e.block(0x4000_0BAD, &[0x7f, 0, 0, 0]));
        file.extend(e.block(0x1234_5678, &[1, 2, 3, 4]));
        file.extend(e.block(2, &e.opb(1, 1_782_579_201u64 << 20, &packet)));
    }
    let dir = TempDir::new("hand-ng");
    let path = dir.path("both-orders.pcapng");
    std::fs::write(&path, &file).unwrap();
    let frames = assert_reads_like_tshark(&path);
    // Custom blocks take frame numbers (3, 6, 10, 13) and hold no packet.
    assert_eq!(frames.len(), 10);
    assert_eq!(frames[2].0, 4);
    assert_eq!(frames[1].1, 1_782_580_200 * 1_000_000_000, "tsoffset");
    assert_eq!(frames[2].2, eth, "the FCS is stripped");
    assert_eq!(frames[4].2, packet);
    // A Simple Packet Block takes interface 0 and the next frame number.
    let mut spb = file.clone();
    let e = Ng { big: true };
    let mut body = e.u32(eth.len() as u32).to_vec();
    body.extend(&eth);
    spb.extend(e.block(3, &body));
    std::fs::write(&path, &spb).unwrap();
    let (theirs, _) = tshark_frames(&path);
    let ours = read(&path);
    assert_eq!(ours.error, None);
    assert_eq!(ours.numbered, theirs.len() as u64);
    assert_eq!(ours.frames[10].0, 15);
    assert_eq!(theirs[14].0, 15);
    assert_eq!(ours.frames[10].2, eth);
}

/// A pcap whose link-type field carries the FCS bits (4 bytes of FCS): the
/// link type is Ethernet and the packets come without their FCS; tshark
/// sees the same FCS.
#[test]
fn pcap_fcs_bits_give_ethernet_frames_without_their_fcs() {
    if !require("pcap_fcs", &["tshark"], false) {
        return;
    }
    let packet = Tcp::new("10.0.0.1", 40000, "10.0.0.2", 80)
        .seq(1, 0)
        .flags(SYN)
        .ip();
    let eth = ethernet(&packet, &[]);
    let mut file = 0xa1b2c3d4u32.to_le_bytes().to_vec();
    file.extend([2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    file.extend(65535u32.to_le_bytes());
    file.extend((0x2400_0000u32 | 1).to_le_bytes());
    for i in 0..3u32 {
        let len = eth.len() as u32 + 4;
        for v in [1_700_000_000 + i, 0, len, len] {
            file.extend(v.to_le_bytes());
        }
        file.extend(&eth);
        file.extend([0xde, 0xad, 0xbe, 0xef]);
    }
    let dir = TempDir::new("fcs");
    let path = dir.path("fcs.pcap");
    std::fs::write(&path, &file).unwrap();
    let out = Command::new("tshark")
        .arg("-r")
        .arg(&path)
        .args(["-T", "fields", "-e", "eth.fcs"])
        .output()
        .unwrap();
    let fcs = String::from_utf8_lossy(&out.stdout);
    assert_eq!(fcs.lines().count(), 3, "{fcs}");
    assert!(
        fcs.lines()
            .all(|l| l.contains("0xdeadbeef") || l.contains("0xefbeadde")),
        "{fcs}"
    );
    let frames = assert_reads_like_tshark(&path);
    let mut capture = Capture::open(&path.to_string_lossy()).unwrap();
    let first = capture.next_frame().unwrap().unwrap();
    assert_eq!(first.link_type, 1);
    assert_eq!(first.orig_len as usize, eth.len());
    assert!(frames.iter().all(|f| f.2 == eth));
}

/// The big-endian nanosecond pcap among the public captures: tshark's
/// times to the nanosecond.
#[test]
fn big_endian_nanosecond_pcap_keeps_its_nanoseconds() {
    let path =
        public_dir().join("seladb-PcapPlusPlus/Pcap++Test__PcapExamples__nanosecs_big_endian.pcap");
    if !path.exists() {
        if in_ci() {
            panic!("{} is missing", path.display());
        }
        eprintln!(
            "SKIPPED big_endian_nanosecond_pcap: {} is missing",
            path.display()
        );
        return;
    }
    if !require("big_endian", &["tshark"], false) {
        return;
    }
    let frames = assert_reads_like_tshark(&path);
    assert!(
        frames.iter().any(|f| f.1 % 1000 != 0),
        "sub-microsecond digits"
    );
}

/// A little-endian pcap file in big-endian byte order: the file header's
/// fields, and each record header's (16 bytes, then for the modified
/// formats the interface index, protocol, packet type and padding).
fn to_big_endian_pcap(little: &[u8], record_header: usize) -> Vec<u8> {
    fn swap(out: &mut Vec<u8>, field: &[u8]) {
        out.extend(field.iter().rev());
    }
    let mut out = Vec::with_capacity(little.len());
    swap(&mut out, &little[0..4]);
    swap(&mut out, &little[4..6]);
    swap(&mut out, &little[6..8]);
    for at in [8, 12, 16, 20] {
        swap(&mut out, &little[at..at + 4]);
    }
    let mut at = 24;
    while at + record_header <= little.len() {
        let h = &little[at..at + record_header];
        for f in 0..4 {
            swap(&mut out, &h[f * 4..f * 4 + 4]);
        }
        if record_header >= 24 {
            swap(&mut out, &h[16..20]);
            swap(&mut out, &h[20..22]);
            out.extend(&h[22..]);
        }
        let caplen = u32::from_le_bytes(h[8..12].try_into().unwrap()) as usize;
        out.extend(&little[at + record_header..at + record_header + caplen]);
        at += record_header + caplen;
    }
    assert_eq!(at, little.len(), "whole records");
    out
}

fn public_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/captures/public")
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            files_under(&path, out);
        } else if path.extension().is_none_or(|e| e != "md") {
            out.push(path);
        }
    }
}

/// Every public capture tshark reads is read by rttdoc with the same
/// frames, numbers and timestamps; where tshark reports damage, rttdoc
/// stops with an error after the same frames.
#[test]
fn every_public_capture_is_read_with_tsharks_frames() {
    let dir = public_dir();
    if !dir.is_dir() {
        if in_ci() {
            panic!("{} is missing", dir.display());
        }
        eprintln!("SKIPPED public captures: {} is missing", dir.display());
        return;
    }
    if !require("public_captures", &["tshark"], false) {
        return;
    }
    let mut files = Vec::new();
    files_under(&dir, &mut files);
    files.sort();
    assert!(files.len() > 50, "{} files", files.len());
    let mut failures = Vec::new();
    for path in &files {
        let ours = read(path);
        let (theirs, tshark_failed) = tshark_frames(path);
        let (ours_nt, theirs_nt) = numbers_and_times(&ours.frames, &theirs);
        if ours_nt != theirs_nt || ours.numbered != theirs.len() as u64 {
            let first = ours_nt.iter().zip(&theirs_nt).find(|(a, b)| a != b);
            failures.push(format!(
                "{}: {} frames, tshark {}; first difference (ours, tshark): {first:?}; error {:?}",
                path.display(),
                ours_nt.len(),
                theirs_nt.len(),
                ours.error
            ));
        } else if ours.error.is_some() != tshark_failed {
            failures.push(format!(
                "{}: rttdoc error {:?}, tshark failed: {tshark_failed}",
                path.display(),
                ours.error
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Writes pcapng blocks in one byte order.
struct Ng {
    big: bool,
}

impl Ng {
    fn u16(&self, v: u16) -> [u8; 2] {
        if self.big {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    }
    fn u32(&self, v: u32) -> [u8; 4] {
        if self.big {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    }
    fn u64(&self, v: u64) -> [u8; 8] {
        if self.big {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    }
    fn pad(v: &mut Vec<u8>) {
        while !v.len().is_multiple_of(4) {
            v.push(0);
        }
    }
    fn block(&self, kind: u32, body: &[u8]) -> Vec<u8> {
        let mut body = body.to_vec();
        Self::pad(&mut body);
        let n = 12 + body.len() as u32;
        let mut out = self.u32(kind).to_vec();
        out.extend(self.u32(n));
        out.extend(body);
        out.extend(self.u32(n));
        out
    }
    fn opt(&self, code: u16, value: &[u8]) -> Vec<u8> {
        let mut out = self.u16(code).to_vec();
        out.extend(self.u16(value.len() as u16));
        out.extend(value);
        Self::pad(&mut out);
        out
    }
    fn shb_body(&self, options: &[u8]) -> Vec<u8> {
        let mut out = self.u32(0x1A2B3C4D).to_vec();
        out.extend(self.u16(1));
        out.extend(self.u16(0));
        out.extend([0xff; 8]);
        out.extend(options);
        out.extend([0; 4]);
        out
    }
    fn idb(&self, link: u16, options: &[u8]) -> Vec<u8> {
        let mut out = self.u16(link).to_vec();
        out.extend([0, 0]);
        out.extend(self.u32(0));
        out.extend(options);
        if !options.is_empty() {
            out.extend([0; 4]);
        }
        out
    }
    fn epb(&self, iface: u32, units: u64, data: &[u8]) -> Vec<u8> {
        let mut out = self.u32(iface).to_vec();
        out.extend(self.u32((units >> 32) as u32));
        out.extend(self.u32(units as u32));
        out.extend(self.u32(data.len() as u32));
        out.extend(self.u32(data.len() as u32));
        out.extend(data);
        out
    }
    fn opb(&self, iface: u16, units: u64, data: &[u8]) -> Vec<u8> {
        let mut out = self.u16(iface).to_vec();
        out.extend(self.u16(0));
        out.extend(self.u32((units >> 32) as u32));
        out.extend(self.u32(units as u32));
        out.extend(self.u32(data.len() as u32));
        out.extend(self.u32(data.len() as u32));
        out.extend(data);
        out
    }
}

/// `tool args < input > output`, for the compressors below.
fn pipe(tool: &str, args: &[&str], input: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut child = Command::new(tool)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(out.status.success(), "{tool} {args:?} failed");
    out.stdout
}

/// A capture large enough for several compressed blocks: the lossy download
/// of tests/data/offload (1.1 MB, 1137 frames).
fn plain_capture(dir: &TempDir) -> (PathBuf, Vec<u8>) {
    let plain = dir.path("plain.pcap");
    gunzip_to(&data_dir().join("offload/loss-client.pcap.gz"), &plain);
    let bytes = std::fs::read(&plain).unwrap();
    (plain, bytes)
}

/// `rttdoc analyze --json -` with `path` on standard input.
fn connections_from_stdin(path: &Path) -> serde_json::Value {
    let out = Command::new(rttdoc_bin())
        .args(["analyze", "--json", "-"])
        .stdin(std::fs::File::open(path).unwrap())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()["connections"].clone()
}

/// Captures compressed the ways people compress them are read as the
/// capture itself, like Wireshark reads them: zstd in one frame, `pzstd`'s
/// frames behind skippable frames, and frames joined by `cat`; lz4's default
/// frame, independent 64 KB blocks with checksums, and frames joined by
/// `cat`; gzip members joined by `cat`. Each gives the analysis of the
/// plain file, from a path and from standard input, and tshark sees the
/// same frames in the single-frame files.
#[test]
fn compressed_captures_are_analysed_as_the_capture_they_hold() {
    if !require(
        "compressed",
        &["tshark", "zstd", "pzstd", "lz4", "gzip"],
        false,
    ) {
        return;
    }
    let dir = TempDir::new("compressed");
    let (plain, bytes) = plain_capture(&dir);
    // Split inside a record, so that a frame spans two compressed frames.
    let (first, second) = bytes.split_at(bytes.len() / 2 + 7);
    let joined = |tool: &str, args: &[&str]| {
        let mut v = pipe(tool, args, first);
        v.extend(pipe(tool, args, second));
        v
    };
    let variants: Vec<(&str, Vec<u8>, bool)> = vec![
        ("one.zst", pipe("zstd", &["-q", "-c"], &bytes), true),
        (
            "pzstd.zst",
            pipe("pzstd", &["-q", "-c", "-p", "2"], &bytes),
            false,
        ),
        ("joined.zst", joined("zstd", &["-q", "-c"]), false),
        ("one.lz4", pipe("lz4", &["-q", "-c"], &bytes), true),
        (
            "blocks.lz4",
            pipe(
                "lz4",
                &["-q", "-c", "-B4", "-BI", "-BX", "--content-size"],
                &bytes,
            ),
            false,
        ),
        ("joined.lz4", joined("lz4", &["-q", "-c"]), false),
        ("joined.gz", joined("gzip", &["-c"]), false),
    ];
    // (The file name, the only difference, is in `capture`, not here.)
    let want = connections(&plain, &[]);
    for (name, compressed, tshark_too) in variants {
        assert_ne!(compressed[..4], bytes[..4], "{name} is compressed");
        let path = dir.path(name);
        std::fs::write(&path, &compressed).unwrap();
        assert_eq!(read(&path).frames, read(&plain).frames, "{name}: frames");
        assert_eq!(connections(&path, &[]), want, "{name}: from a path");
        assert_eq!(connections_from_stdin(&path), want, "{name}: from stdin");
        if tshark_too {
            assert_reads_like_tshark(&path);
        }
    }
}

/// A zstd or lz4 stream cut inside its second frame gives every frame the
/// first one held, then an error that names the file and the format (the
/// partial-result exit status); xz and bzip2, which Wireshark does not read
/// either, are refused with the command that unpacks them.
#[test]
fn cut_compressed_streams_keep_what_came_before_and_unreadable_ones_say_how_to_unpack() {
    if !require("compressed_damage", &["zstd", "lz4", "xz", "bzip2"], false) {
        return;
    }
    let dir = TempDir::new("compressed-damage");
    let (_, bytes) = plain_capture(&dir);
    let (first, second) = bytes.split_at(bytes.len() / 2);
    let head_only = dir.path("head.pcap");
    std::fs::write(&head_only, first).unwrap();
    let in_first = read(&head_only).frames.len();
    let total = read(&dir.path("plain.pcap")).frames.len();
    for (tool, format) in [("zstd", "zstd"), ("lz4", "lz4")] {
        let mut cut = pipe(tool, &["-q", "-c"], first);
        let tail = pipe(tool, &["-q", "-c"], second);
        cut.extend(&tail[..tail.len() / 2]);
        let path = dir.path(&format!("cut.{tool}"));
        std::fs::write(&path, &cut).unwrap();
        let out = Command::new(rttdoc_bin())
            .args(["analyze", "--json"])
            .arg(&path)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{tool}: {stderr}");
        assert!(
            stderr.contains(&path.to_string_lossy().to_string())
                && stderr.contains(&format!("the {format} stream ends early or is corrupt")),
            "{tool}: {stderr}"
        );
        let analysed: usize = stderr
            .lines()
            .find_map(|l| l.strip_prefix("rttdoc: the "))
            .and_then(|l| {
                l.strip_suffix(" frames before the damage were analysed")
                    .or_else(|| l.strip_suffix(" frame before the damage was analysed"))
            })
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{tool}: no count in {stderr}"));
        assert!(
            (in_first..total).contains(&analysed),
            "{tool}: {analysed} frames analysed, {in_first} in the first frame, {total} in all"
        );
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(json["connections"].as_array().unwrap().len(), 1, "{tool}");
    }
    for (tool, format) in [("xz", "xz"), ("bzip2", "bzip2")] {
        let path = dir.path(&format!("plain.pcap.{tool}"));
        std::fs::write(&path, pipe(tool, &["-c"], &bytes)).unwrap();
        let out = Command::new(rttdoc_bin())
            .arg("analyze")
            .arg(&path)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{tool}: {stderr}");
        assert!(
            stderr.contains(&format!("is {format}-compressed"))
                && stderr.contains(&format!("`{tool} -dc FILE | rttdoc analyze -`")),
            "{tool}: {stderr}"
        );
    }
}

/// The records of a little-endian microsecond pcap: (record header, data).
fn pcap_records(pcap: &[u8]) -> Vec<([u8; 16], Vec<u8>)> {
    assert_eq!(pcap[..4], [0xd4, 0xc3, 0xb2, 0xa1]);
    let mut at = 24;
    let mut out = Vec::new();
    while at + 16 <= pcap.len() {
        let header: [u8; 16] = pcap[at..at + 16].try_into().unwrap();
        let caplen = u32::from_le_bytes(header[8..12].try_into().unwrap()) as usize;
        out.push((header, pcap[at + 16..at + 16 + caplen].to_vec()));
        at += 16 + caplen;
    }
    out
}

/// `pcap` (Ethernet) as macOS's `tcpdump -i pktap,en0` (or, with
/// `as_loopback`, `-i pktap,lo0`: the NULL link type) writes it: each
/// packet behind a 108-byte PKTAP header naming the interface, the
/// packet's DLT and the process; the file's link type `link_type`.
fn as_pktap(pcap: &[u8], link_type: u32, as_loopback: bool) -> Vec<u8> {
    let mut out = pcap[..24].to_vec();
    out[20..24].copy_from_slice(&link_type.to_le_bytes());
    for (mut header, data) in pcap_records(pcap) {
        let (dlt, packet) = if as_loopback {
            let family: u32 = if data[12..14] == [0x86, 0xdd] { 30 } else { 2 };
            let mut p = family.to_le_bytes().to_vec();
            p.extend_from_slice(&data[14..]);
            (0u32, p)
        } else {
            (1u32, data)
        };
        let mut pktap = vec![0u8; 108];
        pktap[..4].copy_from_slice(&108u32.to_le_bytes());
        pktap[4..8].copy_from_slice(&1u32.to_le_bytes());
        pktap[8..12].copy_from_slice(&dlt.to_le_bytes());
        pktap[12..15].copy_from_slice(if as_loopback { b"lo0" } else { b"en0" });
        pktap[52..56].copy_from_slice(&4242u32.to_le_bytes());
        pktap[56..60].copy_from_slice(b"curl");
        pktap.extend_from_slice(&packet);
        let len = (pktap.len() as u32).to_le_bytes();
        header[8..12].copy_from_slice(&len);
        header[12..16].copy_from_slice(&len);
        out.extend_from_slice(&header);
        out.extend_from_slice(&pktap);
    }
    out
}

/// macOS captures through PKTAP (`tcpdump -i pktap,en0`, LINKTYPE_PKTAP
/// 258): tshark, whose PKTAP dissector is independent of rttdoc's, finds
/// the same TCP streams in the PKTAP file as in the capture it wraps, and
/// rttdoc analyses it exactly as that capture, for Ethernet (en0) and
/// loopback (lo0) packets inside. Under DLT_USER2 (149, OS X 10.9's
/// botch) rttdoc reads the same.
#[test]
fn macos_pktap_captures_are_analysed_as_the_packets_they_wrap() {
    if !require("pktap", &["tshark"], false) {
        return;
    }
    let dir = TempDir::new("pktap");
    let plain = dir.path("plain.pcap");
    gunzip_to(&sample(), &plain);
    let bytes = std::fs::read(&plain).unwrap();
    let want = connections(&plain, &[]);
    assert!(want.as_array().unwrap().len() >= 2);
    let theirs = tshark_streams(&plain, &[]);
    for (name, link_type, lo0) in [
        ("en0.pcap", 258, false),
        ("lo0.pcap", 258, true),
        ("user2.pcap", 149, false),
    ] {
        let path = dir.path(name);
        std::fs::write(&path, as_pktap(&bytes, link_type, lo0)).unwrap();
        if link_type == 258 {
            assert_eq!(tshark_streams(&path, &[]), theirs, "{name}: tshark");
        }
        assert_eq!(connections(&path, &[]), want, "{name}");
    }
}
