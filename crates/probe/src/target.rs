//! What to probe: the URL, and where its host:port leads (curl's
//! `--resolve` and `--connect-to`, or a DNS lookup).

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};

/// A parsed `http://` or `https://` URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Url {
    pub https: bool,
    /// Host name or address, without IPv6 brackets.
    pub host: String,
    pub port: u16,
    /// Path and query, at least `/`.
    pub path: String,
}

impl Url {
    pub fn parse(s: &str) -> Result<Url, String> {
        let (https, rest) = if let Some(r) = s.strip_prefix("https://") {
            (true, r)
        } else if let Some(r) = s.strip_prefix("http://") {
            (false, r)
        } else if s.contains("://") {
            return Err(format!("{s}: only http:// and https:// URLs can be probed"));
        } else {
            // curl's default: a bare host means http.
            (false, s)
        };
        let (authority, path) = match rest.find(['/', '?', '#']) {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        let path = path.split('#').next().unwrap_or("/");
        let path = if path.starts_with('?') {
            format!("/{path}")
        } else if path.is_empty() {
            "/".to_string()
        } else {
            path.to_string()
        };
        // No user:password@ (nothing to authenticate to here).
        let authority = authority.rsplit('@').next().unwrap_or(authority);
        let default_port = if https { 443 } else { 80 };
        let (host, port) = if let Some(r) = authority.strip_prefix('[') {
            let end = r
                .find(']')
                .ok_or_else(|| format!("{s}: unclosed [ in the host"))?;
            let host = &r[..end];
            host.parse::<std::net::Ipv6Addr>()
                .map_err(|_| format!("{s}: {host} is not an IPv6 address"))?;
            let port = match &r[end + 1..] {
                "" => default_port,
                p => parse_port(p.strip_prefix(':').unwrap_or(p), s)?,
            };
            (host.to_string(), port)
        } else {
            match authority.rsplit_once(':') {
                Some((h, p)) if !h.contains(':') => (h.to_string(), parse_port(p, s)?),
                _ => (authority.to_string(), default_port),
            }
        };
        if host.is_empty() {
            return Err(format!("{s}: no host"));
        }
        Ok(Url {
            https,
            host: host.to_ascii_lowercase(),
            port,
            path,
        })
    }

    /// The Host header: the port only when it is not the scheme's default,
    /// IPv6 in brackets.
    pub fn host_header(&self) -> String {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        if self.port == if self.https { 443 } else { 80 } {
            host
        } else {
            format!("{host}:{}", self.port)
        }
    }

    /// The origin written out: `https://host[:port]` (the port only when
    /// it is not the scheme's).
    fn origin(&self) -> String {
        let scheme = if self.https { "https" } else { "http" };
        format!("{scheme}://{}", self.host_header())
    }

    /// A `Location` resolved against this URL (RFC 3986 5.2's absolute,
    /// scheme-relative, absolute-path and relative-path references), as
    /// curl's `%{redirect_url}` gives it (an absolute one as written);
    /// `None` for a scheme other than HTTP's.
    pub fn join(&self, location: &str) -> Option<String> {
        let location = location.trim();
        let scheme = if self.https { "https:" } else { "http:" };
        let has_scheme = location.split_once(':').is_some_and(|(s, _)| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        });
        let absolute = if has_scheme {
            location.to_string()
        } else if location.starts_with("//") {
            format!("{scheme}{location}")
        } else {
            let origin = self.origin();
            if location.starts_with('/') {
                format!("{origin}{location}")
            } else if location.starts_with('?') {
                let path = self.path.split('?').next().unwrap_or("/");
                format!("{origin}{path}{location}")
            } else {
                let path = self.path.split('?').next().unwrap_or("/");
                let dir = &path[..path.rfind('/').map_or(0, |i| i + 1)];
                format!("{origin}{dir}{location}")
            }
        };
        // (Written as the server wrote it, as curl's: only a URL probe
        // could ask for.)
        Url::parse(&absolute).ok()?;
        Some(absolute)
    }
}

fn parse_port(p: &str, url: &str) -> Result<u16, String> {
    p.parse()
        .map_err(|_| format!("{url}: {p:?} is not a port number"))
}

/// Splits `a:b:c...` on colons outside of `[...]`.
fn split_colons(s: &str) -> Vec<String> {
    let (mut parts, mut cur, mut depth) = (Vec::new(), String::new(), 0);
    for c in s.chars() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            ':' if depth == 0 => {
                parts.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    parts.push(cur);
    parts
}

fn strip_brackets(s: &str) -> &str {
    s.strip_prefix('[')
        .and_then(|r| r.strip_suffix(']'))
        .unwrap_or(s)
}

/// curl's `--resolve HOST:PORT:ADDR[,ADDR]...`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolve {
    pub host: String,
    pub port: u16,
    pub addrs: Vec<IpAddr>,
}

impl Resolve {
    pub fn parse(s: &str) -> Result<Resolve, String> {
        let parts = split_colons(s);
        let [host, port, addrs] = parts.as_slice() else {
            return Err(format!("--resolve {s}: expected HOST:PORT:ADDR"));
        };
        let addrs = addrs
            .split(',')
            .map(|a| {
                strip_brackets(a)
                    .parse::<IpAddr>()
                    .map_err(|_| format!("--resolve {s}: {a} is not an IP address"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Resolve {
            host: host.to_ascii_lowercase(),
            port: parse_port(port, s)?,
            addrs,
        })
    }
}

/// curl's `--connect-to HOST1:PORT1:HOST2:PORT2`: a request for
/// HOST1:PORT1 connects to HOST2:PORT2 instead (an empty field matches
/// any host or port, or keeps it); the URL, Host header and SNI stay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectTo {
    pub from_host: Option<String>,
    pub from_port: Option<u16>,
    pub to_host: Option<String>,
    pub to_port: Option<u16>,
}

impl ConnectTo {
    pub fn parse(s: &str) -> Result<ConnectTo, String> {
        let parts = split_colons(s);
        let [h1, p1, h2, p2] = parts.as_slice() else {
            return Err(format!(
                "--connect-to {s}: expected HOST1:PORT1:HOST2:PORT2"
            ));
        };
        let host = |h: &str| (!h.is_empty()).then(|| strip_brackets(h).to_ascii_lowercase());
        let port = |p: &str| -> Result<Option<u16>, String> {
            if p.is_empty() {
                Ok(None)
            } else {
                parse_port(p, s).map(Some)
            }
        };
        Ok(ConnectTo {
            from_host: host(h1),
            from_port: port(p1)?,
            to_host: host(h2),
            to_port: port(p2)?,
        })
    }
}

/// Address family preference (`-4`, `-6`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Family {
    #[default]
    Any,
    V4,
    V6,
}

/// Where a request connects, and whether a lookup was made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Destination {
    pub addr: SocketAddr,
    /// A name was looked up in DNS (time_namelookup is that lookup).
    pub looked_up: bool,
}

fn pick(addrs: impl IntoIterator<Item = IpAddr>, family: Family) -> Option<IpAddr> {
    addrs.into_iter().find(|a| match family {
        Family::Any => true,
        Family::V4 => a.is_ipv4(),
        Family::V6 => a.is_ipv6(),
    })
}

/// Resolves the URL's host:port as curl would with these options.
pub fn destination(
    url: &Url,
    connect_to: &[ConnectTo],
    resolve: &[Resolve],
    family: Family,
) -> Result<Destination, String> {
    let (mut host, mut port) = (url.host.clone(), url.port);
    if let Some(c) = connect_to.iter().find(|c| {
        c.from_host.as_ref().is_none_or(|h| *h == url.host)
            && c.from_port.is_none_or(|p| p == url.port)
    }) {
        if let Some(h) = &c.to_host {
            host = h.clone();
        }
        if let Some(p) = c.to_port {
            port = p;
        }
    }
    if let Ok(ip) = host.parse::<IpAddr>() {
        return Ok(Destination {
            addr: SocketAddr::new(ip, port),
            looked_up: false,
        });
    }
    if let Some(r) = resolve.iter().find(|r| r.host == host && r.port == port) {
        let ip = pick(r.addrs.iter().copied(), family)
            .ok_or_else(|| format!("--resolve gives no address of the asked family for {host}"))?;
        return Ok(Destination {
            addr: SocketAddr::new(ip, port),
            looked_up: false,
        });
    }
    let found = (host.as_str(), port)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve {host}: {e}"))?;
    let ip = pick(found.map(|a| a.ip()), family)
        .ok_or_else(|| format!("{host} has no address of the asked family"))?;
    Ok(Destination {
        addr: SocketAddr::new(ip, port),
        looked_up: true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_location_resolves_against_the_url_asked_as_curl_s_redirect_url() {
        let u = Url::parse("http://example.com/docs?x=1").unwrap();
        let join = |l: &str| u.join(l);
        assert_eq!(join("/docs/").as_deref(), Some("http://example.com/docs/"));
        assert_eq!(join("docs/").as_deref(), Some("http://example.com/docs/"));
        assert_eq!(
            join("?page=2").as_deref(),
            Some("http://example.com/docs?page=2")
        );
        assert_eq!(
            join("https://Example.com:443/docs").as_deref(),
            Some("https://Example.com:443/docs"),
            "an absolute Location as written"
        );
        assert_eq!(
            join("//cdn.example/a").as_deref(),
            Some("http://cdn.example/a")
        );
        assert_eq!(
            join("http://[2001:db8::1]:8080/").as_deref(),
            Some("http://[2001:db8::1]:8080/")
        );
        assert_eq!(join("ftp://example.com/"), None);
        let deep = Url::parse("https://example.com:8443/a/b/c").unwrap();
        assert_eq!(
            deep.join("d").as_deref(),
            Some("https://example.com:8443/a/b/d")
        );
    }

    #[test]
    fn urls_parse_like_curl_reads_them() {
        let u = Url::parse("https://Example.org:8443/a/b?x=1#frag").unwrap();
        assert_eq!(
            (u.https, u.host.as_str(), u.port, u.path.as_str()),
            (true, "example.org", 8443, "/a/b?x=1")
        );
        assert_eq!(u.host_header(), "example.org:8443");
        let v6 = Url::parse("http://[2001:db8::1]/").unwrap();
        assert_eq!((v6.host.as_str(), v6.port), ("2001:db8::1", 80));
        assert_eq!(v6.host_header(), "[2001:db8::1]");
        let v6p = Url::parse("https://[::1]:4443").unwrap();
        assert_eq!((v6p.port, v6p.path.as_str()), (4443, "/"));
        assert_eq!(Url::parse("example.org?q").unwrap().path, "/?q");
        assert!(Url::parse("ftp://x/").is_err());
        assert!(Url::parse("http://host:99999/").is_err());
        assert!(Url::parse("http://[zz]/").is_err());
    }

    #[test]
    fn resolve_and_connect_to_pick_the_address_without_a_lookup() {
        let url = Url::parse("https://shop.example:443/").unwrap();
        let r = Resolve::parse("shop.example:443:[2001:db8::2],192.0.2.7").unwrap();
        let d = destination(&url, &[], std::slice::from_ref(&r), Family::Any).unwrap();
        assert_eq!(d.addr, "[2001:db8::2]:443".parse().unwrap());
        assert!(!d.looked_up);
        let d4 = destination(&url, &[], &[r], Family::V4).unwrap();
        assert_eq!(d4.addr, "192.0.2.7:443".parse().unwrap());
        let c = ConnectTo::parse("shop.example::192.0.2.9:8443").unwrap();
        let d = destination(&url, &[c], &[], Family::Any).unwrap();
        assert_eq!(d.addr, "192.0.2.9:8443".parse().unwrap());
        let other = ConnectTo::parse("elsewhere:443:192.0.2.9:").unwrap();
        let lit = Url::parse("https://192.0.2.1/").unwrap();
        let d = destination(&lit, &[other], &[], Family::Any).unwrap();
        assert_eq!(d.addr, "192.0.2.1:443".parse().unwrap());
        assert!(Resolve::parse("a:1").is_err());
        assert!(ConnectTo::parse("a:1:b").is_err());
    }
}
