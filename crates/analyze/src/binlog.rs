//! MySQL's and MariaDB's replication stream: a replica's binlog dump and
//! its semi-synchronous acknowledgments.
//!
//! A replica asks the primary for its binary log (`COM_BINLOG_DUMP`,
//! `COM_BINLOG_DUMP_GTID`); the primary answers with the log's first
//! events and then sends each transaction's events the moment it
//! commits, for as long as the connection lasts. With semi-synchronous
//! replication the replica acknowledges each transaction the primary
//! flagged (a packet of its own: `0xef`, the position, the log's name),
//! and the primary's commit waits for that acknowledgment, not the other
//! way round. Read as turns, each acknowledgment "asked" and the next
//! transaction's events "answered": the time between commits was the
//! primary's think time (MariaDB 10.11 with commits 0.8, 1.8 and 0.9 s
//! apart: 3.4 s of `server_think_time`). Once a dump is asked, an
//! acknowledgment asks nothing; the events are the rest of the dump's
//! answer, sent at the primary's own pace.

/// The MySQL packet header: a 3-byte little-endian payload length and a
/// sequence number.
const HEADER: usize = 4;
/// The commands that begin a binlog stream.
const COM_BINLOG_DUMP: u8 = 0x12;
const COM_BINLOG_DUMP_GTID: u8 = 0x1e;
/// A semi-synchronous acknowledgment's first byte, then an 8-byte
/// position and the log's name.
const SEMISYNC_ACK: u8 = 0xef;

/// The payload of the one whole packet that `head` is (`len` bytes in
/// all), when it is that.
fn whole_packet(head: &[u8], len: u64) -> Option<&[u8]> {
    let h = head.get(..HEADER)?;
    let length = u64::from(u32::from_le_bytes([h[0], h[1], h[2], 0]));
    (HEADER as u64 + length == len && head.len() as u64 == len).then(|| &head[HEADER..])
}

/// The name of the binlog dump command that `head` is (a client's whole
/// packet, sequence 0), if it is one.
pub(crate) fn dump_command(head: &[u8], len: u64) -> Option<&'static str> {
    if head.get(3) != Some(&0) {
        return None;
    }
    match *whole_packet(head, len)?.first()? {
        COM_BINLOG_DUMP => Some("COM_BINLOG_DUMP"),
        COM_BINLOG_DUMP_GTID => Some("COM_BINLOG_DUMP_GTID"),
        _ => None,
    }
}

/// Whether `head` is a replica's semi-synchronous acknowledgment (one
/// whole packet: `0xef`, an 8-byte position, a log's name).
pub(crate) fn is_semisync_ack(head: &[u8], len: u64) -> bool {
    whole_packet(head, len).is_some_and(|p| {
        p.len() > 9 && p[0] == SEMISYNC_ACK && p[9..].iter().all(u8::is_ascii_graphic)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packet(seq: u8, payload: &[u8]) -> Vec<u8> {
        let mut p = (payload.len() as u32).to_le_bytes()[..3].to_vec();
        p.push(seq);
        p.extend_from_slice(payload);
        p
    }

    #[test]
    fn a_dump_and_its_acknowledgments_are_told() {
        let mut dump = vec![COM_BINLOG_DUMP_GTID, 0, 0, 2, 0, 0, 0];
        dump.extend_from_slice(&[0; 8]);
        let p = packet(0, &dump);
        assert_eq!(
            dump_command(&p, p.len() as u64),
            Some("COM_BINLOG_DUMP_GTID")
        );
        let mut ack = vec![SEMISYNC_ACK];
        ack.extend_from_slice(&1234u64.to_le_bytes());
        ack.extend_from_slice(b"mysql-bin.000001");
        let a = packet(0, &ack);
        assert!(is_semisync_ack(&a, a.len() as u64));
        // Cut, another command, a query, a later sequence number.
        assert!(!is_semisync_ack(&a[..a.len() - 1], a.len() as u64));
        assert_eq!(dump_command(&p, p.len() as u64 + 1), None);
        let q = packet(0, b"\x03SELECT 1");
        assert_eq!(dump_command(&q, q.len() as u64), None);
        assert!(!is_semisync_ack(&q, q.len() as u64));
        let later = packet(1, &dump);
        assert_eq!(dump_command(&later, later.len() as u64), None);
    }
}
