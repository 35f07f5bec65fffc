//! Plain-text tables for the terminal.

use crate::report::format::{change_with_ci, headline, median, p_value, shorten, sorted_rows};
use crate::results::Results;
use crate::samples::{Launch, MetricValue};
use crate::units::human;

/// A table of launches: one block per launch, a line per metric.
pub fn launches_table(launches: &[Launch]) -> String {
    let mut out = String::new();
    for l in launches {
        out.push_str(&format!("#{} {}\n", l.id, l.kernel));
        let width = l.metrics.keys().map(String::len).max().unwrap_or(0);
        for (name, m) in &l.metrics {
            let v = match &m.value {
                MetricValue::Number(x) => human(*x, &m.unit),
                MetricValue::List(xs) => format!(
                    "[{} values] {}",
                    xs.len(),
                    xs.first().map_or(String::new(), |x| human(*x, &m.unit))
                ),
                MetricValue::Text(t) => t.clone(),
            };
            out.push_str(&format!("  {name:<width$}  {v}\n"));
        }
    }
    if launches.is_empty() {
        out.push_str("no launches\n");
    }
    out
}

/// The results as a terminal table, regressions first: target, size, kernel, metric, baseline and
/// candidate medians, change with its interval, p (adjusted where known) and verdict. Followed by
/// the run errors and the headline.
pub fn results_table(results: &Results) -> String {
    let header = [
        "verdict",
        "target",
        "size",
        "kernel",
        "metric",
        "baseline",
        "candidate",
        "change [CI]",
        "p",
    ];
    let mut lines: Vec<[String; 9]> = vec![header.map(str::to_owned)];
    for r in sorted_rows(results) {
        lines.push([
            r.verdict.as_str().to_owned(),
            r.target.clone(),
            r.size.clone(),
            shorten(&one_line(&r.kernel), 60),
            r.metric.clone(),
            median(r.baseline.as_ref(), &r.unit),
            median(r.candidate.as_ref(), &r.unit),
            change_with_ci(r),
            p_value(r.p_adjusted.or(r.p)),
        ]);
    }
    let mut widths = [0usize; 9];
    for l in &lines {
        for (w, cell) in widths.iter_mut().zip(l) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for l in &lines {
        let mut line = String::new();
        for (i, (cell, w)) in l.iter().zip(widths).enumerate() {
            // Numbers align right so that magnitudes line up; text aligns left.
            if (5..=8).contains(&i) {
                line.push_str(&format!("{cell:>w$}  "));
            } else {
                line.push_str(&format!("{cell:<w$}  "));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    if results.rows.is_empty() {
        out.push_str("no rows\n");
    }
    for e in &results.errors {
        let at = match &e.size {
            Some(s) => format!("{}[{s}]", e.target),
            None => e.target.clone(),
        };
        out.push_str(&format!("error: {at}: {} ({})\n", one_line(&e.message), e.kind));
    }
    out.push_str(&format!("{}\n", headline(results)));
    out
}

/// Control characters (newlines, escape sequences) from names must not move the cursor.
fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}
