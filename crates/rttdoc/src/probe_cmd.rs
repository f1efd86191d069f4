//! `rttdoc probe URL`: the command line of crates/probe.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, ValueEnum};
use rttdoc_probe::engine::Variant;
use rttdoc_probe::target::{ConnectTo, Family, Resolve, Url};
use rttdoc_probe::tls::{TlsOptions, Versions};

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum ProbeFormat {
    /// For people, 80 columns.
    Terminal,
    /// The versioned document of docs/probe.md.
    Json,
    /// curl's -w variables, `time_connect: 0.042137` (seconds), one block
    /// per request.
    Curl,
}

#[derive(Args)]
pub struct ProbeArgs {
    /// http:// or https:// URL (HTTP/1.1, or h2 with --http2).
    url: String,
    /// Requests per configuration.
    #[arg(short = 'n', long, default_value_t = 1)]
    count: usize,
    /// Pause between requests (seconds, or with a unit: 200ms).
    #[arg(long, value_parser = parse_seconds, default_value = "0")]
    interval: Duration,
    /// Compare two configurations, interleaved: tfo, resumption,
    /// early-data, tls-version, group=A,B (key shares), url=URL,
    /// addr=IP (another address for the URL's host), http=1.1,2
    /// (HTTP/1.1 vs h2).
    #[arg(long)]
    compare: Option<String>,
    /// HOST:PORT:ADDR[,ADDR...] as in curl: use ADDR for HOST:PORT.
    #[arg(long)]
    resolve: Vec<String>,
    /// HOST1:PORT1:HOST2:PORT2 as in curl: connect there instead.
    #[arg(long = "connect-to")]
    connect_to: Vec<String>,
    /// IPv4 addresses only.
    #[arg(short = '4', long = "ipv4", conflicts_with = "ipv6")]
    ipv4: bool,
    /// IPv6 addresses only.
    #[arg(short = '6', long = "ipv6")]
    ipv6: bool,
    /// Server name to send (SNI) and verify, instead of the URL's host.
    #[arg(long)]
    sni: Option<String>,
    /// ALPN protocols to offer, comma-separated (default http/1.1, with
    /// --http2 h2,http/1.1; a server choosing h2 needs --http2).
    #[arg(long, value_delimiter = ',')]
    alpn: Vec<String>,
    /// HTTP/2 for https (ALPN h2, as curl --http2): a server that
    /// chooses HTTP/1.1 is spoken to in HTTP/1.1, and the run says so.
    #[arg(long = "http2", conflicts_with = "http1_1")]
    http2: bool,
    /// HTTP/1.1 (the default, as curl --http1.1).
    #[arg(long = "http1.1")]
    http1_1: bool,
    /// Do not verify the server's certificate.
    #[arg(short = 'k', long)]
    insecure: bool,
    /// CA certificates (PEM) to verify with, instead of the system's.
    #[arg(long)]
    cacert: Option<PathBuf>,
    /// Offer TLS 1.2 only.
    #[arg(long = "tlsv1.2", conflicts_with = "tls13")]
    tls12: bool,
    /// Offer TLS 1.3 only.
    #[arg(long = "tlsv1.3")]
    tls13: bool,
    /// Key-share groups in order, comma-separated: x25519, secp256r1,
    /// secp384r1, X25519MLKEM768 (post-quantum hybrid, TLS 1.3; with
    /// x25519 after it, both shares go, as in Chrome). An unsupported
    /// first one makes the server ask again: HelloRetryRequest.
    #[arg(long, value_delimiter = ',')]
    groups: Vec<String>,
    /// TCP Fast Open (TCP_FASTOPEN_CONNECT): the first connection asks
    /// for a cookie (a warm-up), the next put their first bytes in the SYN.
    #[arg(long)]
    tfo: bool,
    /// Resume TLS sessions (tickets) between requests (after a warm-up).
    #[arg(long)]
    resume: bool,
    /// Send the request as TLS 1.3 0-RTT early data when resuming (safe
    /// methods only: GET, HEAD, OPTIONS).
    #[arg(long = "early-data")]
    early_data: bool,
    /// Allow early data for any method (replayable!).
    #[arg(long = "early-data-unsafe")]
    early_data_unsafe: bool,
    /// Request method.
    #[arg(short = 'X', long = "request", default_value = "GET")]
    method: String,
    /// Request body (sent with Content-Length).
    #[arg(short = 'd', long)]
    data: Option<String>,
    /// Extra request header, `Name: value`.
    #[arg(short = 'H', long = "header")]
    headers: Vec<String>,
    /// Give up on a request after this long (seconds, as curl's, or
    /// with a unit: 500ms).
    #[arg(long = "max-time", value_parser = parse_seconds, default_value = "10")]
    max_time: Duration,
    /// Write the probe's packets here (pcapng).
    #[arg(long = "save-capture")]
    save_capture: Option<PathBuf>,
    /// Do not capture (timings and TCP_INFO only).
    #[arg(long = "no-capture")]
    no_capture: bool,
    /// Output format.
    #[arg(long, value_enum, default_value = "terminal")]
    format: ProbeFormat,
    /// Same as --format json.
    #[arg(long)]
    json: bool,
}

/// A duration whose bare number means seconds, as in curl's options
/// (`--max-time 10`), or with a unit (`200ms`, `1.5s`, `500us`).
fn parse_seconds(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    if t.parse::<f64>().is_ok() {
        return crate::lab_cmd::parse_duration(&format!("{t}s"));
    }
    crate::lab_cmd::parse_duration(t)
}

fn base_variant(a: &ProbeArgs) -> Result<Variant, String> {
    let url = Url::parse(&a.url)?;
    Ok(Variant {
        label: a.url.clone(),
        url,
        connect_to: a
            .connect_to
            .iter()
            .map(|c| ConnectTo::parse(c))
            .collect::<Result<_, _>>()?,
        resolve: a
            .resolve
            .iter()
            .map(|r| Resolve::parse(r))
            .collect::<Result<_, _>>()?,
        family: if a.ipv4 {
            Family::V4
        } else if a.ipv6 {
            Family::V6
        } else {
            Family::Any
        },
        tfo: a.tfo,
        tls: TlsOptions {
            versions: if a.tls12 {
                Versions::Tls12
            } else if a.tls13 {
                Versions::Tls13
            } else {
                Versions::Both
            },
            groups: a.groups.clone(),
            // curl --http1.1 offers http/1.1, curl --http2 h2 then
            // http/1.1; so does the probe unless told.
            alpn: if !a.alpn.is_empty() {
                a.alpn.clone()
            } else {
                alpn_for(a.http2)
            },
            sni: a.sni.clone(),
            insecure: a.insecure,
            cacert: a.cacert.clone(),
            resume: a.resume,
            early_data: a.early_data || a.early_data_unsafe,
        },
        method: a.method.to_ascii_uppercase(),
        body: a.data.as_ref().map(|d| d.as_bytes().to_vec()),
        headers: a.headers.clone(),
        early_data_unsafe: a.early_data_unsafe,
        timeout: a.max_time,
        http2: a.http2,
    })
}

/// The ALPN list curl offers with --http2 / --http1.1.
fn alpn_for(http2: bool) -> Vec<String> {
    if http2 {
        vec!["h2".to_string(), "http/1.1".to_string()]
    } else {
        vec!["http/1.1".to_string()]
    }
}

/// The two configurations of `--compare WHAT`: A the baseline, B the change.
fn compare_variants(what: &str, base: &Variant) -> Result<(Variant, Variant), String> {
    let (mut a, mut b) = (base.clone(), base.clone());
    let (key, value) = what.split_once('=').unwrap_or((what, ""));
    let https = |what: &str| {
        if base.url.https {
            Ok(())
        } else {
            Err(format!("--compare {what} needs an https:// URL"))
        }
    };
    match key {
        "tfo" => {
            (a.tfo, b.tfo) = (false, true);
            (a.label, b.label) = ("TFO off".into(), "TFO on".into());
        }
        "resumption" | "resume" => {
            https(key)?;
            (a.tls.resume, b.tls.resume) = (false, true);
            (a.tls.early_data, b.tls.early_data) = (false, false);
            (a.label, b.label) = ("full handshake".into(), "resumed".into());
        }
        "early-data" | "0rtt" | "0-rtt" => {
            https(key)?;
            (a.tls.resume, b.tls.resume) = (true, true);
            (a.tls.early_data, b.tls.early_data) = (false, true);
            a.tls.versions = tls13_unless_12(&base.tls)?;
            b.tls.versions = a.tls.versions;
            (a.label, b.label) = ("resumed, no 0-RTT".into(), "resumed + 0-RTT".into());
        }
        "tls-version" | "tls" => {
            https(key)?;
            (a.tls.versions, b.tls.versions) = (Versions::Tls12, Versions::Tls13);
            (a.label, b.label) = ("TLS 1.2".into(), "TLS 1.3".into());
        }
        "group" | "groups" => {
            https(key)?;
            let (g1, g2) = value
                .split_once(',')
                .ok_or("--compare group=A,B: two key-share groups (e.g. x25519,secp384r1)")?;
            for g in [g1, g2] {
                rttdoc_probe::tls::group(g)?;
            }
            // The key share goes to the first group; the others stay
            // offered (a server that wants one of them answers with a
            // HelloRetryRequest, as with any client).
            let order = |first: &str| {
                let mut v = vec![first.to_string()];
                for g in ["x25519", "secp256r1", "secp384r1"] {
                    if rttdoc_probe::tls::group(g).ok().map(|x| x.name())
                        != rttdoc_probe::tls::group(first).ok().map(|x| x.name())
                    {
                        v.push(g.to_string());
                    }
                }
                v
            };
            (a.tls.groups, b.tls.groups) = (order(g1), order(g2));
            (a.label, b.label) = (format!("key share {g1}"), format!("key share {g2}"));
        }
        "url" => {
            b.url = Url::parse(value)?;
            b.label = value.to_string();
        }
        "addr" | "address" => {
            let ip: std::net::IpAddr = value
                .trim_matches(['[', ']'])
                .parse()
                .map_err(|_| format!("--compare addr={value}: not an IP address"))?;
            b.connect_to = vec![ConnectTo {
                from_host: None,
                from_port: None,
                to_host: Some(ip.to_string()),
                to_port: None,
            }];
            b.label = format!("via {ip}");
            a.label = "as resolved".into();
        }
        "http" | "h2" | "http2" | "http-version" => {
            if !base.url.https {
                return Err(format!(
                    "--compare {what} needs an https:// URL (the probe does not speak h2c)"
                ));
            }
            if !matches!(value, "" | "1.1,2" | "1.1,h2") {
                return Err(format!(
                    "--compare {what}: http=1.1,2 (HTTP/1.1 against h2) is the one pair"
                ));
            }
            (a.http2, b.http2) = (false, true);
            // An --alpn list given applies to both sides as given.
            if base.tls.alpn == alpn_for(base.http2) {
                (a.tls.alpn, b.tls.alpn) = (alpn_for(false), alpn_for(true));
            }
            (a.label, b.label) = ("HTTP/1.1".into(), "HTTP/2".into());
        }
        other => {
            return Err(format!(
                "--compare {other}: one of tfo, resumption, early-data, tls-version, \
                 group=A,B, url=URL, addr=IP, http=1.1,2"
            ))
        }
    }
    Ok((a, b))
}

fn tls13_unless_12(t: &TlsOptions) -> Result<Versions, String> {
    if t.versions == Versions::Tls12 {
        return Err("0-RTT early data is TLS 1.3 only".into());
    }
    Ok(Versions::Tls13)
}

pub fn probe(a: ProbeArgs) -> ExitCode {
    let fail = |m: String| {
        eprintln!("rttdoc probe: {m}");
        ExitCode::from(2)
    };
    if a.count == 0 {
        return fail("--count must be at least 1".into());
    }
    let base = match base_variant(&a) {
        Ok(v) => v,
        Err(e) => return fail(e),
    };
    if base.tls.early_data && base.tls.versions == Versions::Tls12 {
        return fail("0-RTT early data is TLS 1.3 only".into());
    }
    if base.http2 && !base.url.https {
        return fail("--http2 needs an https:// URL (the probe does not speak h2c)".into());
    }
    let variants = match &a.compare {
        None => vec![base],
        Some(w) => match compare_variants(w, &base) {
            Ok((x, y)) => vec![x, y],
            Err(e) => return fail(e),
        },
    };
    let plan = rttdoc_probe::Plan {
        variants,
        compare: a.compare.clone(),
        count: a.count,
        interval: a.interval,
        capture: !a.no_capture,
        save_capture: a.save_capture.clone(),
    };
    // Long runs say where they are, on a terminal only (never in a pipe).
    use std::io::IsTerminal;
    let total = plan.count * plan.variants.len();
    let show = std::io::stderr().is_terminal() && total > 1;
    let mut progress = |m: &rttdoc_probe::engine::Measured, n: usize, warmup: bool| {
        if show {
            eprint!(
                "\r\x1b[Krequest {n}{}: total {:.1} ms",
                if warmup { " (warm-up)" } else { "" },
                m.timings.total
            );
        }
    };
    let result = rttdoc_probe::run(&plan, &mut progress);
    if show {
        eprint!("\r\x1b[K");
    }
    let report = match result {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    let format = if a.json { ProbeFormat::Json } else { a.format };
    let text = match format {
        ProbeFormat::Terminal => rttdoc_probe::output::terminal(&report),
        ProbeFormat::Json => rttdoc_probe::output::json(&report),
        ProbeFormat::Curl => rttdoc_probe::output::curl(&report),
    };
    print!("{text}");
    if !text.ends_with('\n') {
        println!();
    }
    let failed = report
        .samples
        .iter()
        .filter(|s| s.measured.error.is_some())
        .count();
    if failed > 0 {
        for s in report
            .samples
            .iter()
            .filter(|s| s.measured.error.is_some())
            .take(3)
        {
            eprintln!(
                "rttdoc probe: request {} failed: {}",
                s.request,
                s.measured.error.as_deref().unwrap_or("")
            );
        }
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cmd {
        #[command(flatten)]
        args: ProbeArgs,
    }

    impl ProbeArgs {
        fn parse_from_args(args: &[&str]) -> ProbeArgs {
            Cmd::parse_from(std::iter::once("probe").chain(args.iter().copied())).args
        }
    }

    #[test]
    fn bare_numbers_are_seconds_as_in_curl() {
        assert_eq!(parse_seconds("10"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_seconds("0.5"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_seconds("200ms"), Ok(Duration::from_millis(200)));
        assert!(parse_seconds("ten").is_err());
    }

    #[test]
    fn compare_http_offers_h2_then_http11_on_its_h2_side_only() {
        let base = base_variant(&ProbeArgs::parse_from_args(&["https://h/"])).unwrap();
        let (a, b) = compare_variants("http=1.1,2", &base).unwrap();
        assert_eq!((a.http2, b.http2), (false, true));
        assert_eq!(a.tls.alpn, ["http/1.1"]);
        assert_eq!(b.tls.alpn, ["h2", "http/1.1"]);
        assert!(compare_variants("http=2,3", &base).is_err());
        let h2 = base_variant(&ProbeArgs::parse_from_args(&["--http2", "https://h/"])).unwrap();
        assert!(h2.http2);
        assert_eq!(h2.tls.alpn, ["h2", "http/1.1"]);
    }

    #[test]
    fn compare_group_keeps_the_other_groups_offered_behind_the_first() {
        let base = base_variant(&ProbeArgs::parse_from_args(&["https://h/"])).unwrap();
        let (a, b) = compare_variants("group=x25519,secp384r1", &base).unwrap();
        assert_eq!(a.tls.groups, ["x25519", "secp256r1", "secp384r1"]);
        assert_eq!(b.tls.groups, ["secp384r1", "x25519", "secp256r1"]);
        // The post-quantum hybrid (aws-lc-rs's), by its IANA name in any
        // case, keeps the classic groups behind it (x25519's share goes
        // too); the classic side offers no post-quantum group.
        let (a, b) = compare_variants("group=x25519,X25519MLKEM768", &base).unwrap();
        assert_eq!(a.tls.groups, ["x25519", "secp256r1", "secp384r1"]);
        assert_eq!(
            b.tls.groups,
            ["X25519MLKEM768", "x25519", "secp256r1", "secp384r1"]
        );
        assert_eq!(b.label, "key share X25519MLKEM768");
        assert!(compare_variants("group=x25519mlkem768,x25519", &base).is_ok());
        assert!(compare_variants("group=x25519,kyber", &base)
            .unwrap_err()
            .contains("X25519MLKEM768"));
        let plain = base_variant(&ProbeArgs::parse_from_args(&["http://h/"])).unwrap();
        assert!(compare_variants("http=1.1,2", &plain)
            .unwrap_err()
            .contains("h2c"));
        assert!(compare_variants("resumption", &plain).is_err());
    }
}
