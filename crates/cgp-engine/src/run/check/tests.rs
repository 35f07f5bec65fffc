//! `check` driven through the scripted measurer (`run::mock`, SYNTHETIC processes of a 100 us
//! kernel with 0.5 % launch noise): the verdicts the statistics give, the re-measure loop,
//! alpha over the looks, a recording that runs out, kernels the filter no longer selects,
//! failures that must not hide other targets' results, and what the measurer says of the run.

use std::path::Path;

use crate::foundation::exit_codes::Exit;
use crate::measured::samples::SampleSet;
use crate::outcome::results::{
    ErrorKind, FailureKind, MissingCause, Outcome, Results, Row, RowVerdict, RunVerdict,
};
use crate::run::mock::{Mock, Seen, Step, baselines, check, index, process, spec, target};
use crate::stats::rng::{Rng, seed_for};

/// `ln(1 + pct / 100)`: a shift of `pct` percent on the log scale the processes are drawn on.
fn pct(p: f64) -> f64 {
    (p / 100.0).ln_1p()
}

/// A store of `spec`'s unchanged baselines, in a temporary folder.
fn stored(s: &crate::spec::Spec) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    baselines(s, dir.path(), seed_for(62, "baseline"));
    dir
}

/// `check` of processes shifted by `shift(size index)` (log scale), seeded by `seed`.
fn check_shifted(
    s: &crate::spec::Spec,
    dir: &Path,
    seed: &str,
    shift: &dyn Fn(usize) -> f64,
) -> (Results, Vec<String>) {
    let mut rng = Rng::new(seed_for(62, seed));
    let mut mock = Mock::new(|job, _| Step::Launches(process(&mut rng, shift(index(job)))));
    let r = check(s, dir, &mut mock, &mut Seen::default()).unwrap();
    (r, mock.log())
}

/// The row of `target[i=size]`'s time.
fn row<'r>(r: &'r Results, target: &str, size: usize) -> &'r Row {
    r.rows
        .iter()
        .find(|x| x.key.target == target && x.key.size == format!("i={size}"))
        .unwrap_or_else(|| panic!("no row of {target}[i={size}] in {:#?}", r.rows))
}

/// The repetitions of `target[i=size]` the log shows.
fn reps(log: &[String], target: &str, size: usize) -> Vec<u32> {
    let prefix = format!("{target}[i={size}]#");
    log.iter()
        .filter_map(|l| l.strip_prefix(&prefix)?.parse().ok())
        .collect()
}

fn exit(r: &Results) -> Exit {
    super::exit_code(r, r.fail_on)
}

#[test]
fn a_ten_percent_slower_clean_series_is_a_regression_at_the_first_look() {
    let s = spec(&target("k", 3, 9, 1));
    let dir = stored(&s);
    let (r, log) = check_shifted(&s, dir.path(), "slower", &|_| pct(10.0));
    let x = row(&r, "k", 0);
    assert_eq!(x.verdict(), RowVerdict::Regression, "{}", x.reason);
    let change = x.estimate().change().unwrap();
    assert!((change - 0.10).abs() < 0.01, "{change}");
    // Decided at the first look: its 3 processes, never re-measured.
    assert_eq!(reps(&log, "k", 0), [0, 1, 2]);
    assert_eq!(x.remeasured, 0);
    assert_eq!(r.verdict, RunVerdict::Regression);
    assert_eq!(exit(&r), Exit::Regression);
}

#[test]
fn an_unchanged_series_passes_at_the_first_look() {
    let s = spec(&target("k", 3, 9, 1));
    let dir = stored(&s);
    let (r, log) = check_shifted(&s, dir.path(), "same", &|_| 0.0);
    let x = row(&r, "k", 0);
    assert_eq!(x.verdict(), RowVerdict::Pass, "{}", x.reason);
    let [lo, hi] = x.estimate().change_ci().unwrap();
    assert!(lo < 0.0 && hi > 0.0 && hi < 0.03, "[{lo}, {hi}]");
    assert_eq!(reps(&log, "k", 0), [0, 1, 2]);
    assert_eq!(exit(&r), Exit::Ok);
}

#[test]
fn a_row_at_the_threshold_is_measured_again_round_by_round_up_to_max_repetitions() {
    // 2 processes a look, up to 6: looks after 2, 4 and 6 processes.
    let s = spec(&target("k", 2, 6, 1));
    let dir = stored(&s);
    let mut rng = Rng::new(seed_for(62, "at the threshold"));
    let mut mock = Mock::new(|_, _| Step::Launches(process(&mut rng, pct(3.0))));
    let mut seen = Seen::default();
    let r = check(&s, dir.path(), &mut mock, &mut seen).unwrap();
    let x = row(&r, "k", 0);
    // Exactly at the 3 % threshold: no interval of this noise decides it.
    assert_eq!(x.verdict(), RowVerdict::Inconclusive, "{}", x.reason);
    assert_eq!(mock.reps_of("k", "i=0"), [0, 1, 2, 3, 4, 5]);
    assert_eq!(x.remeasured, 2);
    assert_eq!(x.candidate_reps.iter().max(), Some(&5));
    let rounds = seen
        .notes
        .iter()
        .filter(|n| *n == "re-measuring 1 doubtful size(s)")
        .count();
    assert_eq!(rounds, 2, "{:?}", seen.notes);
    // An inconclusive row warns; it does not fail the gate by default.
    assert_eq!(exit(&r), Exit::Ok);
}

#[test]
fn only_the_doubtful_size_is_measured_again_and_decided_rows_keep_their_first_verdict() {
    let s = spec(&target("k", 2, 6, 3));
    let dir = stored(&s);
    let shifts = [pct(10.0), pct(3.0), 0.0];
    let (r, log) = check_shifted(&s, dir.path(), "three sizes", &|i| shifts[i]);
    assert_eq!(row(&r, "k", 0).verdict(), RowVerdict::Regression);
    assert_eq!(row(&r, "k", 2).verdict(), RowVerdict::Pass);
    assert_eq!(reps(&log, "k", 0), [0, 1]);
    assert_eq!(reps(&log, "k", 2), [0, 1]);
    assert_eq!(reps(&log, "k", 1), [0, 1, 2, 3, 4, 5]);
    // Repetition-major in the first pass: every size's rep 0 before any rep 1.
    assert_eq!(&log[..3], ["k[i=0]#0", "k[i=1]#0", "k[i=2]#0"]);
    assert_eq!(row(&r, "k", 0).remeasured, 0);
}

#[test]
fn alpha_is_spent_over_the_looks_the_plan_allows() {
    // The same processes, judged once with one look planned and once with three: a look of
    // three spends alpha / 3, so its interval of the same regression is wider.
    let width = |max: u32| {
        let s = spec(&target("k", 2, max, 1));
        let dir = stored(&s);
        let (r, log) = check_shifted(&s, dir.path(), "looks", &|_| pct(10.0));
        assert_eq!(reps(&log, "k", 0), [0, 1], "decided at the first look");
        assert!(
            r.multiple_testing
                .contains(&format!("spent over up to {} look(s)", max / 2)),
            "{}",
            r.multiple_testing
        );
        let [lo, hi] = row(&r, "k", 0).estimate().change_ci().unwrap();
        hi - lo
    };
    let (one, three) = (width(2), width(6));
    assert!(three > one * 1.05, "one look {one}, three looks {three}");
}

#[test]
fn a_recording_with_fewer_repetitions_is_judged_with_what_it_holds() {
    let s = spec(&target("k", 2, 6, 1));
    let dir = stored(&s);
    let mut rng = Rng::new(seed_for(62, "at the threshold"));
    let mut mock = Mock::new(|_, _| Step::Launches(process(&mut rng, pct(3.0)))).recording(2);
    let mut seen = Seen::default();
    let r = check(&s, dir.path(), &mut mock, &mut seen).unwrap();
    // The doubtful row wanted 4 more processes; the recording has none: no error, judged once
    // more with what there is.
    assert_eq!(mock.reps_of("k", "i=0"), [0, 1]);
    assert_eq!(seen.skipped, 2);
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    let x = row(&r, "k", 0);
    assert_eq!((x.verdict(), x.remeasured), (RowVerdict::Inconclusive, 0));
}

#[test]
fn a_kernel_the_filter_no_longer_selects_is_a_missing_row_naming_the_kernels_that_ran() {
    let s = spec(&target("k", 2, 2, 1));
    let dir = stored(&s);
    let mut mock = Mock::new(|_, _| Step::Unselected(vec!["k_v2".to_owned(), "k_splitk".to_owned()]));
    let r = check(&s, dir.path(), &mut mock, &mut Seen::default()).unwrap();
    // A library's switch of kernel is a finding of the gate, not a tool failure.
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    let x = row(&r, "k", 0);
    assert_eq!(x.verdict(), RowVerdict::Missing);
    assert!(
        x.reason.ends_with(
            "the kernel filter selected none of the kernels that ran: the application ran `k_v2`, `k_splitk`"
        ),
        "{}",
        x.reason
    );
    let Outcome::Missing(m) = &x.outcome else {
        panic!("{:?}", x.outcome)
    };
    assert_eq!(
        m.cause,
        MissingCause::Unselected {
            ran: vec!["k_v2".to_owned(), "k_splitk".to_owned()]
        }
    );
    assert_eq!(exit(&r), Exit::Regression);
}

#[test]
fn without_a_baseline_an_unselected_kernel_stays_a_tool_failure() {
    let s = spec(&target("k", 2, 2, 1));
    let empty = tempfile::tempdir().unwrap();
    let mut mock = Mock::new(|_, _| Step::Unselected(vec!["other".to_owned()]));
    let targets: Vec<&crate::spec::Target> = s.targets.iter().collect();
    let opts = super::CheckOptions {
        allow_no_baselines: true,
        ..crate::run::mock::options(empty.path())
    };
    let r = super::run_check(&s, &targets, &mut mock, None, None, &opts, &mut Seen::default()).unwrap();
    // Nothing was ever selected there: the error stays, and so does exit 3.
    assert_eq!(r.errors.len(), 1);
    assert_eq!(r.errors[0].kind, ErrorKind::Profiler(FailureKind::NoKernels));
    assert!(r.errors[0].message.contains("other"), "{}", r.errors[0].message);
    assert_eq!(exit(&r), Exit::ProfilerFailure);
}

#[test]
fn a_failing_target_does_not_hide_another_targets_regression() {
    let s = spec(&(target("a", 2, 2, 1) + &target("b", 2, 2, 1)));
    let dir = stored(&s);
    let mut rng = Rng::new(seed_for(62, "two targets"));
    let mut mock = Mock::new(|job, _| {
        if job.target.name == "a" {
            Step::Fails(FailureKind::Timeout)
        } else {
            Step::Launches(process(&mut rng, pct(10.0)))
        }
    });
    let r = check(&s, dir.path(), &mut mock, &mut Seen::default()).unwrap();
    assert_eq!(mock.reps_of("b", "i=0"), [0, 1]);
    assert_eq!(row(&r, "b", 0).verdict(), RowVerdict::Regression);
    assert_eq!(r.errors.len(), 1);
    assert_eq!(
        (r.errors[0].target.as_str(), &r.errors[0].kind),
        ("a", &ErrorKind::Profiler(FailureKind::Timeout))
    );
    // The failed size is an error, not a `missing` row of its baseline.
    assert!(r.rows.iter().all(|x| x.key.target != "a"), "{:#?}", r.rows);
    // An error is never a pass: the run is an error (exit 3), and the regression is in it.
    assert_eq!((r.verdict, exit(&r)), (RunVerdict::Error, Exit::ProfilerFailure));
}

#[test]
fn busy_counters_that_clear_give_the_verdict_of_a_clean_run() {
    let s = spec(&target("k", 2, 2, 1));
    let dir = stored(&s);
    let mut rng = Rng::new(seed_for(62, "busy"));
    let mut mock = Mock::new(|_, attempt| {
        if attempt == 0 {
            Step::Fails(FailureKind::ResourceUnavailable)
        } else {
            Step::Launches(process(&mut rng, pct(10.0)))
        }
    })
    .delays(&[1]);
    let r = check(&s, dir.path(), &mut mock, &mut Seen::default()).unwrap();
    assert_eq!(mock.reps_of("k", "i=0"), [0, 0, 1, 1]);
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    assert_eq!(row(&r, "k", 0).verdict(), RowVerdict::Regression);
}

#[test]
fn busy_counters_that_never_clear_fail_the_run_with_exit_3() {
    let s = spec(&target("k", 2, 2, 1));
    let dir = stored(&s);
    let mut mock = Mock::new(|_, _| Step::Fails(FailureKind::ResourceUnavailable)).delays(&[1, 1]);
    let r = check(&s, dir.path(), &mut mock, &mut Seen::default()).unwrap();
    assert_eq!(mock.reps_of("k", "i=0"), [0, 0, 0]);
    assert_eq!(
        r.errors.iter().map(|e| e.kind.clone()).collect::<Vec<_>>(),
        [ErrorKind::Profiler(FailureKind::ResourceUnavailable)]
    );
    assert_eq!((r.verdict, exit(&r)), (RunVerdict::Error, Exit::ProfilerFailure));
}

#[test]
fn a_metric_no_kernel_reported_is_an_error_row_never_a_pass() {
    let s = spec(&target("k", 2, 2, 1));
    let dir = stored(&s);
    let mut mock = Mock::new(|job, _| {
        let mut other = SampleSet::default();
        let key = crate::measured::samples::SeriesKey {
            target: job.target.name.clone(),
            size: job.size.key(),
            kernel: "k".to_owned(),
            metric: "dram__bytes.sum".to_owned(),
        };
        other.push(&key, "byte", 1.0, job.rep);
        Step::Samples(other)
    });
    let r = check(&s, dir.path(), &mut mock, &mut Seen::default()).unwrap();
    let err = r
        .rows
        .iter()
        .find(|x| x.verdict() == RowVerdict::Error)
        .unwrap_or_else(|| panic!("{:#?}", r.rows));
    assert_eq!(err.reason, "no profiled kernel reported this metric");
    assert_eq!(r.verdict, RunVerdict::Error);
}

#[test]
fn the_measurer_is_opened_once_and_says_where_the_samples_come_from() {
    let s = spec(&target("k", 2, 2, 1));
    let dir = stored(&s);
    let mut rng = Rng::new(seed_for(62, "origin"));
    let mut mock = Mock::new(|_, _| Step::Launches(process(&mut rng, 0.0))).origin(|o| {
        o.source = "replay:/recordings/h100".to_owned();
        o.synthetic = true;
    });
    let r = check(&s, dir.path(), &mut mock, &mut Seen::default()).unwrap();
    assert_eq!(mock.opened, 1);
    assert_eq!(r.source.to_string(), "replay:/recordings/h100");
    assert!(r.synthetic);
    assert_eq!(r.git_commit.as_deref(), Some("0123456789abcdef"));
    assert_eq!(row(&r, "k", 0).verdict(), RowVerdict::Pass);
}

#[test]
fn a_harness_device_names_the_gpu_and_baselines_of_another_gpu_are_refused_before_any_run() {
    let s = spec(&target("k", 2, 2, 1));
    let dir = tempfile::tempdir().unwrap();
    let on = |device: &'static str| {
        move |o: &mut crate::profile::Provenance| {
            o.devices.insert("k".to_owned(), format!(" {device} "));
        }
    };
    let mut rng = Rng::new(seed_for(62, "h100"));
    let mut base =
        Mock::new(|_, _| Step::Launches(process(&mut rng, 0.0))).origin(on("NVIDIA H100 80GB HBM3"));
    crate::run::simulate::store_baseline(&s, dir.path(), &mut base, &|_| Vec::new()).unwrap();
    let mut rng = Rng::new(seed_for(62, "h100 again"));
    let mut same =
        Mock::new(|_, _| Step::Launches(process(&mut rng, 0.0))).origin(on("NVIDIA H100 80GB HBM3"));
    let r = check(&s, dir.path(), &mut same, &mut Seen::default()).unwrap();
    // The device the harness's file named, trimmed: the baseline of that GPU is found.
    assert_eq!(r.fingerprint.gpu_name.as_str(), "NVIDIA H100 80GB HBM3");
    assert_eq!(row(&r, "k", 0).verdict(), RowVerdict::Pass);
    let mut other = Mock::new(|_, _| Step::Launches(vec![1.0])).origin(on("NVIDIA L4"));
    let e = check(&s, dir.path(), &mut other, &mut Seen::default()).unwrap_err();
    assert!(
        e.to_string()
            .contains("no baseline of `k` for this GPU (`NVIDIA L4`"),
        "{e}"
    );
    assert!(
        other.log().is_empty(),
        "no GPU time is spent before the baselines are read"
    );
}

#[test]
fn a_decided_row_keeps_its_first_looks_verdict_while_its_size_is_measured_again() {
    // One size, two kernels: `fast` 10 % slower (a regression at the first look), `edge` at the
    // threshold (doubtful: the size is measured again). The decided row is not judged again on
    // the larger sample (sequential stopping, docs/statistics.md 2.6): it keeps its first look.
    let s = spec(&target("k", 2, 6, 1));
    let mut rng = Rng::new(seed_for(62, "two kernels"));
    let mut two = |shift_fast: f64, shift_edge: f64, job: crate::profile::Job<'_>| {
        let mut set = SampleSet::default();
        for (kernel, shift) in [("fast", shift_fast), ("edge", shift_edge)] {
            let key = crate::measured::samples::SeriesKey {
                target: job.target.name.clone(),
                size: job.size.key(),
                kernel: kernel.to_owned(),
                metric: crate::run::mock::METRIC.to_owned(),
            };
            for v in process(&mut rng, shift) {
                set.push(&key, "ns", v, job.rep);
            }
        }
        set
    };
    let dir = tempfile::tempdir().unwrap();
    let mut base = Mock::new(|job, _| Step::Samples(two(0.0, 0.0, job)));
    crate::run::simulate::store_baseline(&s, dir.path(), &mut base, &|_| Vec::new()).unwrap();
    drop(base);
    let mut head = Mock::new(|job, _| Step::Samples(two(pct(10.0), pct(3.0), job)));
    let r = check(&s, dir.path(), &mut head, &mut Seen::default()).unwrap();
    assert_eq!(head.reps_of("k", "i=0"), [0, 1, 2, 3, 4, 5]);
    let of = |kernel: &str| {
        r.rows
            .iter()
            .find(|x| x.key.kernel_name() == Some(kernel))
            .unwrap_or_else(|| panic!("{:#?}", r.rows))
    };
    let (fast, edge) = (of("fast"), of("edge"));
    assert_eq!(fast.verdict(), RowVerdict::Regression);
    // Its samples are those of the first look: reps 0 and 1, 30 launches each after warm-up.
    assert_eq!(fast.remeasured, 0);
    assert_eq!(fast.candidate_reps.iter().max(), Some(&1));
    assert_eq!(fast.candidate_reps.len(), 60);
    assert_eq!(edge.remeasured, 2);
    assert_eq!(edge.candidate_reps.iter().max(), Some(&5));
}

#[test]
fn a_failed_why_run_is_a_note_and_only_ungated_counters_are_kept() {
    // `explain`'s extra runs collect the counters that say why a time changed; a failed one
    // costs the why, not the run.
    let s = spec(&target("k", 1, 1, 2));
    let targets: std::collections::BTreeMap<String, crate::spec::Target> =
        s.targets.iter().map(|t| (t.name.clone(), t.clone())).collect();
    let work = crate::plan::initial_work(&s.targets.iter().collect::<Vec<_>>(), None);
    let mut mock = Mock::new(|job, _| {
        if index(job) == 1 {
            return Step::Fails(FailureKind::AppFailed);
        }
        let mut set = crate::run::mock::launches(job, &[5.0]);
        let key = crate::measured::samples::SeriesKey {
            metric: "dram__bytes_read.sum".to_owned(),
            ..set.series.keys().next().unwrap().clone()
        };
        set.push(&key, "byte", 4096.0, job.rep);
        Step::Samples(set)
    });
    let mut seen = Seen::default();
    let mut m = crate::run::measure::Measurement::default();
    let mut tools = crate::run::measure::Instruments {
        measurer: &mut mock,
        recorder: None,
        watch: None,
        progress: &mut seen,
    };
    let seconds = crate::run::measure::measure_why(&mut tools, &work, &targets, &mut m).unwrap();
    assert!((seconds - 0.25).abs() < 1e-9, "{seconds}");
    assert!(m.errors.is_empty(), "{:?}", m.errors);
    let metrics: Vec<&str> = m.samples.series.keys().map(|k| k.metric.as_str()).collect();
    // The gated time is the run's own to measure; the counter is kept.
    assert_eq!(metrics, ["dram__bytes_read.sum"]);
    assert!(
        seen.notes
            .iter()
            .any(|n| n.starts_with("no why for `k` [i=1]: ") && n.contains("app-failed")),
        "{:?}",
        seen.notes
    );
}

#[test]
fn a_throttled_run_is_measured_again_and_the_results_say_so() {
    let s = spec(&target("k", 2, 2, 1));
    let dir = stored(&s);
    let mut device = crate::gpu::FakeDevice::new("NVIDIA H100 80GB HBM3");
    let reading = |throttle| crate::gpu::Reading {
        sm_clock_mhz: Some(1590),
        throttle: Some(crate::gpu::ThrottleReasons(throttle)),
        ..crate::gpu::Reading::default()
    };
    // A power cap after the first run; every later reading is clean.
    device.readings = vec![reading(0), reading(0x4), reading(0)];
    let gpu = crate::gpu::FakeGpu::new(vec![device]);
    let mut watch = crate::run::measure::Watch {
        gpu: &gpu,
        sampler: crate::gpu::HealthSampler::new(0, Some(1590), &s.settings),
        settings: &s.settings,
    };
    let mut rng = Rng::new(seed_for(62, "throttled"));
    let mut mock = Mock::new(|_, _| Step::Launches(process(&mut rng, 0.0)));
    let targets: Vec<&crate::spec::Target> = s.targets.iter().collect();
    let opts = crate::run::mock::options(dir.path());
    let mut seen = Seen::default();
    let r = super::run_check(&s, &targets, &mut mock, None, Some(&mut watch), &opts, &mut seen).unwrap();
    assert_eq!(mock.reps_of("k", "i=0"), [0, 0, 1]);
    assert_eq!((r.health.throttled_reps, r.health.rerun_reps), (1, 1));
    assert!(
        r.health.notes.iter().any(|n| n.contains("sw_power_cap")),
        "{:?}",
        r.health.notes
    );
    assert_eq!(row(&r, "k", 0).verdict(), RowVerdict::Pass);
}
