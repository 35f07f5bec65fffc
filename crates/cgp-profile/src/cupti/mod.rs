//! CUPTI activity tracing: kernel start and end times at the program's own cost (issue 36).
//!
//! - [`inject`]: the injection library (`inject.c`, embedded in the binary), written to a cache
//!   folder at first use, and the environment that makes the CUDA driver load it.
//! - [`locate`]: where libcupti is (the spec's key, `CGP_GATE_LIBCUPTI`, the CUDA toolkit, the
//!   `nvidia-cuda-cupti` wheel PyTorch installs, ldconfig).
//! - `trace`: the per-process trace file the library writes, and its bounded reader: `cgp-read`'s
//!   `cupti_trace` (parse-only), imported here as `crate::cupti::trace` for this crate.
//!
//! A leaf: it never imports `profile` or `spec`; `profile::cupti` runs programs with it.

pub mod inject;
pub mod locate;
pub(crate) use cgp_read::cupti_trace as trace;
