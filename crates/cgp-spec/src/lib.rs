//! cgp-spec (docs/architecture.md): `cgp-gate.yaml` validated into [`spec::Spec`], the work list
//! of a run ([`plan`]), and the model of Nsight Systems outputs ([`nsys`]: kernel categories,
//! breakdowns, bars), which the nsys profiler fills and the reports draw.
//!
//! The modules of the crates below are imported for this crate alone (`pub(crate) use`: no crate
//! re-exports another's modules), so `crate::stats::...` reads the same in every
//! crate.

pub mod nsys;
pub mod plan;
pub mod spec;

pub(crate) use cgp_core::{foundation, gpu, measured, stats};
