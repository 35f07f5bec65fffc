//! The GPU's data (the model): what a measurement was taken on, the health around it, the roofline,
//! the clocks setting, what a device reports. The device itself (the `Gpu` trait, NVML behind it,
//! the scriptable and stand-in GPUs, health sampling, reading a fingerprint, clock locking, `env`)
//! is `cgp-profile`'s `gpu` (the program), which imports this module for itself.
//!
//! - [`device`]: what a device reports ([`Reading`], [`ThrottleReasons`], [`ClockDomain`]).
//! - [`fingerprint`]: what a measurement was taken on.
//! - [`clock_setting`]: the `clocks:` setting.
//! - [`health`]: throttling and clocks around each repetition.
//! - [`roofline`]: vendor peaks, `flops:`/`bytes:` expressions, derived metrics.

pub mod clock_setting;
pub mod device;
pub mod fingerprint;
pub mod health;
pub mod roofline;

pub use device::{ClockDomain, Reading, ThrottleReasons};
pub use fingerprint::Fingerprint;
pub use health::{RepHealth, ThrottlePolicy, should_rerun};
pub use roofline::{Peaks, derive, peaks_for, roofline_point};
