//! The baseline file: its types, the JSON it is written as, and reading it back.
//!
//! The writer is hand-made rather than `serde_json::to_string_pretty` so that a file reads well in a
//! pull-request diff: keys in a fixed order, one line per sample list and per history generation, and
//! numbers in their shortest round-trip form (integers without `.0`). Reading goes through serde.

use std::fmt::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::foundation::error::Error;
use crate::gpu::fingerprint::Fingerprint;
use crate::measured::samples::{Sample, Series, SeriesKey};

/// Median of finite values; `NaN` for an empty slice (the store never has one).
pub(crate) fn median(values: &[f64]) -> f64 {
    crate::stats::median(values).unwrap_or(f64::NAN)
}

/// The baseline schema version this build writes, and the newest it reads.
///
/// - 2: an entry's samples are the launches left after every run (`reps`) dropped its warm-up
///   launches (`warmup:`, docs/statistics.md 2.5); `reps` groups them into runs (processes).
/// - 1: the samples hold every launch, warm-ups included. Still read: a check drops the warm-up
///   launches of each stored run by its `reps` ([`BaselineFile::drop_warmup_v1`]), so both sides
///   are compared alike.
pub const SCHEMA_VERSION: u32 = 2;

/// One baseline file: the complete measurement of one target on one kind of GPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(expecting = "a cgp-gate baseline object")]
pub struct BaselineFile {
    pub schema_version: u32,
    /// The spec target the file belongs to; also the file's name (`<target>.json`).
    pub target: String,
    /// When the samples were measured, RFC 3339 in UTC (`2026-05-01T12:00:00Z`).
    pub date: String,
    /// The commit measured, when known.
    pub git_commit: Option<String>,
    /// Version of the cgp-gate that wrote the file.
    pub tool_version: String,
    /// SHA-256 of the spec file the measurement ran under, hex.
    pub spec_hash: String,
    /// What the samples were measured on; `unknown` where a part could not be determined.
    pub fingerprint: Fingerprint,
    /// One entry per size x kernel x metric, sorted by (size, kernel, metric).
    pub entries: Vec<Entry>,
    /// The SASS hash of each measured kernel, size -> kernel -> SHA-256 hex
    /// (docs/sass-cache.md); empty when cuobjdump could not read the code, and in older files.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub sass: std::collections::BTreeMap<String, std::collections::BTreeMap<String, String>>,
    /// Counters measured to say why a time changed, not gated (`explain: true`; docs/why.md):
    /// compared with the run's, never judged. Empty in older files.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub counters: Vec<CounterSamples>,
}

/// The samples of one explanatory counter of one size x kernel (docs/why.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CounterSamples {
    pub size: String,
    pub kernel: String,
    pub metric: String,
    /// Base unit of the samples.
    pub unit: String,
    pub samples: Vec<f64>,
}

/// The samples of one size x kernel x metric and the trend of its median.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// Canonical size key (`m=1024,n=1024`, or `default`).
    pub size: String,
    pub kernel: String,
    pub metric: String,
    /// Base unit of the samples and of every median in `history` (`ns`, `byte`, ...).
    pub unit: String,
    /// Every value measured, in base units, in the order measured.
    pub samples: Vec<f64>,
    /// The repetition each sample came from (same length as `samples`).
    pub reps: Vec<u32>,
    /// The launch configurations (`grid (X, Y, Z) block (X, Y, Z)`) the samples came from; absent
    /// in files written before it existed (then a configuration change cannot be reported).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub configs: Vec<String>,
    /// The last generations of this entry, oldest first; the last one is the current samples.
    pub history: Vec<Generation>,
}

/// One past (or the current) measurement of an entry, summarised.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Generation {
    /// When it was measured (RFC 3339, UTC).
    pub date: String,
    /// The commit measured, when known.
    pub commit: Option<String>,
    /// Median of its samples, in the entry's unit.
    pub median: f64,
    /// How many samples it had.
    pub n: usize,
}

impl Entry {
    /// The series key of this entry within `target`.
    pub fn key(&self, target: &str) -> SeriesKey {
        SeriesKey {
            target: target.to_owned(),
            size: self.size.clone(),
            kernel: self.kernel.clone(),
            metric: self.metric.clone(),
        }
    }

    /// The samples as a [`Series`] of `target` (a loaded entry has one rep per sample).
    pub fn series(&self, target: &str) -> Series {
        Series {
            key: self.key(target),
            unit: self.unit.clone(),
            samples: self
                .samples
                .iter()
                .zip(&self.reps)
                .map(|(&value, &rep)| Sample { value, rep })
                .collect(),
            configs: self.configs.clone(),
        }
    }

    /// Median of the current samples.
    pub fn median(&self) -> f64 {
        median(&self.samples)
    }

    /// Medians of the generations before the current one, oldest first (for trends).
    pub fn older_medians(&self) -> Vec<f64> {
        let older = self.history.len().saturating_sub(1);
        self.history[..older].iter().map(|g| g.median).collect()
    }
}

impl BaselineFile {
    /// A schema-1 file holds every launch, warm-ups included: drop the first `warmup` launches of
    /// each stored run that has at least 3, as every run measured now does
    /// ([`crate::measured::samples::drop_warmup`]). Newer files are left alone.
    pub fn drop_warmup_v1(&mut self, warmup: u32) {
        if self.schema_version >= 2 || warmup == 0 {
            return;
        }
        for e in &mut self.entries {
            let mut by: std::collections::BTreeMap<u32, Vec<usize>> = std::collections::BTreeMap::new();
            for (i, r) in e.reps.iter().enumerate() {
                by.entry(*r).or_default().push(i);
            }
            let mut gone = vec![false; e.samples.len()];
            for idx in by.values() {
                if idx.len() >= crate::measured::samples::WARMUP_MIN_LAUNCHES {
                    let k = (warmup as usize).min(idx.len() - 1);
                    for &i in &idx[..k] {
                        gone[i] = true;
                    }
                }
            }
            let mut it = gone.iter();
            e.samples.retain(|_| !it.next().copied().unwrap_or(false));
            let mut it = gone.iter();
            e.reps.retain(|_| !it.next().copied().unwrap_or(false));
        }
    }

    /// The entry of a size x kernel x metric.
    pub fn entry(&self, size: &str, kernel: &str, metric: &str) -> Option<&Entry> {
        self.entries
            .iter()
            .find(|e| e.size == size && e.kernel == kernel && e.metric == metric)
    }

    /// The entry for a series key; `None` when the key belongs to another target.
    pub fn entry_for(&self, key: &SeriesKey) -> Option<&Entry> {
        if key.target != self.target {
            return None;
        }
        self.entry(&key.size, &key.kernel, &key.metric)
    }
}

/// Only the version field, read first so that a newer file is refused with a clear message
/// before its (possibly different) shape is looked at.
#[derive(Deserialize)]
#[serde(expecting = "a cgp-gate baseline object")]
struct VersionProbe {
    schema_version: Option<u32>,
}

/// Parse a baseline file's text. `path` is used in messages only.
///
/// # Errors
/// [`Error::Input`] naming the file: with line and column for malformed JSON or a field of the
/// wrong shape, with the schema version for a file from a newer cgp-gate, with the entry for
/// inconsistent contents.
pub fn parse(path: &Path, text: &str) -> Result<BaselineFile, Error> {
    let probe: VersionProbe = serde_json::from_str(text).map_err(|e| json_error(path, &e))?;
    match probe.schema_version {
        None => {
            return Err(Error::input(
                path,
                "not a cgp-gate baseline: `schema_version` is missing; \
                 delete the file and run `cgp-gate baseline update`",
            ));
        }
        Some(v) if v > SCHEMA_VERSION => {
            return Err(Error::input(
                path,
                format!(
                    "baseline was written by a newer cgp-gate (schema {v}); this build reads up \
                     to {SCHEMA_VERSION}: upgrade cgp-gate"
                ),
            ));
        }
        Some(0) => {
            return Err(Error::input(
                path,
                "`schema_version` 0 is not a baseline schema; \
                 delete the file and run `cgp-gate baseline update`",
            ));
        }
        Some(_) => {}
    }
    let file: BaselineFile = serde_json::from_str(text).map_err(|e| json_error(path, &e))?;
    validate(path, &file)?;
    Ok(file)
}

fn json_error(path: &Path, e: &serde_json::Error) -> Error {
    // serde_json appends " at line L column C"; the position is put first instead, where a
    // person and an editor look for it.
    let text = e.to_string();
    let what = text
        .rsplit_once(" at line ")
        .map_or(text.as_str(), |(head, _)| head);
    Error::input(
        path,
        format!(
            "line {}, column {}: invalid baseline JSON: {what}; \
             fix the file or delete it and run `cgp-gate baseline update`",
            e.line(),
            e.column()
        ),
    )
}

/// Checks serde cannot express: consistent lengths, finite numbers, unique entries.
fn validate(path: &Path, file: &BaselineFile) -> Result<(), Error> {
    if file.entries.is_empty() {
        // cgp-gate never writes one (`Store::update` refuses an empty measurement); read as a
        // baseline, it would turn every row of its target into `new`, and a slowdown would pass.
        return Err(Error::input(
            path,
            format!(
                "the baseline of `{}` holds no entries (`entries: []`): cgp-gate never writes \
                 such a file, and it would pass every row of the target as new; restore it from \
                 git, or delete it and run `cgp-gate baseline update`",
                file.target
            ),
        ));
    }
    let mut seen = std::collections::BTreeSet::new();
    for e in &file.entries {
        let name = || format!("entry {} / {} / {}", e.size, e.kernel, e.metric);
        if !seen.insert((&e.size, &e.kernel, &e.metric)) {
            return Err(Error::input(
                path,
                format!("{} appears twice; keep one of them", name()),
            ));
        }
        if e.samples.len() < 2 {
            return Err(Error::input(
                path,
                format!(
                    "{} has {} sample(s); a baseline entry needs at least 2: \
                     run `cgp-gate baseline update` again",
                    name(),
                    e.samples.len()
                ),
            ));
        }
        if e.samples.len() > crate::stats::MAX_SAMPLES {
            return Err(Error::input(
                path,
                format!(
                    "{} holds {} samples; a baseline entry may hold at most {} (the statistics \
                     judge at most that many per side): lower `baseline_repetitions` and run \
                     `cgp-gate baseline update` again",
                    name(),
                    e.samples.len(),
                    crate::stats::MAX_SAMPLES
                ),
            ));
        }
        if e.reps.len() != e.samples.len() {
            return Err(Error::input(
                path,
                format!(
                    "{} has {} samples but {} reps; the two lists must have the same length",
                    name(),
                    e.samples.len(),
                    e.reps.len()
                ),
            ));
        }
        // serde_json refuses numbers out of f64's range, so only hand-made files can get here
        // through an out-of-range history median; samples are checked for the same reason.
        if let Some(v) = e.samples.iter().find(|v| !v.is_finite()) {
            return Err(Error::input(
                path,
                format!("{} has a sample that is not finite ({v})", name()),
            ));
        }
        if crate::foundation::units::is_kernel_duration(&e.metric) && e.samples.contains(&0.0) {
            return Err(Error::input(
                path,
                format!(
                    "{} has a duration of 0 ns; a kernel launch cannot take no time (a row \
                     against it could never be judged): restore the file from git, or delete it \
                     and run `cgp-gate baseline update`",
                    name()
                ),
            ));
        }
        if e.unit == "ns"
            && let Some(v) = e.samples.iter().find(|v| **v < 0.0)
        {
            return Err(Error::input(
                path,
                format!(
                    "{} has a negative duration ({v} ns); a duration cannot be negative: fix the file or delete it and run `cgp-gate baseline update`",
                    name()
                ),
            ));
        }
        if let Some((i, why)) = e.samples.iter().enumerate().find_map(|(i, v)| {
            crate::measured::plausible::implausible(&e.metric, &e.unit, *v).map(|w| (i, w))
        }) {
            return Err(Error::input(
                path,
                format!(
                    "{} sample #{i} (repetition {}) reads {why}; no GPU gives that reading: restore the file from git, or delete it and run `cgp-gate baseline update`",
                    name(),
                    e.reps.get(i).map_or_else(|| "?".to_owned(), ToString::to_string)
                ),
            ));
        }
    }
    Ok(())
}

/// Render a baseline file as its canonical JSON text (ends with a newline).
///
/// The same file always renders to the same bytes, and `parse(render(f)) == f`.
pub fn render(file: &BaselineFile) -> String {
    let mut out = String::with_capacity(256 + file.entries.len() * 256);
    out.push_str("{\n");
    let _ = writeln!(out, "  \"schema_version\": {},", file.schema_version);
    let _ = writeln!(out, "  \"target\": {},", string(&file.target));
    let _ = writeln!(out, "  \"date\": {},", string(&file.date));
    let _ = writeln!(
        out,
        "  \"git_commit\": {},",
        opt_string(file.git_commit.as_deref())
    );
    let _ = writeln!(out, "  \"tool_version\": {},", string(&file.tool_version));
    let _ = writeln!(out, "  \"spec_hash\": {},", string(&file.spec_hash));
    out.push_str("  \"fingerprint\": {\n");
    render_fingerprint(&mut out, &file.fingerprint);
    out.push_str("  },\n");
    if !file.sass.is_empty() {
        out.push_str("  \"sass\": {\n");
        let n = file.sass.len();
        for (i, (size, kernels)) in file.sass.iter().enumerate() {
            let map = serde_json::to_string(kernels).unwrap_or_else(|_| "{}".to_owned());
            let _ = write!(out, "    {}: {map}", string(size));
            out.push_str(if i + 1 < n { ",\n" } else { "\n" });
        }
        out.push_str("  },\n");
    }
    if !file.counters.is_empty() {
        out.push_str("  \"counters\": [\n");
        let n = file.counters.len();
        for (i, c) in file.counters.iter().enumerate() {
            let samples: Vec<String> = c.samples.iter().map(|v| number(*v)).collect();
            let _ = write!(
                out,
                "    {{\"size\": {}, \"kernel\": {}, \"metric\": {}, \"unit\": {}, \"samples\": [{}]}}",
                string(&c.size),
                string(&c.kernel),
                string(&c.metric),
                string(&c.unit),
                samples.join(", ")
            );
            out.push_str(if i + 1 < n { ",\n" } else { "\n" });
        }
        out.push_str("  ],\n");
    }
    if file.entries.is_empty() {
        out.push_str("  \"entries\": []\n");
    } else {
        out.push_str("  \"entries\": [\n");
        for (i, e) in file.entries.iter().enumerate() {
            render_entry(&mut out, e);
            out.push_str(if i + 1 < file.entries.len() { ",\n" } else { "\n" });
        }
        out.push_str("  ]\n");
    }
    out.push_str("}\n");
    out
}

fn render_fingerprint(out: &mut String, fp: &Fingerprint) {
    // Through serde so that a field added to `Fingerprint` is written without touching this
    // code; `preserve_order` keeps the struct's declaration order, which is stable.
    let fields = match serde_json::to_value(fp) {
        Ok(serde_json::Value::Object(map)) => map,
        _ => serde_json::Map::new(),
    };
    let n = fields.len();
    for (i, (k, v)) in fields.iter().enumerate() {
        let _ = write!(out, "    {}: {}", string(k), v);
        out.push_str(if i + 1 < n { ",\n" } else { "\n" });
    }
}

fn render_entry(out: &mut String, e: &Entry) {
    out.push_str("    {\n");
    let _ = writeln!(
        out,
        "      \"size\": {}, \"kernel\": {}, \"metric\": {}, \"unit\": {},",
        string(&e.size),
        string(&e.kernel),
        string(&e.metric),
        string(&e.unit)
    );
    let _ = writeln!(
        out,
        "      \"samples\": [{}],",
        join(e.samples.iter().map(|v| number(*v)))
    );
    let _ = writeln!(
        out,
        "      \"reps\": [{}],",
        join(e.reps.iter().map(u32::to_string))
    );
    if !e.configs.is_empty() {
        let _ = writeln!(
            out,
            "      \"configs\": [{}],",
            join(e.configs.iter().map(|c| string(c)))
        );
    }
    if e.history.is_empty() {
        out.push_str("      \"history\": []\n");
    } else {
        out.push_str("      \"history\": [\n");
        for (i, g) in e.history.iter().enumerate() {
            let _ = write!(
                out,
                "        {{\"date\": {}, \"commit\": {}, \"median\": {}, \"n\": {}}}",
                string(&g.date),
                opt_string(g.commit.as_deref()),
                number(g.median),
                g.n
            );
            out.push_str(if i + 1 < e.history.len() { ",\n" } else { "\n" });
        }
        out.push_str("      ]\n");
    }
    out.push_str("    }");
}

fn join(items: impl Iterator<Item = String>) -> String {
    items.collect::<Vec<_>>().join(", ")
}

fn string(s: &str) -> String {
    // Serialising a `str` cannot fail; the fallback keeps this panic-free regardless.
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_owned())
}

fn opt_string(s: Option<&str>) -> String {
    s.map_or_else(|| "null".to_owned(), string)
}

/// The largest magnitude below which every integer is exactly representable in an `f64`.
const EXACT_INT_LIMIT: f64 = 9_007_199_254_740_992.0;

/// A finite number in its shortest form that reads back to the same `f64`: integers without a
/// fraction (`406240`), others as serde_json prints them (`0.1`, `1.5e-7`). Not-finite values
/// have no JSON form and are written as `null` (the store never writes them: `update` refuses).
pub(crate) fn number(v: f64) -> String {
    if !v.is_finite() {
        return "null".to_owned();
    }
    if v.fract() == 0.0 && v.abs() < EXACT_INT_LIMIT && !(v == 0.0 && v.is_sign_negative()) {
        #[expect(
            clippy::cast_possible_truncation,
            reason = "v is an integer of magnitude below 2^53, so the cast is exact"
        )]
        let i = v as i64;
        return i.to_string();
    }
    serde_json::Number::from_f64(v).map_or_else(|| "null".to_owned(), |n| n.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_use_the_shortest_form_that_reads_back() {
        for (v, text) in [
            (406_240.0, "406240"),
            (0.0, "0"),
            (-0.0, "-0.0"),
            (-3.0, "-3"),
            (0.1, "0.1"),
            (1.5e-7, "1.5e-7"),
            (1e300, "1e+300"),
            (123_456.789, "123456.789"),
        ] {
            assert_eq!(number(v), text, "{v}");
            let back: f64 = serde_json::from_str(text).unwrap();
            assert_eq!(back.to_bits(), v.to_bits(), "{text} reads back as {back}");
        }
        assert_eq!(number(f64::NAN), "null");
    }

    #[test]
    fn large_integers_beyond_2_pow_53_keep_their_exact_value() {
        let v = 2f64.powi(60);
        let back: f64 = serde_json::from_str(&number(v)).unwrap();
        assert_eq!(back.to_bits(), v.to_bits());
    }
}

#[cfg(test)]
mod bound_tests {
    use super::*;

    #[test]
    fn a_schema_1_baseline_drops_the_warm_up_launch_of_each_stored_run() {
        let path = Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../examples/baselines/synthetic-gpu-no-hardware/reduce.json"
        ));
        let text = std::fs::read_to_string(path).unwrap();
        let mut f = parse(path, &text).unwrap();
        assert_eq!(f.schema_version, 1);
        let before = f.entries[0].clone();
        assert_eq!(&before.reps[..6], &[0, 0, 0, 1, 1, 1]);
        f.drop_warmup_v1(1);
        let e = &f.entries[0];
        assert_eq!(e.samples.len(), before.samples.len() * 2 / 3);
        assert_eq!(&e.reps[..4], &[0, 0, 1, 1]);
        assert_eq!(e.samples[0].to_bits(), before.samples[1].to_bits());
        assert_eq!(e.samples[2].to_bits(), before.samples[4].to_bits());
        // A current file is left alone.
        let mut g = parse(path, &text).unwrap();
        g.schema_version = SCHEMA_VERSION;
        g.drop_warmup_v1(1);
        assert_eq!(g.entries[0], before);
    }

    #[test]
    fn an_entry_beyond_the_sample_bound_is_refused_with_the_bound() {
        let path = Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../examples/baselines/synthetic-gpu-no-hardware/reduce.json"
        ));
        let text = std::fs::read_to_string(path).unwrap();
        let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let n = crate::stats::MAX_SAMPLES + 1;
        let entry = &mut v["entries"][0];
        entry["samples"] = serde_json::Value::from(vec![1000.0; n]);
        entry["reps"] = serde_json::Value::from((0..n as u64).collect::<Vec<u64>>());
        let err = parse(path, &v.to_string()).unwrap_err().to_string();
        assert!(err.contains("holds 200001 samples"), "{err}");
        assert!(err.contains("at most 200000"), "{err}");
        // At the bound it is read.
        let entry = &mut v["entries"][0];
        entry["samples"] = serde_json::Value::from(vec![1000.0; n - 1]);
        entry["reps"] = serde_json::Value::from((0..n as u64 - 1).collect::<Vec<u64>>());
        assert!(parse(path, &v.to_string()).is_ok());
    }
}
