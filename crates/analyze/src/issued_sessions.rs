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

#[derive(Debug, Default)]
pub(crate) struct IssuedSessions {
    /// When each was first issued (its ServerHello's capture time).
    first_seen: FxHashMap<Issued, i64>,
    order: VecDeque<Issued>,
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
    /// The server at `server`:`port` issued the session ID hashed `id` at
    /// `ts_ns`.
    pub fn note(&mut self, server: IpAddr, port: u16, id: u64, ts_ns: i64) {
        let key = (server, port, id);
        if id == 0 || self.first_seen.contains_key(&key) {
            return;
        }
        if self.order.len() == KEPT {
            if let Some(oldest) = self.order.pop_front() {
                self.first_seen.remove(&oldest);
            }
        }
        self.first_seen.insert(key, ts_ns);
        self.order.push_back(key);
    }

    /// Whether the server at `server`:`port` issued the session ID hashed
    /// `id` before `ts_ns`.
    pub fn before(&self, server: IpAddr, port: u16, id: u64, ts_ns: i64) -> bool {
        id != 0
            && self
                .first_seen
                .get(&(server, port, id))
                .is_some_and(|&t| t < ts_ns)
    }

    pub fn is_empty(&self) -> bool {
        self.first_seen.is_empty()
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
        issued.note(server, 443, id, 1_000);
        assert!(issued.before(server, 443, id, 2_000));
        // Not before it was issued; not another server's, nor another
        // port's; not another ID (a TLS 1.3 client's random bytes).
        assert!(!issued.before(server, 443, id, 500));
        assert!(!issued.before(other, 443, id, 2_000));
        assert!(!issued.before(server, 8443, id, 2_000));
        assert!(!issued.before(server, 443, id_hash(&[7; 32]), 2_000));
        // An empty ID is none.
        assert_eq!(id_hash(&[]), 0);
        issued.note(server, 443, 0, 1_000);
        assert!(!issued.before(server, 443, 0, 2_000));
    }
}
