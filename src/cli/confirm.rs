//! `check --base` and its companions: their clap arguments (kept apart from `args.rs`).

use std::path::PathBuf;

use crate::commands;

/// `--build-timeout`: `90s`, `30m`, `2h` (the spec's duration form).
///
/// # Errors
/// The parser's message (no unit, unknown unit, zero).
pub(crate) fn duration(text: &str) -> Result<std::time::Duration, String> {
    crate::spec::parse_duration(text)
}

/// Which rows `--base` confirms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ConfirmArg {
    /// Inconclusive rows and regressions (a pass or an improvement against the stored baseline
    /// is final).
    Doubtful,
    /// Every compared row.
    All,
}

/// The base commit `check` confirms doubtful rows against (docs/confirm.md).
#[derive(Debug, Clone, clap::Args)]
pub struct BaseArgs {
    /// Confirm the doubtful rows (inconclusive, or a regression) against this git revision of the
    /// spec's repository, in this job: its tree is checked out in a temporary worktree, built
    /// once (`--build` or `settings.build`), and the rows' sizes measured again paired and
    /// interleaved with it, as `ab` measures; the paired verdict decides the row. Nothing doubtful:
    /// no worktree, no build. A base that does not build or run: exit 3.
    #[arg(long, value_name = "REV", conflicts_with_all = ["base_dir", "replay", "record"])]
    pub base: Option<String>,
    /// As --base, with a base tree you already built (a checkout of the base commit); nothing is
    /// built or checked out.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["replay", "record", "build"])]
    pub base_dir: Option<PathBuf>,
    /// The shell command that builds the base commit's worktree (run in the spec's folder there);
    /// replaces `settings.build`.
    #[arg(long, value_name = "CMD", requires = "base")]
    pub build: Option<String>,
    /// How long the base's build may run before it is stopped (its process group ended): `90s`,
    /// `30m`, `2h`. Default 30m.
    #[arg(long, value_name = "DURATION", value_parser = duration, requires = "base")]
    pub build_timeout: Option<std::time::Duration>,
    /// Which rows --base confirms: `doubtful` (inconclusive rows and regressions, the default) or
    /// `all`; replaces `settings.confirm`.
    #[arg(long, value_enum, value_name = "ROWS")]
    pub confirm: Option<ConfirmArg>,
}

impl From<BaseArgs> for commands::check::BaseOptions {
    fn from(a: BaseArgs) -> Self {
        let BaseArgs {
            base,
            base_dir,
            build,
            build_timeout,
            confirm,
        } = a;
        Self {
            base,
            base_dir,
            build,
            build_timeout,
            confirm: confirm.map(|c| match c {
                ConfirmArg::Doubtful => crate::spec::ConfirmMode::Doubtful,
                ConfirmArg::All => crate::spec::ConfirmMode::All,
            }),
        }
    }
}
