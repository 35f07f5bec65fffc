//! `cgp-gate calibrate`: measure (or replay) unchanged code, then `crate::history::calibrate` and
//! `report::calibrate` do the rest.

use std::io::Write;
use std::path::PathBuf;

use super::{Reps, Selected, SourceOptions, measure_once, stdout_err};
use crate::foundation::error::{Error, Result};
use crate::foundation::exit_codes::Exit;

/// Everything `calibrate` needs from the command line.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    pub source: SourceOptions,
    /// Repetitions per size of a live run (a recording gives every one it holds).
    pub repetitions: u32,
    pub json: Option<PathBuf>,
    pub markdown: Option<PathBuf>,
    /// The stored baselines (`--baselines DIR`): their history gives each row's job drift.
    pub baselines: Option<PathBuf>,
    /// `--store URL [--branch B]`: the job drift from the store's runs instead.
    pub store: super::store::StoreOptions,
}

/// From a recording: every repetition it holds, bounded so a damaged manifest cannot ask for
/// billions.
const MAX_REPLAYED_REPETITIONS: u32 = 100_000;

/// Run `calibrate`.
///
/// # Errors
/// Spec errors, profiler setup errors, write errors.
pub(crate) fn run(args: &Options, ui: &super::Ui, out: &mut dyn Write) -> Result<Exit> {
    refuse_overwriting_inputs(args)?;
    let sel = Selected::load(&args.source)?;
    let targets = sel.targets();
    let n = if args.source.replay.is_some() {
        MAX_REPLAYED_REPETITIONS
    } else {
        args.repetitions
    };
    let mut progress = ui.progress(std::collections::BTreeMap::new());
    let mut run = measure_once(
        &args.source,
        &sel,
        &targets,
        None,
        Reps::Calibrate(n),
        progress.as_mut(),
    )?;
    if !run.m.errors.is_empty() {
        return Ok(no_calibration(&run.m.errors));
    }
    let gpu_name = targets
        .first()
        .and_then(|t| run.fingerprints.get(&t.name))
        .map(|f| f.gpu_name.clone())
        .unwrap_or_default();
    crate::run::engine::add_derived(&targets, &mut run.m.samples, gpu_name.as_str());
    let baselines = job_drift_baselines(args, &sel, &targets, &run.fingerprints)?;
    let opts = crate::history::CalibrateOptions::default();
    let bar = calibrating_bar(ui);
    let c = crate::history::calibrate_with_progress(
        &targets,
        &run.m.samples,
        &sel.spec.settings,
        crate::history::CalibrationSources {
            source: &run.source,
            synthetic: run.synthetic,
            baselines: baselines.as_ref(),
        },
        &opts,
        &mut |done, total, what| {
            bar.set_length(total as u64);
            bar.set_position(done as u64);
            bar.set_message(what.to_owned());
        },
    );
    bar.finish_and_clear();
    let table = crate::report::calibrate::console(&c, ui.console());
    write!(out, "{table}").map_err(stdout_err)?;
    write_reports(args, &c)?;
    Ok(Exit::Ok)
}

/// No report of this run goes onto the spec, the recording, the `--record` folder or the
/// baselines.
fn refuse_overwriting_inputs(args: &Options) -> Result<()> {
    let mut inputs = vec![("the spec", args.source.spec.as_path())];
    inputs.extend(args.source.replay.as_deref().map(|p| ("the recording", p)));
    inputs.extend(args.source.record.as_deref().map(|p| ("the --record folder", p)));
    inputs.extend(args.baselines.as_deref().map(|p| ("the baselines", p)));
    let outputs = super::outputs::given(&[
        ("--json", args.json.as_deref()),
        ("--markdown", args.markdown.as_deref()),
    ]);
    super::outputs::refuse_outputs_onto_inputs(&outputs, &inputs)
}

/// The measurement failed: each failure said on stderr, and the exit code they give.
fn no_calibration(errors: &[crate::outcome::results::RunError]) -> Exit {
    for e in errors {
        // A run error may quote the program's output: sanitised, and not `eprintln!`,
        // which panics on a closed stderr.
        let _ = writeln!(
            std::io::stderr(),
            "error: {}",
            crate::foundation::sanitize::block(&e.message)
        );
    }
    eprintln!("error: {} failure(s): no calibration", errors.len());
    // The one mapping: a damaged recording is invalid input (2), as in `baseline update`.
    crate::outcome::decide::error_exit_code(errors)
}

/// The baselines that give each row its job drift: `--baselines DIR`, or those the store's
/// last runs give; `None` when neither is asked for.
fn job_drift_baselines(
    args: &Options,
    sel: &Selected,
    targets: &[&crate::spec::Target],
    fingerprints: &std::collections::BTreeMap<String, crate::gpu::fingerprint::Fingerprint>,
) -> Result<Option<crate::history::CalibrationBaselines>> {
    // From a store: the baselines `baseline update --from` of its last runs would write, in a
    // folder of our own, read as `--baselines` reads its folder.
    let replayed = match &args.store.store {
        Some(_) => {
            let url = args.store.required()?;
            Some(super::store::replay_baselines(
                &url,
                &sel.spec,
                targets,
                args.store.branch.as_deref(),
            )?)
        }
        None => None,
    };
    let dir = args
        .baselines
        .as_deref()
        .or(replayed.as_ref().map(tempfile::TempDir::path));
    match dir {
        Some(dir) => Ok(Some(load_baselines(dir, targets, fingerprints)?)),
        None => Ok(None),
    }
}

/// The simulations take seconds (7 s for the example spec): say what is being done, on a
/// terminal as a bar that is cleared at the end, elsewhere not at all (the table follows).
fn calibrating_bar(ui: &super::Ui) -> indicatif::ProgressBar {
    if ui.verbosity == crate::commands::progress::Verbosity::Quiet {
        return indicatif::ProgressBar::hidden();
    }
    let b = indicatif::ProgressBar::new(0);
    b.set_draw_target(indicatif::ProgressDrawTarget::stderr());
    if let Ok(style) = indicatif::ProgressStyle::with_template("calibrating {pos}/{len} {bar:30} {msg}") {
        b.set_style(style);
    }
    b
}

/// `--json` and `--markdown`, when asked for.
fn write_reports(args: &Options, c: &crate::history::Calibration) -> Result<()> {
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(c)
            .map_err(|e| Error::io("write", path, std::io::Error::other(e)))?;
        crate::foundation::fsutil::write_output(path, (text + "\n").as_bytes())?;
    }
    if let Some(path) = &args.markdown {
        let md = crate::report::calibrate::markdown(c);
        crate::foundation::fsutil::write_output(path, md.as_bytes())?;
    }
    Ok(())
}

/// The stored baseline of each target for the GPU measured (`--baselines DIR`, the layout
/// `check` reads: `DIR/<gpu-key>/<target>.json`), warm-ups of a schema-1 file dropped as `check`
/// drops them. A target without one is said on stderr (its rows get no job drift).
///
/// # Errors
/// A directory that does not exist, or holds no baseline of any target; unreadable files.
fn load_baselines(
    dir: &std::path::Path,
    targets: &[&crate::spec::Target],
    fingerprints: &std::collections::BTreeMap<String, crate::gpu::fingerprint::Fingerprint>,
) -> Result<crate::history::CalibrationBaselines> {
    if !dir.is_dir() {
        return Err(Error::input(
            dir,
            "baselines directory not found (--baselines expects the directory `check` reads: DIR/<gpu-key>/<target>.json)",
        ));
    }
    let store = crate::baseline::Store::new(dir);
    let mut out = crate::history::CalibrationBaselines::new();
    for t in targets {
        let key = fingerprints.get(&t.name).map(|f| f.gpu_key()).unwrap_or_default();
        match store.load(&key, &t.name)? {
            Some(mut b) => {
                b.drop_warmup_v1(t.warmup);
                out.insert(t.name.clone(), b);
            }
            None => {
                let _ = writeln!(
                    std::io::stderr(),
                    "note: no baseline of `{}` at {}: its rows get no job drift",
                    crate::foundation::sanitize::line(&t.name),
                    store.path(&key, &t.name).display()
                );
            }
        }
    }
    if out.is_empty() {
        return Err(Error::input(
            dir,
            "no baseline of any selected target for this GPU: the job drift needs the baselines `check` compares with (DIR/<gpu-key>/<target>.json)",
        ));
    }
    Ok(out)
}
