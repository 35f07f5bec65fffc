use super::*;
use crate::history::{ChangesOptions, find_changes};
use crate::outcome::results::{Direction, Estimate, Row, RowRule, RowThreshold, Shift, SideSummary, Sides};

/// SYNTHETIC results of one run: rows `(gpu, kernel, baseline median, change, ci)`.
fn results(rows: &[(&str, &str, f64, f64, [f64; 2])], commit: usize) -> Results {
    let text = r#"{"schema_version":2,"verdict":"pass","tool_version":"0","spec_hash":"","spec_path":"",
        "source":"synthetic","synthetic":true,"fingerprint":{},"fingerprint_mismatch":null,"shard":null,
        "git_commit":null,"date":"","fail_on":"regression","multiple_testing":"","rows":[]}"#;
    let mut v: serde_json::Value = serde_json::from_str(text).unwrap();
    v["fingerprint"] = serde_json::to_value(cgp_core::gpu::fingerprint::Fingerprint::default()).unwrap();
    let mut r: Results = serde_json::from_value(v).unwrap();
    r.git_commit = Some(format!("{commit:07x}abcdef"));
    r.date = format!("2026-01-{:02}T00:00:00Z", commit % 28 + 1);
    let side = |m: f64| SideSummary {
        n: 1,
        runs: None,
        median: m,
        min: m,
        max: m,
        cv: None,
        outliers: vec![],
        samples: vec![m],
    };
    for (gpu, kernel, base, change, ci) in rows {
        let mut row = Row {
            sides: Sides {
                baseline: Some(side(*base)),
                candidate: Some(side(base * (1.0 + change))),
            },
            rule: RowRule {
                threshold: Some(RowThreshold {
                    kind: crate::foundation::threshold::ThresholdKind::Relative { fraction: 0.05 },
                    min_effect: None,
                    bound: Some(crate::outcome::results::Bound::Tolerance {
                        tolerance: 0.05,
                        limit: Some(base * 1.05),
                    }),
                }),
                direction: Some(Direction::Lower),
            },
            ..Row::bare(
                crate::outcome::results::OwnedRowKey {
                    target: "gemm".into(),
                    size: "n=1".into(),
                    kernel: Some((*kernel).into()),
                    metric: "dur".into(),
                    ..Default::default()
                },
                "ns",
                crate::outcome::results::Outcome::Compared(
                    crate::outcome::results::Judged::Pass,
                    Estimate {
                        shift: Shift::Change {
                            change: *change,
                            ci: Some(*ci),
                            detectable: None,
                        },
                        ..Estimate::default()
                    },
                ),
                "",
            )
        };
        row.key.gpu = (*gpu).to_owned();
        r.rows.push(row);
    }
    r
}

fn history() -> Vec<(PathBuf, Results)> {
    (0..20)
        .map(|i| {
            let step = if i >= 10 { 0.05 } else { 0.0 };
            let wiggle = (i % 3) as f64 * 0.001;
            let rows = [
                (
                    "H100",
                    "k</script><script>alert(1)</script>",
                    1000.0,
                    step + wiggle,
                    [step, step + 0.01],
                ),
                (
                    "H200",
                    "k</script><script>alert(1)</script>",
                    800.0,
                    wiggle,
                    [-0.01, 0.01],
                ),
            ];
            (PathBuf::from(format!("r{i}.json")), results(&rows, i))
        })
        .collect()
}

fn data_of(inputs: &[(PathBuf, Results)]) -> (serde_json::Value, String) {
    let changes = find_changes(inputs, &ChangesOptions::default()).unwrap();
    let input = SiteInput {
        inputs,
        changes: &changes,
        commit_url: Some("https://github.com/o/r/commit/"),
        title: "t",
    };
    (serde_json::from_str(&data_json(&input)).unwrap(), page(&input))
}

#[test]
fn points_are_the_decided_estimates_with_their_intervals_and_thresholds() {
    let inputs = history();
    let (d, _) = data_of(&inputs);
    let series = d["series"].as_array().unwrap();
    // One series per GPU: never one line across two GPU kinds.
    assert_eq!(series.len(), 2);
    let h100 = series.iter().find(|s| s["gpu"] == "H100").unwrap();
    let row = &inputs[12].1.rows[0];
    let (b, c) = (
        row.sides.baseline.as_ref().unwrap().median,
        row.estimate().change().unwrap(),
    );
    // The same number, exactly (JSON values compare the floats).
    assert_eq!(h100["y"][12], serde_json::json!(b * (1.0 + c)));
    let ci = row.estimate().change_ci().unwrap();
    assert_eq!(h100["lo"][12], serde_json::json!(b * (1.0 + ci[0])));
    assert_eq!(h100["hi"][12], serde_json::json!(b * (1.0 + ci[1])));
    assert_eq!(h100["thr"][12], serde_json::json!(1050.0));
    // The change as every report prints it.
    let view = RunView::from(&inputs[12].1).rows().next().unwrap();
    assert_eq!(h100["t"][12], crate::report::format::change_with_ci(&view));
    // The step at 10 is found and marked there; the changed series comes first.
    assert_eq!(series[0]["gpu"], "H100");
    assert_eq!(h100["cps"][0]["at"], 10);
    assert!(h100["cps"][0]["text"].as_str().unwrap().contains("% CI)"));
    assert_eq!(h100["id"], crate::history::anchor(&row.key()));
    assert_eq!(d["commits"][3]["sha"], "0000003abcdef");
}

#[test]
fn names_cannot_end_the_data_element() {
    let (_, page) = data_of(&history());
    assert_eq!(page.matches("</script>").count(), 2, "only the page's own two");
    assert!(page.contains("k\\u003c/script\\u003e\\u003cscript\\u003e"));
    assert_eq!(
        escape_script_json("a<b>&\u{2028}"),
        "a\\u003cb\\u003e\\u0026\\u2028"
    );
}

#[test]
fn error_and_missing_rows_draw_no_point() {
    let mut inputs = history();
    inputs[4].1.rows[0].set_verdict(RowVerdict::Error);
    let (d, _) = data_of(&inputs);
    let h100 = d["series"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["gpu"] == "H100")
        .unwrap()
        .clone();
    assert_eq!(h100["x"].as_array().unwrap().len(), 19);
    assert!(h100["x"].as_array().unwrap().iter().all(|x| x != 4));
}

#[test]
fn confidences_keep_the_digits_that_differ_from_100() {
    assert_eq!(confidence(0.95), "95.0%");
    assert_eq!(confidence(0.99998), "99.998%");
    assert_eq!(confidence(0.999), "99.9%");
}

#[test]
fn a_row_of_no_kernel_gets_its_change_point() {
    let mut inputs = history();
    for (_, r) in &mut inputs {
        r.rows[0].key.kernel = None;
    }
    let (d, _) = data_of(&inputs);
    let h100 = d["series"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["gpu"] == "H100")
        .unwrap()
        .clone();
    assert_eq!(h100["kernel"], "-");
    assert_eq!(h100["cps"][0]["at"], 10, "{h100}");
}
