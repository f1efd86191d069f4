//! `h2_window_limited` — HTTP/2's flow control, not TCP or the network,
//! paced a sender: it spent the credit its receiver granted, fell silent,
//! and went on only when the receiver's WINDOW_UPDATE gave credit back.
//! The credit (the receiver's `SETTINGS_INITIAL_WINDOW_SIZE` a stream,
//! and the connection's window) was smaller than the path's
//! bandwidth-delay product, so at most one window crossed the path a
//! round trip, whatever TCP could carry: an upload to HAProxy (65,535
//! bytes a stream unless `tune.h2.initial-window-size` says more) or to a
//! Node.js server, a download by a gRPC client with a fixed window.
//!
//! Signature: stalls on HTTP/2 credit (rttdoc-analyze's h2_credit.rs: a
//! DATA frame P, not ending its stream, leaves its sender under 1 KB of
//! credit on the stream or the connection; the receiver's WINDOW_UPDATE
//! or SETTINGS A gives back enough for the sender's next DATA frame K on
//! it, no DATA on another stream between), each a wait from P to K
//! released by A, judged on the sender's
//! clock: the silence lasts at least max(2 ms, RTT/4) (shorter, it is the
//! sender's own pace between frames) and at most the update's round
//! trip: a round trip, the receiver's turn to give credit back (half a
//! round trip, at least 10 ms) and the path's jitter (longer, the
//! receiver's application held the credit back: a reader slower than the
//! path, backpressure and not a window too small for it); K leaves right
//! after A arrives (`Facts::released_by`; captured at the sender, within
//! its application's turn, [`SENDER_TURN_NS`]); and the sender re-sent
//! nothing from a round trip before P until K (a receiver takes bytes
//! beyond a hole only once it is repaired, and gives their credit back
//! then: that wait is the loss's, `retransmission`'s). Reported when it
//! happens at least 3 times and the stalls add up to a round trip or more.
//! Cost: the stalls (P to K), summed. A client's stall before its
//! request's answer began (an upload the answer waits for) is the first
//! byte's latency; the others are the transfer's stalls.
//! Fix: receive windows of at least bandwidth x RTT on the receiver: its
//! initial window (SETTINGS_INITIAL_WINDOW_SIZE) and the connection's
//! (raised only by a WINDOW_UPDATE on stream 0).

use super::Facts;
use crate::model::{Detail, Direction, Finding, FindingKind, Phase, Wait};
use rttdoc_analyze::{H2CreditStall, SegmentRecord};

/// Stalls that make a sustained limitation, not a window growing behind
/// a congestion window.
const MIN_STALLS: usize = 3;
/// The receiver's turn between a DATA frame's arrival and the
/// WINDOW_UPDATE giving its credit back, at least: its application reads
/// the frame first (HAProxy as it forwards it, nghttp2 once half a
/// window is read).
const RECEIVER_TURN_NS: i64 = 10_000_000;
/// Captured at the sender, how soon after the update arrived its next
/// DATA frame leaves: its application's turn (the update read, the next
/// frame written), not only the kernel's.
const SENDER_TURN_NS: i64 = 5_000_000;

pub fn detect(f: &Facts<'_>, out: &mut Vec<Finding>) {
    if f.h2_credit_stalls.is_empty() {
        return;
    }
    let Some(rtt) = f.rtt_ns.filter(|r| *r > 0) else {
        return;
    };
    for sender in [Direction::ClientToServer, Direction::ServerToClient] {
        if !f.h2_credit_stalls.iter().any(|s| s.sender == sender) {
            continue;
        }
        // The sender's re-sends that repaired a loss, gathered once.
        let resent: Vec<&SegmentRecord> = if f.sent_by(sender).retransmissions > 0 {
            f.timeline
                .iter()
                .filter(|r| r.dir == sender && r.retransmission && r.len > 0)
                .filter(|r| !super::retransmission::spurious(f, r))
                .collect()
        } else {
            Vec::new()
        };
        let stalls: Vec<(Wait, &H2CreditStall)> = f
            .h2_credit_stalls
            .iter()
            .filter(|s| s.sender == sender)
            .filter_map(|s| Some((stall_wait(f, s, rtt, &resent)?, s)))
            .collect();
        let total: f64 = stalls.iter().map(|(w, _)| w.ms).sum();
        if stalls.len() < MIN_STALLS || total * 1e6 < rtt as f64 {
            continue;
        }
        // A client's stalls before its request's answer are latency.
        let (before_answer, transfer): (Vec<_>, Vec<_>) = stalls
            .into_iter()
            .partition(|(w, _)| sender == Direction::ClientToServer && before_an_answer(f, w));
        for (phase, stalls) in [
            (Phase::FirstByte, before_answer),
            (Phase::Transfer, transfer),
        ] {
            if let Some(x) = finding(f, sender, phase, &stalls) {
                out.push(x);
            }
        }
    }
}

/// The wait of one stall, when the mechanism allows it (see the module's
/// doc); `resent`: the sender's re-sends that repaired a loss.
fn stall_wait(
    f: &Facts<'_>,
    s: &H2CreditStall,
    rtt: i64,
    resent: &[&SegmentRecord],
) -> Option<Wait> {
    let (p, a, k) = (
        f.record(s.full.frame)?,
        f.record(s.update.frame)?,
        f.record(s.resumed.frame)?,
    );
    let sender = s.sender;
    let (tp, ta, tk) = (
        f.on_clock_of(sender, p),
        f.on_clock_of(sender, a),
        f.on_clock_of(sender, k),
    );
    let silence = tk - tp;
    let longest = rtt + (rtt / 2).max(RECEIVER_TURN_NS) + f.jitter_ns;
    if silence < (rtt / 4).max(2_000_000) || silence > longest {
        return None;
    }
    let released = if f.captured_at(sender) {
        ta <= tk && tk - ta <= SENDER_TURN_NS
    } else {
        f.released_by(sender, tk, ta)
    };
    if !released || ta + f.shift_error_ns(sender) < tp {
        return None;
    }
    // Held by a loss: the sender re-sent bytes from a round trip before P
    // until K.
    if resent
        .iter()
        .any(|r| r.ts_ns >= p.ts_ns - rtt && r.frame < k.frame)
    {
        return None;
    }
    Some(Wait {
        from_frame: p.frame,
        to_frame: k.frame,
        release_frame: Some(a.frame),
        ms: silence as f64 / 1e6,
    })
}

/// Whether a client's wait lies in an exchange's request, before its
/// answer began.
fn before_an_answer(f: &Facts<'_>, w: &Wait) -> bool {
    f.exchanges.iter().any(|x| {
        x.request_first.frame <= w.from_frame
            && x.response_first.is_none_or(|r| w.to_frame < r.frame)
    })
}

fn finding(
    f: &Facts<'_>,
    sender: Direction,
    phase: Phase,
    stalls: &[(Wait, &H2CreditStall)],
) -> Option<Finding> {
    let (first_wait, first) = stalls.first()?;
    let mut x = f.finding(FindingKind::H2WindowLimited, Some(phase));
    for (w, _) in stalls.iter().take(8) {
        x.frames.push(w.from_frame);
        x.frames.extend(w.release_frame);
        x.frames.push(w.to_frame);
    }
    x.cost_ms = stalls.iter().map(|(w, _)| w.ms).sum();
    x.confidence = 0.85;
    x.detail = Detail::H2WindowLimited {
        sender,
        stream: first.stream,
        first_full_frame: first_wait.from_frame,
        first_update_frame: first_wait.release_frame.unwrap_or(0),
        first_resumed_frame: first_wait.to_frame,
        stalls: stalls.len() as u32,
        stream_window: first.stream_window,
        connection_stalls: stalls.iter().filter(|(_, s)| s.connection).count() as u32,
    };
    x.waits = stalls.iter().map(|(w, _)| *w).collect();
    x.display_filter = f.filter_frames(&x.frames);
    Some(x)
}
