//! Holm-Bonferroni adjustment: controls the chance of any false alarm in the whole run (the
//! family-wise error rate) at `alpha`, for any dependence between the rows, and is uniformly more
//! powerful than plain Bonferroni.

/// Holm-adjusted p-values, in the input order. `None` entries (rows without a test) are skipped
/// and stay `None`; the family size is the number of `Some` entries. NaN counts as 1.
pub fn holm(p: &[Option<f64>]) -> Vec<Option<f64>> {
    let mut tested: Vec<(usize, f64)> = p
        .iter()
        .enumerate()
        .filter_map(|(i, v)| v.map(|x| (i, if x.is_nan() { 1.0 } else { x.clamp(0.0, 1.0) })))
        .collect();
    // Stable sort keeps equal p-values in input order, so ties adjust deterministically.
    tested.sort_by(|a, b| a.1.total_cmp(&b.1));
    let m = tested.len();
    let mut out = vec![None; p.len()];
    let mut running = 0.0_f64;
    for (rank, (idx, pv)) in tested.into_iter().enumerate() {
        let adj = ((m - rank) as f64 * pv).min(1.0);
        running = running.max(adj);
        out[idx] = Some(running);
    }
    out
}

/// The one-sided level each tested row was judged at in Holm's step-down at `alpha`: the row of
/// rank `k` (1 = smallest p) among `m` is tested at `alpha / (m - k + 1)` when every smaller p was
/// rejected; once a step is not rejected the procedure stops, and every later row is shown at that
/// step's level (it cannot be rejected there either: its p is no smaller). So a row is rejected
/// iff its p is at most its level, iff its Holm-adjusted p is at most `alpha`: its interval at
/// that level is the one its decision used. `None` entries stay `None`; NaN counts as 1.
pub fn holm_levels(p: &[Option<f64>], alpha: f64) -> Vec<Option<f64>> {
    let mut tested: Vec<(usize, f64)> = p
        .iter()
        .enumerate()
        .filter_map(|(i, v)| v.map(|x| (i, if x.is_nan() { 1.0 } else { x.clamp(0.0, 1.0) })))
        .collect();
    tested.sort_by(|a, b| a.1.total_cmp(&b.1));
    let m = tested.len();
    let mut out = vec![None; p.len()];
    let mut stopped: Option<f64> = None;
    for (rank, (idx, pv)) in tested.into_iter().enumerate() {
        let level = stopped.unwrap_or(alpha / (m - rank) as f64);
        if stopped.is_none() && pv > level {
            stopped = Some(level);
        }
        out[idx] = Some(level);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_statsmodels_holm() {
        // statsmodels.stats.multitest.multipletests([0.01, 0.04, 0.03, 0.005], method="holm")
        // -> [0.03, 0.06, 0.06, 0.02]
        let adj = holm(&[Some(0.01), Some(0.04), Some(0.03), Some(0.005)]);
        let want = [0.03, 0.06, 0.06, 0.02];
        for (a, w) in adj.iter().zip(want) {
            assert!((a.unwrap() - w).abs() < 1e-12, "{adj:?}");
        }
    }

    #[test]
    fn untested_rows_do_not_count() {
        let adj = holm(&[None, Some(0.01), None, Some(0.02)]);
        assert_eq!(adj[0], None);
        assert_eq!(adj[2], None);
        assert!((adj[1].unwrap() - 0.02).abs() < 1e-12);
        assert!((adj[3].unwrap() - 0.02).abs() < 1e-12);
    }

    #[test]
    fn a_row_is_rejected_iff_its_p_is_within_its_level() {
        let mut rng = crate::stats::rng::Rng::new(4);
        for _ in 0..500 {
            let p: Vec<Option<f64>> = (0..7)
                .map(|_| (rng.next_f64() > 0.1).then(|| rng.next_f64().powi(4)))
                .collect();
            let adj = holm(&p);
            let lv = holm_levels(&p, 0.05);
            for ((pv, a), l) in p.iter().zip(&adj).zip(&lv) {
                match (pv, a, l) {
                    (Some(pv), Some(a), Some(l)) => assert_eq!(*a <= 0.05, *pv <= *l, "{p:?}"),
                    (None, None, None) => {}
                    other => panic!("{other:?}"),
                }
            }
        }
    }

    #[test]
    fn adjusted_values_are_capped_and_monotone() {
        let adj = holm(&[Some(0.9), Some(0.8), Some(f64::NAN)]);
        assert!(adj.iter().all(|a| a.unwrap() <= 1.0));
        assert_eq!(adj[2], Some(1.0));
        assert!(holm(&[]).is_empty());
    }
}
