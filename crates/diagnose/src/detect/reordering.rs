//! `reordering` — the path delivered a sender's segment after segments it
//! sent after it.
//!
//! Signature: a segment that fills a hole below the highest byte seen and,
//! by its sender's clocks, left before the segment that jumped the hole
//! (`SegmentRecord::overtaken`: its IPv4 identification where the sender
//! numbers its datagrams, else its TCP timestamp; rttdoc-analyze's
//! send_order.rs): the original, held on the path while the segments sent
//! after it passed (per-packet load balancing over links of unequal delay,
//! a bonded or multipath link, a wireless link's retries). Nothing was
//! lost; the sender's re-sends of bytes whose originals came late were
//! needless (its peer's duplicate ACKs or its timer took the hole for a
//! loss), and are counted, but not in a run of re-sends that re-sent
//! bytes that came in order too (a timer's go-back, another loss's
//! repair: not the reordering's doing). A hold shorter than [`MIN_HOLD_NS`] with no
//! needless re-send is the ordinary spread of a busy path (or of a
//! multi-queue capture) and is not reported.
//! Waits: the receiver can use nothing past a hole until its segment
//! comes, so a phase of the ledger that ended on an overtaken segment (an
//! answer's first byte, the end of a response) waited for it; not the
//! first byte of an answer that began in a hole of the capture (its first
//! byte came before, only the capture lacked it). Had it not
//! been held, it would have arrived no later than the segment that jumped
//! its hole (sent after it on the same path): an answer's first byte
//! waited from that segment's arrival; a phase that needed the segments
//! before it too waited from the last of them that came on time (not
//! overtaken itself: segments held together are one hold), as did the answer to a
//! request the overtaken segment completed (at a vantage past the hold:
//! the server's), from the request's segment before it. So did a handshake (TLS,
//! a proxy's, a STARTTLS dialog) whose flight the segment was part of,
//! when the receiver's next message belongs to it: TLS reads a flight in
//! order, so that message could not leave before the flight was whole.
//! No releasing packet: the path, not the peer, held it. A wait is
//! counted only from [`MIN_HOLD_NS`].
//! Cost: those waits, in the phase each ended (a response's end is a
//! transfer stall). Reordering no phase waited on is reported at 0 ms
//! with its count and the needless re-sends.
//! Fix: hash per flow, not per packet (ECMP, LAG, bonding balance-rr), or
//! keep a flow on one link of a multipath VPN; RACK (tcp_recovery) makes
//! the hosts tolerate what remains.

use super::{Facts, FRAMES_CITED};
use crate::model::{Detail, Direction, Finding, FindingKind, Phase, Wait};
use rttdoc_analyze::{seq, SegmentRecord};

/// The shortest hold counted or reported without a needless re-send: a
/// millisecond is more than a capture's own reordering of packets that
/// arrived together (its queues' spread) and less than any wait a person
/// notices.
pub const MIN_HOLD_NS: i64 = 1_000_000;

pub fn detect(f: &Facts<'_>, out: &mut Vec<Finding>) {
    for sender in [Direction::ClientToServer, Direction::ServerToClient] {
        // An overtaken segment is counted out-of-order: none, none here.
        if f.sent_by(sender).out_of_order == 0 {
            continue;
        }
        detect_from(f, sender, out);
    }
}

/// The sender's re-sends of bytes whose originals came late (`spans`),
/// where the reordering drew them: not those in a run of re-sends (the
/// sender's data segments between two carrying new data) that re-sent
/// bytes that came in order too. Such a run is a timer's go-back or
/// another loss's repair, which re-sends what is outstanding whatever
/// came late (nDPI's weibo.pcap 6: a server's run of nine re-sends 60-100
/// ms after their originals, seven of them of bytes never overtaken, its
/// client's ACKs late on the uplink; judged twice).
fn needless_resends(f: &Facts<'_>, sender: Direction, spans: &[(u32, u32)]) -> u32 {
    let overtaken = |r: &SegmentRecord| {
        spans
            .iter()
            .any(|&(a, b)| seq::le(a, r.seq) && seq::lt(r.seq, b))
    };
    let data: Vec<&SegmentRecord> = f
        .timeline
        .iter()
        .filter(|r| r.dir == sender && r.len > 0)
        .collect();
    data.split(|r| !r.retransmission)
        .filter(|run| run.iter().all(|r| overtaken(r)))
        .map(|run| run.len() as u32)
        .sum()
}

fn detect_from(f: &Facts<'_>, sender: Direction, out: &mut Vec<Finding>) {
    let receiver = sender.reverse();
    let mut segments = 0u32;
    let mut longest_ns = 0i64;
    let mut pairs: Vec<(u64, u64)> = Vec::new();
    let mut spans: Vec<(u32, u32)> = Vec::new();
    let mut waits: Vec<(Phase, (u64, u64), Wait)> = Vec::new();
    // Where each phase's last wait ended.
    let mut waited_to: Vec<(Phase, &SegmentRecord)> = Vec::new();
    for (i, s) in f.timeline.iter().enumerate() {
        if s.dir != sender || !s.overtaken {
            continue;
        }
        let before = &f.timeline[..i];
        let data = |r: &&SegmentRecord| r.dir == sender && r.len > 0;
        // The first segment captured beyond its bytes: the jumper.
        let Some(jumper) = before.iter().filter(data).find(|r| seq::lt(s.seq, r.seq)) else {
            continue;
        };
        let held = s.ts_ns - jumper.ts_ns;
        if held <= 0 {
            continue;
        }
        segments += 1;
        longest_ns = longest_ns.max(held);
        pairs.push((jumper.frame, s.frame));
        spans.push((s.seq, s.end));
        // The sender's last segment before it that came on time: what a
        // phase needing it too had by then (not another segment held
        // with it: nDPI's capture.pcap 3, a response's last two segments
        // both held 40 ms, the last captured 0.5 ms behind the other;
        // judged partly right at "no phase waited").
        let last = before
            .iter()
            .rev()
            .find(|r| data(r) && !r.overtaken)
            .unwrap_or(jumper);
        for (phase, from) in phases_ended(f, s, receiver) {
            let from = if from { jumper } else { last };
            // A phase's waits do not overlap: one that began before the
            // phase's previous wait ended runs from that end (nDPI's
            // google_ssl.pcap 0, a flight's two held segments, the later
            // released a second after the earlier).
            let from = match waited_to.iter().find(|(p, _)| *p == phase) {
                Some(&(_, end)) if end.ts_ns > from.ts_ns => end,
                _ => from,
            };
            let ns = s.ts_ns - from.ts_ns;
            if ns >= MIN_HOLD_NS {
                let wait = Wait {
                    from_frame: from.frame,
                    to_frame: s.frame,
                    release_frame: None,
                    ms: ns as f64 / 1e6,
                };
                waits.push((phase, (jumper.frame, s.frame), wait));
                match waited_to.iter_mut().find(|(p, _)| *p == phase) {
                    Some(entry) => entry.1 = s,
                    None => waited_to.push((phase, s)),
                }
            }
        }
    }
    let needless_resends = needless_resends(f, sender, &spans);
    if segments == 0 || (longest_ns < MIN_HOLD_NS && needless_resends == 0) {
        return;
    }
    let detail = Detail::Reordering {
        sender,
        segments,
        longest_ms: longest_ns as f64 / 1e6,
        needless_resends,
    };
    let finding = |phase: Phase, cited: &[(u64, u64)], waits: Vec<Wait>| {
        let mut x = f.finding(FindingKind::Reordering, Some(phase));
        x.frames = cited
            .iter()
            .take(FRAMES_CITED / 2)
            .flat_map(|&(a, b)| [a, b])
            .collect();
        x.display_filter = f.filter_frames(&x.frames);
        x.cost_ms = waits.iter().map(|w| w.ms).sum();
        x.confidence = 0.9;
        x.detail = detail.clone();
        x.waits = waits;
        x
    };
    if waits.is_empty() {
        out.push(finding(Phase::Transfer, &pairs, Vec::new()));
        return;
    }
    for phase in Phase::ALL {
        let (cited, phase_waits): (Vec<(u64, u64)>, Vec<Wait>) = waits
            .iter()
            .filter(|(p, _, _)| *p == phase)
            .map(|(_, pair, w)| (*pair, *w))
            .unzip();
        if !phase_waits.is_empty() {
            out.push(finding(phase, &cited, phase_waits));
        }
    }
}

/// The ledger's phases that ended waiting on the overtaken segment `s`
/// (or on a re-send that filled a hole: retransmission.rs),
/// each with whether it waited from the jumper's arrival (an answer's
/// first byte, which needed nothing before it) rather than from the
/// sender's last segment before `s`.
pub(super) fn phases_ended(
    f: &Facts<'_>,
    s: &SegmentRecord,
    receiver: Direction,
) -> Vec<(Phase, bool)> {
    // An answer that began in a hole of the capture had its first byte
    // before this segment: only the capture lacked it.
    let began_in_hole = f
        .exchanges
        .iter()
        .any(|x| x.response_in_hole && x.response_first.is_some_and(|r| r.frame == s.frame));
    let mut phases: Vec<(Phase, bool)> = f
        .report
        .ledger
        .iter()
        .filter(|row| row.end_frame == s.frame)
        .filter(|row| row.phase != Phase::FirstByte || !began_in_hole)
        .map(|row| (row.phase, row.phase == Phase::FirstByte))
        .collect();
    // The phases below wait from the sender's last segment, each once.
    let mut add = |phase: Phase| {
        if phases.iter().all(|(p, _)| *p != phase) {
            phases.push((phase, false));
        }
    };
    // A request the overtaken segment completed: the server could answer
    // only once all of it was in (its last segment to arrive is the
    // exchange's `request_last`), so the answer's wait ran until then.
    let completed = s.dir == Direction::ClientToServer
        && f.report
            .ledger
            .iter()
            .filter(|row| row.phase == Phase::FirstByte)
            .filter_map(|row| f.exchanges.get((row.exchange? as usize).checked_sub(1)?))
            .any(|x| {
                x.request_last.frame == s.frame
                    && x.response_first.is_some_and(|r| r.frame > s.frame)
            });
    if completed {
        add(Phase::FirstByte);
    }
    // A handshake's flight: the receiver's next message, inside the
    // handshake, needed all of it (TLS reads a flight in order), so it
    // could not have left before the flight was whole.
    let next = f
        .between(s.frame + 1, u64::MAX)
        .iter()
        .find(|r| r.dir == receiver && (r.len > 0 || r.flags.fin()));
    let handshake = next.and_then(|next| {
        f.report.ledger.iter().find(|row| {
            matches!(
                row.phase,
                Phase::TlsHandshake | Phase::ProxyConnect | Phase::Starttls
            ) && row.start_frame <= s.frame
                && next.frame <= row.end_frame
        })
    });
    if let Some(row) = handshake {
        add(row.phase);
    }
    phases
}
