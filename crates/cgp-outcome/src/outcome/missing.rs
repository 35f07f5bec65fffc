//! Baseline rows that a run should have measured and did not.
//!
//! A renamed kernel turns every baseline row of the old name into a `missing` row and every row of
//! the new name into a `new` row: nothing is compared. If missing rows were only informational, a
//! rename (or a kernel that stopped launching) would pass the gate with exit 0. So a missing row
//! fails the gate when the run *should* have measured it, unless the user opted out
//! (`check --allow-missing`, or `allow_missing: true` on the target).
//!
//! "Should have measured": the row's target was selected, its size is among the target's sizes
//! in the spec (and in this run's shard: rows of other shards never reach this module), its
//! metric is among the target's metrics, and its size was not skipped on purpose (see
//! [`Scope::skipped`]). Sizes that failed to run are errors already and never become missing rows.

use std::collections::BTreeSet;

use crate::outcome::results::{Row, RowVerdict};
use crate::spec::Target;

/// A (target, kernel) pair.
pub type TargetKernel = (String, String);

/// What the run was asked to measure.
pub struct Scope<'a> {
    /// The selected targets (`--target`, or all).
    pub targets: &'a [&'a Target],
    /// `--allow-missing`: no missing row fails the gate.
    pub allow_all: bool,
    /// (target, size key) pairs the run skipped on purpose, e.g. because their machine code did
    /// not change since the baseline: their baseline rows are not expected in this run.
    pub skipped: &'a BTreeSet<(String, String)>,
}

/// Mark the missing rows the run should have measured ([`Row::fails_gate`] unless allowed), and
/// say what to do about them in their reason. Returns how many fail the gate.
pub fn apply(rows: &mut [Row], scope: &Scope<'_>) -> usize {
    let (_, appeared) = kernel_changes(rows);
    let mut failing = 0;
    for row in rows.iter_mut().filter(|r| r.verdict == RowVerdict::Missing) {
        let Some(t) = scope.targets.iter().find(|t| t.name == row.target) else {
            continue;
        };
        let expected = t.metrics.iter().any(|m| m.name == row.metric)
            && !scope.skipped.contains(&(row.target.clone(), row.size.clone()));
        if !expected {
            continue;
        }
        // A baseline entry of a size the spec does not have (removed, or re-keyed to `n=1025`)
        // fails as a renamed target's file does (issue 34): a size re-keyed in the baseline
        // turned a regression into `new`.
        if !t.sizes.iter().any(|s| s.key() == row.size) {
            let what = format!(
                "size `{}` of target `{}` is in the baseline but not in the spec (removed, or re-keyed?)",
                row.size, row.target
            );
            if scope.allow_all || t.allow_missing {
                row.reason = format!(
                    "{what}; allowed by {}",
                    if t.allow_missing {
                        "`allow_missing: true`"
                    } else {
                        "--allow-missing"
                    }
                );
            } else {
                failing += 1;
                row.fails_gate = true;
                row.reason = format!(
                    "{what}; this fails the gate: if the change is intended, refresh the baseline with `cgp-gate baseline update`, or allow it with --allow-missing or `allow_missing: true` on the target"
                );
            }
            continue;
        }
        let new_here: Vec<String> = appeared
            .iter()
            .filter(|(tt, _)| tt == &row.target)
            .map(|(_, k)| format!("`{k}`"))
            .collect();
        let now = if new_here.is_empty() {
            String::new()
        } else {
            format!(
                " (measured now without a baseline: {}; renamed?)",
                new_here.join(", ")
            )
        };
        if scope.allow_all || t.allow_missing {
            row.reason = format!(
                "in the baseline but not measured now{now}; allowed by {}",
                if t.allow_missing {
                    "`allow_missing: true`"
                } else {
                    "--allow-missing"
                }
            );
        } else {
            failing += 1;
            row.fails_gate = true;
            row.reason = format!(
                "kernel `{}` is in the baseline but was not measured{now}; this fails the gate: if the change is intended, refresh the baseline with `cgp-gate baseline update`, or allow it with --allow-missing or `allow_missing: true` on the target",
                row.kernel_label()
            );
        }
    }
    failing
}

/// Kernels that disappeared (every row of the target x kernel is `missing`) and kernels that
/// appeared (every row is `new`), as (target, kernel) pairs, sorted. For reports: a rename shows
/// as one of each.
pub fn kernel_changes(rows: &[Row]) -> (Vec<TargetKernel>, Vec<TargetKernel>) {
    use std::collections::BTreeMap;
    // Per target x kernel: (any row missing, any row measured with a baseline, any row measured).
    let mut groups: BTreeMap<(&str, &str), (bool, bool, bool)> = BTreeMap::new();
    for r in rows.iter().filter(|r| r.verdict != RowVerdict::Error) {
        // A row of no kernel has no kernel to appear or disappear.
        let Some(kernel) = r.kernel.as_deref() else {
            continue;
        };
        let g = groups.entry((r.target.as_str(), kernel)).or_default();
        if r.verdict == RowVerdict::Missing {
            g.0 = true;
        } else {
            g.2 = true;
            g.1 |= r.baseline.is_some();
        }
    }
    let pick = |f: &dyn Fn(&(bool, bool, bool)) -> bool| -> Vec<TargetKernel> {
        groups
            .iter()
            .filter(|(_, g)| f(g))
            .map(|((t, k), _)| ((*t).to_owned(), (*k).to_owned()))
            .collect()
    };
    (pick(&|g| g.0 && !g.2), pick(&|g| g.2 && !g.0 && !g.1))
}

/// Per target x size where the baseline's kernels were not measured and others were (or ran
/// unselected by the filter): one line naming both, the usual sign of a library (cuBLAS, cuDNN)
/// picking another kernel for the same operation.
pub fn switches(rows: &[Row]) -> Vec<String> {
    use std::collections::BTreeMap;
    /// One target x size: the kernels gone, the kernels new, and those that ran unselected.
    #[derive(Default)]
    struct Change<'a> {
        gone: Vec<&'a str>,
        new: Vec<&'a str>,
        ran: Option<&'a str>,
    }
    let mut sizes: BTreeMap<(&str, &str), Change<'_>> = BTreeMap::new();
    for r in rows {
        let Some(kernel) = r.kernel.as_deref() else {
            continue;
        };
        let g = sizes.entry((r.target.as_str(), r.size.as_str())).or_default();
        match r.verdict {
            RowVerdict::Missing => {
                if !g.gone.contains(&kernel) {
                    g.gone.push(kernel);
                }
                if let Some(ran) = r.reason.split_once(" the application ran ").map(|(_, k)| k) {
                    g.ran = Some(ran);
                }
            }
            RowVerdict::New if !g.new.contains(&kernel) => g.new.push(kernel),
            _ => {}
        }
    }
    let tick = |v: &[&str]| v.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ");
    // Operation rows (`kernels: sum`) whose kernel set changed: once per target x size.
    let mut out: Vec<String> = Vec::new();
    for r in rows
        .iter()
        .filter(|r| r.kernel.as_deref() == Some(crate::spec::SUM_KERNEL))
    {
        let Some(c) = &r.config_change else { continue };
        let (before, now) = (
            crate::measured::samples::kernels_of(&c.baseline),
            crate::measured::samples::kernels_of(&c.candidate),
        );
        let line = format!(
            "{}: the operation now runs {} instead of {} (compared as one operation row)",
            crate::measured::samples::target_size(&r.target, &r.size),
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
        .map(|((t, size), Change { gone, new, ran })| {
            let ran_text = ran.unwrap_or_default();
            if new.is_empty() && gone.iter().all(|k| ran_text.contains(&format!("`{k}`"))) {
                // The same kernels ran, unselected: no switch, the filter is what changed (or
                // the name it is matched against: a template kernel's begins with `void `).
                return format!(
                    "{}: {ran_text} (not selected by its `kernel:` filter) ran, the baseline's {} among them: not a kernel switch, the filter no longer selects it (a `regex:` filter matches the name as ncu prints it, return type first; docs/spec.md, \"Selecting kernels\")",
                    crate::measured::samples::target_size(t, size),
                    tick(&gone)
                );
            }
            let now = if new.is_empty() {
                format!("{} (not selected by its `kernel:` filter)", ran.unwrap_or_default())
            } else {
                tick(&new)
            };
            format!(
                "{}: kernel switch: {} ran instead of {} (a library may have picked another kernel; gate the operation with `kernels: sum` to compare its time whichever kernel runs)",
                crate::measured::samples::target_size(t, size),
                now,
                tick(&gone)
            )
        }));
    out
}

/// One line per change for reports: `kernels that disappeared: matmul: `x`; kernels that
/// appeared: matmul: `y``. Empty when nothing changed.
pub fn describe_changes(rows: &[Row]) -> Vec<String> {
    let (gone, new) = kernel_changes(rows);
    let list = |v: &[TargetKernel]| {
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
    out.extend(switches(rows));
    let failing = rows
        .iter()
        .filter(|r| {
            r.verdict == RowVerdict::Missing
                && crate::outcome::decide::row_gate(r, crate::outcome::results::FailOn::Regression)
                    == crate::outcome::decide::Gate::Fail
        })
        .count();
    if failing > 0 {
        out.push(format!(
            "{failing} baseline row(s) this run should have measured were not measured: this fails the gate; if the change is intended, refresh the baseline with `cgp-gate baseline update`, or allow it with --allow-missing or `allow_missing: true` on the target"
        ));
    }
    out
}
