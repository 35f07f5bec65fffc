//! cgp-read (docs/architecture.md): the parse-only readers of what the tools write, apart from the
//! programs that run them (`cgp-profile`): a file's bytes in, samples out, and no process started
//! (tests/architecture.rs, `readers_start_no_program`).
//!
//! - [`cupti_trace`]: the per-process trace file cgp-gate's CUPTI injection library writes
//!   (docs/cupti.md, "Trace file format"); the library and finding libcupti are `cgp-profile`'s
//!   `cupti`.
//! - [`harness`]: the benchmark harnesses' files (nvbench, Google Benchmark, pytest-benchmark,
//!   PyTorch benchmark rows, tritonbench, hyperfine, Criterion, asv, vLLM; docs/harnesses.md).
//! - [`ncu_output`]: what Nsight Compute writes with `--csv` and its log lines (docs/parser.md);
//!   running ncu is `cgp-profile`'s `ncu`.
//! - [`nsys_files`]: Nsight Systems' SQLite exports and CSV reports, into the model's `Workload`
//!   (`cgp_spec::nsys`); exporting a `.nsys-rep` with nsys first is `cgp-profile`'s `nsys::read`.
//!
//! The modules of the crates below are imported for this crate alone (`pub(crate) use`: no crate
//! re-exports another's modules), so `crate::measured::...` reads the same in every crate.

pub mod cupti_trace;
pub mod harness;
pub mod ncu_output;
pub mod nsys_files;

pub(crate) use cgp_core::{foundation, measured, stats};
pub(crate) use cgp_spec::nsys;
