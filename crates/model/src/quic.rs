//! QUIC connections (HTTP/3's transport) in the report: their handshake's
//! round trips, as far as the packets in the clear show them.

use serde::{Serialize, Serializer};

use crate::{Endpoint, Finding, FindingKind, LedgerRow, Vantage};

/// QUIC connections listed in full; past it they are counted
/// ([`QuicSection::not_listed`]) and in the totals, not listed.
pub const QUIC_LISTED: usize = 4096;

/// A QUIC version number, written as RFC 9000 and Wireshark name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct QuicVersion(pub u32);

impl QuicVersion {
    /// `1`, `2`, `draft-29`, `mvfst-2`, else its hex value.
    pub fn name(self) -> String {
        match self.0 {
            0x0000_0001 => "1".to_string(),
            0x6b33_43cf => "2".to_string(),
            v if v >> 8 == 0x00ff_0000 => format!("draft-{}", v & 0xff),
            v if v >> 4 == 0x0fac_eb00 => format!("mvfst-{}", v & 0xf),
            v => format!("{v:#010x}"),
        }
    }
}

impl Serialize for QuicVersion {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.name())
    }
}

/// One QUIC connection: a client's Initial on a UDP 4-tuple, and what
/// followed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QuicConnectionReport {
    /// In the order of their first Initial, from 0 (its findings'
    /// `stream`).
    pub number: u64,
    /// The side that sent the first Initial.
    pub client: Endpoint,
    /// The other side.
    pub server: Endpoint,
    /// The server name (SNI) of the client's ClientHello, read out of its
    /// Initial packets (their keys are public: RFC 9001 5.2); null when
    /// it had none, or its Initials were not read.
    pub server_name: Option<String>,
    /// The application protocols its ClientHello offered (ALPN: `h3`
    /// ...), in its order.
    pub alpn: Vec<String>,
    /// The version the handshake finished in (the client's last Initial's).
    pub version: QuicVersion,
    /// Its first frame (the client's first Initial).
    pub first_frame: u64,
    /// Its last frame.
    pub last_frame: u64,
    /// Capture time of the first frame, seconds since the Unix epoch.
    pub start_time: f64,
    /// Seconds from the capture's first frame to this connection's.
    pub start_offset_s: f64,
    /// First to last frame.
    pub duration_ms: f64,
    /// `idle` (no packet for 30 s: its idle timeout, or an encrypted
    /// close) or `open` (the capture ended first).
    pub ending: &'static str,
    /// Where the capture was taken, as the handshake's gaps show.
    pub vantage: Vantage,
    /// The client's answered Initial to its next datagram after the
    /// server's first Initial: one round trip, with both ends' handshake
    /// work.
    pub rtt_ms: Option<f64>,
    /// The first Initial to the client's first Handshake packet (its
    /// Finished); absent when the handshake did not finish in the capture.
    pub handshake_ms: Option<f64>,
    /// The server answered a Retry first.
    pub retry: bool,
    /// The server answered a Version Negotiation first.
    pub version_negotiation: bool,
    /// The client sent 0-RTT packets (a resumed session's early data).
    pub zero_rtt: bool,
    /// Datagrams the client sent.
    pub client_datagrams: u64,
    /// Datagrams the server sent.
    pub server_datagrams: u64,
    /// UDP payload bytes the client sent.
    pub client_bytes: u64,
    /// UDP payload bytes the server sent.
    pub server_bytes: u64,
    /// The round-trip ledger: the `quic_handshake` row.
    pub ledger: Vec<LedgerRow>,
    /// The handshake's round trips beyond its ideal.
    pub excess_rtts: f64,
    /// `excess_rtts` in milliseconds.
    pub excess_ms: f64,
    /// What the detectors found.
    pub findings: Vec<Finding>,
    /// Excess no finding accounts for (ms, >= 0).
    pub unexplained_ms: f64,
    /// A Wireshark display filter for the connection's packets.
    pub display_filter: String,
}

/// A cause's total over the capture's QUIC connections.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QuicCause {
    /// The finding kind.
    pub kind: FindingKind,
    /// Connections with it.
    pub connections: u64,
    /// Its cost summed.
    pub cost_ms: f64,
    /// The part of the handshakes' excess it accounts for (its findings'
    /// `attributed_ms`, summed): these and `unexplained_ms` add up to
    /// the section's `excess_ms`.
    pub attributed_ms: f64,
}

/// The capture's QUIC connections.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct QuicSection {
    /// QUIC connections seen (each a client's Initial on a 4-tuple).
    pub connections: u64,
    /// UDP datagrams of those connections.
    pub datagrams: u64,
    /// Of the connections, those whose handshake finished in the capture.
    pub handshakes: u64,
    /// Their handshakes' excess over the ideal, summed (ms).
    pub excess_ms: f64,
    /// Of it, what no finding accounts for.
    pub unexplained_ms: f64,
    /// The findings' kinds, most costly first.
    pub causes: Vec<QuicCause>,
    /// The first [`QUIC_LISTED`] connections, in the order they ended.
    pub listed: Vec<QuicConnectionReport>,
    /// Connections past those, counted only.
    pub not_listed: u64,
}

impl QuicSection {
    /// Adds a finished connection: listed while there is room, always in
    /// the totals.
    pub fn add(&mut self, c: QuicConnectionReport) {
        self.connections += 1;
        self.datagrams += c.client_datagrams + c.server_datagrams;
        if c.handshake_ms.is_some() {
            self.handshakes += 1;
        }
        self.excess_ms += c.excess_ms;
        self.unexplained_ms += c.unexplained_ms;
        for f in &c.findings {
            match self.causes.iter_mut().find(|x| x.kind == f.kind) {
                Some(x) => {
                    x.connections += 1;
                    x.cost_ms += f.cost_ms;
                    x.attributed_ms += f.attributed_ms;
                }
                None => self.causes.push(QuicCause {
                    kind: f.kind,
                    connections: 1,
                    cost_ms: f.cost_ms,
                    attributed_ms: f.attributed_ms,
                }),
            }
        }
        self.causes.sort_by(|a, b| {
            b.cost_ms
                .total_cmp(&a.cost_ms)
                .then(a.kind.name().cmp(b.kind.name()))
        });
        if self.listed.len() < QUIC_LISTED {
            self.listed.push(c);
        } else {
            self.not_listed += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_named_as_wireshark_does() {
        assert_eq!(QuicVersion(1).name(), "1");
        assert_eq!(QuicVersion(0x6b33_43cf).name(), "2");
        assert_eq!(QuicVersion(0xff00_001d).name(), "draft-29");
        assert_eq!(QuicVersion(0xface_b002).name(), "mvfst-2");
        assert_eq!(QuicVersion(0x5130_3530).name(), "0x51303530");
    }
}
