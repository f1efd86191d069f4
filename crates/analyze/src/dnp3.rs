//! DNP3 over TCP (IEEE 1815: SCADA masters polling outstations in power,
//! water and gas networks): which fragments ask, which answer, and which
//! the outstation sends on its own.
//!
//! A master connects to an outstation (port 20000), polls it (`READ`),
//! sets its clock, operates its points, and usually lets it report
//! events unasked: once the master enabled them, the outstation sends an
//! *unsolicited response* the moment a point changes, and the master
//! confirms each (`CONFIRM`). Read as turns, the master's CONFIRM
//! "asked" and the next unsolicited response "answered": the time until
//! the next event was the outstation's think time (15.4 s of
//! `server_think_time` on a feeder whose events came 0.8-5 s apart).
//! The application layer says what asks (IEEE 1815-2012 section 4.2.2):
//!
//! | master sends                                    | answered by the outstation's |
//! |-------------------------------------------------|------------------------------|
//! | a request (`READ`, `WRITE`, `SELECT`, `OPERATE`, `DIRECT_OPERATE`, restarts, `ENABLE_UNSOLICITED` ...) | `RESPONSE` (129) |
//! | a link-layer request alone (`REQUEST_LINK_STATUS`, `RESET_LINK_STATES`, `TEST_LINK_STATES`) | a link-layer answer (`LINK_STATUS`, `ACK`, `NACK`) |
//!
//! `CONFIRM` and the requests that want no response (the `_NR` forms,
//! `AUTHENTICATE_REQ_NO_ACK`) ask nothing; an `UNSOLICITED_RESPONSE`
//! (130) answers nothing. A response too long for one fragment comes in
//! several, each but the last asking the master to confirm it before the
//! next is sent: that CONFIRM is beside the turns (it neither asks nor
//! ends the request's turn), and the next fragment is the rest of the
//! answer.
//!
//! A connection is DNP3's when its first data (either side's: an
//! outstation may report before it is asked) is whole link-layer frames
//! whose first header's CRC checks, on any port. Frames are followed
//! across segments by their lengths (crate::framing): a frame's length
//! octet counts its header's 5 octets and its user data, which carries a
//! 2-octet CRC after every 16 octets.

use crate::exchange::Turns;
use crate::framing::{whole_messages, Follow};
use crate::reader::Reading;
use crate::Direction;

/// A link-layer frame's start octets.
const START: [u8; 2] = [0x05, 0x64];
/// Start, length, control, destination, source, and the header's CRC.
const HEADER: usize = 10;
/// The length octet's least: control, destination and source.
const LEAST_LENGTH: u8 = 5;
/// User data carries a CRC after each block of this many octets.
const BLOCK: u64 = 16;

/// The control octet: a primary (initiating) frame, and its function.
const PRIMARY: u8 = 0x40;
const FUNCTION: u8 = 0x0f;
/// Primary link functions that ask for a link-layer answer: reset link
/// states, test link states, request link status.
const LINK_REQUESTS: [u8; 3] = [0, 2, 9];
/// The transport header's first-segment bit.
const FIRST_SEGMENT: u8 = 0x40;
/// Application control: final fragment, confirm wanted.
const FINAL: u8 = 0x40;

/// Application function codes.
const CONFIRM: u8 = 0;
/// The requests that want no response: DIRECT_OPERATE_NR,
/// IMMED_FREEZE_NR, FREEZE_CLEAR_NR, FREEZE_AT_TIME_NR,
/// AUTHENTICATE_REQ_NO_ACK.
const NO_RESPONSE: [u8; 5] = [6, 8, 10, 12, 33];
/// The last request function defined.
const LAST_REQUEST: u8 = 33;
const RESPONSE: u8 = 129;
const AUTHENTICATE_RESPONSE: u8 = 131;

/// Questions open at once are bounded: a master waits for each answer
/// (IEEE 1815 allows one request outstanding); a forgotten one only
/// leaves its turn unanswered.
const MAX_AWAITED: usize = 8;

/// One connection's DNP3 reading (crate::reader).
pub(crate) type Dnp3 = Reading<State>;

/// What answers an open question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Awaited {
    /// A link-layer answer (a secondary frame without user data).
    Link,
    /// An application RESPONSE.
    Response,
}

/// What a DNP3 connection's reading keeps.
#[derive(Debug, Clone, Default)]
pub struct State {
    follow: [Follow; 2],
    /// The master's fragment under way asks (its later transport
    /// segments go on with it).
    asking: bool,
    /// The outstation's fragment under way answers or goes on with an
    /// answer.
    answering: bool,
    /// The outstation's last response was a fragment of a longer one: the
    /// master's CONFIRM of it is beside the turns, the next fragment is
    /// the rest of the answer.
    more_to_come: bool,
    /// The master's open questions, oldest first.
    awaited: Vec<Awaited>,
}

/// What a frame's header says: its control octet, and whether user data
/// follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Frame {
    control: u8,
    /// The frame carries user data.
    carries: bool,
}

impl Dnp3 {
    /// Reads a segment's stream bytes (`head` captured, `len` in all,
    /// which includes bytes the capture missed); `None` when the
    /// connection is not DNP3's.
    pub(crate) fn read(&mut self, dir: Direction, head: &[u8], len: u64) -> Option<Turns> {
        let state = self.state(|| Some(header_checks(head) && whole_messages(head, len, frame)))?;
        Some(state.read(dir, head, len))
    }
}

impl State {
    fn read(&mut self, dir: Direction, head: &[u8], len: u64) -> Turns {
        let mut m = Turns::default();
        let master = dir == Direction::ClientToServer;
        let mut follow = self.follow[dir.index()];
        let walked = follow.walk(head, len, frame, |f, bytes, _| {
            // The transport header, application control and function
            // code, when the frame carries them and they were captured.
            let transport = bytes.get(HEADER).copied();
            let fragment = match transport {
                Some(t) if t & FIRST_SEGMENT != 0 => {
                    bytes.get(HEADER + 1..HEADER + 3).map(|a| (a[0], a[1]))
                }
                _ => None,
            };
            if master {
                self.ask(f, fragment, &mut m);
            } else {
                self.answer(f, fragment, &mut m);
            }
        });
        self.follow[dir.index()] = follow;
        if walked.is_some_and(|w| w.continued) {
            m.go_on(dir, self.asking, self.answering);
        }
        m
    }

    fn ask(&mut self, f: Frame, fragment: Option<(u8, u8)>, m: &mut Turns) {
        let (name, awaited) = match (f.carries, fragment) {
            (false, _)
                if f.control & PRIMARY != 0 && LINK_REQUESTS.contains(&(f.control & FUNCTION)) =>
            {
                (link_request_name(f.control & FUNCTION), Awaited::Link)
            }
            (true, None) => {
                // A later transport segment of the fragment under way.
                m.continues |= self.asking;
                return;
            }
            (true, Some((_, CONFIRM))) if self.more_to_come => {
                // Asks for the next fragment of the answer under way.
                m.aside = m.asks.is_none();
                self.asking = false;
                return;
            }
            (true, Some((_, function)))
                if function <= LAST_REQUEST
                    && function != CONFIRM
                    && !NO_RESPONSE.contains(&function) =>
            {
                (request_name(function), Awaited::Response)
            }
            // CONFIRM, a request that wants no response, a master's
            // secondary link frame (its answer to the outstation's link
            // status request), or an outstation's response sent by the
            // client of the connection.
            _ => {
                self.asking = false;
                return;
            }
        };
        m.aside = false;
        self.asking = true;
        self.more_to_come = false;
        m.asks.get_or_insert(name);
        crate::reader::push_bounded(&mut self.awaited, awaited, MAX_AWAITED);
    }

    fn answer(&mut self, f: Frame, fragment: Option<(u8, u8)>, m: &mut Turns) {
        let (awaited, last_fragment) = match (f.carries, fragment) {
            (false, _) if f.control & PRIMARY == 0 => (Awaited::Link, true),
            (true, None) => {
                // A later transport segment of the fragment under way.
                m.extends |= self.answering;
                return;
            }
            (true, Some((control, RESPONSE | AUTHENTICATE_RESPONSE))) => {
                (Awaited::Response, control & FINAL != 0)
            }
            // UNSOLICITED_RESPONSE (130), the outstation's own link
            // requests.
            _ => {
                self.answering = false;
                return;
            }
        };
        if let Some(i) = self.awaited.iter().position(|a| *a == awaited) {
            self.awaited.remove(i);
            m.answers = true;
            self.answering = true;
        } else if awaited == Awaited::Response && self.more_to_come {
            // The next fragment, after the master confirmed the last.
            m.extends = true;
            self.answering = true;
        } else {
            self.answering = false;
        }
        if awaited == Awaited::Response {
            self.more_to_come = self.answering && !last_fragment;
        }
    }
}

/// A link-layer frame at the start of `bytes`: its control octet and
/// whether it carries user data, and its whole length with the user
/// data's CRCs; `None` when it is not one or the bytes end inside its
/// header.
fn frame(bytes: &[u8]) -> Option<(Frame, u64)> {
    let h = bytes.get(..HEADER)?;
    if h[..2] != START || h[2] < LEAST_LENGTH {
        return None;
    }
    let data = u64::from(h[2] - LEAST_LENGTH);
    let frame = Frame {
        control: h[3],
        carries: data > 0,
    };
    Some((frame, HEADER as u64 + data + 2 * data.div_ceil(BLOCK)))
}

/// Whether `head` begins with a frame header whose CRC checks: a DNP3
/// frame, not bytes that happen to begin `05 64`.
fn header_checks(head: &[u8]) -> bool {
    head.get(..HEADER)
        .is_some_and(|h| h[..2] == START && crc(&h[..8]).to_le_bytes() == [h[8], h[9]])
}

/// DNP3's CRC-16 (polynomial 0x3D65, reflected, complemented).
fn crc(bytes: &[u8]) -> u16 {
    let mut crc = 0u16;
    for &b in bytes {
        crc ^= u16::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xa6bc
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// A link request's name, labelling its turn.
fn link_request_name(function: u8) -> &'static str {
    match function {
        0 => "RESET_LINK_STATES",
        2 => "TEST_LINK_STATES",
        _ => "REQUEST_LINK_STATUS",
    }
}

/// An application request's name (IEEE 1815-2012 Table 4-1), labelling
/// its turn.
fn request_name(function: u8) -> &'static str {
    match function {
        1 => "READ",
        2 => "WRITE",
        3 => "SELECT",
        4 => "OPERATE",
        5 => "DIRECT_OPERATE",
        7 => "IMMED_FREEZE",
        9 => "FREEZE_CLEAR",
        11 => "FREEZE_AT_TIME",
        13 => "COLD_RESTART",
        14 => "WARM_RESTART",
        15 => "INITIALIZE_DATA",
        16 => "INITIALIZE_APPL",
        17 => "START_APPL",
        18 => "STOP_APPL",
        19 => "SAVE_CONFIG",
        20 => "ENABLE_UNSOLICITED",
        21 => "DISABLE_UNSOLICITED",
        22 => "ASSIGN_CLASS",
        23 => "DELAY_MEASURE",
        24 => "RECORD_CURRENT_TIME",
        25 => "OPEN_FILE",
        26 => "CLOSE_FILE",
        27 => "DELETE_FILE",
        28 => "GET_FILE_INFO",
        29 => "AUTHENTICATE_FILE",
        30 => "ABORT_FILE",
        31 => "ACTIVATE_CONFIG",
        32 => "AUTHENTICATE_REQ",
        _ => "request",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Direction::{ClientToServer as C, ServerToClient as S};

    /// A frame from `control` carrying `data` as user data (CRCs after
    /// every 16 octets), destination 4, source 3.
    fn frame_of(control: u8, data: &[u8]) -> Vec<u8> {
        let mut f = vec![
            0x05,
            0x64,
            LEAST_LENGTH + data.len() as u8,
            control,
            4,
            0,
            3,
            0,
        ];
        f.extend(crc(&f).to_le_bytes());
        for block in data.chunks(BLOCK as usize) {
            f.extend(block);
            f.extend(crc(block).to_le_bytes());
        }
        f
    }

    /// One fragment in one transport segment: application control (with
    /// first and final set, and `more` bits), function, `objects`.
    fn fragment(master: bool, function: u8, control: u8, objects: &[u8]) -> Vec<u8> {
        let mut data = vec![0xc0, 0xc0 | control, function];
        data.extend(objects);
        frame_of(if master { 0xc4 } else { 0x44 }, &data)
    }

    const READ: u8 = 1;
    const CLASS_0: [u8; 3] = [60, 1, 6];
    const CON: u8 = 0x20;
    const UNS: u8 = 0x10;

    fn read(r: &mut Dnp3, dir: Direction, bytes: &[u8]) -> Turns {
        r.read(dir, bytes, bytes.len() as u64).expect("DNP3's")
    }

    #[test]
    fn the_crc_is_dnp3s() {
        // A frame's header from a real outstation (nDPI's dnp3.pcap).
        let h = [0x05, 0x64, 0x0a, 0x44, 0x03, 0x00, 0x04, 0x00, 0x7c, 0xae];
        assert!(header_checks(&h));
        assert!(!header_checks(&[
            0x05, 0x64, 0x0a, 0x44, 0x03, 0x00, 0x04, 0x00, 0x7c, 0xaf
        ]));
        let long = fragment(true, READ, 0, &[0; 40]);
        assert_eq!(frame(&long).map(|(_, n)| n), Some(long.len() as u64));
    }

    #[test]
    fn an_unsolicited_response_after_a_confirm_answers_nothing() {
        let mut r = Dnp3::default();
        // An outstation that reports before it is asked.
        let event = fragment(false, 130, CON | UNS, &[2, 1, 0x17, 1, 0, 0x81]);
        assert_eq!(read(&mut r, S, &event), Turns::default());
        assert!(r.is());
        assert_eq!(
            read(&mut r, C, &fragment(true, CONFIRM, UNS, &[])),
            Turns::default()
        );
        assert_eq!(read(&mut r, S, &event), Turns::default());
        // A poll is answered by its RESPONSE, not by an event before it.
        assert_eq!(
            read(&mut r, C, &fragment(true, READ, 0, &CLASS_0)).asks,
            Some("READ")
        );
        assert!(!read(&mut r, S, &event).answers);
        assert!(read(&mut r, S, &fragment(false, RESPONSE, 0, &[0, 0])).answers);
        // Requests that want no response ask nothing.
        let no_response = fragment(true, 6, 0, &[12, 1, 0x28, 1, 0]);
        assert_eq!(read(&mut r, C, &no_response).asks, None);
    }

    #[test]
    fn a_long_response_goes_on_after_the_masters_confirm_of_each_fragment() {
        let mut r = Dnp3::default();
        assert_eq!(
            read(&mut r, C, &fragment(true, READ, 0, &CLASS_0)).asks,
            Some("READ")
        );
        // The first fragment, not final, asks for a confirmation.
        let first = frame_of(0x44, &[0xc0, 0x80 | CON, RESPONSE, 0, 0, 1, 2, 3]);
        assert!(read(&mut r, S, &first).answers);
        let confirm = read(&mut r, C, &fragment(true, CONFIRM, 0, &[]));
        assert!(confirm.aside && confirm.asks.is_none());
        let last = frame_of(0x44, &[0xc1, 0x40, RESPONSE, 0, 0, 4, 5]);
        let t = read(&mut r, S, &last);
        assert!(t.extends && !t.answers);
        // That answer over, a CONFIRM is no longer beside anything.
        assert_eq!(
            read(&mut r, C, &fragment(true, CONFIRM, 0, &[])),
            Turns::default()
        );
    }

    #[test]
    fn a_fragment_over_several_frames_and_segments_is_one_question() {
        let mut r = Dnp3::default();
        // A WRITE in two transport segments (two frames), the second in
        // a TCP segment of its own, cut across a third.
        let first = frame_of(0xc4, &[0x40, 0xc0, 2, 1, 2, 3]);
        let second = frame_of(0xc4, &[0x81, 4, 5, 6]);
        assert_eq!(read(&mut r, C, &first).asks, Some("WRITE"));
        // (A cut header says nothing until its segment's end is read.)
        assert_eq!(read(&mut r, C, &second[..4]), Turns::default());
        assert!(read(&mut r, C, &second[4..]).continues);
        // A link status request is answered at the link layer.
        let status = frame_of(0xc9, &[]);
        let t = read(&mut r, C, &status);
        assert_eq!(t.asks, Some("REQUEST_LINK_STATUS"));
        assert!(read(&mut r, S, &frame_of(0x0b, &[])).answers);
    }

    #[test]
    fn only_frames_whose_header_checks_decide() {
        let mut bad = fragment(true, READ, 0, &CLASS_0);
        bad[9] ^= 1;
        for first in [&b"GET / HTTP/1.1\r\n\r\n"[..], &bad] {
            let mut r = Dnp3::default();
            assert!(r.read(C, first, first.len() as u64).is_none());
            assert!(r.is_not(), "{first:?}");
        }
        // Whole frames only: one cut by the capture does not decide.
        let poll = fragment(true, READ, 0, &CLASS_0);
        let mut r = Dnp3::default();
        r.read(C, &poll[..12], poll.len() as u64);
        assert!(r.is_not());
    }

    proptest::proptest! {
        #[test]
        fn any_stream_bytes_are_read_without_panicking(segments in crate::reader::any::segments()) {
            let mut r = Dnp3::default();
            let poll = fragment(true, READ, 0, &CLASS_0);
            r.read(C, &poll, poll.len() as u64);
            crate::reader::any::feed(segments, |dir, bytes, len| {
                r.read(dir, bytes, len);
            });
            proptest::prop_assert!(r.is());
        }
    }
}
