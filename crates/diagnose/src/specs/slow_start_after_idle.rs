//! `slow_start_after_idle` (detect/slow_start_after_idle.rs).
//!
//! > a keep-alive connection sat idle longer than its retransmission
//! > timeout, and the sender restarted from its initial window (RFC 5681
//! > section 4.1, Linux `tcp_slow_start_after_idle=1`) [...]
//! >
//! > Signature, on the server's clock: a response after an idle gap of at
//! > least max(200 ms, 2 RTT) whose first burst (data sent before the first
//! > silence of RTT/2 or more) is 2 to 12 segments (a restart window [...])
//! > while an earlier response on the connection went out in bursts at
//! > least half again as large and two segments larger, and the response
//! > needs more than that first burst. Every silence inside the response
//! > must be ACK-clocked: no longer than 2 RTT [...] and ended by an ACK
//! > from the client. Not when another response on the connection, after
//! > an idle as long as the restart needs, went out in a first burst as
//! > much wider: that sender does not restart.
//! > Cost: those silences [...], each a wait from the segment before it to
//! > the one after, released by the ACK.

use super::*;
use crate::model::Phase;
use FindingKind::SlowStartAfterIdle;

const RTT: f64 = 40.0;
const KERNEL: f64 = 0.05;
const EXACT: f64 = 1e-3;

struct Response {
    request: Id,
    segs: Vec<Id>,
    /// Per pause: the last segment before it, the ACK that ended it, the
    /// first segment after it.
    pauses: Vec<(Id, Id, Id)>,
}

/// A request at `t` answered in bursts of `bursts` full segments: the
/// client ACKs each burst once it has all of it (its receive offload
/// merges the burst), and the server sends the next burst `resume` ms
/// after that ACK arrives (KERNEL: at once, ACK-clocked).
fn response(w: &mut Wire, t: f64, bursts: &[usize], resume: f64) -> Response {
    let request = w.send(C, t, b"GET /page HTTP/1.1\r\n\r\n");
    let mut at = w.arrival(request);
    let mut segs: Vec<Id> = Vec::new();
    let mut pauses = Vec::new();
    let mut last_ack: Option<Id> = None;
    for n in bursts {
        let burst = w.burst(S, at, *n, 0.01);
        if let Some(ack) = last_ack {
            pauses.push((*segs.last().unwrap(), ack, burst[0]));
        }
        segs.extend(&burst);
        let ack = w.ack(C, w.arrival(*burst.last().unwrap()));
        last_ack = Some(ack);
        at = w.arrival(ack) + resume;
    }
    Response {
        request,
        segs,
        pauses,
    }
}

/// Two responses on one connection, `idle` ms apart (from the first's
/// last segment reaching the client to the second request).
fn keep_alive(
    path: Path,
    first: &[usize],
    idle: f64,
    second: &[usize],
    resume: f64,
) -> (Wire, Response, Response) {
    let mut w = Wire::new(path);
    w.handshake(0.0);
    let a = response(&mut w, 100.0, first, KERNEL);
    let t = w.arrival(*a.segs.last().unwrap()) + idle;
    let b = response(&mut w, t, second, resume);
    (w, a, b)
}

#[test]
fn a_response_after_idle_restarting_from_the_initial_window_is_slow_start_after_idle() {
    for path in Path::all(RTT) {
        // The first response grew its window to 20 segments; after 1 s
        // idle the second starts again from 10.
        let (w, a, b) = keep_alive(path, &[10, 20], 1000.0, &[10, 20], KERNEL);
        let o = w.run();
        let f = o.the(SlowStartAfterIdle);
        assert_eq!(f.phase, Some(Phase::Transfer));
        assert_eq!(
            f.frames,
            o.frames(&[*a.segs.last().unwrap(), b.request, b.segs[0]])
        );
        // The pause: from the 10th segment to the 11th on the server's
        // clock, the ACK's round trip plus the kernel's turnaround.
        let (before, ack, after) = b.pauses[0];
        let pause = RTT + KERNEL;
        assert_waits(&f.waits, &[o.wait(before, after, Some(ack), pause)], EXACT);
        assert_ms(f.cost_ms, pause, EXACT, "the restarted round trip");
    }
}

#[test]
fn a_sender_that_went_wide_open_after_a_longer_idle_does_not_restart() {
    // NetworkML's browsing trace: a server sent 40 segments at once after
    // 9 s idle, then 2 segments and, a round trip later, a response's
    // last segment after a shorter idle: not a restart window (Nagle held
    // the tail). Control: the same without the wide one after idle is a
    // restart.
    for (wide_after_idle, restart) in [(true, false), (false, true)] {
        let mut w = Wire::new(Path::at_client(RTT));
        w.handshake(0.0);
        let a = response(&mut w, 100.0, &[10, 20], KERNEL);
        let t = w.arrival(*a.segs.last().unwrap()) + 2000.0;
        let wide: &[usize] = if wide_after_idle { &[40] } else { &[10, 20] };
        let b = response(&mut w, t, wide, KERNEL);
        let t = w.arrival(*b.segs.last().unwrap()) + 1000.0;
        response(&mut w, t, &[10, 20], KERNEL);
        let o = w.run();
        let found = o.kinds().contains(&SlowStartAfterIdle);
        assert_eq!(found, restart, "wide after idle: {wide_after_idle}");
    }
}

#[test]
fn a_response_after_less_than_200_ms_idle_is_not_a_restart() {
    let (w, ..) = keep_alive(Path::at_client(RTT), &[10, 20], 150.0, &[10, 20], KERNEL);
    w.run().has_no(SlowStartAfterIdle);
}

#[test]
fn a_response_that_fits_its_first_burst_lost_nothing_to_the_restart() {
    let (w, ..) = keep_alive(Path::at_client(RTT), &[10, 20], 1000.0, &[8], KERNEL);
    w.run().has_no(SlowStartAfterIdle);
}

#[test]
fn without_an_earlier_wider_window_a_small_first_burst_is_no_restart() {
    let (w, ..) = keep_alive(Path::at_client(RTT), &[10], 1000.0, &[10, 20], KERNEL);
    w.run().has_no(SlowStartAfterIdle);
}

#[test]
fn a_pause_longer_than_two_round_trips_is_the_application_not_slow_start() {
    // The server went on 50 ms after each ACK: its application paced it.
    let (w, ..) = keep_alive(Path::at_client(RTT), &[10, 20], 1000.0, &[10, 20], 50.0);
    w.run().has_no(SlowStartAfterIdle);
}

#[test]
fn a_second_burst_beyond_what_slow_start_grows_was_not_held_by_the_window() {
    // After 4 segments the next round trip brings 20: slow start grows a
    // window of 4 to 8 (10 with ACKs counted in bytes), so the 4 were all
    // the server had written then, not a restart window.
    let (w, ..) = keep_alive(Path::at_client(RTT), &[10, 30], 1000.0, &[4, 20], KERNEL);
    w.run().has_no(SlowStartAfterIdle);
}

#[test]
fn a_first_burst_ending_in_a_short_segment_was_all_the_server_had() {
    let mut w = Wire::new(Path::at_client(RTT));
    w.handshake(0.0);
    let a = response(&mut w, 100.0, &[10, 20], KERNEL);
    let request = w.send(
        C,
        w.arrival(*a.segs.last().unwrap()) + 1000.0,
        b"GET /page HTTP/1.1\r\n\r\n",
    );
    let mut first = w.burst(S, w.arrival(request), 3, 0.01);
    let tail = w.send(S, w.sent(*first.last().unwrap()) + 0.01, bytes(300));
    first.push(tail);
    let ack = w.ack(C, w.arrival(tail));
    w.burst(S, w.arrival(ack) + KERNEL, 8, 0.01);
    w.run().has_no(SlowStartAfterIdle);
}

#[test]
fn a_pause_ended_well_after_the_ack_reached_the_server_was_not_its_release() {
    // The server went on 15 ms after each ACK arrived (within two round
    // trips, but no ACK-clocked sender waits that long): its application
    // wrote the rest then.
    let (w, ..) = keep_alive(Path::at_client(RTT), &[10, 20], 1000.0, &[10, 20], 15.0);
    w.run().has_no(SlowStartAfterIdle);
}
