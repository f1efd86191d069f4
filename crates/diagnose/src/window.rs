//! A long connection's later windows, folded into its report.
//!
//! rttdoc-analyze hands a connection's segments past its timeline on a
//! window at a time (its window.rs); each window is diagnosed like a
//! connection of its own (the ledger's exchange rows, the detectors of
//! mechanisms that recur over a connection's life: [`crate::detect::
//! run_window`]), and what it found is folded here into [`LaterWindows`]:
//!
//! - its ledger rows summed per phase: after the connection's itemized
//!   rows, one row per phase says what the later exchanges took against
//!   their ideal, so the connection's excess is its whole life's;
//! - its findings joined to the earlier ones of the same kind and side
//!   (the same Nagle hold all along is one finding, its holds, waits and
//!   cost the sum); a kind whose finding is about one exchange (an
//!   `Expect: 100-continue` wait, a restart after idle) stays one finding
//!   each, up to [`SEPARATE_KEPT`].
//!
//! - the hosts' short turnarounds it left unexplained (host_turnarounds.rs),
//!   summed per host.
//!
//! When the connection ends, [`join`] adds the rows and findings to its
//! report before the cost is attributed, so the numbers on one screen add
//! up: the ledger's excess is what the findings account for plus what is
//! unexplained (of which the hosts' short turnarounds), over the whole
//! connection.

use crate::detect::{frames_filter, waits_phase, FRAMES_CITED, RESENDS_CITED};
use crate::model::FindingKind;
use crate::model::{
    ConnectionReport, Detail, Finding, LaterWindows, LedgerRow, Phase, MAX_WAITS_LISTED,
    TIMELINE_CAP,
};
use rttdoc_analyze::WindowFacts;

/// Findings about one exchange each kept from the later windows, at most.
const SEPARATE_KEPT: usize = 64;

/// Folds one window's report into what the windows before it found;
/// `nagle_off` says, per sender, whether it, the timeline or a window
/// before it showed the sender without Nagle (the next window is told).
/// Returns the report, its rows as they were (summed here), its findings
/// those folded (a finding about one exchange past [`SEPARATE_KEPT`] is
/// not), numbered as the connection's.
pub(crate) fn fold(
    window: WindowFacts,
    mut report: ConnectionReport,
    nagle_off: [bool; 2],
    earlier: &mut Option<Box<LaterWindows>>,
) -> ConnectionReport {
    let later = earlier.get_or_insert_with(Default::default);
    if later.windows == 0 {
        later.first_frame = report.first_frame;
    }
    later.windows += 1;
    later.nagle_off = nagle_off;
    later.last_frame = report.last_frame;
    if report.exchanges > 0 {
        if later.first_exchange == 0 {
            later.first_exchange = window.exchanges_before + 1;
        }
        later.exchanges += report.exchanges;
    }
    for row in &report.ledger {
        add_row(&mut later.rows, row.clone());
    }
    later.turnaround_ms[0] += report.client_turnaround_ms;
    later.turnaround_ms[1] += report.server_turnaround_ms;
    let found = std::mem::take(&mut report.findings);
    for mut f in found {
        renumber(&mut f.detail, window.exchanges_before);
        if absorb(&mut later.findings, f.clone()).is_some() {
            report.findings.push(f);
        }
    }
    report
}

/// Adds the later windows' rows and findings to the connection's report
/// (its own: the first window's) and keeps their extent in
/// `later_windows`. A sender its own timeline showed without Nagle
/// (`nagle_off`, per sender) had it off in every later window too: their
/// Nagle holds, found before a window showed it, were not holds. The
/// caller sums the excess again and attributes it.
pub(crate) fn join(
    report: &mut ConnectionReport,
    findings: &mut Vec<Finding>,
    mut later: Box<LaterWindows>,
    nagle_off: [bool; 2],
) {
    // The connection's own rows, before the windows' sums join them.
    let own_rows = report.ledger.len();
    let (first, last) = (
        later.first_exchange,
        later.first_exchange + later.exchanges.saturating_sub(1),
    );
    for mut row in std::mem::take(&mut later.rows) {
        let what = match row.phase {
            Phase::Transfer => "response transfers",
            _ => "request -> first byte",
        };
        row.label = if first == last {
            format!("exchange {first}: {what}")
        } else {
            format!("exchanges {first}-{last}: {what}, summed")
        };
        row.ideal_basis = format!(
            "past the first {TIMELINE_CAP} segments: each exchange's ideal, summed ({})",
            row.ideal_basis
        );
        report.ledger.push(row);
    }
    let rtt_ms = report.rtt_ms.filter(|r| *r > 0.0);
    let not_held =
        |f: &Finding| matches!(f.detail, Detail::Nagle { sender, .. } if nagle_off[sender.index()]);
    for mut f in std::mem::take(&mut later.findings) {
        if not_held(&f) {
            continue;
        }
        // A window has no row for an exchange begun in the timeline (an
        // upload longer than it: its request -> first byte row spans the
        // windows) and put what it found there in the transfer; waits all
        // inside the connection's own rows of one latency phase are that
        // phase's.
        if f.phase == Some(Phase::Transfer) && f.unlisted_waits.is_none() {
            f.phase = Some(waits_phase(&report.ledger[..own_rows], &f.waits));
        }
        // (Summed over windows, the cost is in RTTs of the connection's.)
        if let Some(at) = absorb(findings, f) {
            let x = &mut findings[at];
            x.cost_rtts = rtt_ms.map(|r| x.cost_ms / r);
        }
    }
    report.later_windows = Some(later);
}

/// Sums `row` into the row of its phase (one per phase), or keeps it as
/// that row.
fn add_row(rows: &mut Vec<LedgerRow>, row: LedgerRow) {
    let Some(sum) = rows.iter_mut().find(|r| r.phase == row.phase) else {
        rows.push(LedgerRow {
            exchange: None,
            summed: 1,
            ..row
        });
        return;
    };
    sum.summed += 1;
    let add = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
    };
    sum.start_frame = sum.start_frame.min(row.start_frame);
    sum.end_frame = sum.end_frame.max(row.end_frame);
    sum.duration_ms += row.duration_ms;
    sum.rtts = add(sum.rtts, row.rtts);
    sum.ideal_rtts = add(sum.ideal_rtts, row.ideal_rtts);
    sum.excess_rtts = add(sum.excess_rtts, row.excess_rtts);
    sum.excess_ms = add(sum.excess_ms, row.excess_ms);
}

/// A window numbers its exchanges from 1: the connection's numbers are
/// `before` more.
fn renumber(detail: &mut Detail, before: u32) {
    match detail {
        Detail::ExchangeThinkTime {
            longest_exchange, ..
        } if *longest_exchange > 0 => *longest_exchange += before,
        Detail::ExpectContinueWait { exchange, .. }
        | Detail::SlowStartAfterIdle { exchange, .. }
        | Detail::HttpRedirect { exchange, .. }
        | Detail::HttpAuthChallenge { exchange, .. }
        | Detail::CorsPreflight { exchange, .. } => *exchange += before,
        _ => {}
    }
}

/// Whether `later` is more of what `f` found: the same kind in the same
/// phase, about the same side; never for a finding about one exchange.
fn same_cause(f: &Finding, later: &Finding) -> bool {
    if f.kind != later.kind || f.phase != later.phase {
        return false;
    }
    match (&f.detail, &later.detail) {
        (Detail::Nagle { sender: a, .. }, Detail::Nagle { sender: b, .. })
        | (Detail::RwndLimited { sender: a, .. }, Detail::RwndLimited { sender: b, .. })
        | (Detail::H2WindowLimited { sender: a, .. }, Detail::H2WindowLimited { sender: b, .. })
        | (Detail::Retransmission { sender: a, .. }, Detail::Retransmission { sender: b, .. })
        | (Detail::RtoStall { sender: a, .. }, Detail::RtoStall { sender: b, .. })
        | (Detail::ZeroWindow { receiver: a, .. }, Detail::ZeroWindow { receiver: b, .. }) => {
            a == b
        }
        (Detail::ExpectContinueWait { .. }, _)
        | (Detail::SlowStartAfterIdle { .. }, _)
        | (Detail::HttpRedirect { .. }, _)
        | (Detail::HttpAuthChallenge { .. }, _)
        | (Detail::CorsPreflight { .. }, _) => false,
        (a, b) => std::mem::discriminant(a) == std::mem::discriminant(b),
    }
}

/// Joins `later` to the finding in `findings` it is more of, or adds it
/// (a finding about one exchange: up to [`SEPARATE_KEPT`] of them).
/// Returns the index of the finding it joined or became (None: dropped).
fn absorb(findings: &mut Vec<Finding>, later: Finding) -> Option<usize> {
    let Some(i) = findings.iter().position(|f| same_cause(f, &later)) else {
        let separate = findings.iter().filter(|f| f.kind == later.kind).count();
        if separate >= SEPARATE_KEPT {
            return None;
        }
        findings.push(later);
        return Some(findings.len() - 1);
    };
    let f = &mut findings[i];
    f.cost_ms += later.cost_ms;
    f.confidence = f.confidence.min(later.confidence);
    // The evidence: the first instances' frames; a retransmission cites
    // its re-sends, whatever they cost, up to as many as it cites alone.
    let cited = if f.kind == FindingKind::Retransmission {
        RESENDS_CITED
    } else {
        FRAMES_CITED
    };
    if f.frames.len() < cited {
        let framed = f.display_filter == frames_filter(f.stream, &f.frames);
        let more: Vec<u64> = later
            .frames
            .iter()
            .copied()
            .filter(|fr| !f.frames.contains(fr))
            .take(cited - f.frames.len())
            .collect();
        f.frames.extend(more);
        if framed {
            f.display_filter = frames_filter(f.stream, &f.frames);
        }
    }
    merge_detail(&mut f.detail, later.detail);
    let mut unlisted = f.unlisted_waits.unwrap_or_default();
    for w in later.waits {
        if f.waits.len() < MAX_WAITS_LISTED {
            f.waits.push(w);
        } else {
            unlisted.count += 1;
            unlisted.ms += w.ms;
        }
    }
    if let Some(u) = later.unlisted_waits {
        unlisted.count += u.count;
        unlisted.ms += u.ms;
    }
    f.unlisted_waits = (unlisted.count > 0).then_some(unlisted);
    Some(i)
}

/// The counts of one cause's detail, summed; its first instance's frames
/// and words kept; its longest the longest of both.
fn merge_detail(d: &mut Detail, later: Detail) {
    match (d, later) {
        (
            Detail::Nagle {
                holds,
                paced,
                undelivered,
                ..
            },
            Detail::Nagle {
                holds: more,
                paced: later_paced,
                undelivered: later_undelivered,
                ..
            },
        ) => {
            *holds += more;
            *undelivered &= later_undelivered;
            // The throughput sentence holds only if every window was
            // paced by the stalls.
            *paced = match (*paced, later_paced) {
                (Some(a), Some(b)) => Some(crate::model::Pacing {
                    bytes: a.bytes + b.bytes,
                    span_ms: a.span_ms + b.span_ms,
                }),
                _ => None,
            };
        }
        (
            Detail::ExchangeThinkTime {
                slow,
                exchanges,
                longest_ms,
                longest_exchange,
                longest_label,
                via,
                ..
            },
            Detail::ExchangeThinkTime {
                slow: more,
                exchanges: more_exchanges,
                longest_ms: later_longest,
                longest_exchange: later_exchange,
                longest_label: later_label,
                via: later_via,
                ..
            },
        ) => {
            *slow += more;
            *exchanges += more_exchanges;
            if via.is_none() {
                *via = later_via;
            }
            if later_longest > *longest_ms {
                *longest_ms = later_longest;
                *longest_exchange = later_exchange;
                *longest_label = later_label;
            }
        }
        (Detail::ZeroWindow { episodes, .. }, Detail::ZeroWindow { episodes: more, .. }) => {
            *episodes += more
        }
        (Detail::RwndLimited { stalls, .. }, Detail::RwndLimited { stalls: more, .. }) => {
            *stalls += more
        }
        (
            Detail::H2WindowLimited {
                stalls,
                connection_stalls,
                ..
            },
            Detail::H2WindowLimited {
                stalls: more,
                connection_stalls: more_on_the_connection,
                ..
            },
        ) => {
            *stalls += more;
            *connection_stalls += more_on_the_connection;
        }
        (
            Detail::Retransmission {
                segments,
                distinct_segments,
                unconfirmed,
                window_stalls,
                past_timeline,
                originals_unseen,
                ..
            },
            Detail::Retransmission {
                segments: s,
                distinct_segments: d,
                unconfirmed: u,
                window_stalls: w,
                past_timeline: p,
                originals_unseen: o,
                into_closed: None,
                ..
            },
        ) => {
            *segments += s;
            // (A segment re-sent in two windows is counted in each.)
            *distinct_segments += d;
            *unconfirmed += u;
            *window_stalls += w;
            *past_timeline += p;
            *originals_unseen += o;
        }
        (
            Detail::RtoStall {
                stalls,
                unanswered,
                heard_elsewhere,
                sent_elsewhere,
                deaf,
                gave_up,
                ..
            },
            Detail::RtoStall {
                stalls: more,
                unanswered: later_unanswered,
                heard_elsewhere: later_heard,
                sent_elsewhere: later_sent,
                deaf: later_deaf,
                gave_up: later_gave_up,
                ..
            },
        ) => {
            *stalls += more;
            *unanswered |= later_unanswered;
            *heard_elsewhere = heard_elsewhere.or(later_heard);
            *sent_elsewhere = sent_elsewhere.or(later_sent);
            *deaf = deaf.or(later_deaf);
            *gave_up = later_gave_up.or(*gave_up);
        }
        (
            Detail::UpstreamWait {
                answers,
                longest_ms,
                new_connections,
                ..
            },
            Detail::UpstreamWait {
                answers: more,
                longest_ms: later_longest,
                new_connections: more_new,
                ..
            },
        ) => {
            *answers += more;
            *new_connections += more_new;
            *longest_ms = longest_ms.max(later_longest);
        }
        (
            Detail::ConnectBack {
                waits, longest_ms, ..
            },
            Detail::ConnectBack {
                waits: more,
                longest_ms: later_longest,
                ..
            },
        ) => {
            *waits += more;
            *longest_ms = longest_ms.max(later_longest);
        }
        (
            Detail::DownlinkQueue {
                answers,
                longest_ms,
            },
            Detail::DownlinkQueue {
                answers: more,
                longest_ms: later_longest,
            },
        ) => {
            *answers += more;
            *longest_ms = longest_ms.max(later_longest);
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Direction, FindingKind, Wait};

    fn nagle(sender: Direction, holds: u32, waits: usize) -> Finding {
        let waits: Vec<Wait> = (0..waits as u64)
            .map(|i| Wait {
                from_frame: 10 * i,
                to_frame: 10 * i + 2,
                release_frame: Some(10 * i + 1),
                ms: 40.0,
            })
            .collect();
        Finding {
            kind: FindingKind::NagleDelayedAck,
            stream: 0,
            phase: Some(Phase::FirstByte),
            frames: vec![2, 1],
            cost_ms: 40.0 * waits.len() as f64,
            cost_rtts: None,
            attributed_ms: 0.0,
            confidence: 0.9,
            detail: Detail::Nagle {
                sender,
                held_frame: 2,
                ack_frame: 1,
                armed_frame: 0,
                armed_bytes: 10,
                first_silence_ms: 40.0,
                ack_delay_ms: 38.0,
                holds,
                protocol: None,
                behind_handshake: false,
                released_by_handshake: false,
                paced: Some(crate::model::Pacing {
                    bytes: 1000,
                    span_ms: 100.0,
                }),
                undelivered: false,
            },
            explanation: String::new(),
            fix: String::new(),
            display_filter: String::new(),
            waits,
            unlisted_waits: None,
            unwaited: None,
        }
    }

    #[test]
    fn the_same_hold_in_a_later_window_is_one_finding_with_the_sums() {
        let mut found = vec![nagle(Direction::ClientToServer, 3, 3)];
        let at = absorb(&mut found, nagle(Direction::ClientToServer, 2, 2));
        assert_eq!(at, Some(0));
        let f = &found[0];
        assert_eq!((found.len(), f.waits.len(), f.cost_ms), (1, 5, 200.0));
        let Detail::Nagle { holds, paced, .. } = f.detail else {
            panic!("{:?}", f.detail)
        };
        assert_eq!(holds, 5);
        assert_eq!(paced.map(|p| (p.bytes, p.span_ms)), Some((2000, 200.0)));
        // The first window's evidence stays the finding's.
        assert_eq!(f.frames, vec![2, 1]);
    }

    #[test]
    fn a_hold_of_the_other_side_is_another_finding() {
        let mut found = vec![nagle(Direction::ClientToServer, 1, 1)];
        absorb(&mut found, nagle(Direction::ServerToClient, 1, 1));
        assert_eq!(found.len(), 2);
    }

    #[test]
    fn waits_past_the_listed_are_counted_and_summed_not_listed() {
        let mut found = vec![nagle(Direction::ClientToServer, 1000, 1000)];
        absorb(&mut found, nagle(Direction::ClientToServer, 100, 100));
        let f = &found[0];
        assert_eq!(f.waits.len(), MAX_WAITS_LISTED);
        let u = f.unlisted_waits.unwrap();
        assert_eq!(u.count as usize, 1100 - MAX_WAITS_LISTED);
        let listed: f64 = f.waits.iter().map(|w| w.ms).sum();
        assert_eq!(listed + u.ms, f.cost_ms);
    }

    #[test]
    fn a_window_not_paced_by_its_stalls_drops_the_throughput_claim() {
        let mut found = vec![nagle(Direction::ClientToServer, 1, 1)];
        let mut later = nagle(Direction::ClientToServer, 1, 1);
        if let Detail::Nagle { paced, .. } = &mut later.detail {
            *paced = None;
        }
        absorb(&mut found, later);
        assert!(matches!(found[0].detail, Detail::Nagle { paced: None, .. }));
    }

    #[test]
    fn a_wait_for_one_exchange_stays_its_own_finding_up_to_a_bound() {
        let expect = |exchange| Finding {
            kind: FindingKind::ExpectContinueWait,
            detail: Detail::ExpectContinueWait {
                exchange,
                request: None,
                head_frame: 1,
                body_frame: 2,
            },
            ..nagle(Direction::ClientToServer, 1, 1)
        };
        let mut found = Vec::new();
        for n in 0..SEPARATE_KEPT as u32 + 5 {
            let mut d = expect(n + 1).detail;
            renumber(&mut d, 400);
            absorb(
                &mut found,
                Finding {
                    detail: d,
                    ..expect(0)
                },
            );
        }
        assert_eq!(found.len(), SEPARATE_KEPT);
        assert!(matches!(
            found[0].detail,
            Detail::ExpectContinueWait { exchange: 401, .. }
        ));
    }

    #[test]
    fn later_rows_are_summed_per_phase() {
        let row = |phase, start, ms: f64| LedgerRow {
            phase,
            label: String::new(),
            exchange: Some(1),
            start_frame: start,
            end_frame: start + 3,
            duration_ms: ms,
            rtts: Some(ms / 10.0),
            ideal_rtts: Some(1.0),
            excess_rtts: Some(ms / 10.0 - 1.0),
            excess_ms: Some(ms - 10.0),
            ideal_basis: String::new(),
            summed: 0,
        };
        let mut rows = Vec::new();
        add_row(&mut rows, row(Phase::FirstByte, 100, 50.0));
        add_row(&mut rows, row(Phase::Transfer, 102, 20.0));
        add_row(&mut rows, row(Phase::FirstByte, 200, 30.0));
        assert_eq!(rows.len(), 2);
        let fb = &rows[0];
        assert_eq!((fb.summed, fb.exchange), (2, None));
        assert_eq!((fb.start_frame, fb.end_frame), (100, 203));
        assert_eq!((fb.duration_ms, fb.excess_ms), (80.0, Some(60.0)));
        assert_eq!(fb.ideal_rtts, Some(2.0));
    }
}
