//! Built-in scenario peers, so the lab works with nothing installed. Each is
//! a small blocking program run inside a lab namespace as
//! `rttdoc lab peer KIND ...`; clients print one line per transfer in
//! `curl -w` form (seconds): `connect tls first_byte total`.
//!
//! - `http-server`: HTTP/1.1 keep-alive; writes the response header and body
//!   with one write or two (`--split`), or streams the body in timed pieces
//!   (`--chunks N --chunk-ms M`), Nagle on or off, optional TFO; a listen
//!   backlog of its own (`--backlog N`), and one connection at a time with
//!   `--serial-ms M` of work before each answer (a single worker, whose
//!   accept queue fills when connections come faster); with
//!   `--restart-on-request` it closes its listener when a connection's
//!   request comes and opens it again once that connection is done (a
//!   server restarting: handshakes it had answered are left without a
//!   listener).
//! - `http-client`: N requests on one connection, optional pause between
//!   them, optional TFO (request in the SYN), optional small receive buffer
//!   and slow reading (a zero window); `--parallel N` connections at once
//!   (0.3 ms apart); from a fixed port (`--local-port P`), a second
//!   connection from the same port after the first, which the client
//!   closed or forgot (`--again close|forget`: a host that restarted
//!   sends nothing, as a socket closed in TCP_REPAIR mode does); with
//!   `--overlap`, a second connection's SYN sent before the first's
//!   request, its own request once the first is answered (a reset of the
//!   second is what the scenario waits for, not a failure); with
//!   `--stream-to ADDR` (repeatable), an upload streamed to each ADDR
//!   while its requests run: a chunked POST, `--piece` bytes every
//!   `--piece-ms`, opened one after another before the requests and ended
//!   after them (a voice assistant streaming audio beside its other
//!   calls). The HTTP server reads chunked request bodies.
//! - `rpc-server` / `rpc-client`: an SFTP-like upload: each block is a
//!   96-byte header write and a 656-byte body write, then the client waits
//!   for a 4-byte status (seed case 3: Nagle on the writer, delayed ACK on the
//!   reader, one stall per block).

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd};
use std::time::{Duration, Instant};

fn set_int_opt(fd: i32, level: i32, name: i32, value: i32) -> io::Result<()> {
    // SAFETY: setsockopt with a pointer to a live i32 and its size.
    let r = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            (&value as *const i32).cast(),
            std::mem::size_of::<i32>() as u32,
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Reads `--flag value` pairs, shared by the peers' option parsers.
pub(crate) struct Flags<'a> {
    it: std::slice::Iter<'a, String>,
}

impl<'a> Flags<'a> {
    pub(crate) fn new(args: &'a [String]) -> Self {
        Flags { it: args.iter() }
    }

    pub(crate) fn next_flag(&mut self) -> Option<&'a str> {
        self.it.next().map(String::as_str)
    }

    pub(crate) fn value(&mut self, flag: &str) -> Result<String, String> {
        self.it
            .next()
            .cloned()
            .ok_or_else(|| format!("{flag} needs a value"))
    }

    pub(crate) fn num(&mut self, flag: &str) -> Result<u64, String> {
        let v = self.value(flag)?;
        v.parse().map_err(|_| format!("{flag}: not a number: {v}"))
    }

    pub(crate) fn addr(&mut self, flag: &str) -> Result<SocketAddr, String> {
        self.value(flag)?
            .parse()
            .map_err(|e| format!("{flag}: {e}"))
    }
}

/// Options shared by the peers, parsed from `--name value` pairs.
#[derive(Debug, Clone, Default)]
pub struct PeerArgs {
    pub listen: Option<SocketAddr>,
    pub connect: Option<SocketAddr>,
    /// TCP_NODELAY on servers and on the RPC uploader; the HTTP client uses
    /// TCP_NODELAY like curl unless `--nagle`.
    pub nodelay: bool,
    pub nagle: bool,
    pub split: bool,
    pub tfo: bool,
    pub requests: u32,
    pub pause_ms: u64,
    pub body: usize,
    pub blocks: u32,
    pub rcvbuf: Option<i32>,
    pub read_delay_ms: u64,
    /// The HTTP server streams its body in this many writes ...
    pub chunks: u32,
    /// ... this far apart (a backend producing its answer as it goes).
    pub chunk_ms: u64,
    /// The server's listen backlog (Linux keeps this many plus one
    /// finished connections waiting for accept()).
    pub backlog: Option<i32>,
    /// The server serves one connection at a time, working this long
    /// before each answer.
    pub serial_ms: u64,
    /// The client opens this many connections, 0.3 ms apart.
    pub parallel: u32,
    /// The client binds this local port (SO_REUSEADDR).
    pub local_port: Option<u16>,
    /// The client opens a second connection after the first, which it
    /// ended as this says.
    pub again: Option<Again>,
    /// The server closes its listener when a connection's request comes
    /// and opens it again when that connection is done.
    pub restart_on_request: bool,
    /// The client sends a second connection's SYN before its first
    /// connection's request, and its request after the first's answer.
    pub overlap: bool,
    /// The client streams an upload to each of these while its requests
    /// run.
    pub stream_to: Vec<SocketAddr>,
    /// The streamed upload's pieces: this many bytes ...
    pub piece: usize,
    /// ... this often.
    pub piece_ms: u64,
}

/// How the HTTP client ends its first connection before it opens the
/// next from the same port (`--again`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Again {
    /// Shuts down its side, reads to the server's FIN, closes: the server
    /// keeps nothing of it.
    Close,
    /// Closes it in TCP_REPAIR mode: the kernel sends nothing, no FIN, no
    /// RST (a host that restarted, a NAT that forgot its mapping); the
    /// server still holds the connection.
    Forget,
}

impl PeerArgs {
    pub fn parse(args: &[String]) -> Result<PeerArgs, String> {
        let mut p = PeerArgs {
            requests: 1,
            body: 3000,
            blocks: 50,
            piece: 1000,
            piece_ms: 10,
            ..Default::default()
        };
        let mut flags = Flags::new(args);
        while let Some(a) = flags.next_flag() {
            match a {
                "--listen" => p.listen = Some(flags.addr(a)?),
                "--connect" => p.connect = Some(flags.addr(a)?),
                "--nodelay" => p.nodelay = true,
                "--nagle" => p.nagle = true,
                "--split" => p.split = true,
                "--tfo" => p.tfo = true,
                "--requests" => p.requests = flags.num(a)? as u32,
                "--pause-ms" => p.pause_ms = flags.num(a)?,
                "--body" => p.body = flags.num(a)? as usize,
                "--blocks" => p.blocks = flags.num(a)? as u32,
                "--rcvbuf" => p.rcvbuf = Some(flags.num(a)? as i32),
                "--read-delay-ms" => p.read_delay_ms = flags.num(a)?,
                "--chunks" => p.chunks = flags.num(a)? as u32,
                "--chunk-ms" => p.chunk_ms = flags.num(a)?,
                "--backlog" => p.backlog = Some(flags.num(a)? as i32),
                "--serial-ms" => p.serial_ms = flags.num(a)?,
                "--parallel" => p.parallel = flags.num(a)? as u32,
                "--local-port" => p.local_port = Some(flags.num(a)? as u16),
                "--restart-on-request" => p.restart_on_request = true,
                "--overlap" => p.overlap = true,
                "--stream-to" => p.stream_to.push(flags.addr(a)?),
                "--piece" => p.piece = flags.num(a)? as usize,
                "--piece-ms" => p.piece_ms = flags.num(a)?,
                "--again" => {
                    p.again = Some(match flags.value(a)?.as_str() {
                        "close" => Again::Close,
                        "forget" => Again::Forget,
                        v => return Err(format!("--again: close or forget, not {v}")),
                    })
                }
                other => return Err(format!("unknown peer option {other}")),
            }
        }
        Ok(p)
    }
}

/// Runs the peer `kind` until it is done (clients) or killed (servers).
pub fn run(kind: &str, args: &PeerArgs) -> io::Result<()> {
    match kind {
        "http-server" => http_server(args),
        "http-client" => http_client(args),
        "rpc-server" => rpc_server(args),
        "rpc-client" => rpc_client(args),
        other => Err(io::Error::other(format!("unknown peer {other}"))),
    }
}

fn listener(args: &PeerArgs) -> io::Result<TcpListener> {
    let addr = args
        .listen
        .ok_or_else(|| io::Error::other("--listen ADDR:PORT is required"))?;
    let l = TcpListener::bind(addr)?;
    if let Some(backlog) = args.backlog {
        // listen() again on a listening socket sets its backlog (Linux).
        // SAFETY: listen on the listener's own descriptor.
        if unsafe { libc::listen(l.as_raw_fd(), backlog) } < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    if args.tfo {
        set_int_opt(l.as_raw_fd(), libc::IPPROTO_TCP, libc::TCP_FASTOPEN, 256)?;
    }
    Ok(l)
}

fn serve(args: &PeerArgs, handler: fn(TcpStream, &PeerArgs) -> io::Result<()>) -> io::Result<()> {
    if args.restart_on_request {
        return serve_restarting(args, handler);
    }
    let l = listener(args)?;
    for conn in l.incoming() {
        let conn = conn?;
        conn.set_nodelay(args.nodelay)?;
        if args.serial_ms > 0 {
            // One worker: the next connection waits in the accept queue.
            let _ = handler(conn, args);
            continue;
        }
        let a = args.clone();
        std::thread::spawn(move || {
            let _ = handler(conn, &a);
        });
    }
    Ok(())
}

/// One connection at a time, the listener closed when the connection's
/// request comes (a server restarting: the handshakes its listener
/// answered and the clients have not finished yet are left without a
/// socket, and their ACKs get a RST) and opened again once the
/// connection is done.
fn serve_restarting(
    args: &PeerArgs,
    handler: fn(TcpStream, &PeerArgs) -> io::Result<()>,
) -> io::Result<()> {
    loop {
        let l = listener(args)?;
        let (conn, _) = l.accept()?;
        conn.set_nodelay(args.nodelay)?;
        // Wait for the request's first byte, then close.
        if conn.peek(&mut [0u8; 1])? == 0 {
            continue;
        }
        drop(l);
        let _ = handler(conn, args);
    }
}

fn http_server(args: &PeerArgs) -> io::Result<()> {
    serve(args, |conn, args| {
        let mut reader = BufReader::new(conn.try_clone()?);
        let mut out = conn;
        let body = vec![b'x'; args.body];
        loop {
            // Read one request head, then its body (Content-Length). An
            // `Expect: 100-continue` is not answered: as an HTTP/1.0 server
            // (and many small ones) does not, the client waits for its own
            // timer before sending the body (`expect-builtin`).
            let mut line = String::new();
            let mut body_len = 0usize;
            let mut chunked = false;
            loop {
                line.clear();
                if reader.read_line(&mut line)? == 0 {
                    return Ok(());
                }
                if line == "\r\n" || line == "\n" {
                    break;
                }
                if let Some((name, value)) = line.split_once(':') {
                    if name.eq_ignore_ascii_case("content-length") {
                        body_len = value.trim().parse().unwrap_or(0);
                    }
                    if name.eq_ignore_ascii_case("transfer-encoding") {
                        chunked = value.trim().eq_ignore_ascii_case("chunked");
                    }
                }
            }
            if chunked {
                read_chunked_body(&mut reader)?;
            } else {
                std::io::copy(
                    &mut (&mut reader).take(body_len as u64),
                    &mut std::io::sink(),
                )?;
            }
            std::thread::sleep(Duration::from_millis(args.serial_ms));
            let head = response_head(body.len());
            if args.chunks > 1 {
                // A streaming backend (server-sent events, tokens): the
                // length is unknown up front, so chunked encoding; the head
                // at once, then each piece as it is produced.
                out.write_all(
                    b"HTTP/1.1 200 OK\r\nServer: rttdoc-lab\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n",
                )?;
                let piece = body.len().div_ceil(args.chunks as usize).max(1);
                for part in body.chunks(piece) {
                    std::thread::sleep(Duration::from_millis(args.chunk_ms));
                    let mut c = format!("{:x}\r\n", part.len()).into_bytes();
                    c.extend_from_slice(part);
                    c.extend_from_slice(b"\r\n");
                    out.write_all(&c)?;
                }
                out.write_all(b"0\r\n\r\n")?;
            } else if args.split {
                out.write_all(head.as_bytes())?;
                out.write_all(&body)?;
            } else {
                let mut all = head.into_bytes();
                all.extend_from_slice(&body);
                out.write_all(&all)?;
            }
        }
    })
}

/// Reads a chunked body to its last (empty) chunk and the blank line
/// after it (no trailers).
fn read_chunked_body(reader: &mut BufReader<TcpStream>) -> io::Result<()> {
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            return Err(io::Error::other("connection closed mid-body"));
        }
        let size = line.trim().split(';').next().unwrap_or("");
        let size = usize::from_str_radix(size, 16)
            .map_err(|_| io::Error::other(format!("bad chunk size {line:?}")))?;
        // The chunk and its CRLF (the last chunk's CRLF ends the body).
        std::io::copy(&mut reader.take(size as u64 + 2), &mut std::io::sink())?;
        if size == 0 {
            return Ok(());
        }
    }
}

/// Connects, sending `first` in the SYN when TFO is asked for (the kernel
/// falls back to a normal handshake without a cookie).
fn connect(args: &PeerArgs, first: &[u8]) -> io::Result<(TcpStream, bool)> {
    connect_with(args, first, true)
}

/// Like [`connect`]; without `wait`, returns once the SYN is sent (a
/// non-blocking connect: the socket stays non-blocking).
fn connect_with(args: &PeerArgs, first: &[u8], wait: bool) -> io::Result<(TcpStream, bool)> {
    let addr = args
        .connect
        .ok_or_else(|| io::Error::other("--connect ADDR:PORT is required"))?;
    let SocketAddr::V4(v4) = addr else {
        return Err(io::Error::other("IPv4 only"));
    };
    // SAFETY: a fresh socket; ownership moves into TcpStream below.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is ours and valid.
    let stream = unsafe { TcpStream::from_raw_fd(fd) };
    if let Some(size) = args.rcvbuf {
        set_int_opt(fd, libc::SOL_SOCKET, libc::SO_RCVBUF, size)?;
    }
    let sin = libc::sockaddr_in {
        sin_family: libc::AF_INET as u16,
        sin_port: v4.port().to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from_ne_bytes(v4.ip().octets()),
        },
        sin_zero: [0; 8],
    };
    let len = std::mem::size_of::<libc::sockaddr_in>() as u32;
    if let Some(port) = args.local_port {
        set_int_opt(fd, libc::SOL_SOCKET, libc::SO_REUSEADDR, 1)?;
        let local = libc::sockaddr_in {
            sin_family: libc::AF_INET as u16,
            sin_port: port.to_be(),
            sin_addr: libc::in_addr { s_addr: 0 },
            sin_zero: [0; 8],
        };
        // SAFETY: bind with a valid address of `len` bytes.
        if unsafe { libc::bind(fd, (&local as *const libc::sockaddr_in).cast(), len) } < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    if args.tfo {
        // SAFETY: sendto with a valid buffer and address.
        let r = unsafe {
            libc::sendto(
                fd,
                first.as_ptr().cast(),
                first.len(),
                libc::MSG_FASTOPEN,
                (&sin as *const libc::sockaddr_in).cast(),
                len,
            )
        };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut s = stream;
        if (r as usize) < first.len() {
            s.write_all(&first[r as usize..])?;
        }
        return Ok((s, true));
    }
    if !wait {
        stream.set_nonblocking(true)?;
    }
    // SAFETY: connect with a valid address.
    if unsafe { libc::connect(fd, (&sin as *const libc::sockaddr_in).cast(), len) } < 0 {
        let e = io::Error::last_os_error();
        if wait || e.raw_os_error() != Some(libc::EINPROGRESS) {
            return Err(e);
        }
    }
    Ok((stream, false))
}

fn print_timing(connect: Duration, first_byte: Duration, total: Duration) {
    let s = |d: Duration| d.as_secs_f64();
    println!(
        "{:.6} {:.6} {:.6} {:.6}",
        s(connect),
        s(connect),
        s(first_byte),
        s(total)
    );
}

fn http_client(args: &PeerArgs) -> io::Result<()> {
    if args.parallel > 1 {
        let each = PeerArgs {
            parallel: 1,
            ..args.clone()
        };
        let clients: Vec<_> = (0..args.parallel)
            .map(|i| {
                let a = each.clone();
                std::thread::spawn(move || {
                    std::thread::sleep(Duration::from_micros(300 * i as u64));
                    http_client(&a)
                })
            })
            .collect();
        for c in clients {
            c.join()
                .map_err(|_| io::Error::other("a client thread panicked"))??;
        }
        return Ok(());
    }
    if args.overlap {
        return overlapping_connections(args);
    }
    if !args.stream_to.is_empty() {
        return beside_streamed_uploads(args);
    }
    if let Some(again) = args.again {
        let first = http_connection(args)?;
        match again {
            Again::Close => close_and_wait(first)?,
            // Closed in repair mode, the socket goes without a word.
            Again::Forget => {
                set_int_opt(first.as_raw_fd(), libc::IPPROTO_TCP, libc::TCP_REPAIR, 1)?
            }
        }
    }
    let last = http_connection(args)?;
    if args.local_port.is_some() {
        // The next run binds the same port: its 4-tuple must be free, not
        // a socket still waiting for the server's FIN.
        close_and_wait(last)?;
    }
    Ok(())
}

/// Two connections, the second's SYN sent (without waiting for its
/// handshake) before the first's request, its request once the first is
/// answered and closed. A server that restarts when the first request
/// comes (`--restart-on-request`) resets the second: that ends it, as
/// the scenario means it to, and is no failure of the client's.
fn overlapping_connections(args: &PeerArgs) -> io::Result<()> {
    let start = Instant::now();
    let (first, _) = connect(args, &[])?;
    let connected = start.elapsed();
    let (second, _) = connect_with(args, &[], false)?;
    // The second SYN on its way first.
    std::thread::sleep(Duration::from_millis(1));
    // The first connection's times, as curl -w prints them (the second's
    // are not the scenario's: it waits on the first by design).
    let (first_byte, total) = answered(first, args, start)?;
    print_timing(connected, first_byte, total);
    // Its handshake (a round trip from its SYN) is done by now: the
    // first's answer took as long. Waited for at most 5 s.
    let second_answered = move || -> io::Result<()> {
        let mut pfd = libc::pollfd {
            fd: second.as_raw_fd(),
            events: libc::POLLOUT,
            revents: 0,
        };
        // SAFETY: poll on one valid descriptor.
        if unsafe { libc::poll(&mut pfd, 1, 5000) } <= 0 {
            return Err(io::Error::other("the second connection did not open"));
        }
        second.set_nonblocking(false)?;
        if let Some(e) = second.take_error()? {
            return Err(e);
        }
        answered(second, args, Instant::now()).map(|_| ())
    };
    match second_answered() {
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::ConnectionReset | io::ErrorKind::BrokenPipe
            ) =>
        {
            eprintln!("the second connection was reset: {e}");
            Ok(())
        }
        other => other,
    }
}

/// The client's requests with an upload streamed to each `--stream-to`
/// address meanwhile: the uploads' connections opened one after another
/// (their streams come first, in order), then the requests', which is
/// the one timed; the uploads end once its requests are answered.
fn beside_streamed_uploads(args: &PeerArgs) -> io::Result<()> {
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut uploads = Vec::new();
    for to in &args.stream_to {
        let upload = PeerArgs {
            connect: Some(*to),
            tfo: false,
            ..args.clone()
        };
        let (s, _) = connect(&upload, &[])?;
        s.set_nodelay(true)?;
        let done = done.clone();
        uploads.push(std::thread::spawn(move || {
            streamed_upload(s, &upload, &done)
        }));
    }
    let main = PeerArgs {
        stream_to: Vec::new(),
        ..args.clone()
    };
    let requests = http_connection(&main);
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    for u in uploads {
        u.join()
            .map_err(|_| io::Error::other("an upload thread panicked"))??;
    }
    close_and_wait(requests?)
}

/// A chunked POST on `s`, a piece every `--piece-ms` until `done`, then
/// its answer; closes the connection.
fn streamed_upload(
    s: TcpStream,
    args: &PeerArgs,
    done: &std::sync::atomic::AtomicBool,
) -> io::Result<()> {
    let host = host_of(args);
    let mut out = s.try_clone()?;
    out.write_all(
        format!(
            "POST /upload HTTP/1.1\r\nHost: {host}\r\nUser-Agent: rttdoc-lab\r\nTransfer-Encoding: chunked\r\n\r\n"
        )
        .as_bytes(),
    )?;
    let piece = vec![b'a'; args.piece.max(1)];
    let mut chunk = format!("{:x}\r\n", piece.len()).into_bytes();
    chunk.extend_from_slice(&piece);
    chunk.extend_from_slice(b"\r\n");
    let every = Duration::from_millis(args.piece_ms.max(1));
    let mut next = Instant::now();
    while !done.load(std::sync::atomic::Ordering::SeqCst) {
        out.write_all(&chunk)?;
        next += every;
        std::thread::sleep(next.saturating_duration_since(Instant::now()));
    }
    out.write_all(b"0\r\n\r\n")?;
    let mut reader = BufReader::new(s);
    read_response(&mut reader, args, Instant::now())?;
    close_and_wait(reader.into_inner())
}

/// One request on the open connection `s` and its answer, read whole;
/// returns when the answer's first byte came and when its last did,
/// from `start`.
fn answered(s: TcpStream, args: &PeerArgs, start: Instant) -> io::Result<(Duration, Duration)> {
    let mut out = s.try_clone()?;
    let mut reader = BufReader::new(s);
    out.write_all(http_request(args).as_bytes())?;
    let first = read_response(&mut reader, args, start)?;
    Ok((first, start.elapsed()))
}

/// The `Host` the built-in client names: the address it connects to.
fn host_of(args: &PeerArgs) -> String {
    args.connect.map(|a| a.ip().to_string()).unwrap_or_default()
}

/// The built-in client's request: `GET /` of the server it connects to.
fn http_request(args: &PeerArgs) -> String {
    let host = host_of(args);
    format!("GET / HTTP/1.1\r\nHost: {host}\r\nUser-Agent: rttdoc-lab\r\n\r\n")
}

/// Reads one response, its head then its Content-Length bytes (each
/// read after `--read-delay-ms`); returns when its first byte came, from
/// `t0`.
fn read_response(
    reader: &mut BufReader<TcpStream>,
    args: &PeerArgs,
    t0: Instant,
) -> io::Result<Duration> {
    let mut len = 0usize;
    let mut line = String::new();
    let mut first = None;
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            return Err(io::Error::other("connection closed mid-response"));
        }
        first.get_or_insert_with(|| t0.elapsed());
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            len = v.trim().parse().unwrap_or(0);
        }
        if line == "\r\n" {
            break;
        }
    }
    let mut left = len;
    let mut buf = vec![0u8; 4096];
    while left > 0 {
        if args.read_delay_ms > 0 {
            std::thread::sleep(Duration::from_millis(args.read_delay_ms));
        }
        let n = reader.read(&mut buf[..left.min(4096)])?;
        if n == 0 {
            return Err(io::Error::other("connection closed mid-body"));
        }
        left -= n;
    }
    Ok(first.unwrap_or_default())
}

/// Shuts down the client's side and reads to the server's FIN: once
/// closed, the server keeps nothing of the connection (and the client's
/// TIME-WAIT only, where the host keeps one).
fn close_and_wait(s: TcpStream) -> io::Result<()> {
    s.shutdown(std::net::Shutdown::Write)?;
    let mut rest = Vec::new();
    (&s).read_to_end(&mut rest)?;
    Ok(())
}

/// One connection of the HTTP client: `requests` requests, each timed;
/// returns the connection, open.
fn http_connection(args: &PeerArgs) -> io::Result<TcpStream> {
    let request = http_request(args);
    let start = Instant::now();
    let (mut s, sent) = connect(args, request.as_bytes())?;
    s.set_nodelay(!args.nagle)?;
    let connected = start.elapsed();
    let mut reader = BufReader::new(s.try_clone()?);
    for i in 0..args.requests {
        // Like curl -w, the first transfer's times count from the start
        // (connect included), later ones from their own start.
        let t0 = if i == 0 { start } else { Instant::now() };
        if i > 0 || !sent {
            s.write_all(request.as_bytes())?;
        }
        let first = read_response(&mut reader, args, t0)?;
        let (c, f, t) = (
            if i == 0 { connected } else { Duration::ZERO },
            first,
            t0.elapsed(),
        );
        print_timing(c, f, t);
        if args.pause_ms > 0 && i + 1 < args.requests {
            std::thread::sleep(Duration::from_millis(args.pause_ms));
        }
    }
    Ok(s)
}

const RPC_HEADER: usize = 96;
const RPC_BODY: usize = 656;

fn rpc_server(args: &PeerArgs) -> io::Result<()> {
    serve(args, |mut conn, _| {
        let mut block = vec![0u8; RPC_HEADER + RPC_BODY];
        loop {
            if conn.read_exact(&mut block).is_err() {
                return Ok(());
            }
            conn.write_all(b"OK\r\n")?;
        }
    })
}

fn rpc_client(args: &PeerArgs) -> io::Result<()> {
    let start = Instant::now();
    let (mut s, _) = connect(
        &PeerArgs {
            tfo: false,
            ..args.clone()
        },
        &[],
    )?;
    s.set_nodelay(args.nodelay)?;
    let connected = start.elapsed();
    let header = [b'h'; RPC_HEADER];
    let body = [b'b'; RPC_BODY];
    let mut status = [0u8; 4];
    let mut first = None;
    for _ in 0..args.blocks {
        // Two writes per block, then wait for the status: the SFTP pattern.
        s.write_all(&header)?;
        s.write_all(&body)?;
        s.read_exact(&mut status)?;
        first.get_or_insert_with(|| start.elapsed());
    }
    print_timing(connected, first.unwrap_or_default(), start.elapsed());
    Ok(())
}

/// The HTTP server peer's response head (the lab's ground truth needs its
/// length to know where each body starts in the byte stream).
pub fn response_head(body_len: usize) -> String {
    format!(
        "HTTP/1.1 200 OK\r\nServer: rttdoc-lab\r\nContent-Type: application/octet-stream\r\nContent-Length: {body_len}\r\n\r\n"
    )
}
