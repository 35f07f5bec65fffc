//! Tests of the run-level model (`stats::nested`).
use super::*;
use crate::stats::rng::Rng;

fn gauss(rng: &mut Rng) -> f64 {
    rng.normal()
}

/// `runs` runs of `n` launches, within sd `w`, between sd `b`, level `mu` (log).
fn draw(rng: &mut Rng, runs: u32, n: usize, mu: f64, w: f64, b: f64) -> (Vec<f64>, Vec<u32>) {
    let mut v = Vec::new();
    let mut r = Vec::new();
    for run in 0..runs {
        let off = b * gauss(rng);
        for _ in 0..n {
            v.push((mu + off + w * gauss(rng)).exp() * 1000.0);
            r.push(run);
        }
    }
    (v, r)
}

#[test]
fn one_launch_per_run_is_the_pooled_two_sample_t_test() {
    // Welch/pooled t by hand (equal variances): base 1,2,3,4 -> logs; cand 2,3,4,5.
    let b = [10.0, 11.0, 12.0, 13.0];
    let c = [12.0, 13.0, 14.0, 15.0];
    let f = fit(side(&b, &[]), side(&c, &[]), true, false).unwrap();
    let lb: Vec<f64> = b.iter().map(|x: &f64| x.ln()).collect();
    let lc: Vec<f64> = c.iter().map(|x: &f64| x.ln()).collect();
    let m = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let var = |v: &[f64]| {
        let mm = m(v);
        v.iter().map(|x| (x - mm).powi(2)).sum::<f64>() / (v.len() - 1) as f64
    };
    let sp = (var(&lb) + var(&lc)) / 2.0;
    let se = (sp * 0.5).sqrt();
    assert!((f.delta - (m(&lc) - m(&lb))).abs() < 1e-12);
    assert!((f.se - se).abs() < 1e-12, "{} vs {se}", f.se);
    assert!((f.df - 6.0).abs() < 1e-9, "df {}", f.df);
    assert_eq!(f.runs, (4, 4));
    assert!(f.within_sd.is_none());
}

#[test]
fn launches_of_one_run_are_not_independent_replicates() {
    // Between-run noise 0.5 %, within 0.2 %, 30 launches: the standard error is set by the
    // runs, not by 30 x the launches.
    let mut rng = Rng::new(7);
    let (bv, br) = draw(&mut rng, 10, 30, 0.0, 0.002, 0.005);
    let (cv, cr) = draw(&mut rng, 3, 30, 0.0, 0.002, 0.005);
    let f = fit(side(&bv, &br), side(&cv, &cr), true, true).unwrap();
    let naive = 0.005_f64.hypot(0.002) * (1.0 / 300.0 + 1.0 / 90.0_f64).sqrt();
    let model = (0.005_f64.powi(2) * (0.1 + 1.0 / 3.0)).sqrt();
    assert!(f.se > 2.0 * naive, "se {} naive {naive}", f.se);
    assert!((f.se / model - 1.0).abs() < 0.6, "se {} model {model}", f.se);
    assert!(f.between_sd > 0.002 && f.between_sd < 0.01, "{}", f.between_sd);
    let w = f.within_sd.unwrap();
    assert!((w - 0.002).abs() < 0.0004, "{w}");
    assert_eq!(f.runs, (10, 3));
    // Tukey's fence leaves out the odd normal tail launch (about 0.35 % of them).
    assert!(f.n.0 >= 295 && f.n.1 >= 88, "{:?}", f.n);
}

#[test]
fn a_single_candidate_run_borrows_the_between_part_from_the_baseline() {
    let mut rng = Rng::new(11);
    let (bv, br) = draw(&mut rng, 20, 30, 0.0, 0.005, 0.002);
    let (cv, cr) = draw(&mut rng, 1, 30, 0.10, 0.005, 0.002);
    let f = fit(side(&bv, &br), side(&cv, &cr), true, true).unwrap();
    assert_eq!(f.runs, (20, 1));
    assert!((f.delta - 0.10).abs() < 0.01, "{}", f.delta);
    // A 10 % slowdown against a 3 % threshold is plain from one process.
    assert!(f.p_greater(0.03_f64.ln_1p(), 0.0) < 1e-6);
    // And no between part at all is refused: one run a side.
    let err = fit(side(&cv, &cr), side(&cv, &cr), true, true).unwrap_err();
    assert!(err.contains("at least 2 runs"), "{err}");
}

#[test]
fn a_clock_dip_inside_a_run_is_left_out_and_a_slow_run_widens_the_interval() {
    let mut rng = Rng::new(3);
    let (mut bv, br) = draw(&mut rng, 10, 30, 0.0, 0.003, 0.001);
    let (cv, cr) = draw(&mut rng, 2, 30, 0.0, 0.003, 0.001);
    bv[5] *= 1.08; // a dip in run 0
    for v in bv.iter_mut().skip(60).take(30) {
        *v *= 1.05; // run 2 ran slow throughout
    }
    let f = fit(side(&bv, &br), side(&cv, &cr), true, true).unwrap();
    assert!(f.left_out.launches.0 >= 1, "{:?}", f.left_out);
    assert!(f.delta.abs() < 0.01, "{}", f.delta);
    // Run 2 ran 5 % slow: 10 runs are too few for a fence of runs, so it widens the interval.
    assert!(f.disturbed_runs[0].is_empty(), "{:?}", f.disturbed_runs);
    assert!(f.between_sd > 0.01, "{}", f.between_sd);
    let raw = fit(side(&bv, &br), side(&cv, &cr), true, false).unwrap();
    // The dip raised the untrimmed baseline's level.
    assert!(raw.delta < f.delta, "untrimmed {} trimmed {}", raw.delta, f.delta);
    assert_eq!(raw.left_out.launches, (0, 0));
}

#[test]
fn one_disturbed_process_of_thirty_is_reported_not_used() {
    // SYNTHETIC: 30 processes of 30 launches, within 1 %, between 0.2 %; process 7 preempted
    // (+32 %). The robust fit sees the 0.2 %, not the spread one process makes.
    let mut rng = Rng::new(32);
    let (mut bv, br) = draw(&mut rng, 30, 30, 0.0, 0.01, 0.002);
    for (v, r) in bv.iter_mut().zip(&br) {
        if *r == 7 {
            *v *= 1.32;
        }
    }
    let (cv, cr) = draw(&mut rng, 2, 30, 0.0, 0.01, 0.002);
    let f = fit(side(&bv, &br), side(&cv, &cr), true, true).unwrap();
    assert_eq!(f.disturbed_runs[0].len(), 1, "{:?}", f.disturbed_runs);
    assert!(
        (f.disturbed_runs[0][0] - 0.32).abs() < 0.02,
        "{:?}",
        f.disturbed_runs
    );
    assert!(f.disturbed_runs[1].is_empty());
    assert_eq!(f.runs, (29, 2));
    assert!(f.between_sd < 0.006, "between {}", f.between_sd);
    assert!(f.delta.abs() < 0.01, "{}", f.delta);
    // Untrimmed (the old estimate): the one process is all the between-run noise there is.
    let raw = fit(side(&bv, &br), side(&cv, &cr), true, false).unwrap();
    assert!(raw.between_sd > 0.04, "raw between {}", raw.between_sd);
    // A side of fewer than 20 runs is never fenced (runs 2 to 20, the planted one among them).
    let few = fit(side(&bv[60..630], &br[60..630]), side(&cv, &cr), true, true).unwrap();
    assert_eq!(few.runs.0, 19);
    assert!(few.disturbed_runs[0].is_empty());
}

/// One side of a row: its values and the run of each.
fn side<'a>(values: &'a [f64], runs: &'a [u32]) -> Runs<'a> {
    Runs { values, runs }
}

#[test]
fn bad_input_is_a_reason_not_a_panic() {
    assert!(
        fit(
            Runs {
                values: &[1.0, -1.0],
                runs: &[]
            },
            Runs {
                values: &[1.0, 2.0],
                runs: &[]
            },
            true,
            true
        )
        .unwrap_err()
        .contains("positive")
    );
    assert!(
        fit(
            Runs {
                values: &[1.0, 2.0],
                runs: &[0]
            },
            Runs {
                values: &[1.0, 2.0],
                runs: &[]
            },
            true,
            true
        )
        .unwrap_err()
        .contains("run indices")
    );
    assert!(
        fit(
            side(&[], &[]),
            Runs {
                values: &[1.0, 2.0],
                runs: &[]
            },
            true,
            true
        )
        .is_err()
    );
    assert_eq!(count_runs(5, &[]), 5);
    assert_eq!(count_runs(4, &[3, 3, 1, 1]), 2);
}

#[test]
fn false_alarms_at_the_boundary_stay_at_the_level() {
    // SYNTHETIC: candidate exactly 3 % slower, one run of 30 launches against 10 stored
    // runs, within 1 %, between 0.3 %: the one-sided test at 5 % rejects about 5 % of rows.
    let mut rng = Rng::new(99);
    let b = 0.03_f64.ln_1p();
    let trials = 4000;
    let mut hits = 0;
    for _ in 0..trials {
        let (bv, br) = draw(&mut rng, 10, 30, 0.0, 0.01, 0.003);
        let (cv, cr) = draw(&mut rng, 1, 30, b, 0.01, 0.003);
        let f = fit(side(&bv, &br), side(&cv, &cr), true, true).unwrap();
        if f.p_greater(b, 0.0) < 0.05 {
            hits += 1;
        }
    }
    let rate = f64::from(hits) / f64::from(trials);
    assert!(rate > 0.03 && rate < 0.07, "rate {rate}");
}

#[test]
fn ab_run_means_keep_a_slowdown_of_some_launches_and_leave_out_one_preempted_launch() {
    // SYNTHETIC: 6 processes a side of 30 launches, within 0.3 %.
    let mut rng = Rng::new(43);
    let (bv, br) = draw(&mut rng, 6, 30, 0.0, 0.003, 0.001);
    let (mut hv, hr) = draw(&mut rng, 6, 30, 0.0, 0.003, 0.001);
    // One launch of head process 2 at 2x: the machine's (the base has as few), left out, named.
    hv[2 * 30 + 7] *= 2.0;
    let m = run_means(side(&bv, &br), side(&hv, &hr));
    assert_eq!(m.left_out.launches, (0, 1));
    assert!(m.left_out.kept_as_code.is_none());
    assert_eq!(m.left_out.named[0].run, 2);
    assert!((m.head[&2] / m.base[&2] - 1.0).abs() < 0.01, "{:?}", m.head);
    // A quarter of every head process's launches at 2x: the code's, kept, and every pair moves
    // (the median of a process's launches did not move at all).
    for (i, v) in hv.iter_mut().enumerate() {
        if i % 4 == 1 {
            *v *= 2.0;
        }
    }
    let m = run_means(side(&bv, &br), side(&hv, &hr));
    let kept = m.left_out.kept_as_code.expect("kept as the code's");
    assert!(kept.launches >= 6 * 7 && kept.p < 1e-6, "{kept:?}");
    assert_eq!(m.left_out.launches, (0, 0));
    for r in 0..6 {
        let ratio = m.head[&r] / m.base[&r];
        assert!(ratio > 1.15, "process {r}: {ratio}");
    }
}
