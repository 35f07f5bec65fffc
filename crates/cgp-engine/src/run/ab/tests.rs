//! `ab` end to end on recorded pairs.

use std::cell::RefCell;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::rc::Rc;

use super::*;
use crate::outcome::results::RowVerdict;
use crate::outcome::results::RunVerdict;
use crate::profile::Job;
use crate::profile::{Capture, ProfileError};

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
            base: &mut base,
            head: &mut head,
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
            base: &mut base,
            head: &mut head,
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
