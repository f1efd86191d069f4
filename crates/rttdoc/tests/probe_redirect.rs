//! `rttdoc probe` against a redirect: it reports where the redirect sends
//! the client as curl's `%{redirect_url}` does, without following it.
//!
//! Producer: nginx on loopback (`return 301` with a relative `Location`,
//! `return 302` to another host, and its own 301 for a directory asked
//! for without its slash); the reference is curl's `-w '%{redirect_url}'`
//! against the same server.

mod common;

use std::path::Path;
use std::process::Command;

use common::*;
use serde_json::Value;

/// nginx on 127.0.0.1:`port` until dropped.
struct Nginx(std::path::PathBuf);

impl Drop for Nginx {
    fn drop(&mut self) {
        if let Ok(pid) = std::fs::read_to_string(self.0.join("nginx.pid")) {
            let _ = Command::new("kill").arg(pid.trim()).status();
        }
    }
}

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

fn start_nginx(work: &Path, port: u16) -> Nginx {
    let w = work.display();
    std::fs::create_dir_all(work.join("www/docs")).unwrap();
    std::fs::write(work.join("www/docs/index.html"), "docs\n").unwrap();
    let conf = format!(
        "user root; worker_processes 1; pid {w}/nginx.pid; error_log {w}/error.log; daemon on;\n\
         events {{ worker_connections 16; }}\n\
         http {{ access_log off; client_body_temp_path {w}; proxy_temp_path {w}; fastcgi_temp_path {w};\n\
         uwsgi_temp_path {w}; scgi_temp_path {w};\n\
         server {{ listen 127.0.0.1:{port}; root {w}/www;\n\
         location = /old {{ return 301 /new/?a=1; }}\n\
         location = /away {{ return 302 https://Example.test:8443/x; }} }} }}\n"
    );
    std::fs::write(work.join("nginx.conf"), conf).unwrap();
    let started = Command::new("nginx")
        .arg("-c")
        .arg(work.join("nginx.conf"))
        .status()
        .expect("nginx runs");
    assert!(started.success(), "nginx did not start");
    let guard = Nginx(work.to_path_buf());
    // (Bounded: nginx listens within a second or it failed.)
    for _ in 0..100 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return guard;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    panic!("nginx is not listening on {port}");
}

fn curl_redirect_url(url: &str) -> String {
    let out = Command::new("curl")
        .args(["-s", "-o", "/dev/null", "-w", "%{redirect_url}", url])
        .output()
        .expect("curl runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn probe(url: &str, extra: &[&str]) -> std::process::Output {
    Command::new(rttdoc_bin())
        .args(["probe", url])
        .args(extra)
        .output()
        .expect("rttdoc probe runs")
}

#[test]
fn probe_reports_where_a_redirect_sends_the_client_as_curl_does() {
    if !require(
        "probe_reports_where_a_redirect_sends_the_client_as_curl_does",
        &["nginx", "curl"],
        true,
    ) {
        return;
    }
    let dir = TempDir::new("probe-redirect");
    let port = free_port();
    let _nginx = start_nginx(&dir.0, port);
    let base = format!("http://127.0.0.1:{port}");
    for path in ["/old", "/away", "/docs"] {
        let url = format!("{base}{path}");
        let expected = curl_redirect_url(&url);
        assert!(!expected.is_empty(), "curl sees no redirect at {url}");
        let out = probe(&url, &["--json"]);
        let doc: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
        let m = &doc["samples"][0];
        assert_eq!(m["redirect_url"], expected.as_str(), "{url}: {m}");
        let text = String::from_utf8_lossy(&probe(&url, &[]).stdout).into_owned();
        assert!(
            text.contains(&format!("redirect_url: {expected}, not followed")),
            "{text}"
        );
        let curl_format =
            String::from_utf8_lossy(&probe(&url, &["--format", "curl"]).stdout).into_owned();
        assert!(
            curl_format.contains(&format!("redirect_url: {expected}\n")),
            "{curl_format}"
        );
    }
    // No redirect: no redirect_url in the document, an empty one in
    // curl's format (as curl's).
    let url = format!("{base}/docs/");
    assert_eq!(curl_redirect_url(&url), "");
    let out = probe(&url, &["--json"]);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(doc["samples"][0].get("redirect_url").is_none());
    let curl_format =
        String::from_utf8_lossy(&probe(&url, &["--format", "curl"]).stdout).into_owned();
    assert!(curl_format.contains("redirect_url: \n"), "{curl_format}");
}
