//! `cgp-gate import --spec S --into DIR FILE...`: harness output files a CI job already wrote
//! (nvbench `--json`, Google Benchmark `--benchmark_out`, pytest-benchmark `--benchmark-json`;
//! one file per process, formats detected by content) become a recording that `--replay DIR`
//! reads for `check`, `ab`, `baseline update` and `calibrate` (docs/harnesses.md). Nothing runs.
//!
//! Each file goes to every harness target of the spec whose `profiler:` is the file's harness and
//! whose `kernel:` selects a benchmark of it, as that target's next repetition (in the order the
//! files are given) of its one size. nvbench's `--jsonbin` sidecars beside a file
//! (`FILE-bin/`, `FILE-freqs-bin/`) are copied with it, and read from nowhere else, so the
//! recording holds everything it replays. The recording's GPU is the device the files name: one
//! GPU (or set of devices) per recording (a file naming another is refused). An existing recording is replaced only
//! with `--replace`. Each file is read once, in the typed pass (no JSON tree of a large nvbench
//! file), and written as it was read.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};

use super::stdout_err;
use crate::foundation::error::{Error, Result};
use crate::foundation::exit_codes::Exit;
use crate::gpu::fingerprint::Fingerprint;
use crate::harness::{self, HarnessFile};
use crate::profile::harness::{format_of, selects, sidecars_beside};
use crate::profile::record::Recorder;
use crate::profile::{Capture, Job, Output, Versions, backend_of};
use crate::spec::{Size, Target};

/// What `import` is given.
#[derive(Debug, Clone)]
pub(crate) struct ImportOptions {
    pub spec: PathBuf,
    pub into: PathBuf,
    pub files: Vec<PathBuf>,
    /// `--replace`: an existing recording at `into` may be replaced whole.
    pub replace: bool,
}

/// Read one harness file (or a folder a format gathers), bounded; a damaged one names the file,
/// benchmark and state.
fn read_one(file: &Path) -> Result<(String, HarnessFile)> {
    let bad = |e: harness::HarnessError| Error::input(file, format!("{e}\nhelp: {}", e.help));
    let input = match crate::profile::harness::read_input(file) {
        Some(input) => input.map_err(bad)?,
        None => {
            // Not a JSON file by its first bytes: read it as any harness file is read, so the
            // error says what it is (nvbench's `--csv`, Google Benchmark's console; issue 59),
            // or that it is missing or no regular file.
            let capture = crate::foundation::fsutil::read_bounded(file, harness::MAX_FILE_BYTES)
                .map_err(|e| e.into_error(file, "harness file"))?;
            let parsed = harness::read(&capture, file, &sidecars_beside(file)).map_err(bad)?;
            crate::profile::harness::Input {
                capture,
                file: parsed,
            }
        }
    };
    let text = String::from_utf8(input.capture)
        .map_err(|e| Error::input(file, format!("the harness file is not UTF-8 text: {e}")))?;
    Ok((text, input.file))
}

/// A file must not be inside the recording it goes into, and `--into` must be a folder that
/// holds nothing yet, or a recording with `--replace`.
fn check_into(into: &Path, files: &[PathBuf], replace: bool) -> Result<()> {
    if crate::foundation::fsutil::is_stdout(into) {
        return Err(Error::Usage(
            "--into -: a recording is a folder, not a stream; give the folder to write".to_owned(),
        ));
    }
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
    // A folder that is not a recording is refused by the recorder, with or without --replace.
    crate::profile::record::check_destination(into, crate::profile::record::Layout::Recording)?;
    let holds_something = std::fs::read_dir(into).is_ok_and(|mut d| d.next().is_some());
    if holds_something && !replace {
        return Err(Error::Usage(format!(
            "--into {}: the folder holds a recording already, which import would replace whole (every repetition of it gone); pass --replace to replace it, or give a new folder",
            into.display()
        )));
    }
    Ok(())
}

/// The spec's harness targets, the only ones import fills; a spec without any is a usage error.
fn harness_targets<'s>(spec: &'s crate::spec::Spec, path: &Path) -> Result<Vec<&'s Target>> {
    let targets: Vec<&Target> = spec.targets.iter().filter(|t| t.profiler.is_harness()).collect();
    if targets.is_empty() {
        return Err(Error::Usage(format!(
            "{} has no harness target: import reads the files of harness targets (`profiler: {}`; docs/harnesses.md)",
            path.display(),
            crate::harness::Format::ALL.map(|f| f.as_str()).join("`, `")
        )));
    }
    Ok(targets)
}

/// The targets that take a file: of its harness, with a `kernel:` that selects one of its
/// benchmarks; a file no target takes is refused, with the spec's targets named.
fn takers<'a, 't>(
    targets: &'a [&'t Target],
    parsed: &HarnessFile,
    file: &Path,
    spec: &Path,
) -> Result<Vec<&'a &'t Target>> {
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
                spec.display(),
                parsed.format.tool(),
                names.join(", ")
            ),
        ));
    }
    Ok(takers)
}

/// The recording's fingerprint from a file that names its GPU: the file's first device among
/// those its benchmarks ran on, as target `t`'s harness fingerprints it.
fn device_fingerprint(
    parsed: &HarnessFile,
    devices: &BTreeSet<String>,
    t: &Target,
    versions: &Versions,
) -> Fingerprint {
    let name = parsed
        .devices
        .iter()
        .find(|d| devices.contains(*d))
        .or_else(|| devices.first());
    let fp = Fingerprint {
        gpu_name: name.map_or_else(Default::default, |d| d.as_str().into()),
        ..Fingerprint::default()
    };
    backend_of(t).fingerprint(fp, versions.get(t.profiler))
}

/// The GPUs a file's selected benchmarks ran on: the device of each entry the targets take, else
/// the file's first device; none when the file names none.
fn devices_of(parsed: &HarnessFile, takers: &[&&Target]) -> BTreeSet<String> {
    let mut names: BTreeSet<String> = parsed
        .entries
        .iter()
        .filter(|e| takers.iter().any(|t| selects(t.kernel.as_ref(), e)))
        .filter_map(|e| e.device.clone())
        .collect();
    if names.is_empty() {
        names.extend(parsed.devices.first().cloned());
    }
    names
}

/// One GPU per recording: its fingerprint names one, and a check compares it with that GPU's
/// baselines. A file whose states ran on several devices (nvbench's `@device` states) is one
/// set of GPUs, which every file must then share. `first` is the GPUs and the file that named
/// them first.
fn one_gpu(
    first: &mut Option<(BTreeSet<String>, PathBuf)>,
    devices: &BTreeSet<String>,
    file: &Path,
) -> Result<()> {
    if devices.is_empty() {
        return Ok(());
    }
    let named = |ds: &BTreeSet<String>| {
        ds.iter()
            .map(|d| format!("`{}`", crate::foundation::sanitize::line(d)))
            .collect::<Vec<_>>()
            .join(" and ")
    };
    match first {
        None => *first = Some((devices.clone(), file.to_path_buf())),
        Some((had, from)) if had != devices => {
            return Err(Error::input(
                file,
                format!(
                    "the file's benchmarks ran on {}, and those of {} on {}: a recording is of one GPU, whose baselines a check compares it with; import each GPU's files into its own recording",
                    named(devices),
                    from.display(),
                    named(had)
                ),
            ));
        }
        Some(_) => {}
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
    let targets = harness_targets(&spec, &opts.spec)?;
    check_into(&opts.into, &opts.files, opts.replace)?;
    let mut rec = Recorder::new(&opts.into)?;
    let mut reps: BTreeMap<&str, u32> = BTreeMap::new();
    let mut versions = Versions::default();
    let mut fingerprint: Option<Fingerprint> = None;
    let mut gpu: Option<(BTreeSet<String>, PathBuf)> = None;
    let mut seen = Seen::new();
    for file in &opts.files {
        let (text, parsed) = read_one(file)?;
        let takers = takers(&targets, &parsed, file, &opts.spec)?;
        let devices = devices_of(&parsed, &takers);
        one_gpu(&mut gpu, &devices, file)?;
        // One capture of the file for every target that takes it: its text is not copied.
        let capture = Capture {
            output: Output::Text(text),
            origin: file.clone(),
            argv: None,
            wall_seconds: None,
            exit_code: Some(0),
            output_tail: String::new(),
            kernels_seen: None,
            tool_version: parsed.version.clone(),
        };
        for t in takers {
            same_states(&mut seen, t, &parsed, file)?;
            let size = one_size(t)?;
            let rep = reps.entry(t.name.as_str()).or_insert(0);
            let job = Job {
                target: t,
                size: &size,
                rep: *rep,
            };
            rec.record(job, &capture)?;
            *rep += 1;
            if versions.version(t.profiler).is_none() {
                versions.set(
                    t.profiler,
                    Some(parsed.version.clone().unwrap_or_else(|| "unknown".to_owned())),
                );
            }
            if fingerprint.is_none() && !devices.is_empty() {
                fingerprint = Some(device_fingerprint(&parsed, &devices, t, &versions));
            }
        }
    }
    // Files that name no GPU: the recording's fingerprint is of the first target's harness.
    if fingerprint.is_none()
        && let Some(t) = targets.iter().find(|t| reps.contains_key(t.name.as_str()))
    {
        fingerprint = Some(backend_of(t).fingerprint(Fingerprint::default(), versions.get(t.profiler)));
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
