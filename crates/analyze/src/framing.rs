//! Following messages that say their own length (MQTT, PostgreSQL, AMQP)
//! across TCP segments, and finding the way back after a hole.
//!
//! A sender writes whole messages, but TCP cuts them where it likes: a
//! segment may begin inside a message begun in an earlier one, and hold
//! the heads of several more. Each message's header gives its length, so
//! the bytes still to come of the one under way say where the next
//! begins. A header cut in two by a segment's end is kept (its first
//! bytes, all captured) and read whole with the next segment's: in a bulk
//! transfer of HTTP/2 frames every few hundred frame boundaries fall
//! inside a 9-byte header. A hole in the capture (bytes it never saw), or
//! a cut header that is not the protocol's, loses the count; the way back
//! is a segment that is whole messages from its first byte to its last,
//! which is how a sender that writes message by message starts a new
//! segment.

/// The most of a header a segment's end may cut and the next segment
/// complete (HTTP/2's is 9 bytes, AMQP's 7, MQTT's at most 5).
const CARRY: usize = 16;

/// One direction's place in a stream of length-prefixed messages.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Follow {
    /// Bytes of the message under way still to come.
    rest: u64,
    /// The count was lost (a hole, a header that could not be read) since
    /// the last segment that was whole messages.
    lost: bool,
    /// The first bytes of a header the last segment's end cut, all
    /// captured (`carried` of them): the next segment completes it.
    carry: [u8; CARRY],
    carried: u8,
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
    /// Where a header began that the segment's end cut (all captured): its
    /// message is read with the next segment.
    pub(crate) carried_at: Option<u64>,
}

impl Follow {
    /// Walks a segment's stream bytes (`head` captured, `len` in all,
    /// which includes bytes the capture missed), calling `each` with the
    /// header, the captured bytes from the message's first (header
    /// included) and the offset in the segment where it begins, of every
    /// message whose header ends in it (negative: the message began with
    /// the last segment's last bytes, a header it cut). `header` reads the
    /// header at the start of the bytes it is given: what the caller wants
    /// of it and the whole message's length (header included), or `None`
    /// when no header of the protocol's is there or the bytes end inside
    /// it. `None` when the count is lost and the segment does not find it
    /// again.
    pub(crate) fn walk<H>(
        &mut self,
        head: &[u8],
        len: u64,
        header: impl Fn(&[u8]) -> Option<(H, u64)>,
        mut each: impl FnMut(H, &[u8], i64),
    ) -> Option<Walked> {
        if self.lost {
            if !whole_messages(head, len, &header) {
                return None;
            }
            *self = Follow::default();
        }
        let mut walked = Walked::default();
        let mut at = if self.carried > 0 {
            // The header the last segment cut, with this one's bytes.
            let n = usize::from(std::mem::take(&mut self.carried));
            let mut joined = self.carry[..n].to_vec();
            joined.extend_from_slice(head);
            match header(&joined) {
                Some((h, length)) => {
                    let length = length.max(1);
                    let shown = joined.len().min(length as usize);
                    each(h, &joined[..shown], -(n as i64));
                    length.saturating_sub(n as u64)
                }
                None if head.len() as u64 == len && joined.len() < CARRY => {
                    // Still cut (a segment of a byte or two).
                    self.keep(&joined);
                    walked.carried_at = Some(0);
                    return Some(walked);
                }
                None => {
                    self.lost = true;
                    walked.cut_at = Some(0);
                    return Some(walked);
                }
            }
        } else {
            let at = self.rest.min(len);
            self.rest -= at;
            walked.continued = at > 0;
            at
        };
        if at > len {
            self.rest = at - len;
            return Some(walked);
        }
        while at < len {
            let rest = head.get(at as usize..).unwrap_or_default();
            let Some((h, length)) = header(rest) else {
                if head.len() as u64 == len && rest.len() < CARRY {
                    // A header the segment's end cut: read with the next.
                    self.keep(rest);
                    walked.carried_at = Some(at);
                } else {
                    self.lost = true;
                    walked.cut_at = Some(at);
                }
                return Some(walked);
            };
            each(h, rest, at as i64);
            if at + length > len {
                self.rest = at + length - len;
            }
            at += length.max(1);
        }
        Some(walked)
    }

    /// Keeps a cut header's first bytes for the next segment.
    fn keep(&mut self, bytes: &[u8]) {
        self.carry[..bytes.len()].copy_from_slice(bytes);
        self.carried = bytes.len() as u8;
    }

    /// Starts over: a message the caller read itself (one without the
    /// protocol's usual header: PostgreSQL's start-up packet) begins at
    /// the next byte, `n` bytes long (0: a message of the protocol's).
    pub(crate) fn restart(&mut self, n: u64) {
        *self = Follow {
            rest: n,
            ..Follow::default()
        };
    }

    /// Loses the count (bytes that cannot be read as messages).
    pub(crate) fn lose(&mut self) {
        self.lost = true;
        self.carried = 0;
    }

    /// Whether a message is under way: the last segment's end cut it
    /// (not in its header: that message is read with the next segment).
    pub(crate) fn inside(&self) -> bool {
        !self.lost && self.rest > 0
    }

    /// Whether the message under way ends within the next `len` bytes.
    pub(crate) fn ends_within(&self, len: u64) -> bool {
        self.inside() && self.rest <= len
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

    fn walk(f: &mut Follow, head: &[u8], len: u64) -> (Option<Walked>, Vec<(u8, i64)>) {
        let mut seen = Vec::new();
        let w = f.walk(head, len, header, |h, _, at| seen.push((h, at)));
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

    /// A toy protocol whose header is two bytes: a zero, then the whole
    /// message's length.
    fn two_byte_header(b: &[u8]) -> Option<(u8, u64)> {
        match b {
            [0, n, ..] if *n > 1 => Some((*n, u64::from(*n))),
            [0] | [] => None,
            _ => None,
        }
    }

    #[test]
    fn a_header_cut_by_a_segment_s_end_is_read_with_the_next_segment() {
        let mut f = Follow::default();
        let mut seen = Vec::new();
        // A 3-byte message, then a 4-byte one whose header's first byte
        // ends the segment.
        let w = f.walk(&[0, 3, 9, 0], 4, two_byte_header, |h, b, at| {
            seen.push((h, b.to_vec(), at))
        });
        assert_eq!(w.and_then(|w| w.carried_at), Some(3));
        // The next segment: the header's second byte, the message's two
        // others, and a 2-byte message.
        let w = f.walk(&[4, 7, 7, 0, 2], 5, two_byte_header, |h, b, at| {
            seen.push((h, b.to_vec(), at))
        });
        assert_eq!(w.map(|w| (w.continued, w.cut_at)), Some((false, None)));
        assert_eq!(
            seen,
            [
                (3, vec![0, 3, 9, 0], 0),
                (4, vec![0, 4, 7, 7], -1),
                (2, vec![0, 2], 3)
            ]
        );
        // A cut header that was not one: the count is lost (once the next
        // segment's bytes are more than any header).
        let mut f = Follow::default();
        f.walk(&[0, 2, 0], 3, two_byte_header, |_, _, _| {});
        let garbage = [1; 20];
        let w = f.walk(&garbage, 20, two_byte_header, |_, _, _| {});
        assert_eq!(w.and_then(|w| w.cut_at), Some(0));
        // A header cut where the capture missed bytes: lost at once.
        let mut f = Follow::default();
        let w = f.walk(&[0], 3, two_byte_header, |_, _, _| {});
        assert_eq!(w.and_then(|w| w.cut_at), Some(0));
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
