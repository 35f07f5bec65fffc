//! The GPU environment: fingerprint, clock locking, health, roofline.
//!
//! - [`device`]: the [`Gpu`] trait and why a GPU is unavailable; [`nvml`]: NVML behind it ([`open`]).
//! - [`fake`]: [`FakeGpu`], a scriptable GPU for tests.
//! - [`fingerprint`]: what a measurement was taken on.
//! - [`clock_setting`]: the `clocks:` setting; [`clocks`]: [`lock_clocks`] and the [`ClockGuard`] that always resets them.
//! - [`health`]: throttling and clocks around each repetition.
//! - [`roofline`]: vendor peaks, `flops:`/`bytes:` expressions, derived metrics.
//! - [`env`]: `cgp-gate env`.

pub mod clock_setting;
pub mod clocks;
pub mod device;
pub mod env;
pub mod fake;
pub mod fingerprint;
pub mod health;
pub mod nvml;
pub mod roofline;

pub use clocks::{
    ClockGuard, LockedClocks, lock_clocks, pending_restores, reset_all_clocks, restore_pending_clocks,
};
pub use device::{ClockDomain, Gpu, GpuError, GpuUnavailable, Reading, ThrottleReasons};
pub use env::{env_report, render_text};
pub use fake::{FakeDevice, FakeGpu};
pub use fingerprint::{Fingerprint, fingerprint};
pub use nvml::{NvmlGpu, open};
pub use health::{HealthSampler, RepHealth, ThrottlePolicy, should_rerun};
pub use roofline::{Peaks, derive, peaks_for, roofline_point};
