//! `quic_initial_lost`, as detect/quic_initial_lost.rs states it: two
//! client datagrams with Initial packets at least 100 ms apart, nothing of
//! the server's between them, in the same attempt; each wait runs from
//! an unanswered Initial to the next, released by no packet (the
//! client's probe timeout).

use super::assert_ms;
use super::quic_wire::QuicWire;
use super::Path;
use crate::model::{Detail, FindingKind};

#[test]
fn a_lost_initial_costs_the_clients_probe_timeout() {
    for path in [Path::at_client(40.0), Path::mid(40.0, 0.5)] {
        let mut w = QuicWire::new(path);
        let ow = path.one_way_ms();
        let lost = w.initial(0.0);
        w.lose(lost);
        let resent = w.initial(200.0);
        w.server_initial(200.0 + ow + 1.0, 1200);
        w.server_handshake(200.0 + ow + 1.0, 900);
        w.client_finished(200.0 + 2.0 * ow + 1.5);
        let o = w.run();
        let f = o.the(FindingKind::QuicInitialLost);
        assert_eq!(f.frames, o.frames(&[lost, resent]));
        assert_eq!(f.waits, vec![o.wait(lost, resent, None, 200.0)]);
        assert_eq!(
            f.detail,
            Detail::QuicInitialLost {
                unanswered: 1,
                answered: true,
                first_timeout_ms: 200.0,
                rest_after_ack_ms: None,
                tcp_instead: None,
            }
        );
        assert_ms(
            f.attributed_ms,
            200.0,
            1.0,
            "the handshake's excess is the timeout",
        );
    }
}

#[test]
fn at_the_server_the_lost_initial_is_not_in_the_capture() {
    let mut w = QuicWire::new(Path::at_server(40.0));
    let lost = w.initial(0.0);
    w.lose(lost);
    w.initial(200.0);
    w.server_initial(221.0, 1200);
    w.client_finished(241.5);
    let o = w.run();
    o.has_no(FindingKind::QuicInitialLost);
}

#[test]
fn a_client_hello_in_two_datagrams_is_one_initial() {
    // A post-quantum key share makes the ClientHello too big for one
    // datagram: two Initials leave together.
    let mut w = QuicWire::new(Path::at_client(40.0));
    w.initial(0.0);
    w.initial(0.3);
    w.server_initial(21.0, 1200);
    w.client_finished(41.5);
    let o = w.run();
    o.has_no(FindingKind::QuicInitialLost);
}

#[test]
fn an_initial_after_the_servers_answer_is_no_resend_of_an_unanswered_one() {
    // The client's ACK of the server's Initial is an Initial datagram too.
    let mut w = QuicWire::new(Path::at_server(200.0));
    w.initial(0.0);
    w.server_initial(101.0, 1200);
    w.client_ack(201.5, 1200);
    w.client_finished(205.0);
    let o = w.run();
    o.has_no(FindingKind::QuicInitialLost);
}

#[test]
fn initials_never_answered_are_the_whole_wait() {
    // UDP to the server's port dropped: the client tries three times.
    let mut w = QuicWire::new(Path::at_client(40.0));
    // Another server answers the host: the capture holds both ways.
    w.another_answered(1.0);
    let a = w.initial(0.0);
    let b = w.initial(200.0);
    let c = w.initial(600.0);
    let o = w.run();
    let f = o.the(FindingKind::QuicInitialLost);
    assert_eq!(f.frames, o.frames(&[a, b, c]));
    assert_ms(f.cost_ms, 600.0, 0.01, "both timeouts");
    assert!(matches!(
        f.detail,
        Detail::QuicInitialLost {
            unanswered: 2,
            answered: false,
            ..
        }
    ));
    assert_eq!(o.report.handshake_ms, None);
}

#[test]
fn initials_never_answered_in_a_one_way_capture_are_not_claimed() {
    // Nothing of any server's in the capture: the answers may be what a
    // capture of one direction (or of Initials only) left out.
    let mut w = QuicWire::new(Path::at_client(40.0));
    w.initial(0.0);
    w.initial(200.0);
    w.initial(600.0);
    let o = w.run();
    o.has_no(FindingKind::QuicInitialLost);
}

#[test]
fn a_probe_with_part_of_the_client_hello_waits_a_round_trip_for_the_rest() {
    // Chromium's ClientHello takes two datagrams, both lost; its probe
    // resends the first only, the server ACKs it (an Initial without a
    // flight: it has half a ClientHello) and the second follows the ACK.
    for path in [Path::at_client(40.0), Path::mid(40.0, 0.5)] {
        let mut w = QuicWire::new(path);
        let ow = path.one_way_ms();
        let a = w.initial(0.0);
        let b = w.initial(0.1);
        w.lose(a);
        w.lose(b);
        let probe = w.initial(300.1);
        let ack = w.server_ack(300.1 + ow + 0.2);
        let rest = w.initial(300.1 + 2.0 * ow + 0.4);
        w.server_initial(300.1 + 3.0 * ow + 1.0, 1200);
        w.server_handshake(300.1 + 3.0 * ow + 1.0, 900);
        w.client_finished(300.1 + 4.0 * ow + 1.5);
        let o = w.run();
        let f = o.the(FindingKind::QuicInitialLost);
        assert_eq!(f.frames, o.frames(&[b, probe, rest]));
        assert_eq!(
            f.waits,
            vec![
                o.wait(b, probe, None, 300.0),
                o.wait(probe, rest, Some(ack), 40.4),
            ]
        );
        assert!(matches!(
            f.detail,
            Detail::QuicInitialLost {
                unanswered: 1,
                rest_after_ack_ms: Some(_),
                ..
            }
        ));
        assert!(o.report.unexplained_ms < 2.0, "{}", o.report.unexplained_ms);
    }
}

#[test]
fn a_server_ack_before_its_flight_is_no_partial_probe() {
    // quic-go sometimes ACKs the ClientHello before its flight; the
    // client's next datagram is its ACK with a Handshake packet.
    let mut w = QuicWire::new(Path::at_client(40.0));
    let lost = w.initial(0.0);
    w.lose(lost);
    w.initial(200.0);
    w.server_ack(220.5);
    w.server_initial(221.0, 1200);
    w.server_handshake(221.0, 900);
    w.client_finished(241.5);
    let o = w.run();
    let f = o.the(FindingKind::QuicInitialLost);
    assert_eq!(f.waits.len(), 1, "{:?}", f.waits);
}

#[test]
fn a_client_that_went_to_tcp_waited_for_quic_until_its_syn() {
    // UDP to the server dropped: Chromium's Initials (two datagrams),
    // its probe 300 ms later, and TCP to the same server 250 ms after
    // that; QUIC's later resends were nobody's wait.
    let mut w = QuicWire::new(Path::at_client(40.0));
    w.another_answered(1.0);
    let a = w.initial(0.0);
    let b = w.initial(0.1);
    let probe = w.initial(300.1);
    let syn = w.tcp_syn(550.0);
    w.initial(900.1);
    w.initial(2100.1);
    let o = w.run();
    let f = o.the(FindingKind::QuicInitialLost);
    let _ = a;
    assert_eq!(f.frames, o.frames(&[b, probe, syn]));
    assert_eq!(
        f.waits,
        vec![
            o.wait(b, probe, None, 300.0),
            o.wait(probe, syn, None, 249.9)
        ]
    );
    assert_ms(f.cost_ms, 549.9, 0.01, "until the SYN");
    assert!(matches!(
        f.detail,
        Detail::QuicInitialLost {
            unanswered: 1,
            answered: false,
            tcp_instead: Some(_),
            ..
        }
    ));
}

#[test]
fn a_client_that_went_to_tcp_before_any_resend_waited_its_fallback_timer() {
    let mut w = QuicWire::new(Path::at_client(40.0));
    w.another_answered(1.0);
    let a = w.initial(0.0);
    let syn = w.tcp_syn(250.0);
    w.initial(300.0);
    let o = w.run();
    let f = o.the(FindingKind::QuicInitialLost);
    assert_eq!(f.frames, o.frames(&[a, syn]));
    assert_eq!(f.waits, vec![o.wait(a, syn, None, 250.0)]);
}
