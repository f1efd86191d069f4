//! A UDP payload's QUIC packets on arbitrary bytes: every coalesced
//! packet's header read, none past the datagram, the iteration finite.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rttdoc_wire::quic::{could_be_quic, packets, MAX_CID_LEN};

fuzz_target!(|data: &[u8]| {
    let Some((&short, payload)) = data.split_first() else {
        return;
    };
    let _ = could_be_quic(payload);
    let mut taken = 0usize;
    let declared = payload.len() + usize::from(short) * 7;
    for p in packets(payload, usize::from(short % 21))
        .declared(declared)
        .take(payload.len() + 1)
    {
        let Ok(p) = p else { break };
        assert!(p.len > 0, "a packet takes bytes");
        taken += p.len;
        assert!(taken <= payload.len(), "packets past their datagram");
        if p.version != 0 {
            assert!(p.dcid.len() <= MAX_CID_LEN && p.scid.len() <= MAX_CID_LEN);
        }
    }
});
