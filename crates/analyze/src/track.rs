//! Connection tracking: which connection each segment belongs to, numbered
//! exactly like Wireshark's `tcp.stream`, and when a connection is finished.
//!
//! Wireshark's rules, followed here: a 4-tuple seen for the first time (in
//! either direction) opens a new stream; a SYN without ACK whose sequence
//! number differs from the first sequence number seen from that side on the
//! existing stream is port reuse and opens a new stream; everything else
//! (a SYN-ACK with a new sequence number included) stays on the stream.
//!
//! Memory is bounded by the connections that are open, never by the
//! capture's size:
//! - a connection with nothing more due (a RST, or FINs both ways, each
//!   acknowledged) is finished once no packet has arrived for it for
//!   [`AnalyzeOptions::linger_ms`] of capture time (a trailing RST or
//!   duplicate ACK still lands on it): a queue in closing order, so a
//!   churn of thousands of connections a second holds only the last few
//!   milliseconds' worth; one closed with a FIN still unacknowledged, or
//!   refused, lingers 30 s (its FIN or SYN comes again), an idle one
//!   [`AnalyzeOptions::idle_timeout_s`]; its report goes to the sink and its
//!   state is freed;
//! - what stays is a [`Tombstone`] of a few dozen bytes for
//!   [`TOMBSTONE_NS`], so a late packet of that connection keeps its
//!   tcp.stream (counted in `CaptureStats::late_packets`, not analysed)
//!   instead of opening a new one, as tshark would not;
//! - at most [`AnalyzeOptions::max_flows`] connections are tracked at once:
//!   past that, the longest-idle ones are finished early (a SYN flood, a
//!   scan), counted in `CaptureStats::evicted_flows`, and leave tombstones.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rttdoc_capture::{Capture, Frame};
use rttdoc_wire::defrag::Defragmenter;
use rttdoc_wire::{decode, Decoded, QuotedTcp, Segment, Skip, UdpDatagram};
use rustc_hash::FxHashMap;

use crate::connection::{Connection, Stamp, REPLAY_NS};
use crate::facts::Diagnose;
use crate::finisher::{Finisher, ReportSink};
use crate::flow_map::FlowKey;
use crate::lone_syn::{Embryo, LoneSyn, LoneSyns};
use crate::model::{CaptureStats, Direction, Ending, Endpoint, QuicSection};
use crate::path_samples::PathSamples;
use crate::quic::{QuicConnections, QuicDiagnose};
use crate::reuse::CloseSeen;
use crate::tombstones::{Tombstone, Tombstones};
use crate::twins::{SameAs, Twins};
use crate::upstream::{Asking, Calls, Place};

/// The most one gap between frames advances the capture's progress clock:
/// longer than any retransmission backoff step worth waiting through, far
/// shorter than the idle timeout, so no single jump evicts a connection.
pub const MAX_CLOCK_STEP_NS: i64 = 60_000_000_000;

/// How long a finished connection's tombstone keeps its 4-tuple on its
/// stream: five minutes. Its packets can come that long after its close
/// (a peer that never had the close retransmits through its backoff;
/// Windows keeps TIME_WAIT four minutes; networkml's test trace has a
/// connection's data again 68 s after both FINs were acknowledged), and
/// tshark keeps them on the connection's stream: a new connection there
/// would put every later stream number off tshark's, and every display
/// filter with it. A new SYN with another sequence number replaces it at
/// once (port reuse); [`TOMBSTONES_PER_FLOW`] bounds how many are kept.
pub const TOMBSTONE_NS: i64 = 300_000_000_000;

/// A connection refused by RST, or closed with a FIN not yet acknowledged,
/// lingers this long: Windows retries a refused SYN (same sequence number,
/// same stream in tshark) twice, 0.5 s apart, and a FIN's sender
/// retransmits it and probes until it is acknowledged; those packets
/// belong on the connection's report.
const LONG_LINGER_NS: i64 = 30_000_000_000;

#[derive(Debug, Clone)]
pub struct AnalyzeOptions {
    /// Keep the per-frame ladder for this stream (`--conn N`).
    pub ladder_stream: Option<u64>,
    /// How long a connection with nothing more due (RST, or both FINs
    /// acknowledged) is held for trailing packets before its report is
    /// made, in capture milliseconds.
    pub linger_ms: u64,
    /// A connection with no packet for this long is finished (`idle`).
    pub idle_timeout_s: u64,
    /// Most connections tracked at once; past it the longest-idle are
    /// finished early (`--max-flows`).
    pub max_flows: usize,
    /// Threads: with more than one, connections are diagnosed on
    /// `threads - 1` workers while this one reads and tracks; the output
    /// is the same (finisher.rs).
    pub threads: usize,
    /// TLS key log (`--keylog`): decrypts TLS 1.3 0-RTT early data, types
    /// a server's records after its handshake, and opens an HTTP/2
    /// connection's application records (tls.rs).
    pub keylog: Option<std::sync::Arc<crate::keylog::KeyLog>>,
    /// Run the detectors (`--no-findings` turns them off: ledger only).
    pub findings: bool,
    /// Which connections carry per-packet graph data (series.rs).
    pub series: crate::series::SeriesRequest,
}

impl Default for AnalyzeOptions {
    fn default() -> Self {
        AnalyzeOptions {
            ladder_stream: None,
            linger_ms: DONE_LINGER_MS,
            idle_timeout_s: 900,
            max_flows: DEFAULT_MAX_FLOWS,
            threads: 1,
            keylog: None,
            findings: true,
            series: Default::default(),
        }
    }
}

/// Default of [`AnalyzeOptions::linger_ms`], the least a finished
/// connection is held: on a path of a round trip near zero (a loopback, a
/// data centre), what follows a finished exchange of FINs or a RST (a RST
/// for data still arriving, a duplicate of the last ACK) comes within it.
/// A connection on a longer path is held longer
/// (`Connection::trailing_ns`); a later packet keeps its stream through
/// the tombstone.
pub const DONE_LINGER_MS: u64 = 50;

/// 2100-01-01 in nanoseconds since the epoch. A pcapng timestamp (64 bits
/// of units, an offset) can say anything, and the reader keeps what it
/// says, as tshark does; the analysis holds one beyond this (or as far
/// before 1970) here, which keeps every sum of a timestamp and the times
/// it adds to one (round trips, timers) inside an i64 (a fuzzed capture
/// overflowed one).
const MAX_TS_NS: i64 = 4_102_444_800 * 1_000_000_000;

/// Default of [`AnalyzeOptions::max_flows`]: a lone SYN's state is about
/// 1.5 KB and an established connection's a few KB more, so this keeps the
/// table under ~50 MB however many flows a capture opens at once.
pub const DEFAULT_MAX_FLOWS: usize = 16_384;

/// Lone SYNs kept at once, as a multiple of the flow cap.
const EMBRYOS_PER_FLOW: usize = 2;

/// How far before and after a connection the other handshakes to its
/// server are looked at: a page load's connections open within it.
const PATH_WINDOW_NS: i64 = 1_000_000_000;

/// Most tombstones kept at once, as a multiple of the flow cap: a flood of
/// flows finished within [`TOMBSTONE_NS`] loses the oldest first
/// (tombstones.rs).
const TOMBSTONES_PER_FLOW: usize = 4;

/// Streams a capture through decode -> track, freezes each finished
/// connection's facts, has them diagnosed ([`Diagnose`]) and hands the
/// report to the sink.
pub struct Tracker<'s> {
    /// Fx hashing: the key is not attacker-chosen in a way that matters for
    /// an offline analyser, and SipHash cost 12% of the whole pass.
    table: FxHashMap<FlowKey, Box<Connection>>,
    /// Finished connections whose late packets still belong to them.
    tombstones: Tombstones,
    /// Every client's clean handshakes, for the queue they measured while
    /// other connections of the client were open.
    paths: PathSamples,
    /// Recent handshakes, to find a connection seen twice under
    /// translated addresses (twins.rs).
    twins: Twins,
    /// The host's recent exchanges, for the calls it made while its
    /// clients waited (upstream.rs).
    calls: Calls,
    /// Flows that are one SYN so far.
    embryos: LoneSyns,
    /// Connections with nothing more due, in the order they got there, with
    /// the progress clock then: finished once quiet for the linger.
    closing: Closing,
    /// Room reused by every choice of what to evict (one entry per flow).
    ages: Vec<(i64, u64)>,
    next_stream: u64,
    options: AnalyzeOptions,
    pub stats: CaptureStats,
    last_sweep_ns: Option<i64>,
    /// Capture progress: the gaps between consecutive frames summed, each
    /// capped at [`MAX_CLOCK_STEP_NS`] and never negative. Idle times are
    /// measured on it, so a corrupt or jumping timestamp (a clock set
    /// forward by days, a merged file) does not make every connection
    /// "idle" at once and split it into a new stream (tshark never splits
    /// a connection on time).
    progress_ns: i64,
    prev_ts_ns: Option<i64>,
    /// The latest frame time the progress clock has seen, and in a
    /// stretch of frames stamped more than [`REPLAY_NS`] before it, the
    /// stretch's own latest: see [`Tracker::advance_clock`].
    clock_high_ns: i64,
    rewound_high_ns: Option<i64>,
    /// The capture's first frame's time.
    capture_start_ns: Option<i64>,
    /// Latest capture time seen, and whether the clock is now behind it
    /// (a second pass of the same trace).
    latest_ns: Option<i64>,
    /// The newest frame the capture has reached (a live source's tick
    /// moves its time on): a connection set aside now was still there
    /// then.
    seen_until: Stamp,
    rewound: bool,
    /// IP fragments waiting for the rest of their datagram.
    defrag: Defragmenter,
    /// Makes reports, here or on worker threads, and keeps their order.
    finisher: Finisher,
    /// QUIC connections (UDP), followed when a diagnosis for them is
    /// given ([`Tracker::with_quic`]); their reports, made here (a
    /// handshake's few datagrams take less than a hand-over).
    quic: QuicConnections,
    quic_diagnose: Option<QuicDiagnose>,
    /// Diagnoses a long connection's later windows (window.rs); without
    /// it, a connection's segments past its timeline are not read.
    window_diagnose: Option<crate::DiagnoseWindow>,
    quic_reports: QuicSection,
    sink: &'s mut dyn ReportSink,
}

impl<'s> Tracker<'s> {
    /// A tracker whose finished connections go through `diagnose` to `sink`.
    pub fn new(options: AnalyzeOptions, diagnose: Diagnose, sink: &'s mut dyn ReportSink) -> Self {
        let finisher = Finisher::new(options.threads, diagnose);
        Tracker {
            table: FxHashMap::default(),
            tombstones: Tombstones::new(options.max_flows.max(1) * TOMBSTONES_PER_FLOW),
            paths: PathSamples::default(),
            twins: Twins::default(),
            calls: Calls::default(),
            embryos: LoneSyns::default(),
            closing: Closing::new(options.linger_ms),
            ages: Vec::new(),
            next_stream: 0,
            options,
            stats: CaptureStats::default(),
            last_sweep_ns: None,
            progress_ns: 0,
            prev_ts_ns: None,
            clock_high_ns: i64::MIN,
            rewound_high_ns: None,
            capture_start_ns: None,
            latest_ns: None,
            seen_until: Stamp::default(),
            rewound: false,
            defrag: Defragmenter::default(),
            finisher,
            quic: QuicConnections::default(),
            quic_diagnose: None,
            window_diagnose: None,
            quic_reports: QuicSection::default(),
            sink,
        }
    }

    /// Follows QUIC connections too, each finished one through `diagnose`
    /// into the capture's [`QuicSection`] (`CaptureStats::quic`).
    pub fn with_quic(mut self, diagnose: QuicDiagnose) -> Self {
        self.quic_diagnose = Some(diagnose);
        self
    }

    /// Diagnoses long connections a window at a time (window.rs) with
    /// `diagnose`.
    pub fn with_windows(mut self, diagnose: crate::DiagnoseWindow) -> Self {
        self.window_diagnose = Some(diagnose);
        self
    }

    /// Most connections held at once (`--max-flows`, at least one).
    fn flow_cap(&self) -> usize {
        self.options.max_flows.max(1)
    }

    /// Connections currently held in memory (lone SYNs included).
    pub fn open_connections(&self) -> usize {
        self.table.len() + self.embryos.len()
    }

    /// Processes one frame.
    pub fn frame(&mut self, frame: &Frame<'_>) {
        self.stats.frames = frame.number;
        if frame.time_out_of_range {
            self.stats.times_out_of_range += 1;
            self.stats
                .first_time_out_of_range
                .get_or_insert(frame.number);
        }
        let t = frame.ts_ns as f64 / 1e9;
        self.stats.first_time.get_or_insert(t);
        self.stats.last_time = Some(t);
        let ts_ns = frame.ts_ns.clamp(-MAX_TS_NS, MAX_TS_NS);
        self.capture_start_ns.get_or_insert(ts_ns);
        let at = Stamp {
            frame: frame.number,
            ts_ns,
        };
        self.advance_clock(ts_ns);
        self.seen_until = at;
        // Sweep before the frame is tracked: a packet that comes after a
        // connection's linger finds its tombstone, not the connection.
        let sweep_due = self
            .last_sweep_ns
            .is_none_or(|last| self.progress_ns - last > 1_000_000_000);
        if sweep_due {
            self.sweep(self.progress_ns);
        }
        self.finish_closed(self.progress_ns);
        let decoded = decode(frame.link_type, frame.data);
        if !rttdoc_wire::link::reads(frame.link_type) {
            self.stats.unread_link_frames += 1;
            let t = frame.link_type & 0xffff;
            if self.stats.unread_link_types.len() < 8 && !self.stats.unread_link_types.contains(&t)
            {
                self.stats.unread_link_types.push(t);
            }
        }
        let cut = frame.orig_len as usize > frame.data.len();
        match &decoded {
            Decoded::Damaged(_) if cut => self.stats.snap_cut += 1,
            Decoded::Tcp(seg) if (seg.payload.len() as u32) < seg.payload_len => {
                if cut {
                    self.stats.snap_cut_payloads += 1;
                } else {
                    self.stats.clipped_segments += 1;
                }
            }
            _ => {}
        }
        self.decoded(at, decoded);
        if !self.quic.is_empty() {
            self.quic.sweep(ts_ns);
            self.report_quic();
        }
        self.finisher.poll_sometimes(&mut *self.sink);
    }

    /// Diagnoses the QUIC connections finished since the last call.
    fn report_quic(&mut self) {
        let Some(diagnose) = self.quic_diagnose else {
            return;
        };
        let two_way = self.calls.syn_ack_seen;
        for mut facts in self.quic.take_done() {
            facts.two_way_capture |= two_way;
            let report = diagnose(facts);
            self.sink.quic(&report);
            self.quic_reports.add(report);
        }
    }

    /// A UDP datagram that can be QUIC: a QUIC connection's, or not.
    fn quic_datagram(&mut self, at: Stamp, d: &UdpDatagram<'_>) {
        self.stats.non_tcp += 1;
        self.paths.heard_datagram(d.src, d.dst, at.frame, at.ts_ns);
        if self.quic_diagnose.is_none() {
            return;
        }
        let start = self.capture_start_ns.unwrap_or(at.ts_ns);
        self.quic.datagram(at, start, d);
    }

    /// Tracks a UDP datagram as if a frame carried it: for synthetic
    /// timelines.
    pub fn track_udp(&mut self, at: Stamp, d: &UdpDatagram<'_>) {
        self.advance_clock(at.ts_ns);
        self.capture_start_ns.get_or_insert(at.ts_ns);
        self.quic_datagram(at, d);
    }

    /// Moves the clock to `now_ns` without a frame (same epoch as frame
    /// timestamps: a live capture passes the wall clock on a timer;
    /// synthetic timelines pass their own clock), so
    /// connections that went quiet are finished and reported even when no
    /// packet arrives. A later frame stamped before `now_ns` (queued in a
    /// capture buffer) moves the clock no further.
    pub fn tick(&mut self, now_ns: i64) {
        if self.prev_ts_ns.is_some_and(|prev| now_ns < prev) {
            return;
        }
        self.advance_clock(now_ns);
        self.seen_until.ts_ns = self.seen_until.ts_ns.max(now_ns);
        // Ticks are rare (a live source's timer): sweep on every one.
        self.sweep(self.progress_ns);
        self.finish_closed(self.progress_ns);
        if !self.quic.is_empty() {
            self.quic.sweep(now_ns);
            self.report_quic();
        }
        self.finisher.poll(&mut *self.sink);
    }

    /// Moves the progress clock on by the frame's step forward. Frames
    /// stamped well before the latest (a clock stepped back, a trace
    /// appended to itself, old packets replayed among new ones) advance it
    /// only by their own new highs, and the return to the present only
    /// past the latest: a file that jumps back and forth (packetbeat's
    /// wsgi_drum.pcap replays each finished connection's SYN and answer
    /// after every new one) would otherwise count each jump forward again,
    /// age finished connections' tombstones in seconds and open their
    /// replays as new streams.
    fn advance_clock(&mut self, ts_ns: i64) {
        if let Some(prev) = self.prev_ts_ns {
            let step = if ts_ns < self.clock_high_ns.saturating_sub(REPLAY_NS) {
                let high = self.rewound_high_ns.get_or_insert(ts_ns);
                let step = ts_ns.saturating_sub(*high);
                *high = (*high).max(ts_ns);
                step
            } else if self.rewound_high_ns.take().is_some() {
                ts_ns.saturating_sub(self.clock_high_ns)
            } else {
                ts_ns.saturating_sub(prev)
            };
            self.progress_ns += step.clamp(0, MAX_CLOCK_STEP_NS);
        }
        self.clock_high_ns = self.clock_high_ns.max(ts_ns);
        self.prev_ts_ns = Some(ts_ns);
    }

    /// Counts and tracks one decode result. A fragment that completes its
    /// datagram brings the datagram's segment to this frame (where Wireshark
    /// shows it); the rebuilt bytes live until the segment is processed, and
    /// nothing keeps a borrow of them. Recursion is bounded: each rebuilt
    /// datagram decodes one encapsulation level deeper (`MAX_DEPTH`).
    fn decoded(&mut self, at: Stamp, decoded: Decoded<'_>) {
        match decoded {
            Decoded::Tcp(seg) => {
                self.stats.tcp_segments += 1;
                self.segment(at, &seg);
            }
            Decoded::Fragment(fragment) => {
                self.stats.ip_fragments += 1;
                if let Some(datagram) = self.defrag.push(&fragment, at.ts_ns) {
                    self.stats.ip_reassembled += 1;
                    self.decoded(at, datagram.decode());
                }
            }
            Decoded::Quoted(q) => {
                self.stats.non_tcp += 1;
                self.quoted(at, &q);
            }
            Decoded::Dns(datagram) => self.dns(at, &datagram),
            Decoded::Quic(datagram) => self.quic_datagram(at, &datagram),
            Decoded::Skipped(Skip::NotIp) => self.stats.non_ip += 1,
            Decoded::Skipped(Skip::NotTcp) => self.stats.non_tcp += 1,
            Decoded::Skipped(Skip::Fragment) => self.stats.ip_fragments += 1,
            Decoded::Damaged(_) => self.stats.damaged += 1,
        }
    }

    /// A TCP header an ICMP error quotes (Wireshark's rule): the frame is
    /// its 4-tuple's stream's (its last frame, when latest), and opens one
    /// when none is known, which that 4-tuple's later packets join;
    /// nothing in it is analysed (an error about a packet is not one).
    fn quoted(&mut self, at: Stamp, q: &QuotedTcp) {
        let seg = Segment {
            src: q.src,
            dst: q.dst,
            src_port: q.src_port,
            dst_port: q.dst_port,
            seq: q.seq,
            ack: 0,
            flags: q.flags,
            window: 0,
            options: Default::default(),
            payload_len: 0,
            payload: &[],
            ip_id: None,
        };
        let key = FlowKey::of(&seg);
        if self.embryos.note_quoted(&key, at.frame) {
            return;
        }
        if let Some(c) = self.table.get_mut(&key) {
            c.last.frame = c.last.frame.max(at.frame);
            c.syn_quoted |= q.flags.syn() && !q.flags.ack();
            if let Some(mtu) = q.too_big {
                c.note_too_big(at, q, mtu);
            }
            return;
        }
        if self.tombstones.contains_key(&key) {
            return;
        }
        if self.table.len() >= self.flow_cap() {
            self.evict_idle();
        }
        let (client, server) = roles(&seg);
        let stream = self.next_stream;
        self.next_stream += 1;
        let mut c = new_connection(
            &self.options,
            self.finisher.husk(),
            stream,
            client,
            server,
            at,
        );
        c.last_progress_ns = self.progress_ns;
        self.table.insert(key, c);
    }

    fn segment(&mut self, at: Stamp, seg: &Segment<'_>) {
        self.note_clock(at.ts_ns);
        let key = FlowKey::of(seg);
        let src = Endpoint {
            ip: seg.src,
            port: seg.src_port,
        };
        let is_syn = seg.flags.syn() && !seg.flags.ack();
        // Most packets belong to a connection already tracked: one lookup.
        // (A key is in at most one of the table, the lone SYNs and the
        // tombstones, so the checks below would all pass it through.)
        if let Some(conn) = self.table.get_mut(&key) {
            if !conn.reused_by(src, seg) {
                conn.settle_roles(src, seg);
                let dir = conn.direction_from(src);
                let same = track_in(
                    conn,
                    dir,
                    at,
                    seg,
                    key,
                    self.progress_ns,
                    &mut self.stats,
                    &mut self.closing,
                    &mut self.paths,
                    &mut self.twins,
                    &mut self.calls,
                    self.window_diagnose,
                    &mut *self.sink,
                );
                self.mark_same_as(same);
                return;
            }
        }
        if self.embryos.contains(&key) {
            if self.table.len() >= self.flow_cap() {
                self.evict_idle();
            }
            self.grow(key);
        }
        if !self.table.contains_key(&key) {
            if let Some(t) = self.tombstones.get_mut(&key) {
                let side = usize::from(key.lo != (seg.src, seg.src_port));
                let reused = is_syn && t.seen[side] && t.base_seq[side] != seg.seq;
                if !reused {
                    t.last_progress_ns = self.progress_ns;
                    // A second pass of the trace (the clock went back)
                    // replays packets already analysed: copies.
                    if self.rewound {
                        self.stats.capture_duplicates += 1;
                    } else {
                        self.stats.late_packets += 1;
                    }
                    return;
                }
                self.tombstones.remove(&key);
            }
            let lone_syn = is_syn
                && seg.payload_len == 0
                && seg.options.tfo.is_none()
                && seg.options.mptcp.is_none()
                && seg.options.sack_len == 0
                && self.options.ladder_stream != Some(self.next_stream);
            if lone_syn {
                if self.embryos.len() >= self.flow_cap() * EMBRYOS_PER_FLOW {
                    self.evict_embryos();
                }
                let stream = self.next_stream;
                self.next_stream += 1;
                self.calls.dials.syn(stream, seg.src, destination(seg), at);
                self.calls.lookups.syn(stream, destination(seg), at);
                self.calls.peer_dials.dialled(seg.src, seg.dst, at.ts_ns);
                if let Some((tsval, _)) = seg.options.timestamps {
                    self.calls.client_clocks.note(seg.src, at.ts_ns, tsval);
                }
                self.quic.tcp_syn(seg.src, destination(seg), stream, at);
                self.embryos.insert(
                    key,
                    Embryo {
                        stream,
                        at,
                        last_progress_ns: self.progress_ns,
                        seq: seg.seq,
                        window: seg.window,
                        flags: seg.flags,
                        ip_id: seg.ip_id,
                        mss: seg.options.mss,
                        window_scale: seg.options.window_scale,
                        sack_permitted: seg.options.sack_permitted,
                        from_lo: key.lo == (seg.src, seg.src_port),
                        options_malformed: seg.options.malformed,
                        timestamps: seg.options.timestamps,
                        quoted_after: 0,
                    },
                );
                return;
            }
            if self.table.len() >= self.flow_cap() {
                self.evict_idle();
            }
        }
        // A lone SYN grown above may be a new connection on its port.
        if self.table.get(&key).is_some_and(|c| c.reused_by(src, seg)) {
            let old = self.table.remove(&key).expect("present");
            self.emit(key, old, None, false);
        }
        let next_stream = &mut self.next_stream;
        let options = &self.options;
        let finisher = &mut self.finisher;
        let calls = &mut self.calls;
        let quic = &mut self.quic;
        let conn = self.table.entry(key).or_insert_with(|| {
            let (client, server) = roles(seg);
            let stream = *next_stream;
            *next_stream += 1;
            calls.peer_dials.met(client.ip, server.ip);
            if is_syn {
                calls.dials.syn(stream, seg.src, destination(seg), at);
                calls.lookups.syn(stream, destination(seg), at);
                quic.tcp_syn(seg.src, destination(seg), stream, at);
            }
            new_connection(options, finisher.husk(), stream, client, server, at)
        });
        conn.settle_roles(src, seg);
        let dir = conn.direction_from(src);
        let same = track_in(
            conn,
            dir,
            at,
            seg,
            key,
            self.progress_ns,
            &mut self.stats,
            &mut self.closing,
            &mut self.paths,
            &mut self.twins,
            &mut self.calls,
            self.window_diagnose,
            &mut *self.sink,
        );
        self.mark_same_as(same);
    }

    /// Marks a connection seen again under translated addresses as the
    /// one it is (twins.rs), counted once.
    fn mark_same_as(&mut self, same: Option<SameAs>) {
        let Some(SameAs { later, earlier }) = same else {
            return;
        };
        if let Some(c) = self.table.get_mut(&later) {
            if c.same_as.is_none() {
                self.stats.translated_copies += 1;
            }
            c.same_as = Some(earlier);
        }
    }

    /// Turns a lone SYN into a connection that has seen it, in the table.
    fn grow(&mut self, key: FlowKey) {
        let Some(e) = self.embryos.remove(&key) else {
            return;
        };
        let c = self.connection_of(key, &e);
        self.table.insert(key, c);
    }

    /// The connection a lone SYN starts: one that has seen it.
    fn connection_of(&mut self, key: FlowKey, e: &Embryo) -> Box<Connection> {
        let syn = e.syn(&key);
        let (client, server) = roles(&syn);
        let husk = self.finisher.husk();
        let mut c = new_connection(&self.options, husk, e.stream, client, server, e.at);
        let dir = Direction::ClientToServer;
        if c.capture_copy(e.at, dir, &syn).is_none() {
            c.observe(e.at, dir, &syn);
            // (Its SYN-ACK is the server's stack's answer: uplink.rs.)
            if let Some((tsval, _)) = syn.options.timestamps {
                c.seen_tsvals.client(tsval, e.at.ts_ns, true);
            }
        }
        // An ICMP error that quoted the SYN: the stream's frame too.
        c.last.frame = c.last.frame.max(e.last().frame);
        c.syn_quoted = e.quoted_after > 0;
        c.last_progress_ns = e.last_progress_ns;
        c
    }

    /// Reports the longest-idle quarter of the lone SYNs.
    fn evict_embryos(&mut self) {
        let quarter = (self.embryos.len() as u64 / 4).max(1);
        let mut evicted = 0;
        while evicted < quarter && self.report_oldest_embryo_if(|_| true) {
            evicted += 1;
        }
        self.stats.evicted_flows += evicted;
    }

    /// Reports the longest-idle lone SYN if `take` says so (and says
    /// whether it did).
    fn report_oldest_embryo_if(&mut self, take: impl Fn(&Embryo) -> bool) -> bool {
        let Some((k, e)) = self.embryos.pop_oldest_if(take) else {
            return false;
        };
        self.emit_lone_syn(k, &e, Some(Ending::Idle), true);
        true
    }

    /// Finishes the closing connections whose linger has passed since
    /// their last packet; one that heard more since is looked at again a
    /// linger after that packet, one that is no longer done (a refused
    /// SYN sent again) leaves the queue until it is done again.
    fn finish_closed(&mut self, now_ns: i64) {
        while let Some((key, stream)) = self.closing.due(now_ns) {
            let Some(c) = self.table.get_mut(&key) else {
                continue;
            };
            if c.stream != stream || !c.closing_queued {
                continue;
            }
            if !c.is_done() {
                c.closing_queued = false;
                continue;
            }
            if now_ns - c.last_progress_ns <= self.closing.linger_ns(c) {
                let again = c.last_progress_ns;
                self.closing.queue(c, key, again);
                continue;
            }
            let c = self.table.remove(&key).expect("present");
            self.emit(key, c, None, true);
        }
    }

    /// Counts the times the capture clock went back by more than merged
    /// captures' clock offsets explain: the file holds a second pass
    /// (whose packets the connections then take as copies).
    fn note_clock(&mut self, ts_ns: i64) {
        match self.latest_ns {
            Some(latest) if ts_ns < latest - REPLAY_NS => {
                if !self.rewound {
                    self.rewound = true;
                    self.stats.capture_restarts += 1;
                }
            }
            Some(latest) if ts_ns <= latest => {}
            _ => {
                self.latest_ns = Some(ts_ns);
                self.rewound = false;
            }
        }
    }

    /// Adds key-log lines (SSLKEYLOGFILE format) to the key log, for the
    /// connections opened from now on and those still open: the secrets are
    /// used when a connection's report is made, at its end.
    pub fn add_key_log_lines(&mut self, text: &[u8]) {
        let mut log = self.options.keylog.as_deref().cloned().unwrap_or_default();
        for line in text.split(|&b| b == b'\n') {
            log.add_line(&String::from_utf8_lossy(line));
        }
        let log = std::sync::Arc::new(log);
        for c in self.table.values_mut() {
            c.keylog = Some(log.clone());
        }
        self.options.keylog = Some(log);
    }

    /// Tracks one decoded segment as if a frame carried it: for synthetic
    /// timelines (the detectors' specifications) and sources that decode
    /// themselves.
    pub fn track_segment(&mut self, at: Stamp, seg: &Segment<'_>) {
        self.advance_clock(at.ts_ns);
        self.seen_until = at;
        self.segment(at, seg);
    }

    /// Tracks a DNS datagram as if a frame carried it: for synthetic
    /// timelines.
    pub fn track_dns(&mut self, at: Stamp, d: &rttdoc_wire::UdpDatagram<'_>) {
        self.advance_clock(at.ts_ns);
        self.seen_until = at;
        self.dns(at, d);
    }

    /// A DNS datagram: not TCP, counted, and read for the name lookups
    /// (dns.rs).
    fn dns(&mut self, at: Stamp, d: &rttdoc_wire::UdpDatagram<'_>) {
        self.stats.non_tcp += 1;
        self.stats.dns_messages += 1;
        self.paths.heard_datagram(d.src, d.dst, at.frame, at.ts_ns);
        self.calls.lookups.datagram(at, d);
    }

    /// Tracks the TCP header an ICMP error quotes as if a frame carried
    /// it: for synthetic timelines.
    pub fn track_quoted(&mut self, at: Stamp, q: &QuotedTcp) {
        self.advance_clock(at.ts_ns);
        self.seen_until = at;
        self.stats.non_tcp += 1;
        self.quoted(at, q);
    }

    fn sweep(&mut self, now_ns: i64) {
        self.last_sweep_ns = Some(now_ns);
        let linger = self.options.linger_ms as i64 * 1_000_000;
        let idle = self.options.idle_timeout_s as i64 * 1_000_000_000;
        let done: Vec<FlowKey> = self
            .table
            .iter()
            .filter(|(_, c)| {
                let quiet = now_ns - c.last_progress_ns;
                // Refused connections may see their SYN again; a FIN not
                // yet acknowledged will be sent again: both linger long.
                let refused = c.syn_ack.is_none() && c.syn_count > 0;
                let linger = if refused || !c.is_done() {
                    linger.max(LONG_LINGER_NS)
                } else {
                    // (normally finished by the closing queue first)
                    self.closing.linger_ns(c)
                };
                (c.is_closed() && quiet > linger) || quiet > idle
            })
            .map(|(k, _)| *k)
            .collect();
        self.finish_flows(done);
        while self.report_oldest_embryo_if(|e| now_ns - e.last_progress_ns > idle) {}
        self.tombstones
            .retain(|t| now_ns - t.last_progress_ns <= TOMBSTONE_NS);
    }

    /// Finishes the longest-idle quarter of the table (at least one
    /// connection) to make room: a linear selection, so a flood of new
    /// flows costs O(1) per flow amortised.
    fn evict_idle(&mut self) {
        let ages = self.table.values().map(|c| (c.last_progress_ns, c.stream));
        let last = idle_quarter_cutoff(&mut self.ages, ages);
        let oldest: Vec<FlowKey> = self
            .table
            .iter()
            .filter(|(_, c)| (c.last_progress_ns, c.stream) <= last)
            .map(|(k, _)| *k)
            .collect();
        self.stats.evicted_flows += oldest.len() as u64;
        self.finish_flows(oldest);
    }

    /// Reports these connections in stream order and leaves their tombstones.
    fn finish_flows(&mut self, keys: Vec<FlowKey>) {
        let mut finished: Vec<(FlowKey, Box<Connection>)> = keys
            .into_iter()
            .filter_map(|k| self.table.remove(&k).map(|c| (k, c)))
            .collect();
        finished.sort_by_key(|(_, c)| c.stream);
        for (k, c) in finished {
            let ending = (!c.is_closed()).then_some(Ending::Idle);
            self.emit(k, c, ending, true);
        }
    }

    /// Reports a connection; with `tombstone`, its 4-tuple stays on its
    /// stream for [`TOMBSTONE_NS`].
    /// [`Tracker::emit`] for a flow that was one SYN: reported from its
    /// small record where that gives the same facts.
    fn emit_lone_syn(&mut self, key: FlowKey, e: &Embryo, ending: Option<Ending>, tombstone: bool) {
        if !e.has_plain_facts(&self.options) {
            let c = self.connection_of(key, e);
            self.emit(key, c, ending, tombstone);
            return;
        }
        if tombstone {
            let lo = e.from_lo.then_some(e.seq);
            let hi = (!e.from_lo).then_some(e.seq);
            self.bury(key, e.last_progress_ns, lo, hi);
        }
        // What emit() decides for a connection of one SYN (no RST, no FIN).
        let lone = LoneSyn {
            key,
            embryo: *e,
            ending: ending.unwrap_or(Ending::Open),
            detect: self.options.findings,
        };
        self.stats.connections += 1;
        self.finisher
            .submit_lone_syn(lone, self.stats.first_time, &mut *self.sink);
    }

    /// Keeps what late packets of a finished flow need (its tombstone).
    fn bury(&mut self, key: FlowKey, last_progress_ns: i64, lo: Option<u32>, hi: Option<u32>) {
        self.tombstones.insert(
            key,
            Tombstone {
                last_progress_ns,
                base_seq: [lo.unwrap_or(0), hi.unwrap_or(0)],
                seen: [lo.is_some(), hi.is_some()],
            },
        );
    }

    fn emit(
        &mut self,
        key: FlowKey,
        mut c: Box<Connection>,
        ending: Option<Ending>,
        tombstone: bool,
    ) {
        // What a preamble held back (a text protocol's turns, while it
        // could still start TLS) reaches the exchanges here at the latest,
        // where the connections the server opened back to its client are
        // still known.
        if c.detect {
            c.release_held();
            if c.exchanges.total > 0 || c.exchanges.greeting.is_some() {
                note_connect_backs(&mut c, &self.calls.dials);
            }
            // (Exchanges a preamble held back open here.)
            if c.exchanges.total > 0 && !c.previous_looked_up {
                take_previous(&mut c, &mut self.calls.ends);
            }
            // (A connection refused at its SYN, by a RST or an ICMP
            // error, did not use the lookup: the address tried next did.)
            if !c.refused_at_syn() {
                take_lookup(&mut c, &mut self.calls.lookups);
            }
            c.client_closed_with = client_closed_with(&c, &self.calls.closes);
            // A connection whose client's data went unanswered while its
            // timer re-sent it: the client's others that stalled so
            // meanwhile (black_holes.rs).
            if let Some(stall) = crate::black_holes::BlackHoles::stall_of(&c.timeline) {
                c.stalled_elsewhere = Some(self.calls.black_holes.stalled_elsewhere(
                    c.client.ip,
                    c.server.ip,
                    c.stream,
                    stall,
                ));
            }
            c.sibling_closes = self.calls.closes.of_siblings(
                c.stream,
                c.server.ip,
                c.client.ip,
                c.first.ts_ns,
                c.last.ts_ns,
            );
            // A TLS client that closed during its handshake just as a
            // connection its server had opened to it began sending: the
            // two hosts dialled each other and kept the other leg
            // (nDPI's anydesk-2.pcap 1, judged wrong in session 84).
            // (Only where nothing was answered: a search of the capture's
            // recent data, kept off the connections that served.)
            if c.tls.is_some() && c.exchanges.kept.iter().all(|x| x.response_first.is_none()) {
                c.dialled_back_data_ns = dialled_back_data(&c, &self.calls.closes);
            }
            // Server data may have been written when a sibling's data came
            // (a broker's push; iperf3's TEST_START once the test's data
            // connection is in). (Only a server that sent data can have
            // been held: a capture of clients' packets alone walks no ring.)
            let server_sent = c.half[Direction::ServerToClient.index()].stats.bytes > 0;
            if server_sent {
                c.sibling_data = self.calls.closes.data_to_server(
                    c.stream,
                    c.server.ip,
                    c.client.ip,
                    c.first.ts_ns,
                    c.last.ts_ns,
                );
            }
        }
        // The end it took, with the closes captured since (reuse.rs).
        if let Some(p) = c.previous.as_deref_mut() {
            if let Some(now) = self.calls.ends.settle(p.stream) {
                *p = now;
            }
            p.server_idle = self.calls.ends.server_idle_limit(c.server);
        }
        // Its client's data sent before the client's uplink rate was
        // known: the waits replayed when it became known (uplink_load.rs).
        if c.detect {
            take_replayed_waits(&mut c, &self.calls.uplink_loads);
        }
        // Uplink waits read with a rate the client's later samples did
        // not bear out (they disagreed, or showed the link faster): none
        // (uplink_load.rs).
        if !c.uplink_waits.is_empty()
            && !self
                .calls
                .uplink_loads
                .still_holds(c.client.ip, c.uplink_rate)
        {
            c.uplink_waits.clear();
        }
        // How far the capture went on past it: a client still waiting for
        // an answer to its SYNs then waited at least that long; one that
        // sent nothing on a connection it had set up used it for nothing
        // that long (Facts::never_asked).
        c.seen_until = Some(self.seen_until);
        // A client whose SYNs were sent again: its clock spaces them as
        // its timer did, whatever stamped their capture (client_clock.rs).
        if c.syn_count > 1 {
            let syn = c
                .timeline
                .iter()
                .find(|r| r.dir == Direction::ClientToServer && r.flags.syn() && r.timestamped)
                .map(|r| (r.ts_ns, r.tsval));
            c.client_clock_hz = self.calls.client_clocks.hz(c.client.ip, syn);
            // SYNs nothing answered, in a capture of the clients'
            // direction only: the answer may be what it did not keep.
            c.one_way_capture = !self.calls.syn_ack_seen
                && !self.calls.server_spoke
                && self.calls.client_went_on_unseen;
            // And how many other servers its client dialled at once: a
            // dial nothing answered among many held that dial only.
            if c.syn_ack.is_none() {
                c.dials_beside =
                    self.calls
                        .peer_dials
                        .beside(c.client.ip, c.server.ip, c.first.ts_ns);
            }
        }
        // When its client dialled other servers during its TLS handshake
        // (a fetch to check the certificate goes online on a connection
        // of its own), where the capture shows its dials.
        if self.calls.lookups.queries_seen {
            if let Some((hello, _)) = c.tls.as_ref().and_then(|t| t.client_hello_at) {
                c.client_dials =
                    self.calls
                        .peer_dials
                        .others_since(c.client.ip, c.server.ip, hello.ts_ns);
            }
        }
        // Whether a box answered its client for other servers too, on its
        // SYN-ACK's clock (shared_clock.rs).
        if let Some((ts_ns, tsval)) = c.server_clock {
            c.servers_on_clock =
                self.calls
                    .server_clocks
                    .servers_sharing(c.client.ip, c.server.ip, ts_ns, tsval);
        }
        if c.tls.is_some() && !self.calls.issued_sessions.is_empty() {
            look_up_issued_session(&mut c, &mut self.calls.issued_sessions);
        }
        if c.detect && c.tls.is_some() && !self.calls.false_starters.is_empty() {
            look_up_false_start(&mut c, &self.calls.false_starters);
        }
        // A TLS connection's handshake may have waited for its client's
        // certificate fetches (cert_fetch.rs).
        if c.detect && c.tls.is_some() && !self.calls.certificate_fetches.is_empty() {
            c.certificate_fetches = self.calls.certificate_fetches.during(
                c.client.ip,
                c.stream,
                c.first.ts_ns,
                c.last.ts_ns,
            );
        }
        // Only answers are weighed against the path's queue.
        if c.detect && (c.exchanges.total > 0 || c.tls.is_some()) {
            // (Saturating: a broken clock may stand at the end of time.)
            let from = c.first.ts_ns.saturating_sub(PATH_WINDOW_NS);
            let to = c.last.ts_ns.saturating_add(PATH_WINDOW_NS);
            c.path_samples = self.paths.queues_found(c.client.ip, c.server.ip, from, to);
            c.uplink = self
                .calls
                .uplink_echoes
                .view(c.client.ip, c.server.ip, c.stream, &c.exchanges.kept)
                .map(Box::new);
            c.path_busy = self.paths.busy_runs(c.client.ip, from, to);
            c.path_stalls = self.paths.stalls_between(from, to);
        }
        if tombstone {
            let client_is_lo = key.lo == (c.client.ip, c.client.port);
            let (lo, hi) = if client_is_lo {
                (Direction::ClientToServer, Direction::ServerToClient)
            } else {
                (Direction::ServerToClient, Direction::ClientToServer)
            };
            self.bury(key, c.last_progress_ns, c.base_seq(lo), c.base_seq(hi));
        }
        let ending = ending.unwrap_or_else(|| {
            let [a, b] = [&c.half[0].stats, &c.half[1].stats];
            // Refused: the server's RST answered the SYN, the client
            // sending nothing after it (ACKs or data from the client
            // mean a SYN-ACK came that the capture lacks: a RST after
            // them resets an open connection).
            if c.syn_count > 0
                && c.syn_ack.is_none()
                && a.rst_frame.is_none()
                && b.rst_frame.is_some()
                && a.packets <= c.syn_count as u64
            {
                Ending::Refused
            } else if a.rst_frame.is_some() || b.rst_frame.is_some() {
                Ending::Reset
            } else if a.fin_frame.is_some() && b.fin_frame.is_some() {
                Ending::Fin
            } else if c.syn_quoted && c.syn_ack.is_none() && b.packets == 0 {
                Ending::Unreachable
            } else {
                Ending::Open
            }
        });
        self.stats.connections += 1;
        self.finisher
            .submit(c, ending, self.stats.first_time, &mut *self.sink);
    }

    /// Finishes every connection still open (end of capture), in stream order.
    pub fn finish(mut self) -> CaptureStats {
        // Connections and lone SYNs together in stream order; a lone SYN
        // becomes a connection only for its own report.
        let mut rest: Vec<(u64, FlowKey)> = self
            .table
            .iter()
            .map(|(k, c)| (c.stream, *k))
            .chain(self.embryos.iter().map(|(k, e)| (e.stream, *k)))
            .collect();
        rest.sort_unstable_by_key(|(stream, _)| *stream);
        for (_, k) in rest {
            if let Some(e) = self.embryos.remove(&k) {
                self.emit_lone_syn(k, &e, None, false);
            } else if let Some(c) = self.table.remove(&k) {
                self.emit(k, c, None, false);
            }
        }
        self.finisher.drain(&mut *self.sink);
        self.quic.end();
        self.report_quic();
        if self.quic_reports.connections > 0 {
            self.stats.quic = Some(Box::new(std::mem::take(&mut self.quic_reports)));
        }
        self.stats
    }
}

/// Hands a window diagnosed while its connection is open to the sink,
/// with the connection's TLS version and server name, which its report
/// will have (a connection seen again under translated addresses is its
/// earlier stream's: its waits are counted there).
fn hand_window(
    conn: &Connection,
    mut report: crate::model::ConnectionReport,
    sink: &mut dyn ReportSink,
) {
    if conn.same_as.is_some() {
        return;
    }
    report.tls = conn.tls_identity();
    sink.window(report);
}

/// The waits at its uplink of the connection's client data segments sent
/// before the uplink's rate was known, replayed when it became known
/// (uplink_load.rs), joined to those read as they left.
fn take_replayed_waits(c: &mut Connection, loads: &crate::uplink_load::UplinkLoads) {
    let (Some(first), Some(last)) = (c.timeline.first(), c.timeline.last()) else {
        return;
    };
    let (replayed, rate) = loads.replayed(c.client.ip, first.frame..=last.frame);
    let before = c.uplink_waits.len();
    for &(frame, wait) in replayed {
        let own = c
            .timeline
            .binary_search_by_key(&frame, |r| r.frame)
            .is_ok_and(|i| c.timeline[i].dir == Direction::ClientToServer && c.timeline[i].len > 0);
        // (Those read as they left are in frame order.)
        let known = c.uplink_waits[..before]
            .binary_search_by_key(&frame, |&(f, _)| f)
            .is_ok();
        if own && !known && wait >= crate::connection::UPLINK_WAIT_KEPT_NS {
            c.uplink_waits.push((frame, wait));
        }
    }
    if c.uplink_waits.len() > before {
        c.uplink_waits.sort_unstable_by_key(|&(f, _)| f);
        let over = c
            .uplink_waits
            .len()
            .saturating_sub(crate::connection::UPLINK_WAITS_KEPT);
        c.uplink_waits.drain(..over);
        c.uplink_rate = c.uplink_rate.min(rate);
    }
}

/// The client's uplink (uplink_load.rs): each packet of the client's
/// joins its queue, and a data segment's wait there is kept; each pure
/// ACK of the server's that acknowledged more of a burst of the client's
/// data samples the uplink's rate against the ACK before it
/// (`client_acked`: what the server had acknowledged before this
/// packet).
fn note_uplink(
    conn: &mut Connection,
    dir: Direction,
    at: Stamp,
    seg: &Segment<'_>,
    client_acked: Option<u32>,
    loads: &mut crate::uplink_load::UplinkLoads,
) {
    use crate::uplink_load::{BurstAck, BURST_NS, MIN_SAMPLE_BYTES};
    if dir == Direction::ClientToServer {
        let wait = loads.sent(
            conn.client.ip,
            at.ts_ns,
            at.frame,
            seg.payload_len,
            &mut conn.uplink_slot,
        );
        if let Some((wait, rate)) = wait.filter(|&(w, _)| {
            w >= crate::connection::UPLINK_WAIT_KEPT_NS && seg.payload_len > 0 && conn.detect
        }) {
            if conn.uplink_waits.len() >= crate::connection::UPLINK_WAITS_KEPT {
                conn.uplink_waits.remove(0);
            }
            conn.uplink_waits.push((at.frame, wait));
            conn.uplink_rate = conn.uplink_rate.min(rate);
        }
        return;
    }
    if seg.payload_len > 0 {
        loads.arrived(conn.client.ip, at.ts_ns, &mut conn.uplink_slot);
    }
    let advanced = conn.half[Direction::ServerToClient.index()]
        .acked
        .is_some_and(|a| client_acked.is_none_or(|b| crate::seq::lt(b, a)));
    match conn.acked_sent {
        Some((sent_ns, bytes)) => {
            // (A pure ACK: one that carries data left when the server's
            // application wrote, not when the client's bytes came.)
            let pure = seg.payload_len == 0 && !seg.flags.fin() && !seg.flags.syn();
            // A receiver acknowledges two full segments at once, or,
            // while in quick-ACK mode, each as it comes; the ACK of a
            // burst's last odd segment it may hold for its delayed-ACK
            // timer (Netflix's server in nDPI's netflix.pcap, 40 ms).
            let prompt = bytes >= 2 * MIN_SAMPLE_BYTES
                || conn
                    .rtt
                    .oldest_outstanding(Direction::ClientToServer)
                    .is_some_and(|next| (0..=BURST_NS).contains(&(next - sent_ns)));
            if let Some((before_ns, before_sent_ns)) = conn.uplink_probe.filter(|_| pure) {
                let ack = BurstAck {
                    before_ns,
                    before_sent_ns,
                    ts_ns: at.ts_ns,
                    sent_ns,
                    prompt,
                };
                loads.acknowledged(conn.client.ip, ack, &mut conn.uplink_slot);
            }
            conn.uplink_probe = Some((at.ts_ns, sent_ns));
        }
        // (Bytes acknowledged whose sending is not known: the next
        // sample would span them unseen.)
        None if advanced => conn.uplink_probe = None,
        None => {}
    }
}

/// Tracks one segment of a connection in the table: a capture's copy is
/// counted and dropped; anything else is observed, and a connection with
/// nothing more due joins the closing queue.
#[allow(clippy::too_many_arguments)]
#[inline]
fn track_in(
    conn: &mut Connection,
    dir: Direction,
    at: Stamp,
    seg: &Segment<'_>,
    key: FlowKey,
    progress_ns: i64,
    stats: &mut CaptureStats,
    closing: &mut Closing,
    paths: &mut PathSamples,
    twins: &mut Twins,
    calls: &mut Calls,
    windows: Option<crate::DiagnoseWindow>,
    sink: &mut dyn ReportSink,
) -> Option<SameAs> {
    if let Some(copy) = conn.capture_copy(at, dir, seg) {
        stats.capture_duplicates += 1;
        if let Some(gap) = copy.gap_ns {
            let shortest = &mut stats.copy_gaps_ns[dir.index()];
            *shortest = Some(shortest.map_or(gap, |s| s.min(gap)));
        }
        return None;
    }
    if dir == Direction::ServerToClient && seg.payload_len > 0 {
        look_up_lone_first(conn, &calls.ticket_sizes);
    }
    let resent = conn.half[dir.index()].stats.retransmissions;
    let syns = conn.syn_count;
    let client_acked = conn.half[Direction::ServerToClient.index()].acked;
    conn.observe(at, dir, seg);
    note_uplink(conn, dir, at, seg, client_acked, &mut calls.uplink_loads);
    // (And at the client's FIN or RST: an application that gave up on a
    // stall, or moved to a new connection that was answered: skype.pcap
    // 91, its FIN 0.34 ms after its new connection to the same server got
    // its answer.)
    let let_go = dir == Direction::ClientToServer
        && seg
            .flags
            .intersects(rttdoc_wire::TcpFlags::FIN | rttdoc_wire::TcpFlags::RST);
    // (And at a SYN sent again: an unanswered dial while the client's
    // other connections were heard was this address's alone.)
    let syn_again = conn.syn_count > syns && conn.syn_count > 1;
    let resent_now = conn.half[dir.index()].stats.retransmissions != resent;
    if (resent_now || syn_again) && dir == Direction::ClientToServer {
        let heard = crate::Heard {
            stream: conn.stream,
            frame: at.frame,
            ts_ns: at.ts_ns,
        };
        paths.resent(conn.client.ip, conn.server.ip, heard);
    }
    let resent_data = resent_now && dir == Direction::ClientToServer && seg.payload_len > 0;
    if syn_again || resent_data {
        let unheard = paths
            .last_heard_anywhere()
            .zip(paths.resent_besides(conn.client.ip, conn.server.ip))
            .map(|((frame, ts_ns), resent)| crate::NothingHeard {
                last_heard_frame: frame,
                last_heard_ns: ts_ns,
                resent_elsewhere: resent,
            });
        if syn_again {
            conn.nothing_heard = unheard;
        } else {
            conn.unheard_at_resend = unheard;
        }
    }
    if (resent_now || let_go || syn_again)
        && conn.heard_at_resends.len() < crate::RESENDS_HEARD_KEPT
    {
        if let Some(heard) = paths.heard_besides(conn.client.ip, conn.stream) {
            conn.heard_at_resends.push((at.frame, heard));
        }
        for acked in paths.acknowledged_besides(conn.client.ip, conn.stream) {
            conn.acked_at_resends.push((at.frame, acked));
        }
    }
    // The server's echoes of the client's timestamps (uplink.rs).
    if let Some((tsval, tsecr)) = seg.options.timestamps {
        // (And the client's clock, read off its data at most once a
        // second per connection: client_clock.rs.)
        if dir == Direction::ClientToServer
            && seg.payload_len > 0
            && at.ts_ns.saturating_sub(conn.clock_noted_ns) >= 1_000_000_000
        {
            conn.clock_noted_ns = at.ts_ns;
            calls.client_clocks.note(conn.client.ip, at.ts_ns, tsval);
        }
        if dir == Direction::ClientToServer {
            // (A SYN's answer, the SYN-ACK, is its stack's too.)
            let stack_answers = seg.payload_len == 0 && !seg.flags.fin();
            conn.seen_tsvals.client(tsval, at.ts_ns, stack_answers);
        } else if let Some(client_ns) = conn.seen_tsvals.echo(tsecr) {
            let echo = crate::UplinkEcho {
                stream: conn.stream,
                client_ns,
                tsval,
            };
            calls
                .uplink_echoes
                .note(conn.client.ip, conn.server.ip, echo);
        }
    }
    if let Some(diagnose) = windows {
        if let Some(report) = conn.window_step(diagnose) {
            hand_window(conn, report, sink);
        }
    }
    if !calls.client_went_on_unseen
        && dir == Direction::ClientToServer
        && seg.flags.ack()
        && !seg.flags.syn()
        && !conn.half[1].seen
    {
        calls.client_went_on_unseen = true;
    }
    if dir == Direction::ServerToClient {
        calls.server_spoke = true;
        // (How late a pure ACK came, where it timed a round trip: beyond
        // the fastest the server acknowledged the client's data with one
        // before, this one's included: a server that always acknowledges
        // late, by a delayed-ACK timer or behind a front end that answered
        // the SYN, is not late. Its first: beyond the connection's fastest
        // round trip and the shortest delayed-ACK timer.)
        let answered = conn.answered_sent_ns.take().map(|sent| {
            let fastest = conn.rtt.pure_ack_sides().1.filter(|&f| f < at.ts_ns - sent);
            let fastest = fastest.or_else(|| {
                conn.fastest_round_trip_ns()
                    .map(|f| f + crate::path_samples::FIRST_ACK_DELAY_NS)
            });
            (sent, at.ts_ns - sent - fastest.unwrap_or(at.ts_ns - sent))
        });
        paths.heard(conn.server.ip, at.frame, at.ts_ns, answered);
        if let Some((sent_ns, bytes)) = conn.acked_sent.take() {
            let delivered = crate::Delivered {
                stream: conn.stream,
                server: conn.server.ip,
                port: conn.server.port,
                frame: at.frame,
                ts_ns: at.ts_ns,
                sent_ns,
                bytes,
            };
            paths.acknowledged(conn.client.ip, delivered);
        }
    } else if std::mem::take(&mut conn.acked_unseen_now) {
        paths.delivered(at.frame, at.ts_ns);
    }
    if dir == Direction::ServerToClient && seg.payload_len > 0 {
        paths.arrival(
            conn.client.ip,
            conn.stream,
            at.frame,
            at.ts_ns,
            seg.payload_len,
        );
        if let Some(asked) = conn.busy_asked_again.filter(|&(f, _)| f != at.frame) {
            ask_busy_again(conn, paths, asked);
        }
    }
    if conn.exchanges.events != 0 {
        note_exchange(conn, calls, paths);
    }
    let mut same = None;
    if seg.flags.fin() {
        calls.closes.fin(conn.stream, seg.src, seg.dst, at.ts_ns);
    }
    if seg.flags.fin() || seg.flags.rst() {
        match conn.close_seen {
            CloseSeen::Open => note_end(conn, calls, at, dir, seg),
            CloseSeen::First { by, fin_end } if by != dir => {
                note_second_close(conn, calls, at, dir, seg, fin_end)
            }
            _ => {}
        }
    }
    // The server's answer still coming after the client closed first.
    if dir == Direction::ServerToClient
        && seg.payload_len > 0
        && matches!(
            conn.close_seen,
            CloseSeen::First {
                by: Direction::ClientToServer,
                ..
            }
        )
    {
        note_answer_after_close(conn, calls, at, seg);
    }
    // (Only the client's: a push is written when another client's
    // message comes.)
    if seg.payload_len > 0 && dir == Direction::ClientToServer {
        calls.closes.data(conn.stream, seg.src, seg.dst, at.ts_ns);
    }
    // The server's clock, read on its first SYN-ACK or, when the capture
    // missed the handshake, its first segment (shared_clock.rs).
    let server_first =
        dir == Direction::ServerToClient && conn.half[dir.index()].stats.packets == 1;
    if server_first {
        if let Some((tsval, _)) = seg.options.timestamps {
            conn.server_clock = Some((at.ts_ns, tsval));
            calls
                .server_clocks
                .note(conn.client.ip, conn.server.ip, at.ts_ns, tsval);
        }
    }
    // The client's clock, read off its SYNs over the capture
    // (client_clock.rs).
    if seg.flags.syn() && !seg.flags.ack() && dir == Direction::ClientToServer {
        if let Some((tsval, _)) = seg.options.timestamps {
            calls.client_clocks.note(conn.client.ip, at.ts_ns, tsval);
        }
    }
    if seg.flags.syn() && seg.flags.ack() {
        // A clean handshake's SYN-ACK: how far the server was, then.
        note_handshake(conn, at, paths);

        calls.syn_ack_seen = true;
        if conn.syn_ack_count == 1 {
            calls.dials.accepted(conn.stream, conn.server.ip, at);
            calls.lookups.accepted(conn.stream, at);
            take_lookup(conn, &mut calls.lookups);
        }
        same = twins.syn_ack(conn.stream, key, seg.seq, seg.ack, at.ts_ns);
    }
    conn.last_progress_ns = progress_ns;
    if !conn.closing_queued && conn.is_done() {
        conn.closing_queued = true;
        closing.queue(conn, key, progress_ns);
    }
    same
}

/// An answer's server data packets after its first that its wait in the
/// client's downlink queue is asked again at, while it came out as none:
/// a bunch stamped late is a few packets (the link's deliveries a host
/// held for a few packets' time).
const BUSY_ASKED_AGAIN: u8 = 4;

/// The wait in the client's downlink queue of the answer whose first
/// packet is frame `answer`, asked again with the arrivals since (a bunch
/// the answer came in shows it stamped late), while its exchange is open.
#[inline(never)]
fn ask_busy_again(conn: &mut Connection, paths: &PathSamples, (answer, left): (u64, u8)) {
    conn.busy_asked_again = None;
    let client = conn.client.ip;
    let Some(x) = conn.exchanges.current_mut() else {
        return;
    };
    let Some(first) = x.response_first.filter(|a| a.frame == answer) else {
        return;
    };
    time_downlink_wait(paths, client, x, first.ts_ns);
    if x.downlink_busy_ns == 0 && left > 1 {
        conn.busy_asked_again = Some((answer, left - 1));
    }
}

/// The longest exchange `x`'s answer, its first packet captured at
/// `at_ns`, can have waited in the queue of `client`'s downlink
/// (`PathSamples::busy_before`), and, where that is more than none, the
/// stalls in its wait (`PathSamples::gaps_before`).
fn time_downlink_wait(
    paths: &PathSamples,
    client: std::net::IpAddr,
    x: &mut crate::Exchange,
    at_ns: i64,
) {
    let since = x.request_first.ts_ns;
    x.downlink_busy_ns = paths.busy_before(client, at_ns, since);
    x.downlink_gaps = if x.downlink_busy_ns > 0 {
        paths.gaps_before(client, at_ns, since)
    } else {
        None
    };
}

/// A request began or got its answer: the host's calls hear of it, and an
/// answered one learns the call it waited for (upstream.rs). Once per
/// request, out of the per-packet path.
#[inline(never)]
fn note_exchange(conn: &mut Connection, calls: &mut Calls, paths: &PathSamples) {
    let events = std::mem::take(&mut conn.exchanges.events);
    let key = conn.exchanges.current_key;
    let answered = events & crate::exchange::ANSWERED != 0;
    let place = if answered {
        Place::of(
            conn.sender_side_ns(Direction::ServerToClient),
            conn.sender_side_ns(Direction::ClientToServer),
        )
    } else {
        Place::default()
    };
    let (stream, same_as) = (conn.stream, conn.same_as);
    let (client, server, syn) = (conn.client, conn.server, conn.first_syn);
    if events & (crate::exchange::ANSWERED | crate::exchange::GREETED) != 0 {
        note_connect_backs(conn, &calls.dials);
    }
    if events & crate::exchange::OPENED != 0 && !conn.previous_looked_up {
        take_previous(conn, &mut calls.ends);
    }
    if events & crate::exchange::OPENED != 0 && !conn.false_start_noted {
        note_false_start(conn, &mut calls.false_starters);
    }
    if events & crate::exchange::OPENED != 0 {
        note_issued_session(conn, &mut calls.issued_sessions);
        note_route_request(conn, &mut calls.route_requests);
    }
    if events & crate::exchange::TICKET_SIZE != 0 {
        note_ticket_size(conn, &mut calls.ticket_sizes);
    }
    let notes = if events & crate::exchange::FOLLOW_UP_NOTES != 0 {
        conn.exchanges.take_follow_up_notes()
    } else {
        Vec::new()
    };
    if events & crate::exchange::OPENED != 0 {
        // (HTTP/2's requests read, none follows a redirect by its origin
        // alone: their URLs are known.)
        let urls_read = notes
            .iter()
            .any(|n| matches!(n, crate::h2c::FollowUpNote::Opened { .. }));
        note_request_opened(conn, &mut calls.redirects, urls_read);
        if !calls.challenges.is_empty() {
            note_challenge_answered(conn, &mut calls.challenges);
        }
        if !calls.preflights.is_empty() {
            note_preflight_followed(conn, &mut calls.preflights);
        }
    }
    if conn.exchanges.current_fetch.is_some() {
        let opened = events & crate::exchange::OPENED != 0;
        note_certificate_fetch(conn, &mut calls.certificate_fetches, opened, answered);
    }
    if answered && conn.exchanges.redirect.is_some() {
        note_redirect(conn, &mut calls.redirects);
    }
    if !notes.is_empty() {
        note_http2_follow_ups(conn, calls, notes);
    }
    if answered && conn.exchanges.challenge.is_some() {
        note_challenge(conn, &mut calls.challenges);
    }
    if answered && conn.exchanges.preflight_allowed.is_some() {
        note_preflight(conn, &mut calls.preflights);
    }
    let Some(x) = conn.exchanges.current_mut() else {
        return;
    };
    if events & crate::exchange::OPENED != 0 {
        calls.opened(stream, client.ip, x.request_first);
    }
    if let (true, Some(answer)) = (answered, x.response_first) {
        // (The answer's own bytes counted: track_in noted its arrival.)
        time_downlink_wait(paths, client.ip, x, answer.ts_ns);
        if x.downlink_busy_ns == 0 {
            conn.busy_asked_again = Some((answer.frame, BUSY_ASKED_AGAIN));
        }
        let (call, during) = calls.answered(Asking {
            stream,
            same_as,
            client,
            server,
            syn,
            place,
            request_first: x.request_first,
            answer,
            key,
        });
        x.upstream = call.map(Box::new);
        x.host_calls = during.map(Box::new);
        x.asked_elsewhere = calls
            .asked_elsewhere(client.ip, stream, x.request_last.ts_ns, answer.ts_ns)
            .map(Box::new);
    }
}

/// A request began: the connection's first notes whether it was opened
/// for it, and any request may follow a redirect answered lately
/// (redirect.rs). Once per request.
#[inline(never)]
fn note_request_opened(
    conn: &mut Connection,
    redirects: &mut crate::redirect::Redirects,
    urls_read: bool,
) {
    use crate::redirect::{Asked, Asking};
    let first = conn.exchanges.total == 1;
    let Some(request) = conn.exchanges.current.as_ref().map(|x| x.request_first) else {
        return;
    };
    if first {
        // Sent as soon as the set-up let it: within reuse.rs's READY_NS of the
        // server's last packet (its SYN-ACK or its last TLS flight), on the
        // client's clock.
        let client_side = conn.sender_side_ns(Direction::ClientToServer).unwrap_or(0);
        conn.exchanges.opened_for_first = conn.first_syn.filter(|_| {
            conn.exchanges.server_last_ns.is_some_and(|last| {
                request
                    .ts_ns
                    .saturating_sub(last.saturating_add(client_side))
                    <= crate::reuse::READY_NS
            })
        });
    }
    if redirects.is_empty() {
        return;
    }
    let opened = conn.first_syn.filter(|_| first);
    let starts = follow_up_starts(conn, first);
    let followed = match conn.exchanges.current_asked {
        Some(asked) => {
            let mut starts = starts;
            starts.push(request);
            redirects.follow(conn.client.ip, Asking::Url(asked.url()), &starts, request)
        }
        // (A TLS connection's requests unread: its first is known by the
        // name its ClientHello asked for, if it opened the connection
        // after the answer; without one (a client asks no name of an
        // address, RFC 6066 3), by the address it connected to.)
        None if opened.is_some() && conn.tls.is_some() && !urls_read => {
            let host = match (conn.server_name(), conn.server.ip) {
                (Some(name), _) => name.to_string(),
                (None, std::net::IpAddr::V4(a)) => a.to_string(),
                (None, std::net::IpAddr::V6(a)) => format!("[{a}]"),
            };
            redirects.follow(
                conn.client.ip,
                Asking::Origin(Asked::origin_of_server_name(&host, conn.server.port)),
                &starts,
                request,
            )
        }
        None => None,
    };
    if let (Some(f), Some(x)) = (followed, conn.exchanges.current_mut()) {
        x.redirected = Some(Box::new(f));
    }
}

/// A plain-HTTP request that fetched what its client needed to check a
/// certificate (cert_fetch.rs), told by its head when it was `opened`,
/// or by its answer's when it was `answered`: kept under the client from
/// when it began (its connection's lookup or SYN when it was the first
/// request), the answer's arrival noted. Once per request and answer.
#[inline(never)]
fn note_certificate_fetch(
    conn: &mut Connection,
    fetches: &mut crate::cert_fetch::CertificateFetches,
    opened: bool,
    answered: bool,
) {
    let x = &mut conn.exchanges;
    let (Some(asked), Some(current)) = (&x.current_fetch, &x.current) else {
        return;
    };
    let (request, answer) = (current.request_first, current.response_first);
    let told_by_answer = x.certificate_fetch_answered.take().filter(|_| answered);
    let (what, url) = match (asked, told_by_answer) {
        (Some((what, url)), _) if opened => (*what, url.clone()),
        (Some(_), _) => {
            if let (true, Some(answer)) = (answered, answer) {
                fetches.answered(conn.client.ip, conn.stream, request, answer);
            }
            return;
        }
        // Told by its answer alone: its URL from the request's label
        // (`GET /`) and the server's address, the head read no more.
        (None, Some(what)) => (
            what,
            crate::cert_fetch::url_of_label(current.label.as_deref(), conn.server),
        ),
        (None, None) => return,
    };
    let first = conn.exchanges.total == 1;
    let began = follow_up_starts(conn, first)
        .first()
        .copied()
        .unwrap_or(request);
    fetches.keep(
        conn.client.ip,
        crate::CertificateFetch {
            stream: conn.stream,
            what,
            url,
            began,
            request,
            answer,
        },
    );
}

/// When a request that follows a redirect may have begun, in order, its
/// own sending aside: when it was the connection's `first`, the client
/// began following where it looked the name up, or at the SYN; a
/// connection's later request began when it was sent.
fn follow_up_starts(conn: &Connection, first: bool) -> Vec<Stamp> {
    let opened = conn.first_syn.filter(|_| first);
    let lookup = opened.and_then(|syn| {
        let query = conn.lookup.as_ref()?.queries.first()?.sent;
        (query.ts_ns <= syn.ts_ns).then_some(query)
    });
    lookup.into_iter().chain(opened).collect()
}

/// What HTTP/2's reader noted (h2c.rs): each request opened may follow a
/// redirect or answer a challenge (the exchange it went into learns
/// which), and each redirect or challenge answered is kept for the
/// request that follows it. An HTTP/2 turn may hold several requests:
/// each is known by its own first segment.
#[inline(never)]
fn note_http2_follow_ups(
    conn: &mut Connection,
    calls: &mut Calls,
    notes: Vec<crate::h2c::FollowUpNote>,
) {
    use crate::h2c::FollowUpNote;
    use crate::redirect::Asking;
    let client = conn.client.ip;
    for note in notes {
        match note {
            FollowUpNote::Opened {
                asked,
                retry,
                at,
                first,
            } => {
                let redirected = (!calls.redirects.is_empty()).then(|| {
                    let mut starts = follow_up_starts(conn, first);
                    starts.push(at);
                    calls
                        .redirects
                        .follow(client, Asking::Url(asked.url()), &starts, at)
                });
                let challenged = retry
                    .filter(|_| !calls.challenges.is_empty())
                    .and_then(|retry| calls.challenges.follow(client, &retry, at));
                let preflighted = retry
                    .filter(|_| !calls.preflights.is_empty())
                    .and_then(|retry| calls.preflights.follow(client, retry.key(), at));
                // (An exchange holds one of each: a turn of two follow-ups
                // is rare.)
                if let Some(x) = conn.exchanges.current_mut() {
                    if let Some(f) = redirected.flatten() {
                        x.redirected.get_or_insert(Box::new(f));
                    }
                    if let Some(c) = challenged {
                        x.challenged.get_or_insert(Box::new(c));
                    }
                    if let Some(p) = preflighted {
                        x.preflighted.get_or_insert(Box::new(p));
                    }
                }
            }
            FollowUpNote::Redirected {
                location,
                status,
                request,
                request_label,
                first,
                answer,
            } => {
                let opened_for_it = conn.exchanges.opened_for_first.filter(|_| first);
                let answered = crate::redirect::Answered {
                    stream: conn.stream,
                    request,
                    opened_for_it,
                    answer,
                    status,
                    request_label,
                    server_ns: server_work_ns(conn, request, answer),
                };
                calls.redirects.answered(client, location, answered);
            }
            FollowUpNote::Challenged {
                challenge,
                retry,
                status,
                request,
                request_label,
                answer,
            } => {
                let leg = crate::challenge::Leg {
                    stream: conn.stream,
                    request,
                    answer,
                    status,
                };
                // (A request that answered a challenge and is challenged
                // again hands its legs on.)
                let before = conn.exchanges.take_challenged_of(request);
                calls
                    .challenges
                    .challenged(client, &retry, challenge, leg, request_label, before);
            }
            FollowUpNote::Preflighted {
                preflight,
                status,
                max_age_s,
                request,
                request_label,
                answer,
            } => calls.preflights.allowed(
                client,
                preflight,
                conn.stream,
                request,
                answer,
                status,
                max_age_s,
                request_label,
            ),
        }
    }
}

/// The open request's answer was a redirect: kept for the request that
/// follows it (redirect.rs). Once per redirect.
#[inline(never)]
fn note_redirect(conn: &mut Connection, redirects: &mut crate::redirect::Redirects) {
    let Some(location) = conn.exchanges.redirect.take() else {
        return;
    };
    let opened_for_it = conn
        .exchanges
        .opened_for_first
        .filter(|_| conn.exchanges.total == 1);
    let Some(x) = conn.exchanges.current.as_ref() else {
        return;
    };
    let (Some(answer), Some(status)) = (x.response_first, x.status) else {
        return;
    };
    let server_ns = server_work_ns(conn, x.request_last, answer);
    let Some(x) = conn.exchanges.current.as_mut() else {
        return;
    };
    // Kept on the request too: a redirect that sent the client here
    // names where the chain goes on (http_redirect's fix).
    x.redirects_to = Some(location.text.clone());
    redirects.answered(
        conn.client.ip,
        location,
        crate::redirect::Answered {
            stream: conn.stream,
            request: x.request_first,
            opened_for_it,
            answer,
            status,
            request_label: x.label.clone(),
            server_ns,
        },
    );
}

/// The server's own time before an answer at `answer` to a request whose
/// last segment was captured at `request`: what the server's side of the
/// path (its fastest answer yet, from the capture point) does not hold;
/// 0 when that side is unknown (behind a relay that answered the SYN
/// itself, the SYN-ACK timed the relay: nDPI's EAQ.pcap, a phone's
/// capture app whose 302 came 89 ms after its request, all but the
/// relay's 2 ms the path beyond it).
///
/// At most from the server's pure ACK of the whole request to the answer,
/// where that ACK came back late by less than [`ACK_ON_ARRIVAL_NS`]: it
/// left as the request arrived, which the path held (PcapPlusPlus's
/// many-protocols.pcap 10,
/// a request crossing a 1 Mbit/s uplink acknowledged 17 ms late and the
/// `301` 0.8 ms after that ACK; judged in session 84, "16.9 ms of server
/// work"), as server_think_time times a request.
/// How late a server's pure ACK of a request may come back and still
/// have left as the request arrived: under Linux's shortest delayed-ACK
/// timer (40 ms), less the 10 ms a 100 Hz tick fires it early by, so
/// that a path's jitter does not pass a timer's ACK off as one on
/// arrival (http-packets2.pcap 1: an ACK 36 ms late on a path whose
/// answers vary by 15 ms).
const ACK_ON_ARRIVAL_NS: i64 = 30_000_000;

/// The shortest round trip of a path long enough for a queue on it to
/// hold a request the milliseconds [`ACK_ON_ARRIVAL_NS`] reads: not a
/// loopback's or a LAN's.
const WAN_RTT_NS: i64 = 5_000_000;

fn server_work_ns(conn: &Connection, request: Stamp, answer: Stamp) -> i64 {
    if conn.behind_relay() {
        return 0;
    }
    let Some(side) = conn.exchanges.server_side_ns else {
        return 0;
    };
    let work = (answer.ts_ns - request.ts_ns - side).max(0);
    let path = conn.fastest_round_trip_ns().unwrap_or(0);
    let t = &conn.timeline;
    let Ok(i) = t.binary_search_by_key(&request.frame, |r| r.frame) else {
        return work;
    };
    let end = t[i].end;
    let acked_whole = t[i + 1..]
        .iter()
        .take_while(|r| r.frame < answer.frame)
        .find(|r| {
            r.dir == Direction::ServerToClient
                && r.len == 0
                && r.ack_set
                && crate::seq::le(end, r.ack)
        });
    match acked_whole {
        // (Only on a path of WAN_RTT_NS or more: on a loopback or a LAN,
        // a server's ACK some milliseconds on was its stack's or its
        // application's read, not a path that held the request:
        // packetbeat's wsgi_drum.pcap, 3.4 ms on loopback.)
        Some(ack)
            if path >= WAN_RTT_NS
                && (1..ACK_ON_ARRIVAL_NS).contains(&(ack.ts_ns - request.ts_ns - side)) =>
        {
            work.min((answer.ts_ns - ack.ts_ns).max(0))
        }
        _ => work,
    }
}

/// A request began that may answer an authentication challenge answered
/// lately (challenge.rs). Once per request.
#[inline(never)]
fn note_challenge_answered(conn: &mut Connection, challenges: &mut crate::challenge::Challenges) {
    let client = conn.client.ip;
    let retry = conn.exchanges.current_retry;
    let Some((x, retry)) = conn.exchanges.current_mut().zip(retry) else {
        return;
    };
    x.challenged = challenges
        .follow(client, &retry, x.request_first)
        .map(Box::new);
}

/// The open request's answer was an authentication challenge: kept for
/// the request that answers it, with the challenges the request itself
/// answered (challenge.rs). Once per challenge.
#[inline(never)]
fn note_challenge(conn: &mut Connection, challenges: &mut crate::challenge::Challenges) {
    let (client, stream) = (conn.client.ip, conn.stream);
    let challenge = conn.exchanges.challenge.take();
    let retry = conn.exchanges.current_retry;
    let (Some(challenge), Some(retry), Some(x)) = (challenge, retry, conn.exchanges.current_mut())
    else {
        return;
    };
    let (Some(answer), Some(status)) = (x.response_first, x.status) else {
        return;
    };
    let leg = crate::challenge::Leg {
        stream,
        request: x.request_first,
        answer,
        status,
    };
    let before = x.challenged.take().map(|b| *b);
    challenges.challenged(client, &retry, challenge, leg, x.label.clone(), before);
}

/// A request began that a CORS preflight answered lately may have let
/// go (preflight.rs). Once per request.
#[inline(never)]
fn note_preflight_followed(conn: &mut Connection, preflights: &mut crate::preflight::Preflights) {
    let client = conn.client.ip;
    let retry = conn.exchanges.current_retry;
    let Some((x, retry)) = conn.exchanges.current_mut().zip(retry) else {
        return;
    };
    x.preflighted = preflights
        .follow(client, retry.key(), x.request_first)
        .map(Box::new);
}

/// The open request was a CORS preflight and its answer allowed the
/// request: kept for that request (preflight.rs). Once per preflight.
#[inline(never)]
fn note_preflight(conn: &mut Connection, preflights: &mut crate::preflight::Preflights) {
    let (client, stream) = (conn.client.ip, conn.stream);
    let max_age_s = conn.exchanges.preflight_allowed.take();
    let preflight = conn.exchanges.current_preflight.take();
    let (Some(max_age_s), Some(preflight), Some(x)) =
        (max_age_s, preflight, conn.exchanges.current_mut())
    else {
        return;
    };
    let (Some(answer), Some(status)) = (x.response_first, x.status) else {
        return;
    };
    preflights.allowed(
        client,
        preflight,
        stream,
        x.request_first,
        answer,
        status,
        max_age_s,
        x.label.clone(),
    );
}

/// A connection's first FIN or RST, from `dir`'s sender: noted among
/// the capture's ends, with its last request and answer (reuse.rs).
/// Once per connection.
#[inline(never)]
fn note_end(
    conn: &mut Connection,
    calls: &mut Calls,
    at: Stamp,
    dir: Direction,
    seg: &Segment<'_>,
) {
    // A connection closing that never carried a request: did another of
    // the route carry the client's requests meanwhile (route_requests.rs)?
    if conn.exchanges.total == 0 {
        look_up_sibling(conn, &calls.route_requests);
    }
    // (After a RST the other side's FIN has no first FIN to cover.)
    let end = seg.seq.wrapping_add(seg.payload_len).wrapping_add(1);
    conn.close_seen = CloseSeen::First {
        by: dir,
        fin_end: (!seg.flags.rst()).then_some(end),
    };
    // (A record TLS holds back as a possible ticket, when it came after
    // the request, is the answer the connection's end will deliver.)
    let held = conn.tls.as_ref().and_then(|t| t.held_record());
    // (Nor the goodbye a server writes before its idle close: the answer
    // ended before it.)
    let last = conn.exchanges.last().map(|x| {
        let held_answer = held
            .filter(|(start, _)| start.ts_ns >= x.request_first.ts_ns)
            .map(|(_, end)| end);
        let goodbye = (dir == Direction::ServerToClient)
            .then(|| x.answer_before_goodbye(at))
            .flatten();
        let answer = goodbye.or(x.response_last).or(held_answer);
        // Bytes of the answer the capture missed had reached the client
        // by its ACK of them: the connection idled from there (netflix.pcap
        // 18: its client acknowledged 5 KB more than the capture shows 404
        // ms after the last captured segment, and closed 31 ms later).
        let unseen = conn
            .client_acked_unseen_at
            .filter(|a| answer.is_some_and(|b| a.ts_ns > b.ts_ns) && a.ts_ns <= at.ts_ns);
        (x.request_first, unseen.or(answer))
    });
    // Inside TLS the peer's close_notify after the last answer, before
    // this FIN, closed the connection: this FIN answers it.
    let peer = dir.reverse();
    let peer_alert = conn
        .tls
        .as_ref()
        .and_then(|t| t.last_alert[peer.index()])
        .filter(|alert| {
            let answered = last.and_then(|(_, answer)| answer);
            answered.is_some_and(|a| a.ts_ns <= alert.ts_ns) && alert.ts_ns <= at.ts_ns
        });
    let (close, closer) = match peer_alert {
        Some(alert) => (alert, peer),
        None => (at, dir),
    };
    // A server that closes without acknowledging bytes the client had sent
    // before its last answer reached it cut that request off (a rejection,
    // an abort): the connection ended mid-request, not after an answer,
    // and nothing on it could have carried the next. (Bytes the client
    // sent after the answer reached it, crossing an idle close, are a
    // request the close lost: the connection had been kept, and is
    // counted.) On the client's clock: the answer reached it the client's
    // side of the path after its capture.
    if closer == Direction::ServerToClient && seg.flags.ack() {
        let client = &conn.half[Direction::ClientToServer.index()];
        let answer = conn.exchanges.last().and_then(|x| x.response_first);
        let client_side = conn.sender_side_ns(Direction::ClientToServer).unwrap_or(0);
        let cut_off = client
            .max_end
            .is_some_and(|end| crate::seq::lt(seg.ack, end))
            && answer.is_some_and(|a| client.max_end_ts < a.ts_ns.saturating_add(client_side));
        if cut_off {
            return;
        }
    }
    // The client's first acknowledgment of the last answer's end, before
    // the close (not the close's own: a client that closes acknowledges
    // what it has, however long it had it).
    let answer_acked_ns = last.and_then(|(_, answer)| answer).and_then(|answer| {
        let i = conn
            .timeline
            .binary_search_by_key(&answer.frame, |r| r.frame)
            .ok()?;
        let end = conn.timeline[i].end;
        conn.timeline[i + 1..]
            .iter()
            .take_while(|r| r.frame < close.frame)
            .find(|r| r.dir == Direction::ClientToServer && r.ack_set && crate::seq::le(end, r.ack))
            .map(|r| r.ts_ns)
    });
    // A client that closed short of what the server had sent (at the
    // server's side of the path: the rest of its answer in flight) cut
    // the answer off.
    let server_end = conn.half[Direction::ServerToClient.index()].max_end;
    let cut_off = closer == Direction::ClientToServer
        && dir == Direction::ClientToServer
        && seg.flags.ack()
        && server_end.is_some_and(|end| crate::seq::lt(seg.ack, end));
    calls.ends.ended(crate::reuse::End {
        cut_off,
        stream: conn.stream,
        client: conn.reuse_client(),
        server: conn.server,
        pool: conn.reuse_pool(false),
        last,
        exchanges: conn.exchanges.total,
        close,
        by_server: closer == Direction::ServerToClient,
        reset: seg.flags.rst() && peer_alert.is_none(),
        certificate_requested: conn.tls.as_ref().is_some_and(|t| t.certificate_requested()),
        requested_close: conn.exchanges.current_close,
        answered_close: conn.exchanges.current_answer_close,
        answer_acked_ns,
    });
}

/// How many other connections the client closed together with `c`'s
/// first FIN (closes.rs), where its client re-sent data: whether it let
/// go of this one in a teardown (detect/retransmission.rs).
fn client_closed_with(c: &Connection, closes: &crate::closes::Closes) -> u32 {
    let client = &c.half[Direction::ClientToServer.index()].stats;
    let Some(fin) = client.fin_frame.filter(|_| client.retransmissions > 0) else {
        return 0;
    };
    let Ok(i) = c.timeline.binary_search_by_key(&fin, |r| r.frame) else {
        return 0;
    };
    closes.closed_with(c.stream, c.client.ip, c.timeline[i].ts_ns)
}

/// Server data after the client's close, bytes the client had not
/// acknowledged: sent before that close reached the server (within its
/// side's round trip of it), it was an answer the client cut off
/// (reuse.rs). Not a TLS alert: a server's close_notify, crossing the
/// client's or answering it, is the server closing too.
#[inline(never)]
fn note_answer_after_close(conn: &Connection, calls: &mut Calls, at: Stamp, seg: &Segment<'_>) {
    let acked = conn.half[Direction::ClientToServer.index()].acked;
    let end = seg.seq.wrapping_add(seg.payload_len);
    let unacknowledged = acked.is_none_or(|a| crate::seq::lt(a, end));
    // (TLS 1.3's alerts are encrypted, in records of application data:
    // as the TLS reader read this one.)
    let alert = conn.tls.as_ref().is_some_and(|t| {
        seg.payload.first() == Some(&21)
            || t.last_alert[Direction::ServerToClient.index()].is_some_and(|a| a.frame == at.frame)
    });
    let Some(reply_ns) = conn.sender_side_ns(Direction::ServerToClient) else {
        return;
    };
    if unacknowledged && !alert {
        calls.ends.answer_went_on(
            conn.stream,
            conn.reuse_client(),
            conn.server,
            at.ts_ns,
            reply_ns,
        );
    }
}

/// The other side's FIN or RST after a connection's first close: when a
/// FIN does not acknowledge the first FIN, its sender had not had that FIN
/// when it closed, and closed on its own (reuse.rs). Once per connection.
#[inline(never)]
fn note_second_close(
    conn: &mut Connection,
    calls: &mut Calls,
    at: Stamp,
    dir: Direction,
    seg: &Segment<'_>,
    first_end: Option<u32>,
) {
    conn.close_seen = CloseSeen::Both;
    let on_its_own = seg.flags.fin()
        && first_end.is_some_and(|end| !(seg.flags.ack() && crate::seq::le(end, seg.ack)));
    // The round trip from the capture point to this side and back (its
    // side of the path: SYN to SYN-ACK at the capture, for a server):
    // within it, this FIN can have left before the first FIN reached it.
    let reply_ns = conn.sender_side_ns(dir);
    calls.ends.closed_too(
        conn.stream,
        conn.reuse_client(),
        conn.server,
        at,
        dir == Direction::ServerToClient,
        on_its_own,
        reply_ns,
    );
}

/// A request opened on a TLS connection whose client false started: the
/// client is noted, by its address and ClientHello (false_start.rs). Once
/// per connection.
fn note_false_start(conn: &mut Connection, false_starters: &mut crate::false_start::FalseStarters) {
    let Some(tls) = conn.tls.as_ref().filter(|t| t.false_started()) else {
        return;
    };
    let (Some(shape), Some(x)) = (tls.client_hello_shape(), conn.exchanges.last()) else {
        return;
    };
    conn.false_start_noted = true;
    false_starters.note((conn.reuse_client(), shape), x.request_first.ts_ns);
}

/// A request began: noted on its route (route_requests.rs); at a
/// connection's first, whose SYN the capture saw, the look for another
/// connection of the route that carried one of the client's requests
/// since that SYN.
fn note_route_request(conn: &mut Connection, requests: &mut crate::route_requests::RouteRequests) {
    let Some(first) = conn.exchanges.last().map(|x| x.request_first) else {
        return;
    };
    look_up_sibling(conn, requests);
    let route = (conn.reuse_client(), conn.server.ip, conn.server.port);
    requests.note(
        route,
        crate::route_requests::RouteRequest {
            ts_ns: first.ts_ns,
            stream: conn.stream,
            frame: first.frame,
            name: sibling_origin(conn),
        },
    );
}

/// The origin a connection served, as far as it shows (route_requests.rs:
/// one address may serve many sites): its TLS server name's, else its
/// requests' (their `Host`), else the name its client looked up before
/// connecting; 0 where none shows.
fn sibling_origin(conn: &Connection) -> u64 {
    let port = conn.server.port;
    if let Some(name) = conn.server_name() {
        return crate::redirect::Asked::origin_of_server_name(name, port);
    }
    let asked = conn.asked_origin();
    if asked != 0 {
        return asked;
    }
    conn.lookup
        .as_ref()
        .map_or(0, |l| crate::redirect::Asked::origin_of_host(&l.name, port))
}

/// Once per connection whose SYN the capture saw (at its first request,
/// or at its first FIN or RST when it carried none): another connection
/// of its route that carried one of the client's requests since that SYN.
fn look_up_sibling(conn: &mut Connection, requests: &crate::route_requests::RouteRequests) {
    if conn.sibling_looked_up {
        return;
    }
    conn.sibling_looked_up = true;
    if let Some(syn) = conn.first_syn {
        let route = (conn.reuse_client(), conn.server.ip, conn.server.port);
        conn.sibling_request = requests
            .carried_since(route, syn.ts_ns, conn.stream, sibling_origin(conn))
            .map(|r| (r.stream, r.frame));
    }
}

/// What a connection's ClientHello says of its client's sessions with
/// its server (issued_sessions.rs).
struct HelloOffer {
    /// Whom the client keeps them for: client, server, port, the name
    /// asked for, the client's TLS stack.
    by: crate::issued_sessions::HeldBy,
    /// When the ClientHello began.
    at: i64,
    /// The session ID it offered, where the server issued it before it.
    id_issued: Option<crate::issued_sessions::IdIssue>,
    /// It offered a session back: that ID, a ticket or a PSK.
    offered: bool,
    /// Its session ID is not empty (an offer of a TLS 1.2 client,
    /// whatever issued it; a TLS 1.3 client's compatibility bytes).
    any_id: bool,
    /// The client's TLS library (`TlsSession::client_library`).
    library: u64,
    /// It offered TLS 1.3 (supported_versions): its session ID may be
    /// compatibility bytes.
    tls13: bool,
}

/// The connection's [`HelloOffer`]; None before its ClientHello was read.
fn hello_offer(
    conn: &Connection,
    issued: &crate::issued_sessions::IssuedSessions,
) -> Option<HelloOffer> {
    let (server, port) = (conn.server.ip, conn.server.port);
    let tls = conn.tls.as_ref()?;
    let ch = tls.client_hello.as_ref()?;
    let at = tls
        .client_hello_at
        .map_or(conn.first.ts_ns, |(start, _)| start.ts_ns);
    let id_issued = issued.issued_before(
        server,
        port,
        crate::issued_sessions::id_hash(&ch.session_id),
        at,
    );
    let name = crate::reuse::name_hash(ch.sni.as_deref());
    Some(HelloOffer {
        by: (
            conn.client.ip,
            server,
            port,
            name,
            tls.client_stack().unwrap_or(0),
        ),
        at,
        id_issued,
        offered: id_issued.is_some() || ch.session_ticket || ch.pre_shared_key,
        any_id: !ch.session_id.is_empty(),
        library: tls.client_library().unwrap_or(0),
        tls13: ch
            .supported_versions
            .iter()
            .any(|&v| rttdoc_wire::tls::is_tls13(v)),
    })
}

/// A request opened on a TLS connection: its client's offer of a session
/// back, if it made one, and whether the server refused it; on TLS 1.2
/// (or older) the session its ServerHello issued (the ID, by the server's
/// address and port) and what the client may offer back on its next
/// connection for that name (issued_sessions.rs). Once per connection.
fn note_issued_session(conn: &mut Connection, issued: &mut crate::issued_sessions::IssuedSessions) {
    let (server, port) = (conn.server.ip, conn.server.port);
    let offer = hello_offer(conn, issued);
    let held_by = offer.as_ref().map_or(
        (conn.client.ip, server, port, conn.server_name_hash(), 0),
        |o| o.by,
    );
    let stream = conn.stream;
    let at = conn.exchanges.last().map(|x| x.request_first.ts_ns);
    let timeline = &conn.timeline;
    // When a frame of the handshake was captured (the first request's
    // time where the timeline lacks it).
    let captured_at = |frame: u64, request: i64| {
        let i = timeline.partition_point(|r| r.frame < frame);
        timeline
            .get(i)
            .filter(|r| r.frame == frame)
            .map_or(request, |r| r.ts_ns)
    };
    let Some(tls) = conn.tls.as_mut().filter(|t| !t.session_noted) else {
        return;
    };
    let Some(sh) = tls.server_hello.as_ref() else {
        return;
    };
    tls.session_noted = true;
    // A stack that offered a session back (its cache working), and
    // whether the server refused it, noted as its first request leaves
    // (before later connections end and look up).
    if let Some(o) = offer.filter(|o| o.offered) {
        issued.note_offer(o.by, o.library, tls.resumed() == Some(false));
    }
    if let Some(at) = at.filter(|_| !rttdoc_wire::tls::is_tls13(sh.version)) {
        let id = crate::issued_sessions::id_hash(&sh.session_id);
        let server_hello = tls
            .messages
            .iter()
            .find(|m| m.message == crate::model::TlsMessage::ServerHello)
            .map(|m| m.frame);
        // A session is the client's to offer back once its handshake
        // ended: the server's Finished reached it (a client caches it
        // then; offered sooner, on a connection opened while this one's
        // handshake ran, it could not be: nDPI's teams.pcap 37, 19.5 ms
        // after the ServerHello of stream 36, whose handshake ended after
        // it). Else as the request left.
        let usable_at = tls
            .messages
            .iter()
            .rfind(|m| {
                m.direction == crate::model::Direction::ServerToClient
                    && matches!(
                        m.message,
                        crate::model::TlsMessage::Finished
                            | crate::model::TlsMessage::FinishedEncrypted
                    )
            })
            .map_or(at, |m| captured_at(m.frame, at));
        // (A ServerHello parsed is listed: frame 0 never shows.)
        let frame = server_hello.unwrap_or(0);
        issued.note(server, port, id, (usable_at, stream, frame));
        // The session the client may offer back on its next connection
        // for that name: a ticket (RFC 5077) the server sent, else the ID.
        let ticket = tls
            .messages
            .iter()
            .find(|m| m.message == crate::model::TlsMessage::NewSessionTicket);
        let given = match ticket {
            Some(t) => Some((t.frame, true)),
            None if id != 0 => server_hello.map(|frame| (frame, false)),
            None => None,
        };
        if let Some((frame, ticket)) = given {
            let certificate_requested = tls.certificate_requested();
            issued.note_held(
                held_by,
                crate::issued_sessions::Issue {
                    at_ns: usable_at,
                    stream,
                    frame,
                    ticket,
                    certificate_requested,
                },
            );
        }
    }
}

/// A TLS connection learns whether its ClientHello offered a session ID
/// its server issued earlier (issued_sessions.rs): an offer to resume.
fn look_up_issued_session(
    conn: &mut Connection,
    issued: &mut crate::issued_sessions::IssuedSessions,
) {
    let client = conn.client.ip;
    let Some(o) = hello_offer(conn, issued) else {
        return;
    };
    let Some(tls) = conn.tls.as_mut() else {
        return;
    };
    tls.session_id_offered = o.id_issued.is_some();
    tls.session_id_issued =
        o.id_issued
            .map(|(issued_at, stream, frame)| crate::model::IssuedSessionId {
                stream,
                frame,
                age_ns: o.at - issued_at,
            });
    // Offering nothing back, though the server had issued the same client
    // stack a session for that name before: the client did not keep it.
    // (A session ID is an offer of a TLS 1.2 client whatever issued it:
    // one the capture did not see issued, or issued after this hello's
    // note. Not when the stack was seen offering one back to that server
    // and name, its cache working, nor when the server was seen refusing
    // one: resuming would have saved nothing.)
    if o.offered {
        issued.note_offer(o.by, o.library, tls.resumed() == Some(false));
    } else if o.any_id && !o.tls13 {
        // A session ID in a hello that offers no TLS 1.3 is an offer
        // whatever issued it (TLS 1.3's are compatibility bytes): its
        // library keeps sessions (KakaoTalk_chat.pcap 14's, its offer
        // of an ID the capture never saw issued).
        issued.note_library_offer(client, o.library);
    }
    if !o.offered && !o.any_id && !issued.offers_seen(o.by) {
        tls.session_held = issued
            .held_before(o.by, o.at)
            .map(|i| crate::model::HeldSession {
                stream: i.stream,
                frame: i.frame,
                ticket: i.ticket,
                certificate_requested: i.certificate_requested,
                age_ns: o.at - i.at_ns,
                offers_elsewhere: issued.offers_elsewhere(client, o.library),
            });
    }
}

/// A TLS connection whose ClientHello was read learns the size of the
/// tickets its server sent that software asking that name before; one
/// whose tickets showed their size notes it (ticket_sizes.rs). Once each
/// per connection.
fn note_ticket_size(conn: &mut Connection, sizes: &mut crate::ticket_sizes::TicketSizes) {
    let server = conn.server;
    let Some(tls) = conn.tls.as_mut() else {
        return;
    };
    let Some(key) = tls.ticket_size_key() else {
        return;
    };
    if !tls.ticket_size_looked_up {
        tls.ticket_size_looked_up = true;
        if !sizes.is_empty() {
            let seen = sizes.get((server, key));
            tls.known_ticket_len = seen.ticket;
            tls.known_lone_first = seen.lone_first;
        }
    }
    if let (false, Some(len)) = (tls.ticket_len_noted, tls.ticket_len_seen) {
        tls.ticket_len_noted = true;
        sizes.note_ticket((server, key), len);
    }
    if let (false, Some(len)) = (tls.lone_first_noted, tls.lone_first_seen) {
        tls.lone_first_noted = true;
        sizes.note_lone_first((server, key), len);
    }
}

/// A connection holding a lone server record as a possible ticket looks
/// again, before each server segment that may decide it, for what its
/// siblings noted since its ClientHello was read: connections opened
/// together reach that record together, and the first to see the answer
/// follow it tells the others (ticket_sizes.rs; nDPI's instagram.pcap:
/// five connections to one server within 200 ms).
fn look_up_lone_first(conn: &mut Connection, sizes: &crate::ticket_sizes::TicketSizes) {
    let server = conn.server;
    let Some(tls) = conn.tls.as_mut().filter(|t| t.ticket_held()) else {
        return;
    };
    if sizes.is_empty() {
        return;
    }
    if let Some(len) = tls
        .ticket_size_key()
        .and_then(|key| sizes.get((server, key)).lone_first)
    {
        tls.known_lone_first = Some(len);
    }
}

/// A resumed TLS 1.2 (or older) connection, or one that offered a session
/// and got a full handshake, learns whether its client, by address and
/// ClientHello, was seen false starting before it began (false_start.rs):
/// then its resumption saved no round trip, or its miss cost none.
fn look_up_false_start(conn: &mut Connection, false_starters: &crate::false_start::FalseStarters) {
    let Some(tls) = conn.tls.as_ref() else {
        return;
    };
    // (Only a session whose suite a full handshake could have false
    // started: a forward-secret exchange and an AEAD, TLS 1.2. nDPI's
    // alexa-app resumes TLS 1.0 RSA-CBC sessions: those full handshakes
    // wait for the server's Finished whatever the client does elsewhere.)
    // (And an application protocol chosen: the browsers false start only
    // then. nDPI's wechat.pcap 20: no ALPN chosen, the client waited for
    // the server's Finished; it had false started with Google's h2.)
    let allowed = tls.server_hello.as_ref().is_some_and(|sh| {
        sh.protocol_chosen && rttdoc_wire::tls::false_start_allowed(sh.version, sh.cipher)
    });
    let offered = tls.offered_session_id()
        || tls
            .client_hello
            .as_ref()
            .is_some_and(|ch| ch.session_ticket || ch.pre_shared_key);
    let resumed_or_missed = match tls.resumed() {
        Some(resumed) => resumed || offered,
        None => false,
    };
    if !allowed || !resumed_or_missed {
        return;
    }
    if let Some(shape) = tls.client_hello_shape() {
        conn.client_false_starts =
            false_starters.before((conn.reuse_client(), shape), conn.first.ts_ns);
    }
}

/// When a connection `c`'s server had opened to its client began sending
/// within [`crate::READY_NS`] before `c`'s client first closed (its FIN
/// or RST), if one did (closes.rs).
fn dialled_back_data(c: &Connection, closes: &crate::closes::Closes) -> Option<i64> {
    let sent = &c.half[Direction::ClientToServer.index()].stats;
    let close = [sent.fin_frame, sent.rst_frame]
        .into_iter()
        .flatten()
        .min()?;
    let at = c.timeline[c.timeline.partition_point(|r| r.frame < close)..]
        .first()
        .filter(|r| r.frame == close)?
        .ts_ns;
    closes.dialled_back_data(c.stream, c.server.ip, c.client.ip, at - crate::READY_NS, at)
}

/// A connection opened by a SYN the capture saw takes, at its first
/// request, the earlier connection of its client to its server that
/// ended shortly before its SYN (reuse.rs). Once per connection.
fn take_previous(conn: &mut Connection, ends: &mut crate::reuse::Ends) {
    conn.previous_looked_up = true;
    if let Some(syn) = conn.first_syn {
        conn.previous = ends
            .take_before(
                conn.stream,
                conn.reuse_client(),
                conn.server,
                syn,
                conn.reuse_pool(true),
            )
            .map(Box::new);
    }
}

/// A connection opened by a SYN the capture saw takes the name lookup its
/// client made for its server just before that SYN (dns.rs): when the
/// SYN is answered, or when it is handed on. Once per connection.
fn take_lookup(conn: &mut Connection, lookups: &mut crate::dns::Lookups) {
    if conn.lookup_looked_up {
        return;
    }
    conn.lookup_looked_up = true;
    if let Some(syn) = conn.first_syn {
        conn.lookup = lookups
            .take(conn.stream, conn.client.ip, conn.server, syn)
            .map(Box::new);
    }
}

/// The exchanges answered since the last look learn the connection the
/// server opened back to the client meanwhile, if it did (connect_back.rs).
/// Several at once when their bytes were held back (a text protocol's
/// turns, until preamble.rs knew whether TLS would start).
fn note_connect_backs(conn: &mut Connection, dials: &crate::connect_back::Dials) {
    let (stream, server, client) = (conn.stream, conn.server.ip, conn.client.ip);
    if !dials.dialed(server, client) {
        return;
    }
    let x = &mut conn.exchanges;
    if let (Some(greeting), None) = (x.greeting, &x.greeting_connect_back) {
        // (From the connection's SYN, or the capture's first sight of it:
        // the server cannot dial before it.)
        let from = conn.first_syn.unwrap_or(conn.first).ts_ns;
        x.greeting_connect_back = dials
            .during(stream, server, client, from, greeting.ts_ns)
            .map(Box::new);
    }
    let from = x.connect_backs_noted.min(x.kept.len());
    x.connect_backs_noted = x.kept.len();
    // (A long connection's exchanges begun past its timeline and closed
    // since its last window.)
    let spilled = x.spill.as_deref_mut().unwrap_or_default();
    let spilled_from = x.spill_noted.min(spilled.len());
    x.spill_noted = spilled.len();
    for e in x.kept[from..]
        .iter_mut()
        .chain(spilled[spilled_from..].iter_mut())
        .chain(x.current.as_mut())
    {
        if let (Some(answer), None) = (e.response_first, &e.connect_back) {
            e.connect_back = dials
                .during(stream, server, client, e.request_first.ts_ns, answer.ts_ns)
                .map(Box::new);
        }
    }
}

/// Where a segment goes.
fn destination(seg: &Segment<'_>) -> Endpoint {
    Endpoint {
        ip: seg.dst,
        port: seg.dst_port,
    }
}

/// Keeps a connection's clean handshake for the client's path samples
/// (once per connection, at its SYN-ACK: out of the per-packet path).
#[inline(never)]
fn note_handshake(conn: &Connection, at: Stamp, paths: &mut PathSamples) {
    if let (1, 1, Some(syn), Some(sa)) = (
        conn.syn_count,
        conn.syn_ack_count,
        conn.first_syn,
        conn.syn_ack,
    ) {
        if sa == at && sa.ts_ns >= syn.ts_ns {
            let gap = sa.ts_ns.saturating_sub(syn.ts_ns);
            paths.note(conn.client.ip, conn.server.ip, syn.ts_ns, gap);
        }
    }
}

/// A connection as the options want it tracked (ladder, key log,
/// detectors), in a finished one's husk when there is one.
fn new_connection(
    options: &AnalyzeOptions,
    husk: Option<Box<Connection>>,
    stream: u64,
    client: Endpoint,
    server: Endpoint,
    at: Stamp,
) -> Box<Connection> {
    let ladder = options.ladder_stream == Some(stream);
    let mut c = match husk {
        Some(mut c) => {
            c.renew(stream, client, server, at, ladder);
            c
        }
        None => Box::new(Connection::new(stream, client, server, at, ladder)),
    };
    c.keylog = options.keylog.clone();
    c.detect = options.findings;
    c.series = options.series.builder(stream);
    c
}

/// Where the longest-idle quarter (at least one) of these flows ends,
/// given each as (progress clock at its last packet, stream): the flows
/// at or before the returned pair are that quarter (streams are unique).
/// A linear selection, not a sort, in `room` (reused: a flood's table is
/// big).
fn idle_quarter_cutoff(
    room: &mut Vec<(i64, u64)>,
    flows: impl Iterator<Item = (i64, u64)>,
) -> (i64, u64) {
    room.clear();
    room.extend(flows);
    let n = (room.len() / 4).max(1);
    *room.select_nth_unstable(n - 1).1
}

/// Registered ports (IANA) of TCP services above 1023 that clients reach
/// from ports of their own, sometimes lower ones (older Windows and BSD
/// chose ephemeral ports from 1024-5000): proxies, databases, brokers,
/// OpenFlow, HTTP's alternates; industrial control's (EtherNet/IP's
/// 44818, IEC 60870-5-104's 2404, DNP3's 20000, OPC UA's 4840, Niagara
/// Fox's 1911 and 4911, OMRON FINS's 9600: a workstation polling a PLC
/// from an old Windows' port 2430, gopacket's cip.pcap, read the other
/// way round as a PLC thinking 108 s); phones' push channels (Apple's
/// 5223, Google's 5228), chat (MSN's 1863, IRC's 6667 and 6697), SIP's
/// 5060 and 5061, RTMP's 1935; and the ports gRPC services use by
/// convention, inside the ephemeral range (50051, the gRPC examples';
/// OpenTelemetry's collector, 4317 and 4318; etcd's 2379; Prometheus's
/// 9090 and Alertmanager's 9093), where a capture begun on a long-lived
/// channel would otherwise take the client's lower port for the server's.
/// Sorted: looked up by binary search.
const SERVICE_PORTS: [u16; 51] = [
    1080, 1433, 1521, 1863, 1883, 1911, 1935, 2049, 2181, 2379, 2404, 3128, 3306, 3389, 4222, 4317,
    4318, 4840, 4911, 5060, 5061, 5222, 5223, 5228, 5269, 5432, 5672, 5900, 6379, 6443, 6633, 6653,
    6667, 6697, 8000, 8008, 8080, 8443, 8883, 8888, 9090, 9092, 9093, 9200, 9418, 9600, 11211,
    20000, 27017, 44818, 50051,
];

/// Client and server of a new connection: from the SYN if this is one,
/// else the endpoint on a registered service port when only one is on
/// one (`SERVICE_PORTS`, or below 1024), else the endpoint on the lower
/// port is taken as the server (until the first payload says otherwise:
/// `Connection::settle_roles`).
fn roles(seg: &Segment<'_>) -> (Endpoint, Endpoint) {
    let src = Endpoint {
        ip: seg.src,
        port: seg.src_port,
    };
    let dst = Endpoint {
        ip: seg.dst,
        port: seg.dst_port,
    };
    if seg.flags.syn() {
        return if seg.flags.ack() {
            (dst, src)
        } else {
            (src, dst)
        };
    }
    let service = |port: u16| port < 1024 || SERVICE_PORTS.binary_search(&port).is_ok();
    let src_serves = match (service(seg.src_port), service(seg.dst_port)) {
        (true, false) => true,
        (false, true) => false,
        _ => seg.src_port < seg.dst_port,
    };
    if src_serves {
        (dst, src)
    } else {
        (src, dst)
    }
}

/// Runs the whole pass over a capture, each finished connection through
/// `diagnose` to `sink` (and each QUIC connection through `quic`, into
/// the stats). Reading a file stops at its first damaged record (of
/// several merged, the others are read on); everything before it is
/// analysed and the error is in the stats.
pub fn track_capture(
    capture: &mut Capture,
    options: AnalyzeOptions,
    diagnose: Diagnose,
    quic: Option<QuicDiagnose>,
    windows: Option<crate::DiagnoseWindow>,
    sink: &mut dyn ReportSink,
) -> CaptureStats {
    let mut tracker = Tracker::new(options, diagnose, sink);
    if let Some(quic) = quic {
        tracker = tracker.with_quic(quic);
    }
    if let Some(windows) = windows {
        tracker = tracker.with_windows(windows);
    }
    let secrets = capture.secrets();
    // One file stops at its damage; of several, each damaged file's
    // error comes after the others were read to their end.
    let mut errors = Vec::new();
    loop {
        match capture.next_frame() {
            Ok(Some(frame)) => {
                // Key logs embedded in the capture (pcapng Decryption
                // Secrets Blocks) count as if given with --keylog.
                let embedded = secrets.take_new_tls_key_log();
                if !embedded.is_empty() {
                    tracker.add_key_log_lines(&embedded);
                }
                tracker.frame(&frame)
            }
            Ok(None) => break,
            Err(e) => errors.push(e.to_string()),
        }
    }
    let mut stats = tracker.finish();
    stats.file = capture.name().to_string();
    if let files @ [_, _, ..] = capture.files().as_slice() {
        stats.merged_files = files.to_vec();
        stats.merged_files_overlap = capture.files_overlap();
        let (runs, cut) = capture.merged_runs();
        stats.merged_runs = runs
            .iter()
            .map(|r| rttdoc_model::MergedRun {
                frame: r.frame,
                file: r.file,
                file_frame: r.file_frame,
            })
            .collect();
        stats.merged_runs_cut = cut;
    }
    stats.frames = capture.frames();
    stats.error = (!errors.is_empty()).then(|| errors.join("; "));
    stats
}

/// The connections with nothing more due, each finished once quiet for
/// its own linger (`Connection::trailing_ns`, at least the options'
/// `linger_ms`): a heap by the time each may be finished, so one on a
/// long path holds none of the short ones closed after it.
struct Closing {
    floor_ns: i64,
    due: BinaryHeap<Reverse<(i64, u64, FlowKey)>>,
}

impl Closing {
    fn new(linger_ms: u64) -> Closing {
        Closing {
            floor_ns: (linger_ms as i64).saturating_mul(1_000_000),
            due: BinaryHeap::new(),
        }
    }

    fn linger_ns(&self, c: &Connection) -> i64 {
        self.floor_ns.max(c.trailing_ns())
    }

    /// Queues `c`, quiet since `since_ns`.
    fn queue(&mut self, c: &Connection, key: FlowKey, since_ns: i64) {
        let at = since_ns.saturating_add(self.linger_ns(c));
        self.due.push(Reverse((at, c.stream, key)));
    }

    /// The next connection whose time has come by `now_ns`.
    fn due(&mut self, now_ns: i64) -> Option<(FlowKey, u64)> {
        match self.due.peek() {
            Some(Reverse((at, ..))) if *at < now_ns => {
                let Reverse((_, stream, key)) = self.due.pop().expect("peeked");
                Some((key, stream))
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rttdoc_wire::TcpFlags;
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

    /// Lone SYNs of every shape the tracker keeps as embryos.
    fn lone_syns() -> Vec<(FlowKey, Embryo)> {
        let v4 = |a: u8| IpAddr::V4(Ipv4Addr::new(10, 0, 0, a));
        let v6 = IpAddr::V6(Ipv6Addr::LOCALHOST);
        let base = Embryo {
            stream: 7,
            at: Stamp {
                frame: 12,
                ts_ns: 1_700_000_000_123_456_789,
            },
            last_progress_ns: 5,
            seq: 0xfffffff0,
            window: 64240,
            flags: TcpFlags::SYN,
            ip_id: Some(0x1234),
            mss: Some(1460),
            window_scale: Some(7),
            sack_permitted: true,
            from_lo: true,
            options_malformed: false,
            timestamps: Some((123, 0)),
            quoted_after: 0,
        };
        let key = FlowKey {
            lo: (v4(1), 40000),
            hi: (v4(2), 443),
        };
        let mut out = vec![(key, base)];
        out.push((
            FlowKey {
                lo: (v4(1), 80),
                hi: (v4(9), 51000),
            },
            Embryo {
                from_lo: false,
                ..base
            },
        ));
        out.push((
            FlowKey {
                lo: (v6, 1),
                hi: (v6, 2),
            },
            Embryo {
                mss: None,
                window_scale: None,
                sack_permitted: false,
                timestamps: None,
                ip_id: None,
                window: 0,
                ..base
            },
        ));
        out.push((
            key,
            Embryo {
                flags: TcpFlags::SYN | TcpFlags::ECE | TcpFlags::CWR | TcpFlags::PSH,
                options_malformed: true,
                timestamps: Some((0, 99)),
                ..base
            },
        ));
        out
    }

    /// The shortcut is only worth having if it says what the connection
    /// would: its facts, field for field, for every kind of lone SYN, every
    /// ending and with the detectors on or off.
    #[test]
    fn lone_syn_facts_are_a_connections() {
        for detect in [true, false] {
            let options = AnalyzeOptions {
                findings: detect,
                ..Default::default()
            };
            let mut sink = |_: crate::model::ConnectionReport| {};
            let mut tracker = Tracker::new(options.clone(), |_| unreachable!(), &mut sink);
            for (key, e) in lone_syns() {
                assert!(e.has_plain_facts(&options));
                for ending in [Ending::Open, Ending::Idle] {
                    let through_connection =
                        tracker.connection_of(key, &e).freeze_leaving_husk(ending);
                    let direct = e.facts(&key, ending, detect);
                    assert_eq!(
                        format!("{direct:#?}"),
                        format!("{through_connection:#?}"),
                        "{e:?}"
                    );
                }
            }
        }
    }

    /// A tombstone is kept in 40 bytes with its 12-byte IPv4 key (the
    /// flood's finished flows are tens of thousands of them).
    #[test]
    fn an_ipv4_tombstone_is_kept_in_forty_bytes() {
        assert_eq!(std::mem::size_of::<([u32; 3], Tombstone)>(), 40);
    }

    /// A husk made new is a new connection: nothing of the one before it
    /// shows, only the room of its buffers is kept.
    #[test]
    fn a_renewed_husk_is_a_new_connection() {
        let mut sink = |_: crate::model::ConnectionReport| {};
        let mut tracker = Tracker::new(AnalyzeOptions::default(), |_| unreachable!(), &mut sink);
        let (key, e) = lone_syns()[0];
        let mut c = tracker.connection_of(key, &e);
        let syn_ack = Segment {
            ack: e.seq.wrapping_add(1),
            flags: TcpFlags::SYN | TcpFlags::ACK,
            ..e.syn(&key)
        };
        let at = Stamp {
            frame: e.at.frame + 1,
            ts_ns: e.at.ts_ns + 1_000_000,
        };
        c.observe(at, Direction::ServerToClient, &syn_ack);
        let _ = c.freeze_leaving_husk(Ending::Open);
        let client = Endpoint {
            ip: key.hi.0,
            port: 1,
        };
        let server = Endpoint {
            ip: key.lo.0,
            port: 2,
        };
        let first = Stamp {
            frame: 99,
            ts_ns: 5,
        };
        for ladder in [false, true] {
            c.renew(3, client, server, first, ladder);
            let new = Connection::new(3, client, server, first, ladder);
            assert_eq!(format!("{c:#?}"), format!("{new:#?}"));
        }
    }

    /// A capture that began after the handshake: two pure ACKs, then the
    /// client's first payload. Tracked under the ports' guess (the lower
    /// port the server's) and swapped at that payload, a connection is
    /// the one tracked with the right roles from the start.
    fn mid_stream(first_payload: &'static [u8]) -> (Connection, Connection, Endpoint) {
        let v4 = |a: u8| IpAddr::V4(Ipv4Addr::new(172, 16, 0, a));
        let browser = Endpoint {
            ip: v4(1),
            port: 8869,
        };
        let server = Endpoint {
            ip: v4(2),
            port: 31600,
        };
        // With timestamps: pure ACKs leave RTT samples too.
        let seg =
            |from: Endpoint, to: Endpoint, seq: u32, ack: u32, payload: &'static [u8]| Segment {
                src: from.ip,
                dst: to.ip,
                src_port: from.port,
                dst_port: to.port,
                seq,
                ack,
                flags: TcpFlags::ACK | TcpFlags::PSH,
                window: 1000,
                options: rttdoc_wire::TcpOptions {
                    timestamps: Some((seq / 10, ack / 10)),
                    ..Default::default()
                },
                payload_len: payload.len() as u32,
                payload,
                ip_id: None,
            };
        let segments = [
            (server, seg(server, browser, 5000, 100, b"")),
            (browser, seg(browser, server, 100, 5000, b"")),
            (browser, seg(browser, server, 100, 5000, first_payload)),
            (
                server,
                seg(server, browser, 5000, 100 + first_payload.len() as u32, b""),
            ),
        ];
        let first = Stamp {
            frame: 1,
            ts_ns: 1_000_000,
        };
        let track = |client: Endpoint, server: Endpoint| {
            let mut c = Connection::new(0, client, server, first, true);
            c.series = crate::series::SeriesRequest::all(10).builder(0);
            for (i, (src, s)) in segments.iter().enumerate() {
                let at = Stamp {
                    frame: i as u64 + 1,
                    ts_ns: 1_000_000 * (i as i64 + 1),
                };
                c.settle_roles(*src, s);
                let dir = c.direction_from(*src);
                c.observe(at, dir, s);
            }
            c
        };
        (track(browser, server), track(server, browser), browser)
    }

    #[test]
    fn the_first_request_or_hello_names_the_client_of_a_capture_begun_mid_stream() {
        for payload in [
            &b"GET /MONITOR/state.jsp HTTP/1.1\r\nHost: x\r\n\r\n"[..],
            &[22, 3, 1, 0, 200, 1, 0, 0, 196, 3, 3, 0, 0][..],
        ] {
            let (right, guessed, browser) = mid_stream(payload);
            assert_eq!(guessed.client, browser);
            assert_eq!(format!("{right:#?}"), format!("{guessed:#?}"));
        }
    }

    #[test]
    fn a_payload_that_names_no_one_keeps_the_ports_guess() {
        for payload in [
            &b"\x00\x01binary"[..],
            b"GET without a version",
            b"HTTP/1.1 2",
            // An encrypted handshake record: no hello's lengths and version.
            &[22, 3, 3, 0, 40, 1, 0x9c, 0x21, 0x07, 0xe4, 0x11][..],
        ] {
            let (_, guessed, browser) = mid_stream(payload);
            assert_ne!(guessed.client, browser, "{payload:?}");
        }
    }

    #[test]
    fn without_a_syn_a_registered_service_port_names_the_server() {
        let v4 = |a: u8| IpAddr::V4(Ipv4Addr::new(10, 0, 0, a));
        let segment = |src_port: u16, dst_port: u16| Segment {
            src: v4(1),
            dst: v4(2),
            src_port,
            dst_port,
            seq: 1,
            ack: 1,
            flags: TcpFlags::ACK,
            window: 1000,
            options: rttdoc_wire::TcpOptions::default(),
            payload_len: 0,
            payload: &[],
            ip_id: None,
        };
        let server_port = |src: u16, dst: u16| roles(&segment(src, dst)).1.port;
        // tcpdump's of10_inv_OFPST_FLOW.pcap: a switch on port 4756 (an
        // older stack's ephemeral range) and its controller on OpenFlow's.
        assert_eq!(server_port(6653, 4756), 6653);
        // gopacket's cip.pcap: a workstation on an old Windows' port 2430
        // polling a PLC on EtherNet/IP's.
        assert_eq!(server_port(2430, 44818), 44818);
        assert_eq!(server_port(44818, 2430), 44818);
        assert_eq!(server_port(1027, 8080), 8080);
        assert_eq!(server_port(1027, 80), 80);
        // Neither or both registered: the lower port.
        assert_eq!(server_port(40000, 31600), 31600);
        assert_eq!(server_port(3306, 8080), 3306);
        assert_eq!(server_port(52000, 443), 443);
        // (Looked up by binary search.)
        assert!(SERVICE_PORTS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn a_syn_with_fin_or_rst_or_a_series_takes_the_long_way() {
        let (_, e) = lone_syns()[0];
        let options = AnalyzeOptions::default();
        for flags in [TcpFlags::SYN | TcpFlags::FIN, TcpFlags::SYN | TcpFlags::RST] {
            assert!(!Embryo { flags, ..e }.has_plain_facts(&options));
        }
        let drawn = AnalyzeOptions {
            series: crate::series::SeriesRequest::all(10),
            ..Default::default()
        };
        assert!(!e.has_plain_facts(&drawn));
    }
}
