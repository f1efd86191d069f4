//! The capture reader on arbitrary bytes: never panics, always ends.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let reader = Box::new(std::io::Cursor::new(data.to_vec()));
    if let Ok(mut capture) = rttdoc_capture::Capture::from_reader("fuzz", reader, None) {
        let mut n = 0u64;
        while let Ok(Some(frame)) = capture.next_frame() {
            assert_eq!(frame.number, n + 1);
            n += 1;
        }
    }
});
