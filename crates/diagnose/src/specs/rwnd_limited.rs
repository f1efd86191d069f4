//! `rwnd_limited` (detect/rwnd_limited.rs).
//!
//! > Signature, on the sender's clock (its packets as captured, the
//! > receiver's shifted by the sender's side of the RTT): a new data
//! > segment P leaves less than one MSS of room before the right edge of
//! > the last window the receiver advertised (`ack + window << scale`,
//! > non-zero); the sender is then silent for at least max(2 ms, RTT/4),
//! > and its next data segment K leaves right after an ACK that moved the
//! > right edge (released by the window update [...]). Reported when it
//! > happens at least 3 times and the stalls add up to a round trip or
//! > more (one or two rounds are receive autotuning catching up with a
//! > growing congestion window).
//! > Cost: the stalls (P to K), summed.

use super::*;
use crate::model::Phase;
use FindingKind::RwndLimited;

const RTT: f64 = 40.0;
const KERNEL: f64 = 0.05;
const EXACT: f64 = 1e-3;

/// A client with a fixed 2-segment receive buffer (window 2920, no
/// scaling) downloading `rounds` x 2 segments: the server fills the
/// window, the client ACKs both (reading at once), the ACK moves the edge
/// and the server sends the next two `resume` ms after it arrives.
/// Returns (P, A) per stall: the window-filling segment and the ACK that
/// opened the window after it.
fn paced(path: Path, window: u16, rounds: usize, resume: f64) -> (Wire, Vec<(Id, Id)>) {
    let mut w = Wire::new(path);
    w.window[C.index()] = window;
    w.handshake(0.0);
    let req = w.send(C, 40.1, b"GET /file HTTP/1.1\r\n\r\n");
    let mut t = w.arrival(req);
    let mut stalls = Vec::new();
    for k in 0..rounds {
        let segs = w.burst(S, t, 2, 0.01);
        let ack = w.ack(C, w.arrival(segs[1]));
        if k + 1 < rounds {
            stalls.push((segs[1], ack));
        }
        t = w.arrival(ack) + resume;
    }
    (w, stalls)
}

#[test]
fn a_sender_filling_the_window_and_resuming_on_each_update_is_rwnd_limited() {
    for path in Path::all(RTT) {
        let (w, stalls) = paced(path, 2 * MSS as u16, 5, KERNEL);
        let o = w.run();
        let f = o.the(RwndLimited);
        assert_eq!(f.phase, Some(Phase::Transfer));
        let frames: Vec<u64> = stalls
            .iter()
            .flat_map(|(p, a)| [o.frame(*p), o.frame(*a)])
            .collect();
        assert_eq!(f.frames, frames);
        // Each stall: from P to K on the server's clock, the ACK's round
        // trip plus the kernel's turnaround.
        assert_ms(f.cost_ms, 4.0 * (RTT + KERNEL), EXACT, "four stalls");
    }
}

#[test]
fn each_rwnd_stall_is_a_wait_released_by_the_window_update() {
    let (w, _) = paced(Path::at_client(RTT), 2 * MSS as u16, 5, KERNEL);
    assert_cost_is_its_waits(w.run().the(RwndLimited));
}

#[test]
fn two_stalls_are_autotuning_catching_up_not_a_limit() {
    let (w, _) = paced(Path::at_client(RTT), 2 * MSS as u16, 3, KERNEL);
    w.run().has_no(RwndLimited);
}

#[test]
fn a_sender_pausing_with_room_in_the_window_was_not_held_by_it() {
    // The same rounds with a 64 KB window: something else paced them.
    let (w, _) = paced(Path::at_client(RTT), 65535, 5, KERNEL);
    w.run().has_no(RwndLimited);
}

/// A window smaller than two MSS (1.5 MSS, like loopback's 43 KB window
/// under a 64 KB MSS): the kernel sends segments of half the window
/// (`tcp_bound_to_half_wnd`). `per_round` such segments per round, the
/// next round `KERNEL` ms after the client's ACK arrives.
fn half_window_rounds(per_round: usize) -> Wire {
    let window = (3 * MSS / 2) as u16;
    let half = u32::from(window) / 2;
    let mut w = Wire::new(Path::at_client(RTT));
    w.window[C.index()] = window;
    w.handshake(0.0);
    let req = w.send(C, 40.1, b"GET /file HTTP/1.1\r\n\r\n");
    let mut t = w.arrival(req);
    for _ in 0..5 {
        let mut last = None;
        for k in 0..per_round {
            last = Some(w.send(S, t + 0.01 * k as f64, bytes(half)));
        }
        let ack = w.ack(C, w.arrival(last.unwrap()));
        t = w.arrival(ack) + KERNEL;
    }
    w
}

#[test]
fn under_a_window_smaller_than_two_mss_the_full_window_is_half_of_it_per_segment() {
    // Two half-window segments fill it: the sender waits for each update.
    half_window_rounds(2).run().the(RwndLimited);
}

#[test]
fn one_half_window_segment_leaves_room_for_the_next_one_and_is_not_held() {
    // One segment leaves room for another of the same size: the pause
    // after it is not the window's, although the room is under one MSS.
    half_window_rounds(1).run().has_no(RwndLimited);
}

#[test]
fn a_sender_resuming_well_after_the_window_opened_was_not_waiting_for_it() {
    let (w, _) = paced(Path::at_client(RTT), 2 * MSS as u16, 5, 10.0);
    w.run().has_no(RwndLimited);
}

#[test]
fn without_the_handshake_the_window_scale_is_unknown_and_nothing_is_said() {
    let mut w = Wire::new(Path::at_client(RTT));
    w.window[C.index()] = 2 * MSS as u16;
    let [syn, syn_ack, ack] = w.handshake(0.0);
    let req = w.send(C, 40.1, b"GET /file HTTP/1.1\r\n\r\n");
    let mut t = w.arrival(req);
    for _ in 0..5 {
        let segs = w.burst(S, t, 2, 0.01);
        let a = w.ack(C, w.arrival(segs[1]));
        t = w.arrival(a) + KERNEL;
    }
    w.run_missing(&[syn, syn_ack, ack]).has_no(RwndLimited);
}

/// A client with a two-segment window (no scaling) asking for a file at
/// the client's vantage: the wire, and when the request reaches the
/// server.
fn two_segment_window_download() -> (Wire, f64) {
    let mut w = Wire::new(Path::at_client(RTT));
    w.window[C.index()] = 2 * MSS as u16;
    w.handshake(0.0);
    let req = w.send(C, 40.1, b"GET /file HTTP/1.1\r\n\r\n");
    let t = w.arrival(req);
    (w, t)
}

#[test]
fn a_stall_longer_than_a_round_trip_plus_the_longest_delayed_ack_is_not_the_window() {
    // The client's window updates come 600 ms after the data: no ACK is
    // held that long (RFC 1122: 500 ms at most), so the edge moved when
    // its application read, and the sender was not waiting on the window
    // all along (a reader that stops closes the window: zero_window's).
    let (mut w, mut t) = two_segment_window_download();
    for _ in 0..5 {
        let segs = w.burst(S, t, 2, 0.01);
        let a = w.ack(C, w.arrival(segs[1]) + 600.0);
        t = w.arrival(a) + KERNEL;
    }
    w.run().has_no(RwndLimited);
}

/// A download through a client window of 8 segments (no scaling) that the
/// server never fills but for its losses: a round of 4 segments ACKed one
/// by one, then `losses` rounds of 8 whose first is lost past the capture
/// point. The client's duplicate ACKs hold the window's left edge at the
/// hole, the 8th segment P fills the window, the third duplicate ACK
/// brings the re-send R, and R's ACK A moves the edge: the next round's
/// first segment K leaves `KERNEL` ms after A arrives (the first the
/// capture sees). Returns [P, R, A, K] per loss, and the segments lost.
pub(super) fn losses_holding_the_window(
    path: Path,
    losses: usize,
) -> (Wire, Vec<[Id; 4]>, Vec<Id>) {
    let mut w = Wire::new(path);
    w.window[C.index()] = (8 * MSS) as u16;
    w.handshake(0.0);
    let req = w.send(C, 40.1, b"GET /file HTTP/1.1\r\n\r\n");
    let mut t = w.arrival(req) + KERNEL;
    let mut stalls: Vec<[Id; 4]> = Vec::new();
    let mut lost = Vec::new();
    for round in 0..=losses {
        let lossy = round < losses;
        let segs = w.burst(S, t, if lossy { 8 } else { 4 }, 0.01);
        if let Some(last) = stalls.last_mut() {
            // K: the round's first segment, or its second where the
            // capture never sees the first (lost before the client).
            last[3] = if lossy && path.at <= 0.0 {
                segs[1]
            } else {
                segs[0]
            };
        }
        if !lossy {
            for s in &segs {
                w.ack(C, w.arrival(*s));
            }
            break;
        }
        w.lose(segs[0]);
        lost.push(segs[0]);
        let dups: Vec<Id> = segs[1..].iter().map(|s| w.ack(C, w.arrival(*s))).collect();
        let r = w.resend(w.arrival(dups[2]) + KERNEL, segs[0]);
        let a = w.ack(C, w.arrival(r));
        t = w.arrival(a) + KERNEL;
        stalls.push([segs[7], r, a, segs[7]]);
    }
    (w, stalls, lost)
}

#[test]
fn a_window_held_at_a_hole_waits_for_the_repair_not_for_the_reader() {
    // Three stalls on a full window, each a round trip and more: without
    // the losses, the window was never full (the same rounds without
    // them are below).
    for path in Path::all(RTT) {
        let (w, stalls, lost) = losses_holding_the_window(path, 3);
        assert_eq!(stalls.len(), 3);
        let o = w.run_lost(&lost);
        // (The losses and their stalls are in the capture: the
        // retransmission finding has them.)
        o.the(FindingKind::Retransmission);
        o.has_no(RwndLimited);
    }
}

#[test]
fn the_same_rounds_without_the_losses_never_fill_the_window() {
    let mut w = Wire::new(Path::at_client(RTT));
    w.window[C.index()] = (8 * MSS) as u16;
    w.handshake(0.0);
    let req = w.send(C, 40.1, b"GET /file HTTP/1.1\r\n\r\n");
    let mut t = w.arrival(req) + KERNEL;
    for _ in 0..4 {
        let segs = w.burst(S, t, 7, 0.01);
        let mut last = None;
        for s in &segs {
            last = Some(w.ack(C, w.arrival(*s)));
        }
        t = w.arrival(last.unwrap()) + KERNEL;
    }
    w.run().has_no(RwndLimited);
}

#[test]
fn a_needless_resend_at_the_windows_edge_leaves_the_stall_the_windows() {
    // Two-segment windows as in `paced`, but the client's ACKs come late
    // (260 ms): the server's timer re-sends the round's first segment,
    // at the window's left edge, before them, and the client reports it
    // received twice (D-SACK). Nothing was missing at the edge: the
    // window waited on the client, not on a repair.
    let (mut w, mut t) = two_segment_window_download();
    for _ in 0..5 {
        let segs = w.burst(S, t, 2, 0.01);
        let again = w.resend(t + 240.0, segs[0]);
        let a = w.ack(C, w.arrival(again) + 1.0);
        let (l, r) = w.span(segs[0]);
        let (l, r) = (w.abs_seq(S, l), w.abs_seq(S, r));
        w.edit(a, |s| {
            s.options.sack[0] = (l, r);
            s.options.sack_len = 1;
        });
        t = w.arrival(a) + KERNEL;
    }
    let o = w.run();
    o.has_no(FindingKind::Retransmission);
    o.the(RwndLimited);
}
