//! HAProxy: sections (global, defaults, frontend, listen), `bind` lines and
//! the checks. HAProxy configuration is line based: a keyword and its
//! words, `#` comments, `"..."`/`'...'` quoting and `\` escapes. A
//! `defaults` section presets every proxy section after it, until the next
//! `defaults` (HAProxy 2.6 configuration.txt, section 4).
//!
//! HAProxy sets TCP_NODELAY on its sockets itself and coalesces with
//! MSG_MORE while a message is incomplete (`option http-no-delay` turns
//! that off, for streamed and interactive responses); TFO, 0-RTT, tickets,
//! the session cache, curves, record size and the chain are the rest.

use std::path::{Path, PathBuf};

use crate::certs::{self, ChainSummary};
use crate::kernel::{TFO_SERVER, TFO_SERVER_WO_SOCKOPT};
use crate::nginx::{backlog_mismatch, tfo_listener_without_kernel};
use crate::{Confidence, Cost, Finding, Fix, Kernel, Location, Severity, ASSUMED_MSS};

/// One configuration line.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub words: Vec<String>,
    pub line: u32,
}

impl Line {
    pub fn text(&self) -> String {
        self.words.join(" ")
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    /// `global`, `defaults`, `frontend`, `listen`, `backend`, ...
    pub kind: String,
    pub name: String,
    pub line: u32,
    pub lines: Vec<Line>,
    /// For proxies: the index of the `defaults` section in force.
    pub defaults: Option<usize>,
}

#[derive(Debug, Clone, Default)]
pub struct Haproxy {
    pub file: PathBuf,
    pub sections: Vec<Section>,
}

const SECTION_KEYWORDS: &[&str] = &[
    "global",
    "defaults",
    "frontend",
    "backend",
    "listen",
    "resolvers",
    "peers",
    "userlist",
    "cache",
    "program",
    "http-errors",
    "ring",
    "mailers",
    "log-forward",
    "fcgi-app",
];

/// Splits a line into words as HAProxy does.
fn words(line: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '#' => break,
            c if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            '\\' => {
                in_word = true;
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            '"' | '\'' => {
                in_word = true;
                let q = c;
                loop {
                    match chars.next() {
                        None => return Err(format!("unterminated {q} quote")),
                        Some('\\') if q == '"' => {
                            if let Some(n) = chars.next() {
                                cur.push(n);
                            }
                        }
                        Some(n) if n == q => break,
                        Some(n) => cur.push(n),
                    }
                }
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        out.push(cur);
    }
    Ok(out)
}

impl Haproxy {
    pub fn load(path: &Path) -> Result<Haproxy, String> {
        let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Self::parse(&String::from_utf8_lossy(&bytes), path)
    }

    pub fn parse(text: &str, path: &Path) -> Result<Haproxy, String> {
        let mut h = Haproxy {
            file: path.to_path_buf(),
            sections: Vec::new(),
        };
        let mut last_defaults = None;
        for (i, raw) in text.lines().enumerate() {
            let n = i as u32 + 1;
            let w = words(raw).map_err(|e| format!("{}:{n}: {e}", path.display()))?;
            let Some(first) = w.first() else { continue };
            if SECTION_KEYWORDS.contains(&first.as_str()) {
                let kind = first.clone();
                let name = w.get(1).cloned().unwrap_or_default();
                let defaults = if matches!(kind.as_str(), "frontend" | "listen" | "backend") {
                    last_defaults
                } else {
                    None
                };
                h.sections.push(Section {
                    kind: kind.clone(),
                    name,
                    line: n,
                    lines: Vec::new(),
                    defaults,
                });
                if kind == "defaults" {
                    last_defaults = Some(h.sections.len() - 1);
                }
                continue;
            }
            match h.sections.last_mut() {
                Some(s) => s.lines.push(Line { words: w, line: n }),
                None => {
                    return Err(format!(
                        "{}:{n}: \"{first}\" outside any section",
                        path.display()
                    ))
                }
            }
        }
        Ok(h)
    }

    fn loc(&self, l: &Line) -> Location {
        Location {
            source: "haproxy",
            at: format!("{}:{}", self.file.display(), l.line),
            text: l.text(),
        }
    }

    fn global(&self) -> Vec<&Line> {
        self.sections
            .iter()
            .filter(|s| s.kind == "global")
            .flat_map(|s| s.lines.iter())
            .collect()
    }

    fn global_kw(&self, kw: &str) -> Option<&Line> {
        self.global().into_iter().rev().find(|l| l.words[0] == kw)
    }

    /// A keyword's line in a proxy section, else in its defaults.
    fn proxy_kw<'a>(&'a self, s: &'a Section, kw: &str) -> Option<&'a Line> {
        s.lines.iter().rev().find(|l| l.words[0] == kw).or_else(|| {
            s.defaults.and_then(|d| {
                self.sections[d]
                    .lines
                    .iter()
                    .rev()
                    .find(|l| l.words[0] == kw)
            })
        })
    }

    /// `option NAME` in force for a proxy (`no option NAME` turns it off).
    pub fn option(&self, s: &Section, name: &str) -> bool {
        let find = |lines: &[Line]| {
            lines.iter().rev().find_map(|l| match l.words.as_slice() {
                [o, n] if o == "option" && n == name => Some(true),
                [no, o, n] if no == "no" && o == "option" && n == name => Some(false),
                _ => None,
            })
        };
        find(&s.lines)
            .or_else(|| s.defaults.and_then(|d| find(&self.sections[d].lines)))
            .unwrap_or(false)
    }

    /// The frontends and listens in HTTP mode (their own or their
    /// defaults').
    fn http_proxies(&self) -> impl Iterator<Item = &Section> {
        self.sections.iter().filter(|s| {
            matches!(s.kind.as_str(), "frontend" | "listen")
                && self
                    .proxy_kw(s, "mode")
                    .and_then(|l| l.words.get(1))
                    .is_some_and(|m| m == "http")
        })
    }

    /// Every TCP listener with fastopen (for TFO checks across sources).
    pub fn tfo_binds(&self) -> Vec<Location> {
        self.binds()
            .into_iter()
            .filter(|(_, b)| b.tfo)
            .map(|(l, _)| self.loc(l))
            .collect()
    }

    fn binds(&self) -> Vec<(&Line, Bind)> {
        let defaults_opts: Vec<String> = self
            .global_kw("ssl-default-bind-options")
            .map(|l| l.words[1..].to_vec())
            .unwrap_or_default();
        let default_curves = self
            .global_kw("ssl-default-bind-curves")
            .and_then(|l| l.words.get(1).cloned());
        let mut out = Vec::new();
        for (si, s) in self.sections.iter().enumerate() {
            if !matches!(s.kind.as_str(), "frontend" | "listen") {
                continue;
            }
            for l in s.lines.iter().filter(|l| l.words[0] == "bind") {
                out.push((
                    l,
                    Bind::parse(l, si, &defaults_opts, default_curves.clone()),
                ));
            }
        }
        out
    }

    /// Runs the HAProxy checks.
    pub fn check(
        &self,
        kernel: &Kernel,
        chains_out: &mut Vec<ChainSummary>,
        notes: &mut Vec<String>,
    ) -> Vec<Finding> {
        let mut findings = Vec::new();
        let (initcwnd, initcwnd_src) = kernel.initcwnd();
        let base = self
            .global_kw("crt-base")
            .and_then(|l| l.words.get(1))
            .map(|b| certs::resolve(self.file.parent().unwrap_or(Path::new(".")), b))
            .unwrap_or_else(|| self.file.parent().unwrap_or(Path::new(".")).to_path_buf());
        let cache_line = self.global_kw("tune.ssl.cachesize");
        let cache_off = cache_line
            .and_then(|l| l.words.get(1))
            .is_some_and(|v| v == "0");
        let sysctls = kernel.sysctls.as_ref();
        let mut any_tls = false;
        for (line, b) in self.binds() {
            let section = &self.sections[b.section];
            if b.tfo {
                match sysctls.and_then(|k| k.number("net.ipv4.tcp_fastopen")) {
                    Some(v) if v as u32 & (TFO_SERVER | TFO_SERVER_WO_SOCKOPT) == 0 => {
                        findings.push(tfo_listener_without_kernel(self.loc(line), v, "bind ... tfo"));
                    }
                    Some(_) => {}
                    None => notes.push(format!(
                        "{}:{}: bind ... tfo: pass --sysctl to check that net.ipv4.tcp_fastopen has the server bit (2)",
                        self.file.display(),
                        line.line
                    )),
                }
            }
            if let Some(somaxconn) = sysctls.and_then(|k| k.number("net.core.somaxconn")) {
                let backlog = b
                    .backlog
                    .or_else(|| {
                        self.proxy_kw(section, "backlog")
                            .and_then(|l| l.words.get(1)?.parse().ok())
                    })
                    .or_else(|| {
                        self.proxy_kw(section, "maxconn")
                            .and_then(|l| l.words.get(1)?.parse().ok())
                    })
                    .or_else(|| {
                        self.global_kw("maxconn")
                            .and_then(|l| l.words.get(1)?.parse().ok())
                    });
                if let Some(backlog) = backlog.filter(|&v| v > somaxconn) {
                    findings.push(backlog_mismatch(
                        self.loc(line),
                        backlog,
                        somaxconn,
                        sysctls.and_then(|k| k.number("net.ipv4.tcp_max_syn_backlog")),
                        sysctls.and_then(|k| k.number("net.ipv4.tcp_syncookies")),
                    ));
                }
            }
            if !b.ssl {
                continue;
            }
            any_tls = true;
            let resumable = !b.no_tls_tickets || !cache_off;
            if !resumable {
                findings.push(Finding {
                    check: "no_resumption",
                    severity: if b.tls12 { Severity::Medium } else { Severity::Low },
                    confidence: Confidence::High,
                    title: format!("{} {}: no TLS session can be resumed (no-tls-tickets and tune.ssl.cachesize 0)", section.kind, section.name),
                    location: self.loc(line),
                    related: cache_line.map(|l| vec![self.loc(l)]).unwrap_or_default(),
                    cost: Cost {
                        rtts: if b.tls12 { Some(1.0) } else { None },
                        ms: None,
                        per: "returning_client_connection",
                        text: "1 RTT on every returning client's TLS 1.2 connection; TLS 1.3: a full handshake every time and no 0-RTT".into(),
                    },
                    why: "Without tickets, resumption needs the session cache, and tune.ssl.cachesize 0 disables it.".into(),
                    fix: Fix { syntax: "haproxy", text: "tune.ssl.cachesize 20000   # global; or drop no-tls-tickets".into() },
                    confirms: crate::vocabulary::confirms("no_resumption").to_vec(),
                    evidence: None,
                    ports: Vec::new(),
                });
            }
            if b.allow_0rtt {
                let guarded = section
                    .lines
                    .iter()
                    .chain(
                        section
                            .defaults
                            .map(|d| self.sections[d].lines.as_slice())
                            .unwrap_or(&[]),
                    )
                    .any(|l| {
                        l.words.len() >= 2
                            && l.words[0] == "http-request"
                            && l.words[1] == "wait-for-handshake"
                    });
                if !guarded && b.tls13 && resumable {
                    findings.push(Finding {
                        check: "early_data_no_replay_guard",
                        severity: Severity::High,
                        confidence: Confidence::High,
                        title: format!("{} {} accepts 0-RTT early data and never waits for the handshake", section.kind, section.name),
                        location: self.loc(line),
                        related: vec![],
                        cost: Cost {
                            rtts: None,
                            ms: None,
                            per: "replayed_request",
                            text: "no time: a replay risk. Early data can be replayed by an attacker, and a POST in it runs twice".into(),
                        },
                        why: "allow-0rtt makes HAProxy pass requests that arrived as early data on at once; only `http-request wait-for-handshake` (for unsafe requests) holds them until the handshake proves the client live (configuration.txt: allow-0rtt).".into(),
                        fix: Fix {
                            syntax: "haproxy",
                            text: "http-request wait-for-handshake if ! METH_GET ! METH_HEAD ! METH_OPTIONS   # in this frontend".into(),
                        },
                        confirms: crate::vocabulary::confirms("early_data_no_replay_guard").to_vec(),
                        evidence: None,
                        ports: Vec::new(),
                    });
                }
                if !b.tls13 || !resumable {
                    findings.push(Finding {
                        check: "early_data_ineffective",
                        severity: Severity::Medium,
                        confidence: Confidence::High,
                        title: "allow-0rtt has no effect".into(),
                        location: self.loc(line),
                        related: vec![],
                        cost: Cost {
                            rtts: Some(1.0),
                            ms: None,
                            per: "returning_client_connection",
                            text: "the 1 RTT 0-RTT was meant to save is not saved".into(),
                        },
                        why: if !b.tls13 { "TLS 1.3 is not enabled on this bind (ssl-max-ver / force-tlsv12)".into() } else { "no session can be resumed (no-tls-tickets, tune.ssl.cachesize 0), and early data needs a resumed session".into() },
                        fix: Fix { syntax: "haproxy", text: "bind ... ssl crt ... ssl-max-ver TLSv1.3 allow-0rtt   # and tickets or a session cache".into() },
                        confirms: crate::vocabulary::confirms("early_data_ineffective").to_vec(),
                        evidence: None,
                        ports: Vec::new(),
                    });
                }
            }
            if b.tls13 {
                if let Some(curves) = &b.curves {
                    let groups: Vec<String> = curves
                        .split(':')
                        .map(|g| g.trim().to_ascii_lowercase())
                        .collect();
                    if !groups.iter().any(|g| g == "x25519") {
                        let hybrid = groups.iter().any(|g| g.starts_with("x25519mlkem"));
                        findings.push(Finding {
                            check: "hrr_curves",
                            severity: if hybrid { Severity::Medium } else { Severity::High },
                            confidence: Confidence::High,
                            title: format!("curves {curves} accept no x25519 key share: common clients get a HelloRetryRequest"),
                            location: b.curves_at.as_ref().map(|_| self.loc(line)).unwrap_or_else(|| self.global_kw("ssl-default-bind-curves").map(|l| self.loc(l)).unwrap_or_else(|| self.loc(line))),
                            related: vec![],
                            cost: Cost { rtts: Some(1.0), ms: None, per: "full_tls13_handshake", text: "1 RTT on every TLS 1.3 handshake from a client that sent only an x25519 key share".into() },
                            why: "A TLS 1.3 client sends key shares for its preferred groups; when none is in the server's list the server answers with a HelloRetryRequest and the client sends a second ClientHello.".into(),
                            fix: Fix { syntax: "haproxy", text: format!("curves X25519:{curves}") },
                            confirms: crate::vocabulary::confirms("hrr_curves").to_vec(),
                            evidence: None,
                            ports: Vec::new(),
                        });
                    }
                }
            }
            for crt in &b.crts {
                let path = certs::resolve(&base, crt);
                let files: Vec<PathBuf> = if path.is_dir() {
                    let mut v: Vec<PathBuf> = std::fs::read_dir(&path)
                        .map(|r| r.filter_map(|e| e.ok()).map(|e| e.path()).collect())
                        .unwrap_or_default();
                    v.retain(|p| {
                        let n = p
                            .file_name()
                            .map(|n| n.to_string_lossy().to_string())
                            .unwrap_or_default();
                        !n.starts_with('.')
                            && ![".key", ".issuer", ".ocsp", ".sctl"]
                                .iter()
                                .any(|x| n.ends_with(x))
                    });
                    v.sort();
                    v
                } else {
                    vec![path]
                };
                for f in files {
                    // HAProxy staples <crt>.ocsp when it exists.
                    let ocsp = certs::file_size(&PathBuf::from(format!("{}.ocsp", f.display())));
                    match certs::read_chain(&f, ocsp) {
                        Ok(chain) => {
                            findings.extend(certs::chain_incomplete(
                                &chain,
                                self.loc(line),
                                Vec::new(),
                            ));
                            let flight = if b.tls13 {
                                chain.flight_tls13
                            } else {
                                chain.flight_tls12
                            };
                            let segments = certs::flight_segments(flight, ASSUMED_MSS);
                            if segments > initcwnd {
                                let root = chain.root_bytes();
                                findings.push(Finding {
                                    check: "chain_over_initcwnd",
                                    severity: Severity::High,
                                    confidence: if segments > initcwnd + 1 { Confidence::High } else { Confidence::Medium },
                                    title: format!("the TLS server flight (~{flight} bytes, {segments} segments) does not fit the initial window of {initcwnd} segments"),
                                    location: self.loc(line),
                                    related: vec![Location { source: "certificate", at: chain.file.clone(), text: format!("{} certificates, {} bytes DER", chain.certificates.len(), chain.der_bytes_total) }],
                                    cost: Cost { rtts: Some(1.0), ms: None, per: "full_tls_handshake", text: "1 RTT on every full TLS handshake".into() },
                                    why: format!("A new connection may send {initcwnd} segments ({initcwnd_src}) before the first ACK; the flight needs {segments} at an MSS of {ASSUMED_MSS}."),
                                    fix: Fix {
                                        syntax: "shell",
                                        text: format!("{}use an ECDSA P-256 leaf, or: ip route change default via GATEWAY dev DEV initcwnd {}", if root > 0 { format!("remove the self-signed root ({root} bytes) from {}; ", chain.file) } else { String::new() }, segments + 2),
                                    },
                                    confirms: crate::vocabulary::confirms("chain_over_initcwnd").to_vec(),
                                    evidence: None,
                                    ports: Vec::new(),
                                });
                            }
                            if !chains_out.iter().any(|c| c.file == chain.file) {
                                chains_out.push(chain);
                            }
                        }
                        Err(e) => notes.push(format!("{}:{}: {e}", self.file.display(), line.line)),
                    }
                }
            }
        }
        // Streamed HTTP responses and MSG_MORE.
        for s in self.http_proxies() {
            if self.option(s, "http-no-delay") {
                continue;
            }
            let ports = bind_ports(s);
            findings.push(Finding {
                check: "haproxy_msg_more",
                severity: Severity::Low,
                confidence: Confidence::Medium,
                title: format!("{} {}: HAProxy asks the kernel to wait for more data while a response is incomplete", s.kind, s.name),
                location: Location {
                    source: "haproxy",
                    at: format!("{}:{}", self.file.display(), s.line),
                    text: format!("{} {} (no option http-no-delay)", s.kind, s.name),
                },
                related: vec![],
                cost: Cost {
                    rtts: None,
                    ms: Some(200.0),
                    per: "streamed_response_chunk",
                    text: "up to ~200 ms per small chunk of a response the backend streams slowly (server-sent events, token streams, interactive chunked bodies); whole responses are not delayed".into(),
                },
                why: "In HTTP mode HAProxy sends with MSG_MORE while it knows more of the message is to come, so the kernel keeps a partial segment for more data (configuration.txt, option http-no-delay: \"typical delays are around 200 ms per round trip\"); a backend writing small pieces with pauses sees each piece held.".into(),
                fix: Fix {
                    syntax: "haproxy",
                    text: "option http-no-delay   # in this frontend (or its backend) when it carries streamed or interactive responses".into(),
                },
                confirms: crate::vocabulary::confirms("haproxy_msg_more").to_vec(),
                evidence: None,
                ports,
            });
        }
        // Server connections closed after each response: a connection per
        // request to the backend.
        for s in self.http_proxies() {
            // The option in the frontend or listen, or in its default backend.
            let backend = self
                .proxy_kw(s, "default_backend")
                .and_then(|l| l.words.get(1))
                .and_then(|b| {
                    self.sections
                        .iter()
                        .find(|x| x.kind == "backend" && &x.name == b)
                });
            let closes = |x: &Section| {
                ["http-server-close", "httpclose"]
                    .into_iter()
                    .find(|o| self.option(x, o))
            };
            let Some((at, option)) = closes(s)
                .map(|o| (s, o))
                .or_else(|| backend.and_then(|b| closes(b).map(|o| (b, o))))
            else {
                continue;
            };
            let ports = bind_ports(s);
            findings.push(Finding {
                check: "upstream_per_request",
                severity: Severity::Medium,
                confidence: Confidence::High,
                title: format!(
                    "{} {}: every request opens a new connection to its server (option {option})",
                    s.kind, s.name
                ),
                location: Location {
                    source: "haproxy",
                    at: format!("{}:{}", self.file.display(), at.line),
                    text: format!("{} {} (option {option})", at.kind, at.name),
                },
                related: vec![],
                cost: Cost {
                    rtts: Some(1.0),
                    ms: None,
                    per: "proxied_request",
                    text: "per proxied request: the round trip to the server for its TCP handshake (and TLS's with `ssl` on the server line) before the request leaves, on top of the server's own time".into(),
                },
                why: format!(
                    "With option {option} HAProxy closes the server-side connection once a response is complete, so the next request, even on the same client connection, opens another (configuration.txt); the default, keep-alive with http-reuse safe, keeps and reuses them."
                ),
                fix: Fix {
                    syntax: "haproxy",
                    text: format!("no option {option}   # keep-alive to the servers (the default), with http-reuse safe"),
                },
                confirms: crate::vocabulary::confirms("upstream_per_request").to_vec(),
                evidence: None,
                ports,
            });
        }
        // Client connections closed after each response: `option
        // httpclose` on the frontend or listen (itself or its defaults)
        // answers `Connection: close` and closes the client's side too.
        for s in self.http_proxies() {
            if !self.option(s, "httpclose") {
                continue;
            }
            let tls = s.lines.iter().any(|l| {
                l.words.first().is_some_and(|w| w == "bind") && l.words.iter().any(|w| w == "ssl")
            });
            findings.push(Finding {
                check: "keepalive_off",
                severity: Severity::Medium,
                confidence: Confidence::High,
                title: format!(
                    "{} {}: every client connection closes after its response (option httpclose)",
                    s.kind, s.name
                ),
                location: Location {
                    source: "haproxy",
                    at: format!("{}:{}", self.file.display(), s.line),
                    text: format!("{} {} (option httpclose)", s.kind, s.name),
                },
                related: vec![],
                cost: Cost::new_connection_per_request(tls),
                why: "With option httpclose HAProxy closes the client's connection once the response is complete (configuration.txt): the client's next request needs a new connection, and waits for its handshakes.".into(),
                fix: Fix {
                    syntax: "haproxy",
                    text: "no option httpclose   # keep-alive (the default), with timeout http-keep-alive above the clients' pauses".into(),
                },
                confirms: crate::vocabulary::confirms("keepalive_off").to_vec(),
                evidence: None,
                ports: bind_ports(s),
            });
        }
        // CORS preflight answers a browser keeps for 5 s, or little more.
        for s in self
            .sections
            .iter()
            .filter(|s| matches!(s.kind.as_str(), "frontend" | "listen" | "backend"))
        {
            let Some(mut f) = self.preflight_uncached(s) else {
                continue;
            };
            // (A backend's answers reach the clients of the frontends
            // that use it.)
            f.ports = match s.kind.as_str() {
                "backend" => self
                    .sections
                    .iter()
                    .filter(|x| {
                        x.lines.iter().any(|l| {
                            matches!(l.words[0].as_str(), "default_backend" | "use_backend")
                                && l.words.get(1) == Some(&s.name)
                        })
                    })
                    .flat_map(bind_ports)
                    .collect(),
                _ => bind_ports(s),
            };
            findings.push(f);
        }
        // HTTP/2 uploads paced by a small initial window.
        if let Some(f) = self.h2_upload_window_small() {
            findings.push(f);
        }
        // Each bind's findings apply to its port.
        for (line, _) in self.binds() {
            let at = self.loc(line).at;
            if let Some(port) = bind_port(line) {
                // (Unless a finding named its ports itself: one of
                // several binds it is about.)
                for f in findings
                    .iter_mut()
                    .filter(|f| f.location.at == at && f.ports.is_empty())
                {
                    f.ports = vec![port];
                }
            }
        }
        if any_tls {
            let maxrecord = self.global_kw("tune.ssl.maxrecord");
            let size = maxrecord
                .and_then(|l| l.words.get(1)?.parse::<u32>().ok())
                .filter(|&v| v > 0)
                .unwrap_or(16384);
            let segments = (size.min(16384) + 22).div_ceil(ASSUMED_MSS);
            if segments > initcwnd {
                let ssai = sysctls.and_then(|k| k.number("net.ipv4.tcp_slow_start_after_idle"));
                findings.push(Finding {
                    check: "ssl_buffer_size",
                    severity: if ssai == Some(1) { Severity::Medium } else { Severity::Low },
                    confidence: Confidence::Medium,
                    title: format!("TLS records of up to {} KB: {segments} segments, more than the initial window of {initcwnd}", size / 1024),
                    location: match maxrecord {
                        Some(l) => self.loc(l),
                        None => Location { source: "haproxy", at: format!("{}:{}", self.file.display(), self.sections.iter().find(|s| s.kind == "global").map(|s| s.line).unwrap_or(1)), text: "(default) tune.ssl.maxrecord 0".into() },
                    },
                    related: vec![],
                    cost: Cost { rtts: Some(1.0), ms: None, per: "large_response_on_small_window", text: "1 RTT to the first decryptable byte of a large response sent on a small window (after idle, a new connection)".into() },
                    why: "With tune.ssl.maxrecord 0 HAProxy passes up to 16 KB to each SSL_write; a client can decrypt a record only when all of it arrived, and 12 segments do not leave in one round on a 10-segment window.".into(),
                    fix: Fix { syntax: "haproxy", text: "tune.ssl.maxrecord 2859   # global: two segments per record at the start of a transfer".into() },
                    confirms: crate::vocabulary::confirms("ssl_buffer_size").to_vec(),
                    evidence: None,
                    ports: Vec::new(),
                });
            }
        }
        findings
    }
}

impl Haproxy {
    /// Binds that speak HTTP/2 to clients under a per-stream initial
    /// window under [`H2_WINDOW_ENOUGH`]: `tune.h2.initial-window-size`
    /// (3.0 and later: `tune.h2.fe.initial-window-size`), 65,535 bytes
    /// unless set. HAProxy before 3.1 grants each stream that much and
    /// gives it back as it forwards the data: a client's upload gets at
    /// most one window a round trip (`h2_window_limited`). 3.1 and later
    /// size the window from `tune.h2.fe.rxbuf` (1600k by default), so a
    /// configuration that sets that is of those versions and passes.
    fn h2_upload_window_small(&self) -> Option<Finding> {
        let binds: Vec<&Line> = self
            .binds()
            .into_iter()
            .filter(|(_, b)| b.h2)
            .map(|(l, _)| l)
            .collect();
        let first = *binds.first()?;
        if self.global_kw("tune.h2.fe.rxbuf").is_some() {
            return None;
        }
        let set = self
            .global_kw("tune.h2.fe.initial-window-size")
            .or_else(|| self.global_kw("tune.h2.initial-window-size"));
        let window = match set {
            Some(l) => l.words.get(1)?.parse::<u64>().ok()?,
            None => 65_535,
        };
        if window >= H2_WINDOW_ENOUGH {
            return None;
        }
        let per_s = window as f64 / 0.040;
        let ports = binds.iter().filter_map(|l| bind_port(l)).collect();
        Some(Finding {
            check: "h2_upload_window_small",
            severity: if set.is_none() { Severity::Medium } else { Severity::Low },
            // (The version decides: 3.1 and later size the window
            // otherwise.)
            confidence: Confidence::Medium,
            title: format!(
                "HTTP/2 clients may upload {window} bytes a stream per round trip ({})",
                if set.is_some() { "tune.h2.initial-window-size" } else { "the default initial window" }
            ),
            location: match set {
                Some(l) => self.loc(l),
                None => self.loc(first),
            },
            related: binds.iter().skip(usize::from(set.is_none())).map(|l| self.loc(l)).collect(),
            cost: Cost {
                rtts: None,
                ms: None,
                per: "http2_upload",
                text: format!(
                    "an upload over HTTP/2 larger than {window} bytes waits a round trip for each WINDOW_UPDATE: at most {window} bytes a round trip, {:.1} MB/s at 40 ms, whatever the path carries",
                    per_s / 1e6
                ),
            },
            why: format!(
                "HAProxy before 3.1 announces SETTINGS_INITIAL_WINDOW_SIZE {window} to its HTTP/2 clients and gives each stream's credit back as it forwards the data (configuration.txt: 65535 \"roughly allows up to 5 Mbps of upload bandwidth per client over a network showing a 100 ms ping time\"): a client spends the window, waits for the WINDOW_UPDATE, and uploads one window a round trip."
            ),
            fix: Fix {
                syntax: "haproxy",
                text: "tune.h2.initial-window-size 4194304   # global: at least bandwidth x RTT (3.0: tune.h2.fe.initial-window-size; 3.1 and later: tune.h2.fe.rxbuf)".into(),
            },
            confirms: crate::vocabulary::confirms("h2_upload_window_small").to_vec(),
            evidence: None,
            ports,
        })
    }

    /// A proxy section whose responses carry a CORS preflight's
    /// permissions (`Access-Control-Allow-Methods` or `-Headers`, set by
    /// `http-response` or `http-after-response` `set-header`/`add-header`,
    /// or an `http-request return`'s `hdr`) without an
    /// `Access-Control-Max-Age` of 10 minutes or more set the same way in
    /// the section (nginx.rs's `preflight_uncached`).
    fn preflight_uncached(&self, s: &Section) -> Option<Finding> {
        // (Each line's header fields: name and value.)
        let fields = |l: &'_ Line| -> Vec<(usize, usize)> {
            let w = &l.words;
            match (w.first().map(String::as_str), w.get(1).map(String::as_str)) {
                (
                    Some("http-response" | "http-after-response"),
                    Some("set-header" | "add-header"),
                ) => {
                    vec![(2, 3)]
                }
                (Some("http-request"), Some("return")) => (2..w.len())
                    .filter(|&i| w[i] == "hdr")
                    .map(|i| (i + 1, i + 2))
                    .collect(),
                _ => Vec::new(),
            }
        };
        let named = |name: &str| {
            s.lines.iter().find_map(|l| {
                fields(l).into_iter().find_map(|(n, v)| {
                    l.words
                        .get(n)
                        .is_some_and(|h| h.eq_ignore_ascii_case(name))
                        .then(|| (l, l.words.get(v).map_or("", String::as_str)))
                })
            })
        };
        let (allows, _) = named("Access-Control-Allow-Methods")
            .or_else(|| named("Access-Control-Allow-Headers"))?;
        let max_age = named("Access-Control-Max-Age");
        crate::nginx::preflight_uncached(
            self.loc(allows),
            max_age.map(|(l, v)| (self.loc(l), v)),
            None,
            Fix {
                syntax: "haproxy",
                text: format!(
                    "{} Access-Control-Max-Age 7200   # beside Access-Control-Allow-Methods, in {} {} (Chromium keeps at most 7200 s, Firefox 86400 s)",
                    if allows.words[0] == "http-request" { "http-request return ... hdr" } else { "http-response set-header" },
                    s.kind,
                    s.name
                ),
            },
        )
    }
}

/// A `bind` line's parameters that matter here.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Bind {
    pub section: usize,
    pub ssl: bool,
    pub crts: Vec<String>,
    pub tfo: bool,
    pub allow_0rtt: bool,
    pub curves: Option<String>,
    /// The curves came from the bind line itself (not the global default).
    pub curves_at: Option<u32>,
    pub no_tls_tickets: bool,
    pub backlog: Option<u64>,
    pub tls13: bool,
    pub tls12: bool,
    /// It speaks HTTP/2 to clients: `proto h2`, or `h2` in its `alpn`.
    pub h2: bool,
}

impl Bind {
    fn parse(
        l: &Line,
        section: usize,
        default_opts: &[String],
        default_curves: Option<String>,
    ) -> Bind {
        let mut b = Bind {
            section,
            curves: default_curves,
            ..Default::default()
        };
        let mut min_ver: Option<String> = None;
        let mut max_ver: Option<String> = None;
        let mut apply = |words: &[String], b: &mut Bind, from_bind: bool| {
            let mut i = 0;
            while i < words.len() {
                let w = words[i].as_str();
                let next = words.get(i + 1).cloned();
                match w {
                    "ssl" => b.ssl = true,
                    "tfo" => b.tfo = true,
                    "allow-0rtt" => b.allow_0rtt = true,
                    "no-tls-tickets" => b.no_tls_tickets = true,
                    "crt" => {
                        if let Some(n) = next {
                            b.crts.push(n);
                            i += 1;
                        }
                    }
                    "curves" => {
                        b.curves = next;
                        if from_bind {
                            b.curves_at = Some(l.line);
                        }
                        i += 1;
                    }
                    "backlog" => {
                        b.backlog = next.and_then(|n| n.parse().ok());
                        i += 1;
                    }
                    "ssl-min-ver" => {
                        min_ver = next;
                        i += 1;
                    }
                    "ssl-max-ver" => {
                        max_ver = next;
                        i += 1;
                    }
                    "proto" | "alpn" => {
                        b.h2 |= next
                            .as_deref()
                            .is_some_and(|v| v.split(',').any(|p| p == "h2"));
                        i += 1;
                    }
                    "force-tlsv12" => max_ver = Some("TLSv1.2".into()),
                    "force-tlsv13" => min_ver = Some("TLSv1.3".into()),
                    _ => {}
                }
                i += 1;
            }
        };
        apply(default_opts, &mut b, false);
        apply(&l.words[2.min(l.words.len())..], &mut b, true);
        // HAProxy 2.6 with OpenSSL 1.1.1+: TLS 1.2 and 1.3 by default.
        b.tls13 = max_ver.as_deref().is_none_or(|v| v == "TLSv1.3");
        b.tls12 = min_ver.as_deref().is_none_or(|v| v != "TLSv1.3");
        b
    }
}

/// A per-stream HTTP/2 window at least this large leaves uploads to the
/// path: 1 MB a round trip is 26 MB/s at 40 ms.
const H2_WINDOW_ENOUGH: u64 = 1 << 20;

/// The ports a proxy's `bind` lines listen on.
fn bind_ports(s: &Section) -> Vec<u16> {
    s.lines
        .iter()
        .filter(|l| l.words[0] == "bind")
        .filter_map(bind_port)
        .collect()
}

/// The port a `bind` line listens on (`bind 10.0.0.1:443 ...`).
fn bind_port(l: &Line) -> Option<u16> {
    l.words.get(1)?.rsplit(':').next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h2_window_findings(text: &str) -> Vec<Finding> {
        let h = Haproxy::parse(text, Path::new("h.cfg")).unwrap();
        h.check(&Kernel::default(), &mut Vec::new(), &mut Vec::new())
            .into_iter()
            .filter(|f| f.check == "h2_upload_window_small")
            .collect()
    }

    #[test]
    fn http2_clients_under_the_default_initial_window_upload_a_window_a_round_trip() {
        let front = "defaults\n  mode http\nfrontend f\n  bind :8443 ssl crt x.pem alpn h2,http/1.1\n  bind :8080\n  bind :8081 proto h2\n";
        let f = h2_window_findings(front);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].location.at, "h.cfg:4");
        assert_eq!(f[0].ports, [8443, 8081]);
        assert_eq!(f[0].severity, Severity::Medium);
        assert_eq!(f[0].confirms, [rttdoc_model::FindingKind::H2WindowLimited]);
        // A small window set on purpose is still small; 1 MB is enough;
        // tune.h2.fe.rxbuf is HAProxy 3.1's, which sizes it otherwise.
        let set = format!("global\n  tune.h2.initial-window-size 262144\n{front}");
        let f = h2_window_findings(&set);
        assert_eq!(
            (f[0].location.at.as_str(), f[0].severity),
            ("h.cfg:2", Severity::Low)
        );
        for enough in [
            "tune.h2.initial-window-size 1048576",
            "tune.h2.fe.initial-window-size 4194304",
            "tune.h2.fe.rxbuf 1600k",
        ] {
            assert!(
                h2_window_findings(&format!("global\n  {enough}\n{front}")).is_empty(),
                "{enough}"
            );
        }
        // No bind speaks HTTP/2: nothing to upload on it.
        let h1 = "defaults\n  mode http\nfrontend f\n  bind :8443 ssl crt x.pem alpn http/1.1\n";
        assert!(h2_window_findings(h1).is_empty());
    }

    #[test]
    fn words_follow_haproxy_quoting_and_comments() {
        assert_eq!(
            words("bind :443 ssl crt \"/a b.pem\" # x").unwrap(),
            vec!["bind", ":443", "ssl", "crt", "/a b.pem"]
        );
        assert_eq!(words("  a\\ b 'c#d'").unwrap(), vec!["a b", "c#d"]);
        assert!(words("a \"b").is_err());
    }

    #[test]
    fn proxies_take_the_defaults_section_above_them() {
        let h = Haproxy::parse(
            "defaults\n  option http-no-delay\nfrontend a\n  bind :80\ndefaults\n  mode http\nfrontend b\n  bind :81\n  no option http-no-delay\n",
            Path::new("/x/haproxy.cfg"),
        )
        .unwrap();
        let a = h.sections.iter().find(|s| s.name == "a").unwrap();
        let b = h.sections.iter().find(|s| s.name == "b").unwrap();
        assert!(h.option(a, "http-no-delay"));
        assert!(!h.option(b, "http-no-delay"));
        assert!(Haproxy::parse("bind :80\n", Path::new("/x")).is_err());
    }

    #[test]
    fn server_connections_closed_after_each_response_are_a_connection_per_request() {
        let checks = |text: &str| -> Vec<Finding> {
            let h = Haproxy::parse(text, Path::new("/x/h.cfg")).unwrap();
            h.check(&Kernel::default(), &mut Vec::new(), &mut Vec::new())
                .into_iter()
                .filter(|f| f.check == "upstream_per_request")
                .collect()
        };
        // In the defaults, the frontend inherits it.
        let f = checks("defaults\n  mode http\n  option http-server-close\nfrontend f\n  bind :80\n  default_backend b\nbackend b\n  server s 10.0.0.5:8080\n");
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].ports, vec![80]);
        // In the default backend only.
        let f = checks("defaults\n  mode http\nfrontend f\n  bind :80\n  default_backend b\nbackend b\n  option httpclose\n  server s 10.0.0.5:8080\n");
        assert_eq!(f.len(), 1);
        assert!(f[0].title.contains("httpclose"), "{}", f[0].title);
        // HAProxy's default (keep-alive, http-reuse safe), or TCP mode: none.
        assert!(checks("defaults\n  mode http\nfrontend f\n  bind :80\n  default_backend b\nbackend b\n  server s 10.0.0.5:8080\n").is_empty());
        assert!(checks(
            "defaults\n  mode tcp\n  option http-server-close\nfrontend f\n  bind :80\n"
        )
        .is_empty());
    }

    #[test]
    fn preflight_answers_without_a_max_age_in_their_section_are_kept_five_seconds() {
        let checks = |text: &str| -> Vec<Finding> {
            let h = Haproxy::parse(text, Path::new("/x/h.cfg")).unwrap();
            h.check(&Kernel::default(), &mut Vec::new(), &mut Vec::new())
                .into_iter()
                .filter(|f| f.check == "cors_preflight_uncached")
                .collect()
        };
        // HAProxy's own answer to the preflight (2.2's `http-request
        // return`), no max age.
        let f = checks("defaults\n  mode http\nfrontend api\n  bind :8081\n  http-request return status 204 hdr Access-Control-Allow-Origin \"*\" hdr Access-Control-Allow-Methods \"GET, PUT\" if METH_OPTIONS\n  default_backend app\nbackend app\n  server s 10.0.0.5:8080\n");
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].severity, Severity::Medium);
        assert_eq!(f[0].location.at, "/x/h.cfg:5");
        assert_eq!(f[0].ports, vec![8081]);
        assert!(
            f[0].fix.text.contains("hdr Access-Control-Max-Age 7200"),
            "{}",
            f[0].fix.text
        );
        // Set on the backend's responses: the frontends that use it.
        let f = checks("defaults\n  mode http\nfrontend api\n  bind :8081\n  use_backend app if { path_beg /api }\nbackend app\n  http-response set-header Access-Control-Allow-Headers content-type\n  http-response set-header Access-Control-Max-Age 60\n  server s 10.0.0.5:8080\n");
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].severity, Severity::Low);
        assert_eq!(f[0].location.at, "/x/h.cfg:8", "the max age's line");
        assert_eq!(f[0].ports, vec![8081]);
        // Kept long enough, or no preflight answered: none.
        assert!(checks("frontend api\n  bind :8081\n  mode http\n  http-after-response set-header Access-Control-Allow-Methods PUT\n  http-after-response set-header access-control-max-age 7200\n").is_empty());
        assert!(checks("frontend api\n  bind :8081\n  mode http\n  http-response set-header Access-Control-Allow-Origin *\n").is_empty());
    }

    #[test]
    fn client_connections_closed_after_each_response_are_keepalive_off() {
        let checks = |text: &str| -> Vec<Finding> {
            let h = Haproxy::parse(text, Path::new("/x/h.cfg")).unwrap();
            h.check(&Kernel::default(), &mut Vec::new(), &mut Vec::new())
                .into_iter()
                .filter(|f| f.check == "keepalive_off")
                .collect()
        };
        // On the frontend, or inherited from its defaults.
        let f = checks("defaults\n  mode http\nfrontend f\n  bind :80\n  option httpclose\n  default_backend b\nbackend b\n  server s 10.0.0.5:8080\n");
        assert_eq!(f.len(), 1);
        assert_eq!((f[0].ports.clone(), f[0].cost.rtts), (vec![80], Some(1.0)));
        assert_eq!(f[0].location.at, "/x/h.cfg:3");
        let f = checks("defaults\n  mode http\n  option httpclose\nlisten l\n  bind :443 ssl crt a.pem\n  server s 10.0.0.5:8080\n");
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].cost.rtts, Some(2.0), "TLS: its handshake too");
        // In the backend only (the server side), http-server-close (the
        // client side stays alive), turned off again, TCP mode: none.
        assert!(checks("defaults\n  mode http\nfrontend f\n  bind :80\n  default_backend b\nbackend b\n  option httpclose\n  server s 10.0.0.5:8080\n").is_empty());
        assert!(checks(
            "defaults\n  mode http\n  option http-server-close\nfrontend f\n  bind :80\n"
        )
        .is_empty());
        assert!(checks("defaults\n  mode http\n  option httpclose\nfrontend f\n  bind :80\n  no option httpclose\n").is_empty());
        assert!(
            checks("defaults\n  mode tcp\n  option httpclose\nfrontend f\n  bind :80\n").is_empty()
        );
    }

    #[test]
    fn bind_parameters_and_global_defaults_combine() {
        let h = Haproxy::parse(
            "global\n  ssl-default-bind-options no-tls-tickets ssl-max-ver TLSv1.2\n  ssl-default-bind-curves P-256\nfrontend f\n  bind :443 ssl crt a.pem tfo allow-0rtt backlog 64\n  bind :8443 ssl crt b.pem ssl-max-ver TLSv1.3 curves X25519\n",
            Path::new("/x/h.cfg"),
        )
        .unwrap();
        let binds = h.binds();
        let (_, a) = &binds[0];
        assert!(a.ssl && a.tfo && a.allow_0rtt && a.no_tls_tickets);
        assert_eq!(a.backlog, Some(64));
        assert_eq!(a.crts, vec!["a.pem"]);
        assert!(!a.tls13);
        assert_eq!(a.curves.as_deref(), Some("P-256"));
        let (_, b) = &binds[1];
        assert!(b.tls13);
        assert_eq!(b.curves.as_deref(), Some("X25519"));
    }
}
