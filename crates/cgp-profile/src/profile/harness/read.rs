//! A harness file read into samples: nvbench's sidecars beside it, a file handed in as input,
//! the capture read by its format's parse-only reader, the kernel filter and the companion
//! series (module docs in [`super`]).

use std::path::{Path, PathBuf};

use super::{kind_of, output_flags, tail_text};
use crate::harness::formats::reader;
use crate::harness::{self, Entry, Format, HarnessFile, Status};
use crate::measured::samples::{SampleSet, SeriesKey};
use crate::profile::{Capture, FailureKind, Job, ProfileError, job_context};
use crate::spec::KernelFilter;

/// `<json>-bin` or `<json>-freqs-bin` beside a harness file.
pub fn sidecar_dir(json: &Path, suffix: &str) -> PathBuf {
    let mut name = json.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    json.with_file_name(name)
}

/// Where nvbench's sidecars of `json` are: in `<json>-bin/` (`<json>-freqs-bin/` for the clocks)
/// beside it, by the file name the summary gives (`<json>-bin/0.bin`: absolute in files before
/// 2026-07, relative to the JSON after), whatever name the JSON had when nvbench wrote it (a
/// recording renames it `<rep>.json`). Nowhere else: not the path the file names (absolute, or
/// with `..`), which would read a file outside the JSON's folder that a recording does not copy
/// (`record::copy_sidecars` copies those two folders), so that the same recording could give
/// another result when an outside file changes. A link, at the folder or the file, is refused
/// for the same reason. Read bounded.
pub fn sidecars_beside(json: &Path) -> impl Fn(&str) -> Result<Option<Vec<u8>>, String> + '_ {
    move |named: &str| {
        let named_path = Path::new(named);
        let freqs = named_path
            .parent()
            .and_then(Path::file_name)
            .is_some_and(|d| d.to_string_lossy().ends_with("-freqs-bin"));
        let folder = sidecar_dir(json, if freqs { "-freqs-bin" } else { "-bin" });
        let Some(file) = named_path.file_name() else {
            return Err(format!(
                "the JSON names the sidecar `{named}`, which is no file name: the file is damaged"
            ));
        };
        let here = folder.join(file);
        for p in [&folder, &here] {
            match std::fs::symlink_metadata(p) {
                Ok(m) if m.file_type().is_symlink() => {
                    return Err(format!(
                        "{} is a symbolic link: nvbench writes its sidecars as files beside the JSON, and a recording keeps only those",
                        p.display()
                    ));
                }
                Ok(_) => {}
                Err(_) => {
                    return Err(format!(
                        "the JSON names the sidecar {named}, and it is not beside {} (`{}`): cgp-gate reads sidecars only there, where nvbench writes them (docs/harnesses.md)",
                        json.display(),
                        here.display()
                    ));
                }
            }
        }
        crate::foundation::fsutil::read_bounded(&here, harness::MAX_FILE_BYTES)
            .map(Some)
            .map_err(|e| format!("{}: {}", here.display(), e.message("sidecar")))
    }
}

/// A harness input given on the command line (`import`, `parse`, `init --from`), read.
#[derive(Debug, Clone)]
pub struct Input {
    /// What a recording keeps of it: the file's bytes, or the bundle of a folder's files.
    pub capture: Vec<u8>,
    pub file: HarnessFile,
}

/// Read a harness input: a folder or file a gathering format reads (Criterion's `target/criterion`
/// or one of its `new/` files, an asv results file with its `benchmarks.json`), else a JSON
/// file (bounded, detected by content). `None`: `path` is a file that is not JSON (an ncu CSV).
pub fn read_input(path: &Path) -> Option<Result<Input, harness::HarnessError>> {
    let sidecars = sidecars_beside(path);
    for r in harness::formats::READERS {
        if let Some(gathered) = r.gather(path, None) {
            return Some(gathered.and_then(|capture| {
                let doc = harness::registry::parse(&capture, path)?;
                let file = harness::read_as(r.format(), &doc, path, &sidecars)?;
                Ok(Input { capture, file })
            }));
        }
    }
    if path.is_dir() {
        return Some(Err(harness::HarnessError::new(
            path,
            "is a folder, and no harness format cgp-gate reads is a folder of these files",
            "give the file the harness wrote (a Criterion folder holds `<benchmark>/new/sample.json`)",
        )));
    }
    if !looks_like_json(path) {
        return None;
    }
    Some((|| {
        let capture =
            crate::foundation::fsutil::read_bounded(path, harness::MAX_FILE_BYTES).map_err(|e| {
                harness::HarnessError::new(path, e.message("harness file"), "give the file the harness wrote")
            })?;
        let file = harness::read(&capture, path, &sidecars)?;
        Ok(Input { capture, file })
    })())
}

/// Whether the file opens a JSON object (`{`) or an array of objects (`[{`, `[]`), from its first
/// 4 KiB (an ncu log may open with `[1234]`).
fn looks_like_json(path: &Path) -> bool {
    use std::io::Read;
    // Only a regular file is opened here (a FIFO would block); anything else, or a file that
    // cannot be read, is the caller's own read to report.
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return false;
    }
    let mut head = [0u8; 4096];
    let Ok(n) = std::fs::File::open(path).and_then(|mut f| f.read(&mut head)) else {
        return false;
    };
    let mut bytes = head[..n].iter().filter(|b| !b.is_ascii_whitespace());
    match bytes.next() {
        Some(b'{') => true,
        Some(b'[') => matches!(bytes.next(), Some(b'{' | b']')),
        _ => false,
    }
}

/// Whether the target's `kernel:` selects an entry: its benchmark or its whole key.
pub fn selects(filter: Option<&KernelFilter>, e: &Entry) -> bool {
    match filter {
        None => true,
        Some(KernelFilter::Exact(name)) => *name == e.benchmark || *name == e.key(),
        Some(KernelFilter::Regex(re)) => re.is_match(&e.key()),
    }
}

/// Read a capture into its harness file, refusing another harness's file.
///
/// # Errors
/// A failed program, no file, a damaged file (naming file, benchmark and state).
pub fn read_capture(format: Format, job: Job<'_>, capture: &Capture) -> Result<HarnessFile, ProfileError> {
    let ctx = job_context(job);
    let tool = format.tool();
    if let Some(code) = capture.exit_code.filter(|c| *c != 0) {
        return Err(ProfileError::new(
            FailureKind::AppFailed,
            ctx,
            format!(
                "the benchmark program exited with status {code}{}",
                tail_text(&capture.output_tail)
            ),
        )
        .hint(match &capture.argv {
            Some(argv) => format!(
                "run it by hand to see why: {}",
                shlex::try_join(argv.iter().map(String::as_str)).unwrap_or_default()
            ),
            None => "run the benchmark by hand to see why".to_owned(),
        }));
    }
    if capture.output.is_empty() {
        return Err(ProfileError::new(
            FailureKind::ProfilerError,
            ctx,
            format!(
                "the benchmark program wrote no {tool} file ({}){}",
                capture.origin.display(),
                tail_text(&capture.output_tail)
            ),
        )
        .hint(format!(
            "check that the command runs a {tool} benchmark that accepts {}",
            output_flags(format, Path::new("PATH"), &[]).join(" ")
        )));
    }
    let bad = |e: harness::HarnessError| {
        ProfileError::new(FailureKind::BadOutput, ctx.clone(), e.to_string()).hint(e.help)
    };
    // The typed reading first (`harness::read`): a large nvbench file is never built as a
    // `serde_json::Value` tree, which takes several times its size (docs/harnesses.md).
    let file = harness::read(
        capture.output.as_bytes(),
        &capture.origin,
        &sidecars_beside(&capture.origin),
    )
    .map_err(bad)?;
    if file.format != format {
        return Err(ProfileError::new(
            FailureKind::BadOutput,
            ctx,
            format!(
                "{} is a {} file, and the target is `profiler: {}`",
                capture.origin.display(),
                file.format.tool(),
                kind_of(format)
            ),
        )
        .hint("set the target's `profiler:` to the harness that wrote the file"));
    }
    Ok(file)
}

/// Turn one capture into samples: every metric of the target, for every selected benchmark x
/// state.
///
/// # Errors
/// A classified [`ProfileError`] naming the file, benchmark, state and metric.
pub fn extract(format: Format, job: Job<'_>, capture: &Capture) -> Result<SampleSet, ProfileError> {
    let ctx = job_context(job);
    let file = read_capture(format, job, capture)?;
    let origin = capture.origin.display();
    let selected: Vec<&Entry> = file
        .entries
        .iter()
        .filter(|e| selects(job.target.kernel.as_ref(), e))
        .collect();
    if selected.is_empty() {
        let names: Vec<String> = file
            .entries
            .iter()
            .take(10)
            .map(|e| format!("`{}`", e.key()))
            .collect();
        return Err(ProfileError::new(
            FailureKind::NoKernels,
            ctx,
            format!("no benchmark in {origin} matches the target's `kernel:`"),
        )
        .hint(format!(
            "the file has {}",
            if names.is_empty() {
                "no benchmark".to_owned()
            } else {
                names.join(", ")
            }
        )));
    }
    let mut set = SampleSet::default();
    for e in selected {
        match &e.status {
            Status::Measured => {}
            Status::Skipped(why) => {
                // The key and the reason are the file's text: one sanitised line.
                crate::foundation::sanitize::eprint_line(&format!(
                    "note: {ctx}: {} not measured: {}",
                    crate::foundation::sanitize::line(&e.key()),
                    crate::foundation::sanitize::line(why)
                ));
                continue;
            }
            Status::Error(why) => {
                return Err(ProfileError::new(
                    FailureKind::AppFailed,
                    ctx,
                    format!("{origin}, benchmark `{}`: {why}", e.key()),
                )
                .hint("run the benchmark by hand to see why it failed"));
            }
        }
        for ms in &job.target.metrics {
            let Some(m) = e.metric(&ms.name) else {
                let have: Vec<String> = e.metrics.iter().map(|m| format!("`{}`", m.name)).collect();
                return Err(ProfileError::new(
                    FailureKind::BadOutput,
                    ctx,
                    format!(
                        "{origin}, benchmark `{}`, state `{}`: no metric `{}`",
                        e.benchmark, e.state, ms.name
                    ),
                )
                .hint(format!(
                    "the state has {}",
                    if have.is_empty() {
                        "no metric".to_owned()
                    } else {
                        have.join(", ")
                    }
                )));
            };
            let key = SeriesKey {
                target: job.target.name.clone(),
                size: job.size.key(),
                kernel: e.key(),
                metric: ms.name.clone(),
            };
            for v in &m.values {
                set.push(&key, &m.unit, *v, job.rep);
            }
        }
        push_companions(format, job, e, &mut set);
    }
    Ok(set)
}

/// Whether `metric` is a series kept beside a harness target's gated ones, not gated itself:
/// nvbench's per-sample SM cycles, beside a gated cold GPU time, for check's cycle-space
/// confirmation (`stats::clock`, docs/harnesses.md "Throttling"). Baselines keep it with the
/// explanatory counters.
pub fn is_companion(metric: &str) -> bool {
    harness::formats::READERS
        .iter()
        .filter_map(|r| r.time_and_cycles())
        .any(|(_, cycles)| cycles == metric)
}

/// The companions of the entry's gated metrics: the cycles of a time the target gates without
/// its cycles (nvbench's), where the file has them.
fn push_companions(format: Format, job: Job<'_>, e: &Entry, set: &mut SampleSet) {
    let gates = |name: &str| job.target.metrics.iter().any(|m| m.name == name);
    let Some((time, cycles)) = reader(format).time_and_cycles() else {
        return;
    };
    if !gates(time) || gates(cycles) {
        return;
    }
    let Some(m) = e.metric(cycles) else {
        return;
    };
    let key = SeriesKey {
        target: job.target.name.clone(),
        size: job.size.key(),
        kernel: e.key(),
        metric: m.name.clone(),
    };
    for v in &m.values {
        set.push(&key, &m.unit, *v, job.rep);
    }
}
