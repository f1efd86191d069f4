//! `path_stall` (detect/path_stall.rs).
//!
//! > the client's path stalled: for a while nothing reached the client
//! > from any server, then what the path had held came at once [...].
//! > Signature: a silence of the client's downlink, no packet from any
//! > server, of at least 20 ms, then, within 10 ms of its end, packets
//! > of two servers or more, pure ACKs of client data sent 20 ms or
//! > more apart, each 20 ms or more later than its connection's quickest
//! > before. An answer of this connection's server captured in that
//! > release, later than a round trip after what it answered, was held
//! > from the later of the stall's beginning (the silence's, or as long
//! > before its end as the less late witness was late) and one round
//! > trip after its question, to its arrival. Cost: the waits' sum;
//! > `server_think_time` takes that time off its own.
//!
//! The timelines: a client 20 ms from two servers (at the client: a
//! 40 ms round trip to each), this connection's server and another
//! (`10.0.9.9`). The other server sent data last at 107 ms (captured at
//! 127: the last thing the client heard), and its path, like this one's,
//! delivered nothing from 130 ms to 280 ms, then everything it held.

use super::*;
use crate::model::{Detail, Phase};
use FindingKind::{PathStall, ServerThinkTime};

/// The end of the stall, at the client: the held packets come from here
/// on, back to back.
const WOKE: f64 = 280.0;

/// A packet the server sent at `sent` (captured at the client one way
/// later) that fell due inside the stall: delayed to be captured at
/// `WOKE + 0.1 * nth`.
fn held(w: &mut Wire, id: Id, nth: f64) {
    let due = w.sent(id) + w.path.one_way_ms();
    if (130.0..WOKE).contains(&due) {
        w.delay(id, WOKE + 0.1 * nth - due);
    }
}

/// A small client message at `t`, acknowledged on arrival: the
/// connection's quickest pure ACK (a round trip).
fn hello(w: &mut Wire, t: f64) {
    let msg = w.send(C, t, b"hi");
    w.ack(S, w.arrival(msg));
}

/// This connection: a hello at 60 ms, then a request at `asked`,
/// acknowledged on arrival by a pure ACK and answered `think` after it
/// arrived; the other server's connection (client port 40001): a hello
/// at 62 ms, its last data at 107 ms and the client's message at
/// `other_asked`, acknowledged on arrival. `stalled`: the path held
/// what fell due from 130 to 280 ms. Returns the outcome, the request
/// and the answer.
fn two_servers(
    path: Path,
    asked: f64,
    think: f64,
    other_asked: f64,
    stalled: bool,
) -> (Outcome, Id, Id) {
    two_servers_stamped(path, asked, think, other_asked, stalled, None)
}

/// [`two_servers`], this connection's server stamping its segments with
/// TSvals on a clock of `hz` (before the path holds them).
fn two_servers_stamped(
    path: Path,
    asked: f64,
    think: f64,
    other_asked: f64,
    stalled: bool,
    hz: Option<f64>,
) -> (Outcome, Id, Id) {
    let mut w = Wire::new(path);
    w.handshake(0.0);
    hello(&mut w, 60.0);
    let req = w.send(C, asked, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    let acked = w.ack(S, w.arrival(req));
    let resp = w.send(S, w.arrival(req) + think, b"HTTP/1.1 200 OK\r\n\r\n");
    let mut other = Wire::new(path);
    other.handshake(0.0);
    hello(&mut other, 62.0);
    let news = other.send(S, 107.0, b"news");
    other.ack(C, other.arrival(news));
    let msg = other.send(C, other_asked, b"ping ping ping");
    let ack = other.ack(S, other.arrival(msg));
    if stalled {
        held(&mut other, ack, 0.0);
    }
    // (A clock is read over a second of deliveries at least: stamped,
    // the connection goes on asking every 150 ms after the stall.)
    if hz.is_some() {
        for i in 0..10 {
            let more = w.send(C, 400.0 + 150.0 * i as f64, b"GET /more HTTP/1.1\r\n\r\n");
            w.send(S, w.arrival(more), b"HTTP/1.1 204 No Content\r\n\r\n");
        }
    }
    w.join_server(other, 40001, "10.0.9.9");
    if let Some(hz) = hz {
        w.stamp(S, hz);
    }
    if stalled {
        held(&mut w, acked, 1.0);
        held(&mut w, resp, 2.0);
    }
    w.ack(C, w.arrival(resp));
    let o = w.run();
    (o, req, resp)
}

/// The answer and the server's ACK of the request fell due at 130 ms,
/// the other server's ACK at 151 ms; all came at 280 ms. The stall is
/// proven from 151 ms (the less late witness: 129 ms late), so 129 ms of
/// the answer's 150 are the path's. The 21 before are not the server's:
/// its ACK of the request came in the same release, held too, so when
/// it or the answer left is not known, and nothing the capture shows of
/// the server's time is certain (nDPI's alexa-app 24 and 25, once 43
/// and 73 ms of server time).
#[test]
fn an_answer_held_with_another_servers_packets_through_a_silence_was_the_paths() {
    let (o, req, resp) = two_servers(Path::at_client(40.0), 90.0, 0.0, 111.0, true);
    let x = o.the(PathStall);
    assert_eq!(x.phase, Some(Phase::FirstByte));
    assert_eq!(x.frames, o.frames(&[req, resp]));
    assert_ms(x.cost_ms, 129.2, 0.05, "from the stall's proven start");
    assert_eq!(x.waits, vec![o.wait(req, resp, None, x.cost_ms)]);
    let Detail::PathStall {
        silent_ms,
        witnesses: [(_, late1), (_, late2)],
        ..
    } = x.detail
    else {
        panic!("{:?}", x.detail);
    };
    assert_ms(
        silent_ms,
        153.0,
        0.05,
        "from the other server's news (127) to 280",
    );
    assert_ms(late1.min(late2), 129.0, 0.05, "the other server's ACK");
    assert_ms(late1.max(late2), 150.1, 0.05, "this server's ACK");
    o.has_no(ServerThinkTime);
}

/// The same, the server's TSvals on a 1 kHz clock: they say the answer
/// left at once and the path held it 150 ms, more than the witnesses
/// prove; the path's wait is what the server's clock says, less a tick,
/// and nothing is left to the server.
#[test]
fn the_servers_own_clock_proves_the_whole_hold() {
    let (o, _, _) =
        two_servers_stamped(Path::at_client(40.0), 90.0, 0.0, 111.0, true, Some(1000.0));
    let cost = o.the(PathStall).cost_ms;
    assert!((148.0..=150.3).contains(&cost), "{cost}");
    o.has_no(ServerThinkTime);
}

/// Its witnesses due together: the whole lateness is the path's.
#[test]
fn witnesses_due_as_the_answer_was_prove_the_whole_wait() {
    // The answer due at 150 (asked at 110), the other server's ACK at 150
    // too, but for what the client sent 25 ms earlier than the request:
    // that server took 25 ms more to acknowledge it than its round trip.
    let mut w = Wire::new(Path::at_client(40.0));
    w.handshake(0.0);
    hello(&mut w, 60.0);
    let req = w.send(C, 110.0, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    let acked = w.ack(S, w.arrival(req));
    let resp = w.send(S, w.arrival(req), b"HTTP/1.1 200 OK\r\n\r\n");
    let mut other = Wire::new(w.path);
    other.handshake(0.0);
    hello(&mut other, 62.0);
    let news = other.send(S, 107.0, b"news");
    other.ack(C, other.arrival(news));
    let msg = other.send(C, 85.0, b"ping ping ping");
    let ack = other.ack(S, other.arrival(msg) + 25.0);
    held(&mut other, ack, 0.0);
    w.join_server(other, 40001, "10.0.9.9");
    held(&mut w, acked, 1.0);
    held(&mut w, resp, 2.0);
    w.ack(C, w.arrival(resp));
    let o = w.run();
    assert_ms(o.the(PathStall).cost_ms, 130.2, 0.05, "all of it");
    o.has_no(ServerThinkTime);
}

/// Without the stall the same answers are on time: nothing to find.
#[test]
fn answers_on_time_are_no_stall() {
    let (o, _, _) = two_servers(Path::at_client(40.0), 90.0, 0.0, 111.0, false);
    o.has_no(PathStall);
    o.has_no(ServerThinkTime);
}

/// One server late is its own business: the other server's ACK came on
/// time (before the silence), and the answer's 150 ms are its server's.
#[test]
fn one_server_late_alone_is_the_servers_own_time() {
    let (o, _, _) = two_servers(Path::at_client(40.0), 90.0, 150.0, 60.0, false);
    o.has_no(PathStall);
    assert_ms(o.the(ServerThinkTime).cost_ms, 150.0, 0.05, "the server's");
}

/// Two servers answering one moment (what the client sent 5 ms apart)
/// late together may both have waited on timers of their own: no proof.
#[test]
fn two_servers_late_for_one_moment_prove_nothing() {
    let (o, _, _) = two_servers(Path::at_client(40.0), 110.0, 0.0, 115.0, true);
    o.has_no(PathStall);
}

/// At the server the answers are seen leaving, before the path holds
/// them: the capture cannot show a stall of the client's path.
#[test]
fn at_the_server_the_answers_leave_on_time() {
    let (o, _, _) = two_servers(Path::at_server(40.0), 90.0, 0.0, 111.0, true);
    o.has_no(PathStall);
}
