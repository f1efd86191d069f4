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

/// What rttdoc reads of Multipath TCP's option (RFC 8684; RFC 6824's
/// version 0 lays these parts out alike): whether it opens a subflow, and
/// a DSS option's Data ACK and mapping. A Data ACK acknowledges the
/// connection's data at the data level, whichever subflow carried it; a
/// mapping says which data-level bytes a sender puts on this subflow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Mptcp {
    /// MP_CAPABLE (subtype 0: the connection's first subflow) or MP_JOIN
    /// (subtype 1: a subflow added to it), on the SYNs and the
    /// handshake's ACK.
    pub opens: Option<MptcpSubflow>,
    /// A DSS option's (subtype 2) Data ACK, its low 32 bits when it is
    /// sent as 8 bytes.
    pub data_ack: Option<u32>,
    /// A DSS option's mapping: the data sequence number (its low 32
    /// bits) and the data-level length (a DATA_FIN counts one) of the
    /// bytes it maps onto this subflow.
    pub mapping: Option<(u32, u16)>,
    /// Version 1's MP_CAPABLE on the first data packet: the data-level
    /// length it maps, from the sender's initial data sequence number on
    /// (which the option does not spell out: it is a hash of the key).
    pub first_data_len: Option<u16>,
}

/// Which subflow of a Multipath TCP connection a handshake opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MptcpSubflow {
    /// MP_CAPABLE: the first, which starts the connection.
    First,
    /// MP_JOIN: one added to a connection already open.
    Joined,
}

/// The low 32 bits of a 4- or 8-byte big-endian number.
fn low32(bytes: &[u8]) -> u32 {
    let low = &bytes[bytes.len() - 4..];
    u32::from_be_bytes([low[0], low[1], low[2], low[3]])
}

impl Mptcp {
    /// Reads one option's body (after kind and length); `None` for a
    /// DSS too short for what its flags say it holds.
    fn parse(body: &[u8]) -> Option<Mptcp> {
        let subtype = body.first()? >> 4;
        let mut m = Mptcp::default();
        match subtype {
            0 => {
                m.opens = Some(MptcpSubflow::First);
                // Version, flags, two 8-byte keys, then (version 1, on
                // the first data packet) the data-level length.
                if body.len() >= 20 {
                    m.first_data_len = Some(u16::from_be_bytes([body[18], body[19]]));
                }
            }
            1 => m.opens = Some(MptcpSubflow::Joined),
            2 => {
                // Flags: A (0x01) a Data ACK, a (0x02) of 8 bytes; M (0x04)
                // a mapping, m (0x08) its data sequence number of 8 bytes.
                // The Data ACK comes first after subtype and flags, then
                // the mapping: data sequence number, subflow sequence
                // number (4), data-level length (2), checksum (optional).
                let flags = *body.get(1)?;
                let mut at = 2;
                if flags & 0x01 != 0 {
                    let width = if flags & 0x02 == 0 { 4 } else { 8 };
                    m.data_ack = Some(low32(body.get(at..at + width)?));
                    at += width;
                }
                if flags & 0x04 != 0 {
                    let width = if flags & 0x08 == 0 { 4 } else { 8 };
                    let dsn = low32(body.get(at..at + width)?);
                    let len = body.get(at + width + 4..at + width + 6)?;
                    m.mapping = Some((dsn, u16::from_be_bytes([len[0], len[1]])));
                }
            }
            _ => {}
        }
        Some(m)
    }
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
    /// Multipath TCP's options (kind 30), merged when a segment carries
    /// several (an ADD_ADDR beside a DSS).
    pub mptcp: Option<Mptcp>,
    /// The option list ended in the middle of an option.
    pub malformed: bool,
    /// The kinds of the first 8 options in the order they came (NOPs
    /// included, 0 past the end): how a stack lays out its SYN's options
    /// tells the stack ([`TcpOptions::laid_out_as_linux`]).
    pub layout: [u8; 8],
}

impl TcpOptions {
    /// Whether a SYN's (or SYN-ACK's) options are laid out as Linux's
    /// `tcp_options_write` lays them: the MSS first; SACK-permitted and
    /// the timestamps together (kinds 4, 8), or either behind two NOPs;
    /// the window scale last behind one NOP (or, after SACK-permitted and
    /// the timestamps, none). Windows, macOS and the BSDs put the window
    /// scale before SACK-permitted and the timestamps, so no other common
    /// stack writes these layouts. (Without the window scale, SACK-
    /// permitted alone behind two NOPs is Windows' too: not told.)
    pub fn laid_out_as_linux(&self) -> bool {
        matches!(
            self.layout,
            [2, 4, 8, 1, 3, ..] | [2, 4, 8, 0, ..] | [2, 1, 1, 4 | 8, 1, 3, ..]
        )
    }

    /// Walks the option bytes of a TCP header (everything after byte 20).
    pub fn parse(mut bytes: &[u8]) -> TcpOptions {
        let mut o = TcpOptions::default();
        let mut n = 0;
        while let Some(&kind) = bytes.first() {
            if let Some(slot) = o.layout.get_mut(n) {
                *slot = kind;
                n += 1;
            }
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
                (30, _) => {
                    if let Some(m) = Mptcp::parse(body) {
                        let seen = o.mptcp.unwrap_or_default();
                        o.mptcp = Some(Mptcp {
                            opens: m.opens.or(seen.opens),
                            data_ack: m.data_ack.or(seen.data_ack),
                            mapping: m.mapping.or(seen.mapping),
                            first_data_len: m.first_data_len.or(seen.first_data_len),
                        });
                    }
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
    use crate::hex;

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
        assert!(o.laid_out_as_linux());
    }

    #[test]
    fn the_stacks_syn_layouts_are_told_apart() {
        let mss = [2, 4, 0x05, 0xb4];
        let ts = [8, 10, 0, 0, 0, 1, 0, 0, 0, 0];
        let parse = |parts: &[&[u8]]| TcpOptions::parse(&parts.concat());
        // Linux: SACK-permitted with the timestamps, or either behind two
        // NOPs; the window scale last.
        assert!(parse(&[&mss, &[4, 2], &ts, &[1, 3, 3, 7]]).laid_out_as_linux());
        assert!(parse(&[&mss, &[4, 2], &ts]).laid_out_as_linux());
        assert!(parse(&[&mss, &[1, 1, 4, 2], &[1, 3, 3, 7]]).laid_out_as_linux());
        assert!(parse(&[&mss, &[1, 1], &ts, &[1, 3, 3, 7]]).laid_out_as_linux());
        // Windows (the window scale before SACK-permitted), FreeBSD
        // (and the timestamps after it), macOS (NOPs, the timestamps,
        // SACK-permitted, EOL); SACK-permitted alone (Windows' too), an
        // MSS alone.
        assert!(!parse(&[&mss, &[1, 3, 3, 8, 1, 1, 4, 2]]).laid_out_as_linux());
        assert!(!parse(&[&mss, &[1, 3, 3, 6, 4, 2], &ts]).laid_out_as_linux());
        assert!(!parse(&[&mss, &[1, 3, 3, 6, 1, 1], &ts, &[4, 2, 0, 0]]).laid_out_as_linux());
        assert!(!parse(&[&mss, &[1, 1, 4, 2]]).laid_out_as_linux());
        assert!(!parse(&[&mss]).laid_out_as_linux());
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
    fn mptcp_subflow_openings_are_told_apart() {
        // mptcp-v0.pcap frame 1 (MP_CAPABLE on the SYN), frame 8 (MP_JOIN).
        let capable = hex("020405b40402080affffa1b000000000010303061e0c00819c9eabd1e46a33b2");
        let join = hex("020405b40402080affffa1c000000000010303061e0c1000e47f01421b665a18");
        let o = TcpOptions::parse(&capable);
        assert_eq!(o.mptcp.and_then(|m| m.opens), Some(MptcpSubflow::First));
        assert_eq!(o.window_scale, Some(6), "options after it are still read");
        assert_eq!(
            TcpOptions::parse(&join).mptcp.and_then(|m| m.opens),
            Some(MptcpSubflow::Joined)
        );
        assert_eq!(TcpOptions::parse(&join).mptcp.unwrap().data_ack, None);
    }

    #[test]
    fn a_dss_data_ack_is_read_in_either_width() {
        // mptcp-v0.pcap frame 5: a 4-byte Data ACK (tshark: 3518592185).
        let v0 = hex("0101080affffa1c0ffffa2f21e082001d1b974b9");
        assert_eq!(
            TcpOptions::parse(&v0).mptcp.unwrap().data_ack,
            Some(3518592185)
        );
        // mptcp-v1.pcap frame 5: an 8-byte one (tshark: 14413541604287230030),
        // kept as its low 32 bits.
        let v1 = hex("0101080ac337c5931baf9ea11e0c2003c8072fb90edab04e");
        assert_eq!(
            TcpOptions::parse(&v1).mptcp.unwrap().data_ack,
            Some((14413541604287230030u64 & 0xffff_ffff) as u32)
        );
        // mptcp-v0.pcap frame 4: ADD_ADDR, then a DSS with a Data ACK and a
        // mapping (tshark: 3576348362): both options are read.
        let both =
            hex("0101080affffa2f2ffffa1b01e0834010a0102021e142005d52abecad1b97490000000010029082f");
        let m = TcpOptions::parse(&both).mptcp.unwrap();
        assert_eq!(m.data_ack, Some(3576348362));
        assert_eq!(m.opens, None);
        assert_eq!(m.mapping, Some((0xd1b9_7490, 41)));
        // mptcp-v1.pcap frame 7: 8-byte Data ACK and data sequence number,
        // subflow sequence 1, 8192 bytes mapped (tshark's datalvllen), a
        // checksum.
        let mapped =
            hex("0101080ac337c5931baf9ea11e1a200fc8072fb90edab04ea28e87fddd1d30f20000000120000101");
        let m = TcpOptions::parse(&mapped).mptcp.unwrap();
        assert_eq!(m.mapping, Some((0xdd1d_30f2, 8192)));
        assert_eq!(m.data_ack, Some(0x0eda_b04e));
        // mptcp-v1.pcap frame 4: version 1's MP_CAPABLE with both keys and
        // the first data's length (tshark: 8192).
        let first = hex("0101080a1baf9ea1c337c5931e1601011fdb5df328bc3def29a6c86981ad933c20000101");
        let m = TcpOptions::parse(&first).mptcp.unwrap();
        assert_eq!(m.first_data_len, Some(8192));
        assert_eq!(m.opens, Some(MptcpSubflow::First));
        // The handshake's MP_CAPABLE (one key) maps nothing.
        assert_eq!(
            TcpOptions::parse(&hex("1e0c0081967d2770b6960552"))
                .mptcp
                .unwrap()
                .first_data_len,
            None
        );
        // A DSS announcing a Data ACK it is too short to hold.
        assert_eq!(TcpOptions::parse(&[30, 6, 0x20, 0x01, 1, 2]).mptcp, None);
        // A DSS announcing a mapping it is too short to hold.
        assert_eq!(TcpOptions::parse(&[30, 4, 0x20, 0x04]).mptcp, None);
        // A DSS with a DATA_FIN's mapping only: one data-level byte.
        let fin = [30, 14, 0x20, 0x14, 0, 0, 0, 9, 0, 0, 0, 0, 0, 1];
        let m = TcpOptions::parse(&fin).mptcp.unwrap();
        assert_eq!((m.data_ack, m.mapping), (None, Some((9, 1))));
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
