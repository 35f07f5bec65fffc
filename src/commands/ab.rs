//! `cgp-gate ab`: base and head trees measured in alternation on this GPU, judged pair by pair
//! (`crate::run::ab`); same results, reports and exit codes as `check`.

use std::io::Write;
use std::path::PathBuf;

use crate::foundation::exit_codes::Exit;

use super::stdout_err;
use crate::foundation::error::{Error, Result};
use crate::outcome::results::FailOn;

/// Everything `ab` needs from the command line.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    pub spec: PathBuf,
    pub targets: Vec<String>,
    /// `None` only with `replay`.
    pub base_dir: Option<PathBuf>,
    pub head_dir: PathBuf,
    pub record: Option<PathBuf>,
    pub replay: Option<PathBuf>,
    pub fail_on: FailOn,
    /// `--allow-missing`: kernels the head tree no longer launches do not fail the gate.
    pub allow_missing: bool,
    /// The report files (`--json` among them) and the GitHub reports.
    pub reports: crate::publish::ReportFlags,
    /// `--store`, `--branch`: where the results are pushed (docs/store.md).
    pub store: super::store::StoreOptions,
}

/// The head spec and the same spec as if it lay in the base tree (commands and relative paths
/// then resolve there).
fn ab_specs(args: &Options) -> Result<(crate::spec::Spec, crate::spec::Spec)> {
    let head = crate::spec::load(&args.spec)?;
    let Some(base_dir) = &args.base_dir else {
        return Ok((head.clone(), head));
    };
    let canon = |p: &std::path::Path| std::fs::canonicalize(p).map_err(|e| Error::io("find", p, e));
    let (spec_abs, head_abs, base_abs) = (canon(&args.spec)?, canon(&args.head_dir)?, canon(base_dir)?);
    let rel = spec_abs.strip_prefix(&head_abs).map_err(|_| {
        Error::Usage(format!(
            "the spec {} is not inside --head-dir {}; give the head tree's spec",
            args.spec.display(),
            args.head_dir.display()
        ))
    })?;
    let text = std::fs::read_to_string(&args.spec).map_err(|e| Error::io("read", &args.spec, e))?;
    let base = crate::spec::load_str(&text, &base_abs.join(rel))?;
    Ok((head, base))
}

/// No report of this run goes onto the spec, the recording or the `--record` folder.
fn refuse_overwriting_inputs(args: &Options) -> Result<()> {
    let mut inputs = vec![("the spec", args.spec.as_path())];
    inputs.extend(args.replay.as_deref().map(|p| ("the recording", p)));
    inputs.extend(args.record.as_deref().map(|p| ("the --record folder", p)));
    super::outputs::refuse_overwriting_inputs(&args.reports.paths, &inputs)
}

/// Run `ab`.
///
/// # Errors
/// Spec errors, unreadable recordings or manifests, setup failures, report failures.
pub(crate) fn run(args: &Options, ui: &super::Ui, out: &mut dyn Write) -> Result<Exit> {
    refuse_overwriting_inputs(args)?;
    let (head_spec, base_spec) = ab_specs(args)?;
    let pusher = super::store::Pusher::new(
        &args.store,
        head_spec.settings.store.as_deref(),
        "ab",
        &head_spec.base_dir(),
    )?;
    let (head_owned, base_owned) = chosen_targets(args, &head_spec, &base_spec)?;
    let head_targets: Vec<&crate::spec::Target> = head_owned.iter().collect();
    let base_targets: Vec<&crate::spec::Target> = base_owned.iter().collect();
    // The ETA's first guess per target: what this command wrote last time.
    let mut progress = ui.progress(super::ui::prior_costs(&[args.reports.paths.json.as_deref()]));
    check_record(args.record.as_deref())?;
    // Each tree's profiler is set up as `check` sets up its own (`super::open_profiler`): a
    // live run checks its targets first and takes CGP_GATE_RETRY_DELAYS_MS.
    let manifest = args
        .replay
        .as_deref()
        .map(crate::run::ab::AbManifest::read)
        .transpose()?
        .flatten();
    let side = |name: &str| args.replay.as_ref().map(|dir| dir.join(name));
    let mut base = super::open_profiler(side("base").as_deref(), &base_spec, &base_targets)?;
    let mut head = super::open_profiler(side("head").as_deref(), &head_spec, &head_targets)?;
    let mut versions = crate::profile::Versions::of(head.as_mut(), &head_targets)?;
    let session = if args.replay.is_some() {
        crate::run::session::Session::replay()
    } else {
        crate::run::session::Session::live(
            &head_targets,
            false,
            &mut crate::commands::progress::NoteWriter::new(progress.as_mut()),
        )?
    };
    let mut recs = args.record.as_deref().map(recorders).transpose()?;
    let ci_commit = super::ci_commit();
    let opts = crate::run::ab::AbOptions {
        fail_on: args.fail_on,
        allow_missing: args.allow_missing,
        gpu: session.gpu.as_deref(),
        manifest: manifest.as_ref(),
        ci_commit: ci_commit.as_deref(),
    };
    let mut watch = session.watch(&head_spec.settings);
    let run = crate::run::ab::run_ab(
        &head_spec,
        &mut crate::run::ab::Sides {
            base: &mut crate::profile::Measuring::new(base.as_mut()),
            head: &mut crate::profile::Measuring::new(head.as_mut()),
            base_targets: &base_targets,
            head_targets: &head_targets,
        },
        recs.as_mut().map(|(b, h)| (b, h)),
        watch.as_mut(),
        &opts,
        progress.as_mut(),
    );
    progress.finish();
    drop(watch);
    session.finish()?;
    let run = run?;
    let mut results = run.results;
    results.caveats = super::trust_caveats(&head_targets);
    if let (Some(dir), Some(recs)) = (&args.record, recs) {
        // A harness's version is known once its first file is read (run_ab's probe).
        if head_targets
            .iter()
            .any(|t| crate::profile::harness::format_of(t.profiler).is_some())
        {
            versions = crate::profile::Versions::of(head.as_mut(), &head_targets)?;
        }
        write_recording(
            dir,
            recs,
            &head_spec,
            &versions,
            &results,
            run.order,
            args.base_dir.as_deref(),
        )?;
        progress.note(&format!("recorded both trees in {}", dir.display()));
    }
    report(args, ui, out, &results, &pusher)?;
    Ok(crate::outcome::decide::exit_code(
        results.verdict,
        &results.errors,
        args.fail_on,
    ))
}

/// The targets the command line chose (all of them when it named none), as the head spec and
/// the base spec have them; a name the head spec does not have is a usage error.
fn chosen_targets(
    args: &Options,
    head: &crate::spec::Spec,
    base: &crate::spec::Spec,
) -> Result<(Vec<crate::spec::Target>, Vec<crate::spec::Target>)> {
    if let Some(n) = args.targets.iter().find(|n| head.target(n).is_none()) {
        return Err(Error::Usage(format!(
            "no target `{n}` in {}",
            args.spec.display()
        )));
    }
    let pick = |s: &crate::spec::Spec| -> Vec<crate::spec::Target> {
        s.targets
            .iter()
            .filter(|t| args.targets.is_empty() || args.targets.contains(&t.name))
            .cloned()
            .collect()
    };
    Ok((pick(head), pick(base)))
}

/// The recorders of `--record`: the base tree's in `DIR/base`, the head tree's in `DIR/head`.
fn recorders(
    dir: &std::path::Path,
) -> Result<(crate::profile::record::Recorder, crate::profile::record::Recorder)> {
    Ok((
        crate::profile::record::Recorder::new(&dir.join("base"))?,
        crate::profile::record::Recorder::new(&dir.join("head"))?,
    ))
}

/// Write both trees' recordings of `--record` (each with its manifest) and the A/B manifest
/// that says in which order the runs happened.
fn write_recording(
    dir: &std::path::Path,
    (base, head): (crate::profile::record::Recorder, crate::profile::record::Recorder),
    spec: &crate::spec::Spec,
    versions: &crate::profile::Versions,
    results: &crate::outcome::results::Results,
    order: Vec<crate::run::ab::OrderEntry>,
    base_dir: Option<&std::path::Path>,
) -> Result<()> {
    base.finish_with(&spec.hash, versions, &results.fingerprint)?;
    head.finish_with(&spec.hash, versions, &results.fingerprint)?;
    crate::run::ab::AbManifest {
        schema_version: crate::run::ab::AB_MANIFEST_VERSION,
        base_commit: base_dir.and_then(crate::run::engine::git_head),
        head_commit: results.git_commit.clone(),
        order,
        ..crate::run::ab::AbManifest::default()
    }
    .write(dir)
}

/// The results as the command line asked: the JSON file, the table on stdout, the report files
/// and GitHub reports, the push to the store.
fn report(
    args: &Options,
    ui: &super::Ui,
    out: &mut dyn Write,
    results: &crate::outcome::results::Results,
    pusher: &super::store::Pusher,
) -> Result<()> {
    let json = args.reports.paths.json.as_deref();
    if let Some(p) = json {
        results.write(p)?;
    }
    let table = crate::report::console::results_table_styled(results, ui.console());
    write!(out, "{table}").map_err(stdout_err)?;
    out.flush().map_err(stdout_err)?;
    let env = crate::publish::GithubEnv::from_env();
    crate::publish::emit(results, &args.reports.options(&env), &env)?;
    pusher.push(results, json)
}

/// A folder `--record` may not write into is refused first, before anything runs: it may be
/// new, empty, or an A/B recording cgp-gate wrote (its manifest, `base/` and `head/`).
fn check_record(dir: Option<&std::path::Path>) -> Result<()> {
    use crate::profile::record::{Layout, check_destination};
    let layout = Layout::AbRecording {
        newest: crate::run::ab::AB_MANIFEST_VERSION,
    };
    dir.map_or(Ok(()), |d| check_destination(d, layout))
}
