//! HPACK header blocks (RFC 7541): decoded by httlib-hpack once every
//! representation in the block is known whole.
//!
//! The decoder reads a representation's integers and string lengths by
//! index, past the end of a block cut inside one (a 5-bit prefix of all
//! ones and nothing after it; a literal with its name index and no value):
//! a capture's damaged or truncated block, or a server's bad one, would
//! panic it. [`whole`] walks the block's structure first (section 6: each
//! representation's first byte says which integers and strings follow)
//! and the block is decoded only when all of them end inside it. What
//! the walk lets through the decoder refuses with an error of its own
//! (an index beyond the tables, a Huffman code that is no symbol, a
//! table size above the agreed one).

/// A header field: its name, its value, httlib's flags (indexed, never
/// indexed).
pub type Field = (Vec<u8>, Vec<u8>, u8);

/// One side's header blocks decoded in order: HPACK's dynamic table kept
/// in step with the sender's.
#[derive(Debug)]
pub struct Decoder(httlib_hpack::Decoder<'static>);

/// A block that cannot be decoded: cut inside a representation, or one
/// the decoder refuses. The table is out of step from then on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Undecodable;

impl Decoder {
    /// A decoder whose dynamic table may grow to `max_table` bytes (the
    /// SETTINGS_HEADER_TABLE_SIZE its peer was told).
    pub fn new(max_table: u32) -> Decoder {
        Decoder(httlib_hpack::Decoder::with_dynamic_size(max_table))
    }

    /// Decodes the whole header block `block` (consumed) into `fields`
    /// (cleared first).
    pub fn decode(
        &mut self,
        block: &mut Vec<u8>,
        fields: &mut Vec<Field>,
    ) -> Result<(), Undecodable> {
        fields.clear();
        if !whole(block) {
            return Err(Undecodable);
        }
        self.0
            .decode(block, fields)
            .map(|_| ())
            .map_err(|_| Undecodable)
    }
}

/// Whether every representation in `block` ends inside it (RFC 7541
/// section 6): an indexed field (1, a 7-bit prefix integer), a literal
/// with incremental indexing (01, 6-bit), a dynamic table size update
/// (001, 5-bit), a literal without indexing or never indexed (0000 and
/// 0001, 4-bit); a literal's name index 0 is followed by a name string,
/// and every literal by a value string (section 5.2: a 7-bit prefix
/// length, then that many bytes).
pub fn whole(block: &[u8]) -> bool {
    let mut at = 0;
    while at < block.len() {
        let first = block[at];
        let (prefix, strings) = match first {
            b if b & 0x80 != 0 => (7, false),
            b if b & 0x40 != 0 => (6, true),
            b if b & 0x20 != 0 => (5, false),
            _ => (4, true),
        };
        let Some((index, next)) = integer(block, at, prefix) else {
            return false;
        };
        at = next;
        if strings {
            let count = if index == 0 { 2 } else { 1 };
            for _ in 0..count {
                let Some(next) = string(block, at) else {
                    return false;
                };
                at = next;
            }
        }
    }
    true
}

/// The integer whose prefix of `prefix` bits is in `block[at]` (section
/// 5.1), and where the bytes after it begin: `None` when it is cut, or
/// longer than the decoder reads (5 bytes).
fn integer(block: &[u8], at: usize, prefix: u8) -> Option<(u32, usize)> {
    let mask = (1u16 << prefix) as u32 - 1;
    let first = u32::from(*block.get(at)?) & mask;
    if first < mask {
        return Some((first, at + 1));
    }
    let mut value = first;
    for (i, &b) in block.get(at + 1..)?.iter().enumerate().take(4) {
        value += u32::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Some((value, at + 2 + i));
        }
    }
    None
}

/// Where the bytes after the string literal at `block[at]` begin (its
/// length, then that many bytes): `None` when it is cut.
fn string(block: &[u8], at: usize) -> Option<usize> {
    let (len, data) = integer(block, at, 7)?;
    let end = data.checked_add(len as usize)?;
    (end <= block.len()).then_some(end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// RFC 7541 C.3.1's first request: indexed fields and a literal with
    /// incremental indexing of an indexed name.
    const C31: &[u8] = &[
        0x82, 0x86, 0x84, 0x41, 0x0f, b'w', b'w', b'w', b'.', b'e', b'x', b'a', b'm', b'p', b'l',
        b'e', b'.', b'c', b'o', b'm',
    ];

    fn decoded(block: &[u8]) -> Result<Vec<Field>, Undecodable> {
        let mut fields = Vec::new();
        Decoder::new(4096).decode(&mut block.to_vec(), &mut fields)?;
        Ok(fields)
    }

    #[test]
    fn a_whole_block_decodes() {
        assert!(whole(C31));
        let fields = decoded(C31).expect("decodes");
        let authority = fields.iter().find(|f| f.0 == b":authority").expect("named");
        assert_eq!(authority.1, b"www.example.com");
        // (RFC 7541 C.1.2: 1337 in a 5-bit prefix, three bytes.)
        assert_eq!(integer(&[0x1f, 0x9a, 0x0a], 0, 5), Some((1337, 3)));
        assert!(whole(&[0x3f, 0xe1, 0x1f]), "a table size update of 4096");
    }

    #[test]
    fn a_block_cut_inside_a_representation_is_undecodable_not_a_panic() {
        for cut in [
            &[0xff][..],                           // an index's continuation missing
            &[0xff, 0x80],                         // ... and cut again
            &[0x40],                               // a literal: its name and value missing
            &[0x40, 0x01, b'a'],                   // its value missing
            &[0x41, 0x05, b'a'],                   // a value shorter than its length
            &[0x0f],                               // a 4-bit name index cut
            &[0x3f],                               // a table size update cut
            &[0x82, 0x41, 0x7f],                   // a string length cut
            &[0xff, 0xff, 0xff, 0xff, 0xff, 0x01], // longer than 5 bytes
        ] {
            assert!(!whole(cut), "{cut:02x?}");
            assert_eq!(decoded(cut), Err(Undecodable), "{cut:02x?}");
        }
        // Each prefix of a whole block but the empty one and itself.
        for n in 1..C31.len() {
            let cut = &C31[..n];
            assert_eq!(whole(cut), n <= 3, "{n}: indexed fields alone");
        }
    }

    proptest! {
        #[test]
        fn any_bytes_decode_or_are_refused_without_a_panic(
            blocks in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..40), 1..6)
        ) {
            let mut decoder = Decoder::new(4096);
            let mut fields = Vec::new();
            for mut block in blocks {
                let _ = decoder.decode(&mut block, &mut fields);
            }
        }
    }
}
