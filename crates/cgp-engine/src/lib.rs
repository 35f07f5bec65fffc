//! cgp-engine (docs/architecture.md): [`run`]: measure, the one engine of `check` and `ab`,
//! `baseline update`. It drives the profilers (`cgp-profile`) and hands decided results
//! (`cgp-outcome`) to the command layer.
//!
//! The modules of the crates below are re-exported, so `crate::profile::...` reads the same in
//! every crate.

pub mod run;

pub use cgp_core::{Error, Result, foundation, measured, stats};
pub use cgp_outcome::{baseline, history, outcome};
pub use cgp_profile::{cupti, gpu, harness, ncu, nsys, profile};
pub use cgp_spec::{plan, spec};
