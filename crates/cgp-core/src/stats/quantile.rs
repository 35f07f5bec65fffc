//! Quantile rows (a tail of a latency distribution: vLLM's p99 TTFT, docs/statistics.md
//! "Quantile rows"): each process's quantile of its own requests is that process's value, and
//! the rows are judged on those values between processes, as every summary row is (the rank
//! test and Hodges-Lehmann interval of `verdict::rank`, or the exact comparison of identical
//! processes). Never a mean test on a tail: a t test of the requests' latencies compares their
//! (log) means, which a change of the tail alone hardly moves.
//!
//! Why per-process quantiles, and not a distribution-free interval of the change of the pooled
//! requests' quantile (the order statistics of all requests of a side): the pooled interval
//! treats every request of every process as independent, and a server's requests are not: a
//! process (a warm-up, a placement, a neighbour) moves all of its requests together, so pooling
//! 3 x 1000 requests claims the precision of 3000 independent ones where the evidence is closer
//! to 3 runs. The process is the unit everywhere else in cgp-gate (`nested`); per-process values
//! keep it so, at the price of needing enough requests per process for a stable tail
//! (docs/statistics.md measures the power: `examples/quantile_power.rs`).
//!
//! The estimator is the linear interpolation of the order statistics (Hyndman and Fan's type 7,
//! numpy's default), the one vLLM computes its `p99_ttft_ms` with, so a quantile cgp-gate takes
//! of a detailed file's requests equals the one vLLM wrote. Pure.

use super::order::{quantile_sorted, sorted_finite};

/// The `p`-quantile (`0 <= p <= 1`) of the finite `values` by linear interpolation (type 7);
/// `None` without a finite value or for `p` outside `[0, 1]`.
pub fn quantile(values: &[f64], p: f64) -> Option<f64> {
    if !(0.0..=1.0).contains(&p) {
        return None;
    }
    quantile_sorted(&sorted_finite(values), p)
}

#[cfg(test)]
mod tests {
    use super::quantile;
    use crate::foundation::threshold::{Direction, Threshold, ThresholdKind};
    use crate::stats::rng::Rng;
    use crate::stats::row::RowVerdict;
    use crate::stats::{Comparison, Config, judge};

    #[test]
    fn quantiles_are_numpys_linear_ones() {
        // numpy.percentile([1, 2, 3, 4, 10], [50, 90, 99]) = 3.0, 7.6, 9.76
        let v = [4.0, 1.0, 10.0, 3.0, 2.0];
        for (p, want) in [(0.5, 3.0), (0.9, 7.6), (0.99, 9.76), (0.0, 1.0), (1.0, 10.0)] {
            assert!((quantile(&v, p).unwrap() - want).abs() < 1e-12, "{p}");
        }
        assert_eq!(quantile(&[], 0.5), None);
        assert_eq!(quantile(&v, 1.5), None);
        assert_eq!(quantile(&[f64::NAN, 2.0], 0.5), Some(2.0));
    }

    /// SYNTHETIC requests of one process: lognormal latencies (sigma 0.25: p99 1.8 x the median,
    /// as the TTFT of the shared real vLLM file, 2247 ms against 1340), a process level of 1 % (a
    /// server's run-to-run drift), and the tail from the 90th percentile up multiplied by up to
    /// `1 + tail` (p99 and above by the whole of it; the median unchanged).
    fn process(rng: &mut Rng, n: usize, tail: f64) -> Vec<f64> {
        let level = (0.01 * rng.normal()).exp();
        (0..n)
            .map(|_| {
                let z = rng.normal();
                let u = statrs::function::erf::erfc(-z / std::f64::consts::SQRT_2) / 2.0;
                let ramp = ((u - 0.90) / 0.09).clamp(0.0, 1.0);
                level * (0.25 * z).exp() * (1.0 + tail * ramp)
            })
            .collect()
    }

    /// How often the p99 row of `trials` runs (10 baseline processes, `candidates` processes,
    /// `n` requests each, a 3 % threshold at check's alpha) is a regression.
    fn regression_rate(trials: u32, n: usize, candidates: usize, tail: f64) -> f64 {
        let threshold = Threshold {
            kind: ThresholdKind::Relative { fraction: 0.03 },
            direction: Direction::Lower,
            min_effect: None,
        };
        let cfg = Config::default();
        let mut rng = Rng::new(0x7131);
        let mut found = 0u32;
        for t in 0..trials {
            let p99 = |rng: &mut Rng, k: usize, tail: f64| -> Vec<f64> {
                (0..k)
                    .map(|_| quantile(&process(rng, n, tail), 0.99).unwrap())
                    .collect()
            };
            let base = p99(&mut rng, 10, 0.0);
            let cand = p99(&mut rng, candidates, tail);
            let row = Comparison {
                key: format!("ttft/p99 {t}"),
                baseline: Some(&base),
                candidate: &cand,
                threshold: &threshold,
                history: &[],
                baseline_runs: &[],
                candidate_runs: &[],
            };
            found += u32::from(judge(&row, &cfg).ruling.verdict == RowVerdict::Regression);
        }
        f64::from(found) / f64::from(trials)
    }

    /// The quantile row finds a planted +10 % p99 at least 90 % of the time (10 runs a side of
    /// 2000 requests; at `vllm bench serve`'s default 1000, about 87 %) and holds alpha on A/A.
    /// SYNTHETIC data; `examples/quantile_power.rs` gives the whole curve, heavier tails too.
    #[test]
    fn a_planted_ten_percent_p99_is_found_and_a_a_holds_alpha() {
        let power = regression_rate(40, 2000, 10, 0.10);
        assert!(power >= 0.9, "power {power}");
        let false_alarms = regression_rate(40, 2000, 10, 0.0);
        assert!(false_alarms <= 0.05, "A/A regressions {false_alarms}");
    }
}
