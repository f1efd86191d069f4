//! What tracking hands on when a connection ends: its facts, frozen.
//!
//! A [`ConnectionFacts`] is everything the diagnosis (`rttdoc-diagnose`:
//! the ledger, the detectors, cost attribution) may know about one
//! connection: the handshake's frames, RTT samples reduced to the values
//! the ledger reads, the TLS session as typed data, the exchanges and the
//! bounded segment timeline. The tracker's working state (reassembly
//! buffers, copy detection, parsers) is dropped when the facts are made, so
//! what crosses to the diagnosis (and to its worker threads) is only what
//! it reads. Nothing here is worded for people.

use rttdoc_wire::tls::{cipher_name, group_name, is_grease, is_tls13};

use crate::connection::{Connection, SegmentRecord, Stamp};
use crate::exchange::Exchange;
use crate::model::{
    ConnectionReport, Direction, DirectionStats, Ending, Endpoint, HandshakeReport, LadderEntry,
    RttSource, TlsMessage, TlsReport, TlsVersion,
};
use crate::preamble;

/// What turns a finished connection's facts into its report: the
/// diagnosis (`rttdoc_diagnose::diagnose`). A plain function, so the
/// tracker can run it on worker threads (`--threads N`).
pub type Diagnose = fn(ConnectionFacts) -> ConnectionReport;

/// One finished connection, as the diagnosis sees it.
#[derive(Debug)]
pub struct ConnectionFacts {
    /// Wireshark's tcp.stream index.
    pub stream: u64,
    /// The side that sent the SYN (or, mid-stream, the HTTP request or
    /// ClientHello, else the side off a registered service port, else the
    /// higher port).
    pub client: Endpoint,
    /// The other side.
    pub server: Endpoint,
    /// Its first and last frames.
    pub first: Stamp,
    /// The earlier stream this connection is, seen again with its
    /// addresses translated (the same initial sequence numbers both ways).
    pub same_as: Option<u64>,
    /// The Multipath TCP subflow it is, if it is one (mptcp.rs).
    pub mptcp: Option<Box<crate::model::MptcpReport>>,
    /// The PROXY protocol header the client's stream began with.
    pub proxy_protocol: Option<Box<crate::model::ProxyProtocolReport>>,
    /// Its last frame.
    pub last: Stamp,
    /// How it ended.
    pub ending: Ending,
    /// The TCP handshake, typed (options, TFO, retransmissions).
    pub handshake: HandshakeReport,
    /// First SYN seen (None: the capture began mid-connection).
    pub first_syn: Option<Stamp>,
    /// Most recent SYN.
    pub last_syn: Option<Stamp>,
    /// SYNs seen.
    pub syn_count: u32,
    /// First SYN-ACK seen.
    pub syn_ack: Option<Stamp>,
    /// SYN-ACKs seen.
    pub syn_ack_count: u32,
    /// Every SYN-ACK seen (up to 8) with its TSval.
    pub syn_acks: Vec<(Stamp, Option<u32>)>,
    /// The client's ACK completing the handshake.
    pub handshake_ack: Option<Stamp>,
    /// TSecr of that ACK: which SYN-ACK it answers.
    pub handshake_ack_tsecr: Option<u32>,
    /// Wireshark's tcp.analysis.initial_rtt in ns.
    pub initial_rtt_ns: Option<i64>,
    /// RTT samples, reduced.
    pub rtt: RttFacts,
    /// What each side sent: [client, server].
    pub stats: [DirectionStats; 2],
    /// The TLS session, if the connection carried TLS.
    pub tls: Option<TlsFacts>,
    /// A hello that only looked like TLS's (tls.rs's `not_tls`): `tls`
    /// is then None.
    pub tls_lookalike: Option<crate::model::TlsLookalike>,
    /// Request/response exchanges kept (the first ones).
    pub exchanges: Vec<Exchange>,
    /// All exchanges seen, kept or not.
    pub exchanges_total: u32,
    /// A server's greeting: its first data, sent before any of the
    /// client's ([`crate::Exchanges::greeting`]).
    pub greeting: Option<Stamp>,
    /// A connection the server opened back to the client's host before
    /// it greeted ([`crate::Exchanges::greeting_connect_back`]).
    pub greeting_connect_back: Option<Box<crate::ConnectBack>>,
    /// The application protocol, when a side's first data told it.
    pub protocol: Option<crate::model::AppProtocol>,
    /// The first segments (up to [`crate::TIMELINE_CAP`]).
    pub timeline: Vec<SegmentRecord>,
    /// Every frame, when a ladder was asked for.
    pub ladder: Option<Vec<LadderEntry>>,
    /// Every packet, for graphs, when asked for (series.rs).
    pub series: Option<crate::model::Series>,
    /// The client's 0-RTT early data in plain text, when a key log had its
    /// secret.
    pub early_plaintext: Option<Vec<u8>>,
    /// Whether the detectors should run (false for flows evicted early).
    pub detect: bool,
    /// The client's other clean handshakes from a second before this
    /// connection to a second after it that found more queue on the path
    /// than this one's, by more than a jitter: when each measured it (SYN
    /// to SYN-ACK) and how much more (`path_samples.rs`).
    pub path_samples: Vec<crate::QueueSample>,
    /// The server's echoes of the client's ACKs on this one's siblings
    /// (the same two addresses) from before its slow requests, with those
    /// siblings' quickest ways out (`uplink.rs`).
    pub uplink: Option<Box<crate::UplinkView>>,
    /// When the client's downlink was saturated by several of its
    /// connections around this one's life (`path_samples.rs`).
    pub path_busy: Vec<crate::BusyRun>,
    /// The stalls of the client's path around this connection's life
    /// (`path_samples.rs`).
    pub path_stalls: Vec<crate::PathStall>,
    /// Retransmissions past the timeline's cap: their senders and frames
    /// (the first [`crate::LATE_RETRANSMISSIONS_CITED`]).
    pub late_retransmissions: Vec<(Direction, u64)>,
    /// At each re-send (its frame; the first
    /// [`crate::RESENDS_HEARD_KEPT`]), the newest server data the client
    /// had received on another of its connections by then: its link was
    /// up then (a stall it shared no part of was this connection's own).
    pub heard_at_resends: Vec<(u64, crate::Heard)>,
    /// At its latest SYN sent again, the newest packet that reached any
    /// client and the client's newest re-send on another connection
    /// (`path_samples::NothingHeard`).
    pub nothing_heard: Option<crate::NothingHeard>,
    /// How many other connections its client closed together with its own
    /// first FIN, where the client re-sent data (closes.rs: a teardown).
    pub client_closed_with: u32,
    /// At the client's latest re-send of data, what last reached any
    /// client and the client's newest re-send to another server.
    pub unheard_at_resend: Option<crate::NothingHeard>,
    /// The client's data segments that waited at its uplink behind its
    /// own earlier packets, by its servers' ACKs of its bursts
    /// (uplink_load.rs): frame and wait (ns), in frame order.
    pub uplink_waits: Vec<(u64, i64)>,
    /// At the same re-sends, the newest acknowledgment of the client's
    /// data on another of its connections by then: what it sent got
    /// through then.
    pub acked_at_resends: Vec<(u64, crate::Delivered)>,
    /// The client's TCP clock rate, when it sent its SYN again and its
    /// SYNs over the capture tell the rate (client_clock.rs).
    pub client_clock_hz: Option<u32>,
    /// The FINs of the other connections between the same two addresses
    /// during this one's life: (sent by the server, capture time).
    pub sibling_closes: Vec<(bool, i64)>,
    /// When a connection the server had opened to the client began
    /// sending, just before this one's client closed it during its TLS
    /// handshake (`Connection::dialled_back_data_ns`).
    pub dialled_back_data_ns: Option<i64>,
    /// The client's fetches to check a certificate (a missing
    /// intermediate, an OCSP status, a CRL) on its other connections that
    /// began during this one's life, when it carried TLS (cert_fetch.rs).
    pub certificate_fetches: Vec<crate::CertificateFetch>,
    /// When the data those siblings carried from the client's address to
    /// the server's was captured, run by run (a write's segments sent back
    /// to back: its first and last), where the server sent data that
    /// answered nothing (a push the data can explain); else empty.
    pub sibling_data: Vec<(i64, i64)>,
    /// ICMP errors that said one of its segments was too big for a hop
    /// of its path (the first [`crate::TOO_BIG_KEPT`]).
    pub too_big: Vec<crate::TooBig>,
    /// HTTP/2 senders' stalls on their flow-control credit, the sender
    /// going on in this timeline's frames (h2_credit.rs).
    pub h2_credit_stalls: Vec<crate::H2CreditStall>,
    /// The earlier connection of this client to this server (and TLS
    /// name) that ended shortly before this one's SYN, its last request
    /// answered: what this one could have been instead (reuse.rs).
    pub previous: Option<Box<crate::EndedConnection>>,
    /// A resumed TLS 1.2 (or older) connection, or one that offered a
    /// session and got a full handshake, whose client, by address and
    /// ClientHello, was seen false starting before it began
    /// (false_start.rs): a full handshake took it, or would have taken
    /// it, one round trip too.
    pub client_false_starts: bool,
    /// Another connection of its client to its server's address and port
    /// (`tcp.stream`) that carried a request of the client's after this
    /// one's SYN and before its first request (none begun: before its
    /// first FIN or RST), and that request's first frame
    /// (route_requests.rs): the client had a connection for its requests
    /// while this one was being set up (or sat unused).
    pub sibling_request: Option<(u64, u64)>,
    /// Its SYNs were sent again in a capture of the clients' direction
    /// only: no SYN-ACK of any connection in it, while a client went on
    /// past its SYN elsewhere (an answer it did not keep).
    pub one_way_capture: bool,
    /// Its SYNs were sent again: the newest frame the capture had reached
    /// when the connection was handed on (the capture's last, or the one
    /// that found it idle): a client still waiting for an answer waited
    /// at least until then.
    pub seen_until: Option<crate::Stamp>,
    /// Its SYNs were sent again and nothing answered: how many other
    /// servers its client dialled within a second of its first SYN (a
    /// peer-to-peer client's peers, a crawler's, a scanner's).
    pub dials_beside: u32,
    /// The client's data re-sent unanswered by its timer: the same
    /// client's other connections handed on before it that stalled so in
    /// the same time, to other servers and to its own (black_holes.rs).
    pub stalled_elsewhere: Option<crate::StalledElsewhere>,
    /// A TLS connection: when its client dialled other servers from its
    /// ClientHello on, where the capture shows that (it keeps name
    /// lookups and other servers' dials); None where it cannot tell.
    pub client_dials: Option<Vec<i64>>,
    /// The name lookup (DNS over UDP) its client made for its server just
    /// before its SYN, if the capture has it (dns.rs).
    pub lookup: Option<Box<crate::NameLookup>>,
    /// Set on the facts of a long connection's later window (window.rs):
    /// which one it is.
    pub window: Option<crate::WindowFacts>,
    /// What a long connection's windows found before its end, folded into
    /// one report (window.rs): the diagnosis adds it to the connection's.
    pub earlier: Option<Box<crate::model::LaterWindows>>,
    /// A long connection's last window (its segments since the one
    /// before), to be diagnosed with it.
    pub last_window: Option<Box<ConnectionFacts>>,
}

/// The RTT samples of a connection, reduced to what the ledger reads.
#[derive(Debug, Clone, Copy, Default)]
pub struct RttFacts {
    /// The smallest client-side plus server-side sample pair.
    pub two_sided_estimate: Option<(i64, RttSource)>,
    /// The best estimate from data/ACK and timestamp samples.
    pub estimate: Option<(i64, RttSource)>,
    /// Fastest answer from the capture point to the client and back (the
    /// client ACKing server data): bounds the client side of the path.
    pub min_client_side: Option<i64>,
    /// Fastest answer from the capture point to the server and back (the
    /// server ACKing client data), and the kind of sample it was: bounds
    /// the server side of the path.
    pub min_server_side: Option<(i64, RttSource)>,
    /// The client's and the server's side of the path from their pure
    /// ACKs (`RttSamples::pure_ack_sides`).
    pub pure_ack_sides: (Option<i64>, Option<i64>),
}

/// The TLS session of a connection.
#[derive(Debug)]
pub struct TlsFacts {
    /// The session as reported; the handshake's duration and round trips
    /// are the ledger's to fill (boxed as the report carries it).
    pub report: Box<TlsReport>,
    /// Negotiated version (ServerHello), raw.
    pub version: Option<u16>,
    /// Whether the session was resumed (None: not decidable).
    pub resumed: Option<bool>,
    /// The server sent a HelloRetryRequest.
    pub hello_retry: bool,
    /// The key-exchange group the server chose (its HelloRetryRequest's,
    /// else its ServerHello's key share), raw.
    pub key_exchange_group: Option<u16>,
    /// The cipher suite the server chose, raw.
    pub cipher: Option<u16>,
    /// TLS 1.2 with an ECDHE AEAD suite and an application protocol
    /// chosen (`rttdoc_wire::tls::ecdhe_aead`): a browser would have false
    /// started a full handshake of this session.
    pub false_start_eligible: bool,
    /// The ClientHello's first frame.
    pub client_hello_start: Option<Stamp>,
    /// The client's Finished.
    pub client_finished: Option<Stamp>,
    /// The server's Finished.
    pub server_finished: Option<Stamp>,
    /// Its ServerKeyExchange (TLS 1.2 and older): the server's key
    /// exchange and signing key.
    pub server_key_exchange: Option<rttdoc_wire::tls::ServerKeyExchange>,
    /// TLS started after a plaintext preamble (proxy, STARTTLS).
    pub preamble: Option<PreambleFacts>,
}

/// A plaintext preamble before TLS.
#[derive(Debug, Clone, Copy)]
pub struct PreambleFacts {
    /// Which protocol.
    pub kind: preamble::Kind,
    /// Server answers the client waited for before its ClientHello.
    pub round_trips: u32,
    /// The preamble's first frame (true: sent by the server).
    pub first: (Stamp, bool),
}

impl Connection {
    /// Its RTT samples so far, reduced to what the ledger reads.
    pub(crate) fn rtt_facts(&self) -> RttFacts {
        RttFacts {
            two_sided_estimate: self.rtt.two_sided_estimate(),
            estimate: self.rtt.estimate(),
            min_client_side: self.rtt.min_for(Direction::ServerToClient),
            min_server_side: self.rtt.min_for_sourced(Direction::ClientToServer),
            pure_ack_sides: self.rtt.pure_ack_sides(),
        }
    }

    /// Ends tracking: flushes what is held, settles the TLS session and
    /// the exchanges, and takes out the facts, leaving the connection's
    /// emptied state behind (a husk) for the thread that allocated it to
    /// start a new connection in or free (a block freed by another thread
    /// costs both threads an atomic hand-back).
    pub fn freeze_leaving_husk(&mut self, ending: Ending) -> ConnectionFacts {
        self.settle();
        self.exchanges.finish();
        self.exact_first_byte();
        let handshake = self.handshake_report();
        let early_plaintext = self.early_plaintext();
        let last_window = self.take_last_window(ending).map(Box::new);
        // Fields are taken out of the box, not the whole connection moved
        // out of it: a lone SYN's report made that copy the largest cost.
        let c = self;
        ConnectionFacts {
            stream: c.stream,
            client: c.client,
            server: c.server,
            first: c.first,
            same_as: c.same_as,
            mptcp: c.mptcp.as_deref().and_then(|m| m.report()),
            proxy_protocol: c.proxy_header.report(),
            last: c.last,
            ending,
            handshake,
            first_syn: c.first_syn,
            last_syn: c.last_syn,
            syn_count: c.syn_count,
            syn_ack: c.syn_ack,
            syn_ack_count: c.syn_ack_count,
            syn_acks: std::mem::take(&mut c.syn_acks),
            handshake_ack: c.handshake_ack,
            handshake_ack_tsecr: c.handshake_ack_tsecr,
            initial_rtt_ns: c.initial_rtt_ns,
            rtt: c.rtt_facts(),
            stats: [
                std::mem::take(&mut c.half[0].stats),
                std::mem::take(&mut c.half[1].stats),
            ],
            // (Not a hello that only looked like TLS's: tls.rs's
            // `not_tls`.)
            tls_lookalike: c.tls.as_deref().and_then(|t| {
                let not_tls = t.not_tls?;
                Some(crate::model::TlsLookalike {
                    hello_frame: t.client_hello_at.map_or(not_tls.frame, |(h, _)| h.frame),
                    not_tls_frame: not_tls.frame,
                    version: t.version().map(crate::model::TlsVersion),
                })
            }),
            tls: c
                .tls
                .as_deref_mut()
                .filter(|t| t.not_tls.is_none())
                .map(tls_facts),
            exchanges: std::mem::take(&mut c.exchanges.kept),
            exchanges_total: c.exchanges.total,
            greeting: c.exchanges.greeting,
            greeting_connect_back: c.exchanges.greeting_connect_back.take(),
            protocol: c.exchanges.protocol,
            timeline: std::mem::take(&mut c.timeline),
            ladder: c.ladder.take(),
            series: c.series.take().map(|b| b.finish()),
            early_plaintext,
            detect: c.detect,
            path_samples: std::mem::take(&mut c.path_samples),
            uplink: c.uplink.take(),
            path_busy: std::mem::take(&mut c.path_busy),
            path_stalls: std::mem::take(&mut c.path_stalls),
            late_retransmissions: std::mem::take(&mut c.late_retransmissions),
            heard_at_resends: std::mem::take(&mut c.heard_at_resends),
            nothing_heard: c.nothing_heard,
            client_closed_with: c.client_closed_with,
            unheard_at_resend: c.unheard_at_resend,
            uplink_waits: std::mem::take(&mut c.uplink_waits),
            acked_at_resends: std::mem::take(&mut c.acked_at_resends),
            client_clock_hz: c.client_clock_hz,
            sibling_closes: std::mem::take(&mut c.sibling_closes),
            dialled_back_data_ns: c.dialled_back_data_ns,
            certificate_fetches: std::mem::take(&mut c.certificate_fetches),
            sibling_data: std::mem::take(&mut c.sibling_data),
            too_big: std::mem::take(&mut c.too_big),
            // (The windows took theirs.)
            h2_credit_stalls: c.exchanges.take_h2_credit_stalls(0..=u64::MAX),
            previous: c.previous.take(),
            client_false_starts: c.client_false_starts,
            sibling_request: c.sibling_request,
            one_way_capture: c.one_way_capture,
            seen_until: c.seen_until,
            dials_beside: c.dials_beside,
            stalled_elsewhere: c.stalled_elsewhere,
            client_dials: c.client_dials.take(),
            lookup: c.lookup.take(),
            window: None,
            earlier: c.earlier.take(),
            last_window,
        }
    }

    /// With a key log naming the session, the first byte of the first
    /// response is exact: the server's first TLS 1.3 record whose inner
    /// content type is application data (23), not a NewSessionTicket (22),
    /// whatever the record sizes suggested.
    fn exact_first_byte(&mut self) {
        let (Some(log), Some(tls)) = (&self.keylog, &self.tls) else {
            return;
        };
        let (Some(ch), Some(sh)) = (&tls.client_hello, &tls.server_hello) else {
            return;
        };
        // (Read through the keys, the answers began where their frames
        // did.)
        if !is_tls13(sh.version) || tls.read_through_keys() {
            return;
        }
        let bodies: Vec<&[u8]> = tls
            .server_records
            .iter()
            .map(|(_, b)| b.as_slice())
            .collect();
        let Some((first, types)) = log.server_inner_types(&ch.random, sh.cipher, &bodies) else {
            return;
        };
        let Some(k) = types.iter().position(|t| *t == 0x17) else {
            return;
        };
        let data_at = tls.server_records[first + k].0;
        if let Some(x) = self
            .exchanges
            .kept
            .iter_mut()
            .find(|x| x.response_first.is_some())
        {
            if x.request_first.frame <= data_at.frame {
                x.response_first = Some(data_at);
                if x.response_last.is_none_or(|l| l.frame < data_at.frame) {
                    x.response_last = Some(data_at);
                }
            }
        }
    }

    /// 0-RTT early data, decrypted when a key log names the session.
    fn early_plaintext(&self) -> Option<Vec<u8>> {
        match (&self.keylog, &self.tls) {
            (Some(log), Some(tls)) if !tls.early_data.is_empty() => {
                tls.client_hello.as_ref().and_then(|ch| {
                    let suite = tls.server_hello.as_ref().map(|s| s.cipher);
                    log.decrypt_early(&ch.random, suite, &tls.early_data)
                })
            }
            _ => None,
        }
    }
}

/// Whether the server's TLS 1.2 (or older) flight stapled its
/// certificate's status: a CertificateStatus, which comes right after the
/// Certificate; its absence is known once a message that would follow it
/// came (ServerKeyExchange, CertificateRequest, ServerHelloDone). TLS 1.3
/// staples inside the encrypted Certificate: not seen.
fn status_stapled(version: Option<u16>, report: &TlsReport) -> Option<bool> {
    if version.is_none_or(|v| v >= 0x0304) {
        return None;
    }
    match report.after_certificate()?.message {
        TlsMessage::CertificateStatus => Some(true),
        TlsMessage::ServerKeyExchange
        | TlsMessage::CertificateRequest
        | TlsMessage::ServerHelloDone => Some(false),
        _ => None,
    }
}

fn tls_facts(tls: &mut crate::tls::TlsSession) -> TlsFacts {
    let messages = std::mem::take(&mut tls.messages);
    let ch = tls.client_hello.as_ref();
    let sh = tls.server_hello.as_ref();
    // The group the server chose: its HelloRetryRequest's, else its
    // ServerHello's key share.
    let key_exchange_group = tls
        .hello_retry
        .and_then(|(_, g)| g)
        .or(sh.and_then(|s| s.key_share_group));
    let mut report = Box::new(TlsReport {
        version: tls.version().map(TlsVersion),
        version_inferred: tls.version_inferred(),
        cipher: sh.map(|s| cipher_name(s.cipher)),
        sni: ch.and_then(|c| c.sni.clone()),
        alpn: ch.map(|c| c.alpn.clone()).unwrap_or_default(),
        npn_offered: ch.is_some_and(|c| c.next_protocol),
        offered_versions: ch
            .map(|c| {
                c.supported_versions
                    .iter()
                    .filter(|v| !is_grease(**v))
                    .map(|v| TlsVersion(*v))
                    .collect()
            })
            .unwrap_or_default(),
        client_key_shares: ch
            .map(|c| c.key_share_groups.iter().map(|g| group_name(*g)).collect())
            .unwrap_or_default(),
        server_key_share: key_exchange_group.map(group_name),
        client_hello_bytes: tls.client_hello_bytes,
        client_hello_frames: tls
            .client_hello_at
            .map(|(a, b)| {
                if a.frame == b.frame {
                    vec![a.frame]
                } else {
                    vec![a.frame, b.frame]
                }
            })
            .unwrap_or_default(),
        resumed: tls.resumed(),
        psk_offered: ch.is_some_and(|c| c.pre_shared_key),
        session_ticket_offered: ch.is_some_and(|c| c.session_ticket),
        session_id_offered: tls.offered_session_id(),
        session_held: tls.session_held,
        session_id_issued: tls.session_id_issued,
        status_request_offered: ch.is_some_and(|c| c.status_request),
        ecdhe_offered: ch.is_some_and(|c| c.ecdhe_offered),
        server_certificates: tls.server_certificates.map(|(c, frame)| {
            crate::model::ServerCertificates {
                count: c.certificates,
                self_signed: c.self_signed,
                online_checks: c.online_checks,
                frame,
            }
        }),
        status_stapled: None,
        early_data_offered: ch.is_some_and(|c| c.early_data),
        early_data_accepted: tls.early_data_accepted,
        early_data_preface_only: tls.early_data_preface_only(),
        hello_retry_request: tls.hello_retry.is_some(),
        false_start: tls.false_started(),
        handshake_ms: None,
        handshake_rtts: None,
        ideal_handshake_rtts: None,
        server_flight_bytes: tls.server_flight_bytes,
        messages,
        started_after: tls.preamble.map(|(start, _)| start.kind),
    });
    report.status_stapled = status_stapled(tls.version(), &report);
    TlsFacts {
        report,
        version: tls.version(),
        resumed: tls.resumed(),
        hello_retry: tls.hello_retry.is_some(),
        key_exchange_group,
        cipher: sh.map(|s| s.cipher),
        false_start_eligible: tls.server_hello.as_ref().is_some_and(|s| {
            s.version == 0x0303 && s.protocol_chosen && rttdoc_wire::tls::ecdhe_aead(s.cipher)
        }),
        client_hello_start: tls.client_hello_at.map(|(start, _)| start),
        client_finished: tls.client_finished,
        server_finished: tls.server_finished,
        server_key_exchange: tls.server_key_exchange,
        preamble: tls.preamble.map(|(start, first)| PreambleFacts {
            kind: start.kind,
            round_trips: start.round_trips,
            first,
        }),
    }
}
