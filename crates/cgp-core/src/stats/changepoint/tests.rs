use super::null::upper_bound;
use super::*;

fn settings(level: f64, seed: u64) -> Settings {
    Settings {
        level,
        max_permutations: Settings::permutations_for(level),
        stop_after_exceedances: 10,
        min_segment: 3,
        seed,
    }
}

/// SYNTHETIC: log-normal noise with the given CV around `level[i]`.
fn series(levels: &[f64], cv: f64, seed: u64) -> Vec<f64> {
    let mut r = Rng::new(seed);
    levels.iter().map(|l| l * (cv * r.normal()).exp()).collect()
}

/// SYNTHETIC: `n` points, CV 1%, `+step` from the middle on.
fn step_series(n: usize, step: f64, seed: u64) -> Vec<f64> {
    let levels: Vec<f64> = (0..n)
        .map(|i| if i < n / 2 { 1000.0 } else { 1000.0 * (1.0 + step) })
        .collect();
    series(&levels, 0.01, seed)
}

/// The statistic by its definition, O(n^3), to check the incremental sums.
fn q_naive(r: &[u32], tau: usize) -> f64 {
    let n = r.len();
    let (a, b) = (tau as f64, (n - tau) as f64);
    let (mut between, mut left, mut right) = (0.0, 0.0, 0.0);
    for i in 0..n {
        for j in (i + 1)..n {
            let d = f64::from(r[i].abs_diff(r[j]));
            match (i < tau, j < tau) {
                (true, true) => left += d,
                (false, false) => right += d,
                _ => between += d,
            }
        }
    }
    let e = 2.0 * between / (a * b) - left / (a * (a - 1.0) / 2.0) - right / (b * (b - 1.0) / 2.0);
    a * b / n as f64 * e
}

/// The root test of `x` alone: `(p, significant, went to the shared null)`.
fn root(x: &[f64], s: &Settings, nulls: &mut NullCache, own_limit: usize) -> (f64, bool, bool) {
    // No split with a positive statistic: not significant.
    let Some(cp) = test_segment(x, s, &mut Rng::new(s.seed), nulls, own_limit) else {
        return (1.0, false, false);
    };
    let shared = s.max_permutations > own_limit && cp.permutations == 4 * s.max_permutations;
    (cp.p, cp.p <= s.level, shared)
}

#[test]
fn the_scan_matches_the_definition_on_shuffled_ranks() {
    // Every split of shuffled orders against the O(n^3) definition.
    let mut rng = Rng::new(11);
    for n in [6usize, 9, 17, 40] {
        let x = series(&vec![100.0; n], 0.05, n as u64);
        let mut order = ranks(&x, &mut rng).unwrap();
        let mut scan = Scan::new(n);
        for round in 0..6 {
            if round > 0 {
                shuffle(&mut order, &mut rng);
            }
            let (tau, q) = scan.best(&order, 3).unwrap();
            let naive = (3..=n - 3)
                .map(|t| (t, q_naive(&order, t)))
                .fold((0, f64::NEG_INFINITY), |a, b| if b.1 > a.1 { b } else { a });
            assert!(
                (q - naive.1).abs() < 1e-9 * naive.1.abs().max(1.0),
                "n {n}: {q} vs {naive:?}"
            );
            assert!(
                tau == naive.0 || (q_naive(&order, tau) - naive.1).abs() < 1e-9,
                "n {n}: tau {tau} vs {naive:?}"
            );
        }
    }
    // The sum over pairs the scan starts from, C(n + 1, 3), and too short a segment.
    assert!(scan_of(&[2, 1, 3, 4]).is_some() && Scan::new(5).best(&[1, 2, 3, 4, 5], 3).is_none());
}

fn scan_of(r: &[u32]) -> Option<(usize, f64)> {
    let (tau, q) = Scan::new(r.len()).best(r, 2)?;
    assert!((q - q_naive(r, tau)).abs() < 1e-12, "{q} vs {}", q_naive(r, tau));
    Some((tau, q))
}

#[test]
fn ties_are_broken_uniformly_at_random() {
    // Ranks 1..=6; the tied points take their group's ranks, each of them about equally often.
    let x = [1.0, 2.0, 2.0, 2.0, -0.0, 0.0];
    let mut rng = Rng::new(3);
    let mut seen = [[0usize; 7]; 6];
    for _ in 0..3000 {
        let r = ranks(&x, &mut rng).unwrap();
        let mut sorted = r.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, vec![1, 2, 3, 4, 5, 6]);
        assert_eq!(r[0], 3, "the 1.0 lies between the zeros and the 2.0s");
        for (i, &k) in r.iter().enumerate() {
            seen[i][k as usize] += 1;
        }
    }
    // -0.0 and 0.0 are one value: each takes rank 1 about half the time.
    assert!((1350..1650).contains(&seen[4][1]), "{:?}", seen[4]);
    // Each 2.0 takes each of ranks 4, 5, 6 about a third of the time.
    for (i, point) in seen.iter().enumerate().take(4).skip(1) {
        for k in 4..=6 {
            assert!((850..1150).contains(&point[k]), "point {i}: {point:?}");
        }
    }
    assert_eq!(ranks(&[7.0; 5], &mut rng), None);
    assert_eq!(ranks(&[], &mut rng), None);
}

#[test]
fn early_stopping_keeps_the_full_runs_decision() {
    // SYNTHETIC, seeded: 60 series of 24 with steps from 0 to 2.5% in 1% noise (the borderline
    // region), each tested with Besag-Clifford stopping and with every one of the shuffles.
    let mut disagree = Vec::new();
    let mut significant = 0;
    let mut nulls = NullCache::new(0);
    for case in 0..60u64 {
        let step = (case % 6) as f64 * 0.005;
        let x = step_series(24, step, 300 + case);
        let early = settings(0.01, case);
        let full = Settings {
            stop_after_exceedances: usize::MAX,
            ..early
        };
        let a = test_segment(&x, &early, &mut Rng::new(case), &mut nulls, OWN_SHUFFLES);
        let b = test_segment(&x, &full, &mut Rng::new(case), &mut nulls, OWN_SHUFFLES);
        // The same ranks and statistic: no split (a statistic not above 0) for both or neither.
        let (Some(a), Some(b)) = (a, b) else {
            assert_eq!(a, b);
            continue;
        };
        assert_eq!(b.permutations, full.max_permutations);
        assert!(a.permutations <= b.permutations);
        significant += usize::from(b.p <= 0.01);
        if (a.p <= 0.01) != (b.p <= 0.01) {
            disagree.push((case, a.p, b.p));
        }
    }
    assert!(disagree.is_empty(), "{disagree:?}");
    // Both outcomes occur, so the comparison is not vacuous; no shared null was needed.
    assert!((10..50).contains(&significant), "{significant} of 60 significant");
    assert!(nulls.is_empty());
}

#[test]
fn the_stopping_counts_are_decisive_or_cost_little_power() {
    assert_eq!(decisive_exceedances(0.01, 499), 6);
    assert_eq!(decisive_exceedances(5.9 / 5001.0, 5000), 6);
    assert_eq!(decisive_exceedances(0.0, 10), 1);
    // h / L and (h + 1) / (max + 1) are both above the level for any L <= max.
    for (level, max) in [(0.01, 499usize), (0.001, 5000), (5.9 / 5001.0, 5000), (0.3, 7)] {
        let h = decisive_exceedances(level, max);
        assert!(h as f64 / max as f64 > level && (h + 1) as f64 / (max + 1) as f64 > level);
    }
    // Before the shared null: the smallest count that the own shuffles reach at most 1 time in
    // 1,000 at the level (Poisson tails), never above the settings' count.
    let tail = |mu: f64, k: usize| 1.0 - (0..k).map(|i| poisson_pmf(i, mu)).sum::<f64>();
    for (level, h) in [(2e-6, 10usize), (2e-5, 10), (4e-4, 10), (9e-4, 10), (1e-3, 6)] {
        let k = own_stop(level, OWN_SHUFFLES, h);
        let mu = level * OWN_SHUFFLES as f64;
        assert!(k <= h && (k == h || tail(mu, k) <= 1e-3), "{level}: {k}");
        assert!(k == 1 || tail(mu, k - 1) > 1e-3, "{level}: {k}");
    }
    assert_eq!(own_stop(2e-6, OWN_SHUFFLES, 10), 2);
    assert_eq!(own_stop(0.0, OWN_SHUFFLES, 10), 10);
}

fn poisson_pmf(k: usize, mu: f64) -> f64 {
    (0..k).fold((-mu).exp(), |t, i| t * mu / (i + 1) as f64)
}

#[test]
fn the_shared_nulls_bound_is_the_poisson_upper_bound() {
    // c = 0: -ln(0.05) / draws.
    assert!((upper_bound(0, 1000) - 0.05_f64.ln().abs() / 1000.0).abs() < 1e-9);
    let mut last = 0.0;
    for c in [0usize, 1, 5, 12, 13, 100] {
        let p = upper_bound(c, 10_000);
        // P(Poisson(p draws) <= c) = 0.05, and p is above the plain estimate c / draws.
        let cdf: f64 = (0..=c).map(|i| poisson_pmf(i, p * 10_000.0)).sum();
        assert!(
            (cdf - 0.05).abs() < 1e-6 && p > c as f64 / 10_000.0 && p > last,
            "{c}: {p} {cdf}"
        );
        last = p;
    }
    // At 4 L draws (20 expected at the level), 12 exceedances pass and 13 do not.
    let level = 0.001;
    assert!(upper_bound(12, 20_000) <= level && upper_bound(13, 20_000) > level);
    assert_eq!(upper_bound(5, 1).to_bits(), 1.0_f64.to_bits());
}

#[test]
fn the_shared_null_gives_the_own_permutation_p_value() {
    // SYNTHETIC: segments of 30 with steps of 0 to 1.8% in 1% noise (p-values from about 0.001 to
    // 0.5). The p-value of each from 20,000 of its own shuffles and from the shared null's draws
    // agree within their Monte Carlo error: the shared null is the null of every segment of its
    // length. A null of the values (not ranks), of another length or of another `min_segment`
    // would not be.
    let own = Settings {
        max_permutations: 20_000,
        stop_after_exceedances: usize::MAX,
        ..settings(0.05, 0)
    };
    let mut nulls = NullCache::new(7);
    let mut compared = 0;
    for case in 0..10u64 {
        let x = step_series(30, case as f64 * 0.002, 40 + case);
        let s = Settings { seed: case, ..own };
        let mine = test_segment(&x, &s, &mut Rng::new(case), &mut nulls, usize::MAX).unwrap();
        let r = ranks(&x, &mut Rng::new(case)).unwrap();
        let q = Scan::new(30).best(&r, 3).unwrap().1;
        assert_eq!(
            q.to_bits(),
            mine.q.to_bits(),
            "the same ties' order, the same statistic"
        );
        let tail = nulls.tail(30, 3, 20_000, 1.0);
        let shared = (tail.count_at_least(at_least(q)) + 1) as f64 / (tail.draws() + 1) as f64;
        let se = (shared * (1.0 - shared) * (1.0 / 20_000.0 + 1.0 / 80_000.0)).sqrt();
        assert!(
            (mine.p - shared).abs() <= 4.0 * se + 1e-4,
            "case {case}: {} vs {shared}",
            mine.p
        );
        compared += usize::from(mine.p < 0.2);
        // The wrong nulls: min_segment 9 (fewer splits: a smaller largest Q) and 20 points.
        for (n, m) in [(30usize, 9usize), (20, 3)] {
            let wrong = nulls.tail(n, m, 20_000, 1.0);
            let p = (wrong.count_at_least(at_least(q)) + 1) as f64 / 80_001.0;
            if mine.p > 0.01 && mine.p < 0.2 {
                assert!(
                    (mine.p - p).abs() > 4.0 * se,
                    "case {case} ({n}, {m}): {} vs {p}",
                    mine.p
                );
            }
        }
    }
    assert!(compared >= 5, "{compared} of 10 below 0.2");
    assert_eq!(nulls.len(), 3);
}

#[test]
fn the_shared_null_keeps_the_level_on_flat_series_with_and_without_ties() {
    // SYNTHETIC: 1,500 flat series of 20 at level 0.02, their own shuffles cut at 40 so that
    // every undecided test goes to the shared null (250 shuffles -> 1,000 draws): the share of
    // significant root tests (= any change point) stays at or below the level (expected 30 at
    // the level; more than 46 has probability under 0.005), with and without ties (values
    // rounded to 3 levels).
    for tied in [false, true] {
        let mut nulls = NullCache::new(1);
        let (mut significant, mut shared) = (0, 0);
        for case in 0..1500u64 {
            let mut x = series(&[1000.0; 20], 0.01, 7000 + case);
            if tied {
                x.iter_mut().for_each(|v| *v = (*v / 10.0).round());
            }
            let s = settings(0.02, case);
            let (_, sig, via) = root(&x, &s, &mut nulls, 40);
            significant += usize::from(sig);
            shared += usize::from(via);
        }
        assert!(
            significant <= 46,
            "tied {tied}: {significant} of 1500 flat series split"
        );
        assert!(shared >= 30, "tied {tied}: only {shared} went to the shared null");
        assert_eq!(nulls.len(), 1);
    }
}

#[test]
fn the_shared_null_keeps_the_power() {
    // SYNTHETIC: 100 series of 24 with a 1.5% step in 1% noise at level 0.02: significant with
    // the shared null (own shuffles cut at 40) about as often as with the whole own test.
    let mut nulls = NullCache::new(2);
    let (mut whole, mut two_steps, mut via) = (0, 0, 0);
    for case in 0..100u64 {
        let x = step_series(24, 0.015, 600 + case);
        let s = settings(0.02, case);
        whole += usize::from(root(&x, &s, &mut nulls, usize::MAX).1);
        let (_, sig, shared) = root(&x, &s, &mut nulls, 40);
        two_steps += usize::from(sig);
        via += usize::from(shared);
    }
    assert!(
        (30..95).contains(&whole),
        "{whole}: the comparison must not be vacuous"
    );
    assert!(two_steps + 8 >= whole, "shared {two_steps} vs own {whole}");
    assert!(via >= 30, "{via}");
}

#[test]
fn a_shared_null_is_drawn_once_per_length_and_changes_no_answer() {
    // SYNTHETIC: at level 2e-4 (25,000 shuffles: more than a test's own) a clear step goes to the
    // shared null of its length (100,000 draws), drawn once for all series of 30; the answers
    // with a cache that already holds it are those with a fresh one.
    let s = settings(2e-4, 5);
    assert!(s.max_permutations > OWN_SHUFFLES);
    let mut warm = NullCache::new(9);
    let mut found = Vec::new();
    for case in 0..4u64 {
        let x = step_series(30, 0.05, 80 + case);
        let s = Settings { seed: case, ..s };
        let cps = e_divisive_shared(&x, &s, &mut warm);
        assert!(
            cps.iter().any(|c| c.index == 15 && c.permutations == 100_000),
            "{cps:?}"
        );
        assert_eq!(cps, e_divisive_shared(&x, &s, &mut NullCache::new(9)));
        found.push(cps);
    }
    assert_eq!(warm.len(), 1);
    // A step found at 15 leaves sides of 15: flat, they stop on their own shuffles.
    assert!(found.iter().all(|c| c.len() == 1), "{found:?}");
}

#[test]
fn a_perfect_step_reaches_the_permutation_floor_of_change_reach() {
    // The smallest p-value of n results (`change_reach::permutation_floor`): a perfect step's
    // own permutation p-value from 60,000 shuffles is that floor, within 4 standard errors; for
    // odd n both middle splits score the same on ranks, twice the even formula's 2 / C(n, k).
    for (n, floor) in [(11usize, 4.0 / 462.0_f64), (12, 2.0 / 924.0), (13, 4.0 / 1716.0)] {
        let x: Vec<f64> = (0..n)
            .map(|i| if i < n / 2 { 10.0 } else { 12.0 } + i as f64 * 1e-3)
            .collect();
        let s = Settings {
            max_permutations: 60_000,
            stop_after_exceedances: usize::MAX,
            ..settings(0.05, n as u64)
        };
        let cp = test_segment(&x, &s, &mut Rng::new(1), &mut NullCache::new(0), usize::MAX).unwrap();
        let se = (floor * (1.0 - floor) / 60_000.0).sqrt();
        assert!(
            (cp.p - floor).abs() < 4.0 * se + 2e-5,
            "n {n}: p {} vs floor {floor}",
            cp.p
        );
        let reach = crate::stats::change_reach::permutation_floor(n, 3);
        assert!((reach - floor).abs() < 1e-12, "n {n}: {reach}");
    }
}

#[test]
fn a_clean_step_is_found_where_it_is() {
    // Ties throughout: each level's ties take its ranks in a random order.
    let mut x = vec![10.0; 8];
    x.extend([12.0; 8]);
    let cps = e_divisive(&x, &settings(0.01, 1));
    assert_eq!(cps.len(), 1, "{cps:?}");
    assert_eq!(cps[0].index, 8);
    assert!(cps[0].p <= 0.01);
}

#[test]
fn two_percent_step_in_one_percent_noise_is_found_at_15() {
    // SYNTHETIC: 30 points, CV 1%, +2% from position 15 on, level 0.01. One series (seed
    // 100) as the issue states it, then the rate over 100 seeds: a 2-sigma step cannot always
    // be placed within one point (measured on ranks: 79 of these 100 at 15 +- 1; on the values
    // before: 82% of 300 seeds).
    let mut levels = vec![1000.0; 15];
    levels.extend([1020.0; 15]);
    let x = series(&levels, 0.01, 100);
    let cps = e_divisive(&x, &settings(0.01, 0));
    assert!(cps.iter().any(|c| c.index.abs_diff(15) <= 1), "{cps:?}");
    let mut hits = 0;
    for seed in 0..100 {
        let x = series(&levels, 0.01, 1000 + seed);
        let cps = e_divisive(&x, &settings(0.01, seed));
        hits += usize::from(cps.iter().any(|c| c.index.abs_diff(15) <= 1));
    }
    assert!(hits >= 72, "found at 15 +- 1 in {hits} of 100 series");
}

#[test]
fn flat_series_rarely_split() {
    // SYNTHETIC: 200 flat series of 30, CV 1%, tested at level 0.01 each: about 2 expected by
    // chance; more than 8 (binomial tail < 1e-3) means the test is miscalibrated.
    let mut false_splits = 0;
    for seed in 0..200 {
        let x = series(&[1000.0; 30], 0.01, 5000 + seed);
        false_splits += usize::from(!e_divisive(&x, &settings(0.01, seed)).is_empty());
    }
    assert!(false_splits <= 8, "{false_splits} of 200 flat series split");
}

#[test]
fn degenerate_inputs() {
    let s = settings(0.05, 0);
    assert!(e_divisive(&[], &s).is_empty());
    assert!(e_divisive(&[1.0, 2.0, 3.0], &s).is_empty());
    assert!(e_divisive(&[5.0; 40], &s).is_empty());
    assert!(e_divisive(&[1.0, f64::NAN, 2.0, 3.0, 4.0, 5.0, 6.0], &s).is_empty());
    assert_eq!(Settings::permutations_for(0.05), 199);
    assert_eq!(Settings::permutations_for(1e-4), 50_000);
    assert_eq!(Settings::permutations_for(0.0), 199);
}

#[test]
fn same_seed_same_answer() {
    let mut levels = vec![100.0; 12];
    levels.extend([103.0; 12]);
    let x = series(&levels, 0.01, 9);
    assert_eq!(
        e_divisive(&x, &settings(0.01, 4)),
        e_divisive(&x, &settings(0.01, 4))
    );
}

/// SYNTHETIC power and size of the change-point search, the figures of docs/statistics.md 6.8.
/// Not run by `cargo test`; run them with
///
/// ```text
/// cargo test -p cgp-core --release --lib -- --ignored --nocapture --exact \
///     stats::changepoint::tests::study::study_size
/// ```
///
/// (and `study_power`, `study_power_5000_series`, `study_reach`, `study_scan_speed`).
///
/// The studies use only `Settings`, `ChangePoint` and a search function, so the same code measures
/// the search before a change (with `e_divisive`) and after it.
mod study {
    use std::time::Instant;

    use statrs::distribution::{Beta, ContinuousCDF};

    use super::super::{ChangePoint, NullCache, Settings, e_divisive_shared};
    use crate::stats::change_reach::smallest_shift;
    use crate::stats::rng::{Rng, seed_for};

    type Search<'a> = dyn FnMut(&[f64], &Settings) -> Vec<ChangePoint> + 'a;

    fn settings(level: f64, seed: u64) -> Settings {
        Settings {
            level,
            max_permutations: Settings::permutations_for(level),
            stop_after_exceedances: 10,
            min_segment: 3,
            seed,
        }
    }

    /// SYNTHETIC: `n` points, log-normal noise of CV 1%, `+step` from the middle on.
    fn step_series(n: usize, step: f64, seed: u64) -> Vec<f64> {
        let mut r = Rng::new(seed);
        (0..n)
            .map(|i| if i < n / 2 { 1000.0 } else { 1000.0 * (1.0 + step) } * (0.01 * r.normal()).exp())
            .collect()
    }

    /// Found: a change point within `max(2, n / 20)` of the step (as `change_reach`'s check).
    fn found(cps: &[ChangePoint], n: usize) -> bool {
        cps.iter().any(|c| c.index.abs_diff(n / 2) <= (n / 20).max(2))
    }

    /// The 95 % Clopper-Pearson interval of `k` of `n`, in percent.
    fn interval(k: usize, n: usize) -> (f64, f64) {
        let q = |a: f64, b: f64, p: f64| Beta::new(a, b).map_or(f64::NAN, |d| d.inverse_cdf(p));
        let lo = if k == 0 {
            0.0
        } else {
            q(k as f64, (n - k + 1) as f64, 0.025)
        };
        let hi = if k == n {
            1.0
        } else {
            q((k + 1) as f64, (n - k) as f64, 0.975)
        };
        (100.0 * lo, 100.0 * hi)
    }

    /// Steps of 1, 2 and 3 % at n = 40, 100, 200, at the levels of one series and of 500 and 5,000
    /// series at alpha 0.01 (the 100,000- and 1,000,000-result histories of docs/scale.md).
    fn power(search: &mut Search, runs: &[(f64, usize)]) {
        println!("| level | n | step | found (+-max(2, n/20)) | any change point | CPU s |");
        println!("|---|---|---|---|---|---|");
        for &(level, r) in runs {
            for n in [40usize, 100, 200] {
                for step in [0.01, 0.02, 0.03] {
                    let t = Instant::now();
                    let (mut hit, mut any) = (0, 0);
                    for i in 0..r as u64 {
                        let x = step_series(n, step, seed_for(i, &format!("power/{n}/{step}")));
                        let cps = search(&x, &settings(level, i));
                        hit += usize::from(found(&cps, n));
                        any += usize::from(!cps.is_empty());
                    }
                    println!(
                        "| {level:e} | {n} | {:.0}% | {hit}/{r} | {any}/{r} | {:.1} |",
                        step * 100.0,
                        t.elapsed().as_secs_f64()
                    );
                }
            }
        }
    }

    /// Flat series: the share with any change point, against the level.
    fn size(search: &mut Search, cells: &[(usize, f64, usize)]) {
        println!("| n | level | series | with a change point | share | 95% interval | CPU s |");
        println!("|---|---|---|---|---|---|---|");
        for &(n, level, r) in cells {
            let t = Instant::now();
            let mut split = 0;
            for i in 0..r as u64 {
                let x = step_series(n, 0.0, seed_for(i, &format!("size/{n}/{level}")));
                split += usize::from(!search(&x, &settings(level, i)).is_empty());
            }
            let (lo, hi) = interval(split, r);
            println!(
                "| {n} | {level:e} | {r} | {split} | {:.4}% | [{lo:.4}%, {hi:.4}%] | {:.1} |",
                100.0 * split as f64 / r as f64,
                t.elapsed().as_secs_f64()
            );
        }
    }

    /// `change_reach`'s stated smallest shift (CV 1%, level 0.01) against the real search: found in
    /// about 80 % of series at it, as `SEARCH_COST` says.
    fn reach(search: &mut Search, runs: usize) {
        println!("| n | stated shift | found at it | found at 1/1.25 of it |");
        println!("|---|---|---|---|");
        for n in [30usize, 150, 400] {
            let Some(d) = smallest_shift(n, 0.01, 0.01, 3) else {
                continue;
            };
            let mut rates = [0usize; 2];
            for (k, shift) in [d, (d.ln_1p() / 1.25).exp_m1()].into_iter().enumerate() {
                for i in 0..runs as u64 {
                    let x = step_series(n, shift, seed_for(i, &format!("reach/{n}/{k}")));
                    rates[k] += usize::from(found(&search(&x, &settings(0.01, i)), n));
                }
            }
            println!(
                "| {n} | {:+.2}% | {}/{runs} | {}/{runs} |",
                d * 100.0,
                rates[0],
                rates[1]
            );
        }
    }

    fn shared() -> impl FnMut(&[f64], &Settings) -> Vec<ChangePoint> {
        let mut nulls = NullCache::new(0);
        move |x: &[f64], s: &Settings| e_divisive_shared(x, s, &mut nulls)
    }

    #[test]
    #[ignore = "a study: minutes of CPU"]
    fn study_power() {
        power(&mut shared(), &[(0.01, 200), (2e-5, 100)]);
    }

    #[test]
    #[ignore = "a study: minutes of CPU (hours before the shared null)"]
    fn study_power_5000_series() {
        power(&mut shared(), &[(2e-6, 30)]);
    }

    #[test]
    #[ignore = "a study: minutes of CPU"]
    fn study_size() {
        size(
            &mut shared(),
            &[
                (40, 0.01, 20_000),
                (40, 1e-3, 200_000),
                (100, 1e-3, 50_000),
                (200, 1e-3, 20_000),
                (40, 1e-4, 400_000),
                (200, 1e-4, 100_000),
            ],
        );
    }

    #[test]
    #[ignore = "a study: seconds of CPU"]
    fn study_scan_speed() {
        // One scan (a shuffle and its largest Q), what a shared null of D draws costs D times.
        println!("| n | scans | microseconds per scan |");
        println!("|---|---|---|");
        for n in [40usize, 100, 200] {
            let mut order: Vec<u32> = (1..=n as u32).collect();
            let (mut scan, mut rng) = (super::super::Scan::new(n), Rng::new(1));
            let (t, scans) = (Instant::now(), 1_000_000);
            let mut sum = 0.0;
            for _ in 0..scans {
                super::super::shuffle(&mut order, &mut rng);
                sum += scan.best(&order, 3).map_or(0.0, |(_, q)| q);
            }
            let us = t.elapsed().as_secs_f64() * 1e6 / scans as f64;
            println!("| {n} | {scans} | {us:.2} |");
            assert!(sum.is_finite());
        }
    }

    #[test]
    #[ignore = "a study: minutes of CPU"]
    fn study_reach() {
        reach(&mut shared(), 100);
    }
}
