//! cgp-report (docs/architecture.md): console, JSON, JUnit, Markdown, HTML, GitHub annotations.
//! Reporters render decided results (`cgp-outcome`); this crate depends on no profiler and no
//! HTTP client (its `Cargo.toml` says so, and `tests/architecture.rs` checks it).
//!
//! The modules of the crates below are re-exported, so `crate::outcome::...` reads the same in
//! every crate.

pub mod report;

pub use cgp_core::{Error, Result, foundation, gpu, measured, stats};
pub use cgp_outcome::{baseline, history, outcome};
pub use cgp_spec::{nsys, plan, spec};
