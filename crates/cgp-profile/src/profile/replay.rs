//! Replay: a profiler that serves a recording (of any backend's repetitions) instead of running one.

use std::path::{Path, PathBuf};

use crate::foundation::error::Error;
use crate::profile::backend::RecordedAs;
use crate::profile::record::{Manifest, rep_path, rep_path_as};
use crate::profile::{Capture, FailureKind, Job, Output, ProfileError, Profiler, job_context};

/// Reads `DIR/<target>/<size>/<rep>.<extension>`, in the forms of the target's backend.
#[derive(Debug)]
pub struct ReplayProfiler {
    dir: PathBuf,
    manifest: Option<Manifest>,
}

impl ReplayProfiler {
    /// Open a recording.
    ///
    /// # Errors
    /// When `dir` is not a directory or its manifest is invalid.
    pub fn open(dir: &Path) -> Result<Self, Error> {
        if !dir.is_dir() {
            return Err(Error::input(
                dir,
                "recording directory not found (--replay expects a directory made by --record)",
            ));
        }
        let manifest = Manifest::read(dir)?;
        Ok(Self {
            dir: dir.to_path_buf(),
            manifest,
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The repetitions of a size folder (`<n>.csv`, `<n>.sqlite` or `<n>.cupti`, `n` written as a
    /// number is: `0`, `1`, ..., no sign, no leading zero), sorted, and the names of the other
    /// files in it, which the reader does not take for repetitions (`00.csv`, `+1.csv`, `1.CSV`).
    fn rep_files(&self, target: &str, size: &str) -> (Vec<u32>, Vec<String>) {
        let mut reps = Vec::new();
        let mut others = Vec::new();
        for e in std::fs::read_dir(self.dir.join(target).join(size))
            .into_iter()
            .flatten()
            .flatten()
        {
            let name = e.file_name().to_string_lossy().into_owned();
            match crate::profile::recorded_rep(&name) {
                Some(n) => reps.push(n),
                None => others.push(name),
            }
        }
        reps.sort_unstable();
        reps.dedup();
        others.sort();
        (reps, others)
    }

    /// The file of one repetition of `job` in the recording: the first form its backend records
    /// that is present, else the first form (for messages).
    fn rep_file(&self, job: Job<'_>) -> (PathBuf, RecordedAs) {
        let forms = crate::profile::backend_of(job.target).recorded_as();
        let path =
            |r: &RecordedAs| rep_path_as(&self.dir, &job.target.name, &job.size.key(), job.rep, r.extension);
        forms
            .iter()
            .find(|r| path(r).is_file())
            .or(forms.first())
            .map(|r| (path(r), *r))
            .unwrap_or_else(|| {
                (
                    rep_path(&self.dir, &job.target.name, &job.size.key(), job.rep),
                    CSV,
                )
            })
    }
}

/// What a repetition is read as when its backend names no form.
const CSV: RecordedAs = RecordedAs {
    extension: "csv",
    binary: false,
    what: "recorded ncu output",
};

impl Profiler for ReplayProfiler {
    fn name(&self) -> &'static str {
        "replay"
    }

    fn version(&mut self) -> Result<String, ProfileError> {
        self.tool_version(crate::spec::ProfilerKind::default())
    }

    fn tool_version(&mut self, tool: crate::spec::ProfilerKind) -> Result<String, ProfileError> {
        let v = self.manifest.as_ref().and_then(|m| m.version(tool));
        Ok(v.map_or_else(|| "unknown".to_owned(), str::to_owned))
    }

    fn reads_a_recording(&self) -> bool {
        true
    }

    fn source(&self) -> String {
        crate::measured::source::Source::replay(&self.dir).into()
    }

    fn has(&self, job: Job<'_>) -> bool {
        self.rep_file(job).0.is_file()
    }

    fn manifest(&self) -> Option<&Manifest> {
        self.manifest.as_ref()
    }

    fn capture(&mut self, job: Job<'_>) -> Result<Capture, ProfileError> {
        let size = job.size.key();
        let (path, form) = self.rep_file(job);
        let output = if form.binary {
            // An nsys repetition kept as its SQLite export.
            Output::Bytes(read_binary(job, &path)?)
        } else {
            let limit = crate::profile::backend_of(job.target).max_capture_bytes();
            Output::Text(match crate::foundation::fsutil::read_text(&path, limit) {
                Ok(text) => text,
                Err(crate::foundation::fsutil::ReadError::Io(e))
                    if e.kind() == std::io::ErrorKind::NotFound
                        && std::fs::symlink_metadata(&path).is_ok() =>
                {
                    return Err(ProfileError::new(
                        FailureKind::BadRecording,
                        job_context(job),
                        format!(
                            "{} is a symbolic link to {}, which does not exist",
                            path.display(),
                            std::fs::read_link(&path)
                                .map_or_else(|_| "?".to_owned(), |t| t.display().to_string())
                        ),
                    )
                    .hint(
                        "copy the recording with its files (`cp -rL`), not with links into another folder",
                    ));
                }
                Err(crate::foundation::fsutil::ReadError::Io(e))
                    if e.kind() == std::io::ErrorKind::NotFound =>
                {
                    let what = if !self.dir.join(&job.target.name).is_dir() {
                        format!("has no target `{}`", job.target.name)
                    } else if !self.dir.join(&job.target.name).join(&size).is_dir() {
                        format!("has no size `{size}` for target `{}`", job.target.name)
                    } else {
                        let (reps, others) = self.rep_files(&job.target.name, &size);
                        let mut what =
                            format!("has no repetition {} (it has {})", job.rep, describe_reps(&reps));
                        if !others.is_empty() {
                            let shown: Vec<String> =
                                others.iter().take(5).map(|n| format!("`{n}`")).collect();
                            what.push_str(&format!(
                                "; {} in that folder {} not a repetition's name: a repetition is `<n>.csv` or `<n>.sqlite`, `n` counting from 0 without leading zeros (`0.csv`, `1.csv`, ...)",
                                shown.join(", "),
                                if others.len() == 1 { "is" } else { "are" }
                            ));
                        }
                        what
                    };
                    return Err(ProfileError::new(
                    FailureKind::Recording,
                    job_context(job),
                    format!(
                        "recording {} {what}: expected {}",
                        self.dir.display(),
                        path.display()
                    ),
                )
                .hint(
                    "record it on a GPU machine with `cgp-gate profile --record DIR`, or lower `repetitions`",
                ));
                }
                Err(crate::foundation::fsutil::ReadError::Io(e)) => {
                    return Err(ProfileError::new(
                        FailureKind::Io,
                        job_context(job),
                        format!("failed to read {}: {e}", path.display()),
                    ));
                }
                Err(e) => {
                    return Err(ProfileError::new(
                        FailureKind::BadRecording,
                        job_context(job),
                        format!("{}: {}", path.display(), e.message(form.what)),
                    )
                    .hint("record it again with `cgp-gate profile --record DIR`"));
                }
            })
        };
        let run = self
            .manifest
            .as_ref()
            .and_then(|m| m.run(&job.target.name, &size, job.rep));
        Ok(Capture {
            output,
            origin: path,
            argv: run.map(|r| r.argv.clone()),
            wall_seconds: run.and_then(|r| r.wall_seconds),
            exit_code: run.and_then(|r| r.exit_code),
            output_tail: String::new(),
            kernels_seen: None,
            tool_version: self
                .manifest
                .as_ref()
                .and_then(|m| m.version(job.target.profiler))
                .map(str::to_owned),
        })
    }
}

/// A repetition kept as bytes (an nsys SQLite export), bounded.
fn read_binary(job: Job<'_>, path: &Path) -> Result<Vec<u8>, ProfileError> {
    let len = std::fs::metadata(path).map_or(0, |m| m.len());
    if len > crate::nsys::read::MAX_SQLITE_BYTES {
        return Err(ProfileError::new(
            FailureKind::BadOutput,
            job_context(job),
            format!(
                "{} is {len} bytes, more than the {} cgp-gate reads",
                path.display(),
                crate::nsys::read::MAX_SQLITE_BYTES
            ),
        ));
    }
    std::fs::read(path).map_err(|e| {
        ProfileError::new(
            FailureKind::Io,
            job_context(job),
            format!("failed to read {}: {e}", path.display()),
        )
    })
}

fn describe_reps(reps: &[u32]) -> String {
    match reps {
        [] => "none".to_owned(),
        [one] => format!("repetition {one}"),
        [first, .., last] if usize::try_from(last - first).ok() == Some(reps.len() - 1) => {
            format!("repetitions {first}..={last}")
        }
        _ => format!(
            "repetitions {}",
            reps.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
        ),
    }
}
