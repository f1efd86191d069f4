//! AMQP 1.0 (RabbitMQ's plugin and 4.x, ActiveMQ Artemis, Qpid, Azure
//! Service Bus): which performatives ask, which answer, and which the
//! broker sends on its own.
//!
//! A receiver grants the broker credit (`flow`), and the broker sends it
//! each message (`transfer`) the moment one is there; the receiver
//! settles it (`disposition`). Taken as turns, a receiver's disposition
//! "asked" for the next message and the sender's pause was the broker's
//! think time (RabbitMQ 3.10's plugin with python-qpid-proton, a sender a
//! message every 1.2 s: 2.3 s of `server_think_time`). The performatives
//! say what asks (OASIS AMQP 1.0, part 2.7; SASL, part 5.3):
//!
//! | the connection's initiator sends          | answered by                 |
//! |-------------------------------------------|-----------------------------|
//! | a protocol header (`AMQP` 0/2/3 1 0 0)    | the peer's protocol header  |
//! | sasl-init, sasl-response                  | sasl-challenge, sasl-outcome |
//! | open, begin, attach, detach, end, close   | the same performative       |
//! | an unsettled transfer (a message sent)    | a disposition               |
//!
//! Everything else the client sends asks nothing (flow, its
//! dispositions, a settled transfer); the broker's transfers (deliveries),
//! flows and dispositions of nothing asked answer nothing. A broker's
//! close answers whatever was open (an error ends the connection).
//!
//! A connection is AMQP 1.0's when the client's first bytes are one of
//! its protocol headers, or, on port 5672 in a capture begun on the
//! connection, whole frames of performatives. Frames are followed across
//! segments by their sizes (crate::framing); a protocol header (the
//! second, after SASL) is read where a frame would begin.

use crate::exchange::Turns;
use crate::framing::{whole_messages, Follow};
use crate::reader::Reading;
use crate::Direction;

/// AMQP's port (IANA), shared with 0-9-1 (amqp.rs).
const PORT: u16 = 5672;
/// A protocol header: `AMQP`, the protocol id (0: AMQP, 2: TLS, 3:
/// SASL), then version 1.0.0.
const HEADER: usize = 8;
/// A frame's fixed header: size, data offset, type, channel.
const FRAME_HEADER: usize = 8;
/// Frames larger than this are none of AMQP 1.0's (a peer's
/// max-frame-size is 64 KB to a few MB in practice).
const MAX_FRAME: u32 = 1 << 26;
/// Frame types: AMQP's, SASL's.
const AMQP: u8 = 0;
const SASL: u8 = 1;
/// The performatives' descriptor codes (part 2.7, part 5.3).
const OPEN: u64 = 0x10;
const BEGIN: u64 = 0x11;
const ATTACH: u64 = 0x12;
const FLOW: u64 = 0x13;
const TRANSFER: u64 = 0x14;
const DISPOSITION: u64 = 0x15;
const DETACH: u64 = 0x16;
const END: u64 = 0x17;
const CLOSE: u64 = 0x18;
const SASL_MECHANISMS: u64 = 0x40;
const SASL_INIT: u64 = 0x41;
const SASL_CHALLENGE: u64 = 0x42;
const SASL_RESPONSE: u64 = 0x43;
const SASL_OUTCOME: u64 = 0x44;
/// The client's questions open at once are bounded: a sender with many
/// messages unsettled asks more; a forgotten one only leaves its turn
/// unanswered.
const MAX_AWAITED: usize = 64;

/// One connection's AMQP 1.0 reading (crate::reader).
pub(crate) type Amqp10 = Reading<State>;

/// What starts where a frame may: a protocol header or a frame (its data
/// offset in bytes).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Unit {
    Header,
    Frame { body_at: usize },
}

/// What a question awaits: the performatives (or a protocol header,
/// `None`) that answer it.
type Awaited = &'static [Option<u64>];

/// What an AMQP 1.0 connection's reading keeps.
#[derive(Debug, Clone, Default)]
pub struct State {
    follow: [Follow; 2],
    /// The client's unit under way asks (a large message's later
    /// segments go on with it).
    asking: bool,
    /// The client's open questions, oldest first.
    awaited: Vec<Awaited>,
}

impl Amqp10 {
    /// Whether `server_port` is AMQP's.
    pub(crate) fn is_port(server_port: u16) -> bool {
        server_port == PORT
    }

    /// Reads a segment's stream bytes (`head` captured, `len` in all,
    /// which includes bytes the capture missed); `None` when the
    /// connection is not AMQP 1.0's.
    pub(crate) fn read(
        &mut self,
        dir: Direction,
        head: &[u8],
        len: u64,
        mid_stream: bool,
    ) -> Option<Turns> {
        let port = self.port;
        let state = self.client_first(dir, mid_stream, || {
            let header = is_protocol_header(head);
            let joined = port && mid_stream && whole_messages(head, len, performative_unit);
            header || joined
        })?;
        Some(state.read(dir, head, len))
    }
}

impl State {
    fn read(&mut self, dir: Direction, head: &[u8], len: u64) -> Turns {
        let mut m = Turns::default();
        let client = dir == Direction::ClientToServer;
        let mut follow = self.follow[dir.index()];
        let walked = follow.walk(head, len, unit, |u, bytes, _| {
            let code = match u {
                Unit::Header => None,
                Unit::Frame { body_at } => match performative(bytes.get(body_at..)) {
                    Some(code) => Some(code),
                    // An empty frame (a heartbeat) or one the capture cut.
                    None => return,
                },
            };
            if client {
                self.ask(code, bytes, u, &mut m);
            } else {
                m.answers |= self.answer(code);
            }
        });
        self.follow[dir.index()] = follow;
        if let Some(w) = walked {
            if w.continued {
                // (A broker's message is no answer's rest: deliveries and
                // answers are a frame each.)
                m.go_on(dir, self.asking, false);
            }
            if w.cut_at.is_some() {
                self.asking = false;
            }
        }
        m
    }

    /// The client's unit: a protocol header (`code` `None`) or a
    /// performative.
    fn ask(&mut self, code: Option<u64>, bytes: &[u8], u: Unit, m: &mut Turns) {
        let (name, awaited): (&'static str, Awaited) = match code {
            None => ("protocol header", &[None]),
            Some(SASL_INIT) => ("sasl-init", &[Some(SASL_CHALLENGE), Some(SASL_OUTCOME)]),
            Some(SASL_RESPONSE) => ("sasl-response", &[Some(SASL_CHALLENGE), Some(SASL_OUTCOME)]),
            Some(OPEN) => ("open", &[Some(OPEN)]),
            Some(BEGIN) => ("begin", &[Some(BEGIN)]),
            Some(ATTACH) => ("attach", &[Some(ATTACH), Some(DETACH)]),
            Some(DETACH) => ("detach", &[Some(DETACH)]),
            Some(END) => ("end", &[Some(END)]),
            Some(CLOSE) => ("close", &[Some(CLOSE)]),
            Some(TRANSFER) => {
                let Unit::Frame { body_at } = u else {
                    return;
                };
                if transfer_settled(bytes.get(body_at..).unwrap_or_default()) {
                    self.asking = false;
                    return;
                }
                ("transfer", &[Some(DISPOSITION)])
            }
            // Credit granted, deliveries settled, or anything else: no
            // question.
            Some(FLOW | DISPOSITION) | Some(_) => {
                self.asking = false;
                return;
            }
        };
        self.asking = true;
        m.asks.get_or_insert(name);
        crate::reader::push_bounded(&mut self.awaited, awaited, MAX_AWAITED);
    }

    /// Whether the broker's unit answers an open question (which is then
    /// closed): the oldest it answers; a close answers them all.
    fn answer(&mut self, code: Option<u64>) -> bool {
        if code == Some(CLOSE) && !self.awaited.is_empty() {
            self.awaited.clear();
            return true;
        }
        match self.awaited.iter().position(|a| a.contains(&code)) {
            Some(i) => {
                self.awaited.remove(i);
                true
            }
            None => false,
        }
    }
}

/// The unit at the start of `bytes` and its length: a protocol header, or
/// a frame of AMQP's or SASL's with a data offset inside it; `None` when
/// neither (or the bytes end inside its fixed header).
fn unit(bytes: &[u8]) -> Option<(Unit, u64)> {
    if bytes.starts_with(b"AMQP") {
        return is_protocol_header(bytes).then_some((Unit::Header, HEADER as u64));
    }
    let h = bytes.get(..FRAME_HEADER)?;
    let size = u32::from_be_bytes([h[0], h[1], h[2], h[3]]);
    let body_at = usize::from(h[4]) * 4;
    let fits = body_at >= FRAME_HEADER && body_at as u64 <= u64::from(size);
    (matches!(h[5], AMQP | SASL) && fits && size <= MAX_FRAME)
        .then_some((Unit::Frame { body_at }, u64::from(size)))
}

/// A unit, for a capture begun on the connection: only frames that carry
/// a performative (two chained frames of anything's are too likely).
fn performative_unit(bytes: &[u8]) -> Option<(Unit, u64)> {
    let (u, length) = unit(bytes)?;
    let Unit::Frame { body_at } = u else {
        return None;
    };
    performative(bytes.get(body_at..)).map(|_| (u, length))
}

/// A protocol header of AMQP 1.0: `AMQP`, the protocol id 0 (AMQP), 2
/// (TLS) or 3 (SASL), version 1.0.0.
fn is_protocol_header(head: &[u8]) -> bool {
    matches!(
        head.get(..HEADER),
        Some([b'A', b'M', b'Q', b'P', 0 | 2 | 3, 1, 0, 0])
    )
}

/// The performative's code at the start of a frame's body: a described
/// type whose descriptor is a small ulong (`0x00 0x53 code`) or a ulong
/// (`0x00 0x80` and 8 bytes), of the codes AMQP and SASL define.
fn performative(body: Option<&[u8]>) -> Option<u64> {
    let code = match body? {
        [0x00, 0x53, code, ..] => u64::from(*code),
        [0x00, 0x80, rest @ ..] => u64::from_be_bytes(rest.get(..8)?.try_into().ok()?),
        _ => return None,
    };
    ((OPEN..=CLOSE).contains(&code) || (SASL_MECHANISMS..=SASL_OUTCOME).contains(&code))
        .then_some(code)
}

/// Whether a transfer's body (its performative) says the message was
/// sent settled (its fifth field, `settled`, true): no disposition will
/// answer it.
fn transfer_settled(body: &[u8]) -> bool {
    // The descriptor (0x00 0x53 0x14), then the list of fields.
    let Some(list) = body.get(3..) else {
        return false;
    };
    let (count, mut at) = match list {
        [0xc0, _size, count, ..] => (usize::from(*count), 3),
        [0xd0, rest @ ..] => match rest.get(4..8) {
            Some(c) => (u32::from_be_bytes([c[0], c[1], c[2], c[3]]) as usize, 9),
            None => return false,
        },
        _ => return false,
    };
    // handle, delivery-id, delivery-tag, message-format, then settled.
    if count < 5 {
        return false;
    }
    for _ in 0..4 {
        match value_len(list.get(at..).unwrap_or_default()) {
            Some(n) => at += n,
            None => return false,
        }
    }
    match list.get(at..) {
        Some([0x41, ..]) => true,
        Some([0x56, b, ..]) => *b != 0,
        _ => false,
    }
}

/// The encoded length of the value at the start of `bytes` (part 1.6:
/// the format code's high nibble says how wide its size or value is);
/// `None` past what was captured or for a described value.
fn value_len(bytes: &[u8]) -> Option<usize> {
    let code = *bytes.first()?;
    let sized = |width: usize| -> Option<usize> {
        let size = bytes.get(1..1 + width)?;
        let n = size.iter().fold(0usize, |n, &b| n << 8 | usize::from(b));
        Some(1 + width + n)
    };
    let n = match code >> 4 {
        0x4 => 1,
        0x5 => 2,
        0x6 => 3,
        0x7 => 5,
        0x8 => 9,
        0x9 => 17,
        0xa | 0xc | 0xe => sized(1)?,
        0xb | 0xd | 0xf => sized(4)?,
        _ => return None,
    };
    (n <= bytes.len()).then_some(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use Direction::{ClientToServer as C, ServerToClient as S};

    const PROTOCOL: &[u8] = b"AMQP\x00\x01\x00\x00";
    const SASL_PROTOCOL: &[u8] = b"AMQP\x03\x01\x00\x00";

    /// A frame carrying performative `code` with the list `fields`.
    fn frame(kind: u8, code: u8, fields: &[u8], count: u8) -> Vec<u8> {
        let mut body = vec![0x00, 0x53, code, 0xc0, fields.len() as u8 + 1, count];
        body.extend_from_slice(fields);
        let mut f = ((FRAME_HEADER + body.len()) as u32).to_be_bytes().to_vec();
        f.extend([2, kind, 0, 0]);
        f.extend(body);
        f
    }

    fn performative_frame(code: u64) -> Vec<u8> {
        frame(AMQP, code as u8, &[0x40], 1)
    }

    /// A transfer: handle 0, delivery-id 7, a 1-byte tag, format 0,
    /// settled as given, then a message's bytes.
    fn transfer(settled: bool) -> Vec<u8> {
        let flag = if settled { 0x41 } else { 0x42 };
        let mut f = frame(AMQP, 0x14, &[0x43, 0x52, 7, 0xa0, 1, 9, 0x43, flag], 5);
        f.extend_from_slice(&[0x00, 0x53, 0x75, 0xa0, 3, b'h', b'e', b'y']);
        let size = f.len() as u32;
        f[..4].copy_from_slice(&size.to_be_bytes());
        f
    }

    fn read(a: &mut Amqp10, dir: Direction, bytes: &[u8]) -> Turns {
        a.read(dir, bytes, bytes.len() as u64, false)
            .expect("AMQP 1.0")
    }

    /// python-qpid-proton's start against RabbitMQ: SASL, then the
    /// protocol header, open, begin and attach in one segment.
    fn attached() -> Amqp10 {
        let mut a = Amqp10::default();
        assert_eq!(read(&mut a, C, SASL_PROTOCOL).asks, Some("protocol header"));
        assert!(a.is());
        let mechanisms = [SASL_PROTOCOL, &frame(SASL, 0x40, &[0x40], 1)].concat();
        assert!(read(&mut a, S, &mechanisms).answers);
        assert_eq!(
            read(&mut a, C, &frame(SASL, 0x41, &[0x40], 1)).asks,
            Some("sasl-init")
        );
        assert!(read(&mut a, S, &frame(SASL, 0x44, &[0x40], 1)).answers);
        let opening = [
            PROTOCOL,
            &performative_frame(OPEN),
            &performative_frame(BEGIN),
            &performative_frame(ATTACH),
            &performative_frame(FLOW),
        ]
        .concat();
        assert_eq!(read(&mut a, C, &opening).asks, Some("protocol header"));
        for code in [None, Some(OPEN), Some(BEGIN), Some(ATTACH)] {
            let answer = match code {
                None => PROTOCOL.to_vec(),
                Some(c) => performative_frame(c),
            };
            assert!(read(&mut a, S, &answer).answers, "{code:?}");
        }
        a
    }

    #[test]
    fn a_receivers_dispositions_and_flows_ask_nothing_and_deliveries_answer_nothing() {
        let mut a = attached();
        // The broker's flow of its own and a delivery: no answers.
        assert_eq!(read(&mut a, S, &performative_frame(FLOW)), Turns::default());
        assert_eq!(read(&mut a, S, &transfer(false)), Turns::default());
        // The receiver settles it and grants credit: no questions.
        let settle = [performative_frame(FLOW), performative_frame(DISPOSITION)].concat();
        assert_eq!(read(&mut a, C, &settle), Turns::default());
        assert_eq!(read(&mut a, S, &transfer(false)), Turns::default());
        // Its close is answered by the broker's.
        assert_eq!(
            read(&mut a, C, &performative_frame(CLOSE)).asks,
            Some("close")
        );
        assert!(read(&mut a, S, &performative_frame(CLOSE)).answers);
    }

    #[test]
    fn a_senders_unsettled_message_is_answered_by_a_disposition() {
        let mut a = attached();
        assert_eq!(read(&mut a, C, &transfer(false)).asks, Some("transfer"));
        assert!(!read(&mut a, S, &performative_frame(FLOW)).answers);
        assert!(read(&mut a, S, &performative_frame(DISPOSITION)).answers);
        // Sent settled: nothing will answer it.
        assert_eq!(read(&mut a, C, &transfer(true)), Turns::default());
        assert!(!read(&mut a, S, &performative_frame(DISPOSITION)).answers);
        // A message larger than a segment goes on with its question.
        let mut big = transfer(false);
        big.resize(3000, b'x');
        let size = big.len() as u32;
        big[..4].copy_from_slice(&size.to_be_bytes());
        assert_eq!(read(&mut a, C, &big[..1448]).asks, Some("transfer"));
        assert!(read(&mut a, C, &big[1448..]).continues);
    }

    #[test]
    fn only_amqp_1_0s_headers_decide() {
        for (first, is) in [
            (SASL_PROTOCOL, true),
            (PROTOCOL, true),
            (b"AMQP\x02\x01\x00\x00", true),
            (b"AMQP\x00\x00\x09\x01", false),
            (b"AMQP\x01\x01\x00\x09", false),
            (b"GET / HTTP/1.1\r\n", false),
        ] {
            let mut a = Amqp10::on_its_port();
            a.read(C, first, first.len() as u64, false);
            assert_eq!(a.is(), is, "{first:?}");
        }
        // Joined on its port: whole frames of performatives.
        let frames = [performative_frame(FLOW), performative_frame(DISPOSITION)].concat();
        let mut a = Amqp10::on_its_port();
        assert!(a.read(C, &frames, frames.len() as u64, true).is_some());
        let mut elsewhere = Amqp10::default();
        elsewhere.read(C, &frames, frames.len() as u64, true);
        assert!(elsewhere.is_not());
    }

    #[test]
    fn values_are_skipped_by_their_width() {
        assert_eq!(value_len(&[0x40]), Some(1));
        assert_eq!(value_len(&[0x52, 7]), Some(2));
        assert_eq!(value_len(&[0x70, 0, 0, 0, 7]), Some(5));
        assert_eq!(value_len(&[0xa0, 2, 1, 2]), Some(4));
        assert_eq!(value_len(&[0xb0, 0, 0, 0, 1, 9]), Some(6));
        assert_eq!(value_len(&[0xa0, 5, 1]), None, "cut");
        assert_eq!(value_len(&[0x00, 0x53, 0x70]), None, "described");
    }

    proptest::proptest! {
        #[test]
        fn any_stream_bytes_are_read_without_panicking(segments in crate::reader::any::segments()) {
            let mut a = attached();
            crate::reader::any::feed(segments, |dir, bytes, len| {
                a.read(dir, bytes, len, false);
            });
            proptest::prop_assert!(a.is());
        }
    }
}
