//! The lab's command line: arguments refused before anything is set up,
//! a user's client output kept and read, what a run says about its hosts
//! in labels.json, and what `compare` shows.

mod common;

use common::*;
use serde_json::Value;
use std::process::Command;
use std::time::{Duration, Instant};

/// Lab runs time packets on a 2-core machine: one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn lab(args: &[&str]) -> (bool, String, String, Duration) {
    let start = Instant::now();
    let out = Command::new(rttdoc_bin())
        .arg("lab")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
        start.elapsed(),
    )
}

fn labels(dir: &std::path::Path) -> Value {
    serde_json::from_slice(&std::fs::read(dir.join("labels.json")).unwrap()).unwrap()
}

/// Bad values fail at once with a message that says what is allowed; none
/// gets as far as making namespaces (which would need root anyway: these
/// run without it too).
#[test]
fn bad_arguments_are_refused_before_any_setup() {
    let dir = TempDir::new("lab-args");
    let out = dir.path("out").to_string_lossy().to_string();
    for (args, says) in [
        (vec!["run", "tfo-nginx", "--loss", "100"], "100% loss"),
        (vec!["run", "tfo-nginx", "--loss", "200"], "below 100"),
        (vec!["run", "tfo-nginx", "--loss=-1"], "percentage"),
        (
            vec!["run", "tfo-nginx", "--loss", "three"],
            "not a percentage",
        ),
        (vec!["run", "tfo-nginx", "--rate", "0"], "64kbit"),
        (
            vec!["run", "tfo-nginx", "--rate", "10furlongs"],
            "unknown rate unit",
        ),
        (
            vec!["run", "tfo-nginx", "--queue", "100"],
            "at least one packet",
        ),
        (vec!["run", "tfo-nginx", "--rtt", "20s"], "at most 10 s"),
        (
            vec!["run", "tfo-nginx", "--rtt", "5parsecs"],
            "unknown unit",
        ),
        (vec!["run", "tfo-nginx", "--runs", "0"], "--runs"),
        (
            vec!["run", "tfo-nginx", "--drop-c2s", "0"],
            "numbered from 1",
        ),
        (
            vec![
                "run",
                "tfo-nginx",
                "--server-sysctl",
                "net.ipv4.tcp_fastopn=3",
            ],
            "no sysctl net.ipv4.tcp_fastopn",
        ),
        (
            vec!["run", "tfo-nginx", "--client-sysctl", "../../etc/passwd=1"],
            "not a sysctl name",
        ),
        (vec!["run", "tfo-nginxx"], "did you mean tfo-nginx?"),
        (vec!["run", "haproxy-tfo"], "did you mean tfo-haproxy?"),
        (vec!["compare", "wwr-nagle"], "wwr-nagle-nginx"),
        (vec!["run"], "give a scenario name"),
        (
            vec!["run", "tfo-nginx", "--server-cmd", "a", "--client-cmd", "b"],
            "not both",
        ),
    ] {
        let mut all = args.clone();
        all.extend(["--out", &out]);
        let (ok, _, err, took) = lab(&all);
        assert!(!ok, "{args:?} was accepted");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(took < Duration::from_secs(5), "{args:?} took {took:?}");
    }
    assert!(
        !dir.path("out").exists(),
        "a refused run wrote its output directory"
    );
}

/// `--client-cmd`: what the command prints goes to client.log run by run,
/// and curl -w variables in it fill the timing table.
#[test]
fn a_client_commands_output_is_kept_and_its_curl_timings_read() {
    if !require(
        "a_client_commands_output_is_kept_and_its_curl_timings_read",
        &["ip", "curl"],
        true,
    ) {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = TempDir::new("lab-client-cmd");
    let out = dir.path("out");
    let server = format!(
        "exec {} lab peer http-server --listen $RTTDOC_SERVER_IP:8080 --nodelay",
        rttdoc_bin().display()
    );
    let client = "curl -s -o /dev/null -w 'time_connect=%{time_connect} time_starttransfer=%{time_starttransfer} time_total=%{time_total}\\n' http://$RTTDOC_SERVER_IP:8080/; echo hello-from-the-client";
    let (ok, stdout, err, _) = lab(&[
        "run",
        "--server-cmd",
        &server,
        "--client-cmd",
        client,
        "--rtt",
        "40ms",
        "--runs",
        "2",
        "--out",
        &out.to_string_lossy(),
    ]);
    assert!(ok, "{err}");
    let log = std::fs::read_to_string(out.join("client.log")).unwrap();
    assert_eq!(log.matches("hello-from-the-client").count(), 2, "{log}");
    assert!(log.contains("# run 0") && log.contains("# run 1"), "{log}");
    let l = labels(&out);
    assert_eq!(l["client_log"], "client.log");
    let t = l["timings"].as_array().unwrap();
    assert_eq!(t.len(), 2);
    for run in t {
        // curl's own numbers: connect is one round trip of the 40 ms path.
        let connect = run["connect_ms"].as_f64().unwrap();
        assert!((39.0..70.0).contains(&connect), "connect {connect} ms");
        assert!(run["first_byte_ms"].as_f64().unwrap() > connect);
    }
    let connect_row = stdout.lines().find(|l| l.starts_with("connect")).unwrap();
    assert!(!connect_row.contains(" - "), "{stdout}");
    assert!(
        stdout.contains(&format!(
            "next: rttdoc analyze {}",
            out.join("client.pcapng").display()
        )),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("wrote {}", out.display())),
        "{stdout}"
    );
}

/// labels.json says, machine-readably, what the hosts ran with; the
/// server's configuration beside the captures points at certificates that
/// still exist; scripted drops the run never reached are reported; no
/// capture holds every packet twice; no scratch is left in the output.
#[test]
fn a_run_records_its_hosts_settings_and_keeps_its_server_config_usable() {
    if !require(
        "a_run_records_its_hosts_settings_and_keeps_its_server_config_usable",
        &["ip", "nginx", "haproxy", "curl", "openssl"],
        true,
    ) {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = TempDir::new("lab-labels");
    let out = dir.path("nginx");
    let (ok, _, err, _) = lab(&[
        "run",
        "tfo-nginx",
        "--rtt",
        "10ms",
        "--runs",
        "1",
        "--initcwnd",
        "4",
        "--quickack",
        "--drop-s2c",
        "100000",
        "--server-sysctl",
        "net.ipv4.tcp_slow_start_after_idle=0",
        "--out",
        &out.to_string_lossy(),
    ]);
    assert!(ok, "{err}");
    let l = labels(&out);
    assert_eq!(l["server_sysctls"]["net.ipv4.tcp_fastopen"], "2");
    assert_eq!(
        l["server_sysctls"]["net.ipv4.tcp_slow_start_after_idle"],
        "0"
    );
    assert_eq!(l["client_sysctls"]["net.ipv4.tcp_fastopen"], "1");
    assert_eq!(l["server_route"]["initcwnd"], "4");
    assert_eq!(l["client_route"]["quickack"], "1");
    assert_eq!(l["server_software"], "nginx");
    let warnings = l["warnings"].to_string();
    assert!(warnings.contains("--drop-s2c 100000"), "{warnings}");
    assert!(err.contains("--drop-s2c 100000"), "{err}");
    assert!(!out.join("both.pcapng").exists());
    assert!(!out.join("work").exists());
    for f in [
        "client.pcapng",
        "server.pcapng",
        "middle.pcapng",
        "nginx.conf",
    ] {
        assert!(out.join(f).exists(), "{f}");
    }

    // TLS: nginx's and HAProxy's certificate paths outlive the run.
    for (name, conf, directive) in [
        ("hrr-nginx", "nginx.conf", "ssl_certificate "),
        ("tfo-haproxy", "haproxy.cfg", " crt "),
    ] {
        let out = dir.path(name);
        let (ok, _, err, _) = lab(&[
            "run",
            name,
            "--rtt",
            "10ms",
            "--runs",
            "1",
            "--out",
            &out.to_string_lossy(),
        ]);
        assert!(ok, "{name}: {err}");
        let text = std::fs::read_to_string(out.join(conf)).unwrap();
        let path = text
            .split(directive)
            .nth(1)
            .and_then(|rest| rest.split([';', ' ', '\n']).next())
            .unwrap_or_else(|| panic!("{name}: no {directive:?} in {text}"));
        assert!(
            std::path::Path::new(path).exists(),
            "{name}: {path} is gone"
        );
        let l = labels(&out);
        assert_eq!(l["server_config"], conf);
        assert_eq!(l["certificates"]["private_keys"], true, "{name}");
        assert!(err.contains("private keys"), "{name}: {err}");
    }
}
