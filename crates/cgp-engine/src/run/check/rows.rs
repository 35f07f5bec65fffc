//! The rows a check did not judge from samples: sizes skipped for the same machine code
//! (docs/sass-cache.md), operation rows' kernel notes, and sizes whose kernel filter selected
//! nothing that ran.

use crate::measured::samples::TargetSize;
use std::collections::{BTreeMap, BTreeSet};

use super::Baselines;
use crate::outcome::results::{Kernel, Outcome, Row, RowVerdict};
use crate::plan::Work;
use crate::run::measure::Measurement;
use crate::spec::{Spec, Target};

/// The (target, size) work items whose every baseline kernel has a SASS hash equal to the one
/// of the code on disk now. A kernel whose SASS cannot be read, or that has no hash in the
/// baseline, keeps its size profiled.
pub(super) fn same_sass(
    spec: &Spec,
    work: &[Work<'_>],
    baselines: &Baselines,
    fp_keys: &BTreeMap<String, String>,
    progress: &mut dyn crate::run::progress::Progress,
) -> BTreeSet<TargetSize> {
    let mut out = BTreeSet::new();
    let mut functions: BTreeMap<String, Result<BTreeMap<String, String>, String>> = BTreeMap::new();
    for w in work {
        let TargetSize { target, size } = w.id();
        let Some(stored) = baselines.get(&target).and_then(|(b, _)| b.sass.get(&size)) else {
            continue;
        };
        let Some((b, _)) = baselines.get(&target) else {
            continue;
        };
        let kernels: BTreeSet<&str> = b
            .entries
            .iter()
            .filter(|e| e.size == size)
            .map(|e| e.kernel.as_str())
            .collect();
        if kernels.is_empty() || kernels.iter().any(|k| !stored.contains_key(*k)) {
            continue;
        }
        let f = functions
            .entry(target.clone())
            .or_insert_with(|| crate::profile::sass::functions_of(w.target, &spec.base_dir()));
        let f = match f {
            Ok(f) => f,
            Err(why) => {
                progress.note(&format!(
                    "profiling `{target}` [{size}]: its SASS cannot be read ({why})"
                ));
                continue;
            }
        };
        let kernels: Vec<&str> = kernels.into_iter().collect();
        let key = fp_keys.get(&target).map_or("", String::as_str);
        let now = crate::profile::sass::hashes(f, w.target, w.size, key, &kernels);
        if kernels.iter().all(|k| now.get(*k) == stored.get(*k)) {
            progress.note(&format!(
                "skipping `{target}` [{size}]: same machine code as the baseline"
            ));
            out.insert(TargetSize { target, size });
        }
    }
    out
}

/// Replace the `missing` rows of skipped sizes by passes "unchanged (same machine code)", and
/// say what the skip saved.
pub(super) fn skipped_rows(
    rows: Vec<Row>,
    targets: &[&Target],
    unchanged: &BTreeSet<TargetSize>,
    baselines: &Baselines,
) -> (Vec<Row>, Option<crate::outcome::results::SassSkip>) {
    if unchanged.is_empty() {
        return (rows, None);
    }
    let mut kernels: BTreeSet<(String, String, Option<Kernel>)> = BTreeSet::new();
    let mut saved: Option<f64> = None;
    let mut rows: Vec<Row> = rows
        .into_iter()
        .map(|mut r| {
            if r.verdict() == RowVerdict::Missing
                && unchanged.contains(&TargetSize::new(&r.key.target, &r.key.size))
            {
                r.outcome = Outcome::Skipped(crate::outcome::results::SkipReason::SameSass);
                crate::profile::sass::SAME_SASS_REASON.clone_into(&mut r.reason);
                let first = kernels.insert((r.key.target.clone(), r.key.size.clone(), r.key.kernel.clone()));
                if first && let Some((b, _)) = baselines.get(&r.key.target) {
                    let reps = targets
                        .iter()
                        .find(|t| t.name == r.key.target)
                        .map_or(1, |t| t.repetitions);
                    let entry = r
                        .key
                        .kernel_name()
                        .and_then(|k| b.entry(&r.key.size, k, crate::plan::DURATION_METRIC));
                    if let Some(e) = entry {
                        *saved.get_or_insert(0.0) += e.median() * f64::from(reps);
                    }
                }
            }
            r
        })
        .collect();
    crate::run::engine::sort_rows(&mut rows);
    let skip = crate::outcome::results::SassSkip {
        kernels: kernels.len(),
        sizes: unchanged.len(),
        gpu_time_saved_ns: saved,
    };
    (rows, Some(skip))
}

/// Operation rows (`kernels: sum`): the reason names the kernels behind the row, and a change of
/// kernel set since the baseline ("now runs `cutlass_80_...` instead of `nvjet_sm90_...`").
pub(super) fn operation_notes(rows: &mut [Row]) {
    use crate::profile::sum::kernels_of;
    let tick = |v: &[String]| v.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ");
    for r in rows.iter_mut().filter(|r| r.key.kernel == Some(Kernel::Sum)) {
        let now = kernels_of(&r.candidate_configs);
        if now.is_empty() {
            continue;
        }
        let note = match &r.config_change {
            Some(c) if kernels_of(&c.baseline) != now => format!(
                "kernel set changed: now runs {} instead of {}",
                tick(&now),
                tick(&kernels_of(&c.baseline))
            ),
            _ => format!("kernels: {}", tick(&now)),
        };
        r.reason = if r.reason.is_empty() {
            note
        } else {
            format!("{}; {note}", r.reason)
        };
    }
}

/// Sizes whose `kernel:` filter selected none of the kernels that ran (docs/pytorch.md, "When the
/// library switches kernels"), where the baseline has kernels: not a profiler failure. Their
/// error is dropped, so the baseline's rows become `missing` (exit 1 unless allowed). Where the
/// baseline has nothing, nothing was ever selected: the error stays (and so does exit 3).
pub(super) fn keep_unselected(m: &mut Measurement, baselines: &Baselines) {
    let has_baseline = |TargetSize { target, size }: &TargetSize| {
        baselines
            .get(target)
            .is_some_and(|(b, _)| b.entries.iter().any(|e| &e.size == size))
    };
    m.unselected.retain(|id, _| has_baseline(id));
    let unselected = &m.unselected;
    m.errors.retain(|e| {
        !unselected.contains_key(&TargetSize::new(&e.target, e.size.clone().unwrap_or_default()))
    });
}

/// The `missing` rows of sizes whose filter selected none of the kernels that ran: the reason
/// names the kernels that ran instead.
pub(super) fn unselected(rows: &mut [Row], unselected: &BTreeMap<TargetSize, Vec<String>>) {
    for (TargetSize { target, size }, ran) in unselected {
        for r in rows
            .iter_mut()
            .filter(|r| &r.key.target == target && &r.key.size == size && r.verdict() == RowVerdict::Missing)
        {
            r.reason = format!(
                "{}; the kernel filter selected none of the kernels that ran:{}{}",
                r.reason,
                crate::outcome::results::MissingCause::RAN,
                ran.iter()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            if let Outcome::Missing(m) = &mut r.outcome {
                m.cause = crate::outcome::results::MissingCause::Unselected { ran: ran.clone() };
            }
        }
    }
}
