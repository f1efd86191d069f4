//! `expect_continue_wait` (detect/expect_continue.rs).
//!
//! > Signature, on the client's clock: an HTTP/1.1 request whose first
//! > segment carries its head alone, with `Expect: 100-continue`; the
//! > client's next new data of that request (the body) leaves at least a
//! > round trip later [...] and at least 2 ms; no server data comes
//! > between them [...], and the body does not leave right after a server
//! > packet arrived [...]. The wait: from the head's segment to the body's
//! > first segment, with no releasing packet (the client's timer ended
//! > it). Cost: the wait.

use super::*;
use crate::model::{Detail, Phase};
use FindingKind::ExpectContinueWait;

const RTT: f64 = 40.0;
const EXACT: f64 = 1e-3;
const HEAD: &[u8] =
    b"POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 4380\r\nExpect: 100-continue\r\n\r\n";
/// curl's wait for a `100 Continue`.
const TIMER: f64 = 1000.0;

/// The head at 40.1 ms, the server's ACK of it, and the body (three full
/// segments) `body_after` ms after the head, then the server's answer.
/// Returns the wire, the head and the body's first segment.
fn upload(path: Path, head: &'static [u8], body_after: f64) -> (Wire, Id, Id) {
    let mut w = Wire::new(path);
    w.handshake(0.0);
    let h = w.send(C, 40.1, head);
    w.ack(S, w.arrival(h));
    let body = w.burst(C, 40.1 + body_after, 3, 0.01);
    let last = *body.last().unwrap();
    w.send(
        S,
        w.arrival(last) + 0.05,
        b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
    );
    (w, h, body[0])
}

#[test]
fn a_body_held_for_a_100_continue_that_never_came_is_the_timers_wait() {
    for path in Path::all(RTT) {
        let (w, head, body) = upload(path, HEAD, TIMER);
        let o = w.run();
        let f = o.the(ExpectContinueWait);
        assert_eq!(f.phase, Some(Phase::FirstByte));
        assert_eq!(f.frames, o.frames(&[head, body]));
        // Both ends are the client's own packets: exact at any vantage.
        assert_ms(f.cost_ms, TIMER, EXACT, "the client's timer");
        assert_waits(&f.waits, &[o.wait(head, body, None, TIMER)], EXACT);
        // The client held a body it had: its timer's second is latency
        // beyond the ideal, not the client's own pace.
        let row = o
            .report
            .ledger
            .iter()
            .find(|r| r.phase == Phase::FirstByte)
            .expect("a first-byte row");
        assert!(row.excess_ms.unwrap() > TIMER - 1.0, "{row:?}");
        assert!(
            matches!(&f.detail, Detail::ExpectContinueWait { exchange: 1, request: Some(r), .. } if r == "POST /upload"),
            "{:?}",
            f.detail
        );
    }
}

#[test]
fn a_100_continue_before_the_body_is_the_protocol_working() {
    // The server answers the expectation: the body follows its arrival.
    let mut w = Wire::new(Path::at_client(RTT));
    w.handshake(0.0);
    let h = w.send(C, 40.1, HEAD);
    let cont = w.send(S, w.arrival(h) + 0.05, b"HTTP/1.1 100 Continue\r\n\r\n");
    w.burst(C, w.arrival(cont) + 0.05, 3, 0.01);
    w.run().has_no(ExpectContinueWait);
}

#[test]
fn without_the_expectation_a_pause_before_the_body_is_the_clients_own() {
    let head = b"POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 4380\r\n\r\n";
    let (w, ..) = upload(Path::at_client(RTT), head, TIMER);
    w.run().has_no(ExpectContinueWait);
}

#[test]
fn a_body_sooner_than_a_round_trip_could_not_have_waited_for_an_answer() {
    let (w, ..) = upload(Path::at_client(RTT), HEAD, RTT / 2.0);
    w.run().has_no(ExpectContinueWait);
}

#[test]
fn a_body_that_left_as_the_servers_ack_arrived_was_released_by_it() {
    // The body leaves the moment the server's ACK of the head arrives
    // (Nagle holding it behind the head), not on a timer.
    let mut w = Wire::new(Path::at_client(RTT));
    w.handshake(0.0);
    let h = w.send(C, 40.1, HEAD);
    let ack = w.ack(S, w.arrival(h) + 40.0);
    w.burst(C, w.arrival(ack) + 0.05, 3, 0.01);
    w.run().has_no(ExpectContinueWait);
}

#[test]
fn a_head_that_carried_body_bytes_held_nothing() {
    let mut with_body = HEAD.to_vec();
    with_body.extend_from_slice(&[b'x'; 100]);
    let (w, ..) = upload(Path::at_client(RTT), leak(with_body), TIMER);
    w.run().has_no(ExpectContinueWait);
}
