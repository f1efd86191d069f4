//! IEC 60870-5-104 (telecontrol of power grids, substations and
//! pipelines over TCP): which APDUs ask, which answer, and which the
//! outstation sends on its own.
//!
//! A controlling station (the TCP client, a SCADA master) connects to a
//! controlled station (the outstation, port 2404), starts data transfer
//! (`STARTDT act`) and from then on the outstation reports on its own:
//! every change of a monitored point is sent the moment it happens
//! (cause of transmission *spontaneous*), and values are sent on a
//! period (*cyclic*) or when the station restarts (*initialized*). The
//! master acknowledges what it received with S-frames, after `w` I-frames
//! or when its `t2` timer runs out (10 s by default). Read as turns, an
//! S-frame "asked" and the next spontaneous report "answered": the time
//! until a breaker next tripped was the outstation's think time (5.6 s
//! of `server_think_time` for an end-of-initialization sent after a
//! restart). The APDUs say what asks (IEC 60870-5-104 section 5,
//! IEC 60870-5-101 section 7.2.3's causes of transmission):
//!
//! | master sends                                  | answered by the outstation's        |
//! |-----------------------------------------------|-------------------------------------|
//! | U-frame `STARTDT`, `STOPDT`, `TESTFR` act     | the same function's con             |
//! | a command (cause *activation*, *deactivation*) | an I-frame with cause *act con*, *deact con* or a negative cause (44-47) |
//! | a read command (`C_RD_NA_1`, cause *request*) | an I-frame with cause *requested*   |
//!
//! and the rest of a command's answer is what it set going: the
//! interrogated points (causes 20-41) and its *activation termination*
//! (lib60870 also confirms a read before it sends the point), until the
//! master sends anything. The master's S-frames and its con of an
//! outstation's own `TESTFR act` ask nothing: acknowledgments, which end
//! an answered turn as a client's next message does (an outstation that
//! holds an interrogation's termination until the master acknowledged
//! its points, up to `t2` later, is not timed as a 20 s "transfer" of
//! 16 bytes). The outstation's spontaneous, cyclic, background,
//! initialized and remote- or local-command reports answer nothing.
//!
//! A connection is IEC-104's when the outstation listens on 2404 and the
//! first data (either side's: a capture begun on the connection shows
//! the outstation's reports first) is whole APDUs, or, on any port, when
//! the master's first data is a `STARTDT act` or `TESTFR act`. APDUs are
//! followed across segments by their lengths (crate::framing).

use crate::exchange::Turns;
use crate::framing::{whole_messages, Follow};
use crate::reader::Reading;
use crate::Direction;

/// IEC-104's port (IANA's iec-104); 19998 carries it inside TLS
/// (IEC 62351-3), where the APDUs cannot be read.
const PORT: u16 = 2404;
/// An APDU's start byte.
const START: u8 = 0x68;
/// The APCI: start, length, four control octets.
const APCI: usize = 6;
/// The shortest ASDU read: type, variable structure qualifier, cause.
const ASDU_HEAD: u8 = 3;
/// The longest APDU's length octet (IEC 60870-5-104 5.1: at most 253).
const MAX_LENGTH: u8 = 253;

/// U-frame functions (the first control octet).
const STARTDT_ACT: u8 = 0x07;
const STARTDT_CON: u8 = 0x0b;
const STOPDT_ACT: u8 = 0x13;
const STOPDT_CON: u8 = 0x23;
const TESTFR_ACT: u8 = 0x43;
const TESTFR_CON: u8 = 0x83;

/// Causes of transmission (the low six bits of the cause octet).
const REQUEST: u8 = 5;
const ACTIVATION: u8 = 6;
const ACTIVATION_CON: u8 = 7;
const DEACTIVATION: u8 = 8;
const DEACTIVATION_CON: u8 = 9;
const ACTIVATION_TERMINATION: u8 = 10;
/// Interrogated by station or group (20-36), counter interrogation
/// (37-41): what an interrogation command set going.
const INTERROGATED: std::ops::RangeInclusive<u8> = 20..=41;
/// Unknown type, cause, common address, object address: a refusal.
const NEGATIVE: std::ops::RangeInclusive<u8> = 44..=47;
/// The read command, answered with cause *requested*.
const C_RD_NA_1: u8 = 102;

/// Questions open at once are bounded: a master has a few commands in
/// flight; a forgotten one only leaves its turn unanswered.
const MAX_AWAITED: usize = 16;

/// One connection's IEC-104 reading (crate::reader).
pub(crate) type Iec104 = Reading<State>;

/// What answers an open question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Awaited {
    /// A U-frame function's con.
    Con(u8),
    /// A command of this type: its confirmation (or a refusal).
    Command(u8),
    /// A read: the point it asked for, sent with cause *requested*.
    Read,
}

/// What an IEC-104 connection's reading keeps.
#[derive(Debug, Clone, Default)]
pub struct State {
    follow: [Follow; 2],
    /// The master's APDU under way asks.
    asking: bool,
    /// The outstation's APDU under way answers or goes on with an answer.
    answering: bool,
    /// A command was confirmed and the master has sent nothing since: the
    /// points it interrogated or read and its termination are the rest of
    /// that answer.
    confirmed: bool,
    /// The master's open questions, oldest first.
    awaited: Vec<Awaited>,
}

/// An APDU's kind, from its control field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Frame {
    /// Numbered information transfer: an ASDU.
    I,
    /// Supervisory: an acknowledgment.
    S,
    /// Unnumbered control: its function.
    U(u8),
}

impl Iec104 {
    /// Whether `server_port` is IEC-104's.
    pub(crate) fn is_port(server_port: u16) -> bool {
        server_port == PORT
    }

    /// Reads a segment's stream bytes (`head` captured, `len` in all,
    /// which includes bytes the capture missed); `None` when the
    /// connection is not IEC-104's.
    pub(crate) fn read(&mut self, dir: Direction, head: &[u8], len: u64) -> Option<Turns> {
        let port = self.port;
        let state = self.state(|| {
            let whole = whole_messages(head, len, apci);
            let starts = dir == Direction::ClientToServer
                && matches!(apci(head), Some((Frame::U(STARTDT_ACT | TESTFR_ACT), _)));
            Some(whole && (port || starts))
        })?;
        Some(state.read(dir, head, len))
    }
}

impl State {
    fn read(&mut self, dir: Direction, head: &[u8], len: u64) -> Turns {
        let mut m = Turns::default();
        let master = dir == Direction::ClientToServer;
        if master {
            self.confirmed = false;
        }
        let mut follow = self.follow[dir.index()];
        let walked = follow.walk(head, len, apci, |frame, bytes, _| {
            // The ASDU's type and cause, when captured.
            let asdu = match (bytes.get(6), bytes.get(8)) {
                (Some(&kind), Some(&cause)) => Some((kind, cause & 0x3f)),
                _ => None,
            };
            if master {
                self.ask(frame, asdu, &mut m);
            } else {
                self.answer(frame, asdu, &mut m);
            }
        });
        self.follow[dir.index()] = follow;
        if walked.is_some_and(|w| w.continued) {
            m.go_on(dir, self.asking, self.answering);
        }
        m
    }

    fn ask(&mut self, frame: Frame, asdu: Option<(u8, u8)>, m: &mut Turns) {
        let (name, awaited) = match (frame, asdu) {
            (Frame::U(STARTDT_ACT), _) => ("STARTDT act", Awaited::Con(STARTDT_CON)),
            (Frame::U(STOPDT_ACT), _) => ("STOPDT act", Awaited::Con(STOPDT_CON)),
            (Frame::U(TESTFR_ACT), _) => ("TESTFR act", Awaited::Con(TESTFR_CON)),
            (Frame::I, Some((C_RD_NA_1, REQUEST))) => (type_name(C_RD_NA_1), Awaited::Read),
            (Frame::I, Some((kind, ACTIVATION | DEACTIVATION))) => {
                (type_name(kind), Awaited::Command(kind))
            }
            // An S-frame, the con of the outstation's own U-frame, an
            // ASDU that asks for nothing (a file's segments, a report).
            _ => {
                self.asking = false;
                return;
            }
        };
        self.asking = true;
        m.asks.get_or_insert(name);
        crate::reader::push_bounded(&mut self.awaited, awaited, MAX_AWAITED);
    }

    fn answer(&mut self, frame: Frame, asdu: Option<(u8, u8)>, m: &mut Turns) {
        let i = match (frame, asdu) {
            (Frame::U(function), _) => self
                .awaited
                .iter()
                .position(|a| *a == Awaited::Con(function)),
            // (lib60870 confirms a read, then sends the point.)
            (Frame::I, Some((kind, ACTIVATION_CON | DEACTIVATION_CON))) => {
                self.awaited.iter().position(|a| {
                    *a == Awaited::Command(kind) || (kind == C_RD_NA_1 && *a == Awaited::Read)
                })
            }
            (Frame::I, Some((_, REQUEST))) => self.awaited.iter().position(|a| *a == Awaited::Read),
            (Frame::I, Some((kind, cause))) if NEGATIVE.contains(&cause) => self
                .awaited
                .iter()
                .position(|a| matches!(a, Awaited::Command(k) if *k == kind))
                .or_else(|| self.awaited.iter().position(|a| *a == Awaited::Read)),
            _ => None,
        };
        if let Some(i) = i {
            self.awaited.remove(i);
            m.answers = true;
            self.answering = true;
            self.confirmed = matches!(frame, Frame::I);
        } else if matches!(
            (frame, asdu),
            (Frame::I, Some((_, cause)))
                if self.confirmed
                    && (cause == ACTIVATION_TERMINATION
                        || cause == REQUEST
                        || INTERROGATED.contains(&cause))
        ) {
            // What the confirmed command set going: the rest of its
            // answer.
            m.extends = true;
            self.answering = true;
        } else if frame != Frame::S {
            // A spontaneous, cyclic or initialized report; the
            // outstation's own TESTFR. (An S-frame between the parts of
            // an answer changes nothing.)
            self.answering = false;
        }
    }
}

/// The APCI at the start of `bytes`: the frame's kind and the whole
/// APDU's length; `None` when it is not one or the bytes end inside it.
fn apci(bytes: &[u8]) -> Option<(Frame, u64)> {
    let h = bytes.get(..APCI)?;
    let length = h[1];
    if h[0] != START || !(4..=MAX_LENGTH).contains(&length) {
        return None;
    }
    let frame = match h[2] & 0x03 {
        0 | 2 if length >= 4 + ASDU_HEAD => Frame::I,
        1 if length == 4 && h[3] == 0 => Frame::S,
        3 if length == 4
            && h[3..6] == [0, 0, 0]
            && [
                STARTDT_ACT,
                STARTDT_CON,
                STOPDT_ACT,
                STOPDT_CON,
                TESTFR_ACT,
                TESTFR_CON,
            ]
            .contains(&h[2]) =>
        {
            Frame::U(h[2])
        }
        _ => return None,
    };
    Some((frame, 2 + u64::from(length)))
}

/// A command type's name (IEC 60870-5-101 7.2.1.1), labelling its turn.
fn type_name(kind: u8) -> &'static str {
    match kind {
        45 => "C_SC_NA_1",
        46 => "C_DC_NA_1",
        47 => "C_RC_NA_1",
        48 => "C_SE_NA_1",
        49 => "C_SE_NB_1",
        50 => "C_SE_NC_1",
        51 => "C_BO_NA_1",
        58 => "C_SC_TA_1",
        59 => "C_DC_TA_1",
        60 => "C_RC_TA_1",
        61 => "C_SE_TA_1",
        62 => "C_SE_TB_1",
        63 => "C_SE_TC_1",
        64 => "C_BO_TA_1",
        100 => "C_IC_NA_1",
        101 => "C_CI_NA_1",
        102 => "C_RD_NA_1",
        103 => "C_CS_NA_1",
        104 => "C_TS_NA_1",
        105 => "C_RP_NA_1",
        106 => "C_CD_NA_1",
        107 => "C_TS_TA_1",
        110 => "P_ME_NA_1",
        111 => "P_ME_NB_1",
        112 => "P_ME_NC_1",
        113 => "P_AC_NA_1",
        _ => "command",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Direction::{ClientToServer as C, ServerToClient as S};

    fn u(function: u8) -> Vec<u8> {
        vec![START, 4, function, 0, 0, 0]
    }

    fn s(received: u16) -> Vec<u8> {
        let [lo, hi] = (received << 1).to_le_bytes();
        vec![START, 4, 1, 0, lo, hi]
    }

    /// An I-frame carrying one information object of `kind` with `cause`
    /// (common address 1, object address 0, one value byte).
    fn i(kind: u8, cause: u8) -> Vec<u8> {
        let asdu = [kind, 1, cause, 0, 1, 0, 0, 0, 0, 1];
        let mut apdu = vec![START, 4 + asdu.len() as u8, 0, 0, 0, 0];
        apdu.extend(asdu);
        apdu
    }

    const C_IC_NA_1: u8 = 100;
    const C_SC_NA_1: u8 = 45;
    const M_SP_NA_1: u8 = 1;
    const M_EI_NA_1: u8 = 70;
    const SPONTANEOUS: u8 = 3;
    const INITIALIZED: u8 = 4;
    const INTERROGATED_BY_STATION: u8 = 20;

    fn read(r: &mut Iec104, dir: Direction, bytes: &[u8]) -> Turns {
        r.read(dir, bytes, bytes.len() as u64).expect("IEC-104's")
    }

    fn started() -> Iec104 {
        let mut r = Iec104::default();
        assert_eq!(read(&mut r, C, &u(STARTDT_ACT)).asks, Some("STARTDT act"));
        assert!(r.is());
        assert!(read(&mut r, S, &u(STARTDT_CON)).answers);
        r
    }

    #[test]
    fn a_spontaneous_report_after_an_acknowledgment_answers_nothing() {
        let mut r = started();
        // The outstation restarted and says so; the master's S-frame
        // acknowledges it; the next report is a breaker's change.
        let initialized = read(&mut r, S, &i(M_EI_NA_1, INITIALIZED));
        assert_eq!(initialized, Turns::default());
        assert_eq!(read(&mut r, C, &s(1)), Turns::default());
        let report = read(&mut r, S, &i(M_SP_NA_1, SPONTANEOUS));
        assert_eq!(report, Turns::default());
        // The outstation's own link test answers nothing, and the
        // master's con of it asks nothing.
        assert_eq!(read(&mut r, S, &u(TESTFR_ACT)), Turns::default());
        assert_eq!(read(&mut r, C, &u(TESTFR_CON)), Turns::default());
        // A command sent with an acknowledgment asks.
        let both = [s(2), i(C_SC_NA_1, ACTIVATION)].concat();
        let t = read(&mut r, C, &both);
        assert_eq!(t.asks, Some("C_SC_NA_1"));
    }

    #[test]
    fn an_interrogation_is_answered_by_its_confirmation_and_goes_on_with_its_points() {
        let mut r = started();
        let asked = read(&mut r, C, &i(C_IC_NA_1, ACTIVATION));
        assert_eq!(asked.asks, Some("C_IC_NA_1"));
        // A report of another point before the confirmation answers
        // nothing.
        assert!(!read(&mut r, S, &i(M_SP_NA_1, SPONTANEOUS)).answers);
        // The confirmation and the first points in one segment, behind
        // the outstation's S-frame.
        let first = [
            s(1),
            i(C_IC_NA_1, ACTIVATION_CON),
            i(M_SP_NA_1, INTERROGATED_BY_STATION),
        ]
        .concat();
        assert!(read(&mut r, S, &first).answers);
        let rest = read(&mut r, S, &i(M_SP_NA_1, INTERROGATED_BY_STATION));
        assert!(rest.extends && !rest.answers);
        let end = read(&mut r, S, &i(C_IC_NA_1, ACTIVATION_TERMINATION));
        assert!(end.extends);
        // Once the master acknowledged, a termination is nobody's answer
        // (an outstation that waited for that acknowledgment).
        assert_eq!(read(&mut r, C, &s(4)), Turns::default());
        let late = read(&mut r, S, &i(C_IC_NA_1, ACTIVATION_TERMINATION));
        assert_eq!(late, Turns::default());
    }

    #[test]
    fn a_command_is_answered_by_its_confirmation_or_a_refusal() {
        let mut r = started();
        let asked = read(&mut r, C, &i(C_SC_NA_1, ACTIVATION));
        assert_eq!(asked.asks, Some("C_SC_NA_1"));
        // Confirmed negatively (P/N set): still the answer.
        assert!(read(&mut r, S, &i(C_SC_NA_1, ACTIVATION_CON | 0x40)).answers);
        // An unknown object address refuses it.
        read(&mut r, C, &i(C_SC_NA_1, ACTIVATION));
        assert!(read(&mut r, S, &i(C_SC_NA_1, 47)).answers);
        // A read is answered by the point, sent as requested.
        let asked = read(&mut r, C, &i(C_RD_NA_1, REQUEST));
        assert_eq!(asked.asks, Some("C_RD_NA_1"));
        assert!(read(&mut r, S, &i(M_SP_NA_1, REQUEST)).answers);
        let again = read(&mut r, S, &i(M_SP_NA_1, REQUEST));
        assert!(!again.answers, "answered once");
        // lib60870 confirms the read first: the point goes on with it.
        read(&mut r, C, &i(C_RD_NA_1, REQUEST));
        assert!(read(&mut r, S, &i(C_RD_NA_1, ACTIVATION_CON)).answers);
        let point = read(&mut r, S, &i(M_SP_NA_1, REQUEST));
        assert!(point.extends && !point.answers);
    }

    #[test]
    fn an_apdu_cut_across_segments_is_read_whole() {
        let mut r = started();
        let command = i(C_SC_NA_1, ACTIVATION);
        // A master that wrote its APDU a byte or two at a time.
        assert_eq!(read(&mut r, C, &command[..1]), Turns::default());
        assert_eq!(read(&mut r, C, &command[1..3]), Turns::default());
        assert_eq!(read(&mut r, C, &command[3..]).asks, Some("C_SC_NA_1"));
    }

    #[test]
    fn whole_apdus_on_its_port_or_a_startdt_anywhere_decide() {
        // A capture begun on the connection: the outstation's reports.
        let mut joined = Iec104::on_its_port();
        assert!(read(&mut joined, S, &i(M_SP_NA_1, SPONTANEOUS)) == Turns::default());
        assert!(joined.is());
        let mut elsewhere = Iec104::default();
        assert!(elsewhere.read(S, &i(M_SP_NA_1, SPONTANEOUS), 16).is_none());
        assert!(elsewhere.is_not());
        let mut started = Iec104::default();
        assert!(read(&mut started, C, &u(TESTFR_ACT)).asks.is_some());
        for first in [
            &b"GET / HTTP/1.1\r\n\r\n"[..],
            &[START, 4, 0x17, 0, 0, 0],
            &[START, 4, 1, 1, 0, 0],
        ] {
            let mut r = Iec104::on_its_port();
            r.read(C, first, first.len() as u64);
            assert!(r.is_not(), "{first:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn any_stream_bytes_are_read_without_panicking(segments in crate::reader::any::segments()) {
            let mut r = started();
            crate::reader::any::feed(segments, |dir, bytes, len| {
                r.read(dir, bytes, len);
            });
            proptest::prop_assert!(r.is());
        }
    }
}
