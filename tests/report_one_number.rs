//! One number per row (issue 35): every report shows a row's change and interval as the verdict
//! used them (`Row::change`, `Row::change_ci`), with the same rounding. Checked on the REAL H100
//! replay of the demo (`examples/recordings/h100/extra3` against `examples/baselines-h100`) and
//! on `ab` over the REAL PyTorch recording (`examples/pytorch/recording`; the head tree holds the
//! same recording's repetitions in another order, so base and head medians differ the way two
//! real runs do). Each format is parsed from the files the CLI wrote: console (200 columns),
//! JSON, Markdown, HTML, JUnit, and the annotations of the same results. Before this, the console
//! printed the change of the two medians (`+4.0%` for matmul where the verdict used `+3.98%`;
//! layernorm `+0.43%` where the verdict used `+0.19%`) and the other reports a third rounding.

use std::path::Path;

use crate::support::root;
use cgp_outcome::outcome::results::{Results, Row};

/// The text every report must show for a row: `+4.24%` and `[+2.63%, +5.87%]`.
fn expected(row: &Row) -> Option<(String, Option<String>)> {
    let c = row.estimate().change()?;
    let ci = row
        .estimate()
        .change_ci()
        .map(|[lo, hi]| format!("[{:+.2}%, {:+.2}%]", lo * 100.0, hi * 100.0));
    Some((format!("{:+.2}%", c * 100.0), ci))
}

/// A confidence level as the reports print it: `95`, `99.9`.
fn level(c: f64) -> String {
    cgp_core::foundation::units::format_number((c * 1000.0).round() / 10.0)
}

/// The change cell a report must show for `row`: [`cell`], with the row's own level after the
/// interval when the report printed one (the rows' levels differ, so no header names it).
fn shown_cell(row: &Row, shown: &str) -> String {
    let want = cell(row).unwrap_or_else(|| "n/a".to_owned());
    match (shown.strip_prefix(want.as_str()), row.estimate().confidence) {
        (Some(rest), Some(c)) if !rest.is_empty() => format!("{want} ({}% CI)", level(c)),
        _ => want,
    }
}

fn cell(row: &Row) -> Option<String> {
    let (e, ci) = expected(row)?;
    Some(ci.map_or_else(|| e.clone(), |ci| format!("{e} {ci}")))
}

/// Numbers with a percent sign in a console line (`+3.98%`, `[+3.68%,`): not `sm %peak`, and not
/// the interval's own level (`(99.9% CI)`, printed when the rows' levels differ).
fn percentages(line: &str) -> usize {
    line.match_indices('%')
        .filter(|(i, _)| line[..*i].ends_with(|c: char| c.is_ascii_digit()))
        .filter(|(i, _)| !line[*i..].starts_with("% CI"))
        .count()
}

fn console_checks(results: &Results, console: &str) {
    for row in &results.rows {
        let Some((e, ci)) = expected(row) else { continue };
        let metric =
            cgp_report::report::console::short_metric_name(&row.key.metric).unwrap_or(&row.key.metric);
        let metric = if row.key.metric == "launch__registers_per_thread" {
            "regs/thread"
        } else {
            metric
        };
        let line = console
            .lines()
            .find(|l| {
                let words: Vec<&str> = l.split_whitespace().collect();
                words.get(1) == Some(&row.key.target.as_str())
                    && words.get(2) == Some(&row.key.size.as_str())
                    && l.contains(&format!("  {metric}"))
            })
            .unwrap_or_else(|| panic!("no console line for {}:\n{console}", row.key()));
        match &ci {
            Some(ci) => {
                assert!(line.contains(&format!("{e}  {ci}")), "{}: {line}", row.key());
                assert_eq!(percentages(line), 3, "one change, one interval: {line}");
            }
            None => {
                assert!(line.contains(&e), "{}: {line}", row.key());
                assert_eq!(percentages(line), 1, "one change: {line}");
            }
        }
    }
}

/// Markdown: the highlighted table (`| badge | `target` | size | kernel | `metric` | change |`)
/// and the per-target details (`| badge | size | kernel | `metric` | change |`).
fn markdown_checks(results: &Results, md: &str) {
    let mut target: Option<String> = None;
    let mut seen = 0;
    for line in md.lines() {
        if let Some(rest) = line.strip_prefix("<details><summary><b>") {
            target = rest.split("</b>").next().map(str::to_owned);
            continue;
        }
        if !line.starts_with("| ") || line.starts_with("| |") || line.starts_with("| verdict") {
            continue;
        }
        let cells: Vec<&str> = line.trim_matches('|').split(" | ").map(str::trim).collect();
        let (t, size, metric, change) = match &target {
            None if cells.len() == 8 => (cells[1].trim_matches('`'), cells[2], cells[4], cells[5]),
            Some(t) if cells.len() == 10 => (t.as_str(), cells[1], cells[3], cells[4]),
            _ => continue,
        };
        let metric = metric.trim_matches('`');
        let Some(row) = results
            .rows
            .iter()
            .find(|r| r.key.target == t && r.key.size == size && r.key.metric == metric)
        else {
            continue;
        };
        assert_eq!(change, shown_cell(row, change), "{}: {line}", row.key());
        seen += 1;
    }
    assert!(seen >= results.rows.len(), "{seen} Markdown rows checked:\n{md}");
}

/// HTML: every table row's change cell (`<td class="num change">`), under its target's `<h3>` or
/// with its own target cell.
fn html_checks(results: &Results, page: &str) {
    let mut target = String::new();
    let mut seen = 0;
    for line in page.lines() {
        if let Some(t) = line.strip_prefix("<h3>") {
            target = t.trim_end_matches("</h3>").to_owned();
            continue;
        }
        let Some((head, rest)) = line.split_once("<td class=\"what\">") else {
            continue;
        };
        let Some((_, change)) = rest.split_once("<td class=\"num change\">") else {
            continue;
        };
        let change = change.split("</td>").next().unwrap();
        let tds: Vec<&str> = head
            .split("<td>")
            .skip(2)
            .map(|c| c.trim_end_matches("</td>"))
            .collect();
        let (t, size) = match tds.as_slice() {
            [t, size] => (*t, *size),
            [size] => (target.as_str(), *size),
            _ => panic!("{line}"),
        };
        let metric = rest.split("<div").next().unwrap();
        let row = results
            .rows
            .iter()
            .find(|r| r.key.target == t && r.key.size == size && r.key.metric == metric)
            .unwrap_or_else(|| panic!("no row for {line}"));
        assert_eq!(change, shown_cell(row, change), "{line}");
        seen += 1;
    }
    assert!(seen >= results.rows.len(), "{seen} HTML rows checked");
}

/// JUnit: the `change` property reads back as the row's change exactly, and a failure's message
/// prints the change and interval as every report does.
fn junit_checks(results: &Results, xml: &str) {
    for block in xml.split("<testcase ").skip(1) {
        let block = block.split("</testcase>").next().unwrap();
        let name = block
            .split("name=\"")
            .nth(1)
            .and_then(|s| s.split('"').next())
            .unwrap()
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&amp;", "&");
        let Some(row) = results.rows.iter().find(|r| r.key().to_string() == name) else {
            continue;
        };
        if let Some(c) = row.estimate().change() {
            let prop = block
                .split("<property name=\"change\" value=\"")
                .nth(1)
                .and_then(|s| s.split('"').next())
                .unwrap_or_else(|| panic!("{name}: no change property"));
            assert_eq!(prop.parse::<f64>().unwrap().to_bits(), c.to_bits(), "{name}");
        }
        if let Some(m) = block.split("message=\"").nth(1)
            && let Some(want) = cell(row)
        {
            assert!(m.contains(&format!("change {want}")), "{name}: {m}");
        }
    }
}

fn annotation_checks(results: &Results) {
    let lines = cgp_report::report::annotations::annotations(results);
    for row in results.rows.iter().filter(|r| r.verdict().as_str() != "pass") {
        let Some(want) = cell(row) else { continue };
        let want = format!("change {}", want.replace('%', "%25"));
        assert!(
            lines.iter().any(|l| l.contains(&want)),
            "{}: {want} in {lines:#?}",
            row.key()
        );
    }
}

/// The reason sentence: where it names a percentage interval, it is the row's, as printed
/// everywhere else.
fn reason_checks(results: &Results) {
    for row in &results.rows {
        let Some((_, Some(ci))) = expected(row) else {
            continue;
        };
        for part in row.reason.split('[').skip(1) {
            let Some((inside, _)) = part.split_once(']') else {
                continue;
            };
            if inside.contains('%') {
                assert_eq!(format!("[{inside}]"), ci, "{}: {}", row.key(), row.reason);
            }
        }
    }
}

/// Runs `cgp-gate ARGS` with every report asked for; checks each format against the JSON.
fn every_report_shows_the_verdicts_number(args: &[&str], dir: &Path) -> Results {
    let p = |n: &str| dir.join(n).display().to_string();
    let out = crate::support::bin_std()
        .args(args)
        .args([
            "--json",
            &p("r.json"),
            "--markdown",
            &p("r.md"),
            "--html",
            &p("r.html"),
        ])
        .args(["--junit", &p("r.xml"), "--no-github-actions", "--color", "never"])
        .env("COLUMNS", "200")
        .current_dir(root())
        .output()
        .unwrap();
    let console = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{console}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let results = cgp_outcome::outcome::results::read(&dir.join("r.json")).unwrap();
    assert!(
        results
            .rows
            .iter()
            .filter(|r| r.estimate().change().is_some())
            .count()
            >= 6
    );
    let read = |n: &str| std::fs::read_to_string(dir.join(n)).unwrap();
    console_checks(&results, &console);
    markdown_checks(&results, &read("r.md"));
    html_checks(&results, &read("r.html"));
    junit_checks(&results, &read("r.xml"));
    annotation_checks(&results);
    reason_checks(&results);
    results
}

#[test]
fn the_demo_h100_replay_shows_one_number_per_row_in_every_report() {
    let d = tempfile::tempdir().unwrap();
    let rec = "examples/recordings/h100";
    let r = every_report_shows_the_verdicts_number(
        &[
            "check",
            "--spec",
            &format!("{rec}/check.yaml"),
            "--baselines",
            "examples/baselines-h100",
            "--replay",
            &format!("{rec}/extra3"),
            "--quiet",
        ],
        d.path(),
    );
    // The medians moved 26.61 / 25.74 - 1 = +3.4%; the verdict's estimate is what every report shows.
    let reduce = r
        .rows
        .iter()
        .find(|x| x.key.target == "reduce" && x.key.metric == "gpu__time_duration.sum")
        .unwrap();
    assert_eq!(expected(reduce).unwrap().0, "+4.24%");
}

#[test]
fn ab_on_the_pytorch_recording_shows_one_number_per_row_in_every_report() {
    let rec = root().join("examples/pytorch/recording");
    let d = tempfile::tempdir().unwrap();
    let trees = d.path().join("trees");
    for d in ["gemm/n=2048", "gemm/n=4096", "layernorm/n=1024"] {
        for (side, order) in [("base", [0, 1, 2, 3, 4]), ("head", [1, 2, 3, 4, 2])] {
            let to = trees.join(side).join(d);
            std::fs::create_dir_all(&to).unwrap();
            for (i, from) in order.iter().enumerate() {
                std::fs::copy(
                    rec.join(d).join(format!("{from}.csv")),
                    to.join(format!("{i}.csv")),
                )
                .unwrap();
            }
        }
    }
    let out = d.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    let r = every_report_shows_the_verdicts_number(
        &[
            "ab",
            "--spec",
            "examples/pytorch/cgp-gate.yaml",
            "--replay",
            trees.to_str().unwrap(),
            "--quiet",
        ],
        &out,
    );
    // The medians of layernorm's time moved +0.43%; the paired estimate the verdict used is
    // +0.19%, and that is the number.
    let layer = r
        .rows
        .iter()
        .find(|x| x.key.target == "layernorm" && x.key.metric == "gpu__time_duration.sum")
        .unwrap();
    let (b, c) = (
        layer.sides.baseline.as_ref().unwrap().median,
        layer.sides.candidate.as_ref().unwrap().median,
    );
    assert_ne!(
        format!("{:+.2}%", (c / b - 1.0) * 100.0),
        expected(layer).unwrap().0
    );
}

/// Issue 37, the first reports: an `ab` whose head tree lacks a repetition fails with errors.
/// Its Markdown and HTML must not say "every judged row is within its threshold" above the
/// errors, and the Markdown error list renders (CommonMark, pulldown-cmark) with the commands it
/// names as code and without character references or literal backticks.
#[test]
fn an_error_report_reads_as_a_failure_and_renders_its_commands_as_code() {
    use pulldown_cmark::{Event, Options, Parser};
    let rec = root().join("examples/pytorch/recording");
    let d = tempfile::tempdir().unwrap();
    let trees = d.path().join("trees");
    for d in ["gemm/n=2048", "gemm/n=4096", "layernorm/n=1024"] {
        for side in ["base", "head"] {
            let to = trees.join(side).join(d);
            std::fs::create_dir_all(&to).unwrap();
            for i in 0..5 {
                if side == "base" || i > 0 {
                    std::fs::copy(rec.join(d).join(format!("{i}.csv")), to.join(format!("{i}.csv"))).unwrap();
                }
            }
        }
    }
    let (md, html) = (d.path().join("r.md"), d.path().join("r.html"));
    let out = crate::support::bin_std()
        .args(["ab", "--spec", "examples/pytorch/cgp-gate.yaml", "--replay"])
        .arg(&trees)
        .arg("--markdown")
        .arg(&md)
        .arg("--html")
        .arg(&html)
        .args(["--no-github-actions", "--quiet"])
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (md, html) = (
        std::fs::read_to_string(md).unwrap(),
        std::fs::read_to_string(html).unwrap(),
    );
    for text in [&md, &html] {
        assert!(!text.contains("within its threshold"), "{text}");
        assert!(text.contains("this is not a pass"), "{text}");
    }
    assert!(!md.contains("&#"), "no character references: {md}");
    let events: Vec<Event> = Parser::new_ext(&md, Options::ENABLE_TABLES).collect();
    let code: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            Event::Code(c) => Some(c.as_ref()),
            _ => None,
        })
        .collect();
    assert!(code.contains(&"cgp-gate profile --record DIR"), "{code:?}");
    assert!(code.contains(&"gemm[n=2048]"), "{code:?}");
    let text: String = events
        .iter()
        .filter_map(|e| match e {
            Event::Text(t) => Some(t.as_ref()),
            _ => None,
        })
        .collect();
    assert!(!text.contains('`'), "literal backticks: {text}");
    assert!(text.contains("has no repetition 0"), "{text}");
}
