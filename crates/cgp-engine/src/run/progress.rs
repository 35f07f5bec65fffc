//! Progress of a measurement pass, as events: the engine reports each run, note and status
//! through [`Progress`]; the command layer that hands it in decides how they are shown (the
//! root package's `commands::progress`: a bar on a terminal, lines elsewhere, nothing with
//! `--quiet`). Nothing here draws or writes.

use std::time::Duration;

/// Events of a measurement pass. Sizes are their canonical keys (`n=1024`).
pub trait Progress {
    /// `runs` more runs of `target[size]` are planned (the first plan, or a re-measurement round).
    fn add_runs(&mut self, target: &str, size: &str, runs: u32);
    /// A run starts.
    fn run_started(&mut self, target: &str, size: &str, rep: u32);
    /// A run ended with samples.
    fn run_finished(&mut self, target: &str, size: &str, rep: u32, wall: Duration);
    /// A run failed: the size's remaining runs are dropped from the plan.
    fn run_failed(&mut self, target: &str, size: &str, rep: u32, wall: Duration);
    /// A planned run will not happen (a recording without that repetition, a stopped pass).
    fn run_skipped(&mut self, target: &str, size: &str);
    /// A message for people (throttling, retries, re-measurement decisions).
    fn note(&mut self, text: &str);
    /// The pass is over: clear the bar.
    fn finish(&mut self);
    /// What the runs that follow are for (`re-measuring 3 doubtful size(s)`): a line in a log;
    /// on a terminal, shown on the bar and cleared with it, so that it does not stay above the
    /// table.
    fn status(&mut self, text: &str) {
        self.note(text);
    }
    /// The runs that follow belong to this side of an A/B pair (`base`, `head`; `""` for none),
    /// shown with each run. Commands without sides never call it.
    fn side(&mut self, _side: &str) {}
}

/// Progress that shows nothing (library callers, tests).
#[derive(Debug, Default)]
pub struct NoProgress;

impl Progress for NoProgress {
    fn add_runs(&mut self, _: &str, _: &str, _: u32) {}
    fn run_started(&mut self, _: &str, _: &str, _: u32) {}
    fn run_finished(&mut self, _: &str, _: &str, _: u32, _: Duration) {}
    fn run_failed(&mut self, _: &str, _: &str, _: u32, _: Duration) {}
    fn run_skipped(&mut self, _: &str, _: &str) {}
    fn note(&mut self, _: &str) {}
    fn finish(&mut self) {}
}
