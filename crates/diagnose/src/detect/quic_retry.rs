//! `quic_retry` — the server answered the client's Initial with a Retry
//! (RFC 9000 8.1.2): before it does any handshake work it has the client
//! prove its address by sending its Initial again with the Retry's token.
//!
//! Signature: a server datagram with a Retry packet after a client
//! Initial, then a client Initial carrying a token. The handshake starts
//! only with that second Initial: one round trip (and the server's
//! token check) more than the ideal. The wait runs from the Initial the
//! Retry answered (the client's last before it) to the client's Initial
//! with the token, released by the Retry. Servers retry to resist
//! spoofed floods; doing it for every client costs each of them the
//! round trip, where a NEW_TOKEN from an earlier connection, or Retry
//! only under load, would not.

use crate::model::{Detail, Finding, FindingKind, Wait};
use crate::quic_diagnosis::{ms, QuicView};
use rttdoc_wire::quic::PacketType;

pub fn detect(v: &QuicView<'_>, out: &mut Vec<Finding>) {
    let d = v.d;
    let Some(retry) = d
        .iter()
        .position(|x| !x.from_client && x.types.has(PacketType::Retry))
    else {
        return;
    };
    let Some(asked) = d[..retry]
        .iter()
        .rposition(|x| x.from_client && x.types.has(PacketType::Initial))
    else {
        return;
    };
    let Some(again) = d[retry + 1..]
        .iter()
        .position(|x| x.from_client && x.types.has(PacketType::Initial) && x.token)
        .map(|i| retry + 1 + i)
    else {
        return;
    };
    let wait = Wait {
        from_frame: d[asked].frame,
        to_frame: d[again].frame,
        release_frame: Some(d[retry].frame),
        ms: ms(d[again].ts_ns - d[asked].ts_ns),
    };
    let mut x = v.finding(
        FindingKind::QuicRetry,
        vec![d[asked].frame, d[retry].frame, d[again].frame],
        vec![wait],
    );
    x.detail = Detail::QuicRetry {
        token_len: v.facts.token_len,
    };
    out.push(x);
}
