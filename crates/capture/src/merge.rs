//! Several capture files read as one, their packets merged by time the
//! way `mergecap` (Wireshark's wiretap) merges them: the next packet is
//! the earliest of every file's next one, and of packets with the same
//! time the one from the file named later. Frames are numbered in that
//! order, so they are the frame numbers (and the connections the
//! `tcp.stream` numbers) of `mergecap -w merged.pcapng FILE...`.
//!
//! Why a merge and not a concatenation: the files of a ring buffer
//! (`tcpdump -C -W`, `dumpcap -b`) follow one another, and their names
//! do not always sort in time (`trace.pcap10` before `trace.pcap2`);
//! captures of two interfaces or two hosts overlap. Both come out in
//! time order.
//!
//! Memory follows the files open at once, not their number: each file's
//! first packet is read (and the file closed again) to learn when it
//! starts, and a file is opened for good only when the merge reaches
//! that time, and closed at its end. A ring of a hundred files holds one
//! or two open.
//!
//! A file that cannot be opened or read stops only itself: the others
//! are read to their end, and its error comes after their last frame.

use std::collections::VecDeque;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use crate::error::CaptureError;
use crate::reader::{FileReader, Frame, Located, Progress, Secrets};

/// Files merged by time; see the module's doc.
pub(crate) struct Merge {
    /// The files, as given.
    pub(crate) paths: Vec<String>,
    /// Files not opened yet, by their first packet's place in the merge.
    waiting: VecDeque<(Key, usize)>,
    /// Files open, each with its next packet.
    open: Vec<Open>,
    /// The file whose packet the last call handed out: its reader moves
    /// on at the next call, not before (the frame borrows its buffer).
    lent: Option<usize>,
    pub(crate) frames: u64,
    pub(crate) progress: Progress,
    pub(crate) secrets: Secrets,
    /// Files that could not be read on, in the order they failed.
    errors: VecDeque<CaptureError>,
    /// Whether one file had packets both before and after a packet of
    /// another: files that overlap in time (two interfaces', two hosts'),
    /// not a ring's that follow one another.
    pub(crate) overlap: bool,
    /// Where the merged frames come from, a run of one file's
    /// consecutive frames each (a ring's files: one run a file), at most
    /// [`MAX_RUNS`]; `runs_cut` once more were not kept.
    pub(crate) runs: Vec<MergedRun>,
    pub(crate) runs_cut: bool,
}

/// Runs of merged frames kept (24 bytes each): files that follow one
/// another need one a file; files that overlap in time (two vantage
/// points) alternate, and past this their frames are not located.
pub const MAX_RUNS: usize = 100_000;

/// Where a run of merged frames comes from: the merged frame `frame`
/// and those after it, up to the next run's, are frames `file_frame`,
/// `file_frame + 1` ... of file number `file` (in the order given), as
/// Wireshark numbers that file's frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MergedRun {
    /// The run's first frame in the merge.
    pub frame: u64,
    /// Its file's index in the order given.
    pub file: usize,
    /// That frame's number in its file.
    pub file_frame: u64,
}

/// A packet's place in the merge: earlier time first; at the same time,
/// the later file first (wiretap's `is_earlier` keeps the last of equals).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Key {
    ts_ns: i64,
    later_file: std::cmp::Reverse<usize>,
}

impl Key {
    fn of(ts_ns: i64, file: usize) -> Key {
        Key {
            ts_ns,
            later_file: std::cmp::Reverse(file),
        }
    }
}

struct Open {
    file: usize,
    reader: FileReader,
    next: Located,
    /// When its first packet handed out was captured.
    began_ns: Option<i64>,
}

impl Merge {
    /// Learns when each file starts; opens none for good yet.
    pub(crate) fn open(paths: &[String]) -> Merge {
        let mut merge = Merge {
            paths: paths.to_vec(),
            waiting: VecDeque::new(),
            open: Vec::new(),
            lent: None,
            frames: 0,
            progress: Progress {
                read: Arc::default(),
                total: paths
                    .iter()
                    .map(|p| std::fs::metadata(p).ok().map(|m| m.len()))
                    .sum(),
            },
            secrets: Secrets::default(),
            errors: VecDeque::new(),
            overlap: false,
            runs: Vec::new(),
            runs_cut: false,
        };
        let mut starts = Vec::new();
        for (file, path) in paths.iter().enumerate() {
            // (Read again when opened for good: its bytes and secrets
            // count then, not here.)
            let first = FileReader::open(path, Arc::new(AtomicU64::new(0)), Secrets::default())
                .and_then(|mut r| r.next_located());
            match first {
                Ok(Some(packet)) => starts.push((Key::of(packet.ts_ns, file), file)),
                Ok(None) => {} // no packets: nothing to merge
                Err(e) => merge.errors.push_back(e),
            }
        }
        starts.sort_unstable();
        merge.waiting = starts.into();
        merge
    }

    pub(crate) fn next_frame(&mut self) -> Result<Option<Frame<'_>>, CaptureError> {
        if let Some(at) = self.lent.take() {
            match self.open[at].reader.next_located() {
                Ok(Some(packet)) => self.open[at].next = packet,
                Ok(None) => {
                    self.open.swap_remove(at);
                }
                Err(e) => {
                    self.errors.push_back(e);
                    self.open.swap_remove(at);
                }
            }
        }
        loop {
            let earliest = self
                .open
                .iter()
                .enumerate()
                .map(|(at, o)| (Key::of(o.next.ts_ns, o.file), at))
                .min();
            // A file that starts before the earliest open packet opens now.
            if let Some(&(start, file)) = self.waiting.front() {
                if earliest.is_none_or(|(key, _)| start < key) {
                    self.waiting.pop_front();
                    self.start(file);
                    continue;
                }
            }
            let Some((_, at)) = earliest else {
                return match self.errors.pop_front() {
                    Some(e) => Err(e),
                    None => Ok(None),
                };
            };
            self.frames += 1;
            // Overlap: another file has packets both before this one's
            // time and after it (a ring's next file starting at the very
            // moment its predecessor ends, a tie, is no overlap).
            let ts_ns = self.open[at].next.ts_ns;
            self.overlap |= self.open.len() > 1
                && self
                    .open
                    .iter()
                    .any(|o| o.began_ns.is_some_and(|b| b < ts_ns) && o.next.ts_ns > ts_ns);
            self.open[at].began_ns.get_or_insert(ts_ns);
            self.lent = Some(at);
            let open = &self.open[at];
            let (file, file_frame) = (open.file, open.reader.frames());
            let goes_on = self.runs.last().is_some_and(|r| {
                r.file == file && r.file_frame + (self.frames - r.frame) == file_frame
            });
            if !goes_on && !self.runs_cut {
                if self.runs.len() < MAX_RUNS {
                    self.runs.push(MergedRun {
                        frame: self.frames,
                        file,
                        file_frame,
                    });
                } else {
                    self.runs_cut = true;
                }
            }
            return Ok(Some(open.reader.frame(&open.next, self.frames)));
        }
    }

    /// Opens a file for good, at its first packet.
    fn start(&mut self, file: usize) {
        let opened = FileReader::open(
            &self.paths[file],
            self.progress.read.clone(),
            self.secrets.clone(),
        )
        .and_then(|mut reader| Ok(reader.next_located()?.map(|next| (reader, next))));
        match opened {
            Ok(Some((reader, next))) => self.open.push(Open {
                file,
                reader,
                next,
                began_ns: None,
            }),
            Ok(None) => {} // (it had a packet a moment ago: changed since)
            Err(e) => self.errors.push_back(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Capture, ErrorKind};
    use std::path::PathBuf;

    /// A classic pcap (Ethernet, microseconds) with one packet at each
    /// time, its byte the file's tag.
    fn pcap(times_us: &[i64], tag: u8) -> Vec<u8> {
        let mut out = Vec::new();
        for v in [0xa1b2_c3d4u32, 0x0004_0002, 0, 0, 65535, 1] {
            out.extend(v.to_le_bytes());
        }
        for &us in times_us {
            let (s, u) = ((us / 1_000_000) as u32, (us % 1_000_000) as u32);
            for v in [s, u, 1, 1] {
                out.extend(v.to_le_bytes());
            }
            out.push(tag);
        }
        out
    }

    struct Files(PathBuf);

    impl Files {
        fn new(contents: &[Vec<u8>]) -> (Files, Vec<String>) {
            let dir = std::env::temp_dir().join(format!(
                "rttdoc-merge-{}-{:?}",
                std::process::id(),
                std::thread::current().id()
            ));
            std::fs::create_dir_all(&dir).unwrap();
            let paths = contents
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let p = dir.join(format!("{i}.pcap"));
                    std::fs::write(&p, c).unwrap();
                    p.to_string_lossy().into_owned()
                })
                .collect();
            (Files(dir), paths)
        }
    }

    impl Drop for Files {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// Every frame as (number, time in µs, tag), and the errors after.
    fn read(c: &mut Capture) -> (Vec<(u64, i64, u8)>, Vec<CaptureError>) {
        let (mut frames, mut errors) = (Vec::new(), Vec::new());
        loop {
            match c.next_frame() {
                Ok(Some(f)) => frames.push((f.number, f.ts_ns / 1000, f.data[0])),
                Ok(None) => return (frames, errors),
                Err(e) => errors.push(e),
            }
        }
    }

    #[test]
    fn packets_come_in_time_order_whatever_the_files_order() {
        let (_dir, paths) = Files::new(&[
            pcap(&[30, 40], b'c'),
            pcap(&[10, 35], b'a'),
            pcap(&[20], b'b'),
        ]);
        let mut c = Capture::open_all(&paths).unwrap();
        let (frames, errors) = read(&mut c);
        assert!(errors.is_empty());
        assert_eq!(
            frames,
            [
                (1, 10, b'a'),
                (2, 20, b'b'),
                (3, 30, b'c'),
                (4, 35, b'a'),
                (5, 40, b'c')
            ]
        );
        assert_eq!(c.frames(), 5);
        let run = |frame, file, file_frame| MergedRun {
            frame,
            file,
            file_frame,
        };
        assert_eq!(
            c.merged_runs(),
            (
                &[
                    run(1, 1, 1),
                    run(2, 2, 1),
                    run(3, 0, 1),
                    run(4, 1, 2),
                    run(5, 0, 2)
                ][..],
                false
            )
        );
        assert!(c.files_overlap());
        assert_eq!(c.name(), paths[0]);
        assert_eq!(c.files(), paths);
    }

    #[test]
    fn of_packets_at_the_same_time_the_later_files_comes_first() {
        let (_dir, paths) = Files::new(&[
            pcap(&[10, 20], b'x'),
            pcap(&[10, 20], b'y'),
            pcap(&[20], b'z'),
        ]);
        let (frames, _) = read(&mut Capture::open_all(&paths).unwrap());
        let tags: Vec<u8> = frames.iter().map(|f| f.2).collect();
        assert_eq!(tags, b"yxzyx");
    }

    #[test]
    fn files_that_touch_do_not_overlap_and_interleaved_ones_do() {
        // A ring's next file starting at the moment its predecessor ends.
        let (_dir, paths) = Files::new(&[pcap(&[10, 20, 30], b'a'), pcap(&[30, 40], b'b')]);
        let mut c = Capture::open_all(&paths).unwrap();
        let (frames, _) = read(&mut c);
        assert_eq!(frames.len(), 5);
        assert!(!c.files_overlap());
        let (_dir, paths) = Files::new(&[pcap(&[10, 30], b'a'), pcap(&[20, 40], b'b')]);
        let mut c = Capture::open_all(&paths).unwrap();
        read(&mut c);
        assert!(c.files_overlap());
    }

    #[test]
    fn a_ring_holds_one_file_open_at_a_time() {
        let contents: Vec<Vec<u8>> = (0..40)
            .map(|i| pcap(&[i * 100, i * 100 + 50], b'r'))
            .collect();
        let (_dir, mut paths) = Files::new(&contents);
        paths.reverse();
        let mut merge = Merge::open(&paths);
        let mut most_open = 0;
        let mut times = Vec::new();
        while let Some(f) = merge.next_frame().unwrap() {
            times.push(f.ts_ns / 1000);
            most_open = most_open.max(merge.open.len());
        }
        assert_eq!(times.len(), 80);
        assert!(times.is_sorted());
        assert_eq!(most_open, 1);
        assert!(!merge.overlap);
        // One run a file: the newest given first is the last run.
        assert_eq!(merge.runs.len(), 40);
        assert_eq!(
            merge.runs[39],
            MergedRun {
                frame: 79,
                file: 0,
                file_frame: 1
            }
        );
    }

    #[test]
    fn a_damaged_or_foreign_file_stops_only_itself_and_is_reported_last() {
        let mut cut = pcap(&[15, 25, 35], b'd');
        cut.truncate(cut.len() - 8); // the last record's header cut
        let (_dir, paths) = Files::new(&[
            pcap(&[10, 20, 30, 40], b'a'),
            cut,
            b"not a capture".to_vec(),
            pcap(&[], b'e'),
        ]);
        let mut c = Capture::open_all(&paths).unwrap();
        let (frames, errors) = read(&mut c);
        let tags: Vec<u8> = frames.iter().map(|f| f.2).collect();
        assert_eq!(tags, b"adadaa");
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert_eq!(errors[0].file, paths[2]);
        assert!(matches!(errors[0].kind, ErrorKind::NotACapture { .. }));
        assert_eq!(errors[1].file, paths[1]);
        assert_eq!(errors[1].kind, ErrorKind::Truncated);
        assert!(c.next_frame().unwrap().is_none());
    }
}
