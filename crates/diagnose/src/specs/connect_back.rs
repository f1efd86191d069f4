//! `connect_back` (detect/connect_back.rs).
//!
//! > while the client waited for an answer (or a greeting), the server
//! > opened a connection back to the client's host, and answered only
//! > once that connection was up or its attempt given up [...]
//! > the part of the wait from the request's arrival (the handshake's
//! > ACK for a greeting) to the answer that lies between the other
//! > connection's first SYN and its SYN-ACK's arrival at the server, or,
//! > with no SYN-ACK, the answer [...], at least the think-time
//! > threshold (`server_think_time` counts the rest of the wait, not
//! > this). Cost: those spans, summed.

use super::*;
use crate::model::{Detail, Phase};
use FindingKind::{ConnectBack, ServerThinkTime};

const RTT: f64 = 40.0;

/// FTP in active mode: `RETR` at 100 ms; the server dials the client's
/// data port 0.2 ms after the request arrives, and answers `150` 0.2 ms
/// after the data connection is up, plus `think` ms of its own.
fn active_retr(path: Path, think: f64) -> (Outcome, Id, Id) {
    let mut w = Wire::new(path);
    w.handshake(0.0);
    let retr = w.send(C, 100.0, b"RETR f1.txt\r\n");
    let (_, accepted) = w.connect_back(40001, w.arrival(retr) + 0.2, true);
    let up = w.arrival(accepted.expect("accepted"));
    let opening = w.send(
        S,
        up + 0.2 + think,
        b"150 Opening BINARY mode data connection\r\n",
    );
    w.ack(C, w.arrival(opening));
    (w.run(), retr, opening)
}

#[test]
fn an_answer_that_waited_for_the_servers_connection_back_is_that_handshakes_round_trip() {
    for path in Path::all(RTT) {
        let (o, retr, opening) = active_retr(path, 0.0);
        let f = o.the(ConnectBack);
        assert_eq!(f.phase, Some(Phase::FirstByte));
        assert_eq!(f.waits.len(), 1);
        let w = &f.waits[0];
        assert_eq!(
            (w.from_frame, w.to_frame),
            (o.frame(retr), o.frame(opening))
        );
        // The data connection's handshake: one round trip.
        assert!((w.ms - RTT).abs() < 0.5, "{path:?}: {} ms", w.ms);
        // Not the server's work.
        o.has_no(ServerThinkTime);
        // The ledger's excess (a round trip) is the finding's.
        assert!(
            o.report.unexplained_ms < 1.0,
            "{path:?}: {}",
            o.report.unexplained_ms
        );
    }
}

#[test]
fn the_servers_own_time_after_the_connection_is_up_is_still_think_time() {
    let (o, ..) = active_retr(Path::at_client(RTT), 300.0);
    assert!((o.the(ConnectBack).cost_ms - RTT).abs() < 0.5);
    let think = o.the(ServerThinkTime);
    assert!((think.cost_ms - 300.4).abs() < 0.5, "{}", think.cost_ms);
}

#[test]
fn a_connection_to_another_host_is_no_connection_back() {
    // The server's host calls 10.0.1.9 (an upstream) during the wait: not
    // the client's host.
    let mut w = Wire::new(Path::at_client(RTT));
    w.handshake(0.0);
    let req = w.send(C, 100.0, b"RETR f1.txt\r\n");
    w.call(
        "10.0.0.2",
        41000,
        w.arrival(req) + 0.2,
        b"GET /x HTTP/1.1\r\n\r\n",
        40.0,
        true,
    );
    w.send(S, w.arrival(req) + 41.0, b"150 Opening\r\n");
    let o = w.run();
    o.has_no(ConnectBack);
}

#[test]
fn a_greeting_held_by_an_ident_lookup_nobody_answers_is_the_lookups_time() {
    // Exim with `rfc1413_hosts = *` and a 2 s timeout; the client's host
    // drops port 113 (the server's SYN, again a second later, unanswered).
    let mut w = Wire::new(Path::at_client(RTT));
    let [_, _, ack] = w.handshake(0.0);
    let asked = w.arrival(ack) + 0.1;
    w.connect_back(113, asked, false);
    w.connect_back(113, asked + 1000.0, false);
    let greeting = w.send(S, asked + 2000.0, b"220 mail ESMTP Exim 4.96\r\n");
    let ehlo = w.send(C, w.arrival(greeting) + 0.2, b"EHLO vm\r\n");
    w.send(S, w.arrival(ehlo) + 0.3, b"250 mail\r\n");
    let o = w.run();
    let f = o.the(ConnectBack);
    assert!((f.cost_ms - 2000.0).abs() < 1.0, "{}", f.cost_ms);
    assert_eq!(f.waits[0].to_frame, o.frame(greeting));
    o.has_no(ServerThinkTime);
    // The words name ident, and the fix turns it off.
    let Detail::ConnectBack {
        port,
        accepted,
        greeting: on_greeting,
        ..
    } = &f.detail
    else {
        panic!("{:?}", f.detail);
    };
    assert_eq!((*port, *accepted, *on_greeting), (113, false, true));
}
