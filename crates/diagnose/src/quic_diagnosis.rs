//! A QUIC connection's diagnosis: its handshake's ledger row and what the
//! QUIC detectors (`detect/quic_*.rs`) find, from the datagrams in the
//! clear (rttdoc-analyze's quic.rs).
//!
//! The handshake, as RFC 9000 7 and RFC 9001 4 run it: the client's
//! Initial (ClientHello); the server's Initial (ServerHello) with its
//! Handshake packets (certificate, Finished); the client's Handshake
//! packet (its Finished), with which it may send its first 1-RTT packet.
//! One round trip at best, as TLS 1.3 over TCP is after the TCP
//! handshake. The row runs from the first Initial to the client's
//! first short-header packet (its 1-RTT keys exist only once the server's
//! Finished arrived), or to its last Handshake packet before it when
//! that came more than a round trip later (the client had nothing to
//! send) or never.
//!
//! The round trip: the client's Initial that the server answered, to the
//! client's first datagram after the server's first Initial (its ACK):
//! both legs, with the server's work on the ClientHello in them, on any
//! vantage, as a TCP SYN to its handshake's ACK. Which of the two gaps
//! holds the path tells the vantage.

use rttdoc_analyze::quic::{QuicDatagram, QuicFacts};
use rttdoc_wire::quic::PacketType;

use crate::detect::{
    quic_amplification_limit, quic_initial_lost, quic_retry, quic_version_negotiation,
};
use crate::model::{
    Finding, FindingKind, LedgerRow, Phase, QuicConnectionReport, QuicVersion, Vantage,
};

/// What the detectors read: the facts and the handshake's landmarks,
/// found once.
pub(crate) struct QuicView<'a> {
    pub facts: &'a QuicFacts,
    pub d: &'a [QuicDatagram],
    /// The server's first Initial (after any Retry or Version Negotiation).
    pub server_initial: Option<usize>,
    /// The client's Initial it answered: the client's last before it.
    pub answered: Option<usize>,
    /// The client's handshake done: its first short-header packet, else
    /// its last Handshake packet.
    pub client_done: Option<usize>,
    pub rtt_ns: Option<i64>,
    pub vantage: Vantage,
}

impl<'a> QuicView<'a> {
    pub fn new(facts: &'a QuicFacts) -> QuicView<'a> {
        let d = &facts.datagrams[..];
        let server_initial = d
            .iter()
            .position(|x| !x.from_client && x.types.has(PacketType::Initial));
        let answered = server_initial.and_then(|s| {
            d[..s]
                .iter()
                .rposition(|x| x.from_client && x.types.has(PacketType::Initial))
        });
        let client_next = server_initial.and_then(|s| {
            d[s + 1..]
                .iter()
                .position(|x| x.from_client)
                .map(|i| s + 1 + i)
        });
        let first_short = d
            .iter()
            .position(|x| x.from_client && x.types.has(PacketType::Short));
        let last_handshake = |before: usize| {
            d[..before]
                .iter()
                .rposition(|x| x.from_client && x.types.has(PacketType::Handshake))
        };
        let (mut rtt_ns, mut vantage) = (None, Vantage::Unknown);
        if let (Some(a), Some(s), Some(n)) = (answered, server_initial, client_next) {
            let out = d[s].ts_ns - d[a].ts_ns;
            let back = d[n].ts_ns - d[s].ts_ns;
            let total = out + back;
            if total > 0 && out >= 0 && back >= 0 {
                rtt_ns = Some(total);
                vantage = if back * 5 < total {
                    Vantage::Client
                } else if out * 5 < total {
                    Vantage::Server
                } else {
                    Vantage::Middle
                };
            }
        }
        // The client's handshake ends with its Finished, in a Handshake
        // packet; a client with something to send sends its first 1-RTT
        // packet with it (the row's end), but one with nothing to send
        // (a DNS-over-QUIC client before its query) may send none for a
        // while: a first 1-RTT packet more than a round trip after its
        // last Handshake packet was written later, and the handshake
        // ended at that Handshake packet (idle time is nobody's wait).
        let client_done = match first_short {
            Some(sh) => match (last_handshake(sh), rtt_ns) {
                (Some(h), Some(rtt)) if d[sh].ts_ns - d[h].ts_ns > rtt => Some(h),
                _ => Some(sh),
            },
            None => last_handshake(d.len()),
        }
        .filter(|&i| server_initial.is_some_and(|s| i > s));
        QuicView {
            facts,
            d,
            server_initial,
            answered,
            client_done,
            rtt_ns,
            vantage,
        }
    }

    /// A finding of this connection, its cost the sum of its waits.
    pub fn finding(
        &self,
        kind: FindingKind,
        frames: Vec<u64>,
        waits: Vec<crate::model::Wait>,
    ) -> Finding {
        let cost_ms: f64 = waits.iter().map(|w| w.ms).sum();
        Finding {
            kind,
            stream: self.facts.number,
            phase: Some(Phase::QuicHandshake),
            display_filter: frames_filter(&frames),
            frames,
            cost_ms,
            cost_rtts: self.rtt_ns.map(|r| cost_ms / ms(r)),
            attributed_ms: 0.0,
            confidence: 1.0,
            detail: Default::default(),
            explanation: String::new(),
            fix: String::new(),
            waits,
            unlisted_waits: None,
            unwaited: None,
        }
    }
}

/// Nanoseconds as milliseconds.
pub(crate) fn ms(ns: i64) -> f64 {
    ns as f64 / 1e6
}

/// `frame.number in {a, b}` (a QUIC connection has no stream number in
/// Wireshark's filters that rttdoc's would match).
fn frames_filter(frames: &[u64]) -> String {
    let list: Vec<String> = frames.iter().map(|f| f.to_string()).collect();
    format!("frame.number in {{{}}}", list.join(", "))
}

/// The connection's packets: its 4-tuple.
fn connection_filter(f: &QuicFacts) -> String {
    let ip = |a: std::net::IpAddr| if a.is_ipv4() { "ip.addr" } else { "ipv6.addr" };
    format!(
        "{} == {} && {} == {} && udp.port == {} && udp.port == {}",
        ip(f.client.ip),
        f.client.ip,
        ip(f.server.ip),
        f.server.ip,
        f.client.port,
        f.server.port
    )
}

/// The report of one QUIC connection.
pub(crate) fn report(facts: QuicFacts) -> QuicConnectionReport {
    let v = QuicView::new(&facts);
    let d = v.d;
    let first = d.first();
    let version = v
        .answered
        .map(|a| d[a].version)
        .or_else(|| {
            d.iter()
                .rev()
                .find(|x| x.from_client && x.version != 0)
                .map(|x| x.version)
        })
        .unwrap_or(0);
    let handshake_ns = v.client_done.zip(first).map(|(c, f)| d[c].ts_ns - f.ts_ns);
    let zero_rtt = d
        .iter()
        .any(|x| x.from_client && x.types.has(PacketType::ZeroRtt));
    let mut ledger = Vec::new();
    let (mut excess_ms, mut excess_rtts) = (0.0, 0.0);
    if let (Some(c), Some(f), Some(ns)) = (v.client_done, first, handshake_ns) {
        let rtts = v.rtt_ns.map(|r| ns as f64 / r as f64);
        let excess = rtts.map(|r| (r - 1.0).max(0.0));
        if let (Some(e), Some(r)) = (excess, v.rtt_ns) {
            excess_rtts = e;
            excess_ms = e * ms(r);
        }
        ledger.push(LedgerRow {
            phase: Phase::QuicHandshake,
            label: "QUIC handshake".to_string(),
            exchange: None,
            start_frame: f.frame,
            end_frame: d[c].frame,
            duration_ms: ms(ns),
            rtts,
            ideal_rtts: Some(1.0),
            excess_rtts: excess,
            excess_ms: excess.zip(v.rtt_ns).map(|(e, r)| e * ms(r)),
            ideal_basis: if zero_rtt {
                "QUIC handshake: 1 RTT (the first request went in 0-RTT)".to_string()
            } else {
                "QUIC handshake: 1 RTT".to_string()
            },
            summed: 0,
        });
    }
    let mut findings = Vec::new();
    quic_version_negotiation::detect(&v, &mut findings);
    quic_retry::detect(&v, &mut findings);
    quic_initial_lost::detect(&v, &mut findings);
    quic_amplification_limit::detect(&v, &mut findings);
    // A wait's release comes before what it released (the causality rule
    // every TCP finding obeys too); a finding left with no wait is gone.
    for f in &mut findings {
        f.waits.retain(|w| {
            w.ms > 0.0
                && w.from_frame < w.to_frame
                && w.release_frame.is_none_or(|r| r < w.to_frame)
        });
        f.cost_ms = f.waits.iter().map(|w| w.ms).sum();
        f.cost_rtts = v.rtt_ns.map(|r| f.cost_ms / ms(r));
    }
    findings.retain(|f| !f.waits.is_empty());
    // The handshake's excess shared among them, largest cost first, none
    // beyond its own cost (as a TCP connection's phases are); listed in
    // the order their evidence came.
    let mut order: Vec<usize> = (0..findings.len()).collect();
    order.sort_by(|&a, &b| findings[b].cost_ms.total_cmp(&findings[a].cost_ms));
    let mut left = excess_ms;
    for i in order {
        let f = &mut findings[i];
        f.attributed_ms = f.cost_ms.min(left).max(0.0);
        left -= f.attributed_ms;
    }
    findings.sort_by_key(|f| f.frames.first().copied());
    let last_ts = facts.last_ts_ns;
    QuicConnectionReport {
        number: facts.number,
        client: facts.client,
        server: facts.server,
        server_name: facts.sni.clone(),
        alpn: facts.alpn.clone(),
        version: QuicVersion(version),
        first_frame: first.map_or(facts.last_frame, |f| f.frame),
        last_frame: facts.last_frame,
        start_time: facts.first_ts_ns as f64 / 1e9,
        start_offset_s: (facts.first_ts_ns - facts.capture_start_ns) as f64 / 1e9,
        duration_ms: ms(last_ts - facts.first_ts_ns),
        ending: if facts.open_at_end { "open" } else { "idle" },
        vantage: v.vantage,
        rtt_ms: v.rtt_ns.map(ms),
        handshake_ms: handshake_ns.map(ms),
        retry: d
            .iter()
            .any(|x| !x.from_client && x.types.has(PacketType::Retry)),
        version_negotiation: d
            .iter()
            .any(|x| !x.from_client && x.types.has(PacketType::VersionNegotiation)),
        zero_rtt,
        client_datagrams: facts.counts[0],
        server_datagrams: facts.counts[1],
        client_bytes: facts.bytes[0],
        server_bytes: facts.bytes[1],
        ledger,
        excess_rtts,
        excess_ms,
        unexplained_ms: left.max(0.0),
        findings,
        display_filter: connection_filter(&facts),
    }
}
