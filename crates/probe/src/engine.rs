//! One request: resolve, connect (TFO on demand), TLS, HTTP/1.1 or
//! HTTP/2 (when asked for and the server's ALPN chooses `h2`), with the
//! instants curl reports, the kernel's TCP_INFO and, where allowed, the
//! connection's own packets.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls::ClientConnection;
use serde::Serialize;

use crate::h2;
use crate::http::Response;
use crate::selfcap::{self, Flow, Packet};
use crate::target::{self, ConnectTo, Family, Resolve, Url};
use crate::tcpinfo::{self, TcpInfo};
use crate::timing::{CurlTimings, Marks};
use crate::tls::{self, MemoryKeyLog, TlsOptions};

/// One configuration to probe (one side of `--compare`).
#[derive(Debug, Clone)]
pub struct Variant {
    /// For tables: "tfo off", "TLS 1.3", the URL ...
    pub label: String,
    pub url: Url,
    pub connect_to: Vec<ConnectTo>,
    pub resolve: Vec<Resolve>,
    pub family: Family,
    /// TCP Fast Open (TCP_FASTOPEN_CONNECT).
    pub tfo: bool,
    pub tls: TlsOptions,
    pub method: String,
    pub body: Option<Vec<u8>>,
    pub headers: Vec<String>,
    /// Allow a non-idempotent request in 0-RTT early data.
    pub early_data_unsafe: bool,
    pub timeout: Duration,
    /// Speak HTTP/2 when the server's ALPN chooses `h2` (`--http2`; the
    /// TLS options then offer `h2, http/1.1`, as curl's do).
    pub http2: bool,
}

/// Methods that may ride in 0-RTT early data: safe ones (RFC 8470
/// section 4: a replayed early request must do no harm).
pub fn replay_safe(method: &str) -> bool {
    matches!(
        method.to_ascii_uppercase().as_str(),
        "GET" | "HEAD" | "OPTIONS"
    )
}

/// The TLS session as the client saw it.
#[derive(Debug, Clone, Default, Serialize)]
pub struct TlsSeen {
    pub version: Option<String>,
    pub cipher: Option<String>,
    /// Key-exchange group of the handshake.
    pub group: Option<String>,
    pub alpn: Option<String>,
    /// `full`, `full_with_hello_retry_request` or `resumed`.
    pub handshake: Option<&'static str>,
    pub hello_retry_request: bool,
    /// Bytes of the client's first flight (the ClientHello record, and
    /// early data if any).
    pub client_hello_bytes: usize,
    /// 0-RTT: whether early data was sent, and taken.
    pub early_data_sent: bool,
    pub early_data_accepted: Option<bool>,
    /// Why early data was not sent although asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub early_data_withheld: Option<String>,
}

/// What one request measured, before the capture's analysis.
#[derive(Debug, Clone, Serialize)]
pub struct Measured {
    pub local: Option<SocketAddr>,
    pub remote: Option<SocketAddr>,
    pub timings: CurlTimings,
    pub status: Option<u16>,
    pub http_version: Option<String>,
    /// curl's `%{redirect_url}`: where a redirect (301, 302, 303, 307,
    /// 308 with a `Location`) sends the client, as an absolute URL. Not
    /// followed (curl without `-L`): following it costs the round trip
    /// this answer took again, and another host a new connection.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub redirect_url: Option<String>,
    pub body_bytes: u64,
    pub tls: Option<TlsSeen>,
    /// TCP Fast Open was asked of the kernel for this connection.
    pub tfo_requested: bool,
    pub tcp_info: Option<TcpInfo>,
    pub error: Option<String>,
    /// Why this request has no capture (null when it has one).
    pub capture_unavailable: Option<String>,
    #[serde(skip)]
    pub packets: Vec<Packet>,
    #[serde(skip)]
    pub kernel_drops: u32,
    #[serde(skip)]
    pub not_kept: u64,
}

/// Per configuration, across its requests: the TLS client (and so its
/// session store, for resumption) and the key log.
pub struct Session {
    pub tls: Option<Arc<rustls::ClientConfig>>,
    pub keylog: Arc<MemoryKeyLog>,
}

impl Session {
    pub fn new(v: &Variant) -> Result<Session, String> {
        let keylog = Arc::new(MemoryKeyLog::default());
        let tls = if v.url.https {
            Some(tls::client_config(&v.tls, keylog.clone())?)
        } else {
            None
        };
        Ok(Session { tls, keylog })
    }
}

fn os_err(what: &str) -> io::Error {
    let e = io::Error::last_os_error();
    io::Error::new(e.kind(), format!("{what}: {e}"))
}

fn sockaddr(addr: SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    // SAFETY: sockaddr_storage is plain data, large enough for both.
    let mut ss: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let len = match addr {
        SocketAddr::V4(a) => {
            let sin = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: a.port().to_be(),
                sin_addr: libc::in_addr {
                    s_addr: u32::from_ne_bytes(a.ip().octets()),
                },
                sin_zero: [0; 8],
            };
            // SAFETY: sockaddr_in fits in sockaddr_storage.
            unsafe { std::ptr::write(&mut ss as *mut _ as *mut libc::sockaddr_in, sin) };
            std::mem::size_of::<libc::sockaddr_in>()
        }
        SocketAddr::V6(a) => {
            let sin6 = libc::sockaddr_in6 {
                sin6_family: libc::AF_INET6 as libc::sa_family_t,
                sin6_port: a.port().to_be(),
                sin6_flowinfo: a.flowinfo(),
                sin6_addr: libc::in6_addr {
                    s6_addr: a.ip().octets(),
                },
                sin6_scope_id: a.scope_id(),
            };
            // SAFETY: sockaddr_in6 fits in sockaddr_storage.
            unsafe { std::ptr::write(&mut ss as *mut _ as *mut libc::sockaddr_in6, sin6) };
            std::mem::size_of::<libc::sockaddr_in6>()
        }
    };
    (ss, len as libc::socklen_t)
}

fn local_port(fd: libc::c_int) -> io::Result<u16> {
    // SAFETY: getsockname writes at most `len` bytes into `ss`.
    let mut ss: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    if unsafe { libc::getsockname(fd, &mut ss as *mut _ as *mut libc::sockaddr, &mut len) } != 0 {
        return Err(os_err("getsockname"));
    }
    // sin_port and sin6_port sit at the same offset, after the family.
    let sin = unsafe { &*(&ss as *const _ as *const libc::sockaddr_in) };
    Ok(u16::from_be(sin.sin_port))
}

fn set_int(fd: libc::c_int, level: libc::c_int, name: libc::c_int, v: libc::c_int) -> libc::c_int {
    // SAFETY: an int option.
    unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            &v as *const libc::c_int as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    }
}

/// A TCP socket bound to an ephemeral port (so the capture can filter on
/// it before the SYN leaves), TCP_NODELAY as curl sets it, and
/// TCP_FASTOPEN_CONNECT when asked: connect() then returns at once and
/// the SYN carries the first write (a cookie request the first time).
fn tcp_socket(remote: SocketAddr, tfo: bool) -> io::Result<(TcpStream, u16)> {
    let domain = if remote.is_ipv4() {
        libc::AF_INET
    } else {
        libc::AF_INET6
    };
    // SAFETY: plain socket(2).
    let fd = unsafe { libc::socket(domain, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(os_err("socket"));
    }
    // SAFETY: a fresh descriptor, owned by the stream from here on.
    let stream = unsafe { TcpStream::from_raw_fd(fd) };
    set_int(fd, libc::IPPROTO_TCP, libc::TCP_NODELAY, 1);
    if tfo && set_int(fd, libc::IPPROTO_TCP, libc::TCP_FASTOPEN_CONNECT, 1) != 0 {
        return Err(os_err("TCP_FASTOPEN_CONNECT (kernel 4.11+)"));
    }
    let any = match remote {
        SocketAddr::V4(_) => SocketAddr::from(([0, 0, 0, 0], 0)),
        SocketAddr::V6(_) => SocketAddr::from(([0u16; 8], 0)),
    };
    let (ss, len) = sockaddr(any);
    // SAFETY: a valid address of `len` bytes.
    if unsafe { libc::bind(fd, &ss as *const _ as *const libc::sockaddr, len) } != 0 {
        return Err(os_err("bind"));
    }
    let port = local_port(fd)?;
    Ok((stream, port))
}

/// connect(2) bounded by `timeout`.
fn connect(stream: &TcpStream, remote: SocketAddr, timeout: Duration) -> io::Result<()> {
    let fd = stream.as_raw_fd();
    stream.set_nonblocking(true)?;
    let (ss, len) = sockaddr(remote);
    // SAFETY: a valid address of `len` bytes.
    let rc = unsafe { libc::connect(fd, &ss as *const _ as *const libc::sockaddr, len) };
    if rc != 0 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINPROGRESS) {
            return Err(io::Error::new(
                e.kind(),
                format!("connect to {remote}: {e}"),
            ));
        }
        let mut pfd = libc::pollfd {
            fd,
            events: libc::POLLOUT,
            revents: 0,
        };
        let until = Instant::now() + timeout;
        let n = loop {
            let left = until.saturating_duration_since(Instant::now());
            // SAFETY: one pollfd.
            let n =
                unsafe { libc::poll(&mut pfd, 1, left.as_millis().min(i32::MAX as u128) as i32) };
            if n < 0 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                continue;
            }
            break n;
        };
        if n < 0 {
            return Err(os_err("poll"));
        }
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "connect to {remote}: no answer in {} s",
                    timeout.as_secs_f64()
                ),
            ));
        }
        if let Some(e) = stream.take_error()? {
            return Err(io::Error::new(
                e.kind(),
                format!("connect to {remote}: {e}"),
            ));
        }
    }
    stream.set_nonblocking(false)
}

fn request_bytes(v: &Variant) -> Vec<u8> {
    let mut r = format!(
        "{} {} HTTP/1.1\r\nHost: {}\r\nUser-Agent: rttdoc-probe/{}\r\nAccept: */*\r\n",
        v.method,
        v.url.path,
        v.url.host_header(),
        env!("CARGO_PKG_VERSION")
    );
    for h in &v.headers {
        r.push_str(h.trim_end());
        r.push_str("\r\n");
    }
    if let Some(b) = &v.body {
        r.push_str(&format!("Content-Length: {}\r\n", b.len()));
    }
    r.push_str("\r\n");
    let mut bytes = r.into_bytes();
    if let Some(b) = &v.body {
        bytes.extend_from_slice(b);
    }
    bytes
}

/// Runs one request. `capture`: try to capture its packets.
pub fn run(v: &Variant, session: &Session, capture: bool) -> Measured {
    let start = Instant::now();
    let mut marks = Marks::new(start);
    let mut m = Measured {
        local: None,
        remote: None,
        timings: CurlTimings::default(),
        status: None,
        http_version: None,
        redirect_url: None,
        body_bytes: 0,
        tls: None,
        tfo_requested: v.tfo,
        tcp_info: None,
        error: None,
        capture_unavailable: (!capture).then(|| "not asked for".to_string()),
        packets: Vec::new(),
        kernel_drops: 0,
        not_kept: 0,
    };
    let mut cap = None;
    let result = exchange(v, session, capture, &mut marks, &mut m, &mut cap);
    if let Err(e) = result {
        m.error = Some(e.to_string());
        // As curl: time_total is the time until the failure.
        marks.done.get_or_insert_with(Instant::now);
    }
    m.timings = CurlTimings::from_marks(&marks);
    if let Some(c) = cap {
        match c.finish() {
            Ok(got) => {
                m.packets = got.packets;
                m.kernel_drops = got.kernel_drops;
                m.not_kept = got.not_kept;
            }
            Err(e) => m.capture_unavailable = Some(format!("the capture failed: {e}")),
        }
    }
    m
}

fn exchange(
    v: &Variant,
    session: &Session,
    capture: bool,
    marks: &mut Marks,
    m: &mut Measured,
    cap: &mut Option<selfcap::SelfCapture>,
) -> io::Result<()> {
    let dest = target::destination(&v.url, &v.connect_to, &v.resolve, v.family)
        .map_err(io::Error::other)?;
    if dest.looked_up {
        marks.resolved = Some(Instant::now());
    }
    m.remote = Some(dest.addr);
    let (mut sock, port) = tcp_socket(dest.addr, v.tfo)?;
    let unspecified = match dest.addr {
        SocketAddr::V4(_) => SocketAddr::from(([0, 0, 0, 0], port)),
        SocketAddr::V6(_) => SocketAddr::from(([0u16; 8], port)),
    };
    // Known from here on: a connection that fails is still found in the
    // capture by its port (a refused SYN, SYNs sent again until the
    // timeout).
    m.local = Some(unspecified);
    if capture {
        match selfcap::start(Flow {
            local: unspecified,
            remote: dest.addr,
        }) {
            Ok(c) => *cap = Some(c),
            Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
                m.capture_unavailable = Some(
                    "no CAP_NET_RAW (run as root, or give the binary cap_net_raw): \
                     no packets to analyse"
                        .into(),
                )
            }
            Err(e) => m.capture_unavailable = Some(format!("cannot capture: {e}")),
        }
    }
    let deadline = marks.start + v.timeout;
    connect(&sock, dest.addr, v.timeout)?;
    marks.connected = Some(Instant::now());
    m.local = sock.local_addr().ok().or(m.local);
    let remaining = || {
        deadline
            .saturating_duration_since(Instant::now())
            .max(Duration::from_millis(1))
    };
    sock.set_read_timeout(Some(remaining()))?;
    let request = request_bytes(v);
    let mut response = Response::new(&v.method);
    let mut h2_response: Option<h2::Response> = None;
    match &session.tls {
        None => {
            marks.request_sent = Some(Instant::now());
            sock.write_all(&request)?;
            read_plain(&mut sock, &mut response, marks, &remaining)?;
            m.tcp_info = tcpinfo::read(sock.as_raw_fd());
        }
        Some(config) => {
            let name =
                tls::server_name(&v.url.host, v.tls.sni.as_deref()).map_err(io::Error::other)?;
            let mut conn = ClientConnection::new(config.clone(), name).map_err(io::Error::other)?;
            let mut seen = TlsSeen::default();
            if v.tls.early_data {
                if v.http2 {
                    // Which protocol the early data is in is the resumed
                    // session's ALPN, not known before the server answers.
                    seen.early_data_withheld = Some(
                        "0-RTT is not done with --http2 (the probe's early data is HTTP/1.1)"
                            .into(),
                    );
                } else if !replay_safe(&v.method) && !v.early_data_unsafe {
                    seen.early_data_withheld = Some(format!(
                        "{} is not replay-safe: 0-RTT data can be replayed (give --early-data-unsafe to send it anyway)",
                        v.method
                    ));
                } else if let Some(mut early) = conn.early_data() {
                    if early.bytes_left() >= request.len() {
                        early.write_all(&request)?;
                        seen.early_data_sent = true;
                        marks.request_sent = Some(Instant::now());
                    } else {
                        seen.early_data_withheld =
                            Some("the request is larger than the server's early-data limit".into());
                    }
                } else {
                    seen.early_data_withheld =
                        Some("no resumable session that allows early data (yet)".into());
                }
            }
            let mut held = Vec::new();
            seen.client_hello_bytes = flush(&mut conn, &mut sock, &mut held)?;
            let mut last_read = Instant::now();
            let mut plaintext = Vec::new();
            while conn.is_handshaking() {
                flush(&mut conn, &mut sock, &mut held)?;
                if !conn.is_handshaking() {
                    break;
                }
                sock.set_read_timeout(Some(remaining()))?;
                if conn
                    .read_tls(&mut sock)
                    .map_err(|e| timeout_words(e, "the server's TLS handshake"))?
                    == 0
                {
                    return Err(io::Error::other(
                        "the server closed the connection during the TLS handshake",
                    ));
                }
                last_read = Instant::now();
                conn.process_new_packets().map_err(io::Error::other)?;
            }
            marks.tls_done = Some(Instant::now());
            // An answer to early data may have come with the server's flight.
            drain(&mut conn, &mut plaintext)?;
            seen.version = conn
                .protocol_version()
                .map(|v| format!("{v:?}").replace("TLSv1_", "TLS 1."));
            seen.cipher = conn
                .negotiated_cipher_suite()
                .map(|c| format!("{:?}", c.suite()));
            seen.group = conn
                .negotiated_key_exchange_group()
                .map(|g| format!("{:?}", g.name()).to_ascii_lowercase());
            seen.alpn = conn
                .alpn_protocol()
                .map(|a| String::from_utf8_lossy(a).into_owned());
            let kind = conn.handshake_kind();
            seen.handshake = kind.map(|k| match k {
                rustls::HandshakeKind::Full => "full",
                rustls::HandshakeKind::FullWithHelloRetryRequest => "full_with_hello_retry_request",
                rustls::HandshakeKind::Resumed => "resumed",
            });
            seen.hello_retry_request =
                kind == Some(rustls::HandshakeKind::FullWithHelloRetryRequest);
            if seen.early_data_sent {
                seen.early_data_accepted = Some(conn.is_early_data_accepted());
            }
            let speak_h2 = v.http2 && seen.alpn.as_deref() == Some("h2");
            if !speak_h2 && seen.alpn.as_deref().is_some_and(|a| a != "http/1.1") {
                m.tls = Some(seen);
                return Err(io::Error::other(
                    "the server chose a protocol other than HTTP/1.1 through ALPN \
                     (give --http2 to speak h2)",
                ));
            }
            let in_early = seen.early_data_sent && seen.early_data_accepted == Some(true);
            m.tls = Some(seen);
            if speak_h2 {
                let r = h2::request(
                    &v.method,
                    &v.url.host_header(),
                    &v.url.path,
                    &v.headers,
                    v.body.as_deref(),
                )
                .map_err(io::Error::other)?;
                // As curl's time_pretransfer with h2: the preface and
                // SETTINGS queued, the request about to be.
                conn.writer().write_all(&h2::preface())?;
                marks.request_sent = Some(Instant::now());
                conn.writer().write_all(&r)?;
                h2_response = Some(h2::Response::new());
            } else if !in_early {
                marks.request_sent = Some(Instant::now());
                conn.writer().write_all(&request)?;
            }
            flush(&mut conn, &mut sock, &mut held)?;
            let mut complete = false;
            if !plaintext.is_empty() {
                complete = take(
                    &plaintext,
                    last_read,
                    &mut conn,
                    &mut response,
                    &mut h2_response,
                    marks,
                )?;
                flush(&mut conn, &mut sock, &mut held)?;
            }
            while !complete {
                sock.set_read_timeout(Some(remaining()))?;
                let n = match conn.read_tls(&mut sock) {
                    Ok(n) => n,
                    Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => 0,
                    Err(e) => return Err(timeout_words(e, "the response")),
                };
                let at = Instant::now();
                if n == 0 {
                    // An h2 response ends with END_STREAM, never with the
                    // connection.
                    if h2_response.is_some() || !response.eof() {
                        return Err(io::Error::other(
                            "the connection closed before the response ended",
                        ));
                    }
                    break;
                }
                let state = conn.process_new_packets().map_err(io::Error::other)?;
                plaintext.clear();
                drain(&mut conn, &mut plaintext)?;
                complete = take(
                    &plaintext,
                    at,
                    &mut conn,
                    &mut response,
                    &mut h2_response,
                    marks,
                )?;
                if state.peer_has_closed()
                    && !complete
                    && (h2_response.is_some() || !response.eof())
                {
                    return Err(io::Error::other(
                        "the server closed the TLS session before the response ended",
                    ));
                }
                flush(&mut conn, &mut sock, &mut held)?;
            }
            marks.done = Some(Instant::now());
            m.tcp_info = tcpinfo::read(sock.as_raw_fd());
            conn.send_close_notify();
            let _ = flush(&mut conn, &mut sock, &mut held);
            // Session tickets can come after the response (a 0-RTT answer
            // leaves before the handshake ends): read them on the way out.
            close_gracefully(&sock, m.tcp_info.as_ref(), Some(&mut conn));
        }
    }
    if marks.done.is_none() {
        marks.done = Some(Instant::now());
        m.tcp_info = tcpinfo::read(sock.as_raw_fd());
    }
    // With TFO the address is chosen only when the SYN leaves.
    if let Ok(l) = sock.local_addr() {
        m.local = Some(l);
    }
    let location = match &h2_response {
        Some(r) => {
            m.status = r.status;
            m.http_version = Some("HTTP/2".into());
            m.body_bytes = r.body_bytes;
            r.location.as_deref()
        }
        None => {
            m.status = response.status;
            m.http_version = response.version.clone();
            m.body_bytes = response.body_bytes;
            response.location.as_deref()
        }
    };
    if m.status.is_some_and(rttdoc_analyze::is_redirect_status) {
        m.redirect_url = location.and_then(|l| v.url.join(l));
    }
    if session.tls.is_none() {
        close_gracefully(&sock, m.tcp_info.as_ref(), None);
    }
    // The last ACK of the close passes the tap a moment after it is sent.
    std::thread::sleep(Duration::from_millis(2));
    Ok(())
}

/// Takes response plaintext read at `at`: marks the response's first
/// byte (for h2 the first byte of its HEADERS frame, not the server's
/// SETTINGS before it) and queues the frames h2 must answer. Returns
/// whether the response is complete.
fn take(
    plaintext: &[u8],
    at: Instant,
    conn: &mut ClientConnection,
    response: &mut Response,
    h2_response: &mut Option<h2::Response>,
    marks: &mut Marks,
) -> io::Result<bool> {
    match h2_response {
        Some(r) => {
            let reply = r.push(plaintext, at).map_err(io::Error::other)?;
            if !reply.is_empty() {
                conn.writer().write_all(&reply)?;
            }
            marks.first_byte = r.headers_at;
            Ok(r.complete)
        }
        None => {
            if !plaintext.is_empty() {
                marks.first_byte.get_or_insert(at);
            }
            Ok(response.push(plaintext))
        }
    }
}

/// TLS 1.3's dummy ChangeCipherSpec record ("middlebox compatibility").
const FAKE_CCS: [u8; 6] = [0x14, 0x03, 0x03, 0x00, 0x01, 0x01];

/// Writes what the TLS client has to send, in one write. rustls sends
/// TLS 1.3's dummy ChangeCipherSpec alone, as soon as it has read the
/// ServerHello, in the middle of the server's flight; OpenSSL (curl) and
/// browsers send it with their Finished. It is held until then, so that
/// the probe's packets are those of the clients it stands for (and the
/// server's flight is not answered mid-way by client data, which would
/// blur what released a held segment). Returns the bytes written.
fn flush(
    conn: &mut ClientConnection,
    sock: &mut TcpStream,
    held: &mut Vec<u8>,
) -> io::Result<usize> {
    let mut out = std::mem::take(held);
    while conn.wants_write() {
        conn.write_tls(&mut out)?;
    }
    if conn.is_handshaking() && out == FAKE_CCS {
        *held = out;
        return Ok(0);
    }
    sock.write_all(&out)?;
    Ok(out.len())
}

fn timeout_words(e: io::Error, what: &str) -> io::Error {
    if matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    ) {
        io::Error::new(
            io::ErrorKind::TimedOut,
            format!("timed out waiting for {what}"),
        )
    } else {
        e
    }
}

fn drain(conn: &mut ClientConnection, out: &mut Vec<u8>) -> io::Result<()> {
    let mut buf = [0u8; 16384];
    loop {
        match conn.reader().read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(()),
            Err(e) => return Err(e),
        }
    }
}

fn read_plain(
    sock: &mut TcpStream,
    response: &mut Response,
    marks: &mut Marks,
    remaining: &dyn Fn() -> Duration,
) -> io::Result<()> {
    let mut buf = vec![0u8; 65536];
    while !response.complete {
        sock.set_read_timeout(Some(remaining()))?;
        let n = sock
            .read(&mut buf)
            .map_err(|e| timeout_words(e, "the response"))?;
        if n == 0 {
            if !response.eof() {
                return Err(io::Error::other(
                    "the connection closed before the response ended",
                ));
            }
            break;
        }
        marks.first_byte.get_or_insert_with(Instant::now);
        response.push(&buf[..n]);
    }
    marks.done = Some(Instant::now());
    Ok(())
}

/// Sends our FIN and waits (a bounded while) for the server's, so the
/// capture holds the whole connection and the port is not left in a
/// half-closed state the next request could trip over.
fn close_gracefully(
    sock: &TcpStream,
    info: Option<&TcpInfo>,
    mut tls: Option<&mut ClientConnection>,
) {
    let rtt = info.map_or(100.0, |i| i.srtt_ms.max(1.0));
    let wait = Duration::from_secs_f64(((2.0 * rtt + 50.0) / 1000.0).min(1.0));
    let _ = sock.shutdown(std::net::Shutdown::Write);
    let _ = sock.set_read_timeout(Some(wait));
    let until = Instant::now() + wait;
    let mut buf = [0u8; 4096];
    let mut s = sock;
    while Instant::now() < until {
        match tls.as_deref_mut() {
            Some(conn) => match conn.read_tls(&mut s) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if conn.process_new_packets().is_err() {
                        break;
                    }
                    // Plaintext after the response (none expected) is dropped.
                    let mut rest = Vec::new();
                    let _ = drain(conn, &mut rest);
                }
            },
            None => match s.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_safe_methods_ride_in_early_data() {
        assert!(replay_safe("GET") && replay_safe("head") && replay_safe("OPTIONS"));
        assert!(!replay_safe("POST") && !replay_safe("PUT") && !replay_safe("DELETE"));
    }

    #[test]
    fn request_has_host_header_and_body_length() {
        let v = Variant {
            label: String::new(),
            url: Url::parse("http://[::1]:8080/x?y").unwrap(),
            connect_to: vec![],
            resolve: vec![],
            family: Family::Any,
            tfo: false,
            tls: TlsOptions::default(),
            method: "POST".into(),
            body: Some(b"abc".to_vec()),
            headers: vec!["X-Probe: 1".into()],
            early_data_unsafe: false,
            timeout: Duration::from_secs(1),
            http2: false,
        };
        let r = String::from_utf8(request_bytes(&v)).unwrap();
        assert!(
            r.starts_with("POST /x?y HTTP/1.1\r\nHost: [::1]:8080\r\n"),
            "{r}"
        );
        assert!(
            r.contains("\r\nX-Probe: 1\r\nContent-Length: 3\r\n\r\nabc"),
            "{r}"
        );
    }
}
