//! A CUPTI trace as samples: the trace's checks (CUPTI's own errors, dropped records, an
//! incomplete flush), the kernel selection and the per-launch samples (module docs in
//! [`super`]).

use super::{cupti_metrics, shell_line};
use crate::cupti::trace::{KernelRecord, ProcessTrace};
use crate::measured::samples::{Launch, Measured, MetricValue, SampleSet, SeriesKey};
use crate::profile::{Capture, FailureKind, Job, ProfileError, job_context};
use crate::spec::Target;

/// Turn one cupti capture into samples, every failure a clear error naming CUPTI.
///
/// # Errors
/// A classified [`ProfileError`]: CUPTI's own error, the program's failure, no CUDA, no flush,
/// dropped records, no selected kernel, a damaged trace.
pub fn extract(job: Job<'_>, capture: &Capture) -> Result<SampleSet, ProfileError> {
    let ctx = job_context(job);
    let origin = capture.origin.display();
    let trace = if capture.output.is_empty() {
        None
    } else {
        // A recording's damaged trace becomes `BadRecording` (exit 2) in `run::measure`.
        Some(
            crate::cupti::trace::parse(capture.output.as_bytes()).map_err(|e| {
                ProfileError::new(
                    FailureKind::BadOutput,
                    ctx.clone(),
                    format!("CUPTI trace {origin}: {e}"),
                )
            })?,
        )
    };
    if let Some(f) = trace.as_ref().and_then(|t| t.error.as_ref()) {
        return Err(ProfileError::new(
            FailureKind::ProfilerError,
            ctx,
            format!(
                "CUPTI refused to start: {} returned {} (code {}) (in {origin})",
                f.call, f.message, f.code
            ),
        )
        .hint(refusal_hint(&f.message)));
    }
    if let Some(code) = capture.exit_code.filter(|c| *c != 0) {
        let err = crate::profile::launches::app_failed(
            ctx,
            format!("the program exited with status {code} under CUPTI"),
            capture,
        );
        return Err(match &capture.argv {
            Some(argv) if !argv.is_empty() => {
                err.hint(format!("run it by hand to see why: {}", shell_line(argv)))
            }
            _ => err,
        });
    }
    let Some(trace) = trace else {
        return Err(ProfileError::new(
            FailureKind::ProfilerError,
            ctx,
            format!("CUPTI: the program never initialised CUDA: the driver did not load the injection library, so {origin} holds no trace"),
        )
        .hint("check that the command launches CUDA kernels (a wrapper script that never starts the program? a CPU-only path?), and that nothing clears CUDA_INJECTION64_PATH from its environment"));
    };
    check_complete(&trace, &ctx, &origin)?;
    check_records(&trace.kernels, &ctx, &origin)?;
    let selected = select(job.target, trace.kernels);
    if selected.is_empty() {
        return Err(no_kernels(job, &origin, capture));
    }
    // The same rule as every other reader's (`measured::plausible`): a duration no GPU gives is
    // a damaged trace, never a sample.
    let implausible = selected.iter().find_map(|k| {
        let ns = (k.end_ns - k.start_ns) as f64;
        crate::measured::plausible::implausible("gpu__time_duration.sum", "ns", ns).map(|why| (k, ns, why))
    });
    if let Some((k, ns, why)) = implausible {
        let why = if k.start_ns == 0 && k.end_ns == 0 {
            "CUPTI could not time it (start and end 0)".to_owned()
        } else {
            format!("{why}: the trace is damaged")
        };
        return Err(ProfileError::new(
            FailureKind::BadOutput,
            ctx,
            format!(
                "CUPTI: kernel `{}` (correlation {}) in {origin} took {ns} ns: {why}",
                k.name, k.correlation
            ),
        )
        .hint("profile (or record) it again; if it repeats, use `profiler: ncu` for this target"));
    }
    Ok(samples(job, &selected))
}

/// The ncu reader's rules for what a trace's kernel records may hold (issue 44, item 5): no
/// record twice (a launch outside a graph has its own correlation ID; the records of one graph
/// launch share it but differ in start), no launch dimension of 0 (no GPU runs such a launch),
/// and the kernel names' rule of `extract::odd_kernel_names`, the one ncu's launches follow.
fn check_records(
    kernels: &[KernelRecord],
    ctx: &str,
    origin: &dyn std::fmt::Display,
) -> Result<(), ProfileError> {
    let damaged = |what: String| {
        ProfileError::new(
            FailureKind::BadOutput,
            ctx.to_owned(),
            format!("CUPTI trace {origin}: {what}"),
        )
        .hint("use the trace as the library wrote it; profile (or record) it again")
    };
    let mut seen = std::collections::HashSet::new();
    for k in kernels {
        let key = if k.graph_id == 0 {
            (k.correlation, 0, 0)
        } else {
            (k.correlation, k.start_ns, k.end_ns)
        };
        if !seen.insert(key) {
            return Err(damaged(format!(
                "kernel `{}` is recorded twice with correlation ID {} (a duplicated record)",
                k.name, k.correlation
            )));
        }
        if k.grid.contains(&0) || k.block.contains(&0) {
            return Err(damaged(format!(
                "kernel `{}` (correlation {}) has grid {} and block {}: a dimension of 0 is no launch a GPU runs",
                k.name,
                k.correlation,
                dims(k.grid),
                dims(k.block)
            )));
        }
    }
    let launches: Vec<Launch> = kernels.iter().enumerate().map(|(i, k)| launch(i, k)).collect();
    crate::profile::extract::odd_kernel_names(&launches, origin, ctx)
}

/// A trace without its trailer, or with dropped records, measured only part of the run.
fn check_complete(
    trace: &ProcessTrace,
    ctx: &str,
    origin: &dyn std::fmt::Display,
) -> Result<(), ProfileError> {
    if !trace.complete {
        return Err(ProfileError::new(
            FailureKind::ProfilerError,
            ctx.to_owned(),
            format!(
                "CUPTI: the program died before the flush at exit: {origin} has {} kernel record(s) and no trailer, so launches are missing",
                trace.kernels.len()
            ),
        )
        .hint("the program must return from main or call exit() (a SIGKILL, abort() or _exit() skips the flush); run it by hand to see how it ends"));
    }
    if trace.dropped > 0 {
        return Err(ProfileError::new(
            FailureKind::ProfilerError,
            ctx.to_owned(),
            format!("CUPTI dropped {} activity record(s) (in {origin}): the launches it kept are not all of the run", trace.dropped),
        )
        .hint("profile fewer launches per process (`launch_count`, a smaller size), or report it with the program: the injection library's buffers did not keep up"));
    }
    Ok(())
}

/// What to do about CUPTI's own refusal.
fn refusal_hint(message: &str) -> &'static str {
    if message.contains("NOT_INITIALIZED") || message.contains("NO_DEVICE") {
        "CUPTI could not use a GPU: run on a machine with an NVIDIA GPU and a driver that matches the program's CUDA version (`nvidia-smi`); without a GPU, use --replay DIR with a recording"
    } else if message.contains("INSUFFICIENT_PRIVILEGES") || message.contains("PERMISSION") {
        "this host denies CUPTI: run where profiling is allowed, or ask the administrator (docs/cupti.md)"
    } else if message.contains("dlopen") || message.contains("cannot open") || message.contains("VERSION") {
        "point `libcupti:` (or CGP_GATE_LIBCUPTI) at the libcupti of the program's CUDA version"
    } else {
        "see CUPTI's error above; run the program by hand with the variables `cgp-gate profile --dry-run` prints, or use `profiler: ncu`"
    }
}

/// The launches the target selects: in launch order (correlation ID), those the kernel filter
/// matches, then `launch_skip` and `launch_count` over them (ncu's rule).
pub fn select(target: &Target, mut kernels: Vec<KernelRecord>) -> Vec<KernelRecord> {
    kernels.sort_by_key(|k| (k.correlation, k.start_ns));
    let skip = usize::try_from(target.launch_skip.unwrap_or(0)).unwrap_or(usize::MAX);
    let count = target
        .launch_count
        .map_or(usize::MAX, |c| usize::try_from(c).unwrap_or(usize::MAX));
    kernels
        .into_iter()
        .filter(|k| {
            target
                .kernel
                .as_ref()
                .is_none_or(|f| crate::profile::filter::matches(f, &k.name))
        })
        .skip(skip)
        .take(count)
        .collect()
}

fn no_kernels(job: Job<'_>, origin: &dyn std::fmt::Display, capture: &Capture) -> ProfileError {
    let trace = crate::cupti::trace::parse(capture.output.as_bytes()).unwrap_or_default();
    let mut names: Vec<String> = Vec::new();
    for k in &trace.kernels {
        if !names.contains(&k.name) {
            names.push(k.name.clone());
        }
    }
    let mut msg = format!("CUPTI recorded no kernel this target selects (in {origin})");
    if let Some(f) = &job.target.kernel {
        msg.push_str(&format!("; the kernel filter `{f}` matched nothing"));
    }
    if names.is_empty() {
        msg.push_str("; the program launched no kernel at all");
    } else {
        msg.push_str("; kernels the program launched: ");
        msg.push_str(
            &names
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", "),
        );
    }
    let mut err = ProfileError::new(FailureKind::NoKernels, job_context(job), msg).hint(
        "fix `kernel:` (a `regex:` matches the demangled name as listed; an exact name the function name or the whole demangled name), or lower `launch_skip` (docs/spec.md, \"Selecting kernels\")",
    );
    if job.target.kernel.is_some() {
        err.unselected = names;
    }
    err
}

/// `(64, 1, 1)`, as ncu's `Grid Size` column prints it.
fn dims(d: [u32; 3]) -> String {
    format!("({}, {}, {})", d[0], d[1], d[2])
}

/// One kernel record as a launch with ncu's metric names and units.
fn launch(i: usize, k: &KernelRecord) -> Launch {
    let num = |v: f64, unit: &str| Measured {
        value: MetricValue::Number(v),
        unit: unit.to_owned(),
    };
    let product = |d: [u32; 3]| d.iter().map(|x| f64::from(*x)).product::<f64>();
    let metrics = [
        (
            "gpu__time_duration.sum",
            num((k.end_ns - k.start_ns) as f64, "ns"),
        ),
        ("launch__grid_size", num(product(k.grid), "")),
        ("launch__block_size", num(product(k.block), "")),
        (
            "launch__registers_per_thread",
            num(f64::from(k.registers), "register/thread"),
        ),
        (
            "launch__shared_mem_per_block_static",
            num(f64::from(k.static_shared), "byte/block"),
        ),
        (
            "launch__shared_mem_per_block_dynamic",
            num(f64::from(k.dynamic_shared), "byte/block"),
        ),
    ]
    .into_iter()
    .map(|(n, m)| (n.to_owned(), m))
    .collect();
    Launch {
        id: i as u64,
        kernel: k.name.clone(),
        attributes: [("Grid Size", dims(k.grid)), ("Block Size", dims(k.block))]
            .into_iter()
            .map(|(a, v)| (a.to_owned(), v))
            .collect(),
        metrics,
    }
}

/// The samples of the selected launches: one value per launch and metric, series named as for
/// ncu (`extract::series_kernel_names`: a kernel run with two configurations is two series).
fn samples(job: Job<'_>, selected: &[KernelRecord]) -> SampleSet {
    let launches: Vec<Launch> = selected.iter().enumerate().map(|(i, k)| launch(i, k)).collect();
    let names = crate::profile::launches::series_kernel_names(&launches);
    let wanted = cupti_metrics(job.target);
    let size = job.size.key();
    let mut set = SampleSet::default();
    for (l, kernel) in launches.iter().zip(&names) {
        let config = crate::profile::launches::launch_config(l);
        for metric in &wanted {
            let Some(Measured {
                value: MetricValue::Number(v),
                unit,
            }) = l.metrics.get(metric)
            else {
                continue;
            };
            let key = SeriesKey {
                target: job.target.name.clone(),
                size: size.clone(),
                kernel: kernel.clone(),
                metric: metric.clone(),
            };
            set.push(&key, unit, *v, job.rep);
            if let Some(c) = &config {
                set.note_config(&key, c);
            }
        }
    }
    set
}
