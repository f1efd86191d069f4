//! The probe's TLS client (rustls with the ring provider, and aws-lc-rs's
//! X25519MLKEM768 key exchange), configured on purpose: versions, key-share
//! groups, ALPN, session resumption with a ticket store shared by the
//! requests of one configuration, 0-RTT.

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
    /// `secp384r1`, `X25519MLKEM768`); empty: the ring provider's default
    /// (x25519 first, no post-quantum group).
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

/// The key-share groups the probe can offer, by the names it accepts
/// (case-insensitive). The classic ones are the ring provider's; the
/// post-quantum hybrid X25519MLKEM768 (IANA 0x11ec: X25519 and ML-KEM-768
/// together) is aws-lc-rs's, as ring has no ML-KEM. A provider's key
/// exchange stands alone (it hands rustls a shared secret), so one group
/// from aws-lc-rs changes nothing else in the handshake: cipher suites,
/// signatures and the key schedule stay ring's.
pub fn group(name: &str) -> Result<&'static dyn rustls::crypto::SupportedKxGroup, String> {
    match name.to_ascii_lowercase().as_str() {
        "x25519" => Ok(provider::kx_group::X25519),
        "secp256r1" | "p-256" | "p256" | "prime256v1" => Ok(provider::kx_group::SECP256R1),
        "secp384r1" | "p-384" | "p384" => Ok(provider::kx_group::SECP384R1),
        // The IANA name, in any case (OpenSSL 3.5 and Go spell it so too).
        "x25519mlkem768" => Ok(rustls::crypto::aws_lc_rs::kx_group::X25519MLKEM768),
        other => Err(format!(
            "unknown key-share group {other:?} (x25519, secp256r1, secp384r1, X25519MLKEM768)"
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
        // X25519MLKEM768 exists only in TLS 1.3: alone under --tlsv1.2
        // the ClientHello would offer no group at all.
        let tls12 = rustls::ProtocolVersion::TLSv1_2;
        if o.versions == Versions::Tls12 && !p.kx_groups.iter().any(|g| g.usable_for_version(tls12))
        {
            return Err(format!(
                "none of the key-share groups {} exists in TLS 1.2",
                o.groups.join(",")
            ));
        }
    }
    // aws-lc seeds its random generator on first use, measured at 60 ms
    // on a small VM: a key pair made now, before any clock starts, keeps
    // that one-time cost out of the first X25519MLKEM768 handshake's
    // timings (a browser has paid it long before).
    for g in &p.kx_groups {
        let _ = g.start();
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

#[cfg(test)]
mod tests {
    use super::*;
    use rustls::NamedGroup;

    #[test]
    fn group_names_map_to_their_iana_groups_in_any_case() {
        for (name, want) in [
            ("x25519", NamedGroup::X25519),
            ("X25519", NamedGroup::X25519),
            ("P-256", NamedGroup::secp256r1),
            ("prime256v1", NamedGroup::secp256r1),
            ("secp384r1", NamedGroup::secp384r1),
            ("X25519MLKEM768", NamedGroup::X25519MLKEM768),
            ("x25519mlkem768", NamedGroup::X25519MLKEM768),
        ] {
            assert_eq!(group(name).unwrap().name(), want, "{name}");
        }
        assert_eq!(u16::from(group("X25519MLKEM768").unwrap().name()), 0x11ec);
        // The pure ML-KEM group is another one (0x0201): not taken for the hybrid.
        for bad in ["mlkem768", "x25519kyber768", "x25519-mlkem768", ""] {
            let e = group(bad).map(|g| g.name()).unwrap_err();
            assert!(e.contains("X25519MLKEM768"), "{bad}: {e}");
        }
    }

    /// The first flight rustls writes for `groups` (nothing is sent).
    fn client_hello_bytes(groups: &[&str], versions: Versions) -> Result<usize, String> {
        let o = TlsOptions {
            versions,
            groups: groups.iter().map(|g| g.to_string()).collect(),
            insecure: true,
            ..TlsOptions::default()
        };
        let config = client_config(&o, Arc::new(MemoryKeyLog::default()))?;
        let name = server_name("lab.rttdoc.test", None)?;
        let mut conn = rustls::ClientConnection::new(config, name).map_err(|e| e.to_string())?;
        let mut out = Vec::new();
        while conn.wants_write() {
            conn.write_tls(&mut out).map_err(|e| e.to_string())?;
        }
        Ok(out.len())
    }

    #[test]
    fn an_x25519mlkem768_key_share_grows_the_client_hello_by_its_ml_kem_key() {
        let classic = client_hello_bytes(&["x25519"], Versions::Both).unwrap();
        let pq = client_hello_bytes(&["X25519MLKEM768"], Versions::Both).unwrap();
        // The hybrid share is an ML-KEM-768 encapsulation key (1184 bytes)
        // and an X25519 one (32) where x25519's is 32 alone: one group
        // each, so the ML-KEM key is the whole difference.
        assert_eq!(pq - classic, 1184, "{classic} -> {pq}");
        // As Chrome does, a client offering both sends the X25519 share
        // too: a server without ML-KEM needs no HelloRetryRequest.
        let both = client_hello_bytes(&["X25519MLKEM768", "x25519"], Versions::Both).unwrap();
        assert_eq!(both - pq, 2 + 4 + 32, "{pq} -> {both}");
        let e = client_hello_bytes(&["X25519MLKEM768"], Versions::Tls12).unwrap_err();
        assert!(e.contains("TLS 1.2"), "{e}");
        assert!(client_hello_bytes(&["X25519MLKEM768", "x25519"], Versions::Tls12).is_ok());
    }
}
