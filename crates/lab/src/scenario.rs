//! The scenario catalog: each scenario reproduces one pathology from the
//! field notes on real kernel TCP stacks, and its control differs in exactly
//! one knob. A run writes the captures, `labels.json` (the truth: what was
//! injected, on which connections, and what it should cost) and a
//! `curl -w`-style timing table.
//!
//! A scenario is a [`Plan`]: the emulated path, per-host sysctls, the
//! server (nginx or HAProxy configured per scenario, a built-in peer, or
//! the user's command) and the client run once per run (curl, a built-in
//! peer, or a shell line in the client namespace; its output goes to
//! `client.log`).

use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{json, Value};

use crate::emulator::Doze;
use crate::{write_captures, Lab, WanConfig, CLIENT_IP, SERVER_IP, SERVER_IP_2};

/// Certificate chains the TLS scenarios use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chain {
    /// One P-256 certificate: a server flight well under 4 KB.
    SmallEc,
    /// RSA-4096 root and intermediate, a P-256 leaf with 40 extra names: a
    /// flight over 4 KB (the field case) whose signature takes ~0.1 ms, so
    /// Nagle, not the server's CPU, shapes the handshake even at a 5 ms RTT
    /// (an RSA-4096 leaf signs for ~10 ms on these VMs, longer than such a
    /// round trip, and would hide the hold).
    RsaChain,
    /// The same chain with a leaf listing 600 names: a flight over the
    /// initial congestion window (10 x MSS, about 14.5 KB).
    OverInitcwnd,
}

#[derive(Debug, Clone)]
pub struct Tls {
    pub chain: Chain,
    /// nginx `ssl_protocols`.
    pub protocols: &'static str,
    /// Session tickets and a session cache: resumption possible.
    pub resumption: bool,
    /// nginx `ssl_ecdh_curve` (e.g. secp384r1 forces a HelloRetryRequest
    /// from a client that sent an x25519 share).
    pub ecdh_curve: Option<&'static str>,
}

#[derive(Debug, Clone)]
pub struct Nginx {
    pub tls: Option<Tls>,
    pub nodelay: bool,
    /// `listen ... fastopen=N`.
    pub fastopen: Option<u32>,
}

#[derive(Debug, Clone)]
pub enum Client {
    /// One curl invocation per run with these arguments (URLs included);
    /// several URLs share a connection (keep-alive) or a TLS session.
    Curl(Vec<String>),
    /// A shell command in the client namespace, once per run.
    Shell(String),
    /// A built-in peer client (`rttdoc lab peer KIND ARGS`), once per run;
    /// prints curl -w style lines.
    Builtin(Vec<String>),
}

/// HAProxy in front of the built-in HTTP server: the proxy terminates TLS
/// (or plain HTTP) on the server's address and forwards to the backend on
/// the server's loopback, where the emulated path does not reach.
#[derive(Debug, Clone)]
pub struct Haproxy {
    /// TLS termination with this chain (`bind ... ssl crt`); None: plain
    /// HTTP on port 80.
    pub tls: Option<Chain>,
    /// `bind ... tfo`: TCP_FASTOPEN on the listening socket.
    pub tfo: bool,
    /// `bind ... allow-0rtt`: session tickets that allow TLS 1.3 early data.
    pub allow_0rtt: bool,
    /// `option http-no-delay`: never ask the kernel to hold a partial
    /// segment (HAProxy otherwise sends with MSG_MORE while it expects more
    /// of a message).
    pub http_no_delay: bool,
    /// Flags of the backend (`rttdoc lab peer http-server`, on
    /// 127.0.0.1:8080).
    pub backend: Vec<String>,
}

const BACKEND: &str = "127.0.0.1:8080";

/// The server side of a scenario.
#[derive(Debug, Clone)]
pub enum Server {
    Nginx(Nginx),
    Haproxy(Haproxy),
    /// A built-in peer (`rttdoc lab peer KIND ARGS`), listening on the port.
    Builtin(Vec<String>, u16),
    /// A user's command, run with `bash -c` in the server namespace
    /// (`rttdoc lab run --server-cmd`).
    Command(String),
}

pub struct Plan {
    pub wan: WanConfig,
    pub server_sysctls: Vec<(String, String)>,
    pub client_sysctls: Vec<(String, String)>,
    pub server: Server,
    pub client: Client,
    /// Server sysctls applied after the first run (e.g. turn TFO off once
    /// the client holds a cookie).
    pub after_first_run: Vec<(String, String)>,
    /// Route attributes on the server's and the client's route to the peer.
    pub server_route: Vec<String>,
    pub client_route: Vec<String>,
    pub knobs: Value,
    /// What was injected, on which streams, at what cost.
    pub pathologies: Value,
    /// What the captures must show.
    pub expected: Value,
}

pub struct Ctx {
    pub rtt: Duration,
    pub runs: u32,
}

impl Ctx {
    fn rtt_ms(&self) -> f64 {
        self.rtt.as_secs_f64() * 1000.0
    }
    fn all_streams(&self) -> Vec<u32> {
        (0..self.runs).collect()
    }
}

#[derive(Debug, Clone, Copy)]
pub struct Scenario {
    pub name: &'static str,
    pub summary: &'static str,
    /// The scenario this one is the control of (differs in one knob).
    pub control_of: Option<&'static str>,
    /// Programs it needs besides rttdoc.
    pub needs: &'static [&'static str],
    pub plan: fn(&Ctx) -> Plan,
}

const NGINX_CURL: &[&str] = &["nginx", "curl"];
const HAPROXY_CURL: &[&str] = &["haproxy", "curl", "openssl"];
const HAPROXY: &[&str] = &["haproxy", "openssl"];
const NGINX_CURL_TLS: &[&str] = &["nginx", "curl", "openssl"];

fn url(tls: bool, path: &str) -> String {
    if tls {
        format!("https://{SERVER_IP}{path}")
    } else {
        format!("http://{SERVER_IP}{path}")
    }
}

fn curl(args: &[&str]) -> Client {
    Client::Curl(args.iter().map(|s| s.to_string()).collect())
}

fn plain(nodelay: bool) -> Nginx {
    Nginx {
        tls: None,
        nodelay,
        fastopen: None,
    }
}

fn tls(chain: Chain, protocols: &'static str, nodelay: bool) -> Nginx {
    Nginx {
        tls: Some(Tls {
            chain,
            protocols,
            resumption: false,
            ecdh_curve: None,
        }),
        nodelay,
        fastopen: None,
    }
}

fn base(ctx: &Ctx, nginx: Nginx, client: Client) -> Plan {
    Plan {
        wan: WanConfig::rtt(ctx.rtt),
        server_sysctls: Vec::new(),
        client_sysctls: Vec::new(),
        server: Server::Nginx(nginx),
        client,
        after_first_run: Vec::new(),
        server_route: Vec::new(),
        client_route: Vec::new(),
        knobs: json!({}),
        pathologies: json!([]),
        expected: json!({}),
    }
}

const PEER_PORT: u16 = 8080;

/// `rttdoc lab peer KIND --listen|--connect SERVER:PORT FLAGS...`
fn peer_args(kind: &str, role: &str, flags: &[&str]) -> Vec<String> {
    let mut args = vec![
        kind.to_string(),
        role.to_string(),
        format!("{SERVER_IP}:{PEER_PORT}"),
    ];
    args.extend(flags.iter().map(|s| s.to_string()));
    args
}

fn peer_server(kind: &str, flags: &[&str]) -> Server {
    Server::Builtin(peer_args(kind, "--listen", flags), PEER_PORT)
}

fn peer_client(kind: &str, flags: &[&str]) -> Client {
    Client::Builtin(peer_args(kind, "--connect", flags))
}

fn builtin(ctx: &Ctx, server: Server, client: Client) -> Plan {
    let mut p = base(ctx, plain(true), client);
    p.server = server;
    p
}

/// Write-write-read with the built-in HTTP server: header and body in two
/// writes with Nagle (the pathology), in one write, or two with TCP_NODELAY.
fn wwr_builtin(ctx: &Ctx, mode: &str) -> Plan {
    let server = match mode {
        "split" => peer_server("http-server", &["--split"]),
        "joined" => peer_server("http-server", &[]),
        _ => peer_server("http-server", &["--split", "--nodelay"]),
    };
    let mut p = builtin(
        ctx,
        server,
        peer_client("http-client", &["--requests", "5"]),
    );
    p.knobs = json!({ "server_writes": if mode == "joined" { "one" } else { "header, then body" },
        "tcp_nodelay": mode == "nodelay", "requests_per_connection": 5, "body_bytes": 3000 });
    if mode == "split" {
        // Each response is head then a 3000-byte body; the held segment is
        // part of a body (relative sequence numbers, as Wireshark shows).
        let head = crate::peer::response_head(3000).len() as u64;
        let evidence: Vec<Value> = (0..5)
            .map(|k| {
                let start = k * (head + 3000) + head + 1;
                json!({ "direction": "server_to_client", "seq_from": start, "seq_to": start + 2999 })
            })
            .collect();
        p.pathologies = json!([{ "kind": "write_write_read", "phase": "transfer", "streams": ctx.all_streams(),
            "exchanges": [1, 2, 3, 4, 5], "extra_rtts_each": 1.0, "evidence": evidence }]);
    }
    p
}

/// An upload whose client asks `Expect: 100-continue` (curl does on its
/// own for bodies over 1 MB; here asked for a 3000-byte POST) to the
/// built-in HTTP server, which never answers the expectation (curl holds
/// the body for its 1 s timer), or to nginx, which does not make the
/// client wait (the control).
fn expect_continue(ctx: &Ctx, builtin_server: bool) -> Plan {
    let body = "b".repeat(3000);
    let target = if builtin_server {
        format!("http://{SERVER_IP}:{PEER_PORT}/upload")
    } else {
        url(false, "/upload")
    };
    let client = curl(&[
        "-H",
        "Expect: 100-continue",
        "--data-binary",
        &body,
        &target,
    ]);
    let mut p = if builtin_server {
        builtin(ctx, peer_server("http-server", &[]), client)
    } else {
        base(ctx, plain(true), client)
    };
    p.knobs = json!({ "client": "curl -H 'Expect: 100-continue' --data-binary (3000 bytes)",
        "server_answers_100_continue": !builtin_server, "curl_expect_timeout_ms": 1000 });
    if builtin_server {
        p.pathologies = json!([{ "kind": "expect_continue_wait", "phase": "first_byte", "streams": ctx.all_streams(),
            "exchanges": [1], "wait_ms": 1000, "why": "curl holds the body for a 100 Continue the server never sends, until its 1 s timer" }]);
    }
    p
}

/// Connections a page load opens (`pageload`).
const PAGELOAD_CONNECTIONS: u32 = 4;

/// A page load over the client's own downlink: 12 files of 80 KB over
/// four keep-alive connections to nginx (`curl --parallel`). nginx answers
/// each request at once; through a 4 Mbit/s bottleneck with a 400 KB
/// queue (0.8 s, a deep buffer) the answers queue behind each other's
/// data, and at the client every connection waits for its later answers'
/// first bytes: the client's link, not the server. The control: the same
/// page load without the bottleneck.
fn pageload(ctx: &Ctx, bottleneck: bool) -> Plan {
    let urls: Vec<String> = (0..12).map(|_| url(false, "/mid.bin")).collect();
    let max = PAGELOAD_CONNECTIONS.to_string();
    // All four at once, as a browser opens them (without
    // --parallel-immediate curl waits on the first connection first, and
    // the others' handshakes queue behind its data).
    let mut args = vec!["--parallel", "--parallel-immediate", "--parallel-max", &max];
    args.extend(urls.iter().map(String::as_str));
    let mut p = base(ctx, plain(true), curl(&args));
    p.knobs = json!({ "client": "curl --parallel --parallel-immediate --parallel-max 4, 12 files of 80 KB",
        "downlink_rate_mbit": if bottleneck { json!(4) } else { json!(null) },
        "downlink_queue_bytes": if bottleneck { json!(400_000) } else { json!(null) } });
    if bottleneck {
        p.wan.server_to_client.rate_bps = Some(4_000_000);
        p.wan.server_to_client.queue_bytes = 400_000;
        let streams: Vec<u32> = (0..ctx.runs * PAGELOAD_CONNECTIONS).collect();
        p.pathologies = json!([{ "kind": "downlink_queue", "phase": "first_byte", "streams": streams,
            "visible_from": ["client"],
            "why": "the answers queue at the client's 4 Mbit/s bottleneck behind the other connections' data; nginx answers at once" }]);
    }
    p
}

/// The client's radio dozes (Wi-Fi power saving): 200 ms of every 500 its
/// access point keeps what comes for it and delivers it all when it
/// wakes. The client streams an upload to each of two servers (the
/// server host's two addresses: their pure ACKs are what a capture at the
/// client sees of the path) while it makes 24 requests, 25 ms apart, on a
/// third connection: each doze holds an answer, and both servers'
/// ACKs of what the client sent while it slept, arriving at once when it
/// wakes. The servers answer at once; at the client, nothing comes from
/// either for the doze, then everything. The control: the same traffic,
/// the radio awake.
fn doze_builtin(ctx: &Ctx, doze: bool) -> Plan {
    let listen = format!("0.0.0.0:{PEER_PORT}");
    let server = Server::Builtin(
        [
            "http-server",
            "--listen",
            &listen,
            "--nodelay",
            "--body",
            "1000",
        ]
        .map(String::from)
        .to_vec(),
        PEER_PORT,
    );
    let (first, second) = (
        format!("{SERVER_IP}:{PEER_PORT}"),
        format!("{SERVER_IP_2}:{PEER_PORT}"),
    );
    let client = Client::Builtin(
        [
            "http-client",
            "--connect",
            &first,
            "--requests",
            "24",
            "--pause-ms",
            "25",
            "--stream-to",
            &first,
            "--stream-to",
            &second,
            "--piece-ms",
            "20",
        ]
        .map(String::from)
        .to_vec(),
    );
    let mut p = builtin(ctx, server, client);
    p.knobs = json!({ "servers": [SERVER_IP, SERVER_IP_2],
        "client": "24 requests 25 ms apart, an upload streamed to each server meanwhile (1000 bytes every 20 ms)",
        "downlink_doze": if doze { json!({ "period_ms": 500, "asleep_ms": 200 }) } else { json!(null) } });
    if doze {
        p.wan.server_to_client.doze = Some(Doze {
            period_us: 500_000,
            asleep_us: 200_000,
        });
        // Each run's connections: the two uploads, then the requests'.
        let requests: Vec<u32> = (0..ctx.runs).map(|r| 3 * r + 2).collect();
        p.pathologies = json!([{ "kind": "path_stall", "phase": "exchanges", "streams": requests,
            "visible_from": ["client"],
            "why": "the client's radio sleeps 200 ms of every 500: its access point holds the answers and both servers' ACKs until it wakes; the servers answer at once" }]);
    }
    p
}

/// The SFTP case: an upload as request/response blocks, each written as a
/// small header and a small body, Nagle on or off.
fn sftp_builtin(ctx: &Ctx, nodelay: bool) -> Plan {
    let flags: &[&str] = if nodelay {
        &["--blocks", "40", "--nodelay"]
    } else {
        &["--blocks", "40"]
    };
    let mut p = builtin(
        ctx,
        peer_server("rpc-server", &[]),
        peer_client("rpc-client", flags),
    );
    p.knobs = json!({ "client_tcp_nodelay": nodelay, "blocks": 40, "writes_per_block": [96, 656], "status_bytes": 4 });
    if !nodelay {
        p.pathologies = json!([{ "kind": "nagle_delayed_ack", "phase": "transfer", "streams": ctx.all_streams(),
            "stalls_per_block": 1, "why": "the 656-byte write waits for the ACK of the 96-byte one, which the server delays" }]);
    }
    p
}

fn tfo_builtin(ctx: &Ctx, on: bool) -> Plan {
    let (s, c): (&[&str], &[&str]) = if on {
        (&["--tfo"], &["--tfo"])
    } else {
        (&[], &[])
    };
    let mut p = builtin(
        ctx,
        peer_server("http-server", s),
        peer_client("http-client", c),
    );
    p.client_sysctls
        .push(("net.ipv4.tcp_fastopen".into(), "1".into()));
    p.server_sysctls
        .push(("net.ipv4.tcp_fastopen".into(), "2".into()));
    p.knobs = json!({ "tfo": on });
    if on {
        p.pathologies = json!([{ "kind": "tfo_cookie_request", "streams": [0], "evidence": [tfo_syn()] },
            { "kind": "tfo_accepted", "streams": (1..ctx.runs).collect::<Vec<_>>(), "saved_rtts": 1.0, "evidence": [tfo_syn()] }]);
    }
    p
}

/// `slow`: None for default buffers (the kernel autotunes), else an 8 KB
/// receive buffer read slowly or at once.
fn slow_reader_builtin(ctx: &Ctx, slow: Option<bool>) -> Plan {
    let flags: &[&str] = match slow {
        Some(true) => &["--rcvbuf", "8192", "--read-delay-ms", "100"],
        Some(false) => &["--rcvbuf", "8192"],
        None => &[],
    };
    let mut p = builtin(
        ctx,
        peer_server("http-server", &["--body", "200000"]),
        peer_client("http-client", flags),
    );
    p.knobs = json!({ "client_so_rcvbuf": if slow.is_some() { json!(8192) } else { json!("default (autotuned)") }, "read_delay_ms_per_4k": if slow == Some(true) { 100 } else { 0 }, "body_bytes": 200000 });
    if let Some(slow) = slow {
        p.pathologies = small_buffer_truth(ctx, slow);
    }
    p
}

/// A built-in TLS scenario: server and client flags, knobs and truth.
fn tls_builtin(ctx: &Ctx, server: &[&str], client: &[&str], knobs: Value) -> Plan {
    let mut p = builtin(
        ctx,
        peer_server("tls-server", server),
        peer_client("tls-client", client),
    );
    p.knobs = knobs;
    p
}

fn nagle_tls_builtin(ctx: &Ctx, nodelay: bool) -> Plan {
    // OpenSSL's pattern: a 4096-byte first write, then the rest of a ~5 KB flight.
    let mut server = vec![
        "--first-write",
        "4096",
        "--chain",
        "3",
        "--leaf-bytes",
        "3500",
    ];
    if nodelay {
        server.push("--nodelay");
    }
    let mut p = tls_builtin(
        ctx,
        &server,
        &[],
        json!({ "tcp_nodelay": nodelay, "first_write": 4096, "flight": "about 5 KB" }),
    );
    if !nodelay {
        p.pathologies = json!([{ "kind": "nagle_hold", "phase": "tls_handshake", "streams": ctx.all_streams(), "extra_rtts": 1.0,
            "evidence": [flight_after_first_write()] }]);
    }
    p.expected = json!({ "tls_handshake_rtts": if nodelay { 1.0 } else { 2.0 } });
    p
}

/// TCP Fast Open shows on the client's (first) SYN.
fn tfo_syn() -> Value {
    json!({ "direction": "client_to_server", "syn": 1 })
}

/// The held segment of a TLS flight written as 4096 bytes and the rest
/// (OpenSSL, and the built-in server imitating it): the rest's first
/// segment, at relative sequence 4097.
fn flight_after_first_write() -> Value {
    json!({ "direction": "server_to_client", "seq_from": 4097, "seq_to": 4097 })
}

fn think_builtin(ctx: &Ctx, think_ms: u64) -> Plan {
    let ms = think_ms.to_string();
    let mut p = tls_builtin(
        ctx,
        &["--nodelay", "--think-ms", &ms],
        &[],
        json!({ "server_think_ms": think_ms }),
    );
    if think_ms > 0 {
        p.pathologies = json!([{ "kind": "server_think_time", "phase": "tls_handshake", "streams": ctx.all_streams(), "extra_ms": think_ms }]);
    }
    p
}

fn hrr_builtin(ctx: &Ctx, hrr: bool) -> Plan {
    let server: &[&str] = if hrr {
        &["--nodelay", "--hrr"]
    } else {
        &["--nodelay"]
    };
    let mut p = tls_builtin(
        ctx,
        server,
        &[],
        json!({ "server_groups": if hrr { "secp384r1 only" } else { "default" } }),
    );
    if hrr {
        p.pathologies = json!([{ "kind": "hello_retry_request", "phase": "tls_handshake", "streams": ctx.all_streams(), "extra_rtts": 1.0, "group": "secp384r1",
            // The HelloRetryRequest is the server's first data.
            "evidence": [{ "direction": "server_to_client", "seq_from": 1, "seq_to": 1 }] }]);
    }
    p.expected = json!({ "tls_handshake_rtts": if hrr { 2.0 } else { 1.0 } });
    p
}

/// Two connections per run; the second can resume (and send 0-RTT data).
fn resume_builtin(ctx: &Ctx, tls12: bool, resume: bool, early: bool) -> Plan {
    resume_with(ctx, tls12, resume, early, "GET")
}

/// The same with the request's method (POST: a non-idempotent request in
/// early data, `early_data_unsafe`).
fn resume_with(ctx: &Ctx, tls12: bool, resume: bool, early: bool, method: &str) -> Plan {
    let mut server = vec!["--nodelay"];
    let mut client = vec!["--connections", "2", "--method", method];
    if tls12 {
        server.push("--tls12");
        client.push("--tls12");
    }
    if resume && !tls12 {
        server.extend(["--tickets", "2"]);
    }
    if early {
        server.push("--early-data");
        client.push("--early-data");
    }
    let mut p = tls_builtin(
        ctx,
        &server,
        &client,
        json!({ "tls": if tls12 { "1.2" } else { "1.3" }, "resumption": resume, "early_data": early, "method": method }),
    );
    let second: Vec<u32> = (0..ctx.runs).map(|r| 2 * r + 1).collect();
    p.pathologies = match (resume, early) {
        (true, true) if method != "GET" => {
            json!([{ "kind": "early_data", "streams": second, "saved_rtts": 1.0 },
            { "kind": "early_data_unsafe", "streams": second, "method": method, "needs": "keylog" }])
        }
        (true, true) => json!([{ "kind": "early_data", "streams": second, "saved_rtts": 1.0 }]),
        (true, false) => json!([{ "kind": "resumption", "streams": second }]),
        _ => json!([]),
    };
    p
}

fn tickets_nagle_builtin(ctx: &Ctx, nodelay: bool) -> Plan {
    let mut server = vec!["--tickets", "2", "--body", "300"];
    if nodelay {
        server.push("--nodelay");
    }
    let mut p = tls_builtin(
        ctx,
        &server,
        &[],
        json!({ "tcp_nodelay": nodelay, "tls13_tickets": 2 }),
    );
    if !nodelay {
        p.pathologies = json!([{ "kind": "nagle_delayed_ack", "phase": "first_byte", "streams": ctx.all_streams(),
            "why": "the response waits behind the unacknowledged session tickets until the client's (delayed) ACK" }]);
    }
    p
}

fn initcwnd_builtin(ctx: &Ctx, big: bool) -> Plan {
    let bytes = if big { "18000" } else { "0" };
    let mut p = tls_builtin(
        ctx,
        &["--nodelay", "--chain", "2", "--leaf-bytes", bytes],
        &[],
        json!({ "leaf_padding_bytes": bytes }),
    );
    if big {
        // rustls writes the flight at once: ten full segments, then the
        // pause; the segment after it starts at 10 MSS (timestamps on).
        let mss = p.wan.mtu as u64 - 40 - 12;
        p.pathologies = json!([{ "kind": "initcwnd_limited", "phase": "tls_handshake", "streams": ctx.all_streams(), "extra_rtts": 1.0,
            "evidence": [{ "direction": "server_to_client", "seq_from": 10 * mss + 1, "seq_to": 10 * mss + 1 }] }]);
    }
    p.expected = json!({ "tls_handshake_rtts": if big { 2.0 } else { 1.0 } });
    p
}

fn nagle_tls(ctx: &Ctx, nodelay: bool) -> Plan {
    let mut p = base(
        ctx,
        tls(Chain::RsaChain, "TLSv1.3", nodelay),
        curl(&["--tlsv1.3", &url(true, "/")]),
    );
    p.knobs = json!({ "tcp_nodelay": if nodelay { "on" } else { "off" }, "tls": "1.3", "certificate_chain": "RSA-4096 root and intermediate, P-256 leaf" });
    if !nodelay {
        p.pathologies = json!([{ "kind": "nagle_hold", "phase": "tls_handshake", "streams": ctx.all_streams(), "extra_rtts": 1.0,
            "evidence": [flight_after_first_write()] }]);
    }
    p.expected = json!({ "tls_handshake_rtts": if nodelay { 1.0 } else { 2.0 } });
    p
}

fn syn_loss(ctx: &Ctx, lost: bool) -> Plan {
    let mut p = base(ctx, plain(true), curl(&[&url(false, "/")]));
    if lost {
        p.wan.client_to_server.drop = vec![1];
        // The server never sees the lost SYN: only the client side shows it.
        p.pathologies = json!([{ "kind": "syn_retransmit", "phase": "tcp_handshake", "streams": [0], "extra_ms": 1000.0, "visible_from": ["client"],
            "evidence": [{ "direction": "client_to_server", "syn": 2 }] }]);
    }
    p.knobs = json!({ "drop_first_syn": lost });
    p.expected = json!({ "syn_retransmits_stream0": if lost { 1 } else { 0 } });
    p
}

/// Connections opened at once in each run of `accept_queue_builtin`.
const ACCEPT_QUEUE_CONNECTIONS: u32 = 6;

/// A single-worker server (500 ms per connection) and six connections
/// opened 0.3 ms apart (all six SYNs reach the server before the first
/// handshake ends, at the lab's RTTs of 5 ms and more): with backlog 1
/// the listener keeps two finished connections waiting and the worker
/// takes one, so the handshake ACKs and requests of the other three are
/// dropped until there is room; with backlog 64 (the control) they all
/// wait in the queue.
fn accept_queue_builtin(ctx: &Ctx, full: bool) -> Plan {
    let backlog = if full { "1" } else { "64" };
    let mut p = builtin(
        ctx,
        peer_server("http-server", &["--backlog", backlog, "--serial-ms", "500"]),
        peer_client(
            "http-client",
            &["--parallel", &ACCEPT_QUEUE_CONNECTIONS.to_string()],
        ),
    );
    p.knobs = json!({ "listen_backlog": backlog, "server_workers": 1, "work_ms_per_connection": 500,
        "connections_at_once": ACCEPT_QUEUE_CONNECTIONS, "connection_spacing_ms": 0.3 });
    if full {
        // One is accepted, two wait in the queue; the other three's ACKs
        // and requests are dropped, their requests sent again on the
        // client's timer until a copy gets in (at least twice: the first
        // copy, a retransmission timeout after the request, comes before
        // the first answer frees room). Which three depends on when the
        // worker accepted the first (the ACKs come back within a fraction
        // of a millisecond): `some_of`. Their SYNs came past the backlog
        // of half-open connections, so they were SYN cookies: no SYN-ACK
        // re-send shows the drop, only the server's capture (requests
        // arriving unacknowledged).
        let streams: Vec<u32> = (0..ctx.runs * ACCEPT_QUEUE_CONNECTIONS).collect();
        p.pathologies = json!([{ "kind": "accept_queue_full", "phase": "first_byte", "streams": streams,
            "some_of": 3 * ctx.runs, "visible_from": ["server"],
            "why": "backlog 1 and one worker: three of each run's six connections have their handshake ACKs and requests dropped until the queue has room" }]);
    }
    p
}

/// Two connections per run, the second's SYN sent before the first's
/// request: the server closes its listener when that request comes (a
/// restart) and opens it again once the first connection is done, so the
/// second's handshake ACK, one round trip after its SYN, finds no socket
/// and is reset (RST without ACK), as is its request. The control's
/// server keeps its listener: the second is answered.
fn listener_restart_builtin(ctx: &Ctx, restart: bool) -> Plan {
    let server_flags: &[&str] = if restart {
        &["--restart-on-request"]
    } else {
        &[]
    };
    let mut p = builtin(
        ctx,
        peer_server("http-server", server_flags),
        peer_client("http-client", &["--overlap"]),
    );
    p.knobs = json!({ "connections_per_run": 2,
        "second_syn": "sent before the first connection's request",
        "listener": if restart { "closed when the first request comes, opened again after its connection" } else { "kept open" } });
    if restart {
        let streams: Vec<u32> = (0..ctx.runs).map(|r| 2 * r + 1).collect();
        p.pathologies = json!([{ "kind": "listener_reset", "phase": "tcp_handshake", "streams": streams,
            "why": "the listener that answered the second connection's SYN closed before its handshake ACK came: the server's host reset the ACK and the request" }]);
    }
    p
}

/// The built-in client's port in `stale_peer_builtin`.
const STALE_PEER_PORT: &str = "40100";

/// Two connections per run from one client port: the first (one request,
/// keep-alive) forgotten by the client (closed in TCP_REPAIR mode: no FIN,
/// no RST, as a host that restarted), so the server still holds it when
/// the second's SYN comes: it answers with a challenge ACK, the client
/// resets it and sends its SYN again at once (Linux). The control closes
/// the first connection (shutdown, the server's FIN read) before the
/// second.
fn stale_peer_builtin(ctx: &Ctx, forget: bool) -> Plan {
    let again = if forget { "forget" } else { "close" };
    let mut p = builtin(
        ctx,
        peer_server("http-server", &[]),
        peer_client(
            "http-client",
            &["--local-port", STALE_PEER_PORT, "--again", again],
        ),
    );
    // The client keeps no TIME-WAIT: each run binds the port again at once.
    p.client_sysctls
        .push(("net.ipv4.tcp_max_tw_buckets".into(), "0".into()));
    p.knobs = json!({ "client_port": STALE_PEER_PORT, "connections_per_run": 2,
        "first_connection": if forget { "forgotten by the client (closed in TCP_REPAIR mode: nothing sent)" } else { "closed by the client" } });
    if forget {
        // Each run's second connection: one round trip to the challenge
        // ACK, then Linux's quick retry (2 jiffies).
        let streams: Vec<u32> = (0..ctx.runs).map(|r| 2 * r + 1).collect();
        p.pathologies = json!([{ "kind": "syn_answered_by_ack", "phase": "tcp_handshake", "streams": streams,
            "extra_rtts_each": 1.0,
            "why": "the server still held the client's first connection on the port pair: a challenge ACK, the client's RST, the SYN again" }]);
    }
    p
}

fn write_write_read(ctx: &Ctx, nodelay: bool) -> Plan {
    // Three requests on one keep-alive connection; nginx sends the response
    // header and the (sendfile) body with two writes.
    let u = url(false, "/page.html");
    let mut p = base(ctx, plain(nodelay), curl(&[&u, &u, &u]));
    p.knobs = json!({ "tcp_nodelay": if nodelay { "on" } else { "off" }, "requests_per_connection": 3, "sendfile": "on" });
    if !nodelay {
        // The body's last, sub-MSS segment waits for the ACK of the header:
        // one RTT, or the client's delayed-ACK timeout (40 ms on Linux) once
        // the client has left quick-ACK mode.
        p.pathologies = json!([{ "kind": "write_write_read", "phase": "transfer", "streams": ctx.all_streams(),
            "exchanges": [1, 2, 3], "extra_rtts_each": 1.0 }]);
    }
    p
}

fn tfo(ctx: &Ctx, mode: &str) -> Plan {
    let mut nginx = plain(true);
    nginx.fastopen = Some(256);
    let mut p = base(ctx, nginx, curl(&["--tcp-fastopen", &url(false, "/")]));
    p.client_sysctls
        .push(("net.ipv4.tcp_fastopen".into(), "1".into()));
    p.server_sysctls
        .push(("net.ipv4.tcp_fastopen".into(), "2".into()));
    p.knobs = json!({ "client_tcp_fastopen": 1, "server_tcp_fastopen": 2, "nginx_listen_fastopen": 256, "curl": "--tcp-fastopen" });
    match mode {
        "accepted" => {
            p.pathologies = json!([{ "kind": "tfo_cookie_request", "streams": [0], "evidence": [tfo_syn()] },
                { "kind": "tfo_accepted", "streams": (1..ctx.runs).collect::<Vec<_>>(), "saved_rtts": 1.0, "evidence": [tfo_syn()] }]);
        }
        "rejected" => {
            p.after_first_run = vec![("net.ipv4.tcp_fastopen".into(), "0".into())];
            p.knobs["server_tcp_fastopen_after_first_run"] = json!(0);
            p.pathologies = json!([{ "kind": "tfo_cookie_request", "streams": [0], "evidence": [tfo_syn()] },
                { "kind": "tfo_rejected", "streams": (1..ctx.runs).collect::<Vec<_>>(), "evidence": [tfo_syn()] }]);
        }
        _ => {
            p.client = curl(&[&url(false, "/")]);
            p.knobs["curl"] = json!("(no --tcp-fastopen)");
        }
    }
    p
}

fn initcwnd(ctx: &Ctx, big: bool) -> Plan {
    let chain = if big {
        Chain::OverInitcwnd
    } else {
        Chain::SmallEc
    };
    let mut p = base(
        ctx,
        tls(chain, "TLSv1.3", true),
        curl(&["--tlsv1.3", &url(true, "/")]),
    );
    p.knobs = json!({ "certificate_chain": if big { "RSA-4096 root and intermediate, P-256 leaf with 600 names" } else { "one P-256 certificate" }, "initcwnd": 10 });
    if big {
        p.pathologies = json!([{ "kind": "initcwnd_limited", "phase": "tls_handshake", "streams": ctx.all_streams(), "extra_rtts": 1.0 }]);
    }
    p.expected = json!({ "tls_handshake_rtts": if big { 2.0 } else { 1.0 } });
    p
}

/// A hop between the hosts carries 1280 bytes, both hosts' links 1500:
/// the server's full-size segments (its first TLS flight's, over 4 KB)
/// are dropped and no ICMP tells it (a black hole). With
/// net.ipv4.tcp_mtu_probing=1 its kernel re-sends at full size on its
/// timer until it takes the path for a black hole (after tcp_retries1,
/// 3, timeouts) and goes smaller: seconds into the handshake. The
/// control is the fix: the client's route announces an MSS that fits the
/// hop (`advmss 1240`, what MSS clamping at the hop does).
fn path_mtu(ctx: &Ctx, clamped: bool) -> Plan {
    let mut p = base(
        ctx,
        tls(Chain::RsaChain, "TLSv1.3", true),
        curl(&["--tlsv1.3", &url(true, "/")]),
    );
    p.wan.server_to_client.hop_mtu = Some(1280);
    p.server_sysctls
        .push(("net.ipv4.tcp_mtu_probing".into(), "1".into()));
    if clamped {
        p.client_route
            .extend(["advmss".to_string(), "1240".to_string()]);
    } else {
        p.pathologies = json!([{ "kind": "path_mtu", "direction": "server_to_client", "phase": "tls_handshake", "streams": ctx.all_streams() }]);
    }
    p.knobs = json!({ "hop_mtu_server_to_client": 1280, "host_mtu": 1500, "server_tcp_mtu_probing": 1, "client_advmss": if clamped { json!(1240) } else { json!(null) }, "certificate_chain": "RSA-4096 root and intermediate, P-256 leaf" });
    p
}

fn hrr(ctx: &Ctx, forced: bool) -> Plan {
    let mut n = tls(Chain::SmallEc, "TLSv1.3", true);
    if forced {
        n.tls.as_mut().expect("tls").ecdh_curve = Some("secp384r1");
    }
    let mut p = base(ctx, n, curl(&["--tlsv1.3", &url(true, "/")]));
    p.knobs = json!({ "ssl_ecdh_curve": if forced { "secp384r1" } else { "(default)" }, "client_key_share": "x25519" });
    if forced {
        p.pathologies = json!([{ "kind": "hello_retry_request", "phase": "tls_handshake", "streams": ctx.all_streams(), "extra_rtts": 1.0, "group": "secp384r1",
            // The HelloRetryRequest is the server's first data.
            "evidence": [{ "direction": "server_to_client", "seq_from": 1, "seq_to": 1 }] }]);
    }
    p.expected = json!({ "tls_handshake_rtts": if forced { 2.0 } else { 1.0 }, "hello_retry_request": forced });
    p
}

fn resumption(ctx: &Ctx, version: &'static str, enabled: bool) -> Plan {
    let protocols = if version == "1.3" {
        "TLSv1.3"
    } else {
        "TLSv1.2"
    };
    let mut n = tls(Chain::SmallEc, protocols, true);
    n.tls.as_mut().expect("tls").resumption = enabled;
    let flag = if version == "1.3" {
        "--tlsv1.3"
    } else {
        "--tls-max"
    };
    let u = url(true, "/");
    let mut args = vec![flag.to_string()];
    if version != "1.3" {
        args.push("1.2".into());
    }
    // Two connections in one curl process: the second can resume the first's session.
    args.extend(["-H".into(), "Connection: close".into(), u.clone(), u]);
    let mut p = base(ctx, n, Client::Curl(args));
    p.knobs =
        json!({ "tls": version, "session_tickets_and_cache": enabled, "connections_per_run": 2 });
    let resumed: Vec<u32> = (0..ctx.runs).map(|r| 2 * r + 1).collect();
    // Without tickets or a cache the client has nothing to offer: a full
    // handshake, but no missed resumption (that needs an offer refused).
    if enabled {
        p.pathologies = json!([{ "kind": "resumption", "streams": resumed }]);
    }
    p.expected = json!({ "full_handshake_rtts": if version == "1.3" { 1.0 } else { 2.0 }, "resumed_handshake_rtts": 1.0 });
    p
}

fn zero_window(ctx: &Ctx, slow: bool) -> Plan {
    // The reader must be slower than what the window lets through even at
    // a long RTT (16 KB per 120 ms is ~130 KB/s); curl's rate limit reads
    // in bursts, so keep it well below.
    let u = url(false, "/mid.bin");
    let client = if slow {
        curl(&["--limit-rate", "20k", &u])
    } else {
        curl(&[&u])
    };
    let mut p = base(ctx, plain(true), client);
    // A small receive buffer, so a slow reader's window closes quickly.
    p.client_sysctls
        .push(("net.ipv4.tcp_rmem".into(), "4096 16384 32768".into()));
    p.knobs = json!({ "client_tcp_rmem": "4096 16384 32768", "curl": if slow { "--limit-rate 20k" } else { "(full speed)" }, "response_bytes": 80000 });
    p.pathologies = small_buffer_truth(ctx, slow);
    p
}

/// A slow reader closes its small window (`zero_window`); read at once,
/// the small window still paces the sender, round after round
/// (`rwnd_limited`).
fn small_buffer_truth(ctx: &Ctx, slow: bool) -> Value {
    let kind = if slow { "zero_window" } else { "rwnd_limited" };
    json!([{ "kind": kind, "direction": "client advertises", "streams": ctx.all_streams() }])
}

fn random_loss(ctx: &Ctx, loss: bool) -> Plan {
    let mut p = base(ctx, plain(true), curl(&[&url(false, "/big.bin")]));
    if loss {
        p.wan.server_to_client.loss = 0.03;
        p.pathologies = json!([{ "kind": "retransmission", "direction": "server_to_client", "streams": ctx.all_streams() }]);
    }
    p.knobs =
        json!({ "server_to_client_loss": if loss { 0.03 } else { 0.0 }, "response_bytes": 200000 });
    p
}

fn slow_start_after_idle(ctx: &Ctx, enabled: bool) -> Plan {
    // Two requests on one keep-alive connection, started 2 s apart (curl
    // --rate), so the connection idles far longer than the RTO in between:
    // with tcp_slow_start_after_idle=1 the second response restarts from
    // the initial window.
    let u = url(false, "/big.bin");
    let mut p = base(ctx, plain(true), curl(&["--rate", "30/m", &u, &u]));
    let ssai = if enabled { "1" } else { "0" };
    p.server_sysctls
        .push(("net.ipv4.tcp_slow_start_after_idle".into(), ssai.into()));
    p.knobs = json!({ "server_tcp_slow_start_after_idle": enabled as u8, "seconds_between_requests": 2, "response_bytes": 200000 });
    if enabled {
        p.pathologies = json!([{ "kind": "slow_start_after_idle", "phase": "transfer", "streams": ctx.all_streams(), "exchanges": [2] }]);
    }
    p
}

fn haproxy(tls: Option<Chain>) -> Haproxy {
    Haproxy {
        tls,
        tfo: false,
        allow_0rtt: false,
        http_no_delay: false,
        backend: vec!["--nodelay".into()],
    }
}

fn with_haproxy(ctx: &Ctx, h: Haproxy, client: Client) -> Plan {
    let mut p = base(ctx, plain(true), client);
    p.server = Server::Haproxy(h);
    p
}

/// TCP Fast Open through HAProxy's `bind ... tfo` (field case 4), TLS
/// terminated by HAProxy: the ClientHello rides in the SYN.
fn tfo_haproxy(ctx: &Ctx, mode: &str) -> Plan {
    let mut h = haproxy(Some(Chain::SmallEc));
    h.tfo = true;
    let mut p = with_haproxy(
        ctx,
        h,
        curl(&["--tlsv1.3", "--tcp-fastopen", &url(true, "/")]),
    );
    p.client_sysctls
        .push(("net.ipv4.tcp_fastopen".into(), "1".into()));
    p.server_sysctls
        .push(("net.ipv4.tcp_fastopen".into(), "2".into()));
    p.knobs = json!({ "client_tcp_fastopen": 1, "server_tcp_fastopen": 2, "haproxy_bind": "ssl crt ... tfo", "curl": "--tcp-fastopen" });
    match mode {
        "accepted" => {
            p.pathologies = json!([{ "kind": "tfo_cookie_request", "streams": [0], "evidence": [tfo_syn()] },
                { "kind": "tfo_accepted", "streams": (1..ctx.runs).collect::<Vec<_>>(), "saved_rtts": 1.0, "evidence": [tfo_syn()] }]);
        }
        "rejected" => {
            p.after_first_run = vec![("net.ipv4.tcp_fastopen".into(), "0".into())];
            p.knobs["server_tcp_fastopen_after_first_run"] = json!(0);
            p.pathologies = json!([{ "kind": "tfo_cookie_request", "streams": [0], "evidence": [tfo_syn()] },
                { "kind": "tfo_rejected", "streams": (1..ctx.runs).collect::<Vec<_>>(), "evidence": [tfo_syn()] }]);
        }
        _ => {
            p.client = curl(&["--tlsv1.3", &url(true, "/")]);
            p.knobs["curl"] = json!("(no --tcp-fastopen)");
        }
    }
    p
}

/// TLS 1.3 0-RTT through HAProxy's `bind ... allow-0rtt`: the built-in
/// client resumes on its second connection and sends its request as early
/// data when the ticket allows it. HAProxy 2.6 accepts it but answers only
/// after the client's Finished (seen with tshark: its first flight carries
/// no response), so no round trip is saved, unlike the built-in server.
/// Without allow-0rtt HAProxy's tickets allow no early data: the second
/// connection resumes and sends its request after the handshake.
fn zero_rtt_haproxy(ctx: &Ctx, allow: bool, method: &str) -> Plan {
    let mut h = haproxy(Some(Chain::SmallEc));
    h.allow_0rtt = allow;
    let client = Client::Builtin(
        [
            "tls-client",
            "--connect",
            &format!("{SERVER_IP}:443"),
            "--connections",
            "2",
            "--early-data",
            "--method",
            method,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
    );
    let mut p = with_haproxy(ctx, h, client);
    p.knobs = json!({ "haproxy_bind": if allow { "ssl crt ... allow-0rtt" } else { "ssl crt ..." }, "client": "built-in TLS 1.3, offers early data", "method": method, "connections_per_run": 2 });
    let second: Vec<u32> = (0..ctx.runs).map(|r| 2 * r + 1).collect();
    let answered = "after the client's Finished, not with HAProxy's first flight";
    p.pathologies = match (allow, method) {
        (true, "GET") => json!([{ "kind": "resumption", "streams": second },
            { "kind": "early_data", "streams": second, "saved_rtts": 0.0, "answered": answered }]),
        (true, _) => json!([{ "kind": "resumption", "streams": second },
            { "kind": "early_data", "streams": second, "saved_rtts": 0.0, "answered": answered },
            { "kind": "early_data_unsafe", "streams": second, "method": method, "needs": "keylog" }]),
        _ => json!([{ "kind": "resumption", "streams": second }]),
    };
    p
}

/// A streaming backend (a head, then 5 pieces 50 ms apart, chunked)
/// behind HAProxy in plain HTTP. Without `option http-no-delay` HAProxy
/// sends what it has with MSG_MORE while the message is unfinished: the
/// kernel holds the partial segment (the head, the first pieces) until
/// more comes or its probe timer fires (the RTO, at least 200 ms), so the
/// first byte comes ~200 ms late and the pieces arrive in a burst. With
/// the option each piece leaves as it comes.
fn stream_haproxy(ctx: &Ctx, no_delay: bool) -> Plan {
    let mut h = haproxy(None);
    h.http_no_delay = no_delay;
    h.backend = [
        "--nodelay",
        "--body",
        "1000",
        "--chunks",
        "5",
        "--chunk-ms",
        "50",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let mut p = with_haproxy(ctx, h, curl(&[&url(false, "/")]));
    p.knobs = json!({ "option_http_no_delay": no_delay, "backend": "head at once, then 5 chunks 50 ms apart (Transfer-Encoding: chunked)" });
    if !no_delay {
        // What a capture shows: the server host sat on the response
        // (rttdoc has no detector naming MSG_MORE; it sees the time in the
        // server, `server_think_time`).
        p.pathologies = json!([{ "kind": "msg_more_hold", "phase": "first_byte", "streams": ctx.all_streams(), "extra_ms": 200.0,
            "why": "HAProxy sends the unfinished response with MSG_MORE; the kernel holds the partial segment until its probe timer (RTO, >= 200 ms)",
            "seen_as": "server_think_time" }]);
    }
    p
}

/// A >4 KB TLS 1.3 flight from HAProxy: HAProxy sets TCP_NODELAY on the
/// connections it accepts, so OpenSSL's 4096-byte write and the rest leave
/// at once (measured with tshark): 1 RTT, unlike nginx with tcp_nodelay off.
fn chain_haproxy(ctx: &Ctx, chain: Chain) -> Plan {
    let mut p = with_haproxy(
        ctx,
        haproxy(Some(chain)),
        curl(&["--tlsv1.3", &url(true, "/")]),
    );
    let big = chain == Chain::OverInitcwnd;
    p.knobs = json!({ "certificate_chain": match chain {
        Chain::RsaChain => "RSA-4096 root and intermediate, P-256 leaf",
        Chain::OverInitcwnd => "RSA-4096 root and intermediate, P-256 leaf with 600 names",
        Chain::SmallEc => "one P-256 certificate",
    }, "tcp_nodelay": "on (HAProxy always sets it)", "initcwnd": 10 });
    if big {
        p.pathologies = json!([{ "kind": "initcwnd_limited", "phase": "tls_handshake", "streams": ctx.all_streams(), "extra_rtts": 1.0 }]);
    }
    p.expected = json!({ "tls_handshake_rtts": if big { 2.0 } else { 1.0 } });
    p
}

pub const CATALOG: &[Scenario] = &[
    Scenario { name: "tls13-nagle-builtin", summary: "built-in TLS 1.3 server writing its ~5 KB flight as 4096 bytes then the rest, Nagle on: handshake 2 RTT", control_of: None, needs: &[], plan: |c| nagle_tls_builtin(c, false) },
    Scenario { name: "tls13-nodelay-builtin", summary: "control: TCP_NODELAY, handshake 1 RTT", control_of: Some("tls13-nagle-builtin"), needs: &[], plan: |c| nagle_tls_builtin(c, true) },
    Scenario { name: "think-time-builtin", summary: "the server thinks 100 ms before its ServerHello (slow key, busy CPU)", control_of: None, needs: &[], plan: |c| think_builtin(c, 100) },
    Scenario { name: "no-think-builtin", summary: "control: no think time", control_of: Some("think-time-builtin"), needs: &[], plan: |c| think_builtin(c, 0) },
    Scenario { name: "hrr-builtin", summary: "the server only takes secp384r1, the client sent x25519: HelloRetryRequest, +1 RTT", control_of: None, needs: &[], plan: |c| hrr_builtin(c, true) },
    Scenario { name: "no-hrr-builtin", summary: "control: the server takes x25519", control_of: Some("hrr-builtin"), needs: &[], plan: |c| hrr_builtin(c, false) },
    Scenario { name: "tls13-resumption-builtin", summary: "TLS 1.3 with tickets, two connections per run: the second resumes", control_of: None, needs: &[], plan: |c| resume_builtin(c, false, true, false) },
    Scenario { name: "tls13-no-tickets-builtin", summary: "control: no tickets, both handshakes full", control_of: Some("tls13-resumption-builtin"), needs: &[], plan: |c| resume_builtin(c, false, false, false) },
    Scenario { name: "zero-rtt-post-builtin", summary: "TLS 1.3 0-RTT carrying a POST: replayable (visible with the run's keylog.txt)", control_of: None, needs: &[], plan: |c| resume_with(c, false, true, true, "POST") },
    Scenario { name: "zero-rtt-builtin", summary: "TLS 1.3 0-RTT: the resumed connection sends its request as early data and gets the answer 1 RTT sooner (control: a GET)", control_of: Some("zero-rtt-post-builtin"), needs: &[], plan: |c| resume_builtin(c, false, true, true) },
    Scenario { name: "tls12-resumption-builtin", summary: "TLS 1.2, two connections per run: the first takes 2 RTT, the resumed one 1 RTT", control_of: None, needs: &[], plan: |c| resume_builtin(c, true, true, false) },
    Scenario { name: "tickets-nagle-builtin", summary: "TLS 1.3 session tickets then a small response, Nagle on: the response waits for the ACK of the tickets", control_of: None, needs: &[], plan: |c| tickets_nagle_builtin(c, false) },
    Scenario { name: "tickets-nodelay-builtin", summary: "control: TCP_NODELAY", control_of: Some("tickets-nagle-builtin"), needs: &[], plan: |c| tickets_nagle_builtin(c, true) },
    Scenario { name: "initcwnd-builtin", summary: "a ~20 KB certificate chain, over the initial window: the flight waits for ACKs, handshake 2 RTT", control_of: None, needs: &[], plan: |c| initcwnd_builtin(c, true) },
    Scenario { name: "small-cert-builtin", summary: "control: a small chain, handshake 1 RTT", control_of: Some("initcwnd-builtin"), needs: &[], plan: |c| initcwnd_builtin(c, false) },
    Scenario { name: "expect-builtin", summary: "curl POSTs with Expect: 100-continue to the built-in HTTP server, which never answers it: the body waits for curl's 1 s timer", control_of: None, needs: &["curl"], plan: |c| expect_continue(c, true) },
    Scenario { name: "expect-nginx", summary: "control: the same upload to nginx, which does not make the client wait", control_of: Some("expect-builtin"), needs: NGINX_CURL, plan: |c| expect_continue(c, false) },
    Scenario { name: "pageload-nginx", summary: "a page load of 12 files over four connections through a 4 Mbit/s downlink with a deep queue: the answers queue behind each other at the client's bottleneck", control_of: None, needs: NGINX_CURL, plan: |c| pageload(c, true) },
    Scenario { name: "pageload-fast-nginx", summary: "control: the same page load without the bottleneck", control_of: Some("pageload-nginx"), needs: NGINX_CURL, plan: |c| pageload(c, false) },
    Scenario { name: "wwr-split-builtin", summary: "built-in HTTP server, header and body in two writes with Nagle, 5 keep-alive requests: each body waits for the ACK of its header", control_of: None, needs: &[], plan: |c| wwr_builtin(c, "split") },
    Scenario { name: "wwr-joined-builtin", summary: "control: header and body in one write", control_of: Some("wwr-split-builtin"), needs: &[], plan: |c| wwr_builtin(c, "joined") },
    Scenario { name: "wwr-nodelay-builtin", summary: "control: two writes with TCP_NODELAY", control_of: Some("wwr-split-builtin"), needs: &[], plan: |c| wwr_builtin(c, "nodelay") },
    Scenario { name: "doze-builtin", summary: "the client's radio dozes 200 ms of every 500 (Wi-Fi power saving) while it streams uploads to two servers and makes 24 requests: each doze holds an answer and both servers' ACKs until it wakes", control_of: None, needs: &[], plan: |c| doze_builtin(c, true) },
    Scenario { name: "awake-builtin", summary: "control: the same traffic, the radio awake", control_of: Some("doze-builtin"), needs: &[], plan: |c| doze_builtin(c, false) },
    Scenario { name: "sftp-nagle-builtin", summary: "SFTP-like upload of 40 blocks, each a 96- and a 656-byte write then a status read, Nagle on: one delayed-ACK stall per block", control_of: None, needs: &[], plan: |c| sftp_builtin(c, false) },
    Scenario { name: "sftp-nodelay-builtin", summary: "control: TCP_NODELAY on the uploader", control_of: Some("sftp-nagle-builtin"), needs: &[], plan: |c| sftp_builtin(c, true) },
    Scenario { name: "tfo-builtin", summary: "built-in TFO server and client: cookie request, then the request rides in the SYN", control_of: None, needs: &[], plan: |c| tfo_builtin(c, true) },
    Scenario { name: "tfo-off-builtin", summary: "control: no TFO", control_of: Some("tfo-builtin"), needs: &[], plan: |c| tfo_builtin(c, false) },
    Scenario { name: "slow-reader-builtin", summary: "a client with an 8 KB receive buffer reading 4 KB per 100 ms: zero windows", control_of: None, needs: &[], plan: |c| slow_reader_builtin(c, Some(true)) },
    Scenario { name: "fast-reader-builtin", summary: "control: the same buffer, read at once (the small window still paces the sender: rwnd_limited)", control_of: Some("slow-reader-builtin"), needs: &[], plan: |c| slow_reader_builtin(c, Some(false)) },
    Scenario { name: "big-buffer-builtin", summary: "control: default (autotuned) receive buffer, read at once", control_of: Some("fast-reader-builtin"), needs: &[], plan: |c| slow_reader_builtin(c, None) },
    Scenario { name: "tls13-nagle-nginx", summary: "nginx, TLS 1.3, 3-cert chain (>4 KB flight), tcp_nodelay off: Nagle holds the end of the server flight for an ACK; handshake 2 RTT", control_of: None, needs: NGINX_CURL_TLS, plan: |c| nagle_tls(c, false) },
    Scenario { name: "tls13-nodelay-nginx", summary: "control: tcp_nodelay on; handshake 1 RTT", control_of: Some("tls13-nagle-nginx"), needs: NGINX_CURL_TLS, plan: |c| nagle_tls(c, true) },
    Scenario { name: "wwr-nagle-nginx", summary: "keep-alive HTTP, 3 requests, tcp_nodelay off: the response body waits for the client's delayed ACK of the header (+40 ms per request)", control_of: None, needs: NGINX_CURL, plan: |c| write_write_read(c, false) },
    Scenario { name: "wwr-nodelay-nginx", summary: "control: tcp_nodelay on", control_of: Some("wwr-nagle-nginx"), needs: NGINX_CURL, plan: |c| write_write_read(c, true) },
    Scenario { name: "tfo-nginx", summary: "TCP Fast Open: the first connection asks for a cookie, the next send the request in the SYN and save 1 RTT", control_of: None, needs: NGINX_CURL, plan: |c| tfo(c, "accepted") },
    Scenario { name: "tfo-rejected-nginx", summary: "TCP Fast Open rejected: the client holds a cookie, the server has TFO turned off; the data in the SYN is sent again", control_of: None, needs: NGINX_CURL, plan: |c| tfo(c, "rejected") },
    Scenario { name: "tfo-off-nginx", summary: "control: the same without --tcp-fastopen", control_of: Some("tfo-nginx"), needs: NGINX_CURL, plan: |c| tfo(c, "off") },
    Scenario { name: "initcwnd-chain-nginx", summary: "TLS 1.3 with a certificate chain larger than the initial congestion window (10 x MSS): the flight waits for ACKs; handshake 2 RTT", control_of: None, needs: NGINX_CURL_TLS, plan: |c| initcwnd(c, true) },
    Scenario { name: "small-chain-nginx", summary: "control: one small certificate; handshake 1 RTT", control_of: Some("initcwnd-chain-nginx"), needs: NGINX_CURL_TLS, plan: |c| initcwnd(c, false) },
    Scenario { name: "hrr-nginx", summary: "TLS 1.3 HelloRetryRequest: the server wants secp384r1, the client sent an x25519 share; +1 RTT", control_of: None, needs: NGINX_CURL_TLS, plan: |c| hrr(c, true) },
    Scenario { name: "no-hrr-nginx", summary: "control: the server takes x25519", control_of: Some("hrr-nginx"), needs: NGINX_CURL_TLS, plan: |c| hrr(c, false) },
    Scenario { name: "tls13-resumption-nginx", summary: "TLS 1.3, two connections per run: the second resumes with a PSK", control_of: None, needs: NGINX_CURL_TLS, plan: |c| resumption(c, "1.3", true) },
    Scenario { name: "tls13-no-resumption-nginx", summary: "control: tickets and cache off, both handshakes full", control_of: Some("tls13-resumption-nginx"), needs: NGINX_CURL_TLS, plan: |c| resumption(c, "1.3", false) },
    Scenario { name: "tls12-resumption-nginx", summary: "TLS 1.2, two connections per run: the first takes 2 RTT, the resumed one 1 RTT", control_of: None, needs: NGINX_CURL_TLS, plan: |c| resumption(c, "1.2", true) },
    Scenario { name: "tls12-full-nginx", summary: "control: TLS 1.2 without resumption, 2 RTT both times", control_of: Some("tls12-resumption-nginx"), needs: NGINX_CURL_TLS, plan: |c| resumption(c, "1.2", false) },
    Scenario { name: "zero-window-nginx", summary: "a slow reader (curl --limit-rate) with a small receive buffer advertises a zero window", control_of: None, needs: NGINX_CURL, plan: |c| zero_window(c, true) },
    Scenario { name: "fast-reader-nginx", summary: "control: the same reader at full speed", control_of: Some("zero-window-nginx"), needs: NGINX_CURL, plan: |c| zero_window(c, false) },
    Scenario { name: "random-loss-nginx", summary: "3% random loss server -> client on a 200 KB download: retransmissions", control_of: None, needs: NGINX_CURL, plan: |c| random_loss(c, true) },
    Scenario { name: "no-loss-nginx", summary: "control: no loss", control_of: Some("random-loss-nginx"), needs: NGINX_CURL, plan: |c| random_loss(c, false) },
    Scenario { name: "pmtu-blackhole-nginx", summary: "a hop carries 1280 bytes and tells no one: the server's full-size TLS flight is re-sent on its timer until it goes smaller (tcp_mtu_probing=1)", control_of: None, needs: NGINX_CURL, plan: |c| path_mtu(c, false) },
    Scenario { name: "pmtu-clamped-nginx", summary: "control: the client's route announces MSS 1240, which fits the hop", control_of: Some("pmtu-blackhole-nginx"), needs: NGINX_CURL, plan: |c| path_mtu(c, true) },
    Scenario { name: "syn-loss", summary: "the client's first SYN is lost: the kernel resends it after its 1 s SYN timeout", control_of: None, needs: NGINX_CURL, plan: |c| syn_loss(c, true) },
    Scenario { name: "syn-loss-control", summary: "control: no loss", control_of: Some("syn-loss"), needs: NGINX_CURL, plan: |c| syn_loss(c, false) },
    Scenario { name: "accept-queue-builtin", summary: "a single-worker server (500 ms each) with listen backlog 1, six connections at once: three's handshake ACKs and requests are dropped until the queue has room", control_of: None, needs: &[], plan: |c| accept_queue_builtin(c, true) },
    Scenario { name: "accept-queue-roomy-builtin", summary: "control: backlog 64, the connections wait in the queue", control_of: Some("accept-queue-builtin"), needs: &[], plan: |c| accept_queue_builtin(c, false) },
    Scenario { name: "stale-peer-builtin", summary: "two connections per run from one client port, the first forgotten by the client (no FIN, no RST): the server answers the second's SYN with a challenge ACK, the client resets it and sends its SYN again", control_of: None, needs: &[], plan: |c| stale_peer_builtin(c, true) },
    Scenario { name: "stale-peer-closed-builtin", summary: "control: the first connection closed before the second", control_of: Some("stale-peer-builtin"), needs: &[], plan: |c| stale_peer_builtin(c, false) },
    Scenario { name: "listener-restart-builtin", summary: "two connections per run, the second's SYN before the first's request, on which the server closes its listener (a restart) and opens it again: the second's handshake ACK and request are reset", control_of: None, needs: &[], plan: |c| listener_restart_builtin(c, true) },
    Scenario { name: "listener-steady-builtin", summary: "control: the listener stays open, the second connection is answered", control_of: Some("listener-restart-builtin"), needs: &[], plan: |c| listener_restart_builtin(c, false) },
    Scenario { name: "ssai-nginx", summary: "keep-alive with 2 s idle between two 200 KB responses, tcp_slow_start_after_idle=1: the second restarts from the initial window", control_of: None, needs: NGINX_CURL, plan: |c| slow_start_after_idle(c, true) },
    Scenario { name: "no-ssai-nginx", summary: "control: tcp_slow_start_after_idle=0", control_of: Some("ssai-nginx"), needs: NGINX_CURL, plan: |c| slow_start_after_idle(c, false) },
    Scenario { name: "tfo-haproxy", summary: "HAProxy `bind ... ssl crt ... tfo`: the first connection asks for a cookie, the next put the ClientHello in the SYN and save 1 RTT", control_of: None, needs: HAPROXY_CURL, plan: |c| tfo_haproxy(c, "accepted") },
    Scenario { name: "tfo-rejected-haproxy", summary: "HAProxy with tfo, server tcp_fastopen turned off after the first run: the cookie is refused, the SYN's ClientHello is sent again", control_of: None, needs: HAPROXY_CURL, plan: |c| tfo_haproxy(c, "rejected") },
    Scenario { name: "tfo-off-haproxy", summary: "control: the same without --tcp-fastopen", control_of: Some("tfo-haproxy"), needs: HAPROXY_CURL, plan: |c| tfo_haproxy(c, "off") },
    Scenario { name: "zero-rtt-post-haproxy", summary: "HAProxy `allow-0rtt`: the resumed connection sends a POST as TLS 1.3 early data (replayable; visible with the run's keylog.txt)", control_of: None, needs: HAPROXY, plan: |c| zero_rtt_haproxy(c, true, "POST") },
    Scenario { name: "zero-rtt-haproxy", summary: "control: a GET in early data (idempotent); HAProxy 2.6 still answers only after the handshake", control_of: Some("zero-rtt-post-haproxy"), needs: HAPROXY, plan: |c| zero_rtt_haproxy(c, true, "GET") },
    Scenario { name: "no-0rtt-haproxy", summary: "control: no allow-0rtt: the tickets allow no early data; the second connection resumes and sends its request after the handshake", control_of: Some("zero-rtt-haproxy"), needs: HAPROXY, plan: |c| zero_rtt_haproxy(c, false, "GET") },
    Scenario { name: "stream-haproxy", summary: "HAProxy (plain HTTP) in front of a streaming backend, no `option http-no-delay`: MSG_MORE holds the head and first pieces ~200 ms (the kernel's probe timer)", control_of: None, needs: HAPROXY_CURL, plan: |c| stream_haproxy(c, false) },
    Scenario { name: "stream-no-delay-haproxy", summary: "control: `option http-no-delay`, each piece leaves as it comes", control_of: Some("stream-haproxy"), needs: HAPROXY_CURL, plan: |c| stream_haproxy(c, true) },
    Scenario { name: "initcwnd-chain-haproxy", summary: "HAProxy terminating TLS 1.3 with a chain over the initial congestion window: the flight waits for ACKs; handshake 2 RTT", control_of: None, needs: HAPROXY_CURL, plan: |c| chain_haproxy(c, Chain::OverInitcwnd) },
    Scenario { name: "big-chain-haproxy", summary: "control: HAProxy with the >4 KB chain of tls13-nagle-nginx: it sets TCP_NODELAY, no Nagle hold, handshake 1 RTT", control_of: Some("tls13-nagle-nginx"), needs: HAPROXY_CURL, plan: |c| chain_haproxy(c, Chain::RsaChain) },
    Scenario { name: "small-chain-haproxy", summary: "control: HAProxy with one small certificate; handshake 1 RTT", control_of: Some("initcwnd-chain-haproxy"), needs: HAPROXY_CURL, plan: |c| chain_haproxy(c, Chain::SmallEc) },
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
    pub overrides: Overrides,
}

/// One transfer, as `curl -w` reports it (ms from the start of the transfer).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Timing {
    pub run: u32,
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
    pub labels: Value,
    /// Things the user asked for that the run could not do (a scripted
    /// drop past the run's last packet).
    pub warnings: Vec<String>,
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

/// Makes (or reuses) the certificate chain and key for `chain` in `dir`.
pub fn make_chain(dir: &Path, chain: Chain) -> io::Result<(PathBuf, PathBuf)> {
    std::fs::create_dir_all(dir)?;
    let d = |f: &str| dir.join(f).to_string_lossy().into_owned();
    let ossl = |args: &[&str]| sh(Command::new("openssl").args(args));
    let (chain_file, key_file) = match chain {
        Chain::SmallEc => ("ec-chain.pem", "ec.key"),
        Chain::RsaChain => ("rsa3-chain.pem", "leaf.key"),
        Chain::OverInitcwnd => ("big-chain.pem", "leaf.key"),
    };
    let (chain_path, key_path) = (dir.join(chain_file), dir.join(key_file));
    if chain_path.exists() && key_path.exists() {
        return Ok((chain_path, key_path));
    }
    if chain == Chain::SmallEc {
        ossl(&[
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-keyout",
            &d("ec.key"),
            "-out",
            &d("ec-chain.pem"),
            "-days",
            "30",
            "-subj",
            "/CN=lab.rttdoc.test",
            "-addext",
            &format!("subjectAltName=IP:{SERVER_IP}"),
        ])?;
        return Ok((chain_path, key_path));
    }
    if !dir.join("int.pem").exists() {
        std::fs::write(
            dir.join("ca.ext"),
            "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n",
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
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-keyout",
            &d("leaf.key"),
            "-out",
            &d("leaf.csr"),
            "-subj",
            "/CN=lab.rttdoc.test",
        ])?;
    }
    let (ext, leaf) = if chain == Chain::OverInitcwnd {
        // 600 names of ~20 bytes: about 12 KB more certificate.
        let names: Vec<String> = (0..600)
            .map(|i| format!("DNS:host{i:04}.lab.rttdoc.test"))
            .collect();
        (
            format!(
                "basicConstraints=CA:FALSE\nsubjectAltName=IP:{SERVER_IP},{}\n",
                names.join(",")
            ),
            "big-leaf.pem",
        )
    } else {
        // 40 names: the certificate an RSA-4096 leaf key would have made.
        let names: Vec<String> = (0..40)
            .map(|i| format!("DNS:www{i:02}.lab.rttdoc.test"))
            .collect();
        (
            format!(
                "basicConstraints=CA:FALSE\nsubjectAltName=IP:{SERVER_IP},DNS:lab.rttdoc.test,{}\n",
                names.join(",")
            ),
            "leaf.pem",
        )
    };
    std::fs::write(dir.join(format!("{leaf}.ext")), ext)?;
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
        &d(leaf),
        "-days",
        "30",
        "-extfile",
        &d(&format!("{leaf}.ext")),
    ])?;
    let mut pem = std::fs::read(dir.join(leaf))?;
    pem.extend(std::fs::read(dir.join("int.pem"))?);
    pem.extend(std::fs::read(dir.join("root.pem"))?);
    std::fs::write(&chain_path, pem)?;
    Ok((chain_path, key_path))
}

fn nginx_conf(work: &Path, n: &Nginx, certs: &Path) -> io::Result<(String, u16)> {
    let w = work.display();
    let fastopen = n
        .fastopen
        .map(|q| format!(" fastopen={q}"))
        .unwrap_or_default();
    let (listen, port) = match &n.tls {
        Some(t) => {
            let (chain, key) = make_chain(certs, t.chain)?;
            let mut l = format!(
                "listen {SERVER_IP}:443 ssl{fastopen}; ssl_certificate {}; ssl_certificate_key {}; ssl_protocols {};",
                chain.display(),
                key.display(),
                t.protocols
            );
            if t.resumption {
                l.push_str(" ssl_session_tickets on; ssl_session_cache shared:lab:1m;");
            } else {
                l.push_str(" ssl_session_tickets off; ssl_session_cache off;");
            }
            if let Some(c) = t.ecdh_curve {
                l.push_str(&format!(" ssl_ecdh_curve {c};"));
            }
            (l, 443)
        }
        None => (format!("listen {SERVER_IP}:80{fastopen};"), 80),
    };
    let conf = format!(
        "user root; worker_processes 1; pid {w}/nginx.pid; error_log {w}/error.log; daemon on;\n\
         events {{ worker_connections 256; }}\n\
         http {{ access_log off; client_body_temp_path {w}; proxy_temp_path {w}; fastcgi_temp_path {w};\n\
         uwsgi_temp_path {w}; scgi_temp_path {w}; sendfile on; tcp_nopush off; tcp_nodelay {};\n\
         keepalive_requests 1000;\n\
         server {{ {listen} root {w}/www; }} }}\n",
        if n.nodelay { "on" } else { "off" }
    );
    Ok((conf, port))
}

/// HAProxy's configuration for `h`, and the port it listens on. The
/// certificate file (chain then key, as HAProxy's `crt` takes it) is made
/// in `certs`.
fn haproxy_conf(work: &Path, h: &Haproxy, certs: &Path) -> io::Result<(String, u16)> {
    let w = work.display();
    let mut bind = String::new();
    let port = match h.tls {
        Some(chain) => {
            let (chain_file, key) = make_chain(certs, chain)?;
            let pem = chain_file.with_extension("haproxy.pem");
            let mut both = std::fs::read(&chain_file)?;
            both.extend(std::fs::read(&key)?);
            std::fs::write(&pem, both)?;
            bind.push_str(&format!(" ssl crt {}", pem.display()));
            if h.allow_0rtt {
                bind.push_str(" allow-0rtt");
            }
            443
        }
        None => 80,
    };
    if h.tfo {
        bind.push_str(" tfo");
    }
    let conf = format!(
        "global\n  maxconn 256\n  pidfile {w}/haproxy.pid\n\n\
         defaults\n  mode http\n  timeout connect 5s\n  timeout client 30s\n  timeout server 30s\n{}\n\
         frontend lab\n  bind {SERVER_IP}:{port}{bind}\n  default_backend app\n\n\
         backend app\n  server app {BACKEND}\n",
        if h.http_no_delay {
            "  option http-no-delay\n"
        } else {
            ""
        }
    );
    Ok((conf, port))
}

/// Waits (up to 5 s) until the server namespace has a listening TCP socket
/// on `port`, or on any port.
fn wait_listening(lab: &Lab, port: Option<u16>) -> io::Result<()> {
    let filter = port.map(|p| format!("sport = :{p}"));
    for _ in 0..100 {
        let out = lab
            .server
            .command("ss")
            .arg("-Hltn")
            .args(filter.iter())
            .output()?;
        if !String::from_utf8_lossy(&out.stdout).trim().is_empty() {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Err(io::Error::other(match port {
        Some(p) => format!("server never listened on port {p}"),
        None => "the server command never listened on a TCP port (waited 5 s)".into(),
    }))
}

fn parse_timings(out: &str, run: u32) -> io::Result<Vec<Timing>> {
    let mut timings = Vec::new();
    for line in out.lines() {
        let v: Vec<f64> = line
            .split_whitespace()
            .filter_map(|x| x.parse().ok())
            .map(|s: f64| s * 1000.0)
            .collect();
        if v.len() == 4 {
            timings.push(Timing {
                run,
                connect_ms: v[0],
                tls_ms: v[1],
                first_byte_ms: v[2],
                total_ms: v[3],
            });
        }
    }
    if timings.is_empty() {
        return Err(io::Error::other(format!(
            "unexpected client output {out:?}"
        )));
    }
    Ok(timings)
}

/// The rttdoc binary, to run built-in peers inside the namespaces.
fn self_exe() -> io::Result<PathBuf> {
    std::env::current_exe()
}

/// Runs the client once. Every client gets SSLKEYLOGFILE (curl and the
/// built-in TLS client honour it): the key log lets `analyze --keylog`
/// read 0-RTT early data. What the client prints (stdout and stderr) is
/// appended to `log`, one section per run.
fn run_client(
    lab: &Lab,
    client: &Client,
    run: u32,
    keylog: &Path,
    log: &Path,
) -> io::Result<Vec<Timing>> {
    let command = |program: &str| {
        let mut c = lab.client.command(program);
        c.env("SSLKEYLOGFILE", keylog);
        c
    };
    let start = Instant::now();
    let (mut cmd, curl_format) = match client {
        Client::Curl(args) => {
            let fmt = "%{time_connect} %{time_appconnect} %{time_starttransfer} %{time_total}\\n";
            let mut c = command("curl");
            c.args(["-sSk", "--max-time", "30", "-w", fmt])
                .args(args)
                .args(
                    // every URL's body goes to /dev/null
                    args.iter()
                        .filter(|a| a.contains("://"))
                        .flat_map(|_| ["-o", "/dev/null"]),
                );
            (c, true)
        }
        Client::Builtin(args) => {
            let exe = self_exe()?;
            let mut c = command(&exe.to_string_lossy());
            c.args(["lab", "peer"]).args(args);
            (c, true)
        }
        Client::Shell(cmd) => {
            let mut c = command("bash");
            c.args(["-c", cmd])
                .env("RTTDOC_SERVER_IP", SERVER_IP)
                .env("RTTDOC_SERVER_IP_2", SERVER_IP_2)
                .env("RTTDOC_CLIENT_IP", CLIENT_IP);
            (c, false)
        }
    };
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let pid = child.id();
    crate::journal::record_process(pid)?;
    let out = child.wait_with_output();
    crate::journal::forget_process(pid);
    let out = out?;
    let elapsed_ms = start.elapsed().as_secs_f64() * 1000.0;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)?;
        writeln!(f, "# run {run}: exit {}", out.status)?;
        f.write_all(stdout.as_bytes())?;
        if !stderr.trim().is_empty() {
            writeln!(f, "# stderr")?;
            f.write_all(stderr.as_bytes())?;
        }
    }
    if !out.status.success() {
        return Err(io::Error::other(format!(
            "the client failed in run {run} ({}): {}",
            out.status,
            last_lines(&format!("{stdout}{stderr}"), 5)
        )));
    }
    if curl_format {
        return parse_timings(&stdout, run);
    }
    // A user's command: its curl -w variables when it printed any, else
    // only the command's own duration.
    let mut timings = parse_curl_vars(&stdout, run);
    if timings.is_empty() {
        timings = parse_timings(&stdout, run).unwrap_or_default();
    }
    if timings.is_empty() {
        timings.push(Timing {
            run,
            connect_ms: f64::NAN,
            tls_ms: f64::NAN,
            first_byte_ms: f64::NAN,
            total_ms: elapsed_ms,
        });
    }
    Ok(timings)
}

fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join(" | ")
}

/// curl `-w` variables in a user's output, one transfer per line that
/// names any: `time_connect=0.036 time_total=0.112`, `time_total: 0.112`
/// or the names and values in any order, in seconds (as curl prints them).
pub fn parse_curl_vars(out: &str, run: u32) -> Vec<Timing> {
    const NAMES: [&str; 4] = [
        "time_connect",
        "time_appconnect",
        "time_starttransfer",
        "time_total",
    ];
    let mut timings = Vec::new();
    for line in out.lines() {
        let tokens: Vec<&str> = line
            .split(|c: char| c.is_whitespace() || c == '=' || c == ',' || c == ';')
            .map(|t| t.trim_matches(|c| c == ':' || c == '"' || c == '\''))
            .filter(|t| !t.is_empty())
            .collect();
        let mut v = [f64::NAN; 4];
        let mut any = false;
        for (i, t) in tokens.iter().enumerate() {
            if let Some(k) = NAMES.iter().position(|n| n == t) {
                if let Some(x) = tokens.get(i + 1).and_then(|x| x.parse::<f64>().ok()) {
                    v[k] = x * 1000.0;
                    any = true;
                }
            }
        }
        if any {
            timings.push(Timing {
                run,
                connect_ms: v[0],
                tls_ms: v[1],
                first_byte_ms: v[2],
                total_ms: v[3],
            });
        }
    }
    timings
}

fn write_www(work: &Path) -> io::Result<()> {
    let www = work.join("www");
    std::fs::create_dir_all(&www)?;
    std::fs::write(www.join("index.html"), "hello from the rttdoc lab\n")?;
    std::fs::write(www.join("page.html"), "x".repeat(3000))?;
    std::fs::write(www.join("big.bin"), vec![b'z'; 200_000])?;
    std::fs::write(www.join("mid.bin"), vec![b'z'; 80_000])?;
    Ok(())
}

/// Changes to a scenario's path and hosts from the command line.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Overrides {
    pub loss_c2s: Option<f64>,
    pub loss_s2c: Option<f64>,
    pub jitter_us: Option<u64>,
    pub rate_mbit: Option<f64>,
    pub queue_bytes: Option<usize>,
    pub drop_c2s: Vec<u64>,
    pub drop_s2c: Vec<u64>,
    /// Server route `initcwnd`.
    pub initcwnd: Option<u32>,
    /// Client route `quickack 1`: no delayed ACKs from the client.
    pub quickack: bool,
    /// Path MTU (both TUN devices).
    pub mtu: Option<u32>,
    pub server_sysctls: Vec<(String, String)>,
    pub client_sysctls: Vec<(String, String)>,
}

impl Overrides {
    pub fn is_empty(&self) -> bool {
        self.loss_c2s.is_none()
            && self.loss_s2c.is_none()
            && self.jitter_us.is_none()
            && self.rate_mbit.is_none()
            && self.queue_bytes.is_none()
            && self.drop_c2s.is_empty()
            && self.drop_s2c.is_empty()
            && self.initcwnd.is_none()
            && !self.quickack
            && self.mtu.is_none()
            && self.server_sysctls.is_empty()
            && self.client_sysctls.is_empty()
    }

    fn apply(&self, p: &mut Plan) {
        for (path, loss, drop) in [
            (&mut p.wan.client_to_server, self.loss_c2s, &self.drop_c2s),
            (&mut p.wan.server_to_client, self.loss_s2c, &self.drop_s2c),
        ] {
            if let Some(l) = loss {
                path.loss = l;
            }
            path.drop.extend(drop);
            if let Some(j) = self.jitter_us {
                path.jitter_us = j;
            }
            if let Some(r) = self.rate_mbit {
                path.rate_bps = Some((r * 1e6) as u64);
            }
            if let Some(q) = self.queue_bytes {
                path.queue_bytes = q;
            }
        }
        if let Some(n) = self.initcwnd {
            p.server_route
                .extend(["initcwnd".to_string(), n.to_string()]);
        }
        if self.quickack {
            p.client_route
                .extend(["quickack".to_string(), "1".to_string()]);
        }
        if let Some(mtu) = self.mtu {
            p.wan.mtu = mtu;
        }
        p.server_sysctls.extend(self.server_sysctls.iter().cloned());
        p.client_sysctls.extend(self.client_sysctls.iter().cloned());
        if !self.is_empty() {
            p.knobs["overrides"] = serde_json::to_value(self).unwrap_or_default();
            // Exact packet positions assume the scenario's own path and hosts.
            if let Some(list) = p.pathologies.as_array_mut() {
                for x in list {
                    if let Some(o) = x.as_object_mut() {
                        o.remove("evidence");
                    }
                }
            }
        }
    }
}

/// The plan for a user's own server and client commands
/// (`rttdoc lab run --server-cmd ... --client-cmd ...`). Both run under
/// `bash -c` in their namespace, with RTTDOC_SERVER_IP and RTTDOC_CLIENT_IP
/// set; the client command runs once per run.
pub fn custom_plan(ctx: &Ctx, server_cmd: &str, client_cmd: &str) -> Plan {
    let mut p = base(ctx, plain(true), Client::Shell(client_cmd.to_string()));
    p.server = Server::Command(server_cmd.to_string());
    p.knobs = json!({ "server_cmd": server_cmd, "client_cmd": client_cmd });
    p
}

/// Runs a scenario and writes its captures, labels and timings to `opts.out`.
pub fn run(s: &Scenario, opts: &RunOptions) -> io::Result<RunResult> {
    let ctx = Ctx {
        rtt: opts.rtt,
        runs: opts.runs,
    };
    run_plan(s.name, s.summary, s.control_of, (s.plan)(&ctx), opts)
}

/// Runs a plan (a catalog scenario's, or [`custom_plan`]).
pub fn run_plan(
    name: &str,
    summary: &str,
    control_of: Option<&str>,
    mut plan: Plan,
    opts: &RunOptions,
) -> io::Result<RunResult> {
    let ctx = Ctx {
        rtt: opts.rtt,
        runs: opts.runs,
    };
    opts.overrides.apply(&mut plan);
    std::fs::create_dir_all(&opts.out)?;
    // nginx and the peers run elsewhere (another namespace, another cwd for
    // nginx's prefix): every path handed to them must be absolute.
    let out_dir = std::fs::canonicalize(&opts.out)?;
    let certs_dir = match &opts.certs {
        Some(c) => {
            std::fs::create_dir_all(c)?;
            Some(std::fs::canonicalize(c)?)
        }
        None => None,
    };
    let opts = &RunOptions {
        out: out_dir,
        certs: certs_dir,
        ..opts.clone()
    };
    // The server's scratch (config, pid, logs, the pages it serves) lives
    // outside the output directory, journaled, so an interrupted run
    // leaves nothing of it there (the next run removes it after a crash).
    crate::cleanup_on_signals();
    let work = scratch_dir()?;
    let result = run_in(name, summary, control_of, plan, opts, &ctx, &work);
    let _ = std::fs::remove_dir_all(&work);
    crate::journal::forget_scratch(&work);
    result
}

/// A fresh journaled scratch directory for one run.
fn scratch_dir() -> io::Result<PathBuf> {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let dir = std::env::temp_dir().join(format!("rttdoc-lab-work-{}-{n}", std::process::id()));
    crate::journal::record_scratch(&dir)?;
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// The machine-readable settings of a run's hosts for labels.json: sysctls
/// as a map, route attributes as a map (`initcwnd 4` -> {"initcwnd": "4"}).
fn settings_json(sysctls: &[(String, String)]) -> Value {
    Value::Object(
        sysctls
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect(),
    )
}

fn route_json(attrs: &[String]) -> Value {
    Value::Object(
        attrs
            .chunks(2)
            .map(|kv| {
                (
                    kv[0].clone(),
                    Value::String(kv.get(1).cloned().unwrap_or_default()),
                )
            })
            .collect(),
    )
}

/// Scripted drops that the run never reached (the direction carried fewer
/// packets): the user asked for a drop that did not happen.
fn unreached_drops(p: &crate::emulator::PathConfig, total: u64) -> Vec<u64> {
    p.drop.iter().copied().filter(|&n| n > total).collect()
}

fn run_in(
    name: &str,
    summary: &str,
    control_of: Option<&str>,
    plan: Plan,
    opts: &RunOptions,
    ctx: &Ctx,
    work: &Path,
) -> io::Result<RunResult> {
    let work = work.to_path_buf();
    write_www(&work)?;
    let keylog = opts.out.join("keylog.txt");
    let _ = std::fs::remove_file(&keylog);
    let client_log_path = opts.out.join("client.log");
    let _ = std::fs::remove_file(&client_log_path);
    for stale in [
        "both.pcapng",
        "nginx.conf",
        "haproxy.cfg",
        "server.log",
        "backend.log",
    ] {
        let _ = std::fs::remove_file(opts.out.join(stale));
    }
    let certs = opts.certs.clone().unwrap_or_else(|| opts.out.join("certs"));
    let (server_software, server_config) = match &plan.server {
        Server::Nginx(_) => ("nginx", Some("nginx.conf")),
        Server::Haproxy(_) => ("haproxy", Some("haproxy.cfg")),
        Server::Builtin(..) => ("rttdoc lab peer", None),
        Server::Command(_) => ("--server-cmd", None),
    };
    let listen_port = match &plan.server {
        Server::Nginx(n) => {
            let (conf, port) = nginx_conf(&work, n, &certs)?;
            std::fs::write(work.join("nginx.conf"), &conf)?;
            // Kept beside the captures: the configuration that made them
            // (`rttdoc audit --nginx OUT/nginx.conf` reads it).
            std::fs::write(opts.out.join("nginx.conf"), &conf)?;
            Some(port)
        }
        Server::Haproxy(h) => {
            let (conf, port) = haproxy_conf(&work, h, &certs)?;
            std::fs::write(work.join("haproxy.cfg"), &conf)?;
            std::fs::write(opts.out.join("haproxy.cfg"), &conf)?;
            Some(port)
        }
        Server::Command(_) | Server::Builtin(..) => None,
    };

    let lab = Lab::start(&plan.wan)?;
    for (k, v) in &plan.server_sysctls {
        lab.server.sysctl(k, v)?;
    }
    for (k, v) in &plan.client_sysctls {
        lab.client.sysctl(k, v)?;
    }
    if !plan.server_route.is_empty() {
        lab.route(
            true,
            &plan
                .server_route
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>(),
        )?;
    }
    if !plan.client_route.is_empty() {
        lab.route(
            false,
            &plan
                .client_route
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>(),
        )?;
    }
    let mut server_children = Vec::new();
    match (&plan.server, listen_port) {
        (Server::Haproxy(h), Some(port)) => {
            let exe = self_exe()?;
            let log = std::fs::File::create(opts.out.join("backend.log"))?;
            let backend = lab
                .server
                .command(&exe.to_string_lossy())
                .args(["lab", "peer", "http-server", "--listen", BACKEND])
                .args(&h.backend)
                .stdin(Stdio::null())
                .stdout(log.try_clone()?)
                .stderr(log)
                .spawn()?;
            crate::journal::record_process(backend.id())?;
            server_children.push(backend);
            wait_listening(&lab, Some(8080))?;
            let log = std::fs::File::create(opts.out.join("server.log"))?;
            // -db: in the foreground, so the lab owns the process.
            let proxy = lab
                .server
                .command("haproxy")
                .arg("-db")
                .arg("-f")
                .arg(work.join("haproxy.cfg"))
                .stdin(Stdio::null())
                .stdout(log.try_clone()?)
                .stderr(log)
                .spawn()?;
            crate::journal::record_process(proxy.id())?;
            server_children.push(proxy);
            wait_listening(&lab, Some(port)).map_err(|e| {
                let log = std::fs::read_to_string(opts.out.join("server.log")).unwrap_or_default();
                io::Error::other(format!("haproxy: {e}: {}", log.trim()))
            })?;
        }
        (Server::Nginx(_), Some(port)) => {
            sh(lab
                .server
                .command("nginx")
                .arg("-c")
                .arg(work.join("nginx.conf")))?;
            // nginx daemonizes: its master's pid is in the pid file.
            for _ in 0..50 {
                if let Some(pid) = std::fs::read_to_string(work.join("nginx.pid"))
                    .ok()
                    .and_then(|p| p.trim().parse::<u32>().ok())
                {
                    crate::journal::record_process(pid)?;
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            wait_listening(&lab, Some(port))?;
        }
        (Server::Command(cmd), _) => {
            let log = std::fs::File::create(opts.out.join("server.log"))?;
            let child = lab
                .server
                .command("bash")
                .args(["-c", cmd])
                .env("RTTDOC_SERVER_IP", SERVER_IP)
                .env("RTTDOC_SERVER_IP_2", SERVER_IP_2)
                .env("RTTDOC_CLIENT_IP", CLIENT_IP)
                .stdin(Stdio::null())
                .stdout(log.try_clone()?)
                .stderr(log)
                .spawn()?;
            crate::journal::record_process(child.id())?;
            server_children.push(child);
            wait_listening(&lab, None)?;
        }
        (Server::Builtin(args, port), _) => {
            let exe = self_exe()?;
            let log = std::fs::File::create(opts.out.join("server.log"))?;
            let child = lab
                .server
                .command(&exe.to_string_lossy())
                .args(["lab", "peer"])
                .args(args)
                .stdin(Stdio::null())
                .stdout(log.try_clone()?)
                .stderr(log)
                .spawn()?;
            crate::journal::record_process(child.id())?;
            server_children.push(child);
            wait_listening(&lab, Some(*port))?;
        }
        _ => unreachable!("nginx and haproxy plans have a port"),
    }
    let mut timings = Vec::new();
    for run in 0..opts.runs {
        if run == 1 {
            for (k, v) in &plan.after_first_run {
                lab.server.sysctl(k, v)?;
            }
        }
        timings.extend(run_client(
            &lab,
            &plan.client,
            run,
            &keylog,
            &client_log_path,
        )?);
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(opts.rtt * 2 + Duration::from_millis(100));
    let congestion_control = lab.congestion_control.clone();
    let report = lab.finish();
    for mut child in server_children {
        let _ = child.kill();
        let _ = child.wait();
        crate::journal::forget_process(child.id());
    }
    write_captures(&opts.out, &report)?;

    let (c2s, s2c) = (&report.client_to_server, &report.server_to_client);
    let mut warnings = Vec::new();
    for (dir, path, stats, flag) in [
        (
            "client -> server",
            &plan.wan.client_to_server,
            c2s,
            "--drop-c2s",
        ),
        (
            "server -> client",
            &plan.wan.server_to_client,
            s2c,
            "--drop-s2c",
        ),
    ] {
        let total = stats.forwarded + stats.dropped.len() as u64;
        let missed = unreached_drops(path, total);
        if !missed.is_empty() {
            warnings.push(format!(
                "{flag} {}: the run carried only {total} {dir} packets, so {} never happened",
                missed
                    .iter()
                    .map(|n| n.to_string())
                    .collect::<Vec<_>>()
                    .join(","),
                if missed.len() == 1 {
                    "that drop"
                } else {
                    "those drops"
                }
            ));
        }
    }
    // The emulator measures itself: a packet released much later than
    // planned (the VM was starved of CPU) shifts what the captures show by
    // that much. Say so: the run is not the path that was asked for.
    let allowed_us = (ctx.rtt_ms() * 1000.0 * 0.1).max(1000.0);
    for (dir, stats) in [("client -> server", c2s), ("server -> client", s2c)] {
        let (_, _, max) = stats.lateness_us();
        if max > allowed_us {
            warnings.push(format!(
                "the emulator released a {dir} packet {:.1} ms late (the machine was busy): this run's timings are off by up to that much",
                max / 1000.0
            ));
        }
    }
    let mut server_sysctls = plan.server_sysctls.clone();
    if congestion_control == crate::CONGESTION_CONTROL {
        server_sysctls.push((
            "net.ipv4.tcp_congestion_control".into(),
            congestion_control.clone(),
        ));
    }
    let client_sysctls = plan.client_sysctls.clone();
    let private_keys = std::fs::read_dir(&certs).is_ok_and(|mut d| {
        d.any(|e| e.is_ok_and(|e| e.path().extension().is_some_and(|x| x == "key")))
    });
    let labels = json!({
        "scenario": name,
        "summary": summary,
        "control_of": control_of,
        "knobs": plan.knobs,
        "rtt_ms": ctx.rtt_ms(),
        "runs": opts.runs,
        "client": CLIENT_IP,
        "server": SERVER_IP,
        "congestion_control": congestion_control,
        "captures": { "client": "client.pcapng", "server": "server.pcapng", "middle": "middle.pcapng" },
        "server_software": server_software,
        "server_config": server_config,
        // What the hosts ran with, machine-readable (`rttdoc audit` reads
        // them): sysctls set in each namespace, and the route attributes
        // (`ip route change ... initcwnd 4 quickack 1`) toward the peer.
        "server_sysctls": settings_json(&server_sysctls),
        "server_sysctls_after_first_run": settings_json(&plan.after_first_run),
        "client_sysctls": settings_json(&client_sysctls),
        "server_route": route_json(&plan.server_route),
        "client_route": route_json(&plan.client_route),
        "certificates": private_keys.then(|| json!({
            // Relative to the run's directory when inside it.
            "dir": certs.strip_prefix(&opts.out).unwrap_or(&certs).to_string_lossy(),
            "private_keys": true,
            "note": "throwaway test keys the lab generated for 10.77.0.2; the server configuration points at them",
        })),
        "client_log": std::fs::metadata(&client_log_path).is_ok_and(|m| m.len() > 0).then_some("client.log"),
        "warnings": warnings,
        "keylog": std::fs::metadata(&keylog).is_ok_and(|m| m.len() > 0).then_some("keylog.txt"),
        "pathologies": plan.pathologies,
        "expected": plan.expected,
        "emulator": {
            "config": plan.wan,
            "client_to_server": { "forwarded": c2s.forwarded, "dropped": c2s.dropped, "lateness_us_p50_p99_max": c2s.lateness_us() },
            "server_to_client": { "forwarded": s2c.forwarded, "dropped": s2c.dropped, "lateness_us_p50_p99_max": s2c.lateness_us() },
        },
        "timings": timings,
    });
    std::fs::write(
        opts.out.join("labels.json"),
        serde_json::to_vec_pretty(&labels)?,
    )?;
    Ok(RunResult {
        scenario: name.to_string(),
        dir: opts.out.clone(),
        timings,
        labels,
        warnings,
    })
}

/// Median and 95th percentile (nearest rank) of one timing column, NaNs ignored.
pub fn median_p95(values: &[f64]) -> (f64, f64) {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| !x.is_nan()).collect();
    v.sort_by(|a, b| a.total_cmp(b));
    if v.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    let rank = |p: f64| v[((p * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1];
    (rank(0.5), rank(0.95))
}
