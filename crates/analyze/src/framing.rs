//! Following messages that say their own length (MQTT, PostgreSQL, AMQP)
//! across TCP segments, and finding the way back after a hole.
//!
//! A sender writes whole messages, but TCP cuts them where it likes: a
//! segment may begin inside a message begun in an earlier one, and hold
//! the heads of several more. Each message's header gives its length, so
//! the bytes still to come of the one under way say where the next
//! begins. A hole in the capture (bytes it never saw), or a header cut in
//! two by a segment's end, loses the count; the way back is a segment
//! that is whole messages from its first byte to its last, which is how a
//! sender that writes message by message starts a new segment.

/// One direction's place in a stream of length-prefixed messages.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Follow {
    /// Bytes of the message under way still to come.
    rest: u64,
    /// The count was lost (a hole, a header split across segments) since
    /// the last segment that was whole messages.
    lost: bool,
}

/// What walking one segment found besides its messages.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Walked {
    /// The segment began inside a message begun in an earlier one.
    pub(crate) continued: bool,
    /// Where a header began that could not be read (in a hole the capture
    /// left, cut by it or split across segments): what followed in the
    /// segment is unknown, and the count is lost until a segment is whole
    /// messages.
    pub(crate) cut_at: Option<u64>,
}

impl Follow {
    /// Walks a segment's stream bytes (`head` captured, `len` in all,
    /// which includes bytes the capture missed), calling `each` with the
    /// header and offset of every message that begins in it. `header`
    /// reads the header at the start of the bytes it is given: what the
    /// caller wants of it and the whole message's length (header
    /// included), or `None` when no header of the protocol's is there or
    /// the bytes end inside it. `None` when the count is lost and the
    /// segment does not find it again.
    pub(crate) fn walk<H>(
        &mut self,
        head: &[u8],
        len: u64,
        header: impl Fn(&[u8]) -> Option<(H, u64)>,
        mut each: impl FnMut(H, u64),
    ) -> Option<Walked> {
        if self.lost {
            if !whole_messages(head, len, &header) {
                return None;
            }
            *self = Follow::default();
        }
        let mut at = self.rest.min(len);
        self.rest -= at;
        let mut walked = Walked {
            continued: at > 0,
            cut_at: None,
        };
        while at < len {
            let Some((h, length)) = head.get(at as usize..).and_then(&header) else {
                self.lost = true;
                walked.cut_at = Some(at);
                return Some(walked);
            };
            each(h, at);
            if at + length > len {
                self.rest = at + length - len;
            }
            at += length.max(1);
        }
        Some(walked)
    }

    /// Starts over: a message the caller read itself (one without the
    /// protocol's usual header: PostgreSQL's start-up packet) begins at
    /// the next byte, `n` bytes long (0: a message of the protocol's).
    pub(crate) fn restart(&mut self, n: u64) {
        *self = Follow {
            rest: n,
            lost: false,
        };
    }

    /// Loses the count (bytes that cannot be read as messages).
    pub(crate) fn lose(&mut self) {
        self.lost = true;
    }

    /// Whether a message is under way: the last segment's end cut it.
    pub(crate) fn inside(&self) -> bool {
        !self.lost && self.rest > 0
    }
}

/// Whether a segment's bytes are messages from its first byte to its last
/// (all captured).
pub(crate) fn whole_messages<H>(
    head: &[u8],
    len: u64,
    header: impl Fn(&[u8]) -> Option<(H, u64)>,
) -> bool {
    if head.len() as u64 != len || head.is_empty() {
        return false;
    }
    let mut at = 0u64;
    while at < len {
        let Some((_, length)) = header(&head[at as usize..]) else {
            return false;
        };
        at += length.max(1);
    }
    at == len
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A toy protocol: a message is a length byte (the whole message's)
    /// and that many bytes less one; zero is no header.
    fn header(b: &[u8]) -> Option<(u8, u64)> {
        let n = *b.first()?;
        (n > 0).then_some((n, u64::from(n)))
    }

    fn walk(f: &mut Follow, head: &[u8], len: u64) -> (Option<Walked>, Vec<(u8, u64)>) {
        let mut seen = Vec::new();
        let w = f.walk(head, len, header, |h, at| seen.push((h, at)));
        (w, seen)
    }

    #[test]
    fn messages_are_found_across_segments() {
        let mut f = Follow::default();
        // 3 bytes, then 5 of which 2 come here.
        let (w, seen) = walk(&mut f, &[3, 0, 0, 5, 0], 5);
        assert_eq!(w, Some(Walked::default()));
        assert_eq!(seen, [(3, 0), (5, 3)]);
        // The 3 left of the 5, then a 2.
        let (w, seen) = walk(&mut f, &[0, 0, 0, 2, 0], 5);
        assert_eq!(w.map(|w| w.continued), Some(true));
        assert_eq!(seen, [(2, 3)]);
    }

    #[test]
    fn a_hole_loses_the_count_until_a_segment_is_whole_messages() {
        let mut f = Follow::default();
        // A message whose header is in a hole: 10 bytes, none captured.
        let (w, seen) = walk(&mut f, &[], 10);
        assert_eq!(w.and_then(|w| w.cut_at), Some(0));
        assert!(seen.is_empty());
        // Not whole messages (a zero), not all captured: still lost.
        assert_eq!(walk(&mut f, &[2, 0, 0], 3).0, None);
        assert_eq!(walk(&mut f, &[2, 0], 4).0, None);
        // Whole messages: found again.
        let (w, seen) = walk(&mut f, &[2, 0, 1], 3);
        assert_eq!(w, Some(Walked::default()));
        assert_eq!(seen, [(2, 0), (1, 2)]);
    }

    #[test]
    fn a_message_longer_than_the_capture_keeps_the_count() {
        // A 200-byte message of which the capture kept 4 (a snap length):
        // its length skips the rest, and the next segment starts clean.
        let mut f = Follow::default();
        let (w, seen) = walk(&mut f, &[200, 0, 0, 0], 200);
        assert_eq!((w, seen), (Some(Walked::default()), vec![(200, 0)]));
        assert_eq!(walk(&mut f, &[1], 1).1, [(1, 0)]);
        // A message the caller read itself, then the protocol's.
        f.restart(3);
        let (w, seen) = walk(&mut f, &[0, 0, 0, 1], 4);
        assert_eq!(w.map(|w| w.continued), Some(true));
        assert_eq!(seen, [(1, 3)]);
    }
}
