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
mod tests;
