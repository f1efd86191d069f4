//! Packet decoding on arbitrary bytes, for every link type rttdoc reads.
#![no_main]
use libfuzzer_sys::fuzz_target;

const LINK_TYPES: [u32; 24] = [
    0, 1, 7, 9, 12, 14, 50, 101, 104, 108, 113, 129, 149, 178, 226, 228, 239, 242, 258, 276,
    281, 282, 284, 285,
];

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else { return };
    let link = LINK_TYPES[selector as usize % LINK_TYPES.len()];
    match rttdoc_wire::decode(link, rest) {
        rttdoc_wire::Decoded::Tcp(seg) => {
            assert!(seg.payload.len() <= seg.payload_len as usize);
            assert!(seg.options.sack_blocks().len() <= 4);
        }
        // A fragment alone completes nothing unless it is the whole datagram;
        // rebuilding and decoding must not panic either.
        rttdoc_wire::Decoded::Fragment(f) => {
            let mut defrag = rttdoc_wire::defrag::Defragmenter::default();
            if let Some(datagram) = defrag.push(&f, 0) {
                let _ = datagram.decode();
            }
        }
        // A DNS message's reading (dns_message.rs fuzzes it alone).
        rttdoc_wire::Decoded::Dns(d) => {
            if let Ok(m) = rttdoc_wire::dns::Message::new_checked(d.payload) {
                let _ = m.question().map(|q| q.name().to_lowercase());
                let _ = m.addresses().count();
            }
        }
        _ => {}
    }
});
