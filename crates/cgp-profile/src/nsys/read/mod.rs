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

mod sqlite;
mod text;

pub use self::sqlite::*;
pub use self::text::*;

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
