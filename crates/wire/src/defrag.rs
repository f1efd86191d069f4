//! IP fragment reassembly (IPv4 and the IPv6 fragment header), bounded.
//!
//! Fragments are held per datagram, keyed by [`FragmentKey`] (source,
//! destination, identification, protocol). A datagram is complete when the
//! last fragment (no "more fragments" flag) has fixed its length and the
//! fragments cover every byte before it; the fragment that completes it is
//! the frame Wireshark shows the reassembled packet on, so the caller
//! attributes the inner segment to that frame.
//!
//! Overlapping fragments: bytes are laid down in offset order and a byte
//! already placed is kept (Wireshark's rule, which keeps the first-placed
//! copy and flags the conflict). Linux drops such a datagram instead
//! (RFC 5722; IPv4 since 4.19); overlaps with different bytes are attacks,
//! not traffic rttdoc is asked to explain.
//!
//! Bounds: at most [`Limits::max_pending`] datagrams and
//! [`Limits::max_buffered`] bytes are held (the oldest datagram is evicted
//! to make room), at most [`Limits::max_fragments`] fragments per datagram,
//! and a datagram not completed within [`Limits::timeout_ns`] of capture
//! time after its first fragment is dropped (Linux's `ipfrag_time`, 30 s).
//! Wireshark has no timeout; a datagram spread over more than 30 s of
//! capture is not something a TCP connection survives anyway.

use std::collections::HashMap;

use crate::decode::{decode_datagram, Decoded, Fragment, FragmentKey};

/// The largest datagram payload either IP version can rebuild without a
/// jumbogram: a 16-bit length, less the 20-byte IPv4 header.
const MAX_DATAGRAM: usize = 65_535;

#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_pending: usize,
    pub max_buffered: usize,
    pub max_fragments: usize,
    pub timeout_ns: i64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_pending: 1024,
            max_buffered: 16 << 20,
            // 64 KiB in the smallest legal IPv4 fragments (8 bytes of
            // payload) would be 8192; real links (MTU >= 576) need < 150.
            max_fragments: 1024,
            timeout_ns: 30_000_000_000,
        }
    }
}

#[derive(Debug)]
struct Pending {
    first_ns: i64,
    depth: u8,
    /// (offset, bytes) in arrival order.
    pieces: Vec<(u32, Vec<u8>)>,
    /// Payload length, known once the last fragment has arrived.
    total: Option<u32>,
    bytes: usize,
    /// A fragment broke a limit: never complete.
    broken: bool,
}

/// A datagram rebuilt from its fragments. Decode it with
/// [`Datagram::decode`]; the segment borrows from it.
#[derive(Debug)]
pub struct Datagram {
    pub key: FragmentKey,
    depth: u8,
    pub payload: Vec<u8>,
}

impl Datagram {
    pub fn decode(&self) -> Decoded<'_> {
        decode_datagram(&self.key, self.depth, &self.payload)
    }
}

/// Counters of what happened to fragments.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DefragStats {
    pub reassembled: u64,
    /// Datagrams given up: timed out, evicted for room, cut by the snaplen
    /// or beyond a limit.
    pub dropped: u64,
}

#[derive(Debug, Default)]
pub struct Defragmenter {
    limits: Limits,
    pending: HashMap<FragmentKey, Pending>,
    buffered: usize,
    last_expiry_ns: Option<i64>,
    pub stats: DefragStats,
}

impl Defragmenter {
    pub fn new(limits: Limits) -> Self {
        Defragmenter {
            limits,
            ..Default::default()
        }
    }

    /// Datagrams waiting for fragments.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// Adds one fragment seen at capture time `now_ns`; returns the datagram
    /// if this fragment completed it.
    pub fn push(&mut self, fragment: &Fragment<'_>, now_ns: i64) -> Option<Datagram> {
        self.expire(now_ns);
        let len = fragment.data.len();
        let end = fragment.offset as usize + len;
        while self.buffered + len > self.limits.max_buffered {
            if !self.evict_oldest_except(&fragment.key) {
                break;
            }
        }
        if !self.pending.contains_key(&fragment.key) {
            while self.pending.len() >= self.limits.max_pending.max(1) {
                self.evict_oldest_except(&fragment.key);
            }
            self.pending.insert(
                fragment.key,
                Pending {
                    first_ns: now_ns,
                    depth: fragment.depth,
                    pieces: Vec::new(),
                    total: None,
                    bytes: 0,
                    broken: false,
                },
            );
        }
        let limits = self.limits;
        let entry = self.pending.get_mut(&fragment.key).expect("inserted above");
        if fragment.cut {
            // Wireshark leaves out a fragment the snaplen cut: the datagram
            // completes only if another copy brings those bytes whole.
            return None;
        }
        if end > MAX_DATAGRAM
            || entry.pieces.len() >= limits.max_fragments
            // Duplicates may resend bytes, but not more than twice over.
            || entry.bytes + len > 2 * MAX_DATAGRAM
        {
            entry.broken = true;
        }
        if !fragment.more && entry.total.is_none() {
            // The first last fragment fixes the length (Wireshark keeps it
            // too and flags any later, different "last" fragment).
            entry.total = Some(end as u32);
        }
        if entry.broken {
            // Keep the entry (so later fragments do not start a new one)
            // but drop its bytes.
            self.buffered -= entry.bytes;
            entry.bytes = 0;
            entry.pieces = Vec::new();
            return None;
        }
        entry.pieces.push((fragment.offset, fragment.data.to_vec()));
        entry.bytes += len;
        self.buffered += len;
        let total = entry.total? as usize;
        // Covered from 0 to `total` without a hole?
        let mut order: Vec<usize> = (0..entry.pieces.len()).collect();
        order.sort_by_key(|&i| entry.pieces[i].0); // stable: arrival order on ties
        let mut covered = 0usize;
        for &i in &order {
            let (offset, ref bytes) = entry.pieces[i];
            if offset as usize > covered {
                return None;
            }
            covered = covered.max(offset as usize + bytes.len());
        }
        if covered < total {
            return None;
        }
        let entry = self.pending.remove(&fragment.key).expect("present");
        self.buffered -= entry.bytes;
        let mut payload = Vec::with_capacity(total);
        for &i in &order {
            let (offset, ref bytes) = entry.pieces[i];
            // Bytes already placed are kept; only what lies beyond is added.
            let skip = payload.len().saturating_sub(offset as usize);
            let take = bytes.len().min(total.saturating_sub(offset as usize));
            if skip < take {
                payload.extend_from_slice(&bytes[skip..take]);
            }
        }
        self.stats.reassembled += 1;
        Some(Datagram {
            key: fragment.key,
            depth: entry.depth,
            payload,
        })
    }

    /// Drops the datagram waiting longest, other than `keep`; false when
    /// there is none.
    fn evict_oldest_except(&mut self, keep: &FragmentKey) -> bool {
        let Some(key) = self
            .pending
            .iter()
            .filter(|(k, _)| *k != keep)
            .min_by_key(|(_, p)| p.first_ns)
            .map(|(k, _)| *k)
        else {
            return false;
        };
        self.remove(&key);
        true
    }

    fn remove(&mut self, key: &FragmentKey) {
        if let Some(p) = self.pending.remove(key) {
            self.buffered -= p.bytes;
            self.stats.dropped += 1;
        }
    }

    /// Drops datagrams older than the timeout; runs at most once per second
    /// of capture time, so a capture full of fragments stays linear.
    fn expire(&mut self, now_ns: i64) {
        if self.pending.is_empty()
            || self
                .last_expiry_ns
                .is_some_and(|last| now_ns - last < 1_000_000_000)
        {
            return;
        }
        self.last_expiry_ns = Some(now_ns);
        let timeout = self.limits.timeout_ns;
        let old: Vec<FragmentKey> = self
            .pending
            .iter()
            .filter(|(_, p)| now_ns - p.first_ns > timeout)
            .map(|(k, _)| *k)
            .collect();
        for key in old {
            self.remove(&key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(id: u32) -> FragmentKey {
        FragmentKey {
            src: "10.0.0.1".parse().unwrap(),
            dst: "10.0.0.2".parse().unwrap(),
            id,
            protocol: 6,
        }
    }

    fn frag(id: u32, offset: u32, more: bool, data: &[u8]) -> Fragment<'_> {
        Fragment {
            key: key(id),
            offset,
            more,
            data,
            cut: false,
            depth: 0,
        }
    }

    #[test]
    fn out_of_order_fragments_complete_on_the_last_one_to_arrive() {
        let mut d = Defragmenter::default();
        assert!(d.push(&frag(1, 8, false, b"89abc"), 0).is_none());
        assert!(d.push(&frag(2, 0, true, b"other id"), 0).is_none());
        let done = d.push(&frag(1, 0, true, b"01234567"), 1).expect("complete");
        assert_eq!(done.payload, b"0123456789abc");
        assert_eq!(d.pending(), 1);
        assert_eq!(d.stats.reassembled, 1);
    }

    #[test]
    fn overlapping_bytes_keep_the_first_placed_copy() {
        let mut d = Defragmenter::default();
        assert!(d.push(&frag(1, 0, true, b"AAAAAAAAAAAAAAAA"), 0).is_none());
        let done = d.push(&frag(1, 8, false, b"BBBBBBBBBBBB"), 0).unwrap();
        assert_eq!(done.payload, b"AAAAAAAAAAAAAAAABBBB");
    }

    #[test]
    fn a_hole_keeps_the_datagram_pending_until_the_timeout() {
        let mut d = Defragmenter::default();
        assert!(d.push(&frag(1, 0, true, b"01234567"), 0).is_none());
        assert!(d.push(&frag(1, 16, false, b"x"), 0).is_none());
        assert_eq!(d.pending(), 1);
        // 31 s later another fragment arrives: the old datagram is dropped.
        assert!(d.push(&frag(9, 0, true, b"y"), 31_000_000_000).is_none());
        assert_eq!((d.pending(), d.stats.dropped), (1, 1));
    }

    #[test]
    fn a_snaplen_cut_fragment_is_left_out_until_a_whole_copy_comes() {
        let mut d = Defragmenter::default();
        let mut cut = frag(1, 0, true, b"0123");
        cut.cut = true;
        assert!(d.push(&cut, 0).is_none());
        assert!(d.push(&frag(1, 8, false, b"x"), 0).is_none());
        assert_eq!(d.stats.reassembled, 0);
        let done = d
            .push(&frag(1, 0, true, b"01234567"), 0)
            .expect("whole copy");
        assert_eq!(done.payload, b"01234567x");
    }

    #[test]
    fn pending_datagrams_and_bytes_are_bounded() {
        let mut d = Defragmenter::new(Limits {
            max_pending: 4,
            max_buffered: 100,
            ..Limits::default()
        });
        for id in 0..50 {
            d.push(&frag(id, 0, true, &[0u8; 30]), id as i64);
            assert!(d.pending() <= 4);
            assert!(d.buffered <= 100);
        }
        assert!(d.stats.dropped >= 46);
    }

    #[test]
    fn fragment_beyond_the_largest_datagram_breaks_it() {
        let mut d = Defragmenter::default();
        assert!(d.push(&frag(1, 65_528, false, &[0u8; 16]), 0).is_none());
        assert!(d.push(&frag(1, 0, true, &[0u8; 8]), 0).is_none());
        assert_eq!(d.stats.reassembled, 0);
    }
}
