//! `--annotate` on arbitrary capture bytes: never a panic; what it writes
//! reads back with at most the frames it counted.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut notes = rttdoc_report::annotate::Annotations::new();
    for frame in [1, 2, 3, 5, 8] {
        notes.add(frame, "rttdoc: fuzz".into());
    }
    let mut out = Vec::new();
    if let Ok(stats) = rttdoc_report::annotate::annotate(std::io::Cursor::new(data), &mut out, &notes) {
        let reader = Box::new(std::io::Cursor::new(out));
        if let Ok(mut capture) = rttdoc_capture::Capture::from_reader("fuzz", reader, None) {
            let mut frames = 0;
            while let Ok(Some(_)) = capture.next_frame() {
                frames += 1;
            }
            assert!(frames <= stats.frames, "more frames read back than copied");
        }
    }
});
