//! `check` on simulated candidates, through the engine's one re-measure loop
//! ([`crate::run::engine::until_decided`]): `examples/power.rs` measures the gate with it. The
//! loop, the stopping rule (a row keeps the verdict of the first look that decided it,
//! `engine::keep_decided`) and the alpha spent at each row's look (`stats::judge_all_at`) are the
//! ones `check` runs; only the samples come from a model instead of a profiler.

use std::collections::BTreeSet;

use crate::foundation::error::Error;
use crate::foundation::threshold::Threshold;
use crate::outcome::results::{Row, RowVerdict, RunError};
use crate::run::engine::{Remeasure, Rounds, until_decided};
use crate::stats::remeasure::next_round;
use crate::stats::spending::LookAt;
use crate::stats::{Comparison, Config, judge_all_at};

/// One row of a simulated check; each row is its own size (re-measured alone).
#[derive(Debug, Clone)]
pub struct SimRow<'a> {
    pub key: String,
    pub baseline: &'a [f64],
    /// The run of each baseline sample (empty: each sample its own run).
    pub baseline_runs: &'a [u32],
    pub threshold: &'a Threshold,
    pub history: &'a [f64],
}

/// The outcome of a simulated check.
#[derive(Debug, Clone)]
pub struct SimOutcome {
    /// The final verdict of each row, in order.
    pub verdicts: Vec<RowVerdict>,
    /// Repetitions (processes) measured beyond the first round, over all rows.
    pub extra_reps: u32,
}

/// Samples a simulation draws: `draw(row, runs)` returns that many more runs of row `row`, one
/// vector of launches per run.
pub type Draw<'d> = dyn FnMut(usize, u32) -> Vec<Vec<f64>> + 'd;

/// What `check` does, on simulated candidates: `repetitions` runs per row, every row judged
/// (one Holm family, alpha spent by each row's look), the inconclusive rows' sizes re-measured by
/// `repetitions` more runs up to `max_repetitions`, by [`until_decided`].
pub fn simulate_check(
    rows: &[SimRow<'_>],
    cfg: &Config,
    repetitions: u32,
    max_repetitions: u32,
    draw: &mut Draw<'_>,
) -> SimOutcome {
    let mut sim = SimLoop {
        rows,
        cfg: Config {
            looks: crate::stats::remeasure::looks(repetitions, max_repetitions),
            ..cfg.clone()
        },
        repetitions,
        max_repetitions,
        cand: vec![(Vec::new(), Vec::new()); rows.len()],
        done: vec![0; rows.len()],
        extra: 0,
        draw,
    };
    for i in 0..rows.len() {
        sim.add(i, repetitions);
    }
    sim.extra = 0;
    let judged = until_decided(&mut sim).map(|(rows, _, _)| rows);
    let mut verdicts = vec![RowVerdict::Error; rows.len()];
    for r in judged.unwrap_or_default() {
        if let Some(v) = r.size.parse::<usize>().ok().and_then(|i| verdicts.get_mut(i)) {
            *v = r.verdict();
        }
    }
    SimOutcome {
        verdicts,
        extra_reps: sim.extra,
    }
}

/// The simulated run inside the loop: its rows' candidate samples so far.
struct SimLoop<'a, 'd, 'x> {
    rows: &'a [SimRow<'a>],
    cfg: Config,
    repetitions: u32,
    max_repetitions: u32,
    /// Candidate samples and the run of each, per row.
    cand: Vec<(Vec<f64>, Vec<u32>)>,
    /// Runs measured per row.
    done: Vec<u32>,
    extra: u32,
    draw: &'d mut Draw<'x>,
}

impl SimLoop<'_, '_, '_> {
    /// Draw `runs` more runs of row `i`.
    fn add(&mut self, i: usize, runs: u32) {
        let first = self.done[i];
        for (k, run) in (self.draw)(i, runs).into_iter().enumerate() {
            let id = first + k as u32;
            self.cand[i].1.extend(std::iter::repeat_n(id, run.len()));
            self.cand[i].0.extend(run);
        }
        self.done[i] += runs;
        self.extra += runs;
    }
}

impl Remeasure for SimLoop<'_, '_, '_> {
    fn judge(&mut self, _rounds: &Rounds) -> (Vec<Row>, Vec<RunError>) {
        let comparisons: Vec<Comparison<'_>> = self
            .rows
            .iter()
            .zip(&self.cand)
            .map(|(r, c)| Comparison {
                key: r.key.clone(),
                baseline: Some(r.baseline),
                candidate: &c.0,
                threshold: r.threshold,
                history: r.history,
                baseline_runs: r.baseline_runs,
                candidate_runs: &c.1,
            })
            .collect();
        let looks: Vec<LookAt> = self
            .done
            .iter()
            .map(|d| LookAt {
                repetitions: self.repetitions,
                max_repetitions: self.max_repetitions,
                done: *d,
            })
            .collect();
        let rows = judge_all_at(&comparisons, &self.cfg, &looks)
            .into_iter()
            .enumerate()
            .map(|(i, j)| Row::bare("sim", &i.to_string(), Some("k"), "m", "", j.verdict, &j.reason))
            .collect();
        (rows, Vec::new())
    }

    fn measure_more(
        &mut self,
        doubtful: &BTreeSet<(String, String)>,
    ) -> Result<Option<BTreeSet<(String, String)>>, Error> {
        let mut grew = BTreeSet::new();
        // In row order, as a profiler measures the work list (the draws stay reproducible).
        let mut order: Vec<(usize, &(String, String))> = doubtful
            .iter()
            .filter_map(|id| id.1.parse::<usize>().ok().map(|i| (i, id)))
            .collect();
        order.sort_by_key(|(i, _)| *i);
        for (i, id) in order {
            if let Some((from, to)) = self
                .done
                .get(i)
                .and_then(|d| next_round(*d, self.repetitions, self.max_repetitions))
            {
                self.add(i, to - from);
                grew.insert(id.clone());
            }
        }
        Ok((!grew.is_empty()).then_some(grew))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::foundation::threshold::{Direction, ThresholdKind};
    use crate::stats::rng::Rng;

    /// SYNTHETIC: one row 10 % slower (decided at the first look), one exactly at the 3 %
    /// threshold (re-measured to `max_repetitions` by the engine's loop, never a regression
    /// here), one unchanged (a pass at once).
    #[test]
    fn the_engine_loop_re_measures_only_doubtful_rows() {
        let t = Threshold {
            kind: ThresholdKind::Relative { fraction: 0.03 },
            direction: Direction::Lower,
            min_effect: None,
        };
        let mut rng = Rng::new(35);
        let runs = |rng: &mut Rng, n: u32, mu: f64| -> Vec<Vec<f64>> {
            (0..n)
                .map(|_| {
                    let off = 0.002 * rng.normal();
                    (0..30)
                        .map(|_| 1000.0 * (mu + off + 0.005 * rng.normal()).exp())
                        .collect()
                })
                .collect()
        };
        let base: Vec<Vec<f64>> = runs(&mut rng, 30, 0.0);
        let ids: Vec<u32> = (0..30u32).flat_map(|r| std::iter::repeat_n(r, 30)).collect();
        let flat: Vec<f64> = base.concat();
        let rows: Vec<SimRow<'_>> = (0..3)
            .map(|i| SimRow {
                key: format!("k{i}"),
                baseline: &flat,
                baseline_runs: &ids,
                threshold: &t,
                history: &[],
            })
            .collect();
        let shifts = [0.10_f64.ln_1p(), 0.03_f64.ln_1p(), 0.0];
        let mut asked = [0u32; 3];
        let mut draw = |i: usize, n: u32| {
            asked[i] += n;
            runs(&mut rng, n, shifts[i])
        };
        let out = simulate_check(&rows, &Config::default(), 1, 3, &mut draw);
        assert_eq!(out.verdicts[0], RowVerdict::Regression);
        assert_ne!(out.verdicts[1], RowVerdict::Regression);
        assert_eq!(out.verdicts[2], RowVerdict::Pass);
        assert_eq!(asked[0], 1);
        assert_eq!(asked[2], 1);
        // The row at the threshold was doubtful at the first look and measured again.
        assert!(asked[1] > 1, "{asked:?}");
        if out.verdicts[1] == RowVerdict::Inconclusive {
            assert_eq!(asked[1], 3, "an inconclusive row ends at max_repetitions");
        }
        assert_eq!(out.extra_reps, asked.iter().sum::<u32>() - 3);
    }
}
