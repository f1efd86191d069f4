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
use crate::model::{Finding, FindingKind, Phase, TfoOutcome};

pub fn detect(f: &Facts<'_>, out: &mut Vec<Finding>) {
    let Some(tfo) = &f.report.handshake.tfo else {
        return;
    };
    let rtt_ms = f.rtt_ns.map(|r| r as f64 / 1e6).unwrap_or(0.0);
    let syn = f.report.handshake.syn_frame.unwrap_or(f.report.first_frame);
    let synack = f.report.handshake.syn_ack_frame;
    let mut frames = vec![syn];
    frames.extend(synack);
    let (kind, cost, text) = match tfo.outcome {
        TfoOutcome::CookieRequest => (
            FindingKind::TfoCookieRequest,
            0.0,
            format!(
                "The client asked for a TFO cookie (empty option 34 on the SYN){}. This connection saves nothing; the next ones can carry data in the SYN.",
                if tfo.server_sent_cookie { " and the server sent one" } else { ", but the server sent none" }
            ),
        ),
        TfoOutcome::Accepted => (
            FindingKind::TfoAccepted,
            -rtt_ms,
            format!("The SYN carried {} bytes with a TFO cookie and the server accepted them: the request left with the SYN, saving one round trip.", tfo.syn_data_bytes),
        ),
        TfoOutcome::Rejected => (
            FindingKind::TfoRejected,
            rtt_ms,
            format!("The SYN carried {} bytes with a TFO cookie but the SYN-ACK acknowledged only the SYN: the server ignored the data and the client sent it again after the handshake.", tfo.syn_data_bytes),
        ),
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
    x.explanation = text;
    x.fix = match kind {
        FindingKind::TfoRejected => "Enable TFO on the server: sysctl net.ipv4.tcp_fastopen=3 (bit 2: server), the listener option (nginx: listen 443 ssl fastopen=256; HAProxy: bind ... tfo), a stable net.ipv4.tcp_fastopen_key across the fleet; check no middlebox strips TCP option 34.".into(),
        FindingKind::TfoCookieRequest => "Nothing on this connection; repeat visits can save 1 RTT if the server answers with a cookie (net.ipv4.tcp_fastopen=3 and listen ... fastopen=N).".into(),
        _ => "Working as intended.".into(),
    };
    x.display_filter = format!("tcp.stream eq {} && tcp.options.tfo", f.report.stream);
    out.push(x);
}
