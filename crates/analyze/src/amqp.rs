//! AMQP 0-9-1 (RabbitMQ and the brokers that speak its dialect; also 0-9
//! and 0-8): which methods ask, which answer, and which the broker sends
//! on its own.
//!
//! Once a consumer has subscribed (`Basic.Consume`), the broker sends it
//! each message (`Basic.Deliver`, then the message's content header and
//! body frames) the moment one is published to its queue, and the
//! consumer acknowledges each (`Basic.Ack`) unless it consumes in no-ack
//! mode; both sides send heartbeats on their own timers. Taken as turns,
//! a consumer's `Basic.Ack` "asked" for the next delivery, and the
//! publisher's pause between messages was measured as the broker's think
//! time (RabbitMQ with `amqp-consume` and a publisher a second apart:
//! 0.97 s of `server_think_time` per message). The methods say what
//! asks: a client's synchronous request is answered by the broker's
//! `-Ok` of it on the same channel (AMQP 0-9-1 section 1, the classes'
//! method tables):
//!
//! | client sends                                  | answered by           |
//! |-----------------------------------------------|-----------------------|
//! | the protocol header (`AMQP` 0 0 9 1)          | Connection.Start      |
//! | Connection.Start-Ok, Secure-Ok                | Connection.Secure, Tune |
//! | Connection.Open, Close, Update-Secret         | their `-Ok`           |
//! | Channel.Open, Flow, Close                     | their `-Ok`           |
//! | Exchange., Queue. Declare, Delete, Bind, Unbind, Purge | their `-Ok`  |
//! | Basic.Qos, Consume, Cancel, Recover           | their `-Ok`           |
//! | Basic.Get                                     | Get-Ok (and its content), Get-Empty |
//! | Confirm.Select, Tx.Select, Commit, Rollback   | their `-Ok`           |
//! | Basic.Publish, on a channel in confirm mode   | Basic.Ack or Nack     |
//!
//! Everything else a client sends asks nothing (Connection.Tune-Ok,
//! Basic.Publish without confirms, Basic.Ack, Reject, Nack, heartbeats,
//! the `-Ok` of the broker's own Close or Cancel). The broker's
//! `Channel.Close` or `Connection.Close` (an error) answers the question
//! open on that channel, or on any. A method with the no-wait bit set is
//! never answered, and asks nothing ([`no_wait`]).
//!
//! A connection is AMQP 0-9-1 when the client's first bytes are its
//! protocol header (AMQP 1.0's, a different protocol, is not read), or,
//! on port 5672, when its first data is a whole chain of frames, each
//! ending in 0xCE (a capture that began later). Frames are followed across
//! segments by their sizes (crate::framing).

use crate::exchange::Turns;
use crate::framing::{whole_messages, Follow};
use crate::reader::Reading;
use crate::Direction;

/// AMQP's unencrypted port (IANA). 5671 carries it inside TLS.
const PORT: u16 = 5672;
/// A frame's header: its type, channel and payload size.
const HEADER: usize = 7;
/// Every frame ends with this byte.
const FRAME_END: u8 = 0xce;
/// The protocol headers read: 0-9-1, 0-9 and 0-8 (RabbitMQ takes all
/// three).
const PROTOCOL_HEADERS: [[u8; 4]; 3] = [[0, 0, 9, 1], [1, 1, 0, 9], [1, 1, 8, 0]];
/// Frame types: a method, a content header, a content body, a heartbeat.
const METHOD: u8 = 1;
const CONTENT_HEADER: u8 = 2;
const CONTENT_BODY: u8 = 3;
const HEARTBEAT: u8 = 8;
/// Frames larger than this are none of AMQP's (a broker's frame_max is
/// 128 KB by default; the protocol allows up to 4 GB, no broker does).
const MAX_FRAME: u32 = 1 << 24;

/// The classes.
const CONNECTION: u16 = 10;
const CHANNEL: u16 = 20;
const EXCHANGE: u16 = 40;
const QUEUE: u16 = 50;
const BASIC: u16 = 60;
const CONFIRM: u16 = 85;
const TX: u16 = 90;

/// The client's questions open at once are bounded: one per channel as a
/// rule (a client waits for each `-Ok`), more only with no-wait methods or
/// publisher confirms, whose forgotten answers only leave turns
/// unanswered.
const MAX_AWAITED: usize = 32;
/// Channels in confirm mode remembered, for the same reason.
const MAX_CONFIRMING: usize = 32;

/// One connection's AMQP reading (crate::reader).
pub(crate) type Amqp = Reading<State>;

/// A question open: the channel it was asked on, the class of its answer
/// and the method ids that answer it.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Awaited {
    channel: u16,
    class: u16,
    methods: &'static [u16],
}

/// What an AMQP connection's reading keeps.
#[derive(Debug, Clone, Default)]
pub struct State {
    follow: [Follow; 2],
    /// The client's last method asked: its content frames (a confirmed
    /// publish's header and body) go on with the question.
    client_asking: bool,
    /// The broker's last method answered and carries content (Get-Ok):
    /// its content frames are the rest of the answer.
    server_answering: bool,
    /// The client's open questions.
    awaited: Vec<Awaited>,
    /// Channels the client put in confirm mode: a publish on them asks.
    confirming: Vec<u16>,
}

impl Amqp {
    /// Whether `server_port` is AMQP's.
    pub(crate) fn is_port(server_port: u16) -> bool {
        server_port == PORT
    }

    /// Reads a segment's stream bytes (`head` captured, `len` in all,
    /// which includes bytes the capture missed); `None` when the
    /// connection is not AMQP.
    pub(crate) fn read(&mut self, dir: Direction, head: &[u8], len: u64) -> Option<Turns> {
        let greeting =
            self.undecided() && dir == Direction::ClientToServer && is_protocol_header(head);
        let port = self.port;
        let state = self.state(|| Some(greeting || (port && whole_messages(head, len, frame))))?;
        if greeting {
            state.awaited.push(Awaited {
                channel: 0,
                class: CONNECTION,
                methods: &[10],
            });
            let mut m = state.read(dir, &head[8..], len - 8);
            m.asks = Some("protocol header");
            return Some(m);
        }
        Some(state.read(dir, head, len))
    }
}

impl State {
    fn read(&mut self, dir: Direction, head: &[u8], len: u64) -> Turns {
        let mut m = Turns::default();
        // The follow is taken out while its walk tells this state of the
        // frames (and put back after).
        let mut follow = self.follow[dir.index()];
        let mut first = true;
        let walked = follow.walk(head, len, frame, |(kind, channel), bytes, _| {
            let method = (kind == METHOD)
                .then(|| {
                    let b = bytes.get(HEADER..HEADER + 4)?;
                    Some((
                        u16::from_be_bytes([b[0], b[1]]),
                        u16::from_be_bytes([b[2], b[3]]),
                    ))
                })
                .flatten();
            let content = matches!(kind, CONTENT_HEADER | CONTENT_BODY);
            match dir {
                Direction::ClientToServer => {
                    if content && first {
                        m.continues |= self.client_asking;
                    }
                    if let Some((class, id)) = method {
                        let args = bytes.get(HEADER + 4..).unwrap_or_default();
                        let question = self
                            .question(channel, class, id)
                            .filter(|_| !no_wait(class, id, args));
                        self.client_asking = question.is_some();
                        if let Some((name, awaited)) = question {
                            m.asks.get_or_insert(name);
                            crate::reader::push_bounded(&mut self.awaited, awaited, MAX_AWAITED);
                        }
                    } else if kind == METHOD {
                        // A method frame whose ids the capture cut off.
                        self.client_asking = false;
                    }
                }
                Direction::ServerToClient => {
                    if content && first {
                        m.extends |= self.server_answering;
                    }
                    if let Some((class, id)) = method {
                        let answered = self.answer(channel, class, id);
                        m.answers |= answered;
                        self.server_answering = answered && (class, id) == (BASIC, 71);
                    } else if kind == METHOD {
                        self.server_answering = false;
                    }
                }
            }
            if kind != HEARTBEAT {
                first = false;
            }
        });
        self.follow[dir.index()] = follow;
        if walked.is_some_and(|w| w.continued) {
            m.go_on(dir, self.client_asking, self.server_answering);
        }
        m
    }

    /// The client's method `class`.`id` on `channel`: the name of what it
    /// asks and the answer it awaits, or `None` when it asks nothing.
    fn question(&mut self, channel: u16, class: u16, id: u16) -> Option<(&'static str, Awaited)> {
        let (name, methods): (&'static str, &'static [u16]) = match (class, id) {
            (CONNECTION, 11) => ("Connection.Start-Ok", &[20, 30]),
            (CONNECTION, 21) => ("Connection.Secure-Ok", &[20, 30]),
            (CONNECTION, 40) => ("Connection.Open", &[41]),
            (CONNECTION, 50) => ("Connection.Close", &[51]),
            (CONNECTION, 70) => ("Connection.Update-Secret", &[71]),
            (CHANNEL, 10) => ("Channel.Open", &[11]),
            (CHANNEL, 20) => ("Channel.Flow", &[21]),
            (CHANNEL, 40) => ("Channel.Close", &[41]),
            (EXCHANGE, 10) => ("Exchange.Declare", &[11]),
            (EXCHANGE, 20) => ("Exchange.Delete", &[21]),
            (EXCHANGE, 30) => ("Exchange.Bind", &[31]),
            (EXCHANGE, 40) => ("Exchange.Unbind", &[51]),
            (QUEUE, 10) => ("Queue.Declare", &[11]),
            (QUEUE, 20) => ("Queue.Bind", &[21]),
            (QUEUE, 30) => ("Queue.Purge", &[31]),
            (QUEUE, 40) => ("Queue.Delete", &[41]),
            (QUEUE, 50) => ("Queue.Unbind", &[51]),
            (BASIC, 10) => ("Basic.Qos", &[11]),
            (BASIC, 20) => ("Basic.Consume", &[21]),
            (BASIC, 30) => ("Basic.Cancel", &[31]),
            (BASIC, 70) => ("Basic.Get", &[71, 72]),
            (BASIC, 110) => ("Basic.Recover", &[111]),
            (BASIC, 40) if self.confirming.contains(&channel) => ("Basic.Publish", &[80, 120]),
            (CONFIRM, 10) => {
                if !self.confirming.contains(&channel) {
                    crate::reader::push_bounded(&mut self.confirming, channel, MAX_CONFIRMING);
                }
                ("Confirm.Select", &[11])
            }
            (TX, 10) => ("Tx.Select", &[11]),
            (TX, 20) => ("Tx.Commit", &[21]),
            (TX, 30) => ("Tx.Rollback", &[31]),
            _ => return None,
        };
        if (class, id) == (CHANNEL, 40) {
            self.confirming.retain(|&c| c != channel);
        }
        Some((
            name,
            Awaited {
                channel,
                class,
                methods,
            },
        ))
    }

    /// Whether the broker's method `class`.`id` on `channel` answers an
    /// open question (which is then closed).
    fn answer(&mut self, channel: u16, class: u16, id: u16) -> bool {
        // An error closes the channel (or the connection): whatever was
        // asked there is answered by it.
        match (class, id) {
            (CONNECTION, 50) if !self.awaited.is_empty() => {
                self.awaited.clear();
                return true;
            }
            (CHANNEL, 40) if self.awaited.iter().any(|a| a.channel == channel) => {
                self.awaited.retain(|a| a.channel != channel);
                return true;
            }
            _ => {}
        }
        let Some(i) = self
            .awaited
            .iter()
            .position(|a| a.channel == channel && a.class == class && a.methods.contains(&id))
        else {
            return false;
        };
        self.awaited.remove(i);
        true
    }
}

/// Whether the client's method `class`.`id`, its arguments `args` (as
/// far as the capture has them), sets its no-wait bit: the broker sends
/// no `-Ok` and the method asks nothing (its turn would wait for the next
/// method's answer under its name: a durable `Exchange.Declare` with
/// no-wait before a `Queue.Declare`, packetbeat's amqp_channel_error).
/// Each method's fields before its bits (AMQP 0-9-1's class tables, and
/// RabbitMQ's Exchange.Bind and Unbind): shorts and short strings, then
/// the bit's place in the octet.
fn no_wait(class: u16, id: u16, args: &[u8]) -> bool {
    /// A 2-byte short, a short string (a length octet and its bytes).
    const SHORT: u8 = 0;
    const SHORTSTR: u8 = 1;
    let (fields, bit): (&[u8], u8) = match (class, id) {
        (EXCHANGE, 10) => (&[SHORT, SHORTSTR, SHORTSTR], 4),
        (EXCHANGE, 20) => (&[SHORT, SHORTSTR], 1),
        (EXCHANGE, 30) | (EXCHANGE, 40) => (&[SHORT, SHORTSTR, SHORTSTR, SHORTSTR], 0),
        (QUEUE, 10) => (&[SHORT, SHORTSTR], 4),
        (QUEUE, 20) => (&[SHORT, SHORTSTR, SHORTSTR, SHORTSTR], 0),
        (QUEUE, 30) => (&[SHORT, SHORTSTR], 0),
        (QUEUE, 40) => (&[SHORT, SHORTSTR], 2),
        (BASIC, 20) => (&[SHORT, SHORTSTR, SHORTSTR], 3),
        (BASIC, 30) => (&[SHORTSTR], 0),
        (CONFIRM, 10) => (&[], 0),
        _ => return false,
    };
    let mut at = 0usize;
    for &f in fields {
        at += match f {
            SHORT => 2,
            _ => match args.get(at) {
                Some(&n) => 1 + n as usize,
                None => return false,
            },
        };
    }
    args.get(at).is_some_and(|bits| bits & (1 << bit) != 0)
}

/// The frame at the start of `bytes`: its type and channel, and its whole
/// length; `None` when it is none of AMQP's (an unknown type, a size no
/// broker uses, no frame-end byte where the capture shows it) or the bytes
/// end inside its header.
fn frame(bytes: &[u8]) -> Option<((u8, u16), u64)> {
    let h = bytes.get(..HEADER)?;
    let kind = h[0];
    let size = u32::from_be_bytes([h[3], h[4], h[5], h[6]]);
    let end = HEADER + size as usize;
    let ends_right = bytes.get(end).is_none_or(|&b| b == FRAME_END);
    (matches!(kind, METHOD | CONTENT_HEADER | CONTENT_BODY | HEARTBEAT)
        && size <= MAX_FRAME
        && ends_right)
        .then_some(((kind, u16::from_be_bytes([h[1], h[2]])), end as u64 + 1))
}

/// A protocol header of a version read here: `AMQP`, then 0-9-1's, 0-9's
/// or 0-8's version bytes.
fn is_protocol_header(head: &[u8]) -> bool {
    head.len() >= 8
        && head.starts_with(b"AMQP")
        && PROTOCOL_HEADERS.iter().any(|v| head[4..8] == *v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use Direction::{ClientToServer as C, ServerToClient as S};

    fn frame_of(kind: u8, channel: u16, payload: &[u8]) -> Vec<u8> {
        let mut f = vec![kind];
        f.extend(channel.to_be_bytes());
        f.extend((payload.len() as u32).to_be_bytes());
        f.extend(payload);
        f.push(FRAME_END);
        f
    }

    /// A method frame with `args` after its ids.
    fn method(channel: u16, class: u16, id: u16, args: &[u8]) -> Vec<u8> {
        let mut p = class.to_be_bytes().to_vec();
        p.extend(id.to_be_bytes());
        p.extend(args);
        frame_of(METHOD, channel, &p)
    }

    /// A message's content: its header frame and one body frame.
    fn content(channel: u16, body: &[u8]) -> Vec<u8> {
        let mut h = BASIC.to_be_bytes().to_vec();
        h.extend([0, 0]);
        h.extend((body.len() as u64).to_be_bytes());
        h.extend([0, 0]);
        let mut f = frame_of(CONTENT_HEADER, channel, &h);
        f.extend(frame_of(CONTENT_BODY, channel, body));
        f
    }

    fn heartbeat() -> Vec<u8> {
        frame_of(HEARTBEAT, 0, &[])
    }

    fn read(a: &mut Amqp, dir: Direction, bytes: &[u8]) -> Turns {
        a.read(dir, bytes, bytes.len() as u64).expect("AMQP")
    }

    fn asks(a: &mut Amqp, bytes: &[u8]) -> Option<&'static str> {
        read(a, C, bytes).asks
    }

    fn answers(a: &mut Amqp, bytes: &[u8]) -> bool {
        read(a, S, bytes).answers
    }

    /// amqp-consume's start, as RabbitMQ 3.10 answered it: the protocol
    /// header, Start, Start-Ok, Tune, then Tune-Ok and Open in one write.
    fn opened() -> Amqp {
        let mut a = Amqp::default();
        assert_eq!(
            asks(&mut a, b"AMQP\x00\x00\x09\x01"),
            Some("protocol header")
        );
        assert!(answers(&mut a, &method(0, CONNECTION, 10, &[0, 9, 0, 0])));
        assert_eq!(
            asks(&mut a, &method(0, CONNECTION, 11, b"PLAIN")),
            Some("Connection.Start-Ok")
        );
        assert!(answers(&mut a, &method(0, CONNECTION, 30, &[0; 8])));
        let mut tune_ok_open = method(0, CONNECTION, 31, &[0; 8]);
        tune_ok_open.extend(method(0, CONNECTION, 40, b"\x01/"));
        assert_eq!(asks(&mut a, &tune_ok_open), Some("Connection.Open"));
        assert!(answers(&mut a, &method(0, CONNECTION, 41, &[0])));
        assert_eq!(
            asks(&mut a, &method(1, CHANNEL, 10, &[0])),
            Some("Channel.Open")
        );
        assert!(answers(&mut a, &method(1, CHANNEL, 11, &[0, 0, 0, 0])));
        a
    }

    #[test]
    fn a_consumer_asks_nothing_by_acknowledging_deliveries() {
        let mut a = opened();
        assert_eq!(
            asks(&mut a, &method(1, BASIC, 20, b"test")),
            Some("Basic.Consume")
        );
        assert!(answers(&mut a, &method(1, BASIC, 21, b"tag")));
        // Deliveries as others publish, each acknowledged: no turns.
        for tag in 1u8..4 {
            let mut delivery = method(1, BASIC, 60, &[tag]);
            delivery.extend(content(1, b"hello"));
            assert_eq!(read(&mut a, S, &delivery), Turns::default());
            assert_eq!(
                read(&mut a, C, &method(1, BASIC, 80, &[tag])),
                Turns::default()
            );
            assert_eq!(read(&mut a, C, &heartbeat()), Turns::default());
            assert_eq!(read(&mut a, S, &heartbeat()), Turns::default());
        }
        // Its Close is answered; a delivery's Close-Ok would not be.
        assert_eq!(
            asks(&mut a, &method(1, CHANNEL, 40, &[0; 4])),
            Some("Channel.Close")
        );
        assert!(!answers(&mut a, &method(1, BASIC, 60, &[9])));
        assert!(answers(&mut a, &method(1, CHANNEL, 41, &[])));
        assert!(
            !answers(&mut a, &method(1, CHANNEL, 41, &[])),
            "answered once"
        );
    }

    /// A short string's bytes: its length octet, then it.
    fn shortstr(s: &str) -> Vec<u8> {
        let mut v = vec![s.len() as u8];
        v.extend(s.as_bytes());
        v
    }

    #[test]
    fn a_method_with_its_no_wait_bit_set_asks_nothing() {
        let mut a = opened();
        // Exchange.Declare: reserved short, exchange, type, then the bits
        // (passive, durable, auto-delete, internal, no-wait), a table.
        let declare = |bits: u8| {
            let mut args = vec![0, 0];
            args.extend(shortstr("logs"));
            args.extend(shortstr("fanout"));
            args.push(bits);
            args.extend([0, 0, 0, 0]);
            method(1, EXCHANGE, 10, &args)
        };
        // Durable, no-wait: no Declare-Ok comes, and the next question
        // is its own turn's name.
        assert_eq!(read(&mut a, C, &declare(0b1_0010)), Turns::default());
        let mut queue = vec![0, 0];
        queue.extend(shortstr("my_queue"));
        queue.push(0b0_0010);
        queue.extend([0, 0, 0, 0]);
        assert_eq!(
            asks(&mut a, &method(1, QUEUE, 10, &queue)),
            Some("Queue.Declare")
        );
        assert!(answers(
            &mut a,
            &method(1, QUEUE, 11, &shortstr("my_queue"))
        ));
        // Without the bit, the Declare waits for its -Ok.
        assert_eq!(asks(&mut a, &declare(0b0_0010)), Some("Exchange.Declare"));
        assert!(answers(&mut a, &method(1, EXCHANGE, 11, &[])));
        // Arguments the capture cut short ask as the method does.
        assert_eq!(
            asks(&mut a, &method(1, EXCHANGE, 10, &[0, 0, 4, b'l'])),
            Some("Exchange.Declare")
        );
        // Confirm.Select with no-wait asks nothing but still puts the
        // channel in confirm mode: its publishes ask.
        assert_eq!(
            read(&mut a, C, &method(2, CONFIRM, 10, &[1])),
            Turns::default()
        );
        assert_eq!(
            asks(&mut a, &method(2, BASIC, 40, &[0, 0])),
            Some("Basic.Publish")
        );
    }

    #[test]
    fn a_get_is_answered_with_its_content() {
        let mut a = opened();
        assert_eq!(asks(&mut a, &method(1, BASIC, 70, b"q")), Some("Basic.Get"));
        // Get-Ok in one segment, its content in the next: the answer's
        // rest.
        assert!(answers(&mut a, &method(1, BASIC, 71, &[1])));
        let rest = read(&mut a, S, &content(1, b"body"));
        assert!(rest.extends && !rest.answers);
        // Get-Empty answers too; a delivery's content extends nothing.
        asks(&mut a, &method(1, BASIC, 70, b"q"));
        assert!(answers(&mut a, &method(1, BASIC, 72, &[])));
        read(&mut a, S, &method(1, BASIC, 60, &[2]));
        assert!(!read(&mut a, S, &content(1, b"pushed")).extends);
    }

    #[test]
    fn a_publish_asks_only_on_a_channel_in_confirm_mode() {
        let mut a = opened();
        let mut publish = method(1, BASIC, 40, b"\x00\x00\x00\x04test\x00");
        publish.extend(content(1, &[b'x'; 3000]));
        assert_eq!(read(&mut a, C, &publish), Turns::default());
        assert_eq!(
            asks(&mut a, &method(1, CONFIRM, 10, &[0])),
            Some("Confirm.Select")
        );
        assert!(answers(&mut a, &method(1, CONFIRM, 11, &[])));
        // A confirmed publish in three segments: the content goes on with
        // the question, across the cut inside its body.
        assert_eq!(asks(&mut a, &publish[..20]), Some("Basic.Publish"));
        let middle = read(&mut a, C, &publish[20..1000]);
        assert!(middle.continues && middle.asks.is_none());
        assert!(read(&mut a, C, &publish[1000..]).continues);
        assert!(
            !answers(&mut a, &method(2, BASIC, 80, &[1])),
            "another channel"
        );
        assert!(answers(&mut a, &method(1, BASIC, 80, &[1])));
        // An error closes the channel: the question open there is answered.
        asks(&mut a, &method(1, QUEUE, 10, b"q"));
        assert!(answers(&mut a, &method(1, CHANNEL, 40, &[0x01, 0x94])));
        // Reopened, the channel is not in confirm mode.
        asks(&mut a, &method(1, CHANNEL, 10, &[0]));
        asks(&mut a, &method(1, CHANNEL, 40, &[0]));
        assert!(answers(&mut a, &method(1, CHANNEL, 41, &[])));
        assert_eq!(read(&mut a, C, &publish), Turns::default());
    }

    #[test]
    fn frames_are_followed_across_holes() {
        let mut a = opened();
        asks(&mut a, &method(1, BASIC, 20, b"test"));
        // A hole where the Consume-Ok was: lost until whole frames.
        assert_eq!(a.read(S, &[], 20), Some(Turns::default()));
        let mut delivery = method(1, BASIC, 60, &[1]);
        delivery.extend(content(1, b"m"));
        assert_eq!(read(&mut a, S, &delivery[5..]), Turns::default());
        asks(&mut a, &method(2, CHANNEL, 10, &[0]));
        assert!(
            answers(&mut a, &method(2, CHANNEL, 11, &[0; 4])),
            "found again"
        );
    }

    #[test]
    fn other_protocols_are_not_amqp() {
        for first in [
            b"AMQP\x00\x01\x00\x00".to_vec(), // AMQP 1.0
            b"AMQP\x03\x01\x00\x00".to_vec(), // its SASL layer
            b"GET / HTTP/1.1\r\n\r\n".to_vec(),
            b"AMQP".to_vec(),
        ] {
            let mut a = Amqp::default();
            assert_eq!(a.read(C, &first, first.len() as u64), None, "{first:?}");
        }
        // On AMQP's port, a capture that began later: whole frames are
        // AMQP, a frame without its end byte is not.
        let mut a = Amqp::on_its_port();
        assert!(a.read(S, &heartbeat(), 8).is_some());
        let mut bad = heartbeat();
        bad[7] = 0;
        let mut a = Amqp::on_its_port();
        assert_eq!(a.read(S, &bad, 8), None);
    }

    proptest::proptest! {
        #[test]
        fn any_stream_bytes_are_read_without_panicking(segments in crate::reader::any::segments()) {
            let mut a = Amqp::on_its_port();
            crate::reader::any::feed(segments, |dir, bytes, len| {
                a.read(dir, bytes, len);
            });
            let mut a = Amqp::default();
            a.read(C, b"AMQP\x00\x00\x09\x01", 8);
            proptest::prop_assert!(a.is());
        }
    }
}
