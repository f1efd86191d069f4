//! `--capture`: what a capture shows about the audit's findings.
//!
//! A finding is *confirmed* when a connection to one of its ports carries a
//! capture finding of a kind it names ([`crate::vocabulary::confirms`]),
//! *contradicted* when one carries a kind that shows the opposite
//! ([`crate::vocabulary::contradicts`]), and *not seen* otherwise. The other
//! way round, every capture finding that a setting could cause is listed
//! with the audit findings that explain it, or as unexplained by the
//! configuration given.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Serialize;

use rttdoc_model::FindingKind;

use crate::{vocabulary, Finding};

/// One capture finding, as the audit needs it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaptureFinding {
    pub kind: FindingKind,
    pub stream: u64,
    pub frames: Vec<u64>,
    pub cost_ms: f64,
}

/// One connection's facts the audit's joins use.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaptureConnection {
    pub stream: u64,
    pub client_ip: String,
    pub server_port: u16,
    pub tls_version: Option<String>,
    pub resumed: Option<bool>,
    pub psk_offered: bool,
    pub server_flight_bytes: u32,
    /// TFO outcome on the SYN (`cookie_request`, `accepted`, `rejected` ...).
    pub tfo: Option<String>,
    pub tfo_server_sent_cookie: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CaptureFacts {
    pub file: String,
    pub connections: Vec<CaptureConnection>,
    pub findings: Vec<CaptureFinding>,
}

/// Runs the capture analysis and keeps what the audit joins on. The one
/// call into the analysis: adapt here when its API changes.
pub fn capture_findings(path: &Path, keylog: Option<&Path>) -> Result<CaptureFacts, String> {
    let keylog = match keylog {
        Some(k) => Some(std::sync::Arc::new(
            rttdoc_analyze::keylog::KeyLog::load(k).map_err(|e| format!("key log {e}"))?,
        )),
        None => None,
    };
    let name = path.to_string_lossy().to_string();
    let mut capture = rttdoc_capture::Capture::open(&name).map_err(|e| e.to_string())?;
    let options = rttdoc_analyze::AnalyzeOptions {
        keylog,
        ..Default::default()
    };
    let mut facts = CaptureFacts {
        file: name,
        ..Default::default()
    };
    let stats = rttdoc_diagnose::analyze_capture(
        &mut capture,
        options,
        &mut |c: rttdoc_diagnose::ConnectionReport| {
            let tls = c.tls.as_ref();
            facts.connections.push(CaptureConnection {
                stream: c.stream,
                client_ip: c.client.ip.to_string(),
                server_port: c.server.port,
                tls_version: tls.and_then(|t| t.version).map(|v| v.to_string()),
                resumed: tls.and_then(|t| t.resumed),
                psk_offered: tls.is_some_and(|t| t.psk_offered || t.session_ticket_offered),
                server_flight_bytes: tls.map(|t| t.server_flight_bytes).unwrap_or(0),
                tfo: c.handshake.tfo.as_ref().map(|t| t.outcome.to_string()),
                tfo_server_sent_cookie: c
                    .handshake
                    .tfo
                    .as_ref()
                    .is_some_and(|t| t.server_sent_cookie),
            });
            for f in &c.findings {
                facts.findings.push(CaptureFinding {
                    kind: f.kind,
                    stream: f.stream,
                    frames: f.frames.clone(),
                    cost_ms: f.cost_ms,
                });
            }
        },
    );
    if let Some(e) = stats.error {
        if facts.connections.is_empty() {
            return Err(format!("{}: {e}", facts.file));
        }
    }
    facts.connections.sort_by_key(|c| c.stream);
    facts.findings.sort_by_key(|f| f.stream);
    Ok(facts)
}

/// What the capture says about one audit finding.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Evidence {
    /// `confirmed`, `contradicted` or `not_seen`.
    pub status: &'static str,
    /// Capture finding kinds seen on the finding's connections, with how
    /// many connections show each.
    pub kinds: BTreeMap<String, usize>,
    /// The connections (tcp.stream), at most 20.
    pub streams: Vec<u64>,
    /// Evidence frames of the first few capture findings.
    pub frames: Vec<u64>,
    pub text: String,
}

/// A capture finding kind a setting could cause, and what explains it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KindJoin {
    pub kind: String,
    pub connections: usize,
    pub streams: Vec<u64>,
    /// `check at file:line` of the audit findings that explain it.
    pub explained_by: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaptureJoin {
    pub file: String,
    pub connections: usize,
    pub kinds: Vec<KindJoin>,
}

fn matches(f: &Finding, c: &CaptureConnection) -> bool {
    f.ports.is_empty() || f.ports.contains(&c.server_port)
}

/// Fills every finding's evidence and lists the capture's
/// configuration-shaped findings with what explains them.
pub fn join(findings: &mut [Finding], facts: &CaptureFacts) -> CaptureJoin {
    let by_stream: BTreeMap<u64, &CaptureConnection> =
        facts.connections.iter().map(|c| (c.stream, c)).collect();
    for f in findings.iter_mut() {
        let confirms = vocabulary::confirms(f.check);
        let contradicts = vocabulary::contradicts(f.check);
        let relevant: Vec<&CaptureFinding> = facts
            .findings
            .iter()
            .filter(|cf| by_stream.get(&cf.stream).is_some_and(|c| matches(f, c)))
            .collect();
        let count = |kinds: &[FindingKind]| {
            let mut m: BTreeMap<String, BTreeSet<u64>> = BTreeMap::new();
            for cf in &relevant {
                if kinds.contains(&cf.kind) {
                    m.entry(cf.kind.name().to_string())
                        .or_default()
                        .insert(cf.stream);
                }
            }
            m
        };
        let mut yes = count(confirms);
        let no = count(contradicts);
        let mut extra = String::new();
        // Facts beyond finding kinds.
        match f.check {
            "no_resumption" => {
                // Returning clients (a client's later connections) that
                // offered nothing and were not resumed.
                let mut seen: BTreeSet<&str> = BTreeSet::new();
                let mut full = BTreeSet::new();
                for c in facts
                    .connections
                    .iter()
                    .filter(|c| matches(f, c) && c.tls_version.is_some())
                {
                    if !seen.insert(c.client_ip.as_str()) && c.resumed != Some(true) {
                        full.insert(c.stream);
                    }
                }
                if !full.is_empty() {
                    extra = format!(
                        "{} returning client connection(s) did a full handshake",
                        full.len()
                    );
                    yes.insert("full_handshake_returning_client".into(), full);
                }
            }
            "tfo_listener_without_kernel" => {
                let refused: BTreeSet<u64> = facts
                    .connections
                    .iter()
                    .filter(|c| {
                        matches(f, c)
                            && c.tfo.as_deref() == Some("cookie_request")
                            && !c.tfo_server_sent_cookie
                    })
                    .map(|c| c.stream)
                    .collect();
                if !refused.is_empty() {
                    extra = format!("{} TFO cookie request(s) got no cookie", refused.len());
                    yes.insert("tfo_cookie_refused".into(), refused);
                }
            }
            "chain_over_initcwnd" => {
                if let Some(max) = facts
                    .connections
                    .iter()
                    .filter(|c| matches(f, c))
                    .map(|c| c.server_flight_bytes)
                    .max()
                    .filter(|&b| b > 0)
                {
                    extra = format!("largest server TLS flight in the capture: {max} bytes");
                }
            }
            _ => {}
        }
        let streams: BTreeSet<u64> = yes.values().chain(no.values()).flatten().copied().collect();
        let frames: Vec<u64> = relevant
            .iter()
            .filter(|cf| confirms.contains(&cf.kind))
            .take(3)
            .flat_map(|cf| cf.frames.iter().copied())
            .take(12)
            .collect();
        let describe = |m: &BTreeMap<String, BTreeSet<u64>>| {
            m.iter()
                .map(|(k, s)| {
                    format!(
                        "{k} on {} connection{}",
                        s.len(),
                        if s.len() == 1 { "" } else { "s" }
                    )
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        let (status, text) = if !no.is_empty() && yes.is_empty() {
            ("contradicted", format!("capture shows {}", describe(&no)))
        } else if !yes.is_empty() {
            let mut t = format!("capture shows {}", describe(&yes));
            if !no.is_empty() {
                t.push_str(&format!("; but also {}", describe(&no)));
            }
            ("confirmed", t)
        } else {
            let n = facts.connections.iter().filter(|c| matches(f, c)).count();
            (
                "not_seen",
                if confirms.is_empty() {
                    "no capture finding kind measures this".to_string()
                } else {
                    format!(
                        "none of {n} matching connections shows {}",
                        confirms
                            .iter()
                            .map(|k| k.name())
                            .collect::<Vec<_>>()
                            .join(" or ")
                    )
                },
            )
        };
        let text = if extra.is_empty() || text.contains(&extra) {
            text
        } else {
            format!("{text} ({extra})")
        };
        f.evidence = Some(Evidence {
            status,
            kinds: yes
                .iter()
                .chain(no.iter())
                .map(|(k, s)| (k.clone(), s.len()))
                .collect(),
            streams: streams.into_iter().take(20).collect(),
            frames,
            text,
        });
    }
    // Capture findings a setting could cause, and what explains them.
    let mut kinds: BTreeMap<FindingKind, BTreeSet<u64>> = BTreeMap::new();
    for cf in &facts.findings {
        if vocabulary::CONFIG_EXPLAINABLE.contains(&cf.kind) {
            kinds.entry(cf.kind).or_default().insert(cf.stream);
        }
    }
    let kinds = kinds
        .into_iter()
        .map(|(kind, streams)| {
            let explained_by = findings
                .iter()
                .filter(|f| vocabulary::confirms(f.check).contains(&kind))
                .filter(|f| {
                    streams
                        .iter()
                        .any(|s| by_stream.get(s).is_some_and(|c| matches(f, c)))
                })
                .map(|f| format!("{} at {}", f.check, f.location.at))
                .collect();
            KindJoin {
                kind: kind.to_string(),
                connections: streams.len(),
                streams: streams.into_iter().take(20).collect(),
                explained_by,
            }
        })
        .collect();
    CaptureJoin {
        file: facts.file.clone(),
        connections: facts.connections.len(),
        kinds,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Confidence, Cost, Fix, Location, Severity};

    fn finding(check: &'static str, ports: Vec<u16>) -> Finding {
        Finding {
            check,
            severity: Severity::High,
            confidence: Confidence::High,
            title: String::new(),
            location: Location {
                source: "nginx",
                at: "n.conf:1".into(),
                text: String::new(),
            },
            related: vec![],
            cost: Cost {
                rtts: None,
                ms: None,
                per: "x",
                text: String::new(),
            },
            why: String::new(),
            fix: Fix {
                syntax: "nginx",
                text: String::new(),
            },
            confirms: vocabulary::confirms(check).to_vec(),
            ports,
            evidence: None,
        }
    }

    fn conn(stream: u64, port: u16, client: &str, resumed: Option<bool>) -> CaptureConnection {
        CaptureConnection {
            stream,
            client_ip: client.into(),
            server_port: port,
            tls_version: Some("TLS 1.3".into()),
            resumed,
            psk_offered: false,
            server_flight_bytes: 5000,
            tfo: None,
            tfo_server_sent_cookie: false,
        }
    }

    fn cf(kind: &str, stream: u64) -> CaptureFinding {
        CaptureFinding {
            kind: FindingKind::from_name(kind).expect("a finding kind"),
            stream,
            frames: vec![stream * 10],
            cost_ms: 30.0,
        }
    }

    #[test]
    fn findings_are_confirmed_only_by_their_kinds_on_their_ports() {
        let facts = CaptureFacts {
            file: "c.pcap".into(),
            connections: vec![
                conn(0, 443, "10.0.0.1", Some(false)),
                conn(1, 8443, "10.0.0.2", Some(false)),
            ],
            findings: vec![cf("nagle_hold", 1), cf("hello_retry_request", 0)],
        };
        let mut fs = vec![
            finding("nagle_tls_flight", vec![443]),
            finding("nagle_tls_flight", vec![8443]),
            finding("hrr_curves", vec![]),
            finding("ssl_buffer_size", vec![443]),
        ];
        let join = join(&mut fs, &facts);
        let status = |i: usize| fs[i].evidence.as_ref().unwrap().status;
        assert_eq!(status(0), "not_seen");
        assert_eq!(status(1), "confirmed");
        assert_eq!(fs[1].evidence.as_ref().unwrap().frames, vec![10]);
        assert_eq!(status(2), "confirmed");
        assert_eq!(status(3), "not_seen");
        // Both capture kinds are explained, each by its own finding.
        assert_eq!(join.kinds.len(), 2);
        let hrr = join
            .kinds
            .iter()
            .find(|k| k.kind == "hello_retry_request")
            .unwrap();
        assert_eq!(hrr.explained_by, vec!["hrr_curves at n.conf:1"]);
        let nagle = join.kinds.iter().find(|k| k.kind == "nagle_hold").unwrap();
        assert_eq!(
            nagle.explained_by.len(),
            1,
            "only the 8443 finding: {nagle:?}"
        );
    }

    #[test]
    fn resumption_in_the_capture_contradicts_no_resumption() {
        let mut fs = vec![finding("no_resumption", vec![443])];
        let facts = CaptureFacts {
            file: "c".into(),
            connections: vec![
                conn(0, 443, "10.0.0.1", Some(false)),
                conn(1, 443, "10.0.0.1", Some(true)),
            ],
            findings: vec![cf("resumption", 1)],
        };
        join(&mut fs, &facts);
        assert_eq!(fs[0].evidence.as_ref().unwrap().status, "contradicted");
        // A returning client's full handshake confirms it.
        let facts = CaptureFacts {
            file: "c".into(),
            connections: vec![
                conn(0, 443, "10.0.0.1", Some(false)),
                conn(1, 443, "10.0.0.1", Some(false)),
            ],
            findings: vec![],
        };
        join(&mut fs, &facts);
        let e = fs[0].evidence.as_ref().unwrap();
        assert_eq!(e.status, "confirmed");
        assert_eq!(e.streams, vec![1]);
    }

    #[test]
    fn an_unreadable_capture_is_an_error_naming_it() {
        let e = capture_findings(Path::new("/nonexistent/c.pcap"), None).unwrap_err();
        assert!(e.contains("/nonexistent/c.pcap"), "{e}");
    }
}
