//! Apache Kafka's protocol (brokers and their clients: the Java client,
//! librdkafka, franz-go, sarama, kafka-python): which requests ask, which
//! responses answer them, and which requests ask the broker to wait.
//!
//! Every message is a 32-bit size and that many bytes. A request's
//! header names its API (`api_key`), the API's version and a correlation
//! id; the response begins with that id, and a broker answers a
//! connection's requests in the order they came, one at a time (it reads
//! no more of a connection while a request of it is being handled). Read
//! as bytes taking turns, three things go wrong:
//!
//! - A consumer's `Fetch` asks the broker to hold its answer until
//!   `min_bytes` of records are there or `max_wait_ms` has passed (the
//!   Java client's `fetch.max.wait.ms`, 500 ms): an idle consumer's every
//!   Fetch waited half a second at the broker, which is no work of its.
//!   A group member's `JoinGroup` is held until the group's members have
//!   joined (the broker's `group.initial.rebalance.delay.ms`, 3 s, for a
//!   new group), and a follower's `SyncGroup` until the leader's
//!   assignment came; a share group's `ShareFetch` as a Fetch is. These
//!   ask the broker to wait ([`Turns::waits`]), and so does every request
//!   sent behind one of them on the connection, answered only after it.
//! - A `Produce` with `acks=0` is never answered: it asks nothing.
//! - A producer keeps up to five requests in flight: a response answers
//!   the request of its correlation id, which may be older than the turn
//!   the client's latest request began; then it is the rest of the turn
//!   before, not this one's answer.
//!
//! | client sends                       | answered by                     | waits           |
//! |------------------------------------|---------------------------------|-----------------|
//! | any request but `Produce` acks=0   | the response of its correlation id | —            |
//! | `Fetch` with `max_wait_ms` and `min_bytes` above 0 | its response    | up to max_wait_ms |
//! | `JoinGroup`, `SyncGroup`, `ShareFetch` | their responses            | the group's     |
//!
//! A connection is Kafka's when the client's first data is whole
//! requests, the first an `ApiVersions`, `Metadata` or `SaslHandshake`
//! (what every client sends first) with a readable header; or, on port
//! 9092 (or a capture begun on the connection), whole requests of known
//! APIs. Messages are followed across segments by their sizes
//! (crate::framing).

use crate::exchange::Turns;
use crate::framing::{whole_messages, Follow};
use crate::reader::Reading;
use crate::Direction;

/// Kafka's port (the brokers' default listener; IANA's).
const PORT: u16 = 9092;
/// The ports brokers serve Kafka on inside TLS: 9093 (the SSL listener
/// of Apache's and Confluent's examples, Azure Event Hubs), 9094, 9096
/// and 9098 (Amazon MSK's TLS, SASL/SCRAM and IAM listeners), and 9092
/// itself (Confluent Cloud's SASL_SSL).
pub(crate) const TLS_PORTS: [u16; 5] = [9092, 9093, 9094, 9096, 9098];
/// A message larger than this is none of Kafka's (a broker's
/// `socket.request.max.bytes` is 100 MiB; a fetch response is bounded by
/// `fetch.max.bytes`, 50 MiB).
const MAX_MESSAGE: u32 = 1 << 28;
/// A request's header before its client id: API key, version, correlation
/// id, the client id's length.
const REQUEST_HEADER: usize = 2 + 2 + 4 + 2;
/// The highest API version any API has had (Fetch's is 17 in Kafka 4).
const MAX_VERSION: i16 = 30;
/// The client's requests in flight at once are bounded: five by default
/// per connection (`max.in.flight.requests.per.connection`); a forgotten
/// one only leaves its turn unanswered.
const MAX_AWAITED: usize = 32;

/// The APIs by key (the protocol's `ApiKeys`), their names labelling
/// turns.
const APIS: [&str; 83] = [
    "Produce",
    "Fetch",
    "ListOffsets",
    "Metadata",
    "LeaderAndIsr",
    "StopReplica",
    "UpdateMetadata",
    "ControlledShutdown",
    "OffsetCommit",
    "OffsetFetch",
    "FindCoordinator",
    "JoinGroup",
    "Heartbeat",
    "LeaveGroup",
    "SyncGroup",
    "DescribeGroups",
    "ListGroups",
    "SaslHandshake",
    "ApiVersions",
    "CreateTopics",
    "DeleteTopics",
    "DeleteRecords",
    "InitProducerId",
    "OffsetForLeaderEpoch",
    "AddPartitionsToTxn",
    "AddOffsetsToTxn",
    "EndTxn",
    "WriteTxnMarkers",
    "TxnOffsetCommit",
    "DescribeAcls",
    "CreateAcls",
    "DeleteAcls",
    "DescribeConfigs",
    "AlterConfigs",
    "AlterReplicaLogDirs",
    "DescribeLogDirs",
    "SaslAuthenticate",
    "CreatePartitions",
    "CreateDelegationToken",
    "RenewDelegationToken",
    "ExpireDelegationToken",
    "DescribeDelegationToken",
    "DeleteGroups",
    "ElectLeaders",
    "IncrementalAlterConfigs",
    "AlterPartitionReassignments",
    "ListPartitionReassignments",
    "OffsetDelete",
    "DescribeClientQuotas",
    "AlterClientQuotas",
    "DescribeUserScramCredentials",
    "AlterUserScramCredentials",
    "Vote",
    "BeginQuorumEpoch",
    "EndQuorumEpoch",
    "DescribeQuorum",
    "AlterPartition",
    "UpdateFeatures",
    "Envelope",
    "FetchSnapshot",
    "DescribeCluster",
    "DescribeProducers",
    "BrokerRegistration",
    "BrokerHeartbeat",
    "UnregisterBroker",
    "DescribeTransactions",
    "ListTransactions",
    "AllocateProducerIds",
    "ConsumerGroupHeartbeat",
    "ConsumerGroupDescribe",
    "ControllerRegistration",
    "GetTelemetrySubscriptions",
    "PushTelemetry",
    "AssignReplicasToDirs",
    "ListClientMetricsResources",
    "DescribeTopicPartitions",
    "ShareGroupHeartbeat",
    "ShareGroupDescribe",
    "ShareFetch",
    "ShareAcknowledge",
    "AddRaftVoter",
    "RemoveRaftVoter",
    "UpdateRaftVoter",
];

/// The APIs read further than their header.
const PRODUCE: i16 = 0;
const FETCH: i16 = 1;
const METADATA: i16 = 3;
const JOIN_GROUP: i16 = 11;
const SYNC_GROUP: i16 = 14;
const SASL_HANDSHAKE: i16 = 17;
const API_VERSIONS: i16 = 18;
const SHARE_FETCH: i16 = 78;
/// The first versions whose requests have the flexible header (a tagged
/// field section after the client id, KIP-482) and compact strings.
const PRODUCE_FLEXIBLE: i16 = 9;
const FETCH_FLEXIBLE: i16 = 12;
/// The first Fetch version without `replica_id` before `max_wait_ms`
/// (KIP-903 moved it into a tagged field).
const FETCH_NO_REPLICA_ID: i16 = 15;

/// One connection's Kafka reading (crate::reader).
pub(crate) type Kafka = Reading<State>;

/// A request in flight: its correlation id, its place among the
/// client's requests, whether it asked the broker to wait.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Awaited {
    correlation: i32,
    number: u64,
    waits: bool,
}

/// What a Kafka connection's reading keeps.
#[derive(Debug, Clone, Default)]
pub struct State {
    follow: [Follow; 2],
    /// The client's requests in flight, oldest first.
    awaited: Vec<Awaited>,
    /// The requests' numbers, and which began the client's latest turn:
    /// answers to older ones are the rest of the turn before.
    turns: crate::reader::TurnNumbers,
    /// The client's message under way asks (a large Produce's later
    /// segments go on with it).
    asking: bool,
    /// The broker's message under way answers the turn (a large Fetch
    /// response's later segments are the rest of that answer).
    answering: bool,
}

impl Kafka {
    /// Whether `server_port` is Kafka's.
    pub(crate) fn is_port(server_port: u16) -> bool {
        server_port == PORT
    }

    /// Reads a segment's stream bytes (`head` captured, `len` in all,
    /// which includes bytes the capture missed); `None` when the
    /// connection is not Kafka's. `mid_stream`: the capture began after
    /// the connection's handshake.
    pub(crate) fn read(
        &mut self,
        dir: Direction,
        head: &[u8],
        len: u64,
        mid_stream: bool,
    ) -> Option<Turns> {
        let port = self.port;
        // (A broker never speaks first.)
        let state = self.client_first(dir, mid_stream, || {
            let whole = whole_messages(head, len, request_size);
            whole
                && parse_request(head).is_some_and(|r| {
                    let opening = matches!(r.api, API_VERSIONS | METADATA | SASL_HANDSHAKE);
                    opening || port || mid_stream
                })
        })?;
        Some(state.read(dir, head, len))
    }
}

impl State {
    fn read(&mut self, dir: Direction, head: &[u8], len: u64) -> Turns {
        let mut m = Turns::default();
        let client = dir == Direction::ClientToServer;
        let size = if client { request_size } else { response_size };
        let mut follow = self.follow[dir.index()];
        let walked = follow.walk(head, len, size, |(), bytes, _| {
            if client {
                self.request(bytes, &mut m);
            } else {
                self.response(bytes, &mut m);
            }
        });
        self.follow[dir.index()] = follow;
        if let Some(w) = walked {
            if w.continued {
                m.go_on(dir, self.asking, self.answering);
            }
            if w.cut_at.is_some() {
                // What the count lost may have asked or answered: the
                // turn under way is not followed into it.
                self.asking = false;
                self.answering = false;
            }
        }
        m
    }

    /// A request that begins at the start of `bytes` (as far as captured).
    fn request(&mut self, bytes: &[u8], m: &mut Turns) {
        let Some(r) = parse_request(bytes) else {
            // A header the capture cut: something was asked, but what
            // cannot be told.
            self.asking = false;
            return;
        };
        if r.unanswered() {
            self.asking = false;
            return;
        }
        let number = self.turns.ask(self.awaited.is_empty());
        let behind_a_wait = self.awaited.iter().any(|a| a.waits);
        let waits = r.waits();
        crate::reader::push_bounded(
            &mut self.awaited,
            Awaited {
                correlation: r.correlation,
                number,
                waits,
            },
            MAX_AWAITED,
        );
        self.asking = true;
        m.asks.get_or_insert(r.name());
        m.waits |= waits || behind_a_wait;
    }

    /// A response that begins at the start of `bytes`: it answers the
    /// request of its correlation id (and the broker answered the ones
    /// before it, in order, or they were never answered).
    fn response(&mut self, bytes: &[u8], m: &mut Turns) {
        let correlation = bytes
            .get(4..8)
            .map(|b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]));
        let found = correlation.and_then(|c| self.awaited.iter().position(|a| a.correlation == c));
        let Some(i) = found else {
            self.answering = false;
            return;
        };
        let number = self.awaited[i].number;
        self.awaited.drain(..=i);
        if self.turns.answer(number) {
            m.answers = true;
            self.answering = true;
        } else {
            // A request of the turn before (a producer's requests in
            // flight): the rest of that turn's answer, not this one's.
            m.extends = true;
            self.answering = false;
        }
    }
}

/// A request's header, and what of its body matters here.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Request {
    api: i16,
    version: i16,
    correlation: i32,
    /// Produce: the acknowledgments it asks for (0: none, no response).
    acks: Option<i16>,
    /// Fetch: how long the broker may hold it, and for how many bytes.
    max_wait_ms: Option<i32>,
    min_bytes: Option<i32>,
}

impl Request {
    fn name(&self) -> &'static str {
        usize::try_from(self.api)
            .ok()
            .and_then(|i| APIS.get(i))
            .copied()
            .unwrap_or("request")
    }

    /// A Produce with `acks=0`: the broker never answers it.
    fn unanswered(&self) -> bool {
        self.api == PRODUCE && self.acks == Some(0)
    }

    /// The broker holds the answer for an event or a timeout: a Fetch
    /// waiting for `min_bytes` up to `max_wait_ms`, a group's join and
    /// sync, a share group's fetch.
    fn waits(&self) -> bool {
        match self.api {
            FETCH => {
                self.max_wait_ms.is_some_and(|w| w > 0) && self.min_bytes.is_some_and(|b| b > 0)
            }
            JOIN_GROUP | SYNC_GROUP | SHARE_FETCH => true,
            _ => false,
        }
    }
}

/// The request at the start of `bytes`, when its header is whole and
/// reads as one (a known API, a version in range, a client id that fits
/// the message); what of the body was captured is read as far as it
/// goes.
fn parse_request(bytes: &[u8]) -> Option<Request> {
    let (_, length) = request_size(bytes)?;
    let message = bytes.get(4..length.min(bytes.len() as u64) as usize)?;
    let header = message.get(..REQUEST_HEADER)?;
    let api = i16::from_be_bytes([header[0], header[1]]);
    let version = i16::from_be_bytes([header[2], header[3]]);
    let correlation = i32::from_be_bytes([header[4], header[5], header[6], header[7]]);
    let client_id = i16::from_be_bytes([header[8], header[9]]);
    let known = usize::try_from(api).is_ok_and(|i| i < APIS.len());
    if !known || !(0..=MAX_VERSION).contains(&version) || client_id < -1 {
        return None;
    }
    let id_len = usize::try_from(client_id).unwrap_or(0);
    if (REQUEST_HEADER + id_len) as u64 > length - 4 {
        return None;
    }
    let mut r = Request {
        api,
        version,
        correlation,
        acks: None,
        max_wait_ms: None,
        min_bytes: None,
    };
    let mut body = Cursor {
        bytes: message,
        at: REQUEST_HEADER + id_len,
    };
    let flexible = match api {
        PRODUCE => version >= PRODUCE_FLEXIBLE,
        FETCH => version >= FETCH_FLEXIBLE,
        _ => return Some(r),
    };
    if flexible && !body.skip_tagged_fields() {
        return Some(r);
    }
    match api {
        PRODUCE => {
            // transactional_id (from v3), then acks.
            if version >= 3 {
                let skipped = if flexible {
                    body.skip_compact_string()
                } else {
                    body.skip_string()
                };
                if !skipped {
                    return Some(r);
                }
            }
            r.acks = body.i16();
        }
        _ => {
            if version < FETCH_NO_REPLICA_ID {
                body.i32();
            }
            r.max_wait_ms = body.i32();
            r.min_bytes = body.i32();
        }
    }
    Some(r)
}

/// A request's length (the size field's 4 bytes included), when the bytes
/// begin with a size that can be a request's: room for a header, and an
/// API key that is one when captured.
fn request_size(bytes: &[u8]) -> Option<((), u64)> {
    let size = u32::from_be_bytes(bytes.get(..4)?.try_into().ok()?);
    if !(REQUEST_HEADER as u32..=MAX_MESSAGE).contains(&size) {
        return None;
    }
    if let Some(key) = bytes.get(4..6) {
        let api = i16::from_be_bytes([key[0], key[1]]);
        if !usize::try_from(api).is_ok_and(|i| i < APIS.len()) {
            return None;
        }
    }
    Some(((), 4 + u64::from(size)))
}

/// A response's length (the size field's included): at least a
/// correlation id.
fn response_size(bytes: &[u8]) -> Option<((), u64)> {
    let size = u32::from_be_bytes(bytes.get(..4)?.try_into().ok()?);
    (4..=MAX_MESSAGE)
        .contains(&size)
        .then_some(((), 4 + u64::from(size)))
}

/// Reads a request's body field by field, `None` past what was captured.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn take<const N: usize>(&mut self) -> Option<[u8; N]> {
        let b = self.bytes.get(self.at..self.at + N)?.try_into().ok()?;
        self.at += N;
        Some(b)
    }

    fn i16(&mut self) -> Option<i16> {
        self.take().map(i16::from_be_bytes)
    }

    fn i32(&mut self) -> Option<i32> {
        self.take().map(i32::from_be_bytes)
    }

    /// An unsigned varint (the protocol's compact lengths and tags).
    fn varint(&mut self) -> Option<u64> {
        let mut value = 0u64;
        for shift in (0..35).step_by(7) {
            let [b] = self.take()?;
            value |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Some(value);
            }
        }
        None
    }

    fn skip(&mut self, n: u64) -> bool {
        match usize::try_from(n).ok().and_then(|n| self.at.checked_add(n)) {
            Some(end) if end <= self.bytes.len() => {
                self.at = end;
                true
            }
            _ => false,
        }
    }

    /// A nullable string: a 16-bit length (-1: null) and its bytes.
    fn skip_string(&mut self) -> bool {
        match self.i16() {
            Some(n) if n >= 0 => self.skip(n as u64),
            Some(-1) => true,
            _ => false,
        }
    }

    /// A compact nullable string: a varint of its length plus one (0:
    /// null) and its bytes.
    fn skip_compact_string(&mut self) -> bool {
        self.varint()
            .is_some_and(|n| self.skip(n.saturating_sub(1)))
    }

    /// A tagged field section: a varint count, then each field's tag,
    /// size and bytes.
    fn skip_tagged_fields(&mut self) -> bool {
        let Some(count) = self.varint() else {
            return false;
        };
        (0..count.min(64))
            .all(|_| self.varint().is_some() && self.varint().is_some_and(|size| self.skip(size)))
            && count <= 64
    }
}

/// Kafka's messages as clients and brokers write them, for the tests
/// here and exchange.rs's.
#[cfg(test)]
pub(crate) mod build {
    use super::{FETCH, PRODUCE};

    /// A request as the Java client writes it: size, API key, version,
    /// correlation id, client id, then `body`; flexible versions with an
    /// empty tagged field section after the client id.
    pub(crate) fn request(
        api: i16,
        version: i16,
        correlation: i32,
        flexible: bool,
        body: &[u8],
    ) -> Vec<u8> {
        let mut m = Vec::new();
        m.extend_from_slice(&api.to_be_bytes());
        m.extend_from_slice(&version.to_be_bytes());
        m.extend_from_slice(&correlation.to_be_bytes());
        let client_id = b"consumer-lab-1";
        m.extend_from_slice(&(client_id.len() as i16).to_be_bytes());
        m.extend_from_slice(client_id);
        if flexible {
            m.push(0);
        }
        m.extend_from_slice(body);
        let mut framed = (m.len() as u32).to_be_bytes().to_vec();
        framed.extend_from_slice(&m);
        framed
    }

    pub(crate) fn response(correlation: i32, body_len: usize) -> Vec<u8> {
        let mut m = ((4 + body_len) as u32).to_be_bytes().to_vec();
        m.extend_from_slice(&correlation.to_be_bytes());
        m.resize(m.len() + body_len, 0);
        m
    }

    /// A Fetch v17's body as far as it is read: max_wait_ms, min_bytes.
    pub(crate) fn fetch(correlation: i32, max_wait_ms: i32, min_bytes: i32) -> Vec<u8> {
        let mut body = max_wait_ms.to_be_bytes().to_vec();
        body.extend_from_slice(&min_bytes.to_be_bytes());
        body.extend_from_slice(&[0; 20]);
        request(FETCH, 17, correlation, true, &body)
    }

    /// A Produce v11's: no transactional id, acks, timeout.
    pub(crate) fn produce(correlation: i32, acks: i16) -> Vec<u8> {
        let mut body = vec![0];
        body.extend_from_slice(&acks.to_be_bytes());
        body.extend_from_slice(&30_000i32.to_be_bytes());
        body.extend_from_slice(&[0; 40]);
        request(PRODUCE, 11, correlation, true, &body)
    }
}

#[cfg(test)]
mod tests {
    use super::build::*;
    use super::*;
    use Direction::{ClientToServer as C, ServerToClient as S};

    fn read(k: &mut Kafka, dir: Direction, bytes: &[u8]) -> Turns {
        k.read(dir, bytes, bytes.len() as u64, false)
            .expect("Kafka's")
    }

    /// A client's start: ApiVersions, answered.
    fn connected() -> Kafka {
        let mut k = Kafka::default();
        let asked = read(&mut k, C, &request(API_VERSIONS, 4, 1, true, &[0, 0, 0]));
        assert_eq!(asked.asks, Some("ApiVersions"));
        assert!(k.is());
        assert!(read(&mut k, S, &response(1, 300)).answers);
        k
    }

    #[test]
    fn an_idle_consumers_fetch_asks_the_broker_to_wait() {
        let mut k = connected();
        let asked = read(&mut k, C, &fetch(2, 500, 1));
        assert_eq!(asked.asks, Some("Fetch"));
        assert!(asked.waits, "held up to max_wait_ms for min_bytes");
        assert!(read(&mut k, S, &response(2, 40)).answers);
        // min_bytes 0 or no wait: answered at once, the broker's time.
        for (wait, min) in [(0, 1), (500, 0)] {
            let asked = read(&mut k, C, &fetch(3, wait, min));
            assert_eq!((asked.asks, asked.waits), (Some("Fetch"), false));
            assert!(read(&mut k, S, &response(3, 40)).answers);
        }
        // An older Fetch (v11, not flexible, replica_id first).
        let mut body = (-1i32).to_be_bytes().to_vec();
        body.extend_from_slice(&500i32.to_be_bytes());
        body.extend_from_slice(&1i32.to_be_bytes());
        assert!(read(&mut k, C, &request(FETCH, 11, 4, false, &body)).waits);
    }

    #[test]
    fn a_request_behind_a_held_one_waits_with_it() {
        let mut k = connected();
        assert!(read(&mut k, C, &fetch(2, 500, 1)).waits);
        let behind = read(&mut k, C, &request(METADATA, 12, 3, true, &[0; 8]));
        assert!(behind.waits, "the broker answers it after the Fetch");
        assert!(read(&mut k, S, &response(2, 40)).answers);
        assert!(read(&mut k, S, &response(3, 40)).answers);
        // Answered: a Metadata now is the broker's time.
        assert!(!read(&mut k, C, &request(METADATA, 12, 4, true, &[0; 8])).waits);
    }

    #[test]
    fn group_joins_and_syncs_wait_for_the_group() {
        let mut k = connected();
        for (api, name) in [(JOIN_GROUP, "JoinGroup"), (SYNC_GROUP, "SyncGroup")] {
            let asked = read(&mut k, C, &request(api, 9, 5, true, &[0; 30]));
            assert_eq!((asked.asks, asked.waits), (Some(name), true));
            assert!(read(&mut k, S, &response(5, 30)).answers);
        }
        let heartbeat = read(&mut k, C, &request(12, 4, 6, true, &[0; 30]));
        assert_eq!(
            (heartbeat.asks, heartbeat.waits),
            (Some("Heartbeat"), false)
        );
    }

    #[test]
    fn a_produce_without_acks_asks_nothing() {
        let mut k = connected();
        assert_eq!(read(&mut k, C, &produce(2, 0)), Turns::default());
        let asked = read(&mut k, C, &produce(3, -1));
        assert_eq!((asked.asks, asked.waits), (Some("Produce"), false));
        // An old Produce (v2): acks first.
        let mut body = 0i16.to_be_bytes().to_vec();
        body.extend_from_slice(&[0; 10]);
        assert_eq!(
            read(&mut k, C, &request(PRODUCE, 2, 4, false, &body)),
            Turns::default()
        );
        // v3..v8: a nullable transactional id before acks.
        let mut body = 3i16.to_be_bytes().to_vec();
        body.extend_from_slice(b"txn");
        body.extend_from_slice(&1i16.to_be_bytes());
        body.extend_from_slice(&[0; 10]);
        assert!(read(&mut k, C, &request(PRODUCE, 8, 5, false, &body))
            .asks
            .is_some());
    }

    #[test]
    fn answers_to_the_turn_before_are_not_this_turns() {
        let mut k = connected();
        // Two Produce requests in flight, one turn.
        let both = [produce(2, 1), produce(3, 1)].concat();
        assert_eq!(read(&mut k, C, &both).asks, Some("Produce"));
        assert!(read(&mut k, S, &response(2, 20)).answers);
        // The client's next begins a turn; the answer to 3 is the turn
        // before's, 4's this one's.
        assert_eq!(read(&mut k, C, &produce(4, 1)).asks, Some("Produce"));
        let late = read(&mut k, S, &response(3, 20));
        assert!(late.extends && !late.answers);
        assert!(read(&mut k, S, &response(4, 20)).answers);
        // A response of no request in flight answers nothing.
        assert_eq!(read(&mut k, S, &response(99, 20)), Turns::default());
    }

    #[test]
    fn large_messages_are_followed_across_segments_and_holes() {
        let mut k = connected();
        assert!(read(&mut k, C, &fetch(2, 500, 1)).waits);
        // A 5000-byte fetch response in three segments, the middle lost.
        let answer = response(2, 5000);
        assert!(read(&mut k, S, &answer[..1448]).answers);
        assert_eq!(k.read(S, &[], 1448, false).map(|m| m.extends), Some(true));
        assert!(read(&mut k, S, &answer[2896..]).extends);
        // A large Produce's later segments go on with it.
        let produce = [produce(3, 1), vec![0; 3000]].concat();
        let mut produce = produce;
        let size = (produce.len() - 4) as u32;
        produce[..4].copy_from_slice(&size.to_be_bytes());
        assert_eq!(read(&mut k, C, &produce[..1448]).asks, Some("Produce"));
        assert!(read(&mut k, C, &produce[1448..]).continues);
        // A hole where a message began: lost until a segment is whole
        // messages.
        assert!(read(&mut k, S, &response(3, 10)).answers);
        assert_eq!(k.read(C, &[], 60, false), Some(Turns::default()));
        assert_eq!(read(&mut k, C, &[0, 0]), Turns::default());
        assert_eq!(read(&mut k, C, &fetch(9, 500, 1)).asks, Some("Fetch"));
    }

    #[test]
    fn only_a_clients_opening_request_decides_kafka() {
        let metadata = request(METADATA, 12, 1, true, &[0; 8]);
        let mut k = Kafka::default();
        assert!(k.read(C, &metadata, metadata.len() as u64, false).is_some());
        assert!(k.is());
        // A Fetch first decides only on Kafka's port or in a capture begun
        // on the connection.
        let first = fetch(7, 500, 1);
        for (port, mid_stream, is) in [
            (false, false, false),
            (true, false, true),
            (false, true, true),
        ] {
            let mut k = if port {
                Kafka::on_its_port()
            } else {
                Kafka::default()
            };
            k.read(C, &first, first.len() as u64, mid_stream);
            assert_eq!(k.is(), is, "port {port}, mid-stream {mid_stream}");
        }
        // Others' first bytes: HTTP, TLS, a size that overruns, a broker
        // that spoke first, a request cut short.
        let api_versions = request(API_VERSIONS, 3, 1, true, &[0; 4]);
        for (dir, bytes, len) in [
            (C, &b"GET / HTTP/1.1\r\n\r\n"[..], 18),
            (C, &[22, 3, 1, 0, 200, 1, 0, 0, 196][..], 205),
            (
                C,
                &api_versions[..api_versions.len() - 1],
                api_versions.len() as u64,
            ),
            (S, &response(1, 10)[..], 18),
        ] {
            let mut k = Kafka::on_its_port();
            assert!(k.read(dir, bytes, len, false).is_none());
            assert!(k.is_not(), "{bytes:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn any_stream_bytes_are_read_without_panicking(segments in crate::reader::any::segments()) {
            let mut k = connected();
            crate::reader::any::feed(segments, |dir, bytes, len| {
                k.read(dir, bytes, len, false);
            });
            proptest::prop_assert!(k.is());
        }
    }
}
