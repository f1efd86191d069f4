//! Sun's snoop format (RFC 1761): what Solaris's and illumos's `snoop -o`
//! write, Check Point's `fw monitor -o`, and Shomiti/Finisar Surveyor's
//! variant of it. Read as wiretap's snoop.c reads it:
//!
//! - a 16-byte file header: `snoop\0\0\0`, the version (2; Surveyor wrote
//!   2 to 5), the network type (DLPI's `DL_*` values, Solaris's private
//!   ones with the top bit set);
//! - records of a 24-byte header (original length, included length,
//!   record length, cumulative drops, seconds, microseconds; all
//!   big-endian), the packet, and padding to the record length;
//! - a Surveyor capture is told from a snoop one by its first record's
//!   padding: Surveyor keeps a 20-byte trailer there (snoop pads to 4
//!   bytes, a few atmsnoop files to 6), and its Ethernet frames end in
//!   their FCS.

use crate::linktype;

/// The file's first eight bytes.
pub(crate) const IDENT: [u8; 8] = *b"snoop\0\0\0";

/// The file header: the ident, the version, the network type.
pub(crate) const FILE_HEADER: usize = 16;

/// A record's header.
pub(crate) const RECORD_HEADER: usize = 24;

/// Surveyor's trailer in a record's padding (wiretap's `shomiti_trailer`).
const SHOMITI_TRAILER: u32 = 20;

/// Solaris's private network types (`DL_*` with the top bit set).
const PRIVATE: u32 = 0x8000_0000;

/// LINKTYPE_IEEE802_5 (Token Ring), LINKTYPE_FDDI, LINKTYPE_IP_OVER_FC and
/// LINKTYPE_SUNATM: links whose frames rttdoc counts apart, unread.
const TOKEN_RING: u32 = 6;
const FDDI: u32 = 10;
const IP_OVER_FC: u32 = 122;
const SUNATM: u32 = 123;
/// LINKTYPE_IPNET: Solaris's ipnet(7D) observability links.
const IPNET: u32 = 226;

/// What the file header says of its records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SnoopFile {
    /// The packets' link layer, as a `LINKTYPE_*` value.
    pub(crate) link_type: u32,
    /// Bytes of frame check sequence each frame ends in (Surveyor's
    /// Ethernet frames).
    pub(crate) fcs_bytes: u32,
}

/// One record's header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SnoopRecord {
    pub(crate) orig_len: u32,
    pub(crate) caplen: u32,
    /// The whole record: header, packet, padding.
    pub(crate) rec_len: u32,
    pub(crate) ts_sec: u32,
    pub(crate) ts_usec: u32,
}

impl SnoopRecord {
    /// Reads a record header (`h` holds at least [`RECORD_HEADER`] bytes).
    pub(crate) fn parse(h: &[u8]) -> SnoopRecord {
        let be = |at: usize| u32::from_be_bytes([h[at], h[at + 1], h[at + 2], h[at + 3]]);
        SnoopRecord {
            orig_len: be(0),
            caplen: be(4),
            rec_len: be(8),
            ts_sec: be(16),
            ts_usec: be(20),
        }
    }

    /// Bytes after the packet, up to the record's end; `None` when the
    /// record is shorter than its header and packet.
    pub(crate) fn padding(&self) -> Option<u32> {
        self.rec_len
            .checked_sub(RECORD_HEADER as u32)?
            .checked_sub(self.caplen)
    }
}

/// Reads the file header (`header` holds [`FILE_HEADER`] bytes), with the
/// first record's header when the file has one: its padding tells a
/// Surveyor capture. The error says what Wireshark says of the file.
pub(crate) fn parse_header(header: &[u8], first: Option<SnoopRecord>) -> Result<SnoopFile, String> {
    let be = |at: usize| {
        u32::from_be_bytes([header[at], header[at + 1], header[at + 2], header[at + 3]])
    };
    let (version, network) = (be(8), be(12));
    if !(2..=5).contains(&version) {
        return Err(format!("snoop version {version} is not supported"));
    }
    let shomiti = first
        .and_then(|r| r.padding())
        .is_some_and(|pad| pad >= SHOMITI_TRAILER);
    let link_type = if shomiti {
        match network {
            0 | 4 | 10 | 12 | 19 => Some(linktype::ETHERNET),
            2 | 11 | 13 | 14 => Some(TOKEN_RING),
            8 => Some(FDDI),
            _ => None,
        }
    } else if network & PRIVATE != 0 {
        match network ^ PRIVATE {
            5 => Some(IPNET),
            _ => None,
        }
    } else {
        match network {
            0 | 4 => Some(linktype::ETHERNET),
            2 => Some(TOKEN_RING),
            8 => Some(FDDI),
            // "Other" and the software loopback: BSD's 4-byte family.
            9 | 14 => Some(linktype::NULL),
            16 => Some(IP_OVER_FC),
            // atmsnoop: a 4-byte header (direction, VPI, VCI) before each
            // PDU, as LINKTYPE_SUNATM has it.
            18 => Some(SUNATM),
            _ => None,
        }
    };
    let Some(link_type) = link_type else {
        let kind = if shomiti {
            "Surveyor network"
        } else {
            "snoop network"
        };
        return Err(format!("{kind} type {network} is not one rttdoc reads"));
    };
    Ok(SnoopFile {
        link_type,
        fcs_bytes: if shomiti && link_type == linktype::ETHERNET {
            4
        } else {
            0
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(version: u32, network: u32) -> Vec<u8> {
        let mut h = IDENT.to_vec();
        h.extend_from_slice(&version.to_be_bytes());
        h.extend_from_slice(&network.to_be_bytes());
        h
    }

    fn record(caplen: u32, rec_len: u32) -> SnoopRecord {
        let mut h = Vec::new();
        for v in [caplen + 4, caplen, rec_len, 0, 1_700_000_000, 250_000] {
            h.extend_from_slice(&v.to_be_bytes());
        }
        SnoopRecord::parse(&h)
    }

    /// Solaris's snoop of an Ethernet link: frames without their FCS,
    /// padded to four bytes.
    #[test]
    fn solaris_ethernet_is_ethernet_without_fcs() {
        let file = parse_header(&header(2, 4), Some(record(61, 88))).unwrap();
        assert_eq!(
            file,
            SnoopFile {
                link_type: linktype::ETHERNET,
                fcs_bytes: 0
            }
        );
        // (An empty file is snoop too.)
        assert_eq!(parse_header(&header(2, 4), None).unwrap(), file);
    }

    /// A first record padded by 20 bytes or more is Surveyor's: its
    /// Ethernet frames end in their FCS, and its network types are its own
    /// (10 is Fast Ethernet there, Fibre Channel's neighbour in DLPI).
    #[test]
    fn surveyors_trailer_makes_it_ethernet_with_fcs() {
        let first = record(60, 24 + 60 + 20);
        for network in [0, 4, 10, 12, 19] {
            let file = parse_header(&header(3, network), Some(first)).unwrap();
            assert_eq!(file.link_type, linktype::ETHERNET, "{network}");
            assert_eq!(file.fcs_bytes, 4);
        }
        assert!(parse_header(&header(2, 10), Some(record(60, 84))).is_err());
    }

    /// Solaris's ipnet(7D) links are a private type.
    #[test]
    fn the_private_ipnet_type_is_ipnet() {
        let file = parse_header(&header(2, 0x8000_0005), Some(record(60, 84))).unwrap();
        assert_eq!(file.link_type, 226);
    }

    /// Versions other than Solaris's and Surveyor's, and network types
    /// Wireshark does not read, are refused by name.
    #[test]
    fn unknown_versions_and_networks_are_refused_by_name() {
        assert_eq!(
            parse_header(&header(1, 4), None).unwrap_err(),
            "snoop version 1 is not supported"
        );
        assert_eq!(
            parse_header(&header(2, 26), None).unwrap_err(),
            "snoop network type 26 is not one rttdoc reads"
        );
        assert!(parse_header(&header(2, 0x8000_0004), None).is_err());
    }

    /// A record shorter than its header and packet has no padding.
    #[test]
    fn a_record_shorter_than_its_packet_has_no_padding() {
        assert_eq!(record(60, 84).padding(), Some(0));
        assert_eq!(record(61, 88).padding(), Some(3));
        assert_eq!(record(61, 84).padding(), None);
        assert_eq!(record(0, 10).padding(), None);
    }
}
