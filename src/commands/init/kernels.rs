//! The kernels a capture saw: their launches, times and registers, which of them init proposes to
//! gate, and the `kernel:` filter that selects exactly those.

use super::command::one_line;
use super::*;

/// One kernel (by name without its parameter list) as the capture saw it.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelSeen {
    /// The demangled name without the parameter list, as reports key it (`void gemm<128>`).
    pub name: String,
    /// The bare function name ncu's `-k` matches (`gemm`).
    pub function: String,
    pub launches: usize,
    /// Durations of the launches that reported one, in the unit below.
    pub times: Vec<f64>,
    pub time_unit: String,
    /// Registers per thread of the first launch that reported it.
    pub registers: Option<f64>,
}

impl KernelSeen {
    /// The median duration, when any launch reported one.
    pub(crate) fn median_time(&self) -> Option<f64> {
        let mut t = self.times.clone();
        t.sort_by(f64::total_cmp);
        crate::stats::median(&t)
    }
}

/// The kernels of a capture, in order of first launch.
pub(crate) fn kernels_seen(parsed: &ParsedOutput) -> Vec<KernelSeen> {
    let mut out: Vec<KernelSeen> = Vec::new();
    for l in &parsed.launches {
        let name = kernel_key(&one_line(&crate::profile::filter::demangled(&l.kernel)));
        let i = if let Some(i) = out.iter().position(|k| k.name == name) {
            i
        } else {
            out.push(KernelSeen {
                function: function_name(&l.kernel),
                name,
                launches: 0,
                times: Vec::new(),
                time_unit: String::new(),
                registers: None,
            });
            out.len() - 1
        };
        let k = &mut out[i];
        k.launches += 1;
        if let Some((t, unit)) = number(l, TIME_KEYS) {
            if k.times.is_empty() {
                unit.clone_into(&mut k.time_unit);
            }
            if unit == k.time_unit {
                k.times.push(t);
            }
        }
        if k.registers.is_none() {
            k.registers = number(l, REGISTER_KEYS).map(|(r, _)| r);
        }
    }
    out
}

/// The first of `keys` that the launch reports as a number, with its unit.
pub(super) fn number<'l>(l: &'l Launch, keys: &[&str]) -> Option<(f64, &'l str)> {
    keys.iter().find_map(|k| match l.metrics.get(*k) {
        Some(m) => match m.value {
            MetricValue::Number(v) if v.is_finite() => Some((v, m.unit.as_str())),
            _ => None,
        },
        None => None,
    })
}

/// The bare function name ncu's `--kernel-name-base function` matches: no return type, no
/// namespace or class, no template arguments, no parameters (`profile::filter::function_name`,
/// the rule a replay applies too). `void ns::gemm<128, float>(float const*, int)` -> `gemm`.
pub fn function_name(demangled: &str) -> String {
    crate::profile::filter::function_name(demangled)
}

/// Kernels that set up a program's inputs rather than do its work: random numbers, fills,
/// copies. Gated only when nothing else runs.
pub(super) fn is_setup(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    [
        "distribution",
        "philox",
        "curand",
        "random",
        "normal_kernel",
        "uniform_kernel",
        "fillfunctor",
        "fill_kernel",
        "memset",
        "memcpy",
        "copy_kernel",
        "copy_device",
        "arange",
        "zero_kernel",
    ]
    .iter()
    .any(|w| lower.contains(w))
}

/// Kernels under this share of the capture's GPU time are listed, not gated.
pub(super) const MIN_SHARE: f64 = 0.01;

impl KernelSeen {
    /// The kernel's GPU time in the capture (sum of its launches), when measured.
    pub(super) fn total_time(&self) -> Option<f64> {
        (!self.times.is_empty()).then(|| self.times.iter().sum())
    }
}

/// Which kernels a spec gates: each kernel's share of the capture's GPU time, and whether it is
/// proposed (not setup, at least [`MIN_SHARE`]). Nothing left: every non-setup kernel; still
/// nothing: every kernel.
pub(crate) fn proposal(kernels: &[KernelSeen]) -> Vec<(Option<f64>, bool)> {
    let units: Vec<&str> = kernels
        .iter()
        .filter(|k| !k.times.is_empty())
        .map(|k| k.time_unit.as_str())
        .collect();
    let one_unit = units.windows(2).all(|w| w[0] == w[1]);
    let total: f64 = kernels.iter().filter_map(KernelSeen::total_time).sum();
    let share = |k: &KernelSeen| {
        (one_unit && total > 0.0 && kernels.iter().all(|k| !k.times.is_empty()))
            .then(|| k.total_time().unwrap_or(0.0) / total)
    };
    let mut out: Vec<(Option<f64>, bool)> = kernels
        .iter()
        .map(|k| {
            (
                share(k),
                !is_setup(&k.name) && share(k).is_none_or(|s| s >= MIN_SHARE),
            )
        })
        .collect();
    if !out.iter().any(|(_, g)| *g) {
        for (o, k) in out.iter_mut().zip(kernels) {
            o.1 = !is_setup(&k.name);
        }
    }
    if !out.iter().any(|(_, g)| *g) {
        for o in &mut out {
            o.1 = true;
        }
    }
    out
}

/// Whether a `kernel:` value selects exactly the kernels marked `true` among `names` (the
/// capture's names), by the rule live ncu and replay share.
pub(super) fn selects_exactly(filter: &str, names: &[(&str, bool)]) -> bool {
    let f = match filter.strip_prefix("regex:") {
        Some(re) => match regex::Regex::new(re) {
            Ok(re) => crate::spec::KernelFilter::Regex(re),
            Err(_) => return false,
        },
        None => crate::spec::KernelFilter::Exact(filter.to_owned()),
    };
    names
        .iter()
        .all(|(n, want)| crate::profile::filter::matches(&f, n) == *want)
}

/// A plain identifier: what an exact `kernel:` may be without being a whole demangled name.
pub(super) fn is_identifier(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The spec's `kernel:` value that selects exactly the `wanted` kernels (by index) among those
/// seen, checked with the matching rule itself (`profile::filter`): the function name when one
/// kernel (or all instantiations of one function) is wanted, else a `regex:` alternation of
/// function names (a whole escaped name where a function name would select too much).
/// `None` when only NVTX ranges were seen (ncu names a range result `range`, and `-k` does not
/// select ranges), or when no filter is needed (every kernel wanted).
pub(crate) fn kernel_filter_for(kernels: &[KernelSeen], wanted: &[bool]) -> Option<String> {
    if kernels.iter().all(|k| k.name == "range") {
        return None;
    }
    let names: Vec<(&str, bool)> = kernels
        .iter()
        .zip(wanted)
        .map(|(k, w)| (k.name.as_str(), *w))
        .collect();
    let mut functions: Vec<&str> = Vec::new();
    for (k, w) in kernels.iter().zip(wanted) {
        if *w && !functions.contains(&k.function.as_str()) {
            functions.push(&k.function);
        }
    }
    if let [one] = functions.as_slice()
        && is_identifier(one)
        && selects_exactly(one, &names)
    {
        return Some((*one).to_owned());
    }
    // One alternative per wanted kernel: its function name where that selects no unwanted
    // kernel, else its whole name (parameters dropped).
    let mut alts: Vec<String> = Vec::new();
    for (k, w) in kernels.iter().zip(wanted) {
        if !*w {
            continue;
        }
        let by_function = regex::escape(&k.function);
        let alt = if is_identifier(&k.function) && selects_only_wanted(&by_function, &names) {
            by_function
        } else {
            regex::escape(&k.name)
        };
        if !alts.contains(&alt) {
            alts.push(alt);
        }
    }
    let filter = format!("regex:{}", alts.join("|"));
    if selects_exactly(&filter, &names) {
        return Some(filter);
    }
    // Whole names, anchored: the most specific filter there is.
    let whole: Vec<String> = kernels
        .iter()
        .zip(wanted)
        .filter(|(_, w)| **w)
        .map(|(k, _)| regex::escape(&k.name))
        .collect();
    Some(format!("regex:^(?:{})", whole.join("|")))
}

pub(super) fn selects_only_wanted(re: &str, names: &[(&str, bool)]) -> bool {
    regex::Regex::new(re).is_ok_and(|r| {
        names.iter().all(|(n, want)| {
            *want || !crate::profile::filter::matches(&crate::spec::KernelFilter::Regex(r.clone()), n)
        })
    })
}

/// The spec's `kernel:` value that selects every kernel seen ([`kernel_filter_for`]).
pub fn kernel_filter(kernels: &[KernelSeen]) -> Option<String> {
    kernel_filter_for(kernels, &vec![true; kernels.len()])
}

/// A library that picks its own kernels by shape, GPU and library version: the kernel a capture
/// saw is one choice among many, and an exact name stops matching when the library switches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Library {
    /// cuBLAS / cuBLASLt and CUTLASS GEMMs (`nvjet_sm90_*`, `sm90_xmma_gemm_*`,
    /// `Kernel2<cutlass_80_*>`, `ampere_sgemm_*`).
    Gemm,
    Cudnn,
    Nccl,
    /// PyTorch's own kernels (`at::native::...`): instantiations vary by dtype and alignment.
    Aten,
}

impl Library {
    pub(crate) fn label(self) -> &'static str {
        match self {
            Self::Gemm => "cuBLAS/CUTLASS",
            Self::Cudnn => "cuDNN",
            Self::Nccl => "NCCL",
            Self::Aten => "PyTorch (ATen)",
        }
    }

    /// A regex over the library's kernels for this kind of work, whichever it picks (docs/spec.md's
    /// table of filters); `None` where no such family is known.
    pub(crate) fn family(self) -> Option<&'static str> {
        match self {
            Self::Gemm => Some("nvjet|gemm|xmma|cutlass"),
            Self::Nccl => Some("nccl"),
            Self::Cudnn | Self::Aten => None,
        }
    }
}

/// The library a kernel (its demangled name) comes from, by the names those libraries give.
pub(crate) fn library_of(name: &str) -> Option<Library> {
    static ARCH_GEMM: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"^(void )?(maxwell|volta|turing|ampere|ada|hopper|sm\d+)_\w*(gemm|gemv)")
            .expect("the GEMM pattern is a valid regex")
    });
    let lower = name.to_ascii_lowercase();
    let has = |words: &[&str]| words.iter().any(|w| lower.contains(w));
    if lower.starts_with("nvjet_") || has(&["cutlass", "cublas", "xmma_gemm"]) || ARCH_GEMM.is_match(&lower) {
        Some(Library::Gemm)
    } else if has(&[
        "cudnn",
        "implicit_convolve",
        "winograd",
        "xmma_fprop",
        "xmma_dgrad",
        "xmma_wgrad",
    ]) {
        Some(Library::Cudnn)
    } else if lower.contains("nccl") {
        Some(Library::Nccl)
    } else if has(&[
        "at::native",
        "at_cuda_detail",
        "elementwise_kernel<",
        "layer_norm_kernel",
        "softmax_warp",
    ]) {
        Some(Library::Aten)
    } else {
        None
    }
}

/// The `kernel:` value for gated library kernels: the library's family regex in place of the
/// exact names the capture saw, when it still selects exactly the gated kernels of the capture;
/// with `true` when every gated kernel is of that one library (the draft then gates the
/// operation, `kernels: sum`). `None` when no gated kernel has a family regex, or the family
/// would select a kernel that is not gated.
pub(crate) fn library_filter(kernels: &[KernelSeen], wanted: &[bool]) -> Option<(String, bool)> {
    let names: Vec<(&str, bool)> = kernels
        .iter()
        .zip(wanted)
        .map(|(k, w)| (k.name.as_str(), *w))
        .collect();
    let gated: Vec<&KernelSeen> = kernels
        .iter()
        .zip(wanted)
        .filter(|(_, w)| **w)
        .map(|(k, _)| k)
        .collect();
    let libs: Vec<Option<Library>> = gated.iter().map(|k| library_of(&k.name)).collect();
    if !libs.iter().any(|l| l.and_then(Library::family).is_some()) {
        return None;
    }
    let mut alts: Vec<String> = Vec::new();
    for (k, lib) in gated.iter().zip(&libs) {
        let alt = match lib.and_then(Library::family) {
            Some(f) => f.to_owned(),
            None => {
                let by_function = regex::escape(&k.function);
                if is_identifier(&k.function) && selects_only_wanted(&by_function, &names) {
                    by_function
                } else {
                    regex::escape(&k.name)
                }
            }
        };
        if !alts.contains(&alt) {
            alts.push(alt);
        }
    }
    let filter = format!("regex:{}", alts.join("|"));
    let one_library = libs.iter().all(|l| l.is_some() && *l == libs[0]);
    selects_exactly(&filter, &names).then_some((filter, one_library))
}
