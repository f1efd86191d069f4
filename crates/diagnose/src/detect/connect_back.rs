//! `connect_back` — while the client waited for an answer (or a
//! greeting), the server opened a connection back to the client's host,
//! and answered only once that connection was up or its attempt given
//! up: FTP's active mode (after the client's `PORT`, the server connects
//! to it for the data, then answers `RETR` with `150`), an ident lookup
//! (RFC 1413: before it greets, the server asks the client's port 113
//! who the user is; a host that drops port 113 leaves it waiting for its
//! time-out). The capture shows both connections (connect_back.rs in
//! rttdoc-analyze pairs them).
//!
//! Signature, on the server's clock (its own packets as captured, the
//! client's shifted by the server's side of the RTT): the part of the
//! wait from the request's arrival (the handshake's ACK for a greeting)
//! to the answer that lies between the other connection's first SYN and
//! its SYN-ACK's arrival at the server, or, with no SYN-ACK, the answer
//! (the server waited until it gave up), at least the think-time
//! threshold (`server_think_time` counts the rest of the wait, not this).
//! Cost: those spans, summed. Fix: ident lookups off, or a client host
//! that refuses port 113 at once (a RST, not a silent drop); for FTP, a
//! handshake per data connection in either mode (active: the server's,
//! in the wait; passive: the client's, before it asks): fewer, larger
//! transfers, or a protocol that keeps one connection.

use super::Facts;
use crate::model::{Detail, Direction, Finding, FindingKind, Phase, Wait};
use rttdoc_analyze::ConnectBack;

/// How much of the server's wait from `from_ns` to `to_ns` (its clock) the
/// connection it opened back to the client took: from that connection's
/// SYN to its SYN-ACK's arrival at the server, or, never accepted, to
/// `to_ns` (the server waited until it gave up).
pub fn connect_back_ns(f: &Facts<'_>, back: &ConnectBack, from_ns: i64, to_ns: i64) -> i64 {
    // The SYN is the server's packet, the SYN-ACK the client host's.
    let began = back.syn.ts_ns;
    let ended = back
        .accepted
        .map_or(to_ns, |a| a.ts_ns + f.server_side_ns)
        .min(to_ns);
    (ended - began.max(from_ns)).max(0)
}

/// The server's clock at the client packet in `frame`, or at `ts_ns` when
/// the timeline no longer holds it.
fn arrival(f: &Facts<'_>, frame: u64, ts_ns: i64) -> i64 {
    f.record(frame).map_or(ts_ns + f.server_side_ns, |r| {
        f.on_clock_of(Direction::ServerToClient, r)
    })
}

pub fn detect(f: &Facts<'_>, out: &mut Vec<Finding>) {
    let Some(rtt) = f.rtt_ns else { return };
    if f.greeting_connect_back.is_none() && f.exchanges.iter().all(|x| x.connect_back.is_none()) {
        return;
    }
    let threshold = super::server_think_time::threshold_of(rtt);
    // (the wait, its connection, the exchange's number: 0 the greeting)
    let mut waits: Vec<(Wait, &ConnectBack, usize)> = Vec::new();
    if let (Some((opened, greeted)), Some(back)) = (f.greeting, f.greeting_connect_back) {
        if !f.idle_exchanges.contains(&0) {
            let from = arrival(f, opened.frame, opened.ts_ns);
            let span = connect_back_ns(f, back, from, greeted.ts_ns);
            if span >= threshold {
                waits.push((wait(opened.frame, greeted.frame, span), back, 0));
            }
        }
    }
    for (i, x) in f.exchanges.iter().enumerate() {
        let (Some(answer), Some(back)) = (x.response_first, x.connect_back.as_deref()) else {
            continue;
        };
        if f.idle_exchanges.contains(&(i + 1)) {
            continue;
        }
        let from = arrival(f, x.request_last.frame, x.request_last.ts_ns);
        let span = connect_back_ns(f, back, from, answer.ts_ns);
        if span >= threshold {
            waits.push((wait(x.request_last.frame, answer.frame, span), back, i + 1));
        }
    }
    let Some(&(ref longest, back, n)) = waits.iter().max_by(|a, b| a.0.ms.total_cmp(&b.0.ms))
    else {
        return;
    };
    let mut x = f.finding(FindingKind::ConnectBack, Some(Phase::FirstByte));
    let mut streams = vec![f.report.stream];
    for (w, b, _) in &waits {
        if x.frames.len() < 32 {
            x.frames.push(w.from_frame);
            x.frames.push(b.syn.frame);
            x.frames.extend(b.accepted.map(|a| a.frame));
            x.frames.push(w.to_frame);
            if !streams.contains(&b.stream) {
                streams.push(b.stream);
            }
        }
    }
    x.display_filter = super::upstream_wait::streams_filter(&streams, &x.frames);
    x.cost_ms = waits.iter().map(|(w, ..)| w.ms).sum();
    x.detail = Detail::ConnectBack {
        waits: waits.len() as u32,
        longest_ms: longest.ms,
        stream: back.stream,
        port: back.to.port,
        accepted: back.accepted.is_some(),
        greeting: n == 0,
        request: super::server_think_time::label_of(f.exchanges, n),
    };
    x.waits = waits.into_iter().map(|(w, ..)| w).collect();
    out.push(x);
}

/// The wait from the request (or the packet that let the server greet)
/// to the answer. (What ended it, the other connection's SYN-ACK, is
/// another connection's packet: cited among the frames, not as this
/// connection's release.)
fn wait(from: u64, to: u64, span: i64) -> Wait {
    Wait {
        from_frame: from,
        to_frame: to,
        release_frame: None,
        ms: span as f64 / 1e6,
    }
}
