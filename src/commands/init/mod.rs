//! `cgp-gate init`: a starting `cgp-gate.yaml` from one profiled run of a benchmark.
//!
//! The run is either recorded ncu CSV (`--from FILE`, no GPU needed) or the program itself, run
//! once under ncu through the live profiler (the same argv builder, runner, timeouts and failure
//! classification as `check`). From the launches ncu saw, init writes one target:
//!
//! - `command`: the argv given after `--`, with each numeric value turned into a size parameter
//!   (`--n 1024` -> `--n "{n}"` and `sizes: [{n: 1024}]`); else the program named by ncu's
//!   `==PROF== Connected to process N (PATH)` line; else a placeholder that `validate` accepts.
//! - `kernel`: the one function name seen (ncu's `-k` matches the bare function name), or one
//!   `regex:` covering every name seen; each kernel is listed in a comment with its launches,
//!   median time and registers.
//! - `metrics`: `gpu__time_duration.sum: "3%"` always (even when the capture did not measure
//!   it: it is what a gate is for), and `launch__registers_per_thread: exact`.
//!
//! The text is validated with the spec loader before it is written, so init never leaves a spec
//! that `validate` would refuse, and an existing spec is only replaced with `force`.

use std::fmt::Write as _;
use std::io::{Read as _, Write};
use std::path::{Path, PathBuf};

use crate::foundation::error::{Error, Result};
use crate::foundation::exit_codes::Exit;
use crate::measured::samples::{Launch, MetricValue, ParsedOutput, kernel_key};

/// The metrics every spec written by init judges, with their thresholds.
pub(crate) const TIME_METRIC: &str = "gpu__time_duration.sum";
pub(crate) const REGISTERS_METRIC: &str = "launch__registers_per_thread";
const TIME_THRESHOLD: &str = "3%";

/// Metric keys that hold a launch's duration, best first: the raw page's metric, other
/// rollups, and the details page's label (`Duration`, with `--print-metric-name label`).
const TIME_KEYS: &[&str] = &[
    TIME_METRIC,
    "gpu__time_duration.avg",
    "gpu__time_duration",
    "Duration",
];
/// Metric keys that hold the registers per thread, raw page first.
const REGISTER_KEYS: &[&str] = &[REGISTERS_METRIC, "Registers Per Thread"];

/// The program a spec written without one runs. `validate` accepts it; `check` fails on it
/// with "could not be started", which names the file to edit.
pub(crate) const PLACEHOLDER_PROGRAM: &str = "./path/to/your/benchmark";

/// The largest capture `--from` reads (ncu CSVs of thousands of launches are a few MiB).
const MAX_CAPTURE_BYTES: u64 = 256 << 20;

/// More distinct kernel names than this are not listed one by one in the comment.
const MAX_LISTED_KERNELS: usize = 40;

/// What `init` was asked to do (the command layer builds this from its flags).
#[derive(Debug, Clone)]
pub(crate) struct InitOptions {
    /// A recorded ncu CSV to read instead of running the program.
    pub from: Option<PathBuf>,
    /// The benchmark's argv (after `--`). Run under ncu unless `from` is given; with `from`, it
    /// only becomes the spec's command.
    pub command: Vec<String>,
    /// Where to write the spec.
    pub output: PathBuf,
    /// Replace an existing spec.
    pub force: bool,
    /// The target's name (default: the program's file name).
    pub name: Option<String>,
}

mod bench;
mod command;
mod draft;
mod kernels;

pub(crate) use self::command::*;
pub(crate) use self::draft::*;
pub use self::kernels::*;

/// Run `init`: read or take the capture, write the spec, print the kernels and the next commands.
///
/// # Errors
/// An existing spec without `force` or no command and no `--from` (usage, exit 2); an unreadable
/// or invalid capture (exit 2); a capture without launches (exit 2); ncu or the program failing
/// (exit 3); the spec not written (exit 3).
pub(crate) fn run(opts: &InitOptions, out: &mut dyn Write) -> Result<Exit> {
    if let Some(name) = &opts.name {
        let ok = !name.starts_with(['.', '-'])
            && !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c));
        if !ok {
            return Err(Error::Usage(format!(
                "`{name}` cannot be a target name: use letters, digits, `_`, `-` and `.` (not first); the name is used in file names"
            )));
        }
    }
    let from: Vec<(&str, &std::path::Path)> = opts
        .from
        .iter()
        .map(|p| ("the --from capture", p.as_path()))
        .collect();
    // An existing file is replaced with --force only, whoever wrote it (below).
    crate::commands::outputs::refuse_outputs_onto_inputs_replacing(&[("--output", &opts.output)], &from)?;
    if !crate::foundation::fsutil::is_stdout(&opts.output) && opts.output.exists() && !opts.force {
        return Err(Error::Usage(format!(
            "{} already exists; pass --force to replace it, or --output PATH to write another file",
            opts.output.display()
        )));
    }
    let (parsed, raw, origin) = match &opts.from {
        Some(file) => {
            if let Some(read) = bench::harness_file(file) {
                let (harness, doc) = read?;
                return bench::run(opts, file, &harness, &doc, out);
            }
            let raw = read_capture(file)?;
            if let Some(other) = crate::harness::other_output(raw.as_bytes()) {
                // Not ncu's either: say what it is rather than what ncu's CSV would need.
                return Err(Error::input(
                    file,
                    format!("this is {other}, and `init --from` writes the spec from it"),
                ));
            }
            let parsed =
                crate::ncu_output::parse::parse(&raw).map_err(|e| Error::input(file, e.to_string()))?;
            (parsed, raw, file.display().to_string())
        }
        None if opts.command.is_empty() => {
            return Err(Error::Usage(
                "init needs a program to run under ncu (`cgp-gate init -- ./build/bench --n 1024`) or a recorded ncu CSV (`--from FILE`)".to_owned(),
            ));
        }
        None => profile_once(opts)?,
    };
    if parsed.launches.is_empty() {
        return Err(Error::input(
            &origin,
            "the capture holds no kernel launches; profile a run that launches the kernels to gate",
        ));
    }
    let mut draft = Draft::new(&parsed, &raw, &opts.command, opts.name.as_deref(), &origin);
    if draft.command_source == CommandSource::Given {
        // The spec's directory, made now (the write would make it) so that `cwd:` can be told.
        if let Some(dir) = opts.output.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| Error::io("create", dir, e))?;
        }
        draft.cwd = cwd_for(&opts.output);
    }
    let text = draft.render();
    // A spec init cannot load is a bug in init: refuse to write it rather than hand it on.
    let spec = crate::spec::load_str(&text, &opts.output).map_err(|e| {
        Error::Environment(format!(
            "init wrote a spec that does not validate (a bug in cgp-gate): {e}"
        ))
    })?;
    crate::foundation::fsutil::write_output(&opts.output, text.as_bytes())?;
    print_summary(&draft, &spec, &opts.output, out).map_err(|e| Error::io("write", "<stdout>", e))?;
    Ok(Exit::Ok)
}

/// The current directory relative to the directory `output` is written in, when they differ
/// (`None` when they are the same, or cannot be told apart).
fn cwd_for(output: &Path) -> Option<String> {
    let here = std::env::current_dir().ok()?.canonicalize().ok()?;
    let dir = match output.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let dir = dir.canonicalize().ok()?;
    if dir == here {
        return None;
    }
    let a: Vec<_> = dir.components().collect();
    let b: Vec<_> = here.components().collect();
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut rel = PathBuf::new();
    for _ in common..a.len() {
        rel.push("..");
    }
    for c in &b[common..] {
        rel.push(c);
    }
    let rel = rel.to_str()?.to_owned();
    Some(if rel.is_empty() { ".".to_owned() } else { rel })
}

fn read_capture(file: &Path) -> Result<String> {
    let f = std::fs::File::open(file).map_err(|e| Error::io("open", file, e))?;
    let mut bytes = Vec::new();
    f.take(MAX_CAPTURE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io("read", file, e))?;
    if bytes.len() as u64 > MAX_CAPTURE_BYTES {
        return Err(Error::input(
            file,
            format!(
                "larger than {} MiB; pass the CSV of one short run (`--launch-count` limits it)",
                MAX_CAPTURE_BYTES >> 20
            ),
        ));
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Run the command once under ncu with the live profiler; the probe spec is the written spec's
/// command and size without a kernel filter, measuring time and registers of at most 200 launches.
fn profile_once(opts: &InitOptions) -> Result<(ParsedOutput, String, String)> {
    let template = command_template(&opts.command);
    let probe = Draft {
        name: "init".to_owned(),
        command: template,
        command_source: CommandSource::Given,
        kernels: Vec::new(),
        origin: "the command".to_owned(),
        launches: 0,
        time_keys: Vec::new(),
        registers_everywhere: true,
        cwd: None,
    };
    let mut text = probe.render();
    text.push_str("    launch_count: 200\n");
    // The program runs in the current directory, wherever `--output` writes the spec.
    let here = std::env::current_dir().map_err(|e| Error::io("read", ".", e))?;
    let spec = crate::spec::load_str(&text, &here.join("cgp-gate.yaml"))?;
    let Some(target) = spec.targets.first() else {
        return Err(Error::Usage(
            "init could not build a target from the command".to_owned(),
        ));
    };
    let size = target.sizes.first().cloned().unwrap_or_default();
    let mut profiler = crate::profile::live::NcuProfiler::new(&spec.base_dir())?;
    {
        use crate::profile::Profiler as _;
        profiler.version()?;
        let job = crate::profile::Job {
            target,
            size: &size,
            rep: 0,
        };
        let capture = profiler.capture(job)?;
        // The same classification as `check`: ncu's errors, the exit code, an empty table.
        crate::profile::extract::extract(job, &capture)?;
        let parsed = crate::ncu_output::parse::parse(capture.raw())
            .map_err(|e| Error::input(&capture.origin, e.to_string()))?;
        let origin = format!("`{}` run under ncu", opts.command.join(" "));
        let raw = capture.raw().to_owned();
        Ok((parsed, raw, origin))
    }
}

fn print_summary(
    draft: &Draft,
    spec: &crate::spec::Spec,
    path: &Path,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    writeln!(
        out,
        "ncu saw {} launch{} of {} kernel{} in {}:",
        draft.launches,
        if draft.launches == 1 { "" } else { "es" },
        draft.kernels.len(),
        if draft.kernels.len() == 1 { "" } else { "s" },
        one_line(&draft.origin)
    )?;
    let width = draft
        .kernels
        .iter()
        .take(MAX_LISTED_KERNELS)
        .map(|k| display_name(&k.name).chars().count())
        .max()
        .unwrap_or(0);
    for k in draft.kernels.iter().take(MAX_LISTED_KERNELS) {
        writeln!(out, "  {}", kernel_line(k, width).trim_end())?;
    }
    if draft.kernels.len() > MAX_LISTED_KERNELS {
        writeln!(out, "  ... and {} more", draft.kernels.len() - MAX_LISTED_KERNELS)?;
    }
    let sizes: usize = spec.targets.iter().map(|t| t.sizes.len()).sum();
    let metrics: usize = spec.targets.iter().map(|t| t.metrics.len()).sum();
    let to_stdout = crate::foundation::fsutil::is_stdout(path);
    writeln!(
        out,
        "wrote {} (target `{}`, {sizes} size{}, {metrics} metric{}); it validates",
        if to_stdout {
            "the spec to standard output".to_owned()
        } else {
            path.display().to_string()
        },
        draft.name,
        if sizes == 1 { "" } else { "s" },
        if metrics == 1 { "" } else { "s" },
    )?;
    match draft.command_source {
        CommandSource::Given => {}
        CommandSource::Connected => writeln!(
            out,
            "note: the capture names the program but not its arguments; add them to `command:`"
        )?,
        CommandSource::Placeholder => writeln!(
            out,
            "note: the capture does not name the program; replace `{PLACEHOLDER_PROGRAM}` in `command:`"
        )?,
    }
    let spec_arg = if to_stdout || path == Path::new("cgp-gate.yaml") {
        String::new()
    } else {
        format!(" --spec {}", shell_word(&path.display().to_string()))
    };
    writeln!(
        out,
        "{}",
        if to_stdout {
            "next (with the spec saved as cgp-gate.yaml):"
        } else {
            "next:"
        }
    )?;
    writeln!(
        out,
        "  cgp-gate baseline update{spec_arg}   # on the main branch: measure and store baselines"
    )?;
    writeln!(
        out,
        "  cgp-gate check{spec_arg}             # on a change: compare with them"
    )?;
    Ok(())
}

#[cfg(test)]
mod tests;
