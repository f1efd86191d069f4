//! `initcwnd_limited` — a TLS handshake flight (the server's first, or
//! the client's after it) was larger than its sender's window: the
//! server's first flight larger than its initial congestion window (10 x
//! MSS, about 14.5 KB: RFC 6928; an old stack's or an appliance's 1-4
//! segments: RFC 3390, RFC 2001) and paused for ACKs: typically a big
//! certificate chain in the TLS handshake.
//!
//! Signature, on the server's clock, within its TLS handshake flight: a
//! silence of at least max(2 ms, RTT/4) between two new data segments,
//! ended by the client's ACK (`Facts::released_by`), that only a window
//! explains: at least 8 MSS sent and unacknowledged before that ACK (the
//! window was full, not Nagle), or fewer, the silence inside one
//! handshake message and the segment after it a full one (a TLS library
//! writes a message whole, so the sender had it; Nagle never holds a full
//! segment; nothing re-sent meanwhile: nDPI's anyconnect-vpn.pcap 3, a
//! VPN gateway sending its certificate one segment, then two, a round
//! trip each), and once such a silence showed the window small, the
//! flight's later silences inside a message too; in TLS 1.2, up to the
//! ServerHelloDone (what follows waits for the client's key exchange).
//! The pause lasts until the ACK of the window's first segments returns:
//! at most a round trip plus the client's delayed-ACK timer (a longer
//! silence is the server having nothing to send, not the window). Each
//! pause is a wait from the last segment of the full window to the next,
//! released by that ACK. Cost: the silences (the waits' sum). Says how
//! many bytes the flight exceeded the initial window by, or, for a window
//! under 8 segments, how many segments it held.
//! The client's flight after the server's (its certificate, when the
//! server asked for one, its key exchange, its Finished) is read the same
//! way. And on either side, captured on the sender's own host, a segment
//! that left the moment an ACK came that still left some of the sender's
//! data unacknowledged is a window's release whatever it carries: Nagle
//! waits for all of it, and the application does not wait for ACKs.
//! Fix: a smaller chain (ECDSA certificates, no root in the chain, fewer
//! intermediates), certificate compression, or a larger initial window on
//! the server's routes (`ip route change ... initcwnd 20`); a window
//! under 10 segments, the server's (or the box in front of it) TCP stack.

use super::Facts;
use crate::model::{Detail, Direction, Finding, FindingKind, Phase, TlsMessage, Wait};
use rttdoc_analyze::seq;
use rttdoc_analyze::SegmentRecord;

pub fn detect(f: &Facts<'_>, out: &mut Vec<Finding>) {
    let Some(rtt) = f.rtt_ns.filter(|r| *r > 0) else {
        return;
    };
    // The TLS flights only: a plain download is supposed to start in
    // slow start (the ledger's ideal for a transfer already counts those
    // rounds); a handshake flight that has to is a cost worth naming.
    let Some(tls_end) = f.tls_end_frame else {
        return;
    };
    let server = Direction::ServerToClient;
    let first_of = |dir: Direction, kinds: &[TlsMessage]| {
        f.report.tls.as_ref().and_then(|t| {
            t.messages
                .iter()
                .find(|m| m.direction == dir && kinds.contains(&m.message))
                .map(|m| m.frame)
        })
    };
    // The server's first flight only: a full TLS 1.2 handshake goes on
    // after the ServerHelloDone with the client's key exchange, and the
    // pause for it is the protocol's round trip, not the window's.
    let server_end = first_of(server, &[TlsMessage::ServerHelloDone]).unwrap_or(tls_end);
    flight(f, rtt, server, (0, server_end), out);
    // The client's flight after it (its certificate, when the server asked
    // for one, its key exchange, its Finished).
    let client = Direction::ClientToServer;
    let finished = [TlsMessage::Finished, TlsMessage::FinishedEncrypted];
    if let Some(client_end) = first_of(client, &finished).filter(|&e| e > server_end) {
        flight(f, rtt, client, (server_end, client_end), out);
    }
}

/// `sender`'s handshake flight: its data segments after frame `from`, up
/// to `end_frame`.
fn flight(
    f: &Facts<'_>,
    rtt: i64,
    sender: Direction,
    (from, end_frame): (u64, u64),
    out: &mut Vec<Finding>,
) {
    let mss = f.mss(sender) as u64;
    let events = f.sender_view(
        sender,
        end_frame,
        |r| r.len > 0 && r.new_data && r.frame > from,
        f.peer_skew(),
    );
    // The sender's handshake messages that span segments: first and last
    // frame.
    let messages: Vec<(u64, u64)> = f.report.tls.as_ref().map_or(Vec::new(), |t| {
        t.messages
            .iter()
            .filter(|m| m.direction == sender && m.first_frame < m.frame)
            .map(|m| (m.first_frame, m.frame))
            .collect()
    });
    let inside_message = |p: &SegmentRecord, r: &SegmentRecord| {
        messages.iter().any(|&(a, b)| a <= p.frame && r.frame <= b)
    };
    // Something the server sent again between two segments: the pause
    // was a loss's.
    let resent_between = |p: &SegmentRecord, r: &SegmentRecord| {
        f.between(p.frame + 1, r.frame)
            .iter()
            .any(|x| x.dir == sender && x.len > 0 && !x.new_data)
    };
    // A silence already showed a window under 8 segments.
    let mut small_window = false;
    let mut sent_end: Option<u32> = None;
    let mut acked: Option<u32> = None;
    let mut flight_bytes = 0u64;
    // The last data segment: when, which, and how many bytes were in
    // flight right after it (the window the sender had filled when it
    // stopped).
    let mut prev: Option<(i64, &SegmentRecord, u64)> = None;
    let mut release: Option<(i64, &SegmentRecord)> = None;
    // An ACK-clocked pause ends when the ACK comes back: a round trip plus
    // at most the receiver's delayed-ACK timer.
    let longest = rtt + super::causality::MAX_ACK_DELAY_NS + f.jitter_ns;
    let mut pauses = Vec::new();
    // What was in flight when the first pause began: the window.
    let mut window_bytes = 0u64;
    for (t, r) in events {
        if r.dir != sender {
            if acked.is_none_or(|a| seq::lt(a, r.ack)) {
                acked = Some(r.ack);
                release = Some((t, r));
            }
            continue;
        }
        if let (Some((tp, p, in_flight)), Some((ta, a))) = (prev, release) {
            let silence = t - tp;
            // A quarter RTT: on a short path a slow host spreads the
            // window's segments over half the round trip, and the first
            // ACKs come back while the last ones are still leaving.
            let full = in_flight >= 8 * mss && flight_bytes >= 8 * mss;
            // At the sender itself, a segment that left the moment an ACK
            // came that still left some of its data unacknowledged: Nagle
            // waits for all of it, the application does not wait for
            // ACKs, only a window opened by that ACK lets a segment go
            // (nDPI's anyconnect-vpn.pcap 6: a client's certificate in
            // three segments, its key exchange 38 ms later, 54 us after
            // the ACK of the first two).
            let opened_by_ack = f.captured_at(sender)
                && sent_end.is_some_and(|e| seq::lt(a.ack, e))
                && !resent_between(p, r);
            let window = || {
                full || opened_by_ack
                    || (inside_message(p, r)
                        && (small_window || r.len as u64 >= mss)
                        && !resent_between(p, r))
            };
            if silence >= (rtt / 4).max(2_000_000)
                && silence <= longest
                && f.released_by(sender, t, ta)
                && f.can_release(a, r)
                && window()
            {
                if pauses.is_empty() {
                    window_bytes = in_flight;
                }
                small_window |= !full;
                pauses.push(Wait {
                    from_frame: p.frame,
                    to_frame: r.frame,
                    release_frame: Some(a.frame),
                    ms: silence as f64 / 1e6,
                });
            }
        }
        flight_bytes += r.len as u64;
        let end = sent_end.map_or(r.end, |e| seq::max(e, r.end));
        sent_end = Some(end);
        let in_flight = seq::diff(end, acked.unwrap_or(1)).max(0) as u64;
        prev = Some((t, r, in_flight));
    }
    if pauses.is_empty() {
        return;
    }
    let phase = if f.tls_end_frame.is_some() {
        Phase::TlsHandshake
    } else {
        Phase::Transfer
    };
    let mut x = f.finding(FindingKind::InitcwndLimited, Some(phase));
    for w in pauses.iter().take(8) {
        x.frames.push(w.to_frame);
        x.frames.extend(w.release_frame);
    }
    x.cost_ms = pauses.iter().map(|w| w.ms).sum();
    x.detail = Detail::Initcwnd {
        flight_bytes: flight_bytes as u32,
        mss: mss as u32,
        first_pause_ms: pauses[0].ms,
        first_ack_frame: pauses[0].release_frame.unwrap_or(0),
        window_bytes: window_bytes as u32,
        in_tls_handshake: f.tls_end_frame.is_some(),
        sender,
    };
    x.display_filter = f.filter_frames(&x.frames);
    x.waits = pauses;
    out.push(x);
}
