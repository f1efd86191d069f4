//! Causality: the rules every finding obeys, whatever detector made it.
//!
//! A finding says "this packet waited, and that packet released it, and
//! the wait cost this much". On a real capture (duplicates, keep-alives,
//! heartbeats, clocks shifted by an RTT estimate) a detector's signature
//! can match things that cannot have happened. These rules are checked
//! here once, after every detector ran, on the [`Wait`]s a finding cites:
//!
//! 1. What releases a wait comes before it: the releasing packet was
//!    captured before the packet that left (at any vantage on the path the
//!    release passes the capture point before the answer it triggers does).
//! 2. A release never acknowledges the very segment it released.
//! 3. The waiting and releasing packets come from opposite sides.
//! 4. A wait is no longer than the capture shows between its ends (plus
//!    the clock shift's error when the ends come from both sides), and a
//!    finding's cost is the sum of its waits: no cost without a wait.
//! 5. Nagle never holds a full-size segment (`tcp_nagle_check` only
//!    applies to sub-MSS segments).
//!
//! A wait that breaks a rule is dropped; a finding left with no waits is
//! dropped; the cost is recomputed from what is left. Idle time is kept
//! out by the detectors themselves (each bounds its wait by what the
//! mechanism allows: a delayed-ACK timer, a retransmission timer), and
//! the ledger's absolute floor ([`EXCESS_FLOOR_NS`]) keeps microsecond
//! round trips from turning host work into "extra round trips".

use super::Facts;
use crate::model::Finding;
use rttdoc_analyze::seq;
use rttdoc_analyze::SegmentRecord;

/// Time beyond the ideal counts as excess only above this, whatever the
/// RTT: below it, host scheduling, interrupt coalescing and timestamping
/// noise dominate (on loopback a 50 µs RTT would turn 1 ms of host work
/// into "+20 RTT").
pub const EXCESS_FLOOR_NS: i64 = 2_000_000;

/// The longest a receiver may delay an ACK (RFC 1122 4.2.3.2: 0.5 s).
/// A Nagle hold lasts until the ACK of the last small segment comes back,
/// so it can never be longer than a round trip plus this.
pub const MAX_ACK_DELAY_NS: i64 = 500_000_000;

impl Facts<'_> {
    /// Rules 1-3 for one held segment and the packet said to release it;
    /// also, the held segment must not acknowledge data the peer sent
    /// after the release: then it left after that data arrived, and
    /// answers it (a reply is not a release).
    pub fn can_release(&self, release: &SegmentRecord, held: &SegmentRecord) -> bool {
        let before = release.frame < held.frame && release.ts_ns <= held.ts_ns;
        let acks_held = release.ack_set && seq::le(held.end, release.ack) && held.len > 0;
        if !before || acks_held || release.dir == held.dir {
            return false;
        }
        // The ACK field is filled in when a segment leaves, so data that
        // arrived together with the release (a TLS compatibility
        // ChangeCipherSpec right behind an ACK) is acknowledged too without
        // being answered: only data well after the release counts.
        let rtt = self.rtt_ns.unwrap_or(0);
        let together = (rtt / 10).max(1_000_000);
        let answers_later_data = held.ack_set
            && self.between(release.frame + 1, held.frame).iter().any(|d| {
                d.dir == release.dir
                    && d.len > 0
                    && seq::le(d.end, held.ack)
                    && d.ts_ns - release.ts_ns > together
            });
        !answers_later_data
    }
}

/// Applies the rules to every finding with waits; see the module doc.
pub fn enforce(f: &Facts<'_>, out: &mut Vec<Finding>) {
    // The clock shift between the two sides is only as good as the RTT
    // estimate and the path's jitter.
    let shift_error_ns = f.rtt_ns.unwrap_or(0) + f.jitter_ns + 1_000_000;
    out.retain_mut(|x| {
        if x.waits.is_empty() {
            return true;
        }
        let nagle = x.kind.is_nagle();
        let before = x.waits.len();
        x.waits.retain(|w| {
            let (Some(from), Some(to)) = (f.record(w.from_frame), f.record(w.to_frame)) else {
                return false;
            };
            if from.frame > to.frame || w.ms < 0.0 {
                return false;
            }
            if let Some(rel) = w.release_frame {
                let Some(rel) = f.record(rel) else {
                    return false;
                };
                if !f.can_release(rel, to) || rel.frame < from.frame {
                    return false;
                }
            }
            let span_ns = to.ts_ns - from.ts_ns;
            let slack = if from.dir == to.dir {
                1_000
            } else {
                shift_error_ns
            };
            if (w.ms * 1e6) as i64 > span_ns + slack {
                return false;
            }
            !(nagle && to.len >= f.mss(to.dir))
        });
        if x.waits.is_empty() {
            return false;
        }
        if x.waits.len() != before {
            let kept: f64 = x.waits.iter().map(|w| w.ms).sum();
            x.cost_ms = kept;
            x.cost_rtts = None;
            x.frames = x
                .waits
                .iter()
                .take(8)
                .flat_map(|w| [Some(w.to_frame), w.release_frame])
                .flatten()
                .collect();
            x.display_filter = f.filter_frames(&x.frames);
        }
        true
    });
}
