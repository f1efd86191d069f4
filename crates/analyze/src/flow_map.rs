//! Flows as keys: the 4-tuple both directions share, and a map by flow
//! that keeps an IPv4 flow under 12 bytes instead of 40.

use std::net::IpAddr;

use rttdoc_wire::Segment;
use rustc_hash::FxHashMap;

/// The two endpoints, lower one first, so both directions find one entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct FlowKey {
    pub(crate) lo: (IpAddr, u16),
    pub(crate) hi: (IpAddr, u16),
}

impl FlowKey {
    pub(crate) fn of(seg: &Segment<'_>) -> FlowKey {
        let a = (seg.src, seg.src_port);
        let b = (seg.dst, seg.dst_port);
        if a <= b {
            FlowKey { lo: a, hi: b }
        } else {
            FlowKey { lo: b, hi: a }
        }
    }

    /// Both addresses, then both ports: one IPv4 flow, one 12-byte key.
    fn v4(&self) -> Option<[u32; 3]> {
        match (self.lo.0, self.hi.0) {
            (IpAddr::V4(lo), IpAddr::V4(hi)) => Some([
                u32::from(lo),
                u32::from(hi),
                (self.lo.1 as u32) << 16 | self.hi.1 as u32,
            ]),
            _ => None,
        }
    }
}

/// A map by flow, an IPv4 flow's entry under its 12-byte key instead of
/// the 40-byte [`FlowKey`]: a SYN flood keeps tens of thousands of
/// tombstones and lone SYNs, inserted at random places in tables of
/// megabytes (each a cache miss or two), so their size is most of their
/// cost.
#[derive(Debug)]
pub(crate) struct FlowMap<V> {
    pub(crate) v4: FxHashMap<[u32; 3], V>,
    pub(crate) other: FxHashMap<FlowKey, V>,
}

impl<V> Default for FlowMap<V> {
    fn default() -> Self {
        FlowMap {
            v4: FxHashMap::default(),
            other: FxHashMap::default(),
        }
    }
}

impl<V> FlowMap<V> {
    /// A map with room for `n` IPv4 flows from the start (its table never
    /// grows until they are there).
    pub(crate) fn with_v4_capacity(n: usize) -> Self {
        FlowMap {
            v4: FxHashMap::with_capacity_and_hasher(n, Default::default()),
            other: FxHashMap::default(),
        }
    }

    pub(crate) fn get_mut(&mut self, k: &FlowKey) -> Option<&mut V> {
        match k.v4() {
            Some(v4) => self.v4.get_mut(&v4),
            None => self.other.get_mut(k),
        }
    }

    pub(crate) fn contains_key(&self, k: &FlowKey) -> bool {
        match k.v4() {
            Some(v4) => self.v4.contains_key(&v4),
            None => self.other.contains_key(k),
        }
    }

    pub(crate) fn remove(&mut self, k: &FlowKey) -> Option<V> {
        match k.v4() {
            Some(v4) => self.v4.remove(&v4),
            None => self.other.remove(k),
        }
    }

    pub(crate) fn insert(&mut self, k: FlowKey, v: V) {
        match k.v4() {
            Some(v4) => self.v4.insert(v4, v),
            None => self.other.insert(k, v),
        };
    }

    pub(crate) fn len(&self) -> usize {
        self.v4.len() + self.other.len()
    }

    #[cfg(test)]
    pub(crate) fn values(&self) -> impl Iterator<Item = &V> + '_ {
        self.v4.values().chain(self.other.values())
    }

    pub(crate) fn retain(&mut self, keep: impl Fn(&V) -> bool) {
        self.v4.retain(|_, v| keep(v));
        self.other.retain(|_, v| keep(v));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Ipv4Addr, Ipv6Addr};

    #[test]
    fn an_ipv4_flow_is_kept_under_its_own_twelve_byte_key() {
        let v4 = |a: u8| IpAddr::V4(Ipv4Addr::new(10, 0, 0, a));
        let key = |a, p, b, q| FlowKey {
            lo: (v4(a), p),
            hi: (v4(b), q),
        };
        // Flows that differ in one address or one port, or with address
        // and port bytes that a careless packing would mix up.
        let flows = [
            key(1, 80, 2, 443),
            key(2, 80, 1, 443),
            key(1, 443, 2, 80),
            key(1, 80, 2, 444),
            key(1, 81, 2, 443),
            key(3, 80, 2, 443),
        ];
        let mut map = FlowMap::default();
        for (i, k) in flows.iter().enumerate() {
            map.insert(*k, i as i64);
        }
        let v6 = FlowKey {
            lo: (IpAddr::V6(Ipv6Addr::LOCALHOST), 80),
            hi: (v4(1), 443),
        };
        map.insert(v6, 99);
        assert_eq!(map.len(), flows.len() + 1);
        assert_eq!(map.other.len(), 1);
        assert!(map.contains_key(&v6));
        for (i, k) in flows.iter().enumerate() {
            assert_eq!(map.get_mut(k).copied(), Some(i as i64));
        }
        assert_eq!(map.remove(&flows[0]), Some(0));
        assert!(map.get_mut(&flows[0]).is_none());
        assert!(!map.contains_key(&flows[0]));
        assert!(map.get_mut(&flows[1]).is_some());
        map.retain(|&v| v >= 3);
        assert_eq!(map.len(), 4);
        let mut left: Vec<i64> = map.values().copied().collect();
        left.sort();
        assert_eq!(left, [3, 4, 5, 99]);
    }
}
