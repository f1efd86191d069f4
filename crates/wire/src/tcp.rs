//! TCP flags and options.
//!
//! Options are walked here rather than with `etherparse`'s iterator, which
//! stops at kinds it does not know, such as TCP Fast Open (kind 34).

bitflags::bitflags! {
    /// The TCP flag bits (the low 9 bits of header bytes 12..14).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
    pub struct TcpFlags: u16 {
        const FIN = 0x001;
        const SYN = 0x002;
        const RST = 0x004;
        const PSH = 0x008;
        const ACK = 0x010;
        const URG = 0x020;
        const ECE = 0x040;
        const CWR = 0x080;
        /// Accurate ECN (RFC 9768; formerly NS, RFC 3540).
        const AE = 0x100;
    }
}

impl TcpFlags {
    /// The flags of a TCP header (bytes 12..14); reserved bits dropped.
    pub fn from_header_bits(bits: u16) -> TcpFlags {
        TcpFlags::from_bits_truncate(bits & 0x01ff)
    }
    pub fn fin(self) -> bool {
        self.contains(Self::FIN)
    }
    pub fn syn(self) -> bool {
        self.contains(Self::SYN)
    }
    pub fn rst(self) -> bool {
        self.contains(Self::RST)
    }
    pub fn psh(self) -> bool {
        self.contains(Self::PSH)
    }
    pub fn ack(self) -> bool {
        self.contains(Self::ACK)
    }

    /// Wireshark-style short form, e.g. `SYN, ACK`.
    pub fn describe(self) -> String {
        let names = [
            (Self::SYN, "SYN"),
            (Self::FIN, "FIN"),
            (Self::RST, "RST"),
            (Self::PSH, "PSH"),
            (Self::ACK, "ACK"),
            (Self::URG, "URG"),
            (Self::ECE, "ECE"),
            (Self::CWR, "CWR"),
        ];
        let parts: Vec<&str> = names
            .iter()
            .filter(|(bit, _)| self.contains(*bit))
            .map(|(_, n)| *n)
            .collect();
        parts.join(", ")
    }
}

/// TCP Fast Open option (RFC 7413), kind 34 or the experimental kind 254
/// with magic 0xF989.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tfo {
    /// Empty option on a SYN: the client asks for a cookie.
    CookieRequest,
    /// A cookie of `len` bytes: on a SYN, a TFO attempt; on a SYN-ACK, the
    /// server handing out a cookie.
    Cookie { len: u8 },
}

/// The options of one segment that rttdoc uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TcpOptions {
    pub mss: Option<u16>,
    pub window_scale: Option<u8>,
    pub sack_permitted: bool,
    /// SACK blocks (left, right edges); only the first `sack_len` are valid.
    pub sack: [(u32, u32); 4],
    pub sack_len: u8,
    /// (TSval, TSecr)
    pub timestamps: Option<(u32, u32)>,
    pub tfo: Option<Tfo>,
    /// The option list ended in the middle of an option.
    pub malformed: bool,
}

impl TcpOptions {
    /// Walks the option bytes of a TCP header (everything after byte 20).
    pub fn parse(mut bytes: &[u8]) -> TcpOptions {
        let mut o = TcpOptions::default();
        while let Some(&kind) = bytes.first() {
            match kind {
                0 => break,
                1 => {
                    bytes = &bytes[1..];
                    continue;
                }
                _ => {}
            }
            let Some(&len) = bytes.get(1) else {
                o.malformed = true;
                break;
            };
            let len = len as usize;
            if len < 2 || len > bytes.len() {
                o.malformed = true;
                break;
            }
            let body = &bytes[2..len];
            match (kind, body.len()) {
                (2, 2) => o.mss = Some(u16::from_be_bytes([body[0], body[1]])),
                (3, 1) => o.window_scale = Some(body[0]),
                (4, 0) => o.sack_permitted = true,
                (5, n) if n % 8 == 0 => {
                    for block in body.chunks_exact(8).take(4) {
                        let left = u32::from_be_bytes([block[0], block[1], block[2], block[3]]);
                        let right = u32::from_be_bytes([block[4], block[5], block[6], block[7]]);
                        o.sack[o.sack_len as usize] = (left, right);
                        o.sack_len += 1;
                    }
                }
                (8, 8) => {
                    let val = u32::from_be_bytes([body[0], body[1], body[2], body[3]]);
                    let ecr = u32::from_be_bytes([body[4], body[5], body[6], body[7]]);
                    o.timestamps = Some((val, ecr));
                }
                (34, 0) => o.tfo = Some(Tfo::CookieRequest),
                (34, n) => o.tfo = Some(Tfo::Cookie { len: n as u8 }),
                (254, n) if n >= 2 && body[0] == 0xf9 && body[1] == 0x89 => {
                    o.tfo = Some(if n == 2 {
                        Tfo::CookieRequest
                    } else {
                        Tfo::Cookie { len: (n - 2) as u8 }
                    });
                }
                _ => {}
            }
            bytes = &bytes[len..];
        }
        o
    }

    pub fn sack_blocks(&self) -> &[(u32, u32)] {
        &self.sack[..self.sack_len as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linux_syn_options_are_all_read() {
        // MSS 1460, SACK permitted, TS 1/0, NOP, wscale 7: what Linux sends.
        let opts = [
            2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 3, 3, 7,
        ];
        let o = TcpOptions::parse(&opts);
        assert_eq!(o.mss, Some(1460));
        assert!(o.sack_permitted);
        assert_eq!(o.timestamps, Some((1, 0)));
        assert_eq!(o.window_scale, Some(7));
        assert!(!o.malformed);
    }

    #[test]
    fn tfo_cookie_request_and_cookie_are_told_apart() {
        assert_eq!(TcpOptions::parse(&[34, 2]).tfo, Some(Tfo::CookieRequest));
        let cookie = [34, 10, 1, 2, 3, 4, 5, 6, 7, 8];
        assert_eq!(TcpOptions::parse(&cookie).tfo, Some(Tfo::Cookie { len: 8 }));
        let experimental = [254, 4, 0xf9, 0x89];
        assert_eq!(
            TcpOptions::parse(&experimental).tfo,
            Some(Tfo::CookieRequest)
        );
        // Options after TFO are still read: the walk must not stop at kind 34.
        let after = [34, 2, 2, 4, 0x05, 0xb4];
        assert_eq!(TcpOptions::parse(&after).mss, Some(1460));
    }

    #[test]
    fn sack_blocks_are_read_in_order() {
        let mut opts = vec![1, 1, 5, 18];
        for v in [10u32, 20, 30, 40] {
            opts.extend_from_slice(&v.to_be_bytes());
        }
        let o = TcpOptions::parse(&opts);
        assert_eq!(o.sack_blocks(), &[(10, 20), (30, 40)]);
    }

    #[test]
    fn truncated_or_zero_length_options_stop_without_panicking() {
        assert!(TcpOptions::parse(&[2]).malformed);
        assert!(TcpOptions::parse(&[2, 0, 0, 0]).malformed);
        assert!(TcpOptions::parse(&[8, 200, 0]).malformed);
        assert_eq!(TcpOptions::parse(&[0, 2, 4, 5, 0xb4]).mss, None);
    }

    #[test]
    fn flags_describe_like_wireshark() {
        assert_eq!((TcpFlags::SYN | TcpFlags::ACK).describe(), "SYN, ACK");
        assert_eq!((TcpFlags::PSH | TcpFlags::ACK).describe(), "PSH, ACK");
    }

    proptest::proptest! {
        #[test]
        fn any_option_bytes_parse_without_panicking(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..40)) {
            let o = TcpOptions::parse(&bytes);
            proptest::prop_assert!(o.sack_len <= 4);
        }
    }
}
