//! HTTP/2's flow control (RFC 9113 6.9) followed sender by sender: the
//! credit each side has to send DATA, and where a sender used it up and
//! waited for more.
//!
//! A receiver grants each stream its `SETTINGS_INITIAL_WINDOW_SIZE`
//! (65,535 bytes until its SETTINGS says otherwise; a change moves every
//! open stream's credit by the difference) and the connection as a whole
//! 65,535 bytes, then gives credit back with WINDOW_UPDATE frames (on the
//! stream, or on stream 0 for the connection) as its application takes the
//! data. Each DATA frame's payload (padding included) spends the sender's
//! credit on its stream and on the connection; a sender may send no more
//! than the smaller of the two. Where that credit is smaller than the
//! path's bandwidth-delay product, the sender sends a window's worth, falls
//! silent, and goes on only when a WINDOW_UPDATE comes: HAProxy grants an
//! uploading client 65,535 bytes a stream unless
//! `tune.h2.initial-window-size` says more, Node.js 65,535 bytes a stream
//! and for the connection, a gRPC peer with a fixed window what it was
//! given.
//!
//! A stall as the capture orders it: a DATA frame P (no END_STREAM)
//! leaves its sender less than [`BLOCKED_BELOW`] bytes of credit (a
//! sender with data writes what its credit allows, partial frames
//! included, so it stops with less only when its next frame waits for
//! credit); the receiver's WINDOW_UPDATE (or SETTINGS) A gives back enough
//! for the sender's next DATA frame K on that stream (on any stream, when
//! the connection's credit was the smaller), no DATA on another stream
//! between (the sender was not silent). P is the segment that
//! carried P's last byte, K the one that began K. Whether the silence
//! from P to K was a wait the update released, and how long it may be, is
//! the diagnosis's to judge on the sender's clock (`h2_window_limited`).
//!
//! Credit is what the sender knew, not what the capture saw leave the
//! receiver: a receiver's update reaches its sender the sender's side of
//! the round trip after the capture point saw it (the handshake's: SYN-ACK
//! to ACK for the client, SYN to SYN-ACK for the server). Captured at the
//! receiver, the updates for a window's first frames are already on their
//! way when its last frame arrives, and the credit counted in capture
//! order never runs out: each update counts for the sender's frames
//! captured that long after it (sooner when a frame needs it: the path's
//! jitter).
//!
//! Followed only from a connection's first bytes (a capture begun later
//! cannot know the credit), and given up at a hole or a frame the capture
//! cut: a byte unread is credit miscounted.

use crate::connection::Stamp;
use crate::Direction;

/// The credit a receiver grants until its SETTINGS says otherwise, per
/// stream and for the connection (RFC 9113 6.5.2, 6.9.2).
pub const DEFAULT_WINDOW: u32 = 65_535;
/// Credit below this is used up: the sender's next frame waits for more.
pub const BLOCKED_BELOW: i64 = 1024;
/// SETTINGS_INITIAL_WINDOW_SIZE's identifier.
const INITIAL_WINDOW_SIZE: u16 = 0x4;
/// Streams whose credit is followed at once, per sender; a sender with
/// more open is followed no more (the credit of one forgotten would be
/// miscounted).
const MAX_STREAMS: usize = 128;
/// Stalls kept per connection (the diagnosis needs a few to judge, and
/// cites 8).
const MAX_STALLS: usize = 512;
/// Credit given back while a sender waited, kept (the first that was
/// enough for its next frame releases it).
const MAX_UPDATES: usize = 8;
/// A receiver's frames on their way to the sender, kept per sender; more,
/// and the oldest counts at once.
const MAX_IN_FLIGHT: usize = 64;

/// A receiver's frame that gives its sender credit.
#[derive(Debug, Clone, Copy)]
enum Grant {
    /// A WINDOW_UPDATE on a stream (0: the connection).
    Update { stream: u32, increment: u32 },
    /// SETTINGS_INITIAL_WINDOW_SIZE.
    InitialWindow(u32),
}

/// A sender's stall on its HTTP/2 credit, in capture order (see the
/// module's doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct H2CreditStall {
    /// Who waited for credit.
    pub sender: Direction,
    /// The stream P and K were on.
    pub stream: u32,
    /// The connection's credit was the smaller when P used it up (else the
    /// stream's).
    pub connection: bool,
    /// The segment that carried the last byte of P, the DATA frame that
    /// used the credit up.
    pub full: Stamp,
    /// The segment of the receiver's frame that gave back enough credit
    /// for K.
    pub update: Stamp,
    /// The segment that began K, the sender's next DATA frame.
    pub resumed: Stamp,
    /// The credit the receiver granted each new stream then (its
    /// `SETTINGS_INITIAL_WINDOW_SIZE`).
    pub stream_window: u32,
}

/// A sender waiting for credit since P.
#[derive(Debug, Clone)]
struct Blocked {
    stream: u32,
    connection: bool,
    /// P's last segment; `None` while P has bytes still to come (it is
    /// the sender's frame under way: `frame_ended` says where it ends).
    full: Option<Stamp>,
    /// The sender's credit after P.
    credit: i64,
    /// Credit given back since P: where, and the sender's credit after it
    /// (the smaller of the stream's and the connection's).
    updates: Vec<(Stamp, i64)>,
}

/// One sender's credit.
#[derive(Debug, Clone)]
struct Sender {
    /// What a new stream starts with: the receiver's
    /// SETTINGS_INITIAL_WINDOW_SIZE.
    initial: i64,
    connection: i64,
    /// Streams with credit followed (those that sent DATA or were given
    /// credit, until their END_STREAM or RST_STREAM).
    streams: Vec<(u32, i64)>,
    blocked: Option<Blocked>,
    /// The receiver's grants the capture saw and the sender may not have
    /// yet, oldest first.
    in_flight: std::collections::VecDeque<(Stamp, Grant)>,
    /// The sender's side of the round trip: a grant captured at `t`
    /// reached it for its frames captured from `t + side` on.
    side_ns: i64,
}

impl Default for Sender {
    fn default() -> Sender {
        Sender {
            initial: DEFAULT_WINDOW as i64,
            connection: DEFAULT_WINDOW as i64,
            streams: Vec::new(),
            blocked: None,
            in_flight: std::collections::VecDeque::new(),
            side_ns: 0,
        }
    }
}

impl Sender {
    fn stream(&self, stream: u32) -> i64 {
        self.streams
            .iter()
            .find(|(s, _)| *s == stream)
            .map_or(self.initial, |(_, c)| *c)
    }

    /// The credit of `stream`, made when it has none yet; `None` when too
    /// many are open.
    fn stream_mut(&mut self, stream: u32) -> Option<&mut i64> {
        match self.streams.iter().position(|(s, _)| *s == stream) {
            Some(i) => Some(&mut self.streams[i].1),
            None if self.streams.len() < MAX_STREAMS => {
                self.streams.push((stream, self.initial));
                self.streams.last_mut().map(|(_, c)| c)
            }
            None => None,
        }
    }

    /// What the blocked sender may send now.
    fn blocked_credit(&self, b: &Blocked) -> i64 {
        if b.connection {
            self.connection
        } else {
            self.stream(b.stream).min(self.connection)
        }
    }

    /// A grant reached the sender (`None` when it cannot be counted: too
    /// many streams).
    fn apply(&mut self, at: Stamp, grant: Grant) -> Option<()> {
        match grant {
            Grant::Update {
                stream: 0,
                increment,
            } => self.connection += increment as i64,
            Grant::Update { stream, increment } => *self.stream_mut(stream)? += increment as i64,
            Grant::InitialWindow(value) => {
                let delta = value as i64 - self.initial;
                self.initial = value as i64;
                for (_, c) in &mut self.streams {
                    *c += delta;
                }
            }
        }
        self.given_back(at);
        Some(())
    }

    /// The grants that reached the sender by its frame captured at `now`.
    fn arrived(&mut self, now: i64) -> Option<()> {
        while let Some(&(at, grant)) = self.in_flight.front() {
            if at.ts_ns + self.side_ns > now {
                break;
            }
            self.in_flight.pop_front();
            self.apply(at, grant)?;
        }
        Some(())
    }

    /// Grants still on their way counted early, oldest first, until the
    /// sender's credit covers `length` bytes on `stream` (the path's
    /// jitter brought them sooner than the handshake's round trip).
    fn early(&mut self, stream: u32, length: i64) -> Option<()> {
        while self.stream(stream).min(self.connection) < length {
            let Some((at, grant)) = self.in_flight.pop_front() else {
                break;
            };
            self.apply(at, grant)?;
        }
        Some(())
    }

    /// Credit came back: noted when the sender waits for it.
    fn given_back(&mut self, at: Stamp) {
        let Some(b) = self.blocked.as_ref() else {
            return;
        };
        let credit = self.blocked_credit(b);
        let b = self.blocked.as_mut().expect("blocked");
        if credit <= b.updates.last().map_or(b.credit, |(_, c)| *c) {
            return;
        }
        if b.updates.len() < MAX_UPDATES {
            b.updates.push((at, credit));
        }
    }
}

/// One connection's HTTP/2 credit, both senders (index: `Direction::index`).
#[derive(Debug, Clone, Default)]
pub(crate) struct FlowCredit {
    senders: [Sender; 2],
    stalls: Vec<H2CreditStall>,
    /// The count was lost (a hole, a cut frame, too many streams, credit
    /// overspent): no stall is found from then on.
    lost: bool,
}

impl FlowCredit {
    /// Each sender's side of the round trip from the capture point, from
    /// the handshake (index: `Direction::index`).
    pub(crate) fn set_sides(&mut self, sides: [i64; 2]) {
        for (s, side) in self.senders.iter_mut().zip(sides) {
            s.side_ns = side.max(0);
        }
    }

    /// The frame under way from `dir` (begun in an earlier segment) ended
    /// in the segment (or record) whose last packet is `last`: when it
    /// was the DATA frame that used the credit up, that is where.
    pub(crate) fn frame_ended(&mut self, dir: Direction, last: Stamp) {
        if let Some(b) = self.senders[dir.index()].blocked.as_mut() {
            b.full.get_or_insert(last);
        }
    }

    /// The count cannot be kept (a hole, a frame the capture cut).
    pub(crate) fn lose(&mut self) {
        self.lost = true;
        self.senders = Default::default();
    }

    /// A frame from `dir`: `kind`, `flags`, `stream`, payload `length`,
    /// its captured `payload`; it began in the segment `at` and `ended` in
    /// the one whose last packet that is (`None`: it goes on in a later
    /// segment, [`frame_ended`](Self::frame_ended)).
    pub(crate) fn frame(
        &mut self,
        dir: Direction,
        (kind, flags, stream, length): (u8, u8, u32, u32),
        payload: &[u8],
        at: Stamp,
        ended: Option<Stamp>,
    ) {
        use rttdoc_wire::http2::{ACK, DATA, END_STREAM, RST_STREAM, SETTINGS, WINDOW_UPDATE};
        if self.lost {
            return;
        }
        match kind {
            DATA => self.data(dir, stream, length, flags & END_STREAM != 0, at, ended),
            WINDOW_UPDATE => {
                let Some(b) = payload.get(..4) else {
                    return self.lose();
                };
                let increment = u32::from_be_bytes([b[0], b[1], b[2], b[3]]) & 0x7fff_ffff;
                self.grant(dir.reverse(), at, Grant::Update { stream, increment });
            }
            SETTINGS if flags & ACK == 0 => {
                let Some(body) = payload.get(..length as usize) else {
                    return self.lose();
                };
                for e in body.chunks_exact(6) {
                    if u16::from_be_bytes([e[0], e[1]]) == INITIAL_WINDOW_SIZE {
                        let value = u32::from_be_bytes([e[2], e[3], e[4], e[5]]);
                        self.grant(dir.reverse(), at, Grant::InitialWindow(value));
                    }
                }
            }
            RST_STREAM => {
                for s in &mut self.senders {
                    s.streams.retain(|(id, _)| *id != stream);
                    if s.blocked
                        .as_ref()
                        .is_some_and(|b| b.stream == stream && !b.connection)
                    {
                        s.blocked = None;
                    }
                }
            }
            _ => {}
        }
    }

    /// The receiver's grant to `sender`, seen at `at`: on its way.
    fn grant(&mut self, sender: Direction, at: Stamp, grant: Grant) {
        let s = &mut self.senders[sender.index()];
        s.in_flight.push_back((at, grant));
        if s.in_flight.len() > MAX_IN_FLIGHT {
            let (at, grant) = s.in_flight.pop_front().expect("in flight");
            if s.apply(at, grant).is_none() {
                self.lose();
            }
        }
    }

    fn data(
        &mut self,
        dir: Direction,
        stream: u32,
        length: u32,
        end_stream: bool,
        at: Stamp,
        ended: Option<Stamp>,
    ) {
        let s = &mut self.senders[dir.index()];
        // What reached the sender before this frame left, and what it
        // must have had to send it.
        if s.arrived(at.ts_ns).is_none() || s.early(stream, length as i64).is_none() {
            return self.lose();
        }
        let s = &mut self.senders[dir.index()];
        // (Data on another stream while a stream's credit was spent: the
        // sender was not silent, and the connection not waiting.)
        let waited = s
            .blocked
            .take()
            .filter(|b| b.connection || b.stream == stream);
        if let Some(b) = waited {
            // K: released by the first credit given back that was enough
            // for it (an empty frame needs none: it waited for nothing).
            let enough = (length as i64).min(BLOCKED_BELOW);
            let update = b.updates.iter().find(|(_, c)| *c >= enough);
            if let (Some(full), Some(&(update, _)), true) = (b.full, update, length > 0) {
                if self.stalls.len() < MAX_STALLS {
                    self.stalls.push(H2CreditStall {
                        sender: dir,
                        stream,
                        connection: b.connection,
                        full,
                        update,
                        resumed: at,
                        stream_window: s.initial.clamp(0, u32::MAX as i64) as u32,
                    });
                }
            }
        }
        s.connection -= length as i64;
        let Some(credit) = s.stream_mut(stream) else {
            return self.lose();
        };
        *credit -= length as i64;
        let credit = *credit;
        if credit < 0 || s.connection < 0 {
            // More than the receiver allowed: credit given that the
            // reading missed.
            return self.lose();
        }
        if end_stream {
            s.streams.retain(|(id, _)| *id != stream);
            return;
        }
        if credit.min(s.connection) < BLOCKED_BELOW {
            s.blocked = Some(Blocked {
                stream,
                connection: s.connection < credit,
                full: ended,
                credit: credit.min(s.connection),
                updates: Vec::new(),
            });
        }
    }

    /// The stalls found so far whose sender went on in the frames
    /// `frames`, taken out.
    pub(crate) fn take_stalls(
        &mut self,
        frames: std::ops::RangeInclusive<u64>,
    ) -> Vec<H2CreditStall> {
        let (taken, kept) = std::mem::take(&mut self.stalls)
            .into_iter()
            .partition(|s| frames.contains(&s.resumed.frame));
        self.stalls = kept;
        taken
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rttdoc_wire::http2::{DATA, END_STREAM, SETTINGS, WINDOW_UPDATE};
    use Direction::{ClientToServer as Up, ServerToClient as Down};

    fn at(frame: u64) -> Stamp {
        Stamp {
            frame,
            ts_ns: frame as i64 * 1_000_000,
        }
    }

    fn data(c: &mut FlowCredit, frame: u64, stream: u32, len: u32, end: bool) {
        let flags = if end { END_STREAM } else { 0 };
        c.frame(
            Up,
            (DATA, flags, stream, len),
            &[],
            at(frame),
            Some(at(frame)),
        );
    }

    fn update(c: &mut FlowCredit, frame: u64, stream: u32, increment: u32) {
        c.frame(
            Down,
            (WINDOW_UPDATE, 0, stream, 4),
            &increment.to_be_bytes(),
            at(frame),
            Some(at(frame)),
        );
    }

    #[test]
    fn an_upload_that_spends_its_stream_credit_waits_for_the_update() {
        let mut c = FlowCredit::default();
        // The server gives the connection plenty, each stream the default.
        update(&mut c, 1, 0, 1 << 30);
        data(&mut c, 2, 1, 16_384, false);
        data(&mut c, 3, 1, 16_384, false);
        data(&mut c, 4, 1, 16_384, false);
        data(&mut c, 5, 1, 16_383, false);
        // 0 left: the next frame waits. 56 bytes back are not enough for
        // a 16 KB frame; 16 KB are.
        update(&mut c, 6, 1, 56);
        update(&mut c, 7, 1, 16_328);
        data(&mut c, 8, 1, 16_384, false);
        let stalls = c.take_stalls(0..=u64::MAX);
        assert_eq!(stalls.len(), 1, "{stalls:?}");
        let s = stalls[0];
        assert_eq!((s.sender, s.stream, s.connection), (Up, 1, false));
        assert_eq!((s.full.frame, s.update.frame, s.resumed.frame), (5, 7, 8));
        assert_eq!(s.stream_window, DEFAULT_WINDOW);
    }

    #[test]
    fn a_small_frame_is_released_by_a_small_update() {
        let mut c = FlowCredit::default();
        update(&mut c, 1, 0, 1 << 30);
        data(&mut c, 2, 1, 65_535, false);
        update(&mut c, 3, 1, 55);
        data(&mut c, 4, 1, 55, false);
        assert_eq!(c.take_stalls(0..=u64::MAX)[0].update.frame, 3);
    }

    #[test]
    fn credit_left_or_a_stream_ended_is_no_stall() {
        let mut c = FlowCredit::default();
        update(&mut c, 1, 0, 1 << 30);
        // 2 KB left: the sender was not held.
        data(&mut c, 2, 1, 63_000, false);
        update(&mut c, 3, 1, 16_384);
        data(&mut c, 4, 1, 16_384, false);
        // The whole window, ending the stream: nothing more to send.
        data(&mut c, 5, 3, 65_535, true);
        update(&mut c, 6, 3, 65_535);
        assert!(c.take_stalls(0..=u64::MAX).is_empty());
    }

    #[test]
    fn the_connection_credit_holds_every_stream() {
        let mut c = FlowCredit::default();
        data(&mut c, 1, 1, 40_000, false);
        data(&mut c, 2, 3, 25_535, false);
        // The connection's 65,535 are spent: stream 1's next frame waits
        // for the connection's update.
        update(&mut c, 3, 0, 32_768);
        data(&mut c, 4, 1, 16_384, false);
        let s = c.take_stalls(0..=u64::MAX)[0];
        assert!(s.connection);
        assert_eq!((s.full.frame, s.update.frame, s.resumed.frame), (2, 3, 4));
    }

    #[test]
    fn a_larger_initial_window_moves_open_streams_and_releases() {
        let mut c = FlowCredit::default();
        update(&mut c, 1, 0, 1 << 30);
        data(&mut c, 2, 1, 65_535, false);
        // The server's SETTINGS raises the initial window to 1 MB.
        let settings = [0, 4, 0, 0x10, 0, 0];
        c.frame(Down, (SETTINGS, 0, 0, 6), &settings, at(3), Some(at(3)));
        data(&mut c, 4, 1, 16_384, false);
        let s = c.take_stalls(0..=u64::MAX)[0];
        assert_eq!((s.update.frame, s.stream_window), (3, 1 << 20));
    }

    #[test]
    fn the_frame_that_spends_the_credit_ends_where_its_last_byte_is() {
        let mut c = FlowCredit::default();
        update(&mut c, 1, 0, 1 << 30);
        // 65,535 bytes in a frame begun in segment 2 and ended in 4 (the
        // frame's reading, framing.rs, counts its bytes).
        c.frame(Up, (DATA, 0, 1, 65_535), &[], at(2), None);
        c.frame_ended(Up, at(4));
        update(&mut c, 5, 1, 16_384);
        data(&mut c, 6, 1, 16_384, false);
        assert_eq!(c.take_stalls(0..=u64::MAX)[0].full.frame, 4);
    }

    #[test]
    fn an_update_counts_once_it_reached_the_sender() {
        // Captured at the server, 40 ms from the client: an update seen
        // 10 ms before the frame that spends the window was still on its
        // way when the client sent that frame.
        let mut c = FlowCredit::default();
        c.set_sides([40_000_000, 0]);
        update(&mut c, 1, 0, 1 << 30);
        data(&mut c, 50, 1, 40_000, false);
        update(&mut c, 60, 1, 16_384);
        data(&mut c, 70, 1, 25_535, false);
        // It arrives at 100 (60 + 40): the next frame, at 110, was
        // released by it.
        data(&mut c, 110, 1, 16_384, false);
        let s = c.take_stalls(0..=u64::MAX);
        assert_eq!(s.len(), 1, "{s:?}");
        assert_eq!(
            (s[0].full.frame, s[0].update.frame, s[0].resumed.frame),
            (70, 60, 110)
        );
        // A frame that needs an update sooner than the handshake's round
        // trip says had it (the path's jitter): no count lost.
        let mut c = FlowCredit::default();
        c.set_sides([40_000_000, 0]);
        update(&mut c, 1, 0, 1 << 30);
        data(&mut c, 50, 1, 65_535, false);
        update(&mut c, 60, 1, 16_384);
        data(&mut c, 95, 1, 16_384, false);
        assert!(!c.lost);
        assert_eq!(c.take_stalls(0..=u64::MAX)[0].update.frame, 60);
    }

    #[test]
    fn a_sender_busy_on_another_stream_was_not_waiting() {
        let mut c = FlowCredit::default();
        update(&mut c, 1, 0, 1 << 30);
        data(&mut c, 2, 1, 65_535, false);
        // Stream 1's credit is spent; the sender goes on with stream 3.
        data(&mut c, 3, 3, 16_384, false);
        update(&mut c, 4, 1, 16_384);
        data(&mut c, 5, 1, 16_384, false);
        assert!(c.take_stalls(0..=u64::MAX).is_empty());
    }

    #[test]
    fn overspent_credit_is_a_count_lost() {
        let mut c = FlowCredit::default();
        data(&mut c, 1, 1, 70_000, false);
        update(&mut c, 2, 1, 16_384);
        data(&mut c, 3, 1, 16_384, false);
        assert!(c.take_stalls(0..=u64::MAX).is_empty());
        assert!(c.lost);
    }
}
