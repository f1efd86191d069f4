//! Where a finished connection becomes its report: its facts are frozen
//! and handed to the diagnosis (a [`Diagnose`] function the caller gives:
//! `rttdoc-diagnose`'s ledger and detectors), on the tracking thread
//! (`--threads 1`), or on worker threads while tracking reads on
//! (`--threads N`: the costly part per connection runs beside the pass
//! instead of inside it).
//!
//! Output is identical either way: every connection gets a sequence number
//! in the order the tracker finishes it, and reports reach the sink in that
//! order (a reorder buffer on the tracking thread), so the sink itself need
//! not be thread-safe. Memory stays bounded: at most [`MAX_IN_FLIGHT`]
//! connections' worth of work is with the workers, and at most
//! [`MAX_WAITING`] reports wait for a worker or for their turn; beyond
//! that the tracker waits.

use std::collections::VecDeque;
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use crate::connection::Connection;
use crate::facts::{ConnectionFacts, Diagnose};
use crate::lone_syn::LoneSyn;
use crate::model::{ConnectionReport, Ending};

/// Connections' worth of work handed to workers and not yet back.
pub const MAX_IN_FLIGHT: usize = 1024;

/// Reports not yet given to the sink (with a worker, or made and waiting
/// for their turn): a report is 552 bytes, so about a megabyte.
pub const MAX_WAITING: usize = 2 * 1024;

/// Connections' worth of work sent to a worker at once: one hand-over (a
/// thread wake-up, a few microseconds) per connection would cost more
/// than a short connection's diagnosis.
const BATCH: usize = 64;

/// What a connection weighs against [`BATCH`] and [`MAX_IN_FLIGHT`], in
/// lone SYNs: its state is kilobytes and its diagnosis microseconds; a
/// lone SYN's record is ~100 bytes and its diagnosis well under one (so
/// a SYN flood's batches are this many times longer, and it wakes the
/// workers this many times less often).
const CONNECTION_WEIGHT: usize = 4;

/// Husks of finished connections kept to start new ones in (each is a
/// connection's 2 KB and the room of its buffers).
const HUSKS_KEPT: usize = 2 * BATCH;

/// Finished connections, emptied (frozen, their facts taken), for new
/// connections to start in ([`Connection::renew`]): their blocks and the
/// room of their buffers are used again instead of freed and allocated
/// anew (a tenth of the tracking thread on a churn of short connections).
#[derive(Default)]
// Boxed as they were tracked: the box is one of the blocks used again.
#[allow(clippy::vec_box)]
pub(crate) struct Husks(Vec<Box<Connection>>);

impl Husks {
    fn keep(&mut self, husk: Box<Connection>) {
        if self.0.len() < HUSKS_KEPT {
            self.0.push(husk);
        }
    }

    fn take(&mut self) -> Option<Box<Connection>> {
        self.0.pop()
    }
}

/// Connections of at most this many segments (a refused connect, a scan)
/// are reported on the tracking thread: their diagnosis is shorter than
/// handing a connection to a worker, whose blocks then come back to be
/// freed. (A lone SYN goes to a worker as its heap-free record instead.)
const SMALL: usize = 4;

/// A finished connection, and when the capture began (for `start_offset_s`).
struct Job {
    seq: u64,
    work: Work,
    first_time: Option<f64>,
}

/// What a report is made from.
enum Work {
    Connection(Box<Connection>, Ending),
    LoneSyn(LoneSyn),
}

impl Work {
    /// Its share of a batch and of the work in flight, in lone SYNs.
    fn weight(&self) -> usize {
        match self {
            Work::Connection(..) => CONNECTION_WEIGHT,
            Work::LoneSyn(_) => 1,
        }
    }
}

/// A worker's batch, done: the reports, and the connections they were
/// made from, emptied, to be freed on the tracking thread that allocated
/// them (freed by the worker, each block would cost both threads an
/// atomic hand-back: a tenth of the worker's time on short connections).
struct Done {
    /// The batch's [`Work::weight`], back from the workers.
    weight: usize,
    reports: Vec<(u64, ConnectionReport)>,
    // Boxed as they came: the box is one of the blocks to free at home.
    #[allow(clippy::vec_box)]
    husks: Vec<Box<Connection>>,
    /// The batch's own vector, emptied, for the next batch (a SYN flood's
    /// batch is tens of kilobytes: made anew each time, its pages were
    /// faulted in, and freed by the worker, handed back block by block).
    room: Vec<Job>,
}

/// Where reports go, in order: one at a time, or a worker's batch at once
/// when its reports are next in turn and follow one another (a report is
/// 552 bytes: handed over as a batch, none of them is copied).
pub trait ReportSink {
    fn report(&mut self, r: ConnectionReport);

    /// A QUIC connection's report, as it finishes (before it joins the
    /// capture's `quic` section): for outputs that follow a live capture.
    fn quic(&mut self, _r: &rttdoc_model::QuicConnectionReport) {}

    /// A long connection's later window, diagnosed while the connection
    /// is still open (window.rs): its exchanges' ledger rows and what it
    /// found (the exchanges numbered as the connection's), its `tls` only
    /// the connection's version and server name. The connection's report,
    /// when it finishes, holds this window's findings again, joined, and
    /// its rows summed: for outputs that count as they go (the metrics),
    /// which must not count them twice. Windows come in the connection's
    /// order, before its report.
    fn window(&mut self, _report: ConnectionReport) {}

    /// Reports numbered one after the other, the first one's turn come.
    fn reports(&mut self, rs: Vec<(u64, ConnectionReport)>) {
        for (_, r) in rs {
            self.report(r);
        }
    }
}

impl<F: FnMut(ConnectionReport)> ReportSink for F {
    fn report(&mut self, r: ConnectionReport) {
        self(r)
    }
}

/// Turns connections into reports, in order.
pub(crate) enum Finisher {
    Inline(Diagnose, Husks),
    Pool(Pool),
}

pub(crate) struct Pool {
    diagnose: Diagnose,
    jobs: Option<SyncSender<Vec<Job>>>,
    /// Jobs not yet sent (less than [`BATCH`] connections' worth).
    batch: Vec<Job>,
    /// Their weight.
    batch_weight: usize,
    /// The weight of the batches sent and not yet back.
    sent_weight: usize,
    /// Batches' vectors back from the workers, empty, to be used again.
    spare: Vec<Vec<Job>>,
    /// Finished connections back from the workers (or made here).
    husks: Husks,
    results: Receiver<Done>,
    workers: Vec<JoinHandle<()>>,
    next_seq: u64,
    /// The next sequence number the sink gets.
    next_out: u64,
    /// Reports made and not yet given to the sink: slot `i` holds the
    /// report numbered `next_out + i` once it is made (a ring, not a
    /// sorted map: a report is 552 bytes, and a B-tree moves its values
    /// around on every insert and removal).
    ready: VecDeque<Option<ConnectionReport>>,
    /// Polls since the results were last looked at.
    polls: u32,
}

/// The results are looked at on every this many frames:
/// a look costs a channel's atomics, and a batch takes the workers far
/// longer than this many frames take the tracker.
const POLL_EVERY: u32 = 32;

/// Makes the report of one connection (the same on any thread).
fn report(
    diagnose: Diagnose,
    c: &mut Connection,
    ending: Ending,
    first_time: Option<f64>,
) -> ConnectionReport {
    diagnosed(c.freeze_leaving_husk(ending), first_time, diagnose)
}

fn diagnosed(
    facts: ConnectionFacts,
    first_time: Option<f64>,
    diagnose: Diagnose,
) -> ConnectionReport {
    let mut report = diagnose(facts);
    if let Some(t0) = first_time {
        report.start_offset_s = (report.start_time - t0).max(0.0);
    }
    report
}

impl Finisher {
    /// Inline for one thread; `threads - 1` workers otherwise.
    pub(crate) fn new(threads: usize, diagnose: Diagnose) -> Finisher {
        if threads <= 1 {
            return Finisher::Inline(diagnose, Husks::default());
        }
        // Room for every batch the bound on work in flight lets out.
        let (jobs, queue) = sync_channel::<Vec<Job>>(MAX_IN_FLIGHT / BATCH + 1);
        let queue = Arc::new(Mutex::new(queue));
        let (done, results) = channel();
        let workers = (1..threads)
            .map(|i| {
                let queue = Arc::clone(&queue);
                let done: Sender<Done> = done.clone();
                std::thread::Builder::new()
                    .name(format!("rttdoc-diagnose-{i}"))
                    .spawn(move || loop {
                        // The lock is held only to take one job.
                        let job = match queue.lock() {
                            Ok(q) => q.recv(),
                            Err(_) => return,
                        };
                        let Ok(mut batch) = job else { return };
                        let mut done_batch = Done {
                            weight: batch.iter().map(|j| j.work.weight()).sum(),
                            reports: Vec::with_capacity(batch.len()),
                            husks: Vec::with_capacity(batch.len()),
                            room: Vec::new(),
                        };
                        for j in batch.drain(..) {
                            let facts = match j.work {
                                Work::Connection(mut c, ending) => {
                                    let facts = c.freeze_leaving_husk(ending);
                                    done_batch.husks.push(c);
                                    facts
                                }
                                Work::LoneSyn(lone) => lone.facts(),
                            };
                            let r = diagnosed(facts, j.first_time, diagnose);
                            done_batch.reports.push((j.seq, r));
                        }
                        done_batch.room = batch;
                        if done.send(done_batch).is_err() {
                            return;
                        }
                    })
                    .expect("spawning a diagnosis thread")
            })
            .collect();
        Finisher::Pool(Pool {
            diagnose,
            jobs: Some(jobs),
            batch: Vec::new(),
            batch_weight: 0,
            sent_weight: 0,
            spare: Vec::new(),
            husks: Husks::default(),
            results,
            workers,
            next_seq: 0,
            next_out: 0,
            ready: VecDeque::new(),
            polls: 0,
        })
    }

    /// Finishes a connection; reports that are ready go to the sink.
    pub(crate) fn submit(
        &mut self,
        c: Box<Connection>,
        ending: Ending,
        first_time: Option<f64>,
        sink: &mut dyn ReportSink,
    ) {
        let mut c = c;
        match self {
            Finisher::Inline(diagnose, husks) => {
                sink.report(report(*diagnose, &mut c, ending, first_time));
                husks.keep(c);
            }
            Finisher::Pool(p) if c.timeline.len() <= SMALL => {
                // Cheaper here than handed over.
                let r = report(p.diagnose, &mut c, ending, first_time);
                p.husks.keep(c);
                p.made_here(r, sink);
            }
            Finisher::Pool(p) => p.push(Work::Connection(c, ending), first_time, sink),
        }
    }

    /// Finishes a lone SYN: its facts are made and diagnosed with the
    /// connections (on a worker when there are workers: a SYN flood is
    /// little else).
    pub(crate) fn submit_lone_syn(
        &mut self,
        lone: LoneSyn,
        first_time: Option<f64>,
        sink: &mut dyn ReportSink,
    ) {
        match self {
            Finisher::Inline(diagnose, _) => {
                sink.report(diagnosed(lone.facts(), first_time, *diagnose))
            }
            Finisher::Pool(p) => p.push(Work::LoneSyn(lone), first_time, sink),
        }
    }

    /// A finished connection's husk to start a new one in, if there is
    /// one ([`Husks`]).
    pub(crate) fn husk(&mut self) -> Option<Box<Connection>> {
        match self {
            Finisher::Inline(_, husks) => husks.take(),
            Finisher::Pool(p) => p.husks.take(),
        }
    }

    /// Hands over the reports that are ready, in order, without waiting.
    pub(crate) fn poll(&mut self, sink: &mut dyn ReportSink) {
        if let Finisher::Pool(p) = self {
            p.polls = 0;
            p.deliver(false, sink);
        }
    }

    /// [`poll`](Self::poll) on every [`POLL_EVERY`]th call (once per
    /// frame).
    pub(crate) fn poll_sometimes(&mut self, sink: &mut dyn ReportSink) {
        if let Finisher::Pool(p) = self {
            p.polls += 1;
            if p.polls >= POLL_EVERY {
                self.poll(sink);
            }
        }
    }

    /// Waits for every report and hands them over; stops the workers.
    pub(crate) fn drain(&mut self, sink: &mut dyn ReportSink) {
        if let Finisher::Pool(p) = self {
            p.send_batch();
            p.jobs = None;
            while p.next_out < p.next_seq {
                p.deliver(true, sink);
            }
            for w in p.workers.drain(..) {
                if let Err(panic) = w.join() {
                    std::panic::resume_unwind(panic);
                }
            }
        }
    }
}

impl Pool {
    fn push(&mut self, work: Work, first_time: Option<f64>, sink: &mut dyn ReportSink) {
        self.batch_weight += work.weight();
        self.batch.push(Job {
            seq: self.next_seq,
            work,
            first_time,
        });
        self.next_seq += 1;
        if self.batch_weight >= BATCH * CONNECTION_WEIGHT {
            // Back-pressure: waits for batches sent before this one (what
            // the workers hold, and reports in the ring, wait for them).
            while self.sent_weight > 0
                && (self.sent_weight + self.batch_weight > MAX_IN_FLIGHT * CONNECTION_WEIGHT
                    || self.next_seq - self.next_out > MAX_WAITING as u64)
            {
                self.deliver(true, sink);
            }
            self.send_batch();
        }
    }

    fn send_batch(&mut self) {
        if self.batch.is_empty() {
            return;
        }
        let room = self.spare.pop().unwrap_or_default();
        let batch = std::mem::replace(&mut self.batch, room);
        self.sent_weight += std::mem::take(&mut self.batch_weight);
        self.jobs
            .as_ref()
            .expect("open until the end")
            .send(batch)
            .expect("diagnosis threads alive");
    }

    fn deliver(&mut self, wait: bool, sink: &mut dyn ReportSink) {
        let mut waited = !wait;
        loop {
            let next = if waited {
                self.results.try_recv().ok()
            } else {
                waited = true;
                match self.results.recv() {
                    Ok(r) => Some(r),
                    Err(_) => {
                        // Every worker is gone before its work was done: one
                        // panicked. Surface it.
                        for w in self.workers.drain(..) {
                            if let Err(panic) = w.join() {
                                std::panic::resume_unwind(panic);
                            }
                        }
                        panic!("diagnosis threads stopped early");
                    }
                }
            };
            let Some(Done {
                weight,
                reports,
                husks,
                room,
            }) = next
            else {
                break;
            };
            self.sent_weight -= weight;
            for husk in husks {
                self.husks.keep(husk);
            }
            self.spare.push(room);
            let in_turn = self.ready.is_empty()
                && reports
                    .iter()
                    .enumerate()
                    .all(|(i, (seq, _))| *seq == self.next_out + i as u64);
            if in_turn {
                self.next_out += reports.len() as u64;
                sink.reports(reports);
                continue;
            }
            for (seq, r) in reports {
                self.put(seq, r, sink);
            }
        }
    }

    /// Takes a report made on the tracking thread: given to the sink in
    /// its turn, after those still with the workers.
    fn made_here(&mut self, r: ConnectionReport, sink: &mut dyn ReportSink) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.put(seq, r, sink);
    }

    /// Gives the sink this report if it is its turn (and those after it
    /// that are ready), else keeps it until then.
    fn put(&mut self, seq: u64, r: ConnectionReport, sink: &mut dyn ReportSink) {
        if seq != self.next_out {
            self.store(seq, r);
            return;
        }
        // Given over without a trip through the ring (each trip is two
        // copies of 552 bytes; with one worker, reports come in order).
        self.ready.pop_front();
        self.next_out += 1;
        sink.report(r);
        self.release(sink);
    }

    /// Keeps a report until its turn.
    fn store(&mut self, seq: u64, r: ConnectionReport) {
        let slot = (seq - self.next_out) as usize;
        if self.ready.len() <= slot {
            self.ready.resize_with(slot + 1, || None);
        }
        self.ready[slot] = Some(r);
    }

    /// Gives the sink every report whose turn it is.
    fn release(&mut self, sink: &mut dyn ReportSink) {
        while self.ready.front().is_some_and(Option::is_some) {
            let r = self.ready.pop_front().flatten().expect("checked");
            sink.report(r);
            self.next_out += 1;
        }
    }
}
