//! GitHub-flavoured Markdown: the pull-request comment and the job step summary.
//!
//! Every piece of text that comes from a spec or a run (targets, sizes, kernel names, metrics,
//! messages) goes through [`escape_md_cell`], so a C++ template name cannot open HTML, break a table
//! or mention a user. The body ends with a hidden per-spec marker ([`comment_marker`]) by which a
//! re-run finds and updates its own comment.

use crate::outcome::results::RowVerdict;
use crate::outcome::view::{RowView, RunView};
use crate::report::format::{
    MEDIANS_LABEL, case_name, change_cell, common_ci_label, gate_badge, gpu_label, headline, medians,
    p_value, plural, shorten, sorted_rows, trend, verdict_badge,
};

mod escape;
pub use escape::escape_md_cell;
use escape::{autolink_url, url_for_link};
pub(crate) use escape::{code_span, md_text};

/// GitHub rejects issue and pull-request comment bodies longer than this many characters.
pub const GITHUB_COMMENT_LIMIT: usize = 65_536;

/// Kernel names longer than this are cut in tables (C++ template names run to thousands of
/// characters); the JUnit and HTML reports keep them whole.
const KERNEL_CELL_CHARS: usize = 120;

/// How to render the Markdown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MarkdownOptions {
    /// Longest body allowed, in characters. Above it the body is shortened (per-target details
    /// first, then the highlighted rows) and says so.
    pub max_chars: usize,
    /// Include Mermaid charts (GitHub renders ```` ```mermaid ```` blocks).
    pub mermaid: bool,
    /// Where the full report lives (an artefact or run URL), linked when the body is shortened.
    pub full_report_url: Option<String>,
    /// The history site's address (`cgp-gate history`, docs/history.md): each row's metric links
    /// to its chart there.
    pub history_url: Option<String>,
}

impl Default for MarkdownOptions {
    fn default() -> Self {
        Self {
            max_chars: GITHUB_COMMENT_LIMIT,
            mermaid: true,
            full_report_url: None,
            history_url: None,
        }
    }
}

/// Render the results as Markdown, shortened to `opts.max_chars` characters if needed.
pub fn markdown<'a>(run: impl Into<RunView<'a>>, opts: &MarkdownOptions) -> String {
    let max = opts.max_chars;
    markdown_fitting(run, opts, &|s: &str| s.chars().count() <= max)
}

/// The hidden marker that identifies this spec's comment: `<!-- cgp-gate:spec=<name> -->`.
///
/// It uses the spec's path rather than its hash so that editing the spec in a pull request updates
/// the same comment instead of adding a new one. Only `[A-Za-z0-9._/-]` survive, and `--` (which
/// would end an HTML comment) is broken up.
pub fn comment_marker<'a>(run: impl Into<RunView<'a>>) -> String {
    let run = run.into();
    let name = if !run.spec_path.trim().is_empty() {
        run.spec_path.trim()
    } else if !run.spec_hash.is_empty() {
        run.spec_hash.get(..16).unwrap_or(run.spec_hash)
    } else {
        "default"
    };
    let mut clean: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '/' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    while clean.contains("--") {
        clean = clean.replace("--", "-_");
    }
    format!("<!-- cgp-gate:spec={clean} -->")
}

/// How much of the body to render.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Level {
    Full,
    /// Per-target `<details>` left out.
    NoDetails,
    /// Also only the first `k` highlighted rows.
    Top(usize),
}

/// Render at the largest level that `fits` accepts.
pub fn markdown_fitting<'a>(
    run: impl Into<RunView<'a>>,
    opts: &MarkdownOptions,
    fits: &dyn Fn(&str) -> bool,
) -> String {
    let run = run.into();
    let full = render(run, opts, Level::Full);
    if fits(&full) {
        return full;
    }
    let no_details = render(run, opts, Level::NoDetails);
    if fits(&no_details) {
        return no_details;
    }
    // The largest k whose rendering fits; rendering grows with k, so bisect.
    let n = highlighted(run).len();
    let (mut lo, mut hi) = (0usize, n);
    let mut best = render(run, opts, Level::Top(0));
    if !fits(&best) {
        return last_resort(run, opts, fits);
    }
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        let s = render(run, opts, Level::Top(mid));
        if fits(&s) {
            lo = mid;
            best = s;
        } else {
            hi = mid - 1;
        }
    }
    best
}

/// The headline and the marker only, for limits too small for anything else.
fn last_resort(run: RunView<'_>, opts: &MarkdownOptions, fits: &dyn Fn(&str) -> bool) -> String {
    let link = opts
        .full_report_url
        .as_deref()
        .map_or_else(String::new, |u| format!(" Full report: <{}>", autolink_url(u)));
    let s = format!(
        "### {} cgp-gate: {}\n\nThe report was too long for this place and was left out.{link}\n\n{}\n",
        verdict_badge(run),
        escape_md_cell(&headline(run)),
        comment_marker(run)
    );
    if fits(&s) { s } else { comment_marker(run) }
}

/// Rows shown in the main table: everything that needs a look (every row that fails the gate,
/// whatever its verdict, as [`crate::outcome::decide::row_gate`] decides), and the improvements.
fn highlighted(run: RunView<'_>) -> Vec<RowView<'_>> {
    sorted_rows(run)
        .into_iter()
        .filter(|r| {
            r.verdict == RowVerdict::Improvement || r.gate.gate() != crate::outcome::decide::Gate::Pass
        })
        .collect()
}

fn render(run: RunView<'_>, opts: &MarkdownOptions, level: Level) -> String {
    let mut md = String::new();
    md.push_str(&format!(
        "### {} cgp-gate: {}\n\n",
        verdict_badge(run),
        escape_md_cell(&headline(run))
    ));
    flags(run, &mut md);
    confirmation(run, &mut md);

    let rows = highlighted(run);
    let shown = match level {
        Level::Top(k) => k.min(rows.len()),
        _ => rows.len(),
    };
    if level != Level::Full {
        shortened_note(run, opts, rows.len() - shown, &mut md);
    }
    if rows.is_empty() {
        md.push_str(&format!(
            "{}\n\n",
            escape_md_cell(&super::format::nothing_to_look_at(run))
        ));
    } else {
        table(run, &rows, shown, opts, &mut md);
        if shown < rows.len() {
            md.push_str(&format!(
                "\n… and {} more rows not shown here.\n",
                rows.len() - shown
            ));
        }
        md.push('\n');
        for r in rows.iter().take(shown) {
            why(r, &mut md);
        }
        if !matches!(level, Level::Top(_)) {
            trends(&rows, &mut md);
        }
    }
    if !matches!(level, Level::Top(_)) {
        md.push_str(&super::breakdown::results_markdown(run));
    }
    new_and_missing(run, level, &mut md);
    if let Some(line) = crate::report::format::sass_skip_line(run) {
        md.push_str(&format!("⏭️ {}.\n\n", escape_md_cell(&line)));
    }
    if let Some(line) = crate::report::format::why_cost_line(run) {
        md.push_str(&format!("{}.\n\n", escape_md_cell(&line)));
    }
    let configs = super::format::config_changes(run);
    if !configs.is_empty() {
        let mut note = super::format::CONFIG_CHANGE_NOTE.to_owned();
        if let Some(first) = note.get_mut(..1) {
            first.make_ascii_uppercase();
        }
        md.push_str(&format!(
            "**{}**: {}.\n\n",
            escape_md_cell(&note),
            configs
                .iter()
                .map(|c| config_line(c))
                .collect::<Vec<_>>()
                .join("; ")
        ));
    }
    if opts.mermaid && level == Level::Full {
        super::mermaid::charts(run, &mut md);
    }
    errors(run, &mut md);
    left_out(run, &mut md);
    if level == Level::Full {
        details(run, &mut md);
    }
    footer(run, &mut md);
    md.push_str(&comment_marker(run));
    md.push('\n');
    md
}

/// The table of the highlighted rows: badge, (GPU,) target, size, kernel, metric, both medians,
/// the change with its interval and p; the first `shown` of `rows`.
fn table(run: RunView<'_>, rows: &[RowView<'_>], shown: usize, opts: &MarkdownOptions, md: &mut String) {
    let common = common_ci_label(rows.iter().take(shown).copied());
    let ci = common.clone().unwrap_or_else(|| "CI".to_owned());
    // Merged results of several GPU types name the GPU of each row.
    let multi_gpu = run.gpus().len() > 1;
    let (gpu_head, gpu_rule) = if multi_gpu { (" GPU |", "---|") } else { ("", "") };
    md.push_str(&format!(
        "| |{gpu_head} target | size | kernel | metric | change ({ci}) | p (adj.) | {MEDIANS_LABEL} |\n|---|{gpu_rule}---|---|---|---|---|---|---|\n"
    ));
    for r in rows.iter().take(shown) {
        let gpu_cell = if multi_gpu {
            format!(" {} |", escape_md_cell(&r.key.gpu))
        } else {
            String::new()
        };
        // An inconclusive row says beside its verdict what this run could detect (issue 57).
        let badge = crate::report::format::reach(r).map_or_else(
            || gate_badge(r),
            |reach| format!("{}: {}", gate_badge(r), escape_md_cell(&reach)),
        );
        md.push_str(&format!(
            "| {badge} |{gpu_cell} {} | {} | {} | {} | {} | {} | {} |\n",
            code_span(&r.key.target, true),
            escape_md_cell(&r.key.size),
            code_span(&shorten(r.key.kernel_label(), KERNEL_CELL_CHARS), true),
            metric_cell(run, r, opts.history_url.as_deref()),
            escape_md_cell(&change_cell(r, common.as_deref())),
            escape_md_cell(&p_value(r.p())),
            escape_md_cell(&medians(r)),
        ));
    }
    md.push_str(&format!(
        "\n<sub>{}</sub>\n",
        escape_md_cell(crate::report::format::P_NOTE)
    ));
}

/// The metric's cell: its name, a link to the row's chart on the history site when there is one.
fn metric_cell(run: RunView<'_>, row: &RowView<'_>, history_url: Option<&str>) -> String {
    let name = code_span(&row.key.metric, true);
    match history_url {
        Some(url) => format!(
            "[{name}]({}#{})",
            url_for_link(url),
            crate::history::anchor_of_row(run.fingerprint, row.key)
        ),
        None => name,
    }
}

/// The counts of new and missing rows, the kernels that disappeared or appeared, the baseline
/// files of removed targets, and whether the missing rows fail the gate.
fn new_and_missing(run: RunView<'_>, level: Level, md: &mut String) {
    let count = |v| super::format::count(run, v);
    let (new, missing) = (count(RowVerdict::New), count(RowVerdict::Missing));
    if new + missing == 0 {
        return;
    }
    let see = if level == Level::Full {
        "; see the details below"
    } else {
        ""
    };
    md.push_str(&format!(
        "{new} new (no baseline yet) and {missing} missing (in the baseline, not measured) rows{see}.\n\n"
    ));
    let (gone, appeared) = run.kernel_changes();
    let list = |v: &[(String, String)]| {
        v.iter()
            .map(|(t, k)| format!("{}: {}", code_span(t, false), code_span(k, false)))
            .collect::<Vec<_>>()
            .join("; ")
    };
    if !gone.is_empty() {
        md.push_str(&format!(
            "**Kernels that disappeared** (in the baseline, not measured now): {}.\n\n",
            list(&gone)
        ));
    }
    if !appeared.is_empty() {
        md.push_str(&format!(
            "**Kernels that appeared** (measured now, no baseline): {}.\n\n",
            list(&appeared)
        ));
    }
    for line in crate::report::kernels::gone_files(run) {
        md.push_str(&format!("{}.\n\n", escape_md_cell(&line)));
    }
    let failing = run.rows().filter(|r| r.gate.is_failing_missing()).count();
    if failing > 0 {
        md.push_str(&format!(
            "{failing} baseline row(s) this run should have measured were not measured: this fails the gate. If the change is intended, refresh the baseline (`cgp-gate baseline update`), or allow it with `--allow-missing` or `allow_missing: true` on the target.\n\n"
        ));
    }
}

/// A configuration-change line (`gemm[n=512] `void gemm`: grid ... -> grid ...`) with its kernel
/// name, which the shared text puts between backticks, as a code span.
fn config_line(line: &str) -> String {
    match line.split_once(" `").and_then(|(at, rest)| {
        let (kernel, tail) = rest.rsplit_once("`: ")?;
        Some((at, kernel, tail))
    }) {
        Some((at, kernel, tail)) => format!(
            "{} {}: {}",
            code_span(at, false),
            code_span(kernel, false),
            escape_md_cell(tail)
        ),
        None => escape_md_cell(line),
    }
}

/// The "why" of a row (docs/why.md): its one-line reading, and the counters that changed in a
/// folded table.
fn why(r: &RowView<'_>, md: &mut String) {
    let Some(w) = super::why::WhyView::of(r) else {
        return;
    };
    md.push_str(&format!(
        "**Why** {} {}: {}\n",
        code_span(&w.subject(), false),
        code_span(super::format::short_metric(w.metric), false),
        escape_md_cell(w.reading)
    ));
    if !w.counters.is_empty() {
        md.push_str(&format!(
            "<details><summary>{} counter(s) changed</summary>\n\n| counter | base | head | change |\n|---|---|---|---|\n",
            w.counters.len()
        ));
        for c in &w.counters {
            md.push_str(&format!(
                "| {} | {} | {} | {} |\n",
                code_span(c.counter, true),
                escape_md_cell(&c.base),
                escape_md_cell(&c.head),
                escape_md_cell(&c.change),
            ));
        }
        md.push_str("\n</details>\n");
    }
    md.push('\n');
}

/// `check --base`: against which commit the rows were confirmed, and each one (docs/confirm.md).
fn confirmation(run: RunView<'_>, md: &mut String) {
    let Some(head) = super::confirm::run_line(run) else {
        return;
    };
    md.push_str(&format!("🔁 **{}**\n\n", escape_md_cell(&head)));
    for l in super::confirm::row_lines(run) {
        md.push_str(&format!("- {}\n", md_text(&l, false)));
    }
    md.push('\n');
}

fn flags(run: RunView<'_>, md: &mut String) {
    for c in run.caveats {
        md.push_str(&format!("> [!CAUTION]\n> **Trust**: {}.\n\n", escape_md_cell(c)));
    }
    if run.synthetic {
        md.push_str(&format!(
            "> [!WARNING]\n> **Synthetic data**: these numbers were not measured on a GPU (source: {}).\n\n",
            escape_md_cell(run.source.as_str())
        ));
    }
    if let Some(label) = crate::report::format::real_capture(run) {
        md.push_str(&format!(
            "> [!NOTE]\n> **{}**: these numbers were measured on this GPU and replayed from a recording (source: {}).\n\n",
            escape_md_cell(&label),
            escape_md_cell(run.source.as_str())
        ));
    }
    if let m @ [_, ..] = run.fingerprint_mismatch {
        md.push_str("> [!CAUTION]\n> **Fingerprint mismatch**: the baseline was measured on a different setup (allowed by the spec); treat changes with care.\n>\n> | field | baseline | this run |\n> |---|---|---|\n");
        for d in m {
            md.push_str(&format!(
                "> | {} | {} | {} |\n",
                escape_md_cell(&d.field),
                escape_md_cell(&d.baseline),
                escape_md_cell(&d.current)
            ));
        }
        md.push('\n');
    }
}

/// What the tests left out as the machine's, or kept as the code's, row by row (issue 43).
fn left_out(run: RunView<'_>, md: &mut String) {
    let lines = super::format::left_out_lines(run);
    if lines.is_empty() {
        return;
    }
    md.push_str(
        "**Left out of the tests** (outliers the baseline has as many of; docs/statistics.md 2.5):

",
    );
    for l in lines {
        md.push_str(&format!("- {}\n", md_text(&l, false)));
    }
    md.push('\n');
}

fn shortened_note(run: RunView<'_>, opts: &MarkdownOptions, hidden: usize, md: &mut String) {
    let mut what = format!("the per-target details ({} rows) were left out", run.rows().len());
    if hidden > 0 {
        what.push_str(&format!(", and {hidden} highlighted rows are not listed"));
    }
    let link = opts.full_report_url.as_deref().map_or_else(
        || " The HTML and JUnit reports of this run hold everything.".to_owned(),
        |u| format!(" Full report: <{}>", autolink_url(u)),
    );
    md.push_str(&format!(
        "> [!NOTE]\n> This report was shortened to fit the size limit: {what}, and charts were dropped.{link}\n\n"
    ));
}

/// The median of each regressed row over its baseline generations, so that slow drift (many small
/// steps, each under the threshold) is visible next to the step that finally crossed it.
fn trends(rows: &[RowView<'_>], md: &mut String) {
    let lines: Vec<String> = rows
        .iter()
        .filter(|r| r.verdict == RowVerdict::Regression)
        .filter_map(|r| {
            let t = trend(r)?;
            Some(format!(
                "- {} {}: {}\n",
                code_span(
                    &crate::measured::samples::target_size(&r.key.target, &r.key.size),
                    false
                ),
                code_span(super::format::short_metric(&r.key.metric), false),
                escape_md_cell(&t)
            ))
        })
        .collect();
    if lines.is_empty() {
        return;
    }
    md.push_str("**Trend** of the regressed metrics (median: older baselines → baseline → this run)\n\n");
    for l in lines {
        md.push_str(&l);
    }
    md.push('\n');
}

fn errors(run: RunView<'_>, md: &mut String) {
    let row_errors: Vec<RowView<'_>> = run.rows().filter(|r| r.verdict == RowVerdict::Error).collect();
    if run.errors.is_empty() && row_errors.is_empty() {
        return;
    }
    md.push_str("**Errors** (not measured; an error is never a pass)\n\n");
    for e in run.errors {
        let at = match &e.size {
            Some(s) => format!("{}[{s}]", e.target),
            None => e.target.clone(),
        };
        md.push_str(&format!(
            "- {} **{}**: {}\n",
            code_span(&at, false),
            escape_md_cell(e.kind.as_str()),
            md_text(&e.message, false)
        ));
    }
    for r in row_errors {
        md.push_str(&format!(
            "- {}: {}\n",
            code_span(&shorten(&case_name(&r), 200), false),
            md_text(r.reason, false)
        ));
    }
    md.push('\n');
}

fn details(run: RunView<'_>, md: &mut String) {
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
        let mut counts: Vec<String> = Vec::new();
        for v in [
            RowVerdict::Regression,
            RowVerdict::Error,
            RowVerdict::Inconclusive,
            RowVerdict::Improvement,
            RowVerdict::Pass,
            RowVerdict::New,
            RowVerdict::Missing,
        ] {
            let n = rows.iter().filter(|r| r.verdict == v).count();
            if n > 0 {
                counts.push(match v {
                    RowVerdict::Regression => plural(n, "regression", "regressions"),
                    RowVerdict::Error => plural(n, "error", "errors"),
                    RowVerdict::Improvement => plural(n, "improvement", "improvements"),
                    _ => format!("{n} {}", v.as_str()),
                });
            }
        }
        let common = common_ci_label(rows.iter().copied());
        let ci = common.clone().unwrap_or_else(|| "CI".to_owned());
        // A blank line after <summary> lets GitHub render the Markdown table inside.
        md.push_str(&format!(
            "<details><summary><b>{}</b>: {}</summary>\n\n| verdict | size | kernel | metric | change ({ci}) | threshold | p (adj.) | {MEDIANS_LABEL} | n | reason |\n|---|---|---|---|---|---|---|---|---|---|\n",
            escape_md_cell(t),
            escape_md_cell(&counts.join(", "))
        ));
        for r in &rows {
            let n = format!(
                "{}/{}",
                r.sides.baseline.as_ref().map_or(0, |s| s.n),
                r.sides.candidate.as_ref().map_or(0, |s| s.n)
            );
            md.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                gate_badge(r),
                escape_md_cell(&r.key.size),
                code_span(&shorten(r.key.kernel_label(), KERNEL_CELL_CHARS), true),
                code_span(&r.key.metric, true),
                escape_md_cell(&change_cell(r, common.as_deref())),
                escape_md_cell(&r.rule_text()),
                escape_md_cell(&p_value(r.p())),
                escape_md_cell(&medians(r)),
                n,
                md_text(&super::format::reason_with_config(r), true),
            ));
        }
        md.push_str("\n</details>\n\n");
    }
}

fn footer(run: RunView<'_>, md: &mut String) {
    let fp = run.fingerprint;
    let mut parts = vec![
        format!("cgp-gate {}", run.tool_version),
        format!("spec {}", run.spec_path),
        format!("{} (cc {})", gpu_label(run), fp.compute_capability),
        format!("driver {}", fp.driver_version),
        format!("{} {}", fp.profiler, fp.profiler_version),
        format!("clocks {}", fp.clocks),
        crate::report::console::run_health_line(run),
        run.multiple_testing.to_owned(),
        format!("source {}", run.source),
    ];
    if let Some(c) = run.git_commit {
        parts.push(format!("commit {}", c.get(..12).unwrap_or(c)));
    }
    if let Some(s) = run.shard {
        parts.push(format!("shard {s}"));
    }
    let escaped: Vec<String> = parts.iter().map(|p| escape_md_cell(p)).collect();
    md.push_str(&format!("<sub>{}</sub>\n\n", escaped.join(" · ")));
}
