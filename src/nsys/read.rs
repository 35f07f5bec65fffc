//! Readers for every form Nsight Systems writes GPU activity in.
//!
//! - `.nsys-rep` (and the older `.qdrep`): exported with `nsys export --type sqlite` (argv, with a
//!   timeout), then read as SQLite.
//! - SQLite exports: `CUPTI_ACTIVITY_KIND_KERNEL` / `_MEMCPY` / `_MEMSET`, names through
//!   `StringIds`; schemas from 2020.3 (no `ENUM_*` tables) to 2025.5.
//! - CSV of the `cuda_gpu_trace` report (`gputrace` before 2023), and of `cuda_gpu_kern_sum` /
//!   `cuda_gpu_kern_gb_sum` (`gpukernsum`), with the old headers (`Time(%)`, `Average`,
//!   `Minimum`, `Maximum`) too, and CSV that `nsys stats` printed to stdout after its
//!   `NOTICE:` / `Processing [...]` lines.
//!
//! Console tables (`--format column`) truncate long names, so they are refused. Every read is
//! bounded ([`MAX_TEXT_BYTES`], [`MAX_ROWS`]) and every error names the file.

use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::foundation::error::Error;

use super::{Activity, MEMCPY_KINDS, MEMSET_NAME, Names, Shape, Workload, memcpy_name, modern_name};

/// CSV text larger than this is refused (a 17,016-row trace with long C++ names is ~10 MB).
pub const MAX_TEXT_BYTES: u64 = 1 << 30;
/// SQLite exports larger than this are refused where they are held in memory (live captures and
/// replayed repetitions).
pub const MAX_SQLITE_BYTES: u64 = 2 << 30;
/// More activity rows than this are refused (each costs 32 bytes in memory).
pub const MAX_ROWS: usize = 20_000_000;
/// Environment variable naming the nsys executable (otherwise `nsys` on `PATH`).
pub const NSYS_ENV: &str = "CGP_GATE_NSYS";
/// `nsys export` gets this long before it is killed.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(600);

const SQLITE_MAGIC: &[u8] = b"SQLite format 3\0";

/// Where nsys is: `$CGP_GATE_NSYS`, else `nsys` on `PATH`, else the CUDA toolkit's place.
pub fn locate_nsys() -> Option<PathBuf> {
    use crate::ncu::runner::find_executable;
    if let Some(p) = std::env::var_os(NSYS_ENV).filter(|v| !v.is_empty()) {
        return find_executable(&p.to_string_lossy(), std::env::var_os("PATH").as_deref());
    }
    find_executable("nsys", std::env::var_os("PATH").as_deref())
        .or_else(|| find_executable("/usr/local/cuda/bin/nsys", None))
}

/// Read one nsys output of any supported kind, chosen by its content (SQLite magic) and name
/// (`.nsys-rep`, `.qdrep`).
///
/// # Errors
/// [`Error::Input`] (exit 2) naming the file for anything unreadable or unsupported;
/// [`Error::Environment`] (exit 3) when a `.nsys-rep` needs nsys and nsys is missing or fails.
pub fn read_path(path: &Path) -> Result<Workload, Error> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or_default()
        .to_ascii_lowercase();
    if ext == "nsys-rep" || ext == "qdrep" {
        return read_report(path);
    }
    let meta = std::fs::metadata(path).map_err(|e| Error::input(path, format!("cannot read: {e}")))?;
    if !meta.is_file() {
        return Err(Error::input(path, "not a file"));
    }
    let mut head = [0u8; 16];
    let n = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .map_err(|e| Error::input(path, format!("cannot read: {e}")))?;
    if head[..n] == *SQLITE_MAGIC {
        return read_sqlite(path, path);
    }
    if meta.len() > MAX_TEXT_BYTES {
        return Err(Error::input(
            path,
            format!(
                "is {} bytes, more than the {MAX_TEXT_BYTES} bytes cgp-gate reads from a CSV report",
                meta.len()
            ),
        )
        .with_help("give the SQLite export (`nsys export --type sqlite`) instead: it is read row by row"));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_TEXT_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|e| Error::input(path, format!("cannot read: {e}")))?;
    let text = String::from_utf8(bytes).map_err(|e| {
        Error::input(
            path,
            format!(
                "is neither an nsys CSV report (not UTF-8 text at byte {}) nor a SQLite export",
                e.utf8_error().valid_up_to()
            ),
        )
    })?;
    read_text(&text, path)
}

trait WithHelp {
    fn with_help(self, help: &str) -> Self;
}

impl WithHelp for Error {
    fn with_help(self, help: &str) -> Self {
        match self {
            Self::Input { path, message } => Self::Input {
                path,
                message: format!("{message}\n  help: {help}"),
            },
            other => other,
        }
    }
}

/// What a CSV header line is.
#[derive(Debug, Clone, PartialEq)]
enum Header {
    Trace {
        start: (usize, f64),
        duration: (usize, f64),
        name: usize,
    },
    Summary {
        total: (usize, f64),
        instances: usize,
        name: usize,
    },
    /// Another nsys report (`cuda_api_sum`, `nvtx_sum`, ...): its first columns, for the message.
    Other(String),
}

/// `Total Time (ns)` -> `totaltime(ns)`.
fn norm(cell: &str) -> String {
    cell.chars()
        .filter(|c| !c.is_whitespace())
        .flat_map(char::to_lowercase)
        .collect()
}

/// The factor to ns of a normalised header with a unit suffix: `duration(us)` -> 1000.
fn unit_factor(h: &str, base: &str) -> Option<f64> {
    let rest = h.strip_prefix(base)?;
    match rest {
        "" | "(ns)" => Some(1.0),
        "(us)" | "(µs)" => Some(1e3),
        "(ms)" => Some(1e6),
        "(s)" | "(sec)" => Some(1e9),
        _ => None,
    }
}

fn classify_header(cells: &[String]) -> Option<Header> {
    let n: Vec<String> = cells.iter().map(|c| norm(c)).collect();
    let name = n.iter().position(|c| c == "name")?;
    let find = |base: &str| {
        n.iter()
            .enumerate()
            .find_map(|(i, c)| unit_factor(c, base).map(|f| (i, f)))
    };
    if let (Some(start), Some(duration)) = (find("start"), find("duration")) {
        return Some(Header::Trace {
            start,
            duration,
            name,
        });
    }
    if let (Some(total), Some(instances)) = (find("totaltime"), n.iter().position(|c| c == "instances")) {
        return Some(Header::Summary {
            total,
            instances,
            name,
        });
    }
    // A header of some other report: it has a Name column and mostly non-numeric cells.
    let numeric = cells.iter().filter(|c| c.trim().parse::<f64>().is_ok()).count();
    (numeric == 0 && cells.len() >= 2)
        .then(|| Header::Other(cells.iter().take(4).cloned().collect::<Vec<_>>().join(",")))
}

fn split_csv_line(line: &str) -> Vec<String> {
    let mut r = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(line.as_bytes());
    r.records()
        .next()
        .and_then(Result::ok)
        .map(|rec| rec.iter().map(str::to_owned).collect())
        .unwrap_or_default()
}

/// A console table: nsys's `--format column` (or the default `nsys stats` output).
fn is_console_table(line: &str) -> bool {
    let t = line.trim();
    if t.starts_with("** ") && t.ends_with("):") {
        return true;
    }
    // The rule under the header: runs of dashes separated by spaces.
    t.len() >= 8
        && t.contains("  ")
        && t.split_whitespace()
            .all(|w| w.len() >= 2 && w.bytes().all(|b| b == b'-'))
}

/// Read CSV text as `nsys stats --format csv` writes it (to a file, or to stdout with its
/// preamble). With several reports in one text, the first trace is used, else the first summary.
///
/// # Errors
/// [`Error::Input`] naming `origin` (and the line) for anything that is not a supported report.
pub fn read_text(text: &str, origin: &Path) -> Result<Workload, Error> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim().is_empty() {
        return Err(Error::input(
            origin,
            "is empty: nsys leaves a 0-byte file when a report has no data (were any CUDA kernels traced? profile with `nsys profile -t cuda`)",
        ));
    }
    let lines: Vec<(usize, &str)> = line_offsets(text);
    let mut trace: Option<(usize, Header)> = None;
    let mut summary: Option<(usize, Header)> = None;
    let mut other: Option<String> = None;
    let mut skipped: Option<&str> = None;
    let section_end = |from: usize| {
        lines[from + 1..]
            .iter()
            .position(|(_, l)| l.trim().is_empty() || l.trim_start().starts_with("Processing ["))
            .map_or(lines.len(), |p| from + 1 + p)
    };
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].1;
        i += 1;
        if is_console_table(line) {
            return Err(Error::input(
                origin,
                format!(
                    "line {i}: this is a console table (`nsys stats` without `--format csv`), and console tables cut long kernel names"
                ),
            )
            .with_help("write the report as CSV: `nsys stats --report cuda_gpu_trace --format csv --output PREFIX REPORT.nsys-rep`, or give the .nsys-rep / .sqlite itself"));
        }
        let t = line.trim();
        if t.is_empty() || t.starts_with("NOTICE:") || t.starts_with("Processing [") || line.starts_with(' ')
        {
            continue;
        }
        if t.starts_with("SKIPPED:") || t.contains("does not contain") {
            skipped.get_or_insert(t);
            continue;
        }
        if !t.contains(',') {
            continue;
        }
        match classify_header(&split_csv_line(t)) {
            Some(h @ Header::Trace { .. }) => {
                trace = Some((i - 1, h));
                break;
            }
            Some(h @ Header::Summary { .. }) => {
                summary.get_or_insert((i - 1, h));
                i = section_end(i - 1);
            }
            Some(Header::Other(cols)) => {
                other.get_or_insert(cols);
                i = section_end(i - 1);
            }
            None => {}
        }
    }
    let Some((first, header)) = trace.or(summary) else {
        let why = if let Some(s) = skipped {
            format!("nsys wrote no GPU kernel table: `{s}`")
        } else if let Some(cols) = other {
            format!(
                "this is not a GPU kernel report (its header starts `{cols}`); cgp-gate reads cuda_gpu_trace (gputrace), cuda_gpu_kern_sum (gpukernsum) and cuda_gpu_kern_gb_sum"
            )
        } else {
            "no nsys report header found: expected `Start (ns),Duration (ns),...,Name` (cuda_gpu_trace) or `Time (%),Total Time (ns),Instances,...,Name` (cuda_gpu_kern_sum)".to_owned()
        };
        return Err(Error::input(origin, why).with_help(
            "write one with `nsys stats --report cuda_gpu_trace --format csv --output PREFIX REPORT.nsys-rep`, or give the .nsys-rep / .sqlite",
        ));
    };
    // The section runs from its header to the next blank line or `Processing [` line.
    let begin = lines[first].0;
    let end = lines.get(section_end(first)).map_or(text.len(), |(off, _)| *off);
    parse_section(&text[begin..end], first + 1, &header, origin)
}

/// Byte offset and text (without the line ending) of every line.
fn line_offsets(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut off = 0;
    for l in text.split_inclusive('\n') {
        out.push((off, l.trim_end_matches(['\n', '\r'])));
        off += l.len();
    }
    out
}

fn parse_section(
    section: &str,
    first_line: usize,
    header: &Header,
    origin: &Path,
) -> Result<Workload, Error> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(true)
        .from_reader(section.as_bytes());
    let (shape, format) = match header {
        Header::Trace { .. } => (Shape::Trace, "cuda_gpu_trace csv"),
        Header::Summary { .. } => (Shape::Summary, "cuda_gpu_kern_sum csv"),
        Header::Other(_) => unreachable!("only trace and summary headers are parsed"),
    };
    let mut names = Names::default();
    let mut activities = Vec::new();
    let mut record = csv::StringRecord::new();
    loop {
        match reader.read_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {}
            Err(e) => {
                let line = e
                    .position()
                    .map_or(first_line, |p| first_line + p.line() as usize - 1);
                return Err(Error::input(origin, format!("line {line}: invalid CSV: {e}")));
            }
        }
        let line = record
            .position()
            .map_or(0, |p| first_line + p.line() as usize - 1);
        if activities.len() >= MAX_ROWS {
            return Err(Error::input(
                origin,
                format!("has more than {MAX_ROWS} rows; cgp-gate refuses larger reports"),
            ));
        }
        let cell = |i: usize, what: &str| -> Result<&str, Error> {
            record.get(i).ok_or_else(|| {
                Error::input(
                    origin,
                    format!(
                        "line {line}: the row has {} cells, no `{what}` (column {})",
                        record.len(),
                        i + 1
                    ),
                )
            })
        };
        let activity = match header {
            Header::Trace {
                start,
                duration,
                name,
            } => {
                let n = cell(*name, "Name")?;
                let s = ns(cell(start.0, "Start")?, start.1, "Start", line, n, origin)?;
                let d = ns(
                    cell(duration.0, "Duration")?,
                    duration.1,
                    "Duration",
                    line,
                    n,
                    origin,
                )?;
                Activity {
                    name: names.id(&modern_name(n)),
                    start_ns: Some(s),
                    duration_ns: d,
                    instances: 1,
                }
            }
            Header::Summary {
                total,
                instances,
                name,
            } => {
                let n = cell(*name, "Name")?;
                let t = ns(
                    cell(total.0, "Total Time")?,
                    total.1,
                    "Total Time",
                    line,
                    n,
                    origin,
                )?;
                let raw = cell(*instances, "Instances")?;
                let count: u64 = raw.trim().parse().map_err(|_| {
                    Error::input(
                        origin,
                        format!(
                            "line {line}: `Instances` of kernel `{}` is `{raw}`, not a count",
                            short(n)
                        ),
                    )
                })?;
                Activity {
                    name: names.id(&modern_name(n)),
                    start_ns: None,
                    duration_ns: t,
                    instances: count,
                }
            }
            Header::Other(_) => unreachable!("only trace and summary headers are parsed"),
        };
        activities.push(activity);
    }
    Ok(Workload {
        file: origin.to_path_buf(),
        shape,
        format: format.to_owned(),
        names: names.names,
        activities,
    })
}

/// A long C++ name, cut for messages.
fn short(name: &str) -> String {
    const MAX: usize = 120;
    if name.chars().count() <= MAX {
        return name.to_owned();
    }
    let cut: String = name.chars().take(MAX).collect();
    format!("{cut}...")
}

/// A time cell in ns: integers as they are, decimals (other units) scaled and rounded.
fn ns(raw: &str, factor: f64, column: &str, line: usize, name: &str, origin: &Path) -> Result<u64, Error> {
    let t = raw.trim();
    let bad = || {
        Error::input(
            origin,
            format!(
                "line {line}: `{column}` of `{}` is `{t}`, not a time",
                short(name)
            ),
        )
    };
    if (factor - 1.0).abs() < f64::EPSILON
        && let Ok(v) = t.parse::<u64>()
    {
        return Ok(v);
    }
    let v: f64 = t.parse().map_err(|_| bad())?;
    let scaled = (v * factor).round();
    if !scaled.is_finite() || !(0.0..=1.8e19).contains(&scaled) {
        return Err(bad());
    }
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "checked finite, >= 0 and < 2^64 above"
    )]
    Ok(scaled as u64)
}

/// Read a SQLite export (`nsys export --type sqlite`). `origin` names the file in messages (a
/// `.nsys-rep` whose export this is).
///
/// # Errors
/// [`Error::Input`] naming `origin` for a file that is not such an export.
pub fn read_sqlite(path: &Path, origin: &Path) -> Result<Workload, Error> {
    use rusqlite::{Connection, OpenFlags};
    let bad = |what: &str, e: &dyn std::fmt::Display| Error::input(origin, format!("{what}: {e}"));
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| bad("cannot open as SQLite", &e))?;
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .and_then(|mut s| s.query_map([], |r| r.get::<_, String>(0))?.collect())
        .map_err(|e| bad("not a readable SQLite database", &e))?;
    let has = |t: &str| tables.iter().any(|x| x == t);
    let kernel_t = "CUPTI_ACTIVITY_KIND_KERNEL";
    let memcpy_t = "CUPTI_ACTIVITY_KIND_MEMCPY";
    let memset_t = "CUPTI_ACTIVITY_KIND_MEMSET";
    if !has(kernel_t) && !has(memcpy_t) && !has(memset_t) {
        let export = has("StringIds") || has("TARGET_INFO_SYSTEM_ENV") || has("META_DATA_EXPORT");
        let (what, help) = if export {
            (
                "is an nsys export without CUDA GPU activity (no CUPTI_ACTIVITY_KIND_KERNEL, _MEMCPY or _MEMSET table)",
                "nsys saw no kernel, memcpy or memset: check that the application runs CUDA work on a GPU and was traced with `nsys profile --trace cuda`",
            )
        } else {
            (
                "is a SQLite file but not an nsys export (no CUPTI_ACTIVITY_KIND_KERNEL table)",
                "trace CUDA (`nsys profile -t cuda ...`) and export with `nsys export --type sqlite`",
            )
        };
        return Err(Error::input(origin, what).with_help(help));
    }
    let columns = |t: &str| -> Result<Vec<String>, Error> {
        conn.prepare(&format!("PRAGMA table_info({t})"))
            .and_then(|mut s| s.query_map([], |r| r.get::<_, String>(1))?.collect())
            .map_err(|e| bad(&format!("cannot read the columns of {t}"), &e))
    };
    let mut names = Names::default();
    let mut activities: Vec<Activity> = Vec::new();
    let push = |activities: &mut Vec<Activity>, table: &str, rowid: i64, start: i64, end: i64, name: u32| {
        if activities.len() >= MAX_ROWS {
            return Err(Error::input(
                origin,
                format!("has more than {MAX_ROWS} GPU activities; cgp-gate refuses larger exports"),
            ));
        }
        if start < 0 || end < start {
            return Err(Error::input(
                origin,
                format!("{table} row {rowid}: start {start} and end {end} are not an interval"),
            ));
        }
        activities.push(Activity {
            name,
            start_ns: Some(start.unsigned_abs()),
            duration_ns: (end - start).unsigned_abs(),
            instances: 1,
        });
        Ok(())
    };
    if has(kernel_t) {
        let cols = columns(kernel_t)?;
        let name_col = ["demangledName", "shortName", "mangledName"]
            .into_iter()
            .find(|c| cols.iter().any(|x| x == c))
            .ok_or_else(|| {
                Error::input(
                    origin,
                    format!("{kernel_t} has no demangledName or shortName column"),
                )
            })?;
        let join = has("StringIds");
        let sql = if join {
            format!(
                "SELECT k.rowid, k.start, k.end, k.{name_col}, s.value FROM {kernel_t} k LEFT JOIN StringIds s ON s.id = k.{name_col}"
            )
        } else {
            format!("SELECT rowid, start, end, {name_col}, NULL FROM {kernel_t}")
        };
        let mut stmt = conn
            .prepare(&sql)
            .map_err(|e| bad(&format!("cannot read {kernel_t}"), &e))?;
        let mut rows = stmt
            .query([])
            .map_err(|e| bad(&format!("cannot read {kernel_t}"), &e))?;
        while let Some(r) = rows
            .next()
            .map_err(|e| bad(&format!("cannot read {kernel_t}"), &e))?
        {
            let get = |r: &rusqlite::Row<'_>| -> rusqlite::Result<(i64, i64, i64, Option<String>)> {
                let raw: rusqlite::types::Value = r.get(3)?;
                let joined: Option<String> = r.get(4)?;
                let name = joined.or(match raw {
                    rusqlite::types::Value::Text(t) => Some(t),
                    _ => None,
                });
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, name))
            };
            let (rowid, start, end, name) =
                get(r).map_err(|e| bad(&format!("{kernel_t}: unexpected value"), &e))?;
            let name = name.ok_or_else(|| {
                Error::input(
                    origin,
                    format!("{kernel_t} row {rowid}: the kernel name ({name_col}) is not in StringIds"),
                )
            })?;
            let id = names.id(&name);
            push(&mut activities, kernel_t, rowid, start, end, id)?;
        }
    }
    if has(memcpy_t) {
        let mut labels: Vec<(i64, String)> = MEMCPY_KINDS
            .iter()
            .map(|(i, _, l)| (*i, (*l).to_owned()))
            .collect();
        if has("ENUM_CUDA_MEMCPY_OPER")
            && let Ok(mut s) = conn.prepare("SELECT id, label FROM ENUM_CUDA_MEMCPY_OPER")
            && let Ok(found) = s
                .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))
                .and_then(Iterator::collect::<rusqlite::Result<Vec<_>>>)
        {
            labels = found;
        }
        let mut stmt = conn
            .prepare(&format!("SELECT rowid, start, end, copyKind FROM {memcpy_t}"))
            .map_err(|e| bad(&format!("cannot read {memcpy_t}"), &e))?;
        let mut rows = stmt
            .query([])
            .map_err(|e| bad(&format!("cannot read {memcpy_t}"), &e))?;
        while let Some(r) = rows
            .next()
            .map_err(|e| bad(&format!("cannot read {memcpy_t}"), &e))?
        {
            let (rowid, start, end, kind): (i64, i64, i64, Option<i64>) =
                (|| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))()
                    .map_err(|e: rusqlite::Error| bad(&format!("{memcpy_t}: unexpected value"), &e))?;
            let kind = kind.unwrap_or(0);
            let label = labels
                .iter()
                .find(|(i, _)| *i == kind)
                .map_or_else(|| format!("kind {kind}"), |(_, l)| l.clone());
            let id = names.id(&memcpy_name(&label));
            push(&mut activities, memcpy_t, rowid, start, end, id)?;
        }
    }
    if has(memset_t) {
        let mut stmt = conn
            .prepare(&format!("SELECT rowid, start, end FROM {memset_t}"))
            .map_err(|e| bad(&format!("cannot read {memset_t}"), &e))?;
        let mut rows = stmt
            .query([])
            .map_err(|e| bad(&format!("cannot read {memset_t}"), &e))?;
        while let Some(r) = rows
            .next()
            .map_err(|e| bad(&format!("cannot read {memset_t}"), &e))?
        {
            let (rowid, start, end): (i64, i64, i64) = (|| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))()
                .map_err(|e: rusqlite::Error| bad(&format!("{memset_t}: unexpected value"), &e))?;
            let id = names.id(MEMSET_NAME);
            push(&mut activities, memset_t, rowid, start, end, id)?;
        }
    }
    Ok(Workload {
        file: origin.to_path_buf(),
        shape: Shape::Trace,
        format: "sqlite export".to_owned(),
        names: names.names,
        activities,
    })
}

/// The length of the profiled session in ns (`ANALYSIS_DETAILS.duration`), when the export has
/// it: the wall time nsys measured.
pub fn session_duration_ns(path: &Path) -> Option<u64> {
    use rusqlite::{Connection, OpenFlags};
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .ok()?;
    let d: i64 = conn
        .query_row("SELECT MAX(duration) FROM ANALYSIS_DETAILS", [], |r| r.get(0))
        .ok()?;
    u64::try_from(d).ok().filter(|d| *d > 0)
}

/// Export a `.nsys-rep` to SQLite with nsys, then read the export.
///
/// # Errors
/// [`Error::Environment`] when nsys is missing, times out or fails; [`Error::Input`] when the
/// export is unusable.
pub fn read_report(path: &Path) -> Result<Workload, Error> {
    if !path.is_file() {
        return Err(Error::input(path, "not found"));
    }
    let Some(nsys) = locate_nsys() else {
        return Err(Error::Environment(format!(
            "{}: reading an .nsys-rep needs Nsight Systems (`nsys export`), and nsys was not found on PATH (or {NSYS_ENV})\n  help: install Nsight Systems, or export the report elsewhere with `nsys export --type sqlite` and give the .sqlite",
            path.display()
        )));
    };
    let dir = tempfile::Builder::new()
        .prefix("cgp-gate-nsys-")
        .tempdir()
        .map_err(|e| Error::io("create a temporary directory in", std::env::temp_dir(), e))?;
    let out = dir.path().join("export.sqlite");
    export_sqlite(&nsys, path, &out, dir.path())?;
    if !out.is_file() {
        return Err(Error::input(
            path,
            "nsys export wrote no SQLite file (a report from a newer nsys than this one may not export)",
        ));
    }
    let mut w = read_sqlite(&out, path)?;
    w.format = "nsys-rep (nsys export --type sqlite)".to_owned();
    Ok(w)
}

/// `nsys export --type sqlite --force-overwrite true --output OUT REPORT` (argv, 10 min limit).
///
/// # Errors
/// [`Error::Environment`] when nsys cannot be started, times out or fails (with its output).
pub fn export_sqlite(nsys: &Path, report: &Path, out: &Path, work: &Path) -> Result<(), Error> {
    let argv: Vec<OsString> = vec![
        "export".into(),
        "--type".into(),
        "sqlite".into(),
        "--force-overwrite".into(),
        "true".into(),
        "--output".into(),
        out.as_os_str().to_owned(),
        report.as_os_str().to_owned(),
    ];
    run_nsys(
        nsys,
        argv,
        work,
        EXPORT_TIMEOUT,
        &format!("export {}", report.display()),
    )
}

/// The QdstrmImporter of the Nsight Systems that `nsys` belongs to: `host-linux-x64/` in the
/// install folder, two levels above `nsys` or above any link on the way to it. (Debian links
/// `/usr/bin/nsys` to `/usr/lib/nsight-systems/bin/nsys` and that to a `target-linux-x64/` kept
/// elsewhere, so the fully resolved path alone does not lead to the importer.)
pub fn qdstrm_importer(nsys: &Path) -> Option<PathBuf> {
    let mut hop = nsys.to_path_buf();
    for _ in 0..8 {
        if let Some(root) = hop.parent().and_then(Path::parent) {
            let p = root.join("host-linux-x64").join("QdstrmImporter");
            if p.is_file() {
                return Some(p);
            }
        }
        let next = std::fs::read_link(&hop).ok()?;
        hop = match hop.parent() {
            Some(dir) if next.is_relative() => dir.join(next),
            _ => next,
        };
    }
    None
}

/// Turn the raw stream nsys recorded (`X.qdstrm`) into its report (`X.nsys-rep`) with
/// QdstrmImporter, as `nsys profile` does itself when it can find the importer. Debian's
/// nsight-systems 2022.4.2 cannot (it prints "The importer binary and its dependencies were not
/// found", keeps the `.qdstrm` and exits 0), although the importer is installed and runs.
///
/// # Errors
/// [`Error::Environment`] when the importer fails or writes no report.
pub fn import_qdstrm(importer: &Path, stream: &Path, work: &Path) -> Result<PathBuf, Error> {
    let argv: Vec<OsString> = vec!["-i".into(), stream.as_os_str().to_owned()];
    run_nsys(
        importer,
        argv,
        work,
        EXPORT_TIMEOUT,
        &format!("import {} with QdstrmImporter", stream.display()),
    )?;
    let rep = stream.with_extension("nsys-rep");
    if rep.is_file() {
        Ok(rep)
    } else {
        Err(Error::Environment(format!(
            "QdstrmImporter wrote no report for {}",
            stream.display()
        )))
    }
}

/// Run nsys (argv, never a shell) with a timeout; an error carries its last output.
pub(crate) fn run_nsys(
    nsys: &Path,
    args: Vec<OsString>,
    work: &Path,
    timeout: Duration,
    what: &str,
) -> Result<(), Error> {
    use crate::ncu::runner::{Invocation, run, tail};
    let inv = Invocation {
        program: nsys.to_path_buf(),
        args,
        cwd: None,
        env: std::collections::BTreeMap::new(),
        timeout,
        stdout: work.join("nsys.stdout"),
        stderr: work.join("nsys.stderr"),
    };
    let outcome = run(&inv)
        .map_err(|e| Error::Environment(format!("{} could not be started to {what}: {e}", nsys.display())))?;
    let output = [tail(&inv.stderr, 10), tail(&inv.stdout, 5)]
        .into_iter()
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join("\n");
    if outcome.timed_out {
        return Err(Error::Environment(format!(
            "nsys timed out after {timeout:?} trying to {what}"
        )));
    }
    if outcome.code != Some(0) {
        return Err(Error::Environment(format!(
            "nsys failed to {what} (exit {}){}",
            outcome.code.map_or_else(
                || format!("signal {}", outcome.signal.unwrap_or(0)),
                |c| c.to_string()
            ),
            if output.is_empty() {
                String::new()
            } else {
                format!(":\n{output}")
            }
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Workload, Error> {
        read_text(text, Path::new("t.csv"))
    }

    #[test]
    fn console_tables_are_refused() {
        let text = " ** CUDA GPU Kernel Summary (gpukernsum):\n\n Time (%)  Total Time (ns)  Name\n --------  ---------------  ----\n    100.0   11649  k\n";
        let e = read(text).unwrap_err().to_string();
        assert!(e.contains("console table"), "{e}");
        assert!(e.contains("--format csv"), "{e}");
    }

    #[test]
    fn old_headers_and_units() {
        let w = read("Time(%),Total Time (us),Instances,Average,Minimum,Maximum,Name\n60.0,1.5,3,0.5,0.4,0.6,k1\n40.0,1,1,1,1,1,\"a,b\"\n").unwrap();
        assert_eq!(w.shape, Shape::Summary);
        assert_eq!(w.activities[0].duration_ns, 1500);
        assert_eq!(w.activities[0].instances, 3);
        assert_eq!(w.name(&w.activities[1]), "a,b");
    }

    #[test]
    fn bad_cells_name_the_line_and_kernel() {
        let e = read("Start (ns),Duration (ns),Name\n1,2,k\n3,None,kern\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("line 3") && e.contains("`Duration` of `kern` is `None`"),
            "{e}"
        );
        let e = read("Start (ns),Duration (ns),Name\n1,-2,k\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a time"), "{e}");
        let e = read("Start (ns),Duration (ns),Name\n1\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 2") && e.contains("no `Name`"), "{e}");
    }

    #[test]
    fn other_reports_and_garbage_are_explained() {
        let e = read("Time (%),Total Time (ns),Num Calls,Avg (ns),Name\n1,2,3,4,cudaMalloc\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a GPU kernel report"), "{e}");
        let e = read("hello\nworld\n").unwrap_err().to_string();
        assert!(e.contains("no nsys report header"), "{e}");
        let e = read("   \n").unwrap_err().to_string();
        assert!(e.contains("is empty"), "{e}");
    }

    #[test]
    fn trace_preferred_over_summary_in_one_stdout() {
        let text = "Processing [x] with [y]... \nTime (%),Total Time (ns),Instances,Name\n100,5,1,k\n\nProcessing [x] with [z]... \nStart (ns),Duration (ns),Name\n10,5,k\n";
        let w = read(text).unwrap();
        assert_eq!(w.shape, Shape::Trace);
        assert_eq!(w.activities[0].start_ns, Some(10));
    }
}
