//! The malformed-capture corpus (tests/data/malformed, made by its
//! generate.py): rttdoc never panics, names the file and the byte offset,
//! analyses everything before the damage and counts damaged packets.

mod common;

use common::*;
use std::process::Command;

struct Expect {
    file: &'static str,
    /// 0 = clean, 1 = nothing could be read, 2 = stopped early.
    exit: i32,
    error: Option<&'static str>,
    /// (frames read, damaged packets, connections) when output is produced.
    counts: Option<(u64, u64, usize)>,
}

const CORPUS: &[Expect] = &[
    Expect {
        file: "empty.pcap",
        exit: 1,
        error: Some("byte 0: the file is empty"),
        counts: None,
    },
    Expect {
        file: "wrong-magic.pcap",
        exit: 1,
        error: Some("byte 0: not a pcap, pcapng or snoop file"),
        counts: None,
    },
    Expect {
        file: "header-cut.pcap",
        exit: 1,
        error: Some("byte 0: the file ends inside"),
        counts: None,
    },
    Expect {
        file: "truncated-record.pcap",
        exit: 2,
        error: Some("byte 411: the file ends inside a record"),
        counts: Some((5, 0, 1)),
    },
    Expect {
        file: "absurd-caplen.pcap",
        exit: 2,
        error: Some("byte 322: a record declares 4294967040 bytes"),
        counts: Some((4, 0, 1)),
    },
    Expect {
        file: "oversized-record.pcap",
        exit: 2,
        error: Some("byte 322: a record declares 300000 bytes"),
        counts: Some((4, 0, 1)),
    },
    Expect {
        file: "zero-length-records.pcap",
        exit: 0,
        error: None,
        counts: Some((10, 2, 1)),
    },
    Expect {
        file: "damaged-headers.pcap",
        exit: 0,
        error: None,
        counts: Some((12, 4, 1)),
    },
    Expect {
        file: "garbage-middle.pcapng",
        exit: 2,
        error: Some("byte 416: "),
        counts: Some((4, 0, 1)),
    },
    Expect {
        file: "unknown-interface.pcapng",
        exit: 2,
        error: Some("byte 312: malformed record: packet names interface 5"),
        counts: Some((3, 0, 1)),
    },
    Expect {
        file: "block-length-zero.pcapng",
        exit: 2,
        error: Some("byte 416: malformed record"),
        counts: Some((4, 0, 1)),
    },
    // pcapng as Wireshark's tools write it (long Section Header Block),
    // damaged where the reader must frame by declared lengths.
    Expect {
        file: "long-shb-truncated.pcapng",
        exit: 1,
        error: Some("byte 0: the file ends inside a record"),
        counts: None,
    },
    Expect {
        file: "shb-bad-option-length.pcapng",
        exit: 1,
        error: Some("byte 0: malformed record: option 1 declares 2000 bytes"),
        counts: None,
    },
    Expect {
        file: "dsb-absurd-length.pcapng",
        exit: 2,
        error: Some("byte 2072: a record declares 2147483392 bytes"),
        counts: Some((4, 0, 1)),
    },
    Expect {
        file: "second-section-cut.pcapng",
        exit: 2,
        error: Some("byte 3952: the file ends inside a record"),
        counts: Some((6, 0, 1)),
    },
    // Found by the analyze_pipeline fuzz target: timestamps that make a
    // "round trip" of centuries, whose multiples overflowed in the
    // detectors (a panic in a debug build); such a round trip is no
    // path's and is not taken.
    Expect {
        file: "fuzz-absurd-rtt.pcapng",
        exit: 2,
        error: Some("byte 2072: a record declares 2147483392 bytes"),
        counts: Some((4, 0, 2)),
    },
    // Found by the same target: a pcapng timestamp (64 bits of units)
    // near the end of i64's nanoseconds, which overflowed when a round
    // trip was added to it; timestamps are held within 2100.
    Expect {
        file: "fuzz-far-future-timestamp.pcapng",
        exit: 2,
        error: Some(
            "byte 2792: malformed record: block of type 0x00000006 has two different lengths",
        ),
        counts: Some((15, 0, 5)),
    },
    // Found by the analyze_pipeline fuzz target: a SYN whose MSS option
    // says 0 bytes, on a connection with timestamps; the ledger took the
    // timestamps' 12 bytes from it (an overflow in a debug build).
    Expect {
        file: "fuzz-tiny-mss-option.pcap",
        exit: 2,
        error: Some("byte 885: a record declares 1107299586 bytes"),
        counts: Some((4, 0, 1)),
    },
    // Found by the analyze_pipeline fuzz target (seeded with
    // tests/data/database): a server whose message times jump by years;
    // the search for its timer multiplied such a gap (an overflow in a
    // debug build).
    Expect {
        file: "fuzz-timer-period-overflow.pcap",
        exit: 0,
        error: None,
        counts: Some((323, 0, 4)),
    },
    // Stream 3 of nDPI's tests/pcap/fuzz-2006-06-26-2594.pcap (a fuzzed
    // FTP session, nDPI's test data, LGPL-3.0; cut out by tshark): a
    // client segment of older bytes (frame 21, a hole's filler) begins a
    // request whose newest bytes were captured long before it (frame 3),
    // and the ledger sliced the timeline backwards (a panic).
    Expect {
        file: "fuzz-ndpi-request-behind-its-end.pcap",
        exit: 0,
        error: None,
        counts: Some((25, 0, 1)),
    },
    // Found by the analyze_pipeline fuzz target (seeded with small nDPI
    // and tcpdump test captures): exchanges whose delays differ by
    // centuries, compared for a server's timer; the comparison overflowed
    // (a panic in a debug build).
    Expect {
        file: "fuzz-timer-median-overflow.pcap",
        exit: 2,
        error: Some("byte 2143: a record declares 1355999954 bytes"),
        counts: Some((26, 0, 3)),
    },
    // A name lookup's DNS messages damaged (a name pointing at itself, an
    // extended label type, a header cut short, an answer whose data runs
    // past the message, one cut in its fixed part), then a good answer and
    // the connection: nothing is damaged at the IP and UDP layers.
    Expect {
        file: "dns-damaged.pcap",
        exit: 0,
        error: None,
        counts: Some((15, 0, 1)),
    },
    // QUIC datagrams broken in their headers, then a real QUIC
    // connection: nothing damaged at the IP and UDP layers, no TCP
    // connection (its QUIC connections: damaged_quic_datagrams_...).
    Expect {
        file: "quic-damaged.pcap",
        exit: 0,
        error: None,
        counts: Some((25, 0, 0)),
    },
    // HTTP/2 in the clear whose header blocks end inside a
    // representation, then a real h2c connection: no packet damaged, the
    // blocks refused (damaged_hpack_blocks_...).
    Expect {
        file: "h2c-damaged.pcap",
        exit: 0,
        error: None,
        counts: Some((27, 0, 2)),
    },
    // snoop (snoop.rs), damaged where its framing can be: Wireshark
    // refuses the same records for the same reasons.
    Expect {
        file: "snoop-header-cut.snoop",
        exit: 1,
        error: Some("byte 0: the file ends inside"),
        counts: None,
    },
    Expect {
        file: "snoop-record-shorter-than-packet.snoop",
        exit: 2,
        error: Some("byte 352: malformed record: a 60-byte record holds a 73-byte packet"),
        counts: Some((4, 0, 1)),
    },
    Expect {
        file: "snoop-absurd-padding.snoop",
        exit: 2,
        error: Some("byte 352: a record declares 2147483392 bytes"),
        counts: Some((4, 0, 1)),
    },
    Expect {
        file: "snoop-truncated-record.snoop",
        exit: 2,
        error: Some("byte 452: the file ends inside a record"),
        counts: Some((5, 0, 1)),
    },
    Expect {
        file: "truncated.pcap.gz",
        exit: 2,
        error: Some("gzip stream ends early"),
        counts: Some((4, 0, 1)),
    },
    Expect {
        file: "truncated.pcap.zst",
        exit: 2,
        error: Some("zstd stream ends early"),
        counts: Some((4, 0, 1)),
    },
    Expect {
        file: "truncated.pcap.lz4",
        exit: 2,
        error: Some("lz4 stream ends early"),
        counts: Some((4, 0, 1)),
    },
];

#[test]
fn every_malformed_capture_fails_cleanly_and_keeps_the_work_before_the_damage() {
    let dir = data_dir().join("malformed");
    let on_disk = std::fs::read_dir(&dir).unwrap().filter(|e| {
        let n = e.as_ref().unwrap().file_name();
        let n = n.to_string_lossy();
        n.contains(".pcap") || n.ends_with(".snoop")
    });
    assert_eq!(
        on_disk.count(),
        CORPUS.len(),
        "every corpus file has an expectation"
    );
    for e in CORPUS {
        let path = dir.join(e.file);
        let out = Command::new(rttdoc_bin())
            .args(["analyze", "--json"])
            .arg(&path)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !stderr.contains("panicked"),
            "{}: panicked: {stderr}",
            e.file
        );
        assert_eq!(
            out.status.code(),
            Some(e.exit),
            "{}: exit code; stderr: {stderr}",
            e.file
        );
        match e.error {
            Some(msg) => {
                let line = stderr.lines().next().unwrap_or("");
                assert!(line.starts_with("rttdoc: error: "), "{}: {line}", e.file);
                assert!(
                    line.contains(e.file),
                    "{}: error names the file: {line}",
                    e.file
                );
                assert!(
                    line.contains(msg),
                    "{}: expected {msg:?} in {line:?}",
                    e.file
                );
            }
            None => assert!(stderr.is_empty(), "{}: unexpected stderr {stderr}", e.file),
        }
        if let Some((frames, damaged, conns)) = e.counts {
            let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(doc["capture"]["frames"], frames, "{}", e.file);
            assert_eq!(doc["capture"]["damaged"], damaged, "{}", e.file);
            assert_eq!(
                doc["connections"].as_array().unwrap().len(),
                conns,
                "{}",
                e.file
            );
            assert_eq!(doc["capture"]["error"].is_null(), e.exit == 0, "{}", e.file);
        }
    }
}

#[test]
fn the_terminal_summary_warns_when_reading_stopped_early() {
    let path = data_dir().join("malformed/truncated-record.pcap");
    let out = Command::new(rttdoc_bin())
        .args(["analyze", "--color", "never"])
        .arg(&path)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("WARNING: reading stopped early"),
        "{stdout}"
    );
    assert!(stdout.contains("5 frames, 1 TCP connection ("), "{stdout}");
}

#[test]
fn stdin_input_is_read_like_a_file() {
    let path = data_dir().join("loopback-nginx-curl.pcap.gz");
    let mut child = Command::new(rttdoc_bin())
        .args(["analyze", "--json", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        // in small pieces, like a pipe from tcpdump
        for chunk in bytes.chunks(7) {
            stdin.write_all(chunk).unwrap();
        }
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(out.status.success());
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["connections"].as_array().unwrap().len(), 8);
    assert_eq!(doc["capture"]["file"], "<stdin>");
}

/// A key log that cannot be read stops before any work, naming the file;
/// one full of junk lines is read (nothing in it applies) and the
/// analysis runs as without it.
#[test]
fn a_bad_key_log_is_named_and_junk_lines_are_ignored() {
    let capture = data_dir().join("lab/zero-rtt-post-builtin/client.pcapng.gz");
    let missing = Command::new(rttdoc_bin())
        .args(["analyze", "--keylog", "/nonexistent/keys.txt"])
        .arg(&capture)
        .output()
        .unwrap();
    assert!(!missing.status.success());
    let err = String::from_utf8_lossy(&missing.stderr);
    assert!(err.contains("/nonexistent/keys.txt"), "{err}");

    let dir = TempDir::new("keylog");
    let junk = dir.path("junk.txt");
    std::fs::write(
        &junk,
        b"CLIENT_EARLY_TRAFFIC_SECRET zz 00\nCLIENT_EARLY_TRAFFIC_SECRET 0011\n\x00\xff\xfegarbage\n\n# comment\n",
    )
    .unwrap();
    let with_junk = run_rttdoc_json_with(&capture, &["--keylog", &junk.to_string_lossy()]);
    let without = run_rttdoc_json(&capture);
    assert_eq!(with_junk["connections"], without["connections"]);
}

#[test]
fn captures_in_other_tools_formats_are_named_with_the_conversion_that_reads_them() {
    // Wireshark's own writer makes each format from a real capture; the
    // conversion the message gives then reads as the original does.
    if !require("other capture formats", &["editcap"], false) {
        return;
    }
    let original = data_dir().join("loopback-nginx-curl.pcap.gz");
    let expected = run_rttdoc_json(&original);
    let dir = TempDir::new("formats");
    for (format, name) in [
        ("netmon2", "Microsoft Network Monitor"),
        ("ngsniffer", "Sniffer (DOS)"),
        ("5views", "5Views"),
    ] {
        let other = dir.path(&format!("capture.{format}"));
        let made = Command::new("editcap")
            .args(["-F", format])
            .arg(&original)
            .arg(&other)
            .output()
            .unwrap();
        assert!(made.status.success(), "editcap -F {format}: {made:?}");
        let out = Command::new(rttdoc_bin())
            .args(["analyze", "--json"])
            .arg(&other)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{format}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(&format!("a {name} capture"))
                && stderr.contains("editcap -F pcapng FILE OUT.pcapng"),
            "{format}: {stderr}"
        );
        let back = dir.path(&format!("{format}.pcapng"));
        let made = Command::new("editcap")
            .args(["-F", "pcapng"])
            .arg(&other)
            .arg(&back)
            .output()
            .unwrap();
        assert!(made.status.success(), "{format} back to pcapng: {made:?}");
        // The same connections, frames and turns (some formats keep
        // timestamps to the microsecond only, or less).
        let shape = |d: &serde_json::Value| -> Vec<String> {
            d["connections"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| {
                    format!(
                        "{} {}-{} {} {}",
                        c["stream"],
                        c["first_frame"],
                        c["last_frame"],
                        c["exchanges"],
                        c["tls"]["version"]
                    )
                })
                .collect()
        };
        assert_eq!(shape(&run_rttdoc_json(&back)), shape(&expected), "{format}");
    }
}

#[test]
fn text_in_a_captures_place_is_named() {
    let dir = TempDir::new("not-captures");
    for (content, what) in [
        (
            &b"version https://git-lfs.github.com/spec/v1\noid sha256:0\nsize 9\n"[..],
            "Git LFS pointer",
        ),
        (&b"<!DOCTYPE html>\n<html></html>\n"[..], "HTML page"),
    ] {
        let path = dir.path("capture.pcap");
        std::fs::write(&path, content).unwrap();
        let out = Command::new(rttdoc_bin())
            .args(["analyze"])
            .arg(&path)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(what), "{stderr}");
    }
}

#[test]
fn a_capture_without_tcp_says_what_it_holds_instead_of_empty_tables() {
    let dir = TempDir::new("no-tcp");
    let udp = dir.path("dns.pcap");
    let packets: Vec<Packet> = (0..3)
        .map(|i| pkt(i * 1000, ethernet(&udp4(b"dns?"), &[])))
        .collect();
    write_pcap(&udp, 1, &packets, false, false, 262144);
    let empty = dir.path("empty.pcap");
    write_pcap(&empty, 1, &[], false, false, 262144);
    for (path, says) in [
        (
            &udp,
            "of this capture's 3 frames, 3 IP packets of other protocols (UDP",
        ),
        (&empty, "the capture holds no packets"),
    ] {
        let out = Command::new(rttdoc_bin())
            .args(["analyze", "--color", "never"])
            .arg(path)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0));
        let text = String::from_utf8_lossy(&out.stdout).replace('\n', " ");
        assert!(text.contains("No TCP connection"), "{text}");
        assert!(text.contains(says), "{text}");
        assert!(!text.contains("Connections (most excess first)"), "{text}");
        assert!(!text.contains("--conn STREAM"), "{text}");
    }
}

#[test]
fn damaged_dns_messages_leave_the_good_answer_to_the_connection() {
    let path = data_dir().join("malformed/dns-damaged.pcap");
    let out = Command::new(rttdoc_bin())
        .args(["analyze", "--json"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(out.status.success());
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let lookup = &doc["connections"][0]["name_lookup"];
    // The damaged answers were no answers: the good one (frame 7) is.
    assert_eq!(lookup["name"], "api.example.com", "{lookup}");
    assert_eq!(lookup["answer_frame"], 7, "{lookup}");
    assert_eq!(lookup["queries"], 1, "{lookup}");
}

#[test]
fn damaged_quic_datagrams_leave_the_real_connection_whole() {
    let path = data_dir().join("malformed/quic-damaged.pcap");
    let out = Command::new(rttdoc_bin())
        .args(["analyze", "--json"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(out.status.success());
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let listed = doc["quic"]["listed"].as_array().unwrap();
    // A connection ID over 20 bytes, a Length or a token past the
    // datagram, a Version Negotiation without a list, a lone short
    // header: none is a connection. A well-formed Initial whose payload
    // is noise is one, its ClientHello unread.
    let ports: Vec<u64> = listed
        .iter()
        .map(|c| c["client"]["port"].as_u64().unwrap())
        .collect();
    assert_eq!(ports.len(), 2, "{ports:?}");
    let noise = listed.iter().find(|c| c["client"]["port"] == 6006).unwrap();
    assert_eq!(noise["server_name"], serde_json::Value::Null);
    assert_eq!(noise["findings"].as_array().unwrap().len(), 0);
    // quic-go's connection after them, read as if they were not there.
    let real = listed.iter().find(|c| c["client"]["port"] != 6006).unwrap();
    assert_eq!(real["server_name"], "quic.rttdoc.test");
    assert_eq!(real["alpn"], serde_json::json!(["rttdoc"]));
    assert!(real["handshake_ms"].as_f64().is_some());
    assert_eq!(doc["capture"]["frames"], 25);
}

#[test]
fn damaged_hpack_blocks_are_refused_and_the_next_connection_read_whole() {
    // (No panic, whole JSON; the exit status: the corpus table above.)
    let doc = run_rttdoc_json_with(&data_dir().join("malformed/h2c-damaged.pcap"), &["--all"]);
    assert_eq!(doc["capture"]["frames"], 27);
    // The server's block cut inside an index, the client's second a
    // literal without its strings: nothing read from them, the first
    // request still named (its block was whole), the second not.
    let damaged = &doc["connections"][0];
    assert_eq!(damaged["client"]["port"], 40100);
    assert_eq!(damaged["findings"].as_array().unwrap().len(), 0);
    let labels: Vec<&str> = damaged["ledger"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|row| row["label"].as_str())
        .collect();
    assert!(
        labels.contains(&"GET /docs: request -> first byte"),
        "{labels:?}"
    );
    assert!(
        labels.contains(&"HEADERS: request -> first byte"),
        "{labels:?}"
    );
    // Go's client following nginx's 301 after it: read as if the damage
    // were not there (the file's times are the generator's).
    let real = &doc["connections"][1];
    assert!(
        kinds(&real["findings"]).contains(&"http_redirect"),
        "{real}"
    );
}
