//! A noisy row's shift against the baseline (from the rank test or the run-level model) and its
//! decision against the threshold once the run's Holm adjustment is known: significant beyond
//! the threshold either way, within it, or not yet known.

use super::estimate::{Bound, Shift as Moved};
use super::{Config, Judgement, num};
use crate::foundation::units::{Percent, percent};
use crate::stats::hodges_lehmann::Shift;
use crate::stats::jobspread::JobSpread;
use crate::stats::nested::Fit;
use crate::stats::row::RowVerdict;
use crate::stats::screen::LeftOut;

/// A shifted row after its tests, before the run-wide adjustment.
pub(super) struct ShiftRow {
    pub(super) j: Judgement,
    /// The relative shift, its interval widened by the between-job spread.
    pub(super) shift: Shift,
    /// U test against the baseline moved to the regression boundary (Holm: regression family).
    pub(super) p_bad: f64,
    /// U test against the baseline moved to the improvement boundary (improvement family).
    pub(super) p_good: f64,
    /// U test against the unmoved baseline in the bad direction (for the note only).
    pub(super) p_zero: f64,
    /// +1 when an increase is bad (lower is better), -1 otherwise.
    pub(super) bad_sign: f64,
    /// Relative threshold (0 for `exact`).
    pub(super) fraction: f64,
    /// `min_effect` in base units, with the absolute interval when it is set.
    pub(super) effect: Option<(f64, Shift)>,
    /// Text of the tolerance, e.g. `3.00% threshold` or `3.00% threshold and min effect 500ns`.
    pub(super) tolerance_text: String,
    /// `min_effect` as written, e.g. `500ns`.
    pub(super) effect_text: String,
    pub(super) exact_kind: bool,
    pub(super) spread: Option<JobSpread>,
    /// Half-width added on each side of the log-scale interval for the between-job spread.
    pub(super) widen: f64,
    /// Slow outliers left out of the test (`dips`): baseline, candidate.
    pub(super) dips: (usize, usize),
    /// What the row left out as the machine's or kept as the code's (`stats::screen`): more
    /// than its stated share left out and the row is never a pass on what is left.
    pub(super) left_out: LeftOut,
    /// When more than the stated share was left out: the same row with every sample kept, whose
    /// interval must pass too for the row to pass (what was left out hides no change then).
    pub(super) all_in: Option<AllIn>,
    /// Appended to the reason (the run-level model's noise parts and runs).
    pub(super) extra: String,
    /// What the interval is computed from at any level (the one shown is the one the decision
    /// used): the run-level model or the rank test's sides.
    pub(super) from: IntervalFrom,
}

/// What a shifted row's interval is computed from, at any level.
pub(super) enum IntervalFrom {
    /// The run-level model and the between-job variance added to it.
    Model(Fit, f64),
    /// The rank test's sides.
    Rank(RankSides),
}

/// What a rank-test row's interval is computed from at any level: each side sorted without its
/// own slow outliers, the between-job spread it is widened by, and the interval method.
pub(super) struct RankSides {
    pub(super) candidate: Vec<f64>,
    pub(super) baseline: Vec<f64>,
    /// Between-job spread (log scale); 0 without one.
    pub(super) spread: f64,
    pub(super) method: crate::stats::IntervalMethod,
    pub(super) resamples: usize,
    pub(super) seed: u64,
}

impl RankSides {
    /// The relative shift with its interval at `level`, widened on the log scale by
    /// `z * sqrt(2) * spread` (`z` of that level).
    fn at(&self, level: f64) -> Option<Shift> {
        use statrs::distribution::{ContinuousCDF, Normal};
        let (c, b) = (&self.candidate, &self.baseline);
        let mut s = match self.method {
            crate::stats::IntervalMethod::HodgesLehmann => {
                let mut cache = crate::stats::mannwhitney::NullCache::default();
                crate::stats::hodges_lehmann::relative_shift(c, b, level, &mut cache)?
            }
            crate::stats::IntervalMethod::Bootstrap => {
                crate::stats::bootstrap::median_ratio(c, b, level, self.resamples, self.seed)?
            }
        };
        let z = Normal::standard().inverse_cdf(0.5 + level.clamp(0.0, 1.0 - 1e-15) / 2.0);
        let w = z * std::f64::consts::SQRT_2 * self.spread;
        s.ci = [
            (1.0 + s.ci[0]) * (-w).exp() - 1.0,
            (1.0 + s.ci[1]) * w.exp() - 1.0,
        ];
        Some(s)
    }
}

/// A row with every sample kept (nothing left out as outliers), for the pass of a row that
/// left out more than its stated share.
pub(super) enum AllIn {
    /// The run-level model fitted on every launch, and the between-job variance added to it.
    Model(Fit, f64),
    /// The rank test's sides with every sample.
    Rank(RankSides),
}

impl AllIn {
    /// The interval of the change at `level`.
    fn at(&self, level: f64) -> Option<[f64; 2]> {
        match self {
            Self::Model(f, extra) => {
                let ci = f.interval(level, *extra);
                Some([ci[0].exp_m1(), ci[1].exp_m1()])
            }
            Self::Rank(r) => r.at(level).map(|s| s.ci),
        }
    }
}

/// The highest level a rank-test interval is searched at for one that reaches the tolerance.
const TOP_LEVEL: f64 = 1.0 - 1e-12;

/// The verdict a rank-test row's decision gives, with the interval it was read from
/// (docs/statistics.md 2.8): a regression (improvement) needs its test significant after Holm AND
/// its interval at the test's level wholly beyond the tolerance; a pass, the interval at the
/// configured confidence within it; otherwise inconclusive, shown at the widest of the levels, or
/// wider, up to where the interval reaches the tolerance. `rule` reads an interval.
/// `None` for the interval: the samples give none that reaches the tolerance at any level (the
/// p-value floor of few samples, section 5): the row is inconclusive on its widest interval.
fn rank_choice(
    sides: &RankSides,
    sig: [bool; 2],
    levels: [f64; 3],
    rule: &dyn Fn(&Shift) -> RowVerdict,
) -> Option<(RowVerdict, Shift)> {
    let [c_bad, c_good, confidence] = levels;
    if sig[0]
        && let Some(i) = sides.at(c_bad)
        && rule(&i) == RowVerdict::Regression
    {
        return Some((RowVerdict::Regression, i));
    }
    if sig[1]
        && let Some(i) = sides.at(c_good)
        && rule(&i) == RowVerdict::Improvement
    {
        return Some((RowVerdict::Improvement, i));
    }
    let settled = |v: RowVerdict| matches!(v, RowVerdict::Pass | RowVerdict::Inconclusive);
    let plain = sides.at(confidence)?;
    match rule(&plain) {
        RowVerdict::Pass => return Some((RowVerdict::Pass, plain)),
        RowVerdict::Inconclusive => {
            // Wider intervals hold the narrower ones: the widest still reaches the tolerance.
            let widest = sides.at(confidence.max(c_bad).max(c_good)).unwrap_or(plain);
            let v = rule(&widest);
            return settled(v)
                .then_some((v, widest))
                .or(Some((RowVerdict::Inconclusive, plain)));
        }
        _ => {}
    }
    // Beyond the tolerance without significance: the smallest level, from the widest of the
    // decision's, whose interval reaches it (bisection: the intervals are nested).
    let from = confidence.max(c_bad).max(c_good);
    if let Some(i) = sides.at(from)
        && settled(rule(&i))
    {
        return Some((rule(&i), i));
    }
    let top = sides.at(TOP_LEVEL)?;
    if !settled(rule(&top)) {
        return None;
    }
    let (mut lo, mut hi) = (from, TOP_LEVEL);
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        match sides.at(mid) {
            Some(i) if settled(rule(&i)) => hi = mid,
            _ => lo = mid,
        }
    }
    let i = sides.at(hi).unwrap_or(top);
    Some((rule(&i), i))
}

/// The Holm-adjusted p-values of a shifted row and the level they are judged at.
struct Adjusted {
    /// Regression family: against the baseline moved to the regression boundary.
    bad: f64,
    /// Improvement family: against the baseline moved to the improvement boundary.
    good: f64,
    /// Against the unmoved baseline, in the bad direction (for the note only).
    zero: f64,
    /// Tests in the regression family.
    family: usize,
    alpha: f64,
}

impl ShiftRow {
    /// The verdict once the run's Holm-adjusted p-values (regression, improvement and
    /// against-zero families) are known; `levels`: the one-sided levels the row was tested at in
    /// the regression and improvement families.
    pub(super) fn decide(
        mut self,
        adj: [f64; 3],
        levels: [f64; 2],
        family: usize,
        cfg: &Config,
    ) -> Judgement {
        let [adj_bad, adj_good, adj_zero] = adj;
        self.j.ruling.estimate.adjust(adj_bad);
        self.show_tolerance();
        let adj = Adjusted {
            bad: adj_bad,
            good: adj_good,
            zero: adj_zero,
            family,
            alpha: cfg.alpha,
        };
        self.at_decision_level(&adj, levels, cfg.confidence);
        let chosen = self.rank_level(&adj, levels, cfg.confidence);
        (self.j.ruling.verdict, self.j.ruling.reason) = if self.exact_kind && self.effect.is_none() {
            self.exact_on_noisy(&adj)
        } else {
            self.against_threshold(&adj)
        };
        if let Some(v) = chosen {
            self.follow_rank_interval(v, &adj);
        }
        self.never_a_pass_when_too_much_is_left_out();
        let detectable = self.detectable(levels[0], cfg.confidence);
        let estimate = &mut self.j.ruling.estimate;
        estimate.shift = Moved::Change {
            change: estimate.change().unwrap_or(self.shift.change),
            ci: Some(self.shift.ci),
            detectable,
        };
        estimate.confidence = Some(self.shift.confidence);
        let left = if matches!(self.from, IntervalFrom::Rank(_)) {
            self.explain_dips();
            self.left_out.notes_sentence()
        } else {
            self.left_out.sentence()
        };
        if !left.is_empty() {
            self.j.ruling.reason.push_str("; ");
            self.j.ruling.reason.push_str(&left);
        }
        self.j.ruling.reason.push_str(&self.extra);
        self.explain_job_spread();
        if self.j.ruling.verdict == RowVerdict::Inconclusive
            && let Some(d) = detectable
        {
            self.j.ruling.reason.push_str("; ");
            self.j.ruling.reason.push_str(&crate::stats::power::sentence(d));
        }
        self.j.ruling.estimate.left_out = Some(self.left_out.clone());
        self.j
    }

    /// A row that left out more than its stated share of a side as the machine's is never a
    /// pass on what is left (docs/statistics.md 2.9): what was left out could be the change. It
    /// passes only when the interval with nothing left out passes too.
    fn never_a_pass_when_too_much_is_left_out(&mut self) {
        if self.j.ruling.verdict != RowVerdict::Pass || !self.left_out.needs_all_in() {
            return;
        }
        // With every sample kept the interval passes too: what was left out hides no change.
        let rule = self.rule();
        let all = self.all_in.as_ref().and_then(|a| a.at(self.shift.confidence));
        if let Some(ci) = all
            && rule(&Shift { ci, ..self.shift }) == RowVerdict::Pass
        {
            self.j.ruling.reason.push_str(&format!(
                " (and so does the interval with nothing left out, [{}, {}])",
                percent(ci[0], Percent::Signed2),
                percent(ci[1], Percent::Signed2)
            ));
            return;
        }
        let all_text = all.map_or_else(String::new, |ci| {
            format!(
                " ([{}, {}] with nothing left out)",
                percent(ci[0], Percent::Signed2),
                percent(ci[1], Percent::Signed2)
            )
        });
        self.j.ruling.verdict = RowVerdict::Inconclusive;
        self.j.ruling.reason = format!(
            "{}: {}, but not with what was left out as outliers put back{all_text}, so it is not a pass; measure more repetitions",
            self.change_text(),
            self.j.ruling.reason,
        );
    }

    /// The interval the decision used, for a row of the run-level model (docs/statistics.md,
    /// 2.8): a regression at the level of its Holm step (one-sided `levels[0]`, so the interval
    /// lies beyond the threshold exactly when the adjusted p is within alpha), an improvement
    /// likewise (`levels[1]`); a pass at the configured confidence, or at the improvement's level
    /// when that interval lies wholly on the better side without an improvement being
    /// significant; anything else at the widest of the three, which then straddles the tolerance.
    /// [`Self::against_threshold`] reads the verdict off the interval chosen here.
    fn at_decision_level(&mut self, adj: &Adjusted, levels: [f64; 2], confidence: f64) {
        let IntervalFrom::Model(fit, extra) = &self.from else {
            return;
        };
        let (fit, extra) = (fit.clone(), *extra);
        let two_sided = |g: f64| (1.0 - 2.0 * g).clamp(0.0, 1.0 - 1e-15);
        let (c_bad, c_good) = (two_sided(levels[0]), two_sided(levels[1]));
        let widest = confidence.max(c_bad).max(c_good);
        let at = |c: f64| {
            let ci = fit.interval(c, extra);
            Shift {
                change: fit.delta.exp_m1(),
                ci: [ci[0].exp_m1(), ci[1].exp_m1()],
                confidence: c,
            }
        };
        let s = self.bad_sign;
        let bad_hi = |x: &Shift| if s > 0.0 { x.ci[1] } else { -x.ci[0] };
        let t = self.fraction;
        let shown = if adj.bad <= adj.alpha {
            at(c_bad)
        } else if adj.good <= adj.alpha {
            at(c_good)
        } else if self.exact_kind {
            at(widest)
        } else {
            let plain = at(confidence);
            if bad_hi(&plain) >= t {
                at(widest)
            } else if bad_hi(&plain) >= -t {
                plain
            } else {
                let wider = at(confidence.max(c_good));
                if bad_hi(&wider) < t { wider } else { at(widest) }
            }
        };
        let se = (fit.se * fit.se + extra).sqrt();
        self.widen = fit.quantile(shown.confidence) * (se - fit.se);
        self.shift = shown;
    }

    /// The row's minimum detectable change (`stats::power`) at the one-sided `level` its
    /// regression test spent: from the run-level model's standard error and degrees of freedom
    /// (with the job term), or, for the rank test, the standard error its interval at
    /// `confidence` implies (normal quantiles) with the job term.
    fn detectable(&self, level: f64, confidence: f64) -> Option<f64> {
        use statrs::distribution::{ContinuousCDF, Normal};
        let t = self.tolerance();
        let (se, df) = match &self.from {
            IntervalFrom::Model(f, extra) => ((f.se * f.se + extra).sqrt(), f.df),
            IntervalFrom::Rank(sides) => {
                let ci = sides.at(confidence)?.ci;
                let z = Normal::standard().inverse_cdf(0.5 + confidence / 2.0);
                let width = ((1.0 + ci[1]) / (1.0 + ci[0])).ln();
                let job = std::f64::consts::SQRT_2 * sides.spread;
                let own = (width / (2.0 * z) - job).max(0.0);
                (own.hypot(job), f64::INFINITY)
            }
        };
        crate::stats::power::detectable(t, self.bad_sign > 0.0, se, df, level)
    }

    /// The rule a row's interval is read by (`verdict_of_interval`, against the tolerance shown).
    fn rule(&self) -> impl Fn(&Shift) -> RowVerdict + use<> {
        let direction = if self.bad_sign > 0.0 {
            crate::foundation::threshold::Direction::Lower
        } else {
            crate::foundation::threshold::Direction::Higher
        };
        let tolerance = self.tolerance();
        let exact = self.exact_kind && self.effect.is_none();
        move |x: &Shift| super::rule::verdict_of_interval(x.ci, tolerance, direction, exact)
    }

    /// A rank-test row (docs/statistics.md 2.8): the interval at the level its decision used
    /// ([`rank_choice`]) replaces the configured one, and the verdict it gives is returned;
    /// `None` for the run-level model. Without any interval that reaches the tolerance (the
    /// p-value floor of few samples) the widest is shown and the row stays inconclusive.
    fn rank_level(&mut self, adj: &Adjusted, levels: [f64; 2], confidence: f64) -> Option<RowVerdict> {
        let IntervalFrom::Rank(sides) = &self.from else {
            return None;
        };
        let two_sided = |g: f64| (1.0 - 2.0 * g).clamp(0.0, 1.0 - 1e-15);
        let rule = self.rule();
        let sig = [adj.bad <= adj.alpha, adj.good <= adj.alpha];
        let levels = [two_sided(levels[0]), two_sided(levels[1]), confidence];
        match rank_choice(sides, sig, levels, &rule) {
            Some((v, shown)) => {
                self.widen = self.widen_at(shown.confidence);
                self.shift = shown;
                Some(v)
            }
            None => {
                if let Some(top) = sides.at(TOP_LEVEL) {
                    self.widen = self.widen_at(top.confidence);
                    self.shift = top;
                }
                Some(RowVerdict::Inconclusive)
            }
        }
    }

    /// The half-width a rank-test interval at `level` was widened by for the job spread.
    fn widen_at(&self, level: f64) -> f64 {
        use statrs::distribution::{ContinuousCDF, Normal};
        let spread = match &self.from {
            IntervalFrom::Rank(r) => r.spread,
            IntervalFrom::Model(..) => 0.0,
        };
        Normal::standard().inverse_cdf(0.5 + level.clamp(0.0, 1.0 - 1e-15) / 2.0)
            * std::f64::consts::SQRT_2
            * spread
    }

    /// Where the rank test and the interval at its level disagree (their slow-outlier fences
    /// differ, section 5, or `min_effect`'s absolute interval decided), the interval's reading
    /// (`chosen`) stands, and the reason says why.
    fn follow_rank_interval(&mut self, chosen: RowVerdict, adj: &Adjusted) {
        let reads = (self.rule())(&self.shift);
        // The reason names the interval the verdict was read from (with `min_effect`, a pass
        // used to name the absolute one).
        if chosen == self.j.ruling.verdict
            && reads == chosen
            && self.j.ruling.reason.contains(&self.interval_text())
        {
            return;
        }
        let (change, interval) = (self.change_text(), self.interval_text());
        let conf = percent(self.shift.confidence, Percent::Plain1);
        let tol = &self.tolerance_text;
        self.j.ruling.reason = match chosen {
            RowVerdict::Pass => format!("the {conf} interval {interval} lies within the {tol}"),
            _ if reads != chosen => format!(
                "{change}: the {conf} interval {interval} lies beyond the {tol}, but that is not significant after holm over {} tests (adjusted p {:.2e}), and no interval these samples give reaches it (the smallest p-value of so few samples); measure more repetitions",
                adj.family,
                crate::stats::pvalue::P(adj.bad)
            ),
            _ => format!(
                "{change}: the {conf} interval {interval} reaches the {tol} (adjusted p {:.2e} after holm over {} tests); measure more repetitions",
                crate::stats::pvalue::P(adj.bad),
                adj.family
            ),
        };
        self.j.ruling.verdict = chosen;
    }

    /// For the reports: the relative tolerance (the threshold, or min_effect relative to the
    /// baseline median where larger) and where the candidate's median crosses it.
    fn show_tolerance(&mut self) {
        let j = &mut self.j;
        let base_median = j.baseline.as_ref().map_or(0.0, |b| b.median);
        let from_effect = match self.effect {
            Some((e, _)) if base_median > 0.0 => e / base_median,
            _ => 0.0,
        };
        let shown = self.fraction.max(from_effect);
        j.bound = Some(Bound::Tolerance {
            tolerance: shown,
            limit: j
                .baseline
                .as_ref()
                .map(|b| b.median * (1.0 + self.bad_sign * shown)),
        });
    }

    /// The relative tolerance the row is judged against (the threshold before it is shown).
    fn tolerance(&self) -> f64 {
        self.j.bound.and_then(Bound::tolerance).unwrap_or(self.fraction)
    }

    /// The estimated change, e.g. `+2.10%`.
    fn change_text(&self) -> String {
        percent(self.shift.change, Percent::Signed2)
    }

    /// The interval of the change, e.g. `[+1.20%, +3.00%]`.
    fn interval_text(&self) -> String {
        let [lo, hi] = self.shift.ci;
        format!(
            "[{}, {}]",
            percent(lo, Percent::Signed2),
            percent(hi, Percent::Signed2)
        )
    }

    /// `exact` on a noisy metric: the threshold is zero, so the test against zero decides.
    fn exact_on_noisy(&self, adj: &Adjusted) -> (RowVerdict, String) {
        let (change, interval) = (self.change_text(), self.interval_text());
        let (adj_bad, adj_good, family) = (adj.bad, adj.good, adj.family);
        let how = "an exact threshold on a noisy metric is judged by the test alone";
        if adj_bad <= adj.alpha {
            (
                RowVerdict::Regression,
                format!(
                    "{change} (interval {interval}) is a significant worsening (adjusted p {adj_bad:.2e} after holm over {family} tests); {how}",
                    adj_bad = crate::stats::pvalue::P(adj_bad)
                ),
            )
        } else if adj_good <= adj.alpha {
            (
                RowVerdict::Improvement,
                format!(
                    "{change} (interval {interval}) is a significant improvement (adjusted p {adj_good:.2e}); {how}",
                    adj_good = crate::stats::pvalue::P(adj_good)
                ),
            )
        } else {
            (
                RowVerdict::Pass,
                format!(
                    "no significant worsening ({change}, interval {interval}, adjusted p {adj_bad:.2e}); {how}",
                    adj_bad = crate::stats::pvalue::P(adj_bad)
                ),
            )
        }
    }

    /// Against the threshold (and `min_effect`): a regression or an improvement when significant
    /// against the boundary, a pass when the interval lies within the tolerance, otherwise
    /// inconclusive.
    fn against_threshold(&self, adj: &Adjusted) -> (RowVerdict, String) {
        let (s, t) = (self.bad_sign, self.fraction);
        let [lo, hi] = self.shift.ci;
        // Interval ends measured in the bad direction.
        let (bad_lo, bad_hi) = if s > 0.0 { (lo, hi) } else { (-hi, -lo) };
        let tol = &self.tolerance_text;
        let (change, interval) = (self.change_text(), self.interval_text());
        let conf = percent(self.shift.confidence, Percent::Plain1);
        let (adj_bad, adj_good, family) = (adj.bad, adj.good, adj.family);
        // Within the tolerance: the relative interval within T, or the absolute one within
        // min_effect (a regression must exceed both).
        let within_rel = bad_hi < t;
        if adj_bad <= adj.alpha {
            let boundary = if s > 0.0 {
                format!("baseline x {}", num(1.0 + t))
            } else {
                format!("baseline x {}", num(1.0 - t))
            };
            (
                RowVerdict::Regression,
                format!(
                    "{change} (interval {interval}) is worse than the {tol}: the candidate is significantly worse than {boundary} (adjusted p {adj_bad:.2e} after holm over {family} tests)",
                    adj_bad = crate::stats::pvalue::P(adj_bad)
                ),
            )
        } else if adj_good <= adj.alpha {
            (
                RowVerdict::Improvement,
                format!(
                    "{change} (interval {interval}) is better than the {tol}, significant against the threshold (improvement adjusted p {adj_good:.2e})",
                    adj_good = crate::stats::pvalue::P(adj_good)
                ),
            )
        } else if within_rel || self.within_min_effect() {
            (RowVerdict::Pass, self.within_reason(within_rel))
        } else if bad_lo > t {
            (
                RowVerdict::Inconclusive,
                format!(
                    "{change}: the {conf} interval {interval} lies beyond the {tol}, but that is not significant after holm over {family} tests (adjusted p {adj_bad:.2e}); measure more repetitions",
                    adj_bad = crate::stats::pvalue::P(adj_bad)
                ),
            )
        } else {
            let note = self.against_zero_note(adj);
            (
                RowVerdict::Inconclusive,
                format!(
                    "{change}: the {conf} interval {interval} straddles the {tol}; measure more repetitions{note}"
                ),
            )
        }
    }

    /// Does the interval of the absolute change lie within `min_effect` (when set)?
    fn within_min_effect(&self) -> bool {
        let s = self.bad_sign;
        self.effect.is_some_and(|(e, a)| {
            let hi = if s > 0.0 { a.ci[1] } else { -a.ci[0] };
            hi < e
        })
    }

    /// Why a row passes: its relative interval (`within_rel`) or else its absolute one lies
    /// within the tolerance.
    fn within_reason(&self, within_rel: bool) -> String {
        let tol = &self.tolerance_text;
        let conf = percent(self.shift.confidence, Percent::Plain1);
        if within_rel {
            format!(
                "the {conf} interval {} lies within the {tol}",
                self.interval_text()
            )
        } else {
            let (_, a) = self.effect.unwrap_or((0.0, self.shift));
            format!(
                "the {conf} interval [{}, {}] of the absolute change lies within the min effect {}",
                num(a.ci[0]),
                num(a.ci[1]),
                self.effect_text
            )
        }
    }

    /// A shift beyond the threshold that is significant only against zero: a note for the
    /// reason; empty otherwise.
    fn against_zero_note(&self, adj: &Adjusted) -> String {
        let (s, t) = (self.bad_sign, self.fraction);
        let est_bad = s * self.shift.change;
        let beyond_est = est_bad > t && self.effect.is_none_or(|(e, a)| s * a.change > e);
        let sig_bad = adj.bad <= adj.alpha;
        if !sig_bad && beyond_est && adj.zero <= adj.alpha {
            format!(
                "; note: the estimate is beyond the {} and significant against no change (adjusted p {:.2e}), but not against the threshold",
                self.tolerance_text,
                crate::stats::pvalue::P(adj.zero)
            )
        } else {
            String::new()
        }
    }

    /// The slow outliers left out of the test, appended to the reason.
    fn explain_dips(&mut self) {
        let j = &mut self.j;
        if self.dips != (0, 0) {
            let (b, c) = self.dips;
            j.ruling.reason.push_str(&format!(
                "; slow outliers (clock dips, preemptions) left out of the test: {b} of {} baseline and {c} of {} candidate samples",
                j.baseline.as_ref().map_or(0, |s| s.n),
                j.candidate.n
            ));
        }
    }

    /// The widening for the between-job spread, and a warning when the threshold is too tight
    /// for that spread, appended to the reason.
    fn explain_job_spread(&mut self) {
        let j = &mut self.j;
        let t = self.fraction;
        if let Some(sp) = self.spread {
            let pct = |x: f64| percent(x, Percent::Signed2).trim_start_matches('+').to_owned();
            let from = if sp.generations >= crate::stats::jobspread::MIN_GENERATIONS {
                format!(
                    "{} baseline medians and a prior of {}",
                    sp.generations,
                    pct(sp.prior)
                )
            } else {
                format!(
                    "the prior of {}: fewer than {} baseline medians",
                    pct(sp.prior),
                    crate::stats::jobspread::MIN_GENERATIONS
                )
            };
            j.ruling.reason.push_str(&format!(
                "; interval widened by {} for a between-job spread of {} (from {from}, {:.1} degrees of freedom)",
                pct(self.widen),
                pct(sp.spread),
                sp.df
            ));
            // The processes' standard error, where the model gives one (the rank test has none).
            let se = match &self.from {
                IntervalFrom::Model(f, _) => Some(f.se),
                IntervalFrom::Rank(_) => None,
            };
            if let Some(w) = crate::stats::jobspread::drift_warning(t, sp.spread, se) {
                j.ruling.reason.push_str("; ");
                j.ruling.reason.push_str(&w);
            }
        }
    }
}
