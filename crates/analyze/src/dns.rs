//! The name lookups (DNS over UDP) clients made lately: what a new
//! connection's client waited for before it could send its SYN
//! (`dns_query_lost` and `dns_search_list` in rttdoc-diagnose).
//!
//! A client resolves a server's name before it connects: its resolver
//! (glibc's, musl's, a stub like systemd-resolved's forwarding upstream)
//! sends a query per name and address type (A and AAAA, often together
//! from one socket), waits for the answers, and `getaddrinfo` returns when
//! the last one is in; `connect` follows at once. Two mechanisms make that
//! wait longer than one round trip to the resolver:
//!
//! - a query or its answer lost: the resolver waits its timeout (glibc's
//!   `options timeout:`, 5 s by default) and sends the query again;
//! - a search list: a name with fewer dots than `ndots` (1 by default,
//!   5 in a Kubernetes pod) is tried with each search domain appended
//!   first, each answered "no such name" (NXDOMAIN) or "no such record"
//!   before the name itself is asked; a name with more is asked first and
//!   the search domains after it.
//!
//! The tracker notes every query and matches its answer by client
//! address and port, resolver address and message ID (a resolver's
//! resend reuses the ID: the answer is the newest query's). When a new
//! connection's SYN is seen answered (its SYN-ACK) or the connection is
//! handed on, it takes the lookup whose answer named its server's address,
//! from the same client, its last answer at most [`LINK_NS`] before the
//! client began to connect (this SYN, or the first SYN it sent to another
//! of the answer's addresses on the same port and gave up on, at most
//! [`WINDOW_NS`] before this one): the answering query and, back from it, the queries for the same name or
//! one of its search-list forms (one name the other plus more labels),
//! each sent within [`CHAIN_GAP_NS`] of the next one taken. One lookup
//! stands for one connection (a browser's six parallel connections after
//! one lookup: the first to be answered takes it). A dual-stack host asks
//! over one family and connects over the other: a connection with no
//! lookup from its own address takes one from the capture's only address
//! of the other family that asked (a capture of one host; with several,
//! nothing is guessed).
//!
//! Bounded: per client the newest [`PER_CLIENT`] queries, over all
//! clients at most [`KEPT`], each forgotten [`WINDOW_NS`] after it was
//! sent.

use std::collections::VecDeque;
use std::net::IpAddr;

use rttdoc_wire::dns;
use rttdoc_wire::UdpDatagram;
use rustc_hash::FxHashMap;

use crate::connection::Stamp;

/// How long after its lookup's last answer a client's SYN may leave for
/// the lookup to be the one the connection waited for: `getaddrinfo`
/// returns and `connect` follows at once; a Happy Eyeballs client that tried
/// IPv6 first starts IPv4 250 ms later (RFC 8305's Connection Attempt
/// Delay), and a busy client may take a while. Later, the answer came
/// from a cache the capture does not show.
pub const LINK_NS: i64 = 1_000_000_000;

/// The longest gap between two queries of one lookup: the resolver's
/// whole wait before it tries the next name or server (glibc: `timeout`
/// 5 s, doubled on each of `attempts` 2 rounds per server; musl: 5 s in
/// all). A query sent longer before the next one taken belonged to an
/// earlier lookup.
pub const CHAIN_GAP_NS: i64 = 30_000_000_000;

/// A query seen again this soon with the same port, ID, resolver, name
/// and type is the capture's copy (resolvers' timers start at 200 ms and
/// more).
const COPY_NS: i64 = 5_000_000;

/// Queries are forgotten this long after they were sent.
pub const WINDOW_NS: i64 = 60_000_000_000;

/// Queries kept per client: a lookup with a long search list sends two
/// per name (A and AAAA), up to six names, again on a timeout.
const PER_CLIENT: usize = 64;

/// Queries kept over all clients (a resolver's own capture has many).
const KEPT: usize = 16_384;

/// Addresses kept per answer.
const ADDRESSES_KEPT: usize = 16;

/// Queries kept per lookup (the newest).
pub const LOOKUP_QUERIES_KEPT: usize = 32;

/// How long a client waits on an address before it tries the next: RFC
/// 8305's recommended least Connection Attempt Delay (Happy Eyeballs:
/// 250 ms by default, curl 200 ms; a connect timeout is seconds). A
/// connection opened sooner beside another was opened in parallel (a
/// browser's connections to a CDN pool the names share), not after
/// giving up on it.
pub const GIVE_UP_NS: i64 = 100_000_000;

/// Connection attempts kept (the newest), while any query is kept.
const ATTEMPTS: usize = 1024;

/// Failed attempts kept per lookup.
pub const ATTEMPTS_KEPT: usize = 8;

/// One query a lookup sent, and its answer if one came.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LookupQuery {
    /// The name asked, lower case, without the trailing dot.
    pub name: Box<str>,
    /// The record type asked (A: 1, AAAA: 28 ...).
    pub qtype: u16,
    /// The resolver it went to.
    pub resolver: IpAddr,
    /// The client's UDP port (one socket for A and AAAA: the same port).
    pub port: u16,
    /// The message ID.
    pub id: u16,
    /// Its frame.
    pub sent: Stamp,
    /// Its answer, if the capture has one.
    pub answer: Option<LookupAnswer>,
}

/// A query's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LookupAnswer {
    /// Its frame.
    pub at: Stamp,
    /// RCODE (0: no error, 3: no such name).
    pub rcode: u8,
    /// The A and AAAA records it held (none: the name has no record of
    /// that type, or does not exist).
    pub addresses: u16,
    /// The answer did not fit (TC): the client asks again over TCP.
    pub truncated: bool,
}

/// The lookup a connection's client made for its server's name just
/// before the SYN.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameLookup {
    /// The name whose answer held the server's address.
    pub name: Box<str>,
    /// The answer that held it.
    pub answer: Stamp,
    /// The resolver that gave that answer.
    pub resolver: IpAddr,
    /// The lookup's last answer before the SYN (an AAAA's after the A's,
    /// a resend's): `getaddrinfo` returned then, at most [`LINK_NS`]
    /// before the client began to connect.
    pub last_answer: Stamp,
    /// The lookup's queries in the order they were sent (the newest
    /// [`LOOKUP_QUERIES_KEPT`]), the answering one among them.
    pub queries: Vec<LookupQuery>,
    /// Connections to other addresses the lookup answered, on the same
    /// port, opened after its first answer and before this one's SYN and
    /// not accepted (no SYN-ACK) before it: addresses the client tried
    /// first and gave up on (the first [`ATTEMPTS_KEPT`]).
    pub failed_attempts: Vec<FailedAttempt>,
}

/// A connection the client opened to another address of the server's
/// name before this one, not accepted before this one's SYN.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FailedAttempt {
    /// Its `tcp.stream`.
    pub stream: u64,
    /// Where it went.
    pub to: crate::model::Endpoint,
    /// Its first SYN.
    pub syn: Stamp,
    /// It was accepted after all, after this connection's SYN (Happy
    /// Eyeballs' race, lost).
    pub accepted_later: bool,
}

/// A connection attempt seen while lookups were being kept.
#[derive(Debug, Clone, Copy)]
struct Attempt {
    stream: u64,
    to: crate::model::Endpoint,
    syn: Stamp,
    /// Its first SYN-ACK's frame.
    accepted: Option<u64>,
}

impl NameLookup {
    /// The first query's frame: when the client began to wait.
    pub fn first_sent(&self) -> Stamp {
        self.queries.first().map_or(self.answer, |q| q.sent)
    }

    /// The position of the first query for [`NameLookup::name`], and the
    /// other names asked before it (a search list's), each once, in the
    /// order first asked.
    pub fn names_before(&self) -> (Option<usize>, Vec<&str>) {
        let at = self.queries.iter().position(|q| q.name == self.name);
        let mut names: Vec<&str> = Vec::new();
        for q in &self.queries[..at.unwrap_or(0)] {
            if !names.contains(&&*q.name) {
                names.push(&q.name);
            }
        }
        (at, names)
    }
}

#[derive(Debug)]
struct Query {
    kept: LookupQuery,
    /// The server addresses its answer held.
    addresses: Vec<IpAddr>,
    taken: bool,
}

/// The queries seen lately, per client (module docs).
#[derive(Debug, Default)]
pub struct Lookups {
    by_client: FxHashMap<IpAddr, VecDeque<Query>>,
    /// First SYNs seen while queries were kept, in capture order: the
    /// addresses a client tried (only then: a capture without DNS keeps
    /// none, a SYN flood's cost nothing).
    attempts: VecDeque<Attempt>,
    kept: usize,
    /// When the clients were last swept of old queries (capture time).
    swept_ns: i64,
    name: String,
    /// A client's query was seen: the capture keeps name lookups (it is
    /// not one filtered to a server's TCP port).
    pub(crate) queries_seen: bool,
}

impl Lookups {
    /// A DNS datagram: a query is noted, an answer finds its query.
    pub fn datagram(&mut self, at: Stamp, d: &UdpDatagram<'_>) {
        let Ok(m) = dns::Message::new_checked(d.payload) else {
            return;
        };
        if m.opcode() != 0 {
            return;
        }
        let Some(question) = m.question() else {
            return;
        };
        if m.is_response() {
            if d.src_port == dns::PORT {
                self.answered(at, d, &m, question.qtype);
            }
        } else if d.dst_port == dns::PORT {
            self.name.clear();
            if question.name().write_lowercase(&mut self.name).is_none() {
                return;
            }
            self.asked(at, d, m.id(), question.qtype);
        }
    }

    fn asked(&mut self, at: Stamp, d: &UdpDatagram<'_>, id: u16, qtype: u16) {
        self.queries_seen = true;
        if self.kept >= KEPT {
            self.sweep(at.ts_ns);
            if self.kept >= KEPT {
                return;
            }
        }
        let queries = self.by_client.entry(d.src).or_default();
        // The capture's second copy of a query (a tap on both of a
        // router's interfaces, a driver's echo): no resolver resends
        // that soon.
        let copy = queries.back().is_some_and(|q| {
            q.kept.port == d.src_port
                && q.kept.id == id
                && q.kept.resolver == d.dst
                && q.kept.qtype == qtype
                && at.ts_ns.saturating_sub(q.kept.sent.ts_ns) < COPY_NS
                && *q.kept.name == *self.name
        });
        if copy {
            return;
        }
        while queries
            .front()
            .is_some_and(|q| at.ts_ns.saturating_sub(q.kept.sent.ts_ns) > WINDOW_NS)
            || queries.len() >= PER_CLIENT
        {
            queries.pop_front();
            self.kept -= 1;
        }
        queries.push_back(Query {
            kept: LookupQuery {
                name: self.name.as_str().into(),
                qtype,
                resolver: d.dst,
                port: d.src_port,
                id,
                sent: at,
                answer: None,
            },
            addresses: Vec::new(),
            taken: false,
        });
        self.kept += 1;
    }

    fn answered(&mut self, at: Stamp, d: &UdpDatagram<'_>, m: &dns::Message<'_>, qtype: u16) {
        let Some(queries) = self.by_client.get_mut(&d.dst) else {
            return;
        };
        let id = m.id();
        let Some(q) = queries.iter_mut().rev().find(|q| {
            q.kept.port == d.dst_port
                && q.kept.resolver == d.src
                && q.kept.id == id
                && q.kept.qtype == qtype
                && q.kept.sent.frame < at.frame
        }) else {
            return;
        };
        if q.kept.answer.is_some() {
            // A second answer (a resend's, or the capture's copy): the
            // first ended the wait.
            return;
        }
        let mut count = 0u16;
        let mut addresses = m.addresses();
        let mut kept: Vec<IpAddr> = Vec::new();
        for address in addresses.by_ref() {
            count = count.saturating_add(1);
            if kept.len() < ADDRESSES_KEPT {
                kept.push(address);
            }
        }
        if addresses.broken() && !d.cut {
            // A damaged answer (not one the snap length cut): no resolver
            // takes it, and the wait goes on.
            return;
        }
        q.addresses = kept;
        q.kept.answer = Some(LookupAnswer {
            at,
            rcode: m.rcode(),
            addresses: count,
            truncated: m.truncated(),
        });
    }

    /// A connection's first SYN, from the client to `to`: kept while
    /// lookups are.
    pub fn syn(&mut self, stream: u64, to: crate::model::Endpoint, at: Stamp) {
        if self.kept == 0 {
            return;
        }
        if self.attempts.len() == ATTEMPTS {
            self.attempts.pop_front();
        }
        self.attempts.push_back(Attempt {
            stream,
            to,
            syn: at,
            accepted: None,
        });
    }

    /// A connection's first SYN-ACK.
    pub fn accepted(&mut self, stream: u64, at: Stamp) {
        if self.attempts.is_empty() {
            return;
        }
        if let Some(a) = self.attempts.iter_mut().rev().find(|a| a.stream == stream) {
            a.accepted.get_or_insert(at.frame);
        }
    }

    /// Forgets the queries sent more than [`WINDOW_NS`] before `now_ns`,
    /// at most once a second of capture time.
    fn sweep(&mut self, now_ns: i64) {
        if now_ns.saturating_sub(self.swept_ns) < 1_000_000_000 {
            return;
        }
        self.swept_ns = now_ns;
        let mut kept = 0;
        self.by_client.retain(|_, queries| {
            queries.retain(|q| now_ns.saturating_sub(q.kept.sent.ts_ns) <= WINDOW_NS);
            kept += queries.len();
            !queries.is_empty()
        });
        self.kept = kept;
    }

    /// The lookup `client` made for `server`'s name before the SYN at
    /// `syn`, if the capture has it (module docs); its queries are not
    /// given to another connection.
    pub fn take(
        &mut self,
        stream: u64,
        client: IpAddr,
        server: crate::model::Endpoint,
        syn: Stamp,
    ) -> Option<NameLookup> {
        if self.by_client.is_empty() {
            return None;
        }
        if let Some(lookup) = self.take_from(client, stream, server, syn) {
            return Some(lookup);
        }
        // A dual-stack host asks its resolver over one family and
        // connects over the other (DNS over IPv4, the connection over
        // IPv6): when the capture's queries of that other family all come
        // from one address, they are this host's (a capture of many
        // hosts, a gateway's, has several and is not guessed at).
        let mut others = self
            .by_client
            .keys()
            .filter(|a| a.is_ipv4() != client.is_ipv4());
        let (Some(&other), None) = (others.next(), others.next()) else {
            return None;
        };
        self.take_from(other, stream, server, syn)
    }

    fn take_from(
        &mut self,
        client: IpAddr,
        stream: u64,
        server: crate::model::Endpoint,
        syn: Stamp,
    ) -> Option<NameLookup> {
        let server_port = server.port;
        let server = server.ip;
        let queries = self.by_client.get_mut(&client)?;
        let hit = queries.iter().rposition(|q| {
            !q.taken
                && q.kept.answer.is_some_and(|a| {
                    a.at.frame < syn.frame
                        && a.at.ts_ns <= syn.ts_ns
                        && syn.ts_ns.saturating_sub(a.at.ts_ns) <= WINDOW_NS
                })
                && q.addresses.contains(&server)
        })?;
        let name = queries[hit].kept.name.clone();
        let answer = queries[hit].kept.answer.expect("an answered query").at;
        let mut picked: Vec<usize> = Vec::new();
        let mut earliest = queries[hit].kept.sent.ts_ns;
        for i in (0..queries.len()).rev() {
            let q = &queries[i];
            if q.taken || q.kept.sent.frame > syn.frame || !related(&q.kept.name, &name) {
                continue;
            }
            if i > hit {
                // The same question answered again after the answer that
                // named the server, without it: a later lookup's.
                let later = q.kept.name == name
                    && q.kept.qtype == queries[hit].kept.qtype
                    && q.kept.answer.is_some_and(|a| a.addresses > 0);
                if later {
                    continue;
                }
            }
            if i < hit {
                if earliest.saturating_sub(q.kept.sent.ts_ns) > CHAIN_GAP_NS {
                    break;
                }
                // The same name answered before this lookup began: an
                // earlier lookup's.
                let done_before = q.kept.name == name
                    && q.kept
                        .answer
                        .is_some_and(|a| a.addresses > 0 && a.at.ts_ns < earliest);
                if done_before {
                    break;
                }
            }
            picked.push(i);
            earliest = earliest.min(q.kept.sent.ts_ns);
        }
        picked.reverse();
        // `getaddrinfo` returns when the last of its answers is in (an
        // AAAA sent again may come seconds after the A that named the
        // server): the SYN follows that one.
        let last_answer = picked
            .iter()
            .filter_map(|&i| queries[i].kept.answer)
            .filter(|a| a.at.frame < syn.frame)
            .map(|a| a.at)
            .max_by_key(|a| (a.ts_ns, a.frame))
            .unwrap_or(answer);
        let done = last_answer.ts_ns;
        let skip = picked.len().saturating_sub(LOOKUP_QUERIES_KEPT);
        // The addresses the lookup answered, and when the first answer
        // came: attempts to the others before this SYN.
        let first_answer = picked
            .iter()
            .filter_map(|&i| queries[i].kept.answer)
            .filter(|a| a.addresses > 0)
            .map(|a| a.at.ts_ns)
            .min()
            .unwrap_or(answer.ts_ns);
        let mut failed_attempts: Vec<FailedAttempt> = self
            .attempts
            .iter()
            .filter(|a| {
                a.stream != stream
                    && a.to.port == server_port
                    && a.to.ip != server
                    && a.syn.ts_ns >= first_answer
                    && a.syn.frame < syn.frame
                    && syn.ts_ns.saturating_sub(a.syn.ts_ns) >= GIVE_UP_NS
                    && a.accepted.is_none_or(|f| f > syn.frame)
                    && picked
                        .iter()
                        .any(|&i| queries[i].addresses.contains(&a.to.ip))
            })
            .take(ATTEMPTS_KEPT)
            .map(|a| FailedAttempt {
                stream: a.stream,
                to: a.to,
                syn: a.syn,
                accepted_later: a.accepted.is_some(),
            })
            .collect();
        failed_attempts.sort_by_key(|a| a.syn.frame);
        // The client began to connect when its first attempt left: that
        // follows the lookup at once; the attempts before this SYN are
        // the connect timeouts that followed it.
        let connecting = failed_attempts.first().map_or(syn.ts_ns, |a| a.syn.ts_ns);
        if connecting.saturating_sub(done) > LINK_NS || syn.ts_ns.saturating_sub(done) > WINDOW_NS {
            return None;
        }
        let mut lookup = NameLookup {
            name,
            answer,
            resolver: queries[hit].kept.resolver,
            last_answer,
            queries: Vec::with_capacity(picked.len() - skip),
            failed_attempts,
        };
        for (n, &i) in picked.iter().enumerate() {
            queries[i].taken = true;
            if n >= skip {
                lookup.queries.push(queries[i].kept.clone());
            }
        }
        lookup.queries.sort_by_key(|q| q.sent.frame);
        Some(lookup)
    }
}

/// Whether two names are one lookup's: the same, or one of them the
/// other with labels appended (a search domain).
pub fn related(a: &str, b: &str) -> bool {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    long.starts_with(short) && (long.len() == short.len() || long.as_bytes()[short.len()] == b'.')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stamp(frame: u64, ms: i64) -> Stamp {
        Stamp {
            frame,
            ts_ns: ms * 1_000_000,
        }
    }

    fn name_bytes(name: &str) -> Vec<u8> {
        let mut v = Vec::new();
        for l in name.split('.') {
            v.push(l.len() as u8);
            v.extend_from_slice(l.as_bytes());
        }
        v.push(0);
        v
    }

    fn message(
        id: u16,
        response: bool,
        rcode: u8,
        name: &str,
        qtype: u16,
        answer: &[[u8; 4]],
    ) -> Vec<u8> {
        let flags: u16 = if response {
            0x8180 | rcode as u16
        } else {
            0x0100
        };
        let mut m = Vec::new();
        m.extend(id.to_be_bytes());
        m.extend(flags.to_be_bytes());
        m.extend([0, 1, 0, answer.len() as u8, 0, 0, 0, 0]);
        m.extend(name_bytes(name));
        m.extend(qtype.to_be_bytes());
        m.extend([0, 1]);
        for a in answer {
            m.extend([0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 30, 0, 4]);
            m.extend(a);
        }
        m
    }

    const CLIENT: &str = "10.0.0.5";
    const RESOLVER: &str = "10.0.0.53";
    const SERVER: [u8; 4] = [192, 0, 2, 80];

    /// A message between CLIENT's `port` and RESOLVER: a query from the
    /// client, or (`to_client`) an answer to it.
    fn feed(l: &mut Lookups, at: Stamp, to_client: bool, port: u16, bytes: &[u8]) {
        let (client, resolver) = (CLIENT.parse().unwrap(), RESOLVER.parse().unwrap());
        let ((src, src_port), (dst, dst_port)) = if to_client {
            ((resolver, 53), (client, port))
        } else {
            ((client, port), (resolver, 53))
        };
        l.datagram(
            at,
            &UdpDatagram {
                src,
                dst,
                src_port,
                dst_port,
                payload: bytes,
                cut: false,
                declared_len: bytes.len(),
            },
        );
    }

    fn query(l: &mut Lookups, at: Stamp, port: u16, id: u16, name: &str, qtype: u16) {
        feed(l, at, false, port, &message(id, false, 0, name, qtype, &[]));
    }

    #[allow(clippy::too_many_arguments)]
    fn reply(
        l: &mut Lookups,
        at: Stamp,
        port: u16,
        id: u16,
        rcode: u8,
        name: &str,
        qtype: u16,
        answer: &[[u8; 4]],
    ) {
        feed(
            l,
            at,
            true,
            port,
            &message(id, true, rcode, name, qtype, answer),
        );
    }

    /// `A? api.example.com` from port 4000 at `at`, answered `answer`
    /// 1 ms (and one frame) later.
    fn resolved(l: &mut Lookups, at: Stamp, id: u16, answer: [u8; 4]) {
        query(l, at, 4000, id, "api.example.com", 1);
        let then = Stamp {
            frame: at.frame + 1,
            ts_ns: at.ts_ns + 1_000_000,
        };
        reply(l, then, 4000, id, 0, "api.example.com", 1, &[answer]);
    }

    fn take(l: &mut Lookups, syn: Stamp) -> Option<NameLookup> {
        let server = crate::model::Endpoint {
            ip: IpAddr::from(SERVER),
            port: 443,
        };
        l.take(99, CLIENT.parse().unwrap(), server, syn)
    }

    #[test]
    fn a_search_list_and_a_resend_are_one_lookup() {
        let mut l = Lookups::default();
        // An earlier lookup of the same name, long done.
        resolved(&mut l, stamp(1, 0), 1, SERVER);
        // ndots:5: the search domains first, then the name; its AAAA
        // lost and sent again 5 s later.
        query(
            &mut l,
            stamp(10, 10_000),
            4001,
            2,
            "api.example.com.default.svc.cluster.local",
            1,
        );
        query(
            &mut l,
            stamp(11, 10_000),
            4001,
            3,
            "api.example.com.default.svc.cluster.local",
            28,
        );
        reply(
            &mut l,
            stamp(12, 10_001),
            4001,
            2,
            3,
            "api.example.com.default.svc.cluster.local",
            1,
            &[],
        );
        reply(
            &mut l,
            stamp(13, 10_001),
            4001,
            3,
            3,
            "api.example.com.default.svc.cluster.local",
            28,
            &[],
        );
        // Someone else's name in between.
        query(&mut l, stamp(14, 10_002), 4002, 9, "other.example.net", 1);
        query(&mut l, stamp(15, 10_002), 4003, 4, "api.example.com", 1);
        query(&mut l, stamp(16, 10_002), 4003, 5, "api.example.com", 28);
        reply(
            &mut l,
            stamp(17, 10_003),
            4003,
            4,
            0,
            "api.example.com",
            1,
            &[SERVER],
        );
        query(&mut l, stamp(18, 15_002), 4003, 5, "api.example.com", 28);
        reply(
            &mut l,
            stamp(19, 15_003),
            4003,
            5,
            0,
            "api.example.com",
            28,
            &[],
        );
        let lookup = take(&mut l, stamp(20, 15_004)).expect("the lookup");
        assert_eq!(&*lookup.name, "api.example.com");
        assert_eq!(lookup.answer.frame, 17);
        let frames: Vec<u64> = lookup.queries.iter().map(|q| q.sent.frame).collect();
        assert_eq!(frames, vec![10, 11, 15, 16, 18]);
        // The resend got the answer (the newest query of that ID).
        assert_eq!(lookup.queries[3].answer, None);
        assert_eq!(lookup.queries[4].answer.map(|a| a.at.frame), Some(19));
        // Taken once.
        assert_eq!(take(&mut l, stamp(21, 15_005)), None);
    }

    #[test]
    fn an_answer_long_before_the_syn_or_for_another_address_is_no_lookup() {
        let mut l = Lookups::default();
        resolved(&mut l, stamp(1, 0), 1, SERVER);
        assert_eq!(take(&mut l, stamp(3, 1_500)), None);
        resolved(&mut l, stamp(4, 2_000), 2, [192, 0, 2, 81]);
        assert_eq!(take(&mut l, stamp(6, 2_002)), None);
        // An answer after the SYN.
        query(&mut l, stamp(7, 3_000), 4000, 3, "api.example.com", 1);
        assert_eq!(take(&mut l, stamp(8, 3_001)), None);
        reply(
            &mut l,
            stamp(9, 3_002),
            4000,
            3,
            0,
            "api.example.com",
            1,
            &[SERVER],
        );
        assert_eq!(take(&mut l, stamp(8, 3_001)), None);
    }

    #[test]
    fn a_dual_stack_hosts_lookup_over_ipv4_serves_its_ipv6_connection() {
        let mut l = Lookups::default();
        resolved(&mut l, stamp(1, 0), 1, SERVER);
        let v6: IpAddr = "2001:db8::5".parse().unwrap();
        let server = crate::model::Endpoint {
            ip: IpAddr::from(SERVER),
            port: 443,
        };
        assert!(l.take(7, v6, server, stamp(3, 2)).is_some());
        // Two IPv4 addresses asked: a capture of several hosts, no guess.
        let mut l = Lookups::default();
        resolved(&mut l, stamp(1, 0), 1, SERVER);
        let other = message(5, false, 0, "x.example", 1, &[]);
        l.datagram(
            stamp(3, 1),
            &UdpDatagram {
                src: "10.0.0.6".parse().unwrap(),
                dst: RESOLVER.parse().unwrap(),
                src_port: 4001,
                dst_port: 53,
                payload: &other,
                cut: false,
                declared_len: other.len(),
            },
        );
        assert_eq!(l.take(7, v6, server, stamp(4, 2)), None);
    }

    #[test]
    fn names_are_related_by_whole_labels() {
        assert!(related(
            "api.example.com",
            "api.example.com.svc.cluster.local"
        ));
        assert!(related("api.example.com.svc", "api.example.com"));
        assert!(related("a.b", "a.b"));
        assert!(!related("api.example.com", "api.example.community"));
        assert!(!related("api.example.com", "www.example.com"));
    }

    #[test]
    fn memory_stays_bounded_per_client() {
        let mut l = Lookups::default();
        for i in 0..1000u64 {
            query(
                &mut l,
                stamp(i + 1, i as i64),
                4000,
                i as u16,
                "x.example",
                1,
            );
        }
        assert_eq!(l.kept, PER_CLIENT);
    }
}
