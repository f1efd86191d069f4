//! A long connection diagnosed a window at a time.
//!
//! The detectors read a connection's segments, and a connection keeps at
//! most [`TIMELINE_CAP`] of them: its first. A long one (an SFTP backup, a
//! benchmark's keep-alive connection, a database client's pool) goes on
//! stalling the same way for minutes after that, and a diagnosis of its
//! first segments alone counts a fraction of its stalls and says nothing
//! of the rest. So, when the tracker is given a [`DiagnoseWindow`], the
//! segments past the timeline are gathered in a window of the same size;
//! a full window is frozen into facts of its own (its segments, the
//! exchanges closed in it, the connection's handshake and round trip as
//! known by then) and diagnosed on the spot, and what it found is folded
//! into what the connection carries (`earlier`, a [`LaterWindows`]). The last window,
//! however short, is frozen with the connection and diagnosed with it.
//! Memory stays that of one timeline and one window per connection, and
//! the folded report, whose waits are bounded (the diagnosis's).
//!
//! The first window is the connection's own timeline: the handshake, the
//! TLS session and the exchanges begun in it, however long they last (a
//! download's one exchange), are diagnosed as before; an exchange begun
//! later goes to the window it closed in, and one under way when its
//! window fills goes on in the next window with its segments (up to half
//! a window of them), so that a wait inside it is not cut in two; and a
//! full timeline or window waits for the acknowledgment of a re-send in
//! it ([`UnackedResends`]), so that the re-send is judged with it.

use crate::connection::{Connection, SegmentRecord, Stamp, TIMELINE_CAP};
use crate::facts::ConnectionFacts;
use crate::model::{Ending, LaterWindows};
use crate::seq;

/// Diagnoses one window's facts and folds what it found into what the
/// connection's earlier windows found (`rttdoc_diagnose::diagnose_window`),
/// returning the window's own report: its rows, and the findings folded
/// (the exchanges numbered as the connection's), for outputs that
/// follow a live capture ([`crate::ReportSink::window`]). Given the
/// timeline itself (`WindowFacts::index` 0, once, when the first window
/// opens), it keeps only what every later window must be told of it and
/// returns None. A plain function, as [`crate::Diagnose`].
pub type DiagnoseWindow =
    fn(ConnectionFacts, &mut Option<Box<LaterWindows>>) -> Option<crate::model::ConnectionReport>;

/// The segments of a long connection since its last window.
#[derive(Debug, Default)]
pub(crate) struct LaterWindow {
    pub(crate) timeline: Vec<SegmentRecord>,
    /// Windows taken so far (the timeline not counted).
    taken: u32,
    /// Exchanges the connection closed before this window's.
    exchanges_before: u32,
}

/// How far a full timeline or window may grow past [`TIMELINE_CAP`] while
/// it waits for the acknowledgment of a re-send in it.
const KEPT_OPEN_MAX: usize = TIMELINE_CAP;

/// The re-sent bytes of each sender in a full timeline or window that
/// their receiver has not acknowledged yet (the highest re-sent end
/// seen, until an ACK covers it).
///
/// Whether a re-send was needed is read from the receiver's first ACK
/// covering it (retransmission.rs: an ACK that echoes the original's
/// TSval, RFC 3522, or comes back sooner than a round trip could bring
/// the re-send's own, proves the original arrived), and that ACK can
/// come a thousand segments later on a busy connection (a phone's
/// uplink queued behind its downlink: nDPI's pinterest.pcap, two
/// tail-loss probes first acknowledged 541 and 1,253 segments after
/// them, each past its window's end). Cut there, the window holds the
/// re-send without that ACK and counts a loss that never was. So a
/// full window stays open until its re-sends are acknowledged, by at most
/// [`KEPT_OPEN_MAX`] segments (a receiver that never answers does not
/// hold it for ever).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct UnackedResends {
    end: [Option<u32>; 2],
}

impl UnackedResends {
    /// What these segments leave unacknowledged.
    fn of(segments: &[SegmentRecord]) -> Self {
        segments.iter().fold(Self::default(), |mut u, r| {
            u.note(r);
            u
        })
    }

    /// Notes the next segment of the timeline or window.
    fn note(&mut self, r: &SegmentRecord) {
        if r.retransmission && r.len > 0 && !r.probe {
            let end = &mut self.end[r.dir.index()];
            *end = Some(end.filter(|&e| seq::lt(r.end, e)).unwrap_or(r.end));
        }
        if r.ack_set {
            let end = &mut self.end[r.dir.reverse().index()];
            if end.is_some_and(|e| seq::le(e, r.ack)) {
                *end = None;
            }
        }
    }

    /// Whether the full timeline or window, `filled` segments long, stays
    /// open for an ACK.
    pub(crate) fn keep_open(&self, filled: usize) -> bool {
        self.awaited() && filled < TIMELINE_CAP + KEPT_OPEN_MAX
    }

    /// Whether a re-send awaits its acknowledgment.
    fn awaited(&self) -> bool {
        self.end.iter().any(Option::is_some)
    }
}

/// What marks a connection's facts as one of its later windows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowFacts {
    /// Its place: 1 for the first window after the timeline; 0 for the
    /// timeline, shown to the diagnosis once it is full (what it shows of
    /// the senders is what the later windows are told).
    pub index: u32,
    /// Exchanges closed before this window's (its exchanges are numbered
    /// from there).
    pub exchanges_before: u32,
}

impl Connection {
    /// After each segment, with windows diagnosed: opens the window once
    /// the timeline is full, and diagnoses it once it is full in turn,
    /// returning the window's report.
    #[inline]
    pub(crate) fn window_step(
        &mut self,
        diagnose: DiagnoseWindow,
    ) -> Option<crate::model::ConnectionReport> {
        let filling = self.window.as_ref().map_or(&self.timeline, |w| &w.timeline);
        if filling.len() < TIMELINE_CAP {
            return None;
        }
        let unacked = match &mut self.unacked_resends {
            Some(u) => {
                // The segment this step added (or, where none was added,
                // the last one again: noting it twice changes nothing).
                u.note(filling.last()?);
                u
            }
            None => self.unacked_resends.insert(UnackedResends::of(filling)),
        };
        if unacked.keep_open(filling.len()) {
            return None;
        }
        self.unacked_resends = None;
        self.cut_window(diagnose)
    }

    /// The segments gathered since the last cut: the timeline's until it
    /// is full, then the window's.
    fn filling(&self) -> &[SegmentRecord] {
        self.window.as_ref().map_or(&self.timeline, |w| &w.timeline)
    }

    /// Where the full timeline or window ends: before the exchange under
    /// way, which goes on in the next window with its segments (a wait
    /// inside it, the second write Nagle holds for the ACK of the first,
    /// is seen whole there, not cut in two), if it began in it and fills
    /// at most half a window; else at its end (a download's answer is cut
    /// where the window is full).
    fn window_end(&self) -> usize {
        let filling = self.filling();
        self.exchanges
            .current
            .as_ref()
            .map(|x| filling.partition_point(|r| r.frame < x.request_first.frame))
            .filter(|&at| at > 0 && filling.len() - at <= TIMELINE_CAP / 2)
            // Not between a re-send and the ACK that tells whether it
            // was needed (UnackedResends).
            .filter(|&at| !UnackedResends::of(&filling[..at]).awaited())
            .unwrap_or(filling.len())
    }

    /// Ends the full timeline or window where [`Connection::window_end`]
    /// says: the timeline is then shown to the diagnosis for what its
    /// senders show, a window is diagnosed and its report returned.
    fn cut_window(&mut self, diagnose: DiagnoseWindow) -> Option<crate::model::ConnectionReport> {
        let end = self.window_end();
        if self.window.is_some() {
            let facts = self.take_window(end)?;
            return diagnose(facts, &mut self.earlier);
        }
        // The timeline ends: the segments of the exchange under way go on
        // in the first window, and so does the exchange (it closes there).
        let next = from_on(&mut self.timeline, end);
        let under_way = u32::from(!next.is_empty() && self.exchanges.current.is_some());
        // What the timeline shows of the senders (one running without
        // Nagle) is what every window is told, those diagnosed while the
        // connection is open too.
        let timeline = WindowFacts {
            index: 0,
            exchanges_before: 0,
        };
        let facts = self.window_facts(self.timeline.clone(), Vec::new(), timeline);
        diagnose(facts, &mut self.earlier);
        self.window = Some(Box::new(LaterWindow {
            timeline: next,
            taken: 0,
            exchanges_before: self.exchanges.total - under_way,
        }));
        // The exchanges begun from here on are the windows'; those begun
        // in the timeline (a download's under way too) stay its own.
        self.exchanges.spill = Some(Vec::new());
        self.exchanges.spill_after = self.timeline.last().map_or(0, |r| r.frame);
        self.exchanges.spill_noted = 0;
        None
    }

    /// The window's segments before `end` and the exchanges closed in it,
    /// frozen into facts of their own (None when no window is open or it
    /// is empty); the segments from `end` on begin the next window. The
    /// connection's handshake, round-trip samples and counts so far come
    /// along: the window's clock and sizes are the connection's.
    pub(crate) fn take_window(&mut self, end: usize) -> Option<ConnectionFacts> {
        let w = self.window.as_mut()?;
        if end == 0 {
            return None;
        }
        let next = from_on(&mut w.timeline, end);
        let timeline = std::mem::replace(&mut w.timeline, next);
        w.taken += 1;
        let window = crate::WindowFacts {
            index: w.taken,
            exchanges_before: w.exchanges_before,
        };
        let exchanges = std::mem::take(self.exchanges.spill.get_or_insert_with(Vec::new));
        w.exchanges_before += exchanges.len() as u32;
        self.exchanges.spill_noted = 0;
        let frames =
            timeline.first().map_or(0, |r| r.frame)..=timeline.last().map_or(0, |r| r.frame);
        let h2_credit_stalls = self.exchanges.take_h2_credit_stalls(frames);
        let mut facts = self.window_facts(timeline, exchanges, window);
        facts.h2_credit_stalls = h2_credit_stalls;
        Some(facts)
    }

    /// The last window, whatever it holds, frozen with the connection
    /// (`ending`) into facts of its own (None when empty).
    pub(crate) fn take_last_window(&mut self, ending: Ending) -> Option<ConnectionFacts> {
        let end = self.window.as_ref()?.timeline.len();
        let mut facts = self.take_window(end)?;
        facts.ending = ending;
        Some(facts)
    }

    /// Facts of these segments and exchanges of the open connection's,
    /// marked as `window`: the connection's handshake, round-trip samples
    /// and counts so far come along (the window's clock and sizes are the
    /// connection's). `timeline` is not empty.
    fn window_facts(
        &self,
        timeline: Vec<SegmentRecord>,
        exchanges: Vec<crate::exchange::Exchange>,
        window: WindowFacts,
    ) -> ConnectionFacts {
        let first = timeline.first().map(stamp).unwrap_or_default();
        let last = timeline.last().map(stamp).unwrap_or_default();
        let c = self;
        ConnectionFacts {
            stream: c.stream,
            client: c.client,
            server: c.server,
            first,
            same_as: None,
            mptcp: None,
            proxy_protocol: None,
            last,
            ending: Ending::Open,
            handshake: c.handshake_report(),
            first_syn: c.first_syn,
            last_syn: c.last_syn,
            syn_count: c.syn_count,
            syn_ack: c.syn_ack,
            syn_ack_count: c.syn_ack_count,
            syn_acks: c.syn_acks.clone(),
            handshake_ack: c.handshake_ack,
            handshake_ack_tsecr: c.handshake_ack_tsecr,
            initial_rtt_ns: c.initial_rtt_ns,
            rtt: c.rtt_facts(),
            stats: [c.half[0].stats.clone(), c.half[1].stats.clone()],
            tls: None,
            tls_lookalike: None,
            exchanges_total: exchanges.len() as u32,
            exchanges,
            greeting: None,
            greeting_connect_back: None,
            protocol: c.exchanges.protocol,
            timeline,
            ladder: None,
            series: None,
            early_plaintext: None,
            detect: c.detect,
            path_samples: Vec::new(),
            uplink: None,
            path_busy: Vec::new(),
            path_stalls: Vec::new(),
            late_retransmissions: Vec::new(),
            heard_at_resends: Vec::new(),
            nothing_heard: None,
            client_closed_with: 0,
            unheard_at_resend: None,
            uplink_waits: c.uplink_waits.clone(),
            acked_at_resends: Vec::new(),
            client_clock_hz: None,
            sibling_closes: c.sibling_closes.clone(),
            dialled_back_data_ns: None,
            // (A later window holds no handshake.)
            certificate_fetches: Vec::new(),
            sibling_data: c.sibling_data.clone(),
            too_big: Vec::new(),
            h2_credit_stalls: Vec::new(),
            previous: None,
            client_false_starts: false,
            sibling_request: None,
            one_way_capture: false,
            seen_until: None,
            dials_beside: 0,
            stalled_elsewhere: None,
            client_dials: None,
            lookup: None,
            window: Some(window),
            earlier: None,
            last_window: None,
        }
    }
}

/// The segments of `v` from `end` on, taken out into a vector with room
/// for a window: the next window's beginning.
fn from_on(v: &mut Vec<SegmentRecord>, end: usize) -> Vec<SegmentRecord> {
    let mut next = Vec::with_capacity(TIMELINE_CAP);
    next.extend(v.drain(end..));
    next
}

fn stamp(r: &SegmentRecord) -> Stamp {
    Stamp {
        frame: r.frame,
        ts_ns: r.ts_ns,
    }
}
