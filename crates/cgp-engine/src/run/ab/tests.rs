//! `ab` end to end: on recorded pairs through a fake profiler and the real reading of its
//! output, and through the scripted measurer (`run::mock`, SYNTHETIC).

use std::cell::RefCell;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::rc::Rc;

use super::*;
use crate::foundation::exit_codes::Exit;
use crate::outcome::results::RowVerdict;
use crate::outcome::results::RunVerdict;
use crate::outcome::results::{ErrorKind, FailureKind};
use crate::profile::{Capture, ProfileError};
use crate::profile::{Job, Measuring, Profiler};
use crate::run::mock::{Mock, Seen, Step, index, process, spec, target};
use crate::stats::rng::{Rng, seed_for};

/// SYNTHETIC: serves a fixed ncu raw-page CSV and logs the order of the runs.
struct Fake {
    side: &'static str,
    log: Rc<RefCell<Vec<String>>>,
    ns: f64,
}

impl Profiler for Fake {
    fn name(&self) -> &'static str {
        "fake"
    }
    fn version(&mut self) -> Result<String, ProfileError> {
        Ok("fake".to_owned())
    }
    fn capture(&mut self, job: Job<'_>) -> Result<Capture, ProfileError> {
        self.log.borrow_mut().push(format!("{}{}", self.side, job.rep));
        let mut raw = String::from("\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n\"\",\"\",\"ns\"\n");
        let ns = self.ns * (1.0 + 0.001 * f64::from(job.rep % 3));
        let _ = writeln!(raw, "\"0\",\"saxpy(int)\",\"{ns}\"");
        Ok(Capture {
            output: crate::profile::Output::Text(raw),
            origin: PathBuf::from("fake"),
            argv: None,
            wall_seconds: Some(0.5),
            exit_code: Some(0),
            output_tail: String::new(),
            kernels_seen: None,
            tool_version: None,
        })
    }
}

/// The options of a plain `ab`: fail on regressions, no missing row allowed.
fn options() -> AbOptions<'static> {
    AbOptions {
        fail_on: FailOn::Regression,
        allow_missing: false,
        gpu: None,
        manifest: None,
        ci_commit: None,
    }
}

const SPEC: &str = "version: 1\ndefaults:\n  repetitions: 4\n  max_repetitions: 4\ntargets:\n  - name: saxpy\n    command: [./saxpy]\n    kernel: saxpy\n    metrics:\n      gpu__time_duration.sum: \"3%\"\n";

#[test]
fn runs_alternate_abba_and_are_recorded_per_side() {
    let dir = tempfile::tempdir().unwrap();
    let spec = crate::spec::load_str(SPEC, &dir.path().join("cgp-gate.yaml")).unwrap();
    let targets: Vec<&Target> = spec.targets.iter().collect();
    let log = Rc::new(RefCell::new(Vec::new()));
    let mut base = Fake {
        side: "B",
        log: Rc::clone(&log),
        ns: 1000.0,
    };
    let mut head = Fake {
        side: "H",
        log: Rc::clone(&log),
        ns: 1000.0,
    };
    let rec = dir.path().join("rec");
    let mut rb = Recorder::new(&rec.join("base")).unwrap();
    let mut rh = Recorder::new(&rec.join("head")).unwrap();
    let run = run_ab(
        &spec,
        &mut Sides {
            base: &mut Measuring::new(&mut base),
            head: &mut Measuring::new(&mut head),
            base_targets: &targets,
            head_targets: &targets,
        },
        Some((&mut rb, &mut rh)),
        None,
        &options(),
        &mut crate::run::progress::NoProgress,
    )
    .unwrap();
    assert_eq!(*log.borrow(), ["B0", "H0", "H1", "B1", "B2", "H2", "H3", "B3"]);
    // A recording is staged and moved into place when finished.
    let fp = crate::gpu::fingerprint::Fingerprint::default();
    rb.finish(&spec.hash, "test", &fp).unwrap();
    rh.finish(&spec.hash, "test", &fp).unwrap();
    let order: Vec<String> = run
        .order
        .iter()
        .map(|o| format!("{}{}", o.side.as_str(), o.rep))
        .collect();
    assert_eq!(
        order,
        [
            "base0", "head0", "head1", "base1", "base2", "head2", "head3", "base3"
        ]
    );
    for side in ["base", "head"] {
        for rep in 0..4 {
            assert!(
                rec.join(side)
                    .join("saxpy/default")
                    .join(format!("{rep}.csv"))
                    .is_file()
            );
        }
    }
    let r = &run.results;
    assert_eq!(r.rows.len(), 1);
    // Identical sides: every pair's ratio is exactly 1, so the interval is [0, 0]: a pass.
    assert_eq!(r.rows[0].verdict(), RowVerdict::Pass, "{}", r.rows[0].reason);
    assert_eq!(r.verdict, RunVerdict::Pass);
    assert!((r.cost_seconds["saxpy"] - 4.0).abs() < 1e-9);
}

/// A limit row of `ab` is judged as `check` judges one, and shows what `check` shows: the
/// interval of the head's median and the limit it was held against (the paired judgement once
/// carried neither, so an `ab` limit row had no interval in any report).
#[test]
fn a_limit_row_shows_the_median_interval_and_the_limit_as_in_check() {
    let dir = tempfile::tempdir().unwrap();
    let yaml = SPEC.replace("\"3%\"", "{max: 2000ns}");
    let spec = crate::spec::load_str(&yaml, &dir.path().join("cgp-gate.yaml")).unwrap();
    let targets: Vec<&Target> = spec.targets.iter().collect();
    let log = Rc::new(RefCell::new(Vec::new()));
    let (mut base, mut head) = (
        Fake {
            side: "B",
            log: Rc::clone(&log),
            ns: 1000.0,
        },
        Fake {
            side: "H",
            log: Rc::clone(&log),
            ns: 1000.0,
        },
    );
    let run = run_ab(
        &spec,
        &mut Sides {
            base: &mut Measuring::new(&mut base),
            head: &mut Measuring::new(&mut head),
            base_targets: &targets,
            head_targets: &targets,
        },
        None,
        None,
        &options(),
        &mut crate::run::progress::NoProgress,
    )
    .unwrap();
    let row = &run.results.rows[0];
    assert_eq!(row.verdict(), RowVerdict::Pass, "{}", row.reason);
    let [lo, hi] = row.estimate().median_ci().expect("a limit row's interval");
    assert!(lo >= 1000.0 && hi <= 1002.0 + 1e-9 && lo <= hi, "[{lo}, {hi}]");
    assert_eq!(row.estimate().change(), None, "a limit row has no change");
    let limit = row.rule.threshold.as_ref().and_then(|t| t.limit());
    assert_eq!(limit, Some(2000.0));
}

// ---- through the scripted measurer (`run::mock`, SYNTHETIC) ------------------------------------

/// `ab` of `s`'s targets, both trees the same spec.
fn ab(s: &Spec, base: &mut Mock<'_>, head: &mut Mock<'_>, seen: &mut Seen) -> AbRun {
    let targets: Vec<&Target> = s.targets.iter().collect();
    let mut sides = Sides {
        base,
        head,
        base_targets: &targets,
        head_targets: &targets,
    };
    run_ab(s, &mut sides, None, None, &options(), seen).unwrap()
}

/// Processes of a 100 us kernel, shifted by `shift(size index)` percent on the head's side.
fn shifted<'r>(
    rng: &'r RefCell<Rng>,
    shift: &'r dyn Fn(usize) -> f64,
) -> impl FnMut(Job<'_>, u32) -> Step + 'r {
    move |job, _| {
        Step::Launches(process(
            &mut rng.borrow_mut(),
            (shift(index(job)) / 100.0).ln_1p(),
        ))
    }
}

fn exit_of(r: &Results) -> Exit {
    crate::outcome::decide::exit_code(r.verdict, &r.errors, r.fail_on)
}

#[test]
fn pairs_alternate_abba_within_a_size_and_go_pair_major_across_sizes() {
    let s = spec(&target("k", 3, 3, 2));
    let log = Rc::new(RefCell::new(Vec::new()));
    let mut base = Mock::new(|_, _| Step::Launches(vec![1.0; 5])).side("B", &log);
    let mut head = Mock::new(|_, _| Step::Launches(vec![1.0; 5])).side("H", &log);
    let mut seen = Seen::default();
    let run = ab(&s, &mut base, &mut head, &mut seen);
    assert_eq!(
        *log.borrow(),
        [
            "Bk[i=0]#0",
            "Hk[i=0]#0",
            "Bk[i=1]#0",
            "Hk[i=1]#0", // pair 0: base first
            "Hk[i=0]#1",
            "Bk[i=0]#1",
            "Hk[i=1]#1",
            "Bk[i=1]#1", // pair 1: head first
            "Bk[i=0]#2",
            "Hk[i=0]#2",
            "Bk[i=1]#2",
            "Hk[i=1]#2",
        ]
    );
    // The order the results keep is the order that ran; every pair was planned as two runs.
    let order: Vec<String> = run
        .order
        .iter()
        .map(|o| format!("{}{}", &o.side.as_str()[..1], o.rep))
        .collect();
    assert_eq!(
        order,
        [
            "b0", "h0", "b0", "h0", "h1", "b1", "h1", "b1", "b2", "h2", "b2", "h2"
        ]
    );
    assert_eq!((seen.planned, seen.finished), (12, 12));
}

#[test]
fn a_ten_percent_slower_head_is_a_regression_and_an_unchanged_one_passes() {
    let s = spec(&target("k", 4, 4, 2));
    let shift = |i: usize| if i == 0 { 10.0 } else { 0.0 };
    let (b, h) = (
        RefCell::new(Rng::new(seed_for(62, "ab base"))),
        RefCell::new(Rng::new(seed_for(62, "ab head"))),
    );
    let mut base = Mock::new(shifted(&b, &|_| 0.0));
    let mut head = Mock::new(shifted(&h, &shift));
    let r = ab(&s, &mut base, &mut head, &mut Seen::default()).results;
    let verdict = |i: usize| {
        r.rows
            .iter()
            .find(|x| x.key.size == format!("i={i}"))
            .map(Row::verdict)
    };
    assert_eq!(verdict(0), Some(RowVerdict::Regression), "{:#?}", r.rows);
    assert_eq!(verdict(1), Some(RowVerdict::Pass), "{:#?}", r.rows);
    let change = r
        .rows
        .iter()
        .find(|x| x.key.size == "i=0")
        .unwrap()
        .estimate()
        .change()
        .unwrap();
    assert!((change - 0.10).abs() < 0.01, "{change}");
    assert_eq!(exit_of(&r), Exit::Regression);
}

#[test]
fn a_failed_run_drops_its_pair_and_the_sizes_later_pairs_and_names_its_tree() {
    let s = spec(&target("k", 3, 3, 2));
    let log = Rc::new(RefCell::new(Vec::new()));
    let mut base = Mock::new(|_, _| Step::Launches(vec![1.0; 5])).side("B", &log);
    let mut head = Mock::new(|job, _| {
        if index(job) == 0 && job.rep == 1 {
            Step::Fails(FailureKind::AppFailed)
        } else {
            Step::Launches(vec![1.0; 5])
        }
    })
    .side("H", &log);
    let mut seen = Seen::default();
    let run = ab(&s, &mut base, &mut head, &mut seen);
    // Pair 1 of size 0 runs head first: the head fails, so its base run is not made, nor are
    // size 0's later pairs; size 1 runs all of its pairs.
    assert_eq!(base.reps_of("k", "i=0"), [0]);
    assert_eq!(head.reps_of("k", "i=0"), [0, 1]);
    assert_eq!(base.reps_of("k", "i=1"), [0, 1, 2]);
    assert_eq!(head.reps_of("k", "i=1"), [0, 1, 2]);
    let e = &run.results.errors;
    assert_eq!(e.len(), 1);
    assert_eq!(e[0].kind, ErrorKind::Profiler(FailureKind::AppFailed));
    assert!(e[0].message.starts_with("head tree: "), "{}", e[0].message);
    assert_eq!(seen.skipped, 1 + 2);
    let pairs = crate::run::confirm::pairs_of(&run.order);
    assert_eq!(pairs.values().copied().collect::<Vec<_>>(), [1, 3]);
    assert_eq!(exit_of(&run.results), Exit::ProfilerFailure);
}

#[test]
fn a_missing_profiler_on_either_side_stops_every_pair() {
    let s = spec(&target("k", 3, 3, 2));
    let log = Rc::new(RefCell::new(Vec::new()));
    let mut base = Mock::new(|_, _| Step::Fails(FailureKind::NcuNotFound)).side("B", &log);
    let mut head = Mock::new(|_, _| Step::Launches(vec![1.0; 5])).side("H", &log);
    let mut seen = Seen::default();
    let run = ab(&s, &mut base, &mut head, &mut seen);
    assert_eq!(*log.borrow(), ["Bk[i=0]#0"]);
    // Every planned run is given up: the head's of pair 0, and both of every later pair.
    assert_eq!(seen.skipped, 1 + 2 * 5);
    assert_eq!(run.results.errors.len(), 1);
    assert_eq!(run.results.verdict, RunVerdict::Error);
}

#[test]
fn a_doubtful_pair_gets_more_pairs_up_to_max_repetitions_and_a_decided_one_stops() {
    let s = spec(&target("k", 3, 9, 2));
    let shift = |i: usize| if i == 0 { 3.0 } else { 10.0 };
    let (b, h) = (
        RefCell::new(Rng::new(seed_for(62, "ab doubtful base"))),
        RefCell::new(Rng::new(seed_for(62, "ab doubtful head"))),
    );
    let mut base = Mock::new(shifted(&b, &|_| 0.0));
    let mut head = Mock::new(shifted(&h, &shift));
    let mut seen = Seen::default();
    let r = ab(&s, &mut base, &mut head, &mut seen).results;
    let x = |i: usize| r.rows.iter().find(|x| x.key.size == format!("i={i}")).unwrap();
    assert_eq!(x(1).verdict(), RowVerdict::Regression);
    assert_eq!(head.reps_of("k", "i=1"), [0, 1, 2]);
    // Exactly at the threshold: 3 more pairs per look, up to 9.
    assert_eq!(x(0).verdict(), RowVerdict::Inconclusive, "{}", x(0).reason);
    assert_eq!(head.reps_of("k", "i=0"), (0..9).collect::<Vec<_>>());
    assert_eq!(base.reps_of("k", "i=0"), (0..9).collect::<Vec<_>>());
    assert_eq!(x(0).remeasured, 2);
    assert_eq!(
        seen.notes
            .iter()
            .filter(|n| *n == "measuring more pairs for 1 doubtful size(s)")
            .count(),
        2
    );
}

#[test]
fn a_recording_of_fewer_pairs_is_judged_with_the_pairs_it_holds() {
    let s = spec(&target("k", 3, 9, 1));
    let (b, h) = (
        RefCell::new(Rng::new(seed_for(62, "ab doubtful base"))),
        RefCell::new(Rng::new(seed_for(62, "ab doubtful head"))),
    );
    let mut base = Mock::new(shifted(&b, &|_| 0.0)).recording(3);
    let mut head = Mock::new(shifted(&h, &|_| 3.0)).recording(4);
    let run = ab(&s, &mut base, &mut head, &mut Seen::default());
    // Pair 3 needs both sides: the base's recording ends at rep 2.
    assert_eq!(head.reps_of("k", "i=0"), [0, 1, 2]);
    assert!(run.results.errors.is_empty(), "{:?}", run.results.errors);
    assert_eq!(run.results.rows[0].verdict(), RowVerdict::Inconclusive);
    assert_eq!(run.results.rows[0].remeasured, 0);
}

#[test]
fn confirms_paired_plan_takes_the_screens_first_look_in_processes_then_as_many_per_look() {
    // A screen of 6 processes a look, up to 12: the paired stage's first look is 3 pairs (6
    // processes), then 3 pairs more per look, up to 9 pairs.
    let mut s = spec(&target("k", 6, 12, 1));
    crate::run::confirm::paired_plan(&mut s.targets[0]);
    let (b, h) = (
        RefCell::new(Rng::new(seed_for(62, "confirm base"))),
        RefCell::new(Rng::new(seed_for(62, "confirm head"))),
    );
    let log = Rc::new(RefCell::new(Vec::new()));
    let mut base = Mock::new(shifted(&b, &|_| 0.0)).side("B", &log);
    let mut head = Mock::new(shifted(&h, &|_| 3.0)).side("H", &log);
    let run = ab(&s, &mut base, &mut head, &mut Seen::default());
    let first: Vec<String> = log.borrow()[..6].to_vec();
    assert_eq!(
        first,
        [
            "Bk[i=0]#0",
            "Hk[i=0]#0",
            "Hk[i=0]#1",
            "Bk[i=0]#1",
            "Bk[i=0]#2",
            "Hk[i=0]#2"
        ]
    );
    let pairs =
        crate::run::confirm::pairs_of(&run.order)[&crate::measured::samples::TargetSize::new("k", "i=0")];
    assert_eq!(pairs, 9, "a row at the threshold takes every look");
    assert_eq!(log.borrow().len(), 18);
    assert!(
        run.results
            .multiple_testing
            .contains("spent over up to 3 look(s)"),
        "{}",
        run.results.multiple_testing
    );
}

#[test]
fn ab_names_both_trees_sources_and_opens_each_once() {
    let s = spec(&target("k", 3, 3, 1));
    let mut base =
        Mock::new(|_, _| Step::Launches(vec![1.0; 5])).origin(|o| o.source = "replay:rec/base".to_owned());
    let mut head = Mock::new(|_, _| Step::Launches(vec![1.0; 5])).origin(|o| {
        o.source = "replay:rec/head".to_owned();
        o.synthetic = true;
    });
    let r = ab(&s, &mut base, &mut head, &mut Seen::default()).results;
    assert_eq!((base.opened, head.opened), (1, 1));
    assert_eq!(
        r.source.to_string(),
        "ab: base replay:rec/base / head replay:rec/head"
    );
    assert!(r.synthetic, "either tree's recording says SYNTHETIC");
}
