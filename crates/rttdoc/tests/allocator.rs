//! The allocator runs with the options main.rs sets before it starts:
//! read back by name from mimalloc's own report of its options, so a
//! renumbered option enum or a constructor that runs too late fails here.

use std::process::Command;

#[test]
fn mimalloc_starts_with_the_options_that_bound_memory() {
    let out = Command::new(env!("CARGO_BIN_EXE_rttdoc"))
        .arg("--version")
        .env("MIMALLOC_VERBOSE", "1")
        .output()
        .expect("running rttdoc");
    assert!(out.status.success());
    let report = String::from_utf8_lossy(&out.stderr);
    for (name, value) in [
        ("arena_eager_commit", "0"),
        ("purge_delay", "5"),
        ("allow_thp", "0"),
    ] {
        let line = report
            .lines()
            .find(|l| l.contains(&format!("option '{name}'")))
            .unwrap_or_else(|| panic!("mimalloc reported no option {name}:\n{report}"));
        let got = line.rsplit(':').next().unwrap_or("").trim();
        assert_eq!(got, value, "{line}");
    }
}
