//! The sender's clocks: in what order a direction's segments left their
//! sender, whatever order they passed the capture point in.
//!
//! Most stacks number a connection's IPv4 datagrams in the order they send
//! them, and every transmission takes the next number, a re-send included:
//! Linux a per-socket counter for its DF packets (`inet_id`, stepped by
//! the segment count of a TSO send in `ip_select_ident_segs`), Windows one
//! counter for the host. TCP sends new data in sequence order, so of a
//! hole the capture saw open (a segment beyond the bytes seen so far: the
//! hole's *jumper*), a segment that fills it and left *before* the jumper
//! is the original (delayed on the path: reordering), and one that left
//! *after* it a re-send, however soon it followed.
//!
//! The identification only says this where the sender counts: a direction
//! whose identifications have stepped forward by small amounts
//! [`MIN_RUN`] times in a row, or once when the two are [`NEAR`]. Stacks
//! that pick it at random (OpenBSD, macOS, pf's `scrub random-id`, some
//! NATs) fail that test within a few packets (a step of at most
//! [`MAX_STEP`] is 1 in 32 at random), as do senders that leave it 0 or
//! fixed. Without it (those, and IPv6) the TCP timestamp is the clock:
//! never decreasing (RFC 7323), a tick apart tells the order, the same
//! tick nothing. With neither, the tracker decides by timing as Wireshark
//! does.
//!
//! Before either, the timestamps rule out a re-send outright. A re-send
//! needs a trigger: the receiver's duplicate ACKs or SACKs, which the
//! sender took (and echoes the timestamp of from then on: they advance
//! its `TS.Recent`, RFC 7323 4.3), or a timer, which fires no sooner than
//! a tail-loss probe's 10 ms, ticks later on any TCP clock but the
//! coarsest. A filler stamped in the jumper's tick, still echoing a
//! timestamp older than the receiver's first one after the jumper (what
//! any trigger carried at least: the receiver's clock never goes back),
//! left with the jumper before anything could ask for it: the original,
//! whatever its identification says (a sender's offload or queues number
//! one burst out of order: nDPI's capture.pcap 3, a burst's last two
//! segments numbered after its tail and 40 ms behind it on the path).

use std::cmp::Ordering;

use crate::seq;

/// Forward steps in a row before the identification is trusted as a
/// counter (random identifications pass with odds of 1 in 32^4).
const MIN_RUN: u8 = 4;

/// The largest step one packet may make and still count as the next
/// number: Windows' counter is shared by all the host's traffic, so a busy
/// host skips hundreds between one connection's packets.
const MAX_STEP: u16 = 2048;

/// How far apart two packets' identifications may be and still be
/// compared as numbers of one count (a segment held behind the packets
/// sent after it), not a restart of the count.
const MAX_APART: u16 = 8192;

/// A short connection shows few steps; two identifications this close
/// together after one forward step are a counter's all the same (random
/// ones fall this close with odds of 1 in 32 * 2048).
const NEAR: u16 = 16;

/// The holes remembered at once: each is what a loss or a reordering
/// leaves open until its bytes come, and is kept after for the late
/// original that may follow its re-send. A bulk sender on a path that
/// holds a packet back for a round trip opens a hole every few dozen
/// packets meanwhile; most connections open none, and allocate nothing.
/// A new hole takes the place of the oldest filled one, and of the
/// oldest open one only when none is filled: an original held while
/// hundreds of later packets passed, opening and filling more holes
/// than this meanwhile, is still compared with its own hole's jumper
/// (tests/data/reorder-miss).
const HOLES: usize = 16;

/// What a segment carries of its sender's clocks: its IPv4 identification
/// and its TCP timestamp value (RFC 7323: never decreasing, in the
/// sender's own ticks, a millisecond on Linux).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SentMark {
    pub id: Option<u16>,
    pub tsval: Option<u32>,
    /// The timestamp it echoed (TSecr): the newest of the receiver's its
    /// sender had taken.
    pub tsecr: Option<u32>,
}

/// A hole the capture saw open: the bytes `from..to` were skipped by the
/// segment marked `jumper`; those below `filled` have come since.
#[derive(Debug, Default, Clone, Copy)]
struct Hole {
    from: u32,
    to: u32,
    filled: u32,
    jumper: SentMark,
    /// The receiver's first timestamp (TSval) captured after the jumper:
    /// no trigger of a re-send carried an older one.
    heard: Option<u32>,
}

/// A segment that falls in a hole the capture saw open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HoleFill {
    /// When it left against the hole's jumper: `Less` before (the
    /// original, overtaken), `Greater` after (a re-send); `None` when the
    /// sender's clocks do not tell.
    pub sent: Option<Ordering>,
    /// Its bytes of the hole the capture had not seen before: none for a
    /// late original whose re-send passed it on the way.
    pub new_bytes: u32,
}

/// One direction's identifications and the holes it left, as far as they
/// show its send order.
#[derive(Debug, Default, Clone)]
pub(crate) struct SendOrder {
    /// The highest identification seen (wrapping), if any.
    highest: Option<u16>,
    /// Forward steps in a row, saturating.
    run: u8,
    /// The latest holes, oldest first.
    holes: Vec<Hole>,
    /// The first byte the capture saw of the direction: of the bytes from
    /// it to the highest seen, all but the holes' have passed.
    start: Option<u32>,
    /// A hole was overwritten while still open: the bytes below the
    /// highest can no longer be told passed.
    forgot: bool,
}

impl SendOrder {
    /// Takes one packet of the direction (a capture's copy excluded) and
    /// its identification; `None` and 0 (IPv6, or a stack that leaves it
    /// unset) tell nothing.
    pub fn observe(&mut self, id: Option<u16>) {
        let Some(id) = id.filter(|&id| id != 0) else {
            return;
        };
        let Some(highest) = self.highest else {
            self.highest = Some(id);
            return;
        };
        let ahead = id.wrapping_sub(highest);
        if (1..=MAX_STEP).contains(&ahead) {
            self.run = self.run.saturating_add(1);
            self.highest = Some(id);
        } else if ahead == 0 || highest.wrapping_sub(id) <= MAX_APART {
            // The same number again (a fixed-ID TSO burst) or an earlier
            // one (a packet overtaken): neither a step nor a break.
        } else {
            self.run = 0;
            self.highest = Some(id);
        }
    }

    /// Remembers that the segment marked `jumper` skipped the bytes
    /// `from..to`, which the capture has not seen.
    pub fn hole(&mut self, from: u32, to: u32, jumper: SentMark) {
        let hole = Hole {
            from,
            to,
            filled: from,
            jumper,
            heard: None,
        };
        if self.holes.len() == HOLES {
            // The oldest filled hole makes room: an open one's bytes are
            // sure to come (the original or a re-send), a filled one's
            // again only when a late original follows its re-send.
            let gone = self
                .holes
                .iter()
                .position(|h| h.filled == h.to)
                .unwrap_or(0);
            let old = self.holes.remove(gone);
            self.forgot |= seq::lt(old.filled, old.to);
        }
        self.holes.push(hole);
    }

    /// Takes a timestamp (TSval) of the receiver's, captured now: the
    /// first after each hole's jumper is kept.
    pub fn heard(&mut self, tsval: u32) {
        for hole in &mut self.holes {
            hole.heard.get_or_insert(tsval);
        }
    }

    /// Forgets the bytes and holes seen: a SYN started the count again (a
    /// new connection on the same ports). The identifications go on.
    pub fn restart(&mut self) {
        self.holes.clear();
        self.forgot = false;
        self.start = None;
    }

    /// Takes the bytes `seq..end` of a segment that passed (a capture's
    /// copy excluded).
    pub fn passed_by(&mut self, seq: u32, end: u32) {
        let start = match self.start {
            None => seq,
            // Bytes just below the first seen, ending at or past it: the
            // passed bytes begin earlier.
            Some(start) if seq::lt(seq, start) && seq::le(start, end) => seq,
            Some(start) => start,
        };
        // Sequence numbers compare within half their space: a long
        // transfer keeps its start a gigabyte behind.
        self.start = Some(if seq::diff(end, start) > 1 << 30 {
            end.wrapping_sub(1 << 30)
        } else {
            start
        });
    }

    /// Whether the byte `seq` had passed the capture point already: at or
    /// after the first byte seen, in no hole still open, and no open hole
    /// forgotten. A segment that begins with such a byte cannot be an
    /// original delayed on the path (that would have left a hole where it
    /// belongs, and a sender's originals never overlap): it carries bytes
    /// sent again, however soon after the highest it comes.
    pub fn passed(&self, seq: u32) -> bool {
        let Some(start) = self.start else {
            return false;
        };
        !self.forgot
            && seq::le(start, seq)
            && !self
                .holes
                .iter()
                .any(|h| seq::le(h.filled, seq) && seq::lt(seq, h.to))
    }

    /// Takes a segment `seq..end` below the highest byte seen, marked
    /// `mark`: if it falls in a hole the capture saw open, when it left
    /// against the hole's jumper. `None`: no hole remembered there.
    pub fn fill(&mut self, seq: u32, end: u32, mark: SentMark) -> Option<HoleFill> {
        let counter = self.run;
        let hole = self
            .holes
            .iter_mut()
            .find(|h| seq::le(h.from, seq) && seq::lt(seq, h.to))?;
        // Bytes above the filled edge are new; a hole filled out of order
        // moves the edge only when the fill reaches it.
        let new_from = seq::max(seq, hole.filled);
        let new_bytes = seq::diff(seq::min(end, hole.to), new_from).max(0) as u32;
        if seq::le(seq, hole.filled) && seq::lt(hole.filled, end) {
            hole.filled = seq::min(end, hole.to);
        }
        // Stamped in the jumper's tick, echoing what the sender had
        // taken before any trigger came: it left with the jumper.
        let untriggered = mark.tsval.is_some()
            && mark.tsval == hole.jumper.tsval
            && mark
                .tsecr
                .zip(hole.heard)
                .is_some_and(|(echoed, heard)| seq::lt(echoed, heard));
        if untriggered {
            return Some(HoleFill {
                sent: Some(Ordering::Less),
                new_bytes,
            });
        }
        let sent = by_id(counter, mark.id, hole.jumper.id).or_else(|| {
            let (tsval, jumper) = (mark.tsval?, hole.jumper.tsval?);
            match seq::diff(tsval, jumper).cmp(&0) {
                Ordering::Equal => None,
                order => Some(order),
            }
        });
        Some(HoleFill { sent, new_bytes })
    }
}

/// When a packet with identification `id` left against the jumper's, if
/// the identifications are a counter's (`run` forward steps seen).
fn by_id(run: u8, id: Option<u16>, jumper: Option<u16>) -> Option<Ordering> {
    let id = id.filter(|&id| id != 0)?;
    let jumper = jumper.filter(|&id| id != 0)?;
    let (order, apart) = match id.wrapping_sub(jumper) {
        0 => return None,
        after if after <= u16::MAX / 2 => (Ordering::Greater, after),
        _ => (Ordering::Less, jumper.wrapping_sub(id)),
    };
    let counter = (run >= MIN_RUN && apart <= MAX_APART) || (run >= 1 && apart <= NEAR);
    counter.then_some(order)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counted(ids: &[u16]) -> SendOrder {
        let mut order = SendOrder::default();
        for &id in ids {
            order.observe(Some(id));
        }
        order
    }

    fn id(id: u16) -> SentMark {
        SentMark {
            id: Some(id),
            ..SentMark::default()
        }
    }

    fn sent(order: &mut SendOrder, seq: u32, mark: SentMark) -> Option<Ordering> {
        order.fill(seq, seq + 1000, mark).and_then(|f| f.sent)
    }

    #[test]
    fn a_segment_sent_before_the_jumper_is_the_original() {
        // 100..=105 sent in order, 1000 bytes each from seq 0; 103 (3000..)
        // passed first and jumped 2000..3000, which 102 then filled.
        let mut order = counted(&[100, 101, 103]);
        order.hole(2000, 3000, id(103));
        assert_eq!(sent(&mut order, 2000, id(102)), Some(Ordering::Less));
        // Far apart, two steps are not enough.
        assert_eq!(sent(&mut order, 2000, id(103 + 17)), None);
        let mut order = counted(&[103]);
        order.hole(2000, 3000, id(103));
        assert_eq!(sent(&mut order, 2000, id(102)), None, "no step");
        let mut order = counted(&[100, 101, 102, 104, 105]);
        order.hole(3000, 4000, id(104));
        assert_eq!(sent(&mut order, 3000, id(103)), Some(Ordering::Less));
        // The bytes re-sent after the jumper left: a retransmission.
        assert_eq!(sent(&mut order, 3000, id(106)), Some(Ordering::Greater));
        // Bytes outside any hole the capture saw: not for this rule.
        assert_eq!(order.fill(4000, 5000, id(103)), None);
        assert_eq!(order.fill(2999, 3999, id(103)), None);
    }

    #[test]
    fn each_hole_is_compared_with_its_own_jumper() {
        // 1 lost (jumped by 2), 5 lost (jumped by 6); 1's re-send (8) left
        // after 2 but before 6: a re-send all the same.
        let mut order = counted(&[10, 12, 13, 14, 16, 17]);
        order.hole(1000, 2000, id(12));
        order.hole(5000, 6000, id(16));
        assert_eq!(sent(&mut order, 1000, id(15)), Some(Ordering::Greater));
        assert_eq!(sent(&mut order, 5000, id(15)), Some(Ordering::Less));
    }

    #[test]
    fn a_hole_is_remembered_while_the_next_fifteen_open() {
        let mut order = counted(&[1, 2, 3, 4]);
        for n in 0..HOLES as u32 {
            order.hole(n * 10_000, n * 10_000 + 1000, id(10 + n as u16));
        }
        assert_eq!(sent(&mut order, 0, id(9)), Some(Ordering::Less));
        order.hole(HOLES as u32 * 10_000, HOLES as u32 * 10_000 + 1000, id(40));
        assert_eq!(order.fill(0, 1000, id(9)), None, "the oldest forgotten");
        assert_eq!(sent(&mut order, 10_000, id(10)), Some(Ordering::Less));
    }

    #[test]
    fn a_filled_hole_makes_room_before_an_open_one() {
        // The first hole stays open while fifteen more open and are
        // filled: the sixteenth new one takes the oldest filled one's
        // place, and the open hole's original is still told apart.
        let mut order = counted(&[1, 2, 3, 4]);
        order.passed_by(0, 1000);
        order.hole(1000, 2000, id(10));
        for n in 1..HOLES as u32 {
            order.hole(n * 10_000, n * 10_000 + 1000, id(10 + n as u16));
            order.fill(n * 10_000, n * 10_000 + 1000, id(9 + n as u16));
        }
        order.hole(HOLES as u32 * 10_000, HOLES as u32 * 10_000 + 1000, id(40));
        assert_eq!(order.fill(10_000, 11_000, id(41)), None, "filled, gone");
        assert!(order.passed(500), "no open hole forgotten");
        assert_eq!(sent(&mut order, 1000, id(9)), Some(Ordering::Less));
        assert_eq!(sent(&mut order, 20_000, id(13)), Some(Ordering::Greater));
    }

    #[test]
    fn a_late_original_after_its_re_send_brings_nothing_new() {
        let mut order = counted(&[1, 2, 3, 5, 6]);
        order.hole(2000, 3000, id(4));
        let resend = order.fill(2000, 3000, id(7)).unwrap();
        assert_eq!(resend.sent, Some(Ordering::Greater));
        assert_eq!(resend.new_bytes, 1000);
        let original = order.fill(2000, 3000, id(3)).unwrap();
        assert_eq!(original.sent, Some(Ordering::Less));
        assert_eq!(original.new_bytes, 0);
        // A hole filled out of order: each part new once.
        let mut order = counted(&[1, 2, 3, 4]);
        order.hole(0, 3000, id(5));
        assert_eq!(order.fill(1000, 2000, id(2)).unwrap().new_bytes, 1000);
        assert_eq!(order.fill(0, 1000, id(1)).unwrap().new_bytes, 1000);
        assert_eq!(order.fill(0, 1000, id(6)).unwrap().new_bytes, 0);
        // A re-send cut differently: only what the hole still lacked
        // above the edge filled from its start.
        let mut order = counted(&[1, 2, 3, 4]);
        order.hole(0, 3000, id(5));
        assert_eq!(order.fill(0, 1000, id(6)).unwrap().new_bytes, 1000);
        assert_eq!(order.fill(500, 3500, id(7)).unwrap().new_bytes, 2000);
    }

    #[test]
    fn bytes_passed_are_those_from_the_first_seen_less_the_open_holes() {
        let mut order = SendOrder::default();
        assert!(!order.passed(0), "nothing seen");
        order.passed_by(1000, 2000);
        assert!(order.passed(1000) && order.passed(1999));
        assert!(!order.passed(999), "before the first byte seen");
        // A hole 2000..3000, jumped by 3000..4000.
        order.hole(2000, 3000, id(5));
        order.passed_by(3000, 4000);
        assert!(order.passed(1500) && order.passed(3500));
        assert!(!order.passed(2000) && !order.passed(2999), "in the hole");
        // Its front filled: those bytes passed, the rest not yet.
        order.fill(2000, 2500, id(4));
        order.passed_by(2000, 2500);
        assert!(order.passed(2000) && !order.passed(2500));
        // Bytes just below the first seen, reaching it, move it back.
        order.passed_by(500, 1000);
        assert!(order.passed(500) && !order.passed(499));
        order.passed_by(0, 100);
        assert!(!order.passed(0), "a gap below: not known to have passed");
        // A new connection on the same ports forgets the old one.
        order.restart();
        order.passed_by(90_000, 90_001);
        assert!(order.passed(90_000) && !order.passed(2000));
    }

    #[test]
    fn an_open_hole_forgotten_leaves_nothing_known_to_have_passed() {
        let mut order = counted(&[1, 2, 3, 4]);
        order.passed_by(0, 1000);
        for n in 0..HOLES as u32 {
            order.hole(n * 2000 + 1000, n * 2000 + 2000, id(10));
        }
        assert!(order.passed(500));
        // The oldest, filled, may go.
        order.fill(1000, 2000, id(9));
        order.hole(40_000, 41_000, id(11));
        assert!(order.passed(500) && order.passed(1500));
        // The next, still open, may not.
        order.hole(42_000, 43_000, id(12));
        assert!(!order.passed(500));
    }

    #[test]
    fn a_long_transfer_keeps_its_start_within_half_the_sequence_space() {
        let mut order = SendOrder::default();
        order.passed_by(0, 1000);
        let mut at = 1000u32;
        while at < 0xC000_0000 {
            order.passed_by(at, at + 0x1000_0000);
            at += 0x1000_0000;
        }
        assert!(order.passed(at - 1000) && order.passed(at - (1 << 30)));
        assert!(!order.passed(at - (1 << 30) - 1));
    }

    #[test]
    fn the_count_wraps() {
        let mut order = counted(&[65533, 65534, 65535, 1, 3]);
        order.hole(0, 1000, id(3));
        assert_eq!(sent(&mut order, 0, id(65535)), Some(Ordering::Less));
        assert_eq!(sent(&mut order, 0, id(2)), Some(Ordering::Less));
        assert_eq!(sent(&mut order, 0, id(4)), Some(Ordering::Greater));
        // Sequence numbers wrap too.
        order.hole(u32::MAX - 500, 500, id(3));
        assert_eq!(sent(&mut order, 10, id(2)), Some(Ordering::Less));
    }

    #[test]
    fn random_identifications_tell_nothing() {
        let mut order = counted(&[100, 101, 102, 103, 40_000, 7, 52_000]);
        order.hole(0, 1000, id(52_000));
        assert_eq!(sent(&mut order, 0, id(51_999)), None);
        assert_eq!(sent(&mut order, 0, id(50_000)), None);
        // A run broken late is trusted again as it is rebuilt: close
        // numbers after one step, far ones after four.
        order.observe(Some(52_001));
        assert_eq!(sent(&mut order, 0, id(51_999)), Some(Ordering::Less));
        for id in 52_002..=52_003 {
            order.observe(Some(id));
        }
        assert_eq!(sent(&mut order, 0, id(50_000)), None);
        order.observe(Some(52_004));
        assert_eq!(sent(&mut order, 0, id(50_000)), Some(Ordering::Less));
    }

    #[test]
    fn overtaken_packets_and_repeats_keep_the_run() {
        let mut order = counted(&[10, 11, 13, 12, 14, 14, 15, 16]);
        order.hole(0, 1000, id(16));
        assert_eq!(sent(&mut order, 0, id(15)), Some(Ordering::Less));
    }

    #[test]
    fn timestamps_tell_when_identifications_do_not() {
        let ts = |id: Option<u16>, tsval: u32| SentMark {
            id,
            tsval: Some(tsval),
            tsecr: None,
        };
        // IPv6: no identification at all.
        let mut order = SendOrder::default();
        order.hole(0, 1000, ts(None, 5000));
        assert_eq!(sent(&mut order, 0, ts(None, 4999)), Some(Ordering::Less));
        assert_eq!(sent(&mut order, 0, ts(None, 5001)), Some(Ordering::Greater));
        // The same tick: sent within the same millisecond, either way.
        assert_eq!(sent(&mut order, 0, ts(None, 5000)), None);
        // The timestamp wraps like a sequence number.
        order.hole(0, 1000, ts(None, 2));
        assert_eq!(
            sent(&mut order, 0, ts(None, u32::MAX)),
            Some(Ordering::Less)
        );
        // A counter's identifications come first.
        let mut order = counted(&[1, 2, 3, 4, 5]);
        order.hole(0, 1000, ts(Some(5), 100));
        assert_eq!(sent(&mut order, 0, ts(Some(4), 101)), Some(Ordering::Less));
    }

    #[test]
    fn a_filler_stamped_with_its_jumper_before_any_trigger_is_the_original() {
        // The sender's burst stamped TSval 221 echoing the receiver's 305;
        // its counter numbered the filler (13) after the jumper (12). The
        // receiver then spoke with TSval 768: a fast re-send, taking that
        // duplicate ACK or a later one, would echo at least 768.
        let mark = |id: u16, tsval: u32, tsecr: u32| SentMark {
            id: Some(id),
            tsval: Some(tsval),
            tsecr: Some(tsecr),
        };
        let mut order = counted(&[8, 9, 10, 11, 12]);
        order.hole(0, 1000, mark(12, 221, 305));
        order.heard(768);
        order.heard(806);
        assert_eq!(
            sent(&mut order, 0, mark(13, 221, 305)),
            Some(Ordering::Less)
        );
        // Echoing the duplicate ACK: the sender had taken it, and the
        // counter says after.
        assert_eq!(
            sent(&mut order, 0, mark(13, 221, 768)),
            Some(Ordering::Greater)
        );
        // A later tick: a timer's re-send may echo nothing newer.
        assert_eq!(
            sent(&mut order, 0, mark(13, 422, 305)),
            Some(Ordering::Greater)
        );
        // The receiver's clock had not ticked (a LAN's round trip inside
        // a millisecond): the echo tells nothing.
        let mut order = counted(&[8, 9, 10, 11, 12]);
        order.hole(0, 1000, mark(12, 221, 305));
        order.heard(305);
        assert_eq!(
            sent(&mut order, 0, mark(13, 221, 305)),
            Some(Ordering::Greater)
        );
        // Nothing heard from the receiver since the jumper: nor here.
        let mut order = counted(&[8, 9, 10, 11, 12]);
        order.hole(0, 1000, mark(12, 221, 305));
        assert_eq!(
            sent(&mut order, 0, mark(13, 221, 305)),
            Some(Ordering::Greater)
        );
        // What was heard before the hole opened is not after its jumper.
        let mut order = counted(&[8, 9, 10, 11, 12]);
        order.heard(768);
        order.hole(0, 1000, mark(12, 221, 305));
        assert_eq!(
            sent(&mut order, 0, mark(13, 221, 305)),
            Some(Ordering::Greater)
        );
    }

    #[test]
    fn no_identification_tells_nothing() {
        let mut order = counted(&[0, 0, 0, 0, 0, 0]);
        order.hole(0, 1000, id(0));
        assert_eq!(sent(&mut order, 0, id(0)), None);
        let mut order = counted(&[1, 2, 3, 4, 5, 6]);
        order.hole(0, 1000, SentMark::default());
        assert_eq!(sent(&mut order, 0, id(5)), None);
        order.hole(0, 1000, id(6));
        assert_eq!(sent(&mut order, 0, SentMark::default()), None);
    }
}
