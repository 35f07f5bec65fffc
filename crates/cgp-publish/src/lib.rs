//! cgp-publish (docs/architecture.md): [`publish`]: writing what the reporters rendered, the
//! Actions step summary, outputs and annotations, the pull-request comment (GitHub) and the
//! merge-request note (GitLab): the network.
//!
//! The modules of the crates below are re-exported, so `crate::report::...` reads the same in
//! every crate.

pub mod publish;

pub use cgp_core::{Error, Result, foundation, gpu, measured, stats};
pub use cgp_outcome::{baseline, history, outcome};
pub use cgp_report::report;
pub use cgp_spec::{nsys, plan, spec};
