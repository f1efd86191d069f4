//! Network namespaces, made and removed with iproute2. Every namespace the
//! lab makes is named `rttdoc-<pid>-<n>-<role>`, so a later run can tell a
//! crashed run's leftovers (the pid is gone) and remove them.

use std::io;
use std::process::{Command, Output, Stdio};

pub const PREFIX: &str = "rttdoc-";

/// A network namespace that is deleted (with everything in it) on drop.
pub struct Netns {
    pub name: String,
}

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

impl Netns {
    pub fn create(name: &str) -> io::Result<Netns> {
        ip(&["netns", "add", name])?;
        let ns = Netns {
            name: name.to_string(),
        };
        ns.run(&["ip", "link", "set", "lo", "up"])?;
        Ok(ns)
    }

    /// A command that runs inside the namespace.
    pub fn command(&self, program: &str) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.name, program]);
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

    /// Sets a (namespace-local) sysctl, e.g. `net.ipv4.tcp_fastopen`.
    pub fn sysctl(&self, key: &str, value: &str) -> io::Result<()> {
        self.run(&["sysctl", "-q", "-w", &format!("{key}={value}")])
            .map(|_| ())
    }

    /// Moves a network interface (by name) from the current namespace here.
    pub fn adopt(&self, ifname: &str) -> io::Result<()> {
        ip(&["link", "set", ifname, "netns", &self.name]).map(|_| ())
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        // Kill anything still running inside, then remove the namespace.
        if let Ok(out) = ip(&["netns", "pids", &self.name]) {
            for pid in String::from_utf8_lossy(&out.stdout).split_whitespace() {
                if let Ok(pid) = pid.parse::<i32>() {
                    // SAFETY: sending a signal to a pid has no memory effects.
                    unsafe { libc::kill(pid, libc::SIGKILL) };
                }
            }
        }
        let _ = ip(&["netns", "del", &self.name]);
    }
}

/// Removes namespaces left behind by lab runs whose process is gone.
/// Returns how many were removed.
pub fn remove_stale() -> usize {
    let Ok(out) = Command::new("ip").args(["netns", "list"]).output() else {
        return 0;
    };
    let mut removed = 0;
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let name = line.split_whitespace().next().unwrap_or("");
        let Some(rest) = name.strip_prefix(PREFIX) else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if pid != std::process::id() && !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            drop(Netns {
                name: name.to_string(),
            });
            removed += 1;
        }
    }
    removed
}

/// Lists this process's lab namespaces (for tests that check cleanup).
pub fn ours() -> Vec<String> {
    let mine = format!("{PREFIX}{}-", std::process::id());
    Command::new("ip")
        .args(["netns", "list"])
        .output()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .filter_map(|l| l.split_whitespace().next())
                .filter(|n| n.starts_with(&mine))
                .map(String::from)
                .collect()
        })
        .unwrap_or_default()
}
