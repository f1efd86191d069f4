//! HPACK header blocks on arbitrary bytes (rttdoc_wire::hpack): the
//! input cut into blocks at each 0xff 0x00 pair, decoded in order by one
//! decoder (its table carried from block to block), each decoded or
//! refused, never a panic; a block refused for being cut is one the walk
//! says is not whole.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rttdoc_wire::hpack::{whole, Decoder};

fuzz_target!(|data: &[u8]| {
    let mut decoder = Decoder::new(4096);
    let mut fields = Vec::new();
    let mut rest = data;
    while !rest.is_empty() {
        let cut = rest
            .windows(2)
            .position(|w| w == [0xff, 0x00])
            .unwrap_or(rest.len());
        let mut block = rest[..cut].to_vec();
        rest = rest.get(cut + 2..).unwrap_or_default();
        let is_whole = whole(&block);
        if decoder.decode(&mut block, &mut fields).is_ok() {
            assert!(is_whole);
        }
    }
});
