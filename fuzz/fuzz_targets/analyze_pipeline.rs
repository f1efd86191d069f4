//! The whole pass (read, decode, track, ledger) on arbitrary capture bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let reader = Box::new(std::io::Cursor::new(data.to_vec()));
    if let Ok(mut capture) = rttdoc_capture::Capture::from_reader("fuzz", reader, None) {
        let options = rttdoc_analyze::AnalyzeOptions { ladder_stream: Some(0), ..Default::default() };
        let mut reports = 0;
        rttdoc_diagnose::analyze_capture(&mut capture, options, &mut |_| reports += 1);
    }
});
