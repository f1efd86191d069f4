//! NATS (the client protocol of nats-server): which operations ask, which
//! answer, and which the server sends on its own.
//!
//! The server greets with `INFO {...}`; the client says `CONNECT {...}`,
//! subscribes (`SUB`), publishes (`PUB`, `HPUB`) and pings (`PING`, which
//! clients also send to flush what they wrote); the server delivers
//! each message published to a subject the client subscribed to (`MSG`,
//! `HMSG`) the moment another client publishes it, and pings the client
//! on its own timer (`PING`, answered by the client's `PONG`). Taken as
//! turns, a subscriber's `SUB` or its `PONG` "asked" for the next message
//! and the publisher's pause was measured as the server's think time
//! (nats-server with nats-py and a publisher a second apart: 437 ms of
//! `server_think_time`). The operations say what asks:
//!
//! | client sends                               | answered by                  |
//! |--------------------------------------------|------------------------------|
//! | PING                                       | PONG                         |
//! | PUB or HPUB with a reply subject (a request) | MSG or HMSG on that subject |
//! | anything, after `CONNECT` with `"verbose": true` | `+OK` or `-ERR`        |
//!
//! Everything else asks nothing (SUB, UNSUB, a PUB without a reply
//! subject, PONG); the server's other messages, PINGs and INFOs answer
//! nothing. A request's answer is the responder's, behind the server.
//! A message answers a request when it comes on the reply subject, or on
//! the subscription (its sid) whose subject the reply subject matches:
//! a JetStream pull consumer's delivery keeps its stream subject
//! (`MSG lab.jobs 2 $JS.ACK...`) and comes on the inbox's subscription.
//! A JetStream fetch (a request to `$JS.API.CONSUMER.MSG.NEXT.<stream>.
//! <consumer>`, nats.py's `fetch`, nats.go's `Fetch`) asks the server to
//! hold its answer until a message is there or its `expires` passes (a
//! `408 Request Timeout`): the wait is the client's asking
//! ([`Turns::waits`]), as a Redis blocking pop's is.
//!
//! A connection is NATS when the server's first data is its `INFO {`
//! (read as the greeting it is). Operations are lines; a message's
//! payload, whose length its line gives, is skipped by that length.

use crate::exchange::Turns;
use crate::reader::Reading;
use crate::Direction;

/// Questions open at once are bounded: a client pings and requests a few
/// at a time; a forgotten one only leaves its turn unanswered.
const MAX_AWAITED: usize = 32;
/// Subscriptions remembered (for the sids that answer requests): a
/// client's inbox subscriptions are few; a forgotten one only leaves a
/// delivery unmatched.
const MAX_SUBSCRIPTIONS: usize = 64;
/// The subject a JetStream pull consumer's fetch is sent to (then the
/// stream's and the consumer's names).
const JETSTREAM_FETCH: &[u8] = b"$JS.API.CONSUMER.MSG.NEXT.";
/// An operation's line longer than this is not followed across segments
/// (a subject is at most a few hundred bytes; CONNECT's JSON below 1 KB).
const MAX_LINE: usize = 4096;

/// One connection's NATS reading (crate::reader).
pub(crate) type Nats = Reading<State>;

/// What is awaited: a PONG, an `+OK`/`-ERR`, or a message on a reply
/// subject.
#[derive(Debug, Clone, PartialEq)]
enum Awaited {
    Pong,
    Ok,
    Reply(Box<[u8]>),
}

/// A subscription: its subject (a pattern) and its sid.
type Subscription = (Box<[u8]>, Box<[u8]>);

/// What a NATS connection's reading keeps.
#[derive(Debug, Clone, Default)]
pub struct State {
    /// Per direction: payload bytes (and their line end) still to come.
    payload: [u64; 2],
    /// Per direction: the beginning of an operation's line a segment's
    /// end cut (empty when none).
    partial: [Vec<u8>; 2],
    /// Per direction: lost in a hole until a segment begins a line.
    lost: [bool; 2],
    /// The client's operation under way (its payload) asks.
    asking: bool,
    /// The server's message under way answers.
    answering: bool,
    /// The client asked for `+OK` after every operation.
    verbose: bool,
    /// The client's open questions, oldest first, each with its place
    /// among the client's questions.
    awaited: Vec<(Awaited, u64)>,
    /// The questions' numbers, and which began the client's latest turn:
    /// an answer to an older one (a fetch's expiry that came after the
    /// client asked again on the same inbox) is the turn before's.
    turns: crate::reader::TurnNumbers,
    /// The client's subscriptions.
    subscriptions: Vec<Subscription>,
}

impl Nats {
    /// Reads a segment's stream bytes (`head` captured, `len` in all,
    /// which includes bytes the capture missed); `None` when the
    /// connection is not NATS, and for the server's greeting, which
    /// answers nothing asked and is timed as a greeting.
    pub(crate) fn read(&mut self, dir: Direction, head: &[u8], len: u64) -> Option<Turns> {
        if self.undecided() {
            let info = dir == Direction::ServerToClient && head.starts_with(b"INFO {");
            self.state(|| Some(info));
            return None;
        }
        Some(self.state(|| None)?.read(dir, head, len))
    }
}

impl State {
    fn read(&mut self, dir: Direction, head: &[u8], len: u64) -> Turns {
        let d = dir.index();
        let client = dir == Direction::ClientToServer;
        let mut m = Turns::default();
        if self.lost[d] {
            // Found again where a segment begins an operation.
            if !head.first().is_some_and(u8::is_ascii_alphabetic)
                && head.first() != Some(&b'+')
                && head.first() != Some(&b'-')
            {
                return m;
            }
            self.lost[d] = false;
            self.payload[d] = 0;
            self.partial[d].clear();
        }
        let mut at = 0usize;
        let mut first = true;
        while (at as u64) < len {
            if self.payload[d] > 0 {
                let take = self.payload[d].min(len - at as u64);
                self.payload[d] -= take;
                at += take as usize;
                if first {
                    if client {
                        m.continues = self.asking;
                    } else {
                        m.extends = self.answering;
                    }
                }
                first = false;
                continue;
            }
            first = false;
            if at >= head.len() {
                // The rest is in a hole the capture left.
                self.lost[d] = true;
                break;
            }
            let Some(end) = head[at..].iter().position(|&b| b == b'\n') else {
                // A line the segment's end cut: kept for the next.
                if self.partial[d].len() + head.len() - at <= MAX_LINE {
                    self.partial[d].extend_from_slice(&head[at..]);
                } else {
                    self.partial[d].clear();
                    self.lost[d] = true;
                }
                if head.len() as u64 != len {
                    self.lost[d] = true;
                }
                break;
            };
            let rest = &head[at..at + end];
            at += end + 1;
            if self.partial[d].is_empty() {
                self.operation(dir, rest, &mut m);
            } else {
                // The line a segment's end cut, whole now.
                let mut line = std::mem::take(&mut self.partial[d]);
                line.extend_from_slice(rest);
                self.operation(dir, &line, &mut m);
                line.clear();
                self.partial[d] = line;
            }
        }
        m
    }

    /// One operation's line (without its `\n`).
    fn operation(&mut self, dir: Direction, line: &[u8], m: &mut Turns) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let mut words = line
            .split(|&b| b == b' ' || b == b'\t')
            .filter(|w| !w.is_empty());
        let Some(op) = words.next() else {
            return;
        };
        let args: Vec<&[u8]> = words.collect();
        let is = |name: &[u8]| op.eq_ignore_ascii_case(name);
        let d = dir.index();
        // A message's payload follows its line: its size is the last
        // argument (HPUB's and HMSG's: headers and payload in all).
        let carries = is(b"PUB") || is(b"HPUB") || is(b"MSG") || is(b"HMSG");
        if carries {
            let size = args
                .last()
                .and_then(|s| std::str::from_utf8(s).ok()?.parse::<u64>().ok());
            match size {
                Some(n) => self.payload[d] = n + 2,
                None => self.lost[d] = true,
            }
        }
        match dir {
            Direction::ClientToServer => {
                // SUB subject [queue] sid; UNSUB sid [max].
                if is(b"SUB") && args.len() >= 2 {
                    let sub = (args[0].into(), args[args.len() - 1].into());
                    crate::reader::push_bounded(&mut self.subscriptions, sub, MAX_SUBSCRIPTIONS);
                }
                if is(b"UNSUB") {
                    if let Some(sid) = args.first() {
                        self.subscriptions.retain(|(_, s)| **s != **sid);
                    }
                }
                if is(b"CONNECT") {
                    let compact: Vec<u8> = line.iter().copied().filter(|b| *b != b' ').collect();
                    self.verbose = compact.windows(14).any(|w| w == b"\"verbose\":true");
                }
                let mut asked = Vec::new();
                if is(b"PING") {
                    asked.push(Awaited::Pong);
                }
                // PUB subject reply size; HPUB subject reply hsize size.
                let request = (is(b"PUB") && args.len() == 3) || (is(b"HPUB") && args.len() == 4);
                if request {
                    asked.push(Awaited::Reply(args[1].into()));
                    m.waits |= args[0].starts_with(JETSTREAM_FETCH);
                }
                if self.verbose && !is(b"PONG") {
                    asked.push(Awaited::Ok);
                }
                self.asking = !asked.is_empty();
                // A request on a reply subject already awaited: the client
                // gave up the older (nats.py's fetch after its timeout),
                // whose late answer is not this one's.
                let retried = asked.iter().any(|a| {
                    matches!(a, Awaited::Reply(_)) && self.awaited.iter().any(|w| w.0 == *a)
                });
                let mut begins = self.awaited.is_empty() || retried;
                if let Some(first) = asked.first() {
                    m.asks.get_or_insert(match first {
                        Awaited::Pong => "PING",
                        Awaited::Reply(_) if m.waits => "JetStream fetch",
                        Awaited::Reply(_) => "request",
                        Awaited::Ok if is(b"CONNECT") => "CONNECT",
                        Awaited::Ok if is(b"SUB") => "SUB",
                        Awaited::Ok if is(b"UNSUB") => "UNSUB",
                        Awaited::Ok => "PUB",
                    });
                }
                for a in asked {
                    let numbered = (a, self.turns.ask(std::mem::take(&mut begins)));
                    crate::reader::push_bounded(&mut self.awaited, numbered, MAX_AWAITED);
                }
            }
            Direction::ServerToClient => {
                let i = if is(b"PONG") {
                    self.awaited.iter().position(|w| w.0 == Awaited::Pong)
                } else if is(b"+OK") || is(b"-ERR") {
                    self.awaited.iter().position(|w| w.0 == Awaited::Ok)
                } else if carries && args.len() >= 2 {
                    // MSG subject sid [reply] size: on the reply subject,
                    // or on the subscription that serves it.
                    let (subject, sid) = (args[0], args[1]);
                    self.awaited.iter().position(|w| match &w.0 {
                        Awaited::Reply(reply) => {
                            **reply == *subject
                                || self.subscriptions.iter().any(|(pattern, s)| {
                                    **s == *sid && subject_matches(pattern, reply)
                                })
                        }
                        _ => false,
                    })
                } else {
                    None
                };
                let number = i.map(|i| self.awaited.remove(i).1);
                match number.map(|n| self.turns.answer(n)) {
                    // (A +OK or PONG answers the oldest asked, the client's
                    // sole question of its kind as a rule.)
                    Some(of_turn) if of_turn || !carries => {
                        m.answers = true;
                        self.answering = carries;
                    }
                    // The turn before's (its request's answer came after
                    // the client asked again).
                    Some(_) => {
                        m.extends = true;
                        self.answering = false;
                    }
                    None => self.answering = false,
                }
            }
        }
    }
}

/// Whether a subscription's subject `pattern` (its tokens, `*` one of
/// any, `>` all the rest) matches the subject `subject`.
fn subject_matches(pattern: &[u8], subject: &[u8]) -> bool {
    let mut subject = subject.split(|&b| b == b'.');
    for token in pattern.split(|&b| b == b'.') {
        match (token, subject.next()) {
            (b">", Some(_)) => return true,
            (b"*", Some(_)) => {}
            (t, Some(s)) if t == s => {}
            _ => return false,
        }
    }
    subject.next().is_none()
}

#[cfg(test)]
mod tests {
    use super::*;
    use Direction::{ClientToServer as C, ServerToClient as S};

    fn read(n: &mut Nats, dir: Direction, bytes: &[u8]) -> Turns {
        n.read(dir, bytes, bytes.len() as u64).expect("NATS")
    }

    /// nats-py's start: the server's INFO, CONNECT and a PING to flush,
    /// the PONG.
    fn connected(verbose: bool) -> Nats {
        let mut n = Nats::default();
        assert!(
            n.read(S, b"INFO {\"server_id\":\"x\"}\r\n", 25).is_none(),
            "a greeting"
        );
        assert!(n.is());
        let connect: &[u8] = if verbose {
            b"CONNECT {\"verbose\": true, \"pedantic\": false}\r\nPING\r\n"
        } else {
            b"CONNECT {\"verbose\": false, \"pedantic\": false}\r\nPING\r\n"
        };
        let asked = read(&mut n, C, connect).asks;
        assert_eq!(asked, Some(if verbose { "CONNECT" } else { "PING" }));
        if verbose {
            assert!(read(&mut n, S, b"+OK\r\n").answers);
        }
        assert!(read(&mut n, S, b"PONG\r\n").answers);
        n
    }

    #[test]
    fn a_subscribers_sub_and_pong_ask_nothing_and_messages_answer_nothing() {
        let mut n = connected(false);
        assert_eq!(read(&mut n, C, b"SUB feed  1\r\n"), Turns::default());
        // Messages as others publish; the server's PING, the client's
        // PONG: no turns.
        assert_eq!(
            read(&mut n, S, b"MSG feed 1 9\r\nmessage 0\r\n"),
            Turns::default()
        );
        assert_eq!(read(&mut n, S, b"PING\r\n"), Turns::default());
        assert_eq!(read(&mut n, C, b"PONG\r\n"), Turns::default());
        // A payload that reads like an operation is skipped by its size.
        assert_eq!(
            read(&mut n, S, b"MSG feed 1 6\r\nPONG\r\n\r\n"),
            Turns::default()
        );
        assert_eq!(read(&mut n, C, b"PING\r\n").asks, Some("PING"));
        assert!(read(&mut n, S, b"PONG\r\n").answers);
        assert!(!read(&mut n, S, b"PONG\r\n").answers, "answered once");
        // A publish without a reply subject asks nothing, and its payload
        // across segments neither.
        assert_eq!(read(&mut n, C, b"PUB feed 3000\r\nxx"), Turns::default());
        assert_eq!(read(&mut n, C, &[b'x'; 1000]), Turns::default());
        assert_eq!(read(&mut n, C, &[b'x'; 2000]), Turns::default());
        assert_eq!(read(&mut n, C, b"\r\nPING\r\n").asks, Some("PING"));
    }

    #[test]
    fn a_request_is_answered_by_the_message_on_its_reply_subject() {
        let mut n = connected(false);
        let asked = read(
            &mut n,
            C,
            b"SUB _INBOX.a.*  2\r\nPUB svc _INBOX.a.b 1\r\nq\r\n",
        );
        assert_eq!(asked.asks, Some("request"));
        assert!(
            !read(&mut n, S, b"MSG feed 1 1\r\nm\r\n").answers,
            "another subject"
        );
        let answer = read(&mut n, S, b"MSG _INBOX.a.b 2 3000\r\nxx");
        assert!(answer.answers);
        assert!(
            read(&mut n, S, &[b'x'; 3000]).extends,
            "the answer's payload"
        );
        assert!(!read(&mut n, S, b"MSG feed 1 1\r\nm\r\n").extends);
    }

    #[test]
    fn a_jetstream_fetch_waits_and_its_delivery_on_the_inbox_subscription_answers() {
        let mut n = connected(false);
        assert_eq!(read(&mut n, C, b"SUB _INBOX.a.*  2\r\n"), Turns::default());
        let fetch =
            b"PUB $JS.API.CONSUMER.MSG.NEXT.LAB.worker _INBOX.a.b 35\r\n{\"batch\": 1, \"expires\": 1999900000}\r\n";
        let asked = read(&mut n, C, fetch);
        assert_eq!((asked.asks, asked.waits), (Some("JetStream fetch"), true));
        // Another subscription's message answers nothing; the delivery,
        // with the stream's subject, on the inbox's sid answers.
        assert!(
            !read(
                &mut n,
                S,
                b"MSG lab.jobs 9 $JS.ACK.LAB.worker.1 5\r\njob 0\r\n"
            )
            .answers
        );
        assert!(
            read(
                &mut n,
                S,
                b"MSG lab.jobs 2 $JS.ACK.LAB.worker.1 5\r\njob 0\r\n"
            )
            .answers
        );
        // Its expiry: a 408 status on the reply subject.
        assert!(read(&mut n, C, fetch).waits);
        assert!(
            read(
                &mut n,
                S,
                b"HMSG _INBOX.a.b 2 28 28\r\nNATS/1.0 408 Request Timeout\r\n\r\n\r\n"
            )
            .answers
        );
        // A fetch given up and asked again on the same inbox: the first's
        // expiry is the turn before's, the second's answers.
        assert!(read(&mut n, C, fetch).waits);
        assert!(read(&mut n, C, fetch).waits);
        let expiry = b"HMSG _INBOX.a.b 2 28 28\r\nNATS/1.0 408 Request Timeout\r\n\r\n\r\n";
        let late = read(&mut n, S, expiry);
        assert!(late.extends && !late.answers);
        assert!(read(&mut n, S, expiry).answers);
        // A request to a service is no fetch: the responder's time.
        let asked = read(&mut n, C, b"PUB svc.slow _INBOX.a.c 1\r\nq\r\n");
        assert_eq!((asked.asks, asked.waits), (Some("request"), false));
        // Unsubscribed: its sid serves no request any more.
        read(&mut n, C, b"UNSUB 2\r\n");
        assert!(!read(&mut n, S, b"MSG other 2 1\r\nx\r\n").answers);
    }

    #[test]
    fn subjects_match_their_subscriptions_wildcards() {
        assert!(subject_matches(b"_INBOX.a.*", b"_INBOX.a.b"));
        assert!(subject_matches(b"_INBOX.>", b"_INBOX.a.b"));
        assert!(subject_matches(b"_INBOX.a.b", b"_INBOX.a.b"));
        assert!(!subject_matches(b"_INBOX.a.*", b"_INBOX.a.b.c"));
        assert!(!subject_matches(b"_INBOX.a.*", b"_INBOX.a"));
        assert!(!subject_matches(b"_INBOX.>", b"_INBOX"));
        assert!(!subject_matches(b"feed", b"_INBOX.a.b"));
    }

    #[test]
    fn verbose_clients_ask_with_every_operation() {
        let mut n = connected(true);
        assert_eq!(read(&mut n, C, b"SUB feed 1\r\n").asks, Some("SUB"));
        assert!(read(&mut n, S, b"+OK\r\n").answers);
        assert_eq!(read(&mut n, C, b"PUB feed 1\r\nx\r\n").asks, Some("PUB"));
        assert!(read(&mut n, S, b"-ERR 'Permissions Violation'\r\n").answers);
        assert_eq!(read(&mut n, C, b"PONG\r\n"), Turns::default());
    }

    #[test]
    fn lines_across_segments_and_holes() {
        let mut n = connected(false);
        // A PING cut in two.
        assert_eq!(read(&mut n, C, b"PI"), Turns::default());
        assert_eq!(read(&mut n, C, b"NG\r\n").asks, Some("PING"));
        // A hole: lost until a segment begins an operation.
        assert_eq!(n.read(S, &[], 30), Some(Turns::default()));
        assert_eq!(read(&mut n, S, b"ssage\r\n"), Turns::default());
        assert!(read(&mut n, S, b"PONG\r\n").answers);
    }

    #[test]
    fn only_a_server_greeting_with_info_is_nats() {
        for (dir, first) in [
            (C, &b"CONNECT {}\r\n"[..]),
            (S, b"220 mail ESMTP\r\n"),
            (S, b"INFO\r\n"),
        ] {
            let mut n = Nats::default();
            assert!(n.read(dir, first, first.len() as u64).is_none());
            assert!(n.is_not(), "{first:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn any_stream_bytes_are_read_without_panicking(segments in crate::reader::any::segments()) {
            let mut n = Nats::default();
            n.read(S, b"INFO {}\r\n", 9);
            crate::reader::any::feed(segments, |dir, bytes, len| {
                n.read(dir, bytes, len);
            });
            proptest::prop_assert!(n.is());
        }
    }
}
