//! The journal of what a lab run changes outside its own namespaces, so a
//! run killed by SIGKILL (no handler runs) is cleaned up by the next one.
//!
//! Before the lab changes anything host-wide (a sysctl of the machine, such
//! as `net.ipv4.tcp_allowed_congestion_control`) it writes the value it is
//! about to replace to `<dir>/<pid>.json`; it also lists there the
//! namespaces it made and the scratch directories it uses. A run that ends
//! (normally, with an error, or on Ctrl-C / SIGTERM / SIGHUP) puts every
//! value back and removes its journal. The next run reads the journals of
//! runs whose process is gone, restores what they list, kills the processes
//! still inside their namespaces, removes the namespaces and scratch
//! directories, and says what it did.
//!
//! `<dir>` is `/run/rttdoc-lab` for root, and for a rootless run (inside a
//! user namespace) a directory of the outer user's own under the temporary
//! directory: two rootless runs of one user see each other's journals.

use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

/// One sysctl of the machine the run changed.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SysctlChange {
    /// Dotted name, e.g. `net.ipv4.tcp_allowed_congestion_control`.
    pub key: String,
    /// The value before the run changed it.
    pub before: String,
}

/// A namespace the run made: its name (`ip netns` name when named) and
/// inode (to find the processes left inside).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct NamespaceEntry {
    pub name: String,
    pub named: bool,
    pub inode: u64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Entries {
    pid: u32,
    /// The process's start time (clock ticks since boot, /proc/PID/stat
    /// field 22): a pid reused by another process is not this run.
    start_time: u64,
    sysctls: Vec<SysctlChange>,
    namespaces: Vec<NamespaceEntry>,
    scratch: Vec<PathBuf>,
    /// Processes the run started in its namespaces: (pid, start time). A
    /// later run in another user namespace cannot see which namespace a
    /// process is in (/proc/PID/ns is closed to it), so it finds them, and
    /// their descendants, by pid.
    #[serde(default)]
    processes: Vec<(u32, u64)>,
}

/// This process's journal, once it has one.
static CURRENT: Mutex<Option<(PathBuf, Entries)>> = Mutex::new(None);

/// The directory journals live in (see the module docs).
pub fn dir() -> PathBuf {
    if crate::netns::in_initial_user_namespace() {
        PathBuf::from("/run/rttdoc-lab")
    } else {
        std::env::temp_dir().join(format!("rttdoc-lab-{}", outer_uid()))
    }
}

/// The user outside this user namespace (the first line of uid_map maps
/// our uid 0 to it).
fn outer_uid() -> u32 {
    std::fs::read_to_string("/proc/self/uid_map")
        .ok()
        .and_then(|m| m.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(0)
}

/// Creates the journal directory, private to this user; refuses one that
/// belongs to someone else (a shared temporary directory).
fn ensure_dir() -> io::Result<PathBuf> {
    let d = dir();
    match std::fs::DirBuilder::new().mode(0o700).create(&d) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    let meta = std::fs::symlink_metadata(&d)?;
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    if !meta.is_dir() || meta.uid() != me {
        return Err(io::Error::other(format!(
            "{} is not a directory of this user: refusing to keep the lab's journal there",
            d.display()
        )));
    }
    Ok(d)
}

/// Field 22 of /proc/PID/stat (after the parenthesised command name).
fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

fn sysctl_path(key: &str) -> PathBuf {
    Path::new("/proc/sys").join(key.replace('.', "/"))
}

/// Reads a sysctl of the machine (this process's namespace).
pub fn read_sysctl(key: &str) -> io::Result<String> {
    Ok(std::fs::read_to_string(sysctl_path(key))?
        .trim()
        .to_string())
}

fn write_sysctl(key: &str, value: &str) -> io::Result<()> {
    std::fs::write(sysctl_path(key), value)
}

/// Writes the journal file (whole, through a rename: a kill mid-write
/// leaves the previous version).
fn save(path: &Path, e: &Entries) -> io::Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, serde_json::to_vec_pretty(e)?)?;
    std::fs::rename(&tmp, path)
}

/// Adds to this process's journal (creating it) and saves it before the
/// caller makes the change.
fn record(f: impl FnOnce(&mut Entries)) -> io::Result<()> {
    let mut g = CURRENT.lock().unwrap_or_else(|e| e.into_inner());
    if g.is_none() {
        let pid = std::process::id();
        let path = ensure_dir()?.join(format!("{pid}.json"));
        *g = Some((
            path,
            Entries {
                pid,
                start_time: start_time(pid).unwrap_or(0),
                ..Default::default()
            },
        ));
    }
    let (path, entries) = g.as_mut().expect("set above");
    f(entries);
    save(path, entries)
}

fn update(f: impl FnOnce(&mut Entries)) {
    let mut g = CURRENT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((path, entries)) = g.as_mut() {
        f(entries);
        let _ = save(path, entries);
    }
}

/// Sets a sysctl of the machine, journaling its value first. Returns the
/// previous value.
pub fn set_host_sysctl(key: &str, value: &str) -> io::Result<String> {
    let before = read_sysctl(key)?;
    record(|e| {
        if !e.sysctls.iter().any(|s| s.key == key) {
            e.sysctls.push(SysctlChange {
                key: key.to_string(),
                before: before.clone(),
            });
        }
    })?;
    if let Err(err) = write_sysctl(key, value) {
        forget_sysctl(key);
        return Err(err);
    }
    Ok(before)
}

/// The machine's value of a sysctl before a write, and whether this write
/// put it in the journal (an earlier one may have).
pub struct Guarded {
    pub value: String,
    pub added: bool,
}

/// Journals a sysctl of the machine that a write inside a namespace may
/// change (a key that is not per network namespace is the machine's).
pub fn guard_sysctl(key: &str) -> io::Result<Option<Guarded>> {
    let Ok(value) = read_sysctl(key) else {
        // Not visible here (a key only namespaces have): nothing host-wide.
        return Ok(None);
    };
    let mut added = false;
    record(|e| {
        if !e.sysctls.iter().any(|s| s.key == key) {
            added = true;
            e.sysctls.push(SysctlChange {
                key: key.to_string(),
                before: value.clone(),
            });
        }
    })?;
    Ok(Some(Guarded { value, added }))
}

/// Drops a journaled sysctl (it turned out to be namespace-local, or the
/// write failed).
pub fn forget_sysctl(key: &str) {
    update(|e| e.sysctls.retain(|s| s.key != key));
}

/// Journals a namespace (before it is made, so a kill in between still
/// finds it by name).
pub fn record_namespace(name: &str, named: bool) -> io::Result<()> {
    record(|e| {
        e.namespaces.push(NamespaceEntry {
            name: name.to_string(),
            named,
            inode: 0,
        })
    })
}

/// The namespace's inode, once it exists.
pub fn set_namespace_inode(name: &str, inode: u64) {
    update(|e| {
        for n in e.namespaces.iter_mut().filter(|n| n.name == name) {
            n.inode = inode;
        }
    });
}

pub fn forget_namespace(name: &str) {
    update(|e| e.namespaces.retain(|n| n.name != name));
}

/// Journals a process the run started (a server, a client, a daemon
/// found through its pid file).
pub fn record_process(pid: u32) -> io::Result<()> {
    // Without a start time a reused pid could not be told apart: a process
    // already gone needs no journal anyway.
    let Some(started) = start_time(pid) else {
        return Ok(());
    };
    record(|e| e.processes.push((pid, started)))
}

/// A process that has exited and waits for its parent to reap it.
fn is_zombie(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| Some(s[s.rfind(')')? + 2..].starts_with('Z')))
        .unwrap_or(true)
}

pub fn forget_process(pid: u32) {
    update(|e| e.processes.retain(|(p, _)| *p != pid));
}

/// `roots` and every process descended from them (parents from
/// /proc/PID/stat, readable for any process).
fn with_descendants(roots: &[i32]) -> Vec<i32> {
    let mut parent_of = Vec::new();
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for e in dir.filter_map(|e| e.ok()) {
            let Some(pid) = e.file_name().to_str().and_then(|p| p.parse::<i32>().ok()) else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                continue;
            };
            let ppid = stat
                .rfind(')')
                .and_then(|i| stat[i + 2..].split_whitespace().nth(1)?.parse::<i32>().ok());
            if let Some(ppid) = ppid {
                parent_of.push((pid, ppid));
            }
        }
    }
    let mut all: Vec<i32> = roots.to_vec();
    let mut i = 0;
    // Bounded: each pass adds only pids not yet listed.
    while i < all.len() {
        let p = all[i];
        for (child, _) in parent_of.iter().filter(|(_, pp)| *pp == p) {
            if !all.contains(child) {
                all.push(*child);
            }
        }
        i += 1;
    }
    all
}

/// Journals a scratch directory (removed by whoever cleans up).
pub fn record_scratch(path: &Path) -> io::Result<()> {
    record(|e| e.scratch.push(path.to_path_buf()))
}

pub fn forget_scratch(path: &Path) {
    update(|e| e.scratch.retain(|p| p != path));
}

/// Puts back every sysctl this process journaled and removes its scratch
/// directories and its journal (namespaces are released by their owners
/// first). Returns what it restored, as sentences.
pub fn restore_own() -> Vec<String> {
    let taken = CURRENT.lock().unwrap_or_else(|e| e.into_inner()).take();
    let Some((path, entries)) = taken else {
        return Vec::new();
    };
    let done = undo(&entries);
    let _ = std::fs::remove_file(&path);
    done
}

/// Undoes a journal: processes in its namespaces killed, named namespaces
/// deleted, sysctls put back where they differ, scratch removed.
fn undo(e: &Entries) -> Vec<String> {
    let mut done = Vec::new();
    let me = std::process::id() as i32;
    let roots: Vec<i32> = e
        .processes
        .iter()
        .filter(|(pid, started)| *pid as i32 != me && alive(*pid, *started))
        .map(|(pid, _)| *pid as i32)
        .collect();
    for pid in with_descendants(&roots) {
        if pid == me || is_zombie(pid) {
            continue;
        }
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm"))
            .map(|c| c.trim().to_string())
            .unwrap_or_default();
        // SAFETY: sending a signal has no memory effects.
        if unsafe { libc::kill(pid, libc::SIGKILL) } == 0 {
            done.push(format!(
                "killed {comm} (pid {pid}), left running by the lab run"
            ));
        }
    }
    for ns in &e.namespaces {
        let inode = if ns.inode != 0 {
            ns.inode
        } else if ns.named {
            std::fs::metadata(format!("/run/netns/{}", ns.name))
                .map(|m| m.ino())
                .unwrap_or(0)
        } else {
            0
        };
        let pids: Vec<i32> = if inode == 0 {
            Vec::new()
        } else {
            crate::netns::pids_in(inode)
                .into_iter()
                .filter(|p| *p != me)
                .collect()
        };
        for pid in &pids {
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .map(|c| c.trim().to_string())
                .unwrap_or_default();
            // SAFETY: sending a signal has no memory effects.
            if unsafe { libc::kill(*pid, libc::SIGKILL) } == 0 {
                done.push(format!(
                    "killed {comm} (pid {pid}) left in namespace {}",
                    ns.name
                ));
            }
        }
        if ns.named && Path::new(&format!("/run/netns/{}", ns.name)).exists() {
            let ok = std::process::Command::new("ip")
                .args(["netns", "del", &ns.name])
                .output()
                .is_ok_and(|o| o.status.success());
            if ok {
                done.push(format!("removed namespace {}", ns.name));
            }
        }
    }
    for s in &e.sysctls {
        match read_sysctl(&s.key) {
            Ok(now) if now != s.before => match write_sysctl(&s.key, &s.before) {
                Ok(()) => done.push(format!("restored {} from {now:?} to {:?}", s.key, s.before)),
                Err(err) => done.push(format!(
                    "could NOT restore {} to {:?} ({err}); do it by hand: sysctl -w {}='{}'",
                    s.key, s.before, s.key, s.before
                )),
            },
            _ => {}
        }
    }
    for p in &e.scratch {
        if p.exists() && std::fs::remove_dir_all(p).is_ok() {
            done.push(format!("removed {}", p.display()));
        }
    }
    done
}

/// Cleans up after lab runs that died without cleaning up (SIGKILL, a
/// crash, a power cut of the VM's process): every journal whose process is
/// gone. Returns what it restored, as sentences.
pub fn recover() -> Vec<String> {
    let Ok(d) = ensure_dir() else {
        return Vec::new();
    };
    let Ok(list) = std::fs::read_dir(&d) else {
        return Vec::new();
    };
    let mut done = Vec::new();
    for entry in list.filter_map(|e| e.ok()) {
        let path = entry.path();
        match path.extension().and_then(|x| x.to_str()) {
            Some("json") => {}
            Some("tmp") if stale_pid(&path).is_some() => {
                let _ = std::fs::remove_file(&path);
                continue;
            }
            _ => continue,
        }
        let Ok(bytes) = std::fs::read(&path) else {
            continue;
        };
        let Ok(e) = serde_json::from_slice::<Entries>(&bytes) else {
            continue;
        };
        if e.pid == std::process::id() || alive(e.pid, e.start_time) {
            continue;
        }
        let undone = undo(&e);
        if !undone.is_empty() {
            done.push(format!("lab run {} had died without cleaning up:", e.pid));
            done.extend(undone.into_iter().map(|s| format!("  {s}")));
        }
        let _ = std::fs::remove_file(&path);
    }
    done
}

/// The pid in a journal file's name, if that process is gone.
fn stale_pid(path: &Path) -> Option<u32> {
    let pid: u32 = path.file_stem()?.to_str()?.parse().ok()?;
    (!Path::new(&format!("/proc/{pid}")).exists()).then_some(pid)
}

fn alive(pid: u32, started: u64) -> bool {
    match start_time(pid) {
        Some(t) => started == 0 || t == started,
        None => false,
    }
}
