//! The vocabulary every stage of rttdoc shares, declared once:
//!
//! - [`kinds`]: the closed table of finding kinds and ledger phases (names,
//!   detector files, cost rules, generic fixes);
//! - the report model: plain, serialisable data (schema in
//!   docs/json-schema.md) that `rttdoc-analyze` starts, `rttdoc-diagnose`
//!   completes and `rttdoc-report` renders. Nothing here formats text for
//!   people.

#![deny(missing_docs)]

pub mod kinds;
mod model;
pub mod quic;
pub mod series;

pub use model::*;
pub use quic::{QuicCause, QuicConnectionReport, QuicSection, QuicVersion, QUIC_LISTED};
/// What a TLS 1.2 server's ServerKeyExchange shows of its work
/// (`Detail::HandshakeThinkTime::server_key`), and the group names the
/// words give it: the wire's, shared as the vocabulary.
pub use rttdoc_wire::tls::{costly_group, group_name, ServerKeyExchange, Signer};
pub use series::{Series, SeriesPacket};
