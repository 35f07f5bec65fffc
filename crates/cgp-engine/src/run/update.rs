//! `baseline update`: turn a complete, error-free measurement into baselines.
//!
//! Nothing is written unless every selected target was measured without error: a failed or
//! partial run never replaces a baseline.

use crate::measured::samples::TargetSize;
use std::collections::BTreeSet;
use std::io::Write;
use std::path::PathBuf;

use crate::baseline::{Store, UpdateMeta};
use crate::foundation::error::Error;
use crate::gpu::fingerprint::Fingerprint;
use crate::measured::samples::{SampleSet, SeriesKey};
use crate::outcome::results::{Results, RowVerdict};
use crate::spec::{Spec, Target};

/// The candidate samples of a results file, as a sample set.
///
/// # Errors
/// [`Error::Input`] when the run had errors (its samples are incomplete) or was made with
/// another spec.
pub fn samples_from_results(
    results: &Results,
    spec: &Spec,
    path: &std::path::Path,
) -> Result<SampleSet, Error> {
    if !results.errors.is_empty() || results.verdict == crate::outcome::results::RunVerdict::Error {
        return Err(Error::input(
            path,
            format!(
                "the run had {} error(s); its samples are incomplete and will not become a baseline",
                results.errors.len()
            ),
        ));
    }
    if results.spec_hash != spec.hash {
        return Err(Error::input(
            path,
            format!(
                "these results were made with another version of the spec (hash {} vs {} for {}); re-run check or profile with this spec",
                short(&results.spec_hash),
                short(&spec.hash),
                spec.path.display()
            ),
        ));
    }
    let gpus: std::collections::BTreeSet<&str> = results
        .rows
        .iter()
        .map(|r| r.key.gpu.as_str())
        .filter(|g| !g.is_empty())
        .collect();
    if gpus.len() > 1 {
        return Err(Error::input(
            path,
            format!(
                "these results hold rows of {} GPUs ({}); a baseline belongs to one GPU: update from each GPU's results (merge that GPU's shards only)",
                gpus.len(),
                gpus.into_iter().collect::<Vec<_>>().join(", ")
            ),
        ));
    }
    let mut set = SampleSet::default();
    for row in &results.rows {
        // A row the run could not judge holds no samples to keep: skipping it would drop its
        // entry and its history from the baseline without a word (issue 34), so refuse.
        let gate = crate::outcome::decide::row_gate(row, crate::outcome::results::FailOn::Regression);
        if gate.gate() == crate::outcome::decide::Gate::Error || gate.is_failing_missing() {
            return Err(Error::input(
                path,
                format!(
                    "row {} is `{}`, not a measurement: a baseline updated from these results would drop its entry and history; run the check again and update from a run where every row was measured",
                    row.key(),
                    if row.verdict() == RowVerdict::Error {
                        "error"
                    } else {
                        "missing"
                    }
                ),
            ));
        }
        if row.verdict() == RowVerdict::Missing {
            continue;
        }
        let Some(c) = &row.sides.candidate else { continue };
        let key = SeriesKey {
            target: row.key.target.clone(),
            size: row.key.size.clone(),
            kernel: row.kernel_label().to_owned(),
            metric: row.key.metric.clone(),
        };
        let reps: Vec<u32> = if row.candidate_reps.len() == c.samples.len() {
            row.candidate_reps.clone()
        } else {
            return Err(Error::input(
                path,
                format!("row {} has no repetition numbers for its samples", row.key()),
            ));
        };
        for (v, r) in c.samples.iter().zip(reps) {
            set.push(&key, &row.unit, *v, r);
        }
        for config in &row.candidate_configs {
            set.note_config(&key, config);
        }
    }
    Ok(set)
}

/// The rows of `results` judged a regression, by their names (`gemm[m=4096] kernel metric`).
///
/// `baseline update --from` refuses results holding any ([`refuse_regressions`]): stored, a
/// regression becomes the normal the next checks compare with, and the gate stops seeing it.
pub fn regression_rows(results: &Results) -> Vec<String> {
    results
        .rows
        .iter()
        .filter(|r| r.verdict() == RowVerdict::Regression)
        .map(|r| r.key().to_string())
        .collect()
}

/// Refuse results that hold regressions unless `accept` (`--accept-regressions`); with `accept`,
/// the rows accepted (for the command's warning).
///
/// # Errors
/// [`Error::Input`] naming the regressed rows and the flag.
pub fn refuse_regressions(
    results: &Results,
    path: &std::path::Path,
    accept: bool,
) -> Result<Vec<String>, Error> {
    let rows = regression_rows(results);
    if rows.is_empty() || accept {
        return Ok(rows);
    }
    let shown: Vec<&str> = rows.iter().take(5).map(String::as_str).collect();
    let more = if rows.len() > shown.len() {
        format!(" and {} more", rows.len() - shown.len())
    } else {
        String::new()
    };
    Err(Error::input(
        path,
        format!(
            "these results hold {} regression(s) ({}{more}); stored as the baseline, they would become what later checks compare with, and the gate would stop failing on them. \
             Nothing was written. Fix the regression and update from a passing run, or, if the change is intended (a slower but correct kernel), pass `--accept-regressions`",
            rows.len(),
            shown.join(", ")
        ),
    ))
}

fn short(hash: &str) -> &str {
    hash.get(..12).unwrap_or(hash)
}

/// Write one baseline file per target that has samples.
///
/// With `only` (a shard's (target, size) rows), a target none of whose sizes are in `only` is
/// left alone, and the others are updated size by size: the entries of sizes outside `only` are
/// kept as they were ([`Store::update_sizes`]).
///
/// # Errors
/// A target without samples (nothing is written for any target then), and the store's errors.
#[expect(
    clippy::too_many_arguments,
    reason = "one call site per source of samples; a struct would only rename them"
)]
pub fn write_baselines(
    spec: &Spec,
    targets: &[&Target],
    samples: &SampleSet,
    fingerprint: &dyn Fn(&Target) -> Fingerprint,
    store: &Store,
    git_commit: Option<String>,
    only: Option<&BTreeSet<TargetSize>>,
    out: &mut dyn Write,
) -> Result<Vec<PathBuf>, Error> {
    let in_shard = |t: &Target| only.is_none_or(|o| o.iter().any(|id| id.target == t.name));
    let targets: Vec<&Target> = targets.iter().copied().filter(|t| in_shard(t)).collect();
    for t in &targets {
        if !samples.series.keys().any(|k| k.target == t.name) {
            return Err(Error::Usage(format!(
                "no samples for target `{}`; no baseline was written (measure every selected target, or select with --target)",
                t.name
            )));
        }
    }
    missing_rows(spec, &targets, samples, only)?;
    // Only the spec's metrics are kept: the duration ncu collects for derived metrics is not
    // gated, and would come back as a "missing" row once the spec stops needing it.
    let series_of = |t: &Target| -> Vec<&crate::measured::samples::Series> {
        samples
            .series
            .values()
            .filter(|s| {
                s.key.target == t.name
                    && (t.metrics.iter().any(|m| m.name == s.key.metric)
                        // Every category of an nsys target: the stacked bars compare them all.
                        || crate::nsys::bars::is_informational(t, &s.key.metric))
            })
            .collect()
    };
    // Validate every target before writing any, so a bad one leaves all files as they were.
    for t in &targets {
        store.validate(&t.name, &fingerprint(t), &series_of(t))?;
    }
    let meta = UpdateMeta::now(git_commit, spec.hash.clone(), spec.settings.history);
    let mut written = Vec::new();
    // Targets the SASS cache does not apply to, by reason: said once per run.
    let mut no_sass: std::collections::BTreeMap<String, Vec<String>> = std::collections::BTreeMap::new();
    for t in targets {
        let series = series_of(t);
        let path = match only {
            None => store.update(&t.name, &fingerprint(t), &series, &meta)?,
            Some(_) => store.update_sizes(&t.name, &fingerprint(t), &series, &meta)?,
        };
        let _ = writeln!(out, "wrote {} ({} series)", path.display(), series.len());
        record_counters(t, samples, &fingerprint(t).gpu_key(), store)?;
        record_sass(
            spec,
            t,
            &fingerprint(t).gpu_key(),
            &fingerprint(t).stable_key(crate::gpu::fingerprint::DEFAULT_KEY_FIELDS),
            &series,
            store,
            out,
        )?
        .into_iter()
        .for_each(|why| no_sass.entry(why).or_default().push(t.name.clone()));
        written.push(path);
    }
    for (why, names) in &no_sass {
        let _ = writeln!(
            out,
            "the SASS cache does not apply to {} (always profiled): {why}",
            names
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    Ok(written)
}

/// Refuse a measurement that lacks a size x metric of the spec (issue 34: a row deleted from the
/// results given to `--from` dropped its entry and its history). The spec's own metrics are
/// checked, not the derived ones (`cgp__*`, which need the GPU's peaks) nor the explanatory
/// counters `explain:` adds.
fn missing_rows(
    spec: &Spec,
    targets: &[&Target],
    samples: &SampleSet,
    only: Option<&BTreeSet<TargetSize>>,
) -> Result<(), Error> {
    for t in targets {
        let Some(declared) = spec.target(&t.name) else {
            continue;
        };
        for size in &t.sizes {
            let key = size.key();
            if only.is_some_and(|o| !o.contains(&TargetSize::new(&t.name, key.as_str()))) {
                continue;
            }
            for m in declared
                .metrics
                .iter()
                .filter(|m| !m.name.starts_with(crate::spec::DERIVED_PREFIX))
            {
                let measured = samples
                    .series
                    .keys()
                    .any(|k| k.target == t.name && k.size == key && k.metric == m.name);
                if !measured {
                    return Err(Error::Usage(format!(
                        "no samples of metric `{}` for {}; no baseline was written: a baseline is written only from a run that measured every size and metric of the spec, so that no entry and its history are dropped (run the check or the update again)",
                        m.name,
                        crate::measured::samples::target_size(&t.name, &key)
                    )));
                }
            }
        }
    }
    Ok(())
}

/// Store the SASS hash of every kernel measured for `t` in its baseline (docs/sass-cache.md).
/// Kernels whose SASS cannot be read get no hash (and are always profiled): that is said, not
/// an error.
fn record_sass(
    spec: &Spec,
    t: &Target,
    gpu_key: &str,
    fp_key: &str,
    series: &[&crate::measured::samples::Series],
    store: &Store,
    out: &mut dyn Write,
) -> Result<Option<String>, Error> {
    if !crate::profile::backend_of(t).hashes_sass() {
        return Ok(None);
    }
    let functions = match crate::profile::sass::functions_of(t, &spec.base_dir()) {
        Ok(f) => f,
        // Why the cache does not apply: the caller says it once per run for every such target.
        Err(why) => return Ok(Some(why)),
    };
    let mut by_size: std::collections::BTreeMap<String, std::collections::BTreeMap<String, String>> =
        std::collections::BTreeMap::new();
    for size in &t.sizes {
        let key = size.key();
        let kernels: BTreeSet<&str> = series
            .iter()
            .filter(|s| s.key.size == key)
            .map(|s| s.key.kernel.as_str())
            .collect();
        if kernels.is_empty() {
            continue;
        }
        let kernels: Vec<&str> = kernels.into_iter().collect();
        let hashes = crate::profile::sass::hashes(&functions, t, size, fp_key, &kernels);
        for k in kernels.iter().filter(|k| !hashes.contains_key(**k)) {
            let _ = writeln!(
                out,
                "no SASS of kernel `{k}` in `{}` (it will always be profiled)",
                t.name
            );
        }
        if !hashes.is_empty() {
            by_size.insert(key, hashes);
        }
    }
    if !by_size.is_empty() {
        store.set_sass(gpu_key, &t.name, by_size)?;
    }
    Ok(None)
}

/// Store the explanatory counters measured for `t` that the spec does not gate (`explain:
/// true`; docs/why.md), and a harness target's companions (nvbench's SM cycles,
/// `profile::harness::is_companion`), beside its baseline's entries, so that `check` can say why
/// a time changed.
fn record_counters(t: &Target, samples: &SampleSet, gpu_key: &str, store: &Store) -> Result<(), Error> {
    let counters: Vec<crate::baseline::CounterSamples> = samples
        .series
        .values()
        .filter(|s| {
            s.key.target == t.name
                && (crate::measured::why::is_explanatory(&s.key.metric)
                    || crate::profile::harness::is_companion(&s.key.metric))
                && !t.metrics.iter().any(|m| m.name == s.key.metric)
                // A value JSON cannot hold would make the baseline unreadable.
                && s.values().iter().all(|v| v.is_finite())
        })
        .map(|s| crate::baseline::CounterSamples {
            size: s.key.size.clone(),
            kernel: s.key.kernel.clone(),
            metric: s.key.metric.clone(),
            unit: s.unit.clone(),
            samples: s.values(),
        })
        .collect();
    if counters.is_empty() {
        return Ok(());
    }
    store.set_counters(gpu_key, &t.name, counters)
}
