//! What every format says of `check --base` (docs/confirm.md): one headline sentence of the run's
//! confirmation (against which commit, how many rows, or why it did not run) and one line per row
//! it touched, with the paired estimate (the number the verdict used, the row's own) and the
//! stored baseline's as context. Each reporter escapes them with its own function.

use crate::outcome::results::{ConfirmStatus, Confirmation};
use crate::outcome::view::{RowView, RunView};

/// The headline of the run's confirmation; `None` without `--base`.
pub(crate) fn run_line(run: RunView<'_>) -> Option<String> {
    let c = run.confirmation;
    let base = if c.base_commit.is_empty() {
        "the --base-dir tree".to_owned()
    } else {
        format!("base {}", c.base_commit)
    };
    match c.status {
        ConfirmStatus::NotAsked => None,
        ConfirmStatus::NotNeeded => Some(format!(
            "Confirmation against {base} ({}): no row needed it; nothing was built or run for it",
            c.mode.as_str()
        )),
        ConfirmStatus::Ran => Some(format!(
            "Confirmed against {base} ({}): {} row(s) measured again paired with its build in this job ({} processes, {:.1} s); their verdicts and numbers are the paired ones",
            c.mode.as_str(),
            c.rows,
            c.processes,
            c.seconds
        )),
        ConfirmStatus::DidNotRun => Some(format!(
            "The confirmation against {base} did not run for the rows that needed it: {}; they keep the stored baseline's verdict",
            c.reason
        )),
    }
}

/// `target[size] kernel metric`, as the other per-row notes name a row.
fn name(r: &RowView<'_>) -> String {
    format!(
        "{} {} {}",
        crate::measured::samples::target_size(&r.key.target, &r.key.size),
        r.key.kernel_label(),
        r.key.metric
    )
}

/// One line per row the confirmation touched: the paired verdict and estimate (the row's own),
/// the pairs, the stored baseline's verdict and estimate as context, and identical machine code;
/// or that it did not run for the row.
pub(crate) fn row_lines(run: RunView<'_>) -> Vec<String> {
    run.rows()
        .filter_map(|r| match r.confirmation {
            Confirmation::None => None,
            Confirmation::NotRun { .. } => Some(format!(
                "{}: not confirmed; {} stands (the stored baseline's)",
                name(&r),
                crate::report::format::verdict_word(&r)
            )),
            Confirmation::Confirmed(c) => {
                let screen = match (c.screen.change, c.screen.interval) {
                    (Some(ch), Some([lo, hi])) => format!(
                        "{} {} [{}, {}]",
                        c.screen.verdict.as_str(),
                        crate::report::format::change_pct(ch),
                        crate::report::format::change_pct(lo),
                        crate::report::format::change_pct(hi)
                    ),
                    (Some(ch), None) => format!(
                        "{} {}",
                        c.screen.verdict.as_str(),
                        crate::report::format::change_pct(ch)
                    ),
                    _ => c.screen.verdict.as_str().to_owned(),
                };
                Some(format!(
                    "{}: {} {} over {} pair(s) against {}{}; the stored baseline said {screen} (context)",
                    name(&r),
                    crate::report::format::verdict_word(&r),
                    crate::report::format::change_with_ci(&r),
                    c.pairs,
                    if c.base_commit.is_empty() {
                        "the --base-dir tree".to_owned()
                    } else {
                        format!("base {}", c.base_commit.get(..12).unwrap_or(&c.base_commit))
                    },
                    if c.same_sass {
                        " (identical machine code in both builds: the pairs measure this job's noise)"
                    } else {
                        ""
                    }
                ))
            }
        })
        .collect()
}
