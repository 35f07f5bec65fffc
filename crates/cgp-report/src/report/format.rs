//! Formatting shared by every renderer: names, changes with their interval, p-values, the headline.
//!
//! These helpers produce plain text; each renderer escapes it for its own format.

use crate::foundation::units::{Percent, human, percent};
use crate::outcome::decide::Gate;
use crate::outcome::results::{RowVerdict, RunVerdict, SideSummary};
use crate::outcome::view::{RowView, RunView};

/// The name of one row as every report spells it: `gemm[m=4096,n=4096] <kernel> <metric>`.
pub(crate) fn case_name(row: &RowView<'_>) -> String {
    row.key.to_string()
}

/// The kernels whose launch configuration changed since the baseline (`check` decided it:
/// [`RowView::config_change`]), once per target, size and kernel, in row order:
/// `gemm[n=512] `void gemm`: grid (32, 1, 1) block (256, 1, 1) -> grid (64, 1, 1) block (256, 1, 1)`.
pub(crate) fn config_changes(run: RunView<'_>) -> Vec<String> {
    let mut seen: Vec<(&str, &str, Option<&str>)> = Vec::new();
    let mut out = Vec::new();
    for r in sorted_rows(run) {
        let Some(c) = r.config_change else { continue };
        let key = r.key;
        let id = (key.target.as_str(), key.size.as_str(), key.kernel_name());
        if seen.contains(&id) {
            continue;
        }
        seen.push(id);
        out.push(format!(
            "{} `{}`: {}",
            crate::measured::samples::target_size(&key.target, &key.size),
            r.key.kernel_label(),
            c.describe()
        ));
    }
    out
}

/// The heading of the configuration-change note, the same in every report.
pub(crate) const CONFIG_CHANGE_NOTE: &str =
    "launch configuration changed since the baseline (still compared as one series)";

/// A row's reason, with its launch configuration change when it has one.
pub(crate) fn reason_with_config(row: &RowView<'_>) -> String {
    match row.config_change {
        Some(c) => format!("{}; launch configuration changed: {}", row.reason, c.describe()),
        None => row.reason.to_owned(),
    }
}

/// What an inconclusive row could have found (issue 57): `this run could detect changes of about
/// 5.20% or more`, from its `detectable` (the statistics' number, `stats::power`); `None` for
/// another verdict or a row without one. The console prints it beside the verdict (its reason
/// line is shortened); the full reason, which every other format shows, ends with it.
pub(crate) fn reach(row: &RowView<'_>) -> Option<String> {
    if row.verdict != RowVerdict::Inconclusive {
        return None;
    }
    row.detectable().map(crate::stats::power::short)
}

/// What a row's test left out as the machine's (far launches, slow-side dips, disturbed
/// processes) or kept as the code's (issue 43), in one sentence with the counts per side; `None`
/// when nothing was. Every format prints it beside the row (docs/statistics.md 2.5).
pub(crate) fn left_out(row: &RowView<'_>) -> Option<String> {
    let l = row.left_out().filter(|l| !l.is_empty())?;
    Some(l.sentence())
}

/// Every row with something left out or kept as the code's: `target[size] metric: sentence`.
pub(crate) fn left_out_lines(run: RunView<'_>) -> Vec<String> {
    run.rows()
        .filter_map(|r| {
            left_out(&r).map(|s| {
                let key = r.key;
                format!(
                    "{} {} {}: {s}",
                    crate::measured::samples::target_size(&key.target, &key.size),
                    key.kernel_label(),
                    key.metric
                )
            })
        })
        .collect()
}

/// A change (a fraction: `0.0424`) as every report prints it: `+4.24%`, signed, two decimals,
/// the same rounding as the verdict's reason sentence, so a row reads the same number in the
/// console, the comment, the HTML page, JUnit, the annotations and its reason.
pub(crate) fn change_pct(fraction: f64) -> String {
    if fraction.is_finite() {
        percent(fraction, Percent::Signed2)
    } else {
        "n/a".to_owned()
    }
}

/// The row's change, the one number its verdict used (`RowView::change`): `+4.24%`, `n/a`
/// without one.
pub(crate) fn change_text(row: &RowView<'_>) -> String {
    row.change().map_or_else(|| "n/a".to_owned(), change_pct)
}

/// The row's interval, the one its verdict used (`RowView::interval`): `[+2.63%, +5.87%]`.
pub(crate) fn interval(row: &RowView<'_>) -> Option<String> {
    row.interval()
        .map(|[lo, hi]| format!("[{}, {}]", change_pct(lo), change_pct(hi)))
}

/// The change with its interval: `+4.24% [+2.63%, +5.87%]`, `+4.24%` without one, `n/a`
/// without a change. Every report prints a row's change through this function (or through
/// [`change_text`] and [`interval`], which it joins).
pub(crate) fn change_with_ci(row: &RowView<'_>) -> String {
    match (row.change(), interval(row)) {
        (Some(_), Some(i)) => format!("{} {i}", change_text(row)),
        _ => change_text(row),
    }
}

/// The confidence level of the intervals of `rows` when they all share one (`95% CI`), for a
/// column header; `None` when they differ (each cell then says its own, [`change_cell`]) or no
/// row has an interval.
pub(crate) fn common_ci_label<'a>(rows: impl IntoIterator<Item = RowView<'a>>) -> Option<String> {
    let mut labels = rows
        .into_iter()
        .filter(|r| r.interval().is_some())
        .map(|r| ci_label(&r));
    let first = labels.next()??;
    labels
        .all(|l| l.as_deref() == Some(first.as_str()))
        .then_some(first)
}

/// A change cell of a table whose header names the level `common` ([`common_ci_label`]): the
/// change with its interval, and the interval's own level when the header cannot say it
/// (`+4.24% [+2.63%, +5.87%] (99.3% CI)`).
pub(crate) fn change_cell(row: &RowView<'_>, common: Option<&str>) -> String {
    let text = change_with_ci(row);
    match ci_label(row) {
        Some(l) if row.interval().is_some() && common != Some(l.as_str()) => {
            format!("{text} ({l})")
        }
        _ => text,
    }
}

/// What the medians are, wherever they are shown beside the change: context, not the estimate.
/// `base` is the reference (the stored baseline in `check`, the base commit in `ab`), `head` this
/// run (the candidate).
pub(crate) const MEDIANS_LABEL: &str = "median base → head";

/// The two medians as context: `25.74 us → 26.61 us` (`-` for a side that is absent).
pub(crate) fn medians(row: &RowView<'_>) -> String {
    let (b, c) = same_decimals(
        &median(row.sides.baseline.as_ref(), row.unit),
        &median(row.sides.candidate.as_ref(), row.unit),
    );
    format!("{b} → {c}")
}

/// Two numbers shown side by side with as many decimals each (`71.18 → 72.00`, not `71.18 → 72`,
/// issue 46): the number that leads each text (before a unit) gets zeros up to the other's
/// decimals. Text that does not start with a number is left as it is.
pub(crate) fn same_decimals(a: &str, b: &str) -> (String, String) {
    fn split(t: &str) -> Option<(&str, &str)> {
        let end = t.find(' ').unwrap_or(t.len());
        let (num, rest) = t.split_at(end);
        num.parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .map(|_| (num, rest))
    }
    let (Some((na, ra)), Some((nb, rb))) = (split(a), split(b)) else {
        return (a.to_owned(), b.to_owned());
    };
    let decimals = |n: &str| n.find('.').map_or(0, |i| n.len() - i - 1);
    let want = decimals(na).max(decimals(nb));
    let pad = |n: &str| {
        let have = decimals(n);
        if have >= want {
            n.to_owned()
        } else {
            format!(
                "{n}{}{}",
                if have == 0 { "." } else { "" },
                "0".repeat(want - have)
            )
        }
    };
    (format!("{}{ra}", pad(na)), format!("{}{rb}", pad(nb)))
}

/// The medians in a sentence, labelled as context: `median base 246.9 us → head 256.8 us`.
pub(crate) fn medians_sentence(row: &RowView<'_>) -> String {
    let (b, c) = same_decimals(
        &median(row.sides.baseline.as_ref(), row.unit),
        &median(row.sides.candidate.as_ref(), row.unit),
    );
    format!("median base {b} → head {c}")
}

/// The confidence level as a label: `95% CI`.
pub(crate) fn ci_label(row: &RowView<'_>) -> Option<String> {
    let c = row.confidence()?;
    // The exact coverage of a distribution-free interval is a number like 95.107%; people read
    // the level, so round it to a tenth.
    c.is_finite().then(|| {
        let pct = (c * 1000.0).round() / 10.0;
        format!("{}% CI", crate::foundation::units::format_number(pct))
    })
}

/// What the p column of every report is, in the same words everywhere (issue 46): the console,
/// Markdown and HTML print it under their table, JUnit's messages name it `p (adj.)`.
pub(crate) const P_NOTE: &str = "p (adj.): the p-value of the test the row's verdict used (a change beyond its threshold, or beyond its limit), adjusted for the run's tests (holm); a reason's p \"against no change\" is another test and says so";

/// A p-value for people: `0.0123`, `1.5e-6`, `n/a`; `<1e-300` where it underflowed to 0 (no
/// test gives a p of 0).
pub(crate) fn p_value(p: Option<f64>) -> String {
    match p {
        Some(p) if p.is_finite() && p >= 0.001 => format!("{p:.3}"),
        Some(0.0) => "<1e-300".to_owned(),
        Some(p) if p.is_finite() => format!("{p:.1e}"),
        _ => "n/a".to_owned(),
    }
}

/// The median of one side in human units, or `-` when the side is absent.
pub(crate) fn median(side: Option<&SideSummary>, unit: &str) -> String {
    side.map_or_else(|| "-".to_owned(), |s| human(s.median, unit))
}

/// The GPU the run measured, for headlines; every GPU, joined with `, `, for merged results of
/// several GPU types.
pub(crate) fn gpu_label(run: RunView<'_>) -> String {
    let gpus = run.gpus();
    if gpus.len() > 1 {
        return gpus.join(", ");
    }
    let name = match run.fingerprint.gpu_name.known() {
        Some(name) if !name.is_empty() => name.to_owned(),
        _ => "an unknown GPU".to_owned(),
    };
    if run.fingerprint.synthetic {
        // `CGP_GATE_STAND_IN_GPU`: every field of the GPU was made up (docs/gpu.md).
        format!("{STAND_IN} ({name})")
    } else {
        name
    }
}

/// How every report names the GPU of a run on the stand-in of `CGP_GATE_STAND_IN_GPU`.
pub(crate) const STAND_IN: &str = "the SYNTHETIC stand-in GPU";

/// For a replayed recording whose manifest says it was measured on a GPU (`"synthetic": false`
/// and a named GPU in its fingerprint): `NVIDIA H100 80GB HBM3, real capture (ncu 2025.3.1.0)`.
/// `None` for live runs (the report's GPU line says it), synthetic data and recordings without a
/// manifest (their GPU is unknown).
pub(crate) fn real_capture(run: RunView<'_>) -> Option<String> {
    let fp = run.fingerprint;
    let named = fp.gpu_name.known().is_some_and(|n| !n.is_empty());
    if run.synthetic || !named || run.source.replay_dir().is_none() {
        return None;
    }
    let profiler = if fp.profiler_version.as_str().is_empty() {
        String::new()
    } else {
        format!(" ({} {})", fp.profiler, fp.profiler_version)
    };
    Some(format!("{}, real capture{profiler}", gpu_label(run)))
}

/// What the table of rows that need a look says when it has none. A run with errors did not
/// pass, and the sentence right above its list of errors must not read as a pass.
pub(crate) fn nothing_to_look_at(run: RunView<'_>) -> String {
    let errors = count(run, RowVerdict::Error) + run.errors.len();
    let judged = run
        .rows()
        .filter(|r| {
            !matches!(
                r.verdict,
                RowVerdict::Missing | RowVerdict::New | RowVerdict::Error
            )
        })
        .count();
    match (errors, judged) {
        (0, 0) => "No row was judged.".to_owned(),
        (0, _) => "No regressions, improvements or inconclusive rows.".to_owned(),
        (e, 0) => format!(
            "No row was judged: the run failed with {} (below); this is not a pass.",
            plural(e, "error", "errors")
        ),
        (e, _) => format!(
            "No judged row regressed, improved or stayed inconclusive, but the run has {} (below): this is not a pass.",
            plural(e, "error", "errors")
        ),
    }
}

/// Rows in report order: regressions first, then errors, inconclusive, improvements, passes, new,
/// missing (the order of [`RowVerdict`]); the run's own order within a verdict.
pub(crate) fn sorted_rows(run: RunView<'_>) -> Vec<RowView<'_>> {
    let mut rows: Vec<RowView<'_>> = run.rows().collect();
    rows.sort_by_key(|r| r.verdict);
    rows
}

/// How many rows of the run have verdict `v`.
pub(crate) fn count(run: RunView<'_>, v: RowVerdict) -> usize {
    run.rows().filter(|r| r.verdict == v).count()
}

pub(crate) fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The one-line outcome: `2 regressions, 1 inconclusive, 1 error on NVIDIA H200`, or
/// `pass: 12 rows on NVIDIA H200`. The verdict is the run's; this only counts.
pub(crate) fn headline(run: RunView<'_>) -> String {
    let regressions = count(run, RowVerdict::Regression);
    let inconclusive = count(run, RowVerdict::Inconclusive);
    let errors = count(run, RowVerdict::Error) + run.errors.len();
    let improvements = count(run, RowVerdict::Improvement);
    let mut parts = Vec::new();
    if regressions > 0 {
        parts.push(plural(regressions, "regression", "regressions"));
    }
    if errors > 0 {
        parts.push(plural(errors, "error", "errors"));
    }
    if inconclusive > 0 {
        parts.push(format!("{inconclusive} inconclusive"));
    }
    let missing = run.rows().filter(|r| r.gate.is_failing_missing()).count();
    if missing > 0 {
        parts.push(format!("{missing} missing (not measured)"));
    }
    if improvements > 0 {
        parts.push(plural(improvements, "improvement", "improvements"));
    }
    let counted = parts.join(", ");
    let gpu = gpu_label(run);
    let rows = plural(run.rows().len(), "row", "rows");
    match (run.verdict, counted.is_empty()) {
        (RunVerdict::Pass, true) => format!("pass: {rows} on {gpu}"),
        (RunVerdict::Pass, false) => format!("pass: {rows} on {gpu} ({counted})"),
        (v, true) => format!("{}: {rows} on {gpu}", v.as_str()),
        (_, false) => format!("{counted} on {gpu}"),
    }
}

/// The run's symbol, for headlines (the headline's words carry the meaning): its gate status as
/// decided by `decide::run_gate` (`RunView::gate`), so an inconclusive run under `--fail-on
/// inconclusive` shows as the failure its exit code says it is.
pub(crate) fn verdict_badge(run: RunView<'_>) -> &'static str {
    match run.gate {
        Gate::Pass => "✅",
        Gate::Fail => "❌",
        Gate::Warn => "⚠️",
        Gate::Error => "💥",
    }
}

/// A row's badge in a report: `⏭️ unchanged` for a row the SASS cache skipped, and a row that
/// fails the gate ([`crate::outcome::decide::row_gate`]) marked as a failure whatever its verdict
/// (`❌ missing`, `❌ inconclusive` under `--fail-on inconclusive`).
pub(crate) fn gate_badge(row: &RowView<'_>) -> String {
    if let Some(s) = &row.skipped {
        format!("⏭️ {}", s.label())
    } else if row.gate.fails_beyond_its_verdict() {
        format!("❌ {}", row.verdict.as_str())
    } else {
        row_badge(row.verdict).to_owned()
    }
}

/// A row verdict with a symbol that reads without colour.
pub(crate) fn row_badge(v: RowVerdict) -> &'static str {
    match v {
        RowVerdict::Regression => "❌ regression",
        RowVerdict::Error => "💥 error",
        RowVerdict::Inconclusive => "⚠️ inconclusive",
        RowVerdict::Improvement => "🚀 improvement",
        RowVerdict::Pass => "✅ pass",
        RowVerdict::New => "🆕 new",
        RowVerdict::Missing => "❔ missing",
    }
}

/// The trend of a row's median over the older baselines, the baseline and this run, in one
/// unit: `117.0 → 117.2 → 124.1 us`. `None` without history (nothing older than the baseline)
/// or without both sides.
pub(crate) fn trend(row: &RowView<'_>) -> Option<String> {
    trend_of(row.history, row.sides, row.unit)
}

/// [`trend`] of a row's history, sides and unit.
fn trend_of(history: &[f64], sides: &crate::outcome::results::Sides, unit: &str) -> Option<String> {
    if history.is_empty() {
        return None;
    }
    let (b, c) = (sides.baseline.as_ref()?, sides.candidate.as_ref()?);
    let mut points: Vec<f64> = history.iter().copied().filter(|x| x.is_finite()).collect();
    points.push(b.median);
    points.push(c.median);
    let max = points.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
    let (div, unit) = axis_scale(max, unit);
    // Four significant digits of the largest value, so that a 0.2% step is visible.
    let digits = if max / div >= 1000.0 {
        0
    } else if max / div >= 100.0 {
        1
    } else if max / div >= 10.0 {
        2
    } else {
        3
    };
    let nums: Vec<String> = points.iter().map(|x| format!("{:.*}", digits, x / div)).collect();
    Some(format!("{} {unit}", nums.join(" → ")))
}

/// Shorten text to at most `max` characters, marking the cut with `…`.
pub fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut s: String = text.chars().take(max.saturating_sub(1)).collect();
    s.push('…');
    s
}

/// A scale for plotting values of a base unit: (divide by, unit label). Mirrors [`human`]'s steps
/// so that an axis and the tables agree.
pub(crate) fn axis_scale(max_abs: f64, unit: &str) -> (f64, String) {
    match crate::foundation::units::display_steps(unit) {
        Some(steps) => {
            let (f, name) = crate::foundation::units::display_step(max_abs, steps);
            (f, name.to_owned())
        }
        None => (1.0, unit.to_owned()),
    }
}

/// The SASS cache's line (docs/sass-cache.md): how many kernels were not profiled because their
/// machine code equals the baseline's, and the kernel GPU time that saved. `None` when nothing
/// was skipped.
pub(crate) fn sass_skip_line(run: RunView<'_>) -> Option<String> {
    let s = run.sass_skip.filter(|s| s.kernels > 0)?;
    let rows = run.rows().filter(|r| r.skipped.is_some()).count();
    let saved = s.gpu_time_saved_ns.map_or_else(String::new, |ns| {
        format!(
            "; saved {} of kernel GPU time (baseline medians x repetitions, ncu replay and start-up not counted)",
            human(ns, "ns")
        )
    });
    Some(format!(
        "{} in {} not profiled: unchanged (same machine code as the baseline, {}){saved}",
        plural(s.kernels, "kernel", "kernels"),
        plural(s.sizes, "size", "sizes"),
        plural(rows, "row", "rows"),
    ))
}

/// What the why of `profiler: cupti` rows cost (docs/cupti.md): the sizes ncu profiled once for
/// their counters, and ncu's seconds. `None` when ncu ran for none.
pub(crate) fn why_cost_line(run: RunView<'_>) -> Option<String> {
    let c = Some(run.why_cost).filter(|c| c.sizes > 0)?;
    Some(format!(
        "cupti: ncu profiled {} once for the counters that say why a time changed: {:.1} s of ncu",
        plural(c.sizes, "size", "sizes"),
        c.seconds
    ))
}

/// A row's verdict as reports print it: the skip reason's label (`unchanged` for rows the SASS
/// cache skipped, a pass) in place of the verdict, from the typed [`crate::outcome::results::SkipReason`].
pub(crate) fn verdict_word(row: &RowView<'_>) -> &'static str {
    row.skipped
        .map_or(row.verdict.as_str(), crate::outcome::results::SkipReason::label)
}

/// `gpu__time_duration.sum` -> `time`; other metrics keep their name.
pub(crate) fn short_metric(metric: &str) -> &str {
    match metric {
        "gpu__time_duration.sum" | "gpu__time_duration.avg" => "time",
        m => m,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_side_by_side_have_as_many_decimals() {
        assert_eq!(same_decimals("71.18", "72"), ("71.18".into(), "72.00".into()));
        assert_eq!(
            same_decimals("72 us", "71.5 us"),
            ("72.0 us".into(), "71.5 us".into())
        );
        assert_eq!(same_decimals("16", "16"), ("16".into(), "16".into()));
        assert_eq!(same_decimals("-", "72"), ("-".into(), "72".into()));
    }

    #[test]
    fn percentages_keep_precision_for_small_changes() {
        assert_eq!(percent(0.0669, Percent::Change), "+6.7%");
        assert_eq!(percent(-0.0042, Percent::Change), "-0.42%");
        assert_eq!(percent(f64::NAN, Percent::Change), "n/a");
        assert_eq!(change_pct(0.0423770722), "+4.24%");
        assert_eq!(change_pct(-0.0027), "-0.27%");
        assert_eq!(change_pct(f64::NAN), "n/a");
    }

    #[test]
    fn p_values_switch_to_exponent_when_tiny() {
        assert_eq!(p_value(Some(0.0123)), "0.012");
        assert_eq!(p_value(Some(1.53e-6)), "1.5e-6");
        assert_eq!(p_value(None), "n/a");
    }

    #[test]
    fn trend_runs_from_the_oldest_baseline_to_this_run_in_one_unit() {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/results/mixed.json"
        ))
        .unwrap();
        let results = crate::outcome::results::parse(&text).unwrap();
        let mut row = results
            .rows
            .iter()
            .find(|r| r.sides.baseline.is_some() && r.sides.candidate.is_some())
            .unwrap()
            .clone();
        row.history.clear();
        assert_eq!(
            trend_of(&row.history, &row.sides, &row.unit),
            None,
            "no older generation: no trend"
        );
        row.unit = "ns".to_owned();
        row.history = vec![117_000.0, 117_200.0];
        row.sides.baseline.as_mut().unwrap().median = 117_400.0;
        row.sides.candidate.as_mut().unwrap().median = 124_100.0;
        assert_eq!(
            trend_of(&row.history, &row.sides, &row.unit).as_deref(),
            Some("117.0 → 117.2 → 117.4 → 124.1 us")
        );
        row.history = vec![f64::NAN, 999.0];
        row.sides.baseline.as_mut().unwrap().median = 1_000.0;
        row.sides.candidate.as_mut().unwrap().median = 1_500.0;
        assert_eq!(
            trend_of(&row.history, &row.sides, &row.unit).as_deref(),
            Some("0.999 → 1.000 → 1.500 us")
        );
    }

    #[test]
    fn shorten_counts_characters_not_bytes() {
        assert_eq!(shorten("äöüäöü", 4), "äöü…");
        assert_eq!(shorten("abc", 3), "abc");
    }
}
