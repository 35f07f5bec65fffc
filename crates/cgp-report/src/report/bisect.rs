//! Reports of `cgp-gate bisect`: the console text and Markdown (a step summary, an issue). They
//! render a decided [`BisectResult`] (`outcome::bisect` decided every commit and the culprit).
//! Commit subjects and row names come from the repository and are escaped.

use std::fmt::Write as _;

use crate::foundation::units::{Percent, percent};
use crate::outcome::bisect::{BisectEnd, BisectResult};
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
            "confidence that it is the first bad commit: at least {}",
            percent(conf, Percent::Plain1)
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
        if st.said == crate::outcome::bisect::Said::Skipped {
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
        let subject = if st.reason.is_empty() || st.said != crate::outcome::bisect::Said::Skipped {
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
