//! `cgp-gate merge`: shards' results become one results file, one report and one exit code.

use std::io::Write;
use std::path::PathBuf;

use crate::foundation::exit_codes::Exit;

use crate::foundation::error::{Error, Result};
use crate::outcome::results::{FailOn, Results};

/// Everything `merge` needs from the command line.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    pub files: Vec<PathBuf>,
    /// Default: the strictest of the shards'.
    pub fail_on: Option<FailOn>,
    /// The report files (`--json` among them) and the GitHub reports.
    pub reports: crate::publish::ReportFlags,
    /// `--store`, `--branch`: where the merged results are pushed (docs/store.md).
    pub store: super::store::StoreOptions,
}

/// Run `cgp-gate merge`: read, merge, write the reports, and return the gate's exit code.
///
/// # Errors
/// Unreadable or invalid files, and the refusals of [`crate::outcome::merge`] (all exit 2); report failures.
pub(crate) fn run(args: &Options, ui: &super::Ui, out: &mut dyn Write) -> Result<Exit> {
    let files: Vec<(&str, &std::path::Path)> = args
        .files
        .iter()
        .map(|f| ("a results file merged", f.as_path()))
        .collect();
    super::outputs::refuse_overwriting_inputs(&args.reports.paths, &files)?;
    let here = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let pusher = super::store::Pusher::new(&args.store, None, "merge", &here)?;
    let mut inputs = Vec::with_capacity(args.files.len());
    for f in &args.files {
        inputs.push((f.clone(), crate::outcome::results::read(f)?));
    }
    let merged = crate::outcome::merge(inputs)?;
    let fail_on = args.fail_on.unwrap_or(merged.fail_on);
    let merged = Results { fail_on, ..merged };
    if let Some(p) = &args.reports.paths.json {
        merged.write(p)?;
    }
    let w = |e| Error::io("write", "<stdout>", e);
    let table = crate::report::console::results_table_styled(&merged, ui.console());
    write!(out, "{table}").map_err(w)?;
    out.flush().map_err(w)?;
    let env = crate::publish::GithubEnv::from_env();
    crate::publish::emit(&merged, &args.reports.options(&env), &env)?;
    pusher.push(&merged, args.reports.paths.json.as_deref())?;
    Ok(crate::outcome::decide::exit_code(
        merged.verdict,
        &merged.errors,
        fail_on,
    ))
}
