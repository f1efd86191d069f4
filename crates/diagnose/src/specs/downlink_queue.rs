//! `downlink_queue` (detect/downlink_queue.rs).
//!
//! > answers waited in the queue of the client's own downlink [...].
//! > Signature, not at the server: a response's first byte arrived inside
//! > a stretch in which more than one of the client's connections kept its
//! > downlink saturated [...], later than one round trip after its
//! > request on the client's clock. The wait beyond that round trip, up
//! > to how long the stretch had lasted when the answer came, of at least
//! > a quarter of the round trip and 2 ms, is a wait from the request to
//! > the answer's first segment, released by no packet. Cost: the waits'
//! > sum; `server_think_time` takes the same time off its own.
//!
//! At the client the queue and a slow server look alike in this
//! connection's packets: the answer is simply late. Here the server
//! "sends" the answer late, and the other connections' data (`background`)
//! says whether the link was saturated meanwhile.

use super::*;
use crate::model::Phase;
use FindingKind::{DownlinkQueue, ServerThinkTime};

const EXACT: f64 = 1e-3;

/// A request at 100 ms on a 40 ms path, answered `late` ms after it
/// arrives; meanwhile `flows` other connections deliver `size`-byte
/// segments every 1.5 ms (server send times) from `busy.0` to `busy.1`.
fn late_answer(
    path: Path,
    late: f64,
    flows: u16,
    busy: (f64, f64),
    size: u32,
) -> (Outcome, Id, Id) {
    let mut w = Wire::new(path);
    w.handshake(0.0);
    if flows > 0 {
        w.background(flows, busy.0, busy.1, 1.5, size);
    }
    let req = w.send(C, 100.0, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    let resp = w.send(S, w.arrival(req) + late, b"HTTP/1.1 200 OK\r\n\r\n");
    w.ack(C, w.arrival(resp));
    let o = w.run();
    (o, req, resp)
}

/// Three downloads keep the link busy from before the request until after
/// the answer: the 200 ms the answer came late are the queue's.
#[test]
fn an_answer_arriving_while_other_connections_saturate_the_downlink_queued() {
    for path in [Path::at_client(40.0), Path::mid(40.0, 0.5)] {
        let (o, req, resp) = late_answer(path, 200.0, 3, (0.0, 400.0), 1448);
        let x = o.the(DownlinkQueue);
        assert_eq!(x.phase, Some(Phase::FirstByte));
        assert_eq!(x.frames, o.frames(&[req, resp]));
        assert_ms(x.cost_ms, 200.0, EXACT, "the answer's lateness");
        assert_eq!(x.waits, vec![o.wait(req, resp, None, x.cost_ms)]);
        o.has_no(ServerThinkTime);
    }
}

/// The link saturated only since 50 ms before the answer came: it can
/// have queued that long; the rest of the wait is the server's.
#[test]
fn only_the_time_the_link_was_saturated_can_be_the_queues() {
    let path = Path::at_client(40.0);
    // The answer arrives at 100 + 40 + 200 = 340 ms at the client; the
    // background, sent from 270 ms, arrives from 290 ms.
    let (o, _, _) = late_answer(path, 200.0, 3, (270.0, 400.0), 1448);
    assert_ms(
        o.the(DownlinkQueue).cost_ms,
        50.0,
        0.1,
        "since the link filled",
    );
    assert_ms(o.the(ServerThinkTime).cost_ms, 150.0, 0.1, "the rest");
}

/// The server's own turnaround is in every answer's time, queued or not:
/// an answer 4 ms after its request arrived on an idle link, and one 4 ms
/// after it in a saturated stretch that came 30 ms late, queued 30 ms,
/// not 34 (PcapPlusPlus's many-protocols 76: 3 ms on the idle link, 4.2
/// in the busy one, and no queue worth a finding).
#[test]
fn the_servers_own_turnaround_on_an_idle_link_is_no_queue() {
    let mut w = Wire::new(Path::at_client(40.0));
    w.handshake(0.0);
    let idle = w.send(C, 100.0, b"GET /a HTTP/1.1\r\nHost: x\r\n\r\n");
    let a = w.send(S, w.arrival(idle) + 4.0, b"HTTP/1.1 200 OK\r\n\r\n");
    w.ack(C, w.arrival(a));
    w.background(3, 300.0, 600.0, 1.5, 1448);
    let busy = w.send(C, 400.0, b"GET /b HTTP/1.1\r\nHost: x\r\n\r\n");
    let b = w.send(S, w.arrival(busy) + 34.0, b"HTTP/1.1 200 OK\r\n\r\n");
    w.ack(C, w.arrival(b));
    let o = w.run();
    assert_ms(
        o.the(DownlinkQueue).cost_ms,
        30.0,
        0.1,
        "beyond the server's 4 ms",
    );
}

/// One other download is enough: the answer queued behind its data.
#[test]
fn one_other_download_saturating_the_link_queues_the_answer_too() {
    let (o, _, _) = late_answer(Path::at_client(40.0), 200.0, 1, (0.0, 400.0), 1448);
    assert_ms(
        o.the(DownlinkQueue).cost_ms,
        200.0,
        EXACT,
        "behind the download",
    );
}

#[test]
fn a_link_idle_when_the_answer_came_or_small_messages_are_no_queue() {
    let path = Path::at_client(40.0);
    // The downloads ended 100 ms before the answer arrived.
    let (o, _, _) = late_answer(path, 200.0, 3, (0.0, 220.0), 1448);
    o.has_no(DownlinkQueue);
    assert_ms(o.the(ServerThinkTime).cost_ms, 200.0, EXACT, "the server's");
    // Small messages, however close together.
    let (o, _, _) = late_answer(path, 200.0, 3, (0.0, 400.0), 200);
    o.has_no(DownlinkQueue);
    // No other traffic at all.
    let (o, _, _) = late_answer(path, 200.0, 0, (0.0, 0.0), 0);
    o.has_no(DownlinkQueue);
}

/// At the server the answer is seen leaving: a late one is the server's,
/// whatever the client's link did after.
#[test]
fn at_the_server_a_late_answer_is_the_servers() {
    let (o, _, _) = late_answer(Path::at_server(40.0), 200.0, 3, (0.0, 400.0), 1448);
    o.has_no(DownlinkQueue);
    assert_ms(o.the(ServerThinkTime).cost_ms, 200.0, EXACT, "the server's");
}

/// An answer on time, on a saturated link: nothing waited.
#[test]
fn an_answer_within_a_round_trip_waited_for_nothing() {
    let (o, _, _) = late_answer(Path::at_client(40.0), 0.5, 3, (0.0, 400.0), 1448);
    o.has_no(DownlinkQueue);
    o.has_no(ServerThinkTime);
}

#[test]
fn an_answer_whose_first_bytes_the_capture_missed_is_timed_by_nobody() {
    // As in the first case, but the answer's first segment is not in the
    // capture: its first captured segment lies beyond what the client
    // had acknowledged, and when the answer began is unknown.
    let mut w = Wire::new(Path::at_client(40.0));
    w.handshake(0.0);
    w.background(3, 0.0, 400.0, 1.5, 1448);
    let req = w.send(C, 100.0, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    let missed = w.send(S, w.arrival(req) + 200.0, bytes(1448));
    let rest = w.send(S, w.sent(missed) + 0.01, bytes(500));
    w.ack(C, w.arrival(rest));
    let o = w.run_missing(&[missed]);
    o.has_no(DownlinkQueue);
    o.has_no(ServerThinkTime);
}

/// The same late answer, the server's segments stamped by its 1 kHz
/// clock: they say it sent the answer late, not that the path held it.
/// A connection of a third of a second is too short to tell its clock's
/// rate by its drift, but read loosely it bounds the path's hold all the
/// same (nDPI's netflix 44: 7 server segments in 214 ms): the queue had
/// nothing of the answer to hold, and the wait is the server's.
#[test]
fn a_short_connections_server_clock_bounds_what_the_queue_held() {
    for path in [Path::at_client(40.0), Path::mid(40.0, 0.5)] {
        let mut w = Wire::new(path);
        w.handshake(0.0);
        w.background(3, 0.0, 400.0, 1.5, 1448);
        let req = w.send(C, 100.0, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n");
        let at = w.arrival(req) + 200.0;
        let head = w.send(S, at, b"HTTP/1.1 200 OK\r\n\r\n");
        let body = [w.data(S, at + 0.1, 1448), w.data(S, at + 0.2, 1448)];
        w.ack(C, w.arrival(body[1]));
        w.stamp(S, 1000.0);
        let o = w.run();
        o.has_no(DownlinkQueue);
        let x = o.the(ServerThinkTime);
        assert_eq!(x.frames, o.frames(&[req, head]));
        assert_ms(x.cost_ms, 200.0, 2.0, "the server's own time");
    }
}

/// A request at 100 ms on a 40 ms path, answered the moment it arrives,
/// the answer held 200 ms on the path after the server stamped it (its
/// 1 kHz clock, read over answers on time in the next seconds), while
/// another connection's data reaches the client from `busy` ms (server
/// send times, one segment each 1.5 ms).
fn held_answer(busy: &[(f64, f64)]) -> (Outcome, Id, Id) {
    let mut w = Wire::new(Path::at_client(40.0));
    w.handshake(0.0);
    for &(from, to) in busy {
        w.background(1, from, to, 1.5, 1448);
    }
    let req = w.send(C, 100.0, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    let at = w.arrival(req);
    let head = w.send(S, at, b"HTTP/1.1 200 OK\r\n\r\n");
    let body = [w.data(S, at + 0.1, 1448), w.data(S, at + 0.2, 1448)];
    w.ack(C, w.arrival(body[1]) + 200.0);
    for t in [1_000.0, 2_000.0, 3_000.0] {
        let req = w.send(C, t, b"GET /next HTTP/1.1\r\nHost: x\r\n\r\n");
        let answer = w.send(S, w.arrival(req) + 1.0, b"HTTP/1.1 204 No Content\r\n\r\n");
        w.ack(C, w.arrival(answer));
    }
    w.stamp(S, 1000.0);
    for id in [head, body[0], body[1]] {
        w.delay(id, 200.0);
    }
    (w.run(), req, head)
}

/// The answer (captured at 340 ms) held 200 ms by its server's clock,
/// while the other connection's data arrived all along but for a 10 ms
/// pause 15 ms before it: the stretch the pause ended holds 5 ms of it,
/// yet a queue does not drain while its link delivers nothing, and the
/// answer waited behind the other download all the 190 ms the link was
/// delivering (nDPI's chrome.pcap 5: 26 ms late by its server's clock,
/// 6.4 ms after a 3.7 ms pause in a sibling's bulk data).
#[test]
fn the_servers_clock_says_how_long_the_path_held_an_answer_in_a_busy_stretch() {
    let (o, req, head) = held_answer(&[(0.0, 305.0), (315.0, 500.0)]);
    let x = o.the(DownlinkQueue);
    assert_eq!(x.frames, o.frames(&[req, head]));
    // (Less a tick and the slack the clock allows its stamps: at least
    // what it proves held.)
    assert!(
        (180.0..=190.0).contains(&x.cost_ms),
        "{} ms: held 200 ms, the link delivering all but 10 of them",
        x.cost_ms
    );
    o.has_no(ServerThinkTime);
}

/// The same hold, the other download stalled from 130 to 320 ms (nothing
/// delivered: a phone's radio, a handover): the answer sat through the
/// stall as it would have alone; only the 20 ms the link delivered since
/// were a wait behind the other download (tumblr.pcap 5: 61 ms of an 86
/// ms hold with nothing delivered).
#[test]
fn a_stall_with_nothing_delivered_is_no_wait_behind_other_downloads() {
    let (o, _, _) = held_answer(&[(0.0, 110.0), (300.0, 500.0)]);
    assert_ms(
        o.the(DownlinkQueue).cost_ms,
        20.0,
        2.0,
        "since the stall ended",
    );
}

/// Two requests taken for one turn (the second sent before any answer
/// came, as HTTP/2's are), the answer queued 200 ms behind three
/// downloads and sent before the second request reached the server: its
/// ACK covers the first request only, so it answered that one, and its
/// wait runs from it (nDPI's pinterest.pcap 3: the request cited was one
/// the answer had left before). Had it waited from the second, sent 20 ms
/// before the answer arrived, nothing would be over a round trip.
#[test]
fn an_answer_waits_from_the_part_of_the_request_its_ack_covers() {
    let mut w = Wire::new(Path::at_client(40.0));
    w.handshake(0.0);
    w.background(3, 0.0, 400.0, 1.5, 1448);
    let first = w.send(C, 100.0, b"GET /a HTTP/1.1\r\nHost: x\r\n\r\n");
    let answer_at = w.arrival(first) + 200.0;
    let second = w.send(C, answer_at, b"GET /b HTTP/1.1\r\nHost: x\r\n\r\n");
    let answer = w.send(S, answer_at, b"HTTP/1.1 200 OK\r\n\r\n");
    w.ack(C, w.arrival(answer));
    let o = w.run();
    let x = o.the(DownlinkQueue);
    assert_eq!(
        x.frames,
        o.frames(&[first, answer]),
        "not {:?}",
        o.frame(second)
    );
    assert_ms(x.cost_ms, 200.0, 0.1, "from the request it answered");
}
