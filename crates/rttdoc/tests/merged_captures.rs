//! Several captures read as one (`rttdoc analyze A B C`): a ring
//! buffer's files, or the captures of two vantage points, merged by time
//! as `mergecap` merges them, so that every frame number and tcp.stream
//! rttdoc gives is the one Wireshark shows in `mergecap -w merged.pcapng
//! A B C`. The oracle is mergecap itself: rttdoc on the files must say
//! exactly what it says on mergecap's merge of them.

mod common;

use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn analyze(args: &[&Path], extra: &[&str]) -> Output {
    let out = Command::new(rttdoc_bin())
        .arg("analyze")
        .args(extra)
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    out
}

fn json(args: &[&Path]) -> Value {
    let out = analyze(args, &["--json"]);
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", String::from_utf8_lossy(&out.stderr)))
}

/// `mergecap -w OUT FILES` (its default: a merge by time, to pcapng).
fn mergecap(files: &[&Path], out: &Path) {
    let status = Command::new("mergecap")
        .arg("-w")
        .arg(out)
        .args(files)
        .status()
        .unwrap();
    assert!(status.success(), "mergecap {files:?}");
}

/// `editcap OPTIONS IN OUT`.
fn editcap(options: &[&str], input: &Path, out: &Path) {
    let status = Command::new("editcap")
        .args(options)
        .arg(input)
        .arg(out)
        .status()
        .unwrap();
    assert!(status.success(), "editcap {options:?} {}", input.display());
}

/// rttdoc on `files`, and on mergecap's merge of them (written to `out`).
fn merged_and_oracle(files: &[&Path], out: &Path) -> (Value, Value) {
    let merged = json(files);
    mergecap(files, out);
    (merged, json(&[out]))
}

/// One of PcapPlusPlus's public captures, when `tools` are here too (or
/// None, said).
fn sample(name: &str, tools: &[&str]) -> Option<PathBuf> {
    if !require("merged captures", tools, false) {
        return None;
    }
    public_capture("seladb-PcapPlusPlus", name)
}

/// A document's connections and counters, without what names the input.
fn without_names(mut doc: Value) -> Value {
    let capture = doc["capture"].as_object_mut().unwrap();
    capture.remove("file");
    capture.remove("merged_files");
    capture.remove("merged_files_overlap");
    capture.remove("merged_runs");
    capture.remove("merged_runs_cut");
    doc
}

/// `capture` cut into pieces of `packets` frames by editcap (named in
/// time order: `piece_00000_...`), newest first: the order a careless
/// glob or a ring's wrapped names give.
fn cut(capture: &Path, packets: u32, dir: &TempDir) -> Vec<PathBuf> {
    editcap(
        &["-c", &packets.to_string()],
        capture,
        &dir.path("piece.pcapng"),
    );
    let mut pieces: Vec<PathBuf> = std::fs::read_dir(&dir.0)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().contains("piece_"))
        .collect();
    pieces.sort();
    pieces.reverse();
    pieces
}

#[test]
fn a_capture_cut_into_pieces_reads_as_the_capture_given_in_any_order() {
    let Some(whole) = sample(
        "ExamplesTest__pcap_examples__many-protocols.pcap",
        &["editcap", "mergecap"],
    ) else {
        return;
    };
    let dir = TempDir::new("merged-pieces");
    let pieces = cut(&whole, 1500, &dir);
    assert!(pieces.len() >= 3, "{pieces:?}");
    let refs: Vec<&Path> = pieces.iter().map(PathBuf::as_path).collect();
    let merged = json(&refs);
    assert_eq!(
        merged["capture"]["merged_files"],
        serde_json::json!(pieces
            .iter()
            .map(|p| p.to_string_lossy())
            .collect::<Vec<_>>())
    );
    assert_eq!(
        merged["capture"]["file"],
        pieces[0].to_string_lossy().as_ref()
    );
    // Pieces follow one another: no overlap to warn of.
    assert!(merged["capture"].get("merged_files_overlap").is_none());
    let original = json(&[&whole]);
    assert!(original["capture"].get("merged_files").is_none());
    assert!(
        original["connections"].as_array().unwrap().len() > 20,
        "a capture with connections across the cuts"
    );
    assert_eq!(without_names(merged.clone()), without_names(original));
    // And mergecap numbers them the same way.
    let by_mergecap = dir.path("merged.pcapng");
    mergecap(&refs, &by_mergecap);
    assert_eq!(without_names(merged), without_names(json(&[&by_mergecap])));
    // People are told where the numbers come from.
    let text = String::from_utf8(analyze(&refs, &[]).stdout).unwrap();
    let first = pieces[0].to_string_lossy();
    assert!(
        text.starts_with(&format!(
            "{first} and {} more, merged by time:",
            pieces.len() - 1
        )),
        "{text}"
    );
    assert!(text.contains("mergecap -w merged.pcapng"), "{text}");
    // And how to ask for one connection again: the same files.
    let again = if pieces.len() <= 4 {
        let names: Vec<String> = pieces.iter().map(|p| p.display().to_string()).collect();
        format!("rttdoc analyze {} --conn STREAM", names.join(" "))
    } else {
        format!(
            "rttdoc analyze FILE... --conn STREAM (the same {} captures)",
            pieces.len()
        )
    };
    assert!(text.contains(&again), "{again}: {text}");
    // The HTML report reads the pieces again for the connections it draws.
    let html = dir.path("report.html");
    let out = analyze(&refs, &["--html", html.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("merged by time"));
    assert!(
        page.contains("\"packets\":[["),
        "the drawn connections' packets"
    );
}

/// The lab's captures of one run at the client, in the middle and at the
/// server overlap in time: each packet is in them two or three times, at
/// different moments.
#[test]
fn vantage_points_merge_as_mergecap_merges_them() {
    if !require("merged captures", &["mergecap"], false) {
        return;
    }
    let dir = TempDir::new("merged-vantages");
    for scenario in ["tls13-nagle-nginx", "hrr-builtin", "random-loss-nginx"] {
        let run = data_dir().join("lab").join(scenario);
        let files: Vec<PathBuf> = ["server", "middle", "client"]
            .iter()
            .map(|v| run.join(format!("{v}.pcapng.gz")))
            .filter(|p| p.is_file())
            .collect();
        assert!(files.len() >= 2, "{scenario}");
        let refs: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
        let merged = json(&refs);
        assert_eq!(
            merged["capture"]["merged_files_overlap"], true,
            "{scenario}"
        );
        // One kernel's clock at every point: the copies say so.
        let text = String::from_utf8(analyze(&refs, &[]).stdout).unwrap();
        assert!(
            text.contains("the captures overlap in time and")
                && text.contains("the merged view, each packet at its sender, holds"),
            "{scenario}: {text}"
        );
        let (_, oracle) = merged_and_oracle(&refs, &dir.path(&format!("{scenario}.pcapng")));
        assert!(
            oracle["capture"]["capture_duplicates"].as_u64() > Some(0),
            "{scenario}: the copies of each vantage point"
        );
        assert_eq!(without_names(merged), without_names(oracle), "{scenario}");
    }
}

/// Packets with the same time in two files: mergecap takes the later
/// file's first (wiretap's `is_earlier` keeps the last of equals), and
/// so must the frame numbers.
#[test]
fn packets_at_the_same_time_come_in_mergecaps_order() {
    let Some(whole) = sample(
        "ExamplesTest__pcap_examples__tls2.pcap",
        &["editcap", "mergecap"],
    ) else {
        return;
    };
    let dir = TempDir::new("merged-ties");
    // The same packets cut to their headers: every time ties, and which
    // copy comes first decides what rttdoc reads (the copy is skipped).
    let headers = dir.path("headers.pcap");
    editcap(&["-s", "64"], &whole, &headers);
    for order in [[&whole, &headers], [&headers, &whole]] {
        let refs: Vec<&Path> = order.iter().map(|p| p.as_path()).collect();
        let (merged, oracle) = merged_and_oracle(&refs, &dir.path("merged.pcapng"));
        assert_eq!(
            merged["capture"]["snap_cut_payloads"], oracle["capture"]["snap_cut_payloads"],
            "{order:?}"
        );
        assert_eq!(without_names(merged), without_names(oracle), "{order:?}");
    }
}

/// A damaged file (a ring's newest, cut while it was written) stops
/// only itself: the others are read whole, and the exit code and the
/// error say which file and where.
#[test]
fn a_damaged_file_stops_only_itself() {
    let Some(whole) = sample(
        "ExamplesTest__pcap_examples__many-protocols.pcap",
        &["editcap", "tshark"],
    ) else {
        return;
    };
    let dir = TempDir::new("merged-damaged");
    let pieces = cut(&whole, 1500, &dir);
    // The middle piece loses its end in the middle of a packet.
    let damaged = &pieces[1];
    let bytes = std::fs::read(damaged).unwrap();
    std::fs::write(damaged, &bytes[..bytes.len() * 2 / 3 + 5]).unwrap();
    let refs: Vec<&Path> = pieces.iter().map(PathBuf::as_path).collect();
    let out = analyze(&refs, &["--json"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("rttdoc: error: {}", damaged.display())),
        "{stderr}"
    );
    assert!(stderr.contains("the others' whole"), "{stderr}");
    // Every frame tshark reads from each piece (the damaged one's up to
    // its damage) is read.
    let frames: usize = pieces
        .iter()
        .map(|p| tshark_fields(p, &[], "", &["frame.number"]).len())
        .sum();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["capture"]["frames"].as_u64(), Some(frames as u64));
    assert!(doc["capture"]["error"]
        .as_str()
        .unwrap()
        .starts_with(&damaged.display().to_string()));
}

#[test]
fn standard_input_is_read_alone() {
    let lab = data_dir().join("lab/tls13-nagle-nginx");
    let out = analyze(&[&lab.join("client.pcapng.gz"), Path::new("-")], &[]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("standard input (-) can only be read alone"),
        "{stderr}"
    );
}

/// A path that is no file stops everything before any work: a typo, or
/// a directory (whose captures the message says how to give).
#[test]
fn a_path_that_is_no_file_is_refused_before_any_work() {
    let lab = data_dir().join("lab/tls13-nagle-nginx");
    let missing = lab.join("no-such.pcapng");
    let out = analyze(&[&lab.join("client.pcapng.gz"), &missing], &["--json"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with(&format!("rttdoc: error: {}: ", missing.display())),
        "{stderr}"
    );
    let out = analyze(&[&lab], &[]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "is a directory: give the captures in it (rttdoc analyze {}/*)",
            lab.display()
        )),
        "{stderr}"
    );
}

/// The frames tshark reads from a capture: (time, length, the comments
/// rttdoc wrote), by frame number.
fn frames_and_comments(capture: &Path) -> Vec<Vec<String>> {
    tshark_fields(
        capture,
        &[],
        "",
        &["frame.time_epoch", "frame.len", "frame.comment"],
    )
}

/// `--annotate` of several captures writes them merged: the frames of
/// mergecap's merge, in its order, with the comments rttdoc writes on
/// that merge.
#[test]
fn annotating_several_captures_writes_mergecaps_merge_with_the_comments() {
    if !require("merged captures", &["editcap", "mergecap", "tshark"], false) {
        return;
    }
    let lab = data_dir().join("lab/random-loss-nginx");
    let dir = TempDir::new("merged-annotate");
    let client = lab.join("client.pcapng.gz");
    let pieces = cut(&client, 40, &dir);
    let mut files: Vec<&Path> = pieces.iter().map(PathBuf::as_path).collect();
    let server = lab.join("server.pcapng.gz");
    files.push(&server);
    let annotated = dir.path("annotated.pcapng");
    let out = analyze(&files, &["--annotate", annotated.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let by_mergecap = dir.path("merged.pcapng");
    mergecap(&files, &by_mergecap);
    let oracle = dir.path("oracle.pcapng");
    let out = analyze(&[&by_mergecap], &["--annotate", oracle.to_str().unwrap()]);
    assert!(out.status.success());
    let (got, want) = (
        frames_and_comments(&annotated),
        frames_and_comments(&oracle),
    );
    assert_eq!(got.len(), want.len());
    assert!(
        want.iter().filter(|f| f[2].contains("rttdoc")).count() >= 3,
        "a run with findings: {want:?}"
    );
    assert_eq!(got, want);
}

/// Each frame's (time, length) as tshark reads them, by frame number.
fn times_and_lengths(capture: &Path) -> Vec<(String, String)> {
    tshark_fields(capture, &[], "", &["frame.time_epoch", "frame.len"])
        .into_iter()
        .map(|r| (r[0].clone(), r[1].clone()))
        .collect()
}

/// Where each merged frame is in its own file (`merged_runs`), held
/// against tshark: mergecap's merge of the lab's client capture cut in
/// pieces and its server capture (which overlap: runs alternate), frame
/// by frame, is the file's frame the runs name; and `--conn` names the
/// files a connection and its findings' evidence are in.
#[test]
fn every_merged_frame_is_located_in_its_file() {
    if !require("merged captures", &["editcap", "mergecap", "tshark"], false) {
        return;
    }
    let lab = data_dir().join("lab/random-loss-nginx");
    let dir = TempDir::new("merged-runs");
    let client = lab.join("client.pcapng.gz");
    let pieces = cut(&client, 300, &dir);
    let mut files: Vec<&Path> = pieces.iter().map(PathBuf::as_path).collect();
    let server = lab.join("server.pcapng.gz");
    files.push(&server);
    let (merged, _) = merged_and_oracle(&files, &dir.path("merged.pcapng"));
    let runs = merged["capture"]["merged_runs"].as_array().unwrap();
    assert!(runs.len() > files.len(), "overlapping files alternate");
    assert!(merged["capture"].get("merged_runs_cut").is_none());
    let whole = times_and_lengths(&dir.path("merged.pcapng"));
    let each: Vec<Vec<(String, String)>> = files.iter().map(|f| times_and_lengths(f)).collect();
    let field = |r: &Value, k: &str| r[k].as_u64().unwrap();
    assert_eq!(field(&runs[0], "frame"), 1);
    for (i, run) in runs.iter().enumerate() {
        let next = runs
            .get(i + 1)
            .map_or(whole.len() as u64 + 1, |n| field(n, "frame"));
        let (file, from) = (field(run, "file") as usize, field(run, "file_frame"));
        for frame in field(run, "frame")..next {
            let local = from + frame - field(run, "frame");
            assert_eq!(
                whole[frame as usize - 1],
                each[file][local as usize - 1],
                "merged frame {frame}: {} frame {local}",
                files[file].display()
            );
        }
    }
    // The connection with the most findings, in detail.
    let conns = merged["connections"].as_array().unwrap();
    let c = conns
        .iter()
        .max_by_key(|c| c["findings"].as_array().unwrap().len())
        .unwrap();
    assert!(!c["findings"].as_array().unwrap().is_empty());
    let stream = c["stream"].to_string();
    let text = String::from_utf8(analyze(&files, &["--conn", &stream]).stdout).unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with("  in the files: "))
        .unwrap_or_else(|| panic!("{text}"));
    // Every file with the connection's packets is named (tshark: its
    // client's port).
    let port = c["client"]["port"].to_string();
    for f in &files {
        let has =
            !tshark_fields(f, &[], &format!("tcp.port == {port}"), &["frame.number"]).is_empty();
        assert_eq!(
            line.contains(&format!("{} frame", f.display())),
            has,
            "{}: {line}",
            f.display()
        );
    }
    // Each finding's evidence, by file: packets tshark reads there as
    // one of the finding's frames in the merge.
    let cited: Vec<&(String, String)> = c["findings"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|x| x["frames"].as_array().unwrap())
        .map(|m| &whole[m.as_u64().unwrap() as usize - 1])
        .collect();
    let evidence: Vec<&str> = text.lines().filter(|l| l.starts_with("    in ")).collect();
    assert!(!evidence.is_empty(), "{text}");
    for l in evidence {
        let (name, set) = l["    in ".len()..]
            .split_once(": frame.number in {")
            .unwrap();
        let i = files
            .iter()
            .position(|f| f.display().to_string() == name)
            .unwrap();
        for n in set.trim_end_matches('}').split(", ") {
            let packet = &each[i][n.parse::<usize>().unwrap() - 1];
            assert!(cited.contains(&packet), "{l}: frame {n}");
        }
    }
}

/// The malformed corpus given at once: nothing panics, every file rttdoc
/// refuses or stops in alone is named, and the merge reads as many
/// frames as the files read one by one.
#[test]
fn the_malformed_corpus_merged_reads_what_each_file_gives_alone() {
    let dir = data_dir().join("malformed");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert!(files.len() >= 20);
    let (mut frames, mut damaged) = (0, Vec::new());
    for f in &files {
        let out = analyze(&[f], &["--json"]);
        match serde_json::from_slice::<Value>(&out.stdout) {
            Ok(doc) => {
                frames += doc["capture"]["frames"].as_u64().unwrap();
                if doc["capture"]["error"].is_string() {
                    damaged.push(f);
                }
            }
            // Refused before any frame (empty, no capture).
            Err(_) => damaged.push(f),
        }
    }
    assert!(damaged.len() >= 10, "{damaged:?}");
    let refs: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    let out = analyze(&refs, &["--json"]);
    assert_eq!(out.status.code(), Some(2));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["capture"]["frames"].as_u64(), Some(frames));
    let error = doc["capture"]["error"].as_str().unwrap();
    for f in damaged {
        assert!(
            error.contains(&format!("{}: ", f.display())),
            "{f:?}: {error}"
        );
    }
}

/// A server's capture whose clock runs ahead or behind the client's
/// (editcap -t shifts every time in it): the packets both captures hold
/// measure the difference, which the note gives with the point ahead.
#[test]
fn two_points_clocks_apart_are_measured_by_the_packets_both_saw() {
    if !require("merged captures", &["editcap"], false) {
        return;
    }
    let lab = data_dir().join("lab/tls13-nagle-nginx");
    let dir = TempDir::new("merged-clocks");
    let client = lab.join("client.pcapng.gz");
    for (shift, words) in [
        (
            "0.004",
            "the point nearer the servers runs about 4.00 ms ahead",
        ),
        (
            "-0.006",
            "the point nearer the clients runs about 6.00 ms ahead",
        ),
    ] {
        let server = dir.path(&format!("server{shift}.pcapng"));
        editcap(&["-t", shift], &lab.join("server.pcapng.gz"), &server);
        let text = String::from_utf8(analyze(&[&client, &server], &[]).stdout).unwrap();
        assert!(text.contains(words), "{shift}: {text}");
        assert!(text.contains("analyze each capture alone"), "{text}");
    }
}
