//! A benchmark state a harness target's baseline holds and a later run's file does not
//! (docs/harnesses.md): the harness wrote another set of states (an axis changed, a benchmark was
//! removed or renamed), which is invalid input (exit 2) naming the file, the benchmark and the
//! state, not a `missing` row of a kernel that stopped launching (ncu targets keep theirs).
//! `--allow-missing` and `allow_missing: true` still accept it, as they accept a missing kernel.
//! And the rows an nvbench file holds summaries only for: their reason says what the
//! statistics can and cannot do with one mean per process ([`note_summaries`]).

use super::Baselines;
use crate::outcome::decide::row_gate;
use crate::outcome::results::{ErrorKind, FailOn, Row, RowVerdict, RunError};
use crate::spec::Target;

/// `benchmark [state]` as (benchmark, state); a key without a state is the benchmark alone.
fn split_key(key: &str) -> (&str, &str) {
    match key.strip_suffix(']').and_then(|k| k.rsplit_once(" [")) {
        Some((bench, state)) => (bench, state),
        None => (key, ""),
    }
}

/// Turn the failing `missing` rows of harness targets into error rows, with one invalid-input
/// error each. `source` is where this run's samples came from (`nvbench`, a recording).
pub(super) fn missing_states(
    rows: &mut [Row],
    targets: &[&Target],
    baselines: &Baselines,
    fail_on: FailOn,
    source: &crate::measured::source::Source,
) -> Vec<RunError> {
    let mut errors = Vec::new();
    for row in rows.iter_mut() {
        if row.verdict() != RowVerdict::Missing || !row_gate(row, fail_on).is_failing_missing() {
            continue;
        }
        let Some(t) = targets.iter().find(|t| t.name == row.key.target) else {
            continue;
        };
        let Some(format) = crate::profile::harness::format_of(t.profiler) else {
            continue;
        };
        let label = row.kernel_label().to_owned();
        let (bench, state) = split_key(&label);
        let file = baselines
            .get(&row.key.target)
            .map_or_else(|| "the baseline".to_owned(), |(_, p)| p.display().to_string());
        let now = source.replay_dir().map_or_else(
            || format!("the {} files this run's benchmark program wrote", format.tool()),
            |dir| format!("the {} files of the recording {dir}", format.tool()),
        );
        let state_text = if state.is_empty() {
            String::new()
        } else {
            format!(", state `{state}`")
        };
        let message = format!(
            "{file}: benchmark `{bench}`{state_text} (target `{}`, metric `{}`) is in the baseline, and {now} do not have it: the harness wrote another set of states (an axis, a benchmark or its name changed?)\n  help: if the change is intended, refresh the baseline with `cgp-gate baseline update`, or accept it with --allow-missing or `allow_missing: true` on the target",
            row.key.target, row.key.metric
        );
        row.set_verdict(RowVerdict::Error);
        row.reason = format!(
            "benchmark `{bench}`{state_text} is in the baseline but not in this run's {} file (invalid input, exit 2)",
            format.tool()
        );
        errors.push(RunError {
            target: row.key.target.clone(),
            size: Some(row.key.size.clone()),
            kind: ErrorKind::InvalidInput,
            message,
        });
    }
    errors
}

/// Say so in the reason of every judged row of a harness target whose samples are one value per
/// process, in its format's words (nvbench without `--jsonbin`: `summary only (nvbench wrote one
/// mean per process, ...)`; `profile::Backend::summary_note`), with what these processes can
/// detect (issue 57: the text said 3 were enough, and 3 could never decide under the rank test),
/// and, where its baseline holds several samples per process (the rounds or per-sample times of
/// files written with them), that the two sides are samples of different kinds (issue 58, item
/// 11). The note comes after the sentence that decided the row (issue 59: the console shows a
/// reason's first clause, which must be the verdict's why, not this note).
pub(super) fn note_summaries(rows: &mut [Row], targets: &[&Target], baselines: &Baselines) {
    for row in rows.iter_mut() {
        let Some(summary) = targets
            .iter()
            .find(|t| t.name == row.key.target)
            .and_then(|t| crate::profile::backend_of(t).summary_note())
        else {
            continue;
        };
        let reps = &row.candidate_reps;
        let one_each =
            !reps.is_empty() && reps.iter().collect::<std::collections::BTreeSet<_>>().len() == reps.len();
        if !one_each || row.sides.candidate.is_none() {
            continue;
        }
        let mut note = summary.to_owned();
        if let Some(d) = row.estimate().detectable() {
            let runs = |s: &Option<crate::stats::SideSummary>| s.as_ref().and_then(|s| s.runs).unwrap_or(0);
            note.push_str(&format!(
                "; {} candidate against {} baseline processes detect changes of about {} or more in 80% of checks",
                runs(&row.sides.candidate),
                runs(&row.sides.baseline),
                crate::foundation::units::percent(d.abs(), crate::foundation::units::Percent::Plain2)
            ));
        }
        let label = row.kernel_label().to_owned();
        let stored = baselines
            .get(&row.key.target)
            .and_then(|(b, _)| b.entry(&row.key.size, &label, &row.key.metric));
        if let Some(e) = stored {
            let processes = e.reps.iter().collect::<std::collections::BTreeSet<_>>().len();
            if e.samples.len() > processes {
                note.push_str(&format!(
                    "; this run holds one value per process, and the baseline holds {} samples from {processes} processes (rounds or per-sample times): the two sides are samples of different kinds, so write the samples in every run (nvbench `--jsonbin`, pytest-benchmark `--benchmark-json`) or refresh the baseline from files like this run's",
                    e.samples.len()
                ));
            }
        }
        row.reason = if row.reason.is_empty() {
            note
        } else {
            format!("{}; {note}", row.reason)
        };
    }
}

#[cfg(test)]
mod tests {
    use super::split_key;

    #[test]
    fn keys_split_into_benchmark_and_state() {
        assert_eq!(
            split_key("reduce [T=I32,Elements=2^24]"),
            ("reduce", "T=I32,Elements=2^24")
        );
        assert_eq!(split_key("BM_copy/64"), ("BM_copy/64", ""));
    }
}
