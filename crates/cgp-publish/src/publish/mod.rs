//! Publishing: where rendered reports go. Files (written atomically), the GitHub step summary,
//! step outputs and annotations, the sticky pull-request comment (GitHub's API, octocrab) and the
//! merge-request note (GitLab's REST API). It renders nothing and decides nothing: the text comes
//! from `crate::report`, the verdicts from `crate::outcome`.
//!
//! - [`emit`]: `cgp-gate report` and the entry point `check`, `ab` and `merge` share.
//! - [`github`]: the Actions environment, the step summary, outputs and annotations.
//! - [`comment`]: the sticky pull-request comment.
//! - [`gitlab`]: the sticky merge-request note on GitLab.

pub mod comment;
pub mod emit;
pub mod github;
pub mod gitlab;
mod retry;

pub use comment::{CommentOutcome, GithubConfig, post_comment};
pub use emit::{ReportFlags, ReportOptions, ReportPaths, emit};
pub use github::{GithubEnv, write_step_summary};
