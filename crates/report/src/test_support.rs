//! Reports and findings for the renderers' unit tests: one connection,
//! filled in only where a test says.

use rttdoc_model::{
    ConnectionReport, DirectionStats, Ending, Endpoint, Finding, FindingKind, HandshakeReport,
    Vantage,
};

/// A plain connection to `server_port`, closed by FINs, 20 ms of RTT.
pub(crate) fn report(server_port: u16) -> ConnectionReport {
    ConnectionReport {
        stream: 0,
        same_connection_as: None,
        mptcp: None,
        proxy_protocol: None,
        client: Endpoint {
            ip: "10.0.0.1".parse().unwrap(),
            port: 40000,
        },
        server: Endpoint {
            ip: "10.0.0.2".parse().unwrap(),
            port: server_port,
        },
        first_frame: 1,
        last_frame: 10,
        start_time: 1.7e9,
        start_offset_s: 0.0,
        duration_ms: 100.0,
        partial: false,
        ending: Ending::Fin,
        vantage: Vantage::Client,
        rtt_ms: Some(20.0),
        rtt_source: None,
        tcp_handshake_ms: Some(20.0),
        name_lookup: None,
        handshake: HandshakeReport::default(),
        client_to_server: DirectionStats::default(),
        server_to_client: DirectionStats::default(),
        tls: None,
        tls_lookalike: None,
        exchanges: 0,
        ledger: vec![],
        excess_rtts: 0.0,
        excess_ms: 0.0,
        findings: vec![],
        unexplained_ms: 0.0,
        client_turnaround_ms: 0.0,
        server_turnaround_ms: 0.0,
        path_queue_ms: 0.0,
        later_windows: None,
        ladder: None,
        series: None,
    }
}

/// A finding of `kind` costing `cost_ms`, in no phase.
pub(crate) fn finding(kind: FindingKind, cost_ms: f64) -> Finding {
    Finding {
        kind,
        stream: 0,
        phase: None,
        frames: vec![],
        cost_ms,
        cost_rtts: None,
        attributed_ms: 0.0,
        confidence: 1.0,
        detail: Default::default(),
        explanation: String::new(),
        fix: String::new(),
        display_filter: String::new(),
        waits: vec![],
        unlisted_waits: None,
        unwaited: None,
    }
}

/// A client_think_time finding of one handshake turn of `ms`, the
/// client's verification of a full handshake (nothing else read of it).
pub(crate) fn client_turn(ms: f64) -> Finding {
    let mut x = finding(FindingKind::ClientThinkTime, ms);
    x.detail = rttdoc_model::Detail::ClientThinkTime {
        turns: 1,
        longest_ms: ms,
        late_read: None,
        resumed: false,
        costly_key_exchange: None,
        no_certificate: false,
        resumption_refused: false,
        dialled_during: None,
        signed_nothing: false,
    };
    x
}
