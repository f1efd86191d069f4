//! `--threads N` changes where connections are diagnosed, never what is
//! said: every output format is byte-identical to `--threads 1`, on the
//! lab's captures (every scenario, every vantage) and on the public
//! captures other tools made.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;

fn output(capture: &Path, threads: usize, format: &str) -> Vec<u8> {
    let out = Command::new(rttdoc_bin())
        .args(["analyze", "--no-progress", "--color", "never"])
        .args(["--format", format, "--threads", &threads.to_string()])
        .arg(capture)
        .env("COLUMNS", "120")
        .output()
        .unwrap();
    // Damaged files exit 2 after analysing what they could: compare that too.
    assert!(
        out.status.code().is_some_and(|c| c == 0 || c == 2),
        "{}: {}",
        capture.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn captures() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = Vec::new();
    for dir in ["lab", "semantics", "proxy", "quic"] {
        let Ok(entries) = std::fs::read_dir(data_dir().join(dir)) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                files.extend(
                    std::fs::read_dir(&p)
                        .unwrap()
                        .flatten()
                        .map(|e| e.path())
                        .filter(|p| p.to_string_lossy().ends_with(".pcapng.gz")),
                );
            } else if p.to_string_lossy().contains(".pcap") {
                files.push(p);
            }
        }
    }
    let public = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/captures/public");
    if let Ok(dirs) = std::fs::read_dir(&public) {
        for d in dirs.flatten().filter(|d| d.path().is_dir()) {
            files.extend(
                std::fs::read_dir(d.path())
                    .unwrap()
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| p.is_file()),
            );
        }
    } else if in_ci() {
        panic!("CI=true: the shared public captures must be beside the checkout");
    } else {
        eprintln!("threads: no public captures beside the checkout; lab captures only");
    }
    files.sort();
    files
}

#[test]
fn every_output_is_the_same_with_any_number_of_threads() {
    let files = captures();
    assert!(files.len() > 50, "found only {} captures", files.len());
    let mut connections = 0;
    for f in &files {
        let one = output(f, 1, "json");
        let three = output(f, 3, "json");
        assert!(one == three, "{}: --threads 3 JSON differs", f.display());
        connections += serde_json::from_slice::<serde_json::Value>(&one)
            .ok()
            .and_then(|d| d["connections"].as_array().map(|a| a.len()))
            .unwrap_or(0);
    }
    assert!(connections > 1000, "{connections} connections compared");
    // Every other format, on a sample that has many connections.
    for f in files
        .iter()
        .filter(|f| f.to_string_lossy().contains("many"))
        .take(3)
    {
        // (Prometheus' series too: sorted, not in a hash map's order.)
        for format in ["text", "jsonl", "csv", "prometheus"] {
            assert!(
                output(f, 1, format) == output(f, 2, format),
                "{}: --threads 2 {format} differs",
                f.display()
            );
        }
    }
}
