//! `h2_window_limited` (detect/h2_window_limited.rs).
//!
//! > Signature: stalls on HTTP/2 credit (a DATA frame P, not ending its
//! > stream, leaves its sender under 1 KB of credit on the stream or the
//! > connection; the receiver's WINDOW_UPDATE or SETTINGS A gives back
//! > enough for the sender's next DATA frame K on it), each a wait from P
//! > to K released by A, judged on the sender's clock: the silence lasts
//! > at least max(2 ms, RTT/4) [...] and at most the update's round trip
//! > [...]; K leaves right after A arrives [...]; and the sender re-sent
//! > nothing from a round trip before P until K [...]. Reported when it
//! > happens at least 3 times and the stalls add up to a round trip or
//! > more.
//! > Cost: the stalls (P to K), summed. A client's stall before its
//! > request's answer began (an upload the answer waits for) is the first
//! > byte's latency; the others are the transfer's stalls.

use super::*;
use crate::model::{Detail, Phase};
use FindingKind::H2WindowLimited;

const RTT: f64 = 40.0;
/// The sender's turn from the update's arrival to its next frame.
const TURN: f64 = 0.1;
/// The receiver's turn from the data's arrival to its update.
const READ: f64 = 0.2;
const EXACT: f64 = 1e-3;
/// A DATA frame's payload: frame and header fit one segment.
const FRAME: u32 = 1000;

fn data(stream: u32, end: bool) -> &'static [u8] {
    leak(h2::frame(0x0, end as u8, stream, &[0; FRAME as usize]))
}

fn window_update(stream: u32, increment: u32) -> Vec<u8> {
    h2::frame(0x8, 0, stream, &increment.to_be_bytes())
}

/// A SETTINGS frame granting `window` a stream.
fn initial_window(window: u32) -> Vec<u8> {
    let mut payload = vec![0, 4];
    payload.extend(window.to_be_bytes());
    h2::frame(0x4, 0, 0, &payload)
}

/// A POST on h2c stream 1 whose body is to follow, and the server's
/// SETTINGS granting `window` a stream (and the connection plenty) 0.1 ms
/// after it arrived. Returns the wire and the SETTINGS.
fn posted(path: Path, window: u32) -> (Wire, Id) {
    let mut w = Wire::new(path);
    let [_, _, ack] = w.handshake(0.0);
    let post = [
        (":method", "POST"),
        (":scheme", "http"),
        (":authority", "example.com"),
        (":path", "/upload"),
    ];
    // (HEADERS without END_STREAM: a body follows.)
    let mut headers = h2::headers(1, &post);
    headers[4] = 0x4;
    let asked = w.send(C, w.sent(ack), leak([h2::preface(), headers].concat()));
    let settings = [initial_window(window), window_update(0, 1 << 30)].concat();
    let granted = w.send(S, w.arrival(asked) + 0.1, leak(settings));
    (w, granted)
}

/// An upload in h2c of `rounds` x 2 DATA frames of 1,000 bytes on stream
/// 1: the server grants `window` a stream (and the connection plenty);
/// the client sends a round, the server gives its 2,000 bytes back
/// `read` ms after the round's last frame arrived, the client sends the
/// next round `turn` ms after the update arrived; the last frame ends
/// the stream and the server answers. Returns the wire, per stall (P, A,
/// K), and the server's SETTINGS.
fn upload(
    path: Path,
    window: u32,
    rounds: usize,
    read: f64,
    turn: f64,
) -> (Wire, Vec<[Id; 3]>, Id) {
    upload_losing(path, window, rounds, read, turn, None)
}

/// [`upload`], the second frame of round `lost` lost beyond the capture
/// point and sent again 5 ms later (a tail-loss probe): the server's update
/// waits for the repair.
fn upload_losing(
    path: Path,
    window: u32,
    rounds: usize,
    read: f64,
    turn: f64,
    lost: Option<usize>,
) -> (Wire, Vec<[Id; 3]>, Id) {
    let (mut w, granted) = posted(path, window);
    let mut t = w.arrival(granted) + turn;
    let mut stalls = Vec::new();
    let mut previous: Option<(Id, Id)> = None;
    for k in 0..rounds {
        let last = k + 1 == rounds;
        let first = w.send(C, t, data(1, false));
        if let Some((p, a)) = previous {
            stalls.push([p, a, first]);
        }
        let mut second = w.send(C, t + 0.01, data(1, last));
        if lost == Some(k) {
            w.lose(second);
            second = w.resend(t + 5.0, second);
        }
        if last {
            let answer = h2::headers(1, &[(":status", "200")]);
            let done = w.send(S, w.arrival(second) + read, leak(answer));
            w.ack(C, w.arrival(done));
            break;
        }
        let update = w.send(
            S,
            w.arrival(second) + read,
            leak(window_update(1, 2 * FRAME)),
        );
        previous = Some((second, update));
        t = w.arrival(update) + turn;
    }
    (w, stalls, granted)
}

#[test]
fn an_upload_that_waits_a_round_trip_for_each_window_update_is_h2_window_limited() {
    for path in Path::all(RTT) {
        let (w, stalls, _) = upload(path, 2 * FRAME, 5, READ, TURN);
        let o = w.run();
        let f = o.the(H2WindowLimited);
        // Before the answer: the upload's wait is the first byte's.
        assert_eq!(f.phase, Some(Phase::FirstByte));
        let frames: Vec<u64> = stalls.iter().flat_map(|s| o.frames(s)).collect();
        assert_eq!(f.frames, frames);
        // Each stall: P to K on the client's clock, the update's round
        // trip and both turns.
        assert_ms(f.cost_ms, 4.0 * (RTT + READ + TURN), EXACT, "four stalls");
        assert_cost_is_its_waits(f);
        match f.detail {
            Detail::H2WindowLimited {
                sender: C,
                stream: 1,
                stalls: 4,
                stream_window: 2000,
                connection_stalls: 0,
                ..
            } => {}
            ref d => panic!("{d:?}"),
        }
    }
}

/// An upload in h2c in `rounds` of 4 DATA frames of 1,000 bytes, 1 ms
/// apart, on stream 1 under 4,000 bytes of credit a stream, the server
/// giving each frame's credit back as it arrives (HAProxy's way): the
/// round's last
/// frame spends the credit while the updates for its first three are on
/// their way, and each update lets one frame go. Returns the wire and,
/// per stall, (P, A, K): the round's last frame, the update for the
/// round's first, the next round's first.
fn per_frame_updates(path: Path, rounds: usize) -> (Wire, Vec<[Id; 3]>) {
    let (mut w, granted) = posted(path, 4 * FRAME);
    let mut t = w.arrival(granted) + TURN;
    let mut stalls = Vec::new();
    let mut previous: Option<(Id, Id)> = None;
    for k in 0..rounds {
        let last_round = k + 1 == rounds;
        let mut updates = Vec::new();
        let mut frames = Vec::new();
        for i in 0..4 {
            let end = last_round && i == 3;
            let f = w.send(C, t + i as f64, data(1, end));
            frames.push(f);
            if !end {
                let u = w.send(S, w.arrival(f) + READ, leak(window_update(1, FRAME)));
                updates.push(u);
            }
        }
        if let Some((p, a)) = previous {
            stalls.push([p, a, frames[0]]);
        }
        if last_round {
            let answer = h2::headers(1, &[(":status", "200")]);
            w.send(S, w.arrival(frames[3]) + READ, leak(answer));
            break;
        }
        previous = Some((frames[3], updates[0]));
        t = w.arrival(updates[0]) + TURN;
    }
    (w, stalls)
}

#[test]
fn credit_given_back_frame_by_frame_is_counted_when_it_reaches_the_sender() {
    // Captured at the server, the updates for a round's first three
    // frames leave before its last arrives: in capture order the credit
    // never runs out. On the client's clock it does, each round.
    for path in Path::all(RTT) {
        let (w, stalls) = per_frame_updates(path, 5);
        let o = w.run();
        let f = o.the(H2WindowLimited);
        let frames: Vec<u64> = stalls.iter().flat_map(|s| o.frames(s)).collect();
        assert_eq!(f.frames, frames, "{path:?}");
        // From the round's last frame (3 ms after its first) to the next
        // round's first, which the first update released.
        assert_ms(
            f.cost_ms,
            4.0 * (RTT + READ + TURN - 3.0),
            EXACT,
            "four stalls",
        );
    }
}

#[test]
fn credit_left_when_the_sender_paused_did_not_hold_it() {
    // The same rounds with 4,000 bytes a stream: 2,000 left at each
    // pause (room for two more frames), and the sender still waited:
    // something else paced it.
    let (w, _, _) = upload(Path::at_client(RTT), 4 * FRAME, 5, READ, TURN);
    w.run().has_no(H2WindowLimited);
}

#[test]
fn two_stalls_are_not_a_limit() {
    let (w, _, _) = upload(Path::at_client(RTT), 2 * FRAME, 3, READ, TURN);
    w.run().has_no(H2WindowLimited);
}

#[test]
fn a_receiver_that_gives_credit_back_late_held_it_back_on_purpose() {
    // The server reads each round two round trips after it came: its
    // application, not the window's size, paced the upload.
    let (w, _, _) = upload(Path::at_client(RTT), 2 * FRAME, 5, 2.0 * RTT, TURN);
    w.run().has_no(H2WindowLimited);
}

#[test]
fn a_sender_that_goes_on_long_after_the_update_was_not_waiting_for_it() {
    for path in Path::all(RTT) {
        let (w, _, _) = upload(path, 2 * FRAME, 5, READ, 10.0);
        w.run().has_no(H2WindowLimited);
    }
}

#[test]
fn a_stall_behind_a_repaired_loss_is_the_loss_s() {
    // Captured at the client: the re-send shows. Each round's update
    // waits for its round's last frame; with one lost, for its repair.
    let (w, _, _) = upload_losing(Path::at_client(RTT), 2 * FRAME, 5, READ, TURN, Some(1));
    let o = w.run();
    let f = o.the(H2WindowLimited);
    match f.detail {
        // Three of the four stalls: the one whose round was repaired is
        // the retransmission's.
        Detail::H2WindowLimited { stalls: 3, .. } => {}
        ref d => panic!("{d:?}"),
    }
}

#[test]
fn without_the_receiver_s_settings_the_credit_is_not_known() {
    // The capture missed the server's SETTINGS: the client's credit
    // looks like the default 65,535 bytes, never spent.
    let (w, _, settings) = upload(Path::at_client(RTT), 2 * FRAME, 5, READ, TURN);
    let o = w.run_missing(&[settings]);
    o.has_no(H2WindowLimited);
}

/// A download in h2c: the client raises the stream windows to 1 MB by
/// SETTINGS but leaves the connection's at 65,535 bytes and gives it back
/// on stream 0: the server sends 65,535 bytes a round in 1,000-byte
/// frames (the last 535), the client gives the round back `READ` ms after
/// it arrived, the server sends the next round `TURN` ms after the update
/// arrived. Returns the wire and, per stall, (P, A, K).
fn download_on_the_connection_window(path: Path, rounds: usize) -> (Wire, Vec<[Id; 3]>) {
    let mut w = Wire::new(path);
    let [_, _, ack] = w.handshake(0.0);
    let asking = [
        h2::preface(),
        initial_window(1 << 20),
        h2::get(1, "/file", &[]),
    ]
    .concat();
    let asked = w.send(C, w.sent(ack), leak(asking));
    let mut headers = h2::headers(1, &[(":status", "200")]);
    headers[4] = 0x4;
    let mut t = w.arrival(asked) + 0.5;
    w.send(S, t, leak(headers));
    let mut stalls = Vec::new();
    let mut previous: Option<(Id, Id)> = None;
    for k in 0..rounds {
        let mut sizes = vec![FRAME; 65];
        sizes.push(535);
        let mut ids = Vec::new();
        for (i, n) in sizes.iter().enumerate() {
            let end = k + 1 == rounds && i + 1 == sizes.len();
            let frame = h2::frame(0x0, end as u8, 1, &vec![0; *n as usize]);
            ids.push(w.send(S, t + 0.01 * (i + 1) as f64, leak(frame)));
        }
        if let Some((p, a)) = previous {
            stalls.push([p, a, ids[0]]);
        }
        let last = *ids.last().expect("frames");
        if k + 1 == rounds {
            w.ack(C, w.arrival(last));
            break;
        }
        let update = w.send(C, w.arrival(last) + READ, leak(window_update(0, 65_535)));
        previous = Some((last, update));
        t = w.arrival(update) + TURN;
    }
    (w, stalls)
}

#[test]
fn a_download_held_by_the_connection_window_is_the_transfer_s() {
    for path in Path::all(RTT) {
        let (w, stalls) = download_on_the_connection_window(path, 5);
        let o = w.run();
        let f = o.the(H2WindowLimited);
        assert_eq!(f.phase, Some(Phase::Transfer));
        let frames: Vec<u64> = stalls.iter().flat_map(|s| o.frames(s)).collect();
        assert_eq!(f.frames, frames);
        // (From the round's last frame to the next round's first, 10 us
        // after the server's turn.)
        assert_ms(
            f.cost_ms,
            4.0 * (RTT + READ + TURN + 0.01),
            EXACT,
            "four stalls",
        );
        match f.detail {
            Detail::H2WindowLimited {
                sender: S,
                stalls: 4,
                stream_window,
                connection_stalls: 4,
                ..
            } => assert_eq!(stream_window, 1 << 20),
            ref d => panic!("{d:?}"),
        }
    }
}
