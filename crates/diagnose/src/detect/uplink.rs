//! The queue on the client's uplink when it sent a request, by the
//! server's clock (`Facts::uplink_queue_ns`).
//!
//! Each of the server's echoes of the client's ACKs on this connection's
//! siblings (rttdoc-analyze's uplink.rs: data its stack clocked out the
//! moment an ACK came, a SYN-ACK) is a way out, from the ACK's capture
//! to the server's tick; less that sibling's quickest over at least
//! [`MIN_PER_SIBLING`] echoes (its clock's offset is its own: an address
//! may hide hosts, an older kernel offsets each connection), how much
//! longer than its quickest that way out was: what the client's uplink
//! queue (or the path's) held the ACK. A request sent just after such
//! ACKs met that queue: the second least over the siblings' echoes of
//! ACKs captured in the [`NEAR_NS`] before it (one echo the server's
//! stack sent late does not decide), less a tick (TSval is whole
//! ticks).

use super::Facts;
use crate::model::{Direction, Vantage};
use rttdoc_analyze::uplink::{NEAR_NS, RATES_HZ};

/// Echoes before a request it takes to tell its queue.
const MIN_NEAR: usize = 3;
/// Echoes a sibling must have for its quickest to be its empty uplink's.
const MIN_PER_SIBLING: u32 = 8;

impl Facts<'_> {
    /// How long the client's data segment `frame` waited at its uplink
    /// behind the client's own earlier packets, and for its own sending
    /// beyond a small packet's, by the uplink's rate as its servers' ACKs
    /// of its bursts showed it (rttdoc-analyze's uplink_load.rs); 0 where
    /// the capture is not the client's (elsewhere the segment was
    /// captured after, or in, that queue) or the rate is not known.
    pub fn uplink_wait_ns(&self, frame: u64) -> i64 {
        if self.report.vantage != Vantage::Client {
            return 0;
        }
        self.uplink_waits
            .binary_search_by_key(&frame, |&(f, _)| f)
            .map_or(0, |i| self.uplink_waits[i].1)
    }

    /// How long the client's uplink queue held a request the client sent
    /// at `at_ns` (capture time), at least, by its siblings' echoes and
    /// the server's clock (module docs); 0 where the capture is at the
    /// server (it sees requests arrive), where the server's clock is not
    /// read over this connection, or where the echoes are too few.
    pub fn uplink_queue_ns(&self, at_ns: i64) -> i64 {
        let Some(view) = self.uplink else {
            return 0;
        };
        if self.report.vantage == Vantage::Server {
            return 0;
        }
        let Some(clock) = self.any_clock(Direction::ServerToClient) else {
            return 0;
        };
        let tick = clock.tick_ns();
        let Some(rate) = RATES_HZ.iter().position(|hz| 1_000_000_000 / hz == tick) else {
            return 0;
        };
        let mut excesses: Vec<i64> = view
            .echoes
            .iter()
            .filter(|e| (0..=NEAR_NS).contains(&(at_ns - e.client_ns)))
            .filter_map(|e| {
                let sibling = view.sibling(e).filter(|s| s.echoes >= MIN_PER_SIBLING)?;
                Some(view.way_ns(e, rate) - sibling.quickest_ns[rate])
            })
            .collect();
        if excesses.len() < MIN_NEAR {
            return 0;
        }
        excesses.sort_unstable();
        (excesses[1] - tick).max(0)
    }
}
