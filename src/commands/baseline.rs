//! `cgp-gate baseline update` and `cgp-gate baseline show`.

use crate::measured::samples::TargetSize;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::{Reps, Selected, ShardOptions, SourceOptions, measure_once, stdout_err};
use crate::foundation::error::Result;
use crate::foundation::exit_codes::Exit;

/// Everything `baseline update` needs from the command line.
#[derive(Debug, Clone)]
pub(crate) struct UpdateOptions {
    pub source: SourceOptions,
    pub baselines: PathBuf,
    /// Take the samples of a previous `check --json` instead of profiling.
    pub from: Option<PathBuf>,
    /// With `from`: store results that hold regressions (refused otherwise).
    pub accept_regressions: bool,
    /// `--from-store`: the samples of the newest run of this spec in the store, on `--branch`.
    pub from_store: bool,
    pub shard: ShardOptions,
    /// `--store`, `--branch`: where the run is pushed, and where `--from-store` reads.
    pub store: super::store::StoreOptions,
}

/// Run `baseline update`.
///
/// # Errors
/// Spec errors, unreadable results, the store's errors.
pub(crate) fn update(args: &UpdateOptions, ui: &super::Ui, out: &mut dyn Write) -> Result<Exit> {
    refuse_store_in_recording(args)?;
    let sel = Selected::load(&args.source)?;
    let targets = sel.targets();
    let shard = args.shard.selection(&targets)?;
    // `explain: remeasure`: the baseline holds the explanatory counters, so that `check` can
    // compare the ones it collects when a row is doubtful or changed (docs/why.md).
    let explained: Vec<crate::spec::Target> = targets.iter().map(|t| crate::plan::explaining(t)).collect();
    let targets: Vec<&crate::spec::Target> = explained.iter().collect();
    let store = super::baseline_store(&args.baselines);
    let commit = crate::run::engine::git_commit(super::ci_commit().as_deref(), &sel.spec.base_dir());
    let pusher = super::store::Pusher::new(
        &args.store,
        sel.spec.settings.store.as_deref(),
        "baseline",
        &sel.spec.base_dir(),
    )?;
    if let Some((results, from)) = taken_results(args, pusher.url(), &sel.spec)? {
        update_from(
            args, &sel.spec, &targets, &store, commit, &results, &from, &pusher, out,
        )?;
        return Ok(Exit::Ok);
    }
    let mut progress = ui.progress(super::ui::prior_costs(&[args.shard.shard_costs.as_deref()]));
    let mut run = measure_once(
        &args.source,
        &sel,
        &targets,
        shard.as_ref(),
        Reps::Baseline,
        progress.as_mut(),
    )?;
    if !run.m.errors.is_empty() {
        for e in &run.m.errors {
            // A run error may quote the program's output: sanitised, and not `eprintln!`,
            // which panics on a closed stderr.
            let _ = writeln!(
                std::io::stderr(),
                "error: {}",
                crate::foundation::sanitize::block(&e.message)
            );
        }
        eprintln!(
            "error: {} failure(s): no baseline was written",
            run.m.errors.len()
        );
        // A damaged recording is invalid input (2); any other failure is the profiler's (3).
        return Ok(crate::outcome::decide::exit_code(
            crate::outcome::results::RunVerdict::Error,
            &run.m.errors,
            crate::outcome::results::FailOn::Regression,
        ));
    }
    for warning in fewer_runs_than_asked(&targets, &run.m.reps_done) {
        eprintln!("{warning}");
    }
    let fp_of = |t: &crate::spec::Target| run.fingerprints.get(&t.name).cloned().unwrap_or_default();
    let gpu_name = targets.first().map(|t| fp_of(t).gpu_name).unwrap_or_default();
    crate::run::engine::add_derived(&targets, &mut run.m.samples, gpu_name.as_str());
    crate::run::update::write_baselines(
        &sel.spec,
        &targets,
        &run.m.samples,
        &fp_of,
        &store,
        commit.clone(),
        shard.as_ref().map(|s| &s.rows),
        out,
    )?;
    if pusher.url().is_some() {
        let results = super::store::measured_results(&sel.spec, &targets, &run, shard.as_ref(), commit);
        pusher.push(&results, None)?;
    }
    Ok(Exit::Ok)
}

/// The store is written into (`<baselines>/<gpu>/<target>.json`): never into a recording this
/// run reads or writes (`--replay`, `--record`), nor one inside the store, which would mix
/// baselines with its repetitions (a replay then refuses the recording, and `--record` replaces
/// the folder whole, baselines with it).
fn refuse_store_in_recording(args: &UpdateOptions) -> Result<()> {
    let canonical = |p: &Path| {
        std::fs::canonicalize(p).ok().or_else(|| {
            let parent = p
                .parent()
                .filter(|x| !x.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            Some(std::fs::canonicalize(parent).ok()?.join(p.file_name()?))
        })
    };
    let Some(store) = canonical(&args.baselines) else {
        return Ok(());
    };
    let recordings = [
        ("--replay", &args.source.replay),
        ("--record", &args.source.record),
    ];
    for (flag, rec) in recordings {
        let Some(rec) = rec.as_deref() else { continue };
        let Some(r) = canonical(rec) else { continue };
        if store.starts_with(&r) || r.starts_with(&store) {
            return Err(crate::foundation::error::Error::Usage(format!(
                "--baselines {} and {flag} {} are the same folder or one holds the other: baseline update would write the baselines into the recording (or the recording over them); give the baselines their own folder",
                args.baselines.display(),
                rec.display()
            )));
        }
    }
    Ok(())
}

/// The results `--from FILE` or `--from-store` names, with the path (or the store's name for the
/// run) that errors name; `None` for a fresh measurement.
fn taken_results(
    args: &UpdateOptions,
    results_store: Option<&cgp_store::store::StoreUrl>,
    spec: &crate::spec::Spec,
) -> Result<Option<(crate::outcome::results::Results, PathBuf)>> {
    if args.accept_regressions && args.from.is_none() && !args.from_store {
        return Err(crate::foundation::error::Error::Usage(
            "--accept-regressions goes with --from RESULTS_JSON or --from-store: a fresh measurement compares nothing".to_owned(),
        ));
    }
    if args.from_store {
        let url = results_store.ok_or_else(|| {
            crate::foundation::error::Error::Usage(
                "--from-store needs a store: --store URL, CGP_GATE_STORE or settings.store".to_owned(),
            )
        })?;
        let (label, results) = super::store::newest_run(url, spec, args.store.branch.as_deref())?;
        let _ = writeln!(
            std::io::stderr(),
            "--from-store: {} ({}, commit {}) of {url}",
            label.display(),
            results.date,
            results.git_commit.as_deref().unwrap_or("unknown")
        );
        return Ok(Some((results, label)));
    }
    args.from
        .as_ref()
        .map(|p| Ok((crate::outcome::results::read(p)?, p.clone())))
        .transpose()
}

/// `baseline update --from` (or `--from-store`): the baselines from those results' samples,
/// and the run pushed to the store (once: `check` may have pushed it already; not when it
/// came from the store).
#[expect(
    clippy::too_many_arguments,
    reason = "the update's parts, each named where it is used"
)]
fn update_from(
    args: &UpdateOptions,
    spec: &crate::spec::Spec,
    targets: &[&crate::spec::Target],
    store: &crate::baseline::Store,
    commit: Option<String>,
    results: &crate::outcome::results::Results,
    from: &Path,
    pusher: &super::store::Pusher,
    out: &mut dyn Write,
) -> Result<()> {
    let samples = crate::run::update::samples_from_results(results, spec, from)?;
    let accepted = crate::run::update::refuse_regressions(results, from, args.accept_regressions)?;
    for row in &accepted {
        let _ = writeln!(
            std::io::stderr(),
            "warning: --accept-regressions: the regression of {} becomes the baseline; later checks compare with it",
            crate::foundation::sanitize::line(row)
        );
    }
    let fp = results.fingerprint.clone();
    // A shard's results cover some sizes only: update those, keep the others.
    let only: Option<std::collections::BTreeSet<TargetSize>> = results.shard.as_ref().map(|_| {
        results
            .rows
            .iter()
            .map(|r| TargetSize::new(&r.key.target, &r.key.size))
            .collect()
    });
    crate::run::update::write_baselines(
        spec,
        targets,
        &samples,
        &|_| fp.clone(),
        store,
        results.git_commit.clone().or(commit),
        only.as_ref(),
        out,
    )?;
    // The run the baselines came from is stored (once: `check` may have pushed it already);
    // one read from the store is there.
    if !args.from_store {
        pusher.push(results, Some(from))?;
    }
    Ok(())
}

/// A warning for each target x size whose baseline is stored from fewer runs (processes) than
/// its `baseline_repetitions` asks: a recording that holds fewer. The baseline is still written
/// (it is what the recording has), but its noise between processes rests on those runs only.
fn fewer_runs_than_asked(
    targets: &[&crate::spec::Target],
    reps_done: &std::collections::BTreeMap<TargetSize, u32>,
) -> Vec<String> {
    reps_done
        .iter()
        .filter_map(|(TargetSize { target, size }, done)| {
            let t = targets.iter().find(|t| &t.name == target)?;
            (*done < t.baseline_repetitions).then(|| {
                format!(
                    "warning: the baseline of {target}[{size}] is stored from {done} run{} (the recording holds no more), \
                     though the spec asks `baseline_repetitions: {}`: its noise between processes rests on {done} run{}; \
                     record {} repetitions for a baseline as the spec wants it",
                    if *done == 1 { "" } else { "s" },
                    t.baseline_repetitions,
                    if *done == 1 { "" } else { "s" },
                    t.baseline_repetitions
                )
            })
        })
        .collect()
}

/// Run `baseline show`.
///
/// # Errors
/// Unreadable baselines; write errors.
pub(crate) fn show(baselines: &Path, out: &mut dyn Write) -> Result<Exit> {
    let files = crate::baseline::Store::new(baselines).load_all()?;
    if files.is_empty() {
        writeln!(out, "no baselines in {}", baselines.display()).map_err(stdout_err)?;
    } else {
        write!(out, "{}", crate::baseline::render_show(&files)).map_err(stdout_err)?;
    }
    Ok(Exit::Ok)
}
