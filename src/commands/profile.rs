//! `cgp-gate profile`: measure and print the samples (no comparison), or with `--dry-run` print
//! what would run.

use std::io::Write;

use super::{Selected, SourceOptions, measure_once, stdout_err};
use crate::foundation::error::{Error, Result};
use crate::foundation::exit_codes::Exit;

/// Everything `profile` needs from the command line.
#[derive(Debug, Clone)]
pub struct Options {
    pub source: SourceOptions,
    pub json: bool,
    pub dry_run: bool,
}

/// Run `profile`.
///
/// # Errors
/// Spec errors, profiler setup errors, write errors.
pub fn run(args: &Options, ui: &super::Ui, out: &mut dyn Write) -> Result<Exit> {
    let sel = Selected::load(&args.source)?;
    let targets = sel.targets();
    if args.dry_run {
        crate::profile::live::preflight(&sel.spec, &targets)?;
        let session = crate::run::session::Session::live(&targets, true, out)?;
        // The command lines are built for the installed ncu, as a real run builds them.
        let by_ncu = |t: &crate::spec::Target| t.profiler == crate::spec::ProfilerKind::Ncu;
        let uses_ncu = targets.iter().any(|t| by_ncu(t));
        let release = if uses_ncu { dry_run_release(out)? } else { None };
        let mut cupti = None;
        for t in targets.iter().filter(|t| by_ncu(t)) {
            let missing = crate::ncu::command::unsupported_options(release, *t);
            if !missing.is_empty() {
                writeln!(
                    out,
                    "{}: this ncu has no {}: `profile` and `check` refuse this target before running it",
                    t.name,
                    missing.join(", ")
                )
                .map_err(stdout_err)?;
            }
        }
        for w in crate::plan::initial_work(&targets, None) {
            let app = crate::plan::app_argv(w.target, w.size).map_err(Error::Usage)?;
            // Each target's own profiler, with the options a live run passes it.
            let argv: Vec<String> = if crate::profile::cupti::is_cupti(w.target) {
                cupti_argv(&mut cupti, &sel.spec, &w)?
            } else {
                let (program, opts) = if crate::profile::nsys::is_nsys(w.target) {
                    let stem = std::path::Path::new("<tmp>/run-N");
                    ("nsys", crate::profile::nsys::nsys_profile_args(stem))
                } else {
                    let log = std::path::Path::new("<log>");
                    let metrics = crate::plan::ncu_metrics(w.target);
                    let opts = crate::ncu::command::ncu_options_for(release, w.target, &metrics, log);
                    ("ncu", opts)
                };
                std::iter::once(program.to_owned())
                    .chain(opts.iter().map(|a| a.to_string_lossy().into_owned()))
                    .chain(app)
                    .collect()
            };
            // Shell-quoted (shlex), so that the line can be pasted: a `regex:a|b` filter or an
            // argument with a space stays one word. Only a NUL byte cannot be quoted, and no
            // argv can hold one.
            let line = if crate::profile::cupti::is_cupti(w.target) {
                crate::profile::cupti::shell_line(&argv)
            } else {
                shlex::try_join(argv.iter().map(String::as_str)).map_err(|e| {
                    Error::Usage(format!("cannot quote the command line of {}: {e}", w.target.name))
                })?
            };
            writeln!(out, "{}[{}] x{}: {}", w.target.name, w.size.key(), w.reps.1, line)
                .map_err(stdout_err)?;
        }
        session.finish()?;
        return Ok(Exit::Ok);
    }
    let mut progress = ui.progress(std::collections::BTreeMap::new());
    let run = measure_once(
        &args.source,
        &sel,
        &targets,
        None,
        super::Reps::Check,
        progress.as_mut(),
    )?;
    let fingerprint = targets
        .first()
        .and_then(|t| run.fingerprints.get(&t.name))
        .cloned()
        .unwrap_or_default();
    if args.json {
        serde_json::to_writer_pretty(&mut *out, &run.m.samples.series.values().collect::<Vec<_>>())
            .map_err(|e| stdout_err(e.into()))?;
        writeln!(out).map_err(stdout_err)?;
    } else {
        writeln!(
            out,
            "source: {} ({}); GPU: {}",
            run.source,
            run.versions.describe(),
            fingerprint.gpu_name
        )
        .map_err(stdout_err)?;
        writeln!(
            out,
            "health: {}",
            crate::report::console::health_line(&run.health.unwrap_or_default())
        )
        .map_err(stdout_err)?;
        let table = crate::report::console::samples_table_styled(&run.m.samples, ui.console());
        write!(out, "{table}").map_err(stdout_err)?;
    }
    for e in &run.m.errors {
        // A run error may quote the program's output: sanitised, and not `eprintln!`,
        // which panics on a closed stderr.
        let _ = writeln!(
            std::io::stderr(),
            "error: {}",
            crate::foundation::sanitize::block(&e.message)
        );
    }
    Ok(if run.m.errors.is_empty() {
        Exit::Ok
    } else {
        crate::outcome::decide::exit_code(
            crate::outcome::results::RunVerdict::Error,
            &run.m.errors,
            crate::outcome::results::FailOn::Regression,
        )
    })
}

/// The installed ncu's release for `--dry-run`, after saying which ncu and release the command
/// lines are for (or that none was found and the newest release is assumed).
fn dry_run_release(out: &mut dyn Write) -> Result<Option<crate::ncu::command::NcuRelease>> {
    use crate::ncu::command::{NcuRelease, OLDEST_CHECKED};
    let ncu = crate::ncu::install::detect_ncu();
    let release = ncu.version.as_deref().and_then(NcuRelease::from_version);
    let line = match (&ncu.path, &ncu.version, release) {
        (Some(path), Some(version), Some(r)) if r < OLDEST_CHECKED => format!(
            "ncu: {path} (version {version}); command lines for Nsight Compute {r}, which is older than the oldest release cgp-gate checks ({OLDEST_CHECKED}): ncu may reject an option (cgp-gate then names it)"
        ),
        (Some(path), Some(version), Some(r)) => {
            format!("ncu: {path} (version {version}); command lines for Nsight Compute {r}")
        }
        _ => format!(
            "ncu: {}; command lines for the newest Nsight Compute (every option cgp-gate knows; a run with ncu installed leaves out what its release lacks)",
            ncu.error.as_deref().unwrap_or("version unknown")
        ),
    };
    writeln!(out, "{line}").map_err(stdout_err)?;
    Ok(release)
}

/// A cupti target's dry-run argv: the program itself, with the variables that load the injection
/// library in front (`NAME=value cmd args`); the trace goes to `<target>.cupti`. The profiler is
/// made at the first cupti target.
fn cupti_argv(
    cupti: &mut Option<crate::profile::cupti::CuptiProfiler>,
    spec: &crate::spec::Spec,
    w: &crate::plan::Work<'_>,
) -> Result<Vec<String>> {
    if cupti.is_none() {
        *cupti = Some(crate::profile::cupti::CuptiProfiler::new(&spec.base_dir())?);
    }
    let p = cupti.as_mut().expect("made above");
    let job = crate::profile::Job {
        target: w.target,
        size: w.size,
        rep: 0,
    };
    let trace = std::path::PathBuf::from(format!("{}.cupti", w.target.name));
    let run = p.plan_to(job, &trace)?;
    Ok(crate::profile::cupti::argv_with_env(&run.env, &run.app))
}
