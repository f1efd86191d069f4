//! A lab run killed with SIGKILL runs no cleanup at all: its namespaces,
//! servers, scratch directory and host-wide settings stay as they were.
//! The next run must find its journal, put everything back and say what it
//! did. Both as root (named namespaces, the machine's allowed congestion
//! controls changed) and rootless (`unshare -Urn`, where the leftovers are
//! processes in another user namespace).

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Lab runs time packets on a 2-core machine: one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

const ALLOWED_CC: &str = "/proc/sys/net/ipv4/tcp_allowed_congestion_control";
const BURST: &str = "/proc/sys/kernel/printk_ratelimit_burst";

fn lab_namespaces() -> Vec<String> {
    let out = Command::new("ip").args(["netns", "list"]).output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| n.starts_with("rttdoc-"))
        .map(String::from)
        .collect()
}

/// The lab's TUN devices visible here (`rtdc…`/`rtds…`).
fn lab_links() -> Vec<String> {
    let out = Command::new("ip").args(["-o", "link"]).output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split(": ").nth(1))
        .filter(|n| n.starts_with("rtdc") || n.starts_with("rtds"))
        .map(String::from)
        .collect()
}

/// Live (not zombie) processes whose command line contains `needle`.
fn processes_with(needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().filter_map(|e| e.ok()) {
        let Some(pid) = e.file_name().to_str().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let zombie = stat
            .rfind(')')
            .is_some_and(|i| stat[i + 2..].starts_with('Z'));
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline"))
            .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
            .unwrap_or_default();
        if !zombie && cmdline.contains(needle) {
            found.push(format!("{pid} {cmdline}"));
        }
    }
    found
}

fn read(path: &str) -> String {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// Puts a sysctl back when dropped (on failure too).
struct SysctlGuard(&'static str, String);

impl Drop for SysctlGuard {
    fn drop(&mut self) {
        let _ = std::fs::write(self.0, &self.1);
    }
}

/// Puts a file's mode back when dropped.
struct ModeGuard(PathBuf, u32);

impl Drop for ModeGuard {
    fn drop(&mut self) {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(&self.0, std::fs::Permissions::from_mode(self.1));
    }
}

/// Kills the child when dropped, so a failed assertion leaves no run going.
struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Waits (bounded) until `journal` lists a started process, i.e. the run
/// is mid-way: namespaces up, server running, client going.
fn wait_mid_run(journal: &Path, child: &mut Child) -> serde_json::Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the lab run ended ({status}) before it could be killed mid-way");
        }
        if let Ok(bytes) = std::fs::read(journal) {
            if let Ok(doc) = serde_json::from_slice::<serde_json::Value>(&bytes) {
                let procs = doc["processes"].as_array().map_or(0, |p| p.len());
                if procs >= 2 {
                    return doc;
                }
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("no journal with running processes at {}", journal.display());
}

fn sigkill(child: &mut Child) {
    // SAFETY: signalling our own child process.
    unsafe { libc_kill(child.id() as i32, 9) };
    let status = child.wait().unwrap();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(9)
    );
}

extern "C" {
    #[link_name = "kill"]
    fn libc_kill(pid: i32, sig: i32) -> i32;
}

#[test]
fn a_run_after_a_sigkilled_one_restores_the_host_as_root() {
    if !require(
        "a_run_after_a_sigkilled_one_restores_the_host_as_root",
        &["ip", "nginx", "curl"],
        true,
    ) {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = TempDir::new("lab-sigkill");
    // The lab must change something host-wide: namespaces may only pick an
    // allowed congestion control, so without cubic in the machine's list
    // the lab adds it. Take it out for this test (put back on drop).
    let original_cc = read(ALLOWED_CC);
    let _cc_guard = SysctlGuard(ALLOWED_CC, original_cc.clone());
    let without_cubic: Vec<&str> = original_cc
        .split_whitespace()
        .filter(|a| *a != "cubic")
        .collect();
    std::fs::write(ALLOWED_CC, without_cubic.join(" ")).unwrap();
    let before_cc = read(ALLOWED_CC);
    // A sysctl that is not per network namespace, set as a server sysctl:
    // written inside the namespace it changes the machine (a harmless one:
    // how many kernel messages a burst may print).
    let before_burst = read(BURST);
    let _burst_guard = SysctlGuard(BURST, before_burst.clone());
    let burst: u64 = before_burst.parse().unwrap();
    let before = (lab_namespaces(), lab_links());

    // Two requests 2 s apart per run: long enough to be killed mid-way.
    let child = Command::new(rttdoc_bin())
        .args([
            "lab",
            "run",
            "ssai-nginx",
            "--rtt",
            "20ms",
            "--runs",
            "3",
            "--out",
        ])
        .arg(dir.path("killed"))
        .arg("--server-sysctl")
        .arg(format!("kernel.printk_ratelimit_burst={}", burst + 1))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut child = KillOnDrop(child);
    let pid = child.0.id();
    let journal = PathBuf::from(format!("/run/rttdoc-lab/{pid}.json"));
    let doc = wait_mid_run(&journal, &mut child.0);
    let scratch: Vec<String> = doc["scratch"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect();
    sigkill(&mut child.0);

    // What SIGKILL left: without it this test would prove nothing.
    let mine = format!("rttdoc-{pid}-");
    assert!(
        lab_namespaces().iter().any(|n| n.starts_with(&mine)),
        "the killed run left no namespace"
    );
    assert_ne!(
        read(ALLOWED_CC),
        before_cc,
        "the killed run changed nothing host-wide"
    );
    assert_eq!(read(BURST), (burst + 1).to_string());
    assert!(
        !processes_with(&scratch[0]).is_empty(),
        "no nginx left running"
    );

    let next = Command::new(rttdoc_bin())
        .args([
            "lab",
            "run",
            "syn-loss-control",
            "--rtt",
            "5ms",
            "--runs",
            "1",
            "--out",
        ])
        .arg(dir.path("next"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&next.stderr);
    assert!(next.status.success(), "{err}");
    assert!(err.contains(&format!("lab run {pid} had died")), "{err}");
    assert!(
        err.contains(&format!(
            "restored net.ipv4.tcp_allowed_congestion_control from \"{before_cc} cubic\" to \"{before_cc}\""
        )),
        "{err}"
    );
    assert!(err.contains(&format!("removed namespace {mine}")), "{err}");
    assert!(
        err.contains(&format!(
            "restored kernel.printk_ratelimit_burst from \"{}\" to \"{before_burst}\"",
            burst + 1
        )),
        "{err}"
    );
    assert!(err.contains("killed nginx"), "{err}");

    // Everything as it was before the killed run.
    assert_eq!(read(ALLOWED_CC), before_cc);
    assert_eq!(read(BURST), before_burst);
    assert_eq!((lab_namespaces(), lab_links()), before);
    for s in &scratch {
        assert!(processes_with(s).is_empty(), "{:?}", processes_with(s));
        assert!(!Path::new(s).exists(), "{s} left behind");
    }
    assert!(!journal.exists(), "the killed run's journal is still there");
    // The killed run's output directory holds no scratch (config, pid, pages).
    assert!(!dir.path("killed").join("work").exists());
}

#[test]
fn a_run_after_a_sigkilled_one_restores_the_host_rootless() {
    use std::os::unix::fs::PermissionsExt;
    if !require(
        "a_run_after_a_sigkilled_one_restores_the_host_rootless",
        &["ip", "setpriv", "unshare"],
        true,
    ) {
        return;
    }
    let probe = Command::new("setpriv")
        .args(["--reuid", "65534", "--regid", "65534", "--clear-groups"])
        .args(["unshare", "-Urn", "true"])
        .status()
        .unwrap();
    let msg = "a_run_after_a_sigkilled_one_restores_the_host_rootless: this kernel refuses unprivileged user namespaces";
    assert!(probe.success() || !in_ci(), "{msg}");
    if !probe.success() {
        eprintln!("SKIPPED {msg}");
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = TempDir::new("lab-sigkill-rootless");
    std::fs::set_permissions(&dir.0, std::fs::Permissions::from_mode(0o777)).unwrap();
    let bin = dir.path("rttdoc");
    std::fs::copy(rttdoc_bin(), &bin).unwrap();
    let bin_str = bin.to_string_lossy().to_string();
    let tun = Path::new("/dev/net/tun");
    let mode = std::fs::metadata(tun).unwrap().permissions().mode() & 0o7777;
    let _restore = ModeGuard(tun.to_path_buf(), mode);
    std::fs::set_permissions(tun, std::fs::Permissions::from_mode(0o666)).unwrap();
    let as_nobody = |args: &[&str]| {
        let mut c = Command::new("setpriv");
        c.args(["--reuid", "65534", "--regid", "65534", "--clear-groups"])
            .args(["unshare", "-Urn"])
            .arg(&bin)
            .args(args)
            .env("TMPDIR", &dir.0);
        c
    };
    let before_cc = read(ALLOWED_CC);
    let before = (lab_namespaces(), lab_links());
    assert!(processes_with(&bin_str).is_empty());

    // A slow reader: each run takes seconds, the server runs throughout.
    let killed = dir.path("killed").to_string_lossy().to_string();
    let child = as_nobody(&[
        "lab",
        "run",
        "slow-reader-builtin",
        "--rtt",
        "20ms",
        "--runs",
        "3",
        "--out",
        &killed,
    ])
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .unwrap();
    let mut child = KillOnDrop(child);
    // `unshare` without --fork execs: the child is the lab run itself.
    let pid = child.0.id();
    let journal = dir.0.join("rttdoc-lab-65534").join(format!("{pid}.json"));
    wait_mid_run(&journal, &mut child.0);
    sigkill(&mut child.0);
    let left = processes_with(&bin_str);
    assert!(!left.is_empty(), "the killed run left nothing running");

    let next = dir.path("next").to_string_lossy().to_string();
    let out = as_nobody(&[
        "lab",
        "run",
        "tfo-builtin",
        "--rtt",
        "5ms",
        "--runs",
        "1",
        "--out",
        &next,
    ])
    .output()
    .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains(&format!("lab run {pid} had died")), "{err}");
    assert!(err.contains("killed rttdoc"), "{err}");
    // Bounded: SIGKILLed processes may take a moment to go.
    let deadline = Instant::now() + Duration::from_secs(5);
    while !processes_with(&bin_str).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        processes_with(&bin_str).is_empty(),
        "left running: {:?}",
        processes_with(&bin_str)
    );
    assert!(!journal.exists(), "the killed run's journal is still there");
    let scratch_left: Vec<_> = std::fs::read_dir(&dir.0)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("rttdoc-lab-work-")
        })
        .map(|e| e.path())
        .collect();
    assert!(scratch_left.is_empty(), "{scratch_left:?}");
    assert_eq!(read(ALLOWED_CC), before_cc);
    assert_eq!((lab_namespaces(), lab_links()), before);
}
