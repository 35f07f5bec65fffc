//! cgp-report (docs/architecture.md): console, JSON, JUnit, Markdown, HTML, GitHub annotations.
//! Reporters render decided results (`cgp-outcome`); this crate depends on no profiler and no
//! HTTP client (its `Cargo.toml` says so, and `tests/architecture.rs` checks it).
//!
//! The modules of the crates below are imported for this crate alone (`pub(crate) use`: no crate
//! re-exports another's modules), so `crate::outcome::...` reads the same in
//! every crate.

pub mod report;

pub(crate) use cgp_core::{foundation, measured, stats};
pub(crate) use cgp_outcome::{history, outcome};
pub(crate) use cgp_spec::{nsys, spec};
