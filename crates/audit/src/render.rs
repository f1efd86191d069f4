//! The audit's output: terminal text and the versioned JSON document
//! (docs/audit.md).

use std::io::{self, Write};

use serde_json::json;

use crate::{Report, Severity};

/// Layout version of `rttdoc audit --json`: changes when a field is
/// removed or changes meaning; new fields may be added within a version.
pub const SCHEMA_VERSION: u32 = 1;

pub fn json(report: &Report, generator: &str) -> serde_json::Value {
    let count = |s: Severity| report.findings.iter().filter(|f| f.severity == s).count();
    json!({
        "schema": "rttdoc-audit",
        "schema_version": SCHEMA_VERSION,
        "generator": generator,
        "inputs": report.inputs,
        "findings": report.findings,
        "capture": report.capture,
        "summary": {
            "findings": report.findings.len(),
            "high": count(Severity::High),
            "medium": count(Severity::Medium),
            "low": count(Severity::Low),
            "info": count(Severity::Info),
            "worst": report.worst().map(Severity::name),
        },
    })
}

fn paint(color: bool, code: &str, s: &str) -> String {
    if color {
        format!("\x1b[{code}m{s}\x1b[0m")
    } else {
        s.to_string()
    }
}

pub fn terminal(out: &mut dyn Write, report: &Report, color: bool) -> io::Result<()> {
    let i = &report.inputs;
    let mut read = Vec::new();
    read.extend(i.nginx.iter().map(|f| format!("nginx {f}")));
    read.extend(i.haproxy.iter().map(|f| format!("haproxy {f}")));
    if let Some(r) = &i.sysctl_root {
        read.push(format!("sysctls under {r}"));
    }
    if !i.routes.is_empty() {
        read.push(format!("{} routes", i.routes.len()));
    }
    if !i.certificates.is_empty() {
        read.push(format!("{} certificate files", i.certificates.len()));
    }
    writeln!(
        out,
        "rttdoc audit: read {}",
        if read.is_empty() {
            "nothing".to_string()
        } else {
            read.join(", ")
        }
    )?;
    if !i.sysctls.is_empty() {
        let values: Vec<String> = i
            .sysctls
            .iter()
            .map(|(k, v)| {
                format!(
                    "{}={v}",
                    k.trim_start_matches("net.ipv4.")
                        .trim_start_matches("net.core.")
                )
            })
            .collect();
        writeln!(out, "  sysctls: {}", values.join(" "))?;
    }
    for r in i
        .routes
        .iter()
        .filter(|r| r.dst == "default" || r.initcwnd.is_some() || r.quickack)
    {
        let mut attrs = Vec::new();
        if let Some(w) = r.initcwnd {
            attrs.push(format!("initcwnd {w}"));
        }
        if let Some(w) = r.initrwnd {
            attrs.push(format!("initrwnd {w}"));
        }
        if r.quickack {
            attrs.push("quickack 1".into());
        }
        if attrs.is_empty() {
            attrs.push("initcwnd 10 (default)".into());
        }
        writeln!(out, "  route {}: {}", r.text, attrs.join(", "))?;
    }
    for c in &i.certificates {
        writeln!(
            out,
            "  {}: {} certificates, {} bytes DER, leaf {}; server flight ~{} bytes (TLS 1.3), ~{} (TLS 1.2)",
            c.file,
            c.certificates.len(),
            c.der_bytes_total,
            c.leaf().map(|l| l.key.as_str()).unwrap_or("?"),
            c.flight_tls13,
            c.flight_tls12
        )?;
    }
    writeln!(out)?;
    if report.findings.is_empty() {
        writeln!(out, "No setting found that costs round trips.")?;
    }
    for f in &report.findings {
        let (code, label) = match f.severity {
            Severity::High => ("1;31", "HIGH"),
            Severity::Medium => ("1;33", "MEDIUM"),
            Severity::Low => ("36", "LOW"),
            Severity::Info => ("2", "INFO"),
        };
        writeln!(
            out,
            "{} {}  (confidence {})",
            paint(color, code, &format!("{label:<6}")),
            paint(color, "1", f.check),
            f.confidence.name()
        )?;
        writeln!(out, "  {}", f.title)?;
        writeln!(out, "  where:   {}   {}", f.location.at, f.location.text)?;
        for r in &f.related {
            writeln!(out, "           {}   {}", r.at, r.text)?;
        }
        writeln!(out, "  cost:    {}", f.cost.text)?;
        writeln!(out, "  why:     {}", f.why)?;
        writeln!(out, "  fix:     {}", f.fix.text)?;
        if let Some(e) = &f.evidence {
            let status = match e.status {
                "confirmed" => paint(color, "1;32", "confirmed"),
                "contradicted" => paint(color, "1;35", "contradicted"),
                s => s.replace('_', " "),
            };
            let frames = if e.frames.is_empty() {
                String::new()
            } else {
                format!(
                    " (frames {})",
                    e.frames
                        .iter()
                        .map(|f| f.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            writeln!(out, "  capture: {status}: {}{frames}", e.text)?;
        }
        writeln!(out)?;
    }
    if let Some(c) = &report.capture {
        writeln!(out, "Capture {}: {} connections", c.file, c.connections)?;
        if c.kinds.is_empty() {
            writeln!(out, "  no capture finding that a setting could cause")?;
        }
        for k in &c.kinds {
            let by = if k.explained_by.is_empty() {
                "not explained by the configuration given (another server or proxy, the application, the path?)".to_string()
            } else {
                format!("explained by {}", k.explained_by.join("; "))
            };
            writeln!(
                out,
                "  {} on {} connection{}: {by}",
                k.kind,
                k.connections,
                if k.connections == 1 { "" } else { "s" }
            )?;
        }
        writeln!(out)?;
    }
    for n in &i.notes {
        writeln!(out, "note: {n}")?;
    }
    Ok(())
}
