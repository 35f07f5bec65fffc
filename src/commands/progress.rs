//! Progress of the ncu runs of a plan, on stderr only (stdout carries tables and JSON).
//!
//! On a terminal: one indicatif bar over every run the plan needs, naming the current target and
//! size, with the elapsed time and an ETA. Re-measurement rounds add their runs to the bar when
//! they are decided. Off a terminal (CI logs, pipes): one line per target and size when it
//! finishes, with its wall time; `-v` adds a line per run, `--quiet` prints nothing.
//!
//! The ETA is the sum, over the runs still to do, of each target's seconds per run: measured in
//! this pass once a target has run, before that taken from a previous results file's
//! `cost_seconds` (spread over the target's planned runs), else the mean of every run so far.
//! Until one of those exists the ETA is unknown and shown as `?`.
//!
//! The engine only emits the events (`crate::run::progress::Progress`); this is what draws them.

use crate::measured::samples::TargetSize;
use crate::run::progress::Progress;
use std::collections::BTreeMap;
use std::io::Write;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How much progress to show.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verbosity {
    /// Nothing.
    Quiet,
    /// The bar, or a line per finished target and size.
    #[default]
    Normal,
    /// Also a line per run.
    Verbose,
}

/// How a run is named on the bar and in `-v` lines: `gemm[n=1024] rep 3`, with its A/B side
/// when it has one (`gemm[n=1024] rep 3 (base)`).
fn run_name(target: &str, size: &str, rep: u32, side: &str) -> String {
    if side.is_empty() {
        format!("{target}[{size}] rep {rep}")
    } else {
        format!("{target}[{size}] rep {rep} ({side})")
    }
}

/// Runs of one target and size.
#[derive(Debug, Clone, Default)]
struct SizeTally {
    planned: u32,
    done: u32,
    skipped: u32,
    wall: Duration,
    failed: bool,
    /// Runs done when its line was last printed: a round that was skipped whole prints nothing.
    reported: Option<u32>,
}

impl SizeTally {
    fn remaining(&self) -> u32 {
        if self.failed {
            0
        } else {
            self.planned.saturating_sub(self.done + self.skipped)
        }
    }
}

/// Everything the ETA and the lines need: planned and finished runs with their wall times.
#[derive(Debug, Clone, Default)]
pub(crate) struct Tally {
    sizes: BTreeMap<TargetSize, SizeTally>,
    /// A previous run's wall seconds per target (`cost_seconds` of a results file).
    prior: BTreeMap<String, f64>,
    /// The current run and when it started.
    current: Option<(String, String, u32, Instant)>,
    /// The A/B side of the runs that follow (`""` outside `ab`).
    side: String,
}

impl Tally {
    pub fn new(mut prior: BTreeMap<String, f64>) -> Self {
        // Costs from a results file anyone can edit: clamped (`1e20` overflowed the ETA).
        for c in prior.values_mut() {
            *c = crate::plan::shard::clamp_cost(*c);
        }
        Self {
            prior,
            ..Self::default()
        }
    }

    fn size(&mut self, target: &str, size: &str) -> &mut SizeTally {
        self.sizes.entry(TargetSize::new(target, size)).or_default()
    }

    /// Runs planned in total (the bar's length): done, failed and skipped runs count as planned.
    pub fn total(&self) -> u64 {
        self.sizes
            .values()
            .map(|s| u64::from(s.done + s.skipped + s.remaining()))
            .sum()
    }

    /// Runs finished or given up (the bar's position).
    pub fn position(&self) -> u64 {
        self.sizes.values().map(|s| u64::from(s.done + s.skipped)).sum()
    }

    /// Seconds per run of `target`: measured, else the prior cost over the planned runs, else
    /// the mean of all runs so far.
    pub fn seconds_per_run(&self, target: &str) -> Option<f64> {
        let mine = self.sizes.iter().filter(|(id, _)| id.target == target);
        let (runs, wall) = mine.clone().fold((0u32, 0.0), |(n, w), (_, s)| {
            (n + s.done, w + s.wall.as_secs_f64())
        });
        if runs > 0 {
            return Some(wall / f64::from(runs));
        }
        let planned: u32 = mine.map(|(_, s)| s.planned).sum();
        if let Some(cost) = self.prior.get(target).filter(|c| c.is_finite() && **c > 0.0)
            && planned > 0
        {
            return Some(cost / f64::from(planned));
        }
        let (runs, wall) = self
            .sizes
            .values()
            .fold((0u32, 0.0), |(n, w), s| (n + s.done, w + s.wall.as_secs_f64()));
        (runs > 0).then(|| wall / f64::from(runs))
    }

    /// Time left: every remaining run at its target's seconds per run, less the time the
    /// current run has already taken. `None` while some target has no estimate.
    pub fn eta(&self, now: Instant) -> Option<Duration> {
        let mut left = 0.0;
        for (TargetSize { target, .. }, s) in &self.sizes {
            let r = s.remaining();
            if r > 0 {
                left += f64::from(r) * self.seconds_per_run(target)?;
            }
        }
        if let Some((_, _, _, started)) = &self.current {
            left -= now.saturating_duration_since(*started).as_secs_f64();
        }
        Some(Duration::try_from_secs_f64(left.max(0.0)).unwrap_or(Duration::MAX))
    }
}

/// `12.3s`, `2m 05s`, `1h 02m`. Hand-written: a progress line needs this fixed-width,
/// two-unit form (zero-padded, rounded to the shown unit), which jiff's and humantime's
/// printers do not produce.
pub(crate) fn human_duration(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 60.0 {
        return format!("{s:.1}s");
    }
    let total = d.as_secs();
    if total < 3600 {
        format!("{}m {:02}s", total / 60, total % 60)
    } else {
        format!("{}h {:02}m", total / 3600, (total % 3600) / 60)
    }
}

fn runs(n: u32) -> String {
    format!("{n} run{}", if n == 1 { "" } else { "s" })
}

/// Progress as lines, for logs: a line per finished target and size (`-v`: per run too).
pub(crate) struct Lines<W: Write> {
    out: W,
    verbosity: Verbosity,
    tally: Tally,
    announced: bool,
}

impl<W: Write> Lines<W> {
    pub fn new(out: W, verbosity: Verbosity, prior: BTreeMap<String, f64>) -> Self {
        Self {
            out,
            verbosity,
            tally: Tally::new(prior),
            announced: false,
        }
    }

    /// The writer (tests read what was written).
    #[cfg(test)]
    pub fn into_inner(self) -> W {
        self.out
    }

    fn line(&mut self, text: &str) {
        if self.verbosity > Verbosity::Quiet {
            // Progress is best effort: a closed stderr must not stop a measurement. Lines
            // name targets, sizes, folders and failures: sanitised.
            let _ = writeln!(self.out, "{}", crate::foundation::sanitize::block(text));
        }
    }

    fn size_done(&mut self, target: &str, size: &str) {
        let Some(s) = self.tally.sizes.get_mut(&TargetSize::new(target, size)) else {
            return;
        };
        if (!s.failed && s.remaining() > 0) || s.reported == Some(s.done) {
            return;
        }
        s.reported = Some(s.done);
        let s = s.clone();
        let what = if s.failed { "failed after " } else { "" };
        self.line(&format!(
            "{target}[{size}]: {what}{} in {}",
            runs(s.done),
            human_duration(s.wall)
        ));
    }
}

impl<W: Write> Progress for Lines<W> {
    fn side(&mut self, side: &str) {
        side.clone_into(&mut self.tally.side);
    }

    fn add_runs(&mut self, target: &str, size: &str, n: u32) {
        let s = self.tally.size(target, size);
        // A size that finished and gets a re-measurement round is reported again when done.
        s.planned += n;
        if self.announced && n > 0 && self.verbosity == Verbosity::Verbose {
            self.line(&format!(
                "{target}[{size}]: {n} more run{}",
                if n == 1 { "" } else { "s" }
            ));
        }
    }

    fn run_started(&mut self, target: &str, size: &str, rep: u32) {
        if !self.announced {
            self.announced = true;
            let targets: std::collections::BTreeSet<&str> =
                self.tally.sizes.keys().map(|id| id.target.as_str()).collect();
            let total = self.tally.total();
            let eta = self
                .tally
                .eta(Instant::now())
                .map_or_else(String::new, |d| format!(", about {}", human_duration(d)));
            let text = format!(
                "profiling: {total} run{} over {} size{} of {} target{}{eta}",
                if total == 1 { "" } else { "s" },
                self.tally.sizes.len(),
                if self.tally.sizes.len() == 1 { "" } else { "s" },
                targets.len(),
                if targets.len() == 1 { "" } else { "s" },
            );
            self.line(&text);
        }
        self.tally.current = Some((target.to_owned(), size.to_owned(), rep, Instant::now()));
    }

    fn run_finished(&mut self, target: &str, size: &str, rep: u32, wall: Duration) {
        self.tally.current = None;
        let s = self.tally.size(target, size);
        s.done += 1;
        s.wall += wall;
        if self.verbosity == Verbosity::Verbose {
            let name = run_name(target, size, rep, &self.tally.side);
            self.line(&format!("  {name}: {}", human_duration(wall)));
        }
        self.size_done(target, size);
    }

    fn run_failed(&mut self, target: &str, size: &str, rep: u32, wall: Duration) {
        self.tally.current = None;
        let s = self.tally.size(target, size);
        s.wall += wall;
        s.failed = true;
        if self.verbosity == Verbosity::Verbose {
            let name = run_name(target, size, rep, &self.tally.side);
            self.line(&format!("  {name}: failed after {}", human_duration(wall)));
        }
        self.size_done(target, size);
    }

    fn run_skipped(&mut self, target: &str, size: &str) {
        self.tally.size(target, size).skipped += 1;
        self.size_done(target, size);
    }

    fn note(&mut self, text: &str) {
        self.line(text);
    }

    fn finish(&mut self) {
        let _ = self.out.flush();
    }
}

/// The bar on a terminal.
pub(crate) struct Bar {
    bar: indicatif::ProgressBar,
    /// Where the bar is drawn once the first run starts.
    draw: Option<indicatif::ProgressDrawTarget>,
    /// Where notes go while no bar is on the screen (stderr; a buffer in tests).
    plain: Box<dyn Write + Send>,
    tally: Arc<Mutex<Tally>>,
    verbosity: Verbosity,
}

impl Bar {
    /// A bar drawn on stderr.
    pub fn new(verbosity: Verbosity, prior: BTreeMap<String, f64>) -> Self {
        Self::with_target(indicatif::ProgressDrawTarget::stderr(), verbosity, prior)
    }

    fn with_target(
        target: indicatif::ProgressDrawTarget,
        verbosity: Verbosity,
        prior: BTreeMap<String, f64>,
    ) -> Self {
        let tally = Arc::new(Mutex::new(Tally::new(prior)));
        let for_eta = Arc::clone(&tally);
        let style = indicatif::ProgressStyle::with_template(
            "{spinner} {elapsed:>4} [{bar:20}] {pos}/{len} runs  ETA {model_eta}  {prefix}{wide_msg}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
        .with_key(
            "model_eta",
            move |_: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                let t = for_eta.lock().unwrap_or_else(PoisonError::into_inner);
                let text = t
                    .eta(Instant::now())
                    .map_or_else(|| "?".to_owned(), human_duration);
                let _ = w.write_str(&text);
            },
        )
        .progress_chars("=> ");
        // Drawn from the first run on: before it, the plan is still being added up.
        let bar = indicatif::ProgressBar::with_draw_target(Some(0), indicatif::ProgressDrawTarget::hidden())
            .with_style(style);
        Self {
            bar,
            draw: Some(target),
            plain: Box::new(std::io::stderr()),
            tally,
            verbosity,
        }
    }

    fn with_tally<R>(&self, f: impl FnOnce(&mut Tally) -> R) -> R {
        let mut t = self.tally.lock().unwrap_or_else(PoisonError::into_inner);
        f(&mut t)
    }

    fn sync(&self) {
        let (len, pos) = self.with_tally(|t| (t.total(), t.position()));
        self.bar.set_length(len);
        self.bar.set_position(pos);
    }

    fn size_line(&self, target: &str, size: &str) {
        if self.verbosity < Verbosity::Verbose {
            return;
        }
        let s = self.with_tally(|t| t.sizes.get(&TargetSize::new(target, size)).cloned());
        if let Some(s) = s.filter(|s| s.failed || s.remaining() == 0) {
            let what = if s.failed { "failed after " } else { "" };
            self.bar.println(format!(
                "{target}[{size}]: {what}{} in {}",
                runs(s.done),
                human_duration(s.wall)
            ));
        }
    }
}

impl Progress for Bar {
    fn side(&mut self, side: &str) {
        self.with_tally(|t| side.clone_into(&mut t.side));
    }

    fn add_runs(&mut self, target: &str, size: &str, runs: u32) {
        self.with_tally(|t| t.size(target, size).planned += runs);
        self.sync();
    }

    fn run_started(&mut self, target: &str, size: &str, rep: u32) {
        self.with_tally(|t| {
            t.current = Some((target.to_owned(), size.to_owned(), rep, Instant::now()));
        });
        let side = self.with_tally(|t| t.side.clone());
        self.bar.set_message(run_name(target, size, rep, &side));
        if let Some(draw) = self.draw.take() {
            self.bar.set_draw_target(draw);
            self.bar.enable_steady_tick(Duration::from_millis(200));
        }
    }

    fn run_finished(&mut self, target: &str, size: &str, _rep: u32, wall: Duration) {
        self.with_tally(|t| {
            t.current = None;
            let s = t.size(target, size);
            s.done += 1;
            s.wall += wall;
        });
        self.sync();
        self.size_line(target, size);
    }

    fn run_failed(&mut self, target: &str, size: &str, _rep: u32, wall: Duration) {
        self.with_tally(|t| {
            t.current = None;
            let s = t.size(target, size);
            s.wall += wall;
            s.failed = true;
        });
        self.sync();
        self.size_line(target, size);
    }

    fn run_skipped(&mut self, target: &str, size: &str) {
        self.with_tally(|t| t.size(target, size).skipped += 1);
        self.sync();
    }

    fn note(&mut self, text: &str) {
        let text = &crate::foundation::sanitize::block(text);
        if self.draw.is_some() || self.bar.is_finished() {
            // No bar on the screen (before the first run, after the last): indicatif would
            // drop the line, so write it as is.
            let _ = writeln!(self.plain, "{text}");
        } else {
            self.bar.println(text);
        }
    }

    fn finish(&mut self) {
        self.bar.finish_and_clear();
    }

    fn status(&mut self, text: &str) {
        if self.bar.is_finished() {
            return;
        }
        self.bar.set_prefix(if text.is_empty() {
            String::new()
        } else {
            format!("{text}: ")
        });
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        // An error path that never calls `finish` must not leave a half-drawn bar.
        if !self.bar.is_finished() {
            self.bar.finish_and_clear();
        }
    }
}

/// Writes lines into a [`Progress`] as notes: for code that reports through `io::Write`
/// (clock locking, re-measurement decisions) while a bar is drawn.
pub(crate) struct NoteWriter<'a> {
    progress: &'a mut dyn Progress,
    buf: Vec<u8>,
}

impl<'a> NoteWriter<'a> {
    pub fn new(progress: &'a mut dyn Progress) -> Self {
        Self {
            progress,
            buf: Vec::new(),
        }
    }
}

impl Write for NoteWriter<'_> {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(data);
        while let Some(i) = self.buf.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.buf.drain(..=i).collect();
            let text = String::from_utf8_lossy(&line[..line.len() - 1]).into_owned();
            self.progress.note(&text);
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if !self.buf.is_empty() {
            let text = String::from_utf8_lossy(&self.buf).into_owned();
            self.buf.clear();
            self.progress.note(&text);
        }
        Ok(())
    }
}

impl Drop for NoteWriter<'_> {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

#[cfg(test)]
mod tests {
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
}
