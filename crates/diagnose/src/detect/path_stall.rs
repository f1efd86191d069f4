//! `path_stall` — the client's path stalled: for a while nothing reached
//! the client from any server, then what the path had held came at once,
//! this connection's answer with it. A Wi-Fi client asleep (power saving:
//! its access point keeps its frames until it wakes) or scanning another
//! channel, a cellular radio waking from idle or handing over, a link
//! that dropped and came back: the servers sent on time, and the wait
//! was the path's.
//!
//! Signature (rttdoc-analyze's path_samples.rs, `PathStall`): a silence
//! of the client's downlink, no packet from any server, pure ACKs
//! included (and no client ACK of server bytes the capture missed, no
//! QUIC or DNS datagram), of at least 20 ms, then, within 10 ms of its
//! end, pure ACKs of two server addresses or more, of client data sent
//! 20 ms or more apart, each 20 ms or more later than its connection's
//! quickest pure ACK before (its first: than its fastest round trip and
//! the shortest delayed-ACK timer, 40 ms). A pure ACK carries no
//! application's time; two servers late together, acknowledging what
//! left at different times, have one cause in common: the path they
//! share. One server late is its own business, and two acknowledging one
//! moment together may both have waited on timers. An answer of this
//! connection's server (a response's first segment, a handshake flight)
//! captured in that release, later than a round trip after what it
//! answered (its last copy) on the client's clock, was held from the later of the
//! stall's beginning (the silence's, or as long before its end as the
//! less late witness was late: an idle spell before is no stall) and
//! one round trip after its question, to its arrival; no longer than
//! the server's own clock says the path held it, where its TSvals keep
//! one (sender_clock.rs), nor shorter where that clock says more
//! (reddit.pcap 0: 42 ms by its sender's TSvals where the less late
//! witness proved 22), and at least a quarter of the round trip and
//! 2 ms. Released by no packet: the path woke. Not at the server, which
//! sees its answers leave before the path holds them.
//! `server_think_time` takes that time off its own (the server may have
//! answered at once: the capture cannot tell, and the stall is proven).
//! Cost: the waits' sum.
//! Fix: the client's own link: Wi-Fi power saving and background scans,
//! a cellular radio's idle timers or handovers; a capture of a wired
//! client, or at the access point, tells the link from the network
//! beyond it. Where the capture did not run on the client (its side of
//! the round trip half a millisecond or more: a host answers its own
//! packets in microseconds), the client's link lies past the capture
//! point, and the stall it saw was between it and the servers (an
//! access point's uplink: nDPI's alexa-app.pcapng, taken on a Wi-Fi
//! Pineapple's LAN, the Echo's ACKs 0.8 ms or more after what they
//! acknowledge).

use super::causality::EXCESS_FLOOR_NS;
use super::Facts;
use crate::model::{Detail, Direction, Finding, FindingKind, Phase, Wait};
use rttdoc_analyze::PathStall;

pub fn detect(f: &Facts<'_>, out: &mut Vec<Finding>) {
    if f.path_stalls.is_empty() {
        return;
    }
    let Some(rtt) = f.rtt_ns else { return };
    let floor = (rtt / 4).max(EXCESS_FLOOR_NS);
    let client = Direction::ClientToServer;
    // Each answer's wait in the stall it came at the end of, with that
    // stall.
    let held = |question: u64, answer: u64| -> Option<(Wait, &PathStall)> {
        let (q, a) = (f.record(question)?, f.record(answer)?);
        let stall = f.path_stall_at(a.ts_ns)?;
        let beyond = f.on_clock_of(client, a) - f.on_clock_of(client, q) - rtt;
        // (Or as long as the server's own clock says the path held it,
        // where its TSvals keep one and say more: reddit.pcap 0, an
        // answer 42 ms late by its sender's clock in a stall its less
        // late witness proves 22 ms of.)
        let waited = f
            .held_within_clock(a, beyond.min(a.ts_ns - stall.from_ns))
            .max(f.held_after_sending_ns(a).min(beyond));
        (waited >= floor).then(|| {
            let wait = Wait {
                from_frame: question,
                to_frame: answer,
                release_frame: None,
                ms: waited as f64 / 1e6,
            };
            (wait, stall)
        })
    };
    // The server's handshake flights, whole questions only.
    let handshake = f
        .handshake_turns()
        .iter()
        .filter(|t| t.answerer == Direction::ServerToClient && t.complete)
        .filter_map(|t| held(t.question_frame, t.answer_frame));
    emit(f, Phase::TlsHandshake, handshake.collect(), out);
    // The answers to requests, from the request's last copy (a re-sent
    // request was answered one round trip after the copy that got
    // through at the soonest): not a server's own timer's messages, nor
    // an answer whose first bytes the capture missed.
    let answers = f
        .exchanges
        .iter()
        .enumerate()
        .filter(|(i, x)| !f.idle_exchanges.contains(i) && !x.response_in_hole)
        .filter_map(|(_, x)| {
            let answer = x.response_first?.frame;
            let question = x
                .request_resent
                .filter(|r| r.frame > x.request_last.frame && r.frame < answer)
                .unwrap_or(x.request_last);
            held(question.frame, answer)
        });
    emit(f, Phase::FirstByte, answers.collect(), out);
}

/// The client's side of the round trip from the capture point: its
/// handshake ACK after the SYN-ACK (0 where the handshake is not in the
/// capture: the client's own link is not ruled out).
fn client_side_ns(f: &Facts<'_>) -> i64 {
    let h = &f.report.handshake;
    let at = |frame: Option<u64>| frame.and_then(|n| f.record(n)).map(|r| r.ts_ns);
    match (at(h.syn_ack_frame), at(h.ack_frame)) {
        (Some(syn_ack), Some(ack)) => (ack - syn_ack).max(0),
        _ => 0,
    }
}

/// One finding for a phase's held answers, citing the longest stall.
fn emit(f: &Facts<'_>, phase: Phase, held: Vec<(Wait, &PathStall)>, out: &mut Vec<Finding>) {
    let Some(&(_, stall)) = held.iter().max_by_key(|(_, s)| s.to_ns - s.from_ns) else {
        return;
    };
    let waits: Vec<Wait> = held.iter().map(|(w, _)| *w).collect();
    let client_side_ms = client_side_ns(f) as f64 / 1e6;
    out.push(f.waited_answers(
        FindingKind::PathStall,
        phase,
        waits,
        |answers, longest_ms| {
            Detail::PathStall {
                answers,
                longest_ms,
                silent_from_frame: stall.from_frame,
                silent_to_frame: stall.to_frame,
                silent_ms: stall.silent_ns as f64 / 1e6,
                witnesses: stall
                    .witnesses
                    .map(|(frame, late)| (frame, late as f64 / 1e6)),
                client_side_ms,
            }
        },
    ));
}
