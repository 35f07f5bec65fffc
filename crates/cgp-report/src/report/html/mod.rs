//! A self-contained HTML report: one file, no scripts, no fonts, no network.
//!
//! A Content-Security-Policy of `default-src 'none'` (inline styles and `data:` images allowed)
//! makes the browser refuse anything external, so a stray link would show up as a console error in
//! the headless-Chromium test rather than silently phoning home. The charts are inline SVG written
//! by hand: a strip plot of baseline and candidate samples against the threshold for every judged
//! row, and a log-log roofline where the results carry roofline points.

use std::fmt::Write as _;

use crate::foundation::units::format_number;
use crate::outcome::results::RowVerdict;
use crate::outcome::view::{RowView, RunView};
use crate::report::format::{
    MEDIANS_LABEL, change_cell, common_ci_label, gpu_label, headline, medians, p_value, sorted_rows,
};

/// HTML's one escaping function (it lives in [`super::text`], below this module and the
/// breakdown charts that this page includes).
pub use super::text::escape_html as escape;

mod charts;
use charts::{plots, roofline};

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
pub fn html<'a>(run: impl Into<RunView<'a>>) -> String {
    let run = run.into();
    let mut h = String::with_capacity(64 * 1024);
    let title = format!("cgp-gate: {}", headline(run));
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        escape(&title)
    );
    header(run, &mut h);
    highlighted_table(run, &mut h);
    errors(run, &mut h);
    left_out(run, &mut h);
    plots(run, &mut h);
    h.push_str(&super::breakdown::results_html(run));
    roofline(run, &mut h);
    all_rows(run, &mut h);
    run_info(run, &mut h);
    h.push_str("</body>\n</html>\n");
    h
}

fn header(run: RunView<'_>, h: &mut String) {
    let fp = run.fingerprint;
    let _ = write!(
        h,
        "<header class=\"{}\"><h1>cgp-gate: {}</h1>\n<div class=\"meta\">spec {} · {} · driver {} · {} {} · clocks {} · {} · {}{}</div></header>\n",
        run.verdict.as_str(),
        escape(&headline(run)),
        escape(run.spec_path),
        escape(&gpu_label(run)),
        escape(fp.driver_version.as_str()),
        escape(fp.profiler.as_str()),
        escape(fp.profiler_version.as_str()),
        escape(fp.clocks.as_str()),
        escape(run.multiple_testing),
        escape(run.date),
        run.git_commit.map_or_else(String::new, |c| format!(
            " · commit {}",
            escape(c.get(..12).unwrap_or(c))
        )),
    );
    for c in run.caveats {
        let _ = writeln!(
            h,
            "<div class=\"banner synthetic\"><b>Trust.</b> {}.</div>",
            escape(c)
        );
    }
    if run.synthetic {
        let _ = writeln!(
            h,
            "<div class=\"banner synthetic\"><b>Synthetic data.</b> These numbers were not measured on a GPU (source: {}).</div>",
            escape(run.source.as_str())
        );
    }
    if let Some(label) = crate::report::format::real_capture(run) {
        let _ = writeln!(
            h,
            "<div class=\"banner real\"><b>{}</b>: these numbers were measured on this GPU and replayed from a recording (source: {}).</div>",
            escape(&label),
            escape(run.source.as_str())
        );
    }
    if let Some(line) = crate::report::format::sass_skip_line(run) {
        let _ = writeln!(h, "<div class=\"banner skipped\">{}</div>", escape(&line));
    }
    if let Some(line) = super::confirm::run_line(run) {
        // `check --base` (docs/confirm.md): the commit, and each row it touched.
        let _ = write!(h, "<div class=\"banner confirm\"><b>{}</b><ul>", escape(&line));
        for l in super::confirm::row_lines(run) {
            let _ = write!(h, "<li>{}</li>", escape(&l));
        }
        let _ = writeln!(
            h,
            "</ul><span class=\"meta\">{}</span></div>",
            escape(&run.confirmation.method)
        );
    }
    if let m @ [_, ..] = run.fingerprint_mismatch {
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
    let configs = super::format::config_changes(run);
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

fn row_cells(r: &RowView<'_>, with_target: bool, common_ci: Option<&str>) -> String {
    // A row that fails the gate without being a regression (a missing kernel, an inconclusive
    // row under `--fail-on inconclusive`) wears the failure colour: its gate status says so.
    let fails = if r.gate.fails_beyond_its_verdict() {
        " fails"
    } else {
        ""
    };
    let mut s = format!(
        "<tr class=\"{v}\"><td><span class=\"pill {v}{fails}\">{w}</span></td>",
        v = r.verdict.as_str(),
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
        escape(r.key.kernel_label()),
        escape(&super::format::reason_with_config(r)),
        escape(&change_cell(r, common_ci)),
        escape(&r.rule_text()),
        escape(&p_value(r.p())),
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

fn highlighted_table(run: RunView<'_>, h: &mut String) {
    let rows: Vec<RowView<'_>> = sorted_rows(run)
        .into_iter()
        .filter(|r| {
            r.verdict == RowVerdict::Improvement || r.gate.gate() != crate::outcome::decide::Gate::Pass
        })
        .collect();
    h.push_str("<h2>Regressions, improvements and inconclusive rows</h2>\n");
    if rows.is_empty() {
        let _ = writeln!(h, "<p>{}</p>", escape(&super::format::nothing_to_look_at(run)));
        return;
    }
    let common = common_ci_label(rows.iter().copied());
    h.push_str(&table_head(true, common.as_deref().unwrap_or("CI")));
    for r in &rows {
        h.push_str(&row_cells(r, true, common.as_deref()));
    }
    h.push_str("</table>\n");
    let _ = writeln!(h, "<p class=\"note\">{}</p>", escape(super::format::P_NOTE));
    for r in &rows {
        why_table(r, h);
    }
}

/// The "why" of a row (docs/why.md): the reading and a small counter-diff table.
fn why_table(r: &RowView<'_>, h: &mut String) {
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

fn errors(run: RunView<'_>, h: &mut String) {
    if run.errors.is_empty() {
        return;
    }
    h.push_str("<h2>Errors</h2>\n<ul class=\"errors\">\n");
    for e in run.errors {
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
fn left_out(run: RunView<'_>, h: &mut String) {
    let lines = super::format::left_out_lines(run);
    if lines.is_empty() {
        return;
    }
    h.push_str("<h2>Left out of the tests</h2>\n<p class=\"meta\">Outliers the baseline has as many of are the machine's and left out; more than the baseline's share are the code's and kept (docs/statistics.md 2.5).</p>\n<ul class=\"left-out\">\n");
    for l in lines {
        let _ = writeln!(h, "<li>{}</li>", escape(&l));
    }
    h.push_str("</ul>\n");
}

fn all_rows(run: RunView<'_>, h: &mut String) {
    h.push_str("<h2>All rows</h2>\n");
    let mut targets: Vec<&str> = Vec::new();
    for r in run.rows() {
        if !targets.contains(&r.key.target.as_str()) {
            targets.push(&r.key.target);
        }
    }
    for t in targets {
        let rows: Vec<RowView<'_>> = sorted_rows(run)
            .into_iter()
            .filter(|r| r.key.target == t)
            .collect();
        let common = common_ci_label(rows.iter().copied());
        let _ = writeln!(h, "<h3>{}</h3>", escape(t));
        h.push_str(&table_head(false, common.as_deref().unwrap_or("CI")));
        for r in &rows {
            h.push_str(&row_cells(r, false, common.as_deref()));
        }
        h.push_str("</table>\n");
    }
}

fn run_info(run: RunView<'_>, h: &mut String) {
    h.push_str("<h2>Run</h2>\n<table>\n");
    let mut kv = |k: &str, v: &str| {
        let _ = writeln!(h, "<tr><th>{}</th><td>{}</td></tr>", escape(k), escape(v));
    };
    kv("verdict", run.verdict.as_str());
    kv("tool version", run.tool_version);
    kv("spec", &format!("{} (sha256 {})", run.spec_path, run.spec_hash));
    kv("source", run.source.as_str());
    kv("synthetic", if run.synthetic { "yes" } else { "no" });
    kv("date", run.date);
    kv("fail on", run.fail_on.as_str());
    kv("multiple testing", run.multiple_testing);
    if let Some(s) = run.shard {
        kv("shard", s);
    }
    if let Some(c) = run.git_commit {
        kv("git commit", c);
    }
    for (k, v) in run.fingerprint.fields() {
        kv(k, v);
    }
    let hl = run.health;
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
    let doubtful = run.rows().filter(|r| r.remeasured > 0).count();
    kv("rows re-measured (doubtful)", &doubtful.to_string());
    for n in &hl.notes {
        kv("note", n);
    }
    for (t, secs) in run.cost_seconds {
        kv(&format!("time: {t}"), &format!("{} s", format_number(*secs)));
    }
    h.push_str("</table>\n");
}
