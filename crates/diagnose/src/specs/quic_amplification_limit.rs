//! `quic_amplification_limit`, as detect/quic_amplification_limit.rs
//! states it: no token and no Retry; the server's datagrams from its
//! first Initial to the client's next datagram are at most three times
//! the client's bytes and its next datagram would go over; after the
//! client's datagram the server goes on with Handshake packets before
//! the client's Finished. The wait runs from the server's last datagram
//! before the pause to its first after, released by the client's.

use super::assert_ms;
use super::quic_wire::QuicWire;
use super::{Path, C};
use crate::model::{Detail, FindingKind};

/// The client's 1200-byte Initial, a server flight of `sizes`, the
/// client's ACK after the first of them, and the rest of the flight
/// after the ACK reaches the server.
fn flight(
    path: Path,
    token: bool,
    before: &[usize],
    after: &[usize],
) -> (super::quic_wire::QuicOutcome, Vec<super::quic_wire::Id>) {
    let mut w = QuicWire::new(path);
    let ow = path.one_way_ms();
    let mut ids = vec![if token {
        w.initial_with_token(0.0)
    } else {
        w.initial(0.0)
    }];
    for (k, size) in before.iter().enumerate() {
        ids.push(if k == 0 {
            w.server_initial(ow + 1.0, *size)
        } else {
            w.server_handshake(ow + 1.0, *size)
        });
    }
    ids.push(w.client_ack(2.0 * ow + 1.2, 1200));
    for size in after {
        ids.push(w.server_handshake(3.0 * ow + 1.5, *size));
    }
    ids.push(w.client_finished(4.0 * ow + 2.0));
    w.short(C, 4.0 * ow + 2.0, 60);
    (w.run(), ids)
}

#[test]
fn a_flight_stopped_at_three_times_the_clients_bytes_waits_for_its_ack() {
    for path in Path::all(40.0) {
        let (o, ids) = flight(path, false, &[1200, 1200, 1200], &[1200, 500]);
        let f = o.the(FindingKind::QuicAmplificationLimit);
        // The server's first Initial, its last datagram before the pause,
        // the client's ACK, its first after.
        assert_eq!(f.frames, o.frames(&[ids[1], ids[3], ids[4], ids[5]]));
        assert_eq!(f.waits.len(), 1);
        assert_eq!(f.waits[0].release_frame, Some(o.frame(ids[4])));
        // Both ends the server's: a round trip and the client's turn.
        assert_ms(f.cost_ms, 40.5, 0.01, "the pause");
        assert_eq!(
            f.detail,
            Detail::QuicAmplificationLimit {
                client_bytes: 1200,
                server_bytes: 3600,
                rest_bytes: 1700,
            }
        );
    }
}

#[test]
fn a_flight_that_paused_under_the_limit_did_not_meet_it() {
    // 2400 bytes and a 1200-byte datagram would have fit in 3600.
    let (o, _) = flight(Path::at_client(40.0), false, &[1200, 1200], &[1200, 500]);
    o.has_no(FindingKind::QuicAmplificationLimit);
}

#[test]
fn a_proven_address_has_no_limit() {
    let (o, _) = flight(
        Path::at_client(40.0),
        true,
        &[1200, 1200, 1200],
        &[1200, 500],
    );
    o.has_no(FindingKind::QuicAmplificationLimit);
}

#[test]
fn a_flight_that_was_whole_before_the_ack_waited_for_nothing() {
    // What follows the client's ACK is 1-RTT data, not the flight's rest.
    let mut w = QuicWire::new(Path::at_client(40.0));
    w.initial(0.0);
    w.server_initial(21.0, 1200);
    w.server_handshake(21.0, 1200);
    w.server_handshake(21.0, 1200);
    w.client_finished(41.5);
    w.short(super::S, 62.0, 1200);
    let o = w.run();
    o.has_no(FindingKind::QuicAmplificationLimit);
}
