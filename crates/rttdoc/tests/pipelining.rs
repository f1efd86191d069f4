//! HTTP/1.1 pipelining against nginx (tests/data/pipelining, made by
//! scripts/pipeline-captures.sh: real Linux TCP, 20 ms each way, tcpdump
//! at the client). Requests written before any answer came are one turn:
//! the server answers them in order, back to back, as one transfer. The
//! turn's label says how many rode behind the first, as tshark counts
//! the requests; the keep-alive requests after it are turns of their own.

mod common;

use common::*;

#[test]
fn pipelined_requests_are_one_turn_labelled_with_their_count() {
    if !require(
        "pipelined_requests_are_one_turn_labelled_with_their_count",
        &["tshark"],
        false,
    ) {
        return;
    }
    let capture = data_dir()
        .join("pipelining")
        .join("nginx-pipelined.pcap.gz");
    let d = run_rttdoc_json(&capture);
    // tshark's HTTP requests on each stream (a frame's several URIs
    // comma-separated).
    let out = std::process::Command::new("tshark")
        .arg("-r")
        .arg(&capture)
        .args(["-Y", "http.request", "-T", "fields"])
        .args(["-e", "tcp.stream", "-e", "http.request.uri"])
        .output()
        .unwrap();
    let requests = |stream: u64| {
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.split_once('\t'))
            .filter(|(s, _)| s.parse::<u64>().ok() == Some(stream))
            .map(|(_, uris)| uris.split(',').count() as u64)
            .sum::<u64>()
    };
    let pipelined = connection(&d, 0);
    assert_eq!(pipelined["exchanges"], 1);
    let label = pipelined["ledger"][1]["label"].as_str().unwrap();
    let behind = requests(0) - 1;
    assert_eq!(
        label,
        format!("GET /a.txt (+{behind} pipelined): request -> first byte")
    );
    assert_eq!(behind, 3);
    // curl's three requests, each after the previous answer.
    let kept = connection(&d, 1);
    assert_eq!(kept["exchanges"].as_u64(), Some(requests(1)));
    let labels: Vec<&str> = first_byte_rows(kept)
        .map(|r| r["label"].as_str().unwrap())
        .collect();
    assert_eq!(
        labels,
        [
            "GET /c.txt: request -> first byte",
            "GET /a.txt: request -> first byte",
            "GET /b.txt: request -> first byte"
        ]
    );
    for c in d["connections"].as_array().unwrap() {
        assert_eq!(
            kinds_within(&c["findings"]),
            Vec::<&str>::new(),
            "{}",
            c["findings"]
        );
    }
}
