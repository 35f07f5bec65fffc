//! What `baseline update` exchanges with the store: the run it pushes after a fresh
//! measurement, and the run `--from-store` takes its samples from.

use std::path::PathBuf;

use cgp_store::store::{Access, Filter, Store, StoreUrl};

use crate::foundation::error::{Error, Result};
use crate::outcome::results::{Outcome, OwnedRowKey, Results, Row};

/// A fresh baseline measurement as results: one `new` row per series (its candidate's summary
/// and samples, compared with nothing), so that the store holds what the baselines were made of.
pub(crate) fn measured_results(
    spec: &crate::spec::Spec,
    targets: &[&crate::spec::Target],
    run: &crate::commands::MeasuredRun,
    shard: Option<&crate::plan::Selection>,
    commit: Option<String>,
) -> Results {
    let rows: Vec<Row> = run
        .m
        .samples
        .series
        .values()
        .map(|s| {
            let mut row = Row::bare(
                OwnedRowKey::from(&s.key),
                &s.unit,
                Outcome::New,
                "a baseline measurement",
            );
            row.sides.candidate = Some(crate::stats::summary::summarize(&s.values()));
            row.candidate_reps = s.reps();
            row.candidate_configs.clone_from(&s.configs);
            row
        })
        .collect();
    let fingerprint = targets
        .first()
        .and_then(|t| run.fingerprints.get(&t.name))
        .cloned()
        .unwrap_or_default();
    let mut results = crate::run::engine::assemble(
        crate::run::engine::Assembly {
            spec,
            source: run.source.clone(),
            synthetic: run.synthetic,
            fingerprint,
            git_commit: commit,
            fail_on: crate::outcome::results::FailOn::Regression,
            multiple_testing: "none (a baseline measurement)".to_owned(),
            had_work: !rows.is_empty(),
            health: run.health.clone().unwrap_or_default(),
            cost_seconds: run.m.cost_seconds.clone(),
        },
        rows,
        Vec::new(),
    );
    results.shard = shard.map(|s| s.shard.to_string());
    results
}

/// The newest run of `spec` (same spec hash) on `branch` (default: the CI's or git's branch), with
/// its samples; a commit's shards, when it has no whole run, merged as `merge` merges them.
///
/// # Errors
/// No branch known, no such run (exit 2); the store's.
pub(crate) fn newest_run(
    url: &StoreUrl,
    spec: &crate::spec::Spec,
    branch: Option<&str>,
) -> Result<(PathBuf, Results)> {
    let branch = super::branch(branch, &spec.base_dir());
    if branch.is_empty() {
        return Err(Error::Usage(
            "--from-store: the branch is not known (no CI variable, no git branch); pass --branch NAME"
                .to_owned(),
        ));
    }
    let mut store = Store::open(url, Access::Read)?;
    let runs = store.runs(&Filter {
        branch: Some(branch.clone()),
        ..Filter::default()
    })?;
    let newest = runs.iter().rev().find(|r| r.spec_hash == spec.hash).ok_or_else(|| {
        Error::Usage(format!(
            "--from-store: {url} holds no run of {} (spec hash {}) on branch `{}`; push one (check --store) or pass --branch",
            spec.path.display(),
            &spec.hash[..spec.hash.len().min(12)],
            crate::foundation::sanitize::line(&branch)
        ))
    })?;
    let parts: Vec<&cgp_store::store::RunInfo> = if newest.shard.is_none() {
        vec![newest]
    } else {
        runs.iter()
            .filter(|r| r.shard.is_some() && r.spec_hash == spec.hash && r.git_commit == newest.git_commit)
            .collect()
    };
    let mut got = Vec::new();
    for p in &parts {
        let one = store.results(
            &Filter {
                run_id: Some(p.id.clone()),
                ..Filter::default()
            },
            true,
        )?;
        got.extend(one.into_iter().map(|(info, r)| (info.label(), r)));
    }
    if got.len() == 1 {
        return got
            .pop()
            .ok_or_else(|| Error::Usage("--from-store: the run vanished".to_owned()));
    }
    let label = PathBuf::from(format!(
        "{} (merged from {} shard runs)",
        newest.label().display(),
        got.len()
    ));
    Ok((label, crate::outcome::merge(got)?))
}

/// The baselines that `baseline update --from` of the last `settings.history` whole runs of
/// `spec` on `branch` (oldest first) would write, in a new temporary folder: what `calibrate
/// --store` reads its job drift from. A run that update would refuse (errors, another GPU per
/// row) is left out with a note; regressions are taken, as a refresh after a merge takes them.
///
/// # Errors
/// The store's; no run of the spec on the branch (exit 2); a folder that cannot be written.
pub(crate) fn replay_baselines(
    url: &StoreUrl,
    spec: &crate::spec::Spec,
    targets: &[&crate::spec::Target],
    branch: Option<&str>,
) -> Result<tempfile::TempDir> {
    let mut store = Store::open(url, Access::Read)?;
    let runs = store.runs(&Filter {
        branch: branch.map(str::to_owned),
        ..Filter::default()
    })?;
    let ours: Vec<_> = runs
        .iter()
        .filter(|r| r.spec_hash == spec.hash && r.shard.is_none())
        .collect();
    if ours.is_empty() {
        return Err(Error::Usage(format!(
            "--store: {url} holds no whole run of {} (spec hash {}){}; push one (check --store)",
            spec.path.display(),
            &spec.hash[..spec.hash.len().min(12)],
            branch
                .map(|b| format!(" on branch `{}`", crate::foundation::sanitize::line(b)))
                .unwrap_or_default()
        )));
    }
    let dir = crate::foundation::fsutil::signal_safe_temp_dir("cgp-gate-calibrate-")?;
    let baselines = crate::commands::baseline_store(dir.path());
    let last = ours.len().saturating_sub(spec.settings.history);
    for info in &ours[last..] {
        let filter = Filter {
            run_id: Some(info.id.clone()),
            ..Filter::default()
        };
        for (info, results) in store.results(&filter, true)? {
            let label = info.label();
            let taken =
                crate::run::update::samples_from_results(&results, spec, &label).and_then(|samples| {
                    let fp = results.fingerprint.clone();
                    crate::run::update::write_baselines(
                        spec,
                        targets,
                        &samples,
                        &|_| fp.clone(),
                        &baselines,
                        results.git_commit.clone(),
                        None,
                        &mut std::io::sink(),
                    )
                });
            if let Err(e) = taken {
                let _ = std::io::Write::write_all(
                    &mut std::io::stderr(),
                    format!("note: --store: run {} left out: {e}\n", label.display()).as_bytes(),
                );
            }
        }
    }
    Ok(dir)
}
