//! `dns_search_list` — the name lookup the client made before its SYN
//! asked for names that do not resolve before the one that did: its
//! resolver's search list.
//!
//! Signature: in the connection's lookup (rttdoc-analyze's dns.rs: the
//! queries for the server's name and its search-list forms, one name the
//! other plus labels), queries for other names than the one that resolved
//! were sent before that name's first query, and every one of them that
//! was answered was answered without an address (NXDOMAIN, or an empty
//! answer for that type). A resolver moves to the next name only when the
//! one before has failed (glibc: both A and AAAA), so each name tried
//! first is a round trip to the resolver the client waited for: a name
//! with fewer dots than `ndots` (1 by default, 5 in a Kubernetes pod) is
//! tried with each search domain appended first; one with as many is
//! asked as written first, a search domain appended after.
//!
//! The cost: one wait per name tried first, from its first query to the
//! next name's first query, released by the last answer it got before
//! that (its NXDOMAIN), on the client's clock (its queries). A lost query
//! and its resend inside a round are `dns_query_lost`'s: that part is not
//! counted again. Under the ledger's 2 ms floor (a resolver on the LAN
//! answering each name in microseconds) nothing is reported. The waits
//! are before the SYN, outside the ledger (phase none).

use super::causality::EXCESS_FLOOR_NS;
use super::dns_query_lost::lost_waits;
use super::Facts;
use crate::model::{Detail, Finding, FindingKind, Wait};

/// Names kept in the finding's words.
const NAMES_KEPT: usize = 8;

pub fn detect(f: &Facts<'_>, out: &mut Vec<Finding>) {
    let Some(lookup) = f.lookup else { return };
    let queries = &lookup.queries;
    // The names tried first, in the order first asked.
    let (Some(resolved_at), names) = lookup.names_before() else {
        return;
    };
    let resolved = &queries[resolved_at];
    // A name that resolved was not given up for the next one.
    let gave_up = !queries[..resolved_at]
        .iter()
        .any(|q| q.answer.is_some_and(|a| a.addresses > 0));
    if names.is_empty() || !gave_up {
        return;
    }
    let lost: Vec<(i64, i64)> = lost_waits(lookup)
        .iter()
        .map(|w| (w.from_ns, w.resend.sent.ts_ns))
        .collect();
    let mut waits: Vec<Wait> = Vec::new();
    for (k, name) in names.iter().enumerate() {
        let asked: Vec<_> = queries[..resolved_at]
            .iter()
            .filter(|q| &*q.name == *name)
            .collect();
        let start = asked[0].sent;
        let next = match names.get(k + 1) {
            Some(next) => queries[..resolved_at]
                .iter()
                .find(|q| &*q.name == *next)
                .map_or(resolved.sent, |q| q.sent),
            None => resolved.sent,
        };
        // The last "no" that came before the next name was asked.
        let release = asked
            .iter()
            .filter_map(|q| q.answer)
            .filter(|a| a.at.frame < next.frame && a.at.ts_ns <= next.ts_ns)
            .max_by_key(|a| a.at.frame);
        let span = next.ts_ns - start.ts_ns;
        let overlap: i64 = lost
            .iter()
            .map(|&(from, to)| (to.min(next.ts_ns) - from.max(start.ts_ns)).max(0))
            .sum();
        let ns = span - overlap;
        if ns <= 0 {
            continue;
        }
        waits.push(Wait {
            from_frame: start.frame,
            to_frame: next.frame,
            release_frame: release.map(|a| a.at.frame),
            ms: ns as f64 / 1e6,
        });
    }
    let cost: f64 = waits.iter().map(|w| w.ms).sum();
    if cost * 1e6 < EXCESS_FLOOR_NS as f64 {
        return;
    }
    let appended = names.iter().all(|n| n.len() > lookup.name.len());
    let mut frames: Vec<u64> = waits
        .iter()
        .flat_map(|w| [Some(w.from_frame), w.release_frame])
        .flatten()
        .collect();
    frames.push(resolved.sent.frame);
    frames.push(lookup.answer.frame);
    frames.extend(f.client_syn().map(|r| r.frame));
    frames.sort_unstable();
    frames.dedup();
    let mut x = f.finding(FindingKind::DnsSearchList, None);
    x.frames = frames;
    x.cost_ms = cost;
    x.display_filter = f.lookup_filter(lookup);
    x.detail = Detail::DnsSearchList {
        name: lookup.name.clone(),
        tried: names.iter().take(NAMES_KEPT).map(|n| (*n).into()).collect(),
        names: names.len() as u32,
        appended,
    };
    x.waits = waits;
    out.push(x);
}
