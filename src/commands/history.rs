//! `cgp-gate history`: main's history as a static site (`report::site`), from results files in
//! time order and, optionally, github-action-benchmark's `data.js` before them.
//!
//! The output folder is the tool's: it is created when absent; an existing one must be empty or
//! hold the marker file an earlier run wrote ([`MARKER`]), so a folder of the user's is never
//! written into. Only `index.html` and the marker are written (atomically, never through a link);
//! nothing is deleted.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::stdout_err;
use crate::foundation::error::{Error, Result};
use crate::foundation::exit_codes::Exit;
use crate::outcome::results::Results;

/// Everything `history` needs from the command line.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    pub files: Vec<PathBuf>,
    pub out: PathBuf,
    pub import_github_action_benchmark: Option<PathBuf>,
    pub repo_url: Option<String>,
    pub commit_url: Option<String>,
    pub title: Option<String>,
    pub last: Option<usize>,
    pub alpha: f64,
    pub min_change: f64,
    pub min_segment: usize,
    /// `--store`, `--branch`, `--since`: the runs of a store instead of files.
    pub read: super::store::ReadOptions,
}

/// The file that marks a folder as one `history` wrote.
pub(crate) const MARKER: &str = ".cgp-gate-history";
/// The page.
pub(crate) const PAGE: &str = "index.html";
/// Largest github-action-benchmark file read.
const MAX_IMPORT_BYTES: u64 = 64 << 20;

/// Run `history`.
///
/// # Errors
/// Unreadable or invalid inputs, a folder of someone else's files, files that cannot be written.
pub(crate) fn run(args: &Options, out: &mut dyn Write) -> Result<Exit> {
    if crate::foundation::fsutil::is_stdout(&args.out) {
        return Err(Error::Usage(
            "--out -: the history site is a folder (a page and its data), not one stream; give the folder to write"
                .to_owned(),
        ));
    }
    let mut repo_url = args.repo_url.clone();
    let mut inputs: Vec<(PathBuf, Results)> = Vec::new();
    if let Some(p) = &args.import_github_action_benchmark {
        let text = crate::foundation::fsutil::read_text(p, MAX_IMPORT_BYTES)
            .map_err(|e| e.into_error(p, "github-action-benchmark data file"))?;
        let imported = crate::history::github_action_benchmark(&text).map_err(|m| Error::input(p, m))?;
        if repo_url.is_none() {
            repo_url = imported.repo_url;
        }
        for (i, r) in imported.results.into_iter().enumerate() {
            inputs.push((p.with_file_name(format!("imported-{i:04}")), r));
        }
    }
    if let Some((url, filter)) = args.read.reading(!args.files.is_empty())? {
        let mut runs = super::store::history_inputs(&url, &filter)?;
        let skip = args.last.map_or(0, |n| runs.len().saturating_sub(n));
        inputs.extend(runs.drain(skip..));
    }
    let skip = args.last.map_or(0, |n| args.files.len().saturating_sub(n));
    for path in &args.files[skip..] {
        inputs.push((path.clone(), crate::outcome::results::read(path)?));
    }
    if inputs.is_empty() {
        return Err(Error::Usage(
            "no results to draw: pass results files (oldest first), --store URL or --import-github-action-benchmark data.js"
                .to_owned(),
        ));
    }
    for (flag, u) in [("--repo-url", &repo_url), ("--commit-url", &args.commit_url)] {
        if let Some(u) = u
            && !(u.starts_with("https://") || u.starts_with("http://"))
        {
            return Err(Error::Usage(format!(
                "{flag} `{u}` is not a web address; pass https://github.com/OWNER/NAME (--repo-url) \
                 or the address of a commit's page without its SHA (--commit-url)"
            )));
        }
    }
    let commit_url = args.commit_url.clone().or_else(|| {
        repo_url
            .as_ref()
            .map(|u| format!("{}/commit/", u.trim_end_matches('/')))
    });
    crate::history::name_gpus(&mut inputs);
    let opts = crate::history::ChangesOptions {
        alpha: args.alpha,
        min_change: args.min_change,
        min_segment: args.min_segment,
        ..crate::history::ChangesOptions::default()
    };
    let changes = crate::history::find_changes(&inputs, &opts)?;
    let site = crate::report::site::SiteInput {
        inputs: &inputs,
        changes: &changes,
        commit_url: commit_url.as_deref(),
        title: args.title.as_deref().unwrap_or("cgp-gate: performance history"),
    };
    let page = crate::report::site::page(&site);
    // The folder is checked (and made) once the inputs are read: a bad input leaves no folder.
    check_out_dir(&args.out)?;
    let inputs_read: Vec<&Path> = args
        .files
        .iter()
        .map(PathBuf::as_path)
        .chain(args.import_github_action_benchmark.as_deref())
        .collect();
    let page_path = args.out.join(PAGE);
    refuse_link_or_input(&page_path, &inputs_read)?;
    refuse_link_or_input(&args.out.join(MARKER), &inputs_read)?;
    crate::foundation::fsutil::write_atomic(
        &args.out.join(MARKER),
        b"Written by `cgp-gate history`: it replaces index.html in this folder on each run.\n",
    )?;
    crate::foundation::fsutil::write_atomic(&page_path, page.as_bytes())?;
    writeln!(
        out,
        "wrote {} ({} KiB): {} results, {} series, {} level shift(s)",
        page_path.display(),
        page.len().div_ceil(1024),
        inputs.len(),
        crate::report::site::series_count(&site),
        changes.rows.len()
    )
    .map_err(stdout_err)?;
    Ok(Exit::Ok)
}

/// The output folder must be new, empty, or one `history` wrote (it holds [`MARKER`]); never a
/// link.
fn check_out_dir(dir: &Path) -> Result<()> {
    match std::fs::symlink_metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(dir).map_err(|e| Error::io("create the folder", dir, e))
        }
        Err(e) => Err(Error::io("read", dir, e)),
        Ok(m) if m.file_type().is_symlink() => Err(Error::Usage(format!(
            "--out {} is a symbolic link; pass the folder itself (history writes through no link)",
            dir.display()
        ))),
        Ok(m) if !m.is_dir() => Err(Error::Usage(format!(
            "--out {} is a file, not a folder; pass a new or empty folder",
            dir.display()
        ))),
        Ok(_) => {
            let mut entries = std::fs::read_dir(dir).map_err(|e| Error::io("list", dir, e))?;
            if dir.join(MARKER).is_file() || entries.next().is_none() {
                return Ok(());
            }
            Err(Error::Usage(format!(
                "--out {} holds files that cgp-gate did not write (it has no {MARKER}); pass a new or \
                 empty folder, so that none of yours is replaced",
                dir.display()
            )))
        }
    }
}

/// A file `history` writes must not be a link or one of its inputs.
fn refuse_link_or_input(path: &Path, inputs: &[&Path]) -> Result<()> {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(Error::Usage(format!(
            "{} is a symbolic link; remove it (history writes through no link)",
            path.display()
        )));
    }
    let same = |a: &Path| match (std::fs::canonicalize(a), std::fs::canonicalize(path)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    if inputs.iter().any(|i| same(i)) {
        return Err(Error::Usage(format!(
            "{} is one of the inputs; pass another --out folder",
            path.display()
        )));
    }
    Ok(())
}
