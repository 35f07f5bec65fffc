//! Unit tests of the results file's types: version-1 strings read as types, every outcome
//! through the flat file form, missing causes, kernels and row keys.

use super::*;

fn row(verdict: RowVerdict) -> Row {
    serde_json::from_value(serde_json::json!({
        "target": "t", "size": "n=1", "kernel": "k", "metric": "gpu__time_duration.sum",
        "unit": "ns", "verdict": verdict, "threshold": "3% (lower is better, min effect 500ns)",
        "direction": "lower", "method": "none", "change": null, "change_ci": null,
        "confidence": null, "p": null, "p_adjusted": null, "baseline": null,
        "candidate": null, "reason": ""
    }))
    .unwrap()
}

#[test]
fn version_1_strings_are_read_as_types() {
    let r = row(RowVerdict::Pass);
    let t = r.rule.threshold.as_ref().unwrap();
    assert_eq!(t.kind, ThresholdKind::Relative { fraction: 0.03 });
    assert_eq!(t.min_effect.as_ref().unwrap().unit, "ns");
    assert_eq!(r.rule.direction, Some(Direction::Lower));
    assert_eq!(r.rule.text(), "3% (lower is better, min effect 500ns)");
    for (text, kind) in [
        ("exact (lower is better)", ThresholdKind::Exact),
        ("min 40 (higher is better)", ThresholdKind::Min { value: 40.0 }),
        ("max 1.5 (lower is better)", ThresholdKind::Max { value: 1.5 }),
    ] {
        assert_eq!(v1::parse_threshold(text).unwrap().kind, kind, "{text}");
    }
    assert_eq!(v1::parse_threshold("-"), None);
    let diff: Vec<FingerprintDiff> =
        serde_json::from_str(r#"[["t: driver_version", "550", "570"]]"#).unwrap();
    assert_eq!(
        diff[0],
        FingerprintDiff {
            field: "t: driver_version".into(),
            baseline: "550".into(),
            current: "570".into()
        }
    );
    let kind: ErrorKind = serde_json::from_str(r#""some-future-kind""#).unwrap();
    assert_eq!(kind, ErrorKind::Other("some-future-kind".into()));
    let kind: ErrorKind = serde_json::from_str(r#""bad-recording""#).unwrap();
    assert_eq!(kind, ErrorKind::Profiler(FailureKind::BadRecording));
    assert_eq!(
        kind.class().exit().code(),
        2,
        "a damaged recording is invalid input"
    );
    assert_eq!(ErrorKind::from("missing-shard"), ErrorKind::MissingShard);
    assert_eq!(serde_json::to_string(&kind).unwrap(), r#""bad-recording""#);
    let kind = ErrorKind::Other("some-future-kind".into());
    assert_eq!(serde_json::to_string(&kind).unwrap(), r#""some-future-kind""#);
    let f: FailOn = serde_json::from_str(r#""inconclusive""#).unwrap();
    assert_eq!(f, FailOn::Inconclusive);
}

#[test]
fn older_files_get_their_category_bars_from_the_gated_category_rows() {
    let mut rows: Vec<serde_json::Value> = Vec::new();
    for (metric, b, c) in [("category:gemm", 900.0, 950.0), ("category:misc", 100.0, 90.0)] {
        let mut r = serde_json::to_value(row(RowVerdict::Pass)).unwrap();
        r["metric"] = metric.into();
        r["baseline"] = serde_json::to_value(crate::stats::summarize(&[b])).unwrap();
        r["candidate"] = serde_json::to_value(crate::stats::summarize(&[c])).unwrap();
        rows.push(r);
    }
    let text = serde_json::json!({
        "schema_version": 2, "verdict": "pass", "tool_version": "0", "spec_hash": "",
        "spec_path": "", "source": "synthetic",
        "fingerprint": serde_json::to_value(Fingerprint::default()).unwrap(),
        "fingerprint_mismatch": null,
        "shard": null, "git_commit": null, "date": "", "fail_on": "regression",
        "multiple_testing": "", "rows": rows
    })
    .to_string();
    let r = parse(&text).unwrap();
    assert!(r.category_bars_gated_only);
    assert_eq!(r.category_bars.len(), 1);
    let names: Vec<&str> = r.category_bars[0]
        .categories
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(names, ["gemm", "misc"]);
    assert_eq!(r.category_bars[0].categories[0].candidate_ns, Some(950.0));
}

#[test]
fn schema_2_round_trips_and_keeps_version_1_values() {
    let mut r = row(RowVerdict::Regression);
    r.rule.threshold.as_mut().unwrap().bound = Some(super::Bound::Tolerance {
        tolerance: 0.04,
        limit: None,
    });
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(v["verdict"], "regression");
    assert_eq!(v["size"], "n=1");
    assert_eq!(v["direction"], "lower");
    assert_eq!(v["threshold"]["kind"], "relative");
    assert_eq!(v["threshold"]["fraction"], 0.03);
    assert_eq!(v["threshold"]["tolerance"], 0.04);
    let back: Row = serde_json::from_value(v).unwrap();
    assert_eq!(back, r);
    let mut none = row(RowVerdict::Missing);
    none.rule.threshold = None;
    none.rule.direction = None;
    let v = serde_json::to_value(&none).unwrap();
    assert_eq!(v["direction"], "-");
    assert_eq!(serde_json::from_value::<Row>(v).unwrap(), none);
}

#[test]
fn every_outcome_round_trips_through_the_flat_file_form() {
    let numbers = Estimate {
        shift: Shift::Change {
            change: 0.031,
            ci: Some([0.012, 0.05]),
            detectable: Some(0.052),
        },
        confidence: Some(0.95),
        test: Some(Test {
            p: 0.001,
            p_adjusted: Some(0.004),
        }),
        left_out: None,
    };
    let outcomes = [
        Outcome::Compared(Judged::Inconclusive, numbers.clone()),
        Outcome::Compared(Judged::Pass, Estimate::default()),
        Outcome::New,
        Outcome::Missing(Missing::failing(MissingCause::NotMeasured)),
        Outcome::Missing(Missing::default()),
        Outcome::Skipped(SkipReason::SameSass),
        Outcome::Error,
    ];
    for outcome in outcomes {
        let mut r = row(RowVerdict::Pass);
        r.outcome = outcome.clone();
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["verdict"], r.verdict().as_str(), "{outcome:?}");
        assert_eq!(v.get("fails_gate").is_some(), r.fails_gate(), "{outcome:?}");
        assert_eq!(v["skipped"].as_str(), r.skipped().map(SkipReason::as_str));
        let back: Row = serde_json::from_value(v).unwrap();
        assert_eq!(back.outcome, outcome);
    }
    // A flag on a verdict that never carries it (an edited file) is dropped, not believed.
    let mut v = serde_json::to_value(row(RowVerdict::Regression)).unwrap();
    v["fails_gate"] = true.into();
    v["skipped"] = "same-sass".into();
    let back: Row = serde_json::from_value(v).unwrap();
    assert_eq!(
        back.outcome,
        Outcome::Compared(Judged::Regression, Estimate::default())
    );
    // Numbers on a row that was not compared (an older file's error row, written before
    // only compared rows had them) are not what decided it: read, they are dropped.
    let mut compared = row(RowVerdict::Regression);
    compared.outcome = Outcome::Compared(Judged::Regression, numbers);
    let mut v = serde_json::to_value(&compared).unwrap();
    assert_eq!(v["change"], 0.031);
    v["verdict"] = "error".into();
    let back: Row = serde_json::from_value(v).unwrap();
    assert_eq!(back.outcome, Outcome::Error);
    assert_eq!(back.estimate(), &Estimate::default());
}

/// A missing row's cause is written as its own field and read from it, whatever its reason
/// says: a kernel whose name holds the words of another cause's reason no longer turns into
/// that cause. The reason is never parsed back: a file written before the field existed, a
/// cause kind of a newer version and a value of another shape all read as "not measured".
#[test]
fn a_missing_rows_cause_is_its_own_field_and_never_read_from_the_reason() {
    let mut r = row(RowVerdict::Missing);
    r.reason = format!("`odd {}` was not measured", MissingCause::GONE);
    let unselected = MissingCause::Unselected {
        ran: vec!["a, b".into(), "c".into()],
    };
    for cause in [
        MissingCause::NotMeasured,
        unselected.clone(),
        MissingCause::TargetGone {
            file: "b/h100/old.json".into(),
        },
    ] {
        r.outcome = Outcome::Missing(Missing::failing(cause.clone()));
        let v = serde_json::to_value(&r).unwrap();
        assert!(v["missing_cause"]["kind"].is_string(), "{v}");
        let back: Row = serde_json::from_value(v).unwrap();
        assert_eq!(back.outcome, Outcome::Missing(Missing::failing(cause)));
    }
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(
        v["missing_cause"],
        serde_json::json!({"kind": "target-gone", "file": "b/h100/old.json"})
    );
    // A gone row written before its file was a field: the cause, without the file.
    let mut before = v.clone();
    before["missing_cause"] = serde_json::json!({"kind": "target-gone"});
    let back: Row = serde_json::from_value(before).unwrap();
    let gone = MissingCause::TargetGone { file: String::new() };
    assert_eq!(back.outcome, Outcome::Missing(Missing::failing(gone.clone())));
    assert_eq!(gone.gone_file("t", true), None, "the row's reason says it then");
    // Older files: no field; the words of the reason are not read back.
    let mut old = v.clone();
    old.as_object_mut().unwrap().remove("missing_cause");
    old["reason"] = format!("the kernel filter selected none:{}`a, b`, `c`", MissingCause::RAN).into();
    let back: Row = serde_json::from_value(old).unwrap();
    assert_eq!(
        back.outcome,
        Outcome::Missing(Missing::failing(MissingCause::NotMeasured))
    );
    assert_ne!(MissingCause::NotMeasured, unselected);
    let mut newer = v;
    newer["missing_cause"] = serde_json::json!({"kind": "some-future-kind", "x": 1});
    let back: Row = serde_json::from_value(newer.clone()).unwrap();
    assert_eq!(
        back.outcome,
        Outcome::Missing(Missing::failing(MissingCause::NotMeasured))
    );
    // A value of another shape: the file still reads, the reason's words say nothing.
    for odd in [
        serde_json::json!(5),
        serde_json::json!("gone"),
        serde_json::json!([1]),
    ] {
        newer["missing_cause"] = odd.clone();
        let back: Row = serde_json::from_value(newer.clone()).unwrap_or_else(|e| panic!("{odd}: {e}"));
        assert_eq!(
            back.outcome,
            Outcome::Missing(Missing::failing(MissingCause::NotMeasured)),
            "{odd}"
        );
    }
    // Only missing rows carry it.
    let v = serde_json::to_value(row(RowVerdict::Pass)).unwrap();
    assert!(v.get("missing_cause").is_none());
}

#[test]
fn no_kernel_is_written_and_read_as_a_dash() {
    let mut r = row(RowVerdict::Pass);
    assert_eq!(r.key.kernel_name(), Some("k"));
    assert_eq!(serde_json::to_value(&r).unwrap()["kernel"], "k");
    r.key.kernel = None;
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(v["kernel"], "-");
    assert_eq!(r.kernel_label(), "-");
    let back: Row = serde_json::from_value(v.clone()).unwrap();
    assert_eq!(back.key.kernel, None);
    assert_eq!(back, r);
    let mut v = v;
    v["kernel"] = "gemm_kernel".into();
    let named: Row = serde_json::from_value(v).unwrap();
    assert_eq!(named.key.kernel_name(), Some("gemm_kernel"));
}

#[test]
fn the_operation_row_kernel_is_typed_and_written_as_the_spec_name() {
    let mut v = serde_json::to_value(row(RowVerdict::Pass)).unwrap();
    v["kernel"] = crate::spec::SUM_KERNEL.into();
    let sum: Row = serde_json::from_value(v.clone()).unwrap();
    assert_eq!(sum.key.kernel, Some(Kernel::Sum));
    assert_eq!(sum.kernel_label(), crate::spec::SUM_KERNEL);
    assert_eq!(serde_json::to_value(&sum).unwrap(), v);
    assert_eq!(Kernel::from("gemm"), Kernel::Named("gemm".to_owned()));
    assert!(
        Kernel::Sum < Kernel::from("gemm"),
        "kernels order by the name they are written as"
    );
}

#[test]
fn row_keys_compare_order_and_print() {
    let mut a = row(RowVerdict::Pass);
    let mut b = a.clone();
    assert_eq!(a.key(), b.key());
    b.key.gpu = "NVIDIA H100 80GB HBM3".into();
    assert_ne!(a.key(), b.key());
    assert!(a.key() < b.key(), "an unknown GPU sorts first");
    assert_eq!(a.key().to_string(), "t[n=1] k gpu__time_duration.sum");
    assert_eq!(
        b.key().to_string(),
        a.key().to_string(),
        "the name leaves the GPU out"
    );
    a.key.kernel = None;
    assert_eq!(a.key().to_string(), "t[n=1] - gpu__time_duration.sum");
    assert!(a.key() < b.key(), "a row of no kernel sorts before the kernels");
    let owned = b.key().to_owned();
    assert_eq!(owned.as_key(), b.key());
    assert_eq!(owned.to_string(), b.key().to_string());
}
