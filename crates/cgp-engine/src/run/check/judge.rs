//! Judging the measured rows against their baselines (`stats::judge_all`), with the rows a
//! measurement did not produce (`missing`) and the spec mistakes only measuring reveals.

use crate::measured::samples::TargetSize;
use std::collections::{BTreeMap, BTreeSet};

use super::Baselines;
use crate::measured::samples::{SampleSet, SeriesKey};
use crate::outcome::results::{
    Decision, ErrorKind, Missing, Outcome, OwnedRowKey, Row, RowRule, RowThreshold, RowVerdict, RunError,
    Sides,
};
use crate::run::engine::min_effect_unit;
use crate::run::measure::Measurement;
use crate::spec::{MetricSpec, Target};
use crate::stats::spending::LookAt;
use crate::stats::{Comparison, Config, judge_all_at, summarize};

/// Judge every measured row against its baseline, plus `missing` rows for baseline entries
/// that were not measured. Rows are ordered regressions first, then by key. Also returns the
/// spec mistakes that only the measurement revealed (a `min_effect` in another unit than the
/// metric's), as invalid-input errors.
pub(super) fn judge(
    targets: &[&Target],
    samples: &SampleSet,
    baselines: &Baselines,
    m: &Measurement,
    cfg: &Config,
    rounds: &BTreeMap<TargetSize, u32>,
    peaks_known: bool,
) -> (Vec<Row>, Vec<RunError>) {
    let failed: BTreeSet<TargetSize> = m
        .errors
        .iter()
        .map(|e| TargetSize::new(&e.target, e.size.clone().unwrap_or_default()))
        .collect();
    let mut keyed: Vec<Keyed<'_>> = Vec::new();
    let mut seen: BTreeSet<SeriesKey> = BTreeSet::new();
    for t in targets {
        for (key, _) in samples.series.iter().filter(|(k, _)| k.target == t.name) {
            if failed.contains(&TargetSize::new(&key.target, &key.size)) {
                continue;
            }
            let Some(ms) = t.metrics.iter().find(|x| x.name == key.metric) else {
                continue;
            };
            let entry = baselines.get(&t.name).and_then(|(b, _)| b.entry_for(key));
            keyed.push((key.clone(), ms, entry));
            seen.insert(key.clone());
        }
    }
    let looks: Vec<LookAt> = keyed
        .iter()
        .map(|(key, _, _)| {
            let t = targets.iter().find(|t| t.name == key.target);
            look_of(
                t.copied(),
                rounds.get(&TargetSize::new(&key.target, &key.size)).copied(),
            )
        })
        .collect();
    let mut rows = judged_rows(&keyed, samples, cfg, rounds, &looks);
    let mut spec_errors = baseline_unit_errors(&mut rows, &keyed, baselines);
    // `validate` catches the `min_effect`s whose metric's unit is known from its name; this
    // catches the rest, once the unit is measured.
    for (row, (_, ms, _)) in rows.iter_mut().zip(&keyed) {
        min_effect_unit(row, ms, &mut spec_errors);
    }
    rows.extend(unreported_rows(targets, m, &failed, &seen, peaks_known));
    rows.extend(missing_rows(targets, baselines, &failed, &seen));
    crate::run::engine::sort_rows(&mut rows);
    (rows, spec_errors)
}

/// Where a row of target `t` stands in its plan after `rounds` re-measurement rounds: the
/// first round's `repetitions`, then `repetitions` more per round up to `max_repetitions`.
fn look_of(t: Option<&Target>, rounds: Option<u32>) -> LookAt {
    let (r, max) = t.map_or((1, 1), |t| (t.repetitions, t.max_repetitions));
    let step = r.max(1);
    let done = step
        .saturating_add(step.saturating_mul(rounds.unwrap_or(0)))
        .min(max.max(step));
    LookAt {
        repetitions: r,
        max_repetitions: max,
        done,
    }
}

/// A measured series with its spec metric and its baseline entry, if any.
pub(super) type Keyed<'a> = (SeriesKey, &'a MetricSpec, Option<&'a crate::baseline::Entry>);

/// The rows the statistics judge: every measured series against its baseline entry.
pub(super) fn judged_rows(
    keyed: &[Keyed<'_>],
    samples: &SampleSet,
    cfg: &Config,
    rounds: &BTreeMap<TargetSize, u32>,
    looks: &[LookAt],
) -> Vec<Row> {
    let histories: Vec<Vec<f64>> = keyed
        .iter()
        .map(|(_, _, entry)| entry.map(|e| e.older_medians()).unwrap_or_default())
        .collect();
    let candidates: Vec<(Vec<f64>, Vec<u32>)> = keyed
        .iter()
        .map(|(key, _, _)| {
            samples
                .series
                .get(key)
                .map(|s| (s.values(), s.reps()))
                .unwrap_or_default()
        })
        .collect();
    let comparisons: Vec<Comparison<'_>> = keyed
        .iter()
        .zip(&histories)
        .zip(&candidates)
        .map(|(((key, ms, entry), history), (values, reps))| Comparison {
            key: format!("{}/{}/{}/{}", key.target, key.size, key.kernel, key.metric),
            baseline: entry.map(|e| e.samples.as_slice()),
            candidate: values,
            threshold: &ms.threshold,
            history,
            baseline_runs: entry.map_or(&[][..], |e| e.reps.as_slice()),
            candidate_runs: reps,
        })
        .collect();
    let judgements = judge_all_at(&comparisons, cfg, looks);
    keyed
        .iter()
        .zip(judgements)
        .map(|((key, ms, entry), j)| {
            let Decision {
                outcome,
                method,
                reason,
            } = Decision::from(&j.ruling);
            Row {
                key: OwnedRowKey::from(key),
                unit: samples
                    .series
                    .get(key)
                    .map(|s| s.unit.clone())
                    .unwrap_or_default(),
                outcome,
                rule: RowRule {
                    threshold: Some(RowThreshold {
                        bound: j.bound,
                        ..RowThreshold::of(&ms.threshold)
                    }),
                    direction: Some(ms.threshold.direction),
                },
                method,
                sides: Sides {
                    baseline: j.baseline,
                    candidate: Some(j.candidate),
                },
                reason,
                remeasured: rounds
                    .get(&TargetSize::new(&key.target, &key.size))
                    .copied()
                    .unwrap_or(0),
                candidate_reps: samples.series.get(key).map(|s| s.reps()).unwrap_or_default(),
                history: entry.map(|e| e.older_medians()).unwrap_or_default(),
                why: None,
                candidate_configs: samples
                    .series
                    .get(key)
                    .map(|s| s.configs.clone())
                    .unwrap_or_default(),
                config_change: config_change(entry.map(|e| e.configs.as_slice()), samples.series.get(key)),
                confirmation: crate::outcome::results::Confirmation::None,
            }
        })
        .collect()
}

/// Samples are compared as numbers: a baseline in another unit (`us` edited into a file of
/// `ns`) would be compared 1000x off. Units are never converted here: the row is an error,
/// and the damaged baseline is invalid input (exit 2), named with its metric, kernel and file.
pub(super) fn baseline_unit_errors(
    rows: &mut [Row],
    keyed: &[Keyed<'_>],
    baselines: &Baselines,
) -> Vec<RunError> {
    let mut spec_errors: Vec<RunError> = Vec::new();
    for (row, (key, _, entry)) in rows.iter_mut().zip(keyed) {
        if let Some(e) = entry
            && e.unit != row.unit
        {
            row.set_verdict(RowVerdict::Error);
            row.reason = format!(
                "the baseline's samples are in `{}` but this run measured `{}`; they cannot be compared: refresh the baseline with `cgp-gate baseline update`",
                e.unit, row.unit
            );
            let file = baselines
                .get(&key.target)
                .map(|(_, p)| p.display().to_string())
                .unwrap_or_default();
            let message = format!(
                "{file}: the baseline of metric `{}` of kernel `{}` (target `{}`, size {}) is in `{}`, but ncu measures it in `{}`; units are never converted: restore the file from git, or measure it again with `cgp-gate baseline update`",
                row.key.metric,
                row.kernel_label(),
                row.key.target,
                row.key.size,
                e.unit,
                row.unit
            );
            spec_errors.push(RunError {
                target: row.key.target.clone(),
                size: Some(row.key.size.clone()),
                kind: ErrorKind::InvalidInput,
                message,
            });
        }
    }
    spec_errors
}

/// Every spec metric of every measured size must have been judged: a metric that no kernel
/// reported (or a derived metric that cannot be computed on this GPU) is an error row, never a
/// silent pass.
pub(super) fn unreported_rows(
    targets: &[&Target],
    m: &Measurement,
    failed: &BTreeSet<TargetSize>,
    seen: &BTreeSet<SeriesKey>,
    peaks_known: bool,
) -> Vec<Row> {
    let mut rows = Vec::new();
    for (TargetSize { target, size }, _) in m.reps_done.iter().filter(|(id, _)| !failed.contains(*id)) {
        let Some(t) = targets.iter().find(|t| &t.name == target) else {
            continue;
        };
        for ms in &t.metrics {
            if seen
                .iter()
                .any(|k| &k.target == target && &k.size == size && k.metric == ms.name)
            {
                continue;
            }
            let why = if crate::spec::PEAK_METRICS.contains(&ms.name.as_str()) && !peaks_known {
                "no peak figures are known for this GPU, so a % of peak cannot be computed (docs/gpu.md lists the GPUs)"
            } else {
                "no profiled kernel reported this metric"
            };
            let key = OwnedRowKey {
                target: target.clone(),
                size: size.clone(),
                metric: ms.name.clone(),
                ..OwnedRowKey::default()
            };
            let mut row = Row::bare(key, "", Outcome::Error, why);
            row.rule = RowRule::of(&ms.threshold);
            rows.push(row);
        }
    }
    rows
}

/// `missing` rows: the baseline entries of the selected targets that were not measured (and
/// did not fail).
pub(super) fn missing_rows(
    targets: &[&Target],
    baselines: &Baselines,
    failed: &BTreeSet<TargetSize>,
    seen: &BTreeSet<SeriesKey>,
) -> Vec<Row> {
    let mut rows = Vec::new();
    for t in targets {
        let Some((b, _)) = baselines.get(&t.name) else {
            continue;
        };
        for e in &b.entries {
            let key = e.key(&t.name);
            if seen.contains(&key) || failed.contains(&TargetSize::new(&key.target, &key.size)) {
                continue;
            }
            let ms = t.metrics.iter().find(|x| x.name == e.metric);
            // An nsys target's ungated category times are kept for the stacked bars, not judged.
            if ms.is_none() && crate::nsys::bars::is_informational(t, &e.metric) {
                continue;
            }
            let reason = if ms.is_some() {
                "in the baseline but not measured now (kernel or size no longer profiled)"
            } else {
                "in the baseline but the metric is no longer in the spec"
            };
            let mut row = Row::bare(
                OwnedRowKey::from(&key),
                &e.unit,
                Outcome::Missing(Missing::default()),
                reason,
            );
            if let Some(m) = ms {
                row.rule.threshold = Some(RowThreshold::of(&m.threshold));
                row.rule.direction = Some(m.threshold.direction);
            }
            row.sides.baseline = Some(summarize(&e.samples));
            row.history = e.older_medians();
            rows.push(row);
        }
    }
    rows
}

/// The launch configuration change of a row: the kernel ran with other grid/block sizes than in
/// the baseline. Only when both sides say which (a baseline written before configurations were
/// recorded has none): the series is still compared, and the reports say what changed.
pub(super) fn config_change(
    baseline: Option<&[String]>,
    candidate: Option<&crate::measured::samples::Series>,
) -> Option<crate::outcome::results::ConfigChange> {
    let (b, c) = (baseline?, &candidate?.configs);
    (!b.is_empty() && !c.is_empty() && b != c.as_slice()).then(|| crate::outcome::results::ConfigChange {
        baseline: b.to_vec(),
        candidate: c.clone(),
    })
}
