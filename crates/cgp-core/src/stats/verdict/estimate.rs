//! What a ruling estimated, typed where the numbers are made (criterion's `Estimate`): the one
//! shift a row's verdict used (a relative change with its interval, or a `min:`/`max:` row's
//! median interval: two kinds, never both), the test's p-values as one value, and what the
//! test left out. The results take these types as they are (`results::Estimate` is this one);
//! only the file's flat form (`results/wire.rs`) takes them apart.

use crate::stats::screen::LeftOut;

/// The numbers a verdict used: the one shift, the coverage of its interval, the test.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Estimate {
    /// What moved: the relative change with its interval, or a `min:`/`max:` row's median interval.
    pub shift: Shift,
    /// Coverage of the interval shown (0.95, ...): the requested level unless too few samples
    /// forced a wider, less certain one, or the level the decision used. Every ruling has one;
    /// `None` only in a results file that did not write it.
    pub confidence: Option<f64>,
    /// The test's p-values, where a test was run.
    pub test: Option<Test>,
    /// What the test left out as the machine's (far launches, slow-side dips, disturbed
    /// processes), or kept as the code's (`stats::screen`); `None` where no outlier rule applies
    /// (exact, limit and untested rows).
    pub left_out: Option<LeftOut>,
}

/// The one estimate a row shows, of the change or of the median.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub enum Shift {
    /// Nothing was estimated (an untested, missing, new or error row).
    #[default]
    None,
    /// Relative change of the candidate against the baseline (0.031 = +3.1%; the Hodges-Lehmann
    /// estimate of a noisy row, the exponent of the mean log ratio of a paired one), with its
    /// confidence interval where one was computed (an `exact` row has none), and the smallest
    /// change the row's test finds in 80 % of checks at the level it spent, the bad way
    /// (`stats::power`; the tolerance for an exact comparison; none in older files).
    Change {
        change: f64,
        ci: Option<[f64; 2]>,
        detectable: Option<f64>,
    },
    /// For `min:`/`max:` rows: the interval of the candidate's median, in base units.
    Median { ci: [f64; 2] },
}

/// The p-values of a row's test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Test {
    /// One-sided p-value of the test in the regression direction (unadjusted).
    pub p: f64,
    /// p-value after the run-wide multiple-testing correction (Holm over every tested row).
    pub p_adjusted: Option<f64>,
}

/// What a row's interval was judged against, in the terms reports draw: the relative tolerance
/// of a shift, or a `min:`/`max:` row's limit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Bound {
    /// A shift against the baseline: the relative tolerance the test judged against (the
    /// threshold, raised to `min_effect` / baseline median where that is larger), and where the
    /// candidate's median crosses it, in base units (the baseline median moved by the tolerance).
    Tolerance { tolerance: f64, limit: Option<f64> },
    /// A `min:`/`max:` row: the bound with `min_effect` applied, in base units.
    Limit(f64),
}

impl Shift {
    /// An exact comparison's change (none where the sides could not be compared), without an
    /// interval, with the smallest change it finds.
    pub fn exact(change: Option<f64>, detectable: Option<f64>) -> Self {
        change.map_or(Self::None, |change| Self::Change {
            change,
            ci: None,
            detectable,
        })
    }
}

impl Estimate {
    /// Nothing estimated yet, at the requested `confidence`.
    pub fn at(confidence: f64) -> Self {
        Self {
            confidence: Some(confidence),
            ..Self::default()
        }
    }

    /// A shift's estimate before the run's Holm adjustment: the relative change with its
    /// interval and coverage (`hodges_lehmann::Shift`, however it was computed), and the
    /// unadjusted p of its test.
    pub(crate) fn shifted(shift: &crate::stats::hodges_lehmann::Shift, p: f64) -> Self {
        Self {
            shift: Shift::Change {
                change: shift.change,
                ci: Some(shift.ci),
                detectable: None,
            },
            confidence: Some(shift.confidence),
            test: Some(Test { p, p_adjusted: None }),
            left_out: None,
        }
    }

    /// Relative change of the candidate against the baseline (0.031 = +3.1%).
    pub fn change(&self) -> Option<f64> {
        match self.shift {
            Shift::Change { change, .. } => Some(change),
            _ => None,
        }
    }

    /// The smallest change (the bad way) the row's test finds in 80 % of checks at the level it
    /// spent (`stats::power`): what an inconclusive row could have told.
    pub fn detectable(&self) -> Option<f64> {
        match self.shift {
            Shift::Change { detectable, .. } => detectable,
            _ => None,
        }
    }

    /// Confidence interval of the relative change.
    pub fn change_ci(&self) -> Option<[f64; 2]> {
        match self.shift {
            Shift::Change { ci, .. } => ci,
            _ => None,
        }
    }

    /// For `min:`/`max:` rows: the interval of the candidate's median, in base units.
    pub fn median_ci(&self) -> Option<[f64; 2]> {
        match self.shift {
            Shift::Median { ci } => Some(ci),
            _ => None,
        }
    }

    /// One-sided p-value of the test in the regression direction (unadjusted).
    pub fn p(&self) -> Option<f64> {
        self.test.map(|t| t.p)
    }

    /// p-value after the run-wide multiple-testing correction.
    pub fn p_adjusted(&self) -> Option<f64> {
        self.test.and_then(|t| t.p_adjusted)
    }

    /// Give the test its adjusted p-value (a row without a test keeps none).
    pub(crate) fn adjust(&mut self, p_adjusted: f64) {
        if let Some(t) = &mut self.test {
            t.p_adjusted = Some(p_adjusted);
        }
    }
}

impl Bound {
    /// The relative tolerance of a shift; `None` for a limit row.
    pub fn tolerance(self) -> Option<f64> {
        match self {
            Self::Tolerance { tolerance, .. } => Some(tolerance),
            Self::Limit(_) => None,
        }
    }

    /// Where the candidate's median crosses the threshold, in base units, when known.
    pub fn limit(self) -> Option<f64> {
        match self {
            Self::Tolerance { limit, .. } => limit,
            Self::Limit(l) => Some(l),
        }
    }
}
