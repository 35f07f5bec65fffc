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
    crate::report::text::visible(&out)
}

/// `profile`'s table: per target, size and kernel, a line per metric with the sample summary.
pub fn samples_table(samples: &crate::samples::SampleSet) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let mut last: Option<(&str, &str, &str)> = None;
    for (k, s) in &samples.series {
        let head = (k.target.as_str(), k.size.as_str(), k.kernel.as_str());
        if last != Some(head) {
            let _ = writeln!(
                out,
                "{} {}",
                crate::samples::target_size(&k.target, &k.size),
                k.kernel
            );
            let _ = writeln!(
                out,
                "  {:<52} {:>4} {:>12} {:>12} {:>12} {:>7}",
                "metric", "n", "median", "min", "max", "cv"
            );
            last = Some(head);
        }
        let mut v = s.values.clone();
        v.sort_by(f64::total_cmp);
        let median = crate::stats::median(&v).unwrap_or(f64::NAN);
        let mean = v.iter().sum::<f64>() / v.len().max(1) as f64;
        let sd = (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (v.len().max(2) - 1) as f64).sqrt();
        let cv = if mean == 0.0 {
            "-".to_owned()
        } else {
            format!("{:.2}%", 100.0 * sd / mean.abs())
        };
        let _ = writeln!(
            out,
            "  {:<52} {:>4} {:>12} {:>12} {:>12} {:>7}",
            k.metric,
            v.len(),
            human(median, &s.unit),
            human(v.first().copied().unwrap_or(f64::NAN), &s.unit),
            human(v.last().copied().unwrap_or(f64::NAN), &s.unit),
            cv
        );
    }
    if samples.series.is_empty() {
        out.push_str("no samples\n");
    }
    crate::report::text::visible(&out)
}

/// One line on the GPU's health during the run (every report shows it).
pub fn health_line(h: &crate::results::Health) -> String {
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
        "{} throttled repetition(s), {} re-run",
        h.throttled_reps, h.rerun_reps
    ));
    parts.join(", ")
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
    for line in crate::missing::describe_changes(&results.rows) {
        out.push_str(&format!("{}\n", one_line(&line)));
    }
    out.push_str(&format!("{}\n", headline(results)));
    // Names reach the terminal: no escape sequence acts, no bidi control reorders.
    crate::report::text::visible(&out)
}

/// Control characters (newlines, escape sequences) from names must not move the cursor.
fn one_line(text: &str) -> String {
    crate::report::text::visible(&text.replace(['\n', '\r', '\t'], " "))
}
