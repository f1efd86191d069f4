//! A job server and a chat server through real peers
//! (tests/data/push-queues, made by scripts/push-queue-captures.sh:
//! gearmand with hand-written clients of its binary protocol, prosody with
//! slixmpp; real Linux TCP, 20 ms each way, tcpdump at the clients' host).
//! A sleeping Gearman worker is woken by the server's NOOP when a client
//! submits a job: its PRE_SLEEP asked nothing (before gearman.rs, jobs
//! 1.9, 0.7 and 1.3 s apart were 3.6 s of `server_think_time`). Inside
//! XMPP's TLS (after STARTTLS on 5222) chat messages are pushed as others
//! send them and records cannot tell which answers which: no turns.

mod common;

use common::*;
use std::path::PathBuf;

fn capture(name: &str) -> PathBuf {
    data_dir().join("push-queues").join(name)
}

/// No connection of the capture has a finding of the server's think time.
fn no_think_time(doc: &serde_json::Value) {
    assert_no_finding(doc, "server_think_time");
}

#[test]
fn a_sleeping_gearman_workers_wake_up_answers_nothing() {
    if !require("push-queues: Gearman", &["tshark"], false) {
        return;
    }
    let cap = capture("gearman.pcap.gz");
    let doc = run_rttdoc_json(&cap);
    no_think_time(&doc);
    // Each frame's Gearman packet types, from the payloads (a 12-byte
    // header: magic, type, size).
    let payloads = tshark_payloads(&cap);
    let kinds_in = |frame: u64| -> Vec<u32> {
        let b = &payloads[&frame].1;
        let mut at = 0;
        let mut out = Vec::new();
        while at + 12 <= b.len() {
            out.push(u32::from_be_bytes([
                b[at + 4],
                b[at + 5],
                b[at + 6],
                b[at + 7],
            ]));
            let size = u32::from_be_bytes([b[at + 8], b[at + 9], b[at + 10], b[at + 11]]);
            at += 12 + size as usize;
        }
        out
    };
    // What asks and what answers (gearman.org's PROTOCOL): GRAB_JOB (9)
    // -> NO_JOB (10) or JOB_ASSIGN (11); SUBMIT_JOB (7) -> JOB_CREATED
    // (8); ECHO_REQ (16) -> ECHO_RES (17).
    let answers = |asked: u32| -> Vec<u32> {
        match asked {
            9 => vec![10, 11],
            7 => vec![8],
            16 => vec![17],
            other => panic!("type {other} asks nothing"),
        }
    };
    let (pre_sleep, noop) = (4, 6);
    let mut turns = 0;
    for c in doc["connections"].as_array().unwrap() {
        for row in first_byte_rows(c) {
            let (start, end) = (
                row["start_frame"].as_u64().unwrap(),
                row["end_frame"].as_u64().unwrap(),
            );
            let asked: Vec<u32> = kinds_in(start)
                .into_iter()
                .filter(|k| [9, 7, 16].contains(k))
                .collect();
            assert!(!asked.is_empty(), "turn at {start}: {:?}", kinds_in(start));
            assert!(!kinds_in(start).contains(&pre_sleep) || asked.len() == 1);
            assert!(
                answers(asked[0]).iter().any(|a| kinds_in(end).contains(a)),
                "{start} -> {end}: {:?}",
                kinds_in(end)
            );
            assert!(!kinds_in(end).contains(&noop), "a NOOP at {end}");
            turns += 1;
        }
    }
    // The worker's seven grabs, the client's echo and three submits.
    assert_eq!(turns, 11);
    // The worker slept three times, each woken by a NOOP.
    let noops = payloads.keys().filter(|f| kinds_in(**f) == [noop]).count();
    assert_eq!(noops, 3);
}

#[test]
fn inside_xmpps_tls_no_turns_are_made() {
    // alice and bob chat through prosody after STARTTLS (TLS 1.3): the
    // preamble (stream headers, starttls, proceed) is timed, the stanzas
    // inside TLS are not turns; what the set-up itself lost is found:
    // prosody's stream features held by Nagle behind its first session
    // ticket until the client's delayed ACK.
    let doc = run_rttdoc_json(&capture("xmpp-starttls.pcap.gz"));
    no_think_time(&doc);
    let connections = doc["connections"].as_array().unwrap();
    assert_eq!(connections.len(), 2);
    for c in connections {
        assert_eq!(c["exchanges"], 0, "stream {}", c["stream"]);
        assert!(first_byte_rows(c).next().is_none());
        assert!(
            kinds(&c["findings"]).contains(&"nagle_delayed_ack"),
            "stream {}: {}",
            c["stream"],
            c["findings"]
        );
        let phases: Vec<&str> = c["ledger"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["phase"].as_str().unwrap())
            .collect();
        assert!(phases.contains(&"starttls"), "{phases:?}");
    }
}

#[test]
fn xmpp_chat_messages_ask_nothing_and_answer_nothing() {
    // alice replies at once to each of bob's three messages, 1.2 s apart,
    // in the clear: before xmpp.rs her replies were "answered" by bob's
    // next message (2.3 s of `server_think_time`) and bob's messages by
    // her replies (131 ms: her time to reply, not the server's). Now the
    // turns are the stream's set-up, the IQs and the close, each answered
    // by its counterpart (checked in the payloads); no message begins or
    // ends one.
    if !require("push-queues: XMPP", &["tshark"], false) {
        return;
    }
    let cap = capture("xmpp.pcap.gz");
    let doc = run_rttdoc_json(&cap);
    let payloads = tshark_payloads(&cap);
    let text = |frame: u64| String::from_utf8_lossy(&payloads[&frame].1).into_owned();
    let mut turns = 0;
    for c in doc["connections"].as_array().unwrap() {
        assert!(kinds(&c["findings"]).is_empty(), "{}", c["findings"]);
        for row in first_byte_rows(c) {
            let (start, end) = (
                row["start_frame"].as_u64().unwrap(),
                row["end_frame"].as_u64().unwrap(),
            );
            let (asked, answer) = (text(start), text(end));
            let answered = if asked.starts_with("<stream:stream") {
                answer.contains("<stream:stream")
            } else if asked.starts_with("<auth") {
                answer.starts_with("<success")
            } else if asked.starts_with("</stream:stream") {
                answer.contains("</stream:stream")
            } else if asked.starts_with("<iq") {
                let id = asked
                    .split("id=\"")
                    .nth(1)
                    .unwrap()
                    .split('"')
                    .next()
                    .unwrap();
                answer.starts_with("<iq") && answer.contains(&format!("id='{id}'"))
            } else {
                panic!("turn at {start} begins with {asked}");
            };
            assert!(answered, "{start} -> {end}: {asked} -> {answer}");
            assert!(!answer.starts_with("<message"), "{answer}");
            turns += 1;
        }
    }
    assert_eq!(turns, 13);
}

#[test]
fn a_messengers_own_stream_on_xmpps_port_makes_no_turns() {
    // WhatsApp on 5222 (nDPI's wa_voice.pcap): its own binary XMPP in its
    // own encryption, the server's pushes each acknowledged by the phone.
    // Before, the phone's acknowledgments "asked" for the next push: 2.1 s
    // of `server_think_time`. Which frame answers which cannot be told.
    let other = |name: &str| data_dir().join("other-projects").join(name);
    let doc = run_rttdoc_json(&other("ndpi-whatsapp-5222.pcap"));
    let c = connection(&doc, 0);
    assert_eq!(c["server"]["port"], 5222);
    assert_eq!(c["exchanges"], 0, "{}", c["findings"]);
    assert!(first_byte_rows(c).next().is_none());
    no_think_time(&doc);
    // XML on the same port without XMPP's stream header (Xiaomi's push
    // service, a capture begun on the connection's stanzas): an IQ and
    // its result are still a turn, and the server's 40 ms after its ACK
    // of the IQ its own time.
    let doc = run_rttdoc_json(&other("ndpi-xiaomi-push-5222.pcap"));
    let c = connection(&doc, 0);
    assert_eq!(turn_frames(&doc), [(1, 3)]);
    let waits = think_waits(c);
    assert_eq!(waits.len(), 1);
    assert!((35.0..45.0).contains(&waits[0].2), "{waits:?}");
}

#[test]
fn bitcoin_peers_announcements_answer_nothing() {
    // nDPI's bitcoin.pcap (2011): a node's two connections to peers on
    // 8333. Before bitcoin.rs the peers' `inv` and `addr` announcements,
    // relayed as the network saw payments, "answered" the node's last
    // message: 614 s of `server_think_time` on these two. Every turn is
    // now a question and its answer, read in the payloads (a message
    // begins with its network's magic, then its command).
    if !require("push-queues: Bitcoin", &["tshark"], false) {
        return;
    }
    let cap = data_dir().join("other-projects").join("ndpi-bitcoin.pcap");
    let doc = run_rttdoc_json(&cap);
    let payloads = tshark_payloads(&cap);
    // The commands of the messages a segment holds (where the magic
    // stands, a command follows).
    let commands = |frame: u64| -> Vec<String> {
        let b = &payloads[&frame].1;
        (0..b.len().saturating_sub(16))
            .filter(|&i| b[i..i + 4] == [0xf9, 0xbe, 0xb4, 0xd9])
            .map(|i| {
                String::from_utf8_lossy(&b[i + 4..i + 16])
                    .trim_end_matches('\0')
                    .to_string()
            })
            .collect()
    };
    // What the connecting peer asks in these (Bitcoin Core's protocol.h)
    // and what answers each.
    let answers = |asked: &str| -> Option<&[&str]> {
        match asked {
            "version" => Some(&["version", "verack"]),
            "getaddr" => Some(&["addr"]),
            "getdata" => Some(&["tx", "block", "notfound"]),
            "ping" => Some(&["pong"]),
            _ => None,
        }
    };
    let turns = turn_frames(&doc);
    assert!(turns.len() >= 15, "{turns:?}");
    for (start, end) in turns {
        let asked = commands(start);
        let awaited = asked
            .iter()
            .find_map(|c| answers(c))
            .unwrap_or_else(|| panic!("{start} asks nothing: {asked:?}"));
        let answered = commands(end);
        assert!(
            answered.iter().any(|c| awaited.contains(&c.as_str())),
            "{start} {asked:?} -> {end} {answered:?}"
        );
    }
    // What is left is the peers' answers to getdata, 36-263 ms each.
    let ms: f64 = doc["connections"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(think_waits)
        .map(|(_, _, ms)| ms)
        .sum();
    assert!(ms < 2_000.0, "{ms}");
}

#[test]
fn a_long_polls_jittered_holds_are_idle() {
    // Dropbox's notification long poll (nDPI's skype.pcap stream 5, which
    // nDPI names Dropbox by its address): the client asks again the
    // moment each answer arrives, the server holds each poll 38-54 s (its
    // timeout has random jitter, against a thundering herd) and answers
    // with the same small record. Before, 140 s of `server_think_time`.
    if !require("push-queues: Dropbox long poll", &["tshark"], false) {
        return;
    }
    let cap = data_dir()
        .join("other-projects")
        .join("ndpi-dropbox-longpoll.pcap");
    let doc = run_rttdoc_json(&cap);
    no_think_time(&doc);
    let c = connection(&doc, 0);
    let client = c["client"]["ip"].as_str().unwrap().to_string();
    let payloads = tshark_payloads(&cap);
    let times = frame_times(&cap);
    let turns = turn_frames(&doc);
    assert_eq!(turns.len(), 3, "{turns:?}");
    let mut holds = Vec::new();
    for (asked, answered) in turns {
        // Read with tshark: a poll left within 5 ms of the server's data
        // before it (what made the client ask again), and the answer is
        // the same size every time.
        let (from, poll) = &payloads[&asked];
        assert_eq!(*from, client);
        let (prompt, _) = payloads
            .range(..asked)
            .rev()
            .find(|(_, (ip, _))| *ip != client)
            .expect("server data before each poll");
        assert!(times[&asked] - times[prompt] < 0.005, "{prompt} -> {asked}");
        assert_eq!(payloads[&answered].1.len(), 277, "{answered}");
        assert_eq!(poll.len(), 954);
        holds.push(times[&answered] - times[&asked]);
        // The ledger counts the hold as idle: no latency beyond the ideal.
        let row = first_byte_rows(c)
            .find(|r| r["start_frame"] == asked)
            .unwrap();
        assert_eq!(row["excess_ms"], 0.0, "{row}");
    }
    // No two holds alike (a fixed timeout is held_polls' other rule).
    holds.sort_by(f64::total_cmp);
    assert!(holds.windows(2).all(|w| w[1] - w[0] > 1.0), "{holds:?}");
    assert!(holds[0] > 10.0, "{holds:?}");
    assert_eq!(c["excess_ms"], 0.0);
}

#[test]
fn a_push_channel_begun_inside_its_tls_makes_no_turns() {
    // Apple's push service on 5223 (nDPI's skype.pcap stream 74), the
    // capture begun after its TLS handshake: notifications pushed 22-44 s
    // apart, each acknowledged by the phone at once. Before, each
    // acknowledgment "asked" for the next push: 66 s of
    // `server_think_time`. With the handshake seen, the port's records
    // make no turns already (xmpp-starttls above); here the first data is
    // already a TLS record of application data.
    if !require("push-queues: APNs", &["tshark"], false) {
        return;
    }
    let other = |name: &str| data_dir().join("other-projects").join(name);
    let cap = other("ndpi-apns-5223.pcap");
    let first = tshark_payloads(&cap).into_values().next().unwrap().1;
    assert_eq!(first[..3], [23, 3, 1], "a TLS 1.0 application_data record");
    let doc = run_rttdoc_json(&cap);
    let c = connection(&doc, 0);
    assert_eq!(c["server"]["port"], 5223);
    assert_eq!(c["exchanges"], 0, "{}", c["findings"]);
    no_think_time(&doc);
    // The same port carrying something else (nDPI's hpvirtgrp.pcap: HP's
    // virtual machine group protocol, its first bytes no TLS record): the
    // client's messages are each answered in one round trip, as turns.
    let cap = other("ndpi-hpvirtgrp-5223.pcap");
    let first = tshark_payloads(&cap).into_values().next().unwrap().1;
    assert_ne!(first[0], 23);
    let doc = run_rttdoc_json(&cap);
    assert_eq!(turn_frames(&doc), [(4, 6), (8, 9), (11, 12), (14, 15)]);
}
