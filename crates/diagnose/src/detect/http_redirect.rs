//! `http_redirect` — a request waited for the redirect that sent its
//! client to it.
//!
//! Signature: an earlier request of the same client (on this connection
//! or another) was answered `301`, `302`, `303`, `307` or `308` with a
//! `Location`, and this request asks for that `Location` (its URL from its
//! head, or an HTTP/2 stream's header block: in the clear, or read with a
//! key log; an HTTP/2 request whichever of its turn's streams it is), or,
//! its request
//! encrypted, this connection was opened after the answer by a
//! ClientHello asking for the `Location`'s host on its port (asking no
//! name: to the address the `Location` names). It began (its
//! request, or the name lookup or SYN of a connection it opened) after
//! the answer was captured and within 2 s of it (rttdoc-analyze's
//! redirect.rs: a client follows a redirect the moment it has read the
//! status line; later, it is somebody's next visit).
//!
//! The client would have begun on the final URL when it began on the
//! first: everything from there to the follow-up's start was the
//! redirect's. For a path's redirect (the same origin: a trailing slash,
//! a moved page) the wait runs from the redirected request to this
//! request, whatever connection carries it (the one open would have
//! served it). For another origin (`http://` to `https://`, a bare domain
//! to `www.`, a tracker's hop) the final URL needed a connection of its
//! own anyway: the wait runs to the follow-up connection's start (its
//! name lookup or SYN, when it opened one after the answer; else its
//! request), and from the redirected request's connection's SYN when that
//! connection was opened for it (its first request, sent as soon as the
//! set-up let it: its set-up bought nothing but the redirect). Less the
//! server's own work on the redirected request (its answer's time beyond
//! the server's side of the path, redirect.rs's `server_ns`): a login's
//! or a logout's work was done however it was answered, and a slow answer
//! is that request's think time (server_think_time's, on its connection):
//! counted once. Less, too, the client's own delay in following beyond a
//! client's turnaround (`READY_NS`, 20 ms: a client follows the moment it
//! has read the status line; a later start is its scheduler's, a
//! pixel's request put behind the page's: PcapPlusPlus's
//! many-protocols.pcap 52, Firefox 402 ms after the 302, judged). One
//! wait, released by the 3xx answer; nothing under the ledger's 2 ms
//! floor.
//!
//! A client sent to the same URL by redirects again and again (twice or
//! more in the 10 s before: redirect.rs) went round a loop, a page that
//! loads a URL redirecting back to it, or two hosts sending it to each
//! other (PcapPlusPlus's http-packets2.pcap: wix.com's 26 turns through
//! two hosts and a frameset page that loads the first again): the words
//! and the fix say so, linking to the target being no help.
//!
//! A follow-up answered with a redirect of its own is a chain's middle
//! hop (PcapPlusPlus's many-protocols.pcap: `GET /` on google.com sent
//! to `http://www.google.co.il/`, which sent it on to `https://`): the
//! words name the next hop, and the fix links to it, not to a URL that
//! only redirects again.
//!
//! The ledger prices the redirected request's round trip in (an exchange
//! like any other, one round trip at best): the cost is never attributed
//! to the excess. It is a cost against the link that asked for the
//! redirected URL.

use super::Facts;
use crate::model::{Detail, Finding, FindingKind, Phase, Wait};

pub fn detect(f: &Facts<'_>, out: &mut Vec<Finding>) {
    for (i, x) in f.exchanges.iter().enumerate() {
        let Some(r) = x.redirected.as_deref() else {
            continue;
        };
        let a = &r.answered;
        let here = a.stream == f.report.stream;
        let from = match a.opened_for_it {
            Some(syn) if !r.same_origin && !here => syn,
            _ => a.request,
        };
        let to = if r.same_origin { r.follow_up } else { r.began };
        // (redirect.rs: the follow-up began after the answer, which came
        // after its request.) The server's own work on the redirected
        // request is no part of it: the request had it done however it was
        // answered, and a slow one is that request's think time.
        // The client follows the moment it has read the status line; what
        // it took beyond a client's turnaround was its own (a browser's
        // scheduler putting a pixel's request behind the page's), no round
        // trip the redirect added (PcapPlusPlus's many-protocols.pcap 52:
        // 402 ms before Firefox looked up the `Location`'s host, judged).
        // (On the client's clock: the answer reached it its side of the
        // path after the capture; its own packets are as captured. The
        // redirect's connection, if another, shares its client and
        // capture point.)
        let slow_follow = r
            .began
            .ts_ns
            .saturating_sub(a.answer.ts_ns + f.client_side_ns)
            .saturating_sub(rttdoc_analyze::READY_NS)
            .max(0);
        let wait_ns = to.ts_ns.saturating_sub(from.ts_ns) - a.server_ns - slow_follow;
        if wait_ns < super::causality::EXCESS_FLOOR_NS || to.ts_ns < a.answer.ts_ns {
            continue;
        }
        let new_connection = r.began.frame != r.follow_up.frame;
        let wait_ms = wait_ns as f64 / 1e6;
        let mut finding = f.finding(FindingKind::HttpRedirect, Some(Phase::FirstByte));
        let mut frames = vec![
            from.frame,
            a.request.frame,
            a.answer.frame,
            to.frame,
            r.follow_up.frame,
        ];
        frames.sort_unstable();
        frames.dedup();
        finding.frames = frames;
        finding.waits = vec![Wait {
            from_frame: from.frame,
            to_frame: to.frame,
            release_frame: Some(a.answer.frame),
            ms: wait_ms,
        }];
        finding.cost_ms = wait_ms;
        finding.confidence = if r.by_url { 0.9 } else { 0.7 };
        // The evidence frames, on both connections (and the follow-up's
        // name lookup's query).
        let lookup = f
            .lookup
            .is_some_and(|l| l.queries.iter().any(|q| q.sent.frame == to.frame));
        finding.display_filter = if here {
            f.filter_frames(&finding.frames)
        } else {
            let filter =
                super::upstream_wait::streams_filter(&[a.stream, f.report.stream], &finding.frames);
            match lookup {
                true => filter.replacen(") &&", " || dns) &&", 1),
                false => filter,
            }
        };
        finding.detail = Detail::HttpRedirect {
            exchange: i as u32 + 1,
            redirect_stream: a.stream,
            redirected_request: a.request_label.clone(),
            status: a.status,
            location: r.location.clone(),
            same_origin: r.same_origin,
            to_https: r.to_https,
            new_connection,
            by_url: r.by_url,
            answer_ms: a.answer.ts_ns.saturating_sub(a.request.ts_ns).max(0) as f64 / 1e6,
            server_ms: a.server_ns as f64 / 1e6,
            turnaround_ms: r.began.ts_ns.saturating_sub(a.answer.ts_ns).max(0) as f64 / 1e6,
            slow_follow_ms: slow_follow as f64 / 1e6,
            followed_before: r.followed_before,
            redirected_again: x
                .redirects_to
                .clone()
                .and_then(|to| Some((x.response_first?.frame, to))),
            per_visitor: r.per_visitor,
            uncacheable: r.uncacheable,
            back_to_referrer: r.back_to_referrer,
            third_party: r.third_party,
            referred: r.referred,
        };
        out.push(finding);
    }
}
