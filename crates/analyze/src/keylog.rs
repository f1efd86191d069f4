//! TLS key logs (the NSS `SSLKEYLOGFILE` format that browsers, curl,
//! OpenSSL and rustls write, and Wireshark reads) and what rttdoc does with
//! them: decrypt TLS 1.3 0-RTT early data, to see which request rode in
//! it (`early_data_unsafe`), type a server's records after its handshake
//! (tickets or data), and read an HTTP connection's application data,
//! both ways (tls.rs): TLS 1.3's from its traffic secrets, TLS 1.2's
//! (AEAD suites: AES-GCM, ChaCha20-Poly1305) from its master secret
//! (`CLIENT_RANDOM` lines). Nothing else is decrypted.
//!
//! Early data is protected with keys from `CLIENT_EARLY_TRAFFIC_SECRET`
//! (RFC 8446 7.3): key = HKDF-Expand-Label(secret, "key", "", key_len),
//! iv = HKDF-Expand-Label(secret, "iv", "", 12); record n's nonce is the iv
//! XORed with n, its additional data the 5-byte record header; the
//! plaintext ends with the real content type and zero padding.

use std::collections::HashMap;
use std::io::{self, BufRead};
use std::path::Path;

use ring::{aead, hkdf, hmac};

/// The early traffic secrets of a key log, by ClientHello random.
#[derive(Debug, Default, Clone)]
pub struct KeyLog {
    early: HashMap<[u8; 32], Vec<u8>>,
    /// SERVER_TRAFFIC_SECRET_0: the server's first application traffic
    /// secret, to tell its post-handshake messages (session tickets) from
    /// its first response bytes.
    server_app: HashMap<[u8; 32], Vec<u8>>,
    /// CLIENT_TRAFFIC_SECRET_0: the client's, with the server's to read
    /// an HTTP connection's data (tls.rs).
    client_app: HashMap<[u8; 32], Vec<u8>>,
    /// CLIENT_RANDOM: a TLS 1.2 session's master secret, both sides' record
    /// keys derived from it with the hellos' randoms.
    master: HashMap<[u8; 32], Vec<u8>>,
}

/// Both sides' application record keys of a session (TLS 1.3's first
/// traffic keys, or TLS 1.2's): their records opened in order.
pub struct AppKeys {
    keys: [RecordKeys; 2],
    /// The number of each side's first application data record: 0 under
    /// TLS 1.3's traffic keys, 1 under TLS 1.2's (its Finished was 0).
    pub first: u64,
}

/// One side's record protection.
enum RecordKeys {
    Tls13(TrafficKeys),
    Tls12(Tls12Keys),
}

impl RecordKeys {
    fn open(&self, n: u64, body: &[u8]) -> Option<(Vec<u8>, u8)> {
        match self {
            RecordKeys::Tls13(k) => k.open(n, body),
            RecordKeys::Tls12(k) => k.open(n, body).map(|plain| (plain, 0x17)),
        }
    }
}

impl std::fmt::Debug for AppKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AppKeys")
    }
}

impl AppKeys {
    /// Record `n` of the side `dir_index` (0: the client's) under these
    /// keys: its content and inner content type, or None when it does
    /// not authenticate (another key's record, damage).
    pub fn open(&self, dir_index: usize, n: u64, body: &[u8]) -> Option<(Vec<u8>, u8)> {
        self.keys.get(dir_index)?.open(n, body)
    }
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

impl KeyLog {
    pub fn load(path: &Path) -> io::Result<KeyLog> {
        let file = std::fs::File::open(path)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
        let mut log = KeyLog::default();
        // Lines that are not UTF-8 are skipped like any other junk.
        for line in io::BufReader::new(file).split(b'\n') {
            log.add_line(&String::from_utf8_lossy(&line?));
        }
        Ok(log)
    }

    /// One key log line; anything but the secrets above is ignored.
    pub fn add_line(&mut self, line: &str) {
        let mut f = line.split_whitespace();
        let map = match f.next() {
            Some("CLIENT_EARLY_TRAFFIC_SECRET") => &mut self.early,
            Some("SERVER_TRAFFIC_SECRET_0") => &mut self.server_app,
            Some("CLIENT_TRAFFIC_SECRET_0") => &mut self.client_app,
            Some("CLIENT_RANDOM") => &mut self.master,
            _ => return,
        };
        let (Some(random), Some(secret)) = (f.next().and_then(unhex), f.next().and_then(unhex))
        else {
            return;
        };
        if let Ok(random) = <[u8; 32]>::try_from(random) {
            map.insert(random, secret);
        }
    }

    /// The inner content types (RFC 8446 5.2) of a TLS 1.3 server's
    /// encrypted records, in order (bodies without headers), from the first
    /// one its application traffic keys open: 22 for post-handshake
    /// messages (NewSessionTicket, KeyUpdate), 23 for application data, 21
    /// for alerts. Records before that (the encrypted handshake flight,
    /// under other keys) are skipped; their count comes first. None when
    /// the log has no secret for the session or nothing opens.
    pub fn server_inner_types(
        &self,
        client_random: &[u8; 32],
        suite: u16,
        records: &[impl AsRef<[u8]>],
    ) -> Option<(usize, Vec<u8>)> {
        let secret = self.server_app.get(client_random)?;
        let keys = TrafficKeys::derive(suite, secret)?;
        // Sequence numbers restart at 0 under these keys: the first record
        // that opens as number 0 is where they begin.
        let first = records
            .iter()
            .position(|r| keys.open(0, r.as_ref()).is_some())?;
        let types = records[first..]
            .iter()
            .enumerate()
            .map_while(|(n, r)| keys.open(n as u64, r.as_ref()).map(|(_, inner)| inner))
            .collect();
        Some((first, types))
    }

    /// Both sides' application traffic keys of the session, when the log
    /// has both secrets and `suite` is TLS 1.3's.
    pub fn app_keys(&self, client_random: &[u8; 32], suite: u16) -> Option<AppKeys> {
        let client = TrafficKeys::derive(suite, self.client_app.get(client_random)?)?;
        let server = TrafficKeys::derive(suite, self.server_app.get(client_random)?)?;
        Some(AppKeys {
            keys: [RecordKeys::Tls13(client), RecordKeys::Tls13(server)],
            first: 0,
        })
    }

    /// Both sides' record keys of a TLS 1.2 session, when the log has its
    /// master secret and `suite` is one of the AEAD suites.
    pub fn tls12_keys(
        &self,
        client_random: &[u8; 32],
        server_random: &[u8; 32],
        suite: u16,
    ) -> Option<AppKeys> {
        let master = self.master.get(client_random)?;
        let [client, server] = Tls12Keys::derive(suite, master, client_random, server_random)?;
        Some(AppKeys {
            keys: [RecordKeys::Tls12(client), RecordKeys::Tls12(server)],
            first: 1,
        })
    }

    pub fn len(&self) -> usize {
        self.early.len() + self.server_app.len() + self.client_app.len() + self.master.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The plaintext of a session's early-data records (ciphertexts in
    /// order, bodies without their headers), or None when the log has no
    /// secret for it or a record does not authenticate. `suite` is the
    /// negotiated TLS 1.3 suite when known; otherwise each is tried.
    pub fn decrypt_early(
        &self,
        client_random: &[u8; 32],
        suite: Option<u16>,
        records: &[Vec<u8>],
    ) -> Option<Vec<u8>> {
        let secret = self.early.get(client_random)?;
        let suites = match suite {
            Some(s) => vec![s],
            None => vec![0x1301, 0x1302, 0x1303],
        };
        suites
            .into_iter()
            .find_map(|s| decrypt_with(s, secret, records))
    }
}

struct Len(usize);

impl hkdf::KeyType for Len {
    fn len(&self) -> usize {
        self.0
    }
}

/// HKDF-Expand-Label (RFC 8446 7.1) with an empty context.
pub(crate) fn expand_label(
    hash: hkdf::Algorithm,
    secret: &[u8],
    label: &str,
    len: usize,
) -> Option<Vec<u8>> {
    let prk = hkdf::Prk::new_less_safe(hash, secret);
    let full = format!("tls13 {label}");
    let info = [
        &(len as u16).to_be_bytes()[..],
        &[full.len() as u8],
        full.as_bytes(),
        &[0u8],
    ];
    let mut out = vec![0u8; len];
    prk.expand(&info, Len(len)).ok()?.fill(&mut out).ok()?;
    Some(out)
}

/// A TLS 1.3 traffic secret's record protection (RFC 8446 7.3): the AEAD
/// key and IV, derived once for all the records it opens.
struct TrafficKeys {
    key: aead::LessSafeKey,
    iv: [u8; aead::NONCE_LEN],
}

impl TrafficKeys {
    fn derive(suite: u16, secret: &[u8]) -> Option<TrafficKeys> {
        let (alg, hash) = match suite {
            0x1301 => (&aead::AES_128_GCM, hkdf::HKDF_SHA256),
            0x1302 => (&aead::AES_256_GCM, hkdf::HKDF_SHA384),
            0x1303 => (&aead::CHACHA20_POLY1305, hkdf::HKDF_SHA256),
            _ => return None,
        };
        let key = expand_label(hash, secret, "key", alg.key_len())?;
        let iv = expand_label(hash, secret, "iv", aead::NONCE_LEN)?;
        Some(TrafficKeys {
            key: aead::LessSafeKey::new(aead::UnboundKey::new(alg, &key).ok()?),
            iv: iv.try_into().ok()?,
        })
    }

    /// The record with sequence number `n` (its body, without the header):
    /// its content and its inner content type (TLSInnerPlaintext: content,
    /// the real type, zero padding).
    fn open(&self, n: u64, body: &[u8]) -> Option<(Vec<u8>, u8)> {
        let mut nonce = self.iv;
        for (b, s) in nonce[4..].iter_mut().zip(n.to_be_bytes()) {
            *b ^= s;
        }
        let len = u16::try_from(body.len()).ok()?.to_be_bytes();
        let header = [0x17, 0x03, 0x03, len[0], len[1]];
        let mut buf = body.to_vec();
        let inner = self
            .key
            .open_in_place(
                aead::Nonce::assume_unique_for_key(nonce),
                aead::Aad::from(header),
                &mut buf,
            )
            .ok()?;
        let end = inner.iter().rposition(|b| *b != 0)?;
        Some((inner[..end].to_vec(), inner[end]))
    }
}

/// A TLS 1.2 AEAD suite's record protection (RFC 5246 6.3, RFC 5288,
/// RFC 7905): the key and the IV from the key block the master secret
/// expands to.
struct Tls12Keys {
    key: aead::LessSafeKey,
    /// GCM: the 4-byte salt the record's 8-byte explicit nonce follows;
    /// ChaCha20-Poly1305: the 12-byte IV the sequence number is XORed
    /// into.
    iv: Vec<u8>,
}

impl Tls12Keys {
    /// The client's and the server's keys.
    fn derive(
        suite: u16,
        master: &[u8],
        client_random: &[u8; 32],
        server_random: &[u8; 32],
    ) -> Option<[Tls12Keys; 2]> {
        let (alg, prf, iv_len) = match suite {
            // ECDHE-ECDSA, ECDHE-RSA, RSA and DHE-RSA with AES-128-GCM.
            0xc02b | 0xc02f | 0x009c | 0x009e => (&aead::AES_128_GCM, hmac::HMAC_SHA256, 4),
            // The same with AES-256-GCM (SHA-384's PRF).
            0xc02c | 0xc030 | 0x009d | 0x009f => (&aead::AES_256_GCM, hmac::HMAC_SHA384, 4),
            // ECDHE-RSA, ECDHE-ECDSA and DHE-RSA with ChaCha20-Poly1305.
            0xcca8..=0xccaa => (&aead::CHACHA20_POLY1305, hmac::HMAC_SHA256, 12),
            _ => return None,
        };
        let key_len = alg.key_len();
        let mut seed = server_random.to_vec();
        seed.extend_from_slice(client_random);
        let block = prf_tls12(prf, master, b"key expansion", &seed, 2 * (key_len + iv_len));
        let (keys, ivs) = block.split_at(2 * key_len);
        let side = |i: usize| -> Option<Tls12Keys> {
            Some(Tls12Keys {
                key: aead::LessSafeKey::new(
                    aead::UnboundKey::new(alg, &keys[i * key_len..(i + 1) * key_len]).ok()?,
                ),
                iv: ivs[i * iv_len..(i + 1) * iv_len].to_vec(),
            })
        };
        Some([side(0)?, side(1)?])
    }

    /// The application data record with sequence number `n` (its body,
    /// without the header): its content.
    fn open(&self, n: u64, body: &[u8]) -> Option<Vec<u8>> {
        let tag = aead::MAX_TAG_LEN;
        let (nonce, sealed) = if self.iv.len() == 4 {
            let (explicit, sealed) = body.split_at_checked(8)?;
            let mut nonce = [0u8; aead::NONCE_LEN];
            nonce[..4].copy_from_slice(&self.iv);
            nonce[4..].copy_from_slice(explicit);
            (nonce, sealed)
        } else {
            let mut nonce: [u8; aead::NONCE_LEN] = self.iv.as_slice().try_into().ok()?;
            for (b, s) in nonce[4..].iter_mut().zip(n.to_be_bytes()) {
                *b ^= s;
            }
            (nonce, body)
        };
        let len = u16::try_from(sealed.len().checked_sub(tag)?)
            .ok()?
            .to_be_bytes();
        let mut aad = [0u8; 13];
        aad[..8].copy_from_slice(&n.to_be_bytes());
        aad[8..].copy_from_slice(&[0x17, 0x03, 0x03, len[0], len[1]]);
        let mut buf = sealed.to_vec();
        let plain = self
            .key
            .open_in_place(
                aead::Nonce::assume_unique_for_key(nonce),
                aead::Aad::from(aad),
                &mut buf,
            )
            .ok()?;
        Some(plain.to_vec())
    }
}

/// TLS 1.2's PRF (RFC 5246 5): P_hash(secret, label + seed), `len` bytes.
fn prf_tls12(
    alg: hmac::Algorithm,
    secret: &[u8],
    label: &[u8],
    seed: &[u8],
    len: usize,
) -> Vec<u8> {
    let key = hmac::Key::new(alg, secret);
    let mut label_seed = label.to_vec();
    label_seed.extend_from_slice(seed);
    let mut out = Vec::with_capacity(len);
    // A(1) = HMAC(secret, label + seed); A(i) = HMAC(secret, A(i - 1)).
    let mut a = hmac::sign(&key, &label_seed);
    while out.len() < len {
        let mut ctx = hmac::Context::with_key(&key);
        ctx.update(a.as_ref());
        ctx.update(&label_seed);
        out.extend_from_slice(ctx.sign().as_ref());
        a = hmac::sign(&key, a.as_ref());
    }
    out.truncate(len);
    out
}

fn decrypt_with(suite: u16, secret: &[u8], records: &[Vec<u8>]) -> Option<Vec<u8>> {
    let keys = TrafficKeys::derive(suite, secret)?;
    let mut plain = Vec::new();
    for (n, body) in records.iter().enumerate() {
        let (content, inner) = keys.open(n as u64, body)?;
        if inner == 0x17 {
            plain.extend_from_slice(&content);
        }
    }
    Some(plain)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Encrypts like a TLS 1.3 sender, for the round trip below.
    fn seal(suite: u16, secret: &[u8], n: u64, content: &[u8]) -> Vec<u8> {
        seal_typed(suite, secret, n, content, 0x17)
    }

    fn seal_typed(suite: u16, secret: &[u8], n: u64, content: &[u8], inner: u8) -> Vec<u8> {
        let (alg, hash) = match suite {
            0x1301 => (&aead::AES_128_GCM, hkdf::HKDF_SHA256),
            _ => (&aead::AES_256_GCM, hkdf::HKDF_SHA384),
        };
        let key = expand_label(hash, secret, "key", alg.key_len()).unwrap();
        let iv = expand_label(hash, secret, "iv", 12).unwrap();
        let key = aead::LessSafeKey::new(aead::UnboundKey::new(alg, &key).unwrap());
        let mut nonce = [0u8; 12];
        nonce.copy_from_slice(&iv);
        for (b, s) in nonce[4..].iter_mut().zip(n.to_be_bytes()) {
            *b ^= s;
        }
        let mut buf = content.to_vec();
        buf.push(inner);
        let len = ((buf.len() + 16) as u16).to_be_bytes();
        key.seal_in_place_append_tag(
            aead::Nonce::assume_unique_for_key(nonce),
            aead::Aad::from([0x17, 0x03, 0x03, len[0], len[1]]),
            &mut buf,
        )
        .unwrap();
        buf
    }

    fn log_with(random: [u8; 32], secret: &[u8]) -> KeyLog {
        let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
        let mut log = KeyLog::default();
        log.add_line("# comment");
        log.add_line(&format!("CLIENT_RANDOM {} {}", hex(&random), hex(&[1; 48])));
        log.add_line(&format!(
            "CLIENT_EARLY_TRAFFIC_SECRET {} {}",
            hex(&random),
            hex(secret)
        ));
        log
    }

    #[test]
    fn early_data_decrypts_across_records_and_suites() {
        let random = [7u8; 32];
        for (suite, secret) in [(0x1301, vec![3u8; 32]), (0x1302, vec![5u8; 48])] {
            let log = log_with(random, &secret);
            assert_eq!(log.len(), 2, "the early secret and a TLS 1.2 master secret");
            let records = vec![
                seal(suite, &secret, 0, b"POST /transfer HTTP/1.1\r\n"),
                seal(suite, &secret, 1, b"Host: x\r\n\r\n"),
            ];
            let plain = log.decrypt_early(&random, None, &records).unwrap();
            assert_eq!(plain, b"POST /transfer HTTP/1.1\r\nHost: x\r\n\r\n");
            assert!(log.decrypt_early(&random, Some(suite), &records).is_some());
        }
    }

    #[test]
    fn a_wrong_secret_or_session_decrypts_nothing() {
        let random = [7u8; 32];
        let records = vec![seal(0x1301, &[3; 32], 0, b"GET / HTTP/1.1\r\n\r\n")];
        assert!(log_with(random, &[4; 32])
            .decrypt_early(&random, None, &records)
            .is_none());
        assert!(log_with([8; 32], &[3; 32])
            .decrypt_early(&random, None, &records)
            .is_none());
        // Records out of order fail authentication (the nonce counts).
        let two = vec![
            seal(0x1301, &[3; 32], 1, b"a"),
            seal(0x1301, &[3; 32], 0, b"b"),
        ];
        assert!(log_with(random, &[3; 32])
            .decrypt_early(&random, None, &two)
            .is_none());
    }

    #[test]
    fn both_sides_application_keys_open_their_own_records_only() {
        let random = [5u8; 32];
        let (client, server) = ([1u8; 32], [2u8; 32]);
        let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
        let mut log = KeyLog::default();
        // One secret is not enough: both sides' are needed.
        log.add_line(&format!(
            "SERVER_TRAFFIC_SECRET_0 {} {}",
            hex(&random),
            hex(&server)
        ));
        assert!(log.app_keys(&random, 0x1301).is_none());
        log.add_line(&format!(
            "CLIENT_TRAFFIC_SECRET_0 {} {}",
            hex(&random),
            hex(&client)
        ));
        let keys = log.app_keys(&random, 0x1302).expect("both secrets");
        let preface = seal(0x1302, &client, 0, b"PRI * HTTP/2.0");
        assert_eq!(
            keys.open(0, 0, &preface),
            Some((b"PRI * HTTP/2.0".to_vec(), 0x17))
        );
        // Not the server's, not under another number, not TLS 1.2's suites.
        assert_eq!(keys.open(1, 0, &preface), None);
        assert_eq!(keys.open(0, 1, &preface), None);
        assert!(log.app_keys(&random, 0xc02f).is_none());
        assert!(log.app_keys(&[6u8; 32], 0x1302).is_none());
    }

    #[test]
    fn server_records_after_the_handshake_keys_are_typed_tickets_then_data() {
        let random = [7u8; 32];
        let app = [3u8; 32];
        let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
        let mut log = KeyLog::default();
        log.add_line(&format!(
            "SERVER_TRAFFIC_SECRET_0 {} {}",
            hex(&random),
            hex(&app)
        ));
        let records = vec![
            // The encrypted handshake flight, under the handshake keys.
            seal_typed(0x1301, &[9u8; 32], 0, b"finished", 0x16),
            // Then the application keys, numbered from 0: two tickets, data.
            seal_typed(0x1301, &app, 0, b"ticket one", 0x16),
            seal_typed(0x1301, &app, 1, b"ticket two", 0x16),
            seal_typed(0x1301, &app, 2, b"HTTP/1.1 200 OK", 0x17),
        ];
        assert_eq!(
            log.server_inner_types(&random, 0x1301, &records),
            Some((1, vec![0x16, 0x16, 0x17]))
        );
        // Another session, or no secret: nothing is claimed.
        assert_eq!(log.server_inner_types(&[8u8; 32], 0x1301, &records), None);
    }

    #[test]
    fn tls12_prf_expands_as_rfc_5246_says() {
        // The SHA-256 PRF's vector the TLS working group passed around
        // (Python's hmac gives the same bytes).
        let unhex = |s: &str| super::unhex(s).unwrap();
        let out = prf_tls12(
            hmac::HMAC_SHA256,
            &unhex("9bbe436ba940f017b17652849a71db35"),
            b"test label",
            &unhex("a0ba9f936cda311827a6f796ffd5198c"),
            100,
        );
        assert_eq!(
            out,
            unhex(
                "e3f229ba727be17b8d122620557cd453c2aab21d07c3d495329b52d4e61edb5a6b301791e90d35c9\
                 c9a46b4e14baf9af0fa022f7077def17abfd3797c0564bab4fbc91666e9def9b97fce34f796789baa4\
                 8082d122ee42c5a72e5a5110fff70187347b66"
            )
        );
    }

    #[test]
    fn tls12_records_open_under_the_keys_their_master_secret_gives() {
        // A record sealed as a TLS 1.2 sender seals it (AES-128-GCM: the
        // 4-byte salt and an explicit nonce; the sequence number in the
        // additional data), with keys from the key block the PRF gives.
        let (master, cr, sr) = ([7u8; 48], [1u8; 32], [2u8; 32]);
        let mut seed = sr.to_vec();
        seed.extend_from_slice(&cr);
        let block = prf_tls12(hmac::HMAC_SHA256, &master, b"key expansion", &seed, 40);
        let (server_key, server_salt) = (&block[16..32], &block[36..40]);
        let key =
            aead::LessSafeKey::new(aead::UnboundKey::new(&aead::AES_128_GCM, server_key).unwrap());
        let explicit = [0, 0, 0, 0, 0, 0, 0, 9];
        let mut nonce = [0u8; 12];
        nonce[..4].copy_from_slice(server_salt);
        nonce[4..].copy_from_slice(&explicit);
        let content = b"HTTP/1.1 401 Unauthorized\r\n\r\n";
        let mut aad = 1u64.to_be_bytes().to_vec();
        aad.extend_from_slice(&[0x17, 3, 3, 0, content.len() as u8]);
        let mut sealed = content.to_vec();
        key.seal_in_place_append_tag(
            aead::Nonce::assume_unique_for_key(nonce),
            aead::Aad::from(aad),
            &mut sealed,
        )
        .unwrap();
        let mut body = explicit.to_vec();
        body.extend_from_slice(&sealed);
        let mut log = KeyLog::default();
        log.add_line(&format!("CLIENT_RANDOM {} {}", hex(&cr), hex(&master)));
        let keys = log.tls12_keys(&cr, &sr, 0xc02f).expect("keys");
        assert_eq!(keys.first, 1);
        assert_eq!(keys.open(1, 1, &body), Some((content.to_vec(), 0x17)));
        assert_eq!(keys.open(1, 2, &body), None, "another sequence number");
        assert_eq!(keys.open(0, 1, &body), None, "the client's keys");
        assert!(log.tls12_keys(&cr, &sr, 0x002f).is_none(), "CBC: not read");
        assert!(
            log.tls12_keys(&sr, &sr, 0xc02f).is_none(),
            "another session"
        );
    }

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }
}
