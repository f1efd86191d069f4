//! A client's TCP clock rate, read off its SYNs and its data over the
//! capture.
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
//! The tracker notes each client's SYN TSvals with their capture times,
//! and a connection's data TSvals at most once a second; the readings of
//! one count (a base: TSvals that one clock, ticking no faster than
//! 1 kHz, can have given at those times) keep their first and newest, and
//! a base's rate is their ratio over at least [`SPAN_NS`] (a relay's
//! stalls of a second or two are then a few percent of it), taken when
//! within 10% of a standard rate. A client with bases apart (a phone
//! whose connections carry two counts: nDPI's KakaoTalk_talk.pcap, 73xxxx
//! and 18xxxx, both 100 Hz; a host that restarted) is read per base, a
//! connection by the base its SYN fits. Bounded: [`BASES`] bases per
//! client (the least lately read replaced), [`CLIENTS`] clients, the
//! table emptied when full (a client then reads afresh).

use std::net::IpAddr;

use rustc_hash::FxHashMap;

/// Clients kept.
const CLIENTS: usize = 16_384;
/// Counts (bases) kept per client.
const BASES: usize = 3;
/// The shortest span of readings a rate is read over.
const SPAN_NS: i64 = 20_000_000_000;
/// The rates a TCP clock ticks at.
const RATES_HZ: [u32; 3] = [1000, 250, 100];
/// How far apart in capture time two readings of one clock may stray from
/// what 1 kHz allows (a relay's stall, readings noted out of order).
const SLACK_NS: i64 = 2_000_000_000;

/// One count's first and newest reading: (capture time, TSval).
type Base = [(i64, u32); 2];

#[derive(Debug, Default)]
pub(crate) struct ClientClocks {
    clients: FxHashMap<IpAddr, [Option<Base>; BASES]>,
}

/// Whether a reading `tsval` at `ts_ns` can be of the count `base`: its
/// distance in ticks from the newest no more than a 1 kHz clock (and 10%)
/// gives over the time between, and the slack.
fn fits(base: &Base, ts_ns: i64, tsval: u32) -> bool {
    let (t, v) = base[1];
    let ticks = i64::from(tsval.wrapping_sub(v) as i32).abs();
    let apart = (ts_ns - t).abs() + SLACK_NS;
    ticks <= apart / 909_091
}

impl ClientClocks {
    /// A reading of `client`'s clock: `tsval` captured at `ts_ns`.
    pub(crate) fn note(&mut self, client: IpAddr, ts_ns: i64, tsval: u32) {
        if self.clients.len() >= CLIENTS && !self.clients.contains_key(&client) {
            self.clients.clear();
        }
        let bases = self.clients.entry(client).or_default();
        if let Some(b) = bases.iter_mut().flatten().find(|b| fits(b, ts_ns, tsval)) {
            if ts_ns >= b[1].0 {
                b[1] = (ts_ns, tsval);
            }
            return;
        }
        // A count of its own: in a free slot, else over the least lately
        // read.
        let slot = bases
            .iter()
            .position(Option::is_none)
            .or_else(|| (0..BASES).min_by_key(|&i| bases[i].map_or(i64::MIN, |b| b[1].0)))
            .unwrap_or(0);
        bases[slot] = Some([(ts_ns, tsval); 2]);
    }

    /// The client's clock rate, for the count its reading `syn` (capture
    /// time, TSval) is of, else its latest read, when that count's
    /// readings so far span long enough and tick at a standard rate.
    pub(crate) fn hz(&self, client: IpAddr, syn: Option<(i64, u32)>) -> Option<u32> {
        let bases = self.clients.get(&client)?;
        let base = match syn {
            Some((t, v)) => bases.iter().flatten().find(|b| fits(b, t, v)),
            None => bases.iter().flatten().max_by_key(|b| b[1].0),
        }?;
        let [(t0, v0), (t1, v1)] = *base;
        let span = t1 - t0;
        let ticks = v1.wrapping_sub(v0);
        if span < SPAN_NS || ticks >= 1 << 31 {
            return None;
        }
        standard_rate(ticks as f64 / (span as f64 / 1e9))
    }
}

/// The standard rate (`RATES_HZ`) within 10% of `rate` (ticks a second),
/// if one is.
fn standard_rate(rate: f64) -> Option<u32> {
    RATES_HZ
        .into_iter()
        .find(|&hz| (rate - hz as f64).abs() <= hz as f64 / 10.0)
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
        assert_eq!(c.hz(phone, None), None);
        // 30 s at 100 Hz, its last SYN read 1 s late by a stalled relay.
        c.note(phone, 31 * S, 5_003_000);
        assert_eq!(c.hz(phone, None), Some(100));
        // A rate no clock ticks at.
        let odd: IpAddr = "10.8.0.2".parse().unwrap();
        c.note(odd, 0, 0);
        c.note(odd, 30 * S, 60 * 30);
        assert_eq!(c.hz(odd, None), None);
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
        assert_eq!(c.hz(host, None), Some(1000));
    }

    /// A phone whose connections carry two counts (nDPI's
    /// KakaoTalk_talk.pcap: 73xxxx and 18xxxx, both 100 Hz) is read per
    /// count, interleaved; a connection's SYN picks its count.
    #[test]
    fn two_counts_of_one_client_are_read_apart() {
        let phone: IpAddr = "10.24.82.188".parse().unwrap();
        let mut c = ClientClocks::default();
        for s in 0..7 {
            let t = s * 10 * S;
            c.note(phone, t, 734_600 + (s as u32) * 1_000);
            c.note(phone, t + S, 180_000 + (s as u32) * 1_000 + 100);
        }
        assert_eq!(c.hz(phone, Some((19 * S, 736_547))), Some(100));
        assert_eq!(c.hz(phone, Some((24 * S, 182_079))), Some(100));
        // A reading of neither count.
        assert_eq!(c.hz(phone, Some((24 * S, 9_000_000))), None);
    }
}
