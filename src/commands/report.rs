//! `cgp-gate report`: render a results file (any schema version this build reads).

use std::io::Write;
use std::path::PathBuf;

use super::stdout_err;
use crate::foundation::error::Result;
use crate::foundation::exit_codes::Exit;
use crate::outcome::results::read as read_results;
use crate::publish::{GithubEnv, ReportFlags, emit};

/// Everything `report` needs from the command line.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    pub from: PathBuf,
    pub flags: ReportFlags,
}

/// Run `cgp-gate report`. Exits 0 when every requested report was written: the verdict is
/// `check`'s to give, and a report of a failed run is still a successful report.
///
/// # Errors
/// As [`read_results`] and [`emit`].
pub(crate) fn run(args: &Options, ui: &super::Ui, out: &mut dyn Write) -> Result<Exit> {
    super::outputs::refuse_overwriting_inputs(
        &args.flags.paths,
        &[("the results file", args.from.as_path())],
    )?;
    let results = read_results(&args.from)?;
    if let Some(problem) = crate::outcome::decide::stored_verdict_problem(&results) {
        return Err(crate::Error::input(&args.from, problem));
    }
    let env = GithubEnv::from_env();
    let opts = args.flags.options(&env);
    let nothing_requested = !opts.paths.any_report() && !opts.github_comment;
    if nothing_requested {
        let table = crate::report::console::results_table_styled(&results, ui.console());
        write!(out, "{table}").map_err(stdout_err)?;
    }
    emit(&results, &opts, &env)?;
    Ok(Exit::Ok)
}
