//! Bitcoin's peer-to-peer protocol (Bitcoin Core and the nodes and
//! wallets that speak it, port 8333): which messages ask, which answer,
//! and which a peer relays on its own.
//!
//! Two peers, once they have exchanged `version` and `verack`, announce
//! what they learn the moment they learn it: every transaction and block
//! the network relays reaches a peer as an `inv` (then `tx` and `block`
//! when asked for), and addresses as `addr`. Read as turns, the client's
//! last message "asked" and the next announcement "answered": the time
//! until someone on the network paid someone was the peer's think time
//! (365 s of `server_think_time` on one connection of nDPI's
//! bitcoin.pcap). The messages say what asks (Bitcoin Core's
//! protocol.h):
//!
//! | the connecting peer sends | answered by the other's            |
//! |---------------------------|------------------------------------|
//! | version                   | version or verack                  |
//! | ping                      | pong                               |
//! | getheaders                | headers                            |
//! | getblocks, mempool        | inv                                |
//! | getdata                   | block, tx, merkleblock, cmpctblock or notfound (and those that follow it, the rest of the answer) |
//! | getaddr                   | addr or addrv2                     |
//! | getblocktxn               | blocktxn                           |
//! | getcfilters, getcfheaders, getcfcheckpt | cfilter, cfheaders, cfcheckpt |
//!
//! A peer answers `getaddr` and `mempool` when its relay timers say
//! (addresses every 30 s on average, inventory every 5 s in Bitcoin
//! Core): those ask it to wait, and the wait is idle, not its work.
//! Everything else asks nothing (announcements, `verack`, `pong`,
//! `sendheaders`, `feefilter`, `sendcmpct`...), and the other peer's
//! messages answer only what was asked: its own `getdata` and `ping` ask
//! the connecting peer, whose answers are no questions.
//!
//! A connection is Bitcoin's when its first data (either side's: a
//! capture may begin with the other's) is whole messages, the first with
//! a network's magic (main, testnet3, testnet4, signet, regtest) and a
//! command of lowercase letters and digits, on any port. Messages are
//! followed across segments by their lengths (crate::framing).

use crate::exchange::Turns;
use crate::framing::{whole_messages, Follow};
use crate::reader::Reading;
use crate::Direction;

/// A message's header: magic, command, payload length, checksum.
const HEADER: usize = 24;
/// The header without its checksum: an old `version` or `verack`'s.
const LEGACY_HEADER: usize = 20;
/// The checksum of an empty payload (SHA-256d's first four bytes).
const EMPTY_CHECKSUM: [u8; 4] = [0x5d, 0xf6, 0xe0, 0xe2];
/// The protocol versions whose `version` went without a checksum (from
/// 0.1's 106; checksums on it from 60002).
const LEGACY_VERSIONS: std::ops::Range<u32> = 106..60002;
/// The networks' magic numbers: main, testnet3, testnet4, signet,
/// regtest.
const MAGICS: [[u8; 4]; 5] = [
    [0xf9, 0xbe, 0xb4, 0xd9],
    [0x0b, 0x11, 0x09, 0x07],
    [0x1c, 0x16, 0x3f, 0x28],
    [0x0a, 0x03, 0xcf, 0x40],
    [0xfa, 0xbf, 0xb5, 0xda],
];
/// Bitcoin Core's largest message (`MAX_PROTOCOL_MESSAGE_LENGTH` is
/// 4 MB; blocks up to the 32 MB a message's length allows elsewhere).
const MAX_PAYLOAD: u32 = 0x0200_0000;
/// Questions open at once are bounded; a forgotten one only leaves its
/// turn unanswered.
const MAX_AWAITED: usize = 32;

/// What answers a `getdata`: the blocks and transactions it asked for
/// (those behind the first are the rest of the answer).
const DATA: &[&str] = &["block", "tx", "merkleblock", "cmpctblock", "notfound"];

/// What the connecting peer's questions are, and what answers each.
const QUESTIONS: [(&str, &[&str]); 11] = [
    ("version", &["version", "verack"]),
    ("ping", &["pong"]),
    ("getheaders", &["headers"]),
    ("getblocks", &["inv"]),
    ("mempool", &["inv"]),
    ("getdata", DATA),
    ("getaddr", &["addr", "addrv2"]),
    ("getblocktxn", &["blocktxn"]),
    ("getcfilters", &["cfilter"]),
    ("getcfheaders", &["cfheaders"]),
    ("getcfcheckpt", &["cfcheckpt"]),
];

/// The questions a peer answers when its relay timers say: addresses
/// (`getaddr`) on the address relay's (Poisson, 30 s on average in
/// Bitcoin Core, `AVG_ADDRESS_BROADCAST_INTERVAL`), its mempool's
/// inventory (`mempool`) on the transaction relay's (5 s,
/// `INBOUND_INVENTORY_BROADCAST_INTERVAL`): the client asks it to wait
/// ([`Turns::waits`]), and the ledger counts the wait idle.
const ON_TIMERS: [&str; 2] = ["getaddr", "mempool"];

/// One connection's Bitcoin reading (crate::reader).
pub(crate) type Bitcoin = Reading<State>;

/// What a Bitcoin connection's reading keeps.
#[derive(Debug, Clone, Default)]
pub struct State {
    follow: [Follow; 2],
    /// The connecting peer's message under way asks.
    asking: bool,
    /// The other peer's message under way answers or goes on with an
    /// answer.
    answering: bool,
    /// The last answer was to a `getdata`: the blocks and transactions
    /// right behind it are the rest of it.
    data_answered: bool,
    /// The connecting peer's open questions (what answers each), oldest
    /// first.
    awaited: Vec<&'static [&'static str]>,
}

impl Bitcoin {
    /// Reads a segment's stream bytes (`head` captured, `len` in all,
    /// which includes bytes the capture missed); `None` when the
    /// connection is not Bitcoin's.
    pub(crate) fn read(&mut self, dir: Direction, head: &[u8], len: u64) -> Option<Turns> {
        let state = self.state(|| Some(whole_messages(head, len, message)))?;
        Some(state.read(dir, head, len))
    }
}

impl State {
    fn read(&mut self, dir: Direction, head: &[u8], len: u64) -> Turns {
        let mut m = Turns::default();
        let connecting = dir == Direction::ClientToServer;
        let mut follow = self.follow[dir.index()];
        let walked = follow.walk(head, len, message, |command, _, _| {
            if connecting {
                self.ask(command, &mut m);
            } else {
                self.answer(command, &mut m);
            }
        });
        self.follow[dir.index()] = follow;
        if walked.is_some_and(|w| w.continued) {
            m.go_on(dir, self.asking, self.answering);
        }
        m
    }

    fn ask(&mut self, command: Command, m: &mut Turns) {
        self.data_answered = false;
        let Some((name, awaited)) = QUESTIONS.iter().find(|(name, _)| command.is(name)).copied()
        else {
            self.asking = false;
            return;
        };
        self.asking = true;
        m.asks.get_or_insert(name);
        // The peer answers these on its relay timers, not at once.
        m.waits |= ON_TIMERS.contains(&name);
        crate::reader::push_bounded(&mut self.awaited, awaited, MAX_AWAITED);
    }

    fn answer(&mut self, command: Command, m: &mut Turns) {
        let i = self
            .awaited
            .iter()
            .position(|a| a.iter().any(|name| command.is(name)));
        if let Some(i) = i {
            let awaited = self.awaited.remove(i);
            m.answers = true;
            self.answering = true;
            self.data_answered = awaited == DATA;
        } else if self.data_answered && DATA.iter().any(|name| command.is(name)) {
            // More of what a getdata asked for.
            m.extends = true;
            self.answering = true;
        } else {
            // An announcement, the peer's own question.
            self.answering = false;
            self.data_answered = false;
        }
    }
}

/// A message's command, NUL-padded to 12 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Command([u8; 12]);

impl Command {
    fn is(&self, name: &str) -> bool {
        let n = name.len();
        self.0[..n] == *name.as_bytes() && self.0[n..].iter().all(|&b| b == 0)
    }
}

/// The message at the start of `bytes`: its command and whole length;
/// `None` when it is none of Bitcoin's or the bytes end inside its
/// header. Before protocol version 60002 (Bitcoin 0.6, 2012) `version`
/// and `verack` carried no checksum: a 20-byte header (nDPI's 2011
/// bitcoin.pcap). An old `version` is told by the protocol version that
/// begins its payload where the checksum would be, an old `verack` by
/// the empty payload's checksum missing.
fn message(bytes: &[u8]) -> Option<(Command, u64)> {
    let h = bytes.get(..LEGACY_HEADER)?;
    if !MAGICS.iter().any(|magic| h[..4] == *magic) {
        return None;
    }
    let command: [u8; 12] = h[4..16].try_into().ok()?;
    // Lowercase letters and digits, then NULs only, at least one letter.
    let name_len = command.iter().position(|&b| b == 0).unwrap_or(12);
    let valid = name_len > 0
        && command[..name_len]
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        && command[name_len..].iter().all(|&b| b == 0);
    let payload = u32::from_le_bytes(h[16..20].try_into().ok()?);
    if !valid || payload > MAX_PAYLOAD {
        return None;
    }
    let command = Command(command);
    let old_style = command.is("version") || command.is("verack");
    let legacy = match bytes.get(LEGACY_HEADER..HEADER) {
        _ if !old_style => false,
        // (A 20-byte verack that ends the captured bytes.)
        None if command.is("verack") && payload == 0 => true,
        None => return None,
        Some(a) if command.is("verack") => payload == 0 && a != EMPTY_CHECKSUM,
        Some(a) => LEGACY_VERSIONS.contains(&u32::from_le_bytes(a.try_into().ok()?)),
    };
    if !legacy && bytes.len() < HEADER {
        return None;
    }
    let header = if legacy { LEGACY_HEADER } else { HEADER };
    Some((command, header as u64 + u64::from(payload)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use Direction::{ClientToServer as C, ServerToClient as S};

    fn msg(command: &str, payload: usize) -> Vec<u8> {
        let mut m = MAGICS[0].to_vec();
        let mut name = [0u8; 12];
        name[..command.len()].copy_from_slice(command.as_bytes());
        m.extend(name);
        m.extend((payload as u32).to_le_bytes());
        m.extend([0x5d, 0xf6, 0xe0, 0xe2]);
        m.extend(std::iter::repeat_n(7u8, payload));
        m
    }

    fn read(r: &mut Bitcoin, dir: Direction, bytes: &[u8]) -> Turns {
        r.read(dir, bytes, bytes.len() as u64).expect("Bitcoin's")
    }

    fn connected() -> Bitcoin {
        let mut r = Bitcoin::default();
        assert_eq!(read(&mut r, C, &msg("version", 85)).asks, Some("version"));
        assert!(r.is());
        let answer = [msg("version", 85), msg("verack", 0)].concat();
        assert!(read(&mut r, S, &answer).answers);
        r
    }

    #[test]
    fn announcements_after_the_connecting_peers_verack_answer_nothing() {
        let mut r = connected();
        let quiet = [msg("verack", 0), msg("sendheaders", 0)].concat();
        assert_eq!(read(&mut r, C, &quiet), Turns::default());
        // Someone paid someone: the peer announces it.
        assert_eq!(read(&mut r, S, &msg("inv", 37)), Turns::default());
        assert_eq!(read(&mut r, S, &msg("addr", 31)), Turns::default());
        // The peer's own question asks nothing of the connecting peer's
        // turns; the answer to it asks nothing.
        assert_eq!(read(&mut r, S, &msg("getdata", 37)), Turns::default());
        assert_eq!(read(&mut r, C, &msg("tx", 250)), Turns::default());
    }

    #[test]
    fn a_getdata_is_answered_by_the_blocks_it_asked_for() {
        let mut r = connected();
        assert_eq!(read(&mut r, C, &msg("getdata", 73)).asks, Some("getdata"));
        assert!(!read(&mut r, S, &msg("inv", 37)).answers);
        // A block too big for one segment, then another.
        let block = msg("block", 3000);
        assert!(read(&mut r, S, &block[..1448]).answers);
        assert!(read(&mut r, S, &block[1448..]).extends);
        let next = read(&mut r, S, &msg("block", 300));
        assert!(next.extends && !next.answers);
        // A getaddr asks the peer to wait for its address relay's timer.
        let t = read(&mut r, C, &msg("getaddr", 0));
        assert_eq!((t.asks, t.waits), (Some("getaddr"), true));
        assert!(read(&mut r, S, &msg("addr", 31)).answers);
        // A ping is answered by its pong.
        assert_eq!(read(&mut r, C, &msg("ping", 8)).asks, Some("ping"));
        assert!(read(&mut r, S, &msg("pong", 8)).answers);
        assert!(!read(&mut r, S, &msg("pong", 8)).answers, "answered once");
    }

    #[test]
    fn a_2011_version_and_verack_without_checksums_are_read() {
        // nDPI's bitcoin.pcap: Bitcoin 0.3.20 (protocol 32001).
        let mut version = msg("version", 0);
        version.truncate(LEGACY_HEADER);
        version[16..20].copy_from_slice(&85u32.to_le_bytes());
        version.extend(32001u32.to_le_bytes());
        version.extend([0u8; 81]);
        let mut verack = msg("verack", 0);
        verack.truncate(LEGACY_HEADER);
        let mut r = Bitcoin::default();
        assert_eq!(read(&mut r, C, &version).asks, Some("version"));
        let answer = [version.clone(), verack.clone()].concat();
        assert!(read(&mut r, S, &answer).answers);
        // A verack alone, then an inv with its checksum.
        let both = [verack, msg("inv", 37)].concat();
        assert_eq!(read(&mut r, C, &both), Turns::default());
        assert_eq!(message(&msg("verack", 0)).map(|(_, n)| n), Some(24));
    }

    #[test]
    fn only_whole_messages_with_a_networks_magic_decide() {
        let mut other_magic = msg("version", 85);
        other_magic[0] = 0xf8;
        let mut capital = msg("version", 85);
        capital[4] = b'V';
        for first in [&b"GET / HTTP/1.1\r\n\r\n"[..], &other_magic, &capital] {
            let mut r = Bitcoin::default();
            assert!(r.read(C, first, first.len() as u64).is_none());
            assert!(r.is_not(), "{first:?}");
        }
        // The other peer's first, on any port: a capture begun on it.
        let mut r = Bitcoin::default();
        assert_eq!(read(&mut r, S, &msg("inv", 37)), Turns::default());
        assert!(r.is());
    }

    proptest::proptest! {
        #[test]
        fn any_stream_bytes_are_read_without_panicking(segments in crate::reader::any::segments()) {
            let mut r = connected();
            crate::reader::any::feed(segments, |dir, bytes, len| {
                r.read(dir, bytes, len);
            });
            proptest::prop_assert!(r.is());
        }
    }
}
