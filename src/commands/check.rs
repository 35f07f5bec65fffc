//! `cgp-gate check`: profile (or replay), compare against the baselines, re-measure, decide,
//! write the reports; the exit code is [`crate::outcome::results::exit_code`]'s.

use std::io::Write;
use std::path::PathBuf;

use crate::foundation::exit_codes::Exit;

use super::{Selected, ShardOptions, SourceOptions, finish_recording, open_run, stdout_err};
use crate::foundation::error::Result;
use crate::outcome::results::FailOn;

/// Everything `check` needs from the command line.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    pub source: SourceOptions,
    pub baselines: PathBuf,
    pub fail_on: FailOn,
    pub allow_fingerprint_mismatch: bool,
    /// Profile every kernel, even those whose SASS equals the baseline's (`--no-skip`).
    pub no_skip: bool,
    /// `--allow-missing`.
    pub allow_missing: bool,
    /// `--allow-no-baselines`.
    pub allow_no_baselines: bool,
    /// `--base`, `--base-dir`, `--build`, `--build-timeout`, `--confirm` (docs/confirm.md).
    pub base: BaseOptions,
    pub shard: ShardOptions,
    /// The report files (`--json` among them) and the GitHub reports.
    pub reports: crate::publish::ReportFlags,
    /// `--store`, `--branch`: where the results are pushed (docs/store.md).
    pub store: super::store::StoreOptions,
}

pub(crate) use super::confirm::BaseOptions;

/// Run `check`.
///
/// # Errors
/// Spec, baseline and setup errors (see [`crate::run::check::run_check`]); report failures.
pub(crate) fn run(args: &Options, ui: &super::Ui, out: &mut dyn Write) -> Result<Exit> {
    let mut inputs = vec![
        ("the spec", args.source.spec.as_path()),
        ("the baselines", args.baselines.as_path()),
    ];
    inputs.extend(args.source.replay.as_deref().map(|p| ("the recording", p)));
    inputs.extend(
        args.shard
            .shard_costs
            .as_deref()
            .map(|p| ("the --shard-costs file", p)),
    );
    super::outputs::refuse_overwriting_inputs(&args.reports.paths, &inputs)?;
    let mut sel = Selected::load(&args.source)?;
    // `--base`: resolved before anything runs (a revision that is not there is exit 2), and
    // the screen reads its passes at its share of the level (run::confirm).
    let plan = super::confirm::Plan::new(&args.base, &sel.spec, &args.source.spec)?;
    let user_spec = sel.spec.clone();
    if let Some(p) = &plan {
        sel.spec.settings.confidence = p.levels.screen;
    }
    let dir = sel.spec.base_dir();
    let pusher = super::store::Pusher::new(&args.store, sel.spec.settings.store.as_deref(), "check", &dir)?;
    let targets = sel.targets();
    let shard = args.shard.selection(&targets)?;
    // The ETA's first guess per target: the balancing file, else what this command wrote last time.
    let prior = super::ui::prior_costs(&[
        args.shard.shard_costs.as_deref(),
        args.reports.paths.json.as_deref(),
    ]);
    let mut progress = ui.progress(prior);
    let (mut profiler, versions, session, mut recorder) = open_run(
        &args.source,
        &sel,
        &targets,
        &mut crate::commands::progress::NoteWriter::new(progress.as_mut()),
    )?;
    let ci_commit = super::ci_commit();
    let opts = crate::run::check::CheckOptions {
        baselines: args.baselines.clone(),
        fail_on: args.fail_on,
        allow_fingerprint_mismatch: args.allow_fingerprint_mismatch,
        gpu: session.gpu.as_deref(),
        gpu_note: session.gpu_note.as_deref(),
        shard,
        no_skip: args.no_skip,
        allow_missing: args.allow_missing,
        allow_no_baselines: args.allow_no_baselines,
        ci_commit: ci_commit.as_deref(),
    };
    let mut watch = session.watch(&sel.spec.settings);
    let results = crate::run::check::run_check(
        &sel.spec,
        &targets,
        &mut crate::profile::Measuring::new(profiler.as_mut()),
        recorder.as_mut(),
        watch.as_mut(),
        &opts,
        progress.as_mut(),
    );
    drop(watch);
    let results = match (results, &plan) {
        (Ok(screen), Some(p)) => super::confirm::confirm(
            p,
            screen,
            super::confirm::Stage {
                spec: &user_spec,
                targets: &targets,
                session: &session,
                fail_on: args.fail_on,
                allow_missing: args.allow_missing,
                shards: opts.shard.as_ref().map_or(1, |s| s.shard.n),
                progress: progress.as_mut(),
            },
        ),
        (r, _) => r,
    };
    progress.finish();
    session.finish()?;
    let mut results = results?;
    results.caveats = super::trust_caveats(&targets);
    finish_recording(
        recorder,
        &sel.spec,
        &versions,
        &results.fingerprint,
        &mut crate::commands::progress::NoteWriter::new(progress.as_mut()),
    )?;
    if let Some(p) = &args.reports.paths.json {
        results.write(p)?;
    }
    let table = crate::report::console::results_table_styled(&results, ui.console());
    write!(out, "{table}").map_err(stdout_err)?;
    writeln!(out, "{}", crate::report::console::run_health_line(&results)).map_err(stdout_err)?;
    out.flush().map_err(stdout_err)?;
    let env = crate::publish::GithubEnv::from_env();
    crate::publish::emit(&results, &args.reports.options(&env), &env)?;
    pusher.push(&results, args.reports.paths.json.as_deref())?;
    Ok(crate::run::check::exit_code(&results, args.fail_on))
}
