//! `certificate_fetch` (detect/certificate_fetch.rs).
//!
//! > in the TLS handshake, between the server's flight reaching the
//! > client and the client's next flight, the client fetched over the
//! > network what it needed to check the server's certificate [...]
//! > captured at the client [...] a fetch of the same client that began
//! > (its name lookup's first query or its SYN when its connection was
//! > opened for it, else its request) after the flight's last segment and
//! > before the client's answer. The part of the turn from each such
//! > fetch's beginning to its answer's first segment (without an answer
//! > [...]: to the client's answer) is the wait [...] At least the
//! > think-time threshold [...] A fetch that began before the flight
//! > came [...] is not claimed: `client_think_time` keeps that time, as it
//! > keeps the client's own time before and after the fetch.
//!
//! > After the handshake: [...] the connection's first request, the
//! > client's first data after its Finished, left within the think-time
//! > threshold [...] of the answer to a fetch of the same client begun
//! > after the server's ServerHello and before the request. The wait runs
//! > from when the client could have sent the request (the later of its
//! > own Finished and the server's last handshake record before the
//! > request [...]) to the request; its cost is the part of it the
//! > fetches covered [...] outside the ledger's rows [...]: phase none.

use super::tls::*;
use super::*;
use crate::model::{CertificateCheck, Detail, FetchHeld, Phase, StatusStaple};
use FindingKind::{CertificateFetch, ClientThinkTime, TlsExtraRtt};

const RTT: f64 = 40.0;

/// The CA's round trip: another path than the server's.
const CA_RTT: f64 = 30.0;

const AIA_GET: &[u8] = b"GET /int.crt HTTP/1.1\r\nHost: ca.example\r\n\r\n";
const CERT_ANSWER: &[u8] =
    b"HTTP/1.1 200 OK\r\nContent-Type: application/pkix-cert\r\nContent-Length: 0\r\n\r\n";
const OCSP_POST: &[u8] = b"POST / HTTP/1.1\r\nHost: ocsp.example\r\nContent-Type: application/ocsp-request\r\nContent-Length: 0\r\n\r\n";
const OCSP_ANSWER: &[u8] =
    b"HTTP/1.1 200 OK\r\nContent-Type: application/ocsp-response\r\nContent-Length: 0\r\n\r\n";

/// A TLS 1.3 handshake captured on `path` whose client, `before` ms
/// after the server's flight arrived, opens a connection to the CA and
/// fetches with `request` (answered `answer`), then sends its Finished
/// `after` ms after the answer arrived. The flight's last segment, the
/// fetch, and the client's Finished.
fn tls13_fetching(
    path: Path,
    before: f64,
    request: &'static [u8],
    answer: &'static [u8],
    after: f64,
) -> (Wire, Id, Call, Id) {
    tls13_fetching_offering(path, before, request, answer, after, Offer::tls13())
}

/// [`tls13_fetching`] with the client's `offer`.
fn tls13_fetching_offering(
    path: Path,
    before: f64,
    request: &'static [u8],
    answer: &'static [u8],
    after: f64,
    offer: Offer,
) -> (Wire, Id, Call, Id) {
    let mut w = Wire::new(path);
    w.handshake(0.0);
    let (_, flight) = tls13_hello_and_flight(&mut w, RTT + 0.1, 0.2, offer);
    let last = *flight.last().unwrap();
    let arrived = w.arrival(last);
    w.ack(C, arrived);
    let fetch = w.fetch(50000, arrived + before, CA_RTT, request, answer, true);
    let fetched = w.sent(fetch.answer);
    let finished = w.send(C, fetched + after, leak(encrypted(FINISHED_LEN)));
    (w, last, fetch, finished)
}

#[test]
fn a_handshake_that_waited_for_its_clients_fetch_of_the_intermediate_is_that_fetchs_time() {
    let (w, last, fetch, finished) =
        tls13_fetching(Path::at_client(RTT), 2.0, AIA_GET, CERT_ANSWER, 1.5);
    let o = w.run();
    let f = o.the(CertificateFetch);
    assert_eq!(f.phase, Some(Phase::TlsHandshake));
    // From the fetch's SYN to its answer: the CA's handshake and its
    // request's round trip.
    assert_ms(
        f.cost_ms,
        2.0 * CA_RTT + 0.1,
        0.2,
        "the fetch's two round trips",
    );
    assert_eq!(f.waits, vec![o.wait(last, finished, None, f.cost_ms)]);
    assert_eq!(
        f.frames,
        o.frames(&[
            last,
            fetch.syn.unwrap(),
            fetch.request,
            fetch.answer,
            finished
        ])
    );
    assert!(
        f.display_filter.contains("tcp.stream eq 1"),
        "{}",
        f.display_filter
    );
    let Detail::CertificateFetch {
        held: FetchHeld::Handshake { turns },
        what,
        url,
        answered,
        connected,
        fetches,
        ..
    } = &f.detail
    else {
        panic!("{:?}", f.detail);
    };
    assert_eq!(
        (*turns, *what, url.as_str(), *answered, *connected, *fetches),
        (
            1,
            CertificateCheck::Intermediate,
            "http://ca.example/int.crt",
            true,
            true,
            1
        )
    );
    // The client's 3.5 ms around it is a host's turnaround, no cause.
    o.has_no(ClientThinkTime);
    let Detail::TlsExtraRtt { causes, .. } = &o.the(TlsExtraRtt).detail else {
        panic!("tls_extra_rtt without its detail");
    };
    assert_eq!(causes.first().map(|c| c.0), Some(CertificateFetch));
}

#[test]
fn the_clients_own_time_before_and_after_the_fetch_stays_client_think_time() {
    let (w, ..) = tls13_fetching(Path::at_client(RTT), 25.0, AIA_GET, CERT_ANSWER, 40.0);
    let o = w.run();
    assert_ms(
        o.the(CertificateFetch).cost_ms,
        2.0 * CA_RTT + 0.1,
        0.2,
        "the fetch",
    );
    assert_ms(
        o.the(ClientThinkTime).cost_ms,
        65.0,
        0.5,
        "25 ms before it, 40 after",
    );
}

#[test]
fn an_ocsp_post_on_an_open_connection_is_a_revocation_check() {
    let mut w = Wire::new(Path::at_client(RTT));
    w.handshake(0.0);
    let took = Turnarounds {
        client: 1.0 + CA_RTT + 1.0,
        ..Default::default()
    };
    // The POST leaves 1 ms after the flight arrived, on a connection to
    // the responder the client had open: one round trip to it.
    let hs = tls12_handshake(&mut w, RTT + 0.1, took, true, false);
    let last = *hs.flight.last().unwrap();
    w.fetch(
        50000,
        w.arrival(last) + 1.0,
        CA_RTT,
        OCSP_POST,
        OCSP_ANSWER,
        false,
    );
    let o = w.run();
    let f = o.the(CertificateFetch);
    assert_ms(f.cost_ms, CA_RTT, 0.2, "the POST's round trip");
    let Detail::CertificateFetch {
        what, connected, ..
    } = &f.detail
    else {
        panic!("{:?}", f.detail);
    };
    assert_eq!((*what, *connected), (CertificateCheck::Ocsp, false));
}

#[test]
fn a_fetch_told_by_its_answers_type_alone_counts() {
    // Let's Encrypt serves its intermediates at `http://r10.i.lencr.org/`:
    // no suffix; the answer's type says what it was. (Its URL is then
    // named by the server's address: the head is not kept for every
    // request.)
    const LENCR: &[u8] = b"GET / HTTP/1.1\r\nHost: r10.i.lencr.org\r\n\r\n";
    let (w, ..) = tls13_fetching(Path::at_client(RTT), 2.0, LENCR, CERT_ANSWER, 1.5);
    let o = w.run();
    let Detail::CertificateFetch { what, url, .. } = &o.the(CertificateFetch).detail else {
        panic!();
    };
    assert_eq!(
        (*what, url.as_str()),
        (CertificateCheck::Intermediate, "http://10.0.3.3/")
    );
}

#[test]
fn a_name_lookup_before_the_fetch_is_part_of_it() {
    let mut w = Wire::new(Path::at_client(RTT));
    w.handshake(0.0);
    let (_, flight) = tls13_hello_and_flight(&mut w, RTT + 0.1, 0.2, Offer::tls13());
    let last = *flight.last().unwrap();
    let arrived = w.arrival(last);
    w.ack(C, arrived);
    // The CA's name, looked up in 10 ms, then its connection.
    let ca: IpAddr = CA.parse().unwrap();
    let query = w.dns(arrived + 1.0, 5353, 7, "ca.example", 1, None);
    w.dns_with(
        arrived + 11.0,
        5353,
        7,
        "ca.example",
        1,
        Some((0, 0)),
        Some(ca),
    );
    let fetch = w.fetch(50000, arrived + 11.5, CA_RTT, AIA_GET, CERT_ANSWER, true);
    let finished = w.send(C, w.sent(fetch.answer) + 1.0, leak(encrypted(FINISHED_LEN)));
    let o = w.run();
    let f = o.the(CertificateFetch);
    assert_ms(
        f.cost_ms,
        10.5 + 2.0 * CA_RTT + 0.1,
        0.2,
        "the lookup and the fetch",
    );
    assert!(f.frames.contains(&o.frame(query)), "{:?}", f.frames);
    assert_eq!(f.waits, vec![o.wait(last, finished, None, f.cost_ms)]);
}

#[test]
fn a_fetch_that_never_got_its_answer_held_the_client_until_it_gave_up() {
    let (w, _, fetch, _) = tls13_fetching(Path::at_client(RTT), 2.0, OCSP_POST, OCSP_ANSWER, 1.5);
    // The responder's answer never came: the client went on at the same
    // moment, on its own timer.
    let o = w.run_missing(&[fetch.answer]);
    let f = o.the(CertificateFetch);
    assert_ms(
        f.cost_ms,
        2.0 * CA_RTT + 0.1 + 1.5,
        0.2,
        "to the client's answer",
    );
    let Detail::CertificateFetch { answered, .. } = &f.detail else {
        panic!();
    };
    assert!(!answered);
}

#[test]
fn near_misses_leave_the_time_to_client_think_time_or_to_nobody() {
    // Another request during the wait: a page, not a certificate.
    const PAGE: &[u8] = b"GET /index.html HTTP/1.1\r\nHost: ca.example\r\n\r\n";
    const HTML: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 0\r\n\r\n";
    let (w, ..) = tls13_fetching(Path::at_client(RTT), 2.0, PAGE, HTML, 1.5);
    let o = w.run();
    o.has_no(CertificateFetch);
    assert_ms(
        o.the(ClientThinkTime).cost_ms,
        2.0 * CA_RTT + 3.6,
        0.3,
        "all of it",
    );

    // A fetch that began before the server's flight came: another
    // handshake's, which this one cannot be told to have caused.
    let mut w = Wire::new(Path::at_client(RTT));
    w.handshake(0.0);
    let (_, flight) = tls13_hello_and_flight(&mut w, RTT + 0.1, 0.2, Offer::tls13());
    let arrived = w.arrival(*flight.last().unwrap());
    w.ack(C, arrived);
    let fetch = w.fetch(50000, arrived - 5.0, CA_RTT, AIA_GET, CERT_ANSWER, true);
    w.send(C, w.sent(fetch.answer) + 1.0, leak(encrypted(FINISHED_LEN)));
    let o = w.run();
    o.has_no(CertificateFetch);
    o.the(ClientThinkTime);

    // A fetch from a CA next door: shorter than a host's turnaround.
    let mut w = Wire::new(Path::at_client(RTT));
    w.handshake(0.0);
    let (_, flight) = tls13_hello_and_flight(&mut w, RTT + 0.1, 0.2, Offer::tls13());
    let arrived = w.arrival(*flight.last().unwrap());
    w.ack(C, arrived);
    let fetch = w.fetch(50000, arrived + 0.5, 2.0, AIA_GET, CERT_ANSWER, true);
    w.send(C, w.sent(fetch.answer) + 0.5, leak(encrypted(FINISHED_LEN)));
    let o = w.run();
    o.has_no(CertificateFetch);
    o.has_no(ClientThinkTime);

    // Captured away from the client: the fetch's times are another
    // path's, not placed in the turn.
    for path in [Path::at_server(RTT), Path::mid(RTT, 0.5)] {
        let (w, ..) = tls13_fetching(path, 2.0, AIA_GET, CERT_ANSWER, 1.5);
        w.run().has_no(CertificateFetch);
    }
}

/// The CA's round trip when the fetch outlasts the handshake.
const FAR_CA_RTT: f64 = 150.0;

/// A TLS 1.2 handshake captured on `path` whose client sends its key
/// exchange 1 ms after the server's flight arrived and, `before` ms after
/// that arrival, begins an OCSP fetch to a CA [`FAR_CA_RTT`] away on a
/// connection of its own; its first request leaves `after` ms after the
/// fetch's answer arrived (or, with `false_start`, right behind its
/// Finished), answered a round trip later. The server's Finished, the
/// fetch, and the request.
fn tls12_checked_beside(
    path: Path,
    before: f64,
    after: f64,
    false_start: bool,
) -> (Wire, Id, Call, Id) {
    let (w, hs, fetch, request) =
        tls12_checked_beside_offering(path, before, after, false_start, Offer::tls12(), false);
    (w, hs.server_finished, fetch, request)
}

/// [`tls12_checked_beside`] with the client's `offer`, and a stapled
/// status in the server's flight with `staple`; the handshake's packets.
fn tls12_checked_beside_offering(
    path: Path,
    before: f64,
    after: f64,
    false_start: bool,
    offer: Offer,
    staple: bool,
) -> (Wire, Tls12, Call, Id) {
    let mut w = Wire::new(path);
    w.handshake(0.0);
    let took = Turnarounds {
        client: 1.0,
        finished: 0.2,
        ..Default::default()
    };
    let hs = tls12_handshake_offering(&mut w, RTT + 0.1, took, true, false_start, offer, staple);
    let arrived = w.arrival(*hs.flight.last().unwrap());
    let fetch = w.fetch(
        50000,
        arrived + before,
        FAR_CA_RTT,
        OCSP_POST,
        OCSP_ANSWER,
        true,
    );
    w.ack(C, w.arrival(hs.server_finished));
    let request = match hs.early_request {
        Some(r) => r,
        None => w.send(C, w.sent(fetch.answer) + after, leak(record(23, &[7; 300]))),
    };
    let answer = w.send(S, w.arrival(request) + 0.5, leak(record(23, &[8; 900])));
    w.ack(C, w.arrival(answer));
    (w, hs, fetch, request)
}

#[test]
fn a_first_request_held_after_the_handshake_for_the_check_is_the_fetchs_time_outside_the_ledger() {
    // Chrome with Windows' verifier (many-protocols.pcap, stream 2): the
    // key exchange at once, the OCSP lookup beside it, the request after
    // the answer.
    let (w, server_finished, fetch, request) =
        tls12_checked_beside(Path::at_client(RTT), 1.5, 2.0, false);
    // (At the client: the server's packets as they arrive, the fetch's
    // as they leave or arrive.)
    let expected = w.sent(fetch.answer) - w.arrival(server_finished);
    let o = w.run();
    let f = o.the(CertificateFetch);
    assert_eq!(
        f.phase, None,
        "between the handshake and the request: no row"
    );
    assert_eq!(f.attributed_ms, 0.0, "never part of the excess");
    // From the server's Finished reaching the client to the OCSP answer:
    // the fetch's two round trips less the handshake's rest (the key
    // exchange's round trip to the server), which went on beside it.
    assert!(expected > 200.0, "{expected}");
    assert_ms(f.cost_ms, expected, 0.01, "Finished to the answer");
    assert_eq!(
        f.waits,
        vec![o.wait(server_finished, request, None, f.cost_ms)]
    );
    for id in [
        server_finished,
        fetch.syn.unwrap(),
        fetch.request,
        fetch.answer,
        request,
    ] {
        assert!(f.frames.contains(&o.frame(id)), "{id:?} in {:?}", f.frames);
    }
    let Detail::CertificateFetch {
        held: FetchHeld::FirstRequest { after_ms },
        what,
        answered,
        connected,
        ..
    } = &f.detail
    else {
        panic!("{:?}", f.detail);
    };
    assert_ms(
        *after_ms,
        2.0,
        0.01,
        "the client's turnaround after the answer",
    );
    assert_eq!(
        (*what, *answered, *connected),
        (CertificateCheck::Ocsp, true, true)
    );
    // The handshake did not wait: its client turn was 1 ms.
    o.has_no(ClientThinkTime);
    o.has_no(TlsExtraRtt);
}

#[test]
fn a_request_the_check_did_not_hold_is_nobodys_wait() {
    // The request left 300 ms after the answer: the client had other
    // reasons (its user, its page) to wait.
    let (w, ..) = tls12_checked_beside(Path::at_client(RTT), 1.5, 300.0, false);
    w.run().has_no(CertificateFetch);
    // False Start: the request left behind the client's Finished, long
    // before the answer: nothing was held.
    let (w, ..) = tls12_checked_beside(Path::at_client(RTT), 1.5, 0.0, true);
    w.run().has_no(CertificateFetch);
    // The fetch answered before the server's Finished came: the request
    // waited for the handshake, not for the check.
    let mut w = Wire::new(Path::at_client(RTT));
    w.handshake(0.0);
    let took = Turnarounds {
        client: 1.0,
        finished: 0.2,
        ..Default::default()
    };
    let hs = tls12_handshake(&mut w, RTT + 0.1, took, true, false);
    let arrived = w.arrival(*hs.flight.last().unwrap());
    w.fetch(50000, arrived + 1.5, 10.0, OCSP_POST, OCSP_ANSWER, true);
    w.send(
        C,
        w.arrival(hs.server_finished) + 0.5,
        leak(record(23, &[7; 300])),
    );
    w.run().has_no(CertificateFetch);
    // Captured away from the client.
    for path in [Path::at_server(RTT), Path::mid(RTT, 0.5)] {
        let (w, ..) = tls12_checked_beside(path, 1.5, 2.0, false);
        w.run().has_no(CertificateFetch);
    }
}

#[test]
fn a_check_in_the_handshakes_turn_is_not_counted_again_after_it() {
    // TLS 1.3: the fetch held the client's Finished; the request left
    // with it. One finding, in the handshake.
    let (mut w, _, _, finished) =
        tls13_fetching(Path::at_client(RTT), 2.0, AIA_GET, CERT_ANSWER, 1.5);
    let request = w.send(C, w.sent(finished) + 0.05, leak(record(23, &[7; 300])));
    let answer = w.send(S, w.arrival(request) + 0.5, leak(record(23, &[8; 900])));
    w.ack(C, w.arrival(answer));
    let o = w.run();
    assert_eq!(o.the(CertificateFetch).phase, Some(Phase::TlsHandshake));
}

/// The staple a revocation fetch's finding reports, and the frames it
/// cites for it.
fn staple_of(o: &Outcome) -> (StatusStaple, Vec<u64>) {
    let f = o.the(CertificateFetch);
    let Detail::CertificateFetch { staple, .. } = &f.detail else {
        panic!("{:?}", f.detail);
    };
    (*staple, f.frames.clone())
}

#[test]
fn a_revocation_fetch_says_whether_the_client_asked_for_a_staple_and_the_server_sent_one() {
    let asking = Offer {
        status_request: true,
        ..Offer::tls12()
    };
    // (The flight's last segment completes its ServerKeyExchange, and
    // the CertificateStatus when there is one: each is after the 2.5 KB
    // certificate.)
    for (offer, stapled) in [(Offer::tls12(), false), (asking, false), (asking, true)] {
        let (w, hs, ..) =
            tls12_checked_beside_offering(Path::at_client(RTT), 1.5, 2.0, false, offer, stapled);
        let o = w.run();
        let (ch, last) = (o.frame(hs.ch), o.frame(*hs.flight.last().unwrap()));
        let (staple, frames) = staple_of(&o);
        let (want, cited) = match (offer.status_request, stapled) {
            (false, _) => (StatusStaple::NotAsked { client_hello: ch }, vec![ch]),
            (true, false) => (
                StatusStaple::NotStapled {
                    client_hello: ch,
                    flight: last,
                },
                vec![ch, last],
            ),
            (true, true) => (StatusStaple::Stapled { status: last }, vec![last]),
        };
        assert_eq!(staple, want);
        assert!(
            cited.iter().all(|c| frames.contains(c)),
            "{cited:?} in {frames:?}"
        );
    }
    // TLS 1.3 staples inside the encrypted Certificate: asked, unseen.
    let (w, ..) = tls13_fetching_offering(
        Path::at_client(RTT),
        2.0,
        OCSP_POST,
        OCSP_ANSWER,
        1.5,
        Offer {
            status_request: true,
            ..Offer::tls13()
        },
    );
    let o = w.run();
    let (staple, frames) = staple_of(&o);
    let StatusStaple::Unseen { client_hello } = staple else {
        panic!("{staple:?}");
    };
    assert!(frames.contains(&client_hello), "{frames:?}");
    // An intermediate's fetch: no staple would have spared it; the
    // ClientHello is not cited (the first spec's frames are exact).
}
