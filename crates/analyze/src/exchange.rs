//! Request/response exchanges on a connection.
//!
//! Turn-taking defines an exchange: client data opens it (the request), the
//! first server data after that is the response's first byte, and the
//! response lasts until the client speaks again. That is exactly HTTP/1.x
//! keep-alive (where request and status lines also label the exchange), and
//! a fair reading of most request/response protocols. For TLS connections the
//! TLS observer feeds application-data records instead of raw bytes.

use crate::connection::Stamp;
use crate::model::Direction;

/// Exchanges kept with full detail; later ones are only counted.
const MAX_KEPT: usize = 1000;

/// The longest a client's next piece of a request can follow what it was
/// waiting for, beyond the path's round trip: the longest a receiver may
/// delay the ACK that opens a window or releases a Nagle-held segment
/// (RFC 1122 4.2.3.2: 0.5 s; detect/causality.rs's `MAX_ACK_DELAY_NS`).
const CLIENT_PAUSE_NS: i64 = 500_000_000;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exchange {
    pub request_first: Stamp,
    pub request_last: Stamp,
    pub request_bytes: u64,
    pub response_first: Option<Stamp>,
    pub response_last: Option<Stamp>,
    pub response_bytes: u64,
    /// "GET /path" for HTTP/1.x requests.
    pub label: Option<String>,
    /// HTTP status code of the response, when visible.
    pub status: Option<u16>,
    /// The request's first segment carried its HTTP/1.1 head alone, and
    /// the head asks the server to confirm before the body is sent
    /// (`Expect: 100-continue`, RFC 9110 10.1.1): the client holds the
    /// body for an interim `100 Continue`, or until its own timer ends.
    pub expects_continue: bool,
    /// On HTTP/2 inside TLS, the request is one record the size of a
    /// WINDOW_UPDATE, RST_STREAM or PING frame (13 or 17 bytes, tls.rs):
    /// a flow-control or liveness frame when it left the moment the
    /// server's data came, not a request (a HEADERS frame that small is
    /// a rare repeat).
    pub h2_control_sized: bool,
    /// The call to an upstream the server made while this request waited
    /// for its answer, when the capture shows it (upstream.rs).
    pub upstream: Option<Box<crate::upstream::UpstreamCall>>,
    /// The host's own calls while this request waited, where none was
    /// certainly its forwarding (upstream.rs).
    pub host_calls: Option<Box<crate::model::HostCalls>>,
    /// A connection the server opened back to the client's host while
    /// this request waited (connect_back.rs: FTP's active data connection).
    pub connect_back: Option<Box<crate::connect_back::ConnectBack>>,
    /// The client's newest request on another of its connections while
    /// this one waited, begun alone: the client had begun no request
    /// anywhere in the [`crate::upstream::ASKED_ELSEWHERE_AFTER_NS`]
    /// before it, nor that long after this request's end (upstream.rs):
    /// a push channel's next message follows what the client did
    /// elsewhere, not the "request" before it.
    pub asked_elsewhere: Option<Box<crate::upstream::AskedElsewhere>>,
    /// The longest this answer can have waited in the queue of the
    /// client's downlink, by what the client received just before it
    /// (and, asked again, just after it: the bunch it came in;
    /// `PathSamples::busy_before`); 0 when nothing shows a queue.
    pub downlink_busy_ns: i64,
    /// Where that wait is more than none: the pauses in the client's
    /// downlink between the request and this answer
    /// (`PathSamples::gaps_before`).
    pub downlink_gaps: Option<Box<crate::DownlinkGaps>>,
    /// The answer began in a hole of the capture (server segments it
    /// missed, beyond what the client had when it asked): it left at
    /// some time before `response_first`, the frame that showed the hole,
    /// so how long it took is unknown.
    pub response_in_hole: bool,
    /// The first capture of the answer's bytes, when earlier than
    /// `response_first`: at a vantage past a loss, segments of the answer
    /// held behind the hole it left arrived before the re-send that filled
    /// it and delivered the answer's first byte. The server had answered
    /// by the time they left; the client could read nothing until the
    /// fill.
    pub response_seen: Option<Stamp>,
    /// The client's last re-send of bytes the server had not acknowledged
    /// while this request waited for its first answer: the server could
    /// read the request whole only once that copy arrived (a loss in an
    /// upload, its repair after the request's last new byte).
    pub request_resent: Option<Stamp>,
    /// The request asked the server to hold its answer until another
    /// client's write or a timeout (a Redis blocking command: `BLPOP`,
    /// `XREAD BLOCK`, resp.rs): the wait is the client's asking, not the
    /// server's work.
    pub asks_to_wait: bool,
    /// The request began with an HTTP/1.x request line.
    pub http: bool,
    /// HTTP/1.1 requests the client pipelined behind the first before
    /// any answer came (RFC 9112 9.3.2): their answers are this
    /// exchange's transfer, and its label says how many.
    pub pipelined: u32,
    /// The 3xx answer this request followed, when the capture shows it
    /// (redirect.rs).
    pub redirected: Option<Box<crate::redirect::FollowedRedirect>>,
    /// This request's own answer was a redirect: its `Location`, as the
    /// server wrote it (redirect.rs keeps its first 200 characters), so
    /// that a redirect that led here can name where the chain goes on.
    pub redirects_to: Option<Box<str>>,
    /// The authentication challenges this request answered with
    /// credentials, when the capture shows them (challenge.rs).
    pub challenged: Option<Box<crate::challenge::FollowedChallenge>>,
    /// The CORS preflight whose answer let this request go, when the
    /// capture shows it (preflight.rs).
    pub preflighted: Option<Box<crate::preflight::FollowedPreflight>>,
    /// The intermediary an HTTP/1.x answer's head names ([`intermediary`]:
    /// its `Via`, or a cache's `X-Cache` or `CF-Cache-Status`): a proxy or
    /// a CDN answered, and its wait holds its own fetch from the origin.
    pub via: Option<Box<str>>,
    /// The answer's last segment before its latest pause longer than
    /// [`ANSWER_PAUSE_NS`], when server data came after it
    /// ([`Exchange::answer_before_goodbye`]).
    pub before_pause: Option<Stamp>,
    /// The server's bytes since that pause.
    pub bytes_after_pause: u64,
}

impl Exchange {
    /// Server data that answers this exchange: its first byte if none came
    /// before, its last so far.
    fn answered_by(&mut self, first: Stamp, last: Stamp, len: u64) -> u8 {
        let event = if self.response_first.is_none() {
            ANSWERED
        } else {
            0
        };
        // Server data after the answer had paused long: its last segment
        // before, and what came after it (a goodbye, when the server's
        // close follows it: reuse.rs).
        match self.response_last {
            Some(before) if first.ts_ns - before.ts_ns > ANSWER_PAUSE_NS => {
                self.before_pause = Some(before);
                self.bytes_after_pause = len;
            }
            Some(_) if self.before_pause.is_some() => self.bytes_after_pause += len,
            _ => {}
        }
        self.response_first.get_or_insert(first);
        self.response_last = Some(last);
        self.response_bytes += len;
        event
    }

    /// The answer's last segment before the server's data after it was
    /// a goodbye: at most [`GOODBYE_BYTES`] after a pause longer than
    /// [`ANSWER_PAUSE_NS`], then the server's close within
    /// [`GOODBYE_FLIGHT_NS`] (an HTTP/2 server's idle timeout writes a
    /// GOAWAY and a close_notify before its FIN: nDPI's whatsappfiles.pcap
    /// stream 0, 64.7 s after its last answer). None when the answer
    /// went on to its end.
    pub(crate) fn answer_before_goodbye(&self, close: Stamp) -> Option<Stamp> {
        let last = self.response_last?;
        let before = self.before_pause?;
        (self.bytes_after_pause <= GOODBYE_BYTES && close.ts_ns - last.ts_ns <= GOODBYE_FLIGHT_NS)
            .then_some(before)
    }
}

/// What the messages starting in one segment mean for turns, told by a
/// protocol's reader (openflow.rs, mqtt.rs, postgres.rs, amqp.rs, websocket.rs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Turns {
    /// The name of the segment's first client message that asks
    /// (`CONNECT`, `SUBSCRIBE`, `WebSocket ping`...).
    pub asks: Option<&'static str>,
    /// The client's segment goes on with a question begun in an earlier
    /// one (a large message's later segments): part of that request.
    pub continues: bool,
    /// A server message that answers one of the client's open questions.
    pub answers: bool,
    /// Server messages that are the rest of the answer begun (MQTT's
    /// retained messages after a SUBACK, a WebSocket answer's later
    /// frames).
    pub extends: bool,
    /// The client's segment ends the conversation (a WebSocket CLOSE):
    /// what it asked before and was not answered never will be, and the
    /// closing question is a turn of its own.
    pub ends: bool,
    /// The client's segment holds only messages beside the turns (HTTP/2's
    /// WINDOW_UPDATE, SETTINGS and PING acknowledgments): it neither asks
    /// nor ends the turn under way, answered or not (an answer streaming
    /// in goes on after it).
    pub aside: bool,
    /// The client's question asks the server to hold its answer until an
    /// event or a timeout (Kafka's Fetch with a wait, JoinGroup), or
    /// waits behind one that does: its wait is the client's asking, not
    /// the server's work ([`Exchange::asks_to_wait`]).
    pub waits: bool,
}

impl Turns {
    /// A segment that began inside a message begun in an earlier one
    /// (framing.rs's `Walked::continued`): the client's goes on with its
    /// question when that message asked, the server's with its answer when
    /// that message answered.
    pub(crate) fn go_on(&mut self, dir: Direction, asking: bool, answering: bool) {
        match dir {
            Direction::ClientToServer => self.continues |= asking,
            Direction::ServerToClient => self.extends |= answering,
        }
    }
}

#[derive(Debug, Default)]
pub struct Exchanges {
    pub kept: Vec<Exchange>,
    /// Once a long connection's timeline is full (window.rs): the
    /// exchanges begun after it (after frame `spill_after`) and closed
    /// since its last window, for the next one's diagnosis, instead of
    /// `kept` (which keeps those begun in the timeline, however long they
    /// last: a download's one exchange is its first window's).
    pub(crate) spill: Option<Vec<Exchange>>,
    pub(crate) spill_after: u64,
    /// How many of `spill` were paired with the connections the server
    /// opened back (as `connect_backs_noted` for `kept`).
    pub(crate) spill_noted: usize,
    /// All exchanges, including those not kept.
    pub total: u32,
    pub(crate) current: Option<Exchange>,
    /// Bytes the server sent before the client's first data (banners).
    pub server_first_bytes: u64,
    /// The first segment of a server that spoke first (SMTP, FTP, POP3,
    /// IMAP, MySQL greet before the client says anything): its greeting,
    /// when the capture shows where it began (not in a hole).
    pub greeting: Option<Stamp>,
    /// A connection the server opened back to the client's host before
    /// it greeted (connect_back.rs: an ident lookup).
    pub greeting_connect_back: Option<Box<crate::connect_back::ConnectBack>>,
    /// The application protocol, when a side's first data told it.
    pub protocol: Option<crate::model::AppProtocol>,
    /// The text protocol whose greeting the server sent: its commands
    /// name the exchanges.
    text: Option<crate::commands::TextProtocol>,
    /// Whether each side (client, server) sent data yet.
    spoke: [bool; 2],
    /// The client's first data was an OpenVPN hard reset.
    openvpn_reset: bool,
    /// Server bytes that could not answer the open request (sent before it
    /// reached the server): TLS 1.3 session tickets, HTTP/2 settings ...
    pub unsolicited_bytes: u64,
    /// Round trip from the capture point to the server and back, as far as
    /// the connection has shown it so far: ~0 at a server-side capture, the
    /// RTT at a client-side one. Kept current by the connection.
    pub server_side_ns: Option<i64>,
    /// The path's round trip as far as the connection has shown it (a side
    /// of the capture point not timed yet counted as none), kept current
    /// by the connection: how long a client can take to react to the
    /// server's last packet.
    pub round_trip_ns: Option<i64>,
    /// When the server's last packet (data or a pure ACK) was captured,
    /// kept current by the connection: what a client's next write can
    /// have waited for.
    pub server_last_ns: Option<i64>,
    /// The peers speak on their own timers, neither answering the other
    /// (BGP): no exchanges are made.
    pub peer_to_peer: bool,
    /// The server listens on one of the ports Kafka is served on inside
    /// TLS (kafka.rs `TLS_PORTS`).
    pub(crate) kafka_port_tls: bool,
    /// The server listens on XMPP's client port (5222), where what is not
    /// XML is a messenger's own binary stream ([`XMPP_CLIENT_PORT`]).
    xmpp_client_port: bool,
    /// The server's port, when it is the TLS port of a protocol whose
    /// server pushes (MQTT's 8883, AMQP's 5671 ...): inside TLS, which
    /// record answers which cannot be told ([`Exchanges::inside_tls`]).
    push_port_tls: Option<u16>,
    /// OpenFlow's messages, if the connection carries them: only those
    /// that ask open a turn, only their answers answer (openflow.rs).
    pub(crate) openflow: crate::openflow::OpenFlow,
    /// MQTT's messages, if the connection carries them: only the client's
    /// questions open a turn, only their answers answer (mqtt.rs).
    pub(crate) mqtt: crate::mqtt::Mqtt,
    /// AMQP 0-9-1's methods, if the connection carries them: only the
    /// client's synchronous requests open a turn, only their `-Ok`s
    /// answer (amqp.rs).
    pub(crate) amqp: crate::amqp::Amqp,
    /// AMQP 1.0's performatives, if the connection carries them: only the
    /// client's opening performatives and unsettled messages ask, only
    /// their answers and dispositions answer (amqp10.rs).
    amqp10: crate::amqp10::Amqp10,
    /// IRC's lines, if the connection carries them: a client's messages
    /// and PONGs ask nothing, the server's relays of others' talk answer
    /// nothing (irc.rs).
    irc: crate::irc::Irc,
    /// NATS's operations, if the connection carries them: a subscriber's
    /// SUB and PONG ask nothing, the server's messages answer only a
    /// request's reply subject (nats.rs).
    nats: crate::nats::Nats,
    /// STOMP's frames, if the connection carries them: only a CONNECT and
    /// frames asking for a receipt ask; a broker's MESSAGEs answer
    /// nothing (stomp.rs).
    stomp: crate::stomp::Stomp,
    /// HTTP/2's frames in cleartext (h2c: gRPC, sidecars), if the
    /// connection carries them: only a request's HEADERS and a PING ask,
    /// only their stream's HEADERS and the PING's acknowledgment answer;
    /// flow control is beside the turns (h2c.rs).
    h2c: crate::h2c::H2c,
    /// Kafka's requests and responses, if the connection carries them:
    /// a response answers the request of its correlation id, a Produce
    /// without acks asks nothing, a Fetch asks the broker to wait
    /// (kafka.rs).
    kafka: crate::kafka::Kafka,
    /// ZooKeeper's requests and replies, if the connection carries them:
    /// a reply answers the request of its xid, a watch's notification
    /// answers nothing (zookeeper.rs).
    zookeeper: crate::zookeeper::ZooKeeper,
    /// Gearman's packets, if the connection carries them: a sleeping
    /// worker's PRE_SLEEP asks nothing and the server's NOOP that wakes
    /// it answers nothing (gearman.rs).
    gearman: crate::gearman::Gearman,
    /// XMPP's stanzas in the clear, if the connection carries them: only
    /// the stream's set-up, IQ requests and the close ask; messages and
    /// presence are pushes (xmpp.rs).
    xmpp: crate::xmpp::Xmpp,
    /// IEC 60870-5-104's APDUs, if the connection carries them: a
    /// master's S-frame asks nothing and the outstation's spontaneous
    /// reports answer nothing (iec104.rs).
    iec104: crate::iec104::Iec104,
    /// DNP3's fragments, if the connection carries them: a master's
    /// CONFIRM asks nothing and an outstation's unsolicited response
    /// answers nothing (dnp3.rs).
    dnp3: crate::dnp3::Dnp3,
    /// Bitcoin's peer-to-peer messages, if the connection carries them:
    /// only the connecting peer's questions ask, and the other's relayed
    /// announcements answer nothing (bitcoin.rs).
    bitcoin: crate::bitcoin::Bitcoin,
    /// FIX's reading: the initiator's questions answered by their
    /// answers; Heartbeats, the acceptor's TestRequests and market data
    /// answer nothing (fix.rs).
    fix: crate::fix::Fix,
    /// Every reader above found the connection is not its protocol.
    readers_refused: bool,
    /// On a PostgreSQL connection, the server's messages answer only while
    /// it owes the client a ReadyForQuery (postgres.rs).
    postgres: crate::postgres::Postgres,
    /// Once the client spoke RESP (Redis): the server's pushes, which
    /// answer nothing (resp.rs).
    resp_pushes: Option<crate::resp::Pushes>,
    /// The client asked for a MySQL binlog dump (binlog.rs): its
    /// semi-synchronous acknowledgments ask nothing.
    binlog_dump: bool,
    /// The open request asked to upgrade to WebSocket.
    upgrade_asked: bool,
    /// Each sender's side of the round trip from the capture point, from
    /// a clean handshake (client: SYN-ACK to ACK; server: SYN to
    /// SYN-ACK); zero unknown. What HTTP/2's credit reaches its sender
    /// by (h2_credit.rs).
    pub(crate) path_sides: [i64; 2],
    /// The open request asked to upgrade to HTTP/2 (`Upgrade: h2c`).
    h2c_upgrade_asked: bool,
    /// The capture began after the connection's handshake (kept current
    /// by the connection): its first data is no first message.
    pub(crate) mid_stream: bool,
    /// Once the server agreed (its `101`): the WebSocket frames, which say
    /// which ask and which answer (websocket.rs).
    websocket: Option<Box<crate::websocket::WebSocket>>,
    /// What happened to the open exchange since the tracker last looked
    /// ([`OPENED`], [`ANSWERED`]): the host's other connections may want
    /// it (upstream.rs).
    pub(crate) events: u8,
    /// How many of the kept exchanges were looked at for a connection
    /// the server opened back to the client (track.rs).
    pub(crate) connect_backs_noted: usize,
    /// The open request's [`crate::upstream::request_key`].
    pub(crate) current_key: u64,
    /// The URL the open request asked for, when its head named it
    /// (redirect.rs): what a redirect's `Location` is resolved against,
    /// and what a kept redirect may be followed by.
    pub(crate) current_asked: Option<crate::redirect::Asked>,
    /// The origin the first request that named one asked for
    /// ([`crate::redirect::Asked::origin_hash`]; 0: none yet): whose
    /// connection this is to a client that keeps them per origin
    /// (reuse.rs).
    pub(crate) first_origin: u64,
    /// The product the `User-Agent` of the first request that sent one
    /// named, and the open request's ([`agent_hash`]; 0: none): which program's
    /// connection this is (reuse.rs: an app and the system's media
    /// player on one phone keep their own).
    pub(crate) first_agent: u64,
    pub(crate) current_agent: u64,
    /// What the open request said of the connection's end
    /// ([`requested_close`]): reuse.rs keeps it with the connection's end.
    pub(crate) current_close: Option<crate::model::RequestedClose>,
    /// What the open request's answer said of it ([`answered_close`]),
    /// kept alike.
    pub(crate) current_answer_close: Option<crate::model::RequestedClose>,
    /// The open request's answer was a redirect: its `Location`, for the
    /// tracker to keep until a request follows it (taken at once).
    pub(crate) redirect: Option<crate::redirect::Location>,
    /// What the open request asked and the credentials it carried, when
    /// its head said (challenge.rs): what a challenge is kept under, and
    /// what may answer a kept one.
    pub(crate) current_retry: Option<crate::challenge::Retry>,
    /// The open request's answer was an authentication challenge, for
    /// the tracker to keep until a request answers it (taken at once).
    pub(crate) challenge: Option<crate::challenge::Challenge>,
    /// The open request was a CORS preflight (preflight.rs): what it
    /// asked permission for.
    pub(crate) current_preflight: Option<crate::preflight::Preflight>,
    /// The open preflight's answer allowed its request, for the tracker
    /// to keep until the request comes (taken at once): the answer's
    /// `Access-Control-Max-Age`.
    pub(crate) preflight_allowed: Option<Option<u32>>,
    /// The open request, in plain HTTP, a `GET` or `POST`: what it
    /// fetched to check a certificate, and its URL for people, when its
    /// head said (cert_fetch.rs). Its answer may say what it fetched
    /// instead ([`Exchanges::certificate_fetch_answered`]).
    pub(crate) current_fetch: Option<Option<(crate::model::CertificateCheck, Box<str>)>>,
    /// The open request's answer carried, by its `Content-Type`, what a
    /// client fetches to check a certificate, which the request's head
    /// did not say (taken at once by the tracker).
    pub(crate) certificate_fetch_answered: Option<crate::model::CertificateCheck>,
    /// The connection's data is inside TLS: its URLs are `https`.
    pub(crate) https: bool,
    /// The connection's SYN, when its first request left as soon as the
    /// set-up let it: the connection was opened for that request
    /// (track.rs).
    pub(crate) opened_for_first: Option<Stamp>,
    /// The highest ACK the client had sent (what it had of the server's
    /// stream), kept current by the connection.
    pub(crate) client_acked: Option<u32>,
    /// [`Exchanges::client_acked`] when the open request began.
    current_acked: Option<u32>,
    /// The client has acknowledged server bytes the capture never showed
    /// (beyond the highest it holds), kept current by the connection.
    pub(crate) client_acked_unseen: bool,
}

/// TLS ports of protocols whose servers push: MQTT (8883, IANA's
/// secure-mqtt), AMQP (5671, amqps), IRC (6697, ircs-u), XMPP's and
/// Apple's push service's 5223, STOMP's 61614 (ActiveMQ's and Artemis's),
/// and XMPP's own ports, TLS after STARTTLS (5222, a client's stream:
/// chat messages and presence pushed as others send them; 5269, servers'
/// streams to each other, each side sending on its own).
const PUSH_TLS_PORTS: [u16; 7] = [8883, 5671, 6697, 5223, 61614, 5222, 5269];

/// XMPP's client port. Besides XMPP (read in the clear by xmpp.rs,
/// after STARTTLS a push protocol inside TLS: [`PUSH_TLS_PORTS`]),
/// messengers speak their own binary XMPP there: WhatsApp's (3-byte
/// framed, `WA` and its version first, in its own Noise encryption),
/// KakaoTalk's LOCO. Their servers push messages, receipts and presence
/// as others send them, and the client acknowledges each: which frame
/// answers which cannot be told (WhatsApp's 2.1 s "think time" before a
/// push, nDPI's wa_voice.pcap), so no turns are made of a connection on
/// this port whose first data is not XML.
const XMPP_CLIENT_PORT: u16 = 5222;

/// A pause in an answer longer than any server takes between the writes
/// of one answer it is making: what follows is news (a push, a goodbye).
pub(crate) const ANSWER_PAUSE_NS: i64 = 5_000_000_000;

/// The most a goodbye carries: an HTTP/2 GOAWAY (and a PING) and a TLS
/// close_notify, in their records.
pub(crate) const GOODBYE_BYTES: u64 = 128;

/// A goodbye and the close it precedes leave together.
pub(crate) const GOODBYE_FLIGHT_NS: i64 = 1_000_000_000;

/// [`Exchanges::events`]: a request began.
pub(crate) const OPENED: u8 = 1;
/// [`Exchanges::events`]: the open request's answer began.
pub(crate) const ANSWERED: u8 = 2;
/// [`Exchanges::events`]: the server greeted.
pub(crate) const GREETED: u8 = 4;
/// [`Exchanges::events`]: HTTP/2's reader noted requests that may follow
/// a redirect, or redirects (h2c.rs `FollowUpNote`).
pub(crate) const FOLLOW_UP_NOTES: u8 = 8;
/// [`Exchanges::events`]: the TLS session has a server's ticket size to
/// look up or to note (ticket_sizes.rs).
pub(crate) const TICKET_SIZE: u8 = 16;

impl Exchanges {
    /// The exchanges of a connection whose server is on `port` (the
    /// connection swaps it with the roles, if they change).
    pub(crate) fn for_server_port(port: u16) -> Exchanges {
        let mut x = Exchanges::default();
        x.set_server_port(port);
        x
    }

    /// The server's port, when the roles are known: the readers of
    /// protocols told by it (OpenFlow, MQTT, AMQP) need it.
    pub(crate) fn set_server_port(&mut self, port: u16) {
        self.openflow.port = crate::openflow::OpenFlow::is_port(port);
        self.mqtt.port = crate::mqtt::Mqtt::is_port(port);
        self.amqp.port = crate::amqp::Amqp::is_port(port);
        self.amqp10.port = crate::amqp10::Amqp10::is_port(port);
        self.kafka.port = crate::kafka::Kafka::is_port(port);
        self.zookeeper.port = crate::zookeeper::ZooKeeper::is_port(port);
        self.iec104.port = crate::iec104::Iec104::is_port(port);
        self.push_port_tls = PUSH_TLS_PORTS.contains(&port).then_some(port);
        self.kafka_port_tls = crate::kafka::TLS_PORTS.contains(&port);
        self.xmpp_client_port = port == XMPP_CLIENT_PORT;
    }

    /// The causality check: a response leaves the server after the request
    /// reaches it, so at the capture point it shows up at least
    /// `server_side_ns` after the request (less a tenth for jitter).
    fn could_answer(&self, request: Stamp, response: Stamp) -> bool {
        match self.server_side_ns {
            Some(s) => response.ts_ns >= request.ts_ns + s - s / 10,
            None => true,
        }
    }

    /// Application data in `dir`, from frame `first` to frame `last`;
    /// `head` holds its first captured bytes (for HTTP labels), if any.
    pub fn on_data(&mut self, dir: Direction, first: Stamp, last: Stamp, len: u64, head: &[u8]) {
        if len == 0 || self.peer_to_peer {
            return;
        }
        let first_data = !std::mem::replace(&mut self.spoke[dir.index()], true);
        if first_data && is_ssh_identification(head) {
            self.protocol = Some(crate::model::AppProtocol::Ssh);
        }
        if first_data && dir == Direction::ClientToServer {
            self.openvpn_reset = is_openvpn_reset(head, &OPENVPN_CLIENT_RESETS);
        }
        // The server's hard reset answering the client's confirms it (a
        // DNS query over TCP whose ID starts with the same byte is
        // answered with that ID again).
        if first_data
            && dir == Direction::ServerToClient
            && self.openvpn_reset
            && is_openvpn_reset(head, &OPENVPN_SERVER_RESETS)
        {
            // A tunnel: each side forwards the packets of flows inside it
            // the moment they come; neither answers the other.
            self.protocol = Some(crate::model::AppProtocol::OpenVpn);
            self.no_turns();
            return;
        }
        if is_bgp_message(head) || (first_data && is_bittorrent_handshake(head)) {
            self.no_turns();
            return;
        }
        // A capture begun inside the TLS of a push protocol's port (its
        // handshake before the capture, so the tracker never saw TLS
        // start): its records are a push channel's as much as with the
        // handshake seen ([`Exchanges::inside_tls`]). Apple's push service
        // on 5223 (nDPI's skype.pcap: each notification acknowledged by
        // the phone in 1.2 ms, the next 22-44 s later, 66 s of "think
        // time").
        if first_data && self.push_port_tls.is_some() && is_tls_application_record(head) {
            self.https = true;
            self.no_turns();
            return;
        }
        if !self.readers_refused {
            if let Some(m) = self.read_messages(dir, head, len, (first, last)) {
                self.on_turns(dir, first, last, len, m);
                return;
            }
        }
        // (A capture begun inside an XMPP stream, or XML without its
        // stream header: stanzas, still read as turns.)
        if self.xmpp_client_port
            && first_data
            && !self.spoke[dir.reverse().index()]
            && self.xmpp.decided() == Some(false)
            && !head.trim_ascii_start().starts_with(b"<")
        {
            self.no_turns();
            return;
        }
        if let Some(w) = self.websocket.as_mut() {
            let frames = w.read(dir, head, len);
            self.on_turns(dir, first, last, len, frames);
            return;
        }
        match dir {
            // A replica's acknowledgment of a transaction (binlog.rs).
            Direction::ClientToServer
                if self.binlog_dump && crate::binlog::is_semisync_ack(head, len) => {}
            Direction::ClientToServer => self.ask(first, last, len, head),
            // A Redis server's push (a published message, an
            // invalidation): nobody's answer.
            Direction::ServerToClient
                if self
                    .resp_pushes
                    .as_mut()
                    .is_some_and(|p| p.only_pushes(head, len)) =>
            {
                self.unsolicited_bytes += len;
            }
            Direction::ServerToClient => {
                match self.current.as_ref().map(|c| {
                    c.response_first.is_none() && !self.could_answer(c.request_first, first)
                }) {
                    Some(true) => self.unsolicited_bytes += len,
                    Some(false) => {
                        let imap = self.text == Some(crate::commands::TextProtocol::Imap);
                        let c = self.current.as_mut().expect("matched");
                        if imap && c.response_first.is_some() && c.label.as_deref() == Some("IDLE")
                        {
                            // IMAP's IDLE is answered by its continuation
                            // (`+ idling`); what the server sends then
                            // until the client's DONE are its pushes (new
                            // mail: `* 3 EXISTS`), nobody's answer.
                            self.unsolicited_bytes += len;
                        } else if c.response_first.is_none()
                            && self.h2c_upgrade_asked
                            && http_status(head) == Some(101)
                        {
                            self.begin_h2c(first, last, len, head);
                        } else if c.response_first.is_none()
                            && self.upgrade_asked
                            && http_status(head) == Some(101)
                        {
                            self.begin_websocket(first, last, len, head);
                        } else {
                            if c.response_first.is_none() {
                                c.status = http_status(head);
                                if c.status.is_some() {
                                    c.via = intermediary(head);
                                    self.current_answer_close = answered_close(head);
                                }
                                if let (Some(status), Some(asked)) = (c.status, &self.current_asked)
                                {
                                    if crate::redirect::is_redirect_status(status) {
                                        self.redirect =
                                            crate::redirect::Location::of_response(head, asked);
                                    }
                                }
                                if let (Some(status), Some(_)) = (c.status, &self.current_retry) {
                                    if crate::challenge::is_challenge_status(status) {
                                        self.challenge =
                                            crate::challenge::Challenge::of_response(head, status);
                                    }
                                }
                                if let Some(None) = &self.current_fetch {
                                    self.certificate_fetch_answered =
                                        crate::cert_fetch::of_response(head);
                                }
                                if let (Some(status), Some(_)) = (c.status, &self.current_preflight)
                                {
                                    if crate::preflight::allows(status) {
                                        self.preflight_allowed =
                                            Some(crate::preflight::max_age_of(
                                                crate::exchange::header_value(
                                                    head,
                                                    b"access-control-max-age",
                                                ),
                                            ));
                                    }
                                }
                            }
                            self.events |= c.answered_by(first, last, len);
                        }
                    }
                    None => {
                        // (After an HTTP/2 server's preface, which answers
                        // nothing, the server has spoken: what follows it
                        // answers a request the preface's arrival withdrew.)
                        if self.server_first_bytes == 0
                            && self.unsolicited_bytes == 0
                            && self.total == 0
                        {
                            self.greeting = Some(first);
                            self.text = crate::commands::TextProtocol::from_greeting(head);
                            self.events |= GREETED;
                        }
                        self.server_first_bytes += len;
                    }
                }
            }
        }
    }

    /// HTTP/2's stalls on flow-control credit whose sender went on in
    /// the frames `frames`, taken out (h2_credit.rs).
    pub(crate) fn take_h2_credit_stalls(
        &mut self,
        frames: std::ops::RangeInclusive<u64>,
    ) -> Vec<crate::h2_credit::H2CreditStall> {
        self.h2c.take_credit_stalls(frames)
    }

    /// What HTTP/2's reader noted of redirects since last asked (h2c.rs).
    pub(crate) fn take_follow_up_notes(&mut self) -> Vec<crate::h2c::FollowUpNote> {
        self.h2c.take_follow_up_notes()
    }

    /// An HTTP/2 empty frame (tls.rs): it never begins an answer (answers
    /// begin with HEADERS), so the server's extends an answer begun and is
    /// nobody's otherwise; the client's (a SETTINGS acknowledgment, mostly)
    /// is no part of a request still unanswered, and after an answer it is
    /// taken as turn-taking takes any client data (the server's preface
    /// unrecognised and taken for an answer, it is what sets the real
    /// answer apart).
    pub(crate) fn on_empty_frame(&mut self, dir: Direction, first: Stamp, last: Stamp, len: u64) {
        let answered = self.current.as_ref().map(|c| c.response_first.is_some());
        match (dir, answered) {
            (Direction::ServerToClient, Some(true)) => {
                let c = self.current.as_mut().expect("answered");
                c.answered_by(first, last, len);
            }
            (Direction::ServerToClient, _) => self.unsolicited_bytes += len,
            // The client's is a SETTINGS acknowledgment or the END_STREAM
            // of a request already sent: a request begins with HEADERS,
            // never with an empty frame, and one under way is not made
            // longer by it.
            (Direction::ClientToServer, _) => {}
        }
    }

    /// An HTTP/2 record the size of a WINDOW_UPDATE, RST_STREAM or PING
    /// (tls.rs): data as any other, and marked when it opens a request
    /// or follows only such records in one (a PING's answer and a
    /// WINDOW_UPDATE sent together, each in a record of its own: tls2.pcap
    /// 150).
    pub(crate) fn on_control_sized(&mut self, dir: Direction, first: Stamp, last: Stamp, len: u64) {
        let total = self.total;
        let after_control = dir == Direction::ClientToServer
            && self
                .current
                .as_ref()
                .is_some_and(|c| c.h2_control_sized && c.response_first.is_none());
        self.on_data(dir, first, last, len, &[]);
        if let Some(c) = self
            .current
            .as_mut()
            .filter(|_| self.total > total || after_control)
        {
            c.h2_control_sized = true;
        }
    }

    /// The open exchange, when its request is the `bytes` that began at
    /// `frame` alone and nothing answered it, was no request (an HTTP/2
    /// client preface, once the server's shows what the connection
    /// speaks): forgotten.
    pub(crate) fn withdraw_unanswered(&mut self, frame: u64, bytes: u64) {
        let alone = self.current.as_ref().is_some_and(|c| {
            c.response_first.is_none() && c.request_first.frame == frame && c.request_bytes == bytes
        });
        if alone {
            self.current = None;
            self.total -= 1;
        }
    }

    /// The connection's two sides send on their own (BGP's peers, a
    /// tunnel's ends): what looked like requests, answers and a greeting
    /// so far were not, and none is kept.
    fn no_turns(&mut self) {
        self.peer_to_peer = true;
        self.greeting = None;
        self.greeting_connect_back = None;
        self.current = None;
        self.kept.clear();
        self.total = 0;
    }

    /// The connection's data is inside TLS. On the TLS port of a protocol
    /// whose server pushes, the server's records may answer the client's
    /// or come on their own (a broker's deliveries, which the plaintext
    /// readers tell apart: mqtt.rs, amqp.rs, irc.rs) and nothing in the
    /// records' sizes and times says which: no turns are made of it, as of
    /// a tunnel's, and the handshake is all that is timed.
    /// (On MQTT's, the broker's writes are worded as a broker's: a
    /// Mosquitto's Nagle is its `set_tcp_nodelay`.)
    pub(crate) fn inside_tls(&mut self) {
        self.https = true;
        if let Some(port) = self.push_port_tls.filter(|_| !self.peer_to_peer) {
            self.no_turns();
            if port == crate::mqtt::TLS_PORT {
                self.protocol = Some(crate::model::AppProtocol::Mqtt);
            }
        }
    }

    /// The connection's data is inside TLS whose client offered no HTTP in
    /// ALPN (`http_offered` false; `None`: the capture missed the
    /// ClientHello). On a port Kafka is served on inside TLS, a
    /// consumer's Fetch asks the broker to hold its answer up to
    /// `max_wait_ms` (kafka.rs), and in records nothing tells a held
    /// Fetch from a Produce the broker was slow to answer: no turns are
    /// made, as on a push protocol's port. (An HTTPS server on such a
    /// port, Alertmanager's 9093, is known by its client's ALPN.)
    pub(crate) fn inside_tls_without_http(&mut self, http_offered: Option<bool>) {
        if self.kafka_port_tls && http_offered != Some(true) && !self.peer_to_peer {
            self.no_turns();
        }
    }

    /// The server data that began in `frame` is no greeting, whatever it
    /// was (tls.rs: a lone record that may have been a session ticket).
    pub(crate) fn not_a_greeting(&mut self, frame: u64) {
        if self.greeting.is_some_and(|g| g.frame == frame) {
            self.greeting = None;
            self.greeting_connect_back = None;
        }
    }

    /// Whether client data at `next` follows the unanswered request `c`
    /// after a pause of the client's own: it came later than a round trip
    /// and an ACK's longest delay after both the request's last piece and
    /// the server's last packet, so nothing the server sent (an ACK that
    /// opened the window, released a Nagle-held segment, ended a zero
    /// window) let it go; the client's application wrote it when it chose
    /// (an HTTP/2 PING a minute after a SETTINGS acknowledgment, a
    /// keep-alive's byte and, seconds later, a request). What came before
    /// asked nothing the server answered, and the server's answer to what
    /// comes now is no measure of a wait that began before the pause. A
    /// body held for `100 Continue` follows its head by the client's timer
    /// and stays one request (expect_continue.rs times that wait).
    fn paused_before(&self, c: &Exchange, next: Stamp) -> bool {
        let Some(round_trip) = self.round_trip_ns else {
            return false;
        };
        let waited_from = c
            .request_last
            .ts_ns
            .max(self.server_last_ns.unwrap_or(i64::MIN));
        !c.expects_continue && next.ts_ns - waited_from > round_trip + CLIENT_PAUSE_NS
    }

    /// Whether the client, sending more, acknowledges server bytes it had
    /// not when the open request began and the capture never showed: the
    /// server answered in between (what it sent was lost to the capture),
    /// and what the client sends now is a request of its own.
    fn answered_unseen(&self) -> bool {
        self.client_acked_unseen
            && match (self.current_acked, self.client_acked) {
                (Some(then), Some(now)) => crate::seq::lt(then, now),
                _ => false,
            }
    }

    /// Client data: the request under way goes on, or a new one opens.
    fn ask(&mut self, first: Stamp, last: Stamp, len: u64, head: &[u8]) {
        let open = self.current.as_ref().filter(|c| c.response_first.is_none());
        let paused = open.is_some_and(|c| self.paused_before(c, first));
        let answered = open.is_some() && self.answered_unseen();
        if open.is_some() && !paused && !answered {
            let c = self.current.as_mut().expect("checked");
            // HTTP/2 records of a PING's answer's or a WINDOW_UPDATE's size
            // alone asked nothing: the request begins with what follows
            // them (tls2.pcap 150: a PING's answer and a WINDOW_UPDATE,
            // then 52 ms of the client's own before its HEADERS).
            if c.h2_control_sized {
                c.request_first = first;
                c.request_bytes = 0;
            }
            c.request_last = last;
            c.request_bytes += len;
            // Another HTTP request before the first's answer: pipelined.
            // (An HTTP label begins with its method and a space; a Redis
            // command's or a mail message's never does.)
            let http = c
                .label
                .as_deref()
                .is_some_and(|l| begins_request(l.as_bytes()));
            if http && begins_request(head) {
                c.pipelined += 1 + pipelined_after(head);
            }
            // More than one record: not a lone control-sized one.
            c.h2_control_sized = false;
            return;
        }
        // After a pause, what the client sends may be the rest of the
        // request it began (an HTTP/1.x head's last lines): without a
        // request line of its own it keeps that request's name. (After
        // an answer the capture lost, it is a request of its own.)
        let begun = self
            .current
            .as_ref()
            .filter(|c| paused && !answered && c.response_first.is_none())
            .and_then(|c| c.label.clone());
        // (After SMTP's DATA, what the client sends is the message.)
        let after_data = || {
            let previous = self.current.as_ref()?.label.as_deref();
            (self.text.is_some() && previous == Some("DATA")).then(|| "message".to_string())
        };
        let resp = crate::resp::command(head);
        if let Some(c) = &resp {
            self.resp_pushes.get_or_insert_default().subscribed |= c.subscribes;
        }
        let reserve = crate::beanstalk::blocking_command(head);
        let dump = crate::binlog::dump_command(head, len);
        self.binlog_dump |= dump.is_some();
        let asks_to_wait = resp.as_ref().is_some_and(|c| c.blocks) || reserve.is_some();
        let line = RequestLine::of(head);
        let http = line.as_ref().and_then(RequestLine::label);
        let is_http = http.is_some();
        self.upgrade_asked = http.is_some() && crate::websocket::asks_to_upgrade(head);
        self.h2c_upgrade_asked = http.is_some() && crate::h2c::asks_to_upgrade(head);
        // (None but after an HTTP request line.)
        let pipelined = pipelined_after(head);
        let label = http
            .or_else(|| self.text?.command(head))
            .or_else(|| resp.map(|c| c.name))
            .or_else(|| reserve.map(str::to_string))
            .or_else(|| dump.map(str::to_string))
            .or_else(after_data);
        let resumes = label.is_none() && begun.is_some();
        let label = label.or(begun);
        self.close();
        self.total += 1;
        self.events |= OPENED;
        if !resumes {
            self.current_key = line.as_ref().map_or(0, crate::upstream::request_key);
            self.redirect = None;
            self.challenge = None;
            self.preflight_allowed = None;
            self.certificate_fetch_answered = None;
            // (Certificates are fetched in plain HTTP, with GET or POST:
            // no other request pays for a URL kept.)
            self.current_fetch = line
                .filter(|l| is_http && !self.https && matches!(l.method, b"GET" | b"POST"))
                .map(|l| {
                    // (The URL only for a fetch: a page's is never shown.)
                    crate::cert_fetch::of_request(&l, head)
                        .map(|what| (what, crate::cert_fetch::url_of(&l, head)))
                });
            (
                self.current_asked,
                self.current_retry,
                self.current_preflight,
            ) = match line.filter(|_| is_http) {
                Some(line) => {
                    let asked = crate::redirect::Asked::of_request(&line, head, self.https);
                    if self.first_origin == 0 {
                        self.first_origin = asked.map_or(0, |a| a.origin_hash());
                    }
                    self.current_agent = agent_hash(head);
                    self.current_close = requested_close(&line, head);
                    self.current_answer_close = None;
                    if self.first_agent == 0 {
                        self.first_agent = self.current_agent;
                    }
                    let retry = crate::challenge::Retry::of_request(&line, head, asked.as_ref());
                    let preflight =
                        crate::preflight::Preflight::of_request(&line, head, asked.as_ref());
                    (asked, retry, preflight)
                }
                None => {
                    self.current_close = None;
                    self.current_answer_close = None;
                    (None, None, None)
                }
            };
        }
        self.current_acked = self.client_acked;
        self.current = Some(Exchange {
            request_first: first,
            request_last: last,
            request_bytes: len,
            response_first: None,
            response_last: None,
            response_bytes: 0,
            expects_continue: !resumes && label.is_some() && asks_to_continue(head),
            label,
            status: None,
            h2_control_sized: false,
            upstream: None,
            host_calls: None,
            connect_back: None,
            asked_elsewhere: None,
            downlink_busy_ns: 0,
            downlink_gaps: None,
            response_in_hole: false,
            response_seen: None,
            request_resent: None,
            // (Both need a request read: a resumed request has none.)
            asks_to_wait,
            http: is_http,
            pipelined,
            redirected: None,
            redirects_to: None,
            challenged: None,
            preflighted: None,
            via: None,
            before_pause: None,
            bytes_after_pause: 0,
        });
    }

    /// The segment as the protocol readers read it (openflow.rs, mqtt.rs,
    /// postgres.rs, amqp.rs, amqp10.rs, irc.rs, nats.rs, stomp.rs, h2c.rs,
    /// kafka.rs, zookeeper.rs, gearman.rs, xmpp.rs, iec104.rs, dnp3.rs,
    /// bitcoin.rs, fix.rs),
    /// when one found its protocol; once all have
    /// found theirs is not there, they are asked no more (a segment of
    /// an ordinary connection pays one test).
    fn read_messages(
        &mut self,
        dir: Direction,
        head: &[u8],
        len: u64,
        (first, last): (Stamp, Stamp),
    ) -> Option<Turns> {
        if let Some(m) = self.openflow.read(dir, head, len) {
            return Some(m);
        }
        if let Some(m) = self.mqtt.read(dir, head, len) {
            self.protocol = Some(crate::model::AppProtocol::Mqtt);
            return Some(m);
        }
        if let Some(m) = self.postgres.read(dir, head, len) {
            return Some(m);
        }
        if let Some(m) = self.amqp.read(dir, head, len) {
            return Some(m);
        }
        if let Some(m) = self.amqp10.read(dir, head, len, self.mid_stream) {
            return Some(m);
        }
        if let Some(m) = self.irc.read(dir, head, len) {
            return Some(m);
        }
        if let Some(m) = self.nats.read(dir, head, len) {
            return Some(m);
        }
        if let Some(m) = self.stomp.read(dir, head, len) {
            return Some(m);
        }
        if let Some(m) = self.h2c.read(
            dir,
            head,
            len,
            self.mid_stream,
            (first, last),
            self.path_sides,
        ) {
            if self.h2c.has_follow_up_notes() {
                self.events |= FOLLOW_UP_NOTES;
            }
            return Some(m);
        }
        if let Some(m) = self.kafka.read(dir, head, len, self.mid_stream) {
            return Some(m);
        }
        if let Some(m) = self.zookeeper.read(dir, head, len, self.mid_stream) {
            return Some(m);
        }
        if let Some(m) = self.gearman.read(dir, head, len) {
            return Some(m);
        }
        if let Some(m) = self.xmpp.read(dir, head, len) {
            return Some(m);
        }
        if let Some(m) = self.iec104.read(dir, head, len) {
            return Some(m);
        }
        if let Some(m) = self.dnp3.read(dir, head, len) {
            return Some(m);
        }
        if let Some(m) = self.bitcoin.read(dir, head, len) {
            return Some(m);
        }
        if let Some(m) = self.fix.read(dir, head, len) {
            return Some(m);
        }
        self.readers_refused = self.reader_decisions().iter().all(|d| *d == Some(false));
        None
    }

    /// Each reader's decision: its protocol (`Some(true)`), not, or not
    /// known yet.
    fn reader_decisions(&self) -> [Option<bool>; 17] {
        [
            self.openflow.decided(),
            self.mqtt.decided(),
            self.postgres.decided(),
            self.amqp.decided(),
            self.amqp10.decided(),
            self.irc.decided(),
            self.nats.decided(),
            self.stomp.decided(),
            self.h2c.decided(),
            self.kafka.decided(),
            self.zookeeper.decided(),
            self.gearman.decided(),
            self.xmpp.decided(),
            self.iec104.decided(),
            self.dnp3.decided(),
            self.bitcoin.decided(),
            self.fix.decided(),
        ]
    }

    /// The server's segments held behind a hole since `held` arrived
    /// before the re-send in `fill` that filled it: when that fill began
    /// the current answer, the answer was seen at `held`.
    pub(crate) fn answer_held(&mut self, fill: Stamp, held: Stamp) {
        if let Some(c) = self.current.as_mut() {
            if c.response_first == Some(fill) && held.ts_ns < fill.ts_ns {
                c.response_seen.get_or_insert(held);
            }
        }
    }

    /// The client sent again, at `at`, bytes the server had not
    /// acknowledged: the open request, still unanswered, reached the
    /// server whole no sooner than this copy.
    pub(crate) fn on_client_resend(&mut self, at: Stamp) {
        if let Some(c) = self.current.as_mut().filter(|c| c.response_first.is_none()) {
            c.request_resent = Some(at);
        }
    }

    /// `len` bytes of `dir` the capture missed, up to sequence number
    /// `end`, shown in `at`. The server's, beyond what the client had
    /// acknowledged when it sent the open request, may be the start of
    /// that request's answer, at a time the capture cannot tell: the
    /// answer is marked so (a hole the client had before it asked is the
    /// tail of an earlier answer, nobody's now; one shown before the
    /// request could reach the server held nothing sent after it). The
    /// client's are part of its request.
    pub(crate) fn on_hole(&mut self, dir: Direction, at: Stamp, len: u64, end: u32) {
        // (The readers and WebSocket follow their own messages across
        // holes.)
        if dir == Direction::ClientToServer
            || self.peer_to_peer
            || self.openflow.port
            || self.reader_decisions().contains(&Some(true))
            || self.websocket.is_some()
        {
            self.on_data(dir, at, at, len, &[]);
            return;
        }
        // (A Redis push under way is lost in it.)
        if let Some(p) = self.resp_pushes.as_mut() {
            p.lost();
        }
        // Bytes the client had before it asked, or shown too soon after the
        // request for any of them to have left after it arrived, answer
        // nothing.
        let had_it = self
            .current_acked
            .is_some_and(|acked| crate::seq::le(end, acked));
        let too_soon = self
            .current
            .as_ref()
            .is_some_and(|c| !self.could_answer(c.request_first, at));
        match self.current.as_mut() {
            Some(c) if c.response_first.is_none() && !had_it && !too_soon => {
                c.response_in_hole = true;
                self.events |= c.answered_by(at, at, len);
            }
            Some(c) if c.response_first.is_some() => {
                c.answered_by(at, at, len);
            }
            Some(_) => self.unsolicited_bytes += len,
            None => self.server_first_bytes += len,
        }
    }

    /// The server agreed to speak WebSocket: its `101` head answers the
    /// open request, and the frames after it (in this segment too) are
    /// read as such from then on.
    fn begin_websocket(&mut self, first: Stamp, last: Stamp, len: u64, head: &[u8]) {
        let end = head_end(head).map_or(len, |e| e as u64).min(len);
        let c = self.current.as_mut().expect("the upgrade's request");
        c.status = Some(101);
        self.events |= c.answered_by(first, last, end);
        let mut w = Box::<crate::websocket::WebSocket>::default();
        let frames = (end < len).then(|| {
            let after = &head[(end as usize).min(head.len())..];
            w.read(Direction::ServerToClient, after, len - end)
        });
        self.websocket = Some(w);
        if let Some(frames) = frames {
            self.on_turns(Direction::ServerToClient, first, last, len - end, frames);
        }
    }

    /// The server agreed to speak HTTP/2 (its `101` to an `Upgrade: h2c`):
    /// the request goes on as stream 1, answered by that stream's HEADERS,
    /// not by the `101`, which leaves before the server's work on it (and
    /// answers nothing); what follows the head (in this segment too) is
    /// read as frames (h2c.rs).
    fn begin_h2c(&mut self, first: Stamp, last: Stamp, len: u64, head: &[u8]) {
        let end = head_end(head).map_or(len, |e| e as u64).min(len);
        self.unsolicited_bytes += end;
        let upgraded = self
            .current
            .as_ref()
            .and_then(|c| Some((self.current_asked?, c.request_first, c.label.clone())));
        self.h2c.upgraded(upgraded);
        self.readers_refused = false;
        if end < len {
            let after = &head[(end as usize).min(head.len())..];
            if let Some(m) = self.h2c.read(
                Direction::ServerToClient,
                after,
                len - end,
                false,
                (first, last),
                self.path_sides,
            ) {
                self.on_turns(Direction::ServerToClient, first, last, len - end, m);
            }
        }
    }

    /// Data a protocol's reader read (openflow.rs, mqtt.rs, postgres.rs, amqp.rs,
    /// websocket.rs):
    /// a client question opens a turn named by it (or goes on with the one
    /// unanswered), the rest of a question is its request, other client
    /// messages ask nothing (an answered turn ends with them); the server's
    /// answer to a question is the open turn's answer, what the reader
    /// says continues it (MQTT's retained messages after a SUBACK, the
    /// answering WebSocket message's later frames) the rest of it, and the
    /// server's other messages (pushes) are nobody's answer.
    fn on_turns(&mut self, dir: Direction, first: Stamp, last: Stamp, len: u64, m: Turns) {
        match (dir, m.asks) {
            (Direction::ClientToServer, Some(name)) => {
                if m.ends {
                    self.close();
                }
                let total = self.total;
                self.ask(first, last, len, &[]);
                // (An h2c request is named by its method and path.)
                let named = self.h2c.take_name();
                if let Some(c) = self.current.as_mut().filter(|_| self.total > total) {
                    c.label = Some(named.unwrap_or_else(|| name.to_string()));
                }
                // (A question sent with one the server holds, or behind
                // it, waits with it.)
                if let Some(c) = self.current.as_mut() {
                    c.asks_to_wait |= m.waits;
                }
            }
            (Direction::ClientToServer, None) if m.aside => {}
            (Direction::ClientToServer, None) => match self.current.as_mut() {
                Some(c) if c.response_first.is_some() => self.close(),
                Some(c) if m.continues => {
                    c.request_last = last;
                    c.request_bytes += len;
                }
                _ => {}
            },
            (Direction::ServerToClient, _) => {
                let answerable = self
                    .current
                    .as_ref()
                    .is_some_and(|c| self.could_answer(c.request_first, first));
                match self.current.as_mut() {
                    Some(c) if m.answers && answerable => {
                        self.events |= c.answered_by(first, last, len);
                    }
                    Some(c) if m.extends && c.response_first.is_some() => {
                        c.answered_by(first, last, len);
                    }
                    _ => self.unsolicited_bytes += len,
                }
            }
        }
    }

    fn close(&mut self) {
        if let Some(mut c) = self.current.take() {
            let closed = match &mut self.spill {
                Some(spill) if c.request_first.frame > self.spill_after => spill,
                _ if self.kept.len() < MAX_KEPT => &mut self.kept,
                _ => return,
            };
            // The label says how many requests rode behind the first
            // (counted as they came, worded once).
            if c.pipelined > 0 {
                if let Some(label) = c.label.as_mut() {
                    label.push_str(&format!(" (+{} pipelined)", c.pipelined));
                }
            }
            closed.push(c);
        }
    }

    /// The open exchange, if any (the tracker pairs it with the host's
    /// other connections: upstream.rs).
    pub(crate) fn current_mut(&mut self) -> Option<&mut Exchange> {
        self.current.as_mut()
    }

    /// The challenges the request whose first segment is `request`
    /// followed, taken: it is challenged again (an HTTP/2 request's, in
    /// the open exchange or the last closed one).
    pub(crate) fn take_challenged_of(
        &mut self,
        request: Stamp,
    ) -> Option<crate::challenge::FollowedChallenge> {
        let spilled = self.spill.as_mut().and_then(|s| s.last_mut());
        let closed = spilled.or(self.kept.last_mut());
        [self.current.as_mut(), closed]
            .into_iter()
            .flatten()
            .find(|x| {
                x.challenged
                    .as_ref()
                    .is_some_and(|c| c.follow_up == request)
            })
            .and_then(|x| x.challenged.take())
            .map(|c| *c)
    }

    /// The newest exchange: the open one, else the last kept.
    pub(crate) fn last(&self) -> Option<&Exchange> {
        let spilled = self.spill.as_ref().and_then(|s| s.last());
        self.current.as_ref().or(spilled).or(self.kept.last())
    }

    /// Ends the last exchange (end of connection).
    pub fn finish(&mut self) {
        self.close();
    }
}

/// A BGP message (RFC 4271 4.1): 16 bytes of all ones, a length of at
/// least the 19-byte header, a type from OPEN (1) to ROUTE-REFRESH (5).
/// BGP speakers send OPENs, UPDATEs and KEEPALIVEs on their own timers and
/// as their tables change: no message is a request, none a response.
fn is_bgp_message(head: &[u8]) -> bool {
    head.len() >= 19
        && head[..16].iter().all(|&b| b == 0xff)
        && u16::from_be_bytes([head[16], head[17]]) >= 19
        && (1..=5).contains(&head[18])
}

/// BitTorrent's peer wire handshake (BEP 3): the length 19, then
/// "BitTorrent protocol", the first bytes each peer sends. After it each
/// peer announces what it has and wants when it likes (bitfield, have,
/// port, extended messages: nDPI's bittorrent.pcap, the same 14 bytes
/// sent unprompted to every peer), so one peer's message answers nothing
/// of the other's. (A piece answers a request;
/// timing a downloader's wait for one needs a reader of the messages,
/// as bitcoin.rs is for Bitcoin's.)
fn is_bittorrent_handshake(head: &[u8]) -> bool {
    head.len() >= 20 && head[0] == 19 && &head[1..20] == b"BitTorrent protocol"
}

/// A TLS record of application data (RFC 8446 5.1: content type 23, a
/// legacy version 3.1-3.4, a length up to 2^14 plus the 256 bytes of
/// expansion TLS 1.3 allows): what a connection whose handshake came
/// before the capture begins with.
fn is_tls_application_record(head: &[u8]) -> bool {
    head.len() >= 5
        && head[0] == 23
        && head[1] == 3
        && (1..=4).contains(&head[2])
        && (1..=(1 << 14) + 256).contains(&u16::from_be_bytes([head[3], head[4]]))
}

/// An SSH identification string (RFC 4253 4.2): `SSH-2.0-` (or a server
/// that speaks both versions, `SSH-1.99-`), the first bytes either side
/// sends.
fn is_ssh_identification(head: &[u8]) -> bool {
    head.starts_with(b"SSH-2.0-") || head.starts_with(b"SSH-1.99-")
}

/// OpenVPN's hard resets that open its TLS mode: the client's
/// P_CONTROL_HARD_RESET_CLIENT_V2 (7) or V3 (10, tls-crypt-v2), the
/// server's P_CONTROL_HARD_RESET_SERVER_V2 (8), each with key id 0.
const OPENVPN_CLIENT_RESETS: [u8; 2] = [7 << 3, 10 << 3];
const OPENVPN_SERVER_RESETS: [u8; 1] = [8 << 3];

/// OpenVPN over TCP (its `openvpn.h` wire format): each packet behind a
/// 16-bit length, the first byte an opcode (high 5 bits) and key id (low
/// 3), then the sender's 8-byte session id and at least a packet id. A
/// tunnel begins with the client's hard reset and the server's (the
/// tunnel's TLS handshake follows). (Static-key tunnels, deprecated,
/// carry no opcode and are not told.)
fn is_openvpn_reset(head: &[u8], opcodes: &[u8]) -> bool {
    let [a, b, op, ..] = *head else {
        return false;
    };
    let len = usize::from(u16::from_be_bytes([a, b]));
    opcodes.contains(&op) && (1 + 8 + 5..=1500).contains(&len)
}

pub(crate) const METHODS: [&str; 9] = [
    "GET", "POST", "HEAD", "PUT", "DELETE", "OPTIONS", "PATCH", "CONNECT", "TRACE",
];

/// The first line of `head` (up to its CR or LF, or all of it), when it
/// is text.
pub(crate) fn first_line(head: &[u8]) -> Option<&str> {
    let line_end = head
        .iter()
        .position(|&b| b == b'\r' || b == b'\n')
        .unwrap_or(head.len());
    std::str::from_utf8(&head[..line_end]).ok()
}

/// The HTTP/1.x requests that follow the first in `head` (a client's
/// segment that begins with a request line): each a request line right
/// after a head's blank line. (A body that holds a blank line and a
/// method's name would count too: rare, and only a label.)
fn pipelined_after(head: &[u8]) -> u32 {
    if !begins_request(head) {
        return 0;
    }
    let mut count = 0;
    let mut rest = head;
    while let Some(end) = head_end(rest) {
        rest = &rest[end..];
        if begins_request(rest) {
            count += 1;
        }
    }
    count
}

/// Where the HTTP head `bytes` begin with ends (past its blank line), when
/// the captured bytes show it.
pub(crate) fn head_end(bytes: &[u8]) -> Option<usize> {
    // (memchr's search, built once: this runs on every request's head.)
    static HEAD_END: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"\r\n\r\n"));
    HEAD_END.find(bytes).map(|i| i + 4)
}

/// The header fields of an HTTP/1.x head (`head` starts with its first
/// line), up to the blank line that ends the head: each field's name,
/// its value trimmed, and whether its line ended within the bytes (a
/// value the captured bytes cut short is not the value).
pub(crate) fn header_fields(head: &[u8]) -> impl Iterator<Item = (&[u8], &[u8], bool)> {
    head.split_inclusive(|&b| b == b'\n')
        .skip(1)
        .map(|line| {
            let ended = line.ends_with(b"\n");
            let line = line.strip_suffix(b"\n").unwrap_or(line);
            (line.strip_suffix(b"\r").unwrap_or(line), ended)
        })
        .take_while(|(line, _)| !line.is_empty())
        .filter_map(|(line, ended)| {
            let colon = line.iter().position(|&b| b == b':')?;
            Some((&line[..colon], line[colon + 1..].trim_ascii(), ended))
        })
}

/// The value of header `name` in a head (`head` starts with its first
/// line); `None` when the head ends before it, or the captured bytes end
/// inside it (a value cut short is not the value).
pub(crate) fn header_value<'a>(head: &'a [u8], name: &[u8]) -> Option<&'a [u8]> {
    header_fields(head)
        .find(|(field, _, _)| field.eq_ignore_ascii_case(name))
        .filter(|(_, _, ended)| *ended)
        .map(|(_, value, _)| value)
}

/// The hash of the product an HTTP/1.x request head's `User-Agent`
/// names first (RFC 9110 10.1.5: `product/version`, up to the first
/// space; 0: no `User-Agent`, or not captured whole). Requests naming
/// different products came from different programs (an app's own HTTP
/// client and the system's media player, `AppleCoreMedia/1.0.0`), which
/// keep their own connections. The rest of the string is not compared:
/// one program's requests may differ there (a web view's bridge appends
/// to some of its requests' agent, nDPI's alexa-app.pcapng), and every
/// browser names `Mozilla/5.0` first (two browsers are not told apart).
fn agent_hash(head: &[u8]) -> u64 {
    header_value(head, b"user-agent").map_or(0, |value| {
        use std::hash::{Hash, Hasher};
        let product = value.split(|&b| b == b' ').next().unwrap_or(value);
        let mut h = rustc_hash::FxHasher::default();
        product.hash(&mut h);
        h.finish().max(1)
    })
}

/// The longest intermediary's name kept: a `Via` lists each hop's
/// protocol and name (RFC 9110 7.6.3), a CDN's a few.
const LONGEST_VIA: usize = 80;

/// The intermediary an HTTP/1.x answer's head names: its `Via` (every
/// proxy that forwards a message adds itself, RFC 9110 7.6.3: Varnish,
/// Squid, CloudFront, Fastly) and the cache status a cache or CDN adds
/// (`X-Cache`: Squid's, Varnish's, CloudFront's, Fastly's;
/// `CF-Cache-Status`: Cloudflare's, which sends no `Via`; and `CF-RAY`,
/// the request's id at Cloudflare's edge, on every answer it passes on,
/// cached or not), each as `name: value` (at most [`LONGEST_VIA`] bytes
/// of its value), joined by `; `.
fn intermediary(head: &[u8]) -> Option<Box<str>> {
    let named: Vec<String> = [
        ("Via", &b"via"[..]),
        ("X-Cache", b"x-cache"),
        ("CF-Cache-Status", b"cf-cache-status"),
        ("CF-RAY", b"cf-ray"),
    ]
    .into_iter()
    .filter_map(|(name, field)| {
        let value = header_value(head, field)?;
        let value = String::from_utf8_lossy(&value[..value.len().min(LONGEST_VIA)]);
        let value = value.trim();
        (!value.is_empty()).then(|| format!("{name}: {value}"))
    })
    .collect();
    (!named.is_empty()).then(|| named.join("; ").into_boxed_str())
}

/// Whether `bytes` begin with an HTTP method and a space: a request
/// line's start, told without reading the line.
pub(crate) fn begins_request(bytes: &[u8]) -> bool {
    METHODS.iter().any(|m| {
        bytes
            .strip_prefix(m.as_bytes())
            .is_some_and(|r| r.first() == Some(&b' '))
    })
}

/// An HTTP/1.x request line at the start of a head: its method (one of
/// [`METHODS`]) and its target, read once for all that asks (the
/// request's name, the URL a redirect or a challenge is kept under, the
/// key a proxy's call is known by).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RequestLine<'a> {
    pub method: &'a [u8],
    /// `None` when the captured bytes end (or the line does) after the
    /// method: a head cut short.
    pub target: Option<&'a [u8]>,
    /// The line without its end: up to its CR or LF, or all of `head`.
    pub line: &'a [u8],
    /// The line's end was captured.
    pub ended: bool,
}

impl<'a> RequestLine<'a> {
    /// The request line `head` starts with: `None` without a method of
    /// HTTP's.
    pub fn of(head: &'a [u8]) -> Option<RequestLine<'a>> {
        let end = memchr::memchr2(b'\r', b'\n', head);
        let line = &head[..end.unwrap_or(head.len())];
        let mut parts = line.split(|&b| b == b' ');
        let method = parts.next()?;
        if !METHODS.iter().any(|m| m.as_bytes() == method) {
            return None;
        }
        Some(RequestLine {
            method,
            target: parts.next(),
            line,
            ended: end.is_some(),
        })
    }

    /// "GET /index.html": the request's name (its line in UTF-8).
    pub fn label(&self) -> Option<String> {
        std::str::from_utf8(self.line).ok()?;
        let text = |b| std::str::from_utf8(b).ok();
        Some(request_label(text(self.method)?, text(self.target?)?))
    }
}

/// "GET /index.html" from an HTTP/1.x request head.
pub fn http_request_line(head: &[u8]) -> Option<String> {
    RequestLine::of(head)?.label()
}

/// A request's name: its method and target, the target's first 48
/// characters.
pub(crate) fn request_label(method: &str, full: &str) -> String {
    let mut target: String = full.chars().take(48).collect();
    if full.chars().count() > 48 {
        target.push('…');
    }
    format!("{method} {target}")
}

/// What an HTTP/1.x request head said of its connection's end: a
/// `Connection` header naming `close`, or an HTTP/1.0 request line whose
/// head, as far as its first segment holds it, names no `keep-alive`
/// (nDPI's waze.pcap: the head's last CRLF came in a segment of its own;
/// connection_not_reused words it only where the server did close right
/// after the answer, as HTTP/1.0 does unless asked otherwise). Tokens
/// case-insensitive (RFC 9110 7.6.1).
fn requested_close(line: &RequestLine<'_>, head: &[u8]) -> Option<crate::model::RequestedClose> {
    close_said(head, line.ended && line.line.ends_with(b" HTTP/1.0"))
}

/// What an HTTP/1.x answer's head (its status line read) said of its
/// connection's end, as [`requested_close`] reads a request's: a
/// `Connection` header naming `close`, or an HTTP/1.0 status line whose
/// head, as far as its first segment holds it, names no `keep-alive`
/// (tcpflow's jpegs.cap: a server answering `HTTP/1.0 302` to a request
/// that asked for keep-alive, and closing), where that segment holds a
/// header line whole at least: a status line alone says nothing of the
/// headers after it (jpegs.cap 9: `HTTP/1.0 302 MOVED` alone in its
/// segment, its headers in an IP fragment the capture lacks; judged in
/// session 87).
fn answered_close(head: &[u8]) -> Option<crate::model::RequestedClose> {
    let headers_read = head
        .iter()
        .position(|&b| b == b'\n')
        .is_some_and(|end| head[end + 1..].contains(&b'\n'));
    close_said(head, head.starts_with(b"HTTP/1.0 ") && headers_read)
}

/// What an HTTP/1.x head (`http10`: its start line is HTTP/1.0's) said
/// of its connection's end: its `Connection` header naming `close`, or
/// HTTP/1.0 without `keep-alive` named. Tokens case-insensitive (RFC
/// 9110 7.6.1).
fn close_said(head: &[u8], http10: bool) -> Option<crate::model::RequestedClose> {
    use crate::model::RequestedClose;
    let tokens = header_value(head, b"connection");
    let names = |token: &[u8]| {
        tokens.is_some_and(|value| {
            value
                .split(|&b| b == b',')
                .any(|t| t.trim_ascii().eq_ignore_ascii_case(token))
        })
    };
    if names(b"close") {
        return Some(RequestedClose::ConnectionClose);
    }
    (http10 && !names(b"keep-alive")).then_some(RequestedClose::Http10)
}

/// Whether `head`, the start of a request ([`http_request_line`] read
/// its line), is an HTTP/1.1 head, whole and alone (the segment ends where
/// the head does: no body rode with it), with an `Expect: 100-continue`
/// header (names and the value case-insensitive).
fn asks_to_continue(head: &[u8]) -> bool {
    if !head.ends_with(b"\r\n\r\n") {
        return false;
    }
    let Ok(text) = std::str::from_utf8(head) else {
        return false;
    };
    let mut lines = text.split("\r\n");
    let request_line = lines.next().unwrap_or_default();
    request_line.ends_with(" HTTP/1.1")
        && lines.take_while(|l| !l.is_empty()).any(|l| {
            l.split_once(':').is_some_and(|(name, value)| {
                name.eq_ignore_ascii_case("expect")
                    && value.trim().eq_ignore_ascii_case("100-continue")
            })
        })
}

/// Status code from an HTTP/1.x status line.
pub fn http_status(head: &[u8]) -> Option<u16> {
    if head.len() < 12 || !head.starts_with(b"HTTP/1.") {
        return None;
    }
    std::str::from_utf8(&head[9..12]).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use Direction::*;

    #[test]
    fn an_answers_intermediary_is_its_via_or_a_caches_status() {
        let head = |fields: &str| format!("HTTP/1.1 200 OK\r\n{fields}\r\n");
        let of = |fields: &str| intermediary(head(fields).as_bytes()).map(String::from);
        // Varnish's, CloudFront's (Via before X-Cache), Cloudflare's.
        assert_eq!(
            of("Age: 0\r\nVia: 1.1 varnish (Varnish/7.1)\r\n").as_deref(),
            Some("Via: 1.1 varnish (Varnish/7.1)")
        );
        let cloudfront =
            "X-Cache: Miss from cloudfront\r\nVia: 1.1 abc.cloudfront.net (CloudFront)\r\n";
        assert_eq!(
            of(cloudfront).as_deref(),
            Some("Via: 1.1 abc.cloudfront.net (CloudFront); X-Cache: Miss from cloudfront")
        );
        assert_eq!(
            of("Server: cloudflare\r\nCF-Cache-Status: MISS\r\n").as_deref(),
            Some("CF-Cache-Status: MISS")
        );
        // Cloudflare in 2016, without a cache status: its ray (pcap2har's
        // http-chunked-gzip.pcap).
        assert_eq!(
            of("Server: cloudflare-nginx\r\nCF-RAY: 260a3f709d7b0761-AMS\r\n").as_deref(),
            Some("CF-RAY: 260a3f709d7b0761-AMS")
        );
        // None named; an empty value; a field the head's end cut.
        assert_eq!(of("Server: nginx\r\n"), None);
        assert_eq!(of("Via: \r\n"), None);
        assert_eq!(intermediary(b"HTTP/1.1 200 OK\r\nVia: 1.1 var"), None);
        // A long chain of hops, kept to its first bytes.
        let long = of(&format!("Via: {}\r\n", "1.1 hop, ".repeat(30))).unwrap();
        assert_eq!(long.len(), "Via: ".len() + LONGEST_VIA);
    }

    fn at(frame: u64) -> Stamp {
        Stamp {
            frame,
            ts_ns: frame as i64 * 1_000_000,
        }
    }

    /// Frame `frame`, captured at `ms` milliseconds.
    fn ms(frame: u64, ms: i64) -> Stamp {
        Stamp {
            frame,
            ts_ns: ms * 1_000_000,
        }
    }

    #[test]
    fn a_head_sent_alone_with_expect_100_continue_asks_to_continue() {
        let head =
            b"POST /up HTTP/1.1\r\nHost: x\r\nexpect:  100-Continue\r\nContent-Length: 9\r\n\r\n";
        assert!(asks_to_continue(head));
        // The body in the same segment: nothing was held.
        let mut with_body = head.to_vec();
        with_body.extend_from_slice(b"123456789");
        assert!(!asks_to_continue(&with_body));
        // Without the header, with another expectation, in HTTP/1.0, not a
        // request, or the head cut short (a snap length, a second segment).
        assert!(!asks_to_continue(b"POST /up HTTP/1.1\r\nHost: x\r\n\r\n"));
        assert!(!asks_to_continue(
            b"POST /up HTTP/1.1\r\nExpect: 200-ok\r\n\r\n"
        ));
        assert!(!asks_to_continue(
            b"POST /up HTTP/1.0\r\nExpect: 100-continue\r\n\r\n"
        ));
        assert!(!asks_to_continue(
            b"HTTP/1.1 200 OK\r\nExpect: 100-continue\r\n\r\n"
        ));
        assert!(!asks_to_continue(&head[..40]));
        // A header line after the head's end is body, not head.
        assert!(!asks_to_continue(
            b"POST /up HTTP/1.1\r\nHost: x\r\n\r\nExpect: 100-continue\r\n\r\n"
        ));
    }

    /// An HTTP/2 frame: its header and payload.
    fn h2_frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
        let mut f = (payload.len() as u32).to_be_bytes()[1..].to_vec();
        f.extend([kind, flags]);
        f.extend(stream.to_be_bytes());
        f.extend(payload);
        f
    }

    #[test]
    fn an_upgrade_to_h2c_is_answered_by_stream_1s_headers_not_the_101() {
        let mut x = Exchanges::default();
        let request = b"GET /slow HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAoAAAAAIAAAAA\r\n\r\n";
        x.on_data(
            ClientToServer,
            ms(4, 0),
            ms(4, 0),
            request.len() as u64,
            request,
        );
        // The 101 at once, with the server's SETTINGS behind it.
        let mut switching =
            b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\nConnection: Upgrade\r\n\r\n"
                .to_vec();
        switching.extend(h2_frame(4, 0, 0, &[0, 3, 0, 0, 0, 100]));
        x.on_data(
            ServerToClient,
            ms(6, 40),
            ms(6, 40),
            switching.len() as u64,
            &switching,
        );
        // The client's preface, its SETTINGS and its acknowledgment of the
        // server's: beside the turn.
        let mut preface = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
        preface.extend(h2_frame(4, 0, 0, &[]));
        preface.extend(h2_frame(4, 1, 0, &[]));
        x.on_data(
            ClientToServer,
            ms(7, 41),
            ms(7, 41),
            preface.len() as u64,
            &preface,
        );
        x.on_data(
            ServerToClient,
            ms(8, 80),
            ms(8, 80),
            9,
            &h2_frame(4, 1, 0, &[]),
        );
        // The answer on stream 1, after the server's 100 ms of work, then
        // a second request on stream 3 and its answer.
        let answer = [h2_frame(1, 4, 1, &[0x88]), h2_frame(0, 1, 1, b"done")].concat();
        x.on_data(
            ServerToClient,
            ms(9, 140),
            ms(9, 140),
            answer.len() as u64,
            &answer,
        );
        let next = h2_frame(1, 5, 3, &[0x82, 0x86, 0x84]);
        x.on_data(
            ClientToServer,
            ms(10, 150),
            ms(10, 150),
            next.len() as u64,
            &next,
        );
        let answer = h2_frame(1, 5, 3, &[0x88]);
        x.on_data(
            ServerToClient,
            ms(11, 190),
            ms(11, 190),
            answer.len() as u64,
            &answer,
        );
        x.finish();
        let turns: Vec<_> = x
            .kept
            .iter()
            .map(|e| {
                (
                    e.label.as_deref(),
                    e.request_first.frame,
                    e.response_first.map(|r| r.frame),
                )
            })
            .collect();
        assert_eq!(
            turns,
            [
                (Some("GET /slow"), 4, Some(9)),
                (Some("GET /"), 10, Some(11))
            ]
        );
        // Without the Upgrade header, the 101 is no switch to HTTP/2.
        assert!(!crate::h2c::asks_to_upgrade(
            b"GET / HTTP/1.1\r\nHost: h2c\r\n\r\n"
        ));
        assert!(crate::h2c::asks_to_upgrade(
            b"GET / HTTP/1.1\r\nupgrade: H2C\r\n\r\n"
        ));
    }

    #[test]
    fn a_request_asks_for_its_connections_close_by_header_or_by_http_1_0() {
        use crate::model::RequestedClose::{ConnectionClose, Http10};
        let asked = |head: &str| {
            let head = head.as_bytes();
            requested_close(&RequestLine::of(head).unwrap(), head)
        };
        // `Connection` tokens, case-insensitive, in a list.
        assert_eq!(
            asked("GET / HTTP/1.1\r\nConnection: close\r\n\r\n"),
            Some(ConnectionClose)
        );
        assert_eq!(
            asked("GET / HTTP/1.1\r\nconnection: TE, Close\r\n\r\n"),
            Some(ConnectionClose)
        );
        assert_eq!(
            asked("GET / HTTP/1.0\r\nConnection: close\r\n\r\n"),
            Some(ConnectionClose)
        );
        // HTTP/1.0 closes unless it asks to be kept (curl -0, ab).
        assert_eq!(asked("GET / HTTP/1.0\r\nHost: a\r\n\r\n"), Some(Http10));
        // (The head's last CRLF in a segment of its own: nDPI's waze.)
        assert_eq!(asked("GET / HTTP/1.0\r\nHost: a\r\n"), Some(Http10));
        assert_eq!(
            asked("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n"),
            None
        );
        // HTTP/1.1 keeps its connection by default; other tokens ask
        // nothing of its end; a line cut short says nothing.
        assert_eq!(asked("GET / HTTP/1.1\r\nHost: a\r\n\r\n"), None);
        assert_eq!(asked("GET / HTTP/1.1\r\nConnection: Upgrade\r\n\r\n"), None);
        assert_eq!(asked("GET / HTTP/1.1\r\nConnection: closed\r\n\r\n"), None);
        assert_eq!(asked("GET /long/path HTTP/1.0"), None);
    }

    /// An answer says its connection ends as a request asks it: by its
    /// `Connection` header, or by HTTP/1.0 without keep-alive (tcpflow's
    /// jpegs.cap: `HTTP/1.0 302`, the server's FIN on its last segment).
    #[test]
    fn an_answer_says_its_connection_ends_by_header_or_by_http_1_0() {
        use crate::model::RequestedClose::{ConnectionClose, Http10};
        let said = |head: &str| answered_close(head.as_bytes());
        assert_eq!(
            said("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n"),
            Some(ConnectionClose)
        );
        assert_eq!(said("HTTP/1.0 302 MOVED\r\nLocation: /x\r\n"), Some(Http10));
        assert_eq!(said("HTTP/1.0 200 OK\r\n\r\n"), Some(Http10));
        // A status line alone (its headers in a segment the capture
        // lacks) says nothing of them.
        assert_eq!(said("HTTP/1.0 302 MOVED"), None);
        assert_eq!(said("HTTP/1.0 302 MOVED\r\nLocat"), None);
        assert_eq!(
            said("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\n\r\n"),
            None
        );
        assert_eq!(said("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"), None);
    }

    #[test]
    fn keep_alive_requests_each_open_an_exchange() {
        let mut x = Exchanges::default();
        x.on_data(
            ClientToServer,
            at(4),
            at(4),
            80,
            b"GET /a HTTP/1.1\r\nHost: x\r\n",
        );
        x.on_data(ServerToClient, at(6), at(6), 200, b"HTTP/1.1 200 OK\r\n");
        x.on_data(ServerToClient, at(7), at(7), 1000, b"body");
        x.on_data(ClientToServer, at(9), at(9), 80, b"POST /b HTTP/1.1\r\n");
        x.on_data(ClientToServer, at(10), at(10), 500, b"form=1");
        x.on_data(
            ServerToClient,
            at(12),
            at(12),
            100,
            b"HTTP/1.1 404 Not Found\r\n",
        );
        x.finish();
        assert_eq!(x.total, 2);
        let a = &x.kept[0];
        assert_eq!(a.label.as_deref(), Some("GET /a"));
        assert_eq!(
            (
                a.response_first.unwrap().frame,
                a.response_last.unwrap().frame
            ),
            (6, 7)
        );
        assert_eq!((a.status, a.response_bytes), (Some(200), 1200));
        let b = &x.kept[1];
        assert_eq!(
            (b.request_first.frame, b.request_last.frame, b.request_bytes),
            (9, 10, 580)
        );
        assert_eq!(b.status, Some(404));
    }

    #[test]
    fn pipelined_requests_are_one_turn_whose_label_counts_them() {
        // Three requests in one segment, a fourth in the next, before any
        // answer: the server answers them in order, one transfer.
        let mut x = Exchanges::default();
        let three = b"GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\nHEAD /c HTTP/1.1\r\n\r\n";
        x.on_data(ClientToServer, at(4), at(4), three.len() as u64, three);
        x.on_data(ClientToServer, at(5), at(5), 30, b"GET /d HTTP/1.1\r\n\r\n");
        x.on_data(ServerToClient, at(7), at(7), 900, b"HTTP/1.1 200 OK\r\n");
        // Then a request of its own after the answers.
        x.on_data(ClientToServer, at(9), at(9), 30, b"GET /e HTTP/1.1\r\n\r\n");
        x.on_data(ServerToClient, at(11), at(11), 300, b"HTTP/1.1 200 OK\r\n");
        x.finish();
        let labels: Vec<_> = x.kept.iter().map(|e| e.label.as_deref()).collect();
        assert_eq!(labels, [Some("GET /a (+3 pipelined)"), Some("GET /e")]);
        assert_eq!((x.kept[0].pipelined, x.kept[1].pipelined), (3, 0));
        // A body after a head is no request, whatever it holds; a blank
        // line alone at the end neither.
        assert_eq!(
            pipelined_after(b"POST /f HTTP/1.1\r\n\r\nGETTING /x\r\n\r\n"),
            0
        );
        assert_eq!(pipelined_after(b"GET /a HTTP/1.1\r\n\r\n"), 0);
        assert_eq!(pipelined_after(b"body\r\n\r\nGET /a HTTP/1.1\r\n\r\n"), 0);
        // A Redis command answered late, then an inline `GET key` before
        // the answer: more of the same turn, not a pipelined HTTP request.
        let mut r = Exchanges::default();
        let get = b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n";
        r.on_data(ClientToServer, at(4), at(4), get.len() as u64, get);
        r.on_data(ClientToServer, at(5), at(5), 10, b"GET k2\r\n");
        r.on_data(ServerToClient, at(7), at(7), 10, b"$1\r\nv\r\n");
        r.finish();
        assert_eq!(r.kept[0].label.as_deref(), Some("GET"));
    }

    #[test]
    fn control_sized_records_alone_are_marked_and_with_a_request_are_not() {
        let mut x = Exchanges::default();
        x.on_data(ClientToServer, at(4), at(4), 300, b"");
        x.on_data(ServerToClient, at(6), at(6), 900, b"");
        // A WINDOW_UPDATE-sized record after an answer: a turn, marked.
        x.on_control_sized(ClientToServer, at(7), at(7), 30);
        x.on_data(ServerToClient, at(9), at(9), 900, b"");
        // One that a request's HEADERS follows: the request's, unmarked.
        x.on_control_sized(ClientToServer, at(10), at(10), 30);
        x.on_data(ClientToServer, at(11), at(11), 300, b"");
        x.on_data(ServerToClient, at(13), at(13), 900, b"");
        // A PING's answer and a WINDOW_UPDATE, a record each: marked.
        x.on_control_sized(ClientToServer, at(14), at(14), 34);
        x.on_control_sized(ClientToServer, at(14), at(14), 30);
        x.on_data(ServerToClient, at(16), at(16), 900, b"");
        // The same pair with a request's HEADERS after it: unmarked, the
        // request beginning at the HEADERS, and a control-sized record
        // after the HEADERS does not mark it.
        x.on_control_sized(ClientToServer, at(17), at(17), 34);
        x.on_data(ClientToServer, at(18), at(18), 300, b"");
        x.on_control_sized(ClientToServer, at(18), at(18), 30);
        x.on_data(ServerToClient, at(20), at(20), 900, b"");
        x.finish();
        let marked: Vec<bool> = x.kept.iter().map(|e| e.h2_control_sized).collect();
        assert_eq!(marked, vec![false, true, false, true, false]);
        assert_eq!(x.kept[4].request_first, at(18));
        assert_eq!(x.kept[4].request_bytes, 330);
    }

    /// The kept turns: the request's first frame, the answer's (0: none)
    /// and the label.
    fn turns(x: &Exchanges) -> Vec<(u64, u64, Option<&str>)> {
        x.kept
            .iter()
            .map(|e| {
                let answer = e.response_first.map_or(0, |a| a.frame);
                (e.request_first.frame, answer, e.label.as_deref())
            })
            .collect()
    }

    #[test]
    fn an_openflow_switchs_echo_request_is_a_turn_named_by_it() {
        // HELLO both ways, the controller's FEATURES_REQUEST and the
        // switch's reply (no turn), then the switch's ECHO_REQUEST and
        // the controller's ECHO_REPLY of its transaction.
        let of = |kind: u8, xid: u8| [4, kind, 0, 8, 0, 0, 0, xid];
        let mut x = Exchanges::for_server_port(6653);
        x.on_data(ClientToServer, at(4), at(4), 8, &of(0, 1));
        x.on_data(ServerToClient, at(5), at(5), 8, &of(0, 1));
        x.on_data(ServerToClient, at(6), at(6), 8, &of(5, 2));
        x.on_data(ClientToServer, at(7), at(7), 8, &of(6, 2));
        x.on_data(ClientToServer, at(9), at(9), 8, &of(2, 3));
        x.on_data(ServerToClient, at(11), at(11), 8, &of(3, 3));
        x.finish();
        let turns = turns(&x);
        assert_eq!(turns, vec![(9, 11, Some("ECHO_REQUEST"))]);
    }

    #[test]
    fn an_amqp_consumers_acks_ask_nothing_and_deliveries_answer_nothing() {
        // RabbitMQ's frames: type, channel, size, payload, 0xCE.
        let method =
            |channel: u8, class: u8, id: u8| vec![1, 0, channel, 0, 0, 0, 4, 0, class, 0, id, 0xce];
        let mut x = Exchanges::for_server_port(5672);
        x.on_data(ClientToServer, at(4), at(4), 8, b"AMQP\x00\x00\x09\x01");
        x.on_data(ServerToClient, at(6), at(6), 12, &method(0, 10, 10));
        x.on_data(ClientToServer, at(8), at(8), 12, &method(1, 60, 20));
        x.on_data(ServerToClient, at(10), at(10), 12, &method(1, 60, 21));
        // A delivery, its Basic.Ack, a delivery a second later.
        x.on_data(ServerToClient, at(12), at(12), 12, &method(1, 60, 60));
        x.on_data(ClientToServer, at(13), at(13), 12, &method(1, 60, 80));
        x.on_data(ServerToClient, at(1000), at(1000), 12, &method(1, 60, 60));
        x.finish();
        let turns = turns(&x);
        assert_eq!(
            turns,
            vec![
                (4, 6, Some("protocol header")),
                (8, 10, Some("Basic.Consume"))
            ]
        );
        assert_eq!(x.unsolicited_bytes, 24);
        assert!(!x.readers_refused);
        // An HTTP connection: every reader has said no after its first
        // data, and is asked no more.
        let mut x = Exchanges::for_server_port(80);
        x.on_data(ClientToServer, at(4), at(4), 16, b"GET / HTTP/1.1\r\n");
        assert!(x.readers_refused);
    }

    #[test]
    fn inside_tls_a_push_protocols_records_make_no_turns() {
        // A subscriber's acknowledgment and the broker's next push, a
        // second later: on MQTT's TLS port no turn; on HTTPS's, a turn.
        for (port, turns) in [(8883, 0), (5671, 0), (5222, 0), (443, 1)] {
            let mut x = Exchanges::for_server_port(port);
            x.inside_tls();
            x.on_data(ClientToServer, at(4), at(4), 26, b"");
            x.on_data(ServerToClient, at(1000), at(1000), 40, b"");
            x.finish();
            assert_eq!(x.kept.len(), turns, "port {port}");
            let mqtt = x.protocol == Some(crate::model::AppProtocol::Mqtt);
            assert_eq!(mqtt, port == 8883, "port {port}");
        }
    }

    #[test]
    fn inside_tls_on_kafkas_ports_records_make_no_turns_unless_http_was_offered() {
        // A client record and the server's next, half a second later (a
        // held Fetch, or a slow answer: records do not tell).
        for (port, http_offered, turns) in [
            (9093, Some(false), 0),
            (9092, None, 0),
            (9098, Some(false), 0),
            (9093, Some(true), 1),
            (443, Some(false), 1),
            (8443, None, 1),
        ] {
            let mut x = Exchanges::for_server_port(port);
            x.inside_tls();
            x.inside_tls_without_http(http_offered);
            x.on_data(ClientToServer, at(4), at(4), 70, b"");
            x.on_data(ServerToClient, at(504), at(504), 40, b"");
            x.finish();
            assert_eq!(x.kept.len(), turns, "port {port}, HTTP {http_offered:?}");
        }
    }

    #[test]
    fn a_clients_empty_frame_never_opens_a_request() {
        // A request answered, then the client's SETTINGS acknowledgment
        // (an empty frame): no turn of its own, and the server's next data
        // goes on answering.
        let mut x = Exchanges::default();
        x.on_data(ClientToServer, at(4), at(4), 300, b"");
        x.on_data(ServerToClient, at(6), at(6), 60, b"");
        x.on_empty_frame(ClientToServer, at(7), at(7), 26);
        x.on_data(ServerToClient, at(9), at(9), 900, b"");
        // Nor does one lengthen a request under way.
        x.on_data(ClientToServer, at(10), at(10), 300, b"");
        x.on_empty_frame(ClientToServer, at(11), at(11), 26);
        x.on_data(ServerToClient, at(13), at(13), 900, b"");
        x.finish();
        let turns: Vec<(u64, u64, u64)> = x
            .kept
            .iter()
            .map(|e| {
                (
                    e.request_first.frame,
                    e.request_last.frame,
                    e.response_first.unwrap().frame,
                )
            })
            .collect();
        assert_eq!(turns, vec![(4, 4, 6), (10, 10, 13)]);
    }

    #[test]
    fn a_lone_unanswered_request_can_be_withdrawn_and_nothing_else() {
        // A client preface alone, then the server's preface shows it asked
        // nothing.
        let mut x = Exchanges::default();
        x.on_data(ClientToServer, at(4), at(4), 104, b"");
        x.withdraw_unanswered(4, 104);
        assert_eq!(x.total, 0);
        // Followed by a request's HEADERS: the turn stands.
        x.on_data(ClientToServer, at(5), at(5), 104, b"");
        x.on_data(ClientToServer, at(6), at(6), 300, b"");
        x.withdraw_unanswered(5, 104);
        // Answered: it stands.
        x.on_data(ServerToClient, at(8), at(8), 900, b"");
        x.withdraw_unanswered(5, 404);
        x.finish();
        assert_eq!(x.total, 1);
        assert_eq!(x.kept[0].request_first.frame, 5);
    }

    /// A BGP header of `len` bytes and message type `kind`.
    fn bgp(len: u16, kind: u8) -> Vec<u8> {
        let mut m = vec![0xff; 16];
        m.extend_from_slice(&len.to_be_bytes());
        m.push(kind);
        m
    }

    #[test]
    fn bgp_peers_make_no_exchanges() {
        // An OPEN each way, then UPDATEs and KEEPALIVEs as each speaker
        // likes: turn-taking data, but nobody's answer.
        let mut x = Exchanges::default();
        x.on_data(ClientToServer, at(4), at(4), 57, &bgp(57, 1));
        x.on_data(ServerToClient, at(6), at(6), 57, &bgp(57, 1));
        x.on_data(ClientToServer, at(8), at(8), 23, &bgp(23, 2));
        x.on_data(ServerToClient, at(9), at(9), 800, &bgp(800, 2));
        x.on_data(ClientToServer, at(12), at(12), 19, &bgp(19, 4));
        x.finish();
        assert!(x.peer_to_peer);
        assert_eq!((x.total, x.kept.len()), (0, 0));
    }

    #[test]
    fn bittorrent_peers_make_no_exchanges() {
        // Each peer's handshake, then each one's own announcements (PORT,
        // then an extended message): the local peer sends the same 14
        // bytes to every peer, unprompted.
        let handshake = b"\x13BitTorrent protocol\0\0\0\0\0\x10\0\x05";
        let port = b"\0\0\0\x03\x09\xeb\x03\0\0\0\x03\x14\x03\x01";
        let mut x = Exchanges::default();
        x.on_data(ClientToServer, at(4), at(4), 68, handshake);
        x.on_data(ServerToClient, at(6), at(6), 68, handshake);
        x.on_data(ServerToClient, at(7), at(7), 14, port);
        x.on_data(ClientToServer, at(9), at(9), 14, port);
        x.finish();
        assert!(x.peer_to_peer);
        assert_eq!((x.total, x.kept.len()), (0, 0));
        // Only as a side's first bytes, and whole: the protocol's name
        // later in a stream, or cut short, is ordinary data.
        for (first, later) in [
            (&b"GET / HTTP/1.1\r\n\r\n"[..], &handshake[..]),
            (&handshake[..19], &b"more"[..]),
        ] {
            let mut x = Exchanges::default();
            x.on_data(ClientToServer, at(4), at(4), 40, first);
            x.on_data(ServerToClient, at(6), at(6), 40, b"reply");
            x.on_data(ClientToServer, at(8), at(8), 68, later);
            x.finish();
            assert!(!x.peer_to_peer, "{first:?}");
            assert_eq!(x.total, 2, "{first:?}");
        }
    }

    #[test]
    fn only_a_whole_bgp_header_marks_peers() {
        // Sixteen 0xff bytes alone (a binary payload), a length below the
        // header's, or an unknown type: ordinary data.
        for head in [vec![0xff; 16], bgp(18, 1), bgp(19, 0), bgp(19, 6)] {
            let mut x = Exchanges::default();
            x.on_data(ClientToServer, at(4), at(4), 40, &head);
            x.on_data(ServerToClient, at(6), at(6), 40, b"reply");
            x.finish();
            assert!(!x.peer_to_peer, "{head:?}");
            assert_eq!(x.total, 1, "{head:?}");
        }
    }

    #[test]
    fn server_data_sent_before_the_request_arrived_is_not_its_response() {
        // Server-side capture (server side of the path: 0): a ticket that
        // left 0.3 ms before the request arrived cannot answer it.
        let mut x = Exchanges {
            server_side_ns: Some(0),
            ..Default::default()
        };
        let at_us = |frame: u64, us: i64| Stamp {
            frame,
            ts_ns: us * 1000,
        };
        x.on_data(ClientToServer, at_us(1, 1000), at_us(1, 1000), 80, b"");
        x.on_data(ServerToClient, at_us(2, 700), at_us(2, 700), 79, b"");
        x.on_data(ServerToClient, at_us(3, 40_000), at_us(3, 40_000), 363, b"");
        x.finish();
        assert_eq!(x.unsolicited_bytes, 79);
        assert_eq!(x.kept[0].response_first.unwrap().frame, 3);
        // Client-side capture (server side of the path: the whole 36 ms RTT):
        // an answer 20 ms after the request is physically impossible.
        let mut y = Exchanges {
            server_side_ns: Some(36_000_000),
            ..Default::default()
        };
        y.on_data(ClientToServer, at_us(1, 0), at_us(1, 0), 80, b"");
        y.on_data(ServerToClient, at_us(2, 20_000), at_us(2, 20_000), 50, b"");
        y.on_data(ServerToClient, at_us(3, 36_100), at_us(3, 36_100), 50, b"");
        y.finish();
        assert_eq!(y.kept[0].response_first.unwrap().frame, 3);
    }

    /// A client-side capture on a 20 ms path: the client's `first` piece
    /// at 0, the server's pure ACK `server_at` ms later (if any), then
    /// the client's next piece at `next_at` ms, answered 20 ms later.
    fn pieces(server_at: Option<i64>, next_at: i64, head: &[u8]) -> Exchanges {
        let mut x = Exchanges {
            server_side_ns: Some(20_000_000),
            round_trip_ns: Some(20_000_000),
            ..Default::default()
        };
        x.on_data(ClientToServer, ms(1, 0), ms(1, 0), 40, head);
        x.server_last_ns = server_at.map(|t| t * 1_000_000);
        x.on_data(ClientToServer, ms(3, next_at), ms(3, next_at), 60, b"");
        x.on_data(
            ServerToClient,
            ms(4, next_at + 20),
            ms(4, next_at + 20),
            90,
            b"",
        );
        x.finish();
        x
    }

    #[test]
    fn client_data_after_a_pause_of_its_own_opens_a_new_request() {
        // tls2.pcap stream 17: an HTTP/2 SETTINGS acknowledgment, and a
        // minute later a PING, answered at once. What the server answered
        // is the PING; the minute was the client's.
        let x = pieces(None, 58_000, b"");
        assert_eq!(x.total, 2);
        assert_eq!(x.kept[0].response_first, None);
        assert_eq!(x.kept[1].request_first.frame, 3);
        assert_eq!(x.kept[1].response_first.map(|r| r.frame), Some(4));
        // Just past a round trip and an ACK's longest delay: a pause.
        assert_eq!(pieces(None, 521, b"").total, 2);
        // The rest of an HTTP/1.1 head after a pause keeps its name.
        let typed = pieces(Some(20), 1_500, b"GET /index.html HTTP/1.1\r\n");
        assert_eq!(typed.total, 2);
        assert_eq!(typed.kept[1].label.as_deref(), Some("GET /index.html"));
    }

    /// GET /a, sent having the server's stream to 1000, on a 20 ms path;
    /// the client's next data (`head`) at `next_at` ms, acknowledging 1500,
    /// bytes the capture never showed if `unseen`.
    fn after_get_a(unseen: bool, next_at: i64, head: &[u8]) -> Exchanges {
        let mut x = Exchanges {
            server_side_ns: Some(20_000_000),
            round_trip_ns: Some(20_000_000),
            client_acked: Some(1000),
            ..Default::default()
        };
        x.on_data(
            ClientToServer,
            ms(1, 0),
            ms(1, 0),
            20,
            b"GET /a HTTP/1.1\r\n",
        );
        x.client_acked = Some(1500);
        x.client_acked_unseen = unseen;
        x.on_data(ClientToServer, ms(3, next_at), ms(3, next_at), 20, head);
        x.finish();
        x
    }

    #[test]
    fn client_data_acknowledging_an_answer_the_capture_lost_is_a_new_request() {
        // GET /a, its answer lost to the capture, GET /b 100 ms later
        // acknowledging it: the server answered /a in between; /b is a
        // request of its own.
        let x = after_get_a(true, 100, b"GET /b HTTP/1.1\r\n");
        assert_eq!(x.total, 2);
        assert_eq!(x.kept[1].label.as_deref(), Some("GET /b"));
        // Data without a request line after a lost answer (and a pause)
        // is not the rest of /a: it keeps no name.
        let z = after_get_a(true, 2_000, b"");
        assert_eq!((z.total, z.kept[1].label.as_deref()), (2, None));
        // Bytes the capture showed (tickets it did not take for an answer)
        // acknowledged: the request goes on.
        let y = after_get_a(false, 100, b"more");
        assert_eq!(y.total, 1);
    }

    #[test]
    fn client_data_that_waited_for_the_server_continues_the_request() {
        // Within a round trip and an ACK's longest delay of the first
        // piece (a Nagle hold, a window of ACK-clocked segments).
        let x = pieces(None, 519, b"");
        assert_eq!((x.total, x.kept[0].request_bytes), (1, 100));
        // Long after the first piece but right after the server's ACK (a
        // zero window reopened, a retransmission acknowledged at last).
        assert_eq!(pieces(Some(9_990), 10_000, b"").total, 1);
        // A body held for `100 Continue` follows its head by the client's
        // timer: one request.
        let head = b"POST /up HTTP/1.1\r\nExpect: 100-continue\r\n\r\n";
        assert_eq!(pieces(None, 1_000, head).total, 1);
        // No round trip known: no pause can be told from a wait.
        let mut y = Exchanges::default();
        y.on_data(ClientToServer, ms(1, 0), ms(1, 0), 40, b"");
        y.on_data(ClientToServer, ms(3, 60_000), ms(3, 60_000), 60, b"");
        y.finish();
        assert_eq!(y.total, 1);
    }

    /// A request at 0 that had the server's stream up to 1000, on a 20 ms
    /// path captured at the client; then server bytes the capture missed,
    /// up to `end`, shown at `shown_at` ms, and captured data after them.
    fn hole_after_request(end: u32, shown_at: i64) -> Exchange {
        let mut x = Exchanges {
            server_side_ns: Some(20_000_000),
            client_acked: Some(1000),
            ..Default::default()
        };
        x.on_data(
            ClientToServer,
            ms(1, 0),
            ms(1, 0),
            300,
            b"GET / HTTP/1.1\r\n",
        );
        x.on_hole(
            ServerToClient,
            ms(5, shown_at),
            end.wrapping_sub(1000) as u64,
            end,
        );
        x.on_data(ServerToClient, ms(5, shown_at), ms(5, shown_at), 900, b"");
        x.finish();
        x.kept[0].clone()
    }

    #[test]
    fn an_answer_that_began_in_a_capture_hole_is_marked() {
        // http-packets.pcap stream 5: a GET, then 130 KB of the server's
        // the capture missed, the next captured segment 26 ms later.
        let x = hole_after_request(131_000, 26);
        assert!(x.response_in_hole);
        assert_eq!(x.response_first.map(|r| r.frame), Some(5));
        assert_eq!(x.response_bytes, 130_000 + 900);
    }

    #[test]
    fn a_hole_the_client_had_or_that_came_too_soon_answers_nothing() {
        // The hole ends where the client's ACK was when it asked: the tail
        // of the answer before, which it had; the data after answers.
        let had = hole_after_request(1000, 26);
        assert!(!had.response_in_hole);
        assert_eq!(had.response_bytes, 900);
        // Shown 5 ms after the request on a 20 ms path: nothing in it left
        // the server after the request arrived.
        let early = hole_after_request(131_000, 5);
        assert!(!early.response_in_hole);
    }

    #[test]
    fn server_banner_before_any_request_is_not_an_exchange() {
        let mut x = Exchanges::default();
        x.on_data(ServerToClient, at(4), at(4), 30, b"220 smtp ready\r\n");
        x.finish();
        assert_eq!((x.total, x.server_first_bytes), (0, 30));
        assert_eq!(x.greeting.map(|g| g.frame), Some(4));
    }

    #[test]
    fn after_a_text_protocol_s_greeting_its_commands_name_the_exchanges() {
        // SMTP: each command, then the message after DATA.
        let mut x = Exchanges::default();
        x.on_data(ServerToClient, at(4), at(4), 20, b"220 mail ESMTP\r\n");
        let turn = |x: &mut Exchanges, frame: u64, ask: &'static [u8], reply: &'static [u8]| {
            x.on_data(ClientToServer, at(frame), at(frame), ask.len() as u64, ask);
            let answer = at(frame + 1);
            x.on_data(ServerToClient, answer, answer, reply.len() as u64, reply);
        };
        turn(&mut x, 6, b"EHLO vm\r\n", b"250 ok\r\n");
        turn(&mut x, 8, b"DATA\r\n", b"354 go ahead\r\n");
        turn(
            &mut x,
            10,
            b"Subject: hi\r\n\r\nhello\r\n.\r\n",
            b"250 queued\r\n",
        );
        turn(&mut x, 12, b"QUIT\r\n", b"221 bye\r\n");
        x.finish();
        let labels: Vec<_> = x.kept.iter().map(|e| e.label.as_deref()).collect();
        assert_eq!(
            labels,
            [Some("EHLO"), Some("DATA"), Some("message"), Some("QUIT")]
        );
        // Without a text greeting (a MySQL server's, none at all) the
        // same bytes name nothing.
        let mut y = Exchanges::default();
        y.on_data(ServerToClient, at(4), at(4), 20, b"J\x00\x00\x00\x0a5.5.5");
        turn(&mut y, 6, b"QUIT\r\n", b"\x07\x00\x00\x02");
        let mut z = Exchanges::default();
        turn(&mut z, 6, b"QUIT\r\n", b"221 bye\r\n");
        for x in [y, z] {
            assert_eq!(x.current.as_ref().and_then(|e| e.label.as_deref()), None);
        }
    }

    #[test]
    fn a_greeting_is_the_server_s_first_data_before_the_client_s_seen_whole() {
        // The greeting's second segment does not move it.
        let mut x = Exchanges::default();
        x.on_data(ServerToClient, at(4), at(4), 20, b"220-smtp\r\n");
        x.on_data(ServerToClient, at(5), at(5), 10, b"220 ok\r\n");
        assert_eq!(x.greeting.map(|g| g.frame), Some(4));
        // Server data after the client spoke answers it: no greeting.
        let mut y = Exchanges::default();
        y.on_data(ClientToServer, at(4), at(4), 20, b"GET / HTTP/1.1\r\n\r\n");
        y.on_data(ServerToClient, at(30), at(30), 20, b"HTTP/1.1 200 OK\r\n");
        assert_eq!(y.greeting, None);
        // Server data after the server's unsolicited bytes (an HTTP/2
        // preface) is no greeting.
        let mut h2 = Exchanges {
            unsolicited_bytes: 33,
            ..Exchanges::default()
        };
        h2.on_data(ServerToClient, at(5), at(5), 200, b"");
        assert_eq!(h2.greeting, None);
        // A greeting that began in a hole of the capture began unseen.
        let mut z = Exchanges::default();
        z.on_hole(ServerToClient, at(6), 100, 101);
        z.on_data(ServerToClient, at(7), at(7), 20, b"220 ok\r\n");
        assert_eq!(z.greeting, None);
    }

    #[test]
    fn ssh_is_told_by_a_side_s_first_bytes_only() {
        let mut x = Exchanges::default();
        x.on_data(ClientToServer, at(4), at(4), 21, b"SSH-2.0-OpenSSH_9.2\r\n");
        assert_eq!(x.protocol, Some(crate::model::AppProtocol::Ssh));
        // The same bytes later in a connection are data.
        let mut y = Exchanges::default();
        y.on_data(ClientToServer, at(4), at(4), 6, b"hello\n");
        y.on_data(ClientToServer, at(5), at(5), 21, b"SSH-2.0-OpenSSH_9.2\r\n");
        y.on_data(ServerToClient, at(9), at(9), 6, b"hello\n");
        assert_eq!(y.protocol, None);
    }

    #[test]
    fn an_openvpn_tunnel_makes_no_exchanges() {
        // A client's hard reset (length 14, opcode 7, key id 0, session
        // id, packet ids), the server's (opcode 8), then data both ways.
        let reset = [0, 14, 0x38, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0, 0];
        let mut x = Exchanges::default();
        x.on_data(ClientToServer, at(4), at(4), 16, &reset);
        x.on_data(ServerToClient, at(9), at(9), 28, &[0, 26, 0x40, 9]);
        x.on_data(ClientToServer, at(12), at(12), 100, &[0, 98, 0x48, 1]);
        x.on_data(ServerToClient, at(40), at(40), 100, &[0, 98, 0x48, 2]);
        x.finish();
        assert_eq!(x.protocol, Some(crate::model::AppProtocol::OpenVpn));
        assert_eq!((x.total, x.kept.len()), (0, 0));
        // DNS over TCP has the same length prefix and asks, even when its
        // query ID begins with a hard reset's opcode byte: its answer
        // repeats the ID.
        for id in [0xab, 0x38, 0x50] {
            let mut dns = Exchanges::default();
            let query = [0, 29, id, 0xcd, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0];
            dns.on_data(ClientToServer, at(4), at(4), 31, &query);
            dns.on_data(
                ServerToClient,
                at(9),
                at(9),
                60,
                &[0, 58, id, 0xcd, 0x81, 0x80],
            );
            dns.finish();
            assert_eq!((dns.total, dns.protocol), (1, None), "{id:#x}");
        }
    }

    #[test]
    fn a_kafka_fetch_held_for_records_is_the_clients_wait_a_slow_metadata_the_brokers() {
        use crate::kafka::build::{fetch, request, response};
        let metadata = |correlation| request(3, 12, correlation, true, &[0; 8]);
        let mut x = Exchanges::for_server_port(9092);
        let mut send = |dir, frame, t, bytes: Vec<u8>| {
            x.on_data(dir, ms(frame, t), ms(frame, t), bytes.len() as u64, &bytes)
        };
        send(ClientToServer, 4, 0, request(18, 4, 1, true, &[0; 3]));
        send(ServerToClient, 5, 40, response(1, 300));
        // A Fetch the broker holds 500 ms for records that never come; a
        // Metadata sent meanwhile is answered behind it.
        send(ClientToServer, 6, 41, fetch(2, 500, 1));
        send(ClientToServer, 7, 300, metadata(3));
        send(ServerToClient, 8, 581, response(2, 13));
        send(ServerToClient, 9, 582, response(3, 80));
        // A Metadata alone, answered 300 ms later: the broker's time.
        send(ClientToServer, 10, 600, metadata(4));
        send(ServerToClient, 11, 940, response(4, 80));
        x.finish();
        let turns: Vec<_> = x
            .kept
            .iter()
            .map(|c| {
                (
                    c.label.as_deref().unwrap(),
                    c.request_first.frame,
                    c.response_first.map(|r| r.frame),
                    c.asks_to_wait,
                )
            })
            .collect();
        assert_eq!(
            turns,
            [
                ("ApiVersions", 4, Some(5), false),
                ("Fetch", 6, Some(8), true),
                ("Metadata", 10, Some(11), false),
            ]
        );
    }

    #[test]
    fn request_lines_are_recognised_and_others_are_not() {
        assert_eq!(
            http_request_line(b"OPTIONS * HTTP/1.1\r\n").as_deref(),
            Some("OPTIONS *")
        );
        assert_eq!(http_request_line(b"\x16\x03\x01"), None);
        assert_eq!(http_request_line(b"get / HTTP/1.1"), None);
        assert_eq!(http_status(b"HTTP/1.0 503 Service Unavailable"), Some(503));
        assert_eq!(http_status(b"SSH-2.0-OpenSSH"), None);
    }
}
