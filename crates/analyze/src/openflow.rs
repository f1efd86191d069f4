//! OpenFlow (Open Networking Foundation, versions 1.0 to 1.5): which
//! messages open a turn and which answer it.
//!
//! A switch connects to its controller (the TCP server, port 6653, 6633
//! before IANA's), and from then on the controller asks: features, config,
//! statistics, flow changes, barriers, echoes; the switch replies. The
//! switch's own messages are replies, notifications (port status, flow
//! removed, errors) and HELLO, which both sides send at once, none of them
//! a request. Taken as turns, every reply of the switch would "ask" the
//! controller's next request, and the controller's timers and its
//! application would be measured as its answers (tcpdump's `of10_s4810`,
//! `of13_ericsson`). Two messages of the switch do ask: ECHO_REQUEST,
//! answered by the ECHO_REPLY with its transaction id, and PACKET_IN that
//! left the packet in a switch buffer, answered by the PACKET_OUT that
//! names that buffer. Only those open a turn, and only their answers
//! answer it (exchange.rs); a controller's own PACKET_OUTs (probes that
//! carry their packet) and echoes answer nothing.
//!
//! A connection is OpenFlow when its server port is OpenFlow's and its
//! first data is a whole chain of OpenFlow headers (version 1 to 6, a type
//! OpenFlow defines, a length of at least the 8-byte header); the types
//! these are have kept their numbers in every version. Messages are
//! followed across segments by their lengths, so a segment that starts
//! inside one is read from the next header on; after a hole in the
//! capture, from the next segment that starts with a header (a segment
//! read no further asks and answers nothing).

use crate::exchange::Turns as Messages;
use crate::Direction;

/// OpenFlow's ports: IANA's (6653) and the one used before it (6633).
const PORTS: [u16; 2] = [6653, 6633];
/// The 8-byte header: version, type, length, transaction id.
const HEADER: usize = 8;
/// Types up to OFPT_REQUESTFORWARD (1.5's highest).
const MAX_TYPE: u8 = 34;
const ECHO_REQUEST: u8 = 2;
const ECHO_REPLY: u8 = 3;
const PACKET_IN: u8 = 10;
const PACKET_OUT: u8 = 13;
/// A PACKET_IN's buffer id when the switch kept no copy (the packet is
/// in the message, and a PACKET_OUT carries it back: nothing to match).
const NO_BUFFER: u32 = u32::MAX;

/// One connection's OpenFlow reading.
#[derive(Debug, Clone, Default)]
pub struct OpenFlow {
    /// Decided on the first data: OpenFlow or not.
    is: Option<bool>,
    /// Per direction: bytes of the message under way still to come.
    rest: [u64; 2],
    /// Per direction: the messages could not be followed (a hole in the
    /// capture) since the last segment that began with a header.
    lost: [bool; 2],
    /// The switch's last asking message: its type and what its answer
    /// repeats (the ECHO_REQUEST's transaction id, the PACKET_IN's buffer).
    open: Option<(u8, u32)>,
    /// The server listens on an OpenFlow port (set with the roles, and
    /// again if they are swapped before the first payload).
    pub(crate) port: bool,
}

impl OpenFlow {
    /// Whether `server_port` is OpenFlow's.
    pub(crate) fn is_port(server_port: u16) -> bool {
        PORTS.contains(&server_port)
    }

    /// Decided: OpenFlow (`Some(true)`), not, or not known yet.
    pub(crate) fn decided(&self) -> Option<bool> {
        self.is
    }

    /// Reads a segment's stream bytes (`head` captured, `len` in all,
    /// which includes bytes the capture missed); `None` when the
    /// connection is not OpenFlow.
    pub(crate) fn read(&mut self, dir: Direction, head: &[u8], len: u64) -> Option<Messages> {
        if self.is.is_none() {
            self.is = Some(self.port && whole_chain(head, len));
        }
        if self.is != Some(true) {
            return None;
        }
        let d = dir.index();
        if self.lost[d] {
            // Lost in a hole: a segment that starts with a header (as a
            // sender writes them, message by message) finds the way back.
            if !head.get(..HEADER).is_some_and(valid) {
                return Some(Messages::default());
            }
            self.lost[d] = false;
            self.rest[d] = 0;
        }
        let mut m = Messages::default();
        let mut at = self.rest[d].min(len);
        self.rest[d] -= at;
        while at < len {
            let Some(h) = head
                .get(at as usize..at as usize + HEADER)
                .filter(|h| valid(h))
            else {
                // A hole the capture left, a header it cut or one split
                // across segments: nothing more is known of this segment.
                self.lost[d] = true;
                return Some(Messages::default());
            };
            let id = |from: u64| {
                head.get(from as usize..from as usize + 4)
                    .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
            };
            let key = match h[1] {
                ECHO_REQUEST | ECHO_REPLY => id(at + 4),
                PACKET_IN | PACKET_OUT => id(at + 8).filter(|b| *b != NO_BUFFER),
                _ => None,
            };
            match (dir, h[1], key) {
                (Direction::ClientToServer, ECHO_REQUEST | PACKET_IN, Some(k))
                    if m.asks.is_none() =>
                {
                    m.asks = Some(if h[1] == ECHO_REQUEST {
                        "ECHO_REQUEST"
                    } else {
                        "PACKET_IN"
                    });
                    self.open = Some((h[1], k));
                }
                // The answer repeats what its question named.
                (Direction::ServerToClient, ECHO_REPLY, Some(k)) => {
                    m.answers |= self.open == Some((ECHO_REQUEST, k));
                }
                (Direction::ServerToClient, PACKET_OUT, Some(k)) => {
                    m.answers |= self.open == Some((PACKET_IN, k));
                }
                _ => {}
            }
            let length = u64::from(u16::from_be_bytes([h[2], h[3]]));
            if at + length > len {
                self.rest[d] = at + length - len;
            }
            at += length;
        }
        Some(m)
    }
}

/// An OpenFlow header: a version from 1.0 (1) to 1.5 (6), a type OpenFlow
/// defines, a length that holds at least the header.
fn valid(h: &[u8]) -> bool {
    (1..=6).contains(&h[0])
        && h[1] <= MAX_TYPE
        && usize::from(u16::from_be_bytes([h[2], h[3]])) >= HEADER
}

/// Whether a segment's bytes are OpenFlow messages from its first byte to
/// its last, all of one version.
fn whole_chain(head: &[u8], len: u64) -> bool {
    if head.len() as u64 != len || head.is_empty() {
        return false;
    }
    let mut at = 0;
    while at < head.len() {
        let Some(h) = head.get(at..at + HEADER) else {
            return false;
        };
        if !valid(h) || h[0] != head[0] {
            return false;
        }
        at += usize::from(u16::from_be_bytes([h[2], h[3]]));
    }
    at == head.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use Direction::*;

    /// An OpenFlow 1.3 message of `kind` with `body` bytes after the
    /// header: transaction id 7, and a body that starts with buffer id 9.
    fn msg(kind: u8, body: usize) -> Vec<u8> {
        msg_ids(kind, body, 7, 9)
    }

    /// The same with this transaction id and buffer id.
    fn msg_ids(kind: u8, body: usize, xid: u32, buffer: u32) -> Vec<u8> {
        let len = (HEADER + body) as u16;
        let mut m = vec![4, kind];
        m.extend_from_slice(&len.to_be_bytes());
        m.extend_from_slice(&xid.to_be_bytes());
        m.extend_from_slice(&buffer.to_be_bytes());
        m.resize(HEADER + body, 0xab);
        m
    }

    fn openflow() -> OpenFlow {
        OpenFlow {
            port: true,
            ..OpenFlow::default()
        }
    }

    fn read(o: &mut OpenFlow, dir: Direction, bytes: &[u8]) -> Option<Messages> {
        o.read(dir, bytes, bytes.len() as u64)
    }

    /// The switch's segment asks.
    fn asks(o: &mut OpenFlow, bytes: &[u8]) -> bool {
        read(o, ClientToServer, bytes)
            .expect("OpenFlow")
            .asks
            .is_some()
    }

    /// The controller's segment answers what is open.
    fn answers(o: &mut OpenFlow, bytes: &[u8]) -> bool {
        read(o, ServerToClient, bytes).expect("OpenFlow").answers
    }

    #[test]
    fn the_switch_asks_with_echo_and_packet_in_only() {
        let mut o = openflow();
        // HELLO both ways, then the controller's requests and the
        // switch's replies: nothing asks.
        let none = Some(Messages::default());
        assert_eq!(read(&mut o, ClientToServer, &msg(0, 0)), none);
        assert_eq!(read(&mut o, ServerToClient, &msg(0, 0)), none);
        assert_eq!(
            read(&mut o, ServerToClient, &msg(5, 0)),
            none,
            "FEATURES_REQUEST"
        );
        assert_eq!(
            read(&mut o, ClientToServer, &msg(6, 24)),
            none,
            "FEATURES_REPLY"
        );
        assert_eq!(read(&mut o, ClientToServer, &msg(ECHO_REPLY, 0)), none);
        // The switch asks; the controller answers.
        let packet_in = read(&mut o, ClientToServer, &msg(PACKET_IN, 100)).unwrap();
        assert!(packet_in.asks == Some("PACKET_IN") && !packet_in.answers);
        assert!(answers(&mut o, &msg(PACKET_OUT, 40)));
        assert!(asks(&mut o, &msg(ECHO_REQUEST, 0)));
        // The controller's own ECHO_REQUEST answers nothing; an ECHO_REPLY
        // of another transaction neither.
        assert!(!answers(&mut o, &msg(ECHO_REQUEST, 0)));
        let other = msg_ids(ECHO_REPLY, 0, 8, 0);
        assert!(!answers(&mut o, &other));
        assert!(answers(&mut o, &msg(ECHO_REPLY, 0)));
    }

    #[test]
    fn a_packet_in_is_answered_by_the_packet_out_of_its_buffer() {
        let mut o = openflow();
        assert!(read(&mut o, ClientToServer, &msg(0, 0)).is_some());
        assert!(asks(&mut o, &msg_ids(PACKET_IN, 100, 0, 4)));
        // of13_ericsson.pcapng frame 68: a PACKET_OUT carrying its own
        // packet (no buffer), the controller's probe, 15 ms after the
        // PACKET_IN of buffer 4 (frame 66): not its answer.
        let probe = msg_ids(PACKET_OUT, 92, 0, NO_BUFFER);
        assert!(!answers(&mut o, &probe));
        let other = msg_ids(PACKET_OUT, 40, 0, 5);
        assert!(!answers(&mut o, &other));
        let answer = msg_ids(PACKET_OUT, 40, 0, 4);
        assert!(answers(&mut o, &answer));
        // A PACKET_IN that kept no buffer asks nothing that can be matched.
        let unbuffered = msg_ids(PACKET_IN, 100, 0, NO_BUFFER);
        assert!(!asks(&mut o, &unbuffered));
    }

    #[test]
    fn messages_are_followed_across_segments() {
        let mut o = openflow();
        assert!(read(&mut o, ClientToServer, &msg(0, 0)).is_some());
        // A 4104-byte STATS_REPLY in three segments, a PACKET_IN starting
        // inside the last.
        let big = msg(19, 4096);
        let mut tail = big[3000..].to_vec();
        tail.extend(msg(PACKET_IN, 20));
        assert_eq!(
            read(&mut o, ClientToServer, &big[..1448]),
            Some(Messages::default())
        );
        assert_eq!(
            read(&mut o, ClientToServer, &big[1448..3000]),
            Some(Messages::default())
        );
        assert!(asks(&mut o, &tail));
        // Bytes the capture did not keep are skipped by the length too.
        let cut = msg(19, 1000);
        assert_eq!(
            o.read(ClientToServer, &cut[..100], 1008),
            Some(Messages::default())
        );
        assert!(asks(&mut o, &msg(ECHO_REQUEST, 0)));
    }

    #[test]
    fn a_hole_in_the_capture_is_crossed_at_the_next_header() {
        // of13_ericsson.pcapng: segments missing from the capture, then a
        // MULTIPART_REPLY, the controller's ECHO_REQUEST, the switch's
        // ECHO_REPLY.
        let mut o = openflow();
        assert!(read(&mut o, ClientToServer, &msg(0, 0)).is_some());
        let none = Some(Messages::default());
        assert_eq!(o.read(ClientToServer, &[], 700), none, "the hole");
        // A segment starting inside a message: still lost.
        assert_eq!(read(&mut o, ClientToServer, &msg(19, 40)[20..]), none);
        assert_eq!(
            read(&mut o, ClientToServer, &msg(19, 568)),
            none,
            "found again"
        );
        assert!(!answers(&mut o, &msg(ECHO_REQUEST, 0)));
        assert_eq!(read(&mut o, ClientToServer, &msg(ECHO_REPLY, 0)), none);
        assert!(asks(&mut o, &msg(PACKET_IN, 30)));
    }

    #[test]
    fn other_protocols_and_ports_are_not_openflow() {
        // HTTP, a length that is not the segment's, mixed versions, a
        // type beyond 1.5's, another port.
        let mut mixed = msg(0, 0);
        mixed.extend(vec![1, 0, 0, 8, 0, 0, 0, 1]);
        let mut beyond = msg(0, 0);
        beyond[1] = 40;
        for first in [
            b"GET / HTTP/1.1\r\n\r\n".to_vec(),
            msg(0, 0)[..6].to_vec(),
            mixed,
            beyond,
        ] {
            let mut o = openflow();
            assert_eq!(read(&mut o, ClientToServer, &first), None, "{first:?}");
            assert_eq!(read(&mut o, ClientToServer, &msg(ECHO_REQUEST, 0)), None);
        }
        let mut o = OpenFlow::default();
        assert_eq!(
            read(&mut o, ClientToServer, &msg(0, 0)),
            None,
            "not its port"
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
            let mut o = openflow();
            for (client, bytes, missing) in chunks {
                let dir = if client { ClientToServer } else { ServerToClient };
                o.read(dir, &bytes, bytes.len() as u64 + missing);
            }
        }
    }
}
