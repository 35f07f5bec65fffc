//! Deterministic values (registers, instruction counts, launch configuration: the same number in
//! every sample) compared exactly, for `check` and for `ab` (`paired::judge_constant`).

use super::{Comparison, Config, Judgement, base_judgement, effect_text, num};
use crate::foundation::threshold::{Direction, Threshold, ThresholdKind};
use crate::foundation::units::{Percent, percent};
use crate::stats::row::RowVerdict;

/// A row whose sides are both constant, judged by [`compare_exact`].
pub(super) fn exact_compare(row: &Comparison<'_>, cfg: &Config, b: f64, c: f64) -> Judgement {
    let mut j = base_judgement(row, cfg, RowVerdict::Pass, "");
    j.ruling = super::Ruling::exact(compare_exact(b, c, row.threshold), row.threshold, cfg.confidence);
    j
}

/// A counter's values may jitter by at most this share of the threshold, on each side, for its
/// change to be read exactly (outside the run's Holm family).
pub const COUNT_JITTER_SHARE: f64 = 0.1;

/// A metric that counts work (bytes, instructions, sectors: `jobspread::counts_work`), whose
/// values on each side lie within a tenth of a relative threshold of each other (DRAM bytes
/// jitter by 0.02 % on the H100 pools), is read exactly, as a deterministic one is, and does not
/// join the run's Holm family (issue 57: six such rows cut a +10 % time row found from 72 of 72
/// to 20 of 72): a regression when every candidate value lies beyond every baseline value by more
/// than the threshold, an improvement likewise the better way, a pass when every pair lies within
/// it. Where the jitter straddles the threshold (`None`), or the metric times rather than counts,
/// or `min_effect` is set, the row is tested in the family as any noisy row.
pub fn counted_exactly(key: &str, base: &[f64], cand: &[f64], threshold: &Threshold) -> Option<ExactOutcome> {
    let t = match threshold.kind {
        ThresholdKind::Relative { fraction } => fraction,
        ThresholdKind::Exact | ThresholdKind::Min { .. } | ThresholdKind::Max { .. } => return None,
    };
    if !(t > 0.0 && crate::stats::jobspread::counts_work(key)) || threshold.min_effect.is_some() {
        return None;
    }
    let range = |v: &[f64]| -> Option<(f64, f64)> {
        let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        (lo > 0.0 && hi.is_finite() && hi / lo - 1.0 <= COUNT_JITTER_SHARE * t).then_some((lo, hi))
    };
    let ((b_lo, b_hi), (c_lo, c_hi)) = (range(base)?, range(cand)?);
    let (low, high) = (c_lo / b_hi - 1.0, c_hi / b_lo - 1.0);
    let worse_up = threshold.direction == Direction::Lower;
    let (bad_lo, bad_hi) = if worse_up { (low, high) } else { (-high, -low) };
    let verdict = if bad_lo > t {
        RowVerdict::Regression
    } else if bad_hi < -t {
        RowVerdict::Improvement
    } else if bad_hi <= t && bad_lo >= -t {
        RowVerdict::Pass
    } else {
        return None;
    };
    let (mb, mc) = (
        crate::stats::summary::median(base)?,
        crate::stats::summary::median(cand)?,
    );
    let change = mc / mb - 1.0;
    let pct = |x: f64| percent(x, Percent::Signed2);
    let jitter = percent(COUNT_JITTER_SHARE * t, Percent::Plain2);
    let how = match verdict {
        RowVerdict::Regression => "worse than",
        RowVerdict::Improvement => "better than",
        _ => "within",
    };
    Some(ExactOutcome {
        verdict,
        change: Some(change),
        reason: format!(
            "counted work, the same in every launch up to a jitter under {jitter} (a tenth of the {}): {} -> {} ({}), every candidate launch {} to {} of every baseline one, {how} the threshold; read exactly, outside the run's holm family",
            super::threshold_text(false, t),
            num(mb),
            num(mc),
            pct(change),
            pct(low),
            pct(high)
        ),
    })
}

/// What an exact comparison finds: any change beyond the tolerance, every time (the tolerance
/// itself, the bad way; 0 for an `exact` threshold). `None` for a limit.
pub fn exact_detectable(threshold: &Threshold) -> Option<f64> {
    let t = match threshold.kind {
        ThresholdKind::Relative { fraction } => fraction,
        ThresholdKind::Exact => 0.0,
        ThresholdKind::Min { .. } | ThresholdKind::Max { .. } => return None,
    };
    Some(match threshold.direction {
        Direction::Lower => t,
        Direction::Higher => -t,
    })
}

/// An `exact` threshold against a constant baseline and a candidate that is not constant:
/// every launch of every process is compared, not a test over the launches (issue 34: one
/// process reporting 17 registers against the baseline's 16 passed as noise). The launch that
/// differs most in the worse direction decides; with none worse, the one that differs most.
pub(super) fn exact_every_launch(row: &Comparison<'_>, cfg: &Config, b: f64) -> Judgement {
    let c = row.candidate;
    let mut j = exact_compare(row, cfg, b, deciding_launch(b, c, row.threshold.direction));
    let differ = c.iter().filter(|x| x.total_cmp(&b).is_ne()).count();
    j.ruling.reason = format!(
        "{} (exact: every launch compared, {differ} of {} differ from the baseline's {})",
        j.ruling.reason,
        c.len(),
        num(b)
    );
    j
}

/// The launch of `c` that an `exact` comparison against the constant value `b` is decided by
/// (issue 34: every launch of every process counts): the one farthest from `b` in the worse
/// direction, else the one farthest from it; `b` when `c` is empty. `check` and `ab` both use it.
pub fn deciding_launch(b: f64, c: &[f64], direction: Direction) -> f64 {
    let worse = |x: f64| match direction {
        Direction::Lower => x > b,
        Direction::Higher => x < b,
    };
    let farthest = |x: &f64, y: &f64| (x - b).abs().total_cmp(&(y - b).abs());
    c.iter()
        .copied()
        .filter(|x| worse(*x))
        .max_by(farthest)
        .or_else(|| c.iter().copied().max_by(farthest))
        .unwrap_or(b)
}

/// The outcome of comparing two deterministic values exactly ([`compare_exact`]).
#[derive(Debug, Clone, PartialEq)]
pub struct ExactOutcome {
    pub verdict: RowVerdict,
    /// `(c - b) / |b|`; `None` when `b` is 0 and `c` is not.
    pub change: Option<f64>,
    pub reason: String,
}

/// Compare a deterministic value (registers, instruction counts, launch configuration: the same
/// number in every sample) exactly: baseline `b`, candidate `c`. A relative threshold is the
/// tolerance, `min_effect` (base units) the smallest difference that counts; any other
/// difference beyond them is a regression or an improvement by the threshold's direction.
/// `check` (baseline against candidate) and `ab` (base against head) both decide this way.
pub fn compare_exact(b: f64, c: f64, threshold: &Threshold) -> ExactOutcome {
    let min_effect = threshold.min_effect.as_ref().map_or(0.0, |q| q.value);
    let diff = c - b;
    let change = if b != 0.0 {
        Some(diff / b.abs())
    } else if diff == 0.0 {
        Some(0.0)
    } else {
        None
    };
    let worse = match threshold.direction {
        Direction::Lower => diff > 0.0,
        Direction::Higher => diff < 0.0,
    };
    let moved = format!("{} -> {}", num(b), num(c));
    let outcome = |verdict, reason| ExactOutcome {
        verdict,
        change,
        reason,
    };
    let beyond = match threshold.kind {
        _ if diff == 0.0 => false,
        _ if diff.abs() <= min_effect => {
            return outcome(
                RowVerdict::Pass,
                format!(
                    "deterministic value {moved} is within the min effect {}",
                    effect_text(threshold)
                ),
            );
        }
        ThresholdKind::Relative { fraction } => change.is_none_or(|ch| ch.abs() > fraction),
        ThresholdKind::Exact | ThresholdKind::Min { .. } | ThresholdKind::Max { .. } => true,
    };
    let rel = change.map_or_else(|| "from zero".to_owned(), |c| percent(c, Percent::Signed2));
    match (beyond, worse) {
        (false, _) if diff == 0.0 => outcome(
            RowVerdict::Pass,
            format!("deterministic value unchanged at {}", num(c)),
        ),
        (false, _) => outcome(
            RowVerdict::Pass,
            format!("deterministic value {moved} ({rel}) is within the {threshold}"),
        ),
        (true, true) => outcome(
            RowVerdict::Regression,
            format!("deterministic value got worse: {moved} ({rel})"),
        ),
        (true, false) => outcome(
            RowVerdict::Improvement,
            format!("deterministic value got better: {moved} ({rel})"),
        ),
    }
}
