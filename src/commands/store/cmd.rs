//! `cgp-gate store migrate | push | import | runs | export`.

use std::io::Write;
use std::path::{Path, PathBuf};

use cgp_store::store::{Access, HudContext, Store, StoredRun};

use super::{StoreOptions, origin, pushed_line};
use crate::commands::stdout_err;
use crate::foundation::error::{Error, Result};
use crate::foundation::exit_codes::Exit;

/// Largest github-action-benchmark file read (as `history`).
const MAX_IMPORT_BYTES: u64 = 64 << 20;

/// `store migrate`.
///
/// # Errors
/// The store's.
pub(crate) fn migrate(opts: &StoreOptions, out: &mut dyn Write) -> Result<Exit> {
    let url = opts.required()?;
    let m = Store::migrate(&url)?;
    if m.steps.is_empty() {
        writeln!(out, "{url}: schema {} (this cgp-gate's), nothing to do", m.to).map_err(stdout_err)?;
    } else {
        for (to, what) in &m.steps {
            writeln!(out, "{url}: schema {to}: {what}").map_err(stdout_err)?;
        }
        writeln!(out, "{url}: migrated from schema {} to {}", m.from, m.to).map_err(stdout_err)?;
    }
    Ok(Exit::Ok)
}

/// Every file read and made a run before anything is stored: one bad file stores nothing.
fn runs_of(files: &[PathBuf], kind: &str, opts: &StoreOptions) -> Result<Vec<(PathBuf, StoredRun)>> {
    let dir = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let origin = origin(kind, opts.branch.as_deref(), &dir);
    files
        .iter()
        .map(|p| {
            let text = crate::foundation::fsutil::read_text(p, crate::foundation::fsutil::limits::RESULTS)
                .map_err(|e| e.into_error(p, "results file"))?;
            let mut who = origin.clone();
            who.file = Some(p.display().to_string());
            let run = StoredRun::from_text(&text, who)
                .map_err(|m| Error::input(p, format!("{m}; nothing was stored")))?;
            Ok((p.clone(), run))
        })
        .collect()
}

/// Store runs one transaction each, saying what each did.
fn push_all(opts: &StoreOptions, runs: &[(String, StoredRun)], out: &mut dyn Write) -> Result<Exit> {
    let url = opts.required()?;
    let mut store = Store::open(&url, Access::Write)?;
    let (mut stored, mut already) = (0usize, 0usize);
    for (name, run) in runs {
        let pushed = store.push(run)?;
        match pushed {
            cgp_store::store::Pushed::Stored(_) => stored += 1,
            cgp_store::store::Pushed::Already { .. } => already += 1,
        }
        writeln!(
            out,
            "{}: {}",
            crate::foundation::sanitize::line(name),
            pushed_line(&url, run, &pushed)
        )
        .map_err(stdout_err)?;
    }
    writeln!(out, "{stored} run(s) stored, {already} already there").map_err(stdout_err)?;
    Ok(Exit::Ok)
}

/// `store push RESULTS...`.
///
/// # Errors
/// A file that is not results (exit 2, nothing stored); the store's.
pub(crate) fn push(opts: &StoreOptions, files: &[PathBuf], out: &mut dyn Write) -> Result<Exit> {
    // A malformed URL is said before the files are read.
    opts.required()?;
    let runs = runs_of(files, "push", opts)?;
    let named: Vec<(String, StoredRun)> = runs
        .into_iter()
        .map(|(p, r)| (p.display().to_string(), r))
        .collect();
    push_all(opts, &named, out)
}

/// `store import RESULTS...` and `store import --github-action-benchmark data.js`.
///
/// # Errors
/// As [`push`]; a damaged data.js (exit 2).
pub(crate) fn import(
    opts: &StoreOptions,
    gab: Option<&Path>,
    files: &[PathBuf],
    out: &mut dyn Write,
) -> Result<Exit> {
    opts.required()?;
    if gab.is_none() && files.is_empty() {
        return Err(Error::Usage(
            "nothing to import: pass results files, or --github-action-benchmark data.js".to_owned(),
        ));
    }
    let mut named: Vec<(String, StoredRun)> = Vec::new();
    if let Some(p) = gab {
        let text = crate::foundation::fsutil::read_text(p, MAX_IMPORT_BYTES)
            .map_err(|e| e.into_error(p, "github-action-benchmark data file"))?;
        let imported = crate::history::github_action_benchmark(&text).map_err(|m| Error::input(p, m))?;
        let dir = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        let mut o = origin("import", opts.branch.as_deref(), &dir);
        if let Some(repo) = imported
            .repo_url
            .as_deref()
            .and_then(|u| u.trim_end_matches('/').strip_prefix("https://github.com/"))
        {
            o.ci.insert("repo".to_owned(), repo.to_owned());
        }
        for (i, r) in imported.results.iter().enumerate() {
            // Named as `history --import-github-action-benchmark` names them.
            let mut who = o.clone();
            who.file = Some(p.with_file_name(format!("imported-{i:04}")).display().to_string());
            let run = StoredRun::from_results(r, who).map_err(|m| Error::input(p, m))?;
            named.push((format!("{} #{}", p.display(), i + 1), run));
        }
    }
    for (p, r) in runs_of(files, "import", opts)? {
        named.push((p.display().to_string(), r));
    }
    push_all(opts, &named, out)
}

/// `store runs`: the stored runs, oldest first.
///
/// # Errors
/// The store's.
pub(crate) fn runs(opts: &StoreOptions, since: Option<&str>, out: &mut dyn Write) -> Result<Exit> {
    let url = opts.required()?;
    let filter = super::filter(opts.branch.as_deref(), since)?;
    let mut store = Store::open(&url, Access::Read)?;
    let runs = store.runs(&filter)?;
    writeln!(
        out,
        "{:<20}  {:<12}  {:<16}  {:<9}  {:<7}  {:>6}  {:<12}  run",
        "date", "commit", "branch", "kind", "shard", "rows", "verdict"
    )
    .map_err(stdout_err)?;
    for r in &runs {
        let line = format!(
            "{:<20}  {:<12}  {:<16}  {:<9}  {:<7}  {:>6}  {:<12}  {}",
            r.date,
            r.git_commit.as_deref().map_or("-", |c| &c[..c.len().min(12)]),
            if r.branch.is_empty() { "-" } else { &r.branch },
            r.kind,
            r.shard.as_deref().unwrap_or("-"),
            r.rows,
            r.verdict,
            &r.id[..12]
        );
        writeln!(out, "{}", crate::foundation::sanitize::line(&line)).map_err(stdout_err)?;
    }
    writeln!(out, "{} run(s) in {url}", runs.len()).map_err(stdout_err)?;
    Ok(Exit::Ok)
}

/// `store export --format hud-v3`: JSON lines, to `--out FILE` (atomically) or stdout (`-` or
/// no `--out`).
///
/// # Errors
/// The store's; a file that cannot be written.
pub(crate) fn export(
    opts: &StoreOptions,
    since: Option<&str>,
    out_file: Option<&Path>,
    repo: Option<String>,
    out: &mut dyn Write,
) -> Result<Exit> {
    let url = opts.required()?;
    let filter = super::filter(opts.branch.as_deref(), since)?;
    let to_file = out_file.filter(|p| p.as_os_str() != "-");
    if let Some(p) = to_file {
        crate::commands::outputs::refuse_outputs_onto_inputs(&[("--out", p)], &[])?;
    }
    let mut store = Store::open(&url, Access::Read)?;
    let ctx = HudContext { repo };
    // To a file: written beside it and renamed over it at the end (nothing half-written); to
    // standard output: as the runs are read. One run is in memory at a time.
    let mut file = match to_file {
        Some(p) => {
            let folder = p
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            Some(tempfile::NamedTempFile::new_in(folder).map_err(|e| Error::io("write", p, e))?)
        }
        None => None,
    };
    let mut lines = 0usize;
    {
        let mut sink: Box<dyn Write + '_> = match file.as_mut() {
            Some(f) => Box::new(std::io::BufWriter::new(f.as_file_mut())),
            None => Box::new(&mut *out),
        };
        let target = to_file.map_or_else(|| PathBuf::from("<stdout>"), Path::to_path_buf);
        store.each_result(&filter, false, &mut |info, results| {
            for row in cgp_store::store::hud_rows(&info, &results, &ctx) {
                writeln!(sink, "{row}").map_err(|e| Error::io("write", target.clone(), e))?;
                lines += 1;
            }
            Ok(())
        })?;
        sink.flush().map_err(|e| Error::io("write", target, e))?;
    }
    if let (Some(f), Some(p)) = (file, to_file) {
        f.as_file().sync_all().map_err(|e| Error::io("write", p, e))?;
        f.persist(p).map_err(|e| Error::io("write", p, e.error))?;
        let _ = writeln!(
            std::io::stderr(),
            "wrote {lines} hud-v3 row(s) (oss_ci_benchmark_v3) to {}",
            p.display()
        );
    }
    Ok(Exit::Ok)
}
