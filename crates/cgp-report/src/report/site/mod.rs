//! The history site (`cgp-gate history`): one self-contained HTML page of main's history, one
//! chart per series (GPU x target x size x kernel x metric), with the change points `changes`
//! found. It renders decided results and a [`ChangesReport`]; it decides nothing and writes
//! nothing (the command writes the page).
//!
//! Each point is the row's decided estimate on the metric's scale: the baseline's median times
//! `1 + change` (the change the verdict used), with its interval the same way; a row compared
//! with nothing (`new`, imported) is its candidate's median, and a `min:`/`max:` row's interval
//! is its median's. The threshold is the row's `limit` (where the candidate crosses it, relative
//! to the baseline it was judged against). The hover text prints the change exactly as every
//! other report does (`format::change_with_ci`).
//!
//! The data travels as one JSON blob in a `<script type="application/json">` element and a
//! small hand-written script draws each chart as it scrolls into view, so 10,000 results over 500
//! series load without drawing 500 charts up front (docs/history.md has the measurements). No
//! chart library: a CDN is out (the page must work offline and from `file://`) and the charts are
//! a few SVG paths; the script sets names through `textContent` only.

mod page;

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;

pub use page::escape_script_json;

use crate::history::{ChangeRow, ChangesReport};
use crate::outcome::decide::Gate;
use crate::outcome::results::{OwnedRowKey, Results, RowVerdict};
use crate::outcome::view::{RowView, RunView};
use crate::report::text::visible;

/// What the page is drawn from.
pub struct SiteInput<'a> {
    /// The history, oldest first (imported github-action-benchmark results first, if any).
    pub inputs: &'a [(PathBuf, Results)],
    /// What `changes` found over the same inputs.
    pub changes: &'a ChangesReport,
    /// Where a commit's page is: this and its SHA (`https://github.com/OWNER/NAME/commit/`).
    pub commit_url: Option<&'a str>,
    /// The page's heading.
    pub title: &'a str,
}

#[derive(Serialize)]
struct SiteData {
    title: String,
    tool_version: &'static str,
    /// The address of a commit's page without its SHA.
    commit_url: Option<String>,
    synthetic: bool,
    /// Significance level of each change-point test.
    level: f64,
    /// Series too short to find a level shift at that level (what `changes` says too).
    too_short: usize,
    /// The header's sentence about them (empty when none is), e.g. `The history is too short to
    /// find a level shift in 3 of 3 series: 6 results, 15 needed.`
    too_short_note: String,
    commits: Vec<CommitOut>,
    series: Vec<SeriesOut>,
}

#[derive(Serialize)]
struct CommitOut {
    sha: String,
    date: String,
    file: String,
}

#[derive(Serialize, Default)]
struct SeriesOut {
    id: String,
    gpu: String,
    target: String,
    size: String,
    kernel: String,
    metric: String,
    unit: String,
    dir: &'static str,
    /// Positions in `commits`.
    x: Vec<usize>,
    /// The decided estimate, on the metric's scale.
    y: Vec<f64>,
    lo: Vec<Option<f64>>,
    hi: Vec<Option<f64>>,
    /// Where the threshold was, relative to the baseline of that run.
    thr: Vec<Option<f64>>,
    /// The change and its interval as every report prints it (`+4.24% [+2.63%, +5.87%]`).
    t: Vec<String>,
    /// The row's gate status: `f` fail, `w` warn, `p` pass.
    g: Vec<&'static str>,
    cps: Vec<CpOut>,
    worse: bool,
    /// Empty, or why no shift can be found in it: `too short to find a level shift: 6 results,
    /// 15 needed for a +3.00% shift` (issue 59: the page said "No level shift found" above a
    /// chart that stepped up 4 %).
    short: String,
}

#[derive(Serialize)]
struct CpOut {
    at: usize,
    /// The shift as `changes` prints it, with its interval.
    text: String,
    change: Option<f64>,
    before: f64,
    after: f64,
    worse: bool,
}

/// The page.
pub fn page(input: &SiteInput<'_>) -> String {
    page::render(&escape_script_json(&data_json(input)))
}

/// The page's data as JSON (what the script draws).
pub fn data_json(input: &SiteInput<'_>) -> String {
    serde_json::to_string(&data(input)).unwrap_or_else(|_| "{}".to_owned())
}

/// How many series the page has a chart for: one per key with at least one point.
pub fn series_count(input: &SiteInput<'_>) -> usize {
    data(input).series.len()
}

fn data(input: &SiteInput<'_>) -> SiteData {
    let commits = input
        .inputs
        .iter()
        .map(|(p, r)| CommitOut {
            sha: visible(r.git_commit.as_deref().unwrap_or("")),
            date: visible(&r.date),
            file: visible(
                &p.file_name()
                    .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
            ),
        })
        .collect();
    let mut series: BTreeMap<OwnedRowKey, SeriesOut> = BTreeMap::new();
    for (index, (_, results)) in input.inputs.iter().enumerate() {
        for row in RunView::from(results).rows() {
            let Some(p) = point(&row) else { continue };
            let s = series.entry(row.key.clone()).or_insert_with(|| new_series(&row));
            if s.x.last() == Some(&index) {
                continue; // one point per file, as `changes` keeps it
            }
            s.x.push(index);
            s.y.push(p.y);
            s.lo.push(p.band.map(|b| b.0));
            s.hi.push(p.band.map(|b| b.1));
            s.thr.push(row.crossing().filter(|l| l.is_finite()));
            s.t.push(
                row.change()
                    .map_or_else(String::new, |_| crate::report::format::change_with_ci(&row)),
            );
            s.g.push(match row.gate.gate() {
                Gate::Fail | Gate::Error => "f",
                Gate::Warn => "w",
                Gate::Pass => "p",
            });
        }
    }
    let mut series: Vec<SeriesOut> = series.into_values().collect();
    // A change row names its kernel by its label (`-` for a row of no kernel), so series are
    // matched by their labels.
    for c in &input.changes.rows {
        let k = c.key();
        let same = |s: &&mut SeriesOut| {
            (
                s.gpu.as_str(),
                s.target.as_str(),
                s.size.as_str(),
                s.kernel.as_str(),
                s.metric.as_str(),
            ) == (
                visible(k.gpu).as_str(),
                visible(k.target).as_str(),
                visible(k.size).as_str(),
                visible(&c.kernel).as_str(),
                visible(k.metric).as_str(),
            )
        };
        if let Some(s) = series.iter_mut().find(same) {
            s.worse |= c.worse;
            s.cps.push(change_point(c));
        }
    }
    let (too_short, too_short_note) = mark_too_short(&mut series, input.changes);
    // Changed series first, worse ones first, the largest shift first; then by name.
    series.sort_by(|a, b| {
        let size = |s: &SeriesOut| {
            s.cps
                .iter()
                .filter_map(|c| c.change)
                .fold(0.0_f64, |m, c| m.max(c.abs()))
        };
        (b.worse, !b.cps.is_empty())
            .cmp(&(a.worse, !a.cps.is_empty()))
            .then(size(b).total_cmp(&size(a)))
    });
    SiteData {
        title: visible(input.title),
        tool_version: env!("CARGO_PKG_VERSION"),
        commit_url: input.commit_url.map(visible),
        synthetic: input.changes.synthetic || input.inputs.iter().any(|(_, r)| r.synthetic),
        level: input.changes.level,
        too_short,
        too_short_note,
        commits,
        series,
    }
}

/// The results a series too short needs: for its threshold's shift at its noise where that is
/// known, else for any shift at the level.
fn needed_text(r: &crate::history::SeriesReach) -> String {
    use crate::foundation::units::{Percent, percent};
    match r.needed {
        Some(n) if n > r.results => format!("{n} needed for a {} shift", percent(r.shift, Percent::Signed2)),
        _ if r.fewest > r.results => format!("at least {} needed", r.fewest),
        _ => "more needed".to_owned(),
    }
}

/// Mark each series `changes` found too short to search, and say so once for the page: how many
/// series, and the results they have and need. Series are matched by their labels, as change rows.
fn mark_too_short(series: &mut [SeriesOut], changes: &ChangesReport) -> (usize, String) {
    let mut short = Vec::new();
    for r in changes.reach.series.iter().filter(|r| r.too_short) {
        let same = |s: &&mut SeriesOut| {
            (
                s.gpu.as_str(),
                s.target.as_str(),
                s.size.as_str(),
                s.kernel.as_str(),
                s.metric.as_str(),
            ) == (
                visible(&r.gpu).as_str(),
                visible(&r.target).as_str(),
                visible(&r.size).as_str(),
                visible(&r.kernel).as_str(),
                visible(&r.metric).as_str(),
            )
        };
        if let Some(s) = series.iter_mut().find(same) {
            s.short = format!(
                "too short to find a level shift: {} results, {}",
                r.results,
                needed_text(r)
            );
            short.push(r);
        }
    }
    let Some(most) = short
        .iter()
        .max_by_key(|r| (r.needed.unwrap_or(r.fewest), r.fewest))
    else {
        return (0, String::new());
    };
    let fewest_had = short.iter().map(|r| r.results).min().unwrap_or(0);
    let had = if fewest_had == most.results {
        format!("{} results", most.results)
    } else {
        format!(
            "{fewest_had} to {} results",
            short.iter().map(|r| r.results).max().unwrap_or(0)
        )
    };
    let note = format!(
        "The history is too short to find a level shift in {} of {} series: {had}, {} (each series says what it needs).",
        short.len(),
        series.len(),
        needed_text(most)
    );
    (short.len(), note)
}

fn new_series(row: &RowView<'_>) -> SeriesOut {
    let key = row.key;
    SeriesOut {
        id: crate::history::anchor(&crate::outcome::results::RowKey {
            gpu: &key.gpu,
            target: &key.target,
            size: &key.size,
            kernel: key.kernel_name(),
            metric: &key.metric,
        }),
        gpu: visible(&key.gpu),
        target: visible(&key.target),
        size: visible(&key.size),
        kernel: visible(row.key.kernel_label()),
        metric: visible(&key.metric),
        unit: visible(row.unit),
        dir: row.direction,
        ..SeriesOut::default()
    }
}

struct Point {
    y: f64,
    band: Option<(f64, f64)>,
}

/// A row's point: its decided estimate on the metric's scale (see the module); `None` for rows
/// `changes` leaves out too (errors, missing rows, rows without a measured candidate).
fn point(row: &RowView<'_>) -> Option<Point> {
    if matches!(row.verdict, RowVerdict::Error | RowVerdict::Missing) {
        return None;
    }
    let base = row
        .sides
        .baseline
        .as_ref()
        .map(|b| b.median)
        .filter(|m| m.is_finite() && *m > 0.0);
    let on_scale = |b: f64, c: f64| b * (1.0 + c);
    let p = match (base, row.change()) {
        (Some(b), Some(c)) if c.is_finite() => Point {
            y: on_scale(b, c),
            band: row
                .interval()
                .filter(|[l, h]| l.is_finite() && h.is_finite())
                .map(|[l, h]| (on_scale(b, l), on_scale(b, h))),
        },
        _ => {
            let c = row
                .sides
                .candidate
                .as_ref()
                .filter(|c| c.n > 0 && c.median.is_finite())?;
            Point {
                y: c.median,
                band: row
                    .median_interval()
                    .filter(|[l, h]| l.is_finite() && h.is_finite())
                    .map(|[l, h]| (l, h)),
            }
        }
    };
    p.y.is_finite().then_some(p)
}

fn change_point(c: &ChangeRow) -> CpOut {
    // The shift as `changes` prints it, with the confidence its interval really has.
    let text = match c.interval {
        Some(i) => format!(
            "{} ({} CI)",
            crate::report::changes::row_change(c),
            confidence(i.confidence)
        ),
        None => crate::report::changes::row_change(c),
    };
    CpOut {
        at: c.index,
        text,
        change: c.change,
        before: c.before,
        after: c.after,
        worse: c.worse,
    }
}

/// A confidence with the digits it needs to differ from 100%: `95.0%`, `99.998%`.
fn confidence(c: f64) -> String {
    let decimals = if c < 1.0 {
        ((-(1.0 - c).log10() - 1e-9).ceil() as usize)
            .saturating_sub(2)
            .clamp(1, 6)
    } else {
        1
    };
    format!("{:.*}%", decimals, c * 100.0)
}

#[cfg(test)]
mod tests;
