//! FIX (the Financial Information eXchange protocol, 4.0-4.4 and FIXT.1.1
//! under 5.0; and FIXCOMP, a zlib envelope some venues wrap each message
//! in): which messages ask and which answer.
//!
//! An initiator (the TCP client: a trading firm's engine) logs on to an
//! acceptor (an exchange's or a broker's gateway) and from then on both
//! send on their own: each side sends a Heartbeat when it has sent nothing
//! for the session's heartbeat interval, and a TestRequest when it has
//! heard nothing for as long, which the other answers with a Heartbeat
//! carrying its TestReqID (112); the acceptor streams market data and
//! execution reports as the market moves. Read as turns, the client's
//! Heartbeat answering the acceptor's TestRequest "asked" for the next
//! TestRequest, ten seconds later on the acceptor's timer (nDPI's
//! fix.pcap: 10-20 s of `server_think_time` on three connections). The
//! messages say what asks (the FIX 4.4 and 5.0 specifications):
//!
//! | the initiator sends                       | answered by the acceptor's |
//! |-------------------------------------------|----------------------------|
//! | Logon (A)                                 | Logon or Logout (5)        |
//! | TestRequest (1)                           | Heartbeat (0) with a TestReqID |
//! | ResendRequest (2)                         | SequenceReset (4), or a message sent again (PossDupFlag 43=Y) |
//! | Logout (5)                                | Logout                     |
//! | MarketDataRequest (V)                     | snapshot (W), incremental refresh (X), reject (Y) |
//! | NewOrderSingle (D), OrderCancelRequest (F), OrderCancelReplaceRequest (G), NewOrderList (E), OrderStatusRequest (H), OrderMassStatusRequest (AF) | ExecutionReport (8), OrderCancelReject (9), ListStatus (N) |
//! | OrderMassCancelRequest (q)                | OrderMassCancelReport (r)  |
//! | QuoteRequest (R)                          | Quote (S), QuoteRequestReject (AG) |
//! | SecurityDefinitionRequest (c), SecurityStatusRequest (e), TradingSessionStatusRequest (g), SecurityListRequest (x) | SecurityDefinition (d), SecurityStatus (f), TradingSessionStatus (h), SecurityList (y) |
//! | RequestForPositions (AN)                  | RequestForPositionsAck (AO), PositionReport (AP) |
//! | TradeCaptureReportRequest (AD)            | TradeCaptureReportRequestAck (AQ), TradeCaptureReport (AE) |
//! | UserRequest (BE)                          | UserResponse (BF)          |
//!
//! and every question also by a Reject (3) or BusinessMessageReject (j).
//! Everything else asks nothing (the initiator's Heartbeats, its answers
//! to the acceptor's TestRequests, its execution reports' acknowledgments),
//! and the acceptor's other messages answer nothing: Heartbeats without a
//! TestReqID, its own TestRequests, market data and fills streamed as the
//! market moves.
//!
//! A connection is FIX's when its first data (either side's: a capture may
//! begin with the acceptor's) begins with a FIX message's header: its
//! BeginString (`8=FIX.4.x`, `FIXT.1.1`, `FIXCOMP`, or a venue's own such
//! as `O`), its BodyLength (`9=`), then MsgType (`35=`), on any port. A
//! message is those two fields, that many bytes of body, then the
//! three-digit CheckSum field (`10=nnn` and its delimiter); FIXCOMP's
//! body is a zlib stream of a whole FIX message, and it and a venue's own
//! envelope (nDPI's fix.pcap: binary market data behind `8=O`) have no
//! CheckSum of their own. Messages
//! are followed across segments by their lengths (crate::framing).

use crate::exchange::Turns;
use crate::framing::Follow;
use crate::reader::Reading;
use crate::Direction;

/// FIX's field delimiter (SOH).
const SOH: u8 = 1;
/// The CheckSum field that ends a message: `10=`, three digits, SOH.
const CHECKSUM: u64 = 7;
/// The longest BeginString looked for (`FIXT.1.1`, `FIXCOMP`, with room).
const LONGEST_BEGIN: usize = 16;
/// The most digits a BodyLength is read with (a message of up to ~10 MB).
const LONGEST_LENGTH: usize = 7;
/// How much of a FIXCOMP message's inflated start is read for its type
/// and fields (the standard header: its type comes third).
const INFLATED: usize = 256;
/// The initiator's questions in flight at once are bounded; a forgotten
/// one only leaves its turn unanswered.
const MAX_AWAITED: usize = 64;

/// One connection's FIX reading (crate::reader).
pub(crate) type Fix = Reading<State>;

/// What a FIX connection's reading keeps.
#[derive(Debug, Clone, Default)]
pub struct State {
    follow: [Follow; 2],
    /// The initiator's open questions: what answers each.
    awaited: Vec<&'static [&'static str]>,
    /// The client's message under way asks.
    asking: bool,
    /// The server's message under way answers.
    answering: bool,
}

/// The initiator's questions: a name for the turn, its MsgTypes, and the
/// MsgTypes that answer it (besides the rejects, [`REJECTS`]).
const QUESTIONS: [(&str, &[&str], &[&str]); 13] = [
    ("Logon", &["A"], &["A", "5"]),
    ("TestRequest", &["1"], &[HEARTBEAT_ANSWER]),
    ("ResendRequest", &["2"], &["4", RESENT]),
    ("Logout", &["5"], &["5"]),
    ("MarketDataRequest", &["V"], &["W", "X", "Y"]),
    ("order", &["D", "F", "G", "E", "H", "AF"], &["8", "9", "N"]),
    ("OrderMassCancelRequest", &["q"], &["r"]),
    ("QuoteRequest", &["R"], &["S", "AG"]),
    ("SecurityDefinitionRequest", &["c"], &["d"]),
    ("status request", &["e", "g"], &["f", "h"]),
    ("SecurityListRequest", &["x"], &["y"]),
    ("position request", &["AN", "AD"], &["AO", "AP", "AQ", "AE"]),
    ("UserRequest", &["BE"], &["BF"]),
];

/// What any question is answered by: a session-level Reject, a
/// BusinessMessageReject.
const REJECTS: [&str; 2] = ["3", "j"];
/// A Heartbeat carrying a TestReqID: the answer to a TestRequest (one
/// without answers nothing; it is a timer's).
const HEARTBEAT_ANSWER: &str = "0+112";
/// A message sent again (PossDupFlag 43=Y), answering a ResendRequest.
const RESENT: &str = "resent";

impl Fix {
    /// Reads a segment's stream bytes (`head` captured, `len` in all,
    /// which includes bytes the capture missed); `None` when the
    /// connection is not FIX's.
    pub(crate) fn read(&mut self, dir: Direction, head: &[u8], len: u64) -> Option<Turns> {
        let state = self.state(|| Some(begins_with_fix(head)))?;
        Some(state.read(dir, head, len))
    }
}

impl State {
    fn read(&mut self, dir: Direction, head: &[u8], len: u64) -> Turns {
        let mut m = Turns::default();
        let client = dir == Direction::ClientToServer;
        let mut follow = self.follow[dir.index()];
        let walked = follow.walk(head, len, header, |fields, bytes, _| {
            let message = Message::read(fields, bytes);
            if client {
                self.ask(message, &mut m);
            } else {
                self.answer(message, &mut m);
            }
        });
        self.follow[dir.index()] = follow;
        if walked.is_some_and(|w| w.continued) {
            m.go_on(dir, self.asking, self.answering);
        }
        m
    }

    fn ask(&mut self, message: Option<Message>, m: &mut Turns) {
        let question = message.and_then(|msg| {
            QUESTIONS
                .iter()
                .find(|(_, asks, _)| asks.iter().any(|t| msg.is(t)))
        });
        self.asking = question.is_some();
        if let Some((name, _, answers)) = question {
            m.asks.get_or_insert(name);
            crate::reader::push_bounded(&mut self.awaited, answers, MAX_AWAITED);
        }
    }

    fn answer(&mut self, message: Option<Message>, m: &mut Turns) {
        let Some(msg) = message else {
            self.answering = false;
            return;
        };
        let answers = |awaited: &&[&str]| {
            REJECTS.iter().chain(awaited.iter()).any(|t| match *t {
                HEARTBEAT_ANSWER => msg.is("0") && msg.test_request_id,
                RESENT => msg.resent,
                t => msg.is(t),
            })
        };
        match self.awaited.iter().position(answers) {
            Some(i) => {
                self.awaited.remove(i);
                m.answers = true;
                self.answering = true;
            }
            None => self.answering = false,
        }
    }
}

/// A message's fixed part, read from its header: where its body begins
/// and whether it is FIXCOMP's (the body a zlib stream).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Fields {
    body: usize,
    compressed: bool,
}

/// What a message says for turns: its MsgType (35), and whether it carries
/// a TestReqID (112) or PossDupFlag=Y (43).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Message {
    kind: [u8; 3],
    kind_len: u8,
    test_request_id: bool,
    resent: bool,
}

impl Message {
    fn is(&self, kind: &str) -> bool {
        &self.kind[..usize::from(self.kind_len)] == kind.as_bytes()
    }

    /// The message in `bytes` (captured from its first byte), whose header
    /// said `fields`; `None` when its MsgType is not in what was captured
    /// (or, for FIXCOMP, does not inflate to a FIX message).
    fn read(fields: Fields, bytes: &[u8]) -> Option<Message> {
        let body = bytes.get(fields.body..)?;
        if !fields.compressed {
            return Message::of_body(body);
        }
        let mut inflated = [0u8; INFLATED];
        let mut z = flate2::Decompress::new(true);
        z.decompress(body, &mut inflated, flate2::FlushDecompress::None)
            .ok()?;
        let inner = &inflated[..z.total_out() as usize];
        let (Fields { body, compressed }, _) = header(inner)?;
        if compressed {
            return None;
        }
        Message::of_body(inner.get(body..)?)
    }

    /// A body's MsgType (its first field, as the standard header orders
    /// it) and the flags in what of it was captured.
    fn of_body(body: &[u8]) -> Option<Message> {
        let value = body.strip_prefix(b"35=")?;
        let end = memchr::memchr(SOH, value)?;
        if end == 0 || end > 3 {
            return None;
        }
        let mut kind = [0u8; 3];
        kind[..end].copy_from_slice(&value[..end]);
        let has = |field: &[u8]| memchr::memmem::find(body, field).is_some();
        Some(Message {
            kind,
            kind_len: end as u8,
            test_request_id: has(b"\x01112="),
            resent: has(b"\x0143=Y\x01"),
        })
    }
}

/// A message's header at the start of `bytes`, for crate::framing: where
/// its body begins and whether it is compressed, and its whole length;
/// `None` when it is no FIX header or the bytes end inside it.
fn header(bytes: &[u8]) -> Option<(Fields, u64)> {
    let begin = bytes.strip_prefix(b"8=")?;
    let begin_end = memchr::memchr(SOH, &begin[..begin.len().min(LONGEST_BEGIN)])?;
    let version = &begin[..begin_end];
    if version.is_empty()
        || !version
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'.')
    {
        return None;
    }
    let compressed = version == b"FIXCOMP";
    let after = &begin[begin_end + 1..];
    let digits = after.strip_prefix(b"9=")?;
    let length_end = memchr::memchr(SOH, &digits[..digits.len().min(LONGEST_LENGTH + 1)])?;
    if length_end == 0 || !digits[..length_end].iter().all(u8::is_ascii_digit) {
        return None;
    }
    let length: u64 = std::str::from_utf8(&digits[..length_end])
        .ok()?
        .parse()
        .ok()?;
    // `8=`, BeginString and its SOH, `9=`, the digits and their SOH.
    let body = 2 + begin_end + 1 + 2 + length_end + 1;
    // A CheckSum follows the body where it was captured; where not, the
    // standard's BeginStrings have one, FIXCOMP and the venues' own
    // envelopes (`8=O`, binary market data behind FIX's header) none.
    let end = body as u64 + length;
    let trailer = match bytes.get(end as usize..) {
        Some(rest) if rest.len() >= 3 => rest.starts_with(b"10="),
        _ => version.starts_with(b"FIX") && !compressed,
    };
    Some((
        Fields { body, compressed },
        end + if trailer { CHECKSUM } else { 0 },
    ))
}

/// Whether a connection's first data begins with a FIX message: its
/// header, then (outside FIXCOMP's envelope) MsgType, the third field.
fn begins_with_fix(head: &[u8]) -> bool {
    header(head).is_some_and(|(f, _)| {
        f.compressed || head.get(f.body..).is_some_and(|b| b.starts_with(b"35="))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    const C: Direction = Direction::ClientToServer;
    const S: Direction = Direction::ServerToClient;

    /// A FIX 4.4 message of type `kind` with `fields` (`tag=value` each,
    /// SOH between), its BodyLength and CheckSum computed.
    fn fix(kind: &str, fields: &[&str]) -> Vec<u8> {
        let mut body = format!("35={kind}\x0134=7\x0149=FIRM\x0156=VENUE\x01");
        for f in fields {
            body.push_str(f);
            body.push('\x01');
        }
        let mut m = format!("8=FIX.4.4\x019={}\x01{body}", body.len()).into_bytes();
        let sum = m.iter().map(|&b| u32::from(b)).sum::<u32>() % 256;
        m.extend_from_slice(format!("10={sum:03}\x01").as_bytes());
        m
    }

    /// The same message in a FIXCOMP envelope.
    fn comp(kind: &str, fields: &[&str]) -> Vec<u8> {
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(&fix(kind, fields)).unwrap();
        let body = z.finish().unwrap();
        let mut m = format!("8=FIXCOMP\x019={}\x01", body.len()).into_bytes();
        m.extend_from_slice(&body);
        m
    }

    fn read(r: &mut Fix, dir: Direction, bytes: &[u8]) -> Turns {
        r.read(dir, bytes, bytes.len() as u64).expect("FIX's")
    }

    fn logged_on() -> Fix {
        let mut r = Fix::default();
        assert_eq!(
            read(&mut r, C, &fix("A", &["98=0", "108=10"])).asks,
            Some("Logon")
        );
        assert!(read(&mut r, S, &fix("A", &["98=0", "108=10"])).answers);
        r
    }

    #[test]
    fn the_acceptors_test_requests_and_heartbeats_answer_nothing() {
        // nDPI's fix.pcap: the acceptor's TestRequest every 10 s, the
        // initiator's Heartbeat answering it (in FIXCOMP) at once.
        let mut r = logged_on();
        for _ in 0..3 {
            assert_eq!(read(&mut r, S, &fix("1", &["112=farm"])), Turns::default());
            let pong = comp("0", &["112=farm"]);
            assert_eq!(read(&mut r, C, &pong), Turns::default());
        }
        // Heartbeats on each side's timer, market data as it moves.
        assert_eq!(read(&mut r, C, &fix("0", &[])), Turns::default());
        assert_eq!(read(&mut r, S, &fix("0", &[])), Turns::default());
        assert_eq!(read(&mut r, S, &fix("X", &["262=1"])), Turns::default());
    }

    #[test]
    fn the_initiators_questions_are_answered_by_their_answers() {
        let mut r = logged_on();
        // A TestRequest: a Heartbeat without its TestReqID is the
        // acceptor's timer's, the one with it the answer.
        assert_eq!(
            read(&mut r, C, &comp("1", &["112=t1"])).asks,
            Some("TestRequest")
        );
        assert!(!read(&mut r, S, &fix("0", &[])).answers);
        assert!(read(&mut r, S, &fix("0", &["112=t1"])).answers);
        // An order, answered by its ExecutionReport; later fills are the
        // market's.
        assert_eq!(
            read(&mut r, C, &fix("D", &["11=o1", "55=ES"])).asks,
            Some("order")
        );
        assert!(read(&mut r, S, &fix("8", &["11=o1", "150=0"])).answers);
        assert!(!read(&mut r, S, &fix("8", &["11=o1", "150=F"])).answers);
        // A market data request, refused by a BusinessMessageReject.
        let t = read(&mut r, C, &fix("V", &["262=md1", "263=1"]));
        assert_eq!(t.asks, Some("MarketDataRequest"));
        assert!(read(&mut r, S, &fix("j", &["380=3"])).answers);
        // A ResendRequest, answered by a message sent again.
        assert_eq!(
            read(&mut r, C, &fix("2", &["7=1", "16=0"])).asks,
            Some("ResendRequest")
        );
        assert!(!read(&mut r, S, &fix("X", &["262=1"])).answers);
        assert!(read(&mut r, S, &fix("X", &["43=Y", "262=1"])).answers);
    }

    #[test]
    fn messages_are_followed_across_segments() {
        let mut r = logged_on();
        let heartbeat = fix("0", &[]);
        let two = [heartbeat.clone(), fix("D", &["11=o2"])].concat();
        // The order's header cut by the segment's end.
        let cut = heartbeat.len() + 8;
        let first = read(&mut r, C, &two[..cut]);
        assert_eq!(first.asks, None);
        assert_eq!(read(&mut r, C, &two[cut..]).asks, Some("order"));
        let report = fix("8", &["11=o2", "150=0"]);
        assert!(read(&mut r, S, &report[..20]).answers);
        assert!(read(&mut r, S, &report[20..]).extends);
    }

    #[test]
    fn only_a_stream_that_begins_with_a_begin_string_is_fix() {
        for first in [
            b"GET / HTTP/1.1\r\n\r\n".to_vec(),
            b"8=FIX.4.4\x019=5\x0134=1\x01".to_vec(),
            b"8=FIX 4.4\x019=5\x0135=1\x01".to_vec(),
            fix("A", &[])[1..].to_vec(),
        ] {
            let mut r = Fix::default();
            assert_eq!(r.read(C, &first, first.len() as u64), None, "{first:?}");
            assert!(r.is_not());
        }
        // The acceptor's first (a capture begun mid-session).
        let mut r = Fix::default();
        assert!(r.read(S, &fix("1", &["112=x"]), 60).is_some());
        // A venue's own envelope: binary market data behind FIX's header,
        // no CheckSum; then a standard message with one.
        let mut r = Fix::default();
        let data = b"8=O\x019=0014\x0135=P\x01\x008\x00\x00\x14\x8cQ\x06\x83";
        let both = [&data[..], &fix("1", &["112=farm"])].concat();
        assert_eq!(read(&mut r, S, &both), Turns::default());
        assert_eq!(header(data).map(|h| h.1), Some(data.len() as u64));
        assert_eq!(header(b"8=FIX.4.4\x019=\x01"), None);
        assert_eq!(header(b"8=FIX.4.4\x019=12a\x01"), None);
        assert_eq!(header(b"8=FIX.4.4\x019=12"), None, "cut in its length");
    }

    proptest::proptest! {
        #[test]
        fn any_stream_bytes_are_read_without_panicking(segments in crate::reader::any::segments()) {
            let mut r = logged_on();
            crate::reader::any::feed(segments, |dir, bytes, len| {
                r.read(dir, bytes, len);
            });
        }
    }
}
