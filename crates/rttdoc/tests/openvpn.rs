//! An OpenVPN tunnel over TCP (tests/data/openvpn, made by
//! scripts/openvpn-captures.sh: OpenVPN 2.6 in TLS mode, curl and nginx
//! talking through it, real Linux TCP, 20 ms each way, tcpdump on the
//! client's outer interface). The tunnel's TCP connection carries the
//! packets of the flows inside it: neither end answers the other, so no
//! exchange is made of it and nothing of it is the server's think time
//! (an earlier version found seconds of it in the tunnel's idle time).
//! What is the tunnel's own: OpenVPN leaves Nagle's algorithm on unless
//! told (`tcp-nodelay`), and a tunnelled packet written right after
//! another waits for the ACK of the first, which the peer delays.

mod common;

use common::*;

fn doc(name: &str) -> serde_json::Value {
    run_rttdoc_json(&data_dir().join("openvpn").join(name))
}

#[test]
fn a_tunnel_makes_no_exchanges_and_its_idle_time_is_nobody_s() {
    for name in ["openvpn-tcp.pcap.gz", "openvpn-tcp-nodelay.pcap.gz"] {
        let d = doc(name);
        for c in d["connections"].as_array().unwrap() {
            assert_eq!(c["exchanges"], 0, "{name} {}", c["stream"]);
            assert_eq!(c["excess_ms"], 0.0, "{name} {}", c["stream"]);
            assert!(
                c["findings"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .all(|f| f["kind"] == "nagle_delayed_ack"),
                "{name}: {}",
                c["findings"]
            );
        }
    }
}

#[test]
fn nagle_holds_tunnelled_packets_until_the_peer_s_delayed_ack() {
    let d = doc("openvpn-tcp.pcap.gz");
    let c = connection(&d, 0);
    let findings = c["findings"].as_array().unwrap();
    // One finding per end of the tunnel: both hold.
    assert_eq!(findings.len(), 2, "{findings:?}");
    for f in findings {
        assert_eq!(f["kind"], "nagle_delayed_ack");
        // A tunnel's holds stall the flows inside it: no latency phase.
        assert_eq!(f["phase"], "transfer");
        assert!(
            f["fix"].as_str().unwrap().contains("tcp-nodelay"),
            "{}",
            f["fix"]
        );
        let waits = f["waits"].as_array().unwrap();
        assert!(waits.len() >= 3, "{waits:?}");
        for w in waits {
            // A round trip (40 ms) and Linux's delayed ACK (40 ms).
            let ms = w["ms"].as_f64().unwrap();
            assert!((75.0..130.0).contains(&ms), "{w}");
            assert!(w["release_frame"].as_u64().unwrap() < w["to_frame"].as_u64().unwrap());
        }
    }
    // The tunnel's TLS handshake ends with the client's two records, the
    // second held: 17 -> 19, released by the server's ACK in 18.
    let first = &findings[0]["waits"][0];
    assert_eq!(
        (
            first["from_frame"].as_u64(),
            first["to_frame"].as_u64(),
            first["release_frame"].as_u64()
        ),
        (Some(17), Some(19), Some(18))
    );
    assert!(d["summary"]["stall_ms_total"].as_f64().unwrap() > 300.0);
}

#[test]
fn with_tcp_nodelay_nothing_is_held() {
    let d = doc("openvpn-tcp-nodelay.pcap.gz");
    for c in d["connections"].as_array().unwrap() {
        assert_eq!(c["findings"], serde_json::json!([]));
    }
    assert_eq!(d["summary"]["excess_ms_total"], 0.0);
}
