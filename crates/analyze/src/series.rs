//! Records the per-packet [`Series`] of the connections that will be
//! drawn, as their packets are observed.
//!
//! Asked for through [`AnalyzeOptions::series`](crate::AnalyzeOptions):
//! only the connections that will be drawn carry it, and each keeps at
//! most [`SeriesRequest::cap`] packets, so memory stays bounded by what is
//! shown, not by the capture.

use std::collections::BTreeSet;
use std::sync::Arc;

use rttdoc_wire::Segment;

use crate::connection::{Connection, Stamp};
use crate::model::{Direction, Series, SeriesPacket};

/// Packets kept per connection by default: a bulk transfer of ~70 MB in
/// full-sized segments, far more than a graph can show apart, and ~3 MB of
/// memory per connection drawn.
pub const SERIES_CAP: usize = 50_000;

/// Which connections carry a [`Series`].
#[derive(Debug, Clone, Default)]
pub struct SeriesRequest {
    /// None: no series at all (the default).
    pub streams: Option<SeriesStreams>,
    /// Packets kept per connection; later ones are counted in
    /// [`Series::dropped`].
    pub cap: usize,
}

/// The connections a [`SeriesRequest`] names.
#[derive(Debug, Clone)]
pub enum SeriesStreams {
    /// Every connection (stdin, where a second pass is impossible, and
    /// `--json --series`).
    All,
    /// These tcp.stream numbers only (the second pass over a file).
    Only(Arc<BTreeSet<u64>>),
}

impl SeriesRequest {
    /// A series for every connection, `cap` packets each.
    pub fn all(cap: usize) -> Self {
        SeriesRequest {
            streams: Some(SeriesStreams::All),
            cap,
        }
    }

    /// A series for these streams only, `cap` packets each.
    pub fn only(streams: BTreeSet<u64>, cap: usize) -> Self {
        SeriesRequest {
            streams: Some(SeriesStreams::Only(Arc::new(streams))),
            cap,
        }
    }

    /// Whether connection `stream` records one.
    pub fn wants(&self, stream: u64) -> bool {
        match &self.streams {
            None => false,
            Some(SeriesStreams::All) => true,
            Some(SeriesStreams::Only(set)) => set.contains(&stream),
        }
    }

    /// The builder a new connection `stream` carries, if it records one.
    pub(crate) fn builder(&self, stream: u64) -> Option<Box<SeriesBuilder>> {
        self.wants(stream).then(|| {
            Box::new(SeriesBuilder {
                cap: self.cap,
                series: Series::default(),
            })
        })
    }
}

/// Collects a connection's [`Series`] as its packets are observed.
#[derive(Debug)]
pub(crate) struct SeriesBuilder {
    cap: usize,
    series: Series,
}

impl SeriesBuilder {
    /// Each packet recorded so far was the other side's (the connection's
    /// roles were swapped).
    pub(crate) fn swap_directions(&mut self) {
        for p in &mut self.series.packets {
            p.direction = p.direction.reverse();
        }
    }

    /// The series, once the connection is done.
    pub(crate) fn finish(self) -> Series {
        self.series
    }
}

/// Records one observed segment on `c`'s series (called from
/// `Connection::observe` once the segment is classified).
pub(crate) fn record(
    c: &mut Connection,
    at: Stamp,
    dir: Direction,
    seg: &Segment<'_>,
    retransmission: bool,
    probe: bool,
) {
    let first_ts = c.first.ts_ns;
    let (d, r) = (dir.index(), dir.reverse().index());
    let base = c.half[d].base_seq.unwrap_or(seg.seq);
    let peer_base = c.half[r].base_seq;
    // The scale applies only when both SYNs carried the option (RFC 7323
    // 2.2), never to the SYNs' own windows.
    let scale = match (c.half[d].wscale, c.half[r].wscale) {
        (Some(s), Some(_)) if !seg.flags.syn() => s.min(14),
        _ => 0,
    };
    let Some(b) = c.series.as_deref_mut() else {
        return;
    };
    if b.series.packets.len() >= b.cap {
        b.series.dropped += 1;
        return;
    }
    let ack = peer_base
        .filter(|_| seg.flags.ack())
        .map(|pb| seg.ack.wrapping_sub(pb));
    let blocks = seg.options.sack_blocks();
    let sack: Vec<(u32, u32)> = match peer_base {
        Some(pb) => blocks
            .iter()
            .map(|(l, r)| (l.wrapping_sub(pb), r.wrapping_sub(pb)))
            .collect(),
        None => Vec::new(),
    };
    // RFC 2883: a first block below the cumulative ACK, or inside the
    // second block, reports bytes received twice.
    let dsack = match (blocks.first(), seg.flags.ack()) {
        (Some(first), ack_set) => {
            (ack_set && crate::seq::le(first.1, seg.ack))
                || blocks.get(1).is_some_and(|second| {
                    crate::seq::le(second.0, first.0) && crate::seq::le(first.1, second.1)
                })
        }
        (None, _) => false,
    };
    b.series.packets.push(SeriesPacket {
        frame: at.frame,
        t_ms: (at.ts_ns - first_ts) as f64 / 1e6,
        direction: dir,
        flags: seg.flags,
        seq: seg.seq.wrapping_sub(base),
        len: seg.payload_len,
        ack,
        window: ack.map(|_| (seg.window as u64) << scale),
        retransmission,
        probe,
        sack,
        dsack,
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Endpoint;
    use rttdoc_wire::{TcpFlags, TcpOptions};

    const SYN: u16 = 0x02;
    const ACK: u16 = 0x10;
    const PSH: u16 = 0x08;

    fn ep(port: u16) -> Endpoint {
        Endpoint {
            ip: "10.0.0.1".parse().unwrap(),
            port,
        }
    }

    struct Wire {
        c: Box<Connection>,
        frame: u64,
    }

    impl Wire {
        fn new(request: SeriesRequest) -> Wire {
            let mut c = Box::new(Connection::new(
                0,
                ep(40000),
                ep(443),
                Stamp {
                    frame: 1,
                    ts_ns: 1_000_000_000,
                },
                false,
            ));
            c.series = request.builder(0);
            Wire { c, frame: 0 }
        }

        #[allow(clippy::too_many_arguments)]
        fn send(
            &mut self,
            ms: i64,
            dir: Direction,
            seq: u32,
            ack: u32,
            flags: u16,
            window: u16,
            len: u32,
            options: TcpOptions,
        ) {
            self.frame += 1;
            let payload = vec![0u8; len as usize];
            let (src, dst) = match dir {
                Direction::ClientToServer => (ep(40000), ep(443)),
                Direction::ServerToClient => (ep(443), ep(40000)),
            };
            let seg = Segment {
                src: src.ip,
                dst: dst.ip,
                src_port: src.port,
                dst_port: dst.port,
                seq,
                ack,
                flags: TcpFlags::from_bits_retain(flags),
                window,
                options,
                payload_len: len,
                payload: &payload,
                ip_id: Some(self.frame as u16),
            };
            let at = Stamp {
                frame: self.frame,
                ts_ns: 1_000_000_000 + ms * 1_000_000,
            };
            self.c.observe(at, dir, &seg);
        }

        fn series(mut self) -> Series {
            self.c.series.take().unwrap().finish()
        }
    }

    fn scale(s: u8) -> TcpOptions {
        TcpOptions {
            window_scale: Some(s),
            mss: Some(1460),
            ..Default::default()
        }
    }

    fn handshake(w: &mut Wire) {
        use Direction::*;
        w.send(0, ClientToServer, 1000, 0, SYN, 64240, 0, scale(7));
        w.send(
            10,
            ServerToClient,
            5000,
            1001,
            SYN | ACK,
            65160,
            0,
            scale(7),
        );
        w.send(
            20,
            ClientToServer,
            1001,
            5001,
            ACK,
            502,
            0,
            TcpOptions::default(),
        );
    }

    #[test]
    fn series_marks_a_resent_segment_as_retransmission_and_keeps_relative_numbers() {
        use Direction::*;
        let mut w = Wire::new(SeriesRequest::all(100));
        handshake(&mut w);
        let none = TcpOptions::default;
        w.send(30, ServerToClient, 5001, 1001, ACK | PSH, 509, 1000, none());
        w.send(31, ServerToClient, 6001, 1001, ACK | PSH, 509, 1000, none());
        // The first segment was lost: the client SACKs the second.
        let mut sack = none();
        sack.sack[0] = (6001, 7001);
        sack.sack_len = 1;
        w.send(41, ClientToServer, 1001, 5001, ACK, 502, 0, sack);
        // 200 ms later (an RTO, not reordering) the server sends it again.
        w.send(
            250,
            ServerToClient,
            5001,
            1001,
            ACK | PSH,
            509,
            1000,
            none(),
        );
        let s = w.series();
        assert_eq!(s.packets.len(), 7);
        let first = &s.packets[3];
        assert_eq!(
            (first.seq, first.len, first.retransmission),
            (1, 1000, false)
        );
        let again = &s.packets[6];
        assert_eq!(again.frame, 7);
        assert_eq!((again.seq, again.len), (1, 1000));
        assert!(
            again.retransmission,
            "a re-sent segment 200 ms later is a retransmission"
        );
        assert!((again.t_ms - 250.0).abs() < 1e-9);
        let sacker = &s.packets[5];
        assert_eq!(sacker.ack, Some(1));
        assert_eq!(
            sacker.sack,
            vec![(1001, 2001)],
            "SACK blocks in the peer's relative space"
        );
        assert!(!sacker.dsack);
    }

    #[test]
    fn series_window_is_scaled_after_the_handshake_and_not_on_syns() {
        use Direction::*;
        let mut w = Wire::new(SeriesRequest::all(100));
        handshake(&mut w);
        w.send(
            30,
            ServerToClient,
            5001,
            1001,
            ACK,
            0,
            0,
            TcpOptions::default(),
        );
        let s = w.series();
        // The SYN has no ACK: no window line point.
        assert_eq!(s.packets[0].window, None);
        // The SYN-ACK's window is never scaled.
        assert_eq!(s.packets[1].window, Some(65160));
        // 502 << 7: the client's receive window after the handshake.
        assert_eq!(s.packets[2].window, Some(502 << 7));
        assert_eq!(s.packets[2].ack, Some(1));
        // A zero window is a point at the ACK itself (the line touches it).
        assert_eq!(s.packets[3].window, Some(0));
    }

    #[test]
    fn series_stops_at_its_cap_and_counts_the_rest() {
        let mut w = Wire::new(SeriesRequest::all(2));
        handshake(&mut w);
        let s = w.series();
        assert_eq!(s.packets.len(), 2);
        assert_eq!(s.dropped, 1);
    }

    #[test]
    fn series_only_for_the_streams_asked_for() {
        let r = SeriesRequest::only([3, 5].into_iter().collect(), 10);
        assert!(r.wants(3) && r.wants(5) && !r.wants(4));
        assert!(!SeriesRequest::default().wants(0));
    }
}
