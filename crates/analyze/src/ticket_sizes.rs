//! The sizes of the TLS 1.3 session tickets servers were seen sending:
//! a lone ticket after a resumed handshake is known by its size.
//!
//! A TLS 1.3 server sends its NewSessionTickets in application-data
//! records when the client's Finished comes, before any answer; without
//! keys a ticket is told from data by its size alone. OpenSSL (nginx,
//! HAProxy) sends two after a full handshake, back to back, of one size:
//! the pair shows them (tls.rs `TicketRun`). After a resumed handshake it
//! sends one, and a lone record may as well be the answer's first: taken
//! for data, the ticket was the "first byte" and the server's time to the
//! answer was hidden behind it (the lab's tls13-resumption-nginx: a
//! 282-byte record after each resumed handshake, the size of the full
//! handshakes' two). A ticket's size is the server's encoding of the
//! session, which is the same for the same software asking the same
//! server name: so a connection whose tickets showed their size notes it
//! here, by server, ClientHello shape and name, and a later connection of
//! that client software to that server takes a lone first record of that
//! size for a ticket.
//!
//! Servers that send one ticket every time (Go's crypto/tls, Java's,
//! Facebook's Fizz) show no pair. Their lone record comes first after
//! every handshake, at one size, whatever was asked, and the answer
//! follows it in records of other sizes (nDPI's instagram.pcap: a
//! 173-byte record on each resumed connection to one server, then
//! answers of 769, 768 and 769 bytes 130 to 170 ms later). So a
//! connection whose first server record after the handshake was held as
//! a possible ticket and then followed, in a later segment, by another
//! of a different size notes that size too, as a lone first record; a
//! later connection of the same software to the same server whose first
//! record has it, and is followed so, takes it for a ticket. (A ticket is
//! the TLS library's write as the handshake ends, the answer the
//! application's, later: an answer's records in one segment, its headers
//! and its body, were written together, and the lab's server without
//! tickets sends two such on every connection. An answer of one size to
//! every connection, a poll, is one record and never followed: it stays
//! data. One written in two parts of the same sizes each time loses only
//! the time between its first two.)
//!
//! Bounded: the newest [`KEPT`] notes.

use std::collections::VecDeque;

use rustc_hash::FxHashMap;

use crate::model::Endpoint;

/// Notes kept: a capture of more servers (or client programs) forgets the
/// oldest.
const KEPT: usize = 4096;

/// A server, and the hash of the ClientHello shape and server name that
/// asked it ([`crate::tls::TlsSession::ticket_size_key`]).
type Asked = (Endpoint, u64);

/// What a server was seen sending first after the handshake.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Sizes {
    /// The record length (header excluded) of its tickets, where a pair
    /// (or a key log) showed them.
    pub ticket: Option<u32>,
    /// The length of a lone first record that other records followed.
    pub lone_first: Option<u32>,
}

#[derive(Debug, Default)]
pub(crate) struct TicketSizes {
    sizes: FxHashMap<Asked, Sizes>,
    order: VecDeque<Asked>,
}

impl TicketSizes {
    /// `asked` was sent tickets in records of `len` bytes; the newest
    /// note stands (a server's new configuration).
    pub fn note_ticket(&mut self, asked: Asked, len: u32) {
        self.entry(asked).ticket = Some(len);
    }

    /// `asked` was sent a lone first record of `len` bytes, then others.
    pub fn note_lone_first(&mut self, asked: Asked, len: u32) {
        self.entry(asked).lone_first = Some(len);
    }

    fn entry(&mut self, asked: Asked) -> &mut Sizes {
        if !self.sizes.contains_key(&asked) {
            if self.order.len() == KEPT {
                if let Some(oldest) = self.order.pop_front() {
                    self.sizes.remove(&oldest);
                }
            }
            self.order.push_back(asked);
        }
        self.sizes.entry(asked).or_default()
    }

    /// What `asked` was seen sent.
    pub fn get(&self, asked: Asked) -> Sizes {
        self.sizes.get(&asked).copied().unwrap_or_default()
    }

    pub fn is_empty(&self) -> bool {
        self.sizes.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(port: u16) -> Endpoint {
        Endpoint {
            ip: std::net::IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, 1)),
            port,
        }
    }

    #[test]
    fn a_servers_ticket_size_is_known_per_client_software_and_name() {
        let mut sizes = TicketSizes::default();
        assert_eq!(sizes.get((server(443), 7)), Sizes::default());
        sizes.note_ticket((server(443), 7), 282);
        assert_eq!(sizes.get((server(443), 7)).ticket, Some(282));
        // Another ClientHello (or name) may be sent another size.
        assert_eq!(sizes.get((server(443), 8)), Sizes::default());
        assert_eq!(sizes.get((server(8443), 7)), Sizes::default());
        sizes.note_ticket((server(443), 7), 298);
        sizes.note_lone_first((server(443), 7), 173);
        let seen = sizes.get((server(443), 7));
        assert_eq!((seen.ticket, seen.lone_first), (Some(298), Some(173)));
        assert_eq!(sizes.order.len(), 1);
    }

    #[test]
    fn the_oldest_notes_are_forgotten_beyond_the_bound() {
        let mut sizes = TicketSizes::default();
        for shape in 0..=KEPT as u64 {
            sizes.note_ticket((server(443), shape), 282);
        }
        assert_eq!(sizes.get((server(443), 0)).ticket, None);
        assert_eq!(sizes.get((server(443), KEPT as u64)).ticket, Some(282));
        assert_eq!(sizes.sizes.len(), KEPT);
    }
}
