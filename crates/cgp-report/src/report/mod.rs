//! Reporters: they render a decided run ([`crate::outcome::view::RunView`], which `&Results`
//! converts into: no row, no rule, no threshold) or parsed launches; they decide nothing.
//!
//! - [`console`]: terminal tables.
//! - [`junit`]: JUnit XML for CI test reporters.
//! - [`markdown`]: the pull-request comment and the step summary.
//! - [`html`]: one self-contained page with charts.
//! - [`annotations`]: GitHub Actions workflow-command annotations.
//! - [`site`]: the history site of `cgp-gate history` (one page, charts drawn by its script).
//! - `why`: the model of a row's why (docs/why.md) that console, Markdown and HTML render.
//! - [`export`]: the list of the formats a results file is written in, behind one trait.
//!
//! Writing and posting what they render is `crate::publish`.

pub mod annotations;
pub mod bisect;
pub mod breakdown;
pub mod calibrate;
pub mod changes;
pub(crate) mod confirm;
pub mod console;
pub mod export;
pub mod format;
pub mod html;
pub mod junit;
pub mod kernels;
pub mod markdown;
pub(crate) mod mermaid;
pub mod site;
pub mod table;
pub mod text;
pub(crate) mod why;

// Each format has one escaping function, and its reporter uses only that one:
// `markdown::escape_md_cell`, `html::escape`, `junit::escape`, `annotations::escape`.

pub use html::html;
pub use junit::junit;
pub use markdown::{MarkdownOptions, escape_md_cell, markdown};
