//! `address_fallback` — before this connection's SYN the client tried
//! another address of the server's name, and gave up on it.
//!
//! Signature: the connection's lookup (rttdoc-analyze's dns.rs) answered
//! several addresses for the server's name, and after its first answer
//! and before this connection's SYN the capture has connections to
//! another of those addresses, on the same port, that were not accepted
//! (no SYN-ACK) before this SYN and left at least 100 ms before it: the client tried that address first
//! (IPv6 before IPv4: RFC 6724 prefers a global IPv6 address; or the
//! answer's first A record) and moved on when its timer ran out (Happy
//! Eyeballs' 250 ms, RFC 8305; curl's 200 ms), or when the refusal came
//! (a RST, an ICMP unreachable), or, without Happy Eyeballs, when its
//! connect timeout did (a SYN retried for tens of seconds).
//!
//! An attempt less than 100 ms before this SYN was not given up on (RFC
//! 8305's least attempt delay): the client opened both side by side (a
//! browser's parallel connections to a CDN's pool of addresses that
//! several names share), and nothing is reported. The cost is one wait, from the first failed attempt's SYN to this
//! connection's SYN (both the client's packets: its clock), released by
//! no packet of this connection. An attempt accepted after this SYN lost
//! a race it started first: the wait stands, the words say so. Before
//! the SYN: outside the ledger (phase none).

use super::Facts;
use crate::model::{Detail, Finding, FindingKind, Wait};

pub fn detect(f: &Facts<'_>, out: &mut Vec<Finding>) {
    let Some(lookup) = f.lookup else { return };
    let Some(first) = lookup.failed_attempts.first() else {
        return;
    };
    let Some(syn) = f.client_syn() else {
        return;
    };
    if syn.ts_ns < first.syn.ts_ns {
        return;
    }
    let ms = (syn.ts_ns - first.syn.ts_ns) as f64 / 1e6;
    let mut frames: Vec<u64> = lookup.failed_attempts.iter().map(|a| a.syn.frame).collect();
    frames.push(syn.frame);
    frames.sort_unstable();
    frames.dedup();
    let mut x = f.finding(FindingKind::AddressFallback, None);
    x.frames = frames;
    x.cost_ms = ms;
    let mut streams: Vec<u64> = lookup.failed_attempts.iter().map(|a| a.stream).collect();
    streams.push(f.report.stream);
    streams.sort_unstable();
    streams.dedup();
    x.display_filter = format!(
        "tcp.stream in {{{}}}",
        streams
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    x.detail = Detail::AddressFallback {
        first: first.to.ip,
        to: f.report.server.ip,
        first_stream: first.stream,
        attempts: lookup.failed_attempts.len() as u32,
        accepted_later: first.accepted_later,
    };
    x.waits = vec![Wait {
        from_frame: first.syn.frame,
        to_frame: syn.frame,
        release_frame: None,
        ms,
    }];
    out.push(x);
}
