//! `quic_version_negotiation` — the server did not speak the version the
//! client began in, and said so with a Version Negotiation packet (RFC
//! 9000 6): the client began again, in a version from the server's list.
//!
//! Signature: a server datagram with a Version Negotiation packet, after
//! a client Initial, and a client Initial after it in another version. A
//! server cannot answer an Initial it cannot read, so the first attempt
//! bought nothing but the list: one round trip. The wait runs from the
//! client's first Initial to its first Initial after the Version
//! Negotiation, which released it. A Version Negotiation the client did
//! not act on (a late copy, a client that gave up) costs nothing that
//! the capture shows: no finding.

use crate::model::{Detail, Finding, FindingKind, Wait};
use crate::quic_diagnosis::{ms, QuicView};
use rttdoc_wire::quic::PacketType;

pub fn detect(v: &QuicView<'_>, out: &mut Vec<Finding>) {
    let d = v.d;
    let Some(vn) = d
        .iter()
        .position(|x| !x.from_client && x.types.has(PacketType::VersionNegotiation))
    else {
        return;
    };
    let Some(first) = d[..vn]
        .iter()
        .position(|x| x.from_client && x.types.has(PacketType::Initial))
    else {
        return;
    };
    let offered = d[first].version;
    let Some(again) = d[vn + 1..]
        .iter()
        .position(|x| x.from_client && x.types.has(PacketType::Initial) && x.version != offered)
        .map(|i| vn + 1 + i)
    else {
        return;
    };
    let wait = Wait {
        from_frame: d[first].frame,
        to_frame: d[again].frame,
        release_frame: Some(d[vn].frame),
        ms: ms(d[again].ts_ns - d[first].ts_ns),
    };
    let mut x = v.finding(
        FindingKind::QuicVersionNegotiation,
        vec![d[first].frame, d[vn].frame, d[again].frame],
        vec![wait],
    );
    x.detail = Detail::QuicVersionNegotiation {
        offered,
        supported: v.facts.server_versions.clone(),
        chosen: Some(d[again].version),
    };
    out.push(x);
}
