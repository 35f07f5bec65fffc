//! The reporters on results that a real `cgp-gate check` run produced: the binary replays the
//! example recordings (SYNTHETIC data, see examples/recordings/*/manifest.json) against
//! examples/baselines, writes its JSON, and Markdown, HTML, JUnit and the console table are
//! rendered from that JSON. Every expectation is read from the results the run wrote, so the
//! reports are checked against the decisions the run made, never against hand-written JSON.

use crate::support::root;
use cgp_outcome::outcome::results::read as read_results;
use cgp_outcome::outcome::results::{Results, Row, RowVerdict};
use cgp_report::report::console::results_table;
use cgp_report::report::{MarkdownOptions, html, junit, markdown};
use quick_junit::{NonSuccessKind, Report, TestCaseStatus};

/// What one `check` run left behind: its exit code, the results read back from its JSON, and
/// the reports it wrote itself.
struct Run {
    code: i32,
    results: Results,
    markdown: String,
    html: String,
    junit: String,
}

fn check(recording: &str) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n);
    let out = crate::support::bin()
        .current_dir(root())
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_STEP_SUMMARY")
        .env_remove("GITHUB_OUTPUT")
        .args(["check", "--spec", "examples/cgp-gate.yaml", "--baselines"])
        .arg(root().join("examples/baselines"))
        .arg("--replay")
        .arg(root().join(recording))
        .arg("--json")
        .arg(p("results.json"))
        .arg("--markdown")
        .arg(p("comment.md"))
        .arg("--html")
        .arg(p("report.html"))
        .arg("--junit")
        .arg(p("junit.xml"))
        .output()
        .unwrap();
    let read = |n: &str| {
        std::fs::read_to_string(p(n)).unwrap_or_else(|e| {
            panic!(
                "check did not write {n} ({e}): {}",
                String::from_utf8_lossy(&out.stderr)
            )
        })
    };
    Run {
        code: out.status.code().unwrap(),
        results: read_results(&p("results.json")).unwrap(),
        markdown: read("comment.md"),
        html: read("report.html"),
        junit: read("junit.xml"),
    }
}

fn slowdown() -> Run {
    check("examples/recordings/pr-slowdown")
}

fn same() -> Run {
    check("examples/recordings/pr-same")
}

fn with(results: &Results, v: RowVerdict) -> Vec<&Row> {
    results.rows.iter().filter(|r| r.verdict() == v).collect()
}

/// The cells of every GFM table row in `md`, as text a reader sees.

#[test]
fn the_slowdown_run_found_what_was_planted() {
    // The premise of the tests below: the run regressed, and on the planted row.
    let run = slowdown();
    assert_eq!(run.code, 1);
    let regs = with(&run.results, RowVerdict::Regression);
    assert!(
        regs.iter().any(|r| r.key.target == "matmul"
            && r.key.size == "n=1024"
            && r.key.metric == "gpu__time_duration.sum"),
        "{regs:?}"
    );
    assert!(run.results.synthetic, "the recordings are synthetic");
}

#[test]
fn markdown_of_a_real_run_highlights_exactly_its_regressions_and_lists_every_row() {
    let run = slowdown();
    let r = &run.results;
    // The report `check` wrote is the one rendered from its JSON: the JSON carries everything.
    let md = markdown(r, &MarkdownOptions::default());
    assert_eq!(md, run.markdown);

    let regs = with(r, RowVerdict::Regression);
    let headline = md.lines().next().unwrap();
    assert!(
        headline.starts_with("### ❌")
            && headline.contains(&format!(
                "{} regression{}",
                regs.len(),
                if regs.len() == 1 { "" } else { "s" }
            )),
        "{headline}"
    );
    assert!(md.contains("**Synthetic data**"));

    // The highlighted table (before the per-target details): regressions first, then the
    // other rows that are not plain passes, each row as the run judged it.
    let highlighted = crate::support::table_cells(md.split("<details>").next().unwrap());
    let body = &highlighted[1..];
    let notable: Vec<&Row> = r
        .rows
        .iter()
        .filter(|x| {
            matches!(
                x.verdict(),
                RowVerdict::Regression
                    | RowVerdict::Improvement
                    | RowVerdict::Inconclusive
                    | RowVerdict::Error
            )
        })
        .collect();
    assert_eq!(body.len(), notable.len(), "{highlighted:?}");
    for (i, cells) in body.iter().enumerate() {
        let is_reg = cells[0].contains("regression");
        assert_eq!(is_reg, i < regs.len(), "regressions come first: {body:?}");
        let row = notable
            .iter()
            .find(|x| x.key.target == cells[1] && x.key.size == cells[2] && x.key.metric == cells[4])
            .unwrap_or_else(|| panic!("{cells:?} is not a row of the run"));
        assert!(cells[0].contains(row.verdict().as_str()), "{cells:?}");
    }

    // The details tables hold every row once, with the verdict the run gave it.
    let details: Vec<Vec<String>> = md
        .split("<details>")
        .skip(1)
        // A regression's folded "why" (its counter diff, docs/why.md) is not a table of rows.
        .filter(|d| !d.contains("counter(s) changed</summary>"))
        .flat_map(|d| crate::support::table_cells(d).into_iter().skip(1))
        .collect();
    assert_eq!(details.len(), r.rows.len());
    for row in &r.rows {
        let n = details
            .iter()
            .filter(|c| {
                c[0].contains(row.verdict().as_str())
                    && c[1] == row.key.size
                    && c[2] == row.kernel_label()
                    && c[3] == row.key.metric
            })
            .count();
        assert_eq!(n, 1, "{} {} {}", row.key.target, row.key.size, row.key.metric);
    }
    // The threshold column shows the min_effect the verdict used.
    let time_1024 = details
        .iter()
        .find(|c| c[1] == "n=1024" && c[3] == "gpu__time_duration.sum")
        .unwrap();
    assert!(time_1024[5].contains("min effect"), "{time_1024:?}");
}

#[test]
fn markdown_of_a_passing_run_says_pass_and_highlights_nothing() {
    let run = same();
    assert_eq!(run.code, 0);
    let md = markdown(&run.results, &MarkdownOptions::default());
    assert_eq!(md, run.markdown);
    assert!(md.starts_with("### ✅ cgp-gate: pass"), "{md}");
    assert!(md.contains("No regressions, improvements or inconclusive rows."));
    assert!(!md.contains("❌"));
}

#[test]
fn html_of_a_real_run_shows_every_row_with_its_verdict_and_threshold() {
    let run = slowdown();
    let r = &run.results;
    let page = html(r);
    assert_eq!(page, run.html);
    for row in &r.rows {
        let e = cgp_report::report::html::escape;
        let cells = format!(
            "<td>{}</td><td class=\"what\">{}<div class=\"k\">{}</div>",
            e(&row.key.size),
            e(&row.key.metric),
            e(row.kernel_label())
        );
        let rendered = page.matches(&cells).count();
        assert!(
            rendered >= 1,
            "{} {} not in the page",
            row.key.size,
            row.key.metric
        );
        let tr = format!("<tr class=\"{}\">", row.verdict().as_str());
        assert!(page.contains(&tr));
    }
    // Regressions are drawn in the highlighted table and in their target's table.
    assert_eq!(
        page.matches("<tr class=\"regression\">").count(),
        2 * with(r, RowVerdict::Regression).len()
    );
    // The strip plot's threshold line carries min_effect where the spec set one.
    let min_effect_rows = r
        .rows
        .iter()
        .filter(|x| x.rule.threshold.as_ref().is_some_and(|t| t.min_effect.is_some()))
        .count();
    assert!(min_effect_rows > 0);
    assert!(page.contains("threshold 3%, min effect 1us"), "matmul's time");
}

#[test]
fn junit_of_a_real_run_fails_exactly_the_regressed_rows() {
    let run = slowdown();
    let r = &run.results;
    assert_eq!(junit(r), run.junit);
    let report = Report::deserialize_from_str(&run.junit).unwrap();
    let cases: Vec<_> = report
        .test_suites
        .iter()
        .flat_map(|s| s.test_cases.iter())
        .collect();
    assert_eq!(cases.len(), r.rows.len() + r.errors.len());
    let failed: Vec<&str> = cases
        .iter()
        .filter(|c| {
            matches!(
                &c.status,
                TestCaseStatus::NonSuccess {
                    kind: NonSuccessKind::Failure,
                    ..
                }
            )
        })
        .map(|c| c.name.as_str())
        .collect();
    let regs = with(r, RowVerdict::Regression);
    assert_eq!(failed.len(), regs.len(), "{failed:?}");
    for row in regs {
        let name = format!(
            "{}[{}] {} {}",
            row.key.target,
            row.key.size,
            row.kernel_label(),
            row.key.metric
        );
        assert!(failed.contains(&name.as_str()), "{name} in {failed:?}");
    }
    let suites: Vec<&str> = report.test_suites.iter().map(|s| s.name.as_str()).collect();
    // One suite per target, in the order of the run's rows.
    let mut targets: Vec<&str> = Vec::new();
    for row in &r.rows {
        if !targets.contains(&row.key.target.as_str()) {
            targets.push(&row.key.target);
        }
    }
    assert_eq!(suites, targets);
    assert_eq!(targets.len(), 3);
}

#[test]
fn junit_of_a_passing_run_has_no_failure() {
    let run = same();
    let report = Report::deserialize_from_str(&run.junit).unwrap();
    assert_eq!(report.failures, 0);
    assert_eq!(report.errors, 0);
    assert_eq!(report.tests, run.results.rows.len());
}

#[test]
fn console_table_of_a_real_run_has_one_line_per_row() {
    let run = slowdown();
    let r = &run.results;
    let table = results_table(r);
    let lines: Vec<&str> = table.lines().collect();
    assert!(lines[0].starts_with("verdict"), "{table}");
    // The fitted table may show a metric by a short name; its legend line maps each back.
    let legend: Vec<(String, String)> = lines
        .iter()
        .find_map(|l| l.strip_prefix("metrics: "))
        .map(|l| {
            l.split(", ")
                .filter_map(|p| p.split_once(" = "))
                .map(|(short, full)| (short.to_owned(), full.to_owned()))
                .collect()
        })
        .unwrap_or_default();
    for row in &r.rows {
        let shown = legend
            .iter()
            .find(|(_, full)| *full == row.key.metric)
            .map_or(row.key.metric.as_str(), |(short, _)| short.as_str());
        let n = lines
            .iter()
            .filter(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                // The metric cell is the name, with its unit when it has one.
                (l.contains(&format!("  {shown}  ")) || l.contains(&format!("  {shown} (")))
                    && f.first() == Some(&row.verdict().as_str())
                    && f.contains(&row.key.target.as_str())
                    && f.contains(&row.key.size.as_str())
            })
            .count();
        assert_eq!(
            n, 1,
            "{} {} {}\n{table}",
            row.key.target, row.key.size, row.key.metric
        );
    }
    assert_eq!(
        lines.iter().filter(|l| l.starts_with("regression")).count(),
        with(r, RowVerdict::Regression).len()
    );
}

#[test]
fn the_reports_check_wrote_are_valid_for_a_passing_run_too() {
    let run = same();
    assert_eq!(html(&run.results), run.html);
    assert_eq!(junit(&run.results), run.junit);
    assert!(!run.html.contains("<tr class=\"regression\">"));
}

/// A real check's comment reads as written: on the REAL H100 planted recordings
/// (tests/fixtures/h100-planted), HTML character references make up under 1% of the characters,
/// the names and metrics are code spans, and the tables still parse.
#[test]
fn a_real_checks_comment_is_readable_raw() {
    let fx = root().join("tests/fixtures/h100-planted");
    let reference = regex::Regex::new(r"&(#[0-9]+|#x[0-9a-fA-F]+|[a-z]+);").unwrap();
    for build in ["extra3", "badlaunch"] {
        let dir = tempfile::tempdir().unwrap();
        let md_path = dir.path().join("comment.md");
        let out = crate::support::bin()
            .env_remove("GITHUB_ACTIONS")
            .env_remove("GITHUB_STEP_SUMMARY")
            .args(["check", "--no-skip", "--replay"])
            .arg(fx.join(build))
            .arg("--spec")
            .arg(fx.join("check.yaml"))
            .arg("--baselines")
            .arg(fx.join("baselines"))
            .arg("--markdown")
            .arg(&md_path)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let md = std::fs::read_to_string(&md_path).unwrap();
        let entities: usize = reference.find_iter(&md).map(|m| m.as_str().len()).sum();
        let share = entities as f64 / md.len() as f64;
        assert!(
            share < 0.01,
            "{build}: {entities} of {} characters are references:\n{md}",
            md.len()
        );
        assert!(
            md.contains("| `matmul` | n=1024 | `void matmul_tiled<32>` | `gpu__time_duration.sum` |"),
            "{md}"
        );
        assert!(md.contains(" cgp-gate: ") && !md.contains("&#58;"), "{md}");
        // Every highlighted row is a table row of 8 cells, names as written.
        let tables = crate::support::table_cells(md.split("<details>").next().unwrap());
        assert!(
            tables.len() > 1 && tables.iter().all(|r| r.len() == 8),
            "{tables:?}"
        );
        assert!(
            tables.iter().any(|r| r[3] == "void matmul_tiled<32>"),
            "{tables:?}"
        );
    }
}
