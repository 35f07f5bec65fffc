//! The spec's `kernel:` filter applied to a recording, as ncu applies it to a live run.
//!
//! A live run passes `--kernel-name-base function --kernel-name <filter>` and ncu profiles only
//! the matching launches. A recording may hold more (recorded without the filter, by another
//! tool, or edited by hand); replay must judge the same kernels a live run would, or a kernel the
//! spec excludes is compared (or reported `new`) in replay only.
//!
//! ncu matches the *function* name: the demangled name without return type, template arguments
//! and parameter list (`void ns::gemm<128>(float*, int)` -> `gemm`; see /work/shared/docs/ncu.md
//! §9.4). An exact filter must equal it; a `regex:` filter must match somewhere in it. The
//! namespace-qualified form (`ns::gemm`) is accepted too, since the function base of a namespaced
//! kernel is not documented precisely.

use crate::profile::{Capture, FailureKind, Job, ProfileError, job_context};
use crate::samples::SampleSet;
use crate::spec::KernelFilter;

/// Apply the target's `kernel:` filter to the samples of one replayed repetition.
///
/// # Errors
/// [`FailureKind::NoKernels`] when the filter selects none of the recorded kernels, naming them.
pub fn for_replay(
    job: Job<'_>,
    capture: &Capture,
    mut samples: SampleSet,
) -> Result<SampleSet, ProfileError> {
    let Some(filter) = &job.target.kernel else {
        return Ok(samples);
    };
    let dropped = retain(&mut samples, filter);
    if samples.series.is_empty() && !dropped.is_empty() {
        return Err(ProfileError::new(
            FailureKind::NoKernels,
            job_context(job),
            format!(
                "the kernel filter `{filter}` matched none of the kernels recorded in {}: {}",
                capture.origin.display(),
                dropped.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
            ),
        )
        .hint("fix `kernel:` in the spec (ncu matches the function name, without return type, template arguments and parameters)"));
    }
    Ok(samples)
}

/// The function name of a kernel as the CSV prints it (demangled, maybe without parameters):
/// return type, template arguments and parameter list removed; namespaces kept.
pub fn function_name(kernel: &str) -> String {
    let head = crate::samples::kernel_key(kernel);
    // Drop template arguments (nested `<...>`), then take the last whitespace-separated word:
    // what precedes it is the return type (`void`, `static void`).
    let mut depth = 0usize;
    let mut plain = String::with_capacity(head.len());
    for c in head.chars() {
        match c {
            '<' => depth += 1,
            '>' => depth = depth.saturating_sub(1),
            c if depth == 0 => plain.push(c),
            _ => {}
        }
    }
    plain
        .split_whitespace()
        .last()
        .unwrap_or_default()
        .trim_start_matches(['*', '&'])
        .to_owned()
}

/// Whether the filter selects this kernel (by its name in the CSV).
pub fn matches(filter: &KernelFilter, kernel: &str) -> bool {
    let qualified = function_name(kernel);
    let bare = qualified.rsplit("::").next().unwrap_or(&qualified).to_owned();
    match filter {
        KernelFilter::Exact(name) => *name == bare || *name == qualified,
        KernelFilter::Regex(re) => re.is_match(&bare) || re.is_match(&qualified),
    }
}

/// Keep only the series of kernels the filter selects; returns the kernels dropped (sorted, once
/// each).
pub fn retain(samples: &mut SampleSet, filter: &KernelFilter) -> Vec<String> {
    let mut dropped: Vec<String> = Vec::new();
    samples.series.retain(|key, _| {
        // A kernel launched with several configurations is one series per configuration
        // (`KERNEL [grid ... block ...]`); the filter matches the kernel.
        let keep = matches(filter, crate::samples::kernel_of_series(&key.kernel));
        if !keep && !dropped.contains(&key.kernel) {
            dropped.push(key.kernel.clone());
        }
        keep
    });
    dropped.sort();
    dropped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn function_names_as_ncu_matches_them() {
        assert_eq!(
            function_name("void matmul_tiled<32>(const float *, const float *, float *, int)"),
            "matmul_tiled"
        );
        assert_eq!(function_name("void matmul_tiled<32>"), "matmul_tiled");
        assert_eq!(function_name("reduce_sum<256>"), "reduce_sum");
        assert_eq!(function_name("void ns::k<std::pair<int, int>>(int)"), "ns::k");
        assert_eq!(function_name("vector_add"), "vector_add");
    }

    #[test]
    fn exact_and_regex_filters() {
        let exact = KernelFilter::Exact("vector_add".into());
        assert!(matches(&exact, "void vector_add(float*, int)"));
        assert!(!matches(&exact, "void vector_add2(float*, int)"));
        let re = KernelFilter::Regex(regex::Regex::new("^matmul_tiled").unwrap());
        assert!(matches(&re, "void matmul_tiled<32>(float*)"));
        assert!(matches(&re, "void matmul_tiled_v2<32>(float*)"));
        assert!(!matches(&re, "void other<32>(float*)"));
        let ns = KernelFilter::Exact("k".into());
        assert!(matches(&ns, "void ns::k<1>(int)"));
    }
}
