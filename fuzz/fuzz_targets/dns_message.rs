//! A DNS message's reading on arbitrary bytes: the header, the first
//! question's name (compression pointers followed only backwards, a
//! bounded number of times) and the answers' addresses.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rttdoc_wire::dns::{Message, MAX_NAME_LEN};

fuzz_target!(|data: &[u8]| {
    let Ok(m) = Message::new_checked(data) else {
        assert!(data.len() < 12);
        return;
    };
    let _ = (m.id(), m.is_response(), m.rcode(), m.truncated(), m.opcode());
    if let Some(q) = m.question() {
        if let Some(name) = q.name().to_lowercase() {
            assert!(name.len() <= MAX_NAME_LEN);
        }
    }
    // Every answer record takes at least 11 bytes: no more addresses
    // than the message could hold.
    assert!(m.addresses().count() <= data.len() / 11);
});
