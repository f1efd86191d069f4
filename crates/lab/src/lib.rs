//! The lab: two hosts with real kernel TCP stacks (network namespaces),
//! joined by a userspace WAN emulator on TUN devices, running real servers
//! and clients, capturing everything, with the truth about what was
//! injected written beside the captures.
//!
//! ```text
//!  [client netns]  rtdc…  <-TUN->  emulator (delay, jitter, loss, rate)  <-TUN->  rtds…  [server netns]
//!   10.77.0.1                       records both sides -> pcapng                       10.77.0.2
//! ```
//!
//! It shares nothing with the analyzer but the capture format.

pub mod emulator;
pub mod journal;
pub mod netns;
pub mod pcapng;
pub mod peer;
pub mod scenario;
pub mod tls_peer;
pub mod tun;

use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};

use emulator::Emulator;
pub use emulator::{EmulatorReport, PathConfig, Side, WanConfig};
use netns::Netns;
use tun::Tun;

pub const CLIENT_IP: &str = "10.77.0.1";
pub const SERVER_IP: &str = "10.77.0.2";
/// The server host's second address: a second server, as the client sees
/// it (a scenario whose client talks to two servers at once).
pub const SERVER_IP_2: &str = "10.77.0.3";
/// Congestion control in both lab hosts.
pub const CONGESTION_CONTROL: &str = "cubic";

static COUNTER: AtomicU32 = AtomicU32::new(0);

/// Set by the signal thread before it cleans up.
static INTERRUPTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether a signal is being handled: the process is about to exit with
/// 128 + signal, and a failure the cleanup caused is not the run's result.
pub fn interrupted() -> bool {
    INTERRUPTED.load(std::sync::atomic::Ordering::SeqCst)
}

/// Makes Ctrl-C and SIGTERM clean up instead of leaving namespaces behind:
/// the signals are blocked in this thread (and so in every thread started
/// after it) and a dedicated thread waits for them, removes this process's
/// namespaces (killing what runs inside), restores host settings and exits
/// with 128 + signal. Child processes get an empty mask from `Command`.
/// Call it early, from the main thread; it runs once.
pub fn cleanup_on_signals() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: plain sigset manipulation on a local set.
        let set = unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGINT);
            libc::sigaddset(&mut set, libc::SIGTERM);
            libc::sigaddset(&mut set, libc::SIGHUP);
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
            set
        };
        std::thread::spawn(move || {
            let mut sig: libc::c_int = 0;
            // SAFETY: waits for one of the blocked signals in `set`.
            unsafe { libc::sigwait(&set, &mut sig) };
            INTERRUPTED.store(true, std::sync::atomic::Ordering::SeqCst);
            netns::release_all();
            let restored = journal::restore_own();
            eprintln!("rttdoc lab: interrupted, namespaces removed");
            for r in restored {
                eprintln!("rttdoc lab: {r}");
            }
            std::process::exit(128 + sig);
        });
    });
}

/// A running two-host topology. Dropping it (or [`Lab::finish`]) stops the
/// emulator, kills what runs in the namespaces and removes them; the TUN
/// devices go with them.
pub struct Lab {
    pub client: Netns,
    pub server: Netns,
    /// The TUN device names inside each namespace.
    pub client_dev: String,
    pub server_dev: String,
    emulator: Option<Emulator>,
    /// What the hosts' TCP actually runs (cubic unless a user namespace
    /// could not allow it).
    pub congestion_control: String,
    /// Declared last, so it drops after the namespaces: puts back what the
    /// run changed on the machine and removes its journal.
    _journal: JournalGuard,
}

/// Restores this process's journaled host changes when dropped, on success
/// and on error alike (see [`journal`]).
struct JournalGuard;

impl Drop for JournalGuard {
    fn drop(&mut self) {
        journal::restore_own();
    }
}

const ALLOWED_CC: &str = "net.ipv4.tcp_allowed_congestion_control";

/// Makes sure namespaces may choose [`CONGESTION_CONTROL`]; returns whether
/// they can use it. The list is the machine's (not per namespace): adding
/// cubic is journaled first and undone after the run. Inside a user
/// namespace the list is read-only, and without cubic in it the hosts keep
/// the machine's default.
fn allow_congestion_control() -> io::Result<bool> {
    let allowed = journal::read_sysctl(ALLOWED_CC)?;
    if allowed.split_whitespace().any(|a| a == CONGESTION_CONTROL) {
        return Ok(true);
    }
    match journal::set_host_sysctl(ALLOWED_CC, &format!("{allowed} {CONGESTION_CONTROL}")) {
        Ok(_) => {}
        Err(e) if !netns::in_initial_user_namespace() => {
            eprintln!(
                "rttdoc lab: warning: cannot allow {CONGESTION_CONTROL} from a user namespace ({e}); \
                 the hosts keep the machine's default congestion control. Scenarios that depend on \
                 {CONGESTION_CONTROL} (slow start after idle) need, once, as root: \
                 sysctl -w net.ipv4.tcp_allowed_congestion_control='{allowed} {CONGESTION_CONTROL}'"
            );
            return Ok(false);
        }
        Err(e) => return Err(e),
    }
    Ok(true)
}

/// Cleans up after earlier runs that could not (killed with SIGKILL, or
/// an rttdoc without a journal): prints what it restored.
pub fn recover_earlier_runs() {
    for line in journal::recover() {
        eprintln!("rttdoc lab: {line}");
    }
    let stale = netns::remove_stale();
    if !stale.is_empty() {
        eprintln!(
            "rttdoc lab: removed namespaces of lab runs that are gone: {}",
            stale.join(", ")
        );
    }
}

/// What the lab needs from the machine, as a sentence saying what to change.
pub fn check_environment() -> Result<(), String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err(
            "the lab needs root or a user namespace: it creates network namespaces, TUN \
                    devices and namespace sysctls. Run it with sudo, or rootless as \
                    `unshare -Urn rttdoc lab ...` (with /dev/net/tun readable and writable by you)"
                .into(),
        );
    }
    let rootless = !netns::in_initial_user_namespace();
    let tun = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/net/tun");
    if let Err(e) = tun {
        return Err(if rootless {
            format!(
                "cannot open /dev/net/tun ({e}) inside this user namespace: the device must be \
                 accessible to your own user outside it (e.g. `sudo chmod 0666 /dev/net/tun`, \
                 or a udev rule giving it to your group), or run the lab as root"
            )
        } else {
            format!("cannot open /dev/net/tun ({e}): load the tun module (`modprobe tun`)")
        });
    }
    if std::process::Command::new("ip").arg("-V").output().is_err() {
        return Err("the `ip` command (iproute2) is needed: apt-get install iproute2".into());
    }
    Ok(())
}

fn setup_side(
    ns: &Netns,
    tun: &Tun,
    locals: &[&str],
    peers: &[&str],
    mtu: u32,
    pin_cc: bool,
) -> io::Result<()> {
    // No IPv6: link-local autoconfiguration would put router solicitations
    // on the path, shifting scripted drops ("the 1st packet") off the SYN.
    ns.sysctl("net.ipv6.conf.all.disable_ipv6", "1")?;
    ns.sysctl("net.ipv6.conf.default.disable_ipv6", "1")?;
    ns.adopt(&tun.name)?;
    ns.sysctl(&format!("net.ipv6.conf.{}.disable_ipv6", tun.name), "1")?;
    // Linux's stock congestion control, whatever the host runs (this VM's
    // default is BBR, which ignores tcp_slow_start_after_idle, for one).
    if pin_cc {
        ns.sysctl("net.ipv4.tcp_congestion_control", CONGESTION_CONTROL)?;
    }
    // The first address is the one the host's packets come from.
    for local in locals {
        ns.run(&[
            "ip",
            "addr",
            "add",
            &format!("{local}/32"),
            "dev",
            &tun.name,
        ])?;
    }
    ns.run(&[
        "ip",
        "link",
        "set",
        &tun.name,
        "up",
        "mtu",
        &mtu.to_string(),
    ])?;
    for peer in peers {
        ns.run(&[
            "ip",
            "route",
            "add",
            &format!("{peer}/32"),
            "dev",
            &tun.name,
        ])?;
    }
    Ok(())
}

impl Lab {
    pub fn start(config: &WanConfig) -> io::Result<Lab> {
        check_environment().map_err(io::Error::other)?;
        recover_earlier_runs();
        let journal = JournalGuard;
        let pin_cc = allow_congestion_control()?;
        let pid = std::process::id();
        let n = COUNTER.fetch_add(1, Ordering::SeqCst);
        let client = Netns::create(&format!("{}{pid}-{n}-c", netns::PREFIX))?;
        let server = Netns::create(&format!("{}{pid}-{n}-s", netns::PREFIX))?;
        let tag = format!("{}{n}", pid % 1_000_000);
        let ctun = Tun::create(&format!("rtdc{tag}"))?;
        let stun = Tun::create(&format!("rtds{tag}"))?;
        let servers = [SERVER_IP, SERVER_IP_2];
        setup_side(&client, &ctun, &[CLIENT_IP], &servers, config.mtu, pin_cc)?;
        setup_side(&server, &stun, &servers, &[CLIENT_IP], config.mtu, pin_cc)?;
        let congestion_control = String::from_utf8_lossy(
            &server
                .run(&["sysctl", "-n", "net.ipv4.tcp_congestion_control"])?
                .stdout,
        )
        .trim()
        .to_string();
        let (client_dev, server_dev) = (ctun.name.clone(), stun.name.clone());
        let emulator = Some(Emulator::start(ctun, stun, config));
        Ok(Lab {
            client,
            server,
            client_dev,
            server_dev,
            emulator,
            congestion_control,
            _journal: journal,
        })
    }

    /// Sets route attributes (e.g. `initcwnd 4`, `quickack 1`) on the route
    /// to the peer, on the client's or the server's side.
    pub fn route(&self, server_side: bool, attrs: &[&str]) -> io::Result<()> {
        let (ns, dev, peer) = if server_side {
            (&self.server, &self.server_dev, CLIENT_IP)
        } else {
            (&self.client, &self.client_dev, SERVER_IP)
        };
        let dest = format!("{peer}/32");
        let mut argv = vec!["ip", "route", "change", &dest, "dev", dev];
        argv.extend_from_slice(attrs);
        ns.run(&argv).map(|_| ())
    }

    /// Stops the emulator and tears the topology down.
    pub fn finish(mut self) -> EmulatorReport {
        self.emulator.take().expect("running").stop()
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        if let Some(e) = self.emulator.take() {
            e.stop();
        }
    }
}

/// Runs the built-in peer `kind` (`rttdoc lab peer KIND ARGS`).
pub fn run_peer(kind: &str, args: &[String]) -> Result<(), String> {
    let result = match kind {
        "tls-server" => tls_peer::TlsArgs::parse(args).map(|a| tls_peer::server(&a))?,
        "tls-client" => tls_peer::TlsArgs::parse(args).map(|a| tls_peer::client(&a))?,
        _ => peer::PeerArgs::parse(args).map(|a| peer::run(kind, &a))?,
    };
    result.map_err(|e| e.to_string())
}

/// Writes the client-side, server-side and mid-path captures. (No capture
/// of both hosts' interfaces in one file: every packet would be in it twice,
/// once per end, and an analysis of it would pair a packet with its own
/// copy; each vantage is its own file.)
pub fn write_captures(dir: &Path, report: &EmulatorReport) -> io::Result<()> {
    let side = |s: Side| -> Vec<(u32, i64, &[u8])> {
        report
            .packets
            .iter()
            .filter(|p| p.side == s)
            .map(|p| (0, p.ts_ns, p.data.as_slice()))
            .collect()
    };
    let file = |name: &str| std::fs::File::create(dir.join(name)).map(io::BufWriter::new);
    pcapng::write(file("client.pcapng")?, &["client"], &side(Side::Client))?;
    pcapng::write(file("server.pcapng")?, &["server"], &side(Side::Server))?;
    pcapng::write(file("middle.pcapng")?, &["middle"], &side(Side::Middle))
}
