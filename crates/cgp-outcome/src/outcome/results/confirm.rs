//! What `check --base` did (docs/confirm.md): each row confirmed against the base commit's build,
//! measured again paired and interleaved with it in the same job, and the run's account of it.
//!
//! A confirmed row's outcome, method, reason and sides are the paired ones: its estimate is the
//! number the verdict used (one number per row). What the stored baseline said (the screen) is
//! kept beside it as context. The file writes the row's `confirmation` object flat
//! (`wire::ConfirmationWire`), with the row's own verdict, change and interval in it.

use serde::{Deserialize, Serialize};

use super::RowVerdict;
pub use crate::spec::ConfirmMode;

/// How a row stands to the confirmation against the base commit.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Confirmation {
    /// Not confirmed: no `--base`, or a row the stored baseline decided (a pass or an
    /// improvement under `--confirm doubtful`).
    #[default]
    None,
    /// Measured again paired with the base commit's build; the row's outcome is the paired one.
    Confirmed(Confirmed),
    /// The row needed the confirmation and it did not run (the base did not build, start or
    /// run): the row keeps the stored baseline's verdict and the run's errors say why.
    NotRun {
        /// The base commit (full SHA) that could not be measured.
        base_commit: String,
    },
}

/// A row confirmed against the base commit.
#[derive(Debug, Clone, PartialEq)]
pub struct Confirmed {
    /// The base commit's full SHA (empty when `--base-dir` named a tree outside git).
    pub base_commit: String,
    /// The pairs (base and head processes run back to back) the paired verdict used.
    pub pairs: u32,
    /// What the stored baseline said of the row: context, not the decision.
    pub screen: Screen,
    /// The kernel's machine code (SASS) is identical in both builds: the pairs then measure this
    /// job's own noise. Evidence, not a verdict.
    pub same_sass: bool,
}

/// The stored baseline's judgement of a row (the screen), kept beside the paired one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Screen {
    pub verdict: RowVerdict,
    /// The change against the stored baseline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change: Option<f64>,
    /// Its interval, at the level the screen's verdict used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<[f64; 2]>,
    /// That level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
}

impl Confirmation {
    /// The base commit a row was confirmed (or was to be confirmed) against.
    pub fn base_commit(&self) -> Option<&str> {
        match self {
            Self::None => None,
            Self::Confirmed(c) => Some(&c.base_commit),
            Self::NotRun { base_commit } => Some(base_commit),
        }
    }
}

/// What became of the confirmation in a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ConfirmStatus {
    /// No `--base`: the field is left out of the file.
    #[default]
    NotAsked,
    /// Nothing was doubtful: no worktree, no build, no base process.
    NotNeeded,
    /// The base was built and the rows measured paired with it.
    Ran,
    /// The rows needed it and it did not run: the base did not build, start or run (exit 3).
    DidNotRun,
}

/// The run's account of `check --base` (the results' `confirmation`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunConfirmation {
    /// The base commit's full SHA.
    pub base_commit: String,
    /// Which rows were to be confirmed.
    pub mode: ConfirmMode,
    pub status: ConfirmStatus,
    /// Rows confirmed (their verdict is the paired one).
    #[serde(default)]
    pub rows: usize,
    /// Processes of the paired stage, base and head together.
    #[serde(default)]
    pub processes: u32,
    /// Wall seconds of the base's build and the paired stage.
    #[serde(default)]
    pub seconds: f64,
    /// How the two stages share alpha and the pass level (docs/confirm.md).
    #[serde(default)]
    pub method: String,
    /// Why it did not run, or what it found, in one sentence.
    #[serde(default)]
    pub reason: String,
}

impl RunConfirmation {
    /// No `--base`: the file leaves the field out.
    pub(crate) fn is_none(&self) -> bool {
        self.status == ConfirmStatus::NotAsked
    }

    /// The confirmations of several shards together: the base of the first that names one, the
    /// rows, processes and seconds summed; one shard that did not run makes the whole not run,
    /// else one that ran makes it ran.
    pub(crate) fn sum<'a>(parts: impl Iterator<Item = &'a Self>) -> Self {
        let parts: Vec<&Self> = parts.filter(|p| !p.is_none()).collect();
        let Some(first) = parts.first() else {
            return Self::default();
        };
        let status = [
            ConfirmStatus::DidNotRun,
            ConfirmStatus::Ran,
            ConfirmStatus::NotNeeded,
        ]
        .into_iter()
        .find(|s| parts.iter().any(|p| p.status == *s))
        .unwrap_or_default();
        let reasons: Vec<&str> = parts
            .iter()
            .filter(|p| p.status == status && !p.reason.is_empty())
            .map(|p| p.reason.as_str())
            .collect();
        let mut reasons_unique: Vec<&str> = Vec::new();
        for r in reasons {
            if !reasons_unique.contains(&r) {
                reasons_unique.push(r);
            }
        }
        Self {
            base_commit: parts
                .iter()
                .map(|p| p.base_commit.as_str())
                .find(|b| !b.is_empty())
                .unwrap_or_default()
                .to_owned(),
            mode: first.mode,
            status,
            rows: parts.iter().map(|p| p.rows).sum(),
            processes: parts.iter().map(|p| p.processes).sum(),
            seconds: parts.iter().map(|p| p.seconds).sum(),
            method: first.method.clone(),
            reason: reasons_unique.join("; "),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Estimate, Judged, Outcome, OwnedRowKey, Row, Shift};
    use super::*;

    fn confirmed_row() -> Row {
        let estimate = Estimate {
            shift: Shift::Change {
                change: 0.062,
                ci: Some([0.051, 0.073]),
                detectable: None,
            },
            confidence: Some(0.994),
            ..Estimate::default()
        };
        let mut r = Row::bare(
            OwnedRowKey::default(),
            "ns",
            Outcome::Compared(Judged::Regression, estimate),
            "confirmed",
        );
        r.confirmation = Confirmation::Confirmed(Confirmed {
            base_commit: "a".repeat(40),
            pairs: 6,
            screen: Screen {
                verdict: RowVerdict::Inconclusive,
                change: Some(0.046),
                interval: Some([0.02, 0.07]),
                confidence: Some(0.99),
            },
            same_sass: true,
        });
        r
    }

    #[test]
    fn a_confirmed_rows_object_holds_its_own_numbers_and_reads_back() {
        let r = confirmed_row();
        let v = serde_json::to_value(&r).unwrap();
        let c = &v["confirmation"];
        assert_eq!(c["status"], "confirmed");
        assert_eq!(c["base_commit"], "a".repeat(40));
        assert_eq!(c["pairs"], 6);
        // The row's own verdict, change and interval: one number per row.
        assert_eq!(c["verdict"], v["verdict"]);
        assert_eq!(c["change"], v["change"]);
        assert_eq!(c["interval"], v["change_ci"]);
        assert_eq!(c["screen"]["verdict"], "inconclusive");
        assert_eq!(c["same_sass"], true);
        let back: Row = serde_json::from_value(v).unwrap();
        assert_eq!(back, r);
        // A row without a confirmation writes none; a status of another version reads as none.
        let mut plain = r.clone();
        plain.confirmation = Confirmation::None;
        let mut v = serde_json::to_value(&plain).unwrap();
        assert!(v.get("confirmation").is_none());
        v["confirmation"] = serde_json::json!({"status": "later", "base_commit": "b"});
        let back: Row = serde_json::from_value(v).unwrap();
        assert_eq!(back.confirmation, Confirmation::None);
    }

    #[test]
    fn shards_confirmations_add_up_and_one_that_did_not_run_is_the_whole_runs() {
        let part = |status, rows, processes| RunConfirmation {
            base_commit: "c".repeat(40),
            mode: ConfirmMode::Doubtful,
            status,
            rows,
            processes,
            seconds: 1.5,
            method: "m".to_owned(),
            reason: format!("{status:?}"),
        };
        let all = [
            part(ConfirmStatus::Ran, 2, 20),
            part(ConfirmStatus::NotNeeded, 0, 0),
            RunConfirmation::default(),
        ];
        let s = RunConfirmation::sum(all.iter());
        assert_eq!((s.status, s.rows, s.processes), (ConfirmStatus::Ran, 2, 20));
        assert!((s.seconds - 3.0).abs() < 1e-12);
        let with_failure = [
            part(ConfirmStatus::Ran, 2, 20),
            part(ConfirmStatus::DidNotRun, 0, 0),
        ];
        assert_eq!(
            RunConfirmation::sum(with_failure.iter()).status,
            ConfirmStatus::DidNotRun
        );
        assert!(RunConfirmation::sum(std::iter::empty()).is_none());
    }
}
