//! Certificate chain files (nginx `ssl_certificate`, HAProxy `crt`): what
//! they make the server send in its first flight, against the initial
//! congestion window.
//!
//! The server's first flight is ServerHello, EncryptedExtensions,
//! Certificate (every certificate in the file, in order, DER), an OCSP
//! response if stapled, CertificateVerify (a signature by the leaf's key)
//! and Finished (TLS 1.3); TLS 1.2 has ServerKeyExchange and
//! ServerHelloDone in place of the last two. The sizes below are the
//! messages' encodings (RFC 8446 4.x) plus record overhead: 5 bytes of
//! header, and in TLS 1.3 1 content-type byte and a 16-byte AEAD tag per
//! record, one record per message (OpenSSL writes them so), at most 16 KB
//! of plaintext each.

use std::path::{Path, PathBuf};

use serde::Serialize;

/// One certificate of a chain file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CertInfo {
    pub subject: String,
    pub issuer: String,
    pub der_bytes: u32,
    /// `RSA 4096`, `EC P-256`, `Ed25519`, ...
    pub key: String,
    /// Subject equals issuer: a root (trust anchor), which clients already
    /// have and never need from the server (RFC 8446 4.4.2).
    pub self_signed: bool,
}

/// A chain file, read.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChainSummary {
    pub file: String,
    pub certificates: Vec<CertInfo>,
    pub der_bytes_total: u32,
    /// Bytes of an OCSP response stapled to the handshake, when known.
    pub ocsp_bytes: u32,
    /// Estimated server first flight (TCP payload bytes), TLS 1.3 / 1.2.
    pub flight_tls13: u32,
    pub flight_tls12: u32,
}

impl ChainSummary {
    pub fn leaf(&self) -> Option<&CertInfo> {
        self.certificates.first()
    }
    /// Bytes of certificates that are roots (self-signed) after the leaf.
    pub fn root_bytes(&self) -> u32 {
        self.certificates
            .iter()
            .skip(1)
            .filter(|c| c.self_signed)
            .map(|c| c.der_bytes)
            .sum()
    }
    /// The certificate whose issuer the file does not hold right after it,
    /// when the chain stops short of what clients verify from their
    /// roots: a lone certificate that is not self-signed (a leaf without
    /// its intermediate: Let's Encrypt's cert.pem where fullchain.pem was
    /// meant), or one followed by a certificate that is not its issuer
    /// (an intermediate missing or out of order). None for a chain whose
    /// certificates each come before their issuer, the last one's issuer
    /// the root clients have (RFC 8446 4.4.2: roots may be left out).
    pub fn missing_issuer(&self) -> Option<&CertInfo> {
        match self.certificates.as_slice() {
            [lone] => Some(lone).filter(|c| !c.self_signed && !c.subject.is_empty()),
            certs => certs
                .windows(2)
                .find(|w| !w[0].self_signed && w[0].issuer != w[1].subject)
                .map(|w| &w[0]),
        }
    }

    /// The leaf's signature size in bytes (CertificateVerify, ServerKeyExchange).
    fn signature_bytes(&self) -> u32 {
        match self.leaf().map(|l| l.key.as_str()) {
            Some(k) if k.starts_with("RSA") => k[4..]
                .trim()
                .parse::<u32>()
                .map(|bits| bits.div_ceil(8))
                .unwrap_or(256),
            Some("EC P-384") => 104,
            Some("EC P-521") => 139,
            Some("Ed25519") => 64,
            Some("Ed448") => 114,
            // ECDSA P-256: a DER SEQUENCE of two 32-byte integers, 70-72 bytes.
            _ => 72,
        }
    }
}

/// The audit finding for a chain file whose certificate's issuer is
/// missing ([`ChainSummary::missing_issuer`]), read at `location` (the
/// directive naming the file), or None for a complete chain.
pub(crate) fn chain_incomplete(
    chain: &ChainSummary,
    location: crate::Location,
    ports: Vec<u16>,
) -> Option<crate::Finding> {
    let cert = chain.missing_issuer()?;
    Some(crate::Finding {
        check: "chain_incomplete",
        severity: crate::Severity::High,
        confidence: crate::Confidence::High,
        title: format!(
            "{} does not hold the issuer of {}: clients must fetch it inside the handshake, or fail",
            chain.file, cert.subject
        ),
        location,
        related: vec![crate::Location {
            source: "certificate",
            at: chain.file.clone(),
            text: format!(
                "{} certificate(s); {} issued by {}, which the file does not hold next",
                chain.certificates.len(),
                cert.subject,
                cert.issuer
            ),
        }],
        cost: crate::Cost {
            rtts: Some(2.0),
            ms: None,
            per: "first_handshake_per_client",
            text: "a name lookup and 2 RTT to the CA's server on a client's first full handshake (Chromium, Windows: \
                   they fetch the intermediate from the certificate's AIA URL before answering the server); curl, OpenSSL, \
                   Go, Java and Firefox without the intermediate cached fail the handshake"
                .into(),
        },
        why: "A client verifies the server's certificate up to a root it trusts; the server must send the certificates \
              in between (RFC 8446 4.4.2). Without them a client that follows the certificate's Authority Information \
              Access URL fetches the intermediate over HTTP while the handshake waits; one that does not fails it."
            .into(),
        fix: crate::Fix {
            syntax: "shell",
            text: format!(
                "cat CERT INTERMEDIATE > {} (Let's Encrypt: fullchain.pem, not cert.pem); \
                 `openssl s_client -connect HOST:443 -showcerts` shows what the server sends",
                chain.file
            ),
        },
        confirms: crate::vocabulary::confirms("chain_incomplete").to_vec(),
        evidence: None,
        ports,
    })
}

/// Record overhead of a TLS 1.3 encrypted record (header, type, tag).
const TLS13_RECORD: u32 = 5 + 1 + 16;
const MAX_RECORD: u32 = 16384;

fn records(body: u32, overhead: u32) -> u32 {
    body + body.div_ceil(MAX_RECORD).max(1) * overhead
}

/// Estimated TLS 1.3 server flight for these certificates (x25519 key
/// share, a 32-byte legacy session id echoed, ALPN in EncryptedExtensions,
/// SHA-256 Finished).
pub fn flight_tls13(certs: &[CertInfo], ocsp: u32, sig: u32) -> u32 {
    // ServerHello: 4 header + 2 version + 32 random + 33 session id + 2
    // suite + 1 compression + 2 extensions length + supported_versions (6)
    // + key_share x25519 (4 + 4 + 32), in a plaintext record.
    let server_hello = 5 + 4 + 2 + 32 + 33 + 2 + 1 + 2 + 6 + 40;
    let change_cipher_spec = 6;
    let encrypted_extensions = records(4 + 2 + 15, TLS13_RECORD);
    let entries: u32 = certs.iter().map(|c| 3 + c.der_bytes + 2).sum();
    // A stapled OCSP response rides in the leaf's entry extensions
    // (status_request: 4 + 1 + 3 + response).
    let ocsp_ext = if ocsp > 0 { 8 + ocsp } else { 0 };
    let certificate = records(4 + 1 + 3 + entries + ocsp_ext, TLS13_RECORD);
    let certificate_verify = records(4 + 2 + 2 + sig, TLS13_RECORD);
    let finished = records(4 + 32, TLS13_RECORD);
    server_hello
        + change_cipher_spec
        + encrypted_extensions
        + certificate
        + certificate_verify
        + finished
}

/// Estimated TLS 1.2 server flight (ECDHE x25519, plaintext records).
pub fn flight_tls12(certs: &[CertInfo], ocsp: u32, sig: u32) -> u32 {
    let server_hello = records(4 + 2 + 32 + 33 + 2 + 1 + 2 + 24, 5);
    let entries: u32 = certs.iter().map(|c| 3 + c.der_bytes).sum();
    let certificate = records(4 + 3 + entries, 5);
    let status = if ocsp > 0 {
        records(4 + 1 + 3 + ocsp, 5)
    } else {
        0
    };
    let key_exchange = records(4 + 4 + 32 + 2 + 2 + sig, 5);
    let done = records(4, 5);
    server_hello + certificate + status + key_exchange + done
}

/// Segments a flight of `bytes` leaves in: OpenSSL hands nginx's socket the
/// first 4096 bytes of the flight, then the rest (seen on every lab
/// capture of nginx: 1448 + 1448 + 1200, then full segments), so the
/// first write ends in a partial segment.
pub fn flight_segments(bytes: u32, mss: u32) -> u32 {
    if bytes <= 4096 {
        bytes.div_ceil(mss)
    } else {
        4096u32.div_ceil(mss) + (bytes - 4096).div_ceil(mss)
    }
}

/// Reads the certificates of a PEM file (chain, and for HAProxy the key
/// too, which is skipped). `ocsp` is the size of a stapled response file,
/// if one is configured.
pub fn read_chain(path: &Path, ocsp_bytes: u32) -> Result<ChainSummary, String> {
    let data = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let blocks = pem::parse_many(&data).map_err(|e| format!("{}: PEM: {e}", path.display()))?;
    let mut certificates = Vec::new();
    for (i, b) in blocks.iter().enumerate() {
        if b.tag() != "CERTIFICATE" {
            continue;
        }
        certificates.push(
            cert_info(b.contents()).map_err(|e| {
                format!("{}: PEM block {} (CERTIFICATE): {e}", path.display(), i + 1)
            })?,
        );
    }
    if certificates.is_empty() {
        return Err(format!("{}: no CERTIFICATE in the file", path.display()));
    }
    let der_bytes_total = certificates.iter().map(|c| c.der_bytes).sum();
    let mut s = ChainSummary {
        file: path.display().to_string(),
        certificates,
        der_bytes_total,
        ocsp_bytes,
        flight_tls13: 0,
        flight_tls12: 0,
    };
    let sig = s.signature_bytes();
    s.flight_tls13 = flight_tls13(&s.certificates, ocsp_bytes, sig);
    s.flight_tls12 = flight_tls12(&s.certificates, ocsp_bytes, sig);
    Ok(s)
}

fn cert_info(der: &[u8]) -> Result<CertInfo, String> {
    use x509_parser::prelude::*;
    let (_, cert) = X509Certificate::from_der(der).map_err(|e| format!("X.509: {e}"))?;
    let spki = cert.public_key();
    let key = match spki.parsed() {
        Ok(x509_parser::public_key::PublicKey::RSA(rsa)) => format!("RSA {}", rsa.key_size()),
        Ok(x509_parser::public_key::PublicKey::EC(ec)) => match ec.key_size() {
            256 => "EC P-256".to_string(),
            384 => "EC P-384".to_string(),
            521 | 528 => "EC P-521".to_string(),
            n => format!("EC {n}"),
        },
        _ => {
            let oid = spki.algorithm.algorithm.to_id_string();
            match oid.as_str() {
                "1.3.101.112" => "Ed25519".to_string(),
                "1.3.101.113" => "Ed448".to_string(),
                other => format!("key {other}"),
            }
        }
    };
    Ok(CertInfo {
        subject: cert.subject().to_string(),
        issuer: cert.issuer().to_string(),
        der_bytes: der.len() as u32,
        key,
        self_signed: cert.subject().as_raw() == cert.issuer().as_raw(),
    })
}

/// A file's size (a stapled OCSP response), 0 when unreadable.
pub fn file_size(path: &Path) -> u32 {
    std::fs::metadata(path).map(|m| m.len() as u32).unwrap_or(0)
}

/// A certificate path as configured, resolved (kept for messages).
pub fn resolve(base: &Path, p: &str) -> PathBuf {
    let path = Path::new(p);
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cert(der: u32) -> CertInfo {
        CertInfo {
            subject: String::new(),
            issuer: String::new(),
            der_bytes: der,
            key: "EC P-256".into(),
            self_signed: false,
        }
    }

    #[test]
    fn flight_grows_with_every_certificate_byte_and_records_split_at_16k() {
        let one = flight_tls13(&[cert(500)], 0, 72);
        let two = flight_tls13(&[cert(500), cert(1000)], 0, 72);
        assert_eq!(two - one, 1000 + 5);
        // Crossing 16 KB of Certificate body adds one record's overhead.
        let below = flight_tls13(&[cert(16000)], 0, 72);
        let above = flight_tls13(&[cert(16600)], 0, 72);
        assert_eq!(above - below, 600 + TLS13_RECORD);
        assert!(flight_tls13(&[cert(500)], 1500, 72) > one + 1500);
    }

    #[test]
    fn segments_follow_openssls_4096_byte_first_write() {
        assert_eq!(flight_segments(1000, 1448), 1);
        assert_eq!(flight_segments(4096, 1448), 3);
        // The lab's over-initcwnd chain: 19526 bytes left in 14 segments.
        assert_eq!(flight_segments(19526, 1448), 14);
    }

    #[test]
    fn damaged_or_empty_files_are_errors_naming_the_file() {
        let dir = std::env::temp_dir().join(format!("rttdoc-audit-certs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let bad = dir.join("bad.pem");
        std::fs::write(
            &bad,
            "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
        )
        .unwrap();
        let e = read_chain(&bad, 0).unwrap_err();
        assert!(e.contains("bad.pem") && e.contains("X.509"), "{e}");
        let empty = dir.join("empty.pem");
        std::fs::write(&empty, "nothing").unwrap();
        assert!(read_chain(&empty, 0)
            .unwrap_err()
            .contains("no CERTIFICATE"));
        assert!(read_chain(&dir.join("missing.pem"), 0).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_chain_without_the_issuer_of_a_certificate_is_incomplete() {
        let certs = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/data/audit/certs");
        let text = std::fs::read_to_string(certs.join("mid-chain.pem")).unwrap();
        // mid-chain.pem: the leaf, its intermediate, the root.
        let blocks: Vec<String> = text
            .split_inclusive("-----END CERTIFICATE-----\n")
            .map(str::to_string)
            .collect();
        assert_eq!(blocks.len(), 3);
        let dir = std::env::temp_dir().join(format!("rttdoc-audit-chain-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let write = |name: &str, parts: &[usize]| {
            let path = dir.join(name);
            let pem: String = parts.iter().map(|i| blocks[*i].as_str()).collect();
            std::fs::write(&path, pem).unwrap();
            read_chain(&path, 0).unwrap()
        };
        let at = || crate::Location {
            source: "nginx",
            at: "x.conf:1".into(),
            text: "ssl_certificate".into(),
        };
        // The leaf alone (cert.pem for fullchain.pem): its issuer missing.
        let leaf = write("leaf.pem", &[0]);
        let missing = leaf.missing_issuer().expect("the leaf's issuer is missing");
        assert!(
            missing.subject.contains("mid-chain.audit.test"),
            "{missing:?}"
        );
        let f = chain_incomplete(&leaf, at(), vec![443]).expect("a finding");
        assert_eq!(
            f.confirms,
            vec![rttdoc_model::FindingKind::CertificateFetch]
        );
        assert!(f.title.contains("leaf.pem"), "{}", f.title);
        // The intermediate after the root: out of order.
        assert!(write("order.pem", &[0, 2, 1]).missing_issuer().is_some());
        // Leaf and intermediate (the root left to the clients), the whole
        // chain with its root, a self-signed certificate: complete.
        assert_eq!(write("full.pem", &[0, 1]).missing_issuer(), None);
        assert_eq!(write("all.pem", &[0, 1, 2]).missing_issuer(), None);
        assert!(chain_incomplete(&write("all.pem", &[0, 1, 2]), at(), vec![]).is_none());
        let small = read_chain(&certs.join("small-ec.pem"), 0).unwrap();
        assert_eq!(small.missing_issuer(), None);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
