//! `certificate_fetch` — in the TLS handshake, between the server's
//! flight reaching the client and the client's next flight, the client
//! fetched over the network what it needed to check the server's
//! certificate: the intermediate the server had not sent (the
//! certificate's AIA "CA Issuers" URL: Chromium, Windows), its
//! revocation status from the CA's OCSP responder (Firefox, Windows,
//! `gnutls-cli --ocsp`), or a revocation list. The capture shows the
//! fetch on a connection of its own (rttdoc-analyze's cert_fetch.rs
//! reads its request or answer and hands it on with this connection's
//! facts).
//!
//! Signature, captured at the client (both connections then on its
//! clock; elsewhere the fetch's path is not this connection's and its
//! times cannot be placed in the turn: nothing is claimed): in a client
//! turn of the handshake whose server flight the capture showed whole, a
//! fetch of the same client that began (its name lookup's first query or
//! its SYN when its connection was opened for it, else its request) after
//! the flight's last segment and before the client's answer. The part
//! of the turn from each such fetch's beginning to its answer's first
//! segment (without an answer before the client went on: to the client's
//! answer, the client gave up on it) is the wait; the fetches of one
//! turn count once where they overlap. At least the think-time threshold
//! (`client_think_time`'s: above a host's turnaround), or nothing.
//! A fetch that began before the flight came (another handshake's, which
//! this one may have joined) is not claimed: `client_think_time` keeps
//! that time, as it keeps the client's own time before and after the
//! fetch (its verification). Each wait runs from the server's last
//! segment to the client's answer, with no releasing packet of this
//! connection's (the fetch's answer, another connection's, is cited
//! among the frames). Cost: the waits' sum. Fix: on the server: the whole
//! chain for an intermediate, OCSP stapling for a revocation check.

use super::client_think_time::at_client;
use super::server_think_time::threshold_of;
use super::{Facts, HandshakeTurn};
use crate::model::{Detail, Direction, Finding, FindingKind, Phase, Wait};
use rttdoc_analyze::CertificateFetch;

/// What a client turn's certificate fetches took of it (module docs).
pub(super) struct Fetched<'a> {
    /// The part of the turn (from its server flight's last segment to the
    /// client's answer) they covered, counted once where they overlap.
    pub ns: i64,
    /// The fetch that took the most of it.
    pub longest: Option<&'a CertificateFetch>,
    /// How many began in the turn.
    pub fetches: u32,
}

/// What the certificate fetches begun in the client's turn `t` took of
/// it; nothing away from the client or without a fetch begun in the
/// turn.
pub(super) fn fetched<'a>(f: &Facts<'a>, t: &HandshakeTurn) -> Fetched<'a> {
    let mut out = Fetched {
        ns: 0,
        longest: None,
        fetches: 0,
    };
    if f.certificate_fetches.is_empty()
        || t.answerer != Direction::ClientToServer
        || !t.complete
        || !at_client(f)
    {
        return out;
    }
    let (from, to) = (t.question_ts_ns, t.answer_ts_ns);
    // Each fetch's span within the turn, in the order they began.
    let mut spans: Vec<(i64, i64, &CertificateFetch)> = f
        .certificate_fetches
        .iter()
        .filter(|x| x.began.ts_ns > from && x.began.ts_ns < to)
        .map(|x| {
            let end = x.answer.map_or(to, |a| a.ts_ns.min(to));
            (x.began.ts_ns, end.max(x.began.ts_ns), x)
        })
        .collect();
    spans.sort_by_key(|(began, ..)| *began);
    out.fetches = spans.len() as u32;
    let (mut reached, mut longest_ns) = (from, 0);
    for (began, ended, x) in spans {
        out.ns += (ended - began.max(reached)).max(0);
        reached = reached.max(ended);
        if out.longest.is_none() || ended - began > longest_ns {
            (out.longest, longest_ns) = (Some(x), ended - began);
        }
    }
    out
}

pub fn detect(f: &Facts<'_>, out: &mut Vec<Finding>) {
    if f.certificate_fetches.is_empty() {
        return;
    }
    let Some(rtt) = f.rtt_ns else { return };
    // (As client_think_time: behind a balancer the client here is the
    // balancer, and its fetches are not the ones its client waited for.)
    if f.report.proxy_protocol.is_some() {
        return;
    }
    let threshold = threshold_of(rtt);
    // (The wait, the turn's longest fetch, how many began in it, when
    // the client answered.)
    let mut waits: Vec<(Wait, &CertificateFetch, u32, i64)> = Vec::new();
    for t in f.handshake_turns() {
        let Fetched {
            ns,
            longest: Some(fetch),
            fetches,
        } = fetched(f, t)
        else {
            continue;
        };
        if ns < threshold {
            continue;
        }
        let wait = Wait {
            from_frame: t.question_frame,
            to_frame: t.answer_frame,
            release_frame: None,
            ms: ns as f64 / 1e6,
        };
        waits.push((wait, fetch, fetches, t.answer_ts_ns));
    }
    let Some(&(_, fetch, _, client_answered)) =
        waits.iter().max_by(|a, b| a.0.ms.total_cmp(&b.0.ms))
    else {
        return;
    };
    let mut x = f.finding(FindingKind::CertificateFetch, Some(Phase::TlsHandshake));
    let mut streams = vec![f.report.stream];
    for (w, fetch, ..) in &waits {
        x.frames.push(w.from_frame);
        for stamp in [Some(fetch.began), Some(fetch.request), fetch.answer]
            .into_iter()
            .flatten()
        {
            if !x.frames.contains(&stamp.frame) {
                x.frames.push(stamp.frame);
            }
        }
        x.frames.push(w.to_frame);
        if !streams.contains(&fetch.stream) {
            streams.push(fetch.stream);
        }
    }
    // (A fetch's lookup is DNS, no stream's: its query is cited too.)
    x.display_filter = super::upstream_wait::streams_and_filter(&streams, &["dns"], &x.frames);
    x.cost_ms = waits.iter().map(|(w, ..)| w.ms).sum();
    x.detail = Detail::CertificateFetch {
        turns: waits.len() as u32,
        what: fetch.what,
        url: fetch.url.to_string(),
        stream: fetch.stream,
        answered: fetch.answer.is_some_and(|a| a.ts_ns <= client_answered),
        connected: fetch.began != fetch.request,
        fetches: waits.iter().map(|(_, _, n, _)| n).sum(),
    };
    x.waits = waits.into_iter().map(|(w, ..)| w).collect();
    out.push(x);
}
