//! Nsight Systems: whole workloads, traced once, grouped into kernel categories.
//!
//! - `read` (in `cgp-profile`, whose `nsys` re-exports this module): every form nsys writes GPU
//!   activity in (`.nsys-rep`, its SQLite export, the CSV of the trace and summary reports, old and
//!   new names), into one [`Workload`].
//! - [`categories`]: ordered regex -> category rules (the user's first, then the defaults).
//! - [`breakdown`]: per-category and per-kernel time, the GPU busy time, and the console, JSON
//!   and CSV renderings of `cgp-gate breakdown` (HTML: `crate::report::breakdown`).
//! - `profile::nsys` (in the profile layer, beside the live ncu profiler) runs `profiler: nsys`
//!   targets: the live `nsys profile` backend and the samples (`category:<name>`, `gpu_time`,
//!   `non_gpu_time`, `kernel:<regex>`) a capture yields.
//!
//! Memcpy and memset rows are named as nsys's own trace report names them
//! (`[CUDA memcpy Host-to-Device]`, `[CUDA memset]`) whatever the input, so that one set of
//! categories applies to every input.

pub mod bars;
pub mod breakdown;
pub mod categories;

use std::path::PathBuf;

pub use breakdown::{Breakdown, RunBreakdown, breakdown};
pub use categories::Categories;

/// What an input holds: every GPU activity with its start, or only per-kernel totals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// One row per kernel launch, memcpy and memset, with start times (`cuda_gpu_trace`,
    /// `gputrace`, a SQLite export).
    Trace,
    /// One row per kernel name with totals (`cuda_gpu_kern_sum`, `cuda_gpu_kern_gb_sum`,
    /// `gpukernsum`): no start times, so no busy-time union.
    Summary,
}

/// One row: a launch (trace) or a kernel's total (summary). Names are interned in
/// [`Workload::names`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Activity {
    /// Index into [`Workload::names`].
    pub name: u32,
    /// Start in ns (trace rows only).
    pub start_ns: Option<u64>,
    pub duration_ns: u64,
    /// 1 for a trace row; the report's `Instances` for a summary row.
    pub instances: u64,
}

/// Everything read from one nsys output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workload {
    /// Where it was read from.
    pub file: PathBuf,
    pub shape: Shape,
    /// What it was: `cuda_gpu_trace csv`, `gpukernsum csv`, `sqlite export`, ...
    pub format: String,
    /// Distinct names in first-seen order.
    pub names: Vec<String>,
    pub activities: Vec<Activity>,
}

impl Workload {
    /// The name of an activity.
    pub fn name(&self, a: &Activity) -> &str {
        &self.names[a.name as usize]
    }
}

/// Interns names while a reader fills a workload.
#[derive(Debug, Default)]
pub struct Names {
    pub names: Vec<String>,
    index: std::collections::HashMap<String, u32>,
}

impl Names {
    pub fn id(&mut self, name: &str) -> u32 {
        if let Some(&i) = self.index.get(name) {
            return i;
        }
        let i = u32::try_from(self.names.len()).unwrap_or(u32::MAX);
        self.names.push(name.to_owned());
        self.index.insert(name.to_owned(), i);
        i
    }
}

/// The name nsys's trace report gives a memcpy of this kind (`Host-to-Device`, ...).
pub fn memcpy_name(kind_label: &str) -> String {
    format!("[CUDA memcpy {kind_label}]")
}

/// The name nsys's trace report gives a memset.
pub const MEMSET_NAME: &str = "[CUDA memset]";

/// CUPTI's memcpy kinds (`CUpti_ActivityMemcpyKind`) and the labels nsys gives them; used for
/// exports older than the `ENUM_CUDA_MEMCPY_OPER` table (the labels are that table's, copied from
/// a 2025.5 export).
pub const MEMCPY_KINDS: &[(i64, &str, &str)] = &[
    (0, "Unknown", "Unknown"),
    (1, "HtoD", "Host-to-Device"),
    (2, "DtoH", "Device-to-Host"),
    (3, "HtoA", "Host-to-Array"),
    (4, "AtoH", "Array-to-Host"),
    (5, "AtoA", "Array-to-Array"),
    (6, "AtoD", "Array-to-Device"),
    (7, "DtoA", "Device-to-Array"),
    (8, "DtoD", "Device-to-Device"),
    (9, "HtoH", "Host-to-Host"),
    (10, "PtoP", "Peer-to-Peer"),
    (11, "Unified HtoD", "Unified Host-to-Device"),
    (12, "Unified DtoH", "Unified Device-to-Host"),
    (13, "Unified DtoD", "Unified Device-to-Device"),
];

/// Rename a pre-2023 memcpy row (`[CUDA memcpy HtoD]`) to today's (`[CUDA memcpy Host-to-Device]`);
/// every other name is returned unchanged.
pub fn modern_name(name: &str) -> std::borrow::Cow<'_, str> {
    if let Some(kind) = name
        .strip_prefix("[CUDA memcpy ")
        .and_then(|r| r.strip_suffix(']'))
        && let Some((_, _, label)) = MEMCPY_KINDS.iter().find(|(_, short, _)| *short == kind)
    {
        return std::borrow::Cow::Owned(memcpy_name(label));
    }
    std::borrow::Cow::Borrowed(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn old_memcpy_names_become_new_ones() {
        assert_eq!(modern_name("[CUDA memcpy HtoD]"), "[CUDA memcpy Host-to-Device]");
        assert_eq!(modern_name("[CUDA memcpy PtoP]"), "[CUDA memcpy Peer-to-Peer]");
        assert_eq!(
            modern_name("[CUDA memcpy Host-to-Device]"),
            "[CUDA memcpy Host-to-Device]"
        );
        assert_eq!(modern_name("[CUDA memset]"), "[CUDA memset]");
        assert_eq!(modern_name("[CUDA memcpy XtoY]"), "[CUDA memcpy XtoY]");
        assert_eq!(modern_name("gemm"), "gemm");
    }
}
