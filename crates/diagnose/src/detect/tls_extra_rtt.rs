//! `tls_extra_rtt` — the TLS handshake took more round trips than the
//! ideal for what was negotiated (TLS 1.3: 1, TLS 1.2: 2, resumed: 1, +1
//! with a HelloRetryRequest).
//!
//! Signature: the ledger's `tls_handshake` row is at least 0.5 RTT over its
//! ideal. The finding names the causes other detectors found in the
//! handshake (`nagle_hold`, `nagle_delayed_ack`, `initcwnd_limited`,
//! `server_think_time`, `client_think_time`, `rto_stall`), the hosts'
//! own turnarounds too short to be a cause (each side's time between the
//! other's flight arriving and its own next flight leaving:
//! [`Facts::handshake_turns`]), how much the path's round trip had grown
//! beyond the TCP handshake's when the ClientHello was sent (the server's
//! ACK of it on arrival shows when it got there; not at the server), how
//! long the path held the server's first flight on the way back (by the
//! server's own clock: sender_clock.rs), and what remains unexplained.
//! A handshake whose excess is all such turnarounds, with no cause and
//! less than half a round trip (and the ledger's 2 ms floor) left, took
//! no extra round trip: host time below any threshold is not one, and no
//! finding is made.
//! Nor is a handshake nobody used a wait: a connection whose client sent
//! nothing after its Finished but alerts, and closed (its FIN or RST)
//! within a client's turnaround (`READY_NS`: `Facts::handshake_discarded`) of that Finished, before
//! the server closed, delayed nothing: a browser racing several connections to one site keeps the
//! first to finish its handshake and closes the others as theirs end
//! (nDPI's reddit.pcap 15 and 57: FINs 0.11 and 2.7 ms after their
//! Finished, one before the server's Finished came); nor one whose client
//! wrote, later than a turnaround after the handshake had ended for it,
//! only what it closed behind within one (PcapPlusPlus's
//! many-protocols.pcap 51: a SPDY session's opening frames 32 ms on, the
//! FIN 0.4 ms behind them). A client that gave
//! up on a handshake that stalled (a black hole) closed long after its
//! last record: it waited.
//! Nor, where the capture lacks the server's first flight (no turn can
//! be timed) and no cause was found, a handshake less than a round trip
//! over its ideal: the hosts' own work could be all of it.
//! Cost: the row's excess.

use super::Facts;
use crate::model::{Detail, Direction, Finding, FindingKind, Phase, TlsMessage};
use rttdoc_analyze::seq;

/// A summary: reads the first pass's findings (`causes_found`), never
/// adds to them (see [`super::run`]).
pub fn summarize(f: &Facts<'_>, causes_found: &[Finding]) -> Option<Finding> {
    let row = f
        .report
        .ledger
        .iter()
        .find(|r| r.phase == Phase::TlsHandshake)?;
    let (Some(excess), Some(excess_ms)) = (row.excess_rtts, row.excess_ms) else {
        return None;
    };
    if excess < 0.5 {
        return None;
    }
    if f.handshake_discarded() {
        return None;
    }
    let causes: Vec<&Finding> = causes_found
        .iter()
        .filter(|x| {
            // (A retry's round trip, and a full handshake's where the
            // client offered a session, are in the ideal already: no
            // share of the excess.)
            x.phase == Some(Phase::TlsHandshake)
                && x.cost_ms > 0.0
                && !matches!(
                    x.kind,
                    FindingKind::HelloRetryRequest | FindingKind::ResumptionMissed
                )
        })
        .collect();
    let explained: f64 = causes.iter().map(|c| c.cost_ms).sum();
    // The turns no cause claimed: each host's own work, below a cause's
    // threshold.
    let host_ms = super::host_turnarounds::measure(f, causes_found).in_phase(Phase::TlsHandshake)
        as f64
        / 1e6;
    // What is left beyond the hosts' time must be worth a round trip's
    // half, and more than the ledger's floor (on loopback, microseconds).
    let floor_ms = (f.rtt_ns.unwrap_or(0) / 2).max(super::causality::EXCESS_FLOOR_NS) as f64 / 1e6;
    if causes.is_empty() && excess_ms - host_ms < floor_ms {
        return None;
    }
    // Without the server's first flight no host's turn can be timed, and
    // the hosts' own work (the server's signing, the client's checking
    // of the chain) takes milliseconds on any path: less than a round
    // trip beyond the ideal is as much theirs as the network's, and no
    // round trip more is shown (PcapPlusPlus's tls2.pcap 88, a capture of
    // data packets only: 7 ms beyond its ideal on an 11 ms path, judged).
    if causes.is_empty() && excess < 1.0 && server_flight_missed(f) {
        return None;
    }
    let mut x = f.finding(FindingKind::TlsExtraRtt, Some(Phase::TlsHandshake));
    x.frames = vec![row.start_frame, row.end_frame];
    x.cost_ms = excess_ms;
    x.confidence = if causes.is_empty() { 0.6 } else { 0.9 };
    let host_ms = host_ms.min((excess_ms - explained).max(0.0));
    let (path_ms, path_ack) = path_growth(f);
    let path_ms = path_ms.min((excess_ms - explained - host_ms).max(0.0));
    let path_back_ms = path_back(f).min((excess_ms - explained - host_ms - path_ms).max(0.0));
    let (to_client_ms, to_client_ack) = path_to_client(f);
    let path_to_client_ms =
        to_client_ms.min((excess_ms - explained - host_ms - path_ms - path_back_ms).max(0.0));
    let unexplained =
        (excess_ms - explained - host_ms - path_ms - path_back_ms - path_to_client_ms).max(0.0);
    // The server's ACK that shows when the ClientHello got there.
    if let Some(ack) = path_ack.filter(|_| path_ms >= 1.0) {
        x.frames.insert(1, ack);
    }
    // The client's ACK that shows when the server's flight reached it.
    let to_client_ack = to_client_ack.filter(|_| path_to_client_ms >= 1.0);
    if let Some(ack) = to_client_ack {
        let at = x.frames.len() - 1;
        x.frames.insert(at, ack);
    }
    x.detail = Detail::TlsExtraRtt {
        rtts: row.rtts.unwrap_or(0.0),
        ideal_rtts: row.ideal_rtts.unwrap_or(0.0),
        ideal_basis: row.ideal_basis.clone(),
        excess_rtts: excess,
        causes: causes.iter().map(|c| (c.kind, c.cost_ms)).collect(),
        host_ms,
        path_ms,
        path_back_ms,
        syn_held_ms: syn_held_ms(f),
        path_to_client_ms,
        path_to_client_ack: to_client_ack,
        rtt_ms: f.rtt_ns.unwrap_or(0) as f64 / 1e6,
        unexplained_ms: unexplained,
        server_flight_missed: server_flight_missed(f),
        untimed_turn: untimed_turn(f).filter(|&(_, _, ms)| ms >= unexplained / 2.0 && ms >= 1.0),
    };
    x.display_filter = format!(
        "tcp.stream eq {} && frame.number >= {} && frame.number <= {}",
        f.report.stream, row.start_frame, row.end_frame
    );
    Some(x)
}

/// The longest handshake turn the capture could not time (its answer
/// acknowledged bytes of the asking flight the capture never showed):
/// the flight's last captured segment, the answer, and the capture time
/// between them (ms).
fn untimed_turn(f: &Facts<'_>) -> Option<(u64, u64, f64)> {
    f.handshake_turns()
        .iter()
        .filter(|t| !t.complete)
        .map(|t| {
            let ms = (t.answer_ts_ns - t.question_ts_ns).max(0) as f64 / 1e6;
            (t.question_frame, t.answer_frame, ms)
        })
        .max_by(|a, b| a.2.total_cmp(&b.2))
}

/// The capture lacks the server's first flight: no ServerHello in it,
/// yet the client went on past its ClientHello (its key exchange, its
/// ChangeCipherSpec or Finished), which it cannot do without one
/// (PcapPlusPlus's tls2.pcap: a file of some data packets only, 4,052
/// bytes of a server's flight acknowledged, never captured).
fn server_flight_missed(f: &Facts<'_>) -> bool {
    let Some(tls) = f.report.tls.as_ref() else {
        return false;
    };
    let server_hello = tls
        .messages
        .iter()
        .any(|m| m.message == TlsMessage::ServerHello);
    !server_hello
        && tls.messages.iter().any(|m| {
            m.direction == Direction::ClientToServer
                && matches!(
                    m.message,
                    TlsMessage::ClientKeyExchange
                        | TlsMessage::ChangeCipherSpec
                        | TlsMessage::Finished
                        | TlsMessage::FinishedEncrypted
                )
        })
}

/// How much longer than the fastest round trip to the server (the
/// server's side of it from the capture point) the connection's one SYN
/// took to be answered: its SYN-ACK's capture less the SYN's (ms, 0 where
/// a SYN was sent again or either is missing).
fn syn_held_ms(f: &Facts<'_>) -> f64 {
    let h = &f.report.handshake;
    let (Some(syn), Some(syn_ack)) = (
        h.syn_frame.and_then(|frame| f.record(frame)),
        h.syn_ack_frame.and_then(|frame| f.record(frame)),
    ) else {
        return 0.0;
    };
    if h.syn_retransmits > 0 {
        return 0.0;
    }
    (syn_ack.ts_ns - syn.ts_ns - f.server_side_ns).max(0) as f64 / 1e6
}

/// How much longer than the connection's round trip the path's was
/// when the ClientHello was sent: the server acknowledged it on arrival
/// (`HandshakeTurn::acked`) that much later than the round trip places
/// its arrival (at least a quarter of the round trip and 2 ms), and that
/// ACK's frame. 0 at the server (it sees the ClientHello arrive).
fn path_growth(f: &Facts<'_>) -> (f64, Option<u64>) {
    if f.report.vantage == crate::model::Vantage::Server {
        return (0.0, None);
    }
    let Some((turn, (k, frame))) = f
        .handshake_turns()
        .iter()
        .find(|t| t.answerer == Direction::ServerToClient && t.first && t.complete)
        .and_then(|t| Some((t, t.acked?)))
    else {
        return (0.0, None);
    };
    let Some(question) = f.record(turn.question_frame) else {
        return (0.0, None);
    };
    let asked = f.on_clock_of(Direction::ServerToClient, question);
    // Less than a quarter of the round trip (and 2 ms) is the path's
    // jitter, not a queue (as downlink_queue.rs).
    let floor = (f.rtt_ns.unwrap_or(0) / 4).max(super::causality::EXCESS_FLOOR_NS);
    if k - asked >= floor {
        ((k - asked) as f64 / 1e6, Some(frame))
    } else {
        (0.0, None)
    }
}

/// How long the stretch between the capture point and the client's TCP
/// held the server's first flight: the client's pure ACK of all of it,
/// acknowledging more than one full-sized segment beyond its previous
/// ACK (which a receiver sends at once: RFC 5681 4.2; no delayed-ACK
/// timer holds it), or the last of a burst of ACKs whose first did
/// ([`Facts::acks_in_a_prompt_burst`]), came that much later than the
/// flight's last segment passed (its original's passing, where the
/// server's re-send of it was needless), on the client's clock (at least a quarter of the round trip
/// and 2 ms), and that ACK's frame. The client's turn began with that
/// ACK (its ACK left on arrival): the time before it was no host's work
/// the turnarounds count. Where the capture is one hop from the client
/// (a laptop sharing its connection, a Wi-Fi access point) that hop held
/// the flight (nDPI's iphone.pcap 10: an iPhone behind a Mac's Internet
/// Sharing acknowledged the server's two full segments 104 ms after they
/// passed, 0.4 ms apart, Wi-Fi power save's beacon interval).
fn path_to_client(f: &Facts<'_>) -> (f64, Option<u64>) {
    let client = Direction::ClientToServer;
    let Some(turn) = f
        .handshake_turns()
        .iter()
        .find(|t| t.answerer == client && t.first)
    else {
        return (0.0, None);
    };
    let Some(flight_end) = f
        .record(turn.question_frame)
        .filter(|r| r.dir == Direction::ServerToClient)
    else {
        return (0.0, None);
    };
    let Some(ack) = f
        .between(flight_end.frame + 1, turn.answer_frame)
        .iter()
        .find(|r| r.dir == client && super::pure_ack(r) && seq::le(flight_end.end, r.ack))
        .filter(|r| f.acks_in_a_prompt_burst(client, r))
    else {
        return (0.0, None);
    };
    // A needless re-send of the flight's end (the client reported the
    // bytes twice, or had acknowledged them before): the original reached
    // the client, and the hold ran from when it passed (nDPI's iphone.pcap
    // 1: the original and the server's re-send delivered together, the
    // copy D-SACKed).
    let passed = if flight_end.retransmission
        && super::retransmission::arrival_proof(f, flight_end).is_some()
    {
        super::retransmission::original(f.timeline, flight_end).unwrap_or(flight_end)
    } else {
        flight_end
    };
    let held = f.on_clock_of(client, ack) - f.on_clock_of(client, passed);
    let floor = (f.rtt_ns.unwrap_or(0) / 4).max(super::causality::EXCESS_FLOOR_NS);
    if held >= floor {
        (held as f64 / 1e6, Some(ack.frame))
    } else {
        (0.0, None)
    }
}

/// How long the path held the server's first flight after it left: its
/// last segment's delivery beyond the server's fastest, by the server's
/// own clock (sender_clock.rs), at least a quarter of the round trip and
/// 2 ms. The client's turn began when that segment arrived: a queue on
/// the way back delayed it as much as one on the way there (nDPI's reddit
/// 42: the ServerHello flight left 6 ms after the server's ACK of the
/// ClientHello on its 1 kHz clock and reached the client 34 ms later than
/// the SYN-ACK's delivery says, together with that ACK).
fn path_back(f: &Facts<'_>) -> f64 {
    let Some(flight_end) = f
        .handshake_turns()
        .iter()
        .find(|t| t.answerer == Direction::ClientToServer && t.first)
        .and_then(|t| f.record(t.question_frame))
        .filter(|r| r.dir == Direction::ServerToClient)
    else {
        return 0.0;
    };
    let held = f.held_after_sending_ns(flight_end);
    let floor = (f.rtt_ns.unwrap_or(0) / 4).max(super::causality::EXCESS_FLOOR_NS);
    if held >= floor {
        held as f64 / 1e6
    } else {
        0.0
    }
}
