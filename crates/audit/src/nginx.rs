//! nginx: effective settings per server (http -> server -> location
//! inheritance, listen sockets and their default servers) and the checks.
//!
//! What decides what (nginx 1.22 with OpenSSL; docs/audit.md has the
//! sources):
//! - TCP_NODELAY before the TLS handshake comes from the *default server*
//!   of the listen socket, at server level (ngx_http_ssl_handshake reads
//!   the connection's conf_ctx, the default server's, before SNI);
//! - TCP_NODELAY on keep-alive comes from the location that served the
//!   request, set when the connection turns keep-alive (after the first
//!   response: setting it flushes a tail Nagle held, so a connection's
//!   first response is held only when tcp_nodelay is off);
//! - `ssl_early_data` is taken from the default server too: OpenSSL copies
//!   max_early_data from the first SSL_CTX and switching to the SNI
//!   server's context does not change it (nginx/nginx#1536).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::certs::{self, ChainSummary};
use crate::conf::{Config, Directive};
use crate::kernel::{TFO_SERVER, TFO_SERVER_WO_SOCKOPT};
use crate::{Confidence, Cost, Finding, Fix, Kernel, Location, Severity, ASSUMED_MSS};

/// nginx's listen backlog on Linux when `backlog=` is not given
/// (NGX_LISTEN_BACKLOG).
pub const DEFAULT_BACKLOG: u64 = 511;

/// A `listen` directive, parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct Listen {
    /// `*:443`, `10.0.0.1:443`, `[::]:443`.
    pub socket: String,
    pub port: u16,
    pub ssl: bool,
    pub default_server: bool,
    pub fastopen: Option<u64>,
    pub backlog: Option<u64>,
    pub quic: bool,
}

pub fn parse_listen(d: &Directive) -> Option<Listen> {
    let addr = d.arg(0)?;
    if addr.starts_with("unix:") {
        return None;
    }
    let (host, port) = if let Some(rest) = addr.strip_prefix('[') {
        let (h, p) = rest.split_once(']')?;
        (
            format!("[{h}]"),
            p.strip_prefix(':').unwrap_or("80").to_string(),
        )
    } else if let Ok(p) = addr.parse::<u16>() {
        ("*".to_string(), p.to_string())
    } else if let Some((h, p)) = addr.rsplit_once(':') {
        (h.to_string(), p.to_string())
    } else {
        (addr.to_string(), "80".to_string())
    };
    let port: u16 = port.parse().ok()?;
    let mut l = Listen {
        socket: format!("{host}:{port}"),
        port,
        ssl: false,
        default_server: false,
        fastopen: None,
        backlog: None,
        quic: false,
    };
    for a in &d.args[1..] {
        match a.as_str() {
            "ssl" => l.ssl = true,
            "default_server" | "default" => l.default_server = true,
            "quic" => l.quic = true,
            _ => {
                if let Some(v) = a.strip_prefix("fastopen=") {
                    l.fastopen = v.parse().ok();
                } else if let Some(v) = a.strip_prefix("backlog=") {
                    l.backlog = v.parse().ok();
                }
            }
        }
    }
    Some(l)
}

/// Size as nginx writes it: `16k`, `1m`, `4096`.
pub fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, mul) = match s.chars().last()? {
        'k' | 'K' => (&s[..s.len() - 1], 1024),
        'm' | 'M' => (&s[..s.len() - 1], 1024 * 1024),
        'g' | 'G' => (&s[..s.len() - 1], 1024 * 1024 * 1024),
        _ => (s, 1),
    };
    num.parse::<u64>().ok().map(|n| n * mul)
}

/// Time as nginx writes it, in seconds (`75s`, `1m`, `0`, `500ms` -> 0).
pub fn parse_seconds(s: &str) -> Option<u64> {
    let s = s.trim();
    if let Some(ms) = s.strip_suffix("ms") {
        return ms.parse::<u64>().ok().map(|v| v / 1000);
    }
    let (num, mul) = match s.chars().last()? {
        's' => (&s[..s.len() - 1], 1),
        'm' => (&s[..s.len() - 1], 60),
        'h' => (&s[..s.len() - 1], 3600),
        'd' => (&s[..s.len() - 1], 86400),
        _ => (s, 1),
    };
    num.parse::<u64>().ok().map(|n| n * mul)
}

/// Scopes from the outermost (http) to the innermost.
type Chain<'a> = Vec<&'a [Directive]>;

/// The innermost occurrence of `name` along a chain: nginx's merge takes a
/// level's own value, else its parent's.
fn find<'a>(chain: &Chain<'a>, name: &str) -> Option<&'a Directive> {
    chain
        .iter()
        .rev()
        .find_map(|level| level.iter().find(|d| d.name == name))
}

/// All occurrences at the innermost level that has any (array directives
/// such as `ssl_certificate` are inherited only when a level sets none).
fn find_all<'a>(chain: &Chain<'a>, name: &str) -> Vec<&'a Directive> {
    for level in chain.iter().rev() {
        let here: Vec<&Directive> = level.iter().filter(|d| d.name == name).collect();
        if !here.is_empty() {
            return here;
        }
    }
    Vec::new()
}

fn on(d: Option<&Directive>, default: bool) -> bool {
    d.and_then(|d| d.arg(0))
        .map(|v| v == "on")
        .unwrap_or(default)
}

/// One `server { }` of the http block.
#[derive(Debug, Clone)]
pub struct Server<'a> {
    pub directive: &'a Directive,
    pub listens: Vec<(Listen, &'a Directive)>,
    /// http then server.
    pub chain: Chain<'a>,
    /// Every location (and `if`/`limit_except` block) with its full chain.
    pub locations: Vec<(&'a Directive, Chain<'a>)>,
}

impl Server<'_> {
    pub fn tls(&self) -> bool {
        self.listens.iter().any(|(l, _)| l.ssl && !l.quic) || on(find(&self.chain, "ssl"), false)
    }
    pub fn name(&self) -> String {
        find(&self.chain, "server_name")
            .and_then(|d| d.arg(0))
            .filter(|n| !n.is_empty())
            .unwrap_or("_")
            .to_string()
    }
    /// TLS versions enabled (nginx 1.22's default: TLSv1 to TLSv1.3).
    pub fn protocols(&self) -> Vec<String> {
        match find(&self.chain, "ssl_protocols") {
            Some(d) => d.args.clone(),
            None => ["TLSv1", "TLSv1.1", "TLSv1.2", "TLSv1.3"]
                .iter()
                .map(|s| s.to_string())
                .collect(),
        }
    }
    /// Ports of its TCP listeners.
    pub fn ports(&self) -> Vec<u16> {
        let mut p: Vec<u16> = self
            .listens
            .iter()
            .filter(|(l, _)| !l.quic)
            .map(|(l, _)| l.port)
            .collect();
        p.sort_unstable();
        p.dedup();
        p
    }
    pub fn tls13(&self) -> bool {
        self.protocols().iter().any(|p| p == "TLSv1.3")
    }
    pub fn tls12_or_older(&self) -> bool {
        self.protocols().iter().any(|p| p != "TLSv1.3")
    }
}

fn collect_locations<'a>(
    block: &'a [Directive],
    chain: &Chain<'a>,
    out: &mut Vec<(&'a Directive, Chain<'a>)>,
) {
    for d in block {
        if matches!(d.name.as_str(), "location" | "if" | "limit_except") {
            if let Some(children) = &d.block {
                let mut c = chain.clone();
                c.push(children);
                collect_locations(children, &c, out);
                out.push((d, c));
            }
        }
    }
}

/// The servers of every `http { }` block.
pub fn servers(config: &Config) -> Vec<Server<'_>> {
    let mut out = Vec::new();
    for http in config.root.iter().filter(|d| d.name == "http") {
        let h = http.children();
        for s in h.iter().filter(|d| d.name == "server" && d.block.is_some()) {
            let chain: Chain = vec![h, s.children()];
            let mut listens: Vec<(Listen, &Directive)> = s
                .children()
                .iter()
                .filter(|d| d.name == "listen")
                .filter_map(|d| parse_listen(d).map(|l| (l, d)))
                .collect();
            if !s.children().iter().any(|d| d.name == "listen") {
                // No listen: *:80 (as root).
                listens.push((
                    Listen {
                        socket: "*:80".into(),
                        port: 80,
                        ssl: false,
                        default_server: false,
                        fastopen: None,
                        backlog: None,
                        quic: false,
                    },
                    s,
                ));
            }
            let mut locations = Vec::new();
            collect_locations(s.children(), &chain, &mut locations);
            out.push(Server {
                directive: s,
                listens,
                chain,
                locations,
            });
        }
    }
    out
}

/// For each listen socket, the index of its default server: the one
/// marked `default_server`, else the first to listen there.
pub fn default_servers(servers: &[Server]) -> BTreeMap<String, usize> {
    let mut out: BTreeMap<String, usize> = BTreeMap::new();
    for (i, s) in servers.iter().enumerate() {
        for (l, _) in &s.listens {
            if l.quic {
                continue;
            }
            out.entry(l.socket.clone()).or_insert(i);
        }
    }
    for (i, s) in servers.iter().enumerate() {
        for (l, _) in &s.listens {
            if l.default_server && !l.quic {
                out.insert(l.socket.clone(), i);
            }
        }
    }
    out
}

/// An nginx configuration, read with its includes.
pub struct Nginx {
    pub config: Config,
}

impl Nginx {
    pub fn load(path: &Path) -> Result<Nginx, String> {
        crate::conf::parse_file(path)
            .map(|config| Nginx { config })
            .map_err(|e| e.to_string())
    }

    fn loc(&self, d: &Directive) -> Location {
        Location {
            source: "nginx",
            at: self.config.at(d),
            text: d.text(),
        }
    }

    /// Where a default applies: the block that would hold the directive.
    fn default_loc(&self, block: &Directive, text: &str) -> Location {
        Location {
            source: "nginx",
            at: self.config.at(block),
            text: format!("(default) {text}"),
        }
    }

    /// Every listen socket's fastopen settings (for TFO checks across
    /// sources).
    pub fn fastopen_listens(&self) -> Vec<Location> {
        let servers = servers(&self.config);
        let mut out = Vec::new();
        for s in &servers {
            for (l, d) in &s.listens {
                if l.fastopen.is_some() {
                    out.push(self.loc(d));
                }
            }
        }
        out
    }

    /// True when some server keeps connections alive (keepalive_timeout
    /// not 0): then slow start after idle matters.
    pub fn keepalive(&self) -> bool {
        servers(&self.config).iter().any(|s| {
            find(&s.chain, "keepalive_timeout")
                .and_then(|d| d.arg(0))
                .and_then(parse_seconds)
                .unwrap_or(75)
                > 0
        })
    }

    /// Runs the nginx checks.
    pub fn check(
        &self,
        kernel: &Kernel,
        chains_out: &mut Vec<ChainSummary>,
        notes: &mut Vec<String>,
    ) -> Vec<Finding> {
        let servers = servers(&self.config);
        let defaults = default_servers(&servers);
        let mut findings: Vec<Finding> = Vec::new();
        let (initcwnd, initcwnd_src) = kernel.initcwnd();

        // Certificate chains, per ssl_certificate directive.
        let mut chain_cache: BTreeMap<String, Result<ChainSummary, String>> = BTreeMap::new();
        let mut server_flight: Vec<Option<(u32, &Directive, ChainSummary)>> = Vec::new();
        for s in &servers {
            let mut worst: Option<(u32, &Directive, ChainSummary)> = None;
            if s.tls() {
                let stapling = on(find(&s.chain, "ssl_stapling"), false);
                let ocsp = match find(&s.chain, "ssl_stapling_file").and_then(|d| d.arg(0)) {
                    Some(f) => certs::file_size(&self.config.resolve(f)),
                    // A typical OCSP response from a public CA: ~1.5 KB.
                    None if stapling => 1500,
                    None => 0,
                };
                for d in find_all(&s.chain, "ssl_certificate") {
                    let Some(p) = d.arg(0) else { continue };
                    if p.contains('$') {
                        notes.push(format!("{}: ssl_certificate with variables ({p}) is loaded per handshake; its size was not checked", self.config.at(d)));
                        continue;
                    }
                    let path = self.config.resolve(p);
                    let key = format!("{}#{ocsp}", path.display());
                    let r = chain_cache
                        .entry(key)
                        .or_insert_with(|| certs::read_chain(&path, ocsp))
                        .clone();
                    match r {
                        Ok(c) => {
                            if let Some(x) = certs::chain_incomplete(&c, self.loc(d), s.ports()) {
                                if !findings
                                    .iter()
                                    .any(|f| f.check == x.check && f.location.at == x.location.at)
                                {
                                    findings.push(x);
                                }
                            }
                            let flight = if s.tls13() {
                                c.flight_tls13
                            } else {
                                c.flight_tls12
                            };
                            if worst.as_ref().is_none_or(|(f, _, _)| flight > *f) {
                                worst = Some((flight, d, c.clone()));
                            }
                            if !chains_out.iter().any(|x| x.file == c.file) {
                                chains_out.push(c);
                            }
                        }
                        Err(e) => {
                            let n = format!("{}: {e}", self.config.at(d));
                            if !notes.contains(&n) {
                                notes.push(n);
                            }
                        }
                    }
                }
            }
            server_flight.push(worst);
        }

        let mut default_buffer_ports: Vec<u16> = Vec::new();
        for (i, s) in servers.iter().enumerate() {
            if !s.tls() {
                continue;
            }
            let before = findings.len();
            let is_default_somewhere = s
                .listens
                .iter()
                .any(|(l, _)| defaults.get(&l.socket) == Some(&i));

            // Nagle on the TLS handshake: the default server's server-level tcp_nodelay.
            let nodelay = find(&s.chain, "tcp_nodelay");
            if is_default_somewhere && !on(nodelay, true) {
                let d = nodelay.expect("off is written");
                let flight = server_flight[i].as_ref().map(|(f, _, _)| *f);
                match flight {
                    Some(f) if f <= 4096 => {}
                    _ => {
                        let known = flight.is_some();
                        findings.push(Finding {
                            check: "nagle_tls_flight",
                            severity: if known { Severity::High } else { Severity::Medium },
                            confidence: if known { Confidence::High } else { Confidence::Medium },
                            title: format!("Nagle holds the end of the TLS handshake flight of server {} for the client's ACK", s.name()),
                            location: self.loc(d),
                            related: s.listens.iter().filter(|(l, _)| l.ssl).map(|(_, d)| self.loc(d)).collect(),
                            cost: Cost {
                                rtts: Some(1.0),
                                ms: None,
                                per: "full_tls_handshake",
                                text: "1 RTT on every full TLS handshake (the handshake takes 2 RTT instead of 1 in TLS 1.3)".into(),
                            },
                            why: match flight {
                                Some(f) => format!(
                                    "The server's first flight is about {f} bytes (certificate chain {}); OpenSSL writes its first 4096 bytes, then the rest. With tcp_nodelay off nginx leaves Nagle on for the handshake, so the rest's last, partial segment waits until the client acknowledges the first write: one round trip.",
                                    server_flight[i].as_ref().map(|(_, d, c)| format!("{}, {}", c.file, self.config.at(d))).unwrap_or_default()
                                ),
                                None => "With tcp_nodelay off nginx leaves Nagle on for the TLS handshake; a server flight over 4096 bytes (OpenSSL's first write) ends with a partial segment held for the client's ACK. The certificate could not be read to size the flight.".into(),
                            },
                            fix: Fix {
                                syntax: "nginx",
                                text: "tcp_nodelay on;   # the default; in this server block or http".into(),
                            },
                            confirms: crate::vocabulary::confirms("nagle_tls_flight").to_vec(),
                            evidence: None,
                            ports: Vec::new(),
                        });
                    }
                }
            }

            // Chain over the initial window.
            if let Some((flight, d, chain)) = &server_flight[i] {
                let segments = certs::flight_segments(*flight, ASSUMED_MSS);
                if segments > initcwnd {
                    let mut rounds = 0;
                    let mut sent = 0;
                    let mut cwnd = initcwnd.max(1);
                    while sent < segments {
                        sent += cwnd;
                        cwnd *= 2;
                        rounds += 1;
                    }
                    let extra = (rounds - 1) as f64;
                    let root = chain.root_bytes();
                    let mut fix = String::new();
                    if root > 0 {
                        fix.push_str(&format!(
                            "remove the self-signed root ({root} bytes) from {}; ",
                            chain.file
                        ));
                    }
                    if chain.leaf().is_some_and(|l| l.key.starts_with("RSA")) {
                        fix.push_str(
                            "use an ECDSA P-256 leaf (a smaller certificate and signature); ",
                        );
                    }
                    fix.push_str(&format!(
                        "or raise the initial window: ip route change default via GATEWAY dev DEV initcwnd {}",
                        segments.max(initcwnd) + 2
                    ));
                    let key = self.config.at(d);
                    if !findings
                        .iter()
                        .any(|f| f.check == "chain_over_initcwnd" && f.location.at == key)
                    {
                        findings.push(Finding {
                            check: "chain_over_initcwnd",
                            severity: Severity::High,
                            confidence: if segments > initcwnd + 1 { Confidence::High } else { Confidence::Medium },
                            title: format!(
                                "the TLS server flight (~{flight} bytes, {segments} segments) does not fit the initial window of {initcwnd} segments"
                            ),
                            location: self.loc(d),
                            related: vec![Location {
                                source: "certificate",
                                at: chain.file.clone(),
                                text: format!(
                                    "{} certificates, {} bytes DER{}",
                                    chain.certificates.len(),
                                    chain.der_bytes_total,
                                    if root > 0 { format!(", root included ({root} bytes)") } else { String::new() }
                                ),
                            }],
                            cost: Cost {
                                rtts: Some(extra),
                                ms: None,
                                per: "full_tls_handshake",
                                text: format!("{extra} RTT on every full TLS handshake (resumed handshakes send no certificates)"),
                            },
                            why: format!(
                                "A new connection may send {initcwnd} segments ({initcwnd_src}) before the first ACK comes back; the flight needs {segments} at an MSS of {ASSUMED_MSS}, so its tail waits a round trip for the client's ACKs."
                            ),
                            fix: Fix { syntax: "shell", text: fix },
                            confirms: crate::vocabulary::confirms("chain_over_initcwnd").to_vec(),
                            evidence: None,
                            ports: Vec::new(),
                        });
                    }
                }
                if let Some(bits) = chain
                    .leaf()
                    .and_then(|l| l.key.strip_prefix("RSA "))
                    .and_then(|b| b.parse::<u32>().ok())
                    .filter(|&b| b >= 3072)
                {
                    let key = self.config.at(d);
                    if !findings
                        .iter()
                        .any(|f| f.check == "rsa_signing" && f.location.at == key)
                    {
                        findings.push(Finding {
                            check: "rsa_signing",
                            severity: Severity::Low,
                            confidence: Confidence::Medium,
                            title: format!("every full handshake signs with an RSA-{bits} key"),
                            location: self.loc(d),
                            related: vec![],
                            cost: Cost {
                                rtts: None,
                                ms: Some(if bits >= 4096 { 6.0 } else { 2.0 }),
                                per: "full_tls_handshake",
                                text: format!("server CPU before the flight leaves: a few ms per full handshake for RSA-{bits} (more under load)"),
                            },
                            why: "The CertificateVerify (TLS 1.3) or ServerKeyExchange (TLS 1.2) signature is made with the leaf's private key before the flight can leave; RSA signing grows with the cube of the key size, ECDSA P-256 costs a fraction of a millisecond.".into(),
                            fix: Fix {
                                syntax: "nginx",
                                text: "ssl_certificate ecdsa-p256-chain.pem; ssl_certificate_key ecdsa-p256.key;   # alongside or instead of the RSA pair".into(),
                            },
                            confirms: crate::vocabulary::confirms("rsa_signing").to_vec(),
                            evidence: None,
                            ports: Vec::new(),
                        });
                    }
                }
            }

            // ssl_buffer_size: the first record must arrive whole.
            let buffer = find(&s.chain, "ssl_buffer_size");
            let size = buffer
                .and_then(|d| d.arg(0))
                .and_then(parse_size)
                .unwrap_or(16384) as u32;
            let record_segments = (size.min(16384) + 22).div_ceil(ASSUMED_MSS);
            if record_segments > initcwnd && buffer.is_none() {
                default_buffer_ports.extend(s.ports());
            }
            if record_segments > initcwnd {
                let location = match buffer {
                    Some(d) => self.loc(d),
                    None => self.default_loc(s.directive, "ssl_buffer_size 16k;"),
                };
                let ssai = kernel
                    .sysctls
                    .as_ref()
                    .and_then(|k| k.number("net.ipv4.tcp_slow_start_after_idle"));
                if !findings.iter().any(|f| {
                    f.check == "ssl_buffer_size"
                        && (f.location.at == location.at
                            || (buffer.is_none() && f.location.text.starts_with("(default)")))
                }) {
                    findings.push(Finding {
                        check: "ssl_buffer_size",
                        severity: if ssai == Some(1) { Severity::Medium } else { Severity::Low },
                        confidence: Confidence::Medium,
                        title: format!("responses start with a {} KB TLS record, {record_segments} segments, more than the initial window of {initcwnd}", size / 1024),
                        location,
                        related: vec![],
                        cost: Cost {
                            rtts: Some(1.0),
                            ms: None,
                            per: "large_response_on_small_window",
                            text: format!(
                                "1 RTT to the first decryptable byte of a response over {} bytes sent on a window under {record_segments} segments: after idle{}, or on a route with a small initcwnd",
                                size.min(16384),
                                if ssai == Some(1) { " (tcp_slow_start_after_idle=1 here)" } else { "" }
                            ),
                        },
                        why: format!(
                            "nginx fills a {size}-byte buffer before it writes a TLS record, and a client can decrypt nothing of a record until all of it arrived; a record of {record_segments} segments cannot leave in one round when the window is {initcwnd} segments ({initcwnd_src}). Small responses are flushed early and are not affected."
                        ),
                        fix: Fix {
                            syntax: "nginx",
                            text: "ssl_buffer_size 4k;   # server or http".into(),
                        },
                        confirms: crate::vocabulary::confirms("ssl_buffer_size").to_vec(),
                        evidence: None,
                        ports: Vec::new(),
                    });
                }
            }

            // Resumption.
            let tickets_d = find(&s.chain, "ssl_session_tickets");
            let cache_d = find(&s.chain, "ssl_session_cache");
            let tickets = on(tickets_d, true);
            let cache = cache_d
                .map(|d| {
                    d.args
                        .iter()
                        .any(|a| a.starts_with("shared:") || a.starts_with("builtin"))
                })
                .unwrap_or(false);
            let resumable = tickets || cache;
            if !resumable {
                let d = tickets_d.expect("tickets off is written");
                let over = server_flight[i]
                    .as_ref()
                    .is_some_and(|(f, _, _)| certs::flight_segments(*f, ASSUMED_MSS) > initcwnd);
                let tls12 = s.tls12_or_older();
                findings.push(Finding {
                    check: "no_resumption",
                    severity: if tls12 || over { Severity::Medium } else { Severity::Low },
                    confidence: Confidence::High,
                    title: format!("server {} cannot resume TLS sessions: tickets and the session cache are off", s.name()),
                    location: self.loc(d),
                    related: cache_d.map(|c| vec![self.loc(c)]).unwrap_or_else(|| vec![self.default_loc(s.directive, "ssl_session_cache none;")]),
                    cost: Cost {
                        rtts: if tls12 { Some(1.0) } else { None },
                        ms: None,
                        per: "returning_client_connection",
                        text: if tls12 {
                            "1 RTT on every returning client's TLS 1.2 connection (full 2-RTT handshake instead of the abbreviated 1-RTT one); no 0-RTT in TLS 1.3".into()
                        } else {
                            format!(
                                "TLS 1.3: every returning client does a full handshake (certificate flight and signature again{}); no 0-RTT",
                                if over { ", and that flight is over the initial window: +1 RTT" } else { "" }
                            )
                        },
                    },
                    why: "With ssl_session_tickets off and ssl_session_cache off or none, the server neither issues tickets a client could return nor keeps sessions it could look up, so no client can resume.".into(),
                    fix: Fix {
                        syntax: "nginx",
                        text: "ssl_session_cache shared:SSL:10m; ssl_session_tickets on;   # and the same ssl_session_ticket_key on every server behind one name".into(),
                    },
                    confirms: crate::vocabulary::confirms("no_resumption").to_vec(),
                    evidence: None,
                    ports: Vec::new(),
                });
            }

            // Key-share groups: a HelloRetryRequest for clients whose key share is not accepted.
            if s.tls13() {
                if let Some(d) = find(&s.chain, "ssl_ecdh_curve") {
                    let groups: Vec<String> = d
                        .arg(0)
                        .unwrap_or("")
                        .split(':')
                        .map(|g| g.trim().to_ascii_lowercase())
                        .collect();
                    let auto = groups.iter().any(|g| g == "auto");
                    let x25519 = groups.iter().any(|g| g == "x25519");
                    let hybrid = groups.iter().any(|g| g.starts_with("x25519mlkem"));
                    if !auto && !x25519 {
                        findings.push(Finding {
                            check: "hrr_curves",
                            severity: if hybrid { Severity::Medium } else { Severity::High },
                            confidence: Confidence::High,
                            title: format!("ssl_ecdh_curve {} accepts no x25519 key share: common clients get a HelloRetryRequest", d.arg(0).unwrap_or("")),
                            location: self.loc(d),
                            related: vec![],
                            cost: Cost {
                                rtts: Some(1.0),
                                ms: None,
                                per: "full_tls13_handshake",
                                text: format!(
                                    "1 RTT on every TLS 1.3 handshake from a client whose key share is x25519 only ({})",
                                    if hybrid { "curl and other OpenSSL < 3.5 clients, older browsers" } else { "curl, Chrome, Firefox, Safari: all send an x25519 share first" }
                                ),
                            },
                            why: "A TLS 1.3 client sends key shares for its preferred groups in the ClientHello; when none of them is in the server's list, OpenSSL answers with a HelloRetryRequest naming a group it accepts, and the client must send a second ClientHello: one more round trip before the handshake can finish.".into(),
                            fix: Fix {
                                syntax: "nginx",
                                text: format!("ssl_ecdh_curve X25519:{};", d.arg(0).unwrap_or("prime256v1")),
                            },
                            confirms: crate::vocabulary::confirms("hrr_curves").to_vec(),
                            evidence: None,
                            ports: Vec::new(),
                        });
                    }
                }
            }
            for f in &mut findings[before..] {
                f.ports = s.ports();
            }
        }

        // The default record size is one finding for every server using it.
        default_buffer_ports.sort_unstable();
        default_buffer_ports.dedup();
        for f in findings
            .iter_mut()
            .filter(|f| f.check == "ssl_buffer_size" && f.location.text.starts_with("(default)"))
        {
            f.ports = default_buffer_ports.clone();
        }

        // Early data, per TLS server: nginx accepts it by the default
        // server's setting.
        for (i, s) in servers.iter().enumerate() {
            if !s.tls() {
                continue;
            }
            let before = findings.len();
            let own = find(&s.chain, "ssl_early_data");
            let own_on = on(own, false);
            let default_i = s
                .listens
                .iter()
                .filter(|(l, _)| l.ssl)
                .find_map(|(l, _)| defaults.get(&l.socket).copied())
                .unwrap_or(i);
            let default_early = find(&servers[default_i].chain, "ssl_early_data");
            let effective = on(default_early, false);
            if effective && !guards_early_data(s) {
                let d = default_early.expect("on is written");
                let tickets = on(find(&s.chain, "ssl_session_tickets"), true);
                let cache = find(&s.chain, "ssl_session_cache").is_some_and(|d| {
                    d.args
                        .iter()
                        .any(|a| a.starts_with("shared:") || a.starts_with("builtin"))
                });
                if s.tls13() && (tickets || cache) {
                    findings.push(Finding {
                        check: "early_data_no_replay_guard",
                        severity: Severity::High,
                        confidence: Confidence::High,
                        title: format!("server {} accepts 0-RTT early data with no replay guard ($ssl_early_data is never used)", s.name()),
                        location: self.loc(d),
                        related: if default_i != i { vec![Location { source: "nginx", at: self.config.at(s.directive), text: format!("server {} (takes the default server's ssl_early_data)", s.name()) }] } else { vec![] },
                        cost: Cost {
                            rtts: None,
                            ms: None,
                            per: "replayed_request",
                            text: "no time: a replay risk. An attacker who recorded a client's 0-RTT data can send it again, and a POST in it runs twice".into(),
                        },
                        why: "0-RTT early data is sent before the handshake proves the client is live, so it can be replayed (RFC 8446 8, RFC 8470). nginx passes such requests on as usual; only $ssl_early_data (\"1\" while the handshake is incomplete) lets a location refuse unsafe ones with 425 Too Early or tell the backend (Early-Data header).".into(),
                        fix: Fix {
                            syntax: "nginx",
                            text: "proxy_set_header Early-Data $ssl_early_data;   # and/or, in locations taking unsafe methods: if ($ssl_early_data) { return 425; }".into(),
                        },
                        confirms: crate::vocabulary::confirms("early_data_no_replay_guard").to_vec(),
                        evidence: None,
                        ports: Vec::new(),
                    });
                }
            }
            if own_on {
                let d = own.expect("on is written");
                let mut reasons = Vec::new();
                if !effective {
                    reasons.push(format!(
                        "the default server of its listen socket ({}) has ssl_early_data off, and nginx with OpenSSL takes the setting from the default server (nginx/nginx#1536)",
                        self.config.at(servers[default_i].directive)
                    ));
                }
                if !s.tls13() {
                    reasons.push(
                        "ssl_protocols leaves out TLSv1.3, the only version with early data".into(),
                    );
                }
                let tickets = on(find(&s.chain, "ssl_session_tickets"), true);
                let cache = find(&s.chain, "ssl_session_cache").is_some_and(|d| {
                    d.args
                        .iter()
                        .any(|a| a.starts_with("shared:") || a.starts_with("builtin"))
                });
                if !tickets && !cache {
                    reasons.push("tickets and the session cache are off: no client has a session to send early data with".into());
                }
                if !reasons.is_empty() {
                    findings.push(Finding {
                        check: "early_data_ineffective",
                        severity: Severity::Medium,
                        confidence: Confidence::High,
                        title: format!("ssl_early_data on in server {} has no effect", s.name()),
                        location: self.loc(d),
                        related: if default_i != i { vec![self.default_or_loc(&servers[default_i], default_early, "ssl_early_data off;")] } else { vec![] },
                        cost: Cost {
                            rtts: Some(1.0),
                            ms: None,
                            per: "returning_client_connection",
                            text: "the 1 RTT that 0-RTT was meant to save on returning clients' first request is not saved".into(),
                        },
                        why: reasons.join("; "),
                        fix: Fix {
                            syntax: "nginx",
                            text: if !effective {
                                "ssl_early_data on;   # in the http block, or in the default server of this listen socket".into()
                            } else {
                                "ssl_protocols TLSv1.2 TLSv1.3; ssl_session_tickets on;".into()
                            },
                        },
                        confirms: crate::vocabulary::confirms("early_data_ineffective").to_vec(),
                        evidence: None,
                        ports: Vec::new(),
                    });
                }
            }
            for f in &mut findings[before..] {
                f.ports = s.ports();
            }
        }

        // Keep-alive responses under Nagle, per tcp_nodelay off directive.
        // Per `tcp_nodelay off` line: the line, the scopes it reaches, whether
        // any of them writes responses in two pieces, their ports.
        type Reach<'d> = (&'d Directive, Vec<String>, bool, Vec<u16>);
        let mut keepalive: BTreeMap<String, Reach> = BTreeMap::new();
        for s in &servers {
            let mut scopes: Vec<(Chain, String)> =
                vec![(s.chain.clone(), format!("server {}", s.name()))];
            for (l, c) in &s.locations {
                scopes.push((
                    c.clone(),
                    format!("server {} {} {}", s.name(), l.name, l.args.join(" ")),
                ));
            }
            let plain = s.listens.iter().any(|(l, _)| !l.ssl && !l.quic)
                && !on(find(&s.chain, "ssl"), false);
            for (chain, label) in scopes {
                let Some(d) = find(&chain, "tcp_nodelay") else {
                    continue;
                };
                if on(Some(d), true) {
                    continue;
                }
                let alive = find(&chain, "keepalive_timeout")
                    .and_then(|d| d.arg(0))
                    .and_then(parse_seconds)
                    .unwrap_or(75)
                    > 0;
                if !alive {
                    continue;
                }
                // Plain HTTP with sendfile and no tcp_nopush: the header
                // (writev) and the file (sendfile) are two writes for
                // every static response.
                let split = plain
                    && on(find(&chain, "sendfile"), false)
                    && !on(find(&chain, "tcp_nopush"), false);
                let e = keepalive.entry(self.config.at(d)).or_insert((
                    d,
                    Vec::new(),
                    false,
                    Vec::new(),
                ));
                if !e.1.contains(&label) {
                    e.1.push(label);
                }
                e.2 |= split;
                for p in s.ports() {
                    if !e.3.contains(&p) {
                        e.3.push(p);
                    }
                }
            }
        }
        for (_, (d, scopes, split, ports)) in keepalive {
            let shown: Vec<String> = scopes.iter().take(4).cloned().collect();
            findings.push(Finding {
                check: "nagle_keepalive",
                severity: if split { Severity::High } else { Severity::Medium },
                confidence: if split { Confidence::High } else { Confidence::Medium },
                title: format!("Nagle stays on for keep-alive responses ({}{})", shown.join(", "), if scopes.len() > 4 { format!(" and {} more", scopes.len() - 4) } else { String::new() }),
                location: self.loc(d),
                related: vec![],
                cost: Cost {
                    rtts: Some(1.0),
                    ms: Some(40.0),
                    per: "keepalive_response",
                    text: "per response whose last segment is small and follows another small unacknowledged one (a header then its body, a body after TLS 1.3 session tickets): 1 RTT, or the client's delayed-ACK timeout (40 ms Linux, 200 ms Windows) when it delays the ACK".into(),
                },
                why: format!(
                    "nginx sets TCP_NODELAY only when tcp_nodelay is on, as a connection turns keep-alive (setting it also flushes a tail Nagle held); with it off, Nagle holds a partial segment while an earlier partial one is unacknowledged.{}",
                    if split { " Here static responses are two writes (sendfile on, tcp_nopush off: the header by writev, the body by sendfile), so every response's tail waits for the ACK of its header." } else { " Responses written in one piece are not held; several writes (proxied, streamed or large responses) are." }
                ),
                fix: Fix {
                    syntax: "nginx",
                    text: "tcp_nodelay on;   # the default".into(),
                },
                confirms: crate::vocabulary::confirms("nagle_keepalive").to_vec(),
                evidence: None,
                ports,
            });
        }

        // Keep-alive off: every request after a client's first waits for a
        // new connection's handshakes.
        for s in &servers {
            let timeout_off = find(&s.chain, "keepalive_timeout")
                .filter(|d| d.arg(0).and_then(parse_seconds) == Some(0));
            let one_request = find(&s.chain, "keepalive_requests").filter(|d| {
                d.arg(0)
                    .and_then(|a| a.parse::<u64>().ok())
                    .is_some_and(|n| n <= 1)
            });
            let Some(d) = timeout_off.or(one_request) else {
                continue;
            };
            let at = self.loc(d);
            if let Some(f) = findings
                .iter_mut()
                .find(|g| g.check == "keepalive_off" && g.location.at == at.at)
            {
                for p in s.ports() {
                    if !f.ports.contains(&p) {
                        f.ports.push(p);
                    }
                }
                continue;
            }
            let tls = s.tls();
            findings.push(Finding {
                check: "keepalive_off",
                severity: Severity::Medium,
                confidence: Confidence::High,
                title: format!(
                    "server {} closes every connection after {}",
                    s.name(),
                    if timeout_off.is_some() { "its answer (keepalive_timeout 0)" } else { "one request (keepalive_requests)" }
                ),
                location: at,
                related: vec![],
                cost: Cost::new_connection_per_request(tls),
                why: "nginx answers `Connection: close` and closes the connection when keepalive_timeout is 0, or once a connection has served keepalive_requests requests: the client's next request needs a new connection, and waits for its handshakes.".into(),
                fix: Fix {
                    syntax: "nginx",
                    text: "keepalive_timeout 75s; keepalive_requests 1000;   # the defaults".into(),
                },
                confirms: crate::vocabulary::confirms("keepalive_off").to_vec(),
                evidence: None,
                ports: s.ports(),
            });
        }

        // Proxied requests that open a connection to their upstream each.
        for s in &servers {
            for (_, chain) in &s.locations {
                if let Some(f) = self.upstream_per_request(chain) {
                    if !findings
                        .iter()
                        .any(|g| g.check == f.check && g.location.at == f.location.at)
                    {
                        let mut f = f;
                        f.ports = s.ports();
                        findings.push(f);
                    }
                }
            }
        }

        // CORS preflight answers a browser keeps for 5 s, or little more:
        // the server level's, and each location's (and `if`'s).
        for s in &servers {
            let chains = std::iter::once(&s.chain).chain(s.locations.iter().map(|(_, c)| c));
            for chain in chains {
                let Some(mut f) = self.cors_preflight_uncached(chain) else {
                    continue;
                };
                if !findings
                    .iter()
                    .any(|g| g.check == f.check && g.location.at == f.location.at)
                {
                    f.ports = s.ports();
                    findings.push(f);
                }
            }
        }

        // TFO and backlog: listen sockets against the kernel.
        let sysctls = kernel.sysctls.as_ref();
        let mut seen_sockets = BTreeSet::new();
        for s in &servers {
            for (l, d) in &s.listens {
                if l.quic || !seen_sockets.insert(l.socket.clone()) {
                    // Parameters of a socket are given once, on one of its listens.
                    if l.fastopen.is_none() && l.backlog.is_none() {
                        continue;
                    }
                }
                if let Some(q) = l.fastopen {
                    match sysctls.and_then(|k| k.number("net.ipv4.tcp_fastopen")) {
                        Some(v) if v as u32 & (TFO_SERVER | TFO_SERVER_WO_SOCKOPT) == 0 => {
                            let mut f = tfo_listener_without_kernel(
                                self.loc(d),
                                v,
                                &format!("fastopen={q}"),
                            );
                            f.ports = vec![l.port];
                            findings.push(f);
                        }
                        Some(_) => {}
                        None => {
                            let n = format!("{}: listen ... fastopen={q}: pass --sysctl to check that net.ipv4.tcp_fastopen has the server bit (2)", self.config.at(d));
                            if !notes.contains(&n) {
                                notes.push(n);
                            }
                        }
                    }
                }
                if let Some(somaxconn) = sysctls.and_then(|k| k.number("net.core.somaxconn")) {
                    let backlog = l.backlog.unwrap_or(DEFAULT_BACKLOG);
                    if somaxconn < backlog {
                        let loc = if l.backlog.is_some() {
                            self.loc(d)
                        } else {
                            Location {
                                source: "nginx",
                                at: self.config.at(d),
                                text: format!("{} (default backlog=511)", d.text()),
                            }
                        };
                        let mut f = backlog_mismatch(
                            loc,
                            backlog,
                            somaxconn,
                            sysctls.and_then(|k| k.number("net.ipv4.tcp_max_syn_backlog")),
                            sysctls.and_then(|k| k.number("net.ipv4.tcp_syncookies")),
                        );
                        f.ports = vec![l.port];
                        findings.push(f);
                    }
                }
            }
        }
        findings
    }

    /// A location's `proxy_pass` (its own: the directive is not inherited)
    /// whose upstream connections are not kept: no `upstream` block with
    /// `keepalive`, or HTTP/1.0 to it (`proxy_http_version`'s default), or
    /// its `Connection: close` not cleared. Each proxied request then opens
    /// a connection (a TCP handshake, TLS's too for https) before its
    /// upstream sees it. Not a target named by a variable (unknown here),
    /// nor a unix socket.
    fn upstream_per_request(&self, chain: &Chain) -> Option<Finding> {
        let pass = chain.last()?.iter().find(|d| d.name == "proxy_pass")?;
        let url = pass.arg(0)?;
        let (scheme, rest) = url.split_once("://")?;
        let host_port = rest.split('/').next().unwrap_or(rest);
        if host_port.contains('$') || host_port.starts_with("unix:") {
            return None;
        }
        let name = host_port.split(':').next().unwrap_or(host_port);
        let upstream = chain.first().and_then(|http| {
            http.iter()
                .find(|d| d.name == "upstream" && d.arg(0) == Some(host_port))
        });
        let pooled = upstream.is_some_and(|u| u.children().iter().any(|d| d.name == "keepalive"));
        let http11 = find(chain, "proxy_http_version").and_then(|d| d.arg(0)) == Some("1.1");
        let cleared = find_all(chain, "proxy_set_header").iter().any(|d| {
            d.arg(0)
                .is_some_and(|h| h.eq_ignore_ascii_case("connection"))
                && matches!(d.arg(1), Some("") | Some("\"\""))
        });
        if pooled && http11 && cleared {
            return None;
        }
        let mut missing = Vec::new();
        if !pooled {
            missing.push(match upstream {
                Some(_) => "its upstream block has no keepalive".to_string(),
                None => format!("{name} is not an upstream block with keepalive"),
            });
        }
        if !http11 {
            missing.push("proxy_http_version is 1.0 (the default)".to_string());
        }
        if !cleared {
            missing.push(
                "the Connection header is not cleared (nginx sends Connection: close)".to_string(),
            );
        }
        let local = matches!(name, "localhost" | "127.0.0.1" | "[::1]")
            || upstream.is_some_and(|u| {
                u.children().iter().filter(|d| d.name == "server").all(|d| {
                    d.arg(0).is_some_and(|a| {
                        a.starts_with("127.")
                            || a.starts_with("localhost")
                            || a.starts_with("[::1]")
                            || a.starts_with("unix:")
                    })
                })
            });
        let tls = scheme == "https";
        let pool = if upstream.is_some() {
            name.to_string()
        } else {
            "backend".to_string()
        };
        Some(Finding {
            check: "upstream_per_request",
            // On the host itself a handshake costs microseconds.
            severity: if local { Severity::Low } else { Severity::Medium },
            confidence: Confidence::High,
            title: format!("every proxied request opens a new connection to {host_port} ({})", pass.text()),
            location: self.loc(pass),
            related: vec![],
            cost: Cost {
                rtts: Some(if tls { 2.0 } else { 1.0 }),
                ms: None,
                per: "proxied_request",
                text: format!(
                    "per proxied request: the round trip to the upstream for its TCP handshake{} before the request leaves, on top of the upstream's own time",
                    if tls { ", and at least one more for TLS" } else { "" }
                ),
            },
            why: format!(
                "nginx keeps connections to an upstream only for an upstream block with keepalive, spoken to in HTTP/1.1 with the Connection header cleared; here {}.",
                missing.join("; ")
            ),
            fix: Fix {
                syntax: "nginx",
                text: format!(
                    "upstream {pool} {{ server {host_port}; keepalive 16; }}   # http block; then here: proxy_pass {scheme}://{pool}; proxy_http_version 1.1; proxy_set_header Connection \"\";"
                ),
            },
            confirms: crate::vocabulary::confirms("upstream_per_request").to_vec(),
            evidence: None,
            ports: Vec::new(),
        })
    }

    /// A block whose answers carry a CORS preflight's permissions
    /// (`add_header Access-Control-Allow-Methods` or `-Headers`: fields
    /// only a preflight's answer needs) without an `Access-Control-Max-Age`
    /// of 10 minutes or more among the same `add_header`s. nginx inherits
    /// `add_header`s only into a block that sets none: a max age set
    /// around an `if ($request_method = OPTIONS)` that adds its own fields
    /// is not in the `if`'s answers. A browser keeps a preflight's answer
    /// for its max age, 5 s without a valid one (the Fetch standard), per
    /// URL: a request that is not simple, to a URL not asked within that
    /// time, waits a round trip for its preflight (`cors_preflight`). A
    /// max age from a variable is not judged.
    fn cors_preflight_uncached(&self, chain: &Chain) -> Option<Finding> {
        let is = |d: &Directive, name: &str| d.arg(0).is_some_and(|h| h.eq_ignore_ascii_case(name));
        let headers = find_all(chain, "add_header");
        let named = |name: &str| headers.iter().copied().find(|d| is(d, name));
        let allows = named("Access-Control-Allow-Methods")
            .or_else(|| named("Access-Control-Allow-Headers"))?;
        let max_age = named(PREFLIGHT_MAX_AGE);
        // (A max age an enclosing block sets, hidden by this block's own
        // add_headers.)
        let hidden = match max_age {
            Some(_) => None,
            None => chain
                .iter()
                .flat_map(|level| level.iter())
                .find(|d| d.name == "add_header" && is(d, PREFLIGHT_MAX_AGE)),
        };
        preflight_uncached(
            self.loc(allows),
            max_age.map(|d| (self.loc(d), d.arg(1).unwrap_or(""))),
            hidden.map(|h| (self.loc(h), "nginx inherits add_header only into a block that sets none, and this one sets its own")),
            Fix {
                syntax: "nginx",
                text: "add_header Access-Control-Max-Age 7200 always;   # beside Access-Control-Allow-Methods, in the same block (Chromium keeps at most 7200 s, Firefox 86400 s)".into(),
            },
        )
    }

    fn default_or_loc(&self, s: &Server, d: Option<&Directive>, text: &str) -> Location {
        match d {
            Some(d) => self.loc(d),
            None => self.default_loc(s.directive, text),
        }
    }
}

/// True when the server uses `$ssl_early_data`, directly or through a
/// variable an http-level `map` derives from it, or inherits a directive
/// that uses it from the http block (a `proxy_set_header` there): the
/// request can then be refused (425) or flagged to the backend.
fn guards_early_data(s: &Server) -> bool {
    fn uses(ds: &[Directive], vars: &[String]) -> bool {
        ds.iter().any(|d| {
            d.args
                .iter()
                .any(|a| vars.iter().any(|v| a.contains(v.as_str())))
                || (d.name != "server" && d.name != "map" && uses(d.children(), vars))
        })
    }
    let http: &[Directive] = s.chain.first().copied().unwrap_or(&[]);
    let mut vars = vec![
        "$ssl_early_data".to_string(),
        "${ssl_early_data}".to_string(),
    ];
    for m in http.iter().filter(|d| d.name == "map") {
        if m.arg(0).is_some_and(|a| a.contains("ssl_early_data")) {
            if let Some(v) = m.arg(1) {
                vars.push(v.to_string());
            }
        }
    }
    let inherited = http
        .iter()
        .filter(|d| d.block.is_none() && d.name != "map")
        .any(|d| d.args.iter().any(|a| a.contains("ssl_early_data")));
    inherited || uses(s.directive.children(), &vars)
}

/// The preflight answers' max age field.
const PREFLIGHT_MAX_AGE: &str = "Access-Control-Max-Age";

/// `cors_preflight_uncached`, nginx's and HAProxy's alike: answers that
/// carry a CORS preflight's permissions (`allows`: the setting that adds
/// `Access-Control-Allow-Methods` or `-Headers`, fields only a
/// preflight's answer needs) with `max_age` (the setting that adds
/// `Access-Control-Max-Age` to the same answers, and its value as
/// written) under 10 minutes or none; `hidden`, a max age set where the
/// same answers do not carry it, and why. A browser keeps a preflight's
/// answer for its max age, 5 s without a valid one (the Fetch standard),
/// per URL: a request that is not simple, to a URL not asked within that
/// time, waits a round trip for its preflight (`cors_preflight`). `None`
/// for 10 minutes or more, or a max age from a variable (not known here).
pub fn preflight_uncached(
    allows: Location,
    max_age: Option<(Location, &str)>,
    hidden: Option<(Location, &str)>,
    fix: Fix,
) -> Option<Finding> {
    let written = max_age.as_ref().map(|(_, v)| v.trim_matches('"').trim());
    if written.is_some_and(|v| v.contains('$') || v.contains('%')) {
        return None;
    }
    let seconds = written.and_then(|v| v.parse::<u64>().ok());
    if seconds.is_some_and(|s| s >= 600) {
        return None;
    }
    let (kept, what) = match (written, seconds, &hidden) {
        (Some(_), Some(s), _) => (format!("{s} s"), format!("its Access-Control-Max-Age is {s} s")),
        (Some(v), None, _) => (
            "5 s".to_string(),
            format!("its Access-Control-Max-Age `{v}` is not a number of seconds, which browsers ignore"),
        ),
        (None, _, Some((h, why))) => (
            "5 s".to_string(),
            format!("the Access-Control-Max-Age at {} is not among them: {why}", h.at),
        ),
        (None, _, None) => ("5 s".to_string(), "they carry no Access-Control-Max-Age".to_string()),
    };
    Some(Finding {
        check: "cors_preflight_uncached",
        severity: if seconds.is_some() { Severity::Low } else { Severity::Medium },
        confidence: Confidence::High,
        title: format!("browsers keep these CORS preflight answers {kept} per URL ({})", allows.text),
        why: format!(
            "These answers carry a CORS preflight's permissions ({}), but {what}. A browser keeps a preflight's answer for its Access-Control-Max-Age, 5 s without one (the Fetch standard), and per URL, query included.",
            allows.text
        ),
        location: max_age.map_or(allows, |(l, _)| l),
        related: hidden.map(|(h, _)| h).into_iter().collect(),
        cost: Cost {
            rtts: Some(1.0),
            ms: None,
            per: "preflighted_request",
            text: format!(
                "1 RTT per cross-origin request that is not simple (a method other than GET, HEAD or POST; a JSON body; an Authorization or X- header) to a URL whose preflight is more than {kept} old: the browser sends an OPTIONS first and the request only when it is answered"
            ),
        },
        fix,
        confirms: crate::vocabulary::confirms("cors_preflight_uncached").to_vec(),
        evidence: None,
        ports: Vec::new(),
    })
}

pub fn tfo_listener_without_kernel(loc: Location, sysctl: u64, param: &str) -> Finding {
    Finding {
        check: "tfo_listener_without_kernel",
        severity: Severity::Medium,
        confidence: Confidence::High,
        title: format!("{param} on the listener, but net.ipv4.tcp_fastopen = {sysctl} has no server bit: TCP Fast Open is off"),
        location: loc,
        related: vec![Location {
            source: "sysctl",
            at: "net.ipv4.tcp_fastopen".into(),
            text: format!("net.ipv4.tcp_fastopen = {sysctl}"),
        }],
        cost: Cost {
            rtts: Some(1.0),
            ms: None,
            per: "returning_tfo_client_connection",
            text: "the 1 RTT TFO would save on each returning TFO client's connection; clients still holding a cookie send their request in the SYN, the server drops it and they send it again after the handshake".into(),
        },
        why: "The kernel accepts data in a SYN only when net.ipv4.tcp_fastopen has bit 2 (0x2) and the listener set TCP_FASTOPEN (or bit 0x400 for all listeners); the socket option alone does nothing.".into(),
        fix: Fix {
            syntax: "sysctl",
            text: "sysctl -w net.ipv4.tcp_fastopen=3   # client and server; persist in /etc/sysctl.d/".into(),
        },
        confirms: crate::vocabulary::confirms("tfo_listener_without_kernel").to_vec(),
        evidence: None,
        ports: Vec::new(),
    }
}

pub fn backlog_mismatch(
    loc: Location,
    backlog: u64,
    somaxconn: u64,
    syn_backlog: Option<u64>,
    syncookies: Option<u64>,
) -> Finding {
    let mut related = vec![Location {
        source: "sysctl",
        at: "net.core.somaxconn".into(),
        text: format!("net.core.somaxconn = {somaxconn}"),
    }];
    if let Some(v) = syn_backlog {
        related.push(Location {
            source: "sysctl",
            at: "net.ipv4.tcp_max_syn_backlog".into(),
            text: format!("net.ipv4.tcp_max_syn_backlog = {v}"),
        });
    }
    Finding {
        check: "backlog_mismatch",
        severity: Severity::Medium,
        confidence: Confidence::High,
        title: format!("listen backlog {backlog} is cut to net.core.somaxconn = {somaxconn}"),
        location: loc,
        related,
        cost: Cost {
            rtts: None,
            ms: Some(1000.0),
            per: "connection_in_a_burst",
            text: format!(
                "1 s (the SYN retransmission timeout), then 3 s, for each connection whose handshake finds the accept queue of {somaxconn} full{}",
                if syncookies == Some(0) { "; with tcp_syncookies=0 SYNs beyond the SYN queue are dropped too" } else { "" }
            ),
        },
        why: format!(
            "listen(2) silently caps the backlog at net.core.somaxconn; when the accept queue ({somaxconn}) is full the kernel drops the client's handshake ACK or SYN, and the client resends its SYN after its 1 s initial RTO. The server asked for {backlog}."
        ),
        fix: Fix {
            syntax: "sysctl",
            text: format!("sysctl -w net.core.somaxconn={}   # at least the listen backlog; persist in /etc/sysctl.d/", backlog.max(4096)),
        },
        confirms: crate::vocabulary::confirms("backlog_mismatch").to_vec(),
        evidence: None,
        ports: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conf::parse_str;

    fn listen(args: &[&str]) -> Listen {
        parse_listen(&Directive {
            name: "listen".into(),
            args: args.iter().map(|s| s.to_string()).collect(),
            file: 0,
            line: 1,
            block: None,
        })
        .unwrap()
    }

    #[test]
    fn listen_addresses_and_parameters_parse_as_nginx_reads_them() {
        let l = listen(&[
            "443",
            "ssl",
            "fastopen=256",
            "backlog=1024",
            "default_server",
        ]);
        assert_eq!(
            (l.socket.as_str(), l.port, l.ssl, l.default_server),
            ("*:443", 443, true, true)
        );
        assert_eq!((l.fastopen, l.backlog), (Some(256), Some(1024)));
        assert_eq!(listen(&["10.0.0.1:8443"]).socket, "10.0.0.1:8443");
        assert_eq!(listen(&["[::]:443", "ssl"]).socket, "[::]:443");
        assert_eq!(listen(&["[::1]"]).port, 80);
        assert_eq!(listen(&["localhost"]).socket, "localhost:80");
        assert!(listen(&["443", "quic"]).quic);
        assert!(parse_listen(&Directive {
            name: "listen".into(),
            args: vec!["unix:/run/x.sock".into()],
            file: 0,
            line: 1,
            block: None
        })
        .is_none());
    }

    #[test]
    fn sizes_and_times_use_nginx_units() {
        assert_eq!(parse_size("16k"), Some(16384));
        assert_eq!(parse_size("1m"), Some(1 << 20));
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("x"), None);
        assert_eq!(parse_seconds("75s"), Some(75));
        assert_eq!(parse_seconds("1m"), Some(60));
        assert_eq!(parse_seconds("0"), Some(0));
        assert_eq!(parse_seconds("500ms"), Some(0));
    }

    fn checks_of(text: &str) -> Vec<Finding> {
        let n = Nginx {
            config: parse_str(text, Path::new("/x")).unwrap(),
        };
        n.check(&Kernel::default(), &mut Vec::new(), &mut Vec::new())
            .into_iter()
            .filter(|f| f.check == "upstream_per_request")
            .collect()
    }

    #[test]
    fn a_proxy_pass_without_kept_upstream_connections_connects_per_request() {
        // nginx's default: HTTP/1.0 to a host, a connection per request.
        let f = checks_of(
            "http { server { listen 80; location / { proxy_pass http://10.0.0.5:8080; } } }",
        );
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, Severity::Medium);
        assert_eq!(f[0].cost.rtts, Some(1.0));
        assert!(f[0].why.contains("not an upstream block"), "{}", f[0].why);
        // A pool, but HTTP/1.0 and Connection: close: still one each.
        let f = checks_of(
            "http { upstream app { server 10.0.0.5:8080; keepalive 16; }
               server { listen 80; location / { proxy_pass http://app; } } }",
        );
        assert_eq!(f.len(), 1);
        assert!(f[0].why.contains("proxy_http_version"), "{}", f[0].why);
        // https to the upstream: TLS too.
        let f = checks_of(
            "http { server { listen 80; location / { proxy_pass https://api.example:443; } } }",
        );
        assert_eq!(f[0].cost.rtts, Some(2.0));
        // On the host itself: cheap.
        let f = checks_of(
            "http { server { listen 80; location / { proxy_pass http://127.0.0.1:8080; } } }",
        );
        assert_eq!(f[0].severity, Severity::Low);
    }

    #[test]
    fn kept_upstream_connections_or_unknown_targets_are_no_finding() {
        // The whole recipe, the settings inherited from the server level.
        let kept = "http { upstream app { server 10.0.0.5:8080; keepalive 16; }
               server { listen 80; proxy_http_version 1.1; proxy_set_header Connection \"\";
                 location / { proxy_pass http://app; } } }";
        assert!(checks_of(kept).is_empty());
        // A variable or a unix socket: nothing to say.
        assert!(
            checks_of("http { server { listen 80; location / { proxy_pass http://$b; } } }")
                .is_empty()
        );
        assert!(checks_of(
            "http { server { listen 80; location / { proxy_pass http://unix:/run/app.sock; } } }"
        )
        .is_empty());
        // No proxy_pass at all.
        assert!(checks_of("http { server { listen 80; location / { root /srv; } } }").is_empty());
    }

    #[test]
    fn the_default_server_is_the_marked_one_else_the_first_on_the_socket() {
        let c = parse_str(
            "http { server { listen 443 ssl; } server { listen 443 ssl default_server; } server { listen 8443 ssl; } server { listen 8443 ssl; } }",
            Path::new("/x"),
        )
        .unwrap();
        let s = servers(&c);
        let d = default_servers(&s);
        assert_eq!(d["*:443"], 1);
        assert_eq!(d["*:8443"], 2);
    }

    fn preflight_checks_of(text: &str) -> Vec<Finding> {
        let n = Nginx {
            config: parse_str(text, Path::new("/x")).unwrap(),
        };
        n.check(&Kernel::default(), &mut Vec::new(), &mut Vec::new())
            .into_iter()
            .filter(|f| f.check == "cors_preflight_uncached")
            .collect()
    }

    #[test]
    fn preflight_answers_without_a_max_age_are_kept_five_seconds() {
        // The usual recipe: the preflight answered in an `if`, no max age.
        let f = preflight_checks_of(
            "http { server { listen 80;
               location /api/ {
                 add_header Access-Control-Allow-Origin $http_origin;
                 if ($request_method = OPTIONS) {
                   add_header Access-Control-Allow-Origin $http_origin;
                   add_header Access-Control-Allow-Methods \"GET, PUT\";
                   add_header Access-Control-Allow-Headers Content-Type;
                   return 204;
                 }
                 proxy_pass http://127.0.0.1:9000;
               } } }",
        );
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].severity, Severity::Medium);
        assert_eq!(
            f[0].location.at, "/x/nginx.conf:6",
            "the Allow-Methods line"
        );
        assert_eq!(f[0].cost.rtts, Some(1.0));
        assert!(
            f[0].why.contains("carry no Access-Control-Max-Age"),
            "{}",
            f[0].why
        );
        assert!(f[0].fix.text.contains("Access-Control-Max-Age 7200"));
        assert_eq!(f[0].confirms, [rttdoc_model::FindingKind::CorsPreflight]);
    }

    #[test]
    fn a_max_age_outside_the_block_that_adds_its_own_headers_is_not_sent() {
        // nginx inherits add_header only into a block that sets none: the
        // `if`'s answers carry its own three fields, not the max age.
        let f = preflight_checks_of(
            "http { server { listen 80;
               location /api/ {
                 add_header Access-Control-Max-Age 7200;
                 if ($request_method = OPTIONS) {
                   add_header Access-Control-Allow-Methods PUT;
                   return 204;
                 }
               } } }",
        );
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(
            f[0].why.contains("inherits add_header only"),
            "{}",
            f[0].why
        );
        assert_eq!(f[0].related.len(), 1);
        assert_eq!(f[0].related[0].at, "/x/nginx.conf:3");
    }

    #[test]
    fn a_long_max_age_or_no_preflight_fields_are_no_finding() {
        for (config, why) in [
            (
                "location / { add_header Access-Control-Allow-Methods PUT; add_header Access-Control-Max-Age 7200; }",
                "kept two hours",
            ),
            (
                "location / { add_header access-control-allow-headers x-trace always; add_header ACCESS-CONTROL-MAX-AGE \"600\" always; }",
                "names in any case, ten minutes",
            ),
            (
                "location / { add_header Access-Control-Allow-Methods PUT; add_header Access-Control-Max-Age $cors_age; }",
                "a variable's value is not known here",
            ),
            (
                "location / { add_header Access-Control-Allow-Origin *; }",
                "simple requests' CORS: no preflight answered",
            ),
        ] {
            let f = preflight_checks_of(&format!("http {{ server {{ listen 80; {config} }} }}"));
            assert!(f.is_empty(), "{why}: {f:?}");
        }
        // A short one: low, and named.
        let f = preflight_checks_of(
            "http { server { listen 80; location / { add_header Access-Control-Allow-Methods PUT; add_header Access-Control-Max-Age 60; } } }",
        );
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, Severity::Low);
        assert!(f[0].title.contains("60 s"), "{}", f[0].title);
        // Fields set once for a server are one finding, however many
        // locations inherit them.
        let f = preflight_checks_of(
            "http { server { listen 80; add_header Access-Control-Allow-Methods PUT;
               location /a/ { } location /b/ { } } }",
        );
        assert_eq!(f.len(), 1, "{f:?}");
    }

    #[test]
    fn inner_levels_override_and_arrays_are_inherited_only_when_a_level_sets_none() {
        let c = parse_str(
            "http { tcp_nodelay off; ssl_certificate a.pem; ssl_certificate b.pem;
               server { listen 443 ssl; location / { tcp_nodelay on; } }
               server { listen 8443 ssl; ssl_certificate c.pem; } }",
            Path::new("/x"),
        )
        .unwrap();
        let s = servers(&c);
        assert_eq!(
            find(&s[0].chain, "tcp_nodelay").unwrap().arg(0),
            Some("off")
        );
        let (_, loc) = &s[0].locations[0];
        assert_eq!(find(loc, "tcp_nodelay").unwrap().arg(0), Some("on"));
        let certs = |i: usize| -> Vec<String> {
            find_all(&s[i].chain, "ssl_certificate")
                .iter()
                .map(|d| d.args[0].clone())
                .collect()
        };
        assert_eq!(certs(0), vec!["a.pem", "b.pem"]);
        assert_eq!(certs(1), vec!["c.pem"]);
        // A server without listen is *:80.
        let c = parse_str("http { server { server_name x; } }", Path::new("/x")).unwrap();
        assert_eq!(servers(&c)[0].listens[0].0.socket, "*:80");
    }

    #[test]
    fn a_location_turning_nagle_off_does_not_hold_the_handshake() {
        let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/data/audit/certs");
        let text = format!(
            "http {{ server {{ listen 443 ssl; ssl_certificate {0}/mid-chain.pem; ssl_certificate_key {0}/mid-chain.key;
               location /a {{ tcp_nodelay off; }} }} }}",
            dir.display()
        );
        let n = Nginx {
            config: parse_str(&text, Path::new("/x")).unwrap(),
        };
        let f = n.check(&Kernel::default(), &mut Vec::new(), &mut Vec::new());
        let checks: Vec<&str> = f.iter().map(|f| f.check).collect();
        assert!(checks.contains(&"nagle_keepalive"), "{checks:?}");
        assert!(!checks.contains(&"nagle_tls_flight"), "{checks:?}");
        // The same at server level holds it.
        let text = text.replace("listen 443 ssl;", "listen 443 ssl; tcp_nodelay off;");
        let n = Nginx {
            config: parse_str(&text, Path::new("/x")).unwrap(),
        };
        let f = n.check(&Kernel::default(), &mut Vec::new(), &mut Vec::new());
        assert!(f.iter().any(|f| f.check == "nagle_tls_flight"));
    }
}
