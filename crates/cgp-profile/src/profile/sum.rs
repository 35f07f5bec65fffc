//! Operation rows (`kernels: sum`, docs/spec.md "Operation rows"): the selected kernels of one
//! repetition summed per iteration into one series per metric, so that a GEMM is gated as one
//! operation whichever kernel cuBLAS picks for it.
//!
//! An iteration is the i-th launch of each kernel: with every kernel launched equally often
//! (`A B A B A B`, or one kernel three times), value i is the sum of their i-th launches. When the
//! counts differ (a kernel that runs once per call and one that runs per tile), the iterations
//! cannot be told apart: the repetition gives one value, the total over the most-launched
//! kernel's count (the mean per iteration).
//!
//! The kernels behind the row are the series' `configs`: `KERNEL grid (..) block (..)` (or the
//! kernel alone where the profiler did not say), so the baseline keeps them and a change of
//! kernel set is a configuration change of the row (`check` names the kernels).

use std::collections::BTreeMap;

pub use crate::measured::samples::kernels_of;
use crate::measured::samples::{SampleSet, Series, SeriesKey, kernel_of_series};
use crate::spec::{KernelMode, SUM_KERNEL, Target};

/// The samples of one repetition of `target` as operation rows; unchanged for `kernels: each`.
pub fn apply(target: &Target, samples: SampleSet) -> SampleSet {
    if target.kernels != KernelMode::Sum {
        return samples;
    }
    let mut groups: BTreeMap<(String, String, String), Vec<Series>> = BTreeMap::new();
    for (k, s) in samples.series {
        groups
            .entry((k.target.clone(), k.size.clone(), k.metric.clone()))
            .or_default()
            .push(s);
    }
    let mut out = SampleSet::default();
    for ((target, size, metric), series) in groups {
        let key = SeriesKey {
            target,
            size,
            kernel: SUM_KERNEL.to_owned(),
            metric,
        };
        let n = series.iter().map(|s| s.samples.len()).max().unwrap_or(0);
        if n == 0 {
            continue;
        }
        let rep = series
            .iter()
            .find_map(|s| s.samples.first().map(|x| x.rep))
            .unwrap_or(0);
        let unit = series[0].unit.clone();
        let values: Vec<f64> = if series.iter().all(|s| s.samples.len() == n) {
            (0..n)
                .map(|i| series.iter().map(|s| s.samples[i].value).sum())
                .collect()
        } else {
            vec![
                series
                    .iter()
                    .flat_map(|s| &s.samples)
                    .map(|x| x.value)
                    .sum::<f64>()
                    / n as f64,
            ]
        };
        for v in values {
            out.push(&key, &unit, v, rep);
        }
        for s in &series {
            let kernel = kernel_of_series(&s.key.kernel);
            if s.configs.is_empty() {
                out.note_config(&key, kernel);
            }
            for c in &s.configs {
                out.note_config(&key, &format!("{kernel} {c}"));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(kernels: &str) -> crate::spec::Spec {
        crate::spec::load_str(
            &format!(
                "version: 1\ntargets:\n  - name: gemm\n    command: [./a]\n    kernel: regex:gemm\n    kernels: {kernels}\n    metrics:\n      gpu__time_duration.sum: \"3%\"\n"
            ),
            std::path::Path::new("cgp-gate.yaml"),
        )
        .unwrap()
    }

    fn set(series: &[(&str, &[f64], &str)]) -> SampleSet {
        let mut s = SampleSet::default();
        for (kernel, values, config) in series {
            let key = SeriesKey {
                target: "gemm".into(),
                size: "default".into(),
                kernel: (*kernel).into(),
                metric: "gpu__time_duration.sum".into(),
            };
            for v in *values {
                s.push(&key, "ns", *v, 2);
            }
            s.note_config(&key, config);
        }
        s
    }

    #[test]
    fn kernels_of_one_iteration_are_summed() {
        let spec = spec("sum");
        let t = &spec.targets[0];
        let out = apply(
            t,
            set(&[
                ("gemm_a", &[10.0, 11.0, 12.0], "grid (1, 1, 1) block (32, 1, 1)"),
                (
                    "splitk_reduce_gemm",
                    &[1.0, 1.0, 2.0],
                    "grid (2, 1, 1) block (32, 1, 1)",
                ),
            ]),
        );
        assert_eq!(out.series.len(), 1);
        let s = out.series.values().next().unwrap();
        assert_eq!(s.key.kernel, SUM_KERNEL);
        assert_eq!(s.values(), [11.0, 12.0, 14.0]);
        assert_eq!(s.reps(), [2, 2, 2]);
        assert_eq!(kernels_of(&s.configs), ["gemm_a", "splitk_reduce_gemm"]);
    }

    #[test]
    fn unequal_launch_counts_give_the_mean_per_iteration() {
        let spec = spec("sum");
        let out = apply(
            &spec.targets[0],
            set(&[("gemm_a", &[10.0, 10.0], "c"), ("gemm_b", &[4.0], "c")]),
        );
        assert_eq!(out.series.values().next().unwrap().values(), [12.0]);
    }

    #[test]
    fn each_leaves_the_kernels_apart() {
        let spec = spec("each");
        let out = apply(
            &spec.targets[0],
            set(&[("gemm_a", &[1.0], "c"), ("gemm_b", &[2.0], "c")]),
        );
        assert_eq!(out.series.len(), 2);
    }
}
