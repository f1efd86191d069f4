//! The kernel's side: sysctls read from a `/proc/sys` tree (the audit's
//! own network namespace, or a copy given with `--sysctl-root`), and the
//! routes' `initcwnd`/`quickack` from `ip -j route` (or a saved copy).
//!
//! Every sysctl read here is per network namespace on current kernels
//! (`net.core.somaxconn` since 4.x, `net.ipv4.tcp_congestion_control` since
//! 4.15): run the audit inside the server's namespace (`ip netns exec NS
//! rttdoc audit --sysctl`) to see what the server's sockets get.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::{Confidence, Cost, Finding, Fix, Kernel, Location, Severity};

/// The sysctls the checks read.
pub const SYSCTLS: &[&str] = &[
    "net.ipv4.tcp_fastopen",
    "net.ipv4.tcp_slow_start_after_idle",
    "net.ipv4.tcp_congestion_control",
    "net.core.somaxconn",
    "net.ipv4.tcp_max_syn_backlog",
    "net.ipv4.tcp_syncookies",
    "net.ipv4.tcp_abort_on_overflow",
    "net.ipv4.tcp_notsent_lowat",
    "net.core.default_qdisc",
];

/// `net.ipv4.tcp_fastopen` bits (Documentation/networking/ip-sysctl.rst).
pub const TFO_CLIENT: u32 = 0x1;
pub const TFO_SERVER: u32 = 0x2;
/// Server TFO on every listener, without the TCP_FASTOPEN socket option.
pub const TFO_SERVER_WO_SOCKOPT: u32 = 0x400;

/// Sysctl values by dotted name, as read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sysctls {
    pub root: PathBuf,
    pub values: BTreeMap<String, String>,
}

impl Sysctls {
    /// Reads [`SYSCTLS`] under `root` (normally `/proc/sys`); a missing
    /// file is a sysctl this kernel (or copy) does not have.
    pub fn read(root: &Path) -> Result<Sysctls, String> {
        if !root.is_dir() {
            return Err(format!("{}: not a directory", root.display()));
        }
        let mut values = BTreeMap::new();
        for name in SYSCTLS {
            let path = root.join(name.replace('.', "/"));
            if let Ok(v) = std::fs::read_to_string(&path) {
                values.insert(
                    name.to_string(),
                    v.split_whitespace().collect::<Vec<_>>().join(" "),
                );
            }
        }
        if values.is_empty() {
            return Err(format!(
                "{}: none of the TCP sysctls is there",
                root.display()
            ));
        }
        Ok(Sysctls {
            root: root.to_path_buf(),
            values,
        })
    }
    pub fn get(&self, name: &str) -> Option<&str> {
        self.values.get(name).map(String::as_str)
    }
    pub fn number(&self, name: &str) -> Option<u64> {
        let v = self.get(name)?;
        // tcp_fastopen may be written in hex (0x403).
        match v.strip_prefix("0x") {
            Some(h) => u64::from_str_radix(h, 16).ok(),
            None => v.parse().ok(),
        }
    }
}

/// One route with the attributes that shape a connection's start.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Route {
    /// As `ip route` prints it: `default via 10.0.0.1 dev eth0`.
    pub text: String,
    pub dst: String,
    pub initcwnd: Option<u32>,
    pub initrwnd: Option<u32>,
    pub quickack: bool,
}

/// Reads routes from `ip -j route show table all` output (both families
/// concatenated is fine: one JSON array after another).
pub fn parse_routes(json: &str) -> Result<Vec<Route>, String> {
    let mut out = Vec::new();
    let stream = serde_json::Deserializer::from_str(json).into_iter::<serde_json::Value>();
    for doc in stream {
        let doc = doc.map_err(|e| format!("route JSON: {e}"))?;
        let Some(list) = doc.as_array() else {
            return Err("route JSON: expected an array (ip -j route)".into());
        };
        for r in list {
            let ty = r["type"].as_str().unwrap_or("unicast");
            if ty != "unicast" {
                continue;
            }
            let dst = r["dst"].as_str().unwrap_or("?").to_string();
            let mut text = dst.clone();
            if let Some(g) = r["gateway"].as_str() {
                text.push_str(&format!(" via {g}"));
            }
            if let Some(d) = r["dev"].as_str() {
                text.push_str(&format!(" dev {d}"));
            }
            let metric = |k: &str| {
                r["metrics"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .find_map(|m| m[k].as_u64())
            };
            out.push(Route {
                text,
                dst,
                initcwnd: metric("initcwnd").map(|v| v as u32),
                initrwnd: metric("initrwnd").map(|v| v as u32),
                quickack: metric("quickack").is_some_and(|v| v != 0),
            });
        }
    }
    Ok(out)
}

/// Runs `ip -j route show table all` for both families in the audit's
/// network namespace.
pub fn read_routes() -> Result<Vec<Route>, String> {
    let mut all = String::new();
    for family in ["-4", "-6"] {
        let out = std::process::Command::new("ip")
            .args([family, "-j", "route", "show", "table", "all"])
            .output()
            .map_err(|e| format!("ip route: {e} (is iproute2 installed?)"))?;
        if !out.status.success() {
            return Err(format!(
                "ip {family} -j route: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        all.push_str(&String::from_utf8_lossy(&out.stdout));
        all.push('\n');
    }
    parse_routes(&all)
}

fn sysctl_loc(name: &str, value: &str) -> Location {
    Location {
        source: "sysctl",
        at: name.to_string(),
        text: format!("{name} = {value}"),
    }
}

/// Checks that need the kernel alone.
pub fn check(kernel: &Kernel, keepalive_servers: bool) -> Vec<Finding> {
    let mut out = Vec::new();
    if let Some(s) = &kernel.sysctls {
        if s.number("net.ipv4.tcp_slow_start_after_idle") == Some(1) {
            let cc = s.get("net.ipv4.tcp_congestion_control").unwrap_or("?");
            // BBR sets its window from its bandwidth and RTT estimates on
            // every ACK, so the restart window lasts at most one round;
            // cubic and reno grow it back by slow start, round after round.
            let bbr = cc.starts_with("bbr");
            let (initcwnd, _) = kernel.initcwnd();
            out.push(Finding {
                check: "slow_start_after_idle",
                severity: if bbr {
                    Severity::Low
                } else if keepalive_servers {
                    Severity::Medium
                } else {
                    Severity::Low
                },
                confidence: if bbr { Confidence::Low } else { Confidence::High },
                title: "keep-alive responses after an idle gap restart from the initial window".into(),
                location: sysctl_loc("net.ipv4.tcp_slow_start_after_idle", "1"),
                related: vec![sysctl_loc("net.ipv4.tcp_congestion_control", cc)],
                cost: Cost {
                    rtts: None,
                    ms: None,
                    per: "response_after_idle",
                    text: format!(
                        "a response sent after the connection idled longer than its RTO (200 ms at least) starts again from {initcwnd} segments: log2(size / ({initcwnd} x MSS) + 1) round trips instead of 1 for a response the grown window would have sent at once (a 200 KB response: ~4 RTT)"
                    ),
                },
                why: format!(
                    "With tcp_slow_start_after_idle=1 the kernel halves the congestion window for every RTO of idle time, down to the restart window (RFC 5681 4.1), when data is sent on a connection that sent nothing for longer than an RTO; keep-alive and HTTP/2 connections idle between a user's clicks. Congestion control is {cc}{}.",
                    if bbr { ": BBR rebuilds its window from its bandwidth estimate on the first ACKs, so the cost is small there (confidence low)" } else { "" }
                ),
                fix: Fix {
                    syntax: "sysctl",
                    text: "sysctl -w net.ipv4.tcp_slow_start_after_idle=0   # and in /etc/sysctl.d/90-rtt.conf: net.ipv4.tcp_slow_start_after_idle = 0".into(),
                },
                confirms: crate::vocabulary::confirms("slow_start_after_idle").to_vec(),
                evidence: None,
                ports: Vec::new(),
            });
        }
        if s.number("net.ipv4.tcp_abort_on_overflow") == Some(1) {
            out.push(Finding {
                check: "abort_on_overflow",
                severity: Severity::Medium,
                confidence: Confidence::High,
                title: "a burst that fills a listener's accept queue fails instead of waiting".into(),
                location: sysctl_loc("net.ipv4.tcp_abort_on_overflow", "1"),
                related: s
                    .get("net.core.somaxconn")
                    .map(|v| sysctl_loc("net.core.somaxconn", v))
                    .into_iter()
                    .collect(),
                cost: Cost {
                    rtts: None,
                    ms: None,
                    per: "handshake_finding_the_queue_full",
                    text: "a failed connection (the client's call gets ECONNRESET, \"Connection reset by peer\") where the default would have made it wait about a second for room: the client's retry, if it makes one, pays a whole new connection".into(),
                },
                why: "With tcp_abort_on_overflow=1 the kernel answers a handshake's ACK that finds the listener's accept queue full with a RST; with 0 (the default) it drops the ACK, keeps the connection half-open and takes it when the client's next packet (or its own SYN-ACK re-send) finds room.".into(),
                fix: Fix {
                    syntax: "sysctl",
                    text: "sysctl -w net.ipv4.tcp_abort_on_overflow=0   # and in /etc/sysctl.d/90-rtt.conf: net.ipv4.tcp_abort_on_overflow = 0; then a backlog and net.core.somaxconn that cover the bursts".into(),
                },
                confirms: crate::vocabulary::confirms("abort_on_overflow").to_vec(),
                evidence: None,
                ports: Vec::new(),
            });
        }
    }
    for r in kernel.routes.iter().flatten() {
        if let Some(w) = r.initcwnd.filter(|&w| w < 10) {
            out.push(Finding {
                check: "route_initcwnd_small",
                severity: Severity::Medium,
                confidence: Confidence::High,
                title: format!("route `{}` starts connections with {w} segments, under the default 10", r.text),
                location: Location {
                    source: "route",
                    at: r.text.clone(),
                    text: format!("initcwnd {w}"),
                },
                related: vec![],
                cost: Cost {
                    rtts: Some(1.0),
                    ms: None,
                    per: "first_flight_over_window",
                    text: format!(
                        "one more round trip for every first flight between {} and {} bytes (a TLS certificate flight, a first response)",
                        w * crate::ASSUMED_MSS,
                        10 * crate::ASSUMED_MSS
                    ),
                },
                why: "The route's initcwnd caps what a new connection may send before the first ACK; Linux's default is 10 segments (RFC 6928).".into(),
                fix: Fix {
                    syntax: "shell",
                    text: format!("ip route change {} initcwnd 10", r.text),
                },
                confirms: crate::vocabulary::confirms("route_initcwnd_small").to_vec(),
                evidence: None,
                ports: Vec::new(),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(values: &[(&str, &str)]) -> PathBuf {
        // One directory per call: tests run in parallel.
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("rttdoc-audit-sysctl-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for (k, v) in values {
            let p = dir.join(k.replace('.', "/"));
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, format!("{v}\n")).unwrap();
        }
        dir
    }

    #[test]
    fn sysctls_are_read_from_a_tree_and_hex_fastopen_is_a_number() {
        let dir = tree(&[
            ("net.ipv4.tcp_fastopen", "0x403"),
            ("net.core.somaxconn", "128"),
        ]);
        let s = Sysctls::read(&dir).unwrap();
        assert_eq!(s.number("net.ipv4.tcp_fastopen"), Some(0x403));
        assert_eq!(s.number("net.core.somaxconn"), Some(128));
        assert_eq!(s.get("net.ipv4.tcp_slow_start_after_idle"), None);
        let _ = std::fs::remove_dir_all(&dir);
        assert!(Sysctls::read(Path::new("/nonexistent/sys")).is_err());
    }

    #[test]
    fn slow_start_after_idle_is_found_when_on_and_not_when_off() {
        let on = tree(&[
            ("net.ipv4.tcp_slow_start_after_idle", "1"),
            ("net.ipv4.tcp_congestion_control", "cubic"),
        ]);
        let k = Kernel {
            sysctls: Some(Sysctls::read(&on).unwrap()),
            routes: None,
        };
        let f = check(&k, true);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].check, "slow_start_after_idle");
        assert_eq!(f[0].severity, Severity::Medium);
        let _ = std::fs::remove_dir_all(&on);
        let off = tree(&[
            ("net.ipv4.tcp_slow_start_after_idle", "0"),
            ("net.ipv4.tcp_congestion_control", "cubic"),
            ("net.core.somaxconn", "4096"),
        ]);
        let k = Kernel {
            sysctls: Some(Sysctls::read(&off).unwrap()),
            routes: None,
        };
        assert!(check(&k, true).is_empty());
        let _ = std::fs::remove_dir_all(&off);
    }

    #[test]
    fn abort_on_overflow_is_found_when_on_and_not_when_off() {
        for (value, found) in [("1", true), ("0", false)] {
            let dir = tree(&[
                ("net.ipv4.tcp_abort_on_overflow", value),
                ("net.core.somaxconn", "4096"),
            ]);
            let k = Kernel {
                sysctls: Some(Sysctls::read(&dir).unwrap()),
                routes: None,
            };
            let f = check(&k, true);
            let _ = std::fs::remove_dir_all(&dir);
            assert_eq!(
                f.iter().map(|x| x.check).collect::<Vec<_>>(),
                if found {
                    vec!["abort_on_overflow"]
                } else {
                    vec![]
                },
                "{value}"
            );
            if found {
                assert_eq!(
                    f[0].confirms,
                    vec![rttdoc_model::FindingKind::ListenerReset]
                );
            }
        }
    }

    #[test]
    fn routes_are_read_from_ip_json_with_their_metrics() {
        let json = r#"[{"type":"unicast","dst":"default","gateway":"10.9.0.2","dev":"v0","metrics":[{"initcwnd":20,"initrwnd":30,"quickack":1}]},
            {"type":"unicast","dst":"10.8.0.0/24","gateway":"10.9.0.3","dev":"v0","metrics":[{"initcwnd":4}]},
            {"type":"local","dst":"127.0.0.1","dev":"lo"}]
            [{"type":"unicast","dst":"fe80::/64","dev":"v0"}]"#;
        let r = parse_routes(json).unwrap();
        assert_eq!(r.len(), 3);
        assert_eq!(r[0].text, "default via 10.9.0.2 dev v0");
        assert_eq!(
            (r[0].initcwnd, r[0].initrwnd, r[0].quickack),
            (Some(20), Some(30), true)
        );
        assert_eq!(r[1].initcwnd, Some(4));
        assert!(!r[2].quickack);
        let k = Kernel {
            sysctls: None,
            routes: Some(r),
        };
        let f = check(&k, true);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].check, "route_initcwnd_small");
        assert_eq!(k.initcwnd().0, 4);
        assert!(parse_routes("{").is_err());
        assert!(parse_routes("{}").is_err());
    }
}
