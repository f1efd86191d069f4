//! Real-world capture semantics on kernel-made captures
//! (tests/data/semantics, made by scripts/semantics-captures.sh) and public
//! ones: capture copies, a trace appended to itself, keep-alive and
//! zero-window probes, RST-refused connections, packets the capture
//! dropped. Each test checks both that the false finding is gone and that
//! the true one still fires.

mod common;

use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn semantics(name: &str) -> PathBuf {
    data_dir().join("semantics").join(name)
}

fn public(name: &str) -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/captures/public")
        .join(name);
    if p.is_file() {
        Some(p)
    } else {
        eprintln!("SKIPPED: public capture {} not present", p.display());
        None
    }
}

fn conns(doc: &Value) -> &Vec<Value> {
    doc["connections"].as_array().unwrap()
}

/// Kinds of every finding in the document.
fn all_kinds(doc: &Value) -> Vec<String> {
    conns(doc)
        .iter()
        .flat_map(|c| c["findings"].as_array().unwrap().iter())
        .map(|f| f["kind"].as_str().unwrap().to_string())
        .collect()
}

fn sum(doc: &Value, side: &str, key: &str) -> u64 {
    conns(doc)
        .iter()
        .map(|c| c[side][key].as_u64().unwrap())
        .sum()
}

fn both(doc: &Value, key: &str) -> u64 {
    sum(doc, "client_to_server", key) + sum(doc, "server_to_client", key)
}

const LOSS_KINDS: &[&str] = &["retransmission", "rto_stall", "syn_retransmit"];

fn assert_no_loss(doc: &Value, what: &str) {
    let kinds = all_kinds(doc);
    assert!(
        !kinds.iter().any(|k| LOSS_KINDS.contains(&k.as_str())),
        "{what}: {kinds:?}"
    );
    assert_eq!(both(doc, "retransmissions"), 0, "{what}");
    assert_eq!(both(doc, "out_of_order"), 0, "{what}");
}

/// `tcpdump -i any` in the namespace of a bridge sees each packet on the
/// client's port and on the server's: every packet twice. The copies are
/// ignored (no retransmission, no out-of-order, bytes counted once) and
/// counted once, as a capture property.
#[test]
fn bridge_any_capture_copies_are_counted_not_retransmissions() {
    let doc = run_rttdoc_json(&semantics("bridge-any.pcap.gz"));
    assert_eq!(conns(&doc).len(), 1);
    assert_no_loss(&doc, "bridge -i any");
    let frames = doc["capture"]["frames"].as_u64().unwrap();
    let dups = doc["capture"]["capture_duplicates"].as_u64().unwrap();
    assert_eq!(dups, both(&doc, "capture_duplicates"));
    // Each packet twice; only the last pure ACK (IP ID 0, from the closed
    // socket) cannot be told from a real repeat and is kept.
    assert!(
        dups + 2 >= frames / 2 && dups <= frames / 2,
        "{dups} of {frames}"
    );
    assert_eq!(sum(&doc, "server_to_client", "bytes"), 200_000);
    assert_eq!(
        both(&doc, "packets"),
        frames - dups,
        "copies are not counted as packets"
    );
}

/// `tcpdump -i any` on a Kubernetes-style node of a VXLAN overlay
/// (scripts/overlay-captures.sh): each packet of a pod's downloads from a
/// pod on another node is there four times, three times bare (the pod's
/// veth, the bridge, the VXLAN device) and once inside a VXLAN datagram on
/// the underlay. The copies across the encapsulation are copies too: every
/// segment analysed once, nothing lost, the streams tshark's.
#[test]
fn overlay_node_copies_inside_and_outside_vxlan_are_one_packet() {
    let capture = semantics("overlay-any.pcap.gz");
    let doc = run_rttdoc_json(&capture);
    assert_eq!(conns(&doc).len(), 3);
    assert_no_loss(&doc, "overlay -i any");
    let segments = doc["capture"]["tcp_segments"].as_u64().unwrap();
    let dups = doc["capture"]["capture_duplicates"].as_u64().unwrap();
    // Three of every four, but for a last pure ACK's copies (IP ID 0,
    // from a socket in TIME-WAIT: a copy cannot be told from a repeat;
    // here once, the server's ACK of the client's FIN on the first
    // connection).
    assert!(
        dups * 4 <= segments * 3 && (dups + 3) * 4 >= segments * 3,
        "{dups} of {segments}"
    );
    assert_eq!(dups, both(&doc, "capture_duplicates"));
    for c in conns(&doc) {
        // The 200 KB file and the response head, once.
        let bytes = c["server_to_client"]["bytes"].as_u64().unwrap();
        assert!((200_000..200_400).contains(&bytes), "{bytes}");
    }
    if require(
        "overlay_node_copies_inside_and_outside_vxlan_are_one_packet",
        &["tshark"],
        false,
    ) {
        assert_agrees_with_tshark(&capture, &[]);
        // A quarter of tshark's TCP frames carry an outer UDP header.
        let inside = tshark_fields(&capture, &[], "tcp && vxlan", &["frame.number"]).len() as u64;
        assert_eq!(inside * 4, segments);
    }
}

/// The client's and the server's own captures merged (mergecap): the same
/// datagrams, same IP identification, interleaved by time.
#[test]
fn merged_client_and_server_captures_analyse_each_packet_once() {
    let doc = run_rttdoc_json(&semantics("merged.pcap.gz"));
    assert_no_loss(&doc, "merged");
    let frames = doc["capture"]["frames"].as_u64().unwrap();
    let dups = doc["capture"]["capture_duplicates"].as_u64().unwrap();
    assert!(
        dups + 2 >= frames / 2 && dups <= frames / 2,
        "{dups} of {frames}"
    );
    assert_eq!(sum(&doc, "server_to_client", "bytes"), 200_000);
}

/// The duplicate rule must not swallow real retransmissions: a download
/// through a token-bucket queue that drops bursts still shows them, and
/// the finding cites each original and its retransmission.
#[test]
fn real_loss_still_gives_retransmissions_with_their_frames() {
    let doc = run_rttdoc_json(&semantics("loss.pcap.gz"));
    assert_eq!(doc["capture"]["capture_duplicates"], 0);
    let c = &conns(&doc)[0];
    let retx = c["server_to_client"]["retransmissions"].as_u64().unwrap();
    assert!(retx > 0);
    let f = c["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "retransmission")
        .expect("retransmission finding");
    let frames: Vec<u64> = f["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert!(frames.len() >= 2, "{frames:?}");
    let filter = f["display_filter"].as_str().unwrap();
    assert!(filter.contains("frame.number in {"), "{filter}");
    if which("tshark").is_some() {
        // Every frame cited is one tshark, too, sees as a retransmission
        // or as the original of one: the same bytes.
        let out = std::process::Command::new("tshark")
            .args(["-r"])
            .arg(semantics("loss.pcap.gz"))
            .args([
                "-Y",
                "tcp.analysis.retransmission || tcp.analysis.out_of_order",
            ])
            .args(["-T", "fields", "-e", "frame.number"])
            .output()
            .unwrap();
        let flagged: Vec<u64> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect();
        let cited_retx = frames.iter().filter(|f| flagged.contains(f)).count();
        assert!(
            cited_retx * 2 >= frames.len() - 1,
            "cited {frames:?}, tshark {flagged:?}"
        );
    }
}

/// A trace appended to itself (mergecap -a): the clock goes back to the
/// start. tshark keeps every packet on tcp.stream 0 (calling the second
/// pass retransmissions); rttdoc keeps the stream number and takes the
/// second pass as copies: the analysis is the one of the single trace.
#[test]
fn trace_appended_to_itself_is_analysed_once_on_the_same_stream() {
    let once = run_rttdoc_json(&semantics("keepalive.pcap.gz"));
    let twice = run_rttdoc_json(&semantics("doubled.pcap.gz"));
    assert_eq!(twice["capture"]["capture_restarts"], 1);
    assert_eq!(once["capture"]["capture_restarts"], 0);
    assert_eq!(
        twice["capture"]["capture_duplicates"],
        once["capture"]["frames"]
    );
    assert_eq!(conns(&twice).len(), 1);
    assert_eq!(conns(&twice)[0]["stream"], 0);
    for side in ["client_to_server", "server_to_client"] {
        for key in ["packets", "bytes", "retransmissions", "keepalives"] {
            assert_eq!(
                conns(&twice)[0][side][key],
                conns(&once)[0][side][key],
                "{side}.{key}"
            );
        }
    }
    assert_eq!(all_kinds(&twice), all_kinds(&once));
    assert_no_loss(&twice, "doubled");
    if which("tshark").is_some() {
        let out = std::process::Command::new("tshark")
            .args(["-r"])
            .arg(semantics("doubled.pcap.gz"))
            .args(["-T", "fields", "-e", "tcp.stream"])
            .output()
            .unwrap();
        let streams: std::collections::BTreeSet<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_string)
            .collect();
        assert_eq!(streams.into_iter().collect::<Vec<_>>(), vec!["0"]);
    }
}

/// Linux's keep-alive probes (SO_KEEPALIVE, TCP_KEEPIDLE 1 s): zero bytes
/// at snd_nxt - 1, each answered by an ACK. Counted as keep-alives.
#[test]
fn kernel_keepalive_probes_are_counted_and_not_loss() {
    let doc = run_rttdoc_json(&semantics("keepalive.pcap.gz"));
    let c = &conns(&doc)[0];
    assert!(c["client_to_server"]["keepalives"].as_u64().unwrap() >= 2);
    assert_eq!(c["server_to_client"]["keepalives"], 0);
    assert_no_loss(&doc, "keepalive");
}

/// Windows sends 1-byte keep-alives (the byte before snd_nxt): before,
/// each one was a "retransmission" and the idle before it an `rto_stall`.
/// Frames tshark calls keep-alives are never cited as retransmissions, and
/// the real retransmissions of that capture still are.
#[test]
fn one_byte_keepalives_of_a_real_capture_are_not_retransmissions() {
    let Some(path) = public("seladb-PcapPlusPlus/ExamplesTest__pcap_examples__many-protocols.pcap")
    else {
        return;
    };
    if !require("one_byte_keepalives", &["tshark"], false) {
        return;
    }
    let doc = run_rttdoc_json(&path);
    let out = std::process::Command::new("tshark")
        .arg("-r")
        .arg(&path)
        .args([
            "-Y",
            "tcp.analysis.keep_alive",
            "-T",
            "fields",
            "-e",
            "frame.number",
        ])
        .output()
        .unwrap();
    let keepalives: Vec<u64> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect();
    assert!(keepalives.len() > 50);
    // Every keep-alive tshark flags, plus the Windows probes of a byte the
    // peer had already acknowledged (stream 68, frames 4691 and 4698: seq
    // 286 while the peer acked 287, a FIN outstanding), which tshark's
    // rule (the byte at snd_nxt - 1) misses.
    assert_eq!(both(&doc, "keepalives"), keepalives.len() as u64 + 2);
    let mut retx_findings = 0;
    for c in conns(&doc) {
        for f in c["findings"].as_array().unwrap() {
            if f["kind"] != "retransmission" && f["kind"] != "rto_stall" {
                continue;
            }
            retx_findings += 1;
            let frames = f["frames"].as_array().unwrap();
            assert!(!frames.is_empty(), "finding without frames: {f}");
            for fr in frames {
                assert!(
                    !keepalives.contains(&fr.as_u64().unwrap()),
                    "keep-alive cited: {f}"
                );
            }
        }
    }
    assert!(retx_findings > 0, "the capture's real retransmissions");
}

/// Linux's zero-window probes (0 bytes at snd_una - 1 while the window is
/// closed): counted as probes, not retransmissions; the zero window held
/// the server back and is reported.
#[test]
fn zero_window_that_held_the_sender_back_is_reported_and_its_probes_are_not_loss() {
    let doc = run_rttdoc_json(&semantics("zero-window.pcap.gz"));
    let c = &conns(&doc)[0];
    assert!(c["server_to_client"]["window_probes"].as_u64().unwrap() >= 1);
    assert!(c["client_to_server"]["zero_windows"].as_u64().unwrap() >= 1);
    assert!(all_kinds(&doc).contains(&"zero_window".to_string()));
    assert!(!all_kinds(&doc).contains(&"rto_stall".to_string()));
}

/// A connect to a closed port: the kernel's RST. The ending is `refused`,
/// and nothing was lost.
#[test]
fn rst_refused_connection_has_its_own_ending_and_no_loss() {
    let doc = run_rttdoc_json(&semantics("refused.pcap.gz"));
    let c = &conns(&doc)[0];
    assert_eq!(c["ending"], "refused");
    assert_eq!(c["handshake"]["syn_retransmits"], 0);
    assert_no_loss(&doc, "refused");
}

/// One server segment deleted from the capture (editcap): the client
/// ACKed bytes the capture never showed. That is a capture drop, reported
/// as `acked_unseen` and a gap, never as loss.
#[test]
fn packet_dropped_by_the_capture_is_not_path_loss() {
    let doc = run_rttdoc_json(&semantics("missing.pcap.gz"));
    let c = &conns(&doc)[0];
    assert_eq!(c["server_to_client"]["acked_unseen"], 1);
    assert_eq!(c["server_to_client"]["gaps"], 1);
    assert_no_loss(&doc, "missing");
}

/// A public one-directional capture (only the client's packets) with a
/// missing packet: a gap and nothing inferred about the unseen side.
#[test]
fn one_directional_capture_with_a_missing_packet_reports_no_loss() {
    let Some(path) = public(
        "seladb-PcapPlusPlus/Pcap++Test__PcapExamples__unidirectional_tcp_stream_with_missing_packet.pcap",
    ) else {
        return;
    };
    let doc = run_rttdoc_json(&path);
    let c = &conns(&doc)[0];
    assert_eq!(c["server_to_client"]["packets"], 0);
    assert_eq!(c["client_to_server"]["gaps"], 1);
    assert_no_loss(&doc, "unidirectional");
    assert!(all_kinds(&doc).is_empty(), "{:?}", all_kinds(&doc));
}

/// The lab's random-loss fixture (real kernel, emulated loss): the true
/// retransmissions still fire, with frames, from every vantage.
#[test]
fn lab_loss_fixture_still_reports_retransmissions_with_frames() {
    let dir = data_dir().join("lab/random-loss-nginx");
    for side in ["client", "middle", "server"] {
        let doc = run_rttdoc_json(&dir.join(format!("{side}.pcapng.gz")));
        let found: Vec<&Value> = conns(&doc)
            .iter()
            .flat_map(|c| c["findings"].as_array().unwrap().iter())
            .filter(|f| f["kind"] == "retransmission")
            .collect();
        assert!(!found.is_empty(), "{side}");
        for f in found {
            assert!(!f["frames"].as_array().unwrap().is_empty(), "{side}: {f}");
        }
        assert_eq!(doc["capture"]["capture_duplicates"], 0, "{side}");
    }
}

/// Finding kinds of this area (loss, probes, windows): what a partial view
/// must never invent.
const SEMANTIC_KINDS: &[&str] = &[
    "retransmission",
    "rto_stall",
    "syn_retransmit",
    "zero_window",
];

fn stream_kinds(doc: &Value) -> std::collections::BTreeSet<(u64, String)> {
    conns(doc)
        .iter()
        .flat_map(|c| {
            c["findings"].as_array().unwrap().iter().map(move |f| {
                (
                    c["stream"].as_u64().unwrap(),
                    f["kind"].as_str().unwrap().to_string(),
                )
            })
        })
        .filter(|(_, k)| SEMANTIC_KINDS.contains(&k.as_str()))
        .collect()
}

/// Kernel captures seen partly: one direction only (asymmetric routing)
/// or from mid-stream (no handshake), cut from the lab's captures with
/// tshark. A loss, probe or window finding on the partial view must be one
/// the whole capture has too: nothing is inferred from the unseen side.
#[test]
fn one_directional_and_mid_stream_views_invent_no_loss_or_window_findings() {
    if !require("partial_views", &["tshark"], false) {
        return;
    }
    let tmp = TempDir::new("partial-views");
    for scenario in [
        "random-loss-nginx",
        "slow-reader-builtin",
        "zero-window-nginx",
        "syn-loss",
        "ssai-nginx",
        "tls13-nagle-nginx",
    ] {
        let full_path = data_dir()
            .join("lab")
            .join(scenario)
            .join("client.pcapng.gz");
        let full = stream_kinds(&run_rttdoc_json(&full_path));
        for (tag, filter) in [
            ("client-only", "ip.src==10.77.0.1"),
            ("server-only", "ip.dst==10.77.0.1"),
            ("mid-stream", "frame.number > 3"),
        ] {
            let cut = tmp.0.join(format!("{scenario}-{tag}.pcapng"));
            let ok = std::process::Command::new("tshark")
                .arg("-r")
                .arg(&full_path)
                .args(["-Y", filter, "-w"])
                .arg(&cut)
                .status()
                .unwrap()
                .success();
            assert!(ok, "tshark cut {scenario} {tag}");
            let doc = run_rttdoc_json(&cut);
            let partial = stream_kinds(&doc);
            assert!(
                partial.is_subset(&full),
                "{scenario} {tag}: {partial:?} not in {full:?}"
            );
            if tag != "mid-stream" {
                let unseen = if tag == "client-only" {
                    "server_to_client"
                } else {
                    "client_to_server"
                };
                assert_eq!(sum(&doc, unseen, "packets"), 0, "{scenario} {tag}");
            }
        }
    }
}

/// A public capture that holds every server packet twice, ~100 µs apart,
/// with the same IP identification (a span port or a capture on two
/// interfaces). tshark flags the second copies as retransmissions; they
/// are the same datagrams: counted as copies, no `retransmission`.
#[test]
fn public_capture_with_doubled_server_packets_has_copies_not_retransmissions() {
    let Some(path) = public("the-tcpdump-group-tcpdump/pptp.pcap") else {
        return;
    };
    if !require("doubled_server_packets", &["tshark"], false) {
        return;
    }
    // tshark's own fields show each flagged "retransmission" repeats the
    // IP identification, sequence number and length of the frame before.
    let out = std::process::Command::new("tshark")
        .arg("-r")
        .arg(&path)
        .args(["-Y", "tcp.stream == 0", "-T", "fields"])
        .args([
            "-e",
            "ip.src",
            "-e",
            "ip.id",
            "-e",
            "tcp.seq_raw",
            "-e",
            "tcp.len",
        ])
        .args(["-e", "tcp.analysis.retransmission"])
        .output()
        .unwrap();
    let rows: Vec<Vec<String>> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect();
    let mut copies_by_tshark = 0u64;
    for w in rows.windows(2) {
        if !w[1][4].is_empty() && w[1][4] != "0" {
            assert_eq!(w[0][..4], w[1][..4], "not a copy: {:?}", w[1]);
            copies_by_tshark += 1;
        }
    }
    assert!(copies_by_tshark >= 2);
    let doc = run_rttdoc_json(&path);
    let c = &conns(&doc)[0];
    assert!(
        c["server_to_client"]["capture_duplicates"]
            .as_u64()
            .unwrap()
            >= copies_by_tshark
    );
    assert_no_loss(&doc, "pptp");
}

/// Capture copies are a property of the capture: the overview says so
/// once, with the count the JSON gives, and no connection carries them.
#[test]
fn the_overview_names_capture_copies_once() {
    let path = semantics("merged.pcap.gz");
    let copies = run_rttdoc_json(&path)["capture"]["capture_duplicates"]
        .as_u64()
        .unwrap();
    assert!(copies > 0);
    let out = std::process::Command::new(rttdoc_bin())
        .args(["analyze"])
        .arg(&path)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let notes: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("in the capture more than once"))
        .collect();
    assert_eq!(notes.len(), 1, "{text}");
    assert!(
        notes[0].contains(&format!("{copies} TCP packets")),
        "{text}"
    );
}

/// Every `retransmission` finding of a document, with its stream.
fn retransmissions(doc: &Value) -> Vec<(u64, &Value)> {
    findings_of(doc, "retransmission")
}

/// A re-send cited as one whose loss the capture cannot show: no wait, no
/// cost, half confidence, words that say so.
fn assert_unconfirmed(f: &Value, what: &str) {
    assert_eq!(f["cost_ms"], 0.0, "{what}: {f}");
    assert_eq!(f["confidence"], 0.5, "{what}: {f}");
    assert!(
        f["waits"].as_array().is_none_or(|w| w.is_empty()),
        "{what}: {f}"
    );
    let words = f["explanation"].as_str().unwrap();
    assert!(words.contains("cannot be told"), "{what}: {words}");
}

/// A capture filtered to its data packets (`tshark -Y "tcp.len > 0"`, a
/// common way to shrink one) keeps every re-send but none of the
/// receiver's ACKs. The lab's random-loss run, filtered so by tshark at
/// each vantage: the re-sends are still cited, but as unconfirmed, with
/// no wait; the unfiltered capture shows the loss and its waits.
#[test]
fn a_capture_of_data_packets_only_cites_resends_without_claiming_loss() {
    if !require(
        "a_capture_of_data_packets_only_cites_resends_without_claiming_loss",
        &["tshark"],
        false,
    ) {
        return;
    }
    let dir = TempDir::new("data-only");
    for vantage in ["client", "middle", "server"] {
        let full = data_dir()
            .join("lab/random-loss-nginx")
            .join(format!("{vantage}.pcapng.gz"));
        let filtered = dir.path(&format!("{vantage}.pcapng"));
        let status = std::process::Command::new("tshark")
            .arg("-r")
            .arg(&full)
            .args(["-Y", "tcp.len > 0", "-w"])
            .arg(&filtered)
            .status()
            .unwrap();
        assert!(status.success(), "tshark filtering {}", full.display());

        let whole = run_rttdoc_json(&full);
        let seen = retransmissions(&whole);
        assert!(!seen.is_empty(), "{vantage}: the lab's loss is found");
        for (_, f) in &seen {
            assert_eq!(f["confidence"], 1.0, "{vantage}: {f}");
        }
        let cost: f64 = seen
            .iter()
            .map(|(_, f)| f["cost_ms"].as_f64().unwrap())
            .sum();
        assert!(cost > 0.0, "{vantage}: the loss's waits are counted");

        let data_only = run_rttdoc_json(&filtered);
        let cited = retransmissions(&data_only);
        let streams = |v: &[(u64, &Value)]| v.iter().map(|(s, _)| *s).collect::<Vec<_>>();
        assert_eq!(
            streams(&cited),
            streams(&seen),
            "{vantage}: the same re-sends"
        );
        for (_, f) in &cited {
            assert_unconfirmed(f, vantage);
        }
        assert!(
            !all_kinds(&data_only).iter().any(|k| k == "rto_stall"),
            "{vantage}"
        );
    }
}

/// Two public captures of data packets only (no pure ACK at all): each
/// re-send in them is cited unconfirmed (docs/real-world.md judges them).
#[test]
fn public_captures_without_acks_claim_no_loss() {
    for name in [
        "seladb-PcapPlusPlus/ExamplesTest__pcap_examples__tls2.pcap",
        "seladb-PcapPlusPlus/ExamplesTest__pcap_examples__http-packets.pcap",
    ] {
        let Some(path) = public(name) else { return };
        let doc = run_rttdoc_json(&path);
        let cited = retransmissions(&doc);
        assert!(cited.len() >= 2, "{name}: {} re-sends cited", cited.len());
        for (stream, f) in cited {
            assert_unconfirmed(f, &format!("{name} stream {stream}"));
        }
    }
}

/// A capture cut at a snap length (`editcap -s 96`, `tcpdump -s 96`):
/// each TLS record's header survives, the hellos in them do not (they are
/// named by their type byte, marked cut). The
/// client's records after the server's unreadable flight are its Finished
/// and its requests, not 0-RTT early data (which only comes before the
/// server's flight), and the TCP findings stand.
#[test]
fn a_capture_cut_at_a_snap_length_invents_no_early_data() {
    if !require(
        "a_capture_cut_at_a_snap_length_invents_no_early_data",
        &["editcap"],
        false,
    ) {
        return;
    }
    let dir = TempDir::new("snaplen");
    for fixture in ["think-time-builtin", "tls13-nagle-nginx"] {
        let full = data_dir()
            .join("lab")
            .join(fixture)
            .join("middle.pcapng.gz");
        let cut = dir.path(&format!("{fixture}.pcapng"));
        let status = std::process::Command::new("editcap")
            .args(["-s", "96"])
            .arg(&full)
            .arg(&cut)
            .status()
            .unwrap();
        assert!(status.success(), "editcap -s 96 {}", full.display());
        let doc = run_rttdoc_json(&cut);
        let whole = run_rttdoc_json(&full);
        for c in conns(&doc) {
            let messages = c["tls"]["messages"].as_array().cloned().unwrap_or_default();
            assert!(
                messages.iter().any(|m| m["cut"] == true),
                "{fixture}: the cut is seen"
            );
            let early: Vec<_> = messages
                .iter()
                .filter(|m| m["message"].as_str().unwrap().contains("Early data"))
                .collect();
            assert!(
                early.is_empty(),
                "{fixture} stream {}: {early:?}",
                c["stream"]
            );
        }
        // What needs no TLS payload is found in the cut capture too.
        let tcp_kinds = |d: &Value| -> Vec<String> {
            let mut k: Vec<String> = all_kinds(d)
                .into_iter()
                .filter(|k| k.starts_with("nagle"))
                .collect();
            k.sort();
            k
        };
        assert_eq!(tcp_kinds(&doc), tcp_kinds(&whole), "{fixture}");
    }
}

/// `tls2` misses most ServerHellos (a capture of data packets only, begun
/// mid-handshake): the client's records after its ClientKeyExchange (a
/// TLS 1.2 client answering a server flight the capture missed) are its
/// requests, not 0-RTT early data.
#[test]
fn application_data_after_a_missed_server_flight_is_no_early_data() {
    let Some(path) = public("seladb-PcapPlusPlus/ExamplesTest__pcap_examples__tls2.pcap") else {
        return;
    };
    let doc = run_rttdoc_json(&path);
    let early: Vec<(u64, u64)> = conns(&doc)
        .iter()
        .flat_map(|c| {
            c["tls"]["messages"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .filter(|m| m["message"].as_str().unwrap().contains("Early data"))
                .map(|m| (c["stream"].as_u64().unwrap(), m["frame"].as_u64().unwrap()))
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(early.is_empty(), "(stream, frame): {early:?}");
}
