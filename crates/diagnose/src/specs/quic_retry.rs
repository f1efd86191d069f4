//! `quic_retry`, as detect/quic_retry.rs states it: a server datagram with
//! a Retry packet after a client Initial, then a client Initial carrying
//! a token; the wait runs from the Initial the Retry answered to the
//! Initial with the token, released by the Retry.

use super::assert_ms;
use super::quic_wire::QuicWire;
use super::Path;
use crate::model::{FindingKind, Phase};

#[test]
fn a_retry_costs_the_round_trip_to_the_initial_with_its_token() {
    for path in Path::all(40.0) {
        let mut w = QuicWire::new(path);
        let ow = path.one_way_ms();
        let first = w.initial(0.0);
        let retry = w.retry(ow + 0.5);
        let again = w.initial_with_token(2.0 * ow + 0.6);
        w.server_initial(3.0 * ow + 1.0, 1200);
        w.server_handshake(3.0 * ow + 1.0, 900);
        w.client_finished(4.0 * ow + 1.5);
        let o = w.run();
        let f = o.the(FindingKind::QuicRetry);
        assert_eq!(f.phase, Some(Phase::QuicHandshake));
        assert_eq!(f.frames, o.frames(&[first, retry, again]));
        assert_eq!(f.waits.len(), 1);
        let wait = &f.waits[0];
        let expected = o.wait(first, again, Some(retry), 40.6);
        assert_eq!(
            (wait.from_frame, wait.to_frame, wait.release_frame),
            (
                expected.from_frame,
                expected.to_frame,
                expected.release_frame
            )
        );
        // Both ends are the client's: the same gap at every vantage.
        assert_ms(f.cost_ms, 40.6, 0.01, "the round trip to the token");
        assert!(o.report.retry);
        // The handshake took two round trips; the Retry explains the one
        // beyond the ideal.
        assert_ms(o.report.handshake_ms.unwrap(), 80.0 + 1.5, 0.6, "handshake");
        assert_ms(
            f.attributed_ms,
            o.report.excess_ms.min(f.cost_ms),
            0.01,
            "attributed",
        );
        assert!(o.report.unexplained_ms < 2.0, "{}", o.report.unexplained_ms);
    }
}

#[test]
fn a_retry_the_client_never_followed_costs_nothing_the_capture_shows() {
    let mut w = QuicWire::new(Path::at_client(40.0));
    w.initial(0.0);
    w.retry(20.5);
    let o = w.run();
    o.has_no(FindingKind::QuicRetry);
    assert!(o.report.retry);
}

#[test]
fn a_token_from_an_earlier_connection_is_no_retry() {
    // NEW_TOKEN: the client's first Initial carries a token, no Retry.
    let mut w = QuicWire::new(Path::at_client(40.0));
    w.initial_with_token(0.0);
    w.server_initial(21.0, 1200);
    w.server_handshake(21.0, 900);
    w.client_finished(41.5);
    let o = w.run();
    o.has_no(FindingKind::QuicRetry);
    assert!(o.report.findings.is_empty(), "{:#?}", o.report.findings);
}

#[test]
fn a_client_idle_after_its_finished_ends_its_handshake_there() {
    // A DNS-over-QUIC client: its Finished, then its first 1-RTT packet
    // (its query) half a second later. The handshake is two round trips
    // (the Retry's and its own), not the wait for the query.
    let mut w = QuicWire::new(Path::at_client(40.0));
    w.initial(0.0);
    w.retry(20.5);
    w.initial_with_token(40.6);
    w.server_initial(61.0, 1200);
    w.server_handshake(61.0, 900);
    let finished = w.client_ack(81.5, 100);
    w.short(super::C, 600.0, 60);
    let o = w.run();
    assert_eq!(o.report.ledger[0].end_frame, o.frame(finished));
    assert!(o.report.unexplained_ms < 2.0, "{}", o.report.unexplained_ms);
}
