//! cgp-engine (docs/architecture.md): [`run`]: measure, the one engine of `check` and `ab`,
//! `baseline update`. It drives the profilers (`cgp-profile`) and hands decided results
//! (`cgp-outcome`) to the command layer.
//!
//! The modules of the crates below are imported for this crate alone (`pub(crate) use`: no crate
//! re-exports another's modules), so `crate::profile::...` reads the same in
//! every crate.

pub mod run;

pub(crate) use cgp_baseline::baseline;
pub(crate) use cgp_core::{foundation, measured, stats};
pub(crate) use cgp_outcome::outcome;
pub(crate) use cgp_profile::profile;

/// The GPU under one name in this crate: its data and trait (`cgp_core::gpu`) and NVML, clocks
/// and the stand-in (`cgp_profile::gpu`). Neither crate re-exports the other's.
mod gpu {
    pub(crate) use cgp_core::gpu::*;
    pub(crate) use cgp_profile::gpu::*;
}
pub(crate) use cgp_spec::{nsys, plan, spec};
