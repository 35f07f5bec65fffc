//! Kernel categories: ordered regex -> category, first match wins, `misc` otherwise.
//!
//! The user's rules (`crate::spec::CategoryRules`, from `--categories FILE` or a target's
//! `categories:`) are tried first, then [`DEFAULT_RULES`] unless the user's file says
//! `defaults: false`. Each regex is searched anywhere in the demangled name, which for nsys
//! output may carry an NVTX prefix (`range/void kernel<...>(...)`).

use regex::Regex;

use crate::spec::CategoryRules;

/// The category of names no rule matches.
pub const MISC: &str = "misc";

pub use crate::spec::DEFAULT_CATEGORY_RULES as DEFAULT_RULES;

/// A compiled rule set.
#[derive(Debug, Clone)]
pub struct Categories {
    rules: Vec<(Regex, String)>,
    /// Where the user's rules came from, for reports.
    pub origin: Option<String>,
}

impl Default for Categories {
    fn default() -> Self {
        Self::new(None)
    }
}

impl Categories {
    /// The user's rules (if any), then the defaults unless they replace them.
    pub fn new(user: Option<&CategoryRules>) -> Self {
        let mut rules: Vec<(Regex, String)> = Vec::new();
        if let Some(u) = user {
            rules.extend(u.rules.iter().map(|r| (r.pattern.clone(), r.category.clone())));
        }
        if user.is_none_or(|u| u.defaults) {
            rules.extend(DEFAULT_RULES.iter().map(|(p, c)| {
                #[allow(
                    clippy::expect_used,
                    reason = "the defaults are constants; a test compiles every one"
                )]
                let re = Regex::new(p).expect("default category regex");
                (re, (*c).to_owned())
            }));
        }
        Self {
            rules,
            origin: user.map(|u| u.origin.clone()),
        }
    }

    /// The first matching rule's category, or [`MISC`].
    pub fn classify(&self, name: &str) -> &str {
        self.rules
            .iter()
            .find(|(re, _)| re.is_match(name))
            .map_or(MISC, |(_, c)| c.as_str())
    }

    /// Every category these rules can give, in rule order, then `misc`.
    pub fn names(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for (_, c) in &self.rules {
            if !out.contains(&c.as_str()) {
                out.push(c);
            }
        }
        if !out.contains(&MISC) {
            out.push(MISC);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn every_default_rule_compiles() {
        assert_eq!(Categories::default().rules.len(), DEFAULT_RULES.len());
    }

    #[test]
    fn defaults_on_real_names() {
        let c = Categories::default();
        let cases = [
            ("[CUDA memcpy Host-to-Device]", "memops"),
            ("[CUDA memset]", "memops"),
            (
                "void cutlass::Kernel2<cutlass_80_tensorop_f16_s16816gemm_relu_f16_64x64_32x6_tn_align8>(T1::Params)",
                "gemm",
            ),
            (
                "ABT_view (forced)/void cutlass::Kernel2<cutlass_80_tensorop_i16832gemm_s8_128x64_128x3_tn_align4>(T1::Params)",
                "gemm",
            ),
            ("nvjet_sm90_tst_128x256_64x4_1x2_h_bz_coopA_NTT", "gemm"),
            ("triton_poi_fused_mul_silu_slice_2", "triton"),
            (
                "void at::native::vectorized_elementwise_kernel<(int)4, at::native::FillFunctor<int>, std::array<char *, (unsigned long)1>>(int, T2, T3)",
                "elementwise",
            ),
            (
                "void flash::flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<128>>(Flash_fwd_params)",
                "attn",
            ),
            (
                "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096>)",
                "nccl",
            ),
            (
                "void vllm::rms_norm_kernel<c10::BFloat16>(T1 *, const T1 *, const T1 *, float, int, int)",
                "norm",
            ),
            (
                "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float>>(T3)",
                "reduce",
            ),
            (
                "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float>(T2 *, const T1 *, int)",
                "softmax",
            ),
            ("void tensorrt_llm::kernels::moeTopK<float>(const float *)", "moe"),
            ("tensorrt_llm::kernels::delayStreamKernel(long long)", "misc"),
        ];
        for (name, want) in cases {
            assert_eq!(c.classify(name), want, "{name}");
        }
    }

    #[test]
    fn user_rules_come_first_or_replace() {
        let user = crate::spec::categories_from_str("\"cutlass\": mine\n", Path::new("c.yaml")).unwrap();
        let c = Categories::new(Some(&user));
        assert_eq!(c.classify("void cutlass::Kernel2<x>"), "mine");
        assert_eq!(c.classify("nvjet_sm90"), "gemm");
        let user = crate::spec::categories_from_str(
            "defaults: false\nrules: {cutlass: mine}\n",
            Path::new("c.yaml"),
        )
        .unwrap();
        let c = Categories::new(Some(&user));
        assert_eq!(c.classify("nvjet_sm90"), "misc");
        assert_eq!(c.names(), ["mine", "misc"]);
    }
}
