//! `cgp-gate history`: its clap arguments (kept apart from `args.rs`).

use std::path::PathBuf;

/// `cgp-gate history`.
#[derive(Debug, Clone, clap::Args)]
pub struct HistoryArgs {
    /// Results files (`check --json`), oldest first (as `changes` reads them).
    #[arg(value_name = "RESULTS_JSON")]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub read: super::store::ReadArgs,
    /// The folder of the site (created; an existing one must be empty or one history wrote).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// github-action-benchmark's data.js (`window.BENCHMARK_DATA`): its history comes first.
    #[arg(long, value_name = "DATA_JS")]
    pub import_github_action_benchmark: Option<PathBuf>,
    /// The repository's web address, for links to commits (https://github.com/OWNER/NAME).
    #[arg(long, value_name = "URL")]
    pub repo_url: Option<String>,
    /// Where a commit's page is, without its SHA (GitLab: `$CI_PROJECT_URL/-/commit/`); by
    /// default `--repo-url` followed by `/commit/` (GitHub's form).
    #[arg(long, value_name = "URL")]
    pub commit_url: Option<String>,
    /// The page's heading.
    #[arg(long)]
    pub title: Option<String>,
    /// Only the last N results files.
    #[arg(long, value_name = "N")]
    pub last: Option<usize>,
    /// Chance of any false change point in the whole history (as in `changes`).
    #[arg(long, default_value_t = 0.01)]
    pub alpha: f64,
    /// Smallest shift marked, as a percentage (`1%`) or a fraction (`0.01`).
    #[arg(long, default_value = "1%", value_parser = super::args::parse_fraction)]
    pub min_change: f64,
    /// Fewest results on each side of a change point.
    #[arg(long, default_value_t = 3)]
    pub min_segment: usize,
}

impl From<HistoryArgs> for crate::commands::history::Options {
    fn from(a: HistoryArgs) -> Self {
        let HistoryArgs {
            files,
            read,
            out,
            import_github_action_benchmark,
            repo_url,
            commit_url,
            title,
            last,
            alpha,
            min_change,
            min_segment,
        } = a;
        Self {
            files,
            out,
            import_github_action_benchmark,
            repo_url,
            commit_url,
            title,
            last,
            alpha,
            min_change,
            min_segment,
            read: read.into(),
        }
    }
}
