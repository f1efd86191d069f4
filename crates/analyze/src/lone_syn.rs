//! Lone SYNs: flows that so far are one SYN, kept as that SYN's fields
//! (most of a SYN flood or a port scan), and reported from them.

use std::collections::VecDeque;
use std::net::IpAddr;

use rttdoc_wire::{Segment, TcpFlags};

use crate::connection::{SegmentRecord, Stamp};
use crate::facts::{ConnectionFacts, RttFacts};
use crate::flow_map::{FlowKey, FlowMap};
use crate::model::{Direction, DirectionStats, Ending, Endpoint, HandshakeReport};
use crate::track::AnalyzeOptions;

/// A flow that so far is one SYN (no data, no Fast Open or Multipath TCP
/// option, no SACK blocks): kept as the fields of that segment, ~100 bytes with its key
/// instead of a connection's ~2 KB, until anything else arrives for it
/// (then it becomes a `Connection` that sees the SYN first) or it is
/// reported. A SYN flood or a port scan is mostly these.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Embryo {
    pub(crate) stream: u64,
    pub(crate) at: Stamp,
    pub(crate) last_progress_ns: i64,
    pub(crate) seq: u32,
    pub(crate) window: u16,
    pub(crate) flags: TcpFlags,
    pub(crate) ip_id: Option<u16>,
    pub(crate) mss: Option<u16>,
    pub(crate) window_scale: Option<u8>,
    pub(crate) sack_permitted: bool,
    /// The SYN came from the flow key's lower endpoint.
    pub(crate) from_lo: bool,
    pub(crate) options_malformed: bool,
    pub(crate) timestamps: Option<(u32, u32)>,
    /// Frames from the SYN to the last ICMP error quoting it (0: none):
    /// Wireshark counts that frame its stream's (its last).
    pub(crate) quoted_after: u32,
}

impl Embryo {
    /// The flow's endpoints, the SYN's sender first.
    pub(crate) fn sender_first(&self, key: &FlowKey) -> ((IpAddr, u16), (IpAddr, u16)) {
        if self.from_lo {
            (key.lo, key.hi)
        } else {
            (key.hi, key.lo)
        }
    }

    /// The stream's last frame: the SYN's, or an ICMP error's quoting it
    /// (at the SYN's time: nothing of the connection came later).
    pub(crate) fn last(&self) -> Stamp {
        Stamp {
            frame: self.at.frame.saturating_add(self.quoted_after as u64),
            ts_ns: self.at.ts_ns,
        }
    }

    /// The SYN again, as decoded.
    pub(crate) fn syn(&self, key: &FlowKey) -> Segment<'static> {
        let (src, dst) = self.sender_first(key);
        Segment {
            src: src.0,
            dst: dst.0,
            src_port: src.1,
            dst_port: dst.1,
            seq: self.seq,
            ack: 0,
            flags: self.flags,
            window: self.window,
            options: rttdoc_wire::TcpOptions {
                mss: self.mss,
                window_scale: self.window_scale,
                sack_permitted: self.sack_permitted,
                timestamps: self.timestamps,
                malformed: self.options_malformed,
                ..Default::default()
            },
            payload_len: 0,
            payload: &[],
            ip_id: self.ip_id,
        }
    }

    /// Whether [`Embryo::facts`] gives what a connection that saw only
    /// this SYN would: a plain SYN (no FIN or RST riding on it), and no
    /// per-packet series asked for its stream.
    pub(crate) fn has_plain_facts(&self, options: &AnalyzeOptions) -> bool {
        !self.flags.intersects(TcpFlags::FIN | TcpFlags::RST) && !options.series.wants(self.stream)
    }

    /// The facts of a connection that was this SYN and nothing more, made
    /// without a connection's working state (most of a SYN flood's cost):
    /// exactly what `Connection::freeze_leaving_husk` gives after that one SYN
    /// (`lone_syn_facts_are_a_connections` holds them to it).
    pub(crate) fn facts(&self, key: &FlowKey, ending: Ending, detect: bool) -> ConnectionFacts {
        // What `roles` makes of a SYN: its sender is the client.
        let (src, dst) = self.sender_first(key);
        let client = Endpoint {
            ip: src.0,
            port: src.1,
        };
        let server = Endpoint {
            ip: dst.0,
            port: dst.1,
        };
        ConnectionFacts {
            stream: self.stream,
            client,
            server,
            first: self.at,
            same_as: None,
            mptcp: None,
            proxy_protocol: None,
            last: self.last(),
            // An ICMP error answered the SYN: what emit() decides for a
            // connection whose SYN was quoted and never answered.
            ending: match ending {
                Ending::Open if self.quoted_after > 0 => Ending::Unreachable,
                e => e,
            },
            handshake: HandshakeReport {
                syn_frame: Some(self.at.frame),
                client_mss: self.mss,
                client_wscale: self.window_scale,
                client_sack: self.sack_permitted,
                ..Default::default()
            },
            first_syn: Some(self.at),
            last_syn: Some(self.at),
            syn_count: 1,
            syn_ack: None,
            syn_ack_count: 0,
            syn_acks: Vec::new(),
            handshake_ack: None,
            handshake_ack_tsecr: None,
            initial_rtt_ns: None,
            rtt: RttFacts::default(),
            stats: [
                DirectionStats {
                    packets: 1,
                    ..Default::default()
                },
                DirectionStats::default(),
            ],
            tls: None,
            tls_lookalike: None,
            exchanges: Vec::new(),
            exchanges_total: 0,
            greeting: None,
            greeting_connect_back: None,
            protocol: None,
            timeline: vec![SegmentRecord {
                frame: self.at.frame,
                ts_ns: self.at.ts_ns,
                dir: Direction::ClientToServer,
                seq: 0,
                end: 1,
                ack: 0,
                ack_set: false,
                len: 0,
                flags: self.flags,
                window: self.window,
                new_data: false,
                retransmission: false,
                overtaken: false,
                probe: false,
                dsack: None,
                tsval: self.timestamps.map_or(0, |(v, _)| v),
                tsecr: self.timestamps.map_or(0, |(_, e)| e),
                timestamped: self.timestamps.is_some(),
            }],
            ladder: None,
            series: None,
            early_plaintext: None,
            detect,
            // Nothing was answered: no delay to weigh against the path.
            path_samples: Vec::new(),
            uplink: None,
            path_busy: Vec::new(),
            path_stalls: Vec::new(),
            late_retransmissions: Vec::new(),
            heard_at_resends: Vec::new(),
            nothing_heard: None,
            client_closed_with: 0,
            unheard_at_resend: None,
            uplink_waits: Vec::new(),
            acked_at_resends: Vec::new(),
            client_clock_hz: None,
            sibling_closes: Vec::new(),
            dialled_back_data_ns: None,
            certificate_fetches: Vec::new(),
            sibling_data: Vec::new(),
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
            window: None,
            earlier: None,
            last_window: None,
        }
    }
}

/// A lone SYN to report: what its facts are made of (no heap: it can be
/// handed to a worker, and dropped there, for free).
#[derive(Debug, Clone, Copy)]
pub(crate) struct LoneSyn {
    pub(crate) key: FlowKey,
    pub(crate) embryo: Embryo,
    pub(crate) ending: Ending,
    pub(crate) detect: bool,
}

impl LoneSyn {
    pub(crate) fn facts(&self) -> ConnectionFacts {
        self.embryo.facts(&self.key, self.ending, self.detect)
    }
}

/// The lone SYNs held: their records in the order they came, and an
/// index by flow.
///
/// The order they came in is also their idle order: a lone SYN's record
/// never changes (anything more for its flow makes it a connection), and
/// the progress clock and stream numbers only go forward. So the
/// longest-idle are taken from the front one after the other, instead of
/// being chosen from a table of the flood's size and swept out of it; and
/// the index, a flow's stream number, is a quarter of the record's size.
#[derive(Debug, Default)]
pub(crate) struct LoneSyns {
    /// The stream of each lone SYN held.
    index: FlowMap<u64>,
    /// Their records in stream order, with those since grown into
    /// connections (not live) until they reach the front or the queue is
    /// compacted.
    queue: VecDeque<Queued>,
}

#[derive(Debug, Clone, Copy)]
struct Queued {
    key: FlowKey,
    embryo: Embryo,
    live: bool,
}

/// Records of grown lone SYNs the queue may hold beyond twice the live
/// ones before it is compacted (an old SYN never answered, at the front,
/// keeps every later one in the queue).
const COMPACT_SLACK: usize = 64;

impl LoneSyns {
    /// Lone SYNs held.
    pub(crate) fn len(&self) -> usize {
        self.index.len()
    }

    pub(crate) fn contains(&self, key: &FlowKey) -> bool {
        self.index.contains_key(key)
    }

    /// Holds a new lone SYN; its stream comes after every one held.
    pub(crate) fn insert(&mut self, key: FlowKey, embryo: Embryo) {
        debug_assert!(self
            .queue
            .back()
            .is_none_or(|q| q.embryo.stream < embryo.stream));
        self.index.insert(key, embryo.stream);
        self.queue.push_back(Queued {
            key,
            embryo,
            live: true,
        });
    }

    /// Takes the lone SYN of this flow, if one is held (it grows into a
    /// connection).
    pub(crate) fn remove(&mut self, key: &FlowKey) -> Option<Embryo> {
        let stream = self.index.remove(key)?;
        let at = self
            .queue
            .binary_search_by_key(&stream, |q| q.embryo.stream)
            .expect("an indexed lone SYN is queued");
        let q = &mut self.queue[at];
        q.live = false;
        let embryo = q.embryo;
        self.drop_dead_front();
        if self.queue.len() > 2 * self.index.len() + COMPACT_SLACK {
            self.queue.retain(|q| q.live);
        }
        Some(embryo)
    }

    /// Notes an ICMP error quoting this flow's lone SYN in `frame`; false
    /// when no lone SYN of the flow is held.
    pub(crate) fn note_quoted(&mut self, key: &FlowKey, frame: u64) -> bool {
        let Some(&mut stream) = self.index.get_mut(key) else {
            return false;
        };
        let at = self
            .queue
            .binary_search_by_key(&stream, |q| q.embryo.stream)
            .expect("an indexed lone SYN is queued");
        let e = &mut self.queue[at].embryo;
        e.quoted_after = u32::try_from(frame.saturating_sub(e.at.frame)).unwrap_or(u32::MAX);
        true
    }

    /// Takes the longest-idle lone SYN if `take` says so.
    pub(crate) fn pop_oldest_if(
        &mut self,
        take: impl Fn(&Embryo) -> bool,
    ) -> Option<(FlowKey, Embryo)> {
        self.drop_dead_front();
        let front = self.queue.front()?;
        if !take(&front.embryo) {
            return None;
        }
        let Queued { key, embryo, .. } = self.queue.pop_front().expect("checked");
        self.index.remove(&key);
        Some((key, embryo))
    }

    /// The lone SYNs held, in stream order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&FlowKey, &Embryo)> + '_ {
        self.queue
            .iter()
            .filter(|q| q.live)
            .map(|q| (&q.key, &q.embryo))
    }

    fn drop_dead_front(&mut self) {
        while self.queue.front().is_some_and(|q| !q.live) {
            self.queue.pop_front();
        }
    }

    #[cfg(test)]
    pub(crate) fn queued(&self) -> usize {
        self.queue.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    fn key(n: u32) -> FlowKey {
        FlowKey {
            lo: (IpAddr::V4(Ipv4Addr::from(0x0a00_0000 + n)), 40000),
            hi: (IpAddr::V4(Ipv4Addr::new(10, 9, 0, 2)), 443),
        }
    }

    /// The lone SYN of stream `n`, sent at `n` ms of progress.
    fn syn(n: u64) -> Embryo {
        Embryo {
            stream: n,
            at: Stamp {
                frame: n + 1,
                ts_ns: n as i64 * 1_000_000,
            },
            last_progress_ns: n as i64 * 1_000_000,
            seq: 1,
            window: 64240,
            flags: TcpFlags::SYN,
            ip_id: None,
            mss: Some(1460),
            window_scale: None,
            sack_permitted: false,
            from_lo: true,
            options_malformed: false,
            timestamps: None,
            quoted_after: 0,
        }
    }

    fn streams(held: &LoneSyns) -> Vec<u64> {
        held.iter().map(|(_, e)| e.stream).collect()
    }

    #[test]
    fn a_lone_syn_is_held_in_about_a_hundred_bytes() {
        let record = std::mem::size_of::<Queued>();
        let index_entry = std::mem::size_of::<([u32; 3], u64)>();
        assert!(record <= 128, "{record} bytes");
        assert_eq!(index_entry, 24);
    }

    #[test]
    fn the_longest_idle_come_out_first_and_grown_ones_never() {
        let mut held = LoneSyns::default();
        for n in 0..6 {
            held.insert(key(n as u32), syn(n));
        }
        // Streams 0 and 3 grow into connections.
        assert_eq!(held.remove(&key(0)).map(|e| e.stream), Some(0));
        assert_eq!(held.remove(&key(3)).map(|e| e.stream), Some(3));
        assert!(held.remove(&key(3)).is_none());
        assert!(!held.contains(&key(3)));
        assert!(held.contains(&key(4)));
        assert_eq!(held.len(), 4);
        assert_eq!(streams(&held), [1, 2, 4, 5]);
        // Only what the predicate takes, oldest first.
        let idle_before_3ms = |e: &Embryo| e.last_progress_ns < 3_000_000;
        let mut out = Vec::new();
        while let Some((k, e)) = held.pop_oldest_if(idle_before_3ms) {
            assert_eq!(k, key(e.stream as u32));
            out.push(e.stream);
        }
        assert_eq!(out, [1, 2]);
        assert_eq!(held.pop_oldest_if(|_| true).map(|(_, e)| e.stream), Some(4));
        assert_eq!(streams(&held), [5]);
        assert!(!held.contains(&key(4)));
        assert_eq!(held.len(), 1);
    }

    /// A SYN never answered stays at the front while thousands of later
    /// ones grow into connections: the queue keeps what it holds, not
    /// what passed through it.
    #[test]
    fn a_lone_syn_record_stays_72_bytes() {
        // What a SYN flood holds per SYN (docs/benchmarks.md): the ICMP
        // quote's frame count fits in what was padding.
        assert!(
            std::mem::size_of::<Embryo>() <= 72,
            "{}",
            std::mem::size_of::<Embryo>()
        );
    }

    #[test]
    fn the_queue_stays_the_size_of_what_is_held() {
        let mut held = LoneSyns::default();
        held.insert(key(0), syn(0));
        for n in 1..10_000u64 {
            held.insert(key(n as u32), syn(n));
            assert!(held.remove(&key(n as u32)).is_some());
            assert!(held.queued() <= 2 * held.len() + COMPACT_SLACK + 1);
        }
        assert_eq!(streams(&held), [0]);
        // A later SYN is still found after the compactions.
        held.insert(key(20_000), syn(20_000));
        assert_eq!(held.remove(&key(20_000)).map(|e| e.stream), Some(20_000));
        assert_eq!(held.pop_oldest_if(|_| true).map(|(_, e)| e.stream), Some(0));
        assert_eq!(held.len(), 0);
    }
}
