//! The probe's TLS client (rustls with the ring provider), configured on
//! purpose: versions, key-share groups, ALPN, session resumption with a
//! ticket store shared by the requests of one configuration, 0-RTT.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rustls::client::Resumption;
use rustls::crypto::ring as provider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{ClientConfig, RootCertStore};

/// TLS versions to offer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Versions {
    /// TLS 1.2 and 1.3 (the server picks).
    #[default]
    Both,
    Tls12,
    Tls13,
}

/// How the TLS client is set up for one configuration.
#[derive(Debug, Clone, Default)]
pub struct TlsOptions {
    pub versions: Versions,
    /// Key-share groups in preference order (`x25519`, `secp256r1`,
    /// `secp384r1`); empty: the provider's default (x25519 first).
    pub groups: Vec<String>,
    pub alpn: Vec<String>,
    /// Server name sent (and verified) instead of the URL's host.
    pub sni: Option<String>,
    pub insecure: bool,
    pub cacert: Option<PathBuf>,
    /// Reuse sessions (tickets) between the requests of this configuration.
    pub resume: bool,
    /// Offer 0-RTT early data when resuming.
    pub early_data: bool,
}

/// Groups the ring provider has, by the names the probe accepts.
pub fn group(name: &str) -> Result<&'static dyn rustls::crypto::SupportedKxGroup, String> {
    match name.to_ascii_lowercase().as_str() {
        "x25519" => Ok(provider::kx_group::X25519),
        "secp256r1" | "p-256" | "p256" | "prime256v1" => Ok(provider::kx_group::SECP256R1),
        "secp384r1" | "p-384" | "p384" => Ok(provider::kx_group::SECP384R1),
        "x25519mlkem768" | "mlkem768" => Err(
            "X25519MLKEM768 is not available: the probe's rustls is built with the ring provider, \
             which has no post-quantum key exchange (only aws-lc-rs has it)"
                .into(),
        ),
        other => Err(format!(
            "unknown key-share group {other:?} (x25519, secp256r1, secp384r1)"
        )),
    }
}

/// TLS key-log lines kept in memory, so the analysis can read 0-RTT
/// early data on its own capture (as `analyze --keylog` would).
#[derive(Debug, Default)]
pub struct MemoryKeyLog(pub Mutex<Vec<u8>>);

impl rustls::KeyLog for MemoryKeyLog {
    fn log(&self, label: &str, client_random: &[u8], secret: &[u8]) {
        let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
        let line = format!("{label} {} {}\n", hex(client_random), hex(secret));
        if let Ok(mut v) = self.0.lock() {
            v.extend_from_slice(line.as_bytes());
        }
        // As curl does: SSLKEYLOGFILE gets the lines too, so Wireshark
        // (and `rttdoc analyze --keylog`) can read a --save-capture file.
        if let Some(path) = std::env::var_os("SSLKEYLOGFILE") {
            use std::io::Write;
            if let Ok(mut f) = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
            {
                let _ = f.write_all(line.as_bytes());
            }
        }
    }
}

fn system_roots() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::env::var_os("SSL_CERT_FILE")
        .map(PathBuf::from)
        .into_iter()
        .collect();
    v.extend(
        [
            "/etc/ssl/certs/ca-certificates.crt",
            "/etc/pki/tls/certs/ca-bundle.crt",
            "/etc/ssl/cert.pem",
        ]
        .map(PathBuf::from),
    );
    v
}

fn load_roots(cacert: Option<&Path>) -> Result<RootCertStore, String> {
    let mut roots = RootCertStore::empty();
    let files = match cacert {
        Some(p) => vec![p.to_path_buf()],
        None => system_roots()
            .into_iter()
            .filter(|p| p.exists())
            .take(1)
            .collect(),
    };
    for f in &files {
        let certs =
            CertificateDer::pem_file_iter(f).map_err(|e| format!("{}: {e}", f.display()))?;
        for c in certs {
            let c = c.map_err(|e| format!("{}: {e}", f.display()))?;
            // A certificate the verifier cannot use is skipped, as curl does.
            let _ = roots.add(c);
        }
    }
    if roots.is_empty() {
        return Err(match cacert {
            Some(p) => format!("{}: no certificates in it", p.display()),
            None => {
                "no CA certificates found (install ca-certificates, or give --cacert FILE, or -k)"
                    .into()
            }
        });
    }
    Ok(roots)
}

static ONLY_TLS12: [&rustls::SupportedProtocolVersion; 1] = [&rustls::version::TLS12];
static ONLY_TLS13: [&rustls::SupportedProtocolVersion; 1] = [&rustls::version::TLS13];
static BOTH: [&rustls::SupportedProtocolVersion; 2] =
    [&rustls::version::TLS13, &rustls::version::TLS12];

/// A client configuration; its session store lives as long as it does.
pub fn client_config(
    o: &TlsOptions,
    keylog: Arc<MemoryKeyLog>,
) -> Result<Arc<ClientConfig>, String> {
    let mut p = provider::default_provider();
    if !o.groups.is_empty() {
        p.kx_groups = o
            .groups
            .iter()
            .map(|g| group(g))
            .collect::<Result<_, _>>()?;
    }
    let p = Arc::new(p);
    let versions: &[&rustls::SupportedProtocolVersion] = match o.versions {
        Versions::Both => &BOTH,
        Versions::Tls12 => &ONLY_TLS12,
        Versions::Tls13 => &ONLY_TLS13,
    };
    let builder = ClientConfig::builder_with_provider(p.clone())
        .with_protocol_versions(versions)
        .map_err(|e| e.to_string())?;
    let mut config = if o.insecure {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(rttdoc_lab::tls_peer::AcceptAnyCertificate(
                p,
            )))
            .with_no_client_auth()
    } else {
        builder
            .with_root_certificates(load_roots(o.cacert.as_deref())?)
            .with_no_client_auth()
    };
    config.alpn_protocols = o.alpn.iter().map(|a| a.as_bytes().to_vec()).collect();
    config.resumption = if o.resume || o.early_data {
        Resumption::in_memory_sessions(32)
    } else {
        Resumption::disabled()
    };
    config.enable_early_data = o.early_data;
    config.key_log = keylog;
    Ok(Arc::new(config))
}

/// The server name for the handshake: `--sni`, else the URL's host (an
/// IP address is verified as one, and sends no SNI, as in curl).
pub fn server_name(host: &str, sni: Option<&str>) -> Result<ServerName<'static>, String> {
    let name = sni.unwrap_or(host);
    ServerName::try_from(name.to_string()).map_err(|e| format!("{name}: {e}"))
}
