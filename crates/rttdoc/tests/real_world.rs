//! Real captures nobody on this project made: every file in
//! `../shared/captures/public/` (public test data of tcpdump, PcapPlusPlus
//! and tcpreplay, see its README) is read as it is and checked against
//! tshark and against the rules every finding must obey:
//!
//! - every file tshark reads, rttdoc reads (no refusal, no panic);
//! - connection count, `tcp.stream` numbers, first and last frames, the
//!   initial RTT and the TLS version agree with tshark, connection by
//!   connection;
//! - causality (detect/causality.rs): a wait's releasing packet comes from
//!   the other side and before what it released, a wait is no longer than
//!   the capture shows, Nagle never holds a full-size segment, a finding's
//!   cost is the sum of its waits, its frames belong to its stream;
//! - the numbers add up: per connection, the latency excess is the sum of
//!   the attributed costs plus the unexplained rest; the capture summary
//!   likewise, counting a connection seen again under translated addresses
//!   (a NAT gateway's capture) once;
//! - the judged findings in docs/real-world.md keep their verdicts: a
//!   finding judged right is still reported, one judged wrong is not.
//!
//! All problems across the corpus are collected and reported together.

mod common;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;

fn corpus_dir() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/captures/public");
    if dir.is_dir() {
        return Some(dir);
    }
    let msg = format!("real_world: no public captures at {}", dir.display());
    if in_ci() {
        panic!("{msg} (CI=true: the shared corpus must be beside the checkout)");
    }
    eprintln!("SKIPPED {msg}");
    None
}

fn corpus_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .flat_map(|d| std::fs::read_dir(d.path()).unwrap().flatten())
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

/// What tshark says about one frame.
#[derive(Debug, Clone, Default)]
struct FrameFacts {
    time_ns: i64,
    stream: Option<u64>,
    src_port: u16,
    tcp_len: u32,
    /// A DNS message over UDP (a name lookup's query or answer).
    dns: bool,
}

/// The kinds about the time before a connection's SYN: their frames are
/// the client's DNS queries, its resolver's answers and the client's SYNs
/// (this connection's, and those to the addresses it tried first).
const BEFORE_SYN_KINDS: [&str; 3] = ["dns_query_lost", "dns_search_list", "address_fallback"];

/// Kinds whose evidence includes another connection's frames (the
/// display filter names its stream) and name lookups.
const OTHER_STREAM_KINDS: [&str; 2] = ["http_redirect", "certificate_fetch"];

/// tshark's view of a file: per stream facts and per frame facts; None
/// when tshark cannot read the file.
type TsharkView = (BTreeMap<u64, StreamFacts>, HashMap<u64, FrameFacts>);

fn tshark_view(capture: &Path) -> Option<TsharkView> {
    let readable = Command::new("tshark")
        .args(["-n", "-c", "1", "-r"])
        .arg(capture)
        .output()
        .ok()?;
    if !readable.status.success() {
        return None;
    }
    let streams = tshark_streams(capture, &[]);
    let out = Command::new("tshark")
        .args(["-n", "-r"])
        .arg(capture)
        .args([
            "-Y",
            "tcp || (dns && udp)",
            "-T",
            "fields",
            "-E",
            "separator=|",
        ])
        .args(["-e", "frame.number", "-e", "frame.time_epoch"])
        .args(["-e", "tcp.stream", "-e", "tcp.srcport", "-e", "tcp.len"])
        .args(["-e", "udp.srcport", "-e", "dns.id"])
        .output()
        .expect("tshark runs");
    let mut frames = HashMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let f: Vec<&str> = line.split('|').collect();
        if f.len() < 7 {
            continue;
        }
        let Ok(number) = f[0].parse::<u64>() else {
            continue;
        };
        let time_ns = parse_epoch_ns(f[1]);
        // Tunnels: the inner (last) TCP header is the connection's.
        let last = |s: &str| s.rsplit(',').next().unwrap_or("").to_string();
        let dns = f[2].is_empty() && !f[6].is_empty();
        frames.insert(
            number,
            FrameFacts {
                time_ns,
                stream: last(f[2]).parse().ok(),
                src_port: if dns {
                    last(f[5]).parse().unwrap_or(0)
                } else {
                    last(f[3]).parse().unwrap_or(0)
                },
                tcp_len: last(f[4]).parse().unwrap_or(0),
                dns,
            },
        );
    }
    Some((streams, frames))
}

/// "1700000000.123456789" -> ns, without going through f64.
fn parse_epoch_ns(s: &str) -> i64 {
    let (sec, frac) = s.split_once('.').unwrap_or((s, "0"));
    let mut frac = frac.to_string();
    frac.truncate(9);
    while frac.len() < 9 {
        frac.push('0');
    }
    // Saturating: fuzzed test files carry timestamps past year 2262.
    sec.parse::<i64>()
        .unwrap_or(0)
        .saturating_mul(1_000_000_000)
        .saturating_add(frac.parse::<i64>().unwrap_or(0))
}

/// Differences from tshark that are understood and accepted, each with
/// its reason (also in docs/real-world.md, "Known differences"). A problem
/// is excused when it starts with the file name and contains the text;
/// an entry that excuses nothing fails the test, so the list stays true.
const KNOWN_DIFFERENCES: &[(&str, &str, &str)] = &[
    (
        "ExamplesTest__pcap_examples__tcp-reassembly.pcap",
        "",
        "frame 66 is an sFlow datagram carrying sampled packet headers: tshark gives each sampled TCP header a tcp.stream; rttdoc does not read sFlow",
    ),
    (
        "Pcap++Test__PcapExamples__pcapng-example.pcapng",
        "stream 11 initial RTT",
        "the SYN's timestamp is 584 billion years after 1970; rttdoc's nanosecond clock saturates at year 2262, so the 22 µs between SYN and RST reads as 0",
    ),
];

const NAGLE_KINDS: [&str; 3] = ["nagle_hold", "nagle_delayed_ack", "write_write_read"];

/// Checks one file; returns the problems found.
fn check_file(path: &Path, doc: &serde_json::Value, view: &TsharkView) -> Vec<String> {
    let name = path.file_name().unwrap().to_string_lossy().to_string();
    let mut problems = Vec::new();
    let (theirs, frames) = view;
    let conns = doc["connections"].as_array().cloned().unwrap_or_default();

    // Agreement with tshark, connection by connection.
    let mut ours: BTreeMap<u64, StreamFacts> = BTreeMap::new();
    for c in &conns {
        ours.insert(c["stream"].as_u64().unwrap(), StreamFacts::of(c));
    }
    if ours.keys().ne(theirs.keys()) {
        problems.push(format!(
            "{name}: streams differ: rttdoc {} connections {:?}, tshark {} {:?}",
            ours.len(),
            ours.keys().take(8).collect::<Vec<_>>(),
            theirs.len(),
            theirs.keys().take(8).collect::<Vec<_>>()
        ));
    }
    for (stream, t) in theirs {
        let Some(o) = ours.get(stream) else { continue };
        if (o.first_frame, o.last_frame) != (t.first_frame, t.last_frame) {
            problems.push(format!(
                "{name}: stream {stream} frames {}-{} (tshark {}-{})",
                o.first_frame, o.last_frame, t.first_frame, t.last_frame
            ));
        }
        let close = match (o.initial_rtt_us, t.initial_rtt_us) {
            (Some(a), Some(b)) => (a - b).abs() <= 1,
            (a, b) => a == b,
        };
        if !close {
            problems.push(format!(
                "{name}: stream {stream} initial RTT {:?} us (tshark {:?})",
                o.initial_rtt_us, t.initial_rtt_us
            ));
        }
        if o.tls_version != t.tls_version {
            problems.push(format!(
                "{name}: stream {stream} TLS {:?} (tshark {:?})",
                o.tls_version, t.tls_version
            ));
        }
    }

    // Causality and costs, finding by finding.
    for c in &conns {
        let stream = c["stream"].as_u64().unwrap();
        let client_port = c["client"]["port"].as_u64().unwrap_or(0) as u16;
        let rtt_ns = (c["rtt_ms"].as_f64().unwrap_or(0.0) * 1e6) as i64;
        let excess = c["excess_ms"].as_f64().unwrap_or(0.0);
        let mut attributed = 0.0;
        for x in c["findings"].as_array().cloned().unwrap_or_default() {
            let kind = x["kind"].as_str().unwrap_or("?").to_string();
            let at = format!("{name}: stream {stream} {kind}");
            let cost = x["cost_ms"].as_f64().unwrap_or(0.0);
            if cost == 0.0 && cost.is_sign_negative() {
                problems.push(format!("{at}: a cost of -0.0 ms"));
            }
            let share = x["attributed_ms"].as_f64().unwrap_or(0.0);
            attributed += share;
            if share < -1e-9 || share > cost.max(0.0) + 1e-6 {
                problems.push(format!("{at}: attributed {share} ms of a {cost} ms cost"));
            }
            let before_syn = BEFORE_SYN_KINDS.contains(&kind.as_str());
            // (A redirect's frames are on the connection that carried it,
            // which its display filter names, and a follow-up's lookup; a
            // certificate fetch's on its own connection and its lookup.)
            let named: Vec<u64> = x["display_filter"]
                .as_str()
                .unwrap_or_default()
                .split("tcp.stream eq ")
                .skip(1)
                .filter_map(|r| r.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok())
                .collect();
            for f in x["frames"].as_array().cloned().unwrap_or_default() {
                let f = f.as_u64().unwrap();
                let ff = frames.get(&f);
                if OTHER_STREAM_KINDS.contains(&kind.as_str()) {
                    if !ff.is_some_and(|ff| ff.dns || ff.stream.is_some_and(|s| named.contains(&s)))
                    {
                        problems.push(format!(
                            "{at}: cites frame {f}, neither DNS nor in the streams {named:?}"
                        ));
                    }
                } else if before_syn {
                    // A DNS message, or a SYN of this or another stream
                    // (an address tried first).
                    if !ff.is_some_and(|ff| ff.dns || ff.stream.is_some()) {
                        problems.push(format!("{at}: cites frame {f}, neither DNS nor TCP"));
                    }
                } else if ff.and_then(|ff| ff.stream) != Some(stream) {
                    problems.push(format!("{at}: cites frame {f}, not in the stream"));
                }
            }
            if kind == "retransmission" && x["frames"].as_array().is_none_or(|v| v.is_empty()) {
                problems.push(format!("{at}: cites no frame"));
            }
            let waits = x["waits"].as_array().cloned().unwrap_or_default();
            if waits.is_empty() {
                continue;
            }
            let sum: f64 = waits.iter().map(|w| w["ms"].as_f64().unwrap()).sum();
            if (sum - cost).abs() > 0.01 {
                problems.push(format!("{at}: cost {cost} ms but waits sum to {sum} ms"));
            }
            for w in &waits {
                let get = |k: &str| w[k].as_u64().and_then(|n| frames.get(&n).map(|f| (n, f)));
                let (Some((fnum, from)), Some((tnum, to))) = (get("from_frame"), get("to_frame"))
                else {
                    problems.push(format!("{at}: wait {w} names unknown frames"));
                    continue;
                };
                let ms = w["ms"].as_f64().unwrap();
                let span_ms = (to.time_ns - from.time_ns) as f64 / 1e6;
                let slack_ms = if from.src_port == to.src_port {
                    0.01
                } else {
                    rtt_ns as f64 / 1e6 + 1.0
                };
                if fnum > tnum || ms > span_ms + slack_ms {
                    problems.push(format!(
                        "{at}: wait {fnum}->{tnum} of {ms} ms, capture shows {span_ms} ms"
                    ));
                }
                if let Some((rnum, rel)) = get("release_frame") {
                    if rnum >= tnum || rel.time_ns > to.time_ns {
                        problems.push(format!(
                            "{at}: frame {rnum} releases {tnum}, but comes after it"
                        ));
                    }
                    if rel.src_port == to.src_port {
                        problems.push(format!(
                            "{at}: frame {rnum} releases {tnum} from the same side"
                        ));
                    }
                }
                if NAGLE_KINDS.contains(&kind.as_str()) {
                    let sender_is_client = to.src_port == client_port;
                    let peer_mss = if sender_is_client {
                        c["handshake"]["server_mss"].as_u64()
                    } else {
                        c["handshake"]["client_mss"].as_u64()
                    }
                    .unwrap_or(1460) as u32;
                    if to.tcp_len >= peer_mss {
                        problems.push(format!(
                            "{at}: Nagle cannot hold frame {tnum}, a full segment ({} bytes)",
                            to.tcp_len
                        ));
                    }
                }
            }
        }
        let unexplained = c["unexplained_ms"].as_f64().unwrap_or(0.0);
        if (excess - attributed - unexplained).abs() > 0.01 {
            problems.push(format!(
                "{name}: stream {stream}: excess {excess} ms != attributed {attributed} + unexplained {unexplained}"
            ));
        }
        // Of what no finding claimed, the hosts' turnarounds and the
        // path's queues, which only tls_extra_rtt names, no more than it.
        let part = |k: &str| c[k].as_f64().unwrap_or(0.0);
        let (turns, path) = (
            part("client_turnaround_ms") + part("server_turnaround_ms"),
            part("path_queue_ms"),
        );
        let named = c["findings"]
            .as_array()
            .is_some_and(|xs| xs.iter().any(|x| x["kind"] == "tls_extra_rtt"));
        if turns + path > unexplained + 0.01 || (path > 0.0 && !named) {
            problems.push(format!(
                "{name}: stream {stream}: turnarounds {turns} + path {path} ms over unexplained {unexplained} (tls_extra_rtt found: {named})"
            ));
        }
    }
    let s = &doc["summary"];
    let total = s["excess_ms_total"].as_f64().unwrap_or(0.0);
    let parts =
        s["explained_ms"].as_f64().unwrap_or(0.0) + s["unexplained_ms"].as_f64().unwrap_or(0.0);
    if (total - parts).abs() > 0.05 {
        problems.push(format!(
            "{name}: summary latency {total} ms != explained + unexplained {parts} ms"
        ));
    }
    // A connection seen again under translated addresses is counted once,
    // under the stream it is the same as, which the capture holds.
    let copies: Vec<&serde_json::Value> = conns
        .iter()
        .filter(|c| !c["same_connection_as"].is_null())
        .collect();
    let counted: f64 = conns
        .iter()
        .filter(|c| c["same_connection_as"].is_null())
        .map(|c| c["excess_ms"].as_f64().unwrap_or(0.0))
        .sum();
    if (total - counted).abs() > 0.05
        || s["translated_copies"].as_u64() != Some(copies.len() as u64)
    {
        problems.push(format!(
            "{name}: summary latency {total} ms, connections counted once {counted} ms; {} translated copies, summary says {}",
            copies.len(),
            s["translated_copies"]
        ));
    }
    for c in copies {
        let first = c["same_connection_as"].as_u64();
        if first.is_none_or(|f| f >= c["stream"].as_u64().unwrap() || !ours.contains_key(&f)) {
            problems.push(format!(
                "{name}: stream {} is the same as {first:?}",
                c["stream"]
            ));
        }
    }
    problems
}

/// One judged finding from docs/real-world.md.
#[derive(Debug)]
struct Verdict {
    file: String,
    stream: u64,
    kind: String,
    frame: u64,
    right: bool,
}

/// The judged table: rows `| file | stream | kind | frames | verdict | why |`
/// under the heading "## Judged findings".
fn verdicts() -> Vec<Verdict> {
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/real-world.md"),
    )
    .expect("docs/real-world.md");
    let Some((_, table)) = doc.split_once("## Judged findings") else {
        panic!("docs/real-world.md has no '## Judged findings' section");
    };
    let mut out = Vec::new();
    for line in table.lines().take_while(|l| !l.starts_with("## ")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.len() < 7 || cells[2].parse::<u64>().is_err() {
            continue;
        }
        let frame = cells[4]
            .split(|c: char| !c.is_ascii_digit())
            .find(|s| !s.is_empty())
            .and_then(|s| s.parse().ok())
            .expect("a frame in the frames column");
        let right = match cells[5] {
            v if v.starts_with("right") => true,
            v if v.starts_with("wrong") => false,
            other => panic!("verdict must be right or wrong, not {other:?}"),
        };
        out.push(Verdict {
            file: cells[1].trim_matches('`').to_string(),
            stream: cells[2].parse().unwrap(),
            kind: cells[3].trim_matches('`').to_string(),
            frame,
            right,
        });
    }
    out
}

#[test]
fn every_public_capture_is_read_agrees_with_tshark_and_obeys_causality() {
    let Some(dir) = corpus_dir() else { return };
    if !require("real_world", &["tshark"], false) {
        return;
    }
    let files = corpus_files(&dir);
    assert!(
        files.len() >= 50,
        "only {} files in {}",
        files.len(),
        dir.display()
    );
    let judged = verdicts();
    let mut problems = Vec::new();
    let mut read = 0;
    for path in &files {
        let Some(view) = tshark_view(path) else {
            eprintln!("tshark cannot read {}: skipped", path.display());
            continue;
        };
        let out = Command::new(rttdoc_bin())
            .args(["analyze", "--json"])
            .arg(path)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if stderr.contains("panicked") {
            problems.push(format!("{name}: rttdoc panicked: {stderr}"));
            continue;
        }
        let Ok(doc) = serde_json::from_slice::<serde_json::Value>(&out.stdout) else {
            problems.push(format!("{name}: refused or no JSON: {}", stderr.trim()));
            continue;
        };
        if let Some(e) = doc["capture"]["error"].as_str() {
            problems.push(format!("{name}: reading stopped: {e}"));
        }
        read += 1;
        problems.extend(check_file(path, &doc, &view));
        problems.extend(display_filter_problems(path, &doc));
        for v in judged.iter().filter(|v| v.file == name) {
            let reported = doc["connections"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|c| c["stream"].as_u64() == Some(v.stream))
                .flat_map(|c| c["findings"].as_array().cloned().unwrap_or_default())
                .any(|x| {
                    x["kind"] == v.kind.as_str()
                        && x["frames"]
                            .as_array()
                            .is_some_and(|fs| fs.iter().any(|f| f.as_u64() == Some(v.frame)))
                });
            if reported != v.right {
                problems.push(format!(
                    "{name}: stream {} {} at frame {}: judged {}, but rttdoc {} it",
                    v.stream,
                    v.kind,
                    v.frame,
                    if v.right { "right" } else { "wrong" },
                    if reported {
                        "reports"
                    } else {
                        "no longer reports"
                    }
                ));
            }
        }
    }
    for v in &judged {
        assert!(
            files
                .iter()
                .any(|f| f.file_name().unwrap().to_string_lossy() == v.file),
            "docs/real-world.md judges {}, which is not in the corpus",
            v.file
        );
    }
    eprintln!(
        "real_world: {read} of {} files read, {} judged findings",
        files.len(),
        judged.len()
    );
    let mut excused = vec![false; KNOWN_DIFFERENCES.len()];
    problems.retain(|p| {
        let known = KNOWN_DIFFERENCES
            .iter()
            .position(|(file, text, _)| p.starts_with(file) && p.contains(text));
        if let Some(i) = known {
            eprintln!("known difference: {p} ({})", KNOWN_DIFFERENCES[i].2);
            excused[i] = true;
        }
        known.is_none()
    });
    for (i, (file, text, _)) in KNOWN_DIFFERENCES.iter().enumerate() {
        if !excused[i] {
            problems.push(format!(
                "{file}: the known difference {text:?} no longer happens: remove it from KNOWN_DIFFERENCES and docs/real-world.md"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "{} problems on real captures:\n{}",
        problems.len(),
        problems.join("\n")
    );
}
