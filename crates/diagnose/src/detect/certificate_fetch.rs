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
//!
//! After the handshake: a client may answer the server's flight at once
//! and check the certificate beside the handshake, sending no request
//! until the check is done (Chrome with Windows' verifier: its key
//! exchange left at once, its first request after the OCSP answer). The
//! signature, at the client again: the connection's first request, the
//! client's first data after its Finished, left within the think-time
//! threshold (a host's turnaround) of the answer to a fetch of the same
//! client begun after the server's ServerHello and before the request.
//! The wait runs from when the client could have sent the request (the
//! later of its own Finished and the server's last handshake record
//! before the request: a TLS 1.2 server's Finished) to the request; its
//! cost is the part of it the fetches covered (from their beginning, or
//! the wait's, to their answers), at least the threshold. A server that
//! speaks first (its greeting may be what the client waited for) is not
//! read. The time is outside the ledger's rows (between the handshake
//! and the first request): phase none, never part of the excess.
//!
//! For a revocation check, what the handshake said of a stapled status
//! is part of the finding (and of its fix): whether the ClientHello asked
//! for one (status_request), and in TLS 1.2 whether the server's flight
//! carried a CertificateStatus after its Certificate (TLS 1.3 staples
//! inside the encrypted Certificate: not seen). The ClientHello's frame
//! and the server's message after its Certificate are cited.

use super::client_think_time::at_client;
use super::server_think_time::threshold_of;
use super::{Facts, HandshakeTurn};
use crate::model::{
    CertificateCheck, Detail, Direction, FetchHeld, Finding, FindingKind, Phase, StatusStaple,
    TlsMessage, TlsReport, Wait,
};
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
    out.ns = covered_ns(&spans, from);
    // (The first of equals, as they began.)
    out.longest = spans
        .iter()
        .rev()
        .max_by_key(|(began, ended, _)| ended - began)
        .map(|(.., x)| *x);
    out
}

/// How much of the time from `from` the spans (begun, ended), in the
/// order they began, cover, counted once where they overlap.
fn covered_ns(spans: &[(i64, i64, &CertificateFetch)], from: i64) -> i64 {
    let (mut ns, mut reached) = (0, from);
    for &(began, ended, _) in spans {
        ns += (ended - began.max(reached)).max(0);
        reached = reached.max(ended);
    }
    ns
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
    if let Some(x) = held_request(f, threshold) {
        out.push(x);
    }
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
    let cited: Vec<(&Wait, &CertificateFetch)> =
        waits.iter().map(|(w, fetch, ..)| (w, *fetch)).collect();
    let staple = staple(f.report.tls.as_deref());
    cite(f, &mut x, &cited, staple, fetch.what);
    x.cost_ms = waits.iter().map(|(w, ..)| w.ms).sum();
    x.detail = Detail::CertificateFetch {
        held: FetchHeld::Handshake {
            turns: waits.len() as u32,
        },
        what: fetch.what,
        url: fetch.url.to_string(),
        stream: fetch.stream,
        answered: fetch.answer.is_some_and(|a| a.ts_ns <= client_answered),
        connected: fetch.began != fetch.request,
        fetches: waits.iter().map(|(_, _, n, _)| n).sum(),
        staple,
    };
    x.waits = waits.into_iter().map(|(w, ..)| w).collect();
    out.push(x);
}

/// The frames of `waits` and their fetches (each wait's ends around its
/// fetch's beginning, request and answer), and the filter that shows
/// them: this connection's stream, the fetches' and their lookups.
fn cite(
    f: &Facts<'_>,
    x: &mut Finding,
    waits: &[(&Wait, &CertificateFetch)],
    staple: StatusStaple,
    what: CertificateCheck,
) {
    let mut streams = vec![f.report.stream];
    // (What the handshake said of a stapled status, where the words cite
    // it: for a revocation check.)
    match staple {
        _ if what == CertificateCheck::Intermediate => {}
        StatusStaple::Unknown => {}
        StatusStaple::NotAsked { client_hello } | StatusStaple::Unseen { client_hello } => {
            x.frames.push(client_hello)
        }
        StatusStaple::NotStapled {
            client_hello,
            flight,
        } => x.frames.extend([client_hello, flight]),
        StatusStaple::Stapled { status } => x.frames.push(status),
    }
    for (w, fetch) in waits {
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
    // (A lookup begun before the wait comes before its first frame.)
    x.frames.sort_unstable();
    x.frames.dedup();
    // (A fetch's lookup is DNS, no stream's: its query is cited too.)
    x.display_filter = super::upstream_wait::streams_and_filter(&streams, &["dns"], &x.frames);
}

/// The first request held after the handshake for the client's fetches
/// (module docs, "After the handshake"), at least `threshold` of it.
fn held_request(f: &Facts<'_>, threshold: i64) -> Option<Finding> {
    if !at_client(f) || f.greeting.is_some() {
        return None;
    }
    let tls = f.report.tls.as_deref()?;
    let request = f.exchanges.first()?.request_first;
    let client = Direction::ClientToServer;
    // The client's Finished, the last before the request: the handshake
    // was done on its side.
    let finished = tls.messages.iter().rfind(|m| {
        m.direction == client
            && m.frame <= request.frame
            && matches!(
                m.message,
                TlsMessage::FinishedEncrypted | TlsMessage::Finished
            )
    })?;
    let finished = f.record(finished.frame)?;
    // Nothing of the client's between its Finished and the request: it is
    // the first thing the client sent after the handshake.
    if f.between(finished.frame + 1, request.frame)
        .iter()
        .any(|r| r.dir == client && r.len > 0)
    {
        return None;
    }
    // The server's last handshake record before the request (a TLS 1.2
    // server's Finished; a TLS 1.3 ticket comes after the handshake and
    // is waited for by nobody).
    let server_done = tls
        .messages
        .iter()
        .rfind(|m| {
            m.direction == Direction::ServerToClient
                && m.frame < request.frame
                && !matches!(
                    m.message,
                    TlsMessage::NewSessionTicketEncrypted
                        | TlsMessage::EarlyData
                        | TlsMessage::Alert { .. }
                        | TlsMessage::AlertEncrypted
                        | TlsMessage::OtherRecord(_)
                )
        })
        .and_then(|m| f.record(m.frame));
    let hello = tls
        .messages
        .iter()
        .find(|m| m.direction == Direction::ServerToClient)
        .and_then(|m| f.record(m.frame))?;
    let ready = match server_done {
        Some(s) if s.frame > finished.frame => s,
        _ => finished,
    };
    if ready.ts_ns >= request.ts_ns {
        return None;
    }
    // Each fetch's part of the wait, in the order they began.
    let mut spans: Vec<(i64, i64, &CertificateFetch)> = f
        .certificate_fetches
        .iter()
        .filter(|x| x.began.ts_ns > hello.ts_ns && x.began.ts_ns < request.ts_ns)
        .filter_map(|x| {
            let end = x
                .answer
                .map_or(request.ts_ns, |a| a.ts_ns.min(request.ts_ns));
            (end > ready.ts_ns).then_some((x.began.ts_ns.max(ready.ts_ns), end, x))
        })
        .collect();
    spans.sort_by_key(|(began, ..)| *began);
    let covered = covered_ns(&spans, ready.ts_ns);
    // The fetch answered last (the last of equals, as they began).
    let &(_, released, fetch) = spans.iter().max_by_key(|(_, ended, _)| *ended)?;
    // The request left a turnaround after the last answer: that answer let
    // it go (later, the client had other reasons to wait).
    let after = request.ts_ns - released;
    if covered < threshold || after > threshold {
        return None;
    }
    let wait = Wait {
        from_frame: ready.frame,
        to_frame: request.frame,
        release_frame: None,
        ms: covered as f64 / 1e6,
    };
    let mut x = f.finding(FindingKind::CertificateFetch, None);
    let staple = staple(Some(tls));
    cite(f, &mut x, &[(&wait, fetch)], staple, fetch.what);
    x.cost_ms = wait.ms;
    x.detail = Detail::CertificateFetch {
        held: FetchHeld::FirstRequest {
            after_ms: after as f64 / 1e6,
        },
        what: fetch.what,
        url: fetch.url.to_string(),
        stream: fetch.stream,
        answered: fetch.answer.is_some_and(|a| a.ts_ns <= request.ts_ns),
        connected: fetch.began != fetch.request,
        fetches: spans.len() as u32,
        staple,
    };
    x.waits = vec![wait];
    Some(x)
}

/// What the handshake said of a stapled status: the client's ask (its
/// ClientHello's status_request) and, in TLS 1.2, the server's answer
/// (a CertificateStatus right after its Certificate, or the next
/// message of its flight instead).
fn staple(tls: Option<&TlsReport>) -> StatusStaple {
    let Some((tls, &client_hello)) = tls.and_then(|t| Some((t, t.client_hello_frames.first()?)))
    else {
        return StatusStaple::Unknown;
    };
    if !tls.status_request_offered {
        return StatusStaple::NotAsked { client_hello };
    }
    match (tls.status_stapled, tls.after_certificate().map(|m| m.frame)) {
        (Some(true), Some(status)) => StatusStaple::Stapled { status },
        (Some(false), Some(flight)) => StatusStaple::NotStapled {
            client_hello,
            flight,
        },
        _ => StatusStaple::Unseen { client_hello },
    }
}
