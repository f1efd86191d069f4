//! Per-packet series of one connection, for time-sequence (Stevens /
//! tcptrace) graphs and timed ladders: what each packet sent (sequence
//! range), acknowledged and advertised, on the capture clock (`series` in
//! the JSON, docs/json-schema.md). `rttdoc-analyze` records it for the
//! connections asked for (its series.rs).

use rttdoc_wire::TcpFlags;
use serde::{Serialize, Serializer};

use crate::Direction;

/// One packet of a connection as a time-sequence graph draws it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SeriesPacket {
    /// Wireshark's frame number.
    pub frame: u64,
    /// Milliseconds since the connection's first frame, capture clock.
    pub t_ms: f64,
    /// Who sent it.
    pub direction: Direction,
    /// TCP flags, as Wireshark abbreviates them (`SYN, ACK`).
    #[serde(serialize_with = "flag_names")]
    pub flags: TcpFlags,
    /// Relative sequence number (Wireshark's `tcp.seq`: 0 is the sender's
    /// first sequence number, so data starts at 1 after a SYN).
    pub seq: u32,
    /// Payload bytes: the segment covers `seq .. seq + len`.
    pub len: u32,
    /// Relative acknowledgement number (the peer's sequence space); null
    /// when the ACK flag is off or the peer has sent nothing yet.
    pub ack: Option<u32>,
    /// Receive window the sender advertises, in bytes (scaled when both
    /// SYNs negotiated a scale); `ack + window` is the right edge of what
    /// the peer may send. Null without an ACK.
    pub window: Option<u64>,
    /// Re-sends bytes already seen (not reordering, not a probe).
    pub retransmission: bool,
    /// A keep-alive or zero-window probe.
    pub probe: bool,
    /// SACK blocks, relative to the peer's first sequence number: bytes
    /// the sender holds beyond the hole at `ack`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sack: Vec<(u32, u32)>,
    /// The first SACK block is a D-SACK (bytes received twice).
    pub dsack: bool,
}

fn flag_names<S: Serializer>(flags: &TcpFlags, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&flags.describe())
}

/// The per-packet data of one connection (`series` in the JSON).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Series {
    /// The connection's packets, in capture order (capture copies left
    /// out, as the analysis leaves them out).
    pub packets: Vec<SeriesPacket>,
    /// Packets beyond the cap, not in `packets`.
    pub dropped: u64,
}
