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

/// A command as a client sent it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Command {
    /// The command's name in capitals.
    pub name: String,
    /// The command holds its answer until another client writes or its
    /// timeout ends.
    pub blocks: bool,
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
    Some(Command { name, blocks })
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
            }
        }
    }
}
