//! `early_data_unsafe` — a non-idempotent request (POST, PUT, DELETE,
//! PATCH ...) travelled in TLS 1.3 0-RTT early data. Early data can be
//! replayed by anyone who recorded it (RFC 8446 8, RFC 8470): a replayed
//! POST runs twice.
//!
//! Signature: the client's early data, decrypted with the session's
//! `CLIENT_EARLY_TRAFFIC_SECRET` from a key log (`--keylog`; nothing else
//! can see inside it), starts an HTTP/1.x request whose method is not
//! safe (GET, HEAD, OPTIONS, TRACE), or an HTTP/2 HEADERS frame whose
//! :method is POST (HPACK static index 3) or a literal other than GET/HEAD.
//! Not reported when the server visibly rejected the early data (the
//! request was then sent again after the handshake, replay-safe).
//! Cost: none in time; it is a correctness risk.
//! Fix: clients send only safe requests early; servers refuse unsafe
//! early requests with 425 Too Early (nginx: `proxy_set_header Early-Data
//! $ssl_early_data;` and let the application answer 425), or turn 0-RTT
//! off where requests are not idempotent (`ssl_early_data off;`).

use super::Facts;
use crate::model::{Detail, Finding, FindingKind, Phase, TlsMessage};

const SAFE: &[&str] = &["GET", "HEAD", "OPTIONS", "TRACE"];

/// The request line of an HTTP/1.x request, if `data` starts with one.
fn http1_request(data: &[u8]) -> Option<(String, String)> {
    let line_end = data.windows(2).position(|w| w == b"\r\n")?;
    let line = std::str::from_utf8(&data[..line_end]).ok()?;
    let mut parts = line.split(' ');
    let (method, target, version) = (parts.next()?, parts.next()?, parts.next()?);
    let token = !method.is_empty() && method.bytes().all(|b| b.is_ascii_uppercase());
    (token && version.starts_with("HTTP/1.")).then(|| (method.to_string(), target.to_string()))
}

/// The :method of the first HEADERS frame after the HTTP/2 preface, from
/// the first header field when it is the static-table :method.
fn http2_method(data: &[u8]) -> Option<String> {
    let mut rest = data.strip_prefix(rttdoc_wire::http2::PREFACE)?;
    while rest.len() >= 9 {
        let len = u32::from_be_bytes([0, rest[0], rest[1], rest[2]]) as usize;
        let (kind, flags) = (rest[3], rest[4]);
        let payload = rest.get(9..9 + len)?;
        if kind == 1 {
            let mut p = payload;
            if flags & 0x08 != 0 {
                p = p.get(1..)?; // pad length (the padding is at the end)
            }
            if flags & 0x20 != 0 {
                p = p.get(5..)?; // priority
            }
            return match *p.first()? {
                0x82 => Some("GET".into()),
                0x83 => Some("POST".into()),
                // Literal with the :method name (index 2), short raw value.
                b if b & 0xc0 == 0x40 && b & 0x3f == 2 || b & 0xf0 == 0 && b & 0x0f == 2 => {
                    let n = (*p.get(1)? & 0x7f) as usize;
                    let huffman = *p.get(1)? & 0x80 != 0;
                    let value = p.get(2..2 + n)?;
                    (!huffman).then(|| String::from_utf8_lossy(value).into_owned())
                }
                _ => None,
            };
        }
        rest = &rest[9 + len..];
    }
    None
}

/// The method and target (empty for HTTP/2) of the request that opens
/// decrypted early data, HTTP/1.x or HTTP/2.
pub fn request_in(plain: &[u8]) -> Option<(String, String)> {
    http1_request(plain).or_else(|| http2_method(plain).map(|m| (m, String::new())))
}

pub fn detect(f: &Facts<'_>, out: &mut Vec<Finding>) {
    let (Some(plain), Some(tls)) = (f.early_plaintext, &f.report.tls) else {
        return;
    };
    if tls.early_data_accepted == Some(false) {
        return;
    }
    let Some((method, target)) = request_in(plain) else {
        return;
    };
    if SAFE.contains(&method.as_str()) {
        return;
    }
    let mut x = f.finding(FindingKind::EarlyDataUnsafe, Some(Phase::FirstByte));
    x.frames = tls
        .messages
        .iter()
        .filter(|m| m.message == TlsMessage::EarlyData)
        .map(|m| m.frame)
        .collect();
    x.frames.dedup();
    x.confidence = 1.0;
    let request = format!("{method} {target}").trim_end().to_string();
    x.detail = Detail::EarlyDataUnsafe {
        request,
        method: method.to_string(),
        accepted: tls.early_data_accepted,
    };
    x.display_filter = f.filter_frames(&x.frames);
    out.push(x);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http1_request_lines() {
        assert_eq!(
            http1_request(b"POST /pay HTTP/1.1\r\nHost: a\r\n\r\n"),
            Some(("POST".into(), "/pay".into()))
        );
        assert_eq!(http1_request(b"GET / HTTP/1.1\r\n").unwrap().0, "GET");
        assert_eq!(http1_request(b"post / HTTP/1.1\r\n"), None);
        assert_eq!(http1_request(b"\x00\x01garbage\r\n"), None);
        assert_eq!(http1_request(b"POST / HTTP/1.1"), None);
    }

    #[test]
    fn http2_methods_from_hpack() {
        let frame = |first: &[u8]| {
            let mut v = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
            v.extend_from_slice(&[0, 0, 0, 4, 0, 0, 0, 0, 0]); // empty SETTINGS
            v.extend_from_slice(&[0, 0, first.len() as u8, 1, 0x04, 0, 0, 0, 1]);
            v.extend_from_slice(first);
            v
        };
        assert_eq!(http2_method(&frame(&[0x83, 0x86])).as_deref(), Some("POST"));
        assert_eq!(http2_method(&frame(&[0x82])).as_deref(), Some("GET"));
        assert_eq!(
            http2_method(&frame(&[0x42, 0x03, b'P', b'U', b'T'])).as_deref(),
            Some("PUT")
        );
        assert_eq!(http2_method(b"GET / HTTP/1.1\r\n"), None);
        assert_eq!(http2_method(&frame(&[])), None);
    }
}
