//! The probe's outputs: the terminal (80 columns, units on every number),
//! `--json` (docs/probe.md), and `--format curl` (curl's `-w` variables,
//! one `name: value` line each, a blank line between requests).

use std::fmt::Write as _;

use rttdoc_report::fmt_ms;

use crate::run::{counted, Report, Sample};
use crate::timing::CURL_VARS;

const WIDTH: usize = 80;

/// Word-wraps `text` to the terminal width with an indent.
fn wrap(out: &mut String, indent: usize, text: &str) {
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && indent + line.len() + 1 + word.len() > WIDTH - 1 {
            let _ = writeln!(out, "{:indent$}{line}", "");
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        let _ = writeln!(out, "{:indent$}{line}", "");
    }
}

fn opt_rtts(x: Option<f64>) -> String {
    x.map_or("-".into(), |r| format!("{r:.1}"))
}

fn tls_line(s: &Sample) -> Option<String> {
    let t = s.measured.tls.as_ref()?;
    let mut parts = vec![t.version.clone().unwrap_or_else(|| "TLS ?".into())];
    if let Some(g) = &t.group {
        parts.push(g.clone());
    }
    parts.push(match t.handshake {
        Some("resumed") => "resumed".into(),
        Some("full_with_hello_retry_request") => "full + HelloRetryRequest".into(),
        Some(_) => "full handshake".into(),
        None => "handshake not finished".into(),
    });
    if t.early_data_sent {
        parts.push(match t.early_data_accepted {
            Some(true) => "0-RTT accepted".into(),
            Some(false) => "0-RTT rejected".into(),
            None => "0-RTT sent".into(),
        });
    }
    parts.push(format!("ClientHello {} B", t.client_hello_bytes));
    Some(parts.join(", "))
}

fn one_line(s: &Sample) -> String {
    let t = &s.measured.timings;
    let mut l = format!(
        "#{:<3}{} connect {:>8}  appconnect {:>8}  ttfb {:>8}  total {:>8}",
        s.request,
        if s.warmup { "w" } else { " " },
        fmt_ms(t.connect),
        if s.measured.tls.is_some() {
            fmt_ms(t.appconnect)
        } else {
            "-".into()
        },
        fmt_ms(t.starttransfer),
        fmt_ms(t.total)
    );
    if let Some(e) = &s.measured.error {
        l = format!("#{:<3}  failed: {e}", s.request);
    }
    l
}

fn tags(s: &Sample) -> Vec<String> {
    let mut v = Vec::new();
    if let Some(t) = &s.measured.tls {
        match t.handshake {
            Some("resumed") => v.push("resumed".to_string()),
            Some("full_with_hello_retry_request") => v.push("HRR".into()),
            _ => {}
        }
        if t.early_data_accepted == Some(true) {
            v.push("0-RTT".into());
        }
    }
    if let Some(t) = &s.tfo {
        v.push(format!("tfo {}", t.outcome));
    }
    for f in &s.findings {
        if f.cost_ms > 0.0 {
            v.push(f.kind.name().to_string());
        }
    }
    v
}

/// One request in detail: the curl timings, the ledger, the findings.
fn detail(out: &mut String, s: &Sample) {
    let m = &s.measured;
    let _ = writeln!(
        out,
        "request {}{}: {} -> {}",
        s.request,
        if s.warmup { " (warm-up)" } else { "" },
        m.local.map_or("?".into(), |a| a.to_string()),
        m.remote.map_or("?".into(), |a| a.to_string())
    );
    if let Some(e) = &m.error {
        wrap(out, 2, &format!("failed: {e}"));
        if let Some(c) = &s.connection {
            let h = &c.handshake;
            let seen = match c.ending {
                rttdoc_analyze::Ending::Refused => "the server answered the SYN with a RST (nothing listens, or a firewall refuses)".to_string(),
                rttdoc_analyze::Ending::Unreachable => "an ICMP error answered the SYN on the way (unreachable, prohibited, or its TTL ran out)".to_string(),
                _ if h.syn_ack_frame.is_none() => format!(
                    "the SYN went out {} time(s) and nothing answered",
                    h.syn_retransmits + 1
                ),
                e => format!("the connection ended: {}", e.name()),
            };
            wrap(out, 2, &format!("capture: {seen}."));
        }
    }
    if let Some(st) = m.status {
        let _ = writeln!(
            out,
            "  {} {st}, {} body bytes",
            m.http_version.as_deref().unwrap_or("HTTP"),
            m.body_bytes
        );
    }
    if let Some(to) = &m.redirect_url {
        wrap(
            out,
            2,
            &format!(
                "redirect_url: {to}, not followed (as curl without -L). A client that follows it pays this \
                 answer's round trip again, and for another host a new connection: probe the final URL, and \
                 link to it (http_redirect in docs/findings.md)."
            ),
        );
    }
    if let Some(t) = tls_line(s) {
        wrap(out, 2, &t);
    }
    if let Some(w) = m.tls.as_ref().and_then(|t| t.early_data_withheld.as_ref()) {
        wrap(out, 2, &format!("0-RTT not used: {w}"));
    }
    for (name, get) in CURL_VARS {
        let _ = writeln!(out, "  {name:<20}{:>10}", fmt_ms(get(&m.timings)));
    }
    let _ = writeln!(
        out,
        "  round trips ({})   {:>9} {:>6} {:>6} {:>7}",
        if s.ledger_source == "capture" {
            "capture's ledger"
        } else {
            "estimated, no packets"
        },
        "time",
        "RTT",
        "ideal",
        "excess"
    );
    for r in &s.ledger {
        let excess = match r.excess_rtts {
            Some(e) if e >= 0.05 => format!("+{e:.1}"),
            Some(_) => "0".into(),
            None => "-".into(),
        };
        let _ = writeln!(
            out,
            "    {:<34}{:>9} {:>6} {:>6} {:>7}",
            r.phase,
            fmt_ms(r.ms),
            opt_rtts(r.rtts),
            opt_rtts(r.ideal_rtts),
            excess
        );
    }
    let mut facts = Vec::new();
    if let Some(r) = s.rtt_ms {
        facts.push(format!(
            "path RTT {} ({})",
            fmt_ms(r),
            s.rtt_source.unwrap_or("?")
        ));
    }
    if let Some(x) = s.server_ms {
        facts.push(format!("server think time {}", fmt_ms(x)));
    }
    if let Some(i) = &m.tcp_info {
        facts.push(format!("retransmits {}", i.total_retrans));
        if i.delivery_rate_bps > 0 {
            facts.push(format!(
                "delivery rate {:.1} Mbit/s",
                i.delivery_rate_bps as f64 / 1e6
            ));
        }
    }
    if let Some(t) = &s.tfo {
        facts.push(format!("TFO {} ({})", t.outcome, t.source));
    }
    if !facts.is_empty() {
        wrap(out, 2, &(facts.join("; ") + "."));
    }
    let costly: Vec<_> = s.findings.iter().collect();
    if s.connection.is_some() {
        if costly.is_empty() {
            let _ = writeln!(out, "  findings: none");
        } else {
            let _ = writeln!(out, "  findings (frame numbers as in --save-capture):");
        }
        for f in costly {
            let frames: Vec<String> = f.frames.iter().take(8).map(|x| x.to_string()).collect();
            let _ = writeln!(
                out,
                "    {}  {}{}  frames {}",
                f.kind.name(),
                if f.cost_ms >= 0.0 { "+" } else { "" },
                fmt_ms(f.cost_ms),
                frames.join(" ")
            );
            if !f.explanation.is_empty() {
                wrap(out, 6, &f.explanation);
            }
            if !f.fix.is_empty() {
                wrap(out, 6, &format!("fix: {}", f.fix));
            }
        }
    }
}

fn stats_table(out: &mut String, r: &Report, variant: usize) {
    let v = &r.variants[variant];
    let n = counted(&r.samples, variant).count();
    let mut label = if r.variants.len() > 1 {
        format!("{}:", v.label)
    } else {
        String::new()
    };
    // A label wider than its column (a URL, "key share x25519mlkem768")
    // gets a line of its own, so the header stays within 80 columns.
    if label.chars().count() >= 20 {
        wrap(out, 0, &label);
        label.clear();
    }
    let _ = writeln!(
        out,
        "{:<20}{:>11}{:>11}{:>11}{:>11}   ({n} requests)",
        label, "min", "P50", "P95", "max"
    );
    for m in &v.stats {
        let s = m.summary;
        let _ = writeln!(
            out,
            "  {:<18}{:>11}{:>11}{:>11}{:>11}",
            m.measure,
            fmt_ms(s.min),
            fmt_ms(s.p50),
            fmt_ms(s.p95),
            fmt_ms(s.max)
        );
    }
    let rt = &v.rates;
    let mut rates = Vec::new();
    if rt.failed > 0 {
        rates.push(format!("{} of {} failed", rt.failed, rt.requests));
    }
    if rt.tfo_attempts > 0 {
        rates.push(format!(
            "TFO accepted {} of {} ({:.0}%)",
            rt.tfo_accepted,
            rt.tfo_attempts,
            100.0 * rt.tfo_accepted as f64 / rt.tfo_attempts as f64
        ));
    }
    if rt.tls_handshakes > 0 {
        rates.push(format!("resumed {} of {}", rt.resumed, rt.tls_handshakes));
        if rt.hello_retry_requests > 0 {
            rates.push(format!(
                "HelloRetryRequest {} times",
                rt.hello_retry_requests
            ));
        }
        if rt.early_data_sent > 0 {
            rates.push(format!(
                "0-RTT accepted {} of {}",
                rt.early_data_accepted, rt.early_data_sent
            ));
        }
    }
    if !rates.is_empty() {
        wrap(out, 2, &(rates.join("; ") + "."));
    }
    // Findings across the requests: how often, and the median cost.
    let mut kinds: Vec<(String, Vec<f64>)> = Vec::new();
    for s in counted(&r.samples, variant) {
        for f in &s.findings {
            let k = f.kind.name().to_string();
            match kinds.iter_mut().find(|(n, _)| *n == k) {
                Some((_, v)) => v.push(f.cost_ms),
                None => kinds.push((k, vec![f.cost_ms])),
            }
        }
    }
    for (k, costs) in kinds {
        let med = crate::stats::Summary::of(&costs).map_or(0.0, |s| s.p50);
        let _ = writeln!(
            out,
            "  {k}: in {} of {n} requests, median cost {}",
            costs.len(),
            fmt_ms(med)
        );
    }
}

fn compare_table(out: &mut String, r: &Report) {
    let (a, b) = (&r.variants[0], &r.variants[1]);
    wrap(
        out,
        0,
        &format!(
            "compare {}: A = {}, B = {} (interleaved)",
            r.compare.as_deref().unwrap_or("configurations"),
            a.label,
            b.label
        ),
    );
    let _ = writeln!(
        out,
        "{:<19}{:>8}{:>8}{:>8}{:>8}  {:<15}> noise?",
        "(ms)", "A P50", "A P95", "B P50", "B P95", "delta P50"
    );
    for m in &r.comparison {
        let c = &m.comparison;
        let pct = c
            .delta_pct
            .map_or(String::new(), |p| format!(" ({p:+.0}%)"));
        let verdict = match c.p_value {
            // Below 4 samples a side even a clean separation cannot reach
            // p < 0.05: say so rather than "no".
            _ if c.a.n.min(c.b.n) < 4 && !c.exceeds_noise => "too few".to_string(),
            None => "too few".to_string(),
            Some(p) if c.exceeds_noise => format!("yes p={}", short_p(p)),
            Some(p) => format!("no p={}", short_p(p)),
        };
        let _ = writeln!(
            out,
            "{:<19}{:>8}{:>8}{:>8}{:>8}  {:<15}{}",
            m.measure,
            num(c.a.p50),
            num(c.a.p95),
            num(c.b.p50),
            num(c.b.p95),
            format!("{}{pct}", signed(c.delta_p50)),
            verdict
        );
    }
    // What the key share (or the version, or 0-RTT) costs on the wire.
    let hello = |v: usize| -> Option<f64> {
        let sizes: Vec<f64> = counted(&r.samples, v)
            .filter_map(|s| s.measured.tls.as_ref())
            .map(|t| t.client_hello_bytes as f64)
            .collect();
        crate::stats::Summary::of(&sizes).map(|s| s.p50)
    };
    if let (Some(ha), Some(hb)) = (hello(0), hello(1)) {
        if ha != hb {
            let _ = writeln!(
                out,
                "client's first flight (ClientHello ...): A {ha:.0} B, B {hb:.0} B"
            );
        }
    }
}

/// A table cell in ms: two decimals below 10 ms (loopback, LAN), one above.
fn num(x: f64) -> String {
    if x.abs() < 10.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.1}")
    }
}

fn signed(x: f64) -> String {
    let n = num(x);
    if x >= 0.0 {
        format!("+{n}")
    } else {
        n
    }
}

fn short_p(p: f64) -> String {
    if p < 0.001 {
        "<.001".into()
    } else {
        format!("{p:.3}").trim_start_matches('0').to_string()
    }
}

/// The terminal report.
pub fn terminal(r: &Report) -> String {
    let mut out = String::new();
    let many = r.samples.len() > 1;
    if many {
        for s in &r.samples {
            let mut l = one_line(s);
            if r.variants.len() > 1 {
                l = format!("{} {l}", if s.variant == 0 { "A" } else { "B" });
            }
            let t = tags(s);
            let _ = writeln!(out, "{l}");
            if !t.is_empty() && s.measured.error.is_none() {
                wrap(&mut out, 6, &t.join(", "));
            }
        }
        let _ = writeln!(out);
    }
    // The first measured request of each configuration in detail (the
    // others are in --json).
    for v in 0..r.variants.len() {
        if let Some(s) = counted(&r.samples, v)
            .next()
            .or_else(|| r.samples.iter().find(|s| s.variant == v && !s.warmup))
        {
            if r.variants.len() > 1 {
                let _ = writeln!(
                    out,
                    "{}: {}",
                    if v == 0 { "A" } else { "B" },
                    r.variants[v].label
                );
            }
            detail(&mut out, s);
            let _ = writeln!(out);
        }
    }
    if many {
        for v in 0..r.variants.len() {
            stats_table(&mut out, r, v);
        }
        let _ = writeln!(out);
    }
    if r.variants.len() == 2 && !r.comparison.is_empty() {
        compare_table(&mut out, r);
        let _ = writeln!(out);
    }
    if let Some(f) = &r.capture.saved_to {
        let _ = writeln!(out, "capture saved to {f} ({} packets)", r.capture.packets);
    }
    if !r.capture.captured {
        wrap(
            &mut out,
            0,
            &format!(
                "No capture: {}. Measured from the timings and TCP_INFO; not diagnosed:",
                r.capture.reason.as_deref().unwrap_or("unknown reason")
            ),
        );
        for n in &r.not_diagnosed {
            wrap(&mut out, 2, &format!("- {n}"));
        }
    }
    for n in &r.notes {
        wrap(&mut out, 0, &format!("note: {n}"));
    }
    out
}

/// `--format curl`: each measured request's curl -w variables, requests
/// separated by a blank line (warm-ups left out, as they are in the
/// statistics).
pub fn curl(r: &Report) -> String {
    r.samples
        .iter()
        .filter(|s| !s.warmup)
        .map(|s| {
            format!(
                "{}http_version: {}\nredirect_url: {}\n",
                s.measured.timings.curl_lines(),
                curl_http_version(s.measured.http_version.as_deref()),
                s.measured.redirect_url.as_deref().unwrap_or_default()
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// curl's `%{http_version}`: `1.1`, `2`, ... and `0` when no response
/// came.
fn curl_http_version(v: Option<&str>) -> &str {
    match v.and_then(|v| v.strip_prefix("HTTP/")) {
        Some("2" | "2.0") => "2",
        Some("1.1") => "1.1",
        Some("1.0") => "1.0",
        Some(other) => other,
        None => "0",
    }
}

/// `--json`.
pub fn json(r: &Report) -> String {
    serde_json::to_string_pretty(r).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapped_lines_fit_the_terminal() {
        let mut out = String::new();
        wrap(&mut out, 6, &"word ".repeat(60));
        assert!(out.lines().all(|l| l.chars().count() < WIDTH), "{out}");
        assert!(out.lines().count() > 3);
    }

    #[test]
    fn http_versions_print_as_curls() {
        assert_eq!(curl_http_version(Some("HTTP/2")), "2");
        assert_eq!(curl_http_version(Some("HTTP/1.1")), "1.1");
        assert_eq!(curl_http_version(None), "0");
    }

    #[test]
    fn small_p_values_print_short() {
        assert_eq!(short_p(0.0004), "<.001");
        assert_eq!(short_p(0.0123), ".012");
    }
}
