//! The HTML report (`--html`) in a real browser, the annotated capture
//! (`--annotate`) in tshark, and the graph data (`--json --series`)
//! against tshark's view of the same packets.
//!
//! The captures are the lab's (real kernels, real TLS stacks, captured by
//! dumpcap: tests/data/lab), a tcpdump capture of nginx and curl, and
//! public captures (../shared/captures/public).

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{data_dir, require, rttdoc_bin, TempDir};
use serde_json::Value;

/// The lab captures the report is drawn for, with the cause each shows.
const LAB: &[(&str, &str)] = &[
    ("tls13-nagle-builtin", "nagle_hold"),
    ("sftp-nagle-builtin", "nagle_delayed_ack"),
    ("wwr-split-builtin", "write_write_read"),
    ("initcwnd-builtin", "initcwnd_limited"),
    ("slow-reader-builtin", "zero_window"),
];

fn lab(name: &str) -> PathBuf {
    data_dir().join("lab").join(name).join("client.pcapng.gz")
}

fn public(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/captures/public")
        .join(rel)
}

/// Where screenshots are kept after the test (printed).
fn artifacts() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("html-report-artifacts");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn rttdoc(args: &[&str]) -> (String, String) {
    let out = Command::new(rttdoc_bin()).args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success() && !stderr.contains("panicked"),
        "rttdoc {args:?} failed: {stderr}"
    );
    (String::from_utf8_lossy(&out.stdout).into_owned(), stderr)
}

fn json_of(capture: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["analyze", "--json", "--no-progress"];
    args.extend_from_slice(extra);
    let c = capture.to_string_lossy().into_owned();
    args.push(&c);
    serde_json::from_str(&rttdoc(&args).0).unwrap()
}

/// One element of a DOM dump: its tag and attributes.
#[derive(Debug)]
struct Element {
    tag: String,
    attrs: BTreeMap<String, String>,
}

impl Element {
    fn attr(&self, name: &str) -> Option<&str> {
        self.attrs.get(name).map(|s| s.as_str())
    }
    fn has_class(&self, class: &str) -> bool {
        self.attr("class")
            .is_some_and(|c| c.split_whitespace().any(|x| x == class))
    }
    fn finding(&self, kind: &str) -> bool {
        self.attr("data-finding")
            .is_some_and(|k| k.split_whitespace().any(|x| x == kind))
    }
}

/// The start tags of an HTML document (Chromium's --dump-dom: attributes
/// double-quoted), enough to find elements by their attributes.
fn elements(dom: &str) -> Vec<Element> {
    let mut out = Vec::new();
    let b = dom.as_bytes();
    let mut i = 0;
    while let Some(off) = dom[i..].find('<') {
        i += off + 1;
        let start = i;
        while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'-') {
            i += 1;
        }
        if i == start {
            continue;
        }
        let tag = dom[start..i].to_ascii_lowercase();
        let mut attrs = BTreeMap::new();
        loop {
            while i < b.len() && b[i].is_ascii_whitespace() {
                i += 1;
            }
            if i >= b.len() || b[i] == b'>' || b[i] == b'/' {
                break;
            }
            let n0 = i;
            while i < b.len() && !b[i].is_ascii_whitespace() && !matches!(b[i], b'=' | b'>' | b'/')
            {
                i += 1;
            }
            let name = dom[n0..i].to_string();
            let mut value = String::new();
            if i < b.len() && b[i] == b'=' {
                i += 1;
                if i < b.len() && b[i] == b'"' {
                    let v0 = i + 1;
                    let end = dom[v0..].find('"').map_or(b.len(), |e| v0 + e);
                    value = dom[v0..end]
                        .replace("&quot;", "\"")
                        .replace("&lt;", "<")
                        .replace("&gt;", ">")
                        .replace("&amp;", "&");
                    i = (end + 1).min(b.len());
                }
            }
            attrs.insert(name, value);
        }
        out.push(Element { tag, attrs });
    }
    out
}

struct Browser {
    profile: TempDir,
}

impl Browser {
    fn new() -> Browser {
        Browser {
            profile: TempDir::new("chromium-profile"),
        }
    }

    fn base_args(&self) -> Vec<String> {
        [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--no-first-run",
            "--disable-extensions",
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=5000",
        ]
        .iter()
        .map(|s| s.to_string())
        .chain([format!(
            "--user-data-dir={}",
            self.profile.0.to_string_lossy()
        )])
        .collect()
    }

    fn run(&self, extra: &[String], url: &str) -> (String, String) {
        let out = Command::new("chromium")
            .args(self.base_args())
            .args(extra)
            .arg(url)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "chromium failed on {url}: {stderr}");
        // A script error reaches Chromium's console log.
        let console_errors: Vec<&str> = stderr
            .lines()
            .filter(|l| l.contains("Uncaught") || (l.contains("CONSOLE") && l.contains("ERROR")))
            .collect();
        assert!(
            console_errors.is_empty(),
            "console errors on {url}:\n{}",
            console_errors.join("\n")
        );
        (String::from_utf8_lossy(&out.stdout).into_owned(), stderr)
    }

    /// The page's DOM after its script ran; fails on any script error.
    fn dom(&self, url: &str) -> Vec<Element> {
        let (dom, _) = self.run(&["--dump-dom".into()], url);
        let els = elements(&dom);
        let body = els.iter().find(|e| e.tag == "body").expect("a body");
        assert_eq!(
            body.attr("data-rendered"),
            Some("true"),
            "the page's script did not finish on {url}"
        );
        let errors = els
            .iter()
            .find(|e| e.attr("id") == Some("rttdoc-errors"))
            .expect("the page's error panel");
        assert_eq!(
            errors.attr("data-count"),
            Some("0"),
            "the page caught script errors on {url}: {dom}"
        );
        els
    }

    fn screenshot(&self, url: &str, path: &Path, width: u32, height: u32, scale: f32) {
        self.run(
            &[
                format!("--screenshot={}", path.to_string_lossy()),
                format!("--window-size={width},{height}"),
                format!("--force-device-scale-factor={scale}"),
            ],
            url,
        );
        let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        assert!(
            size > 10_000,
            "no screenshot of {url} at {}",
            path.display()
        );
    }
}

fn url(file: &Path, hash: &str) -> String {
    let mut u = format!("file://{}", file.canonicalize().unwrap().to_string_lossy());
    if !hash.is_empty() {
        u.push('#');
        u.push_str(hash);
    }
    u
}

#[test]
fn html_report_of_lab_captures_draws_each_findings_evidence_in_graph_and_ladder_in_chromium() {
    if !require(
        "html_report_of_lab_captures_draws_each_findings_evidence_in_graph_and_ladder_in_chromium",
        &["chromium"],
        false,
    ) {
        return;
    }
    let tmp = TempDir::new("html-report");
    let shots = artifacts();
    let browser = Browser::new();
    for (name, cause) in LAB {
        let capture = lab(name);
        let json = json_of(&capture, &[]);
        let html = tmp.path(&format!("{name}.html"));
        let (_, stderr) = rttdoc(&[
            "analyze",
            "--no-progress",
            "--html",
            &html.to_string_lossy(),
            &capture.to_string_lossy(),
        ]);
        assert!(stderr.contains("wrote"), "{stderr}");

        // The default view: the connection that lost the most time, its
        // costliest finding with waits zoomed.
        let page = url(&html, "");
        let els = browser.dom(&page);
        let opened: u64 = els
            .iter()
            .find(|e| e.attr("id") == Some("connection"))
            .and_then(|e| e.attr("data-stream"))
            .expect("a connection is open by default")
            .parse()
            .unwrap();
        let lost = |c: &Value| {
            c["excess_ms"].as_f64().unwrap()
                + c["findings"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|x| x["phase"] == "transfer" && x["cost_ms"].as_f64().unwrap() > 0.0)
                    .map(|x| x["cost_ms"].as_f64().unwrap())
                    .sum::<f64>()
        };
        let conns = json["connections"].as_array().unwrap();
        let worst = conns
            .iter()
            .max_by(|a, b| {
                lost(a)
                    .total_cmp(&lost(b))
                    .then(b["stream"].as_u64().cmp(&a["stream"].as_u64()))
            })
            .unwrap();
        assert_eq!(
            opened, worst["stream"],
            "{name}: the page opens the connection that lost the most time"
        );
        let findings = worst["findings"].as_array().unwrap();
        assert!(
            findings.iter().any(|x| x["kind"] == *cause),
            "{name}: rttdoc finds {cause} on the worst connection"
        );
        // ... zoomed to the cause (not to a summary of it).
        let selected = els
            .iter()
            .find(|e| e.has_class("finding") && e.has_class("selected"))
            .expect("a finding is selected by default");
        assert!(
            selected.finding(cause),
            "{name}: the page opens on {cause}, not {:?}",
            selected.attr("data-finding")
        );
        let shot = shots.join(format!("{name}.png"));
        browser.screenshot(&page, &shot, 1280, 2800, 1.0);

        // Every finding with evidence, zoomed: its evidence frames are
        // marked on the graph and drawn in the ladder.
        for (i, x) in findings.iter().enumerate() {
            let kind = x["kind"].as_str().unwrap();
            let frames: BTreeSet<u64> = x["frames"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f.as_u64().unwrap())
                .collect();
            let els = browser.dom(&url(&html, &format!("stream={opened}&finding={i}")));
            let card = els
                .iter()
                .find(|e| e.has_class("finding") && e.finding(kind))
                .unwrap_or_else(|| panic!("{name}: no card for {kind}"));
            assert!(
                card.has_class("selected"),
                "{name}: {kind} is the one shown"
            );
            if frames.is_empty() {
                continue;
            }
            // The overview graph covers the whole connection: a ring on
            // every evidence frame.
            let rings: BTreeSet<u64> = els
                .iter()
                .filter(|e| e.tag == "circle" && e.has_class("ev") && e.finding(kind))
                .filter_map(|e| e.attr("data-frame")?.parse().ok())
                .collect();
            assert_eq!(
                rings, frames,
                "{name}: {kind}'s evidence ringed on the graph"
            );
            // The zoomed graph (the selected finding's rings are "sel").
            assert!(
                els.iter()
                    .any(|e| e.tag == "circle" && e.has_class("sel") && e.finding(kind)),
                "{name}: {kind} in the zoomed graph"
            );
            // The ladder: the evidence as arrows labelled with the finding.
            let mut allowed = frames.clone();
            for w in x["waits"].as_array().into_iter().flatten() {
                allowed.extend(w["to_frame"].as_u64());
                allowed.extend(w["release_frame"].as_u64());
            }
            let arrows: BTreeSet<u64> = els
                .iter()
                .filter(|e| e.tag == "line" && e.has_class("arrow") && e.finding(kind))
                .filter_map(|e| e.attr("data-frame")?.parse().ok())
                .collect();
            assert!(
                !arrows.is_empty() && arrows.is_subset(&allowed),
                "{name}: {kind}'s evidence in the ladder: {arrows:?} of {allowed:?}"
            );
            for w in x["waits"].as_array().into_iter().flatten().take(1) {
                let held = w["to_frame"].as_u64().unwrap();
                assert!(
                    els.iter().any(|e| e.tag == "line"
                        && e.has_class("holdbar")
                        && e.finding(kind)
                        && e.attr("data-wait") == Some(&held.to_string())),
                    "{name}: {kind}'s first wait (held frame {held}) as a bar in the ladder"
                );
                assert!(
                    els.iter()
                        .any(|e| e.tag == "rect" && e.has_class("wait") && e.finding(kind)),
                    "{name}: {kind}'s waits shaded on the graph"
                );
            }
        }
    }
    // The picture for docs/html-report.md: the bulk transfer's stalls.
    let docs_shot = shots.join("sftp-nagle-detail.png");
    browser.screenshot(
        &url(&tmp.path("sftp-nagle-builtin.html"), "only=detail"),
        &docs_shot,
        1240,
        1560,
        0.6,
    );
    eprintln!("screenshots: {}", shots.display());
}

#[test]
fn html_report_stays_small_and_draws_only_the_worst_connections_it_was_asked_for() {
    // No browser needed: the page's data, as written.
    let tmp = TempDir::new("html-top");
    let capture = public("seladb-PcapPlusPlus/ExamplesTest__pcap_examples__http-packets2.pcap");
    if !capture.exists() {
        assert!(!common::in_ci(), "public captures missing");
        eprintln!("SKIPPED: {} missing", capture.display());
        return;
    }
    let json = json_of(&capture, &[]);
    let total = json["connections"].as_array().unwrap().len();
    assert!(total > 3);
    let html = tmp.path("top.html");
    rttdoc(&[
        "analyze",
        "--no-progress",
        "--top",
        "2",
        "--html",
        &html.to_string_lossy(),
        &capture.to_string_lossy(),
    ]);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        !page.contains("http://") || !page.contains("<script src"),
        "nothing fetched"
    );
    assert!(!page.contains(" src="), "no external resource");
    let drawn = elements(&page)
        .into_iter()
        .filter(|e| e.has_class("rttdoc-conn"))
        .count();
    assert_eq!(drawn, 2, "--top 2 draws two connections");
    rttdoc(&[
        "analyze",
        "--no-progress",
        "--all",
        "--html",
        &html.to_string_lossy(),
        &capture.to_string_lossy(),
    ]);
    let page = std::fs::read_to_string(&html).unwrap();
    let drawn = elements(&page)
        .into_iter()
        .filter(|e| e.has_class("rttdoc-conn"))
        .count();
    assert_eq!(drawn, total, "--all draws every connection");
}

/// `tshark -r FILE -T fields -e ...` as lines.
fn tshark_fields(file: &Path, filter: Option<&str>, fields: &[&str]) -> Vec<String> {
    let mut cmd = Command::new("tshark");
    cmd.arg("-r").arg(file).args(["-T", "fields"]);
    if let Some(f) = filter {
        cmd.args(["-Y", f]);
    }
    for f in fields {
        cmd.args(["-e", f]);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "tshark on {}: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

fn evidence_frames(json: &Value) -> BTreeSet<u64> {
    let quic = json["quic"]["listed"].as_array().into_iter().flatten();
    json["connections"]
        .as_array()
        .unwrap()
        .iter()
        .chain(quic)
        .flat_map(|c| c["findings"].as_array().unwrap().iter())
        .flat_map(|x| x["frames"].as_array().unwrap().iter())
        .map(|f| f.as_u64().unwrap())
        .collect()
}

/// Annotates `capture`, then checks with tshark: the same frames with the
/// same timestamps, lengths, interfaces and link types, and rttdoc's
/// comments on exactly the findings' evidence frames.
fn annotate_and_check(capture: &Path, tmp: &TempDir, tag: &str) -> PathBuf {
    let json = json_of(capture, &[]);
    let evidence = evidence_frames(&json);
    assert!(!evidence.is_empty(), "{tag}: a capture with findings");
    let out = tmp.path(&format!("{tag}.pcapng"));
    let (_, stderr) = rttdoc(&[
        "analyze",
        "--no-progress",
        "--annotate",
        &out.to_string_lossy(),
        &capture.to_string_lossy(),
    ]);
    assert!(stderr.contains("with a comment"), "{stderr}");
    let fields = [
        "frame.number",
        "frame.time_epoch",
        "frame.len",
        "frame.cap_len",
        "frame.interface_id",
        "frame.encap_type",
        "frame.protocols",
    ];
    // A pcap has no interface blocks (tshark: no interface id); its
    // pcapng copy has one, number 0.
    let before: Vec<String> = tshark_fields(capture, None, &fields)
        .into_iter()
        .map(|l| {
            let mut f: Vec<&str> = l.split('\t').collect();
            if f[4].is_empty() {
                f[4] = "0";
            }
            f.join("\t")
        })
        .collect();
    let after = tshark_fields(&out, None, &fields);
    assert_eq!(before.len(), after.len(), "{tag}: frame count");
    for (a, b) in before.iter().zip(&after) {
        assert_eq!(a, b, "{tag}: frame differs after annotating");
    }
    let commented: BTreeSet<u64> = tshark_fields(
        &out,
        Some("frame.comment contains \"rttdoc\""),
        &["frame.number"],
    )
    .iter()
    .map(|l| l.trim().parse().unwrap())
    .collect();
    assert_eq!(
        commented, evidence,
        "{tag}: comments on exactly the evidence frames"
    );
    // The comment names the finding, its stream and what the frame is.
    let text = tshark_fields(
        &out,
        Some("frame.comment contains \"rttdoc\""),
        &["frame.comment"],
    );
    for c in json["connections"].as_array().unwrap() {
        for x in c["findings"].as_array().unwrap() {
            let head = format!(
                "rttdoc: {} stream {}:",
                x["kind"].as_str().unwrap(),
                c["stream"]
            );
            assert!(
                text.iter().any(|l| l.contains(&head)),
                "{tag}: a comment starting {head:?}"
            );
        }
    }
    out
}

#[test]
fn annotated_pcapng_keeps_every_frame_and_comments_exactly_the_evidence_frames_in_tshark() {
    if !require(
        "annotated_pcapng_keeps_every_frame_and_comments_exactly_the_evidence_frames_in_tshark",
        &["tshark", "editcap"],
        false,
    ) {
        return;
    }
    let tmp = TempDir::new("annotate");
    // pcapng from dumpcap (the lab), gzip-compressed.
    let out = annotate_and_check(&lab("tls13-nagle-builtin"), &tmp, "lab-tls13-nagle");
    let held = tshark_fields(
        &out,
        Some("frame.comment contains \"nagle_hold\" && frame.comment contains \"held\""),
        &["frame.comment"],
    );
    assert!(
        held.iter()
            .any(|c| c.contains("released by frame") && c.contains("fix:")),
        "the held segment's comment says what released it and the fix: {held:?}"
    );
    annotate_and_check(&lab("sftp-nagle-builtin"), &tmp, "lab-sftp");
    // QUIC: a Retry's evidence, named by its QUIC connection.
    let out = annotate_and_check(&data_dir().join("quic/retry.pcap.gz"), &tmp, "quic-retry");
    let retry = tshark_fields(
        &out,
        Some("frame.comment contains \"quic_retry\""),
        &["frame.comment"],
    );
    assert!(
        retry
            .iter()
            .any(|c| c.contains("QUIC connection 0") && c.contains("fix:")),
        "{retry:?}"
    );
    // pcap from tcpdump (microseconds), gzip-compressed.
    annotate_and_check(
        &data_dir().join("loopback-nginx-curl.pcap.gz"),
        &tmp,
        "tcpdump",
    );
    // The same as a nanosecond pcap (editcap): the resolution is kept.
    let nsec = tmp.path("nsec.pcap");
    let st = Command::new("editcap")
        .args(["-F", "nsecpcap"])
        .arg(data_dir().join("loopback-nginx-curl.pcap.gz"))
        .arg(&nsec)
        .status()
        .unwrap();
    assert!(st.success());
    annotate_and_check(&nsec, &tmp, "nsec");
    // Public pcaps: Ethernet, and raw IP (link type 101 kept).
    for rel in [
        "appneta-tcpreplay/test.pcap",
        "seladb-PcapPlusPlus/Pcap++Test__PcapExamples__raw_ip.pcap",
    ] {
        let p = public(rel);
        if !p.exists() {
            assert!(!common::in_ci(), "public capture {rel} missing");
            continue;
        }
        annotate_and_check(&p, &tmp, &rel.replace('/', "_"));
    }
    // A pcapng that already has a comment (editcap -a): it stays, next
    // to rttdoc's.
    let plain = tmp.path("plain.pcapng");
    let gz = lab("tls13-nagle-builtin");
    let st = Command::new("editcap")
        .args(["-F", "pcapng", "-a", "13:kept from before"])
        .arg(&gz)
        .arg(&plain)
        .status()
        .unwrap();
    assert!(st.success());
    let out = annotate_and_check(&plain, &tmp, "commented");
    let c13 = tshark_fields(&out, Some("frame.number == 13"), &["frame.comment"]);
    assert!(
        c13[0].contains("kept from before") && c13[0].contains("rttdoc: nagle_hold"),
        "both comments on frame 13: {c13:?}"
    );
}

#[test]
fn json_series_matches_tsharks_sequence_ack_length_and_window_for_every_packet() {
    if !require(
        "json_series_matches_tsharks_sequence_ack_length_and_window_for_every_packet",
        &["tshark"],
        false,
    ) {
        return;
    }
    for capture in [lab("sftp-nagle-builtin"), lab("slow-reader-builtin")] {
        let json = json_of(&capture, &["--series"]);
        let rows = tshark_fields(
            &capture,
            Some("tcp"),
            &[
                "frame.number",
                "tcp.stream",
                "tcp.seq",
                "tcp.len",
                "tcp.ack",
                "tcp.window_size",
                "tcp.flags.ack",
            ],
        );
        let tshark: BTreeMap<u64, Vec<String>> = rows
            .iter()
            .map(|l| {
                let f: Vec<String> = l.split('\t').map(str::to_string).collect();
                (f[0].parse().unwrap(), f)
            })
            .collect();
        let mut seen = 0;
        for c in json["connections"].as_array().unwrap() {
            let stream = c["stream"].as_u64().unwrap();
            let packets = c["series"]["packets"]
                .as_array()
                .expect("series with --series");
            let of_stream = tshark
                .values()
                .filter(|f| f[1] == stream.to_string())
                .count();
            let dups = c["client_to_server"]["capture_duplicates"]
                .as_u64()
                .unwrap()
                + c["server_to_client"]["capture_duplicates"]
                    .as_u64()
                    .unwrap();
            assert_eq!(
                packets.len() as u64 + dups,
                of_stream as u64,
                "stream {stream}: packets"
            );
            for p in packets {
                let frame = p["frame"].as_u64().unwrap();
                let t = &tshark[&frame];
                assert_eq!(t[1], stream.to_string(), "frame {frame}: stream");
                assert_eq!(p["seq"].to_string(), t[2], "frame {frame}: seq");
                assert_eq!(p["len"].to_string(), t[3], "frame {frame}: len");
                if t[6] == "1" && !p["ack"].is_null() {
                    assert_eq!(p["ack"].to_string(), t[4], "frame {frame}: ack");
                    assert_eq!(p["window"].to_string(), t[5], "frame {frame}: window");
                }
                seen += 1;
            }
        }
        assert!(seen > 50, "{}: packets compared", capture.display());
    }
}

#[test]
fn html_report_of_ten_thousand_connections_opens_without_freezing_chromium() {
    let tools = [
        "chromium", "tcpdump", "nginx", "wrk", "openssl", "unshare", "ip",
    ];
    if !require(
        "html_report_of_ten_thousand_connections_opens_without_freezing_chromium",
        &tools,
        true,
    ) {
        return;
    }
    // One TLS handshake per request (wrk, Connection: close) against
    // nginx on a private loopback: ~21 packets per connection.
    let tmp = TempDir::new("html-scale");
    let pcap = tmp.path("churn.pcap");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/loopback-capture.sh");
    let st = Command::new("bash")
        .arg(script)
        .arg(&pcap)
        .args(["churn", "230000"])
        .status()
        .unwrap();
    assert!(st.success(), "loopback capture failed");
    let html = tmp.path("all.html");
    let (_, stderr) = rttdoc(&[
        "analyze",
        "--no-progress",
        "--all",
        "--html",
        &html.to_string_lossy(),
        &pcap.to_string_lossy(),
    ]);
    let conns: u64 = stderr
        .split(" connection(s)")
        .next()
        .and_then(|s| s.rsplit('(').next())
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no connection count in {stderr}"));
    assert!(conns >= 10_000, "{conns} connections captured");
    let els = Browser::new().dom(&url(&html, ""));
    let body = els.iter().find(|e| e.tag == "body").unwrap();
    let ms = |a: &str| -> u64 { body.attr(a).unwrap().parse().unwrap() };
    eprintln!(
        "{conns} connections drawn: HTML parsed in {} ms, overview and one connection drawn in {} ms",
        ms("data-parsed-ms"),
        ms("data-render-ms")
    );
    // Drawing on demand: the script's work does not grow with the
    // connections (a frozen page would take seconds).
    assert!(
        ms("data-render-ms") < 2000,
        "the page's script took too long"
    );
    let rows = els
        .iter()
        .filter(|e| e.tag == "tr" && e.attr("data-stream").is_some());
    assert_eq!(rows.count(), 200, "the table draws one page of rows");
}

/// What the capture itself says reaches the report's page as the
/// terminal's NOTE lines word it (one wording, `words::capture_notes`):
/// here Wi-Fi frames of a link layer rttdoc does not read.
#[test]
fn html_report_carries_the_capture_notes() {
    let tmp = TempDir::new("html-notes");
    let capture = common::data_dir().join("other-projects/tcpdump-ieee802.11_exthdr.pcap");
    let html = tmp.path("notes.html");
    rttdoc(&[
        "analyze",
        "--no-progress",
        "--html",
        &html.to_string_lossy(),
        &capture.to_string_lossy(),
    ]);
    let page = std::fs::read_to_string(&html).unwrap();
    let (text, _) = rttdoc(&["analyze", "--no-progress", &capture.to_string_lossy()]);
    let note = text
        .lines()
        .find_map(|l| l.strip_prefix("NOTE: "))
        .expect("a NOTE in the terminal's summary");
    assert!(note.contains("LINKTYPE 127"), "{note}");
    // The page embeds its data as JSON: the note, JSON-escaped.
    let escaped = serde_json::to_string(note).unwrap();
    assert!(
        page.contains(escaped.trim_matches('"')),
        "the page carries {note}"
    );
}

/// A capture's QUIC connections get their table, their findings worded,
/// in the page Chromium draws.
#[test]
fn html_report_draws_the_quic_connections_and_their_findings() {
    if !require(
        "html_report_draws_the_quic_connections_and_their_findings",
        &["chromium"],
        false,
    ) {
        return;
    }
    let tmp = TempDir::new("html-quic");
    let page = tmp.path("quic.html");
    let capture = data_dir().join("quic/amplification.pcap.gz");
    rttdoc(&[
        "analyze",
        capture.to_str().unwrap(),
        "--html",
        page.to_str().unwrap(),
    ]);
    let browser = Browser::new();
    let (dom, _) = browser.run(&["--dump-dom".into()], &url(&page, ""));
    assert!(
        dom.contains("data-rendered=\"true\""),
        "the script finished"
    );
    assert!(dom.contains("data-section=\"quic\""), "a QUIC table");
    assert!(dom.contains("quic_amplification_limit"), "its finding");
    assert!(dom.contains("quic.rttdoc.test"), "its server's name");
    assert!(dom.contains("three times"), "the finding's words");
}
