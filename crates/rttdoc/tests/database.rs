//! PostgreSQL and its own clients (tests/data/database, made by
//! scripts/database-captures.sh: real Linux TCP, 20 ms each way, tcpdump at
//! the client). A database's answers wait on its work: a query that sleeps
//! is the server's time, found at the right turn and no other; a pipeline
//! of queries answered once all of them ran is one turn of the server's;
//! a select-only load answered at once costs nothing.

mod common;

use common::*;

fn doc(name: &str) -> serde_json::Value {
    run_rttdoc_json(&data_dir().join("database").join(name))
}

/// Every finding of a capture about what a connection's own packets
/// waited for: (stream, kind) (`kinds_within`: pgbench and the scripts'
/// clients connect one after another).
fn kinds(doc: &serde_json::Value) -> Vec<(u64, String)> {
    doc["connections"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| {
            kinds_within(&c["findings"])
                .into_iter()
                .map(|k| (c["stream"].as_u64().unwrap(), k.to_string()))
        })
        .collect()
}

#[test]
fn a_query_that_sleeps_is_the_servers_time_at_its_own_turn() {
    // psql: `select 1`, `select pg_sleep(0.3)`, `select 2` on one
    // connection (stream 0 is the end of the connection before it).
    let d = doc("psql-sleep.pcap.gz");
    assert_eq!(kinds(&d), [(1, "server_think_time".to_string())]);
    let waits = think_waits(connection(&d, 1));
    assert_eq!(waits.len(), 1, "{waits:?}");
    let (request, answer, ms) = waits[0];
    // The sleeping query is psql's second (frame 12, after the answer to
    // the first in 11); its answer is frame 14.
    assert_eq!((request, answer), (12, 14));
    assert!((300.0..320.0).contains(&ms), "{ms} ms");
}

#[test]
fn a_pipeline_answered_once_all_its_queries_ran_is_one_turn_of_the_servers() {
    // pgbench: four SELECTs and a Sync in one write, one of them
    // pg_sleep(0.05); the results leave together. Every pipeline is one
    // 50 ms wait of the server's, and nothing else is found.
    let d = doc("pgbench-pipeline.pcap.gz");
    let found = kinds(&d);
    assert!(
        found
            .iter()
            .all(|(s, k)| *s == 1 && k == "server_think_time"),
        "{found:?}"
    );
    let waits = think_waits(connection(&d, 1));
    assert!(waits.len() >= 20, "{} pipelines timed", waits.len());
    for (request, answer, ms) in &waits {
        assert!(
            (49.0..60.0).contains(ms),
            "{request} -> {answer}: {ms} ms, not the 50 ms sleep"
        );
    }
}

#[test]
fn a_select_only_load_answered_at_once_costs_nothing() {
    let d = doc("pgbench-select.pcap.gz");
    assert_eq!(kinds(&d), []);
    assert_eq!(d["connections"].as_array().unwrap().len(), 3);
    let excess = d["summary"]["excess_ms_total"].as_f64().unwrap();
    assert!(excess < 20.0, "{excess} ms beyond the ideal");
}

#[test]
fn notifications_pushed_to_a_listener_answer_nothing() {
    // psycopg2 LISTENs while psql sessions from the same host NOTIFY it
    // four times, 0.7 s apart: each notification (tshark's dissector
    // names them) comes after the server's ReadyForQuery, owed nothing,
    // and is no part of any turn; the LISTEN's answer ends at its own
    // ReadyForQuery (it was a 3.6 s "response transfer").
    if !require(
        "notifications_pushed_to_a_listener_answer_nothing",
        &["tshark"],
        false,
    ) {
        return;
    }
    let path = data_dir().join("database").join("pg-listen.pcap.gz");
    let notifications: Vec<(u64, u64)> = tshark_fields(
        &path,
        &["-d", "tcp.port==5433,pgsql"],
        "pgsql.type == \"Notification\"",
        &["tcp.stream", "frame.number"],
    )
    .iter()
    .map(|r| (r[0].parse().unwrap(), r[1].parse().unwrap()))
    .collect();
    assert_eq!(notifications.len(), 4, "{notifications:?}");
    let d = run_rttdoc_json(&path);
    assert_eq!(kinds(&d), []);
    let listener = notifications[0].0;
    let c = connection(&d, listener);
    let rows: Vec<(u64, u64, String)> = c["ledger"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["phase"] != "tcp_handshake")
        .map(|r| {
            (
                r["start_frame"].as_u64().unwrap(),
                r["end_frame"].as_u64().unwrap(),
                r["label"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    for &(_, frame) in &notifications {
        assert!(
            rows.iter().all(|&(from, to, _)| frame < from || frame > to),
            "notification {frame} inside a turn: {rows:?}"
        );
    }
    // The start-up, the LISTEN and the last query: each a turn, named.
    let labels: Vec<&str> = rows.iter().map(|r| r.2.as_str()).collect();
    assert_eq!(
        labels,
        [
            "startup: request -> first byte",
            "Query: request -> first byte",
            "Query: request -> first byte"
        ]
    );
    assert!(
        c["excess_ms"].as_f64().unwrap() < 20.0,
        "{}",
        c["excess_ms"]
    );
}
