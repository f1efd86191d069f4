//! Just enough HTTP/1.1 to know where a response ends: the status line,
//! `Content-Length`, `Transfer-Encoding: chunked`, or the end of the
//! connection; bodies without one (HEAD, 1xx, 204, 304).

/// A response being read.
#[derive(Debug, Default)]
pub struct Response {
    buf: Vec<u8>,
    /// Where the final (non-1xx) head ends, once seen.
    body_start: Option<usize>,
    pub status: Option<u16>,
    pub version: Option<String>,
    framing: Framing,
    /// Set when the response is complete.
    pub complete: bool,
    pub body_bytes: u64,
    head_request: bool,
}

#[derive(Debug, Default, Clone, Copy, PartialEq)]
enum Framing {
    #[default]
    Unknown,
    Length(u64),
    Chunked,
    UntilClose,
    None,
}

impl Response {
    pub fn new(method: &str) -> Response {
        Response {
            head_request: method.eq_ignore_ascii_case("HEAD"),
            ..Default::default()
        }
    }

    /// Adds bytes read from the connection; returns whether the response
    /// is complete.
    pub fn push(&mut self, data: &[u8]) -> bool {
        self.buf.extend_from_slice(data);
        self.advance();
        self.complete
    }

    /// The connection closed: a close-delimited body is complete.
    pub fn eof(&mut self) -> bool {
        if self.framing == Framing::UntilClose {
            self.complete = true;
        }
        self.complete
    }

    fn advance(&mut self) {
        while self.body_start.is_none() {
            let from = 0;
            let Some(end) = find(&self.buf[from..], b"\r\n\r\n") else {
                return;
            };
            let head = String::from_utf8_lossy(&self.buf[..end]).into_owned();
            let mut lines = head.split("\r\n");
            let status_line = lines.next().unwrap_or("");
            let mut parts = status_line.split_whitespace();
            let version = parts.next().unwrap_or("").to_string();
            let status: u16 = parts.next().and_then(|s| s.parse().ok()).unwrap_or(0);
            if (100..200).contains(&status) && status != 101 {
                // An interim response (100 Continue, 103 Early Hints).
                self.buf.drain(..end + 4);
                continue;
            }
            let mut length = None;
            let mut chunked = false;
            for line in lines {
                let Some((k, v)) = line.split_once(':') else {
                    continue;
                };
                let (k, v) = (k.trim().to_ascii_lowercase(), v.trim().to_ascii_lowercase());
                if k == "content-length" {
                    length = v.parse::<u64>().ok();
                } else if k == "transfer-encoding" && v.split(',').any(|t| t.trim() == "chunked") {
                    chunked = true;
                }
            }
            self.status = Some(status);
            self.version = Some(version);
            self.framing = if self.head_request || status == 204 || status == 304 {
                Framing::None
            } else if chunked {
                Framing::Chunked
            } else if let Some(n) = length {
                Framing::Length(n)
            } else {
                Framing::UntilClose
            };
            self.body_start = Some(end + 4);
        }
        let body = &self.buf[self.body_start.unwrap_or(0)..];
        match self.framing {
            Framing::None => {
                self.body_bytes = 0;
                self.complete = true;
            }
            Framing::Length(n) => {
                self.body_bytes = (body.len() as u64).min(n);
                self.complete = body.len() as u64 >= n;
            }
            Framing::UntilClose => self.body_bytes = body.len() as u64,
            Framing::Chunked => {
                let (bytes, done) = chunked_progress(body);
                self.body_bytes = bytes;
                self.complete = done;
            }
            Framing::Unknown => {}
        }
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Data bytes of a chunked body so far, and whether its last chunk and
/// trailers have arrived.
fn chunked_progress(mut body: &[u8]) -> (u64, bool) {
    let mut total = 0u64;
    loop {
        let Some(eol) = find(body, b"\r\n") else {
            return (total, false);
        };
        let size_text = String::from_utf8_lossy(&body[..eol]);
        let size_text = size_text.split(';').next().unwrap_or("").trim();
        let Ok(size) = u64::from_str_radix(size_text, 16) else {
            // Not chunked after all: take what there is as the body.
            return (total, false);
        };
        body = &body[eol + 2..];
        if size == 0 {
            // Trailers end with an empty line.
            return (
                total,
                body.starts_with(b"\r\n") || find(body, b"\r\n\r\n").is_some(),
            );
        }
        if (body.len() as u64) < size + 2 {
            return (total + (body.len() as u64).min(size), false);
        }
        total += size;
        body = &body[size as usize + 2..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_length_response_completes_at_its_last_byte_in_any_split() {
        let wire = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nServer: nginx\r\n\r\nhello";
        for cut in 1..wire.len() {
            let mut r = Response::new("GET");
            assert!(!r.push(&wire[..cut]), "complete too early at {cut}");
            assert!(r.push(&wire[cut..]));
            assert_eq!((r.status, r.body_bytes), (Some(200), 5));
        }
    }

    #[test]
    fn chunked_body_ends_at_the_zero_chunk_and_interim_responses_are_skipped() {
        let mut r = Response::new("GET");
        assert!(!r.push(
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        ));
        assert!(!r.push(b"4\r\nwiki\r\n5;ext=1\r\npedia\r\n"));
        assert_eq!(r.body_bytes, 9);
        assert!(!r.push(b"0\r\n"));
        assert!(r.push(b"\r\n"));
        assert_eq!(r.status, Some(200));
    }

    #[test]
    fn bodiless_and_close_delimited_responses() {
        let mut head = Response::new("HEAD");
        assert!(head.push(b"HTTP/1.1 200 OK\r\nContent-Length: 900\r\n\r\n"));
        let mut nc = Response::new("GET");
        assert!(nc.push(b"HTTP/1.1 304 Not Modified\r\n\r\n"));
        let mut close = Response::new("GET");
        assert!(!close.push(b"HTTP/1.0 200 OK\r\n\r\nabc"));
        assert!(close.eof());
        assert_eq!(close.body_bytes, 3);
        let mut cut = Response::new("GET");
        cut.push(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabc");
        assert!(!cut.eof(), "a short Content-Length body is not complete");
    }
}
