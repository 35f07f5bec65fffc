//! Recordings: raw profiler output kept on disk, so the gate can be re-run anywhere.
//!
//! The layout is a contract other tools write too:
//! `DIR/<target>/<size>/<rep>.csv` holds the raw ncu output of one repetition as ncu wrote it;
//! `<size>` is the size's `key=value` pairs in spec order joined by `,` (`default` without
//! parameters); `<rep>` counts from 0. `DIR/manifest.json` is optional and holds provenance.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::gpu::fingerprint::Fingerprint;
use crate::profile::{Capture, Job};

/// Version of the manifest format.
pub const MANIFEST_VERSION: u32 = 1;

/// Provenance of a recording.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub schema_version: u32,
    /// True when the data was not measured on a GPU (hand-made or simulated).
    #[serde(default)]
    pub synthetic: bool,
    /// Free text: how the recording was made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgp_gate_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec_hash: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ncu_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<Fingerprint>,
    #[serde(default)]
    pub runs: Vec<ManifestRun>,
}

/// One recorded repetition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ManifestRun {
    pub target: String,
    pub size: String,
    pub rep: u32,
    /// The exact argv, ncu first.
    #[serde(default)]
    pub argv: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall_seconds: Option<f64>,
}

impl Manifest {
    /// Read `DIR/manifest.json`; `Ok(None)` when there is none.
    ///
    /// # Errors
    /// Invalid JSON (with its position) or a newer schema version.
    pub fn read(dir: &Path) -> Result<Option<Self>, Error> {
        let path = dir.join("manifest.json");
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io("read", path, e)),
        };
        let m: Self = serde_json::from_str(&text).map_err(|e| {
            Error::input(
                &path,
                format!("invalid manifest at line {} column {}: {e}", e.line(), e.column()),
            )
        })?;
        if m.schema_version > MANIFEST_VERSION {
            return Err(Error::input(
                &path,
                format!(
                    "manifest schema {} is newer than this cgp-gate reads ({MANIFEST_VERSION}): upgrade cgp-gate",
                    m.schema_version
                ),
            ));
        }
        Ok(Some(m))
    }

    pub fn run(&self, target: &str, size: &str, rep: u32) -> Option<&ManifestRun> {
        self.runs
            .iter()
            .find(|r| r.target == target && r.size == size && r.rep == rep)
    }
}

/// The file of one repetition inside a recording.
pub fn rep_path(dir: &Path, target: &str, size: &str, rep: u32) -> PathBuf {
    dir.join(target).join(size).join(format!("{rep}.csv"))
}

/// The SQLite file of one repetition of an nsys target (`<rep>.sqlite`, the nsys export).
pub fn rep_path_sqlite(dir: &Path, target: &str, size: &str, rep: u32) -> PathBuf {
    dir.join(target).join(size).join(format!("{rep}.sqlite"))
}

/// A name is usable as one path component of a recording.
pub fn check_component(what: &str, name: &str) -> Result<(), String> {
    if name.is_empty() || name == "." || name == ".." || name.contains('/') || name.contains('\0') {
        return Err(format!(
            "{what} `{name}` cannot be a directory name in a recording (no `/`, not `.` or `..`)"
        ));
    }
    Ok(())
}

/// Writes a recording as the profiler runs.
#[derive(Debug)]
pub struct Recorder {
    dir: PathBuf,
    manifest: Manifest,
}

impl Recorder {
    /// Start a recording in `dir` (created if needed).
    ///
    /// # Errors
    /// When the directory cannot be created.
    pub fn new(dir: &Path) -> Result<Self, Error> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io("create", dir, e))?;
        let manifest = Manifest {
            schema_version: MANIFEST_VERSION,
            cgp_gate_version: Some(env!("CARGO_PKG_VERSION").to_owned()),
            ..Manifest::default()
        };
        Ok(Self {
            dir: dir.to_path_buf(),
            manifest,
        })
    }

    /// Keep the raw output of one repetition (also when it failed: a recorded failure replays as one).
    ///
    /// # Errors
    /// When the file cannot be written or a name cannot be a path component.
    pub fn record(&mut self, job: Job<'_>, capture: &Capture) -> Result<(), Error> {
        let size = job.size.key();
        check_component("target", &job.target.name).map_err(Error::Usage)?;
        check_component("size", &size).map_err(Error::Usage)?;
        let csv = rep_path(&self.dir, &job.target.name, &size, job.rep);
        let sqlite = rep_path_sqlite(&self.dir, &job.target.name, &size, job.rep);
        let (path, other, bytes) = match &capture.sqlite {
            Some(b) => (sqlite, csv, b.as_slice()),
            None => (csv, sqlite, capture.raw.as_bytes()),
        };
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io("create", parent, e))?;
        }
        std::fs::write(&path, bytes).map_err(|e| Error::io("write", &path, e))?;
        // One file per repetition: a stale one of the other kind would shadow this one.
        let _ = std::fs::remove_file(other);
        self.manifest
            .runs
            .retain(|r| !(r.target == job.target.name && r.size == size && r.rep == job.rep));
        self.manifest.runs.push(ManifestRun {
            target: job.target.name.clone(),
            size,
            rep: job.rep,
            argv: capture.argv.clone().unwrap_or_default(),
            exit_code: capture.exit_code,
            wall_seconds: capture.wall_seconds,
        });
        Ok(())
    }

    /// Write `manifest.json` with the run's provenance.
    ///
    /// # Errors
    /// When the manifest cannot be written.
    pub fn finish(
        mut self,
        spec_hash: &str,
        ncu_version: &str,
        fingerprint: &Fingerprint,
    ) -> Result<PathBuf, Error> {
        self.manifest.spec_hash = Some(spec_hash.to_owned());
        self.manifest.ncu_version = Some(ncu_version.to_owned());
        self.manifest.fingerprint = Some(fingerprint.clone());
        let path = self.dir.join("manifest.json");
        let text = serde_json::to_string_pretty(&self.manifest).map_err(|e| Error::Usage(e.to_string()))?;
        crate::fsutil::write_atomic(&path, text.as_bytes())?;
        Ok(path)
    }
}
