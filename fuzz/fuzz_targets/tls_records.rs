//! TLS record framing (split at an arbitrary point), handshake reassembly
//! and hello parsing on arbitrary bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rttdoc_wire::tls::{ClientHello, HandshakeReader, RecordStream, ServerHello};

fuzz_target!(|data: &[u8]| {
    let Some((&cut, rest)) = data.split_first() else { return };
    let cut = (cut as usize).min(rest.len());
    let mut records = RecordStream::<u8>::default();
    let mut handshake = HandshakeReader::default();
    let mut bodies = Vec::new();
    records.feed(&rest[..cut], 0, |r| bodies.extend(r.body.map(|b| b.to_vec())));
    records.skip(cut % 7, |r| bodies.extend(r.body.map(|b| b.to_vec())));
    records.feed(&rest[cut..], 1, |r| bodies.extend(r.body.map(|b| b.to_vec())));
    for body in bodies {
        handshake.feed(&body, |m| {
            let _ = ClientHello::parse(m.raw);
            let _ = ServerHello::parse(m.raw);
        });
    }
    let _ = ClientHello::parse(rest);
    let _ = ServerHello::parse(rest);
});
