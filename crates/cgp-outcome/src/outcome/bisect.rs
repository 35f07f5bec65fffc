//! What `cgp-gate bisect` decides (docs/bisect.md): what each measured commit said, which commit
//! to measure next, the culprit, and how sure the search is of it.
//!
//! The commits are `good = c_0, c_1, ..., c_n = bad` in order. A step measures one commit `c_i`
//! paired and interleaved with `c_0` (as `ab` does; `stats::paired` judges each row against its
//! threshold) and [`classify`] reads the rows: **bad** when a row regressed beyond its threshold,
//! **good** when every row's interval rules a change beyond the threshold out, **unknown** when
//! the most processes allowed still left it open, **skipped** when the commit did not build or
//! run. The first step measures `c_n` itself: when it is not bad there is nothing to find.
//!
//! [`Search`] keeps the highest good and the lowest bad commit and measures the unmeasured commit
//! nearest the middle between them; an unknown or skipped commit is never taken as either, so the
//! next step measures a neighbour. The search ends when the good and the bad commit are next to
//! each other (the culprit is the bad one) or nothing between them can be measured (the range is
//! reported, as `git bisect` does with skipped commits).
//!
//! **Error guarantee** (Bonferroni): the search measures at most [`Levels::max_steps`] commits,
//! `ceil(log2 n) + 3` (the bad end, the halvings, two neighbours of unknown commits), and each step
//! judges at the level `alpha / max_steps`, both its regression test and its pass interval. The
//! culprit can only be wrong when some step misjudged its commit, so the chance of a wrong
//! culprit (and, with no change at all, of any culprit) is at most `alpha` whenever the change is
//! at least the threshold. The confidence reported is `1 - m * alpha / max_steps` for the `m`
//! steps the search measured.

use serde::{Deserialize, Serialize};

use crate::outcome::results::{Row, RowVerdict};

/// What one measured commit said.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Said {
    /// Within the threshold of the good commit on every row.
    Good,
    /// Beyond the threshold in the bad direction on some row.
    Bad,
    /// Neither shown after the most processes allowed.
    Unknown,
    /// It did not build or did not run: never good or bad.
    Skipped,
}

impl Said {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Good => "good",
            Self::Bad => "bad",
            Self::Unknown => "unknown",
            Self::Skipped => "skipped",
        }
    }
}

/// What a step's paired rows say of the commit measured against the good one: bad when any row
/// regressed, good when every row passed (an improvement is not the change searched for), else
/// unknown. An error row or no row at all is a commit that did not run: skipped.
pub fn classify_commit(rows: &[&Row]) -> Said {
    let verdicts: Vec<RowVerdict> = rows.iter().map(|r| r.verdict()).collect();
    if verdicts.is_empty() || verdicts.contains(&RowVerdict::Error) {
        Said::Skipped
    } else if verdicts.contains(&RowVerdict::Regression) {
        Said::Bad
    } else if verdicts
        .iter()
        .all(|v| matches!(v, RowVerdict::Pass | RowVerdict::Improvement))
    {
        Said::Good
    } else {
        Said::Unknown
    }
}

/// The levels of a search over `n` commits after the good one.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Levels {
    /// The whole search's error: the spec's `settings.alpha`.
    pub alpha: f64,
    /// The most commits the search measures: `ceil(log2 n) + 3`.
    pub max_steps: usize,
    /// Each step's level: `alpha / max_steps` (Bonferroni).
    pub step_alpha: f64,
}

impl Levels {
    pub fn new(alpha: f64, n: usize) -> Self {
        let halvings = usize::try_from(n.max(1).next_power_of_two().trailing_zeros()).unwrap_or(0);
        let max_steps = halvings + 3;
        Self {
            alpha,
            max_steps,
            // max_steps is small; the conversion is exact.
            step_alpha: alpha / max_steps as f64,
        }
    }

    /// The confidence in a culprit after `measured` judged steps: `1 - measured * step_alpha`.
    pub fn confidence(&self, measured: usize) -> f64 {
        (1.0 - measured as f64 * self.step_alpha).clamp(0.0, 1.0)
    }
}

/// The state of a search over commits `0..=n` (0 the good commit, `n` the bad one).
#[derive(Debug, Clone)]
pub struct Search {
    said: Vec<Option<Said>>,
}

/// Where a search ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SearchEnd {
    /// The bad end is not beyond the threshold: nothing to find (it said this).
    NoChange(Said),
    /// The first bad commit: its index.
    Culprit(usize),
    /// The first bad commit is one of these (the ones between could not be judged).
    Range(Vec<usize>),
}

impl Search {
    /// A search over `n` commits after the good one (`n >= 1`).
    pub fn new(n: usize) -> Self {
        let mut said = vec![None; n + 1];
        said[0] = Some(Said::Good);
        Self { said }
    }

    /// Record what commit `i` said.
    pub fn record(&mut self, i: usize, s: Said) {
        if let Some(slot) = self.said.get_mut(i) {
            *slot = Some(s);
        }
    }

    fn last(&self) -> usize {
        self.said.len() - 1
    }

    /// The highest commit that said good, below the lowest that said bad.
    fn bounds(&self) -> Option<(usize, usize)> {
        let hi = (1..self.said.len()).find(|&i| self.said[i] == Some(Said::Bad))?;
        let lo = (0..hi)
            .rev()
            .find(|&i| self.said[i] == Some(Said::Good))
            .unwrap_or(0);
        Some((lo, hi))
    }

    /// The commit to measure next, or `None` when the search has ended ([`Search::end`]). The
    /// bad end first; then the unmeasured commit nearest the middle of the good and the bad one
    /// (the lower of two equally near).
    pub fn next(&self) -> Option<usize> {
        let n = self.last();
        match self.said[n] {
            None => return Some(n),
            Some(Said::Bad) => {}
            Some(_) => return None,
        }
        let (lo, hi) = self.bounds()?;
        let mid2 = lo + hi; // twice the middle
        (lo + 1..hi)
            .filter(|&i| self.said[i].is_none())
            .min_by_key(|&i| (2 * i).abs_diff(mid2))
    }

    /// Where the search ended (call when [`Search::next`] is `None` or the steps ran out).
    pub fn end(&self) -> SearchEnd {
        let n = self.last();
        match self.said[n] {
            Some(Said::Bad) => {}
            other => return SearchEnd::NoChange(other.unwrap_or(Said::Unknown)),
        }
        let Some((lo, hi)) = self.bounds() else {
            return SearchEnd::NoChange(Said::Unknown);
        };
        if hi == lo + 1 {
            SearchEnd::Culprit(hi)
        } else {
            SearchEnd::Range((lo + 1..=hi).collect())
        }
    }

    /// What commit `i` said, if it was measured.
    pub fn said(&self, i: usize) -> Option<Said> {
        self.said.get(i).copied().flatten()
    }

    /// Does any commit of `range` not build or run? Then the range is not an answer about the
    /// change (a creep) but about the build: it is not pinned.
    pub fn skipped_in(&self, range: &[usize]) -> bool {
        range.iter().any(|&i| self.said(i) == Some(Said::Skipped))
    }
}

impl BisectEnd {
    /// What the confidence of a search that ended so is about, and what it assumes (issue 57:
    /// the bound held only for a step, and said nothing of creep); empty without a culprit or a
    /// range.
    pub fn claim(self) -> &'static str {
        match self {
            Self::Culprit => {
                "it is the first commit at which the change from the good commit crosses the threshold, assuming the change never falls back below the threshold after crossing it (bisection's assumption); under a creep of small steps the commit itself may change by less than the threshold"
            }
            Self::Range => {
                "the change from the good commit crosses the threshold within this range (its first commit's predecessor within it, its last commit beyond it), assuming the change never falls back below the threshold after crossing it; no single commit of the range is shown to cross it alone: the commits between are at the threshold (a creep)"
            }
            Self::NoChange | Self::NotPinned => "",
        }
    }
}

/// How a bisection ended, for its exit code (`decide::bisect_exit_code`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BisectEnd {
    /// A culprit found.
    Culprit,
    /// No change beyond the threshold between good and bad.
    NoChange,
    /// The first bad commit lies in a range some of whose commits did not build or run
    /// (skipped), or the bad end itself could not be measured.
    NotPinned,
    /// The change from good crosses the threshold within a run of consecutive commits none of
    /// which is shown to cross it alone (those between are at the threshold: unknown), a creep
    /// (issue 57): the range is the answer.
    Range,
}

/// One commit the search measured and what it said.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BisectStep {
    /// Position among the commits after the good one (1..=n).
    pub index: usize,
    pub commit: String,
    pub subject: String,
    pub said: Said,
    /// The change against the good commit on the row that decided (the largest change in the
    /// bad direction), with its interval, where it was measured.
    pub change: Option<f64>,
    pub change_ci: Option<[f64; 2]>,
    /// The row that decided and its reason, or why the commit was skipped.
    pub row: String,
    pub reason: String,
    /// Processes run for this step (both sides) and seconds spent.
    pub processes: u32,
    pub seconds: f64,
}

/// The culprit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Culprit {
    pub commit: String,
    pub subject: String,
    /// The change across it (the culprit against the good commit), on the deciding row.
    pub change: Option<f64>,
    pub change_ci: Option<[f64; 2]>,
    pub row: String,
}

/// A decided bisection: what every reporter renders (`report::bisect`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BisectResult {
    pub schema_version: u32,
    pub good: String,
    pub bad: String,
    /// Commits after the good one, up to and including the bad one.
    pub commits: usize,
    /// Whether the commits are the first-parent line (the history has merges) or the ancestry path.
    pub first_parent: bool,
    /// The targets measured.
    pub targets: Vec<String>,
    pub levels: Levels,
    /// The relative threshold every step judged against when it was not the spec's
    /// (`--threshold`, or half the shift of a `changes` row).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f64>,
    pub end: BisectEnd,
    pub culprit: Option<Culprit>,
    /// The confidence in the culprit or the range (see `method`, and `claim` for what it is about).
    pub confidence: Option<f64>,
    /// What the confidence is about and what it assumes ([`BisectEnd::claim`]); empty without a
    /// culprit or a range.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub claim: String,
    pub method: String,
    /// Where the first bad commit lies when it could not be pinned.
    pub range: Vec<String>,
    pub steps: Vec<BisectStep>,
    pub processes: u32,
    pub seconds: f64,
    /// One sentence: what the search found.
    pub summary: String,
}

/// The version of `bisect --json`.
pub const BISECT_SCHEMA_VERSION: u32 = 1;

/// The method sentence every report prints.
pub fn bisect_method(levels: &Levels, threshold: Option<f64>) -> String {
    let against = threshold.map_or_else(
        || "each row's threshold".to_owned(),
        |t| format!("a threshold of {:.2}%", t * 100.0),
    );
    format!(
        "each step pairs the commit with the good one (ABBA, as `ab`) and judges its change from the good one against {against} at level alpha/max_steps = {}/{} = {:.2e}; confidence = 1 - (steps measured) x that level, a Bonferroni bound on the chance that any step misjudged its commit (a commit beyond the threshold called good, or one within it called bad), for a step change and a creep alike; it assumes the change from good never falls back below the threshold once it crossed it, and that each step's paired test holds its level (independent pairs; docs/statistics.md 2.7)",
        levels.alpha, levels.max_steps, levels.step_alpha
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A search over commits whose first bad one is `k`, with answers from `said`.
    fn run(n: usize, said: impl Fn(usize) -> Said) -> (SearchEnd, usize) {
        let mut s = Search::new(n);
        let mut steps = 0;
        while let Some(i) = s.next() {
            s.record(i, said(i));
            steps += 1;
        }
        (s.end(), steps)
    }

    #[test]
    fn a_clean_step_is_found_in_log2_steps() {
        for n in [1, 2, 7, 8, 31, 32, 128] {
            for k in 1..=n {
                let (end, steps) = run(n, |i| if i >= k { Said::Bad } else { Said::Good });
                assert_eq!(end, SearchEnd::Culprit(k), "n {n} k {k}");
                assert!(
                    steps <= Levels::new(0.01, n).max_steps - 2,
                    "n {n} k {k}: {steps}"
                );
            }
        }
    }

    #[test]
    fn no_change_ends_after_one_step_and_skips_and_unknowns_are_never_taken() {
        assert_eq!(run(16, |_| Said::Good), (SearchEnd::NoChange(Said::Good), 1));
        // Commit 5 is the first bad one; 4 does not build: the range 4..=5 is reported.
        let (end, _) = run(16, |i| match i {
            4 => Said::Skipped,
            i if i >= 5 => Said::Bad,
            _ => Said::Good,
        });
        assert_eq!(end, SearchEnd::Range(vec![4, 5]));
        // An unknown commit in the middle: its neighbours decide.
        let (end, _) = run(16, |i| match i {
            8 => Said::Unknown,
            i if i >= 10 => Said::Bad,
            _ => Said::Good,
        });
        assert_eq!(end, SearchEnd::Culprit(10));
    }

    #[test]
    fn levels_spend_alpha_over_the_most_steps() {
        let l = Levels::new(0.01, 32);
        assert_eq!(l.max_steps, 8);
        assert!((l.step_alpha - 0.00125).abs() < 1e-12);
        assert!((l.confidence(6) - 0.9925).abs() < 1e-12);
    }
}
