//! Output for people fits the terminal: with 80 columns every line of the
//! overview and of a connection's detail fits in 80 characters (tables drop
//! columns and wrap cells, prose wraps); without a terminal nothing is cut.

mod common;

use std::process::Command;

use common::*;

fn lines(args: &[&str], columns: Option<&str>) -> Vec<String> {
    // A relative path: one word longer than the screen cannot be wrapped.
    let mut cmd = Command::new(rttdoc_bin());
    cmd.current_dir(data_dir())
        .args(["analyze", "--no-progress", "--color", "never"])
        .args(args)
        .arg("lab/tls13-nagle-nginx/client.pcapng.gz");
    match columns {
        Some(c) => cmd.env("COLUMNS", c),
        None => cmd.env_remove("COLUMNS"),
    };
    let out = cmd.output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(String::from)
        .collect()
}

#[test]
fn eighty_columns_hold_every_line_of_the_overview_and_the_detail() {
    for args in [&[][..], &["--conn", "0"][..]] {
        let text = lines(args, Some("80"));
        assert!(text.len() > 10);
        for l in &text {
            assert!(
                l.chars().count() <= 80,
                "{args:?}: {} chars: {l}",
                l.chars().count()
            );
        }
        // The causes are all still there.
        let all = text.join("\n");
        assert!(all.contains("nagle_hold"), "{all}");
    }
}

#[test]
fn without_a_terminal_lines_are_not_wrapped() {
    let text = lines(&[], None);
    assert!(
        text.iter().any(|l| l.chars().count() > 80),
        "a pipe gets whole lines"
    );
}
