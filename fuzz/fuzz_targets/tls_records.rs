//! TLS record framing (split at an arbitrary point, bytes missing after
//! it as a snap length leaves them), handshake reassembly, hello parsing and
//! the headers of cut records, a ServerKeyExchange's group and signer, a
//! Certificate message's chain (its first certificate's DER), on
//! arbitrary bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rttdoc_wire::tls::{
    CertificateChain, ClientHello, CutHandshake, HandshakeReader, RecordStream, ServerHello,
    ServerKeyExchange,
};

fuzz_target!(|data: &[u8]| {
    let Some((&cut, rest)) = data.split_first() else { return };
    let cut = (cut as usize).min(rest.len());
    let mut records = RecordStream::<u8>::default();
    let mut handshake = HandshakeReader::default();
    let mut bodies = Vec::new();
    let mut on_record = |r: rttdoc_wire::tls::Record<'_, u8>| {
        let _ = CutHandshake::read(r.cut_body, r.length);
        bodies.extend(r.body.map(|b| b.to_vec()));
    };
    let mut unframed = records.feed(&rest[..cut], 0, &mut on_record);
    unframed += records.skip(cut % 7, &mut on_record);
    unframed += records.feed(&rest[cut..], 1, &mut on_record);
    assert!(unframed <= rest.len() + cut % 7);
    for body in bodies {
        handshake.feed(&body, |m| {
            let _ = ClientHello::parse(m.raw);
            let _ = ServerHello::parse(m.raw);
            let _ = CertificateChain::parse(m.raw);
            // ECDHE-RSA and DHE-RSA suites, TLS 1.2 and 1.0.
            for (version, cipher) in [(0x0303, 0xc02f), (0x0301, 0x0033)] {
                let _ = ServerKeyExchange::parse(m.raw, version, cipher);
            }
        });
    }
    let _ = ClientHello::parse(rest);
    let _ = ServerHello::parse(rest);
    let _ = CertificateChain::parse(rest);
    let _ = ServerKeyExchange::parse(rest, 0x0303, 0xc02b);
});
