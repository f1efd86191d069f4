//! `address_fallback` (detect/address_fallback.rs).
//!
//! > Signature: the connection's lookup answered several addresses for
//! > the server's name, and after its first answer and before this
//! > connection's SYN the capture has connections to another of those
//! > addresses, on the same port, not accepted before this SYN. The cost
//! > is one wait, from the first failed attempt's SYN to this SYN (both
//! > the client's packets), released by no packet of this connection.
//! > An attempt less than 100 ms before this SYN was opened side by side,
//! > not given up on: nothing is reported. Before the SYN: phase none.

use super::*;
use crate::model::Detail;
use FindingKind::AddressFallback;

const RTT: f64 = 40.0;
const EXACT: f64 = 1e-3;
const A: u16 = 1;
const AAAA: u16 = 28;
const NAME: &str = "www.example.com";
const DNS_RTT: f64 = 4.0;
const V6: &str = "2001:db8::2";

/// The lookup: A (the server's address, and `extra_a` when given) and
/// AAAA (`aaaa` when given), both answered at DNS_RTT.
fn lookup(w: &mut Wire, extra_a: Option<&str>, aaaa: Option<&str>) {
    w.dns(0.0, 5000, 1, NAME, A, None);
    w.dns(0.02, 5000, 2, NAME, AAAA, None);
    let ip = |s: Option<&str>| s.map(|s| s.parse::<IpAddr>().unwrap());
    w.dns_with(DNS_RTT, 5000, 1, NAME, A, Some((0, 1)), ip(extra_a));
    w.dns_with(DNS_RTT + 0.02, 5000, 2, NAME, AAAA, Some((0, 0)), ip(aaaa));
}

#[test]
fn ipv6_tried_first_and_unanswered_is_happy_eyeballs_wait() {
    let mut w = Wire::new(Path::at_client(RTT));
    lookup(&mut w, None, Some(V6));
    let v6 = w.syn_to(DNS_RTT + 0.3, 41000, V6);
    // RFC 8305: IPv4 250 ms later.
    let syn = w.ask_at(DNS_RTT + 250.3);
    let o = w.run();
    let f = o.the(AddressFallback);
    assert_eq!(f.phase, None);
    assert_eq!(f.attributed_ms, 0.0);
    assert_eq!(f.frames, o.frames(&[v6, syn]));
    assert_ms(f.cost_ms, 250.0, EXACT, "the IPv6 SYN to the IPv4 one");
    assert_eq!(f.waits[0].release_frame, None);
    let Detail::AddressFallback {
        first, attempts, ..
    } = &f.detail
    else {
        panic!("{:?}", f.detail)
    };
    assert_eq!((first.to_string().as_str(), *attempts), (V6, 1));
    assert!(f.fix.is_empty(), "worded by the renderer");
    assert_cost_is_its_waits(f);
    let l = o.report.name_lookup.as_ref().unwrap();
    assert_eq!(l.failed_attempts.len(), 1);
    assert_eq!(l.failed_attempts[0].syn_frame, o.frame(v6));
}

#[test]
fn a_dead_a_record_tried_first_costs_the_connect_timeout() {
    let mut w = Wire::new(Path::at_client(RTT));
    lookup(&mut w, Some("10.0.0.9"), None);
    let dead = w.syn_to(DNS_RTT + 0.3, 41000, "10.0.0.9");
    w.syn_to(DNS_RTT + 1000.3, 41000, "10.0.0.9");
    let syn = w.ask_at(DNS_RTT + 3000.3);
    let o = w.run();
    let f = o.the(AddressFallback);
    assert_eq!(f.frames, o.frames(&[dead, syn]));
    assert_ms(
        f.cost_ms,
        3000.0,
        EXACT,
        "the dead address's SYN to this one",
    );
}

#[test]
fn both_families_tried_at_once_is_no_fallback() {
    let mut w = Wire::new(Path::at_client(RTT));
    lookup(&mut w, None, Some(V6));
    w.syn_to(DNS_RTT + 0.3, 41000, V6);
    w.ask_at(DNS_RTT + 0.8);
    w.run().has_no(AddressFallback);
}

#[test]
fn a_parallel_connection_to_another_address_of_a_shared_pool_is_no_fallback() {
    // many-protocols.pcap 114/115: a browser opened connections to two
    // addresses 6.6 ms apart; the first was accepted 15 ms after its SYN.
    let mut w = Wire::new(Path::at_client(RTT));
    lookup(&mut w, Some("10.0.0.9"), None);
    w.syn_to(DNS_RTT + 0.3, 41000, "10.0.0.9");
    w.ask_at(DNS_RTT + 6.9);
    w.run().has_no(AddressFallback);
}

#[test]
fn an_address_the_lookup_did_not_answer_is_no_fallback() {
    let mut w = Wire::new(Path::at_client(RTT));
    lookup(&mut w, None, None);
    w.syn_to(DNS_RTT + 0.3, 41000, "10.0.0.7");
    w.ask_at(DNS_RTT + 250.3);
    let o = w.run();
    o.has_no(AddressFallback);
    assert!(o
        .report
        .name_lookup
        .as_ref()
        .unwrap()
        .failed_attempts
        .is_empty());
}

#[test]
fn an_attempt_before_the_answer_came_is_not_this_lookups() {
    let mut w = Wire::new(Path::at_client(RTT));
    w.syn_to(1.0, 41000, V6);
    lookup(&mut w, None, Some(V6));
    w.ask_at(DNS_RTT + 250.3);
    w.run().has_no(AddressFallback);
}

#[test]
fn without_the_lookup_a_syn_elsewhere_proves_nothing() {
    // The addresses' link is the answer: no DNS, no finding.
    let mut w = Wire::new(Path::at_client(RTT));
    w.syn_to(0.3, 41000, V6);
    w.ask_at(250.3);
    let o = w.run();
    o.has_no(AddressFallback);
    assert_eq!(o.report.name_lookup, None);
}
