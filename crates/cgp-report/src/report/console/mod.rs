//! Plain-text tables for the terminal.

use crate::foundation::units::human;
use crate::outcome::decide::Gate;
use crate::outcome::results::RowVerdict;
use crate::outcome::view::{RowView, RunView};
use crate::report::format::{headline, p_value, sorted_rows};

/// One line on the GPU's health during the run (every report shows it).
pub fn health_line(h: &crate::outcome::results::Health) -> String {
    if h.sm_clock_mhz.is_none() && h.temperature_c.is_none() && h.power_w.is_none() && h.throttled_reps == 0 {
        return "GPU health not sampled (replay, or no NVML)".to_owned();
    }
    let mut parts = Vec::new();
    if let Some([a, b]) = h.sm_clock_mhz {
        parts.push(format!("SM clock {a}-{b} MHz"));
    }
    if let Some([a, b]) = h.mem_clock_mhz {
        parts.push(format!("memory clock {a}-{b} MHz"));
    }
    if let Some([a, b]) = h.temperature_c {
        parts.push(format!("temperature {a}-{b} C"));
    }
    if let Some([a, b]) = h.power_w {
        parts.push(format!("power {a:.0}-{b:.0} W"));
    }
    if let Some(e) = h.energy_j {
        parts.push(format!("energy {e:.1} J"));
    }
    parts.push(format!(
        "{} throttled repetition(s), {} re-run after throttling",
        h.throttled_reps, h.rerun_reps
    ));
    parts.join(", ")
}

/// [`health_line`] of a run's results: on the SYNTHETIC stand-in GPU of `CGP_GATE_STAND_IN_GPU`
/// its clocks, temperature and power are made up, and the line says so.
pub fn run_health_line<'a>(run: impl Into<RunView<'a>>) -> String {
    let run = run.into();
    let line = health_line(run.health);
    if run.fingerprint.synthetic {
        format!("{line} (made up by {})", crate::report::format::STAND_IN)
    } else {
        line
    }
}

/// How the console table is drawn: the width to fit (`None`: as wide as the content, for logs
/// and pipes) and whether verdicts are coloured.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ConsoleStyle {
    pub width: Option<usize>,
    pub color: bool,
}

/// `--color`: whether verdicts are coloured.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ColorChoice {
    /// On a terminal, unless `NO_COLOR` is set, `TERM` is `dumb` or this is a GitHub Actions log;
    /// anywhere when `CLICOLOR_FORCE` is set.
    #[default]
    Auto,
    Always,
    Never,
}

impl ColorChoice {
    /// Whether to colour a stream. `env` reads an environment variable (injected for tests).
    /// `--color always` wins over `NO_COLOR` (no-color.org: a flag given for one run overrides
    /// the environment); GitHub Actions renders colour but gets it only when asked (the flag or
    /// `CLICOLOR_FORCE`), so logs that are copied into issues stay plain.
    pub fn enabled(self, is_terminal: bool, env: &dyn Fn(&str) -> Option<String>) -> bool {
        match self {
            Self::Always => true,
            Self::Never => false,
            Self::Auto => {
                let set = |k: &str| env(k).is_some_and(|v| !v.is_empty());
                if set("NO_COLOR") || env("TERM").as_deref() == Some("dumb") {
                    return false;
                }
                // Asked for in the environment (a workflow's `env:` can set it).
                if env("CLICOLOR_FORCE").is_some_and(|v| !v.is_empty() && v != "0") {
                    return true;
                }
                if env("GITHUB_ACTIONS").as_deref() == Some("true") {
                    return false;
                }
                is_terminal
            }
        }
    }
}

/// Short names for well-known metrics in the console table; every other report and the JSON
/// keep the full name. A metric without a short name is shown in full.
pub fn short_metric_name(metric: &str) -> Option<&'static str> {
    Some(match metric {
        "gpu__time_duration.sum" => "time",
        "gpu__time_duration.avg" => "time (avg)",
        "gpu__time_duration.max" => "time (max)",
        "launch__registers_per_thread" => "registers",
        "launch__shared_mem_per_block_static" => "smem static",
        "launch__shared_mem_per_block_dynamic" => "smem dynamic",
        "launch__occupancy_limit_registers" => "occ. limit regs",
        "dram__bytes_read.sum" => "dram read",
        "dram__bytes_write.sum" => "dram write",
        "dram__bytes.sum" => "dram bytes",
        "dram__throughput.avg.pct_of_peak_sustained_elapsed" => "dram %peak",
        "sm__throughput.avg.pct_of_peak_sustained_elapsed" => "sm %peak",
        "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed" => "mem %peak",
        "sm__warps_active.avg.pct_of_peak_sustained_active" => "occupancy",
        "lts__t_bytes.sum" => "l2 bytes",
        "l1tex__t_bytes.sum" => "l1 bytes",
        "smsp__inst_executed.sum" => "instructions",
        "sm__cycles_elapsed.avg" => "sm cycles",
        "cgp__achieved_flops.per_second" => "flop/s",
        "cgp__achieved_bytes.per_second" => "bytes/s",
        "cgp__arithmetic_intensity" => "flop/byte",
        "cgp__flops.pct_of_peak" => "flop %peak",
        "cgp__dram.pct_of_peak" => "bw %peak",
        _ => return None,
    })
}

/// The results as a terminal table as wide as its content, without colour (pipes and logs).
pub fn results_table<'a>(run: impl Into<RunView<'a>>) -> String {
    let run = run.into();
    results_table_styled(run, ConsoleStyle::default())
}

/// Column indices of [`results_table_styled`].
mod col {
    pub const VERDICT: usize = 0;
    pub const TARGET: usize = 1;
    pub const SIZE: usize = 2;
    pub const KERNEL: usize = 3;
    pub const METRIC: usize = 4;
    pub const MEDIANS: usize = 5;
    pub const CI: usize = 7;
    pub const P: usize = 8;
}

/// A row's baseline and candidate medians in one display unit (chosen for the larger), as bare
/// numbers, and that unit (the metric cell names it).
fn medians_in_one_unit(r: &RowView<'_>) -> (String, String, String) {
    let (b, c) = (
        r.sides.baseline.as_ref().map(|s| s.median),
        r.sides.candidate.as_ref().map(|s| s.median),
    );
    let magnitude = b.into_iter().chain(c).map(f64::abs).fold(0.0, f64::max);
    let (factor, unit) = crate::foundation::units::display_unit(magnitude, r.unit);
    let show = |v: Option<f64>| {
        v.map_or_else(
            || "-".to_owned(),
            |v| crate::foundation::units::number_in_unit(v / factor),
        )
    };
    let (b, c) = crate::report::format::same_decimals(&show(b), &show(c));
    (b, c, unit)
}

/// The medians are context; the interval and p are what the verdict used. When a row changed
/// or stayed doubtful (issue 46: at 80 columns "+4.24 % inconclusive" beside "+3.00 %
/// regression" looked arbitrary without them), the medians go first, the interval last, its
/// level wrapping under it; when every row passed, the kernel's name keeps its room first.
fn fit_order(changed: bool, medians_width: usize) -> Vec<crate::report::table::Fit> {
    use crate::report::table::Fit;
    use col::*;
    if changed {
        vec![
            Fit::Shrink(MEDIANS, medians_width),
            Fit::Shrink(KERNEL, 48),
            Fit::Shrink(KERNEL, 40),
            Fit::Shrink(METRIC, 16),
            Fit::Drop(MEDIANS),
            Fit::Shrink(KERNEL, 28),
            Fit::Shrink(KERNEL, 20),
            Fit::Drop(P),
            Fit::Shrink(CI, 18),
            Fit::Shrink(METRIC, 11),
            Fit::Shrink(KERNEL, 16),
            Fit::Shrink(TARGET, 12),
            Fit::Shrink(SIZE, 10),
            Fit::Shrink(KERNEL, 10),
            Fit::Drop(KERNEL),
            Fit::Shrink(METRIC, 8),
            Fit::Drop(CI),
        ]
    } else {
        vec![
            // The header wraps (`median base` over `→ head`) rather than widen the numbers' column.
            Fit::Shrink(MEDIANS, medians_width),
            Fit::Shrink(KERNEL, 48),
            Fit::Drop(P),
            Fit::Shrink(KERNEL, 40),
            Fit::Shrink(METRIC, 16),
            Fit::Shrink(KERNEL, 28),
            Fit::Shrink(KERNEL, 20),
            Fit::Drop(MEDIANS),
            Fit::Drop(CI),
            Fit::Shrink(METRIC, 11),
            Fit::Shrink(KERNEL, 16),
            Fit::Shrink(TARGET, 12),
            Fit::Shrink(SIZE, 10),
            Fit::Shrink(KERNEL, 10),
            Fit::Drop(KERNEL),
            Fit::Shrink(METRIC, 8),
        ]
    }
}

/// Whether a row's verdict rested on a significance test (its p is worth a column): rows that
/// changed or stayed doubtful. A pass inside the threshold needed none.
fn p_matters(r: &RowView<'_>) -> bool {
    matches!(
        r.verdict,
        RowVerdict::Regression | RowVerdict::Improvement | RowVerdict::Inconclusive
    ) && r.skipped.is_none()
}

/// The results as a terminal table, regressions first: verdict, target, size, kernel (its
/// return type, namespaces, the part every kernel of the table shares and then its middle left
/// out as the width needs, [`kernel_cells`]), metric (short name where one is known) with its
/// unit, the two medians in that unit as context (`median base → head`), the change and its
/// interval, the ones the verdict used (`RowView::change`, `RowView::interval`, printed as every
/// other report prints them), and p (adjusted where known) only for rows whose verdict needed a test.
/// Fitted to `style.width`: the kernel shortens first; with a changed or doubtful row the
/// medians, p (the interval's level then wraps under it), the kernel and last the interval are
/// left out, else p, the medians, the interval
/// and the kernel; what was left out is said under the table. Under it: the first
/// clause of the reason of each row that fails or stays doubtful, on one line each, the run
/// errors and the headline.
pub fn results_table_styled<'a>(run: impl Into<RunView<'a>>, style: ConsoleStyle) -> String {
    let run = run.into();
    use crate::report::table::{Align, Column, Overflow, Table};
    use col::*;
    let (l, r) = (Align::Left, Align::Right);
    let rows_sorted = sorted_rows(run);
    let show_p = rows_sorted.iter().any(|r| p_matters(r) && r.p().is_some());
    let common_ci = crate::report::format::common_ci_label(rows_sorted.iter().copied());
    let columns = vec![
        Column::new("verdict", l, Overflow::Truncate),
        Column::new("target", l, Overflow::Truncate),
        Column::new("size", l, Overflow::Wrap),
        Column::new("kernel", l, Overflow::Shorten(short_kernel)),
        Column::new("metric (unit)", l, Overflow::Wrap),
        // `→ head` kept together when the header wraps (the wrap breaks at plain spaces only).
        Column::new(
            &crate::report::format::MEDIANS_LABEL.replace("→ ", "→\u{a0}"),
            r,
            Overflow::Wrap,
        ),
        Column::new("change", r, Overflow::Truncate),
        Column::new(common_ci.as_deref().unwrap_or("CI"), l, Overflow::Wrap),
        Column::new("p", r, Overflow::Truncate),
    ];
    let mut used_short: Vec<(&'static str, &str)> = Vec::new();
    let mut rows: Vec<Vec<String>> = rows_sorted
        .iter()
        .map(|r| result_cells(r, &mut used_short, common_ci.as_deref()))
        .collect();
    let medians_width = align_medians(&mut rows);
    let mut columns = columns;
    if !show_p {
        // No row needed a test: no p column at all (P is the last column).
        columns.truncate(P);
        rows.iter_mut().for_each(|r| r.truncate(P));
    }
    let fit = fit_order(rows_sorted.iter().any(|r| p_matters(r)), medians_width);
    let mut table = Table { columns, rows, fit };
    let mut layout = table.layout(style.width);
    name_p_in_full(&mut table, &mut layout, style.width);
    if let Some(w) = layout.widths[KERNEL] {
        let names: Vec<String> = table.rows.iter().map(|r| r[KERNEL].clone()).collect();
        for (row, name) in table.rows.iter_mut().zip(kernel_cells(&names, w)) {
            row[KERNEL] = name;
        }
    }
    // The colour says what the row means for the gate (decide::row_gate): a row that fails it
    // without being a regression (a missing kernel, `--fail-on inconclusive`) is red too.
    let verdicts: Vec<RowVerdict> = rows_sorted
        .iter()
        .map(|r| {
            if r.gate.fails_beyond_its_verdict() {
                RowVerdict::Error
            } else {
                r.verdict
            }
        })
        .collect();
    let paint = |row: Option<usize>, column: usize, text: &str| -> String {
        match row {
            Some(i) if style.color && column == VERDICT => verdicts
                .get(i)
                .map_or_else(|| text.to_owned(), |v| paint_verdict(*v, text)),
            None if style.color => format!("{BOLD}{text}{BOLD:#}"),
            _ => text.to_owned(),
        }
    };
    let mut out = table.render_layout(&layout, &paint);
    if run.rows().len() == 0 {
        out.push_str("no rows\n");
    }
    if run.rows().len() != 0 {
        let dropped: Vec<usize> = layout
            .dropped()
            .into_iter()
            .filter(|&i| i < table.columns.len())
            .collect();
        let why = "--json and the other reports have every column";
        push_dropped(&mut out, &table, &dropped, why, style.width);
    }
    push_legend(&mut out, &used_short, style.width);
    // The legend of the p column, only where the table shows one (issue 59).
    if show_p && !layout.dropped().contains(&col::P) {
        push_wrapped(&mut out, crate::report::format::P_NOTE, style.width);
    }
    push_notes(&mut out, run, &rows_sorted, style);
    for c in run.caveats {
        push_wrapped(&mut out, &one_line(&format!("trust: {c}")), style.width);
    }
    push_headline(&mut out, run, style);
    // No line of the table, its notes or its headline (names from files among them, wrapped at
    // any width) is a GitHub workflow command: the runner reads every line that starts with `::`.
    crate::foundation::sanitize::no_workflow_commands(&out)
}

/// The p column's header as the legend and the other reports name it, `p (adj.)`, where the
/// width leaves room for it (off a terminal, or a wide one); a narrow table keeps `p`, which the
/// legend under it explains.
fn name_p_in_full(
    table: &mut crate::report::table::Table,
    layout: &mut crate::report::table::Layout,
    width: Option<usize>,
) {
    const FULL: &str = "p (adj.)";
    let Some(Some(w)) = layout.widths.get(col::P).copied() else {
        return;
    };
    let extra = FULL.chars().count().saturating_sub(w);
    if width.is_none_or(|width| layout.total() + extra <= width) {
        table.columns[col::P].header = FULL.to_owned();
        layout.widths[col::P] = Some(w + extra);
    }
}

/// The headline under everything, and the line that says where replayed data came from.
fn push_headline(out: &mut String, run: RunView<'_>, style: ConsoleStyle) {
    // Names reach the terminal: no escape sequence acts, no bidi control reorders. Cells,
    // notes and messages are made visible one by one, so that only our own colour codes act.
    // One line: the GPU's name (a harness file's) may hold line breaks.
    let head = one_line(&headline(run));
    if style.color {
        let s = run_style(run);
        out.push_str(&format!("{s}{head}{s:#}\n"));
    } else {
        out.push_str(&format!("{head}\n"));
    }
    if let Some(label) = crate::report::format::real_capture(run) {
        let line = format!(
            "data: {label}, replayed from {}",
            run.source.replay_dir().unwrap_or_default()
        );
        push_wrapped(out, &one_line(&line), style.width);
    }
}

/// The medians column's cells (`246.9 → 256.8`) lined up on the arrow: each side padded to the
/// widest of its side. Returns the widest cell.
fn align_medians(rows: &mut [Vec<String>]) -> usize {
    let sides: Vec<Option<(String, String)>> = rows
        .iter()
        .map(|r| {
            r[col::MEDIANS]
                .split_once('\u{1f}')
                .map(|(b, c)| (b.to_owned(), c.to_owned()))
        })
        .collect();
    let wb = sides
        .iter()
        .flatten()
        .map(|(b, _)| b.chars().count())
        .max()
        .unwrap_or(0);
    let wc = sides
        .iter()
        .flatten()
        .map(|(_, c)| c.chars().count())
        .max()
        .unwrap_or(0);
    for (row, side) in rows.iter_mut().zip(sides) {
        row[col::MEDIANS] = side.map_or_else(String::new, |(b, c)| format!("{b:>wb$} → {c:>wc$}"));
    }
    if wb + wc == 0 { 0 } else { wb + wc + 3 }
}

/// One row of the results table: the cells of `r`, the metric by its short name where one is
/// known (remembered in `used_short` for the legend). The medians cell holds the two sides
/// apart by U+001F until [`align_medians`] lines them up.
fn result_cells<'a>(
    r: &'a RowView<'a>,
    used_short: &mut Vec<(&'static str, &'a str)>,
    common_ci: Option<&str>,
) -> Vec<String> {
    // Registers per thread: the unit is the name (`regs/thread`, 11 characters, fits
    // the narrowest metric column).
    let metric = if r.key.metric == "launch__registers_per_thread" {
        if !used_short.iter().any(|(s, _)| *s == "regs/thread") {
            used_short.push(("regs/thread", &r.key.metric));
        }
        "regs/thread".to_owned()
    } else {
        metric_cell(&r.key.metric, used_short)
    };
    let (baseline, candidate, unit) = medians_in_one_unit(r);
    // ncu's longer units, shortened for the metric cell.
    let unit = match unit.as_str() {
        "register/thread" => "per thread".to_owned(),
        "byte/block" => "B/block".to_owned(),
        _ => unit,
    };
    // `%` is said by the short names (`sm %peak`); other units follow the name.
    let metric = if unit.is_empty() || (unit == "%" && metric.contains('%')) || metric == "regs/thread" {
        metric
    } else {
        format!("{metric} ({unit})")
    };
    let medians = if r.sides.baseline.is_none() && r.sides.candidate.is_none() {
        String::new()
    } else {
        format!("{baseline}\u{1f}{candidate}")
    };
    // The interval the verdict used, with its level when the header cannot say it.
    let ci =
        crate::report::format::interval(r).map_or_else(
            String::new,
            |i| match crate::report::format::ci_label(r) {
                Some(l) if common_ci != Some(l.as_str()) => format!("{i} ({l})"),
                _ => i,
            },
        );
    vec![
        crate::report::format::verdict_word(r).to_owned(),
        one_line(&r.key.target),
        one_line(&r.key.size),
        one_line(r.key.kernel_label()),
        metric,
        medians,
        crate::report::format::change_text(r),
        ci,
        if p_matters(r) {
            r.p().map_or_else(String::new, |p| p_value(Some(p)))
        } else {
            String::new()
        },
    ]
}

/// The lines under the results table: why each row that fails or stays doubtful got its verdict,
/// the run's errors, what the SASS cache skipped, the why of each changed timing row, missing
/// and gone kernels, and launch configuration changes.
fn push_notes(out: &mut String, run: RunView<'_>, rows_sorted: &[RowView<'_>], style: ConsoleStyle) {
    // Why each row that fails or stays doubtful got its verdict, one line each.
    let mut cut = false;
    for r in rows_sorted
        .iter()
        .filter(|r| r.gate.gate() != Gate::Pass && !r.reason.is_empty())
    {
        let metric = short_metric_name(&r.key.metric).unwrap_or(&r.key.metric);
        // `reason ...`, as the why lines are `why ...`: a line that starts with a verdict word
        // is a table row.
        let full = one_line(&crate::report::format::reason_with_config(r));
        let verdict = crate::report::format::reach(r).map_or_else(
            || crate::report::format::verdict_word(r).to_owned(),
            |reach| format!("{}: {reach}", crate::report::format::verdict_word(r)),
        );
        let line = format!(
            "reason {}[{}] {} ({verdict}): {}",
            one_line(&r.key.target),
            one_line(&r.key.size),
            one_line(metric),
            first_clause(&full)
        );
        // One line each: the full sentence is in the JSON, HTML and Markdown reports.
        let line = crate::report::text::visible(&line);
        let shown = match style.width {
            Some(w) => crate::report::table::truncate(&line, w),
            None => line.clone(),
        };
        cut |= shown != line || first_clause(&full) != full;
        out.push_str(&shown);
        out.push('\n');
    }
    if cut {
        push_wrapped(
            out,
            "(reasons shortened to one line; --json, --html and --markdown have each in full)",
            style.width,
        );
    }
    // What each row's test left out (or kept as the code's), passing rows too (issue 43).
    for line in crate::report::format::left_out_lines(run) {
        push_wrapped(
            out,
            &crate::report::text::visible(&format!("left out {line}")),
            style.width,
        );
    }
    for e in run.errors {
        let at = one_line(&match &e.size {
            Some(s) => format!("{}[{s}]", e.target),
            None => e.target.clone(),
        });
        // Wrapped like the other notes; the label is coloured after wrapping, so that its
        // escape codes never count as width.
        let mut lines = String::new();
        let line = format!("error: {at}: {} ({})", one_line(&e.message), e.kind);
        push_wrapped(&mut lines, &line, style.width);
        if style.color {
            lines = format!("{RED}error{RED:#}{}", &lines["error".len()..]);
        }
        out.push_str(&lines);
    }
    if let Some(line) = crate::report::format::sass_skip_line(run) {
        push_wrapped(out, &one_line(&line), style.width);
    }
    // `check --base` (docs/confirm.md): the commit, and each row it touched.
    if let Some(line) = crate::report::confirm::run_line(run) {
        push_wrapped(out, &one_line(&line), style.width);
        for l in crate::report::confirm::row_lines(run) {
            push_wrapped(out, &one_line(&format!("confirm {l}")), style.width);
        }
    }
    if let Some(line) = crate::report::format::why_cost_line(run) {
        push_wrapped(out, &one_line(&line), style.width);
    }
    // The why of each changed timing row (docs/why.md): its one-line reading; the counters are
    // in the JSON, Markdown and HTML reports.
    for r in sorted_rows(run) {
        if let Some(w) = crate::report::why::WhyView::of(&r) {
            let metric = short_metric_name(w.metric).unwrap_or(w.metric);
            let line = format!(
                "why {}[{}] {}: {}",
                one_line(w.target),
                one_line(w.size),
                one_line(metric),
                one_line(w.reading)
            );
            push_wrapped(out, &line, style.width);
        }
    }
    for line in crate::report::kernels::describe_changes(run) {
        push_wrapped(out, &one_line(&line), style.width);
    }
    for line in crate::report::kernels::gone_files(run) {
        push_wrapped(out, &one_line(&line), style.width);
    }
    let configs = crate::report::format::config_changes(run);
    if !configs.is_empty() {
        let note = format!(
            "{}: {}",
            crate::report::format::CONFIG_CHANGE_NOTE,
            configs.join("; ")
        );
        push_wrapped(out, &one_line(&note), style.width);
    }
}

/// The first clause of a reason (up to its first `; `): the verdict and the numbers it rests
/// on; the rest (runs, noise, notes) is in the other reports.
fn first_clause(reason: &str) -> &str {
    reason.split_once("; ").map_or(reason, |(first, _)| first)
}

/// A metric's cell: its short name where one is known (remembered in `used` for the legend),
/// else its full name on one line.
fn metric_cell<'a>(metric: &'a str, used: &mut Vec<(&'static str, &'a str)>) -> String {
    match short_metric_name(metric) {
        Some(short) => {
            if !used.iter().any(|(s, _)| *s == short) {
                used.push((short, metric));
            }
            short.to_owned()
        }
        None => one_line(metric),
    }
}

/// The legend of the short metric names a table used.
fn push_legend(out: &mut String, used: &[(&'static str, &str)], width: Option<usize>) {
    if used.is_empty() {
        return;
    }
    let legend: Vec<String> = used.iter().map(|(s, full)| format!("{s} = {full}")).collect();
    push_wrapped(out, &format!("metrics: {}", legend.join(", ")), width);
}

/// Which columns were left out to fit the width, and where to find them (`why`).
fn push_dropped(
    out: &mut String,
    table: &crate::report::table::Table,
    dropped: &[usize],
    why: &str,
    width: Option<usize>,
) {
    if dropped.is_empty() {
        return;
    }
    let names: Vec<String> = dropped
        .iter()
        .map(|i| table.columns[*i].header.replace('\u{a0}', " "))
        .collect();
    let note = format!(
        "(left out to fit {} columns: {}; {why})",
        width.unwrap_or_default(),
        names.join(", ")
    );
    push_wrapped(out, &note, width);
}

/// A note under the table, wrapped to the width with continuation lines indented.
fn push_wrapped(out: &mut String, text: &str, width: Option<usize>) {
    let lines = match width {
        Some(w) => crate::report::table::wrap(text, w.saturating_sub(2).max(20)),
        None => vec![text.to_owned()],
    };
    for (i, l) in lines.iter().enumerate() {
        if i > 0 {
            out.push_str("  ");
        }
        out.push_str(l);
        out.push('\n');
    }
}

const BOLD: anstyle::Style = anstyle::Style::new().bold();
const RED: anstyle::Style =
    anstyle::Style::new().fg_color(Some(anstyle::Color::Ansi(anstyle::AnsiColor::Red)));

/// The colour of a row verdict: red for what fails, yellow for doubt, green for good news,
/// cyan and dim for rows without a comparison.
fn verdict_style(v: RowVerdict) -> anstyle::Style {
    use anstyle::{AnsiColor, Color, Style};
    let fg = |c: AnsiColor| Style::new().fg_color(Some(Color::Ansi(c)));
    match v {
        RowVerdict::Regression => fg(AnsiColor::Red).bold(),
        RowVerdict::Error => fg(AnsiColor::Red),
        RowVerdict::Inconclusive => fg(AnsiColor::Yellow),
        RowVerdict::Improvement => fg(AnsiColor::Green).bold(),
        RowVerdict::Pass => fg(AnsiColor::Green),
        RowVerdict::New => fg(AnsiColor::Cyan),
        RowVerdict::Missing => Style::new().dimmed(),
    }
}

/// The colour of the run's headline: its gate status as decided by
/// `decide::run_gate` (`RunView::gate`), so an inconclusive run under `--fail-on inconclusive`
/// is painted as the failure its exit code says it is.
fn run_style(run: RunView<'_>) -> anstyle::Style {
    let row = match run.gate {
        Gate::Pass => RowVerdict::Pass,
        Gate::Fail => RowVerdict::Regression,
        Gate::Warn => RowVerdict::Inconclusive,
        Gate::Error => RowVerdict::Error,
    };
    verdict_style(row).bold()
}

/// `text` in the colour of verdict `v`.
pub fn paint_verdict(v: RowVerdict, text: &str) -> String {
    let s = verdict_style(v);
    format!("{s}{text}{s:#}")
}

/// Control characters (newlines, escape sequences) from names must not move the cursor.
fn one_line(text: &str) -> String {
    crate::report::text::visible(&text.replace(['\n', '\r', '\t'], " "))
}

mod kernel;
mod samples;

pub use kernel::{kernel_cells, short_kernel};
pub use samples::{launches_table, samples_table, samples_table_styled};

#[cfg(test)]
mod tests;
