//! The replay backend: serves a recording instead of running ncu.

use std::path::{Path, PathBuf};

use crate::foundation::error::Error;
use crate::profile::record::{Manifest, rep_path, rep_path_cupti, rep_path_sqlite};
use crate::profile::{Capture, FailureKind, Job, ProfileError, Profiler, job_context};

/// Reads `DIR/<target>/<size>/<rep>.csv`.
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

    /// Repetitions recorded for a target and size, sorted.
    /// The repetitions of a size folder (`<n>.csv`, `<n>.sqlite` or `<n>.cupti`, `n` written as a number is:
    /// `0`, `1`, ..., no sign, no leading zero), and the names of the other files in it, which
    /// the reader does not take for repetitions (`00.csv`, `+1.csv`, `1.CSV`).
    fn rep_files(&self, target: &str, size: &str) -> (Vec<u32>, Vec<String>) {
        let mut reps = Vec::new();
        let mut others = Vec::new();
        for e in std::fs::read_dir(self.dir.join(target).join(size))
            .into_iter()
            .flatten()
            .flatten()
        {
            let name = e.file_name().to_string_lossy().into_owned();
            let rep = name
                .strip_suffix(".csv")
                .or_else(|| name.strip_suffix(".sqlite"))
                .or_else(|| name.strip_suffix(".cupti"))
                .and_then(|stem| stem.parse::<u32>().ok().filter(|n| n.to_string() == stem));
            match rep {
                Some(n) => reps.push(n),
                None => others.push(name),
            }
        }
        reps.sort_unstable();
        reps.dedup();
        others.sort();
        (reps, others)
    }
}

impl Profiler for ReplayProfiler {
    fn name(&self) -> &'static str {
        "replay"
    }

    fn version(&mut self) -> Result<String, ProfileError> {
        Ok(self
            .manifest
            .as_ref()
            .and_then(|m| m.ncu_version.clone())
            .unwrap_or_else(|| "unknown".to_owned()))
    }

    fn tool_version(&mut self, tool: crate::spec::ProfilerKind) -> Result<String, ProfileError> {
        let m = self.manifest.as_ref();
        let v = match tool {
            crate::spec::ProfilerKind::Ncu => m.and_then(|m| m.ncu_version.clone()),
            crate::spec::ProfilerKind::Nsys => m.and_then(|m| m.nsys_version.clone()),
            crate::spec::ProfilerKind::Cupti => m.and_then(|m| m.cupti_version.clone()),
        };
        Ok(v.unwrap_or_else(|| "unknown".to_owned()))
    }

    fn reads_a_recording(&self) -> bool {
        true
    }

    fn source(&self) -> String {
        format!("replay:{}", self.dir.display())
    }

    fn has(&self, job: Job<'_>) -> bool {
        if crate::profile::cupti::is_cupti(job.target) {
            return rep_path_cupti(&self.dir, &job.target.name, &job.size.key(), job.rep).is_file();
        }
        rep_path(&self.dir, &job.target.name, &job.size.key(), job.rep).is_file()
            || rep_path_sqlite(&self.dir, &job.target.name, &job.size.key(), job.rep).is_file()
    }

    fn manifest(&self) -> Option<&Manifest> {
        self.manifest.as_ref()
    }

    fn capture(&mut self, job: Job<'_>) -> Result<Capture, ProfileError> {
        let size = job.size.key();
        let cupti = crate::profile::cupti::is_cupti(job.target);
        let mut path = if cupti {
            // A cupti repetition is its trace file, and only that (docs/cupti.md).
            rep_path_cupti(&self.dir, &job.target.name, &size, job.rep)
        } else {
            rep_path(&self.dir, &job.target.name, &size, job.rep)
        };
        let sqlite_path = rep_path_sqlite(&self.dir, &job.target.name, &size, job.rep);
        let mut sqlite = None;
        if !cupti && !path.is_file() && sqlite_path.is_file() {
            // An nsys repetition kept as its SQLite export.
            sqlite = Some(read_sqlite(job, &sqlite_path)?);
            path = sqlite_path;
        }
        let raw = if sqlite.is_some() {
            String::new()
        } else {
            match crate::foundation::fsutil::read_text(&path, crate::foundation::fsutil::limits::NCU_CSV) {
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
                        format!(
                            "{}: {}",
                            path.display(),
                            e.message(if cupti {
                                "recorded CUPTI trace"
                            } else {
                                "recorded ncu output"
                            })
                        ),
                    )
                    .hint("record it again with `cgp-gate profile --record DIR`"));
                }
            }
        };
        let run = self
            .manifest
            .as_ref()
            .and_then(|m| m.run(&job.target.name, &size, job.rep));
        Ok(Capture {
            raw,
            origin: path,
            argv: run.map(|r| r.argv.clone()),
            wall_seconds: run.and_then(|r| r.wall_seconds),
            exit_code: run.and_then(|r| r.exit_code),
            output_tail: String::new(),
            kernels_seen: None,
            sqlite,
            ncu_version: self.manifest.as_ref().and_then(|m| m.ncu_version.clone()),
        })
    }
}

/// An nsys repetition's SQLite export, bounded.
fn read_sqlite(job: Job<'_>, path: &Path) -> Result<Vec<u8>, ProfileError> {
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
