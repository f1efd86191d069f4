//! The scenario catalog: each scenario reproduces one pathology from the
//! field notes on real kernel TCP stacks, and has a control that differs in
//! exactly one knob. A run writes the captures, `labels.json` (the truth:
//! what was injected, on which connections, and the extra round trips it
//! should cost) and a `curl -w`-style timing table.

use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde::Serialize;
use serde_json::json;

use crate::{write_captures, Lab, WanConfig, SERVER_IP};

/// What a scenario injects and what it expects of the capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// nginx serving TLS 1.3 with a 3-certificate RSA-4096 chain (server
    /// flight over 4 KB) and `tcp_nodelay` on or off.
    NginxTls13 { nodelay: bool },
    /// nginx serving plain HTTP; the client's first SYN is dropped or not.
    SynLoss { drop_first_syn: bool },
}

#[derive(Debug, Clone, Copy)]
pub struct Scenario {
    pub name: &'static str,
    pub summary: &'static str,
    /// The scenario this one is the control of (differs in one knob).
    pub control_of: Option<&'static str>,
    pub kind: Kind,
    /// Programs it needs besides rttdoc.
    pub needs: &'static [&'static str],
}

pub const CATALOG: &[Scenario] = &[
    Scenario {
        name: "tls13-nagle-nginx",
        summary: "nginx, TLS 1.3, 3-cert chain (>4 KB flight), tcp_nodelay off: Nagle holds the end of the server flight for an ACK, handshake takes 2 RTT",
        control_of: None,
        kind: Kind::NginxTls13 { nodelay: false },
        needs: &["nginx", "curl", "openssl"],
    },
    Scenario {
        name: "tls13-nodelay-nginx",
        summary: "control: the same with tcp_nodelay on, handshake takes 1 RTT",
        control_of: Some("tls13-nagle-nginx"),
        kind: Kind::NginxTls13 { nodelay: true },
        needs: &["nginx", "curl", "openssl"],
    },
    Scenario {
        name: "syn-loss",
        summary: "the client's first SYN is lost on the path: the kernel resends it after its 1 s SYN timeout",
        control_of: None,
        kind: Kind::SynLoss { drop_first_syn: true },
        needs: &["nginx", "curl"],
    },
    Scenario {
        name: "syn-loss-control",
        summary: "control: the same path without the loss",
        control_of: Some("syn-loss"),
        kind: Kind::SynLoss { drop_first_syn: false },
        needs: &["nginx", "curl"],
    },
];

pub fn find(name: &str) -> Option<&'static Scenario> {
    CATALOG.iter().find(|s| s.name == name)
}

#[derive(Debug, Clone)]
pub struct RunOptions {
    pub rtt: Duration,
    pub runs: u32,
    pub out: PathBuf,
    /// Where to keep generated certificates (reused between runs).
    pub certs: Option<PathBuf>,
}

/// One client run, as `curl -w` reports it (ms from the start).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Timing {
    pub connect_ms: f64,
    pub tls_ms: f64,
    pub first_byte_ms: f64,
    pub total_ms: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct RunResult {
    pub scenario: String,
    pub dir: PathBuf,
    pub timings: Vec<Timing>,
    pub labels: serde_json::Value,
}

fn sh(cmd: &mut Command) -> io::Result<String> {
    let out = cmd.stdin(Stdio::null()).output()?;
    if !out.status.success() {
        return Err(io::Error::other(format!(
            "{cmd:?}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// A root CA, an intermediate and a leaf, all RSA-4096: a chain big enough
/// that the TLS 1.3 server flight exceeds 4 KB, like the field case.
pub fn make_chain(dir: &Path) -> io::Result<(PathBuf, PathBuf)> {
    std::fs::create_dir_all(dir)?;
    let chain = dir.join("chain.pem");
    let key = dir.join("leaf.key");
    if chain.exists() && key.exists() {
        return Ok((chain, key));
    }
    let d = |f: &str| dir.join(f).to_string_lossy().into_owned();
    let ossl = |args: &[&str]| sh(Command::new("openssl").args(args));
    std::fs::write(
        dir.join("ca.ext"),
        "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n",
    )?;
    std::fs::write(
        dir.join("leaf.ext"),
        format!("basicConstraints=CA:FALSE\nsubjectAltName=IP:{SERVER_IP},DNS:lab.rttdoc.test\n"),
    )?;
    ossl(&[
        "req",
        "-x509",
        "-newkey",
        "rsa:4096",
        "-nodes",
        "-keyout",
        &d("root.key"),
        "-out",
        &d("root.pem"),
        "-days",
        "30",
        "-subj",
        "/CN=rttdoc lab root",
        "-addext",
        "basicConstraints=critical,CA:TRUE",
    ])?;
    ossl(&[
        "req",
        "-newkey",
        "rsa:4096",
        "-nodes",
        "-keyout",
        &d("int.key"),
        "-out",
        &d("int.csr"),
        "-subj",
        "/CN=rttdoc lab intermediate",
    ])?;
    ossl(&[
        "x509",
        "-req",
        "-in",
        &d("int.csr"),
        "-CA",
        &d("root.pem"),
        "-CAkey",
        &d("root.key"),
        "-CAcreateserial",
        "-out",
        &d("int.pem"),
        "-days",
        "30",
        "-extfile",
        &d("ca.ext"),
    ])?;
    ossl(&[
        "req",
        "-newkey",
        "rsa:4096",
        "-nodes",
        "-keyout",
        &d("leaf.key"),
        "-out",
        &d("leaf.csr"),
        "-subj",
        "/CN=lab.rttdoc.test",
    ])?;
    ossl(&[
        "x509",
        "-req",
        "-in",
        &d("leaf.csr"),
        "-CA",
        &d("int.pem"),
        "-CAkey",
        &d("int.key"),
        "-CAcreateserial",
        "-out",
        &d("leaf.pem"),
        "-days",
        "30",
        "-extfile",
        &d("leaf.ext"),
    ])?;
    let mut pem = std::fs::read(dir.join("leaf.pem"))?;
    pem.extend(std::fs::read(dir.join("int.pem"))?);
    pem.extend(std::fs::read(dir.join("root.pem"))?);
    std::fs::write(&chain, pem)?;
    Ok((chain, key))
}

fn nginx_conf(work: &Path, tls: Option<(&Path, &Path)>, nodelay: bool) -> String {
    let w = work.display();
    let listen = match tls {
        Some((chain, key)) => format!(
            "listen {SERVER_IP}:443 ssl; ssl_certificate {}; ssl_certificate_key {}; ssl_protocols TLSv1.3; ssl_session_tickets off;",
            chain.display(),
            key.display()
        ),
        None => format!("listen {SERVER_IP}:80;"),
    };
    format!(
        "worker_processes 1; pid {w}/nginx.pid; error_log {w}/error.log; daemon on;\n\
         events {{ worker_connections 256; }}\n\
         http {{ access_log off; client_body_temp_path {w}; proxy_temp_path {w}; fastcgi_temp_path {w};\n\
         uwsgi_temp_path {w}; scgi_temp_path {w}; tcp_nodelay {};\n\
         server {{ {listen} root {w}/www; }} }}\n",
        if nodelay { "on" } else { "off" }
    )
}

fn wait_listening(lab: &Lab, port: u16) -> io::Result<()> {
    for _ in 0..100 {
        let out = lab
            .server
            .command("ss")
            .args(["-Hltn", &format!("sport = :{port}")])
            .output()?;
        if !String::from_utf8_lossy(&out.stdout).trim().is_empty() {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Err(io::Error::other(format!(
        "server never listened on port {port}"
    )))
}

fn curl(lab: &Lab, url: &str, extra: &[&str]) -> io::Result<Timing> {
    let fmt = "%{time_connect} %{time_appconnect} %{time_starttransfer} %{time_total}";
    let out = sh(lab
        .client
        .command("curl")
        .args(["-sk", "-o", "/dev/null", "--max-time", "20", "-w", fmt])
        .args(extra)
        .arg(url))?;
    let v: Vec<f64> = out
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .map(|s: f64| s * 1000.0)
        .collect();
    if v.len() != 4 {
        return Err(io::Error::other(format!("unexpected curl output {out:?}")));
    }
    Ok(Timing {
        connect_ms: v[0],
        tls_ms: v[1],
        first_byte_ms: v[2],
        total_ms: v[3],
    })
}

/// Runs a scenario and writes its captures, labels and timings to `opts.out`.
pub fn run(s: &Scenario, opts: &RunOptions) -> io::Result<RunResult> {
    std::fs::create_dir_all(&opts.out)?;
    let work = opts.out.join("work");
    std::fs::create_dir_all(work.join("www"))?;
    std::fs::write(work.join("www/index.html"), "hello from the rttdoc lab\n")?;
    let mut config = WanConfig::rtt(opts.rtt);
    let mut knobs = json!({});
    let tls_files;
    let (url, curl_args, port, nodelay): (String, Vec<&str>, u16, bool) = match s.kind {
        Kind::NginxTls13 { nodelay } => {
            let certs = opts.certs.clone().unwrap_or_else(|| opts.out.join("certs"));
            tls_files = Some(make_chain(&certs)?);
            knobs["tcp_nodelay"] = json!(if nodelay { "on" } else { "off" });
            knobs["tls"] = json!("1.3");
            knobs["certificate_chain"] = json!("3 x RSA-4096");
            (
                format!("https://{SERVER_IP}/"),
                vec!["--tlsv1.3"],
                443,
                nodelay,
            )
        }
        Kind::SynLoss { drop_first_syn } => {
            tls_files = None;
            if drop_first_syn {
                config.client_to_server.drop = vec![1];
            }
            knobs["drop_first_syn"] = json!(drop_first_syn);
            (format!("http://{SERVER_IP}/"), vec![], 80, true)
        }
    };
    std::fs::write(
        work.join("nginx.conf"),
        nginx_conf(
            &work,
            tls_files.as_ref().map(|(c, k)| (c.as_path(), k.as_path())),
            nodelay,
        ),
    )?;
    let lab = Lab::start(&config)?;
    sh(lab
        .server
        .command("nginx")
        .arg("-c")
        .arg(work.join("nginx.conf")))?;
    wait_listening(&lab, port)?;
    let mut timings = Vec::new();
    for _ in 0..opts.runs {
        timings.push(curl(&lab, &url, &curl_args)?);
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(opts.rtt * 2 + Duration::from_millis(100));
    let report = lab.finish();
    write_captures(&opts.out, &report)?;

    let streams: Vec<u32> = (0..opts.runs).collect();
    let rtt_ms = opts.rtt.as_secs_f64() * 1000.0;
    let (pathologies, expected) = match s.kind {
        Kind::NginxTls13 { nodelay: false } => (
            json!([{ "kind": "nagle_hold", "phase": "tls_handshake", "streams": streams, "extra_rtts": 1.0 }]),
            json!({ "tls_handshake_rtts": 2.0 }),
        ),
        Kind::NginxTls13 { nodelay: true } => (json!([]), json!({ "tls_handshake_rtts": 1.0 })),
        Kind::SynLoss {
            drop_first_syn: true,
        } => (
            json!([{ "kind": "syn_retransmit", "phase": "tcp_handshake", "streams": [0], "extra_ms": 1000.0 }]),
            json!({ "tcp_handshake_ms_stream0_min": 1000.0 }),
        ),
        Kind::SynLoss {
            drop_first_syn: false,
        } => (json!([]), json!({})),
    };
    let (c2s, s2c) = (&report.client_to_server, &report.server_to_client);
    let labels = json!({
        "scenario": s.name,
        "summary": s.summary,
        "control_of": s.control_of,
        "knobs": knobs,
        "rtt_ms": rtt_ms,
        "runs": opts.runs,
        "client": crate::CLIENT_IP,
        "server": SERVER_IP,
        "captures": { "client": "client.pcapng", "server": "server.pcapng", "both": "both.pcapng" },
        "connections": "one per run, in order: tcp.stream N is run N+1",
        "pathologies": pathologies,
        "expected": expected,
        "emulator": {
            "config": config,
            "client_to_server": { "forwarded": c2s.forwarded, "dropped": c2s.dropped, "lateness_us_p50_p99_max": c2s.lateness_us() },
            "server_to_client": { "forwarded": s2c.forwarded, "dropped": s2c.dropped, "lateness_us_p50_p99_max": s2c.lateness_us() },
        },
        "timings": timings,
    });
    std::fs::write(
        opts.out.join("labels.json"),
        serde_json::to_vec_pretty(&labels)?,
    )?;
    let _ = std::fs::remove_dir_all(&work);
    Ok(RunResult {
        scenario: s.name.to_string(),
        dir: opts.out.clone(),
        timings,
        labels,
    })
}

/// Median and 95th percentile (nearest rank) of one timing column.
pub fn median_p95(values: &[f64]) -> (f64, f64) {
    let mut v = values.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    if v.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    let rank = |p: f64| v[((p * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1];
    (rank(0.5), rank(0.95))
}
