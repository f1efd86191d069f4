//! `rttdoc audit --sysctl --routes` on live kernel settings: a network
//! namespace the test creates, with its own per-namespace sysctls
//! (tcp_fastopen, tcp_slow_start_after_idle, tcp_congestion_control,
//! somaxconn, tcp_max_syn_backlog, tcp_abort_on_overflow are all per netns) and a route with
//! initcwnd/quickack. The host's own settings are never touched.

mod common;

use std::process::Command;

use common::{data_dir, require, rttdoc_bin};
use serde_json::Value;

/// A namespace with a veth whose peer stays in the namespace too (nothing
/// leaves it), removed on drop, also when the test fails.
struct Netns(String);

impl Netns {
    fn new() -> Netns {
        let name = format!("rttdoc-audit-{}", std::process::id());
        let _ = Command::new("ip").args(["netns", "del", &name]).status();
        let st = Command::new("ip")
            .args(["netns", "add", &name])
            .status()
            .unwrap();
        assert!(st.success(), "ip netns add {name}");
        // From here on, drop removes it.
        let ns = Netns(name);
        ns.ip(&["link", "set", "lo", "up"]);
        ns.ip(&["link", "add", "a0", "type", "veth", "peer", "name", "a1"]);
        ns.ip(&["link", "set", "a0", "up"]);
        ns.ip(&["link", "set", "a1", "up"]);
        ns.ip(&["addr", "add", "10.213.0.1/24", "dev", "a0"]);
        ns
    }
    fn ip(&self, args: &[&str]) {
        let out = Command::new("ip")
            .arg("-n")
            .arg(&self.0)
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "ip {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    fn sysctl(&self, kv: &str) {
        let out = Command::new("ip")
            .args(["netns", "exec", &self.0, "sysctl", "-qw", kv])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "sysctl {kv}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    fn audit(&self, args: &[&str]) -> Value {
        let out = Command::new("ip")
            .args(["netns", "exec", &self.0])
            .arg(rttdoc_bin())
            .arg("audit")
            .args(args)
            .args(["--sysctl", "--routes", "--json"])
            .current_dir(data_dir().join("audit"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{stderr}");
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("bad JSON ({e}): {stderr}"))
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.0]).status();
    }
}

fn checks(doc: &Value) -> Vec<String> {
    let mut v: Vec<String> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["check"].as_str().unwrap().to_string())
        .collect();
    v.sort();
    v
}

fn host(name: &str) -> String {
    std::fs::read_to_string(format!("/proc/sys/{}", name.replace('.', "/")))
        .unwrap_or_default()
        .trim()
        .to_string()
}

#[test]
fn live_sysctls_and_routes_of_a_namespace_are_what_the_audit_judges() {
    if !require(
        "live_sysctls_and_routes_of_a_namespace_are_what_the_audit_judges",
        &["ip", "sysctl"],
        true,
    ) {
        return;
    }
    let host_before: Vec<String> = [
        "net.core.somaxconn",
        "net.ipv4.tcp_fastopen",
        "net.ipv4.tcp_slow_start_after_idle",
        "net.ipv4.tcp_abort_on_overflow",
    ]
    .iter()
    .map(|n| host(n))
    .collect();
    let ns = Netns::new();
    // Settings that cost round trips.
    ns.sysctl("net.ipv4.tcp_fastopen=1");
    ns.sysctl("net.ipv4.tcp_slow_start_after_idle=1");
    ns.sysctl("net.ipv4.tcp_congestion_control=reno");
    ns.sysctl("net.core.somaxconn=128");
    ns.sysctl("net.ipv4.tcp_abort_on_overflow=1");
    ns.ip(&[
        "route",
        "add",
        "default",
        "via",
        "10.213.0.2",
        "dev",
        "a0",
        "initcwnd",
        "4",
        "quickack",
        "1",
    ]);
    let doc = ns.audit(&["--nginx", "nginx/kernel/nginx.conf"]);
    assert_eq!(doc["inputs"]["sysctls"]["net.ipv4.tcp_fastopen"], "1");
    assert_eq!(doc["inputs"]["sysctls"]["net.core.somaxconn"], "128");
    let default = doc["inputs"]["routes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["dst"] == "default")
        .expect("the namespace's default route");
    assert_eq!(default["initcwnd"], 4);
    assert_eq!(default["quickack"], true);
    assert_eq!(
        checks(&doc),
        vec![
            "abort_on_overflow",
            // backlog=8192 and backlog=1024 are both over somaxconn 128
            "backlog_mismatch",
            "backlog_mismatch",
            "route_initcwnd_small",
            "slow_start_after_idle",
            "tfo_listener_without_kernel",
        ]
    );
    let ssai = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["check"] == "slow_start_after_idle")
        .unwrap();
    // reno grows back by slow start: the cost is sure.
    assert_eq!(ssai["confidence"], "high");

    // The same namespace set right: nothing to report.
    ns.sysctl("net.ipv4.tcp_fastopen=3");
    ns.sysctl("net.ipv4.tcp_slow_start_after_idle=0");
    ns.sysctl("net.core.somaxconn=65535");
    ns.sysctl("net.ipv4.tcp_abort_on_overflow=0");
    ns.ip(&[
        "route",
        "change",
        "default",
        "via",
        "10.213.0.2",
        "dev",
        "a0",
        "initcwnd",
        "10",
    ]);
    let doc = ns.audit(&["--nginx", "nginx/kernel/nginx.conf"]);
    assert_eq!(checks(&doc), Vec::<String>::new(), "{doc}");

    drop(ns);
    let host_after: Vec<String> = [
        "net.core.somaxconn",
        "net.ipv4.tcp_fastopen",
        "net.ipv4.tcp_slow_start_after_idle",
        "net.ipv4.tcp_abort_on_overflow",
    ]
    .iter()
    .map(|n| host(n))
    .collect();
    assert_eq!(host_before, host_after, "the host's sysctls changed");
}
