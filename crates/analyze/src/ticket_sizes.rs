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

#[derive(Debug, Default)]
pub(crate) struct TicketSizes {
    /// The record length (header excluded) of the tickets each sent.
    record_len: FxHashMap<Asked, u32>,
    order: VecDeque<Asked>,
}

impl TicketSizes {
    /// `asked` was sent tickets in records of `len` bytes; the newest
    /// note stands (a server's new configuration).
    pub fn note(&mut self, asked: Asked, len: u32) {
        if self.record_len.insert(asked, len).is_some() {
            return;
        }
        if self.order.len() == KEPT {
            if let Some(oldest) = self.order.pop_front() {
                self.record_len.remove(&oldest);
            }
        }
        self.order.push_back(asked);
    }

    /// The record length of the tickets `asked` was seen sent.
    pub fn get(&self, asked: Asked) -> Option<u32> {
        self.record_len.get(&asked).copied()
    }

    pub fn is_empty(&self) -> bool {
        self.record_len.is_empty()
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
        assert_eq!(sizes.get((server(443), 7)), None);
        sizes.note((server(443), 7), 282);
        assert_eq!(sizes.get((server(443), 7)), Some(282));
        // Another ClientHello (or name) may be sent another size.
        assert_eq!(sizes.get((server(443), 8)), None);
        assert_eq!(sizes.get((server(8443), 7)), None);
        sizes.note((server(443), 7), 298);
        assert_eq!(sizes.get((server(443), 7)), Some(298));
        assert_eq!(sizes.order.len(), 1);
    }

    #[test]
    fn the_oldest_notes_are_forgotten_beyond_the_bound() {
        let mut sizes = TicketSizes::default();
        for shape in 0..=KEPT as u64 {
            sizes.note((server(443), shape), 282);
        }
        assert_eq!(sizes.get((server(443), 0)), None);
        assert_eq!(sizes.get((server(443), KEPT as u64)), Some(282));
        assert_eq!(sizes.record_len.len(), KEPT);
    }
}
