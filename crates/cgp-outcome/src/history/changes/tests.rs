//! Tests of the change-point search over results (`history::changes`).
use super::*;
use crate::outcome::results::{Row, SideSummary};
use crate::stats::rng::Rng;

/// SYNTHETIC results: one row whose candidate median is `value`.
fn results(values: &[(&str, &str, f64)], commit: usize) -> Results {
    let text = r#"{"schema_version":2,"verdict":"pass","tool_version":"0","spec_hash":"","spec_path":"",
        "source":"synthetic","synthetic":true,"fingerprint":{},"fingerprint_mismatch":null,"shard":null,
        "git_commit":null,"date":"","fail_on":"regression","multiple_testing":"","rows":[]}"#;
    let mut v: serde_json::Value = serde_json::from_str(text).unwrap();
    v["fingerprint"] = serde_json::to_value(crate::gpu::fingerprint::Fingerprint::default()).unwrap();
    let mut r: Results = serde_json::from_value(v).unwrap();
    r.git_commit = Some(format!("c{commit:03}"));
    r.date = format!("2026-01-{:02}T00:00:00Z", commit % 28 + 1);
    for (metric, direction, v) in values {
        r.rows.push(Row {
            rule: crate::outcome::results::RowRule {
                threshold: None,
                direction: Some(if *direction == "lower" {
                    crate::outcome::results::Direction::Lower
                } else {
                    crate::outcome::results::Direction::Higher
                }),
            },
            sides: crate::outcome::results::Sides::candidate(SideSummary {
                n: 1,
                runs: None,
                median: *v,
                min: *v,
                max: *v,
                cv: None,
                outliers: vec![],
                samples: vec![*v],
            }),
            ..Row::bare(
                crate::outcome::results::OwnedRowKey {
                    target: "t".into(),
                    size: "n=1".into(),
                    kernel: Some("k".into()),
                    metric: (*metric).to_owned(),
                    ..Default::default()
                },
                "ns",
                crate::outcome::results::Outcome::from(RowVerdict::Pass),
                "",
            )
        });
    }
    r
}

fn history(step_at: usize, step: f64, cv: f64, seed: u64, n: usize) -> Vec<(PathBuf, Results)> {
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|i| {
            let level = if i >= step_at {
                1000.0 * (1.0 + step)
            } else {
                1000.0
            };
            let d = level * (cv * rng.normal()).exp();
            let t = 50.0 / (cv * rng.normal()).exp();
            let r = results(&[("dur", "lower", d), ("tput", "higher", t)], i);
            (PathBuf::from(format!("r{i}.json")), r)
        })
        .collect()
}

/// SYNTHETIC: of `runs` histories of `n` results (CV `cv`) with a step of `step` in the
/// middle, the share in which `changes` reports a shift of the duration within 2 results of
/// the step (found AND at least `--min-change`).
fn reported_rate(step: f64, cv: f64, n: usize, runs: u64) -> f64 {
    let hits = (0..runs)
        .filter(|seed| {
            let rep = find_changes(
                &history(n / 2, step, cv, 7000 + seed, n),
                &ChangesOptions::default(),
            )
            .unwrap();
            rep.rows
                .iter()
                .any(|r| r.metric == "dur" && r.index.abs_diff(n / 2) <= 2)
        })
        .count();
    hits as f64 / runs as f64
}

#[test]
fn the_stated_reach_is_reported_in_most_histories_and_the_floor_is_not() {
    // Issue 43: a quiet series said "+1.00 %", the --min-change floor, while a step of
    // exactly 1 % is estimated below the floor about half the time and then not reported.
    // SYNTHETIC: 40 series, 40 results, CV 0.3 %.
    let (cv, n) = (0.003, 40);
    let rep = find_changes(&history(n / 2, 0.0, cv, 1, n), &ChangesOptions::default()).unwrap();
    let stated = rep
        .reach
        .series
        .iter()
        .find(|s| s.metric == "dur")
        .and_then(|s| s.smallest)
        .unwrap();
    assert!(stated > 0.01, "stated {stated}");
    let at_floor = reported_rate(0.01, cv, n, 40);
    let at_stated = reported_rate(stated, cv, n, 40);
    assert!(at_floor < 0.7, "a 1% step reported in {at_floor}");
    assert!(at_stated >= 0.7, "the stated {stated} reported in {at_stated}");
}

#[test]
fn two_percent_step_at_15_is_found_with_its_size() {
    // SYNTHETIC: 30 results, CV 1%, the duration +2% from position 15 (under a 3% gate
    // threshold between neighbours), a second metric flat.
    let inputs = history(15, 0.02, 0.01, 100, 30);
    let rep = find_changes(&inputs, &ChangesOptions::default()).unwrap();
    assert_eq!(rep.series_tested, 2);
    assert!((rep.level - 0.005).abs() < 1e-12);
    assert_eq!(rep.rows.len(), 1, "{:?}", rep.rows);
    let r = &rep.rows[0];
    assert_eq!(r.metric, "dur");
    assert!(r.index.abs_diff(15) <= 1, "index {}", r.index);
    let ch = r.change.unwrap();
    assert!((0.01..0.03).contains(&ch), "change {ch}");
    assert!(r.worse);
    assert_eq!(r.commits.at.as_deref(), Some(format!("c{:03}", r.index).as_str()));
    assert_eq!(
        r.commits.before.as_deref(),
        Some(format!("c{:03}", r.index - 1).as_str())
    );
    assert_eq!(rep.series.len(), 1);
    assert_eq!(rep.series[0].points.len(), 30);
    assert_eq!(
        changes_exit_code(&rep, crate::outcome::results::FailOn::Regression).code(),
        1
    );
}

#[test]
fn four_and_four_results_are_too_short_and_say_how_many_are_needed() {
    // SYNTHETIC: 4 unchanged results, then 4 of a clean +3.5% step. No permutation test of 8
    // results reaches 0.01 (2 / C(8, 4) = 0.029): the report must say so, not "no shift".
    let inputs: Vec<(PathBuf, Results)> = (0..8)
        .map(|i| {
            let v = if i >= 4 { 1035.0 } else { 1000.0 } * (1.0 + (i % 3) as f64 * 0.002);
            (PathBuf::from(format!("{i}")), results(&[("dur", "lower", v)], i))
        })
        .collect();
    let rep = find_changes(&inputs, &ChangesOptions::default()).unwrap();
    assert!(rep.rows.is_empty());
    assert_eq!(rep.reach.too_short, 1);
    let s = &rep.reach.series[0];
    assert!(s.too_short && s.smallest.is_none(), "{s:?}");
    let needed = s.needed.unwrap();
    assert!(needed > 8, "{s:?}");
    assert_eq!(rep.reach.most_needed.as_ref().unwrap().needed, Some(needed));
    // The contract (issue 44, item 7): a history too short to answer exits 0 and says so; with
    // `--fail-on inconclusive` it fails.
    use crate::outcome::results::FailOn;
    assert_eq!(changes_exit_code(&rep, FailOn::Regression).code(), 0);
    assert_eq!(changes_exit_code(&rep, FailOn::Inconclusive).code(), 1);
    // How the console says it: `report::changes` tests (the report crate sits above this one).
    // That many results of the same step do find it.
    let long: Vec<(PathBuf, Results)> = history(needed / 2, 0.035, 0.003, 8, needed)
        .into_iter()
        .map(|(p, mut r)| {
            r.rows.retain(|row| row.key.metric == "dur");
            (p, r)
        })
        .collect();
    let rep = find_changes(&long, &ChangesOptions::default()).unwrap();
    assert_eq!(rep.reach.too_short, 0);
    assert!(rep.rows.iter().any(|r| r.metric == "dur"), "{:?}", rep.rows);
}

#[test]
fn a_step_in_a_long_history_is_found_with_an_interval_around_it() {
    // SYNTHETIC: 300 results, CV 1%, +3% from 180 on; the interval (at 1 - level, given the
    // place) holds the planted step, and the stated smallest shift is below it.
    let inputs = history(180, 0.03, 0.01, 21, 300);
    let rep = find_changes(&inputs, &ChangesOptions::default()).unwrap();
    let r = rep.rows.iter().find(|r| r.metric == "dur").unwrap();
    assert!(r.index.abs_diff(180) <= 2, "{r:?}");
    let i = r.interval.unwrap();
    assert!(i.low < 0.03 && 0.03 < i.high, "{r:?}");
    assert!(i.low < r.change.unwrap() && r.change.unwrap() < i.high);
    assert!(i.high - i.low < 0.01, "{i:?}");
    assert!(i.confidence >= 1.0 - rep.level - 1e-9, "{i:?}");
    let smallest = rep.reach.smallest.unwrap();
    assert!(smallest < 0.03, "{smallest}");
    assert_eq!(rep.reach.too_short, 0);
    let json = serde_json::to_value(&rep).unwrap();
    assert!(json["rows"][0]["interval"]["low"].is_number(), "{json}");
    assert!(json["reach"]["series"][0]["needed"].is_number(), "{json}");
}

#[test]
fn flat_history_has_no_change() {
    // SYNTHETIC: 30 flat results, CV 1%, ten seeds.
    for seed in 0..10 {
        let rep = find_changes(
            &history(99, 0.0, 0.01, 7000 + seed, 30),
            &ChangesOptions::default(),
        )
        .unwrap();
        assert!(rep.rows.is_empty(), "seed {seed}: {:?}", rep.rows);
        assert_eq!(
            changes_exit_code(&rep, crate::outcome::results::FailOn::Regression).code(),
            0
        );
    }
}

#[test]
fn small_significant_shifts_are_not_reported() {
    // SYNTHETIC: a clean 0.5% step with almost no noise is significant but under 1%.
    let inputs: Vec<(PathBuf, Results)> = (0..20)
        .map(|i| {
            let v = if i >= 10 { 1005.0 } else { 1000.0 } + (i % 3) as f64 * 0.01;
            (PathBuf::from(format!("{i}")), results(&[("dur", "lower", v)], i))
        })
        .collect();
    let rep = find_changes(&inputs, &ChangesOptions::default()).unwrap();
    assert!(rep.rows.is_empty(), "{:?}", rep.rows);
    assert_eq!(rep.below_min_change, 1);
    let opts = ChangesOptions {
        min_change: 0.001,
        ..ChangesOptions::default()
    };
    let rep = find_changes(&inputs, &opts).unwrap();
    assert_eq!(rep.rows.len(), 1);
    assert_eq!(rep.rows[0].index, 10);
}

#[test]
fn improvements_are_reported_but_not_worse() {
    // SYNTHETIC: throughput up 5% at 12 (higher is better).
    let inputs: Vec<(PathBuf, Results)> = (0..24)
        .map(|i| {
            let v = if i >= 12 { 52.5 } else { 50.0 } * (1.0 + (i % 4) as f64 * 1e-3);
            (
                PathBuf::from(format!("{i}")),
                results(&[("tput", "higher", v)], i),
            )
        })
        .collect();
    let rep = find_changes(&inputs, &ChangesOptions::default()).unwrap();
    assert_eq!(rep.rows.len(), 1);
    assert!(!rep.rows[0].worse);
    assert_eq!(
        changes_exit_code(&rep, crate::outcome::results::FailOn::Regression).code(),
        0
    );
}

#[test]
fn gaps_short_series_and_bad_settings() {
    // A row missing from some files keeps the input positions of the others.
    let mut inputs = history(10, 0.05, 0.002, 3, 20);
    inputs[4].1.rows.retain(|r| r.key.metric != "dur");
    let rep = find_changes(&inputs, &ChangesOptions::default()).unwrap();
    let r = rep.rows.iter().find(|r| r.metric == "dur").unwrap();
    assert_eq!(r.index, 10);
    let plot = rep.series.iter().find(|s| s.metric == "dur").unwrap();
    assert_eq!(plot.points.len(), 19);
    assert!(plot.points.iter().all(|p| p.index != 4));
    // Too short to search.
    let rep = find_changes(&history(2, 0.5, 0.01, 1, 5), &ChangesOptions::default()).unwrap();
    assert_eq!((rep.series_tested, rep.series_skipped), (0, 2));
    assert!(rep.rows.is_empty());
    for bad in [
        ChangesOptions {
            alpha: 0.0,
            ..ChangesOptions::default()
        },
        ChangesOptions {
            min_change: f64::NAN,
            ..ChangesOptions::default()
        },
        ChangesOptions {
            min_segment: 1,
            ..ChangesOptions::default()
        },
    ] {
        assert!(find_changes(&[], &bad).is_err());
    }
}

#[test]
fn a_change_rows_direction_is_typed_and_reads_and_writes_as_before() {
    use crate::foundation::threshold::Direction;
    let text = |d: &str| {
        format!(
            r#"{{"target":"t","size":"n=1","kernel":"k","metric":"m","unit":"ns","direction":"{d}","index":3,"before":1.0,"after":2.0,"change":1.0,"p":0.001,"worse":true}}"#
        )
    };
    for (written, typed) in [
        ("-", None),
        ("lower", Some(Direction::Lower)),
        ("higher", Some(Direction::Higher)),
    ] {
        let row: ChangeRow =
            serde_json::from_str(&text(written)).unwrap_or_else(|e| panic!("{written}: {e}"));
        assert_eq!(row.direction, typed);
        let back = serde_json::to_value(&row).unwrap();
        assert_eq!(back["direction"], written);
    }
    let bad = serde_json::from_str::<ChangeRow>(&text("sideways")).unwrap_err();
    assert!(bad.to_string().contains("expected lower, higher or -"), "{bad}");
}
