//! What a client fetched over HTTP to check a server's certificate: the
//! intermediate that signed it (the certificate's Authority Information
//! Access "CA Issuers" URL, when the server sent its certificate without
//! it), its revocation status (OCSP, RFC 6960: the AIA "OCSP" URL) or
//! its issuer's revocation list (a CRL distribution point). A client that
//! verifies online does it inside the TLS handshake, between the
//! server's flight and its own answer: the handshake waits for the
//! fetch's name lookup, connection and answer (`certificate_fetch` in
//! rttdoc-diagnose). Chromium fetches a missing intermediate (on every
//! platform since its own verifier), Windows' CryptoAPI both, GnuTLS'
//! `gnutls-cli --ocsp` and Firefox (OCSP) the status.
//!
//! Such a fetch is plain HTTP (RFC 5280 4.2.2.1: CA Issuers over `http`
//! or `ldap`; OCSP over `http`), so its request is read: a `POST` of
//! `application/ocsp-request`, a `GET` of a path ending `.crt`, `.cer`,
//! `.der`, `.p7c`, `.p7b` (a certificate) or `.crl`; or its answer: a
//! `Content-Type` of a certificate, a list or an OCSP response (Let's
//! Encrypt's intermediates are served at `http://r10.i.lencr.org/`, no
//! suffix; OCSP's GET carries the request base64 in its path).
//!
//! The tracker keeps each fetch under its client's address, from when
//! it began (its connection's name lookup or SYN when the connection was
//! opened for it, else its request) to its answer's first segment, if
//! one came; a TLS connection of that client hands the ones of its life
//! on with its facts, for the detector to place in its handshake's
//! turns. Bounded: the newest [`PER_CLIENT`] per client and [`KEPT`] in
//! all, whatever their age (fetches are rare: a client keeps what it
//! fetched, and a connection's handshake may lie minutes before its
//! end).

use std::collections::VecDeque;
use std::net::IpAddr;

use rustc_hash::FxHashMap;

use crate::connection::Stamp;
use crate::model::CertificateCheck;

/// Fetches kept per client.
const PER_CLIENT: usize = 8;

/// Fetches kept over all clients.
const KEPT: usize = 1024;

/// Characters of a fetch's URL kept to be shown (an OCSP GET's path is
/// its request in base64).
const URL_CHARS: usize = 96;

/// A fetch a client made to check a certificate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CertificateFetch {
    /// Its connection (`tcp.stream`).
    pub stream: u64,
    /// What it fetched.
    pub what: CertificateCheck,
    /// `http://` + its `Host` + its target (cut at [`URL_CHARS`]
    /// characters), or its request line's target without a `Host`; for a
    /// fetch its answer told, the server's address for the host
    /// ([`url_of_label`]: no request's head is kept for it).
    pub url: Box<str>,
    /// When the client began it: its connection's name lookup (the first
    /// query) or SYN when the connection was opened for it, else the
    /// request's first segment.
    pub began: Stamp,
    /// The request's first segment.
    pub request: Stamp,
    /// The answer's first segment, if one came.
    pub answer: Option<Stamp>,
}

/// What the HTTP/1.x request `line` (its head `head`) fetches to check a
/// certificate, when it says.
pub(crate) fn of_request(
    line: &crate::exchange::RequestLine<'_>,
    head: &[u8],
) -> Option<CertificateCheck> {
    match line.method {
        b"POST" => crate::exchange::header_value(head, b"content-type")
            .filter(|v| starts_with_ignore_case(v, b"application/ocsp-request"))
            .map(|_| CertificateCheck::Ocsp),
        b"GET" => {
            let target = line.target?;
            let path = memchr::memchr(b'?', target).map_or(target, |end| &target[..end]);
            // (Every suffix asked for is a dot and three letters: most
            // paths are told by their last four bytes.)
            let suffix = path.get(path.len().checked_sub(4)?..)?.strip_prefix(b".")?;
            let is = |s: &[u8]| suffix.eq_ignore_ascii_case(s);
            if [b"crt", b"cer", b"der", b"p7c", b"p7b"]
                .iter()
                .any(|s| is(*s))
            {
                Some(CertificateCheck::Intermediate)
            } else if is(b"crl") {
                Some(CertificateCheck::Crl)
            } else {
                None
            }
        }
        _ => None,
    }
}

/// What the HTTP/1.x response head `head` carries to check a
/// certificate, by its `Content-Type` (RFC 2585's and RFC 6960's types,
/// and the older ones CAs still serve).
pub(crate) fn of_response(head: &[u8]) -> Option<CertificateCheck> {
    let value = crate::exchange::header_value(head, b"content-type")?;
    let is = |t: &[u8]| starts_with_ignore_case(value, t);
    if is(b"application/ocsp-response") {
        Some(CertificateCheck::Ocsp)
    } else if is(b"application/pkix-crl") || is(b"application/x-pkcs7-crl") {
        Some(CertificateCheck::Crl)
    } else if is(b"application/pkix-cert")
        || is(b"application/x-x509-ca-cert")
        || is(b"application/pkcs7-mime")
        || is(b"application/x-pkcs7-certificates")
    {
        Some(CertificateCheck::Intermediate)
    } else {
        None
    }
}

fn starts_with_ignore_case(value: &[u8], prefix: &[u8]) -> bool {
    value
        .get(..prefix.len())
        .is_some_and(|v| v.eq_ignore_ascii_case(prefix))
}

/// The URL the request `line` (its head `head`) asked for, for people:
/// [`CertificateFetch::url`].
pub(crate) fn url_of(line: &crate::exchange::RequestLine<'_>, head: &[u8]) -> Box<str> {
    let target = String::from_utf8_lossy(line.target.unwrap_or_default());
    let url = match crate::exchange::header_value(head, b"host") {
        Some(host) if target.starts_with('/') => {
            format!("http://{}{target}", String::from_utf8_lossy(host))
        }
        _ => target.into_owned(),
    };
    match url.char_indices().nth(URL_CHARS) {
        Some((cut, _)) => format!("{}...", &url[..cut]).into(),
        None => url.into(),
    }
}

/// The URL of a request known by its `label` (`GET /`) alone, on a
/// connection to `server`, for people: `http://` + the server's address
/// (its port when not 80) + the label's target.
pub(crate) fn url_of_label(label: Option<&str>, server: crate::model::Endpoint) -> Box<str> {
    let target = label
        .and_then(|l| l.split_once(' '))
        .map_or("/", |(_, target)| target);
    // (The endpoint as people read it, `[v6]:port`, HTTP's port left
    // out.)
    let host = server.to_string();
    let host = host.strip_suffix(":80").unwrap_or(&host);
    format!("http://{host}{target}").into()
}

/// The fetches seen lately, per client (track.rs keeps one for the
/// capture).
#[derive(Default)]
pub(crate) struct CertificateFetches {
    by_client: FxHashMap<IpAddr, VecDeque<CertificateFetch>>,
    /// (client, stream, request frame) of each fetch kept, oldest first:
    /// what leaves past [`KEPT`].
    order: VecDeque<(IpAddr, u64, u64)>,
}

impl CertificateFetches {
    /// Whether any fetch is kept (a connection need not look otherwise).
    pub fn is_empty(&self) -> bool {
        self.by_client.is_empty()
    }

    /// A fetch `client` made: kept, the oldest leaving past the bounds.
    pub fn keep(&mut self, client: IpAddr, fetch: CertificateFetch) {
        if self.order.len() == KEPT {
            if let Some((whose, stream, frame)) = self.order.pop_front() {
                self.forget(whose, stream, frame);
            }
        }
        self.order
            .push_back((client, fetch.stream, fetch.request.frame));
        let list = self.by_client.entry(client).or_default();
        if list.len() == PER_CLIENT {
            // (Its entry in `order` finds nothing when its turn comes.)
            list.pop_front();
        }
        list.push_back(fetch);
    }

    fn forget(&mut self, client: IpAddr, stream: u64, frame: u64) {
        if let Some(list) = self.by_client.get_mut(&client) {
            list.retain(|f| (f.stream, f.request.frame) != (stream, frame));
            if list.is_empty() {
                self.by_client.remove(&client);
            }
        }
    }

    /// The answer to `client`'s fetch whose request began at `request`
    /// on `stream` came at `answer`.
    pub fn answered(&mut self, client: IpAddr, stream: u64, request: Stamp, answer: Stamp) {
        if let Some(f) = self.by_client.get_mut(&client).and_then(|list| {
            list.iter_mut()
                .find(|f| f.stream == stream && f.request == request)
        }) {
            f.answer.get_or_insert(answer);
        }
    }

    /// `client`'s fetches on other connections than `stream` that began
    /// from `from_ns` to `to_ns`, oldest first.
    pub fn during(
        &self,
        client: IpAddr,
        stream: u64,
        from_ns: i64,
        to_ns: i64,
    ) -> Vec<CertificateFetch> {
        self.by_client.get(&client).map_or_else(Vec::new, |list| {
            list.iter()
                .filter(|f| f.stream != stream && (from_ns..=to_ns).contains(&f.began.ts_ns))
                .cloned()
                .collect()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exchange::RequestLine;
    use std::net::Ipv4Addr;

    fn request(head: &[u8]) -> Option<CertificateCheck> {
        of_request(&RequestLine::of(head).expect("a request line"), head)
    }

    #[test]
    fn requests_that_fetch_for_a_certificate_are_told_by_their_line_or_type() {
        use CertificateCheck::*;
        // Chromium's AIA fetch, gnutls-cli's OCSP POST (its head alone in
        // the first segment), a CRL.
        assert_eq!(
            request(b"GET /int.crt HTTP/1.1\r\nHost: ca.example\r\n\r\n"),
            Some(Intermediate)
        );
        assert_eq!(
            request(b"POST / HTTP/1.0\r\nHost: ocsp.example:8088\r\nContent-Type: application/ocsp-request\r\nContent-Length: 68\r\n\r\n"),
            Some(Ocsp)
        );
        assert_eq!(
            request(b"GET /DigiCertGlobalRootG2.crl?x=1 HTTP/1.1\r\n\r\n"),
            Some(Crl)
        );
        assert_eq!(
            request(b"GET /certs/gts1c3.DER HTTP/1.1\r\n\r\n"),
            Some(Intermediate)
        );
        // Pages, an upload, a path whose dot is a directory's.
        assert_eq!(request(b"GET /index.html HTTP/1.1\r\n\r\n"), None);
        assert_eq!(request(b"GET /v1.crt/list HTTP/1.1\r\n\r\n"), None);
        assert_eq!(
            request(b"POST /crt HTTP/1.1\r\nContent-Type: application/json\r\n\r\n"),
            None
        );
        assert_eq!(request(b"PUT /a.crt HTTP/1.1\r\n\r\n"), None);
    }

    #[test]
    fn answers_that_carry_a_certificate_a_list_or_a_status_are_told_by_their_type() {
        use CertificateCheck::*;
        let answer = |t: &str| {
            of_response(format!("HTTP/1.1 200 OK\r\nContent-Type: {t}\r\n\r\n").as_bytes())
        };
        assert_eq!(answer("application/pkix-cert"), Some(Intermediate));
        assert_eq!(
            answer("application/PKCS7-mime; smime-type=certs-only"),
            Some(Intermediate)
        );
        assert_eq!(answer("application/ocsp-response"), Some(Ocsp));
        assert_eq!(answer("application/pkix-crl"), Some(Crl));
        assert_eq!(answer("text/html"), None);
        assert_eq!(of_response(b"HTTP/1.1 200 OK\r\n\r\n"), None);
    }

    #[test]
    fn a_fetch_told_by_its_answer_is_named_by_its_label_and_server() {
        let server = |ip: &str, port| crate::model::Endpoint {
            ip: ip.parse().unwrap(),
            port,
        };
        assert_eq!(
            &*url_of_label(Some("GET /"), server("10.0.0.9", 80)),
            "http://10.0.0.9/"
        );
        assert_eq!(
            &*url_of_label(Some("GET /MFEwTzBN"), server("2001:db8::9", 8080)),
            "http://[2001:db8::9]:8080/MFEwTzBN"
        );
        assert_eq!(
            &*url_of_label(None, server("10.0.0.9", 80)),
            "http://10.0.0.9/"
        );
    }

    #[test]
    fn a_fetchs_url_is_its_host_and_target_cut_short() {
        let head = b"GET /int.crt HTTP/1.1\r\nHost: ca.example:8080\r\n\r\n";
        let line = RequestLine::of(head).unwrap();
        assert_eq!(&*url_of(&line, head), "http://ca.example:8080/int.crt");
        let long = format!(
            "GET /{} HTTP/1.1\r\nHost: o.example\r\n\r\n",
            "M".repeat(300)
        );
        let line = RequestLine::of(long.as_bytes()).unwrap();
        let url = url_of(&line, long.as_bytes());
        assert_eq!(url.chars().count(), URL_CHARS + 3);
        assert!(url.starts_with("http://o.example/MMM") && url.ends_with("..."));
    }

    const MS: i64 = 1_000_000;

    fn at(frame: u64, ms: i64) -> Stamp {
        Stamp {
            frame,
            ts_ns: ms * MS,
        }
    }

    fn fetch(stream: u64, began_ms: i64) -> CertificateFetch {
        CertificateFetch {
            stream,
            what: CertificateCheck::Intermediate,
            url: "http://ca.example/int.crt".into(),
            began: at(stream * 10, began_ms),
            request: at(stream * 10 + 3, began_ms + 40),
            answer: None,
        }
    }

    #[test]
    fn a_clients_fetches_are_found_by_when_they_began_and_stay_bounded() {
        let client = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1));
        let other = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2));
        let mut kept = CertificateFetches::default();
        assert!(kept.is_empty());
        kept.keep(client, fetch(2, 100));
        kept.answered(client, 2, at(23, 140), at(25, 180));
        assert_eq!(
            kept.during(client, 0, 90 * MS, 200 * MS)[0].answer,
            Some(at(25, 180))
        );
        // Not another client's, not the connection's own, not outside the
        // span asked for.
        assert!(kept.during(other, 0, 0, 1_000 * MS).is_empty());
        assert!(kept.during(client, 2, 0, 1_000 * MS).is_empty());
        assert!(kept.during(client, 0, 101 * MS, 1_000 * MS).is_empty());
        // The newest PER_CLIENT per client.
        for s in 3..3 + PER_CLIENT as u64 {
            kept.keep(client, fetch(s, s as i64 * 1000));
        }
        let all = kept.during(client, 0, 0, i64::MAX);
        assert_eq!(all.len(), PER_CLIENT);
        assert_eq!(all[0].stream, 3);
        // And KEPT in all: the oldest client's leave first.
        for n in 0..KEPT as u64 {
            let ip = IpAddr::V4(Ipv4Addr::from(0x0a01_0000 + n as u32));
            kept.keep(ip, fetch(100 + n, 0));
        }
        assert!(kept.during(client, 0, 0, i64::MAX).is_empty());
        assert!(kept.by_client.len() <= KEPT && kept.order.len() == KEPT);
    }
}
