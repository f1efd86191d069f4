//! Segments overtaken on the path are not re-sends.
//!
//! A segment that fills a hole below the highest byte seen is either the
//! original, held back on the path while the segments sent after it
//! passed, or a re-send. Wireshark tells them apart by timing (within the
//! handshake's round trip of the highest segment: out-of-order), which
//! calls an original held longer than a round trip a retransmission, and
//! a quick re-send out-of-order. rttdoc reads the sender's clocks first:
//! its IPv4 identification, where it counts (Linux's per-socket counter,
//! Windows' per-host one), and its TCP timestamp (send_order.rs).
//!
//! tests/data/reorder/ (scripts/reorder-captures.sh): real Linux TCP
//! across a relay that held every 40th data packet of a download back by
//! 12 or 70 ms, in turn; `sent.txt.gz` is the relay's record of what the
//! server sent, in its order, and which of it was sent again. tests/data/other-projects/ndpi-google_ssl.pcap and
//! tcpflow-jpegs-post.pcap: two real captures where it happened.

mod common;

use common::*;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::Path;

/// One data packet of the server as the relay of
/// scripts/reorder-captures.sh recorded it, in the order it was sent.
struct Sent {
    id: u16,
    seq: u32,
    held: bool,
    resend: bool,
}

fn sent_packets(record: &Path) -> Vec<Sent> {
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(record).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    text.lines()
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            Sent {
                id: f[0].parse().unwrap(),
                seq: f[1].parse().unwrap(),
                held: f[2] != "0",
                resend: match f[3] {
                    "original" => false,
                    "resend" => true,
                    other => panic!("sent.txt: {other}"),
                },
            }
        })
        .collect()
}

/// Whether rttdoc's per-packet series calls each frame a re-send.
fn resends_by_frame(c: &serde_json::Value) -> BTreeMap<u64, bool> {
    c["series"]["packets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["frame"].as_u64().unwrap(),
                p["retransmission"].as_bool().unwrap(),
            )
        })
        .collect()
}

/// Reads a capture of the reordering path back to the relay's record:
/// every frame of the server's data is a re-send in rttdoc's series
/// exactly when the relay saw the server send those bytes before; the
/// held originals that came after a later segment are the out-of-order
/// ones. Returns how many originals were held and how many re-sends the
/// server made.
fn check_reordered_download(capture: &Path, record: &Path) -> (usize, usize) {
    let sent = sent_packets(record);
    let by_packet: BTreeMap<(u16, u32), &Sent> = sent.iter().map(|p| ((p.id, p.seq), p)).collect();
    assert_eq!(by_packet.len(), sent.len(), "identifications unique");
    let held_originals = sent.iter().filter(|p| p.held && !p.resend).count();
    let resends = sent.iter().filter(|p| p.resend).count();
    assert!(held_originals >= 10, "the relay held originals");
    // The server's data segments as the client's capture has them.
    let segments: Vec<(u64, u16, u32)> = tshark_fields(
        capture,
        &[],
        "tcp.srcport == 80 && tcp.len > 0",
        &["frame.number", "ip.id", "tcp.seq_raw"],
    )
    .iter()
    .map(|r| {
        (
            r[0].parse().unwrap(),
            u16::from_str_radix(r[1].trim_start_matches("0x"), 16).unwrap(),
            r[2].parse().unwrap(),
        )
    })
    .collect();
    assert_eq!(segments.len(), sent.len(), "every packet captured");
    let doc = run_rttdoc_json_with(capture, &["--series", "--all"]);
    let c = connection(&doc, 0);
    let resend = resends_by_frame(c);
    let mut overtaken = 0;
    for (i, &(frame, id, seq)) in segments.iter().enumerate() {
        let truth = by_packet[&(id, seq)];
        assert_eq!(
            resend[&frame],
            truth.resend,
            "frame {frame} (id {id:#06x}, held: {}): the server sent it {}",
            truth.held,
            if truth.resend { "again" } else { "once" }
        );
        // An original passed by a segment that carries later bytes.
        overtaken += (!truth.resend
            && segments[..i]
                .iter()
                .any(|&(_, _, s)| (s.wrapping_sub(seq) as i32) > 0)) as usize;
    }
    let stats = &c["server_to_client"];
    assert_eq!(stats["retransmissions"].as_u64().unwrap(), resends as u64);
    assert_eq!(stats["out_of_order"].as_u64().unwrap(), overtaken as u64);
    // Every byte counted once: a late original after its re-send adds
    // nothing, a re-send of a hole's bytes nothing the original did not.
    let next_seq: u64 = tshark_fields(capture, &[], "tcp.srcport == 80", &["tcp.nxtseq"])
        .iter()
        .filter_map(|r| r[0].parse().ok())
        .max()
        .unwrap();
    let fin = c["server_to_client"]["fin_frame"].is_u64() as u64;
    assert_eq!(stats["bytes"].as_u64().unwrap(), next_seq - 1 - fin);
    // Loss findings cite re-sends and their originals only. (Most
    // re-sends here were needless, their originals came; now and then
    // the client's kernel drops an original from its out-of-order queue
    // under memory pressure, and the re-send was the repair.)
    let resent_seqs: BTreeSet<u32> = sent.iter().filter(|p| p.resend).map(|p| p.seq).collect();
    for f in c["findings"].as_array().unwrap() {
        if f["kind"] != "retransmission" && f["kind"] != "rto_stall" {
            continue;
        }
        for frame in f["frames"].as_array().unwrap() {
            let frame = frame.as_u64().unwrap();
            let &(_, id, seq) = segments.iter().find(|s| s.0 == frame).unwrap();
            assert!(
                by_packet[&(id, seq)].resend || resent_seqs.contains(&seq),
                "frame {frame} cited as loss, sent once: {f}"
            );
        }
    }
    (held_originals, resends)
}

#[test]
fn held_originals_are_out_of_order_and_the_kernels_re_sends_are_re_sends() {
    if !require("reordering", &["tshark"], false) {
        return;
    }
    let dir = data_dir().join("reorder");
    let (originals, resent) =
        check_reordered_download(&dir.join("reorder.pcap.gz"), &dir.join("sent.txt.gz"));
    // The 70 ms holds outlast the 40 ms round trip: the client's duplicate
    // ACKs made the server send those bytes again.
    assert!(
        resent >= 5,
        "{resent} re-sends of {originals} held originals"
    );
}

/// tests/data/reorder-miss: a run of the same path where an original
/// (frame 2014, id 0xeadc) was held while ~660 later packets passed and
/// opened more holes than are remembered at once; it came at the
/// acknowledgment point after the client's SACKs, like a fast
/// retransmit, 12.6 ms before its real re-send.
#[test]
fn an_original_held_past_many_later_holes_is_still_the_original() {
    if !require("reordering", &["tshark"], false) {
        return;
    }
    let dir = data_dir().join("reorder-miss");
    check_reordered_download(&dir.join("reorder.pcap.gz"), &dir.join("sent.txt.gz"));
}

#[test]
fn a_reordering_path_made_now() {
    if !require(
        "reordering (live)",
        &["ip", "tcpdump", "nginx", "curl", "python3", "tshark"],
        true,
    ) {
        return;
    }
    // (tcpdump on a veth drops a packet now and then under a burst; such
    // a capture is no record of the path to judge against: made again.)
    for attempt in 1..=3 {
        let dir = TempDir::new("reorder");
        run_capture_script("reorder-captures.sh", &[dir.0.as_os_str()]);
        let (capture, record) = (dir.path("reorder.pcap.gz"), dir.path("sent.txt.gz"));
        let captured = tshark_fields(
            &capture,
            &[],
            "tcp.srcport == 80 && tcp.len > 0",
            &["frame.number"],
        );
        if captured.len() != sent_packets(&record).len() && attempt < 3 {
            eprintln!("the capture missed packets the relay passed: made again");
            continue;
        }
        // (Once in ~150 runs an original held on the path was taken for a
        // re-send: its hole had been forgotten among the later ones,
        // tests/data/reorder-miss, fixed since. Should another miss come,
        // the capture and the relay's record are kept for study, printed,
        // and the path made again; a second miss fails.)
        let checked = std::panic::catch_unwind(|| check_reordered_download(&capture, &record));
        match checked {
            Ok(_) => return,
            Err(miss) if attempt < 3 => {
                let kept = std::env::temp_dir().join(format!(
                    "rttdoc-reorder-miss-{}-{attempt}",
                    std::process::id()
                ));
                std::fs::create_dir_all(&kept).unwrap();
                for f in [&capture, &record] {
                    std::fs::copy(f, kept.join(f.file_name().unwrap())).unwrap();
                }
                eprintln!(
                    "MISS on the path made now, kept in {}: made again",
                    kept.display()
                );
                drop(miss);
            }
            Err(miss) => std::panic::resume_unwind(miss),
        }
    }
}

/// nDPI's google_ssl.pcap: a TLS 1.0 handshake whose server flight (three
/// segments, identifications 0x797e, 0x797f, 0x7980) passed the capture
/// point last segment first: frame 6 (0x7980) at 413 ms, frame 8
/// (0x797e) at 736 ms, frame 10 (0x797f) at 1731 ms. Frames 8 and 10 are
/// the originals, held on the path; the server's own re-sends came later
/// under its next numbers (frames 12, 13, 15: 0x7bd5, 0x7cd9, 0x7cda,
/// after timeouts of 2.3, 3.2 and 4.4 s). Wireshark calls 8 and 10
/// retransmissions, and rttdoc used to call their waits the server's
/// retransmission timer (rto_stall, 323 and 995 ms): no timer ran out
/// before them.
#[test]
fn a_server_flight_held_on_the_path_is_not_its_timer() {
    if !require("google_ssl", &["tshark"], false) {
        return;
    }
    let capture = data_dir()
        .join("other-projects")
        .join("ndpi-google_ssl.pcap");
    let wireshark: BTreeSet<u64> = tshark_fields(
        &capture,
        &[],
        "tcp.analysis.retransmission",
        &["frame.number"],
    )
    .iter()
    .map(|r| r[0].parse().unwrap())
    .collect();
    assert!(wireshark.is_superset(&BTreeSet::from([8, 10])));
    let doc = run_rttdoc_json_with(&capture, &["--series", "--all"]);
    let c = connection(&doc, 0);
    let resend = resends_by_frame(c);
    for frame in [8, 10] {
        assert!(!resend[&frame], "frame {frame} is an original");
    }
    for frame in [12, 13, 15] {
        assert!(resend[&frame], "frame {frame} is the server's re-send");
    }
    assert_eq!(c["server_to_client"]["out_of_order"], 2);
    assert_no_finding(&doc, "rto_stall");
    // The client's SSL 2.0-format ClientHello offered TLS 1.0, and the
    // flight it needed was whole only when frame 10 came: the reordering
    // cost the handshake 6 -> 8 and 8 -> 10.
    assert_eq!(c["tls"]["version"], "TLS 1.0");
    let f = finding_in(c, "reordering", "tls_handshake");
    let waits: Vec<(u64, u64)> = f["waits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            (
                w["from_frame"].as_u64().unwrap(),
                w["to_frame"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(waits, [(6, 8), (8, 10)]);
    let gap = |a: usize, b: usize| {
        let t: Vec<f64> = tshark_fields(
            &capture,
            &[],
            "frame.number in {6, 8, 10}",
            &["frame.time_epoch"],
        )
        .iter()
        .map(|r| r[0].parse().unwrap())
        .collect();
        (t[b] - t[a]) * 1e3
    };
    let cost = f["cost_ms"].as_f64().unwrap();
    assert!((cost - gap(0, 2)).abs() < 0.01, "{cost} ms");
    // The server's timer re-sent what the client had acknowledged
    // (frame 15 re-sends bytes frame 11 acknowledged): the client's
    // messages had not reached it, so its wait for the client's key
    // exchange (14) is counted from that re-send, not from 14.
    for w in waits_of(c, "server_think_time", "tls_handshake") {
        assert_ne!(w.0, 14, "{w:?}");
    }
}

/// tcpflow's jpegs.cap, its POST's connection: the server's answer left
/// as identifications 0xf6c5 (a datagram of which the capture holds only
/// the second fragment), 0xf6c6 (bytes 1461-2680) and 0xf6c7 (the last 5
/// bytes and the FIN). 0xf6c7 passed first; 0xf6c6 came 23 ms later: the
/// original, overtaken, not a loss (a re-send would have taken a number
/// after 0xf6c7).
#[test]
fn a_windows_server_s_overtaken_segment_is_not_a_loss() {
    if !require("jpegs", &["tshark"], false) {
        return;
    }
    let capture = data_dir()
        .join("other-projects")
        .join("tcpflow-jpegs-post.pcap");
    let frame: u64 = tshark_fields(&capture, &[], "ip.id == 0xf6c6", &["frame.number"])[0][0]
        .parse()
        .unwrap();
    let doc = run_rttdoc_json_with(&capture, &["--series", "--all"]);
    let c = connection(&doc, 0);
    assert!(!resends_by_frame(c)[&frame]);
    assert_eq!(c["server_to_client"]["retransmissions"], 0);
    assert_eq!(c["server_to_client"]["out_of_order"], 1);
    assert_no_finding(&doc, "retransmission");
    // Named, at no cost: the answer began in a datagram whose first
    // fragment the capture lacks, so its first byte did not wait for it.
    let f = finding_in(c, "reordering", "transfer");
    assert_eq!(f["cost_ms"], 0.0);
    assert_eq!(f["frames"][1], frame);
}

/// nDPI's capture.pcap, its stream 3 (a Mac's download from a Linux
/// server, captured at the Mac): the server's burst of bytes 9412-14913
/// stamped TSval 1190923221 and echoing the Mac's 757524305 passed in
/// pieces, its tail first (identification 0xe10c), then, after the Mac's
/// SACKs (TSval 757524768) and two of the server's later ACKs (TSval
/// 1190923306), its last two full segments 40 ms behind, numbered 0xe10e
/// and 0xe10f. Their identifications say after the tail; their
/// timestamps say they left in its tick, before the server had any of
/// the SACKs a fast re-send would have answered (it would echo 757524768
/// at least): originals, overtaken.
#[test]
fn a_burst_s_segments_stamped_before_any_sack_are_originals() {
    if !require("burst", &["tshark"], false) {
        return;
    }
    let capture = data_dir()
        .join("other-projects")
        .join("ndpi-capture-burst-overtaken.pcap");
    let late: Vec<u64> = tshark_fields(
        &capture,
        &[],
        "ip.id == 0xe10e || ip.id == 0xe10f",
        &["frame.number"],
    )
    .iter()
    .map(|r| r[0].parse().unwrap())
    .collect();
    assert_eq!(late.len(), 2);
    let doc = run_rttdoc_json_with(&capture, &["--series", "--all"]);
    let c = connection(&doc, 0);
    let resends = resends_by_frame(c);
    for frame in &late {
        assert!(!resends[frame], "frame {frame} taken for a re-send");
    }
    assert_eq!(c["server_to_client"]["retransmissions"], 0);
    assert_no_finding(&doc, "retransmission");
    let f = finding_in(c, "reordering", "transfer");
    let cited: Vec<u64> = f["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    // The two came together, the second captured 0.5 ms behind the
    // first, and completed the answer: it waited for both, from the
    // burst's tail that passed on time (0xe10c), not from the first of
    // the two, held with it (judged in session 87 at "no phase waited").
    let at = |filter: &str| -> (u64, f64) {
        let r = &tshark_fields(
            &capture,
            &[],
            filter,
            &["frame.number", "frame.time_relative"],
        )[0];
        (r[0].parse().unwrap(), r[1].parse().unwrap())
    };
    let (tail, tail_at) = at("ip.id == 0xe10c");
    let (last, last_at) = at("ip.id == 0xe10e");
    assert_eq!(cited, [tail, last]);
    assert_eq!(f["waits"].as_array().unwrap().len(), 1, "{f}");
    let w = &f["waits"][0];
    assert_eq!(
        (w["from_frame"].as_u64(), w["to_frame"].as_u64()),
        (Some(tail), Some(last))
    );
    let ms = (last_at - tail_at) * 1e3;
    assert!(
        (f["cost_ms"].as_f64().unwrap() - ms).abs() < 0.01,
        "{f} vs {ms}"
    );
}
