//! Redis (tests/data/redis, made by scripts/redis-captures.sh: redis-server
//! 7, redis-cli and redis-benchmark; real Linux TCP, 20 ms each way,
//! tcpdump at the client). A command names its exchange; a command that
//! asks the server to wait for an event (a blocking pop, XREAD BLOCK) is
//! answered when the event comes or its timeout ends, which is the
//! client's asking, not the server's work; the server's own time
//! (DEBUG SLEEP) still is.

mod common;

use common::*;

fn doc(name: &str) -> serde_json::Value {
    run_rttdoc_json(&data_dir().join("redis").join(name))
}

/// Each first-byte row of a connection: (command, took ms, excess ms,
/// why that ideal).
fn turns(c: &serde_json::Value) -> Vec<(String, f64, f64, String)> {
    first_byte_rows(c)
        .map(|r| {
            let label = r["label"].as_str().unwrap();
            (
                label.split(':').next().unwrap().to_string(),
                r["duration_ms"].as_f64().unwrap(),
                r["excess_ms"].as_f64().unwrap(),
                r["ideal_basis"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn commands_name_their_turns_and_a_quiet_server_has_nothing_found() {
    let d = doc("redis-commands.pcap.gz");
    let conns = d["connections"].as_array().unwrap();
    // redis-cli asks for the command table first, then each command of
    // the pipe in turn; redis-benchmark's connections send SET and GET.
    let first = turns(connection(&d, 0));
    let names: Vec<&str> = first.iter().map(|t| t.0.as_str()).collect();
    assert_eq!(
        names,
        ["COMMAND", "SET", "GET", "INCR", "GET", "LPUSH", "LRANGE"]
    );
    for c in conns {
        assert!(kinds_within(&c["findings"]).is_empty(), "{}", c["findings"]);
        for (name, took, excess, _) in turns(c) {
            assert!(
                matches!(
                    name.as_str(),
                    "COMMAND" | "SET" | "GET" | "INCR" | "LPUSH" | "LRANGE" | "CONFIG"
                ),
                "stream {}: {name}",
                c["stream"]
            );
            // A one-segment command answered in a round trip; the 300 KB
            // SET's row also holds its upload in slow start.
            if took < 100.0 {
                assert!(excess < 6.0, "stream {}: {name} {excess} ms", c["stream"]);
            }
        }
    }
}

#[test]
fn a_command_that_asks_the_server_to_wait_is_idle_not_think_time() {
    let d = doc("redis-blocking.pcap.gz");
    let mut waited = Vec::new();
    for c in d["connections"].as_array().unwrap() {
        for (name, took, excess, basis) in turns(c) {
            if name == "BLPOP" || name == "XREAD" {
                assert_eq!(excess, 0.0, "stream {}: {name}", c["stream"]);
                assert!(basis.contains("asked the server to wait"), "{basis}");
                waited.push((name, took));
            }
        }
        if !think_waits(c).is_empty() {
            // Only DEBUG SLEEP's connection is the server's own time.
            assert_eq!(turns(c)[0].0, "DEBUG", "{}", c["findings"]);
        }
    }
    // BLPOP's 2 s timeout, BLPOP answered by a push 1.5 s on, XREAD
    // answered by an XADD 0.8 s on, BLPOP's 1 s timeout between GETs.
    let took: Vec<f64> = waited.iter().map(|w| w.1).collect();
    assert_eq!(waited.len(), 4, "{waited:?}");
    for (took, asked) in took.iter().zip([2000.0, 1500.0, 800.0, 1000.0]) {
        assert!(
            (asked..asked + 200.0).contains(took),
            "{took} ms for a {asked} ms wait: {waited:?}"
        );
    }
    // The GETs around the BLPOP on one connection are each a round trip.
    let kept = d["connections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["exchanges"] == 4)
        .expect("redis-cli's piped session");
    let names: Vec<String> = turns(kept).into_iter().map(|t| t.0).collect();
    assert_eq!(names, ["COMMAND", "GET", "BLPOP", "GET"]);
    // DEBUG SLEEP 0.3: the server's 300 ms, found and costed.
    let sleep = d["connections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| turns(c).first().is_some_and(|t| t.0 == "DEBUG"))
        .expect("DEBUG SLEEP's connection");
    let waits = think_waits(sleep);
    assert_eq!(waits.len(), 1, "{waits:?}");
    assert!((299.0..330.0).contains(&waits[0].2), "{waits:?}");
    // The headline counts the server's time only.
    let total = d["summary"]["excess_ms_total"].as_f64().unwrap();
    assert!((299.0..335.0).contains(&total), "{total}");
}

#[test]
fn messages_pushed_to_a_subscriber_answer_none_of_its_commands() {
    if !require("redis pub/sub", &["tshark"], false) {
        return;
    }
    // scripts/redis-pubsub-captures.sh: a subscriber (stream 0), and a
    // publisher whose three messages Redis pushes to it 0.7 s apart, one
    // of them between the subscriber's PING and its UNSUBSCRIBE.
    let capture = data_dir().join("redis").join("redis-pubsub.pcap.gz");
    let d = run_rttdoc_json(&capture);
    let subscriber = connection(&d, 0);
    assert_eq!(kinds(&subscriber["findings"]), Vec::<&str>::new());
    let names: Vec<String> = turns(subscriber).into_iter().map(|t| t.0).collect();
    assert_eq!(names, ["SUBSCRIBE", "PING", "UNSUBSCRIBE", "GET", "QUIT"]);
    // The pushes, by tshark: the server's segments that begin with a
    // `message` array. No row of the ledger holds one (each answer is
    // its first segment alone: no transfer rows).
    let served = "tcp.stream == 0 && tcp.srcport == 6379 && tcp.len > 0";
    let message = "*3\r\n$7\r\nmessage\r\n"
        .bytes()
        .map(|b| format!("{b:02x}"))
        .collect::<String>();
    let pushes: Vec<u64> = tshark_fields(&capture, &[], served, &["frame.number", "tcp.payload"])
        .into_iter()
        .filter(|f| f[1].starts_with(&message))
        .map(|f| f[0].parse().unwrap())
        .collect();
    assert_eq!(pushes.len(), 3, "{pushes:?}");
    for r in subscriber["ledger"].as_array().unwrap() {
        assert_ne!(r["phase"], "transfer", "{r}");
        let (from, to) = (
            r["start_frame"].as_u64().unwrap(),
            r["end_frame"].as_u64().unwrap(),
        );
        assert!(pushes.iter().all(|p| !(from..=to).contains(p)), "{r}");
    }
}
