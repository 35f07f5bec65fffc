//! Pure statistics and the per-row verdict: no I/O, deterministic (any randomness is seeded from
//! the row key). Method and measured error rates: `docs/statistics.md`.

pub mod bootstrap;
pub mod change_reach;
pub mod changepoint;
pub mod clock;
pub mod dips;
pub mod finite;
pub mod hodges_lehmann;
pub mod jobspread;
pub mod mannwhitney;
pub mod median_ci;
pub mod multiple;
pub mod nested;
pub mod noise;
pub mod order;
pub mod outliers;
pub mod paired;
pub mod power;
pub mod pvalue;
pub mod quantile;
pub mod ranks;
pub mod remeasure;
pub mod rng;
pub mod row;
pub mod screen;
pub mod spending;
pub mod summary;
pub mod verdict;

#[cfg(test)]
mod tests;

pub use multiple::{holm, holm_levels};
pub use outliers::tukey_outliers;
pub use row::{Method, RowVerdict, SideSummary};
pub use summary::{median, summarize};
pub use verdict::{
    Bound, Comparison, Config, Estimate, IntervalMethod, Judgement, MAX_SAMPLES, MIN_SAMPLES, Ruling, Shift,
    Test, deciding_launch, judge, judge_all, judge_all_at,
};
