//! Just enough HTTP/2 (RFC 9113) for one request on a fresh TLS
//! connection whose ALPN chose `h2`: the client preface and SETTINGS,
//! one HEADERS (+ DATA) request on stream 1, and the response read frame
//! by frame until END_STREAM, answering what the server asks for on the
//! way (SETTINGS ACK, PING ACK) and opening the receive windows as the
//! body is consumed. Header blocks are decoded with `httlib-hpack`
//! (rttdoc_wire::hpack; every block must be decoded, in order, to keep
//! HPACK's dynamic table in step with the server's); the request's header
//! block is written as HPACK literals without indexing, so it never
//! touches a dynamic table.

use std::time::Instant;

pub use rttdoc_wire::http2::PREFACE;
use rttdoc_wire::http2::{
    ACK, CONTINUATION, DATA, END_HEADERS, END_STREAM, GOAWAY, HEADERS, PADDED, PING, PRIORITY_FLAG,
    PUSH_PROMISE, RST_STREAM, SETTINGS, WINDOW_UPDATE,
};

/// Our receive window, stream and connection: large enough that a
/// server's first flights of a body are never held by flow control
/// (curl asks for 32 MiB per stream, browsers 6-15 MiB).
pub const WINDOW: u32 = 16 << 20;
/// The default initial window (RFC 9113 section 6.9.2).
const DEFAULT_WINDOW: u32 = 65_535;
/// SETTINGS_MAX_FRAME_SIZE we leave at its default: larger frames from
/// the server are a protocol error.
pub const MAX_FRAME: usize = 16_384;

/// The one stream the probe opens.
const STREAM: u32 = 1;

fn frame(out: &mut Vec<u8>, kind: u8, flags: u8, stream: u32, payload: &[u8]) {
    let n = payload.len() as u32;
    out.extend_from_slice(&n.to_be_bytes()[1..]);
    out.push(kind);
    out.push(flags);
    out.extend_from_slice(&(stream & 0x7fff_ffff).to_be_bytes());
    out.extend_from_slice(payload);
}

/// The preface, our SETTINGS (no server push, a [`WINDOW`] per stream)
/// and a WINDOW_UPDATE that opens the connection's window as far: what
/// curl (nghttp2) sends before its first request.
pub fn preface() -> Vec<u8> {
    let mut out = PREFACE.to_vec();
    let mut settings = Vec::new();
    // SETTINGS_ENABLE_PUSH = 0, SETTINGS_INITIAL_WINDOW_SIZE = WINDOW.
    settings.extend_from_slice(&2u16.to_be_bytes());
    settings.extend_from_slice(&0u32.to_be_bytes());
    settings.extend_from_slice(&4u16.to_be_bytes());
    settings.extend_from_slice(&WINDOW.to_be_bytes());
    frame(&mut out, SETTINGS, 0, 0, &settings);
    frame(
        &mut out,
        WINDOW_UPDATE,
        0,
        0,
        &(WINDOW - DEFAULT_WINDOW).to_be_bytes(),
    );
    out
}

/// HPACK integer with an `n`-bit prefix (RFC 7541 section 5.1); `first`
/// holds the bits above the prefix.
fn hpack_int(out: &mut Vec<u8>, first: u8, n: u32, mut v: usize) {
    let max = (1usize << n) - 1;
    if v < max {
        out.push(first | v as u8);
        return;
    }
    out.push(first | max as u8);
    v -= max;
    while v >= 128 {
        out.push((v % 128) as u8 | 0x80);
        v /= 128;
    }
    out.push(v as u8);
}

/// A literal header field without indexing, new name (RFC 7541 section
/// 6.2.2), strings not Huffman-coded.
fn hpack_literal(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    out.push(0x00);
    hpack_int(out, 0, 7, name.len());
    out.extend_from_slice(name);
    hpack_int(out, 0, 7, value.len());
    out.extend_from_slice(value);
}

/// Header fields HTTP/2 forbids (RFC 9113 section 8.2.2); `Host` is
/// carried by `:authority`.
fn connection_specific(name: &str) -> bool {
    matches!(
        name,
        "host" | "connection" | "keep-alive" | "proxy-connection" | "transfer-encoding" | "upgrade"
    )
}

/// The request on stream 1: HEADERS (split into CONTINUATION frames past
/// [`MAX_FRAME`]), then the body in DATA frames, END_STREAM on the last.
/// `headers` are `Name: value` lines as given to `-H`. Bodies are limited
/// to the server's initial window (64 KiB - 1), which the probe does not
/// wait on.
pub fn request(
    method: &str,
    authority: &str,
    path: &str,
    headers: &[String],
    body: Option<&[u8]>,
) -> Result<Vec<u8>, String> {
    let body = body.unwrap_or_default();
    if body.len() > DEFAULT_WINDOW as usize {
        return Err(format!(
            "a request body of {} bytes is over HTTP/2's initial window of {DEFAULT_WINDOW}: \
             the probe does not wait on flow control for a request",
            body.len()
        ));
    }
    let mut block = Vec::new();
    hpack_literal(&mut block, b":method", method.as_bytes());
    hpack_literal(&mut block, b":scheme", b"https");
    hpack_literal(&mut block, b":authority", authority.as_bytes());
    hpack_literal(&mut block, b":path", path.as_bytes());
    let agent = format!("rttdoc-probe/{}", env!("CARGO_PKG_VERSION"));
    hpack_literal(&mut block, b"user-agent", agent.as_bytes());
    hpack_literal(&mut block, b"accept", b"*/*");
    for h in headers {
        let Some((k, v)) = h.split_once(':') else {
            continue;
        };
        let k = k.trim().to_ascii_lowercase();
        if k.is_empty() || connection_specific(&k) {
            continue;
        }
        hpack_literal(&mut block, k.as_bytes(), v.trim().as_bytes());
    }
    if !body.is_empty() {
        hpack_literal(
            &mut block,
            b"content-length",
            body.len().to_string().as_bytes(),
        );
    }
    let mut out = Vec::new();
    let chunks: Vec<&[u8]> = block.chunks(MAX_FRAME).collect();
    for (i, c) in chunks.iter().enumerate() {
        let last = i + 1 == chunks.len();
        let mut flags = if last { END_HEADERS } else { 0 };
        let kind = if i == 0 {
            if body.is_empty() {
                flags |= END_STREAM;
            }
            HEADERS
        } else {
            CONTINUATION
        };
        frame(&mut out, kind, flags, STREAM, c);
    }
    let parts: Vec<&[u8]> = body.chunks(MAX_FRAME).collect();
    for (i, c) in parts.iter().enumerate() {
        let flags = if i + 1 == parts.len() { END_STREAM } else { 0 };
        frame(&mut out, DATA, flags, STREAM, c);
    }
    Ok(out)
}

/// The response on stream 1, read as its bytes arrive.
pub struct Response {
    /// Bytes of a frame not complete yet.
    buf: Vec<u8>,
    /// When the first byte of `buf` arrived.
    partial_at: Option<Instant>,
    decoder: rttdoc_wire::hpack::Decoder,
    /// A header block waiting for its CONTINUATION frames, and whether
    /// its HEADERS frame ended the stream.
    block: Option<(Vec<u8>, bool)>,
    /// When the first byte of the response's first HEADERS frame arrived
    /// (curl's time_starttransfer).
    pub headers_at: Option<Instant>,
    /// The final (non-1xx) status.
    pub status: Option<u16>,
    /// The final response's `location` field.
    pub location: Option<String>,
    pub body_bytes: u64,
    /// END_STREAM seen on stream 1.
    pub complete: bool,
    /// DATA bytes received and not yet given back by a WINDOW_UPDATE.
    unacked: u32,
}

impl Default for Response {
    fn default() -> Self {
        Response::new()
    }
}

impl Response {
    pub fn new() -> Response {
        Response {
            buf: Vec::new(),
            partial_at: None,
            decoder: rttdoc_wire::hpack::Decoder::new(4096),
            block: None,
            headers_at: None,
            status: None,
            location: None,
            body_bytes: 0,
            complete: false,
            unacked: 0,
        }
    }

    /// Adds bytes read at `at`. Returns the frames to send in answer
    /// (SETTINGS ACK, PING ACK, WINDOW_UPDATE), or why the exchange
    /// cannot go on (a protocol error, the stream reset, GOAWAY).
    pub fn push(&mut self, data: &[u8], at: Instant) -> Result<Vec<u8>, String> {
        let mut reply = Vec::new();
        if data.is_empty() {
            return Ok(reply);
        }
        if self.buf.is_empty() {
            self.partial_at = Some(at);
        }
        self.buf.extend_from_slice(data);
        let mut pos = 0;
        // The frame at `pos` began arriving at `start`: the first one when
        // the earlier partial frame's first byte came, every later one in
        // this read (all complete frames are taken at each read).
        let mut start = self.partial_at.unwrap_or(at);
        while self.buf.len() - pos >= 9 {
            let h = &self.buf[pos..pos + 9];
            let len = u32::from_be_bytes([0, h[0], h[1], h[2]]) as usize;
            let (kind, flags) = (h[3], h[4]);
            let stream = u32::from_be_bytes([h[5], h[6], h[7], h[8]]) & 0x7fff_ffff;
            if len > MAX_FRAME {
                return Err(format!(
                    "the server sent a frame of {len} bytes, over the {MAX_FRAME} allowed"
                ));
            }
            if self.buf.len() - pos < 9 + len {
                break;
            }
            let payload = self.buf[pos + 9..pos + 9 + len].to_vec();
            pos += 9 + len;
            self.frame(kind, flags, stream, &payload, start, &mut reply)?;
            start = at;
        }
        self.buf.drain(..pos);
        self.partial_at = (!self.buf.is_empty()).then_some(start);
        Ok(reply)
    }

    fn frame(
        &mut self,
        kind: u8,
        flags: u8,
        stream: u32,
        payload: &[u8],
        start: Instant,
        reply: &mut Vec<u8>,
    ) -> Result<(), String> {
        if self.block.is_some() && kind != CONTINUATION {
            return Err("a header block was interrupted by another frame".into());
        }
        match kind {
            DATA if stream == STREAM => {
                let data = unpad(flags, payload)?;
                self.body_bytes += data.len() as u64;
                // Flow control counts the whole payload, padding included.
                self.unacked = self.unacked.saturating_add(payload.len() as u32);
                if self.unacked >= WINDOW / 2 && flags & END_STREAM == 0 {
                    let inc = self.unacked.to_be_bytes();
                    frame(reply, WINDOW_UPDATE, 0, 0, &inc);
                    frame(reply, WINDOW_UPDATE, 0, STREAM, &inc);
                    self.unacked = 0;
                }
                if flags & END_STREAM != 0 {
                    self.complete = true;
                }
            }
            HEADERS if stream == STREAM => {
                self.headers_at.get_or_insert(start);
                let mut fragment = unpad(flags, payload)?;
                if flags & PRIORITY_FLAG != 0 {
                    fragment = fragment
                        .get(5..)
                        .ok_or("a HEADERS frame too short for its priority")?;
                }
                let block = (fragment.to_vec(), flags & END_STREAM != 0);
                if flags & END_HEADERS != 0 {
                    self.header_block(block)?;
                } else {
                    self.block = Some(block);
                }
            }
            CONTINUATION => {
                let Some((mut block, end)) = self.block.take() else {
                    return Err("a CONTINUATION frame without a header block".into());
                };
                block.extend_from_slice(payload);
                if block.len() > 1 << 20 {
                    return Err("a header block over 1 MiB".into());
                }
                if flags & END_HEADERS != 0 {
                    self.header_block((block, end))?;
                } else {
                    self.block = Some((block, end));
                }
            }
            SETTINGS if flags & ACK == 0 => {
                if stream != 0 || !payload.len().is_multiple_of(6) {
                    return Err("a malformed SETTINGS frame".into());
                }
                frame(reply, SETTINGS, ACK, 0, &[]);
            }
            PING if flags & ACK == 0 => {
                frame(reply, PING, ACK, 0, payload);
            }
            RST_STREAM if stream == STREAM => {
                let code = payload
                    .get(..4)
                    .map_or(0, |c| u32::from_be_bytes(c.try_into().unwrap_or_default()));
                return Err(format!(
                    "the server reset the request's stream ({})",
                    error_name(code)
                ));
            }
            GOAWAY => {
                let word = |i: usize| {
                    payload
                        .get(i..i + 4)
                        .map(|c| u32::from_be_bytes(c.try_into().unwrap_or_default()))
                };
                let last = word(0).unwrap_or(0) & 0x7fff_ffff;
                let code = word(4).unwrap_or(0);
                // A graceful GOAWAY that still covers stream 1 lets the
                // response finish.
                if last < STREAM || code != 0 {
                    return Err(format!(
                        "the server sent GOAWAY ({}, last stream {last})",
                        error_name(code)
                    ));
                }
            }
            PUSH_PROMISE => {
                return Err("the server pushed although push was disabled".into());
            }
            // Frames of other streams, WINDOW_UPDATE (the probe sends
            // within the initial window), PRIORITY, ACKs and unknown
            // types are ignored, as the protocol allows.
            _ => {}
        }
        Ok(())
    }

    fn header_block(&mut self, (mut block, end_stream): (Vec<u8>, bool)) -> Result<(), String> {
        let mut fields = Vec::new();
        self.decoder
            .decode(&mut block, &mut fields)
            .map_err(|_| "the server's header block does not decode (HPACK)".to_string())?;
        let status = fields
            .iter()
            .find(|(k, _, _)| k == b":status")
            .and_then(|(_, v, _)| std::str::from_utf8(v).ok()?.parse::<u16>().ok());
        match (self.status, status) {
            // An interim response (103 Early Hints, 100 Continue).
            (None, Some(s)) if (100..200).contains(&s) => {}
            (None, Some(s)) => {
                self.status = Some(s);
                self.location = fields
                    .iter()
                    .find(|(k, _, _)| k == b"location")
                    .map(|(_, v, _)| String::from_utf8_lossy(v).trim().to_string());
            }
            (None, None) => return Err("a response without :status".into()),
            // Trailers.
            (Some(_), _) => {}
        }
        if end_stream {
            self.complete = true;
        }
        Ok(())
    }
}

/// The payload without its padding (PADDED flag).
fn unpad(flags: u8, payload: &[u8]) -> Result<&[u8], String> {
    if flags & PADDED == 0 {
        return Ok(payload);
    }
    let pad = *payload
        .first()
        .ok_or("a padded frame without its pad length")? as usize;
    payload
        .get(1..payload.len().saturating_sub(pad))
        .filter(|_| pad < payload.len())
        .ok_or_else(|| "a frame's padding is longer than the frame".to_string())
}

fn error_name(code: u32) -> String {
    let name = match code {
        0x0 => "NO_ERROR",
        0x1 => "PROTOCOL_ERROR",
        0x2 => "INTERNAL_ERROR",
        0x3 => "FLOW_CONTROL_ERROR",
        0x5 => "STREAM_CLOSED",
        0x6 => "FRAME_SIZE_ERROR",
        0x7 => "REFUSED_STREAM",
        0x8 => "CANCEL",
        0x9 => "COMPRESSION_ERROR",
        0xb => "ENHANCE_YOUR_CALM",
        0xd => "HTTP_1_1_REQUIRED",
        _ => return format!("error code {code}"),
    };
    name.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Splits a byte string of frames into (type, flags, stream, payload).
    fn frames(mut b: &[u8]) -> Vec<(u8, u8, u32, Vec<u8>)> {
        let mut v = Vec::new();
        while b.len() >= 9 {
            let len = u32::from_be_bytes([0, b[0], b[1], b[2]]) as usize;
            let stream = u32::from_be_bytes([b[5], b[6], b[7], b[8]]);
            v.push((b[3], b[4], stream, b[9..9 + len].to_vec()));
            b = &b[9 + len..];
        }
        assert!(b.is_empty(), "trailing bytes {b:?}");
        v
    }

    /// A header block's fields, as a server's decoder reads them.
    fn decode(mut block: Vec<u8>) -> Vec<(Vec<u8>, Vec<u8>, u8)> {
        let mut fields = Vec::new();
        httlib_hpack::Decoder::default()
            .decode(&mut block, &mut fields)
            .unwrap();
        fields
    }

    /// A server's header block: Huffman coded, added to its table.
    fn headers_frame(fields: &[(&str, &str)], flags: u8) -> Vec<u8> {
        use httlib_hpack::Encoder;
        let mut enc = Encoder::default();
        let mut block = Vec::new();
        for (k, v) in fields {
            let how = Encoder::HUFFMAN_NAME | Encoder::HUFFMAN_VALUE | Encoder::WITH_INDEXING;
            let field = (k.as_bytes().to_vec(), v.as_bytes().to_vec(), how);
            enc.encode(field, &mut block).unwrap();
        }
        let mut out = Vec::new();
        frame(&mut out, HEADERS, flags | END_HEADERS, STREAM, &block);
        out
    }

    #[test]
    fn preface_disables_push_and_opens_both_windows() {
        let p = preface();
        assert!(p.starts_with(PREFACE));
        let f = frames(&p[PREFACE.len()..]);
        assert_eq!(f[0].0, SETTINGS);
        assert_eq!(f[0].3, [0, 2, 0, 0, 0, 0, 0, 4, 0x01, 0, 0, 0]);
        assert_eq!(f[1].0, WINDOW_UPDATE);
        let inc = u32::from_be_bytes(f[1].3[..].try_into().unwrap());
        assert_eq!(inc + DEFAULT_WINDOW, WINDOW);
    }

    #[test]
    fn request_header_block_decodes_to_the_pseudo_headers_and_drops_host() {
        let r = request(
            "POST",
            "h.example:8443",
            "/x?y",
            &["Host: other".into(), "X-Probe: 1".into()],
            Some(b"abc"),
        )
        .unwrap();
        let f = frames(&r);
        assert_eq!((f[0].0, f[0].1, f[0].2), (HEADERS, END_HEADERS, 1));
        let fields = decode(f[0].3.clone());
        let get = |k: &str| {
            fields
                .iter()
                .find(|(n, _, _)| n == k.as_bytes())
                .map(|(_, v, _)| String::from_utf8(v.clone()).unwrap())
        };
        assert_eq!(get(":method").as_deref(), Some("POST"));
        assert_eq!(get(":authority").as_deref(), Some("h.example:8443"));
        assert_eq!(get(":path").as_deref(), Some("/x?y"));
        assert_eq!(get("x-probe").as_deref(), Some("1"));
        assert_eq!(get("content-length").as_deref(), Some("3"));
        assert_eq!(get("host"), None);
        assert_eq!(
            (f[1].0, f[1].1, &f[1].3[..]),
            (DATA, END_STREAM, &b"abc"[..])
        );
    }

    #[test]
    fn a_long_header_block_continues_in_continuation_frames() {
        let big = format!("X-Big: {}", "a".repeat(40_000));
        let r = request("GET", "h", "/", &[big], None).unwrap();
        let f = frames(&r);
        let kinds: Vec<(u8, u8)> = f.iter().map(|x| (x.0, x.1)).collect();
        assert_eq!(
            kinds,
            [
                (HEADERS, END_STREAM),
                (CONTINUATION, 0),
                (CONTINUATION, END_HEADERS)
            ]
        );
        let block: Vec<u8> = f.iter().flat_map(|x| x.3.clone()).collect();
        let fields = decode(block);
        assert!(fields
            .iter()
            .any(|(k, v, _)| k == b"x-big" && v.len() == 40_000));
    }

    #[test]
    fn hpack_integers_past_the_prefix_continue_in_7_bit_groups() {
        // RFC 7541 C.1.2: 1337 with a 5-bit prefix.
        let mut v = Vec::new();
        hpack_int(&mut v, 0, 5, 1337);
        assert_eq!(v, [31, 154, 10]);
    }

    #[test]
    fn response_reads_the_same_in_any_split_and_answers_settings_and_ping() {
        let mut wire = Vec::new();
        frame(&mut wire, SETTINGS, 0, 0, &[0, 3, 0, 0, 0, 128]);
        frame(&mut wire, PING, 0, 0, b"12345678");
        wire.extend(headers_frame(&[(":status", "103")], 0));
        wire.extend(headers_frame(&[(":status", "200"), ("server", "nginx")], 0));
        frame(&mut wire, DATA, PADDED, STREAM, b"\x02hello\0\0");
        frame(&mut wire, DATA, END_STREAM, STREAM, b" world");
        // The 103's HEADERS frame begins after the SETTINGS and PING.
        let first_headers = (9 + 6) + (9 + 8);
        let t0 = Instant::now();
        for cut in 1..wire.len() {
            let (t1, t2) = (t0 + Duration::from_millis(1), t0 + Duration::from_millis(2));
            let mut r = Response::new();
            let mut reply = r.push(&wire[..cut], t1).unwrap();
            assert!(!r.complete, "complete too early at {cut}");
            reply.extend(r.push(&wire[cut..], t2).unwrap());
            assert!(r.complete, "not complete at {cut}");
            assert_eq!((r.status, r.body_bytes), (Some(200), 11), "cut {cut}");
            let expect = if cut > first_headers { t1 } else { t2 };
            assert_eq!(r.headers_at, Some(expect), "cut {cut}");
            let f = frames(&reply);
            assert_eq!(
                f,
                [
                    (SETTINGS, ACK, 0, vec![]),
                    (PING, ACK, 0, b"12345678".to_vec())
                ]
            );
        }
    }

    #[test]
    fn a_large_body_gives_back_the_window_as_it_is_read() {
        let mut r = Response::new();
        let t = Instant::now();
        r.push(&headers_frame(&[(":status", "200")], 0), t).unwrap();
        let chunk = vec![0u8; MAX_FRAME];
        let mut updates = 0u64;
        let n = (WINDOW as usize / MAX_FRAME) * 2;
        for i in 0..n {
            let mut f = Vec::new();
            let flags = if i + 1 == n { END_STREAM } else { 0 };
            frame(&mut f, DATA, flags, STREAM, &chunk);
            for (kind, _, stream, p) in frames(&r.push(&f, t).unwrap()) {
                assert_eq!(kind, WINDOW_UPDATE);
                if stream == STREAM {
                    updates += u32::from_be_bytes(p[..].try_into().unwrap()) as u64;
                }
            }
        }
        assert!(r.complete);
        assert_eq!(r.body_bytes, (n * MAX_FRAME) as u64);
        // Never more outstanding than the window, and given back in
        // steps of half of it.
        assert!(r.body_bytes - updates <= WINDOW as u64, "{updates}");
        assert!(updates >= WINDOW as u64, "{updates}");
    }

    #[test]
    fn reset_goaway_push_and_oversized_frames_end_the_exchange() {
        let t = Instant::now();
        let mut f = Vec::new();
        frame(&mut f, RST_STREAM, 0, STREAM, &7u32.to_be_bytes());
        assert!(Response::new()
            .push(&f, t)
            .unwrap_err()
            .contains("REFUSED_STREAM"));
        let mut g = Vec::new();
        frame(&mut g, GOAWAY, 0, 0, &[0, 0, 0, 0, 0, 0, 0, 1]);
        assert!(Response::new().push(&g, t).unwrap_err().contains("GOAWAY"));
        // A graceful GOAWAY covering stream 1 is no error.
        let mut ok = Vec::new();
        frame(&mut ok, GOAWAY, 0, 0, &[0, 0, 0, 1, 0, 0, 0, 0]);
        assert!(Response::new().push(&ok, t).is_ok());
        let mut p = Vec::new();
        frame(&mut p, PUSH_PROMISE, END_HEADERS, STREAM, &[0, 0, 0, 2]);
        assert!(Response::new().push(&p, t).is_err());
        let big = [0u8, 0x40, 0x01, DATA, 0, 0, 0, 0, 1];
        assert!(Response::new().push(&big, t).unwrap_err().contains("frame"));
    }

    proptest::proptest! {
        /// Whatever a server sends, in whatever pieces, reading it never
        /// panics and never counts more body than arrived.
        #[test]
        fn any_bytes_in_any_split_never_panic(
            bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..600),
            cut in 0usize..600,
        ) {
            let t = Instant::now();
            let mut r = Response::new();
            let cut = cut.min(bytes.len());
            if r.push(&bytes[..cut], t).is_ok() {
                let _ = r.push(&bytes[cut..], t);
            }
            proptest::prop_assert!(r.body_bytes <= bytes.len() as u64);
        }

        /// Well-formed frames of any type, flags and stream, in any two
        /// pieces, read as they do in one: the same status, body, end
        /// and error.
        #[test]
        fn frame_sequences_read_the_same_in_any_split(
            frames in proptest::collection::vec(
                (0u8..11, proptest::num::u8::ANY, 0u32..3,
                 proptest::collection::vec(proptest::num::u8::ANY, 0..40)),
                0..12,
            ),
            cut in 0usize..600,
        ) {
            let mut wire = Vec::new();
            for (kind, flags, stream, payload) in &frames {
                frame(&mut wire, *kind, *flags, *stream, payload);
            }
            let t = Instant::now();
            let read = |pieces: &[&[u8]]| {
                let mut r = Response::new();
                let mut err = None;
                for p in pieces {
                    if let Err(e) = r.push(p, t) {
                        err = Some(e);
                        break;
                    }
                }
                (r.status, r.body_bytes, r.complete, err.is_some())
            };
            let cut = cut.min(wire.len());
            let whole = read(&[&wire]);
            proptest::prop_assert_eq!(read(&[&wire[..cut], &wire[cut..]]), whole);
            proptest::prop_assert!(whole.1 <= wire.len() as u64);
        }
    }
}
