//! Reports of `cgp-gate changes`: console table, Markdown (step summary, issue or PR comment) and
//! a self-contained HTML page. They render [`ChangesReport`]; the search decided everything.
//! Every text that came from a results file (names, paths, commits) is escaped.

use std::fmt::Write as _;

use crate::foundation::units::{Percent, format_number, human, percent};
use crate::history::{ChangeRow, ChangesReport, SeriesPlot};
use crate::report::html::escape;
use crate::report::markdown::{code_span, escape_md_cell, md_text};

/// Series drawn at most (the table lists every change).
const MAX_PLOTS: usize = 100;

/// A change, or `-` when there is none.
fn opt_change(x: Option<f64>) -> String {
    x.map_or_else(|| "-".to_owned(), |c| percent(c, Percent::Signed2))
}

/// A shift with its interval: `+3.42% [+2.90%, +3.95%]`.
pub(crate) fn row_change(row: &ChangeRow) -> String {
    match &row.interval {
        Some(i) => format!(
            "{} [{}, {}]",
            opt_change(row.change),
            percent(i.low, Percent::Signed2),
            percent(i.high, Percent::Signed2)
        ),
        None => opt_change(row.change),
    }
}

/// What the history can find, or that it is too short.
fn reach_line(r: &ChangesReport) -> String {
    let reach = &r.reach;
    let mut parts = Vec::new();
    if reach.too_short > 0 {
        parts.push(format!(
            "{} of {} series too short to find any shift at this level",
            reach.too_short,
            reach.series.len()
        ));
    }
    if let Some(d) = reach.smallest {
        parts.push(format!(
            "smallest shift found and reported in {:.0}% of histories like these: {} (median over series, from each series' own noise; shifts under --min-change {} are not reported)",
            reach.power * 100.0,
            percent(d, Percent::Signed2),
            percent(r.min_change, Percent::Signed2)
        ));
    }
    if let Some(m) = &reach.most_needed {
        let needed = m.needed.map_or_else(
            || format!("more than {}", crate::stats::change_reach::MAX_RESULTS),
            |n| n.to_string(),
        );
        parts.push(format!(
            "{}[{}] {} {} needs {needed} results to find a {} shift (has {})",
            m.target,
            m.size,
            m.kernel,
            m.metric,
            percent(m.shift, Percent::Signed2),
            m.results
        ));
    }
    parts.join("; ")
}

fn short(commit: Option<&String>) -> String {
    commit.map_or_else(String::new, |c| c.get(..12).unwrap_or(c).to_owned())
}

fn headline(r: &ChangesReport) -> String {
    let worse = r.worse();
    let n = r.rows.len();
    if n == 0 && r.reach.too_short > 0 && r.reach.too_short == r.reach.series.len() {
        format!(
            "no level shift can be found: the history is too short ({} results)",
            r.files.len()
        )
    } else if n == 0 {
        format!(
            "no level shift of at least {:.1}% in {} series over {} results",
            r.min_change * 100.0,
            r.series_tested,
            r.files.len()
        )
    } else {
        format!(
            "{n} level shift(s), {worse} for the worse, in {} series over {} results",
            r.series_tested,
            r.files.len()
        )
    }
}

fn method_line(r: &ChangesReport) -> String {
    format!(
        "E-Divisive means with a permutation test; level {:.2e} per test (alpha {} / {} series); shifts under {:.1}% not reported ({} significant ones were smaller)",
        r.level,
        r.alpha,
        r.series_tested.max(1),
        r.min_change * 100.0,
        r.below_min_change
    ) + &reach_sep(r)
}

fn reach_sep(r: &ChangesReport) -> String {
    let line = reach_line(r);
    if line.is_empty() {
        line
    } else {
        format!(". {line}")
    }
}

/// A sparkline of the series with `┃` before each change point (Unicode only: nothing to escape).
pub fn sparkline(s: &SeriesPlot) -> String {
    const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let (lo, hi) = s
        .points
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
            (a.min(p.value), b.max(p.value))
        });
    let mut out = String::new();
    for p in &s.points {
        if s.changes.contains(&p.index) {
            out.push('┃');
        }
        let f = if hi > lo { (p.value - lo) / (hi - lo) } else { 0.5 };
        out.push(BARS[((f * 7.0).round() as usize).min(7)]);
    }
    out
}

fn plot_for<'a>(r: &'a ChangesReport, row: &ChangeRow) -> Option<&'a SeriesPlot> {
    r.series.iter().find(|s| s.key() == row.key())
}

/// Terminal table.
pub fn console(r: &ChangesReport) -> String {
    let mut out = String::new();
    if r.synthetic {
        out.push_str("SYNTHETIC input: at least one results file was not measured on a GPU\n");
    }
    let _ = writeln!(out, "{}", headline(r));
    for row in &r.rows {
        let _ = writeln!(
            out,
            "  {} {}[{}] {} {}: at #{} {} -> {} ({}), p {:.1e}{}",
            if row.worse { "WORSE" } else { "shift" },
            row.target,
            row.size,
            row.kernel,
            row.metric,
            row.index,
            human(row.before, &row.unit),
            human(row.after, &row.unit),
            row_change(row),
            row.p,
            row.commits
                .at
                .as_ref()
                .map_or_else(String::new, |c| format!(", commit {}", short(Some(c))))
        );
    }
    for n in &r.notes {
        let _ = writeln!(out, "note: {n}");
    }
    let _ = writeln!(out, "{}", method_line(r));
    out
}

/// Markdown: summary, the table of shifts with each series as a sparkline, the inputs.
pub fn markdown(r: &ChangesReport) -> String {
    let mut m = String::new();
    let icon = if r.worse() > 0 { "🔴" } else { "🟢" };
    let _ = writeln!(
        m,
        "## {icon} cgp-gate changes: {}\n",
        escape_md_cell(&headline(r))
    );
    if r.synthetic {
        m.push_str(
            "> [!WARNING]\n> **Synthetic data**: at least one results file was not measured on a GPU.\n\n",
        );
    }
    if !r.rows.is_empty() {
        m.push_str("| | target | size | kernel | metric | at | before | after | change | p | series (┃ = change) |\n");
        m.push_str("|---|---|---|---|---|---|---:|---:|---:|---:|---|\n");
        for row in &r.rows {
            let at = match (&row.commits.before, &row.commits.at) {
                (Some(b), Some(a)) => format!(
                    "#{} ({}..{})",
                    row.index,
                    escape_md_cell(&short(Some(b))),
                    escape_md_cell(&short(Some(a)))
                ),
                (None, Some(a)) => format!("#{} ({})", row.index, escape_md_cell(&short(Some(a)))),
                _ => format!("#{}", row.index),
            };
            let _ = writeln!(
                m,
                "| {} | {} | {} | {} | {} | {at} | {} | {} | {} | {:.1e} | {} |",
                if row.worse { "🔴 worse" } else { "🟢 better" },
                code_span(&row.target, true),
                escape_md_cell(&row.size),
                code_span(&row.kernel, true),
                code_span(&row.metric, true),
                escape_md_cell(&human(row.before, &row.unit)),
                escape_md_cell(&human(row.after, &row.unit)),
                escape_md_cell(&row_change(row)),
                row.p,
                plot_for(r, row).map_or_else(String::new, sparkline),
            );
        }
        m.push('\n');
    }
    for n in &r.notes {
        let _ = writeln!(m, "- note: {}", md_text(n, false));
    }
    let _ = writeln!(m, "<sub>{}</sub>\n", escape_md_cell(&method_line(r)));
    let _ = writeln!(
        m,
        "<details><summary>{} input files (oldest first)</summary>\n",
        r.files.len()
    );
    for (i, f) in r.files.iter().enumerate() {
        let _ = writeln!(
            m,
            "{i}. {}{}{}",
            code_span(&f.path, false),
            f.git_commit
                .as_ref()
                .map_or_else(String::new, |c| format!(" · {}", escape_md_cell(&short(Some(c))))),
            if f.date.is_empty() {
                String::new()
            } else {
                format!(" · {}", escape_md_cell(&f.date))
            }
        );
    }
    m.push_str("\n</details>\n");
    m
}

const STYLE: &str = r"
body { margin:0; padding:24px 32px; font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif; color:#1f2328; }
h1 { font-size:22px; margin:0 0 8px; } .meta { color:#59636e; font-size:12px; }
.banner { margin:12px 0; padding:8px 12px; border-radius:6px; border:1px solid #d4a72c; background:#fff8c5; }
table { border-collapse:collapse; margin:8px 0 16px; font-size:13px; }
th, td { border:1px solid #d1d9e0; padding:3px 8px; text-align:left; } th { background:#f6f8fa; }
td.num { text-align:right; font-variant-numeric:tabular-nums; white-space:nowrap; }
.worse { color:#cf222e; font-weight:600; } .better { color:#1a7f37; font-weight:600; }
.plots { display:grid; grid-template-columns:repeat(auto-fill, minmax(520px, 1fr)); gap:12px; }
figure { margin:0; padding:8px; border:1px solid #d1d9e0; border-radius:6px; }
figcaption { font-size:12px; overflow-wrap:anywhere; }
svg text { font:11px system-ui,sans-serif; fill:#1f2328; }
svg .axis { stroke:#8c959f; } svg .line { fill:none; stroke:#0969da; stroke-width:1.5; }
svg .dot { fill:#0969da; } svg .cp { stroke:#cf222e; stroke-width:1.5; stroke-dasharray:5 3; }
svg .level { stroke:#9a6700; stroke-width:2; }
";

/// One self-contained HTML page (no scripts, no network: CSP `default-src 'none'`).
pub fn html(r: &ChangesReport) -> String {
    let mut h = String::with_capacity(32 * 1024);
    let title = format!("cgp-gate changes: {}", headline(r));
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n\
         <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{}</h1>\n<div class=\"meta\">{}</div>\n",
        escape(&title),
        escape(&title),
        escape(&method_line(r))
    );
    if r.synthetic {
        h.push_str("<div class=\"banner\"><b>Synthetic data.</b> At least one results file was not measured on a GPU.</div>\n");
    }
    for n in &r.notes {
        let _ = writeln!(h, "<p class=\"meta\">note: {}</p>", escape(n));
    }
    if !r.rows.is_empty() {
        h.push_str("<table><tr><th></th><th>target</th><th>size</th><th>kernel</th><th>metric</th><th>at</th><th>commit</th><th>before</th><th>after</th><th>change</th><th>p</th></tr>\n");
        for row in &r.rows {
            let _ = writeln!(
                h,
                "<tr><td class=\"{}\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">#{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{:.1e}</td></tr>",
                if row.worse { "worse" } else { "better" },
                if row.worse { "worse" } else { "better" },
                escape(&row.target),
                escape(&row.size),
                escape(&row.kernel),
                escape(&row.metric),
                row.index,
                escape(&short(row.commits.at.as_ref())),
                escape(&human(row.before, &row.unit)),
                escape(&human(row.after, &row.unit)),
                row_change(row),
                row.p
            );
        }
        h.push_str("</table>\n<div class=\"plots\">\n");
        for s in r.series.iter().take(MAX_PLOTS) {
            chart(r, s, &mut h);
        }
        h.push_str("</div>\n");
    }
    h.push_str("<h2>Inputs (oldest first)</h2>\n<table><tr><th>#</th><th>file</th><th>commit</th><th>date</th></tr>\n");
    for (i, f) in r.files.iter().enumerate() {
        let _ = writeln!(
            h,
            "<tr><td class=\"num\">{i}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&f.path),
            escape(&short(f.git_commit.as_ref())),
            escape(&f.date)
        );
    }
    h.push_str("</table>\n</body>\n</html>\n");
    h
}

/// The widest a character of the charts' 11px labels is, with a margin (digits are about 6.1px
/// in the common system sans-serif fonts, capitals such as `T`, `F`, `O`, `P` up to 7.3px).
const AXIS_CHAR_PX: f64 = 7.0;

/// A number with three significant digits, no exponent for the values a display unit leaves
/// (`8.36`, `25.9`, `177`, `0.00123`).
fn three_digits(v: f64) -> String {
    if !v.is_finite() {
        return "n/a".to_owned();
    }
    if v == 0.0 {
        return "0".to_owned();
    }
    let magnitude = v.abs().log10().floor() as i32;
    let decimals = (2 - magnitude).max(0) as usize;
    let scale = 10f64.powi(magnitude - 2);
    let rounded = (v / scale).round() * scale;
    format!("{rounded:.decimals$}")
}

/// Inline SVG: the series against its input position, a dashed line at each change point and the
/// median level of every segment.
fn chart(r: &ChangesReport, s: &SeriesPlot, h: &mut String) {
    let (w, ht, right, top, bottom) = (500.0, 180.0, 10.0, 10.0, 24.0);
    let n = r.files.len().max(2) as f64;
    let (lo, hi) = s
        .points
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
            (a.min(p.value), b.max(p.value))
        });
    let (lo, hi) = if hi > lo { (lo, hi) } else { (lo - 1.0, hi + 1.0) };
    // The y-axis labels in the unit people read, three significant digits (`8.36 TFLOP/s`), and
    // the plot starts right of the longer one, so no label is cut at the left edge.
    let (div, unit) = crate::report::format::axis_scale(lo.abs().max(hi.abs()), &s.unit);
    let labels = [lo, hi].map(|v| format!("{} {unit}", three_digits(v / div)));
    let widest = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0) as f64;
    let left = (widest * AXIS_CHAR_PX + 10.0).max(40.0);
    let pad = (hi - lo) * 0.08;
    let (lo, hi) = (lo - pad, hi + pad);
    let x = |i: f64| left + (w - left - right) * i / (n - 1.0);
    let y = |v: f64| top + (ht - top - bottom) * (1.0 - (v - lo) / (hi - lo));
    let _ = write!(
        h,
        "<figure><figcaption>{} [{}] {} <b>{}</b>{}</figcaption>\n<svg width=\"{w}\" height=\"{ht}\" viewBox=\"0 0 {w} {ht}\" role=\"img\">",
        escape(&s.target),
        escape(&s.size),
        escape(&s.kernel),
        escape(&s.metric),
        if s.gpu.is_empty() {
            String::new()
        } else {
            format!(" ({})", escape(&s.gpu))
        }
    );
    let _ = write!(
        h,
        "<line class=\"axis\" x1=\"{left}\" y1=\"{top}\" x2=\"{left}\" y2=\"{:.1}\"/><line class=\"axis\" x1=\"{left}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\"/>",
        ht - bottom,
        ht - bottom,
        w - right,
        ht - bottom
    );
    for (v, label) in [lo + pad, hi - pad].into_iter().zip(&labels) {
        let _ = write!(
            h,
            "<text class=\"ylabel\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            left - 4.0,
            y(v) + 4.0,
            escape(label)
        );
    }
    let _ = write!(
        h,
        "<text x=\"{left}\" y=\"{:.1}\">#0</text><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">#{}</text>",
        ht - 6.0,
        w - right,
        ht - 6.0,
        r.files.len().saturating_sub(1)
    );
    let pts: Vec<String> = s
        .points
        .iter()
        .map(|p| format!("{:.1},{:.1}", x(p.index as f64), y(p.value)))
        .collect();
    let _ = write!(h, "<polyline class=\"line\" points=\"{}\"/>", pts.join(" "));
    for p in &s.points {
        let _ = write!(
            h,
            "<circle class=\"dot\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"2.5\"><title>#{}: {} {}</title></circle>",
            x(p.index as f64),
            y(p.value),
            p.index,
            format_number(p.value),
            escape(&s.unit)
        );
    }
    // Segment levels from the reported rows of this series.
    let rows: Vec<&ChangeRow> = r.rows.iter().filter(|row| row.key() == s.key()).collect();
    let first = s.points.first().map_or(0, |p| p.index) as f64;
    let last = s.points.last().map_or(0, |p| p.index) as f64;
    let mut sorted = rows.clone();
    sorted.sort_by_key(|row| row.index);
    for (k, row) in sorted.iter().enumerate() {
        let cx = x(row.index as f64 - 0.5);
        let _ = write!(
            h,
            "<line class=\"cp\" x1=\"{cx:.1}\" y1=\"{top}\" x2=\"{cx:.1}\" y2=\"{:.1}\"><title>change at #{}: {}</title></line>",
            ht - bottom,
            row.index,
            row_change(row)
        );
        let from = if k == 0 {
            first
        } else {
            sorted[k - 1].index as f64 - 0.5
        };
        let to = sorted.get(k + 1).map_or(last, |n| n.index as f64 - 0.5);
        for (a, b, v) in [
            (from, row.index as f64 - 0.5, row.before),
            (row.index as f64 - 0.5, to, row.after),
        ] {
            let _ = write!(
                h,
                "<line class=\"level\" x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\"/>",
                x(a),
                y(v),
                x(b),
                y(v)
            );
        }
    }
    h.push_str("</svg></figure>\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{InputFile, Point};

    fn report() -> ChangesReport {
        let name = "<img src=x onerror=alert(1)> | @team";
        let points: Vec<Point> = (0..8)
            .map(|i| Point {
                index: i,
                value: if i >= 4 { 110.0 } else { 100.0 },
            })
            .collect();
        ChangesReport {
            schema_version: 1,
            tool_version: "0".into(),
            method: "e-divisive-means+permutation".into(),
            alpha: 0.01,
            min_change: 0.01,
            min_segment: 3,
            series_tested: 1,
            series_skipped: 0,
            level: 0.01,
            below_min_change: 0,
            synthetic: true,
            files: (0..8)
                .map(|i| InputFile {
                    path: format!("r{i}<b>.json"),
                    git_commit: Some(format!("abc{i}")),
                    date: String::new(),
                    synthetic: true,
                })
                .collect(),
            notes: vec![],
            rows: vec![ChangeRow {
                target: name.into(),
                size: "n=1".into(),
                kernel: "k".into(),
                metric: "dur".into(),
                gpu: String::new(),
                unit: "ns".into(),
                direction: Some(crate::foundation::threshold::Direction::Lower),
                index: 4,
                before: 100.0,
                after: 110.0,
                change: Some(0.1),
                interval: None,
                p: 0.001,
                worse: true,
                commits: crate::history::ShiftCommits {
                    at: Some("abc4".into()),
                    before: Some("abc3".into()),
                },
            }],
            series: vec![SeriesPlot {
                target: name.into(),
                size: "n=1".into(),
                kernel: "k".into(),
                metric: "dur".into(),
                gpu: String::new(),
                unit: "ns".into(),
                points,
                changes: vec![4],
            }],
            reach: Default::default(),
        }
    }

    /// A history too short for a series says so and how many results it needs (the reach that
    /// `history::changes` works out; moved here from its tests when report became its own crate).
    #[test]
    fn a_too_short_history_says_how_many_results_it_needs() {
        use crate::history::{Reach, SeriesReach};
        let mut r = report();
        r.rows.clear();
        let s = SeriesReach {
            target: "t".into(),
            size: "n=1".into(),
            kernel: "k".into(),
            metric: "dur".into(),
            gpu: String::new(),
            results: 6,
            too_short: true,
            noise: Some(0.003),
            smallest: None,
            shift: 0.035,
            needed: Some(14),
            fewest: 9,
        };
        r.reach = Reach {
            power: 0.8,
            too_short: 1,
            smallest: None,
            most_needed: Some(s.clone()),
            series: vec![s],
        };
        let text = console(&r);
        assert!(text.contains("too short"), "{text}");
        assert!(text.contains("needs 14 results"), "{text}");
        assert!(!text.contains("no level shift of at least"), "{text}");
    }

    /// Real magnitudes (matmul's flop/s on the H100, `8362475394648.349609 flop/second` as
    /// raw floats before): the y labels read in the display unit with three significant digits,
    /// and the plot starts right of the wider one, so nothing is cut at the left edge.
    #[test]
    fn y_labels_use_units_three_digits_and_fit() {
        let mut r = report();
        r.series[0].unit = "flop/second".into();
        r.rows[0].unit = "flop/second".into();
        for p in &mut r.series[0].points {
            p.value = if p.index >= 4 {
                8_362_475_394_648.35
            } else {
                8_697_000_000_000.0
            };
        }
        let page = html(&r);
        let labels: Vec<(f64, &str)> = page
            .split("<text class=\"ylabel\" x=\"")
            .skip(1)
            .map(|s| {
                let (x, rest) = s.split_once('"').unwrap();
                let text = rest.split_once('>').unwrap().1.split("</text>").next().unwrap();
                (x.parse().unwrap(), text)
            })
            .collect();
        assert_eq!(labels.len(), 2, "{page}");
        for (x, text) in &labels {
            assert!(text.ends_with(" TFLOP/s"), "{text}");
            let number = text.split(' ').next().unwrap();
            let digits = number.chars().filter(char::is_ascii_digit).count();
            assert_eq!(digits, 3, "{text}");
            // Right-anchored at x: the text needs its width left of x, within the chart.
            assert!(*x >= text.chars().count() as f64 * AXIS_CHAR_PX, "{x} {text}");
        }
        assert_eq!(three_digits(8.362475), "8.36");
        assert_eq!(three_digits(176.94), "177");
        assert_eq!(three_digits(0.0012345), "0.00123");
        assert_eq!(three_digits(25.87), "25.9");
    }

    #[test]
    fn sparkline_marks_the_change() {
        let r = report();
        assert_eq!(sparkline(&r.series[0]), "▁▁▁▁┃████");
    }

    #[test]
    fn markdown_and_html_escape_names_and_mark_changes() {
        let r = report();
        let md = markdown(&r);
        assert!(md.contains("Synthetic data"));
        // Names are code spans: rendered, the hostile name is code, never HTML or a mention.
        use pulldown_cmark::{Event, Options, Parser};
        let events: Vec<Event> = Parser::new_ext(&md, Options::ENABLE_TABLES).collect();
        assert!(
            !events
                .iter()
                .any(|e| matches!(e, Event::Html(h) | Event::InlineHtml(h) if h.contains("img"))),
            "{md}"
        );
        assert!(
            events
                .iter()
                .any(|e| matches!(e, Event::Code(c) if c.as_ref() == "<img src=x onerror=alert(1)> | @team")),
            "{md}"
        );
        assert!(
            events
                .iter()
                .any(|e| matches!(e, Event::Code(c) if c.as_ref() == "r0<b>.json"))
        );
        assert!(!md.contains("&#"), "no character references: {md}");
        assert!(md.contains("▁▁▁▁┃████"));
        assert!(md.contains("+10.00%"), "{md}");
        assert!(md.contains("#4 (abc3..abc4)"));
        let page = html(&r);
        assert!(!page.contains("<img"));
        assert!(!page.contains("r0<b>"));
        assert!(page.contains("&lt;img src=x"));
        assert_eq!(page.matches("class=\"cp\"").count(), 1);
        assert_eq!(page.matches("<circle").count(), 8);
        assert!(page.contains("default-src 'none'"));
        let text = console(&r);
        assert!(text.contains("WORSE") && text.contains("+10.00%"));
    }
}
