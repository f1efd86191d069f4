//! The diagnosis: stage four of rttdoc's one pass. Each finished
//! connection's frozen facts ([`ConnectionFacts`], from `rttdoc-analyze`)
//! become its report:
//!
//! ```text
//! ConnectionFacts
//!   -> ledger    [ledger.rs]      where the time went, in ms and RTTs, against the ideal
//!   -> detectors [detect/*.rs]    one file per finding kind, its signature in its doc comment
//!   -> attribute [ledger.rs]      each latency phase's excess shared among its findings
//!   = ConnectionReport (rttdoc-model), worded and rendered by rttdoc-report
//! ```
//!
//! The diagnosis reads facts only, never the tracker's state, and writes
//! data only: findings are typed ([`model::Detail`]); words are the
//! renderers'. [`diagnose`] is a plain function so the tracker can run it
//! on worker threads (`--threads N`).

pub mod detect;
mod ledger;
mod quic_diagnosis;
mod window;

#[cfg(test)]
mod specs;
#[cfg(test)]
mod tracking_tests;

use rttdoc_capture::Capture;

pub use ledger::slow_start_rounds;
pub use rttdoc_analyze::model;
pub use rttdoc_analyze::model::*;
pub use rttdoc_analyze::{AnalyzeOptions, ConnectionFacts, ReportSink, Tracker, DEFAULT_MAX_FLOWS};

/// Diagnoses one connection: its ledger, what the detectors find, and the
/// cost attributed to each finding.
pub fn diagnose(facts: ConnectionFacts) -> ConnectionReport {
    ledger::report(facts)
}

/// Diagnoses one later window of a long connection and folds what it
/// found into what its earlier windows found (window.rs); returns the
/// window's report (`rttdoc_analyze::DiagnoseWindow` says what it holds).
pub fn diagnose_window(
    facts: ConnectionFacts,
    earlier: &mut Option<Box<LaterWindows>>,
) -> Option<ConnectionReport> {
    ledger::fold_window(facts, earlier)
}

/// A tracker whose finished connections are diagnosed and handed to `sink`
/// (and whose QUIC connections are diagnosed into its stats).
pub fn tracker<'s>(options: AnalyzeOptions, sink: &'s mut dyn ReportSink) -> Tracker<'s> {
    Tracker::new(options, diagnose, sink)
        .with_quic(diagnose_quic)
        .with_windows(diagnose_window)
}

/// Diagnoses one QUIC connection: its handshake's ledger row and what the
/// QUIC detectors find (quic.rs).
pub fn diagnose_quic(facts: rttdoc_analyze::quic::QuicFacts) -> QuicConnectionReport {
    quic_diagnosis::report(facts)
}

/// The whole pass over a capture: track, diagnose, and hand each finished
/// connection's report to `sink`. Reading a file stops at its first damaged
/// record; everything before it is analysed and the error is in the stats.
pub fn analyze_capture(
    capture: &mut Capture,
    options: AnalyzeOptions,
    sink: &mut dyn ReportSink,
) -> CaptureStats {
    rttdoc_analyze::track_capture(
        capture,
        options,
        diagnose,
        Some(diagnose_quic),
        Some(diagnose_window),
        sink,
    )
}
