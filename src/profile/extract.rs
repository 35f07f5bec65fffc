//! From one raw profiler output to samples, with every failure classified.
//!
//! Shared by the live and replay backends, so a recorded failure reads exactly like a live one.
//! Order matters: ncu's own `==ERROR==` lines are the most specific diagnosis (an application
//! often exits non-zero *because* profiling failed), then the exit code, then the table itself.

use crate::ncu::log::{classify, scan};
use crate::ncu::parse::parse;
use crate::plan::ncu_metrics;
use crate::profile::{Capture, FailureKind, Job, ProfileError, job_context};
use crate::samples::{CsvShape, MetricValue, SampleSet, SeriesKey};

/// Turn one capture into samples: one value per launch for every ncu metric the target needs.
///
/// # Errors
/// A [`ProfileError`] of the right class, naming the file, kernel and metric where they apply.
pub fn extract(job: Job<'_>, capture: &Capture) -> Result<SampleSet, ProfileError> {
    if crate::profile::nsys::is_nsys(job.target) {
        return crate::profile::nsys::extract(job, capture);
    }
    let ctx = job_context(job);
    let origin = capture.origin.display();
    let log = scan(&capture.raw);
    if let Some((kind, message, hint)) = classify(&log) {
        let mut message = format!("{message} (in {origin})");
        if kind == FailureKind::NoKernels {
            message.push_str(&no_kernel_detail(job, capture));
        }
        let err = ProfileError::new(kind, ctx, message);
        return Err(if hint.is_empty() { err } else { err.hint(hint) });
    }
    if let Some(code) = capture.exit_code.filter(|c| *c != 0) {
        let mut message = format!("the application (or ncu) exited with status {code}");
        if !capture.output_tail.is_empty() {
            message.push_str(&format!("; last output:\n{}", capture.output_tail));
        }
        let mut err = ProfileError::new(FailureKind::AppFailed, ctx, message);
        match &capture.argv {
            Some(argv) if !argv.is_empty() => {
                err = err.hint(format!("run it by hand to see why: {}", shell_words(argv)));
            }
            _ => {
                err = err.hint(format!(
                    "{} does not say which command ran; run the target's `command` by hand (`cgp-gate profile --dry-run` prints it)",
                    capture.origin.display()
                ));
            }
        }
        return Err(err);
    }
    let parsed = parse(&capture.raw).map_err(|e| {
        let mut m = format!("{origin}");
        if let Some(l) = e.line {
            m.push_str(&format!(":{l}"));
        }
        m.push_str(&format!(": {e}"));
        if let Some(k) = &e.kernel {
            m.push_str(&format!(" (kernel `{k}`)"));
        }
        if let Some(x) = &e.metric {
            m.push_str(&format!(" (metric `{x}`)"));
        }
        ProfileError::new(FailureKind::BadOutput, ctx.clone(), m)
    })?;
    if parsed.shape == CsvShape::Summary {
        return Err(ProfileError::new(
            FailureKind::BadOutput,
            ctx,
            format!("{origin} is a --print-summary table: it has no per-launch samples to compare"),
        )
        .hint("record with `--csv --page raw` (what cgp-gate runs), not --print-summary"));
    }
    if parsed.launches.is_empty() {
        return Err(ProfileError::new(
            FailureKind::NoKernels,
            ctx,
            format!("no kernel launches in {origin}{}", no_kernel_detail(job, capture)),
        ));
    }
    let wanted = ncu_metrics(job.target);
    for m in &log.unavailable_metrics {
        if wanted.contains(m) {
            return Err(ProfileError::new(
                FailureKind::InvalidMetric,
                ctx,
                format!("ncu could not collect `{m}` on this GPU (\"Unable to access the following metrics\" in {origin})"),
            )
            .hint("remove the metric from the spec or use one this GPU supports (`ncu --query-metrics`)"));
        }
    }
    let mut set = SampleSet::default();
    let size = job.size.key();
    for launch in &parsed.launches {
        for metric in &wanted {
            let Some(measured) = launch.metrics.get(metric) else {
                return Err(ProfileError::new(
                    FailureKind::BadOutput,
                    ctx,
                    format!("metric `{metric}` is missing (or n/a) for kernel `{}` (launch {}) in {origin}", launch.kernel, launch.id),
                )
                .hint("check the metric name with `ncu --query-metrics`; some metrics are not available for every kernel or GPU"));
            };
            let value = match &measured.value {
                MetricValue::Number(v) => *v,
                MetricValue::List(_) => {
                    return Err(ProfileError::new(
                        FailureKind::BadOutput,
                        ctx,
                        format!(
                            "metric `{metric}` of kernel `{}` in {origin} has per-instance values",
                            launch.kernel
                        ),
                    )
                    .hint("use a rollup such as `.sum` or `.max`"));
                }
                MetricValue::Text(t) => {
                    return Err(ProfileError::new(
                        FailureKind::BadOutput,
                        ctx,
                        format!(
                            "metric `{metric}` of kernel `{}` in {origin} is text (`{t}`); cgp-gate compares numbers",
                            launch.kernel
                        ),
                    ));
                }
            };
            if value < 0.0 && measured.unit == "ns" {
                return Err(ProfileError::new(
                    FailureKind::BadOutput,
                    ctx,
                    format!(
                        "metric `{metric}` of kernel `{}` (launch {}) in {origin} is a negative duration ({value} ns); a duration cannot be negative: the output is damaged",
                        launch.kernel, launch.id
                    ),
                ));
            }
            let key = SeriesKey {
                target: job.target.name.clone(),
                size: size.clone(),
                kernel: crate::samples::kernel_key(&launch.kernel),
                metric: metric.clone(),
            };
            set.push(&key, &measured.unit, value, job.rep);
        }
    }
    Ok(set)
}

fn no_kernel_detail(job: Job<'_>, capture: &Capture) -> String {
    let mut s = String::new();
    if let Some(k) = &job.target.kernel {
        s.push_str(&format!("; the kernel filter `{k}` matched nothing"));
    }
    if !job.target.nvtx.is_empty() {
        s.push_str(&format!("; NVTX include {:?}", job.target.nvtx));
    }
    match &capture.kernels_seen {
        Some(names) if !names.is_empty() => {
            s.push_str("; kernels the application launched: ");
            s.push_str(
                &names
                    .iter()
                    .map(|n| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
            );
        }
        Some(_) => s.push_str("; the application launched no kernel at all"),
        None => {}
    }
    s
}

/// Quote argv for display only (never executed).
fn shell_words(argv: &[String]) -> String {
    argv.iter()
        .map(|a| {
            if !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
            {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}
