//! MQTT (OASIS MQTT 3.1, 3.1.1 and 5.0): which messages open a turn and
//! which answer it.
//!
//! A client connects to a broker (the TCP server, port 1883) and from then
//! on both sides send on their own: the client publishes and subscribes
//! and pings on its keep-alive timer; the broker pushes every message
//! published to a topic the client subscribed to, the moment another
//! client publishes it. Taken as turns, a subscriber's acknowledgment of
//! one push (PUBACK) would "ask" for the next push, and the publisher's
//! pause between messages would be measured as the broker's think time (a
//! subscriber waiting for a message published a second later, 1 s of
//! `server_think_time`); a push after a PINGRESP would be that answer's
//! second write, held by Nagle's algorithm. The messages say what asks:
//!
//! | client sends             | answered by the broker's      |
//! |--------------------------|-------------------------------|
//! | CONNECT, AUTH            | CONNACK or AUTH               |
//! | PUBLISH at QoS 1         | PUBACK with its packet id     |
//! | PUBLISH at QoS 2         | PUBREC with its packet id     |
//! | PUBREC (of a push)       | PUBREL with its packet id     |
//! | PUBREL                   | PUBCOMP with its packet id    |
//! | SUBSCRIBE, UNSUBSCRIBE   | SUBACK, UNSUBACK with its id  |
//! | PINGREQ                  | PINGRESP                      |
//!
//! A PUBLISH at QoS 0, PUBACK, PUBCOMP and DISCONNECT ask nothing. The
//! broker's PUBLISH answers nothing, with one exception: a message it
//! sends *because* a subscription was just made, a retained one, carries
//! the RETAIN flag (3.1.1 section 3.3.1.3, 5.0 section 3.3.1.3; messages of
//! established subscriptions have it clear), and is the rest of the
//! SUBSCRIBE's answer: what the subscriber waited for.
//!
//! A connection is MQTT when its client's first data is a CONNECT naming
//! the protocol (`MQTT`, or 3.1's `MQIsdp`), on any port, or, on port
//! 1883, when its first data is a whole chain of MQTT headers (a capture
//! that began after the CONNECT). Messages are followed across segments
//! by their lengths; after a hole in the capture, from the next segment
//! that is a whole chain again (a segment read no further asks and answers
//! nothing).

use crate::exchange::Turns as Messages;
use crate::framing::{whole_messages, Follow, Walked};
use crate::reader::Reading;
use crate::Direction;

/// MQTT's unencrypted port (IANA). 8883 carries it inside TLS, where the
/// messages cannot be read.
const PORT: u16 = 1883;
/// MQTT inside TLS (IANA's secure-mqtt): the messages are not read
/// there, but a broker's writes are worded as a broker's (exchange.rs).
pub(crate) const TLS_PORT: u16 = 8883;
/// The longest fixed header: a type byte and four bytes of length.
const LONGEST_HEADER: usize = 5;

const CONNECT: u8 = 1;
const CONNACK: u8 = 2;
const PUBLISH: u8 = 3;
const PUBACK: u8 = 4;
const PUBREC: u8 = 5;
const PUBREL: u8 = 6;
const PUBCOMP: u8 = 7;
const SUBSCRIBE: u8 = 8;
const SUBACK: u8 = 9;
const UNSUBSCRIBE: u8 = 10;
const UNSUBACK: u8 = 11;
const PINGREQ: u8 = 12;
const PINGRESP: u8 = 13;
const DISCONNECT: u8 = 14;
const AUTH: u8 = 15;

/// Questions asked and not yet answered, kept per connection: a client
/// publishing at QoS 1 has at most its broker's receive maximum in flight,
/// and an answer to one forgotten only leaves its turn unanswered.
const MAX_AWAITED: usize = 32;

/// One connection's MQTT reading (crate::reader).
pub(crate) type Mqtt = Reading<State>;

/// What an MQTT connection's reading keeps.
#[derive(Debug, Clone, Default)]
pub struct State {
    /// Per direction: where the messages are (crate::framing).
    follow: [Follow; 2],
    /// The client's message under way asks.
    rest_asks: bool,
    /// The client's open questions: the answers' types (a bit each) and
    /// the packet id the answer repeats, when the question had one.
    awaited: Vec<(u16, Option<u16>)>,
    /// The broker's last answer was a SUBACK and the client has sent
    /// nothing since: retained messages now are part of that answer.
    subscribed: bool,
}

impl Mqtt {
    /// Whether `server_port` is MQTT's.
    pub(crate) fn is_port(server_port: u16) -> bool {
        server_port == PORT
    }

    /// Reads a segment's stream bytes (`head` captured, `len` in all,
    /// which includes bytes the capture missed); `None` when the
    /// connection is not MQTT.
    pub(crate) fn read(&mut self, dir: Direction, head: &[u8], len: u64) -> Option<Messages> {
        let port = self.port;
        let decide = || {
            let connect = dir == Direction::ClientToServer && is_connect(head);
            Some(connect || (port && whole_chain(head, len)) || unmistakable(head, len))
        };
        Some(self.state(decide)?.read(dir, head, len))
    }
}

impl State {
    fn read(&mut self, dir: Direction, head: &[u8], len: u64) -> Messages {
        let mut m = Messages::default();
        // Whether the client's message under way (if the segment goes on
        // with one) asks.
        let asking = self.rest_asks;
        if dir == Direction::ClientToServer {
            self.subscribed = false;
        }
        let mut follow = self.follow[dir.index()];
        let walked = follow.walk(head, len, message, |(kind, flags, header), bytes, _| {
            let body = header;
            let id = |from: usize| {
                bytes
                    .get(from..from + 2)
                    .map(|b| u16::from_be_bytes([b[0], b[1]]))
            };
            // A PUBLISH's packet id follows its topic (at QoS 1 and 2).
            let publish_id = || {
                let topic = id(body)?;
                id(body + 2 + usize::from(topic))
            };
            let qos = (flags >> 1) & 3;
            match dir {
                Direction::ClientToServer => {
                    let question = match kind {
                        CONNECT => Some(("CONNECT", bit(CONNACK) | bit(AUTH), None)),
                        AUTH => Some(("AUTH", bit(CONNACK) | bit(AUTH), None)),
                        PUBLISH if qos == 1 => Some(("PUBLISH", bit(PUBACK), publish_id())),
                        PUBLISH if qos == 2 => Some(("PUBLISH", bit(PUBREC), publish_id())),
                        PUBREC => Some(("PUBREC", bit(PUBREL), id(body))),
                        PUBREL => Some(("PUBREL", bit(PUBCOMP), id(body))),
                        SUBSCRIBE => Some(("SUBSCRIBE", bit(SUBACK), id(body))),
                        UNSUBSCRIBE => Some(("UNSUBSCRIBE", bit(UNSUBACK), id(body))),
                        PINGREQ => Some(("PINGREQ", bit(PINGRESP), None)),
                        _ => None,
                    };
                    self.rest_asks = question.is_some();
                    if let Some((name, answers, packet)) = question {
                        m.asks.get_or_insert(name);
                        crate::reader::push_bounded(
                            &mut self.awaited,
                            (answers, packet),
                            MAX_AWAITED,
                        );
                    }
                }
                Direction::ServerToClient => {
                    let packet = match kind {
                        PUBACK | PUBREC | PUBREL | PUBCOMP | SUBACK | UNSUBACK => id(body),
                        _ => None,
                    };
                    let answered = self.awaited.iter().position(|&(types, awaited)| {
                        types & bit(kind) != 0
                            && (awaited.is_none() || packet.is_none() || awaited == packet)
                    });
                    if let Some(i) = answered {
                        self.awaited.remove(i);
                        m.answers = true;
                        self.subscribed = kind == SUBACK;
                    } else if kind == PUBLISH && flags & 1 == 1 && self.subscribed {
                        m.extends = true;
                    }
                }
            }
        });
        self.follow[dir.index()] = follow;
        match walked {
            // Lost in a hole, or a header the capture cut or split across
            // segments: nothing more is known of this segment.
            None
            | Some(Walked {
                cut_at: Some(_), ..
            }) => Messages::default(),
            Some(w) => {
                m.continues = dir == Direction::ClientToServer && w.continued && asking;
                m
            }
        }
    }
}

/// A message type's bit in a set of types.
fn bit(kind: u8) -> u16 {
    1 << kind
}

/// The fixed header at the start of `bytes`: its type, its flags, its own
/// length and the whole message's; `None` when it is no MQTT header (type
/// 0, a PUBLISH at QoS 3, a length of more than four bytes) or when the
/// bytes end inside it.
fn header(bytes: &[u8]) -> Option<(u8, u8, usize, u64)> {
    let (&first, rest) = bytes.split_first()?;
    let (kind, flags) = (first >> 4, first & 0x0f);
    if kind == 0 || (kind == PUBLISH && (flags >> 1) & 3 == 3) {
        return None;
    }
    let mut remaining = 0u64;
    for (i, &b) in rest.iter().take(LONGEST_HEADER - 1).enumerate() {
        remaining |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            let header = i + 2;
            return Some((kind, flags, header, header as u64 + remaining));
        }
    }
    None
}

/// A CONNECT naming MQTT: type 1 with no flags, a length, then the
/// protocol name `MQTT` (3.1.1, 5.0) or `MQIsdp` (3.1) behind its 16-bit
/// length.
fn is_connect(head: &[u8]) -> bool {
    let Some((CONNECT, 0, header, _)) = header(head) else {
        return false;
    };
    let name = &head[header..];
    name.starts_with(b"\x00\x04MQTT") || name.starts_with(b"\x00\x06MQIsdp")
}

/// The message at the start of `bytes`, for crate::framing: its type,
/// flags and header length, and its whole length.
fn message(bytes: &[u8]) -> Option<((u8, u8, usize), u64)> {
    header(bytes).map(|(kind, flags, header, length)| ((kind, flags, header), length))
}

/// On any port, a capture that began after the CONNECT: a segment of
/// whole messages whose first can hardly be anything but MQTT: a PINGREQ,
/// PINGRESP or DISCONNECT (`c0 00`, `d0 00`, `e0 00`), an acknowledgment
/// of a non-zero packet id alone (PUBACK, PUBREC, PUBCOMP `x0 02`, PUBREL
/// `62 02`), or a PUBLISH whose topic, behind its 16-bit length, is
/// printable and names no wildcard (a text protocol's bytes make a topic
/// length of 8,224 or more, longer than its one-byte remaining length).
/// nDPI's coap_mqtt.pcap: a broker on port 17501, the capture begun on a
/// PINGREQ; read as turns, each PUBACK "asked" for the next push.
fn unmistakable(head: &[u8], len: u64) -> bool {
    // (The first message first: most connections' first bytes are no
    // MQTT header of these types, and the chain is walked only then.)
    let Some((kind, flags, header, length)) = header(head) else {
        return false;
    };
    if !matches!(
        kind,
        PINGREQ | PINGRESP | DISCONNECT | PUBACK | PUBREC | PUBCOMP | PUBREL | PUBLISH
    ) || length > len
        || !whole_chain(head, len)
    {
        return false;
    }
    let id = |at: usize| {
        head.get(at..at + 2)
            .map(|b| u16::from_be_bytes([b[0], b[1]]))
    };
    match kind {
        PINGREQ | PINGRESP | DISCONNECT => flags == 0 && length == 2,
        PUBACK | PUBREC | PUBCOMP | PUBREL => {
            flags == if kind == PUBREL { 2 } else { 0 }
                && length == 4
                && id(2).is_some_and(|id| id != 0)
        }
        PUBLISH => {
            let Some(topic) = id(header).map(usize::from).filter(|&n| n > 0) else {
                return false;
            };
            let packet_id = if (flags >> 1) & 3 > 0 { 2 } else { 0 };
            (header + 2 + topic + packet_id) as u64 <= length
                && head[header + 2..header + 2 + topic]
                    .iter()
                    .all(|&b| (0x20..0x7f).contains(&b) && b != b'+' && b != b'#')
        }
        _ => false,
    }
}

/// Whether a segment's bytes are MQTT messages from its first byte to its
/// last (all captured).
fn whole_chain(head: &[u8], len: u64) -> bool {
    whole_messages(head, len, message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use Direction::*;

    /// A message: its first byte, then its body behind a remaining length.
    fn msg(first: u8, body: &[u8]) -> Vec<u8> {
        let mut m = vec![first];
        let mut n = body.len();
        loop {
            let b = (n & 0x7f) as u8;
            n >>= 7;
            m.push(if n > 0 { b | 0x80 } else { b });
            if n == 0 {
                break;
            }
        }
        m.extend_from_slice(body);
        m
    }

    /// mosquitto_sub's CONNECT (3.1.1, client id "sub").
    fn connect() -> Vec<u8> {
        msg(0x10, b"\x00\x04MQTT\x04\x02\x00\x3c\x00\x03sub")
    }

    /// A PUBLISH of `payload` to topic `a/b` at `qos`, packet id `id` (at
    /// QoS 1 and 2), the RETAIN flag as told.
    fn publish(qos: u8, id: u16, retain: bool, payload: &[u8]) -> Vec<u8> {
        let mut body = b"\x00\x03a/b".to_vec();
        if qos > 0 {
            body.extend_from_slice(&id.to_be_bytes());
        }
        body.extend_from_slice(payload);
        msg(0x30 | qos << 1 | u8::from(retain), &body)
    }

    /// A message of `kind` that carries only a packet id.
    fn with_id(first: u8, id: u16) -> Vec<u8> {
        msg(first, &id.to_be_bytes())
    }

    fn subscribe(id: u16) -> Vec<u8> {
        let mut body = id.to_be_bytes().to_vec();
        body.extend_from_slice(b"\x00\x06feed/#\x01");
        msg(0x82, &body)
    }

    fn suback(id: u16) -> Vec<u8> {
        let mut body = id.to_be_bytes().to_vec();
        body.push(1);
        msg(0x90, &body)
    }

    fn mqtt() -> Mqtt {
        let mut m = Mqtt::default();
        assert_eq!(
            read(&mut m, ClientToServer, &connect()).and_then(|m| m.asks),
            Some("CONNECT")
        );
        assert!(answers(&mut m, &msg(0x20, &[0, 0])), "CONNACK");
        m
    }

    fn read(m: &mut Mqtt, dir: Direction, bytes: &[u8]) -> Option<Messages> {
        m.read(dir, bytes, bytes.len() as u64)
    }

    /// The client's segment asks: the name of what.
    fn asks(m: &mut Mqtt, bytes: &[u8]) -> Option<&'static str> {
        read(m, ClientToServer, bytes).expect("MQTT").asks
    }

    /// The broker's segment answers a question open.
    fn answers(m: &mut Mqtt, bytes: &[u8]) -> bool {
        read(m, ServerToClient, bytes).expect("MQTT").answers
    }

    #[test]
    fn a_subscriber_asks_nothing_by_acknowledging_pushes() {
        // mosquitto_sub at QoS 1: SUBSCRIBE answered by its SUBACK, then
        // pushes the broker sends as others publish, each acknowledged.
        let mut m = mqtt();
        assert_eq!(asks(&mut m, &subscribe(1)), Some("SUBSCRIBE"));
        assert!(answers(&mut m, &suback(1)));
        let none = Some(Messages::default());
        assert_eq!(
            read(&mut m, ServerToClient, &publish(1, 7, false, b"x")),
            none
        );
        assert_eq!(read(&mut m, ClientToServer, &with_id(0x40, 7)), none);
        assert_eq!(
            read(&mut m, ServerToClient, &publish(0, 0, false, b"y")),
            none
        );
        // Its keep-alive asks; a PINGRESP answers, the push after it not.
        assert_eq!(asks(&mut m, &msg(0xc0, &[])), Some("PINGREQ"));
        assert!(answers(&mut m, &msg(0xd0, &[])));
        assert!(!answers(&mut m, &publish(1, 8, false, b"z")));
        assert!(!answers(&mut m, &msg(0xd0, &[])), "no second PINGRESP");
        // QoS 2 inbound: the subscriber's PUBREC asks for the PUBREL.
        assert!(!answers(&mut m, &publish(2, 9, false, b"z")));
        assert_eq!(asks(&mut m, &with_id(0x50, 9)), Some("PUBREC"));
        assert!(answers(&mut m, &with_id(0x62, 9)));
        assert_eq!(read(&mut m, ClientToServer, &with_id(0x70, 9)), none);
    }

    #[test]
    fn a_publisher_asks_at_qos_1_and_2_by_packet_id() {
        let mut m = mqtt();
        let none = Some(Messages::default());
        assert_eq!(
            read(&mut m, ClientToServer, &publish(0, 0, false, b"a")),
            none,
            "QoS 0 is answered by nothing"
        );
        assert_eq!(asks(&mut m, &publish(1, 5, false, b"b")), Some("PUBLISH"));
        assert!(!answers(&mut m, &with_id(0x40, 4)), "another id");
        assert!(answers(&mut m, &with_id(0x40, 5)));
        assert_eq!(asks(&mut m, &publish(2, 6, false, b"c")), Some("PUBLISH"));
        assert!(!answers(&mut m, &with_id(0x40, 6)), "QoS 2 is not PUBACKed");
        assert!(answers(&mut m, &with_id(0x50, 6)));
        assert_eq!(asks(&mut m, &with_id(0x62, 6)), Some("PUBREL"));
        assert!(answers(&mut m, &with_id(0x70, 6)));
        // Two questions in one segment: the first names it; each answer
        // answers.
        let mut two = publish(1, 10, false, b"d");
        two.extend(msg(0xc0, &[]));
        assert_eq!(asks(&mut m, &two), Some("PUBLISH"));
        assert!(answers(&mut m, &msg(0xd0, &[])));
        assert!(answers(&mut m, &with_id(0x40, 10)));
        assert_eq!(
            read(&mut m, ClientToServer, &msg(0xe0, &[])),
            none,
            "DISCONNECT"
        );
    }

    #[test]
    fn retained_messages_right_after_a_suback_are_its_answer() {
        // mosquitto sends a topic's retained message right after the
        // SUBACK, RETAIN set; held by Nagle's algorithm until the client's
        // ACK of the SUBACK, it comes in a segment of its own.
        let mut m = mqtt();
        asks(&mut m, &subscribe(1));
        assert!(answers(&mut m, &suback(1)));
        let retained = read(&mut m, ServerToClient, &publish(0, 0, true, b"r")).unwrap();
        assert!(retained.extends && !retained.answers);
        // Once the client has said anything, a retained message is a
        // push of an established subscription's (MQTT 5's retain as
        // published): nobody's answer.
        read(&mut m, ClientToServer, &with_id(0x40, 3));
        assert!(
            !read(&mut m, ServerToClient, &publish(0, 0, true, b"r"))
                .unwrap()
                .extends
        );
        // A live push right after the SUBACK answers nothing.
        asks(&mut m, &subscribe(2));
        assert!(answers(&mut m, &suback(2)));
        assert_eq!(
            read(&mut m, ServerToClient, &publish(0, 0, false, b"l")),
            Some(Messages::default())
        );
    }

    #[test]
    fn messages_are_followed_across_segments_and_holes() {
        let mut m = mqtt();
        // A 200 KB PUBLISH in segments, a PINGREQ beginning in the last.
        let big = publish(1, 3, false, &vec![b'x'; 200_000]);
        assert_eq!(asks(&mut m, &big[..1448]), Some("PUBLISH"));
        let middle = read(&mut m, ClientToServer, &big[1448..100_000]).unwrap();
        assert!(middle.continues && middle.asks.is_none());
        let mut tail = big[100_000..].to_vec();
        tail.extend(msg(0xc0, &[]));
        let tail = read(&mut m, ClientToServer, &tail).unwrap();
        assert!(tail.continues);
        assert_eq!(tail.asks, Some("PINGREQ"));
        // A message that asks nothing goes on asking nothing.
        let quiet = publish(0, 0, false, &[b'q'; 3000]);
        assert_eq!(asks(&mut m, &quiet[..1448]), None);
        assert!(
            !read(&mut m, ClientToServer, &quiet[1448..])
                .unwrap()
                .continues
        );
        assert!(answers(&mut m, &with_id(0x40, 3)));
        // A broker segment the capture cut short is skipped by its length.
        let push = publish(0, 0, false, &[b'p'; 1000]);
        assert_eq!(
            m.read(ServerToClient, &push[..60], push.len() as u64),
            Some(Messages::default())
        );
        assert!(answers(&mut m, &msg(0xd0, &[])));
        // A hole: lost until a segment is a whole chain again.
        let none = Some(Messages::default());
        assert_eq!(m.read(ServerToClient, &[], 700), none);
        assert_eq!(
            read(&mut m, ServerToClient, &push[10..]),
            none,
            "inside a message"
        );
        asks(&mut m, &msg(0xc0, &[]));
        assert!(answers(&mut m, &msg(0xd0, &[])), "found again");
    }

    #[test]
    fn other_protocols_and_ports_are_not_mqtt() {
        for first in [
            b"GET / HTTP/1.1\r\n\r\n".to_vec(),
            msg(0x10, b"\x00\x04AMQP\x04"),
            connect()[..4].to_vec(),
        ] {
            let mut m = Mqtt::default();
            assert_eq!(read(&mut m, ClientToServer, &first), None, "{first:?}");
            assert_eq!(read(&mut m, ClientToServer, &connect()), None);
        }
        // On MQTT's port, a capture that began after the CONNECT: a whole
        // chain of headers is MQTT, anything else is not.
        let mut m = Mqtt::on_its_port();
        assert!(read(&mut m, ServerToClient, &publish(0, 0, false, b"x")).is_some());
        let mut m = Mqtt::on_its_port();
        assert_eq!(read(&mut m, ClientToServer, b"hello there"), None);
        // 3.1's name; a header longer than four length bytes is none.
        let mut m = Mqtt::default();
        assert!(read(&mut m, ClientToServer, &msg(0x10, b"\x00\x06MQIsdp\x03")).is_some());
        assert_eq!(header(&[0x30, 0xff, 0xff, 0xff, 0xff, 0x01]), None);
        assert_eq!(header(&[0x36, 0x00]), None, "QoS 3");
    }

    #[test]
    fn on_any_port_a_capture_begun_on_an_unmistakable_message_is_mqtt() {
        // nDPI's coap_mqtt.pcap: a broker on 17501, the capture begun on a
        // PINGREQ; the broker's pushes on topics such as `Bus17Cmd`.
        for first in [
            vec![0xc0, 0x00],
            vec![0xd0, 0x00],
            with_id(0x40, 2),
            with_id(0x62, 9),
            publish(1, 4, false, b"{\"messageType\":\"UPDATE\"}"),
            [with_id(0x40, 2), publish(0, 0, false, b"x")].concat(),
        ] {
            let mut m = Mqtt::default();
            assert!(read(&mut m, ClientToServer, &first).is_some(), "{first:x?}");
        }
        // Near misses: a packet id of 0, PUBREL without its flags, a
        // segment that goes on past its message, a topic with a wildcard
        // or unprintable, a text protocol's line (its "topic length"
        // 0x2020 and more), a CONNACK (too short to tell), a SUBSCRIBE.
        let mut wildcard = publish(0, 0, false, b"x");
        wildcard[4] = b'+';
        let mut unprintable = publish(0, 0, false, b"x");
        unprintable[5] = 0x01;
        for first in [
            with_id(0x40, 0),
            with_id(0x60, 9),
            [vec![0xc0, 0x00], vec![0x17]].concat(),
            wildcard,
            unprintable,
            b"3 two words\r\n".to_vec(),
            msg(0x20, &[0, 0]),
            msg(0x82, b"\x00\x01\x00\x03a/b\x00"),
        ] {
            let mut m = Mqtt::default();
            assert_eq!(read(&mut m, ClientToServer, &first), None, "{first:x?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn any_stream_bytes_are_read_without_panicking(segments in crate::reader::any::segments()) {
            let mut m = Mqtt::on_its_port();
            crate::reader::any::feed(segments, |dir, bytes, len| {
                m.read(dir, bytes, len);
            });
            let mut m = Mqtt::default();
            m.read(ClientToServer, &connect(), connect().len() as u64);
            proptest::prop_assert!(m.is());
        }
    }
}
