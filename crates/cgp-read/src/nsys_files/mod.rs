//! Nsight Systems' files, parse-only: every form nsys writes GPU activity in that is read without
//! nsys itself, into one `Workload` (the model, `cgp_spec::nsys`). A `.nsys-rep` (and the older
//! `.qdrep`) needs `nsys export` first: that program is `cgp-profile`'s `nsys::read`, which reads
//! the export here.
//!
//! - SQLite exports: `CUPTI_ACTIVITY_KIND_KERNEL` / `_MEMCPY` / `_MEMSET`, names through
//!   `StringIds`; schemas from 2020.3 (no `ENUM_*` tables) to 2025.5.
//! - CSV of the `cuda_gpu_trace` report (`gputrace` before 2023), and of `cuda_gpu_kern_sum` /
//!   `cuda_gpu_kern_gb_sum` (`gpukernsum`), with the old headers (`Time(%)`, `Average`,
//!   `Minimum`, `Maximum`) too, and CSV that `nsys stats` printed to stdout after its
//!   `NOTICE:` / `Processing [...]` lines.
//!
//! Console tables (`--format column`) truncate long names, so they are refused. Every read is
//! bounded ([`MAX_TEXT_BYTES`], [`MAX_ROWS`]) and every error names the file.

use std::io::Read;
use std::path::Path;

use crate::foundation::error::Error;
use crate::nsys::{Activity, MEMCPY_KINDS, MEMSET_NAME, Names, Shape, Workload, memcpy_name, modern_name};

/// CSV text larger than this is refused (a 17,016-row trace with long C++ names is ~10 MB).
pub const MAX_TEXT_BYTES: u64 = 1 << 30;
/// SQLite exports larger than this are refused where they are held in memory (live captures and
/// replayed repetitions).
pub const MAX_SQLITE_BYTES: u64 = 2 << 30;
/// More activity rows than this are refused (each costs 32 bytes in memory).
pub const MAX_ROWS: usize = 20_000_000;

const SQLITE_MAGIC: &[u8] = b"SQLite format 3\0";

/// Read one nsys output file that needs no nsys: a SQLite export (by its magic) or the CSV of a
/// report.
///
/// # Errors
/// [`Error::Input`] (exit 2) naming the file for anything unreadable or unsupported.
pub fn read_file(path: &Path) -> Result<Workload, Error> {
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
