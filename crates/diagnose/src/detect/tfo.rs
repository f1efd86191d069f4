//! TCP Fast Open outcomes, from option 34 on the handshake.
//!
//! - `tfo_cookie_request`: the SYN carries an empty TFO option: the client
//!   has no cookie yet and asks for one (no saving on this connection).
//! - `tfo_accepted`: the SYN carries a cookie and data, and the SYN-ACK
//!   acknowledges the data: the request left with the SYN, saving 1 RTT.
//! - `tfo_rejected`: the SYN carried a cookie and data, the SYN-ACK only
//!   acknowledged the SYN: the data is sent again after the handshake; the
//!   RTT TFO would have saved is lost. The wait: the data, from its SYN to
//!   the segment that sends it again, released by the SYN-ACK (the kernel
//!   re-sends the refused data as soon as the SYN-ACK arrives,
//!   `tcp_rcv_fastopen_synack`); both are the client's packets, so the
//!   wait is on its clock at any vantage. Without the re-send in the
//!   capture there is no wait to cite, and no cost. Its phase is where
//!   the lost round trip shows: the first request's time to first byte
//!   when the SYN carried the request, the TLS handshake when it carried
//!   the ClientHello (that row starts at the SYN), else the TCP
//!   handshake. The re-send is no loss (retransmission.rs).
//!
//! Fix for rejections: on the server `net.ipv4.tcp_fastopen` with bit 2
//! (2 or 3) and the listener option (nginx `listen ... fastopen=256`,
//! HAProxy `bind ... tfo`); keep `net.ipv4.tcp_fastopen_key` stable across
//! servers; check for middleboxes stripping option 34.

use super::Facts;
use crate::model::{Detail, Direction, Finding, FindingKind, Phase, TfoOutcome, TlsMessage, Wait};

pub fn detect(f: &Facts<'_>, out: &mut Vec<Finding>) {
    let Some(tfo) = &f.report.handshake.tfo else {
        return;
    };
    let rtt_ms = f.rtt_ns.map(|r| r as f64 / 1e6).unwrap_or(0.0);
    let syn = f.report.handshake.syn_frame.unwrap_or(f.report.first_frame);
    let synack = f.report.handshake.syn_ack_frame;
    let mut frames = vec![syn];
    frames.extend(synack);
    let (kind, cost) = match tfo.outcome {
        TfoOutcome::CookieRequest => (FindingKind::TfoCookieRequest, 0.0),
        TfoOutcome::Accepted => (FindingKind::TfoAccepted, -rtt_ms),
        TfoOutcome::Rejected => (FindingKind::TfoRejected, rtt_ms),
        _ => return,
    };
    // The SYN's data was the first request: what TFO saves or loses shows
    // in that request's time to first byte; or the ClientHello: in the
    // TLS handshake's row, which starts at the SYN.
    let request_in_syn = f
        .exchanges
        .first()
        .is_some_and(|x| x.request_first.frame == syn);
    let hello_in_syn = f.report.tls.as_ref().is_some_and(|t| {
        t.messages
            .iter()
            .any(|m| m.message == TlsMessage::ClientHello && m.frame == syn)
    });
    let phase = if request_in_syn {
        Phase::FirstByte
    } else if hello_in_syn {
        Phase::TlsHandshake
    } else {
        Phase::TcpHandshake
    };
    let mut x = f.finding(kind, Some(phase));
    x.frames = frames;
    x.cost_ms = cost;
    if kind == FindingKind::TfoRejected {
        x.waits = resent_data(f, syn, synack).into_iter().collect();
        x.cost_ms = x.waits.iter().map(|w| w.ms).sum();
        x.frames.extend(x.waits.iter().map(|w| w.to_frame));
    }
    x.confidence = 1.0;
    x.detail = Detail::Tfo {
        outcome: tfo.outcome,
        syn_data_bytes: tfo.syn_data_bytes,
        server_sent_cookie: tfo.server_sent_cookie,
    };
    // Wireshark's fields of both TFO options: `tcp.options.tfo` alone is
    // only the IANA one (kind 34), not the experimental 254/0xF989 that
    // older stacks send.
    x.display_filter = format!(
        "tcp.stream eq {} && (tcp.options.tfo.request || tcp.options.tfo.cookie)",
        f.report.stream
    );
    out.push(x);
}

/// The refused SYN data's wait: from the SYN to the client's first data
/// segment after the SYN-ACK (the data sent again), released by the
/// SYN-ACK.
fn resent_data(f: &Facts<'_>, syn: u64, synack: Option<u64>) -> Option<Wait> {
    let synack = synack?;
    let client = Direction::ClientToServer;
    let syn_rec = f.record(syn)?;
    let again = f
        .timeline
        .iter()
        .find(|r| r.dir == client && r.frame > synack && r.len > 0 && !r.flags.syn())?;
    let ms = (f.on_clock_of(client, again) - f.on_clock_of(client, syn_rec)) as f64 / 1e6;
    Some(Wait {
        from_frame: syn,
        to_frame: again.frame,
        release_frame: Some(synack),
        ms,
    })
}
