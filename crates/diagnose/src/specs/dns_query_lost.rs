//! `dns_query_lost` (detect/dns_query_lost.rs).
//!
//! > Signature: the connection's lookup holds a query with no answer,
//! > followed by a query for the same name and record type at least
//! > 200 ms later: the resolver's timer ran out and it asked again. The
//! > client waited from the lost query to its resend: one wait per lost
//! > query, on the client's clock, released by no packet (a timer);
//! > overlapping waits count once. Before the SYN: phase none. The lost
//! > query was one of a pair when the other address type's query left the
//! > same port within 10 ms of it and was answered before the resend.

use super::*;
use crate::model::Detail;
use FindingKind::DnsQueryLost;

const RTT: f64 = 40.0;
const EXACT: f64 = 1e-3;
const A: u16 = 1;
const AAAA: u16 = 28;
const NAME: &str = "api.example.com";
/// The resolver's round trip.
const DNS_RTT: f64 = 4.0;

/// glibc's lookup of NAME with its AAAA query lost: A and AAAA together
/// from one socket, the A answered, the AAAA sent again when the timer
/// (`timeout_ms`) ran out and answered empty; the SYN right after.
/// Returns the wire, the lost query, its resend, the resend's answer and
/// the SYN.
fn lost_aaaa(path: Path, timeout_ms: f64) -> (Wire, [Id; 4]) {
    let mut w = Wire::new(path);
    w.dns(0.0, 5000, 1, NAME, A, None);
    let lost = w.dns(0.02, 5000, 2, NAME, AAAA, None);
    w.dns(DNS_RTT, 5000, 1, NAME, A, Some((0, 1)));
    let resend = w.dns(timeout_ms, 5000, 2, NAME, AAAA, None);
    let answer = w.dns(timeout_ms + DNS_RTT, 5000, 2, NAME, AAAA, Some((0, 0)));
    let syn = w.ask_at(timeout_ms + DNS_RTT + 0.2);
    (w, [lost, resend, answer, syn])
}

#[test]
fn a_query_sent_again_when_the_resolvers_timer_ran_out_is_a_lost_query() {
    for timeout in [1000.0, 5000.0] {
        let (w, ids) = lost_aaaa(Path::at_client(RTT), timeout);
        let o = w.run();
        let f = o.the(DnsQueryLost);
        // Before the SYN: in no ledger phase, nothing attributed.
        assert_eq!(f.phase, None);
        assert_eq!(f.attributed_ms, 0.0);
        assert_eq!(f.frames, o.frames(&ids));
        assert_ms(f.cost_ms, timeout - 0.02, EXACT, "lost query to its resend");
        assert_eq!(f.waits.len(), 1);
        assert_eq!(f.waits[0].release_frame, None, "a timer releases it");
        let Detail::DnsQueryLost {
            qtype,
            paired,
            lost,
            timeout_ms,
            ..
        } = &f.detail
        else {
            panic!("{:?}", f.detail)
        };
        assert_eq!((*qtype, *paired, *lost), (AAAA, true, 1));
        assert_ms(*timeout_ms, timeout - 0.02, EXACT, "the timer");
        assert_cost_is_its_waits(f);
        let l = o.report.name_lookup.as_ref().expect("the lookup");
        assert_eq!(l.name, NAME);
        assert_eq!(l.unanswered, 1);
        assert_ms(l.ms, timeout + DNS_RTT, EXACT, "first query to last answer");
    }
}

#[test]
fn a_lone_query_lost_is_not_one_of_a_pair() {
    let mut w = Wire::new(Path::at_client(RTT));
    w.dns(0.0, 5000, 1, NAME, A, None);
    w.dns(1000.0, 5000, 1, NAME, A, None);
    w.dns(1000.0 + DNS_RTT, 5000, 1, NAME, A, Some((0, 1)));
    w.ask_at(1000.0 + DNS_RTT + 0.2);
    let o = w.run();
    let f = o.the(DnsQueryLost);
    assert!(matches!(
        f.detail,
        Detail::DnsQueryLost { paired: false, .. }
    ));
    assert_ms(f.cost_ms, 1000.0, EXACT, "lost query to its resend");
}

#[test]
fn a_and_aaaa_lost_together_cost_one_wait() {
    let mut w = Wire::new(Path::at_client(RTT));
    w.dns(0.0, 5000, 1, NAME, A, None);
    w.dns(0.02, 5000, 2, NAME, AAAA, None);
    w.dns(2000.0, 5000, 1, NAME, A, None);
    w.dns(2000.02, 5000, 2, NAME, AAAA, None);
    w.dns(2000.0 + DNS_RTT, 5000, 1, NAME, A, Some((0, 1)));
    w.dns(2000.02 + DNS_RTT, 5000, 2, NAME, AAAA, Some((0, 0)));
    w.ask_at(2000.02 + DNS_RTT + 0.2);
    let o = w.run();
    let f = o.the(DnsQueryLost);
    // Not 4 s: the second wait starts where the first ended.
    assert_ms(f.cost_ms, 2000.02, EXACT, "one timer's wait");
    assert!(matches!(
        f.detail,
        Detail::DnsQueryLost {
            lost: 2,
            paired: false,
            ..
        }
    ));
    assert_cost_is_its_waits(f);
}

#[test]
fn a_second_query_sooner_than_any_timer_is_another_callers() {
    let mut w = Wire::new(Path::at_client(RTT));
    w.dns(0.0, 5000, 1, NAME, A, None);
    w.dns(50.0, 5001, 7, NAME, A, None);
    w.dns(50.0 + DNS_RTT, 5001, 7, NAME, A, Some((0, 1)));
    w.ask_at(50.0 + DNS_RTT + 0.2);
    let o = w.run();
    o.has_no(DnsQueryLost);
    assert!(o.report.name_lookup.is_some());
}

#[test]
fn a_lookup_answered_long_before_the_syn_is_not_the_connections() {
    // A cached answer: the capture's lookup was another moment's.
    let (mut w, _) = {
        let mut w = Wire::new(Path::at_client(RTT));
        w.dns(0.0, 5000, 1, NAME, A, None);
        w.dns(1000.0, 5000, 1, NAME, A, None);
        w.dns(1000.0 + DNS_RTT, 5000, 1, NAME, A, Some((0, 1)));
        (w, ())
    };
    w.ask_at(1000.0 + DNS_RTT + 3000.0);
    let o = w.run();
    o.has_no(DnsQueryLost);
    assert_eq!(o.report.name_lookup, None);
}

#[test]
fn another_names_lost_query_is_not_this_lookups() {
    let mut w = Wire::new(Path::at_client(RTT));
    w.dns(0.0, 5000, 1, "other.example.net", A, None);
    w.dns(1000.0, 5000, 1, "other.example.net", A, None);
    w.dns(
        1000.0 + DNS_RTT,
        5000,
        1,
        "other.example.net",
        A,
        Some((0, 0)),
    );
    w.dns(1010.0, 5002, 3, NAME, A, None);
    w.dns(1010.0 + DNS_RTT, 5002, 3, NAME, A, Some((0, 1)));
    w.ask_at(1010.0 + DNS_RTT + 0.2);
    let o = w.run();
    o.has_no(DnsQueryLost);
    let l = o.report.name_lookup.as_ref().expect("the lookup");
    assert_eq!((l.queries, l.unanswered), (1, 0));
}

#[test]
fn an_answer_for_another_address_is_not_the_connections_lookup() {
    let mut w = Wire::new(Path::at_client(RTT));
    w.dns(0.0, 5000, 1, NAME, A, None);
    w.dns(1000.0, 5000, 1, NAME, A, None);
    // No A record: the server's address was never in an answer.
    w.dns(1000.0 + DNS_RTT, 5000, 1, NAME, A, Some((3, 0)));
    w.ask_at(1000.0 + DNS_RTT + 0.2);
    let o = w.run();
    o.has_no(DnsQueryLost);
    assert_eq!(o.report.name_lookup, None);
}
