//! `quic_initial_lost` — the client's Initial went unanswered, and the
//! client sent it again when its probe timeout fired (RFC 9002 6.2.4).
//!
//! Signature: two client datagrams with Initial packets, at least
//! [`MIN_PTO_NS`] apart, with nothing of the server's between them and
//! nothing else of the client's (no Handshake packet: it had nothing
//! from the server to answer), in the same attempt (no Retry or Version
//! Negotiation before the second). A client sends its ClientHello once;
//! it sends it again only when its timer says the first, or the server's
//! answer, was lost. Before any round trip is measured that timer is long
//! (RFC 9002's first PTO is about 1 s; Chromium and quic-go start from a
//! 100 ms RTT, about 300 ms): the whole wait is the loss's cost. A
//! ClientHello too big for one datagram is sent as two at once, far
//! under the floor.
//!
//! Each wait runs from an unanswered Initial to the next one, released by
//! nothing (a timer). At the server's side of the path the lost Initial
//! is not in the capture and nothing is claimed; at the client's, a lost
//! answer looks the same as a lost Initial, and the words say either.

use crate::model::{Detail, Finding, FindingKind, Wait};
use crate::quic_diagnosis::{ms, QuicView};
use rttdoc_analyze::quic::QuicDatagram;
use rttdoc_wire::quic::PacketType;

/// The least gap taken for a probe timeout: under it, two Initials are
/// one ClientHello in two datagrams (or a client pacing its first
/// flight).
pub const MIN_PTO_NS: i64 = 100_000_000;

pub fn detect(v: &QuicView<'_>, out: &mut Vec<Finding>) {
    let d = v.d;
    let mut waits = Vec::new();
    let mut frames = Vec::new();
    let mut first_timeout_ms = 0.0;
    // The client's last Initial with nothing after it yet, in the attempt.
    let mut pending: Option<usize> = None;
    let mut answered = None;
    for (i, x) in d.iter().enumerate() {
        if !x.from_client {
            if x.types.has(PacketType::Retry) || x.types.has(PacketType::VersionNegotiation) {
                pending = None;
                continue;
            }
            answered = Some(i);
            break;
        }
        let only_initial = x.types.has(PacketType::Initial) && !x.types.has(PacketType::Handshake);
        if !only_initial {
            pending = None;
            continue;
        }
        if let Some(p) = pending {
            let gap = x.ts_ns - d[p].ts_ns;
            if gap >= MIN_PTO_NS {
                if waits.is_empty() {
                    first_timeout_ms = ms(gap);
                    frames.push(d[p].frame);
                }
                frames.push(x.frame);
                waits.push(Wait {
                    from_frame: d[p].frame,
                    to_frame: x.frame,
                    release_frame: None,
                    ms: ms(gap),
                });
            }
        }
        pending = Some(i);
    }
    // Never answered, and the client opened TCP to the same place
    // meanwhile (a browser whose QUIC did not get through): its wait for
    // QUIC ended at that SYN. The resends after it were no one's wait.
    let mut tcp_instead = None;
    if let (None, Some(t)) = (answered, v.facts.tcp_instead) {
        let before = |frame: u64| d.iter().any(|x| x.frame == frame && x.ts_ns <= t.syn.ts_ns);
        waits.retain(|w| before(w.to_frame));
        frames.retain(|f| before(*f));
        let last = d
            .iter()
            .rfind(|x| x.from_client && x.ts_ns <= t.syn.ts_ns && x.types.has(PacketType::Initial));
        if let Some(last) = last.filter(|x| x.frame < t.syn.frame) {
            if frames.is_empty() {
                frames.push(last.frame);
            }
            frames.push(t.syn.frame);
            waits.push(Wait {
                from_frame: last.frame,
                to_frame: t.syn.frame,
                release_frame: None,
                ms: ms(t.syn.ts_ns - last.ts_ns),
            });
            tcp_instead = Some(t.stream);
        }
    }
    // Never answered, in a capture that holds nothing of any server's:
    // a capture of one direction (or of Initials only) cannot tell a
    // path that dropped them from answers it did not keep.
    if waits.is_empty() || (answered.is_none() && !v.facts.two_way_capture) {
        return;
    }
    // A probe carries one or two datagrams (RFC 9002 6.2.4): a
    // ClientHello of more goes on only when the server's ACK of the
    // probe opens the way. Then the server's first answer is Initial
    // only (its ACK: without the whole ClientHello it has no flight to
    // send), and the client's next datagram is Initial only, before any
    // Handshake packet of the server's: the rest of the ClientHello,
    // which waited a round trip more.
    let mut rest_after_ack_ms = None;
    if let (Some(a), Some(p)) = (answered, pending) {
        let ack_only = |x: &QuicDatagram| {
            x.types.has(PacketType::Initial) && !x.types.has(PacketType::Handshake)
        };
        let rest = d[a + 1..]
            .iter()
            .position(|x| x.from_client)
            .map(|k| a + 1 + k);
        if let Some(n) = rest {
            let flight_before = d[a..n].iter().any(|x| x.types.has(PacketType::Handshake));
            if ack_only(&d[a]) && ack_only(&d[n]) && !flight_before {
                frames.push(d[n].frame);
                rest_after_ack_ms = Some(ms(d[n].ts_ns - d[p].ts_ns));
                waits.push(Wait {
                    from_frame: d[p].frame,
                    to_frame: d[n].frame,
                    release_frame: Some(d[a].frame),
                    ms: ms(d[n].ts_ns - d[p].ts_ns),
                });
            }
        }
    }
    // Resends (timer waits ending at an Initial): not the wait that ended
    // at a TCP SYN.
    let unanswered = waits.iter().filter(|w| w.release_frame.is_none()).count() as u32
        - u32::from(tcp_instead.is_some());
    let mut f = v.finding(FindingKind::QuicInitialLost, frames, waits);
    f.detail = Detail::QuicInitialLost {
        unanswered,
        answered: answered.is_some(),
        first_timeout_ms,
        rest_after_ack_ms,
        tcp_instead,
    };
    out.push(f);
}
