//! The paired t test of the log ratios, and the outlier pairs left out before it.

use statrs::distribution::ContinuousCDF;

/// The paired t statistic of log ratios: their mean, standard error and degrees of freedom.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PairedT {
    pub mean: f64,
    pub se: f64,
    pub df: f64,
}

impl PairedT {
    fn dist(&self) -> Option<statrs::distribution::StudentsT> {
        statrs::distribution::StudentsT::new(0.0, 1.0, self.df.max(1.0)).ok()
    }

    /// P(mean this large or larger | true mean `at`).
    pub fn p_greater(&self, at: f64) -> f64 {
        if self.se == 0.0 {
            return if self.mean > at { 0.0 } else { 1.0 };
        }
        self.dist()
            .map_or(1.0, |d| 1.0 - d.cdf((self.mean - at) / self.se))
    }

    /// P(mean this small or smaller | true mean `at`).
    pub fn p_less(&self, at: f64) -> f64 {
        if self.se == 0.0 {
            return if self.mean < at { 0.0 } else { 1.0 };
        }
        self.dist().map_or(1.0, |d| d.cdf((self.mean - at) / self.se))
    }

    /// Two-sided interval of the mean at `confidence`.
    pub fn interval(&self, confidence: f64) -> [f64; 2] {
        let q = self
            .dist()
            .map_or(f64::INFINITY, |d| d.inverse_cdf(0.5 + confidence / 2.0));
        let h = if self.se == 0.0 { 0.0 } else { q * self.se };
        [self.mean - h, self.mean + h]
    }
}

/// One-sample t of `d` (at least 2 finite values).
pub fn paired_t(d: &[f64]) -> Option<PairedT> {
    let n = d.len();
    if n < 2 || d.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let nf = n as f64;
    let mean = d.iter().sum::<f64>() / nf;
    let var = d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (nf - 1.0);
    Some(PairedT {
        mean,
        se: (var / nf).sqrt(),
        df: nf - 1.0,
    })
}

/// `d` without the values beyond Tukey's fences (both tails), at most a fifth of them, from 5
/// values on; and how many were left out.
pub(super) fn trim_pairs(d: &[f64]) -> (Vec<f64>, usize) {
    let n = d.len();
    if n < 5 {
        return (d.to_vec(), 0);
    }
    let mut s = d.to_vec();
    s.sort_by(f64::total_cmp);
    let (Some(q1), Some(q3)) = (
        crate::stats::order::quantile_sorted(&s, 0.25),
        crate::stats::order::quantile_sorted(&s, 0.75),
    ) else {
        return (d.to_vec(), 0);
    };
    let k = crate::stats::outliers::TUKEY_K * (q3 - q1);
    let (lo, hi) = (q1 - k, q3 + k);
    let centre = (q1 + q3) / 2.0;
    let cap = (n as f64 * 0.2).floor() as usize;
    let mut out: Vec<usize> = (0..n).filter(|&i| d[i] < lo || d[i] > hi).collect();
    // The farthest first.
    out.sort_by(|&a, &b| (d[b] - centre).abs().total_cmp(&(d[a] - centre).abs()));
    out.truncate(cap);
    let kept = (0..n).filter(|i| !out.contains(i)).map(|i| d[i]).collect();
    (kept, out.len())
}
