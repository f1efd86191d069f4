//! `dns_search_list` (detect/dns_search_list.rs).
//!
//! > Signature: in the connection's lookup, queries for other names than
//! > the one that resolved were sent before that name's first query, and
//! > none of them got an address: the resolver moves to its next name only
//! > when one has failed. The cost: one wait per name tried first, from its
//! > first query to the next name's, released by its last answer before
//! > that (its NXDOMAIN); a lost query's wait is not counted again; under
//! > 2 ms in all nothing is reported. Before the SYN: phase none.

use super::*;
use crate::model::Detail;
use FindingKind::{DnsQueryLost, DnsSearchList};

const RTT: f64 = 40.0;
const EXACT: f64 = 1e-3;
const A: u16 = 1;
const AAAA: u16 = 28;
const NXDOMAIN: u8 = 3;

/// glibc's lookup: each of `names` asked (A and AAAA together, from a
/// socket of its own), answered `dns_rtt` later, the next name asked at
/// once; the last name's A answer holds the server's address, the SYN
/// follows. Returns the wire, each name's A query and each name's last
/// answer.
fn lookup(path: Path, names: &[&str], dns_rtt: f64) -> (Wire, Vec<Id>, Vec<Id>) {
    let mut w = Wire::new(path);
    let (mut asked, mut answered) = (Vec::new(), Vec::new());
    let mut t = 0.0;
    for (k, name) in names.iter().enumerate() {
        let last = k == names.len() - 1;
        let port = 5000 + k as u16;
        let id = 2 * k as u16;
        asked.push(w.dns(t, port, id, name, A, None));
        w.dns(t + 0.02, port, id + 1, name, AAAA, None);
        let (a, aaaa) = if last {
            (Some((0, 1)), Some((0, 0)))
        } else {
            (Some((NXDOMAIN, 0)), Some((NXDOMAIN, 0)))
        };
        w.dns(t + dns_rtt, port, id, name, A, a);
        answered.push(w.dns(t + dns_rtt + 0.02, port, id + 1, name, AAAA, aaaa));
        t += dns_rtt + 0.1;
    }
    w.ask_at(t);
    (w, asked, answered)
}

const NDOTS: [&str; 4] = [
    "api.example.com.default.svc.cluster.local",
    "api.example.com.svc.cluster.local",
    "api.example.com.cluster.local",
    "api.example.com",
];

#[test]
fn search_domains_tried_before_the_name_are_a_round_trip_each() {
    let (w, asked, answered) = lookup(Path::at_client(RTT), &NDOTS, 4.0);
    let o = w.run();
    let f = o.the(DnsSearchList);
    assert_eq!(f.phase, None);
    assert_eq!(f.attributed_ms, 0.0);
    // Three names, each 4 ms to its NXDOMAIN plus 0.1 ms to the next.
    assert_ms(f.cost_ms, 3.0 * 4.1, EXACT, "first query to the name's");
    assert_eq!(f.waits.len(), 3);
    for (k, wait) in f.waits.iter().enumerate() {
        assert_eq!(wait.from_frame, o.frame(asked[k]));
        assert_eq!(wait.to_frame, o.frame(asked[k + 1]));
        assert_eq!(
            wait.release_frame,
            Some(o.frame(answered[k])),
            "its NXDOMAIN"
        );
    }
    let Detail::DnsSearchList {
        name,
        tried,
        names,
        appended,
    } = &f.detail
    else {
        panic!("{:?}", f.detail)
    };
    assert_eq!(&**name, "api.example.com");
    assert_eq!(*names, 3);
    assert_eq!(
        tried.iter().map(|n| &**n).collect::<Vec<_>>(),
        NDOTS[..3].to_vec()
    );
    assert!(*appended);
    assert_cost_is_its_waits(f);
    assert_eq!(
        o.report.name_lookup.as_ref().unwrap().names_tried,
        NDOTS[..3].iter().map(|n| n.to_string()).collect::<Vec<_>>()
    );
}

#[test]
fn the_name_as_written_asked_before_its_search_domain_is_not_appended() {
    let (w, _, _) = lookup(
        Path::at_client(RTT),
        &["api.internal", "api.internal.corp.example"],
        10.0,
    );
    let o = w.run();
    let f = o.the(DnsSearchList);
    assert!(matches!(
        f.detail,
        Detail::DnsSearchList {
            appended: false,
            names: 1,
            ..
        }
    ));
    assert_ms(f.cost_ms, 10.1, EXACT, "one round");
}

#[test]
fn a_name_that_resolved_at_once_tried_nothing_first() {
    let (w, _, _) = lookup(Path::at_client(RTT), &["api.example.com"], 4.0);
    let o = w.run();
    o.has_no(DnsSearchList);
    assert!(o
        .report
        .name_lookup
        .as_ref()
        .unwrap()
        .names_tried
        .is_empty());
}

#[test]
fn search_domains_a_lan_resolver_answers_in_microseconds_are_under_the_floor() {
    let (w, _, _) = lookup(Path::at_client(RTT), &NDOTS, 0.3);
    w.run().has_no(DnsSearchList);
}

#[test]
fn a_name_tried_first_that_resolved_was_not_given_up() {
    // Two lookups of related names, the first answered with an address:
    // not a search list the resolver walked.
    let mut w = Wire::new(Path::at_client(RTT));
    w.dns(0.0, 5000, 1, "api.example.com.corp", A, None);
    w.dns(4.0, 5000, 1, "api.example.com.corp", A, Some((0, 1)));
    w.dns(4.1, 5001, 2, "api.example.com", A, None);
    w.dns(8.1, 5001, 2, "api.example.com", A, Some((0, 1)));
    w.ask_at(8.3);
    w.run().has_no(DnsSearchList);
}

#[test]
fn a_lost_query_inside_a_round_is_counted_once() {
    let mut w = Wire::new(Path::at_client(RTT));
    let first = w.dns(0.0, 5000, 1, "api.example.com.svc.cluster.local", A, None);
    // Lost, sent again after 1 s, then NXDOMAIN.
    w.dns(
        1000.0,
        5000,
        1,
        "api.example.com.svc.cluster.local",
        A,
        None,
    );
    w.dns(
        1004.0,
        5000,
        1,
        "api.example.com.svc.cluster.local",
        A,
        Some((NXDOMAIN, 0)),
    );
    let name = w.dns(1004.1, 5001, 2, "api.example.com", A, None);
    w.dns(1008.1, 5001, 2, "api.example.com", A, Some((0, 1)));
    w.ask_at(1008.3);
    let o = w.run();
    let lost = o.the(DnsQueryLost);
    let search = o.the(DnsSearchList);
    assert_ms(lost.cost_ms, 1000.0, EXACT, "the timer");
    assert_ms(search.cost_ms, 4.1, EXACT, "the round without the timer");
    assert_eq!(search.waits[0].from_frame, o.frame(first));
    assert_eq!(search.waits[0].to_frame, o.frame(name));
}
