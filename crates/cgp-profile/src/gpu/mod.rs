//! The GPU (the program): the [`Gpu`] trait and NVML behind it, the scriptable and stand-in GPUs,
//! health sampling, a device's fingerprint, clock locking, `cgp-gate env`. The data they produce
//! (fingerprint, health, roofline, readings) is `cgp_core::gpu` (the model), imported here for
//! this crate.
//!
//! - [`driver`]: the [`Gpu`] trait and why a GPU is unavailable.
//! - [`nvml`]: NVML behind the trait ([`open`]).
//! - [`fake`]: [`FakeGpu`], a scriptable GPU for tests.
//! - [`sampler`]: [`HealthSampler`], the health around each repetition.
//! - [`identify`]: a device's [`fingerprint`].
//! - [`stand_in`]: the SYNTHETIC stand-in GPU of `CGP_GATE_STAND_IN_GPU`, for the live paths' tests.
//! - [`clocks`]: [`lock_clocks`] and the [`ClockGuard`] that always resets them.
//! - [`env`](mod@env): `cgp-gate env`.

pub(crate) use cgp_core::gpu::*;

pub mod clocks;
pub mod driver;
pub mod env;
pub mod fake;
pub mod identify;
pub mod nvml;
pub mod sampler;
pub mod stand_in;

pub use clocks::{
    ClockGuard, LockedClocks, lock_clocks, pending_restores, reset_all_clocks, restore_pending_clocks,
};
pub use driver::{Gpu, GpuError, GpuUnavailable};
pub use env::{env_report, render_text};
pub use fake::{FakeDevice, FakeGpu};
pub use identify::{fingerprint, hardware_fingerprint};
pub use nvml::{NvmlGpu, open};
pub use sampler::HealthSampler;
