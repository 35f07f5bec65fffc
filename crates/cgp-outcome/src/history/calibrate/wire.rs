//! A calibration row as the file holds it: every figure flat, as version 1 wrote them (a limit's
//! figures `null`, the job drift's absent without one), from the typed [`CalibrationRow`].

use serde::Serialize;

use super::{CalibrationRow, JobDrift, RunNoise, ThresholdReach};

#[derive(Serialize)]
pub(super) struct CalibrationRowWire {
    target: String,
    size: String,
    kernel: String,
    metric: String,
    unit: String,
    samples: usize,
    repetitions: usize,
    median: f64,
    cv: f64,
    outlier_rate: f64,
    dip_share: f64,
    deterministic: bool,
    threshold: String,
    spec_threshold: Option<f64>,
    min_detectable: Option<f64>,
    suggested_threshold: Option<f64>,
    below_detectable: bool,
    repetitions_needed: Option<u32>,
    within_cv: Option<f64>,
    between_cv: Option<f64>,
    launches_per_run: f64,
    processes_needed: Option<u32>,
    launches_needed: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    job_drift: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    job_drift_medians: Option<usize>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    job_drift_too_large: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    found_with_drift: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    found_without_drift: Option<f64>,
    note: String,
}

impl From<CalibrationRow> for CalibrationRowWire {
    fn from(r: CalibrationRow) -> Self {
        let reach = r.reach;
        let noise = r.noise;
        let drift = r.drift;
        Self {
            target: r.target,
            size: r.size,
            kernel: r.kernel,
            metric: r.metric,
            unit: r.unit,
            samples: r.samples,
            repetitions: r.repetitions,
            median: r.median,
            cv: r.cv,
            outlier_rate: r.outlier_rate,
            dip_share: r.dip_share,
            deterministic: r.deterministic,
            threshold: r.threshold,
            spec_threshold: reach.map(|x: ThresholdReach| x.spec_threshold),
            min_detectable: reach.and_then(|x| x.min_detectable),
            suggested_threshold: reach.and_then(|x| x.suggested_threshold),
            below_detectable: reach.is_some_and(|x| x.below_detectable),
            repetitions_needed: reach.and_then(|x| x.repetitions_needed),
            within_cv: noise.and_then(|n: RunNoise| n.within_cv),
            between_cv: noise.map(|n| n.between_cv),
            launches_per_run: r.launches_per_run,
            processes_needed: noise.and_then(|n| n.processes_needed),
            launches_needed: noise.and_then(|n| n.launches_needed),
            job_drift: drift.map(|d: JobDrift| d.spread),
            job_drift_medians: drift.map(|d| d.medians),
            job_drift_too_large: drift.is_some_and(|d| d.too_large),
            found_with_drift: drift.and_then(|d| d.found_with_drift),
            found_without_drift: drift.and_then(|d| d.found_without_drift),
            note: r.note,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{CalibrationRow, JobDrift, RunNoise, ThresholdReach};

    /// The file's form is the flat one version 1 wrote: these are the bytes the untyped row
    /// serialised to before the figures were grouped (a full row, a limit, a drift without its
    /// cost), so a reader of calibration files sees no change.
    #[test]
    fn the_file_form_is_version_1s_flat_row() {
        let full = CalibrationRow {
            target: "t".into(),
            size: "n=1".into(),
            kernel: "k".into(),
            metric: "m".into(),
            unit: "ns".into(),
            samples: 30,
            repetitions: 10,
            median: 100.0,
            cv: 0.01,
            outlier_rate: 0.1,
            dip_share: 0.05,
            deterministic: false,
            threshold: "3%".into(),
            reach: Some(ThresholdReach {
                spec_threshold: 0.03,
                min_detectable: Some(0.05),
                suggested_threshold: Some(0.02),
                below_detectable: true,
                repetitions_needed: Some(12),
            }),
            launches_per_run: 3.0,
            noise: Some(RunNoise {
                within_cv: Some(0.01),
                between_cv: 0.004,
                processes_needed: Some(12),
                launches_needed: None,
            }),
            drift: Some(JobDrift {
                spread: 0.02,
                medians: 7,
                too_large: true,
                found_with_drift: Some(0.08),
                found_without_drift: Some(0.04),
            }),
            note: "n".into(),
        };
        let head = r#"{"target":"t","size":"n=1","kernel":"k","metric":"m","unit":"ns","samples":30,"repetitions":10,"median":100.0,"cv":0.01,"outlier_rate":0.1,"dip_share":0.05,"deterministic":false,"threshold":"3%","#;
        assert_eq!(
            serde_json::to_string(&full).unwrap(),
            format!(
                r#"{head}"spec_threshold":0.03,"min_detectable":0.05,"suggested_threshold":0.02,"below_detectable":true,"repetitions_needed":12,"within_cv":0.01,"between_cv":0.004,"launches_per_run":3.0,"processes_needed":12,"launches_needed":null,"job_drift":0.02,"job_drift_medians":7,"job_drift_too_large":true,"found_with_drift":0.08,"found_without_drift":0.04,"note":"n"}}"#
            )
        );
        let limit = CalibrationRow {
            reach: None,
            noise: None,
            drift: None,
            ..full.clone()
        };
        assert_eq!(
            serde_json::to_string(&limit).unwrap(),
            format!(
                r#"{head}"spec_threshold":null,"min_detectable":null,"suggested_threshold":null,"below_detectable":false,"repetitions_needed":null,"within_cv":null,"between_cv":null,"launches_per_run":3.0,"processes_needed":null,"launches_needed":null,"note":"n"}}"#
            )
        );
        let mut drift_without_cost = full;
        drift_without_cost.noise.as_mut().unwrap().within_cv = None;
        drift_without_cost.drift = Some(JobDrift {
            too_large: false,
            found_with_drift: None,
            found_without_drift: None,
            ..drift_without_cost.drift.unwrap()
        });
        assert_eq!(
            serde_json::to_string(&drift_without_cost).unwrap(),
            format!(
                r#"{head}"spec_threshold":0.03,"min_detectable":0.05,"suggested_threshold":0.02,"below_detectable":true,"repetitions_needed":12,"within_cv":null,"between_cv":0.004,"launches_per_run":3.0,"processes_needed":12,"launches_needed":null,"job_drift":0.02,"job_drift_medians":7,"note":"n"}}"#
            )
        );
    }
}
