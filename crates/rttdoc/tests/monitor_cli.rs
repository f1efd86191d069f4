//! `rttdoc monitor`'s refusals say what is wrong and what to do.

mod common;

use std::process::Command;

use common::*;

fn monitor(args: &[&str]) -> (bool, String) {
    let out = Command::new(rttdoc_bin())
        .arg("monitor")
        .args(args)
        .args(["--listen", "127.0.0.1:0"])
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn an_unknown_interface_is_named() {
    let (ok, err) = monitor(&["--interface", "rttdoc-none0"]);
    assert!(!ok);
    assert!(
        err.contains("no network interface \"rttdoc-none0\""),
        "{err}"
    );
}

/// With CAP_NET_RAW the socket opens and libpcap refuses the expression,
/// named; without it the error says which capability is missing.
#[test]
fn a_bad_filter_or_a_missing_capability_is_explained() {
    let (ok, err) = monitor(&["--interface", "lo", "--filter", "tcp port nonsense-port"]);
    assert!(!ok);
    if is_root() {
        assert!(err.contains("filter \"tcp port nonsense-port\""), "{err}");
    } else {
        assert!(err.contains("CAP_NET_RAW"), "{err}");
    }
}

#[test]
fn replay_of_a_missing_file_fails_with_the_file_named() {
    let (ok, err) = monitor(&["--replay", "/nonexistent/rttdoc.pcap"]);
    assert!(!ok);
    assert!(err.contains("/nonexistent/rttdoc.pcap"), "{err}");
}

#[test]
fn interface_or_replay_is_required() {
    let (ok, err) = monitor(&[]);
    assert!(!ok);
    assert!(err.contains("--interface"), "{err}");
}
