//! Kernel categories for Nsight Systems workloads: an ordered mapping of regex to category.
//!
//! The form is the seed tool's (vLLM's gputrc2graph): `{"regex": "category", ...}` in YAML or
//! JSON (JSON is YAML, and the one parser keeps key order and positions). Two shapes:
//!
//! ```yaml
//! # 1. A plain mapping: these rules are tried first, then cgp-gate's defaults.
//! "my_fused_gemm": gemm
//! "rotary|rope": rope
//! ```
//!
//! ```yaml
//! # 2. With options: `defaults: false` replaces the defaults instead of extending them.
//! defaults: false
//! rules:
//!   "gemm|nvjet": gemm
//! ```

use std::path::Path;

use super::decode::{Ctx, Result, describe};
use super::error::SpecError;
use super::yaml::{self, Kind, Node, Typed};

/// cgp-gate's default rules for common CUDA stacks, in the order they are tried. Order matters:
/// attention and MoE kernels are often GEMMs underneath (CUTLASS fmha, grouped GEMMs), so they
/// come before the GEMM rule; memory operations and collectives come first of all.
pub const DEFAULT_CATEGORY_RULES: &[(&str, &str)] = &[
    // nsys's own names for copies and fills (`[CUDA memcpy Host-to-Device]`, `[CUDA memset]`).
    (r"^\[CUDA (memcpy|memset|Unified Memory)", "memops"),
    (
        r"(?i)nccl|all_?reduce|all_?gather|reduce_?scatter|cross_device_reduce|alltoall|all_to_all",
        "nccl",
    ),
    (
        r"(?i)flash_?attn|flash_fwd|flash_bwd|flash::|fmha|attention|_attn|attn_|paged_?attention|paged_?decode|pagedkv|prefill|mergestates|xformers|\bmha|mla_|sdpa|reshape_and_cache",
        "attn",
    ),
    (
        r"(?i)moe|expert|topk_?gating|top_k_gating|GroupProblemShape|grouped_?gemm|count_and_sort|align_block_size",
        "moe",
    ),
    (
        r"(?i)gemm|nvjet|cublas|cutlass|xmma|s16816|s1688|h16816|i16832|hmma|wgmma|matmul|splitk|gemv",
        "gemm",
    ),
    (
        r"(?i)rms_?norm|layer_?norm|group_?norm|batch_?norm|_norm_|norm_kernel",
        "norm",
    ),
    (r"(?i)softmax", "softmax"),
    (r"(?i)reduce|reduction|argmax|argmin|cumsum|\bscan", "reduce"),
    (r"(?i)triton", "triton"),
    (
        r"(?i)elementwise|vectorized_|unrolled_|fill|copy|silu|gelu|act_and_mul|activation|cast|index_|cat_|where",
        "elementwise",
    ),
];

/// What nsys metric names are, for messages.
pub const NSYS_METRICS_HELP: &str = "nsys targets take `gpu_time`, `non_gpu_time`, `category:<name>` and `kernel:<regex>` (GPU time in ns), and `instances:category:<name>` / `instances:kernel:<regex>` (counts; added with an `exact` threshold for every category and kernel metric unless listed)";

// The metric names of nsys targets are spelled and read here only: everything else asks
// `parse_nsys_metric` (the typed `NsysMetric`), `category_metric` / `category_of` (a category's
// GPU time) or `instances_of` (the count that goes with a time).
/// Prefix of the instance-count metrics.
const INSTANCES_PREFIX: &str = "instances:";
/// The prefix of a category's GPU time (`category:gemm`).
const CATEGORY_PREFIX: &str = "category:";
/// The prefix of the GPU time of the kernels a regex matches (`kernel:gemm.*`).
const KERNEL_PREFIX: &str = "kernel:";

/// The metric of category `name`'s GPU time: `category:<name>`.
pub fn category_metric(name: &str) -> String {
    format!("{CATEGORY_PREFIX}{name}")
}

/// The category whose GPU time `metric` is (`category:gemm` -> `gemm`); `None` for any other
/// metric, its instance count included.
pub fn category_of(metric: &str) -> Option<&str> {
    metric.strip_prefix(CATEGORY_PREFIX)
}

/// The instance count that goes with the GPU time of a category or of the kernels a regex
/// matches (`category:gemm` -> `instances:category:gemm`); `None` for any other metric.
pub fn instances_of(metric: &str) -> Option<String> {
    (metric.starts_with(CATEGORY_PREFIX) || metric.starts_with(KERNEL_PREFIX))
        .then(|| format!("{INSTANCES_PREFIX}{metric}"))
}

/// One metric of an `nsys` target.
#[derive(Debug, Clone)]
pub enum NsysMetric {
    /// Union of the busy intervals (ns).
    GpuTime,
    /// Wall time minus GPU time (ns).
    NonGpuTime,
    /// Sum of the durations of a category's rows (ns).
    Category(String),
    /// Sum of the durations of the rows whose name matches (ns).
    Kernel(regex::Regex),
    /// Rows of a category.
    CategoryInstances(String),
    /// Rows whose name matches.
    KernelInstances(regex::Regex),
}

/// Whether a metric name has an nsys form (ncu names never contain `:` and always `__`).
pub fn is_nsys_metric_name(name: &str) -> bool {
    matches!(name, "gpu_time" | "non_gpu_time")
        || name.starts_with(CATEGORY_PREFIX)
        || name.starts_with(KERNEL_PREFIX)
        || name.starts_with(INSTANCES_PREFIX)
}

/// Parse an nsys metric name.
///
/// # Errors
/// A message and a help line.
pub fn parse_nsys_metric(name: &str) -> std::result::Result<NsysMetric, (String, String)> {
    let regex = |r: &str| {
        regex::RegexBuilder::new(r)
            .size_limit(1 << 20)
            .build()
            .map_err(|e| {
                (
                    format!("invalid regex in `{name}`: {}", first_line(&e.to_string())),
                    "Rust regex syntax, searched anywhere in the demangled kernel name".to_owned(),
                )
            })
    };
    let (counts, rest) = match name.strip_prefix(INSTANCES_PREFIX) {
        Some(r) => (true, r),
        None => (false, name),
    };
    let m = match rest {
        "gpu_time" if !counts => NsysMetric::GpuTime,
        "non_gpu_time" if !counts => NsysMetric::NonGpuTime,
        _ => {
            if let Some(c) = category_of(rest).filter(|c| !c.trim().is_empty()) {
                if counts {
                    NsysMetric::CategoryInstances(c.to_owned())
                } else {
                    NsysMetric::Category(c.to_owned())
                }
            } else if let Some(r) = rest.strip_prefix(KERNEL_PREFIX).filter(|r| !r.is_empty()) {
                if counts {
                    NsysMetric::KernelInstances(regex(r)?)
                } else {
                    NsysMetric::Kernel(regex(r)?)
                }
            } else {
                return Err((
                    format!("`{name}` is not a metric of an nsys target"),
                    NSYS_METRICS_HELP.to_owned(),
                ));
            }
        }
    };
    Ok(m)
}

/// Every category a rule set can give (user rules, then the defaults unless replaced), then `misc`.
pub fn category_names(user: Option<&CategoryRules>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let defaults = DEFAULT_CATEGORY_RULES.iter().map(|(_, c)| (*c).to_owned());
    let own = user
        .map(|u| u.rules.iter().map(|r| r.category.clone()).collect::<Vec<_>>())
        .unwrap_or_default();
    let all: Vec<String> = if user.is_none_or(|u| u.defaults) {
        own.into_iter().chain(defaults).collect()
    } else {
        own
    };
    for c in all.into_iter().chain(std::iter::once("misc".to_owned())) {
        if !out.contains(&c) {
            out.push(c);
        }
    }
    out
}

/// Files larger than this are refused (a rules file is a few KB).
const MAX_FILE_BYTES: u64 = 4 << 20;

/// One rule: a regex searched anywhere in the demangled name, and its category.
#[derive(Debug, Clone)]
pub struct CategoryRule {
    pub pattern: regex::Regex,
    pub category: String,
}

/// The user's rules, in the order written, and whether cgp-gate's defaults follow them.
#[derive(Debug, Clone)]
pub struct CategoryRules {
    pub rules: Vec<CategoryRule>,
    /// True: the defaults are tried after these rules. False: these rules replace them.
    pub defaults: bool,
    /// Where they were written (a file, or `spec.yaml` for an inline `categories:`).
    pub origin: String,
}

impl PartialEq for CategoryRules {
    fn eq(&self, other: &Self) -> bool {
        self.defaults == other.defaults
            && self.rules.len() == other.rules.len()
            && self
                .rules
                .iter()
                .zip(&other.rules)
                .all(|(a, b)| a.pattern.as_str() == b.pattern.as_str() && a.category == b.category)
    }
}

/// Read a categories file (YAML or JSON).
///
/// # Errors
/// A [`SpecError`] naming the file, line and column.
pub fn load_categories(path: &Path) -> std::result::Result<CategoryRules, SpecError> {
    let meta = std::fs::metadata(path).map_err(|e| {
        SpecError::new(path, format!("cannot read the categories file: {e}"))
            .help("give a YAML or JSON mapping of regex to category")
    })?;
    if meta.len() > MAX_FILE_BYTES {
        return Err(SpecError::new(
            path,
            format!(
                "the categories file is {} bytes; more than {MAX_FILE_BYTES} is refused",
                meta.len()
            ),
        ));
    }
    let bytes = std::fs::read(path)
        .map_err(|e| SpecError::new(path, format!("cannot read the categories file: {e}")))?;
    let text = String::from_utf8(bytes)
        .map_err(|e| SpecError::new(path, format!("the categories file is not utf-8 text: {e}")))?;
    categories_from_str(&text, path)
}

/// Parse categories text as if read from `path`.
///
/// # Errors
/// As [`load_categories`].
pub fn categories_from_str(text: &str, path: &Path) -> std::result::Result<CategoryRules, SpecError> {
    let ctx = Ctx { path, deferred: None };
    let root = yaml::parse(text)
        .map_err(|e| ctx.err_at(e.mark, e.message))?
        .ok_or_else(|| {
            SpecError::new(path, "the categories file is empty")
                .help("write a mapping of regex to category, e.g. `\"gemm|nvjet\": gemm`")
        })?;
    decode(&ctx, &root, &path.display().to_string())
}

/// Decode a categories node (a file's root, or a spec's `categories:` mapping).
pub(crate) fn decode(ctx: &Ctx<'_>, node: &Node, origin: &str) -> Result<CategoryRules> {
    let Kind::Map(entries) = &node.kind else {
        return Err(ctx
            .err(
                node,
                format!(
                    "categories must be a mapping of regex to category, found {}",
                    describe(node)
                ),
            )
            .help("e.g. `\"gemm|nvjet\": gemm`; JSON objects work too"));
    };
    let is_key = |k: &Node, name: &str| matches!(&k.kind, Kind::Scalar(s) if s.text == name);
    let rules_node = entries
        .iter()
        .find(|(k, v)| is_key(k, "rules") && matches!(v.kind, Kind::Map(_)));
    let (rules_node, defaults) = if let Some((_, rules)) = rules_node {
        let mut defaults = true;
        for (k, v) in entries {
            if is_key(k, "rules") {
                continue;
            }
            if is_key(k, "defaults") {
                defaults = match &v.kind {
                    Kind::Scalar(s) => match s.typed() {
                        Typed::Bool(b) => b,
                        _ => {
                            return Err(ctx.err(
                                v,
                                format!("`defaults` must be true or false, found {}", describe(v)),
                            ));
                        }
                    },
                    _ => {
                        return Err(ctx.err(
                            v,
                            format!("`defaults` must be true or false, found {}", describe(v)),
                        ));
                    }
                };
                continue;
            }
            return Err(ctx
                .err(
                    k,
                    "with a `rules:` mapping, the only other key allowed is `defaults:`",
                )
                .help("put every regex under `rules:`"));
        }
        (rules, defaults)
    } else {
        (node, true)
    };
    let pairs = ctx.entries(rules_node, "the categories")?;
    let mut rules = Vec::with_capacity(pairs.len());
    for (key, k, v) in pairs {
        let category = ctx.non_empty_text(v, &format!("the category of `{key}`"))?;
        if !matches!(&v.kind, Kind::Scalar(_)) {
            return Err(ctx.err(v, format!("the category of `{key}` must be a name")));
        }
        let pattern = regex::RegexBuilder::new(key)
            .size_limit(1 << 20)
            .build()
            .map_err(|e| {
                ctx.err(
                    k,
                    format!("invalid regex `{key}`: {}", first_line(&e.to_string())),
                )
                .help("Rust regex syntax; it is searched anywhere in the demangled kernel name")
            })?;
        rules.push(CategoryRule {
            pattern,
            category: category.trim().to_owned(),
        });
    }
    Ok(CategoryRules {
        rules,
        defaults,
        origin: origin.to_owned(),
    })
}

fn first_line(s: &str) -> String {
    s.lines()
        .rfind(|l| !l.trim().is_empty())
        .unwrap_or(s)
        .trim()
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> std::result::Result<CategoryRules, SpecError> {
        categories_from_str(text, Path::new("cats.yaml"))
    }

    #[test]
    fn json_keeps_key_order() {
        let r = parse(r#"{"zeta": "b", "alpha": "a", "mid": "b"}"#).unwrap();
        let order: Vec<&str> = r.rules.iter().map(|x| x.pattern.as_str()).collect();
        assert_eq!(order, ["zeta", "alpha", "mid"]);
        assert!(r.defaults);
    }

    #[test]
    fn rules_form_can_drop_the_defaults() {
        let r = parse("defaults: false\nrules:\n  gemm: gemm\n").unwrap();
        assert!(!r.defaults);
        assert_eq!(r.rules.len(), 1);
    }

    #[test]
    fn errors_have_positions() {
        let e = parse("ok: a\n\"(unclosed\": b\n").unwrap_err();
        assert_eq!((e.line, e.column), (Some(2), Some(1)));
        assert!(e.message.contains("invalid regex `(unclosed`"), "{e}");
        let e = parse("- a\n- b\n").unwrap_err();
        assert!(e.message.contains("must be a mapping"), "{e}");
        let e = parse("a: b\na: c\n").unwrap_err();
        assert!(e.message.contains("duplicate key"), "{e}");
        let e = parse("rules: {a: b}\nextra: 1\n").unwrap_err();
        assert!(e.message.contains("only other key"), "{e}");
        let e = parse("a: \"\"\n").unwrap_err();
        assert!(e.message.contains("is empty"), "{e}");
    }
}
