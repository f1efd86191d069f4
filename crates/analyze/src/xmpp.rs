//! XMPP's client streams (RFC 6120; prosody, ejabberd, Openfire and
//! their clients), in the clear: which stanzas ask, which answer, and
//! which the server sends on its own.
//!
//! A client's stream carries its chat messages and presence, which the
//! server passes on to others and answers nothing, and its IQs, which are
//! answered by an IQ with the same id. The server sends the others'
//! messages and presence the moment they send them. Read as turns, a
//! user's reply "asked" and the other user's next message "answered": the
//! other's pauses were the server's think time (prosody with slixmpp, a
//! message every 1.2 s answered at once by the other user: 2.3 s of
//! `server_think_time` on one connection, and the other user's time to
//! reply as the server's on the other). The top-level elements say what
//! asks:
//!
//! | client sends                                | answered by              |
//! |---------------------------------------------|--------------------------|
//! | its stream header (`<stream:stream`)        | the server's             |
//! | `<auth>`, `<response>` (SASL)               | `<challenge>`, `<success>`, `<failure>` |
//! | `<starttls>`                                | `<proceed>`, `<failure>` |
//! | `<iq type='get'|'set' id='X'>`              | `<iq type='result'|'error' id='X'>` |
//! | `<enable>`, `<resume>` (XEP-0198)           | `<enabled>`, `<resumed>`, `<failed>` |
//! | `<r>` (XEP-0198)                            | `<a>`                    |
//! | `</stream:stream>`                          | the server's             |
//!
//! Everything else asks nothing (`<message>`, `<presence>`, an IQ result,
//! `<a>`); the server's messages, presence and IQs of its own answer
//! nothing. A connection is XMPP's when the client's first data is an XML
//! declaration or a stream header with `jabber:client`. Elements are
//! found by their tags, followed across segments (a tag a segment's end
//! cut is kept, up to a bound); after a hole, reading resumes at a
//! segment that begins with a tag.

use crate::exchange::Turns;
use crate::reader::Reading;
use crate::Direction;

/// A tag longer than this is not followed across segments (a stream
/// header is a few hundred bytes).
const MAX_TAG: usize = 4096;
/// Questions open at once are bounded; a forgotten one only leaves its
/// turn unanswered.
const MAX_AWAITED: usize = 32;

/// One connection's XMPP reading (crate::reader).
pub(crate) type Xmpp = Reading<State>;

/// What a question awaits.
#[derive(Debug, Clone, PartialEq)]
enum Awaited {
    /// The server's stream header.
    Stream,
    /// The server's closing tag.
    Close,
    /// Elements of these names.
    Elements(&'static [&'static [u8]]),
    /// An IQ result or error with this id.
    Iq(Box<[u8]>),
}

/// One direction's place in its stream.
#[derive(Debug, Clone, Default)]
struct Side {
    /// Elements open: 1 inside the stream, more inside a stanza.
    depth: u32,
    /// The start of a tag a segment's end cut.
    partial: Vec<u8>,
    /// Inside a tag cut by a segment's end (`partial` holds it).
    in_tag: bool,
    /// Lost in a hole until a segment begins with a tag.
    lost: bool,
}

/// What an XMPP connection's reading keeps.
#[derive(Debug, Clone, Default)]
pub struct State {
    sides: [Side; 2],
    /// The client's stanza under way asks (its later segments go on).
    asking: bool,
    /// The server's stanza under way answers.
    answering: bool,
    /// The client's open questions, oldest first.
    awaited: Vec<Awaited>,
}

impl Xmpp {
    /// Reads a segment's stream bytes (`head` captured, `len` in all,
    /// which includes bytes the capture missed); `None` when the
    /// connection is not XMPP's.
    pub(crate) fn read(&mut self, dir: Direction, head: &[u8], len: u64) -> Option<Turns> {
        let state = self.state(|| {
            let start = head.trim_ascii_start();
            let opens = start.starts_with(b"<?xml") || start.starts_with(b"<stream:stream");
            let client_stream = head.windows(13).any(|w| w == b"jabber:client");
            Some(dir == Direction::ClientToServer && opens && client_stream)
        })?;
        Some(state.read(dir, head, len))
    }
}

impl State {
    fn read(&mut self, dir: Direction, head: &[u8], len: u64) -> Turns {
        let client = dir == Direction::ClientToServer;
        let mut m = Turns::default();
        let d = dir.index();
        if self.sides[d].lost {
            if !head.trim_ascii_start().starts_with(b"<") {
                return m;
            }
            self.sides[d] = Side {
                depth: 1,
                ..Side::default()
            };
        }
        let mut first = true;
        let mut at = 0;
        if self.sides[d].in_tag {
            // The rest of a tag a segment's end cut.
            match head.iter().position(|&b| b == b'>') {
                Some(end) if self.sides[d].partial.len() + end < MAX_TAG => {
                    let mut tag = std::mem::take(&mut self.sides[d].partial);
                    tag.extend_from_slice(&head[..=end]);
                    self.sides[d].in_tag = false;
                    self.tag(dir, &tag, &mut m, &mut first);
                    at = end + 1;
                }
                _ => {
                    self.sides[d].lost = true;
                    return m;
                }
            }
        }
        while let Some(open) = head[at..].iter().position(|&b| b == b'<') {
            if first && open > 0 && self.sides[d].depth > 1 {
                // Text of a stanza begun before.
                self.continues(client, &mut m);
                first = false;
            }
            let start = at + open;
            match tag_end(&head[start..]) {
                Some(end) => {
                    let tag = &head[start..start + end + 1];
                    self.tag(dir, tag, &mut m, &mut first);
                    at = start + end + 1;
                }
                None => {
                    first = false;
                    let side = &mut self.sides[d];
                    if head.len() - start < MAX_TAG {
                        side.partial = head[start..].to_vec();
                        side.in_tag = true;
                    } else {
                        side.lost = true;
                    }
                    break;
                }
            }
        }
        if first && !head.is_empty() && self.sides[d].depth > 1 {
            // Text alone: the rest of a stanza.
            self.continues(client, &mut m);
        }
        if (head.len() as u64) < len {
            // A hole: what it held is unknown.
            self.sides[d].lost = true;
            self.sides[d].in_tag = false;
            self.sides[d].partial.clear();
            if head.is_empty() {
                self.continues(client, &mut m);
            }
        }
        m
    }

    /// The segment went on with the stanza under way.
    fn continues(&self, client: bool, m: &mut Turns) {
        if client {
            m.continues |= self.asking;
        } else {
            m.extends |= self.answering;
        }
    }

    /// One whole tag (`<` to `>`).
    fn tag(&mut self, dir: Direction, tag: &[u8], m: &mut Turns, first: &mut bool) {
        let d = dir.index();
        let client = dir == Direction::ClientToServer;
        if tag.starts_with(b"<?") || tag.starts_with(b"<!") {
            return;
        }
        if let Some(name) = tag.strip_prefix(b"</") {
            if name.starts_with(b"stream:stream") {
                self.sides[d].depth = 0;
                *first = false;
                self.top_level(client, b"/stream:stream", tag, m);
                return;
            }
            let side = &mut self.sides[d];
            side.depth = side.depth.saturating_sub(1);
            if *first && side.depth >= 1 {
                self.continues(client, m);
                *first = false;
            }
            return;
        }
        let name = element_name(tag);
        if name == b"stream:stream" {
            self.sides[d].depth = 1;
            *first = false;
            self.top_level(client, name, tag, m);
            return;
        }
        let closed = tag.ends_with(b"/>");
        let depth = self.sides[d].depth;
        if depth <= 1 {
            *first = false;
            self.top_level(client, name, tag, m);
        } else if *first {
            self.continues(client, m);
            *first = false;
        }
        if !closed {
            self.sides[d].depth = depth.max(1) + 1;
        }
    }

    /// A top-level element's start (or the stream's header or close).
    fn top_level(&mut self, client: bool, name: &[u8], tag: &[u8], m: &mut Turns) {
        if client {
            let question = match name {
                b"stream:stream" => Some(("stream", Awaited::Stream)),
                b"/stream:stream" => Some(("close", Awaited::Close)),
                b"auth" | b"response" => Some((
                    "auth",
                    Awaited::Elements(&[b"challenge", b"success", b"failure"]),
                )),
                b"starttls" => Some(("starttls", Awaited::Elements(&[b"proceed", b"failure"]))),
                b"enable" | b"resume" => Some((
                    "enable",
                    Awaited::Elements(&[b"enabled", b"resumed", b"failed"]),
                )),
                b"r" => Some(("r", Awaited::Elements(&[b"a"]))),
                b"iq" => match (attribute(tag, b"type"), attribute(tag, b"id")) {
                    (Some(b"get"), Some(id)) => Some(("iq get", Awaited::Iq(id.into()))),
                    (Some(b"set"), Some(id)) => Some(("iq set", Awaited::Iq(id.into()))),
                    _ => None,
                },
                _ => None,
            };
            self.asking = question.is_some();
            if let Some((label, awaited)) = question {
                m.asks.get_or_insert(label);
                crate::reader::push_bounded(&mut self.awaited, awaited, MAX_AWAITED);
            }
            return;
        }
        let i = self.awaited.iter().position(|a| match a {
            Awaited::Stream => name == b"stream:stream",
            Awaited::Close => name == b"/stream:stream",
            Awaited::Elements(names) => names.contains(&name),
            Awaited::Iq(id) => {
                name == b"iq"
                    && matches!(attribute(tag, b"type"), Some(b"result" | b"error"))
                    && attribute(tag, b"id") == Some(&**id)
            }
        });
        self.answering = i.is_some();
        if let Some(i) = i {
            self.awaited.remove(i);
            m.answers = true;
        }
    }
}

/// Where the tag beginning at `bytes[0]` (a `<`) ends (its `>`), quoted
/// attribute values skipped; `None` when the bytes end first.
fn tag_end(bytes: &[u8]) -> Option<usize> {
    let mut quote = None;
    for (i, &b) in bytes.iter().enumerate().skip(1) {
        match (quote, b) {
            (None, b'"' | b'\'') => quote = Some(b),
            (Some(q), _) if b == q => quote = None,
            (None, b'>') => return Some(i),
            _ => {}
        }
    }
    None
}

/// A start tag's element name (`<iq id=...>`: `iq`).
fn element_name(tag: &[u8]) -> &[u8] {
    let body = &tag[1..];
    let end = body
        .iter()
        .position(|&b| b.is_ascii_whitespace() || b == b'/' || b == b'>')
        .unwrap_or(body.len());
    &body[..end]
}

/// The value of attribute `name` in a start tag, quoted either way.
fn attribute<'a>(tag: &'a [u8], name: &[u8]) -> Option<&'a [u8]> {
    let mut at = 0;
    while let Some(i) = tag[at..]
        .windows(name.len() + 1)
        .position(|w| w[..name.len()] == *name && w[name.len()] == b'=')
    {
        let start = at + i;
        let before = start.checked_sub(1).map(|p| tag[p]);
        let value_at = start + name.len() + 1;
        if before.is_some_and(|b| b.is_ascii_whitespace()) {
            let q = *tag.get(value_at)?;
            if q == b'"' || q == b'\'' {
                let rest = &tag[value_at + 1..];
                let end = rest.iter().position(|&b| b == q)?;
                return Some(&rest[..end]);
            }
        }
        at = value_at;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use Direction::{ClientToServer as C, ServerToClient as S};

    fn read(x: &mut Xmpp, dir: Direction, bytes: &[u8]) -> Turns {
        x.read(dir, bytes, bytes.len() as u64).expect("XMPP")
    }

    const CLIENT_STREAM: &[u8] = b"<stream:stream to='rttdoc.test' xmlns:stream='http://etherx.jabber.org/streams' xmlns='jabber:client' version='1.0'>";
    const SERVER_STREAM: &[u8] = b"<?xml version='1.0'?><stream:stream from='rttdoc.test' xmlns='jabber:client' id='s1' version='1.0'><stream:features><mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><mechanism>PLAIN</mechanism></mechanisms></stream:features>";

    /// slixmpp's start against prosody: stream, auth, stream again, bind.
    fn bound() -> Xmpp {
        let mut x = Xmpp::default();
        assert_eq!(read(&mut x, C, CLIENT_STREAM).asks, Some("stream"));
        assert!(x.is());
        assert!(read(&mut x, S, SERVER_STREAM).answers);
        let auth =
            b"<auth xmlns=\"urn:ietf:params:xml:ns:xmpp-sasl\" mechanism=\"PLAIN\">AGFsaWNl</auth>";
        assert_eq!(read(&mut x, C, auth).asks, Some("auth"));
        assert!(
            read(
                &mut x,
                S,
                b"<success xmlns='urn:ietf:params:xml:ns:xmpp-sasl'/>"
            )
            .answers
        );
        assert_eq!(read(&mut x, C, CLIENT_STREAM).asks, Some("stream"));
        assert!(read(&mut x, S, SERVER_STREAM).answers);
        let bind = b"<iq id=\"b1\" type=\"set\"><bind xmlns=\"urn:ietf:params:xml:ns:xmpp-bind\"><resource>lab</resource></bind></iq>";
        assert_eq!(read(&mut x, C, bind).asks, Some("iq set"));
        assert!(
            read(
                &mut x,
                S,
                b"<iq id='b1' type='result'><bind><jid>a@x/lab</jid></bind></iq>"
            )
            .answers
        );
        x
    }

    #[test]
    fn chat_messages_and_presence_ask_nothing_and_answer_nothing() {
        let mut x = bound();
        assert_eq!(read(&mut x, C, b"<presence id=\"p1\" />"), Turns::default());
        assert_eq!(
            read(&mut x, S, b"<presence from='a@x/lab' id='p1'/>"),
            Turns::default()
        );
        // Another user's message, and this user's reply: no turn.
        let pushed =
            b"<message from='b@x/lab' to='a@x/lab' type='chat' id='m1'><body>hi</body></message>";
        assert_eq!(read(&mut x, S, pushed), Turns::default());
        let reply = b"<message to=\"b@x/lab\" type=\"chat\" id=\"m2\"><body>hello</body></message>";
        assert_eq!(read(&mut x, C, reply), Turns::default());
        assert_eq!(read(&mut x, S, pushed), Turns::default());
        // A ping is answered by its IQ result, not by a message between.
        let ping = b"<iq id=\"ping1\" type=\"get\" to=\"x\"><ping xmlns=\"urn:xmpp:ping\"/></iq>";
        assert_eq!(read(&mut x, C, ping).asks, Some("iq get"));
        assert!(!read(&mut x, S, pushed).answers);
        assert!(!read(&mut x, S, b"<iq id='other' type='result'/>").answers);
        assert!(read(&mut x, S, b"<iq type=\"result\" id=\"ping1\" from='x'/>").answers);
        // The close is answered by the server's.
        assert_eq!(read(&mut x, C, b"</stream:stream>").asks, Some("close"));
        assert!(read(&mut x, S, b"</stream:stream>").answers);
    }

    #[test]
    fn tags_across_segments_and_holes() {
        let mut x = bound();
        let ping = b"<iq id='p2' type='get'><ping xmlns='urn:xmpp:ping'/></iq>";
        assert_eq!(read(&mut x, C, &ping[..7]), Turns::default());
        assert_eq!(read(&mut x, C, &ping[7..]).asks, Some("iq get"));
        // A large answer: its later segments go on with it.
        let big = [
            b"<iq id='p2' type='result'><query>".as_slice(),
            &[b'x'; 3000],
            b"</query></iq>",
        ]
        .concat();
        assert!(read(&mut x, S, &big[..1448]).answers);
        assert!(read(&mut x, S, &big[1448..2896]).extends);
        // A hole: lost until a segment begins with a tag.
        assert_eq!(
            x.read(S, &[], 500,),
            Some(Turns {
                extends: true,
                ..Turns::default()
            })
        );
        assert_eq!(read(&mut x, S, b"xx</body></message>"), Turns::default());
        assert_eq!(
            read(&mut x, C, b"<iq id='p3' type='get'/>").asks,
            Some("iq get")
        );
        assert!(read(&mut x, S, b"<iq id='p3' type='result'/>").answers);
    }

    #[test]
    fn only_a_clients_jabber_stream_decides() {
        for (dir, first, is) in [
            (C, CLIENT_STREAM, true),
            (
                C,
                &b"<?xml version='1.0'?><stream:stream xmlns='jabber:client'>"[..],
                true,
            ),
            (C, b"<stream:stream xmlns='jabber:server'>", false),
            (S, SERVER_STREAM, false),
            (C, b"<html>", false),
        ] {
            let mut x = Xmpp::default();
            x.read(dir, first, first.len() as u64);
            assert_eq!(x.is(), is, "{first:?}");
        }
    }

    #[test]
    fn attributes_are_read_quoted_either_way() {
        let tag = b"<iq xml:id='no' id=\"a'1\" type='get'>";
        assert_eq!(attribute(tag, b"id"), Some(&b"a'1"[..]));
        assert_eq!(attribute(tag, b"type"), Some(&b"get"[..]));
        assert_eq!(attribute(tag, b"to"), None);
        assert_eq!(tag_end(b"<a b='>'>x"), Some(8));
        assert_eq!(element_name(b"<presence/>"), b"presence");
    }

    proptest::proptest! {
        #[test]
        fn any_stream_bytes_are_read_without_panicking(segments in crate::reader::any::segments()) {
            let mut x = bound();
            crate::reader::any::feed(segments, |dir, bytes, len| {
                x.read(dir, bytes, len);
            });
            proptest::prop_assert!(x.is());
        }
    }
}
