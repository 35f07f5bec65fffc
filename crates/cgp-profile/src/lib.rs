//! cgp-profile (docs/architecture.md): the profiler backends and what they drive.
//!
//! - [`profile`]: the [`profile::Profiler`] trait (live `ncu`, nsys, CUPTI, replay of a
//!   recording), SASS hashes ([`profile::sass`]).
//! - [`ncu`]: Nsight Compute's argv, its log lines and its CSV output.
//! - [`nsys`]: reading Nsight Systems outputs ([`nsys::read`]; the model is `cgp_spec::nsys`).
//! - [`cupti`]: CUPTI activity tracing: the injection library (built by `build.rs`), finding
//!   libcupti, the per-process trace files.
//! - [`gpu`]: the GPU: the `Gpu` trait, NVML behind it, the scriptable and stand-in GPUs, health
//!   sampling, a device's fingerprint, clock locking, `cgp-gate env` (the data it produces is
//!   `cgp_core::gpu`).
//!
//! The modules of the crates below are imported for this crate alone (`pub(crate) use`: no crate
//! re-exports another's modules), so `crate::spec::...` reads the same in every
//! crate.

pub mod cupti;
pub mod gpu;
pub mod ncu;
pub mod nsys;
pub mod profile;

pub(crate) use cgp_core::{Error, foundation, measured};
pub(crate) use cgp_read::harness;
pub(crate) use cgp_spec::{plan, spec};
