//! Reports of `cgp-gate bisect`: the console text and Markdown (a step summary, an issue). They
//! render a decided [`BisectResult`] (`outcome::bisect` decided every commit and the culprit).
//! Commit subjects and row names come from the repository and are escaped.

use std::fmt::Write as _;

use crate::foundation::units::{Percent, percent};
use crate::outcome::{BisectEnd, BisectResult};
use crate::report::markdown::escape_md_cell;

/// A change with its interval: `+8.01% [+7.20%, +8.84%]`, or `-`.
fn change(c: Option<f64>, ci: Option<[f64; 2]>) -> String {
    match (c, ci) {
        (Some(c), Some([lo, hi])) => format!(
            "{} [{}, {}]",
            percent(c, Percent::Signed2),
            percent(lo, Percent::Signed2),
            percent(hi, Percent::Signed2)
        ),
        (Some(c), None) => percent(c, Percent::Signed2),
        _ => "-".to_owned(),
    }
}

fn short(sha: &str) -> &str {
    &sha[..sha.len().min(12)]
}

/// The lines both formats share: culprit, change, confidence, cost.
fn headline(r: &BisectResult) -> Vec<String> {
    let mut v = vec![r.summary.clone()];
    if let Some(c) = &r.culprit {
        v.push(format!(
            "change across it: {} on {}",
            change(c.change, c.change_ci),
            c.row
        ));
    }
    if let Some(conf) = r.confidence {
        v.push(format!(
            "confidence at least {} that {}",
            percent(conf, Percent::Plain1),
            r.claim
        ));
    }
    if !r.range.is_empty() {
        v.push(format!(
            "range: {}",
            r.range.iter().map(|c| short(c)).collect::<Vec<_>>().join(", ")
        ));
    }
    v.push(format!(
        "{} commit(s) between good {} and bad {} ({}); {} measured, {} process(es), {:.1} s",
        r.commits,
        short(&r.good),
        short(&r.bad),
        if r.first_parent {
            "first-parent line: the range has merges"
        } else {
            "ancestry path"
        },
        r.steps.len(),
        r.processes,
        r.seconds
    ));
    v
}

/// The console text.
pub fn console(r: &BisectResult) -> String {
    let mut s = String::new();
    for line in headline(r) {
        let _ = writeln!(s, "{}", crate::foundation::sanitize::line(&line));
    }
    let _ = writeln!(
        s,
        "\n  #  commit        said      change vs good                processes  seconds  subject"
    );
    for st in &r.steps {
        let _ = writeln!(
            s,
            "{:>3}  {:<12}  {:<8}  {:<28}  {:>9}  {:>7.1}  {}",
            st.index,
            short(&st.commit),
            st.said.as_str(),
            change(st.change, st.change_ci),
            st.processes,
            st.seconds,
            crate::foundation::sanitize::line(&st.subject)
        );
        if st.said == crate::outcome::Said::Skipped {
            let _ = writeln!(
                s,
                "     skipped: {}",
                crate::foundation::sanitize::line(&st.reason)
            );
        }
    }
    let _ = writeln!(s, "\nmethod: {}", r.method);
    s
}

/// Markdown: a heading, the lines, a table of the commits measured.
pub fn markdown(r: &BisectResult) -> String {
    let mut m = String::new();
    let icon = match r.end {
        BisectEnd::Culprit => "🔴",
        BisectEnd::NoChange => "🟢",
        BisectEnd::NotPinned => "🟡",
        BisectEnd::Range => "🟠",
    };
    let mut lines = headline(r).into_iter();
    let _ = writeln!(
        m,
        "## {icon} cgp-gate bisect: {}\n",
        escape_md_cell(&lines.next().unwrap_or_default())
    );
    for l in lines {
        let _ = writeln!(m, "- {}", escape_md_cell(&l));
    }
    m.push_str("\n| # | commit | said | change vs good | processes | seconds | subject |\n");
    m.push_str("|---:|---|---|---:|---:|---:|---|\n");
    for st in &r.steps {
        let subject = if st.reason.is_empty() || st.said != crate::outcome::Said::Skipped {
            st.subject.clone()
        } else {
            format!("{} (skipped: {})", st.subject, st.reason)
        };
        let _ = writeln!(
            m,
            "| {} | `{}` | {} | {} | {} | {:.1} | {} |",
            st.index,
            escape_md_cell(short(&st.commit)),
            st.said.as_str(),
            escape_md_cell(&change(st.change, st.change_ci)),
            st.processes,
            st.seconds,
            escape_md_cell(&subject)
        );
    }
    let _ = writeln!(m, "\n{}", escape_md_cell(&r.method));
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::{BisectStep, Culprit, Levels, Said};

    fn result() -> BisectResult {
        let step = |index: usize, said: Said, subject: &str, reason: &str| BisectStep {
            index,
            commit: format!("{index:0>40}"),
            subject: subject.to_owned(),
            said,
            change: (said != Said::Skipped).then_some(0.08),
            change_ci: (said != Said::Skipped).then_some([0.07, 0.09]),
            row: "r".to_owned(),
            reason: reason.to_owned(),
            processes: 10,
            seconds: 1.5,
        };
        let levels = Levels::new(0.01, 4);
        BisectResult {
            schema_version: 1,
            good: "a".repeat(40),
            bad: "b".repeat(40),
            commits: 4,
            first_parent: false,
            targets: vec!["t".to_owned()],
            levels,
            threshold: None,
            end: BisectEnd::Culprit,
            culprit: Some(Culprit {
                commit: "3".repeat(40),
                subject: "x | y".to_owned(),
                change: Some(0.08),
                change_ci: Some([0.07, 0.09]),
                row: "r".to_owned(),
            }),
            confidence: Some(levels.confidence(3)),
            claim: BisectEnd::Culprit.claim().to_owned(),
            method: crate::outcome::bisect_method(&levels, None),
            range: Vec::new(),
            steps: vec![
                step(4, Said::Bad, "four", ""),
                step(2, Said::Skipped, "two | pipes", "build failed"),
                step(3, Said::Bad, "x | y", ""),
            ],
            processes: 20,
            seconds: 3.0,
            summary: "the first bad commit is 333 (x | y)".to_owned(),
        }
    }

    #[test]
    fn both_formats_name_the_culprit_its_change_confidence_and_every_step() {
        let r = result();
        let c = console(&r);
        assert!(
            c.contains("change across it: +8.00% [+7.00%, +9.00%] on r"),
            "{c}"
        );
        assert!(c.contains("at least 99.4%"), "{c}");
        assert!(c.contains("skipped: build failed"), "{c}");
        let m = markdown(&r);
        assert!(
            m.starts_with("## 🔴 cgp-gate bisect: the first bad commit is 333 (x &#124; y)"),
            "{m}"
        );
        // A subject's pipe cannot break the table: every row keeps its 8 bars (7 closing a cell).
        for line in m
            .lines()
            .filter(|l| l.starts_with("| 2 ") || l.starts_with("| 3 "))
        {
            assert_eq!(line.matches(" |").count(), 7, "{line}");
            assert!(line.contains("&#124;"), "{line}");
        }
        assert!(m.contains("(skipped: build failed)"), "{m}");
    }
}
