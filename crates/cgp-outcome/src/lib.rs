//! cgp-outcome (docs/architecture.md): the decided results of a run ([`outcome`]: results, the
//! one place that decides ([`outcome::decide`]), merge, gone and missing rows), the versioned
//! baseline store ([`baseline`]) and the history of runs ([`history`]: changes, calibrate). No
//! profiler, no reporter, no network.
//!
//! The modules of the crates below are re-exported, so `crate::stats::...` reads the same in every
//! crate.

pub mod baseline;
pub mod history;
pub mod outcome;

pub use cgp_core::{Error, Result, foundation, gpu, measured, stats};
pub use cgp_spec::{nsys, plan, spec};
