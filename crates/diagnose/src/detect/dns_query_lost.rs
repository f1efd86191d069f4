//! `dns_query_lost` — a query of the name lookup the client made before
//! its SYN went unanswered until the client's resolver sent it again.
//!
//! Signature: the connection's lookup (the queries its client sent for
//! the server's name just before the SYN, rttdoc-analyze's dns.rs) holds
//! a query with no answer before the next one, followed by a query for the same name and
//! record type at least [`MIN_TIMEOUT_NS`] later: the resolver's timer
//! (glibc's `options timeout:`, 5 s by default; musl, Go and
//! systemd-resolved keep timers of their own; Windows' first is 1 s)
//! ran out and it asked again, of the same resolver or the next. An
//! answer that came after the resend left came too late: the query
//! counts as lost. A resend sooner than that is not a timeout (two callers asking
//! the same name at once).
//!
//! The client waited from the lost query to its resend: that is the cost,
//! one wait per lost query, on the client's clock (both are its packets),
//! released by no packet (a timer). Waits that overlap (an A and an AAAA
//! lost together) count once: each begins where the one before it ended.
//! The wait is before the SYN, outside the ledger (phase none): never
//! part of the connection's excess.
//!
//! The lost query was one of a pair when a query for the same name and
//! the other address type (A beside AAAA) left from the same client port
//! within [`PAIR_NS`] of it and was answered before the resend: glibc's
//! parallel A and AAAA from one socket, the pattern a stateful NAT or
//! firewall's connection-tracking race drops one of (the fix differs:
//! `options single-request-reopen`).

use super::Facts;
use crate::model::{Detail, Finding, FindingKind, Wait};
use rttdoc_analyze::{LookupQuery, NameLookup};

/// The shortest wait a resolver's retry timer gives a query (glibc's
/// least `timeout:` is 1 s, systemd-resolved starts near 400 ms; a
/// resend sooner is another caller's query).
pub const MIN_TIMEOUT_NS: i64 = 200_000_000;

/// How close together a resolver sends the A and AAAA queries of one
/// name when it sends them at once (back to back from one socket).
pub const PAIR_NS: i64 = 10_000_000;

/// One lost query's wait: the query, its resend, and the part of the
/// time between them no earlier lost query's wait already covers.
#[derive(Debug, Clone, Copy)]
pub struct LostWait<'a> {
    pub lost: &'a LookupQuery,
    pub resend: &'a LookupQuery,
    /// Where the wait counts from (the lost query's send, or the end of
    /// the wait before it when they overlap).
    pub from_ns: i64,
}

/// The lookup's lost queries and their waits, in the order sent, each
/// counted from where the one before it ended (module docs).
pub fn lost_waits(lookup: &NameLookup) -> Vec<LostWait<'_>> {
    let queries = &lookup.queries;
    let mut out: Vec<LostWait<'_>> = Vec::new();
    let mut covered_to = i64::MIN;
    for (i, q) in queries.iter().enumerate() {
        let Some(resend) = queries[i + 1..].iter().find(|r| {
            r.name == q.name
                && r.qtype == q.qtype
                && r.sent.ts_ns.saturating_sub(q.sent.ts_ns) >= MIN_TIMEOUT_NS
        }) else {
            continue;
        };
        // An answer that came after the resend left came too late.
        if q.answer.is_some_and(|a| a.at.frame < resend.sent.frame) {
            continue;
        }
        let from_ns = q.sent.ts_ns.max(covered_to);
        if from_ns >= resend.sent.ts_ns {
            continue;
        }
        covered_to = resend.sent.ts_ns;
        out.push(LostWait {
            lost: q,
            resend,
            from_ns,
        });
    }
    out
}

pub fn detect(f: &Facts<'_>, out: &mut Vec<Finding>) {
    let Some(lookup) = f.lookup else { return };
    let lost = lost_waits(lookup);
    let Some(first) = lost.first() else { return };
    let waits: Vec<Wait> = lost
        .iter()
        .map(|w| Wait {
            from_frame: w.lost.sent.frame,
            to_frame: w.resend.sent.frame,
            release_frame: None,
            ms: (w.resend.sent.ts_ns - w.from_ns) as f64 / 1e6,
        })
        .collect();
    let cost: f64 = waits.iter().map(|w| w.ms).sum();
    let paired = lookup.queries.iter().any(|other| {
        other.port == first.lost.port
            && other.name == first.lost.name
            && other.qtype != first.lost.qtype
            && (other.sent.ts_ns - first.lost.sent.ts_ns).abs() <= PAIR_NS
            && other
                .answer
                .is_some_and(|a| a.at.frame < first.resend.sent.frame)
    });
    let mut frames: Vec<u64> = Vec::new();
    for w in &lost {
        frames.push(w.lost.sent.frame);
        frames.push(w.resend.sent.frame);
        if let Some(a) = w.resend.answer {
            frames.push(a.at.frame);
        }
    }
    frames.extend(f.client_syn().map(|r| r.frame));
    frames.sort_unstable();
    frames.dedup();
    let mut x = f.finding(FindingKind::DnsQueryLost, None);
    x.frames = frames;
    x.cost_ms = cost;
    x.display_filter = f.lookup_filter(lookup);
    x.detail = Detail::DnsQueryLost {
        name: first.lost.name.clone(),
        qtype: first.lost.qtype,
        resolver: first.lost.resolver,
        resent_to: (first.resend.resolver != first.lost.resolver).then_some(first.resend.resolver),
        late_ms: first
            .lost
            .answer
            .map(|a| (a.at.ts_ns - first.lost.sent.ts_ns) as f64 / 1e6),
        lost: lost.len() as u32,
        paired,
        timeout_ms: timer_ns(lookup, first.lost) as f64 / 1e6,
    };
    x.waits = waits;
    out.push(x);
}

/// How long the resolver waited before it asked anything for the lost
/// query's name again: its timer (glibc may ask the answered twin again
/// first, and the lost one only after that answer).
fn timer_ns(lookup: &NameLookup, lost: &LookupQuery) -> i64 {
    lookup
        .queries
        .iter()
        .filter(|q| q.name == lost.name)
        .map(|q| q.sent.ts_ns - lost.sent.ts_ns)
        .filter(|&ns| ns >= MIN_TIMEOUT_NS)
        .min()
        .unwrap_or(0)
}
