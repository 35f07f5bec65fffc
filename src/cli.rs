//! The command line: clap definitions and dispatch. Work happens in the library modules.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::error::{Error, Result};
use crate::exit_codes;

const EXIT_CODES_HELP: &str = "Exit codes:\n  0  pass / success\n  1  regression found\n  2  invalid input or usage (spec, arguments, baselines, results)\n  3  profiler or environment failure (ncu, the application, the GPU)";

/// CI performance-regression gate for GPU kernels, built on NVIDIA Nsight Compute.
#[derive(Debug, Parser)]
#[command(name = "cgp-gate", version, about, after_help = EXIT_CODES_HELP)]
pub struct Cli {
    /// Colour the verdicts: auto (on a terminal, unless NO_COLOR is set or in GitHub Actions),
    /// always, never.
    #[arg(long, global = true, value_enum, default_value_t = ColorArg::Auto, value_name = "WHEN")]
    pub color: ColorArg,
    #[command(subcommand)]
    pub command: Command,
}

/// `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorArg {
    Auto,
    Always,
    Never,
}

impl From<ColorArg> for crate::report::console::ColorChoice {
    fn from(c: ColorArg) -> Self {
        match c {
            ColorArg::Auto => Self::Auto,
            ColorArg::Always => Self::Always,
            ColorArg::Never => Self::Never,
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check a spec file and exit 0 (valid) or 2 (invalid).
    Validate {
        /// The spec file.
        #[arg(long, default_value = "cgp-gate.yaml")]
        spec: PathBuf,
    },
    /// Print the JSON Schema of the spec (for yaml-language-server and other editors).
    Schema,
    /// Parse an ncu CSV output file and print its launches.
    Parse {
        /// An ncu CSV output (raw or details page, with or without `==PROF==` lines).
        file: PathBuf,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Profile the spec's targets and print what was measured (no comparison).
    Profile(ProfileArgs),
    /// Show ncu's version and each GPU's fingerprint (informational: exit 0 without a GPU).
    Env(crate::gpu::EnvArgs),
    /// Render a results file (from `check --json`) as JUnit, Markdown, HTML or a pull-request comment.
    Report(crate::report::ReportArgs),
    /// Profile, compare against the baselines, re-measure doubtful rows, and decide.
    Check(CheckArgs),
    /// Write or show baselines.
    #[command(subcommand)]
    Baseline(BaselineCommand),
    /// Write a starting cgp-gate.yaml from one profiled run: `init -- ./build/bench --n 1024`
    /// runs it once under ncu; `init --from run.csv` reads a recorded ncu CSV (no GPU needed).
    Init(InitArgs),
    /// Print a shell completion script: `cgp-gate completions bash > /etc/bash_completion.d/cgp-gate`.
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff), or write one page per command into a directory.
    Man {
        /// Write `cgp-gate.1` and `cgp-gate-<command>.1` here instead of printing `cgp-gate.1`.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
    /// Combine the results of shards (`check --shard`), also from different GPU types, into one
    /// report and one exit code.
    Merge(crate::merge::MergeArgs),
}

/// `cgp-gate init`.
#[derive(Debug, Clone, clap::Args)]
pub struct InitArgs {
    /// Read a recorded ncu CSV (raw or details page) instead of running the program.
    #[arg(long, value_name = "FILE")]
    pub from: Option<PathBuf>,
    /// Where to write the spec.
    #[arg(long, short, default_value = "cgp-gate.yaml", value_name = "PATH")]
    pub output: PathBuf,
    /// Replace an existing spec.
    #[arg(long)]
    pub force: bool,
    /// The target's name (default: the program's file name).
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// The benchmark and its arguments, after `--`; numeric arguments become size parameters.
    /// Run once under ncu, or with --from only written as the spec's command.
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// `--shard K/N` and how to balance it; shared by `check` and `baseline update`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ShardArgs {
    /// Run only shard K of N (K from 1) of the target x size rows; every shard of a CI matrix
    /// computes the same split. Combine the shards' results with `cgp-gate merge`.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<crate::shard::Shard>,
    /// Balance the shards by the wall seconds per target recorded in a previous results file
    /// (default: repetitions x ncu metrics per size). Every shard must be given the same file.
    #[arg(long, value_name = "RESULTS_JSON", requires = "shard")]
    pub shard_costs: Option<PathBuf>,
}

impl ShardArgs {
    /// The rows this shard runs, or `None` without `--shard`.
    ///
    /// # Errors
    /// An unreadable or invalid `--shard-costs` file.
    pub fn selection(&self, targets: &[&crate::spec::Target]) -> Result<Option<crate::shard::Selection>> {
        let Some(shard) = self.shard else {
            return Ok(None);
        };
        let costs = self
            .shard_costs
            .as_deref()
            .map(crate::report::read_results)
            .transpose()?
            .map(|r| r.cost_seconds);
        Ok(Some(crate::shard::Selection::new(targets, shard, costs.as_ref())))
    }
}

#[derive(Debug, Clone, clap::Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// The baselines directory.
    #[arg(long, default_value = "baselines", value_name = "DIR")]
    pub baselines: PathBuf,
    /// Write the results (every sample and every decision) as JSON here.
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// What fails the gate besides errors: regressions only, or inconclusive rows too.
    #[arg(long, value_enum, default_value = "regression")]
    pub fail_on: crate::check::FailOn,
    /// Compare against a baseline measured on a different setup (every report says so).
    #[arg(long)]
    pub allow_fingerprint_mismatch: bool,
    #[command(flatten)]
    pub shard: ShardArgs,
    #[command(flatten)]
    pub reports: crate::report::ReportFlags,
}

#[derive(Debug, Clone, Subcommand)]
pub enum BaselineCommand {
    /// Measure (or take a check's results) and write the baselines; nothing is written unless every
    /// selected target was measured without error.
    Update(BaselineUpdateArgs),
    /// Print the stored baselines.
    Show {
        /// The baselines directory.
        #[arg(long, default_value = "baselines", value_name = "DIR")]
        baselines: PathBuf,
    },
}

#[derive(Debug, Clone, clap::Args)]
pub struct BaselineUpdateArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// The baselines directory.
    #[arg(long, default_value = "baselines", value_name = "DIR")]
    pub baselines: PathBuf,
    /// Take the samples of a previous `check --json` instead of profiling again.
    #[arg(long, value_name = "RESULTS_JSON", conflicts_with_all = ["replay", "record", "shard"])]
    pub from: Option<PathBuf>,
    #[command(flatten)]
    pub shard: ShardArgs,
}

/// Where samples come from and where raw output goes: shared by every command that profiles.
#[derive(Debug, Clone, clap::Args)]
pub struct SourceArgs {
    /// The spec file.
    #[arg(long, default_value = "cgp-gate.yaml")]
    pub spec: PathBuf,
    /// Only this target (repeatable).
    #[arg(long = "target", value_name = "NAME")]
    pub targets: Vec<String>,
    /// Keep every raw ncu output in DIR (`DIR/<target>/<size>/<rep>.csv` plus `manifest.json`).
    #[arg(long, value_name = "DIR", conflicts_with = "replay")]
    pub record: Option<PathBuf>,
    /// Read a recording instead of running ncu.
    #[arg(long, value_name = "DIR")]
    pub replay: Option<PathBuf>,
}

#[derive(Debug, Clone, clap::Args)]
pub struct ProfileArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// Print the samples as JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Print what would be run (clock locking and every ncu argv) without touching the GPU.
    #[arg(long, conflicts_with = "replay")]
    pub dry_run: bool,
}

/// Entry point of the binary.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() {
                exit_codes::INVALID_INPUT
            } else {
                exit_codes::OK
            };
            let _ = e.print();
            return exit(code);
        }
    };
    match run(cli) {
        Ok(code) => exit(code),
        Err(e) => {
            eprintln!("error: {e}");
            exit(e.exit_code())
        }
    }
}

fn exit(code: i32) -> ExitCode {
    ExitCode::from(u8::try_from(code).unwrap_or(u8::MAX))
}

/// Run a parsed command line; returns the exit code.
///
/// # Errors
/// Any [`Error`]; its exit code is [`Error::exit_code`].
pub fn run(cli: Cli) -> Result<i32> {
    let mut out = std::io::stdout().lock();
    let out = &mut out;
    match cli.command {
        Command::Validate { spec } => {
            let s = crate::spec::load(&spec)?;
            let sizes: usize = s.targets.iter().map(|t| t.sizes.len()).sum();
            let metrics: usize = s.targets.iter().map(|t| t.metrics.len()).sum();
            writeln!(
                out,
                "{}: ok ({} targets, {sizes} sizes, {metrics} metrics)",
                spec.display(),
                s.targets.len()
            )
            .map_err(stdout_err)?;
            Ok(exit_codes::OK)
        }
        Command::Schema => {
            let text = serde_json::to_string_pretty(&crate::spec::json_schema()).unwrap_or_default();
            writeln!(out, "{text}").map_err(stdout_err)?;
            Ok(exit_codes::OK)
        }
        Command::Parse { file, json } => {
            let text = std::fs::read_to_string(&file).map_err(|e| Error::io("read", &file, e))?;
            let parsed = crate::ncu::parse::parse(&text).map_err(|e| Error::input(&file, e.to_string()))?;
            if json {
                // Buffered: stdout is line-buffered and the JSON is one long line.
                let mut w = std::io::BufWriter::with_capacity(1 << 16, &mut *out);
                serde_json::to_writer(&mut w, &parsed).map_err(|e| stdout_err(std::io::Error::other(e)))?;
                writeln!(w).and_then(|()| w.flush()).map_err(stdout_err)?;
            } else {
                write!(
                    out,
                    "{}",
                    crate::report::console::launches_table(&parsed.launches)
                )
                .map_err(stdout_err)?;
            }
            Ok(exit_codes::OK)
        }
        Command::Profile(args) => profile_command(&args, out),
        Command::Env(args) => crate::gpu::env_command(&args, out),
        Command::Report(args) => crate::report::run(&args),
        Command::Check(args) => check_command(&args, cli.color.into(), out),
        Command::Merge(args) => crate::merge::run(&args, out),
        Command::Completions { shell } => {
            out.write_all(&completion_script(shell)).map_err(stdout_err)?;
            Ok(exit_codes::OK)
        }
        Command::Man { dir } => man_command(dir.as_deref(), out),
        Command::Init(args) => crate::init::run(
            &crate::init::InitOptions {
                from: args.from,
                command: args.command,
                output: args.output,
                force: args.force,
                name: args.name,
            },
            out,
        ),
        Command::Baseline(BaselineCommand::Update(args)) => baseline_update_command(&args, out),
        Command::Baseline(BaselineCommand::Show { baselines }) => {
            let files = crate::baseline::Store::new(&baselines).load_all()?;
            if files.is_empty() {
                writeln!(out, "no baselines in {}", baselines.display()).map_err(stdout_err)?;
            } else {
                write!(out, "{}", crate::baseline::render_show(&files)).map_err(stdout_err)?;
            }
            Ok(exit_codes::OK)
        }
    }
}

/// The completion script for `shell`, from the same definitions as `--help` (clap_complete).
pub fn completion_script(shell: clap_complete::Shell) -> Vec<u8> {
    let mut cmd = <Cli as clap::CommandFactory>::command();
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut cmd, "cgp-gate", &mut script);
    if shell == clap_complete::Shell::Bash {
        // clap_complete 4.6 spells the state of a subcommand of a hyphenated binary two ways:
        // the dispatch loop sets `cgp__gate__subcmd__check`, the case arms test
        // `cgp__subcmd__gate__subcmd__check`, so nothing after the subcommand completes
        // (clap-rs/clap#6421). Spell the arms like the loop; a fixed clap_complete makes this a
        // no-op, and tests/cli_ux.rs completes a subcommand's option values in a real bash.
        let text = String::from_utf8_lossy(&script).replace("cgp__subcmd__gate", "cgp__gate");
        return text.into_bytes();
    }
    script
}

/// The man pages, generated from the same definitions as `--help` (clap_mangen), so they
/// cannot drift from the flags.
fn man_command(dir: Option<&std::path::Path>, out: &mut dyn Write) -> Result<i32> {
    let mut cmd = <Cli as clap::CommandFactory>::command();
    // Fills in each subcommand's usage name (`cgp-gate baseline update`).
    cmd.build();
    let Some(dir) = dir else {
        clap_mangen::Man::new(cmd).render(out).map_err(stdout_err)?;
        return Ok(exit_codes::OK);
    };
    std::fs::create_dir_all(dir).map_err(|e| Error::io("create directory", dir, e))?;
    let mut pages = vec![("cgp-gate".to_owned(), cmd.clone())];
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        let name = format!("cgp-gate-{}", sub.get_name());
        pages.push((name.clone(), sub.clone().display_name(name)));
        for subsub in sub.get_subcommands().filter(|s| s.get_name() != "help") {
            let name = format!("cgp-gate-{}-{}", sub.get_name(), subsub.get_name());
            pages.push((name.clone(), subsub.clone().display_name(name)));
        }
    }
    for (name, page) in pages {
        let mut bytes = Vec::new();
        clap_mangen::Man::new(page)
            .render(&mut bytes)
            .map_err(|e| Error::io("render", &name, e))?;
        let path = dir.join(format!("{name}.1"));
        crate::fsutil::write_atomic(&path, &bytes)?;
        writeln!(out, "wrote {}", path.display()).map_err(stdout_err)?;
    }
    Ok(exit_codes::OK)
}

fn check_command(
    args: &CheckArgs,
    color: crate::report::console::ColorChoice,
    out: &mut dyn Write,
) -> Result<i32> {
    let sel = Selected::load(&args.source)?;
    let targets = sel.targets();
    let shard = args.shard.selection(&targets)?;
    let mut progress = std::io::stderr().lock();
    let (mut profiler, _, session, mut recorder) = open_run(&args.source, &sel, &targets, &mut progress)?;
    let opts = crate::check::CheckOptions {
        baselines: args.baselines.clone(),
        fail_on: args.fail_on,
        allow_fingerprint_mismatch: args.allow_fingerprint_mismatch,
        gpu: session.gpu.as_deref(),
        shard,
    };
    let mut watch = session.watch(&sel.spec.settings);
    let results = crate::check::run_check(
        &sel.spec,
        &targets,
        profiler.as_mut(),
        recorder.as_mut(),
        watch.as_mut(),
        &opts,
        &mut progress,
    );
    drop(watch);
    session.finish()?;
    let results = results?;
    finish_recording(
        recorder,
        &sel.spec,
        &results.fingerprint.ncu_version,
        &results.fingerprint,
        &mut progress,
    )?;
    if let Some(p) = &args.json {
        results.write(p)?;
    }
    let style = crate::report::console::ConsoleStyle::for_stdout(color);
    write!(
        out,
        "{}",
        crate::report::console::results_table_styled(&results, style)
    )
    .map_err(stdout_err)?;
    writeln!(out, "{}", crate::report::console::health_line(&results.health)).map_err(stdout_err)?;
    out.flush().map_err(stdout_err)?;
    let env = crate::report::GithubEnv::from_env();
    crate::report::emit(&results, &args.reports.options(&env), &env)?;
    Ok(crate::check::exit_code(&results, args.fail_on))
}

fn baseline_update_command(args: &BaselineUpdateArgs, out: &mut dyn Write) -> Result<i32> {
    let sel = Selected::load(&args.source)?;
    let targets = sel.targets();
    let shard = args.shard.selection(&targets)?;
    let store = crate::baseline::Store::new(&args.baselines);
    let commit = crate::check::git_commit(&sel.spec.base_dir());
    if let Some(from) = &args.from {
        let results = crate::report::read_results(from)?;
        let samples = crate::update::samples_from_results(&results, &sel.spec, from)?;
        let fp = results.fingerprint.clone();
        // A shard's results cover some sizes only: update those, keep the others.
        let only: Option<std::collections::BTreeSet<(String, String)>> = results.shard.as_ref().map(|_| {
            results
                .rows
                .iter()
                .map(|r| (r.target.clone(), r.size.clone()))
                .collect()
        });
        crate::update::write_baselines(
            &sel.spec,
            &targets,
            &samples,
            &|_| fp.clone(),
            &store,
            results.git_commit.clone().or(commit),
            only.as_ref(),
            out,
        )?;
        return Ok(exit_codes::OK);
    }
    let mut progress = std::io::stderr().lock();
    let mut run = measure_once(&args.source, &sel, &targets, shard.as_ref(), &mut progress)?;
    if !run.m.errors.is_empty() {
        for e in &run.m.errors {
            eprintln!("error: {}", e.message);
        }
        eprintln!(
            "error: {} failure(s): no baseline was written",
            run.m.errors.len()
        );
        return Ok(exit_codes::PROFILER_FAILURE);
    }
    let fp_of = |t: &crate::spec::Target| run.fingerprints.get(&t.name).cloned().unwrap_or_default();
    let gpu_name = targets.first().map(|t| fp_of(t).gpu_name).unwrap_or_default();
    crate::check::add_derived(&targets, &mut run.m.samples, &gpu_name);
    crate::update::write_baselines(
        &sel.spec,
        &targets,
        &run.m.samples,
        &fp_of,
        &store,
        commit,
        shard.as_ref().map(|s| &s.rows),
        out,
    )?;
    Ok(exit_codes::OK)
}

/// A spec and the targets a command works on.
pub struct Selected {
    pub spec: crate::spec::Spec,
    pub names: Vec<String>,
}

impl Selected {
    /// Load the spec and check `--target` names.
    ///
    /// # Errors
    /// Spec errors; an unknown target name (with the known ones).
    pub fn load(source: &SourceArgs) -> Result<Self> {
        let spec = crate::spec::load(&source.spec)?;
        for n in &source.targets {
            if spec.target(n).is_none() {
                let known: Vec<&str> = spec.targets.iter().map(|t| t.name.as_str()).collect();
                return Err(Error::Usage(format!(
                    "no target `{n}` in {}; targets: {}",
                    source.spec.display(),
                    known.join(", ")
                )));
            }
        }
        let names = if source.targets.is_empty() {
            spec.targets.iter().map(|t| t.name.clone()).collect()
        } else {
            source.targets.clone()
        };
        Ok(Self { spec, names })
    }

    pub fn targets(&self) -> Vec<&crate::spec::Target> {
        self.spec
            .targets
            .iter()
            .filter(|t| self.names.contains(&t.name))
            .collect()
    }
}

/// The profiler a command's flags ask for.
///
/// # Errors
/// A recording that cannot be opened; no temporary directory.
pub fn make_profiler(
    source: &SourceArgs,
    spec: &crate::spec::Spec,
) -> Result<Box<dyn crate::profile::Profiler>> {
    Ok(match &source.replay {
        Some(dir) => Box::new(crate::profile::replay::ReplayProfiler::open(dir)?),
        None => Box::new(crate::profile::live::NcuProfiler::new(&spec.base_dir())?),
    })
}

fn profile_command(args: &ProfileArgs, out: &mut dyn Write) -> Result<i32> {
    let sel = Selected::load(&args.source)?;
    let targets = sel.targets();
    let mut progress = std::io::stderr().lock();
    if args.dry_run {
        let session = crate::session::Session::live(&targets, true, out)?;
        for w in crate::gate::initial_work(&targets) {
            let app = crate::plan::app_argv(w.target, w.size).map_err(Error::Usage)?;
            let log = std::path::Path::new("<log>");
            let opts = crate::ncu::command::ncu_options(w.target, &crate::plan::ncu_metrics(w.target), log);
            let argv: Vec<String> = std::iter::once("ncu".to_owned())
                .chain(opts.iter().map(|a| a.to_string_lossy().into_owned()))
                .chain(app)
                .collect();
            writeln!(
                out,
                "{}[{}] x{}: {}",
                w.target.name,
                w.size.key(),
                w.reps.1,
                argv.join(" ")
            )
            .map_err(stdout_err)?;
        }
        session.finish()?;
        return Ok(exit_codes::OK);
    }
    let run = measure_once(&args.source, &sel, &targets, None, &mut progress)?;
    let fingerprint = targets
        .first()
        .and_then(|t| run.fingerprints.get(&t.name))
        .cloned()
        .unwrap_or_default();
    if args.json {
        serde_json::to_writer_pretty(&mut *out, &run.m.samples.series.values().collect::<Vec<_>>())
            .map_err(|e| Error::Usage(e.to_string()))?;
        writeln!(out).map_err(stdout_err)?;
    } else {
        writeln!(
            out,
            "source: {} (ncu {}); GPU: {}",
            run.source, run.ncu_version, fingerprint.gpu_name
        )
        .map_err(stdout_err)?;
        writeln!(
            out,
            "health: {}",
            crate::report::console::health_line(&run.health.unwrap_or_default())
        )
        .map_err(stdout_err)?;
        write!(out, "{}", crate::report::console::samples_table(&run.m.samples)).map_err(stdout_err)?;
    }
    for e in &run.m.errors {
        eprintln!("error: {}", e.message);
    }
    Ok(if run.m.errors.is_empty() {
        exit_codes::OK
    } else {
        exit_codes::PROFILER_FAILURE
    })
}

/// The profiler, the GPU session and the recorder of `--record`, as one profiling run opens them.
type OpenRun = (
    Box<dyn crate::profile::Profiler>,
    String,
    crate::session::Session,
    Option<crate::profile::record::Recorder>,
);

/// What every profiling command opens first: the profiler (its version asked first, so a missing
/// ncu fails before any clock is touched), the GPU session (NVML and clocks; nothing in replay)
/// and the recorder of `--record`.
fn open_run(
    source: &SourceArgs,
    sel: &Selected,
    targets: &[&crate::spec::Target],
    progress: &mut dyn Write,
) -> Result<OpenRun> {
    let mut profiler = make_profiler(source, &sel.spec)?;
    let ncu_version = profiler.version()?;
    let session = if source.replay.is_some() {
        crate::session::Session::replay()
    } else {
        crate::session::Session::live(targets, false, progress)?
    };
    let recorder = source
        .record
        .as_deref()
        .map(crate::profile::record::Recorder::new)
        .transpose()?;
    Ok((profiler, ncu_version, session, recorder))
}

/// Write the manifest of `--record`, when recording.
fn finish_recording(
    recorder: Option<crate::profile::record::Recorder>,
    spec: &crate::spec::Spec,
    ncu_version: &str,
    fingerprint: &crate::gpu::fingerprint::Fingerprint,
    progress: &mut dyn Write,
) -> Result<()> {
    if let Some(rec) = recorder {
        let path = rec.finish(&spec.hash, ncu_version, fingerprint)?;
        let _ = writeln!(progress, "recorded raw ncu output; manifest: {}", path.display());
    }
    Ok(())
}

/// One measurement pass of a spec's targets, with everything a command reports about it.
struct MeasuredRun {
    m: crate::gate::Measurement,
    ncu_version: String,
    source: String,
    /// Per target, taken while NVML was open.
    fingerprints: std::collections::BTreeMap<String, crate::gpu::fingerprint::Fingerprint>,
    health: Option<crate::results::Health>,
}

/// Profile (or replay) every repetition of the targets once: open the session (NVML, clocks),
/// record if asked, take fingerprints, and restore the clocks before returning.
fn measure_once(
    source: &SourceArgs,
    sel: &Selected,
    targets: &[&crate::spec::Target],
    shard: Option<&crate::shard::Selection>,
    progress: &mut dyn Write,
) -> Result<MeasuredRun> {
    let (mut profiler, ncu_version, session, mut recorder) = open_run(source, sel, targets, progress)?;
    let mut work = crate::gate::initial_work(targets);
    if let Some(s) = shard {
        work.retain(|w| s.contains(&w.target.name, &w.size.key()));
    }
    let mut watch = session.watch(&sel.spec.settings);
    let m = crate::gate::measure(
        profiler.as_mut(),
        &work,
        recorder.as_mut(),
        watch.as_mut(),
        false,
        progress,
    );
    let health = watch.map(|w| w.sampler.summary());
    let fingerprints: std::collections::BTreeMap<_, _> = targets
        .iter()
        .map(|t| {
            let fp =
                crate::check::fingerprint_for(profiler.as_ref(), &ncu_version, t, session.gpu.as_deref());
            (t.name.clone(), fp)
        })
        .collect();
    session.finish()?;
    let m = m?;
    let fp = targets
        .first()
        .and_then(|t| fingerprints.get(&t.name))
        .cloned()
        .unwrap_or_default();
    finish_recording(recorder, &sel.spec, &ncu_version, &fp, progress)?;
    Ok(MeasuredRun {
        m,
        ncu_version,
        source: profiler.source(),
        fingerprints,
        health,
    })
}

fn stdout_err(e: std::io::Error) -> Error {
    Error::io("write", "<stdout>", e)
}
