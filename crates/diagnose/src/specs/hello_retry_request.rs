//! `hello_retry_request` (detect/hello_retry_request.rs).
//!
//! > Signature: ServerHello random = SHA-256("HelloRetryRequest"); the
//! > client sends a second ClientHello with a key share for the group the
//! > server named. Cost: one extra round trip (counted in the handshake's
//! > ideal), paid only when that second ClientHello was sent [...].

use super::tls::*;
use super::*;
use crate::model::Phase;
use FindingKind::HelloRetryRequest;

const RTT: f64 = 40.0;

/// The client offers an x25519 share; the server answers with
/// `random` naming secp256r1; the client sends a second ClientHello with
/// a secp256r1 share, and the handshake completes.
fn retry(path: Path, random: [u8; 32]) -> (Outcome, [Id; 3]) {
    retry_to(path, random, SECP256R1, 0.0)
}

/// Like [`retry`], the server naming `group`, the client `turn_ms` on
/// each of its turns after the retry (its second ClientHello, its
/// Finished).
fn retry_to(path: Path, random: [u8; 32], group: u16, turn_ms: f64) -> (Outcome, [Id; 3]) {
    let mut w = Wire::new(path);
    w.handshake(0.0);
    let ch = w.send(C, 40.1, leak(client_hello(Offer::tls13())));
    let hrr = w.send(
        S,
        w.arrival(ch) + 0.5,
        leak(handshake_record(&[server_hello(
            true, random, group, false,
        )])),
    );
    let second = Offer {
        group,
        ..Offer::tls13()
    };
    let ch2 = w.send(C, w.arrival(hrr) + turn_ms, leak(client_hello(second)));
    let flight: Vec<Id> = segments(&tls13_server_flight(2000, false))
        .into_iter()
        .enumerate()
        .map(|(i, s)| w.send(S, w.arrival(ch2) + 0.5 + i as f64 * 0.01, s))
        .collect();
    w.send(
        C,
        w.arrival(*flight.last().unwrap()) + turn_ms,
        leak(encrypted(FINISHED_LEN)),
    );
    (w.run(), [ch, hrr, ch2])
}

#[test]
fn a_server_hello_with_the_retry_random_is_a_hello_retry_request_costing_a_round_trip() {
    for path in Path::all(RTT) {
        let (o, ids) = retry(path, HRR_RANDOM);
        let f = o.the(HelloRetryRequest);
        assert_eq!(f.phase, Some(Phase::TlsHandshake));
        assert_eq!(f.frames, o.frames(&ids));
        assert_ms(f.cost_ms, RTT, 1e-6, "one more round trip");
        // The ideal already prices it in: no share of the excess.
        assert_eq!(f.attributed_ms, 0.0);
    }
}

#[test]
fn a_server_hello_with_any_other_random_is_not_a_retry() {
    let mut almost = HRR_RANDOM;
    almost[31] ^= 1;
    for random in [[0x33; 32], almost] {
        retry(Path::at_client(RTT), random)
            .0
            .has_no(HelloRetryRequest);
    }
}

#[test]
fn a_retry_the_client_closed_on_instead_of_answering_cost_nothing() {
    // The client had already given up (its FIN left before the retry
    // arrived) and resets: no second ClientHello, no round trip paid.
    let mut w = Wire::new(Path::at_client(RTT));
    w.handshake(0.0);
    let ch = w.send(C, 40.1, leak(client_hello(Offer::tls13())));
    w.fin(C, 60.0);
    let hrr = w.send(
        S,
        w.arrival(ch) + 0.5,
        leak(handshake_record(&[server_hello(
            true, HRR_RANDOM, SECP256R1, false,
        )])),
    );
    w.rst(C, w.arrival(hrr) + 0.1);
    w.run().has_no(HelloRetryRequest);
}

/// A retry to a group whose arithmetic costs many times x25519's
/// (secp521r1), the client 40 ms on each of its turns after it: its
/// `client_think_time` names the group (nDPI's dnscrypt-v2-doh 18: its
/// turns 34 and 60 ms on secp521r1, its x25519 handshakes' under 3 ms);
/// a retry to secp256r1 with the same turns does not.
#[test]
fn a_clients_slow_turns_after_a_retry_to_a_costly_group_name_it() {
    for (group, costly) in [(0x0019, Some("secp521r1")), (SECP256R1, None)] {
        let (o, _) = retry_to(Path::at_client(RTT), HRR_RANDOM, group, 40.0);
        let x = o.the(crate::model::FindingKind::ClientThinkTime);
        let crate::model::Detail::ClientThinkTime {
            turns,
            costly_key_exchange,
            ..
        } = &x.detail
        else {
            panic!("{:?}", x.detail)
        };
        assert_eq!(*turns, 2, "{x:?}");
        let named = match costly_key_exchange {
            Some(crate::model::CostlyKeyExchange::Group(g)) => Some(g.as_str()),
            _ => None,
        };
        assert_eq!(named, costly, "group {group:#06x}");
    }
}
