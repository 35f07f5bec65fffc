//! `cgp-gate changes`: level shifts in a history of results files (`crate::history::changes`).

use std::io::Write;
use std::path::PathBuf;

use super::stdout_err;
use crate::foundation::error::{Error, Result};
use crate::foundation::exit_codes::Exit;

/// Everything `changes` needs from the command line.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    pub files: Vec<PathBuf>,
    pub last: Option<usize>,
    pub json: Option<PathBuf>,
    pub markdown: Option<PathBuf>,
    pub html: Option<PathBuf>,
    pub alpha: f64,
    pub min_change: f64,
    pub min_segment: usize,
    pub seed: Option<u64>,
    pub no_fail: bool,
    /// `inconclusive`: a series too short to find any shift fails too (issue 44, item 7).
    pub fail_on: crate::outcome::results::FailOn,
    /// `--store`, `--branch`, `--since`: the runs of a store instead of files.
    pub read: super::store::ReadOptions,
}

/// Largest results file `changes` reads.
const MAX_RESULTS_BYTES: u64 = 256 << 20;

/// Run `changes`.
///
/// # Errors
/// Unreadable or invalid results files, settings out of range, files that cannot be written.
pub(crate) fn run(args: &Options, out: &mut dyn Write) -> Result<Exit> {
    let inputs: Vec<(&str, &std::path::Path)> = args
        .files
        .iter()
        .map(|p| ("a results file", p.as_path()))
        .collect();
    let outputs = super::outputs::given(&[
        ("--json", args.json.as_deref()),
        ("--markdown", args.markdown.as_deref()),
        ("--html", args.html.as_deref()),
    ]);
    super::outputs::refuse_outputs_onto_inputs(&outputs, &inputs)?;
    if args.last == Some(0) {
        // Issue 44: `--last 0` reported "0 series over 0 results", exit 0.
        return Err(Error::Usage(
            "--last 0 leaves no results file to search; give --last N with N >= 2, or leave it out to use every file".into(),
        ));
    }
    let mut inputs = Vec::new();
    let from_store = args.read.reading(!args.files.is_empty())?;
    if let Some((url, filter)) = &from_store {
        inputs = super::store::history_inputs(url, filter)?;
        let skip = args.last.map_or(0, |n| inputs.len().saturating_sub(n));
        inputs.drain(..skip);
    } else if args.files.is_empty() {
        return Err(Error::Usage(
            "no results to search: pass results files (oldest first) or --store URL".to_owned(),
        ));
    }
    let skip = args.last.map_or(0, |n| args.files.len().saturating_sub(n));
    for path in &args.files[skip..] {
        let len = std::fs::metadata(path)
            .map_err(|e| match e.kind() {
                // A results file that is not there is invalid input (exit 2), as `validate` says
                // of a spec (issue 59).
                std::io::ErrorKind::NotFound => {
                    Error::input(path, "there is no results file at this path; check it")
                }
                _ => Error::io("read", path, e),
            })?
            .len();
        if len > MAX_RESULTS_BYTES {
            return Err(Error::input(
                path,
                format!("{len} bytes is larger than the {MAX_RESULTS_BYTES} bytes a results file may have"),
            ));
        }
        inputs.push((path.clone(), crate::outcome::results::read(path)?));
    }
    let opts = crate::history::ChangesOptions {
        alpha: args.alpha,
        min_change: args.min_change,
        min_segment: args.min_segment,
        seed: args
            .seed
            .unwrap_or(crate::history::ChangesOptions::default().seed),
    };
    let report = crate::history::find_changes(&inputs, &opts)?;
    if let Some(p) = &args.json {
        report.write(p)?;
    }
    if let Some(p) = &args.markdown {
        let text = crate::report::changes::markdown(&report);
        crate::foundation::fsutil::write_output(p, text.as_bytes())?;
    }
    if let Some(p) = &args.html {
        crate::foundation::fsutil::write_output(p, crate::report::changes::html(&report).as_bytes())?;
    }
    write!(out, "{}", crate::report::changes::console(&report)).map_err(stdout_err)?;
    Ok(if args.no_fail {
        Exit::Ok
    } else {
        crate::history::changes_exit_code(&report, args.fail_on)
    })
}
