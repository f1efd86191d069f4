//! `connection_not_reused` — a new connection's set-up waited where an
//! earlier connection to the same server could have carried the request.
//!
//! Signature: the connection's SYN is in the capture, and before it an
//! earlier connection from the same client address to the same server
//! address and port (for TLS, asking for the same server name) ended: its
//! first FIN or RST, from either side, was captured before this SYN, after
//! its last request's answer had come, whole (not a client that closed
//! short of what the server had sent, or while the server's answer went
//! on: a cancelled download) (reuse.rs in rttdoc-analyze), that
//! answer no more than 60 s before this SYN (the idle time common clients
//! and servers keep a connection for); and the client knew it was ending
//! when it sent this SYN: its own FIN or RST had left, or the server's had
//! reached it (on the client's clock: the server's packets shifted by the
//! client's side of the path, within the shift's error). A client that
//! opened this one while the earlier was open, from where it stood, was
//! kept from that one by something else. This connection's first request is
//! not in its SYN (TCP Fast Open's data) and left as soon as the set-up let
//! it: within 20 ms, on the client's clock, of the server's last set-up
//! packet before it (its SYN-ACK, or its last TLS handshake flight). A
//! request sent later was not waiting for the connection (a preconnect),
//! and nothing is reported.
//!
//! Nor when the server asked this connection's client for a certificate
//! (a CertificateRequest, readable before TLS 1.3) and not the earlier
//! one's: the client came back to be authenticated, as a VPN client does
//! whose gateway asks only on a fresh connection (openconnect's "try again
//! on a fresh connection"), which a kept connection could not have done.
//!
//! Nor when the server refused a SYN of this connection (its RST before
//! the SYN-ACK: it was not accepting connections, and a client that tries
//! again has nothing kept to count on). A set-up shorter than 2 ms (the
//! ledger's floor for an excess: loopback, a LAN, a relay next to the
//! client that answered the SYN itself) is not reported: there was
//! nothing to win, or nothing the capture shows. The set-up is the TCP handshake's round trip, and
//! a TLS handshake before the request (its round trips and both hosts'
//! key exchange: the wait from the SYN to the request); not what else the
//! wait held without TLS (a greeting a server that speaks first was slow
//! to send is its own turn, timed as its think time; the client's own
//! time before it asked).
//!
//! The earlier connection, kept open, would have carried the request the
//! moment the client had it. Instead the client waited for the SYN-ACK
//! (and the TLS handshake's round trips and both hosts' key exchange):
//! the cost is one wait, from this SYN to the request's first segment
//! (both the client's packets: its own clock at any vantage), released by
//! the server's last set-up packet; without TLS, only up to when the
//! SYN-ACK reached the client (what the client did before it asked, its
//! own, it would have done on a kept connection too). The ledger's ideal
//! already counts the handshakes' round trips, so none of it is
//! attributed to the excess: it is a cost against keeping connections
//! alive.
//!
//! Who ended the earlier connection, and when, names the fix: the server
//! right after its answer (it, or the client's request, said `Connection:
//! close`; keep-alive off; its per-connection request limit), the server
//! after idling (its keep-alive timeout shorter than the client's pause),
//! the client right after the answer (a client that opens a connection per
//! request: a new process per request, no session or pool) or after idling
//! (its pool's idle timeout), or with its other connections to the
//! server at once, within 20 ms, each idle for another time (one other
//! or more: one act, not each connection's idle timer: a pool's sweep of
//! its idle connections, or a teardown by a reload or navigation, the
//! application sent to the background, a network change: nDPI's
//! alexa-app.pcapng 50, seven closed in 2.3 ms, idle 2 to 4 s; 37 and
//! 104, pairs closed 2.9 and 0.3 ms apart, idle 0.54 and 1.22 s, 3.66
//! and 5.2 s: one timeout closes connections idle that far apart no
//! closer together). A
//! client's idle time, and its pause before asking again, run from when
//! it took its last answer: no sooner than its first acknowledgment of
//! the answer's end less the longest delayed-ACK timer (a phone asleep
//! acknowledged seconds after the answer passed the capture: nDPI's
//! alexa-app.pcapng 86). At a server's vantage, clients behind one
//! NAT address share it: two users' connections look like one client's.
//! Behind a load balancer that opens each connection with a PROXY
//! protocol header, the client is the one the header names (reuse.rs is
//! keyed so): the balancer carries its clients' connections one for one,
//! and another client's could have carried nothing of this one's.
//!
//! Where the client closed the earlier connection but its server (address
//! and port) closed a connection on its own after idling, with nothing
//! asked, a second or more (its keep-alive timeout; on any connection to
//! it ended before this one was handed on, this one too), for less time
//! than the client's pause before asking again, the earlier connection,
//! kept, would have been closed by the server first: the words and the
//! fix name the server's keep-alive, not the client's close (nDPI's
//! alexa-app.pcapng 74, judged wrong in session 87). The cost stays: a
//! keep-alive longer than the pause saves the set-up.

use super::Facts;
use crate::model::{Detail, Direction, Finding, FindingKind, Phase, TlsMessage, Wait};
use rttdoc_analyze::READY_NS;

/// How long the client held its ClientHello after the server's last
/// packet let it go (its SYN-ACK, or the last answer of a preamble: a
/// proxy's to CONNECT), on the client's clock, beyond a client's
/// turnaround ([`READY_NS`]): its own wait inside the set-up (nDPI's
/// wechat.pcap 21: 1.02 s, while a sibling's handshake got the session
/// it then offered back; judged: "the client's wait, not a handshake").
fn hello_held_ns(f: &Facts<'_>) -> i64 {
    let Some(tls) = f.report.tls.as_ref() else {
        return 0;
    };
    let hello = tls
        .messages
        .iter()
        .find(|m| m.direction == Direction::ClientToServer && m.message == TlsMessage::ClientHello)
        .and_then(|m| f.record(m.first_frame));
    // What let it go: the server's last SYN-ACK or data before it (a
    // proxy's answer to CONNECT, a STARTTLS reply: a preamble's turns are
    // not the client's hold).
    let let_go = hello.and_then(|h| {
        f.timeline
            .iter()
            .take_while(|r| r.frame < h.frame)
            .filter(|r| r.dir == Direction::ServerToClient && (r.flags.syn() || r.len > 0))
            .last()
    });
    match (hello, let_go) {
        (Some(h), Some(s)) => {
            let held = h.ts_ns - s.ts_ns.saturating_add(f.client_side_ns);
            if held > READY_NS {
                held
            } else {
                0
            }
        }
        _ => 0,
    }
}

pub fn detect(f: &Facts<'_>, out: &mut Vec<Finding>) {
    let Some(previous) = f.previous else { return };
    let Some(syn) = f.client_syn() else {
        return;
    };
    let Some(request) = f.exchanges.first().map(|x| x.request_first) else {
        return;
    };
    if request.ts_ns <= syn.ts_ns || request.frame == syn.frame {
        return;
    }
    // The client knew the earlier connection was ending when it sent this
    // SYN: its own FIN or RST had left, or the server's had reached it
    // (its clock: the server's packets shifted by the client's side of
    // the path). Otherwise it opened this one while that one was open.
    let knew = previous.client_close_ns.is_some_and(|t| t <= syn.ts_ns)
        || previous.server_close_ns.is_some_and(|t| {
            t.saturating_add(f.client_side_ns) <= syn.ts_ns.saturating_add(f.jitter_ns)
        });
    if !knew {
        return;
    }
    // The server's last set-up packet before the request (its SYN-ACK or
    // last TLS flight): what let the client send it. A server that refused
    // a SYN (its RST before the SYN-ACK) was not accepting connections
    // then: no kept connection to count on.
    let mut release = None;
    for r in f
        .timeline
        .iter()
        .take_while(|r| r.frame < request.frame)
        .filter(|r| r.dir == Direction::ServerToClient)
    {
        if r.flags.rst() {
            return;
        }
        if r.flags.syn() || r.len > 0 {
            release = Some(r);
        }
    }
    let Some(release) = release else {
        return;
    };
    // The server asked this connection's client for a certificate and
    // not the earlier one's: the client came back to be authenticated (a
    // VPN client whose gateway asks only on a fresh connection), which a
    // kept connection could not have done.
    let certificate_requested = f.report.tls.as_ref().is_some_and(|t| {
        t.messages
            .iter()
            .any(|m| m.message == TlsMessage::CertificateRequest && m.frame < request.frame)
    });
    if certificate_requested && !previous.certificate_requested {
        return;
    }
    // (Saturating: a broken clock may stand at the end of time.)
    if request
        .ts_ns
        .saturating_sub(release.ts_ns.saturating_add(f.client_side_ns))
        > READY_NS
    {
        return;
    }
    let wait_ns = request.ts_ns.saturating_sub(syn.ts_ns);
    let tls = f.report.tls.as_ref();
    // What a kept connection saves is the set-up: the TCP handshake's
    // round trip, and a TLS handshake before the request (its round trips
    // and both hosts' key exchange). On loopback or a LAN a TCP handshake
    // costs microseconds: nothing to win, whatever else the wait held (a
    // greeting a server was slow to send is its own turn, timed as its
    // think time; the client's own time before it asked is its own).
    let tls_before_request = tls.is_some_and(|t| {
        t.client_hello_frames
            .first()
            .is_some_and(|&ch| ch < request.frame)
    });
    let set_up_ns = match f.rtt_ns {
        Some(rtt) if !tls_before_request => rtt.min(wait_ns),
        _ => wait_ns,
    };
    if set_up_ns < super::causality::EXCESS_FLOOR_NS {
        return;
    }
    // Without TLS the wait ended when the SYN-ACK reached the client (on
    // its clock): what the client did before it asked is its own
    // (gopacket's cip-scan: a 2.6 ms handshake, then 19.7 ms before the
    // NetBIOS request), and would have been done on a kept connection
    // too.
    let waited_ns = if tls_before_request {
        wait_ns
    } else {
        let reached = release.ts_ns.saturating_add(f.client_side_ns);
        reached.saturating_sub(syn.ts_ns).clamp(0, wait_ns)
    };
    // (The floor on what is claimed too: with no round trip measured, the
    // set-up above was the whole wait; nDPI's waze.pcap 15, a relay next
    // to the client answering the SYN in 1.5 ms.)
    if waited_ns < super::causality::EXCESS_FLOOR_NS {
        return;
    }
    // The last answer on the closer's clock: a client closes after the
    // answer reached it.
    let shift = if previous.closed_by_server {
        0
    } else {
        f.client_side_ns
    };
    let answer_ns = previous.last_answer.ts_ns.saturating_add(shift);
    // And no sooner than the client's acknowledgment of it allows: a
    // receiver acknowledges within its delayed-ACK timer of taking data,
    // so a client that acknowledged its answer seconds on took it then
    // (nDPI's alexa-app.pcapng 86: a phone silent for 2.4 s, the server
    // re-sending its answer, then the phone's ACKs, and its FIN 0.33 s
    // after them; judged: not 2.69 s of idling). The client's pause
    // before asking again, likewise.
    let taken_after = |since: i64| {
        previous.answer_acked_ns.map_or(since, |acked| {
            acked
                .saturating_sub(super::causality::MAX_ACK_DELAY_NS)
                .max(since)
        })
    };
    let answer_ns = if previous.closed_by_server {
        answer_ns
    } else {
        taken_after(answer_ns)
    };
    let wait_ms = waited_ns as f64 / 1e6;
    let mut x = f.finding(FindingKind::ConnectionNotReused, Some(Phase::TcpHandshake));
    x.frames = vec![syn.frame, release.frame, request.frame];
    x.waits = vec![Wait {
        from_frame: syn.frame,
        to_frame: request.frame,
        release_frame: Some(release.frame),
        ms: wait_ms,
    }];
    x.cost_ms = wait_ms;
    x.confidence = 0.9;
    // This connection, and how the earlier one ended.
    x.display_filter = format!(
        "tcp.stream eq {} || (tcp.stream eq {} && (tcp.flags.fin == 1 || tcp.flags.reset == 1))",
        f.report.stream, previous.stream
    );
    // (The client's closes only: a server that closed first closed none
    // of them.)
    let (closed_together, closed_at_once, closed_elsewhere) = if previous.closed_by_server {
        (0, 0, 0)
    } else {
        (
            previous.closed_together,
            previous.closed_at_once,
            previous.closed_elsewhere,
        )
    };
    // The client closed it, but its server closes connections idle as long
    // on its own (seen on any connection to it ended so far, this one's
    // too): kept, it would have been closed before the client asked again
    // (nDPI's alexa-app.pcapng 74: an object store's close_notify 5.96 s
    // after its last answer, the client back 9 s after the earlier one's;
    // judged wrong at "kept open, it would have carried this request").
    let pause_ns = syn
        .ts_ns
        .saturating_sub(taken_after(previous.last_answer.ts_ns));
    let server_idle_limit = previous
        .server_idle
        .filter(|&(_, idled)| !previous.closed_by_server && idled < pause_ns)
        .map(|(stream, idled)| (stream, idled as f64 / 1e6));
    x.detail = Detail::ConnectionNotReused {
        previous_stream: previous.stream,
        close_frame: previous.close.frame,
        closed_by_server: previous.closed_by_server,
        reset: previous.reset,
        previous_requests: previous.exchanges,
        idle_before_close_ms: previous.close.ts_ns.saturating_sub(answer_ns).max(0) as f64 / 1e6,
        pause_ms: pause_ns.max(0) as f64 / 1e6,
        tls: tls_before_request,
        resumed: tls.is_some_and(|t| t.resumed == Some(true)),
        http: f.exchanges.iter().any(|x| x.http)
            || tls.is_some_and(|t| t.alpn.iter().any(|p| p == "h2" || p.starts_with("http/1"))),
        requested_close: previous.requested_close,
        answered_close: previous.answered_close,
        hello_held_ms: hello_held_ns(f) as f64 / 1e6,
        closed_together,
        closed_at_once,
        closed_elsewhere,
        server_idle_limit,
    };
    out.push(x);
}
