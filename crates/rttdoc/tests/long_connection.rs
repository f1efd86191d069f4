//! A long connection is diagnosed to its end, not to the 2048 segments a
//! connection's timeline keeps: an SFTP-like upload of 1000 blocks on
//! real kernel TCP (the lab's built-in peers over its emulated 4 ms path),
//! each block a 96-byte and a 656-byte write then a status read, Nagle on.
//! The server acknowledges at once (its route's `quickack`), so each
//! block's second write waits one round trip for the ACK of the first:
//! 5000 segments, 1000 Nagle holds, past the timeline and a window
//! diagnosed while tracking and the last one at the end. The control sets
//! TCP_NODELAY on the uploader. The evidence of the holds past the
//! timeline is read back with tshark, and the report is the same with one
//! thread or two.
//!
//! Needs root, ip and tshark: skips with the reason otherwise (fails under
//! CI=true).

mod common;

use common::*;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// Lab runs time packets on a 2-core machine: one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

const BLOCKS: u64 = 1000;

/// Runs the upload; returns the run's directory.
fn upload(dir: &TempDir, nodelay: bool) -> std::path::PathBuf {
    let out = dir.path(if nodelay { "nodelay" } else { "nagle" });
    let bin = rttdoc_bin();
    // The server ACKs each segment at once: its every route quickack.
    let server = format!(
        "ip -o route show | while read -r r; do ip route change $r quickack 1; done; \
         exec {} lab peer rpc-server --listen $RTTDOC_SERVER_IP:8080",
        bin.display()
    );
    let client = format!(
        "exec {} lab peer rpc-client --connect $RTTDOC_SERVER_IP:8080 --blocks {BLOCKS}{}",
        bin.display(),
        if nodelay { " --nodelay" } else { "" }
    );
    let run = Command::new(&bin)
        .args([
            "lab",
            "run",
            "--server-cmd",
            &server,
            "--client-cmd",
            &client,
        ])
        .args(["--rtt", "4ms", "--runs", "1", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    out
}

/// The waits a finding counts: those it lists and those past them.
fn holds(f: &Value) -> u64 {
    f["waits"].as_array().map_or(0, |w| w.len() as u64)
        + f["unlisted_waits"]["count"].as_u64().unwrap_or(0)
}

fn the_connection(capture: &Path) -> Value {
    let doc = run_rttdoc_json(capture);
    let list = doc["connections"].as_array().unwrap();
    assert_eq!(list.len(), 1, "{capture:?}");
    list[0].clone()
}

#[test]
fn an_uploads_nagle_holds_are_counted_to_its_end_and_its_control_has_none() {
    if !require(
        "an_uploads_nagle_holds_are_counted_to_its_end_and_its_control_has_none",
        &["ip", "tshark"],
        true,
    ) {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = TempDir::new("long-connection");
    let nagle = upload(&dir, false);
    let mut pathology_excess = 0.0f64;
    for side in ["client", "server"] {
        let capture = nagle.join(format!("{side}.pcapng"));
        let c = the_connection(&capture);
        // The windows are diagnosed as the tracker meets them: one thread
        // or several, the same report.
        assert_eq!(
            run_rttdoc_json_with(&capture, &["--threads", "1"]),
            run_rttdoc_json_with(&capture, &["--threads", "2"]),
            "{side}"
        );
        assert_eq!(c["exchanges"].as_u64(), Some(BLOCKS), "{side}");
        // Past the timeline: a window diagnosed while tracking, the last
        // at the end; every block in the ledger, itemized or summed.
        let later = &c["later_windows"];
        assert_eq!(later["windows"].as_u64(), Some(2), "{side}: {later}");
        let rows = c["ledger"].as_array().unwrap();
        let itemized = rows
            .iter()
            .filter(|r| r["phase"] == "first_byte" && r.get("summed").is_none())
            .count() as u64;
        let summed: u64 = rows.iter().filter_map(|r| r["summed"].as_u64()).sum();
        assert_eq!(itemized + summed, BLOCKS, "{side}");
        assert_eq!(later["exchanges"].as_u64(), Some(summed), "{side}");
        // One finding holds the client's holds: at the client nearly
        // every block's (a hold whose silence began in the window before
        // it is not seen); at the server, whose view of the client's
        // clock the emulator's jitter blurs on a busy machine, most
        // (830 to 958 of 1000 in runs here). The timeline alone holds
        // 409 blocks.
        let nagle: Vec<&Value> = findings_within(&c["findings"])
            .filter(|f| f["kind"] == "nagle_hold")
            .collect();
        assert_eq!(nagle.len(), 1, "{side}: {:?}", kinds(&c["findings"]));
        let f = nagle[0];
        let n = holds(f);
        let least = if side == "client" {
            BLOCKS * 9 / 10
        } else {
            BLOCKS * 6 / 10
        };
        assert!(n >= least && n <= BLOCKS, "{side}: {n} holds");
        // Each a round trip of the 4 ms path.
        let per_hold = f["cost_ms"].as_f64().unwrap() / n as f64;
        assert!(
            (3.0..8.0).contains(&per_hold),
            "{side}: {per_hold} ms a hold"
        );
        // The numbers add up over the whole connection.
        let attributed: f64 = findings_within(&c["findings"])
            .map(|f| f["attributed_ms"].as_f64().unwrap())
            .sum();
        let excess = c["excess_ms"].as_f64().unwrap();
        let unexplained = c["unexplained_ms"].as_f64().unwrap();
        assert!((attributed + unexplained - excess).abs() < 0.01, "{side}");
        if side == "client" {
            assert!(
                unexplained < 0.2 * excess,
                "{side}: {unexplained} of {excess} ms"
            );
        }
        pathology_excess = pathology_excess.max(excess);
        // The holds past the two windows' worth of segments are what the
        // capture shows: the 656-byte write, left after the server's pure
        // ACK of the 96-byte one.
        let waits: Vec<(u64, u64)> = f["waits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| {
                (
                    w["to_frame"].as_u64().unwrap(),
                    w["release_frame"].as_u64().unwrap(),
                )
            })
            .filter(|(held, _)| *held > 4096)
            .collect();
        assert!(waits.len() >= 50, "{side}: {} holds past 4096", waits.len());
        // frame -> (tcp.len, tcp.dstport)
        let seen: std::collections::BTreeMap<u64, (String, String)> = tshark_fields(
            &capture,
            &[],
            "tcp",
            &["frame.number", "tcp.len", "tcp.dstport"],
        )
        .into_iter()
        .map(|r| (r[0].parse().unwrap(), (r[1].clone(), r[2].clone())))
        .collect();
        let of = |frame: u64| {
            let (len, port) = &seen[&frame];
            (len.as_str(), port.as_str())
        };
        for (held, release) in waits {
            assert!(release < held, "{side}: {release} after {held}");
            assert_eq!(of(held), ("656", "8080"), "{side}: frame {held}");
            assert_eq!(of(release).0, "0", "{side}: frame {release}");
            assert_ne!(of(release).1, "8080", "{side}: frame {release}");
        }
    }
    // TCP_NODELAY: the same 1000 blocks, no hold, a fraction of the excess.
    let nodelay = upload(&dir, true);
    for side in ["client", "server"] {
        let c = the_connection(&nodelay.join(format!("{side}.pcapng")));
        assert_eq!(c["exchanges"].as_u64(), Some(BLOCKS), "{side}");
        assert!(c["later_windows"]["windows"].as_u64() >= Some(1), "{side}");
        let found = kinds(&c["findings"]);
        assert!(
            !found
                .iter()
                .any(|k| k.starts_with("nagle") || *k == "write_write_read"),
            "{side}: {found:?}"
        );
        let excess = c["excess_ms"].as_f64().unwrap();
        assert!(excess < 0.25 * pathology_excess, "{side}: {excess} ms");
    }
}
