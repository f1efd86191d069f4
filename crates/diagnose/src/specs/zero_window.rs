//! `zero_window` (detect/zero_window.rs).
//!
//! > Signature: a segment with window 0 (not SYN/FIN/RST) from one side,
//! > that held the peer back: the peer probed the closed window
//! > (zero-window probes, RFC 9293 3.8.6.1; Linux tcp_send_probe0) or sent
//! > new data as soon as the window reopened. A zero window the peer never
//! > waited on (the last ACK before an RST, a receiver closing with unread
//! > data, a peer with nothing more to send) cost nothing and is not
//! > reported.
//! > Cost: from the first zero window to the next non-zero one from the
//! > same side, summed over the episodes that held the peer back.

use super::*;
use crate::model::Phase;
use FindingKind::ZeroWindow;

const RTT: f64 = 40.0;
const EXACT: f64 = 1e-3;
/// The server's persist timer: its first probe goes one RTO (200 ms on
/// Linux, at least) after the zero window arrived.
const PERSIST: f64 = 200.0;

/// A zero-window episode: the client's application stops reading, its
/// receive buffer fills with the server's 4 segments and it ACKs them
/// with window 0; it reads again at `read_at` and sends a window update;
/// the server, with `more` data waiting, sends it the moment the update
/// arrives. With `probe`, the server's persist timer probes the closed
/// window first (Linux: an ACK one byte below what was acknowledged) and
/// the client answers it, still closed.
struct Episode {
    zero: Id,
    update: Id,
    resumed: Option<Id>,
}

fn episode(w: &mut Wire, t: f64, read_at: f64, probe: bool, more: bool) -> Episode {
    let req = w.send(C, t, b"GET /big HTTP/1.1\r\n\r\n");
    let segs = w.burst(S, w.arrival(req), 4, 0.01);
    w.window[C.index()] = 0;
    let zero = w.ack(C, w.arrival(segs[3]));
    if probe {
        let at = w.arrival(zero) + PERSIST;
        let seq = w.next_seq(S) - 1;
        let p = w.ack_upto(S, at, w.next_seq(C));
        let abs = w.abs_seq(S, seq);
        w.edit(p, |s| s.seq = abs);
        w.ack(C, w.arrival(p));
    }
    w.window[C.index()] = 65535;
    let update = w.ack(C, read_at);
    let resumed = more.then(|| w.data(S, w.arrival(update) + 0.05, MSS));
    if let Some(r) = resumed {
        w.ack(C, w.arrival(r));
    }
    Episode {
        zero,
        update,
        resumed,
    }
}

#[test]
fn a_zero_window_the_peer_probed_until_it_reopened_is_a_zero_window() {
    for path in Path::all(RTT) {
        let mut w = Wire::new(path);
        w.handshake(0.0);
        let e = episode(&mut w, 100.0, 500.0, true, true);
        let held = w.sent(e.update) - w.sent(e.zero);
        let o = w.run();
        assert_eq!(o.report.server_to_client.window_probes, 1);
        let f = o.the(ZeroWindow);
        assert_eq!(f.phase, Some(Phase::Transfer));
        assert_eq!(f.frames, o.frames(&[e.zero, e.update]));
        // Both ends are the client's own packets: exact at any vantage.
        assert_ms(f.cost_ms, held, EXACT, "zero window -> window update");
    }
}

#[test]
fn a_zero_window_whose_reopening_released_waiting_data_is_a_zero_window() {
    // Reopened before the persist timer fired: no probe, but the server
    // sent the moment the update arrived.
    for path in Path::all(RTT) {
        let mut w = Wire::new(path);
        w.handshake(0.0);
        let e = episode(&mut w, 100.0, 250.0, false, true);
        let held = w.sent(e.update) - w.sent(e.zero);
        let o = w.run();
        let f = o.the(ZeroWindow);
        assert_eq!(f.frames, o.frames(&[e.zero, e.update]));
        assert_ms(f.cost_ms, held, EXACT, "zero window -> window update");
    }
}

#[test]
fn episodes_of_one_receiver_add_up_in_one_finding() {
    let mut w = Wire::new(Path::at_client(RTT));
    w.handshake(0.0);
    let a = episode(&mut w, 100.0, 500.0, true, true);
    let b = episode(&mut w, 1000.0, 1300.0, false, true);
    let total = (w.sent(a.update) - w.sent(a.zero)) + (w.sent(b.update) - w.sent(b.zero));
    let o = w.run();
    let f = o.the(ZeroWindow);
    assert_eq!(f.frames, o.frames(&[a.zero, a.update, b.zero, b.update]));
    assert_ms(f.cost_ms, total, EXACT, "both episodes");
}

#[test]
fn a_zero_window_is_a_wait_released_by_the_window_update() {
    let mut w = Wire::new(Path::at_client(RTT));
    w.handshake(0.0);
    let e = episode(&mut w, 100.0, 250.0, false, true);
    let o = w.run();
    let f = o.the(ZeroWindow);
    assert_eq!(
        f.waits.iter().map(|x| x.release_frame).collect::<Vec<_>>(),
        vec![Some(o.frame(e.update))]
    );
    assert_eq!(f.waits[0].to_frame, o.frame(e.resumed.unwrap()));
    assert_cost_is_its_waits(f);
}

#[test]
fn a_zero_window_of_a_peer_with_nothing_more_to_send_is_not_reported() {
    // The response filled the buffer exactly: no probe, nothing after the
    // update.
    let mut w = Wire::new(Path::at_client(RTT));
    w.handshake(0.0);
    episode(&mut w, 100.0, 500.0, false, false);
    let o = w.run();
    assert_eq!(o.report.client_to_server.zero_windows, 1);
    o.has_no(ZeroWindow);
}

#[test]
fn data_long_after_the_reopening_was_not_waiting_for_it() {
    // No probe, and the server's next data comes 50 ms after the update
    // arrived: its application wrote it then.
    let mut w = Wire::new(Path::at_client(RTT));
    w.handshake(0.0);
    let e = episode(&mut w, 100.0, 250.0, false, false);
    let late = w.data(S, w.arrival(e.update) + 50.0, MSS);
    w.ack(C, w.arrival(late));
    w.run().has_no(ZeroWindow);
}

#[test]
fn a_zero_window_before_a_reset_held_nobody_back() {
    let mut w = Wire::new(Path::at_client(RTT));
    w.handshake(0.0);
    let req = w.send(C, 100.0, b"GET / HTTP/1.1\r\n\r\n");
    let seg = w.data(S, w.arrival(req), MSS);
    w.window[C.index()] = 0;
    let zero = w.ack(C, w.arrival(seg));
    w.rst(C, w.sent(zero) + 300.0);
    w.run().has_no(ZeroWindow);
}

#[test]
fn a_fin_with_a_zero_window_says_nothing_of_a_reader() {
    // A receiver closing with window 0 on its FIN (and the peer sending
    // its last data just after): the FIN's window is not an episode.
    let mut w = Wire::new(Path::at_client(RTT));
    w.handshake(0.0);
    let req = w.send(C, 100.0, b"GET / HTTP/1.1\r\n\r\n");
    let seg = w.data(S, w.arrival(req), MSS);
    w.window[C.index()] = 0;
    let fin = w.fin(C, w.arrival(seg));
    w.window[C.index()] = 65535;
    w.data(S, w.arrival(fin) + 0.05, 100);
    let o = w.run();
    assert_eq!(o.report.client_to_server.zero_windows, 0);
    o.has_no(ZeroWindow);
}

#[test]
fn a_closed_window_probed_with_the_next_byte_is_a_zero_window() {
    // BSD and Windows probe with the next byte beyond the closed window,
    // re-sent until the window opens; then the data restarts at that byte.
    let mut w = Wire::new(Path::at_client(RTT));
    w.handshake(0.0);
    let req = w.send(C, 100.0, b"GET /big HTTP/1.1\r\n\r\n");
    let segs = w.burst(S, w.arrival(req), 4, 0.01);
    w.window[C.index()] = 0;
    let zero = w.ack(C, w.arrival(segs[3]));
    let byte = w.next_seq(S);
    let p1 = w.send_at(S, w.arrival(zero) + PERSIST, byte, bytes(1));
    w.ack_upto(C, w.arrival(p1), byte);
    let p2 = w.send_at(S, w.sent(p1) + 2.0 * PERSIST, byte, bytes(1));
    w.ack_upto(C, w.arrival(p2), byte);
    w.window[C.index()] = 65535;
    let update = w.ack_upto(C, 1000.0, byte);
    let resumed = w.send_at(S, w.arrival(update) + 0.05, byte, bytes(MSS));
    w.ack(C, w.arrival(resumed));
    let held = w.sent(update) - w.sent(zero);
    let o = w.run();
    assert_eq!(o.report.server_to_client.window_probes, 2);
    o.has_no(FindingKind::Retransmission);
    let f = o.the(ZeroWindow);
    assert_eq!(f.frames, o.frames(&[zero, update]));
    assert_ms(f.cost_ms, held, EXACT, "zero -> update");
}

#[test]
fn a_window_never_reopened_while_the_peer_probed_costs_until_the_end() {
    // The client's application never reads again; the server probes with
    // backoff and gives up with an RST.
    let mut w = Wire::new(Path::at_client(RTT));
    w.handshake(0.0);
    let req = w.send(C, 100.0, b"GET /big HTTP/1.1\r\n\r\n");
    let segs = w.burst(S, w.arrival(req), 4, 0.01);
    w.window[C.index()] = 0;
    let zero = w.ack(C, w.arrival(segs[3]));
    let mut at = w.arrival(zero) + PERSIST;
    for _ in 0..3 {
        let seq = w.next_seq(S) - 1;
        let p = w.ack_upto(S, at, w.next_seq(C));
        let abs = w.abs_seq(S, seq);
        w.edit(p, |s| s.seq = abs);
        w.ack(C, w.arrival(p));
        at += 2.0 * PERSIST;
    }
    let rst = w.rst(S, at);
    // At the client, the RST is captured when it arrives.
    let held = w.arrival(rst) - w.sent(zero);
    let o = w.run();
    let f = o.the(ZeroWindow);
    assert_eq!(f.frames, o.frames(&[zero, rst]));
    assert_ms(f.cost_ms, held, EXACT, "zero window -> the last packet");
}

#[test]
fn an_unprobed_zero_window_counts_at_most_the_persist_timer() {
    // The window stays closed 5 s and the server never probes it: had its
    // data been waiting, its persist timer (one RTO: at most 1 s here)
    // would have fired. The data the update releases waited less than
    // that; the episode counts at most that long.
    let mut w = Wire::new(Path::at_client(RTT));
    w.handshake(0.0);
    let e = episode(&mut w, 100.0, 5_000.0, false, true);
    let closed = w.sent(e.update) - w.sent(e.zero);
    assert!(closed > 4_000.0);
    let o = w.run();
    let f = o.the(ZeroWindow);
    assert_waits(
        &f.waits,
        &[o.wait(e.zero, e.resumed.unwrap(), Some(e.update), 1_000.0)],
        EXACT,
    );
    assert_cost_is_its_waits(f);
}

#[test]
fn a_probed_zero_window_counts_all_the_time_it_was_closed() {
    // The server probed: its data was waiting all along.
    let mut w = Wire::new(Path::at_client(RTT));
    w.handshake(0.0);
    let e = episode(&mut w, 100.0, 5_000.0, true, true);
    let closed = w.sent(e.update) - w.sent(e.zero);
    let o = w.run();
    let f = o.the(ZeroWindow);
    assert_waits(
        &f.waits,
        &[o.wait(e.zero, e.resumed.unwrap(), Some(e.update), closed)],
        EXACT,
    );
}
