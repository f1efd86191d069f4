//! The hosts' short turnarounds (detect/host_turnarounds.rs): no finding,
//! the part of `unexplained_ms` that was each host's own work.
//!
//! > the turns are timed as those two detectors time them [...] and the
//! > ones below the threshold that no finding claims [...] are summed
//! > per phase and per host [...] The ledger takes them from what no
//! > finding accounts for, phase by phase, never more than that.

use super::tls::*;
use super::*;
use FindingKind::{ClientThinkTime, ServerThinkTime};

/// A 40 ms path: the think-time detectors' threshold is 20 ms.
const RTT: f64 = 40.0;

/// A TLS 1.3 handshake whose server takes `server` ms on the ClientHello
/// and whose client takes `client` ms on the server's flight.
fn handshake(path: Path, server: f64, client: f64) -> Outcome {
    let mut w = Wire::new(path);
    w.handshake(0.0);
    tls13_handshake_with(&mut w, RTT + 0.1, server, client, Offer::tls13());
    w.run()
}

#[test]
fn turns_under_the_threshold_are_the_hosts_turnarounds_at_every_vantage() {
    for path in Path::all(RTT) {
        let o = handshake(path, 8.0, 3.0);
        o.has_no(ServerThinkTime);
        o.has_no(ClientThinkTime);
        let r = &o.report;
        // The flight's 0.04 ms spread rides in the client's time.
        assert_ms(r.server_turnaround_ms, 8.0, 0.01, "the server's");
        assert_ms(r.client_turnaround_ms, 3.0, 0.05, "the client's");
        // All of the handshake's excess, none of it a cause's.
        assert_ms(
            r.server_turnaround_ms + r.client_turnaround_ms,
            r.unexplained_ms,
            0.05,
            "the unexplained excess",
        );
    }
}

#[test]
fn a_turn_at_the_threshold_is_a_cause_and_no_turnaround() {
    for path in Path::all(RTT) {
        let o = handshake(path, 25.0, 3.0);
        let think = o.the(ServerThinkTime);
        assert_ms(think.attributed_ms, 25.0, 0.01, "the cause's share");
        assert_eq!(o.report.server_turnaround_ms, 0.0);
        assert_ms(o.report.client_turnaround_ms, 3.0, 0.05, "the client's");
    }
}

#[test]
fn a_servers_short_turn_on_a_request_is_its_turnaround_in_the_first_byte() {
    // 4 ms on the request: over the ledger's 2 ms floor, under the
    // threshold; 1 ms: under the floor, no excess to take it from.
    for (think, turnaround) in [(4.0, 4.0), (1.0, 0.0)] {
        for path in Path::all(RTT) {
            let mut w = Wire::new(path);
            w.handshake(0.0);
            let req = w.send(C, 100.0, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n");
            let resp = w.send(S, w.arrival(req) + think, b"HTTP/1.1 200 OK\r\n\r\n");
            w.ack(C, w.arrival(resp));
            let o = w.run();
            o.has_no(ServerThinkTime);
            assert_ms(
                o.report.server_turnaround_ms,
                turnaround,
                0.01,
                "the server's",
            );
            assert_eq!(o.report.client_turnaround_ms, 0.0);
            assert!(o.report.server_turnaround_ms <= o.report.unexplained_ms + 1e-9);
        }
    }
}

#[test]
fn a_turn_the_capture_did_not_show_whole_is_left_unexplained() {
    // The capture dropped the flight's last segment (the client had it):
    // the client's Finished acknowledges bytes the capture never showed,
    // so when it had them all is unknown, and its turn is nobody's.
    let mut w = Wire::new(Path::at_server(RTT));
    w.handshake(0.0);
    let hs = tls13_handshake_with(&mut w, RTT + 0.1, 3.0, 3.0, Offer::tls13());
    let last = *hs.flight.last().unwrap();
    let o = w.run_missing(&[last]);
    assert_ms(
        o.report.server_turnaround_ms,
        3.0,
        0.01,
        "the server's, on the ClientHello",
    );
    assert_eq!(o.report.client_turnaround_ms, 0.0);
}
