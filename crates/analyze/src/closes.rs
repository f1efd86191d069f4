//! The closes of a connection's siblings, the other connections between
//! the same two addresses, and when their FINs went; and when their
//! clients' data went. An application that writes on one connection when
//! another one closes (FTP's server sends `226 Transfer complete` once its
//! data connection is closed), or when a message comes on another (an MQTT
//! broker pushes to its subscribers the message a publisher just sent),
//! sends at a moment the other connection explains; a Nagle "release" by
//! an ACK of this connection that came a moment before is then a
//! coincidence (detect/nagle.rs). Bounded: the newest [`KEPT`] FINs and
//! as many runs of data (a connection's segments sent back to back in one
//! direction, a write's, are one run: from its first to its last), and a
//! connection learns at most [`PER_CONNECTION`] FINs and
//! [`DATA_PER_CONNECTION`] runs.

use std::collections::VecDeque;
use std::net::IpAddr;

/// FINs, and data segments, kept for the connections still open.
const KEPT: usize = 4096;
/// A connection's siblings' FINs, at most.
const PER_CONNECTION: usize = 64;
/// A connection's siblings' runs of data, at most: a subscriber's
/// connection lives as long as its publishers send.
const DATA_PER_CONNECTION: usize = 1024;

/// How close together an application's closes of its connections are
/// one act ([`Closes::closed_with`]): nDPI's skype.pcap, seven FINs in
/// 0.1 ms; skype_no_unknown.pcap, twelve in 0.5 ms.
pub const TEARDOWN_NS: i64 = 5_000_000;

/// Segments of a connection's that follow each other closer than this
/// are one run: a write's, sent back to back.
const BACK_TO_BACK_NS: i64 = 1_000_000;

/// What one kind of segment did lately: (stream, from address, to
/// address, capture time of the run's first and last), in capture order.
type Sent = VecDeque<(u64, IpAddr, IpAddr, i64, i64)>;

/// The FINs and data segments seen lately (track.rs keeps one for the
/// capture).
#[derive(Default)]
pub(crate) struct Closes {
    fins: Sent,
    data: Sent,
}

/// Notes a segment in `sent`, forgetting the oldest beyond [`KEPT`].
fn note(sent: &mut Sent, stream: u64, from: IpAddr, to: IpAddr, ts_ns: i64) {
    if sent.len() == KEPT {
        sent.pop_front();
    }
    sent.push_back((stream, from, to, ts_ns, ts_ns));
}

impl Closes {
    /// A FIN on `stream`, from `from` to `to`, captured at `ts_ns`.
    pub fn fin(&mut self, stream: u64, from: IpAddr, to: IpAddr, ts_ns: i64) {
        note(&mut self.fins, stream, from, to, ts_ns);
    }

    /// A segment with data on `stream`, from `from` to `to` (a client's,
    /// as track.rs notes them), captured at `ts_ns`: it goes on with the
    /// last run when it follows it back to back.
    pub fn data(&mut self, stream: u64, from: IpAddr, to: IpAddr, ts_ns: i64) {
        match self.data.back_mut() {
            Some(run) if run.0 == stream && run.1 == from && ts_ns - run.4 <= BACK_TO_BACK_NS => {
                run.4 = ts_ns
            }
            _ => note(&mut self.data, stream, from, to, ts_ns),
        }
    }

    /// The runs of data other connections between `server` and `client`
    /// carried from `client` to `server`, captured from `from_ns` to
    /// `to_ns`: when each began and ended.
    pub fn data_to_server(
        &self,
        stream: u64,
        server: IpAddr,
        client: IpAddr,
        from_ns: i64,
        to_ns: i64,
    ) -> Vec<(i64, i64)> {
        self.data_between(stream, server, client, (from_ns, to_ns), false)
            .map(|(_, first, last)| (first, last))
            .collect()
    }

    /// When the newest run of data, captured from `from_ns` to `to_ns`,
    /// began on a connection `server` opened to `client` (the two hosts
    /// dialled each other: a peer-to-peer race), if one did.
    pub fn dialled_back_data(
        &self,
        stream: u64,
        server: IpAddr,
        client: IpAddr,
        from_ns: i64,
        to_ns: i64,
    ) -> Option<i64> {
        self.data_between(stream, server, client, (from_ns, to_ns), true)
            .filter(|&(by_server, _, _)| by_server)
            .map(|(_, first, _)| first)
            .max()
    }

    /// The runs of data of other connections between the two, by their
    /// clients ([`of_siblings`]; `both`: the server's host's too).
    fn data_between(
        &self,
        stream: u64,
        server: IpAddr,
        client: IpAddr,
        span: (i64, i64),
        both: bool,
    ) -> impl Iterator<Item = (bool, i64, i64)> {
        of_siblings(
            &self.data,
            stream,
            server,
            client,
            span,
            both,
            DATA_PER_CONNECTION,
        )
    }

    /// How many other connections `client` sent a FIN on within
    /// [`TEARDOWN_NS`] of `ts_ns` (its FIN on `stream`), to any server:
    /// an application closing its connections together (a teardown: it
    /// quit, went to the background, dropped a race's losers), not each
    /// connection's own end.
    pub fn closed_with(&self, stream: u64, client: IpAddr, ts_ns: i64) -> u32 {
        let mut others: Vec<u64> = Vec::new();
        for &(s, from, _, first, _) in self.fins.iter().rev() {
            if first < ts_ns - TEARDOWN_NS {
                break;
            }
            if s != stream && from == client && first <= ts_ns + TEARDOWN_NS && !others.contains(&s)
            {
                others.push(s);
            }
        }
        others.len() as u32
    }

    /// The FINs of other connections between `server` and `client` (not on
    /// one address: every connection of the host would be a sibling)
    /// captured from `from_ns` to `to_ns`: (sent by the server, time).
    pub fn of_siblings(
        &self,
        stream: u64,
        server: IpAddr,
        client: IpAddr,
        from_ns: i64,
        to_ns: i64,
    ) -> Vec<(bool, i64)> {
        of_siblings(
            &self.fins,
            stream,
            server,
            client,
            (from_ns, to_ns),
            true,
            PER_CONNECTION,
        )
        .map(|(by_server, ts, _)| (by_server, ts))
        .collect()
    }
}

/// The segments in `sent` of other connections between `server` and
/// `client` (none on one address: every connection of the host would be a
/// sibling) captured in `(from_ns, to_ns)`, sent by either (`both`) or by
/// the client, the newest `at_most`, oldest first: (sent by the server,
/// the time of the run's first, of its last).
fn of_siblings(
    sent: &Sent,
    stream: u64,
    server: IpAddr,
    client: IpAddr,
    (from_ns, to_ns): (i64, i64),
    both: bool,
    at_most: usize,
) -> impl Iterator<Item = (bool, i64, i64)> {
    let mut found: Vec<(bool, i64, i64)> = Vec::new();
    if server == client {
        return found.into_iter();
    }
    // (A plain loop: every connection's close walks back through its life.)
    for &(s, a, b, first, last) in sent.iter().rev() {
        if last < from_ns || found.len() == at_most {
            break;
        }
        let by_server = a == server && b == client;
        if s != stream && first <= to_ns && ((both && by_server) || (a == client && b == server)) {
            found.push((by_server, first, last));
        }
    }
    found.reverse();
    found.into_iter()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    fn ip(last: u8) -> IpAddr {
        IpAddr::V4(Ipv4Addr::new(10, 0, 0, last))
    }

    #[test]
    fn a_connection_learns_its_siblings_fins_in_order() {
        let mut c = Closes::default();
        c.fin(0, ip(1), ip(2), 5);
        c.fin(1, ip(2), ip(1), 10);
        c.fin(1, ip(1), ip(2), 11);
        c.fin(2, ip(3), ip(2), 12);
        c.fin(0, ip(2), ip(1), 20);
        // Stream 0's siblings between 1 and 2: stream 1's two FINs.
        assert_eq!(
            c.of_siblings(0, ip(2), ip(1), 0, 30),
            [(true, 10), (false, 11)]
        );
        // Only those in its life.
        assert_eq!(c.of_siblings(0, ip(2), ip(1), 11, 30), [(false, 11)]);
        // On one address, nothing can be told.
        assert!(c.of_siblings(0, ip(2), ip(2), 0, 30).is_empty());
    }

    #[test]
    fn a_clients_fins_together_to_any_server_are_one_teardown() {
        const MS: i64 = 1_000_000;
        let mut c = Closes::default();
        // Client 1 closes streams 0-3 within 0.2 ms, to three servers;
        // stream 2's FIN twice (a copy); stream 4 a second later; the
        // server 2 closes stream 5 at the same moment.
        c.fin(0, ip(1), ip(2), 100 * MS);
        c.fin(1, ip(1), ip(3), 100 * MS + 50_000);
        c.fin(2, ip(1), ip(4), 100 * MS + 100_000);
        c.fin(2, ip(1), ip(4), 100 * MS + 150_000);
        c.fin(5, ip(2), ip(1), 100 * MS + 150_000);
        c.fin(3, ip(1), ip(2), 100 * MS + 200_000);
        c.fin(4, ip(1), ip(2), 1100 * MS);
        assert_eq!(c.closed_with(0, ip(1), 100 * MS), 3);
        assert_eq!(c.closed_with(3, ip(1), 100 * MS + 200_000), 3);
        assert_eq!(c.closed_with(4, ip(1), 1100 * MS), 0);
        // Another client's, or at another time: none.
        assert_eq!(c.closed_with(9, ip(7), 100 * MS), 0);
        assert_eq!(c.closed_with(9, ip(1), 90 * MS), 0);
    }

    #[test]
    fn a_connection_learns_the_data_its_siblings_brought_its_server() {
        let mut c = Closes::default();
        c.data(0, ip(1), ip(2), 5);
        c.data(1, ip(1), ip(2), 10);
        c.data(1, ip(2), ip(1), 11);
        c.data(2, ip(3), ip(2), 12);
        c.fin(1, ip(1), ip(2), 13);
        c.data(1, ip(1), ip(2), 14);
        // Stream 0 (client 1, server 2): stream 1's data from 1 to 2, not
        // its answer, not stream 2's (another client), not the FIN; 10 and
        // 14 (nanoseconds) are two runs, others' segments between them.
        assert_eq!(
            c.data_to_server(0, ip(2), ip(1), 0, 30),
            [(10, 10), (14, 14)]
        );
        assert_eq!(c.data_to_server(0, ip(2), ip(1), 0, 12), [(10, 10)]);
        // A large message's segments back to back are one run; a message
        // 40 ms later (an MQTT DISCONNECT after a PUBLISH) is another.
        let ms = 1_000_000;
        for ts in 1..100 {
            c.data(1, ip(1), ip(2), ms + ts * 10_000);
        }
        c.data(1, ip(1), ip(2), 41 * ms);
        assert_eq!(
            c.data_to_server(0, ip(2), ip(1), ms, 50 * ms),
            [(ms + 10_000, ms + 990_000), (41 * ms, 41 * ms)]
        );
        // Bounded: the newest runs of busy siblings (two, taking turns).
        for ts in 100..2200 {
            c.data(1 + ts as u64 % 2, ip(1), ip(2), ts * ms);
        }
        let learnt = c.data_to_server(0, ip(2), ip(1), 0, 3000 * ms);
        assert_eq!(learnt.len(), DATA_PER_CONNECTION);
        assert_eq!(learnt.last(), Some(&(2199 * ms, 2199 * ms)));
    }
}
