//! Tracker rules, one behaviour per test, on segments built by hand and
//! seen through the reports the diagnosis makes of them.

use std::net::IpAddr;

use rttdoc_wire::{Segment, TcpFlags, TcpOptions, Tfo};

use crate::model::{ConnectionReport, Ending};
use rttdoc_analyze::{AnalyzeOptions, Stamp};

const SYN: u16 = TcpFlags::SYN.bits();
const ACK: u16 = TcpFlags::ACK.bits();
const FIN: u16 = TcpFlags::FIN.bits();
const PSH: u16 = TcpFlags::PSH.bits();
const MS: i64 = 1_000_000;

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

/// A segment from client (c) or server (s) of the connection 10.0.0.1:5000 <-> 10.0.0.2:443.
fn seg(
    from_client: bool,
    seq: u32,
    ack: u32,
    flags: u16,
    payload: &'static [u8],
) -> Segment<'static> {
    let (src, dst, sp, dp) = if from_client {
        ("10.0.0.1", "10.0.0.2", 5000, 443)
    } else {
        ("10.0.0.2", "10.0.0.1", 443, 5000)
    };
    Segment {
        src: ip(src),
        dst: ip(dst),
        src_port: sp,
        dst_port: dp,
        seq,
        ack,
        flags: TcpFlags::from_bits_retain(flags),
        window: 1000,
        options: TcpOptions::default(),
        payload_len: payload.len() as u32,
        payload,
        ip_id: None,
    }
}

struct Run {
    reports: Vec<ConnectionReport>,
    stats: crate::model::CaptureStats,
}

/// Feeds (time in ms, segment) pairs and returns the finished reports.
fn run(segments: Vec<(i64, Segment<'static>)>, options: AnalyzeOptions) -> Run {
    let mut reports = Vec::new();
    let stats;
    {
        let mut sink = |r: ConnectionReport| reports.push(r);
        let mut t = crate::tracker(options, &mut sink);
        for (i, (ms, s)) in segments.iter().enumerate() {
            t.track_segment(
                Stamp {
                    frame: i as u64 + 1,
                    ts_ns: ms * MS,
                },
                s,
            );
        }
        stats = t.finish();
    }
    reports.sort_by_key(|r| r.stream);
    Run { reports, stats }
}

/// What a sink that follows a live capture is handed, in order.
#[derive(Debug)]
enum Handed {
    /// A long connection's window, diagnosed while it was open.
    Window(ConnectionReport),
    Report(ConnectionReport),
}

/// As [`run`], keeping the windows handed over as they were diagnosed.
fn run_live(segments: Vec<(i64, Segment<'static>)>) -> Vec<Handed> {
    struct Live(Vec<Handed>);
    impl rttdoc_analyze::ReportSink for Live {
        fn report(&mut self, r: ConnectionReport) {
            self.0.push(Handed::Report(r));
        }
        fn window(&mut self, r: ConnectionReport) {
            self.0.push(Handed::Window(r));
        }
    }
    let mut sink = Live(Vec::new());
    {
        let mut t = crate::tracker(AnalyzeOptions::default(), &mut sink);
        for (i, (ms, s)) in segments.iter().enumerate() {
            let at = Stamp {
                frame: i as u64 + 1,
                ts_ns: ms * MS,
            };
            t.track_segment(at, s);
        }
        t.finish();
    }
    sink.0
}

/// The windows handed over, in order.
fn windows_of(handed: &[Handed]) -> Vec<&ConnectionReport> {
    handed
        .iter()
        .filter_map(|h| match h {
            Handed::Window(w) => Some(w),
            Handed::Report(_) => None,
        })
        .collect()
}

fn handshake(t0: i64, c_isn: u32, s_isn: u32) -> Vec<(i64, Segment<'static>)> {
    vec![
        (t0, seg(true, c_isn, 0, SYN, b"")),
        (t0 + 30, seg(false, s_isn, c_isn + 1, SYN | ACK, b"")),
        (t0 + 60, seg(true, c_isn + 1, s_isn + 1, ACK, b"")),
    ]
}

#[test]
fn a_syn_with_a_new_isn_on_a_known_tuple_opens_a_new_stream() {
    let mut s = handshake(0, 100, 900);
    s.extend(handshake(1000, 5000, 7000));
    let r = run(s, AnalyzeOptions::default());
    assert_eq!(r.reports.len(), 2);
    assert_eq!((r.reports[1].stream, r.reports[1].first_frame), (1, 4));
}

#[test]
fn a_retransmitted_syn_stays_on_its_stream_and_is_counted() {
    let mut s = vec![(0, seg(true, 100, 0, SYN, b""))];
    s.extend(handshake(1000, 100, 900));
    let r = run(s, AnalyzeOptions::default());
    assert_eq!(r.reports.len(), 1);
    let c = &r.reports[0];
    assert_eq!(c.handshake.syn_retransmits, 1);
    // Wireshark times the initial RTT from the most recent SYN.
    assert_eq!(c.tcp_handshake_ms, Some(60.0));
    let tcp = c
        .ledger
        .iter()
        .find(|r| r.phase == crate::model::Phase::TcpHandshake)
        .unwrap();
    assert_eq!(tcp.duration_ms, 1060.0);
    assert!(tcp.excess_rtts.unwrap() > 16.0);
}

#[test]
fn resent_data_is_a_retransmission_but_a_quick_hole_fill_is_out_of_order() {
    let mut s = handshake(0, 100, 900);
    s.push((100, seg(true, 101, 901, PSH | ACK, b"aaaa")));
    s.push((300, seg(true, 101, 901, PSH | ACK, b"aaaa"))); // RTO resend
    s.push((400, seg(true, 109, 901, PSH | ACK, b"cccc"))); // hole at 105
    s.push((401, seg(true, 105, 901, PSH | ACK, b"bbbb"))); // filled 1 ms later
    let c = &run(s, AnalyzeOptions::default()).reports[0];
    assert_eq!(c.client_to_server.retransmissions, 1);
    assert_eq!(c.client_to_server.out_of_order, 1);
    assert_eq!(c.client_to_server.gaps, 1);
    assert_eq!(c.client_to_server.bytes, 12);
}

#[test]
fn zero_windows_are_counted_with_their_first_frame() {
    let mut s = handshake(0, 100, 900);
    let mut z = seg(false, 901, 101, ACK, b"");
    z.window = 0;
    s.push((100, z));
    s.push((200, z));
    let c = &run(s, AnalyzeOptions::default()).reports[0];
    assert_eq!(c.server_to_client.zero_windows, 2);
    assert_eq!(c.server_to_client.first_zero_window_frame, Some(4));
}

#[test]
fn bytes_in_flight_count_what_the_peer_has_not_acked() {
    let mut s = handshake(0, 100, 900);
    s.push((100, seg(false, 901, 101, ACK, b"0123456789")));
    s.push((101, seg(false, 911, 101, ACK, b"0123456789")));
    s.push((140, seg(true, 101, 911, ACK, b"")));
    let c = &run(s, AnalyzeOptions::default()).reports[0];
    assert_eq!(c.server_to_client.max_bytes_in_flight, 20);
}

fn tfo_syn(option: Option<Tfo>, data: &'static [u8]) -> Segment<'static> {
    let mut s = seg(true, 100, 0, SYN, data);
    s.options.tfo = option;
    s
}

#[test]
fn tfo_outcomes_follow_what_the_syn_ack_acknowledges() {
    let outcome = |syn: Segment<'static>, synack_ack: u32| {
        let r = run(
            vec![
                (0, syn),
                (30, seg(false, 900, synack_ack, SYN | ACK, b"")),
                (60, seg(true, 101, 901, ACK, b"")),
            ],
            AnalyzeOptions::default(),
        );
        r.reports[0].handshake.tfo.clone().map(|t| t.outcome.name())
    };
    assert_eq!(
        outcome(tfo_syn(Some(Tfo::CookieRequest), b""), 101),
        Some("cookie_request")
    );
    assert_eq!(
        outcome(tfo_syn(Some(Tfo::Cookie { len: 8 }), b"hello"), 106),
        Some("accepted")
    );
    assert_eq!(
        outcome(tfo_syn(Some(Tfo::Cookie { len: 8 }), b"hello"), 101),
        Some("rejected")
    );
    assert_eq!(outcome(tfo_syn(None, b""), 101), None);
}

#[test]
fn closed_connections_are_finished_after_the_linger_and_freed() {
    let mut s = handshake(0, 100, 900);
    s.push((100, seg(true, 101, 901, FIN | ACK, b"")));
    s.push((130, seg(false, 901, 102, FIN | ACK, b"")));
    s.push((160, seg(true, 102, 902, ACK, b"")));
    // Another connection 40 s later triggers the sweep.
    let mut other = seg(true, 1, 0, SYN, b"");
    other.src_port = 6000;
    s.push((40_000, other));
    let mut finished_early = 0;
    let open_after;
    {
        let mut sink = |r: ConnectionReport| {
            if r.stream == 0 {
                finished_early += 1;
            }
        };
        let mut t = crate::tracker(AnalyzeOptions::default(), &mut sink);
        for (i, (ms, seg)) in s.iter().enumerate() {
            t.track_segment(
                Stamp {
                    frame: i as u64 + 1,
                    ts_ns: ms * MS,
                },
                seg,
            );
            t.tick(ms * MS);
        }
        open_after = t.open_connections();
    }
    assert_eq!(finished_early, 1, "reported before the end of the capture");
    assert_eq!(open_after, 1, "only the new connection is still held");
}

#[test]
fn a_mid_stream_capture_is_partial_and_times_rtt_from_data_and_acks() {
    let s = vec![
        (
            0,
            seg(true, 5000, 9000, PSH | ACK, b"GET / HTTP/1.1\r\n\r\n"),
        ),
        (
            40,
            seg(false, 9000, 5018, PSH | ACK, b"HTTP/1.1 200 OK\r\n\r\n"),
        ),
        (40, seg(true, 5018, 9019, ACK, b"")),
    ];
    let c = &run(s, AnalyzeOptions::default()).reports[0];
    assert!(c.partial);
    // The client's pure ACK left the moment the response arrived: the
    // capture is at the client (no handshake needed to say so).
    assert_eq!(c.vantage, crate::Vantage::Client);
    assert_eq!(c.rtt_ms, Some(40.0));
    assert_eq!(c.exchanges, 1);
    // The client is the side that spoke first on the higher port.
    assert_eq!(c.server.port, 443);
}

/// A capture begun mid-connection: the request acknowledges the server's
/// bytes up to 9000, and the first server segment captured starts 5 KB
/// beyond (nDPI's instagram.pcap 4: 52 KB): the answer began in bytes the
/// capture missed, and is not timed from the segment captured. Starting
/// where the request said, it is.
#[test]
fn a_mid_stream_answer_beyond_what_the_request_acknowledged_began_in_a_hole() {
    for missed in [true, false] {
        let at = if missed { 9000 + 5000 } else { 9000 };
        let s = vec![
            (
                0,
                seg(true, 5000, 9000, PSH | ACK, b"GET / HTTP/1.1\r\n\r\n"),
            ),
            // The server's ACK of the request (the round trip).
            (40, seg(false, 9000, 5018, ACK, b"")),
            (
                240,
                seg(false, at, 5018, PSH | ACK, b"HTTP/1.1 200 OK\r\n\r\n"),
            ),
            (240, seg(true, 5018, at + 19, ACK, b"")),
        ];
        let c = &run(s, AnalyzeOptions::default()).reports[0];
        let row = c
            .ledger
            .iter()
            .find(|r| r.phase == crate::model::Phase::FirstByte)
            .expect("a first-byte row");
        let excess = if missed { 0.0 } else { 200.0 };
        assert_eq!(row.excess_ms, Some(excess), "missed {missed}: {row:?}");
        assert_eq!(row.ideal_basis.contains("capture missed"), missed);
    }
}

#[test]
fn tls_records_arriving_before_a_hole_is_filled_are_held_and_parsed() {
    // A ClientHello record split in two segments; the second arrives first.
    let hello: &'static [u8] = Box::leak(client_hello_record().into_boxed_slice());
    let (a, b) = hello.split_at(100);
    let mut s = handshake(0, 100, 900);
    s.push((100, seg(true, 101 + 100, 901, PSH | ACK, b)));
    s.push((300, seg(true, 101, 901, PSH | ACK, a)));
    let c = &run(s, AnalyzeOptions::default()).reports[0];
    let tls = c.tls.as_ref().expect("recognised as TLS");
    assert_eq!(
        tls.messages[0].message,
        crate::model::TlsMessage::ClientHello
    );
    assert_eq!(
        tls.client_key_shares,
        vec!["X25519MLKEM768".to_string(), "x25519".to_string()]
    );
    assert_eq!(
        tls.client_hello_frames,
        vec![5],
        "complete once frame 5 fills the hole, as in Wireshark"
    );
}

/// A GET (frame 4) whose response's head (901.., 17 bytes) the capture
/// missed; the body comes after. Returns the segments, where the body
/// starts, and the body.
fn response_behind_a_hole() -> (Vec<(i64, Segment<'static>)>, u32, &'static [u8]) {
    let head: &[u8] = b"HTTP/1.1 200 OK\r\n";
    let body: &'static [u8] = b"Content-Length: 0\r\n\r\n";
    let mut s = handshake(0, 100, 900);
    s.push((
        70,
        seg(true, 101, 901, PSH | ACK, b"GET / HTTP/1.1\r\n\r\n"),
    ));
    (s, 901 + head.len() as u32, body)
}

/// The frame where the ledger's first-byte row ends.
fn first_byte_frame(c: &ConnectionReport) -> u64 {
    let row = c
        .ledger
        .iter()
        .find(|r| r.phase == crate::model::Phase::FirstByte);
    row.unwrap_or_else(|| panic!("no first-byte row: {:#?}", c.ledger))
        .end_frame
}

/// The capture missed the start of a response, and the client had
/// acknowledged it before the rest arrived: the missing bytes were
/// received (only the capture missed them), so what follows is delivered
/// as it arrives, in its own frame, and a re-send of it later moves
/// nothing (before, it waited for an ACK that never came, and the re-send
/// took its place: the first byte at the re-send).
#[test]
fn data_behind_a_hole_the_peer_already_acknowledged_arrives_in_its_own_frame() {
    let (mut s, past_head, body) = response_behind_a_hole();
    s.push((110, seg(true, 121, past_head, ACK, b""))); // 5: acks the head
    s.push((111, seg(false, past_head, 121, PSH | ACK, body))); // 6
    s.push((400, seg(false, past_head, 121, PSH | ACK, body))); // 7: a re-send
    assert_eq!(
        first_byte_frame(&run(s, AnalyzeOptions::default()).reports[0]),
        6
    );
}

/// Data behind a capture hole, re-sent before the peer's ACK shows the
/// hole was received: it arrived with its first copy, which keeps its
/// place (the re-send took it before: the first byte at the re-send).
#[test]
fn a_re_send_of_data_held_behind_a_hole_keeps_its_first_arrival() {
    let (mut s, past_head, body) = response_behind_a_hole();
    s.push((111, seg(false, past_head, 121, PSH | ACK, body))); // 5
    s.push((400, seg(false, past_head, 121, PSH | ACK, body))); // 6: a re-send
    let past_body = past_head + body.len() as u32;
    s.push((450, seg(true, 121, past_body, ACK, b""))); // 7: acks it all
    assert_eq!(
        first_byte_frame(&run(s, AnalyzeOptions::default()).reports[0]),
        5
    );
}

/// A TLS 1.3 ClientHello record with a post-quantum key share (1216 bytes),
/// so the record exceeds one MSS.
pub(crate) fn client_hello_record() -> Vec<u8> {
    let mut exts = Vec::new();
    let mut push = |kind: u16, data: Vec<u8>| {
        exts.extend_from_slice(&kind.to_be_bytes());
        exts.extend_from_slice(&(data.len() as u16).to_be_bytes());
        exts.extend_from_slice(&data);
    };
    push(43, vec![2, 0x03, 0x04]);
    let mut ks = Vec::new();
    for (g, len) in [(0x11ecu16, 1216usize), (0x001d, 32)] {
        ks.extend_from_slice(&g.to_be_bytes());
        ks.extend_from_slice(&(len as u16).to_be_bytes());
        ks.extend(std::iter::repeat_n(7u8, len));
    }
    let mut ks_ext = (ks.len() as u16).to_be_bytes().to_vec();
    ks_ext.extend(ks);
    push(51, ks_ext);
    let mut body = vec![3, 3];
    body.extend_from_slice(&[1; 32]);
    body.push(0);
    body.extend_from_slice(&[0, 2, 0x13, 0x01, 1, 0]);
    body.extend_from_slice(&(exts.len() as u16).to_be_bytes());
    body.extend(exts);
    let mut msg = vec![1, 0, (body.len() >> 8) as u8, body.len() as u8];
    msg.extend(body);
    let mut rec = vec![22, 3, 1, (msg.len() >> 8) as u8, msg.len() as u8];
    rec.extend(msg);
    rec
}

static KB: [u8; 1000] = [b'x'; 1000];

/// A server sending 1000 bytes a round into a 1000-byte receive window,
/// captured at the server: `handshake` decides whether the SYNs (and so
/// the window scale) are in the capture.
fn window_paced(handshake: bool) -> Vec<(i64, Segment<'static>)> {
    let mut v = Vec::new();
    if handshake {
        v.push((0, seg(true, 100, 0, SYN, b"")));
        v.push((0, seg(false, 500, 101, SYN | ACK, b"")));
        v.push((60, seg(true, 101, 501, ACK, b"")));
    }
    for k in 0..6u32 {
        let t = 100 + 60 * k as i64;
        v.push((t, seg(false, 501 + 1000 * k, 101, ACK | PSH, &KB)));
        v.push((t + 60, seg(true, 101, 501 + 1000 * (k + 1), ACK, b"")));
    }
    v
}

#[test]
fn a_full_receive_window_paces_the_sender_only_when_its_scale_is_known() {
    let kinds = |segments| -> Vec<&'static str> {
        run(segments, AnalyzeOptions::default()).reports[0]
            .findings
            .iter()
            .map(|x| x.kind.name())
            .collect()
    };
    let whole = kinds(window_paced(true));
    assert!(whole.contains(&"rwnd_limited"), "{whole:?}");
    // Mid-stream, the raw window (1000) might be scaled by anything.
    let partial = kinds(window_paced(false));
    assert!(!partial.contains(&"rwnd_limited"), "{partial:?}");
}

// ------------------------------------------------ real-world semantics

fn with_id(mut s: Segment<'static>, id: u16) -> Segment<'static> {
    s.ip_id = Some(id);
    s
}

fn kinds(c: &ConnectionReport) -> Vec<&'static str> {
    c.findings.iter().map(|f| f.kind.name()).collect()
}

#[test]
fn a_second_copy_of_one_ipv4_datagram_is_a_capture_duplicate_not_a_retransmission() {
    let mut s = handshake(0, 100, 900);
    let data = seg(false, 901, 101, PSH | ACK, b"response");
    s.push((100, with_id(data, 7)));
    // The same datagram from a second capture point, 20 ms later (a merge
    // of two hosts' captures), after a client ACK in between.
    s.push((110, seg(true, 101, 909, ACK, b"")));
    s.push((120, with_id(data, 7)));
    // The sender's real retransmission carries a new identification.
    s.push((400, with_id(data, 8)));
    let r = run(s, AnalyzeOptions::default());
    let c = &r.reports[0];
    assert_eq!(c.server_to_client.capture_duplicates, 1);
    assert_eq!(r.stats.capture_duplicates, 1);
    assert_eq!(c.server_to_client.retransmissions, 1);
    assert_eq!(c.server_to_client.packets, 3);
    assert_eq!(c.server_to_client.bytes, 8);
}

#[test]
fn a_copy_whose_payload_the_capture_clipped_is_still_a_copy() {
    // termshark's telnet-cooked.pcap: each of three client segments is
    // followed ~1.3 ms later by a 66-byte frame with its IPv4
    // identification, checksum, sequence and timestamps, the IP header
    // still claiming the payload, none of it recorded.
    let mut s = handshake(0, 100, 900);
    let data = with_id(seg(true, 101, 901, PSH | ACK, b"/sbin/ping"), 0x4653);
    s.push((100, data));
    let clipped = Segment {
        payload: &[],
        ..data
    };
    s.push((101, clipped));
    // The sender's re-send on its timer: a new identification, whole.
    s.push((470, with_id(data, 0x4654)));
    let r = run(s.clone(), AnalyzeOptions::default());
    let c = &r.reports[0];
    assert_eq!(c.client_to_server.capture_duplicates, 1);
    assert_eq!(c.client_to_server.retransmissions, 1);
    assert_eq!(c.client_to_server.packets, 4);

    // Whole in both copies, payloads that differ are two packets.
    s[4].1 = with_id(seg(true, 101, 901, PSH | ACK, b"/sbin/pong"), 0x4653);
    let c = &run(s, AnalyzeOptions::default()).reports[0];
    assert_eq!(c.client_to_server.capture_duplicates, 0);
}

#[test]
fn an_identical_segment_without_ip_id_is_a_copy_only_when_nothing_could_have_triggered_a_resend() {
    let mut s = handshake(0, 100, 900);
    let data = seg(true, 101, 901, PSH | ACK, b"request");
    s.push((100, data));
    s.push((101, data)); // 1 ms later, no server packet between: a copy
    s.push((102, seg(false, 901, 101, ACK, b""))); // a duplicate ACK ...
    s.push((103, data)); // ... then the same bytes: a fast retransmission
    s.push((400, data)); // and much later: a timer's retransmission
    let r = run(s, AnalyzeOptions::default());
    let c = &r.reports[0];
    assert_eq!(c.client_to_server.capture_duplicates, 1);
    assert_eq!(c.client_to_server.retransmissions, 2);
}

#[test]
fn a_trace_appended_to_itself_is_one_pass_counted_as_a_restart() {
    let mut once = handshake(0, 100, 900);
    once.push((100, seg(true, 101, 901, PSH | ACK, b"request")));
    once.push((2000, seg(false, 901, 108, PSH | ACK, b"response")));
    let mut twice = once.clone();
    twice.extend(once.clone());
    let r1 = run(once, AnalyzeOptions::default());
    let r2 = run(twice, AnalyzeOptions::default());
    assert_eq!(r2.reports.len(), 1);
    assert_eq!(r2.stats.capture_restarts, 1);
    assert_eq!(r2.stats.capture_duplicates, 5);
    let (a, b) = (&r1.reports[0], &r2.reports[0]);
    assert_eq!(b.client_to_server.retransmissions, 0);
    assert_eq!(b.handshake.syn_retransmits, 0);
    assert_eq!(a.client_to_server.bytes, b.client_to_server.bytes);
    assert_eq!(a.server_to_client.packets, b.server_to_client.packets);
    assert_eq!(kinds(a), kinds(b));
}

#[test]
fn a_one_byte_keepalive_after_idle_is_not_a_retransmission_but_a_resent_last_byte_is() {
    let mut s = handshake(0, 100, 900);
    s.push((100, seg(true, 101, 901, PSH | ACK, b"x")));
    s.push((130, seg(false, 901, 102, ACK, b""))); // everything acked
                                                   // Windows-style keep-alive: the byte before snd_nxt, after idle.
    for t in [10_000, 11_000, 12_000] {
        s.push((t, seg(true, 101, 901, ACK, b"x")));
        s.push((t + 30, seg(false, 901, 102, ACK, b"")));
    }
    let c = &run(s.clone(), AnalyzeOptions::default()).reports[0];
    assert_eq!(c.client_to_server.keepalives, 3);
    assert_eq!(c.client_to_server.retransmissions, 0);
    assert!(!kinds(c).contains(&"retransmission"), "{:?}", kinds(c));
    assert!(!kinds(c).contains(&"rto_stall"));

    // The same byte re-sent while still unacknowledged: lost data.
    let mut s = handshake(0, 100, 900);
    s.push((100, seg(true, 101, 901, PSH | ACK, b"x")));
    s.push((400, seg(true, 101, 901, PSH | ACK, b"x")));
    s.push((430, seg(false, 901, 102, ACK, b"")));
    let c = &run(s, AnalyzeOptions::default()).reports[0];
    assert_eq!(c.client_to_server.keepalives, 0);
    assert_eq!(c.client_to_server.retransmissions, 1);
    assert!(kinds(c).contains(&"retransmission"));
}

#[test]
fn zero_window_probes_beyond_a_closed_window_are_probes_and_the_window_is_reported() {
    let mut s = handshake(0, 100, 900);
    s.push((100, seg(false, 901, 101, PSH | ACK, b"0123456789")));
    let mut closed = seg(true, 101, 911, ACK, b"");
    closed.window = 0;
    s.push((130, closed));
    // The server probes with the next byte (BSD/Windows style), again and
    // again, until the window opens.
    s.push((330, seg(false, 911, 101, ACK, b"a")));
    s.push((360, closed));
    s.push((760, seg(false, 911, 101, ACK, b"a")));
    s.push((790, closed));
    s.push((1000, seg(true, 101, 911, ACK, b""))); // window update
    s.push((1030, seg(false, 911, 101, PSH | ACK, b"abcdef")));
    let c = &run(s, AnalyzeOptions::default()).reports[0];
    assert_eq!(c.server_to_client.window_probes, 2);
    assert_eq!(
        c.server_to_client.bytes, 16,
        "the probe's byte counted once"
    );
    assert_eq!(c.server_to_client.retransmissions, 0);
    assert!(!kinds(c).contains(&"retransmission"), "{:?}", kinds(c));
    assert!(kinds(c).contains(&"zero_window"), "{:?}", kinds(c));
}

#[test]
fn a_zero_window_nobody_waited_on_before_an_rst_is_not_reported() {
    let mut s = handshake(0, 100, 900);
    s.push((100, seg(false, 901, 101, PSH | ACK, b"0123456789")));
    let mut closed = seg(true, 101, 911, ACK, b"");
    closed.window = 0;
    s.push((130, closed));
    s.push((500, seg(true, 101, 911, TcpFlags::RST.bits() | ACK, b"")));
    let c = &run(s, AnalyzeOptions::default()).reports[0];
    assert_eq!(c.client_to_server.zero_windows, 1);
    assert!(!kinds(c).contains(&"zero_window"), "{:?}", kinds(c));
}

#[test]
fn the_server_isn_is_the_one_the_client_acknowledged() {
    // A middlebox answers first with its own ISN, then the server; the
    // client acknowledges the server's.
    let mut s = vec![
        (0, seg(true, 100, 0, SYN, b"")),
        (10, seg(false, 50_000_000, 101, SYN | ACK, b"")),
        (30, seg(false, 900, 101, SYN | ACK, b"")),
        (31, seg(true, 101, 901, ACK, b"")),
    ];
    s.push((40, seg(true, 101, 901, PSH | ACK, b"request")));
    s.push((70, seg(false, 901, 108, PSH | ACK, b"response")));
    s.push((71, seg(true, 108, 909, ACK, b"")));
    let c = &run(s, AnalyzeOptions::default()).reports[0];
    assert_eq!(c.server_to_client.retransmissions, 0);
    assert_eq!(c.server_to_client.gaps, 0);
    assert_eq!(c.server_to_client.bytes, 8);
    assert!(c.server_to_client.max_bytes_in_flight <= 8);
    assert!(!kinds(c).contains(&"retransmission"));
}

#[test]
fn syns_resent_after_an_rst_are_a_refused_connection_not_loss() {
    let rst = seg(false, 0, 101, TcpFlags::RST.bits() | ACK, b"");
    let s = vec![
        (0, seg(true, 100, 0, SYN, b"")),
        (1, rst),
        (500, seg(true, 100, 0, SYN, b"")),
        (501, rst),
        (1000, seg(true, 100, 0, SYN, b"")),
        (1001, rst),
    ];
    let c = &run(s, AnalyzeOptions::default()).reports[0];
    assert_eq!(c.ending, Ending::Refused);
    assert_eq!(c.handshake.syn_retransmits, 0);
    assert!(!kinds(c).contains(&"syn_retransmit"), "{:?}", kinds(c));

    // An unanswered SYN re-sent, then refused: that first SYN was lost.
    let s = vec![
        (0, seg(true, 100, 0, SYN, b"")),
        (1000, seg(true, 100, 0, SYN, b"")),
        (1001, rst),
    ];
    let c = &run(s, AnalyzeOptions::default()).reports[0];
    assert_eq!(c.ending, Ending::Refused);
    assert_eq!(c.handshake.syn_retransmits, 1);
    assert!(kinds(c).contains(&"syn_retransmit"));
}

#[test]
fn a_refused_syn_sent_again_and_accepted_is_one_connection_on_its_stream() {
    // Windows tries a refused SYN again 0.5 s later (the same ISN: the
    // same stream in tshark); this time the server listens.
    let rst = seg(false, 0, 101, TcpFlags::RST.bits() | ACK, b"");
    let mut s = vec![(0, seg(true, 100, 0, SYN, b"")), (1, rst)];
    s.extend(handshake(500, 100, 900));
    s.push((
        600,
        seg(true, 101, 901, PSH | ACK, b"GET / HTTP/1.1\r\n\r\n"),
    ));
    s.push((
        630,
        seg(false, 901, 119, PSH | ACK, b"HTTP/1.1 204 x\r\n\r\n"),
    ));
    s.push((700, seg(true, 119, 918, FIN | ACK, b"")));
    s.push((730, seg(false, 918, 120, FIN | ACK, b"")));
    s.push((760, seg(true, 120, 919, ACK, b"")));
    let (r, _) = run_swept(&s, AnalyzeOptions::default());
    assert_eq!(r.reports.len(), 1, "one stream, as tshark numbers it");
    assert_eq!(r.stats.late_packets, 0, "the retry is analysed");
    let c = &r.reports[0];
    assert_eq!((c.first_frame, c.last_frame), (1, s.len() as u64));
    assert_eq!(c.ending, Ending::Fin);
    assert_eq!(c.exchanges, 1);
}

#[test]
fn a_refused_syn_not_sent_again_is_finished_within_a_second() {
    let rst = seg(false, 0, 101, TcpFlags::RST.bits() | ACK, b"");
    let mut later = seg(true, 1, 0, SYN, b"");
    later.src_port = 6000;
    let s = vec![(0, seg(true, 100, 0, SYN, b"")), (1, rst), (1_500, later)];
    let (r, most_open) = run_swept(&s, AnalyzeOptions::default());
    assert_eq!(r.reports[0].ending, Ending::Refused);
    assert_eq!(most_open, 1, "the refused one was finished before 1.5 s");
}

#[test]
fn a_peers_rst_one_round_trip_after_the_close_is_on_the_report() {
    // A 170 ms path, seen at the client: the client sends its last data
    // and resets; the server, closed by then, answers that data with a
    // RST of its own, a round trip later.
    let mut s = vec![
        (0, seg(true, 100, 0, SYN, b"")),
        (170, seg(false, 900, 101, SYN | ACK, b"")),
        (171, seg(true, 101, 901, ACK, b"")),
        (200, seg(true, 101, 901, PSH | ACK, b"bye")),
        (201, seg(true, 104, 901, TcpFlags::RST.bits() | ACK, b"")),
    ];
    s.push((372, seg(false, 901, 0, TcpFlags::RST.bits(), b"")));
    let mut other = seg(true, 1, 0, SYN, b"");
    other.src_port = 6000;
    s.push((5_000, other));
    let (r, _) = run_swept(&s, AnalyzeOptions::default());
    assert_eq!(r.reports.len(), 2);
    assert_eq!(r.stats.late_packets, 0);
    assert_eq!(r.reports[0].last_frame, 6, "the server's RST is the last");
}

#[test]
fn a_syn_ack_with_another_isn_after_the_handshake_leaves_the_sequence_space_alone() {
    // A second SYN-ACK (another server, a middlebox answering the SYN
    // late) arrives once the connection is up; the client answers it with
    // an ACK of the first and goes on: so does the analysis. (nDPI's
    // KakaoTalk_chat.pcap: every later server segment read as a re-send.)
    let mut s = handshake(0, 100, 900);
    s.push((40, seg(true, 101, 901, PSH | ACK, b"request")));
    s.push((45, seg(false, 50_000_000, 101, SYN | ACK, b"")));
    s.push((46, seg(true, 108, 901, ACK, b"")));
    s.push((70, seg(false, 901, 108, PSH | ACK, b"response")));
    s.push((80, seg(false, 909, 108, PSH | ACK, b"more")));
    s.push((81, seg(true, 108, 913, ACK, b"")));
    let c = &run(s, AnalyzeOptions::default()).reports[0];
    assert_eq!(c.server_to_client.retransmissions, 0);
    assert_eq!(c.server_to_client.bytes, 12);
    assert_eq!(c.handshake.syn_ack_retransmits, 0);
    assert!(!kinds(c).contains(&"retransmission"), "{:?}", kinds(c));
}

#[test]
fn bytes_acked_but_never_captured_are_a_capture_drop_not_loss() {
    let mut s = handshake(0, 100, 900);
    s.push((100, seg(false, 901, 101, ACK, b"0123456789")));
    // 901+10 .. 921 never captured, then the next segment and an ACK of all.
    s.push((101, seg(false, 921, 101, PSH | ACK, b"abcdefghij")));
    s.push((130, seg(true, 101, 931, ACK, b"")));
    let c = &run(s, AnalyzeOptions::default()).reports[0];
    assert_eq!(c.server_to_client.gaps, 1);
    assert_eq!(
        c.server_to_client.acked_unseen, 0,
        "the ACK covers a hole, not beyond what was seen"
    );
    assert_eq!(c.server_to_client.retransmissions, 0);

    let mut s = handshake(0, 100, 900);
    s.push((100, seg(false, 901, 101, ACK, b"0123456789")));
    // The last segment never captured: the client ACKs beyond it.
    s.push((130, seg(true, 101, 921, ACK, b"")));
    s.push((131, seg(true, 101, 921, ACK, b"")));
    let c = &run(s, AnalyzeOptions::default()).reports[0];
    assert_eq!(c.server_to_client.acked_unseen, 1);
    assert!(kinds(c).is_empty(), "{:?}", kinds(c));
}

#[test]
fn a_retransmission_finding_cites_the_original_and_the_retransmission() {
    let mut s = handshake(0, 100, 900);
    s.push((100, seg(false, 901, 101, PSH | ACK, b"response"))); // frame 4
    s.push((400, seg(false, 901, 101, PSH | ACK, b"response"))); // frame 5
    s.push((430, seg(true, 101, 909, ACK, b"")));
    let c = &run(s, AnalyzeOptions::default()).reports[0];
    let f = c
        .findings
        .iter()
        .find(|f| f.kind == crate::model::FindingKind::Retransmission)
        .expect("retransmission");
    assert_eq!(f.frames, vec![4, 5]);
    assert_eq!(
        f.display_filter,
        "tcp.stream eq 0 && frame.number in {4, 5}"
    );
}

/// Feeds (time in ms, segment) pairs, sweeping after each as the capture
/// clock advances; returns the reports, the stats and the most
/// connections held at once.
fn run_swept(segments: &[(i64, Segment<'static>)], options: AnalyzeOptions) -> (Run, usize) {
    let mut reports = Vec::new();
    let stats;
    let mut most_open = 0;
    {
        let mut sink = |r: ConnectionReport| reports.push(r);
        let mut t = crate::tracker(options, &mut sink);
        for (i, (ms, s)) in segments.iter().enumerate() {
            // As Tracker::frame does: sweep as the clock advances, then track.
            t.tick(ms * MS);
            t.track_segment(
                Stamp {
                    frame: i as u64 + 1,
                    ts_ns: ms * MS,
                },
                s,
            );
            most_open = most_open.max(t.open_connections());
        }
        stats = t.finish();
    }
    reports.sort_by_key(|r| r.stream);
    (Run { reports, stats }, most_open)
}

/// Handshake, then FINs both ways, each acknowledged.
fn closed_connection() -> Vec<(i64, Segment<'static>)> {
    let mut s = handshake(0, 100, 900);
    s.push((100, seg(true, 101, 901, FIN | ACK, b"")));
    s.push((130, seg(false, 901, 102, FIN | ACK, b"")));
    s.push((160, seg(true, 102, 902, ACK, b"")));
    s
}

#[test]
fn a_late_packet_after_the_linger_keeps_its_stream_and_is_counted_not_analysed() {
    let mut s = closed_connection();
    // 5 s later (past the 1 s linger): the client's last ACK again.
    s.push((5_000, seg(true, 102, 902, ACK, b"")));
    let (r, _) = run_swept(&s, AnalyzeOptions::default());
    assert_eq!(r.reports.len(), 1, "no new stream for a late packet");
    assert_eq!(r.stats.late_packets, 1);
    assert_eq!(
        r.reports[0].last_frame, 6,
        "reported before the late packet"
    );
}

#[test]
fn a_new_syn_on_a_finished_tuple_opens_the_next_stream() {
    let mut s = closed_connection();
    s.extend(handshake(5_000, 7000, 3000));
    let (r, _) = run_swept(&s, AnalyzeOptions::default());
    assert_eq!(r.reports.len(), 2);
    assert_eq!((r.reports[1].stream, r.reports[1].first_frame), (1, 7));
    assert_eq!(r.stats.late_packets, 0);
}

#[test]
fn a_fin_not_yet_acknowledged_keeps_the_connection_past_the_short_linger() {
    let mut s = handshake(0, 100, 900);
    s.push((100, seg(true, 101, 901, FIN | ACK, b"")));
    s.push((130, seg(false, 901, 101, FIN | ACK, b"")));
    // The server's FIN is never acknowledged: it sends it again 3 s later.
    s.push((3_130, seg(false, 901, 102, FIN | ACK, b"")));
    let (r, _) = run_swept(&s, AnalyzeOptions::default());
    assert_eq!(r.reports.len(), 1);
    assert_eq!(r.stats.late_packets, 0);
    assert_eq!(
        r.reports[0].last_frame, 6,
        "the FIN sent again is on the report"
    );
    assert_eq!(r.reports[0].server_to_client.retransmissions, 1);
}

#[test]
fn more_flows_than_the_cap_finishes_the_longest_idle_first_and_counts_them() {
    // Ten connections (SYN, SYN-ACK) from ten ports, 10 ms apart, with
    // room for four.
    let s: Vec<(i64, Segment<'static>)> = (0..10)
        .flat_map(|i| {
            let mut syn = seg(true, 100 + i, 0, SYN, b"");
            syn.src_port = 6000 + i as u16;
            let mut syn_ack = seg(false, 900, 101 + i, SYN | ACK, b"");
            syn_ack.dst_port = 6000 + i as u16;
            [(i as i64 * 10, syn), (i as i64 * 10 + 1, syn_ack)]
        })
        .collect();
    let options = AnalyzeOptions {
        max_flows: 4,
        ..AnalyzeOptions::default()
    };
    let (r, most_open) = run_swept(&s, options);
    assert!(most_open <= 5, "held {most_open}");
    assert_eq!(r.reports.len(), 10, "every flow is reported once");
    assert!(r.stats.evicted_flows >= 6, "{}", r.stats.evicted_flows);
    let streams: Vec<u64> = r.reports.iter().map(|c| c.stream).collect();
    assert_eq!(streams, (0..10).collect::<Vec<u64>>());
    // The first evicted are the oldest: stream 0 left first.
    assert!(r.reports[0].ending == Ending::Idle);
}

#[test]
fn lone_syns_beyond_their_cap_are_reported_longest_idle_first() {
    // Twenty lone SYNs; one connection's worth of room is four lone SYNs.
    let s: Vec<(i64, Segment<'static>)> = (0..20)
        .map(|i| {
            let mut syn = seg(true, 100 + i, 0, SYN, b"");
            syn.src_port = 6000 + i as u16;
            (i as i64 * 10, syn)
        })
        .collect();
    let options = AnalyzeOptions {
        max_flows: 1,
        ..AnalyzeOptions::default()
    };
    let (r, most_open) = run_swept(&s, options);
    assert!(most_open <= 4, "held {most_open}");
    assert_eq!(r.reports.len(), 20);
    assert!(r.stats.evicted_flows >= 16, "{}", r.stats.evicted_flows);
    let streams: Vec<u64> = r.reports.iter().map(|c| c.stream).collect();
    assert_eq!(streams, (0..20).collect::<Vec<u64>>());
    // A lone SYN's report is the one a connection that saw it makes.
    assert_eq!(r.reports[0].handshake.syn_frame, Some(1));
    assert_eq!(r.reports[0].client_to_server.packets, 1);
}

#[test]
fn an_evicted_flows_retransmitted_syn_stays_on_its_stream() {
    let mut s: Vec<(i64, Segment<'static>)> = (0..6)
        .map(|i| {
            let mut syn = seg(true, 100 + i, 0, SYN, b"");
            syn.src_port = 6000 + i as u16;
            (i as i64 * 10, syn)
        })
        .collect();
    // Port 6000's SYN again (same ISN) after it was evicted.
    let mut again = seg(true, 100, 0, SYN, b"");
    again.src_port = 6000;
    s.push((1_000, again));
    let options = AnalyzeOptions {
        max_flows: 2,
        ..AnalyzeOptions::default()
    };
    let (r, _) = run_swept(&s, options);
    assert_eq!(r.reports.len(), 6, "no seventh stream");
    assert_eq!(r.stats.late_packets, 1);
}

/// The same connection's segments moved to another client port, and
/// (for `server`) another server address.
fn moved(mut s: Segment<'static>, port: u16, server: Option<&str>) -> Segment<'static> {
    let from_client = s.src_port == 5000;
    if from_client {
        s.src_port = port;
    } else {
        s.dst_port = port;
    }
    if let Some(addr) = server {
        if from_client {
            s.dst = ip(addr);
        } else {
            s.src = ip(addr);
        }
    }
    s
}

/// A client's page load: its first connection shakes hands in 20 ms and
/// asks; a second connection to the same server, opened meanwhile, needs
/// 120 ms for its handshake (the client's link queue, 100 ms of it); the
/// first's answer comes 85 ms after its question, 5 ms after that
/// handshake ended. 65 ms "think time" on the first handshake's clock;
/// but a queue drains at most as fast as time passes, so 95 ms of queue
/// were still on the path: no think time. The same second handshake to
/// another server is that server's path (its fastest), not a queue; and
/// no second connection, no queue.
#[test]
fn a_queue_the_clients_other_handshakes_measured_is_not_server_think_time() {
    let first_conn = |answer_at: i64| {
        let mut s = vec![
            (0, seg(true, 100, 0, SYN, b"")),
            (20, seg(false, 900, 101, SYN | ACK, b"")),
            (20, seg(true, 101, 901, ACK, b"")),
            (
                240,
                seg(true, 101, 901, PSH | ACK, b"GET / HTTP/1.1\r\n\r\n"),
            ),
        ];
        s.push((
            answer_at,
            seg(false, 901, 119, PSH | ACK, b"HTTP/1.1 200 OK\r\n\r\n"),
        ));
        s.push((answer_at, seg(true, 119, 920, ACK, b"")));
        s
    };
    let second_conn = |server: Option<&'static str>| {
        vec![
            (200, moved(seg(true, 5000, 0, SYN, b""), 5001, server)),
            (
                320,
                moved(seg(false, 7000, 5001, SYN | ACK, b""), 5001, server),
            ),
            (320, moved(seg(true, 5001, 7001, ACK, b""), 5001, server)),
        ]
    };
    let think = |segments: Vec<(i64, Segment<'static>)>| -> Option<f64> {
        let r = run(segments, AnalyzeOptions::default());
        let first = r.reports.iter().find(|c| c.client.port == 5000).unwrap();
        first
            .findings
            .iter()
            .find(|f| f.kind == crate::model::FindingKind::ServerThinkTime)
            .map(|f| f.cost_ms)
    };
    let merged = |mut a: Vec<(i64, Segment<'static>)>, b: Vec<(i64, Segment<'static>)>| {
        a.extend(b);
        a.sort_by_key(|(t, _)| *t);
        a
    };
    // Alone: 85 ms from question to answer on a 20 ms path.
    assert_eq!(think(first_conn(325)), Some(65.0));
    // The queue the second handshake found, 5 ms before the answer.
    assert_eq!(think(merged(first_conn(325), second_conn(None))), None);
    // Another server 120 ms away: no queue in that.
    let far = merged(first_conn(325), second_conn(Some("10.0.0.3")));
    assert_eq!(think(far), Some(65.0));
    // An answer 100 ms after that handshake: at least 0 ms of its queue
    // left, so the think time stands (the bound says no more).
    let late = merged(first_conn(420), second_conn(None));
    assert_eq!(think(late), Some(160.0));
}

/// A window scale above 14 is used as 14 (RFC 7323 2.3) wherever a window
/// is scaled: a malformed option (the fuzzer sent 255) must not shift a
/// window out of its 64 bits, in the ladder either.
#[test]
fn a_window_scale_above_fourteen_is_used_as_fourteen() {
    let scaled = |mut s: Segment<'static>| {
        s.options.window_scale = Some(255);
        s
    };
    let s = vec![
        (0, scaled(seg(true, 100, 0, SYN, b""))),
        (20, scaled(seg(false, 900, 101, SYN | ACK, b""))),
        (20, seg(true, 101, 901, ACK, b"")),
        (
            30,
            seg(true, 101, 901, PSH | ACK, b"GET / HTTP/1.1\r\n\r\n"),
        ),
        (
            50,
            seg(false, 901, 119, PSH | ACK, b"HTTP/1.1 200 OK\r\n\r\n"),
        ),
    ];
    let options = AnalyzeOptions {
        ladder_stream: Some(0),
        ..AnalyzeOptions::default()
    };
    let r = run(s, options);
    let ladder = r.reports[0].ladder.as_ref().expect("the ladder asked for");
    // The window of 1000 scaled by 2^14.
    assert!(ladder.iter().any(|e| e.window == 1000 << 14), "{ladder:?}");
}

/// A client-side capture (RTT 30 ms) of `n` exchanges, each a request in
/// two small writes with Nagle on: the second (20 bytes) leaves the
/// moment the server's ACK of the first (10 bytes) arrives, one round trip
/// later; then the 5-byte answer. Four segments an exchange, ending with
/// the client's FIN and the server's.
fn nagle_exchanges(n: u32) -> Vec<(i64, Segment<'static>)> {
    let mut s = vec![
        (0, seg(true, 100, 0, SYN, b"")),
        (30, seg(false, 900, 101, SYN | ACK, b"")),
        (30, seg(true, 101, 901, ACK, b"")),
    ];
    let (mut c, mut srv, mut t) = (101u32, 901u32, 100i64);
    for _ in 0..n {
        s.push((t, seg(true, c, srv, PSH | ACK, b"0123456789")));
        s.push((t + 30, seg(false, srv, c + 10, ACK, b"")));
        s.push((
            t + 30,
            seg(true, c + 10, srv, PSH | ACK, b"01234567890123456789"),
        ));
        s.push((t + 60, seg(false, srv, c + 30, PSH | ACK, b"done!")));
        (c, srv, t) = (c + 30, srv + 5, t + 70);
    }
    s.push((t, seg(true, c, srv, FIN | ACK, b"")));
    s.push((t + 30, seg(false, srv, c + 1, FIN | ACK, b"")));
    s.push((t + 30, seg(true, c + 1, srv + 1, ACK, b"")));
    // Windows wide open: only Nagle holds anything.
    for (_, x) in &mut s {
        x.window = 65535;
    }
    s
}

/// In [`nagle_exchanges`]' exchanges `range`, the client sends its second
/// piece right behind the first, before the first is acknowledged: a
/// sender without Nagle.
fn back_to_back(s: &mut [(i64, Segment<'static>)], range: std::ops::Range<usize>) {
    for i in range {
        let (first, ack, second) = (3 + 4 * i, 3 + 4 * i + 1, 3 + 4 * i + 2);
        assert_eq!(s[second].1.seq, s[first].1.seq + 10);
        s[second].0 = s[first].0;
        s.swap(ack, second);
    }
}

/// The holds one Nagle finding counts: the waits it lists and those past them.
fn holds(f: &crate::model::Finding) -> usize {
    f.waits.len() + f.unlisted_waits.map_or(0, |u| u.count as usize)
}

#[test]
fn a_long_connection_is_diagnosed_to_its_end_a_window_at_a_time() {
    // 1500 exchanges: 6003 segments, three times the timeline's 2048.
    let n = 1500;
    let r = run(nagle_exchanges(n), AnalyzeOptions::default());
    let c = &r.reports[0];
    assert_eq!(c.exchanges, n);
    let later = c.later_windows.as_deref().expect("later windows");
    // The timeline, one window diagnosed while tracking, the last at the end.
    assert_eq!(later.windows, 2);
    // Every exchange is in the ledger: itemized, or in the later windows'
    // row (one per phase) that sums them.
    let itemized = c
        .ledger
        .iter()
        .filter(|r| r.phase == crate::model::Phase::FirstByte && r.summed == 0)
        .count() as u32;
    let summed: Vec<_> = c.ledger.iter().filter(|r| r.summed > 0).collect();
    assert_eq!(summed.len(), 1, "{summed:?}");
    assert_eq!(itemized + summed[0].summed, n);
    assert_eq!(later.first_exchange, itemized + 1);
    assert_eq!(later.exchanges, summed[0].summed);
    // One finding for the client's holds, all of them.
    let nagle: Vec<_> = c
        .findings
        .iter()
        .filter(|f| f.kind == crate::model::FindingKind::NagleHold)
        .collect();
    assert_eq!(nagle.len(), 1, "{:?}", kinds(c));
    let f = nagle[0];
    // The exchange under way when the timeline or a window fills goes on
    // in the next window with its segments: no hold is cut in two.
    assert_eq!(holds(f), n as usize);
    assert_eq!(f.waits.len(), crate::model::MAX_WAITS_LISTED);
    let unlisted = f.unlisted_waits.expect("waits past the listed");
    let listed_ms: f64 = f.waits.iter().map(|w| w.ms).sum();
    assert!((listed_ms + unlisted.ms - f.cost_ms).abs() < 1e-6);
    // Each hold is a round trip.
    assert!(
        (f.cost_ms / holds(f) as f64 - 30.0).abs() < 0.5,
        "{}",
        f.cost_ms
    );
    assert!(f.waits.iter().all(|w| w.release_frame.is_some()));
    // The numbers add up over the whole connection.
    let attributed: f64 = c.findings.iter().map(|f| f.attributed_ms).sum();
    assert!((attributed + c.unexplained_ms - c.excess_ms).abs() < 1e-3);
    assert!(
        c.unexplained_ms < 0.01 * c.excess_ms,
        "{}",
        c.unexplained_ms
    );
}

#[test]
fn a_connection_within_its_timeline_has_no_later_windows() {
    // 500 exchanges: 2003 segments, inside the timeline.
    let r = run(nagle_exchanges(500), AnalyzeOptions::default());
    let c = &r.reports[0];
    assert!(c.later_windows.is_none());
    assert!(c.ledger.iter().all(|r| r.summed == 0));
    let f = c
        .findings
        .iter()
        .find(|f| f.kind == crate::model::FindingKind::NagleHold)
        .unwrap();
    assert_eq!((holds(f), f.unlisted_waits), (500, None));
}

#[test]
fn a_sender_shown_without_nagle_has_no_holds_in_later_windows() {
    // The first `off` exchanges' client writes its two small pieces back
    // to back (the second leaves before the first is acknowledged: no
    // Nagle); the rest's second piece leaves as the server's ACK arrives:
    // a hold's look, but the sender showed it runs without Nagle. Shown
    // in the timeline only (400: its first 512 exchanges), or in the
    // first later window too (600): each later window is told.
    for off in [400, 600] {
        let mut s = nagle_exchanges(1500);
        back_to_back(&mut s, 0..off);
        let c = &run(s, AnalyzeOptions::default()).reports[0];
        assert!(c.later_windows.is_some());
        assert!(
            !c.findings.iter().any(|f| f.kind.is_nagle()),
            "{off}: {:?}",
            kinds(c)
        );
    }
}

#[test]
fn a_window_diagnosed_while_the_connection_is_open_is_handed_on_before_its_report() {
    // 3000 exchanges: 12003 segments, the timeline and four windows
    // diagnosed while tracking (the fifth, the last, with the report).
    let n = 3000;
    let handed = run_live(nagle_exchanges(n));
    let windows = windows_of(&handed);
    assert_eq!(windows.len(), 4, "{}", handed.len());
    let Some(Handed::Report(c)) = handed.last() else {
        panic!("the report comes last: {handed:?}");
    };
    assert_eq!(c.later_windows.as_deref().map(|l| l.windows), Some(5));
    // Each window: its own segments (in order, past the timeline), its
    // client's holds, a round trip each.
    let mut last = 0;
    for w in &windows {
        assert!(w.first_frame > last && w.last_frame > w.first_frame);
        last = w.last_frame;
        // Its exchanges' rows, each a block's.
        let rows = w
            .ledger
            .iter()
            .filter(|r| r.phase == crate::model::Phase::FirstByte);
        assert!((505..=512).contains(&rows.count()));
        let nagle: Vec<_> = w.findings.iter().filter(|f| f.kind.is_nagle()).collect();
        assert_eq!(nagle.len(), 1, "{:?}", kinds(w));
        let held = holds(nagle[0]);
        assert!((505..=512).contains(&held), "{held} holds in a window");
        assert!((nagle[0].cost_ms - 30.0 * held as f64).abs() < 0.5 * held as f64);
    }
    assert!(last < c.last_frame);
    // What they found is in the report again, joined: the windows handed
    // on hold part of its holds and cost, the rest is the timeline's and
    // the last window's.
    let f = c.findings.iter().find(|f| f.kind.is_nagle()).unwrap();
    let handed_on: usize = windows
        .iter()
        .flat_map(|w| w.findings.iter().filter(|f| f.kind.is_nagle()))
        .map(holds)
        .sum();
    let handed_ms: f64 = windows
        .iter()
        .flat_map(|w| w.findings.iter().filter(|f| f.kind.is_nagle()))
        .map(|f| f.cost_ms)
        .sum();
    assert!(holds(f) > handed_on + 512 && holds(f) <= n as usize);
    assert!(f.cost_ms > handed_ms + 30.0 * 512.0);
}

#[test]
fn a_window_diagnosed_while_open_is_told_what_the_timeline_showed() {
    // The client's first 400 exchanges send the second piece back to
    // back: the timeline shows it without Nagle; the rest have a hold's
    // look, which no window, the ones handed on while the connection is
    // open included, may call a hold.
    let mut s = nagle_exchanges(1500);
    back_to_back(&mut s, 0..400);
    let handed = run_live(s);
    let windows = windows_of(&handed);
    assert_eq!(windows.len(), 1);
    assert!(
        !windows[0].findings.iter().any(|f| f.kind.is_nagle()),
        "{:?}",
        kinds(windows[0])
    );
}

#[test]
fn holds_before_a_later_window_shows_the_sender_without_nagle_stand_and_none_after() {
    // Holds in exchanges 1-600 (the timeline's 512 and the first later
    // window's first 88), the second piece sent back to back in 601-700,
    // and a hold's look again in 701-1500 (later windows that must be
    // told what the first one showed).
    let mut s = nagle_exchanges(1500);
    back_to_back(&mut s, 600..700);
    let c = &run(s, AnalyzeOptions::default()).reports[0];
    let nagle: Vec<_> = c.findings.iter().filter(|f| f.kind.is_nagle()).collect();
    assert_eq!(nagle.len(), 1, "{:?}", kinds(c));
    let n = holds(nagle[0]);
    assert!((595..=600).contains(&n), "{n} holds");
}

#[test]
fn a_proxy_protocol_header_split_over_two_segments_is_read_whole_and_is_no_request() {
    let mut s = handshake(0, 100, 900);
    let head: &[u8] = b"PROXY TCP4 198.51.100.7 20";
    let tail: &[u8] = b"3.0.113.1 51234 443\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n";
    s.push((61, seg(true, 101, 901, PSH | ACK, head)));
    s.push((62, seg(true, 101 + head.len() as u32, 901, PSH | ACK, tail)));
    let end = 101 + (head.len() + tail.len()) as u32;
    s.push((
        93,
        seg(false, 901, end, PSH | ACK, b"HTTP/1.1 200 OK\r\n\r\n"),
    ));
    let c = &run(s, AnalyzeOptions::default()).reports[0];
    let p = c.proxy_protocol.as_deref().expect("the header");
    // Completed by the second segment (frame 5), which also began the
    // request.
    assert_eq!((p.version, p.frame), (1, 5));
    assert_eq!(
        p.client.map(|a| a.to_string()).as_deref(),
        Some("198.51.100.7:51234")
    );
    let rows: Vec<(&str, u64)> = c
        .ledger
        .iter()
        .map(|r| (r.label.as_str(), r.start_frame))
        .collect();
    assert!(
        rows.contains(&("GET /: request -> first byte", 5)),
        "{rows:?}"
    );
    assert_eq!(c.exchanges, 1);
}

#[test]
fn bytes_that_only_begin_like_a_proxy_protocol_header_are_the_clients_own() {
    let mut s = handshake(0, 100, 900);
    let line: &[u8] = b"PROXY nothing a balancer writes\r\n";
    s.push((61, seg(true, 101, 901, PSH | ACK, line)));
    s.push((
        93,
        seg(false, 901, 101 + line.len() as u32, PSH | ACK, b"ok\r\n"),
    ));
    let c = &run(s, AnalyzeOptions::default()).reports[0];
    assert!(c.proxy_protocol.is_none());
    assert_eq!(c.exchanges, 1);
    assert_eq!(c.client_to_server.bytes, line.len() as u64);
}

/// A download of 100-byte segments, 1 ms apart, the client acknowledging
/// every eighth; every segment timestamped on 1 kHz clocks. At the
/// server's segment 1580 the client sends a 10-byte request, and again
/// 200 ms later (its timer), while the server's segments go on
/// acknowledging only what came before it (the client's uplink queued).
/// The server's first ACK of the request, 50 ms after the re-send,
/// echoes `echoed_original` ? the original's TSval : the re-send's; a
/// second request, 20 ms after the re-send, is acknowledged 100 ms
/// later. The
/// request's first copy is the connection's ~1780th segment, its re-send
/// its ~2005th, that ACK its ~2062nd: the timeline (2048) would end
/// between them.
fn resend_acked_past_the_timeline(echoed_original: bool) -> Vec<(i64, Segment<'static>)> {
    const DATA: &[u8] = &[b'x'; 100];
    let mut s = handshake(0, 100, 900);
    let stamp = |x: &mut Segment<'static>, tsval: i64, tsecr: i64| {
        x.options.timestamps = Some((tsval as u32, tsecr as u32));
    };
    for (t, x) in &mut s {
        stamp(x, *t, 0);
    }
    let (request, resend, next, acked) = (1580, 1780, 1800, 1830);
    let mut c_acked = 0u32;
    let mut server_ack = 101;
    let mut server_tsecr = 60;
    for k in 0..2200u32 {
        let t = 100 + k as i64;
        if k == request || k == resend {
            let mut x = seg(true, 101, 901 + c_acked, PSH | ACK, b"0123456789");
            stamp(&mut x, t, t);
            s.push((t, x));
        }
        if k == next {
            let mut x = seg(true, 111, 901 + c_acked, PSH | ACK, b"0123456789");
            stamp(&mut x, t, t);
            s.push((t, x));
        }
        if k == next + 100 {
            server_ack = 121;
        }
        if k == acked {
            server_ack = 111;
            server_tsecr = if echoed_original {
                100 + request as i64
            } else {
                100 + resend as i64
            };
        }
        let mut x = seg(false, 901 + 100 * k, server_ack, ACK, DATA);
        stamp(&mut x, t, server_tsecr);
        s.push((t, x));
        if k % 8 == 7 {
            c_acked = 100 * (k + 1);
            let client_seq = match k {
                _ if k >= next => 121,
                _ if k >= request => 111,
                _ => 101,
            };
            let mut x = seg(true, client_seq, 901 + c_acked, ACK, b"");
            stamp(&mut x, t, t);
            s.push((t, x));
            if k < request {
                server_tsecr = t;
            }
        }
    }
    for (_, x) in &mut s {
        x.window = 65535;
    }
    s
}

#[test]
fn a_resends_proving_ack_past_the_timelines_end_is_still_read() {
    let at = |s: &[(i64, Segment<'static>)], t: i64, client: bool| {
        s.iter()
            .position(|(ts, x)| *ts == t && (x.src_port == 5000) == client && x.payload_len > 0)
            .unwrap()
    };
    let s = resend_acked_past_the_timeline(true);
    let (original, resend) = (at(&s, 1680, true), at(&s, 1880, true));
    let ack = at(&s, 1930, false);
    let cap = rttdoc_analyze::TIMELINE_CAP;
    assert!(
        original < cap && resend < cap && ack > cap,
        "{original} {resend} {ack}"
    );
    let c = &run(s, AnalyzeOptions::default()).reports[0];
    assert_eq!(c.client_to_server.retransmissions, 1);
    // RFC 3522: the ACK echoes the original's TSval, which arrived.
    assert!(
        !c.findings
            .iter()
            .any(|f| f.kind == crate::model::FindingKind::Retransmission),
        "{:?}",
        kinds(c)
    );
    // The control: the ACK echoes the re-send's TSval, the original was
    // lost (the request waited from its first copy to its re-send).
    let c = &run(
        resend_acked_past_the_timeline(false),
        AnalyzeOptions::default(),
    )
    .reports[0];
    let f = c
        .findings
        .iter()
        .find(|f| f.kind == crate::model::FindingKind::Retransmission)
        .unwrap_or_else(|| panic!("{:?}", kinds(c)));
    assert_eq!(f.frames, vec![original as u64 + 1, resend as u64 + 1]);
}
