//! `rttdoc audit` on the test configurations in tests/data/audit: every
//! check has a configuration that triggers it and one that must not, with
//! includes and http -> server -> location inheritance deciding which.
//! Sysctls come from trees the tests write (`--sysctl-root`); live ones
//! from a network namespace are in audit_netns.rs.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{data_dir, require, rttdoc_bin, TempDir};
use serde_json::Value;

fn audit_dir() -> PathBuf {
    data_dir().join("audit")
}

/// Runs `rttdoc audit ARGS --json` in tests/data/audit (so locations read
/// `nginx/tls/sites/x.conf:6`); returns the document and the exit code.
fn audit(args: &[&str]) -> (Value, i32) {
    let out = Command::new(rttdoc_bin())
        .current_dir(audit_dir())
        .arg("audit")
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    let doc: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("bad JSON ({e}) from audit {args:?}: {stderr}"));
    (doc, out.status.code().unwrap_or(-1))
}

/// Findings of one check: (location, ports, severity, title).
fn found<'a>(doc: &'a Value, check: &str) -> Vec<&'a Value> {
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["check"] == check)
        .collect()
}

fn ats(doc: &Value, check: &str) -> Vec<String> {
    found(doc, check)
        .iter()
        .map(|f| f["location"]["at"].as_str().unwrap().to_string())
        .collect()
}

fn ports(f: &Value) -> Vec<u64> {
    f["ports"]
        .as_array()
        .map(|a| a.iter().map(|p| p.as_u64().unwrap()).collect())
        .unwrap_or_default()
}

/// A /proc/sys-like tree with these values.
fn sysctl_tree(dir: &TempDir, name: &str, values: &[(&str, &str)]) -> PathBuf {
    let root = dir.path(name);
    for (k, v) in values {
        let p = root.join(k.replace('.', "/"));
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, format!("{v}\n")).unwrap();
    }
    root
}

/// `nginx -t` binds the listen sockets it checks: run it in a fresh
/// network namespace, with the lab's server address on its loopback, so no
/// port of the host (a distribution's nginx on :80) is involved. Root: it
/// also opens the distribution's default log files.
fn nginx_t(conf: &Path) -> Result<(), String> {
    let tmp = TempDir::new("audit-nginx-t");
    let script = format!(
        "ip link set lo up && ip addr add 10.77.0.2/32 dev lo && exec nginx -t -q -c '{}' -p '{}' -e '{}' -g 'pid {};'",
        conf.display(),
        tmp.0.display(),
        tmp.path("error.log").display(),
        tmp.path("nginx.pid").display()
    );
    let out = Command::new("unshare")
        .args(["-n", "sh", "-c", &script])
        .output()
        .map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).to_string())
    }
}

#[test]
fn every_test_configuration_is_accepted_by_nginx_and_haproxy() {
    if !require(
        "every_test_configuration_is_accepted_by_nginx_and_haproxy",
        &["nginx", "haproxy", "unshare", "ip"],
        true,
    ) {
        return;
    }
    let mut confs = Vec::new();
    for entry in std::fs::read_dir(audit_dir().join("nginx")).unwrap() {
        let dir = entry.unwrap().path();
        if dir.join("nginx.conf").is_file() {
            confs.push(dir.join("nginx.conf"));
        }
    }
    for entry in std::fs::read_dir(audit_dir().join("nginx/lab")).unwrap() {
        confs.push(entry.unwrap().path());
    }
    assert!(
        confs.len() >= 13,
        "only {} nginx configurations",
        confs.len()
    );
    for conf in &confs {
        nginx_t(conf).unwrap_or_else(|e| panic!("nginx -t {}: {e}", conf.display()));
    }
    for f in [
        "haproxy.cfg",
        "haproxy-tuned.cfg",
        "cors.cfg",
        "h2-upload.cfg",
        "h2-upload-wide.cfg",
    ] {
        // HAProxy takes relative crt paths from its working directory
        // (h2-upload.cfg's from the environment, as its script gives it).
        let out = Command::new("haproxy")
            .current_dir(audit_dir().join("haproxy"))
            .env("RTTDOC_H2_PEM", "../certs/haproxy-small-ec.pem")
            .args(["-c", "-q", "-f", f])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "haproxy -c {f}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// (lab scenario, the check its configuration must get; None for a control)
const LAB_FIXTURES: &[(&str, Option<&str>)] = &[
    ("tls13-nagle-nginx", Some("nagle_tls_flight")),
    ("tls13-nodelay-nginx", None),
    ("wwr-nagle-nginx", Some("nagle_keepalive")),
    ("wwr-nodelay-nginx", None),
    ("initcwnd-chain-nginx", Some("chain_over_initcwnd")),
    ("small-chain-nginx", None),
    ("hrr-nginx", Some("hrr_curves")),
    ("no-hrr-nginx", None),
];

#[test]
fn committed_lab_captures_confirm_what_their_configurations_predict_and_controls_show_none() {
    // Each pathology's check, and the checks of the others, which a
    // control must not get either.
    let all: Vec<&str> = LAB_FIXTURES.iter().filter_map(|(_, c)| *c).collect();
    for (name, check) in LAB_FIXTURES {
        let conf = format!("nginx/lab/{name}.conf");
        let capture = format!("../lab/{name}/server.pcapng.gz");
        let (doc, code) = audit(&["--nginx", &conf, "--capture", &capture]);
        assert_eq!(code, 0);
        match check {
            Some(check) => {
                let f = found(&doc, check);
                assert_eq!(f.len(), 1, "{name}: {check}: {}", doc["findings"]);
                let e = &f[0]["evidence"];
                assert_eq!(e["status"], "confirmed", "{name}: {e}");
                assert!(!e["frames"].as_array().unwrap().is_empty(), "{name}: {e}");
                // The capture's findings name the line that explains them.
                let at = f[0]["location"]["at"].as_str().unwrap();
                let explained = doc["capture"]["kinds"].as_array().unwrap().iter().any(|k| {
                    k["explained_by"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|x| x.as_str().unwrap().ends_with(at))
                });
                assert!(explained, "{name}: {}", doc["capture"]);
            }
            None => {
                for c in &all {
                    assert!(found(&doc, c).is_empty(), "{name}: {c}");
                }
                let kinds: Vec<&str> = doc["capture"]["kinds"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter_map(|k| k["kind"].as_str())
                    .collect();
                for k in [
                    "nagle_hold",
                    "write_write_read",
                    "initcwnd_limited",
                    "hello_retry_request",
                ] {
                    assert!(!kinds.contains(&k), "{name}: capture shows {k}");
                }
            }
        }
    }
}

/// The proxy of scripts/proxy-captures.sh: its default `proxy_pass` opens
/// a connection per request (the capture's `upstream_wait` confirms it on
/// that server's port); the server that keeps its upstream connections
/// gets nothing.
#[test]
fn a_proxy_pass_connecting_per_request_is_confirmed_by_the_proxys_capture() {
    let (doc, code) = audit(&[
        "--nginx",
        "nginx/proxy/nginx.conf",
        "--capture",
        "../proxy/nginx-new-conn.pcap.gz",
    ]);
    assert_eq!(code, 0);
    let f = found(&doc, "upstream_per_request");
    assert_eq!(f.len(), 1, "{}", doc["findings"]);
    assert_eq!(
        ats(&doc, "upstream_per_request"),
        ["nginx/proxy/nginx.conf:9"]
    );
    assert_eq!(ports(f[0]), [8080]);
    assert_eq!(
        f[0]["evidence"]["status"], "confirmed",
        "{}",
        f[0]["evidence"]
    );
    let explained = doc["capture"]["kinds"].as_array().unwrap().iter().any(|k| {
        k["kind"] == "upstream_wait"
            && k["explained_by"]
                .as_array()
                .unwrap()
                .iter()
                .any(|x| x.as_str().unwrap().ends_with("nginx/proxy/nginx.conf:9"))
    });
    assert!(explained, "{}", doc["capture"]);
}

/// The server of scripts/reuse-captures.sh: keep-alive off on 8080 (and
/// one request per connection on 8083) costs every returning request a
/// new connection, which the capture of curl against 8080 confirms
/// (`connection_not_reused` on that port); an idle timeout of 1 s, or the
/// defaults, are no finding.
#[test]
fn keepalive_off_is_found_where_set_and_confirmed_by_the_capture_of_its_port() {
    let (doc, code) = audit(&[
        "--nginx",
        "nginx/keepalive/nginx.conf",
        "--capture",
        "../reuse/server-close.pcap.gz",
    ]);
    assert_eq!(code, 0);
    let mut at = ats(&doc, "keepalive_off");
    at.sort();
    assert_eq!(
        at,
        [
            "nginx/keepalive/nginx.conf:10",
            "nginx/keepalive/nginx.conf:7"
        ]
    );
    let mut f = found(&doc, "keepalive_off");
    f.sort_by_key(|f| ports(f));
    assert_eq!(ports(f[0]), [8080]);
    assert_eq!(ports(f[1]), [8083]);
    assert_eq!(
        f[0]["confirms"],
        serde_json::json!(["connection_not_reused"])
    );
    assert_eq!(
        f[0]["evidence"]["status"], "confirmed",
        "{}",
        f[0]["evidence"]
    );
    assert_ne!(
        f[1]["evidence"]["status"], "confirmed",
        "{}",
        f[1]["evidence"]
    );
    // The capture's findings are explained by the setting.
    let explained = doc["capture"]["kinds"].as_array().unwrap().iter().any(|k| {
        k["kind"] == "connection_not_reused"
            && k["explained_by"].as_array().unwrap().iter().any(|x| {
                x.as_str()
                    .unwrap()
                    .ends_with("nginx/keepalive/nginx.conf:7")
            })
    });
    assert!(explained, "{}", doc["capture"]);
}

#[test]
fn preflight_answers_without_a_max_age_are_found_where_sent_and_confirmed_by_chromiums_capture() {
    let (doc, code) = audit(&[
        "--nginx",
        "nginx/cors/nginx.conf",
        "--capture",
        "../cors/preflight.pcap.gz",
    ]);
    assert_eq!(code, 0);
    let mut f = found(&doc, "cors_preflight_uncached");
    f.sort_by_key(|f| ports(f));
    // 8081: no max age; 8082: the max age outside the `if` that answers
    // the preflight; 8083 sends one with its fields: none.
    let at: Vec<&str> = f
        .iter()
        .map(|f| f["location"]["at"].as_str().unwrap())
        .collect();
    assert_eq!(
        at,
        ["nginx/cors/nginx.conf:13", "nginx/cors/nginx.conf:26"],
        "{f:?}"
    );
    assert_eq!(ports(f[0]), [8081]);
    assert_eq!(ports(f[1]), [8082]);
    assert_eq!(f[1]["related"][0]["at"], "nginx/cors/nginx.conf:23");
    assert_eq!(f[0]["confirms"], serde_json::json!(["cors_preflight"]));
    // Chromium's capture of the API on 8081 shows the preflights.
    assert_eq!(
        f[0]["evidence"]["status"], "confirmed",
        "{}",
        f[0]["evidence"]
    );
    assert_ne!(
        f[1]["evidence"]["status"], "confirmed",
        "{}",
        f[1]["evidence"]
    );
}

#[test]
fn haproxy_answering_preflights_without_a_max_age_is_confirmed_by_chromiums_capture() {
    // The configuration scripts/cors-captures.sh ran for the capture.
    let (doc, code) = audit(&[
        "--haproxy",
        "haproxy/cors.cfg",
        "--capture",
        "../cors/preflight-haproxy.pcap.gz",
    ]);
    assert_eq!(code, 0);
    let f = found(&doc, "cors_preflight_uncached");
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0]["location"]["at"], "haproxy/cors.cfg:13");
    assert_eq!(ports(f[0]), [8091]);
    assert_eq!(
        f[0]["evidence"]["status"], "confirmed",
        "{}",
        f[0]["evidence"]
    );
}

#[test]
fn haproxy_s_default_http2_window_is_confirmed_by_the_uploads_it_paced() {
    // The configuration scripts/h2-window-captures.sh ran for the
    // captures: the default window, its uploads paced; the control's 8 MB
    // window, no finding and an upload the path paced.
    let (doc, code) = audit(&[
        "--haproxy",
        "haproxy/h2-upload.cfg",
        "--capture",
        "../h2-window/haproxy-upload-h2c.pcap.gz",
    ]);
    assert_eq!(code, 0);
    let f = found(&doc, "h2_upload_window_small");
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0]["location"]["at"], "haproxy/h2-upload.cfg:13");
    assert_eq!(ports(f[0]), [8090, 8453]);
    assert_eq!(
        f[0]["evidence"]["status"], "confirmed",
        "{}",
        f[0]["evidence"]
    );
    let (doc, _) = audit(&[
        "--haproxy",
        "haproxy/h2-upload-wide.cfg",
        "--capture",
        "../h2-window/haproxy-upload-wide.pcap.gz",
    ]);
    assert!(found(&doc, "h2_upload_window_small").is_empty());
}

#[test]
fn tcp_nodelay_off_holds_the_handshake_only_where_the_default_server_inherits_it_and_the_flight_is_over_4096_bytes(
) {
    let (doc, _) = audit(&["--nginx", "nginx/nagle/nginx.conf"]);
    // http-level `tcp_nodelay off` reaches mid.test (4.8 KB flight);
    // small.test's flight is one write; on.test sets it on at server level.
    let tls = found(&doc, "nagle_tls_flight");
    assert_eq!(tls.len(), 1, "{tls:?}");
    assert_eq!(tls[0]["location"]["at"], "nginx/nagle/nginx.conf:7");
    assert_eq!(ports(tls[0]), vec![8443]);
    assert_eq!(tls[0]["severity"], "high");
    assert_eq!(tls[0]["confirms"], serde_json::json!(["nagle_hold"]));
}

#[test]
fn tcp_nodelay_off_on_keepalive_follows_inheritance_down_to_locations_and_skips_servers_without_keepalive(
) {
    let (doc, _) = audit(&["--nginx", "nginx/nagle/nginx.conf"]);
    let ka = found(&doc, "nagle_keepalive");
    assert_eq!(ka.len(), 2, "{ka:?}");
    let http = ka
        .iter()
        .find(|f| f["location"]["at"] == "nginx/nagle/nginx.conf:7")
        .expect("the http-level line");
    // Inherited by mid, small and plain; not by on.test (server-level on)
    // nor close.test (keepalive_timeout 0).
    assert_eq!(ports(http), vec![8443, 8444, 8080]);
    // Plain HTTP with sendfile and no tcp_nopush: two writes per response.
    assert_eq!(http["severity"], "high");
    assert_eq!(http["confidence"], "high");
    let location = ka
        .iter()
        .find(|f| f["location"]["at"] == "nginx/nagle/servers/03-tls-server-on.conf:11")
        .expect("the location-level line");
    assert_eq!(ports(location), vec![8445]);
    assert_eq!(location["severity"], "medium");
}

#[test]
fn tls_settings_are_found_on_the_sites_that_set_them_and_not_on_those_that_inherit_better_ones() {
    let (doc, _) = audit(&["--nginx", "nginx/tls/nginx.conf"]);
    assert_eq!(
        ats(&doc, "chain_over_initcwnd"),
        vec!["nginx/tls/sites/a-big-chain.conf:6"]
    );
    let chain = &found(&doc, "chain_over_initcwnd")[0];
    assert!(
        chain["related"][0]["text"]
            .as_str()
            .unwrap()
            .contains("root included"),
        "{chain}"
    );
    // c turns both tickets and cache off; b only tickets (the http-level
    // shared cache still resumes).
    assert_eq!(
        ats(&doc, "no_resumption"),
        vec!["nginx/tls/sites/c-no-resumption.conf:7"]
    );
    assert_eq!(
        ats(&doc, "hrr_curves"),
        vec!["nginx/tls/sites/d-hrr.conf:8"]
    );
    assert_eq!(
        ats(&doc, "rsa_signing"),
        vec!["nginx/tls/sites/f-rsa4096.conf:5"]
    );
    // Only g overrides the http-level 4k.
    assert_eq!(
        ats(&doc, "ssl_buffer_size"),
        vec!["nginx/tls/sites/g-buffer-16k.conf:7"]
    );
    // Certificates are read and sized.
    let certs = doc["inputs"]["certificates"].as_array().unwrap();
    let big = certs
        .iter()
        .find(|c| c["file"].as_str().unwrap().ends_with("big-chain.pem"))
        .unwrap();
    assert_eq!(big["certificates"].as_array().unwrap().len(), 3);
    assert!(big["flight_tls13"].as_u64().unwrap() > 14480, "{big}");
}

#[test]
fn a_larger_initial_window_on_the_route_makes_the_big_chain_fit() {
    let tmp = TempDir::new("audit-routes");
    let routes = tmp.path("routes.json");
    std::fs::write(
        &routes,
        r#"[{"type":"unicast","dst":"default","gateway":"192.0.2.1","dev":"eth0","metrics":[{"initcwnd":20}]}]"#,
    )
    .unwrap();
    let (doc, _) = audit(&[
        "--nginx",
        "nginx/tls/nginx.conf",
        "--routes-json",
        &routes.to_string_lossy(),
    ]);
    assert!(found(&doc, "chain_over_initcwnd").is_empty());
    std::fs::write(
        &routes,
        r#"[{"type":"unicast","dst":"default","gateway":"192.0.2.1","dev":"eth0","metrics":[{"initcwnd":4}]}]"#,
    )
    .unwrap();
    let (doc, _) = audit(&[
        "--nginx",
        "nginx/tls/nginx.conf",
        "--routes-json",
        &routes.to_string_lossy(),
    ]);
    assert_eq!(ats(&doc, "route_initcwnd_small").len(), 1);
    // The other sites' flights (one certificate) still fit in 4 segments.
    assert_eq!(
        ats(&doc, "chain_over_initcwnd"),
        vec!["nginx/tls/sites/a-big-chain.conf:6"]
    );
}

#[test]
fn early_data_is_judged_by_the_default_server_and_guarded_by_ssl_early_data_uses() {
    let (doc, _) = audit(&["--nginx", "nginx/early/nginx.conf"]);
    let unguarded = found(&doc, "early_data_no_replay_guard");
    assert_eq!(unguarded.len(), 1, "{unguarded:?}");
    assert_eq!(
        unguarded[0]["location"]["at"],
        "nginx/early/early.d/2-unguarded.conf:6"
    );
    assert_eq!(ports(unguarded[0]), vec![9102]);
    let mut ineffective = ats(&doc, "early_data_ineffective");
    ineffective.sort();
    assert_eq!(
        ineffective,
        vec![
            "nginx/early/early.d/1-default-off.conf:11",
            "nginx/early/early.d/4-no-sessions.conf:6"
        ]
    );
    // At http level it reaches the default server: a.test is guarded by
    // the map it uses, b.test is not.
    let (doc, _) = audit(&["--nginx", "nginx/early-http/nginx.conf"]);
    let f = found(&doc, "early_data_no_replay_guard");
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0]["location"]["at"], "nginx/early-http/nginx.conf:6");
    assert!(f[0]["title"].as_str().unwrap().contains("b.test"));
    assert!(found(&doc, "early_data_ineffective").is_empty());
}

#[test]
fn listener_settings_are_checked_against_the_kernels_sysctls() {
    let tmp = TempDir::new("audit-sysctl");
    let off = sysctl_tree(
        &tmp,
        "off",
        &[
            ("net.ipv4.tcp_fastopen", "1"),
            ("net.core.somaxconn", "4096"),
            ("net.ipv4.tcp_slow_start_after_idle", "1"),
            ("net.ipv4.tcp_congestion_control", "cubic"),
        ],
    );
    let (doc, _) = audit(&[
        "--nginx",
        "nginx/kernel/nginx.conf",
        "--sysctl-root",
        &off.to_string_lossy(),
    ]);
    assert_eq!(
        ats(&doc, "tfo_listener_without_kernel"),
        vec!["nginx/kernel/nginx.conf:9"]
    );
    // backlog=8192 is cut to 4096; backlog=1024 fits.
    assert_eq!(
        ats(&doc, "backlog_mismatch"),
        vec!["nginx/kernel/nginx.conf:9"]
    );
    assert_eq!(
        ats(&doc, "slow_start_after_idle"),
        vec!["net.ipv4.tcp_slow_start_after_idle"]
    );
    assert!(found(&doc, "tfo_kernel_without_listener").is_empty());

    let good = sysctl_tree(
        &tmp,
        "good",
        &[
            ("net.ipv4.tcp_fastopen", "3"),
            ("net.core.somaxconn", "65535"),
            ("net.ipv4.tcp_slow_start_after_idle", "0"),
            ("net.ipv4.tcp_congestion_control", "cubic"),
        ],
    );
    let (doc, code) = audit(&[
        "--nginx",
        "nginx/kernel/nginx.conf",
        "--sysctl-root",
        &good.to_string_lossy(),
        "--fail-on",
        "low",
    ]);
    assert!(doc["findings"].as_array().unwrap().is_empty(), "{doc}");
    assert_eq!(code, 0);
    // The server bit with no listener asking for TFO.
    let (doc, _) = audit(&[
        "--nginx",
        "nginx/tls/nginx.conf",
        "--sysctl-root",
        &good.to_string_lossy(),
    ]);
    assert_eq!(
        ats(&doc, "tfo_kernel_without_listener"),
        vec!["net.ipv4.tcp_fastopen"]
    );
    // Without --sysctl the TFO listener is a note, not a finding.
    let (doc, _) = audit(&["--nginx", "nginx/kernel/nginx.conf"]);
    assert!(found(&doc, "tfo_listener_without_kernel").is_empty());
    assert!(doc["inputs"]["notes"][0]
        .as_str()
        .unwrap()
        .contains("--sysctl"));
}

#[test]
fn haproxy_binds_inherit_global_defaults_and_each_check_has_its_negative() {
    let tmp = TempDir::new("audit-haproxy");
    let sys = sysctl_tree(
        &tmp,
        "s",
        &[
            ("net.ipv4.tcp_fastopen", "1"),
            ("net.ipv4.tcp_slow_start_after_idle", "0"),
        ],
    );
    let (doc, _) = audit(&[
        "--haproxy",
        "haproxy/haproxy.cfg",
        "--sysctl-root",
        &sys.to_string_lossy(),
    ]);
    let bind_big = "haproxy/haproxy.cfg:18";
    assert_eq!(ats(&doc, "chain_over_initcwnd"), vec![bind_big]);
    assert_eq!(ats(&doc, "tfo_listener_without_kernel"), vec![bind_big]);
    assert_eq!(ats(&doc, "no_resumption"), vec![bind_big]);
    // 0-RTT: ineffective on :9301 (no sessions), unguarded on :9302,
    // guarded by wait-for-handshake on :9303.
    assert_eq!(ats(&doc, "early_data_ineffective"), vec![bind_big]);
    assert_eq!(
        ats(&doc, "early_data_no_replay_guard"),
        vec!["haproxy/haproxy.cfg:23"]
    );
    // Global P-256 reaches :9301; the others set X25519:P-256.
    assert_eq!(ats(&doc, "hrr_curves"), vec!["haproxy/haproxy.cfg:5"]);
    assert_eq!(found(&doc, "ssl_buffer_size").len(), 1);
    // HTTP mode from defaults, no http-no-delay: every frontend.
    assert_eq!(
        ats(&doc, "haproxy_msg_more"),
        vec![
            "haproxy/haproxy.cfg:15",
            "haproxy/haproxy.cfg:21",
            "haproxy/haproxy.cfg:26"
        ]
    );

    let (doc, _) = audit(&[
        "--haproxy",
        "haproxy/haproxy-tuned.cfg",
        "--sysctl-root",
        &sys.to_string_lossy(),
    ]);
    for check in [
        "chain_over_initcwnd",
        "no_resumption",
        "hrr_curves",
        "ssl_buffer_size",
        "early_data_no_replay_guard",
    ] {
        assert!(found(&doc, check).is_empty(), "{check}: {doc}");
    }
    assert_eq!(
        ats(&doc, "tfo_listener_without_kernel"),
        vec!["haproxy/haproxy-tuned.cfg:15"]
    );
    let on = sysctl_tree(&tmp, "on", &[("net.ipv4.tcp_fastopen", "3")]);
    let (doc, _) = audit(&[
        "--haproxy",
        "haproxy/haproxy-tuned.cfg",
        "--sysctl-root",
        &on.to_string_lossy(),
    ]);
    assert!(doc["findings"].as_array().unwrap().is_empty(), "{doc}");
}

#[test]
fn json_is_versioned_and_every_finding_says_where_what_it_costs_and_the_fix() {
    let (doc, _) = audit(&[
        "--nginx",
        "nginx/tls/nginx.conf",
        "--haproxy",
        "haproxy/haproxy.cfg",
    ]);
    assert_eq!(doc["schema"], "rttdoc-audit");
    assert_eq!(doc["schema_version"], 1);
    let findings = doc["findings"].as_array().unwrap();
    assert!(findings.len() >= 8);
    for f in findings {
        for key in ["check", "severity", "confidence", "title", "why"] {
            assert!(
                f[key].as_str().is_some_and(|s| !s.is_empty()),
                "{key} in {f}"
            );
        }
        assert!(
            f["location"]["at"].as_str().is_some_and(|s| !s.is_empty()),
            "{f}"
        );
        assert!(f["cost"]["per"].as_str().is_some(), "{f}");
        assert!(
            f["cost"]["text"].as_str().is_some_and(|s| !s.is_empty()),
            "{f}"
        );
        assert!(
            ["nginx", "haproxy", "sysctl", "shell"].contains(&f["fix"]["syntax"].as_str().unwrap()),
            "{f}"
        );
    }
    let s = &doc["summary"];
    assert_eq!(s["findings"].as_u64().unwrap() as usize, findings.len());
    assert_eq!(s["worst"], "high");
}

#[test]
fn fail_on_sets_the_exit_status_by_the_worst_severity() {
    let (_, code) = audit(&["--nginx", "nginx/tls/nginx.conf", "--fail-on", "high"]);
    assert_eq!(code, 2);
    // The tuned HAProxy has nothing to report without sysctls.
    let (doc, code) = audit(&[
        "--haproxy",
        "haproxy/haproxy-tuned.cfg",
        "--fail-on",
        "high",
    ]);
    assert!(doc["findings"].as_array().unwrap().is_empty());
    assert_eq!(code, 0);
    let (_, code) = audit(&["--nginx", "nginx/tls/nginx.conf"]);
    assert_eq!(code, 0, "no --fail-on: success");
}

#[test]
fn unreadable_or_broken_configurations_are_errors_that_name_the_file_and_line() {
    let tmp = TempDir::new("audit-broken");
    let conf = tmp.path("nginx.conf");
    std::fs::write(&conf, "events {}\nhttp {\n  server {\n    listen 80\n  }\n").unwrap();
    let out = Command::new(rttdoc_bin())
        .args(["audit", "--nginx"])
        .arg(&conf)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("nginx.conf:5") && !err.contains("panicked"),
        "{err}"
    );
    let out = Command::new(rttdoc_bin())
        .args(["audit", "--nginx", "/nonexistent/nginx.conf"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/nginx.conf"));
    let out = Command::new(rttdoc_bin()).arg("audit").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn abort_on_overflow_is_found_in_the_sysctls_and_confirmed_by_the_listeners_resets() {
    let tmp = TempDir::new("audit-abort");
    let on = sysctl_tree(
        &tmp,
        "on",
        &[
            ("net.ipv4.tcp_abort_on_overflow", "1"),
            ("net.core.somaxconn", "4096"),
        ],
    );
    // The capture of a server run with it on (scripts/accept-queue-
    // captures.sh): handshakes that found the queue full, reset.
    let (doc, _) = audit(&[
        "--sysctl-root",
        &on.to_string_lossy(),
        "--capture",
        "../accept-queue/http-abort-server.pcap.gz",
    ]);
    assert_eq!(
        ats(&doc, "abort_on_overflow"),
        vec!["net.ipv4.tcp_abort_on_overflow"]
    );
    let f = &found(&doc, "abort_on_overflow")[0];
    assert_eq!(f["confirms"], serde_json::json!(["listener_reset"]));
    assert_eq!(f["evidence"]["status"], "confirmed", "{}", f["evidence"]);
    // A capture of the default (the queue dropped, not reset): not seen.
    let (doc, _) = audit(&[
        "--sysctl-root",
        &on.to_string_lossy(),
        "--capture",
        "../accept-queue/http-nocookies-server.pcap.gz",
    ]);
    let f = &found(&doc, "abort_on_overflow")[0];
    assert_eq!(f["evidence"]["status"], "not_seen", "{}", f["evidence"]);
    // Off: nothing to say.
    let off = sysctl_tree(
        &tmp,
        "off",
        &[
            ("net.ipv4.tcp_abort_on_overflow", "0"),
            ("net.core.somaxconn", "4096"),
        ],
    );
    let (doc, _) = audit(&["--sysctl-root", &off.to_string_lossy()]);
    assert!(found(&doc, "abort_on_overflow").is_empty(), "{doc}");
}

#[test]
fn a_chain_without_its_intermediate_is_found_and_confirmed_by_the_clients_fetches() {
    // nginx/cert-fetch: the certificate alone on 8443, the chain on 9443.
    let (doc, _) = audit(&[
        "--nginx",
        "nginx/cert-fetch/nginx.conf",
        "--capture",
        "../cert-fetch/aia.pcap.gz",
    ]);
    assert_eq!(
        ats(&doc, "chain_incomplete"),
        vec!["nginx/cert-fetch/nginx.conf:8"]
    );
    let f = &found(&doc, "chain_incomplete")[0];
    assert_eq!(f["confirms"], serde_json::json!(["certificate_fetch"]));
    assert_eq!(ports(f), vec![8443]);
    // Chromium fetched the intermediate for both its connections to 8443.
    assert_eq!(f["evidence"]["status"], "confirmed", "{}", f["evidence"]);
    // The same server where nginx sent the chain: nothing fetched.
    let (doc, _) = audit(&[
        "--nginx",
        "nginx/cert-fetch/nginx.conf",
        "--capture",
        "../cert-fetch/full-chain.pcap.gz",
    ]);
    let f = &found(&doc, "chain_incomplete")[0];
    assert_eq!(f["evidence"]["status"], "not_seen", "{}", f["evidence"]);
}
