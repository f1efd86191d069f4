//! `syn_answered_by_ack` (detect/syn_answered_by_ack.rs).
//!
//! > Signature: a server host that still holds a connection on the SYN's
//! > 4-tuple does not open a new one: an established connection answers
//! > a SYN with a challenge ACK (RFC 5961 4.2), a TIME-WAIT one it cannot
//! > accept with an ACK too; both carry the old connection's numbers. The
//! > client, in SYN-SENT, resets that ACK (RFC 793 3.4) and sends its SYN
//! > again: Linux at once (TCP_TIMEOUT_MIN), other stacks on their SYN
//! > timer. The server answers that SYN with a SYN-ACK.
//! > Cost: a wait from each SYN so answered to the client's next SYN,
//! > released by the ACK when the SYN left within 50 ms of its arrival;
//! > phase: the TCP handshake; not `syn_retransmit`'s.

use super::*;
use crate::model::{Detail, Phase};
use FindingKind::{SynAnsweredByAck, SynRetransmit};

const RTT: f64 = 40.0;
const EXACT: f64 = 1e-3;
/// Linux's TCP_TIMEOUT_MIN at HZ=250 (2 jiffies): how soon it sends its
/// SYN again after an ACK that does not acknowledge it.
const LINUX_QUICK_RETRY: f64 = 8.0;
/// The old connection's numbers, far from this one's: what the server
/// still holds (its next sequence number, the client's it expects).
const OLD_SERVER_SEQ: u32 = 1_000_000;
const OLD_CLIENT_NEXT: u32 = 7_000_000;

/// The server's ACK of the old connection, sent at `t` (when the SYN
/// reached it), and the client's RST of it the moment it arrives (its
/// sequence number the ACK's acknowledgment number, no ACK flag).
fn old_ack_and_reset(w: &mut Wire, t: f64, reset: bool) -> (Id, Option<Id>) {
    let old = w.ack_upto(S, t, 0);
    let (seq, ack) = (
        w.abs_seq(S, 0).wrapping_sub(OLD_SERVER_SEQ),
        w.abs_seq(C, 0).wrapping_sub(OLD_CLIENT_NEXT),
    );
    w.edit(old, |s| {
        s.seq = seq;
        s.ack = ack;
    });
    let rst = reset.then(|| {
        let rst = w.rst(C, w.arrival(old) + 0.05);
        w.edit(rst, |s| {
            s.flags = TcpFlags::RST;
            s.seq = ack;
            s.ack = 0;
        });
        rst
    });
    (old, rst)
}

/// [`old_ack_and_reset`] the moment `syn` reaches the server.
fn answer(w: &mut Wire, syn: Id, reset: bool) -> (Id, Option<Id>) {
    let t = w.arrival(syn);
    old_ack_and_reset(w, t, reset)
}

/// A SYN answered by the old connection's ACK the moment it arrives, the
/// client's RST, its SYN again `retry` ms after the ACK arrived, then the
/// handshake (its SYN-ACK `late` ms late) and one request and answer.
/// Returns the first SYN, the ACK, the SYN again, and the RST.
fn answered_by_ack(path: Path, retry: f64, reset: bool, late: f64) -> (Wire, [Id; 3], Option<Id>) {
    let mut w = Wire::new(path);
    let syn = w.syn(0.0);
    let (old, rst) = answer(&mut w, syn, reset);
    let again = w.syn(w.arrival(old) + retry);
    opened(&mut w, again, late);
    (w, [syn, old, again], rst)
}

/// The SYN-ACK for `syn` (`late` ms longer on its way than the path's
/// delay), the client's ACK, a request and its answer.
fn opened(w: &mut Wire, syn: Id, late: f64) {
    let sa = w.syn_ack(w.arrival(syn));
    w.delay(sa, late);
    let ack = w.ack(C, w.arrival(sa));
    let get = w.send(C, w.sent(ack), b"GET / HTTP/1.1\r\n\r\n");
    let ok = w.send(
        S,
        w.arrival(get),
        b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
    );
    w.ack(C, w.arrival(ok));
}

#[test]
fn a_linux_client_resets_the_old_connections_ack_and_sends_its_syn_again_at_once() {
    for path in Path::all(RTT) {
        let (w, [syn, old, again], rst) = answered_by_ack(path, LINUX_QUICK_RETRY, true, 0.0);
        let held = w.sent(again) - w.sent(syn);
        let o = w.run();
        let x = o.the(SynAnsweredByAck);
        assert_eq!(x.phase, Some(Phase::TcpHandshake), "{path:?}");
        assert_eq!(x.frames, o.frames(&[syn, old, rst.unwrap(), again]));
        // Both ends are the client's SYNs: exact at any vantage; one round
        // trip and Linux's quick retry.
        assert_ms(
            held,
            RTT + LINUX_QUICK_RETRY,
            EXACT,
            "a round trip and the retry",
        );
        assert_waits(&x.waits, &[o.wait(syn, again, Some(old), held)], EXACT);
        assert_cost_is_its_waits(x);
        assert_eq!(
            x.detail,
            Detail::SynAnsweredByAck {
                answers: 1,
                reset: true,
                quick_retry: true,
            }
        );
        assert_eq!(
            x.display_filter,
            format!("tcp.stream eq 0 && frame.number in {{{}}}", {
                let f: Vec<String> = x.frames.iter().map(u64::to_string).collect();
                f.join(", ")
            })
        );
        // The SYN was answered: no SYN loss.
        o.has_no(SynRetransmit);
        // The handshake's row holds the wait.
        let row = o.row(Phase::TcpHandshake);
        assert_ms(row.excess_ms.unwrap(), held, 1.0, "the handshake's excess");
    }
}

#[test]
fn an_answer_is_known_by_the_round_trip_though_the_later_handshake_took_longer() {
    // The path's delay grew 10 ms after the ACK (a queue): the SYN-ACK's
    // round trip, which sets where the ACK left, is a quarter longer.
    for path in [Path::at_client(RTT), Path::mid(RTT, 0.5)] {
        let (w, [syn, old, again], rst) = answered_by_ack(path, LINUX_QUICK_RETRY, true, 10.0);
        let o = w.run();
        let x = o.the(SynAnsweredByAck);
        assert_eq!(x.frames, o.frames(&[syn, old, rst.unwrap(), again]));
        o.has_no(SynRetransmit);
    }
}

#[test]
fn on_a_lan_an_answer_is_known_though_a_busy_host_tripled_the_round_trip() {
    // 0.1 ms round trip; the later SYN-ACK 0.2 ms late (a busy host).
    for path in [Path::at_client(0.1), Path::mid(0.1, 0.5)] {
        let (w, [syn, old, again], rst) = answered_by_ack(path, LINUX_QUICK_RETRY, true, 0.2);
        let o = w.run();
        let x = o.the(SynAnsweredByAck);
        assert_eq!(x.frames, o.frames(&[syn, old, rst.unwrap(), again]));
        o.has_no(SynRetransmit);
    }
}

#[test]
fn a_client_that_waits_its_syn_timer_after_the_reset_waited_for_no_packet() {
    // Windows, macOS: the SYN again when the SYN timer (1 s) runs out.
    for path in Path::all(RTT) {
        let mut w = Wire::new(path);
        let syn = w.syn(0.0);
        let (old, rst) = answer(&mut w, syn, true);
        let again = w.syn(1000.0);
        opened(&mut w, again, 0.0);
        let o = w.run();
        let x = o.the(SynAnsweredByAck);
        assert_eq!(x.frames, o.frames(&[syn, old, rst.unwrap(), again]));
        assert_waits(&x.waits, &[o.wait(syn, again, None, 1000.0)], EXACT);
        assert_eq!(
            x.detail,
            Detail::SynAnsweredByAck {
                answers: 1,
                reset: true,
                quick_retry: false,
            }
        );
        o.has_no(SynRetransmit);
    }
}

#[test]
fn each_syn_answered_by_the_old_connection_is_a_wait_to_the_next() {
    // The RST lost on its way: the server still holds the connection and
    // answers the second SYN the same way; the third opens it.
    let path = Path::at_client(RTT);
    let mut w = Wire::new(path);
    let first = w.syn(0.0);
    let (old1, rst1) = answer(&mut w, first, true);
    w.lose(rst1.unwrap());
    let second = w.syn(w.arrival(old1) + LINUX_QUICK_RETRY);
    let (old2, rst2) = answer(&mut w, second, true);
    let third = w.syn(1000.0);
    opened(&mut w, third, 0.0);
    // (The SYNs are the client's packets: their gaps are the same at the
    // capture point.)
    let (first_ms, second_ms) = (
        w.sent(second) - w.sent(first),
        w.sent(third) - w.sent(second),
    );
    let o = w.run();
    let x = o.the(SynAnsweredByAck);
    assert_eq!(
        x.frames,
        o.frames(&[
            first,
            old1,
            rst1.unwrap(),
            second,
            old2,
            rst2.unwrap(),
            third
        ])
    );
    assert_waits(
        &x.waits,
        &[
            o.wait(first, second, Some(old1), first_ms),
            o.wait(second, third, None, second_ms),
        ],
        EXACT,
    );
    assert_cost_is_its_waits(x);
    assert!(matches!(
        x.detail,
        Detail::SynAnsweredByAck {
            answers: 2,
            reset: true,
            quick_retry: false
        }
    ));
    o.has_no(SynRetransmit);
}

#[test]
fn without_the_reset_in_the_capture_the_ack_still_answered_the_syn() {
    for path in Path::all(RTT) {
        let (w, [syn, old, again], _) = answered_by_ack(path, LINUX_QUICK_RETRY, false, 0.0);
        let o = w.run();
        let x = o.the(SynAnsweredByAck);
        assert_eq!(x.frames, o.frames(&[syn, old, again]));
        assert!(matches!(
            x.detail,
            Detail::SynAnsweredByAck { reset: false, .. }
        ));
    }
}

#[test]
fn the_connection_is_counted_from_its_syn_ack_not_from_the_old_connections_numbers() {
    // The old connection's ACK acknowledges nothing of this one: the
    // client's bytes in flight are its request's, and the server's
    // sequence numbers start at its SYN-ACK (Wireshark's relative ones).
    let (mut w, _, _) = answered_by_ack(Path::at_client(RTT), LINUX_QUICK_RETRY, true, 0.0);
    w.options.ladder_stream = Some(0);
    let o = w.run();
    let request = b"GET / HTTP/1.1\r\n\r\n".len() as u32;
    assert_eq!(o.report.client_to_server.max_bytes_in_flight, request);
    assert_eq!(o.report.client_to_server.acked_unseen, 0);
    let ladder = o.report.ladder.as_deref().unwrap();
    let answer = ladder
        .iter()
        .find(|r| r.direction == S && r.len > 0)
        .unwrap();
    assert_eq!(answer.seq, 1, "the answer's first byte, after the SYN-ACK");
    // Nothing of the client's was in flight before its request.
    assert!(ladder
        .iter()
        .filter(|r| r.direction == C && r.len == 0)
        .all(|r| r.in_flight == 0));
}

/// The client's first SYN lost, sent again on its 1 s timer and answered;
/// with `stray_ack_at`, an old connection's ACK captured at that time.
/// No answer by an ACK: the wait is the lost SYN's.
fn lost_syn(stray_ack_at: Option<f64>) {
    let mut w = Wire::new(Path::at_client(RTT));
    let syn = w.syn(0.0);
    w.lose(syn);
    if let Some(t) = stray_ack_at {
        old_ack_and_reset(&mut w, t, false);
    }
    let again = w.syn(1000.0);
    opened(&mut w, again, 0.0);
    let o = w.run();
    o.has_no(SynAnsweredByAck);
    o.the(SynRetransmit);
}

#[test]
fn a_syn_lost_and_sent_again_is_no_answer() {
    // Near miss: nothing came back; the SYN timer sent it again.
    lost_syn(None);
}

#[test]
fn an_old_ack_that_left_before_the_syn_arrived_answered_nothing() {
    // Near miss: the old connection's ACK, late on the path, reaches the
    // client 5 ms after its SYN left (40 ms round trip): it left the
    // server before the SYN got there.
    lost_syn(Some(5.0 - RTT / 2.0));
}

#[test]
fn a_syn_answered_by_an_ack_and_never_sent_again_waited_for_nothing_measured() {
    // Near miss: the capture ends after the client's RST.
    let mut w = Wire::new(Path::at_client(RTT));
    let syn = w.syn(0.0);
    answer(&mut w, syn, true);
    w.run().has_no(SynAnsweredByAck);
}
