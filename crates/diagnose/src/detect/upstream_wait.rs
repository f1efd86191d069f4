//! `upstream_wait` — the server is a proxy, and its client waited for the
//! proxy's upstream: the proxy forwarded the request (on a connection it
//! opened for it, or one it kept) and could answer only once the
//! upstream had answered it.
//!
//! Signature, in a capture taken on the proxy's host (both its sides
//! captured: `tcpdump -i any`): while an exchange waited for its answer,
//! the host made a call that can only have been this request's (another
//! connection, to another server, from the host; began after the request
//! began arriving, answered before the answer left; the same HTTP/1.x
//! method and resource, or the only call and the only request meanwhile:
//! upstream.rs in rttdoc-analyze; paired by timing alone, a call that
//! leaves less than that threshold of the wait uncovered). The call's span, from its SYN (a
//! connection opened during the wait) or its request to its answer's
//! first segment, within the wait from the request's last segment to the
//! answer's first, of at least half a round trip clamped to 5..20 ms (as
//! `server_think_time`), is a wait from the request to the answer, with no
//! releasing packet on this connection (the upstream's answer, on its
//! own, released it). Not an exchange the ledger counts idle (a server's
//! timer: a long poll held upstream; a reply to the server's own message). Cost: the waits' sum;
//! `server_think_time` takes the same time off its own, leaving the
//! proxy's.
//! Fix: the upstream's own findings (its connection is in the capture:
//! `server_think_time` there is the application's time); a proxy that
//! connects per request pays a handshake each time: upstream keep-alive.

use super::Facts;
use crate::model::{Detail, Finding, FindingKind, Phase, Wait};
use rttdoc_analyze::Exchange;

/// How much of the time from `from_ns` to `to_ns` (capture clock) exchange
/// `x`'s server spent on the call it made to its upstream: from the
/// call's SYN (a connection opened for the request) or request to its
/// answer. A call paired by timing alone (a request unreadable) counts
/// only when it fills the wait but for less than `threshold`: a proxy
/// forwards at once and answers as soon as its upstream has, while a call
/// of the host's own (a metrics push, a log shipment) inside a long wait
/// leaves most of it uncovered.
pub fn upstream_ns(x: &Exchange, from_ns: i64, to_ns: i64, threshold: i64) -> i64 {
    let Some(call) = &x.upstream else { return 0 };
    let began = call.connect.unwrap_or(call.request).ts_ns;
    let span = (call.answer.ts_ns.min(to_ns) - began.max(from_ns)).max(0);
    if !call.by_request_line && to_ns - from_ns - span >= threshold {
        return 0;
    }
    span
}

pub fn detect(f: &Facts<'_>, out: &mut Vec<Finding>) {
    let Some(rtt) = f.rtt_ns else { return };
    if f.exchanges.iter().all(|x| x.upstream.is_none()) {
        return;
    }
    let threshold = super::server_think_time::threshold_of(rtt);
    // (exchange index, its wait)
    let mut waits: Vec<(usize, Wait)> = Vec::new();
    for (i, x) in f.exchanges.iter().enumerate() {
        let (Some(answer), Some(_)) = (x.response_first, &x.upstream) else {
            continue;
        };
        // A timer's, a reply to the server's own message (a pong): idle,
        // through a proxy or not (the ledger's idle rows).
        if f.idle_exchanges.contains(&(i + 1)) {
            continue;
        }
        let span = upstream_ns(x, x.request_last.ts_ns, answer.ts_ns, threshold);
        if span >= threshold {
            waits.push((
                i,
                Wait {
                    from_frame: x.request_last.frame,
                    to_frame: answer.frame,
                    release_frame: None,
                    ms: span as f64 / 1e6,
                },
            ));
        }
    }
    let Some((longest, _)) = waits.iter().max_by(|a, b| a.1.ms.total_cmp(&b.1.ms)) else {
        return;
    };
    let call_of = |i: usize| f.exchanges[i].upstream.as_deref().expect("paired");
    let longest = call_of(*longest);
    let mut x = f.finding(FindingKind::UpstreamWait, Some(Phase::FirstByte));
    let mut streams = vec![f.report.stream];
    let (mut new_connections, mut connect_ns) = (0u32, 0i64);
    for (i, w) in &waits {
        let call = call_of(*i);
        if let Some(syn) = call.connect {
            new_connections += 1;
            connect_ns += call.request.ts_ns - syn.ts_ns;
        }
        if x.frames.len() < 32 {
            x.frames.push(w.from_frame);
            x.frames.push(call.connect.unwrap_or(call.request).frame);
            x.frames.push(call.answer.frame);
            x.frames.push(w.to_frame);
            if !streams.contains(&call.stream) {
                streams.push(call.stream);
            }
        }
    }
    x.display_filter = streams_filter(&streams, &x.frames);
    x.cost_ms = waits.iter().map(|(_, w)| w.ms).sum();
    // Paired by request line, or as the only call in a quiet wait.
    let forwarded = waits.iter().all(|(i, _)| call_of(*i).by_request_line);
    x.confidence = if forwarded { 0.9 } else { 0.7 };
    x.detail = Detail::UpstreamWait {
        answers: waits.len() as u32,
        upstream: longest.server,
        upstream_stream: longest.stream,
        longest_ms: waits.iter().map(|(_, w)| w.ms).fold(0.0, f64::max),
        forwarded,
        new_connections,
        connect_ms: connect_ns as f64 / 1e6,
    };
    x.waits = waits.into_iter().map(|(_, w)| w).collect();
    out.push(x);
}

/// Frames of several streams: the proxy's connection and its calls.
pub(super) fn streams_filter(streams: &[u64], frames: &[u64]) -> String {
    streams_and_filter(streams, &[], frames)
}

/// Frames of several streams and of packets of the protocols `also`
/// names (a fetch's name lookup: `dns`).
pub(super) fn streams_and_filter(streams: &[u64], also: &[&str], frames: &[u64]) -> String {
    let streams: Vec<String> = streams
        .iter()
        .map(|s| format!("tcp.stream eq {s}"))
        .chain(also.iter().map(|p| p.to_string()))
        .collect();
    let frames: Vec<String> = frames.iter().map(|f| f.to_string()).collect();
    format!(
        "({}) && frame.number in {{{}}}",
        streams.join(" || "),
        frames.join(", ")
    )
}
