//! Output for people: an overview that shows at a glance which connections
//! spent more round trips than they should have, where and by how much; and
//! a per-connection view with the ledger and the frame ladder.

use std::io::{self, Write};

use comfy_table::{presets, Cell, CellAlignment, Color, ContentArrangement, Table};
use rttdoc_model::{CaptureStats, ConnectionReport, Direction, Ending, FindingKind, LedgerRow};

use crate::summary::OVER_IDEAL_RTTS;
use crate::{fmt_ms, fmt_rtts, RenderOptions, Summary};

/// A table in rttdoc's style, fitted to the terminal's width when there is
/// one (long cells wrap; 80 columns stays readable), else as wide as its
/// content (a pipe, a file).
fn table(opts: RenderOptions) -> Table {
    let mut t = Table::new();
    t.load_preset(presets::UTF8_BORDERS_ONLY);
    // comfy-table measures the terminal itself only on a tty; the width
    // decided by the caller (the tty's, or $COLUMNS) is set explicitly.
    t.force_no_tty();
    match opts.width {
        Some(w) => {
            t.set_content_arrangement(ContentArrangement::Dynamic);
            t.set_width(w);
        }
        None => {
            t.set_content_arrangement(ContentArrangement::Disabled);
        }
    }
    if opts.color {
        t.enforce_styling();
    }
    t
}

fn right(s: impl ToString) -> Cell {
    Cell::new(s.to_string()).set_alignment(CellAlignment::Right)
}

/// The capture's time lost in one sentence whose numbers add up:
/// latency excess = explained + the hosts' short turnarounds +
/// unexplained; transfer stalls apart.
pub fn headline(s: &crate::summary::Summary) -> String {
    // Waits before the SYNs are in no ledger: said apart, never summed in.
    let cost = |kinds: &[FindingKind]| -> f64 {
        kinds
            .iter()
            .filter_map(|k| s.causes.get(k))
            .map(|c| c.cost_ms)
            .sum()
    };
    let lookups = cost(&[FindingKind::DnsQueryLost, FindingKind::DnsSearchList]);
    let fallbacks = cost(&[FindingKind::AddressFallback]);
    let before = match (lookups > 0.0, fallbacks > 0.0) {
        (true, true) => format!(
            " Before connecting, {} more went to name lookups and {} to addresses that did not answer (below).",
            fmt_ms(lookups),
            fmt_ms(fallbacks)
        ),
        (true, false) => format!(
            " Before connecting, {} more went to name lookups (below).",
            fmt_ms(lookups)
        ),
        (false, true) => format!(
            " Before connecting, {} more went to addresses that did not answer (address_fallback).",
            fmt_ms(fallbacks)
        ),
        (false, false) => String::new(),
    };
    // (In no ledger either: between a handshake and its first request.)
    let held = s
        .causes
        .get(&FindingKind::CertificateFetch)
        .map_or(0.0, |c| c.outside_ms);
    let before = if held > 0.0 {
        format!(
            "{before} After their TLS handshakes, {} more went to first requests the clients held for their certificate checks (certificate_fetch).",
            fmt_ms(held)
        )
    } else {
        before
    };
    if s.excess_ms_total <= 0.0 && s.stall_ms_total <= 0.0 {
        return format!("No time lost beyond the ideal: no latency phase over its ideal by more than the floor (2 ms), no transfer stalls found.{before}");
    }
    // The hosts' short turnarounds, when there are any to show, are said
    // apart from what is unexplained, and then what they were.
    let turnarounds = Some(s.turnaround_ms()).filter(|t| *t >= TURNAROUNDS_SHOWN_MS);
    let path = Some(s.path_queue_ms).filter(|t| *t >= TURNAROUNDS_SHOWN_MS);
    let mut line = format!(
        "Time lost: {} of latency beyond the ideal ({} explained by the causes below{}{} + {} unexplained), and {} in transfer stalls.",
        fmt_ms(s.excess_ms_total),
        fmt_ms(s.explained_ms),
        turnarounds.map_or(String::new(), |t| format!(
            " + {} the hosts' own turnarounds, each too short to be a cause",
            fmt_ms(t)
        )),
        path.map_or(String::new(), |t| format!(
            " + {} the path's queues in TLS handshakes (tls_extra_rtt)",
            fmt_ms(t)
        )),
        fmt_ms((s.unexplained_ms - turnarounds.unwrap_or(0.0) - path.unwrap_or(0.0)).max(0.0)),
        fmt_ms(s.stall_ms_total),
    );
    if turnarounds.is_some() {
        line.push(' ');
        line.push_str(&turnaround_words(
            s.client_turnaround_ms,
            s.server_turnaround_ms,
        ));
    }
    // Each connection's loss is its own, so a proxy's client and its
    // upstream both count the upstream's time: say so, the sum stands.
    if let Some(upstream) = s
        .causes
        .get(&FindingKind::UpstreamWait)
        .filter(|c| c.latency_ms > 0.0)
    {
        line.push_str(&format!(
            " Of it, {} is proxies' clients waiting for upstream calls that the upstreams' own connections count too (upstream_wait).",
            fmt_ms(upstream.latency_ms)
        ));
    }
    line.push_str(&before);
    line
}

/// The hosts' short turnarounds are said from this much (ms): less
/// prints as nothing.
const TURNAROUNDS_SHOWN_MS: f64 = 0.005;

/// What the hosts' short turnarounds were (host_turnarounds.rs in the
/// diagnosis): each side's share, and that it is their own work.
fn turnaround_words(client_ms: f64, server_ms: f64) -> String {
    format!(
        "The turnarounds are each host's time from the other's message arriving to its own answer leaving, under the threshold of server_think_time and client_think_time: the servers' {} (signing for a ClientHello, a request's handler), the clients' {} (checking the server's certificate, writing the request); the hosts' CPU and scheduling as the round trip places them, not lost round trips.",
        fmt_ms(server_ms),
        fmt_ms(client_ms)
    )
}

/// The excess in a table cell. Every excess the totals count is shown, so
/// the rows add up to the headline; only half an RTT or more is coloured
/// (what the "spent 0.5 RTT or more" list counts).
fn excess_cell(excess: Option<f64>, ms: Option<f64>) -> Cell {
    let cell = right(excess_text(excess, ms));
    match excess_color(excess) {
        Some(c) => cell.fg(c),
        None => cell,
    }
}

/// An excess in RTTs (and ms) as a cell shows it: `-` for none, `?` for
/// unknown.
fn excess_text(excess: Option<f64>, ms: Option<f64>) -> String {
    match excess {
        Some(e) if e > 0.0 => {
            let rtts = if e < 0.1 {
                format!("+{e:.2} RTT")
            } else {
                format!("+{}", fmt_rtts(e))
            };
            match ms {
                Some(ms) => format!("{rtts} ({})", fmt_ms(ms)),
                None => rtts,
            }
        }
        Some(_) => "-".into(),
        None => "?".into(),
    }
}

/// The colour of an excess: red from 1.5 RTT, yellow from half an RTT.
fn excess_color(excess: Option<f64>) -> Option<Color> {
    match excess? {
        e if e >= 1.5 => Some(Color::Red),
        e if e >= OVER_IDEAL_RTTS => Some(Color::Yellow),
        _ => None,
    }
}

/// Wraps text at word boundaries to `width` columns.
fn wrap(text: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line = 0;
    for word in text.split_whitespace() {
        if line > 0 && line + 1 + word.len() > width {
            out.push('\n');
            line = 0;
        } else if line > 0 {
            out.push(' ');
            line += 1;
        }
        out.push_str(word);
        line += word.len();
    }
    out
}

/// Below this many columns the tables drop their least needed columns
/// rather than wrap every cell.
const WIDE_COLUMNS: u16 = 140;

fn is_narrow(opts: RenderOptions) -> bool {
    opts.width.is_some_and(|w| w < WIDE_COLUMNS)
}

/// A line of prose, wrapped to the terminal's width when there is one.
/// Its leading spaces stay, and continuation lines are indented 2 more.
fn say(out: &mut dyn Write, opts: RenderOptions, text: String) -> io::Result<()> {
    let Some(w) = opts.width else {
        return writeln!(out, "{text}");
    };
    let body = text.trim_start();
    let indent = " ".repeat(text.len() - body.len());
    let width = (w as usize).saturating_sub(indent.len() + 2).max(40);
    let wrapped = wrap(body, width).replace('\n', &format!("\n{indent}  "));
    writeln!(out, "{indent}{wrapped}")
}

/// Columns for wrapped prose indented by `indent`: the terminal's width,
/// else 100.
fn text_width(opts: RenderOptions, indent: usize) -> usize {
    opts.width
        .map_or(100, |w| w as usize)
        .saturating_sub(indent)
        .max(40)
}

fn opt_ms(v: Option<f64>) -> String {
    v.map(fmt_ms).unwrap_or_else(|| "-".into())
}

/// The capture overview.
pub fn render_summary(
    out: &mut dyn Write,
    stats: &CaptureStats,
    s: &Summary,
    opts: RenderOptions,
) -> io::Result<()> {
    say(
        out,
        opts,
        format!("{}: {} frames, {} TCP connection{} ({} TCP segments; skipped: {} non-IP, {} non-TCP{}, {} damaged; {} IP fragments, {} datagrams reassembled)",
        crate::words::capture_label(stats),
        stats.frames,
        s.connections,
        if s.connections == 1 { "" } else { "s" },
        stats.tcp_segments,
        stats.non_ip,
        stats.non_tcp,
        match (stats.dns_messages, stats.quic.as_ref().map_or(0, |q| q.datagrams)) {
            (0, 0) => String::new(),
            (dns, 0) => format!(" ({dns} DNS, read for name lookups)"),
            (0, quic) => format!(" ({quic} QUIC, below)"),
            (dns, quic) => format!(" ({dns} DNS, read for name lookups; {quic} QUIC, below)"),
        },
        stats.damaged,
        stats.ip_fragments,
        stats.ip_reassembled,
    ))?;
    // Properties of the capture, not of the network: said once, here.
    for note in crate::words::capture_notes(stats, s) {
        say(out, opts, format!("NOTE: {note}"))?;
    }
    if let Some(e) = &stats.error {
        if stats.merged_files.is_empty() {
            say(out, opts, format!("WARNING: reading stopped early: {e}"))?;
            say(
                out,
                opts,
                "         (everything before that point is analysed below)".to_string(),
            )?;
        } else {
            say(
                out,
                opts,
                format!("WARNING: not every capture could be read to its end: {e}"),
            )?;
            say(
                out,
                opts,
                "         (each damaged file up to its damage, and the others whole, are analysed below)"
                    .to_string(),
            )?;
        }
    }
    writeln!(out)?;

    if s.connections == 0 {
        if let Some(quic) = &stats.quic {
            return render_quic(out, quic, stats, opts);
        }
        return say(out, opts, no_connection(stats));
    }
    say(out, opts, headline(s))?;
    if let Some(q) = stats.quic.as_ref().filter(|q| q.excess_ms > 0.0) {
        // QUIC's handshakes are not in the TCP totals above: said apart,
        // so that neither hides the other.
        say(
            out,
            opts,
            format!(
                "QUIC: {} more beyond the ideal in {} QUIC handshake{} (below).",
                fmt_ms(q.excess_ms),
                q.handshakes,
                if q.handshakes == 1 { "" } else { "s" }
            ),
        )?;
    }
    if !s.worst.is_empty() {
        say(
            out,
            opts,
            format!("{} of {} connections spent {OVER_IDEAL_RTTS} RTT or more beyond the ideal; worst first:",
            s.over_ideal, s.connections
        ))?;
        let mut t = table(opts);
        let narrow = is_narrow(opts);
        let mut header = vec![
            "stream",
            "client -> server",
            "RTT",
            "worst phase",
            "took",
            "ideal",
        ];
        header.extend(["its excess", "connection's excess"]);
        if narrow {
            // 80 columns: the endpoints and the connection's total go.
            header.retain(|h| *h != "client -> server" && *h != "connection's excess");
        }
        t.set_header(header);
        for c in s.worst.sorted() {
            let r = &c.worst_phase;
            let mut row = vec![right(c.stream)];
            if !narrow {
                row.push(Cell::new(format!("{} -> {}", c.client, c.server)));
            }
            row.extend([
                right(opt_ms(c.rtt_ms)),
                Cell::new(&r.label),
                right(r.rtts.map(fmt_rtts).unwrap_or_default()),
                right(r.ideal_rtts.map(fmt_rtts).unwrap_or_default()),
                excess_cell(r.excess_rtts, r.excess_ms),
            ]);
            if !narrow {
                row.push(excess_cell(Some(c.excess_rtts), Some(c.excess_ms)));
            }
            t.add_row(row);
        }
        writeln!(out, "{t}")?;
    }
    writeln!(out)?;

    let mut causes: Vec<(&FindingKind, &crate::summary::Cause)> = s
        .causes
        .iter()
        .filter(|(k, c)| **k != FindingKind::TlsExtraRtt && c.latency_ms + c.stall_ms > 0.05)
        .collect();
    causes.sort_by(|a, b| {
        (b.1.latency_ms + b.1.stall_ms).total_cmp(&(a.1.latency_ms + a.1.stall_ms))
    });
    if !causes.is_empty() {
        say(
            out,
            opts,
            "Causes found, by time lost (docs/findings.md defines each):".to_string(),
        )?;
        let mut t = table(opts);
        t.set_header(vec!["cause", "connections", "latency", "stalls", "fix"]);
        for (kind, c) in causes.iter().take(10) {
            t.add_row(vec![
                Cell::new(kind).fg(Color::Cyan),
                right(c.connections),
                right(fmt_ms(c.latency_ms)),
                right(fmt_ms(c.stall_ms)),
                Cell::new(wrap(
                    &fix_words(c),
                    if opts.width.is_some() { 200 } else { 80 },
                )),
            ]);
        }
        if causes.len() > 10 {
            writeln!(out, "(the 10 largest of {} causes)", causes.len())?;
        }
        writeln!(out, "{t}")?;
        writeln!(out)?;
    }

    let mut t = table(opts);
    let narrow = is_narrow(opts);
    if narrow {
        // 80 columns: the server, the TLS handshake's round trips, the
        // excess and the causes one per line; RTT, first byte, vantage and
        // the rest are in `--conn N` and the JSON.
        t.set_header(vec!["stream", "server", "TLS hs", "excess", "causes"]);
    } else {
        t.set_header(vec![
            "stream", "client", "server", "vantage", "RTT", "TCP hs", "TLS", "TLS hs", "1st byte",
            "xchg", "excess", "causes",
        ]);
    }
    for r in s.rows.sorted() {
        let tls_hs = match (r.tls_rtts, r.tls_ideal) {
            (Some(a), Some(i)) => format!("{a:.1}/{i:.0} RTT"),
            _ => "-".into(),
        };
        let version = r.tls_version.map_or_else(|| "-".into(), |v| v.to_string());
        let same_as = r.same_as.map(|s| format!("same as {s}"));
        let names: Vec<&str> = match &same_as {
            Some(same) => vec![same],
            None => r.findings.iter().map(|k| k.name()).collect(),
        };
        if narrow {
            t.add_row(vec![
                right(r.stream),
                Cell::new(&r.server),
                right(tls_hs),
                excess_cell(Some(r.excess_rtts), None),
                Cell::new(names.join("\n")),
            ]);
            continue;
        }
        let causes = Cell::new(names.join(", "));
        t.add_row(vec![
            right(r.stream),
            Cell::new(&r.client),
            Cell::new(&r.server),
            Cell::new(if r.partial {
                format!("{} (partial)", r.vantage.as_str())
            } else {
                r.vantage.as_str().to_string()
            }),
            right(opt_ms(r.rtt_ms)),
            right(opt_ms(r.tcp_handshake_ms)),
            Cell::new(version),
            right(tls_hs),
            right(opt_ms(r.first_byte_ms)),
            right(r.exchanges),
            excess_cell(Some(r.excess_rtts), None),
            causes,
        ]);
    }
    say(out, opts, "Connections (most excess first):".to_string())?;
    writeln!(out, "{t}")?;
    let hidden = s.rows_hidden();
    if hidden > 0 {
        writeln!(out, "... and {hidden} more (use --json for all)")?;
    }
    writeln!(out)?;

    if !s.handshake_rtts.is_empty() {
        say(
            out,
            opts,
            "TLS handshake round trips by version:".to_string(),
        )?;
        let mut t = table(opts);
        t.set_header(vec!["version", "connections", "P50", "P95"]);
        for (version, values) in &s.handshake_rtts {
            t.add_row(vec![
                Cell::new(version),
                right(values.len()),
                right(values.percentile(50.0).map(fmt_rtts).unwrap_or_default()),
                right(values.percentile(95.0).map(fmt_rtts).unwrap_or_default()),
            ]);
        }
        writeln!(out, "{t}")?;
        say(
            out,
            opts,
            format!(
                "TLS sessions resumed: {} of {}",
                s.resumed, s.tls_connections
            ),
        )?;
    }
    if s.early_data_sent > 0 {
        say(
            out,
            opts,
            format!(
                "TLS 0-RTT: early data accepted on {} of {} connections that sent it ({:.0}%)",
                s.early_data_accepted,
                s.early_data_sent,
                100.0 * s.early_data_accepted as f64 / s.early_data_sent as f64
            ),
        )?;
    }
    if let Some(c) = s.causes.get(&FindingKind::ListenerReset) {
        // Failures, not lateness: outside the time lost above (the
        // connections had no answer to be late).
        say(
            out,
            opts,
            format!(
                "Connections the server's host reset as their handshake completed (listener_reset): {} of {}, \
                 their clients' calls failed (ECONNRESET) {} after their SYNs on average. Fix: {}",
                c.connections,
                s.connections,
                fmt_ms(c.cost_ms / c.connections.max(1) as f64),
                c.fix
            ),
        )?;
    }
    let n = &s.never_opened;
    if n.total() > 0 {
        // Failures, not lateness: no ledger holds them, and nothing came
        // to be late.
        let mut parts = Vec::new();
        if n.unanswered > 0 {
            let mut part = format!(
                "{} whose SYNs nothing in the capture answered (no SYN-ACK, RST or ICMP error: dropped on the way, \
                 a host down, a firewall that drops)",
                n.unanswered
            );
            if n.sent_again > 0 {
                part.push_str(&format!(
                    ", {} of them sent again (syn_retransmit: {} from first SYN to last)",
                    n.sent_again,
                    fmt_ms(n.sent_again_ms)
                ));
            }
            parts.push(part);
        }
        if n.refused > 0 {
            parts.push(format!("{} refused (the server's RST)", n.refused));
        }
        if n.unreachable > 0 {
            parts.push(format!("{} unreachable (an ICMP error)", n.unreachable));
        }
        let servers = match n.servers as usize {
            crate::summary::NEVER_OPENED_SERVERS_KEPT.. => format!("{} or more servers", n.servers),
            1 => "1 server".to_string(),
            k => format!("{k} servers"),
        };
        // Many ports of a few servers: what a port scan tries.
        let scan = if n.ports >= 20 && n.ports >= 5 * n.servers {
            " (a port scan's shape)"
        } else {
            ""
        };
        say(
            out,
            opts,
            format!(
                "Connections that never opened: {} of {}: {}; to {}, {} port{}{}. Not in the time lost above.",
                n.total(),
                s.connections,
                parts.join("; "),
                servers,
                n.ports,
                if n.ports == 1 { "" } else { "s" },
                scan
            ),
        )?;
    }
    if let Some(c) = s.causes.get(&FindingKind::ConnectionNotReused) {
        // A cost against keeping connections alive: outside the time
        // lost above (the ideal counts a new connection's handshakes).
        say(
            out,
            opts,
            format!(
                "Connections a kept-alive one would have spared (connection_not_reused): {} of {}, \
                 {} of set-up waited before their first request",
                c.connections,
                s.connections,
                fmt_ms(c.cost_ms)
            ),
        )?;
    }
    if let Some(c) = s.causes.get(&FindingKind::HttpRedirect) {
        // A cost against the links that asked for the redirected URLs:
        // outside the time lost above (the ideal counts every request's
        // round trip, the redirected one's too).
        say(
            out,
            opts,
            format!(
                "Requests that waited for a redirect (http_redirect): on {} of {} connections, {} from the redirected \
                 requests to the ones they were sent on to. Fix: {}",
                c.connections,
                s.connections,
                fmt_ms(c.cost_ms),
                c.fix
            ),
        )?;
    }
    if let Some(c) = s.causes.get(&FindingKind::HttpAuthChallenge) {
        // A cost against the clients' way of authenticating: outside the
        // time lost above (the ideal counts the challenged requests'
        // round trips).
        say(
            out,
            opts,
            format!(
                "Requests that waited for an authentication challenge (http_auth_challenge): on {} of {} connections, \
                 {} from the challenged requests to the ones sent with credentials. Fix: {}",
                c.connections,
                s.connections,
                fmt_ms(c.cost_ms),
                c.fix
            ),
        )?;
    }
    if let Some(c) = s.causes.get(&FindingKind::CorsPreflight) {
        // A cost against the page's way of calling its API: outside the
        // time lost above (the ideal counts the preflights' round trips).
        say(
            out,
            opts,
            format!(
                "Requests that waited for a CORS preflight (cors_preflight): on {} of {} connections, {} from the \
                 preflights to the requests they let go. Fix: {}",
                c.connections,
                s.connections,
                fmt_ms(c.cost_ms),
                c.fix
            ),
        )?;
    }
    if s.name_lookups > 0 {
        // Before the SYNs: outside every ledger and the time lost above.
        let mut line = format!(
            "Name lookups before connecting (DNS): {} of {} connections, {} from first query to answer",
            s.name_lookups,
            s.connections,
            fmt_ms(s.name_lookup_ms)
        );
        let lost = s.causes.get(&FindingKind::DnsQueryLost);
        let tried = s.causes.get(&FindingKind::DnsSearchList);
        let fallback = s.causes.get(&FindingKind::AddressFallback);
        let mut parts = Vec::new();
        if let Some(c) = lost {
            parts.push(format!(
                "{} waiting for lost queries (dns_query_lost)",
                fmt_ms(c.cost_ms)
            ));
        }
        if let Some(c) = tried {
            parts.push(format!(
                "{} asking names that did not resolve (dns_search_list)",
                fmt_ms(c.cost_ms)
            ));
        }
        if !parts.is_empty() {
            line.push_str(&format!("; of that, {}", parts.join(" and ")));
        }
        if let Some(c) = fallback {
            // After the lookups, before the SYNs that connected.
            line.push_str(&format!(
                "; then {} trying addresses that never answered (address_fallback, {} connection{})",
                fmt_ms(c.cost_ms),
                c.connections,
                if c.connections == 1 { "" } else { "s" }
            ));
        }
        say(out, opts, line)?;
    }
    if s.tfo_attempts > 0 {
        say(
            out,
            opts,
            format!(
                "TCP Fast Open: {} of {} SYNs with data accepted ({:.0}%)",
                s.tfo_accepted,
                s.tfo_attempts,
                100.0 * s.tfo_accepted as f64 / s.tfo_attempts as f64
            ),
        )?;
    }
    if s.partial > 0 {
        say(
            out,
            opts,
            format!(
                "{} connection(s) whose SYN the capture does not hold (begun before it, or a capture of data packets only): partial ledger.",
                s.partial
            ),
        )?;
    }
    if s.relayed > 0 {
        say(
            out,
            opts,
            format!(
                "{} connection(s) answered by a relay next to the client (a SYN-ACK with no TCP option, not even the MSS no \
                 operating system leaves out: a phone's VPN capture app): the round trips to the server are not \
                 in the capture, so their time is not counted in round trips nor laid on the server.",
                s.relayed
            ),
        )?;
    }
    say(
        out,
        opts,
        format!(
            "Details of one connection: {}",
            crate::words::detail_command(stats, "--conn STREAM")
        ),
    )?;
    if let Some(quic) = &stats.quic {
        writeln!(out)?;
        render_quic(out, quic, stats, opts)?;
    }
    Ok(())
}

/// One QUIC connection in detail (`--quic N`): who, its handshake's row,
/// its findings worded, the filters that show them in Wireshark.
pub fn render_quic_connection(
    out: &mut dyn Write,
    c: &rttdoc_model::QuicConnectionReport,
    opts: RenderOptions,
) -> io::Result<()> {
    let server = crate::words::quic_server(c);
    say(
        out,
        opts,
        format!(
            "QUIC connection {}: {} -> {server}, version {}{}",
            c.number,
            c.client,
            c.version.name(),
            if c.alpn.is_empty() {
                String::new()
            } else {
                format!(", ALPN {}", c.alpn.join(", "))
            }
        ),
    )?;
    let mut notes = Vec::new();
    if c.retry {
        notes.push("a Retry");
    }
    if c.version_negotiation {
        notes.push("a Version Negotiation");
    }
    if c.zero_rtt {
        notes.push("0-RTT data");
    }
    say(
        out,
        opts,
        format!(
            "  frames {}-{}, {} long ({}), vantage {}, RTT {}; client {} datagrams ({} bytes), server {} ({} bytes){}",
            c.first_frame,
            c.last_frame,
            fmt_ms(c.duration_ms),
            if c.ending == "open" {
                "open when the capture ended"
            } else {
                "then silent for 30 s"
            },
            c.vantage.as_str(),
            opt_ms(c.rtt_ms),
            c.client_datagrams,
            c.client_bytes,
            c.server_datagrams,
            c.server_bytes,
            if notes.is_empty() {
                String::new()
            } else {
                format!("; {}", notes.join(", "))
            }
        ),
    )?;
    say(out, opts, format!("  Wireshark: {}", c.display_filter))?;
    writeln!(out)?;
    match c.ledger.first() {
        None => say(
            out,
            opts,
            "The handshake did not finish in the capture (no client Finished after the server's Initial).".to_string(),
        )?,
        Some(r) => {
            let mut t = table(opts);
            t.set_header(vec!["phase", "frames", "took", "RTTs", "ideal", "excess"]);
            t.add_row(vec![
                Cell::new(&r.label),
                Cell::new(format!("{}-{}", r.start_frame, r.end_frame)),
                right(fmt_ms(r.duration_ms)),
                right(r.rtts.map(fmt_rtts).unwrap_or_default()),
                right(r.ideal_rtts.map(fmt_rtts).unwrap_or_default()),
                excess_cell(r.excess_rtts, r.excess_ms),
            ]);
            writeln!(out, "{t}")?;
            say(out, opts, format!("  ({})", r.ideal_basis))?;
        }
    }
    writeln!(out)?;
    if c.findings.is_empty() {
        return say(out, opts, "No finding.".to_string());
    }
    say(out, opts, "Findings:".to_string())?;
    for f in &c.findings {
        let frames: Vec<String> = f.frames.iter().map(|n| n.to_string()).collect();
        say(
            out,
            opts,
            format!(
                "  {} {}{}, frames {}",
                f.kind,
                fmt_ms(f.cost_ms),
                f.cost_rtts
                    .map(|r| format!(" ({})", fmt_rtts(r)))
                    .unwrap_or_default(),
                frames.join(", ")
            ),
        )?;
        let width = opts
            .width
            .map_or(100, |w| usize::from(w).saturating_sub(4).max(40));
        for line in wrap(&f.explanation, width).lines() {
            say(out, opts, format!("    {line}"))?;
        }
        for (i, line) in wrap(&f.fix, width.saturating_sub(5)).lines().enumerate() {
            say(
                out,
                opts,
                format!("    {}{line}", if i == 0 { "Fix: " } else { "     " }),
            )?;
        }
        say(out, opts, format!("    Wireshark: {}", f.display_filter))?;
    }
    if c.unexplained_ms >= 2.0 {
        say(
            out,
            opts,
            format!(
                "  {} of the handshake's excess is unexplained (the hosts' own work: the server's on the ClientHello, the client's on the certificate)",
                fmt_ms(c.unexplained_ms)
            ),
        )?;
    }
    Ok(())
}

/// QUIC connections shown at most, most excess first.
const QUIC_ROWS: usize = 25;

/// The capture's QUIC connections: their handshakes, what cost them round
/// trips, the worst of them.
fn render_quic(
    out: &mut dyn Write,
    quic: &rttdoc_model::QuicSection,
    stats: &CaptureStats,
    opts: RenderOptions,
) -> io::Result<()> {
    say(
        out,
        opts,
        format!(
            "QUIC: {} connection{} over UDP, {} handshake{} finished in the capture, {} beyond their ideal (1 RTT each): {} explained by the causes below, {} unexplained",
            quic.connections,
            if quic.connections == 1 { "" } else { "s" },
            quic.handshakes,
            if quic.handshakes == 1 { "" } else { "s" },
            fmt_ms(quic.excess_ms),
            fmt_ms(quic.excess_ms - quic.unexplained_ms),
            fmt_ms(quic.unexplained_ms),
        ),
    )?;
    let causes: Vec<_> = quic.causes.iter().filter(|c| c.cost_ms > 0.05).collect();
    if !causes.is_empty() {
        let mut t = table(opts);
        t.set_header(vec!["cause", "connections", "cost", "of the excess", "fix"]);
        for c in &causes {
            t.add_row(vec![
                Cell::new(c.kind).fg(Color::Cyan),
                right(c.connections),
                right(fmt_ms(c.cost_ms)),
                right(fmt_ms(c.attributed_ms)),
                Cell::new(wrap(
                    c.kind.fix(),
                    if opts.width.is_some() { 200 } else { 80 },
                )),
            ]);
        }
        writeln!(out, "{t}")?;
    }
    let mut rows: Vec<&rttdoc_model::QuicConnectionReport> = quic.listed.iter().collect();
    rows.sort_by(|a, b| {
        b.excess_ms
            .total_cmp(&a.excess_ms)
            .then(a.number.cmp(&b.number))
    });
    let narrow = is_narrow(opts);
    let mut t = table(opts);
    if narrow {
        t.set_header(vec!["#", "server", "handshake", "excess", "causes"]);
    } else {
        t.set_header(vec![
            "#",
            "client",
            "server",
            "version",
            "vantage",
            "RTT",
            "handshake",
            "excess",
            "causes",
        ]);
    }
    for c in rows.iter().take(QUIC_ROWS) {
        let mut names: Vec<&str> = c.findings.iter().map(|f| f.kind.name()).collect();
        if c.zero_rtt {
            names.push("(0-RTT)");
        }
        let handshake = match c.handshake_ms {
            Some(ms) => fmt_ms(ms),
            None => "unfinished".to_string(),
        };
        let server = crate::words::quic_server(c);
        if narrow {
            t.add_row(vec![
                right(c.number),
                Cell::new(&server),
                right(handshake),
                excess_cell(Some(c.excess_rtts), None),
                Cell::new(names.join("\n")),
            ]);
            continue;
        }
        t.add_row(vec![
            right(c.number),
            Cell::new(c.client),
            Cell::new(server),
            Cell::new(c.version.name()),
            Cell::new(c.vantage.as_str()),
            right(opt_ms(c.rtt_ms)),
            right(handshake),
            excess_cell(Some(c.excess_rtts), None),
            Cell::new(names.join(", ")),
        ]);
    }
    say(
        out,
        opts,
        "QUIC connections (most excess first):".to_string(),
    )?;
    writeln!(out, "{t}")?;
    let hidden = quic.connections as usize - rows.len().min(QUIC_ROWS);
    if hidden > 0 {
        writeln!(out, "... and {hidden} more (use --json for all)")?;
    }
    say(
        out,
        opts,
        format!(
            "Details of one QUIC connection: {}",
            crate::words::detail_command(stats, "--quic NUMBER")
        ),
    )?;
    Ok(())
}

/// What a capture without a TCP connection held instead: rttdoc reads
/// TCP (and TLS over it), and says so rather than drawing empty tables.
fn no_connection(stats: &CaptureStats) -> String {
    let mut what = Vec::new();
    if stats.non_tcp > 0 {
        what.push(format!(
            "{} IP packets of other protocols (UDP other than QUIC; ICMP; DNS{}, read only for the name lookups before TCP \
             connections)",
            stats.non_tcp,
            if stats.dns_messages > 0 {
                format!(": {} of them", stats.dns_messages)
            } else {
                String::new()
            }
        ));
    }
    let unread = stats.unread_link_frames.min(stats.non_ip);
    if stats.non_ip > unread {
        what.push(format!(
            "{} not IP (ARP, link protocols)",
            stats.non_ip - unread
        ));
    }
    if unread > 0 {
        what.push(format!("{unread} of a link layer rttdoc does not read"));
    }
    if stats.damaged > 0 {
        what.push(format!("{} damaged", stats.damaged));
    }
    if what.is_empty() {
        return "No TCP connection: the capture holds no packets. rttdoc explains the round trips of TCP connections and of TLS over them.".into();
    }
    format!(
        "No TCP connection: rttdoc explains the round trips of TCP connections and of TLS over them, and of this capture's {} frames, {}.",
        stats.frames,
        what.join(", ")
    )
}

fn ledger_table(rows: &[LedgerRow], opts: RenderOptions) -> Table {
    let mut t = table(opts);
    t.set_header(vec![
        "phase",
        "frames",
        "took",
        "RTTs",
        "ideal",
        "excess",
        "why that ideal",
    ]);
    for r in rows {
        t.add_row(vec![
            Cell::new(&r.label),
            right(format!("{}-{}", r.start_frame, r.end_frame)),
            right(fmt_ms(r.duration_ms)),
            right(
                r.rtts
                    .map(|v| format!("{v:.2}"))
                    .unwrap_or_else(|| "?".into()),
            ),
            right(
                r.ideal_rtts
                    .map(|v| format!("{v:.0}"))
                    .unwrap_or_else(|| "?".into()),
            ),
            excess_cell(r.excess_rtts, r.excess_ms),
            Cell::new(&r.ideal_basis),
        ]);
    }
    t
}

/// One connection in detail: endpoints, RTT, ledger, TLS, ladder.
pub fn render_connection(
    out: &mut dyn Write,
    c: &ConnectionReport,
    stats: &CaptureStats,
    opts: RenderOptions,
) -> io::Result<()> {
    say(
        out,
        opts,
        format!(
            "Connection {} (tcp.stream eq {}): {} -> {}",
            c.stream, c.stream, c.client, c.server
        ),
    )?;
    say(
        out,
        opts,
        format!(
            "  frames {}-{}, {} long, {}{}",
            c.first_frame,
            c.last_frame,
            fmt_ms(c.duration_ms),
            match c.ending {
                Ending::Fin => "closed by FINs both ways",
                Ending::Reset => "ended by a RST",
                Ending::Open => "still open when the capture ended",
                Ending::Idle => "silent past the idle timeout",
                Ending::Refused => "refused: the SYN was answered with RST",
                Ending::Unreachable =>
                    "unreachable: an ICMP error answered the SYN (its last frame)",
            },
            if c.partial {
                ", its SYN not in the capture (partial)"
            } else {
                ""
            }
        ),
    )?;
    if let Some(files) = crate::words::span_in_files(stats, c.first_frame, c.last_frame) {
        say(out, opts, format!("  in the files: {files}"))?;
    }
    say(
        out,
        opts,
        format!(
            "  vantage: {}   RTT: {}{}   TCP handshake (initial RTT): {}",
            c.vantage.as_str(),
            opt_ms(c.rtt_ms),
            c.rtt_source
                .map(|s| format!(" (from {s:?})").to_lowercase())
                .unwrap_or_default(),
            opt_ms(c.tcp_handshake_ms)
        ),
    )?;
    if c.handshake.relay {
        say(
            out,
            opts,
            "  relay: the SYN-ACK carried no TCP option, not even the MSS no operating system leaves out: a relay next \
             to the client answered it (a phone's VPN capture app) and opened its own connection to the server, whose \
             round trips the capture does not show (no RTT, nothing laid on either host)"
                .to_string(),
        )?;
    }
    if let Some(l) = &c.name_lookup {
        let tried = if l.names_tried.is_empty() {
            String::new()
        } else {
            format!("; asked first: {}", l.names_tried.join(", "))
        };
        say(
            out,
            opts,
            format!(
                "  name lookup: {} via {}, {} (frames {}-{}: {} queries, {} unanswered{tried}), SYN {} after its last answer",
                l.name,
                l.resolver,
                fmt_ms(l.ms),
                l.first_frame,
                l.last_frame,
                l.queries,
                l.unanswered,
                fmt_ms(l.syn_after_ms)
            ),
        )?;
    }
    let h = &c.handshake;
    say(
        out,
        opts,
        format!(
            "  MSS {}/{}  wscale {}/{}  SACK {}  timestamps {}{}",
            h.client_mss.map_or("-".into(), |v| v.to_string()),
            h.server_mss.map_or("-".into(), |v| v.to_string()),
            h.client_wscale.map_or("-".into(), |v| v.to_string()),
            h.server_wscale.map_or("-".into(), |v| v.to_string()),
            if h.sack_permitted { "yes" } else { "no" },
            if h.timestamps { "yes" } else { "no" },
            h.tfo
                .as_ref()
                .map(|t| format!("  TFO: {} ({} bytes in SYN)", t.outcome, t.syn_data_bytes))
                .unwrap_or_default()
        ),
    )?;
    if let Some(m) = &c.mptcp {
        say(out, opts, format!("  MPTCP: {}", mptcp_words(m)))?;
    }
    if let Some(p) = &c.proxy_protocol {
        say(out, opts, format!("  PROXY protocol: {}", proxy_words(p)))?;
    }
    for (name, d) in [
        ("client->server", &c.client_to_server),
        ("server->client", &c.server_to_client),
    ] {
        say(
            out,
            opts,
            format!("  {name}: {} packets, {} bytes, {} retransmissions, {} out-of-order, {} zero windows, max {} bytes in flight",
            d.packets, d.bytes, d.retransmissions, d.out_of_order, d.zero_windows, d.max_bytes_in_flight
        ))?;
    }
    if let Some(tls) = &c.tls {
        say(
            out,
            opts,
            format!(
                "  TLS: {} {}  SNI {}  ALPN {}  key share {}{}{}",
                match tls.version {
                    None => "(no ServerHello)".to_string(),
                    Some(v) if tls.version_inferred => {
                        format!("{v} (from its records: the snap length cut the ServerHello)")
                    }
                    Some(v) => v.to_string(),
                },
                tls.cipher.as_deref().unwrap_or(""),
                tls.sni.as_deref().unwrap_or("-"),
                if tls.alpn.is_empty() {
                    "-".to_string()
                } else {
                    tls.alpn.join(",")
                },
                tls.server_key_share.as_deref().unwrap_or("-"),
                match tls.resumed {
                    Some(true) => "  resumed",
                    Some(false) => "  full handshake",
                    None => "",
                },
                if tls.hello_retry_request {
                    "  HelloRetryRequest"
                } else {
                    ""
                }
            ),
        )?;
        say(
            out,
            opts,
            format!(
                "  ClientHello {} bytes in frame(s) {:?}; server flight {} bytes",
                tls.client_hello_bytes, tls.client_hello_frames, tls.server_flight_bytes
            ),
        )?;
    }
    writeln!(out)?;
    say(
        out,
        opts,
        "Round-trip ledger (client's view; excess = beyond the ideal):".to_string(),
    )?;
    writeln!(out, "{}", ledger_table(&c.ledger, opts))?;
    if c.excess_rtts > 0.0 {
        let turnarounds = c.turnaround_ms();
        let mut parts = Vec::new();
        if turnarounds >= TURNAROUNDS_SHOWN_MS {
            parts.push(format!(
                "{} the hosts' own turnarounds, each too short to be a cause (the server's {}, the client's {})",
                fmt_ms(turnarounds),
                fmt_ms(c.server_turnaround_ms),
                fmt_ms(c.client_turnaround_ms)
            ));
        }
        if c.path_queue_ms >= TURNAROUNDS_SHOWN_MS {
            parts.push(format!(
                "{} the path's queues in the TLS handshake (tls_extra_rtt)",
                fmt_ms(c.path_queue_ms)
            ));
        }
        let of_it = match parts.is_empty() {
            true => String::new(),
            false => format!("; of it, {}", parts.join(", ")),
        };
        say(
            out,
            opts,
            format!(
                "Latency phases spent {} beyond ideal ({}){of_it}.",
                fmt_rtts(c.excess_rtts),
                fmt_ms(c.excess_ms)
            ),
        )?;
    }
    if !c.findings.is_empty() {
        writeln!(out)?;
        writeln!(out, "Findings:")?;
        for x in &c.findings {
            let cost = match x.cost_rtts {
                Some(r) => format!("{} ({r:+.1} RTT)", fmt_ms(x.cost_ms)),
                None => fmt_ms(x.cost_ms),
            };
            say(
                out,
                opts,
                format!(
                    "  {} [{}] {}",
                    x.kind,
                    x.phase.map_or("-", |p| p.name()),
                    cost
                ),
            )?;
            say(
                out,
                opts,
                format!(
                    "    {}",
                    wrap(&x.explanation, text_width(opts, 4)).replace('\n', "\n    ")
                ),
            )?;
            say(
                out,
                opts,
                format!(
                    "    fix: {}",
                    wrap(&x.fix, text_width(opts, 9)).replace('\n', "\n         ")
                ),
            )?;
            say(
                out,
                opts,
                format!(
                    "    frames {:?}   Wireshark: {}",
                    x.frames, x.display_filter
                ),
            )?;
            for (file, frames) in crate::words::frames_in_files(stats, &x.frames) {
                say(
                    out,
                    opts,
                    format!("    in {file}: frame.number in {{{frames}}}"),
                )?;
            }
        }
        let unexplained = c.unexplained_ms - c.turnaround_ms() - c.path_queue_ms;
        if unexplained > 0.5 {
            say(
                out,
                opts,
                format!(
                    "  unexplained: {} of the latency phases' excess",
                    fmt_ms(unexplained)
                ),
            )?;
        }
    }
    if let Some(ladder) = &c.ladder {
        writeln!(out)?;
        say(
            out,
            opts,
            format!("Ladder (Wireshark filter: tcp.stream eq {}):", c.stream),
        )?;
        let mut notes: std::collections::BTreeMap<u64, Vec<String>> = Default::default();
        if let Some(tls) = &c.tls {
            for m in &tls.messages {
                notes.entry(m.frame).or_default().push(if m.cut {
                    format!("TLS {} ({} B, cut by the snap length)", m.message, m.bytes)
                } else {
                    format!("TLS {} ({} B)", m.message, m.bytes)
                });
            }
        }
        // (A row summing a long connection's later exchanges spans them
        // all: no one place in the ladder.)
        for r in c.ledger.iter().filter(|r| r.summed == 0) {
            notes
                .entry(r.start_frame)
                .or_default()
                .push(format!("[{} starts]", r.label));
            notes
                .entry(r.end_frame)
                .or_default()
                .push(format!("[{} ends]", r.label));
        }
        let mut t = table(opts);
        t.set_header(vec![
            "frame",
            "t (ms)",
            "",
            "flags",
            "seq",
            "ack",
            "len",
            "win",
            "in flight",
            "notes",
        ]);
        for e in ladder {
            let arrow = match e.direction {
                Direction::ClientToServer => "C -> S",
                Direction::ServerToClient => "C <- S",
            };
            let mut n = e.notes.clone();
            if let Some(extra) = notes.get(&e.frame) {
                n.extend(extra.iter().cloned());
            }
            t.add_row(vec![
                right(e.frame),
                right(format!("{:.3}", e.t_ms)),
                Cell::new(arrow),
                Cell::new(&e.flags),
                right(e.seq),
                right(e.ack),
                right(e.len),
                right(e.window),
                right(e.in_flight),
                Cell::new(n.join("; ")),
            ]);
        }
        writeln!(out, "{t}")?;
    }
    Ok(())
}

/// What the connection detail says of a PROXY protocol header: the
/// client is a balancer, and whom it spoke for.
fn proxy_words(p: &rttdoc_model::ProxyProtocolReport) -> String {
    let whom = match (&p.client, &p.destination) {
        _ if p.local => "its own connection (LOCAL: a health check)".to_string(),
        (Some(c), Some(d)) => format!("for client {c} (which connected to {d})"),
        (Some(c), None) => format!("for client {c}"),
        _ => "naming no client address".to_string(),
    };
    format!(
        "v{} header in frame {}: the client here is a load balancer or proxy, speaking {whom}",
        p.version, p.frame
    )
}

/// What the connection detail says of a Multipath TCP subflow.
fn mptcp_words(m: &rttdoc_model::MptcpReport) -> String {
    let kind = match m.subflow {
        rttdoc_model::MptcpSubflowKind::First => "the connection's first subflow (MP_CAPABLE)",
        rttdoc_model::MptcpSubflowKind::Joined => "a subflow joined to a connection (MP_JOIN)",
        rttdoc_model::MptcpSubflowKind::Unknown => "a subflow (its handshake not captured)",
    };
    let others = match m.other_subflows_frame {
        Some(frame) => format!(
            "; the connection also sent over other subflows (frame {frame}'s Data ACK runs \
             past this one's data)"
        ),
        None => String::new(),
    };
    let split = match m.split_turns.len() {
        0 => String::new(),
        n => format!(
            "; {n} answer(s) began on another subflow (not measured here; frames {})",
            m.split_turns
                .iter()
                .take(8)
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    format!("{kind}{others}{split}")
}

/// A cause's fix, and the others its findings gave that cost a tenth of
/// its time or more (Nagle on the server's socket beside the client's).
fn fix_words(c: &crate::summary::Cause) -> String {
    let mut words = c.fix.clone();
    for other in c.other_fixes() {
        words.push_str(&format!(
            "\nAlso ({} on {} connection{}): {}",
            fmt_ms(other.cost_ms),
            other.connections,
            if other.connections == 1 { "" } else { "s" },
            other.fix
        ));
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_excess_the_totals_count_is_shown_and_only_half_an_rtt_is_coloured() {
        // Under half an RTT: shown (the headline counts it), uncoloured.
        assert_eq!(excess_text(Some(0.385), Some(15.48)), "+0.4 RTT (15.5 ms)");
        assert_eq!(excess_color(Some(0.385)), None);
        assert_eq!(excess_text(Some(0.05), Some(2.1)), "+0.05 RTT (2.10 ms)");
        assert_eq!(excess_text(Some(0.2), None), "+0.2 RTT");
        assert_eq!(excess_color(Some(0.6)), Some(Color::Yellow));
        assert_eq!(excess_color(Some(2.0)), Some(Color::Red));
        assert_eq!(excess_text(Some(0.0), Some(0.0)), "-");
        assert_eq!(excess_text(None, None), "?");
        assert_eq!(excess_color(None), None);
    }
}
