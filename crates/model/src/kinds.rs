//! The closed vocabulary every stage shares: ledger phases and finding
//! kinds, each declared once, here. The JSON names, docs/findings.md (a
//! test checks it lists exactly these rows), the summary's causes and any
//! future metric label come from this table; nothing matches on text.
//!
//! Adding a finding kind is one row in [`finding_kinds!`] plus its
//! detector file in `crates/diagnose/src/detect/` (docs/ARCHITECTURE.md walks through it).

use serde::{Serialize, Serializer};

/// A phase of a connection's round-trip ledger, in the order they happen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// SYN to the handshake's ACK.
    TcpHandshake,
    /// A proxy's CONNECT or SOCKS exchange before TLS.
    ProxyConnect,
    /// A plaintext protocol's STARTTLS (SMTP, IMAP, PostgreSQL ...) before TLS.
    Starttls,
    /// ClientHello to the client's Finished.
    TlsHandshake,
    /// A QUIC connection's first Initial to the client's Handshake packet
    /// (its Finished): QUIC's transport and TLS handshakes in one.
    QuicHandshake,
    /// A request to its response's first byte.
    FirstByte,
    /// The rest of a response: its stalls are not latency but throughput.
    Transfer,
}

impl Phase {
    /// Every phase, in ledger order.
    pub const ALL: [Phase; 7] = [
        Phase::TcpHandshake,
        Phase::ProxyConnect,
        Phase::Starttls,
        Phase::TlsHandshake,
        Phase::QuicHandshake,
        Phase::FirstByte,
        Phase::Transfer,
    ];

    /// The JSON name (`tls_handshake`).
    pub fn name(self) -> &'static str {
        match self {
            Phase::TcpHandshake => "tcp_handshake",
            Phase::ProxyConnect => "proxy_connect",
            Phase::Starttls => "starttls",
            Phase::TlsHandshake => "tls_handshake",
            Phase::QuicHandshake => "quic_handshake",
            Phase::FirstByte => "first_byte",
            Phase::Transfer => "transfer",
        }
    }

    /// Latency phases are what a user waits for before the answer starts;
    /// their excess over the ideal is the ledger's `excess_ms`.
    pub fn is_latency(self) -> bool {
        self != Phase::Transfer
    }
}

impl std::fmt::Display for Phase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How a finding kind's `cost_ms` counts in the totals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CostRule {
    /// Waits someone had: in a latency phase they explain part of the
    /// ledger's excess (`attributed_ms`); in the transfer phase they are
    /// stalls.
    Waits,
    /// Round trips the ideal already prices in (a HelloRetryRequest, a
    /// missed resumption): a cost, never attributed to the excess.
    PricedIntoIdeal,
    /// Time saved (negative cost) or an outcome worth knowing: never
    /// attributed.
    Outcome,
    /// A summary of other findings (the handshake's extra RTT): never
    /// counted, or it would count its causes twice.
    Summary,
    /// A risk, not time (replayable early data): cost 0.
    Risk,
}

macro_rules! finding_kinds {
    ($(
        $(#[doc = $doc:literal])*
        $variant:ident = $name:literal in $file:literal, $cost:ident, fix $fix:literal;
    )*) => {
        /// What a finding says happened. Declared once, with its detector
        /// file, cost rule and generic fix (a finding's own `fix` is in the
        /// terms of what that connection showed).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum FindingKind {
            $( $(#[doc = $doc])* $variant, )*
        }

        impl FindingKind {
            /// Every kind, in the order of docs/findings.md.
            pub const ALL: &'static [FindingKind] = &[$(FindingKind::$variant),*];

            /// The JSON name (`nagle_hold`).
            pub fn name(self) -> &'static str {
                match self { $(FindingKind::$variant => $name,)* }
            }

            /// The detector's file under `crates/diagnose/src/detect/`.
            pub fn detector_file(self) -> &'static str {
                match self { $(FindingKind::$variant => $file,)* }
            }

            /// How its cost counts.
            pub fn cost_rule(self) -> CostRule {
                match self { $(FindingKind::$variant => CostRule::$cost,)* }
            }

            /// The fix in general terms (the summary's causes table).
            pub fn fix(self) -> &'static str {
                match self { $(FindingKind::$variant => $fix,)* }
            }

            /// One line on what it is (its doc comment's first line).
            pub fn doc(self) -> &'static str {
                match self { $(FindingKind::$variant => first_doc_line(&[$($doc),*]),)* }
            }

            /// The kind with this JSON name.
            pub fn from_name(name: &str) -> Option<FindingKind> {
                FindingKind::ALL.iter().copied().find(|k| k.name() == name)
            }
        }
    };
}

const fn first_doc_line(lines: &[&'static str]) -> &'static str {
    match lines.first() {
        Some(l) => l,
        None => "",
    }
}

finding_kinds! {
    /// A small segment held by Nagle until the ACK of the previous one.
    NagleHold = "nagle_hold" in "nagle.rs", Waits,
        fix "TCP_NODELAY (nginx `tcp_nodelay on;`), one write per message";
    /// A Nagle hold released only by the receiver's delayed-ACK timer.
    NagleDelayedAck = "nagle_delayed_ack" in "nagle.rs", Waits,
        fix "TCP_NODELAY on the writer, or coalesce writes";
    /// A response written in two writes, its second held by Nagle.
    WriteWriteRead = "write_write_read" in "nagle.rs", Waits,
        fix "one write per response (writev), TCP_NODELAY";
    /// The TLS handshake took more round trips than its ideal; names why.
    TlsExtraRtt = "tls_extra_rtt" in "tls_extra_rtt.rs", Summary,
        fix "the cause's fix";
    /// The server took long to answer a ClientHello or a request.
    ServerThinkTime = "server_think_time" in "server_think_time.rs", Waits,
        fix "ECDSA certificates, x25519, resumption, CPU; the application";
    /// The client took long to answer the server's TLS handshake flight.
    ClientThinkTime = "client_think_time" in "client_think_time.rs", Waits,
        fix "the client's certificate checks (a full chain, OCSP stapling), its CPU; resumption";
    /// The client fetched what it needed to check the server's certificate
    /// (a missing intermediate, an OCSP status, a CRL) while the TLS
    /// handshake waited for it.
    CertificateFetch = "certificate_fetch" in "certificate_fetch.rs", Waits,
        fix "send the whole chain (nginx `ssl_certificate` with the full chain); staple OCSP (`ssl_stapling on;`)";
    /// A proxy's client waited for the proxy's upstream: the proxy called
    /// it during the wait (its connection is in the capture).
    UpstreamWait = "upstream_wait" in "upstream_wait.rs", Waits,
        fix "the upstream's own findings; upstream keep-alive when it connects per request";
    /// The server opened a connection back to the client's host while the
    /// client waited (FTP's active data connection, an ident lookup): its
    /// handshake, or its unanswered SYNs, were in the wait.
    ConnectBack = "connect_back" in "connect_back.rs", Waits,
        fix "ident lookups off (Exim `rfc1413_hosts =`, ProFTPD `IdentLookups off`) or a host that refuses port 113 at once; FTP: fewer, larger transfers, or a protocol that keeps one connection";
    /// Answers waited in the queue of the client's own downlink, which
    /// several of its connections kept saturated.
    DownlinkQueue = "downlink_queue" in "downlink_queue.rs", Waits,
        fix "AQM (fq_codel, cake) on the bottleneck; fewer parallel downloads (HTTP/2); more bandwidth";
    /// Answers the client's path held while it stalled: nothing came from
    /// any server, then what it held came at once.
    PathStall = "path_stall" in "path_stall.rs", Waits,
        fix "the client's own link: Wi-Fi power saving and background scans, a cellular radio's idle timers or handovers";
    /// The client held a request's body for a `100 Continue` that never
    /// came, until its own timer ended the wait.
    ExpectContinueWait = "expect_continue_wait" in "expect_continue.rs", Waits,
        fix "send the body at once (curl -H 'Expect:'), or a server that answers 100 Continue";
    /// The first flight waited for ACKs: larger than the initial window.
    InitcwndLimited = "initcwnd_limited" in "initcwnd.rs", Waits,
        fix "smaller chain, cert compression, `ip route ... initcwnd 20`";
    /// The client asked for a TCP Fast Open cookie.
    TfoCookieRequest = "tfo_cookie_request" in "tfo.rs", Outcome,
        fix "enable server TFO to use the cookie next time";
    /// Data in the SYN was accepted: one round trip saved.
    TfoAccepted = "tfo_accepted" in "tfo.rs", Outcome,
        fix "-";
    /// Data in the SYN was refused and sent again: the round trip was not saved.
    TfoRejected = "tfo_rejected" in "tfo.rs", Waits,
        fix "`net.ipv4.tcp_fastopen=3`, `listen ... fastopen=N`, stable key, no middlebox stripping option 34";
    /// 0-RTT early data was sent; accepted (a saving) or rejected (the
    /// request waited a round trip more: a wait).
    EarlyData = "early_data" in "resumption.rs", Waits,
        fix "425 Too Early for unsafe methods; `ssl_early_data on;` when rejected";
    /// A non-idempotent request sent as replayable 0-RTT early data.
    EarlyDataUnsafe = "early_data_unsafe" in "early_data_unsafe.rs", Risk,
        fix "only safe requests early; 425 Too Early (RFC 8470, nginx `$ssl_early_data`); `ssl_early_data off;`";
    /// A session was resumed.
    Resumption = "resumption" in "resumption.rs", Outcome,
        fix "-";
    /// A session was offered for resumption and the server did a full handshake.
    ResumptionMissed = "resumption_missed" in "resumption.rs", PricedIntoIdeal,
        fix "shared session cache and ticket keys";
    /// The server asked for another key share: one more round trip.
    HelloRetryRequest = "hello_retry_request" in "hello_retry_request.rs", PricedIntoIdeal,
        fix "accept the client's first key-share group";
    /// A receiver advertised a zero window and held its peer back.
    ZeroWindow = "zero_window" in "zero_window.rs", Waits,
        fix "a faster reader, larger `tcp_rmem`";
    /// The sender waited at the edge of the receiver's window.
    RwndLimited = "rwnd_limited" in "rwnd_limited.rs", Waits,
        fix "receive buffer >= bandwidth x RTT: no fixed SO_RCVBUF, larger `tcp_rmem` max";
    /// An HTTP/2 sender spent the flow-control credit its receiver granted
    /// and waited for a WINDOW_UPDATE.
    H2WindowLimited = "h2_window_limited" in "h2_window_limited.rs", Waits,
        fix "HTTP/2 receive windows >= bandwidth x RTT: SETTINGS_INITIAL_WINDOW_SIZE and the connection's window (HAProxy `tune.h2.initial-window-size`, Node.js `initialWindowSize` + `setLocalWindowSize`, gRPC's window options)";
    /// Data sent again.
    Retransmission = "retransmission" in "retransmission.rs", Waits,
        fix "find the loss";
    /// Segments the path delivered after segments sent after them.
    Reordering = "reordering" in "reordering.rs", Waits,
        fix "find what reorders the path: per-packet load balancing, a bonded or multipath link";
    /// Full-size segments too big for a hop of the path, sent again
    /// smaller (path MTU discovery) or into a black hole.
    PathMtu = "path_mtu" in "path_mtu.rs", Waits,
        fix "clamp the MSS to the path MTU; let ICMP \"fragmentation needed\" through";
    /// A retransmission after a retransmission timeout's silence.
    RtoStall = "rto_stall" in "retransmission.rs", Waits,
        fix "find the loss; tail-loss probes";
    /// A new connection's set-up (TCP and TLS handshakes) waited where
    /// an earlier connection to the same server, ended moments before,
    /// could have carried the request.
    ConnectionNotReused = "connection_not_reused" in "connection_not_reused.rs", PricedIntoIdeal,
        fix "HTTP keep-alive on both ends (no `Connection: close`), idle timeouts longer than the client's pauses";
    /// A request waited for a redirect: the server answered an earlier
    /// request with a 3xx and a `Location`, and the client asked again
    /// there.
    HttpRedirect = "http_redirect" in "http_redirect.rs", PricedIntoIdeal,
        fix "link to the final URL; HSTS (preloaded) instead of http:// -> https:// redirects; links with the directory's trailing slash";
    /// A request waited for the authentication challenges it answered:
    /// the server (a proxy) answered the same request without the
    /// credentials it wanted with a 401 (407), and the client sent it
    /// again with them.
    HttpAuthChallenge = "http_auth_challenge" in "http_auth_challenge.rs", PricedIntoIdeal,
        fix "send the credentials with the first request (preemptive Basic, a fresh token); reuse Digest nonces; keep NTLM connections open or use Kerberos";
    /// A browser's request waited for its CORS preflight:
    /// an `OPTIONS` for the same URL asking another origin's permission
    /// for its method and headers, answered before the request was sent.
    CorsPreflight = "cors_preflight" in "cors_preflight.rs", PricedIntoIdeal,
        fix "serve the API from the page's origin, or send simple requests (no custom headers, a form or text/plain body); `Access-Control-Max-Age` for the rest";
    /// A query of the name lookup before the SYN went unanswered until
    /// the client's resolver sent it again (its timeout).
    DnsQueryLost = "dns_query_lost" in "dns_query_lost.rs", Waits,
        fix "find the loss between resolver and client (conntrack's race on glibc's paired A/AAAA: `options single-request-reopen`); `options timeout:1`; a node-local cache";
    /// The name lookup before the SYN asked names from a search list that
    /// did not exist before the one that did.
    DnsSearchList = "dns_search_list" in "dns_search_list.rs", Waits,
        fix "ask for the fully qualified name with a trailing dot, or a lower `ndots` (Kubernetes pods: 5)";
    /// Before its SYN the client tried another address of the server's
    /// name (IPv6 before IPv4, another A record) that did not answer.
    AddressFallback = "address_fallback" in "address_fallback.rs", Waits,
        fix "make every published address answer (IPv6 routes and firewalls, `listen [::]:443`), or publish only those that do";
    /// A QUIC server answered the client's Initial with a Version
    /// Negotiation packet: the client began again in another version.
    QuicVersionNegotiation = "quic_version_negotiation" in "quic_version_negotiation.rs", Waits,
        fix "start in a version the server speaks (the client's QUIC versions, or the server's: version 1 on both)";
    /// A QUIC server answered the client's Initial with a Retry: the
    /// client proved its address with the token a round trip later.
    QuicRetry = "quic_retry" in "quic_retry.rs", Waits,
        fix "Retry only under attack (nginx `quic_retry off;`, quic-go's `VerifySourceAddress` for unknown addresses only), NEW_TOKEN for returning clients";
    /// A QUIC client's Initial went unanswered until its probe timeout
    /// sent it again.
    QuicInitialLost = "quic_initial_lost" in "quic_initial_lost.rs", Waits,
        fix "find the loss (UDP to the server's port filtered or rate-limited, a busy server dropping Initials)";
    /// A QUIC server's first flight stopped at three times the bytes the
    /// client had sent (RFC 9000 8.1) until the client's next datagram.
    QuicAmplificationLimit = "quic_amplification_limit" in "quic_amplification_limit.rs", Waits,
        fix "a smaller certificate chain (ECDSA, no needless intermediates, certificate compression RFC 8879), or clients that send a bigger first flight";
    /// The SYN was sent again.
    SynRetransmit = "syn_retransmit" in "syn_retransmit.rs", Waits,
        fix "SYN queue, backlog, the path";
    /// The server answered the SYN with an ACK of another connection on
    /// the same port pair (one it still held, or its TIME-WAIT): the
    /// client reset it and sent its SYN again.
    SynAnsweredByAck = "syn_answered_by_ack" in "syn_answered_by_ack.rs", Waits,
        fix "server: TCP keepalive and idle timeouts that drop connections whose client is gone; client: kernel-chosen source ports, TCP timestamps on";
    /// The server's listener did not take the connection when the client
    /// finished its handshake: its accept queue was full.
    AcceptQueueFull = "accept_queue_full" in "accept_queue_full.rs", Waits,
        fix "accept() sooner (more workers), a larger backlog and net.core.somaxconn";
    /// The server's host reset the connection when the client finished
    /// its handshake: its listener never took it (a full accept queue
    /// with `tcp_abort_on_overflow`, a listener closed since its SYN-ACK).
    ListenerReset = "listener_reset" in "listener_reset.rs", Outcome,
        fix "a listener with room (accept sooner, a larger backlog and net.core.somaxconn), `net.ipv4.tcp_abort_on_overflow=0`, restarts that hand the listening socket over";
    /// A response after idle restarted from a small congestion window.
    SlowStartAfterIdle = "slow_start_after_idle" in "slow_start_after_idle.rs", Waits,
        fix "`net.ipv4.tcp_slow_start_after_idle=0`";
}

impl FindingKind {
    /// About the name lookup before the connection: its waits cite DNS
    /// packets or other connections' SYNs, not this connection's alone.
    pub fn is_lookup(self) -> bool {
        matches!(
            self,
            FindingKind::DnsQueryLost | FindingKind::DnsSearchList | FindingKind::AddressFallback
        )
    }

    /// About a QUIC connection: its frames are UDP datagrams, its
    /// `stream` is the QUIC connection's number.
    pub fn is_quic(self) -> bool {
        matches!(
            self,
            FindingKind::QuicVersionNegotiation
                | FindingKind::QuicRetry
                | FindingKind::QuicInitialLost
                | FindingKind::QuicAmplificationLimit
        )
    }

    /// The Nagle family: a hold released by the peer's ACK.
    pub fn is_nagle(self) -> bool {
        matches!(
            self,
            FindingKind::NagleHold | FindingKind::NagleDelayedAck | FindingKind::WriteWriteRead
        )
    }
}

impl std::fmt::Display for FindingKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for FindingKind {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// Ordered by name, so maps keyed by kind list them alphabetically.
impl Ord for FindingKind {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.name().cmp(other.name())
    }
}

impl PartialOrd for FindingKind {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_a_unique_name_that_maps_back() {
        for k in FindingKind::ALL {
            assert_eq!(FindingKind::from_name(k.name()), Some(*k));
            assert!(!k.doc().is_empty(), "{k} has no doc line");
        }
        let mut names: Vec<&str> = FindingKind::ALL.iter().map(|k| k.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), FindingKind::ALL.len());
        assert_eq!(FindingKind::from_name("no_such_kind"), None);
    }

    /// docs/findings.md's table lists exactly the kinds of this table, in
    /// its order, each with its detector file; and every detector file
    /// exists.
    #[test]
    fn the_findings_doc_lists_exactly_these_kinds() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let doc = std::fs::read_to_string(root.join("../../docs/findings.md")).unwrap();
        let rows: Vec<(String, String)> = doc
            .lines()
            .filter(|l| l.starts_with("| `"))
            .map(|l| {
                let cells: Vec<&str> = l.split('|').map(str::trim).collect();
                (cells[1].trim_matches('`').to_string(), cells[2].to_string())
            })
            .collect();
        let expected: Vec<(String, String)> = FindingKind::ALL
            .iter()
            .map(|k| (k.name().to_string(), k.detector_file().to_string()))
            .collect();
        assert_eq!(rows, expected);
        for k in FindingKind::ALL {
            assert!(
                root.join("../diagnose/src/detect")
                    .join(k.detector_file())
                    .exists(),
                "{k}: no detector file {}",
                k.detector_file()
            );
        }
    }

    #[test]
    fn kinds_and_phases_serialise_as_their_names() {
        assert_eq!(
            serde_json::to_string(&FindingKind::NagleHold).unwrap(),
            "\"nagle_hold\""
        );
        for p in Phase::ALL {
            assert_eq!(
                serde_json::to_string(&p).unwrap(),
                format!("\"{}\"", p.name())
            );
        }
    }
}
