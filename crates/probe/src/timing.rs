//! The `curl -w` timings, with curl's meanings: every time is measured
//! from the start of the request, and each includes the ones before it.
//!
//! | curl variable        | the moment it marks |
//! |----------------------|---------------------|
//! | `time_namelookup`    | the name resolved (0 for an address or `--resolve`: no lookup) |
//! | `time_connect`       | TCP `connect()` returned (with TFO: at once, the SYN leaves with the first write) |
//! | `time_appconnect`    | the TLS handshake complete (0 for plain HTTP) |
//! | `time_pretransfer`   | the request about to be written |
//! | `time_starttransfer` | the first byte of the response read |
//! | `time_total`         | the whole response read |

use std::time::Instant;

use serde::Serialize;

/// Instants taken while a request runs (in order; a step not taken is None).
#[derive(Debug, Clone, Copy)]
pub struct Marks {
    pub start: Instant,
    pub resolved: Option<Instant>,
    pub connected: Option<Instant>,
    pub tls_done: Option<Instant>,
    pub request_sent: Option<Instant>,
    pub first_byte: Option<Instant>,
    pub done: Option<Instant>,
}

impl Marks {
    pub fn new(start: Instant) -> Marks {
        Marks {
            start,
            resolved: None,
            connected: None,
            tls_done: None,
            request_sent: None,
            first_byte: None,
            done: None,
        }
    }
}

/// curl's six timings, in milliseconds (curl prints seconds).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct CurlTimings {
    pub namelookup: f64,
    pub connect: f64,
    pub appconnect: f64,
    pub pretransfer: f64,
    pub starttransfer: f64,
    pub total: f64,
}

/// Reads one timing.
pub type Getter = fn(&CurlTimings) -> f64;

/// The curl variable names, in order, with their accessor.
pub const CURL_VARS: [(&str, Getter); 6] = [
    ("time_namelookup", |t| t.namelookup),
    ("time_connect", |t| t.connect),
    ("time_appconnect", |t| t.appconnect),
    ("time_pretransfer", |t| t.pretransfer),
    ("time_starttransfer", |t| t.starttransfer),
    ("time_total", |t| t.total),
];

impl CurlTimings {
    /// From the marks, as curl reports a transfer: a step that did not
    /// happen is 0 (appconnect of plain HTTP), and a step that did is
    /// never before an earlier one (the clock is monotonic; a mark is
    /// clamped only if a caller recorded them out of order).
    pub fn from_marks(m: &Marks) -> CurlTimings {
        let ms = |i: Option<Instant>| {
            i.map(|i| i.saturating_duration_since(m.start).as_secs_f64() * 1000.0)
        };
        let namelookup = ms(m.resolved).unwrap_or(0.0);
        let connect = ms(m.connected).map_or(0.0, |c| c.max(namelookup));
        let appconnect = ms(m.tls_done).map_or(0.0, |a| a.max(connect));
        // With 0-RTT the request leaves before the handshake completes:
        // curl then reports pretransfer before appconnect too.
        let pretransfer = ms(m.request_sent).map_or(0.0, |p| p.max(connect));
        let starttransfer = ms(m.first_byte).map_or(0.0, |s| s.max(pretransfer));
        let total = ms(m.done).map_or(0.0, |t| t.max(starttransfer).max(appconnect));
        CurlTimings {
            namelookup,
            connect,
            appconnect,
            pretransfer,
            starttransfer,
            total,
        }
    }

    /// The time of each step alone, for the ledger: DNS, TCP, TLS, the
    /// wait for the first byte (one RTT plus the server's think time),
    /// the rest of the response.
    pub fn steps(&self) -> Steps {
        Steps {
            dns: self.namelookup,
            tcp: self.connect - self.namelookup,
            tls: if self.appconnect > 0.0 {
                self.appconnect - self.connect
            } else {
                0.0
            },
            wait: self.starttransfer - self.pretransfer,
            transfer: self.total - self.starttransfer,
        }
    }

    /// `--format curl`: `time_connect: 0.042137` lines, seconds with
    /// microseconds as curl prints them.
    pub fn curl_lines(&self) -> String {
        CURL_VARS
            .iter()
            .map(|(name, get)| format!("{name}: {:.6}\n", get(self) / 1000.0))
            .collect()
    }
}

/// Durations of each step (ms).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Steps {
    pub dns: f64,
    pub tcp: f64,
    pub tls: f64,
    pub wait: f64,
    pub transfer: f64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn at(m: &Marks, ms: u64) -> Option<Instant> {
        Some(m.start + Duration::from_millis(ms))
    }

    #[test]
    fn https_timings_are_cumulative_from_the_start_like_curl() {
        let mut m = Marks::new(Instant::now());
        (m.resolved, m.connected, m.tls_done) = (at(&m, 2), at(&m, 52), at(&m, 152));
        (m.request_sent, m.first_byte, m.done) = (at(&m, 152), at(&m, 203), at(&m, 210));
        let t = CurlTimings::from_marks(&m);
        assert_eq!(
            (
                t.namelookup,
                t.connect,
                t.appconnect,
                t.pretransfer,
                t.starttransfer,
                t.total
            ),
            (2.0, 52.0, 152.0, 152.0, 203.0, 210.0)
        );
        let s = t.steps();
        assert_eq!(
            (s.dns, s.tcp, s.tls, s.wait, s.transfer),
            (2.0, 50.0, 100.0, 51.0, 7.0)
        );
    }

    #[test]
    fn plain_http_has_appconnect_zero_and_no_tls_step() {
        let mut m = Marks::new(Instant::now());
        (m.connected, m.request_sent, m.first_byte, m.done) =
            (at(&m, 40), at(&m, 40), at(&m, 81), at(&m, 81));
        let t = CurlTimings::from_marks(&m);
        assert_eq!(
            (t.namelookup, t.appconnect, t.pretransfer),
            (0.0, 0.0, 40.0)
        );
        assert_eq!(t.steps().tls, 0.0);
        assert_eq!(t.steps().wait, 41.0);
        assert_eq!(
            t.curl_lines().lines().collect::<Vec<_>>(),
            [
                "time_namelookup: 0.000000",
                "time_connect: 0.040000",
                "time_appconnect: 0.000000",
                "time_pretransfer: 0.040000",
                "time_starttransfer: 0.081000",
                "time_total: 0.081000"
            ]
        );
    }

    #[test]
    fn early_data_request_leaves_before_the_handshake_ends() {
        let mut m = Marks::new(Instant::now());
        (
            m.connected,
            m.request_sent,
            m.tls_done,
            m.first_byte,
            m.done,
        ) = (
            at(&m, 50),
            at(&m, 50),
            at(&m, 100),
            at(&m, 100),
            at(&m, 101),
        );
        let t = CurlTimings::from_marks(&m);
        assert_eq!(
            (t.pretransfer, t.appconnect, t.starttransfer),
            (50.0, 100.0, 100.0)
        );
        assert_eq!(t.steps().wait, 50.0, "the wait counts from the request");
    }
}
