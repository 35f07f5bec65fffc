//! Flag groups that several subcommands declare alike, each declared once and flattened
//! (`#[command(flatten)]`) where it is used: the same flag, the same help text (the store's are in
//! `store.rs`), and the value enums they share (`--fail-on`, `--color`). `args.rs` re-exports
//! them at their old paths.

use std::path::PathBuf;

use crate::commands;

/// `--spec FILE` where it means the spec file and nothing more: `validate` and `SourceArgs`.
#[derive(Debug, Clone, clap::Args)]
pub struct SpecArgs {
    /// The spec file.
    #[arg(long, default_value = "cgp-gate.yaml")]
    pub spec: PathBuf,
}

/// `--baselines DIR`: the baselines `check`, `baseline update` and `baseline show` read or write.
#[derive(Debug, Clone, clap::Args)]
pub struct BaselinesArgs {
    /// The baselines directory.
    #[arg(long, default_value = "baselines", value_name = "DIR")]
    pub baselines: PathBuf,
}

/// `--fail-on`: what fails the gate besides errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FailOnArg {
    /// Only regressions fail the gate (inconclusive rows are warnings).
    Regression,
    /// Regressions and inconclusive rows fail the gate.
    Inconclusive,
}

impl From<FailOnArg> for crate::outcome::results::FailOn {
    fn from(a: FailOnArg) -> Self {
        match a {
            FailOnArg::Regression => Self::Regression,
            FailOnArg::Inconclusive => Self::Inconclusive,
        }
    }
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

/// `--color`, `--quiet` and `--verbose`: only on the commands that profile (a progress to show
/// or hide, verdicts to colour).
#[derive(Debug, Clone, clap::Args)]
pub struct UiArgs {
    #[command(flatten)]
    pub color: ColorArgs,
    /// No progress on stderr (errors and results are still printed).
    #[arg(long, short, conflicts_with = "verbose")]
    pub quiet: bool,
    /// A progress line per profiler run (ncu or nsys), besides one per finished target and size.
    #[arg(long, short)]
    pub verbose: bool,
}

impl UiArgs {
    /// The command's console settings.
    pub fn ui(&self) -> commands::Ui {
        commands::Ui {
            color: self.color.color.into(),
            verbosity: match (self.quiet, self.verbose) {
                (true, _) => crate::commands::progress::Verbosity::Quiet,
                (false, true) => crate::commands::progress::Verbosity::Verbose,
                (false, false) => crate::commands::progress::Verbosity::Normal,
            },
        }
    }
}

/// `--color` alone: the commands that print a verdict table but profile nothing.
#[derive(Debug, Clone, clap::Args)]
pub struct ColorArgs {
    /// Colour the verdicts: auto (on a terminal, unless NO_COLOR is set or in GitHub Actions),
    /// always, never.
    #[arg(long, value_enum, default_value_t = ColorArg::Auto, value_name = "WHEN")]
    pub color: ColorArg,
}

impl ColorArgs {
    /// The command's console settings (no progress to show).
    pub fn ui(&self) -> commands::Ui {
        commands::Ui {
            color: self.color.into(),
            verbosity: crate::commands::progress::Verbosity::Normal,
        }
    }
}

/// `--shard K/N` and how to balance it; shared by `check` and `baseline update`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ShardArgs {
    /// Run only shard K of N (K from 1) of the target x size rows; every shard of a CI matrix
    /// computes the same split. Combine the shards' results with `cgp-gate merge`. `auto` reads
    /// K and N from the engine: GitLab `parallel:`, a Slurm job array, a Kubernetes Indexed Job,
    /// a GitHub matrix (docs/scale.md).
    #[arg(long, value_name = "K/N|auto")]
    pub shard: Option<crate::plan::ShardRequest>,
    /// Balance the shards by the wall seconds per target recorded in a previous results file
    /// (default: repetitions x ncu metrics per size). Every shard must be given the same file.
    #[arg(long, value_name = "RESULTS_JSON", requires = "shard")]
    pub shard_costs: Option<PathBuf>,
}

impl From<ShardArgs> for commands::ShardOptions {
    fn from(a: ShardArgs) -> Self {
        let ShardArgs { shard, shard_costs } = a;
        Self { shard, shard_costs }
    }
}

/// Where samples come from and where raw output goes: shared by every command that profiles.
#[derive(Debug, Clone, clap::Args)]
pub struct SourceArgs {
    #[command(flatten)]
    pub spec: SpecArgs,
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

impl From<SourceArgs> for commands::SourceOptions {
    fn from(a: SourceArgs) -> Self {
        let SourceArgs {
            spec: SpecArgs { spec },
            targets,
            record,
            replay,
        } = a;
        Self {
            spec,
            targets,
            record,
            replay,
        }
    }
}

/// The report files `report`, `check`, `merge` and `ab` write (`--json` is each command's own:
/// its help says what that command's results are, and `report` has none), one per
/// `report::export::ExportType`.
#[derive(Debug, Clone, clap::Args)]
pub struct ReportPathsArgs {
    /// Write JUnit XML here.
    #[arg(long, value_name = "PATH")]
    pub junit: Option<PathBuf>,
    /// Write the Markdown report (the pull-request comment's text) here.
    #[arg(long, value_name = "PATH")]
    pub markdown: Option<PathBuf>,
    /// Write the self-contained HTML report here.
    #[arg(long, value_name = "PATH")]
    pub html: Option<PathBuf>,
}

impl ReportPathsArgs {
    /// The paths, with the command's `--json`.
    pub(crate) fn with_json(self, json: Option<PathBuf>) -> crate::publish::ReportPaths {
        let ReportPathsArgs {
            junit,
            markdown,
            html,
        } = self;
        crate::publish::ReportPaths {
            json,
            junit,
            markdown,
            html,
        }
    }
}

/// The report flags `report`, `check`, `merge` and `ab` share.
#[derive(Debug, Clone, clap::Args)]
pub struct ReportFlagsArgs {
    #[command(flatten)]
    pub paths: ReportPathsArgs,
    /// Create or update this spec's comment on the pull request (needs GITHUB_TOKEN).
    #[arg(long)]
    pub github_comment: bool,
    /// The repository for the comment, instead of GITHUB_REPOSITORY.
    #[arg(long, value_name = "OWNER/NAME", requires = "github_comment")]
    pub repo: Option<String>,
    /// The pull-request number for the comment, instead of the one in GITHUB_EVENT_PATH.
    #[arg(long, value_name = "NUMBER", requires = "github_comment")]
    pub pr: Option<u64>,
    /// Do not write the step summary, step outputs and annotations even under GitHub Actions.
    #[arg(long)]
    pub no_github_actions: bool,
}

impl ReportFlagsArgs {
    /// The flags, with the command's `--json` among the paths.
    pub(crate) fn with_json(self, json: Option<PathBuf>) -> crate::publish::ReportFlags {
        let ReportFlagsArgs {
            paths,
            github_comment,
            repo,
            pr,
            no_github_actions,
        } = self;
        crate::publish::ReportFlags {
            paths: paths.with_json(json),
            github_comment,
            repo,
            pr,
            no_github_actions,
        }
    }
}
