//! OpenSSH (tests/data/ssh, made by scripts/ssh-captures.sh: OpenSSH's
//! client and server, real Linux TCP, 20 ms each way, tcpdump at the
//! client). OpenSSH leaves Nagle's algorithm on until a session turns
//! interactive, and both hosts delay their ACKs: in the key exchange the
//! client writes NEWKEYS and then its SERVICE_REQUEST, and the second
//! waits for the server's delayed ACK of the first (`nagle_delayed_ack`);
//! after authentication the server writes two messages in a row and the
//! second waits for the client's delayed ACK (`write_write_read`). The
//! field's third case (an SFTP backup crawling on Nagle against delayed
//! ACK) on the software people run. Once `ssh -tt` has its terminal,
//! OpenSSH sets TCP_NODELAY: keystrokes and their echoes hold nothing.

mod common;

use common::*;

fn doc(name: &str) -> serde_json::Value {
    run_rttdoc_json(&data_dir().join("ssh").join(name))
}

/// A wait: (from frame, to frame, releasing frame, ms).
type Wait = (u64, u64, u64, f64);

/// A connection's Nagle findings: (kind, waits).
fn nagle_waits(c: &serde_json::Value) -> Vec<(String, Vec<Wait>)> {
    c["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| {
            let k = f["kind"].as_str().unwrap();
            k.starts_with("nagle") || k == "write_write_read"
        })
        .map(|f| {
            let waits = f["waits"]
                .as_array()
                .unwrap()
                .iter()
                .map(|w| {
                    (
                        w["from_frame"].as_u64().unwrap(),
                        w["to_frame"].as_u64().unwrap(),
                        w["release_frame"].as_u64().unwrap(),
                        w["ms"].as_f64().unwrap(),
                    )
                })
                .collect();
            (f["kind"].as_str().unwrap().to_string(), waits)
        })
        .collect()
}

/// The two holds of OpenSSH's connection set-up, on a 40 ms path: each a
/// round trip and a delayed ACK (40 ms on Linux) long.
fn assert_set_up_holds(c: &serde_json::Value, client: (u64, u64, u64), server: (u64, u64, u64)) {
    let found = nagle_waits(c);
    assert_eq!(found.len(), 2, "{found:?}");
    for (kind, (from, to, release)) in [("nagle_delayed_ack", client), ("write_write_read", server)]
    {
        let (_, waits) = found
            .iter()
            .find(|(k, _)| k == kind)
            .unwrap_or_else(|| panic!("no {kind} in {found:?}"));
        assert_eq!(waits.len(), 1, "{kind}: {waits:?}");
        let (f, t, r, ms) = waits[0];
        assert_eq!((f, t, r), (from, to, release), "{kind}");
        assert!((80.0..100.0).contains(&ms), "{kind}: {ms} ms");
    }
}

#[test]
fn scp_s_key_exchange_and_login_wait_on_nagle_against_delayed_ack() {
    let d = doc("scp-download.pcap.gz");
    let c = connection(&d, 0);
    // NEWKEYS (18, 16 bytes), the server's ACK 83 ms later (19), the
    // SERVICE_REQUEST 21 µs after it (20); the server's 412 bytes after
    // the login (30), the client's ACK 44 ms after they came (31), the
    // server's next 44 bytes one round trip later (32).
    assert_set_up_holds(c, (18, 20, 19), (30, 32, 31));
    // The fix is not a socket option the user can set: share one
    // connection's set-up among commands.
    for f in c["findings"].as_array().unwrap() {
        if f["kind"] != "server_think_time" {
            let fix = f["fix"].as_str().unwrap();
            assert!(fix.contains("ControlMaster"), "{fix}");
        }
    }
    // The 256 KB download that follows holds nothing.
    let found = kinds(&c["findings"]);
    assert!(
        found
            .iter()
            .all(|k| ["nagle_delayed_ack", "write_write_read", "server_think_time"].contains(k)),
        "{found:?}"
    );
}

#[test]
fn an_interactive_session_holds_nothing_once_it_has_a_terminal() {
    let d = doc("ssh-typing.pcap.gz");
    let c = connection(&d, 0);
    assert_set_up_holds(c, (16, 18, 17), (28, 30, 29));
    // Keystrokes from frame 40 on, each echoed a round trip later: no
    // finding cites any of them.
    let last_cited = c["findings"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| f["frames"].as_array().unwrap())
        .filter_map(|f| f.as_u64())
        .max()
        .unwrap();
    assert!(last_cited < 40, "a finding cites frame {last_cited}");
    assert!(c["last_frame"].as_u64().unwrap() > 100);
}

/// tcpdump's ssh.pcap (a client's capture of OpenSSH 7.8 to 7.4 across
/// the Internet, 25 ms): the client's KEXINIT (8, 1392 bytes, under the
/// MSS) crosses the server's (9); the client's ECDH init (12), which
/// needs the server's KEXINIT and acknowledges it, waits for the
/// server's delayed ACK of its own KEXINIT (11). It was written when 9
/// came, not when 8 left: the hold is the 38 ms from 9 to 12, not the
/// 58 ms from 8 (20 of them waiting for the server's KEXINIT, which no
/// Nagle setting would have saved).
#[test]
fn a_reply_held_behind_the_clients_own_kexinit_is_held_from_the_servers() {
    let Some(capture) = public_capture("the-tcpdump-group-tcpdump", "ssh.pcap") else {
        return;
    };
    if !require("ssh.pcap's frame times", &["tshark"], false) {
        return;
    }
    let at: Vec<f64> = tshark_fields(
        &capture,
        &[],
        "frame.number <= 12",
        &["frame.time_relative"],
    )
    .iter()
    .map(|r| r[0].parse().unwrap())
    .collect();
    let found = nagle_waits(connection(&run_rttdoc_json(&capture), 0));
    let (_, waits) = found
        .iter()
        .find(|(k, _)| k == "nagle_delayed_ack")
        .unwrap_or_else(|| panic!("{found:?}"));
    let (from, to, release, ms) = waits[0];
    assert_eq!((from, to, release), (9, 12, 11));
    // Both frames are at the client, whose clock the hold is on.
    let held = (at[11] - at[8]) * 1e3;
    assert!((ms - held).abs() < 0.01, "{ms} ms, frames say {held}");
}
