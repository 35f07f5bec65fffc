//! From one raw profiler output to samples, with every failure classified.
//!
//! Shared by the live and replay backends, so a recorded failure reads exactly like a live one.
//! Order matters: ncu's own `==ERROR==` lines are the most specific diagnosis (an application
//! often exits non-zero *because* profiling failed), then the exit code, then the table itself.

use crate::measured::samples::{CsvShape, Launch, MetricValue, SampleSet, SeriesKey};
use crate::ncu::log::{classify, scan, usage_error};
use crate::ncu::parse::{ParseError, parse_only};
use crate::plan::ncu_metrics;
use crate::profile::launches::{CONFIG_METRICS, app_failed, shell_words};
pub use crate::profile::launches::{launch_config, series_kernel_names, shell_word};
use crate::profile::{Capture, FailureKind, Job, ProfileError, job_context};

/// Turn one capture into samples, by the backend of its target (for ncu: one value per launch
/// for every ncu metric the target needs).
///
/// # Errors
/// A [`ProfileError`] of the right class, naming the file, kernel and metric where they apply.
pub fn extract(job: Job<'_>, capture: &Capture) -> Result<SampleSet, ProfileError> {
    let backend = crate::profile::backend_of(job.target);
    let first = backend.extract(job, capture);
    match first {
        Err(e) if crate::foundation::fsutil::in_temp_dir(&capture.origin) => {
            Err(cited_as_kept(e, job, capture))
        }
        other => other,
    }
}

/// A live run's output lives in a temporary folder that is gone when the command ends (issue
/// 46). Its error is made again, by the same backend, from what the user can still use: the
/// command line it prints names the files it writes in the run's kept folder
/// ([`crate::profile::kept`]: `--log-file ~/.cache/cgp-gate/kept/<run>/run-0.csv`), so the pasted
/// line works and writes nothing into the folder it is run in (issue 59); and an error that cites
/// the output cites a copy kept in that folder (`matmul-n=1024-rep0.csv`), with a hint that says
/// it is kept on purpose; the end of the run lists the folder. The message is never edited
/// afterwards: the backend writes it from the capture it is given. `first` is the error of the
/// capture as run.
fn cited_as_kept(first: ProfileError, job: Job<'_>, capture: &Capture) -> ProfileError {
    let backend = crate::profile::backend_of(job.target);
    let mut usable = capture.clone();
    let kept = crate::profile::kept::path();
    let mut named_kept = false;
    if let (Some(argv), Some(work), Ok(dir)) = (&mut usable.argv, capture.origin.parent(), &kept) {
        let prefix = format!("{}/", work.display());
        let into = format!("{}/", dir.display());
        for word in argv.iter_mut() {
            named_kept |= word.contains(&prefix);
            *word = word.replace(&prefix, &into);
        }
    }
    let Err(again) = backend.extract(job, &usable) else {
        return first;
    };
    // A hint's command writes into the kept folder: it must be there when the line is pasted.
    let hinted = |e: &ProfileError| {
        named_kept
            && [Some(&e.message), e.hint.as_ref()]
                .into_iter()
                .flatten()
                .any(|t| t.contains("run it by hand"))
    };
    if hinted(&again) && crate::profile::kept::folder().is_err() {
        return first;
    }
    if !again.message.contains(&capture.origin.display().to_string()) {
        return again;
    }
    // The name a recording would give it (an nsys run's export is SQLite; ncu's output is text).
    let binary = matches!(capture.output, crate::profile::Output::Bytes(_));
    let extension = backend
        .recorded_as()
        .iter()
        .find(|r| r.binary == binary)
        .map_or("csv", |r| r.extension);
    let rep = format!("rep{}", job.rep);
    let name = crate::profile::kept::file_name(&[&job.target.name, &job.size.key(), &rep], extension);
    let note = match crate::profile::kept::keep(&name, capture.output.as_bytes()) {
        Ok(path) => {
            usable.origin = path;
            Some(format!(
                "{} is a copy of the output kept for you to read (cgp-gate does not remove it: delete it when done)",
                usable.origin.display()
            ))
        }
        Err(e) => {
            usable.origin = format!("the output (not kept: {e}; rerun with --record DIR to keep it)").into();
            None
        }
    };
    let Err(mut cited) = backend.extract(job, &usable) else {
        return again;
    };
    if let Some(note) = note {
        cited.hint = Some(match cited.hint.take() {
            Some(h) => format!("{h}; {note}"),
            None => note,
        });
    }
    cited
}

/// The samples of one ncu capture ([`crate::profile::live::NcuBackend`]).
///
/// # Errors
/// A [`ProfileError`] of the right class, naming the file, kernel and metric where they apply.
pub fn extract_ncu(job: Job<'_>, capture: &Capture) -> Result<SampleSet, ProfileError> {
    let ctx = job_context(job);
    let origin = capture.origin.display();
    let log = scan(capture.raw());
    if let Some((kind, message, hint)) = classify(&log) {
        let mut message = format!("{message} (in {origin})");
        let mut unselected = Vec::new();
        if kind == FailureKind::NoKernels {
            // The kernels that ran: a listing run's (live), else ncu's own `Available Kernels:`.
            let listed = crate::ncu::log::available_kernels(capture.raw());
            let seen = match &capture.kernels_seen {
                Some(names) if !names.is_empty() || listed.is_empty() => Some(names.clone()),
                _ if !listed.is_empty() => Some(listed),
                _ => None,
            };
            message.push_str(&no_kernel_detail(job, seen.as_deref()));
            if job.target.kernel.is_some() {
                unselected = seen.unwrap_or_default();
            }
        }
        if kind == FailureKind::AppFailed {
            return Err(app_failed(ctx, message, capture));
        }
        let mut err = ProfileError::new(kind, ctx, message);
        err.unselected = unselected;
        return Err(if hint.is_empty() { err } else { err.hint(hint) });
    }
    if let Some(code) = capture.exit_code.filter(|c| *c != 0)
        && let Some((option, line)) = usage_error(&capture.output_tail).or_else(|| usage_error(capture.raw()))
    {
        // ncu refused its own command line: not the application's failure.
        let version = capture.tool_version.as_deref().unwrap_or("(version unknown)");
        let mut err = ProfileError::new(
            FailureKind::ProfilerError,
            ctx,
            format!("ncu {version} rejected option `{option}` (`{line}`, exit status {code})"),
        )
        .hint(format!(
            "this ncu ({version}) does not accept `{option}` as cgp-gate passed it; install a newer \
             Nsight Compute, or report this with the output of `ncu --version` and `ncu --help`"
        ));
        if let Some(argv) = &capture.argv {
            err.message.push_str(&format!("; command: {}", shell_words(argv)));
        }
        return Err(err);
    }
    if let Some(code) = capture.exit_code.filter(|c| *c != 0) {
        return Err(app_failed(
            ctx,
            format!("the application (or ncu) exited with status {code}"),
            capture,
        ));
    }
    let wanted = ncu_metrics(job.target);
    let parsed_metrics = metrics_to_parse(&wanted);
    let parsed = parse_only(capture.raw(), &parsed_metrics).map_err(|e| bad_output(&origin, &e, &ctx))?;
    if parsed.shape == CsvShape::Summary {
        return Err(ProfileError::new(
            FailureKind::BadOutput,
            ctx,
            format!("{origin} is a --print-summary table: it has no per-launch samples to compare"),
        )
        .hint("record with `--csv --page raw` (what cgp-gate runs), not --print-summary"));
    }
    if parsed.launches.is_empty() {
        // ncu says `No kernels were profiled` when it profiled none (classified above); a table
        // with its header (and units row) but no launch row is output cut short or damaged.
        return Err(ProfileError::new(
            FailureKind::BadOutput,
            ctx,
            format!(
                "{origin} holds the table's header but no launch rows: the output was cut off or damaged (ncu prints `No kernels were profiled` when it profiled none)"
            ),
        )
        .hint("use the output as ncu wrote it; profile (or record) it again"));
    }
    odd_kernel_names(&parsed.launches, &origin, &ctx)?;
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
    let names = series_kernel_names(&parsed.launches);
    for (launch, kernel) in parsed.launches.iter().zip(&names) {
        let config = launch_config(launch);
        for metric in &wanted {
            let (value, unit) = metric_value(launch, metric, &ctx, &origin)?;
            let key = SeriesKey {
                target: job.target.name.clone(),
                size: size.clone(),
                kernel: kernel.clone(),
                metric: metric.clone(),
            };
            set.push(&key, unit, value, job.rep);
            if let Some(c) = &config {
                set.note_config(&key, c);
            }
        }
    }
    Ok(set)
}

/// A launch with no kernel name, or one whose name holds an invisible or look-alike character
/// among launches whose names do not (issue 34): such a launch became its own series, or was
/// left out by the kernel filter, and its process silently kept its warm-up launch as a sample.
/// Compilers write kernel names in ASCII: the output is damaged. (A kernel whose every launch is
/// so named is kept, and every report shows its characters escaped.)
pub(crate) fn odd_kernel_names(
    launches: &[Launch],
    origin: &dyn std::fmt::Display,
    ctx: &str,
) -> Result<(), ProfileError> {
    let odd: Vec<(&Launch, String)> = launches
        .iter()
        .filter_map(|l| crate::profile::filter::odd_name(&l.kernel).map(|w| (l, w)))
        .collect();
    let bad = odd
        .iter()
        .find(|(l, _)| l.kernel.trim().is_empty())
        .or_else(|| odd.first().filter(|_| odd.len() < launches.len()));
    match bad {
        None => Ok(()),
        Some((l, why)) => Err(ProfileError::new(
            FailureKind::BadOutput,
            ctx.to_owned(),
            format!(
                "{origin}: launch {} has kernel name {:?}, with {why}, beside launches whose names have none; ncu prints the names the compiler made, so this one was damaged",
                l.id, l.kernel
            ),
        )
        .hint("use the output as ncu wrote it; profile (or record) it again")),
    }
}

/// The metrics a parse builds: only the ones the target needs (and what `launch_config` reads),
/// since building every column of every launch was most of `check`'s and `calibrate`'s time
/// (docs/parser.md). A details page holds some of them under their labels (`Duration`, or
/// `Duration [GPU Speed Of Light Throughput]`): those are wanted too ([`metric_value`]).
fn metrics_to_parse(wanted: &[String]) -> std::collections::BTreeSet<String> {
    wanted
        .iter()
        .map(String::as_str)
        .chain(CONFIG_METRICS)
        .flat_map(|m| {
            let labels =
                details_label(m).map(|(label, section)| [label.to_owned(), format!("{label} [{section}]")]);
            std::iter::once(m.to_owned()).chain(labels.into_iter().flatten())
        })
        .collect()
}

/// The label (and section) under which ncu's details page prints a metric of its standard
/// sections, for the metrics whose label names exactly one metric (ncu's section files
/// SpeedOfLight and LaunchStats). A raw-page metric name without a label here has none.
fn details_label(metric: &str) -> Option<(&'static str, &'static str)> {
    const SOL: &str = "GPU Speed Of Light Throughput";
    const LAUNCH: &str = "Launch Statistics";
    Some(match metric {
        "gpu__time_duration.sum" => ("Duration", SOL),
        "sm__throughput.avg.pct_of_peak_sustained_elapsed" => ("Compute (SM) Throughput", SOL),
        "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed" => ("Memory Throughput", SOL),
        "gpc__cycles_elapsed.max" => ("Elapsed Cycles", SOL),
        "launch__registers_per_thread" => ("Registers Per Thread", LAUNCH),
        "launch__block_size" => ("Block Size", LAUNCH),
        "launch__grid_size" => ("Grid Size", LAUNCH),
        _ => return None,
    })
}

/// The error for ncu output the parser refused: the file, line, kernel and metric it names.
fn bad_output(origin: &dyn std::fmt::Display, e: &ParseError, ctx: &str) -> ProfileError {
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
    ProfileError::new(FailureKind::BadOutput, ctx.to_owned(), m)
}

/// The value of `metric` in one launch, with its unit: a number in a unit cgp-gate converts, and
/// a kernel duration that is positive. Anything else is output damaged or a metric the gate cannot
/// compare.
fn metric_value<'l>(
    launch: &'l Launch,
    metric: &str,
    ctx: &str,
    origin: &dyn std::fmt::Display,
) -> Result<(f64, &'l str), ProfileError> {
    let measured = launch.metrics.get(metric).or_else(|| {
        // A details page (`--set full`, `--section ...`) holds a section's metrics under their
        // labels: `Duration` is `gpu__time_duration.sum`.
        let (label, section) = details_label(metric)?;
        launch
            .metrics
            .get(label)
            .or_else(|| launch.metrics.get(format!("{label} [{section}]").as_str()))
    });
    let Some(measured) = measured else {
        return Err(ProfileError::new(
            FailureKind::BadOutput,
            ctx.to_owned(),
            format!("metric `{metric}` is missing (or n/a) for kernel `{}` (launch {}) in {origin}", launch.kernel, launch.id),
        )
        .hint("check the metric name with `ncu --query-metrics`; some metrics are not available for every kernel or GPU"));
    };
    if !crate::foundation::units::normalise(&measured.unit).is_ok_and(|u| u.is_known()) {
        return Err(ProfileError::new(
            FailureKind::BadOutput,
            ctx.to_owned(),
            format!(
                "metric `{metric}` of kernel `{}` in {origin} has unit `{}`, which cgp-gate cannot convert, so its values cannot be compared with a threshold",
                launch.kernel, measured.unit
            ),
        )
        .hint("export with `--print-units base`; if ncu prints this unit there too, report it with your ncu version"));
    }
    let value = match &measured.value {
        MetricValue::Number(v) => *v,
        MetricValue::List(_) => {
            return Err(ProfileError::new(
                FailureKind::BadOutput,
                ctx.to_owned(),
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
                ctx.to_owned(),
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
            ctx.to_owned(),
            format!(
                "metric `{metric}` of kernel `{}` (launch {}) in {origin} is a negative duration ({value} ns); a duration cannot be negative: the output is damaged",
                launch.kernel, launch.id
            ),
        ));
    }
    if value == 0.0 && crate::foundation::units::is_kernel_duration(metric) {
        return Err(ProfileError::new(
            FailureKind::BadOutput,
            ctx.to_owned(),
            format!(
                "metric `{metric}` of kernel `{}` (launch {}) in {origin} is 0 ns; a kernel launch cannot take no time: the output is damaged",
                launch.kernel, launch.id
            ),
        )
        .hint("use the output as ncu wrote it; profile (or record) it again"));
    }
    if let Some(why) = crate::measured::plausible::implausible(metric, &measured.unit, value) {
        return Err(ProfileError::new(
            FailureKind::BadOutput,
            ctx.to_owned(),
            format!(
                "metric `{metric}` of kernel `{}` (launch {}) in {origin} reads {why}; no GPU gives that reading: the output is damaged",
                launch.kernel, launch.id
            ),
        )
        .hint("use the output as ncu wrote it; profile (or record) it again"));
    }
    Ok((value, &measured.unit))
}

fn no_kernel_detail(job: Job<'_>, kernels_seen: Option<&[String]>) -> String {
    let mut s = String::new();
    if let Some(k) = &job.target.kernel {
        s.push_str(&format!("; the kernel filter `{k}` matched nothing"));
    }
    if !job.target.nvtx.is_empty() {
        s.push_str(&format!("; NVTX include {:?}", job.target.nvtx));
    }
    match kernels_seen {
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
