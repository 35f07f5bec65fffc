//! A paired row before the run-wide adjustment: its pairs checked, the log ratios' outlier pairs
//! left out, and the t tests against the row's tolerance (the threshold, raised by `min_effect`).

use super::t_test::{PairedT, trimmed_t};
use super::wilcoxon::WalshInterval;
use super::{MIN_PAIRS, PairedJudgement, PairedRow};
use crate::stats::row::{Method, RowVerdict};

/// A paired row after its tests, before the run-wide adjustment.
pub(super) struct Prepared {
    pub(super) j: PairedJudgement,
    /// p of "worse than T", p of "better than T".
    pub(super) p: Option<(f64, f64)>,
    /// Interval of d in log space.
    pub(super) ci: [f64; 2],
    pub(super) estimate: f64,
    pub(super) up: f64,
    pub(super) down: f64,
    pub(super) lower_is_better: bool,
    /// Judged by the test against zero alone: an `exact` threshold without `min_effect`.
    pub(super) exact_kind: bool,
    pub(super) tolerance_text: String,
    /// Pairs left out as outliers of the differences.
    pub(super) left_out: usize,
    /// The t statistic of the log ratios: the interval at any level (the one shown is the one
    /// the decision used).
    pub(super) tt: Option<PairedT>,
    /// The paired t of every pair's processes' mean launches with nothing left out, when the
    /// head had something left out: a pass must hold on it too.
    pub(super) all_in: Option<PairedT>,
}

/// A row settled without a test: `verdict` for `reason`.
pub(super) fn done(verdict: RowVerdict, reason: String, pairs: usize, confidence: f64) -> Prepared {
    Prepared {
        j: PairedJudgement {
            ruling: crate::stats::Ruling::untested(verdict, reason, confidence),
            pairs,
        },
        p: None,
        ci: [0.0, 0.0],
        estimate: 0.0,
        up: 0.0,
        down: 0.0,
        lower_is_better: true,
        exact_kind: false,
        tolerance_text: String::new(),
        left_out: 0,
        tt: None,
        all_in: None,
    }
}

/// The plain paired t of the log ratios of every pair's processes' mean launches, nothing left
/// out (`PairedRow::all_in`; without them, of every pair's values: Yuen's trim put back).
fn all_in_t(row: &PairedRow<'_>, n: usize) -> Option<PairedT> {
    let (b, h) = row.all_in.unwrap_or((row.base, row.head));
    if b.len() != n || h.len() != n || b.iter().chain(h).any(|x| !(*x > 0.0 && x.is_finite())) {
        return None;
    }
    let d: Vec<f64> = b.iter().zip(h).map(|(b, h)| (h / b).ln()).collect();
    super::t_test::paired_t(crate::stats::finite::Finite::new(&d).ok()?)
}

/// Check a row's pairs, then test the log ratios against the boundaries of the row's tolerance
/// ([`PairedRow::effective_tolerance`]: the threshold, or `min_effect` relative to the base's
/// median where larger, as `check` takes it). One interval, that of the log ratios, decides the
/// row and is the one every report shows (docs/statistics.md, 2.8).
pub(super) fn prepare(row: &PairedRow<'_>, confidence: f64) -> Prepared {
    let n = row.base.len().min(row.head.len());
    if let Some((verdict, reason)) = unusable(row, n) {
        return done(verdict, reason, n, confidence);
    }
    let d_all: Vec<f64> = row.base.iter().zip(row.head).map(|(b, h)| (h / b).ln()).collect();
    // Checked once (the values are finite and positive, but a ratio can leave f64's range); the
    // tests below take the checked differences and do not check them again.
    let Ok(d) = crate::stats::finite::Finite::new(&d_all) else {
        return done(
            RowVerdict::Error,
            "a ratio of the pairs is beyond what a float holds; check the profiler output".to_owned(),
            n,
            confidence,
        );
    };
    // A pair where one side's process ran slow (a clock dip, a neighbour) is an outlier of the
    // differences on either side: Yuen's trimmed t leaves a tenth of the pairs out at each end
    // (from 10 pairs on), a share fixed in advance so the test keeps its level.
    // Unless the code explains them: pairs beyond Tukey's fences of the differences lie on the
    // head's slow side significantly more often than on the base's (`stats::screen`: a process
    // the machine slowed is as likely a base process as a head one), and then every pair counts.
    let (k_bad, k_good) = tail_pairs(&d_all, row.lower_is_better);
    let code = (k_bad > 0)
        .then(|| crate::stats::screen::sign_p(k_bad, k_good))
        .filter(|p| *p <= crate::stats::screen::MACHINE_LEVEL);
    let tested = if code.is_some() {
        super::t_test::paired_t(d).map(|t| (t, 0))
    } else {
        trimmed_t(d)
    };
    let screen = screened(row, n, code, tested.is_some(), (k_bad, k_good));
    let Some((tt, left_out)) = tested else {
        return done(
            RowVerdict::Error,
            "internal: no interval".to_owned(),
            n,
            confidence,
        );
    };
    let w = WalshInterval {
        estimate: tt.mean,
        ci: tt.interval(confidence),
        confidence,
    };
    let t = row.effective_tolerance();
    let up = t.ln_1p();
    let down = if t < 1.0 { (-t).ln_1p() } else { f64::NEG_INFINITY };
    let (p_bad, p_good) = threshold_tests(&tt, up, down, row.lower_is_better);
    let exact_alone = row.exact_kind && t == 0.0;
    let mut p = done(RowVerdict::Inconclusive, String::new(), n, w.confidence);
    p.j.ruling.method = Method::PairedT;
    p.left_out = left_out;
    p.j.ruling.estimate.left_out = Some(screen);
    p.j.ruling.estimate.shift = crate::stats::Shift::Change {
        change: w.estimate.exp_m1(),
        ci: Some([w.ci[0].exp_m1(), w.ci[1].exp_m1()]),
        detectable: None,
    };
    p.j.ruling.estimate.test = Some(crate::stats::Test {
        p: p_bad,
        p_adjusted: None,
    });
    p.p = Some((p_bad, p_good));
    p.ci = w.ci;
    p.estimate = w.estimate;
    p.up = up;
    p.down = down;
    p.lower_is_better = row.lower_is_better;
    p.exact_kind = exact_alone;
    p.tt = Some(tt);
    // A pass with something of the head's left out must hold with nothing left out too (issue
    // 57): the plain paired t of every pair of the processes' mean launches.
    if p.j
        .ruling
        .estimate
        .left_out
        .as_ref()
        .is_some_and(crate::stats::screen::LeftOut::needs_all_in)
    {
        p.all_in = all_in_t(row, n);
    }
    p.tolerance_text = if exact_alone {
        "exact threshold".to_owned()
    } else {
        row.tolerance_text.clone()
    };
    p
}

/// What the row's test left out or kept, the launches' screen of `row` with its pairs added:
/// the pairs on the head's slow side kept as the code's when their sign test `code` says so,
/// else the outlying pairs `(k_bad, k_good)` Yuen's trim took from each end, when it `trimmed`.
fn screened(
    row: &PairedRow<'_>,
    n: usize,
    code: Option<f64>,
    trimmed: bool,
    (k_bad, k_good): (usize, usize),
) -> crate::stats::screen::LeftOut {
    let mut screen = row.left_out.clone();
    screen.of_runs = (n, n);
    if let Some(pv) = code {
        let (launches, in_processes) = screen
            .kept_as_code
            .map_or((0, 0), |k| (k.launches, k.in_processes));
        screen.kept_as_code = Some(crate::stats::screen::KeptAsCode {
            launches,
            runs: k_bad,
            p: pv,
            in_processes,
        });
    } else if trimmed {
        // The outlying pairs Yuen's trim took from each end: a pair whose base process ran slow
        // is the base's, one whose head process ran slow the head's.
        let each_end = (super::t_test::TRIM * n as f64).floor() as usize;
        screen.runs = (k_good.min(each_end), k_bad.min(each_end));
    }
    screen
}

/// Pairs beyond Tukey's fences of the log ratios `d`: (on the head's slow side, on its fast
/// side). None with fewer than 4 pairs.
fn tail_pairs(d: &[f64], lower_is_better: bool) -> (usize, usize) {
    let out = crate::stats::outliers::tukey_outliers(d);
    let Some(mid) = crate::stats::order::median(d) else {
        return (0, 0);
    };
    let high = out.iter().filter(|&&i| d[i] > mid).count();
    let low = out.len() - high;
    if lower_is_better { (high, low) } else { (low, high) }
}

/// Why a row of `n` pairs cannot be tested: an error (sides of different lengths, non-finite
/// values, an invalid tolerance) or inconclusive (too few pairs, values a ratio cannot take).
/// `None` when it can.
fn unusable(row: &PairedRow<'_>, n: usize) -> Option<(RowVerdict, String)> {
    if row.base.len() != row.head.len() {
        return Some((
            RowVerdict::Error,
            format!(
                "internal: {} base and {} head values cannot be paired",
                row.base.len(),
                row.head.len()
            ),
        ));
    }
    let positive = |x: &f64| *x > 0.0;
    let finite = |v| crate::stats::finite::Finite::new(v).is_ok();
    if !(finite(row.base) && finite(row.head)) {
        return Some((
            RowVerdict::Error,
            "non-finite values in the pairs; check the profiler output".to_owned(),
        ));
    }
    if !(row.tolerance.is_finite() && row.tolerance >= 0.0) {
        return Some((RowVerdict::Error, format!("invalid tolerance {}", row.tolerance)));
    }
    if n < MIN_PAIRS {
        return Some((
            RowVerdict::Inconclusive,
            format!("not enough data: need at least {MIN_PAIRS} pairs, have {n}; raise repetitions"),
        ));
    }
    if !row.base.iter().chain(row.head).all(positive) {
        return Some((
            RowVerdict::Inconclusive,
            "a ratio needs positive values and this metric has values <= 0; use a min/max threshold"
                .to_owned(),
        ));
    }
    None
}

/// Worse-than-T and better-than-T, each a one-sided t test of the log ratios against the null
/// shifted to the boundary `up` (`ln(1 + T)`) or `down` (`ln(1 - T)`): `(p_bad, p_good)`.
fn threshold_tests(tt: &PairedT, up: f64, down: f64, lower_is_better: bool) -> (f64, f64) {
    let (bad_shift, good_shift) = if lower_is_better { (up, down) } else { (down, up) };
    let test = |shift: f64, worse_is_up: bool| -> f64 {
        if !shift.is_finite() {
            return 1.0;
        }
        if worse_is_up {
            tt.p_greater(shift)
        } else {
            tt.p_less(shift)
        }
    };
    (
        test(bad_shift, lower_is_better),
        test(good_shift, !lower_is_better),
    )
}
