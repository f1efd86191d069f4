//! Network namespaces for the lab's two hosts, in one of two ways:
//!
//! - **Named** (root in the initial user namespace): `ip netns add`, so
//!   `ip netns list` shows them while a run is going. Every name is
//!   `rttdoc-<pid>-<n>-<role>`, so a later run can tell a crashed run's
//!   leftovers (the pid is gone) and remove them.
//! - **Held** (inside a user namespace, e.g. `unshare -Urn`): `ip netns`
//!   cannot bind-mount under /run/netns there, so a short-lived thread
//!   unshares its network namespace and the lab keeps an open descriptor
//!   to it. The namespace lives as long as that descriptor or a process
//!   inside it; nothing on disk can be left behind.
//!
//! Either way, commands enter a namespace with `setns(2)` on its
//! descriptor just before they exec, and dropping a [`Netns`] kills every
//! process inside it.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::os::unix::process::CommandExt;
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;

pub const PREFIX: &str = "rttdoc-";

/// How this process can make namespaces (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Named,
    Held,
}

/// A network namespace that is emptied (every process inside killed) and
/// released on drop.
pub struct Netns {
    pub name: String,
    file: File,
    mode: Mode,
}

/// Namespaces alive in this process, for the signal handler's cleanup:
/// (name, mode, namespace inode).
static LIVE: Mutex<Vec<(String, Mode, u64)>> = Mutex::new(Vec::new());

fn ip(args: &[&str]) -> io::Result<Output> {
    let out = Command::new("ip")
        .args(args)
        .stdin(Stdio::null())
        .output()?;
    if !out.status.success() {
        return Err(io::Error::other(format!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(out)
}

/// Whether this process runs in the machine's initial user namespace,
/// where root may bind-mount namespaces under /run/netns.
pub fn in_initial_user_namespace() -> bool {
    std::fs::read_to_string("/proc/self/uid_map")
        .map(|m| {
            let f: Vec<&str> = m.split_whitespace().collect();
            f == ["0", "0", "4294967295"]
        })
        .unwrap_or(false)
}

/// The way namespaces are made here.
pub fn mode() -> Mode {
    if in_initial_user_namespace() {
        Mode::Named
    } else {
        Mode::Held
    }
}

/// A new network namespace held by a descriptor only: a scratch thread
/// unshares its own namespace (allowed per thread for CLONE_NEWNET) and
/// opens it; the thread then ends and the descriptor keeps it alive.
fn unshare_held() -> io::Result<File> {
    std::thread::spawn(|| {
        // SAFETY: unshare affects only this scratch thread.
        if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
            let e = io::Error::last_os_error();
            return Err(io::Error::new(
                e.kind(),
                format!("cannot create a network namespace (unshare: {e})"),
            ));
        }
        File::open("/proc/thread-self/ns/net")
    })
    .join()
    .map_err(|_| io::Error::other("namespace thread panicked"))?
}

fn inode(file: &File) -> u64 {
    file.metadata().map(|m| m.ino()).unwrap_or(0)
}

impl Netns {
    pub fn create(name: &str) -> io::Result<Netns> {
        let mode = mode();
        // Journaled first: a run killed right after `ip netns add` still
        // leaves its name for the next run to remove.
        crate::journal::record_namespace(name, mode == Mode::Named)?;
        let file = match mode {
            Mode::Named => {
                ip(&["netns", "add", name])?;
                File::open(format!("/run/netns/{name}"))?
            }
            Mode::Held => unshare_held()?,
        };
        let ns = Netns {
            name: name.to_string(),
            file,
            mode,
        };
        if let Ok(mut live) = LIVE.lock() {
            live.push((ns.name.clone(), mode, inode(&ns.file)));
        }
        crate::journal::set_namespace_inode(&ns.name, inode(&ns.file));
        ns.run(&["ip", "link", "set", "lo", "up"])?;
        Ok(ns)
    }

    /// A command that runs inside the namespace.
    pub fn command(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        let fd = self.file.as_raw_fd();
        // SAFETY: setns is async-signal-safe; the descriptor is open in
        // the child until exec (it is close-on-exec, so it goes then).
        unsafe {
            c.pre_exec(move || {
                if libc::setns(fd, libc::CLONE_NEWNET) != 0 {
                    return Err(io::Error::last_os_error());
                }
                Ok(())
            });
        }
        c
    }

    /// Runs a command inside the namespace and fails if it fails.
    pub fn run(&self, argv: &[&str]) -> io::Result<Output> {
        let out = self
            .command(argv[0])
            .args(&argv[1..])
            .stdin(Stdio::null())
            .output()?;
        if !out.status.success() {
            return Err(io::Error::other(format!(
                "in {}: {}: {}",
                self.name,
                argv.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        Ok(out)
    }

    /// Sets a sysctl inside the namespace, e.g. `net.ipv4.tcp_fastopen`.
    /// Not every key is per network namespace: a global one (`vm.*`,
    /// `net.core.rmem_max`, `net.ipv4.tcp_allowed_congestion_control`, ...)
    /// written here changes the whole machine. So the machine's value is
    /// journaled before the write and kept in the journal (restored after
    /// the run, or by the next run after a crash) when the write changed it.
    pub fn sysctl(&self, key: &str, value: &str) -> io::Result<()> {
        let before = crate::journal::guard_sysctl(key)?;
        let result = self
            .run(&["sysctl", "-q", "-w", &format!("{key}={value}")])
            .map(|_| ());
        if let Some(before) = before {
            let after = crate::journal::read_sysctl(key).unwrap_or_default();
            if after == before.value {
                if before.added {
                    crate::journal::forget_sysctl(key);
                }
            } else {
                eprintln!(
                    "rttdoc lab: note: {key} is not per network namespace: setting it changed the \
                     machine's value ({:?} -> {after:?}); the lab puts it back after the run",
                    before.value
                );
            }
        }
        result
    }

    /// Moves a network interface (by name) from the current namespace here.
    pub fn adopt(&self, ifname: &str) -> io::Result<()> {
        // iproute2 takes a path for `netns`: our own descriptor's.
        let path = format!("/proc/{}/fd/{}", std::process::id(), self.file.as_raw_fd());
        ip(&["link", "set", ifname, "netns", &path]).map(|_| ())
    }
}

/// Every process whose network namespace has this inode.
pub(crate) fn pids_in(ns_inode: u64) -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::metadata(format!("/proc/{pid}/ns/net"))
                .map(|m| m.ino() == ns_inode)
                .unwrap_or(false)
        })
        .collect()
}

fn release(name: &str, mode: Mode, ns_inode: u64) {
    let me = std::process::id() as i32;
    for pid in pids_in(ns_inode) {
        if pid != me {
            // SAFETY: sending a signal to a pid has no memory effects.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
    if mode == Mode::Named {
        let _ = ip(&["netns", "del", name]);
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let ino = inode(&self.file);
        release(&self.name, self.mode, ino);
        if let Ok(mut live) = LIVE.lock() {
            live.retain(|(_, _, i)| *i != ino);
        }
        crate::journal::forget_namespace(&self.name);
    }
}

/// Releases every namespace this process still holds (the signal
/// handler's cleanup; the descriptors close when the process exits).
pub fn release_all() {
    let live = LIVE.lock().map(|mut l| std::mem::take(&mut *l));
    for (name, mode, ino) in live.unwrap_or_default() {
        release(&name, mode, ino);
    }
}

/// Removes named namespaces left behind by lab runs whose process is gone
/// and that no journal listed (a run of an older rttdoc). Held namespaces
/// vanish with their last process; the journal finds those processes.
/// Returns the names removed.
pub fn remove_stale() -> Vec<String> {
    let mut removed = Vec::new();
    if mode() != Mode::Named {
        return removed;
    }
    let Ok(out) = Command::new("ip").args(["netns", "list"]).output() else {
        return removed;
    };
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let name = line.split_whitespace().next().unwrap_or("");
        let Some(rest) = name.strip_prefix(PREFIX) else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if pid != std::process::id() && !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            let ino = std::fs::metadata(format!("/run/netns/{name}"))
                .map(|m| m.ino())
                .unwrap_or(0);
            release(name, Mode::Named, ino);
            removed.push(name.to_string());
        }
    }
    removed
}
