//! A client's TCP clock rate, read off its SYNs over the capture.
//!
//! A SYN's TSval is its sender's clock (RFC 7323); a client's kernel
//! ticks it at one rate (Linux 1000 Hz since 4.13, 250 or 100 before;
//! older phones' 100 Hz), and, but for Linux's random offset per
//! connection since 4.10 (which the rate survives only between SYNs of
//! one connection, or when the offset is off), one count for all its
//! connections. Behind a relay that answers the SYN itself (a phone's VPN
//! capture app: `HandshakeReport::relay`), the capture's times are when
//! the app read each packet, and an app that stalls stamps a SYN sent a
//! second ago as new: the client's own clock spaces its SYNs as its
//! timer did (nDPI's webex.pcap: SYNs 100 ticks of a 100 Hz clock apart,
//! captured 65 ms apart).
//!
//! The tracker notes each client's first and newest SYN TSval with its
//! capture time; the rate is their ratio over at least [`SPAN_NS`] (a
//! relay's stalls of a second or two are then a few percent of it),
//! taken when within 10% of a standard rate. Bounded: [`CLIENTS`]
//! clients, the table emptied when full (a client then reads afresh).

use std::net::IpAddr;

use rustc_hash::FxHashMap;

/// Clients kept.
const CLIENTS: usize = 16_384;
/// The shortest span of SYNs a rate is read over.
const SPAN_NS: i64 = 20_000_000_000;
/// The rates a TCP clock ticks at.
const RATES_HZ: [u32; 3] = [1000, 250, 100];

#[derive(Debug, Default)]
pub(crate) struct ClientClocks {
    /// Per client: its first SYN's (capture time, TSval), and its newest.
    clients: FxHashMap<IpAddr, [(i64, u32); 2]>,
}

impl ClientClocks {
    /// A SYN from `client` at `ts_ns` carrying `tsval`.
    pub(crate) fn note(&mut self, client: IpAddr, ts_ns: i64, tsval: u32) {
        if self.clients.len() >= CLIENTS && !self.clients.contains_key(&client) {
            self.clients.clear();
        }
        let e = self.clients.entry(client).or_insert([(ts_ns, tsval); 2]);
        // A clock that went back (the host restarted: nDPI's
        // hpvirtgrp.pcap, a TSval of 293 M, then 45 k two and a half hours
        // later) starts the reading afresh from this SYN: the SYNs before
        // it tell nothing of the clock now.
        if tsval.wrapping_sub(e[1].1) >= 1 << 31 {
            e[0] = (ts_ns, tsval);
        }
        e[1] = (ts_ns, tsval);
    }

    /// The client's clock rate, when its SYNs so far span long enough and
    /// tick at a standard rate.
    pub(crate) fn hz(&self, client: IpAddr) -> Option<u32> {
        let [(t0, v0), (t1, v1)] = *self.clients.get(&client)?;
        let span = t1 - t0;
        let ticks = v1.wrapping_sub(v0);
        if span < SPAN_NS || ticks >= 1 << 31 {
            return None;
        }
        let rate = ticks as f64 / (span as f64 / 1e9);
        RATES_HZ
            .into_iter()
            .find(|&hz| (rate - hz as f64).abs() <= hz as f64 / 10.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: i64 = 1_000_000_000;

    #[test]
    fn a_rate_is_read_over_a_long_span_at_a_standard_tick() {
        let phone: IpAddr = "10.8.0.1".parse().unwrap();
        let mut c = ClientClocks::default();
        c.note(phone, 0, 5_000_000);
        // 10 s: too short to trust.
        c.note(phone, 10 * S, 5_001_000);
        assert_eq!(c.hz(phone), None);
        // 30 s at 100 Hz, its last SYN read 1 s late by a stalled relay.
        c.note(phone, 31 * S, 5_003_000);
        assert_eq!(c.hz(phone), Some(100));
        // A rate no clock ticks at.
        let odd: IpAddr = "10.8.0.2".parse().unwrap();
        c.note(odd, 0, 0);
        c.note(odd, 30 * S, 60 * 30);
        assert_eq!(c.hz(odd), None);
    }

    /// A clock that went back (its host restarted: nDPI's
    /// hpvirtgrp.pcap) is read afresh from there.
    #[test]
    fn a_clock_that_went_back_is_read_afresh() {
        let host: IpAddr = "192.168.2.100".parse().unwrap();
        let mut c = ClientClocks::default();
        c.note(host, 0, 293_104_425);
        // Restarted: 45 s of uptime, 9,561 s on.
        c.note(host, 9_561 * S, 45_084);
        c.note(host, 9_667 * S, 150_605);
        assert_eq!(c.hz(host), Some(1000));
    }
}
