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
use crate::foundation::exit_codes;
use crate::measured::samples::{Launch, MetricValue, ParsedOutput, kernel_key};

/// The metrics every spec written by init judges, with their thresholds.
pub const TIME_METRIC: &str = "gpu__time_duration.sum";
pub const REGISTERS_METRIC: &str = "launch__registers_per_thread";
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
pub const PLACEHOLDER_PROGRAM: &str = "./path/to/your/benchmark";

/// The largest capture `--from` reads (ncu CSVs of thousands of launches are a few MiB).
const MAX_CAPTURE_BYTES: u64 = 256 << 20;

/// More distinct kernel names than this are not listed one by one in the comment.
const MAX_LISTED_KERNELS: usize = 40;

/// What `init` was asked to do (the command layer builds this from its flags).
#[derive(Debug, Clone)]
pub struct InitOptions {
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

/// One kernel (by name without its parameter list) as the capture saw it.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelSeen {
    /// The demangled name without the parameter list, as reports key it (`void gemm<128>`).
    pub name: String,
    /// The bare function name ncu's `-k` matches (`gemm`).
    pub function: String,
    pub launches: usize,
    /// Durations of the launches that reported one, in the unit below.
    pub times: Vec<f64>,
    pub time_unit: String,
    /// Registers per thread of the first launch that reported it.
    pub registers: Option<f64>,
}

impl KernelSeen {
    /// The median duration, when any launch reported one.
    pub fn median_time(&self) -> Option<f64> {
        let mut t = self.times.clone();
        t.sort_by(f64::total_cmp);
        crate::stats::median(&t)
    }
}

/// The kernels of a capture, in order of first launch.
pub fn kernels_seen(parsed: &ParsedOutput) -> Vec<KernelSeen> {
    let mut out: Vec<KernelSeen> = Vec::new();
    for l in &parsed.launches {
        let name = kernel_key(&one_line(&l.kernel));
        let i = if let Some(i) = out.iter().position(|k| k.name == name) {
            i
        } else {
            out.push(KernelSeen {
                function: function_name(&l.kernel),
                name,
                launches: 0,
                times: Vec::new(),
                time_unit: String::new(),
                registers: None,
            });
            out.len() - 1
        };
        let k = &mut out[i];
        k.launches += 1;
        if let Some((t, unit)) = number(l, TIME_KEYS) {
            if k.times.is_empty() {
                unit.clone_into(&mut k.time_unit);
            }
            if unit == k.time_unit {
                k.times.push(t);
            }
        }
        if k.registers.is_none() {
            k.registers = number(l, REGISTER_KEYS).map(|(r, _)| r);
        }
    }
    out
}

/// The first of `keys` that the launch reports as a number, with its unit.
fn number<'l>(l: &'l Launch, keys: &[&str]) -> Option<(f64, &'l str)> {
    keys.iter().find_map(|k| match l.metrics.get(*k) {
        Some(m) => match m.value {
            MetricValue::Number(v) if v.is_finite() => Some((v, m.unit.as_str())),
            _ => None,
        },
        None => None,
    })
}

/// The bare function name ncu's `--kernel-name-base function` matches: no return type, no
/// namespace or class, no template arguments, no parameters (`profile::filter::function_name`,
/// the rule a replay applies too). `void ns::gemm<128, float>(float const*, int)` -> `gemm`.
pub fn function_name(demangled: &str) -> String {
    crate::profile::filter::function_name(demangled)
}

/// Kernels that set up a program's inputs rather than do its work: random numbers, fills,
/// copies. Gated only when nothing else runs.
fn is_setup(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    [
        "distribution",
        "philox",
        "curand",
        "random",
        "normal_kernel",
        "uniform_kernel",
        "fillfunctor",
        "fill_kernel",
        "memset",
        "memcpy",
        "copy_kernel",
        "copy_device",
        "arange",
        "zero_kernel",
    ]
    .iter()
    .any(|w| lower.contains(w))
}

/// Kernels under this share of the capture's GPU time are listed, not gated.
const MIN_SHARE: f64 = 0.01;

impl KernelSeen {
    /// The kernel's GPU time in the capture (sum of its launches), when measured.
    fn total_time(&self) -> Option<f64> {
        (!self.times.is_empty()).then(|| self.times.iter().sum())
    }
}

/// Which kernels a spec gates: each kernel's share of the capture's GPU time, and whether it is
/// proposed (not setup, at least [`MIN_SHARE`]). Nothing left: every non-setup kernel; still
/// nothing: every kernel.
pub fn proposal(kernels: &[KernelSeen]) -> Vec<(Option<f64>, bool)> {
    let units: Vec<&str> = kernels
        .iter()
        .filter(|k| !k.times.is_empty())
        .map(|k| k.time_unit.as_str())
        .collect();
    let one_unit = units.windows(2).all(|w| w[0] == w[1]);
    let total: f64 = kernels.iter().filter_map(KernelSeen::total_time).sum();
    let share = |k: &KernelSeen| {
        (one_unit && total > 0.0 && kernels.iter().all(|k| !k.times.is_empty()))
            .then(|| k.total_time().unwrap_or(0.0) / total)
    };
    let mut out: Vec<(Option<f64>, bool)> = kernels
        .iter()
        .map(|k| {
            (
                share(k),
                !is_setup(&k.name) && share(k).is_none_or(|s| s >= MIN_SHARE),
            )
        })
        .collect();
    if !out.iter().any(|(_, g)| *g) {
        for (o, k) in out.iter_mut().zip(kernels) {
            o.1 = !is_setup(&k.name);
        }
    }
    if !out.iter().any(|(_, g)| *g) {
        for o in &mut out {
            o.1 = true;
        }
    }
    out
}

/// Whether a `kernel:` value selects exactly the kernels marked `true` among `names` (the
/// capture's names), by the rule live ncu and replay share.
fn selects_exactly(filter: &str, names: &[(&str, bool)]) -> bool {
    let f = match filter.strip_prefix("regex:") {
        Some(re) => match regex::Regex::new(re) {
            Ok(re) => crate::spec::KernelFilter::Regex(re),
            Err(_) => return false,
        },
        None => crate::spec::KernelFilter::Exact(filter.to_owned()),
    };
    names
        .iter()
        .all(|(n, want)| crate::profile::filter::matches(&f, n) == *want)
}

/// A plain identifier: what an exact `kernel:` may be without being a whole demangled name.
fn is_identifier(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The spec's `kernel:` value that selects exactly the `wanted` kernels (by index) among those
/// seen, checked with the matching rule itself (`profile::filter`): the function name when one
/// kernel (or all instantiations of one function) is wanted, else a `regex:` alternation of
/// function names (a whole escaped name where a function name would select too much).
/// `None` when only NVTX ranges were seen (ncu names a range result `range`, and `-k` does not
/// select ranges), or when no filter is needed (every kernel wanted).
pub fn kernel_filter_for(kernels: &[KernelSeen], wanted: &[bool]) -> Option<String> {
    if kernels.iter().all(|k| k.name == "range") {
        return None;
    }
    let names: Vec<(&str, bool)> = kernels
        .iter()
        .zip(wanted)
        .map(|(k, w)| (k.name.as_str(), *w))
        .collect();
    let mut functions: Vec<&str> = Vec::new();
    for (k, w) in kernels.iter().zip(wanted) {
        if *w && !functions.contains(&k.function.as_str()) {
            functions.push(&k.function);
        }
    }
    if let [one] = functions.as_slice()
        && is_identifier(one)
        && selects_exactly(one, &names)
    {
        return Some((*one).to_owned());
    }
    // One alternative per wanted kernel: its function name where that selects no unwanted
    // kernel, else its whole name (parameters dropped).
    let mut alts: Vec<String> = Vec::new();
    for (k, w) in kernels.iter().zip(wanted) {
        if !*w {
            continue;
        }
        let by_function = regex::escape(&k.function);
        let alt = if is_identifier(&k.function) && selects_only_wanted(&by_function, &names) {
            by_function
        } else {
            regex::escape(&k.name)
        };
        if !alts.contains(&alt) {
            alts.push(alt);
        }
    }
    let filter = format!("regex:{}", alts.join("|"));
    if selects_exactly(&filter, &names) {
        return Some(filter);
    }
    // Whole names, anchored: the most specific filter there is.
    let whole: Vec<String> = kernels
        .iter()
        .zip(wanted)
        .filter(|(_, w)| **w)
        .map(|(k, _)| regex::escape(&k.name))
        .collect();
    Some(format!("regex:^(?:{})", whole.join("|")))
}

fn selects_only_wanted(re: &str, names: &[(&str, bool)]) -> bool {
    regex::Regex::new(re).is_ok_and(|r| {
        names.iter().all(|(n, want)| {
            *want || !crate::profile::filter::matches(&crate::spec::KernelFilter::Regex(r.clone()), n)
        })
    })
}

/// The spec's `kernel:` value that selects every kernel seen ([`kernel_filter_for`]).
pub fn kernel_filter(kernels: &[KernelSeen]) -> Option<String> {
    kernel_filter_for(kernels, &vec![true; kernels.len()])
}

/// The program named by ncu's first `==PROF== Connected to process N (PATH)` line.
pub fn connected_program(raw: &str) -> Option<String> {
    raw.lines().find_map(|line| {
        let rest = line.trim().strip_prefix("==PROF== Connected to process ")?;
        let open = rest.find('(')?;
        let path = rest[open + 1..].strip_suffix(')')?.trim();
        (!path.is_empty() && !path.chars().any(char::is_control)).then(|| path.to_owned())
    })
}

/// A command line split into the spec's argv template and its size parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandTemplate {
    /// The argv with `{param}` placeholders (literal braces doubled).
    pub argv: Vec<String>,
    /// Parameter name -> value, in command-line order.
    pub params: Vec<(String, String)>,
}

/// Turn numeric arguments into size parameters: `--n 1024` and `--n=1024` become `{n}`, a
/// numeric positional argument becomes `{argN}` (N its position). Everything else stays literal.
pub fn command_template(argv: &[String]) -> CommandTemplate {
    let mut out = CommandTemplate {
        argv: Vec::with_capacity(argv.len()),
        params: Vec::new(),
    };
    let add = |wanted: String, value: &str, params: &mut Vec<(String, String)>| -> String {
        let mut name = wanted;
        let mut i = 2;
        while params.iter().any(|(n, _)| *n == name) {
            name = format!(
                "{}_{i}",
                name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '_')
            );
            i += 1;
        }
        params.push((name.clone(), value.to_owned()));
        name
    };
    for (i, arg) in argv.iter().enumerate() {
        if i == 0 {
            out.argv.push(escape_braces(arg));
            continue;
        }
        if let Some((flag, value)) = arg
            .split_once('=')
            .filter(|(f, v)| f.starts_with('-') && is_number(v))
            && let Some(name) = param_from_flag(flag).filter(|n| !is_loop_count(n))
        {
            let name = add(name, value, &mut out.params);
            out.argv.push(format!("{}={{{name}}}", escape_braces(flag)));
            continue;
        }
        if is_number(arg) {
            let from_flag = argv
                .get(i - 1)
                .filter(|p| i > 1 && !is_number(p) && !p.contains('='))
                .and_then(|p| param_from_flag(p));
            if from_flag.as_deref().is_some_and(is_loop_count) {
                // How many times the program runs its kernels, not a problem size: more launches
                // give more samples per run, another value is not another size to gate.
                out.argv.push(escape_braces(arg));
                continue;
            }
            let name = add(
                from_flag.unwrap_or_else(|| format!("arg{i}")),
                arg,
                &mut out.params,
            );
            out.argv.push(format!("{{{name}}}"));
            continue;
        }
        out.argv.push(escape_braces(arg));
    }
    out
}

/// A flag that counts loop iterations (`--launches 3`, `--iters 10`, `--warmup 2`): kept in the
/// command as written, out of the sizes.
fn is_loop_count(param: &str) -> bool {
    matches!(
        param,
        "launches"
            | "iters"
            | "iter"
            | "iterations"
            | "niter"
            | "n_iter"
            | "n_iters"
            | "num_iters"
            | "repeat"
            | "repeats"
            | "reps"
            | "repetitions"
            | "nrep"
            | "warmup"
            | "warmups"
            | "warmup_iters"
            | "runs"
            | "num_runs"
            | "steps"
            | "loops"
            | "trials"
            | "bench_iters"
            | "profile_iters"
    )
}

/// A number as a size value: digits with an optional sign, fraction and exponent.
fn is_number(s: &str) -> bool {
    let re = regex::Regex::new(r"^[+-]?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?$");
    re.is_ok_and(|re| re.is_match(s))
}

/// `--block-size` -> `block_size`; `-n` -> `n`; `--2d` -> `p_2d`; not a flag -> `None`.
fn param_from_flag(flag: &str) -> Option<String> {
    let bare = flag.strip_prefix("--").or_else(|| flag.strip_prefix('-'))?;
    let name: String = bare
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    let name = name.trim_matches('_').to_owned();
    if name.is_empty() {
        return None;
    }
    Some(if name.starts_with(|c: char| c.is_ascii_digit()) {
        format!("p_{name}")
    } else {
        name
    })
}

fn escape_braces(s: &str) -> String {
    s.replace('{', "{{").replace('}', "}}")
}

/// One word for a POSIX shell, quoted only when it needs to be (the printed next commands).
fn shell_word(a: &str) -> String {
    crate::profile::extract::shell_word(a)
}

/// Control characters (a kernel name is arbitrary text) never reach the YAML or the terminal.
fn one_line(s: &str) -> String {
    s.chars().map(|c| if c.is_control() { ' ' } else { c }).collect()
}

/// A YAML scalar: plain when that reads back as the same string, else double-quoted (JSON's
/// string syntax is valid YAML).
fn yaml_str(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars().all(|c| c.is_ascii_alphanumeric() || "._/-".contains(c))
        // `-x` is plain YAML; a lone `-` or `- x` is a sequence entry.
        && s != "-"
        && !is_number(s)
        && !matches!(
            s.to_ascii_lowercase().as_str(),
            "true" | "false" | "yes" | "no" | "on" | "off" | "null" | "y" | "n" | ".inf" | ".nan"
        );
    if plain {
        s.to_owned()
    } else {
        serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_owned())
    }
}

/// A size value: plain when it is a decimal integer (as hand-written specs have it), else quoted.
fn size_value(v: &str) -> String {
    let int = v == "0"
        || (v
            .strip_prefix('-')
            .unwrap_or(v)
            .starts_with(|c: char| ('1'..='9').contains(&c))
            && v.strip_prefix('-')
                .unwrap_or(v)
                .chars()
                .all(|c| c.is_ascii_digit()));
    if int { v.to_owned() } else { yaml_str(v) }
}

/// The program a command runs, past an interpreter and its options: `python3 torch_work.py`
/// -> `torch_work.py`, `python -m pkg.bench` -> `pkg.bench`, `./build/bench` -> itself.
fn program_of(argv: &[String]) -> Option<&str> {
    let first = argv.first()?;
    let stem = first.rsplit(['/', '\\']).next().unwrap_or(first);
    let stem = stem.strip_suffix(".exe").unwrap_or(stem);
    let interpreter = [
        "python",
        "pypy",
        "bash",
        "sh",
        "node",
        "ruby",
        "perl",
        "julia",
        "uv",
        "torchrun",
        "accelerate",
    ]
    .iter()
    .any(|i| {
        stem == *i
            || stem
                .strip_prefix(i)
                .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
    });
    if !interpreter {
        return Some(first);
    }
    let mut rest = argv[1..].iter();
    while let Some(a) = rest.next() {
        if a == "-m" {
            return rest
                .next()
                .map(|m| m.rsplit('.').next().unwrap_or(m))
                .or(Some(first));
        }
        if a == "run" || a == "launch" || a.starts_with('-') {
            continue;
        }
        return Some(a);
    }
    Some(first)
}

/// A target name from the program's file name: `./build/my_bench` -> `my_bench`.
fn target_name(program: Option<&str>) -> String {
    let stem = program
        .and_then(|p| p.rsplit(['/', '\\']).next())
        .map(|f| f.strip_suffix(".exe").unwrap_or(f))
        .map(|f| {
            [".py", ".sh", ".js", ".rb", ".pl", ".jl"]
                .iter()
                .find_map(|x| f.strip_suffix(x))
                .unwrap_or(f)
        })
        .unwrap_or_default();
    let name: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "_-.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let name = name.trim_start_matches(['.', '-']).to_owned();
    if name.is_empty() || program == Some(PLACEHOLDER_PROGRAM) {
        "bench".to_owned()
    } else {
        name
    }
}

/// Where the spec's command came from, for its comment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandSource {
    /// Given after `--`.
    Given,
    /// The `==PROF== Connected to process` line (the program only, not its arguments).
    Connected,
    /// Nothing said which program ran.
    Placeholder,
}

/// Everything the written spec says.
#[derive(Debug, Clone)]
pub struct Draft {
    pub name: String,
    pub command: CommandTemplate,
    pub command_source: CommandSource,
    pub kernels: Vec<KernelSeen>,
    /// Where the launches came from (`run.csv`, or the command run under ncu).
    pub origin: String,
    pub launches: usize,
    /// `cwd:` of the target: where init ran, relative to the spec's directory, when the spec is
    /// written elsewhere (`--output other/dir/spec.yaml`); the program runs where it ran.
    pub cwd: Option<String>,
}

impl Draft {
    /// The draft for a capture: `command` is what was given after `--` (may be empty), `raw` the
    /// capture's text (for the `Connected` line).
    pub fn new(
        parsed: &ParsedOutput,
        raw: &str,
        command: &[String],
        name: Option<&str>,
        origin: &str,
    ) -> Self {
        let (argv, command_source) = if !command.is_empty() {
            (command.to_vec(), CommandSource::Given)
        } else if let Some(p) = connected_program(raw) {
            (vec![p], CommandSource::Connected)
        } else {
            (vec![PLACEHOLDER_PROGRAM.to_owned()], CommandSource::Placeholder)
        };
        let name = name.map_or_else(|| target_name(program_of(&argv)), str::to_owned);
        Self {
            name,
            command: command_template(&argv),
            command_source,
            kernels: kernels_seen(parsed),
            origin: origin.to_owned(),
            launches: parsed.launches.len(),
            cwd: None,
        }
    }

    /// The spec's text.
    pub fn render(&self) -> String {
        let mut s = String::new();
        let kernels = self.kernels.len();
        let _ = writeln!(
            s,
            "# cgp-gate spec written by `cgp-gate init` from {} ({} launch{} of {} kernel{}).",
            one_line(&self.origin),
            self.launches,
            if self.launches == 1 { "" } else { "es" },
            kernels,
            if kernels == 1 { "" } else { "s" }
        );
        s.push_str("# Edit it freely (docs/spec.md lists every key); check it with `cgp-gate validate`.\n");
        s.push_str("version: 1\n\ntargets:\n");
        let _ = writeln!(s, "  - name: {}", yaml_str(&self.name));
        match self.command_source {
            CommandSource::Given => {}
            CommandSource::Connected => s.push_str(
                "    # ncu's log names the program but not its arguments: add them, numeric ones as\n    # \"{param}\" placeholders with a matching `sizes:` entry.\n",
            ),
            CommandSource::Placeholder => s.push_str(
                "    # TODO: the capture does not say which program ran; put its argv here (no shell).\n",
            ),
        }
        let argv: Vec<String> = self.command.argv.iter().map(|a| yaml_str(a)).collect();
        let _ = writeln!(s, "    command: [{}]", argv.join(", "));
        if let Some(cwd) = &self.cwd {
            s.push_str("    # Where `cgp-gate init` ran the program, relative to this file.\n");
            let _ = writeln!(s, "    cwd: {}", yaml_str(cwd));
        }
        self.render_kernels(&mut s);
        if !self.command.params.is_empty() {
            let params: Vec<String> = self
                .command
                .params
                .iter()
                .map(|(k, v)| format!("{k}: {}", size_value(v)))
                .collect();
            s.push_str("    sizes:\n");
            let _ = writeln!(s, "      - {{ {} }}", params.join(", "));
        }
        s.push_str("    metrics:\n");
        let _ = writeln!(s, "      {TIME_METRIC}: \"{TIME_THRESHOLD}\"");
        let _ = writeln!(s, "      {REGISTERS_METRIC}: exact");
        s
    }

    fn render_kernels(&self, s: &mut String) {
        if self.kernels.is_empty() {
            return;
        }
        let proposal = proposal(&self.kernels);
        let wanted: Vec<bool> = proposal.iter().map(|(_, w)| *w).collect();
        let filter = kernel_filter_for(&self.kernels, &wanted);
        s.push_str(
            "    # Kernels in the capture: launches, median time, registers, share of GPU time; `+` gated\n",
        );
        s.push_str("    # (a row each), `-` not: setup (RNG, fill, copy) or under 1% (widen `kernel:` to gate them).\n");
        let width = self
            .kernels
            .iter()
            .take(MAX_LISTED_KERNELS)
            .map(|k| display_name(&k.name).chars().count())
            .max()
            .unwrap_or(0);
        for (k, (share, gated)) in self.kernels.iter().zip(&proposal).take(MAX_LISTED_KERNELS) {
            let share = share.map_or_else(String::new, |x| format!("  {:.1}%", x * 100.0));
            let why = match (gated, is_setup(&k.name)) {
                (true, _) => "",
                (false, true) => "  (setup)",
                (false, false) => "  (small)",
            };
            let _ = writeln!(
                s,
                "    #  {} {}{share}{why}",
                if *gated { "+" } else { "-" },
                kernel_line(k, width).trim_end()
            );
        }
        if self.kernels.len() > MAX_LISTED_KERNELS {
            let _ = writeln!(
                s,
                "    #   ... and {} more",
                self.kernels.len() - MAX_LISTED_KERNELS
            );
        }
        match filter {
            Some(f) => {
                let _ = writeln!(s, "    kernel: {}", yaml_str(&f));
            }
            None => s.push_str(
                "    # ncu profiled NVTX ranges (range replay): select them with `nvtx:` and\n    # `replay_mode: range`; `kernel:` does not apply to ranges.\n",
            ),
        }
    }
}

/// A kernel's name for a listing: one line, at most 100 characters.
fn display_name(name: &str) -> String {
    crate::report::format::shorten(&one_line(name), 100)
}

/// `name  3 launches  17.96 us  38 registers`.
fn kernel_line(k: &KernelSeen, width: usize) -> String {
    let time = k.median_time().map_or_else(
        || "time not measured".to_owned(),
        |t| crate::foundation::units::human(t, &k.time_unit),
    );
    let regs = k.registers.map_or_else(String::new, |r| {
        format!("{} registers", crate::foundation::units::human(r, ""))
    });
    format!(
        "{:<width$}  {:>4} launch{}  {:>10}  {regs}",
        display_name(&k.name),
        k.launches,
        if k.launches == 1 { "  " } else { "es" },
        time
    )
}

/// Run `init`: read or take the capture, write the spec, print the kernels and the next commands.
///
/// # Errors
/// An existing spec without `force` or no command and no `--from` (usage, exit 2); an unreadable
/// or invalid capture (exit 2); a capture without launches (exit 2); ncu or the program failing
/// (exit 3); the spec not written (exit 3).
pub fn run(opts: &InitOptions, out: &mut dyn Write) -> Result<i32> {
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
    if opts.output.exists() && !opts.force {
        return Err(Error::Usage(format!(
            "{} already exists; pass --force to replace it, or --output PATH to write another file",
            opts.output.display()
        )));
    }
    let (parsed, raw, origin) = match &opts.from {
        Some(file) => {
            let raw = read_capture(file)?;
            let parsed = crate::ncu::parse::parse(&raw).map_err(|e| Error::input(file, e.to_string()))?;
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
    crate::foundation::fsutil::write_atomic(&opts.output, text.as_bytes())?;
    print_summary(&draft, &spec, &opts.output, out).map_err(|e| Error::io("write", "<stdout>", e))?;
    Ok(exit_codes::OK)
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
        let parsed = crate::ncu::parse::parse(&capture.raw)
            .map_err(|e| Error::input(&capture.origin, e.to_string()))?;
        let origin = format!("`{}` run under ncu", opts.command.join(" "));
        Ok((parsed, capture.raw, origin))
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
    writeln!(
        out,
        "wrote {} (target `{}`, {sizes} size{}, {metrics} metrics); it validates",
        path.display(),
        draft.name,
        if sizes == 1 { "" } else { "s" },
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
    let spec_arg = if path == Path::new("cgp-gate.yaml") {
        String::new()
    } else {
        format!(" --spec {}", shell_word(&path.display().to_string()))
    };
    writeln!(out, "next:")?;
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
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| (*x).to_owned()).collect()
    }

    #[test]
    fn function_names_are_what_ncu_matches_with_kernel_name_base_function() {
        assert_eq!(
            function_name("void matmul_tiled<32>(const float *, const float *, float *, int)"),
            "matmul_tiled"
        );
        assert_eq!(
            function_name("vector_add(const float *, const float *, float *, int)"),
            "vector_add"
        );
        assert_eq!(function_name("volta_sgemm_128x32_nn"), "volta_sgemm_128x32_nn");
        assert_eq!(
            function_name("enable_if<!T7, void>::type kernel<int, int, float, 0>(Params<int, float>)"),
            "kernel"
        );
        assert_eq!(
            function_name("void at::native::(anonymous namespace)::reduce_kernel<512, 1>(R<float>)"),
            "reduce_kernel"
        );
        assert_eq!(
            function_name("void device_kernel<G<T<long, long>>>(Params)"),
            "device_kernel"
        );
    }

    #[test]
    fn numeric_arguments_become_size_parameters() {
        let t = command_template(&s(&[
            "./build/my_bench",
            "--n",
            "1024",
            "--block-size=256",
            "in{1}.bin",
            "7",
            "-k",
            "3",
        ]));
        assert_eq!(
            t.argv,
            s(&[
                "./build/my_bench",
                "--n",
                "{n}",
                "--block-size={block_size}",
                "in{{1}}.bin",
                "{arg5}",
                "-k",
                "{k}"
            ])
        );
        assert_eq!(
            t.params,
            vec![
                ("n".to_owned(), "1024".to_owned()),
                ("block_size".to_owned(), "256".to_owned()),
                ("arg5".to_owned(), "7".to_owned()),
                ("k".to_owned(), "3".to_owned()),
            ]
        );
        let dup = command_template(&s(&["b", "--n", "1", "--n", "2"]));
        assert_eq!(dup.argv, s(&["b", "--n", "{n}", "--n", "{n_2}"]));
    }

    #[test]
    fn a_program_that_is_a_number_stays_the_program() {
        let t = command_template(&s(&["1024"]));
        assert_eq!(t.argv, s(&["1024"]));
        assert!(t.params.is_empty());
    }

    fn seen(name: &str, launches: usize, time: f64) -> KernelSeen {
        KernelSeen {
            name: kernel_key(name),
            function: function_name(name),
            launches,
            times: vec![time; launches],
            time_unit: "ns".to_owned(),
            registers: None,
        }
    }

    #[test]
    fn kernel_filters_select_exactly_the_kernels_seen() {
        let k = |f: &str| seen(f, 1, 1.0);
        assert_eq!(kernel_filter(&[k("gemm"), k("gemm")]).as_deref(), Some("gemm"));
        assert_eq!(
            kernel_filter(&[k("volta_sgemm_128x32_nn"), k("volta_sgemm_64x64_nn")]).as_deref(),
            Some("regex:volta_sgemm_128x32_nn|volta_sgemm_64x64_nn")
        );
        assert_eq!(kernel_filter(&[k("range")]), None);
        // ncu 2025.3's print of a PyTorch kernel: once `0>`, a fragment that matched nothing.
        let ln = k(
            "void unnamed>::vectorized_layer_norm_kernel<Half, float, 0>(int, T2, const T1 *, const T1 *, const T1 *, T2 *, T2 *, T1 *)",
        );
        assert_eq!(
            kernel_filter(std::slice::from_ref(&ln)).as_deref(),
            Some("vectorized_layer_norm_kernel")
        );
        // Two instantiations of one template, one wanted: the function name would select both.
        let a = k("void matmul_tiled<32>(const float *, int)");
        let b = k("void matmul_tiled<16>(const float *, int)");
        let f = kernel_filter_for(&[a.clone(), b.clone()], &[true, false]).unwrap();
        assert!(selects_exactly(&f, &[(&a.name, true), (&b.name, false)]), "{f}");
    }

    #[test]
    fn init_proposes_the_kernels_that_matter_and_lists_setup_kernels() {
        // The kernels of a PyTorch program like examples/pytorch/torch_work.py (names as ncu
        // 2025.3 prints them; launch counts and times made up for the test).
        let kernels = [
            seen(
                "void at::native::unnamed>::distribution_elementwise_grid_stride_kernel<float, 4>(int, T2)",
                3,
                5_000.0,
            ),
            seen(
                "void at::native::vectorized_elementwise_kernel<4, FillFunctor<Half>, Array<char *, 1>>(int, T2, T3)",
                1,
                2_000.0,
            ),
            seen("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT", 3, 26_000.0),
            seen(
                "void unnamed>::vectorized_layer_norm_kernel<Half, float, 0>(int, T2, const T1 *)",
                3,
                60_000.0,
            ),
            seen("void at::native::reduce_kernel<512, 1>(R)", 1, 100.0),
        ];
        let p = proposal(&kernels);
        let gated: Vec<bool> = p.iter().map(|(_, g)| *g).collect();
        assert_eq!(gated, [false, false, true, true, false]);
        let share = p[2].0.unwrap();
        assert!((share - 78_000.0 / 275_100.0).abs() < 1e-9, "{share}");
        let f = kernel_filter_for(&kernels, &gated).unwrap();
        assert_eq!(
            f,
            "regex:nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT|vectorized_layer_norm_kernel"
        );
        let names: Vec<(&str, bool)> = kernels
            .iter()
            .zip(&gated)
            .map(|(k, g)| (k.name.as_str(), *g))
            .collect();
        assert!(selects_exactly(&f, &names));
        let draft = Draft {
            name: "torch_work".into(),
            command: command_template(&s(&["python3", "torch_work.py", "--n", "2048", "--iters", "3"])),
            command_source: CommandSource::Given,
            kernels: kernels.to_vec(),
            origin: "test".into(),
            launches: 11,
            cwd: None,
        };
        let text = draft.render();
        assert!(text.contains("(setup)") && text.contains("(small)"), "{text}");
        assert!(
            text.contains("command: [python3, torch_work.py, --n, \"{n}\", --iters, \"3\"]"),
            "{text}"
        );
        assert!(text.contains("      - { n: 2048 }\n"), "{text}");
        crate::spec::load_str(&text, Path::new("cgp-gate.yaml")).unwrap();
    }

    #[test]
    fn loop_counts_stay_out_of_the_sizes() {
        let t = command_template(&s(&[
            "./b",
            "--n",
            "64",
            "--launches",
            "3",
            "--warmup=2",
            "--repeat",
            "5",
        ]));
        assert_eq!(
            t.argv,
            s(&[
                "./b",
                "--n",
                "{n}",
                "--launches",
                "3",
                "--warmup=2",
                "--repeat",
                "5"
            ])
        );
        assert_eq!(t.params, [("n".to_owned(), "64".to_owned())]);
    }

    #[test]
    fn the_connected_line_names_the_program() {
        let raw = "hello\n==PROF== Connected to process 40027 (/work/examples/build/matmul)\n";
        assert_eq!(
            connected_program(raw).as_deref(),
            Some("/work/examples/build/matmul")
        );
        assert_eq!(connected_program("==PROF== Connected to process 36493\n"), None);
        assert_eq!(
            connected_program("==PROF== Connected to process 1 (C:\\Python311\\python.exe)\r\n").as_deref(),
            Some("C:\\Python311\\python.exe")
        );
    }

    #[test]
    fn yaml_scalars_are_quoted_when_plain_would_change_them() {
        assert_eq!(yaml_str("./build/x"), "./build/x");
        assert_eq!(yaml_str("{n}"), "\"{n}\"");
        assert_eq!(yaml_str("1024"), "\"1024\"");
        assert_eq!(yaml_str("--n"), "--n");
        assert_eq!(yaml_str("-"), "\"-\"");
        assert_eq!(size_value("1024"), "1024");
        assert_eq!(size_value("007"), "\"007\"");
        assert_eq!(size_value("1.5"), "\"1.5\"");
        assert_eq!(yaml_str("no"), "\"no\"");
        assert_eq!(yaml_str("C:\\x y"), "\"C:\\\\x y\"");
    }

    #[test]
    fn target_names_come_from_the_program_file() {
        assert_eq!(target_name(Some("./build/my_bench")), "my_bench");
        assert_eq!(target_name(Some("C:\\Python311\\python.exe")), "python");
        assert_eq!(target_name(Some(PLACEHOLDER_PROGRAM)), "bench");
        assert_eq!(target_name(Some("./a b+c")), "a_b_c");
        // Past the interpreter, to the script or module.
        let name = |argv: &[&str]| target_name(program_of(&s(argv)));
        assert_eq!(name(&["python3", "torch_work.py", "--n", "2048"]), "torch_work");
        assert_eq!(name(&["python3.12", "-u", "bench/run_gemm.py"]), "run_gemm");
        assert_eq!(name(&["python", "-m", "pkg.bench_attn"]), "bench_attn");
        assert_eq!(name(&["/usr/bin/python3"]), "python3");
        assert_eq!(name(&["./build/matmul", "--n", "1"]), "matmul");
    }
}
