//! `rttdoc audit`: the settings that cost round trips, found before users
//! feel them, and tied to capture evidence.
//!
//! ```text
//! nginx.conf (+ includes)  -> conf.rs, nginx.rs   effective settings per server
//! haproxy.cfg              -> haproxy.rs
//! /proc/sys (a netns)      -> kernel.rs            sysctls
//! `ip -j route`            -> kernel.rs            initcwnd, quickack
//! ssl_certificate / crt    -> certs.rs             chain bytes vs the initial window
//!                           -> checks (each module) Finding: where, cost, when, fix
//! --capture FILE           -> evidence.rs          confirmed / contradicted / explained
//! ```
//!
//! Audit findings and capture findings share one vocabulary: every audit
//! check names the capture finding kinds that would show it
//! ([`vocabulary::confirms`]).

pub mod certs;
pub mod conf;
pub mod evidence;
pub mod haproxy;
pub mod kernel;
pub mod nginx;
pub mod render;
pub mod vocabulary;

use serde::Serialize;

/// How bad a finding is when it bites.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Info,
    Low,
    Medium,
    High,
}

impl Severity {
    pub fn name(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Low => "low",
            Severity::Medium => "medium",
            Severity::High => "high",
        }
    }
    pub fn parse(s: &str) -> Option<Severity> {
        match s {
            "info" => Some(Severity::Info),
            "low" => Some(Severity::Low),
            "medium" => Some(Severity::Medium),
            "high" => Some(Severity::High),
            _ => None,
        }
    }
}

/// How sure the audit is that the setting has the effect described.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Confidence {
    Low,
    Medium,
    High,
}

impl Confidence {
    pub fn name(self) -> &'static str {
        match self {
            Confidence::Low => "low",
            Confidence::Medium => "medium",
            Confidence::High => "high",
        }
    }
}

/// Where a setting is: a file and line, a sysctl, a route.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Location {
    /// `nginx`, `haproxy`, `sysctl`, `route`, `certificate`.
    pub source: &'static str,
    /// `file:line` (`file` alone for a certificate), `net.ipv4.tcp_fastopen`,
    /// `default via 10.0.0.1 dev eth0`.
    pub at: String,
    /// The setting as written there (`tcp_nodelay off;`, `= 1`), or
    /// `(default)` when the setting is a default nobody wrote.
    pub text: String,
}

/// What a finding costs, and when.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cost {
    /// Round trips per occurrence (None when it is not a number of RTTs).
    pub rtts: Option<f64>,
    /// Milliseconds per occurrence when it is a fixed time (a timer).
    pub ms: Option<f64>,
    /// When it is paid: `every_full_tls_handshake`, `keepalive_response`, ...
    pub per: &'static str,
    /// The same in words.
    pub text: String,
}

impl Cost {
    /// `keepalive_off`'s, nginx's and HAProxy's alike: every request after
    /// a client's first waits for a new connection's handshakes (TLS's
    /// too on a `tls` listener).
    pub(crate) fn new_connection_per_request(tls: bool) -> Cost {
        Cost {
            rtts: Some(if tls { 2.0 } else { 1.0 }),
            ms: None,
            per: "returning_request",
            text: format!(
                "per request after a client's first (a page's other resources, an API client's next call): the TCP handshake's round trip before it can leave{}",
                if tls { ", and the TLS handshake's (1 RTT for TLS 1.3 or a resumed session, 2 for a full TLS 1.2 one)" } else { "" }
            ),
        }
    }
}

/// A fix in the syntax of the file (or command) it goes in.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fix {
    /// `nginx`, `haproxy`, `sysctl`, `shell`.
    pub syntax: &'static str,
    pub text: String,
}

/// One setting that costs round trips.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// The check's id (docs/audit.md), e.g. `nagle_tls_flight`.
    pub check: &'static str,
    pub severity: Severity,
    pub confidence: Confidence,
    /// What, in one line.
    pub title: String,
    /// The setting responsible.
    pub location: Location,
    /// Other settings involved (the listen line, the sysctl it needs ...).
    pub related: Vec<Location>,
    pub cost: Cost,
    /// Why it costs that: the mechanism, with the numbers used.
    pub why: String,
    pub fix: Fix,
    /// Capture finding kinds that show this when it happens.
    pub confirms: Vec<rttdoc_model::FindingKind>,
    /// TCP ports of the listeners the setting applies to (empty: every
    /// connection of the host); `--capture` looks at these connections.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ports: Vec<u16>,
    /// Filled by `--capture`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evidence: Option<evidence::Evidence>,
}

/// What an audit run read and what it could not check.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Inputs {
    pub nginx: Vec<String>,
    pub haproxy: Vec<String>,
    /// The sysctl tree read (`/proc/sys` of the audit's network namespace).
    pub sysctl_root: Option<String>,
    pub sysctls: std::collections::BTreeMap<String, String>,
    pub routes: Vec<kernel::Route>,
    pub certificates: Vec<certs::ChainSummary>,
    /// Checks skipped for want of an input (e.g. `--sysctl` for TFO).
    pub notes: Vec<String>,
}

/// Everything an audit found.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    pub inputs: Inputs,
    pub findings: Vec<Finding>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capture: Option<evidence::CaptureJoin>,
}

impl Report {
    /// Worst severity among the findings (None when there are none).
    pub fn worst(&self) -> Option<Severity> {
        self.findings.iter().map(|f| f.severity).max()
    }
    pub fn sort(&mut self) {
        self.findings.sort_by(|a, b| {
            b.severity
                .cmp(&a.severity)
                .then(b.confidence.cmp(&a.confidence))
                .then(a.location.at.cmp(&b.location.at))
                .then(a.check.cmp(b.check))
        });
    }
}

/// The facts checks share across sources: the kernel's settings (when read)
/// and the path's initial window.
#[derive(Debug, Clone, Default)]
pub struct Kernel {
    pub sysctls: Option<kernel::Sysctls>,
    pub routes: Option<Vec<kernel::Route>>,
}

impl Kernel {
    /// The initial congestion window in segments for sizing first flights:
    /// the default route's `initcwnd` (the kernel's 10, RFC 6928, when it
    /// sets none), or a smaller one any route sets (the worst path).
    pub fn initcwnd(&self) -> (u32, String) {
        let routes: &[kernel::Route] = self.routes.as_deref().unwrap_or(&[]);
        let mut best = (
            10,
            "the kernel's default initial window of 10 segments (RFC 6928)".to_string(),
        );
        if let Some(d) = routes.iter().find(|r| r.dst == "default") {
            if let Some(w) = d.initcwnd {
                best = (w, format!("initcwnd {w} on route `{}`", d.text));
            }
        }
        for r in routes {
            if let Some(w) = r.initcwnd.filter(|&w| w < best.0) {
                best = (w, format!("initcwnd {w} on route `{}`", r.text));
            }
        }
        best
    }
    pub fn sysctl(&self, name: &str) -> Option<&str> {
        self.sysctls.as_ref()?.get(name)
    }
}

/// The MSS assumed for sizing: 1500-byte Ethernet MTU minus 40 bytes of
/// IPv4 and TCP headers and 12 of the timestamp option every Linux peer
/// negotiates.
pub const ASSUMED_MSS: u32 = 1448;

/// Where routes come from.
#[derive(Debug, Clone, PartialEq)]
pub enum RouteSource {
    /// `ip -j route show table all` in the audit's network namespace.
    Live,
    /// A saved copy of that output.
    File(std::path::PathBuf),
}

/// What to audit.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub nginx: Vec<std::path::PathBuf>,
    pub haproxy: Vec<std::path::PathBuf>,
    /// The `/proc/sys` tree to read sysctls from (`--sysctl`).
    pub sysctl_root: Option<std::path::PathBuf>,
    pub routes: Option<RouteSource>,
    pub capture: Option<std::path::PathBuf>,
    pub keylog: Option<std::path::PathBuf>,
}

/// Runs every check the inputs allow.
pub fn run(opts: &Options) -> Result<Report, String> {
    let mut report = Report::default();
    let mut kernel = Kernel::default();
    if let Some(root) = &opts.sysctl_root {
        let s = kernel::Sysctls::read(root)?;
        report.inputs.sysctl_root = Some(root.display().to_string());
        report.inputs.sysctls = s.values.clone();
        kernel.sysctls = Some(s);
    }
    match &opts.routes {
        Some(RouteSource::Live) => kernel.routes = Some(kernel::read_routes()?),
        Some(RouteSource::File(p)) => {
            let text = std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?;
            kernel.routes =
                Some(kernel::parse_routes(&text).map_err(|e| format!("{}: {e}", p.display()))?);
        }
        None => {}
    }
    report.inputs.routes = kernel.routes.clone().unwrap_or_default();
    let mut keepalive = false;
    let mut tfo_listeners: Vec<Location> = Vec::new();
    let mut notes = Vec::new();
    let mut chains = Vec::new();
    for path in &opts.nginx {
        let n = nginx::Nginx::load(path)?;
        report.inputs.nginx.push(path.display().to_string());
        keepalive |= n.keepalive();
        tfo_listeners.extend(n.fastopen_listens());
        report
            .findings
            .extend(n.check(&kernel, &mut chains, &mut notes));
    }
    for path in &opts.haproxy {
        let h = haproxy::Haproxy::load(path)?;
        report.inputs.haproxy.push(path.display().to_string());
        // HAProxy keeps client connections alive by default in HTTP mode.
        keepalive = true;
        tfo_listeners.extend(h.tfo_binds());
        report
            .findings
            .extend(h.check(&kernel, &mut chains, &mut notes));
    }
    let configs = !opts.nginx.is_empty() || !opts.haproxy.is_empty();
    report
        .findings
        .extend(kernel::check(&kernel, keepalive || !configs));
    if let Some(v) = kernel
        .sysctls
        .as_ref()
        .and_then(|s| s.number("net.ipv4.tcp_fastopen"))
    {
        let v = v as u32;
        if configs
            && v & kernel::TFO_SERVER != 0
            && v & kernel::TFO_SERVER_WO_SOCKOPT == 0
            && tfo_listeners.is_empty()
        {
            report.findings.push(Finding {
                check: "tfo_kernel_without_listener",
                severity: Severity::Low,
                confidence: Confidence::High,
                title: format!("net.ipv4.tcp_fastopen = {v} enables server TFO, but no listener asks for it"),
                location: Location {
                    source: "sysctl",
                    at: "net.ipv4.tcp_fastopen".into(),
                    text: format!("net.ipv4.tcp_fastopen = {v}"),
                },
                related: vec![],
                cost: Cost {
                    rtts: Some(1.0),
                    ms: None,
                    per: "returning_tfo_client_connection",
                    text: "the 1 RTT TFO would save on each returning TFO client's connection (clients ask for a cookie and never get one)".into(),
                },
                why: "Server TFO needs both the sysctl's bit 2 and the TCP_FASTOPEN option on the listening socket (nginx `listen ... fastopen=N`, HAProxy `bind ... tfo`); none of the configurations read sets it.".into(),
                fix: Fix {
                    syntax: "nginx",
                    text: "listen 443 ssl fastopen=256;   # HAProxy: bind :443 ssl crt ... tfo".into(),
                },
                confirms: vocabulary::confirms("tfo_kernel_without_listener").to_vec(),
                evidence: None,
                ports: Vec::new(),
            });
        }
    }
    report.inputs.certificates = chains;
    report.inputs.notes = notes;
    if let Some(c) = &opts.capture {
        let facts = evidence::capture_findings(c, opts.keylog.as_deref())?;
        report.capture = Some(evidence::join(&mut report.findings, &facts));
    }
    report.sort();
    Ok(report)
}
