//! Key log lines, early-data decryption and the request parser behind
//! `early_data_unsafe`, on arbitrary bytes: the first byte splits the input
//! into key log text and records (2-byte lengths); the records are also fed
//! to the request parser as if they were plaintext.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rttdoc_diagnose::detect::request_in;
use rttdoc_analyze::keylog::KeyLog;

fuzz_target!(|data: &[u8]| {
    let Some((&cut, rest)) = data.split_first() else { return };
    let cut = (cut as usize * 4).min(rest.len());
    let (text, mut bytes) = rest.split_at(cut);
    let mut log = KeyLog::default();
    for line in String::from_utf8_lossy(text).lines() {
        log.add_line(line);
    }
    let mut records = Vec::new();
    while bytes.len() >= 2 {
        let n = (u16::from_be_bytes([bytes[0], bytes[1]]) as usize).min(bytes.len() - 2);
        records.push(bytes[2..2 + n].to_vec());
        bytes = &bytes[2 + n..];
    }
    let random: [u8; 32] = std::array::from_fn(|i| text.get(i).copied().unwrap_or(0));
    for suite in [None, Some(0x1301), Some(0x1302), Some(0x1303), Some(0x1305)] {
        if let Some(plain) = log.decrypt_early(&random, suite, &records) {
            let _ = request_in(&plain);
        }
    }
    for r in &records {
        let _ = request_in(r);
    }
    let _ = request_in(rest);
});
