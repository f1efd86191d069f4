use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

use rttdoc_model::{
    kinds::CostRule, ConnectionReport, Ending, FindingKind, Phase, TfoOutcome, TlsVersion, Vantage,
};

use crate::worst_row;

/// Connections whose excess reaches this many RTTs count as "over ideal";
/// below it, jitter and server think time are noise.
pub const OVER_IDEAL_RTTS: f64 = 0.5;

/// How many connections the "worst" list keeps.
const WORST_KEPT: usize = 10;
/// Rows the connection table keeps by default (`--top N` changes it).
pub const DEFAULT_ROWS_KEPT: usize = 25;

/// One line per connection, for the overview table.
#[derive(Debug, Clone)]
pub struct ConnectionRow {
    pub stream: u64,
    pub client: String,
    pub server: String,
    pub vantage: Vantage,
    pub rtt_ms: Option<f64>,
    pub tcp_handshake_ms: Option<f64>,
    pub tls_version: Option<TlsVersion>,
    pub tls_rtts: Option<f64>,
    pub tls_ideal: Option<f64>,
    pub first_byte_ms: Option<f64>,
    pub exchanges: u32,
    pub excess_rtts: f64,
    pub excess_ms: f64,
    /// Transfer stalls found on this connection (ms).
    pub stall_ms: f64,
    pub worst_phase: Option<String>,
    pub partial: bool,
    pub findings: Vec<FindingKind>,
    /// The earlier stream this connection is (`same_connection_as`).
    pub same_as: Option<u64>,
}

/// The worst latency phase of one of the worst connections.
#[derive(Debug, Clone)]
pub struct WorstConnection {
    pub stream: u64,
    pub client: String,
    pub server: String,
    pub rtt_ms: Option<f64>,
    /// Its ledger row with the largest excess (see [`crate::worst_row`]).
    pub worst_phase: rttdoc_model::LedgerRow,
    pub excess_rtts: f64,
    pub excess_ms: f64,
}

/// How a connection ranks in the tables: most excess first, then the
/// lower stream. Larger ranks are kept.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Rank {
    excess_rtts: f64,
    stream: u64,
}

impl Eq for Rank {}
impl PartialOrd for Rank {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Rank {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.excess_rtts
            .total_cmp(&other.excess_rtts)
            .then(other.stream.cmp(&self.stream))
    }
}

/// The `k` highest-ranked items seen: a min-heap on rank, so each offer
/// costs O(log k) and memory is O(k) however many connections pass.
#[derive(Debug)]
pub struct TopK<T> {
    k: usize,
    heap: BinaryHeap<Reverse<(Rank, Keyed<T>)>>,
}

/// An item ordered by its rank only.
#[derive(Debug)]
struct Keyed<T>(T);
impl<T> PartialEq for Keyed<T> {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl<T> Eq for Keyed<T> {}
impl<T> PartialOrd for Keyed<T> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> Ord for Keyed<T> {
    fn cmp(&self, _: &Self) -> std::cmp::Ordering {
        std::cmp::Ordering::Equal
    }
}

impl<T> TopK<T> {
    pub fn new(k: usize) -> Self {
        TopK {
            k,
            heap: BinaryHeap::new(),
        }
    }

    /// Whether an item of this rank would be kept (so it is only built then).
    fn admits(&self, rank: Rank) -> bool {
        self.k > 0
            && (self.heap.len() < self.k
                || self.heap.peek().is_some_and(|Reverse((r, _))| rank > *r))
    }

    fn offer(&mut self, rank: Rank, make: impl FnOnce() -> T) {
        if !self.admits(rank) {
            return;
        }
        if self.heap.len() == self.k {
            self.heap.pop();
        }
        self.heap.push(Reverse((rank, Keyed(make()))));
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// The kept items, best first.
    pub fn sorted(&self) -> Vec<&T> {
        let mut v: Vec<&(Rank, Keyed<T>)> = self.heap.iter().map(|Reverse(x)| x).collect();
        v.sort_by_key(|x| Reverse(x.0));
        v.into_iter().map(|(_, Keyed(t))| t).collect()
    }
}

/// A bounded quantile sketch (HdrHistogram, 3 significant digits) of
/// values in round trips: exact to a thousandth below 2.048, never above
/// and within 0.1% of the value recorded above that.
#[derive(Debug, Clone)]
pub struct Quantiles {
    hist: hdrhistogram::Histogram<u64>,
}

/// Values are kept in thousandths.
const QUANTILE_SCALE: f64 = 1000.0;

impl Default for Quantiles {
    fn default() -> Self {
        Quantiles {
            hist: hdrhistogram::Histogram::new(3).expect("3 significant digits is valid"),
        }
    }
}

impl Quantiles {
    pub fn record(&mut self, v: f64) {
        if v.is_finite() && v >= 0.0 {
            let _ = self.hist.record((v * QUANTILE_SCALE).round() as u64);
        }
    }

    pub fn len(&self) -> u64 {
        self.hist.len()
    }

    pub fn is_empty(&self) -> bool {
        self.hist.is_empty()
    }

    /// Nearest-rank percentile `p` (0..100).
    pub fn percentile(&self, p: f64) -> Option<f64> {
        (!self.hist.is_empty()).then(|| {
            let v = self.hist.value_at_quantile(p / 100.0);
            // The bucket's lowest value: never more than was recorded.
            self.hist.lowest_equivalent(v) as f64 / QUANTILE_SCALE
        })
    }
}

/// Capture-wide numbers, folded one connection at a time in memory that
/// does not grow with the capture: counters, a bounded sketch per TLS
/// version, and the top rows only.
#[derive(Debug)]
pub struct Summary {
    pub connections: u64,
    /// Connections that are an earlier stream's seen again with translated
    /// addresses: in the table, out of every total below (their waits are
    /// the earlier stream's, counted there).
    pub translated_copies: u64,
    /// Multipath TCP subflows with turns whose answer began on another
    /// subflow: those turns are not measured.
    pub mptcp_split_subflows: u64,
    pub over_ideal: u64,
    /// Latency beyond the ideal, over every connection: the sum of the
    /// ledgers' latency-phase excess (`excess_ms`). Always equals
    /// `explained_ms + unexplained_ms`.
    pub excess_ms_total: f64,
    /// The part of `excess_ms_total` the findings account for (their
    /// `attributed_ms`).
    pub explained_ms: f64,
    /// The part no finding accounts for.
    pub unexplained_ms: f64,
    /// Of `unexplained_ms`, the hosts' own turnarounds too short to be a
    /// cause (the connections' `client_turnaround_ms`, `server_turnaround_ms`).
    pub client_turnaround_ms: f64,
    pub server_turnaround_ms: f64,
    /// Of `unexplained_ms`, what the path held (the connections'
    /// `path_queue_ms`).
    pub path_queue_ms: f64,
    /// Time lost to stalls inside transfers (after the first byte): the
    /// costs of transfer-phase findings, which the latency ledger does
    /// not count.
    pub stall_ms_total: f64,
    pub tls_connections: u64,
    pub resumed: u64,
    pub tfo_attempts: u64,
    pub tfo_accepted: u64,
    /// TLS 1.3 connections that sent 0-RTT early data, and how many of
    /// those the server visibly accepted.
    pub early_data_sent: u64,
    pub early_data_accepted: u64,
    pub partial: u64,
    /// Connections whose SYN a relay answered (`HandshakeReport::relay`):
    /// their round trips to the server are not in the capture.
    pub relayed: u64,
    /// Connections whose name lookup (DNS over UDP, before the SYN) the
    /// capture holds, and those lookups' time from first query to last
    /// answer: outside every ledger.
    pub name_lookups: u64,
    pub name_lookup_ms: f64,
    /// TLS handshake durations in RTTs, by version name.
    pub handshake_rtts: BTreeMap<TlsVersion, Quantiles>,
    /// The connection table's rows: the most excess first.
    pub rows: TopK<ConnectionRow>,
    /// The worst connections (by excess RTTs, at least
    /// [`OVER_IDEAL_RTTS`]).
    pub worst: TopK<WorstConnection>,
    /// Per finding kind: connections affected, total cost (ms), a fix.
    pub causes: BTreeMap<FindingKind, Cause>,
    /// Connections that never opened, and where they were to.
    pub never_opened: NeverOpened,
}

/// Servers told apart in [`NeverOpened`]; past this many, "more".
pub const NEVER_OPENED_SERVERS_KEPT: usize = 64;

/// Connections that never opened: their SYNs answered by nothing in the
/// capture (no SYN-ACK, RST, ICMP error or any packet from the server:
/// dropped on the way, a host down or a firewall that drops; a SYN flood
/// or a port scan is mostly these), refused (the server's RST) or
/// unreachable (an ICMP error). No ledger holds them: they waited for
/// nothing that came, and are in no time lost.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct NeverOpened {
    pub unanswered: u64,
    /// Of `unanswered`, those whose client sent its SYN again
    /// (`syn_retransmit`), and the time from their first SYN to their
    /// last, summed.
    pub sent_again: u64,
    pub sent_again_ms: f64,
    pub refused: u64,
    pub unreachable: u64,
    /// The servers the three kinds were to (up to
    /// [`NEVER_OPENED_SERVERS_KEPT`]: more is counted as that many) and
    /// their ports, each counted once.
    pub servers: u64,
    pub ports: u64,
    #[serde(skip)]
    server_ips: Vec<std::net::IpAddr>,
    #[serde(skip)]
    port_seen: Option<Box<[u64; 1024]>>,
}

impl NeverOpened {
    pub fn total(&self) -> u64 {
        self.unanswered + self.refused + self.unreachable
    }

    fn add(&mut self, c: &ConnectionReport) {
        let unanswered = matches!(c.ending, Ending::Open | Ending::Idle)
            && c.handshake.syn_frame.is_some()
            && c.handshake.syn_ack_frame.is_none()
            && c.server_to_client.packets == 0
            // Only SYNs from the client: a capture that holds one
            // direction of an open connection is not this.
            && c.client_to_server.packets <= 1 + c.handshake.syn_retransmits as u64;
        match c.ending {
            Ending::Refused => self.refused += 1,
            Ending::Unreachable => self.unreachable += 1,
            _ if unanswered => {
                self.unanswered += 1;
                if let Some(x) = c
                    .findings
                    .iter()
                    .find(|x| x.kind == FindingKind::SynRetransmit)
                {
                    self.sent_again += 1;
                    self.sent_again_ms += x.cost_ms;
                }
            }
            _ => return,
        }
        let ip = c.server.ip;
        if !self.server_ips.contains(&ip) && self.server_ips.len() < NEVER_OPENED_SERVERS_KEPT {
            self.server_ips.push(ip);
        }
        self.servers = self.server_ips.len() as u64;
        let bits = self.port_seen.get_or_insert_with(|| Box::new([0; 1024]));
        let (word, bit) = (c.server.port as usize / 64, c.server.port % 64);
        if bits[word] & (1 << bit) == 0 {
            bits[word] |= 1 << bit;
            self.ports += 1;
        }
    }
}

/// Capture-wide totals for one finding kind.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Cause {
    pub connections: u64,
    /// Everything this kind's findings cost (a wait may be partly inside
    /// what the ideal already allows, so this can exceed the two below).
    pub cost_ms: f64,
    /// Its share of the latency excess (`attributed_ms`, summed).
    pub latency_ms: f64,
    /// Its transfer stalls (transfer-phase costs, summed).
    pub stall_ms: f64,
    /// Its waits outside the ledger's rows (findings of no phase: a name
    /// lookup before the SYN, a first request held after the handshake),
    /// summed: never part of the excess.
    pub outside_ms: f64,
    /// The fix of the kind's costliest finding so far (the first of equals).
    pub fix: String,
    /// That finding's cost.
    #[serde(skip)]
    fix_cost_ms: f64,
    /// Each different fix its findings gave, with what they cost
    /// together, costliest first: a kind's findings can need different
    /// fixes (Nagle on the client's socket and on the server's, a proxy's
    /// slow CONNECT and a handler's slow answer), at most [`FIXES_KEPT`].
    pub fixes: Vec<CauseFix>,
}

/// Different fixes kept per finding kind: past this many, the cheapest
/// is dropped (a fix's words name a side or a server's software, not a
/// host: a kind has a few).
pub const FIXES_KEPT: usize = 8;

/// One fix of a finding kind, over the findings that gave it.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct CauseFix {
    pub fix: String,
    /// The findings' costs, summed.
    pub cost_ms: f64,
    /// Connections with such a finding.
    pub connections: u64,
}

impl Cause {
    /// A finding's `fix` and cost, on a connection that had no finding of
    /// this kind with this fix before.
    fn add_fix(&mut self, fix: &str, cost_ms: f64, new_connection: bool) {
        match self.fixes.iter_mut().find(|f| f.fix == fix) {
            Some(f) => {
                f.cost_ms += cost_ms;
                f.connections += new_connection as u64;
            }
            None => {
                if self.fixes.len() == FIXES_KEPT {
                    self.fixes.pop();
                }
                self.fixes.push(CauseFix {
                    fix: fix.to_string(),
                    cost_ms,
                    connections: 1,
                });
            }
        }
        self.fixes.sort_by(|a, b| b.cost_ms.total_cmp(&a.cost_ms));
    }

    /// The other fixes worth naming beside [`Cause::fix`]: each that cost
    /// a tenth of the kind's total or more, at most two.
    pub fn other_fixes(&self) -> impl Iterator<Item = &CauseFix> {
        let total: f64 = self.fixes.iter().map(|f| f.cost_ms).sum();
        self.fixes
            .iter()
            .filter(move |f| f.fix != self.fix && f.cost_ms * 10.0 >= total && f.cost_ms > 0.0)
            .take(2)
    }
}

/// Whether a finding's cost is a transfer stall (after the first byte),
/// outside the latency phases the ledger's excess covers.
pub fn is_stall(x: &rttdoc_model::Finding) -> bool {
    x.phase == Some(Phase::Transfer) && x.cost_ms > 0.0
}

impl Default for Summary {
    fn default() -> Self {
        Summary::new(DEFAULT_ROWS_KEPT)
    }
}

impl Summary {
    /// Both hosts' short turnarounds over every connection (ms).
    pub fn turnaround_ms(&self) -> f64 {
        self.client_turnaround_ms + self.server_turnaround_ms
    }

    /// A summary whose connection table keeps `rows` rows.
    pub fn new(rows: usize) -> Self {
        Summary {
            connections: 0,
            translated_copies: 0,
            mptcp_split_subflows: 0,
            over_ideal: 0,
            excess_ms_total: 0.0,
            explained_ms: 0.0,
            unexplained_ms: 0.0,
            client_turnaround_ms: 0.0,
            server_turnaround_ms: 0.0,
            path_queue_ms: 0.0,
            stall_ms_total: 0.0,
            tls_connections: 0,
            resumed: 0,
            tfo_attempts: 0,
            tfo_accepted: 0,
            early_data_sent: 0,
            early_data_accepted: 0,
            partial: 0,
            relayed: 0,
            name_lookups: 0,
            name_lookup_ms: 0.0,
            handshake_rtts: BTreeMap::new(),
            rows: TopK::new(rows),
            worst: TopK::new(WORST_KEPT),
            causes: BTreeMap::new(),
            never_opened: NeverOpened::default(),
        }
    }

    /// Connections not in the table.
    pub fn rows_hidden(&self) -> u64 {
        self.connections - self.rows.len() as u64
    }

    pub fn add(&mut self, c: &ConnectionReport) {
        self.connections += 1;
        let rank = Rank {
            excess_rtts: c.excess_rtts,
            stream: c.stream,
        };
        self.rows.offer(rank, || row(c));
        if c.same_connection_as.is_some() {
            self.translated_copies += 1;
            return;
        }
        if c.partial {
            self.partial += 1;
        }
        self.never_opened.add(c);
        if c.handshake.relay {
            self.relayed += 1;
        }
        if let Some(l) = &c.name_lookup {
            self.name_lookups += 1;
            self.name_lookup_ms += l.ms;
        }
        if c.mptcp.as_ref().is_some_and(|m| !m.split_turns.is_empty()) {
            self.mptcp_split_subflows += 1;
        }
        if c.excess_rtts >= OVER_IDEAL_RTTS {
            self.over_ideal += 1;
        }
        self.excess_ms_total += c.excess_ms;
        self.unexplained_ms += c.unexplained_ms;
        self.client_turnaround_ms += c.client_turnaround_ms;
        self.server_turnaround_ms += c.server_turnaround_ms;
        self.path_queue_ms += c.path_queue_ms;
        if let Some(tls) = &c.tls {
            self.tls_connections += 1;
            if tls.resumed == Some(true) {
                self.resumed += 1;
            }
            if tls.early_data_accepted.is_some() {
                self.early_data_sent += 1;
                if tls.early_data_accepted == Some(true) {
                    self.early_data_accepted += 1;
                }
            }
            if let (Some(v), Some(r)) = (&tls.version, tls.handshake_rtts) {
                match self.handshake_rtts.get_mut(v) {
                    Some(q) => q.record(r),
                    None => {
                        let mut q = Quantiles::default();
                        q.record(r);
                        self.handshake_rtts.insert(*v, q);
                    }
                }
            }
        }
        if let Some(tfo) = &c.handshake.tfo {
            if tfo.syn_data_bytes > 0 {
                self.tfo_attempts += 1;
                if tfo.outcome == TfoOutcome::Accepted {
                    self.tfo_accepted += 1;
                }
            }
        }
        // Each finding's fix, as the words give it (already written, or
        // now).
        let fixes: Vec<std::borrow::Cow<'_, str>> = c
            .findings
            .iter()
            .map(|x| match x.fix.is_empty() {
                true => crate::words::fix(c, x).into(),
                false => x.fix.as_str().into(),
            })
            .collect();
        for (i, x) in c.findings.iter().enumerate() {
            let cause = self.causes.entry(x.kind).or_default();
            if !c.findings[..i].iter().any(|y| y.kind == x.kind) {
                cause.connections += 1;
            }
            cause.cost_ms += x.cost_ms;
            cause.latency_ms += x.attributed_ms;
            self.explained_ms += x.attributed_ms;
            if x.phase.is_none() && x.kind.cost_rule() == CostRule::Waits {
                cause.outside_ms += x.cost_ms;
            }
            if is_stall(x) {
                cause.stall_ms += x.cost_ms;
                self.stall_ms_total += x.cost_ms;
            }
            // The fix of the kind's costliest finding: a kind's findings can
            // need different fixes (a proxy's slow CONNECT, a handler's slow
            // answer), and the biggest loss's is the one to show.
            let fixed_before = (0..i).any(|j| c.findings[j].kind == x.kind && fixes[j] == fixes[i]);
            cause.add_fix(&fixes[i], x.cost_ms, !fixed_before);
            if cause.fix.is_empty() || x.cost_ms > cause.fix_cost_ms {
                cause.fix = fixes[i].to_string();
                cause.fix_cost_ms = x.cost_ms;
            }
        }
        if c.excess_rtts >= OVER_IDEAL_RTTS {
            if let Some(r) = worst_row(c) {
                self.worst.offer(rank, || WorstConnection {
                    stream: c.stream,
                    client: c.client.to_string(),
                    server: c.server.to_string(),
                    rtt_ms: c.rtt_ms,
                    worst_phase: r.clone(),
                    excess_rtts: c.excess_rtts,
                    excess_ms: c.excess_ms,
                });
            }
        }
    }
}

/// Time to the first byte of the first response (its ledger row), if any.
pub fn first_byte_ms(c: &ConnectionReport) -> Option<f64> {
    c.ledger
        .iter()
        .find(|r| r.phase == Phase::FirstByte)
        .map(|r| r.duration_ms)
}

/// The connection's transfer stalls, summed (see [`is_stall`]).
pub fn stall_ms(c: &ConnectionReport) -> f64 {
    c.findings
        .iter()
        .filter(|x| is_stall(x))
        .map(|x| x.cost_ms)
        .sum()
}

fn row(c: &ConnectionReport) -> ConnectionRow {
    ConnectionRow {
        stream: c.stream,
        client: c.client.to_string(),
        server: c.server.to_string(),
        vantage: c.vantage,
        rtt_ms: c.rtt_ms,
        tcp_handshake_ms: c.tcp_handshake_ms,
        tls_version: c.tls.as_ref().and_then(|t| t.version),
        tls_rtts: c.tls.as_ref().and_then(|t| t.handshake_rtts),
        tls_ideal: c.tls.as_ref().and_then(|t| t.ideal_handshake_rtts),
        first_byte_ms: first_byte_ms(c),
        exchanges: c.exchanges,
        excess_rtts: c.excess_rtts,
        excess_ms: c.excess_ms,
        stall_ms: stall_ms(c),
        worst_phase: worst_row(c).map(|r| r.label.clone()),
        partial: c.partial,
        same_as: c.same_connection_as.map(u64::from),
        findings: {
            let mut k: Vec<FindingKind> = c
                .findings
                .iter()
                .filter(|x| x.kind != FindingKind::TlsExtraRtt)
                .map(|x| x.kind)
                .collect();
            k.dedup();
            k
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kinds_fix_is_its_costliest_findings() {
        use crate::test_support::{finding, report};
        use rttdoc_model::{Detail, PreambleKind};
        let think = |cost: f64, detail: Detail| {
            let mut x = finding(FindingKind::ServerThinkTime, cost);
            x.detail = detail;
            x.fix = crate::words::fix(&report(443), &x);
            x
        };
        let handler = think(
            30.0,
            Detail::ExchangeThinkTime {
                greeting_ms: 0.0,
                slow: 1,
                exchanges: 1,
                threshold_ms: 20.0,
                longest_ms: 30.0,
                longest_exchange: 1,
                longest_label: None,
                via: None,
                host_calls: None,
                protocol: None,
                retried: None,
            },
        );
        let proxy = think(
            900.0,
            Detail::PreambleThinkTime {
                preamble: PreambleKind::HttpConnect,
                greeting_ms: 0.0,
                turns: 1,
                longest_ms: 900.0,
            },
        );
        let mut summary = Summary::default();
        for (stream, x) in [(0, handler.clone()), (1, proxy.clone()), (2, handler)] {
            let mut c = report(443);
            c.stream = stream;
            c.findings = vec![x];
            summary.add(&c);
        }
        let cause = &summary.causes[&FindingKind::ServerThinkTime];
        assert_eq!(cause.connections, 3);
        assert_eq!(
            cause.fix, proxy.fix,
            "the proxy's 900 ms, not the first 30 ms"
        );
    }

    /// A kind's findings that need different fixes (Nagle held the
    /// client's writes on two connections and the server's on one): each
    /// fix with what its findings cost together and on how many
    /// connections; the ones beside the costliest finding's worth naming
    /// when they cost a tenth of the kind's time or more.
    #[test]
    fn a_kinds_different_fixes_are_each_summed() {
        use crate::test_support::{finding, report};
        let held = |cost: f64, fix: &str| {
            let mut x = finding(FindingKind::NagleDelayedAck, cost);
            x.fix = fix.to_string();
            x
        };
        let mut summary = Summary::default();
        let connections = [
            vec![held(600.0, "client"), held(200.0, "client")],
            vec![held(300.0, "client"), held(250.0, "server")],
            vec![held(40.0, "both")],
        ];
        for (stream, findings) in connections.into_iter().enumerate() {
            let mut c = report(443);
            c.stream = stream as u64;
            c.findings = findings;
            summary.add(&c);
        }
        let cause = &summary.causes[&FindingKind::NagleDelayedAck];
        let fixes: Vec<_> = cause
            .fixes
            .iter()
            .map(|f| (f.fix.as_str(), f.cost_ms, f.connections))
            .collect();
        assert_eq!(
            fixes,
            [
                ("client", 1100.0, 2),
                ("server", 250.0, 1),
                ("both", 40.0, 1)
            ]
        );
        assert_eq!(cause.fix, "client");
        let others: Vec<_> = cause.other_fixes().map(|f| f.fix.as_str()).collect();
        assert_eq!(others, ["server"], "40 ms of 1390 is not worth naming");
    }

    /// Connections that never opened, from how each ended and what the
    /// capture holds of it: SYNs only and nothing from the server (sent
    /// again or not), the server's RST, an ICMP error. Not a connection
    /// whose client sent more than SYNs (a capture of one direction), nor
    /// one the server answered.
    #[test]
    fn connections_that_never_opened_by_how_they_ended() {
        use crate::test_support::{finding, report};
        let syns_only = |port: u16, syns: u32, ending: Ending| {
            let mut c = report(port);
            c.ending = ending;
            c.handshake.syn_frame = Some(1);
            c.handshake.syn_retransmits = syns - 1;
            c.client_to_server.packets = syns as u64;
            if syns > 1 {
                c.findings = vec![finding(
                    FindingKind::SynRetransmit,
                    3000.0 * (syns - 1) as f64,
                )];
            }
            c
        };
        let mut summary = Summary::default();
        let mut one_way = syns_only(80, 1, Ending::Open);
        one_way.client_to_server.packets = 5;
        let mut answered = syns_only(80, 1, Ending::Open);
        answered.handshake.syn_ack_frame = Some(2);
        answered.server_to_client.packets = 1;
        for c in [
            syns_only(22, 1, Ending::Open),
            syns_only(23, 3, Ending::Open),
            syns_only(25, 2, Ending::Idle),
            syns_only(22, 1, Ending::Refused),
            syns_only(443, 1, Ending::Unreachable),
            one_way,
            answered,
            report(80),
        ] {
            summary.add(&c);
        }
        let n = &summary.never_opened;
        assert_eq!(
            (
                n.unanswered,
                n.sent_again,
                n.sent_again_ms,
                n.refused,
                n.unreachable
            ),
            (3, 2, 9000.0, 1, 1)
        );
        assert_eq!((n.total(), n.servers, n.ports), (5, 1, 4));
    }

    #[test]
    fn nearest_rank_percentiles() {
        let mut q = Quantiles::default();
        for v in [5.0, 1.0, 3.0, 2.0, 4.0] {
            q.record(v);
        }
        assert_eq!(q.percentile(50.0), Some(3.0));
        assert_eq!(q.percentile(95.0), Some(5.0));
        assert_eq!(q.percentile(0.0), Some(1.0));
        assert_eq!(Quantiles::default().percentile(50.0), None);
    }

    #[test]
    fn quantiles_stay_within_a_thousandth_at_any_scale() {
        let mut q = Quantiles::default();
        q.record(1234.567);
        let p = q.percentile(50.0).unwrap();
        assert!((p - 1234.567).abs() / 1234.567 < 1e-3, "{p}");
        let mut small = Quantiles::default();
        small.record(1.25);
        assert_eq!(small.percentile(50.0), Some(1.25), "exact below 2.048");
    }

    #[test]
    fn the_top_rows_are_the_most_excess_then_the_lowest_streams() {
        let mut top = TopK::new(3);
        for (stream, excess) in [(0, 0.0), (1, 2.0), (2, 0.0), (3, 5.0), (4, 2.0), (5, 0.0)] {
            top.offer(
                Rank {
                    excess_rtts: excess,
                    stream,
                },
                || stream,
            );
        }
        assert_eq!(top.sorted(), vec![&3, &1, &4]);
        let mut ties = TopK::new(2);
        for stream in [7, 3, 9, 1] {
            ties.offer(
                Rank {
                    excess_rtts: 0.0,
                    stream,
                },
                || stream,
            );
        }
        assert_eq!(ties.sorted(), vec![&1, &3], "equal excess: lowest streams");
    }
}
