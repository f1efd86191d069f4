//! `initcwnd_limited` — the server's first flight was larger than its
//! initial congestion window (10 x MSS, about 14.5 KB: RFC 6928) and paused
//! for ACKs: typically a big certificate chain in the TLS handshake.
//!
//! Signature, on the server's clock, within its TLS handshake flight: a silence of at least max(2 ms, RTT/4) between two
//! new data segments, ended by the client's ACK (`Facts::released_by`),
//! with at least 8 MSS sent and unacknowledged before that ACK (the window
//! was full, not Nagle); in TLS 1.2, up to the ServerHelloDone (what
//! follows waits for the client's key exchange). Cost: the silence. Says how many bytes the flight exceeded
//! the initial window by.
//! Fix: a smaller chain (ECDSA certificates, no root in the chain, fewer
//! intermediates), certificate compression, or a larger initial window on
//! the server's routes (`ip route change ... initcwnd 20`).

use super::Facts;
use crate::model::{Detail, Direction, Finding, FindingKind, Phase, TlsMessage};
use rttdoc_analyze::seq;

pub fn detect(f: &Facts<'_>, out: &mut Vec<Finding>) {
    let Some(rtt) = f.rtt_ns.filter(|r| *r > 0) else {
        return;
    };
    let sender = Direction::ServerToClient;
    let mss = f.mss(sender) as u64;
    // The server's TLS flight only: a plain download is supposed to start in
    // slow start (the ledger's ideal for a transfer already counts those
    // rounds); a handshake flight that has to is a cost worth naming.
    let Some(tls_end) = f.tls_end_frame else {
        return;
    };
    // The server's first flight only: a full TLS 1.2 handshake goes on
    // after the ServerHelloDone with the client's key exchange, and the
    // pause for it is the protocol's round trip, not the window's.
    let end_frame = f
        .report
        .tls
        .as_ref()
        .and_then(|t| {
            t.messages
                .iter()
                .find(|m| m.direction == sender && m.message == TlsMessage::ServerHelloDone)
                .map(|m| m.frame)
        })
        .unwrap_or(tls_end);
    let events = f.sender_view(
        sender,
        end_frame,
        |r| r.len > 0 && r.new_data,
        f.peer_skew(),
    );
    let mut sent_end: Option<u32> = None;
    let mut acked: Option<u32> = None;
    let mut flight_bytes = 0u64;
    // The last data segment: when, and how many bytes were in flight right
    // after it (the window the sender had filled when it stopped).
    let mut prev: Option<(i64, u64)> = None;
    let mut release: Option<(i64, u64)> = None;
    let mut pauses = Vec::new();
    for (t, r) in events {
        if r.dir != sender {
            if acked.is_none_or(|a| seq::lt(a, r.ack)) {
                acked = Some(r.ack);
                release = Some((t, r.frame));
            }
            continue;
        }
        if let (Some((tp, in_flight)), Some((ta, ack_frame))) = (prev, release) {
            let silence = t - tp;
            // A quarter RTT: on a short path a slow host spreads the
            // window's segments over half the round trip, and the first
            // ACKs come back while the last ones are still leaving.
            if silence >= (rtt / 4).max(2_000_000)
                && f.released_by(sender, t, ta)
                && in_flight >= 8 * mss
                && flight_bytes >= 8 * mss
            {
                pauses.push((r.frame, ack_frame, silence));
            }
        }
        flight_bytes += r.len as u64;
        let end = sent_end.map_or(r.end, |e| seq::max(e, r.end));
        sent_end = Some(end);
        let in_flight = seq::diff(end, acked.unwrap_or(1)).max(0) as u64;
        prev = Some((t, in_flight));
    }
    if pauses.is_empty() {
        return;
    }
    let total: i64 = pauses.iter().map(|p| p.2).sum();
    let phase = if f.tls_end_frame.is_some() {
        Phase::TlsHandshake
    } else {
        Phase::Transfer
    };
    let mut x = f.finding(FindingKind::InitcwndLimited, Some(phase));
    for (held, ack, _) in pauses.iter().take(8) {
        x.frames.push(*held);
        x.frames.push(*ack);
    }
    x.cost_ms = total as f64 / 1e6;
    x.detail = Detail::Initcwnd {
        flight_bytes: flight_bytes as u32,
        mss: mss as u32,
        first_pause_ms: pauses[0].2 as f64 / 1e6,
        first_ack_frame: pauses[0].1,
        in_tls_handshake: f.tls_end_frame.is_some(),
    };
    x.display_filter = f.filter_frames(&x.frames);
    out.push(x);
}
