//! `listener_reset` (detect/listener_reset.rs).
//!
//! > Signature: a host with no socket for a segment that carries an ACK
//! > answers it with a RST whose sequence number is that ACK's
//! > acknowledgment number and no ACK flag. The server's side of a
//! > connection its SYN-ACK offered has none when its accept queue is full
//! > as the handshake's ACK arrives (`tcp_abort_on_overflow=1`), when its
//! > listener closed since the SYN-ACK, when the half-open connection
//! > expired. In the capture: the server's first packet after its SYN-ACK
//! > (and SYN-ACK re-sends) is that RST, sequence number 1, and a client
//! > packet after the SYN-ACK reached the server before it left; the
//! > client had not closed before the RST reached it.
//! > Cost: from the SYN the SYN-ACK answered to the RST's arrival at the
//! > client; from the request instead when it left later after the
//! > SYN-ACK reached the client than a waiting client sends (a
//! > connection opened ahead of need); an outcome never attributed.

use super::*;
use crate::model::{Detail, Phase};
use FindingKind::{AcceptQueueFull, ListenerReset};

const RTT: f64 = 40.0;
const GET: &[u8] = b"GET / HTTP/1.1\r\nHost: a\r\n\r\n";

/// A RST from a host with no socket for the connection: the RST flag
/// alone, sequence number the server's next (1 after its SYN-ACK), no
/// acknowledgment.
fn no_socket_rst(w: &mut Wire, at: impl FnOnce(&Wire) -> f64) -> Id {
    let t = at(w);
    let id = w.rst(S, t);
    w.edit(id, |s| {
        s.flags = TcpFlags::RST;
        s.ack = 0;
    });
    id
}

/// The client's handshake ACK and its request at once, the server's
/// host resetting each as it arrives (a full accept queue with
/// `tcp_abort_on_overflow=1`). Returns the SYN, SYN-ACK, ACK, request and
/// the first RST.
fn reset_on_arrival(path: Path) -> (Wire, [Id; 5]) {
    let mut w = Wire::new(path);
    let [syn, sa, ack] = w.handshake(0.0);
    let request = w.send(C, w.sent(ack), GET);
    let rst = no_socket_rst(&mut w, |w| w.arrival(ack));
    no_socket_rst(&mut w, |w| w.arrival(request));
    (w, [syn, sa, ack, request, rst])
}

#[test]
fn a_full_listener_resets_the_handshakes_ack_and_the_request_behind_it() {
    for path in Path::all(RTT) {
        let (w, [syn, sa, ack, request, rst]) = reset_on_arrival(path);
        let lost = w.arrival(rst) - w.sent(syn);
        let o = w.run();
        assert_eq!(o.kinds(), vec![ListenerReset], "{path:?}");
        let x = o.the(ListenerReset);
        assert_eq!(x.phase, Some(Phase::TcpHandshake));
        assert_eq!(x.frames, o.frames(&[syn, sa, ack, request, rst]));
        // The SYN to the RST's arrival: two round trips here.
        assert_ms(
            x.cost_ms,
            lost,
            0.01,
            "from the SYN to the RST at the client",
        );
        assert_ms(lost, 2.0 * RTT, 1e-9, "the timeline");
        assert!(
            x.waits.is_empty(),
            "nothing the client sent was let through"
        );
        // An outcome: no share of the (absent) excess.
        assert_eq!(x.attributed_ms, 0.0);
        let at_server = path.at >= 1.0;
        let Detail::ListenerReset {
            answered_handshake_ack,
            request_sent,
            syn_acks_resent,
            after_ms,
            at_server: seen_at_server,
            idle_before_request_ms,
        } = x.detail
        else {
            panic!("{:?}", x.detail);
        };
        assert!(answered_handshake_ack && request_sent);
        assert_eq!(idle_before_request_ms, None, "the request left at once");
        assert_eq!((syn_acks_resent, seen_at_server), (0, at_server));
        if at_server {
            assert_ms(after_ms, 0.0, 1e-6, "the RST left as the ACK arrived");
        }
        assert_eq!(x.confidence, if at_server { 0.9 } else { 0.8 });
    }
}

#[test]
fn a_client_waiting_for_a_greeting_gets_the_reset_of_its_handshake_ack() {
    for path in Path::all(RTT) {
        let mut w = Wire::new(path);
        let [syn, sa, ack] = w.handshake(0.0);
        let rst = no_socket_rst(&mut w, |w| w.arrival(ack));
        let o = w.run();
        let x = o.the(ListenerReset);
        assert_eq!(x.frames, o.frames(&[syn, sa, ack, rst]));
        assert!(matches!(
            x.detail,
            Detail::ListenerReset {
                answered_handshake_ack: true,
                request_sent: false,
                ..
            }
        ));
    }
}

#[test]
fn an_expired_half_open_connection_is_reset_when_the_client_speaks() {
    // The listener never had room (`tcp_abort_on_overflow=0`): it dropped
    // the ACK, sent its SYN-ACK again on its timer, dropped the ACK of
    // that too and gave the connection up; the client, idle until then,
    // asks and is reset.
    for path in Path::all(RTT) {
        let mut w = Wire::new(path);
        let [syn, sa, ack] = w.handshake(0.0);
        w.lose(ack);
        let again = w.syn_ack(w.sent(sa) + 1000.0);
        let ack2 = w.ack(C, w.arrival(again));
        w.lose(ack2);
        let request = w.send(C, 5000.0, GET);
        let rst = no_socket_rst(&mut w, |w| w.arrival(request));
        let waited = w.arrival(rst) - w.sent(request);
        let unused = w.sent(request) - w.arrival(sa);
        let o = w.run_lost(&[ack, ack2]);
        o.has_no(AcceptQueueFull);
        let x = o.the(ListenerReset);
        assert_eq!(x.frames.last(), Some(&o.frame(rst)));
        assert!(x.frames.contains(&o.frame(syn)));
        // The connection sat unused until the request (opened ahead of
        // need): the wait is the request's, to the RST's arrival. (At the
        // server, the client's ACKs lost before it, nothing measures the
        // client's side of the path: its first packet there after the
        // SYN-ACK is the request, seconds later.)
        if path.at < 1.0 {
            assert_ms(
                x.cost_ms,
                waited,
                0.01,
                "from the request to the RST at the client",
            );
        }
        let Detail::ListenerReset {
            answered_handshake_ack: false,
            request_sent: true,
            syn_acks_resent: 1,
            idle_before_request_ms: Some(idle),
            ..
        } = x.detail
        else {
            panic!("{:?}", x.detail);
        };
        if path.at < 1.0 {
            assert_ms(idle, unused, 0.01, "open unused");
        }
    }
}

#[test]
fn an_application_that_accepted_and_aborted_sends_its_rst_with_an_ack() {
    // SO_LINGER 0 and close() after accept (HAProxy's `tcp-request
    // connection reject`): the socket's own RST, ACK flag set.
    for path in Path::all(RTT) {
        let mut w = Wire::new(path);
        let [_, _, ack] = w.handshake(0.0);
        let request = w.send(C, w.sent(ack), GET);
        w.rst(S, w.arrival(request));
        w.run().has_no(ListenerReset);
    }
}

#[test]
fn a_reset_after_the_server_sent_data_is_no_listener_reset() {
    for path in Path::all(RTT) {
        let mut w = Wire::new(path);
        let [_, _, ack] = w.handshake(0.0);
        let greeting = w.send(S, w.arrival(ack), b"220 ready\r\n");
        no_socket_rst(&mut w, |w| w.sent(greeting) + 100.0);
        w.run().has_no(ListenerReset);
    }
}

#[test]
fn a_client_that_closed_at_once_waited_for_nothing() {
    // A port check: connect, close. The listener's reset of its ACK
    // reaches a client that had already gone.
    for path in Path::all(RTT) {
        let mut w = Wire::new(path);
        let [_, _, ack] = w.handshake(0.0);
        let fin = w.fin(C, w.sent(ack) + 0.1);
        no_socket_rst(&mut w, |w| w.arrival(ack));
        no_socket_rst(&mut w, |w| w.arrival(fin));
        w.run().has_no(ListenerReset);
    }
}

#[test]
fn a_reset_that_left_before_any_client_packet_could_arrive_answers_nothing() {
    // Sent 1 ms after the SYN-ACK, a round trip before the client's ACK
    // could be there: no reply to anything this connection sent.
    for path in Path::all(RTT) {
        let mut w = Wire::new(path);
        let [_, sa, ack] = w.handshake(0.0);
        no_socket_rst(&mut w, |w| w.sent(sa) + 1.0);
        w.send(C, w.sent(ack), GET);
        w.run().has_no(ListenerReset);
    }
}
