//! The baseline store: `<dir>/<gpu_key>/<target>.json`, read without a lock, written under one.

use std::collections::BTreeSet;
use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::date::rfc3339_utc;
use super::format::{self, BaselineFile, SCHEMA_VERSION};
use super::history;
use super::lock::{self, DirLock, LockTimeout};
use crate::foundation::error::Error;
use crate::gpu::fingerprint::Fingerprint;
use crate::measured::samples::Series;

/// A directory of baselines (`baselines/` by default), one subdirectory per GPU key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Store {
    dir: PathBuf,
    lock_timeout: LockTimeout,
}

/// What an update records besides the samples.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpdateMeta {
    /// The commit measured, when known.
    pub git_commit: Option<String>,
    /// SHA-256 of the spec, hex (`cgp_spec::spec::Spec::hash`).
    pub spec_hash: String,
    /// Generations kept per entry, the new one included (`cgp_spec::spec::Settings::history`);
    /// 0 is taken as 1.
    pub history: usize,
    /// When the samples were measured, RFC 3339 in UTC.
    pub date: String,
}

impl UpdateMeta {
    /// Metadata dated now.
    pub fn now(git_commit: Option<String>, spec_hash: impl Into<String>, history: usize) -> Self {
        Self {
            git_commit,
            spec_hash: spec_hash.into(),
            history,
            date: rfc3339_utc(SystemTime::now()),
        }
    }
}

impl Store {
    /// The store at `dir`; a writer waits [`lock::DEFAULT_LOCK_TIMEOUT`] for its lock.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            lock_timeout: LockTimeout::default(),
        }
    }

    /// The same store, its writers waiting for the lock as `timeout` says (the command layer
    /// reads the user's setting, [`lock::LOCK_TIMEOUT_ENV`]).
    pub fn with_lock_timeout(self, timeout: LockTimeout) -> Self {
        Self {
            lock_timeout: timeout,
            ..self
        }
    }

    /// The baselines directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where the baseline of `target` measured on a GPU with key `gpu_key` lives (whether or
    /// not it exists). Names are not checked here; `load` and `update` check them.
    pub fn path(&self, gpu_key: &str, target: &str) -> PathBuf {
        self.dir.join(gpu_key).join(format!("{target}.json"))
    }

    /// Load the baseline of `target` for `gpu_key` ([`Fingerprint::gpu_key`]); `None` when there
    /// is none yet.
    ///
    /// # Errors
    /// [`Error::Input`] for a name that cannot be a file name, a malformed file (with line and
    /// column), a file from a newer cgp-gate, or a file holding another target;
    /// [`Error::Io`] when it exists but cannot be read.
    pub fn load(&self, gpu_key: &str, target: &str) -> Result<Option<BaselineFile>, Error> {
        check_name(&self.dir, "gpu key", gpu_key)?;
        check_name(&self.dir, "target", target)?;
        let path = self.path(gpu_key, target);
        read(&path, target)
    }

    /// Every baseline in the store, across GPU keys, sorted by path. Temporary files of writes
    /// in progress (or of writers that died) start with `.` and are skipped, as is anything not
    /// named `*.json`. A missing store directory holds no baselines.
    ///
    /// # Errors
    /// As [`Store::load`], for the first file that fails.
    pub fn load_all(&self) -> Result<Vec<(PathBuf, BaselineFile)>, Error> {
        let mut out = Vec::new();
        for gpu_dir in list(&self.dir)? {
            if !gpu_dir.is_dir() {
                continue;
            }
            for path in list(&gpu_dir)? {
                let Some(target) = path
                    .file_name()
                    .and_then(|n| n.to_str())
                    .and_then(|n| n.strip_suffix(".json"))
                else {
                    continue;
                };
                if !path.is_file() {
                    continue;
                }
                if let Some(file) = read(&path, target)? {
                    out.push((path, file));
                }
            }
        }
        Ok(out)
    }

    /// Record a complete measurement of `target` as its new baseline on this kind of GPU, and
    /// return the file's path.
    ///
    /// Contract: call this only after a fully successful run, with every series of the target
    /// (all sizes, kernels and metrics the spec asks for). The new file holds exactly these
    /// series: an entry of the old file that is not among them is dropped. An entry that
    /// continues (same size, kernel, metric and unit) keeps its history; every entry gets the
    /// new generation appended and is trimmed to the last `meta.history` generations.
    ///
    /// The read-modify-write holds the store's lock, and the file is replaced atomically: a
    /// writer that dies at any point leaves the previous baseline whole.
    ///
    /// # Errors
    /// [`Error::Input`] (nothing is written) when `series` is empty, holds another target, a
    /// key twice, fewer than 2 samples, a number that is not finite, or reps that do not match
    /// the samples; when the existing baseline cannot be read (malformed or newer: it is never
    /// overwritten blindly). [`Error::Io`] when the store cannot be locked or written.
    pub fn update(
        &self,
        target: &str,
        fingerprint: &Fingerprint,
        series: &[&Series],
        meta: &UpdateMeta,
    ) -> Result<PathBuf, Error> {
        self.write_update(target, fingerprint, series, meta, false)
    }

    /// [`Store::update`] for a measurement of some sizes of `target` (one shard's): the entries
    /// of the sizes in `series` are replaced as `update` does, the entries of every other size
    /// are kept as they are (no new generation: they were not measured).
    ///
    /// # Errors
    /// As [`Store::update`]; also [`Error::Input`] when the existing file was written under
    /// another spec or on another setup (mixing them in one file would compare apples and
    /// oranges): run a complete `baseline update` instead.
    pub fn update_sizes(
        &self,
        target: &str,
        fingerprint: &Fingerprint,
        series: &[&Series],
        meta: &UpdateMeta,
    ) -> Result<PathBuf, Error> {
        self.write_update(target, fingerprint, series, meta, true)
    }

    fn write_update(
        &self,
        target: &str,
        fingerprint: &Fingerprint,
        series: &[&Series],
        meta: &UpdateMeta,
        keep_other_sizes: bool,
    ) -> Result<PathBuf, Error> {
        let gpu_key = fingerprint.gpu_key();
        check_name(&self.dir, "target", target)?;
        check_name(&self.dir, "gpu key", &gpu_key)?;
        let path = self.path(&gpu_key, target);
        check_series(&path, target, series)?;

        let _lock = DirLock::acquire(&self.dir, &self.lock_timeout)?;
        lock::remove_stale_temps(&path)?;
        let previous = read(&path, target)?;
        // The SYNTHETIC stand-in GPU (`CGP_GATE_STAND_IN_GPU`, docs/gpu.md) names a real card:
        // its measurements never replace a real GPU's baseline of that name.
        if fingerprint.synthetic && previous.as_ref().is_some_and(|p| !p.fingerprint.synthetic) {
            return Err(Error::input(
                &path,
                "refusing to replace a baseline measured on a real GPU with one of the SYNTHETIC stand-in GPU (CGP_GATE_STAND_IN_GPU): unset CGP_GATE_STAND_IN_GPU on a GPU runner, or write the stand-in's baselines to another --baselines folder",
            ));
        }
        // History restarts at a profiler change (issue 44): an ncu generation is not a
        // measurement of the quantity a cupti run measures, so its medians are not carried over.
        let same_profiler = |f: &&BaselineFile| {
            f.fingerprint
                .differences(fingerprint, crate::gpu::fingerprint::ALWAYS_KEY_FIELDS)
                .is_empty()
        };
        let previous_entries = previous
            .as_ref()
            .filter(same_profiler)
            .map_or(&[][..], |f| f.entries.as_slice());
        let mut kept: Vec<super::format::Entry> = Vec::new();
        // The SASS hashes and explanatory counters of sizes this (sharded) update does not
        // measure stay; those of measured sizes are written afresh after the samples.
        let mut kept_sass = std::collections::BTreeMap::new();
        let mut kept_counters = Vec::new();
        if keep_other_sizes && let Some(prev) = &previous {
            let fields = crate::gpu::fingerprint::DEFAULT_KEY_FIELDS;
            let diffs = prev.fingerprint.differences(fingerprint, fields);
            if prev.spec_hash != meta.spec_hash || !diffs.is_empty() {
                return Err(Error::input(
                    &path,
                    "refusing a partial (sharded) update: the baseline was written under another spec or on another setup; run `cgp-gate baseline update` without --shard",
                ));
            }
            let measured: BTreeSet<&str> = series.iter().map(|s| s.key.size.as_str()).collect();
            kept = prev
                .entries
                .iter()
                .filter(|e| !measured.contains(e.size.as_str()))
                .cloned()
                .collect();
            kept_sass = prev
                .sass
                .iter()
                .filter(|(size, _)| !measured.contains(size.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            kept_counters = prev
                .counters
                .iter()
                .filter(|c| !measured.contains(c.size.as_str()))
                .cloned()
                .collect();
        }
        let mut entries = history::next_entries(
            previous_entries,
            series,
            &meta.date,
            meta.git_commit.as_deref(),
            meta.history,
        );
        if !kept.is_empty() {
            entries.extend(kept);
            entries.sort_by(|a, b| (&a.size, &a.kernel, &a.metric).cmp(&(&b.size, &b.kernel, &b.metric)));
        }
        let file = BaselineFile {
            schema_version: SCHEMA_VERSION,
            target: target.to_owned(),
            date: meta.date.clone(),
            git_commit: meta.git_commit.clone(),
            tool_version: env!("CARGO_PKG_VERSION").to_owned(),
            spec_hash: meta.spec_hash.clone(),
            fingerprint: fingerprint.clone(),
            entries,
            // A new measurement: the code may have changed, so no old hash survives it;
            // `set_sass` records the hashes of what was measured.
            sass: kept_sass,
            counters: kept_counters,
        };
        // Never write what a check would refuse to read (issue 34): the file is read back first.
        let text = format::render(&file);
        format::parse(&path, &text).map_err(|e| {
            Error::input(
                &path,
                format!("refusing to write a baseline that cgp-gate could not read back: {e}"),
            )
        })?;
        lock::write_atomic(&path, text.as_bytes())?;
        Ok(path)
    }
}

impl Store {
    /// Record the SASS hashes (size -> kernel -> hash) of a target's baseline, replacing those
    /// of the sizes given; nothing happens when the baseline does not exist.
    ///
    /// # Errors
    /// The baseline cannot be read or written.
    pub fn set_sass(
        &self,
        gpu_key: &str,
        target: &str,
        sass: std::collections::BTreeMap<String, std::collections::BTreeMap<String, String>>,
    ) -> Result<(), Error> {
        check_name(&self.dir, "target", target)?;
        check_name(&self.dir, "gpu key", gpu_key)?;
        let path = self.path(gpu_key, target);
        let _lock = DirLock::acquire(&self.dir, &self.lock_timeout)?;
        let Some(mut file) = read(&path, target)? else {
            return Ok(());
        };
        file.sass.extend(sass);
        lock::write_atomic(&path, format::render(&file).as_bytes())
    }

    /// Record the explanatory counters (docs/why.md) of a target's baseline, replacing those of
    /// the sizes they belong to; nothing happens when the baseline does not exist.
    ///
    /// # Errors
    /// The baseline cannot be read or written.
    pub fn set_counters(
        &self,
        gpu_key: &str,
        target: &str,
        counters: Vec<super::format::CounterSamples>,
    ) -> Result<(), Error> {
        check_name(&self.dir, "target", target)?;
        check_name(&self.dir, "gpu key", gpu_key)?;
        let path = self.path(gpu_key, target);
        let _lock = DirLock::acquire(&self.dir, &self.lock_timeout)?;
        let Some(mut file) = read(&path, target)? else {
            return Ok(());
        };
        let sizes: BTreeSet<String> = counters.iter().map(|c| c.size.clone()).collect();
        file.counters.retain(|c| !sizes.contains(&c.size));
        file.counters.extend(counters);
        file.counters
            .sort_by(|a, b| (&a.size, &a.kernel, &a.metric).cmp(&(&b.size, &b.kernel, &b.metric)));
        lock::write_atomic(&path, format::render(&file).as_bytes())
    }
}

/// Read and parse one baseline; `None` when the file does not exist.
fn read(path: &Path, target: &str) -> Result<Option<BaselineFile>, Error> {
    let text = match crate::foundation::fsutil::read_text(path, crate::foundation::fsutil::limits::BASELINE) {
        Ok(text) => text,
        Err(e) if e.is_not_found() => return Ok(None),
        Err(crate::foundation::fsutil::ReadError::Io(e)) => return Err(Error::io("read baseline", path, e)),
        Err(e) => {
            return Err(Error::input(
                path,
                format!(
                    "{}: fix the file or delete it and run `cgp-gate baseline update`",
                    e.message("baseline")
                ),
            ));
        }
    };
    let file = format::parse(path, &text)?;
    if file.target != target {
        return Err(Error::input(
            path,
            format!(
                "the file holds target `{}` but is named for `{target}`; \
                 rename the file to `{}.json` or delete it",
                file.target, file.target
            ),
        ));
    }
    Ok(Some(file))
}

/// The entries of `dir` that do not start with `.`, sorted; none when `dir` does not exist.
fn list(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io("list", dir, e)),
    };
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| Error::io("list", dir, e))?;
        if !entry.file_name().to_string_lossy().starts_with('.') {
            out.push(entry.path());
        }
    }
    out.sort();
    Ok(out)
}

/// A target or GPU key must be usable as one path component that `load_all` does not skip.
fn check_name(dir: &Path, what: &str, name: &str) -> Result<(), Error> {
    let ok = !name.is_empty()
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(Error::input(
            dir,
            format!(
                "{what} `{name}` cannot name a baseline file: use ASCII letters, digits, `-`, `_` \
                 and `.`, not starting with `.`"
            ),
        ))
    }
}

/// Refuse, before anything is locked or written, a measurement that is not a complete, usable
/// set of samples.
impl Store {
    /// Check the series of one target as [`Store::update`] would, without writing: callers that
    /// write several targets validate them all first, so a bad one leaves every file untouched.
    ///
    /// # Errors
    /// As the refusals of [`Store::update`].
    pub fn validate(&self, target: &str, fingerprint: &Fingerprint, series: &[&Series]) -> Result<(), Error> {
        check_series(&self.path(&fingerprint.gpu_key(), target), target, series)
    }
}

fn check_series(path: &Path, target: &str, series: &[&Series]) -> Result<(), Error> {
    let refuse = |message: String| Err(Error::input(path, format!("refusing to write: {message}")));
    if series.is_empty() {
        return refuse(format!(
            "no series for target `{target}`; a baseline is written only from a complete run"
        ));
    }
    let mut seen = BTreeSet::new();
    for s in series {
        let k = &s.key;
        let name = format!("{} / {} / {}", k.size, k.kernel, k.metric);
        if k.target != target {
            return refuse(format!(
                "series {name} belongs to target `{}`, not `{target}`",
                k.target
            ));
        }
        if !seen.insert(k) {
            return refuse(format!("series {name} is given twice"));
        }
        if s.samples.len() < 2 {
            return refuse(format!(
                "series {name} has {} sample(s); a baseline needs at least 2 per series",
                s.samples.len()
            ));
        }
        if let Some((i, v)) = s.values().iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return refuse(format!(
                "series {name} has a sample that is not finite ({v}, #{i})"
            ));
        }
        if s.samples.len() > crate::stats::MAX_SAMPLES {
            return refuse(format!(
                "series {name} has {} samples; a baseline entry may hold at most {} (a check refuses more): lower `baseline_repetitions` or the launches per process",
                s.samples.len(),
                crate::stats::MAX_SAMPLES
            ));
        }
        if let Some((i, why)) = s.values().iter().enumerate().find_map(|(i, v)| {
            crate::measured::plausible::implausible(&k.metric, &s.unit, *v).map(|w| (i, w))
        }) {
            return refuse(format!(
                "series {name} sample #{i} (repetition {}) reads {why}; no GPU gives that reading",
                s.reps()
                    .get(i)
                    .map_or_else(|| "?".to_owned(), ToString::to_string)
            ));
        }
    }
    Ok(())
}
