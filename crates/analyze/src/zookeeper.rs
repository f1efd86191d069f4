//! ZooKeeper's client protocol (Apache ZooKeeper, and what speaks it:
//! Kafka's and HBase's coordination, kazoo, Curator): which requests ask,
//! which replies answer, and what the server sends on its own.
//!
//! Every message is a 32-bit length and that many bytes (jute). After
//! the session's ConnectRequest and its ConnectResponse, a request begins
//! with its xid and operation, a reply with the xid it answers (then the
//! zxid and an error code); the server answers a session's requests in
//! order. A watch the client set fires when another session changes the
//! node: the server sends a notification (xid -1) the moment that change
//! is made, asked by nobody then. Read as turns, a notification was the
//! rest of the reply before it (a "response transfer" of 1-1.5 s on a
//! kazoo DataWatch: the other session's pauses), or, had the client
//! asked meanwhile, that request's answer. The xids say what answers:
//!
//! | client sends                         | answered by                   |
//! |--------------------------------------|-------------------------------|
//! | ConnectRequest                       | ConnectResponse               |
//! | a request (xid, operation)           | the reply with its xid        |
//! | a ping (xid -2)                      | the reply with xid -2         |
//!
//! Notifications (xid -1) answer nothing. A connection is ZooKeeper's
//! when the client's first data is one whole ConnectRequest (protocol
//! version 0, a timeout, a 16-byte password), or, on port 2181 in a
//! capture begun on the connection, whole requests of known operations.
//! Messages are followed across segments by their lengths
//! (crate::framing).

use crate::exchange::Turns;
use crate::framing::{whole_messages, Follow};
use crate::reader::Reading;
use crate::Direction;

/// ZooKeeper's client port.
const PORT: u16 = 2181;
/// A message larger than this is none of ZooKeeper's (`jute.maxbuffer`,
/// about 1 MB by default; some raise it).
const MAX_MESSAGE: u32 = 1 << 26;
/// A ConnectRequest: protocol version, last zxid seen, timeout, session
/// id, the password's length and its 16 bytes (and, from 3.4, a
/// read-only flag).
const CONNECT_REQUEST: [u32; 2] = [44, 45];
/// The xid of the server's notifications.
const NOTIFICATION: i32 = -1;
/// The client's requests in flight at once are bounded; a forgotten one
/// only leaves its turn unanswered.
const MAX_AWAITED: usize = 64;

/// One connection's ZooKeeper reading (crate::reader).
pub(crate) type ZooKeeper = Reading<State>;

/// What a ZooKeeper connection's reading keeps.
#[derive(Debug, Clone, Default)]
pub struct State {
    follow: [Follow; 2],
    /// The session's ConnectResponse is still to come (the first reply
    /// has no xid).
    connecting: bool,
    /// The xids of the client's requests in flight, oldest first.
    awaited: Vec<i32>,
    /// The client's message under way asks.
    asking: bool,
    /// The server's message under way answers.
    answering: bool,
}

impl ZooKeeper {
    /// Whether `server_port` is ZooKeeper's.
    pub(crate) fn is_port(server_port: u16) -> bool {
        server_port == PORT
    }

    /// Reads a segment's stream bytes (`head` captured, `len` in all,
    /// which includes bytes the capture missed); `None` when the
    /// connection is not ZooKeeper's.
    pub(crate) fn read(
        &mut self,
        dir: Direction,
        head: &[u8],
        len: u64,
        mid_stream: bool,
    ) -> Option<Turns> {
        let port = self.port;
        let mut connect = false;
        let state = self.client_first(dir, mid_stream, || {
            connect = is_connect_request(head, len);
            let joined = port && mid_stream && whole_messages(head, len, request_size);
            connect || joined
        })?;
        if connect {
            state.connecting = true;
            state.asking = true;
            return Some(Turns {
                asks: Some("connect"),
                ..Turns::default()
            });
        }
        Some(state.read(dir, head, len))
    }
}

impl State {
    fn read(&mut self, dir: Direction, head: &[u8], len: u64) -> Turns {
        let mut m = Turns::default();
        let client = dir == Direction::ClientToServer;
        let size = if client { request_size } else { reply_size };
        let mut follow = self.follow[dir.index()];
        let walked = follow.walk(head, len, size, |(), bytes, _| {
            let xid = bytes
                .get(4..8)
                .map(|b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]));
            if client {
                let op = bytes
                    .get(8..12)
                    .map(|b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]));
                match (xid, op) {
                    (Some(xid), Some(op)) => {
                        m.asks.get_or_insert(operation(op));
                        crate::reader::push_bounded(&mut self.awaited, xid, MAX_AWAITED);
                        self.asking = true;
                    }
                    _ => self.asking = false,
                }
            } else if std::mem::take(&mut self.connecting) {
                // The ConnectResponse: no xid.
                m.answers = true;
                self.answering = true;
            } else {
                let i = xid
                    .filter(|&x| x != NOTIFICATION)
                    .and_then(|x| self.awaited.iter().position(|&a| a == x));
                self.answering = i.is_some();
                if let Some(i) = i {
                    self.awaited.drain(..=i);
                    m.answers = true;
                }
            }
        });
        self.follow[dir.index()] = follow;
        if walked.is_some_and(|w| w.continued) {
            m.go_on(dir, self.asking, self.answering);
        }
        m
    }
}

/// An operation's name, labelling its turn (ZooKeeper's `OpCode`).
fn operation(op: i32) -> &'static str {
    match op {
        1 => "create",
        2 => "delete",
        3 => "exists",
        4 => "getData",
        5 => "setData",
        6 => "getACL",
        7 => "setACL",
        8 => "getChildren",
        9 => "sync",
        11 => "ping",
        12 => "getChildren2",
        13 => "check",
        14 => "multi",
        15 => "create2",
        16 => "reconfig",
        17 => "checkWatches",
        18 => "removeWatches",
        19 => "createContainer",
        20 => "deleteContainer",
        21 => "createTTL",
        22 => "multiRead",
        100 => "auth",
        101 => "setWatches",
        102 => "sasl",
        103 => "getEphemerals",
        104 => "getAllChildrenNumber",
        105 => "setWatches2",
        106 => "addWatch",
        107 => "whoAmI",
        -11 => "closeSession",
        _ => "request",
    }
}

/// Whether an operation code is one a client sends.
fn known_operation(op: i32) -> bool {
    operation(op) != "request"
}

/// A request's length (the length field's 4 bytes included): room for
/// its xid and operation, an operation clients send when captured.
fn request_size(bytes: &[u8]) -> Option<((), u64)> {
    let size = u32::from_be_bytes(bytes.get(..4)?.try_into().ok()?);
    if !(8..=MAX_MESSAGE).contains(&size) {
        return None;
    }
    if let Some(op) = bytes.get(8..12) {
        if !known_operation(i32::from_be_bytes([op[0], op[1], op[2], op[3]])) {
            return None;
        }
    }
    Some(((), 4 + u64::from(size)))
}

/// A reply's length: at least its xid, zxid and error code (a
/// ConnectResponse is longer still).
fn reply_size(bytes: &[u8]) -> Option<((), u64)> {
    let size = u32::from_be_bytes(bytes.get(..4)?.try_into().ok()?);
    (16..=MAX_MESSAGE)
        .contains(&size)
        .then_some(((), 4 + u64::from(size)))
}

/// A whole ConnectRequest, alone in the segment: protocol version 0, a
/// timeout of up to ten minutes, a password of 16 bytes.
fn is_connect_request(head: &[u8], len: u64) -> bool {
    let Some(size) = head
        .get(..4)
        .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    else {
        return false;
    };
    let i32_at = |at: usize| {
        head.get(at..at + 4)
            .map(|b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    };
    CONNECT_REQUEST.contains(&size)
        && head.len() as u64 == len
        && len == 4 + u64::from(size)
        && i32_at(4) == Some(0)
        && i32_at(16).is_some_and(|t| (1..=600_000).contains(&t))
        && i32_at(28) == Some(16)
}

#[cfg(test)]
mod tests {
    use super::*;
    use Direction::{ClientToServer as C, ServerToClient as S};

    /// A ping's xid.
    const PING: i32 = -2;

    fn message(fields: &[i32], tail: &[u8]) -> Vec<u8> {
        let mut body: Vec<u8> = fields.iter().flat_map(|f| f.to_be_bytes()).collect();
        body.extend_from_slice(tail);
        let mut m = (body.len() as u32).to_be_bytes().to_vec();
        m.extend(body);
        m
    }

    /// kazoo's ConnectRequest: version 0, zxid 0, 6 s, session 0, a
    /// 16-byte password, read-only false.
    fn connect_request() -> Vec<u8> {
        let mut tail = vec![0; 8];
        tail.splice(0..0, 6000i32.to_be_bytes());
        tail.splice(0..0, [0u8; 8]);
        let mut body = 0i32.to_be_bytes().to_vec();
        body.extend_from_slice(&tail);
        body.extend_from_slice(&16i32.to_be_bytes());
        body.extend_from_slice(&[0; 16]);
        body.push(0);
        let mut m = (body.len() as u32).to_be_bytes().to_vec();
        m.extend(body);
        m
    }

    fn request(xid: i32, op: i32) -> Vec<u8> {
        message(&[xid, op], b"\0\0\0\x04/lab\0")
    }

    /// A reply: xid, zxid (8 bytes), error 0, then `body` bytes.
    fn reply(xid: i32, body: usize) -> Vec<u8> {
        message(&[xid, 0, 9, 0], &vec![0; body])
    }

    fn read(z: &mut ZooKeeper, dir: Direction, bytes: &[u8]) -> Turns {
        z.read(dir, bytes, bytes.len() as u64, false)
            .expect("ZooKeeper's")
    }

    fn connected() -> ZooKeeper {
        let mut z = ZooKeeper::default();
        assert_eq!(read(&mut z, C, &connect_request()).asks, Some("connect"));
        assert!(z.is());
        assert!(read(&mut z, S, &message(&[0, 6000, 0, 0], &[0; 22])).answers);
        z
    }

    #[test]
    fn a_watchs_notification_answers_nothing() {
        let mut z = connected();
        assert_eq!(read(&mut z, C, &request(1, 4)).asks, Some("getData"));
        assert!(read(&mut z, S, &reply(1, 40)).answers);
        // Another session changed the node: the notification.
        assert_eq!(read(&mut z, S, &reply(NOTIFICATION, 30)), Turns::default());
        // Asked again; a notification before the reply answers nothing,
        // the reply does.
        assert_eq!(read(&mut z, C, &request(2, 4)).asks, Some("getData"));
        assert!(!read(&mut z, S, &reply(NOTIFICATION, 30)).answers);
        assert!(read(&mut z, S, &reply(2, 40)).answers);
    }

    #[test]
    fn pings_and_requests_are_answered_by_their_xids_in_order() {
        let mut z = connected();
        assert_eq!(read(&mut z, C, &request(PING, 11)).asks, Some("ping"));
        assert!(read(&mut z, S, &reply(PING, 0)).answers);
        let both = [request(3, 1), request(4, 5)].concat();
        assert_eq!(read(&mut z, C, &both).asks, Some("create"));
        assert!(read(&mut z, S, &reply(3, 8)).answers);
        assert!(read(&mut z, S, &reply(4, 8)).answers);
        assert!(!read(&mut z, S, &reply(4, 8)).answers, "answered once");
        // A large reply across segments.
        let big = reply(5, 3000);
        assert_eq!(read(&mut z, C, &request(5, 4)).asks, Some("getData"));
        assert!(read(&mut z, S, &big[..1448]).answers);
        assert!(read(&mut z, S, &big[1448..]).extends);
    }

    #[test]
    fn only_a_connect_request_or_known_requests_on_its_port_decide() {
        let mut z = ZooKeeper::default();
        let cut = connect_request();
        z.read(C, &cut[..20], cut.len() as u64, false);
        assert!(z.is_not(), "cut");
        let mut other = ZooKeeper::on_its_port();
        other.read(C, b"GET / HTTP/1.1\r\n\r\n", 18, false);
        assert!(other.is_not());
        // Joined on its port: whole requests.
        let requests = [request(7, 11), request(8, 4)].concat();
        let mut joined = ZooKeeper::on_its_port();
        assert!(joined
            .read(C, &requests, requests.len() as u64, true)
            .is_some());
        let mut elsewhere = ZooKeeper::default();
        elsewhere.read(C, &requests, requests.len() as u64, true);
        assert!(elsewhere.is_not());
    }

    proptest::proptest! {
        #[test]
        fn any_stream_bytes_are_read_without_panicking(segments in crate::reader::any::segments()) {
            let mut z = connected();
            crate::reader::any::feed(segments, |dir, bytes, len| {
                z.read(dir, bytes, len, false);
            });
            proptest::prop_assert!(z.is());
        }
    }
}
