//! The HTML report's charts: a strip plot of baseline and candidate samples against the
//! threshold for every judged row, and a log-log roofline, as inline SVG written by hand.

use std::fmt::Write as _;

use super::escape;
use crate::foundation::units::{format_number, human};
use crate::outcome::results::{RooflinePoint, RowVerdict, SideSummary};
use crate::outcome::view::{RowView, RunView};
use crate::report::format::{axis_scale, change_cell, sorted_rows};

/// Strip plots drawn at most; beyond this the page would be slow to open. Rows are in report
/// order, so regressions are always drawn.
const MAX_PLOTS: usize = 300;

pub(super) fn plots(run: RunView<'_>, h: &mut String) {
    let rows: Vec<RowView<'_>> = sorted_rows(run)
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
            escape(r.key.kernel_label()),
            strip_plot(r),
            v = r.verdict.as_str(),
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

fn verdict_colour(v: RowVerdict) -> &'static str {
    match v {
        RowVerdict::Regression => "var(--reg)",
        RowVerdict::Improvement => "var(--imp)",
        RowVerdict::Inconclusive => "var(--inc)",
        RowVerdict::Error => "var(--err)",
        RowVerdict::Pass | RowVerdict::New | RowVerdict::Missing => "var(--pass)",
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

fn strip_plot(r: &RowView<'_>) -> String {
    const W: f64 = 560.0;
    const H: f64 = 104.0;
    const LEFT: f64 = 118.0;
    const RIGHT: f64 = 24.0;
    let (Some(b), Some(c)) = (&r.sides.baseline, &r.sides.candidate) else {
        return String::new();
    };
    let limit = r.crossing_line().filter(|x| x.is_finite());
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
    let (div, unit) = axis_scale(lo.abs().max(hi.abs()), r.unit);
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
    let colour = verdict_colour(r.verdict);
    for (side, y, fill, label) in [(b, 28.0, "var(--base)", "base"), (c, 58.0, colour, "head")] {
        side_marks(&mut s, side, y, fill, label, &x);
    }
    if let Some(l) = limit {
        let px = x(l);
        let label = format!("threshold {}", r.crossing_label());
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

pub(super) fn roofline(run: RunView<'_>, h: &mut String) {
    let pts: Vec<&RooflinePoint> = run
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
