//! Plaintext preambles before TLS: proxies (HTTP `CONNECT`, SOCKS4/4a/5),
//! STARTTLS upgrades (SMTP, FTP `AUTH TLS`, POP3 `STLS`, IMAP, XMPP, LDAP)
//! and database SSL requests (PostgreSQL `SSLRequest`, MySQL SSL request).
//!
//! Each protocol is recognised from its mechanism: what each side sends, in
//! what order, and where its part of the plaintext ends. The connection is
//! called TLS only when a TLS handshake record carrying a ClientHello starts
//! exactly where the client's part ended, and the server's next bytes (if
//! any) are a TLS record too; anything else stays plaintext. The judge is a
//! pure function of the two byte streams, re-run as bytes arrive, over at
//! most [`MAX_PREAMBLE_BYTES`]: past that, the connection stays plaintext.

use crate::connection::Stamp;
use crate::model::Direction;

/// Bytes of both directions looked at before giving up (a STARTTLS dialog
/// is a few hundred bytes; a ClientHello with post-quantum key shares ~2 KB).
pub const MAX_PREAMBLE_BYTES: usize = 16 * 1024;

/// Segments held before giving up: a STARTTLS dialog takes a dozen; the
/// judge re-reads the held bytes on each, so this bounds its work too.
pub const MAX_PREAMBLE_SEGMENTS: usize = 64;

/// Largest plaintext TLS record body (RFC 8446 5.1).
const MAX_PLAINTEXT_RECORD: usize = 1 << 14;

/// How TLS was reached (the vocabulary's [`PreambleKind`]).
pub use crate::model::PreambleKind as Kind;

/// Where TLS starts in each direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Start {
    pub kind: Kind,
    /// Stream offset of the ClientHello's record (client -> server).
    pub client_offset: usize,
    /// Stream offset of the server's first TLS byte (server -> client).
    pub server_offset: usize,
    /// Server answers the client had to wait for before its ClientHello:
    /// one round trip each (a server-first greeting counts: the client
    /// cannot speak before it arrives, 1 RTT after its handshake ACK).
    pub round_trips: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Could still go either way: more bytes needed.
    Undecided,
    Tls(Start),
    /// TLS from the first byte, in a form only the server's answer could
    /// confirm (an SSL 2.0-format ClientHello, which Skype's own protocol
    /// imitates): no preamble.
    TlsFromStart,
    Plain,
}

/// Judges the two streams (client -> server, server -> client) as seen so
/// far. `server_first`: the server's bytes came before any client byte.
/// `at_end`: no more bytes will come (the connection is being reported).
pub fn judge(client: &[u8], server: &[u8], server_first: bool, at_end: bool) -> Verdict {
    let v = judge_open(client, server, server_first);
    match v {
        Verdict::Undecided if at_end => at_end_verdict(client, server, server_first),
        v => v,
    }
}

/// At the end of the capture: TLS if the preamble completed and the
/// ClientHello header is there, even with no server answer captured.
fn at_end_verdict(client: &[u8], server: &[u8], server_first: bool) -> Verdict {
    match recognise(client, server, server_first) {
        Some(Ok((kind, c, s, rt))) if client_hello_at(client, c) == Some(true) => {
            if server.len() == s {
                Verdict::Tls(Start {
                    kind,
                    client_offset: c,
                    server_offset: s,
                    round_trips: rt,
                })
            } else {
                Verdict::Plain
            }
        }
        _ => Verdict::Plain,
    }
}

fn judge_open(client: &[u8], server: &[u8], server_first: bool) -> Verdict {
    if client.len() + server.len() > MAX_PREAMBLE_BYTES {
        return Verdict::Plain;
    }
    if !server_first && rttdoc_wire::tls::sslv2_client_hello(client).is_some() {
        // TLS offered in SSL 2.0's hello format: TLS if the server answers
        // with a TLS record (its ServerHello, or an alert).
        return match answers_tls(server) {
            Some(true) => Verdict::TlsFromStart,
            Some(false) => Verdict::Plain,
            None => Verdict::Undecided,
        };
    }
    let (kind, c, s, rt) = match recognise(client, server, server_first) {
        None => return Verdict::Plain,
        Some(Err(())) => return Verdict::Undecided,
        Some(Ok(x)) => x,
    };
    match client_hello_at(client, c) {
        None => return Verdict::Undecided,
        Some(false) => return Verdict::Plain,
        Some(true) => {}
    }
    // The server answers the ClientHello with a handshake record (its
    // ServerHello) or an alert; wait for its first three bytes.
    match server.get(s..).and_then(answers_tls) {
        Some(true) => Verdict::Tls(Start {
            kind,
            client_offset: c,
            server_offset: s,
            round_trips: rt,
        }),
        Some(false) => Verdict::Plain,
        None => Verdict::Undecided,
    }
}

/// Whether a server's bytes begin with a TLS record a ClientHello draws
/// (a handshake record, its ServerHello, or an alert): None until its
/// first three bytes are there.
fn answers_tls(server: &[u8]) -> Option<bool> {
    match server {
        [content_type, major, minor, ..] => {
            Some(matches!(content_type, 21 | 22) && *major == 3 && *minor <= 4)
        }
        _ => None,
    }
}

/// Whether a TLS handshake record holding a ClientHello starts at `at`:
/// content type 22, version 3.x, a length a plaintext record can have, and
/// handshake type 1. None: not enough bytes yet.
pub fn client_hello_at(stream: &[u8], at: usize) -> Option<bool> {
    let h = stream.get(at..)?;
    if h.is_empty() {
        return None;
    }
    let expect = [22u8, 3];
    for (i, e) in expect.iter().enumerate() {
        match h.get(i) {
            None => return None,
            Some(b) if b != e => return Some(false),
            _ => {}
        }
    }
    if h.len() < 6 {
        return if h.get(2).is_some_and(|m| *m > 4) {
            Some(false)
        } else {
            None
        };
    }
    let len = u16::from_be_bytes([h[3], h[4]]) as usize;
    Some(h[2] <= 4 && (4..=MAX_PLAINTEXT_RECORD).contains(&len) && h[5] == 1)
}

/// Which preamble, and where each side's part ends.
/// None: no known preamble (plaintext). Some(Err): not complete yet.
/// Some(Ok((kind, client_end, server_end, round_trips))).
type Found = Option<Result<(Kind, usize, usize, u32), ()>>;

fn recognise(client: &[u8], server: &[u8], server_first: bool) -> Found {
    if server_first {
        if server.starts_with(b"220") {
            return line_command(client, server);
        }
        if starts_with_ci(server, b"+OK") {
            return pop3(client, server);
        }
        if starts_with_ci(server, b"* OK") {
            return imap(client, server);
        }
        if server.len() >= 5 && server[3] == 0 && server[4] == 10 {
            return mysql(client, server);
        }
        return None;
    }
    let first = *client.first()?;
    match first {
        b'C' | b'c' => {
            let p = b"CONNECT ";
            let n = client.len().min(p.len());
            if !client[..n].eq_ignore_ascii_case(&p[..n]) {
                return None;
            }
            if n < p.len() {
                return Some(Err(()));
            }
            http_connect(client, server)
        }
        4 => socks4(client, server),
        5 => socks5(client, server),
        0 => postgres(client, server),
        0x30 => ldap(client, server),
        b'<' => xmpp(client, server),
        _ => None,
    }
}

fn starts_with_ci(s: &[u8], p: &[u8]) -> bool {
    s.len() >= p.len() && s[..p.len()].eq_ignore_ascii_case(p)
}

fn find(hay: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    if from > hay.len() {
        return None;
    }
    hay[from..]
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| p + from)
}

/// Complete lines from `from`: (start, end of content without CR LF, end
/// after the LF). A trailing partial line is left out.
fn lines(s: &[u8], from: usize) -> Vec<(usize, usize, usize)> {
    let mut out = Vec::new();
    let mut at = from;
    while let Some(nl) = find(s, b"\n", at) {
        let end = if nl > at && s[nl - 1] == b'\r' {
            nl - 1
        } else {
            nl
        };
        out.push((at, end, nl + 1));
        at = nl + 1;
    }
    out
}

/// HTTP CONNECT (RFC 9110 9.3.6): request head, response head; a 2xx ends
/// the HTTP part ("any 2xx means the tunnel is established"). A 407 with
/// keep-alive may be followed by another CONNECT with credentials: pairs
/// are taken in order, a response's body (Content-Length) skipped.
fn http_connect(client: &[u8], server: &[u8]) -> Found {
    let (mut c, mut s, mut replies) = (0usize, 0usize, 0u32);
    loop {
        let rest = &client[c..];
        let p = b"CONNECT ";
        let n = rest.len().min(p.len());
        if !rest[..n].eq_ignore_ascii_case(&p[..n]) {
            return None;
        }
        let Some(req_end) = find(client, b"\r\n\r\n", c) else {
            return Some(Err(()));
        };
        let Some(head_end) = find(server, b"\r\n\r\n", s) else {
            // A server answering something other than HTTP is not a proxy.
            let r = &server[s..];
            let p = b"HTTP/1.";
            if !r[..r.len().min(p.len())].eq(&p[..r.len().min(p.len())]) {
                return None;
            }
            return Some(Err(()));
        };
        let head = &server[s..head_end];
        if !head.starts_with(b"HTTP/1.") || head.len() < 12 || head[8] != b' ' {
            return None;
        }
        let status = &head[9..12];
        if !status.iter().all(|b| b.is_ascii_digit()) {
            return None;
        }
        replies += 1;
        let c_end = req_end + 4;
        let s_end = head_end + 4;
        if status[0] == b'2' {
            return Some(Ok((Kind::HttpConnect, c_end, s_end, replies)));
        }
        if status[0] == b'1' {
            // An interim response: the final one follows for the same request.
            s = s_end;
            continue;
        }
        // Refused (407, 403, 502...): only another CONNECT on the same
        // connection can still lead to TLS.
        // (with its last line's CR LF, for the line splitter)
        let body = content_length(&server[s..head_end + 2]).unwrap_or(0);
        s = s_end + body;
        c = c_end;
        if c >= client.len() {
            return Some(Err(()));
        }
    }
}

fn content_length(head: &[u8]) -> Option<usize> {
    for (a, b, _) in lines(head, 0) {
        let line = &head[a..b];
        if starts_with_ci(line, b"content-length:") {
            return std::str::from_utf8(&line[15..]).ok()?.trim().parse().ok();
        }
    }
    None
}

/// SOCKS4 (and 4a, a 0.0.0.x address with a host name after the user id):
/// VN=4 CD=1 DSTPORT DSTIP USERID NUL [HOST NUL]; reply VN=0 CD=90 + 6 bytes.
fn socks4(client: &[u8], server: &[u8]) -> Found {
    if client.len() < 2 {
        return Some(Err(()));
    }
    if client[1] != 1 {
        return None;
    }
    if client.len() < 9 {
        return Some(Err(()));
    }
    let Some(user_end) = client[8..].iter().position(|b| *b == 0).map(|p| 8 + p + 1) else {
        return if client.len() > 8 + 256 {
            None
        } else {
            Some(Err(()))
        };
    };
    let ip = &client[4..8];
    let (kind, c_end) = if ip[..3] == [0, 0, 0] && ip[3] != 0 {
        match client[user_end..].iter().position(|b| *b == 0) {
            Some(p) => (Kind::Socks4a, user_end + p + 1),
            None if client.len() - user_end > 256 => return None,
            None => return Some(Err(())),
        }
    } else {
        (Kind::Socks4, user_end)
    };
    if server.len() < 2 {
        return Some(Err(()));
    }
    if server[0] != 0 || server[1] != 90 {
        return None;
    }
    if server.len() < 8 {
        return Some(Err(()));
    }
    Some(Ok((kind, c_end, 8, 1)))
}

/// SOCKS5 (RFC 1928, 1929): greeting VER NMETHODS METHODS -> VER METHOD;
/// with method 2, username/password -> status; then VER CMD=1 RSV ATYP ADDR
/// PORT -> VER REP=0 RSV ATYP ADDR PORT.
fn socks5(client: &[u8], server: &[u8]) -> Found {
    let need = |n: usize, s: &[u8]| s.len() >= n;
    if !need(2, client) {
        return Some(Err(()));
    }
    let n = client[1] as usize;
    if n == 0 {
        return None;
    }
    let mut c = 2 + n;
    if !need(c, client) {
        return Some(Err(()));
    }
    if !need(2, server) {
        return Some(Err(()));
    }
    if server[0] != 5 {
        return None;
    }
    let method = server[1];
    if !client[2..2 + n].contains(&method) {
        return None;
    }
    let mut s = 2;
    let mut replies = 1;
    match method {
        0 => {}
        2 => {
            // VER=1 ULEN UNAME PLEN PASSWD -> VER=1 STATUS
            if !need(c + 2, client) {
                return Some(Err(()));
            }
            if client[c] != 1 {
                return None;
            }
            let ulen = client[c + 1] as usize;
            if !need(c + 2 + ulen + 1, client) {
                return Some(Err(()));
            }
            let plen = client[c + 2 + ulen] as usize;
            c += 3 + ulen + plen;
            if !need(s + 2, server) {
                return Some(Err(()));
            }
            if server[s] != 1 || server[s + 1] != 0 {
                return None;
            }
            s += 2;
            replies += 1;
        }
        // 0xFF (no acceptable method), GSSAPI and private methods.
        _ => return None,
    }
    let c_end = match socks5_address(client, c, true)? {
        Ok(e) => e,
        Err(()) => return Some(Err(())),
    };
    let s_end = match socks5_address(server, s, false)? {
        Ok(e) => e,
        Err(()) => return Some(Err(())),
    };
    replies += 1;
    Some(Ok((Kind::Socks5, c_end, s_end, replies)))
}

/// End of a SOCKS5 request (CMD=1 CONNECT) or a successful reply (REP=0)
/// at `at`. None: not one; Some(Err): incomplete.
fn socks5_address(s: &[u8], at: usize, request: bool) -> Option<Result<usize, ()>> {
    // Request: CMD 1 (CONNECT); reply: REP 0 (succeeded).
    let code = if request { 1 } else { 0 };
    let Some(h) = s.get(at..at + 4) else {
        // Judge what is there already.
        let h = s.get(at..).unwrap_or(&[]);
        if h.first().is_some_and(|v| *v != 5) || h.get(1).is_some_and(|c| *c != code) {
            return None;
        }
        return Some(Err(()));
    };
    if h[0] != 5 || h[1] != code || h[2] != 0 {
        return None;
    }
    let addr = match h[3] {
        1 => 4,
        4 => 16,
        3 => match s.get(at + 4) {
            Some(l) => 1 + *l as usize,
            None => return Some(Err(())),
        },
        _ => return None,
    };
    let end = at + 4 + addr + 2;
    Some(if s.len() >= end { Ok(end) } else { Err(()) })
}

/// PostgreSQL: an 8-byte SSLRequest (length 8, code 80877103) answered 'S'
/// (TLS follows) or 'N'; a GSSENCRequest (80877104) answered 'N' may come
/// first, libpq then asks for SSL on the same connection.
fn postgres(client: &[u8], server: &[u8]) -> Found {
    const SSL: [u8; 8] = [0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f];
    const GSS: [u8; 8] = [0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x30];
    let mut c = 0;
    let mut replies = 0;
    loop {
        let rest = &client[c..];
        let n = rest.len().min(8);
        let ssl = rest[..n] == SSL[..n];
        let gss = rest[..n] == GSS[..n];
        if !ssl && !gss {
            return None;
        }
        if n < 8 {
            return Some(Err(()));
        }
        let Some(answer) = server.get(replies as usize) else {
            return Some(Err(()));
        };
        replies += 1;
        c += 8;
        if rest[7] == SSL[7] {
            return if *answer == b'S' {
                Some(Ok((Kind::PostgresSslRequest, c, replies as usize, replies)))
            } else {
                None
            };
        }
        if *answer != b'N' {
            return None;
        }
        if c >= client.len() {
            return Some(Err(()));
        }
    }
}

/// MySQL: the server's Handshake V10 (3-byte length, sequence 0, protocol
/// 10) advertising CLIENT_SSL; the client's 32-byte SSLRequest (sequence 1,
/// CLIENT_SSL set) and the ClientHello right after it, without waiting.
fn mysql(client: &[u8], server: &[u8]) -> Found {
    const CLIENT_SSL: u32 = 0x0800;
    let glen = u32::from_le_bytes([server[0], server[1], server[2], 0]) as usize;
    if glen < 2 {
        return None;
    }
    let g_end = 4 + glen;
    let Some(g) = server.get(4..g_end) else {
        return Some(Err(()));
    };
    // protocol version, server version NUL, thread id, 8 bytes of
    // scramble, a filler, then the capability flags' lower half.
    let v_end = g[1..].iter().position(|b| *b == 0).map(|p| 1 + p + 1)?;
    let caps = v_end + 4 + 8 + 1;
    let cap = g.get(caps..caps + 2)?;
    if u16::from_le_bytes([cap[0], cap[1]]) as u32 & CLIENT_SSL == 0 {
        return None;
    }
    if client.len() < 8 {
        return Some(Err(()));
    }
    if client[..4] != [32, 0, 0, 1] {
        return None;
    }
    let flags = u32::from_le_bytes([client[4], client[5], client[6], client[7]]);
    if flags & CLIENT_SSL == 0 {
        return None;
    }
    Some(Ok((Kind::MysqlSslRequest, 36, g_end, 1)))
}

/// SMTP (RFC 3207) and FTP (RFC 4217): a "220" greeting, one reply per
/// command (multi-line replies continue with "NNN-"); the client's
/// `STARTTLS` answered 220, or `AUTH TLS`/`AUTH SSL` answered 234.
fn line_command(client: &[u8], server: &[u8]) -> Found {
    let commands = lines(client, 0);
    let mut found = None;
    for (i, (a, b, end)) in commands.iter().enumerate() {
        let cmd = client[*a..*b].trim_ascii();
        if cmd.eq_ignore_ascii_case(b"STARTTLS") {
            found = Some((i, *end, Kind::SmtpStarttls, b"220"));
            break;
        }
        if cmd.eq_ignore_ascii_case(b"AUTH TLS") || cmd.eq_ignore_ascii_case(b"AUTH SSL") {
            found = Some((i, *end, Kind::FtpAuthTls, b"234"));
            break;
        }
    }
    let Some((i, c_end, kind, ok)) = found else {
        let partial = client.len() - commands.last().map_or(0, |l| l.2);
        return if partial > 512 || commands.len() > 32 {
            None
        } else {
            Some(Err(()))
        };
    };
    // Replies: the greeting, then one per command, up to the answer to
    // the TLS command (what follows it is TLS, whatever bytes it holds).
    let mut replies = 0;
    for (a, b, end) in lines(server, 0) {
        let line = &server[a..b];
        if line.len() < 3 || !line[..3].iter().all(|c| c.is_ascii_digit()) {
            return None;
        }
        if line.get(3) == Some(&b'-') {
            continue;
        }
        if replies == i + 1 {
            return if &line[..3] == ok {
                Some(Ok((kind, c_end, end, i as u32 + 2)))
            } else {
                None
            };
        }
        replies += 1;
    }
    Some(Err(()))
}

/// POP3 (RFC 2595): "+OK" greeting, one status line per command, plus a
/// dot-terminated body after a positive status to CAPA (and LIST/UIDL
/// without argument); `STLS` answered "+OK".
fn pop3(client: &[u8], server: &[u8]) -> Found {
    let commands = lines(client, 0);
    let Some(i) = commands
        .iter()
        .position(|(a, b, _)| client[*a..*b].trim_ascii().eq_ignore_ascii_case(b"STLS"))
    else {
        return if commands.len() > 32 {
            None
        } else {
            Some(Err(()))
        };
    };
    let server_lines = lines(server, 0);
    let mut l = 0;
    // Greeting, then the answer to each command up to STLS.
    for k in 0..=i + 1 {
        let Some((a, b, end)) = server_lines.get(l) else {
            return Some(Err(()));
        };
        let line = &server[*a..*b];
        let ok = starts_with_ci(line, b"+OK");
        if !ok && !starts_with_ci(line, b"-ERR") {
            return None;
        }
        l += 1;
        if k == i + 1 {
            return if ok {
                Some(Ok((Kind::Pop3Stls, commands[i].2, *end, i as u32 + 2)))
            } else {
                None
            };
        }
        let multi = k >= 1 && {
            let (ca, cb, _) = commands[k - 1];
            let cmd = client[ca..cb].trim_ascii();
            cmd.eq_ignore_ascii_case(b"CAPA")
                || cmd.eq_ignore_ascii_case(b"LIST")
                || cmd.eq_ignore_ascii_case(b"UIDL")
        };
        if ok && multi {
            loop {
                let Some((a, b, _)) = server_lines.get(l) else {
                    return Some(Err(()));
                };
                l += 1;
                if &server[*a..*b] == b"." {
                    break;
                }
            }
        }
    }
    None
}

/// IMAP (RFC 9051): "* OK" greeting; tagged commands, untagged "*" data;
/// `tag STARTTLS` answered "tag OK".
fn imap(client: &[u8], server: &[u8]) -> Found {
    let commands = lines(client, 0);
    let mut found = None;
    for (i, (a, b, end)) in commands.iter().enumerate() {
        let line = &client[*a..*b];
        let mut words = line.split(|c| *c == b' ');
        let tag = words.next().unwrap_or_default();
        if words
            .next()
            .is_some_and(|w| w.eq_ignore_ascii_case(b"STARTTLS"))
            && !tag.is_empty()
        {
            found = Some((i, *end, tag));
            break;
        }
    }
    let Some((i, c_end, tag)) = found else {
        return if commands.len() > 32 {
            None
        } else {
            Some(Err(()))
        };
    };
    for (a, b, end) in lines(server, 0) {
        let line = &server[a..b];
        if line.len() > tag.len() && line[..tag.len()] == *tag && line[tag.len()] == b' ' {
            let status = &line[tag.len() + 1..];
            return if starts_with_ci(status, b"OK") {
                Some(Ok((Kind::ImapStarttls, c_end, end, i as u32 + 2)))
            } else {
                None
            };
        }
    }
    Some(Err(()))
}

/// XMPP (RFC 6120 5.4): the client opens its stream, the server answers
/// with its stream header and features; the client's `<starttls .../>`
/// is answered `<proceed .../>` (or `<failure/>`).
fn xmpp(client: &[u8], server: &[u8]) -> Found {
    let p = b"<?xml";
    let q = b"<stream:stream";
    let n = client.len();
    if !(p[..n.min(p.len())] == client[..n.min(p.len())]
        || q[..n.min(q.len())] == client[..n.min(q.len())])
    {
        return None;
    }
    let element_end = |s: &[u8], name: &[u8]| -> Option<Result<usize, ()>> {
        let Some(at) = find(s, name, 0) else {
            return Some(Err(()));
        };
        let Some(gt) = find(s, b">", at) else {
            return Some(Err(()));
        };
        if s[gt - 1] == b'/' {
            return Some(Ok(gt + 1));
        }
        let mut close = b"</".to_vec();
        close.extend_from_slice(&name[1..]);
        match find(s, &close, gt) {
            Some(c) => find(s, b">", c).map(|e| Ok(e + 1)).or(Some(Err(()))),
            None => Some(Err(())),
        }
    };
    // A refusal before any proceed (after it, the bytes are TLS's).
    let failure = find(server, b"<failure", 0);
    if failure.is_some() && failure < find(server, b"<proceed", 0).or(Some(usize::MAX)) {
        return None;
    }
    let c_end = match element_end(client, b"<starttls")? {
        Ok(e) => e,
        Err(()) => return Some(Err(())),
    };
    let s_end = match element_end(server, b"<proceed")? {
        Ok(e) => e,
        Err(()) => return Some(Err(())),
    };
    // Stream headers, then starttls: two waits.
    Some(Ok((Kind::XmppStarttls, c_end, s_end, 2)))
}

/// A BER element at `at`: (tag, content start, end). None: malformed;
/// Some(Err): incomplete.
fn ber(s: &[u8], at: usize) -> Option<Result<(u8, usize, usize), ()>> {
    let Some(&tag) = s.get(at) else {
        return Some(Err(()));
    };
    let Some(&l0) = s.get(at + 1) else {
        return Some(Err(()));
    };
    let (len, start) = if l0 < 0x80 {
        (l0 as usize, at + 2)
    } else {
        let n = (l0 & 0x7f) as usize;
        if n == 0 || n > 3 {
            return None;
        }
        let Some(b) = s.get(at + 2..at + 2 + n) else {
            return Some(Err(()));
        };
        (
            b.iter().fold(0usize, |v, x| v << 8 | *x as usize),
            at + 2 + n,
        )
    };
    Some(Ok((tag, start, start + len)))
}

/// LDAP StartTLS (RFC 4511 4.14): an ExtendedRequest ([APPLICATION 23])
/// named 1.3.6.1.4.1.1466.20037 answered by an ExtendedResponse
/// ([APPLICATION 24]) with resultCode success (0).
fn ldap(client: &[u8], server: &[u8]) -> Found {
    const OID: &[u8] = b"1.3.6.1.4.1.1466.20037";
    let walk = |s: &[u8], op: u8| -> Option<Result<(usize, usize), ()>> {
        let (tag, start, end) = match ber(s, 0)? {
            Ok(x) => x,
            Err(()) => return Some(Err(())),
        };
        if tag != 0x30 || end > MAX_PREAMBLE_BYTES {
            return None;
        }
        // messageID INTEGER, then the protocol op.
        let (t, _, id_end) = match ber(s, start)? {
            Ok(x) => x,
            Err(()) => return Some(Err(())),
        };
        if t != 0x02 {
            return None;
        }
        let (t, op_start, _) = match ber(s, id_end)? {
            Ok(x) => x,
            Err(()) => return Some(Err(())),
        };
        if t != op {
            return None;
        }
        if s.len() < end {
            return Some(Err(()));
        }
        Some(Ok((op_start, end)))
    };
    let (op, c_end) = match walk(client, 0x77)? {
        Ok(x) => x,
        Err(()) => return Some(Err(())),
    };
    let (t, name, name_end) = ber(client, op)?.ok()?;
    // (A damaged length can put the name's end before its start.)
    if t != 0x80 || client.get(name..name_end.min(c_end)) != Some(OID) {
        return None;
    }
    let (op, s_end) = match walk(server, 0x78)? {
        Ok(x) => x,
        Err(()) => return Some(Err(())),
    };
    // resultCode ENUMERATED
    let (t, r, r_end) = ber(server, op)?.ok()?;
    if t != 0x0a || r_end != r + 1 || server.get(r) != Some(&0) {
        return None;
    }
    Some(Ok((Kind::LdapStarttls, c_end, s_end, 1)))
}

/// A connection's stream bytes held while its preamble is judged, to be
/// replayed to the TLS parser (from the TLS start) or the plaintext
/// exchanges (all of them) once decided.
#[derive(Debug, Default)]
pub(crate) struct Held {
    pub server_first: bool,
    pub bytes: [Vec<u8>; 2],
    /// In arrival order: when, which direction, how many bytes were
    /// captured and how many after them were not (a snap length).
    pub chunks: Vec<(Stamp, Direction, usize, usize)>,
    /// First frame of the preamble, and whether the server sent it.
    pub first: Option<(Stamp, bool)>,
    /// A direction whose last chunk lost bytes to the capture: what it
    /// sends next would not follow on from what is held.
    sealed: [bool; 2],
}

impl Held {
    /// Keeps one chunk; false (and nothing kept) when it cannot be judged:
    /// a cap, or bytes after a direction's capture hole. A chunk cut short
    /// (a snap length) is kept, its captured start judged: a ClientHello
    /// and the server's answer are known by their first bytes, and a
    /// preamble ends before them.
    pub fn push(&mut self, at: Stamp, dir: Direction, bytes: &[u8], missing: usize) -> bool {
        let held = self.bytes[0].len() + self.bytes[1].len();
        let d = dir.index();
        // A segment missing whole (a capture hole, not a snap length)
        // leaves nothing to judge.
        let hole = bytes.is_empty() && missing > 0;
        if self.sealed[d]
            || hole
            || held + bytes.len() > MAX_PREAMBLE_BYTES
            || self.chunks.len() >= MAX_PREAMBLE_SEGMENTS
        {
            return false;
        }
        if self.first.is_none() {
            self.server_first = dir == Direction::ServerToClient;
            self.first = Some((at, self.server_first));
        }
        self.chunks.push((at, dir, bytes.len(), missing));
        self.bytes[d].extend_from_slice(bytes);
        self.sealed[d] = missing > 0;
        true
    }

    pub fn judge(&self, at_end: bool) -> Verdict {
        judge(&self.bytes[0], &self.bytes[1], self.server_first, at_end)
    }

    /// The held chunks in arrival order, each cut to the bytes at or after
    /// `from[direction]` (chunks wholly before it are left out).
    pub fn replay(&self, from: [usize; 2], mut f: impl FnMut(Stamp, Direction, &[u8], usize)) {
        let mut off = [0usize; 2];
        for &(at, dir, len, missing) in &self.chunks {
            let d = dir.index();
            let (a, b) = (off[d], off[d] + len);
            off[d] = b;
            if b > from[d] {
                f(at, dir, &self.bytes[d][a.max(from[d])..b], missing);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    //! Each preamble as a specification: what each side sends, in order,
    //! and where TLS starts; then the ways it must not be fooled.
    use super::*;

    /// A ClientHello record's first bytes (record header + handshake type).
    fn client_hello() -> Vec<u8> {
        // (random and key bytes hold line feeds too)
        let mut v = vec![22, 3, 1, 0, 0x40, 1, 0, 0, 0x3c, 3, 3, b'\n', b'\r', b'\n'];
        v.resize(5 + 0x40, 0xaa);
        v
    }

    /// A ServerHello record's first bytes.
    fn server_hello() -> Vec<u8> {
        vec![
            22, 3, 3, 0, 0x5a, 2, 0, 0, 0x56, 3, 3, b'\n', 0x0d, b'\n', 0x7f,
        ]
    }

    fn cat(parts: &[&[u8]]) -> Vec<u8> {
        parts.concat()
    }

    /// Judges the finished dialog, and checks that no prefix of it (the
    /// bytes as they arrive, in any split) reaches another verdict early.
    fn judged(client: &[u8], server: &[u8], server_first: bool) -> Verdict {
        let full = judge(client, server, server_first, false);
        for c in 0..=client.len() {
            for s in [0, server.len() / 2, server.len()] {
                // The side that speaks first has sent something.
                if (server_first && s == 0) || (!server_first && c == 0) {
                    continue;
                }
                match judge(&client[..c], &server[..s], server_first, false) {
                    Verdict::Undecided => {}
                    v if v == full => {}
                    v => panic!("prefix {c}/{s} judged {v:?}, the whole {full:?}"),
                }
            }
        }
        full
    }

    fn tls(kind: Kind, client_pre: &[u8], server_pre: &[u8], round_trips: u32) -> Verdict {
        Verdict::Tls(Start {
            kind,
            client_offset: client_pre.len(),
            server_offset: server_pre.len(),
            round_trips,
        })
    }

    const CONNECT: &[u8] = b"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\nUser-Agent: curl/7.88.1\r\n\r\n";
    const ESTABLISHED: &[u8] = b"HTTP/1.1 200 Connection established\r\n\r\n";

    #[test]
    fn http_connect_answered_200_then_client_hello_is_tls_after_one_round_trip() {
        let c = cat(&[CONNECT, &client_hello()]);
        let s = cat(&[ESTABLISHED, &server_hello()]);
        assert_eq!(
            judged(&c, &s, false),
            tls(Kind::HttpConnect, CONNECT, ESTABLISHED, 1)
        );
    }

    #[test]
    fn http_connect_client_hello_in_the_same_segment_as_the_request_waits_for_the_200() {
        let c = cat(&[CONNECT, &client_hello()]);
        assert_eq!(judge(&c, b"", false, false), Verdict::Undecided);
        assert_eq!(
            judge(&c, b"HTTP/1.1 200 OK\r\n", false, false),
            Verdict::Undecided
        );
    }

    #[test]
    fn http_connect_answered_407_stays_plaintext() {
        let refused = b"HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"p\"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
        assert_eq!(judged(CONNECT, refused, false), Verdict::Undecided);
        assert_eq!(judge(CONNECT, refused, false, true), Verdict::Plain);
        // Even when the client goes on with bytes that look like TLS.
        let c = cat(&[CONNECT, &client_hello()]);
        assert_eq!(judge(&c, refused, false, false), Verdict::Plain);
    }

    #[test]
    fn http_connect_407_then_a_retry_with_credentials_on_the_same_connection_is_two_round_trips() {
        let refused: &[u8] =
            b"HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 5\r\n\r\ndeny!";
        let retry: &[u8] =
            b"CONNECT example.com:443 HTTP/1.1\r\nProxy-Authorization: Basic dTpw\r\n\r\n";
        let c = cat(&[CONNECT, retry, &client_hello()]);
        let s = cat(&[refused, ESTABLISHED, &server_hello()]);
        let pre_c = cat(&[CONNECT, retry]);
        let pre_s = cat(&[refused, ESTABLISHED]);
        assert_eq!(
            judged(&c, &s, false),
            tls(Kind::HttpConnect, &pre_c, &pre_s, 2)
        );
    }

    #[test]
    fn http_request_whose_body_holds_a_tls_record_header_is_plaintext() {
        let c = cat(&[
            b"POST /upload HTTP/1.1\r\nContent-Length: 69\r\n\r\n",
            &client_hello(),
        ]);
        let s = cat(&[b"HTTP/1.1 200 OK\r\n\r\n", &server_hello()]);
        assert_eq!(judge(&c, &s, false, false), Verdict::Plain);
        assert_eq!(
            judge(b"GET / HTTP/1.1\r\n", b"", false, false),
            Verdict::Plain
        );
    }

    #[test]
    fn http_connect_200_followed_by_plaintext_http_stays_plaintext() {
        let c = cat(&[CONNECT, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"]);
        assert_eq!(judge(&c, ESTABLISHED, false, false), Verdict::Plain);
    }

    #[test]
    fn tls_record_that_is_not_a_client_hello_or_has_an_absurd_length_is_not_a_start() {
        for bad in [
            vec![22, 3, 1, 0, 0x40, 2],    // ServerHello from the client
            vec![23, 3, 3, 0, 0x40, 1],    // application data
            vec![22, 3, 1, 0x50, 0x00, 1], // 20 KB: no plaintext record is that long
            vec![22, 3, 1, 0, 0, 1],       // empty
            vec![22, 3, 9, 0, 0x40, 1],    // version 3.9
            vec![22, 2, 0, 0, 0x40, 1],    // SSL 2 era
        ] {
            let c = cat(&[CONNECT, &bad]);
            assert_eq!(
                judge(&c, ESTABLISHED, false, false),
                Verdict::Plain,
                "{bad:?}"
            );
        }
    }

    #[test]
    fn server_bytes_after_its_preamble_must_be_tls_too() {
        let c = cat(&[CONNECT, &client_hello()]);
        let s = cat(&[ESTABLISHED, b"HTTP/1.1 200 OK\r\n"]);
        assert_eq!(judge(&c, &s, false, false), Verdict::Plain);
        // An alert is a TLS answer to a ClientHello.
        let s = cat(&[ESTABLISHED, &[21, 3, 3, 0, 2, 2, 40]]);
        assert!(matches!(judge(&c, &s, false, false), Verdict::Tls(_)));
    }

    const SOCKS5_GREETING: &[u8] = &[5, 1, 0];
    const SOCKS5_NO_AUTH: &[u8] = &[5, 0];
    const SOCKS5_CONNECT_NAME: &[u8] = &[
        5, 1, 0, 3, 11, b'e', b'x', b'a', b'm', b'p', b'l', b'e', b'.', b'c', b'o', b'm', 1, 187,
    ];
    const SOCKS5_SUCCEEDED: &[u8] = &[5, 0, 0, 1, 127, 0, 0, 1, 0x9c, 0x40];

    #[test]
    fn socks5_greeting_then_connect_is_tls_after_two_round_trips() {
        let c = cat(&[SOCKS5_GREETING, SOCKS5_CONNECT_NAME, &client_hello()]);
        let s = cat(&[SOCKS5_NO_AUTH, SOCKS5_SUCCEEDED, &server_hello()]);
        let pre_c = cat(&[SOCKS5_GREETING, SOCKS5_CONNECT_NAME]);
        let pre_s = cat(&[SOCKS5_NO_AUTH, SOCKS5_SUCCEEDED]);
        assert_eq!(judged(&c, &s, false), tls(Kind::Socks5, &pre_c, &pre_s, 2));
    }

    #[test]
    fn socks5_with_username_and_password_is_three_round_trips() {
        let greeting: &[u8] = &[5, 2, 0, 2];
        let auth: &[u8] = &[1, 1, b'u', 2, b'p', b'w'];
        let connect_v6: &[u8] = &[
            5, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 187,
        ];
        let c = cat(&[greeting, auth, connect_v6, &client_hello()]);
        let s = cat(&[&[5, 2], &[1, 0], SOCKS5_SUCCEEDED, &server_hello()]);
        let pre_c = cat(&[greeting, auth, connect_v6]);
        let pre_s = cat(&[&[5, 2], &[1, 0], SOCKS5_SUCCEEDED]);
        assert_eq!(judged(&c, &s, false), tls(Kind::Socks5, &pre_c, &pre_s, 3));
    }

    #[test]
    fn socks5_failure_reply_or_refused_method_or_bad_password_stays_plaintext() {
        let c = cat(&[SOCKS5_GREETING, SOCKS5_CONNECT_NAME, &client_hello()]);
        // REP 5: connection refused.
        let s = cat(&[SOCKS5_NO_AUTH, &[5, 5, 0, 1, 0, 0, 0, 0, 0, 0]]);
        assert_eq!(judge(&c, &s, false, false), Verdict::Plain);
        // 0xFF: no acceptable method.
        assert_eq!(
            judge(SOCKS5_GREETING, &[5, 0xff], false, false),
            Verdict::Plain
        );
        // RFC 1929 status 1: authentication failed.
        let c = cat(&[&[5, 1, 2], &[1, 1, b'u', 1, b'p']]);
        assert_eq!(judge(&c, &[5, 2, 1, 1], false, false), Verdict::Plain);
    }

    #[test]
    fn socks4_granted_is_tls_after_one_round_trip_and_socks4a_carries_a_host_name() {
        let req: &[u8] = &[4, 1, 1, 187, 93, 184, 216, 34, b'u', 0];
        let granted: &[u8] = &[0, 90, 0, 0, 0, 0, 0, 0];
        let c = cat(&[req, &client_hello()]);
        let s = cat(&[granted, &server_hello()]);
        assert_eq!(judged(&c, &s, false), tls(Kind::Socks4, req, granted, 1));
        let req_4a: &[u8] = &[4, 1, 1, 187, 0, 0, 0, 1, 0, b'h', b'o', b's', b't', 0];
        let c = cat(&[req_4a, &client_hello()]);
        assert_eq!(
            judged(&c, &s, false),
            tls(Kind::Socks4a, req_4a, granted, 1)
        );
    }

    #[test]
    fn socks4_rejected_stays_plaintext() {
        let c = cat(&[
            &[4, 1, 1, 187, 0, 0, 0, 1, 0][..],
            b"localhost\0",
            &client_hello(),
        ]);
        assert_eq!(
            judge(&c, &[0, 91, 0, 0, 0, 0, 0, 0], false, false),
            Verdict::Plain
        );
    }

    const SMTP_BANNER: &[u8] = b"220-mail.example.com ESMTP\r\n220 ready\r\n";
    const EHLO: &[u8] = b"EHLO client\r\n";
    const EHLO_REPLY: &[u8] = b"250-mail.example.com\r\n250-PIPELINING\r\n250 STARTTLS\r\n";

    #[test]
    fn smtp_banner_ehlo_starttls_220_is_tls_after_three_round_trips() {
        let c = cat(&[EHLO, b"STARTTLS\r\n", &client_hello()]);
        let s = cat(&[
            SMTP_BANNER,
            EHLO_REPLY,
            b"220 2.0.0 Ready to start TLS\r\n",
            &server_hello(),
        ]);
        let pre_c = cat(&[EHLO, b"STARTTLS\r\n"]);
        let pre_s = cat(&[SMTP_BANNER, EHLO_REPLY, b"220 2.0.0 Ready to start TLS\r\n"]);
        assert_eq!(
            judged(&c, &s, true),
            tls(Kind::SmtpStarttls, &pre_c, &pre_s, 3)
        );
    }

    #[test]
    fn smtp_starttls_refused_with_454_stays_plaintext() {
        let c = cat(&[EHLO, b"STARTTLS\r\n", b"MAIL FROM:<a@b>\r\n"]);
        let s = cat(&[SMTP_BANNER, EHLO_REPLY, b"454 4.7.0 TLS not available\r\n"]);
        assert_eq!(judge(&c, &s, true, false), Verdict::Plain);
    }

    #[test]
    fn smtp_banner_220_is_not_taken_for_the_answer_to_starttls() {
        // The client hurried: STARTTLS and its ClientHello before any reply
        // but the banner. The server's "220" so far is the banner's.
        let c = cat(&[b"STARTTLS\r\n", &client_hello()]);
        assert_eq!(judge(&c, b"220 ready\r\n", true, false), Verdict::Undecided);
        let s = cat(&[b"220 ready\r\n", b"220 go ahead\r\n", &server_hello()]);
        assert_eq!(
            judge(&c, &s, true, false),
            tls(
                Kind::SmtpStarttls,
                b"STARTTLS\r\n",
                b"220 ready\r\n220 go ahead\r\n",
                2
            )
        );
    }

    #[test]
    fn ftp_auth_tls_answered_234_is_tls() {
        let c = cat(&[b"AUTH TLS\r\n", &client_hello()]);
        let s = cat(&[
            b"220 FTP server ready\r\n",
            b"234 AUTH TLS successful\r\n",
            &server_hello(),
        ]);
        assert_eq!(
            judged(&c, &s, true),
            tls(
                Kind::FtpAuthTls,
                b"AUTH TLS\r\n",
                b"220 FTP server ready\r\n234 AUTH TLS successful\r\n",
                2
            )
        );
        let s = cat(&[b"220 FTP server ready\r\n", b"500 AUTH not understood\r\n"]);
        assert_eq!(judge(b"AUTH TLS\r\n", &s, true, false), Verdict::Plain);
    }

    #[test]
    fn pop3_capa_list_then_stls_ok_is_tls() {
        let pre_c: &[u8] = b"CAPA\r\nSTLS\r\n";
        let pre_s: &[u8] = b"+OK Dovecot ready.\r\n+OK\r\nCAPA\r\nTOP\r\nSTLS\r\n.\r\n+OK Begin TLS negotiation now.\r\n";
        let c = cat(&[pre_c, &client_hello()]);
        let s = cat(&[pre_s, &server_hello()]);
        assert_eq!(judged(&c, &s, true), tls(Kind::Pop3Stls, pre_c, pre_s, 3));
        let s = b"+OK ready\r\n-ERR TLS unavailable\r\n";
        assert_eq!(judge(b"STLS\r\n", s, true, false), Verdict::Plain);
    }

    #[test]
    fn imap_tagged_starttls_ok_is_tls_and_no_stays_plaintext() {
        let pre_c: &[u8] = b"A001 CAPABILITY\r\nA002 STARTTLS\r\n";
        let pre_s: &[u8] = b"* OK [CAPABILITY IMAP4rev1 STARTTLS] ready\r\n* CAPABILITY IMAP4rev1 STARTTLS\r\nA001 OK done\r\nA002 OK Begin TLS negotiation now.\r\n";
        let c = cat(&[pre_c, &client_hello()]);
        let s = cat(&[pre_s, &server_hello()]);
        assert_eq!(
            judged(&c, &s, true),
            tls(Kind::ImapStarttls, pre_c, pre_s, 3)
        );
        let s = b"* OK ready\r\nA1 NO not now\r\n";
        assert_eq!(judge(b"A1 STARTTLS\r\n", s, true, false), Verdict::Plain);
    }

    #[test]
    fn xmpp_starttls_proceed_is_tls_and_failure_stays_plaintext() {
        let pre_c: &[u8] = b"<?xml version='1.0'?><stream:stream to='example.com' xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' version='1.0'><starttls xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>";
        let pre_s: &[u8] = b"<?xml version='1.0'?><stream:stream from='example.com' id='x' version='1.0'><stream:features><starttls xmlns='urn:ietf:params:xml:ns:xmpp-tls'><required/></starttls></stream:features><proceed xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>";
        let c = cat(&[pre_c, &client_hello()]);
        let s = cat(&[pre_s, &server_hello()]);
        assert_eq!(
            judge(&c, &s, false, false),
            tls(Kind::XmppStarttls, pre_c, pre_s, 2)
        );
        let s = b"<stream:stream><failure xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>";
        assert_eq!(judge(pre_c, s, false, false), Verdict::Plain);
    }

    /// LDAPMessage { messageID 1, ExtendedRequest { requestName StartTLS } }
    const LDAP_STARTTLS: &[u8] = &[
        0x30, 0x1d, 0x02, 0x01, 0x01, 0x77, 0x18, 0x80, 0x16, b'1', b'.', b'3', b'.', b'6', b'.',
        b'1', b'.', b'4', b'.', b'1', b'.', b'1', b'4', b'6', b'6', b'.', b'2', b'0', b'0', b'3',
        b'7',
    ];

    fn ldap_response(result: u8) -> Vec<u8> {
        vec![
            0x30, 0x0c, 0x02, 0x01, 0x01, 0x78, 0x07, 0x0a, 0x01, result, 0x04, 0x00, 0x04, 0x00,
        ]
    }

    #[test]
    fn ldap_starttls_extended_response_success_is_tls() {
        let c = cat(&[LDAP_STARTTLS, &client_hello()]);
        let s = cat(&[&ldap_response(0), &server_hello()]);
        assert_eq!(
            judged(&c, &s, false),
            tls(Kind::LdapStarttls, LDAP_STARTTLS, &ldap_response(0), 1)
        );
        // resultCode 2: protocolError.
        assert_eq!(judge(&c, &ldap_response(2), false, false), Verdict::Plain);
    }

    const PG_SSL: &[u8] = &[0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f];
    const PG_GSS: &[u8] = &[0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x30];

    #[test]
    fn postgres_sslrequest_answered_s_is_tls_and_n_stays_plaintext() {
        let c = cat(&[PG_SSL, &client_hello()]);
        let s = cat(&[b"S", &server_hello()]);
        assert_eq!(
            judged(&c, &s, false),
            tls(Kind::PostgresSslRequest, PG_SSL, b"S", 1)
        );
        let c = cat(&[PG_SSL, &[0, 0, 0, 0x29, 0, 3, 0, 0]]);
        assert_eq!(judge(&c, b"N", false, false), Verdict::Plain);
    }

    #[test]
    fn postgres_gssencrequest_refused_then_sslrequest_is_two_round_trips() {
        let c = cat(&[PG_GSS, PG_SSL, &client_hello()]);
        let s = cat(&[b"NS", &server_hello()]);
        let pre_c = cat(&[PG_GSS, PG_SSL]);
        assert_eq!(
            judged(&c, &s, false),
            tls(Kind::PostgresSslRequest, &pre_c, b"NS", 2)
        );
    }

    fn mysql_greeting(capabilities: u16) -> Vec<u8> {
        let mut p = vec![10];
        p.extend_from_slice(b"8.0.36\0");
        p.extend_from_slice(&[1, 0, 0, 0]); // thread id
        p.extend_from_slice(b"abcdefgh\0"); // scramble part 1, filler
        p.extend_from_slice(&capabilities.to_le_bytes());
        p.extend_from_slice(&[0xff, 2, 0, 0xff, 0xc7, 21]);
        p.extend_from_slice(&[0; 10]);
        p.extend_from_slice(b"ijklmnopqrst\0mysql_native_password\0");
        let len = p.len() as u32;
        let mut v = len.to_le_bytes()[..3].to_vec();
        v.push(0);
        v.extend(p);
        v
    }

    fn mysql_ssl_request() -> Vec<u8> {
        let mut v = vec![32, 0, 0, 1];
        v.extend_from_slice(&0x000f_aa85u32.to_le_bytes()); // CLIENT_SSL among others
        v.extend_from_slice(&[0, 0, 0, 1, 0xff]);
        v.extend_from_slice(&[0; 23]);
        v
    }

    #[test]
    fn mysql_ssl_request_after_a_greeting_offering_ssl_is_tls_after_the_greeting() {
        let greeting = mysql_greeting(0xffff);
        let req = mysql_ssl_request();
        let c = cat(&[&req, &client_hello()]);
        let s = cat(&[&greeting, &server_hello()]);
        assert_eq!(
            judged(&c, &s, true),
            tls(Kind::MysqlSslRequest, &req, &greeting, 1)
        );
        // A server without CLIENT_SSL: no TLS can follow.
        let s = cat(&[&mysql_greeting(!0x0800), &server_hello()]);
        assert_eq!(judge(&c, &s, true, false), Verdict::Plain);
    }

    #[test]
    fn a_preamble_never_completed_is_given_up_at_the_byte_cap() {
        let mut c = EHLO.to_vec();
        while c.len() <= MAX_PREAMBLE_BYTES {
            c.extend_from_slice(b"NOOP\r\n");
        }
        assert_eq!(judge(&c, SMTP_BANNER, true, false), Verdict::Plain);
        let mut held = Held::default();
        let stamp = Stamp::default();
        assert!(held.push(stamp, Direction::ServerToClient, SMTP_BANNER, 0));
        assert!(!held.push(stamp, Direction::ClientToServer, &c, 0));
        assert!(!held.push(stamp, Direction::ClientToServer, b"", 10));
        let mut held = Held::default();
        for _ in 0..MAX_PREAMBLE_SEGMENTS {
            assert!(held.push(stamp, Direction::ClientToServer, b"x", 0));
        }
        assert!(!held.push(stamp, Direction::ClientToServer, b"x", 0));
    }

    #[test]
    fn held_chunks_replay_in_arrival_order_cut_at_the_tls_start() {
        let mut held = Held::default();
        let at = |frame| Stamp { frame, ts_ns: 0 };
        let c2s = Direction::ClientToServer;
        let s2c = Direction::ServerToClient;
        // The ClientHello shares its segment with the end of the preamble.
        assert!(held.push(at(1), c2s, b"CONNECT a:1 HTTP/1.1\r\n", 0));
        assert!(held.push(at(2), s2c, ESTABLISHED, 0));
        assert!(held.push(at(3), c2s, b"\r\nHELLO", 0));
        let mut seen = Vec::new();
        held.replay([24, ESTABLISHED.len()], |s, d, b, _| {
            seen.push((s.frame, d, b.to_vec()))
        });
        assert_eq!(seen, vec![(3, c2s, b"HELLO".to_vec())]);
        let mut all = 0;
        held.replay([0, 0], |_, _, b, _| all += b.len());
        assert_eq!(all, 22 + ESTABLISHED.len() + 7);
    }

    #[test]
    fn a_chunk_cut_by_the_snap_length_is_judged_by_its_start_and_ends_its_direction() {
        let mut held = Held::default();
        let at = |frame| Stamp { frame, ts_ns: 0 };
        let c2s = Direction::ClientToServer;
        let s2c = Direction::ServerToClient;
        assert!(held.push(at(1), c2s, b"CONNECT a:1 HTTP/1.1\r\n\r\n", 0));
        assert!(held.push(at(2), s2c, ESTABLISHED, 0));
        // A ClientHello and a ServerHello cut after their first bytes.
        let ch = client_hello();
        assert!(held.push(at(3), c2s, &ch[..10], ch.len() - 10));
        assert!(held.push(at(4), s2c, &[22, 3, 3, 0, 90, 2], 89));
        match held.judge(false) {
            Verdict::Tls(start) => assert_eq!(start.client_offset, 24),
            v => panic!("{v:?}"),
        }
        // What was missing is replayed with the chunk it followed.
        let mut seen = Vec::new();
        held.replay([24, ESTABLISHED.len()], |s, _, b, missing| {
            seen.push((s.frame, b.len(), missing))
        });
        assert_eq!(seen, vec![(3, 10, ch.len() - 10), (4, 6, 89)]);
        // After a cut, a direction's next bytes cannot follow on.
        assert!(!held.push(at(5), c2s, b"more", 0));
        assert!(!held.push(at(6), s2c, b"x", 0));
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(
            client in proptest::collection::vec(proptest::num::u8::ANY, 0..300),
            server in proptest::collection::vec(proptest::num::u8::ANY, 0..300),
            server_first: bool,
            at_end: bool,
        ) {
            let v = judge(&client, &server, server_first, at_end);
            if let Verdict::Tls(s) = v {
                proptest::prop_assert!(s.client_offset <= client.len());
                proptest::prop_assert_eq!(client_hello_at(&client, s.client_offset), Some(true));
            }
        }

        #[test]
        fn damaged_real_preambles_never_panic(
            which in 0usize..6,
            cut in 0usize..400,
            flip in 0usize..400,
            byte: u8,
        ) {
            let (c, s, first) = match which {
                0 => (cat(&[CONNECT, &client_hello()]), cat(&[ESTABLISHED, &server_hello()]), false),
                1 => (cat(&[SOCKS5_GREETING, SOCKS5_CONNECT_NAME, &client_hello()]),
                      cat(&[SOCKS5_NO_AUTH, SOCKS5_SUCCEEDED]), false),
                2 => (cat(&[EHLO, b"STARTTLS\r\n", &client_hello()]),
                      cat(&[SMTP_BANNER, EHLO_REPLY, b"220 go\r\n"]), true),
                3 => (cat(&[LDAP_STARTTLS, &client_hello()]), ldap_response(0), false),
                4 => (cat(&[&mysql_ssl_request(), &client_hello()]), mysql_greeting(0xffff), true),
                _ => (cat(&[PG_GSS, PG_SSL, &client_hello()]), b"NS".to_vec(), false),
            };
            let mut c = c;
            let n = c.len();
            c[flip % n] = byte;
            c.truncate(cut.min(n));
            let mut s = s;
            let m = s.len();
            s[flip % m] ^= byte;
            let _ = judge(&c, &s, first, false);
            let _ = judge(&c, &s, first, true);
            let _ = judge(&s, &c, !first, true);
        }
    }
}
