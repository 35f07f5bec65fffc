//! The samples of a `profile` or `parse` run as terminal tables: one block per launch, or a
//! line per series with its kernels summed where a target sums them.

use super::*;
use crate::measured::samples::{Launch, MetricValue};

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

/// `profile`'s table as wide as its content, without colour (pipes and logs).
pub fn samples_table(samples: &crate::measured::samples::SampleSet) -> String {
    samples_table_styled(samples, ConsoleStyle::default())
}

/// How the blocks of [`samples_table_styled`] name an operation row's kernel (`kernels: sum`):
/// the kernels it summed, from the launch configurations of every series of its target and size
/// (issue 46), so `profile` says which kernels the row is. Keyed by (target, size); one pass.
fn summed_kernel_heads(
    samples: &crate::measured::samples::SampleSet,
) -> std::collections::BTreeMap<(&str, &str), String> {
    let mut configs: std::collections::BTreeMap<(&str, &str), Vec<String>> =
        std::collections::BTreeMap::new();
    for (k, s) in &samples.series {
        if k.kernel == crate::spec::SUM_KERNEL {
            configs
                .entry((k.target.as_str(), k.size.as_str()))
                .or_default()
                .extend(s.configs.iter().cloned());
        }
    }
    configs
        .into_iter()
        .filter_map(|(at, configs)| {
            let names = crate::measured::samples::kernels_of(&configs);
            (!names.is_empty()).then(|| (at, format!("(sum of selected kernels: {})", names.join(", "))))
        })
        .collect()
}

/// `profile`'s table: per target, size and kernel, a line per metric with the sample summary
/// (count, median, min, max, coefficient of variation). Metrics go by their short names, as in
/// [`results_table_styled`], with a legend under the table. Fitted to `style.width` the same way:
/// min and max are left out first, then the metric wraps; every block shares one layout, so the
/// columns line up from block to block.
pub fn samples_table_styled(samples: &crate::measured::samples::SampleSet, style: ConsoleStyle) -> String {
    use crate::report::table::{Align, Column, Fit, Overflow, Table};
    const INDENT: &str = "  ";
    let (l, r) = (Align::Left, Align::Right);
    let columns = vec![
        Column::new("metric", l, Overflow::Wrap),
        Column::new("n", r, Overflow::Truncate),
        Column::new("median", r, Overflow::Truncate),
        Column::new("min", r, Overflow::Truncate),
        Column::new("max", r, Overflow::Truncate),
        Column::new("cv", r, Overflow::Truncate),
    ];
    let mut used_short: Vec<(&'static str, &str)> = Vec::new();
    // Blocks of rows: (target[size] kernel, rows).
    let mut blocks: Vec<(String, Vec<Vec<String>>)> = Vec::new();
    let summed = summed_kernel_heads(samples);
    for (k, s) in &samples.series {
        let kernel = match summed.get(&(k.target.as_str(), k.size.as_str())) {
            Some(head) if k.kernel == crate::spec::SUM_KERNEL => head,
            _ => &k.kernel,
        };
        let head = format!(
            "{} {}",
            one_line(&crate::measured::samples::target_size(&k.target, &k.size)),
            one_line(kernel)
        );
        if blocks.last().is_none_or(|(h, _)| *h != head) {
            blocks.push((head, Vec::new()));
        }
        let metric = metric_cell(&k.metric, &mut used_short);
        let mut v = s.values();
        v.sort_by(f64::total_cmp);
        let median = crate::stats::median(&v).unwrap_or(f64::NAN);
        let mean = v.iter().sum::<f64>() / v.len().max(1) as f64;
        let sd = (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (v.len().max(2) - 1) as f64).sqrt();
        let cv = if mean == 0.0 {
            "-".to_owned()
        } else {
            format!("{:.2}%", 100.0 * sd / mean.abs())
        };
        if let Some((_, rows)) = blocks.last_mut() {
            rows.push(vec![
                metric,
                v.len().to_string(),
                human(median, &s.unit),
                human(v.first().copied().unwrap_or(f64::NAN), &s.unit),
                human(v.last().copied().unwrap_or(f64::NAN), &s.unit),
                cv,
            ]);
        }
    }
    let fit = vec![Fit::Drop(3), Fit::Drop(4), Fit::Shrink(0, 12), Fit::Drop(5)];
    let all = Table {
        columns: columns.clone(),
        rows: blocks.iter().flat_map(|(_, rows)| rows.clone()).collect(),
        fit: fit.clone(),
    };
    let width = style.width.map(|w| w.saturating_sub(INDENT.len()));
    let layout = all.layout(width);
    let paint = |row: Option<usize>, _: usize, text: &str| -> String {
        if row.is_none() && style.color {
            format!("{BOLD}{text}{BOLD:#}")
        } else {
            text.to_owned()
        }
    };
    let mut out = String::new();
    for (head, rows) in blocks {
        let head = match style.width {
            Some(w) => crate::report::table::truncate(&head, w),
            None => head,
        };
        out.push_str(&head);
        out.push('\n');
        let block = Table {
            columns: columns.clone(),
            rows,
            fit: fit.clone(),
        };
        for line in block.render_layout(&layout, &paint).lines() {
            out.push_str(INDENT);
            out.push_str(line);
            out.push('\n');
        }
    }
    if samples.series.is_empty() {
        out.push_str("no samples\n");
    }
    if !samples.series.is_empty() {
        let why = "`profile --json` has every sample";
        push_dropped(&mut out, &all, &layout.dropped(), why, style.width);
    }
    push_legend(&mut out, &used_short, style.width);
    out
}
