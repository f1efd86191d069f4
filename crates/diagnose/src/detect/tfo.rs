//! TCP Fast Open outcomes, from option 34 on the handshake.
//!
//! - `tfo_cookie_request`: the SYN carries an empty TFO option: the client
//!   has no cookie yet and asks for one (no saving on this connection).
//! - `tfo_accepted`: the SYN carries a cookie and data, and the SYN-ACK
//!   acknowledges the data: the request left with the SYN, saving 1 RTT.
//! - `tfo_rejected`: the SYN carried a cookie and data, the SYN-ACK only
//!   acknowledged the SYN: the data is sent again after the handshake; the
//!   RTT TFO would have saved is lost.
//!
//! Fix for rejections: on the server `net.ipv4.tcp_fastopen` with bit 2
//! (2 or 3) and the listener option (nginx `listen ... fastopen=256`,
//! HAProxy `bind ... tfo`); keep `net.ipv4.tcp_fastopen_key` stable across
//! servers; check for middleboxes stripping option 34.

use super::Facts;
use crate::model::{Detail, Finding, FindingKind, Phase, TfoOutcome};

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
    // in that request's time to first byte.
    let request_in_syn = f
        .exchanges
        .first()
        .is_some_and(|x| x.request_first.frame == syn);
    let phase = if request_in_syn {
        Phase::FirstByte
    } else {
        Phase::TcpHandshake
    };
    let mut x = f.finding(kind, Some(phase));
    x.frames = frames;
    x.cost_ms = cost;
    x.confidence = 1.0;
    x.detail = Detail::Tfo {
        outcome: tfo.outcome,
        syn_data_bytes: tfo.syn_data_bytes,
        server_sent_cookie: tfo.server_sent_cookie,
    };
    x.display_filter = format!("tcp.stream eq {} && tcp.options.tfo", f.report.stream);
    out.push(x);
}
