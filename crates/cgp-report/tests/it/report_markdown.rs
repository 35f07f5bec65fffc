//! Markdown: escaping checked with a real CommonMark/GFM parser, the shortening, flags and marker.

use cgp_outcome::outcome::results::read as read_results;
use cgp_outcome::outcome::results::{Results, Row, RowVerdict};
use cgp_report::report::markdown::{GITHUB_COMMENT_LIMIT, comment_marker};
use cgp_report::report::{MarkdownOptions, escape_md_cell, markdown};
use proptest::prelude::*;
use pulldown_cmark::{Event, Parser};

use cgp_test_support::{gfm, table_cells};

fn fixture(name: &str) -> Results {
    read_results(&cgp_test_support::fixture("results").join(name)).unwrap()
}

/// What a cell should read as once rendered: line breaks are spaces, control characters gone,
/// outer whitespace trimmed (tables trim cells).
fn expected_text(s: &str) -> String {
    let t: String = s
        .chars()
        .filter_map(|c| match c {
            '\n' | '\r' | '\t' => Some(' '),
            c if c.is_control() => None,
            c => Some(c),
        })
        .collect();
    t.trim_matches(' ').to_owned()
}

fn check_cell(s: &str) {
    let e = escape_md_cell(s);
    let md = format!("| a | b | c |\n|---|---|---|\n| x | {e} | y |\n");
    let rows = table_cells(&md);
    assert_eq!(rows.len(), 2, "{s:?} -> {e:?}");
    assert_eq!(rows[1].len(), 3, "{s:?} -> {e:?}: {rows:?}");
    assert_eq!(rows[1][1], expected_text(s), "{s:?} -> {e:?}");
    assert_eq!((rows[1][0].as_str(), rows[1][2].as_str()), ("x", "y"));
}

#[test]
fn escaping_survives_hostile_text() {
    for s in [
        "void gemm<float, 128, 4>(float const*, float*, int) [with T=float] | *x*",
        "`code` ``double`` ```fence```",
        "<script>alert(1)</script><img src=x onerror=alert(1)>",
        "<!-- cgp-gate:spec=cgp-gate.yaml -->",
        "**bold** __bold__ _it_ *it* ~~strike~~ ~sub~ ^sup^",
        "[link](https://evil.example) ![img](x) [[wiki]] [^1]",
        "$x^2$ $$math$$ \\$",
        "a | b \\| c \\\\| d",
        "&amp; &lt; &#124; &#x3C; &nbsp;",
        "@octocat #123 :tada: https://example.com",
        "line1\nline2\r\n| evil | row |",
        "- [ ] task\n# heading\n> quote\n=====",
        "\\",
        "trailing backslash \\",
        "operator<<(std::ostream&, T const&)",
        "_Z3fooIiEvT_",
        "\u{0}\u{1b}[31mred\u{7}",
    ] {
        check_cell(s);
    }
}

proptest! {
    #[test]
    fn escaping_holds_for_any_punctuation(s in r"[a-z0-9 <>|*_`&#!\\\[\]()~$:@=+\-{}^.'\x22\n\t]{0,40}") {
        check_cell(&s);
    }
}

#[test]
fn mixed_results_render_with_intact_tables_and_no_injected_html() {
    let r = fixture("mixed.json");
    let md = markdown(&r, &MarkdownOptions::default());
    // The only raw HTML is ours: <details>, <summary>, <b>, <sub> and the marker.
    for ev in Parser::new_ext(&md, gfm()) {
        if let Event::Html(h) | Event::InlineHtml(h) = ev {
            let ok = [
                "<details>",
                "</details>",
                "<summary>",
                "</summary>",
                "<b>",
                "</b>",
                "<sub>",
                "</sub>",
                "<!-- cgp-gate:spec=",
            ];
            let mut rest = h.trim();
            while !rest.is_empty() {
                let tag = ok.iter().find(|t| rest.starts_with(**t));
                match tag {
                    Some(t) if t.starts_with("<!--") => break,
                    Some(t) => rest = rest[t.len()..].trim_start(),
                    // Text between our tags (the details summary) is escaped: it holds no
                    // `<` (a `>` alone opens nothing) and no `&` other than a reference.
                    None => {
                        let end = rest.find('<').unwrap_or(rest.len());
                        // Panics on an `&` that is not a complete reference.
                        decode_refs(&rest[..end]);
                        rest = &rest[end..];
                        if !rest.is_empty() && !ok.iter().any(|t| rest.starts_with(*t)) {
                            panic!("unexpected HTML {rest:?} in {h:?}");
                        }
                    }
                }
            }
        }
    }
    // Highlighted table: header + 4 rows of 8 cells, regressions first, kernel names intact.
    let tables = table_cells(md.split("<details>").next().unwrap());
    assert_eq!(tables.len(), 5, "{tables:?}");
    assert!(tables.iter().all(|r| r.len() == 8));
    assert!(tables[1][0].contains("regression") && tables[2][0].contains("regression"));
    assert_eq!(
        tables[1][3],
        "void gemm<float, 128, 4>(float const*, float*, int) [with T=float] | *x*"
    );
    // The change and interval the verdict used, then the medians as context.
    assert_eq!(tables[0][5], "change (95% CI)");
    assert_eq!(tables[1][5], "+6.66% [+5.24%, +8.67%]");
    assert_eq!(tables[1][7], "2.482 ms → 2.646 ms");
    assert!(md.contains("2 regressions, 1 error, 1 inconclusive, 1 improvement on NVIDIA H200"));
    assert!(md.contains("[!WARNING]") && md.contains("Synthetic data"));
    assert!(md.contains("```mermaid\nxychart-beta"));
    assert!(md.contains("`attention[seq=8192,heads=32]` **timeout**"), "{md}");
    assert_eq!(md.matches("<details>").count(), 3);
    assert!(md.trim_end().ends_with("<!-- cgp-gate:spec=cgp-gate.yaml -->"));
}

#[test]
fn mixed_markdown_snapshot() {
    let r = fixture("mixed.json");
    insta::assert_snapshot!(markdown(&r, &MarkdownOptions::default()));
}

#[test]
fn pass_headline_and_no_charts() {
    let r = fixture("pass.json");
    let md = markdown(&r, &MarkdownOptions::default());
    assert!(
        md.starts_with("### ✅ cgp-gate: pass: 5 rows on NVIDIA H200\n"),
        "{md}"
    );
    assert!(md.contains("No regressions, improvements or inconclusive rows."));
    assert!(!md.contains("```mermaid"));
}

#[test]
fn fingerprint_mismatch_is_flagged() {
    let mut r = fixture("pass.json");
    r.fingerprint_mismatch = vec![cgp_outcome::outcome::results::FingerprintDiff {
        field: "driver_version".into(),
        baseline: "570.124.06".into(),
        current: "550.54.15|<b>".into(),
    }];
    let md = markdown(&r, &MarkdownOptions::default());
    assert!(md.contains("> [!CAUTION]\n> **Fingerprint mismatch**"));
    // Columns: field | baseline | this run.
    assert!(md.contains("> | field | baseline | this run |"), "{md}");
    assert!(
        md.contains("> | driver_version | 570.124.06 | 550.54.15&#124;&lt;b> |"),
        "{md}"
    );
}

#[test]
fn marker_cannot_be_forged_or_broken() {
    let mut r = fixture("pass.json");
    r.spec_path = "perf/gpu--specs/x.yaml --> <script>".into();
    let m = comment_marker(&r);
    assert!(m.starts_with("<!-- cgp-gate:spec=") && m.ends_with(" -->"));
    let inner = &m[4..m.len() - 3];
    assert!(!inner.contains("--") || inner.matches("--").count() == 0, "{m}");
    assert!(!inner.contains('>') && !inner.contains('<'), "{m}");
    // Path-keyed: editing the spec (its hash) keeps the comment.
    r.spec_path = "cgp-gate.yaml".into();
    let before = comment_marker(&r);
    r.spec_hash = "0".repeat(64);
    assert_eq!(comment_marker(&r), before);
}

/// `n` copies of the fixture's rows with distinct sizes.
fn many_rows(n: usize, verdict: Option<RowVerdict>) -> Results {
    let mut r = fixture("mixed.json");
    let template: Vec<Row> = r.rows.clone();
    r.rows = (0..n)
        .map(|i| {
            let mut row = template[i % template.len()].clone();
            row.key.size = format!("n={i}");
            if let Some(v) = verdict {
                row.set_verdict(v);
            }
            row
        })
        .collect();
    r
}

#[test]
fn thousands_of_rows_are_shortened_under_githubs_limit() {
    let r = many_rows(5000, None);
    let md = markdown(&r, &MarkdownOptions::default());
    assert!(
        md.chars().count() <= GITHUB_COMMENT_LIMIT,
        "{}",
        md.chars().count()
    );
    assert!(md.contains("This report was shortened to fit the size limit"));
    assert!(!md.contains("<details>"));
    assert!(md.trim_end().ends_with(&comment_marker(&r)));
    // As many highlighted rows as fit: the table is nearly full, and says how many are hidden.
    assert!(
        md.chars().count() > GITHUB_COMMENT_LIMIT - 2000,
        "{}",
        md.chars().count()
    );
    let shown = table_cells(&md).len() - 1;
    let highlighted = r
        .rows
        .iter()
        .filter(|x| {
            matches!(
                x.verdict(),
                RowVerdict::Regression
                    | RowVerdict::Error
                    | RowVerdict::Inconclusive
                    | RowVerdict::Improvement
            )
        })
        .count();
    assert!(
        md.contains(&format!(
            "… and {} more rows not shown here.",
            highlighted - shown
        )),
        "{shown}"
    );
}

#[test]
fn details_go_first_when_just_over_the_limit() {
    let r = fixture("mixed.json");
    let full = markdown(&r, &MarkdownOptions::default());
    let opts = MarkdownOptions {
        max_chars: full.chars().count() - 1,
        full_report_url: Some("https://github.com/o/r/actions/runs/1".into()),
        ..MarkdownOptions::default()
    };
    let short = markdown(&r, &opts);
    assert!(short.chars().count() <= opts.max_chars);
    assert!(!short.contains("<details>"));
    assert!(short.contains("Full report: <https://github.com/o/r/actions/runs/1>"));
    // Every highlighted row is still there.
    assert_eq!(table_cells(&short).len(), 5);
}

#[test]
fn tiny_limits_still_give_the_headline_and_marker() {
    let r = fixture("mixed.json");
    let opts = MarkdownOptions {
        max_chars: 400,
        ..MarkdownOptions::default()
    };
    let md = markdown(&r, &opts);
    assert!(md.chars().count() <= 400, "{md}");
    assert!(md.contains("2 regressions"));
    assert!(md.contains(&comment_marker(&r)));
}

/// Decode the character references that Markdown's escaper writes (what a browser shows).
fn decode_refs(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        let end = tail.find(';').expect("unterminated reference");
        let name = &tail[1..end];
        let c = match name {
            "amp" => '&',
            "lt" => '<',
            "gt" => '>',
            "quot" => '"',
            n => char::from_u32(n.strip_prefix('#').unwrap().parse().unwrap()).unwrap(),
        };
        out.push(c);
        rest = &tail[end + 1..];
    }
    out.push_str(rest);
    out
}

#[test]
fn the_details_summary_line_uses_the_one_markdown_escape_and_shows_the_name_as_written() {
    // Inside raw HTML (`<summary>`) a backslash escape would show; Markdown's one escaping
    // function writes character references, which read the same in both places.
    let mut r = fixture("mixed.json");
    let hostile = "gemm_fp16*<b>x</b>|@team";
    for row in r.rows.iter_mut().filter(|row| row.key.target == "gemm") {
        row.key.target = hostile.to_owned();
    }
    let md = markdown(&r, &MarkdownOptions::default());
    let line = md
        .lines()
        .find(|l| l.starts_with("<details><summary><b>") && l.contains("fp16"))
        .expect("a details block for the renamed target");
    let name = line
        .strip_prefix("<details><summary><b>")
        .unwrap()
        .split("</b>")
        .next()
        .unwrap();
    assert!(!name.contains('\\') && !name.contains('<'), "{line}");
    assert_eq!(decode_refs(name), hostile, "{line}");
    assert_eq!(name, escape_md_cell(hostile));
}
