//! `accept_queue_full` (detect/accept_queue_full.rs).
//!
//! > Signature: a Linux listener whose accept queue is full drops the
//! > handshake's last ACK and every segment behind it: the connection
//! > stays half-open at the server, which sends nothing on it but re-sends
//! > of its SYN-ACK on its own timer (none after a SYN cookie), while the
//! > client re-sends its data on its retransmission timer and answers each
//! > SYN-ACK again with an ACK. The first copy that arrives when the queue
//! > has room opens the connection. The capture shows the drop by a
//! > SYN-ACK re-sent after the client's ACK of it (at least 500 ms after
//! > the client's last SYN), or, captured at the server, by the client's
//! > first data unacknowledged until the client sent it again.
//! > Cost: one wait, from the client's first packet not taken to the copy
//! > the server took, released by the SYN-ACK re-send it answered.
//!
//! A packet the server's listener drops is written here as lost beyond
//! the capture point (`Wire::lose`): a capture at the server has it, as a
//! capture on the server's host has what its stack then drops.

use super::*;
use crate::model::{Detail, Phase};
use FindingKind::{AcceptQueueFull, Retransmission, RtoStall, ServerThinkTime};

const RTT: f64 = 40.0;
const EXACT: f64 = 1e-3;
/// Linux's first SYN-ACK timer.
const SYN_ACK_TIMER: f64 = 1000.0;
const GET: &[u8] = b"GET / HTTP/1.1\r\nHost: a\r\n\r\n";
const OK: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";

/// A server that speaks first, its listener full when the client's
/// handshake ACK arrives: the ACK dropped, the SYN-ACK sent again on the
/// server's timer, the client's ACK of it taken, the greeting `think` ms
/// after that ACK arrived, the client's line back at once. Returns the
/// handshake's ACK, the re-sent SYN-ACK, the ACK that answered it, the
/// greeting.
fn held_greeting(path: Path, think: f64) -> (Wire, [Id; 4]) {
    let mut w = Wire::new(path);
    let [_, sa, ack] = w.handshake(0.0);
    w.lose(ack);
    let again = w.syn_ack(w.sent(sa) + SYN_ACK_TIMER);
    let taken = w.ack(C, w.arrival(again));
    let greeting = w.send(S, w.arrival(taken) + think, b"220 ready\r\n");
    w.send(C, w.arrival(greeting) + 0.1, b"QUIT\r\n");
    (w, [ack, again, taken, greeting])
}

#[test]
fn a_syn_ack_sent_again_after_the_clients_ack_held_the_greeting_until_its_answer() {
    for path in Path::all(RTT) {
        let (w, [ack, again, taken, greeting]) = held_greeting(path, 300.0);
        let held = w.sent(taken) - w.sent(ack);
        let o = w.run();
        let x = o.the(AcceptQueueFull);
        assert_eq!(x.phase, Some(Phase::FirstByte), "the greeting's wait");
        assert_eq!(x.frames, o.frames(&[ack, again, taken]));
        // Both ends are the client's packets: exact at any vantage.
        assert_waits(&x.waits, &[o.wait(ack, taken, Some(again), held)], EXACT);
        assert_cost_is_its_waits(x);
        let at_server = path.at >= 1.0;
        assert_eq!(
            x.detail,
            Detail::AcceptQueueFull {
                syn_acks_resent: 1,
                data_resent: 0,
                at_server,
            }
        );
        // Away from the server one lost ACK explains the same packets.
        assert_eq!(x.confidence, if at_server { 0.9 } else { 0.6 });
        // The server's own time counts from the ACK it took.
        let think = o.the(ServerThinkTime);
        assert_eq!(think.frames, o.frames(&[taken, greeting]));
        assert_ms(think.cost_ms, 300.0, 1.0, "from the ACK the server took");
        // Held and think time explain the greeting's row.
        let row = o.first_byte_row(0);
        assert_ms(
            row.excess_ms.unwrap(),
            held + 300.0,
            2.0,
            "the row's excess is the hold and the think time",
        );
    }
}

#[test]
fn a_syn_ack_answering_a_syn_sent_again_is_no_hold() {
    // The first SYN is slow on the path, the client sends it again; each
    // SYN that arrives draws a SYN-ACK, the second after the client's ACK
    // of the first: an answer, not the server's timer.
    for path in Path::all(RTT) {
        let mut w = Wire::new(path);
        let first = w.syn(0.0);
        w.delay(first, 990.0);
        let second = w.syn(1000.0);
        let sa = w.syn_ack(w.arrival(first));
        w.ack(C, w.arrival(sa));
        let again = w.syn_ack(w.arrival(second));
        w.ack(C, w.arrival(again));
        let greeting = w.send(S, w.arrival(second) + 5.0, b"220 ready\r\n");
        w.send(C, w.arrival(greeting) + 0.1, b"QUIT\r\n");
        let o = w.run();
        assert_eq!(o.report.handshake.syn_ack_retransmits, 1);
        o.has_no(AcceptQueueFull);
    }
}

/// A client that asks at once, its handshake ACK and request dropped by
/// the server's full listener and the request sent again on the client's
/// timer (200 ms, doubling) until copy `taken_at` (1-based) gets in; the
/// server acknowledges it and answers 100 ms later. With `syn_ack_again`,
/// the server (no SYN cookie) re-sends its SYN-ACK after its 1 s timer,
/// and the client's ACK of it is dropped too. Returns the request and
/// its copies.
fn dropped_request(path: Path, copies: usize, syn_ack_again: bool) -> (Wire, Vec<Id>) {
    let mut w = Wire::new(path);
    let [_, sa, ack] = w.handshake(0.0);
    w.lose(ack);
    let request = w.send(C, w.sent(ack), GET);
    w.lose(request);
    let mut sent = vec![request];
    let mut rto = 200.0;
    let mut t = w.sent(request);
    for _ in 0..copies {
        t += rto;
        rto *= 2.0;
        sent.push(w.resend(t, request));
    }
    for id in &sent[..sent.len() - 1] {
        w.lose(*id);
    }
    if syn_ack_again {
        let again = w.syn_ack(w.sent(sa) + SYN_ACK_TIMER);
        let dup = w.ack(C, w.arrival(again));
        w.lose(dup);
    }
    let last = *sent.last().unwrap();
    w.ack(S, w.arrival(last));
    w.send(S, w.arrival(last) + 100.0, OK);
    (w, sent)
}

#[test]
fn captured_at_the_server_data_it_did_not_acknowledge_until_sent_again_was_not_taken() {
    let (w, sent) = dropped_request(Path::at_server(RTT), 3, false);
    let taken = *sent.last().unwrap();
    let held = w.sent(taken) - w.sent(sent[0]);
    let o = w.run();
    let x = o.the(AcceptQueueFull);
    assert_eq!(x.phase, Some(Phase::FirstByte), "the request's wait");
    assert_eq!(x.frames, o.frames(&sent));
    // The client's timer sent the copy: nothing released it.
    assert_waits(&x.waits, &[o.wait(sent[0], taken, None, held)], EXACT);
    assert_eq!(
        x.detail,
        Detail::AcceptQueueFull {
            syn_acks_resent: 0,
            data_resent: 3,
            at_server: true,
        }
    );
    // The server's time runs from the copy it took.
    assert_ms(o.the(ServerThinkTime).cost_ms, 100.0, 1.0, "from the copy");
    o.has_no(RtoStall);
}

#[test]
fn away_from_the_server_data_sent_again_without_a_syn_ack_again_may_be_the_paths_loss() {
    // A SYN cookie keeps no state: no SYN-ACK re-send shows the server
    // held the connection, and a client's capture cannot tell its dropped
    // data from data lost on the way. rto_stall, naming both.
    for path in [Path::at_client(RTT), Path::mid(RTT, 0.5)] {
        let (w, _) = dropped_request(path, 3, false);
        let o = w.run();
        o.has_no(AcceptQueueFull);
        let x = o.the(RtoStall);
        assert!(
            matches!(x.detail, Detail::RtoStall { unopened: true, .. }),
            "{:?}",
            x.detail
        );
    }
}

/// The client's request re-sent unanswered, and later the server's FIN
/// acknowledging none of it (skype.pcap 46: 20 s on): only an application
/// that had accepted the connection closes it with a FIN (a listener's
/// dropped one is reset, one it took late has the bytes by then), so the
/// listener is not named: the path lost the request. A FIN that covers
/// the request (the lab's accept-queue captures: taken late, answered,
/// closed) leaves the listener named.
#[test]
fn a_server_that_closed_without_the_request_had_accepted_the_connection() {
    for path in [Path::at_client(RTT), Path::mid(RTT, 0.5)] {
        let mut w = Wire::new(path);
        let [_, _, ack] = w.handshake(0.0);
        let request = w.send(C, w.sent(ack), GET);
        let mut t = w.sent(request);
        let mut rto = 200.0;
        let mut sent = vec![request];
        for _ in 0..3 {
            t += rto;
            rto *= 2.0;
            sent.push(w.resend(t, request));
        }
        for id in &sent {
            w.lose(*id);
        }
        w.fin(S, 20_000.0);
        let o = w.run();
        let x = o.the(RtoStall);
        assert!(
            matches!(
                x.detail,
                Detail::RtoStall {
                    unopened: false,
                    ..
                }
            ),
            "{:?}",
            x.detail
        );
    }
    // Taken late: the FIN covers the request.
    let (mut w, _) = dropped_request(Path::at_client(RTT), 3, false);
    w.fin(S, 5_000.0);
    let o = w.run();
    let x = o.the(RtoStall);
    assert!(
        matches!(x.detail, Detail::RtoStall { unopened: true, .. }),
        "{:?}",
        x.detail
    );
}

#[test]
fn a_syn_ack_sent_again_shows_the_data_was_not_taken_either_and_the_resends_are_its_own() {
    for path in Path::all(RTT) {
        let (w, sent) = dropped_request(path, 3, true);
        let taken = *sent.last().unwrap();
        let held = w.sent(taken) - w.sent(sent[0]);
        let o = w.run();
        let x = o.the(AcceptQueueFull);
        assert_waits(&x.waits, &[o.wait(sent[0], taken, None, held)], EXACT);
        assert_cost_is_its_waits(x);
        assert_eq!(
            x.detail,
            Detail::AcceptQueueFull {
                syn_acks_resent: 1,
                data_resent: 3,
                at_server: path.at >= 1.0,
            }
        );
        assert_eq!(x.confidence, 0.9);
        // The copies are this finding's, counted once.
        o.has_no(Retransmission);
        o.has_no(RtoStall);
    }
}

#[test]
fn a_request_the_server_acknowledged_is_no_hold_whatever_its_answer_took() {
    // The server's stack had the connection: it acknowledged the request
    // at once, then its application took 800 ms.
    let mut w = Wire::new(Path::at_server(RTT));
    let [_, _, ack] = w.handshake(0.0);
    let request = w.send(C, w.sent(ack), GET);
    w.ack(S, w.arrival(request));
    w.send(S, w.arrival(request) + 800.0, OK);
    let o = w.run();
    o.has_no(AcceptQueueFull);
    o.the(ServerThinkTime);
}

#[test]
fn a_later_requests_loss_after_the_server_spoke_is_not_a_held_connection() {
    // The first request was answered: the server had the connection. The
    // second request is lost and sent again on the client's timer: loss,
    // at any vantage, and its rto_stall does not name the listener.
    for path in Path::all(RTT) {
        let mut w = Wire::new(path);
        let [_, _, ack] = w.handshake(0.0);
        let first = w.send(C, w.sent(ack), b"GET /a HTTP/1.1\r\nHost: a\r\n\r\n");
        let answer = w.send(S, w.arrival(first) + 1.0, OK);
        let second = w.send(
            C,
            w.arrival(answer) + 1.0,
            b"GET /b HTTP/1.1\r\nHost: a\r\n\r\n",
        );
        w.lose(second);
        let copy = w.resend(w.sent(second) + 300.0, second);
        w.ack(S, w.arrival(copy));
        w.send(S, w.arrival(copy) + 1.0, OK);
        let o = w.run_lost(&[second]);
        o.has_no(AcceptQueueFull);
        if path.at < 1.0 {
            let x = o.the(RtoStall);
            assert!(
                matches!(
                    x.detail,
                    Detail::RtoStall {
                        unopened: false,
                        ..
                    }
                ),
                "{:?}",
                x.detail
            );
        }
    }
}

#[test]
fn a_delayed_ack_the_clients_first_copy_overtook_is_no_hold() {
    // A server that delays its ACKs 200 ms (Windows) and has nothing to
    // say yet; the client's timer (200 ms and the round trip, Linux's
    // least) fires first on a 2 ms path, and the server acknowledges the
    // copy at once, as any stack acknowledges a duplicate. Nothing was
    // dropped.
    let mut w = Wire::new(Path::at_server(2.0));
    let [_, _, ack] = w.handshake(0.0);
    let request = w.send(C, w.sent(ack), GET);
    let copy = w.resend(w.sent(request) + 199.5, request);
    w.ack(S, w.arrival(copy));
    w.send(S, w.arrival(request) + 900.0, OK);
    let o = w.run();
    o.has_no(AcceptQueueFull);
    // One copy ignored more: the listener's.
    let (w, _) = dropped_request(Path::at_server(2.0), 2, false);
    w.run().the(AcceptQueueFull);
}
