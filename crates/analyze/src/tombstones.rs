//! What stays of finished connections: a tombstone per 4-tuple, so that a
//! late packet keeps its stream (as tshark keeps it) and a SYN with a new
//! sequence number is told for port reuse.
//!
//! A flood (a SYN flood, a scan, a churn of thousands of connections a
//! second) finishes flows faster than their tombstones age out, so their
//! number is bounded: the tombstones are kept in two generations of at
//! most [`Tombstones::generation_cap`] each, and when the younger is full
//! the older is forgotten whole and the younger takes its place. That
//! forgets the older half, as a sort by age would, in O(1) a tombstone;
//! and a generation is made with the room for its cap from the start, so
//! its hash table never doubles: the memory of a flood's tombstones is
//! that of the first quarter of the flood, not twice it.

use crate::flow_map::{FlowKey, FlowMap};

/// What remains of a finished connection for
/// [`crate::track::TOMBSTONE_NS`]: enough to put its late packets on its
/// stream, and to tell port reuse (a SYN with a new sequence number) from
/// a late retransmission.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tombstone {
    /// Progress clock at its last packet.
    pub(crate) last_progress_ns: i64,
    /// Base sequence number of each side (the lower endpoint of the flow
    /// key first), when that side had sent anything.
    pub(crate) base_seq: [u32; 2],
    pub(crate) seen: [bool; 2],
}

/// The share of a hash table's buckets it fills before it doubles
/// (hashbrown's load factor, 7/8): a generation's cap is that share of a
/// power of two, so a full generation fills its table exactly.
const HASH_TABLE_FILL: (usize, usize) = (7, 8);

/// Finished connections' tombstones, in two generations (module doc).
#[derive(Debug)]
pub(crate) struct Tombstones {
    young: FlowMap<Tombstone>,
    old: FlowMap<Tombstone>,
    generation_cap: usize,
}

impl Tombstones {
    /// Room for about `most` tombstones: two generations of half that,
    /// each rounded to what a power-of-two hash table holds.
    pub(crate) fn new(most: usize) -> Tombstones {
        let buckets = (most / 2).max(1).next_power_of_two();
        Tombstones {
            young: FlowMap::default(),
            old: FlowMap::default(),
            generation_cap: (buckets * HASH_TABLE_FILL.0 / HASH_TABLE_FILL.1).max(1),
        }
    }

    /// The most tombstones a generation holds.
    #[cfg(test)]
    pub(crate) fn generation_cap(&self) -> usize {
        self.generation_cap
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.young.len() + self.old.len()
    }

    pub(crate) fn contains_key(&self, key: &FlowKey) -> bool {
        self.young.contains_key(key) || self.old.contains_key(key)
    }

    /// The flow's tombstone; one found in the older generation is moved
    /// to the younger (it has had a packet: it is as young as that).
    pub(crate) fn get_mut(&mut self, key: &FlowKey) -> Option<&mut Tombstone> {
        if !self.young.contains_key(key) {
            let t = self.old.remove(key)?;
            self.insert(*key, t);
        }
        self.young.get_mut(key)
    }

    pub(crate) fn remove(&mut self, key: &FlowKey) -> Option<Tombstone> {
        self.young.remove(key).or_else(|| self.old.remove(key))
    }

    /// Leaves a flow's tombstone, forgetting the older generation first
    /// when the younger is full.
    pub(crate) fn insert(&mut self, key: FlowKey, tombstone: Tombstone) {
        self.old.remove(&key);
        if self.young.len() >= self.generation_cap && !self.young.contains_key(&key) {
            // Drop the old generation before the new one is made, so the
            // two tables alive at once are never more than two.
            self.old = FlowMap::default();
            self.old = std::mem::replace(
                &mut self.young,
                FlowMap::with_v4_capacity(self.generation_cap),
            );
        }
        self.young.insert(key, tombstone);
    }

    /// Keeps only the tombstones `keep` says.
    pub(crate) fn retain(&mut self, keep: impl Fn(&Tombstone) -> bool) {
        self.young.retain(&keep);
        self.old.retain(&keep);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{IpAddr, Ipv4Addr};

    fn key(n: u32) -> FlowKey {
        FlowKey {
            lo: (IpAddr::V4(Ipv4Addr::from(n)), 1000),
            hi: (IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)), 443),
        }
    }

    fn stone(at: i64) -> Tombstone {
        Tombstone {
            last_progress_ns: at,
            base_seq: [1, 0],
            seen: [true, false],
        }
    }

    /// Room for 64 tombstones, `count` of them buried (flow `n` at time
    /// `n`), and a generation's cap.
    fn buried(count: impl Fn(u32) -> u32) -> (Tombstones, u32) {
        let mut t = Tombstones::new(64);
        let cap = t.generation_cap() as u32;
        for n in 0..count(cap) {
            t.insert(key(n), stone(n as i64));
        }
        (t, cap)
    }

    /// A generation holds what a power-of-two table holds before it
    /// doubles: half of 64 tombstones is 32 buckets, 28 of them filled.
    #[test]
    fn a_generation_fills_its_table_and_no_more() {
        assert_eq!(Tombstones::new(64).generation_cap(), 28);
        assert_eq!(Tombstones::new(65_536).generation_cap(), 28_672);
        assert_eq!(Tombstones::new(1).generation_cap(), 1);
        assert_eq!(Tombstones::new(0).generation_cap(), 1);
    }

    /// A flood forgets its oldest tombstones first, a generation at a
    /// time, and never holds more than two generations.
    #[test]
    fn a_flood_forgets_its_oldest_tombstones_first() {
        let mut t = Tombstones::new(64);
        let cap = t.generation_cap() as u32;
        for n in 0..cap * 3 + 5 {
            t.insert(key(n), stone(n as i64));
            assert!(t.len() <= 2 * cap as usize);
        }
        // The first two generations are forgotten; the third is old now.
        assert!(!t.contains_key(&key(0)));
        assert!(!t.contains_key(&key(2 * cap - 1)));
        assert!(t.contains_key(&key(2 * cap)));
        assert!(t.contains_key(&key(3 * cap + 4)));
        assert_eq!(t.len(), cap as usize + 5);
    }

    /// A late packet makes its tombstone young again: the next rotation
    /// does not forget it.
    #[test]
    fn a_tombstone_with_a_late_packet_is_kept_as_young() {
        let (mut t, cap) = buried(|cap| cap + 1);
        // key(0) is in the old generation now.
        t.get_mut(&key(0)).unwrap().last_progress_ns = 1_000;
        for n in cap + 1..2 * cap + 1 {
            t.insert(key(n), stone(n as i64));
        }
        assert!(!t.contains_key(&key(1)), "its generation was forgotten");
        assert_eq!(t.get_mut(&key(0)).unwrap().last_progress_ns, 1_000);
    }

    /// A flow buried again (a second connection on its 4-tuple ended) has
    /// one tombstone, the newer.
    #[test]
    fn a_flow_has_one_tombstone() {
        let (mut t, cap) = buried(|cap| cap + 1);
        t.insert(key(0), stone(-1));
        assert_eq!(t.len(), cap as usize + 1);
        assert_eq!(t.remove(&key(0)).unwrap().last_progress_ns, -1);
        assert!(t.remove(&key(0)).is_none());
    }

    /// Aging keeps only what `keep` says, in both generations.
    #[test]
    fn aging_reaches_both_generations() {
        let (mut t, cap) = buried(|cap| cap + 10);
        t.retain(|s| s.last_progress_ns % 2 == 0);
        assert!(t.contains_key(&key(0)));
        assert!(!t.contains_key(&key(1)));
        assert!(t.contains_key(&key(cap + 8)));
        assert!(!t.contains_key(&key(cap + 9)));
        assert_eq!(t.len(), (cap as usize + 10).div_ceil(2));
    }
}
