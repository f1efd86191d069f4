//! `rttdoc monitor` end to end: live capture on the client side of a lab
//! path (the lab's two namespaces, TUN devices, 40 ms emulated round trip)
//! while nginx (TLS 1.3, a 3-certificate RSA chain whose ~5 KB flight
//! OpenSSL writes as 4096 bytes then the rest) answers curl; a real
//! Prometheus server scrapes the monitor every second, and PromQL over its
//! HTTP API must show what the kernel did: with `tcp_nodelay off` Nagle
//! holds the end of the server flight for the client's ACK (nagle
//! findings, handshakes of ~2 round trips), with `tcp_nodelay on` neither.
//!
//! The last connection's FIN exchange is the last packet on the path: only
//! the monitor's wall-clock tick reports it, so waiting for every
//! connection to be counted also checks that tick.
//!
//! Needs root, nginx, curl, openssl, prometheus; skips without them (fails
//! under CI=true). Everything runs inside the lab's namespaces (Prometheus
//! and the monitor on the client namespace's own loopback) and is killed
//! and removed on the way out, panics included.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use common::*;
use rttdoc_lab::emulator::WanConfig;
use rttdoc_lab::netns::Netns;
use rttdoc_lab::scenario::{make_chain, Chain};
use rttdoc_lab::{Lab, SERVER_IP};

/// Connections curl makes per run: enough that a P95 is not one handshake.
const CONNECTIONS: usize = 12;
const MONITOR_ADDR: &str = "127.0.0.1:9464";
const PROMETHEUS_ADDR: &str = "127.0.0.1:19090";

/// Kills a child process (and waits for it) when dropped.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
        rttdoc_lab::journal::forget_process(self.0.id());
    }
}

/// Stops the daemonised nginx whose pid file this is, when dropped.
struct NginxGuard(PathBuf);

impl Drop for NginxGuard {
    fn drop(&mut self) {
        if let Some(pid) = std::fs::read_to_string(&self.0)
            .ok()
            .and_then(|p| p.trim().parse::<i32>().ok())
        {
            // SAFETY: signals the nginx master this test started.
            unsafe { libc::kill(pid, libc::SIGTERM) };
            rttdoc_lab::journal::forget_process(pid as u32);
        }
    }
}

fn spawn(ns: &Netns, program: &str, args: &[&str], log: &Path, what: &'static str) -> Killed {
    let log = std::fs::File::create(log).unwrap();
    let child = ns
        .command(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let _ = rttdoc_lab::journal::record_process(child.id());
    Killed(child)
}

/// `curl -s URL` inside the namespace; None when it fails.
fn http_get(ns: &Netns, url: &str) -> Option<String> {
    let out = ns
        .command("curl")
        .args(["-s", "--max-time", "3", "--fail", url])
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Polls `check` every 250 ms until it returns Some, for at most `limit`.
fn wait_for<T>(limit: Duration, what: &str, mut check: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(v) = check() {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// A PromQL instant query's single value (None: empty result or NaN).
fn query(ns: &Netns, promql: &str) -> Option<f64> {
    let out = ns
        .command("curl")
        .args([
            "-s",
            "--max-time",
            "3",
            "--get",
            "--data-urlencode",
            &format!("query={promql}"),
            &format!("http://{PROMETHEUS_ADDR}/api/v1/query"),
        ])
        .output()
        .ok()?;
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
    assert_eq!(doc["status"], "success", "{promql}: {doc}");
    let result = doc["data"]["result"].as_array()?;
    assert!(result.len() <= 1, "{promql}: one series expected: {doc}");
    let v: f64 = result.first()?["value"][1].as_str()?.parse().ok()?;
    (!v.is_nan()).then_some(v)
}

struct Observed {
    connections: f64,
    nagle: f64,
    p50: f64,
    p95: f64,
    metrics_text: String,
}

/// Runs nginx with `tcp_nodelay` on or off, the monitor on the client
/// side, curl and Prometheus; returns what PromQL says once every
/// connection has been scraped.
fn run(nodelay: bool, interface_any: bool) -> Observed {
    // One at a time: the lab's emulator times packets in user space, and a
    // second lab, Prometheus and RSA key generation on the same two cores
    // would delay its packets and so the handshakes measured.
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = TempDir::new(if nodelay {
        "monitor-nodelay"
    } else {
        "monitor-nagle"
    });
    let certs = dir.path("certs");
    let (chain, key) = make_chain(&certs, Chain::RsaChain).expect("certificate chain");
    let www = dir.path("www");
    std::fs::create_dir_all(&www).unwrap();
    std::fs::write(www.join("index.html"), "hello from rttdoc's monitor test\n").unwrap();
    let w = dir.0.display();
    let conf = format!(
        "user root; worker_processes 1; pid {w}/nginx.pid; error_log {w}/error.log; daemon on;\n\
         events {{ worker_connections 256; }}\n\
         http {{ access_log off; client_body_temp_path {w}; proxy_temp_path {w}; fastcgi_temp_path {w};\n\
         uwsgi_temp_path {w}; scgi_temp_path {w}; tcp_nodelay {};\n\
         server {{ listen {SERVER_IP}:443 ssl; ssl_certificate {}; ssl_certificate_key {};\n\
         ssl_protocols TLSv1.3; ssl_session_tickets off; ssl_session_cache off; root {}; }} }}\n",
        if nodelay { "on" } else { "off" },
        chain.display(),
        key.display(),
        www.display()
    );
    std::fs::write(dir.path("nginx.conf"), conf).unwrap();

    let lab = Lab::start(&WanConfig::rtt(Duration::from_millis(40))).expect("lab");
    let status = lab
        .server
        .command("nginx")
        .arg("-c")
        .arg(dir.path("nginx.conf"))
        .status()
        .unwrap();
    let _nginx = NginxGuard(dir.path("nginx.pid"));
    assert!(status.success(), "nginx did not start");

    let interface = if interface_any {
        "any".to_string()
    } else {
        lab.client_dev.clone()
    };
    let monitor = spawn(
        &lab.client,
        &rttdoc_bin().to_string_lossy(),
        &[
            "monitor",
            "--interface",
            &interface,
            "--filter",
            "tcp port 443",
            "--listen",
            MONITOR_ADDR,
            "--label-server",
            &format!("{SERVER_IP}:443"),
        ],
        &dir.path("monitor.log"),
        "rttdoc monitor",
    );
    let monitor_log = || std::fs::read_to_string(dir.path("monitor.log")).unwrap_or_default();
    wait_for(Duration::from_secs(10), "the monitor's /metrics", || {
        http_get(&lab.client, &format!("http://{MONITOR_ADDR}/metrics"))
    });

    std::fs::create_dir_all(dir.path("tsdb")).unwrap();
    std::fs::write(
        dir.path("prometheus.yml"),
        format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n\
             scrape_configs:\n  - job_name: rttdoc\n    static_configs:\n      - targets: ['{MONITOR_ADDR}']\n"
        ),
    )
    .unwrap();
    let _prometheus = spawn(
        &lab.client,
        "prometheus",
        &[
            &format!("--config.file={}", dir.path("prometheus.yml").display()),
            &format!("--storage.tsdb.path={}", dir.path("tsdb").display()),
            &format!("--web.listen-address={PROMETHEUS_ADDR}"),
            "--log.level=warn",
        ],
        &dir.path("prometheus.log"),
        "prometheus",
    );
    wait_for(
        Duration::from_secs(30),
        "Prometheus to scrape the monitor",
        || query(&lab.client, "up{job=\"rttdoc\"}").filter(|&v| v == 1.0),
    );

    for _ in 0..CONNECTIONS {
        let out = lab
            .client
            .command("curl")
            .args([
                "-sS",
                "-k",
                "--tlsv1.3",
                "--max-time",
                "10",
                "-o",
                "/dev/null",
                &format!("https://{SERVER_IP}/index.html"),
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "curl failed: {}; nginx: {}",
            String::from_utf8_lossy(&out.stderr),
            std::fs::read_to_string(dir.path("error.log")).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(100));
    }

    let connections = wait_for(
        Duration::from_secs(30),
        "every connection to be counted",
        || {
            query(
                &lab.client,
                "sum(rttdoc_connections_total{tls_version=\"TLS 1.3\"})",
            )
            .filter(|&n| n >= CONNECTIONS as f64)
        },
    );
    let metrics_text = http_get(&lab.client, &format!("http://{MONITOR_ADDR}/metrics")).unwrap();
    let nagle = query(
        &lab.client,
        "sum(rttdoc_findings_total{kind=~\"nagle_hold|nagle_delayed_ack\"})",
    )
    .unwrap_or(0.0);
    let quantile = |q: f64| {
        query(
            &lab.client,
            &format!(
                "histogram_quantile({q}, sum by (le) (rttdoc_tls_handshake_round_trips_bucket{{server=\"{SERVER_IP}:443\"}}))"
            ),
        )
        .unwrap_or_else(|| panic!("no P{q} of handshake round trips; monitor log: {}", monitor_log()))
    };
    let (p50, p95) = (quantile(0.5), quantile(0.95));
    eprintln!(
        "tcp_nodelay {}: {connections} connections, {nagle} nagle findings, \
         handshake round trips P50 {p50:.2} P95 {p95:.2}",
        if nodelay { "on" } else { "off" }
    );
    drop(monitor);
    Observed {
        connections,
        nagle,
        p50,
        p95,
        metrics_text,
    }
}

fn tools_present(test: &str) -> bool {
    require(
        test,
        &["nginx", "curl", "openssl", "prometheus", "ip"],
        true,
    )
}

#[test]
fn prometheus_sees_nagle_holds_and_two_round_trip_handshakes_with_tcp_nodelay_off() {
    if !tools_present(
        "prometheus_sees_nagle_holds_and_two_round_trip_handshakes_with_tcp_nodelay_off",
    ) {
        return;
    }
    let o = run(false, false);
    assert!(o.connections >= CONNECTIONS as f64);
    assert!(
        o.nagle > 0.0,
        "no nagle findings in Prometheus:\n{}",
        o.metrics_text
    );
    assert!(o.p50 > 1.5, "P50 handshake round trips {}", o.p50);
    assert!(o.p95 > 1.5, "P95 handshake round trips {}", o.p95);
}

/// The control, captured on `any` (cooked frames from every interface of
/// the client namespace, the kernel filter rewritten for them).
#[test]
fn prometheus_sees_no_nagle_and_one_round_trip_handshakes_with_tcp_nodelay_on() {
    if !tools_present("prometheus_sees_no_nagle_and_one_round_trip_handshakes_with_tcp_nodelay_on")
    {
        return;
    }
    let o = run(true, true);
    assert!(o.connections >= CONNECTIONS as f64);
    assert_eq!(
        o.nagle, 0.0,
        "nagle findings with tcp_nodelay on:\n{}",
        o.metrics_text
    );
    // The median, not P95: of a dozen handshakes one may be slowed by a
    // busy machine delaying the lab's user-space emulator, and that one
    // is the P95; Nagle's extra round trip is in every handshake.
    assert!(o.p50 < 1.5, "P50 handshake round trips {}", o.p50);
}
