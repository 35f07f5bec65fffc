//! `changes`: level shifts in the history of main.
//!
//! Input: results files (`check --json`, or the results `baseline update` was fed) in time order.
//! Every target x size x kernel x metric (x GPU) becomes a series of the candidate medians, one
//! point per file that has the row. Each series is searched for level shifts with E-Divisive means
//! and a permutation test (`stats::changepoint`). Significance is controlled across the run:
//! every test uses the level `alpha / m` (Bonferroni over the `m` series searched). A shift is
//! reported only when it is significant AND its size (median after / median before - 1, over the
//! neighbouring segments) is at least `min_change`. The statistics decide; reporters render
//! [`ChangesReport`] (`report::changes`).

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::outcome::results::{OwnedRowKey, Results, RowKey, RowVerdict};
use crate::stats::change_reach::{self, POWER};
use crate::stats::changepoint::{self, NullCache, e_divisive_shared};
use crate::stats::median;
use crate::stats::rng::seed_for;

/// Schema version of the `changes --json` file.
pub(crate) const CHANGES_VERSION: u32 = 1;

/// Settings of a search.
#[derive(Debug, Clone, PartialEq)]
pub struct ChangesOptions {
    /// Chance of any false change point in the whole run (Bonferroni over the series).
    pub alpha: f64,
    /// Smallest relative size of a shift that is reported (0.01 = 1%).
    pub min_change: f64,
    /// Fewest results on each side of a change point.
    pub min_segment: usize,
    /// Base seed of the permutation tests (each series derives its own from its key).
    pub seed: u64,
}

impl Default for ChangesOptions {
    fn default() -> Self {
        Self {
            alpha: 0.01,
            min_change: 0.01,
            min_segment: 3,
            seed: crate::stats::Config::default().seed,
        }
    }
}

/// One input file, in the order given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InputFile {
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_commit: Option<String>,
    #[serde(default)]
    pub date: String,
    #[serde(default)]
    pub synthetic: bool,
}

/// [`ChangeRow::direction`] in a file: `lower`, `higher`, or `-` for none (a typed `None` in
/// memory, never a sentinel string).
mod direction_or_dash {
    use crate::foundation::threshold::Direction;
    use serde::{Deserialize, Deserializer};

    pub(crate) use crate::foundation::threshold::write_direction_or_dash as serialize;

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Direction>, D::Error> {
        match String::deserialize(d)?.as_str() {
            "-" => Ok(None),
            "lower" => Ok(Some(Direction::Lower)),
            "higher" => Ok(Some(Direction::Higher)),
            other => Err(serde::de::Error::custom(format!(
                "direction `{other}`: expected lower, higher or -"
            ))),
        }
    }
}

/// One reported level shift.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChangeRow {
    pub target: String,
    pub size: String,
    pub kernel: String,
    pub metric: String,
    /// The GPU of the rows (merged results of several GPU types keep their series apart).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub gpu: String,
    pub unit: String,
    /// Which way is better, from the results; written `lower`, `higher`, or `-` when the results
    /// did not say (the file's form since the field exists).
    #[serde(with = "direction_or_dash")]
    pub direction: Option<crate::foundation::threshold::Direction>,
    /// Position in the input list of the first result at the new level.
    pub index: usize,
    /// Median of the series in the segment before the change.
    pub before: f64,
    /// Median of the series in the segment after the change.
    pub after: f64,
    /// The shift, after / before - 1: the Hodges-Lehmann estimate (median of the ratios of a
    /// point after to a point before, over the two neighbouring segments), or the ratio of the
    /// medians when a value is not positive; `None` when `before` is not positive.
    pub change: Option<f64>,
    /// The interval of `change` (Moses, at `1 - level`, given where the change is); absent
    /// when a value is not positive (and in files written before it existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<ShiftInterval>,
    /// Permutation p-value of the split (compare with `level` of the report).
    pub p: f64,
    /// True when the change goes the bad way for this metric (a slow creep).
    pub worse: bool,
    /// The commits on either side of the change, where the results carry them (written as
    /// `commit` and `commit_before`, beside the other fields).
    #[serde(flatten)]
    pub commits: ShiftCommits,
}

/// The commits on either side of a level shift: where `bisect` starts looking.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShiftCommits {
    /// Commit of the first result at the new level, when the results carry it.
    #[serde(rename = "commit", default, skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
    /// Commit of the last result before the change, when known.
    #[serde(rename = "commit_before", default, skip_serializing_if = "Option::is_none")]
    pub before: Option<String>,
}

/// The interval of a shift and the confidence it really has (the order statistics give discrete
/// levels: with few results it is below the `1 - level` asked for).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ShiftInterval {
    pub low: f64,
    pub high: f64,
    pub confidence: f64,
}

/// What one series can find (`stats::change_reach`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeriesReach {
    pub target: String,
    pub size: String,
    pub kernel: String,
    pub metric: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub gpu: String,
    /// Results in the series.
    pub results: usize,
    /// True when no shift of any size can be found in so few results at the level (the
    /// permutation test's smallest p-value is above it).
    pub too_short: bool,
    /// Its noise as a CV (robust to a step); `None` when it cannot be estimated.
    pub noise: Option<f64>,
    /// The smallest shift it finds (at [`POWER`]) and reports (at least `min_change`); `None`
    /// when it is too short, or its noise is unknown.
    pub smallest: Option<f64>,
    /// The shift `needed` is for: the row's relative threshold in the newest results, else
    /// `min_change`.
    pub shift: f64,
    /// Results needed to find `shift` at this noise and level; `None`: more than
    /// `stats::change_reach::MAX_RESULTS`, or the noise is unknown.
    pub needed: Option<usize>,
    /// The fewest results in which any shift can be found at the level, whatever the noise
    /// (what a series too short says it needs when its noise is unknown); 0 in files written
    /// before it was kept.
    #[serde(default)]
    pub fewest: usize,
}

/// What the history can find, over all series.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Reach {
    /// Power at which `smallest` is stated.
    pub power: f64,
    /// Series that can find no shift at all (too short).
    pub too_short: usize,
    /// The median over the series of their smallest shift found (of those that can find one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smallest: Option<f64>,
    /// The series needing the most results for its shift (its `needed` and `shift`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub most_needed: Option<SeriesReach>,
    /// Every series.
    pub series: Vec<SeriesReach>,
}

/// A point of a series: its position in the input list and the candidate median there.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub index: usize,
    pub value: f64,
}

/// A series with at least one reported change, for the charts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeriesPlot {
    pub target: String,
    pub size: String,
    pub kernel: String,
    pub metric: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub gpu: String,
    pub unit: String,
    pub points: Vec<Point>,
    /// Input positions where a reported change starts.
    pub changes: Vec<usize>,
}

impl ChangeRow {
    /// The series this change is in. The kernel is as the changes file writes it (`-` for a
    /// row of no kernel), the same in [`SeriesPlot::key`], so the two match.
    pub fn key(&self) -> RowKey<'_> {
        RowKey {
            gpu: &self.gpu,
            target: &self.target,
            size: &self.size,
            kernel: Some(&self.kernel),
            metric: &self.metric,
        }
    }
}

impl SeriesPlot {
    /// The series (see [`ChangeRow::key`]).
    pub fn key(&self) -> RowKey<'_> {
        RowKey {
            gpu: &self.gpu,
            target: &self.target,
            size: &self.size,
            kernel: Some(&self.kernel),
            metric: &self.metric,
        }
    }
}

/// Everything `changes` found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChangesReport {
    pub schema_version: u32,
    pub tool_version: String,
    /// `e-divisive-means+permutation`.
    pub method: String,
    pub alpha: f64,
    pub min_change: f64,
    pub min_segment: usize,
    /// Series long enough to be searched.
    pub series_tested: usize,
    /// Series too short (fewer than `2 * min_segment` points) to be searched.
    pub series_skipped: usize,
    /// The significance level of every test: `alpha / series_tested`.
    pub level: f64,
    /// Significant shifts smaller than `min_change` (not reported as rows).
    pub below_min_change: usize,
    /// True when any input is synthetic.
    pub synthetic: bool,
    pub files: Vec<InputFile>,
    /// Remarks about the input (order of dates, files without rows).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Reported shifts, worse ones first, then by key and position.
    pub rows: Vec<ChangeRow>,
    /// The series of the reported shifts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub series: Vec<SeriesPlot>,
    /// What the history can find (absent in files written before it existed).
    #[serde(default)]
    pub reach: Reach,
}

impl ChangesReport {
    /// Shifts that go the bad way.
    pub fn worse(&self) -> usize {
        self.rows.iter().filter(|r| r.worse).count()
    }

    /// Write as pretty JSON, atomically (standard output for `-`).
    ///
    /// # Errors
    /// [`crate::Error::Io`] naming the path.
    pub fn write(&self, path: &std::path::Path) -> Result<(), crate::Error> {
        let mut text = serde_json::to_string_pretty(self)
            .map_err(|e| crate::Error::Environment(format!("cannot encode the changes: {e}")))?;
        text.push('\n');
        crate::foundation::fsutil::write_output(path, text.as_bytes())
    }
}

struct Series {
    unit: String,
    direction: Option<crate::outcome::results::Direction>,
    points: Vec<Point>,
    /// The row's relative threshold in the newest file that has it.
    threshold: Option<f64>,
}

/// Find the level shifts in `inputs` (path and results, in time order).
///
/// # Errors
/// Settings out of range (a usage error).
pub fn find_changes(
    inputs: &[(PathBuf, Results)],
    opts: &ChangesOptions,
) -> Result<ChangesReport, crate::Error> {
    check_options(opts)?;
    let mut notes = Vec::new();
    let files = input_files(inputs, &mut notes);
    let series = series_of(inputs, &mut notes);

    let long_enough = |s: &Series| s.points.len() >= 2 * opts.min_segment;
    let tested = series.values().filter(|s| long_enough(s)).count();
    let skipped = series.len() - tested;
    let level = opts.alpha / tested.max(1) as f64;
    let mut rows = Vec::new();
    let mut plots = Vec::new();
    let mut below = 0usize;
    // One shared null per segment length for the whole run (`stats::changepoint`).
    let mut nulls = NullCache::new(opts.seed);
    for (key, s) in series.iter().filter(|(_, s)| long_enough(s)) {
        let (found, plot) = shifts(key, s, &files, opts, level, &mut nulls, &mut below);
        rows.extend(found);
        plots.extend(plot);
    }
    rows.sort_by(|a, b| (!a.worse, a.key(), a.index).cmp(&(!b.worse, b.key(), b.index)));
    let reach = reach(&series, opts, level);
    Ok(ChangesReport {
        schema_version: CHANGES_VERSION,
        tool_version: env!("CARGO_PKG_VERSION").to_owned(),
        method: "e-divisive-means+permutation".to_owned(),
        alpha: opts.alpha,
        min_change: opts.min_change,
        min_segment: opts.min_segment,
        series_tested: tested,
        series_skipped: skipped,
        level,
        below_min_change: below,
        synthetic: files.iter().any(|f| f.synthetic),
        files,
        notes,
        rows,
        series: plots,
        reach,
    })
}

/// The settings must be in range (a usage error otherwise).
fn check_options(opts: &ChangesOptions) -> Result<(), crate::Error> {
    if !(opts.alpha > 0.0 && opts.alpha < 1.0) {
        return Err(crate::Error::Usage(format!(
            "--alpha {} is not between 0 and 1",
            opts.alpha
        )));
    }
    if !(opts.min_change.is_finite() && opts.min_change >= 0.0) {
        return Err(crate::Error::Usage(format!(
            "--min-change {} is not a non-negative fraction",
            opts.min_change
        )));
    }
    if opts.min_segment < 2 {
        return Err(crate::Error::Usage(
            "--min-segment must be at least 2 (a level needs two results to have a spread)".to_owned(),
        ));
    }
    Ok(())
}

/// The input files as the report lists them, with a note when they are not in date order.
fn input_files(inputs: &[(PathBuf, Results)], notes: &mut Vec<String>) -> Vec<InputFile> {
    let files: Vec<InputFile> = inputs
        .iter()
        .map(|(p, r)| InputFile {
            path: p.display().to_string(),
            git_commit: r.git_commit.clone(),
            date: r.date.clone(),
            synthetic: r.synthetic,
        })
        .collect();
    if let Some(i) = (1..files.len()).find(|&i| {
        !files[i].date.is_empty() && !files[i - 1].date.is_empty() && files[i].date < files[i - 1].date
    }) {
        notes.push(format!(
            "{} ({}) is dated before {} ({}): pass the files oldest first",
            files[i].path,
            files[i].date,
            files[i - 1].path,
            files[i - 1].date
        ));
    }
    files
}

/// Each row's series over the files: one point per file, the candidate's median (rows that
/// errored or were missing have none), with a note for a file without measured rows.
fn series_of(inputs: &[(PathBuf, Results)], notes: &mut Vec<String>) -> BTreeMap<OwnedRowKey, Series> {
    let mut series: BTreeMap<OwnedRowKey, Series> = BTreeMap::new();
    for (index, (path, results)) in inputs.iter().enumerate() {
        let mut used = 0usize;
        for row in &results.rows {
            if matches!(row.verdict(), RowVerdict::Error | RowVerdict::Missing) {
                continue;
            }
            let Some(c) = row
                .sides
                .candidate
                .as_ref()
                .filter(|c| c.n > 0 && c.median.is_finite())
            else {
                continue;
            };
            let key = row.key.clone();
            let s = series.entry(key).or_insert_with(|| Series {
                unit: row.unit.clone(),
                direction: row.rule.direction,
                points: Vec::new(),
                threshold: None,
            });
            if let Some(t) = row.rule.threshold.as_ref().and_then(relative_fraction) {
                s.threshold = Some(t);
            }
            // One point per file: a duplicated row (should not happen) keeps the first.
            if s.points.last().is_none_or(|p| p.index != index) {
                s.points.push(Point {
                    index,
                    value: c.median,
                });
                used += 1;
            }
        }
        if used == 0 {
            notes.push(format!("{} has no measured rows", path.display()));
        }
    }
    series
}

/// The level shifts of one series that are at least `min_change` (the others counted in
/// `below`), and its plot when it has any.
fn shifts(
    key: &OwnedRowKey,
    s: &Series,
    files: &[InputFile],
    opts: &ChangesOptions,
    level: f64,
    nulls: &mut NullCache,
    below: &mut usize,
) -> (Vec<ChangeRow>, Option<SeriesPlot>) {
    let mut rows = Vec::new();
    let values: Vec<f64> = s.points.iter().map(|p| p.value).collect();
    let settings = changepoint::Settings {
        level,
        max_permutations: changepoint::Settings::permutations_for(level),
        stop_after_exceedances: 10,
        min_segment: opts.min_segment,
        seed: seed_for(
            opts.seed,
            &format!(
                "{}/{}/{}/{}/{}",
                key.gpu,
                key.target,
                key.size,
                key.kernel_label(),
                key.metric
            ),
        ),
    };
    let cps = e_divisive_shared(&values, &settings, nulls);
    if cps.is_empty() {
        return (Vec::new(), None);
    }
    let mut bounds: Vec<usize> = vec![0];
    bounds.extend(cps.iter().map(|c| c.index));
    bounds.push(values.len());
    let mut reported = Vec::new();
    let mut cache = crate::stats::mannwhitney::NullCache::default();
    for (k, cp) in cps.iter().enumerate() {
        let (left, right) = (
            &values[bounds[k]..bounds[k + 1]],
            &values[bounds[k + 1]..bounds[k + 2]],
        );
        let before = median(left).unwrap_or(f64::NAN);
        let after = median(right).unwrap_or(f64::NAN);
        let shift = crate::stats::hodges_lehmann::relative_shift(right, left, 1.0 - level, &mut cache);
        let change = match shift {
            Some(h) => Some(h.change),
            None => (before > 0.0).then(|| after / before - 1.0),
        };
        if change.is_some_and(|c| c.abs() < opts.min_change) {
            *below += 1;
            continue;
        }
        let worse = change.is_some_and(|c| crate::outcome::decide::shift_is_worse(s.direction, 1.0, 1.0 + c))
            || (change.is_none() && crate::outcome::decide::shift_is_worse(s.direction, before, after));
        let at = s.points[cp.index].index;
        let prev = s.points[cp.index - 1].index;
        reported.push(at);
        rows.push(ChangeRow {
            target: key.target.clone(),
            size: key.size.clone(),
            kernel: key.kernel_label().to_owned(),
            metric: key.metric.clone(),
            gpu: key.gpu.clone(),
            unit: s.unit.clone(),
            direction: s.direction,
            index: at,
            before,
            after,
            change,
            interval: shift.map(|h| ShiftInterval {
                low: h.ci[0],
                high: h.ci[1],
                confidence: h.confidence,
            }),
            p: cp.p,
            worse,
            commits: ShiftCommits {
                at: files[at].git_commit.clone(),
                before: files[prev].git_commit.clone(),
            },
        });
    }
    let plot = (!reported.is_empty()).then(|| SeriesPlot {
        target: key.target.clone(),
        size: key.size.clone(),
        kernel: key.kernel_label().to_owned(),
        metric: key.metric.clone(),
        gpu: key.gpu.clone(),
        unit: s.unit.clone(),
        points: s.points.clone(),
        changes: reported,
    });
    (rows, plot)
}

/// A relative threshold's fraction.
fn relative_fraction(t: &crate::outcome::results::RowThreshold) -> Option<f64> {
    match t.kind {
        crate::foundation::threshold::ThresholdKind::Relative { fraction } => Some(fraction),
        crate::foundation::threshold::ThresholdKind::Exact
        | crate::foundation::threshold::ThresholdKind::Min { .. }
        | crate::foundation::threshold::ThresholdKind::Max { .. } => None,
    }
}

/// What each series can find at `level`, and the summary over them.
fn reach(series: &BTreeMap<OwnedRowKey, Series>, opts: &ChangesOptions, level: f64) -> Reach {
    let fewest = change_reach::fewest_results(opts.min_segment, level).unwrap_or(0);
    let all: Vec<SeriesReach> = series
        .iter()
        .map(|(key, s)| {
            let values: Vec<f64> = s.points.iter().map(|p| p.value).collect();
            let n = values.len();
            let noise = change_reach::noise_cv(&values);
            let too_short = change_reach::too_short(n, opts.min_segment, level);
            // Found and reported: a step at the --min-change floor is estimated below it about
            // half the time (issue 43), so the reach is not the floor.
            let smallest = noise.and_then(|cv| {
                change_reach::smallest_reported(n, cv, level, opts.min_segment, opts.min_change)
            });
            let shift = s.threshold.unwrap_or(opts.min_change).max(opts.min_change);
            let needed =
                noise.and_then(|cv| change_reach::results_needed(shift, cv, level, opts.min_segment));
            SeriesReach {
                target: key.target.clone(),
                size: key.size.clone(),
                kernel: key.kernel_label().to_owned(),
                metric: key.metric.clone(),
                gpu: key.gpu.clone(),
                results: n,
                too_short,
                noise,
                smallest,
                shift,
                needed,
                fewest,
            }
        })
        .collect();
    let found: Vec<f64> = all.iter().filter_map(|r| r.smallest).collect();
    let most_needed = all
        .iter()
        .filter(|r| r.noise.is_some() && r.needed.is_none_or(|n| n > r.results))
        .max_by_key(|r| r.needed.unwrap_or(usize::MAX))
        .cloned();
    Reach {
        power: POWER,
        too_short: all.iter().filter(|r| r.too_short).count(),
        smallest: median(&found),
        most_needed,
        series: all,
    }
}

/// Exit code of `changes`: 1 when a shift goes the bad way, else 0.
pub fn changes_exit_code(
    report: &ChangesReport,
    fail_on: crate::outcome::results::FailOn,
) -> crate::foundation::exit_codes::Exit {
    crate::outcome::decide::changes_exit_code(report.worse(), report.reach.too_short, fail_on)
}

#[cfg(test)]
mod tests;
