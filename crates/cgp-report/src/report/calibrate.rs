//! The calibration (`cgp-gate calibrate`) as a Markdown table (every name escaped) and as a
//! console table (the terminal never gets Markdown).

use super::markdown::escape_md_cell as esc;
use crate::foundation::units::{Percent, percent};
use crate::history::Calibration;

fn opt_pct(x: Option<f64>) -> String {
    x.map_or_else(|| "-".to_owned(), |v| percent(v, Percent::Plain1))
}

fn opt_pct2(x: Option<f64>) -> String {
    x.map_or_else(|| "-".to_owned(), |v| percent(v, Percent::Plain2))
}

fn opt_count(x: Option<u32>) -> String {
    x.map_or_else(|| "-".to_owned(), |v| v.to_string())
}

/// The calibration as a Markdown table, escaped for any name.
pub fn markdown(c: &Calibration) -> String {
    let mut out = String::new();
    out.push_str("### cgp-gate calibrate\n\n");
    if c.synthetic {
        out.push_str("> SYNTHETIC data: the recording was not measured on a GPU.\n\n");
    }
    out.push_str(&format!(
        "Source: {}. Noise within a run (process) and between runs, from the run-level model the gate judges with. Suggested threshold: identical code passes in 95% of checks; min detectable: a slowdown found in 95% of checks at the spec's settings (alpha {} over {} tested rows); processes / launches needed: the fewest processes per check (at the launches measured), or launches per process (at the spec's repetitions), with which identical code passes at the spec's threshold. Closed form of the model, no simulation.\n\n",
        esc(&c.source),
        c.alpha,
        c.family,
    ));
    out.push_str("| target | size | kernel | metric | reps | launches/run | CV | within run | between runs | outliers | clock dips | threshold | min detectable | suggested threshold | processes needed | launches needed | note |\n");
    out.push_str("|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---|\n");
    for r in &c.rows {
        let flag = if r.flagged() { " ⚠" } else { "" };
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {:.1} | {:.2}% | {} | {} | {:.1}% | {:.1}% | {}{flag} | {} | {} | {} | {} | {} |\n",
            esc(&r.target),
            esc(&r.size),
            esc(&r.kernel),
            esc(&r.metric),
            r.repetitions,
            r.launches_per_run,
            r.cv * 100.0,
            opt_pct2(r.noise.and_then(|n| n.within_cv)),
            opt_pct2(r.noise.map(|n| n.between_cv)),
            r.outlier_rate * 100.0,
            r.dip_share * 100.0,
            esc(&r.threshold),
            opt_pct(r.reach.and_then(|x| x.min_detectable)),
            opt_pct(r.reach.and_then(|x| x.suggested_threshold)),
            opt_count(r.noise.and_then(|n| n.processes_needed)),
            opt_count(r.noise.and_then(|n| n.launches_needed)),
            esc(&r.note)
        ));
    }
    out
}

/// The calibration as a console table fitted to `style.width`: one row per metric, then the
/// note of each row that has one on a line of its own.
pub fn console(c: &Calibration, style: super::console::ConsoleStyle) -> String {
    use super::table::{Align, Column, Fit, Overflow, Table};
    let (l, r) = (Align::Left, Align::Right);
    let columns = vec![
        Column::new("target", l, Overflow::Truncate),
        Column::new("size", l, Overflow::Wrap),
        Column::new("kernel", l, Overflow::Shorten(super::console::short_kernel)),
        Column::new("metric", l, Overflow::Wrap),
        Column::new("reps", r, Overflow::Truncate),
        Column::new("CV", r, Overflow::Truncate),
        Column::new("outliers", r, Overflow::Truncate),
        Column::new("dips", r, Overflow::Truncate),
        Column::new("threshold", l, Overflow::Wrap),
        Column::new("min detectable", r, Overflow::Truncate),
        Column::new("suggested", r, Overflow::Truncate),
        Column::new("procs needed", r, Overflow::Truncate),
        Column::new("launches needed", r, Overflow::Truncate),
        Column::new("note", l, Overflow::Wrap),
    ];
    let visible = super::text::visible;
    let rows = console_rows(c);
    let table = Table {
        columns,
        rows,
        // The note wraps first (down to 24 columns), then goes when even that does not fit:
        // it is in --markdown and --json whole, and the `!` rows' notes follow the table.
        fit: vec![
            Fit::Shrink(13, 40),
            Fit::Shrink(13, 24),
            Fit::Drop(7),
            Fit::Drop(6),
            Fit::Shrink(8, 24),
            Fit::Drop(13),
            Fit::Drop(12),
            Fit::Shrink(2, 28),
            Fit::Shrink(2, 16),
            Fit::Drop(2),
            Fit::Shrink(3, 12),
            Fit::Shrink(8, 10),
            Fit::Drop(11),
        ],
    };
    let mut out = String::new();
    if c.synthetic {
        out.push_str("SYNTHETIC data: the recording was not measured on a GPU.\n");
    }
    // The figures come from the model's closed form (0 trials) or from simulated checks.
    let how = if c.trials == 0 {
        "figures from the run-level model's closed form (no simulation)".to_owned()
    } else {
        format!("{} simulated checks per figure", c.trials)
    };
    out.push_str(&format!(
        "source: {}; alpha {} over {} tested rows; {how}\n",
        visible(&c.source),
        c.alpha,
        c.family,
    ));
    out.push_str(&table.render(style.width, &|_, _, t| t.to_owned()));
    let mut lines = Vec::new();
    let dropped = table.layout(style.width).dropped();
    if !dropped.is_empty() {
        let names: Vec<&str> = dropped
            .iter()
            .map(|i| table.columns[*i].header.as_str())
            .collect();
        lines.push(format!(
            "(left out to fit {} columns: {}; --json and --markdown have every column)",
            style.width.unwrap_or_default(),
            names.join(", ")
        ));
    }
    lines.extend([
        "suggested: the threshold at which identical code passes in 95% of checks; min detectable: the slowdown found in 95% of checks at the spec's settings; procs / launches needed: the fewest processes per check (at the launches measured), or launches per process (at the spec's repetitions), with which identical code passes at the spec's threshold".to_owned(),
    ]);
    // The rows whose threshold the gate cannot resolve, each with what to do; the other rows'
    // notes are in --markdown and --json.
    // The rows whose job drift (`--baselines`) is too large for their threshold, likewise.
    for x in c.rows.iter().filter(|x| x.flagged()) {
        let metric = super::console::short_metric_name(&x.metric).unwrap_or(&x.metric);
        lines.push(visible(&format!(
            "! {}[{}] {}: {}",
            x.target, x.size, metric, x.note
        )));
    }
    for line in lines {
        let wrapped = match style.width {
            Some(w) => super::table::wrap(&line, w.saturating_sub(2).max(20)),
            None => vec![line],
        };
        for (i, l) in wrapped.iter().enumerate() {
            if i > 0 {
                out.push_str("  ");
            }
            out.push_str(l);
            out.push('\n');
        }
    }
    out
}

/// The console table's cells, one row per calibrated metric, in the columns of [`console`].
fn console_rows(c: &Calibration) -> Vec<Vec<String>> {
    let visible = super::text::visible;
    c.rows
        .iter()
        .map(|x| {
            let flag = if x.flagged() { " !" } else { "" };
            vec![
                visible(&x.target),
                visible(&x.size),
                visible(&x.kernel),
                visible(super::console::short_metric_name(&x.metric).unwrap_or(&x.metric)),
                x.repetitions.to_string(),
                percent(x.cv, Percent::Plain2),
                percent(x.outlier_rate, Percent::Plain1),
                percent(x.dip_share, Percent::Plain1),
                format!("{}{flag}", visible(&x.threshold)),
                opt_pct(x.reach.and_then(|r| r.min_detectable)),
                opt_pct(x.reach.and_then(|r| r.suggested_threshold)),
                opt_count(x.noise.and_then(|n| n.processes_needed)),
                opt_count(x.noise.and_then(|n| n.launches_needed)),
                visible(&x.note),
            ]
        })
        .collect()
}
