//! Multipath TCP subflows (RFC 8684, and RFC 6824's version 0).
//!
//! An MPTCP connection sends its data over one or more TCP connections,
//! its subflows, each a `tcp.stream` of its own; the sender picks the
//! subflow for each piece, and a request sent on one may be answered on
//! another. Only what one subflow carried is in its stream, so its turns
//! are not requests and answers when other subflows carried data too.
//!
//! How that shows on one subflow, without finding the others: each data
//! segment's DSS option maps its bytes to the connection's data sequence
//! numbers, and the receiver's Data ACK acknowledges the connection's
//! data at the data level, whichever subflow carried it. A Data ACK past
//! the end of everything its peer mapped onto this subflow acknowledges
//! data that came over another one (unless the subflow's own ACK says
//! the capture missed some of the peer's packets: their mappings are
//! missing too). Version 1 maps the first data of the first subflow in
//! its MP_CAPABLE instead, from the sender's initial data sequence
//! number, which is what the receiver's first Data ACK acknowledges.
//! With nothing mapped by a sender, nothing is judged.
//!
//! Which turns that breaks: a request here (client data, then the first
//! server data after it: exchange.rs's turn) is answered here when the
//! server's first data after it continues the data level where the
//! request left it: its mapping starts at or before the Data ACK the
//! request carried or the end of what the server mapped here before (no
//! server data went elsewhere in between: a client's Data ACK may lag
//! what this subflow brought it), and that
//! data's own Data ACK does not pass the request's mapped end (no more
//! client data went elsewhere, which it might answer instead). Otherwise
//! the answer began on another subflow, and what came here is no measure
//! of the server's time. A first answer segment that carries no mapping
//! (one begun before it) is not judged.

use crate::model::{MptcpReport, MptcpSubflowKind};
use crate::seq;
use crate::Direction;
use rttdoc_wire::{MptcpSubflow, Segment};

/// What a connection's MPTCP options showed so far.
#[derive(Debug, Clone, Default)]
pub(crate) struct MptcpSeen {
    /// The SYN's MP_CAPABLE or MP_JOIN.
    syn: Option<MptcpSubflow>,
    /// The SYN-ACK carried one too: the server took MPTCP up (without it
    /// the connection fell back to plain TCP).
    synack: bool,
    /// A Data ACK was seen (a subflow whose handshake was not captured).
    data_acks: bool,
    /// Per sender (`Direction::index`): the end of the data-level bytes
    /// it mapped onto this subflow (low 32 bits).
    mapped_end: [Option<u32>; 2],
    /// Per sender: the length its MP_CAPABLE mapped, before its peer's
    /// first Data ACK said where that starts.
    first_data_len: [Option<u16>; 2],
    /// Per sender: the first Data ACK it sent.
    first_data_ack: [Option<u32>; 2],
    /// The first frame whose Data ACK went past its peer's mappings.
    other_subflows_frame: Option<u64>,
    /// The client spoke since the server's last data: the Data ACK of
    /// its last data segment, if it carried one.
    request: Option<Option<u32>>,
    /// The first server data segments of turns whose answer began on
    /// another subflow (at most `MAX_SPLIT_TURNS`).
    split_turns: Vec<u64>,
}

/// Turns whose answer began on another subflow, listed per subflow; more
/// are not listed (each names an exchange, and at most 1000 are kept).
const MAX_SPLIT_TURNS: usize = 1000;

impl MptcpSeen {
    /// Takes in one segment's MPTCP options (`frame`, sent in `dir`);
    /// `acks_unseen`: its ACK covers bytes of the peer the capture never
    /// showed.
    pub(crate) fn observe(
        &mut self,
        frame: u64,
        dir: Direction,
        seg: &Segment<'_>,
        acks_unseen: bool,
    ) {
        let Some(m) = seg.options.mptcp else {
            return;
        };
        let (me, peer) = (dir.index(), dir.reverse().index());
        let flags = seg.flags;
        if flags.syn() {
            if flags.ack() {
                self.synack |= m.opens.is_some();
            } else {
                self.syn = m.opens;
            }
            return;
        }
        // The turn first: what the server mapped here before this segment.
        if seg.payload_len > 0 {
            self.turn(frame, dir, m.mapping.map(|(dsn, _)| dsn), m.data_ack);
        }
        if let Some((dsn, len)) = m.mapping {
            self.map(me, dsn.wrapping_add(u32::from(len)));
        }
        if let Some(len) = m.first_data_len {
            match self.first_data_ack[peer] {
                Some(start) => self.map(me, start.wrapping_add(u32::from(len))),
                None => self.first_data_len[me] = Some(len),
            }
        }
        let Some(data_ack) = m.data_ack.filter(|_| flags.ack()) else {
            return;
        };
        self.data_acks = true;
        if self.first_data_ack[me].is_none() {
            self.first_data_ack[me] = Some(data_ack);
            if let Some(len) = self.first_data_len[peer].take() {
                self.map(peer, data_ack.wrapping_add(u32::from(len)));
            }
        }
        let past = self.mapped_end[peer].is_some_and(|end| seq::lt(end, data_ack));
        if past && !acks_unseen && self.other_subflows_frame.is_none() {
            self.other_subflows_frame = Some(frame);
        }
    }

    /// A data segment (its mapping's data sequence number, its Data ACK):
    /// the client's makes a request, the server's first after it answers
    /// here or began its answer elsewhere (module docs).
    fn turn(&mut self, frame: u64, dir: Direction, dsn: Option<u32>, data_ack: Option<u32>) {
        if dir == Direction::ClientToServer {
            self.request = Some(data_ack);
            return;
        }
        let Some(request_ack) = self.request.take() else {
            return;
        };
        let client = Direction::ClientToServer.index();
        let server = Direction::ServerToClient.index();
        // Server data went elsewhere between the request and this: data
        // sequence numbers below this one that neither the request
        // acknowledged nor this subflow carried before.
        let known = match (request_ack, self.mapped_end[server]) {
            (Some(a), Some(e)) => Some(seq::max(a, e)),
            (a, e) => a.or(e),
        };
        let after_other = matches!((dsn, known), (Some(d), Some(k)) if seq::lt(k, d));
        // Client data went elsewhere after the request.
        let more_asked = matches!(
            (data_ack, self.mapped_end[client]),
            (Some(a), Some(end)) if seq::lt(end, a)
        );
        if (after_other || more_asked) && self.split_turns.len() < MAX_SPLIT_TURNS {
            self.split_turns.push(frame);
        }
    }

    /// `sender` mapped data-level bytes up to `end` onto this subflow.
    fn map(&mut self, sender: usize, end: u32) {
        let e = &mut self.mapped_end[sender];
        *e = Some(e.map_or(end, |e| seq::max(e, end)));
    }

    /// Client and server traded places (connection.rs, `swap_roles`).
    pub(crate) fn swap_directions(&mut self) {
        self.mapped_end.swap(0, 1);
        self.first_data_len.swap(0, 1);
        self.first_data_ack.swap(0, 1);
        // Roles settle at the first payload, before any turn.
        self.request = None;
    }

    /// The subflow's report: `None` for a connection that is not one (no
    /// MPTCP option, or a handshake that fell back to plain TCP).
    pub(crate) fn report(&self) -> Option<Box<MptcpReport>> {
        let subflow = match (self.syn, self.synack) {
            (Some(MptcpSubflow::First), true) => MptcpSubflowKind::First,
            (Some(MptcpSubflow::Joined), true) => MptcpSubflowKind::Joined,
            // Offered, not taken up: plain TCP from the handshake on.
            (Some(_), false) => return None,
            (None, _) if self.data_acks => MptcpSubflowKind::Unknown,
            (None, _) => return None,
        };
        Some(Box::new(MptcpReport {
            subflow,
            other_subflows_frame: self.other_subflows_frame,
            split_turns: self.split_turns.clone(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rttdoc_wire::{Mptcp, TcpFlags, TcpOptions};

    fn segment(flags: TcpFlags, mptcp: Option<Mptcp>) -> Segment<'static> {
        let host = std::net::IpAddr::from([10, 0, 0, 1]);
        Segment {
            src: host,
            dst: host,
            src_port: 40000,
            dst_port: 22,
            seq: 1,
            ack: 1,
            flags,
            window: 1000,
            options: TcpOptions {
                mptcp,
                ..TcpOptions::default()
            },
            payload_len: 0,
            payload: &[],
            ip_id: None,
        }
    }

    /// A DSS with a Data ACK and, if any, a mapping.
    fn dss(data_ack: u32, mapping: Option<(u32, u16)>) -> Segment<'static> {
        segment(
            TcpFlags::ACK,
            Some(Mptcp {
                data_ack: Some(data_ack),
                mapping,
                ..Mptcp::default()
            }),
        )
    }

    fn opening(flags: TcpFlags, kind: MptcpSubflow) -> Segment<'static> {
        segment(
            flags,
            Some(Mptcp {
                opens: Some(kind),
                ..Mptcp::default()
            }),
        )
    }

    const C: Direction = Direction::ClientToServer;
    const S: Direction = Direction::ServerToClient;

    #[test]
    fn data_acks_within_the_peers_mappings_are_one_subflow() {
        let mut m = MptcpSeen::default();
        m.observe(1, C, &opening(TcpFlags::SYN, MptcpSubflow::First), false);
        let synack = TcpFlags::SYN | TcpFlags::ACK;
        m.observe(2, S, &opening(synack, MptcpSubflow::First), false);
        // The client maps 1000 bytes from 7000 and 500 more, the server
        // acknowledges them at the data level as they come.
        m.observe(3, C, &dss(100, Some((7_000, 1_000))), false);
        m.observe(4, S, &dss(7_400, None), false);
        m.observe(5, C, &dss(100, Some((8_000, 500))), false);
        m.observe(6, S, &dss(8_500, None), false);
        let r = m.report().unwrap();
        assert_eq!(r.subflow, MptcpSubflowKind::First);
        assert_eq!(r.other_subflows_frame, None);
    }

    #[test]
    fn a_data_ack_past_the_peers_mappings_shows_other_subflows() {
        let mut m = MptcpSeen::default();
        m.observe(1, C, &opening(TcpFlags::SYN, MptcpSubflow::Joined), false);
        let synack = TcpFlags::SYN | TcpFlags::ACK;
        m.observe(2, S, &opening(synack, MptcpSubflow::Joined), false);
        // Across the 32-bit wrap: the client mapped up to 69 here, the
        // server acknowledges 80 bytes more.
        m.observe(3, C, &dss(100, Some((u32::MAX - 10, 80))), false);
        m.observe(4, S, &dss(69, None), false);
        m.observe(5, S, &dss(149, None), false);
        m.observe(6, S, &dss(500, None), false);
        let r = m.report().unwrap();
        assert_eq!(r.subflow, MptcpSubflowKind::Joined);
        assert_eq!(r.other_subflows_frame, Some(5));
    }

    #[test]
    fn nothing_is_judged_without_the_peers_mappings_or_past_a_capture_gap() {
        let mut m = MptcpSeen::default();
        // Data ACKs that move with no mapping of the peer seen.
        m.observe(3, S, &dss(100, None), false);
        m.observe(4, S, &dss(5_000, None), false);
        // Past the mapping, but the subflow's ACK says the capture
        // missed the client's packets (and their mappings).
        m.observe(5, C, &dss(1, Some((100, 50))), false);
        m.observe(6, S, &dss(900, None), true);
        let r = m.report().unwrap();
        assert_eq!(r.subflow, MptcpSubflowKind::Unknown, "no handshake seen");
        assert_eq!(r.other_subflows_frame, None);
    }

    #[test]
    fn version_1_maps_the_first_data_in_mp_capable() {
        // mptcp-aa-v1.pcap: the client's first 16 bytes ride its
        // MP_CAPABLE; the server's first Data ACK (the client's initial
        // data sequence number) comes before and after them.
        let mut m = MptcpSeen::default();
        let first_data = segment(
            TcpFlags::ACK | TcpFlags::PSH,
            Some(Mptcp {
                opens: Some(MptcpSubflow::First),
                first_data_len: Some(16),
                ..Mptcp::default()
            }),
        );
        m.observe(6, C, &first_data, false);
        m.observe(7, S, &dss(5_000, None), false);
        m.observe(8, S, &dss(5_016, Some((900, 16))), false);
        assert_eq!(m.report().unwrap().other_subflows_frame, None);
        m.observe(9, S, &dss(5_017, None), false);
        assert_eq!(m.report().unwrap().other_subflows_frame, Some(9));
    }

    /// A data segment: `len` bytes mapped from `dsn`, and a Data ACK.
    fn data(dsn: u32, len: u16, data_ack: u32) -> Segment<'static> {
        let mut seg = dss(data_ack, Some((dsn, len)));
        seg.payload_len = u32::from(len);
        seg
    }

    #[test]
    fn an_answer_that_continues_the_data_level_here_is_this_turns() {
        let mut m = MptcpSeen::default();
        // The client asks (its Data ACK: the server's data up to 500), the
        // server's answer here starts at 500.
        m.observe(10, C, &data(9_000, 40, 500), false);
        m.observe(11, S, &data(500, 1_000, 9_040), false);
        // The client's Data ACK lags what this subflow brought it (500 ..
        // 1500, mapped here before): the next answer from 1500 is here.
        m.observe(12, C, &data(9_040, 40, 500), false);
        m.observe(13, S, &data(1_500, 1_000, 9_080), false);
        assert_eq!(m.report().unwrap().split_turns, Vec::<u64>::new());
    }

    #[test]
    fn an_answer_begun_on_another_subflow_splits_the_turn() {
        let mut m = MptcpSeen::default();
        m.observe(10, C, &data(9_000, 40, 500), false);
        // The server's data here starts at 800: 500 .. 800 went elsewhere
        // after the request (mptcp-v0.pcap, frames 43 and 212).
        m.observe(11, S, &data(800, 100, 9_040), false);
        // Its Data ACK passes the request mapped here (9000 .. 9040): more
        // of the client's data came over another subflow, which this may
        // answer instead.
        m.observe(12, C, &data(9_040, 40, 900), false);
        m.observe(13, S, &data(900, 100, 9_500), false);
        // A first answer segment without a mapping is not judged.
        m.observe(14, C, &data(9_500, 40, 1_000), false);
        let mut continued = dss(9_540, None);
        continued.payload_len = 100;
        m.observe(15, S, &continued, false);
        let r = m.report().unwrap();
        assert_eq!(r.split_turns, vec![11, 13]);
    }

    #[test]
    fn a_handshake_that_fell_back_is_plain_tcp() {
        let mut m = MptcpSeen::default();
        m.observe(1, C, &opening(TcpFlags::SYN, MptcpSubflow::First), false);
        m.observe(2, S, &segment(TcpFlags::SYN | TcpFlags::ACK, None), false);
        assert_eq!(m.report(), None);
        assert_eq!(MptcpSeen::default().report(), None);
    }
}
