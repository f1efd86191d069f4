//! The TLS sessions servers issued (TLS 1.2 and older: a ServerHello's
//! session ID), for a later ClientHello that offers one back: a
//! resumption the server may refuse (`resumption_missed` in
//! rttdoc-diagnose).
//!
//! Before TLS 1.3 a client resumes by sending, in its ClientHello, the
//! session ID a server gave it in an earlier ServerHello; a server that
//! resumes echoes it, one that does not (its cache lost the session, a
//! load balancer sent the client to another server without a shared
//! cache) answers with a new ID and a full handshake. A non-empty session
//! ID alone is no offer: TLS 1.3 clients send 32 random bytes there for
//! middleboxes' sake (RFC 8446 D.4). One the same server issued earlier
//! in the capture is (nDPI's forticlient.pcap: stream 2 offered the ID
//! stream 1's ServerHello issued, and got a new one and a full
//! handshake). The tracker notes each ID a server issues, keyed by the
//! server's address and port, and a connection looks its ClientHello's up
//! when it ends.
//!
//! Bounded: the newest [`KEPT`] notes.

use std::collections::VecDeque;
use std::net::IpAddr;

use rustc_hash::FxHashMap;

/// Notes kept: a server's capture with more sessions forgets the oldest.
const KEPT: usize = 16_384;

/// A server's address and port, and the hash of a session ID it issued.
type Issued = (IpAddr, u16, u64);

/// A client, its server's address and port, the hash of the server name
/// it asked for, and its TLS stack (`TlsSession::client_stack`): whose
/// sessions a client keeps together (one stack's cache; another library
/// on the same host, or Chromium's hellos with Channel ID and without,
/// keep their own).
pub(crate) type HeldBy = (IpAddr, IpAddr, u16, u64, u64);

/// A server's address and port, and the hash of a server name.
type Named = (IpAddr, u16, u64);

/// How long a client is taken to keep a session its server issued: the
/// common servers' session lifetime (nginx's `ssl_session_timeout`, 5
/// minutes; OpenSSL's default 300 s). A ClientHello later than that may
/// have let it go.
pub(crate) const SESSION_KEPT_NS: i64 = 300_000_000_000;

/// Where a server issued a session ID: when it became the client's to
/// offer back (its handshake's end, the server's Finished captured), the
/// connection (`tcp.stream`) and its ServerHello's frame.
pub(crate) type IdIssue = (i64, u64, u64);

/// The latest session a server issued a client (`HeldBy`): when, on
/// which connection and frame, a ticket or an ID.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Issue {
    pub at_ns: i64,
    pub stream: u64,
    pub frame: u64,
    pub ticket: bool,
    /// Its server asked the client for a certificate on that connection.
    pub certificate_requested: bool,
}

#[derive(Debug, Default)]
pub(crate) struct IssuedSessions {
    /// Where each was first issued ([`IdIssue`]).
    first_seen: FxHashMap<Issued, IdIssue>,
    order: VecDeque<Issued>,
    /// Per client, server, name and stack, the latest two sessions
    /// issued to it (newest first: a connection looks up, at its end,
    /// what was issued before its own ClientHello, its own issue noted
    /// meanwhile).
    held: FxHashMap<HeldBy, [Option<Issue>; 2]>,
    held_order: VecDeque<HeldBy>,
    /// Clients seen offering a session back to a server and name, by
    /// any of their stacks (their caches work: a hello that offered none
    /// had its reasons, Safari's full handshakes offering ALPN and NPN
    /// where its resuming hellos offer neither), and
    /// servers and names seen refusing an offered session (resuming would
    /// have saved nothing). Kept as `held` is.
    offered_by: FxHashMap<(IpAddr, IpAddr, u16, u64), ()>,
    /// Clients' TLS libraries (`TlsSession::client_library`) seen
    /// offering a session back to any server: they keep sessions
    /// somewhere (another library on the same host keeps its own: nDPI's
    /// teams.pcap, a SecureTransport-like stack that never offered one
    /// beside Chromium's that did).
    offering_clients: FxHashMap<(IpAddr, u64), ()>,
    refused_by: FxHashMap<Named, ()>,
}

/// The hash of a session ID (0: none, or empty).
pub(crate) fn id_hash(id: &[u8]) -> u64 {
    if id.is_empty() {
        return 0;
    }
    use std::hash::{Hash, Hasher};
    let mut h = rustc_hash::FxHasher::default();
    id.hash(&mut h);
    h.finish().max(1)
}

impl IssuedSessions {
    /// The server at `server`:`port` issued the session ID hashed `id`
    /// (`at`: when, on which connection, in which frame).
    pub fn note(&mut self, server: IpAddr, port: u16, id: u64, at: IdIssue) {
        let key = (server, port, id);
        if id == 0 || self.first_seen.contains_key(&key) {
            return;
        }
        if self.order.len() == KEPT {
            if let Some(oldest) = self.order.pop_front() {
                self.first_seen.remove(&oldest);
            }
        }
        self.first_seen.insert(key, at);
        self.order.push_back(key);
    }

    /// Where the server at `server`:`port` issued the session ID hashed
    /// `id`, if it did before `ts_ns`.
    pub fn issued_before(&self, server: IpAddr, port: u16, id: u64, ts_ns: i64) -> Option<IdIssue> {
        if id == 0 {
            return None;
        }
        self.first_seen
            .get(&(server, port, id))
            .copied()
            .filter(|&(t, _, _)| t < ts_ns)
    }

    pub fn is_empty(&self) -> bool {
        self.first_seen.is_empty() && self.held.is_empty()
    }

    /// A ClientHello of `by` offered a session back, and the server
    /// resumed it or (`refused`) did a full handshake.
    pub fn note_offer(&mut self, by: HeldBy, library: u64, refused: bool) {
        // (Bounded as the notes are: cleared whole past them.)
        if self.offered_by.len() >= KEPT || self.refused_by.len() >= KEPT {
            self.offered_by.clear();
            self.refused_by.clear();
            self.offering_clients.clear();
        }
        self.offered_by.insert((by.0, by.1, by.2, by.3), ());
        self.note_library_offer(by.0, library);
        if refused {
            self.refused_by.insert((by.1, by.2, by.3), ());
        }
    }

    /// `client`'s TLS library `library` offered a session back, to a
    /// server that may not have issued it in the capture.
    pub fn note_library_offer(&mut self, client: IpAddr, library: u64) {
        if self.offering_clients.len() >= KEPT {
            self.offering_clients.clear();
        }
        self.offering_clients.insert((client, library), ());
    }

    /// Whether `client`'s TLS library `library` was seen offering a
    /// session back to any server.
    pub fn offers_elsewhere(&self, client: IpAddr, library: u64) -> bool {
        self.offering_clients.contains_key(&(client, library))
    }

    /// Whether the client of `by` was seen offering a session back to
    /// that server and name (by any of its stacks), or the server refusing
    /// one offered.
    pub fn offers_seen(&self, by: HeldBy) -> bool {
        self.offered_by.contains_key(&(by.0, by.1, by.2, by.3))
            || self.refused_by.contains_key(&(by.1, by.2, by.3))
    }

    /// A server issued the client of `by` a session (`issue`): kept as
    /// that client's latest for that server and name.
    pub fn note_held(&mut self, by: HeldBy, issue: Issue) {
        if let Some(kept) = self.held.get_mut(&by) {
            *kept = [Some(issue), kept[0]];
            return;
        }
        if self.held_order.len() == KEPT {
            if let Some(oldest) = self.held_order.pop_front() {
                self.held.remove(&oldest);
            }
        }
        self.held.insert(by, [Some(issue), None]);
        self.held_order.push_back(by);
    }

    /// The session the server of `by` had issued its client before
    /// `ts_ns`, and no more than [`SESSION_KEPT_NS`] before.
    pub fn held_before(&self, by: HeldBy, ts_ns: i64) -> Option<Issue> {
        self.held
            .get(&by)?
            .iter()
            .flatten()
            .find(|i| i.at_ns < ts_ns)
            .filter(|i| ts_ns - i.at_ns <= SESSION_KEPT_NS)
            .copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_the_same_server_issued_before_is_an_offer_of_its_session() {
        let mut issued = IssuedSessions::default();
        let (server, other) = ("10.0.0.1".parse().unwrap(), "10.0.0.2".parse().unwrap());
        let id = id_hash(&[0xfa; 32]);
        issued.note(server, 443, id, (1_000, 3, 60));
        // Where: its time, connection and frame.
        assert_eq!(
            issued.issued_before(server, 443, id, 2_000),
            Some((1_000, 3, 60))
        );
        // Not before it was issued; not another server's, nor another
        // port's; not another ID (a TLS 1.3 client's random bytes).
        assert_eq!(issued.issued_before(server, 443, id, 500), None);
        assert_eq!(issued.issued_before(other, 443, id, 2_000), None);
        assert_eq!(issued.issued_before(server, 8443, id, 2_000), None);
        assert_eq!(
            issued.issued_before(server, 443, id_hash(&[7; 32]), 2_000),
            None
        );
        // An empty ID is none.
        assert_eq!(id_hash(&[]), 0);
        issued.note(server, 443, 0, (1_000, 3, 60));
        assert_eq!(issued.issued_before(server, 443, 0, 2_000), None);
    }

    #[test]
    fn a_session_issued_a_client_is_held_for_that_server_and_name_for_five_minutes() {
        let mut issued = IssuedSessions::default();
        let (client, server) = ("10.0.0.9".parse().unwrap(), "10.0.0.1".parse().unwrap());
        let other: IpAddr = "10.0.0.8".parse().unwrap();
        let by = (client, server, 443, 7, 9);
        let issue = Issue {
            at_ns: 1_000,
            stream: 1,
            frame: 31,
            ticket: true,
            certificate_requested: false,
        };
        issued.note_held(by, issue);
        assert!(!issued.is_empty());
        assert_eq!(issued.held_before(by, 2_000).map(|i| i.frame), Some(31));
        // Not before it was issued, nor past its lifetime; not another
        // client's, name's or port's.
        assert!(issued.held_before(by, 500).is_none());
        assert!(issued
            .held_before(by, 1_000 + SESSION_KEPT_NS + 1)
            .is_none());
        assert!(issued
            .held_before((other, server, 443, 7, 9), 2_000)
            .is_none());
        assert!(issued
            .held_before((client, server, 443, 8, 9), 2_000)
            .is_none());
        assert!(issued
            .held_before((client, server, 8443, 7, 9), 2_000)
            .is_none());
        // Another TLS stack on the client's host keeps its own sessions.
        assert!(issued
            .held_before((client, server, 443, 7, 10), 2_000)
            .is_none());
        // A stack seen offering a session back to that server and name,
        // or the server seen refusing one: offers seen.
        assert!(!issued.offers_seen(by));
        let mut other_stack = IssuedSessions::default();
        other_stack.note_offer((client, server, 443, 7, 10), 10, true);
        assert!(
            other_stack.offers_seen(by),
            "refused at that server and name"
        );
        let mut working = IssuedSessions::default();
        working.note_offer((client, server, 443, 7, 10), 10, false);
        assert!(working.offers_seen(by), "the client's other stack offered");
        assert!(working.offers_elsewhere(client, 10) && !working.offers_elsewhere(other, 10));
        // Only that stack: another library on the host keeps its own.
        assert!(!working.offers_elsewhere(client, 9));
        assert!(!working.offers_seen((other, server, 443, 7, 9)));
        assert!(!working.offers_seen((client, server, 443, 8, 9)));
        // The connection looking up issued one of its own after its
        // ClientHello: what came before that is still found.
        let own = Issue {
            at_ns: 3_000,
            frame: 53,
            ..issue
        };
        issued.note_held(by, own);
        assert_eq!(issued.held_before(by, 2_000).map(|i| i.frame), Some(31));
        assert_eq!(issued.held_before(by, 4_000).map(|i| i.frame), Some(53));
    }
}
