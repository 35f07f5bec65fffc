//! Reporters: they render [`crate::outcome::results::Results`] (or parsed launches); they decide nothing.
//!
//! - [`console`]: terminal tables.
//! - [`junit`]: JUnit XML for CI test reporters.
//! - [`markdown`]: the pull-request comment and the step summary.
//! - [`html`]: one self-contained page with charts.
//! - [`github`]: GitHub Actions step summary, outputs and annotations.
//! - [`comment`]: the sticky pull-request comment (octocrab).
//! - [`gitlab`]: the sticky merge-request note on GitLab (REST API v4).
//! - [`emit`]: `cgp-gate report` and the entry point `check` shares.

pub mod breakdown;
pub mod calibrate;
pub mod changes;
pub mod comment;
pub mod console;
pub mod emit;
pub(crate) mod format;
pub mod github;
pub mod gitlab;
pub mod html;
pub mod junit;
pub mod markdown;
pub mod table;
pub mod text;

// Each format has one escaping function, and its reporter uses only that one:
// `markdown::escape_md_cell`, `html::escape`, `junit::escape`, `github::escape` (annotations).

pub use comment::{CommentOutcome, GithubConfig, post_comment};
pub use emit::{ReportFlags, ReportOptions, emit, read_results};
pub use github::{GithubEnv, write_step_summary};
pub use html::html;
pub use junit::junit;
pub use markdown::{MarkdownOptions, escape_md_cell, markdown};
