//! Redis's protocol (RESP, the same in RESP2 and RESP3 for requests): a
//! client sends each command as an array of bulk strings,
//! `*<n>\r\n$<len>\r\n<name>\r\n$<len>\r\n<arg>\r\n...`. The command's
//! name labels an exchange (`GET`, `HSET`, `BLPOP`), never its arguments
//! (keys and values are the user's data).
//!
//! Some commands ask the server to hold its answer until something
//! happens: the blocking pops (`BLPOP`, `BRPOP`, `BLMOVE`, `BZPOPMIN`, ...)
//! answer when another client pushes to the list or their timeout ends,
//! `XREAD`/`XREADGROUP` with `BLOCK` when an entry is added to the stream.
//! The server's wait there is the client's request, not the server's
//! work: a queue consumer's idle time, counted idle by the ledger.
//!
//! A client that subscribes (`SUBSCRIBE`, `PSUBSCRIBE`, `SSUBSCRIBE`) is
//! sent every message published to its channels the moment another client
//! publishes it: `*3 message <channel> <payload>` (`pmessage`, `smessage`)
//! in RESP2, any RESP3 push (`>`: those and the invalidations of client
//! side caching). Pushes answer no command of the subscriber's, nor are
//! they the rest of one's answer ([`Pushes`]).

/// The commands that block until another client's write or their own
/// timeout (Redis's `@blocking` category, less `WAIT`/`WAITAOF`, whose
/// wait is for the replicas' acknowledgment: replication latency, which
/// the client pays; and less `XREAD`/`XREADGROUP`, which block only with
/// `BLOCK`).
const BLOCKING: &[&str] = &[
    "BLPOP",
    "BRPOP",
    "BRPOPLPUSH",
    "BLMOVE",
    "BLMPOP",
    "BZPOPMIN",
    "BZPOPMAX",
    "BZMPOP",
];

/// The commands that put a connection in pub/sub mode (RESP2): the
/// server's arrays that begin with `message`, `pmessage` or `smessage` are
/// pushes from then on.
const SUBSCRIBING: &[&str] = &["SUBSCRIBE", "PSUBSCRIBE", "SSUBSCRIBE"];

/// The first element of a RESP2 pub/sub push.
const PUSH_KINDS: &[&[u8]] = &[b"message", b"pmessage", b"smessage"];

/// A command as a client sent it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Command {
    /// The command's name in capitals.
    pub name: String,
    /// The command holds its answer until another client writes or its
    /// timeout ends.
    pub blocks: bool,
    /// The command subscribes the connection to published messages.
    pub subscribes: bool,
}

/// A RESP connection's server data, read for pushes: followed across
/// segments by the lengths of the pushes.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Pushes {
    /// The client subscribed (RESP2's pushes are known from then on).
    pub subscribed: bool,
    /// Bytes of a push under way still to come.
    rest: u64,
}

impl Pushes {
    /// The capture missed some of the server's bytes: a push under way
    /// can no longer be followed.
    pub(crate) fn lost(&mut self) {
        self.rest = 0;
    }

    /// Whether the server's segment (`head` captured, `len` in all) holds
    /// pushes and nothing else: the rest of one under way, then whole
    /// ones. A segment with anything else in it (an answer after a push)
    /// is not, and neither is one the captured bytes cannot tell.
    pub(crate) fn only_pushes(&mut self, head: &[u8], len: u64) -> bool {
        let mut at = self.rest.min(len);
        self.rest -= at;
        let pushed = at > 0;
        if at == len {
            return pushed;
        }
        while at < len {
            let Some(size) = head
                .get(at as usize..)
                .and_then(|b| push(b, self.subscribed))
            else {
                self.rest = 0;
                return false;
            };
            if at + size > len {
                self.rest = at + size - len;
            }
            at += size;
        }
        true
    }
}

/// The size of the push `bytes` begins with (known from its elements'
/// headers, however much of it was captured), or None when it begins
/// with no push: a RESP3 push (`>`), or, once `subscribed`, a RESP2 array
/// whose first element is `message`, `pmessage` or `smessage`.
fn push(bytes: &[u8], subscribed: bool) -> Option<u64> {
    let mut rest = match bytes.first()? {
        b'>' => &bytes[1..],
        b'*' if subscribed => &bytes[1..],
        _ => return None,
    };
    let resp3 = bytes[0] == b'>';
    let count = number(&mut rest)?;
    let mut size = (bytes.len() - rest.len()) as u64;
    for i in 0..count {
        let (element, kind) = element_size(rest)?;
        if i == 0 && !resp3 && !kind.is_some_and(|k| PUSH_KINDS.contains(&k)) {
            return None;
        }
        size += element;
        rest = rest.get(element as usize..).unwrap_or(&[]);
    }
    Some(size)
}

/// The size of the element `bytes` begins with, and its bytes when it is
/// a bulk string captured whole: a bulk string (`$<len>`, its body maybe
/// beyond the capture), a null (`_`, `$-1`, `*-1`), an integer (`:`), or
/// an array of bulk strings (a RESP3 invalidation's keys).
fn element_size(bytes: &[u8]) -> Option<(u64, Option<&[u8]>)> {
    let line = bytes.windows(2).take(24).position(|w| w == b"\r\n")? as u64 + 2;
    match bytes.first()? {
        b'_' | b':' => Some((line, None)),
        b'$' | b'*' if bytes.get(1) == Some(&b'-') => Some((line, None)),
        b'$' => {
            let mut after = &bytes[1..];
            let len = number(&mut after)? as u64;
            let body = after.get(..len as usize);
            Some((line + len + 2, body))
        }
        b'*' => {
            let mut after = &bytes[1..];
            let count = number(&mut after)?;
            let mut size = line;
            for _ in 0..count {
                if after.first() != Some(&b'$') {
                    return None;
                }
                let (element, _) = element_size(after)?;
                size += element;
                after = after.get(element as usize..)?;
            }
            Some((size, None))
        }
        _ => None,
    }
}

/// The longest command name read (Redis's longest, `GEORADIUSBYMEMBER_RO`,
/// has 20 characters).
const LONGEST_NAME: usize = 24;

/// The RESP command that `head` (the start of a client's data) begins
/// with, or None when it is no RESP array of bulk strings whose first is
/// a command's name (letters, and `_` or `-`).
pub(crate) fn command(head: &[u8]) -> Option<Command> {
    let mut rest = head.strip_prefix(b"*")?;
    let count = number(&mut rest)?;
    if count == 0 {
        return None;
    }
    let name = bulk(&mut rest)?;
    if name.is_empty()
        || name.len() > LONGEST_NAME
        || !name.first()?.is_ascii_alphabetic()
        || !name
            .iter()
            .all(|b| b.is_ascii_alphabetic() || *b == b'_' || *b == b'-')
    {
        return None;
    }
    let name = String::from_utf8_lossy(name).to_ascii_uppercase();
    let blocks = BLOCKING.contains(&name.as_str())
        || (matches!(name.as_str(), "XREAD" | "XREADGROUP")
            // `BLOCK` among the options, before `STREAMS` (after it come
            // the keys, which may be called anything): the arguments the
            // captured bytes show.
            && (1..count)
                .map_while(|_| bulk(&mut rest))
                .take_while(|a| !a.eq_ignore_ascii_case(b"STREAMS"))
                .any(|a| a.eq_ignore_ascii_case(b"BLOCK")));
    let subscribes = SUBSCRIBING.contains(&name.as_str());
    Some(Command {
        name,
        blocks,
        subscribes,
    })
}

/// A decimal number ending in CRLF, from the start of `rest` (past it).
fn number(rest: &mut &[u8]) -> Option<usize> {
    let end = rest.windows(2).take(12).position(|w| w == b"\r\n")?;
    let digits = std::str::from_utf8(&rest[..end]).ok()?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n = digits.parse().ok()?;
    *rest = &rest[end + 2..];
    Some(n)
}

/// A bulk string, `$<len>\r\n<bytes>\r\n`, from the start of `rest`
/// (past it), when the captured bytes hold all of it.
fn bulk<'a>(rest: &mut &'a [u8]) -> Option<&'a [u8]> {
    let mut after = rest.strip_prefix(b"$")?;
    let len = number(&mut after)?;
    let body = after.get(..len)?;
    if after.get(len..len + 2)? != b"\r\n" {
        return None;
    }
    *rest = &after[len + 2..];
    Some(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resp(args: &[&str]) -> Vec<u8> {
        let mut out = format!("*{}\r\n", args.len()).into_bytes();
        for a in args {
            out.extend(format!("${}\r\n{a}\r\n", a.len()).bytes());
        }
        out
    }

    fn named(head: &[u8]) -> Option<(String, bool)> {
        command(head).map(|c| (c.name, c.blocks))
    }

    #[test]
    fn a_command_is_named_by_its_name_never_by_its_arguments() {
        assert_eq!(
            named(&resp(&["set", "user:1", "secret"])),
            Some(("SET".into(), false))
        );
        assert_eq!(named(&resp(&["GET", "k"])), Some(("GET".into(), false)));
        assert_eq!(named(&resp(&["PING"])), Some(("PING".into(), false)));
        // Pipelined: the first command names the segment.
        let mut two = resp(&["INCR", "a"]);
        two.extend(resp(&["GET", "a"]));
        assert_eq!(named(&two), Some(("INCR".into(), false)));
    }

    /// A RESP2 array of bulk strings, as a server sends it.
    fn array(items: &[&str]) -> Vec<u8> {
        resp(items)
    }

    #[test]
    fn a_subscriber_is_pushed_messages_that_answer_nothing() {
        assert!(command(&resp(&["SUBSCRIBE", "news"])).unwrap().subscribes);
        assert!(command(&resp(&["psubscribe", "n*"])).unwrap().subscribes);
        assert!(
            !command(&resp(&["PUBLISH", "news", "x"]))
                .unwrap()
                .subscribes
        );
        let mut p = Pushes {
            subscribed: true,
            ..Pushes::default()
        };
        let only = |p: &mut Pushes, b: &[u8]| p.only_pushes(b, b.len() as u64);
        // The subscription's confirmation and a pong answer; messages are
        // pushed.
        assert!(!only(&mut p, &array(&["subscribe", "news"])));
        assert!(only(&mut p, &array(&["message", "news", "item 0"])));
        assert!(only(&mut p, &array(&["pmessage", "n*", "news", "x"])));
        assert!(!only(&mut p, &array(&["pong", ""])));
        // Two pushes in a segment; a push, then the answer to a PING.
        let mut two = array(&["message", "news", "a"]);
        two.extend(array(&["message", "news", "b"]));
        assert!(only(&mut p, &two));
        let mut then = array(&["message", "news", "a"]);
        then.extend(array(&["pong", ""]));
        assert!(!only(&mut p, &then));
        // A large message over three segments, then an answer.
        let big = array(&["message", "news", &"x".repeat(5000)]);
        assert!(only(&mut p, &big[..1448]));
        assert!(only(&mut p, &big[1448..2896]));
        let mut tail = big[2896..].to_vec();
        assert!(only(&mut p, &tail));
        tail = b"$-1\r\n".to_vec();
        assert!(!only(&mut p, &tail));
        // Captured short: the lengths still tell where it ends.
        assert!(p.only_pushes(&big[..40], big.len() as u64));
        assert!(!only(&mut p, b"+OK\r\n"));
        // Before any subscription, an array that begins with "message" is
        // an answer (LRANGE of a list holding that word).
        let mut fresh = Pushes::default();
        assert!(!only(&mut fresh, &array(&["message", "a", "b"])));
        // RESP3's pushes are pushes on any connection: a message, an
        // invalidation of client-side caching.
        assert!(only(
            &mut fresh,
            b">3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$1\r\nx\r\n"
        ));
        assert!(only(
            &mut fresh,
            b">2\r\n$10\r\ninvalidate\r\n*1\r\n$3\r\nkey\r\n"
        ));
        assert!(only(&mut fresh, b">2\r\n$10\r\ninvalidate\r\n_\r\n"));
    }

    #[test]
    fn blocking_commands_ask_the_server_to_wait() {
        assert_eq!(
            named(&resp(&["BLPOP", "jobs", "5"])),
            Some(("BLPOP".into(), true))
        );
        assert_eq!(
            named(&resp(&["bzpopmin", "z", "0"])),
            Some(("BZPOPMIN".into(), true))
        );
        assert_eq!(
            named(&resp(&[
                "XREAD", "COUNT", "1", "BLOCK", "0", "STREAMS", "s", "$"
            ])),
            Some(("XREAD".into(), true))
        );
        assert_eq!(
            named(&resp(&[
                "XREADGROUP",
                "GROUP",
                "g",
                "c",
                "block",
                "100",
                "STREAMS",
                "s",
                ">"
            ])),
            Some(("XREADGROUP".into(), true))
        );
        // Without BLOCK an XREAD answers at once, whatever its keys are
        // called.
        assert_eq!(
            named(&resp(&["XREAD", "STREAMS", "BLOCK", "0"])),
            Some(("XREAD".into(), false))
        );
        // WAIT waits for replicas: replication latency, not an event.
        assert_eq!(
            named(&resp(&["WAIT", "1", "0"])),
            Some(("WAIT".into(), false))
        );
    }

    #[test]
    fn other_bytes_are_no_command() {
        assert_eq!(named(b"GET / HTTP/1.1\r\n"), None);
        assert_eq!(named(b"PING\r\n"), None); // inline: any text protocol's
        assert_eq!(named(b"*0\r\n"), None);
        assert_eq!(named(b"*1\r\n$3\r\nGE"), None); // cut by the snap length
        assert_eq!(named(b"*1\r\n$3\r\nGETX\r\n"), None);
        assert_eq!(named(&resp(&["12", "a"])), None);
        assert_eq!(named(&resp(&["a b"])), None);
        assert_eq!(named(b"*1\r\n$-1\r\n"), None);
        assert_eq!(named(b"*99999999999999999999\r\n"), None);
        assert_eq!(named(b"*"), None);
        assert_eq!(named(b""), None);
    }

    proptest::proptest! {
        #[test]
        fn any_bytes_are_read_without_panicking_and_a_name_is_a_word(
            head in proptest::collection::vec(proptest::num::u8::ANY, 0..96),
            array in proptest::collection::vec("[A-Za-z0-9 $*\\r\\n-]{0,12}", 0..5),
        ) {
            // Arbitrary bytes, and RESP-looking ones (a header, then
            // bulk strings made of the characters that matter).
            let mut resp = format!("*{}\r\n", array.len()).into_bytes();
            for a in &array {
                resp.extend(format!("${}\r\n{a}\r\n", a.len()).bytes());
            }
            for bytes in [&head[..], &resp[..]] {
                if let Some(c) = command(bytes) {
                    proptest::prop_assert!(c.name.len() <= LONGEST_NAME);
                    proptest::prop_assert!(c.name.bytes().all(|b| b.is_ascii_uppercase() || b == b'_' || b == b'-'));
                }
                // Read for pushes, whole and cut anywhere.
                let mut p = Pushes { subscribed: true, ..Pushes::default() };
                p.only_pushes(bytes, bytes.len() as u64);
                let cut = bytes.len() / 2;
                p.only_pushes(&bytes[..cut], bytes.len() as u64 + 7);
            }
            let mut p = Pushes { subscribed: true, ..Pushes::default() };
            let mut pushed = b">".to_vec();
            pushed.extend_from_slice(&resp[1..]);
            for bytes in [&resp[..], &pushed[..]] {
                p.only_pushes(bytes, bytes.len() as u64);
            }
        }
    }
}
