//! The clients seen using TLS False Start (RFC 7918): what a resumed
//! session of theirs saved (`resumption` in rttdoc-diagnose).
//!
//! A TLS 1.2 client with False Start sends its request with its Finished,
//! after one round trip, in a full handshake as in an abbreviated one: a
//! resumption saves it the certificate and the signature, no round trip.
//! A resumed handshake cannot show whether its client would have false
//! started (its request goes with its Finished either way); a full one of
//! the same client can. The tracker notes each client that false started,
//! keyed by its address and the shape of its ClientHello (the software
//! that wrote it: a browser's and an app's on one phone differ), and a
//! resumed connection looks for a note made before it began (nDPI's
//! facebook.pcap: stream 0 false started, stream 1 resumed that session;
//! its round trip saved was none).
//!
//! Bounded: the newest [`KEPT`] notes.

use std::collections::VecDeque;
use std::net::IpAddr;

use rustc_hash::FxHashMap;

/// Notes kept: a server's capture with more clients forgets the oldest.
const KEPT: usize = 4096;

/// A client's address and its ClientHello's shape
/// ([`crate::tls::TlsSession::client_hello_shape`]).
type Client = (IpAddr, u64);

#[derive(Debug, Default)]
pub(crate) struct FalseStarters {
    /// When each was first seen false starting.
    first_seen: FxHashMap<Client, i64>,
    order: VecDeque<Client>,
}

impl FalseStarters {
    /// `client` false started at `ts_ns`.
    pub fn note(&mut self, client: Client, ts_ns: i64) {
        if self.first_seen.contains_key(&client) {
            return;
        }
        if self.order.len() == KEPT {
            if let Some(oldest) = self.order.pop_front() {
                self.first_seen.remove(&oldest);
            }
        }
        self.first_seen.insert(client, ts_ns);
        self.order.push_back(client);
    }

    /// Whether `client` was seen false starting before `ts_ns`.
    pub fn before(&self, client: Client, ts_ns: i64) -> bool {
        self.first_seen.get(&client).is_some_and(|&t| t < ts_ns)
    }

    pub fn is_empty(&self) -> bool {
        self.first_seen.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PHONE: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, 7));

    #[test]
    fn a_client_is_known_to_false_start_from_when_it_was_seen_to() {
        let mut seen = FalseStarters::default();
        assert!(!seen.before((PHONE, 1), 100));
        seen.note((PHONE, 1), 50);
        // A later note changes nothing.
        seen.note((PHONE, 1), 80);
        assert!(seen.before((PHONE, 1), 60));
        assert!(!seen.before((PHONE, 1), 50));
        // Another ClientHello's shape is another program.
        assert!(!seen.before((PHONE, 2), 100));
    }

    #[test]
    fn the_oldest_notes_are_forgotten_beyond_the_bound() {
        let mut seen = FalseStarters::default();
        for shape in 0..=KEPT as u64 {
            seen.note((PHONE, shape), 1);
        }
        assert!(!seen.before((PHONE, 0), 2));
        assert!(seen.before((PHONE, KEPT as u64), 2));
        assert_eq!(seen.first_seen.len(), KEPT);
    }
}
