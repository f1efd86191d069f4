//! Software that writes small messages without TCP_NODELAY
//! (tests/data/interactive, made by scripts/interactive-captures.sh: real
//! Linux TCP, 20 ms each way, tcpdump at the client). inetutils' telnetd
//! echoes a command's Enter, then writes the command's output: the output
//! waits behind the unacknowledged echo (Nagle, with Linux's Minshall
//! rule) until the client's ACK reaches the server. Two BIRD routers: the
//! announcing side's last UPDATE waits behind its earlier small one until
//! the peer's delayed ACK (and in some runs a router's KEEPALIVE behind
//! its OPEN). Each finding is checked against the frames (tshark): the
//! held segment is the sender's data that left when the ACK reached it,
//! a round trip after the ACK at the client's tap for the far side's, at
//! once for the client's own.

mod common;

use common::*;

/// A packet as tshark reads it.
struct Frame {
    time: f64,
    /// Sent by the capture's host (the relay lab's client namespace,
    /// 10.81.1.1), not by its peer.
    near: bool,
    ack: u64,
    len: u64,
}

/// The capture host's address in scripts/relay-path.sh's lab.
const CAPTURE_HOST: &str = "10.81.1.1";

/// Every frame of the capture, by frame number (index 0 unused).
fn frames(capture: &std::path::Path) -> Vec<Option<Frame>> {
    let options = ["-o", "tcp.relative_sequence_numbers:TRUE"];
    let fields = [
        "frame.number",
        "frame.time_relative",
        "ip.src",
        "tcp.ack",
        "tcp.len",
    ];
    let mut all = vec![None];
    for f in tshark_fields(capture, &options, "", &fields) {
        assert_eq!(f[0].parse::<usize>().unwrap(), all.len());
        all.push(Some(Frame {
            time: f[1].parse().unwrap(),
            near: f[2] == CAPTURE_HOST,
            ack: f[3].parse().unwrap_or(0),
            len: f[4].parse().unwrap(),
        }));
    }
    all
}

/// Checks each wait of a Nagle finding (held segment, releasing ACK)
/// against the frames: the held segment is data, the ACK the other side's
/// and new (it acknowledges data of the holder no earlier ACK did), and
/// the segment left its sender when the ACK arrived there: at the tap a
/// round trip after the ACK for the far side's hold, at once for the
/// capture host's own. The evidence cites each hold's ACK and held
/// segment, and before them the holder's small segment that armed it.
fn assert_held_until_the_ack(name: &str, finding: &serde_json::Value, rtt: f64) {
    let capture = data_dir().join("interactive").join(name);
    let all = frames(&capture);
    let cited: Vec<usize> = finding["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_u64().unwrap() as usize)
        .collect();
    let waits = finding["waits"].as_array().unwrap();
    assert!(!waits.is_empty(), "{finding}");
    for w in waits {
        let frame = |key: &str| w[key].as_u64().unwrap() as usize;
        let pair = [frame("to_frame"), frame("release_frame")];
        let (held, ack) = (
            all[pair[0]].as_ref().unwrap(),
            all[pair[1]].as_ref().unwrap(),
        );
        assert!(held.len > 0, "{name}: {pair:?}");
        assert!(ack.near != held.near, "{name}: {pair:?}");
        let acked_before = all[..pair[1]]
            .iter()
            .flatten()
            .filter(|f| f.near == ack.near)
            .map(|f| f.ack)
            .max()
            .unwrap_or(0);
        assert!(
            ack.ack > acked_before,
            "{name}: {pair:?} acknowledges nothing new"
        );
        let after = (held.time - ack.time) * 1000.0;
        let expected = if held.near {
            0.0..1.0
        } else {
            rtt * 0.9..rtt * 1.2
        };
        assert!(
            expected.contains(&after),
            "{name}: {pair:?} left {after:.1} ms after the ACK, RTT {rtt:.1} ms"
        );
        // The first holds are cited: the ACK right after the small
        // segment it acknowledged, the held segment right after it.
        if let Some(i) = cited.iter().position(|&c| c == pair[1]) {
            assert!(i >= 1 && cited.get(i + 1) == Some(&pair[0]), "{cited:?}");
            let armed = all[cited[i - 1]].as_ref().unwrap();
            assert!(
                armed.near == held.near && armed.len > 0 && armed.time < ack.time,
                "{name}: {cited:?}"
            );
        }
    }
    assert!(
        cited.contains(&(waits[0]["to_frame"].as_u64().unwrap() as usize)),
        "{cited:?}"
    );
}

#[test]
fn telnet_output_held_behind_its_echo_is_nagle_s() {
    if !require(
        "telnet_output_held_behind_its_echo_is_nagle_s",
        &["tshark"],
        false,
    ) {
        return;
    }
    let name = "telnet-inetutils.pcap.gz";
    let d = run_rttdoc_json(&data_dir().join("interactive").join(name));
    let c = connection(&d, 0);
    let rtt = c["rtt_ms"].as_f64().unwrap();
    let mut nagle = 0;
    for f in c["findings"].as_array().unwrap() {
        match f["kind"].as_str().unwrap() {
            "write_write_read" | "nagle_delayed_ack" => {
                assert_held_until_the_ack(name, f, rtt);
                nagle += 1;
            }
            // telnetd's start under inetd (fork, exec, a pty) before it
            // sends its option negotiation: the client waits for it.
            "server_think_time" => {
                let waits = think_waits(c);
                assert_eq!(waits.len(), 1, "{waits:?}");
                assert_eq!((waits[0].0, waits[0].1), (3, 4), "{waits:?}");
            }
            other => panic!("{other}: {f}"),
        }
    }
    // The `ls` output's tail behind its Enter's echo, `exit`'s behind its
    // own: at least one such hold in every run.
    assert!(nagle >= 1, "{}", c["findings"]);
    // The keys typed slowly are each echoed in a round trip: their turns
    // are at their ideal.
    let keys = first_byte_rows(c)
        .filter(|r| r["exchange"].as_u64().unwrap_or(0) > 0)
        .filter(|r| r["duration_ms"].as_f64().unwrap() < rtt * 1.1)
        .count();
    assert!(keys >= 20, "{keys} turns at a round trip");
}

#[test]
fn a_bgp_update_held_until_the_peer_s_delayed_ack_is_nagle_s() {
    if !require(
        "a_bgp_update_held_until_the_peer_s_delayed_ack_is_nagle_s",
        &["tshark"],
        false,
    ) {
        return;
    }
    let name = "bgp-bird.pcap.gz";
    let d = run_rttdoc_json(&data_dir().join("interactive").join(name));
    let conns = d["connections"].as_array().unwrap();
    assert_eq!(conns.len(), 1);
    let c = &conns[0];
    // Peers, not client and server: no turns (BGP's marker).
    assert_eq!(c["exchanges"], 0);
    let rtt = c["rtt_ms"].as_f64().unwrap();
    // The announcing side's UPDATEs held behind its earlier small ones;
    // in some runs, also a router's KEEPALIVE behind its OPEN: either
    // side's, whichever the capture's host was.
    let findings = c["findings"].as_array().unwrap();
    assert!(!findings.is_empty());
    for f in findings {
        assert!(
            f["kind"] == "nagle_delayed_ack" || f["kind"] == "nagle_hold",
            "{f}"
        );
        assert_held_until_the_ack(name, f, rtt);
    }
}
