//! HTTP/2 inside TLS, read by record sizes (analyze's tls.rs,
//! `http2_record`): the server's connection preface answers nothing, an
//! empty frame never begins an answer, and a client's SETTINGS
//! acknowledgment is no part of a request. Captures: a browser's
//! (PcapPlusPlus' tls2.pcap) and curl with nginx over TLS 1.3 and 1.2
//! (scripts/http2-captures.sh: a backend that works 100 ms per request).

mod common;

use common::*;

/// The first-byte rows of a connection's ledger: (first frame, last frame).
fn first_bytes(c: &serde_json::Value) -> Vec<(u64, u64)> {
    first_byte_rows(c)
        .map(|r| {
            let frame = |k: &str| r[k].as_u64().unwrap();
            (frame("start_frame"), frame("end_frame"))
        })
        .collect()
}

#[test]
fn a_browsers_first_request_is_answered_by_its_answer_not_the_servers_settings() {
    let Some(capture) = public_capture(
        "seladb-PcapPlusPlus",
        "ExamplesTest__pcap_examples__tls2.pcap",
    ) else {
        return;
    };
    let doc = run_rttdoc_json(&capture);
    // Stream 100 (TLS 1.3, amazon.com): the client's preface (2681, 87
    // bytes: 24 of magic, SETTINGS, WINDOW_UPDATE) and its request (2682);
    // the server's preface (2687, 57 bytes: SETTINGS and WINDOW_UPDATE) a
    // round trip later, both SETTINGS acknowledgments (2688, 2689: empty
    // frames), and the answer (2701) 138 ms after the request. But 2701
    // begins at 6571, and the 1092 bytes before it (after 2689's) are not
    // in the capture (only its packets with PSH are): the answer began
    // there, at a time the capture does not hold, so it is not timed
    // (docs/real-world.md, "Minutes that were nobody's wait").
    let c = connection(&doc, 100);
    assert_eq!(first_bytes(c)[0], (2681, 2701));
    let waits = think_waits(c);
    assert!(!waits.iter().any(|w| w.1 == 2701), "{waits:?}");
    // Stream 287 (TLS 1.2): the server's 9-byte frame 726 ms after the
    // client's SETTINGS acknowledgment (6543) ends the answer's stream
    // (6544 began it at once): no 500 ms of think time.
    let waits = think_waits(connection(&doc, 287));
    assert!(!waits.iter().any(|w| w.1 == 6571), "{waits:?}");
    // Stream 152 (TLS 1.2): the request (3804) answered 98 ms later (3934)
    // on a 78 ms path, past the server's preface (3918) and both
    // acknowledgments (3919, 3920): the exchange runs to the answer. Its
    // 20 ms beyond the round trip are not the server's: its SETTINGS
    // acknowledgment 3919 acknowledges 743, not the request's end (1111),
    // so the request had not arrived when it left, and the answer came
    // 17.6 ms after it, under the threshold (docs/real-world.md, session
    // 64).
    let c = connection(&doc, 152);
    assert_eq!(first_bytes(c)[0], (3803, 3934));
    let waits = think_waits(c);
    assert!(waits.is_empty(), "{waits:?}");
    // Stream 286 (TLS 1.3): the preface (6347) and request (6348); the
    // server's two tickets (6349, 6351), then its preface carrying its
    // acknowledgment of the client's SETTINGS (6352, a 66-byte record:
    // SETTINGS, WINDOW_UPDATE and an empty frame), the client's own
    // acknowledgment (6353), and the answer (6549) 820 ms after the
    // request: one exchange, measured from the request. (The client's
    // next request, 6551, is answered by 6.7 KB the capture lacks before
    // 6552: a row that is not measured.)
    let c = connection(&doc, 286);
    assert_eq!(first_bytes(c), vec![(6347, 6549), (6551, 6552)]);
    let waits = think_waits(c);
    assert_eq!(waits.len(), 1, "{waits:?}");
    assert_eq!((waits[0].0, waits[0].1), (6348, 6549));
    // Stream 16 (TLS 1.3, h2 offered; the client's first record carries
    // its preface and a request, so the size shows no preface): the
    // server's PING (673, a 34-byte record: 17 bytes of frame) and the
    // client's acknowledgment 0.2 ms later (674) asked nothing; the
    // server's next data (675) 438 ms later answers no PING.
    let waits = think_waits(connection(&doc, 16));
    assert!(!waits.iter().any(|w| w.0 == 674 || w.0 == 543), "{waits:?}");
    assert!(waits.iter().any(|w| (w.0, w.1) == (478, 479)), "{waits:?}");
    // Stream 249 (TLS 1.3): the preface (5729), HEADERS (5730, 5731);
    // the server's one ticket and its preface in one segment (5732: 445
    // and 57 bytes), the SETTINGS acknowledgments (5733, 5734), the
    // answer (5740) 94 ms after the request: measured from the request,
    // not from the client's acknowledgment. (5740 begins at 5063, after
    // 1391 bytes the capture lacks: the answer began there, so its row is
    // not measured and no think time is claimed.)
    let c = connection(&doc, 249);
    assert_eq!(first_bytes(c)[0], (5729, 5740));
    let waits = think_waits(c);
    assert!(!waits.iter().any(|w| w.0 == 5734), "{waits:?}");
    // Stream 150 (TLS 1.3, google): the server's answer ends with its
    // PING (3862, a 34-byte record); 0.5 ms later the client's PING
    // acknowledgment (3863, 34) and a WINDOW_UPDATE (3864, 30), each a
    // record of its own, ask nothing: the server's next data (3877) is
    // the rest of the answer to the turn before (requests 3814 and 3830,
    // two streams).
    let waits = think_waits(connection(&doc, 150));
    assert!(!waits.iter().any(|w| w.1 == 3877), "{waits:?}");
    assert!(
        waits.iter().any(|w| (w.0, w.1) == (3830, 3859)),
        "{waits:?}"
    );
    // Stream 333: a preconnect. The client's preface alone (7421, 87
    // bytes), no HEADERS; the server's next data 67 ms later answers
    // nothing.
    let c = connection(&doc, 333);
    assert!(first_bytes(c).is_empty(), "{:?}", first_bytes(c));
    assert!(think_waits(c).is_empty());
}

#[test]
fn curl_and_nginx_over_http2_show_the_backends_100_ms_per_request() {
    // Three requests on one connection: /slow/a, /small.txt, /slow/b. The
    // backend's 100 ms (and nginx's upstream turnaround) are think time;
    // the file from disk is not; the server's preface and the empty
    // frames are no exchanges of their own.
    for name in ["curl-nginx-tls13.pcap.gz", "curl-nginx-tls12.pcap.gz"] {
        let doc = run_rttdoc_json(&data_dir().join("http2").join(name));
        let c = connection(&doc, 0);
        assert_eq!(c["exchanges"], 3, "{name}");
        let waits = think_waits(c);
        assert_eq!(waits.len(), 2, "{name}: {waits:?}");
        for w in &waits {
            assert!((99.0..170.0).contains(&w.2), "{name}: {waits:?}");
        }
    }
}
