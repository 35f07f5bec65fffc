//! `cgp-gate bisect`: its clap arguments (kept apart from `args.rs`).

use std::path::PathBuf;

use crate::commands;

/// `cgp-gate bisect`.
#[derive(Debug, Clone, clap::Args)]
pub struct BisectArgs {
    #[command(flatten)]
    pub ui: super::args::UiArgs,
    /// The spec file, inside the repository to bisect; every commit is measured with this spec,
    /// its commands and relative paths resolved in that commit's worktree.
    #[arg(long, default_value = "cgp-gate.yaml")]
    pub spec: PathBuf,
    /// The last commit known to be good (a SHA, branch or tag).
    #[arg(long, value_name = "REV", required_unless_present = "from")]
    pub good: Option<String>,
    /// The first commit known to be bad.
    #[arg(long, value_name = "REV", required_unless_present = "from")]
    pub bad: Option<String>,
    /// Only this target (repeatable); with several, a commit is bad when any row regressed.
    #[arg(long = "target", value_name = "NAME")]
    pub targets: Vec<String>,
    /// The shell command that builds a commit's worktree (run in the spec's folder there);
    /// replaces `settings.build`. A commit whose build fails is skipped.
    #[arg(long, value_name = "CMD")]
    pub build: Option<String>,
    /// How long one commit's build may run before it is stopped (its process group ended) and the
    /// commit skipped: `90s`, `30m`, `2h`. Default 30m.
    #[arg(long, value_name = "DURATION", value_parser = super::confirm::duration)]
    pub build_timeout: Option<std::time::Duration>,
    /// Write the decided search (culprit, confidence, every commit measured) as JSON here.
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// Write it as Markdown here (a step summary, an issue's body).
    #[arg(long, value_name = "PATH")]
    pub markdown: Option<PathBuf>,
    /// Start from a `cgp-gate changes --json` file: good and bad are the commits around its row's
    /// change, the target its row's (the flags given replace them).
    #[arg(long, value_name = "CHANGES_JSON")]
    pub from: Option<PathBuf>,
    /// Which row of --from (0-based in its `rows`); default the first that got worse.
    #[arg(long, value_name = "N", requires = "from")]
    pub row: Option<usize>,
    /// The relative threshold each step judges against (`2%` or `0.02`) instead of the spec's;
    /// with --from, by default half the row's shift.
    #[arg(long, value_name = "PCT")]
    pub threshold: Option<String>,
}

impl From<BisectArgs> for commands::bisect::Options {
    fn from(a: BisectArgs) -> Self {
        let BisectArgs {
            // Read by `cli::run` for the command's `Ui`.
            ui: _,
            spec,
            good,
            bad,
            targets,
            build,
            build_timeout,
            json,
            markdown,
            from,
            row,
            threshold,
        } = a;
        Self {
            spec,
            good,
            bad,
            targets,
            build,
            json,
            markdown,
            from,
            row,
            threshold,
            build_timeout,
        }
    }
}
