//! Request/response exchanges on a connection.
//!
//! Turn-taking defines an exchange: client data opens it (the request), the
//! first server data after that is the response's first byte, and the
//! response lasts until the client speaks again. That is exactly HTTP/1.x
//! keep-alive (where request and status lines also label the exchange), and
//! a fair reading of most request/response protocols. For TLS connections the
//! TLS observer feeds application-data records instead of raw bytes.

use crate::connection::Stamp;
use crate::model::Direction;

/// Exchanges kept with full detail; later ones are only counted.
const MAX_KEPT: usize = 1000;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exchange {
    pub request_first: Stamp,
    pub request_last: Stamp,
    pub request_bytes: u64,
    pub response_first: Option<Stamp>,
    pub response_last: Option<Stamp>,
    pub response_bytes: u64,
    /// "GET /path" for HTTP/1.x requests.
    pub label: Option<String>,
    /// HTTP status code of the response, when visible.
    pub status: Option<u16>,
}

#[derive(Debug, Default)]
pub struct Exchanges {
    pub kept: Vec<Exchange>,
    /// All exchanges, including those not kept.
    pub total: u32,
    current: Option<Exchange>,
    /// Bytes the server sent before the client's first data (banners).
    pub server_first_bytes: u64,
}

impl Exchanges {
    /// Application data in `dir`, from frame `first` to frame `last`;
    /// `head` holds its first captured bytes (for HTTP labels), if any.
    pub fn on_data(&mut self, dir: Direction, first: Stamp, last: Stamp, len: u64, head: &[u8]) {
        if len == 0 {
            return;
        }
        match dir {
            Direction::ClientToServer => {
                let continuing = self
                    .current
                    .as_ref()
                    .is_some_and(|c| c.response_first.is_none());
                if continuing {
                    let c = self.current.as_mut().expect("checked");
                    c.request_last = last;
                    c.request_bytes += len;
                    return;
                }
                self.close();
                self.total += 1;
                self.current = Some(Exchange {
                    request_first: first,
                    request_last: last,
                    request_bytes: len,
                    response_first: None,
                    response_last: None,
                    response_bytes: 0,
                    label: http_request_line(head),
                    status: None,
                });
            }
            Direction::ServerToClient => match &mut self.current {
                Some(c) => {
                    if c.response_first.is_none() {
                        c.response_first = Some(first);
                        c.status = http_status(head);
                    }
                    c.response_last = Some(last);
                    c.response_bytes += len;
                }
                None => self.server_first_bytes += len,
            },
        }
    }

    fn close(&mut self) {
        if let Some(c) = self.current.take() {
            if self.kept.len() < MAX_KEPT {
                self.kept.push(c);
            }
        }
    }

    /// Ends the last exchange (end of connection).
    pub fn finish(&mut self) {
        self.close();
    }
}

const METHODS: [&str; 9] = [
    "GET", "POST", "HEAD", "PUT", "DELETE", "OPTIONS", "PATCH", "CONNECT", "TRACE",
];

/// "GET /index.html" from an HTTP/1.x request head.
pub fn http_request_line(head: &[u8]) -> Option<String> {
    let line_end = head
        .iter()
        .position(|&b| b == b'\r' || b == b'\n')
        .unwrap_or(head.len());
    let line = std::str::from_utf8(&head[..line_end]).ok()?;
    let mut parts = line.split(' ');
    let method = parts.next()?;
    if !METHODS.contains(&method) {
        return None;
    }
    let full = parts.next()?;
    let mut target: String = full.chars().take(48).collect();
    if full.chars().count() > 48 {
        target.push('…');
    }
    Some(format!("{method} {target}"))
}

/// Status code from an HTTP/1.x status line.
pub fn http_status(head: &[u8]) -> Option<u16> {
    if head.len() < 12 || !head.starts_with(b"HTTP/1.") {
        return None;
    }
    std::str::from_utf8(&head[9..12]).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use Direction::*;

    fn at(frame: u64) -> Stamp {
        Stamp {
            frame,
            ts_ns: frame as i64 * 1_000_000,
        }
    }

    #[test]
    fn keep_alive_requests_each_open_an_exchange() {
        let mut x = Exchanges::default();
        x.on_data(
            ClientToServer,
            at(4),
            at(4),
            80,
            b"GET /a HTTP/1.1\r\nHost: x\r\n",
        );
        x.on_data(ServerToClient, at(6), at(6), 200, b"HTTP/1.1 200 OK\r\n");
        x.on_data(ServerToClient, at(7), at(7), 1000, b"body");
        x.on_data(ClientToServer, at(9), at(9), 80, b"POST /b HTTP/1.1\r\n");
        x.on_data(ClientToServer, at(10), at(10), 500, b"form=1");
        x.on_data(
            ServerToClient,
            at(12),
            at(12),
            100,
            b"HTTP/1.1 404 Not Found\r\n",
        );
        x.finish();
        assert_eq!(x.total, 2);
        let a = &x.kept[0];
        assert_eq!(a.label.as_deref(), Some("GET /a"));
        assert_eq!(
            (
                a.response_first.unwrap().frame,
                a.response_last.unwrap().frame
            ),
            (6, 7)
        );
        assert_eq!((a.status, a.response_bytes), (Some(200), 1200));
        let b = &x.kept[1];
        assert_eq!(
            (b.request_first.frame, b.request_last.frame, b.request_bytes),
            (9, 10, 580)
        );
        assert_eq!(b.status, Some(404));
    }

    #[test]
    fn server_banner_before_any_request_is_not_an_exchange() {
        let mut x = Exchanges::default();
        x.on_data(ServerToClient, at(4), at(4), 30, b"220 smtp ready\r\n");
        x.finish();
        assert_eq!((x.total, x.server_first_bytes), (0, 30));
    }

    #[test]
    fn request_lines_are_recognised_and_others_are_not() {
        assert_eq!(
            http_request_line(b"OPTIONS * HTTP/1.1\r\n").as_deref(),
            Some("OPTIONS *")
        );
        assert_eq!(http_request_line(b"\x16\x03\x01"), None);
        assert_eq!(http_request_line(b"get / HTTP/1.1"), None);
        assert_eq!(http_status(b"HTTP/1.0 503 Service Unavailable"), Some(503));
        assert_eq!(http_status(b"SSH-2.0-OpenSSH"), None);
    }
}
