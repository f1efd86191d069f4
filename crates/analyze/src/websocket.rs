//! WebSocket (RFC 6455) after an HTTP/1.1 upgrade: which frames open a
//! turn and which answer it.
//!
//! A client asks to upgrade (`Upgrade: websocket` in its request's head);
//! the server's `101 Switching Protocols` answers that request, and from
//! the end of that head on both sides send frames whenever they like. Taken
//! as turns, the client's PONG to the server's keep-alive PING (python's
//! `websockets` pings every 20 s by default) would "ask" for the server's
//! next message, a push of a feed seconds later, measured as think time;
//! every push would be the rest of the answer before it. The frames say
//! more:
//!
//! | client sends            | answered by the server's               |
//! |-------------------------|----------------------------------------|
//! | a text or binary message | its next text or binary message        |
//! | PING                    | PONG                                   |
//! | CLOSE                   | CLOSE                                  |
//!
//! The client's PONG (to the server's PING) and continuation frames ask
//! nothing new (a continuation is the rest of its message). The server's
//! PING is its own timer's; a message of the server's after an answer
//! began is its own push, nobody's answer (continuation frames of the
//! answering message stay the answer's). What a message answers is the
//! application's to say: a server that pushes a message just after the
//! client sent one (a chat) is still read as answering it.
//!
//! Frames are followed across segments by their lengths; after a hole in
//! the capture, from the next segment that is whole frames again.

use crate::exchange::Turns as Frames;
use crate::Direction;

const CONTINUATION: u8 = 0;
const TEXT: u8 = 1;
const BINARY: u8 = 2;
const CLOSE: u8 = 8;
const PING: u8 = 9;
const PONG: u8 = 10;

/// The answers a client's questions wait for.
#[derive(Debug, Clone, Copy, Default)]
struct Awaited {
    messages: u32,
    pongs: u32,
    close: bool,
}

/// One connection's WebSocket reading, from the end of the `101` head.
#[derive(Debug, Clone, Default)]
pub struct WebSocket {
    /// Per direction: bytes of the frame under way still to come.
    rest: [u64; 2],
    /// Per direction: the frames could not be followed since the last
    /// segment that was whole frames.
    lost: [bool; 2],
    /// The client's message under way asks (its continuation frames and
    /// bytes are that request's).
    client_asks: bool,
    /// What the client's open questions wait for, per kind of answer: its
    /// messages (one each), its PINGs (a PONG each), its CLOSE.
    awaited: Awaited,
    /// The server's message under way answers (its later frames and bytes
    /// continue the answer).
    answering: bool,
}

impl WebSocket {
    /// Reads a segment's stream bytes (`head` captured, `len` in all).
    pub(crate) fn read(&mut self, dir: Direction, head: &[u8], len: u64) -> Frames {
        let d = dir.index();
        let client = dir == Direction::ClientToServer;
        if self.lost[d] {
            if !whole_frames(head, len) {
                return Frames::default();
            }
            self.lost[d] = false;
            self.rest[d] = 0;
        }
        let mut f = Frames::default();
        if self.rest[d] > 0 {
            if client {
                f.continues = self.client_asks;
            } else {
                f.extends = self.answering;
            }
        }
        let mut at = self.rest[d].min(len);
        self.rest[d] -= at;
        while at < len {
            let Some((_, opcode, size)) = head.get(at as usize..).and_then(frame) else {
                self.lost[d] = true;
                return f;
            };
            if client {
                self.client(opcode, &mut f);
            } else {
                self.server(opcode, &mut f);
            }
            if at + size > len {
                self.rest[d] = at + size - len;
            }
            at += size;
        }
        f
    }

    fn client(&mut self, opcode: u8, f: &mut Frames) {
        let a = &mut self.awaited;
        let name = match opcode {
            TEXT | BINARY => {
                a.messages = a.messages.saturating_add(1);
                if opcode == TEXT {
                    "WebSocket text"
                } else {
                    "WebSocket binary"
                }
            }
            PING => {
                a.pongs = a.pongs.saturating_add(1);
                "WebSocket ping"
            }
            CLOSE => {
                // The end: no message will answer the client's any more
                // (a PONG to its PING still may, before the server's
                // CLOSE: then the CLOSE goes on with the PING's turn).
                a.messages = 0;
                a.close = true;
                f.ends = a.pongs == 0;
                "WebSocket close"
            }
            CONTINUATION => {
                f.continues |= self.client_asks;
                return;
            }
            // A PONG answers the server's PING: it asks nothing.
            _ => {
                self.client_asks = false;
                return;
            }
        };
        self.client_asks = true;
        f.asks.get_or_insert(name);
    }

    fn server(&mut self, opcode: u8, f: &mut Frames) {
        let a = &mut self.awaited;
        let answers = match opcode {
            TEXT | BINARY if a.messages > 0 => {
                a.messages -= 1;
                true
            }
            PONG if a.pongs > 0 => {
                a.pongs -= 1;
                true
            }
            CLOSE if a.close => {
                a.close = false;
                true
            }
            CONTINUATION => {
                f.extends |= self.answering;
                return;
            }
            _ => false,
        };
        f.answers |= answers;
        // (A PONG or CLOSE is whole in its frame.)
        self.answering = answers && matches!(opcode, TEXT | BINARY);
    }
}

/// The frame `bytes` begins with: FIN, its opcode and its whole size
/// (header, mask and payload), when its header is captured and valid: a
/// defined opcode, and no reserved bit but RSV1 on a message's first
/// frame (permessage-deflate, RFC 7692, which browsers and most servers
/// negotiate: a compressed message).
fn frame(bytes: &[u8]) -> Option<(bool, u8, u64)> {
    let (&b0, rest) = bytes.split_first()?;
    let &b1 = rest.first()?;
    let opcode = b0 & 0x0f;
    let rsv1_allowed = matches!(opcode, TEXT | BINARY);
    if b0 & 0x30 != 0 || (b0 & 0x40 != 0 && !rsv1_allowed) || !matches!(opcode, 0..=2 | 8..=10) {
        return None;
    }
    let masked = b1 & 0x80 != 0;
    let (extra, payload) = match b1 & 0x7f {
        126 => (
            2,
            u64::from(u16::from_be_bytes([*bytes.get(2)?, *bytes.get(3)?])),
        ),
        127 => {
            let b: [u8; 8] = bytes.get(2..10)?.try_into().ok()?;
            (8, u64::from_be_bytes(b))
        }
        n => (0, u64::from(n)),
    };
    // Control frames are whole and short (RFC 6455 5.5).
    if opcode >= CLOSE && (b0 & 0x80 == 0 || payload > 125) {
        return None;
    }
    let header = 2 + extra + if masked { 4 } else { 0 };
    Some((b0 & 0x80 != 0, opcode, header + payload))
}

/// Whether a segment's bytes are frames from its first byte to its last.
fn whole_frames(head: &[u8], len: u64) -> bool {
    if head.len() as u64 != len || head.is_empty() {
        return false;
    }
    let mut at = 0u64;
    while at < len {
        let Some((_, _, size)) = frame(&head[at as usize..]) else {
            return false;
        };
        at += size;
    }
    at == len
}

/// Whether an HTTP/1.1 request head asks to upgrade to WebSocket (an
/// `Upgrade` header naming `websocket`), as far as its captured lines go.
pub(crate) fn asks_to_upgrade(head: &[u8]) -> bool {
    // Every request's head is asked: most never name WebSocket (memchr's
    // searches, built once, for the end of its spellings, `websocket`,
    // `WebSocket`, and its capitals).
    static LOWER: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"ocket"));
    static UPPER: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"OCKET"));
    if LOWER.find(head).is_none() && UPPER.find(head).is_none() {
        return false;
    }
    upgrade_offers(head, b"websocket")
}

/// Whether a request's head (its first line, then its header lines) has
/// an `Upgrade` header offering `protocol` (names and values compared
/// without case).
pub(crate) fn upgrade_offers(head: &[u8], protocol: &[u8]) -> bool {
    crate::exchange::header_fields(head).any(|(name, value, _)| {
        name.eq_ignore_ascii_case(b"upgrade")
            && value
                .split(|&b| b == b',')
                .any(|v| v.trim_ascii().eq_ignore_ascii_case(protocol))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use Direction::*;

    /// A frame of `opcode` with `payload` bytes, masked (the client's) or
    /// not, FIN as told.
    fn frame_of(opcode: u8, payload: usize, masked: bool, fin: bool) -> Vec<u8> {
        let mut f = vec![opcode | if fin { 0x80 } else { 0 }];
        let mask = if masked { 0x80 } else { 0 };
        match payload {
            0..=125 => f.push(mask | payload as u8),
            126..=65535 => {
                f.push(mask | 126);
                f.extend((payload as u16).to_be_bytes());
            }
            _ => {
                f.push(mask | 127);
                f.extend((payload as u64).to_be_bytes());
            }
        }
        if masked {
            f.extend([1, 2, 3, 4]);
        }
        f.resize(f.len() + payload, b'x');
        f
    }

    fn client(opcode: u8, payload: usize) -> Vec<u8> {
        frame_of(opcode, payload, true, true)
    }

    fn server(opcode: u8, payload: usize) -> Vec<u8> {
        frame_of(opcode, payload, false, true)
    }

    fn read(w: &mut WebSocket, dir: Direction, b: &[u8]) -> Frames {
        w.read(dir, b, b.len() as u64)
    }

    #[test]
    fn a_pong_to_the_servers_ping_asks_for_nothing() {
        // python websockets' server pings; its feed pushes between.
        let mut w = WebSocket::default();
        let none = Frames::default();
        assert_eq!(read(&mut w, ServerToClient, &server(PING, 4)), none);
        assert_eq!(read(&mut w, ClientToServer, &client(PONG, 4)), none);
        assert_eq!(
            read(&mut w, ServerToClient, &server(TEXT, 20)),
            none,
            "a push"
        );
        // The client's own PING is answered by the PONG, not by a push.
        assert_eq!(
            read(&mut w, ClientToServer, &client(PING, 0)).asks,
            Some("WebSocket ping")
        );
        assert!(!read(&mut w, ServerToClient, &server(TEXT, 20)).answers);
        assert!(read(&mut w, ServerToClient, &server(PONG, 0)).answers);
        // CLOSE answers CLOSE.
        assert_eq!(
            read(&mut w, ClientToServer, &client(CLOSE, 2)).asks,
            Some("WebSocket close")
        );
        assert!(read(&mut w, ServerToClient, &server(CLOSE, 2)).answers);
        // A PING, then a CLOSE before its PONG: each answer answers.
        let mut w = WebSocket::default();
        read(&mut w, ClientToServer, &client(PING, 0));
        read(&mut w, ClientToServer, &client(CLOSE, 2));
        assert!(read(&mut w, ServerToClient, &server(PONG, 0)).answers);
        assert!(read(&mut w, ServerToClient, &server(CLOSE, 2)).answers);
        assert!(!read(&mut w, ServerToClient, &server(PONG, 0)).answers);
        // A chat's talker: messages nobody answers, then its CLOSE, which
        // ends them: a turn of its own, answered by the server's CLOSE
        // alone.
        let mut w = WebSocket::default();
        read(&mut w, ClientToServer, &client(TEXT, 7));
        let close = read(&mut w, ClientToServer, &client(CLOSE, 2));
        assert!(close.ends && close.asks.is_some());
        assert!(!read(&mut w, ServerToClient, &server(TEXT, 7)).answers);
        assert!(read(&mut w, ServerToClient, &server(CLOSE, 2)).answers);
    }

    #[test]
    fn a_message_is_answered_by_the_next_message_and_then_pushes_follow() {
        let mut w = WebSocket::default();
        assert_eq!(
            read(&mut w, ClientToServer, &client(TEXT, 10)).asks,
            Some("WebSocket text")
        );
        assert!(read(&mut w, ServerToClient, &server(BINARY, 30)).answers);
        // A second message of the server's is its own.
        assert_eq!(
            read(&mut w, ServerToClient, &server(TEXT, 30)),
            Frames::default()
        );
        // A fragmented answer: its continuation frames are the answer's.
        read(&mut w, ClientToServer, &client(BINARY, 10));
        assert!(read(&mut w, ServerToClient, &frame_of(TEXT, 5, false, false)).answers);
        assert!(
            read(
                &mut w,
                ServerToClient,
                &frame_of(CONTINUATION, 5, false, true)
            )
            .extends
        );
        // A large answer over segments: its later bytes extend it.
        read(&mut w, ClientToServer, &client(TEXT, 3));
        let big = server(TEXT, 70_000);
        assert!(read(&mut w, ServerToClient, &big[..1448]).answers);
        let more = read(&mut w, ServerToClient, &big[1448..40_000]);
        assert!(more.extends && !more.answers);
        // A large question's later bytes are its request.
        let upload = client(BINARY, 5000);
        assert!(read(&mut w, ClientToServer, &upload[..1448]).asks.is_some());
        assert!(read(&mut w, ClientToServer, &upload[1448..]).continues);
    }

    #[test]
    fn frames_are_found_again_after_a_hole() {
        let mut w = WebSocket::default();
        let none = Frames::default();
        assert_eq!(w.read(ServerToClient, &[], 500), none, "the hole");
        let push = server(TEXT, 300);
        assert_eq!(read(&mut w, ServerToClient, &push[100..]), none);
        read(&mut w, ClientToServer, &client(PING, 0));
        assert!(read(&mut w, ServerToClient, &server(PONG, 0)).answers);
        // Reserved bits (but a compressed message's RSV1), an unknown
        // opcode, a long control frame: no frame.
        assert_eq!(frame(&[0xc1, 0x00]), Some((true, TEXT, 2)));
        assert_eq!(frame(&[0xa1, 0x00]), None);
        assert_eq!(frame(&[0xc9, 0x00]), None);
        assert_eq!(frame(&[0x83, 0x00]), None);
        assert_eq!(frame(&[0x89, 126, 0, 200]), None);
    }

    #[test]
    fn an_upgrade_is_asked_in_the_request_head() {
        let ask =
            b"GET /chat HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n";
        assert!(asks_to_upgrade(ask));
        assert!(asks_to_upgrade(
            b"GET / HTTP/1.1\r\nupgrade: WebSocket\r\n\r\n"
        ));
        assert!(asks_to_upgrade(
            b"GET / HTTP/1.1\r\nUPGRADE: WEBSOCKET\r\n\r\n"
        ));
        assert!(!asks_to_upgrade(b"GET / HTTP/1.1\r\nUpgrade: h2c\r\n\r\n"));
        assert!(!asks_to_upgrade(
            b"GET / HTTP/1.1\r\nX: Upgrade: websocket\r\n\r\n"
        ));
        assert!(!asks_to_upgrade(b"GET /upgrade:websocket HTTP/1.1\r\n\r\n"));
        assert_eq!(
            crate::exchange::head_end(b"HTTP/1.1 101 Switching\r\nA: b\r\n\r\n\x81\x00"),
            Some(32)
        );
    }

    proptest::proptest! {
        #[test]
        fn any_stream_bytes_are_read_without_panicking(
            chunks in proptest::collection::vec(
                (proptest::bool::ANY, proptest::collection::vec(proptest::num::u8::ANY, 0..64), 0u64..200),
                1..12,
            )
        ) {
            let mut w = WebSocket::default();
            for (client, bytes, missing) in chunks {
                let dir = if client { ClientToServer } else { ServerToClient };
                w.read(dir, &bytes, bytes.len() as u64 + missing);
                asks_to_upgrade(&bytes);
            }
        }
    }
}
