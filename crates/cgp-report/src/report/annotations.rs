//! GitHub Actions workflow-command annotations (`::error file=...::message`): rendered from the
//! typed results, one per row that fails the gate or needs a look. Writing them, the step summary
//! and the step outputs is publishing (`crate::publish::github`).

use crate::outcome::decide::Gate;
use crate::outcome::view::RunView;
use crate::report::format::{case_name, change_cell, medians_sentence, p_value};

/// Where a text goes in a workflow command (`::error file=F,title=T::MESSAGE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// The message after `::`.
    Data,
    /// A property value (`title=`, `file=`), which also ends at `,` and `::`.
    Property,
}

/// The annotations' one escaping function (workflow commands): control and bidi characters
/// shown as `<U+XXXX>`, `%`, `\r` and `\n` escaped everywhere, and in a property also `:` and `,`.
pub fn escape(s: &str, part: Part) -> String {
    // ESC, BEL and OSC sequences and bidi controls from kernel names must not reach the log raw
    // (shown as `<U+001B>`); `\r` and `\n` keep their workflow-command escapes.
    let shown: String = s
        .chars()
        .map(|c| match c {
            '\r' | '\n' => c.to_string(),
            c if crate::report::text::is_hidden(c) || c.is_control() => crate::report::text::code_point(c),
            c => c.to_string(),
        })
        .collect();
    let data = shown
        .replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A");
    match part {
        Part::Data => data,
        Part::Property => data.replace(':', "%3A").replace(',', "%2C"),
    }
}

/// The line of the spec where a row's metric is written under its target (`metrics:` of the
/// target), else the line of the target's `name:`; `None` when the target is not found. A plain
/// scan of the text: the spec was validated when the results were made, and an annotation
/// without a line is still an annotation.
pub fn spec_line(spec: &str, target: &str, metric: Option<&str>) -> Option<usize> {
    let is_name = |l: &str, name: &str| {
        let t = l.trim_start().trim_start_matches("- ").trim_start();
        t.strip_prefix("name:").is_some_and(|v| {
            let v = v.trim();
            let v = v.split(" #").next().unwrap_or(v).trim();
            v.trim_matches(|c| c == '"' || c == '\'') == name
        })
    };
    let lines: Vec<&str> = spec.lines().collect();
    let start = lines.iter().position(|l| is_name(l, target))?;
    let end = lines[start + 1..]
        .iter()
        .position(|l| l.trim_start().starts_with("- name:"))
        .map_or(lines.len(), |k| start + 1 + k);
    let found = metric.and_then(|m| {
        let key = format!("{m}:");
        (start..end).find(|&k| {
            lines[k].match_indices(&key).any(|(i, _)| {
                i == 0 || !lines[k][..i].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == '.')
            })
        })
    });
    Some(found.unwrap_or(start) + 1)
}

/// The workflow commands for a run: `::error` per row that fails the gate (regression, missing
/// row the run should have measured, inconclusive under `--fail-on inconclusive`), row error and
/// run error, `::warning` per other inconclusive row. Each is one line, and names the spec file with the line of
/// the row's metric (or target) when the spec can be read.
pub fn annotations<'a>(run: impl Into<RunView<'a>>) -> Vec<String> {
    let run = run.into();
    let spec_text = (!run.spec_path.is_empty())
        .then(|| {
            crate::foundation::fsutil::read_text(
                std::path::Path::new(run.spec_path),
                crate::foundation::fsutil::limits::SPEC,
            )
            .ok()
        })
        .flatten();
    let file = |target: &str, metric: Option<&str>| {
        if run.spec_path.is_empty() {
            return String::new();
        }
        let line = spec_text
            .as_deref()
            .and_then(|t| spec_line(t, target, metric))
            .map_or_else(String::new, |l| format!("line={l},"));
        format!("file={},{line}", escape(run.spec_path, Part::Property))
    };
    let mut out = Vec::new();
    for r in run.rows() {
        // The row's gate status, as every reporter shows it (crate::outcome::decide).
        let level = match r.gate.gate() {
            Gate::Fail | Gate::Error => "error",
            Gate::Warn => "warning",
            Gate::Pass => continue,
        };
        let title = format!(
            "cgp-gate {}: {} {}",
            r.verdict.as_str(),
            crate::measured::samples::target_size(&r.key.target, &r.key.size),
            r.key.metric
        );
        let mut message = format!(
            "{}: change {} ({}), threshold {}, p {}. {}",
            case_name(&r),
            change_cell(&r, None),
            medians_sentence(&r),
            r.rule_text(),
            p_value(r.p()),
            r.reason
        );
        // The why (docs/why.md): its reading; the counters are in the other reports.
        if let Some(w) = r.why {
            message.push_str(&format!(". Why: {}", w.reading));
        }
        out.push(format!(
            "::{level} {}title={}::{}",
            file(&r.key.target, Some(&r.key.metric)),
            escape(&title, Part::Property),
            escape(&message, Part::Data)
        ));
    }
    for e in run.errors {
        let at = match &e.size {
            Some(s) => format!("{}[{s}]", e.target),
            None => e.target.clone(),
        };
        out.push(format!(
            "::error {}title={}::{}",
            file(&e.target, None),
            escape(&format!("cgp-gate error ({}): {at}", e.kind), Part::Property),
            escape(&e.message, Part::Data)
        ));
    }
    out
}
