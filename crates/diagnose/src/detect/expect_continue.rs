//! `expect_continue_wait` — the client held a request's body for the
//! server's interim `100 Continue` (RFC 9110 10.1.1), and none came: the
//! body left when the client's own timer gave up waiting (curl: 1 s, for
//! bodies over 1 MB; Go's `Transport.ExpectContinueTimeout`; .NET's
//! `Expect100ContinueTimeout`), not when anything arrived. A server that
//! does not answer the expectation (an HTTP/1.0 one, many small ones)
//! makes every large upload wait that long.
//!
//! Signature, on the client's clock: an HTTP/1.1 request whose first
//! segment carries its head alone, with `Expect: 100-continue`
//! (`Exchange::expects_continue`); the client's next new data of that
//! request (the body) leaves at least a round trip later (sooner, no
//! `100 Continue` could have come: the client's own pace) and at least
//! 2 ms; no server data comes between them (an interim or final response
//! would have begun the exchange's response), and the body does not
//! leave right after a server packet arrived (`Facts::released_by`: a
//! pure ACK that released it is Nagle's, not a timer's).
//! The wait: from the head's segment to the body's first segment, with no
//! releasing packet (the client's timer ended it). Cost: the wait: sent
//! at once, the body would not have waited at all.
//! Fix: send the body without the expectation (an empty `Expect:` header),
//! or a server that answers `100 Continue`.

use super::causality::EXCESS_FLOOR_NS;
use super::Facts;
use crate::model::{Detail, Direction, Finding, FindingKind, Phase, Wait};

pub fn detect(f: &Facts<'_>, out: &mut Vec<Finding>) {
    let Some(rtt) = f.rtt_ns else { return };
    let client = Direction::ClientToServer;
    for (i, x) in f.exchanges.iter().enumerate() {
        if !x.expects_continue || x.request_last.frame == x.request_first.frame {
            continue;
        }
        // The head's segment, then the request's next new data.
        let span = f.between(x.request_first.frame, x.request_last.frame + 1);
        let Some(head) = span
            .iter()
            .find(|r| r.dir == client && r.frame == x.request_first.frame)
        else {
            continue;
        };
        // (No server data comes before it: a `100 Continue` or a final
        // response would have begun this exchange's response, and the body
        // would be a request of its own.)
        let after_head = span.iter().skip_while(|r| r.frame <= head.frame);
        let mut last_server = None;
        let mut body = None;
        for r in after_head {
            if r.dir != client {
                last_server = Some(r);
            } else if r.len > 0 && r.new_data {
                body = Some(r);
                break;
            }
        }
        let Some(body) = body else { continue };
        let (t_head, t_body) = (f.on_clock_of(client, head), f.on_clock_of(client, body));
        let silence = t_body - t_head;
        if silence < rtt.max(EXCESS_FLOOR_NS) {
            continue;
        }
        let released = last_server.is_some_and(|a| {
            f.released_by(client, t_body, f.on_clock_of(client, a)) && f.can_release(a, body)
        });
        if released {
            continue;
        }
        let n = i as u32 + 1;
        let mut finding = f.finding(FindingKind::ExpectContinueWait, Some(Phase::FirstByte));
        finding.frames = vec![head.frame, body.frame];
        finding.display_filter = f.filter_frames(&finding.frames);
        finding.cost_ms = silence as f64 / 1e6;
        finding.confidence = 0.9;
        finding.detail = Detail::ExpectContinueWait {
            exchange: n,
            request: x.label.clone(),
            head_frame: head.frame,
            body_frame: body.frame,
        };
        finding.waits = vec![Wait {
            from_frame: head.frame,
            to_frame: body.frame,
            release_frame: None,
            ms: finding.cost_ms,
        }];
        out.push(finding);
    }
}
