//! Tracker rules, one behaviour per test, on segments built by hand.

use std::net::IpAddr;

use rttdoc_wire::{Segment, TcpFlags, TcpOptions, Tfo};

use crate::connection::Stamp;
use crate::model::ConnectionReport;
use crate::track::{AnalyzeOptions, Tracker};

const SYN: u16 = TcpFlags::SYN;
const ACK: u16 = TcpFlags::ACK;
const FIN: u16 = TcpFlags::FIN;
const PSH: u16 = TcpFlags::PSH;
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
        flags: TcpFlags(flags),
        window: 1000,
        options: TcpOptions::default(),
        payload_len: payload.len() as u32,
        payload,
        ip_id: None,
    }
}

struct Run {
    reports: Vec<ConnectionReport>,
}

/// Feeds (time in ms, segment) pairs and returns the finished reports.
fn run(segments: Vec<(i64, Segment<'static>)>, options: AnalyzeOptions) -> Run {
    let mut reports = Vec::new();
    {
        let mut sink = |r: ConnectionReport| reports.push(r);
        let mut t = Tracker::new(options, &mut sink);
        for (i, (ms, s)) in segments.iter().enumerate() {
            t.segment_for_test(
                Stamp {
                    frame: i as u64 + 1,
                    ts_ns: ms * MS,
                },
                s,
            );
        }
        t.finish();
    }
    reports.sort_by_key(|r| r.stream);
    Run { reports }
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
        .find(|r| r.phase == "tcp_handshake")
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
        r.reports[0].handshake.tfo.clone().map(|t| t.outcome)
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
        let mut t = Tracker::new(AnalyzeOptions::default(), &mut sink);
        for (i, (ms, seg)) in s.iter().enumerate() {
            t.segment_for_test(
                Stamp {
                    frame: i as u64 + 1,
                    ts_ns: ms * MS,
                },
                seg,
            );
            t.sweep_for_test(ms * MS);
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
    assert_eq!(c.vantage, crate::Vantage::Unknown);
    assert_eq!(c.rtt_ms, Some(40.0));
    assert_eq!(c.exchanges, 1);
    // The client is the side that spoke first on the higher port.
    assert_eq!(c.server.port, 443);
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
    assert_eq!(tls.messages[0].message, "ClientHello");
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
            .map(|x| x.kind)
            .collect()
    };
    let whole = kinds(window_paced(true));
    assert!(whole.contains(&"rwnd_limited"), "{whole:?}");
    // Mid-stream, the raw window (1000) might be scaled by anything.
    let partial = kinds(window_paced(false));
    assert!(!partial.contains(&"rwnd_limited"), "{partial:?}");
}
