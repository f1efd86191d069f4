//! `http_auth_challenge` — a request waited for the authentication
//! challenges it answered.
//!
//! Signature: an earlier request of the same client (on this connection
//! or another) asked for the same method and URL (a `CONNECT`, the same
//! authority) and was answered `401` with a `WWW-Authenticate` challenge
//! (a proxy: `407` with `Proxy-Authenticate`), and this request carries
//! the credentials that challenge asked for (`Authorization`,
//! `Proxy-Authorization`); it began after the challenge was captured and
//! within 2 s of it (rttdoc-analyze's challenge.rs: a client that has
//! the credentials answers the moment it reads the challenge; a person
//! typing a password takes longer, and that is not a round trip's cost).
//! HTTP/1.x or HTTP/2 (each request on its stream, whichever of its turn
//! it is), in the clear or read with a key log. A follow-up challenged
//! again (NTLM's second leg, a stale Digest nonce) is one more leg of the
//! request that is finally sent and not challenged: it holds them all; a
//! request rejected at the end (a wrong password) holds none.
//!
//! Each leg is one wait, released by its challenge: from the challenged
//! request to the next request of the chain (this one for the last),
//! whatever connection carries it (a server that closed the challenged
//! connection made the client open another: its set-up is in the wait).
//! A client that sent the credentials it had with its first request
//! would have been served then. Nothing under the ledger's 2 ms floor.
//!
//! The ledger prices the challenged requests' round trips in (exchanges
//! like any other): the cost is never attributed to the excess. It is a
//! cost against the client's (or the proxy's) way of authenticating.

use super::Facts;
use crate::model::{Detail, Finding, FindingKind, Phase, Wait};

pub fn detect(f: &Facts<'_>, out: &mut Vec<Finding>) {
    for (i, x) in f.exchanges.iter().enumerate() {
        let Some(c) = x.challenged.as_deref() else {
            continue;
        };
        let (Some(first), Some(last)) = (c.legs.first(), c.legs.last()) else {
            continue;
        };
        let nexts = c
            .legs
            .iter()
            .skip(1)
            .map(|l| l.request)
            .chain([c.follow_up]);
        // (challenge.rs: each request of the chain began after the
        // challenge before it, which came after its request.)
        let waits: Vec<Wait> = c
            .legs
            .iter()
            .zip(nexts)
            .map(|(leg, next)| Wait {
                from_frame: leg.request.frame,
                to_frame: next.frame,
                release_frame: Some(leg.answer.frame),
                ms: next.ts_ns.saturating_sub(leg.request.ts_ns).max(0) as f64 / 1e6,
            })
            .collect();
        let cost_ms: f64 = waits.iter().map(|w| w.ms).sum();
        if cost_ms * 1e6 < super::causality::EXCESS_FLOOR_NS as f64 {
            continue;
        }
        let mut finding = f.finding(FindingKind::HttpAuthChallenge, Some(Phase::FirstByte));
        let mut frames: Vec<u64> = c
            .legs
            .iter()
            .flat_map(|l| [l.request.frame, l.answer.frame])
            .chain([c.follow_up.frame])
            .collect();
        frames.sort_unstable();
        frames.dedup();
        finding.frames = frames;
        finding.waits = waits;
        finding.cost_ms = cost_ms;
        finding.confidence = 0.9;
        let mut streams: Vec<u64> = c.legs.iter().map(|l| l.stream).collect();
        streams.push(f.report.stream);
        streams.sort_unstable();
        streams.dedup();
        finding.display_filter = if streams.len() == 1 {
            f.filter_frames(&finding.frames)
        } else {
            super::upstream_wait::streams_filter(&streams, &finding.frames)
        };
        finding.detail = Detail::HttpAuthChallenge {
            exchange: i as u32 + 1,
            challenged_stream: first.stream,
            challenged_request: c.request_label.clone(),
            challenges: c.legs.len() as u32,
            status: last.status,
            offered: c.offered,
            answered_with: c.answered_with,
            new_connection: streams.len() > 1,
            answer_ms: c
                .legs
                .iter()
                .map(|l| l.answer.ts_ns.saturating_sub(l.request.ts_ns).max(0) as f64 / 1e6)
                .sum(),
            turnaround_ms: x
                .request_first
                .ts_ns
                .saturating_sub(last.answer.ts_ns)
                .max(0) as f64
                / 1e6,
        };
        out.push(finding);
    }
}
