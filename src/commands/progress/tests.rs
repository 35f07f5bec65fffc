//! Unit tests of the progress drawing: the tally and ETA, the lines and the bar.

use super::*;

fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s)
}

/// A pass as `measure` drives it: repetition-major over two sizes of `matmul` and one of
/// `reduce`, a failure of `reduce` at rep 1, then one re-measurement round of 2 runs.
fn drive(p: &mut dyn Progress) {
    for (t, s) in [
        ("matmul", "n=512"),
        ("matmul", "n=1024"),
        ("reduce", "n=16777216"),
    ] {
        p.add_runs(t, s, 3);
    }
    for rep in 0..3 {
        for (t, s, w) in [
            ("matmul", "n=512", 1.25),
            ("matmul", "n=1024", 2.5),
            ("reduce", "n=16777216", 0.75),
        ] {
            if t == "reduce" && rep == 2 {
                continue;
            }
            p.run_started(t, s, rep);
            if t == "reduce" && rep == 1 {
                p.run_failed(t, s, rep, secs(0.5));
            } else {
                p.run_finished(t, s, rep, secs(w));
            }
        }
    }
    p.note("re-measuring 1 doubtful size(s)");
    p.add_runs("matmul", "n=1024", 2);
    p.run_started("matmul", "n=1024", 3);
    p.run_finished("matmul", "n=1024", 3, secs(2.5));
    p.run_skipped("matmul", "n=1024");
    // A round the recording cannot serve at all: skipped, and no second line.
    p.add_runs("matmul", "n=512", 1);
    p.run_skipped("matmul", "n=512");
    p.finish();
}

fn lines(v: Verbosity) -> String {
    let mut p = Lines::new(Vec::new(), v, BTreeMap::new());
    drive(&mut p);
    String::from_utf8(p.into_inner()).unwrap()
}

#[test]
fn off_a_terminal_a_line_per_finished_size() {
    insta::assert_snapshot!(lines(Verbosity::Normal), @r"
    profiling: 9 runs over 3 sizes of 2 targets
    reduce[n=16777216]: failed after 1 run in 1.2s
    matmul[n=512]: 3 runs in 3.8s
    matmul[n=1024]: 3 runs in 7.5s
    re-measuring 1 doubtful size(s)
    matmul[n=1024]: 4 runs in 10.0s
    ");
}

#[test]
fn verbose_adds_a_line_per_run() {
    insta::assert_snapshot!(lines(Verbosity::Verbose), @r"
    profiling: 9 runs over 3 sizes of 2 targets
      matmul[n=512] rep 0: 1.2s
      matmul[n=1024] rep 0: 2.5s
      reduce[n=16777216] rep 0: 0.8s
      matmul[n=512] rep 1: 1.2s
      matmul[n=1024] rep 1: 2.5s
      reduce[n=16777216] rep 1: failed after 0.5s
    reduce[n=16777216]: failed after 1 run in 1.2s
      matmul[n=512] rep 2: 1.2s
    matmul[n=512]: 3 runs in 3.8s
      matmul[n=1024] rep 2: 2.5s
    matmul[n=1024]: 3 runs in 7.5s
    re-measuring 1 doubtful size(s)
    matmul[n=1024]: 2 more runs
      matmul[n=1024] rep 3: 2.5s
    matmul[n=1024]: 4 runs in 10.0s
    matmul[n=512]: 1 more run
    ");
}

#[test]
fn quiet_prints_nothing() {
    assert_eq!(lines(Verbosity::Quiet), "");
}

#[test]
fn the_eta_uses_measured_time_then_prior_costs_then_the_mean() {
    let now = Instant::now();
    let mut t = Tally::new(BTreeMap::from([("reduce".to_owned(), 30.0)]));
    t.size("matmul", "n=512").planned = 4;
    t.size("reduce", "n=1").planned = 10;
    assert_eq!(
        t.eta(now),
        None,
        "matmul has no measurement, no prior cost, no mean"
    );
    let s = t.size("matmul", "n=512");
    s.done = 2;
    s.wall = secs(5.0);
    // matmul: 2 left at 2.5 s; reduce: 10 left at 30 s / 10 planned.
    assert_eq!(t.eta(now), Some(secs(2.0 * 2.5 + 10.0 * 3.0)));
    // A target without a prior cost starts at the mean of every run so far.
    t.size("vector_add", "n=1").planned = 2;
    assert_eq!(t.seconds_per_run("vector_add"), Some(2.5));
    // The running run's elapsed time is taken off.
    t.current = Some((
        "matmul".into(),
        "n=512".into(),
        2,
        now.checked_sub(secs(1.0)).unwrap(),
    ));
    assert_eq!(t.eta(now), Some(secs(5.0 + 30.0 + 5.0 - 1.0)));
    // A failed size has nothing left to run.
    t.size("reduce", "n=1").failed = true;
    assert_eq!(t.eta(now), Some(secs(5.0 + 5.0 - 1.0)));
    assert_eq!(t.total(), 4 + 2);
}

#[test]
fn durations_read_like_a_clock() {
    assert_eq!(human_duration(secs(12.34)), "12.3s");
    assert_eq!(human_duration(secs(125.0)), "2m 05s");
    assert_eq!(human_duration(secs(3720.0)), "1h 02m");
}

#[test]
fn the_bar_counts_runs_added_by_remeasurement() {
    let mut b = Bar::with_target(
        indicatif::ProgressDrawTarget::hidden(),
        Verbosity::Normal,
        BTreeMap::new(),
    );
    b.add_runs("m", "n=1", 3);
    b.run_started("m", "n=1", 0);
    b.run_finished("m", "n=1", 0, secs(1.0));
    assert_eq!((b.bar.position(), b.bar.length()), (1, Some(3)));
    b.add_runs("m", "n=1", 2);
    assert_eq!(b.bar.length(), Some(5));
    b.run_started("m", "n=1", 1);
    b.run_failed("m", "n=1", 1, secs(1.0));
    assert_eq!(
        (b.bar.position(), b.bar.length()),
        (1, Some(1)),
        "a failed size's runs leave the plan"
    );
    b.finish();
    assert!(b.bar.is_finished());
}

/// A writer whose bytes a test can read afterwards.
#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_status_is_on_the_bar_and_leaves_no_line() {
    let buf = Shared::default();
    let mut b = Bar::with_target(
        indicatif::ProgressDrawTarget::hidden(),
        Verbosity::Normal,
        BTreeMap::new(),
    );
    b.plain = Box::new(buf.clone());
    b.add_runs("m", "n=1", 2);
    b.run_started("m", "n=1", 0);
    b.status("re-measuring 1 doubtful size(s)");
    assert_eq!(b.bar.prefix(), "re-measuring 1 doubtful size(s): ");
    b.run_finished("m", "n=1", 0, secs(1.0));
    b.finish();
    // Nothing was printed to stay on the screen.
    assert!(buf.0.lock().unwrap().is_empty());
    // In a log (lines), the same status is a line.
    let mut lines = Lines::new(buf.clone(), Verbosity::Normal, BTreeMap::new());
    lines.status("re-measuring 1 doubtful size(s)");
    let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
    assert_eq!(text, "re-measuring 1 doubtful size(s)\n");
}

#[test]
fn notes_while_no_bar_is_drawn_are_written_as_lines() {
    let buf = Shared::default();
    let mut b = Bar::with_target(
        indicatif::ProgressDrawTarget::hidden(),
        Verbosity::Normal,
        BTreeMap::new(),
    );
    b.plain = Box::new(buf.clone());
    b.note("locked SM clocks to 1980 MHz");
    b.add_runs("m", "n=1", 1);
    b.run_started("m", "n=1", 0);
    b.note("drawn above the bar");
    b.run_finished("m", "n=1", 0, secs(1.0));
    b.finish();
    b.note("recorded raw ncu output");
    let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
    assert_eq!(text, "locked SM clocks to 1980 MHz\nrecorded raw ncu output\n");
}

#[test]
fn written_lines_become_notes() {
    let mut p = Lines::new(Vec::new(), Verbosity::Normal, BTreeMap::new());
    {
        let mut w = NoteWriter::new(&mut p);
        write!(w, "locking clocks").unwrap();
        writeln!(w, " to base").unwrap();
        write!(w, "unterminated").unwrap();
    }
    assert_eq!(
        String::from_utf8(p.into_inner()).unwrap(),
        "locking clocks to base\nunterminated\n"
    );
}
