//! Nsight Systems breakdowns rendered: a self-contained HTML page for `breakdown --html`, and
//! the SVG and Markdown bars the check reports reuse for `profiler: nsys` targets.
//!
//! Every run gets one bar; every category keeps one colour across bars (its place in
//! [`category_order`]). No script, no external resource: the page carries a Content Security
//! Policy that forbids both. All text is escaped.

use std::fmt::Write as _;

use super::text::escape_html as escape;
use crate::foundation::units::human;
use crate::nsys::breakdown::{Breakdown, RunBreakdown, category_order};
use crate::nsys::categories::MISC;
use crate::outcome::view::RunView;

/// Colours by category position (colour-blind-safe first, after Okabe-Ito and Tableau).
const PALETTE: &[&str] = &[
    "#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#f0e442", "#8c564b", "#17becf",
    "#bcbd22", "#9467bd", "#7f7f7f",
];
const MISC_COLOUR: &str = "#b9bec5";
/// Markdown has no colour: one emoji square per category, in the same order.
const SQUARES: &[&str] = &["🟦", "🟧", "🟩", "🟪", "🟥", "🟨", "🟫", "⬛"];
const MISC_SQUARE: &str = "⬜";

/// The colour of the category at `index` in the shared order.
pub fn colour(order: &[String], name: &str) -> &'static str {
    if name == MISC {
        return MISC_COLOUR;
    }
    let i = order
        .iter()
        .filter(|c| *c != MISC)
        .position(|c| c == name)
        .unwrap_or(0);
    PALETTE[i % PALETTE.len()]
}

fn square(order: &[String], name: &str) -> &'static str {
    if name == MISC {
        return MISC_SQUARE;
    }
    let i = order
        .iter()
        .filter(|c| *c != MISC)
        .position(|c| c == name)
        .unwrap_or(0);
    SQUARES[i % SQUARES.len()]
}

/// One bar: a label and its (category, ns) segments.
#[derive(Debug, Clone)]
pub struct Bar {
    pub label: String,
    pub segments: Vec<(String, f64)>,
}

/// Horizontal stacked bars in one SVG, all on one scale (the largest bar fills the width), with
/// a legend. `order` fixes the category order and colours.
pub fn stacked_svg(bars: &[Bar], order: &[String], title: &str) -> String {
    const LABEL_W: f64 = 220.0;
    const BAR_W: f64 = 640.0;
    const ROW_H: f64 = 30.0;
    let max = bars
        .iter()
        .map(|b| b.segments.iter().map(|s| s.1).sum::<f64>())
        .fold(0.0_f64, f64::max);
    let legend_rows = order.len().div_ceil(4);
    let height = 10.0 + ROW_H * bars.len() as f64 + 22.0 * legend_rows as f64 + 10.0;
    let width = LABEL_W + BAR_W + 110.0;
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg class=\"stacked\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" role=\"img\"><title>{}</title>",
        escape(title)
    );
    for (i, b) in bars.iter().enumerate() {
        let y = 10.0 + ROW_H * i as f64;
        let label: String = if b.label.chars().count() > 32 {
            format!(
                "…{}",
                b.label
                    .chars()
                    .rev()
                    .take(31)
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect::<String>()
            )
        } else {
            b.label.clone()
        };
        let _ = write!(
            s,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" font-size=\"12\">{}<title>{}</title></text>",
            LABEL_W - 8.0,
            y + 16.0,
            escape(&label),
            escape(&b.label)
        );
        let total: f64 = b.segments.iter().map(|s| s.1).sum();
        let mut x = LABEL_W;
        for cat in order {
            let Some((_, v)) = b.segments.iter().find(|(c, _)| c == cat) else {
                continue;
            };
            if *v <= 0.0 || max <= 0.0 {
                continue;
            }
            let w = v / max * BAR_W;
            let _ = write!(
                s,
                "<rect class=\"seg\" x=\"{x:.2}\" y=\"{y}\" width=\"{w:.2}\" height=\"{}\" fill=\"{}\"><title>{}: {} ({:.1}%)</title></rect>",
                ROW_H - 8.0,
                colour(order, cat),
                escape(cat),
                human(*v, "ns"),
                v * 100.0 / total
            );
            x += w;
        }
        let _ = write!(
            s,
            "<text x=\"{:.2}\" y=\"{}\" font-size=\"12\">{}</text>",
            x + 6.0,
            y + 16.0,
            human(total, "ns")
        );
    }
    let ly = 10.0 + ROW_H * bars.len() as f64 + 6.0;
    for (i, cat) in order.iter().enumerate() {
        let x = LABEL_W + (i % 4) as f64 * 160.0;
        let y = ly + 22.0 * (i / 4) as f64;
        let _ = write!(
            s,
            "<rect x=\"{x}\" y=\"{y}\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{}\" y=\"{}\" font-size=\"12\">{}</text>",
            colour(order, cat),
            x + 16.0,
            y + 11.0,
            escape(cat)
        );
    }
    s.push_str("</svg>");
    s
}

/// Bars as Markdown: one line of 40 squares per bar (one square per 2.5% of the bar's own
/// total), with a legend line.
pub fn stacked_markdown(bars: &[Bar], order: &[String]) -> String {
    const CELLS: usize = 40;
    // More categories than squares: the smallest ones (the end of the order) share `misc`'s
    // square, and the legend names them, so that no two squares of one colour mean different
    // categories.
    let named: Vec<&String> = order.iter().filter(|c| *c != MISC).collect();
    let folded: Vec<&str> = if named.len() > SQUARES.len() {
        named[SQUARES.len() - 1..].iter().map(|c| c.as_str()).collect()
    } else {
        Vec::new()
    };
    let square = |order: &[String], c: &str| {
        if folded.contains(&c) {
            MISC_SQUARE
        } else {
            square(order, c)
        }
    };
    let mut out = String::new();
    for b in bars {
        let total: f64 = b.segments.iter().map(|s| s.1).sum();
        let mut line = String::new();
        if total > 0.0 {
            // Largest-remainder rounding, so the line always has exactly CELLS squares.
            let mut cells: Vec<(usize, f64, &str)> = order
                .iter()
                .filter_map(|c| {
                    let v = b.segments.iter().find(|(n, _)| n == c)?.1;
                    let exact = v / total * CELLS as f64;
                    #[allow(
                        clippy::cast_possible_truncation,
                        clippy::cast_sign_loss,
                        reason = "0 <= exact <= CELLS"
                    )]
                    Some((exact.floor() as usize, exact - exact.floor(), c.as_str()))
                })
                .collect();
            let used: usize = cells.iter().map(|c| c.0).sum();
            let mut by_rem: Vec<usize> = (0..cells.len()).collect();
            by_rem.sort_by(|a, b| cells[*b].1.total_cmp(&cells[*a].1));
            for i in by_rem.into_iter().take(CELLS.saturating_sub(used)) {
                cells[i].0 += 1;
            }
            for (n, _, c) in cells {
                line.push_str(&square(order, c).repeat(n));
            }
        }
        let _ = writeln!(
            out,
            "`{}` {line} {}  ",
            b.label.replace('`', "'"),
            human(total, "ns")
        );
    }
    let mut legend: Vec<String> = order
        .iter()
        .filter(|c| !folded.contains(&c.as_str()) && *c != MISC)
        .map(|c| format!("{} {}", square(order, c), crate::report::escape_md_cell(c)))
        .collect();
    let rest: Vec<String> = order
        .iter()
        .filter(|c| folded.contains(&c.as_str()) || *c == MISC)
        .map(|c| crate::report::escape_md_cell(c))
        .collect();
    if !rest.is_empty() {
        legend.push(format!("{MISC_SQUARE} {}", rest.join(", ")));
    }
    let _ = writeln!(out, "{}", legend.join(" · "));
    out
}

const STYLE: &str = r"
body { font: 14px/1.45 system-ui, sans-serif; color: #1f2328; margin: 24px; max-width: 1200px; }
h1 { font-size: 20px; } h2 { font-size: 16px; margin-top: 28px; }
table { border-collapse: collapse; margin: 8px 0; }
th, td { border: 1px solid #d1d9e0; padding: 3px 8px; text-align: right; vertical-align: top; }
th:first-child, td:first-child, td.name { text-align: left; }
td.name { max-width: 720px; overflow-wrap: anywhere; font-family: ui-monospace, monospace; font-size: 12px; }
.swatch { display: inline-block; width: 10px; height: 10px; margin-right: 6px; }
.muted { color: #59636e; }
";

/// The `breakdown --html` page.
pub fn page(b: &Breakdown) -> String {
    let order = category_order(&b.runs);
    let bars: Vec<Bar> = b
        .runs
        .iter()
        .map(|r| Bar {
            label: r.file.clone(),
            segments: r
                .categories
                .iter()
                .map(|c| (c.name.clone(), c.time_ns as f64))
                .collect(),
        })
        .collect();
    let mut s = String::new();
    s.push_str("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">");
    s.push_str("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">");
    s.push_str("<title>cgp-gate breakdown</title><style>");
    s.push_str(STYLE);
    s.push_str("</style></head><body><h1>GPU time by kernel category</h1>");
    s.push_str("<p class=\"muted\">Sum of kernel, memcpy and memset durations per category (Nsight Systems). One bar per input, one colour per category across bars.</p>");
    s.push_str(&stacked_svg(&bars, &order, "GPU time by category"));
    // The data table: categories x runs.
    s.push_str("<h2>Categories</h2><table><thead><tr><th>category</th>");
    for r in &b.runs {
        let _ = write!(s, "<th>{}</th>", escape(&r.file));
    }
    s.push_str("</tr></thead><tbody>");
    for cat in &order {
        let _ = write!(
            s,
            "<tr><td><span class=\"swatch\" style=\"background:{}\"></span>{}</td>",
            colour(&order, cat),
            escape(cat)
        );
        for r in &b.runs {
            match r.category(cat) {
                Some(c) => {
                    let total = r.total_ns();
                    let share = if total == 0 {
                        0.0
                    } else {
                        c.time_ns as f64 * 100.0 / total as f64
                    };
                    let _ = write!(
                        s,
                        "<td>{} <span class=\"muted\">({share:.1}%, {}×)</span></td>",
                        human(c.time_ns as f64, "ns"),
                        c.instances
                    );
                }
                None => s.push_str("<td class=\"muted\">-</td>"),
            }
        }
        s.push_str("</tr>");
    }
    let row = |s: &mut String, label: &str, f: &dyn Fn(&RunBreakdown) -> Option<u64>| {
        let _ = write!(s, "<tr><th>{}</th>", escape(label));
        for r in &b.runs {
            let _ = write!(
                s,
                "<td>{}</td>",
                f(r).map_or_else(|| "n/a".to_owned(), |v| human(v as f64, "ns"))
            );
        }
        s.push_str("</tr>");
    };
    row(&mut s, "kernel + memop time", &|r| Some(r.total_ns()));
    row(&mut s, "GPU busy time", &|r| r.gpu_time_ns);
    if b.runs.iter().any(|r| r.wall_ns.is_some()) {
        row(&mut s, "wall time", &|r| r.wall_ns);
        row(&mut s, "non-GPU time", &|r| r.non_gpu_time_ns);
    }
    s.push_str("</tbody></table>");
    for r in &b.runs {
        let _ = write!(
            s,
            "<details><summary>Kernels of {} ({})</summary><table><thead><tr><th>kernel</th><th>category</th><th>time</th><th>instances</th></tr></thead><tbody>",
            escape(&r.file),
            r.kernels.len()
        );
        for k in &r.kernels {
            let _ = write!(
                s,
                "<tr><td class=\"name\">{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(&k.name),
                escape(&k.category),
                human(k.time_ns as f64, "ns"),
                k.instances
            );
        }
        s.push_str("</tbody></table></details>");
    }
    s.push_str("</body></html>\n");
    s
}

/// Baseline-against-candidate bars of every nsys target x size in a check's results (medians):
/// (`target size`, bars, category order), from [`RunView::category_bars`] (which
/// the results reader fills from the gated `category:<name>` rows of older files).
pub fn results_bars(run: RunView<'_>) -> Vec<(String, Vec<Bar>, Vec<String>)> {
    every_category_bars(run.category_bars)
}

/// Largest (both sides together) first, `misc` last.
fn bar_order(mut sized: Vec<(String, f64)>) -> Vec<String> {
    sized.sort_by(|a, b| {
        (a.0 == MISC)
            .cmp(&(b.0 == MISC))
            .then(b.1.total_cmp(&a.1))
            .then_with(|| a.0.cmp(&b.0))
    });
    sized.into_iter().map(|(c, _)| c).collect()
}

fn every_category_bars(all: &[crate::nsys::bars::CategoryBars]) -> Vec<(String, Vec<Bar>, Vec<String>)> {
    let mut groups: Vec<(String, Vec<Bar>, Vec<String>)> = all
        .iter()
        .map(|g| {
            let id = format!("{} {}", g.target, g.size);
            let order = bar_order(
                g.categories
                    .iter()
                    .map(|c| {
                        (
                            c.name.clone(),
                            c.baseline_ns.unwrap_or(0.0) + c.candidate_ns.unwrap_or(0.0),
                        )
                    })
                    .collect(),
            );
            let side = |label: &str, pick: &dyn Fn(&crate::nsys::bars::CategoryMedians) -> Option<f64>| Bar {
                label: format!("{id} {label}"),
                segments: g
                    .categories
                    .iter()
                    .filter_map(|c| Some((c.name.clone(), pick(c)?)))
                    .collect(),
            };
            let mut bars = Vec::new();
            if g.categories.iter().any(|c| c.baseline_ns.is_some()) {
                bars.push(side("baseline", &|c| c.baseline_ns));
            }
            if g.categories.iter().any(|c| c.candidate_ns.is_some()) {
                bars.push(side("candidate", &|c| c.candidate_ns));
            }
            (id, bars, order)
        })
        .filter(|(_, bars, _)| !bars.is_empty())
        .collect();
    groups.sort_by(|a, b| a.0.cmp(&b.0));
    groups
}

/// What the bars show, for their caption.
fn bars_caption(run: RunView<'_>) -> &'static str {
    if run.category_bars_gated_only {
        "medians of the gated categories"
    } else {
        "medians of every category, gated or not"
    }
}

/// The Markdown section of the bars (empty without nsys category rows).
pub fn results_markdown(run: RunView<'_>) -> String {
    let groups = results_bars(run);
    if groups.is_empty() {
        return String::new();
    }
    let mut md = format!(
        "**GPU time by category** (nsys targets, {}; one square is 2.5% of its bar)\n\n",
        bars_caption(run)
    );
    for (_, bars, order) in &groups {
        md.push_str(&stacked_markdown(bars, order));
        md.push('\n');
    }
    md
}

/// The HTML section of the bars (empty without nsys category rows).
pub fn results_html(run: RunView<'_>) -> String {
    let groups = results_bars(run);
    if groups.is_empty() {
        return String::new();
    }
    let mut h = format!(
        "<h2>GPU time by category</h2>\n<p class=\"muted\">nsys targets: {}, baseline against candidate.</p>\n",
        bars_caption(run)
    );
    for (id, bars, order) in &groups {
        h.push_str("<div class=\"bars\">");
        h.push_str(&stacked_svg(bars, order, &format!("GPU time by category: {id}")));
        h.push_str("</div>\n");
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Results read from a file written before `category_bars` existed draw only the gated
    /// categories, and say so (`outcome::results` tests rebuild those bars from the rows).
    #[test]
    fn gated_only_bars_say_so() {
        use crate::nsys::bars::{CategoryBars, CategoryMedians};
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/results/mixed.json"
        ))
        .unwrap();
        let mut r = crate::outcome::results::parse(&text).unwrap();
        r.category_bars = vec![CategoryBars {
            target: "t".into(),
            size: "n=1".into(),
            categories: vec![CategoryMedians {
                name: "gemm".into(),
                baseline_ns: Some(900.0),
                candidate_ns: Some(950.0),
            }],
        }];
        r.category_bars_gated_only = true;
        let md = results_markdown((&r).into());
        assert!(md.contains("medians of the gated categories"), "{md}");
    }

    #[test]
    fn more_categories_than_squares_share_miscs_square_and_the_legend_names_them() {
        let mut order: Vec<String> = (0..10).map(|i| format!("c{i}")).collect();
        order.push(MISC.to_owned());
        let bars = vec![Bar {
            label: "b".into(),
            segments: order.iter().map(|c| (c.clone(), 10.0)).collect(),
        }];
        let md = stacked_markdown(&bars, &order);
        let legend = md.lines().last().unwrap();
        // c0..c6 keep their own squares; c7, c8, c9 and misc share ⬜.
        assert!(legend.ends_with("⬜ c7, c8, c9, misc"), "{legend}");
        for sq in SQUARES.iter().take(SQUARES.len() - 1) {
            assert_eq!(legend.matches(sq).count(), 1, "{legend}");
        }
        assert!(!legend.contains(SQUARES[SQUARES.len() - 1]), "{legend}");
        // Up to as many categories as squares, nothing is folded.
        let few: Vec<String> = order[..8].to_vec();
        assert!(!stacked_markdown(&bars, &few).contains(MISC_SQUARE));
    }

    #[test]
    fn bars_escape_category_names_and_keep_colours() {
        let order = vec!["<b>|x".to_owned(), "gemm".to_owned(), MISC.to_owned()];
        let bars = vec![
            Bar {
                label: "a".into(),
                segments: vec![("gemm".into(), 30.0), ("<b>|x".into(), 10.0)],
            },
            Bar {
                label: "b".into(),
                segments: vec![("gemm".into(), 10.0), (MISC.into(), 10.0)],
            },
        ];
        let md = stacked_markdown(&bars, &order);
        assert!(!md.contains("<b>") && md.contains("&lt;b>"), "{md}");
        // Exactly 40 squares per bar (largest remainder).
        for line in md.lines().take(2) {
            assert_eq!(
                line.chars().filter(|c| ['🟦', '🟧', '⬜'].contains(c)).count(),
                40,
                "{line}"
            );
        }
        let svg = stacked_svg(&bars, &order, "t");
        assert!(!svg.contains("<b>"));
        assert_eq!(
            svg.matches(&format!("fill=\"{}\"", colour(&order, "gemm")))
                .count(),
            3,
            "two segments and a legend swatch"
        );
    }
}
