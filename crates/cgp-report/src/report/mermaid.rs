//! The Mermaid charts of the Markdown report: the regressions' bar chart and the history of the
//! worst one. Their labels keep only characters that cannot end a string or a fence.

use crate::outcome::results::RowVerdict;
use crate::outcome::view::{RowView, RunView};
use crate::report::format::{axis_scale, shorten};

/// Rows charted in the Mermaid bar chart; more would make the labels unreadable.
const CHART_ROWS: usize = 12;

/// Text for a Mermaid label: only characters that cannot end a quoted string or a code fence.
fn mermaid_label(text: &str, max: usize) -> String {
    let s: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, ' ' | '=' | ',' | '.' | '_' | '-' | '+' | '%') {
                c
            } else {
                ' '
            }
        })
        .collect();
    let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    shorten(&s, max)
}

fn mermaid_number(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.3}")
    } else {
        "0".to_owned()
    }
}

pub(crate) fn charts(run: RunView<'_>, md: &mut String) {
    // How much worse each regression is, in percent, signed so that "worse" is positive for
    // higher-is-better metrics too: bars always grow from the axis.
    let regressions: Vec<(RowView<'_>, f64)> = run
        .rows()
        .filter(|r| r.verdict == RowVerdict::Regression)
        .filter_map(|r| {
            let c = r.change().filter(|c| c.is_finite())?;
            Some((r, if r.higher_is_better { -c } else { c } * 100.0))
        })
        .take(CHART_ROWS)
        .collect();
    if !regressions.is_empty() {
        let labels: Vec<String> = regressions
            .iter()
            .map(|(r, _)| {
                format!(
                    "\"{}\"",
                    mermaid_label(
                        &format!(
                            "{} {} {}",
                            r.key.target,
                            r.key.size,
                            super::format::short_metric(&r.key.metric)
                        ),
                        40
                    )
                )
            })
            .collect();
        let values: Vec<String> = regressions.iter().map(|(_, v)| mermaid_number(*v)).collect();
        let top = regressions.iter().map(|(_, v)| *v).fold(0.0_f64, f64::max) * 1.2;
        md.push_str(&format!(
            "```mermaid\nxychart-beta\n    title \"Regressions: how much worse (%)\"\n    x-axis [{}]\n    y-axis \"worse by (%)\" 0 --> {}\n    bar [{}]\n```\n\n",
            labels.join(", "),
            mermaid_number(top.max(1.0)),
            values.join(", ")
        ));
    }
    // The trend of the worst regression with history: older baselines, the baseline, this run.
    let trend = run
        .rows()
        .filter(|r| r.verdict == RowVerdict::Regression && !r.history.is_empty())
        .filter(|r| r.sides.baseline.is_some() && r.sides.candidate.is_some())
        .max_by(|a, b| {
            let ka = a.change().unwrap_or(0.0).abs();
            let kb = b.change().unwrap_or(0.0).abs();
            ka.total_cmp(&kb)
        });
    if let Some(r) = trend
        && let (Some(b), Some(c)) = (&r.sides.baseline, &r.sides.candidate)
    {
        let mut points: Vec<f64> = r.history.iter().copied().filter(|x| x.is_finite()).collect();
        points.push(b.median);
        points.push(c.median);
        let max = points.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
        let (div, unit) = axis_scale(max, r.unit);
        let n = points.len();
        let labels: Vec<String> = (0..n)
            .map(|i| match n - i {
                1 => "\"this run\"".to_owned(),
                2 => "\"baseline\"".to_owned(),
                k => format!("\"-{}\"", k - 2),
            })
            .collect();
        let values: Vec<String> = points.iter().map(|x| mermaid_number(x / div)).collect();
        md.push_str(&format!(
            "```mermaid\nxychart-beta\n    title \"{} history ({})\"\n    x-axis [{}]\n    y-axis \"{}\"\n    line [{}]\n```\n\n",
            mermaid_label(&format!("{} {} {}", r.key.target, r.key.size, super::format::short_metric(&r.key.metric)), 60),
            mermaid_label(&unit, 20),
            labels.join(", "),
            mermaid_label(&unit, 20),
            values.join(", ")
        ));
    }
}
