//! The GPU's data: fingerprint, health, roofline, and the [`Gpu`] trait (NVML behind it, clock
//! locking and `env` are `cgp-profile`'s `gpu`, which re-exports this module).
//!
//! - [`device`]: the [`Gpu`] trait and why a GPU is unavailable.
//! - [`fake`]: [`FakeGpu`], a scriptable GPU for tests.
//! - [`fingerprint`]: what a measurement was taken on.
//! - [`clock_setting`]: the `clocks:` setting.
//! - [`health`]: throttling and clocks around each repetition.
//! - [`roofline`]: vendor peaks, `flops:`/`bytes:` expressions, derived metrics.

pub mod clock_setting;
pub mod device;
pub mod fake;
pub mod fingerprint;
pub mod health;
pub mod roofline;

pub use device::{ClockDomain, Gpu, GpuError, GpuUnavailable, Reading, ThrottleReasons};
pub use fake::{FakeDevice, FakeGpu};
pub use fingerprint::{Fingerprint, fingerprint};
pub use health::{HealthSampler, RepHealth, ThrottlePolicy, should_rerun};
pub use roofline::{Peaks, derive, peaks_for, roofline_point};
