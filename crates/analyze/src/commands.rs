//! The commands of the text protocols whose server speaks first: SMTP and
//! FTP (greeting `220`), POP3 (`+OK`), IMAP (`* OK`, `* PREAUTH`). A
//! request of theirs is a line that begins with its command (IMAP's after
//! the client's tag); naming an exchange by it (`QUIT`, `RETR`, `FETCH`)
//! tells a reader which of a session's turns was slow, as an HTTP request
//! line does. Only commands the protocol defines name an exchange: a mail
//! message's lines after `DATA`, a file's bytes, a literal's are not
//! commands, and arguments (addresses, names, passwords) are never shown.

/// A text protocol, told by the server's greeting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TextProtocol {
    /// `220 `, `220-`: SMTP (RFC 5321) or FTP (RFC 959), the commands of
    /// both.
    SmtpOrFtp,
    /// `+OK`: POP3 (RFC 1939).
    Pop3,
    /// `* OK`, `* PREAUTH`: IMAP (RFC 9051); commands follow a tag.
    Imap,
}

/// SMTP's commands (RFC 5321, 3207 STARTTLS, 4954 AUTH, 3030 BDAT) and
/// FTP's (RFC 959, 2228, 2389, 2428, 3659, 7151; the X variants of RFC
/// 775 that clients still send).
const SMTP_FTP: &[&str] = &[
    "HELO", "EHLO", "MAIL", "RCPT", "DATA", "BDAT", "RSET", "VRFY", "EXPN", "HELP", "NOOP", "QUIT",
    "STARTTLS", "AUTH", "ETRN", "USER", "PASS", "ACCT", "CWD", "CDUP", "SMNT", "REIN", "PORT",
    "PASV", "EPSV", "EPRT", "TYPE", "STRU", "MODE", "RETR", "STOR", "STOU", "APPE", "ALLO", "REST",
    "RNFR", "RNTO", "ABOR", "DELE", "RMD", "MKD", "PWD", "LIST", "NLST", "SITE", "SYST", "STAT",
    "FEAT", "OPTS", "PBSZ", "PROT", "CCC", "SIZE", "MDTM", "MLSD", "MLST", "MFMT", "HOST", "LANG",
    "XPWD", "XCWD", "XMKD", "XRMD",
];

/// POP3's commands (RFC 1939, 2449 CAPA, 2595 STLS, 5034 AUTH).
const POP3: &[&str] = &[
    "USER", "PASS", "APOP", "STAT", "LIST", "RETR", "DELE", "NOOP", "RSET", "QUIT", "TOP", "UIDL",
    "CAPA", "STLS", "AUTH",
];

/// IMAP's commands (RFC 9051 and the extensions clients use).
const IMAP: &[&str] = &[
    "CAPABILITY",
    "NOOP",
    "LOGOUT",
    "STARTTLS",
    "AUTHENTICATE",
    "LOGIN",
    "SELECT",
    "EXAMINE",
    "CREATE",
    "DELETE",
    "RENAME",
    "SUBSCRIBE",
    "UNSUBSCRIBE",
    "LIST",
    "LSUB",
    "STATUS",
    "APPEND",
    "CHECK",
    "CLOSE",
    "UNSELECT",
    "EXPUNGE",
    "SEARCH",
    "FETCH",
    "STORE",
    "COPY",
    "MOVE",
    "UID",
    "IDLE",
    "ENABLE",
    "NAMESPACE",
    "ID",
    "GETQUOTA",
    "GETQUOTAROOT",
];

impl TextProtocol {
    /// The protocol whose greeting `head` (the server's first bytes) is.
    pub(crate) fn from_greeting(head: &[u8]) -> Option<TextProtocol> {
        if head.starts_with(b"220 ") || head.starts_with(b"220-") {
            Some(TextProtocol::SmtpOrFtp)
        } else if head.starts_with(b"+OK") {
            Some(TextProtocol::Pop3)
        } else if head.starts_with(b"* OK") || head.starts_with(b"* PREAUTH") {
            Some(TextProtocol::Imap)
        } else {
            None
        }
    }

    /// The command `head` (the start of the client's data) begins with,
    /// in capitals (`UID FETCH` for IMAP's UID commands), or None when it
    /// begins with no command of the protocol.
    pub(crate) fn command(self, head: &[u8]) -> Option<String> {
        let line = crate::exchange::first_line(head)?;
        // The untagged line that ends IMAP's IDLE (RFC 2177).
        if self == TextProtocol::Imap && line.eq_ignore_ascii_case("DONE") {
            return Some("DONE".to_string());
        }
        let mut words = line.split(' ');
        if self == TextProtocol::Imap {
            // The tag: letters, digits and a few marks, never empty.
            let tag = words.next()?;
            if tag.is_empty() || !tag.bytes().all(|b| b.is_ascii_graphic() && b != b'*') {
                return None;
            }
        }
        let known = |word: &str| {
            let list = match self {
                TextProtocol::SmtpOrFtp => SMTP_FTP,
                TextProtocol::Pop3 => POP3,
                TextProtocol::Imap => IMAP,
            };
            list.iter().find(|c| c.eq_ignore_ascii_case(word)).copied()
        };
        // "MAIL FROM:<a@b>": the command is the word before the colon's
        // argument as much as before a space.
        let first = words.next()?;
        let command = known(first.split(':').next().unwrap_or(first))?;
        if self == TextProtocol::Imap && command == "UID" {
            let next = known(words.next()?)?;
            return Some(format!("UID {next}"));
        }
        Some(command.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn greetings_tell_the_protocol() {
        let of = TextProtocol::from_greeting;
        assert_eq!(
            of(b"220 mail.example ESMTP Exim 4.96\r\n"),
            Some(TextProtocol::SmtpOrFtp)
        );
        assert_eq!(of(b"220-ProFTPD\r\n"), Some(TextProtocol::SmtpOrFtp));
        assert_eq!(of(b"+OK Dovecot ready.\r\n"), Some(TextProtocol::Pop3));
        assert_eq!(
            of(b"* OK [CAPABILITY IMAP4rev1] ready\r\n"),
            Some(TextProtocol::Imap)
        );
        assert_eq!(of(b"* PREAUTH ready\r\n"), Some(TextProtocol::Imap));
        // MySQL's handshake, SSH's banner, HTTP: no text commands.
        assert_eq!(of(b"J\x00\x00\x00\x0a5.5.5-10.11"), None);
        assert_eq!(of(b"SSH-2.0-OpenSSH_9.2\r\n"), None);
        assert_eq!(of(b"HTTP/1.1 200 OK\r\n"), None);
        assert_eq!(of(b"2200 "), None);
    }

    #[test]
    fn a_request_is_named_by_its_command_never_by_its_arguments() {
        let smtp = TextProtocol::SmtpOrFtp;
        assert_eq!(smtp.command(b"EHLO vm\r\n").as_deref(), Some("EHLO"));
        assert_eq!(
            smtp.command(b"MAIL FROM:<me@example.com>\r\nRCPT TO:<you@example.com>\r\n")
                .as_deref(),
            Some("MAIL")
        );
        assert_eq!(
            smtp.command(b"mail from:<me@example.com>\r\n").as_deref(),
            Some("MAIL")
        );
        assert_eq!(smtp.command(b"QUIT\r\n").as_deref(), Some("QUIT"));
        assert_eq!(
            smtp.command(b"RETR secret-name.txt\r\n").as_deref(),
            Some("RETR")
        );
        assert_eq!(smtp.command(b"PASS hunter2\r\n").as_deref(), Some("PASS"));
        // A message's lines after DATA, a file's bytes: no command.
        assert_eq!(smtp.command(b"Date: Wed, 25 Nov 2026\r\n"), None);
        assert_eq!(smtp.command(b"Subject test\r\n"), None);
        assert_eq!(smtp.command(b"\x16\x03\x01\x02\x00"), None);
        assert_eq!(smtp.command(b""), None);
        let pop3 = TextProtocol::Pop3;
        assert_eq!(pop3.command(b"RETR 1\r\n").as_deref(), Some("RETR"));
        assert_eq!(pop3.command(b"EHLO x\r\n"), None);
        let imap = TextProtocol::Imap;
        assert_eq!(
            imap.command(b"a001 LOGIN user pass\r\n").as_deref(),
            Some("LOGIN")
        );
        assert_eq!(
            imap.command(b"A3 uid fetch 1:* (FLAGS)\r\n").as_deref(),
            Some("UID FETCH")
        );
        assert_eq!(imap.command(b"LOGIN user pass\r\n"), None);
        assert_eq!(imap.command(b"* 1 FETCH\r\n"), None);
        assert_eq!(imap.command(b"a1 UID\r\n"), None);
        // IDLE's end has no tag; a DONE inside a line is no command.
        assert_eq!(imap.command(b"DONE\r\n").as_deref(), Some("DONE"));
        assert_eq!(imap.command(b"a5 DONE\r\n"), None);
        assert_eq!(smtp.command(b"DONE\r\n"), None);
    }
}
