//! Gearman's job server protocol (gearmand, and the Gearman servers of
//! other languages): which packets ask, which answer, and which the
//! server sends on its own.
//!
//! A worker with nothing to do tells the server it sleeps (`PRE_SLEEP`)
//! and waits; when a client submits a job the worker can do, the server
//! wakes it with a `NOOP`, and the worker asks for the job (`GRAB_JOB`).
//! Read as turns, the worker's `PRE_SLEEP` "asked" and the `NOOP` sent
//! when the next job was submitted "answered": the clients' pauses between
//! jobs were the server's think time (gearmand with jobs 1.9, 0.7 and 1.3 s
//! apart: 3.6 s of `server_think_time`). The packets say what asks
//! (gearman.org's protocol document):
//!
//! | client or worker sends                      | answered by              |
//! |---------------------------------------------|--------------------------|
//! | SUBMIT_JOB (and its _BG, _HIGH, _LOW, _SCHED, _EPOCH forms) | JOB_CREATED |
//! | GRAB_JOB, GRAB_JOB_UNIQ, GRAB_JOB_ALL       | NO_JOB or JOB_ASSIGN (_UNIQ, _ALL) |
//! | ECHO_REQ                                    | ECHO_RES                 |
//! | GET_STATUS, GET_STATUS_UNIQUE               | STATUS_RES (_UNIQUE)     |
//! | OPTION_REQ                                  | OPTION_RES               |
//!
//! and ERROR answers whatever was asked. Everything else asks nothing
//! (PRE_SLEEP, CAN_DO, CANT_DO, a worker's WORK_ packets, SET_CLIENT_ID);
//! the server's NOOP answers nothing, and the WORK_ packets it passes on
//! to a client (a foreground job's data, status and result, the worker's
//! time) are the rest of that job's answer.
//!
//! A connection is Gearman's when the client's first data is whole
//! packets, the first with the request magic (`\0REQ`) and a type a
//! client or worker sends. Packets are followed across segments by their
//! sizes (crate::framing).

use crate::exchange::Turns;
use crate::framing::{whole_messages, Follow};
use crate::reader::Reading;
use crate::Direction;

/// A packet's header: magic, type, the size of its arguments.
const HEADER: usize = 12;
const REQUEST: &[u8; 4] = b"\0REQ";
const RESPONSE: &[u8; 4] = b"\0RES";
/// Arguments larger than this are none of Gearman's (gearmand's default
/// job size limit is a few MB).
const MAX_SIZE: u32 = 1 << 26;
/// The packet types (gearman.org's PROTOCOL).
const SUBMIT_JOBS: [u32; 9] = [7, 21, 18, 32, 33, 34, 35, 36, 38];
const GRAB_JOBS: [u32; 3] = [9, 30, 39];
const ECHO_REQ: u32 = 16;
const GET_STATUS: [u32; 2] = [15, 41];
const OPTION_REQ: u32 = 26;
const JOB_CREATED: u32 = 8;
const NO_JOB: u32 = 10;
/// What answers a GRAB_JOB: NO_JOB, or JOB_ASSIGN (_UNIQ, _ALL).
const GRAB_ANSWERS: [u32; 4] = [NO_JOB, 11, 31, 40];
const ECHO_RES: u32 = 17;
const ERROR: u32 = 19;
const STATUS_RES: [u32; 2] = [20, 42];
const OPTION_RES: u32 = 27;
/// The WORK_ packets a server passes on to a client: STATUS, COMPLETE,
/// FAIL, EXCEPTION, DATA, WARNING.
const WORK: [u32; 6] = [12, 13, 14, 25, 28, 29];
/// The highest packet type defined.
const MAX_TYPE: u32 = 42;
/// Questions open at once are bounded: a client submits a few jobs at a
/// time; a forgotten one only leaves its turn unanswered.
const MAX_AWAITED: usize = 32;

/// One connection's Gearman reading (crate::reader).
pub(crate) type Gearman = Reading<State>;

/// What answers a question: the packet types.
type Awaited = &'static [u32];

/// What a Gearman connection's reading keeps.
#[derive(Debug, Clone, Default)]
pub struct State {
    follow: [Follow; 2],
    /// The client's packet under way asks (a large job's later segments).
    asking: bool,
    /// The server's packet under way answers or goes on with an answer.
    answering: bool,
    /// A job the client submitted was answered (JOB_CREATED): the WORK_
    /// packets passed on to it are the rest of that answer.
    job_created: bool,
    /// The client's open questions, oldest first.
    awaited: Vec<Awaited>,
}

impl Gearman {
    /// Reads a segment's stream bytes (`head` captured, `len` in all,
    /// which includes bytes the capture missed); `None` when the
    /// connection is not Gearman's.
    pub(crate) fn read(&mut self, dir: Direction, head: &[u8], len: u64) -> Option<Turns> {
        let state = self.state(|| {
            Some(
                dir == Direction::ClientToServer
                    && head.starts_with(REQUEST)
                    && whole_messages(head, len, request),
            )
        })?;
        Some(state.read(dir, head, len))
    }
}

impl State {
    fn read(&mut self, dir: Direction, head: &[u8], len: u64) -> Turns {
        let mut m = Turns::default();
        let client = dir == Direction::ClientToServer;
        let header = if client { request } else { response };
        let mut follow = self.follow[dir.index()];
        let walked = follow.walk(head, len, header, |kind, _, _| {
            if client {
                self.ask(kind, &mut m);
            } else {
                self.answer(kind, &mut m);
            }
        });
        self.follow[dir.index()] = follow;
        if walked.is_some_and(|w| w.continued) {
            m.go_on(dir, self.asking, self.answering);
        }
        m
    }

    fn ask(&mut self, kind: u32, m: &mut Turns) {
        let (name, awaited): (&'static str, Awaited) = if SUBMIT_JOBS.contains(&kind) {
            ("SUBMIT_JOB", &[JOB_CREATED])
        } else if GRAB_JOBS.contains(&kind) {
            ("GRAB_JOB", &GRAB_ANSWERS)
        } else if kind == ECHO_REQ {
            ("ECHO_REQ", &[ECHO_RES])
        } else if GET_STATUS.contains(&kind) {
            ("GET_STATUS", &STATUS_RES)
        } else if kind == OPTION_REQ {
            ("OPTION_REQ", &[OPTION_RES])
        } else {
            // PRE_SLEEP, CAN_DO, a worker's WORK_ packets: nothing asked.
            self.asking = false;
            return;
        };
        self.asking = true;
        m.asks.get_or_insert(name);
        crate::reader::push_bounded(&mut self.awaited, awaited, MAX_AWAITED);
    }

    fn answer(&mut self, kind: u32, m: &mut Turns) {
        let i = if kind == ERROR {
            (!self.awaited.is_empty()).then_some(0)
        } else {
            self.awaited.iter().position(|a| a.contains(&kind))
        };
        if let Some(i) = i {
            self.awaited.remove(i);
            m.answers = true;
            self.answering = true;
            self.job_created |= kind == JOB_CREATED;
        } else if WORK.contains(&kind) && self.job_created {
            // A foreground job's progress and result: the rest of the
            // answer to its submission.
            m.extends = true;
            self.answering = true;
        } else {
            // NOOP (a sleeping worker woken), or nothing asked.
            self.answering = false;
        }
    }
}

/// A packet with `magic` at the start of `bytes`: its type and whole
/// length; `None` when it is none of Gearman's or the bytes end inside
/// its header.
fn packet(bytes: &[u8], magic: &[u8; 4]) -> Option<(u32, u64)> {
    let h = bytes.get(..HEADER)?;
    let kind = u32::from_be_bytes([h[4], h[5], h[6], h[7]]);
    let size = u32::from_be_bytes([h[8], h[9], h[10], h[11]]);
    (h.starts_with(magic) && (1..=MAX_TYPE).contains(&kind) && size <= MAX_SIZE)
        .then_some((kind, HEADER as u64 + u64::from(size)))
}

fn request(bytes: &[u8]) -> Option<(u32, u64)> {
    packet(bytes, REQUEST)
}

fn response(bytes: &[u8]) -> Option<(u32, u64)> {
    packet(bytes, RESPONSE)
}

#[cfg(test)]
mod tests {
    use super::*;
    use Direction::{ClientToServer as C, ServerToClient as S};

    fn packet_of(magic: &[u8; 4], kind: u32, args: &[u8]) -> Vec<u8> {
        let mut p = magic.to_vec();
        p.extend(kind.to_be_bytes());
        p.extend((args.len() as u32).to_be_bytes());
        p.extend(args);
        p
    }

    fn req(kind: u32, args: &[u8]) -> Vec<u8> {
        packet_of(REQUEST, kind, args)
    }

    fn res(kind: u32, args: &[u8]) -> Vec<u8> {
        packet_of(RESPONSE, kind, args)
    }

    const CAN_DO: u32 = 1;
    const PRE_SLEEP: u32 = 4;
    const NOOP: u32 = 6;
    const GRAB_JOB: u32 = 9;
    const WORK_COMPLETE: u32 = 13;

    fn read(g: &mut Gearman, dir: Direction, bytes: &[u8]) -> Turns {
        g.read(dir, bytes, bytes.len() as u64).expect("Gearman's")
    }

    #[test]
    fn a_sleeping_workers_wake_up_answers_nothing() {
        let mut g = Gearman::default();
        let first = [req(CAN_DO, b"lab"), req(GRAB_JOB, b"")].concat();
        assert_eq!(read(&mut g, C, &first).asks, Some("GRAB_JOB"));
        assert!(g.is());
        assert!(read(&mut g, S, &res(NO_JOB, b"")).answers);
        // Asleep until a job comes: nothing asked, the NOOP answers
        // nothing.
        assert_eq!(read(&mut g, C, &req(PRE_SLEEP, b"")), Turns::default());
        assert_eq!(read(&mut g, S, &res(NOOP, b"")), Turns::default());
        assert_eq!(read(&mut g, C, &req(GRAB_JOB, b"")).asks, Some("GRAB_JOB"));
        assert!(read(&mut g, S, &res(11, b"H:vm:1\0lab\0x")).answers);
        // The result asks nothing of the server.
        let done = [req(WORK_COMPLETE, b"H:vm:1\0ok"), req(GRAB_JOB, b"")].concat();
        assert_eq!(read(&mut g, C, &done).asks, Some("GRAB_JOB"));
    }

    #[test]
    fn a_clients_job_is_answered_by_job_created_and_its_result_goes_on_with_it() {
        let mut g = Gearman::default();
        assert_eq!(
            read(&mut g, C, &req(ECHO_REQ, b"hi")).asks,
            Some("ECHO_REQ")
        );
        assert!(read(&mut g, S, &res(ECHO_RES, b"hi")).answers);
        let submit = req(7, b"lab\0u\0payload");
        assert_eq!(read(&mut g, C, &submit).asks, Some("SUBMIT_JOB"));
        assert!(!read(&mut g, S, &res(NOOP, b"")).answers);
        assert!(read(&mut g, S, &res(JOB_CREATED, b"H:vm:1")).answers);
        let result = read(&mut g, S, &res(WORK_COMPLETE, b"H:vm:1\0ok"));
        assert!(result.extends && !result.answers);
        // An error answers what was asked.
        assert!(read(&mut g, C, &req(15, b"H:vm:1")).asks.is_some());
        assert!(read(&mut g, S, &res(ERROR, b"ERR\0x")).answers);
    }

    #[test]
    fn only_request_packets_from_the_client_decide() {
        for (dir, first) in [
            (C, &b"status\n"[..]),
            (S, &res(NOOP, b"")[..]),
            (C, &b"\0REQ\0\0\0\x63\0\0\0\0"[..]),
        ] {
            let mut g = Gearman::default();
            assert!(g.read(dir, first, first.len() as u64).is_none());
            assert!(g.is_not(), "{first:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn any_stream_bytes_are_read_without_panicking(segments in crate::reader::any::segments()) {
            let mut g = Gearman::default();
            let first = req(GRAB_JOB, b"");
            g.read(C, &first, first.len() as u64);
            crate::reader::any::feed(segments, |dir, bytes, len| {
                g.read(dir, bytes, len);
            });
            proptest::prop_assert!(g.is());
        }
    }
}
