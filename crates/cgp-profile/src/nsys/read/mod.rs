//! Running Nsight Systems to read what needs it: a `.nsys-rep` (and the older `.qdrep`) exported
//! with `nsys export --type sqlite` (argv, with a timeout), a raw `.qdstrm` imported with
//! QdstrmImporter, and where nsys is. Every file that needs no program (SQLite exports, the CSV of
//! the trace and summary reports) is read by `cgp-read`'s `nsys_files`, parse-only, imported here
//! for this crate.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::foundation::error::Error;

use super::Workload;

pub(crate) use cgp_read::nsys_files::{MAX_SQLITE_BYTES, read_sqlite, read_text, session_duration_ns};

/// Environment variable naming the nsys executable (otherwise `nsys` on `PATH`).
pub const NSYS_ENV: &str = "CGP_GATE_NSYS";
/// `nsys export` gets this long before it is killed.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(600);

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
    cgp_read::nsys_files::read_file(path)
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
