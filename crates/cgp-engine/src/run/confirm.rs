//! `check --base` (docs/confirm.md): after the comparison with the stored baselines (the screen),
//! the rows it left doubtful are measured again paired and interleaved with the base commit's
//! build in this job, by `ab`'s run and statistics ([`crate::run::ab::run_ab`]), and the paired
//! verdict decides each. The command layer checks the base out and builds it; this module says
//! which rows need it, at which levels both stages judge, and makes the results.
//!
//! **Alpha across the two stages.** A false regression needs the paired test to reject: every
//! regression the screen finds is confirmed, so no regression comes from the screen alone. The
//! paired stage measures fresh processes, independent of the screen's, so conditionally on the
//! rows the screen sent it, Holm over them at alpha (over every row of the sizes measured again:
//! a family at least as large as the confirmed rows, which is conservative) keeps the chance of
//! any false regression at most alpha on unchanged code, run-wide (per shard `alpha / N`, as
//! the screen). **Passes** are spent over both stages: a row exactly at the threshold can pass
//! at the screen or, if sent on, at the paired stage; under `--confirm doubtful` each stage reads
//! its passes at half the one-sided level (`(1 - confidence) / 4`: a 97.5 % interval for the
//! default 95 %), so by the union bound such a row passes in at most `(1 - confidence) / 2`, the
//! level `check` alone spends. Under `--confirm all` the screen decides nothing and the paired
//! stage spends the whole level.

use std::collections::{BTreeMap, BTreeSet};

use crate::measured::samples::TargetSize;
use crate::outcome::results::{
    ConfirmMode, ConfirmStatus, Confirmation, Confirmed, ErrorKind, Outcome, Results, Row, RowVerdict,
    RunConfirmation, RunError, Screen,
};
use crate::spec::{Spec, Target};

/// The pass level of each stage: the interval a pass is read from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Levels {
    /// The screen's `confidence` (its passes are final under `doubtful`).
    pub screen: f64,
    /// The paired stage's `confidence`.
    pub paired: f64,
}

impl Levels {
    /// The levels for a spec's `confidence` under `mode` (see the module's note).
    pub fn of(confidence: f64, mode: ConfirmMode) -> Self {
        match mode {
            ConfirmMode::Doubtful => {
                let half = 1.0 - (1.0 - confidence) / 2.0;
                Self {
                    screen: half,
                    paired: half,
                }
            }
            ConfirmMode::All => Self {
                screen: confidence,
                paired: confidence,
            },
        }
    }

    /// The results' account of how the two stages share alpha and the pass level.
    pub fn method(&self, alpha: f64, confidence: f64, mode: ConfirmMode) -> String {
        let pct = |c: f64| crate::foundation::units::percent(c, crate::foundation::units::Percent::Plain1);
        let passes = match mode {
            ConfirmMode::Doubtful => format!(
                "a pass against the stored baseline is final and read off a {} interval, a pass of the paired stage off a {} one: a row at the threshold passes in at most {} one-sided, as `check` alone",
                pct(self.screen),
                pct(self.paired),
                pct((1.0 - confidence) / 2.0)
            ),
            ConfirmMode::All => format!(
                "every row is decided by the paired stage (the stored baseline's verdict is context), its passes off a {} interval",
                pct(self.paired)
            ),
        };
        format!(
            "confirm {}: the rows sent on are measured again paired (ABBA) with the base commit's build in this job, paired t on log ratios, holm alpha={alpha} over the sizes measured again, spent over their looks; a regression needs the paired stage (at most alpha run-wide on unchanged code); {passes} (docs/confirm.md)",
            mode.as_str()
        )
    }
}

/// Whether `row` is confirmed under `mode`: a doubtful row (inconclusive, or a regression), or
/// under `all` every compared or new row.
pub fn wants(row: &Row, mode: ConfirmMode) -> bool {
    match mode {
        ConfirmMode::Doubtful => matches!(row.verdict(), RowVerdict::Inconclusive | RowVerdict::Regression),
        ConfirmMode::All => matches!(row.outcome, Outcome::Compared(..) | Outcome::New),
    }
}

/// The (target, size) pairs whose rows are confirmed: what the paired stage measures.
pub fn needed(rows: &[Row], mode: ConfirmMode) -> BTreeSet<TargetSize> {
    rows.iter()
        .filter(|r| wants(r, mode))
        .map(|r| TargetSize::new(&r.key.target, &r.key.size))
        .collect()
}

/// The targets of `targets` with only the sizes in `sizes`; a target with none is left out.
pub fn narrowed(targets: &[&Target], sizes: &BTreeSet<TargetSize>) -> Vec<Target> {
    targets
        .iter()
        .filter_map(|t| {
            let kept: Vec<_> = t
                .sizes
                .iter()
                .filter(|s| sizes.contains(&TargetSize::new(&t.name, s.key())))
                .cloned()
                .collect();
            (!kept.is_empty()).then(|| Target {
                sizes: kept,
                ..(*t).clone()
            })
        })
        .collect()
}

/// The paired stage's plan for a target of `repetitions` -> `max_repetitions` processes: its
/// first look takes as many processes as the screen's first look, `repetitions / 2` pairs (at
/// least 3, the fewest the paired t decides with: docs/statistics.md 2.7), then as many pairs
/// more per look, up to three quarters of `max_repetitions` pairs: a size confirmed costs at most
/// 1.5 times the screen's most processes, so `check --base` at most 2.5 times `check` alone on a
/// run whose rows all needed it. A clear change is confirmed for the GPU time the screen spent on
/// it; alpha is spent over these looks as always (2.6).
pub fn paired_plan(t: &mut Target) {
    let first = t.repetitions.div_ceil(2).max(3);
    t.max_repetitions = (t.max_repetitions * 3).div_ceil(4).max(first);
    t.repetitions = first;
}

/// `spec` as a stage judges it: its alpha (the shard's share) and the stage's pass level.
pub fn at_level(spec: &Spec, alpha: f64, confidence: f64) -> Spec {
    let mut s = spec.clone();
    s.settings.alpha = alpha;
    s.settings.confidence = confidence;
    s
}

/// What the paired stage ran and found, beside its results.
pub struct Paired<'a> {
    pub results: &'a Results,
    /// Pairs completed per (target, size).
    pub pairs: &'a BTreeMap<TargetSize, u32>,
    /// (target, size, kernel) whose machine code is identical in both builds.
    pub same_sass: &'a BTreeSet<(String, String, String)>,
    /// Processes of both sides.
    pub processes: u32,
}

/// The base commit and how the run confirms.
pub struct Base<'a> {
    /// Full SHA (empty for a `--base-dir` outside git).
    pub commit: &'a str,
    pub mode: ConfirmMode,
    /// [`Levels::method`].
    pub method: &'a str,
    /// Wall seconds of the build and the paired stage.
    pub seconds: f64,
}

/// The base as a reason names it: `base <first 12 characters>`, or `the --base-dir tree` (a
/// tree outside git).
fn short(commit: &str) -> String {
    if commit.is_empty() {
        "the --base-dir tree".to_owned()
    } else {
        format!("base {}", commit.chars().take(12).collect::<String>())
    }
}

/// The screen's results with every confirmed row replaced by its paired judgement (its outcome,
/// method, sides and reason; the screen's verdict and estimate kept as context), the paired
/// stage's failures added to the errors (a base that fails to run: `base-failed`, exit 3), and
/// the run's verdict decided again over the new rows.
pub fn apply(screen: Results, paired: &Paired<'_>, base: &Base<'_>) -> Results {
    let mut errors = screen.errors.clone();
    for e in &paired.results.errors {
        errors.push(paired_error(e, base.commit));
    }
    let mut confirmed = 0;
    let rows: Vec<Row> = screen
        .rows
        .iter()
        .map(|r| {
            if !wants(r, base.mode) {
                return r.clone();
            }
            let found = paired.results.rows.iter().find(|p| {
                p.key.target == r.key.target
                    && p.key.size == r.key.size
                    && p.key.kernel == r.key.kernel
                    && p.key.metric == r.key.metric
            });
            match found.filter(|p| matches!(p.outcome, Outcome::Compared(..))) {
                Some(p) => {
                    confirmed += 1;
                    confirmed_row(r, p, paired, base.commit)
                }
                None => not_confirmed(r, found, base.commit),
            }
        })
        .collect();
    let mut cost = screen.cost_seconds.clone();
    for (t, s) in &paired.results.cost_seconds {
        *cost.entry(t.clone()).or_default() += s;
    }
    let failed = !paired.results.errors.is_empty();
    let verdict = crate::outcome::decide::run_verdict(&rows, &errors, true);
    Results {
        verdict,
        confirmation: RunConfirmation {
            base_commit: base.commit.to_owned(),
            mode: base.mode,
            status: if failed {
                ConfirmStatus::DidNotRun
            } else {
                ConfirmStatus::Ran
            },
            rows: confirmed,
            processes: paired.processes,
            seconds: base.seconds,
            method: base.method.to_owned(),
            reason: if failed {
                format!(
                    "the paired runs against {} failed for some sizes; their rows keep the stored baseline's verdict (the run's errors say why)",
                    short(base.commit)
                )
            } else {
                format!(
                    "{confirmed} row(s) confirmed against {} in this job",
                    short(base.commit)
                )
            },
        },
        rows,
        errors,
        cost_seconds: cost,
        ..screen
    }
}

/// A failure of the paired stage as the run's error: the base tree's is `base-failed` (exit 3,
/// naming the commit); the head tree's keeps its own kind.
fn paired_error(e: &RunError, commit: &str) -> RunError {
    let base_side = e.message.starts_with("base tree:");
    RunError {
        target: e.target.clone(),
        size: e.size.clone(),
        kind: if base_side {
            ErrorKind::BaseFailed
        } else {
            e.kind.clone()
        },
        message: format!(
            "the confirmation against {} did not run: {}",
            short(commit),
            e.message
        ),
    }
}

/// A row confirmed: the paired row's outcome, method, sides and reason, the screen's kept as
/// context.
fn confirmed_row(screen: &Row, paired_row: &Row, paired: &Paired<'_>, commit: &str) -> Row {
    let id = TargetSize::new(&screen.key.target, &screen.key.size);
    let pairs = paired.pairs.get(&id).copied().unwrap_or(0);
    let same_sass = screen.key.kernel.as_ref().is_some_and(|k| {
        paired
            .same_sass
            .contains(&(id.target.clone(), id.size.clone(), k.to_string()))
    });
    let context = crate::foundation::units::percent(
        screen.estimate().change().unwrap_or(f64::NAN),
        crate::foundation::units::Percent::Signed2,
    );
    let interval = screen
        .estimate()
        .change_ci()
        .map_or_else(String::new, |[lo, hi]| {
            format!(
                " [{}, {}]",
                crate::foundation::units::percent(lo, crate::foundation::units::Percent::Signed2),
                crate::foundation::units::percent(hi, crate::foundation::units::Percent::Signed2)
            )
        });
    let screen_said = if screen.estimate().change().is_some() {
        format!("{} {context}{interval}", screen.verdict().as_str())
    } else {
        screen.verdict().as_str().to_owned()
    };
    let sass = if same_sass {
        "; the kernel's machine code (SASS) is identical in both builds, so the pairs measure this job's own noise (evidence, not a verdict)"
    } else {
        ""
    };
    let mut row = paired_row.clone();
    row.key.gpu.clone_from(&screen.key.gpu);
    row.history.clone_from(&screen.history);
    row.why.clone_from(&screen.why);
    row.reason = format!(
        "confirmed against {} in this job ({pairs} pair(s), ABBA){sass}: {}; against the stored baseline it was {screen_said} (context, not the decision)",
        short(commit),
        paired_row.reason
    );
    row.confirmation = Confirmation::Confirmed(Confirmed {
        base_commit: commit.to_owned(),
        pairs,
        screen: Screen {
            verdict: screen.verdict(),
            change: screen.estimate().change(),
            interval: screen.estimate().change_ci(),
            confidence: screen.estimate().confidence,
        },
        same_sass,
    });
    row
}

/// A row that needed the confirmation and got no paired verdict: it keeps the screen's (never a
/// pass it did not earn), and says why.
fn not_confirmed(screen: &Row, paired_row: Option<&Row>, commit: &str) -> Row {
    let why = match paired_row.map(Row::verdict) {
        Some(RowVerdict::New) => {
            "the base commit's build does not launch this kernel (it is new in this tree)"
        }
        Some(RowVerdict::Missing) => "this tree no longer launches the kernel the base commit's build does",
        Some(_) => "the paired runs of its size failed (the run's errors say why)",
        None => {
            "the paired runs gave no such row (its size failed, or the base commit's spec lacks the metric)"
        }
    };
    let mut row = screen.clone();
    row.reason = format!(
        "not confirmed against {}: {why}; the stored baseline's verdict stands: {}",
        short(commit),
        screen.reason
    );
    row.confirmation = Confirmation::NotRun {
        base_commit: commit.to_owned(),
    };
    row
}

/// The screen's results when nothing was doubtful: no worktree, no build, no base process.
pub fn not_needed(screen: Results, base: &Base<'_>) -> Results {
    Results {
        confirmation: RunConfirmation {
            base_commit: base.commit.to_owned(),
            mode: base.mode,
            status: ConfirmStatus::NotNeeded,
            rows: 0,
            processes: 0,
            seconds: 0.0,
            method: base.method.to_owned(),
            reason: format!(
                "no row needed confirming against {}: nothing was built or run for it",
                short(base.commit)
            ),
        },
        ..screen
    }
}

/// The screen's results when the confirmation could not run (the base did not check out, build
/// or start): every row that needed it keeps the screen's verdict and says so, and the run has
/// an error naming the build and the commit (`base-failed`, exit 3).
pub fn not_run(screen: Results, base: &Base<'_>, why: &str) -> Results {
    let message = format!(
        "the confirmation against {} did not run: {}",
        if base.commit.is_empty() {
            "the --base-dir tree".to_owned()
        } else {
            format!("base {}", base.commit)
        },
        crate::foundation::sanitize::line(why)
    );
    let rows: Vec<Row> = screen
        .rows
        .iter()
        .map(|r| {
            if !wants(r, base.mode) {
                return r.clone();
            }
            let mut row = r.clone();
            row.reason = format!(
                "not confirmed: {message}; the stored baseline's verdict stands: {}",
                r.reason
            );
            row.confirmation = Confirmation::NotRun {
                base_commit: base.commit.to_owned(),
            };
            row
        })
        .collect();
    let mut errors = screen.errors.clone();
    errors.push(RunError {
        target: "(base)".to_owned(),
        size: None,
        kind: ErrorKind::BaseFailed,
        message: message.clone(),
    });
    let verdict = crate::outcome::decide::run_verdict(&rows, &errors, true);
    Results {
        verdict,
        confirmation: RunConfirmation {
            base_commit: base.commit.to_owned(),
            mode: base.mode,
            status: ConfirmStatus::DidNotRun,
            rows: 0,
            processes: 0,
            seconds: base.seconds,
            method: base.method.to_owned(),
            reason: message,
        },
        rows,
        errors,
        ..screen
    }
}

/// Pairs completed per (target, size): repetitions that ran on both sides, from the order the
/// paired stage ran them in.
pub fn pairs_of(order: &[crate::run::ab::OrderEntry]) -> BTreeMap<TargetSize, u32> {
    let mut sides: BTreeMap<(TargetSize, u32), (bool, bool)> = BTreeMap::new();
    for o in order {
        let e = sides
            .entry((TargetSize::new(&o.target, &o.size), o.rep))
            .or_default();
        match o.side {
            crate::run::ab::Side::Base => e.0 = true,
            crate::run::ab::Side::Head => e.1 = true,
        }
    }
    let mut out: BTreeMap<TargetSize, u32> = BTreeMap::new();
    for ((id, _), (b, h)) in sides {
        if b && h {
            *out.entry(id).or_default() += 1;
        }
    }
    out
}

/// The (target, size, kernel) of `rows` whose machine code (SASS, docs/sass-cache.md) hashes the
/// same in the head tree and the base tree (both read with cuobjdump; the same salt, so only the
/// code decides). A kernel whose SASS cannot be read in either is left out: nothing is said.
pub fn same_machine_code(
    rows: &[Row],
    head: (&Spec, &[&Target]),
    base: (&Spec, &[&Target]),
) -> BTreeSet<(String, String, String)> {
    let mut out = BTreeSet::new();
    let mut functions: BTreeMap<(String, bool), Option<BTreeMap<String, String>>> = BTreeMap::new();
    for r in rows {
        let Some(kernel) = r.key.kernel.as_ref().map(ToString::to_string) else {
            continue;
        };
        let (Some(ht), Some(bt)) = (
            head.1.iter().find(|t| t.name == r.key.target).copied(),
            base.1.iter().find(|t| t.name == r.key.target).copied(),
        ) else {
            continue;
        };
        let Some(size) = ht.sizes.iter().find(|s| s.key() == r.key.size) else {
            continue;
        };
        let mut read = |t: &Target, dir: &std::path::Path, is_base: bool| {
            functions
                .entry((t.name.clone(), is_base))
                .or_insert_with(|| crate::profile::sass::functions_of(t, dir).ok())
                .clone()
        };
        let (Some(hf), Some(bf)) = (
            read(ht, &head.0.base_dir(), false),
            read(bt, &base.0.base_dir(), true),
        ) else {
            continue;
        };
        let salt = crate::profile::sass::salt(ht, size, "");
        let h = crate::profile::sass::kernel_hash(&hf, &kernel, &salt);
        if h.is_some() && h == crate::profile::sass::kernel_hash(&bf, &kernel, &salt) {
            out.insert((r.key.target.clone(), r.key.size.clone(), kernel));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_paired_stage_starts_with_the_screens_first_look_in_processes() {
        let plan = |r: u32, m: u32| {
            let text = format!(
                "version: 1\ntargets:\n  - name: t\n    command: [./t]\n    repetitions: {r}\n    max_repetitions: {m}\n    metrics:\n      gpu__time_duration.sum: \"3%\"\n"
            );
            let spec = crate::spec::load_str(&text, std::path::Path::new("cgp-gate.yaml")).unwrap();
            let mut t = spec.targets[0].clone();
            paired_plan(&mut t);
            (t.repetitions, t.max_repetitions)
        };
        assert_eq!(plan(10, 20), (5, 15));
        assert_eq!(plan(3, 6), (3, 5));
        assert_eq!(plan(1, 3), (3, 3));
        assert_eq!(plan(2, 2), (3, 3));
        // 10 -> 20 processes: looks at 5, 10 and 15 pairs, at most 30 processes.
        assert_eq!(crate::stats::remeasure::looks(5, 15), 3);
    }
}
