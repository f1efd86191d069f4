//! IRC through a real server (tests/data/irc, made by
//! scripts/irc-captures.sh: ngircd, ii and sic, real Linux TCP, 20 ms each
//! way, tcpdump at the clients' host). A listener's PONG and a talker's
//! PRIVMSG ask nothing, and the server relays what others say when they
//! say it: no turn waits for a relayed message (before irc.rs, the
//! listener's PONG "asked" for the next channel message, 1.0 s of
//! `server_think_time`). Each turn is checked against tshark's IRC
//! dissector: the request is the command its label names, its first byte
//! a reply.

mod common;

use common::*;
use std::collections::BTreeMap;
use std::path::PathBuf;

fn capture() -> PathBuf {
    data_dir().join("irc").join("ngircd.pcap.gz")
}

/// Each frame's IRC commands as tshark reads them: the client's requests
/// and the server's responses (numerics, echoes, relays), per segment.
fn lines(capture: &std::path::Path) -> BTreeMap<u64, (Vec<String>, Vec<String>)> {
    let options = ["-o", "tcp.desegment_tcp_streams:FALSE"];
    let fields = [
        "frame.number",
        "irc.request.command",
        "irc.response.command",
    ];
    let split = |s: &str| -> Vec<String> {
        s.split(',')
            .filter(|c| !c.is_empty())
            .map(str::to_string)
            .collect()
    };
    tshark_fields(capture, &options, "irc", &fields)
        .into_iter()
        .map(|f| (f[0].parse().unwrap(), (split(&f[1]), split(&f[2]))))
        .collect()
}

/// What a server's line is when it answers: a numeric reply, the echo of
/// the client's own command, the ERROR that closes the link.
fn is_reply(command: &str) -> bool {
    command.len() == 3 && command.bytes().all(|b| b.is_ascii_digit())
        || ["JOIN", "ERROR", "PONG", "NICK", "PART"].contains(&command)
}

#[test]
fn relayed_talk_answers_no_turn_and_each_turn_is_a_command_and_its_reply() {
    if !require("irc relays", &["tshark"], false) {
        return;
    }
    let doc = run_rttdoc_json(&capture());
    let all = lines(&capture());
    let mut rows = Vec::new();
    for c in doc["connections"].as_array().unwrap() {
        for row in first_byte_rows(c) {
            let label = row["label"].as_str().unwrap();
            let command = label.split(':').next().unwrap();
            let (start, end) = (
                row["start_frame"].as_u64().unwrap(),
                row["end_frame"].as_u64().unwrap(),
            );
            let asked = &all[&start].0;
            assert!(
                asked.iter().any(|c| c.eq_ignore_ascii_case(command))
                    || command == "command" && !asked.is_empty(),
                "{label} at {start}: {asked:?}"
            );
            let answered = &all[&end].1;
            assert!(
                answered.iter().any(|c| is_reply(c)),
                "{label} answered at {end} by {answered:?}"
            );
            rows.push((start, end));
        }
    }
    // The listener (ii, stream 0) asked twice: its registration and its
    // JOIN; what came after were others' messages, PINGs, a QUIT.
    let listener: Vec<&str> = first_byte_rows(connection(&doc, 0))
        .map(|r| r["label"].as_str().unwrap())
        .collect();
    assert_eq!(
        listener,
        ["NICK: request -> first byte", "JOIN: request -> first byte"]
    );
    // The talker (sic, stream 1): registration (its JOIN rode with it),
    // WHOIS, the unknown command, QUIT; its six PRIVMSGs asked nothing.
    let talker: Vec<&str> = first_byte_rows(connection(&doc, 1))
        .map(|r| r["label"].as_str().unwrap().split(':').next().unwrap())
        .collect();
    assert_eq!(talker, ["NICK", "WHOIS", "command", "QUIT"]);
    // Relayed messages and PINGs (tshark: PRIVMSG, PING from the server)
    // begin and end no turn.
    let relays: Vec<u64> = all
        .iter()
        .filter(|(_, (_, r))| r.iter().any(|c| c == "PRIVMSG" || c == "PING"))
        .map(|(f, _)| *f)
        .collect();
    assert!(relays.len() >= 8, "{relays:?}");
    for f in &relays {
        assert!(rows.iter().all(|(s, e)| s != f && e != f), "{f} in a turn");
    }
    // Nobody waited on the server: ngircd answered at once, but for the
    // throttled JOIN, which rode in the registration's turn.
    for c in doc["connections"].as_array().unwrap() {
        assert!(
            !kinds(&c["findings"]).contains(&"server_think_time"),
            "stream {}: {}",
            c["stream"],
            c["findings"]
        );
        for row in c["ledger"].as_array().unwrap() {
            assert!(
                row["excess_ms"].as_f64().unwrap_or(0.0) < 5.0,
                "stream {}: {row}",
                c["stream"]
            );
        }
    }
}
