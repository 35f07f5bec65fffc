//! The measurement loop driven through the scripted measurer (`run::mock`, SYNTHETIC): order,
//! warm-up, busy-counter retries, failures of each kind, throttle re-runs, the recorder, a
//! recording's repetitions.

use std::cell::Cell;

use super::*;
use crate::foundation::exit_codes::Exit;
use crate::gpu::fake::{FakeDevice, FakeGpu};
use crate::gpu::{HealthSampler, Reading, ThrottleReasons};
use crate::outcome::results::ErrorKind;
use crate::plan::initial_work;
use crate::run::mock::{METRIC, Mock, Seen, Step, spec, target};
use crate::spec::Target;

/// Run `work` of `targets` through `mock` (no recorder, no watch).
fn run(mock: &mut Mock<'_>, targets: &[&Target], only_available: bool, seen: &mut Seen) -> Measurement {
    let work = initial_work(targets, None);
    let mut tools = Instruments {
        measurer: mock,
        recorder: None,
        watch: None,
        progress: seen,
    };
    measure(&mut tools, &work, only_available).unwrap()
}

/// The one value of each run of `target[i=size]` kept in `m`, by repetition.
fn kept(m: &Measurement, target: &str, size: u32) -> Vec<(u32, f64)> {
    m.samples
        .series
        .values()
        .filter(|s| s.key.target == target && s.key.size == format!("i={size}") && s.key.metric == METRIC)
        .flat_map(|s| s.samples.iter().map(|x| (x.rep, x.value)))
        .collect()
}

/// The exit code of a run whose only findings are `m`'s errors.
fn exit_of(m: &Measurement) -> Exit {
    crate::outcome::decide::error_exit_code(&m.errors)
}

#[test]
fn jobs_run_repetition_major_across_targets_and_sizes() {
    let s = spec(&(target("a", 3, 3, 2) + &target("b", 2, 2, 1)));
    let targets: Vec<&Target> = s.targets.iter().collect();
    let mut mock = Mock::new(|_, _| Step::Launches(vec![1.0]));
    let mut seen = Seen::default();
    let m = run(&mut mock, &targets, false, &mut seen);
    // Every size's rep 0, then every size's rep 1, ...: slow drift spreads over all sizes.
    assert_eq!(
        mock.log(),
        [
            "a[i=0]#0", "a[i=1]#0", "b[i=0]#0", "a[i=0]#1", "a[i=1]#1", "b[i=0]#1", "a[i=0]#2", "a[i=1]#2"
        ]
    );
    assert_eq!(seen.planned, 8);
    assert_eq!(seen.finished, 8);
    assert_eq!(m.reps_done.values().copied().collect::<Vec<_>>(), [3, 3, 2]);
    assert!(m.errors.is_empty());
}

#[test]
fn each_run_drops_its_warm_up_launches_and_keeps_every_other_one() {
    let s = spec(&target("a", 2, 2, 1).replace("    repetitions", "    warmup: 2\n    repetitions"));
    let targets: Vec<&Target> = s.targets.iter().collect();
    let mut mock = Mock::new(|job, _| {
        let r = f64::from(job.rep) * 10.0;
        // A far launch late in the run is kept: whether it is the machine's or the code's is
        // the statistics' question.
        Step::Launches(vec![900.0 + r, 800.0 + r, 1.0 + r, 2.0 + r, 5000.0 + r])
    });
    let m = run(&mut mock, &targets, false, &mut Seen::default());
    assert_eq!(
        kept(&m, "a", 0),
        [(0, 1.0), (0, 2.0), (0, 5000.0), (1, 11.0), (1, 12.0), (1, 5010.0)]
    );
}

#[test]
fn busy_counters_are_retried_after_each_delay_then_the_run_counts() {
    let s = spec(&target("a", 1, 1, 1));
    let targets: Vec<&Target> = s.targets.iter().collect();
    // Busy twice (another tool holds the counters), then free.
    let mut mock = Mock::new(|_, attempt| {
        if attempt < 2 {
            Step::Fails(FailureKind::ResourceUnavailable)
        } else {
            Step::Launches(vec![7.0])
        }
    })
    .delays(&[1, 2, 3]);
    let mut seen = Seen::default();
    let started = std::time::Instant::now();
    let m = run(&mut mock, &targets, false, &mut seen);
    assert!(m.errors.is_empty(), "{:?}", m.errors);
    assert_eq!(kept(&m, "a", 0), [(0, 7.0)]);
    assert_eq!(mock.reps_of("a", "i=0"), [0, 0, 0]);
    let waits: Vec<&String> = seen
        .notes
        .iter()
        .filter(|n| n.contains("counters busy"))
        .collect();
    assert_eq!(waits.len(), 2, "{:?}", seen.notes);
    assert!(waits[0].ends_with("retrying in 1ms") && waits[1].ends_with("retrying in 2ms"));
    // The delays were taken (1 + 2 ms), and the third was not needed.
    assert!(started.elapsed() >= std::time::Duration::from_millis(3));
    assert_eq!((seen.finished, seen.failed), (1, 0));
}

#[test]
fn busy_counters_that_never_clear_give_up_after_the_last_delay_with_exit_3() {
    let s = spec(&target("a", 3, 3, 1));
    let targets: Vec<&Target> = s.targets.iter().collect();
    let mut mock = Mock::new(|_, _| Step::Fails(FailureKind::ResourceUnavailable)).delays(&[1, 1]);
    let mut seen = Seen::default();
    let m = run(&mut mock, &targets, false, &mut seen);
    // The first try and one retry per delay, then the size fails: its later reps never run.
    assert_eq!(mock.reps_of("a", "i=0"), [0, 0, 0]);
    assert_eq!(m.errors.len(), 1);
    assert_eq!(
        m.errors[0].kind,
        ErrorKind::Profiler(FailureKind::ResourceUnavailable)
    );
    assert!(
        m.errors[0].message.contains("a[i=0] rep 0"),
        "{}",
        m.errors[0].message
    );
    assert_eq!(exit_of(&m), Exit::ProfilerFailure);
    assert_eq!(seen.failed, 1);
}

#[test]
fn a_busy_reading_is_retried_as_a_busy_capture_is() {
    // ncu says the counters are busy in its log: the capture was taken, its reading fails.
    let s = spec(&target("a", 1, 1, 1));
    let targets: Vec<&Target> = s.targets.iter().collect();
    let mut mock = Mock::new(|_, attempt| {
        if attempt == 0 {
            Step::Unreadable(FailureKind::ResourceUnavailable)
        } else {
            Step::Launches(vec![3.0])
        }
    })
    .delays(&[1]);
    let m = run(&mut mock, &targets, false, &mut Seen::default());
    assert!(m.errors.is_empty(), "{:?}", m.errors);
    assert_eq!(mock.reps_of("a", "i=0"), [0, 0]);
}

#[test]
fn without_delays_busy_counters_are_not_retried() {
    // A recording's failure is final; nsys, CUPTI and the harnesses never compete.
    let s = spec(&target("a", 2, 2, 1));
    let targets: Vec<&Target> = s.targets.iter().collect();
    let mut mock = Mock::new(|_, _| Step::Fails(FailureKind::ResourceUnavailable));
    let m = run(&mut mock, &targets, false, &mut Seen::default());
    assert_eq!(mock.log(), ["a[i=0]#0"]);
    assert_eq!(m.errors.len(), 1);
}

#[test]
fn a_timeout_fails_its_size_alone_and_the_sizes_later_runs_are_not_made() {
    let s = spec(&target("a", 3, 3, 2));
    let targets: Vec<&Target> = s.targets.iter().collect();
    let mut mock = Mock::new(|job, _| {
        if crate::run::mock::index(job) == 0 && job.rep == 1 {
            Step::Fails(FailureKind::Timeout)
        } else {
            Step::Launches(vec![1.0])
        }
    })
    .delays(&[1, 1]);
    let mut seen = Seen::default();
    let m = run(&mut mock, &targets, false, &mut seen);
    // A timeout is not retried as busy counters are; size 0 stops, size 1 runs all its reps.
    assert_eq!(mock.reps_of("a", "i=0"), [0, 1]);
    assert_eq!(mock.reps_of("a", "i=1"), [0, 1, 2]);
    assert_eq!(m.errors.len(), 1);
    let e = &m.errors[0];
    assert_eq!(
        (e.kind.clone(), e.size.as_deref()),
        (ErrorKind::Profiler(FailureKind::Timeout), Some("i=0"))
    );
    assert!(e.message.contains("a[i=0] rep 1"), "{}", e.message);
    assert_eq!(m.reps_done.get(&TargetSize::new("a", "i=0")), Some(&1));
    assert_eq!(kept(&m, "a", 0), [(0, 1.0)]);
    assert_eq!((seen.finished, seen.failed), (4, 1));
    assert_eq!(exit_of(&m), Exit::ProfilerFailure);
}

#[test]
fn a_missing_profiler_or_no_counter_permission_stops_the_whole_pass() {
    for kind in [FailureKind::NcuNotFound, FailureKind::Permission] {
        let s = spec(&(target("a", 2, 2, 2) + &target("b", 2, 2, 1)));
        let targets: Vec<&Target> = s.targets.iter().collect();
        let mut mock = Mock::new(|_, _| Step::Fails(kind));
        let m = run(&mut mock, &targets, false, &mut Seen::default());
        // Every other run would fail the same way: one error, nothing more is run.
        assert_eq!(mock.log(), ["a[i=0]#0"], "{kind:?}");
        assert_eq!(m.errors.len(), 1);
        assert_eq!(exit_of(&m), Exit::ProfilerFailure);
    }
}

#[test]
fn every_failure_kind_is_kept_with_its_class_and_other_sizes_go_on() {
    for kind in FailureKind::ALL {
        if matches!(kind, FailureKind::NcuNotFound | FailureKind::Permission) {
            continue;
        }
        let s = spec(&target("a", 2, 2, 2));
        let targets: Vec<&Target> = s.targets.iter().collect();
        let mut mock = Mock::new(|job, _| {
            if crate::run::mock::index(job) == 0 {
                Step::Unreadable(kind)
            } else {
                Step::Launches(vec![2.0])
            }
        })
        .delays(&[1]);
        let m = run(&mut mock, &targets, false, &mut Seen::default());
        let busy = usize::from(kind == FailureKind::ResourceUnavailable);
        assert_eq!(mock.reps_of("a", "i=0").len(), 1 + busy, "{kind:?}");
        assert_eq!(mock.reps_of("a", "i=1"), [0, 1], "{kind:?}");
        assert_eq!(m.errors.len(), 1, "{kind:?}");
        assert_eq!(m.errors[0].kind, ErrorKind::Profiler(kind));
        assert!(
            m.errors[0].message.contains(kind.as_str()),
            "{}",
            m.errors[0].message
        );
        // A damaged recording is the user's input (exit 2); every other kind exit 3.
        let exit = if kind == FailureKind::BadRecording {
            Exit::InvalidInput
        } else {
            Exit::ProfilerFailure
        };
        assert_eq!(exit_of(&m), exit, "{kind:?}");
        assert_eq!(kept(&m, "a", 1), [(0, 2.0), (1, 2.0)]);
    }
}

/// A GPU whose readings around each run are `readings` (two per run: before, after), with
/// clocks locked at 1590 MHz.
fn watched(readings: Vec<Reading>) -> FakeGpu {
    let mut d = FakeDevice::new("NVIDIA H100 80GB HBM3");
    d.readings = readings;
    FakeGpu::new(vec![d])
}

fn reading(sm: u32, throttle: ThrottleReasons) -> Reading {
    Reading {
        sm_clock_mhz: Some(sm),
        throttle: Some(throttle),
        ..Reading::default()
    }
}

/// Run `targets` through `mock` with a watch on `gpu` (clocks locked at 1590 MHz).
fn run_watched(
    mock: &mut Mock<'_>,
    s: &crate::spec::Spec,
    gpu: &FakeGpu,
    seen: &mut Seen,
) -> (Measurement, crate::gpu::health::Health) {
    let targets: Vec<&Target> = s.targets.iter().collect();
    let work = initial_work(&targets, None);
    let mut watch = Watch {
        gpu,
        sampler: HealthSampler::new(0, Some(1590), &s.settings),
        settings: &s.settings,
    };
    let mut tools = Instruments {
        measurer: mock,
        recorder: None,
        watch: Some(&mut watch),
        progress: seen,
    };
    let m = measure(&mut tools, &work, false).unwrap();
    (m, watch.sampler.summary())
}

#[test]
fn a_throttled_run_is_run_again_and_only_the_clean_run_is_kept() {
    let s = spec(&target("a", 2, 2, 1));
    let ok = ThrottleReasons(0);
    // Rep 0's first run: a hardware slowdown after it; every later reading is clean.
    let gpu = watched(vec![
        reading(1590, ok),
        reading(1590, ThrottleReasons::HW_SLOWDOWN),
        reading(1590, ok),
    ]);
    let mut mock = Mock::new(|job, attempt| Step::Launches(vec![f64::from(10 * job.rep + attempt)]));
    let mut seen = Seen::default();
    let (m, health) = run_watched(&mut mock, &s, &gpu, &mut seen);
    assert_eq!(mock.reps_of("a", "i=0"), [0, 0, 1]);
    // The throttled run's samples are gone; its re-run (attempt 1) is kept.
    assert_eq!(kept(&m, "a", 0), [(0, 1.0), (1, 10.0)]);
    assert_eq!((health.throttled_reps, health.rerun_reps), (1, 1));
    let note = seen.notes.iter().find(|n| n.contains("throttled")).unwrap();
    assert!(
        note.contains("a[i=0] rep 0") && note.contains("hw_slowdown"),
        "{note}"
    );
}

#[test]
fn a_clock_that_drifts_under_the_locked_clock_is_throttled_and_re_run_up_to_the_limit() {
    // max_throttle_reruns is 2 (the default): the first run and two re-runs, then it is kept
    // and marked. 1000 MHz is under 90 % of the locked 1590 MHz.
    let s = spec(&target("a", 1, 1, 1));
    let gpu = watched(vec![reading(1000, ThrottleReasons(0))]);
    let mut mock = Mock::new(|_, attempt| Step::Launches(vec![f64::from(attempt)]));
    let mut seen = Seen::default();
    let (m, health) = run_watched(&mut mock, &s, &gpu, &mut seen);
    assert_eq!(s.settings.max_throttle_reruns, 2);
    assert_eq!(mock.reps_of("a", "i=0"), [0, 0, 0]);
    assert_eq!(kept(&m, "a", 0), [(0, 2.0)]);
    assert_eq!((health.throttled_reps, health.rerun_reps), (3, 2));
    assert!(
        seen.notes
            .iter()
            .all(|n| !n.contains("throttled") || n.contains("sm_clock_below_min"))
    );
    assert!(m.errors.is_empty());
}

#[test]
fn a_failed_capture_is_not_re_run_for_throttling() {
    let s = spec(&target("a", 1, 1, 1));
    let gpu = watched(vec![reading(1590, ThrottleReasons::HW_SLOWDOWN)]);
    let mut mock = Mock::new(|_, _| Step::Fails(FailureKind::AppFailed));
    let (m, health) = run_watched(&mut mock, &s, &gpu, &mut Seen::default());
    assert_eq!(mock.log(), ["a[i=0]#0"]);
    assert_eq!(m.errors[0].kind, ErrorKind::Profiler(FailureKind::AppFailed));
    assert_eq!(health.rerun_reps, 0);
}

#[test]
fn the_recorder_keeps_the_capture_that_counted_and_one_that_could_not_be_read() {
    let s = spec(&target("a", 2, 2, 2));
    let targets: Vec<&Target> = s.targets.iter().collect();
    let work = initial_work(&targets, None);
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("rec");
    let mut rec = Recorder::new(&dest).unwrap();
    let gpu = watched(vec![
        reading(1590, ThrottleReasons(0)),
        reading(1590, ThrottleReasons::SW_THERMAL_SLOWDOWN),
        reading(1590, ThrottleReasons(0)),
    ]);
    let mut watch = Watch {
        gpu: &gpu,
        sampler: HealthSampler::new(0, Some(1590), &s.settings),
        settings: &s.settings,
    };
    let mut mock = Mock::new(|job, _| match (crate::run::mock::index(job), job.rep) {
        (1, 0) => Step::Unreadable(FailureKind::BadOutput),
        (1, 1) => Step::Fails(FailureKind::AppFailed),
        _ => Step::Launches(vec![1.0]),
    });
    let mut tools = Instruments {
        measurer: &mut mock,
        recorder: Some(&mut rec),
        watch: Some(&mut watch),
        progress: &mut Seen::default(),
    };
    let m = measure(&mut tools, &work, false).unwrap();
    assert_eq!(m.errors.len(), 1);
    rec.finish(&s.hash, "mock", &crate::gpu::fingerprint::Fingerprint::default())
        .unwrap();
    let file =
        |size: &str, rep: u32| std::fs::read_to_string(dest.join("a").join(size).join(format!("{rep}.csv")));
    // Rep 0 of size 0 was throttled at its first attempt: its re-run is what the recording keeps.
    assert_eq!(file("i=0", 0).unwrap(), "mock capture of a[i=0] rep 0, attempt 1");
    assert_eq!(file("i=0", 1).unwrap(), "mock capture of a[i=0] rep 1, attempt 0");
    // A capture that cannot be read is kept (it replays as the same failure); the size's
    // later runs are not made, so there is nothing more to keep.
    assert_eq!(file("i=1", 0).unwrap(), "mock capture of a[i=1] rep 0, attempt 0");
    assert!(file("i=1", 1).is_err());
}

#[test]
fn re_measurement_stops_where_a_recording_ends() {
    let s = spec(&target("a", 4, 4, 1));
    let targets: Vec<&Target> = s.targets.iter().collect();
    let mut mock = Mock::new(|_, _| Step::Launches(vec![1.0])).recording(2);
    let mut seen = Seen::default();
    let m = run(&mut mock, &targets, true, &mut seen);
    // The recording holds reps 0 and 1: the others are skipped silently, no error.
    assert_eq!(mock.log(), ["a[i=0]#0", "a[i=0]#1"]);
    assert_eq!(seen.skipped, 2);
    assert!(m.errors.is_empty());
    assert_eq!(m.reps_done.get(&TargetSize::new("a", "i=0")), Some(&2));
}

#[test]
fn wall_seconds_add_up_per_target_and_failed_runs_cost_nothing() {
    let s = spec(&(target("a", 3, 3, 2) + &target("b", 2, 2, 1)));
    let targets: Vec<&Target> = s.targets.iter().collect();
    let mut mock = Mock::new(|job, _| {
        if job.target.name == "b" && job.rep == 1 {
            Step::Fails(FailureKind::AppFailed)
        } else {
            Step::Launches(vec![1.0])
        }
    });
    let m = run(&mut mock, &targets, false, &mut Seen::default());
    // 0.25 s per run the mock measured: 6 runs of a, 1 of b.
    assert!((m.cost_seconds["a"] - 1.5).abs() < 1e-9, "{:?}", m.cost_seconds);
    assert!((m.cost_seconds["b"] - 0.25).abs() < 1e-9, "{:?}", m.cost_seconds);
}

#[test]
fn a_kernel_the_filter_no_longer_selects_is_kept_with_the_kernels_that_ran() {
    let s = spec(&target("a", 2, 2, 1));
    let targets: Vec<&Target> = s.targets.iter().collect();
    let calls = Cell::new(0);
    let mut mock = Mock::new(|_, _| {
        calls.set(calls.get() + 1);
        Step::Unselected(vec!["gemm_v2".to_owned(), "gemm_splitk".to_owned()])
    });
    let m = run(&mut mock, &targets, false, &mut Seen::default());
    assert_eq!(calls.get(), 1);
    let id = TargetSize::new("a", "i=0");
    assert_eq!(m.unselected[&id], ["gemm_v2", "gemm_splitk"]);
    let e = &m.errors[0];
    assert_eq!(e.kind, ErrorKind::Profiler(FailureKind::NoKernels));
    assert!(
        e.message.contains("`a`") && e.message.contains("gemm_v2, gemm_splitk"),
        "{}",
        e.message
    );
}

#[test]
fn a_secret_the_program_wrote_is_redacted_before_any_report_sees_the_failure() {
    let s = spec(&target("a", 1, 1, 1));
    let targets: Vec<&Target> = s.targets.iter().collect();
    let mut mock = Mock::new(|_, _| {
        Step::FailsWith(
            FailureKind::AppFailed,
            "the application exited with 1; it wrote: GITHUB_TOKEN=ghp_SYNTHETIC0123456789abcdef".to_owned(),
        )
    });
    let m = run(&mut mock, &targets, false, &mut Seen::default());
    let message = &m.errors[0].message;
    assert!(!message.contains("ghp_SYNTHETIC"), "{message}");
    assert!(message.contains("GITHUB_TOKEN=[redacted]"), "{message}");
    assert!(
        message.starts_with("a[i=0] rep 0: the application exited with 1"),
        "{message}"
    );
}
