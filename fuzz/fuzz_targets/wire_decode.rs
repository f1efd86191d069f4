//! Packet decoding on arbitrary bytes, for every link type rttdoc reads.
#![no_main]
use libfuzzer_sys::fuzz_target;

const LINK_TYPES: [u32; 9] = [0, 1, 12, 14, 101, 108, 113, 228, 276];

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else { return };
    let link = LINK_TYPES[selector as usize % LINK_TYPES.len()];
    if let rttdoc_wire::Decoded::Tcp(seg) = rttdoc_wire::decode(link, rest) {
        assert!(seg.payload.len() <= seg.payload_len as usize);
        assert!(seg.options.sack_blocks().len() <= 4);
    }
});
