//! Tracking: stage three of rttdoc's one pass, from decoded frames to the
//! frozen facts of each finished connection.
//!
//! ```text
//! capture (rttdoc-capture) -> decode (rttdoc-wire)
//!   -> track   [track.rs, connection.rs]   segments to connections, tcp.stream numbering
//!   -> observe [tls.rs, exchange.rs, rtt.rs, preamble.rs] handshake, exchanges, RTT samples
//!   -> freeze  [facts.rs]                  ConnectionFacts, the hand-off
//!   -> diagnose (rttdoc-diagnose)          ledger, detectors, cost attribution
//!   -> report   (rttdoc-report)            every output format
//! ```
//!
//! [`Tracker`] runs the pass; finished connections are frozen into
//! [`ConnectionFacts`], turned into reports by the [`Diagnose`] function
//! the caller gives, and leave through a callback as soon as they are done,
//! so memory follows the number of open connections, not the capture size.
//! The vocabulary (`rttdoc-model`) is re-exported as [`model`].

mod amqp;
mod amqp10;
mod beanstalk;
mod binlog;
mod bitcoin;
mod black_holes;
mod cert_fetch;
mod challenge;
mod client_clock;
mod closes;
mod commands;
mod connect_back;
mod connection;
mod dnp3;
mod dns;
mod exchange;
mod facts;
mod false_start;
mod finisher;
mod fix;
mod flow_map;
mod follow_ups;
mod framing;
mod gearman;
mod h2_credit;
mod h2c;
mod iec104;
mod irc;
mod issued_sessions;
mod kafka;
pub mod keylog;
mod lone_syn;
mod mptcp;
mod mqtt;
mod nats;
mod openflow;
mod path_samples;
mod peer_dials;
mod postgres;
mod preflight;
pub mod quic;
mod quic_initial;
mod reader;
mod redirect;
mod shared_clock;
pub mod uplink;
pub mod uplink_load;
pub use path_samples::{
    BusyRun, Delivered, DownlinkGaps, Heard, NothingHeard, PathStall, QueueSample, RELEASE_NS,
};
pub use uplink::{SiblingWay, UplinkEcho, UplinkView};
pub mod preamble;
mod resp;
mod reuse;
mod route_requests;
mod rtt;
mod send_order;
pub mod seq;
#[deny(missing_docs)]
pub mod series;
mod stomp;
mod ticket_sizes;
mod tls;
mod tombstones;
mod track;
mod twins;
mod upstream;
mod websocket;
mod window;
mod xmpp;
mod zookeeper;

pub use cert_fetch::CertificateFetch;
pub use connect_back::ConnectBack;
pub use connection::{
    SegmentRecord, Stamp, TooBig, LATE_RETRANSMISSIONS_CITED, RESENDS_HEARD_KEPT, TIMELINE_CAP,
    TOO_BIG_KEPT,
};
pub use dns::{FailedAttempt, LookupAnswer, LookupQuery, NameLookup};
pub use exchange::Exchange;
pub use facts::{ConnectionFacts, Diagnose, PreambleFacts, RttFacts, TlsFacts};
pub use finisher::ReportSink;
pub use h2_credit::H2CreditStall;
pub use redirect::{is_redirect_status, Answered as RedirectAnswered, FollowedRedirect};
pub use reuse::{EndedConnection, READY_NS};
pub use rtt::vantage;
pub use rttdoc_model as model;
pub use rttdoc_model::kinds;
pub use rttdoc_model::*;
pub use series::SeriesRequest;
pub use track::{track_capture, AnalyzeOptions, Tracker, DEFAULT_MAX_FLOWS};
pub use upstream::UpstreamCall;
pub use window::{DiagnoseWindow, WindowFacts};
