//! Test kit: capture writers and packet builders for hand-made edge cases,
//! tool detection that skips (or fails under CI=true), and readers for the
//! outputs of rttdoc and tshark.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::process::Command;

pub const SYN: u8 = 0x02;
pub const ACK: u8 = 0x10;
pub const PSH: u8 = 0x08;
pub const FIN: u8 = 0x01;
pub const RST: u8 = 0x04;

/// True when running in CI, where a missing tool is a failure, not a skip.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// Checks that every named program is on PATH (and root, if asked).
/// Returns false after printing why when the test must be skipped; panics
/// under CI=true, since .ci/run installs everything.
pub fn require(test: &str, tools: &[&str], root: bool) -> bool {
    let mut missing: Vec<String> = tools
        .iter()
        .filter(|t| which(t).is_none())
        .map(|t| t.to_string())
        .collect();
    if root && !is_root() {
        missing.push("root privileges".into());
    }
    if missing.is_empty() {
        return true;
    }
    let msg = format!("{test}: needs {}", missing.join(", "));
    if in_ci() {
        panic!("{msg} (CI=true: .ci/run must install these)");
    }
    eprintln!("SKIPPED {msg}");
    false
}

pub fn which(tool: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/sbin")])
        .map(|d| d.join(tool))
        .find(|p| p.is_file())
}

pub fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

pub fn rttdoc_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_rttdoc"))
}

/// A fresh temporary directory, removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!(
            "rttdoc-test-{tag}-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
    pub fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    /// Removes the directory, unless `RTTDOC_KEEP_TEMP` is set: a live
    /// capture a test failed on is then there to be read.
    fn drop(&mut self) {
        if std::env::var_os("RTTDOC_KEEP_TEMP").is_some() {
            eprintln!("kept {}", self.0.display());
            return;
        }
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs `scripts/<name>` (a capture script: root, namespaces) with
/// `args`; fails the test with the script's error output if it fails,
/// else returns that output (what the script skipped, say).
pub fn run_capture_script(name: &str, args: &[&std::ffi::OsStr]) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scripts")
        .join(name);
    let out = Command::new("bash")
        .arg(&script)
        .args(args)
        .output()
        .expect("script runs");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{name} failed: {stderr}");
    stderr
}

/// The workspace's tests/data directory.
pub fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data")
}

// ---------------------------------------------------------------- packets

pub struct Tcp<'a> {
    pub src: IpAddr,
    pub dst: IpAddr,
    pub sport: u16,
    pub dport: u16,
    pub seq: u32,
    pub ack: u32,
    pub flags: u8,
    pub window: u16,
    pub options: Vec<u8>,
    pub payload: &'a [u8],
}

impl<'a> Tcp<'a> {
    pub fn new(src: &str, sport: u16, dst: &str, dport: u16) -> Tcp<'a> {
        Tcp {
            src: src.parse().unwrap(),
            dst: dst.parse().unwrap(),
            sport,
            dport,
            seq: 0,
            ack: 0,
            flags: ACK,
            window: 64240,
            options: Vec::new(),
            payload: &[],
        }
    }
    pub fn seq(mut self, seq: u32, ack: u32) -> Self {
        self.seq = seq;
        self.ack = ack;
        self
    }
    pub fn flags(mut self, flags: u8) -> Self {
        self.flags = flags;
        self
    }
    pub fn payload(mut self, p: &'a [u8]) -> Self {
        self.payload = p;
        self
    }
    pub fn options(mut self, o: &[u8]) -> Self {
        self.options = o.to_vec();
        while !self.options.len().is_multiple_of(4) {
            self.options.push(1);
        }
        self
    }

    fn tcp_header(&self) -> Vec<u8> {
        let hlen = 20 + self.options.len();
        let mut t = Vec::with_capacity(hlen + self.payload.len());
        t.extend_from_slice(&self.sport.to_be_bytes());
        t.extend_from_slice(&self.dport.to_be_bytes());
        t.extend_from_slice(&self.seq.to_be_bytes());
        t.extend_from_slice(&self.ack.to_be_bytes());
        t.push(((hlen / 4) as u8) << 4);
        t.push(self.flags);
        t.extend_from_slice(&self.window.to_be_bytes());
        t.extend_from_slice(&[0, 0, 0, 0]);
        t.extend_from_slice(&self.options);
        t.extend_from_slice(self.payload);
        t
    }

    /// The IP packet (v4 or v6 by address family).
    pub fn ip(&self) -> Vec<u8> {
        let tcp = self.tcp_header();
        match (self.src, self.dst) {
            (IpAddr::V4(s), IpAddr::V4(d)) => {
                let total = 20 + tcp.len();
                let mut p = vec![
                    0x45,
                    0,
                    (total >> 8) as u8,
                    total as u8,
                    0x12,
                    0x34,
                    0x40,
                    0,
                    64,
                    6,
                    0,
                    0,
                ];
                p.extend_from_slice(&s.octets());
                p.extend_from_slice(&d.octets());
                let sum = checksum(&p);
                p[10..12].copy_from_slice(&sum.to_be_bytes());
                p.extend(tcp);
                p
            }
            (IpAddr::V6(s), IpAddr::V6(d)) => {
                // with a hop-by-hop extension header in front of TCP
                let plen = 8 + tcp.len();
                let mut p = vec![0x60, 0, 0, 0, (plen >> 8) as u8, plen as u8, 0, 64];
                p.extend_from_slice(&s.octets());
                p.extend_from_slice(&d.octets());
                p.extend_from_slice(&[6, 0, 1, 4, 0, 0, 0, 0]);
                p.extend(tcp);
                p
            }
            _ => panic!("mixed address families"),
        }
    }
}

fn checksum(b: &[u8]) -> u16 {
    let mut sum = 0u32;
    for c in b.chunks(2) {
        sum += u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]) as u32;
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

pub fn ethernet(ip: &[u8], vlans: &[u16]) -> Vec<u8> {
    let mut f = vec![2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2];
    for (i, vid) in vlans.iter().enumerate() {
        f.extend_from_slice(if i == 0 && vlans.len() > 1 {
            &[0x88, 0xa8]
        } else {
            &[0x81, 0x00]
        });
        f.extend_from_slice(&vid.to_be_bytes());
    }
    f.extend_from_slice(if ip[0] >> 4 == 6 {
        &[0x86, 0xdd]
    } else {
        &[0x08, 0x00]
    });
    f.extend_from_slice(ip);
    f
}

pub fn sll2(ip: &[u8]) -> Vec<u8> {
    let mut f = vec![0u8; 20];
    f[0..2].copy_from_slice(if ip[0] >> 4 == 6 {
        &[0x86, 0xdd]
    } else {
        &[0x08, 0x00]
    });
    f[8..10].copy_from_slice(&1u16.to_be_bytes()); // ARPHRD_ETHER
    f[11] = 6;
    f.extend_from_slice(ip);
    f
}

pub fn null_loopback(ip: &[u8], big_endian_loop: bool) -> Vec<u8> {
    let family: u32 = if ip[0] >> 4 == 6 { 30 } else { 2 };
    let mut f = if big_endian_loop {
        family.to_be_bytes().to_vec()
    } else {
        family.to_le_bytes().to_vec()
    };
    f.extend_from_slice(ip);
    f
}

/// A minimal UDP/IPv4 packet (for "non-TCP traffic is skipped").
pub fn udp4(payload: &[u8]) -> Vec<u8> {
    let total = 28 + payload.len();
    let mut p = vec![
        0x45,
        0,
        (total >> 8) as u8,
        total as u8,
        0,
        1,
        0,
        0,
        64,
        17,
        0,
        0,
        10,
        9,
        9,
        1,
        10,
        9,
        9,
        2,
    ];
    p.extend_from_slice(&[0x30, 0x39, 0x00, 0x35, 0, (8 + payload.len()) as u8, 0, 0]);
    p.extend_from_slice(payload);
    p
}

// ---------------------------------------------------------------- writers

pub struct Packet {
    pub ts_ns: i64,
    pub data: Vec<u8>,
    /// Bytes on the wire, when more than `data` (snaplen cut).
    pub orig_len: Option<usize>,
    pub interface: u32,
}

pub fn pkt(ts_us: i64, data: Vec<u8>) -> Packet {
    Packet {
        ts_ns: ts_us * 1000,
        data,
        orig_len: None,
        interface: 0,
    }
}

/// Classic pcap, either byte order, micro- or nanosecond timestamps.
pub fn write_pcap(
    path: &Path,
    linktype: u32,
    packets: &[Packet],
    big_endian: bool,
    nanos: bool,
    snaplen: u32,
) {
    let u32b = |v: u32| {
        if big_endian {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    };
    let u16b = |v: u16| {
        if big_endian {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    };
    let mut out = Vec::new();
    out.extend_from_slice(&u32b(if nanos { 0xa1b23c4d } else { 0xa1b2c3d4 }));
    out.extend_from_slice(&u16b(2));
    out.extend_from_slice(&u16b(4));
    out.extend_from_slice(&[0; 8]);
    out.extend_from_slice(&u32b(snaplen));
    out.extend_from_slice(&u32b(linktype));
    for p in packets {
        let sec = p.ts_ns.div_euclid(1_000_000_000) as u32;
        let frac = p.ts_ns.rem_euclid(1_000_000_000) as u32;
        let frac = if nanos { frac } else { frac / 1000 };
        let cap = p.data.len().min(snaplen as usize);
        out.extend_from_slice(&u32b(sec));
        out.extend_from_slice(&u32b(frac));
        out.extend_from_slice(&u32b(cap as u32));
        out.extend_from_slice(&u32b(p.orig_len.unwrap_or(p.data.len()) as u32));
        out.extend_from_slice(&p.data[..cap]);
    }
    std::fs::write(path, out).unwrap();
}

/// pcapng (little-endian) with one interface per (linktype, if_tsresol).
pub fn write_pcapng(path: &Path, interfaces: &[(u16, u8)], packets: &[Packet]) {
    fn block(out: &mut Vec<u8>, kind: u32, body: &[u8]) {
        let mut body = body.to_vec();
        while !body.len().is_multiple_of(4) {
            body.push(0);
        }
        let len = (12 + body.len()) as u32;
        out.extend_from_slice(&kind.to_le_bytes());
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&body);
        out.extend_from_slice(&len.to_le_bytes());
    }
    fn option(out: &mut Vec<u8>, code: u16, value: &[u8]) {
        out.extend_from_slice(&code.to_le_bytes());
        out.extend_from_slice(&(value.len() as u16).to_le_bytes());
        out.extend_from_slice(value);
        while !out.len().is_multiple_of(4) {
            out.push(0);
        }
    }
    let mut out = Vec::new();
    let mut shb = Vec::new();
    shb.extend_from_slice(&0x1a2b3c4du32.to_le_bytes());
    shb.extend_from_slice(&1u16.to_le_bytes());
    shb.extend_from_slice(&0u16.to_le_bytes());
    shb.extend_from_slice(&(-1i64).to_le_bytes());
    option(&mut shb, 3, b"rttdoc test kit");
    option(&mut shb, 0, &[]);
    block(&mut out, 0x0a0d0d0a, &shb);
    for (linktype, tsresol) in interfaces {
        let mut idb = Vec::new();
        idb.extend_from_slice(&linktype.to_le_bytes());
        idb.extend_from_slice(&0u16.to_le_bytes());
        idb.extend_from_slice(&262144u32.to_le_bytes());
        option(&mut idb, 9, &[*tsresol]);
        option(&mut idb, 0, &[]);
        block(&mut out, 1, &idb);
    }
    for p in packets {
        let (_, tsresol) = interfaces[p.interface as usize];
        let units: u64 = 10u64.pow(tsresol as u32);
        let ts = (p.ts_ns as u128 * units as u128 / 1_000_000_000) as u64;
        let mut epb = Vec::new();
        epb.extend_from_slice(&p.interface.to_le_bytes());
        epb.extend_from_slice(&((ts >> 32) as u32).to_le_bytes());
        epb.extend_from_slice(&(ts as u32).to_le_bytes());
        epb.extend_from_slice(&(p.data.len() as u32).to_le_bytes());
        epb.extend_from_slice(&(p.orig_len.unwrap_or(p.data.len()) as u32).to_le_bytes());
        epb.extend_from_slice(&p.data);
        while !epb.len().is_multiple_of(4) {
            epb.push(0);
        }
        option(&mut epb, 1, b"a comment rttdoc must ignore");
        option(&mut epb, 0, &[]);
        block(&mut out, 6, &epb);
    }
    std::fs::write(path, out).unwrap();
}

pub fn gzip_file(src: &Path, dst: &Path) {
    let status = Command::new("gzip").arg("-c").arg(src).output().unwrap();
    assert!(status.status.success());
    std::fs::write(dst, status.stdout).unwrap();
}

// ---------------------------------------------------------------- outputs

/// What both tools say about one TCP stream.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StreamFacts {
    pub first_frame: u64,
    pub last_frame: u64,
    /// Microseconds, rounded.
    pub initial_rtt_us: Option<i64>,
    pub tls_version: Option<String>,
}

impl StreamFacts {
    /// The facts of one connection of rttdoc's JSON.
    pub fn of(c: &serde_json::Value) -> StreamFacts {
        StreamFacts {
            first_frame: c["first_frame"].as_u64().unwrap(),
            last_frame: c["last_frame"].as_u64().unwrap(),
            initial_rtt_us: c["tcp_handshake_ms"]
                .as_f64()
                .map(|ms| (ms * 1000.0).round() as i64),
            // (A hello that only looked like TLS's: what its server's
            // hello named, as tshark reads it.)
            tls_version: c["tls"]["version"]
                .as_str()
                .or(c["tls_lookalike"]["version"].as_str())
                .map(String::from),
        }
    }
}

/// The findings about what a connection's own packets waited for: all
/// but `connection_not_reused`, which is about the connection before it,
/// not this one's packets (the capture scripts run their clients one
/// after another; tests/reuse.rs judges those).
#[allow(dead_code)] // not every test binary uses every helper
pub fn findings_within(list: &serde_json::Value) -> impl Iterator<Item = &serde_json::Value> {
    list.as_array()
        .into_iter()
        .flatten()
        .filter(|x| x["kind"] != "connection_not_reused")
}

/// The kinds of [`findings_within`].
#[allow(dead_code)] // not every test binary uses every helper
pub fn kinds_within(list: &serde_json::Value) -> Vec<&str> {
    findings_within(list)
        .filter_map(|x| x["kind"].as_str())
        .collect()
}

/// The `kind` of every object in a JSON array (findings, pathologies).
pub fn kinds(list: &serde_json::Value) -> Vec<&str> {
    list.as_array()
        .into_iter()
        .flatten()
        .filter_map(|x| x["kind"].as_str())
        .collect()
}

/// What is wrong with the display filters of an `analyze --json` document
/// of `capture`, as tshark reads them: each must be a filter tshark
/// accepts, and one that names frames (`frame.number in {...}`) must show
/// exactly the frames its finding cites (so the stream number is
/// Wireshark's too). One tshark run for all the findings of a capture.
#[allow(dead_code)] // not every test binary uses every helper
pub fn display_filter_problems(capture: &Path, doc: &serde_json::Value) -> Vec<String> {
    let mut framed = Vec::new();
    let mut cited = std::collections::BTreeSet::new();
    let mut other = std::collections::BTreeSet::new();
    let quic = doc["quic"]["listed"].as_array().into_iter().flatten();
    for c in doc["connections"]
        .as_array()
        .into_iter()
        .flatten()
        .chain(quic)
    {
        for x in c["findings"].as_array().into_iter().flatten() {
            let filter = x["display_filter"].as_str().unwrap_or_default().to_string();
            if filter.contains("frame.number in") {
                cited.extend(
                    x["frames"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|f| f.as_u64()),
                );
                framed.push(filter);
            } else {
                other.insert(filter);
            }
        }
    }
    let mut problems = Vec::new();
    let name = capture.display();
    for (filters, exact) in [(framed, true), (other.into_iter().collect(), false)] {
        if filters.is_empty() {
            continue;
        }
        let combined = filters
            .iter()
            .map(|f| format!("({f})"))
            .collect::<Vec<_>>()
            .join(" || ");
        let out = Command::new("tshark")
            .arg("-r")
            .arg(capture)
            .args(["-Y", &combined, "-T", "fields", "-e", "frame.number"])
            .output()
            .expect("running tshark");
        if !out.status.success() {
            problems.push(format!(
                "{name}: tshark refuses the display filters {filters:?}: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
            continue;
        }
        let shown: std::collections::BTreeSet<u64> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect();
        if exact && shown != cited {
            problems.push(format!(
                "{name}: the findings cite frames {cited:?}, their display filters show {shown:?}"
            ));
        } else if shown.is_empty() {
            problems.push(format!(
                "{name}: the display filters {filters:?} show no frame"
            ));
        }
    }
    problems
}

/// `rttdoc analyze --json` on a lab fixture's capture, with the run's key
/// log when labels.json names one.
pub fn run_fixture_json(dir: &Path, side: &str, labels: &serde_json::Value) -> serde_json::Value {
    let capture = dir.join(format!("{side}.pcapng.gz"));
    match labels["keylog"].as_str() {
        Some(k) => run_rttdoc_json_with(&capture, &["--keylog", &dir.join(k).to_string_lossy()]),
        None => run_rttdoc_json(&capture),
    }
}

/// `rttdoc analyze CAPTURE`'s text for people (not a terminal: no
/// colour, no progress bar); it must succeed.
#[allow(dead_code)] // not every test binary uses every helper
pub fn run_rttdoc_text(capture: &Path) -> String {
    let out = Command::new(rttdoc_bin())
        .arg("analyze")
        .arg(capture)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}: {}",
        capture.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

pub fn run_rttdoc_json(capture: &Path) -> serde_json::Value {
    run_rttdoc_json_with(capture, &[])
}

pub fn run_rttdoc_json_with(capture: &Path, extra: &[&str]) -> serde_json::Value {
    let out = Command::new(rttdoc_bin())
        .args(["analyze", "--json"])
        .args(extra)
        .arg(capture)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("panicked"),
        "rttdoc panicked on {}: {stderr}",
        capture.display()
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "bad JSON from rttdoc on {}: {e}\nstderr: {stderr}",
            capture.display()
        )
    })
}

pub fn rttdoc_streams(capture: &Path) -> BTreeMap<u64, StreamFacts> {
    rttdoc_streams_and_after_report(capture).0
}

/// rttdoc's streams, and how many times the capture came after its
/// connections' reports: a second pass of the trace (the clock went back)
/// and late packets (after a connection's close), which tshark's streams
/// hold and the reports do not.
pub fn rttdoc_streams_and_after_report(capture: &Path) -> (BTreeMap<u64, StreamFacts>, u64) {
    let doc = run_rttdoc_json(capture);
    let after_report = doc["capture"]["capture_restarts"].as_u64().unwrap_or(0)
        + doc["capture"]["late_packets"].as_u64().unwrap_or(0);
    let mut out = BTreeMap::new();
    for c in doc["connections"].as_array().unwrap() {
        let stream = c["stream"].as_u64().unwrap();
        let facts = StreamFacts::of(c);
        assert!(
            out.insert(stream, facts).is_none(),
            "stream {stream} reported twice"
        );
    }
    (out, after_report)
}

pub fn tshark_streams(capture: &Path, extra: &[&str]) -> BTreeMap<u64, StreamFacts> {
    let out = Command::new("tshark")
        .args(["-n", "-r"])
        .arg(capture)
        .args(extra)
        .args([
            "-Y",
            "tcp",
            "-T",
            "fields",
            "-E",
            "separator=|",
            "-e",
            "frame.number",
            "-e",
            "tcp.stream",
            "-e",
            "tcp.analysis.initial_rtt",
            "-e",
            "tls.handshake.type",
            "-e",
            "tls.handshake.extensions.supported_version",
            "-e",
            "tls.handshake.version",
        ])
        .output()
        .expect("tshark runs");
    assert!(
        out.status.success() || !out.stdout.is_empty(),
        "tshark failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut streams: BTreeMap<u64, StreamFacts> = BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let f: Vec<&str> = line.split('|').collect();
        if f.len() < 6 || f[1].is_empty() {
            continue;
        }
        let frame: u64 = f[0].parse().unwrap();
        // A frame carrying several TCP headers (a tunnel's inner and outer
        // TCP, TCP headers quoted in an ICMP error) lists several streams:
        // the last one is the innermost, the connection it carries.
        let Some(stream) = f[1].rsplit(',').next().and_then(|v| v.parse::<u64>().ok()) else {
            continue;
        };
        for other in f[1].split(',').filter_map(|v| v.parse::<u64>().ok()) {
            let s = streams.entry(other).or_insert(StreamFacts {
                first_frame: frame,
                ..Default::default()
            });
            s.last_frame = frame;
        }
        let s = streams.entry(stream).or_insert(StreamFacts {
            first_frame: frame,
            ..Default::default()
        });
        s.last_frame = frame;
        if s.initial_rtt_us.is_none() && !f[2].is_empty() {
            let rtt = f[2].rsplit(',').next().unwrap_or("");
            s.initial_rtt_us = rtt.parse::<f64>().ok().map(|r| (r * 1e6).round() as i64);
        }
        let types: Vec<&str> = f[3].split(',').collect();
        if s.tls_version.is_none() && types.contains(&"2") {
            let v = f[4]
                .split(',')
                .next()
                .filter(|v| !v.is_empty())
                .or(f[5].split(',').next_back());
            s.tls_version = v.map(|v| match v {
                "0x0304" => "TLS 1.3".to_string(),
                "0x0303" => "TLS 1.2".to_string(),
                "0x0302" => "TLS 1.1".to_string(),
                "0x0301" => "TLS 1.0".to_string(),
                other => other.to_string(),
            });
        }
    }
    streams
}

/// Asserts both tools agree on every stream of `capture`.
pub fn assert_agrees_with_tshark(capture: &Path, tshark_extra: &[&str]) {
    let (ours, after_report) = rttdoc_streams_and_after_report(capture);
    let theirs = tshark_streams(capture, tshark_extra);
    assert_eq!(
        ours.keys().collect::<Vec<_>>(),
        theirs.keys().collect::<Vec<_>>(),
        "{}: stream numbering differs",
        capture.display()
    );
    for (stream, t) in &theirs {
        let o = &ours[stream];
        // A second pass of the trace (the clock went back) replays a
        // connection rttdoc may have reported already (after its linger),
        // and a closed connection's late packets come after its report:
        // they keep the stream but not the report's last frame.
        let last = |f: &StreamFacts| if after_report > 0 { 0 } else { f.last_frame };
        assert_eq!(
            (o.first_frame, last(o)),
            (t.first_frame, last(t)),
            "{}: stream {stream} frames",
            capture.display()
        );
        assert!(
            o.last_frame <= t.last_frame,
            "{}: stream {stream} ends after tshark's",
            capture.display()
        );
        let close = match (o.initial_rtt_us, t.initial_rtt_us) {
            (Some(a), Some(b)) => (a - b).abs() <= 1,
            (a, b) => a == b,
        };
        assert!(
            close,
            "{}: stream {stream} initial RTT (us): rttdoc {:?}, tshark {:?}",
            capture.display(),
            o.initial_rtt_us,
            t.initial_rtt_us
        );
        assert_eq!(
            o.tls_version,
            t.tls_version,
            "{}: stream {stream} TLS version",
            capture.display()
        );
    }
}

/// A capture of the shared public corpus beside the checkout
/// (`shared/captures/public/PROJECT/NAME`), or None with the reason
/// printed (with CI=true it must be there).
pub fn public_capture(project: &str, name: &str) -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/captures/public")
        .join(project)
        .join(name);
    if p.is_file() {
        return Some(p);
    }
    assert!(
        !in_ci(),
        "CI=true: the shared corpus must be beside the checkout"
    );
    eprintln!("SKIPPED: no public corpus at {}", p.display());
    None
}

/// PcapPlusPlus's many-protocols.pcap (a Windows browser's page loads,
/// its DNS and its connections), for a test that reads it with tshark:
/// None, said, where tshark or the public corpus is missing (in CI a
/// failure).
pub fn many_protocols_with_tshark(test: &str) -> Option<PathBuf> {
    if !require(test, &["tshark"], false) {
        return None;
    }
    public_capture(
        "seladb-PcapPlusPlus",
        "ExamplesTest__pcap_examples__many-protocols.pcap",
    )
}

/// Browsers' plain HTTP from PcapPlusPlus's test data (wix.com's pages,
/// a mix of protocols, 650 responses), and `more` of its files: what the
/// tests of HTTP's follow-ups (challenges, preflights) compare with
/// tshark's reading. Empty when the corpus is not beside the checkout
/// (public_capture: skipped, said; in CI a failure).
pub fn pcapplusplus_browsing(more: &[&str]) -> Vec<PathBuf> {
    let names = [
        "ExamplesTest__pcap_examples__http-packets2.pcap",
        "ExamplesTest__pcap_examples__many-protocols.pcap",
        "Pcap++Test__PcapExamples__650HttpResponses.pcap",
    ];
    let found: Option<Vec<PathBuf>> = names
        .iter()
        .chain(more)
        .map(|name| public_capture("seladb-PcapPlusPlus", name))
        .collect();
    found.unwrap_or_default()
}

/// Every finding of `kind` in a document, with its connection's stream.
pub fn findings_of<'a>(
    doc: &'a serde_json::Value,
    kind: &str,
) -> Vec<(u64, &'a serde_json::Value)> {
    doc["connections"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|c| {
            c["findings"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(move |x| x["kind"] == kind)
                .map(move |x| (c["stream"].as_u64().unwrap(), x))
        })
        .collect()
}

/// `analyze --json` of a public capture ([`public_capture`]), or None
/// with the reason printed.
pub fn public_doc(project: &str, name: &str) -> Option<serde_json::Value> {
    public_capture(project, name).map(|p| run_rttdoc_json(&p))
}

/// The `fields` tshark reads from each packet of `capture` that `filter`
/// keeps (`-Y`; none when empty), after the preferences `options` (`-o`
/// and its value): a row per packet, a field's occurrences joined by
/// commas.
pub fn tshark_fields(
    capture: &Path,
    options: &[&str],
    filter: &str,
    fields: &[&str],
) -> Vec<Vec<String>> {
    let mut tshark = std::process::Command::new("tshark");
    tshark.arg("-r").arg(capture).args(options);
    if !filter.is_empty() {
        tshark.args(["-Y", filter]);
    }
    tshark.args(["-T", "fields", "-E", "aggregator=,"]);
    for f in fields {
        tshark.args(["-e", f]);
    }
    let out = tshark.output().expect("tshark runs");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect()
}

/// Each data-carrying frame of `capture`: its number, its sender's IP
/// address and its TCP payload's bytes (for protocols tshark has no
/// dissector for).
pub fn tshark_payloads(capture: &Path) -> BTreeMap<u64, (String, Vec<u8>)> {
    let fields = ["frame.number", "ip.src", "tcp.payload"];
    tshark_fields(capture, &[], "tcp.len > 0", &fields)
        .into_iter()
        .map(|f| {
            let bytes = (0..f[2].len() / 2)
                .map(|i| u8::from_str_radix(&f[2][2 * i..2 * i + 2], 16).unwrap())
                .collect();
            (f[0].parse().unwrap(), (f[1].clone(), bytes))
        })
        .collect()
}

/// Fails when any connection of an `analyze --json` document has a
/// finding of `kind`.
pub fn assert_no_finding(doc: &serde_json::Value, kind: &str) {
    for c in doc["connections"].as_array().unwrap() {
        assert!(
            !kinds(&c["findings"]).contains(&kind),
            "stream {}: {}",
            c["stream"],
            c["findings"]
        );
    }
}

/// Connection `stream` of an `analyze --json` document.
pub fn connection(doc: &serde_json::Value, stream: u64) -> &serde_json::Value {
    doc["connections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["stream"] == stream)
        .unwrap_or_else(|| panic!("no stream {stream}"))
}

/// The frames of a connection's NewSessionTickets (`analyze --json`).
pub fn ticket_frames(c: &serde_json::Value) -> Vec<u64> {
    c["tls"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| {
            m["message"]
                .as_str()
                .unwrap()
                .starts_with("NewSessionTicket")
        })
        .map(|m| m["frame"].as_u64().unwrap())
        .collect()
}

/// The first-byte rows of a connection's ledger (the greeting's, then
/// each exchange's), in order.
pub fn first_byte_rows(c: &serde_json::Value) -> impl Iterator<Item = &serde_json::Value> {
    c["ledger"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["phase"] == "first_byte")
}

/// Every turn of an `analyze --json` document, connection by connection:
/// the first and last frames of each first-byte row (the question's
/// first segment, the answer's).
pub fn turn_frames(doc: &serde_json::Value) -> Vec<(u64, u64)> {
    doc["connections"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(first_byte_rows)
        .map(|r| {
            let frame = |k: &str| r[k].as_u64().unwrap();
            (frame("start_frame"), frame("end_frame"))
        })
        .collect()
}

/// The waits of a connection's `server_think_time` for answers (the
/// first-byte phase): (request frame, answer frame, ms).
pub fn think_waits(c: &serde_json::Value) -> Vec<(u64, u64, f64)> {
    waits_of(c, "server_think_time", "first_byte")
}

/// A connection's finding of `kind` in `phase` (the first, when several);
/// fails when there is none.
pub fn finding_in<'a>(c: &'a serde_json::Value, kind: &str, phase: &str) -> &'a serde_json::Value {
    c["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == kind && f["phase"] == phase)
        .unwrap_or_else(|| panic!("no {kind} in {phase}: {}", c["findings"]))
}

/// The waits of a connection's findings of `kind` in `phase`: (from
/// frame, to frame, ms).
pub fn waits_of(c: &serde_json::Value, kind: &str, phase: &str) -> Vec<(u64, u64, f64)> {
    c["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == kind && f["phase"] == phase)
        .flat_map(|f| f["waits"].as_array().unwrap())
        .map(|w| {
            let frame = |k: &str| w[k].as_u64().unwrap();
            (
                frame("from_frame"),
                frame("to_frame"),
                w["ms"].as_f64().unwrap(),
            )
        })
        .collect()
}

/// An HTTP/2 header block as tshark reads it (through the key log the
/// pcapng carries): a request's URL, or an answer's status and
/// `Location`.
#[derive(Debug)]
pub struct Http2Block {
    pub frame: u64,
    pub time: f64,
    pub src: String,
    pub dst: String,
    pub tcp_stream: u64,
    pub h2_stream: u64,
    pub method: Option<String>,
    pub url: Option<String>,
    pub authorization: bool,
    pub proxy_authorization: bool,
    pub status: Option<u16>,
    pub location: Option<String>,
    /// A `www-authenticate` or `proxy-authenticate` field.
    pub challenge: bool,
    /// An `access-control-request-method` field's value (a CORS
    /// preflight's: tshark names it only as a header's name and value).
    pub preflight_method: Option<String>,
}

/// Every HTTP/2 request and every answer with a status in `capture`,
/// from tshark's JSON (each HTTP/2 frame an object with its stream id and
/// the header fields it decoded): the oracle's reading of HTTP/2
/// redirects and challenges. `extra`: tshark's options (`-d` for h2c on
/// a port it does not take for HTTP).
pub fn http2_blocks(capture: &Path, extra: &[&str]) -> Vec<Http2Block> {
    use serde_json::Value;
    let out = std::process::Command::new("tshark")
        .args(["-n", "-r"])
        .arg(capture)
        .args(extra)
        .args([
            "-Y",
            "http2.request.full_uri || http2.headers.status",
            "-T",
            "json",
            "--no-duplicate-keys",
            "-J",
            "frame ip ipv6 tcp http2",
        ])
        .output()
        .expect("tshark runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let packets: Value = serde_json::from_slice(&out.stdout).expect("tshark's JSON");
    // (A field tshark saw more than once is an array of its values.)
    fn first(v: Option<&Value>) -> Option<&str> {
        match v? {
            Value::String(s) => Some(s),
            Value::Array(a) => first(a.first()),
            _ => None,
        }
    }
    fn find<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
        match v {
            Value::Object(o) => first(o.get(key)).or_else(|| o.values().find_map(|v| find(v, key))),
            Value::Array(a) => a.iter().find_map(|v| find(v, key)),
            _ => None,
        }
    }
    // (A header tshark has no field of its own for: an object with its
    // name and value.)
    fn header<'a>(v: &'a Value, name: &str) -> Option<&'a str> {
        match v {
            Value::Object(o) if first(o.get("http2.header.name")) == Some(name) => {
                first(o.get("http2.header.value"))
            }
            Value::Object(o) => o.values().find_map(|v| header(v, name)),
            Value::Array(a) => a.iter().find_map(|v| header(v, name)),
            _ => None,
        }
    }
    fn frames<'a>(v: &'a Value, out: &mut Vec<&'a Value>) {
        match v {
            Value::Object(o) if o.contains_key("http2.streamid") => out.push(v),
            Value::Object(o) => o.values().for_each(|v| frames(v, out)),
            Value::Array(a) => a.iter().for_each(|v| frames(v, out)),
            _ => {}
        }
    }
    let mut blocks = Vec::new();
    for p in packets.as_array().expect("packets") {
        let l = &p["_source"]["layers"];
        let field = |layer: &str, key: &str| find(&l[layer], key).map(str::to_string);
        let addr =
            |key: &str| field("ip", &format!("ip.{key}")).or(field("ipv6", &format!("ipv6.{key}")));
        let mut h2 = Vec::new();
        frames(&l["http2"], &mut h2);
        for f in h2 {
            let block = Http2Block {
                frame: field("frame", "frame.number").unwrap().parse().unwrap(),
                time: field("frame", "frame.time_epoch").unwrap().parse().unwrap(),
                src: addr("src").unwrap_or_default(),
                dst: addr("dst").unwrap_or_default(),
                tcp_stream: field("tcp", "tcp.stream").unwrap().parse().unwrap(),
                h2_stream: find(f, "http2.streamid").unwrap().parse().unwrap(),
                method: find(f, "http2.headers.method").map(str::to_string),
                url: find(f, "http2.request.full_uri").map(str::to_string),
                authorization: find(f, "http2.headers.authorization").is_some(),
                proxy_authorization: find(f, "http2.headers.proxy_authorization").is_some(),
                status: find(f, "http2.headers.status").and_then(|s| s.parse().ok()),
                location: find(f, "http2.headers.location").map(str::to_string),
                challenge: find(f, "http2.headers.www_authenticate").is_some()
                    || find(f, "http2.headers.proxy_authenticate").is_some(),
                preflight_method: header(f, "access-control-request-method").map(str::to_string),
            };
            if block.url.is_some() || block.status.is_some() {
                blocks.push(block);
            }
        }
    }
    blocks
}

/// Each frame's capture time, in seconds, as tshark reads it.
pub fn frame_times(capture: &Path) -> BTreeMap<u64, f64> {
    tshark_fields(capture, &[], "", &["frame.number", "frame.time_epoch"])
        .iter()
        .map(|r| (r[0].parse().unwrap(), r[1].parse().unwrap()))
        .collect()
}

/// A finding's round trips on the network: each wait from its start to
/// the answer that released it (a redirect, a challenge, a preflight's
/// answer), read with tshark, without the client's own time from that
/// answer to the packet that ended the wait, nor the server's own work
/// the wait leaves out. A live run on a loaded
/// machine adds milliseconds of the client's own there (curl's,
/// Chromium's), and the path (a Python relay, scripts/tun-delay.py) some
/// of its own to a round trip: bounds on this tell N round trips from
/// N+1 (up to half a round trip over), not a quiet machine from a busy
/// one.
pub fn network_rtts(capture: &Path, x: &serde_json::Value) -> f64 {
    let times = frame_times(capture);
    let cost_ms = x["cost_ms"].as_f64().unwrap();
    let rtt_ms = cost_ms / x["cost_rtts"].as_f64().unwrap();
    let waits = x["waits"].as_array().unwrap_or_else(|| panic!("{x}"));
    let network_ms: f64 = waits
        .iter()
        .map(|w| {
            let frame = |k: &str| w[k].as_u64().unwrap_or_else(|| panic!("{k}: {x}"));
            let at = |k: &str| times[&frame(k)];
            // (A wait leaves out the server's own work on the request
            // the answer answered: what its span exceeds it by.)
            let work_ms = (at("to_frame") - at("from_frame")) * 1e3 - w["ms"].as_f64().unwrap();
            let ms = (at("release_frame") - at("from_frame")) * 1e3 - work_ms;
            assert!(work_ms >= -0.01 && ms >= -0.01, "{x}");
            ms
        })
        .sum();
    network_ms / rtt_ms
}

/// tshark's options to read each segment alone: an HTTP head is named by
/// the segment it starts in, as rttdoc names it.
pub const ONE_SEGMENT_AT_A_TIME: &[&str] = &["-o", "tcp.desegment_tcp_streams:FALSE"];

/// An HTTP request as tshark reads it: the oracle's reading of what
/// HTTP's follow-ups (a challenge's, a preflight's) are known by.
#[derive(Debug, Clone)]
pub struct HttpRequest {
    pub frame: u64,
    pub time: f64,
    pub client: String,
    pub stream: u64,
    pub method: String,
    /// The whole URL (`http.request.full_uri`, HTTP/2's).
    pub url: String,
    pub authorization: bool,
    pub proxy_authorization: bool,
    /// A CORS preflight's `Access-Control-Request-Method`.
    pub preflight_method: Option<String>,
}

/// Every HTTP request of `capture`, in frame order: HTTP/1.x read one
/// segment at a time, HTTP/2 from its header blocks (through the key
/// log in a pcapng); and the HTTP/2 blocks themselves.
pub fn http_requests(capture: &Path) -> (Vec<HttpRequest>, Vec<Http2Block>) {
    let mut requests: Vec<HttpRequest> = tshark_fields(
        capture,
        ONE_SEGMENT_AT_A_TIME,
        "http.request && tcp",
        &[
            "frame.number",
            "frame.time_epoch",
            "ip.src",
            "ipv6.src",
            "tcp.stream",
            "http.request.method",
            "http.request.full_uri",
            "http.authorization",
            "http.proxy_authorization",
            "http.request.line",
        ],
    )
    .iter()
    .map(|r| HttpRequest {
        frame: r[0].parse().unwrap(),
        time: r[1].parse().unwrap(),
        client: if r[2].is_empty() {
            r[3].clone()
        } else {
            r[2].clone()
        },
        stream: r[4].parse().unwrap(),
        method: r[5].clone(),
        url: r[6].clone(),
        authorization: !r[7].is_empty(),
        proxy_authorization: !r[8].is_empty(),
        // (tshark joins the head's lines, each ending in an escaped
        // CRLF, with commas.)
        preflight_method: r[9].split("\\r\\n").find_map(|line| {
            let line = line.trim_start_matches(',');
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("Access-Control-Request-Method")
                .then(|| value.trim().to_string())
        }),
    })
    .collect();
    let h2 = http2_blocks(capture, &[]);
    for b in &h2 {
        let (Some(method), Some(url)) = (&b.method, &b.url) else {
            continue;
        };
        requests.push(HttpRequest {
            frame: b.frame,
            time: b.time,
            client: b.src.clone(),
            stream: b.tcp_stream,
            method: method.clone(),
            url: url.clone(),
            authorization: b.authorization,
            proxy_authorization: b.proxy_authorization,
            preflight_method: b.preflight_method.clone(),
        });
    }
    requests.sort_by_key(|r| r.frame);
    (requests, h2)
}

/// The request an HTTP/2 answer's block answers: the last request before
/// it on its connection and stream.
pub fn http2_request_of<'a>(
    blocks: &'a [Http2Block],
    answer: &Http2Block,
) -> Option<&'a Http2Block> {
    blocks.iter().rev().find(|q| {
        q.url.is_some()
            && q.frame < answer.frame
            && (q.tcp_stream, q.h2_stream) == (answer.tcp_stream, answer.h2_stream)
    })
}

/// The frames a finding cites (its `frames`).
pub fn frames_cited(x: &serde_json::Value) -> Vec<u64> {
    x["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_u64().unwrap())
        .collect()
}

/// A finding's frames (its JSON `frames` array) as numbers.
pub fn frames_of(finding: &serde_json::Value) -> Vec<u64> {
    finding["frames"]
        .as_array()
        .unwrap_or_else(|| panic!("no frames: {finding}"))
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect()
}
