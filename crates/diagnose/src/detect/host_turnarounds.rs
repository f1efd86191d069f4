//! The hosts' own turnarounds too short to be a cause. Not a detector:
//! it makes no finding.
//!
//! Each host takes some time between the other's message arriving and
//! its own answer leaving: a TLS library signs or verifies, a handler
//! runs, a scheduler wakes the process. From half a round trip (5 to
//! 20 ms: `server_think_time::threshold_of`) that time is a cause,
//! `server_think_time`'s or `client_think_time`'s; below it, it is the
//! hosts' normal work. On a long path it is noise beside the round trips;
//! on a LAN or loopback, where a round trip is microseconds, it is most of
//! what a connection took beyond its ideal, and calling it "unexplained"
//! would send people looking for a cause that is not there.
//!
//! So the turns are timed as those two detectors time them (the same
//! functions: the server's from the question's last copy to its answer's
//! first segment on its clock, less the path's queue and an upstream
//! call; the client's from the flight's arrival to its answer), and the
//! ones below the threshold that no finding claims (no finding of the
//! phase has a wait that timed the turn: one ending at the same answer,
//! begun at the turn's question or later) are summed per phase and per
//! host. (A wait begun before the question timed something else: early
//! data a server held until the client's Finished waited from its own
//! arrival to the Finished's, and the server's turn on the Finished is
//! still its own.) The turns:
//! - in the TLS handshake, the server's turn on the ClientHello and on
//!   the client's later flights, and the client's turns;
//! - in a plaintext preamble (a proxy's CONNECT, STARTTLS), both sides'
//!   turns;
//! - for each request's first byte, the server's turn (a greeting's too),
//!   not on an exchange the ledger counts as idle.
//!
//! The ledger takes them from what no finding accounts for, phase by
//! phase, never more than that ([`HostTurnarounds::within`]): the JSON's
//! `client_turnaround_ms` and `server_turnaround_ms`, parts of
//! `unexplained_ms`.

use super::client_think_time::{handshake_client_turns, preamble_client_turns};
use super::server_think_time::{
    greeting_turn, later_flight_turns, preamble_server_turns, threshold_of,
};
use super::{Facts, TimedTurn};
use crate::model::{Direction, Finding, Phase};

/// The hosts' short turnarounds of one connection (or window): ns per
/// latency phase (indexed like [`Phase::ALL`]) and per host (indexed by
/// [`Direction::index`] of the host that answered: client, server).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HostTurnarounds {
    pub ns: [[i64; 2]; Phase::ALL.len()],
}

impl HostTurnarounds {
    /// In phase `phase`, both hosts' (ns).
    pub fn in_phase(&self, phase: Phase) -> i64 {
        self.ns[phase as usize].iter().sum()
    }

    /// The client's and the server's (ms), each phase's no more than what
    /// no finding accounted for in it (`left`, ms per phase): where the
    /// two hosts' turns exceed it (a turn timed on an estimated clock),
    /// both are scaled down alike.
    pub fn within(&self, left: &[f64; Phase::ALL.len()]) -> [f64; 2] {
        let mut out = [0.0; 2];
        for (p, sides) in self.ns.iter().enumerate() {
            let total: i64 = sides.iter().sum();
            if total <= 0 {
                continue;
            }
            let total_ms = total as f64 / 1e6;
            let scale = (left[p].max(0.0) / total_ms).min(1.0);
            for (o, ns) in out.iter_mut().zip(sides) {
                *o += *ns as f64 / 1e6 * scale;
            }
        }
        out
    }
}

/// The connection's short turnarounds (module docs); `findings` are what
/// the detectors found (their waits claim the turns they end).
pub fn measure(f: &Facts<'_>, findings: &[Finding]) -> HostTurnarounds {
    let mut host = HostTurnarounds::default();
    let Some(rtt) = f.rtt_ns else {
        return host;
    };
    let threshold = threshold_of(rtt);
    for &(phase, side, t) in f.short_turns() {
        let claimed = findings.iter().any(|x| {
            x.phase == Some(phase)
                && x.waits
                    .iter()
                    .any(|w| w.to_frame == t.to_frame && w.from_frame >= t.from_frame)
        });
        if t.ns > 0 && t.ns < threshold && !claimed {
            host.ns[phase as usize][side.index()] += t.ns;
        }
    }
    host
}

/// Every turn of the connection's that the module docs name, timed, with
/// its phase and the host that answered, whatever its length
/// ([`Facts::short_turns`] keeps them for the calls that filter them).
pub(super) fn timed_turns(f: &Facts<'_>) -> Vec<(Phase, Direction, TimedTurn)> {
    let mut out = Vec::new();
    let (client, server) = (Direction::ClientToServer, Direction::ServerToClient);
    for (side, t) in handshake_turns(f) {
        out.push((Phase::TlsHandshake, side, t));
    }
    if let Some((kind, _)) = f.preamble_row() {
        for (t, _) in preamble_server_turns(f) {
            out.push((kind.phase(), server, t));
        }
        for t in preamble_client_turns(f) {
            out.push((kind.phase(), client, t));
        }
    }
    let first_byte = Phase::FirstByte;
    if let Some((_, from, to, ns)) = greeting_turn(f) {
        out.push((first_byte, server, turn(from, to, ns)));
    }
    for &(n, from, to, ns) in f.server_turns() {
        if !f.idle_exchanges.contains(&n) {
            out.push((first_byte, server, turn(from, to, ns)));
        }
    }
    out
}

/// The TLS handshake's turns, each timed as its detector times it where
/// that detector can: the server's on the ClientHello
/// (`server_think_time::hello_turn`) and on the client's later flights,
/// the client's (`client_think_time::handshake_client_turns`: from its
/// ACK of the flight, less its certificate fetches). Where it cannot,
/// the turn's own estimate (`HandshakeTurn::wait_ns`, on the answerer's
/// clock as the round trip places it): a capture without the
/// ServerHello's record, a capture away from the client without its ACK
/// of the flight; not a client answer Nagle held behind the client's own
/// record (nagle.rs), nor turns the capture did not show whole.
fn handshake_turns(f: &Facts<'_>) -> Vec<(Direction, TimedTurn)> {
    let hello = f.hello_turn().map(|(_, t)| t);
    let later = later_flight_turns(f).collect::<Vec<_>>();
    let client = handshake_client_turns(f);
    let timed = |turns: &[TimedTurn], to: u64| turns.iter().find(|t| t.to_frame == to).copied();
    let mut out = Vec::new();
    for t in f.handshake_turns().iter().filter(|t| t.complete) {
        let estimate = turn(t.question_frame, t.answer_frame, t.wait_ns);
        let timed = match t.answerer {
            Direction::ServerToClient if t.first => hello.or(Some(estimate)),
            Direction::ServerToClient => timed(&later, t.answer_frame),
            Direction::ClientToServer if f.report.proxy_protocol.is_some() => None,
            Direction::ClientToServer => timed(&client, t.answer_frame).or_else(|| {
                (!super::client_think_time::held_behind_own_record(f, t)).then_some(estimate)
            }),
        };
        out.extend(timed.map(|x| (t.answerer, x)));
    }
    out
}

fn turn(from_frame: u64, to_frame: u64, ns: i64) -> TimedTurn {
    TimedTurn {
        from_frame,
        to_frame,
        ns,
    }
}
