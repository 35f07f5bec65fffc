//! The reader registry: one [`Reader`] per harness format, each in its own file of this folder,
//! and one line each in `harness::formats::READERS` (docs/architecture.md, "Adding a backend").
//!
//! A reader says everything cgp-gate asks of a format: whether a parsed file is one of its
//! ([`Reader::detects`], by content, never by name), what the file holds ([`Reader::read`]: its
//! benchmarks' samples, the device or runner and the tool's version it names), what `init --from`
//! gates by default and which way is better, and what a live run adds to the target's command
//! ([`Reader::live`]: flags, environment, and where the file is written: a path cgp-gate names,
//! the program's standard output, or a folder gathered into one capture). Everything else (the
//! backend, `import`, `parse`, `init --from`, replay) asks the registry.
//!
//! A file is read as one JSON document, else as JSON lines (one object a line: tritonbench's CI
//! rows, cargo-criterion's messages, vLLM's `--append-result`); Python's `NaN` and `Infinity`
//! (which `json.dump` writes and JSON has not) are read as the strings `"NaN"` and `"Infinity"`,
//! which every reader refuses as a value or, where the tool means something by them (asv's
//! skipped benchmarks), reads as that. A format whose output is several files (Criterion's
//! folders, asv's results with `benchmarks.json`) is read from a *bundle*: cgp-gate's own JSON
//! object holding the files as the tool wrote them (`{"cgp_gate_bundle": 1, "format": ...,
//! "files": [{"path", "doc"}]}`), which [`Reader::gather`] makes from the folder or file given and
//! which a recording keeps as the repetition's capture.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde_json::Value;

use super::{Entry, Format, HarnessError, HarnessFile, MAX_FILE_BYTES, Sidecars};
use crate::foundation::threshold::Direction;

/// A harness file, parsed.
#[derive(Debug, Clone, PartialEq)]
pub enum Doc {
    /// One JSON document.
    Json(Value),
    /// JSON lines: two or more objects, one after the other.
    Lines(Vec<Value>),
}

impl Doc {
    /// The document, when the file is one.
    pub fn json(&self) -> Option<&Value> {
        match self {
            Self::Json(v) => Some(v),
            Self::Lines(_) => None,
        }
    }

    /// The objects of the file: the lines, or the one document.
    pub fn objects(&self) -> &[Value] {
        match self {
            Self::Json(v) => std::slice::from_ref(v),
            Self::Lines(l) => l,
        }
    }
}

/// Where the file of a live run is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Written {
    /// At the path cgp-gate gave (`LiveRun::out`).
    File,
    /// On the program's standard output.
    Stdout,
    /// In this folder, gathered by [`Reader::gather`] (the files written during the run).
    Folder(PathBuf),
}

/// What a live run adds to the target's command, and where its file is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Live {
    pub flags: Vec<String>,
    pub env: Vec<(String, String)>,
    pub written: Written,
}

impl Live {
    /// The flags, the file written where they say.
    pub fn flags(flags: Vec<String>) -> Self {
        Self {
            flags,
            env: Vec::new(),
            written: Written::File,
        }
    }
}

/// One live repetition: the file's path, the target's command (argv) and where it runs.
#[derive(Debug, Clone, Copy)]
pub struct LiveRun<'a> {
    pub out: &'a Path,
    pub app: &'a [String],
    pub cwd: &'a Path,
}

/// The variable every live harness run has: the path its file should go to, for a program that
/// takes no output flag (the PyTorch rows a script writes; `cgp_gate.triton`).
pub const OUTPUT_ENV: &str = "CGP_GATE_OUTPUT";

/// A harness format: how its files are recognised and read, and how its program runs.
pub trait Reader: Sync {
    /// The format it reads.
    fn format(&self) -> Format;

    /// Whether `doc` is a file of this format, by its content.
    fn detects(&self, doc: &Doc) -> bool;

    /// Read a file of this format.
    ///
    /// # Errors
    /// A [`HarnessError`] naming the file, and the benchmark, state and field where it applies.
    fn read(&self, doc: &Doc, origin: &Path, sidecars: Sidecars<'_>) -> Result<HarnessFile, HarnessError>;

    /// What a live repetition adds to the command (`run.app`), and where the file is.
    fn live(&self, run: &LiveRun<'_>) -> Live;

    /// How the tool is made to write the file, for messages (`hyperfine --export-json PATH`).
    fn writes(&self) -> &'static str;

    /// The metric `init --from` gates on `e` (one of its metrics).
    fn default_metric<'e>(&self, e: &'e Entry) -> Option<&'e str> {
        e.metrics.first().map(|m| m.name.as_str())
    }

    /// Which way is better for `metric`, where the format knows and the name may not say it
    /// (`init --from` writes it into the threshold).
    fn direction(&self, _metric: &str) -> Option<Direction> {
        None
    }

    /// The command the file records (argv, with the output flags still in).
    fn recorded_command(&self, _doc: &Doc) -> Option<Vec<String>> {
        None
    }

    /// The capture of `path` when the format's output is more than the one file given (a
    /// folder, or a file with companions): a bundle of the files the tool wrote, of those
    /// modified at or after `since` when given. `None`: `path` is read as it is.
    fn gather(&self, _path: &Path, _since: Option<SystemTime>) -> Option<Result<Vec<u8>, HarnessError>> {
        None
    }

    /// What a row of one value per process (a summary the tool wrote instead of samples) says at
    /// the head of its reason; `None`: the format always has samples, or says nothing.
    fn summary_note(&self) -> Option<&'static str> {
        None
    }

    /// A GPU time metric whose regressions are confirmed in clock cycles, and the metric of the
    /// cycles (nvbench's `--jsonbin` clocks).
    fn time_and_cycles(&self) -> Option<(&'static str, &'static str)> {
        None
    }

    /// The relative standard error of one process's value of `metric` of `e`, where the file
    /// says more than its samples (`init --from`'s threshold).
    fn noise(&self, _e: &Entry, _metric: &str) -> Option<f64> {
        None
    }
}

/// Parse a harness file: one JSON document, or JSON lines; Python's `NaN`/`Infinity` read as
/// strings.
///
/// # Errors
/// Not JSON (truncated, or not valid), naming the file.
pub fn parse(bytes: &[u8], origin: &Path) -> Result<Doc, HarnessError> {
    parse_once(bytes)
        .or_else(|| python_literals(bytes).and_then(|b| parse_once(&b)))
        .map_or_else(|| super::parse_json(bytes, origin).map(Doc::Json), Ok)
}

fn parse_once(bytes: &[u8]) -> Option<Doc> {
    if let Ok(v) = serde_json::from_slice::<Value>(bytes) {
        return Some(Doc::Json(v));
    }
    let lines: Vec<Value> = serde_json::Deserializer::from_slice(bytes)
        .into_iter::<Value>()
        .collect::<Result<_, _>>()
        .ok()?;
    (lines.len() >= 2 && lines.iter().all(Value::is_object)).then_some(Doc::Lines(lines))
}

/// `bytes` with Python's `NaN`, `Infinity` and `-Infinity` outside strings quoted; `None` when
/// there are none. Written by hand: serde_json has no option for them, and the scan is a few
/// lines (strings and their escapes are all it must know).
fn python_literals(bytes: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(bytes.len() + 16);
    let (mut in_string, mut escaped, mut changed) = (false, false, false);
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
        } else if b == b'"' {
            in_string = true;
        } else if let Some(word) = [&b"NaN"[..], b"Infinity", b"-Infinity"]
            .into_iter()
            .find(|w| bytes[i..].starts_with(w))
        {
            out.push(b'"');
            out.extend_from_slice(word);
            out.push(b'"');
            i += word.len();
            changed = true;
            continue;
        }
        out.push(b);
        i += 1;
    }
    changed.then_some(out)
}

/// The key of a bundle's object.
pub const BUNDLE: &str = "cgp_gate_bundle";

/// A bundle of `files` (path as the tool named it under the folder given, and the document) of
/// `format`: the capture of a format whose output is several files.
pub fn bundle(format: Format, files: Vec<(String, Value)>) -> Vec<u8> {
    let files: Vec<Value> = files
        .into_iter()
        .map(|(path, doc)| serde_json::json!({"path": path, "doc": doc}))
        .collect();
    let v = serde_json::json!({BUNDLE: 1, "format": format.as_str(), "files": files});
    serde_json::to_vec(&v).unwrap_or_default()
}

/// The files of a bundle of `format`, when `doc` is one.
pub fn bundled(doc: &Doc, format: Format) -> Option<Vec<(&str, &Value)>> {
    let v = doc.json()?;
    if v.get(BUNDLE).is_none() || v.get("format").and_then(Value::as_str) != Some(format.as_str()) {
        return None;
    }
    Some(
        v.get("files")?
            .as_array()?
            .iter()
            .filter_map(|f| Some((f.get("path")?.as_str()?, f.get("doc")?)))
            .collect(),
    )
}

/// Read a JSON file of a bundle, bounded (as a harness file).
///
/// # Errors
/// Unreadable, too large or not JSON, naming the file.
pub fn read_json_file(path: &Path) -> Result<Value, HarnessError> {
    let bytes = crate::foundation::fsutil::read_bounded(path, MAX_FILE_BYTES).map_err(|e| {
        HarnessError::new(
            path,
            e.message("harness file"),
            "give the files as the tool wrote them",
        )
    })?;
    match parse(&bytes, path)? {
        Doc::Json(v) => Ok(v),
        Doc::Lines(_) => Err(HarnessError::new(
            path,
            "holds more than one JSON document",
            "give the files as the tool wrote them",
        )),
    }
}

/// A value of a file that must be a measurement: a positive, finite, normal number (zero, a
/// negative value, NaN, infinity or a subnormal is no measurement: the file is damaged).
///
/// # Errors
/// Anything else, naming the field (`what`), benchmark and state.
pub fn positive(
    value: &Value,
    what: &str,
    origin: &Path,
    benchmark: &str,
    state: &str,
) -> Result<f64, HarnessError> {
    match value.as_f64() {
        Some(x) => positive_number(x, what, origin, benchmark, state),
        None => Err(damaged(
            &match value {
                Value::String(s) => format!("`{s}`"),
                other => other.to_string(),
            },
            what,
            origin,
            benchmark,
            state,
        )),
    }
}

/// [`positive`] of a number already read.
///
/// # Errors
/// As [`positive`].
pub fn positive_number(
    x: f64,
    what: &str,
    origin: &Path,
    benchmark: &str,
    state: &str,
) -> Result<f64, HarnessError> {
    if x.is_normal() && x > 0.0 {
        Ok(x)
    } else {
        // A subnormal's decimal form is hundreds of digits: its exponent form says it.
        let shown = if x.is_subnormal() {
            format!("{x:e}")
        } else {
            x.to_string()
        };
        Err(damaged(&shown, what, origin, benchmark, state))
    }
}

fn damaged(shown: &str, what: &str, origin: &Path, benchmark: &str, state: &str) -> HarnessError {
    HarnessError::new(
        origin,
        format!("{what} is {shown}; a measurement is a positive number: the file is damaged"),
        "run the benchmark again and use the file as the tool wrote it",
    )
    .at(benchmark, state)
}

/// `value` if it is a positive measurement (as [`positive`]), in `scale`s of it.
///
/// # Errors
/// As [`positive`].
pub fn scaled(
    value: &Value,
    scale: f64,
    what: &str,
    origin: &Path,
    benchmark: &str,
    state: &str,
) -> Result<f64, HarnessError> {
    positive(value, what, origin, benchmark, state).map(|x| x * scale)
}

/// The entry of `benchmark` x `state` in `entries`, made (measured, no metric yet, on `device`)
/// when new: for formats whose metrics of one entry come from several places of the file.
pub fn entry_at<'e>(
    entries: &'e mut Vec<Entry>,
    benchmark: &str,
    state: &str,
    device: Option<&str>,
) -> &'e mut Entry {
    let at = match entries
        .iter()
        .position(|e| e.benchmark == benchmark && e.state == state)
    {
        Some(i) => i,
        None => {
            entries.push(Entry {
                benchmark: benchmark.to_owned(),
                state: state.to_owned(),
                device: device.map(str::to_owned),
                status: super::Status::Measured,
                metrics: Vec::new(),
            });
            entries.len() - 1
        }
    };
    &mut entries[at]
}

/// The most files a folder given to a gathering reader may hold, and how deep it is walked.
pub const MAX_FILES: usize = 20_000;
pub const MAX_DEPTH: usize = 12;

/// The files under `dir` whose name `wanted` accepts (path relative to `dir`), walked at most
/// [`MAX_DEPTH`] deep without following links, modified at or after `since` when given; sorted.
///
/// # Errors
/// An unreadable folder, or more than [`MAX_FILES`] files.
pub fn files_under(
    dir: &Path,
    since: Option<SystemTime>,
    wanted: &dyn Fn(&Path) -> bool,
) -> Result<Vec<PathBuf>, HarnessError> {
    let mut found = Vec::new();
    let mut stack = vec![(dir.to_path_buf(), 0usize)];
    let mut seen = 0usize;
    while let Some((d, depth)) = stack.pop() {
        let list = std::fs::read_dir(&d).map_err(|e| {
            HarnessError::new(&d, format!("cannot be read: {e}"), "give a folder the tool wrote")
        })?;
        for entry in list.flatten() {
            seen += 1;
            if seen > MAX_FILES {
                return Err(HarnessError::new(
                    dir,
                    format!("holds more than {MAX_FILES} files"),
                    "give the folder of one run",
                ));
            }
            let Ok(kind) = entry.file_type() else { continue };
            let path = entry.path();
            if kind.is_dir() && depth < MAX_DEPTH {
                stack.push((path, depth + 1));
            } else if kind.is_file()
                && wanted(&path)
                && since.is_none_or(|t| entry.metadata().and_then(|m| m.modified()).is_ok_and(|m| m >= t))
            {
                found.push(path);
            }
        }
    }
    found.sort();
    Ok(found)
}

/// `path` relative to `dir`, with `/` between its parts.
pub fn relative(dir: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(dir).unwrap_or(path);
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_literals_are_quoted_outside_strings_only() {
        let got =
            python_literals(br#"{"a": NaN, "b": "NaN \" Infinity", "c": [-Infinity, Infinity]}"#).unwrap();
        let v: Value = serde_json::from_slice(&got).unwrap();
        assert_eq!(v["a"], "NaN");
        assert_eq!(v["b"], "NaN \" Infinity");
        assert_eq!(v["c"], serde_json::json!(["-Infinity", "Infinity"]));
        assert!(python_literals(br#"{"a": "NaN"}"#).is_none());
    }

    #[test]
    fn json_lines_parse_as_lines_and_one_document_as_one() {
        let p = Path::new("f.json");
        assert!(matches!(parse(b"{\"a\": 1}\n{\"a\": 2}\n", p), Ok(Doc::Lines(l)) if l.len() == 2));
        assert!(matches!(parse(b"[1, 2]\n", p), Ok(Doc::Json(_))));
        let e = parse(b"{\"a\": ", p).unwrap_err();
        assert!(e.message.contains("truncated"), "{e}");
    }

    #[test]
    fn a_measurement_is_positive_finite_and_normal() {
        let p = Path::new("f.json");
        assert!(positive(&serde_json::json!(2.5), "t", p, "b", "").is_ok_and(|x| (x - 2.5).abs() < 1e-12));
        for bad in [
            serde_json::json!(0.0),
            serde_json::json!(-1.0),
            serde_json::json!(1e-310),
            serde_json::json!("NaN"),
            serde_json::json!("Infinity"),
            serde_json::json!(null),
        ] {
            let e = positive(&bad, "`times`", p, "b", "s").unwrap_err();
            assert!(
                e.to_string()
                    .contains("f.json, benchmark `b`, state `s`: `times` is"),
                "{e}"
            );
        }
    }
}
