//! The analysis: stages three to five of rttdoc's one pass.
//!
//! ```text
//! capture (rttdoc-capture) -> decode (rttdoc-wire)
//!   -> track   [track.rs, connection.rs]  segments to connections, tcp.stream numbering
//!   -> observe [tls.rs, exchange.rs, rtt.rs] handshake, exchanges, RTT samples
//!   -> ledger  [ledger.rs]                where the time went, in ms and RTTs
//!   -> report  (rttdoc-report)            terminal, JSON
//! ```
//!
//! [`analyze_capture`] runs the pass; finished connections leave as
//! [`ConnectionReport`]s through a callback as soon as they are done, so
//! memory follows the number of open connections, not the capture size.

mod connection;
pub mod detect;
mod exchange;
mod finisher;
pub mod keylog;
#[deny(missing_docs)]
pub mod kinds;
mod ledger;
#[deny(missing_docs)]
pub mod model;
pub mod preamble;
mod rtt;
pub mod seq;
mod tls;
mod track;

#[cfg(test)]
mod specs;
#[cfg(test)]
mod tests;

pub use ledger::slow_start_rounds;
pub use model::*;
pub use track::{analyze_capture, AnalyzeOptions, Tracker, DEFAULT_MAX_FLOWS};
