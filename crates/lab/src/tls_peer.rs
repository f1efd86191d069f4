//! Built-in TLS peers (rustls, ring provider; the server also has
//! aws-lc-rs's X25519MLKEM768), for the TLS scenarios with
//! nothing installed. The server speaks HTTP/1.1 over TLS 1.3 or 1.2 and
//! can: keep Nagle on, write its first flight the way OpenSSL does (4096
//! bytes, then the rest), present a certificate chain of a chosen size,
//! think before its ServerHello, force a HelloRetryRequest, hand out session
//! tickets and accept 0-RTT early data. The client makes N connections in
//! one process (so the later ones can resume and send early data) and prints
//! `curl -w` style timing lines.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{ring as provider, CryptoProvider};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName, UnixTime};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use rustls::{
    ClientConfig, ClientConnection, DigitallySignedStruct, ServerConfig, ServerConnection,
    SignatureScheme,
};

/// Options for the TLS peers, parsed from `--name value` pairs.
#[derive(Debug, Clone)]
pub struct TlsArgs {
    pub listen: Option<SocketAddr>,
    pub connect: Option<SocketAddr>,
    pub tls12: bool,
    /// TCP_NODELAY. Servers default to Nagle (`--nodelay` to turn it off),
    /// clients to TCP_NODELAY like curl (`--nagle` to turn it on).
    pub nodelay: bool,
    pub nagle: bool,
    /// Write the first flight as this many bytes, then the rest (OpenSSL: 4096).
    pub first_write: Option<usize>,
    /// Certificate chain length (CA certificates + leaf).
    pub chain: usize,
    /// Pad the leaf with subject alternative names up to about this size.
    pub leaf_bytes: usize,
    pub think_ms: u64,
    /// Offer only secp384r1: a client that sent an x25519 share gets a HRR.
    pub hrr: bool,
    pub tickets: usize,
    pub early_data: bool,
    /// Response header and body as two records and two writes.
    pub split: bool,
    pub body: usize,
    pub connections: u32,
    pub requests: u32,
    /// The client's request method (POST: not idempotent).
    pub method: String,
}

impl TlsArgs {
    pub fn parse(args: &[String]) -> Result<TlsArgs, String> {
        let mut t = TlsArgs {
            listen: None,
            connect: None,
            tls12: false,
            nodelay: false,
            nagle: false,
            first_write: None,
            chain: 1,
            leaf_bytes: 0,
            think_ms: 0,
            hrr: false,
            tickets: 0,
            early_data: false,
            split: false,
            body: 100,
            connections: 1,
            requests: 1,
            method: "GET".into(),
        };
        let mut flags = crate::peer::Flags::new(args);
        while let Some(a) = flags.next_flag() {
            match a {
                "--listen" => t.listen = Some(flags.addr(a)?),
                "--connect" => t.connect = Some(flags.addr(a)?),
                "--tls12" => t.tls12 = true,
                "--nodelay" => t.nodelay = true,
                "--nagle" => t.nagle = true,
                "--first-write" => t.first_write = Some(flags.num(a)? as usize),
                "--chain" => t.chain = flags.num(a)?.max(1) as usize,
                "--leaf-bytes" => t.leaf_bytes = flags.num(a)? as usize,
                "--think-ms" => t.think_ms = flags.num(a)?,
                "--hrr" => t.hrr = true,
                "--tickets" => t.tickets = flags.num(a)? as usize,
                "--early-data" => t.early_data = true,
                "--split" => t.split = true,
                "--body" => t.body = flags.num(a)? as usize,
                "--connections" => t.connections = flags.num(a)? as u32,
                "--requests" => t.requests = flags.num(a)? as u32,
                "--method" => t.method = flags.value(a)?,
                other => return Err(format!("unknown TLS peer option {other}")),
            }
        }
        Ok(t)
    }
}

fn tls_err(e: impl std::fmt::Display) -> io::Error {
    io::Error::other(e.to_string())
}

static ONLY_TLS12: [&rustls::SupportedProtocolVersion; 1] = [&rustls::version::TLS12];
static ONLY_TLS13: [&rustls::SupportedProtocolVersion; 1] = [&rustls::version::TLS13];

fn versions(tls12: bool) -> &'static [&'static rustls::SupportedProtocolVersion] {
    if tls12 {
        &ONLY_TLS12
    } else {
        &ONLY_TLS13
    }
}

/// A chain of `len` certificates (CAs, then the leaf, ECDSA P-256), the leaf
/// padded with names to about `leaf_bytes`; returned leaf first.
fn make_chain(
    len: usize,
    leaf_bytes: usize,
) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>), rcgen::Error> {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};
    let mut issuer: Option<(rcgen::Certificate, KeyPair)> = None;
    let mut cas = Vec::new();
    for i in 0..len - 1 {
        let key = KeyPair::generate()?;
        let mut params = CertificateParams::new(Vec::<String>::new())?;
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, format!("rttdoc lab CA {i}"));
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let cert = match &issuer {
            Some((ic, ik)) => params.signed_by(&key, ic, ik)?,
            None => params.self_signed(&key)?,
        };
        cas.push(cert.der().clone());
        issuer = Some((cert, key));
    }
    let mut names = vec![crate::SERVER_IP.to_string(), "lab.rttdoc.test".to_string()];
    // Each name adds about 25 bytes of DER.
    for i in 0..leaf_bytes / 25 {
        names.push(format!("host{i:05}.lab.rttdoc.test"));
    }
    let key = KeyPair::generate()?;
    let params = CertificateParams::new(names)?;
    let leaf = match &issuer {
        Some((ic, ik)) => params.signed_by(&key, ic, ik)?,
        None => params.self_signed(&key)?,
    };
    let mut chain = vec![leaf.der().clone()];
    chain.extend(cas.into_iter().rev());
    Ok((
        chain,
        PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
    ))
}

/// Hands out the certificate, after thinking: the resolver runs while the
/// ClientHello is processed, before the ServerHello exists.
#[derive(Debug)]
struct Thinking {
    key: Arc<CertifiedKey>,
    think: Duration,
}

impl ResolvesServerCert for Thinking {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        std::thread::sleep(self.think);
        Some(self.key.clone())
    }
}

fn crypto(hrr: bool) -> Arc<CryptoProvider> {
    let mut p = provider::default_provider();
    if hrr {
        p.kx_groups = vec![provider::kx_group::SECP384R1];
    } else {
        // The post-quantum hybrid too (aws-lc-rs's: ring has no ML-KEM),
        // so a client can compare it with x25519. rustls's server follows
        // the client's group order, so a client that does not offer it
        // sees no change.
        let pq = rustls::crypto::aws_lc_rs::kx_group::X25519MLKEM768;
        p.kx_groups.push(pq);
        // aws-lc seeds its random generator on first use (about 0.1 s):
        // paid now, not as think time in the first such handshake.
        let _ = pq.start();
    }
    Arc::new(p)
}

fn server_config(a: &TlsArgs) -> io::Result<Arc<ServerConfig>> {
    let (chain, key) = make_chain(a.chain, a.leaf_bytes).map_err(tls_err)?;
    let provider = crypto(a.hrr);
    let signing = provider
        .key_provider
        .load_private_key(key)
        .map_err(tls_err)?;
    let certified = Arc::new(CertifiedKey::new(chain, signing));
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(versions(a.tls12))
        .map_err(tls_err)?
        .with_no_client_auth()
        .with_cert_resolver(Arc::new(Thinking {
            key: certified,
            think: Duration::from_millis(a.think_ms),
        }));
    config.send_tls13_tickets = a.tickets;
    // rustls allows 0-RTT only with stateful resumption (its session cache);
    // otherwise tickets are stateless (encrypted by a ticketer).
    if a.tickets > 0 && !a.early_data {
        config.ticketer = provider::Ticketer::new().map_err(tls_err)?;
    }
    if a.early_data {
        config.max_early_data_size = 16384;
        // Answer a 0-RTT request at once, before the client's Finished.
        config.send_half_rtt_data = true;
    }
    Ok(Arc::new(config))
}

/// Appends all the plaintext rustls has decrypted so far to `into`.
fn drain_plaintext<D>(
    conn: &mut rustls::ConnectionCommon<D>,
    into: &mut Vec<u8>,
) -> io::Result<()> {
    let mut buf = [0u8; 8192];
    loop {
        match conn.reader().read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => into.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
            Err(e) => return Err(e),
        }
    }
}

/// Sends everything rustls has queued; the first flight can be cut where
/// OpenSSL cuts it, as two separate writes.
fn flush<D>(
    conn: &mut rustls::ConnectionCommon<D>,
    sock: &mut TcpStream,
    cut: &mut Option<usize>,
) -> io::Result<()> {
    let mut out = Vec::new();
    while conn.wants_write() {
        conn.write_tls(&mut out)?;
    }
    if out.is_empty() {
        return Ok(());
    }
    match cut.take() {
        Some(n) if out.len() > n => {
            sock.write_all(&out[..n])?;
            sock.write_all(&out[n..])?;
        }
        _ => sock.write_all(&out)?,
    }
    Ok(())
}

pub fn server(a: &TlsArgs) -> io::Result<()> {
    let addr = a
        .listen
        .ok_or_else(|| io::Error::other("--listen ADDR:PORT is required"))?;
    let config = server_config(a)?;
    let listener = TcpListener::bind(addr)?;
    for sock in listener.incoming() {
        let sock = sock?;
        sock.set_nodelay(a.nodelay)?;
        let (config, a) = (config.clone(), a.clone());
        std::thread::spawn(move || {
            let _ = serve(sock, config, &a);
        });
    }
    Ok(())
}

fn serve(mut sock: TcpStream, config: Arc<ServerConfig>, a: &TlsArgs) -> io::Result<()> {
    let mut conn = ServerConnection::new(config).map_err(tls_err)?;
    let mut cut = a.first_write;
    let mut pending = Vec::new();
    let body = vec![b'x'; a.body];
    loop {
        if conn.read_tls(&mut sock)? == 0 {
            return Ok(());
        }
        conn.process_new_packets().map_err(tls_err)?;
        if let Some(mut early) = conn.early_data() {
            early.read_to_end(&mut pending)?;
        }
        flush(&mut conn, &mut sock, &mut cut)?;
        if conn.is_handshaking() && pending.is_empty() {
            continue;
        }
        drain_plaintext(&mut conn, &mut pending)?;
        // Answer every complete request head.
        while let Some(end) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
            pending.drain(..end + 4);
            let head = format!(
                "HTTP/1.1 200 OK\r\nServer: rttdoc-lab-tls\r\nContent-Length: {}\r\n\r\n",
                body.len()
            );
            conn.writer().write_all(head.as_bytes())?;
            if a.split {
                flush(&mut conn, &mut sock, &mut None)?;
            }
            conn.writer().write_all(&body)?;
            flush(&mut conn, &mut sock, &mut None)?;
        }
    }
}

/// A verifier that accepts any server certificate (`-k`: lab peers and
/// `rttdoc probe -k` talk to self-signed servers), still checking the
/// handshake's signatures with the provider's algorithms.
#[derive(Debug)]
pub struct AcceptAnyCertificate(pub Arc<CryptoProvider>);

impl ServerCertVerifier for AcceptAnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }
    fn verify_tls12_signature(
        &self,
        m: &[u8],
        c: &CertificateDer<'_>,
        d: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(m, c, d, &self.0.signature_verification_algorithms)
    }
    fn verify_tls13_signature(
        &self,
        m: &[u8],
        c: &CertificateDer<'_>,
        d: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(m, c, d, &self.0.signature_verification_algorithms)
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

pub fn client(a: &TlsArgs) -> io::Result<()> {
    let addr = a
        .connect
        .ok_or_else(|| io::Error::other("--connect ADDR:PORT is required"))?;
    let provider = Arc::new(provider::default_provider());
    let mut config = ClientConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(versions(a.tls12))
        .map_err(tls_err)?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(AcceptAnyCertificate(provider)))
        .with_no_client_auth();
    config.enable_early_data = a.early_data;
    // Writes the session secrets where SSLKEYLOGFILE says (the lab sets it).
    config.key_log = Arc::new(rustls::KeyLogFile::new());
    let config = Arc::new(config);
    let request = if a.method == "GET" {
        format!("GET / HTTP/1.1\r\nHost: {}\r\n\r\n", addr.ip())
    } else {
        format!(
            "{} /transfer HTTP/1.1\r\nHost: {}\r\nContent-Length: 0\r\n\r\n",
            a.method,
            addr.ip()
        )
    };
    for _ in 0..a.connections {
        let start = Instant::now();
        let mut sock = TcpStream::connect(addr)?;
        sock.set_nodelay(!a.nagle)?;
        let connected = start.elapsed();
        let name = ServerName::IpAddress(addr.ip().into());
        let mut conn = ClientConnection::new(config.clone(), name).map_err(tls_err)?;
        let mut sent_early = false;
        if let Some(mut early) = conn.early_data() {
            early.write_all(request.as_bytes())?;
            sent_early = true;
        }
        while conn.is_handshaking() {
            flush(&mut conn, &mut sock, &mut None)?;
            if conn.read_tls(&mut sock)? == 0 {
                return Err(io::Error::other("closed during the handshake"));
            }
            conn.process_new_packets().map_err(tls_err)?;
        }
        let tls_done = start.elapsed();
        if std::env::var_os("RTTDOC_PEER_DEBUG").is_some() {
            eprintln!(
                "early data sent {sent_early}, accepted {}",
                conn.is_early_data_accepted()
            );
        }
        // The Finished goes out with the request, as in browsers and curl.
        for i in 0..a.requests {
            let t0 = if i == 0 { start } else { Instant::now() };
            if i > 0 || !(sent_early && conn.is_early_data_accepted()) {
                conn.writer().write_all(request.as_bytes())?;
            }
            flush(&mut conn, &mut sock, &mut None)?;
            let (first, total) = read_response(&mut conn, &mut sock, t0)?;
            let s = |d: Duration| d.as_secs_f64();
            let (c, t) = if i == 0 {
                (connected, tls_done)
            } else {
                (Duration::ZERO, Duration::ZERO)
            };
            println!("{:.6} {:.6} {:.6} {:.6}", s(c), s(t), s(first), s(total));
        }
        conn.send_close_notify();
        flush(&mut conn, &mut sock, &mut None)?;
    }
    Ok(())
}

fn read_response(
    conn: &mut ClientConnection,
    sock: &mut TcpStream,
    t0: Instant,
) -> io::Result<(Duration, Duration)> {
    let mut data = Vec::new();
    let mut first = None;
    loop {
        // Drain what rustls already holds first: a 0-RTT answer arrives
        // with the server's flight, before the handshake loop ends.
        let before = data.len();
        drain_plaintext(conn, &mut data)?;
        if data.len() > before {
            first.get_or_insert_with(|| t0.elapsed());
        }
        if let Some(end) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&data[..end]).to_ascii_lowercase();
            let len: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0);
            if data.len() >= end + 4 + len {
                return Ok((first.unwrap_or_default(), t0.elapsed()));
            }
        }
        if conn.read_tls(sock)? == 0 {
            return Err(io::Error::other("closed mid-response"));
        }
        conn.process_new_packets().map_err(tls_err)?;
    }
}
