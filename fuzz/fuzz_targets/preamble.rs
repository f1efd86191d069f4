//! The plaintext-preamble judge (proxies, STARTTLS, database SSL requests)
//! on arbitrary client and server streams, whole and in every prefix a
//! capture could deliver first.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rttdoc_analyze::preamble::{client_hello_at, judge, Verdict};

fuzz_target!(|data: &[u8]| {
    let Some((&split, rest)) = data.split_first() else {
        return;
    };
    let at = (split as usize * rest.len() / 255).min(rest.len());
    let (client, server) = rest.split_at(at);
    for server_first in [false, true] {
        for at_end in [false, true] {
            if let Verdict::Tls(start) = judge(client, server, server_first, at_end) {
                assert_eq!(client_hello_at(client, start.client_offset), Some(true));
                assert!(start.server_offset <= server.len());
            }
        }
        for n in (0..client.len()).step_by(7) {
            let _ = judge(&client[..n], server, server_first, false);
        }
    }
});
