//! cgp-gate: a CI performance-regression gate for GPU kernels, built on NVIDIA Nsight Compute.
//!
//! Data flows one way: spec -> plan -> profile -> samples -> statistics -> verdict -> reports.
//!
//! - [`spec`]: `cgp-gate.yaml`, validated into [`spec::Spec`].
//! - [`profile`]: the [`profile::Profiler`] trait (live `ncu`, replay of a recording), SASS
//!   hashes ([`profile::sass`]).
//! - [`ncu`]: Nsight Compute's argv, its log lines and its CSV output.
//! - [`cupti`]: CUPTI activity tracing: the injection library, finding libcupti, the per-process
//!   trace files.
//! - [`nsys`]: Nsight Systems outputs, kernel categories and GPU-time breakdowns.
//! - [`foundation`]: exit codes, units, atomic writes, the threshold type, the crate's error.
//! - [`measured`]: parsed launches and sample series ([`measured::samples`]), the counter diff
//!   ([`measured::why`]).
//! - [`stats`]: pure statistics and the per-row verdict.
//! - [`baseline`]: the versioned baseline store.
//! - [`outcome::results`]: the run's results, the JSON that every reporter renders.
//! - [`outcome::decide`]: the one place that decides each row's gate status, the run's verdict and the
//!   exit code.
//! - [`report`]: console, JSON, JUnit, Markdown, HTML, GitHub.
//! - [`gpu`]: fingerprint, clocks, health, roofline.
//! - [`plan`]: the work list, the shard's part, what to re-measure; [`run::measure`] runs it.
//! - [`run`]: measure, the one engine of `check` and `ab`, `baseline update`.
//! - [`run::ab`]: base and head trees measured in alternation, judged pair by pair; [`history::changes`]:
//!   level shifts in a history of results files (`docs/ab-and-changes.md`).
//! - [`cli`] (clap) and [`commands`] (one file per command): the command layer.
//!
//! Layers and who may import whom: `docs/architecture.md` (enforced by `tests/architecture.rs`).

pub mod baseline;
pub mod cli;
pub mod commands;
pub mod cupti;
pub mod foundation;
pub mod gpu;
pub mod history;
pub mod measured;
pub mod ncu;
pub mod nsys;
pub mod outcome;
pub mod plan;
pub mod profile;
pub mod publish;
pub mod report;
pub mod run;
pub mod spec;
pub mod stats;

pub use foundation::error::{Error, Result};
