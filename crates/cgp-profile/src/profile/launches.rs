//! What the profilers' samples share: the series name and configuration of each launch, and the
//! application's failure with the command line to rerun (`profile::extract` for ncu,
//! `profile::cupti` for CUPTI's records, which ncu's reader does not import).

use crate::measured::samples::MetricValue;
use crate::profile::{Capture, FailureKind, ProfileError};

/// The series name of each launch: the kernel's key, plus its launch configuration when the same
/// kernel ran with more than one grid/block configuration in this repetition (so the two shapes
/// are never mixed in one series): `gemm [grid (64, 1, 1) block (256, 1, 1)]`. A kernel with one
/// configuration keeps its bare name, so a configuration that changed between baseline and
/// candidate stays one series.
pub fn series_kernel_names(launches: &[crate::measured::samples::Launch]) -> Vec<String> {
    use std::collections::{BTreeMap, BTreeSet};
    let config = launch_config;
    let keys: Vec<String> = launches
        .iter()
        .map(|l| crate::measured::samples::kernel_key(&l.kernel))
        .collect();
    let configs: Vec<Option<String>> = launches.iter().map(config).collect();
    let mut per_kernel: BTreeMap<&str, BTreeSet<Option<&str>>> = BTreeMap::new();
    for (k, c) in keys.iter().zip(&configs) {
        per_kernel.entry(k).or_default().insert(c.as_deref());
    }
    keys.iter()
        .zip(&configs)
        .map(|(k, c)| match c {
            Some(c) if per_kernel[k.as_str()].len() > 1 => crate::measured::samples::kernel_with_config(k, c),
            _ => k.clone(),
        })
        .collect()
}

/// The metrics [`launch_config`] falls back to (a filtered parse must build them: `extract`).
pub const CONFIG_METRICS: [&str; 2] = ["launch__grid_size", "launch__block_size"];

/// A launch's configuration, `grid (64, 1, 1) block (256, 1, 1)`: ncu's `Grid Size` and `Block
/// Size` columns (or the `launch__grid_size`/`launch__block_size` metrics); `None` when neither
/// is known.
pub fn launch_config(l: &crate::measured::samples::Launch) -> Option<String> {
    let attr = |k: &str| l.attributes.get(k).cloned();
    let metric = |k: &str| match l.metrics.get(k).map(|m| &m.value) {
        Some(MetricValue::Number(v)) => Some(crate::foundation::units::format_number(*v)),
        _ => None,
    };
    let grid = attr("Grid Size").or_else(|| metric(CONFIG_METRICS[0]));
    let block = attr("Block Size").or_else(|| metric(CONFIG_METRICS[1]));
    match (grid, block) {
        (None, None) => None,
        (g, b) => Some(format!(
            "grid {} block {}",
            g.as_deref().unwrap_or("?"),
            b.as_deref().unwrap_or("?")
        )),
    }
}

/// The application failed under ncu: its own last output (stderr, then stdout) and the command
/// line to rerun, in every command that profiles (init, profile, check, ab, baseline update).
pub(crate) fn app_failed(ctx: String, mut message: String, capture: &Capture) -> ProfileError {
    if capture.output_tail.trim().is_empty() {
        message.push_str("; none of its output was captured");
    } else {
        message.push_str(&format!(
            "; the application's last output:\n{}",
            capture.output_tail
        ));
    }
    let err = ProfileError::new(FailureKind::AppFailed, ctx, message);
    match &capture.argv {
        Some(argv) if !argv.is_empty() => {
            err.hint(format!("run it by hand to see why: {}", shell_words(argv)))
        }
        _ => err.hint(format!(
            "{} does not say which command ran; run the target's `command` by hand (`cgp-gate profile --dry-run` prints it)",
            capture.origin.display()
        )),
    }
}

/// Quote argv for display only (never executed), with shlex so the line can be pasted. An
/// argument shlex cannot quote (a NUL byte, which no argv can hold) is shown lossily.
pub(crate) fn shell_words(argv: &[String]) -> String {
    argv.iter().map(|a| shell_word(a)).collect::<Vec<_>>().join(" ")
}

/// One word for a POSIX shell, for display only (never executed), quoted only when it needs to
/// be (shlex). A NUL, which no argv can hold, is dropped.
pub fn shell_word(a: &str) -> String {
    let clean = a.replace('\0', "");
    shlex::try_quote(&clean).map_or_else(|_| clean.clone(), std::borrow::Cow::into_owned)
}

#[cfg(test)]
mod tests {
    use super::series_kernel_names;
    use crate::measured::samples::Launch;

    fn launch(kernel: &str, grid: &str, block: &str) -> Launch {
        Launch {
            id: 0,
            kernel: kernel.to_owned(),
            attributes: [("Grid Size", grid), ("Block Size", block)]
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect(),
            metrics: Default::default(),
        }
    }

    #[test]
    fn two_configurations_in_one_repetition_are_two_series() {
        let names = series_kernel_names(&[
            launch("gemm(float *)", "(64, 1, 1)", "(256, 1, 1)"),
            launch("gemm(float *)", "(128, 1, 1)", "(256, 1, 1)"),
            launch("gemm(float *)", "(64, 1, 1)", "(256, 1, 1)"),
            launch("copy(float *)", "(8, 1, 1)", "(32, 1, 1)"),
        ]);
        assert_eq!(
            names,
            [
                "gemm [grid (64, 1, 1) block (256, 1, 1)]",
                "gemm [grid (128, 1, 1) block (256, 1, 1)]",
                "gemm [grid (64, 1, 1) block (256, 1, 1)]",
                "copy",
            ]
        );
    }

    #[test]
    fn one_configuration_keeps_the_bare_name() {
        // So a configuration that changed between baseline and candidate stays one series.
        let a = series_kernel_names(&[launch("gemm(float *)", "(64, 1, 1)", "(256, 1, 1)")]);
        let b = series_kernel_names(&[launch("gemm(float *)", "(128, 1, 1)", "(256, 1, 1)")]);
        assert_eq!((a[0].as_str(), b[0].as_str()), ("gemm", "gemm"));
    }
}
