//! The lines reports write about kernels that disappeared, appeared or switched, and about
//! baseline files of targets the spec no longer has: rendered from the rows' typed outcomes
//! ([`MissingCause`]), never from the words of their reasons.

use std::collections::BTreeSet;

use crate::measured::samples::TargetSize;
use crate::outcome::results::{MissingCause, RowVerdict};
use crate::outcome::view::RunView;

/// Per target x size where the baseline's kernels were not measured and others were (or ran
/// unselected by the filter): one line naming both, the usual sign of a library (cuBLAS, cuDNN)
/// picking another kernel for the same operation.
pub fn switches(run: RunView<'_>) -> Vec<String> {
    use std::collections::BTreeMap;
    /// One target x size: the kernels gone, the kernels new, and those that ran unselected.
    #[derive(Default)]
    struct Change<'a> {
        gone: Vec<&'a str>,
        new: Vec<&'a str>,
        ran: Option<&'a [String]>,
    }
    let mut sizes: BTreeMap<TargetSize, Change<'_>> = BTreeMap::new();
    for r in run.rows() {
        let Some(kernel) = r.key.kernel_name() else {
            continue;
        };
        let g = sizes
            .entry(TargetSize::new(&r.key.target, &r.key.size))
            .or_default();
        if let Some(cause) = r.missing_cause() {
            if !g.gone.contains(&kernel) {
                g.gone.push(kernel);
            }
            if let MissingCause::Unselected { ran } = cause {
                g.ran = Some(ran);
            }
        } else if r.verdict == RowVerdict::New && !g.new.contains(&kernel) {
            g.new.push(kernel);
        }
    }
    let tick = |v: &[&str]| v.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ");
    // Operation rows (`kernels: sum`) whose kernel set changed: once per target x size.
    let mut out: Vec<String> = Vec::new();
    for r in run
        .rows()
        .filter(|r| r.key.kernel == Some(crate::outcome::results::Kernel::Sum))
    {
        let Some(c) = r.config_change else { continue };
        let (before, now) = (
            crate::measured::samples::kernels_of(&c.baseline),
            crate::measured::samples::kernels_of(&c.candidate),
        );
        let line = format!(
            "{}: the operation now runs {} instead of {} (compared as one operation row)",
            crate::measured::samples::target_size(&r.key.target, &r.key.size),
            now.iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", "),
            before
                .iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        if before != now && !out.contains(&line) {
            out.push(line);
        }
    }
    out.extend(sizes
        .into_iter()
        .filter(|(_, g)| !g.gone.is_empty() && (!g.new.is_empty() || g.ran.is_some()))
        .map(|(at, Change { gone, new, ran })| {
            let ran = ran.unwrap_or_default();
            let ran_text = tick_all(ran);
            if new.is_empty() && gone.iter().all(|k| ran.iter().any(|r| r == k)) {
                // The same kernels ran, unselected: no switch, the filter is what changed (or
                // the name it is matched against: a template kernel's begins with `void `).
                return format!(
                    "{}: {ran_text} (not selected by its `kernel:` filter) ran, the baseline's {} among them: not a kernel switch, the filter no longer selects it (a `regex:` filter matches the name as ncu prints it, return type first; docs/spec.md, \"Selecting kernels\")",
                    at,
                    tick(&gone)
                );
            }
            let now = if new.is_empty() {
                format!("{ran_text} (not selected by its `kernel:` filter)")
            } else {
                tick(&new)
            };
            format!(
                "{}: kernel switch: {} ran instead of {} (a library may have picked another kernel; gate the operation with `kernels: sum` to compare its time whichever kernel runs)",
                at,
                now,
                tick(&gone)
            )
        }));
    out
}

/// One line per change for reports: `kernels that disappeared: matmul: `x`; kernels that
/// appeared: matmul: `y``. Empty when nothing changed.
pub fn describe_changes(run: RunView<'_>) -> Vec<String> {
    let (gone, new) = run.kernel_changes();
    let list = |v: &[(String, String)]| {
        v.iter()
            .map(|(t, k)| format!("{t}: `{k}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut out = Vec::new();
    if !gone.is_empty() {
        out.push(format!(
            "kernels that disappeared (in the baseline, not measured now): {}",
            list(&gone)
        ));
    }
    if !new.is_empty() {
        out.push(format!(
            "kernels that appeared (measured now, no baseline): {}",
            list(&new)
        ));
    }
    out.extend(switches(run));
    let failing = run.rows().filter(|r| r.gate.is_failing_missing()).count();
    if failing > 0 {
        out.push(format!(
            "{failing} baseline row(s) this run should have measured were not measured: this fails the gate; if the change is intended, refresh the baseline with `cgp-gate baseline update`, or allow it with --allow-missing or `allow_missing: true` on the target"
        ));
    }
    out
}

/// `` `a`, `b` ``: the names as the reasons and notes list them.
fn tick_all(names: &[String]) -> String {
    names
        .iter()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One line per baseline file of a target the spec no longer has, for reports and the console:
/// `the baseline file FILE is of target `x`, which the spec no longer has ...`, from the row's
/// typed cause and its gate status (`RowView::gate`: failing, or allowed by
/// `--allow-missing`). A results file older than the cause's `file` has none: its rows' reason
/// is shown as it was written. Empty when there are none.
pub fn gone_files(run: RunView<'_>) -> Vec<String> {
    let mut lines: BTreeSet<(&str, String)> = BTreeSet::new();
    for r in run.rows() {
        let Some(cause) = r.missing_cause() else {
            continue;
        };
        if !matches!(cause, MissingCause::TargetGone { .. }) {
            continue;
        }
        let fails = r.gate.is_failing_missing();
        let line = cause
            .gone_file(&r.key.target, fails)
            .unwrap_or_else(|| r.reason.to_owned());
        lines.insert((r.key.target.as_str(), line));
    }
    lines.into_iter().map(|(_, line)| line).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::results::{FailOn, Missing, Outcome, Results, Row};

    /// A run of these rows (the fixture's run with its rows replaced), under `--fail-on regression`.
    fn run_of(rows: &[Row]) -> Results {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/results/pass.json"
        ))
        .unwrap();
        let mut r = crate::outcome::results::parse(&text).unwrap();
        r.rows = rows.to_vec();
        r.fail_on = FailOn::Regression;
        r
    }

    fn row(kernel: &str, verdict: RowVerdict) -> Row {
        Row::bare(
            crate::outcome::results::OwnedRowKey {
                target: "t".into(),
                size: "n=1".into(),
                kernel: Some(kernel.into()),
                metric: "m".into(),
                ..Default::default()
            },
            "ns",
            crate::outcome::results::Outcome::from(verdict),
            "",
        )
    }

    #[test]
    fn switches_and_gone_files_are_read_from_the_typed_cause_not_the_reason() {
        let name = "void gemm<float, 128>(float const*)";
        let mut gone = row(name, RowVerdict::Missing);
        gone.outcome = Outcome::Missing(Missing::failing(MissingCause::Unselected {
            ran: vec![name.to_owned(), "k2".to_owned()],
        }));
        let lines = describe_changes((&run_of(std::slice::from_ref(&gone))).into());
        assert!(
            lines
                .iter()
                .any(|l| l.contains("not a kernel switch") && l.contains("`k2`")),
            "{lines:?}"
        );
        // The same words in the reason of a row of another cause say nothing.
        let mut plain = row("k", RowVerdict::Missing);
        plain.reason = format!("x;{}`k2`, which the spec no longer has", MissingCause::RAN);
        let lines = describe_changes((&run_of(std::slice::from_ref(&plain))).into());
        assert!(!lines.iter().any(|l| l.contains("`k2`")), "{lines:?}");
        assert!(gone_files((&run_of(&[plain])).into()).is_empty());
    }

    /// A gone file's line is made from the row's cause and its gate status, whatever the row's
    /// reason says; a row of a file older than the cause's `file` shows its reason.
    #[test]
    fn a_gone_files_line_names_the_file_of_its_cause_failing_or_allowed() {
        let cause = MissingCause::TargetGone {
            file: "baselines/h100/old.json".into(),
        };
        let mut r = row("k", RowVerdict::Missing);
        r.reason = "words that say something else".into();
        r.outcome = Outcome::Missing(Missing::failing(cause.clone()));
        let failing = gone_files((&run_of(&[r.clone(), r.clone()])).into());
        assert_eq!(failing.len(), 1, "one line per file: {failing:?}");
        assert!(
            failing[0].starts_with("the baseline file baselines/h100/old.json is of target `t`")
                && failing[0].contains("this fails the gate"),
            "{failing:?}"
        );
        // Allowed: a missing row that does not fail the gate (as --allow-missing leaves it).
        r.outcome = Outcome::from(RowVerdict::Missing);
        let Outcome::Missing(m) = &mut r.outcome else {
            unreachable!()
        };
        m.cause = cause;
        let allowed = gone_files((&run_of(std::slice::from_ref(&r))).into());
        assert!(
            allowed[0].ends_with("; allowed by --allow-missing"),
            "{allowed:?}"
        );
        r.outcome = Outcome::Missing(Missing::failing(MissingCause::TargetGone { file: String::new() }));
        assert_eq!(
            gone_files((&run_of(&[r])).into()),
            ["words that say something else"]
        );
    }
}
