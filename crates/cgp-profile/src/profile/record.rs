//! Recordings: raw profiler output kept on disk, so the gate can be re-run anywhere.
//!
//! The layout is a contract other tools write too:
//! `DIR/<target>/<size>/<rep>.csv` holds the raw ncu output of one repetition as ncu wrote it;
//! `<size>` is the size's `key=value` pairs in spec order joined by `,` (`default` without
//! parameters); `<rep>` counts from 0. An nsys repetition is `<rep>.sqlite`, a cupti one
//! `<rep>.cupti` (the injection library's trace, docs/cupti.md), a harness one `<rep>.json`
//! (with nvbench's sidecars in `<rep>.json-bin/`, docs/harnesses.md). `DIR/manifest.json` is
//! optional and holds provenance.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::foundation::error::Error;
use crate::gpu::fingerprint::Fingerprint;
use crate::profile::{Capture, Job};
use crate::spec::ProfilerKind;

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
    /// The version of each tool that recorded its targets' repetitions, one map: written as
    /// one `<tool>_version` field each (`ncu_version`, `nsys_version`, `cupti_version`,
    /// `nvbench_version`, `pytest_benchmark_version`, ...), as recordings always had them.
    #[serde(flatten)]
    pub versions: ToolVersions,
    /// The first target's fingerprint: the GPU part is the recording's; the profiler part is
    /// each target's own (its profiler, and `ncu_version` / `nsys_version` above).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<Fingerprint>,
    #[serde(default)]
    pub runs: Vec<ManifestRun>,
}

/// The versions of the tools of a recording, by kind; in the file, one `<tool>_version` field each
/// (the kind's name with `-` as `_`), beside the manifest's other fields.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolVersions(pub std::collections::BTreeMap<ProfilerKind, String>);

/// The field of `kind`'s version: `ncu_version`, `pytest_benchmark_version`.
fn version_field(kind: ProfilerKind) -> String {
    format!("{}_version", kind.as_str().replace('-', "_"))
}

impl Serialize for ToolVersions {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (kind, v) in &self.0 {
            m.serialize_entry(&version_field(*kind), v)?;
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for ToolVersions {
    /// The manifest's fields that no other field of it took: the `<tool>_version` ones of known
    /// tools are kept, anything else is ignored (as serde ignores unknown fields).
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let fields = std::collections::BTreeMap::<String, serde_json::Value>::deserialize(d)?;
        let mut out = std::collections::BTreeMap::new();
        for kind in ProfilerKind::ALL {
            match fields.get(&version_field(kind)) {
                Some(serde_json::Value::String(v)) => {
                    out.insert(kind, v.clone());
                }
                Some(serde_json::Value::Null) | None => {}
                Some(other) => {
                    return Err(serde::de::Error::custom(format!(
                        "`{}` is {other}, not a version string",
                        version_field(kind)
                    )));
                }
            }
        }
        Ok(Self(out))
    }
}

/// A `manifest.json` cgp-gate writes: a recording's ([`Manifest`]) or an A/B recording's
/// (`run::ab::AbManifest`, which has no `runs` and an `order` that must always be written, so the
/// two stay two types with one reader).
pub trait Versioned: serde::de::DeserializeOwned {
    fn schema_version(&self) -> u32;
}

impl Versioned for Manifest {
    fn schema_version(&self) -> u32 {
        self.schema_version
    }
}

/// Read `DIR/manifest.json`, a `what` (`manifest`, `A/B manifest`) of at most schema `newest`;
/// `Ok(None)` when there is none.
///
/// # Errors
/// An unreadable, damaged or too large file; as [`parse_manifest`].
pub fn read_manifest<T: Versioned>(dir: &Path, what: &str, newest: u32) -> Result<Option<T>, Error> {
    let path = dir.join("manifest.json");
    let text = match crate::foundation::fsutil::read_text(&path, crate::foundation::fsutil::limits::MANIFEST)
    {
        Ok(t) => t,
        Err(e) if e.is_not_found() => return Ok(None),
        Err(e) => return Err(e.into_error(&path, what)),
    };
    parse_manifest(&path, &text, what, newest).map(Some)
}

/// Parse a `what`'s text (`path` is for messages).
///
/// # Errors
/// Invalid JSON (with its position) or a schema newer than `newest`.
pub fn parse_manifest<T: Versioned>(path: &Path, text: &str, what: &str, newest: u32) -> Result<T, Error> {
    let m: T = serde_json::from_str(text).map_err(|e| {
        Error::input(
            path,
            format!("invalid {what} at line {} column {}: {e}", e.line(), e.column()),
        )
    })?;
    if m.schema_version() > newest {
        return Err(Error::input(
            path,
            format!(
                "{what} schema {} is newer than this cgp-gate reads ({newest}): upgrade cgp-gate",
                m.schema_version()
            ),
        ));
    }
    Ok(m)
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
        read_manifest(dir, "manifest", MANIFEST_VERSION)
    }

    /// Parse a manifest's text; `path` is for messages.
    ///
    /// # Errors
    /// Invalid JSON (with its position) or a newer schema version.
    pub fn parse(path: &Path, text: &str) -> Result<Self, Error> {
        parse_manifest(path, text, "manifest", MANIFEST_VERSION)
    }

    /// The version of the tool that recorded the targets of `kind`, when the manifest has it.
    pub fn version(&self, kind: ProfilerKind) -> Option<&str> {
        self.versions.0.get(&kind).map(String::as_str)
    }

    /// Set (or clear) the version of the tool that recorded the targets of `kind`.
    pub fn set_version(&mut self, kind: ProfilerKind, version: Option<String>) {
        match version {
            Some(v) => self.versions.0.insert(kind, v),
            None => self.versions.0.remove(&kind),
        };
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
    rep_path_as(dir, target, size, rep, "sqlite")
}

/// The file of one repetition kept as `<rep>.<extension>` (a backend's
/// [`crate::profile::backend::RecordedAs`]).
pub fn rep_path_as(dir: &Path, target: &str, size: &str, rep: u32, extension: &str) -> PathBuf {
    dir.join(target).join(size).join(format!("{rep}.{extension}"))
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
///
/// The files go to a staging folder next to the destination (`.<name>.recording-XXXXXX`, a new name) and
/// replace the destination whole when the recording is finished: a recording never mixes with
/// the repetitions of an older one (replay would read stale files that the new manifest does not
/// list), and an interrupted run leaves the old recording as it was.
#[derive(Debug)]
pub struct Recorder {
    /// Where the files are written now (the staging folder).
    dir: PathBuf,
    /// Where the recording goes when finished.
    dest: PathBuf,
    manifest: Manifest,
    finished: bool,
}

impl Drop for Recorder {
    fn drop(&mut self) {
        if !self.finished {
            // The run ended before its recording was complete: the destination keeps what it
            // had; the partial files go.
            let _ = std::fs::remove_dir_all(&self.dir);
        }
        crate::foundation::fsutil::forget_temp_dir(&self.dir);
    }
}

impl Recorder {
    /// Start a recording that will be `dir` once finished.
    ///
    /// # Errors
    /// [`Error::Usage`] (exit 2) when `dir` exists and is not a new or empty folder or a recording
    /// cgp-gate wrote ([`check_destination`]): replacing it would delete files cgp-gate did not
    /// write. [`Error::Io`] when the staging folder cannot be created.
    pub fn new(dir: &Path) -> Result<Self, Error> {
        check_destination(dir, Layout::Recording)?;
        // `--record .` or `--record "$PWD"`: the folder's own name and parent, not `.`'s.
        let canonical = std::fs::canonicalize(dir).ok();
        let dir = canonical.as_deref().unwrap_or(dir);
        let name = dir
            .file_name()
            .map_or_else(|| "recording".to_owned(), |n| n.to_string_lossy().into_owned());
        let parent = dir
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or_else(|| Path::new("."));
        std::fs::create_dir_all(parent).map_err(|e| Error::io("create", parent, e))?;
        // A new folder of a name nobody has: nothing that exists is removed or written into.
        let staging = fresh_dir(parent, &format!(".{name}.recording-"))?;
        crate::foundation::fsutil::remember_temp_dir(&staging);
        let manifest = Manifest {
            schema_version: MANIFEST_VERSION,
            cgp_gate_version: Some(env!("CARGO_PKG_VERSION").to_owned()),
            ..Manifest::default()
        };
        Ok(Self {
            dir: staging,
            dest: dir.to_path_buf(),
            manifest,
            finished: false,
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
        // The target's backend says how a repetition is kept (its own kind of file, so that
        // replay reads it as one).
        let binary = matches!(capture.output, crate::profile::Output::Bytes(_));
        let ext = crate::profile::backend_of(job.target)
            .recorded_as()
            .iter()
            .find(|r| r.binary == binary)
            .map_or("csv", |r| r.extension);
        let path = rep_path_as(&self.dir, &job.target.name, &size, job.rep, ext);
        let bytes = capture.output.as_bytes();
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io("create", parent, e))?;
        }
        std::fs::write(&path, bytes).map_err(|e| Error::io("write", &path, e))?;
        copy_sidecars(&capture.origin, &path)?;
        // One file per repetition: a stale one of another kind would shadow this one.
        for other in crate::profile::recorded_extensions() {
            if other != ext {
                let _ = std::fs::remove_file(rep_path_as(&self.dir, &job.target.name, &size, job.rep, other));
            }
        }
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
        self,
        spec_hash: &str,
        ncu_version: &str,
        fingerprint: &Fingerprint,
    ) -> Result<PathBuf, Error> {
        let mut versions = crate::profile::Versions::default();
        versions.set(crate::spec::ProfilerKind::Ncu, Some(ncu_version.to_owned()));
        self.finish_with(spec_hash, &versions, fingerprint)
    }

    /// [`Recorder::finish`] with the version of each profiler the recorded targets used.
    ///
    /// # Errors
    /// When the manifest cannot be written.
    pub fn finish_with(
        mut self,
        spec_hash: &str,
        versions: &crate::profile::Versions,
        fingerprint: &Fingerprint,
    ) -> Result<PathBuf, Error> {
        self.manifest.spec_hash = Some(spec_hash.to_owned());
        for b in crate::profile::backends() {
            self.manifest
                .set_version(b.kind(), versions.version(b.kind()).map(str::to_owned));
        }
        self.manifest.fingerprint = Some(fingerprint.clone());
        // Recorded with the stand-in GPU of `CGP_GATE_STAND_IN_GPU`: its replays say so too.
        self.manifest.synthetic |= fingerprint.synthetic;
        let path = self.dir.join("manifest.json");
        let text = serde_json::to_string_pretty(&self.manifest)
            .map_err(|e| Error::output("the recording's manifest", e))?;
        crate::foundation::fsutil::write_atomic(&path, text.as_bytes())?;
        replace_dir(&self.dir, &self.dest)?;
        self.finished = true;
        Ok(self.dest.join("manifest.json"))
    }
}

/// Put the complete recording `staging` in place of `dest` (which may hold an older recording,
/// or nothing): the old one is moved aside, the new one renamed in, the old one deleted.
fn replace_dir(staging: &Path, dest: &Path) -> Result<(), Error> {
    let had_old = std::fs::symlink_metadata(dest).is_ok();
    // The old recording goes over an empty folder of our own (a directory may be renamed onto an
    // empty one), so no other file of that name can be replaced.
    let aside = if had_old {
        fresh_dir(
            staging.parent().unwrap_or_else(|| Path::new(".")),
            ".recording-old-",
        )?
    } else {
        PathBuf::new()
    };
    if had_old {
        std::fs::rename(dest, &aside).map_err(|e| Error::io("move the old recording aside:", dest, e))?;
    }
    if let Err(e) = std::fs::rename(staging, dest) {
        if had_old {
            // Put the old recording back rather than leave nothing.
            let _ = std::fs::rename(&aside, dest);
        }
        return Err(Error::io("move the new recording to", dest, e));
    }
    if had_old {
        std::fs::remove_dir_all(&aside).map_err(|e| Error::io("remove the old recording", &aside, e))?;
    }
    Ok(())
}

/// A new, empty folder in `parent` whose name starts with `prefix` (tempfile picks a name that
/// does not exist yet); the caller removes it.
fn fresh_dir(parent: &Path, prefix: &str) -> Result<PathBuf, Error> {
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in(parent)
        .map(tempfile::TempDir::keep)
        .map_err(|e| Error::io("create a folder in", parent, e))
}

/// What a `--record DIR` folder holds, for [`check_destination`].
#[derive(Clone, Copy, Debug)]
pub enum Layout {
    /// A recording: `manifest.json` (`runs`) and `<target>/<size>/<rep>.<ext>` files.
    Recording,
    /// `ab`'s recording: an A/B `manifest.json` (`schema_version` 1 to `newest`, an `order`
    /// list) and `base/` and `head/`, each a [`Layout::Recording`].
    AbRecording { newest: u32 },
}

/// `--record DIR` may replace `dir` only when it is new, an empty folder, or a recording cgp-gate
/// wrote in `layout`. A [`Layout::Recording`] is a `manifest.json` that is a cgp-gate recording
/// manifest (a JSON object with `schema_version` 1 to [`MANIFEST_VERSION`] and a `runs` list, read
/// by [`Manifest::parse`]) and nothing else but `<target>/<size>/<rep>.csv`, `.sqlite` or `.cupti`
/// files; a [`Layout::AbRecording`] an A/B manifest and `base/` and `head/`, each a recording.
/// Anything else (a project with a web app's `manifest.json`, a recording someone added notes to,
/// a link) is refused: replacing the folder would delete files cgp-gate did not write.
///
/// # Errors
/// [`Error::Usage`] (exit 2) naming the folder, what in it is not a recording's, and what to do.
pub fn check_destination(dir: &Path, layout: Layout) -> Result<(), Error> {
    let (what, stream, promise) = match layout {
        Layout::Recording => (
            "a recording",
            "`-` is standard output, and a recording is a folder of files, not a stream",
            "cgp-gate replaces the folder of --record whole and deletes nothing it did not write: give a new or empty folder (or an older recording of cgp-gate's)",
        ),
        Layout::AbRecording { .. } => (
            "an A/B recording",
            "`-` is standard output, and a recording is a folder",
            "ab writes manifest.json, base/ and head/ there and replaces nothing it did not write: give a new or empty folder (or an older A/B recording of cgp-gate's)",
        ),
    };
    let refuse = |why: String| Error::Usage(format!("--record {}: {why}; {promise}", dir.display()));
    if crate::foundation::fsutil::is_stdout(dir) {
        return Err(refuse(stream.to_owned()));
    }
    let meta = match std::fs::symlink_metadata(dir) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io("inspect", dir, e)),
    };
    if !meta.is_dir() {
        return Err(refuse("it exists and is not a folder".to_owned()));
    }
    let entries = list_dir(dir)?;
    if entries.is_empty() {
        return Ok(());
    }
    let has_manifest = entries.iter().any(|(n, is_dir)| n == "manifest.json" && !is_dir);
    if has_manifest {
        let path = dir.join("manifest.json");
        let shape = match layout {
            Layout::Recording => is_recording_manifest(&read_manifest_text(&path, "manifest")?)
                .map_err(|why| format!("its manifest.json is not a cgp-gate recording manifest ({why})")),
            Layout::AbRecording { newest } => {
                manifest_shape(&read_manifest_text(&path, "A/B manifest")?, newest, "order").map_err(|_| {
                    "its manifest.json is not a cgp-gate A/B recording manifest (schema_version and an `order` list)"
                        .to_owned()
                })
            }
        };
        shape.map_err(refuse)?;
    } else if matches!(layout, Layout::Recording) {
        return Err(refuse(
            "the folder is not empty and is not a cgp-gate recording (it has no manifest.json)".to_owned(),
        ));
    }
    for (name, is_dir) in &entries {
        match (layout, name.as_str(), is_dir) {
            (_, "manifest.json", false) => {}
            (Layout::Recording, _, true) => check_recorded_target(dir, name, &refuse)?,
            (Layout::AbRecording { .. }, "base" | "head", true) => {
                check_destination(&dir.join(name), Layout::Recording)?;
            }
            _ => {
                return Err(refuse(format!("it holds `{name}`, which is not part of {what}")));
            }
        }
    }
    Ok(())
}

/// A recording's manifest, bounded; `noun` names it in the error.
fn read_manifest_text(path: &Path, noun: &str) -> Result<String, Error> {
    crate::foundation::fsutil::read_text(path, crate::foundation::fsutil::limits::MANIFEST)
        .map_err(|e| e.into_error(path, noun))
}

/// `dir/<name>` of a recording holds `<size>/` folders of `<rep>.<ext>` files and nvbench
/// sidecar folders, nothing else.
fn check_recorded_target(dir: &Path, name: &str, refuse: &dyn Fn(String) -> Error) -> Result<(), Error> {
    for (size, size_is_dir) in list_dir(&dir.join(name))? {
        let at = format!("{name}/{size}");
        if !size_is_dir {
            return Err(refuse(format!(
                "it holds `{at}`, which is not part of a recording"
            )));
        }
        for (file, file_is_dir) in list_dir(&dir.join(name).join(&size))? {
            if file_is_dir && is_sidecar_dir(&file) {
                let folder = dir.join(name).join(&size).join(&file);
                if let Some((odd, _)) = list_dir(&folder)?.into_iter().find(|(_, d)| *d) {
                    return Err(refuse(format!(
                        "it holds `{at}/{file}/{odd}`, which is not part of a recording"
                    )));
                }
                continue;
            }
            if file_is_dir || !is_rep_file(&file) {
                return Err(refuse(format!(
                    "it holds `{at}/{file}`, which is not part of a recording"
                )));
            }
        }
    }
    Ok(())
}

/// Whether `text` has the shape of a manifest cgp-gate writes (a recording's, `runs`; an A/B
/// recording's, `order`): a JSON object with `schema_version` 1 to `newest` and a `list` array.
/// Why not, when it has not.
///
/// # Errors
/// The reason, in words.
pub fn manifest_shape(text: &str, newest: u32, list: &str) -> Result<(), String> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let obj = value.as_object().ok_or("not a JSON object")?;
    match obj.get("schema_version").and_then(serde_json::Value::as_u64) {
        Some(v) if (1..=u64::from(newest)).contains(&v) => {}
        Some(v) => return Err(format!("schema_version {v}, this cgp-gate writes 1 to {newest}")),
        None => return Err("no schema_version".to_owned()),
    }
    if !obj.get(list).is_some_and(serde_json::Value::is_array) {
        return Err(format!("no `{list}` list"));
    }
    Ok(())
}

/// The names and kinds (folder or not; a link is not a folder) of a folder's entries.
fn list_dir(dir: &Path) -> Result<Vec<(String, bool)>, Error> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).map_err(|e| Error::io("list", dir, e))? {
        let e = e.map_err(|e| Error::io("list", dir, e))?;
        let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
        out.push((e.file_name().to_string_lossy().into_owned(), is_dir));
    }
    Ok(out)
}

/// `<rep>.csv`, `<rep>.sqlite` or `<rep>.cupti` (a form some backend records), `<rep>` digits.
fn is_rep_file(name: &str) -> bool {
    name.rsplit_once('.').is_some_and(|(stem, ext)| {
        crate::profile::recorded_extensions().contains(&ext)
            && !stem.is_empty()
            && stem.bytes().all(|b| b.is_ascii_digit())
    })
}

/// `<rep>.json-bin` or `<rep>.json-freqs-bin`: the nvbench sidecars a recording keeps beside a
/// repetition ([`copy_sidecars`]).
fn is_sidecar_dir(name: &str) -> bool {
    ["-bin", "-freqs-bin"].iter().any(|suffix| {
        name.strip_suffix(suffix)
            .and_then(|rep| rep.strip_suffix(".json"))
            .is_some_and(|stem| !stem.is_empty() && stem.bytes().all(|b| b.is_ascii_digit()))
    })
}

/// Whether `text` is a cgp-gate recording manifest: why not, when it is not.
fn is_recording_manifest(text: &str) -> Result<(), String> {
    manifest_shape(text, MANIFEST_VERSION, "runs")?;
    Manifest::parse(Path::new("manifest.json"), text).map_err(|e| e.to_string())?;
    Ok(())
}

/// nvbench's `--jsonbin` sidecars of a harness capture (`<json>-bin/`, `<json>-freqs-bin/`),
/// kept beside the recorded `<rep>.json` as `<rep>.json-bin/` (docs/harnesses.md); plain files
/// only, never through a link.
///
/// # Errors
/// When a sidecar cannot be read or written.
pub fn copy_sidecars(origin: &Path, recorded: &Path) -> Result<(), Error> {
    use crate::profile::harness::sidecar_dir;
    for suffix in ["-bin", "-freqs-bin"] {
        let from = sidecar_dir(origin, suffix);
        let Ok(meta) = std::fs::symlink_metadata(&from) else {
            continue;
        };
        if !meta.is_dir() {
            continue;
        }
        let to = sidecar_dir(recorded, suffix);
        std::fs::create_dir_all(&to).map_err(|e| Error::io("create", &to, e))?;
        for e in std::fs::read_dir(&from).map_err(|e| Error::io("read", &from, e))? {
            let e = e.map_err(|e| Error::io("read", &from, e))?;
            if !e.file_type().is_ok_and(|t| t.is_file()) {
                continue;
            }
            let bytes = crate::foundation::fsutil::read_bounded(&e.path(), crate::harness::MAX_FILE_BYTES)
                .map_err(|r| r.into_error(&e.path(), "nvbench sidecar"))?;
            let dest = to.join(e.file_name());
            std::fs::write(&dest, bytes).map_err(|err| Error::io("write", &dest, err))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{Layout, check_destination};

    const AB: Layout = Layout::AbRecording { newest: 1 };

    fn refusal(dir: &std::path::Path, layout: Layout) -> String {
        check_destination(dir, layout).unwrap_err().to_string()
    }

    #[test]
    fn one_check_refuses_what_each_layout_did_not_write_and_keeps_what_it_did() {
        let t = tempfile::tempdir().unwrap();
        let ab = t.path().join("ab");
        // New, then empty: either layout may write there.
        for layout in [Layout::Recording, AB] {
            check_destination(&ab, layout).unwrap();
        }
        std::fs::create_dir_all(ab.join("base")).unwrap();
        std::fs::write(ab.join("manifest.json"), r#"{"schema_version":1,"order":[]}"#).unwrap();
        check_destination(&ab, AB).unwrap();
        // An A/B recording is not a recording, and a stray file is named in the A/B words.
        assert!(refusal(&ab, Layout::Recording).contains("not a cgp-gate recording manifest"));
        std::fs::write(ab.join("notes.txt"), "mine").unwrap();
        let why = refusal(&ab, AB);
        assert!(
            why.contains("it holds `notes.txt`, which is not part of an A/B recording")
                && why.contains("ab writes manifest.json, base/ and head/ there"),
            "{why}"
        );
        // A link to a folder is refused by both, never followed.
        let link = t.path().join("link");
        std::os::unix::fs::symlink(t.path().join("ab/base"), &link).unwrap();
        for layout in [Layout::Recording, AB] {
            assert!(refusal(&link, layout).contains("it exists and is not a folder"));
        }
    }
}
