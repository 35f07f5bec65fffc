//! `cgp-gate import --spec S --into DIR FILE...`: harness output files a CI job already wrote
//! (nvbench `--json`, Google Benchmark `--benchmark_out`, pytest-benchmark `--benchmark-json`;
//! one file per process, formats detected by content) become a recording that `--replay DIR`
//! reads for `check`, `ab`, `baseline update` and `calibrate` (docs/harnesses.md). Nothing runs.
//!
//! Each file goes to every harness target of the spec whose `profiler:` is the file's harness and
//! whose `kernel:` selects a benchmark of it, as that target's next repetition (in the order the
//! files are given) of its one size. nvbench's `--jsonbin` sidecars beside a file
//! (`FILE-bin/`, `FILE-freqs-bin/`) are copied with it. The recording's GPU is the device the
//! first file names.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};

use super::stdout_err;
use crate::foundation::error::{Error, Result};
use crate::foundation::exit_codes::Exit;
use crate::gpu::fingerprint::Fingerprint;
use crate::harness::{self, HarnessFile};
use crate::profile::harness::{format_of, read_capture, selects};
use crate::profile::record::Recorder;
use crate::profile::{Capture, Job, Output, Versions, backend_of};
use crate::spec::{Size, Target};

/// What `import` is given.
#[derive(Debug, Clone)]
pub(crate) struct ImportOptions {
    pub spec: PathBuf,
    pub into: PathBuf,
    pub files: Vec<PathBuf>,
}

/// Read one harness file (or a folder a format gathers), bounded; a damaged one names the file,
/// benchmark and state.
fn read_one(file: &Path) -> Result<(String, HarnessFile)> {
    let input = crate::profile::harness::read_input(file)
        .unwrap_or_else(|| {
            Err(harness::HarnessError::new(
                file,
                "is not JSON, and not a folder a harness writes",
                harness::formats::formats_help(),
            ))
        })
        .map_err(|e| Error::input(file, format!("{e}\nhelp: {}", e.help)))?;
    let text = String::from_utf8(input.capture)
        .map_err(|e| Error::input(file, format!("the harness file is not UTF-8 text: {e}")))?;
    Ok((text, input.file))
}

/// A file must not be inside the recording it goes into.
fn refuse_inputs_inside(into: &Path, files: &[PathBuf]) -> Result<()> {
    let Ok(dest) = std::fs::canonicalize(into) else {
        return Ok(());
    };
    for f in files {
        if std::fs::canonicalize(f).is_ok_and(|p| p.starts_with(&dest)) {
            return Err(Error::Usage(format!(
                "{} is inside --into {}, which import replaces whole: give a new folder for the recording",
                f.display(),
                into.display()
            )));
        }
    }
    Ok(())
}

/// The one size a file is a repetition of.
fn one_size(t: &Target) -> Result<Size> {
    match t.sizes.as_slice() {
        [] => Ok(Size::default()),
        [s] => Ok(s.clone()),
        _ => Err(Error::Usage(format!(
            "target `{}` has {} sizes, and an imported file cannot say which it is; give each size its own target (a harness's states are rows already, docs/harnesses.md)",
            t.name,
            t.sizes.len()
        ))),
    }
}

/// The states each target's first file had, and that file.
type Seen<'t> = BTreeMap<&'t str, (PathBuf, BTreeSet<String>)>;

/// Every file of a target holds the states its first file held: a state missing from a later
/// run (or new in it) is damaged input, named with both files.
fn same_states<'t>(seen: &mut Seen<'t>, t: &'t Target, parsed: &HarnessFile, file: &Path) -> Result<()> {
    let states: BTreeSet<String> = parsed
        .entries
        .iter()
        .filter(|e| selects(t.kernel.as_ref(), e))
        .map(harness::Entry::key)
        .collect();
    let Some((first, had)) = seen.get(t.name.as_str()) else {
        seen.insert(&t.name, (file.to_path_buf(), states));
        return Ok(());
    };
    let missing = had.difference(&states).next().map(|k| (k, first.as_path(), file));
    let extra = states.difference(had).next().map(|k| (k, file, first.as_path()));
    if let Some((key, has, lacks)) = missing.or(extra) {
        return Err(Error::input(
            file,
            format!(
                "target `{}`: `{key}` (benchmark [state]) is in {} and not in {}; every file of a target must be a run of the same benchmarks and states",
                t.name,
                has.display(),
                lacks.display()
            ),
        ));
    }
    Ok(())
}

/// Run `import`.
///
/// # Errors
/// A spec without harness targets, a file no target takes, a damaged file (exit 2); a recording
/// that cannot be written.
pub(crate) fn run(opts: &ImportOptions, out: &mut dyn Write) -> Result<Exit> {
    let spec = crate::spec::load(&opts.spec)?;
    let targets: Vec<&Target> = spec.targets.iter().filter(|t| t.profiler.is_harness()).collect();
    if targets.is_empty() {
        return Err(Error::Usage(format!(
            "{} has no harness target: import reads the files of harness targets (`profiler: {}`; docs/harnesses.md)",
            opts.spec.display(),
            crate::harness::Format::ALL.map(|f| f.as_str()).join("`, `")
        )));
    }
    refuse_inputs_inside(&opts.into, &opts.files)?;
    let mut rec = Recorder::new(&opts.into)?;
    let mut reps: BTreeMap<&str, u32> = BTreeMap::new();
    let mut versions = Versions::default();
    let mut fingerprint: Option<Fingerprint> = None;
    let mut seen = Seen::new();
    for file in &opts.files {
        let (text, parsed) = read_one(file)?;
        let takers: Vec<&&Target> = targets
            .iter()
            .filter(|t| format_of(t.profiler) == Some(parsed.format))
            .filter(|t| parsed.entries.iter().any(|e| selects(t.kernel.as_ref(), e)))
            .collect();
        if takers.is_empty() {
            let names: Vec<String> = targets
                .iter()
                .map(|t| format!("`{}` ({})", t.name, t.profiler))
                .collect();
            return Err(Error::input(
                file,
                format!(
                    "no target of {} gates a benchmark of this {} file; its targets: {}",
                    opts.spec.display(),
                    parsed.format.tool(),
                    names.join(", ")
                ),
            ));
        }
        for t in takers {
            same_states(&mut seen, t, &parsed, file)?;
            let size = one_size(t)?;
            let rep = reps.entry(t.name.as_str()).or_insert(0);
            let job = Job {
                target: t,
                size: &size,
                rep: *rep,
            };
            let capture = Capture {
                output: Output::Text(text.clone()),
                origin: file.clone(),
                argv: None,
                wall_seconds: None,
                exit_code: Some(0),
                output_tail: String::new(),
                kernels_seen: None,
                tool_version: parsed.version.clone(),
            };
            read_capture(parsed.format, job, &capture).map_err(|e| Error::input(file, e.to_string()))?;
            rec.record(job, &capture)?;
            *rep += 1;
            if versions.version(t.profiler).is_none() {
                versions.set(
                    t.profiler,
                    Some(parsed.version.clone().unwrap_or_else(|| "unknown".to_owned())),
                );
            }
            if fingerprint.is_none() {
                let fp = Fingerprint {
                    gpu_name: parsed
                        .devices
                        .first()
                        .map_or_else(Default::default, |d| d.as_str().into()),
                    ..Fingerprint::default()
                };
                fingerprint = Some(backend_of(t).fingerprint(fp, versions.get(t.profiler)));
            }
        }
    }
    let fp = fingerprint.unwrap_or_default();
    rec.finish_with(&spec.hash, &versions, &fp)?;
    let counts: Vec<String> = reps.iter().map(|(t, n)| format!("{t}: {n}")).collect();
    writeln!(
        out,
        "imported {} file(s) into {} (repetitions per target: {}); read it with --replay {}",
        opts.files.len(),
        opts.into.display(),
        counts.join(", "),
        opts.into.display()
    )
    .map_err(stdout_err)?;
    Ok(Exit::Ok)
}
