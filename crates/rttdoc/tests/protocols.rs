//! Controls: request-answer protocols run between real servers and
//! clients with nothing slow on either host (tests/data/protocols, made by
//! scripts/protocol-captures.sh: OpenLDAP, unbound's DNS over TCP, Samba;
//! real Linux TCP, 20 ms each way, tcpdump at the client). Each turn is a
//! round trip of the network's and a host's millisecond or few: nothing
//! may be found, and the ledger must not call their turns slow.

mod common;

use common::*;

fn doc(name: &str) -> serde_json::Value {
    run_rttdoc_json(&data_dir().join("protocols").join(name))
}

/// Every connection of the capture, with nothing found and at most
/// `host_ms` beyond the ideal (the hosts' own turnarounds).
fn assert_nothing_found(d: &serde_json::Value, host_ms: f64) {
    for c in d["connections"].as_array().unwrap() {
        let stream = &c["stream"];
        assert!(
            kinds_within(&c["findings"]).is_empty(),
            "stream {stream}: {:?}",
            c["findings"]
        );
        let excess = c["excess_ms"].as_f64().unwrap();
        assert!(
            excess <= host_ms,
            "stream {stream}: {excess} ms beyond the ideal"
        );
    }
}

/// The number of exchanges of each connection, by stream.
fn exchanges(d: &serde_json::Value) -> Vec<u64> {
    let mut conns: Vec<_> = d["connections"].as_array().unwrap().iter().collect();
    conns.sort_by_key(|c| c["stream"].as_u64());
    conns
        .iter()
        .map(|c| c["exchanges"].as_u64().unwrap())
        .collect()
}

#[test]
fn ldap_searches_take_a_round_trip_each() {
    let d = doc("ldap-slapd.pcap.gz");
    // Bind, search, unbind (unanswered) on each connection.
    assert_eq!(exchanges(&d), [3, 3, 3]);
    assert_nothing_found(&d, 2.0);
}

#[test]
fn dns_queries_over_tcp_take_a_round_trip_each() {
    let d = doc("dns-unbound.pcap.gz");
    // One query, then three on a connection kept open.
    assert_eq!(exchanges(&d), [1, 3]);
    assert_nothing_found(&d, 2.0);
}

#[test]
fn an_smb_session_s_many_turns_are_each_a_round_trip() {
    let d = doc("smb-samba.pcap.gz");
    // smbclient opens 445 and 139 at once and drops 139 unused.
    for c in d["connections"].as_array().unwrap() {
        let port = c["server"]["port"].as_u64().unwrap();
        assert!(port == 445 || port == 139, "{port}");
        if port == 139 {
            assert_eq!(c["exchanges"], 0);
        } else {
            assert!(c["exchanges"].as_u64().unwrap() >= 10, "{}", c["exchanges"]);
        }
    }
    // smbd's child takes a few ms over the first request (NEGOTIATE).
    assert_nothing_found(&d, 10.0);
}
