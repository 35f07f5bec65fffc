//! cgp-publish (docs/architecture.md): [`publish`]: writing what the reporters rendered, the
//! Actions step summary, outputs and annotations, the pull-request comment (GitHub) and the
//! merge-request note (GitLab): the network.
//!
//! The modules of the crates below are imported for this crate alone (`pub(crate) use`: no crate
//! re-exports another's modules), so `crate::report::...` reads the same in
//! every crate.

pub mod publish;

pub(crate) use cgp_core::foundation;
pub(crate) use cgp_outcome::outcome;
pub(crate) use cgp_report::report;
