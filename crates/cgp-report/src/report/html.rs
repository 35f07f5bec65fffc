//! A self-contained HTML report: one file, no scripts, no fonts, no network.
//!
//! A Content-Security-Policy of `default-src 'none'` (inline styles and `data:` images allowed)
//! makes the browser refuse anything external, so a stray link would show up as a console error in
//! the headless-Chromium test rather than silently phoning home. The charts are inline SVG written
//! by hand: a strip plot of baseline and candidate samples against the threshold for every judged
//! row, and a log-log roofline where the results carry roofline points.

use std::fmt::Write as _;

use crate::foundation::units::{format_number, human};
use crate::outcome::results::{Results, RooflinePoint, Row, RowVerdict, SideSummary};
use crate::report::format::{
    MEDIANS_LABEL, axis_scale, change_cell, common_ci_label, gpu_label, headline, medians, p_value,
    sorted_rows, threshold_limit,
};

/// Strip plots drawn at most; beyond this the page would be slow to open. Rows are in report
/// order, so regressions are always drawn.
const MAX_PLOTS: usize = 300;

/// HTML's one escaping function (it lives in [`super::text`], below this module and the
/// breakdown charts that this page includes).
pub use super::text::escape_html as escape;

const STYLE: &str = r#"
:root { --fg:#1f2328; --muted:#59636e; --line:#d1d9e0; --bg:#ffffff; --panel:#f6f8fa;
  --reg:#cf222e; --imp:#1a7f37; --inc:#9a6700; --pass:#0969da; --err:#8250df; --base:#6e7781; }
* { box-sizing:border-box; }
body { margin:0; padding:24px 32px; font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;
  color:var(--fg); background:var(--bg); }
h1 { font-size:22px; margin:0 0 4px; } h2 { font-size:17px; margin:28px 0 8px;
  border-bottom:1px solid var(--line); padding-bottom:4px; } h3 { font-size:14px; margin:16px 0 6px; }
header { border-left:6px solid var(--pass); padding:8px 14px; background:var(--panel); }
header.regression { border-color:var(--reg); } header.inconclusive { border-color:var(--inc); }
header.error { border-color:var(--err); }
.meta { color:var(--muted); font-size:12px; }
.banner { margin:12px 0; padding:8px 12px; border-radius:6px; border:1px solid; }
.banner.synthetic { background:#fff8c5; border-color:#d4a72c; }
.banner.real { background:#ddf4ff; border-color:#54aeff; }
.banner.mismatch { background:#ffebe9; border-color:#ff8182; }
table { border-collapse:collapse; margin:6px 0 12px; font-size:13px; }
th, td { border:1px solid var(--line); padding:3px 8px; text-align:left; vertical-align:top; }
th { background:var(--panel); } td.num { text-align:right; font-variant-numeric:tabular-nums; white-space:nowrap; }
td.kernel { font-family:ui-monospace,SFMono-Regular,Menlo,monospace; font-size:12px; max-width:420px;
  overflow-wrap:anywhere; }
td.what { max-width:520px; overflow-wrap:anywhere; }
td.what .k { font-family:ui-monospace,SFMono-Regular,Menlo,monospace; font-size:11.5px; color:var(--muted); }
td.what .reason { font-size:12px; }
.pill { display:inline-block; padding:0 7px; border-radius:10px; font-size:12px; font-weight:600;
  color:#fff; background:var(--pass); white-space:nowrap; }
.pill.regression { background:var(--reg); } .pill.improvement { background:var(--imp); }
.pill.inconclusive { background:var(--inc); } .pill.error { background:var(--err); }
.pill.new, .pill.missing { background:var(--base); } .pill.fails { background:var(--reg); }
.banner.skipped { border-left:4px solid var(--base); }
.banner.confirm { background:#ddf4ff; border-color:#54aeff; }
.plots { display:grid; grid-template-columns:repeat(auto-fill, minmax(540px, 1fr)); gap:12px; }
figure { margin:0; padding:8px; border:1px solid var(--line); border-radius:6px; background:var(--bg); }
figcaption { font-size:12px; margin-bottom:4px; overflow-wrap:anywhere; }
figcaption .k { font-family:ui-monospace,SFMono-Regular,Menlo,monospace; color:var(--muted); }
svg text { font:11px system-ui,-apple-system,"Segoe UI",Roboto,sans-serif; fill:var(--fg); }
svg .axis { stroke:#8c959f; stroke-width:1; } svg .grid { stroke:#eaeef2; stroke-width:1; }
svg .limit { stroke:var(--reg); stroke-width:1.5; stroke-dasharray:5 3; }
svg .median { stroke-width:3; } svg .roof { fill:none; stroke:#24292f; stroke-width:2; }
ul.errors li { margin:4px 0; }
"#;

/// Render the results as one self-contained HTML page.
pub fn html(results: &Results) -> String {
    let mut h = String::with_capacity(64 * 1024);
    let title = format!("cgp-gate: {}", headline(results));
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        escape(&title)
    );
    header(results, &mut h);
    highlighted_table(results, &mut h);
    errors(results, &mut h);
    left_out(results, &mut h);
    plots(results, &mut h);
    h.push_str(&super::breakdown::results_html(results));
    roofline(results, &mut h);
    all_rows(results, &mut h);
    run_info(results, &mut h);
    h.push_str("</body>\n</html>\n");
    h
}

fn header(results: &Results, h: &mut String) {
    let fp = &results.fingerprint;
    let _ = write!(
        h,
        "<header class=\"{}\"><h1>cgp-gate: {}</h1>\n<div class=\"meta\">spec {} · {} · driver {} · {} {} · clocks {} · {} · {}{}</div></header>\n",
        results.verdict.as_str(),
        escape(&headline(results)),
        escape(&results.spec_path),
        escape(&gpu_label(results)),
        escape(fp.driver_version.as_str()),
        escape(fp.profiler.as_str()),
        escape(fp.profiler_version.as_str()),
        escape(fp.clocks.as_str()),
        escape(&results.multiple_testing),
        escape(&results.date),
        results.git_commit.as_ref().map_or_else(String::new, |c| format!(
            " · commit {}",
            escape(c.get(..12).unwrap_or(c))
        )),
    );
    for c in &results.caveats {
        let _ = writeln!(
            h,
            "<div class=\"banner synthetic\"><b>Trust.</b> {}.</div>",
            escape(c)
        );
    }
    if results.synthetic {
        let _ = writeln!(
            h,
            "<div class=\"banner synthetic\"><b>Synthetic data.</b> These numbers were not measured on a GPU (source: {}).</div>",
            escape(results.source.as_str())
        );
    }
    if let Some(label) = crate::report::format::real_capture(results) {
        let _ = writeln!(
            h,
            "<div class=\"banner real\"><b>{}</b>: these numbers were measured on this GPU and replayed from a recording (source: {}).</div>",
            escape(&label),
            escape(results.source.as_str())
        );
    }
    if let Some(line) = crate::report::format::sass_skip_line(results) {
        let _ = writeln!(h, "<div class=\"banner skipped\">{}</div>", escape(&line));
    }
    if let Some(line) = super::confirm::run_line(results) {
        // `check --base` (docs/confirm.md): the commit, and each row it touched.
        let _ = write!(h, "<div class=\"banner confirm\"><b>{}</b><ul>", escape(&line));
        for l in super::confirm::row_lines(results) {
            let _ = write!(h, "<li>{}</li>", escape(&l));
        }
        let _ = writeln!(
            h,
            "</ul><span class=\"meta\">{}</span></div>",
            escape(&results.confirmation.method)
        );
    }
    if let m @ [_, ..] = results.fingerprint_mismatch.as_slice() {
        h.push_str("<div class=\"banner mismatch\"><b>Fingerprint mismatch.</b> The baseline was measured on a different setup (allowed by the spec); treat changes with care.<table><tr><th>field</th><th>baseline</th><th>this run</th></tr>");
        for d in m {
            let _ = write!(
                h,
                "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(&d.field),
                escape(&d.baseline),
                escape(&d.current)
            );
        }
        h.push_str("</table></div>\n");
    }
    let configs = super::format::config_changes(results);
    if !configs.is_empty() {
        let _ = write!(
            h,
            "<div class=\"banner\"><b>{}.</b><ul>",
            escape(super::format::CONFIG_CHANGE_NOTE)
        );
        for c in &configs {
            let _ = write!(h, "<li>{}</li>", escape(c));
        }
        h.push_str("</ul></div>\n");
    }
}

fn row_cells(
    r: &Row,
    fail_on: crate::outcome::results::FailOn,
    with_target: bool,
    common_ci: Option<&str>,
) -> String {
    // A row that fails the gate without being a regression (a missing kernel, an inconclusive
    // row under `--fail-on inconclusive`) wears the failure colour: decide::row_gate says so.
    let fails = if crate::outcome::decide::row_gate(r, fail_on).fails_beyond_its_verdict() {
        " fails"
    } else {
        ""
    };
    let mut s = format!(
        "<tr class=\"{v}\"><td><span class=\"pill {v}{fails}\">{w}</span></td>",
        v = r.verdict().as_str(),
        w = crate::report::format::verdict_word(r)
    );
    if with_target {
        let _ = write!(s, "<td>{}</td>", escape(&r.key.target));
    }
    let _ = writeln!(
        s,
        "<td>{}</td><td class=\"what\">{}<div class=\"k\">{}</div><div class=\"reason\">{}</div></td><td class=\"num change\">{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num medians\">{}</td><td class=\"num\">{}/{}</td></tr>",
        escape(&r.key.size),
        escape(&r.key.metric),
        escape(r.kernel_label()),
        escape(&super::format::reason_with_config(r)),
        escape(&change_cell(r, common_ci)),
        escape(&r.rule.text()),
        escape(&p_value(r.estimate().p_adjusted().or(r.estimate().p()))),
        escape(&medians(r)),
        r.sides.baseline.as_ref().map_or(0, |x| x.n),
        r.sides.candidate.as_ref().map_or(0, |x| x.n),
    );
    s
}

fn table_head(with_target: bool, ci: &str) -> String {
    format!(
        "<table><tr><th>verdict</th>{}<th>size</th><th>metric, kernel and reason</th><th>change ({})</th><th>threshold</th><th>p (adj.)</th><th>{}</th><th>n</th></tr>\n",
        if with_target { "<th>target</th>" } else { "" },
        escape(ci),
        escape(MEDIANS_LABEL)
    )
}

fn highlighted_table(results: &Results, h: &mut String) {
    let rows: Vec<&Row> = sorted_rows(results)
        .into_iter()
        .filter(|r| {
            r.verdict() == RowVerdict::Improvement
                || crate::outcome::decide::row_gate(r, results.fail_on).gate()
                    != crate::outcome::decide::Gate::Pass
        })
        .collect();
    h.push_str("<h2>Regressions, improvements and inconclusive rows</h2>\n");
    if rows.is_empty() {
        let _ = writeln!(
            h,
            "<p>{}</p>",
            escape(&super::format::nothing_to_look_at(results))
        );
        return;
    }
    let common = common_ci_label(rows.iter().copied());
    h.push_str(&table_head(true, common.as_deref().unwrap_or("CI")));
    for r in &rows {
        h.push_str(&row_cells(r, results.fail_on, true, common.as_deref()));
    }
    h.push_str("</table>\n");
    let _ = writeln!(h, "<p class=\"note\">{}</p>", escape(super::format::P_NOTE));
    for r in rows {
        why_table(r, h);
    }
}

/// The "why" of a row (docs/why.md): the reading and a small counter-diff table.
fn why_table(r: &Row, h: &mut String) {
    let Some(w) = super::why::WhyView::of(r) else {
        return;
    };
    let _ = write!(
        h,
        "<div class=\"why\"><b>Why</b> {} {}: {}",
        escape(&w.subject()),
        escape(w.metric),
        escape(w.reading)
    );
    if !w.counters.is_empty() {
        h.push_str("<table><tr><th>counter</th><th>base</th><th>head</th><th>change</th></tr>");
        for c in &w.counters {
            let _ = write!(
                h,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(c.counter),
                escape(&c.base),
                escape(&c.head),
                escape(&c.change),
            );
        }
        h.push_str("</table>");
    }
    h.push_str("</div>\n");
}

fn errors(results: &Results, h: &mut String) {
    if results.errors.is_empty() {
        return;
    }
    h.push_str("<h2>Errors</h2>\n<ul class=\"errors\">\n");
    for e in &results.errors {
        let at = match &e.size {
            Some(s) => format!("{}[{s}]", e.target),
            None => e.target.clone(),
        };
        let _ = writeln!(
            h,
            "<li><b>{}</b> ({}): {}</li>",
            escape(&at),
            escape(e.kind.as_str()),
            escape(&e.message)
        );
    }
    h.push_str("</ul>\n");
}

/// What the tests left out as the machine's, or kept as the code's, row by row (issue 43).
fn left_out(results: &Results, h: &mut String) {
    let lines = super::format::left_out_lines(results);
    if lines.is_empty() {
        return;
    }
    h.push_str("<h2>Left out of the tests</h2>\n<p class=\"meta\">Outliers the baseline has as many of are the machine's and left out; more than the baseline's share are the code's and kept (docs/statistics.md 2.5).</p>\n<ul class=\"left-out\">\n");
    for l in lines {
        let _ = writeln!(h, "<li>{}</li>", escape(&l));
    }
    h.push_str("</ul>\n");
}

fn verdict_colour(v: RowVerdict) -> &'static str {
    match v {
        RowVerdict::Regression => "var(--reg)",
        RowVerdict::Improvement => "var(--imp)",
        RowVerdict::Inconclusive => "var(--inc)",
        RowVerdict::Error => "var(--err)",
        RowVerdict::Pass | RowVerdict::New | RowVerdict::Missing => "var(--pass)",
    }
}

fn plots(results: &Results, h: &mut String) {
    let rows: Vec<&Row> = sorted_rows(results)
        .into_iter()
        .filter(|r| {
            r.sides.baseline.as_ref().is_some_and(|s| !s.samples.is_empty())
                && r.sides.candidate.as_ref().is_some_and(|s| !s.samples.is_empty())
        })
        .collect();
    if rows.is_empty() {
        return;
    }
    h.push_str("<h2>Samples against the threshold</h2>\n<p class=\"meta\">Each dot is one repetition; the thick tick is the median; hollow dots are outliers beyond Tukey's fences (those on the slow side, up to a fifth of a side, are left out of the test as clock dips: see the row's reason); the dashed red line is where the head's median would cross the threshold. Base: the stored baseline (<code>check</code>) or the base commit (<code>ab</code>); head: this run.</p>\n<div class=\"plots\">\n");
    for r in rows.iter().take(MAX_PLOTS) {
        let _ = writeln!(
            h,
            "<figure><figcaption><span class=\"pill {v}\">{v}</span> <b>{} {}</b> {}<br><span class=\"k\">{}</span></figcaption>{}</figure>",
            escape(&crate::measured::samples::target_size(&r.key.target, &r.key.size)),
            escape(&r.key.metric),
            escape(&change_cell(r, None)),
            escape(r.kernel_label()),
            strip_plot(r),
            v = r.verdict().as_str(),
        );
    }
    h.push_str("</div>\n");
    if rows.len() > MAX_PLOTS {
        let _ = writeln!(
            h,
            "<p class=\"meta\">{} more rows are not plotted; their numbers are in the tables.</p>",
            rows.len() - MAX_PLOTS
        );
    }
}

/// A finite value range padded on both sides; a zero-width range is widened around its value.
fn padded(lo: f64, hi: f64, frac: f64) -> (f64, f64) {
    let w = hi - lo;
    if w > 0.0 {
        (lo - w * frac, hi + w * frac)
    } else {
        let d = if lo == 0.0 { 1.0 } else { lo.abs() * 0.01 };
        (lo - d, hi + d)
    }
}

fn strip_plot(r: &Row) -> String {
    const W: f64 = 560.0;
    const H: f64 = 104.0;
    const LEFT: f64 = 118.0;
    const RIGHT: f64 = 24.0;
    let (Some(b), Some(c)) = (&r.sides.baseline, &r.sides.candidate) else {
        return String::new();
    };
    let limit = threshold_limit(r).filter(|x| x.is_finite());
    let all = b
        .samples
        .iter()
        .chain(&c.samples)
        .chain(limit.iter())
        .copied()
        .filter(|x| x.is_finite());
    let (lo, hi) = all.fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), x| {
        (l.min(x), h.max(x))
    });
    if !lo.is_finite() || !hi.is_finite() {
        return String::new();
    }
    let (lo, hi) = padded(lo, hi, 0.06);
    let x = |v: f64| LEFT + (v - lo) / (hi - lo) * (W - LEFT - RIGHT);
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{H}\" viewBox=\"0 0 {W} {H}\" role=\"img\">"
    );
    // Axis with five ticks in the unit people read.
    let axis_y = H - 22.0;
    let (div, unit) = axis_scale(lo.abs().max(hi.abs()), &r.unit);
    let _ = write!(
        s,
        "<line class=\"axis\" x1=\"{LEFT}\" y1=\"{axis_y}\" x2=\"{}\" y2=\"{axis_y}\"/>",
        W - RIGHT
    );
    // Ticks at round values (1, 2 or 5 x 10^k in display units), about five of them.
    let step = nice_step((hi - lo) / div / 4.0);
    let first = (lo / div / step).ceil() as i64;
    let last = (hi / div / step).floor() as i64;
    for k in first..=last.min(first + 12) {
        let v = k as f64 * step * div;
        let px = x(v);
        let _ = write!(
            s,
            "<line class=\"grid\" x1=\"{px:.1}\" y1=\"8\" x2=\"{px:.1}\" y2=\"{axis_y}\"/><text x=\"{px:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            axis_y + 14.0,
            escape(&tick_step(v / div, step))
        );
    }
    let _ = write!(
        s,
        "<text x=\"4\" y=\"{}\">{}</text>",
        axis_y + 14.0,
        escape(&unit)
    );
    let colour = verdict_colour(r.verdict());
    for (side, y, fill, label) in [(b, 28.0, "var(--base)", "base"), (c, 58.0, colour, "head")] {
        side_marks(&mut s, side, y, fill, label, &x);
    }
    if let Some(l) = limit {
        let px = x(l);
        let label = format!("threshold {}", crate::report::format::threshold_label(r));
        let (tx, anchor) = label_place(px, &label, W);
        let _ = write!(
            s,
            "<line class=\"limit\" x1=\"{px:.1}\" y1=\"10\" x2=\"{px:.1}\" y2=\"{}\"/><text x=\"{tx:.1}\" y=\"10\" fill=\"var(--reg)\" text-anchor=\"{anchor}\" style=\"fill:var(--reg)\">{}</text>",
            axis_y,
            escape(&label)
        );
    }
    s.push_str("</svg>");
    s
}

/// The widest a character of the page's 14px sans-serif text is on average, with a margin
/// (digits and lowercase letters are about 7.7px in the common system fonts; capitals more).
const LABEL_CHAR_PX: f64 = 8.0;

/// Where a label beside a vertical line at `px` goes in a chart `w` wide: right of the line when
/// it fits there, else left of it, else right-aligned to the chart's edge; so that it is never cut
/// off at the right edge (`threshold 3%, min effect 1us` near the right end).
fn label_place(px: f64, label: &str, w: f64) -> (f64, &'static str) {
    let width = label.chars().count() as f64 * LABEL_CHAR_PX;
    if px + 4.0 + width <= w - 2.0 {
        (px + 4.0, "start")
    } else if px - 4.0 - width >= 2.0 {
        (px - 4.0, "end")
    } else {
        (w - 2.0, "end")
    }
}

fn side_marks(s: &mut String, side: &SideSummary, y: f64, fill: &str, label: &str, x: &dyn Fn(f64) -> f64) {
    let _ = write!(
        s,
        "<text x=\"4\" y=\"{:.1}\">{label} (n={})</text>",
        y + 4.0,
        side.n
    );
    for (i, v) in side.samples.iter().enumerate() {
        if !v.is_finite() {
            continue;
        }
        // Deterministic jitter so identical values stay visible as a cluster.
        let jy = y + (((i * 7) % 9) as f64 - 4.0) * 1.6;
        let outlier = side.outliers.contains(&i);
        let _ = write!(
            s,
            "<circle cx=\"{:.1}\" cy=\"{jy:.1}\" r=\"3.2\" style=\"{}\" fill-opacity=\"0.7\"><title>{}</title></circle>",
            x(*v),
            if outlier {
                format!("fill:none;stroke:{fill};stroke-width:1.5")
            } else {
                format!("fill:{fill}")
            },
            escape(&format!(
                "#{i}: {}{}",
                format_number(*v),
                if outlier { " (outlier)" } else { "" }
            ))
        );
    }
    if side.median.is_finite() {
        let px = x(side.median);
        let _ = write!(
            s,
            "<line class=\"median\" x1=\"{px:.1}\" y1=\"{:.1}\" x2=\"{px:.1}\" y2=\"{:.1}\" style=\"stroke:{fill}\"/>",
            y - 11.0,
            y + 11.0
        );
    }
}

/// The 1-2-5 step nearest above `raw`.
fn nice_step(raw: f64) -> f64 {
    if !(raw.is_finite() && raw > 0.0) {
        return 1.0;
    }
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let m = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    m * mag
}

/// Axis tick text with as many decimals as the tick spacing needs (`127.3`, `127.9`, not `127`, `127`).
fn tick_step(v: f64, step: f64) -> String {
    if !(step.is_finite() && step > 0.0) {
        return tick(v);
    }
    let decimals = (-step.log10().floor()).clamp(0.0, 6.0) as usize;
    format!("{v:.decimals$}")
}

/// Axis tick text: few digits.
fn tick(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

fn roofline(results: &Results, h: &mut String) {
    let pts: Vec<&RooflinePoint> = results
        .roofline
        .iter()
        .filter(|p| {
            p.intensity.is_finite()
                && p.intensity > 0.0
                && p.achieved_tflops.is_finite()
                && p.achieved_tflops > 0.0
        })
        .collect();
    if pts.is_empty() {
        return;
    }
    h.push_str("<h2>Roofline</h2>\n");
    h.push_str(&roofline_svg(&pts));
    h.push_str(&format!(
        "\n<table><tr><th>target</th><th>size</th><th>kernel</th><th>intensity (FLOP/byte)</th><th>achieved</th><th>bandwidth</th><th>duration</th><th>bound</th></tr>\n{}</table>\n",
        pts.iter()
            .map(|p| format!(
                "<tr><td>{}</td><td>{}</td><td class=\"kernel\">{}</td><td class=\"num\">{}</td><td class=\"num\">{} TFLOP/s</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>\n",
                escape(&p.target),
                escape(&p.size),
                escape(&p.kernel),
                escape(&tick(p.intensity)),
                escape(&tick(p.achieved_tflops)),
                escape(&human(p.achieved_gbps * 1e9, "byte/second")),
                escape(&human(p.duration_ns, "ns")),
                escape(p.bound.as_deref().unwrap_or("-")),
            ))
            .collect::<String>()
    ));
}

fn roofline_svg(pts: &[&RooflinePoint]) -> String {
    const W: f64 = 720.0;
    const H: f64 = 440.0;
    const L: f64 = 70.0;
    const R: f64 = 24.0;
    const T: f64 = 20.0;
    const B: f64 = 48.0;
    let peaks = pts.iter().find_map(|p| match (p.peak_tflops, p.peak_gbps) {
        (Some(t), Some(g)) if t.is_finite() && g.is_finite() && t > 0.0 && g > 0.0 => Some((t, g)),
        _ => None,
    });
    let ridge = peaks.map(|(t, g)| t * 1000.0 / g);
    let xs = pts.iter().map(|p| p.intensity).chain(ridge);
    let ys = pts.iter().map(|p| p.achieved_tflops).chain(peaks.map(|p| p.0));
    let (xmin, xmax) = xs.fold((f64::INFINITY, 0.0_f64), |(a, b), v| (a.min(v), b.max(v)));
    let (ymin, ymax) = ys.fold((f64::INFINITY, 0.0_f64), |(a, b), v| (a.min(v), b.max(v)));
    // Whole decades around the data, so the axes read as powers of ten.
    let (dx0, dx1) = ((xmin / 2.0).log10().floor(), (xmax * 2.0).log10().ceil());
    let (dy0, dy1) = ((ymin / 2.0).log10().floor(), (ymax * 2.0).log10().ceil());
    let px = |v: f64| L + (v.log10() - dx0) / (dx1 - dx0).max(1.0) * (W - L - R);
    let py = |v: f64| H - B - (v.log10() - dy0) / (dy1 - dy0).max(1.0) * (H - T - B);
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{H}\" viewBox=\"0 0 {W} {H}\" role=\"img\"><title>Roofline (log-log)</title>"
    );
    for d in (dx0 as i32)..=(dx1 as i32) {
        let v = 10f64.powi(d);
        let x = px(v);
        let _ = write!(
            s,
            "<line class=\"grid\" x1=\"{x:.1}\" y1=\"{T}\" x2=\"{x:.1}\" y2=\"{}\"/><text x=\"{x:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            H - B,
            H - B + 16.0,
            decade(v)
        );
    }
    for d in (dy0 as i32)..=(dy1 as i32) {
        let v = 10f64.powi(d);
        let y = py(v);
        let _ = write!(
            s,
            "<line class=\"grid\" x1=\"{L}\" y1=\"{y:.1}\" x2=\"{}\" y2=\"{y:.1}\"/><text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            W - R,
            L - 6.0,
            y + 4.0,
            decade(v)
        );
    }
    let _ = write!(
        s,
        "<line class=\"axis\" x1=\"{L}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/><line class=\"axis\" x1=\"{L}\" y1=\"{T}\" x2=\"{L}\" y2=\"{}\"/>\
         <text x=\"{}\" y=\"{}\" text-anchor=\"middle\">arithmetic intensity (FLOP/byte)</text>\
         <text x=\"16\" y=\"{}\" text-anchor=\"middle\" transform=\"rotate(-90 16 {})\">TFLOP/s</text>",
        H - B,
        W - R,
        H - B,
        H - B,
        (L + W - R) / 2.0,
        H - 10.0,
        (T + H - B) / 2.0,
        (T + H - B) / 2.0,
    );
    if let (Some((tf, gb)), Some(ridge)) = (peaks, ridge) {
        let x0 = 10f64.powf(dx0);
        let x1 = 10f64.powf(dx1);
        // Memory roof: TFLOP/s = intensity x GB/s / 1000, clipped at the bottom of the chart.
        let y_lo = 10f64.powf(dy0);
        let start = x0.max(y_lo * 1000.0 / gb);
        let (sx, sy) = (px(start), py(start * gb / 1000.0));
        let (rx, ry) = (px(ridge), py(tf));
        // The label follows the memory roof's slope as drawn (pixels, not data units).
        let angle = (ry - sy).atan2(rx - sx).to_degrees();
        let _ = write!(
            s,
            "<polyline class=\"roof\" points=\"{sx:.1},{sy:.1} {rx:.1},{ry:.1} {:.1},{ry:.1}\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">peak {} TFLOP/s</text>\
             <text x=\"{lx:.1}\" y=\"{ly:.1}\" text-anchor=\"middle\" transform=\"rotate({angle:.1} {lx:.1} {ly:.1})\">{}</text>",
            px(x1),
            W - R - 4.0,
            ry - 6.0,
            escape(&tick(tf)),
            escape(&human(gb * 1e9, "byte/second")),
            lx = (sx + rx) / 2.0 - 6.0,
            ly = (sy + ry) / 2.0 - 6.0,
        );
    }
    let palette = [
        "#0969da", "#cf222e", "#1a7f37", "#8250df", "#bc4c00", "#1b7c83", "#6e7781",
    ];
    for (i, p) in pts.iter().enumerate() {
        let (x, y) = (px(p.intensity), py(p.achieved_tflops));
        let colour = palette[i % palette.len()];
        let label = crate::measured::samples::target_size(&p.target, &p.size);
        let _ = write!(
            s,
            "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"5\" style=\"fill:{colour}\"><title>{}</title></circle><text x=\"{:.1}\" y=\"{:.1}\" style=\"fill:{colour}\">{}</text>",
            escape(&format!(
                "{label} {}: {} TFLOP/s at {} FLOP/byte",
                p.kernel,
                tick(p.achieved_tflops),
                tick(p.intensity)
            )),
            x + 8.0,
            y + 4.0,
            escape(&crate::report::format::shorten(&label, 40)),
        );
    }
    s.push_str("</svg>");
    s
}

/// A power of ten as an axis label: `0.01`, `1`, `1000`.
fn decade(v: f64) -> String {
    if v >= 1.0 {
        format!("{v:.0}")
    } else {
        format_number(v)
    }
}

fn all_rows(results: &Results, h: &mut String) {
    h.push_str("<h2>All rows</h2>\n");
    let mut targets: Vec<&str> = Vec::new();
    for r in &results.rows {
        if !targets.contains(&r.key.target.as_str()) {
            targets.push(&r.key.target);
        }
    }
    for t in targets {
        let rows: Vec<&Row> = sorted_rows(results)
            .into_iter()
            .filter(|r| r.key.target == t)
            .collect();
        let common = common_ci_label(rows.iter().copied());
        let _ = writeln!(h, "<h3>{}</h3>", escape(t));
        h.push_str(&table_head(false, common.as_deref().unwrap_or("CI")));
        for r in rows {
            h.push_str(&row_cells(r, results.fail_on, false, common.as_deref()));
        }
        h.push_str("</table>\n");
    }
}

fn run_info(results: &Results, h: &mut String) {
    h.push_str("<h2>Run</h2>\n<table>\n");
    let mut kv = |k: &str, v: &str| {
        let _ = writeln!(h, "<tr><th>{}</th><td>{}</td></tr>", escape(k), escape(v));
    };
    kv("verdict", results.verdict.as_str());
    kv("tool version", &results.tool_version);
    kv(
        "spec",
        &format!("{} (sha256 {})", results.spec_path, results.spec_hash),
    );
    kv("source", results.source.as_str());
    kv("synthetic", if results.synthetic { "yes" } else { "no" });
    kv("date", &results.date);
    kv("fail on", results.fail_on.as_str());
    kv("multiple testing", &results.multiple_testing);
    if let Some(s) = &results.shard {
        kv("shard", s);
    }
    if let Some(c) = &results.git_commit {
        kv("git commit", c);
    }
    for (k, v) in results.fingerprint.fields() {
        kv(k, v);
    }
    let hl = &results.health;
    let range = |r: Option<[u32; 2]>, u: &str| r.map(|[a, b]| format!("{a}–{b} {u}"));
    if let Some(v) = range(hl.sm_clock_mhz, "MHz") {
        kv("SM clock", &v);
    }
    if let Some(v) = range(hl.mem_clock_mhz, "MHz") {
        kv("memory clock", &v);
    }
    if let Some(v) = range(hl.temperature_c, "°C") {
        kv("temperature", &v);
    }
    if let Some([a, b]) = hl.power_w {
        kv("power", &format!("{}–{} W", format_number(a), format_number(b)));
    }
    kv("throttled repetitions", &hl.throttled_reps.to_string());
    // Two different counts, named apart (issue 46): repetitions run again because the GPU
    // throttled (health), and rows measured again because their verdict was in doubt (JSON
    // `remeasured`, per row).
    kv("repetitions re-run after throttling", &hl.rerun_reps.to_string());
    let doubtful = results.rows.iter().filter(|r| r.remeasured > 0).count();
    kv("rows re-measured (doubtful)", &doubtful.to_string());
    for n in &hl.notes {
        kv("note", n);
    }
    for (t, secs) in &results.cost_seconds {
        kv(&format!("time: {t}"), &format!("{} s", format_number(*secs)));
    }
    h.push_str("</table>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_threshold_label_stays_inside_the_chart() {
        let w = 560.0;
        let label = "threshold 3%, min effect 1us";
        let width = label.chars().count() as f64 * LABEL_CHAR_PX;
        for px in [118.0, 200.0, 300.0, 330.0, 400.0, 500.0, 536.0] {
            let (x, anchor) = label_place(px, label, w);
            let (left, right) = if anchor == "start" {
                (x, x + width)
            } else {
                (x - width, x)
            };
            assert!(left >= 0.0 && right <= w, "{px}: {x} {anchor}");
        }
        assert_eq!(label_place(400.0, label, w), (396.0, "end"));
    }
}
