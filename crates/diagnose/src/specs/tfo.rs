//! `tfo_cookie_request`, `tfo_accepted`, `tfo_rejected` (detect/tfo.rs).
//!
//! > - `tfo_cookie_request`: the SYN carries an empty TFO option: the
//! >   client has no cookie yet and asks for one (no saving on this
//! >   connection).
//! > - `tfo_accepted`: the SYN carries a cookie and data, and the SYN-ACK
//! >   acknowledges the data: the request left with the SYN, saving 1 RTT.
//! > - `tfo_rejected`: the SYN carried a cookie and data, the SYN-ACK only
//! >   acknowledged the SYN: the data is sent again after the handshake;
//! >   the RTT TFO would have saved is lost.
//!
//! docs/findings.md: cost 0, -1 RTT, +1 RTT (time to first byte when the
//! SYN carried the request, the TLS handshake when it carried the
//! ClientHello). The second sending is no retransmission: nothing was
//! lost.

use rttdoc_wire::Tfo;

use super::*;
use crate::model::{Detail, Phase};
use FindingKind::{TfoAccepted, TfoCookieRequest, TfoRejected};

const RTT: f64 = 40.0;
const GET: &[u8] = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n";

fn all_tfo(o: &Outcome) -> Vec<FindingKind> {
    o.kinds()
        .into_iter()
        .filter(|k| matches!(k, TfoAccepted | TfoCookieRequest | TfoRejected))
        .collect()
}

#[test]
fn a_syn_asking_for_a_cookie_is_a_tfo_cookie_request() {
    let mut w = Wire::new(Path::at_client(RTT));
    let syn = w.syn(0.0);
    w.edit(syn, |s| s.options.tfo = Some(Tfo::CookieRequest));
    let sa = w.syn_ack(w.arrival(syn));
    w.edit(sa, |s| s.options.tfo = Some(Tfo::Cookie { len: 8 }));
    w.ack(C, w.arrival(sa));
    let o = w.run();
    let f = o.the(TfoCookieRequest);
    assert_eq!(f.phase, Some(Phase::TcpHandshake));
    assert_eq!(f.frames, o.frames(&[syn, sa]));
    assert_eq!(f.cost_ms, 0.0, "nothing saved on this connection");
    assert_eq!(all_tfo(&o), vec![TfoCookieRequest]);
}

/// A SYN with a cookie and the request; the server takes the data
/// (`accept`) or ignores it, and the client sends it again after the
/// handshake. The server answers the request 1 ms after it has it.
fn tfo(path: Path, accept: bool) -> (Outcome, Id, Id) {
    let mut w = Wire::new(path);
    let syn = w.syn_data(0.0, Tfo::Cookie { len: 8 }, GET);
    let sa = w.syn_ack(w.arrival(syn));
    if !accept {
        let one = w.abs_seq(C, 1);
        w.edit(sa, |s| s.ack = one);
    }
    if accept {
        let resp = w.send(S, w.sent(sa) + 1.0, b"HTTP/1.1 200 OK\r\n\r\n");
        w.ack(C, w.arrival(resp));
    } else {
        w.ack(C, w.arrival(sa));
        let again = w.send_at(C, w.arrival(sa), 1, GET);
        let resp = w.send(S, w.arrival(again) + 1.0, b"HTTP/1.1 200 OK\r\n\r\n");
        w.ack(C, w.arrival(resp));
    }
    (w.run(), syn, sa)
}

#[test]
fn data_in_the_syn_acknowledged_by_the_syn_ack_is_tfo_accepted_saving_a_round_trip() {
    for path in Path::all(RTT) {
        let (o, syn, sa) = tfo(path, true);
        let f = o.the(TfoAccepted);
        // The request rode in the SYN: the saving shows in its first byte.
        assert_eq!(f.phase, Some(Phase::FirstByte));
        assert_eq!(f.frames, o.frames(&[syn, sa]));
        assert_ms(f.cost_ms, -RTT, 1e-6, "one round trip saved");
        assert_eq!(all_tfo(&o), vec![TfoAccepted]);
    }
}

#[test]
fn data_in_the_syn_the_syn_ack_does_not_acknowledge_is_tfo_rejected_losing_a_round_trip() {
    for path in Path::all(RTT) {
        let (o, syn, sa, again) = tfo_rejected(path);
        let f = o.the(TfoRejected);
        assert_eq!(f.phase, Some(Phase::FirstByte));
        assert_eq!(f.frames, o.frames(&[syn, sa, again]));
        assert_ms(f.cost_ms, RTT, 1e-6, "the round trip TFO would have saved");
        // The data waited from its SYN until it was sent again, released
        // by the SYN-ACK; cost = that wait (causality rule 4).
        assert_waits(&f.waits, &[o.wait(syn, again, Some(sa), RTT)], 1e-6);
        assert_cost_is_its_waits(f);
        assert_eq!(all_tfo(&o), vec![TfoRejected]);
        // The kernel sent the refused data again as the SYN-ACK came:
        // refused, not lost.
        o.has_no(FindingKind::Retransmission);
    }
}

#[test]
fn a_refused_client_hello_costs_the_tls_handshake_its_round_trip() {
    // curl --tcp-fastopen over TLS: the ClientHello rides in the SYN, the
    // server ignores it; the TLS handshake's row starts at the SYN, and
    // its extra round trip is the rejection's.
    use super::tls::*;
    for path in Path::all(RTT) {
        let mut w = Wire::new(path);
        let syn = w.syn_data(
            0.0,
            Tfo::Cookie { len: 8 },
            leak(client_hello(Offer::tls13())),
        );
        let sa = w.syn_ack(w.arrival(syn));
        let one = w.abs_seq(C, 1);
        w.edit(sa, |s| s.ack = one);
        let again = w.send_at(C, w.arrival(sa), 1, leak(client_hello(Offer::tls13())));
        let flight: Vec<Id> = segments(&tls13_server_flight(2000, false))
            .into_iter()
            .map(|s| w.send(S, w.arrival(again) + 0.5, s))
            .collect();
        w.send(
            C,
            w.arrival(*flight.last().unwrap()),
            leak(encrypted(FINISHED_LEN)),
        );
        let o = w.run();
        let f = o.the(TfoRejected);
        assert_eq!(f.phase, Some(Phase::TlsHandshake));
        assert_waits(&f.waits, &[o.wait(syn, again, Some(sa), RTT)], 1e-6);
        assert_ms(
            f.attributed_ms,
            RTT,
            1e-6,
            "the handshake's extra round trip",
        );
        o.has_no(FindingKind::Retransmission);
        // What the handshake names as its cause.
        let Detail::TlsExtraRtt { causes, .. } = &o.the(FindingKind::TlsExtraRtt).detail else {
            panic!("tls_extra_rtt's detail")
        };
        assert_eq!(causes.first().map(|c| c.0), Some(TfoRejected));
    }
}

/// A refused SYN's data, sent again once the SYN-ACK arrived: the
/// outcome, the SYN, the SYN-ACK and the data's second sending.
fn tfo_rejected(path: Path) -> (Outcome, Id, Id, Id) {
    let mut w = Wire::new(path);
    let syn = w.syn_data(0.0, Tfo::Cookie { len: 8 }, GET);
    let sa = w.syn_ack(w.arrival(syn));
    let one = w.abs_seq(C, 1);
    w.edit(sa, |s| s.ack = one);
    w.ack(C, w.arrival(sa));
    let again = w.send_at(C, w.arrival(sa), 1, GET);
    let resp = w.send(S, w.arrival(again) + 1.0, b"HTTP/1.1 200 OK\r\n\r\n");
    w.ack(C, w.arrival(resp));
    (w.run(), syn, sa, again)
}

#[test]
fn a_rejected_syn_whose_data_is_never_seen_again_cites_no_wait_and_costs_nothing() {
    let mut w = Wire::new(Path::at_client(RTT));
    let syn = w.syn_data(0.0, Tfo::Cookie { len: 8 }, GET);
    let sa = w.syn_ack(w.arrival(syn));
    let one = w.abs_seq(C, 1);
    w.edit(sa, |s| s.ack = one);
    w.ack(C, w.arrival(sa));
    let o = w.run();
    let f = o.the(TfoRejected);
    assert!(f.waits.is_empty());
    assert_eq!(
        f.cost_ms, 0.0,
        "no wait captured, no cost (causality rule 4)"
    );
}

#[test]
fn a_syn_without_the_tfo_option_says_nothing_of_tfo() {
    let mut w = Wire::new(Path::at_client(RTT));
    w.handshake(0.0);
    assert!(all_tfo(&w.run()).is_empty());
}

#[test]
fn a_cookie_without_data_saves_and_loses_nothing() {
    let mut w = Wire::new(Path::at_client(RTT));
    let syn = w.syn(0.0);
    w.edit(syn, |s| s.options.tfo = Some(Tfo::Cookie { len: 8 }));
    let sa = w.syn_ack(w.arrival(syn));
    w.ack(C, w.arrival(sa));
    assert!(all_tfo(&w.run()).is_empty());
}
