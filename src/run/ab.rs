//! `ab`: base and head measured in alternation on one GPU and judged pair by pair.
//!
//! For every target x size, pair `i` is repetition `i` of the base tree and repetition `i` of the
//! head tree, run back to back in ABBA order (pair 0 base first, pair 1 head first, ...), so slow
//! drift and clock state hit both sides alike. Each row's pairs are the per-repetition medians of
//! each side (after each run's warm-up launches); `stats::paired` judges their log ratios against
//! the row's threshold (paired t). Doubtful rows get more pairs up to `max_repetitions`, as in
//! `check`; a decided row stops. No stored baseline is involved.
//!
//! Recording layout: `DIR/base/<target>/<size>/<rep>.csv` and `DIR/head/...` (each side a normal
//! recording with its own optional `manifest.json`), and `DIR/manifest.json` ([`AbManifest`]) with
//! the order in which the runs happened.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::foundation::error::Error;
use crate::gpu::Gpu;
use crate::measured::samples::{SampleSet, SeriesKey};
use crate::outcome::results::{
    ErrorKind, FailOn, FailureKind, Results, Row, RowThreshold, RowVerdict, RunError,
};
use crate::plan::Work;
use crate::profile::record::Recorder;
use crate::profile::{Job, Profiler};
use crate::run::engine::{add_derived, fingerprint_for};
use crate::run::measure::{Watch, measure};
use crate::run::progress::Progress;
use crate::spec::{MetricSpec, Spec, Target, ThresholdKind};
use crate::stats::paired::{PairedJudgement, PairedRow, judge_constant, judge_paired};
use crate::stats::{Comparison, Config, judge_all, median, summarize};

/// Version of the A/B manifest.
pub const AB_MANIFEST_VERSION: u32 = 1;

/// Which tree a run measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    Base,
    Head,
}

impl Side {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Base => "base",
            Self::Head => "head",
        }
    }
}

/// One run, in the order they happened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OrderEntry {
    pub side: Side,
    pub target: String,
    pub size: String,
    pub rep: u32,
}

/// `DIR/manifest.json` of an A/B recording (optional when replaying).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AbManifest {
    pub schema_version: u32,
    /// True when the data was not measured on a GPU.
    #[serde(default)]
    pub synthetic: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_commit: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head_commit: Option<String>,
    /// Every run in the order it happened.
    #[serde(default)]
    pub order: Vec<OrderEntry>,
}

impl AbManifest {
    /// Read `DIR/manifest.json`; `Ok(None)` when there is none.
    ///
    /// # Errors
    /// Invalid JSON (with its position) or a newer schema version.
    pub fn read(dir: &Path) -> Result<Option<Self>, Error> {
        let path = dir.join("manifest.json");
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io("read", path, e)),
        };
        let m: Self = serde_json::from_str(&text).map_err(|e| {
            Error::input(
                &path,
                format!(
                    "invalid A/B manifest at line {} column {}: {e}",
                    e.line(),
                    e.column()
                ),
            )
        })?;
        if m.schema_version > AB_MANIFEST_VERSION {
            return Err(Error::input(
                &path,
                format!(
                    "A/B manifest schema {} is newer than this cgp-gate reads ({AB_MANIFEST_VERSION}): upgrade cgp-gate",
                    m.schema_version
                ),
            ));
        }
        Ok(Some(m))
    }

    /// Write it atomically.
    ///
    /// # Errors
    /// When the file cannot be written.
    pub fn write(&self, dir: &Path) -> Result<(), Error> {
        let text = serde_json::to_string_pretty(self).map_err(|e| Error::Usage(e.to_string()))?;
        crate::foundation::fsutil::write_atomic(&dir.join("manifest.json"), text.as_bytes())
    }
}

/// The two trees: a profiler and the targets as resolved in each (commands and relative paths
/// resolve in the tree's own directory).
pub struct Sides<'a> {
    pub base: &'a mut dyn Profiler,
    pub head: &'a mut dyn Profiler,
    pub base_targets: &'a [&'a Target],
    pub head_targets: &'a [&'a Target],
}

/// Options of one A/B run.
pub struct AbOptions<'a> {
    pub fail_on: FailOn,
    /// `--allow-missing`: rows the base tree measured and the head tree did not (a kernel that
    /// disappeared or was renamed) do not fail the gate, as in `check`.
    pub allow_missing: bool,
    /// NVML, when a driver is there (live runs only).
    pub gpu: Option<&'a dyn Gpu>,
    /// The manifest of a replayed recording (its `synthetic` flag reaches the results).
    pub manifest: Option<&'a AbManifest>,
}

/// What an A/B run produced: the results and the order the runs happened in.
pub struct AbRun {
    pub results: Results,
    pub order: Vec<OrderEntry>,
}

/// One target x size of both trees.
struct Item<'a> {
    base: &'a Target,
    head: &'a Target,
    size: usize,
}

impl Item<'_> {
    fn id(&self) -> (String, String) {
        (self.head.name.clone(), self.head.sizes[self.size].key())
    }
}

/// Samples of both sides so far.
#[derive(Default)]
struct Both {
    base: SampleSet,
    head: SampleSet,
    errors: Vec<RunError>,
    cost: BTreeMap<String, f64>,
    /// Pairs completed per (target, size).
    pairs: BTreeMap<(String, String), u32>,
    failed: BTreeSet<(String, String)>,
    stop: bool,
    order: Vec<OrderEntry>,
}

/// The progress of one side's run inside a pair: its runs were planned up front by
/// [`measure_pairs`] (two per pair), so `measure`'s own plan of one run is not added again.
struct PairedProgress<'a> {
    inner: &'a mut dyn Progress,
}

impl Progress for PairedProgress<'_> {
    fn add_runs(&mut self, _: &str, _: &str, _: u32) {}
    fn run_started(&mut self, target: &str, size: &str, rep: u32) {
        self.inner.run_started(target, size, rep);
    }
    fn run_finished(&mut self, target: &str, size: &str, rep: u32, wall: std::time::Duration) {
        self.inner.run_finished(target, size, rep, wall);
    }
    fn run_failed(&mut self, target: &str, size: &str, rep: u32, wall: std::time::Duration) {
        self.inner.run_failed(target, size, rep, wall);
    }
    fn run_skipped(&mut self, target: &str, size: &str) {
        self.inner.run_skipped(target, size);
    }
    fn note(&mut self, text: &str) {
        self.inner.note(text);
    }
    fn finish(&mut self) {}
    fn side(&mut self, side: &str) {
        self.inner.side(side);
    }
}

/// Run pairs `from..to` of every item, ABBA within each item, pair-major across items. Every
/// pair is two runs on the progress bar, planned before the first starts; a pair that does not
/// happen (a failed size, a recording without it) gives its runs up.
fn measure_pairs(
    sides: &mut Sides<'_>,
    items: &[(&Item<'_>, u32, u32)],
    recorders: &mut Option<(&mut Recorder, &mut Recorder)>,
    mut watch: Option<&mut Watch<'_>>,
    only_available: bool,
    both: &mut Both,
    progress: &mut dyn Progress,
) -> Result<(), Error> {
    for (item, from, to) in items {
        let (target, size) = item.id();
        progress.add_runs(&target, &size, 2 * to.saturating_sub(*from));
    }
    let lo = items.iter().map(|i| i.1).min().unwrap_or(0);
    let hi = items.iter().map(|i| i.2).max().unwrap_or(0);
    for rep in lo..hi {
        for (item, from, to) in items {
            if !(*from..*to).contains(&rep) {
                continue;
            }
            let id = item.id();
            let job = |t| Job {
                target: t,
                size: &t.sizes[item.size],
                rep,
            };
            if both.stop
                || both.failed.contains(&id)
                || (only_available && !(sides.base.has(job(item.base)) && sides.head.has(job(item.head))))
            {
                progress.run_skipped(&id.0, &id.1);
                progress.run_skipped(&id.0, &id.1);
                continue;
            }
            let order = if rep % 2 == 0 {
                [Side::Base, Side::Head]
            } else {
                [Side::Head, Side::Base]
            };
            let mut ok = true;
            for side in order {
                if !ok {
                    // The other side failed: this side's run of the pair will not happen.
                    progress.run_skipped(&id.0, &id.1);
                    continue;
                }
                let (profiler, target, rec): (&mut dyn Profiler, &Target, Option<&mut Recorder>) = match side
                {
                    Side::Base => (&mut *sides.base, item.base, recorders.as_mut().map(|r| &mut *r.0)),
                    Side::Head => (&mut *sides.head, item.head, recorders.as_mut().map(|r| &mut *r.1)),
                };
                let work = [Work {
                    target,
                    size: &target.sizes[item.size],
                    reps: (rep, rep + 1),
                }];
                progress.side(side.as_str());
                let m = measure(
                    profiler,
                    &work,
                    rec,
                    watch.as_deref_mut(),
                    false,
                    &mut PairedProgress {
                        inner: &mut *progress,
                    },
                )?;
                both.order.push(OrderEntry {
                    side,
                    target: id.0.clone(),
                    size: id.1.clone(),
                    rep,
                });
                for (k, v) in m.cost_seconds {
                    *both.cost.entry(k).or_default() += v;
                }
                match side {
                    Side::Base => both.base.extend(m.samples),
                    Side::Head => both.head.extend(m.samples),
                }
                if !m.errors.is_empty() {
                    ok = false;
                    for mut e in m.errors {
                        if matches!(
                            e.kind,
                            ErrorKind::Profiler(FailureKind::NcuNotFound | FailureKind::Permission)
                        ) {
                            both.stop = true;
                        }
                        e.message = format!("{} tree: {}", side.as_str(), e.message);
                        both.errors.push(e);
                    }
                    both.failed.insert(id.clone());
                }
            }
            if ok {
                *both.pairs.entry(id).or_default() += 1;
            }
        }
    }
    progress.side("");
    Ok(())
}

/// Per-repetition medians of a series: rep -> median of that repetition's launches.
fn per_rep(set: &SampleSet, key: &SeriesKey) -> BTreeMap<u32, f64> {
    let mut by: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
    if let Some(s) = set.series.get(key) {
        for (v, r) in s.values.iter().zip(&s.reps) {
            by.entry(*r).or_default().push(*v);
        }
    }
    by.into_iter()
        .filter_map(|(r, v)| median(&v).map(|m| (r, m)))
        .collect()
}

#[expect(clippy::float_cmp, reason = "deterministic counters repeat bit for bit")]
fn constant(v: &[f64]) -> bool {
    v.first().is_some_and(|f| v.iter().all(|x| x == f))
}

/// Everything about one judged row before the decision.
struct Pending<'a> {
    key: SeriesKey,
    ms: &'a MetricSpec,
    unit: String,
    base_raw: Vec<f64>,
    head_raw: Vec<f64>,
    head_reps: Vec<u32>,
    base_pairs: Vec<f64>,
    head_pairs: Vec<f64>,
}

/// Judge every row measured so far. Also returns the spec mistakes that only the measurement
/// revealed (a `min_effect` in another unit than the metric's), as invalid-input errors.
fn judge(
    targets: &[&Target],
    both: &Both,
    cfg: &Config,
    rounds: &BTreeMap<(String, String), u32>,
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
struct Sorted<'a> {
    pending: Vec<Pending<'a>>,
    only: Vec<Row>,
    seen: BTreeSet<(String, String, String)>,
    spec_errors: Vec<RunError>,
}

fn sort_keys<'a>(targets: &[&'a Target], both: &Both) -> Sorted<'a> {
    let mut spec_errors: Vec<RunError> = Vec::new();
    let mut pending: Vec<Pending<'a>> = Vec::new();
    let mut only: Vec<Row> = Vec::new();
    let mut seen: BTreeSet<(String, String, String)> = BTreeSet::new();
    let keys: BTreeSet<&SeriesKey> = both.head.series.keys().chain(both.base.series.keys()).collect();
    for key in keys {
        if both.failed.contains(&(key.target.clone(), key.size.clone())) {
            continue;
        }
        let Some(t) = targets.iter().find(|t| t.name == key.target) else {
            continue;
        };
        let Some(ms) = t.metrics.iter().find(|m| m.name == key.metric) else {
            continue;
        };
        seen.insert((key.target.clone(), key.size.clone(), key.metric.clone()));
        let (b, h) = (both.base.series.get(key), both.head.series.get(key));
        let unit = h.or(b).map(|s| s.unit.clone()).unwrap_or_default();
        match (b, h) {
            // Samples are compared as numbers: never across units (a recording of one tree
            // edited or made with other `--print-units`). The row is an error and the run exits
            // 2 (a damaged recording), naming the metric, the kernel and both units.
            (Some(b), Some(h)) if b.unit != h.unit => {
                let reason = format!(
                    "the base tree's samples are in `{}` but the head tree's are in `{}`; they cannot be compared",
                    b.unit, h.unit
                );
                spec_errors.push(RunError {
                    target: key.target.clone(),
                    size: Some(key.size.clone()),
                    kind: ErrorKind::Profiler(FailureKind::BadRecording),
                    message: format!(
                        "metric `{}` of kernel `{}`: {reason}; units are never converted: profile both trees with the same ncu options (a recording: record it again)",
                        key.metric, key.kernel
                    ),
                });
                only.push(bare_row(key, ms, &unit, RowVerdict::Error, &reason));
            }
            (Some(b), Some(h)) => {
                let (bm, hm) = (per_rep(&both.base, key), per_rep(&both.head, key));
                let reps: Vec<u32> = hm.keys().filter(|r| bm.contains_key(r)).copied().collect();
                pending.push(Pending {
                    key: key.clone(),
                    ms,
                    unit,
                    base_raw: b.values.clone(),
                    head_raw: h.values.clone(),
                    head_reps: h.reps.clone(),
                    base_pairs: reps.iter().map(|r| bm[r]).collect(),
                    head_pairs: reps.iter().map(|r| hm[r]).collect(),
                });
            }
            (None, Some(h)) => {
                let mut row = bare_row(
                    key,
                    ms,
                    &unit,
                    RowVerdict::New,
                    "measured in the head tree only: the base tree did not launch this kernel",
                );
                row.candidate = Some(summarize(&h.values));
                row.candidate_reps.clone_from(&h.reps);
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
                row.baseline = Some(summarize(&b.values));
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

/// Judge the rows both trees measured: paired rows by the signed-rank test on their pairs,
/// constant rows exactly, limit rows as in `check`.
fn judge_pending(
    pending: &[Pending<'_>],
    cfg: &Config,
    rounds: &BTreeMap<(String, String), u32>,
    spec_errors: &mut Vec<RunError>,
) -> Vec<Row> {
    // Families: paired rows and limit rows share alpha by their counts (Bonferroni between the
    // two, Holm within each), so the whole run keeps its false-alarm rate at alpha.
    let is_limit = |p: &Pending<'_>| {
        matches!(
            p.ms.threshold.kind,
            ThresholdKind::Min { .. } | ThresholdKind::Max { .. }
        )
    };
    let is_const = |p: &Pending<'_>| !is_limit(p) && constant(&p.base_raw) && constant(&p.head_raw);
    let n_limit = pending.iter().filter(|p| is_limit(p)).count();
    let n_paired = pending.iter().filter(|p| !is_limit(p) && !is_const(p)).count();
    let total = (n_limit + n_paired).max(1) as f64;
    let alpha_paired = cfg.alpha * n_paired as f64 / total;
    let limit_cfg = Config {
        alpha: cfg.alpha * n_limit as f64 / total,
        ..cfg.clone()
    };

    let paired_rows: Vec<PairedRow<'_>> = pending
        .iter()
        .filter(|p| !is_limit(p) && !is_const(p))
        .map(|p| {
            let t = &p.ms.threshold;
            let fraction = match t.kind {
                ThresholdKind::Relative { fraction } => fraction,
                _ => 0.0,
            };
            // The threshold and `min_effect` are tested jointly by the statistics, as in `check`.
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
            }
        })
        .collect();
    // For the reports, as `check` shows it: the relative tolerance (the threshold, or
    // `min_effect` relative to the base median where larger).
    let tolerances: Vec<f64> = paired_rows
        .iter()
        .map(|r| {
            let base_median = median(r.base).unwrap_or(0.0);
            let from_effect = if base_median > 0.0 {
                r.min_effect / base_median
            } else {
                0.0
            };
            r.tolerance.max(from_effect)
        })
        .collect();
    let mut paired = judge_paired(&paired_rows, alpha_paired.max(f64::MIN_POSITIVE), cfg.confidence)
        .into_iter()
        .zip(tolerances);
    let limit_cmp: Vec<Comparison<'_>> = pending
        .iter()
        .filter(|p| is_limit(p))
        .map(|p| Comparison {
            key: format!(
                "{}/{}/{}/{}",
                p.key.target, p.key.size, p.key.kernel, p.key.metric
            ),
            baseline: Some(&p.base_raw),
            candidate: &p.head_raw,
            threshold: &p.ms.threshold,
            history: &[],
            baseline_runs: &[],
            candidate_runs: &[],
        })
        .collect();
    let mut limits = judge_all(&limit_cmp, &limit_cfg).into_iter();

    let mut rows: Vec<Row> = Vec::new();
    for p in pending {
        let mut row = bare_row(&p.key, p.ms, &p.unit, RowVerdict::Error, "");
        row.baseline = Some(summarize(&p.base_raw));
        row.candidate = Some(summarize(&p.head_raw));
        row.candidate_reps.clone_from(&p.head_reps);
        row.remeasured = rounds
            .get(&(p.key.target.clone(), p.key.size.clone()))
            .copied()
            .unwrap_or(0);
        let j: PairedJudgement = if is_limit(p) {
            let Some(l) = limits.next() else { continue };
            PairedJudgement {
                verdict: l.verdict,
                method: l.method,
                change: l.change,
                change_ci: l.change_ci,
                confidence: l.confidence,
                p: l.p,
                p_adjusted: l.p_adjusted,
                reason: l.reason,
                pairs: p.base_pairs.len(),
            }
        } else if is_const(p) {
            judge_constant(p.base_raw[0], p.head_raw[0], &p.ms.threshold, p.base_pairs.len())
        } else {
            let Some((j, tolerance)) = paired.next() else {
                continue;
            };
            if let Some(t) = row.threshold.as_mut() {
                t.tolerance = Some(tolerance);
            }
            j
        };
        row.verdict = j.verdict;
        row.method = j.method;
        row.change = j.change;
        row.change_ci = j.change_ci;
        row.confidence = Some(j.confidence);
        row.p = j.p;
        row.p_adjusted = j.p_adjusted;
        row.reason = j.reason;
        crate::run::engine::min_effect_unit(&mut row, p.ms, spec_errors);
        rows.push(row);
    }
    rows
}

/// Every spec metric of every measured size must have been judged: one no kernel reported in
/// either tree is an error row.
fn unreported_rows(targets: &[&Target], both: &Both, seen: &BTreeSet<(String, String, String)>) -> Vec<Row> {
    let mut rows = Vec::new();
    for (target, size) in both.pairs.keys().filter(|id| !both.failed.contains(*id)) {
        let Some(t) = targets.iter().find(|t| &t.name == target) else {
            continue;
        };
        for ms in &t.metrics {
            if !seen.contains(&(target.clone(), size.clone(), ms.name.clone())) {
                // A row of no kernel: none reported the metric.
                rows.push(Row {
                    threshold: Some(RowThreshold::of(&ms.threshold)),
                    direction: Some(ms.threshold.direction),
                    ..Row::bare(
                        target,
                        size,
                        None,
                        &ms.name,
                        "",
                        RowVerdict::Error,
                        "no profiled kernel reported this metric in either tree",
                    )
                });
            }
        }
    }
    rows
}

fn bare_row(key: &SeriesKey, ms: &MetricSpec, unit: &str, verdict: RowVerdict, reason: &str) -> Row {
    Row {
        threshold: Some(RowThreshold::of(&ms.threshold)),
        direction: Some(ms.threshold.direction),
        ..Row::bare(
            &key.target,
            &key.size,
            Some(&key.kernel),
            &key.metric,
            unit,
            verdict,
            reason,
        )
    }
}

/// `ab` inside the re-measure loop ([`crate::run::engine::until_decided`]): the reference samples are
/// the base tree's, measured in pairs with the head tree's.
struct AbLoop<'a, 's, 'w> {
    sides: &'a mut Sides<'s>,
    items: &'a [Item<'a>],
    recorders: Option<(&'a mut Recorder, &'a mut Recorder)>,
    watch: Option<&'a mut Watch<'w>>,
    both: Both,
    /// The next pair to measure per (target, size).
    next: BTreeMap<(String, String), u32>,
    cfg: &'a Config,
    gpu_name: &'a str,
    progress: &'a mut dyn Progress,
}

impl crate::run::engine::Remeasure for AbLoop<'_, '_, '_> {
    fn judge(&mut self, rounds: &crate::run::engine::Rounds) -> (Vec<Row>, Vec<RunError>) {
        let mut base = self.both.base.clone();
        let mut head = self.both.head.clone();
        add_derived(self.sides.base_targets, &mut base, self.gpu_name);
        add_derived(self.sides.head_targets, &mut head, self.gpu_name);
        let view = Both {
            base,
            head,
            pairs: self.both.pairs.clone(),
            failed: self.both.failed.clone(),
            ..Both::default()
        };
        let (mut rows, spec_errors) = judge(self.sides.head_targets, &view, self.cfg, rounds);
        for r in &mut rows {
            r.gpu = self.gpu_name.to_owned();
        }
        (rows, spec_errors)
    }

    fn stop(&self) -> bool {
        self.both.stop
    }

    fn measure_more(
        &mut self,
        doubtful: &BTreeSet<(String, String)>,
    ) -> Result<Option<BTreeSet<(String, String)>>, Error> {
        let more: Vec<(&Item<'_>, u32, u32)> = self
            .items
            .iter()
            .filter_map(|i| {
                let id = i.id();
                if !doubtful.contains(&id) {
                    return None;
                }
                let (from, to) = crate::stats::remeasure::next_round(
                    *self.next.get(&id)?,
                    i.head.repetitions,
                    i.head.max_repetitions,
                )?;
                Some((i, from, to))
            })
            .collect();
        if more.is_empty() {
            return Ok(None);
        }
        self.progress.status(&format!(
            "measuring more pairs for {} doubtful size(s)",
            more.len()
        ));
        let before = self.both.pairs.clone();
        let mut recorders = self.recorders.as_mut().map(|(b, h)| (&mut **b, &mut **h));
        measure_pairs(
            self.sides,
            &more,
            &mut recorders,
            self.watch.as_deref_mut(),
            true,
            &mut self.both,
            &mut *self.progress,
        )?;
        let mut grew = BTreeSet::new();
        for (item, _, to) in &more {
            let id = item.id();
            self.next.insert(id.clone(), *to);
            if self.both.pairs.get(&id) != before.get(&id) {
                grew.insert(id);
            }
        }
        Ok(Some(grew))
    }
}

/// Run the A/B comparison and assemble the results (same shape as `check`'s: `baseline` is the
/// base tree, `candidate` the head tree). Profiler failures end up in `Results::errors`.
///
/// # Errors
/// Targets of the two trees that do not match; recorder failures.
pub fn run_ab(
    spec: &Spec,
    sides: &mut Sides<'_>,
    mut recorders: Option<(&mut Recorder, &mut Recorder)>,
    mut watch: Option<&mut Watch<'_>>,
    opts: &AbOptions<'_>,
    progress: &mut dyn Progress,
) -> Result<AbRun, Error> {
    let head_versions = crate::profile::Versions::of(&mut *sides.head, sides.head_targets)?;
    crate::profile::Versions::of(&mut *sides.base, sides.base_targets)?;
    let mut items: Vec<Item<'_>> = Vec::new();
    for h in sides.head_targets {
        let Some(b) = sides.base_targets.iter().find(|b| b.name == h.name) else {
            return Err(Error::Usage(format!(
                "target `{}` is not in the base tree's spec",
                h.name
            )));
        };
        if b.sizes != h.sizes {
            return Err(Error::Usage(format!(
                "target `{}` has other sizes in the base tree's spec",
                h.name
            )));
        }
        for size in 0..h.sizes.len() {
            items.push(Item {
                base: b,
                head: h,
                size,
            });
        }
    }
    let fingerprint = sides
        .head_targets
        .first()
        .map(|t| fingerprint_for(&*sides.head, &head_versions, t, opts.gpu))
        .unwrap_or_default();

    let mut both = Both::default();
    let first: Vec<(&Item<'_>, u32, u32)> = items.iter().map(|i| (i, 0, i.head.repetitions)).collect();
    measure_pairs(
        sides,
        &first,
        &mut recorders,
        watch.as_deref_mut(),
        false,
        &mut both,
        progress,
    )?;
    // Alpha is split over the looks more pairs may take (docs/statistics.md, 2.6).
    let looks = items
        .iter()
        .map(|i| crate::stats::remeasure::looks(i.head.repetitions, i.head.max_repetitions))
        .max()
        .unwrap_or(1);
    let mut cfg = crate::run::engine::stats_config(&spec.settings);
    cfg.alpha /= f64::from(looks);
    let mut run = AbLoop {
        next: items.iter().map(|i| (i.id(), i.head.repetitions)).collect(),
        sides,
        items: &items,
        recorders,
        watch: watch.as_deref_mut(),
        both,
        cfg: &cfg,
        gpu_name: &fingerprint.gpu_name,
        progress,
    };
    let (mut rows, spec_errors, _) = crate::run::engine::until_decided(&mut run)?;
    let AbLoop { mut both, sides, .. } = run;

    // A kernel the head tree no longer launches (or launches under a new name) fails the gate
    // as in `check`, unless allowed.
    crate::run::missing::apply(
        &mut rows,
        &crate::run::missing::Scope {
            targets: sides.head_targets,
            allow_all: opts.allow_missing,
            skipped: &BTreeSet::new(),
        },
    );
    both.errors.extend(spec_errors);
    let synthetic = opts.manifest.is_some_and(|m| m.synthetic)
        || sides.base.manifest().is_some_and(|m| m.synthetic)
        || sides.head.manifest().is_some_and(|m| m.synthetic);
    let results = crate::run::engine::assemble(
        crate::run::engine::Assembly {
            spec,
            source: format!("ab: base {} / head {}", sides.base.source(), sides.head.source()),
            synthetic,
            fingerprint,
            git_commit: opts
                .manifest
                .and_then(|m| m.head_commit.clone())
                .or_else(|| crate::run::engine::git_commit(&spec.base_dir())),
            fail_on: opts.fail_on,
            multiple_testing: format!(
                "paired (ABBA), paired t on log ratios against the threshold; holm alpha={} per look over {looks} look(s)",
                cfg.alpha
            ),
            had_work: !items.is_empty(),
            health: watch.map(|w| w.sampler.summary()).unwrap_or_default(),
            cost_seconds: both.cost,
        },
        rows,
        both.errors,
    );
    Ok(AbRun {
        results,
        order: both.order,
    })
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::fmt::Write as _;
    use std::path::PathBuf;
    use std::rc::Rc;

    use super::*;
    use crate::outcome::results::RunVerdict;
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
            let mut raw =
                String::from("\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n\"\",\"\",\"ns\"\n");
            let ns = self.ns * (1.0 + 0.001 * f64::from(job.rep % 3));
            let _ = writeln!(raw, "\"0\",\"saxpy(int)\",\"{ns}\"");
            Ok(Capture {
                raw,
                origin: PathBuf::from("fake"),
                argv: None,
                wall_seconds: Some(0.5),
                exit_code: Some(0),
                output_tail: String::new(),
                kernels_seen: None,
                sqlite: None,
                ncu_version: None,
            })
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
            &AbOptions {
                fail_on: FailOn::Regression,
                allow_missing: false,
                gpu: None,
                manifest: None,
            },
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
        assert_eq!(r.rows[0].verdict, RowVerdict::Pass, "{}", r.rows[0].reason);
        assert_eq!(r.verdict, RunVerdict::Pass);
        assert!((r.cost_seconds["saxpy"] - 4.0).abs() < 1e-9);
    }
}
