//! IRC (RFC 1459, RFC 2812, IRCv3's capability negotiation): which lines
//! ask and which answer.
//!
//! A client's commands are answered by the server's numeric replies
//! (`001` for a registration, `353`/`366` for a JOIN, `311`-`318` for a
//! WHOIS, `421` for a command it does not know) and by the echo of the
//! client's own JOIN, PART, NICK or MODE; a PING by its PONG, a QUIT by
//! the ERROR that closes the link. Three commands ask nothing: PRIVMSG
//! and NOTICE (a message to others, answered by nobody unless in error)
//! and PONG (the client's answer to the server's PING). The server sends
//! on its own what others say (their PRIVMSG, NOTICE, JOIN, PART, QUIT),
//! its PING keep-alives and its notices. Taken as turns, a client's PONG
//! "asked" for the next message in its channels, and a channel message's
//! pause was the server's think time; and a JOIN throttled by the
//! server's flood penalty was timed against the PRIVMSG sent meanwhile
//! (ngircd and ii/sic: 44 ms of `server_think_time`).
//!
//! A connection is IRC when the client's first line registers it: NICK,
//! CAP (IRCv3), SERVICE, USER with its four parameters (FTP's and POP3's
//! USER has one), or PASS followed by one of those in the same segment.
//! Lines are read where they begin; one cut by a segment's end or by a
//! hole in the capture keeps the meaning its beginning gave it.

use crate::exchange::Turns;
use crate::reader::Reading;
use crate::Direction;

/// Questions open at once are bounded: a client asks a few at a time
/// (registration's NICK and USER, a JOIN of several channels); one
/// counted too many only lets a later reply answer.
const MAX_OPEN: u8 = 32;
/// A nickname longer than this is no nickname (servers allow 9 to 32).
const MAX_NICK: usize = 64;
/// The commands a turn is named by (anything else asks as `command`).
const COMMANDS: [&str; 32] = [
    "NICK",
    "USER",
    "PASS",
    "CAP",
    "AUTHENTICATE",
    "JOIN",
    "PART",
    "MODE",
    "TOPIC",
    "NAMES",
    "LIST",
    "INVITE",
    "KICK",
    "WHO",
    "WHOIS",
    "WHOWAS",
    "PING",
    "QUIT",
    "AWAY",
    "ISON",
    "USERHOST",
    "MOTD",
    "LUSERS",
    "VERSION",
    "STATS",
    "LINKS",
    "TIME",
    "INFO",
    "ADMIN",
    "OPER",
    "MONITOR",
    "SERVICE",
];

/// One connection's IRC reading (crate::reader).
pub(crate) type Irc = Reading<State>;

/// What an IRC connection's reading keeps.
#[derive(Debug, Clone, Default)]
pub struct State {
    /// Per direction: the last segment ended inside a line (or in a hole,
    /// where where the line ended is unknown).
    mid_line: [bool; 2],
    /// The client's line under way asks.
    asking: bool,
    /// The client's questions not answered yet.
    open: u8,
    /// The server's last segment answered: replies in its next segments
    /// are the rest of that answer.
    answering: bool,
    /// The client's nickname (its last NICK, or the one the server
    /// welcomed it with): the server's echo of its own commands answers.
    nick: Vec<u8>,
}

impl Irc {
    /// Reads a segment's stream bytes (`head` captured, `len` in all,
    /// which includes bytes the capture missed); `None` when the
    /// connection is not IRC. (A server that speaks first with a notice
    /// decides nothing: IRC servers greet so while they look the client
    /// up; anything else a server says first is no IRC server's.)
    pub(crate) fn read(&mut self, dir: Direction, head: &[u8], len: u64) -> Option<Turns> {
        let decide = || match dir {
            Direction::ClientToServer => Some(registers(head)),
            Direction::ServerToClient => {
                let notice = head.first() == Some(&b':') || head.starts_with(b"NOTICE ");
                (!notice).then_some(false)
            }
        };
        Some(self.state(decide)?.read(dir, head, len))
    }
}

impl State {
    fn read(&mut self, dir: Direction, head: &[u8], len: u64) -> Turns {
        let d = dir.index();
        let mut m = Turns::default();
        let client = dir == Direction::ClientToServer;
        // The end of a line begun in an earlier segment.
        let mut at = 0;
        let continued = self.mid_line[d];
        if continued {
            match head.iter().position(|&b| b == b'\n') {
                Some(end) => at = end + 1,
                None => at = head.len(),
            }
        }
        let only_continued = at == head.len();
        if continued {
            if client {
                m.continues = self.asking;
            } else {
                m.extends = self.answering;
            }
        }
        let (mut replies, mut pushes) = (false, false);
        while at < head.len() {
            let end = head[at..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(head.len(), |e| at + e + 1);
            let line = &head[at..end];
            at = end;
            let Some((prefix, command, params)) = parse(line) else {
                continue;
            };
            if client {
                // Messages to others and the answer to the server's PING
                // ask nothing, nor does IRCv3's end of negotiation.
                let quiet = ["PRIVMSG", "NOTICE", "PONG"]
                    .iter()
                    .any(|c| command.eq_ignore_ascii_case(c.as_bytes()))
                    || command.eq_ignore_ascii_case(b"CAP") && first_word_is(params, b"END");
                let asks = !quiet;
                // (Once registered, the nickname changes when the
                // server's echo says so: it may refuse the new one.)
                if command.eq_ignore_ascii_case(b"NICK") && self.nick.is_empty() {
                    self.set_nick(params);
                }
                self.asking = asks;
                if asks {
                    m.asks.get_or_insert(name(command));
                    self.open = (self.open + 1).min(MAX_OPEN);
                    self.answering = false;
                }
            } else if self.is_reply(prefix, command, params) {
                replies = true;
            } else {
                pushes = true;
            }
        }
        self.mid_line[d] = head.len() as u64 != len || head.last() != Some(&b'\n');
        if !client && !only_continued {
            if replies {
                if self.open > 0 {
                    self.open -= 1;
                    m.answers = true;
                    self.answering = true;
                } else if self.answering {
                    m.extends = true;
                }
            } else if pushes {
                self.answering = false;
            }
        }
        m
    }

    /// Whether a server line answers: a numeric reply, a PONG, the ERROR
    /// of a closing link, a capability or authentication step, or the
    /// echo of the client's own command.
    fn is_reply(&mut self, prefix: &[u8], command: &[u8], params: &[u8]) -> bool {
        if command.len() == 3 && command.iter().all(u8::is_ascii_digit) {
            // RPL_WELCOME names the nickname the client registered.
            if command == b"001" {
                self.set_nick(params);
            }
            return true;
        }
        let is = |c: &str| command.eq_ignore_ascii_case(c.as_bytes());
        if ["PONG", "ERROR", "CAP", "AUTHENTICATE"]
            .iter()
            .any(|c| is(c))
        {
            return true;
        }
        let own = {
            let nick = prefix.split(|&b| b == b'!').next().unwrap_or(prefix);
            !self.nick.is_empty() && nick.eq_ignore_ascii_case(&self.nick)
        };
        let echo = [
            "JOIN", "PART", "NICK", "MODE", "TOPIC", "KICK", "INVITE", "QUIT", "AWAY",
        ]
        .iter()
        .any(|c| is(c));
        if own && echo && is("NICK") {
            self.set_nick(params);
        }
        own && echo
    }

    /// Takes the first parameter as the client's nickname.
    fn set_nick(&mut self, params: &[u8]) {
        let word = params.split(|&b| b == b' ').next().unwrap_or_default();
        let word = word.strip_prefix(b":").unwrap_or(word);
        if !word.is_empty() && word.len() <= MAX_NICK && word != b"*" {
            self.nick.clear();
            self.nick.extend_from_slice(word);
        }
    }
}

/// A line's prefix (without its colon; empty if none), command and
/// parameters (without the line's end); `None` for an empty line.
fn parse(line: &[u8]) -> Option<(&[u8], &[u8], &[u8])> {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let (prefix, rest) = match line.strip_prefix(b":") {
        Some(p) => {
            let space = p.iter().position(|&b| b == b' ')?;
            (&p[..space], &p[space + 1..])
        }
        None => (&[][..], line),
    };
    let rest = rest.trim_ascii_start();
    let space = rest.iter().position(|&b| b == b' ').unwrap_or(rest.len());
    let (command, params) = (&rest[..space], rest.get(space + 1..).unwrap_or_default());
    (!command.is_empty()).then_some((prefix, command, params))
}

/// Whether `params` begins with the word `word` (any case).
fn first_word_is(params: &[u8], word: &[u8]) -> bool {
    params
        .split(|&b| b == b' ')
        .next()
        .is_some_and(|w| w.eq_ignore_ascii_case(word))
}

/// A command's name for a turn's label.
fn name(command: &[u8]) -> &'static str {
    COMMANDS
        .iter()
        .find(|c| command.eq_ignore_ascii_case(c.as_bytes()))
        .copied()
        .unwrap_or("command")
}

/// Whether a client's first data registers an IRC connection (see the
/// module's doc).
fn registers(head: &[u8]) -> bool {
    // (Most first data is no IRC: one byte says so, before any line is
    // parsed.)
    if !head
        .first()
        .is_some_and(|b| b"NUPCS".contains(&b.to_ascii_uppercase()))
    {
        return false;
    }
    let mut lines = head
        .split(|&b| b == b'\n')
        .filter_map(parse)
        .map(|(prefix, command, params)| (prefix.is_empty(), command, params));
    let registering = |(bare, command, params): (bool, &[u8], &[u8])| {
        let is = |c: &[u8]| command.eq_ignore_ascii_case(c);
        let words = || {
            params
                .split(|&b| b == b' ')
                .filter(|w| !w.is_empty())
                .count()
        };
        bare && (is(b"NICK") && words() >= 1
            || is(b"CAP") && first_word_is(params, b"LS")
            || is(b"SERVICE")
            || is(b"USER") && words() >= 4)
    };
    let Some(first) = lines.next() else {
        return false;
    };
    if first.0 && first.1.eq_ignore_ascii_case(b"PASS") {
        lines.any(registering)
    } else {
        registering(first)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Direction::{ClientToServer as C, ServerToClient as S};

    fn read(i: &mut Irc, dir: Direction, bytes: &[u8]) -> Turns {
        i.read(dir, bytes, bytes.len() as u64).expect("IRC")
    }

    /// sic's registration, answered by ngircd's welcome.
    fn registered() -> Irc {
        let mut i = Irc::default();
        let t = read(&mut i, C, b"NICK al\r\nUSER al localhost 10.81.2.1 :al\r\n");
        assert_eq!(t.asks, Some("NICK"));
        assert!(read(&mut i, S, b":irc.test 001 al :Welcome to the Internet Relay Network al!~al@10.81.1.1\r\n:irc.test 002 al :Your host\r\n").answers);
        // The rest of the welcome (the MOTD) in the next segment.
        let rest = read(&mut i, S, b":irc.test 375 al :- irc.test message of the day\r\n:irc.test 376 al :End of MOTD command\r\n");
        assert!(rest.answers || rest.extends);
        i
    }

    #[test]
    fn messages_and_pongs_ask_nothing_and_others_talk_answers_nothing() {
        let mut i = registered();
        assert_eq!(read(&mut i, C, b"JOIN #c\r\n").asks, Some("JOIN"));
        // The echo of its own JOIN and the names list answer it.
        assert!(read(&mut i, S, b":al!~al@10.81.1.1 JOIN :#c\r\n:irc.test 353 al = #c :@al\r\n:irc.test 366 al #c :End of NAMES list\r\n").answers);
        // Talk: its PRIVMSG asks nothing, another's answers nothing, nor
        // does the server's PING; its PONG asks nothing.
        assert_eq!(
            read(&mut i, C, b"PRIVMSG #c :hello 1\r\n"),
            Turns::default()
        );
        assert_eq!(
            read(&mut i, S, b":bob!~bob@10.81.1.1 PRIVMSG #c :hi\r\n"),
            Turns::default()
        );
        assert_eq!(read(&mut i, S, b"PING :irc.test\r\n"), Turns::default());
        assert_eq!(read(&mut i, C, b"PONG :irc.test\r\n"), Turns::default());
        assert_eq!(
            read(&mut i, S, b":bob!~bob@10.81.1.1 JOIN :#c\r\n"),
            Turns::default()
        );
        // A WHOIS is answered by its numerics, across two segments.
        assert_eq!(read(&mut i, C, b"WHOIS bob\r\n").asks, Some("WHOIS"));
        assert!(read(&mut i, S, b":irc.test 311 al bob ~bob 10.81.1.1 * :bob\r\n").answers);
        assert!(read(&mut i, S, b":irc.test 318 al bob :End of WHOIS list\r\n").extends);
        // A command the server does not know is answered by 421.
        assert_eq!(read(&mut i, C, b"q\r\n").asks, Some("command"));
        assert!(read(&mut i, S, b":irc.test 421 al q :Unknown command\r\n").answers);
        // QUIT, answered by the ERROR that closes the link.
        assert_eq!(read(&mut i, C, b"QUIT :bye\r\n").asks, Some("QUIT"));
        assert!(read(&mut i, S, b"ERROR :Closing connection\r\n").answers);
    }

    #[test]
    fn a_nick_change_is_followed_and_lines_across_segments_keep_their_meaning() {
        let mut i = registered();
        assert_eq!(read(&mut i, C, b"NICK al2\r\n").asks, Some("NICK"));
        assert!(read(&mut i, S, b":al!~al@h NICK :al2\r\n").answers);
        // Now al2's echo answers, al's would not.
        read(&mut i, C, b"PART #c\r\n");
        assert!(!read(&mut i, S, b":al!~al@h PART #c\r\n").answers);
        assert!(read(&mut i, S, b":al2!~al@h PART #c\r\n").answers);
        // A long PRIVMSG in two segments asks nothing in either; a WHOIS
        // begun at the end of a segment asks there and goes on.
        assert_eq!(read(&mut i, C, b"PRIVMSG #c :a long"), Turns::default());
        assert_eq!(read(&mut i, C, b" message\r\n"), Turns::default());
        assert_eq!(read(&mut i, C, b"WHOIS b").asks, Some("WHOIS"));
        assert!(read(&mut i, C, b"ob\r\n").continues);
        // Another's message split across segments answers nothing.
        assert!(read(&mut i, S, b":irc.test 311 al2 bob ~bob h * :bob\r\n").answers);
        assert_eq!(
            read(&mut i, S, b":bob!~b@h PRIVMSG #c :par"),
            Turns::default()
        );
        assert_eq!(read(&mut i, S, b"t two\r\n"), Turns::default());
        // A hole: the line it was in is unknown, the next one read.
        assert_eq!(i.read(S, &[], 40), Some(Turns::default()));
        assert_eq!(
            read(&mut i, S, b"end of it\r\nPING :x\r\n"),
            Turns::default()
        );
    }

    #[test]
    fn registration_names_irc_and_other_protocols_are_not() {
        for first in [
            &b"NICK al\r\nUSER al 0 * :Al\r\n"[..],
            b"CAP LS 302\r\nNICK al\r\nUSER al 0 * :Al\r\n",
            b"PASS secret\r\nNICK al\r\n",
            b"USER al 0 * :Al\r\n",
        ] {
            let mut i = Irc::default();
            assert!(i.read(C, first, first.len() as u64).is_some(), "{first:?}");
        }
        for first in [
            &b"USER anonymous\r\n"[..],
            b"PASS secret\r\n",
            b"GET / HTTP/1.1\r\n\r\n",
            b"EHLO client\r\n",
            b"a1 CAPABILITY\r\n",
            b":x NICK y\r\n",
        ] {
            let mut i = Irc::default();
            assert!(i.read(C, first, first.len() as u64).is_none(), "{first:?}");
            assert!(i.is_not());
        }
        // A server that greets first with a notice decides nothing;
        // another greeting (SMTP's, an HTTP response) is no IRC's.
        let mut i = Irc::default();
        let notice = b":irc.test NOTICE * :*** Looking up your hostname\r\n";
        assert!(i.read(S, notice, notice.len() as u64).is_none());
        assert!(!i.is_not());
        assert!(read(&mut i, C, b"NICK al\r\nUSER al 0 * :Al\r\n")
            .asks
            .is_some());
        let mut i = Irc::default();
        assert!(i.read(S, b"220 mail ESMTP\r\n", 16).is_none());
        assert!(i.is_not());
        // IRCv3: CAP LS is answered by CAP; CAP END asks nothing.
        let mut i = Irc::default();
        assert_eq!(
            read(&mut i, C, b"CAP LS 302\r\nNICK al\r\nUSER al 0 * :Al\r\n").asks,
            Some("CAP")
        );
        assert!(read(&mut i, S, b":irc.test CAP * LS :sasl\r\n").answers);
        assert_eq!(read(&mut i, C, b"CAP END\r\n"), Turns::default());
        assert!(read(&mut i, S, b":irc.test 001 al :Welcome\r\n").answers);
    }

    proptest::proptest! {
        #[test]
        fn any_stream_bytes_are_read_without_panicking(segments in crate::reader::any::segments()) {
            let mut i = Irc::default();
            i.read(C, b"NICK a\r\n", 8);
            crate::reader::any::feed(segments, |dir, bytes, len| {
                i.read(dir, bytes, len);
            });
            proptest::prop_assert!(i.is());
        }
    }
}
