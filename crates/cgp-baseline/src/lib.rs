//! cgp-baseline (docs/architecture.md, docs/baselines.md): the versioned baseline store
//! ([`baseline`]): `baselines/<gpu_key>/<target>.json`, its format and history, read without a
//! lock and replaced atomically under one. Apart from the decided results and the one place that
//! decides (`cgp-outcome`), which read its files' types. It reads no environment variable: the
//! command layer hands in the lock's wait the user set (`baseline::LockTimeout`). No profiler,
//! no reporter, no network.
//!
//! The modules of the crates below are imported for this crate alone (`pub(crate) use`: no crate
//! re-exports another's modules), so `crate::stats::...` reads the same in every crate.

pub mod baseline;

pub(crate) use cgp_core::{foundation, gpu, measured, stats};
