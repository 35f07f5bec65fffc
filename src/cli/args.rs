//! clap's view of the command line. Every struct here converts into the engine's options (in
//! `crate::commands`) by destructuring all of its fields, so a new flag that is not passed on
//! does not compile.

use std::path::PathBuf;

use clap::Subcommand;

use super::groups::BaselinesArgs;
pub use super::groups::{
    ColorArg, ColorArgs, FailOnArg, ReportFlagsArgs, ReportPathsArgs, ShardArgs, SourceArgs, UiArgs,
};
use crate::commands;

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

impl From<InitArgs> for commands::init::InitOptions {
    fn from(a: InitArgs) -> Self {
        let InitArgs {
            from,
            output,
            force,
            name,
            command,
        } = a;
        Self {
            from,
            command,
            output,
            force,
            name,
        }
    }
}

/// `cgp-gate check`.
#[derive(Debug, Clone, clap::Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub ui: UiArgs,
    #[command(flatten)]
    pub source: SourceArgs,
    #[command(flatten)]
    pub baselines: BaselinesArgs,
    /// Write the results (every sample and every decision) as JSON here.
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// What fails the gate besides errors: regressions only, or inconclusive rows too.
    #[arg(long, value_enum, default_value = "regression")]
    pub fail_on: FailOnArg,
    /// Compare against a baseline measured on a different setup (every report says so). Never
    /// across profilers: an ncu baseline is not compared with cupti or nsys samples.
    #[arg(long)]
    pub allow_fingerprint_mismatch: bool,
    /// Profile every kernel, even those whose machine code (SASS) equals the baseline's.
    #[arg(long)]
    pub no_skip: bool,
    /// Baseline rows this run should have measured and did not (a kernel that disappeared or was
    /// renamed) do not fail the gate; per target: `allow_missing: true` in the spec.
    #[arg(long)]
    pub allow_missing: bool,
    /// The first run, before any baseline exists: pass with every row `new` instead of failing
    /// on an empty baselines directory (create them with `cgp-gate baseline update` on main).
    #[arg(long)]
    pub allow_no_baselines: bool,
    #[command(flatten)]
    pub base: super::confirm::BaseArgs,
    #[command(flatten)]
    pub shard: ShardArgs,
    #[command(flatten)]
    pub reports: ReportFlagsArgs,
    #[command(flatten)]
    pub push: super::store::PushArgs,
}

impl From<CheckArgs> for commands::check::Options {
    fn from(a: CheckArgs) -> Self {
        let CheckArgs {
            // Read by `cli::run` for the command's `Ui`.
            ui: _,
            source,
            baselines: BaselinesArgs { baselines },
            json,
            fail_on,
            allow_fingerprint_mismatch,
            no_skip,
            allow_missing,
            allow_no_baselines,
            base,
            shard,
            reports,
            push,
        } = a;
        Self {
            source: source.into(),
            baselines,
            fail_on: fail_on.into(),
            allow_fingerprint_mismatch,
            no_skip,
            allow_missing,
            allow_no_baselines,
            base: base.into(),
            shard: shard.into(),
            reports: reports.with_json(json),
            store: push.into(),
        }
    }
}

/// `cgp-gate baseline ...`.
#[derive(Debug, Clone, Subcommand)]
pub enum BaselineCommand {
    /// Measure (or take a check's results) and write the baselines; nothing is written unless every
    /// selected target was measured without error.
    Update(Box<BaselineUpdateArgs>),
    /// Print the stored baselines.
    Show {
        #[command(flatten)]
        baselines: BaselinesArgs,
    },
}

/// `cgp-gate baseline update`.
#[derive(Debug, Clone, clap::Args)]
pub struct BaselineUpdateArgs {
    #[command(flatten)]
    pub ui: UiArgs,
    #[command(flatten)]
    pub source: SourceArgs,
    #[command(flatten)]
    pub baselines: BaselinesArgs,
    /// Take the samples of a previous `check --json` instead of profiling again.
    #[arg(long, value_name = "RESULTS_JSON", conflicts_with_all = ["replay", "record", "shard"])]
    pub from: Option<PathBuf>,
    /// With --from: store the results even though they hold regressions (refused otherwise, exit
    /// 2), when the slowdown is intended; each accepted row is named in a warning.
    #[arg(long)]
    pub accept_regressions: bool,
    /// Take the samples of the newest run of this spec in the store (--store, CGP_GATE_STORE or
    /// settings.store) on --branch, as --from takes a file's.
    #[arg(long, conflicts_with_all = ["from", "replay", "record", "shard"])]
    pub from_store: bool,
    #[command(flatten)]
    pub shard: ShardArgs,
    #[command(flatten)]
    pub push: super::store::PushArgs,
}

impl From<BaselineUpdateArgs> for commands::baseline::UpdateOptions {
    fn from(a: BaselineUpdateArgs) -> Self {
        let BaselineUpdateArgs {
            // Read by `cli::run` for the command's `Ui`.
            ui: _,
            source,
            baselines: BaselinesArgs { baselines },
            from,
            accept_regressions,
            from_store,
            shard,
            push,
        } = a;
        Self {
            source: source.into(),
            baselines,
            from,
            accept_regressions,
            from_store,
            shard: shard.into(),
            store: push.into(),
        }
    }
}

/// `cgp-gate profile`.
#[derive(Debug, Clone, clap::Args)]
pub struct ProfileArgs {
    #[command(flatten)]
    pub ui: UiArgs,
    #[command(flatten)]
    pub source: SourceArgs,
    /// Print the samples as JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Print what would be run (clock locking and every ncu argv) without touching the GPU.
    #[arg(long, conflicts_with = "replay")]
    pub dry_run: bool,
}

impl From<ProfileArgs> for commands::profile::Options {
    fn from(a: ProfileArgs) -> Self {
        let ProfileArgs {
            // Read by `cli::run` for the command's `Ui`.
            ui: _,
            source,
            json,
            dry_run,
        } = a;
        Self {
            source: source.into(),
            json,
            dry_run,
        }
    }
}

/// `cgp-gate env`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct EnvArgs {
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Reset locked SM and memory clocks on every GPU (repairs a GPU that a killed run left
    /// locked; needs NVML and root).
    #[arg(long)]
    pub reset_clocks: bool,
    /// With --reset-clocks: print what would be reset, change nothing.
    #[arg(long, requires = "reset_clocks")]
    pub dry_run: bool,
}

impl From<EnvArgs> for commands::env::Options {
    fn from(a: EnvArgs) -> Self {
        let EnvArgs {
            json,
            reset_clocks,
            dry_run,
        } = a;
        Self {
            json,
            reset_clocks,
            dry_run,
        }
    }
}

/// `cgp-gate report`.
#[derive(Debug, Clone, clap::Args)]
pub struct ReportArgs {
    #[command(flatten)]
    pub ui: ColorArgs,
    /// The results file written by `check --json`.
    #[arg(long, value_name = "RESULTS_JSON")]
    pub from: PathBuf,
    #[command(flatten)]
    pub flags: ReportFlagsArgs,
}

impl From<ReportArgs> for commands::report::Options {
    fn from(a: ReportArgs) -> Self {
        let ReportArgs { from, flags, ui: _ } = a;
        Self {
            from,
            flags: flags.with_json(None),
        }
    }
}

/// `cgp-gate merge`.
#[derive(Debug, Clone, clap::Args)]
pub struct MergeArgs {
    #[command(flatten)]
    pub ui: ColorArgs,
    /// The shards' results files (written by `check --shard K/N --json`).
    #[arg(required = true, value_name = "RESULTS_JSON")]
    pub files: Vec<PathBuf>,
    /// Write the merged results as JSON here.
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// What fails the merged gate besides errors; default: the strictest of the shards'.
    #[arg(long, value_enum)]
    pub fail_on: Option<FailOnArg>,
    #[command(flatten)]
    pub reports: ReportFlagsArgs,
    #[command(flatten)]
    pub push: super::store::PushArgs,
}

impl From<MergeArgs> for commands::merge::Options {
    fn from(a: MergeArgs) -> Self {
        let MergeArgs {
            // Read by `cli::run` for the command's `Ui`.
            ui: _,
            files,
            json,
            fail_on,
            reports,
            push,
        } = a;
        Self {
            files,
            fail_on: fail_on.map(Into::into),
            reports: reports.with_json(json),
            store: push.into(),
        }
    }
}

/// `cgp-gate breakdown FILE...`.
#[derive(Debug, Clone, clap::Args)]
pub struct BreakdownArgs {
    /// nsys outputs: .nsys-rep, .sqlite, or CSV of cuda_gpu_trace (gputrace), cuda_gpu_kern_sum
    /// (gpukernsum) or cuda_gpu_kern_gb_sum.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Ordered regex -> category rules (YAML or JSON), tried before the defaults.
    #[arg(long, value_name = "FILE")]
    pub categories: Option<PathBuf>,
    /// Write the breakdown as JSON here.
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// Write the kernel-to-category mapping as CSV here.
    #[arg(long, value_name = "PATH")]
    pub csv: Option<PathBuf>,
    /// Write a self-contained HTML page with stacked bars here.
    #[arg(long, value_name = "PATH")]
    pub html: Option<PathBuf>,
    /// Wall time of the traced run(s) in seconds: non-GPU time = wall - GPU busy time.
    #[arg(long, value_name = "SECONDS")]
    pub wall: Option<f64>,
    /// Kernels listed per run on the console.
    #[arg(long, default_value_t = 5, value_name = "N")]
    pub top: usize,
}

impl From<BreakdownArgs> for commands::breakdown::Options {
    fn from(a: BreakdownArgs) -> Self {
        let BreakdownArgs {
            files,
            categories,
            json,
            csv,
            html,
            wall,
            top,
        } = a;
        Self {
            files,
            categories,
            json,
            csv,
            html,
            wall_seconds: wall,
            top,
        }
    }
}
/// `cgp-gate ab` arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct AbArgs {
    #[command(flatten)]
    pub ui: UiArgs,
    /// The spec file (in the head tree; the base tree runs the same spec, its paths resolved there).
    #[arg(long, default_value = "cgp-gate.yaml")]
    pub spec: PathBuf,
    /// Only this target (repeatable).
    #[arg(long = "target", value_name = "NAME")]
    pub targets: Vec<String>,
    /// The base tree (e.g. a worktree of the pull request's base commit, built).
    #[arg(
        long,
        value_name = "DIR",
        required_unless_present = "replay",
        conflicts_with = "replay"
    )]
    pub base_dir: Option<PathBuf>,
    /// The head tree.
    #[arg(long, value_name = "DIR", default_value = ".", conflicts_with = "replay")]
    pub head_dir: PathBuf,
    /// Keep every raw ncu output: `DIR/base/...`, `DIR/head/...` and the run order in
    /// `DIR/manifest.json`.
    #[arg(long, value_name = "DIR", conflicts_with = "replay")]
    pub record: Option<PathBuf>,
    /// Read an A/B recording instead of running ncu.
    #[arg(long, value_name = "DIR")]
    pub replay: Option<PathBuf>,
    /// Write the results (same shape as `check --json`) here.
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// What fails the run besides errors: regressions only, or inconclusive rows too.
    #[arg(long, value_enum, default_value = "regression")]
    pub fail_on: FailOnArg,
    /// Kernels the base tree launches and the head tree does not (a kernel that disappeared or
    /// was renamed) do not fail the gate; per target: `allow_missing: true` in the spec.
    #[arg(long)]
    pub allow_missing: bool,
    #[command(flatten)]
    pub reports: ReportFlagsArgs,
    #[command(flatten)]
    pub push: super::store::PushArgs,
}

/// `cgp-gate changes` arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct ChangesArgs {
    /// Results files (`check --json`), oldest first (or the runs of --store).
    #[arg(value_name = "RESULTS_JSON")]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub read: super::store::ReadArgs,
    /// Only the last N files.
    #[arg(long, value_name = "N")]
    pub last: Option<usize>,
    /// Write the change points as JSON (`{"rows": [...]}`) here.
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// Write a Markdown report (table and sparklines) here.
    #[arg(long, value_name = "PATH")]
    pub markdown: Option<PathBuf>,
    /// Write a self-contained HTML report (charts) here.
    #[arg(long, value_name = "PATH")]
    pub html: Option<PathBuf>,
    /// Chance of any false change point in the whole run (Bonferroni over the series).
    #[arg(long, default_value_t = 0.01)]
    pub alpha: f64,
    /// Smallest shift reported, as a percentage (`1%`) or a fraction (`0.01`).
    #[arg(long, default_value = "1%", value_parser = parse_fraction)]
    pub min_change: f64,
    /// Fewest results on each side of a change point.
    #[arg(long, default_value_t = 3)]
    pub min_segment: usize,
    /// Seed of the permutation tests (the same seed gives the same answer).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Exit 0 even when a shift goes the bad way.
    #[arg(long)]
    pub no_fail: bool,
    /// What fails besides a shift the bad way: `inconclusive` also fails (exit 1) when a series
    /// is too short to find any shift at this level (by default that is said and exits 0).
    #[arg(long, value_enum, default_value_t = FailOnArg::Regression)]
    pub fail_on: FailOnArg,
}

impl From<AbArgs> for commands::ab::Options {
    fn from(a: AbArgs) -> Self {
        let AbArgs {
            // Read by `cli::run` for the command's `Ui`.
            ui: _,
            spec,
            targets,
            base_dir,
            head_dir,
            record,
            replay,
            json,
            fail_on,
            allow_missing,
            reports,
            push,
        } = a;
        Self {
            spec,
            targets,
            base_dir,
            head_dir,
            record,
            replay,
            fail_on: fail_on.into(),
            allow_missing,
            reports: reports.with_json(json),
            store: push.into(),
        }
    }
}

impl From<ChangesArgs> for commands::changes::Options {
    fn from(a: ChangesArgs) -> Self {
        let ChangesArgs {
            files,
            read,
            last,
            json,
            markdown,
            html,
            alpha,
            min_change,
            min_segment,
            seed,
            no_fail,
            fail_on,
        } = a;
        Self {
            files,
            last,
            json,
            markdown,
            html,
            alpha,
            min_change,
            min_segment,
            seed,
            no_fail,
            fail_on: fail_on.into(),
            read: read.into(),
        }
    }
}

/// `1%` -> 0.01, `0.01` -> 0.01.
pub(crate) fn parse_fraction(text: &str) -> std::result::Result<f64, String> {
    let t = text.trim();
    let (num, scale) = match t.strip_suffix('%') {
        Some(n) => (n.trim(), 100.0),
        None => (t, 1.0),
    };
    match num.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v / scale),
        _ => Err(format!(
            "`{text}` is not a non-negative percentage (`1%`) or fraction (`0.01`)"
        )),
    }
}

/// `cgp-gate calibrate`.
#[derive(Debug, Clone, clap::Args)]
pub struct CalibrateArgs {
    #[command(flatten)]
    pub ui: UiArgs,
    #[command(flatten)]
    pub source: SourceArgs,
    /// Repetitions per size to measure (live runs; with --replay every recorded one is used).
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u32).range(3..=10_000))]
    pub repetitions: u32,
    /// Write the calibration as JSON (`{"rows": [...]}`, fractions: 0.012 = 1.2%).
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// Write the Markdown table (it is printed either way).
    #[arg(long, value_name = "PATH")]
    pub markdown: Option<PathBuf>,
    /// The baselines directory `check` compares with: the history of its medians gives each
    /// row's job drift, and whether it is too large for the threshold (docs/statistics.md 2.3).
    #[arg(long, value_name = "DIR", conflicts_with = "store")]
    pub baselines: Option<PathBuf>,
    /// The job drift from the runs of a store (the last settings.history of this spec on
    /// --branch), as from the baselines `baseline update --from` each of them would write.
    #[command(flatten)]
    pub store: super::store::PushArgs,
}

impl From<CalibrateArgs> for commands::calibrate::Options {
    fn from(a: CalibrateArgs) -> Self {
        let CalibrateArgs {
            // Read by `cli::run` for the command's `Ui`.
            ui: _,
            source,
            repetitions,
            json,
            markdown,
            baselines,
            store,
        } = a;
        Self {
            source: source.into(),
            repetitions,
            json,
            markdown,
            baselines,
            store: store.into(),
        }
    }
}
