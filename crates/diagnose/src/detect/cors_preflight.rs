//! `cors_preflight` — a browser's request to another origin waited for
//! its CORS preflight.
//!
//! Signature: an earlier request of the same client (on this connection
//! or another) was an `OPTIONS` for this request's URL carrying
//! `Access-Control-Request-Method` with this request's method (a CORS
//! preflight, the Fetch standard's), and was answered with an ok status
//! (200-299); this request began after that answer was captured and
//! within 2 s of it (rttdoc-analyze's preflight.rs: a browser sends the
//! request the moment the answer allows it). HTTP/1.x or HTTP/2 (each
//! request on its stream), in the clear or read with a key log.
//!
//! One wait, released by the preflight's answer: from the preflight to
//! this request, whatever connection carries it. Without a preflight the
//! browser would have sent this request where and when it sent the
//! preflight (the preflight's connection was open for it, or opened for
//! it); a request on a connection opened after the answer (Chromium sends
//! a credentialed request's preflight without credentials, on a
//! connection of its own, and opens one for any request when the
//! preflight's is not back in its pool yet) has that connection's set-up
//! in its wait.
//! Nothing under the ledger's 2 ms floor.
//!
//! The ledger prices the preflight's round trip in (an exchange like any
//! other, one round trip at best): the cost is never attributed to the
//! excess. It is a cost against the page's way of calling its API.

use super::Facts;
use crate::model::{Detail, Finding, FindingKind, Phase, Wait};

pub fn detect(f: &Facts<'_>, out: &mut Vec<Finding>) {
    for (i, x) in f.exchanges.iter().enumerate() {
        let Some(p) = x.preflighted.as_deref() else {
            continue;
        };
        let (asked, to) = (&p.preflight, p.follow_up);
        // (preflight.rs: the request began after the answer, which came
        // after its preflight.)
        let wait_ns = to.ts_ns.saturating_sub(asked.request.ts_ns);
        if wait_ns < super::causality::EXCESS_FLOOR_NS || to.ts_ns < asked.answer.ts_ns {
            continue;
        }
        let wait_ms = wait_ns as f64 / 1e6;
        let mut finding = f.finding(FindingKind::CorsPreflight, Some(Phase::FirstByte));
        finding.frames = vec![asked.request.frame, asked.answer.frame, to.frame];
        finding.waits = vec![Wait {
            from_frame: asked.request.frame,
            to_frame: to.frame,
            release_frame: Some(asked.answer.frame),
            ms: wait_ms,
        }];
        finding.cost_ms = wait_ms;
        finding.confidence = 0.9;
        let here = asked.stream == f.report.stream;
        // (Opened after the answer: the connection's SYN, when its
        // timeline begins with it, came after.)
        let opened_after = f
            .timeline
            .first()
            .is_some_and(|s| s.flags.syn() && !s.flags.ack() && s.ts_ns >= asked.answer.ts_ns);
        finding.display_filter = if here {
            f.filter_frames(&finding.frames)
        } else {
            super::upstream_wait::streams_filter(
                &[
                    asked.stream.min(f.report.stream),
                    asked.stream.max(f.report.stream),
                ],
                &finding.frames,
            )
        };
        finding.detail = Detail::CorsPreflight {
            exchange: i as u32 + 1,
            preflight_stream: asked.stream,
            preflight_request: asked.request_label.clone(),
            method: asked.method.clone(),
            request_headers: asked.headers.clone(),
            status: asked.status,
            max_age_s: asked.max_age_s,
            other_connection: !here,
            new_connection: !here && opened_after,
            answer_ms: asked
                .answer
                .ts_ns
                .saturating_sub(asked.request.ts_ns)
                .max(0) as f64
                / 1e6,
            turnaround_ms: to.ts_ns.saturating_sub(asked.answer.ts_ns).max(0) as f64 / 1e6,
        };
        out.push(finding);
    }
}
