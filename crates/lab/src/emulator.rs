//! The WAN emulator: relays IP packets between the client's and the
//! server's TUN devices, each direction with its own one-way delay, jitter,
//! random and scripted loss, rate limit with a drop-tail queue.
//!
//! Each direction is a reader thread (TUN -> decide fate and release time)
//! and a writer thread (sleep until the release time -> other TUN). Release
//! times never go backwards within a direction, so jitter delays packets but
//! does not reorder them, as on a real FIFO path. Every packet is recorded
//! twice, as the client saw it and as the server saw it, with the time it
//! left or reached that host: the lab's two vantage points.
//!
//! These VMs preempt, so timing is measured, not assumed: each packet's
//! lateness (actual minus planned release) is kept for the report.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::Serialize;

use crate::tun::Tun;

/// One direction of the emulated path.
#[derive(Debug, Clone, Default, Serialize)]
pub struct PathConfig {
    /// One-way delay.
    pub delay_us: u64,
    /// Uniform extra delay in [0, jitter).
    pub jitter_us: u64,
    /// Probability of dropping a packet (0..1).
    pub loss: f64,
    /// 1-based indices of packets in this direction to drop.
    pub drop: Vec<u64>,
    /// Bottleneck rate in bits per second (None: unlimited).
    pub rate_bps: Option<u64>,
    /// Drop-tail queue limit at the bottleneck, in bytes.
    pub queue_bytes: usize,
    /// A hop narrower than the hosts' links: IP packets longer than this
    /// are dropped and no one is told (its ICMP "fragmentation needed"
    /// never reaches the sender: a path MTU black hole). None: the hosts'
    /// MTU all along.
    pub hop_mtu: Option<usize>,
    /// The receiving host's radio sleeps on a period (None: never).
    pub doze: Option<Doze>,
}

/// A receiver in power saving, as a Wi-Fi station is: awake for the start
/// of every period, asleep for its last `asleep_us`. Its access point
/// keeps what comes for it while it sleeps and delivers it, in order, the
/// moment it wakes; what it sends is not held (a station wakes to send).
/// Periods count from the emulator's start.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Doze {
    pub period_us: u64,
    pub asleep_us: u64,
}

impl Doze {
    /// When a packet due at `due` (µs since the start) reaches the host:
    /// at once while it is awake, else when it next wakes.
    pub fn deliver_at(&self, due_us: u64) -> u64 {
        let period = self.period_us.max(1);
        let phase = due_us % period;
        if phase < period.saturating_sub(self.asleep_us) {
            due_us
        } else {
            due_us - phase + period
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct WanConfig {
    pub client_to_server: PathConfig,
    pub server_to_client: PathConfig,
    pub seed: u64,
    /// MTU of both hosts' TUN devices (the path MTU).
    pub mtu: u32,
}

impl WanConfig {
    /// A symmetric path with the given round-trip time.
    pub fn rtt(rtt: Duration) -> WanConfig {
        let one_way = PathConfig {
            delay_us: rtt.as_micros() as u64 / 2,
            queue_bytes: 1 << 20,
            ..Default::default()
        };
        WanConfig {
            client_to_server: one_way.clone(),
            server_to_client: one_way,
            seed: 1,
            mtu: 1500,
        }
    }
}

/// Which host saw a recorded packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    Client,
    Server,
    /// A tap halfway along the path (a mid-path vantage: a router, a load
    /// balancer's mirror port). Dropped packets never reach it.
    Middle,
}

#[derive(Debug, Clone)]
pub struct Recorded {
    pub side: Side,
    pub ts_ns: i64,
    pub data: Vec<u8>,
}

/// Why a packet did not make it across.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DropCause {
    Random,
    Scripted,
    QueueFull,
    /// Longer than the narrow hop carries (`PathConfig::hop_mtu`).
    TooBig,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct DirectionReport {
    pub forwarded: u64,
    pub dropped: Vec<(u64, DropCause)>,
    /// Achieved minus planned release time, per forwarded packet (ns).
    #[serde(skip)]
    pub lateness_ns: Vec<i64>,
}

impl DirectionReport {
    /// (p50, p99, max) lateness in microseconds.
    pub fn lateness_us(&self) -> (f64, f64, f64) {
        if self.lateness_ns.is_empty() {
            return (0.0, 0.0, 0.0);
        }
        let mut v = self.lateness_ns.clone();
        v.sort_unstable();
        let at = |p: f64| v[((p * v.len() as f64) as usize).min(v.len() - 1)] as f64 / 1000.0;
        (at(0.5), at(0.99), *v.last().unwrap() as f64 / 1000.0)
    }
}

struct Clock {
    start: Instant,
    start_epoch_ns: i64,
}

impl Clock {
    fn new() -> Clock {
        let epoch = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        Clock {
            start: Instant::now(),
            start_epoch_ns: epoch.as_nanos() as i64,
        }
    }
    fn epoch_ns(&self, at: Instant) -> i64 {
        self.start_epoch_ns + at.duration_since(self.start).as_nanos() as i64
    }
}

/// A running emulator. [`Emulator::stop`] ends it and returns what it saw.
pub struct Emulator {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<DirectionReport>>,
    writers: Vec<JoinHandle<Vec<i64>>>,
    log: Arc<Mutex<Vec<Recorded>>>,
}

/// Everything the emulator observed.
pub struct EmulatorReport {
    pub packets: Vec<Recorded>,
    pub client_to_server: DirectionReport,
    pub server_to_client: DirectionReport,
}

struct XorShift(u64);
impl XorShift {
    fn next_f64(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

impl Emulator {
    pub fn start(client: Tun, server: Tun, config: &WanConfig) -> Emulator {
        let client = Arc::new(client);
        let server = Arc::new(server);
        let stop = Arc::new(AtomicBool::new(false));
        let log = Arc::new(Mutex::new(Vec::new()));
        let clock = Arc::new(Clock::new());
        let mut threads = Vec::new();
        let mut writers = Vec::new();
        let dirs = [
            (
                client.clone(),
                server.clone(),
                Side::Client,
                Side::Server,
                config.client_to_server.clone(),
                config.seed,
            ),
            (
                server,
                client,
                Side::Server,
                Side::Client,
                config.server_to_client.clone(),
                config.seed ^ 0x9e37_79b9,
            ),
        ];
        for (from, to, from_side, to_side, path, seed) in dirs {
            let (tx, rx) = mpsc::channel::<(Instant, Vec<u8>)>();
            let (stop_r, log_r, clock_r) = (stop.clone(), log.clone(), clock.clone());
            threads.push(std::thread::spawn(move || {
                relay_in(&from, from_side, &path, seed, &stop_r, &log_r, &clock_r, tx)
            }));
            let (log_w, clock_w) = (log.clone(), clock.clone());
            writers.push(std::thread::spawn(move || {
                relay_out(&to, to_side, rx, &log_w, &clock_w)
            }));
        }
        Emulator {
            stop,
            threads,
            writers,
            log,
        }
    }

    pub fn stop(self) -> EmulatorReport {
        self.stop.store(true, Ordering::SeqCst);
        let mut reports: Vec<DirectionReport> = self
            .threads
            .into_iter()
            .map(|t| t.join().unwrap_or_default())
            .collect();
        for (i, w) in self.writers.into_iter().enumerate() {
            reports[i].lateness_ns = w.join().unwrap_or_default();
        }
        let mut packets = std::mem::take(&mut *self.log.lock().unwrap());
        packets.sort_by_key(|p| p.ts_ns);
        let server_to_client = reports.pop().unwrap_or_default();
        let client_to_server = reports.pop().unwrap_or_default();
        EmulatorReport {
            packets,
            client_to_server,
            server_to_client,
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn relay_in(
    from: &Tun,
    side: Side,
    path: &PathConfig,
    seed: u64,
    stop: &AtomicBool,
    log: &Mutex<Vec<Recorded>>,
    clock: &Clock,
    tx: mpsc::Sender<(Instant, Vec<u8>)>,
) -> DirectionReport {
    let mut report = DirectionReport::default();
    let mut rng = XorShift(seed.max(1));
    let mut buf = vec![0u8; 65536];
    let mut count = 0u64;
    let mut last_release = Instant::now();
    let mut last_along = last_release;
    // Bottleneck: when the link is free again, and what is queued on it.
    let mut link_free = Instant::now();
    let mut queued: VecDeque<(Instant, usize)> = VecDeque::new();
    let mut queued_bytes = 0usize;
    while !stop.load(Ordering::Relaxed) {
        let n = match from.recv(&mut buf, 20) {
            Ok(Some(n)) => n,
            Ok(None) => continue,
            Err(_) => break,
        };
        let now = Instant::now();
        let packet = buf[..n].to_vec();
        log.lock().unwrap().push(Recorded {
            side,
            ts_ns: clock.epoch_ns(now),
            data: packet.clone(),
        });
        count += 1;
        if path.drop.contains(&count) {
            report.dropped.push((count, DropCause::Scripted));
            continue;
        }
        if path.hop_mtu.is_some_and(|mtu| n > mtu) {
            report.dropped.push((count, DropCause::TooBig));
            continue;
        }
        if path.loss > 0.0 && rng.next_f64() < path.loss {
            report.dropped.push((count, DropCause::Random));
            continue;
        }
        let mut depart = now;
        if let Some(rate) = path.rate_bps {
            while queued.front().is_some_and(|(done, _)| *done <= now) {
                queued_bytes -= queued.pop_front().unwrap().1;
            }
            if queued_bytes + n > path.queue_bytes {
                report.dropped.push((count, DropCause::QueueFull));
                continue;
            }
            let tx_time = Duration::from_nanos(n as u64 * 8 * 1_000_000_000 / rate.max(1));
            depart = link_free.max(now) + tx_time;
            link_free = depart;
            queued.push_back((depart, n));
            queued_bytes += n;
        }
        let jitter = if path.jitter_us > 0 {
            (rng.next_f64() * path.jitter_us as f64) as u64
        } else {
            0
        };
        // The path is a FIFO: release times never go backwards.
        let along = (depart + Duration::from_micros(path.delay_us + jitter)).max(last_along);
        last_along = along;
        // A dozing receiver's access point, at its end of the path (past
        // the mid-path tap), holds what is due while it sleeps.
        let release = match path.doze {
            Some(doze) => {
                let due = along.duration_since(clock.start).as_micros() as u64;
                along + Duration::from_micros(doze.deliver_at(due) - due)
            }
            None => along,
        }
        .max(last_release);
        last_release = release;
        report.forwarded += 1;
        // The mid-path tap sees it halfway along the path's delay. A
        // bottleneck is the client's access link: its queue is after the
        // tap on the way to the client (a downlink) and before it on the
        // way from the client (an uplink). (Without one, `depart` is `now`.)
        let toward_client = side == Side::Server;
        let tap_from = if toward_client { now } else { depart };
        log.lock().unwrap().push(Recorded {
            side: Side::Middle,
            ts_ns: clock.epoch_ns(tap_from + (along - depart) / 2),
            data: packet.clone(),
        });
        if tx.send((release, packet)).is_err() {
            break;
        }
    }
    report
}

fn relay_out(
    to: &Tun,
    side: Side,
    rx: mpsc::Receiver<(Instant, Vec<u8>)>,
    log: &Mutex<Vec<Recorded>>,
    clock: &Clock,
) -> Vec<i64> {
    // The default 50 us timer slack would make every sleep that much late.
    // SAFETY: PR_SET_TIMERSLACK only changes this thread's timer slack.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1, 0, 0, 0) };
    let mut lateness = Vec::new();
    while let Ok((release, packet)) = rx.recv() {
        // Sleep most of the way, then spin the last stretch for accuracy.
        loop {
            let now = Instant::now();
            if now >= release {
                break;
            }
            let left = release - now;
            if left > Duration::from_micros(600) {
                std::thread::sleep(left - Duration::from_micros(500));
            } else {
                std::thread::yield_now();
            }
        }
        let now = Instant::now();
        if to.send(&packet).is_err() {
            continue;
        }
        lateness.push(now.duration_since(release).as_nanos() as i64);
        log.lock().unwrap().push(Recorded {
            side,
            ts_ns: clock.epoch_ns(now),
            data: packet,
        });
    }
    lateness
}

#[cfg(test)]
mod tests {
    use super::Doze;

    /// Awake for the first 300 µs of every 500, asleep for the last 200:
    /// what is due while awake goes at once, what is due asleep when the
    /// next period begins.
    #[test]
    fn a_dozing_receiver_gets_what_came_while_it_slept_when_it_wakes() {
        let doze = Doze {
            period_us: 500,
            asleep_us: 200,
        };
        assert_eq!(doze.deliver_at(0), 0);
        assert_eq!(doze.deliver_at(299), 299);
        assert_eq!(doze.deliver_at(300), 500);
        assert_eq!(doze.deliver_at(499), 500);
        assert_eq!(doze.deliver_at(500), 500);
        assert_eq!(doze.deliver_at(1_350), 1_500);
        let never = Doze {
            period_us: 500,
            asleep_us: 0,
        };
        assert_eq!(never.deliver_at(499), 499);
    }
}
