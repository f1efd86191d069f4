//! The PROXY protocol header reader on arbitrary first bytes of a
//! client's stream, whole and in every prefix a capture could deliver
//! first: a header ends within what it read, and a prefix of a header is
//! never read as a different one.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rttdoc_wire::proxy_protocol::{parse, Parsed};

fuzz_target!(|data: &[u8]| {
    let whole = parse(data);
    if let Parsed::Header(h) = whole {
        assert!(h.len <= data.len());
        assert!(h.len > 0);
        // The header alone reads the same.
        assert_eq!(parse(&data[..h.len]), whole);
        for n in 1..h.len {
            assert_ne!(parse(&data[..n]), Parsed::NotProxy, "prefix {n}");
        }
    }
});
