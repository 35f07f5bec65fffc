//! The GPU environment: fingerprint, clock locking, health, roofline.
//!
//! - [`device`]: the [`Gpu`] trait, NVML behind it ([`open`]), and why a GPU is unavailable.
//! - [`fake`]: [`FakeGpu`], a scriptable GPU for tests.
//! - [`fingerprint`]: what a measurement was taken on.
//! - [`clocks`]: [`lock_clocks`] and the [`ClockGuard`] that always resets them.
//! - [`health`]: throttling and clocks around each repetition.
//! - [`roofline`]: vendor peaks, `flops:`/`bytes:` expressions, derived metrics.
//! - [`env`]: `cgp-gate env`.

pub mod clocks;
pub mod device;
pub mod env;
pub mod fake;
pub mod fingerprint;
pub mod health;
pub mod roofline;

pub use clocks::{
    ClockGuard, LockedClocks, lock_clocks, pending_restores, reset_all_clocks, restore_pending_clocks,
};
pub use device::{ClockDomain, Gpu, GpuError, GpuUnavailable, NvmlGpu, Reading, ThrottleReasons, open};
pub use env::{env_report, render_text};
pub use fake::{FakeDevice, FakeGpu};
pub use fingerprint::{Fingerprint, fingerprint};
pub use health::{HealthSampler, RepHealth, ThrottlePolicy, should_rerun};
pub use roofline::{Peaks, derive, peaks_for, roofline_point};
