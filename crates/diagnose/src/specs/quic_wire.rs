//! QUIC timelines for the QUIC detectors' specifications: datagrams with
//! real long and short headers (their payloads filler: nothing reads
//! them), written as each host sends them, captured where [`Path`] says,
//! fed through the tracker as UDP datagrams.

use rttdoc_analyze::Stamp;
use rttdoc_wire::quic::{VERSION_1, VERSION_2};

use super::{ns, Path, C, S};
use crate::model::{Direction, Finding, FindingKind, QuicConnectionReport, Wait};

pub const CLIENT: &str = "10.0.0.1";
pub const SERVER: &str = "10.0.0.2";
const CLIENT_PORT: u16 = 50000;
const SERVER_PORT: u16 = 443;

/// The client's and the server's connection IDs.
const CLIENT_CID: [u8; 8] = [0xc1; 8];
const SERVER_CID: [u8; 8] = [0x5e; 8];

/// A datagram's place in the build order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Id(usize);

struct Datagram {
    sent_ms: f64,
    dir: Direction,
    bytes: Vec<u8>,
    /// Lost half-way along the path: captured only on the sender's side
    /// of it.
    lost: bool,
}

/// A long header of `ty` (version 1's type bits), padded by its Length
/// field to `size` bytes in all.
fn long(ty: u8, version: u32, dcid: &[u8], scid: &[u8], token: &[u8], size: usize) -> Vec<u8> {
    let bits = if version == VERSION_2 {
        // Version 2 renumbers: Initial 1, 0-RTT 2, Handshake 3, Retry 0.
        (ty + 1) & 3
    } else {
        ty
    };
    let mut b = vec![0xc0 | (bits << 4)];
    b.extend_from_slice(&version.to_be_bytes());
    b.push(dcid.len() as u8);
    b.extend_from_slice(dcid);
    b.push(scid.len() as u8);
    b.extend_from_slice(scid);
    if ty == 0 {
        b.push(token.len() as u8);
        b.extend_from_slice(token);
    }
    // A 2-byte Length: the rest.
    let rest = size.saturating_sub(b.len() + 2).max(1);
    b.extend_from_slice(&(0x4000 | rest as u16).to_be_bytes());
    b.resize(b.len() + rest, 0xaa);
    b
}

/// Two hosts' QUIC datagrams, written as each sends them.
pub struct QuicWire {
    pub path: Path,
    datagrams: Vec<Datagram>,
    /// Another connection's datagrams (port 50001): sent time, sender,
    /// bytes; frames of their own, not the connection under test's.
    other: Vec<(f64, Direction, Vec<u8>)>,
    /// The client's TCP SYNs to the server's port 443 (from port 50100):
    /// their times.
    syns: Vec<f64>,
}

/// What the analysis said about the QUIC connection.
pub struct QuicOutcome {
    pub report: QuicConnectionReport,
    frame_of: Vec<u64>,
    /// Where the SYNs' frames start in `frame_of`.
    syn_base: usize,
}

impl QuicWire {
    pub fn new(path: Path) -> QuicWire {
        QuicWire {
            path,
            datagrams: Vec::new(),
            other: Vec::new(),
            syns: Vec::new(),
        }
    }

    fn push(&mut self, dir: Direction, t: f64, bytes: Vec<u8>) -> Id {
        self.datagrams.push(Datagram {
            sent_ms: t,
            dir,
            bytes,
            lost: false,
        });
        Id(self.datagrams.len() - 1)
    }

    /// The client's Initial (ClientHello), padded to 1200 bytes.
    pub fn initial(&mut self, t: f64) -> Id {
        self.initial_in(t, VERSION_1)
    }

    pub fn initial_in(&mut self, t: f64, version: u32) -> Id {
        let b = long(0, version, &[0xdc; 8], &CLIENT_CID, &[], 1200);
        self.push(C, t, b)
    }

    /// The client's Initial with a token (after a Retry).
    pub fn initial_with_token(&mut self, t: f64) -> Id {
        let b = long(0, VERSION_1, &SERVER_CID, &CLIENT_CID, &[7; 40], 1200);
        self.push(C, t, b)
    }

    /// A client datagram acknowledging the server's Initial: an Initial
    /// and a Handshake packet (ACKs), `size` bytes.
    pub fn client_ack(&mut self, t: f64, size: usize) -> Id {
        let mut b = long(0, VERSION_1, &SERVER_CID, &CLIENT_CID, &[], 60);
        b.extend(long(
            2,
            VERSION_1,
            &SERVER_CID,
            &CLIENT_CID,
            &[],
            size.saturating_sub(60),
        ));
        self.push(C, t, b)
    }

    /// The client's Finished (a Handshake packet) with its first 1-RTT
    /// packet.
    pub fn client_finished(&mut self, t: f64) -> Id {
        let mut b = long(2, VERSION_1, &SERVER_CID, &CLIENT_CID, &[], 80);
        b.extend_from_slice(&[0x40]);
        b.extend_from_slice(&SERVER_CID);
        b.extend_from_slice(&[0xbb; 40]);
        self.push(C, t, b)
    }

    /// The server's Initial (ServerHello) with Handshake packets, `size`
    /// bytes.
    pub fn server_initial(&mut self, t: f64, size: usize) -> Id {
        let mut b = long(0, VERSION_1, &CLIENT_CID, &SERVER_CID, &[], 150);
        b.extend(long(
            2,
            VERSION_1,
            &CLIENT_CID,
            &SERVER_CID,
            &[],
            size.saturating_sub(150),
        ));
        self.push(S, t, b)
    }

    /// The server's Initial with an ACK alone (no flight yet).
    pub fn server_ack(&mut self, t: f64) -> Id {
        let b = long(0, VERSION_1, &CLIENT_CID, &SERVER_CID, &[], 45);
        self.push(S, t, b)
    }

    /// A server datagram of Handshake packets (certificate, Finished).
    pub fn server_handshake(&mut self, t: f64, size: usize) -> Id {
        let b = long(2, VERSION_1, &CLIENT_CID, &SERVER_CID, &[], size);
        self.push(S, t, b)
    }

    /// A short-header (1-RTT) datagram.
    pub fn short(&mut self, dir: Direction, t: f64, size: usize) -> Id {
        let mut b = vec![0x40];
        b.extend_from_slice(if dir == C { &SERVER_CID } else { &CLIENT_CID });
        b.resize(size, 0xbb);
        self.push(dir, t, b)
    }

    /// The server's Retry.
    pub fn retry(&mut self, t: f64) -> Id {
        let mut b = vec![0xf0];
        b.extend_from_slice(&VERSION_1.to_be_bytes());
        b.push(8);
        b.extend_from_slice(&CLIENT_CID);
        b.push(8);
        b.extend_from_slice(&SERVER_CID);
        b.extend_from_slice(&[7; 40]);
        b.extend_from_slice(&[0; 16]);
        self.push(S, t, b)
    }

    /// The server's Version Negotiation, listing `versions`.
    pub fn version_negotiation(&mut self, t: f64, versions: &[u32]) -> Id {
        let mut b = vec![0x80, 0, 0, 0, 0, 8];
        b.extend_from_slice(&CLIENT_CID);
        b.push(8);
        b.extend_from_slice(&[0xdc; 8]);
        for v in versions {
            b.extend_from_slice(&v.to_be_bytes());
        }
        self.push(S, t, b)
    }

    /// Another client of the capture host (port 50001) connects to the
    /// server and is answered: the capture holds packets both ways.
    pub fn another_answered(&mut self, t: f64) {
        let i = long(0, VERSION_1, &[0xdd; 8], &[0xc2; 8], &[], 1200);
        self.other.push((t, C, i));
        let s = long(0, VERSION_1, &[0xc2; 8], &[0x5f; 8], &[], 300);
        self.other.push((t + self.path.rtt_ms, S, s));
    }

    /// The client opens a TCP connection to the server's port 443 (its
    /// SYN), from another port; its id counts after every datagram's.
    pub fn tcp_syn(&mut self, t: f64) -> Id {
        self.syns.push(t);
        Id(usize::MAX - (self.syns.len() - 1))
    }

    /// The datagram is lost half-way along the path.
    pub fn lose(&mut self, id: Id) {
        self.datagrams[id.0].lost = true;
    }

    pub fn run(self) -> QuicOutcome {
        self.run_where(|_| true)
    }

    /// With only the datagrams `keep` lets through in the capture.
    pub fn run_where(self, keep: impl Fn(Id) -> bool) -> QuicOutcome {
        let path = self.path;
        let mut order: Vec<(f64, usize)> = self
            .datagrams
            .iter()
            .enumerate()
            .filter(|(i, d)| {
                let seen = if !d.lost {
                    true
                } else if d.dir == C {
                    path.at < 0.75
                } else {
                    path.at > 0.25
                };
                seen && keep(Id(*i))
            })
            .map(|(i, d)| (path.captured_ms(d.dir, d.sent_ms), i))
            .collect();
        // The other connection's datagrams, numbered past this one's,
        // then the SYNs.
        let base = self.datagrams.len();
        order.extend(
            self.other
                .iter()
                .enumerate()
                .map(|(k, (t, dir, _))| (path.captured_ms(*dir, *t), base + k)),
        );
        let syn_base = base + self.other.len();
        order.extend(
            self.syns
                .iter()
                .enumerate()
                .map(|(k, t)| (path.captured_ms(C, *t), syn_base + k)),
        );
        order.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let mut frame_of = vec![0u64; self.datagrams.len() + self.other.len() + self.syns.len()];
        // The lone SYNs' reports: not what the specs read.
        let mut none = |_: crate::model::ConnectionReport| {};
        let mut t = crate::tracker(Default::default(), &mut none);
        for (k, (at, i)) in order.iter().enumerate() {
            let frame = k as u64 + 1;
            frame_of[*i] = frame;
            let stamp = Stamp {
                frame,
                ts_ns: ns(*at),
            };
            if *i >= syn_base {
                t.track_segment(
                    stamp,
                    &rttdoc_wire::Segment {
                        src: CLIENT.parse().unwrap(),
                        dst: SERVER.parse().unwrap(),
                        src_port: 50100,
                        dst_port: SERVER_PORT,
                        seq: 1,
                        ack: 0,
                        flags: rttdoc_wire::TcpFlags::SYN,
                        window: 64240,
                        options: rttdoc_wire::TcpOptions::default(),
                        payload_len: 0,
                        payload: &[],
                        ip_id: None,
                    },
                );
                continue;
            }
            let (dir, bytes, port) = match self.datagrams.get(*i) {
                Some(d) => (d.dir, &d.bytes, CLIENT_PORT),
                None => {
                    let (_, dir, bytes) = &self.other[*i - base];
                    (*dir, bytes, CLIENT_PORT + 1)
                }
            };
            let (src, dst, sp, dp) = if dir == C {
                (CLIENT, SERVER, port, SERVER_PORT)
            } else {
                (SERVER, CLIENT, SERVER_PORT, port)
            };
            t.track_udp(
                stamp,
                &rttdoc_wire::UdpDatagram {
                    src: src.parse().unwrap(),
                    dst: dst.parse().unwrap(),
                    src_port: sp,
                    dst_port: dp,
                    payload: bytes,
                    cut: false,
                    declared_len: bytes.len(),
                },
            );
        }
        let stats = t.finish();
        let quic = stats.quic.expect("a QUIC connection");
        let mine: Vec<_> = quic
            .listed
            .into_iter()
            .filter(|c| c.client.port == CLIENT_PORT)
            .collect();
        assert_eq!(mine.len(), 1, "one QUIC connection under test");
        QuicOutcome {
            report: mine.into_iter().next().unwrap(),
            frame_of,
            syn_base,
        }
    }
}

impl QuicOutcome {
    pub fn frame(&self, id: Id) -> u64 {
        // A SYN's id counts down from the top (`QuicWire::tcp_syn`).
        let at = if id.0 > usize::MAX / 2 {
            self.syn_base + (usize::MAX - id.0)
        } else {
            id.0
        };
        let f = self.frame_of[at];
        assert!(f > 0, "datagram {id:?} is not in the capture");
        f
    }

    pub fn frames(&self, ids: &[Id]) -> Vec<u64> {
        ids.iter().map(|i| self.frame(*i)).collect()
    }

    pub fn the(&self, kind: FindingKind) -> &Finding {
        let found: Vec<&Finding> = self
            .report
            .findings
            .iter()
            .filter(|f| f.kind == kind)
            .collect();
        assert_eq!(found.len(), 1, "one {kind}: {:#?}", self.report.findings);
        found[0]
    }

    pub fn has_no(&self, kind: FindingKind) {
        assert!(
            self.report.findings.iter().all(|f| f.kind != kind),
            "no {kind} expected: {:#?}",
            self.report.findings
        );
    }

    pub fn wait(&self, from: Id, to: Id, release: Option<Id>, ms: f64) -> Wait {
        Wait {
            from_frame: self.frame(from),
            to_frame: self.frame(to),
            release_frame: release.map(|r| self.frame(r)),
            ms,
        }
    }
}
