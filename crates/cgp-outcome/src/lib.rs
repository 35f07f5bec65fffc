//! cgp-outcome (docs/architecture.md): the decided results of a run ([`outcome`]: results, the
//! one place that decides ([`outcome::decide`]), merge, gone and missing rows) and the history of
//! runs ([`history`]: changes, calibrate). The baseline store is `cgp-baseline`'s, whose files'
//! types it reads. No profiler, no reporter, no network.
//!
//! The modules of the crates below are imported for this crate alone (`pub(crate) use`: no crate
//! re-exports another's modules), so `crate::stats::...` reads the same in every
//! crate.

pub mod history;
pub mod outcome;

pub(crate) use cgp_baseline::baseline;
pub(crate) use cgp_core::{Error, foundation, gpu, measured, stats};
pub(crate) use cgp_spec::{nsys, plan, spec};
