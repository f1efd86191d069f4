//! `rttdoc probe URL`: measures an HTTP(S) endpoint the way `curl -w`
//! does, captures its own packets (with CAP_NET_RAW) and explains every
//! round trip beyond the ideal with the same analysis as `rttdoc
//! analyze`; repeats, statistics and interleaved comparisons of two
//! configurations (TFO, resumption, 0-RTT, TLS versions, key-share
//! groups, HTTP/1.1 vs h2, another address or URL).
//!
//! ```text
//! target   URL, --resolve, --connect-to, DNS        target.rs
//! engine   socket (TFO), TLS (rustls), HTTP/1.1      engine.rs, tls.rs, http.rs
//!          HTTP/2 (ALPN h2)                          h2.rs
//!          curl's instants                           timing.rs
//!          TCP_INFO                                  tcpinfo.rs
//!          self-capture (AF_PACKET + BPF)            selfcap.rs
//! analyze  the packets through rttdoc-analyze         diagnose.rs
//! run      repeats, warm-ups, interleaving, stats    run.rs, stats.rs
//! output   terminal, --json, --format curl           output.rs
//! ```

pub mod diagnose;
pub mod engine;
pub mod h2;
pub mod http;
pub mod output;
pub mod run;
pub mod selfcap;
pub mod stats;
pub mod target;
pub mod tcpinfo;
pub mod timing;
pub mod tls;

pub use engine::Variant;
pub use run::{run, Plan, Report, Sample, PROBE_SCHEMA_VERSION};
