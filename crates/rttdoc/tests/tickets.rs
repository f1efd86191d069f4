//! A TLS 1.3 server that writes its two session tickets one at a time
//! with Nagle on (tests/data/tickets, made by scripts/ticket-captures.sh:
//! Python's http.server behind its ssl module, OpenSSL without
//! TCP_NODELAY, curl, real Linux TCP, 20 ms each way, tcpdump at the
//! client). The second ticket waits for the client's delayed ACK of the
//! first, a round trip and 40 ms, while the client waits for the answer
//! to the request it sent behind its Finished. The hold costs the client
//! something only when the answer was queued behind the ticket; an answer
//! the handler wrote later waited for the handler alone.

mod common;

use common::*;

fn doc(name: &str) -> serde_json::Value {
    run_rttdoc_json(&data_dir().join("tickets").join(name))
}

#[test]
fn a_ticket_held_while_the_handler_works_costs_nothing_the_handler_is_the_wait() {
    let d = doc("python-ssl-slow.pcap.gz");
    for (n, tickets) in [(0, [10, 12]), (1, [30, 32])] {
        let c = connection(&d, n);
        // The capture shows the hold: the second ticket left a round
        // trip and a delayed ACK after the first (the client's ACK of the
        // first, 42 ms after it came, released it).
        assert_eq!(ticket_frames(c), tickets, "stream {n}");
        let kinds = kinds_within(&c["findings"]);
        assert_eq!(kinds, ["server_think_time"], "stream {n}");
        let think = c["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["kind"] == "server_think_time")
            .unwrap();
        // The handler's 200 ms, from the request's arrival to the answer.
        let ms = think["cost_ms"].as_f64().unwrap();
        assert!((195.0..215.0).contains(&ms), "stream {n}: {ms} ms");
    }
}

#[test]
fn a_handler_that_answers_at_once_sends_its_answer_with_the_ticket_and_waits_for_nothing() {
    let d = doc("python-ssl-fast.pcap.gz");
    for n in [0, 1] {
        let c = connection(&d, n);
        assert_eq!(ticket_frames(c).len(), 2, "stream {n}");
        assert!(
            kinds_within(&c["findings"]).is_empty(),
            "stream {n}: {:?}",
            c["findings"]
        );
    }
}
