//! PostgreSQL's frontend/backend protocol (version 3): which messages ask,
//! and when the server's messages stop answering.
//!
//! Every query cycle ends with the server's ReadyForQuery (`Z`): one for
//! the start-up (after authentication), one per simple Query (`Q`), per
//! Sync (`S`) of the extended protocol and per FunctionCall (`F`). Until
//! the `Z`s the client is owed have come, the server's messages answer it;
//! after the last, the server owes nothing, and what it sends before the
//! client's next message comes on its own (PostgreSQL protocol 55.2.7,
//! "asynchronous operations"): a NotificationResponse (`A`) for a `LISTEN`
//! when another session runs `NOTIFY`, a NoticeResponse, a ParameterStatus.
//! Taken as turns, a listener's notifications a second apart became the
//! rest of its `LISTEN`'s answer, a "response transfer" of seconds.
//! A replication command (`START_REPLICATION`) is answered by a
//! CopyBothResponse (`W`), after which both sides stream CopyData on
//! their own (the primary's WAL as transactions commit, the replica's
//! status updates) and no ReadyForQuery comes while it lasts: the `W` is
//! the whole answer, and what follows answers nothing.
//!
//! A connection is PostgreSQL when the client's first data is a
//! StartupMessage (its length, then protocol 3.0) or an SSLRequest or
//! GSSENCRequest the server refused (`N`: the start-up follows in the
//! clear). Messages are followed across segments by their lengths (a
//! type byte, then a 32-bit length that counts itself); after a hole in
//! the capture, from the next segment that is whole messages again.

use crate::exchange::Turns;
use crate::framing::Follow;
use crate::reader::Reading;
use crate::Direction;

/// Protocol 3.0 in a StartupMessage.
const PROTOCOL_3: u32 = 196_608;
/// The SSLRequest and GSSENCRequest codes, in a StartupMessage's place.
const SSL_REQUEST: u32 = 80_877_103;
const GSSENC_REQUEST: u32 = 80_877_104;
/// A start-up packet's most (the server refuses longer ones).
const MAX_STARTUP: u32 = 10_000;
/// A typed message's header: its type and its length.
const HEADER: u64 = 5;

/// One connection's PostgreSQL reading (crate::reader).
pub(crate) type Postgres = Reading<State>;

/// What a PostgreSQL connection's reading keeps.
#[derive(Debug, Clone)]
pub struct State {
    /// Per direction: where the messages are (crate::framing).
    follow: [Follow; 2],
    /// The client asked for TLS or GSS encryption: the server's next byte
    /// is its one-byte answer, the client's next message a start-up.
    encryption_asked: bool,
    /// The client's next message is a start-up packet (no type byte).
    startup_next: bool,
    /// ReadyForQuery messages the server owes the client.
    owed: u32,
}

/// A connection's reading begins with its start-up packet.
impl Default for State {
    fn default() -> State {
        State {
            follow: Default::default(),
            encryption_asked: false,
            startup_next: true,
            owed: 0,
        }
    }
}

impl Postgres {
    /// Reads a segment's stream bytes (`head` captured, `len` in all,
    /// which includes bytes the capture missed); `None` when the
    /// connection is not PostgreSQL.
    pub(crate) fn read(&mut self, dir: Direction, head: &[u8], len: u64) -> Option<Turns> {
        // (A PostgreSQL server says nothing before the client's start-up:
        // a server that speaks first is another's.)
        let decide = || Some(dir == Direction::ClientToServer && startup(head).is_some());
        let state = self.state(decide)?;
        // The server took the request for encryption (`S`, `G`): what
        // follows is TLS or GSSAPI, not messages to read.
        let refused = head.first() == Some(&b'N');
        if dir == Direction::ServerToClient && state.encryption_asked && !refused {
            self.stop();
            return None;
        }
        Some(state.read(dir, head, len))
    }
}

/// The start-up packet at the start of `head`: its protocol version or
/// request code, and its length, when the length is one a start-up has.
fn startup(head: &[u8]) -> Option<(u32, u64)> {
    let length = u32::from_be_bytes(head.get(..4)?.try_into().ok()?);
    let code = u32::from_be_bytes(head.get(4..8)?.try_into().ok()?);
    let fits = (8..=MAX_STARTUP).contains(&length);
    match code {
        SSL_REQUEST | GSSENC_REQUEST if length == 8 => Some((code, 8)),
        PROTOCOL_3 if fits && length > 8 => Some((code, u64::from(length))),
        _ => None,
    }
}

impl State {
    fn read(&mut self, dir: Direction, head: &[u8], len: u64) -> Turns {
        let mut m = Turns::default();
        let client = dir == Direction::ClientToServer;
        // The server's answer to an SSLRequest or GSSENCRequest is one
        // byte (`N`: go on in the clear); the start-up follows.
        if !client && self.encryption_asked {
            self.encryption_asked = false;
            m.answers = true;
            return m;
        }
        let follow = &mut self.follow[dir.index()];
        if client && self.startup_next {
            self.startup_next = false;
            match startup(head) {
                Some((SSL_REQUEST | GSSENC_REQUEST, _)) => {
                    self.encryption_asked = true;
                    self.startup_next = true;
                    follow.restart(0);
                    m.asks = Some("SSLRequest");
                    return m;
                }
                Some((_, length)) => {
                    // A start-up has no type byte: it is skipped by its
                    // length, and typed messages follow.
                    follow.restart(length);
                    self.owed += 1;
                    m.asks = Some("startup");
                    let (mut rest, _) = self.messages(dir, head, len);
                    rest.asks = m.asks;
                    return rest;
                }
                None => {
                    follow.lose();
                    return m;
                }
            }
        }
        let owed = self.owed;
        let (mut m, continued) = self.messages(dir, head, len);
        if continued {
            // The rest of a message under way: a client's request goes on
            // (a long query, COPY data), and a server's answer, if it owed
            // one.
            m.continues |= client;
            m.answers |= !client && owed > 0;
        }
        m
    }

    /// Reads the typed messages of a segment, and whether it began inside
    /// one begun earlier.
    fn messages(&mut self, dir: Direction, head: &[u8], len: u64) -> (Turns, bool) {
        let mut m = Turns::default();
        let client = dir == Direction::ClientToServer;
        let mut follow = self.follow[dir.index()];
        let walked = follow.walk(head, len, header, |kind, _, _| {
            if client {
                let asks = match kind {
                    b'Q' => Some("Query"),
                    b'S' => Some("Sync"),
                    b'F' => Some("FunctionCall"),
                    // Authentication's answers (a password, SASL's
                    // messages) are answered by the server's next step.
                    b'p' => Some("authentication"),
                    _ => None,
                };
                if matches!(kind, b'Q' | b'S' | b'F') {
                    self.owed += 1;
                }
                if let Some(name) = asks {
                    m.asks.get_or_insert(name);
                }
            } else if self.owed > 0 {
                // Owed a ReadyForQuery: the server's messages are the answer
                // (a `Z` the last of it).
                m.answers = true;
                // (A CopyBothResponse begins replication's streams: the
                // query is answered, nothing more is owed for it.)
                if kind == b'Z' || kind == b'W' {
                    self.owed -= 1;
                }
            }
        });
        self.follow[dir.index()] = follow;
        // A server message begun while an answer is owed, whose header the
        // capture cut or a segment's end split, is part of the answer (one
        // in a hole is not known to have begun).
        if let Some(Some(at)) = walked.map(|w| w.cut_at.or(w.carried_at)) {
            if !client && self.owed > 0 && (at as usize) < head.len() {
                m.answers = true;
            }
        }
        (m, walked.is_some_and(|w| w.continued))
    }
}

/// A typed message's header at the start of `bytes`: its type and its
/// whole length; `None` when the type is no letter or digit (ParseComplete
/// is `1`), the length less than its own four bytes, or the bytes end
/// inside the header.
fn header(bytes: &[u8]) -> Option<(u8, u64)> {
    let kind = *bytes.first()?;
    let length = u32::from_be_bytes(bytes.get(1..HEADER as usize)?.try_into().ok()?);
    (kind.is_ascii_alphanumeric() && length >= 4).then_some((kind, 1 + u64::from(length)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use Direction::{ClientToServer as C, ServerToClient as S};

    fn msg(kind: u8, body: &[u8]) -> Vec<u8> {
        let mut v = vec![kind];
        v.extend_from_slice(&(4 + body.len() as u32).to_be_bytes());
        v.extend_from_slice(body);
        v
    }

    fn startup() -> Vec<u8> {
        let body = b"user\0nobody\0database\0postgres\0\0";
        let mut v = (8 + body.len() as u32).to_be_bytes().to_vec();
        v.extend_from_slice(&PROTOCOL_3.to_be_bytes());
        v.extend_from_slice(body);
        v
    }

    fn ready() -> Vec<u8> {
        msg(b'Z', b"I")
    }

    fn read(p: &mut Postgres, dir: Direction, bytes: &[u8]) -> Turns {
        p.read(dir, bytes, bytes.len() as u64).expect("PostgreSQL")
    }

    #[test]
    fn notifications_after_ready_for_query_answer_nothing() {
        let mut p = Postgres::default();
        assert_eq!(read(&mut p, C, &startup()).asks, Some("startup"));
        let mut welcome = msg(b'R', &[0, 0, 0, 0]);
        welcome.extend(msg(b'S', b"server_version\x0016\0"));
        welcome.extend(msg(b'K', &[0; 8]));
        welcome.extend(ready());
        assert!(read(&mut p, S, &welcome).answers);
        assert_eq!(
            read(&mut p, C, &msg(b'Q', b"LISTEN feed\0")).asks,
            Some("Query")
        );
        let mut listening = msg(b'C', b"LISTEN\0");
        listening.extend(ready());
        assert!(read(&mut p, S, &listening).answers);
        // Another session's NOTIFY: the server owes nothing.
        let notification = msg(b'A', b"\0\0\0\x07feed\0n1\0");
        let pushed = read(&mut p, S, &notification);
        assert!(!pushed.answers && !pushed.extends);
        // The next query is answered again.
        assert_eq!(
            read(&mut p, C, &msg(b'Q', b"SELECT 1\0")).asks,
            Some("Query")
        );
        assert!(read(&mut p, S, &msg(b'T', &[0, 0])).answers);
    }

    #[test]
    fn a_pipeline_is_owed_one_ready_for_query_per_sync() {
        let mut p = Postgres::default();
        read(&mut p, C, &startup());
        read(&mut p, S, &ready());
        // Parse, Bind, Execute, Sync twice in one write: two answers owed.
        let mut pipeline = Vec::new();
        for _ in 0..2 {
            pipeline.extend(msg(b'P', b"\0SELECT 1\0\0\0"));
            pipeline.extend(msg(b'B', &[0; 8]));
            pipeline.extend(msg(b'E', &[0; 5]));
            pipeline.extend(msg(b'S', b""));
        }
        assert_eq!(read(&mut p, C, &pipeline).asks, Some("Sync"));
        let mut first = msg(b'1', b"");
        first.extend(msg(b'C', b"SELECT 1\0"));
        first.extend(ready());
        assert!(read(&mut p, S, &first).answers);
        // The second pipeline's results, a segment later: still owed.
        let mut second = msg(b'C', b"SELECT 1\0");
        second.extend(ready());
        assert!(read(&mut p, S, &second).answers);
        assert!(!read(&mut p, S, &msg(b'N', b"Snotice\0\0")).answers);
    }

    #[test]
    fn messages_are_followed_across_segments_and_a_refused_ssl_request() {
        let mut p = Postgres::default();
        let ssl = [0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f];
        assert_eq!(read(&mut p, C, &ssl).asks, Some("SSLRequest"));
        assert!(read(&mut p, S, b"N").answers);
        assert_eq!(read(&mut p, C, &startup()).asks, Some("startup"));
        read(&mut p, S, &ready());
        // A long query in two segments: the second goes on with it.
        let query = msg(b'Q', &[b'x'; 3000]);
        assert_eq!(read(&mut p, C, &query[..1400]).asks, Some("Query"));
        let rest = read(&mut p, C, &query[1400..]);
        assert!(rest.continues && rest.asks.is_none());
        // Its answer cut after its first byte, then a hole: lost until a
        // segment of whole messages.
        let mut answer = msg(b'C', b"SELECT 1\0");
        answer.extend(ready());
        assert!(read(&mut p, S, &answer[..3]).answers);
        assert!(!p.read(S, &[], 700).unwrap().answers);
        // The next segment of whole messages is read again: its `Z` ends
        // what was owed, and a notification after it answers nothing.
        let mut tail = msg(b'C', b"SELECT 1\0");
        tail.extend(ready());
        assert!(read(&mut p, S, &tail).answers);
        assert!(!read(&mut p, S, &msg(b'A', b"\0\0\0\x07feed\0n\0")).answers);
    }

    #[test]
    fn a_replication_streams_copy_data_answers_nothing() {
        let mut p = Postgres::default();
        read(&mut p, C, &startup());
        assert!(read(&mut p, S, &ready()).answers);
        let command = msg(b'Q', b"START_REPLICATION 0/3000000 TIMELINE 1\0");
        assert_eq!(read(&mut p, C, &command).asks, Some("Query"));
        assert!(read(&mut p, S, &msg(b'W', b"\0\0\0")).answers);
        // The primary's WAL, sent as transactions commit, before and after
        // the replica's status updates: no answers, no questions.
        assert!(!read(&mut p, S, &msg(b'd', b"w0000")).answers);
        assert_eq!(read(&mut p, C, &msg(b'd', b"r0000")), Turns::default());
        assert!(!read(&mut p, S, &msg(b'd', b"w0001")).answers);
    }

    #[test]
    fn an_accepted_ssl_request_leaves_the_connection_to_tls() {
        let mut p = Postgres::default();
        let ssl = [0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f];
        assert_eq!(read(&mut p, C, &ssl).asks, Some("SSLRequest"));
        // `S`: TLS follows; its records are no messages of this reader's.
        assert!(p.read(S, b"S", 1).is_none());
        assert!(p.read(C, b"\x16\x03\x01\x02\x00", 5).is_none());
        assert!(!p.is());
    }

    #[test]
    fn other_protocols_are_not_postgres() {
        for first in [
            &b"GET / HTTP/1.1\r\n\r\n"[..],
            b"\x16\x03\x01\x02\x00\x01",
            b"\0\0\0\x08",
        ] {
            let mut p = Postgres::default();
            assert!(p.read(C, first, first.len() as u64).is_none());
            assert!(!p.is());
        }
        // A server that speaks first (MySQL's greeting) is another's: a
        // PostgreSQL server waits for the start-up.
        let mut p = Postgres::default();
        assert!(p.read(S, b"\x4a\0\0\0\x0a8.0", 9).is_none());
        assert!(p.is_not());
        assert!(p.read(C, &startup(), startup().len() as u64).is_none());
    }

    proptest::proptest! {
        #[test]
        fn any_stream_bytes_are_read_without_panicking(segments in crate::reader::any::segments()) {
            let mut p = Postgres::default();
            p.read(C, &startup(), startup().len() as u64);
            crate::reader::any::feed(segments, |dir, bytes, len| {
                p.read(dir, bytes, len);
            });
            proptest::prop_assert!(p.is());
        }
    }
}
