//! The capture reader on arbitrary bytes (plain, or gzip, zstd or lz4
//! streams, which the malformed corpus seeds): never panics, always ends, numbers
//! frames upwards (custom blocks take numbers without yielding a frame),
//! never hands out more than a packet's worth of bytes, and collects no more
//! secrets than the input holds.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let reader = Box::new(std::io::Cursor::new(data.to_vec()));
    if let Ok(mut capture) = rttdoc_capture::Capture::from_reader("fuzz", reader, None) {
        let secrets = capture.secrets();
        let mut last = 0u64;
        let mut taken = 0usize;
        while let Ok(Some(frame)) = capture.next_frame() {
            assert!(frame.number > last);
            assert!(frame.data.len() <= 262_144);
            last = frame.number;
            taken += secrets.take_new_tls_key_log().len();
        }
        assert!(capture.frames() >= last);
        let log = secrets.tls_key_log();
        // Each block's lines plus at most the newline that ends them (in
        // uncompressed input: a few compressed bytes can stand for many).
        let plain = rttdoc_capture::Compression::sniff(data) == Ok(rttdoc_capture::Compression::None);
        assert!(!plain || log.len() <= 2 * data.len());
        assert!(taken <= log.len());
    }
});
