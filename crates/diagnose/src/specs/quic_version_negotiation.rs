//! `quic_version_negotiation`, as detect/quic_version_negotiation.rs
//! states it: a server datagram with a Version Negotiation packet after
//! the client's first Initial, then a client Initial in another version;
//! the wait runs from the first Initial to that one, released by the
//! Version Negotiation.

use rttdoc_wire::quic::{VERSION_1, VERSION_2};

use super::assert_ms;
use super::quic_wire::QuicWire;
use super::Path;
use crate::model::{Detail, FindingKind};

#[test]
fn a_version_the_server_does_not_speak_costs_a_round_trip() {
    for path in Path::all(30.0) {
        let mut w = QuicWire::new(path);
        let ow = path.one_way_ms();
        let first = w.initial_in(0.0, VERSION_2);
        let vn = w.version_negotiation(ow + 0.2, &[VERSION_1, 0x1a2a_3a4a]);
        let again = w.initial_in(2.0 * ow + 0.3, VERSION_1);
        w.server_initial(3.0 * ow + 1.0, 1200);
        w.server_handshake(3.0 * ow + 1.0, 900);
        w.client_finished(4.0 * ow + 1.5);
        let o = w.run();
        let f = o.the(FindingKind::QuicVersionNegotiation);
        assert_eq!(f.frames, o.frames(&[first, vn, again]));
        assert_eq!(f.waits[0].release_frame, Some(o.frame(vn)));
        assert_ms(f.cost_ms, 30.3, 0.01, "the first Initial to the next");
        assert_eq!(
            f.detail,
            Detail::QuicVersionNegotiation {
                offered: VERSION_2,
                supported: vec![VERSION_1, 0x1a2a_3a4a],
                chosen: Some(VERSION_1),
            }
        );
        assert_eq!(o.report.version.0, VERSION_1);
        assert!(o.report.version_negotiation);
    }
}

#[test]
fn a_version_negotiation_the_client_ignored_costs_nothing() {
    // A client that keeps its version (a forged or late Version
    // Negotiation, RFC 9000 6.2) and is answered in it.
    let mut w = QuicWire::new(Path::at_client(30.0));
    w.initial(0.0);
    w.version_negotiation(15.2, &[VERSION_2]);
    w.initial(200.0);
    w.server_initial(216.0, 1200);
    w.client_finished(232.0);
    let o = w.run();
    o.has_no(FindingKind::QuicVersionNegotiation);
}
