//! Just enough HTTP/1.1 to know where a response ends: the status line,
//! `Content-Length`, `Transfer-Encoding: chunked`, or the end of the
//! connection; bodies without one (HEAD, 1xx, 204, 304).

/// A response being read. Only the head is buffered; the body is
/// counted as it passes (a download of any size costs no memory).
#[derive(Debug, Default)]
pub struct Response {
    /// The head so far (and the first body bytes that came with it).
    head: Vec<u8>,
    head_done: bool,
    pub status: Option<u16>,
    pub version: Option<String>,
    /// The `Location` header's value, as the server wrote it.
    pub location: Option<String>,
    framing: Framing,
    chunk: Chunk,
    /// A chunk-size or trailer line being read.
    line: Vec<u8>,
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

/// Where a chunked body is.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
enum Chunk {
    /// Reading a chunk-size line.
    #[default]
    Size,
    /// This many data bytes left in the chunk.
    Data(u64),
    /// The CRLF after a chunk's data: bytes of it left.
    DataEnd(u8),
    /// Trailer lines after the last chunk, until an empty one.
    Trailers,
    Done,
}

/// Longest head or chunk line kept: past it the response is taken as
/// broken and read to the end of the connection.
const MAX_LINE: usize = 64 * 1024;

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
        if self.complete {
            return true;
        }
        if self.head_done {
            self.body(data);
        } else {
            self.head.extend_from_slice(data);
            self.parse_head();
        }
        self.complete
    }

    /// The connection closed: a close-delimited body is complete.
    pub fn eof(&mut self) -> bool {
        if self.framing == Framing::UntilClose {
            self.complete = true;
        }
        self.complete
    }

    fn parse_head(&mut self) {
        while !self.head_done {
            let Some(end) = find(&self.head, b"\r\n\r\n") else {
                if self.head.len() > MAX_LINE {
                    self.head_done = true;
                    self.framing = Framing::UntilClose;
                    self.head.clear();
                }
                return;
            };
            let text = String::from_utf8_lossy(&self.head[..end]).into_owned();
            let mut lines = text.split("\r\n");
            let mut parts = lines.next().unwrap_or("").split_whitespace();
            let version = parts.next().unwrap_or("").to_string();
            let status: u16 = parts.next().and_then(|s| s.parse().ok()).unwrap_or(0);
            if (100..200).contains(&status) && status != 101 {
                // An interim response (100 Continue, 103 Early Hints).
                self.head.drain(..end + 4);
                continue;
            }
            let mut length = None;
            let mut chunked = false;
            for line in lines {
                let Some((k, v)) = line.split_once(':') else {
                    continue;
                };
                if k.trim().eq_ignore_ascii_case("location") {
                    self.location = Some(v.trim().to_string());
                }
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
            self.head_done = true;
            let rest = self.head.split_off(end + 4);
            self.head.clear();
            self.body(&rest);
        }
    }

    fn body(&mut self, mut data: &[u8]) {
        match self.framing {
            Framing::None => self.complete = true,
            Framing::Length(n) => {
                self.body_bytes = self.body_bytes.saturating_add(data.len() as u64).min(n);
                self.complete = self.body_bytes >= n;
            }
            Framing::UntilClose => {
                self.body_bytes = self.body_bytes.saturating_add(data.len() as u64)
            }
            Framing::Unknown => {}
            Framing::Chunked => {
                while !data.is_empty() && !self.complete {
                    data = self.chunked(data);
                }
            }
        }
    }

    /// Takes what it can of `data` for a chunked body; returns the rest.
    fn chunked<'a>(&mut self, data: &'a [u8]) -> &'a [u8] {
        match self.chunk {
            Chunk::Data(left) => {
                let n = (data.len() as u64).min(left);
                self.body_bytes = self.body_bytes.saturating_add(n);
                self.chunk = if n == left {
                    Chunk::DataEnd(2)
                } else {
                    Chunk::Data(left - n)
                };
                &data[n as usize..]
            }
            Chunk::DataEnd(left) => {
                let n = data.len().min(left as usize);
                self.chunk = if n == left as usize {
                    Chunk::Size
                } else {
                    Chunk::DataEnd(left - n as u8)
                };
                &data[n..]
            }
            Chunk::Size | Chunk::Trailers => {
                let Some(eol) = data.iter().position(|&b| b == b'\n') else {
                    self.line.extend_from_slice(data);
                    if self.line.len() > MAX_LINE {
                        self.framing = Framing::UntilClose;
                    }
                    return &[];
                };
                self.line.extend_from_slice(&data[..eol]);
                let line = String::from_utf8_lossy(&self.line).trim().to_string();
                self.line.clear();
                if self.chunk == Chunk::Trailers {
                    if line.is_empty() {
                        self.chunk = Chunk::Done;
                        self.complete = true;
                    }
                } else {
                    let size = line.split(';').next().unwrap_or("").trim();
                    match u64::from_str_radix(size, 16) {
                        Ok(0) => self.chunk = Chunk::Trailers,
                        Ok(n) => self.chunk = Chunk::Data(n),
                        // Not chunked after all: read to the end.
                        Err(_) => {
                            self.framing = Framing::UntilClose;
                            return &[];
                        }
                    }
                }
                &data[eol + 1..]
            }
            Chunk::Done => {
                self.complete = true;
                &[]
            }
        }
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_redirect_s_location_is_kept_as_written() {
        let mut r = Response::new("GET");
        assert!(r.push(
            b"HTTP/1.1 301 Moved Permanently\r\nLOCATION:  /Docs/ \r\nContent-Length: 0\r\n\r\n"
        ));
        assert_eq!(
            (r.status, r.location.as_deref()),
            (Some(301), Some("/Docs/"))
        );
        let mut plain = Response::new("GET");
        assert!(plain.push(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"));
        assert_eq!(plain.location, None);
    }

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

    proptest::proptest! {
        /// Whatever a server sends, in whatever pieces, reading it never
        /// panics and never counts more body than arrived.
        #[test]
        fn any_bytes_in_any_split_never_panic(
            bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..600),
            cut in 0usize..600,
        ) {
            let mut r = Response::new("GET");
            let cut = cut.min(bytes.len());
            r.push(&bytes[..cut]);
            r.push(&bytes[cut..]);
            r.eof();
            proptest::prop_assert!(r.body_bytes <= bytes.len() as u64);
            // The same bytes in one piece read the same.
            let mut whole = Response::new("GET");
            whole.push(&bytes);
            whole.eof();
            proptest::prop_assert_eq!((whole.body_bytes, whole.complete), (r.body_bytes, r.complete));
        }
    }

    #[test]
    fn chunked_body_reads_the_same_in_any_split() {
        let wire: &[u8] = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\
            4\r\nwiki\r\n5;x=y\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\nX-T: 1\r\n\r\n";
        for cut in 1..wire.len() {
            let mut r = Response::new("GET");
            assert!(!r.push(&wire[..cut]), "complete too early at {cut}");
            assert!(r.push(&wire[cut..]), "not complete, cut at {cut}");
            assert_eq!(r.body_bytes, 23, "cut at {cut}");
        }
    }

    #[test]
    fn a_huge_chunk_size_is_read_without_overflow() {
        let mut r = Response::new("GET");
        assert!(!r
            .push(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\nabc"));
        assert_eq!(r.body_bytes, 3);
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
