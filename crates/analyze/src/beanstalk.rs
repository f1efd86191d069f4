//! beanstalkd's work queue: the commands that ask the server to hold its
//! answer.
//!
//! A worker takes jobs with `reserve`: the server answers `RESERVED` when
//! a job is ready in a tube the worker watches, which may be when a
//! producer puts one, seconds later; `reserve-with-timeout N` waits at
//! most N seconds and answers `TIMED_OUT` (beanstalkd's protocol.txt).
//! Read as turns, an idle worker's every reserve was the server's think
//! time (beanstalkd with a producer putting a job every 1.2 s: 4.4 s of
//! `server_think_time`). The wait is the worker's asking, as a Redis
//! blocking pop's is (resp.rs). `reserve-with-timeout 0` and
//! `reserve-job <id>` answer at once and are timed.
//!
//! The commands are told by their whole line, which no other protocol's
//! request is: `reserve\r\n`, `reserve-with-timeout <seconds>\r\n`.

/// A beanstalkd command that asks the server to wait for a job or a
/// timeout, at the start of a client's data: its name.
pub(crate) fn blocking_command(head: &[u8]) -> Option<&'static str> {
    let line = head.strip_prefix(b"reserve")?;
    if line.starts_with(b"\r\n") {
        return Some("reserve");
    }
    let seconds = line.strip_prefix(b"-with-timeout ")?;
    let end = seconds.iter().position(|&b| b == b'\r')?;
    let (digits, rest) = seconds.split_at(end);
    let waits = rest.starts_with(b"\r\n")
        && !digits.is_empty()
        && digits.iter().all(u8::is_ascii_digit)
        && digits.iter().any(|&d| d != b'0');
    waits.then_some("reserve-with-timeout")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserve_and_a_reserve_with_a_timeout_ask_to_wait() {
        assert_eq!(blocking_command(b"reserve\r\n"), Some("reserve"));
        assert_eq!(
            blocking_command(b"reserve-with-timeout 1\r\n"),
            Some("reserve-with-timeout")
        );
        assert_eq!(
            blocking_command(b"reserve-with-timeout 30\r\ndelete 4\r\n"),
            Some("reserve-with-timeout")
        );
    }

    #[test]
    fn commands_answered_at_once_do_not() {
        for line in [
            &b"reserve-with-timeout 0\r\n"[..],
            b"reserve-with-timeout 00\r\n",
            b"reserve-job 12\r\n",
            b"reserve-with-timeout \r\n",
            b"reserve-with-timeout 1x\r\n",
            b"reserve-with-timeout 1",
            b"reserve",
            b"reserved\r\n",
            b"RESERVE\r\n",
            b"put 0 0 60 5\r\nhello\r\n",
            b"GET /reserve HTTP/1.1\r\n",
        ] {
            assert_eq!(blocking_command(line), None, "{line:?}");
        }
    }
}
