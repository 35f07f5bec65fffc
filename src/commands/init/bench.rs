//! `init --from FILE [-- PROGRAM ARGS]` for a benchmark harness's file (nvbench `--json`, Google
//! Benchmark `--benchmark_out`, pytest-benchmark `--benchmark-json`; docs/harnesses.md), as for
//! an ncu capture: a complete spec of the file's harness, one target per benchmark (`kernel:`
//! its name; its states are its rows, listed in a comment), the command given after `--` (else
//! the one the file records, without the harness's output flags, else a placeholder), and the
//! harness's time metric with a threshold from the file's own noise.
//!
//! The threshold: 3 x the relative standard error of one process's value of the noisiest state
//! (the spread of the samples over the square root of their count; nvbench's summaries give it
//! as `stdev/relative` and `sample_size`), at least 2 % and at most 50 %, rounded up to a whole
//! percent: a change the file's own noise would rarely make.

use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;

use super::{InitOptions, PLACEHOLDER_PROGRAM, cwd_for};
use crate::foundation::error::{Error, Result};
use crate::foundation::exit_codes::Exit;
use crate::harness::registry::Doc;
use crate::harness::{Entry, Format, HarnessFile, Status};
use crate::profile::harness::kind_of;

/// The metric a spec written from a harness file gates on the entries of one benchmark: the
/// one its reader chooses on the first measured entry (nvbench's `nv/cold/time/gpu`, Google
/// Benchmark's `real_time`, ...).
pub(crate) fn time_metric(format: Format, entries: &[&Entry]) -> String {
    let reader = crate::harness::formats::reader(format);
    entries
        .iter()
        .filter(|e| e.status == Status::Measured)
        .find_map(|e| reader.default_metric(e))
        .unwrap_or_default()
        .to_owned()
}

/// The harness file at `file` (or the folder a format gathers), when it is one (detected by
/// content), with its parsed document.
pub(crate) fn harness_file(file: &Path) -> Option<Result<(HarnessFile, Doc)>> {
    let input = crate::profile::harness::read_input(file)?;
    Some(
        input
            .and_then(|i| Ok((crate::harness::registry::parse(&i.capture, file)?, i.file)))
            .map(|(doc, f)| (f, doc))
            .map_err(|e| Error::input(file, format!("{e}\nhelp: {}", e.help))),
    )
}

/// The argv the file records, without the harness's output flags.
fn recorded_command(format: Format, doc: &Doc) -> Option<Vec<String>> {
    let argv = crate::harness::formats::reader(format).recorded_command(doc)?;
    Some(strip_output_flags(&argv))
}

/// `argv` without the flags cgp-gate adds itself (and nvbench's other report files).
pub(crate) fn strip_output_flags(argv: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(argv.len());
    let mut it = argv.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--json" | "--md" | "--csv" => {
                it.next();
            }
            "--jsonbin" => {}
            _ if [
                "--benchmark_out=",
                "--benchmark_out_format=",
                "--benchmark-json=",
                "--benchmark_repetitions=",
            ]
            .iter()
            .any(|p| a.starts_with(p)) => {}
            _ => out.push(a.clone()),
        }
    }
    out
}

/// The relative standard error of one process's value of `e`'s metric `metric`, when the file
/// says.
fn relative_error(e: &Entry, metric: &str) -> Option<f64> {
    let m = e.metric(metric)?;
    if m.per_sample && m.values.len() >= 2 {
        let n = m.values.len() as f64;
        let mean = m.values.iter().sum::<f64>() / n;
        let var = m.values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
        return (mean > 0.0).then(|| var.sqrt() / mean / n.sqrt());
    }
    // nvbench's summaries: the relative spread (in %, here) and the sample count.
    let rel = e.metric("nv/cold/time/gpu/stdev/relative")?.values.first()? / 100.0;
    let n = *e.metric("nv/cold/sample_size")?.values.first()?;
    (n >= 1.0).then(|| rel / n.sqrt())
}

/// The threshold, in whole percent, for the entries of one benchmark.
pub(crate) fn threshold_pct(format: Format, entries: &[&Entry], metric: &str) -> u32 {
    let reader = crate::harness::formats::reader(format);
    let worst = entries
        .iter()
        .filter_map(|e| relative_error(e, metric).or_else(|| reader.noise(e, metric)))
        .fold(0.0f64, f64::max);
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "clamped to 2..=50 first"
    )]
    let pct = (3.0 * worst * 100.0).ceil().clamp(2.0, 50.0) as u32;
    pct
}

/// A target name from a benchmark's: letters, digits, `_`, `-`, `.`; unique among `taken`.
fn target_name(bench: &str, taken: &[String]) -> String {
    let mut name: String = bench
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "_-.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    name = name.trim_start_matches(['.', '-']).to_owned();
    if name.is_empty() {
        name = "bench".to_owned();
    }
    let mut unique = name.clone();
    let mut n = 2;
    while taken.contains(&unique) {
        unique = format!("{name}-{n}");
        n += 1;
    }
    unique
}

fn q(s: &str) -> String {
    super::command::yaml_quoted(s)
}

/// Text from the harness file (its name, device, states, skip reasons) in a comment of the spec:
/// one line, whatever it holds (a device named `X\nsettings:\n  build: ...` stays a comment).
fn c(s: &str) -> String {
    super::command::one_line(s)
}

/// The spec's text.
pub(crate) fn render(file: &HarnessFile, origin: &str, command: &[String], cwd: Option<&str>) -> String {
    let mut s = String::new();
    header(&mut s, file, origin, command, cwd);
    repetitions(&mut s, file);
    let _ = writeln!(s, "targets:");
    let mut benches: Vec<&str> = Vec::new();
    for e in &file.entries {
        if !benches.contains(&e.benchmark.as_str()) {
            benches.push(&e.benchmark);
        }
    }
    let mut taken = Vec::new();
    for b in benches {
        target(&mut s, file, b, &mut taken);
    }
    s
}

/// The spec's first lines: where it came from, the device, and the `defaults:` every target
/// shares (the harness, the command, its folder).
fn header(s: &mut String, file: &HarnessFile, origin: &str, command: &[String], cwd: Option<&str>) {
    let _ = writeln!(
        s,
        "# Written by `cgp-gate init` from {} ({} file{}).",
        c(origin),
        file.format.tool(),
        file.version
            .as_ref()
            .map_or(String::new(), |v| format!(", version {}", c(v)))
    );
    if let Some(d) = file.devices.first() {
        let _ = writeln!(s, "# Device: {}.", c(d));
    }
    let _ = writeln!(
        s,
        "# Each target runs the command once per repetition; its states are its rows (docs/harnesses.md)."
    );
    let _ = writeln!(s, "version: 1\ndefaults:\n  profiler: {}", kind_of(file.format));
    // Braces are placeholders in a command: the file's own (`T{ct}=I32`) are written literally.
    let cmd: Vec<String> = command
        .iter()
        .map(|a| q(&a.replace('{', "{{").replace('}', "}}")))
        .collect();
    let _ = writeln!(s, "  command: [{}]", cmd.join(", "));
    if let Some(c) = cwd {
        let _ = writeln!(s, "  cwd: {}", q(c));
    }
}

/// Benchmark `b`'s target (its name not one of `taken`, then added to it), or a comment that
/// says why it has none.
fn target(s: &mut String, file: &HarnessFile, b: &str, taken: &mut Vec<String>) {
    let entries: Vec<&Entry> = file.entries.iter().filter(|e| e.benchmark == b).collect();
    let metric = time_metric(file.format, &entries);
    let metric = metric.as_str();
    if !entries.iter().any(|e| e.status == Status::Measured) {
        // Nothing to gate: a target would have no samples (every state skipped or failed).
        let why = entries.iter().find_map(|e| match &e.status {
            Status::Skipped(w) | Status::Error(w) => Some(c(w)),
            Status::Measured => None,
        });
        let _ = writeln!(
            s,
            "  # benchmark {}: no target ({})",
            q(b),
            why.unwrap_or_default()
        );
        return;
    }
    // Which way is better: the name says (the spec reads it so), else the format knows.
    let said = crate::measured::profiler::harness_direction(metric);
    let known = crate::harness::formats::reader(file.format).direction(metric);
    if said.is_none() && known.is_none() {
        let _ = writeln!(
            s,
            "  # benchmark {}: no target (its metric {} does not say whether lower or higher is better: add the target with `{{relative: \"5%\", direction: lower}}` or `higher`)",
            q(b),
            q(metric)
        );
        return;
    }
    let name = target_name(b, taken);
    taken.push(name.clone());
    let _ = writeln!(s, "  - name: {name}\n    kernel: {}", q(b));
    for e in &entries {
        state_comment(s, e, metric);
    }
    let pct = threshold_pct(file.format, &entries, metric);
    let threshold = match (said, known) {
        (None, Some(d)) => format!("{{relative: \"{pct}%\", direction: {}}}", d.as_str()),
        _ => format!("\"{pct}%\""),
    };
    let _ = writeln!(s, "    metrics:\n      {}: {threshold}", q(metric));
}

/// A comment under a target for one of its states: the mean of its gated metric in the file,
/// or why it was skipped or failed.
fn state_comment(s: &mut String, e: &Entry, metric: &str) {
    let note = match &e.status {
        Status::Measured => e.metric(metric).map_or(String::new(), |m| {
            let mid = m.values.iter().sum::<f64>() / m.values.len().max(1) as f64;
            format!(
                "{} {}",
                crate::foundation::units::format_number((mid * 1000.0).round() / 1000.0),
                m.unit
            )
        }),
        Status::Skipped(why) | Status::Error(why) => why.clone(),
    };
    let _ = writeln!(
        s,
        "    # {}: {}",
        if e.state.is_empty() {
            "(no state)".to_owned()
        } else {
            c(&e.state)
        },
        c(&note)
    );
}

/// The processes a check starts with, and why: a file of summaries (one value per process and
/// state) makes the processes the samples, so there must be enough of them for the t test of
/// their logs to decide at the spec's alpha over its rows (`stats::power::processes_to_decide`;
/// issue 57: 3 processes against 10 could never call a regression under the rank test, and
/// find little under the t test at 2 rows); a file of per-process samples keeps 3.
fn repetitions(s: &mut String, file: &HarnessFile) {
    const BASELINE: u32 = 10;
    // Each benchmark's gated metric (the one `render` writes), of each measured state.
    let gated: Vec<&crate::harness::Metric> = file
        .entries
        .iter()
        .filter(|e| e.status == Status::Measured)
        .filter_map(|e| {
            let same: Vec<&Entry> = file
                .entries
                .iter()
                .filter(|o| o.benchmark == e.benchmark)
                .collect();
            e.metric(&time_metric(file.format, &same))
        })
        .collect();
    let summaries = gated.iter().any(|m| !m.per_sample);
    if !summaries {
        let _ = writeln!(
            s,
            "  # 3 processes first (up to 6): each holds its own samples (the run-level model, docs/statistics.md 2.5).\n  repetitions: 3\n  baseline_repetitions: {BASELINE}"
        );
        return;
    }
    let alpha = crate::spec::Settings::default().alpha;
    let rows = gated.len();
    let (runs, reach) = crate::stats::power::processes_to_decide(BASELINE, rows, alpha);
    let three = crate::stats::power::reach_in_sds(3, BASELINE, rows, alpha);
    let _ = writeln!(
        s,
        "  # {runs} processes first (up to {}): this file holds one value per process (a summary), so the processes\n  # are the samples. The t test of their logs against the {BASELINE}-process baseline then finds a change\n  # {reach:.1} between-process standard deviations beyond the threshold in 80% of checks at the first look,\n  # at alpha {alpha} over this spec's {rows} row(s) (3 processes: {three:.1}; docs/statistics.md 2.10).\n  repetitions: {runs}\n  baseline_repetitions: {BASELINE}",
        2 * runs
    );
}

/// Run `init` on a harness file.
///
/// # Errors
/// A spec that would not validate (a bug, exit 3); the spec not written.
pub(crate) fn run(
    opts: &InitOptions,
    file: &Path,
    parsed: &HarnessFile,
    doc: &Doc,
    out: &mut dyn Write,
) -> Result<Exit> {
    if !parsed.entries.iter().any(|e| e.status == Status::Measured) {
        return Err(Error::input(
            file,
            "the harness file holds no measured benchmark (none, or every one skipped or failed); init from a run that measured the benchmarks to gate",
        ));
    }
    let given = !opts.command.is_empty();
    let command = if given {
        strip_output_flags(&opts.command)
    } else {
        recorded_command(parsed.format, doc)
            .filter(|c| !c.is_empty())
            .unwrap_or_else(|| vec![PLACEHOLDER_PROGRAM.to_owned()])
    };
    if given && let Some(dir) = opts.output.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| Error::io("create", dir, e))?;
    }
    let cwd = if given { cwd_for(&opts.output) } else { None };
    let text = render(parsed, &file.display().to_string(), &command, cwd.as_deref());
    let spec = crate::spec::load_str(&text, &opts.output).map_err(|e| {
        Error::Environment(format!(
            "init wrote a spec that does not validate (a bug in cgp-gate): {e}"
        ))
    })?;
    crate::foundation::fsutil::write_output(&opts.output, text.as_bytes())?;
    let rows: usize = parsed.entries.len();
    // `-o -`: the spec went to standard output; the next steps name the file it is saved as.
    let spec_path = if crate::foundation::fsutil::is_stdout(&opts.output) {
        Path::new("cgp-gate.yaml")
    } else {
        opts.output.as_path()
    };
    writeln!(
        out,
        "{} file {}: {} benchmark(s), {rows} state(s)\nwrote {} ({} target(s), profiler: {}); it validates\nnext:\n  cgp-gate import --spec {} --into recording {}   # gate files CI already wrote\n  cgp-gate baseline update --spec {}   # or run the command live",
        parsed.format.tool(),
        file.display(),
        spec.targets.len(),
        if spec_path == opts.output {
            opts.output.display().to_string()
        } else {
            "the spec to standard output (save it as cgp-gate.yaml)".to_owned()
        },
        spec.targets.len(),
        kind_of(parsed.format),
        spec_path.display(),
        file.display(),
        spec_path.display(),
    )
    .map_err(|e| Error::io("write", "<stdout>", e))?;
    Ok(Exit::Ok)
}
