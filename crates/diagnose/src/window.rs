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
//! When the connection ends, [`join`] adds the rows and findings to its
//! report before the cost is attributed, so the numbers on one screen add
//! up: the ledger's excess is what the findings account for plus what is
//! unexplained, over the whole connection.

use crate::model::{
    ConnectionReport, Detail, Finding, LaterWindows, LedgerRow, Phase, MAX_WAITS_LISTED,
    TIMELINE_CAP,
};
use rttdoc_analyze::WindowFacts;

/// Findings about one exchange each kept from the later windows, at most.
const SEPARATE_KEPT: usize = 64;

/// Folds one window's report into what the windows before it found.
pub(crate) fn fold(
    window: WindowFacts,
    report: ConnectionReport,
    earlier: &mut Option<Box<LaterWindows>>,
) {
    let later = earlier.get_or_insert_with(|| {
        Box::new(LaterWindows {
            windows: 0,
            first_frame: report.first_frame,
            last_frame: report.last_frame,
            exchanges: 0,
            first_exchange: 0,
            rows: Vec::new(),
            findings: Vec::new(),
        })
    });
    later.windows += 1;
    later.last_frame = report.last_frame;
    if report.exchanges > 0 {
        if later.first_exchange == 0 {
            later.first_exchange = window.exchanges_before + 1;
        }
        later.exchanges += report.exchanges;
    }
    for row in report.ledger {
        add_row(&mut later.rows, row);
    }
    for mut f in report.findings {
        renumber(&mut f.detail, window.exchanges_before);
        absorb(&mut later.findings, f);
    }
}

/// Adds the later windows' rows and findings to the connection's report
/// (its own: the first window's) and keeps their extent in
/// `later_windows`. The caller sums the excess again and attributes it.
pub(crate) fn join(
    report: &mut ConnectionReport,
    findings: &mut Vec<Finding>,
    mut later: Box<LaterWindows>,
) {
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
    for f in std::mem::take(&mut later.findings) {
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
        | Detail::SlowStartAfterIdle { exchange, .. } => *exchange += before,
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
        | (Detail::Retransmission { sender: a, .. }, Detail::Retransmission { sender: b, .. })
        | (Detail::RtoStall { sender: a, .. }, Detail::RtoStall { sender: b, .. })
        | (Detail::ZeroWindow { receiver: a, .. }, Detail::ZeroWindow { receiver: b, .. }) => {
            a == b
        }
        (Detail::ExpectContinueWait { .. }, _) | (Detail::SlowStartAfterIdle { .. }, _) => false,
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
            Detail::Nagle { holds, paced, .. },
            Detail::Nagle {
                holds: more,
                paced: later_paced,
                ..
            },
        ) => {
            *holds += more;
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
                ..
            },
            Detail::ExchangeThinkTime {
                slow: more,
                exchanges: more_exchanges,
                longest_ms: later_longest,
                longest_exchange: later_exchange,
                longest_label: later_label,
                ..
            },
        ) => {
            *slow += more;
            *exchanges += more_exchanges;
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
            Detail::Retransmission {
                segments,
                unconfirmed,
                window_stalls,
                past_timeline,
                ..
            },
            Detail::Retransmission {
                segments: s,
                unconfirmed: u,
                window_stalls: w,
                past_timeline: p,
                ..
            },
        ) => {
            *segments += s;
            *unconfirmed += u;
            *window_stalls += w;
            *past_timeline += p;
        }
        (
            Detail::RtoStall {
                stalls, unanswered, ..
            },
            Detail::RtoStall {
                stalls: more,
                unanswered: later_unanswered,
                ..
            },
        ) => {
            *stalls += more;
            *unanswered |= later_unanswered;
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
