//! DNS messages over UDP (RFC 1035 4.1), as much as a name lookup's timing
//! needs: the header (ID, response flag, truncation, RCODE), the first
//! question (its name and type) and the addresses in the answer section.
//!
//! Read by hand rather than with a DNS crate: those parse every section
//! whole (authority, additional, EDNS options, every record type's data)
//! and refuse the message over any record they cannot read, where a
//! lookup's timing needs only the header and question (there in a
//! snaplen-cut response too) and the answers' A and AAAA records, whose
//! owner names and other records are skipped by their lengths. Names may
//! be compressed (RFC 1035 4.1.4): pointers are followed a bounded number
//! of times and only backwards, so a crafted message cannot loop.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

mod field {
    pub const ID: usize = 0;
    pub const FLAGS: usize = 2;
    pub const QDCOUNT: usize = 4;
    pub const ANCOUNT: usize = 6;
    pub const HEADER_LEN: usize = 12;
}

/// The UDP port of DNS (RFC 1035 4.2.1).
pub const PORT: u16 = 53;

/// Record types rttdoc reads (RFC 1035 3.2.2, RFC 3596).
pub mod rtype {
    pub const A: u16 = 1;
    pub const CNAME: u16 = 5;
    pub const AAAA: u16 = 28;
}

/// Response codes (RFC 1035 4.1.1).
pub mod rcode {
    pub const NO_ERROR: u8 = 0;
    pub const SERVER_FAILURE: u8 = 2;
    pub const NAME_ERROR: u8 = 3;
}

/// The longest name RFC 1035 allows, in its text form (253 characters
/// plus the separators a longer crafted one would need).
pub const MAX_NAME_LEN: usize = 255;

/// Compression pointers followed at most while reading one name.
const MAX_JUMPS: usize = 16;

/// A checked view of a DNS message: at least a whole header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Message<'a> {
    bytes: &'a [u8],
}

/// The first question of a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Question<'a> {
    name: Name<'a>,
    /// QTYPE: A, AAAA, ...
    pub qtype: u16,
    /// Where the answer section starts.
    end: usize,
}

/// A (possibly compressed) domain name inside a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Name<'a> {
    message: &'a [u8],
    at: usize,
}

impl<'a> Message<'a> {
    pub fn new_checked(bytes: &'a [u8]) -> Result<Message<'a>, &'static str> {
        if bytes.len() < field::HEADER_LEN {
            return Err("DNS header cut short");
        }
        Ok(Message { bytes })
    }

    pub fn id(&self) -> u16 {
        u16::from_be_bytes([self.bytes[field::ID], self.bytes[field::ID + 1]])
    }

    fn flags(&self) -> u16 {
        u16::from_be_bytes([self.bytes[field::FLAGS], self.bytes[field::FLAGS + 1]])
    }

    /// QR: a response, not a query.
    pub fn is_response(&self) -> bool {
        self.flags() & 0x8000 != 0
    }

    /// OPCODE: 0 is a standard query.
    pub fn opcode(&self) -> u8 {
        ((self.flags() >> 11) & 0xf) as u8
    }

    /// TC: the answer did not fit the datagram (the client asks again
    /// over TCP).
    pub fn truncated(&self) -> bool {
        self.flags() & 0x0200 != 0
    }

    /// RCODE: 0 no error, 3 the name does not exist (NXDOMAIN) ...
    pub fn rcode(&self) -> u8 {
        (self.flags() & 0xf) as u8
    }

    fn count(&self, at: usize) -> u16 {
        u16::from_be_bytes([self.bytes[at], self.bytes[at + 1]])
    }

    /// The first question, if the message has one and it was captured.
    pub fn question(&self) -> Option<Question<'a>> {
        if self.count(field::QDCOUNT) == 0 {
            return None;
        }
        let name = Name {
            message: self.bytes,
            at: field::HEADER_LEN,
        };
        let after = skip_name(self.bytes, field::HEADER_LEN)?;
        let fixed = self.bytes.get(after..after + 4)?;
        Some(Question {
            name,
            qtype: u16::from_be_bytes([fixed[0], fixed[1]]),
            end: after + 4,
        })
    }

    /// The IPv4 and IPv6 addresses in the answer section (A and AAAA
    /// records, whatever name they are for: a CNAME chain's last name
    /// holds them), in order; reading stops at a record cut short. Only
    /// the first question is skipped: a message asking more than one
    /// (which no resolver sends) yields none.
    pub fn addresses(&self) -> Addresses<'a> {
        let start = match self.question() {
            Some(q) if self.count(field::QDCOUNT) == 1 => q.end,
            _ => self.bytes.len(),
        };
        Addresses {
            bytes: self.bytes,
            at: start,
            left: self.count(field::ANCOUNT),
            broken: false,
        }
    }
}

impl<'a> Question<'a> {
    pub fn name(&self) -> Name<'a> {
        self.name
    }
}

impl Name<'_> {
    /// Appends the name in its text form, lower case, without the root's
    /// trailing dot (`api.example.com`; the root itself is empty), as
    /// Wireshark's `dns.qry.name` shows it. `None` (and `out` as it was)
    /// when the name is cut short, loops, or is longer than
    /// [`MAX_NAME_LEN`].
    pub fn write_lowercase(&self, out: &mut String) -> Option<()> {
        let start_len = out.len();
        let result = self.write_labels(out);
        if result.is_none() {
            out.truncate(start_len);
        }
        result
    }

    fn write_labels(&self, out: &mut String) -> Option<()> {
        let bytes = self.message;
        let mut at = self.at;
        let mut jumps = 0;
        let mut written = 0usize;
        loop {
            let len = *bytes.get(at)?;
            match len & 0xc0 {
                0x00 if len == 0 => return Some(()),
                0x00 => {
                    let label = bytes.get(at + 1..at + 1 + len as usize)?;
                    written += label.len() + 1;
                    if written > MAX_NAME_LEN {
                        return None;
                    }
                    if written > label.len() + 1 {
                        out.push('.');
                    }
                    for &b in label {
                        // Wireshark shows other bytes escaped; a lookup
                        // only needs names to compare.
                        let c = b.to_ascii_lowercase();
                        out.push(if c.is_ascii_graphic() { c as char } else { '?' });
                    }
                    at += 1 + len as usize;
                }
                0xc0 => {
                    let low = *bytes.get(at + 1)?;
                    let target = (((len & 0x3f) as usize) << 8) | low as usize;
                    // Only backwards: a pointer to itself or ahead could loop.
                    jumps += 1;
                    if target >= at || jumps > MAX_JUMPS {
                        return None;
                    }
                    at = target;
                }
                // 0x40, 0x80: extended label types (RFC 6891 retired them).
                _ => return None,
            }
        }
    }

    /// The name as a lower-case string (see [`Name::write_lowercase`]).
    pub fn to_lowercase(&self) -> Option<String> {
        let mut s = String::new();
        self.write_lowercase(&mut s)?;
        Some(s)
    }
}

/// Where the name at `at` ends (its terminating zero or its pointer).
fn skip_name(bytes: &[u8], mut at: usize) -> Option<usize> {
    loop {
        let len = *bytes.get(at)?;
        match len & 0xc0 {
            0x00 if len == 0 => return Some(at + 1),
            0x00 => at += 1 + len as usize,
            0xc0 => {
                bytes.get(at + 1)?;
                return Some(at + 2);
            }
            _ => return None,
        }
    }
}

/// The answer section's addresses (see [`Message::addresses`]).
#[derive(Debug, Clone)]
pub struct Addresses<'a> {
    bytes: &'a [u8],
    at: usize,
    left: u16,
    broken: bool,
}

impl Addresses<'_> {
    /// Whether reading stopped at a record that was cut short or broken
    /// (a snap length's cut, or a damaged message) before the count the
    /// header declares.
    pub fn broken(&self) -> bool {
        self.broken
    }
}

impl Iterator for Addresses<'_> {
    type Item = IpAddr;

    fn next(&mut self) -> Option<IpAddr> {
        while self.left > 0 {
            self.left -= 1;
            let Some(after) = skip_name(self.bytes, self.at) else {
                self.left = 0;
                self.broken = true;
                return None;
            };
            // TYPE (2), CLASS (2), TTL (4), RDLENGTH (2), RDATA.
            let Some(fixed) = self.bytes.get(after..after + 10) else {
                self.left = 0;
                self.broken = true;
                return None;
            };
            let rtype = u16::from_be_bytes([fixed[0], fixed[1]]);
            let rdlength = u16::from_be_bytes([fixed[8], fixed[9]]) as usize;
            let data_at = after + 10;
            let Some(data) = self.bytes.get(data_at..data_at + rdlength) else {
                self.left = 0;
                self.broken = true;
                return None;
            };
            self.at = data_at + rdlength;
            match (rtype, rdlength) {
                (rtype::A, 4) => {
                    return Some(IpAddr::V4(Ipv4Addr::new(
                        data[0], data[1], data[2], data[3],
                    )))
                }
                (rtype::AAAA, 16) => {
                    let octets: [u8; 16] = data.try_into().expect("sixteen bytes");
                    return Some(IpAddr::V6(Ipv6Addr::from(octets)));
                }
                _ => {}
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(labels: &[&str]) -> Vec<u8> {
        let mut v = Vec::new();
        for l in labels {
            v.push(l.len() as u8);
            v.extend_from_slice(l.as_bytes());
        }
        v.push(0);
        v
    }

    /// A response to `A? www.Example.com`: a CNAME to a compressed name,
    /// two A records (one for the CNAME's target) and an AAAA.
    fn response() -> Vec<u8> {
        let mut m = vec![0x12, 0x34, 0x81, 0x80, 0, 1, 0, 4, 0, 0, 0, 0];
        m.extend(name(&["www", "Example", "com"]));
        m.extend([0, 1, 0, 1]);
        // CNAME www.example.com -> cdn.example.com (pointer to "example")
        m.extend([0xc0, 12, 0, 5, 0, 1, 0, 0, 0, 60, 0, 6]);
        m.extend([3, b'c', b'd', b'n', 0xc0, 16]);
        let cdn = 12 + 17 + 4 + 12;
        m.extend([0xc0, cdn as u8, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 192, 0, 2, 1]);
        m.extend([0xc0, cdn as u8, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 192, 0, 2, 2]);
        m.extend([0xc0, cdn as u8, 0, 28, 0, 1, 0, 0, 0, 60, 0, 16]);
        m.extend([0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
        m
    }

    #[test]
    fn reads_header_question_and_answers() {
        let bytes = response();
        let m = Message::new_checked(&bytes).unwrap();
        assert_eq!(m.id(), 0x1234);
        assert!(m.is_response());
        assert_eq!(m.rcode(), rcode::NO_ERROR);
        assert!(!m.truncated());
        let q = m.question().unwrap();
        assert_eq!(q.qtype, rtype::A);
        assert_eq!(q.name().to_lowercase().as_deref(), Some("www.example.com"));
        let addrs: Vec<IpAddr> = m.addresses().collect();
        assert_eq!(
            addrs,
            vec![
                "192.0.2.1".parse::<IpAddr>().unwrap(),
                "192.0.2.2".parse().unwrap(),
                "2001:db8::1".parse().unwrap()
            ]
        );
    }

    #[test]
    fn a_cut_response_keeps_its_header_and_question() {
        let bytes = response();
        let cut = &bytes[..12 + 17 + 4 + 20];
        let m = Message::new_checked(cut).unwrap();
        assert_eq!(
            m.question().unwrap().name().to_lowercase().as_deref(),
            Some("www.example.com")
        );
        assert_eq!(m.addresses().count(), 0);
        assert!(Message::new_checked(&bytes[..11]).is_err());
    }

    #[test]
    fn pointers_that_loop_or_point_ahead_end_the_name() {
        // A question whose name points at itself.
        let m = [0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0xc0, 12, 0, 1, 0, 1];
        let q = Message::new_checked(&m).unwrap().question().unwrap();
        assert_eq!(q.name().to_lowercase(), None);
        // Two labels pointing at each other.
        let m = [
            0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, b'a', 0xc0, 12, 0, 1, 0, 1,
        ];
        let q = Message::new_checked(&m).unwrap().question().unwrap();
        assert_eq!(q.name().to_lowercase(), None);
    }

    #[test]
    fn a_query_and_an_nxdomain() {
        let mut m = vec![0xab, 0xcd, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0];
        m.extend(name(&["api", "svc", "cluster", "local"]));
        m.extend([0, 28, 0, 1]);
        let q = Message::new_checked(&m).unwrap();
        assert!(!q.is_response());
        assert_eq!(q.question().unwrap().qtype, rtype::AAAA);
        let mut r = m.clone();
        r[2] = 0x81;
        r[3] = 0x83;
        let r = Message::new_checked(&r).unwrap();
        assert!(r.is_response());
        assert_eq!(r.rcode(), rcode::NAME_ERROR);
        assert_eq!(r.addresses().count(), 0);
    }

    #[test]
    fn never_panics_on_any_prefix_or_byte_flip() {
        let bytes = response();
        for n in 0..=bytes.len() {
            if let Ok(m) = Message::new_checked(&bytes[..n]) {
                let _ = m.question().map(|q| q.name().to_lowercase());
                let _ = m.addresses().count();
            }
        }
        for i in 0..bytes.len() {
            for flip in [0x01u8, 0x40, 0x80, 0xc0, 0xff] {
                let mut b = bytes.clone();
                b[i] ^= flip;
                let m = Message::new_checked(&b).unwrap();
                let _ = m.question().map(|q| q.name().to_lowercase());
                let _ = m.addresses().count();
            }
        }
    }
}
