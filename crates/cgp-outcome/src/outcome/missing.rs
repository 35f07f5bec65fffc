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

use crate::measured::samples::TargetSize;
use std::collections::BTreeSet;

use crate::outcome::kernels::kernel_changes;
use crate::outcome::results::{Outcome, Row, RowVerdict};
use crate::spec::Target;

/// What the run was asked to measure.
pub struct MissingScope<'a> {
    /// The selected targets (`--target`, or all).
    pub targets: &'a [&'a Target],
    /// `--allow-missing`: no missing row fails the gate.
    pub allow_all: bool,
    /// (target, size key) pairs the run skipped on purpose, e.g. because their machine code did
    /// not change since the baseline: their baseline rows are not expected in this run.
    pub skipped: &'a BTreeSet<TargetSize>,
}

/// Mark the missing rows the run should have measured ([`Row::fails_gate`] unless allowed), and
/// say what to do about them in their reason. Returns how many fail the gate.
pub fn apply_missing(rows: &mut [Row], scope: &MissingScope<'_>) -> usize {
    let (_, appeared) = kernel_changes(rows);
    let mut failing = 0;
    for row in rows.iter_mut().filter(|r| r.verdict() == RowVerdict::Missing) {
        let Some(t) = scope.targets.iter().find(|t| t.name == row.key.target) else {
            continue;
        };
        let expected = t.metrics.iter().any(|m| m.name == row.key.metric)
            && !scope
                .skipped
                .contains(&TargetSize::new(&row.key.target, &row.key.size));
        if !expected {
            continue;
        }
        // A baseline entry of a size the spec does not have (removed, or re-keyed to `n=1025`)
        // fails as a renamed target's file does (issue 34): a size re-keyed in the baseline
        // turned a regression into `new`.
        if !t.sizes.iter().any(|s| s.key() == row.key.size) {
            let what = format!(
                "size `{}` of target `{}` is in the baseline but not in the spec (removed, or re-keyed?)",
                row.key.size, row.key.target
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
                if let Outcome::Missing(m) = &mut row.outcome {
                    m.fails_gate = true;
                }
                row.reason = format!(
                    "{what}; this fails the gate: if the change is intended, refresh the baseline with `cgp-gate baseline update`, or allow it with --allow-missing or `allow_missing: true` on the target"
                );
            }
            continue;
        }
        let new_here: Vec<String> = appeared
            .iter()
            .filter(|(tt, _)| tt == &row.key.target)
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
            if let Outcome::Missing(m) = &mut row.outcome {
                m.fails_gate = true;
            }
            row.reason = format!(
                "kernel `{}` is in the baseline but was not measured{now}; this fails the gate: if the change is intended, refresh the baseline with `cgp-gate baseline update`, or allow it with --allow-missing or `allow_missing: true` on the target",
                row.kernel_label()
            );
        }
    }
    failing
}
