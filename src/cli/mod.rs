//! The command line: clap definitions and dispatch. clap (and its companion crates) appears only
//! here and in `main.rs`; each command's work is in [`crate::commands`], which takes plain options.

pub mod args;
pub mod bisect;
pub mod confirm;
pub mod generate;
pub mod gitlab;
pub mod groups;
pub mod history;
pub mod store;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub use args::{
    AbArgs, BaselineCommand, BaselineUpdateArgs, BreakdownArgs, CalibrateArgs, ChangesArgs, CheckArgs,
    ColorArg, EnvArgs, FailOnArg, InitArgs, MergeArgs, ProfileArgs, ReportArgs, ReportFlagsArgs,
    ReportPathsArgs, ShardArgs, SourceArgs,
};

use crate::commands;
use crate::foundation::error::Result;
use crate::foundation::exit_codes::{self, Exit};

/// CI performance-regression gate for GPU kernels, built on NVIDIA Nsight Compute.
#[derive(Debug, Parser)]
#[command(name = "cgp-gate", version, about, after_help = exit_codes::help())]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// Where a live run keeps what its messages cite: a failed run's output, and the output of
    /// the `run it by hand` lines its hints print (default: $XDG_CACHE_HOME/cgp-gate/kept/<run>,
    /// else ~/.cache/cgp-gate/kept/<run>). Made only when needed, listed at the end of the run,
    /// never removed by cgp-gate.
    #[arg(long, global = true, value_name = "DIR")]
    pub keep_dir: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    // First in the help: the first command a newcomer needs.
    /// Write a starting cgp-gate.yaml from one run of a benchmark under ncu.
    ///
    /// `init -- ./build/bench --n 1024` runs the program once under ncu; `init --from run.csv`
    /// reads a recorded ncu CSV (no GPU needed). Numeric arguments become size parameters.
    Init(InitArgs),
    /// Check a spec file and exit 0 (valid) or 2 (invalid).
    Validate {
        #[command(flatten)]
        spec: groups::SpecArgs,
    },
    /// Print the JSON Schema of the spec (for yaml-language-server and other editors).
    Schema,
    /// Parse ncu CSV output files and print their launches, or benchmark harness files (nvbench,
    /// Google Benchmark, pytest-benchmark JSON) and print their samples.
    Parse {
        /// ncu CSV outputs (raw or details page, with or without `==PROF==` lines) or harness
        /// JSON files, told apart by content.
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Profile the spec's targets and print what was measured (no comparison).
    Profile(ProfileArgs),
    /// Show ncu's version and each GPU's fingerprint (informational: exit 0 without a GPU).
    Env(EnvArgs),
    /// Check that this machine can measure: GPU, counter access, ncu, nsys, libcupti (exit 3
    /// naming what to fix); with --spec, only what its targets need.
    Doctor {
        /// Check only what this spec's targets need (a harness target needs no GPU tool).
        #[arg(long, value_name = "PATH")]
        spec: Option<PathBuf>,
    },
    /// Render a results file (from `check --json`) as JUnit, Markdown, HTML or a pull-request comment.
    Report(ReportArgs),
    /// Profile, compare against the baselines, re-measure doubtful rows, and decide.
    Check(CheckArgs),
    /// Write or show baselines.
    #[command(subcommand)]
    Baseline(BaselineCommand),
    /// Print a shell completion script (bash, zsh, fish, powershell, elvish).
    ///
    /// For example: `cgp-gate completions bash > ~/.local/share/bash-completion/completions/cgp-gate`.
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
    Merge(MergeArgs),
    /// GPU time by kernel category of whole workloads traced with Nsight Systems (.nsys-rep,
    /// .sqlite export, or the CSV of cuda_gpu_trace / cuda_gpu_kern_sum), one run per file.
    Breakdown(BreakdownArgs),
    /// Find level shifts (slow creep) in a series of results files, oldest first: E-Divisive
    /// means with a permutation test per target x size x kernel x metric. Exit 1 when a shift
    /// goes the bad way.
    Changes(ChangesArgs),
    /// Write main's history as a static site (one page, no server): a chart per series with its
    /// intervals, threshold and change points, from results files oldest first (and
    /// github-action-benchmark's data.js).
    History(history::HistoryArgs),
    /// Measure the base and the head tree in alternation (ABBA) on this GPU and judge each row
    /// on its pairs; no stored baseline. Same verdicts, reports and exit codes as `check`.
    Ab(AbArgs),
    /// Find the first commit between a good and a bad one at which a row moved beyond its
    /// threshold: each commit built in a worktree and measured paired with the good one (as
    /// `ab`), with a stated confidence. Exit 0 culprit found, 1 no change beyond the threshold.
    Bisect(bisect::BisectArgs),
    /// Measure unchanged code (or read a recording) and report, per metric, the runner's noise,
    /// the smallest change the gate finds, and the threshold it suggests.
    Calibrate(CalibrateArgs),
    /// Turn harness output files a CI job already wrote (nvbench `--json`, Google Benchmark
    /// `--benchmark_out`, pytest-benchmark `--benchmark-json`; one file per process) into a
    /// recording that `--replay DIR` reads for check, ab, baseline update and calibrate.
    Import {
        /// The spec whose harness targets the files are repetitions of.
        #[arg(long, default_value = "cgp-gate.yaml")]
        spec: PathBuf,
        /// The recording to write (a new folder, or an older recording of cgp-gate's).
        #[arg(long, value_name = "DIR")]
        into: PathBuf,
        /// The harness files, one per process, in the order of their repetitions.
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
        /// Replace the recording --into holds already (every repetition of it goes).
        #[arg(long)]
        replace: bool,
    },
    /// The results store (docs/store.md): `migrate` its schema, `push` results files, `import`
    /// old history, list its `runs`, `export` them as PyTorch's HUD rows.
    #[command(subcommand)]
    Store(store::StoreCommand),
    /// Create or update this spec's note on a GitLab merge request from a results file (needs
    /// GITLAB_TOKEN; reads CI_API_V4_URL, CI_PROJECT_ID and CI_MERGE_REQUEST_IID).
    GitlabNote(gitlab::GitlabNoteArgs),
}

impl Command {
    /// The files the command line names for the command to write (`--json`, `--markdown`,
    /// `init -o`, ...), where `-` means standard output.
    fn file_outputs(&self) -> Vec<&std::path::Path> {
        fn reports(r: &ReportFlagsArgs) -> [Option<&std::path::Path>; 3] {
            [
                r.paths.junit.as_deref(),
                r.paths.markdown.as_deref(),
                r.paths.html.as_deref(),
            ]
        }
        let mut all: Vec<Option<&std::path::Path>> = Vec::new();
        match self {
            Self::Check(a) => {
                all.push(a.json.as_deref());
                all.extend(reports(&a.reports));
            }
            Self::Report(a) => all.extend(reports(&a.flags)),
            Self::Merge(a) => {
                all.push(a.json.as_deref());
                all.extend(reports(&a.reports));
            }
            Self::Ab(a) => {
                all.push(a.json.as_deref());
                all.extend(reports(&a.reports));
            }
            Self::Breakdown(a) => all.extend([a.json.as_deref(), a.csv.as_deref(), a.html.as_deref()]),
            Self::Changes(a) => all.extend([a.json.as_deref(), a.markdown.as_deref(), a.html.as_deref()]),
            Self::Calibrate(a) => all.extend([a.json.as_deref(), a.markdown.as_deref()]),
            Self::Bisect(a) => all.extend([a.json.as_deref(), a.markdown.as_deref()]),
            Self::Init(a) => all.push(Some(a.output.as_path())),
            _ => {}
        }
        all.into_iter().flatten().collect()
    }
}

/// Entry point of the binary.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let exit = if e.use_stderr() {
                Exit::InvalidInput
            } else {
                Exit::Ok
            };
            let _ = e.print();
            return exit.into();
        }
    };
    crate::profile::kept::choose(cli.keep_dir.clone());
    // Not `eprintln!`: it panics (exit 101) when stderr is a closed pipe.
    use std::io::Write;
    // The one place a command's outcome becomes the process's exit code.
    let code = match run(cli) {
        Ok(exit) => exit.into(),
        // Every command writes stdout through `QuietPipe` and ends with its own exit code: a
        // closed pipe never turns a verdict into a pass. A broken pipe that still comes here
        // (another stream) is a failure like any other write error (exit 3).
        Err(e) => {
            let text = crate::foundation::sanitize::block(&e.to_string());
            let _ = writeln!(std::io::stderr(), "error: {text}");
            e.exit().into()
        }
    };
    // What the run kept for the user, last (issue 59): one folder, each file in it.
    if let Some(listing) = crate::profile::kept::listing() {
        let _ = writeln!(
            std::io::stderr(),
            "{}",
            crate::foundation::sanitize::block(&listing)
        );
    }
    code
}

/// Whether the command line accepts these arguments (without the program name), exactly as
/// [`main`] would parse them, without running anything: `--help` and `--version` count as
/// accepted. For tests that keep the docs' command lines true (tests/docs_commands.rs).
///
/// # Errors
/// clap's own message for arguments it rejects.
pub fn accepts<I, S>(args: I) -> std::result::Result<(), String>
where
    I: IntoIterator<Item = S>,
    S: Into<std::ffi::OsString> + Clone,
{
    let argv = std::iter::once(std::ffi::OsString::from("cgp-gate")).chain(args.into_iter().map(Into::into));
    match Cli::try_parse_from(argv) {
        Ok(_) => Ok(()),
        Err(e) if !e.use_stderr() => Ok(()),
        Err(e) => Err(e.to_string()),
    }
}

/// Run a parsed command line; returns how it ended.
///
/// # Errors
/// Any [`crate::Error`]; its exit code is [`crate::Error::exit`]'s.
pub(crate) fn run(cli: Cli) -> Result<Exit> {
    let mut stdout = crate::foundation::pipe::QuietPipe::new(std::io::stdout().lock());
    let mut stderr = std::io::stderr();
    // A file output of `-` is standard output: the command's own text goes to stderr, so that
    // what reaches the pipe is the file alone (`check --json - | jq`).
    let to_stdout = cli
        .command
        .file_outputs()
        .into_iter()
        .any(crate::foundation::fsutil::is_stdout);
    let out: &mut dyn std::io::Write = if to_stdout { &mut stderr } else { &mut stdout };
    match cli.command {
        Command::Validate { spec } => commands::validate::run(&spec.spec, out),
        Command::Schema => commands::schema::run(out),
        Command::Parse { files, json } => {
            // Stdout is line-buffered, which scans every write for a newline: `--json` is one
            // line of up to hundreds of MB, so it goes to the descriptor itself (a duplicate of
            // it; nothing was written to stdout before), through `parse`'s own buffer.
            use std::os::fd::AsFd;
            let r = match std::io::stdout().as_fd().try_clone_to_owned() {
                Ok(fd) if json => commands::parse::run_all(&files, json, &mut std::fs::File::from(fd)),
                _ => commands::parse::run_all(&files, json, out),
            };
            // `parse FILE --json | head`: the reader has what it wanted; parse decides nothing.
            match r {
                Err(e) if e.is_broken_pipe() => Ok(Exit::Ok),
                r => r,
            }
        }
        Command::Profile(args) => {
            let ui = args.ui.ui();
            commands::profile::run(&args.into(), &ui, out)
        }
        Command::Env(args) => commands::env::run(&args.into(), out),
        Command::Doctor { spec } => commands::doctor::run(&commands::doctor::Options { spec }, out),
        Command::Report(args) => {
            let ui = args.ui.ui();
            commands::report::run(&args.into(), &ui, out)
        }
        Command::Check(args) => {
            let ui = args.ui.ui();
            commands::check::run(&args.into(), &ui, out)
        }
        Command::Merge(args) => {
            let ui = args.ui.ui();
            commands::merge::run(&args.into(), &ui, out)
        }
        Command::Breakdown(args) => commands::breakdown::run(&args.into(), out),
        Command::Changes(args) => commands::changes::run(&args.into(), out),
        Command::History(args) => commands::history::run(&args.into(), out),
        Command::Ab(args) => {
            let ui = args.ui.ui();
            commands::ab::run(&args.into(), &ui, out)
        }
        Command::Bisect(args) => {
            let ui = args.ui.ui();
            commands::bisect::run(&args.into(), &ui, out)
        }
        Command::Calibrate(args) => {
            let ui = args.ui.ui();
            commands::calibrate::run(&args.into(), &ui, out)
        }
        Command::Baseline(BaselineCommand::Update(args)) => {
            let ui = args.ui.ui();
            commands::baseline::update(&(*args).into(), &ui, out)
        }
        Command::Baseline(BaselineCommand::Show { baselines }) => {
            commands::baseline::show(&baselines.baselines, out)
        }
        Command::Init(args) => commands::init::run(&args.into(), out),
        Command::Completions { shell } => generate::completions(shell, out),
        Command::Man { dir } => generate::man(dir.as_deref(), out),
        Command::Import {
            spec,
            into,
            files,
            replace,
        } => commands::import::run(
            &commands::import::ImportOptions {
                spec,
                into,
                files,
                replace,
            },
            out,
        ),
        Command::Store(cmd) => store::run(cmd, out),
        Command::GitlabNote(args) => commands::gitlab_note::run(&args.into(), &mut std::io::stderr()),
    }
}
