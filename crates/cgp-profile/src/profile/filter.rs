//! The spec's `kernel:` filter applied to a recording, as ncu applies it to a live run.
//!
//! One rule, live and replay (docs/spec.md, "Selecting kernels"):
//! - a `regex:` filter matches the demangled name as the CSV prints it (`void gemm<128>(float *,
//!   int)`, `nvjet_sm90_tst_...`, `void Kernel2<cutlass_80_...>(Params)`); live, cgp-gate passes
//!   `--kernel-name-base demangled`, so ncu matches the same string. With the default base
//!   (`function`) ncu matches `Kernel2` for a CUTLASS kernel cuBLAS picked, and a filter such as
//!   `regex:cutlass` selects nothing live but everything in a replay (the H100 capture of
//!   2026-11-24 showed both);
//! - an exact name matches the function name (no return type, namespace, template arguments or
//!   parameters: `gemm`) or the whole demangled name. Live, a plain identifier is passed with
//!   `--kernel-name-base function`, anything else (`void gemm<128>(float *, int)`) with
//!   `demangled`: [`crate::ncu::command::kernel_name_base`] decides, and [`matches`] follows it.
//!
//! A capture printed with `--print-kernel-base mangled` names kernels by their Itanium symbol
//! (`_Z5indexPiii`). Live, ncu matches `-k` against the demangled or function name whatever it
//! prints, so such a name is matched as its demangled form ([`demangled`]: `index(int*, int,
//! int)`, function `index`), never as the symbol: a filter written from the symbol would select
//! nothing live.
//!
//! A recording may hold more kernels than the filter selects (recorded without the filter, by
//! another tool, or edited by hand); replay judges the same kernels a live run would, or a kernel
//! the spec excludes is compared (or reported `new`) in replay only.

use crate::measured::samples::SampleSet;
use crate::profile::{Capture, FailureKind, Job, ProfileError, job_context};
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
    // A launch whose name holds an invisible or look-alike character (or no name) is not a
    // kernel the filter decided against: dropping it silently would change the process's
    // launches and which of them is its warm-up (issue 34). The recording is damaged.
    if let Some((name, why)) = dropped.iter().find_map(|k| odd_name(k).map(|w| (k, w))) {
        return Err(ProfileError::new(
            FailureKind::BadOutput,
            job_context(job),
            format!(
                "{}: kernel {:?} has {why}; ncu prints kernel names as the compiler made them, so the name was damaged, and the kernel filter `{filter}` would silently leave its launches out",
                capture.origin.display(),
                name
            ),
        )
        .hint("use the recording as ncu wrote it; profile (or record) it again"));
    }
    if samples.series.is_empty() && !dropped.is_empty() {
        let mut err = ProfileError::new(
            FailureKind::NoKernels,
            job_context(job),
            format!(
                "the kernel filter `{filter}` matched none of the kernels recorded in {}: {}",
                capture.origin.display(),
                dropped.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
            ),
        )
        .hint("fix `kernel:` in the spec: a `regex:` filter matches the demangled name as listed here (`void gemm<128>(...)` begins with `void`, so `^gemm` never matches it); an exact name matches the function name (`gemm`) or the whole demangled name (docs/spec.md, \"Selecting kernels\")");
        err.unselected = dropped;
        return Err(err);
    }
    Ok(samples)
}

/// A kernel name as live ncu matches it: an Itanium-mangled symbol (`_Z5indexPiii`, from
/// `--print-kernel-base mangled`) demangled (`index(int*, int, int)`); any other name as it is.
/// The cpp_demangle crate does the demangling (its spacing, `int*`, differs from ncu's `int *`,
/// which the function name and the filters built from it do not see).
pub fn demangled(kernel: &str) -> std::borrow::Cow<'_, str> {
    if kernel.starts_with("_Z")
        && let Ok(sym) = cpp_demangle::Symbol::new(kernel)
        && let Ok(text) = sym.demangle()
    {
        return std::borrow::Cow::Owned(text);
    }
    std::borrow::Cow::Borrowed(kernel)
}

/// The function name of a kernel as the CSV prints it, as ncu's `--kernel-name-base function`
/// has it: return type, namespaces and classes, template arguments and parameter list removed
/// (`void ns::gemm<128, float>(float const *, int)` -> `gemm`). ncu 2025.3 prints an anonymous
/// namespace as `unnamed>::` (`void unnamed>::vectorized_layer_norm_kernel<Half, float, 0>`): the
/// unbalanced `>` is not a template bracket.
pub fn function_name(kernel: &str) -> String {
    let key = crate::measured::samples::kernel_key(&demangled(kernel));
    let key = key
        .replace("(anonymous namespace)::", "")
        .replace("unnamed>::", "");
    // The return type ends at the last space outside brackets (`enable_if<!T, void>::type k<..>`).
    let mut s = key.as_str();
    if let Some(i) = last_top_level(s, |rest| rest.starts_with(' ')) {
        s = &s[i + 1..];
    }
    // Trailing template arguments.
    if s.ends_with('>')
        && let Some(i) = matching_open(s)
    {
        s = &s[..i];
    }
    // Namespaces and classes.
    if let Some(i) = last_top_level(s, |rest| rest.starts_with("::")) {
        s = &s[i + 2..];
    }
    let s = s.trim().trim_start_matches(['*', '&']);
    if s.is_empty() { key.clone() } else { s.to_owned() }
}

/// The byte offset of the last position outside `<>`/`()` brackets where `at` holds. A closing
/// bracket without its opening one (`unnamed>`) leaves the depth at 0.
fn last_top_level(s: &str, at: impl Fn(&str) -> bool) -> Option<usize> {
    let mut depth = 0usize;
    let mut found = None;
    for (i, c) in s.char_indices() {
        match c {
            '<' | '(' => depth += 1,
            '>' | ')' => depth = depth.saturating_sub(1),
            _ if depth == 0 && at(&s[i..]) => found = Some(i),
            _ => {}
        }
    }
    found
}

/// The offset of the `<` that opens the template argument list `s` ends with.
fn matching_open(s: &str) -> Option<usize> {
    let mut depth = 0i32;
    for (i, c) in s.char_indices().rev() {
        match c {
            '>' => depth += 1,
            '<' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// Whether the filter selects this kernel, by its name in the CSV (demangled; a series name
/// without its parameter list is accepted too). The rule of the module comment.
pub fn matches(filter: &KernelFilter, kernel: &str) -> bool {
    let kernel = &*demangled(kernel);
    match filter {
        KernelFilter::Regex(re) => {
            re.is_match(kernel) || re.is_match(&crate::measured::samples::kernel_key(kernel))
        }
        KernelFilter::Exact(name) => {
            if crate::ncu::command::kernel_name_base(&filter.ncu_arg()) == "function" {
                *name == function_name(kernel)
            } else {
                crate::measured::samples::kernel_key(name) == crate::measured::samples::kernel_key(kernel)
            }
        }
    }
}

/// What makes a kernel name damaged: no name at all, a control or invisible (format) character,
/// or a letter outside ASCII (a Cyrillic `а` looks like a Latin `a`). Compilers write kernel
/// names in ASCII (C++ mangling and demangling); `None` for such a name.
pub fn odd_name(name: &str) -> Option<String> {
    if name.trim().is_empty() {
        return Some("no name".to_owned());
    }
    let invisible = |c: char| {
        c.is_control()
            || matches!(c, '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{115F}' | '\u{1160}' | '\u{180B}'..='\u{180E}'
                | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{206F}' | '\u{FE00}'..='\u{FE0F}' | '\u{FEFF}')
    };
    name.chars()
        .find(|c| invisible(*c) || (!c.is_ascii() && c.is_alphabetic()))
        .map(|c| {
            let kind = if invisible(c) {
                "an invisible or control character"
            } else {
                "a letter outside ASCII"
            };
            format!("{kind} (U+{:04X})", u32::from(c))
        })
}

/// Keep only the series of kernels the filter selects; returns the kernels dropped (sorted, once
/// each).
pub fn retain(samples: &mut SampleSet, filter: &KernelFilter) -> Vec<String> {
    let mut dropped: Vec<String> = Vec::new();
    samples.series.retain(|key, _| {
        // A kernel launched with several configurations is one series per configuration
        // (`KERNEL [grid ... block ...]`); the filter matches the kernel.
        let keep = matches(filter, crate::measured::samples::kernel_of_series(&key.kernel));
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
    fn mangled_names_match_as_live_ncu_matches_them() {
        // Real ncu 2022.3 output with `--print-kernel-base mangled`
        // (tests/fixtures/ncu-import/index.raw-kernel-base-mangled.csv).
        assert_eq!(demangled("_Z5indexPiii"), "index(int*, int, int)");
        assert_eq!(function_name("_Z8rowMajorPKiPiii"), "rowMajor");
        let exact = KernelFilter::Exact("index".to_owned());
        assert!(matches(&exact, "_Z5indexPiii"));
        assert!(!matches(&exact, "_Z8rowMajorPKiPiii"));
        let re = KernelFilter::Regex(regex::Regex::new("^rowMajor").unwrap());
        assert!(matches(&re, "_Z8rowMajorPKiPiii"));
        // A filter written from the symbol selects nothing live, nor in a replay.
        let symbol = KernelFilter::Regex(regex::Regex::new("_Z5index").unwrap());
        assert!(!matches(&symbol, "_Z5indexPiii"));
        // Not a symbol: kept as it is.
        assert_eq!(demangled("_Zebra_kernel"), "_Zebra_kernel");
        assert_eq!(demangled("nvjet_sm90_tst"), "nvjet_sm90_tst");
    }

    #[test]
    fn function_names_as_ncu_matches_them() {
        assert_eq!(
            function_name("void matmul_tiled<32>(const float *, const float *, float *, int)"),
            "matmul_tiled"
        );
        assert_eq!(function_name("void matmul_tiled<32>"), "matmul_tiled");
        assert_eq!(function_name("reduce_sum<256>"), "reduce_sum");
        assert_eq!(function_name("void ns::k<std::pair<int, int>>(int)"), "k");
        assert_eq!(function_name("vector_add"), "vector_add");
        // Real ncu 2025.3 prints (H100 capture of 2026-11-24): the `unnamed>` namespace of a
        // PyTorch kernel once made init write the filter `0>`.
        assert_eq!(
            function_name(
                "void unnamed>::vectorized_layer_norm_kernel<Half, float, 0>(int, T2, const T1 *, const T1 *, const T1 *, T2 *, T2 *, T1 *)"
            ),
            "vectorized_layer_norm_kernel"
        );
        assert_eq!(
            function_name(
                "void Kernel2<cutlass_80_tensorop_bf16_s16816gemm_bf16_128x256_64x3_nn_align2>(Params)"
            ),
            "Kernel2"
        );
        assert_eq!(
            function_name("void at::native::(anonymous namespace)::k<float>(int)"),
            "k"
        );
    }

    #[test]
    fn exact_and_regex_filters() {
        let exact = KernelFilter::Exact("vector_add".into());
        assert!(matches(&exact, "void vector_add(float*, int)"));
        assert!(matches(
            &exact,
            "vector_add(const float *, const float *, float *, int)"
        ));
        assert!(!matches(&exact, "void vector_add2(float*, int)"));
        // A regex matches the demangled name: `void` comes first for a template.
        let re = KernelFilter::Regex(regex::Regex::new("matmul_tiled<").unwrap());
        assert!(matches(&re, "void matmul_tiled<32>(float*)"));
        assert!(!matches(&re, "void matmul_tiled_v2<32>(float*)"));
        let anchored = KernelFilter::Regex(regex::Regex::new("^matmul_tiled").unwrap());
        assert!(!matches(&anchored, "void matmul_tiled<32>(float*)"));
        let ns = KernelFilter::Exact("k".into());
        assert!(matches(&ns, "void ns::k<1>(int)"));
        // The whole demangled name, with or without its parameters.
        let whole = KernelFilter::Exact("void ns::k<1>(int)".into());
        assert!(matches(&whole, "void ns::k<1>(int)"));
        assert!(matches(&whole, "void ns::k<1>"));
        assert!(!matches(&whole, "void ns::k<2>(int)"));
        // A namespace-qualified name is neither the function name nor the whole name.
        assert!(!matches(
            &KernelFilter::Exact("ns::k".into()),
            "void ns::k<1>(int)"
        ));
    }

    #[test]
    fn the_cublas_switch_is_selected_by_one_regex() {
        // Both kernels cuBLAS ran for the same GEMM on the H100 (2026-11-24), as ncu 2025.3
        // printed them with `--print-kernel-base demangled`.
        let re = KernelFilter::Regex(regex::Regex::new("nvjet|gemm|xmma|cutlass").unwrap());
        assert!(matches(&re, "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT"));
        let cutlass = "void Kernel2<cutlass_80_tensorop_bf16_s16816gemm_bf16_128x256_64x3_nn_align2>(Params)";
        assert!(matches(&re, cutlass));
        // Its function name is `Kernel2`: what `--kernel-name-base function` matched, and why
        // the live run once selected nothing.
        assert!(!matches(&re, &function_name(cutlass)));
    }
}
