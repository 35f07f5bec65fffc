//! `cgp-gate profile`: measure and print the samples (no comparison), or with `--dry-run` print
//! what would run.

use std::io::Write;

use super::{Selected, SourceOptions, measure_once, stdout_err};
use crate::foundation::error::Result;
use crate::foundation::exit_codes::Exit;

/// Everything `profile` needs from the command line.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    pub source: SourceOptions,
    pub json: bool,
    pub dry_run: bool,
}

/// Run `profile`.
///
/// # Errors
/// Spec errors, profiler setup errors, write errors.
pub(crate) fn run(args: &Options, ui: &super::Ui, out: &mut dyn Write) -> Result<Exit> {
    let sel = Selected::load(&args.source)?;
    let targets = sel.targets();
    if args.dry_run {
        crate::profile::live::preflight(&sel.spec, &targets)?;
        let session = crate::run::session::Session::live(&targets, true, out)?;
        // Each backend the targets use, in the order of `profile::backends()`, says what its
        // command lines are for; then every repetition's line, by its target's backend.
        let mut dry = Vec::new();
        for b in crate::profile::backends() {
            let mine: Vec<&crate::spec::Target> = targets
                .iter()
                .copied()
                .filter(|t| t.profiler == b.kind())
                .collect();
            if !mine.is_empty() {
                let d = b.dry_run(&sel.spec.base_dir(), &mine)?;
                for line in d.preamble() {
                    writeln!(out, "{line}").map_err(stdout_err)?;
                }
                dry.push((b.kind(), d));
            }
        }
        for w in crate::plan::initial_work(&targets, None) {
            let Some((_, d)) = dry.iter_mut().find(|(k, _)| *k == w.target.profiler) else {
                continue;
            };
            let line = d.line(crate::profile::Job {
                target: w.target,
                size: w.size,
                rep: 0,
            })?;
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
