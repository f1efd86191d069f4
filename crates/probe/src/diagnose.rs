//! The probe's packets through the same analysis as `rttdoc analyze`, and
//! the per-request ledger: from the capture when there is one, else
//! estimated from the timings and the kernel's RTT.

use std::collections::{HashMap, VecDeque};
use std::io;
use std::path::Path;

use rttdoc_analyze::{AnalyzeOptions, ConnectionReport, Finding, FindingKind, Phase};
use rttdoc_capture::{linktype, Frame};
use serde::Serialize;

use crate::engine::Measured;
use crate::selfcap::Packet;

/// Analyses every request's packets as one capture (in request order, so
/// frame and stream numbers are those of the `--save-capture` file) and
/// returns the connections' reports by the probe's local port, in stream
/// order (a long run may use a port twice).
pub fn analyze(requests: &[&[Packet]], keylog: &[u8]) -> HashMap<u16, VecDeque<ConnectionReport>> {
    let mut reports = Vec::new();
    let mut sink = |r: ConnectionReport| reports.push(r);
    let mut tracker = rttdoc_diagnose::tracker(AnalyzeOptions::default(), &mut sink);
    if !keylog.is_empty() {
        tracker.add_key_log_lines(keylog);
    }
    for (i, p) in requests.iter().flat_map(|r| r.iter()).enumerate() {
        tracker.frame(&Frame {
            number: i as u64 + 1,
            ts_ns: p.ts_ns,
            link_type: linktype::RAW,
            orig_len: p.data.len() as u32,
            data: &p.data,
            time_out_of_range: false,
        });
    }
    tracker.finish();
    reports.sort_by_key(|r| r.stream);
    let mut by_port: HashMap<u16, VecDeque<ConnectionReport>> = HashMap::new();
    for mut r in reports {
        rttdoc_report::words::word(&mut r);
        by_port.entry(r.client.port).or_default().push_back(r);
    }
    by_port
}

/// Writes the packets as pcapng (raw IP, nanosecond timestamps).
pub fn save(path: &Path, requests: &[&[Packet]]) -> io::Result<()> {
    let packets: Vec<(u32, i64, &[u8])> = requests
        .iter()
        .flat_map(|r| r.iter())
        .map(|p| (0, p.ts_ns, p.data.as_slice()))
        .collect();
    let file = std::fs::File::create(path)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
    rttdoc_lab::pcapng::write(io::BufWriter::new(file), &["rttdoc probe"], &packets)
}

/// One phase of a request in round trips.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Round {
    /// `tcp_handshake`, `tls_handshake`, `first_byte`, `transfer`, ...
    pub phase: String,
    pub ms: f64,
    pub rtts: Option<f64>,
    pub ideal_rtts: Option<f64>,
    pub excess_rtts: Option<f64>,
    /// Why the ideal is what it is.
    pub basis: String,
}

/// The ledger of a request measured without packets: each step of the
/// timings over the path RTT, against the ideal for what was negotiated.
pub fn estimated_rounds(m: &Measured, rtt_ms: Option<f64>) -> Vec<Round> {
    let s = m.timings.steps();
    let tfo_accepted = m.tcp_info.as_ref().is_some_and(|i| i.syn_data_acked);
    let over = |ms: f64| rtt_ms.filter(|r| *r > 0.0).map(|r| ms / r);
    let row = |phase: &str, ms: f64, ideal: f64, basis: String| {
        let rtts = over(ms);
        Round {
            phase: phase.into(),
            ms,
            rtts,
            ideal_rtts: Some(ideal),
            excess_rtts: rtts.map(|r| (r - ideal).max(0.0)),
            basis,
        }
    };
    let mut rows = Vec::new();
    if m.tfo_requested {
        rows.push(row(
            "tcp_handshake",
            s.tcp,
            0.0,
            "TCP Fast Open: connect() returns at once, the SYN leaves with the first write".into(),
        ));
    } else {
        rows.push(row(
            "tcp_handshake",
            s.tcp,
            1.0,
            "SYN, SYN-ACK: 1 RTT".into(),
        ));
    }
    if let Some(t) = &m.tls {
        let v13 = t.version.as_deref() == Some("TLS 1.3");
        let (mut ideal, mut basis) = match (v13, t.handshake) {
            (true, Some("resumed")) => (1.0, "TLS 1.3 resumed: 1 RTT".to_string()),
            (true, Some("full_with_hello_retry_request")) => {
                (2.0, "TLS 1.3 with HelloRetryRequest: 2 RTT".to_string())
            }
            (true, _) => (1.0, "TLS 1.3 full handshake: 1 RTT".to_string()),
            (false, Some("resumed")) => (1.0, "TLS 1.2 resumed: 1 RTT".to_string()),
            (false, _) => (2.0, "TLS 1.2 full handshake: 2 RTT".to_string()),
        };
        if m.tfo_requested {
            // The TCP handshake's round trip lands in the TLS step (the
            // ClientHello waits for, or rides in, the SYN).
            if !tfo_accepted {
                ideal += 1.0;
                basis.push_str(", +1 RTT of TCP handshake (TFO not accepted)");
            } else {
                basis.push_str(", ClientHello in the SYN");
            }
        }
        rows.push(row("tls_handshake", s.tls, ideal, basis));
    }
    let early = m
        .tls
        .as_ref()
        .is_some_and(|t| t.early_data_accepted == Some(true));
    let basis = if early {
        "request in 0-RTT early data: the answer follows the server's flight, 1 RTT after the request"
    } else {
        "request, response: 1 RTT"
    };
    let mut ideal = 1.0;
    if m.tls.is_none() && m.tfo_requested && !tfo_accepted {
        ideal += 1.0;
    }
    rows.push(row("first_byte", s.wait, ideal, basis.into()));
    rows.push(Round {
        phase: "transfer".into(),
        ms: s.transfer,
        rtts: over(s.transfer),
        ideal_rtts: None,
        excess_rtts: None,
        basis: "the rest of the response (size and rate)".into(),
    });
    rows
}

/// The ledger of the capture's analysis.
pub fn captured_rounds(c: &ConnectionReport) -> Vec<Round> {
    c.ledger
        .iter()
        .map(|r| Round {
            phase: r.phase.name().to_string(),
            ms: r.duration_ms,
            rtts: r.rtts,
            ideal_rtts: r.ideal_rtts,
            excess_rtts: r.excess_rtts,
            basis: r.ideal_basis.clone(),
        })
        .collect()
}

/// Server think time: the wait for the first byte beyond one round trip
/// (the request's way there and the answer's way back), less the waits
/// the capture's findings put in that phase for other causes (a Nagle
/// hold of the response is the network's doing, not the server's).
pub fn server_ms(rounds: &[Round], rtt_ms: Option<f64>, findings: &[Finding]) -> Option<f64> {
    let wait = rounds.iter().find(|r| r.phase == "first_byte")?.ms;
    let other: f64 = findings
        .iter()
        .filter(|f| f.phase == Some(Phase::FirstByte) && f.kind != FindingKind::ServerThinkTime)
        .map(|f| f.cost_ms.max(0.0))
        .sum();
    Some((wait - rtt_ms? - other).max(0.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::TlsSeen;
    use crate::timing::CurlTimings;

    fn measured(t: CurlTimings, tls: Option<TlsSeen>) -> Measured {
        Measured {
            local: None,
            remote: None,
            timings: t,
            status: Some(200),
            http_version: None,
            redirect_url: None,
            body_bytes: 0,
            tls,
            tfo_requested: false,
            tcp_info: None,
            error: None,
            capture_unavailable: None,
            packets: vec![],
            kernel_drops: 0,
            not_kept: 0,
        }
    }

    #[test]
    fn estimated_ledger_counts_round_trips_against_the_negotiated_ideal() {
        let t = CurlTimings {
            namelookup: 0.0,
            connect: 50.0,
            appconnect: 150.0,
            pretransfer: 150.0,
            starttransfer: 210.0,
            total: 211.0,
        };
        let tls = TlsSeen {
            version: Some("TLS 1.3".into()),
            handshake: Some("full"),
            ..Default::default()
        };
        let rows = estimated_rounds(&measured(t, Some(tls)), Some(50.0));
        let get = |p: &str| rows.iter().find(|r| r.phase == p).unwrap();
        assert_eq!(get("tcp_handshake").rtts, Some(1.0));
        assert_eq!(get("tls_handshake").rtts, Some(2.0));
        assert_eq!(
            get("tls_handshake").excess_rtts,
            Some(1.0),
            "one round trip over TLS 1.3's one"
        );
        assert_eq!(get("first_byte").ms, 60.0);
        assert_eq!(server_ms(&rows, Some(50.0), &[]), Some(10.0));
        let tls12 = TlsSeen {
            version: Some("TLS 1.2".into()),
            handshake: Some("full"),
            ..Default::default()
        };
        let rows = estimated_rounds(&measured(t, Some(tls12)), Some(50.0));
        assert_eq!(rows[1].excess_rtts, Some(0.0), "TLS 1.2 needs two");
        let rows = estimated_rounds(&measured(t, None), None);
        assert!(
            rows.iter().all(|r| r.rtts.is_none()),
            "no RTT, no round trips"
        );
    }

    fn finding(kind: FindingKind, cost_ms: f64) -> Finding {
        Finding {
            kind,
            stream: 0,
            phase: Some(Phase::FirstByte),
            frames: vec![],
            cost_ms,
            cost_rtts: None,
            attributed_ms: cost_ms,
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

    #[test]
    fn server_think_time_leaves_out_a_nagle_stall_of_the_response() {
        use rttdoc_analyze::FindingKind;
        let rows = vec![Round {
            phase: "first_byte".into(),
            ms: 101.0,
            rtts: None,
            ideal_rtts: None,
            excess_rtts: None,
            basis: String::new(),
        }];
        let stall = finding(FindingKind::NagleDelayedAck, 70.0);
        let think = finding(FindingKind::ServerThinkTime, 71.0);
        assert_eq!(server_ms(&rows, Some(30.0), &[stall, think]), Some(1.0));
        assert_eq!(server_ms(&rows, None, &[]), None);
    }
}
