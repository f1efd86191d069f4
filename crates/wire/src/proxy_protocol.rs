//! HAProxy's PROXY protocol: the header a load balancer or proxy writes
//! first on its connection to a backend (HAProxy `send-proxy` and
//! `send-proxy-v2`, AWS Network Load Balancers, Envoy, nginx `stream`,
//! Traefik), naming the client it accepted, before a single byte of that
//! client's. Version 1 is a text line (`PROXY TCP4 198.51.100.7
//! 203.0.113.1 51234 443\r\n`, at most 107 bytes), version 2 a 12-byte
//! signature, four bytes of command, family and length, then the
//! addresses and TLVs (proxy-protocol.txt, haproxy.org). The `ppp` crate
//! parses both; this module says whether a stream starts with one, and
//! what it names.
//!
//! The header is the balancer's, not the client's: it is sent when the
//! balancer connects (often before the client has sent anything), and
//! nothing answers it. A capture on the backend sees it as the client's
//! first bytes, ahead of the ClientHello or the request it carries.

use std::net::{IpAddr, SocketAddr};

/// Version 2's signature.
const V2_SIGNATURE: &[u8; 12] = b"\r\n\r\n\0\r\nQUIT\n";

/// Version 1's prefix.
const V1_PREFIX: &[u8; 6] = b"PROXY ";

/// Version 1's longest line, CR LF included.
const V1_MAX_LINE: usize = 107;

/// The longest a version 2 header is read for: its own 16 bytes, the
/// addresses of two UNIX sockets (216) and room for TLVs (an AWS VPC
/// endpoint ID, an SSL TLV). A longer one is left unread: the stream is
/// taken as it comes.
pub const MAX_HEADER_BYTES: usize = 1024;

/// A PROXY protocol header at the start of a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProxyHeader {
    /// 1 (text) or 2 (binary).
    pub version: u8,
    /// Its length in bytes: where the client's own bytes begin.
    pub len: usize,
    /// Version 2's LOCAL command: the balancer's own connection (a health
    /// check), no client behind it.
    pub local: bool,
    /// The client the balancer accepted, when the header names one (not
    /// for `PROXY UNKNOWN`, LOCAL, or UNIX sockets).
    pub source: Option<SocketAddr>,
    /// The address that client connected to.
    pub destination: Option<SocketAddr>,
}

/// What the first bytes of a stream are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parsed {
    /// A whole header.
    Header(ProxyHeader),
    /// The beginning of one: more bytes needed.
    Incomplete,
    /// Not a PROXY protocol header.
    NotProxy,
}

/// Whether `bytes` could begin a PROXY protocol header (a prefix of
/// either version's fixed start): the cheap test every stream's first
/// bytes pass through before [`parse`].
pub fn may_start(bytes: &[u8]) -> bool {
    let prefix = |fixed: &[u8]| {
        let n = bytes.len().min(fixed.len());
        n > 0 && bytes[..n] == fixed[..n]
    };
    prefix(V1_PREFIX) || prefix(V2_SIGNATURE)
}

/// Reads the PROXY protocol header `bytes` start with.
pub fn parse(bytes: &[u8]) -> Parsed {
    use ::ppp::PartialResult;
    if !may_start(bytes) {
        return Parsed::NotProxy;
    }
    let bytes = &bytes[..bytes.len().min(MAX_HEADER_BYTES)];
    if bytes.starts_with(V1_PREFIX) {
        // The line is framed here (a cut address is no bad address: more
        // is needed), then read whole.
        let within = &bytes[..bytes.len().min(V1_MAX_LINE)];
        let Some(cr) = within.windows(2).position(|w| w == b"\r\n") else {
            return if bytes.len() < V1_MAX_LINE {
                Parsed::Incomplete
            } else {
                Parsed::NotProxy
            };
        };
        // One line: no CR or LF inside it (ppp ends the header at the
        // first CR, whatever follows it).
        if within[..cr].iter().any(|b| matches!(b, b'\r' | b'\n')) {
            return Parsed::NotProxy;
        }
        return match ::ppp::v1::Header::try_from(&bytes[..cr + 2]) {
            Ok(h) if h.header.len() == cr + 2 => Parsed::Header(v1(&h)),
            _ => Parsed::NotProxy,
        };
    }
    if bytes.len() < V2_SIGNATURE.len() {
        return Parsed::Incomplete;
    }
    let result = ::ppp::v2::Header::try_from(bytes);
    match result {
        Ok(h) => Parsed::Header(v2(&h)),
        Err(_) if result.is_incomplete() && bytes.len() < MAX_HEADER_BYTES => Parsed::Incomplete,
        Err(_) => Parsed::NotProxy,
    }
}

/// A header's two named ends.
fn ends(
    source: IpAddr,
    source_port: u16,
    destination: IpAddr,
    destination_port: u16,
) -> (Option<SocketAddr>, Option<SocketAddr>) {
    (
        Some(SocketAddr::new(source, source_port)),
        Some(SocketAddr::new(destination, destination_port)),
    )
}

fn v1(h: &::ppp::v1::Header<'_>) -> ProxyHeader {
    use ::ppp::v1::Addresses;
    let (source, destination) = match h.addresses {
        Addresses::Tcp4(a) => ends(
            a.source_address.into(),
            a.source_port,
            a.destination_address.into(),
            a.destination_port,
        ),
        Addresses::Tcp6(a) => ends(
            a.source_address.into(),
            a.source_port,
            a.destination_address.into(),
            a.destination_port,
        ),
        Addresses::Unknown => (None, None),
    };
    ProxyHeader {
        version: 1,
        len: h.header.len(),
        local: false,
        source,
        destination,
    }
}

fn v2(h: &::ppp::v2::Header<'_>) -> ProxyHeader {
    use ::ppp::v2::{Addresses, Command};
    let local = h.command == Command::Local;
    let (source, destination) = match h.addresses {
        _ if local => (None, None),
        Addresses::IPv4(a) => ends(
            a.source_address.into(),
            a.source_port,
            a.destination_address.into(),
            a.destination_port,
        ),
        Addresses::IPv6(a) => ends(
            a.source_address.into(),
            a.source_port,
            a.destination_address.into(),
            a.destination_port,
        ),
        Addresses::Unix(_) | Addresses::Unspecified => (None, None),
    };
    ProxyHeader {
        version: 2,
        len: h.len(),
        local,
        source,
        destination,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_header_names_the_client_and_ends_at_its_line() {
        let s = b"PROXY TCP4 198.51.100.7 203.0.113.1 51234 443\r\n\x16\x03\x01";
        let Parsed::Header(h) = parse(s) else {
            panic!("{:?}", parse(s));
        };
        assert_eq!(h.version, 1);
        assert_eq!(h.len, s.len() - 3);
        assert_eq!(h.source, Some("198.51.100.7:51234".parse().unwrap()));
        assert_eq!(h.destination, Some("203.0.113.1:443".parse().unwrap()));
        // Cut anywhere before its line ends: more is needed.
        for n in 1..h.len {
            assert_eq!(parse(&s[..n]), Parsed::Incomplete, "{n}");
        }
        let unknown = parse(b"PROXY UNKNOWN\r\nGET / HTTP/1.1\r\n");
        assert!(matches!(
            unknown,
            Parsed::Header(ProxyHeader {
                len: 15,
                source: None,
                ..
            })
        ));
    }

    #[test]
    fn a_binary_header_names_the_client_and_local_names_none() {
        let mut s = V2_SIGNATURE.to_vec();
        s.extend([0x21, 0x11, 0, 12]); // PROXY, TCP over IPv4, 12 bytes
        s.extend([198, 51, 100, 7, 203, 0, 113, 1]);
        s.extend(51234u16.to_be_bytes());
        s.extend(443u16.to_be_bytes());
        let whole = s.len();
        s.extend(b"\x16\x03\x01");
        let Parsed::Header(h) = parse(&s) else {
            panic!("{:?}", parse(&s));
        };
        assert_eq!((h.version, h.len, h.local), (2, whole, false));
        assert_eq!(h.source, Some("198.51.100.7:51234".parse().unwrap()));
        for n in 1..whole {
            assert_eq!(parse(&s[..n]), Parsed::Incomplete, "{n}");
        }
        // A health check of the balancer's own: LOCAL, no addresses.
        let mut local = V2_SIGNATURE.to_vec();
        local.extend([0x20, 0x00, 0, 0]);
        assert!(matches!(
            parse(&local),
            Parsed::Header(ProxyHeader {
                local: true,
                source: None,
                len: 16,
                ..
            })
        ));
    }

    #[test]
    fn other_first_bytes_are_not_a_header() {
        for s in [
            &b"\x16\x03\x01\x02\x00\x01"[..],
            b"GET / HTTP/1.1\r\n",
            b"PROXY-Authorization",
            b"PROXY TCP4 not an address\r\n",
            b"\r\n\r\n\0\r\nQUIZ\n\x21\x11\0\x0c",
            // (fuzzing found it: ppp's UNKNOWN line ends at the first CR)
            b"PROXY UNKNOWN .5\n\r \r\nGET",
            b"",
        ] {
            assert_eq!(parse(s), Parsed::NotProxy, "{s:?}");
        }
    }
}
