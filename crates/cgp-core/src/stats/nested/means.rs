//! Each process's mean launch (issue 57): what a program pays per launch. The run-level model
//! of the log launches (`fit`) gates the processes' geometric means, which a slow path taken by
//! a few launches of every process moves little (one launch in 29 at 3x: +3.9 % against +6.9 %
//! of the mean) and whose within-process spread it inflates, so that a row the slow path makes
//! bimodal cannot decide. The arithmetic mean of a process's launches (for a rate, where higher
//! is better, the harmonic mean: total work over total time) moves by what the slow path costs,
//! and the processes' means vary only as much as the processes do.
//!
//! - [`fit_means`]: the two-sample t test of the processes' log means (pooled over both sides,
//!   `R + S - 2` degrees of freedom; one launch per run of `fit`), every launch kept. It judges a
//!   row whose marks are the code's, and it is the interval "with nothing left out" a row must
//!   pass too when the machine's marks were left out.
//! - [`run_means`]: the pair values of `ab`, with the same rule.
//!
//! Pure; no I/O.

use std::collections::BTreeMap;

use super::{Fit, Runs, far_launches, fit, group, leave_far_out, run_ids};
use crate::stats::screen::{LeftOut, Marks, NAMED};

/// A process's mean launch on the log scale, from its launches' logs: the log of their
/// arithmetic mean when a slow launch is a long one (`slow_high`), else minus the log of the mean
/// of their reciprocals (the harmonic mean of a rate). Computed around the largest value, so no
/// launch overflows.
fn process_level(logs: &[f64], slow_high: bool) -> f64 {
    let sign = if slow_high { 1.0 } else { -1.0 };
    let top = logs.iter().map(|l| sign * l).fold(f64::NEG_INFINITY, f64::max);
    if !top.is_finite() || logs.is_empty() {
        return f64::NAN;
    }
    let mean = logs.iter().map(|l| (sign * l - top).exp()).sum::<f64>() / logs.len() as f64;
    sign * (top + mean.ln())
}

/// The run-level model of the processes' means ([`process_level`]), every launch kept: the pooled
/// two-sample t test of the log means (`fit` with one value per run). Its launch counts are the
/// sides' launches.
///
/// # Errors
/// As `fit`: no samples, values that are not positive, fewer than 2 runs on both sides together
/// beyond one.
pub fn fit_means(base: Runs<'_>, cand: Runs<'_>, slow_high: bool) -> Result<Fit, String> {
    let b = group(&base).map_err(|e| format!("baseline: {e}"))?;
    let c = group(&cand).map_err(|e| format!("candidate: {e}"))?;
    let levels =
        |g: &[Vec<f64>]| -> Vec<f64> { g.iter().map(|r| process_level(r, slow_high).exp()).collect() };
    let (bl, cl) = (levels(&b), levels(&c));
    let mut f = fit(
        Runs {
            values: &bl,
            runs: &[],
        },
        Runs {
            values: &cl,
            runs: &[],
        },
        slow_high,
        false,
    )?;
    let launches = |g: &[Vec<f64>]| g.iter().map(Vec::len).sum::<usize>();
    f.n = (launches(&b), launches(&c));
    f.left_out.of_launches = f.n;
    Ok(f)
}

/// Each run's level for a paired comparison (`ab`), keyed by run index: the geometric mean of
/// its launches after the far launches the machine explains are left out; when the head's marks
/// are the code's (`stats::screen`: its share of far launches, or of processes holding one,
/// significantly above the base's, or one in every head process), the process's mean of every
/// launch ([`process_level`]), on both sides.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunMeans {
    pub base: BTreeMap<u32, f64>,
    pub head: BTreeMap<u32, f64>,
    /// Each process's mean of every launch, nothing left out: the values whose paired interval a
    /// pass must hold too when a head launch was left out (issue 57).
    pub base_all: BTreeMap<u32, f64>,
    pub head_all: BTreeMap<u32, f64>,
    pub left_out: LeftOut,
}

/// [`RunMeans`] of a base and a head side, lower is better. Values that are not positive leave
/// their side's runs as they are (the paired test refuses them with its own reason).
pub fn run_means(base: Runs<'_>, head: Runs<'_>) -> RunMeans {
    run_means_toward(base, head, true)
}

/// [`run_means`] for either direction: `slow_high` when a slow launch is a long one (a time);
/// for a rate the process's mean is the harmonic one.
pub fn run_means_toward(base: Runs<'_>, head: Runs<'_>, slow_high: bool) -> RunMeans {
    let (Ok(b), Ok(h)) = (group(&base), group(&head)) else {
        let plain = |side: &Runs<'_>| -> BTreeMap<u32, f64> {
            let mut by: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
            let ids = run_ids(side);
            for (i, v) in side.values.iter().enumerate() {
                let r = if side.runs.is_empty() {
                    ids[i]
                } else {
                    side.runs[i]
                };
                by.entry(r).or_default().push(*v);
            }
            by.into_iter()
                .map(|(r, v)| (r, v.iter().sum::<f64>() / v.len() as f64))
                .collect()
        };
        let (base, head) = (plain(&base), plain(&head));
        return RunMeans {
            base_all: base.clone(),
            head_all: head.clone(),
            base,
            head,
            left_out: LeftOut::default(),
        };
    };
    let ids = [run_ids(&base), run_ids(&head)];
    let groups = [b, h];
    let flags = [far_launches(&groups[0]), far_launches(&groups[1])];
    let far_in = |f: &[bool]| f.iter().filter(|x| **x).count();
    let count = |s: usize| flags[s].iter().map(|f| far_in(f)).sum::<usize>();
    let marked = |s: usize| flags[s].iter().filter(|f| far_in(f) > 0).count();
    let n = |s: usize| groups[s].iter().map(Vec::len).sum::<usize>();
    let (far_b, far_h) = (count(0), count(1));
    let code = Marks {
        launches: (far_b, far_h),
        of_launches: (n(0), n(1)),
        runs: (0, 0),
        of_runs: (groups[0].len(), groups[1].len()),
        marked_runs: (marked(0), marked(1)),
    }
    .the_codes();
    let mut named = Vec::new();
    let mut levels = [BTreeMap::new(), BTreeMap::new()];
    let mut all = [BTreeMap::new(), BTreeMap::new()];
    for s in 0..2 {
        for (r, (run, fl)) in groups[s].iter().zip(&flags[s]).enumerate() {
            let id = ids[s].get(r).copied().unwrap_or(u32::MAX);
            let mean = process_level(run, slow_high).exp();
            all[s].insert(id, mean);
            let level = if code.is_some() {
                mean
            } else {
                let keep = leave_far_out(run, fl, s, id, &mut named).0;
                (keep.iter().sum::<f64>() / keep.len().max(1) as f64).exp()
            };
            levels[s].insert(id, level);
        }
    }
    named.truncate(NAMED);
    let [base_levels, head_levels] = levels;
    let [base_all, head_all] = all;
    RunMeans {
        base: base_levels,
        head: head_levels,
        base_all,
        head_all,
        left_out: LeftOut {
            launches: if code.is_some() { (0, 0) } else { (far_b, far_h) },
            of_launches: (n(0), n(1)),
            runs: (0, 0),
            of_runs: (groups[0].len(), groups[1].len()),
            kept_as_code: code,
            named,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side<'a>(values: &'a [f64], runs: &'a [u32]) -> Runs<'a> {
        Runs { values, runs }
    }

    #[test]
    fn a_process_level_is_the_log_of_its_mean_launch() {
        let logs: Vec<f64> = [100.0_f64, 100.0, 300.0].iter().map(|x| x.ln()).collect();
        assert!((process_level(&logs, true) - (500.0_f64 / 3.0).ln()).abs() < 1e-12);
        // A rate: the harmonic mean (total work over total time).
        let h = 3.0 / (1.0 / 100.0 + 1.0 / 100.0 + 1.0 / 300.0);
        assert!((process_level(&logs, false) - f64::ln(h)).abs() < 1e-12);
        // Huge values do not overflow.
        assert!(process_level(&[800.0, 800.0], true).is_finite());
    }

    #[test]
    fn a_slow_path_in_every_process_moves_the_mean_and_decides() {
        // SYNTHETIC: 10 baseline processes of 29 launches near 100, 3 candidate processes whose
        // launch 7 takes 3x (one in 29: +6.9 % of the mean). Launch by launch the spread is
        // bimodal; process by process the means agree to 0.1 %.
        let mut rng = crate::stats::rng::Rng::new(57);
        let mut proc = |slow: bool| -> Vec<f64> {
            (0..29)
                .map(|l| 100.0 * (0.002 * rng.normal()).exp() * if slow && l == 7 { 3.0 } else { 1.0 })
                .collect()
        };
        let (mut bv, mut br, mut cv, mut cr) = (vec![], vec![], vec![], vec![]);
        for r in 0..10u32 {
            let p = proc(false);
            br.extend(std::iter::repeat_n(r, p.len()));
            bv.extend(p);
        }
        for r in 0..3u32 {
            let p = proc(true);
            cr.extend(std::iter::repeat_n(r, p.len()));
            cv.extend(p);
        }
        let f = fit_means(side(&bv, &br), side(&cv, &cr), true).unwrap();
        assert!((f.delta.exp_m1() - 2.0 / 29.0).abs() < 0.003, "{}", f.delta);
        assert_eq!((f.runs, f.n), ((10, 3), (290, 87)));
        // Far beyond 3 %: the t of the process means, with 11 degrees of freedom.
        assert!((f.df - 11.0).abs() < 1e-9, "{}", f.df);
        assert!(f.p_greater(0.03_f64.ln_1p(), 0.0) < 1e-8);
        // `ab`'s pair values: the slow launch recurs in every head process, so it is the code's
        // and each process's mean launch is its value.
        let m = run_means(side(&bv[..87], &br[..87]), side(&cv, &cr));
        let k = m.left_out.kept_as_code.unwrap();
        assert_eq!((k.launches, k.in_processes), (3, 3));
        let ratio = m.head[&0] / m.base[&0] - 1.0;
        assert!((ratio - 2.0 / 29.0).abs() < 0.01, "{ratio}");
    }
}
