//! STOMP 1.0-1.2 (RabbitMQ's and ActiveMQ's text protocol for messaging):
//! which frames ask, which answer, and which the broker sends on its own.
//!
//! A subscriber's broker sends each message (`MESSAGE`) when another
//! client sends one to its destination, and the subscriber acknowledges
//! it (`ACK`) when its subscription asks for that; both sides send
//! heart-beats (a bare end of line) on their own timers. Taken as turns,
//! a subscriber's ACK or heart-beat "asked" for the next message and the
//! sender's pause was the broker's think time (RabbitMQ's STOMP plugin
//! with stomp.py and a sender 0.7-1.2 s apart: 3.59 s of
//! `server_think_time`). The frames say what asks (STOMP 1.2, "Frames
//! and Headers"): `CONNECT` or `STOMP`, answered by `CONNECTED`; any
//! frame with a `receipt` header, answered by the `RECEIPT` that repeats
//! it in `receipt-id`; an `ERROR` answers whatever is open. Everything
//! else asks nothing (a SEND, SUBSCRIBE or ACK without a receipt), and
//! MESSAGE answers nothing.
//!
//! A connection is STOMP when the client's first frame is a `CONNECT` or
//! `STOMP`. A frame's body ends at its NUL, or after the `content-length`
//! its headers give.

use crate::exchange::Turns;
use crate::reader::Reading;
use crate::Direction;

/// Questions open at once are bounded; a forgotten one only leaves its
/// turn unanswered.
const MAX_AWAITED: usize = 32;
/// A frame's command and headers longer than this are not followed
/// across segments.
const MAX_HEAD: usize = 8192;
/// The client's commands a turn is named by.
const COMMANDS: [&str; 11] = [
    "CONNECT",
    "STOMP",
    "SEND",
    "SUBSCRIBE",
    "UNSUBSCRIBE",
    "ACK",
    "NACK",
    "BEGIN",
    "COMMIT",
    "ABORT",
    "DISCONNECT",
];

/// One connection's STOMP reading (crate::reader).
pub(crate) type Stomp = Reading<State>;

/// What is awaited: the CONNECTED, or the RECEIPT of this id.
#[derive(Debug, Clone, PartialEq)]
enum Awaited {
    Connected,
    Receipt(Box<[u8]>),
}

/// What a STOMP connection's reading keeps.
#[derive(Debug, Clone, Default)]
pub struct State {
    /// Per direction: the command and headers of a frame a segment's end
    /// cut (empty when none).
    head: [Vec<u8>; 2],
    /// Per direction: inside a frame's body; with the bytes to its NUL
    /// when its length is known.
    body: [Option<Option<u64>>; 2],
    /// Per direction: lost in a hole until a segment begins a frame.
    lost: [bool; 2],
    /// The client's frame under way asks.
    asking: bool,
    /// The server's frame under way answers.
    answering: bool,
    /// The client's open questions.
    awaited: Vec<Awaited>,
}

impl Stomp {
    /// Reads a segment's stream bytes (`head` captured, `len` in all,
    /// which includes bytes the capture missed); `None` when the
    /// connection is not STOMP. (A server that speaks first is another
    /// protocol's: a STOMP broker waits for the CONNECT.)
    pub(crate) fn read(&mut self, dir: Direction, head: &[u8], len: u64) -> Option<Turns> {
        let decide = || Some(dir == Direction::ClientToServer && is_connect(head));
        Some(self.state(decide)?.read(dir, head, len))
    }
}

impl State {
    fn read(&mut self, dir: Direction, bytes: &[u8], len: u64) -> Turns {
        let d = dir.index();
        let client = dir == Direction::ClientToServer;
        let mut m = Turns::default();
        if self.lost[d] {
            // Found again where a segment begins with a command.
            if !bytes.first().is_some_and(u8::is_ascii_uppercase) {
                return m;
            }
            self.lost[d] = false;
            self.body[d] = None;
            self.head[d].clear();
        }
        let mut at = 0usize;
        let mut first = true;
        while (at as u64) < len {
            if let Some(rest) = self.body[d] {
                // Inside a body: the rest of the frame under way.
                if first {
                    if client {
                        m.continues = self.asking;
                    } else {
                        m.extends = self.answering;
                    }
                }
                first = false;
                match rest {
                    Some(n) => {
                        let take = n.min(len - at as u64);
                        at += take as usize;
                        self.body[d] = (n > take).then_some(Some(n - take));
                    }
                    None => match bytes.get(at..).and_then(|b| b.iter().position(|&c| c == 0)) {
                        Some(nul) => {
                            at += nul + 1;
                            self.body[d] = None;
                        }
                        None if bytes.len() as u64 == len => at = bytes.len(),
                        None => {
                            self.lost[d] = true;
                            break;
                        }
                    },
                }
                continue;
            }
            first = false;
            if at >= bytes.len() {
                self.lost[d] = true;
                break;
            }
            // Heart-beats: ends of line between frames.
            if self.head[d].is_empty() && matches!(bytes[at], b'\n' | b'\r') {
                at += 1;
                continue;
            }
            let start = self.head[d].len();
            self.head[d].extend_from_slice(&bytes[at..]);
            let Some(end) = head_end(&self.head[d]) else {
                // A frame's head the segment's end cut: kept for the next.
                if self.head[d].len() > MAX_HEAD || bytes.len() as u64 != len {
                    self.head[d].clear();
                    self.lost[d] = true;
                }
                break;
            };
            let frame_head = std::mem::take(&mut self.head[d]);
            at += end - start;
            let length = self.frame(dir, &frame_head[..end], &mut m);
            // The body, to its NUL (the NUL counted in a known length).
            self.body[d] = Some(length.map(|n| n + 1));
            let mut reuse = frame_head;
            reuse.clear();
            self.head[d] = reuse;
        }
        m
    }

    /// One frame's command and headers (through the blank line): what it
    /// asks or answers; its body's length when a header gives it.
    fn frame(&mut self, dir: Direction, head: &[u8], m: &mut Turns) -> Option<u64> {
        let mut lines = head
            .split(|&b| b == b'\n')
            .map(|l| l.strip_suffix(b"\r").unwrap_or(l));
        let command = lines.next().unwrap_or_default();
        let (mut receipt, mut length) = (None, None);
        for line in lines {
            let Some(colon) = line.iter().position(|&b| b == b':') else {
                continue;
            };
            let (name, value) = (&line[..colon], &line[colon + 1..]);
            let receipt_header = match dir {
                Direction::ClientToServer => name == b"receipt",
                Direction::ServerToClient => name == b"receipt-id",
            };
            if receipt_header {
                receipt.get_or_insert(value);
            } else if name == b"content-length" {
                length = length.or(std::str::from_utf8(value).ok().and_then(|v| v.parse().ok()));
            }
        }
        match dir {
            Direction::ClientToServer => {
                let connect = command == b"CONNECT" || command == b"STOMP";
                let awaited = if connect {
                    Some(Awaited::Connected)
                } else {
                    receipt.map(|r| Awaited::Receipt(r.into()))
                };
                self.asking = awaited.is_some();
                if let Some(a) = awaited {
                    let name = COMMANDS
                        .iter()
                        .find(|c| command == c.as_bytes())
                        .copied()
                        .unwrap_or("frame");
                    m.asks.get_or_insert(name);
                    crate::reader::push_bounded(&mut self.awaited, a, MAX_AWAITED);
                }
            }
            Direction::ServerToClient => {
                let answered = match command {
                    b"CONNECTED" => self.take(&Awaited::Connected),
                    b"RECEIPT" => receipt.is_some_and(|r| self.take(&Awaited::Receipt(r.into()))),
                    // An error ends what was asked (and mostly the
                    // connection).
                    b"ERROR" => !std::mem::take(&mut self.awaited).is_empty(),
                    _ => false,
                };
                self.answering = answered;
                m.answers |= answered;
            }
        }
        length
    }

    /// Takes `a` from the open questions, if it is there.
    fn take(&mut self, a: &Awaited) -> bool {
        let i = self.awaited.iter().position(|w| w == a);
        if let Some(i) = i {
            self.awaited.remove(i);
        }
        i.is_some()
    }
}

/// Where a frame's head (command and headers) ends: just past its blank
/// line.
fn head_end(bytes: &[u8]) -> Option<usize> {
    let lf = bytes.windows(2).position(|w| w == b"\n\n").map(|i| i + 2);
    let crlf = bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| i + 4);
    match (lf, crlf) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Whether a client's first data is a CONNECT or STOMP frame.
fn is_connect(head: &[u8]) -> bool {
    [&b"CONNECT\n"[..], b"CONNECT\r\n", b"STOMP\n", b"STOMP\r\n"]
        .iter()
        .any(|c| head.starts_with(c))
}

#[cfg(test)]
mod tests {
    use super::*;
    use Direction::{ClientToServer as C, ServerToClient as S};

    fn read(s: &mut Stomp, dir: Direction, bytes: &[u8]) -> Turns {
        s.read(dir, bytes, bytes.len() as u64).expect("STOMP")
    }

    /// stomp.py's start, as RabbitMQ answered it.
    fn connected() -> Stomp {
        let mut s = Stomp::default();
        let t = read(
            &mut s,
            C,
            b"STOMP\naccept-version:1.1\nheart-beat:1000,1000\n\n\0",
        );
        assert_eq!(t.asks, Some("STOMP"));
        assert!(
            read(
                &mut s,
                S,
                b"CONNECTED\nserver:RabbitMQ/3.10.8\nversion:1.1\n\n\0"
            )
            .answers
        );
        s
    }

    #[test]
    fn a_subscribers_acks_and_heart_beats_ask_nothing_and_messages_answer_nothing() {
        let mut s = connected();
        let subscribe = b"SUBSCRIBE\nack:client-individual\ndestination:/queue/test\nid:1\n\n\0";
        assert_eq!(read(&mut s, C, subscribe), Turns::default());
        assert_eq!(read(&mut s, S, b"\n"), Turns::default());
        assert_eq!(read(&mut s, C, b"\n"), Turns::default());
        let message = b"MESSAGE\nsubscription:1\nmessage-id:T_1\ncontent-length:9\n\nmessage 0\0";
        assert_eq!(read(&mut s, S, message), Turns::default());
        assert_eq!(
            read(&mut s, C, b"ACK\nmessage-id:T_1\nsubscription:1\n\n\0"),
            Turns::default()
        );
        // A DISCONNECT with a receipt asks, its RECEIPT answers.
        assert_eq!(
            read(&mut s, C, b"DISCONNECT\nreceipt:bye\n\n\0").asks,
            Some("DISCONNECT")
        );
        assert!(!read(&mut s, S, b"RECEIPT\nreceipt-id:other\n\n\0\n").answers);
        assert!(read(&mut s, S, b"RECEIPT\nreceipt-id:bye\n\n\0\n").answers);
    }

    #[test]
    fn a_send_asks_only_for_a_receipt_and_bodies_are_followed() {
        let mut s = connected();
        assert_eq!(
            read(&mut s, C, b"SEND\ndestination:/queue/q\n\nhello\0"),
            Turns::default()
        );
        // A body with NULs, by its length, across segments.
        let mut send = b"SEND\ndestination:/queue/q\nreceipt:r1\ncontent-length:3000\n\n".to_vec();
        send.extend([0u8; 3000]);
        send.push(0);
        assert_eq!(read(&mut s, C, &send[..100]).asks, Some("SEND"));
        assert!(read(&mut s, C, &send[100..2000]).continues);
        let tail = read(&mut s, C, &send[2000..]);
        assert!(tail.continues && tail.asks.is_none());
        // A message pushed meanwhile answers nothing; the receipt does.
        assert!(!read(&mut s, S, b"MESSAGE\ndestination:/queue/q\n\nx\0").answers);
        assert!(read(&mut s, S, b"RECEIPT\nreceipt-id:r1\n\n\0").answers);
        // A head cut by a segment's end is read whole in the next.
        assert_eq!(read(&mut s, C, b"SEND\nreceipt:r2\ndesti").asks, None);
        assert_eq!(
            read(&mut s, C, b"nation:/queue/q\n\nx\0").asks,
            Some("SEND")
        );
        // An error answers what is open.
        assert!(read(&mut s, S, b"ERROR\nmessage:no\n\nbad\0").answers);
        // A hole: lost until a segment begins a frame.
        assert_eq!(s.read(S, &[], 40), Some(Turns::default()));
        assert_eq!(read(&mut s, S, b"ody\0"), Turns::default());
        assert_eq!(
            read(&mut s, C, b"BEGIN\ntransaction:t\nreceipt:b\n\n\0").asks,
            Some("BEGIN")
        );
        assert!(read(&mut s, S, b"RECEIPT\nreceipt-id:b\n\n\0").answers);
    }

    #[test]
    fn only_a_client_that_connects_is_stomp() {
        for (dir, first) in [
            (C, &b"GET / HTTP/1.1\r\n\r\n"[..]),
            (S, b"CONNECTED\n\n\0"),
            (C, b"CONNECTION\n"),
        ] {
            let mut s = Stomp::default();
            assert!(s.read(dir, first, first.len() as u64).is_none());
            assert!(s.is_not(), "{first:?}");
        }
        let mut s = Stomp::default();
        assert!(s.read(C, b"CONNECT\r\nlogin:a\r\n\r\n\0", 22).is_some());
    }

    proptest::proptest! {
        #[test]
        fn any_stream_bytes_are_read_without_panicking(segments in crate::reader::any::segments()) {
            let mut s = Stomp::default();
            s.read(C, b"STOMP\n\n\0", 8);
            crate::reader::any::feed(segments, |dir, bytes, len| {
                s.read(dir, bytes, len);
            });
            proptest::prop_assert!(s.is());
        }
    }
}
