//! `quic_amplification_limit` — the server's first flight stopped at
//! three times the bytes the client had sent, until the client's next
//! datagram (RFC 9000 8.1: before a client's address is validated, a
//! server sends it at most three times what it received).
//!
//! Signature: the client's Initial carried no token (a Retry's or a
//! NEW_TOKEN's would have validated the address) and drew no Retry; the
//! server's datagrams from its first Initial on add up to no more than
//! three times the client's bytes before that Initial, and the next one
//! would have gone over; the server then sent nothing until a client
//! datagram came (its ACK: the client's bytes raise the limit), and
//! after it went on with Handshake packets, before the client's Finished
//! (the rest of the same flight, which a certificate chain too big for
//! the limit left behind). The flight waited a round trip for the
//! client's ACK. The wait runs from the server's last datagram before the
//! pause to its first after, released by the client's datagram.

use crate::model::{Detail, Finding, FindingKind, Wait};
use crate::quic_diagnosis::{ms, QuicView};
use rttdoc_wire::quic::PacketType;

/// RFC 9000 8.1's factor.
const LIMIT: u64 = 3;

pub fn detect(v: &QuicView<'_>, out: &mut Vec<Finding>) {
    let d = v.d;
    let Some(s) = v.server_initial else { return };
    if d[..s]
        .iter()
        .any(|x| !x.from_client && x.types.has(PacketType::Retry))
    {
        return;
    }
    // The client's bytes of this attempt (after any Version Negotiation).
    let start = d[..s]
        .iter()
        .rposition(|x| !x.from_client && x.types.has(PacketType::VersionNegotiation))
        .map_or(0, |i| i + 1);
    let client: Vec<_> = d[start..s].iter().filter(|x| x.from_client).collect();
    if client.is_empty() || client.iter().any(|x| x.token) {
        return;
    }
    let client_bytes: u64 = client.iter().map(|x| u64::from(x.bytes)).sum();
    // The server's datagrams up to the client's next one.
    let Some(c) = d[s..].iter().position(|x| x.from_client).map(|i| s + i) else {
        return;
    };
    let server_bytes: u64 = d[s..c].iter().map(|x| u64::from(x.bytes)).sum();
    let Some(next) = d[c..].iter().position(|x| !x.from_client).map(|i| c + i) else {
        return;
    };
    let limit = LIMIT * client_bytes;
    let capped = server_bytes <= limit && server_bytes + u64::from(d[next].bytes) > limit;
    let rest_of_flight =
        d[next].types.has(PacketType::Handshake) && v.client_done.is_some_and(|done| done > next);
    if !capped || !rest_of_flight {
        return;
    }
    let done = v.client_done.unwrap_or(d.len());
    let rest_bytes: u64 = d[next..done]
        .iter()
        .filter(|x| !x.from_client)
        .map(|x| u64::from(x.bytes))
        .sum();
    let wait = Wait {
        from_frame: d[c - 1].frame,
        to_frame: d[next].frame,
        release_frame: Some(d[c].frame),
        ms: ms(d[next].ts_ns - d[c - 1].ts_ns),
    };
    let mut f = v.finding(
        FindingKind::QuicAmplificationLimit,
        vec![d[s].frame, d[c - 1].frame, d[c].frame, d[next].frame],
        vec![wait],
    );
    f.detail = Detail::QuicAmplificationLimit {
        client_bytes,
        server_bytes,
        rest_bytes,
    };
    out.push(f);
}
