//! SCADA protocols whose outstations report on their own: IEC 60870-5-104
//! (tests/data/scada/iec104.pcap.gz, made by scripts/scada-captures.sh
//! with c104's lib60870 at both ends, real Linux TCP, 20 ms each way; and
//! nDPI's capture of a substation test set) and DNP3 (nDPI's capture of a
//! master and an outstation, tests/data/other-projects/ndpi-dnp3.pcap).
//! A master's acknowledgment (IEC-104's S-frame, DNP3's CONFIRM) asks
//! nothing, and an outstation's spontaneous or unsolicited report answers
//! nothing: before iec104.rs and dnp3.rs, the time until the next breaker
//! change was the outstation's think time (5.7 s on nDPI's IEC-104
//! capture, 15.4 s on its DNP3 one, 2.6 s on c104's). What each turn's
//! first and last frames carry is read with tshark's own dissectors.

mod common;

use common::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn other_project(name: &str) -> PathBuf {
    data_dir().join("other-projects").join(name)
}

/// An IEC-104 APDU as tshark reads it: the frame's kind (tshark's
/// `iec60870_104.type`: 0 I, 1 S, 3 U), a U-frame's function (tshark's
/// bits: 0x01 STARTDT act, 0x02 con, 0x04 STOPDT act, 0x08 con, 0x10
/// TESTFR act, 0x20 con), an I-frame's type and cause of transmission.
#[derive(Debug, Default)]
struct Frames104 {
    utypes: Vec<u32>,
    asdus: Vec<(u32, u32)>,
}

/// Each data frame's APDUs.
fn iec104_frames(capture: &Path) -> BTreeMap<u64, Frames104> {
    let fields = [
        "frame.number",
        "iec60870_104.utype",
        "iec60870_asdu.typeid",
        "iec60870_asdu.causetx",
    ];
    let list = |s: &str| -> Vec<u32> {
        s.split(',')
            .filter(|v| !v.is_empty())
            .map(|v| match v.strip_prefix("0x") {
                Some(hex) => u32::from_str_radix(hex, 16).unwrap(),
                None => v.parse().unwrap(),
            })
            .collect()
    };
    tshark_fields(capture, &[], "tcp.len > 0", &fields)
        .into_iter()
        .map(|f| {
            // (A malformed ASDU, which nDPI's capture has, may show a
            // type without a cause.)
            let frames = Frames104 {
                utypes: list(&f[1]),
                asdus: list(&f[2]).into_iter().zip(list(&f[3])).collect(),
            };
            (f[0].parse().unwrap(), frames)
        })
        .collect()
}

/// Causes of transmission (IEC 60870-5-101 7.2.3): spontaneous, cyclic,
/// background, initialized.
const REPORTS: [u32; 4] = [1, 2, 3, 4];

impl Frames104 {
    /// A question: a U-frame's act, a command (activation,
    /// deactivation), a read (C_RD_NA_1 with cause *request*).
    fn asks(&self) -> bool {
        self.utypes.iter().any(|u| [0x01, 0x04, 0x10].contains(u))
            || self
                .asdus
                .iter()
                .any(|&(t, c)| c == 6 || c == 8 || (t == 102 && c == 5))
    }

    /// An answer: a U-frame's con, a confirmation, a refusal, a point
    /// sent as requested.
    fn answers(&self) -> bool {
        self.utypes.iter().any(|u| [0x02, 0x08, 0x20].contains(u))
            || self
                .asdus
                .iter()
                .any(|&(_, c)| [5, 7, 9, 44, 45, 46, 47].contains(&(c & 0x3f)))
    }

    /// Reports only: what an outstation sends on its own.
    fn reports_only(&self) -> bool {
        self.utypes.is_empty()
            && !self.asdus.is_empty()
            && self.asdus.iter().all(|(_, c)| REPORTS.contains(c))
    }
}

/// Checks each turn of each connection: it begins with a question and
/// ends with its answer, never with a report; returns the turns.
fn check_iec104_turns(capture: &Path, doc: &serde_json::Value) -> usize {
    let frames = iec104_frames(capture);
    let turns = turn_frames(doc);
    for (start, end) in &turns {
        assert!(frames[start].asks(), "{start}: {:?}", frames[start]);
        assert!(frames[end].answers(), "{end}: {:?}", frames[end]);
        assert!(!frames[end].reports_only(), "{end}");
    }
    turns.len()
}

/// Milliseconds of `server_think_time` over the document.
fn think_ms(doc: &serde_json::Value) -> f64 {
    doc["connections"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(think_waits)
        .map(|(_, _, ms)| ms)
        .sum()
}

#[test]
fn iec104_reports_behind_the_masters_s_frames_answer_nothing() {
    if !require("scada: IEC-104 (lib60870)", &["tshark"], false) {
        return;
    }
    let cap = data_dir().join("scada").join("iec104.pcap.gz");
    let doc = run_rttdoc_json(&cap);
    let frames = iec104_frames(&cap);
    // The capture holds what the script says: spontaneous reports that
    // follow an S-frame of the master's, by 0.2 s or more.
    let s_frames: Vec<u64> = tshark_fields(&cap, &[], "iec60870_104.type == 1", &["frame.number"])
        .into_iter()
        .map(|f| f[0].parse().unwrap())
        .collect();
    let times = frame_times(&cap);
    let pushed_after_ack = frames
        .iter()
        .filter(|(_, f)| f.reports_only())
        .filter(|(n, _)| {
            s_frames
                .iter()
                .rev()
                .find(|s| *s < *n)
                .is_some_and(|s| times[*n] - times[s] > 0.2)
        })
        .count();
    assert!(pushed_after_ack >= 2, "{pushed_after_ack}");
    // Four questions: STARTDT, the interrogation, the command, the read.
    assert_eq!(check_iec104_turns(&cap, &doc), 4);
    // The one wait of the outstation's: its command handler's 150 ms,
    // between the command and its confirmation.
    let c = &doc["connections"][0];
    let waits = think_waits(c);
    assert_eq!(waits.len(), 1, "{waits:?}");
    let (asked, answered, ms) = waits[0];
    assert_eq!(frames[&asked].asdus, [(45, 6)]);
    assert_eq!(frames[&answered].asdus, [(45, 7)]);
    assert!((140.0..250.0).contains(&ms), "{ms}");
}

#[test]
fn iec104_an_outstations_end_of_initialization_answers_nothing() {
    // nDPI's capture of a substation test set: stream 1's outstation
    // restarted and said so (M_EI_NA_1) 5.6 s after the master's S-frame;
    // its commands' confirmations (7-33 ms each) are its own time.
    if !require("scada: IEC-104 (nDPI)", &["tshark"], false) {
        return;
    }
    let cap = other_project("ndpi-iec104.pcap");
    let doc = run_rttdoc_json(&cap);
    let frames = iec104_frames(&cap);
    let end_of_init: Vec<u64> = frames
        .iter()
        .filter(|(_, f)| f.asdus.iter().any(|(t, _)| *t == 70))
        .map(|(n, _)| *n)
        .collect();
    assert!(!end_of_init.is_empty());
    assert_eq!(check_iec104_turns(&cap, &doc), 9);
    for c in doc["connections"].as_array().unwrap() {
        for (_, answered, _) in think_waits(c) {
            assert!(!end_of_init.contains(&answered), "{answered}");
        }
    }
    // STARTDT's 372 ms on stream 0 and the commands' 76 ms on stream 1.
    let ms = think_ms(&doc);
    assert!((400.0..500.0).contains(&ms), "{ms}");
}

#[test]
fn dnp3_unsolicited_responses_after_the_masters_confirm_answer_nothing() {
    // nDPI's capture of a master and an outstation (each packet there
    // three times): on stream 0 the outstation reports events unasked,
    // 1-5 s apart, and the master confirms each at once; stream 1's
    // requests are answered in 65-100 ms, the outstation's own time.
    if !require("scada: DNP3 (nDPI)", &["tshark"], false) {
        return;
    }
    let cap = other_project("ndpi-dnp3.pcap");
    let doc = run_rttdoc_json(&cap);
    let functions: BTreeMap<u64, Vec<u32>> =
        tshark_fields(&cap, &[], "dnp3.al.func", &["frame.number", "dnp3.al.func"])
            .into_iter()
            .map(|f| {
                let list = f[1].split(',').map(|v| v.parse().unwrap()).collect();
                (f[0].parse().unwrap(), list)
            })
            .collect();
    let (confirm, response, unsolicited) = (0, 129, 130);
    let unsolicited_frames = functions
        .values()
        .filter(|f| f.contains(&unsolicited))
        .count();
    assert!(unsolicited_frames >= 10, "{unsolicited_frames}");
    let turns = turn_frames(&doc);
    for (start, end) in &turns {
        let asked = &functions[start];
        assert!(
            asked.iter().any(|f| (1..=33).contains(f) && *f != confirm),
            "{start}: {asked:?}"
        );
        assert!(functions[end].contains(&response), "{end}");
        assert!(!functions[end].contains(&unsolicited), "{end}");
    }
    assert_eq!(turns.len(), 12);
    // The outstation's answers: 110 ms on stream 0, 618 ms on stream 1.
    let ms = think_ms(&doc);
    assert!((600.0..800.0).contains(&ms), "{ms}");
}
