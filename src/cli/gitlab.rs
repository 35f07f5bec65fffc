//! `cgp-gate gitlab-note`: its clap arguments (kept apart from `args.rs`).

use std::path::PathBuf;

/// `cgp-gate gitlab-note`.
#[derive(Debug, Clone, clap::Args)]
pub struct GitlabNoteArgs {
    /// The results file (`check --json` or `merge --json`).
    #[arg(long, value_name = "RESULTS_JSON")]
    pub from: PathBuf,
    /// The GitLab REST API root, instead of CI_API_V4_URL (`https://HOST/api/v4`).
    #[arg(long, value_name = "URL")]
    pub api_url: Option<String>,
    /// The project (numeric id or GROUP/NAME), instead of CI_MERGE_REQUEST_PROJECT_ID or
    /// CI_PROJECT_ID.
    #[arg(long, value_name = "ID")]
    pub project: Option<String>,
    /// The merge request's IID, instead of CI_MERGE_REQUEST_IID.
    #[arg(long, value_name = "IID")]
    pub mr: Option<u64>,
}

impl From<GitlabNoteArgs> for crate::commands::gitlab_note::Options {
    fn from(a: GitlabNoteArgs) -> Self {
        let GitlabNoteArgs {
            from,
            api_url,
            project,
            mr,
        } = a;
        Self {
            from,
            api_url,
            project,
            mr,
        }
    }
}
