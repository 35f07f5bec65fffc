//! Judging the rows both trees measured (paired t on per-repetition medians, constant rows exactly,
//! limit rows as in `check`), and the rows only one tree measured (`new`, `missing`).

use crate::measured::samples::TargetSize;
use std::collections::{BTreeMap, BTreeSet};

use super::pairs::Both;
use crate::measured::samples::{Series, SeriesKey};
use crate::outcome::results::{
    Decision, ErrorKind, FailureKind, Outcome, OwnedRowKey, Row, RowRule, RowVerdict, RunError,
};
use crate::spec::{MetricSpec, Target, ThresholdKind};
use crate::stats::paired::{PairedJudgement, PairedRow, judge_constant, judge_paired_at};
use crate::stats::spending::LookAt;
use crate::stats::verdict::{ExactOutcome, counted_exactly};
use crate::stats::{Comparison, Config, deciding_launch, judge_all_at, summarize};

#[expect(clippy::float_cmp, reason = "deterministic counters repeat bit for bit")]
pub(super) fn constant(v: &[f64]) -> bool {
    v.first().is_some_and(|f| v.iter().all(|x| x == f))
}

/// Everything about one judged row before the decision.
pub(super) struct Pending<'a> {
    key: SeriesKey,
    ms: &'a MetricSpec,
    unit: String,
    base_raw: Vec<f64>,
    head_raw: Vec<f64>,
    head_reps: Vec<u32>,
    base_pairs: Vec<f64>,
    head_pairs: Vec<f64>,
    /// Each pair's processes' mean launches with nothing left out (`nested::RunMeans`).
    base_all: Vec<f64>,
    head_all: Vec<f64>,
    /// The far launches the per-pair values left out (or kept as the code's).
    left_out: crate::stats::screen::LeftOut,
    /// The target's plan: pairs at the first look, the most pairs (`repetitions`,
    /// `max_repetitions`).
    plan: (u32, u32),
}

impl Pending<'_> {
    /// Where the row stands in its plan (its look), for alpha spending.
    fn look(&self) -> LookAt {
        LookAt {
            repetitions: self.plan.0,
            max_repetitions: self.plan.1,
            done: u32::try_from(self.base_pairs.len()).unwrap_or(u32::MAX),
        }
    }
}

/// Judge every row measured so far. Also returns the spec mistakes that only the measurement
/// revealed (a `min_effect` in another unit than the metric's), as invalid-input errors.
pub(super) fn judge(
    targets: &[&Target],
    both: &Both,
    cfg: &Config,
    rounds: &BTreeMap<TargetSize, u32>,
) -> (Vec<Row>, Vec<RunError>) {
    let Sorted {
        pending,
        only,
        seen,
        mut spec_errors,
    } = sort_keys(targets, both);
    let mut rows = judge_pending(&pending, cfg, rounds, &mut spec_errors);
    rows.extend(only);
    rows.extend(unreported_rows(targets, both, &seen));
    crate::run::engine::sort_rows(&mut rows);
    (rows, spec_errors)
}

/// The measured series sorted by what they need: rows both trees measured (to be judged), rows
/// only one tree measured (`new`, `missing`) or that cannot be compared (`error`), and the
/// (target, size, metric) triples seen.
pub(super) struct Sorted<'a> {
    pending: Vec<Pending<'a>>,
    only: Vec<Row>,
    seen: BTreeSet<(TargetSize, String)>,
    spec_errors: Vec<RunError>,
}

pub(super) fn sort_keys<'a>(targets: &[&'a Target], both: &Both) -> Sorted<'a> {
    let mut spec_errors: Vec<RunError> = Vec::new();
    let mut pending: Vec<Pending<'a>> = Vec::new();
    let mut only: Vec<Row> = Vec::new();
    let mut seen: BTreeSet<(TargetSize, String)> = BTreeSet::new();
    let keys: BTreeSet<&SeriesKey> = both.head.series.keys().chain(both.base.series.keys()).collect();
    for key in keys {
        if both.failed.contains(&TargetSize::new(&key.target, &key.size)) {
            continue;
        }
        let Some(t) = targets.iter().find(|t| t.name == key.target) else {
            continue;
        };
        let Some(ms) = t.metrics.iter().find(|m| m.name == key.metric) else {
            continue;
        };
        seen.insert((TargetSize::new(&key.target, &key.size), key.metric.clone()));
        let (b, h) = (both.base.series.get(key), both.head.series.get(key));
        let unit = h.or(b).map(|s| s.unit.clone()).unwrap_or_default();
        match (b, h) {
            (Some(b), Some(h)) if b.unit != h.unit => {
                let (error, row) = units_differ(key, ms, &unit, b, h);
                spec_errors.push(error);
                only.push(row);
            }
            (Some(b), Some(h)) => pending.push(pending_row(key, ms, unit, b, h, t)),
            (None, Some(h)) => {
                let mut row = bare_row(
                    key,
                    ms,
                    &unit,
                    RowVerdict::New,
                    "measured in the head tree only: the base tree did not launch this kernel",
                );
                row.sides.candidate = Some(summarize(&h.values()));
                row.candidate_reps = h.reps();
                only.push(row);
            }
            (Some(b), None) => {
                let mut row = bare_row(
                    key,
                    ms,
                    &unit,
                    RowVerdict::Missing,
                    "measured in the base tree only: the head tree no longer launches this kernel",
                );
                row.sides.baseline = Some(summarize(&b.values()));
                only.push(row);
            }
            (None, None) => {}
        }
    }

    Sorted {
        pending,
        only,
        seen,
        spec_errors,
    }
}

/// Samples are compared as numbers: never across units (a recording of one tree edited or made
/// with other `--print-units`). The row is an error and the run exits 2 (a damaged recording),
/// naming the metric, the kernel and both units: the run's error and the row.
fn units_differ(key: &SeriesKey, ms: &MetricSpec, unit: &str, b: &Series, h: &Series) -> (RunError, Row) {
    let reason = format!(
        "the base tree's samples are in `{}` but the head tree's are in `{}`; they cannot be compared",
        b.unit, h.unit
    );
    let error = RunError {
        target: key.target.clone(),
        size: Some(key.size.clone()),
        kind: ErrorKind::Profiler(FailureKind::BadRecording),
        message: format!(
            "metric `{}` of kernel `{}`: {reason}; units are never converted: profile both trees with the same ncu options (a recording: record it again)",
            key.metric, key.kernel
        ),
    };
    (error, bare_row(key, ms, unit, RowVerdict::Error, &reason))
}

/// A row both trees measured, before its judgement: each side's run means (toward the better
/// direction), paired by repetition.
fn pending_row<'a>(
    key: &SeriesKey,
    ms: &'a MetricSpec,
    unit: String,
    b: &Series,
    h: &Series,
    t: &Target,
) -> Pending<'a> {
    let (bv, br, hv, hr) = (b.values(), b.reps(), h.values(), h.reps());
    let means = crate::stats::nested::run_means_toward(
        crate::stats::nested::Runs {
            values: &bv,
            runs: &br,
        },
        crate::stats::nested::Runs {
            values: &hv,
            runs: &hr,
        },
        ms.threshold.direction == crate::spec::Direction::Lower,
    );
    let (bm, hm) = (&means.base, &means.head);
    let reps: Vec<u32> = hm.keys().filter(|r| bm.contains_key(r)).copied().collect();
    Pending {
        key: key.clone(),
        ms,
        unit,
        base_raw: b.values(),
        head_raw: h.values(),
        head_reps: h.reps(),
        base_pairs: reps.iter().map(|r| bm[r]).collect(),
        head_pairs: reps.iter().map(|r| hm[r]).collect(),
        base_all: reps.iter().map(|r| means.base_all[r]).collect(),
        head_all: reps.iter().map(|r| means.head_all[r]).collect(),
        left_out: means.left_out.clone(),
        plan: (t.repetitions, t.max_repetitions),
    }
}

/// Judge the rows both trees measured: paired rows by the paired test on their pairs, constant
/// rows exactly, limit rows as in `check`.
pub(super) fn judge_pending(
    pending: &[Pending<'_>],
    cfg: &Config,
    rounds: &BTreeMap<TargetSize, u32>,
    spec_errors: &mut Vec<RunError>,
) -> Vec<Row> {
    // Families: paired rows and limit rows share alpha by their counts (Bonferroni between the
    // two, Holm within each), so the whole run keeps its false-alarm rate at alpha.
    let n_limit = pending.iter().filter(|p| is_limit(p)).count();
    let n_paired = pending
        .iter()
        .filter(|p| !is_limit(p) && !read_exactly(p))
        .count();
    let total = (n_limit + n_paired).max(1) as f64;
    let alpha_paired = cfg.alpha * n_paired as f64 / total;
    let limit_cfg = Config {
        alpha: cfg.alpha * n_limit as f64 / total,
        ..cfg.clone()
    };
    let mut paired = judge_paired_family(pending, alpha_paired, cfg.confidence).into_iter();
    let mut limits = judge_limit_family(pending, &limit_cfg).into_iter();

    let mut rows: Vec<Row> = Vec::new();
    for p in pending {
        let mut bound = None;
        let j: PairedJudgement = if is_limit(p) {
            let Some(l) = limits.next() else { continue };
            // Judged as `check` judges a limit: its row shows the same median interval and
            // limit (`check/judge.rs`).
            bound = l.bound;
            PairedJudgement {
                ruling: l.ruling,
                pairs: p.base_pairs.len(),
            }
        } else if let Some(e) = counted(p) {
            PairedJudgement {
                ruling: crate::stats::Ruling::exact(e, &p.ms.threshold, 1.0),
                pairs: p.base_pairs.len(),
            }
        } else if read_exactly(p) {
            judge_constant_base(p)
        } else {
            let Some((j, t)) = paired.next() else {
                continue;
            };
            bound = Some(crate::stats::Bound::Tolerance {
                tolerance: t,
                limit: None,
            });
            j
        };
        rows.push(judged_row(p, j, bound, rounds, spec_errors));
    }
    rows
}

/// `exact` against a constant base compares every head launch (issue 34), as `check` does.
fn constant_base(p: &Pending<'_>) -> bool {
    !is_limit(p)
        && constant(&p.base_raw)
        && (constant(&p.head_raw) || (p.ms.threshold.kind == ThresholdKind::Exact && !p.head_raw.is_empty()))
}

/// Counted work that jitters by less than a tenth of its threshold is read exactly, outside
/// the paired family, as in `check` (`stats::verdict::counted_exactly`, issue 57).
fn counted(p: &Pending<'_>) -> Option<ExactOutcome> {
    if is_limit(p) || constant_base(p) {
        return None;
    }
    counted_exactly(&series_key(&p.key), &p.base_raw, &p.head_raw, &p.ms.threshold)
}

/// A row judged exactly, outside the paired family: a constant base, or counted work.
fn read_exactly(p: &Pending<'_>) -> bool {
    constant_base(p) || counted(p).is_some()
}

/// A row of a constant base, judged exactly: the head launch that decides against the base's
/// value, and, when the head's launches differ, how many differ from the base's.
fn judge_constant_base(p: &Pending<'_>) -> PairedJudgement {
    let b = p.base_raw[0];
    let head = deciding_launch(b, &p.head_raw, p.ms.threshold.direction);
    let mut j = judge_constant(b, head, &p.ms.threshold, p.base_pairs.len());
    if !constant(&p.head_raw) {
        let differ = p.head_raw.iter().filter(|x| x.total_cmp(&b).is_ne()).count();
        j.ruling.reason = format!(
            "{} (exact: every launch compared, {differ} of {} differ from the base's)",
            j.ruling.reason,
            p.head_raw.len()
        );
    }
    j
}

/// The paired family (rows neither limits nor read exactly) judged by the paired test at its
/// share of alpha, each with the tolerance its row used, in the order of `pending`.
fn judge_paired_family(pending: &[Pending<'_>], alpha: f64, confidence: f64) -> Vec<(PairedJudgement, f64)> {
    let paired_pending: Vec<&Pending<'_>> = pending
        .iter()
        .filter(|p| !is_limit(p) && !read_exactly(p))
        .collect();
    let paired_rows: Vec<PairedRow<'_>> = paired_pending.iter().map(|p| paired_row(p)).collect();
    let paired_looks: Vec<LookAt> = paired_pending.iter().map(|p| p.look()).collect();
    let tolerances: Vec<f64> = paired_rows.iter().map(PairedRow::effective_tolerance).collect();
    judge_paired_at(
        &paired_rows,
        alpha.max(f64::MIN_POSITIVE),
        confidence,
        &paired_looks,
    )
    .into_iter()
    .zip(tolerances)
    .collect()
}

/// The limit family judged as `check` judges limits, at its share of alpha (in `cfg`), in the
/// order of `pending`.
fn judge_limit_family(pending: &[Pending<'_>], cfg: &Config) -> Vec<crate::stats::Judgement> {
    let limit_cmp: Vec<Comparison<'_>> = pending
        .iter()
        .filter(|p| is_limit(p))
        .map(limit_comparison)
        .collect();
    let limit_looks: Vec<LookAt> = pending
        .iter()
        .filter(|p| is_limit(p))
        .map(Pending::look)
        .collect();
    judge_all_at(&limit_cmp, cfg, &limit_looks)
}

/// A row with a minimum or a maximum: judged against the limit, as in `check`.
fn is_limit(p: &Pending<'_>) -> bool {
    match p.ms.threshold.kind {
        ThresholdKind::Min { .. } | ThresholdKind::Max { .. } => true,
        ThresholdKind::Relative { .. } | ThresholdKind::Exact => false,
    }
}

/// What the paired test needs of a row: its pairs, its threshold and `min_effect` (tested
/// jointly by the statistics, as in `check`).
fn paired_row<'a>(p: &'a Pending<'_>) -> PairedRow<'a> {
    let t = &p.ms.threshold;
    let fraction = match t.kind {
        ThresholdKind::Relative { fraction } => fraction,
        ThresholdKind::Exact | ThresholdKind::Min { .. } | ThresholdKind::Max { .. } => 0.0,
    };
    let threshold_text = format!(
        "{}% threshold",
        crate::foundation::units::format_number(fraction * 100.0)
    );
    let tolerance_text = match &t.min_effect {
        Some(q) if q.value > 0.0 => format!("{threshold_text} and min effect {q}"),
        _ => threshold_text,
    };
    PairedRow {
        base: &p.base_pairs,
        head: &p.head_pairs,
        tolerance: fraction,
        min_effect: t.min_effect.as_ref().map_or(0.0, |q| q.value),
        tolerance_text,
        lower_is_better: t.direction == crate::spec::Direction::Lower,
        exact_kind: t.kind == ThresholdKind::Exact,
        left_out: p.left_out.clone(),
        all_in: Some((&p.base_all, &p.head_all)),
    }
}

/// The key `stats` reads a row's metric from (`target/size/kernel/metric`), as `check` gives it.
fn series_key(k: &SeriesKey) -> String {
    format!("{}/{}/{}/{}", k.target, k.size, k.kernel, k.metric)
}

/// A limit row as `check` judges it: every sample of both sides against the limit.
fn limit_comparison<'a>(p: &'a Pending<'_>) -> Comparison<'a> {
    Comparison {
        key: series_key(&p.key),
        baseline: Some(&p.base_raw),
        candidate: &p.head_raw,
        threshold: &p.ms.threshold,
        history: &[],
        baseline_runs: &[],
        candidate_runs: &[],
    }
}

/// The results row of a judged row: both sides' summaries, how often it was re-measured, the
/// judgement, and the tolerance (paired rows) or limit (limit rows) the reports show.
fn judged_row(
    p: &Pending<'_>,
    j: PairedJudgement,
    bound: Option<crate::stats::Bound>,
    rounds: &BTreeMap<TargetSize, u32>,
    spec_errors: &mut Vec<RunError>,
) -> Row {
    let mut row = bare_row(&p.key, p.ms, &p.unit, RowVerdict::Error, "");
    row.sides.baseline = Some(summarize(&p.base_raw));
    row.sides.candidate = Some(summarize(&p.head_raw));
    row.candidate_reps.clone_from(&p.head_reps);
    row.remeasured = rounds
        .get(&TargetSize::new(&p.key.target, &p.key.size))
        .copied()
        .unwrap_or(0);
    if let Some(t) = row.rule.threshold.as_mut() {
        t.bound = bound;
    }
    row.decide(Decision::from(&j.ruling));
    crate::run::engine::min_effect_unit(&mut row, p.ms, spec_errors);
    row
}

/// Every spec metric of every measured size must have been judged: one no kernel reported in
/// either tree is an error row.
pub(super) fn unreported_rows(
    targets: &[&Target],
    both: &Both,
    seen: &BTreeSet<(TargetSize, String)>,
) -> Vec<Row> {
    let mut rows = Vec::new();
    for id in both.pairs.keys().filter(|id| !both.failed.contains(*id)) {
        let TargetSize { target, size } = id;
        let Some(t) = targets.iter().find(|t| &t.name == target) else {
            continue;
        };
        for ms in &t.metrics {
            if !seen.contains(&(id.clone(), ms.name.clone())) {
                // A row of no kernel: none reported the metric.
                rows.push(Row {
                    rule: RowRule::of(&ms.threshold),
                    ..Row::bare(
                        OwnedRowKey {
                            target: target.clone(),
                            size: size.clone(),
                            metric: ms.name.clone(),
                            ..OwnedRowKey::default()
                        },
                        "",
                        Outcome::Error,
                        "no profiled kernel reported this metric in either tree",
                    )
                });
            }
        }
    }
    rows
}

pub(super) fn bare_row(
    key: &SeriesKey,
    ms: &MetricSpec,
    unit: &str,
    verdict: RowVerdict,
    reason: &str,
) -> Row {
    Row {
        rule: RowRule::of(&ms.threshold),
        ..Row::bare(OwnedRowKey::from(key), unit, Outcome::from(verdict), reason)
    }
}
