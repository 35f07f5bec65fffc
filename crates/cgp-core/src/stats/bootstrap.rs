//! Percentile bootstrap of the ratio of medians, as an alternative interval for the relative shift.
//!
//! The default interval is the distribution-free one in [`super::hodges_lehmann`]; this one is
//! kept for users who want the ratio of medians (what a person reading the two medians expects)
//! and as a cross-check in `examples/power.rs`. Both sides are sorted before resampling and the
//! generator is seeded from the row key, so the interval does not depend on the sample order and
//! is the same in every run.

use super::hodges_lehmann::Shift;
use super::rng::Rng;
use super::summary::median_sorted;

/// Percentile bootstrap interval of `median(candidate) / median(baseline) - 1`.
///
/// Returns `None` when a side is empty, a value is not finite and strictly positive, or
/// `resamples` is zero. The point estimate is the ratio of the observed medians.
pub(crate) fn median_ratio(
    candidate: &[f64],
    baseline: &[f64],
    confidence: f64,
    resamples: usize,
    seed: u64,
) -> Option<Shift> {
    let positive = |x: &f64| x.is_finite() && *x > 0.0;
    if resamples == 0
        || candidate.is_empty()
        || baseline.is_empty()
        || !candidate.iter().chain(baseline).all(positive)
    {
        return None;
    }
    let sorted = |v: &[f64]| {
        let mut s = v.to_vec();
        s.sort_by(f64::total_cmp);
        s
    };
    let (c, b) = (sorted(candidate), sorted(baseline));
    let point = median_sorted(&c)? / median_sorted(&b)? - 1.0;
    let mut rng = Rng::new(seed);
    let mut buf_c = vec![0.0; c.len()];
    let mut buf_b = vec![0.0; b.len()];
    let mut draws = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        let mut resample = |src: &[f64], buf: &mut [f64]| {
            for slot in buf.iter_mut() {
                *slot = src[rng.below(src.len())];
            }
            buf.sort_by(f64::total_cmp);
            median_sorted(buf)
        };
        let mc = resample(&c, &mut buf_c)?;
        let mb = resample(&b, &mut buf_b)?;
        draws.push(mc / mb - 1.0);
    }
    draws.sort_by(f64::total_cmp);
    let tail = (1.0 - confidence) / 2.0;
    let at = |q: f64| {
        let idx = (q * (draws.len() - 1) as f64).round() as usize;
        draws[idx.min(draws.len() - 1)]
    };
    Some(Shift {
        change: point,
        ci: [at(tail), at(1.0 - tail)],
        confidence,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_brackets_a_clear_shift_and_is_reproducible() {
        let base = [100.0, 101.0, 99.5, 100.4, 100.9, 99.8, 100.2, 100.6, 100.1, 99.9];
        let cand: Vec<f64> = base.iter().map(|x| x * 1.08).collect();
        let a = median_ratio(&cand, &base, 0.95, 2000, 7).unwrap();
        assert!((a.change - 0.08).abs() < 1e-9);
        assert!(a.ci[0] > 0.06 && a.ci[1] < 0.10, "{:?}", a.ci);
        assert_eq!(Some(a), median_ratio(&cand, &base, 0.95, 2000, 7));
        // Sample order does not matter: both sides are sorted before resampling.
        let mut rev = cand.clone();
        rev.reverse();
        assert_eq!(Some(a), median_ratio(&rev, &base, 0.95, 2000, 7));
    }

    #[test]
    fn refuses_what_it_cannot_do() {
        assert!(median_ratio(&[1.0], &[1.0], 0.95, 0, 1).is_none());
        assert!(median_ratio(&[1.0], &[0.0], 0.95, 10, 1).is_none());
        assert!(median_ratio(&[], &[1.0], 0.95, 10, 1).is_none());
    }
}
